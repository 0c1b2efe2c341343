// Pointwise ops: arithmetic, comparison, logical/bitwise, unary math and activations.
// Each has the functional form, the Tensor method (tensor.h), an in-place `op_` and an
// `op_out(out, ...)` form where PyTorch has them. Broadcasting and type promotion follow PyTorch.
#pragma once
#include <optional>
#include <string_view>

#include "ember/tensor.h"

namespace ember {

// ---- binary arithmetic -------------------------------------------------------------------
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
Tensor& add_out(Tensor& out, const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor sub(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
Tensor& sub_out(Tensor& out, const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor rsub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor rsub(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
Tensor mul(const Tensor& self, const Tensor& other);
Tensor mul(const Tensor& self, const Scalar& other);
Tensor& mul_out(Tensor& out, const Tensor& self, const Tensor& other);
Tensor div(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode = std::nullopt);
Tensor div(const Tensor& self, const Scalar& other, std::optional<std::string_view> rounding_mode = std::nullopt);
Tensor& div_out(Tensor& out, const Tensor& self, const Tensor& other,
                std::optional<std::string_view> rounding_mode = std::nullopt);
Tensor remainder(const Tensor& self, const Tensor& other);
Tensor remainder(const Tensor& self, const Scalar& other);
Tensor remainder(const Scalar& self, const Tensor& other);
Tensor fmod(const Tensor& self, const Tensor& other);
Tensor fmod(const Tensor& self, const Scalar& other);
Tensor floor_divide(const Tensor& self, const Tensor& other);
Tensor floor_divide(const Tensor& self, const Scalar& other);
Tensor pow(const Tensor& self, const Tensor& exponent);
Tensor pow(const Tensor& self, const Scalar& exponent);
Tensor pow(const Scalar& self, const Tensor& exponent);
Tensor& pow_out(Tensor& out, const Tensor& self, const Tensor& exponent);
Tensor minimum(const Tensor& self, const Tensor& other);
Tensor maximum(const Tensor& self, const Tensor& other);
Tensor atan2(const Tensor& self, const Tensor& other);
// grad_output where self > threshold, else 0: relu's and threshold's backward in one pass.
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold);
// grad_output where self > 0, else grad_output * negative_slope (libtorch's; self_is_result: self
// is leaky_relu's result, which only a non-negative slope allows).
Tensor leaky_relu_backward(const Tensor& grad_output, const Tensor& self, const Scalar& negative_slope,
                           bool self_is_result);
// hardswish's, hardsigmoid's and silu's gradients given grad_output (libtorch's names), one pass each.
Tensor hardswish_backward(const Tensor& grad_output, const Tensor& self);
Tensor hardsigmoid_backward(const Tensor& grad_output, const Tensor& self);
Tensor silu_backward(const Tensor& grad_output, const Tensor& self);
Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight);
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight);
Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
Tensor clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);
Tensor clamp(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt);
Tensor& clamp_out(Tensor& out, const Tensor& self, const std::optional<Scalar>& min,
                  const std::optional<Scalar>& max = std::nullopt);
Tensor clamp_min(const Tensor& self, const Scalar& min);
Tensor clamp_max(const Tensor& self, const Scalar& max);
Tensor clamp_min(const Tensor& self, const Tensor& min);
Tensor clamp_max(const Tensor& self, const Tensor& max);
// torch::max(a, b) / torch::min(a, b): maximum / minimum.
Tensor max(const Tensor& self, const Tensor& other);
Tensor min(const Tensor& self, const Tensor& other);
// round half to even at `decimals` places (negative: tens, hundreds, ...), as PyTorch's.
Tensor round(const Tensor& self, int64_t decimals);
Tensor& round_(Tensor& self, int64_t decimals);
// torch::where(condition): condition.nonzero() as one index tensor per dim.
std::vector<Tensor> where(const Tensor& condition);
Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other);
Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other);
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other);
Tensor where(const Tensor& condition, const Scalar& self, const Scalar& other);
Tensor& where_out(Tensor& out, const Tensor& condition, const Tensor& self, const Tensor& other);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value);

// ---- comparison, logical, bitwise --------------------------------------------------------
#define EMBER_DECLARE_COMPARISON(name)                           \
  Tensor name(const Tensor& self, const Tensor& other);          \
  Tensor name(const Tensor& self, const Scalar& other);          \
  Tensor& name##_out(Tensor& out, const Tensor& self, const Tensor& other);
EMBER_DECLARE_COMPARISON(eq)
EMBER_DECLARE_COMPARISON(ne)
EMBER_DECLARE_COMPARISON(lt)
EMBER_DECLARE_COMPARISON(le)
EMBER_DECLARE_COMPARISON(gt)
EMBER_DECLARE_COMPARISON(ge)
#undef EMBER_DECLARE_COMPARISON
Tensor logical_and(const Tensor& self, const Tensor& other);
Tensor logical_or(const Tensor& self, const Tensor& other);
Tensor logical_xor(const Tensor& self, const Tensor& other);
Tensor logical_not(const Tensor& self);
Tensor bitwise_and(const Tensor& self, const Tensor& other);
Tensor bitwise_and(const Tensor& self, const Scalar& other);
Tensor bitwise_or(const Tensor& self, const Tensor& other);
Tensor bitwise_or(const Tensor& self, const Scalar& other);
Tensor bitwise_xor(const Tensor& self, const Tensor& other);
Tensor bitwise_xor(const Tensor& self, const Scalar& other);
Tensor bitwise_not(const Tensor& self);
Tensor isnan(const Tensor& self);
Tensor isinf(const Tensor& self);
Tensor isfinite(const Tensor& self);
Tensor isclose(const Tensor& self, const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
bool allclose(const Tensor& self, const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
bool equal(const Tensor& self, const Tensor& other);

// ---- unary math (float-valued ops turn integer inputs into the default float dtype) ------
#define EMBER_DECLARE_UNARY(name)  \
  Tensor name(const Tensor& self); \
  Tensor& name##_(Tensor& self);   \
  Tensor& name##_out(Tensor& out, const Tensor& self);
EMBER_FOR_EACH_UNARY_METHOD(EMBER_DECLARE_UNARY)
EMBER_DECLARE_UNARY(silu)  // activations without a Tensor method
EMBER_DECLARE_UNARY(hardswish)
EMBER_DECLARE_UNARY(hardsigmoid)
#undef EMBER_DECLARE_UNARY
Tensor gelu(const Tensor& self, std::string_view approximate = "none");
Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope = 0.01);
Tensor elu(const Tensor& self, const Scalar& alpha = 1, const Scalar& scale = 1, const Scalar& input_scale = 1);
Tensor softplus(const Tensor& self, const Scalar& beta = 1, const Scalar& threshold = 20);
Tensor nan_to_num(const Tensor& self, std::optional<double> nan = std::nullopt,
                  std::optional<double> posinf = std::nullopt, std::optional<double> neginf = std::nullopt);

// ---- operators ---------------------------------------------------------------------------
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
inline Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
inline Tensor operator-(const Scalar& a, const Tensor& b) { return rsub(b, a); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
inline Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator/(const Scalar& a, const Tensor& b);
inline Tensor operator%(const Tensor& a, const Tensor& b) { return remainder(a, b); }
inline Tensor operator%(const Tensor& a, const Scalar& b) { return remainder(a, b); }
inline Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
inline Tensor operator==(const Tensor& a, const Scalar& b) { return eq(a, b); }
inline Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
inline Tensor operator!=(const Tensor& a, const Scalar& b) { return ne(a, b); }
inline Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
inline Tensor operator<(const Tensor& a, const Scalar& b) { return lt(a, b); }
inline Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
inline Tensor operator<=(const Tensor& a, const Scalar& b) { return le(a, b); }
inline Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
inline Tensor operator>(const Tensor& a, const Scalar& b) { return gt(a, b); }
inline Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
inline Tensor operator>=(const Tensor& a, const Scalar& b) { return ge(a, b); }
inline Tensor operator&(const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }
inline Tensor operator|(const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }
inline Tensor operator^(const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }
inline Tensor operator&(const Tensor& a, const Scalar& b) { return bitwise_and(a, b); }
inline Tensor operator|(const Tensor& a, const Scalar& b) { return bitwise_or(a, b); }
inline Tensor operator^(const Tensor& a, const Scalar& b) { return bitwise_xor(a, b); }
// A Scalar on the left, as libtorch's (`0.5f < t` is `t > 0.5f`); explicit, so that C++20 does not
// try `t == 2` reversed for `2 == t`, whose result is not a bool.
inline Tensor operator==(const Scalar& a, const Tensor& b) { return eq(b, a); }
inline Tensor operator!=(const Scalar& a, const Tensor& b) { return ne(b, a); }
inline Tensor operator<(const Scalar& a, const Tensor& b) { return gt(b, a); }
inline Tensor operator<=(const Scalar& a, const Tensor& b) { return ge(b, a); }
inline Tensor operator>(const Scalar& a, const Tensor& b) { return lt(b, a); }
inline Tensor operator>=(const Scalar& a, const Tensor& b) { return le(b, a); }
inline Tensor operator&(const Scalar& a, const Tensor& b) { return bitwise_and(b, a); }
inline Tensor operator|(const Scalar& a, const Tensor& b) { return bitwise_or(b, a); }
inline Tensor operator^(const Scalar& a, const Tensor& b) { return bitwise_xor(b, a); }

}  // namespace ember
