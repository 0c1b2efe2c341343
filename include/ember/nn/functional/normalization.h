// F::batch_norm, instance_norm, layer_norm, group_norm, normalize, local_response_norm.
#pragma once
#include "ember/nn/options/normalization.h"

namespace ember::nn::functional {
// libtorch's argument order: the running statistics come first, weight and bias in the options.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options = {});
Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& options = {});
Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options);
Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& options);
// input / max(||input||_p over dim, eps).
Tensor normalize(const Tensor& input, NormalizeFuncOptions options = {});
Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& options);
}  // namespace ember::nn::functional
