// What ops/norm.cpp offers the nn modules beyond the public ops.
#pragma once
#include "ember/tensor.h"

namespace ember {

// batch_norm in training whose running statistics are cumulative averages (BatchNorm's
// momentum(nullopt)): the running statistics move by 1 / num_batches_tracked, read by the
// statistics op when it runs rather than by host code before it, so that a captured graph's replay
// (ember::graphs) reads each step's count. Eager results are those of batch_norm with that momentum.
Tensor batch_norm_cumulative(const Tensor& input, const Tensor& weight, const Tensor& bias,
                             const Tensor& running_mean, const Tensor& running_var, const Tensor& num_batches_tracked,
                             double eps);

}  // namespace ember
