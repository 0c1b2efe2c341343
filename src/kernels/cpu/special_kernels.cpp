// Special functions on float vectors, compiled for each SIMD target Highway selects at run time.
// Float32 lanes compute in float64 and round once (via_f64), so their results are as good as
// correctly rounded; float64 data take the float64 forms where those are accurate to a few ulp
// (the Bessel functions), and the C library lane by lane where libtorch's result is libm's
// (lgamma).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/special_kernels.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include "kernels/cpu/hwy_util-inl.h"
#include "kernels/cpu/pointwise_vec-inl.h"
#include "kernels/cpu/pointwise_functors-inl.h"
#include "kernels/cpu/special.h"

#ifndef EMBER_KERNELS_SPECIAL_COEFFICIENTS_
#define EMBER_KERNELS_SPECIAL_COEFFICIENTS_
#include <array>
namespace ember::kernels::special_coefficients {
// Below kSeriesEnd, I_nu(a) = (a/2)^nu sum_k y^k / (k! (k + nu)!), y = a^2 / 4: 36 terms reach
// double precision there (all positive, so the sum is well conditioned). Beyond, the Hankel
// expansion e^-a I_nu(a) sqrt(2 pi a) = sum_k c_k a^-k, c_k = prod_{j <= k} -(4 nu^2 - (2j-1)^2)
// / (8 j), whose 28 terms are below 1e-17 of the sum from a = 20 on.
constexpr double kSeriesEnd = 20;
template <int nu>
constexpr std::array<double, 36> series() {
  std::array<double, 36> c{};
  double f = 1;
  for (int j = 1; j <= nu; ++j) f /= j;
  for (int k = 0; k < 36; ++k) {
    if (k > 0) f /= static_cast<double>(k) * (k + nu);
    c[k] = f;
  }
  return c;
}
template <int nu>
constexpr std::array<double, 28> hankel() {
  std::array<double, 28> c{};
  double t = 1;
  for (int k = 0; k < 28; ++k) {
    if (k > 0) t *= -(4.0 * nu * nu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k);
    c[k] = t;
  }
  return c;
}
}  // namespace ember::kernels::special_coefficients
#endif

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace {

// ---- lgamma ----
// On float64 vectors: for 0 < y < 8, the recurrence lgamma(y) = lgamma(y + 8) - log(y (y+1) ...
// (y+7)), the product a tree of independent multiplies; at y >= 8 Stirling's series to its
// y^-15 term (the next is below 1e-16 there). Negative x by reflection, lgamma(x) =
// log(pi / |sin(pi x)|) - lgamma(1 - x), with sin(pi x) taken at x - round(x) (exact); the
// recurrence's and the reflection's logarithms are one, log(pi prod / |sin|). (Stepping y + 1 until
// y >= 10, with a test of the whole vector per step, and three logarithms took 7 ns per float32
// element.) Taylor series near the zeros 1 and 2 (below). Zero and the negative integers are
// poles (+inf); lanes must be finite.
template <class D, class V>
HWY_INLINE V lgamma_f64(D d, V x) {
  const V zero = hn::Zero(d), one = hn::Set(d, 1.0), two = hn::Set(d, 2.0), half = hn::Set(d, 0.5);
  const V eight = hn::Set(d, 8.0), pi = hn::Set(d, 3.14159265358979323846);
  const auto neg = hn::Lt(x, zero);
  V y = hn::IfThenElse(neg, hn::Sub(one, x), x);
  V prod = one;
  const auto small = hn::Lt(y, eight);
  if (!hn::AllFalse(d, small)) {
    const V y2 = hn::Add(y, two), y4 = hn::Add(y, hn::Set(d, 4.0)), y6 = hn::Add(y, hn::Set(d, 6.0));
    const V p01 = hn::Mul(y, hn::Add(y, one)), p23 = hn::Mul(y2, hn::Add(y2, one));
    const V p45 = hn::Mul(y4, hn::Add(y4, one)), p67 = hn::Mul(y6, hn::Add(y6, one));
    prod = hn::IfThenElse(small, hn::Mul(hn::Mul(p01, p23), hn::Mul(p45, p67)), one);
    y = hn::IfThenElse(small, hn::Add(y, eight), y);
  }
  const V z = hn::Div(one, y), w = hn::Mul(z, z);
  V tail = hn::Set(d, -3617.0 / 122400);
  for (double c : {1.0 / 156, -691.0 / 360360, 1.0 / 1188, -1.0 / 1680, 1.0 / 1260, -1.0 / 360, 1.0 / 12})
    tail = hn::MulAdd(tail, w, hn::Set(d, c));
  const V stirling = hn::MulAdd(hn::Sub(y, half), log_f64_normal(d, y), hn::Sub(hn::MulAdd(tail, z, hn::Set(d, 0.91893853320467274178)), y));
  // x > 0: stirling - log(prod); x < 0: log(pi / s) - (stirling - log(prod)) = log(pi prod / s) - stirling
  V num = one, den = prod, res = stirling;
  auto pole = hn::Eq(x, zero);
  if (!hn::AllFalse(d, neg)) {
    const V s = hn::Abs(hn::Sin(d, hn::Mul(hn::Sub(x, hn::Round(x)), pi)));
    num = hn::IfThenElse(neg, hn::Mul(pi, prod), one);
    den = hn::IfThenElse(neg, s, prod);
    res = hn::IfThenElse(neg, hn::Neg(stirling), stirling);
    pole = hn::Or(pole, hn::And(neg, hn::Eq(s, zero)));
  }
  res = hn::Add(res, log_f64_normal(d, hn::Div(num, den)));
  // Near the zeros at 1 and 2 that result is the difference of two values near 10 (1.3 float32
  // ulp off at 1 - 2^-24). Within 1/16 of them, the Taylor series in t = x - 1 (or x - 2):
  // lgamma(1 + t) = -gamma t + sum_k>=2 (-1)^k zeta(k) / k t^k and lgamma(2 + t) = (1 - gamma) t +
  // sum_k>=2 (-1)^k (zeta(k) - 1) / k t^k, to k = 14 (the rest below 2e-18 of the result);
  // exactly 0 at 1 and 2.
  const V t1 = hn::Sub(x, one), t2 = hn::Sub(x, two), window = hn::Set(d, 0.0625);
  const auto near1 = hn::Lt(hn::Abs(t1), window), near = hn::Or(near1, hn::Lt(hn::Abs(t2), window));
  if (!hn::AllFalse(d, near)) {
    static constexpr double kAt1[14] = {
        -0.57721566490153286061, 0.82246703342411322,  -0.40068563438653143, 0.27058080842778455,
        -0.20738555102867399,    0.16955717699740819,  -0.14404989676884612, 0.12550966952474304,
        -0.11133426586956469,    0.10009945751278181,  -0.090954017145829042, 0.083353840546109004,
        -0.076932516411352191,   0.071432946295361336};
    static constexpr double kAt2[14] = {
        0.42278433509846713939, 0.32246703342411322,    -0.067352301053198095, 0.020580808427784548,
        -0.0073855510286739853, 0.0028905103307415233,  -0.001192753911703261, 0.00050966952474304242,
        -0.00022315475845357938, 9.9457512781808534e-5, -4.4926236738133142e-5, 2.0507212775670692e-5,
        -9.4394882752683959e-6, 4.3748667899074878e-6};
    const V t = hn::IfThenElse(near1, t1, t2);
    V series = hn::IfThenElse(near1, hn::Set(d, kAt1[13]), hn::Set(d, kAt2[13]));
    for (int k = 12; k >= 0; --k)
      series = hn::MulAdd(series, t, hn::IfThenElse(near1, hn::Set(d, kAt1[k]), hn::Set(d, kAt2[k])));
    res = hn::IfThenElse(near, hn::Mul(series, t), res);
  }
  return hn::IfThenElse(pole, hn::Set(d, std::numeric_limits<double>::infinity()), res);
}
struct LgammaF {
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    using L = L_t<D>;
    return f32_via_f64(d, x, -kMax<L>, kMax<L>, [](auto dd, auto v) { return lgamma_f64(dd, v); },
                       [](L c) { return static_cast<L>(std::lgamma(static_cast<double>(c))); });
  }
};

// ---- I_0, I_1 and their scaled forms, on float64 vectors ----
template <int nu, bool scaled, class D, class V>
HWY_INLINE V bessel_i_f64(D d, V x) {
  namespace sc = special_coefficients;
  static constexpr auto kSeries = sc::series<nu>();
  static constexpr auto kHankel = sc::hankel<nu>();
  const V a = hn::Abs(x), one = hn::Set(d, 1.0);
  const auto small = hn::Le(a, hn::Set(d, sc::kSeriesEnd));
  V res = hn::Zero(d);
  if (!hn::AllFalse(d, small)) {
    V s = horner(d, hn::Mul(hn::Mul(a, a), hn::Set(d, 0.25)), kSeries);
    if constexpr (nu == 1) s = hn::Mul(s, hn::Mul(a, hn::Set(d, 0.5)));
    if constexpr (scaled) s = hn::Mul(s, hn::Exp(d, hn::Neg(a)));
    res = s;
  }
  if (!hn::AllTrue(d, small)) {  // NaN and infinities too
    V h = hn::Div(horner(d, hn::Div(one, a), kHankel), hn::Sqrt(hn::Mul(a, hn::Set(d, 2 * 3.14159265358979323846))));
    if constexpr (!scaled) {
      const V inf = hn::Set(d, std::numeric_limits<double>::infinity());
      h = hn::IfThenElse(hn::Eq(a, inf), inf, hn::Mul(h, hn::Exp(d, a)));
    }
    res = hn::IfThenElse(small, res, h);
  }
  if constexpr (nu == 1) res = hn::CopySign(res, x);
  return res;
}
template <int nu, bool scaled>
struct BesselIF {
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    if constexpr (kF32<L_t<D>>) {
      return via_f64(d, x, [](auto dd, auto v) { return bessel_i_f64<nu, scaled>(dd, v); });
    } else {
      return bessel_i_f64<nu, scaled>(d, x);
    }
  }
};

template <class T>
void special_typed(TensorIterator& iter, SpecialOp op) {
  switch (op) {
    case SpecialOp::Lgamma: return run_float<T, 1>(iter, LgammaF{});
    case SpecialOp::I0: return run_float<T, 1>(iter, BesselIF<0, false>{});
    case SpecialOp::I1: return run_float<T, 1>(iter, BesselIF<1, false>{});
    case SpecialOp::I0e: return run_float<T, 1>(iter, BesselIF<0, true>{});
    case SpecialOp::I1e: return run_float<T, 1>(iter, BesselIF<1, true>{});
  }
}

}  // namespace

void special_float(TensorIterator& iter, SpecialOp op) {
  visit_float(iter.common_dtype(), "special", [&](auto t) { special_typed<decltype(t)>(iter, op); });
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(special_float);

void special_kernel(TensorIterator& iter, SpecialOp op) { HWY_DYNAMIC_DISPATCH(special_float)(iter, op); }
}  // namespace ember::kernels
#endif
