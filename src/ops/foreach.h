// What ops/foreach.cpp offers the optimizers and the gradient scaler beyond the public ops.
#pragma once
#include "ember/tensor.h"

namespace ember::detail {

// While one lives on a thread, the optimizer kernels run there (the multi-tensor ops' passes,
// the fused Adam/AdamW update) read `found_inf`, GradScaler's 1-element float32 flag, when they
// run, and do nothing when it is nonzero: a skipped step leaves parameters, optimizer state and
// step counts as they were (PyTorch's _fused_adam_(..., found_inf)). GradScaler::step sets one
// inside a graph capture, so that each replay skips or steps on its own gradients without a host
// read. Tensors off the multi-tensor kernels' path (which run the per-tensor ops) are refused then.
class SkipStepOnInf {
 public:
  explicit SkipStepOnInf(const Tensor& found_inf);
  ~SkipStepOnInf();
  SkipStepOnInf(const SkipStepOnInf&) = delete;
  SkipStepOnInf& operator=(const SkipStepOnInf&) = delete;
  // The innermost one's flag on this thread, or null.
  static const Tensor* found_inf();

 private:
  const Tensor* previous_;
};

}  // namespace ember::detail
