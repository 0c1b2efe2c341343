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

// While one lives on a thread, the fused Adam/AdamW update it runs reads `found_inf` (GradScaler's
// 1-element float32 flag) when the kernel runs, and skips itself when it is nonzero: no parameter,
// moment or step count changes (PyTorch's _fused_adam_(..., found_inf)). GradScaler::step sets one
// inside a graph capture (where each replay decides on its own step's gradients, and only the
// fused update runs).
class SkipStepOnInf {
 public:
  explicit SkipStepOnInf(const Tensor& found_inf);
  ~SkipStepOnInf();
  SkipStepOnInf(const SkipStepOnInf&) = delete;
  SkipStepOnInf& operator=(const SkipStepOnInf&) = delete;

 private:
  const Tensor* previous_;
};

// libtorch's argument checks, under the optimizer's name.
void check_adam_options(const char* op, double lr, double eps, double beta1, double beta2, double weight_decay);

}  // namespace ember::optim::detail
