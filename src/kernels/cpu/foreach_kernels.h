// Multi-tensor kernels: one pass over a list of tensors. The caller has checked that every operand
// of every item is contiguous, of the one floating dtype, and of the item's element count; the
// kernel splits the concatenated element range of all items across threads, so a list of many
// small tensors keeps every thread busy and pays for one parallel region, not one per tensor.
#pragma once
#include <cstdint>

#include "ember/dtype.h"

namespace ember::kernels {

// One tensor of the list with its partners at the same index: data[0] is written, data[1..] are
// read (data[0] == data[1] for in-place forms). `s` holds the item's scalars.
struct ForeachItem {
  char* data[5];
  int64_t numel;
  double s[2];
};

// The element-wise ops; a, b, c are data[1], data[2], data[3], s is s[0].
enum class ForeachOp : uint8_t {
  Add,         // a + s * b
  AddScalar,   // a + s
  Mul,         // a * b
  MulScalar,   // a * s
  Div,         // a / b
  DivScalar,   // a / s
  Addcmul,     // a + s * b * c
  Addcdiv,     // a + s * b / c
  Lerp,        // lerp(a, b, s)
  LerpTensor,  // lerp(a, b, c)
  Maximum,     // NaN-propagating max(a, b)
  Sqrt,
  Neg,
  Abs,
  Exp,
  Copy,  // b (a is the destination's old value)
  Fill,  // s
};
void foreach_kernel(ForeachOp op, ScalarType dtype, const ForeachItem* items, int64_t n);

// out[i] = the ord-norm (1, 2 or inf) of data[1] of item i, accumulated in double.
void foreach_norm_kernel(ScalarType dtype, const ForeachItem* items, int64_t n, double ord, double* out);

// data[0] of each item *= inv_scale, in place; returns whether any element was inf or NaN
// (PyTorch's _amp_foreach_non_finite_check_and_unscale_: one read of every gradient).
bool foreach_unscale_kernel(ScalarType dtype, const ForeachItem* items, int64_t n, double inv_scale);

// One Adam/AdamW update per element: data = param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq
// (amsgrad only); s = {lr / bias_correction1, sqrt(bias_correction2)} per item (per-param steps).
struct AdamHyper {
  double lr, beta1, beta2, eps, weight_decay;
  bool amsgrad, maximize, decoupled;  // decoupled: AdamW's param *= 1 - lr * weight_decay
};
void fused_adam_kernel(ScalarType dtype, const ForeachItem* items, int64_t n, const AdamHyper& h);

}  // namespace ember::kernels
