// Complex loops: plain C++ over ember::complex<T>, one loop per op and dtype, the contiguous
// case written apart so that GCC vectorizes it. The conjugate bit of an input is folded into
// its loads as a multiplication of the imaginary part by +-1.
#include "kernels/cpu/complex_kernels.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <numbers>

#include "kernels/cpu/cast.h"

namespace ember::kernels {
namespace {

template <class C>
using real_t = typename C::value_type;

template <class C>
inline C load(const char* p, real_t<C> sign) {
  C v;
  std::memcpy(&v, p, sizeof(C));
  v.imag_ *= sign;
  return v;
}
template <class T>
inline void store(char* p, const T& v) {
  std::memcpy(p, &v, sizeof(T));
}
template <class C>
inline real_t<C> conj_sign(const TensorIterator& iter, int arg) {
  return iter.is_conj(arg) ? real_t<C>(-1) : real_t<C>(1);
}

// Division as libtorch's tensor kernels give it. A divisor that is zero or has an infinite part
// takes their formula, a conj(b) / |b|^2, whose parts are NaN where C's division (and
// ember::complex's, as c10::complex's) gives 0 or inf; any other divisor takes Smith's scaled
// division, which agrees with that formula within rounding and does not overflow where |b|^2 does.
template <class C>
inline bool zero_or_infinite(C b) {
  return (b.real_ == 0 && b.imag_ == 0) || std::isinf(b.real_) || std::isinf(b.imag_);
}
template <class C>
inline C tensor_div(C a, C b) {
  if (zero_or_infinite(b)) [[unlikely]] {
    const real_t<C> den = b.real_ * b.real_ + b.imag_ * b.imag_;
    return C((a.real_ * b.real_ + a.imag_ * b.imag_) / den, (a.imag_ * b.real_ - a.real_ * b.imag_) / den);
  }
  return a / b;
}
template <class C>
inline C tensor_reciprocal(C b) {
  if (zero_or_infinite(b)) [[unlikely]] {
    const real_t<C> den = b.real_ * b.real_ + b.imag_ * b.imag_;
    return C(b.real_ / den, -b.imag_ / den);
  }
  return C(real_t<C>(1)) / b;
}

// out[i] = f(x[i]) with x complex C and out of type O. Functions bound by libm calls (cpow,
// expm1, ...) gain nothing from a contiguous loop of their own: they say kContiguousPath = false,
// and one loop serves every stride (half the code).
template <class C, class O, bool kContiguousPath = true, class F>
void unary_loop(TensorIterator& iter, F f) {
  const real_t<C> sx = conj_sign<C>(iter, 1);
  iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
    if (kContiguousPath && strides[0] == sizeof(O) && strides[1] == sizeof(C)) {
      O* o = reinterpret_cast<O*>(data[0]);
      const C* x = reinterpret_cast<const C*>(data[1]);
      for (int64_t i = 0; i < n; ++i) o[i] = f(C(x[i].real_, x[i].imag_ * sx));
    } else {
      for (int64_t i = 0; i < n; ++i) store(data[0] + i * strides[0], f(load<C>(data[1] + i * strides[1], sx)));
    }
  });
}

// out[i] = f(a[i], b[i]) with a, b complex C and out of type O.
template <class C, class O, bool kContiguousPath = true, class F>
void binary_loop(TensorIterator& iter, F f) {
  const real_t<C> sa = conj_sign<C>(iter, 1), sb = conj_sign<C>(iter, 2);
  iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
    if (kContiguousPath && strides[0] == sizeof(O) && strides[1] == sizeof(C) && strides[2] == sizeof(C)) {
      O* o = reinterpret_cast<O*>(data[0]);
      const C* a = reinterpret_cast<const C*>(data[1]);
      const C* b = reinterpret_cast<const C*>(data[2]);
      for (int64_t i = 0; i < n; ++i) o[i] = f(C(a[i].real_, a[i].imag_ * sa), C(b[i].real_, b[i].imag_ * sb));
    } else {
      for (int64_t i = 0; i < n; ++i)
        store(data[0] + i * strides[0],
              f(load<C>(data[1] + i * strides[1], sa), load<C>(data[2] + i * strides[2], sb)));
    }
  });
}

template <class C>
std::complex<real_t<C>> to_std(const C& z) {
  return {z.real_, z.imag_};
}

// PyTorch's lerp: from the nearer end, |weight| < 1/2 counting as near self.
template <class C>
inline C lerp_of(C self, C end, C weight) {
  return std::abs(to_std(weight)) < real_t<C>(0.5) ? self + weight * (end - self)
                                                     : end - (end - self) * (C(real_t<C>(1)) - weight);
}

}  // namespace

void complex_copy_kernel(TensorIterator& iter) {
  const ScalarType to = iter.dtype(0), from = iter.dtype(1);
  if (is_complex_type(from)) {
    visit_complex(from, [&](auto ftag) {
      using F = decltype(ftag);
      if (is_complex_type(to)) {
        visit_complex(to, [&](auto ttag) {
          using T = decltype(ttag);
          unary_loop<F, T>(iter, [](F z) { return T(static_cast<real_t<T>>(z.real_), static_cast<real_t<T>>(z.imag_)); });
        });
      } else {  // to a real dtype: the real part
        visit_dtype(to, [&](auto ttag) {
          using T = decltype(ttag);
          unary_loop<F, T>(iter, [](F z) { return cast<T>(z.real_); });
        });
      }
    });
    return;
  }
  visit_complex(to, [&](auto ttag) {
    using T = decltype(ttag);
    using R = real_t<T>;
    visit_dtype(from, [&](auto ftag) {
      using F = decltype(ftag);
      iter.for_each([](char** data, const int64_t* strides, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          F v;
          std::memcpy(&v, data[1] + i * strides[1], sizeof(F));
          store(data[0] + i * strides[0], T(cast<R>(v), R(0)));
        }
      });
    });
  });
}

void complex_fill_kernel(TensorIterator& iter, const Scalar& value) {
  visit_complex(iter.dtype(0), [&](auto tag) {
    using C = decltype(tag);
    const C v = value.to<C>();
    iter.for_each([v](char** data, const int64_t* strides, int64_t n) {
      for (int64_t i = 0; i < n; ++i) store(data[0] + i * strides[0], v);
    });
  });
}

void complex_binary_kernel(TensorIterator& iter, BinaryOp op, const Scalar& alpha) {
  visit_complex(iter.dtype(0), [&](auto tag) {
    using C = decltype(tag);
    const C al = alpha.to<C>();
    switch (op) {
      // a + alpha * b with the complex product even for alpha = 1, as PyTorch: a NaN part of b
      // reaches both parts of the result
      case BinaryOp::Add: return binary_loop<C, C>(iter, [al](C a, C b) { return a + al * b; });
      case BinaryOp::Sub: return binary_loop<C, C>(iter, [al](C a, C b) { return a - al * b; });
      case BinaryOp::Mul: return binary_loop<C, C>(iter, [](C a, C b) { return a * b; });
      case BinaryOp::Div: return binary_loop<C, C>(iter, [](C a, C b) { return tensor_div(a, b); });
      // libstdc++'s pow is C99's cpow, as in libtorch (c10's pow calls std::pow)
      case BinaryOp::Pow:
        return binary_loop<C, C, false>(iter, [](C a, C b) { return C(std::pow(to_std(a), to_std(b))); });
      case BinaryOp::Lerp: return binary_loop<C, C>(iter, [al](C a, C b) { return lerp_of(a, b, al); });
      default: EMBER_CHECK(false, "binary", "no complex kernel for this op");
    }
  });
}

void complex_ternary_kernel(TensorIterator& iter, TernaryOp op, const Scalar& value) {
  visit_complex(iter.dtype(0), [&](auto tag) {
    using C = decltype(tag);
    const C v = value.to<C>();
    const real_t<C> sa = conj_sign<C>(iter, 1), sb = conj_sign<C>(iter, 2), sc = conj_sign<C>(iter, 3);
    const auto loop = [&](auto f) {
      iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          store(data[0] + i * strides[0], f(load<C>(data[1] + i * strides[1], sa), load<C>(data[2] + i * strides[2], sb),
                                            load<C>(data[3] + i * strides[3], sc)));
        }
      });
    };
    // as libtorch's kernels: the scalar times the first tensor, then the second
    switch (op) {
      case TernaryOp::Lerp: return loop([](C a, C b, C c) { return lerp_of(a, b, c); });
      case TernaryOp::Addcmul: return loop([v](C a, C b, C c) { return a + v * b * c; });
      case TernaryOp::Addcdiv: return loop([v](C a, C b, C c) { return a + v * b / c; });
      default: EMBER_CHECK(false, "ternary", "no complex kernel for this op");
    }
  });
}

bool complex_unary_supported(UnaryOp op) {
  switch (op) {
    case UnaryOp::Abs: case UnaryOp::Neg: case UnaryOp::Exp: case UnaryOp::Exp2: case UnaryOp::Log: case UnaryOp::Log2:
    case UnaryOp::Log10: case UnaryOp::Sqrt: case UnaryOp::Rsqrt: case UnaryOp::Sin: case UnaryOp::Cos:
    case UnaryOp::Tan: case UnaryOp::Asin: case UnaryOp::Acos: case UnaryOp::Atan: case UnaryOp::Tanh:
    case UnaryOp::Sinh: case UnaryOp::Cosh: case UnaryOp::Asinh: case UnaryOp::Acosh: case UnaryOp::Atanh:
    case UnaryOp::Sigmoid: case UnaryOp::Reciprocal: case UnaryOp::Square: case UnaryOp::Expm1:
    case UnaryOp::Log1p: case UnaryOp::PowScalar:
      return true;
    default: return false;
  }
}

// exp(z) - 1 without the cancellation near 0: (expm1(x) cos y - 2 sin^2(y/2)) + i e^x sin y.
template <class C>
C expm1_of(C z) {
  using R = real_t<C>;
  const R x = z.real_, y = z.imag_, h = std::sin(y / 2);
  return C(std::expm1(x) * std::cos(y) - 2 * h * h, std::exp(x) * std::sin(y));
}
// log(1 + z): log|1 + z| from log1p(x (x + 2) + y^2) when |z| < 1/2 (where log(hypot) would
// cancel), else log(hypot(1 + x, y)); the argument is atan2(y, 1 + x).
template <class C>
C log1p_of(C z) {
  using R = real_t<C>;
  const R x = z.real_, y = z.imag_, theta = std::atan2(y, x + 1);
  if (std::hypot(x, y) < R(0.5)) {
    const R r = x * (x + 2) + y * y;
    return C(r == 0 ? x : R(0.5) * std::log1p(r), theta);  // r underflows: log1p(z) ~ z
  }
  return C(std::log(std::hypot(x + 1, y)), theta);
}

// The ops bound by libm calls share one strided loop per dtype, the op chosen per element (a
// predictable branch, cheap beside cpow or expm1): a fraction of the code of a loop each. The
// powers are tensor ** scalar's cases apart from the ones with loops of their own (see below).
enum class Slow : uint8_t { Expm1, Log1p, PowZero, PowOne, PowThree, PowMinusTwo, Pow };
template <class C>
void slow_loop(TensorIterator& iter, Slow kind, std::complex<double> e = {}) {
  using R = real_t<C>;
  const std::complex<R> ec(static_cast<R>(e.real()), static_cast<R>(e.imag()));
  unary_loop<C, C, false>(iter, [kind, ec](C z) {
    switch (kind) {
      case Slow::Expm1: return expm1_of(z);
      case Slow::Log1p: return log1p_of(z);
      case Slow::PowZero: return C(R(1));
      case Slow::PowOne: return z;
      case Slow::PowThree: return z * z * z;
      case Slow::PowMinusTwo: return C(R(1)) / (z * z);
      default: return C(std::pow(to_std(z), ec));
    }
  });
}

// z ** e for a scalar exponent, with libtorch's special cases (its pow_tensor_scalar kernel):
// +-1/2 are sqrt and rsqrt, -1 the reciprocal and 2 the square (those ops' loops); 0 gives 1,
// 1 the base, 3 and -2 products, others cpow.
template <class C>
void pow_scalar_loop(TensorIterator& iter, std::complex<double> e) {
  const auto is = [&](double v) { return e == std::complex<double>(v); };
  if (is(0.5)) return complex_unary_kernel(iter, UnaryOp::Sqrt, {});
  if (is(-0.5)) return complex_unary_kernel(iter, UnaryOp::Rsqrt, {});
  if (is(-1)) return complex_unary_kernel(iter, UnaryOp::Reciprocal, {});
  if (is(2)) return complex_unary_kernel(iter, UnaryOp::Square, {});
  slow_loop<C>(iter, is(0) ? Slow::PowZero : is(1) ? Slow::PowOne : is(3) ? Slow::PowThree
                     : is(-2) ? Slow::PowMinusTwo : Slow::Pow, e);
}

void complex_unary_kernel(TensorIterator& iter, UnaryOp op, const UnaryParams& params) {
  visit_complex(iter.dtype(1), [&](auto tag) {
    using C = decltype(tag);
    using R = real_t<C>;
    using S = std::complex<R>;
    const auto std_fn = [&](auto f) { unary_loop<C, C>(iter, [f](C z) { return C(f(to_std(z))); }); };
    switch (op) {
      case UnaryOp::Abs: return unary_loop<C, R>(iter, [](C z) { return std::hypot(z.real_, z.imag_); });
      case UnaryOp::Neg: return unary_loop<C, C>(iter, [](C z) { return -z; });
      case UnaryOp::Exp: return std_fn([](S z) { return std::exp(z); });
      // no std::exp2 for complex: 2^z = e^(z ln 2), as PyTorch 2 (libtorch 1.13 has none)
      case UnaryOp::Exp2: return std_fn([](S z) { return std::exp(z * std::numbers::ln2_v<R>); });
      case UnaryOp::Log: return std_fn([](S z) { return std::log(z); });
      case UnaryOp::Log2: return std_fn([](S z) { return std::log(z) / std::log(R(2)); });
      case UnaryOp::Log10: return std_fn([](S z) { return std::log10(z); });
      case UnaryOp::Sqrt: return std_fn([](S z) { return std::sqrt(z); });
      case UnaryOp::Rsqrt: return unary_loop<C, C>(iter, [](C z) { return C(R(1)) / C(std::sqrt(to_std(z))); });
      case UnaryOp::Sin: return std_fn([](S z) { return std::sin(z); });
      case UnaryOp::Cos: return std_fn([](S z) { return std::cos(z); });
      case UnaryOp::Tan: return std_fn([](S z) { return std::tan(z); });
      case UnaryOp::Asin: return std_fn([](S z) { return std::asin(z); });
      case UnaryOp::Acos: return std_fn([](S z) { return std::acos(z); });
      case UnaryOp::Atan: return std_fn([](S z) { return std::atan(z); });
      case UnaryOp::Tanh: return std_fn([](S z) { return std::tanh(z); });
      case UnaryOp::Sinh: return std_fn([](S z) { return std::sinh(z); });
      case UnaryOp::Cosh: return std_fn([](S z) { return std::cosh(z); });
      case UnaryOp::Asinh: return std_fn([](S z) { return std::asinh(z); });
      case UnaryOp::Acosh: return std_fn([](S z) { return std::acosh(z); });
      case UnaryOp::Atanh: return std_fn([](S z) { return std::atanh(z); });
      case UnaryOp::Sigmoid:
        return unary_loop<C, C>(iter, [](C z) { return C(R(1)) / (C(R(1)) + C(std::exp(-to_std(z)))); });
      case UnaryOp::Reciprocal: return unary_loop<C, C>(iter, [](C z) { return tensor_reciprocal(z); });
      case UnaryOp::Square: return unary_loop<C, C>(iter, [](C z) { return z * z; });
      case UnaryOp::Expm1: return slow_loop<C>(iter, Slow::Expm1);
      case UnaryOp::Log1p: return slow_loop<C>(iter, Slow::Log1p);
      case UnaryOp::PowScalar: {
        const auto e = params.a->toComplexDouble();
        return pow_scalar_loop<C>(iter, {e.real(), e.imag()});
      }
      default: EMBER_CHECK(false, "unary", "no complex kernel for this op");
    }
  });
}

void complex_predicate_kernel(TensorIterator& iter, PredicateOp op) {
  visit_complex(iter.dtype(1), [&](auto tag) {
    using C = decltype(tag);
    switch (op) {
      case PredicateOp::Eq: return binary_loop<C, bool>(iter, [](C a, C b) { return a == b; });
      case PredicateOp::Ne: return binary_loop<C, bool>(iter, [](C a, C b) { return a != b; });
      case PredicateOp::IsNan:
        return unary_loop<C, bool>(iter, [](C z) { return std::isnan(z.real_) || std::isnan(z.imag_); });
      case PredicateOp::IsInf:
        return unary_loop<C, bool>(iter, [](C z) { return std::isinf(z.real_) || std::isinf(z.imag_); });
      case PredicateOp::IsFinite:
        return unary_loop<C, bool>(iter, [](C z) { return std::isfinite(z.real_) && std::isfinite(z.imag_); });
      // the logical ops: an element is true where either part is nonzero
      case PredicateOp::LogicalNot: return unary_loop<C, bool>(iter, [](C z) { return z == C(0); });
      case PredicateOp::LogicalAnd: return binary_loop<C, bool>(iter, [](C a, C b) { return (a != C(0)) & (b != C(0)); });
      case PredicateOp::LogicalOr: return binary_loop<C, bool>(iter, [](C a, C b) { return (a != C(0)) | (b != C(0)); });
      case PredicateOp::LogicalXor: return binary_loop<C, bool>(iter, [](C a, C b) { return (a != C(0)) != (b != C(0)); });
      default: EMBER_CHECK(false, "predicate", "no complex kernel for this op");
    }
  });
}

void complex_angle_kernel(TensorIterator& iter) {
  visit_complex(iter.dtype(1), [&](auto tag) {
    using C = decltype(tag);
    unary_loop<C, real_t<C>>(iter, [](C z) { return std::atan2(z.imag_, z.real_); });
  });
}

void complex_conj_kernel(TensorIterator& iter) {
  visit_complex(iter.dtype(1), [&](auto tag) {
    using C = decltype(tag);
    unary_loop<C, C>(iter, [](C z) { return C(z.real_, -z.imag_); });
  });
}

void complex_from_parts_kernel(TensorIterator& iter, bool polar) {
  visit_complex(iter.dtype(0), [&](auto tag) {
    using C = decltype(tag);
    using R = real_t<C>;
    iter.for_each([polar](char** data, const int64_t* strides, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        R a, b;
        std::memcpy(&a, data[1] + i * strides[1], sizeof(R));
        std::memcpy(&b, data[2] + i * strides[2], sizeof(R));
        store(data[0] + i * strides[0], polar ? C(a * std::cos(b), a * std::sin(b)) : C(a, b));
      }
    });
  });
}

void complex_prod_rows(const Tensor& out, const Tensor& in, int64_t rows, int64_t n, bool cumulative) {
  visit_complex(in.dtype(), [&](auto tag) {
    using C = decltype(tag);
    using R = real_t<C>;
    // the running product in complex128, as libtorch's cumprod (its accumulate type), so that a
    // complex64 product overflows only where its stored value does
    using A = complex<double>;
    const C* x = static_cast<const C*>(in.data_ptr());
    C* o = static_cast<C*>(out.data_ptr());
    for (int64_t r = 0; r < rows; ++r) {
      if (!cumulative) {
        C p(1);
        for (int64_t i = 0; i < n; ++i) p *= x[r * n + i];
        o[r] = p;
        continue;
      }
      A p(1);
      for (int64_t i = 0; i < n; ++i) {
        const C v = x[r * n + i];
        p *= A(v.real_, v.imag_);
        o[r * n + i] = C(static_cast<R>(p.real_), static_cast<R>(p.imag_));
      }
    }
  });
}

}  // namespace ember::kernels
