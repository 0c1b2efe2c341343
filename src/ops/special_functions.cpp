// torch.special's own functions (issue 21): the scaled and modified Bessel functions, Airy's Ai,
// the normal distribution's log-CDF and quantile, the scaled complementary error function, the
// Hurwitz zeta and the classical orthogonal polynomials. I_0, I_1 and their scaled forms run the
// vectorized kernels of kernels/cpu/special.h (power series, then the Hankel expansion); the
// others elementwise in double (float inputs widened, the result rounded once). Each has
// PyTorch's derivative where PyTorch has one (i0e, i1, i1e, ndtri, log_ndtr, erfcx, zeta's second
// argument); the rest are not differentiable, as in PyTorch.
//
// The numerics: libstdc++'s C++17 Bessel functions K, J, Y (Steed's and Temme's methods) at
// moderate arguments, and the Hankel asymptotic series of K from x = 30 on, where e^x and the unscaled functions
// would overflow or underflow; Ai from its Maclaurin series for |x| <= 2 and from the Bessel
// functions of order 1/3 beyond; erfcx as e^(x^2) erfc(x) with x^2's rounding error folded in,
// then Laplace's continued fraction; ndtri by Newton's method on erfc from Abramowitz and Stegun's
// 26.2.23 start. Special values (poles, domain edges, negative degrees) are PyTorch's.
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>

#include "dispatch/dispatch.h"
#include "ember/aten_tail.h"
#include "ember/factory.h"
#include "ember/pointwise.h"
#include "ember/special.h"
#include "ember/unary_ops.h"
#include "special_math.h"
#include "ops/op_util.h"

namespace ember {
namespace {

using special_math::map_binary;
using special_math::map_unary;

using op_util::kPi;
using op_util::kInf;
using op_util::kNaN;
// Beyond this argument the Hankel series reaches double precision within 20 terms.
constexpr double kAsymptotic = 30;

// sum_k a_k(nu) / x^k with a_k(nu) = prod_{j <= k} (4 nu^2 - (2j - 1)^2) / (8 j): the Hankel
// expansion of e^x K_nu(x) sqrt(2x / pi).
double hankel_series(double nu, double x) {
  const double mu = 4 * nu * nu;
  double term = 1, sum = 1;
  for (int j = 1; j < 60; ++j) {
    const double odd = 2.0 * j - 1;
    term *= (mu - odd * odd) / (8.0 * j * x);
    sum += term;
    if (std::fabs(term) < 1e-17 * std::fabs(sum)) break;
  }
  return sum;
}

// e^x K_nu(x): infinite at 0, NaN below
double scaled_k(double nu, double x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return kInf;
  if (x < kAsymptotic) return std::exp(x) * std::cyl_bessel_k(nu, x);
  return hankel_series(nu, x) * std::sqrt(kPi / (2 * x));
}
double modified_k(double nu, double x) {
  if (x >= kAsymptotic) return scaled_k(nu, x) * std::exp(-x);
  return std::isnan(x) || x <= 0 ? scaled_k(nu, x) : std::cyl_bessel_k(nu, x);
}
double k0(double x) { return modified_k(0, x); }
double k1(double x) { return modified_k(1, x); }
double k0e(double x) { return scaled_k(0, x); }
double k1e(double x) { return scaled_k(1, x); }

// J_0 (even) and J_1 (odd); both vanish at infinity
double bessel_j(double nu, double x) {
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return 0;
  const double v = std::cyl_bessel_j(nu, std::fabs(x));
  return nu == 0 || x >= 0 ? v : -v;
}
double j0(double x) { return bessel_j(0, x); }
double j1(double x) { return bessel_j(1, x); }
// Y_0, Y_1: -inf at 0, NaN below
double bessel_y(double nu, double x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return -kInf;
  if (std::isinf(x)) return 0;
  return std::cyl_neumann(nu, x);
}
double y0(double x) { return bessel_y(0, x); }
double y1(double x) { return bessel_y(1, x); }

// sin(x) / x, by its Taylor series near 0
double spherical_j0(double x) {
  if (std::isinf(x)) return 0;
  if (std::fabs(x) >= 0.5) return std::sin(x) / x;
  double term = 1, sum = 1;
  for (int k = 1; k <= 8; ++k) {
    term *= -x * x / ((2.0 * k) * (2.0 * k + 1));
    sum += term;
  }
  return sum;
}

double airy_ai(double x) {
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return 0;
  if (std::fabs(x) <= 2) {
    // Ai(x) = Ai(0) f(x) + Ai'(0) g(x), f = sum 3^k (1/3)_k x^3k / (3k)!, g = sum 3^k (2/3)_k x^(3k+1) / (3k+1)!
    const double ai0 = 1 / (std::cbrt(9.0) * std::tgamma(2.0 / 3)), dai0 = -1 / (std::cbrt(3.0) * std::tgamma(1.0 / 3));
    const double x3 = x * x * x;
    double f = 1, g = x, tf = 1, tg = x;
    for (int k = 0; k < 40; ++k) {
      tf *= x3 / ((3.0 * k + 2) * (3.0 * k + 3));
      tg *= x3 / ((3.0 * k + 3) * (3.0 * k + 4));
      f += tf;
      g += tg;
      if (std::fabs(tf) < 1e-17 * std::fabs(f) && std::fabs(tg) <= 1e-17 * std::fabs(g)) break;
    }
    return ai0 * f + dai0 * g;
  }
  const double z = std::fabs(x), zeta = 2.0 / 3 * z * std::sqrt(z);
  if (x > 0) {
    // Ai(x) = sqrt(x / 3) / pi K_{1/3}(zeta)
    const double k = zeta < kAsymptotic ? std::cyl_bessel_k(1.0 / 3, zeta)
                                        : hankel_series(1.0 / 3, zeta) * std::sqrt(kPi / (2 * zeta)) * std::exp(-zeta);
    return std::sqrt(z / 3) / kPi * k;
  }
  // Ai(-z) = sqrt(z) / 2 (J_{1/3}(zeta) - Y_{1/3}(zeta) / sqrt(3))
  return std::sqrt(z) / 2 * (std::cyl_bessel_j(1.0 / 3, zeta) - std::cyl_neumann(1.0 / 3, zeta) / std::numbers::sqrt3);
}

// e^(x^2), with the rounding error of x^2 folded in (it would cost x^2 * 2^-53 relative)
double exp_square(double x) {
  const double hi = x * x, lo = std::fma(x, x, -hi);
  if (hi > 710) return kInf;  // e^(x^2) overflows (and lo, of x^2's size, must not flip its sign)
  return std::exp(hi) * (1 + lo);
}
// e^(x^2) erfc(x)
double erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x < 0) return 2 * exp_square(x) - erfcx(-x);
  if (x < 26) return exp_square(x) * std::erfc(x);
  if (std::isinf(x)) return 0;
  // sqrt(pi) erfcx(x) = 1 / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))), evaluated from the inside
  double t = x;
  for (int k = 40; k >= 1; --k) t = x + 0.5 * k / t;
  return std::numbers::inv_sqrtpi / t;
}

// log of the standard normal CDF: through the upper tail's complement above 0, erfc below, and
// erfcx where erfc would underflow
double log_ndtr(double x) {
  if (std::isnan(x)) return x;
  const double t = x * std::numbers::sqrt2 / 2;
  if (x > 0) return std::log1p(-0.5 * std::erfc(t));
  if (x > -20) return std::log(0.5 * std::erfc(-t));
  return std::log(0.5 * erfcx(-t)) - 0.5 * x * x;
}

// The standard normal density.
double normal_pdf(double x) { return std::exp(-0.5 * x * x) * std::numbers::inv_sqrtpi / std::numbers::sqrt2; }

// The standard normal quantile. Within [1/4, 3/4]: Newton's method on erf(x / sqrt 2) / 2 = p - 1/2
// (p - 1/2 is exact there, and erf keeps the relative precision of results near 0). Outside:
// Abramowitz and Stegun 26.2.23 (error below 4.5e-4) for the lower tail, refined by Newton's
// method on the CDF (as erfc / 2, which keeps the tail's relative precision); the upper tail by
// symmetry.
double ndtri(double p) {
  if (std::isnan(p) || p < 0 || p > 1) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  const double d = p - 0.5;
  if (std::fabs(d) <= 0.25) {
    double x = d * std::sqrt(2 * kPi);
    for (int i = 0; i < 8; ++i) {
      const double step = (0.5 * std::erf(x * std::numbers::sqrt2 / 2) - d) / normal_pdf(x);
      x -= step;
      if (std::fabs(step) <= 1e-17 * std::fabs(x)) break;
    }
    return x;
  }
  const bool upper = p > 0.5;
  const double q = upper ? 1 - p : p;  // exact for p > 1/2
  const double t = std::sqrt(-2 * std::log(q));
  double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  for (int i = 0; i < 8; ++i) {
    const double step = (0.5 * std::erfc(-x * std::numbers::sqrt2 / 2) - q) / normal_pdf(x);
    x -= step;
    if (std::fabs(step) <= 1e-16 * std::fabs(x)) break;
  }
  return upper ? -x : x;
}

// zeta(x, q) = sum_k (q + k)^-x: infinite at x = 1 and at q = 0, -1, ...; NaN for x < 1 and
// where (q + k)^-x is not real (q < 0 with x not an integer)
double zeta(double x, double q) {
  if (x == 1) return kInf;
  if (x < 1) return kNaN;
  if (q <= 0) {
    if (q == std::floor(q)) return kInf;
    if (x != std::floor(x)) return kNaN;
  }
  return special_math::hurwitz_zeta(x, q);
}

// The degree argument: truncated toward zero, -1 (the result 0) when negative or NaN.
int64_t degree(double n) {
  if (!(n >= 0)) return -1;
  return n >= 9.2e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(n);
}

// p_n(x) from p_0, p_1 and the recurrence p_{k+1} = next(k, p_k, p_{k-1}); stops once the value
// is no longer finite (it stays so).
template <class Next>
double recurrence(int64_t n, double p0, double p1, Next next) {
  if (n < 0) return 0;
  if (n == 0) return p0;
  double p = p0, q = p1;
  for (int64_t k = 1; k < n && std::isfinite(q); ++k) {
    const double r = next(k, q, p);
    p = q;
    q = r;
  }
  return q;
}

// The Chebyshev polynomials of the four kinds: T_n(cos t) = cos(n t), U_n(cos t) = sin((n+1) t) /
// sin t, V_n(cos t) = cos((n+1/2) t) / cos(t/2), W_n(cos t) = sin((n+1/2) t) / sin(t/2), by these
// closed forms inside (-1, 1) past degree 6 (T, and the shifted kinds) or 8 (U, V, W): PyTorch's
// thresholds, so that exact zeros of the low degrees stay exact; by the recurrence
// p_{k+1} = 2x p_k - p_{k-1} elsewhere.
enum class ChebyshevKind { T, U, V, W };
template <ChebyshevKind kind, int64_t closed_form_above = kind == ChebyshevKind::T ? 6 : 8>
double chebyshev(double x, double n_arg) {
  const int64_t n = degree(n_arg);
  if (n < 0) return 0;
  if (n > closed_form_above && std::fabs(x) < 1) {
    const double t = std::acos(x), m = static_cast<double>(n);
    switch (kind) {
      case ChebyshevKind::T: return std::cos(m * t);
      case ChebyshevKind::U: return std::sin((m + 1) * t) / std::sin(t);
      case ChebyshevKind::V: return std::cos((m + 0.5) * t) / std::cos(t / 2);
      case ChebyshevKind::W: return std::sin((m + 0.5) * t) / std::sin(t / 2);
    }
  }
  const double p1 = kind == ChebyshevKind::T   ? x
                    : kind == ChebyshevKind::U ? 2 * x
                    : kind == ChebyshevKind::V ? 2 * x - 1
                                               : 2 * x + 1;
  return recurrence(n, 1.0, p1, [x](int64_t, double q, double p) { return 2 * x * q - p; });
}
template <ChebyshevKind kind>
double shifted_chebyshev(double x, double n) {
  return chebyshev<kind, 6>(2 * x - 1, n);
}
// physicists' Hermite: H_{k+1} = 2x H_k - 2k H_{k-1}
double hermite_h(double x, double n) {
  return recurrence(degree(n), 1.0, 2 * x, [x](int64_t k, double q, double p) { return 2 * x * q - 2.0 * k * p; });
}
// probabilists' Hermite: He_{k+1} = x He_k - k He_{k-1}
double hermite_he(double x, double n) {
  return recurrence(degree(n), 1.0, x, [x](int64_t k, double q, double p) { return x * q - k * p; });
}
// Laguerre: (k+1) L_{k+1} = (2k+1-x) L_k - k L_{k-1}
double laguerre_l(double x, double n) {
  return recurrence(degree(n), 1.0, 1 - x,
                    [x](int64_t k, double q, double p) { return ((2.0 * k + 1 - x) * q - k * p) / (k + 1.0); });
}
// Legendre: (k+1) P_{k+1} = (2k+1) x P_k - k P_{k-1}
double legendre_p(double x, double n) {
  return recurrence(degree(n), 1.0, x,
                    [x](int64_t k, double q, double p) { return ((2.0 * k + 1) * x * q - k * p) / (k + 1.0); });
}

// A defined tensor of a real dtype: PyTorch's kernels have no complex form (its message names the
// kernel, the function's name without "special_").
void check_input(const char* name, const Tensor& t) {
  EMBER_CHECK(t.defined(), name, "expected a defined tensor");
  EMBER_CHECK(!is_complex_type(t.dtype()), name, "\"", name + 8, "_cpu\" not implemented for '", t.dtype(), "'");
}

// Functions without a derivative in PyTorch: results never require grad.
#define EMBER_NONDIFF_UNARY(X)                          \
  X(airy_ai, airy_ai)                                   \
  X(bessel_j0, j0)                                      \
  X(bessel_j1, j1)                                      \
  X(bessel_y0, y0)                                      \
  X(bessel_y1, y1)                                      \
  X(modified_bessel_k0, k0)                             \
  X(modified_bessel_k1, k1)                             \
  X(scaled_modified_bessel_k0, k0e)                     \
  X(scaled_modified_bessel_k1, k1e)                     \
  X(spherical_bessel_j0, spherical_j0)

#define EMBER_DEFINE_NONDIFF_UNARY(fn, scalar)        \
  struct fn##_op {                                    \
    static constexpr const char* name = "special_" #fn; \
    static constexpr bool differentiable = false;     \
    static Tensor run(const Tensor& x) {              \
      check_input(name, x);                         \
      return map_unary(x, scalar);                    \
    }                                                 \
  };
EMBER_NONDIFF_UNARY(EMBER_DEFINE_NONDIFF_UNARY)
#undef EMBER_DEFINE_NONDIFF_UNARY

#define EMBER_POLYNOMIALS(X)                                           \
  X(chebyshev_polynomial_t, chebyshev<ChebyshevKind::T>)                        \
  X(chebyshev_polynomial_u, chebyshev<ChebyshevKind::U>)                        \
  X(chebyshev_polynomial_v, chebyshev<ChebyshevKind::V>)                        \
  X(chebyshev_polynomial_w, chebyshev<ChebyshevKind::W>)                        \
  X(shifted_chebyshev_polynomial_t, shifted_chebyshev<ChebyshevKind::T>)        \
  X(shifted_chebyshev_polynomial_u, shifted_chebyshev<ChebyshevKind::U>)        \
  X(shifted_chebyshev_polynomial_v, shifted_chebyshev<ChebyshevKind::V>)        \
  X(shifted_chebyshev_polynomial_w, shifted_chebyshev<ChebyshevKind::W>)        \
  X(hermite_polynomial_h, hermite_h)                                   \
  X(hermite_polynomial_he, hermite_he)                                 \
  X(laguerre_polynomial_l, laguerre_l)                                 \
  X(legendre_polynomial_p, legendre_p)

#define EMBER_DEFINE_POLYNOMIAL(fn, scalar)             \
  struct fn##_op {                                      \
    static constexpr const char* name = "special_" #fn; \
    static constexpr bool differentiable = false;       \
    static Tensor run(const Tensor& x, const Tensor& n) { \
      check_input(name, x);                           \
      check_input(name, n);                           \
      return map_binary(name, x, n, scalar);            \
    }                                                   \
  };
EMBER_POLYNOMIALS(EMBER_DEFINE_POLYNOMIAL)
#undef EMBER_DEFINE_POLYNOMIAL

// A Scalar operand becomes a 0-dim tensor of the other operand's floating type, as a wrapped
// number does in PyTorch's type promotion.
Tensor wrapped(const Scalar& s, const Tensor& other) {
  return scalar_tensor(s, special_math::float_result(other.dtype()));
}

// A unary function with PyTorch's derivative, given as a formula of (grad, x, result): its values
// by the vectorized kernel (kernel: a SpecialOp) or elementwise in double (scalar: a function).
#define EMBER_DIFF_UNARY(X)                                                                        \
  X(i0e, I0e, "SpecialI0EBackward0", c.grad() * (special_i1e(x) - sgn(x) * r))                     \
  X(i1, I1, "SpecialI1Backward0", c.grad() * where(x == 0, 0.5, special_i0(x) - r / x))           \
  X(i1e, I1e, "SpecialI1EBackward0", c.grad() * where(x == 0, 0.5, special_i0e(x) - r * (sgn(x) + x.reciprocal()))) \
  X(ndtri, ndtri, "SpecialNdtriBackward0", c.grad() * std::sqrt(2 * kPi) * (r * r * 0.5).exp())    \
  X(log_ndtr, log_ndtr, "SpecialLogNdtrBackward0", c.grad() / std::sqrt(2 * kPi) * (-(r + x * x * 0.5)).exp()) \
  X(erfcx, erfcx, "SpecialErfcxBackward0", c.grad() * (x * r * 2 - 2 * std::numbers::inv_sqrtpi))

Tensor map_values(const char* name, const Tensor& x, double (*scalar)(double)) { return map_unary(x, scalar); }
Tensor map_values(const char* name, const Tensor& x, kernels::SpecialOp op) { return special_math::map_kernel(name, x, op); }
using enum kernels::SpecialOp;

#define EMBER_DEFINE_DIFF_UNARY(fn, values, node, formula)                                         \
  struct fn##_op {                                                                                 \
    static constexpr const char* name = "special_" #fn;                                            \
    static Tensor run(const Tensor& x) {                                                           \
      check_input(name, x);                                                                        \
      return map_values(name, x, values);                                                          \
    }                                                                                              \
    static void derivative(autograd::Derivative& d, const Tensor& self) {                          \
      d.name(node);                                                                                \
      d.grad(self, [s = d.save(self), res = d.save_result()](const auto& c) {                      \
        const Tensor x = c[s], r = c[res];                                                         \
        return formula;                                                                            \
      });                                                                                          \
    }                                                                                              \
  };
EMBER_DIFF_UNARY(EMBER_DEFINE_DIFF_UNARY)
#undef EMBER_DEFINE_DIFF_UNARY

// I_0 and I_1 as modified_bessel_i0/i1: PyTorch does not differentiate these spellings.
template <kernels::SpecialOp op, const char* op_name>
struct ModifiedBesselIOp {
  static constexpr const char* name = op_name;
  static constexpr bool differentiable = false;
  static Tensor run(const Tensor& x) {
    check_input(name, x);
    return special_math::map_kernel(name, x, op);
  }
};
constexpr char kModifiedBesselI0[] = "special_modified_bessel_i0", kModifiedBesselI1[] = "special_modified_bessel_i1";

struct ZetaOp {
  static constexpr const char* name = "special_zeta";
  static Tensor run(const Tensor& self, const Tensor& other) {
    check_input(name, self);
    check_input(name, other);
    return map_binary(name, self, other, zeta);
  }
  // SpecialZetaBackward0 -- self: not_implemented; other: grad * -self * special_zeta(self + 1., other)
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& other) {
    d.name("SpecialZetaBackward0");
    d.grad(self, [](const auto&) -> Tensor {
      EMBER_CHECK(false, name, "the derivative for '", name, ": self' is not implemented.");
      return {};
    });
    d.grad(other, [s = d.save_for(other, self), o = d.save_for(other, other)](const auto& c) {
      return c.grad() * -c[s] * special_zeta(c[s] + 1.0, c[o]);
    });
  }
};

}  // namespace

Tensor special_math::map_kernel(const char* name, const Tensor& self, kernels::SpecialOp op) {
  const Tensor out;  // the config refers to its operands: they must outlive the iterator's construction
  TensorIteratorConfig config(name);
  config.add_output(out).add_input(self).promote_integer_inputs_to_float();
  TensorIterator iter(config);
  kernels::special_kernel(iter, op);
  return iter.take_output();
}

#define EMBER_CALL_UNARY(fn, ...) \
  Tensor special_##fn(const Tensor& self) { return dispatch::call<fn##_op>(self); }
EMBER_NONDIFF_UNARY(EMBER_CALL_UNARY)
EMBER_DIFF_UNARY(EMBER_CALL_UNARY)
#undef EMBER_CALL_UNARY
Tensor special_modified_bessel_i0(const Tensor& self) { return dispatch::call<ModifiedBesselIOp<I0, kModifiedBesselI0>>(self); }
Tensor special_modified_bessel_i1(const Tensor& self) { return dispatch::call<ModifiedBesselIOp<I1, kModifiedBesselI1>>(self); }

#define EMBER_CALL_POLYNOMIAL(fn, scalar)                                                                  \
  Tensor special_##fn(const Tensor& x, const Tensor& n) { return dispatch::call<fn##_op>(x, n); }          \
  Tensor special_##fn(const Scalar& x, const Tensor& n) { return dispatch::call<fn##_op>(wrapped(x, n), n); } \
  Tensor special_##fn(const Tensor& x, const Scalar& n) { return dispatch::call<fn##_op>(x, wrapped(n, x)); }
EMBER_POLYNOMIALS(EMBER_CALL_POLYNOMIAL)
#undef EMBER_CALL_POLYNOMIAL

Tensor special_zeta(const Tensor& self, const Tensor& other) { return dispatch::call<ZetaOp>(self, other); }
Tensor special_zeta(const Scalar& self, const Tensor& other) { return special_zeta(wrapped(self, other), other); }
Tensor special_zeta(const Tensor& self, const Scalar& other) { return special_zeta(self, wrapped(other, self)); }

}  // namespace ember
