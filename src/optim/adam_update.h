// The update shared by Adam and AdamW (AdamW decays the parameter itself instead of adding the
// decay to the gradient).
#pragma once
#include <vector>

#include "ember/optim/adam.h"
#include "kernels/cpu/foreach_kernels.h"

namespace ember::optim::detail {

// One step of the batch's parameters (grads defined, states AdamParamState), through the fused
// kernel when `fused` and every tensor qualifies, else through the multi-tensor ops.
void adam_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                 const std::vector<OptimizerParamState*>& states, const kernels::AdamHyper& h, bool fused);

// libtorch's argument checks, under the optimizer's name.
void check_adam_options(const char* op, double lr, double eps, double beta1, double beta2, double weight_decay);

}  // namespace ember::optim::detail
