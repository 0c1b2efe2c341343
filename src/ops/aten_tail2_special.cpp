// Special functions of libtorch's ATen (issue 26, round 2): lgamma, digamma, polygamma, i0,
// igamma and igammac, each an op struct whose derivative is PyTorch's (derivatives.yaml); mvlgamma
// is composed from lgamma. digamma (and polygamma(0, x)) is the vectorized pointwise kernel
// UnaryOp::Digamma, polygamma(1, x) UnaryOp::Trigamma, lgamma and i0 the vectorized kernels of
// kernels/cpu/special.h; the others run elementwise in double precision (float inputs are widened,
// then rounded once). The numerics are textbook: the Hurwitz zeta by Euler-Maclaurin
// summation, the incomplete gamma by its power series below x = a + 1 and by a Lentz continued
// fraction above.
#include <cmath>
#include <limits>
#include <numbers>

#include "dispatch/dispatch.h"
#include "ember/aten_tail.h"
#include "ember/aten_tail2.h"
#include "ember/factory.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/shape.h"
#include "ember/special.h"
#include "ops/pointwise_util.h"
#include "special_math.h"
#include "ops/op_util.h"

namespace ember {
namespace {

using op_util::kPi;
using op_util::kInf;
using op_util::kNaN;

}  // namespace

// Hurwitz zeta(s, q) = sum_k (q + k)^-s for s > 1: the first terms summed directly until
// q + k > 9 (at least 9 of them), the rest by Euler-Maclaurin with Bernoulli numbers B_2..B_24.
double special_math::hurwitz_zeta(double s, double q) {
  if (q <= 0 && q == std::floor(q)) return kInf;
  static constexpr double kB2j[] = {1.0 / 6,         -1.0 / 30,        1.0 / 42,      -1.0 / 30,
                                    5.0 / 66,        -691.0 / 2730,    7.0 / 6,       -3617.0 / 510,
                                    43867.0 / 798,   -174611.0 / 330,  854513.0 / 138, -236364091.0 / 2730};
  double sum = 0;
  int k = 0;
  double a = q;
  while (k < 9 || a <= 9) {
    const double t = std::pow(a, -s);
    sum += t;
    if (k >= 9 && std::fabs(t) < std::fabs(sum) * 1e-17) return sum;
    a += 1;
    ++k;
  }
  // tail: a^(1-s)/(s-1) + a^-s/2 + sum_j B_2j/(2j)! * s(s+1)...(s+2j-2) a^(-s-2j+1)
  double tail = std::pow(a, 1 - s) / (s - 1) + 0.5 * std::pow(a, -s);
  double rising = s;                    // s (s+1) ... (s + 2j - 2)
  double factorial = 2;                 // (2j)!
  double power = std::pow(a, -s - 1);   // a^(-s-2j+1)
  for (int j = 1; j <= 12; ++j) {
    const double term = kB2j[j - 1] / factorial * rising * power;
    tail += term;
    if (std::fabs(term) < std::fabs(sum + tail) * 1e-17) break;
    rising *= (s + 2 * j - 1) * (s + 2 * j);
    factorial *= (2 * j + 1) * (2 * j + 2);
    power /= a * a;
  }
  return sum + tail;
}


namespace {
using special_math::hurwitz_zeta;
using special_math::map_binary;
using special_math::map_unary;

double polygamma_scalar(int64_t n, double x) {  // n >= 2: (-1)^(n+1) n! zeta(n + 1, x)
  const double sign = n % 2 == 1 ? 1.0 : -1.0;
  return sign * std::exp(std::lgamma(static_cast<double>(n) + 1)) * hurwitz_zeta(static_cast<double>(n) + 1, x);
}

// x^a e^-x / Gamma(a), in log space.
double gamma_prefactor(double a, double x) { return std::exp(a * std::log(x) - x - std::lgamma(a)); }
double igamma_series(double a, double x) {
  double term = 1 / a, sum = term, ap = a;
  for (int n = 0; n < 100000; ++n) {
    ap += 1;
    term *= x / ap;
    sum += term;
    if (std::fabs(term) < std::fabs(sum) * 1e-17) break;
  }
  return sum * gamma_prefactor(a, x);
}
double igammac_fraction(double a, double x) {
  constexpr double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < 1e-16) break;
  }
  return gamma_prefactor(a, x) * h;
}
// P(a, x) when lower, else Q(a, x); PyTorch's special values at the domain's edges.
double incomplete_gamma(double a, double x, bool lower) {
  // PyTorch's order of the special cases: x = 0 wins over a NaN a
  if (std::isnan(x) || a < 0 || x < 0) return kNaN;
  if (a == 0) return x > 0 ? (lower ? 1.0 : 0.0) : kNaN;
  if (x == 0) return lower ? 0.0 : 1.0;
  if (std::isnan(a)) return kNaN;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : (lower ? 0.0 : 1.0);
  if (std::isinf(x)) return lower ? 1.0 : 0.0;
  if (x < a + 1) {
    const double p = igamma_series(a, x);
    return lower ? p : 1 - p;
  }
  const double q = igammac_fraction(a, x);
  return lower ? 1 - q : q;
}

// dx/dalpha of a Gamma(alpha, 1) sample x held at its quantile (the reparameterized gradient
// PyTorch's _standard_gamma_grad approximates by fitted formulas): -(dP/dalpha)(alpha, x) divided by
// the density x^(alpha-1) e^-x / Gamma(alpha). dP/dalpha by central differences of the smaller
// tail (P, or Q = 1 - P, so that nothing cancels) with one Richardson step, the step a thousandth
// of the scale on which P varies with alpha (alpha below 1, sqrt(alpha) above, 1/|log x| for
// extreme x): about 1e-10 relative.
double gamma_sample_slope(double a, double x) {
  if (std::isnan(a) || std::isnan(x) || !(a > 0) || x < 0 || std::isinf(a) || std::isinf(x)) return kNaN;
  if (x == 0) return 0;
  const double log_x = std::log(x);
  const double h = 1e-3 * std::min(a < 1 ? a : std::sqrt(a), 1 / std::max(1.0, std::fabs(log_x)));
  const bool lower = incomplete_gamma(a, x, true) <= 0.5;
  auto slope = [&](double step) {
    return (incomplete_gamma(a + step, x, lower) - incomplete_gamma(a - step, x, lower)) / (2 * step);
  };
  const double tail_slope = (4 * slope(h / 2) - slope(h)) / 3;
  const double dp = lower ? tail_slope : -tail_slope;
  return -dp * std::exp(std::lgamma(a) + x - (a - 1) * log_x);
}

void check_defined(const char* name, const Tensor& t) { EMBER_CHECK(t.defined(), name, "expected a defined tensor"); }
void check_not_bool(const char* name, const Tensor& t) {
  EMBER_CHECK(t.dtype() != kBool, name, "\"", name, "\" not implemented for 'Bool'");
}

struct LgammaOp {
  static constexpr const char* name = "lgamma";
  static Tensor run(const Tensor& self) {
    check_defined(name, self);
    special_math::check_real(name, "lgamma_vml_cpu", self);
    return special_math::map_kernel(name, self, kernels::SpecialOp::Lgamma);
  }
  // LgammaBackward0 -- self: grad * digamma(self)
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    d.name("LgammaBackward0");
    d.grad(self, [s = d.save(self)](const auto& c) { return c.grad() * digamma(c[s]); });
  }
};
struct DigammaOp {
  static constexpr const char* name = "digamma";
  static Tensor run(const Tensor& self) {
    check_defined(name, self);
    special_math::check_real(name, "digamma", self);
    return pointwise::unary_into(name, Tensor(), self, kernels::UnaryOp::Digamma, {}, false, {.int_to_float = true});
  }
  // DigammaBackward0 -- self: grad * polygamma(1, self)
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    d.name("DigammaBackward0");
    d.grad(self, [s = d.save(self)](const auto& c) { return c.grad() * polygamma(1, c[s]); });
  }
};
struct PolygammaOp {
  static constexpr const char* name = "polygamma";
  static Tensor run(int64_t n, const Tensor& self) {
    check_defined(name, self);
    EMBER_CHECK(n >= 0, name, "polygamma(n, x) does not support negative n.");
    if (n == 0) return DigammaOp::run(self);
    special_math::check_real(name, n == 1 ? "trigamma" : "polygamma", self);
    if (n == 1) {
      return pointwise::unary_into(name, Tensor(), self, kernels::UnaryOp::Trigamma, {}, false, {.int_to_float = true});
    }
    return map_unary(self, [n](double v) { return polygamma_scalar(n, v); });
  }
  // PolygammaBackward0 -- self: grad * polygamma(n + 1, self)
  static void derivative(autograd::Derivative& d, int64_t n, const Tensor& self) {
    d.name("PolygammaBackward0");
    d.grad(self, [s = d.save(self), n](const auto& c) { return c.grad() * polygamma(n + 1, c[s]); });
  }
};
struct I0Op {
  static constexpr const char* name = "i0";
  static Tensor run(const Tensor& self) {
    check_defined(name, self);
    check_not_bool(name, self);
    special_math::check_real(name, "i0_vml_cpu", self);
    return special_math::map_kernel(name, self, kernels::SpecialOp::I0);
  }
  // I0Backward0 -- self: grad * special_i1(self)
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    d.name("I0Backward0");
    d.grad(self, [s = d.save(self)](const auto& c) { return c.grad() * special_i1(c[s]); });
  }
};
template <bool Lower>
struct IncompleteGammaOp {
  static constexpr const char* name = Lower ? "igamma" : "igammac";
  static Tensor run(const Tensor& self, const Tensor& other) {
    check_defined(name, self);
    check_defined(name, other);
    check_not_bool(name, self);
    check_not_bool(name, other);
    special_math::check_real(name, Lower ? "igamma_cpu" : "igammac_cpu", self);
    special_math::check_real(name, Lower ? "igamma_cpu" : "igammac_cpu", other);
    return map_binary(name, self, other, [](double a, double x) { return incomplete_gamma(a, x, Lower); });
  }
  // IgammaBackward0 -- self: not_implemented; other: grad * exp((self - 1) * log(other) - other - lgamma(self))
  // (IgammacBackward0: its negative)
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& other) {
    d.name(Lower ? "IgammaBackward0" : "IgammacBackward0");
    d.grad(self, [](const auto&) -> Tensor {
      EMBER_CHECK(false, name, "the derivative for '", name, ": input' is not implemented.");
      return {};
    });
    d.grad(other, [s = d.save_for(other, self), o = d.save_for(other, other)](const auto& c) {
      const Tensor a = c[s], x = c[o];
      const Tensor density = ((a - 1) * log(x) - x - lgamma(a)).exp();
      return Lower ? c.grad() * density : -c.grad() * density;
    });
  }
};

struct StandardGammaGradOp {
  static constexpr const char* name = "_standard_gamma_grad";
  static Tensor run(const Tensor& self, const Tensor& output) {
    check_defined(name, self);
    check_defined(name, output);
    for (const Tensor* t : {&self, &output})
      EMBER_CHECK(t->dtype() == kFloat || t->dtype() == kDouble, name,
                  "\"_standard_gamma_grad_cpu\" not implemented for '", t->dtype(), "'");
    return map_binary(name, self, output, gamma_sample_slope);
  }
  // StandardGammaGradBackward0 -- self: not_implemented("_standard_gamma_grad")
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& /*output*/) {
    d.name("StandardGammaGradBackward0");
    d.grad(self, [](const auto&) -> Tensor {
      EMBER_CHECK(false, name, "the derivative for '_standard_gamma_grad' is not implemented.");
      return {};
    });
  }
};

}  // namespace

Tensor lgamma(const Tensor& self) { return dispatch::call<LgammaOp>(self); }
Tensor _standard_gamma_grad(const Tensor& self, const Tensor& output) {
  return dispatch::call<StandardGammaGradOp>(self, output);
}
Tensor digamma(const Tensor& self) { return dispatch::call<DigammaOp>(self); }
Tensor polygamma(int64_t n, const Tensor& self) { return dispatch::call<PolygammaOp>(n, self); }
Tensor i0(const Tensor& self) { return dispatch::call<I0Op>(self); }
Tensor igamma(const Tensor& self, const Tensor& other) { return dispatch::call<IncompleteGammaOp<true>>(self, other); }
Tensor igammac(const Tensor& self, const Tensor& other) { return dispatch::call<IncompleteGammaOp<false>>(self, other); }

// sum_i lgamma(x - i/2) + p (p - 1) / 4 log(pi), defined where every x > (p - 1) / 2.
Tensor mvlgamma(const Tensor& self, int64_t p) {
  EMBER_CHECK(p >= 1, "mvlgamma", "p has to be greater than or equal to 1");
  special_math::check_real("mvlgamma", "arange_cpu", self);  // libtorch's fails making its steps in self's dtype
  const Tensor x = is_floating_type(self.dtype()) ? self : self.to(get_default_dtype());
  EMBER_CHECK(x.numel() == 0 || x.detach().gt((static_cast<double>(p) - 1) / 2).all().item<bool>(), "mvlgamma",
              "All elements must be greater than (p-1)/2");
  const Tensor steps = arange(0, p, TensorOptions().dtype(x.dtype())).mul(-0.5);
  return lgamma(x.unsqueeze(-1) + steps).sum({-1}) + static_cast<double>(p * (p - 1)) / 4 * std::log(kPi);
}

namespace {
// The in-place form: the result written back into self, whose dtype must hold it.
using op_util::operand;
using op_util::write_back;
// A binary in-place op's self: a copy when the formula of other's gradient saves it.
Tensor operand(const Tensor& self, const Tensor& other) {
  return self.requires_grad() || other.requires_grad() ? self.clone() : self;
}
}  // namespace

Tensor& i0_(Tensor& self) { return write_back("i0_", self, i0(operand(self))); }
Tensor Tensor::lgamma() const { return ember::lgamma(*this); }
Tensor& Tensor::lgamma_() const {
  return write_back("lgamma_", mutable_self(), ember::lgamma(operand(mutable_self())));
}
Tensor Tensor::digamma() const { return ember::digamma(*this); }
Tensor& Tensor::digamma_() const {
  return write_back("digamma_", mutable_self(), ember::digamma(operand(mutable_self())));
}
Tensor Tensor::polygamma(int64_t n) const { return ember::polygamma(n, *this); }
Tensor& Tensor::polygamma_(int64_t n) const {
  return write_back("polygamma_", mutable_self(), ember::polygamma(n, operand(mutable_self())));
}
Tensor Tensor::mvlgamma(int64_t p) const { return ember::mvlgamma(*this, p); }
Tensor& Tensor::mvlgamma_(int64_t p) const {
  return write_back("mvlgamma_", mutable_self(), ember::mvlgamma(operand(mutable_self()), p));
}
Tensor Tensor::i0() const { return ember::i0(*this); }
Tensor& Tensor::i0_() const { return ember::i0_(mutable_self()); }
Tensor Tensor::igamma(const Tensor& other) const { return ember::igamma(*this, other); }
Tensor& Tensor::igamma_(const Tensor& other) const {
  return write_back("igamma_", mutable_self(), ember::igamma(operand(mutable_self(), other), other));
}
Tensor Tensor::igammac(const Tensor& other) const { return ember::igammac(*this, other); }
Tensor& Tensor::igammac_(const Tensor& other) const {
  return write_back("igammac_", mutable_self(), ember::igammac(operand(mutable_self(), other), other));
}

}  // namespace ember
