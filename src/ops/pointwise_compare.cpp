// Comparison, logical and bitwise ops, float predicates, and isclose / allclose / equal.
// Comparisons and logical ops compare in the promoted dtype and return Bool (an out= tensor may
// have any dtype the Bool result casts to); bitwise ops take integers and bool only.
#include "dispatch/dispatch.h"
#include "ember/pointwise.h"
#include "ops/pointwise_util.h"

namespace ember {
namespace {

using kernels::BinaryOp;
using kernels::PredicateOp;
using pointwise::bump_version;
using pointwise::not_implemented;

template <class B>
Tensor predicate_into(const char* name, const Tensor& out, const Tensor& a, const B& b, PredicateOp op) {
  TensorIterator iter(TensorIteratorConfig(name).add_output(out).add_input(a).add_input(b).output_dtype(kBool));
  // complex numbers are not ordered: only eq and ne (PyTorch's error)
  if (is_complex_type(iter.common_dtype()) &&
      (op == PredicateOp::Lt || op == PredicateOp::Le || op == PredicateOp::Gt || op == PredicateOp::Ge))
    detail::fail(name, "\"", name, "_cpu\" not implemented for '", iter.common_dtype(), "'");
  kernels::predicate_kernel(iter, op);
  bump_version(out);
  return iter.take_output();
}

Tensor unary_predicate(const char* name, const Tensor& self, PredicateOp op) {
  TensorIterator iter(TensorIteratorConfig(name).add_output(Tensor()).add_input(self).output_dtype(kBool));
  kernels::predicate_kernel(iter, op);
  return iter.take_output();
}

#define EMBER_COMPARISON(fn, kernel_op)                                                         \
  struct fn##_op {                                                                              \
    static constexpr const char* name = #fn;                                                    \
    static constexpr bool differentiable = false;                                               \
    static constexpr bool conj_aware = true;  /* the complex loops read the bit */              \
    template <class B>                                                                          \
    static Tensor run(const Tensor& a, const B& b) { return predicate_into(name, Tensor(), a, b, kernel_op); } \
  };                                                                                            \
  struct fn##_out_op {                                                                          \
    static constexpr const char* name = #fn "_out";                                             \
    static Tensor& run(Tensor& out, const Tensor& a, const Tensor& b) {                         \
      predicate_into(name, out, a, b, kernel_op);                                               \
      return out;                                                                               \
    }                                                                                           \
  };                                                                                            \
  }                                                                                             \
  Tensor fn(const Tensor& a, const Tensor& b) { return dispatch::call<fn##_op>(a, b); }         \
  Tensor fn(const Tensor& a, const Scalar& b) { return dispatch::call<fn##_op>(a, b); }         \
  Tensor& fn##_out(Tensor& out, const Tensor& a, const Tensor& b) { return dispatch::call<fn##_out_op>(out, a, b); } \
  Tensor Tensor::fn(const Tensor& b) const { return ember::fn(*this, b); }                      \
  Tensor Tensor::fn(const Scalar& b) const { return ember::fn(*this, b); }                      \
  namespace {
EMBER_COMPARISON(eq, PredicateOp::Eq)
EMBER_COMPARISON(ne, PredicateOp::Ne)
EMBER_COMPARISON(lt, PredicateOp::Lt)
EMBER_COMPARISON(le, PredicateOp::Le)
EMBER_COMPARISON(gt, PredicateOp::Gt)
EMBER_COMPARISON(ge, PredicateOp::Ge)
#undef EMBER_COMPARISON

template <PredicateOp K>
struct LogicalOp {
  static constexpr const char* name = K == PredicateOp::LogicalAnd  ? "logical_and"
                                      : K == PredicateOp::LogicalOr ? "logical_or"
                                                                    : "logical_xor";
  static constexpr bool differentiable = false;  // integer or bool results
  static Tensor run(const Tensor& a, const Tensor& b) { return predicate_into(name, Tensor(), a, b, K); }
};
template <PredicateOp K>
struct UnaryPredicateOp {
  static constexpr const char* name = K == PredicateOp::LogicalNot ? "logical_not"
                                      : K == PredicateOp::IsNan    ? "isnan"
                                      : K == PredicateOp::IsInf    ? "isinf"
                                                                   : "isfinite";
  static constexpr bool differentiable = false;  // integer or bool results
  static Tensor run(const Tensor& self) { return unary_predicate(name, self, K); }
};

template <BinaryOp K>
struct BitwiseOp {
  static constexpr const char* name = K == BinaryOp::BitwiseAnd  ? "bitwise_and"
                                      : K == BinaryOp::BitwiseOr ? "bitwise_or"
                                                                 : "bitwise_xor";
  static constexpr bool differentiable = false;  // integer or bool results
  template <class B>
  static Tensor run(const Tensor& a, const B& b) {
    TensorIterator iter(TensorIteratorConfig(name).add_output(Tensor()).add_input(a).add_input(b));
    if (is_floating_type(iter.common_dtype())) not_implemented(name, iter.common_dtype());
    kernels::binary_kernel(iter, K);
    return iter.take_output();
  }
};
struct BitwiseNotOp {
  static constexpr const char* name = "bitwise_not";
  static constexpr bool differentiable = false;  // integer or bool results
  static Tensor run(const Tensor& self) {
    if (is_floating_type(self.dtype())) not_implemented(name, self.dtype());
    return pointwise::unary_into(name, Tensor(), self, kernels::UnaryOp::BitwiseNot, {}, false);
  }
};

// PyTorch's isclose, op for op, so that rounding of Half/BFloat16 intermediates matches:
// a == b, or (equal_nan and both NaN), or |a - b| finite and <= atol + |rtol * b|. Integer and
// bool inputs compute the errors in the default float dtype (no wrapping differences).
struct IscloseOp {
  static constexpr const char* name = "isclose";
  static constexpr bool differentiable = false;  // integer or bool results
  static Tensor run(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
    EMBER_CHECK(self.dtype() == other.dtype(), name, self.dtype(), " did not match ", other.dtype());
    EMBER_CHECK(rtol >= 0, name, "rtol must be greater than or equal to zero, but got ", rtol);
    EMBER_CHECK(atol >= 0, name, "atol must be greater than or equal to zero, but got ", atol);
    Tensor close = eq(self, other);
    const bool inexact = self.is_floating_point() || self.is_complex();
    if (equal_nan && inexact) close = logical_or(close, logical_and(isnan(self), isnan(other)));
    if (rtol == 0 && atol == 0) return close;
    const Tensor a = inexact ? self : self.to(get_default_dtype());
    const Tensor b = inexact ? other : other.to(get_default_dtype());
    const Tensor allowed = add(abs(mul(b, rtol)), atol);
    const Tensor actual = abs(sub(a, b));
    return logical_or(close, logical_and(isfinite(actual), le(actual, allowed)));
  }
};

// True when every element of a Bool tensor is set.
bool all_true(const Tensor& t) {
  const Tensor c = t.contiguous();
  const bool* p = c.data_ptr<bool>();
  for (int64_t i = 0; i < c.numel(); ++i)
    if (!p[i]) return false;
  return true;
}
struct AllcloseOp {
  static constexpr const char* name = "allclose";
  static constexpr bool differentiable = false;  // integer or bool results
  static bool run(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
    return all_true(isclose(self, other, rtol, atol, equal_nan));
  }
};
// Same shape and equal values (NaN is unequal to itself); dtypes may differ, as in PyTorch 1.13.
struct EqualOp {
  static constexpr const char* name = "equal";
  static constexpr bool differentiable = false;  // integer or bool results
  static bool run(const Tensor& self, const Tensor& other) {
    return self.sizes().equals(other.sizes()) && all_true(eq(self, other));
  }
};

}  // namespace

Tensor logical_and(const Tensor& a, const Tensor& b) { return dispatch::call<LogicalOp<PredicateOp::LogicalAnd>>(a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return dispatch::call<LogicalOp<PredicateOp::LogicalOr>>(a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return dispatch::call<LogicalOp<PredicateOp::LogicalXor>>(a, b); }
Tensor logical_not(const Tensor& self) { return dispatch::call<UnaryPredicateOp<PredicateOp::LogicalNot>>(self); }
Tensor isnan(const Tensor& self) { return dispatch::call<UnaryPredicateOp<PredicateOp::IsNan>>(self); }
Tensor isinf(const Tensor& self) { return dispatch::call<UnaryPredicateOp<PredicateOp::IsInf>>(self); }
Tensor isfinite(const Tensor& self) { return dispatch::call<UnaryPredicateOp<PredicateOp::IsFinite>>(self); }
Tensor bitwise_and(const Tensor& a, const Tensor& b) { return dispatch::call<BitwiseOp<BinaryOp::BitwiseAnd>>(a, b); }
Tensor bitwise_and(const Tensor& a, const Scalar& b) { return dispatch::call<BitwiseOp<BinaryOp::BitwiseAnd>>(a, b); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return dispatch::call<BitwiseOp<BinaryOp::BitwiseOr>>(a, b); }
Tensor bitwise_or(const Tensor& a, const Scalar& b) { return dispatch::call<BitwiseOp<BinaryOp::BitwiseOr>>(a, b); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return dispatch::call<BitwiseOp<BinaryOp::BitwiseXor>>(a, b); }
Tensor bitwise_xor(const Tensor& a, const Scalar& b) { return dispatch::call<BitwiseOp<BinaryOp::BitwiseXor>>(a, b); }
Tensor bitwise_not(const Tensor& self) { return dispatch::call<BitwiseNotOp>(self); }
Tensor isclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  return dispatch::call<IscloseOp>(self, other, rtol, atol, equal_nan);
}
bool allclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  return dispatch::call<AllcloseOp>(self, other, rtol, atol, equal_nan);
}
bool equal(const Tensor& self, const Tensor& other) { return dispatch::call<EqualOp>(self, other); }

Tensor Tensor::logical_and(const Tensor& o) const { return ember::logical_and(*this, o); }
Tensor Tensor::logical_or(const Tensor& o) const { return ember::logical_or(*this, o); }
Tensor Tensor::logical_xor(const Tensor& o) const { return ember::logical_xor(*this, o); }
Tensor Tensor::logical_not() const { return ember::logical_not(*this); }
Tensor Tensor::bitwise_and(const Tensor& o) const { return ember::bitwise_and(*this, o); }
Tensor Tensor::bitwise_and(const Scalar& o) const { return ember::bitwise_and(*this, o); }
Tensor Tensor::bitwise_or(const Tensor& o) const { return ember::bitwise_or(*this, o); }
Tensor Tensor::bitwise_or(const Scalar& o) const { return ember::bitwise_or(*this, o); }
Tensor Tensor::bitwise_xor(const Tensor& o) const { return ember::bitwise_xor(*this, o); }
Tensor Tensor::bitwise_xor(const Scalar& o) const { return ember::bitwise_xor(*this, o); }
Tensor Tensor::bitwise_not() const { return ember::bitwise_not(*this); }
Tensor Tensor::isnan() const { return ember::isnan(*this); }
Tensor Tensor::isinf() const { return ember::isinf(*this); }
Tensor Tensor::isfinite() const { return ember::isfinite(*this); }
Tensor Tensor::isclose(const Tensor& o, double rtol, double atol, bool equal_nan) const {
  return ember::isclose(*this, o, rtol, atol, equal_nan);
}
bool Tensor::allclose(const Tensor& o, double rtol, double atol, bool equal_nan) const {
  return ember::allclose(*this, o, rtol, atol, equal_nan);
}
bool Tensor::equal(const Tensor& o) const { return ember::equal(*this, o); }

}  // namespace ember
