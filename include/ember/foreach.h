// Multi-tensor ("foreach") ops: one call applies an op to every tensor of a list, as PyTorch's
// torch._foreach_* ops do. Lists of contiguous floating tensors of one dtype per index run as one
// threaded pass over all tensors (no per-tensor dispatch; in-place forms allocate nothing per
// tensor); any other index (non-contiguous, integer, mixed dtypes, broadcasting) takes the
// per-tensor op. Errors name the op, the list index and the shapes. The ops never record
// autograd history (optimizers call them under NoGradGuard, as PyTorch's do).
#pragma once
#include <utility>
#include <vector>

#include "ember/tensor.h"

namespace ember {

using ScalarList = ArrayRef<Scalar>;

#define EMBER_FOREACH_BINARY(name)                                 \
  void name##_(TensorList self, const Scalar& scalar);             \
  void name##_(TensorList self, ScalarList scalars);               \
  std::vector<Tensor> name(TensorList self, const Scalar& scalar); \
  std::vector<Tensor> name(TensorList self, ScalarList scalars);
// self[i] op scalar, or op scalars[i]; the tensor-list forms follow (add and sub take alpha)
EMBER_FOREACH_BINARY(foreach_add)
EMBER_FOREACH_BINARY(foreach_sub)
EMBER_FOREACH_BINARY(foreach_mul)
EMBER_FOREACH_BINARY(foreach_div)
#undef EMBER_FOREACH_BINARY
void foreach_add_(TensorList self, TensorList other, const Scalar& alpha = 1);
std::vector<Tensor> foreach_add(TensorList self, TensorList other, const Scalar& alpha = 1);
void foreach_sub_(TensorList self, TensorList other, const Scalar& alpha = 1);
std::vector<Tensor> foreach_sub(TensorList self, TensorList other, const Scalar& alpha = 1);
void foreach_mul_(TensorList self, TensorList other);
std::vector<Tensor> foreach_mul(TensorList self, TensorList other);
void foreach_mul_(TensorList self, const Tensor& scalar);  // a 0-dim (or one-element) tensor
std::vector<Tensor> foreach_mul(TensorList self, const Tensor& scalar);
void foreach_div_(TensorList self, TensorList other);
std::vector<Tensor> foreach_div(TensorList self, TensorList other);

// self[i] + value * tensor1[i] * tensor2[i] (addcmul) or ... / tensor2[i] (addcdiv)
void foreach_addcmul_(TensorList self, TensorList tensor1, TensorList tensor2, const Scalar& value = 1);
void foreach_addcmul_(TensorList self, TensorList tensor1, TensorList tensor2, ScalarList values);
std::vector<Tensor> foreach_addcmul(TensorList self, TensorList tensor1, TensorList tensor2, const Scalar& value = 1);
std::vector<Tensor> foreach_addcmul(TensorList self, TensorList tensor1, TensorList tensor2, ScalarList values);
void foreach_addcdiv_(TensorList self, TensorList tensor1, TensorList tensor2, const Scalar& value = 1);
void foreach_addcdiv_(TensorList self, TensorList tensor1, TensorList tensor2, ScalarList values);
std::vector<Tensor> foreach_addcdiv(TensorList self, TensorList tensor1, TensorList tensor2, const Scalar& value = 1);
std::vector<Tensor> foreach_addcdiv(TensorList self, TensorList tensor1, TensorList tensor2, ScalarList values);

void foreach_lerp_(TensorList self, TensorList tensors1, const Scalar& weight);
void foreach_lerp_(TensorList self, TensorList tensors1, TensorList weights);
std::vector<Tensor> foreach_lerp(TensorList self, TensorList tensors1, const Scalar& weight);
std::vector<Tensor> foreach_lerp(TensorList self, TensorList tensors1, TensorList weights);

void foreach_maximum_(TensorList self, TensorList other);
std::vector<Tensor> foreach_maximum(TensorList self, TensorList other);

#define EMBER_FOREACH_UNARY(name) \
  void name##_(TensorList self);  \
  std::vector<Tensor> name(TensorList self);
EMBER_FOREACH_UNARY(foreach_sqrt)
EMBER_FOREACH_UNARY(foreach_neg)
EMBER_FOREACH_UNARY(foreach_abs)
EMBER_FOREACH_UNARY(foreach_exp)
#undef EMBER_FOREACH_UNARY

// The ord-norm (1, 2 or inf) of each tensor, as 0-dim tensors of its dtype.
std::vector<Tensor> foreach_norm(TensorList self, const Scalar& ord = 2);
void foreach_zero_(TensorList self);
void foreach_copy_(TensorList self, TensorList src);

// ---- AMP (GradScaler's kernels, PyTorch's names and argument order) ---------------------------
// Multiplies every gradient by inv_scale in place and sets found_inf to 1 if any element was inf
// or NaN (it never resets it to 0), in one pass over each contiguous gradient. Gradients may be of
// any float dtype (a pass per dtype); found_inf and inv_scale are 1-element float32 tensors.
void _amp_foreach_non_finite_check_and_unscale_(TensorList self, Tensor& found_inf, const Tensor& inv_scale);
// GradScaler's scale update: on found_inf, scale *= backoff and growth_tracker = 0; otherwise after
// growth_interval consecutive clean steps scale *= growth (if the result is finite). self (the
// scale) is a 1-element float32 tensor, growth_tracker a 1-element int32 tensor. Returns self.
Tensor& _amp_update_scale_(Tensor& self, Tensor& growth_tracker, const Tensor& found_inf, double scale_growth_factor,
                           double scale_backoff_factor, int64_t growth_interval);

// PyTorch's spellings (torch._foreach_add_, at::_foreach_add_).
#define EMBER_FOREACH_ALIAS(name)                                 \
  template <class... A>                                           \
  auto _##name(A&&... a)->decltype(name(std::forward<A>(a)...)) { \
    return name(std::forward<A>(a)...);                           \
  }
EMBER_FOREACH_ALIAS(foreach_add_)
EMBER_FOREACH_ALIAS(foreach_add)
EMBER_FOREACH_ALIAS(foreach_sub_)
EMBER_FOREACH_ALIAS(foreach_sub)
EMBER_FOREACH_ALIAS(foreach_mul_)
EMBER_FOREACH_ALIAS(foreach_mul)
EMBER_FOREACH_ALIAS(foreach_div_)
EMBER_FOREACH_ALIAS(foreach_div)
EMBER_FOREACH_ALIAS(foreach_addcmul_)
EMBER_FOREACH_ALIAS(foreach_addcmul)
EMBER_FOREACH_ALIAS(foreach_addcdiv_)
EMBER_FOREACH_ALIAS(foreach_addcdiv)
EMBER_FOREACH_ALIAS(foreach_lerp_)
EMBER_FOREACH_ALIAS(foreach_lerp)
EMBER_FOREACH_ALIAS(foreach_maximum_)
EMBER_FOREACH_ALIAS(foreach_maximum)
EMBER_FOREACH_ALIAS(foreach_sqrt_)
EMBER_FOREACH_ALIAS(foreach_sqrt)
EMBER_FOREACH_ALIAS(foreach_neg_)
EMBER_FOREACH_ALIAS(foreach_neg)
EMBER_FOREACH_ALIAS(foreach_abs_)
EMBER_FOREACH_ALIAS(foreach_abs)
EMBER_FOREACH_ALIAS(foreach_exp_)
EMBER_FOREACH_ALIAS(foreach_exp)
EMBER_FOREACH_ALIAS(foreach_norm)
EMBER_FOREACH_ALIAS(foreach_zero_)
EMBER_FOREACH_ALIAS(foreach_copy_)
#undef EMBER_FOREACH_ALIAS

}  // namespace ember
