// libtorch's remaining ATen functions and methods (issue 26), composed from Ember's ops: each
// one's derivative is that of its composition, which matches PyTorch's formula
// (tools/autograd/derivatives.yaml) away from the points where PyTorch picks a subgradient.
#include "ember/aten_tail.h"

#include <cmath>
#include <numbers>

#include "core/tensor_iterator.h"
#include "dispatch/dispatch.h"
#include "ember/aten_tail2.h"
#include "ember/autograd.h"
#include "ember/indexing.h"
#include "ember/linalg.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/shape.h"
#include "ops/op_util.h"
#include "ops/special_math.h"

namespace ember {
namespace {

using op_util::kPi;
using op_util::operand;
using op_util::to_float;
using op_util::write_back;

}  // namespace

// ---- unary math (sinh, cosh and the inverse hyperbolic functions are kernel ops:
// src/ops/pointwise_unary.cpp) ----
// complex: z / |z| (0 at 0), real: sign
Tensor sgn(const Tensor& self) {
  if (!self.is_complex()) return sign(self);
  const Tensor a = self.abs();
  return where(a.eq(0), zeros_like(self), self / a);
}
Tensor deg2rad(const Tensor& self) { return to_float(self) * (kPi / 180.0); }
Tensor rad2deg(const Tensor& self) { return to_float(self) * (180.0 / kPi); }
namespace {
// sinc(0) = 1; the division runs on a copy of x with zeros replaced so that the value at 0 never
// sees 0/0. Complex x keeps its dtype (PyTorch's sinc is defined there). One op with PyTorch's
// derivative, evaluated in float64 for real x: its numerator cancels where px = tan(px), and
// float32 sin/cos errors of an ulp or two became errors of up to 10x libtorch's there (the
// chain rule through sin(px) / px did as badly).
struct SincOp {
  static constexpr const char* name = "sinc";
  static Tensor run(const Tensor& self) {
    const Tensor x = is_complex_type(self.dtype()) ? self : to_float(self);
    const Tensor zero = x == 0;
    const Tensor px = where(zero, 1.0, x) * kPi;
    return where(zero, 1.0, sin(px) / px);
  }
  // SincBackward0 -- self: grad * ((pi x cos(pi x) - sin(pi x)) / (pi x x)).masked_fill_(x == 0, 0).conj()
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    d.name("SincBackward0");
    d.grad(self, [s = d.save(self)](const auto& c) {
      const Tensor x = c[s].is_complex() ? c[s] : c[s].to(kDouble);
      const Tensor px = x * kPi;
      const Tensor slope = ((px * cos(px) - sin(px)) / (px * x)).masked_fill(x == 0, 0).conj();
      return c.grad() * slope.to(c.grad().scalar_type());
    });
  }
};
}  // namespace
Tensor sinc(const Tensor& self) { return dispatch::call<SincOp>(self); }
Tensor fix(const Tensor& self) { return trunc(self); }
Tensor absolute(const Tensor& self) { return abs(self); }
Tensor negative(const Tensor& self) { return neg(self); }
Tensor arccos(const Tensor& self) { return acos(self); }
Tensor arcsin(const Tensor& self) { return asin(self); }
Tensor arctan(const Tensor& self) { return atan(self); }
Tensor arccosh(const Tensor& self) { return acosh(self); }
Tensor arcsinh(const Tensor& self) { return asinh(self); }
Tensor arctanh(const Tensor& self) { return atanh(self); }

#define EMBER_DEFINE_COMPOSITE_UNARY(name)                                                   \
  Tensor& name##_(Tensor& self) { return write_back(#name "_", self, name(operand(self))); } \
  Tensor Tensor::name() const { return ember::name(*this); }                                 \
  Tensor& Tensor::name##_() const { return ember::name##_(mutable_self()); }
EMBER_FOR_EACH_COMPOSITE_UNARY(EMBER_DEFINE_COMPOSITE_UNARY)
#undef EMBER_DEFINE_COMPOSITE_UNARY

Tensor positive(const Tensor& self) {
  EMBER_CHECK(self.dtype() != kBool, "positive",
              "The `+` operator, on a bool tensor is not supported.");
  return self;
}
// -0.0 has its sign bit set: 1/-0 = -inf tells it from +0.
Tensor signbit(const Tensor& self) {
  if (self.dtype() == kBool) return zeros_like(self, kBool);
  if (!is_floating_type(self.dtype())) return self < 0;
  return logical_or(self < 0, logical_and(self == 0, reciprocal(self) < 0));
}
Tensor Tensor::signbit() const { return ember::signbit(*this); }
Tensor logit(const Tensor& self, std::optional<double> eps) {
  special_math::check_real("logit", "logit_cpu", self);
  Tensor x = to_float(self);
  if (eps) x = clamp(x, *eps, 1.0 - *eps);
  return log(x / (1 - x));
}
Tensor& logit_(Tensor& self, std::optional<double> eps) { return write_back("logit_", self, logit(operand(self), eps)); }
Tensor Tensor::logit(std::optional<double> eps) const { return ember::logit(*this, eps); }
Tensor& Tensor::logit_(std::optional<double> eps) const { return ember::logit_(mutable_self(), eps); }

// ---- free forms of methods, and aliases ----
Tensor clone(const Tensor& self, std::optional<MemoryFormat> memory_format) { return self.clone(memory_format); }
Tensor detach(const Tensor& self) { return self.detach(); }
Tensor& detach_(Tensor& self) { return self.detach_(); }
Tensor& fill_(Tensor& self, const Scalar& value) { return self.fill_(value); }
Tensor& fill_(Tensor& self, const Tensor& value) { return self.fill_(value); }
Tensor& zero_(Tensor& self) { return self.zero_(); }
Tensor& clamp_(Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return self.clamp_(min, max);
}
Tensor& clamp_(Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return self.clamp_(min, max);
}
Tensor& clamp_min_(Tensor& self, const Scalar& min) { return self.clamp_min_(min); }
Tensor& clamp_min_(Tensor& self, const Tensor& min) { return self.clamp_min_(min); }
Tensor& clamp_max_(Tensor& self, const Scalar& max) { return self.clamp_max_(max); }
Tensor& clamp_max_(Tensor& self, const Tensor& max) { return self.clamp_max_(max); }
Tensor clip(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return clamp(self, min, max);
}
Tensor clip(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return clamp(self, min, max);
}
Tensor& clip_(Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return self.clamp_(min, max);
}
Tensor& clip_(Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return self.clamp_(min, max);
}
Tensor Tensor::clip(const std::optional<Scalar>& min, const std::optional<Scalar>& max) const {
  return clamp(min, max);
}
Tensor Tensor::clip(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return clamp(min, max);
}
Tensor& Tensor::clip_(const std::optional<Scalar>& min, const std::optional<Scalar>& max) const {
  return clamp_(min, max);
}
Tensor& Tensor::clip_(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return clamp_(min, max);
}

Tensor multiply(const Tensor& self, const Tensor& other) { return mul(self, other); }
Tensor multiply(const Tensor& self, const Scalar& other) { return mul(self, other); }
Tensor divide(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode) {
  return div(self, other, rounding_mode);
}
Tensor divide(const Tensor& self, const Scalar& other, std::optional<std::string_view> rounding_mode) {
  return div(self, other, rounding_mode);
}
Tensor true_divide(const Tensor& self, const Tensor& other) { return div(self, other); }
Tensor true_divide(const Tensor& self, const Scalar& other) { return div(self, other); }
Tensor subtract(const Tensor& self, const Tensor& other, const Scalar& alpha) { return sub(self, other, alpha); }
Tensor subtract(const Tensor& self, const Scalar& other, const Scalar& alpha) { return sub(self, other, alpha); }
Tensor Tensor::multiply(const Tensor& other) const { return mul(other); }
Tensor Tensor::multiply(const Scalar& other) const { return mul(other); }
Tensor& Tensor::multiply_(const Tensor& other) const { return mul_(other); }
Tensor& Tensor::multiply_(const Scalar& other) const { return mul_(other); }
Tensor Tensor::divide(const Tensor& other, std::optional<std::string_view> mode) const { return div(other, mode); }
Tensor Tensor::divide(const Scalar& other, std::optional<std::string_view> mode) const { return div(other, mode); }
Tensor& Tensor::divide_(const Tensor& other, std::optional<std::string_view> mode) const { return div_(other, mode); }
Tensor& Tensor::divide_(const Scalar& other, std::optional<std::string_view> mode) const { return div_(other, mode); }
Tensor Tensor::true_divide(const Tensor& other) const { return div(other); }
Tensor Tensor::true_divide(const Scalar& other) const { return div(other); }
Tensor& Tensor::true_divide_(const Tensor& other) const { return div_(other); }
Tensor& Tensor::true_divide_(const Scalar& other) const { return div_(other); }
Tensor Tensor::subtract(const Tensor& other, const Scalar& alpha) const { return sub(other, alpha); }
Tensor Tensor::subtract(const Scalar& other, const Scalar& alpha) const { return sub(other, alpha); }
Tensor& Tensor::subtract_(const Tensor& other, const Scalar& alpha) const { return sub_(other, alpha); }
Tensor& Tensor::subtract_(const Scalar& other, const Scalar& alpha) const { return sub_(other, alpha); }

#define EMBER_DEFINE_COMPARISON_ALIAS(alias, op)                                      \
  Tensor alias(const Tensor& self, const Tensor& other) { return op(self, other); }   \
  Tensor alias(const Tensor& self, const Scalar& other) { return op(self, other); }   \
  Tensor Tensor::alias(const Tensor& other) const { return ember::op(*this, other); } \
  Tensor Tensor::alias(const Scalar& other) const { return ember::op(*this, other); } \
  Tensor& Tensor::alias##_(const Tensor& other) const { return op##_(other); }        \
  Tensor& Tensor::alias##_(const Scalar& other) const { return op##_(other); }
EMBER_DEFINE_COMPARISON_ALIAS(greater, gt)
EMBER_DEFINE_COMPARISON_ALIAS(greater_equal, ge)
EMBER_DEFINE_COMPARISON_ALIAS(less, lt)
EMBER_DEFINE_COMPARISON_ALIAS(less_equal, le)
EMBER_DEFINE_COMPARISON_ALIAS(not_equal, ne)
#undef EMBER_DEFINE_COMPARISON_ALIAS
// In-place comparisons write 1/0 in self's dtype, as libtorch's eq_ does.
#define EMBER_DEFINE_COMPARISON_INPLACE(op)                                                            \
  Tensor& Tensor::op##_(const Tensor& other) const { return copy_(ember::op(mutable_self(), other)); } \
  Tensor& Tensor::op##_(const Scalar& other) const { return copy_(ember::op(mutable_self(), other)); }
EMBER_DEFINE_COMPARISON_INPLACE(eq)
EMBER_DEFINE_COMPARISON_INPLACE(ne)
EMBER_DEFINE_COMPARISON_INPLACE(lt)
EMBER_DEFINE_COMPARISON_INPLACE(le)
EMBER_DEFINE_COMPARISON_INPLACE(gt)
EMBER_DEFINE_COMPARISON_INPLACE(ge)
#undef EMBER_DEFINE_COMPARISON_INPLACE
Tensor& Tensor::logical_and_(const Tensor& other) const { return copy_(ember::logical_and(mutable_self(), other)); }
Tensor& Tensor::logical_or_(const Tensor& other) const { return copy_(ember::logical_or(mutable_self(), other)); }
Tensor& Tensor::logical_xor_(const Tensor& other) const { return copy_(ember::logical_xor(mutable_self(), other)); }
Tensor& Tensor::logical_not_() const { return copy_(ember::logical_not(mutable_self())); }
Tensor& Tensor::bitwise_and_(const Tensor& other) const {
  return write_back("bitwise_and_", mutable_self(), bitwise_and(other));
}
Tensor& Tensor::bitwise_and_(const Scalar& other) const {
  return write_back("bitwise_and_", mutable_self(), bitwise_and(other));
}
Tensor& Tensor::bitwise_or_(const Tensor& other) const {
  return write_back("bitwise_or_", mutable_self(), bitwise_or(other));
}
Tensor& Tensor::bitwise_or_(const Scalar& other) const {
  return write_back("bitwise_or_", mutable_self(), bitwise_or(other));
}
Tensor& Tensor::bitwise_xor_(const Tensor& other) const {
  return write_back("bitwise_xor_", mutable_self(), bitwise_xor(other));
}
Tensor& Tensor::bitwise_xor_(const Scalar& other) const {
  return write_back("bitwise_xor_", mutable_self(), bitwise_xor(other));
}
Tensor& Tensor::bitwise_not_() const { return copy_(bitwise_not()); }
Tensor& Tensor::cumsum_(int64_t dim, std::optional<ScalarType> dtype) const { return copy_(cumsum(dim, dtype)); }
Tensor& Tensor::cumprod_(int64_t dim, std::optional<ScalarType> dtype) const {
  return copy_(operand(mutable_self()).cumprod(dim, dtype));
}

Tensor concat(TensorList tensors, int64_t dim) { return cat(tensors, dim); }
Tensor concatenate(TensorList tensors, int64_t dim) { return cat(tensors, dim); }
Tensor swapaxes(const Tensor& self, int64_t axis0, int64_t axis1) { return self.transpose(axis0, axis1); }
Tensor swapdims(const Tensor& self, int64_t dim0, int64_t dim1) { return self.transpose(dim0, dim1); }
Tensor moveaxis(const Tensor& self, IntArrayRef source, IntArrayRef destination) {
  return self.movedim(source, destination);
}
Tensor moveaxis(const Tensor& self, int64_t source, int64_t destination) {
  return self.movedim({source}, {destination});
}
Tensor ravel(const Tensor& self) { return self.reshape({-1}); }
Tensor msort(const Tensor& self) { return std::get<0>(self.sort(0)); }
Tensor Tensor::swapaxes(int64_t axis0, int64_t axis1) const { return transpose(axis0, axis1); }
Tensor& Tensor::swapaxes_(int64_t axis0, int64_t axis1) const { return transpose_(axis0, axis1); }
Tensor Tensor::swapdims(int64_t dim0, int64_t dim1) const { return transpose(dim0, dim1); }
Tensor& Tensor::swapdims_(int64_t dim0, int64_t dim1) const { return transpose_(dim0, dim1); }
Tensor Tensor::moveaxis(IntArrayRef source, IntArrayRef destination) const { return movedim(source, destination); }
Tensor Tensor::ravel() const { return ember::ravel(*this); }
Tensor Tensor::msort() const { return ember::msort(*this); }

int64_t size(const Tensor& self, int64_t dim) { return self.size(dim); }
int64_t stride(const Tensor& self, int64_t dim) { return self.stride(dim); }
bool is_same_size(const Tensor& self, const Tensor& other) { return self.sizes() == other.sizes(); }
bool Tensor::is_same_size(const Tensor& other) const { return ember::is_same_size(*this, other); }
bool is_nonzero(const Tensor& self) {
  EMBER_CHECK(self.numel() != 0, "is_nonzero", "Boolean value of Tensor with no values is ambiguous");
  EMBER_CHECK(self.numel() == 1, "is_nonzero", "Boolean value of Tensor with more than one value is ambiguous");
  return self.item().to<double>() != 0;
}
bool Tensor::is_nonzero() const { return ember::is_nonzero(*this); }
bool is_complex(const Tensor& self) { return self.is_complex(); }
bool is_conj(const Tensor& self) { return self.is_conj(); }
bool is_neg(const Tensor& self) { return self.is_neg(); }
ScalarType result_type(const Scalar& scalar, const Tensor& tensor) { return result_type(tensor, scalar); }
ScalarType result_type(const Scalar& scalar1, const Scalar& scalar2) {
  ResultTypeState state;
  state.update(scalar1);
  state.update(scalar2);
  return state.result();
}

Tensor& nan_to_num_(Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                    std::optional<double> neginf) {
  return self.copy_(nan_to_num(operand(self), nan, posinf, neginf));
}
Tensor& Tensor::nan_to_num_(std::optional<double> nan, std::optional<double> posinf,
                            std::optional<double> neginf) const {
  return ember::nan_to_num_(mutable_self(), nan, posinf, neginf);
}
Tensor relu6(const Tensor& self) { return hardtanh(self, 0, 6); }
Tensor& relu6_(Tensor& self) { return hardtanh_(self, 0, 6); }
Tensor& gelu_(Tensor& self, std::string_view approximate) { return self.copy_(gelu(operand(self), approximate)); }
Tensor& elu_(Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return self.copy_(elu(operand(self), alpha, scale, input_scale));
}
Tensor& leaky_relu_(Tensor& self, const Scalar& negative_slope) {
  return self.copy_(leaky_relu(operand(self), negative_slope));
}
Tensor& dropout_(Tensor& self, double p, bool train) { return self.copy_(dropout(operand(self), p, train)); }

// ---- binary math ----
Tensor arctan2(const Tensor& self, const Tensor& other) { return atan2(self, other); }
Tensor copysign(const Tensor& self, const Scalar& other) {
  const Tensor a = abs(to_float(self));
  return std::signbit(other.to<double>()) ? -a : a;
}
Tensor heaviside(const Tensor& self, const Tensor& values) {
  EMBER_CHECK(self.dtype() == values.dtype(), "heaviside",
              "heaviside is not yet implemented for tensors with different dtypes (got ", self.dtype(), " and ",
              values.dtype(), ")");
  return where(self == 0, values, (self > 0).to(self.dtype()));
}
Tensor ldexp(const Tensor& self, const Tensor& other) { return to_float(self) * pow(2.0, other); }
Tensor& ldexp_(Tensor& self, const Tensor& other) { return write_back("ldexp_", self, ldexp(operand(self), other)); }
// m + log1p(exp(-|a-b|)) with m = max(a, b); equal infinities give m itself instead of inf-inf.
Tensor logaddexp(const Tensor& self, const Tensor& other) {
  Tensor a = to_float(self), b = to_float(other);
  Tensor m = maximum(a, b);
  return where(logical_and(isinf(m), a == b), m, m + log1p(exp(-abs(a - b))));
}
Tensor logaddexp2(const Tensor& self, const Tensor& other) {
  Tensor a = to_float(self), b = to_float(other);
  Tensor m = maximum(a, b);
  return where(logical_and(isinf(m), a == b), m, m + log1p(exp2(-abs(a - b))) / std::numbers::ln2);
}
// float_power computes in double whatever the inputs.
Tensor float_power(const Tensor& self, const Tensor& exponent) { return pow(self.to(kDouble), exponent.to(kDouble)); }
Tensor float_power(const Tensor& self, const Scalar& exponent) { return pow(self.to(kDouble), exponent.to<double>()); }
Tensor float_power(const Scalar& self, const Tensor& exponent) { return pow(self.to<double>(), exponent.to(kDouble)); }

#define EMBER_DEFINE_BINARY_MATH_METHODS(name)                                                 \
  Tensor Tensor::name(const Tensor& other) const { return ember::name(*this, other); }         \
  Tensor& Tensor::name##_(const Tensor& other) const {                                         \
    return write_back(#name "_", mutable_self(), ember::name(operand(mutable_self()), other)); \
  }
EMBER_DEFINE_BINARY_MATH_METHODS(arctan2)
EMBER_DEFINE_BINARY_MATH_METHODS(hypot)
EMBER_DEFINE_BINARY_MATH_METHODS(copysign)
EMBER_DEFINE_BINARY_MATH_METHODS(heaviside)
EMBER_DEFINE_BINARY_MATH_METHODS(xlogy)
EMBER_DEFINE_BINARY_MATH_METHODS(ldexp)
#undef EMBER_DEFINE_BINARY_MATH_METHODS
Tensor& Tensor::atan2_(const Tensor& other) const {
  return write_back("atan2_", mutable_self(), ember::atan2(operand(mutable_self()), other));
}
Tensor Tensor::logaddexp(const Tensor& other) const { return ember::logaddexp(*this, other); }
Tensor Tensor::logaddexp2(const Tensor& other) const { return ember::logaddexp2(*this, other); }
Tensor Tensor::fmax(const Tensor& other) const { return ember::fmax(*this, other); }
Tensor Tensor::fmin(const Tensor& other) const { return ember::fmin(*this, other); }
Tensor Tensor::float_power(const Tensor& exponent) const { return ember::float_power(*this, exponent); }
Tensor Tensor::float_power(const Scalar& exponent) const { return ember::float_power(*this, exponent); }

// ---- new_* factories: self's dtype unless the options name one ----
namespace {
TensorOptions like(const Tensor& self, TensorOptions options) {
  return options.has_dtype() ? options : options.dtype(self.dtype());
}
}  // namespace
Tensor Tensor::new_empty(IntArrayRef size, TensorOptions options) const { return empty(size, like(*this, options)); }
Tensor Tensor::new_zeros(IntArrayRef size, TensorOptions options) const { return zeros(size, like(*this, options)); }
Tensor Tensor::new_ones(IntArrayRef size, TensorOptions options) const { return ones(size, like(*this, options)); }
Tensor Tensor::new_full(IntArrayRef size, const Scalar& fill_value, TensorOptions options) const {
  return full(size, fill_value, like(*this, options));
}

}  // namespace ember
