// The functors of the float pointwise kernels (vec(d, x...) on compute vectors, or scalar(c...)
// for ScalarOnly ones) and the switches that map UnaryOp/BinaryOp onto them, compiled once per
// SIMD target (include after hwy_util-inl.h and pointwise_vec-inl.h in a file using
// foreach_target.h). The eager kernels (unary_kernels.cpp, pointwise_kernels.cpp) and the fused
// pointwise engine (src/fx/fused_kernels.cpp) share them, so a fused chain computes each op
// exactly as its eager kernel does.
//
// Transcendentals use hwy/contrib/math, or for the exp family in float32 lanes (exp, expm1,
// sigmoid, tanh, silu, gelu's tanh form, elu, softplus, log_sigmoid) the cheaper exp_parts below,
// inside the range where they are accurate to a few ulp; a vector holding any lane outside it
// (NaN, infinities, overflow, subnormal results, huge trigonometric arguments) is computed lane
// by lane with the C library instead (`guarded`), so special values follow libm exactly and the
// common case stays vectorized.

#if defined(EMBER_KERNELS_POINTWISE_FUNCTORS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_POINTWISE_FUNCTORS_INL_H_
#undef EMBER_KERNELS_POINTWISE_FUNCTORS_INL_H_
#else
#define EMBER_KERNELS_POINTWISE_FUNCTORS_INL_H_
#endif

#include <hwy/contrib/math/math-inl.h>

#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "kernels/cpu/exp-inl.h"
#include "kernels/cpu/pointwise.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {

// ==== unary ====================================================================================
template <class D>
using L_t = hn::TFromD<D>;
template <class L>
constexpr bool kF32 = sizeof(L) == 4;

// sf (a scalar function) on each lane of x, or of x and y.
template <class D, class V, class SF>
HWY_INLINE V per_lane(D d, V x, const SF& sf) {
  HWY_ALIGN L_t<D> buf[hn::MaxLanes(d)];
  hn::Store(x, d, buf);
  for (size_t i = 0; i < hn::Lanes(d); ++i) buf[i] = sf(buf[i]);
  return hn::Load(d, buf);
}
template <class D, class V, class SF>
HWY_INLINE V per_lane(D d, V x, V y, const SF& sf) {
  HWY_ALIGN L_t<D> bx[hn::MaxLanes(d)];
  HWY_ALIGN L_t<D> by[hn::MaxLanes(d)];
  hn::Store(x, d, bx);
  hn::Store(y, d, by);
  for (size_t i = 0; i < hn::Lanes(d); ++i) bx[i] = sf(bx[i], by[i]);
  return hn::Load(d, bx);
}

// vf(x) when every lane of x lies in [lo, hi] (NaN never does), else sf on each lane.
template <class D, class V, class VF, class SF>
HWY_INLINE V guarded(D d, V x, L_t<D> lo, L_t<D> hi, const VF& vf, const SF& sf) {
  const auto ok = hn::And(hn::Ge(x, hn::Set(d, lo)), hn::Le(x, hn::Set(d, hi)));
  if (HWY_LIKELY(hn::AllTrue(d, ok))) return vf(x);
  return per_lane(d, x, sf);
}

// fd (a function of float64 vectors) on a float32 vector: both halves widened, computed in
// float64 and rounded once, so the float32 result is as good as correctly rounded where fd is
// accurate to a few float64 ulp.
template <class D, class V, class FD>
HWY_INLINE V via_f64(D d, V x, const FD& fd) {
  const hn::Half<D> dh;
  const hn::Rebind<double, decltype(dh)> dd;
  const auto lo = fd(dd, hn::PromoteTo(dd, hn::LowerHalf(dh, x)));
  const auto hi = fd(dd, hn::PromoteTo(dd, hn::UpperHalf(dh, x)));
  return hn::Combine(d, hn::DemoteTo(dh, hi), hn::DemoteTo(dh, lo));
}
template <class D, class V, class FD>
HWY_INLINE V via_f64(D d, V x, V y, const FD& fd) {
  const hn::Half<D> dh;
  const hn::Rebind<double, decltype(dh)> dd;
  const auto lo = fd(dd, hn::PromoteTo(dd, hn::LowerHalf(dh, x)), hn::PromoteTo(dd, hn::LowerHalf(dh, y)));
  const auto hi = fd(dd, hn::PromoteTo(dd, hn::UpperHalf(dh, x)), hn::PromoteTo(dd, hn::UpperHalf(dh, y)));
  return hn::Combine(d, hn::DemoteTo(dh, hi), hn::DemoteTo(dh, lo));
}

// A function vectorized for float32 compute lanes (float, and Half/BFloat16 computed in float)
// through float64: vf(x) when every lane of x lies in [lo, hi], else, and for float64 data (whose
// libm result the vector form could not match), sf on each lane.
template <class D, class V, class VF, class SF>
HWY_INLINE V f32_via_f64(D d, V x, L_t<D> lo, L_t<D> hi, const VF& vf, const SF& sf) {
  if constexpr (kF32<L_t<D>>) {
    return guarded(d, x, lo, hi, [d, &vf](V v) { return via_f64(d, v, vf); }, sf);
  } else {
    return per_lane(d, x, sf);
  }
}

template <class L>
constexpr L kMax = std::numeric_limits<L>::max();
template <class L>
constexpr L kMinNormal = std::numeric_limits<L>::min();
// exp(x) stays a normal finite number for x in [-kExpLimit, kExpLimit].
template <class L>
constexpr L kExpLimit = kF32<L> ? L(87) : L(700);

// 2^n for integral n in the normal exponent range, built from its exponent bits.
template <class D, class V>
HWY_INLINE V pow2_int(D d, V n) {
  using L = L_t<D>;
  const hn::RebindToSigned<D> di;
  using I = hn::TFromD<decltype(di)>;
  const auto bits = hn::Add(hn::ConvertTo(di, n), hn::Set(di, static_cast<I>(hwy::MaxExponentField<L>() >> 1)));
  return hn::BitCast(d, hn::ShiftLeft<hwy::MantissaBits<L>()>(bits));
}

// c[0] + c[1] t + c[2] t^2 + ... by Horner's rule, for a constant array of coefficients (its
// length known, the loop unrolls).
template <class D, class V, class C>
HWY_INLINE V horner(D d, V t, const C& c) {
  constexpr size_t kN = std::size(C{});
  V r = hn::Set(d, c[kN - 1]);
  for (size_t i = kN - 1; i-- > 0;) r = hn::MulAdd(r, t, hn::Set(d, c[i]));
  return r;
}

// The same by Estrin's scheme: c[I..I+N) as the part below t^M (M the largest power of 2 below
// N) plus t^M times the rest, recursively (the powers of t are common subexpressions): a chain of
// about log2(N) multiply-adds instead of N, which bounded the throughput of the float64 functions
// below (sinh 0.95 -> 0.71 ns an element).
template <size_t I, size_t N, class D, class V, class C>
HWY_INLINE V estrin_part(D d, V t, const C& c) {
  if constexpr (N == 1) {
    return hn::Set(d, c[I]);
  } else if constexpr (N == 2) {
    return hn::MulAdd(hn::Set(d, c[I + 1]), t, hn::Set(d, c[I]));
  } else {
    constexpr size_t M = std::bit_floor(N - 1);
    V tm = t;
    for (size_t k = 1; k < M; k *= 2) tm = hn::Mul(tm, tm);
    return hn::MulAdd(estrin_part<I + M, N - M>(d, t, c), tm, estrin_part<I, M>(d, t, c));
  }
}
template <class D, class V, class C>
HWY_INLINE V estrin(D d, V t, const C& c) {
  return estrin_part<0, std::size(C{})>(d, t, c);
}

// log x for positive normal float64 lanes (float32 values widened, none subnormal in float64):
// Highway's without its rescaling of subnormals.
template <class D, class V>
HWY_INLINE V log_f64_normal(D d, V x) {
  return hn::impl::Log<D, V, false>(d, x);
}
// t = n ln2 + r for float64 lanes with |t| <= 700: returns r (|r| <= ln2 / 2) and sets *big to
// t / ln2 + 1.5 * 2^52, whose low bits hold n (2^n's exponent field is them plus the bias).
template <class D, class V>
HWY_INLINE V reduce_ln2_f64(D d, V t, V* big) {
  const V shifter = hn::Set(d, 6755399441055744.0);  // 1.5 * 2^52
  *big = hn::MulAdd(t, hn::Set(d, 1.4426950408889634074), shifter);
  const V n = hn::Sub(*big, shifter);
  const V r = hn::MulAdd(n, hn::Set(d, -0.693147180559945286227), t);  // ln2's leading bits
  return hn::MulAdd(n, hn::Set(d, -2.319046813846299558e-17), r);
}
// e^t for float64 lanes with |t| <= 700 (pow's clamped exponents, erfc's e^-x^2): 2^n e^r with
// n = round(t / ln2) (adding 1.5 * 2^52 rounds it and leaves n in the low bits of the sum, whence
// 2^n's exponent field by one add and shift: 2^-1010..2^1010 stay normal), r = t - n ln2 in two
// FMAs, |r| <= ln2 / 2, and e^r by a degree-9 polynomial fitted to it (relative error 1.4e-14, a
// millionth of a float32 ulp; the degree-11 Taylor polynomial before it took a tenth more of
// pow's time). Highway's Exp handles the whole float64 range (two scalings, an underflow mask):
// float32 pow of 64K elements took 135 us with it and its Log, 96 us with this and log_f64_normal.
template <class D, class V>
HWY_INLINE V exp_f64_bounded(D d, V t) {
  const hn::RebindToSigned<D> di;
  V big;
  const V r = reduce_ln2_f64(d, t, &big);
  static constexpr std::array<double, 10> kExp = {1.000000000000013,     0.9999999999998915,    0.49999999999454786,
                                                  0.16666666667836946,   0.04166666703417635,   0.008333333000027622,
                                                  0.0013888802550785348, 0.000198415991523236,  2.4884145744428605e-05,
                                                  2.7481308660375163e-06};
  const V p = estrin(d, r, kExp);
  const auto bits = hn::ShiftLeft<52>(hn::Add(hn::BitCast(di, big), hn::Set(di, int64_t{1023})));
  return hn::Mul(p, hn::BitCast(d, bits));
}

// 2^x = 2^n * e^(f ln2) with n = round(x): f ln2 is small, so no precision is lost to scaling.
template <class D, class V>
HWY_INLINE V exp2_inrange(D d, V x) {
  using L = L_t<D>;
  const V n = hn::Round(x);
  const V e = hn::Exp(d, hn::Mul(hn::Sub(x, n), hn::Set(d, L(0.693147180559945309417232121458))));
  return hn::Mul(e, pow2_int(d, n));
}

// ---- float32 exponentials ----
// e^x - 1 = s q + (s - 1), one rounding (s - 1 is exact for the n where it matters).
template <class D, class V>
HWY_INLINE V expm1_vec(D d, V x) {
  using L = L_t<D>;
  if constexpr (kF32<L>) {
    V s;
    const V q = exp_parts<1>(d, x, &s);
    return hn::MulAdd(s, q, hn::Sub(s, hn::Set(d, L(1))));
  } else {
    return hn::Expm1(d, x);
  }
}
// 1 / a and num / a for float32 lanes of a positive normal a below 2^126, without a division: the
// target's reciprocal estimate y (14 bits on AVX-512; AVX2's 12 bits refined by a Newton step,
// y += y (1 - a y)), then the result's estimate t and one correction t += y (num - a t), which
// leaves about half an ulp besides the rounding. Float64 lanes divide.
template <class D, class V>
HWY_INLINE V recip_estimate(D d, V a) {
  const V y = hn::ApproximateReciprocal(a);
  if constexpr (HWY_TARGET == HWY_AVX3) return y;
  return hn::MulAdd(y, hn::NegMulAdd(a, y, hn::Set(d, 1.0f)), y);
}
template <class D, class V>
HWY_INLINE V recip_vec(D d, V a) {
  using L = L_t<D>;
  const V one = hn::Set(d, L(1));
  if constexpr (kF32<L>) {
    const V y = recip_estimate(d, a);
    return hn::MulAdd(y, hn::NegMulAdd(a, y, one), y);
  } else {
    return hn::Div(one, a);
  }
}
template <class D, class V>
HWY_INLINE V div_vec(D d, V num, V a) {
  if constexpr (kF32<L_t<D>>) {
    const V y = recip_estimate(d, a);
    const V t = hn::Mul(num, y);
    return hn::MulAdd(y, hn::NegMulAdd(a, t, num), t);
  } else {
    return hn::Div(num, a);
  }
}
// 1 + e^(K x) for lanes with K x <= kExpLimit (not NaN); below -kExpLimit, where it is 1 to
// float precision, K x is clamped there.
template <int K, class D, class V>
HWY_INLINE V one_plus_exp(D d, V x) {
  using L = L_t<D>;
  constexpr L kLim = kExpLimit<L> / (K < 0 ? -K : K);
  const V xc = K < 0 ? hn::Min(x, hn::Set(d, kLim)) : hn::Max(x, hn::Set(d, -kLim));
  return hn::Add(hn::Set(d, L(1)), exp_vec<K>(d, xc));
}
// tanh of finite float32 lanes: x + x^3 P(x^2) below 0.5494 in magnitude (tanh about 0.5), P of
// degree 4 a minimax fit to (tanh(x) - x) / x^3 (relative error 1.2e-9); above,
// 1 - 2 / (1 + e^(2|x|)) with |x| clamped to 9.1 (tanh is 1 in float32 from 9.01 on), where the
// subtraction loses nothing. Float64 lanes take Highway's.
template <class D, class V>
HWY_INLINE V tanh_vec(D d, V x) {
  using L = L_t<D>;
  if constexpr (kF32<L>) {
    const V a = hn::Abs(x);
    const V e = exp_vec<2>(d, hn::Min(a, hn::Set(d, 9.1f)));
    const V big = hn::Sub(hn::Set(d, 1.0f), div_vec(d, hn::Set(d, 2.0f), hn::Add(hn::Set(d, 1.0f), e)));
    const V a2 = hn::Mul(a, a);
    V p = hn::Set(d, -6.242848933e-03f);
    p = hn::MulAdd(p, a2, hn::Set(d, 2.105071396e-02f));
    p = hn::MulAdd(p, a2, hn::Set(d, -5.384754762e-02f));
    p = hn::MulAdd(p, a2, hn::Set(d, 1.333254427e-01f));
    p = hn::MulAdd(p, a2, hn::Set(d, -3.333331645e-01f));
    const V small = hn::MulAdd(hn::Mul(a2, a), p, a);
    // x's sign put on the magnitude last, so that tanh(-0) is -0
    return hn::CopySignToAbs(hn::IfThenElse(hn::Lt(a, hn::Set(d, 0.5494f)), small, big), x);
  } else {
    return hn::Tanh(d, x);
  }
}

// ---- functors: vec(d, x) on compute vectors, or scalar(c) for ScalarOnly ones ----------------
// (`staged16`: float16 and bfloat16 data run through the float32 loop, see pointwise_vec-inl.h.)
#define EMBER_VEC(expr)                          \
  template <class D, class V>                    \
  HWY_INLINE V vec(D d, V x) const {             \
    using L = L_t<D>;                            \
    static_cast<void>(sizeof(L));                \
    static_cast<void>(d);                        \
    return expr;                                 \
  }

struct AbsF { EMBER_VEC(hn::Abs(x)) };
struct NegF { EMBER_VEC(hn::Neg(x)) };
// (0 < x) - (x < 0): NaN and -0 give +0, as PyTorch.
struct SignF {
  EMBER_VEC(hn::Sub(hn::IfThenElseZero(hn::Lt(hn::Zero(d), x), hn::Set(d, L(1))),
                    hn::IfThenElseZero(hn::Lt(x, hn::Zero(d)), hn::Set(d, L(1)))))
};
struct ExpF {
  static constexpr bool staged16 = true;
  EMBER_VEC(guarded(d, x, -kExpLimit<L>, kExpLimit<L>, [d](V v) { return exp_vec<1>(d, v); },
                    [](L c) { return std::exp(c); }))
};
struct Exp2F {
  static constexpr bool staged16 = true;
  EMBER_VEC(guarded(d, x, kF32<L> ? L(-125) : L(-1021), kF32<L> ? L(127) : L(1023),
                    [d](V v) { return exp2_inrange(d, v); }, [](L c) { return std::exp2(c); }))
};
struct Expm1F {
  static constexpr bool staged16 = true;
  EMBER_VEC(guarded(d, x, -kExpLimit<L>, kExpLimit<L>, [d](V v) { return expm1_vec(d, v); },
                    [](L c) { return std::expm1(c); }))
};
struct LogF {
  static constexpr bool staged16 = true;
  EMBER_VEC(guarded(d, x, kMinNormal<L>, kMax<L>, [d](V v) { return hn::Log(d, v); },
                    [](L c) { return std::log(c); }))
};
struct Log2F {
  static constexpr bool staged16 = true;
  EMBER_VEC(guarded(d, x, kMinNormal<L>, kMax<L>, [d](V v) { return hn::Log2(d, v); },
                    [](L c) { return std::log2(c); }))
};
struct Log10F {
  static constexpr bool staged16 = true;
  EMBER_VEC(guarded(d, x, kMinNormal<L>, kMax<L>, [d](V v) { return hn::Log10(d, v); },
                    [](L c) { return std::log10(c); }))
};
struct Log1pF {
  static constexpr bool staged16 = true;
  EMBER_VEC(guarded(d, x, L(-0.99), kMax<L>, [d](V v) { return hn::Log1p(d, v); },
                    [](L c) { return std::log1p(c); }))
};
struct SqrtF { EMBER_VEC(hn::Sqrt(x)) };
struct RsqrtF { EMBER_VEC(hn::Div(hn::Set(d, L(1)), hn::Sqrt(x))) };
struct SinF {
  static constexpr bool staged16 = true;
  EMBER_VEC(guarded(d, x, L(-30000), L(30000), [d](V v) { return hn::Sin(d, v); },
                    [](L c) { return std::sin(c); }))
};
struct CosF {
  static constexpr bool staged16 = true;
  EMBER_VEC(guarded(d, x, L(-30000), L(30000), [d](V v) { return hn::Cos(d, v); },
                    [](L c) { return std::cos(c); }))
};
// tan of float32 data in float64 lanes, |x| <= 30000: n = round(|x| 2/pi) (adding 1.5 * 2^52
// rounds it and leaves its parity in the sum's low bit), r = |x| - n pi/2 in two FMAs, the first
// exact (n pi/2's leading double times n is exact inside the FMA, and the difference, below 1
// and a multiple of 2^-52, fits a double), the second off by under n 1e-32 besides its rounding, so r
// keeps its relative precision next to the poles. Then sin r and cos r by their Taylor
// polynomials (|r| <= pi/4: truncation errors below 1e-11 and 4e-13), tan = sin / cos for even n,
// -cos / sin for odd n, x's sign put on last (so that tan(-0) is -0). One reduction and one
// division instead of Highway's Sin and Cos (tan of float32 1.3x slower than libtorch's).
template <class D, class V>
HWY_INLINE V tan_f64(D dd, V x) {
  const hn::RebindToSigned<D> di;
  const V a = hn::Abs(x);
  const V magic = hn::Set(dd, 0x1.8p52);
  const V big = hn::MulAdd(a, hn::Set(dd, 0.636619772367581343076), magic);
  const V n = hn::Sub(big, magic);
  V r = hn::NegMulAdd(n, hn::Set(dd, 1.5707963267948966), a);  // pi/2's leading double
  r = hn::NegMulAdd(n, hn::Set(dd, 6.123233995736766e-17), r);  // the rest of pi/2
  const V r2 = hn::Mul(r, r);
  V ps = hn::Set(dd, 1.0 / 39916800);  // (sin r - r) / r^3 in r^2
  ps = hn::MulAdd(ps, r2, hn::Set(dd, -1.0 / 362880));
  ps = hn::MulAdd(ps, r2, hn::Set(dd, 1.0 / 5040));
  ps = hn::MulAdd(ps, r2, hn::Set(dd, -1.0 / 120));
  ps = hn::MulAdd(ps, r2, hn::Set(dd, 1.0 / 6));
  const V sin_r = hn::NegMulAdd(hn::Mul(r2, r), ps, r);  // ps holds the odd terms' signs flipped
  V pc = hn::Set(dd, 1.0 / 479001600);  // cos r in r^2
  pc = hn::MulAdd(pc, r2, hn::Set(dd, -1.0 / 3628800));
  pc = hn::MulAdd(pc, r2, hn::Set(dd, 1.0 / 40320));
  pc = hn::MulAdd(pc, r2, hn::Set(dd, -1.0 / 720));
  pc = hn::MulAdd(pc, r2, hn::Set(dd, 1.0 / 24));
  pc = hn::MulAdd(pc, r2, hn::Set(dd, -0.5));
  const V cos_r = hn::MulAdd(pc, r2, hn::Set(dd, 1.0));
  const auto odd = hn::RebindMask(dd, hn::TestBit(hn::BitCast(di, big), hn::Set(di, 1)));
  const V t = hn::Div(hn::IfThenElse(odd, hn::Neg(cos_r), sin_r), hn::IfThenElse(odd, sin_r, cos_r));
  return hn::Xor(t, hn::And(x, hn::SignBit(dd)));
}
struct TanF {
  static constexpr bool staged16 = true;
  EMBER_VEC(f32_via_f64(d, x, L(-30000), L(30000), [](auto dd, auto v) { return tan_f64(dd, v); },
                        [](L c) { return static_cast<L>(std::tan(static_cast<double>(c))); }))
};
// asin and acos of float32 lanes in float32, within an ulp as libtorch's (SLEEF's u10 forms), in
// half the operations of the float64 lanes they used (1K elements: 1.0 -> 0.4 us). For |x| < 1/2,
// asin x = x + c with c = x z P(z), z = x^2; beyond, with z = (1 - |x|) / 2 (exact) and s = sqrt z,
// asin |x| = pi/2 - 2 asin s = pi/2 - 2 (s + c). P (degree 5, fitted to (asin y - y) / (y z) on
// y <= 1/2) holds c to 5e-3 of a float32 ulp of the result. The ulp that plain float32 would lose
// is kept by carrying what rounding drops: s's error (z - s^2, exact by FMA, over 2s; an estimate
// of 1/s is enough) and pi/2's and pi's low parts, each result formed as hi = H - t (the rounding
// error of that difference exact by Fast2Sum, |H| >= |t|) plus the small terms, rounded once.
// acos x = pi/2 - asin x for |x| < 1/2, 2 asin s for x >= 1/2, pi - 2 asin s below -1/2. A vector
// with NaN or arguments beyond +-1 takes the C library's float64 function lane by lane (rounded
// once: glibc's asinf is off by up to 0.79 ulp), as float64 data do.
// pi/2 as the nearest float32 and the rest (pi and pi/4 are the same scaled by powers of 2).
constexpr float kHalfPiHi = 1.57079637f, kHalfPiLo = -4.37113900e-08f;
template <bool kAcos, class D, class V>
HWY_INLINE V asin_acos_f32(D d, V x) {
  static constexpr std::array<float, 6> kP = {0.16666659712791443f, 0.07500503957271576f, 0.04451695829629898f,
                                              0.031807705760002136f, 0.014438658952713013f, 0.03751637041568756f};
  const V half = hn::Set(d, 0.5f);
  const V p2h = hn::Set(d, kHalfPiHi), p2l = hn::Set(d, kHalfPiLo);
  const V a = hn::Abs(x);
  const auto small = hn::Lt(a, half);
  const V z = hn::IfThenElse(small, hn::Mul(a, a), hn::NegMulAdd(a, half, half));
  const V s = hn::Sqrt(z);
  const V y = hn::IfThenElse(small, a, s);
  const V c = hn::Mul(hn::Mul(y, z), estrin(d, z, kP));
  // 2 asin s - 2 s: twice s's rounding error and c (|x| >= 1/2)
  const V inv_s = hn::ApproximateReciprocal(hn::Max(s, hn::Set(d, 1e-30f)));
  const V tail = hn::MulAdd(c, hn::Set(d, 2.0f), hn::Mul(hn::NegMulAdd(s, s, z), inv_s));
  const V s2 = hn::Add(s, s);
  if constexpr (!kAcos) {
    const V hi = hn::Sub(p2h, s2);
    const V big = hn::Add(hi, hn::Sub(hn::Add(hn::Sub(hn::Sub(p2h, hi), s2), p2l), tail));
    return hn::CopySign(hn::IfThenElse(small, hn::Add(a, c), big), x);
  } else {
    // the result is (h - t) + l - u, with (h, t, l, u) chosen by x's range
    const auto neg = hn::Lt(x, hn::Zero(d));
    const V ph = hn::Set(d, 2 * kHalfPiHi), pl = hn::Set(d, 2 * kHalfPiLo);  // pi = ph + pl
    const V h = hn::IfThenElse(small, p2h, hn::IfThenElseZero(neg, ph));
    const V t = hn::IfThenElse(small, x, hn::IfThenElse(neg, s2, hn::Neg(s2)));
    const V l = hn::IfThenElse(small, p2l, hn::IfThenElseZero(neg, pl));
    const V u = hn::IfThenElse(small, hn::CopySign(c, x), hn::IfThenElse(neg, tail, hn::Neg(tail)));
    const V hi = hn::Sub(h, t);
    return hn::Add(hi, hn::Sub(hn::Add(hn::Sub(hn::Sub(h, hi), t), l), u));
  }
}
// vf(x) for float32 compute lanes whose every lane lies in [lo, hi], else, and for float64 data, sf
// on each lane.
template <class D, class V, class VF, class SF>
HWY_INLINE V f32_or_libm(D d, V x, L_t<D> lo, L_t<D> hi, const VF& vf, const SF& sf) {
  if constexpr (kF32<L_t<D>>) {
    return guarded(d, x, lo, hi, vf, sf);
  } else {
    return per_lane(d, x, sf);
  }
}
struct AsinF {
  static constexpr bool staged16 = true;
  EMBER_VEC(f32_or_libm(d, x, L(-1), L(1), [d](auto v) { return asin_acos_f32<false>(d, v); },
                        [](L c) { return static_cast<L>(std::asin(static_cast<double>(c))); }))
};
struct AcosF {
  static constexpr bool staged16 = true;
  EMBER_VEC(f32_or_libm(d, x, L(-1), L(1), [d](auto v) { return asin_acos_f32<true>(d, v); },
                        [](L c) { return static_cast<L>(std::acos(static_cast<double>(c))); }))
};
// atan of float32 lanes in float32, within an ulp as libtorch's (1K elements: 1.3 -> 0.5 us against
// float64 lanes): atan |x| = b + atan t with t = |x| (b = 0) up to tan(pi/8), t = (|x| - 1) / (|x|
// + 1) (b = pi/4) up to tan(3pi/8), t = -1/|x| (b = pi/2) beyond, so |t| <= tan(pi/8); atan t = t
// + c, c = t s Q(s), s = t^2, Q of degree 4 fitted to (atan t - t) / (t s) (1e-2 of an ulp of the
// result). What rounding drops is carried as in asin: the quotient's error (the residual of the
// division by FMA, with the rounding errors of |x| +- 1 in the middle range, over the divisor), b's
// low part, and b + t by Fast2Sum (|b| >= |t| or b = 0), rounded once at the end.
template <class D, class V>
HWY_INLINE V atan_f32(D d, V x) {
  static constexpr std::array<float, 5> kQ = {-0.33333316445350647f, 0.19998489320278168f, -0.14243847131729126f,
                                              0.10595987737178802f, -0.060834214091300964f};
  const V one = hn::Set(d, 1.0f);
  const V a = hn::Abs(x);
  const auto mid = hn::Gt(a, hn::Set(d, 0.414213568f));
  const auto far = hn::Gt(a, hn::Set(d, 2.41421366f));
  const auto between = hn::AndNot(far, mid);
  const V sum = hn::Add(a, one), diff = hn::Sub(a, one);
  // |x| + 1 = sum + sum_lo, |x| - 1 = diff + diff_lo (exact beyond 1/2, where diff_lo is 0)
  const V sum_lo = hn::Sub(hn::Min(a, one), hn::Sub(sum, hn::Max(a, one)));
  const V diff_lo = hn::Sub(a, hn::Add(diff, one));
  const V num = hn::IfThenElse(far, hn::Set(d, -1.0f), hn::IfThenElse(mid, diff, a));
  const V den = hn::IfThenElse(far, a, hn::IfThenElse(mid, sum, one));
  // num / den within an ulp (not rounded correctly: the remainder below carries the rest), from
  // a 14-bit reciprocal and one Newton step, cheaper than the division
  const V rcp = hn::ApproximateReciprocal(den);
  const V t0 = hn::Mul(num, rcp);
  const V t = hn::MulAdd(hn::NegMulAdd(t0, den, num), rcp, t0);
  // (num + diff_lo) / (den + sum_lo) - t, the last two terms in the middle range only
  const V resid = hn::Add(hn::NegMulAdd(t, den, num), hn::IfThenElseZero(between, hn::NegMulAdd(t, sum_lo, diff_lo)));
  const V t_lo = hn::Mul(resid, rcp);
  const V s = hn::Mul(t, t);
  const V c = hn::Mul(hn::Mul(t, s), estrin(d, s, kQ));
  // b = bh + bl: 0, pi/4 or pi/2 (bl = bh times pi/2's low part over its high part: the low parts
  // of pi/4 and pi/2 to within 1e-15)
  const V bh = hn::IfThenElse(far, hn::Set(d, kHalfPiHi), hn::IfThenElseZero(mid, hn::Set(d, kHalfPiHi / 2)));
  const V bl = hn::Mul(bh, hn::Set(d, kHalfPiLo / kHalfPiHi));
  const V hi = hn::Add(bh, t);
  // atan (t + t_lo) = atan t + t_lo / (1 + s) to first order: t_lo (1 - s)
  const V r = hn::Add(hi, hn::Add(hn::Add(hn::Sub(t, hn::Sub(hi, bh)), bl), hn::Add(hn::NegMulAdd(s, t_lo, t_lo), c)));
  return hn::CopySign(r, x);
}
struct AtanF {
  static constexpr bool staged16 = true;
  EMBER_VEC(f32_or_libm(d, x, -kMax<L>, kMax<L>, [d](auto v) { return atan_f32(d, v); },
                        [](L c) { return static_cast<L>(std::atan(static_cast<double>(c))); }))
};
struct TanhF {
  static constexpr bool staged16 = true;
  EMBER_VEC(guarded(d, x, -kMax<L>, kMax<L>, [d](V v) { return tanh_vec(d, v); },
                    [](L c) { return std::tanh(c); }))
};
// The hyperbolic functions and their inverses in float64 for float32 lanes (within a few float64
// ulp, so the float32 result is as good as correctly rounded). sinh and cosh of a = |x| = n ln2 +
// r (|r| <= ln2 / 2) from cosh r and sinh r (their Taylor polynomials in r^2 to r^10 and r^11,
// remainders below 7e-15 relative): e^+-a = 2^+-n (cosh r +- sinh r), so sinh a = (2^n - 2^-n) /
// 2 cosh r + (2^n + 2^-n) / 2 sinh r and cosh a the same with the factors swapped. Up to |x| =
// ln2 / 2 (n = 0) the first factor is 0 exactly and sinh a is sinh r: no cancellation, no
// division, one reduction for both exponentials (sinh of 1K float32s 1.4 -> 1.0 us against e^a
// and 1/e^a with a Taylor polynomial for small |x|). The inverses are Highway's out-of-line forms
// (Call*): one copy per target serves float32, float16 and bfloat16 data and both halves of a
// vector (inlined, the five cost 97 KB of library). The vector forms hold where float32 results are
// finite (and inside acosh's and atanh's domains); vectors with other lanes, and float64 data,
// take libm's float64 functions.
template <bool kCosh, class D, class V>
HWY_INLINE V sinh_cosh_f64(D d, V x) {
  const hn::RebindToSigned<D> di;
  V big;
  const V r = reduce_ln2_f64(d, hn::Abs(x), &big);
  const V z = hn::Mul(r, r);
  static constexpr std::array<double, 6> kCoshR = {1.0, 1.0 / 2, 1.0 / 24, 1.0 / 720, 1.0 / 40320, 1.0 / 3628800};
  static constexpr std::array<double, 6> kSinhR = {1.0,        1.0 / 6,      1.0 / 120,
                                                   1.0 / 5040, 1.0 / 362880, 1.0 / 39916800};
  const V ch = estrin(d, z, kCoshR), sh = hn::Mul(r, estrin(d, z, kSinhR));
  const auto bits = hn::BitCast(di, big);
  const V up = hn::BitCast(d, hn::ShiftLeft<52>(hn::Add(bits, hn::Set(di, int64_t{1022}))));  // 2^(n-1)
  const V down = hn::BitCast(d, hn::ShiftLeft<52>(hn::Sub(hn::Set(di, int64_t{1022}), bits)));  // 2^(-n-1)
  const V diff = hn::Sub(up, down), sum = hn::Add(up, down);
  if constexpr (kCosh) return hn::MulAdd(sum, ch, hn::Mul(diff, sh));
  return hn::CopySign(hn::MulAdd(diff, ch, hn::Mul(sum, sh)), x);
}
struct SinhF {
  static constexpr bool staged16 = true;
  EMBER_VEC(f32_via_f64(d, x, L(-89), L(89), [](auto dd, auto v) { return sinh_cosh_f64<false>(dd, v); },
                        [](L c) { return static_cast<L>(std::sinh(static_cast<double>(c))); }))
};
struct CoshF {
  static constexpr bool staged16 = true;
  EMBER_VEC(f32_via_f64(d, x, L(-89), L(89), [](auto dd, auto v) { return sinh_cosh_f64<true>(dd, v); },
                        [](L c) { return static_cast<L>(std::cosh(static_cast<double>(c))); }))
};
struct AsinhF {
  static constexpr bool staged16 = true;
  EMBER_VEC(f32_via_f64(d, x, -kMax<L>, kMax<L>, [](auto dd, auto v) { return hn::CallAsinh(dd, v); },
                        [](L c) { return static_cast<L>(std::asinh(static_cast<double>(c))); }))
};
struct AcoshF {
  static constexpr bool staged16 = true;
  EMBER_VEC(f32_via_f64(d, x, L(1), kMax<L>, [](auto dd, auto v) { return hn::CallAcosh(dd, v); },
                        [](L c) { return static_cast<L>(std::acosh(static_cast<double>(c))); }))
};
// atanh's vector form inside (-1, 1): +-1 (+-inf) and beyond (NaN) from libm.
template <class L>
constexpr L kBelowOne = L(1) - std::numeric_limits<L>::epsilon() / 2;
struct AtanhF {
  static constexpr bool staged16 = true;
  EMBER_VEC(f32_via_f64(d, x, -kBelowOne<L>, kBelowOne<L>, [](auto dd, auto v) { return hn::CallAtanh(dd, v); },
                        [](L c) { return static_cast<L>(std::atanh(static_cast<double>(c))); }))
};
// 1 / (1 + e^-x); below -kExpLimit the result is subnormal or zero and comes from libm.
struct SigmoidF {
  static constexpr bool staged16 = true;
  EMBER_VEC(guarded(d, x, -kExpLimit<L>, kMax<L>, [d](V v) { return recip_vec(d, one_plus_exp<-1>(d, v)); },
                    [](L c) { return L(1) / (L(1) + std::exp(-c)); }))
};
struct SiluF {
  static constexpr bool staged16 = true;
  EMBER_VEC(guarded(d, x, -kExpLimit<L>, kMax<L>, [d](V v) { return div_vec(d, v, one_plus_exp<-1>(d, v)); },
                    [](L c) { return c / (L(1) + std::exp(-c)); }))
};
// Highway's Max/Min leave NaN handling to the target: NaN inputs are passed through explicitly.
struct ReluF { EMBER_VEC(hn::IfThenZeroElse(hn::Lt(x, hn::Zero(d)), x)) };
struct HardsigmoidF {
  EMBER_VEC(hn::IfThenElse(hn::IsNaN(x), x,
                           hn::Div(hn::Min(hn::Max(hn::Add(x, hn::Set(d, L(3))), hn::Zero(d)), hn::Set(d, L(6))),
                                   hn::Set(d, L(6)))))
};
struct HardswishF {
  EMBER_VEC(hn::IfThenElse(
      hn::IsNaN(x), x,
      hn::Div(hn::Mul(x, hn::Min(hn::Max(hn::Add(x, hn::Set(d, L(3))), hn::Zero(d)), hn::Set(d, L(6)))),
              hn::Set(d, L(6)))))
};
struct FloorF { EMBER_VEC(hn::Floor(x)) };
struct CeilF { EMBER_VEC(hn::Ceil(x)) };
struct RoundF { EMBER_VEC(hn::Round(x)) };  // ties to even
struct TruncF { EMBER_VEC(hn::Trunc(x)) };
struct FracF { EMBER_VEC(hn::Sub(x, hn::Trunc(x))) };  // exact; NaN at infinities, as x - trunc(x)
struct ReciprocalF { EMBER_VEC(hn::Div(hn::Set(d, L(1)), x)) };
struct SquareF { EMBER_VEC(hn::Mul(x, x)) };
struct IdentityF { EMBER_VEC(x) };
struct OneF { EMBER_VEC(hn::Set(d, L(1))) };
struct CubeF { EMBER_VEC(hn::Mul(hn::Mul(x, x), x)) };
struct InvSquareF { EMBER_VEC(hn::Div(hn::Set(d, L(1)), hn::Mul(x, x))) };
#undef EMBER_VEC

// 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), computed as x / (1 + e^(-2 u)), which
// does not cancel for negative x; where e^(-2 u) passes e^kExpLimit the result (below 1e-37 in
// float32) is taken as the zero libtorch's formula gives there. Infinities and NaN by that
// formula in the C library.
struct GeluTanhF {
  static constexpr bool staged16 = true;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    using L = L_t<D>;
    const L lim = -kExpLimit<L> / 2;
    auto vf = [d, lim](V v) {
      const V u = hn::Mul(hn::Set(d, L(0.797884560802865355879892119869)),
                          hn::MulAdd(hn::Set(d, L(0.044715)), hn::Mul(hn::Mul(v, v), v), v));
      const V r = div_vec(d, v, one_plus_exp<-2>(d, hn::Max(u, hn::Set(d, lim))));
      return hn::IfThenElse(hn::Lt(u, hn::Set(d, lim)), hn::Mul(v, hn::Zero(d)), r);
    };
    auto sf = [](L c) {
      const L u = L(0.797884560802865355879892119869) * (c + L(0.044715) * c * c * c);
      return L(0.5) * c * (L(1) + std::tanh(u));
    };
    return guarded(d, x, -kMax<L>, kMax<L>, vf, sf);
  }
};
struct LeakyReluF {
  double slope;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    return hn::IfThenElse(hn::Gt(x, hn::Zero(d)), x, hn::Mul(x, hn::Set(d, static_cast<L_t<D>>(slope))));
  }
};
// e^-|x| in (0, 1]; NaN and |x| beyond exp's normal range from the C library
template <class D, class V>
HWY_INLINE V exp_neg_abs(D d, V x) {
  using L = L_t<D>;
  return guarded(d, hn::Neg(hn::Abs(x)), -kExpLimit<L>, L(0), [d](V v) { return exp_vec<1>(d, v); },
                 [](L c) { return std::exp(c); });
}
// PyTorch's log_sigmoid kernel: min(x, 0) - log1p(e^-|x|), never overflowing
struct LogSigmoidF {
  static constexpr bool staged16 = true;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    return hn::Sub(hn::Min(x, hn::Zero(d)), hn::Log1p(d, exp_neg_abs(d, x)));
  }
};
// x > 0 ? scale x : alpha scale (e^(input_scale x) - 1)
struct EluF {
  static constexpr bool staged16 = true;
  double alpha, scale, input_scale;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    using L = L_t<D>;
    const L negcoef = static_cast<L>(alpha * scale), poscoef = static_cast<L>(scale);
    const L negiptcoef = static_cast<L>(input_scale);
    const auto neg = hn::Le(x, hn::Zero(d));
    const V m = hn::IfThenElseZero(neg, hn::Mul(x, hn::Set(d, negiptcoef)));
    // m <= 0; below -kExpLimit expm1 is -1 (clamped there)
    const V e = guarded(d, m, -kMax<L>, kExpLimit<L>,
                        [d](V v) { return expm1_vec(d, hn::Max(v, hn::Set(d, -kExpLimit<L>))); },
                        [](L c) { return std::expm1(c); });
    return hn::IfThenElse(neg, hn::Mul(e, hn::Set(d, negcoef)), hn::Mul(x, hn::Set(d, poscoef)));
  }
};
// beta x > threshold ? x : log1p(e^(beta x)) / beta
struct SoftplusF {
  static constexpr bool staged16 = true;
  double beta, threshold;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    using L = L_t<D>;
    const V b = hn::Set(d, static_cast<L>(beta));
    const V xb = hn::Mul(x, b);
    const auto linear = hn::Gt(xb, hn::Set(d, static_cast<L>(threshold)));
    const V m = hn::IfThenZeroElse(linear, xb);
    const V e = guarded(d, m, -kExpLimit<L>, kExpLimit<L>, [d](V v) { return exp_vec<1>(d, v); },
                        [](L c) { return std::exp(c); });
    return hn::IfThenElse(linear, x, hn::Div(hn::Log1p(d, e), b));
  }
};
// min/max against optional bounds; a NaN input stays NaN, a NaN bound makes every lane NaN. The
// bounds are converted once, a missing one to an infinity: converting them in each vector's call
// (with a branch per bound) made float32 clamp 1.9x libtorch's time on AVX2.
struct ClampF {
  ClampF(double lo, double hi, bool has_lo, bool has_hi)
      : lo64(has_lo ? lo : -kInf),
        hi64(has_hi ? hi : kInf),
        lo32(static_cast<float>(lo64)),
        hi32(static_cast<float>(hi64)),
        nan_bound(std::isnan(lo64) || std::isnan(hi64)) {}
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  double lo64, hi64;
  float lo32, hi32;
  bool nan_bound;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    using L = L_t<D>;
    if (nan_bound) return hn::Set(d, std::numeric_limits<L>::quiet_NaN());
    const L lo = std::is_same_v<L, float> ? lo32 : static_cast<L>(lo64);
    const L hi = std::is_same_v<L, float> ? hi32 : static_cast<L>(hi64);
    return hn::IfThenElse(hn::IsNaN(x), x, hn::Min(hn::Max(x, hn::Set(d, lo)), hn::Set(d, hi)));
  }
};
struct NanToNumF {
  double nan, posinf, neginf;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    using L = L_t<D>;
    const V inf = hn::Set(d, std::numeric_limits<L>::infinity());
    V r = hn::IfThenElse(hn::Eq(x, inf), hn::Set(d, static_cast<L>(posinf)), x);
    r = hn::IfThenElse(hn::Eq(x, hn::Neg(inf)), hn::Set(d, static_cast<L>(neginf)), r);
    return hn::IfThenElse(hn::IsNaN(x), hn::Set(d, static_cast<L>(nan)), r);
  }
};

// ---- erf and erfc ----
// Polynomials in a variable mapped onto [-1, 1], from Chebyshev interpolation of libm's float64
// functions (relative error below 2e-9, a thirtieth of a float32 ulp):
//   erf(x) / x            in s = x^2        for 0 <= x <= 1,
//   e^(x^2) erfc(x)       in u = 1 / (1 + x) for 0.5 <= x <= 2.5,
//   x e^(x^2) erfc(x)     in w = 1 / x^2    for 2.5 <= x <= 9.
constexpr double kErfSmall[] = {9.654687387e-01, -1.405360973e-01, 1.985249714e-02, -2.285419545e-03,
                                2.175135417e-04, -1.766906802e-05, 1.230605476e-06};
constexpr double kErfcNear[] = {4.017304607e-01, 2.054406091e-01,  1.145764409e-02, -3.075828715e-03,
                                7.729819589e-05, 7.638358779e-05,  -1.761249187e-05, 1.007091034e-06,
                                5.635994796e-07, -1.810093814e-07};
constexpr double kErfcFar[] = {5.424954026e-01,  -1.670266396e-02, 1.369566500e-03, -1.688962686e-04,
                               2.654390928e-05, -4.955279312e-06, 1.199604376e-06, -2.874094973e-07};

// c[0] + c[1] t + ... for t = (2 v - lo - hi) / (hi - lo), v in [lo, hi].
template <class D, class V, size_t N>
HWY_INLINE V poly_mapped(D d, V v, double lo, double hi, const double (&c)[N]) {
  using L = L_t<D>;
  const V t = hn::MulAdd(v, hn::Set(d, L(2 / (hi - lo))), hn::Set(d, L(-(lo + hi) / (hi - lo))));
  V r = hn::Set(d, L(c[N - 1]));
  for (size_t i = N - 1; i-- > 0;) r = hn::MulAdd(r, t, hn::Set(d, L(c[i])));
  return r;
}
// erf(x) / x for |x| <= 1.
template <class D, class V>
HWY_INLINE V erf_over_x(D d, V x) {
  return poly_mapped(d, hn::Mul(x, x), 0.0, 1.0, kErfSmall);
}
// e^-(x^2 + lo) for x^2 + lo near the rounded square hi of x: x^2 = hi + fma(x, x, -hi) exactly,
// and e^-(hi + l) = e^-hi (1 - l) for the small remainder l, so that the rounding of the square
// (and of x itself, `lo`) stays out of the result, where it would cost 2 x^2 ulp. Float64 lanes
// (float32 data; x^2 <= 676 here) take exp_f64_bounded.
template <class D, class V>
HWY_INLINE V exp_neg_square(D d, V x, V lo) {
  const V hi = hn::Mul(x, x);
  V e;
  if constexpr (kF32<L_t<D>>) {
    e = hn::Exp(d, hn::Neg(hi));
  } else {
    e = exp_f64_bounded(d, hn::Neg(hi));
  }
  return hn::NegMulAdd(e, hn::Add(hn::MulSub(x, x, hi), lo), e);
}
// erfc(a + da) for 0.5 <= a <= 9 and da a rounding error of a: e^-(a + da)^2 = e^-(a^2 + 2 a da)
// times the scaled erfc (whose slope, about -1/a, makes da negligible there).
template <class D, class V>
HWY_INLINE V erfc_tail(D d, V a, V da) {
  using L = L_t<D>;
  const V one = hn::Set(d, L(1));
  const V near = poly_mapped(d, hn::Div(one, hn::Add(one, a)), 1 / 3.5, 1 / 1.5, kErfcNear);
  const V far = hn::Div(poly_mapped(d, hn::Div(one, hn::Mul(a, a)), 1 / 81.0, 1 / 6.25, kErfcFar), a);
  const V g = hn::IfThenElse(hn::Lt(a, hn::Set(d, L(2.5))), near, far);
  return hn::Mul(exp_neg_square(d, a, hn::Mul(hn::Add(a, a), da)), g);
}
// erf for finite float32 lanes: x (erf/x) below 1, 1 - erfc above (1 in float32 from 4 on).
template <class D, class V>
HWY_INLINE V erf_vec(D d, V x) {
  using L = L_t<D>;
  const V a = hn::Abs(x);
  const V big = hn::Sub(hn::Set(d, L(1)), erfc_tail(d, hn::Min(a, hn::Set(d, L(4))), hn::Zero(d)));
  return hn::IfThenElse(hn::Lt(a, hn::Set(d, L(1))), hn::Mul(x, erf_over_x(d, x)), hn::CopySign(big, x));
}
// erfc(x + dx) for lanes x <= 9 (not NaN; float64 lanes computing float32 data), dx the rounding
// error of x when x was computed (zero for an input): 1 - erf below 0.5 in magnitude, the tail
// above (2 - the tail for negative x, where e^(-x^2) may underflow harmlessly once x < -9).
template <class D, class V>
HWY_INLINE V erfc_vec(D d, V x, V dx) {
  using L = L_t<D>;
  const V a = hn::Abs(x);
  const auto neg = hn::Lt(x, hn::Zero(d));
  const V tail = erfc_tail(d, hn::Min(a, hn::Set(d, L(9))), hn::IfThenElse(neg, hn::Neg(dx), dx));
  const V big = hn::IfThenElse(neg, hn::Sub(hn::Set(d, L(2)), tail), tail);
  return hn::IfThenElse(hn::Lt(a, hn::Set(d, L(0.5))), hn::NegMulAdd(x, erf_over_x(d, x), hn::Set(d, L(1))), big);
}
// -x / sqrt(2) as hi + lo: the product's rounding error and that of the constant are kept in lo.
template <class D, class V>
HWY_INLINE V neg_x_over_sqrt2(D d, V x, V* lo) {
  using L = L_t<D>;
  constexpr double c = -0.707106781186547524400844362105;
  const V chi = hn::Set(d, L(c)), clo = hn::Set(d, L(c - static_cast<double>(L(c))));
  const V hi = hn::Mul(x, chi);
  *lo = hn::MulAdd(x, clo, hn::MulSub(x, chi, hi));
  return hi;
}
struct ErfF {
  static constexpr bool staged16 = true;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    using L = L_t<D>;
    auto sf = [](L c) { return std::erf(c); };
    if constexpr (kF32<L>) return guarded(d, x, -kMax<L>, kMax<L>, [d](V v) { return erf_vec(d, v); }, sf);
    return per_lane(d, x, sf);
  }
};
struct ErfcF {
  static constexpr bool staged16 = true;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    using L = L_t<D>;
    auto sf = [](L c) { return std::erfc(c); };
    return f32_via_f64(d, x, -kMax<L>, L(9), [](auto dd, auto v) { return erfc_vec(dd, v, hn::Zero(dd)); }, sf);
  }
};
// ---- exact gelu in float32 lanes ----
// x Phi(x) = x - x Phi(-x) for x >= 0, x Phi(x) for x < 0, with Phi(-|x|) = erfc(b / sqrt2) / 2,
// b = |x|, written as e^(-b^2 / 2) erfcx(b / sqrt2): the exponential exactly reduced (b^2 / 2 is split
// into its rounded value and rounding error, so no rounding of the square reaches the result), and
// erfcx (smooth, from 1 down to 0.07) by one polynomial of degree 6 per interval of b of width 0.75
// centred on 0.75 k, picked per lane by a table lookup (a table of 8 intervals on 8-lane targets,
// 16 on 16-lane ones). The coefficients are float32 least-squares fits to erfcx of relative error
// below 3.1e-8 (each rounded to float in turn, the rest refitted; weights by Lawson's iteration
// towards minimax); the constant term is kept as a sum of two floats. Results are within 2 ulp of
// the correctly rounded x Phi(x) (checked on every 13th float32 from -11.6 up).
//
// kGeluErfcx[j][k]: the coefficient of t^j for b = 0.75 k + t, |t| <= 0.375; row 7: the low part
// of the constant term.
alignas(64) constexpr float kGeluErfcx[8][16] = {
    {1.000000000e+00f, 6.004649401e-01f, 4.115613401e-01f, 3.073038757e-01f, 2.430278957e-01f, 2.000784129e-01f, 1.696067899e-01f, 1.469764560e-01f, 1.295586228e-01f, 1.157652661e-01f, 1.045861915e-01f, 9.535077959e-02f, 8.759757876e-02f, 8.099929988e-02f, 7.531771809e-02f, 7.037547976e-02f},
    {-7.978844047e-01f, -3.475362062e-01f, -1.805426180e-01f, -1.064508557e-01f, -6.880087405e-02f, -4.759049043e-02f, -3.465403244e-02f, -2.625813708e-02f, -2.053278871e-02f, -1.646903343e-02f, -1.348810364e-02f, -1.124061365e-02f, -9.506361559e-03f, -8.141379803e-03f, -7.048527710e-03f, -6.160437129e-03f},
    {4.999931455e-01f, 1.699063629e-01f, 7.037373632e-02f, 3.389474005e-02f, 1.831264235e-02f, 1.080704387e-02f, 6.831820589e-03f, 4.560621455e-03f, 3.180947620e-03f, 2.299647080e-03f, 1.712706988e-03f, 1.307858736e-03f, 1.020163880e-03f, 8.104235167e-04f, 6.540882750e-04f, 5.352812586e-04f},
    {-2.658488154e-01f, -7.334926724e-02f, -2.499050833e-02f, -1.006177440e-02f, -4.620776046e-03f, -2.354600234e-03f, -1.303583151e-03f, -7.716129767e-04f, -4.823711934e-04f, -3.154451260e-04f, -2.142778831e-04f, -1.502642554e-04f, -1.082832168e-04f, -7.991798338e-05f, -6.020010915e-05f, -4.616807928e-05f},
    {1.241141483e-01f, 2.871896327e-02f, 8.220274001e-03f, 2.813365310e-03f, 1.112395665e-03f, 4.942216910e-04f, 2.413848415e-04f, 1.274012466e-04f, 7.168485172e-05f, 4.254876694e-05f, 2.642662184e-05f, 1.705423711e-05f, 1.137376148e-05f, 7.809340786e-06f, 5.496106041e-06f, 3.954084605e-06f},
    {-4.956058785e-02f, -1.064148545e-02f, -2.582793124e-03f, -7.577401702e-04f, -2.597308485e-04f, -1.013604706e-04f, -4.384303247e-05f, -2.069908987e-05f, -1.046426860e-05f, -5.815093118e-06f, -3.160756251e-06f, -1.890758426e-06f, -1.255464440e-06f, -7.502707149e-07f, -4.996102803e-07f, -3.725650402e-07f},
    {1.311365981e-02f, 3.551024245e-03f, 7.478632033e-04f, 1.913816959e-04f, 5.758889893e-05f, 1.991223144e-05f, 7.693134648e-06f, 3.243885203e-06f, 1.501428187e-06f, 7.630320056e-07f, 3.813978822e-07f, 2.106807955e-07f, 1.323772665e-07f, 7.013337466e-08f, 4.560339306e-08f, 3.265459370e-08f},
    {-6.748046011e-10f, -1.348159895e-08f, -5.918192159e-09f, -8.049614864e-10f, 1.027827490e-09f, 6.381683182e-09f, -5.730657282e-09f, 5.659364977e-09f, 5.811853221e-09f, -2.672664756e-09f, 2.761001427e-09f, 1.860112175e-09f, -1.022227636e-09f, 7.268932678e-10f, -6.507505645e-10f, -2.078343719e-09f},
};
// The lanes of D when the table form applies (8 or 16 float lanes), else 0.
template <class D>
constexpr size_t kGeluTableLanes() {
#if HWY_HAVE_SCALABLE
  return 0;
#else
  if constexpr (!std::is_same_v<L_t<D>, float>) {
    return 0;
  } else {
    constexpr size_t n = hn::MaxLanes(D());
    return n == 8 || n == 16 ? n : 0;
  }
#endif
}
// The largest b the table covers (centre of its last interval + 0.35).
template <class D>
constexpr float kGeluTableMax = 0.75f * static_cast<float>(kGeluTableLanes<D>() - 1) + 0.35f;

// e^(-b^2 / 2) = 2 h (1 + m) for 0 <= b <= 13, h a power of 2; returns m.
template <class D, class V>
HWY_INLINE V exp_neg_half_square(D d, V b, V* h) {
  const hn::RebindToSigned<D> di;
  const V hb = hn::Mul(b, hn::Set(d, 0.5f));
  const V sq = hn::Mul(b, hb);
  const V err = hn::MulSub(b, hb, sq);       // b^2 / 2 = sq + err exactly
  const V magic = hn::Set(d, 12582912.0f);   // 1.5 * 2^23: adding it rounds to an integer
  const V big = hn::MulAdd(sq, hn::Set(d, 1.44269504088896341f), magic);
  const V n = hn::Sub(big, magic);           // round(sq / ln 2)
  V r = hn::NegMulAdd(n, hn::Set(d, 0.693145751953125f), sq);  // exact: ln 2's leading 17 bits
  r = hn::NegMulAdd(n, hn::Set(d, 1.428606765330187045e-6f), r);
  r = hn::Add(r, err);                       // e^(-b^2 / 2) = 2^-n e^-r, |r| <= 0.35
  // e^-r - 1 = -r + r^2 (1/2 - r/6 + ...): Highway's float32 Exp polynomial at -r
  V p = hn::Set(d, -0.000198527617612853646278381f);
  p = hn::MulAdd(p, r, hn::Set(d, 0.00139304355252534151077271f));
  p = hn::MulAdd(p, r, hn::Set(d, -0.00833336077630519866943359f));
  p = hn::MulAdd(p, r, hn::Set(d, 0.0416664853692054748535156f));
  p = hn::MulAdd(p, r, hn::Set(d, -0.166666671633720397949219f));
  p = hn::MulAdd(p, r, hn::Set(d, 0.5f));
  // 2^-n / 2: the exponent field 126 - n, from big's bits (those of magic, plus n)
  const auto e = hn::Sub(hn::Set(di, 126 + 0x4B400000), hn::BitCast(di, big));
  *h = hn::BitCast(d, hn::ShiftLeft<hwy::MantissaBits<float>()>(e));
  return hn::MulSub(p, hn::Mul(r, r), r);
}
// Phi(-b) = erfc(b / sqrt2) / 2 = h q for 0 <= b <= 13 (b clamped to the table for erfcx when
// kClamp, so that the result is only right up to the table's end, where it is below 1e-8); returns
// q, sets h and m with e^(-b^2 / 2) = 2 h (1 + m).
template <bool kClamp, class D, class V>
HWY_INLINE V gelu_erfc_parts(D d, V b, V* h, V* m) {
  const hn::RebindToSigned<D> di;
  *m = exp_neg_half_square(d, b, h);
  const V bt = kClamp ? hn::Min(b, hn::Set(d, kGeluTableMax<D>)) : b;
  const V magic = hn::Set(d, 12582912.0f);
  const V big = hn::MulAdd(bt, hn::Set(d, 4.0f / 3), magic);  // magic + round(b / 0.75)
  const V t = hn::NegMulAdd(hn::Sub(big, magic), hn::Set(d, 0.75f), bt);  // exact
  const auto ix = hn::IndicesFromVec(
      d, hn::And(hn::BitCast(di, big), hn::Set(di, static_cast<int32_t>(kGeluTableLanes<D>() - 1))));
  auto coef = [&](size_t j) { return hn::TableLookupLanes(hn::Load(d, kGeluErfcx[j]), ix); };
  V r = coef(6);
  r = hn::MulAdd(r, t, coef(5));
  r = hn::MulAdd(r, t, coef(4));
  r = hn::MulAdd(r, t, coef(3));
  r = hn::MulAdd(r, t, coef(2));
  r = hn::MulAdd(r, t, coef(1));
  const V w = hn::MulAdd(r, t, coef(7));  // erfcx = c0 + w
  const V c0 = coef(0);
  // (c0 + w)(1 + m), rounded once at the end
  return hn::Add(c0, hn::MulAdd(c0, *m, hn::MulAdd(w, *m, w)));
}
// Whether every lane of x takes the table form: x >= -kGeluTableMax (not NaN; +inf is fine).
template <class D, class V>
HWY_INLINE bool gelu_table_ok(D d, V x) {
  return hn::AllTrue(d, hn::Ge(x, hn::Set(d, -kGeluTableMax<D>)));
}
// x Phi(-|x|) for x < 0, x - x Phi(-|x|) for x >= 0 (in one rounding; x clamped to FLT_MAX in
// the product, so that +inf gives +inf); past the table's end Phi(-|x|) < 1e-8 no longer shows
// beside 1.
template <class D, class V>
HWY_INLINE V gelu_table(D d, V x) {
  V h, m;
  const V q = gelu_erfc_parts<false>(d, hn::Min(hn::Abs(x), hn::Set(d, kGeluTableMax<D>)), &h, &m);
  const V p = hn::Mul(h, q);  // Phi(-|x|), exact: h is a power of 2
  return hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Mul(x, p),
                        hn::NegMulAdd(hn::Min(x, hn::Set(d, kMax<float>)), p, x));
}
// g (Phi(x) + x phi(x)), phi(x) = e^(-x^2 / 2) / sqrt(2 pi).
template <class D, class V>
HWY_INLINE V gelu_backward_table(D d, V g, V x) {
  V h, m;
  const V b = hn::Min(hn::Abs(x), hn::Set(d, 13.0f));
  const V q = gelu_erfc_parts<true>(d, b, &h, &m);
  const auto neg = hn::Lt(x, hn::Zero(d));
  // 2 x / sqrt(2 pi); past 13, x phi(x) < 1e-35 is dropped
  const V k = hn::Mul(hn::Min(x, hn::Set(d, 13.0f)), hn::Set(d, 0.797884560802865355879892f));
  // Phi(x) + x phi(x) = [x >= 0] + h (+-q + k (1 + m))
  const V w = hn::MulAdd(q, hn::IfThenElse(neg, hn::Set(d, 1.0f), hn::Set(d, -1.0f)), hn::MulAdd(k, m, k));
  return hn::Mul(g, hn::MulAdd(h, w, hn::IfThenZeroElse(neg, hn::Set(d, 1.0f))));
}

// x Phi(x) = x erfc(-x / sqrt(2)) / 2, which keeps its relative precision for negative x, where
// 1 + erf(x / sqrt(2)) cancels. Float32 lanes take the table form above when every lane lies in
// its range (x >= -11.6 with 16 lanes, -5.6 with 8), else compute in float64; below -12.5 (a
// result under 1e-34), and for infinities and NaN, the C library's erfc.
struct GeluF {
  static constexpr bool staged16 = true;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    using L = L_t<D>;
    auto sf = [](L c) {  // in float64: erfc's argument must not round
      const double v = c;
      return static_cast<L>(v * 0.5 * std::erfc(v * -M_SQRT1_2));
    };
    if constexpr (kGeluTableLanes<D>() != 0) {
      if (HWY_LIKELY(gelu_table_ok(d, x))) return gelu_table(d, x);
    }
    return f32_via_f64(
        d, x, L(-12.5), kMax<L>,
        [](auto dd, auto v) {
          decltype(v) lo;
          const auto z = neg_x_over_sqrt2(dd, v, &lo);
          return hn::Mul(hn::Mul(v, hn::Set(dd, 0.5)), erfc_vec(dd, z, lo));
        },
        sf);
  }
};
// x^e for a Scalar exponent (in the compute type, as PyTorch's). Float32 lanes take |x|^e as
// exp(e log|x|) in float64, rounded once (as good as correctly rounded: the float64 error is far
// below a float32 ulp), then pow's sign rules: an odd integer exponent keeps x's sign, another
// integer drops it, any other exponent makes a negative x NaN. Zeros, subnormals, infinities and
// NaN, a non-finite exponent, and float64 data (whose libm result this could not match) go
// through the C library lane by lane.
struct PowScalarF {
  static constexpr bool staged16 = true;
  double e;
  bool vector_ok, integer, odd;  // of the exponent as the float32 lanes use it (see make())
  static PowScalarF make(double e) {
    const double ef = static_cast<float>(e);  // 2.0000000001 is 2 there: x's sign must go
    const bool integer = std::isfinite(ef) && std::nearbyint(ef) == ef;
    return {e, std::isfinite(ef), integer, integer && std::fmod(std::fabs(ef), 2.0) == 1.0};
  }
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    using L = L_t<D>;
    const L le = static_cast<L>(e);
    const auto sf = [le](L c) { return std::pow(c, le); };
    if constexpr (kF32<L>) {
      const V a = hn::Abs(x);
      const auto normal = hn::And(hn::Ge(a, hn::Set(d, kMinNormal<L>)), hn::Le(a, hn::Set(d, kMax<L>)));
      if (HWY_LIKELY(vector_ok && hn::AllTrue(d, normal))) {
        const double e64 = le;
        V r = via_f64(d, a, [e64](auto dd, auto v) {
          // beyond [-110, 100] the float32 result is 0 or inf either way
          const auto y = hn::Mul(hn::Set(dd, e64), log_f64_normal(dd, v));
          return exp_f64_bounded(dd, hn::Min(hn::Max(y, hn::Set(dd, -110.0)), hn::Set(dd, 100.0)));
        });
        const auto negative = hn::Lt(x, hn::Zero(d));
        if (odd) return hn::IfThenElse(negative, hn::Neg(r), r);
        if (integer) return r;
        return hn::IfThenElse(negative, hn::Set(d, std::numeric_limits<L>::quiet_NaN()), r);
      }
    }
    return per_lane(d, x, sf);
  }
};

// The recurrences of digamma and trigamma, which step y -> y + 1 until y >= 10 (float64 lanes,
// y >= 0): step(m, y + i) for i = 0..9, m the lanes where y + i < 10, then the final y. Ten masked
// steps, each lane's mask known from y alone: a loop until every lane was done waited on each
// step's compare and mispredicted its exit (digamma over 64K positive floats 1.6x slower, Zen 5).
template <class D, class V, class Step>
HWY_INLINE V recur_to_ten(D d, V y, const Step& step) {
  if (hn::AllFalse(d, hn::Lt(y, hn::Set(d, 10.0)))) return y;
  V count = hn::Zero(d);
  for (int i = 0; i < 10; ++i) {
    const auto m = hn::Lt(y, hn::Set(d, 10.0 - i));
    step(m, hn::Add(y, hn::Set(d, static_cast<double>(i))));
    count = hn::Add(count, hn::IfThenElseZero(m, hn::Set(d, 1.0)));
  }
  return hn::Add(y, count);
}

// ---- digamma ----
// On float64 vectors: the recurrence psi(y) = psi(y + 1) - 1 / y up to y >= 10, then the
// asymptotic series; negative x by reflection, psi(x) = psi(1 - x) - pi / tan(pi x), with
// tan(pi x) taken at x - round(x) (exact), so that large x keep their precision.
template <class D, class V>
HWY_INLINE V digamma_f64(D d, V x) {
  const V zero = hn::Zero(d), one = hn::Set(d, 1.0), ten = hn::Set(d, 10.0);
  const V nan = hn::Set(d, std::numeric_limits<double>::quiet_NaN());
  const V inf = hn::Set(d, std::numeric_limits<double>::infinity());
  const V pi = hn::Set(d, 3.14159265358979323846);
  const auto neg = hn::Lt(x, zero);
  V y = hn::IfThenElse(hn::IsFinite(x), hn::IfThenElse(neg, hn::Sub(one, x), x), ten);
  // -sum 1/y_i as one fraction num / den, one division in all (den: a product of at most ten
  // y's, all but the first >= 1, so it neither overflows nor loses precision)
  V num = zero, den = one;
  y = recur_to_ten(d, y, [&](auto m, V yi) {
    num = hn::IfThenElse(m, hn::MulSub(num, yi, den), num);
    den = hn::IfThenElse(m, hn::Mul(den, yi), den);
  });
  const V r = hn::Div(num, den);
  const V z = hn::Div(one, hn::Mul(y, y));
  V tail = hn::NegMulAdd(z, hn::Set(d, 1.0 / 12), hn::Set(d, 691.0 / 32760));
  for (double c : {1.0 / 132, 1.0 / 240, 1.0 / 252, 1.0 / 120, 1.0 / 12}) tail = hn::NegMulAdd(z, tail, hn::Set(d, c));
  V res = hn::Sub(hn::Add(r, hn::Log(d, y)), hn::MulAdd(hn::Set(d, 0.5), hn::Div(one, y), hn::Mul(z, tail)));
  if (!hn::AllFalse(d, neg)) {  // the reflection
    const V t = hn::Mul(hn::Sub(x, hn::Round(x)), pi);
    res = hn::IfThenElse(neg, hn::Sub(res, hn::Div(hn::Mul(pi, hn::Cos(d, t)), hn::Sin(d, t))), res);
    res = hn::IfThenElse(hn::And(neg, hn::Or(hn::Eq(t, zero), hn::Not(hn::IsFinite(x)))), nan, res);  // poles, -inf
  }
  res = hn::IfThenElse(hn::Eq(x, zero), hn::CopySign(inf, hn::Neg(x)), res);
  return hn::IfThenElse(hn::Or(hn::IsNaN(x), hn::Eq(x, inf)), x, res);
}
struct DigammaF {
  static constexpr bool staged16 = true;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    if constexpr (kF32<L_t<D>>) {
      return via_f64(d, x, [](auto dd, auto v) { return digamma_f64(dd, v); });
    } else {
      return digamma_f64(d, x);
    }
  }
};

// trigamma (polygamma(1, x)) in float64, as digamma_f64: the recurrence
// psi1(y) = psi1(y + 1) + 1/y^2 up to y >= 10, then the asymptotic series
// 1/y + 1/(2y^2) + sum B_2k / y^(2k+1); below 1/2 the reflection
// psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x). Poles (0 and the negative integers) and -inf give +inf.
template <class D, class V>
HWY_INLINE V trigamma_f64(D d, V x) {
  const V zero = hn::Zero(d), one = hn::Set(d, 1.0), ten = hn::Set(d, 10.0);
  const V inf = hn::Set(d, std::numeric_limits<double>::infinity());
  const V pi = hn::Set(d, 3.14159265358979323846);
  const auto reflect = hn::Lt(x, hn::Set(d, 0.5));
  V y = hn::IfThenElse(hn::IsFinite(x), hn::IfThenElse(reflect, hn::Sub(one, x), x), ten);
  // sum 1/y_i^2 as one fraction, as digamma_f64's (y >= 1/2 here: den stays below 1e12)
  V num = zero, den = one;
  y = recur_to_ten(d, y, [&](auto m, V yi) {
    const V y2 = hn::Mul(yi, yi);
    num = hn::IfThenElse(m, hn::MulAdd(num, y2, den), num);
    den = hn::IfThenElse(m, hn::Mul(den, y2), den);
  });
  const V r = hn::Div(num, den);
  const V z = hn::Div(one, hn::Mul(y, y));
  V series = hn::Set(d, 7.0 / 6);
  for (double c : {691.0 / 2730, 5.0 / 66, 1.0 / 30, 1.0 / 42, 1.0 / 30})
    series = hn::NegMulAdd(z, series, hn::Set(d, c));
  series = hn::MulAdd(z, hn::NegMulAdd(z, series, hn::Set(d, 1.0 / 6)), hn::Add(one, hn::Div(hn::Set(d, 0.5), y)));
  V res = hn::Add(r, hn::Div(series, y));
  if (!hn::AllFalse(d, reflect)) {
    const V s = hn::Sin(d, hn::Mul(hn::Sub(x, hn::Round(x)), pi));
    res = hn::IfThenElse(reflect, hn::Sub(hn::Div(hn::Mul(pi, pi), hn::Mul(s, s)), res), res);
  }
  const auto pole = hn::And(hn::Le(x, zero), hn::Eq(x, hn::Round(x)));  // (-inf included)
  res = hn::IfThenElse(pole, inf, res);
  res = hn::IfThenElse(hn::Eq(x, inf), zero, res);
  return hn::IfThenElse(hn::IsNaN(x), x, res);
}
struct TrigammaF {
  static constexpr bool staged16 = true;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    if constexpr (kF32<L_t<D>>) {
      return via_f64(d, x, [](auto dd, auto v) { return trigamma_f64(dd, v); });
    } else {
      return trigamma_f64(d, x);
    }
  }
};

// erfinv in double: Winitzki's closed-form estimate, then Newton steps on erf (or on erfc
// near +-1, where 1 - |x| is exact and keeps the relative precision).
inline double erfinv_double(double x) {
  if (std::isnan(x) || x < -1 || x > 1) return std::numeric_limits<double>::quiet_NaN();
  if (x == 1 || x == -1) return std::copysign(std::numeric_limits<double>::infinity(), x);
  if (x == 0) return x;
  const double ax = std::fabs(x);
  constexpr double a = 0.147, two_over_pi_a = 2 / (M_PI * a);
  const double ln = std::log((1 - ax) * (1 + ax));
  const double t = two_over_pi_a + ln / 2;
  double y = std::sqrt(std::sqrt(t * t - ln / a) - t);
  constexpr double two_over_sqrt_pi = 1.12837916709551257390;
  for (int i = 0; i < 4; ++i) {
    const double err = ax < 0.5 ? std::erf(y) - ax : (1 - ax) - std::erfc(y);
    y -= err / (two_over_sqrt_pi * std::exp(-y * y));
  }
  return std::copysign(y, x);
}
// Float32 lanes inside (-1, 1): polynomials in float64, fitted as those of erf (relative error
// below 1e-9), in w = -log(1 - x^2):
//   erfinv(x) / x   in w             for w <= 6.25 (|x| <= 0.9981),
//   |erfinv(x)|     in sqrt(w)       for 2.5 <= sqrt(w) <= 4.1 (float32's |x| < 1).
// Other lanes, and float64 data, take erfinv_double.
constexpr double kErfinvCentral[] = {1.653654563e+00,  7.504943076e-01,  -5.892256867e-02, -2.260409645e-02,
                                     1.780840497e-02,  -4.140180723e-03, -1.272020632e-03, 1.242690315e-03,
                                     -2.633802051e-04, -1.350811619e-04, 9.204976083e-05,  1.578799986e-06,
                                     -1.090344127e-05};
constexpr double kErfinvTail[] = {3.134132316e+00,  8.047620392e-01,  2.750907274e-03,
                                  -1.167190789e-03, 3.282788218e-04,  -7.105947632e-05,
                                  7.715131335e-06,  3.822991521e-06,  -2.046309820e-06};
struct ErfinvF {
  static constexpr bool staged16 = true;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    using L = L_t<D>;
    return f32_via_f64(
        d, x, -L(0.99999994), L(0.99999994),
        [](auto dd, auto v) {
          const auto one = hn::Set(dd, 1.0);
          const auto w = hn::Neg(hn::Log(dd, hn::Mul(hn::Sub(one, v), hn::Add(one, v))));
          const auto central = hn::Mul(v, poly_mapped(dd, w, 0.0, 6.25, kErfinvCentral));
          const auto tail = hn::CopySign(poly_mapped(dd, hn::Sqrt(w), 2.5, 4.1, kErfinvTail), v);
          return hn::IfThenElse(hn::Le(w, hn::Set(dd, 6.25)), central, tail);
        },
        [](L c) { return static_cast<L>(erfinv_double(static_cast<double>(c))); });
  }
};

// Calls run(f) with the functor of unary `op` for storage type T; false when op has no float form.
template <class T, class Run>
HWY_INLINE bool visit_unary(UnaryOp op, const UnaryParams& p, const Run& run) {
  auto call = [&](const auto& f) {
    run(f);
    return true;
  };
  auto param = [](const std::optional<Scalar>& s, double dflt) { return s ? s->toDouble() : dflt; };
  switch (op) {
    case UnaryOp::Abs: return call(AbsF{});
    case UnaryOp::Neg: return call(NegF{});
    case UnaryOp::Sign: return call(SignF{});
    case UnaryOp::Exp: return call(ExpF{});
    case UnaryOp::Exp2: return call(Exp2F{});
    case UnaryOp::Expm1: return call(Expm1F{});
    case UnaryOp::Log: return call(LogF{});
    case UnaryOp::Log2: return call(Log2F{});
    case UnaryOp::Log10: return call(Log10F{});
    case UnaryOp::Log1p: return call(Log1pF{});
    case UnaryOp::Sqrt: return call(SqrtF{});
    case UnaryOp::Rsqrt: return call(RsqrtF{});
    case UnaryOp::Sin: return call(SinF{});
    case UnaryOp::Cos: return call(CosF{});
    case UnaryOp::Tan: return call(TanF{});
    case UnaryOp::Asin: return call(AsinF{});
    case UnaryOp::Acos: return call(AcosF{});
    case UnaryOp::Atan: return call(AtanF{});
    case UnaryOp::Tanh: return call(TanhF{});
    case UnaryOp::Sinh: return call(SinhF{});
    case UnaryOp::Cosh: return call(CoshF{});
    case UnaryOp::Asinh: return call(AsinhF{});
    case UnaryOp::Acosh: return call(AcoshF{});
    case UnaryOp::Atanh: return call(AtanhF{});
    case UnaryOp::Sigmoid: return call(SigmoidF{});
    case UnaryOp::Relu: return call(ReluF{});
    case UnaryOp::Silu: return call(SiluF{});
    case UnaryOp::Hardswish: return call(HardswishF{});
    case UnaryOp::Hardsigmoid: return call(HardsigmoidF{});
    case UnaryOp::Erf: return call(ErfF{});
    case UnaryOp::Erfc: return call(ErfcF{});
    case UnaryOp::Erfinv: return call(ErfinvF{});
    case UnaryOp::Digamma: return call(DigammaF{});
    case UnaryOp::Trigamma: return call(TrigammaF{});
    case UnaryOp::LogSigmoid: return call(LogSigmoidF{});
    case UnaryOp::Floor: return call(FloorF{});
    case UnaryOp::Ceil: return call(CeilF{});
    case UnaryOp::Round: return call(RoundF{});
    case UnaryOp::Trunc: return call(TruncF{});
    case UnaryOp::Frac: return call(FracF{});
    case UnaryOp::Reciprocal: return call(ReciprocalF{});
    case UnaryOp::Square: return call(SquareF{});
    case UnaryOp::Gelu: return call(GeluF{});
    case UnaryOp::GeluTanh: return call(GeluTanhF{});
    case UnaryOp::LeakyRelu: return call(LeakyReluF{param(p.a, 0.01)});
    case UnaryOp::Elu: return call(EluF{param(p.a, 1), param(p.b, 1), param(p.c, 1)});
    case UnaryOp::Softplus: return call(SoftplusF{param(p.a, 1), param(p.b, 20)});
    case UnaryOp::Clamp: return call(ClampF{param(p.a, 0), param(p.b, 0), p.a.has_value(), p.b.has_value()});
    case UnaryOp::NanToNum:
      return call(NanToNumF{param(p.a, 0), param(p.b, static_cast<double>(std::numeric_limits<T>::max())),
                           param(p.c, static_cast<double>(std::numeric_limits<T>::lowest()))});
    case UnaryOp::PowScalar: {
      // PyTorch's exact shortcuts for the common exponents; the rest go through std::pow.
      const double e = p.a->toDouble();
      if (e == 0) return call(OneF{});  // even for NaN, as std::pow
      if (e == 1) return call(IdentityF{});
      if (e == 2) return call(SquareF{});
      if (e == 3) return call(CubeF{});
      if (e == 0.5) return call(SqrtF{});
      if (e == -0.5) return call(RsqrtF{});
      if (e == -1) return call(ReciprocalF{});
      if (e == -2) return call(InvSquareF{});
      return call(PowScalarF::make(e));
    }
    case UnaryOp::BitwiseNot: break;
  }
  return false;
}

// ==== binary ===================================================================================
// ---- binary functors ------------------------------------------------------------------------
template <class L>
struct AddF {
  L alpha;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b) const {
    return alpha == L(1) ? hn::Add(a, b) : hn::MulAdd(hn::Set(d, alpha), b, a);
  }
};
template <class L>
struct SubF {
  L alpha;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b) const {
    return alpha == L(1) ? hn::Sub(a, b) : hn::NegMulAdd(hn::Set(d, alpha), b, a);
  }
};
struct MulF {
  template <class D, class V>
  HWY_INLINE V vec(D, V a, V b) const { return hn::Mul(a, b); }
};
struct DivF {
  template <class D, class V>
  HWY_INLINE V vec(D, V a, V b) const { return hn::Div(a, b); }
};
struct DivTruncF {
  template <class D, class V>
  HWY_INLINE V vec(D, V a, V b) const { return hn::Trunc(hn::Div(a, b)); }
};
// Minimum/maximum propagate NaN from either side (a + b is then NaN).
struct MinimumF {
  template <class D, class V>
  HWY_INLINE V vec(D, V a, V b) const {
    return hn::IfThenElse(hn::Or(hn::IsNaN(a), hn::IsNaN(b)), hn::Add(a, b), hn::Min(a, b));
  }
};


// C's fmod. Float32 lanes compute in float64, where it is exact: for |a / b| < 2^24 the float64
// quotient truncates to the true integer quotient q (a / b is at least 2^-24 from any other
// integer), and a - q b is a float32 number that one fma gives exactly. The sign of a result of
// zero is a's. Other lanes, and float64 data, take the C library's fmod.
template <class D, class V>
HWY_INLINE V fmod_vec(D d, V a, V b) {
  using L = L_t<D>;
  auto sf = [](L x, L y) { return std::fmod(x, y); };
  if constexpr (kF32<L>) {
    const auto ok = hn::And(hn::Lt(hn::Abs(a), hn::Mul(hn::Abs(b), hn::Set(d, L(16777216)))),
                            hn::And(hn::Ne(b, hn::Zero(d)), hn::IsFinite(b)));
    if (HWY_LIKELY(hn::AllTrue(d, ok))) {
      const V r = via_f64(d, a, b, [](auto dd, auto x, auto y) { return hn::NegMulAdd(hn::Trunc(hn::Div(x, y)), y, x); });
      return hn::CopySign(r, a);
    }
  }
  return per_lane(d, a, b, sf);
}
struct FmodF {
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b) const { return fmod_vec(d, a, b); }
};
// Python's %: the result takes the divisor's sign.
struct RemainderF {
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b) const {
    const V mod = fmod_vec(d, a, b);
    const auto fix = hn::And(hn::Ne(mod, hn::Zero(d)), hn::Xor(hn::Lt(b, hn::Zero(d)), hn::Lt(mod, hn::Zero(d))));
    return hn::IfThenElse(fix, hn::Add(mod, b), mod);
  }
};
// Python's floor division on floats (PyTorch's div_floor): exact through fmod, never off by one.
struct DivFloorF {
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b) const {
    using L = L_t<D>;
    const V zero = hn::Zero(d), one = hn::Set(d, L(1));
    const V quot = hn::Div(a, b);
    const V mod = fmod_vec(d, a, b);
    V div = hn::Div(hn::Sub(a, mod), b);
    const auto fix = hn::And(hn::Ne(mod, zero), hn::Xor(hn::Lt(b, zero), hn::Lt(mod, zero)));
    div = hn::IfThenElse(fix, hn::Sub(div, one), div);
    V floordiv = hn::Floor(div);
    floordiv = hn::IfThenElse(hn::Gt(hn::Sub(div, floordiv), hn::Set(d, L(0.5))), hn::Add(floordiv, one), floordiv);
    floordiv = hn::IfThenElse(hn::Eq(div, zero), hn::CopySign(zero, quot), floordiv);
    return hn::IfThenElse(hn::Eq(b, zero), quot, floordiv);
  }
};
struct CopysignF {
  template <class D, class V>
  HWY_INLINE V vec(D, V a, V b) const { return hn::CopySign(a, b); }
};
// Float32 lanes with finite nonzero bases and finite exponents: e^(b log |a|) in float64, whose
// error stays far below float32's rounding (b log |a| is clamped to +-200, past float32's range
// both ways), negated for a negative base and an odd exponent, NaN for a negative base and a
// non-integer exponent (C's pow); any other lane in the vector (a zero or non-finite operand),
// and float64 data, take the C library's pow. (Random signs sent every vector to the C library:
// 2.5 ns an element.)
struct PowF {
  static constexpr bool staged16 = true;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b) const {
    using L = L_t<D>;
    if constexpr (kF32<L>) {
      const auto lim = [](auto dd) { return hn::Set(dd, 200.0); };
      const auto finite = hn::And(hn::IsFinite(a), hn::IsFinite(b));
      if (HWY_LIKELY(hn::AllTrue(d, hn::And(finite, hn::Gt(a, hn::Zero(d)))))) {
        return via_f64(d, a, b, [lim](auto dd, auto x, auto y) {
          return exp_f64_bounded(dd, hn::Min(hn::Max(hn::Mul(y, log_f64_normal(dd, x)), hn::Neg(lim(dd))), lim(dd)));
        });
      }
      if (hn::AllTrue(d, hn::And(finite, hn::Ne(a, hn::Zero(d))))) {
        return via_f64(d, a, b, [lim](auto dd, auto x, auto y) {
          const auto r =
              exp_f64_bounded(dd, hn::Min(hn::Max(hn::Mul(y, log_f64_normal(dd, hn::Abs(x))), hn::Neg(lim(dd))), lim(dd)));
          const auto half = hn::Mul(y, hn::Set(dd, 0.5));
          const auto integer = hn::Eq(hn::Floor(y), y);
          const auto odd = hn::And(integer, hn::Ne(hn::Floor(half), half));
          const auto signed_r = hn::IfThenElse(odd, hn::Neg(r), r);
          const auto negative = hn::IfThenElse(integer, signed_r, hn::Set(dd, std::numeric_limits<double>::quiet_NaN()));
          return hn::IfThenElse(hn::Lt(x, hn::Zero(dd)), negative, r);
        });
      }
    }
    return per_lane(d, a, b, [](L x, L y) { return std::pow(x, y); });
  }
};
template <class L>
struct ThresholdBackwardF {
  L threshold;
  template <class D, class V>
  HWY_INLINE V vec(D d, V grad, V x) const { return hn::IfThenZeroElse(hn::Le(x, hn::Set(d, threshold)), grad); }
};
template <class L>
struct LeakyReluBackwardF {
  L slope;
  template <class D, class V>
  HWY_INLINE V vec(D d, V grad, V x) const {
    return hn::IfThenElse(hn::Gt(x, hn::Zero(d)), grad, hn::Mul(grad, hn::Set(d, slope)));
  }
};
// PyTorch's log_sigmoid_backward with its buffer z = e^-|x| recomputed: grad (1 - z / (1 + z))
// for x < 0, grad z / (1 + z) otherwise (both sigmoid(-x)).
struct LogSigmoidBackwardF {
  static constexpr bool staged16 = true;
  template <class D, class V>
  HWY_INLINE V vec(D d, V grad, V x) const {
    const V one = hn::Set(d, L_t<D>(1));
    const V z = exp_neg_abs(d, x);
    const V s = hn::Div(z, hn::Add(one, z));
    return hn::Mul(hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Sub(one, s), s), grad);
  }
};
// PyTorch's hardtanh_backward: the gradient strictly inside (lo, hi), else 0. A NaN input gets 0
// as in its vector loop (its scalar loop, which only serves the tails, passes the gradient).
template <class L>
struct HardtanhBackwardF {
  L lo, hi;
  template <class D, class V>
  HWY_INLINE V vec(D d, V grad, V x) const {
    return hn::IfThenElseZero(hn::And(hn::Gt(x, hn::Set(d, lo)), hn::Lt(x, hn::Set(d, hi))), grad);
  }
};
// PyTorch's elu_backward, its products in the same order: for x <= 0, from the input
// grad * input_scale * (alpha * scale) * e^(input_scale x), or from the result r
// grad * input_scale * (r + alpha * scale); grad * scale above.
template <class L, bool kOfResult>
struct EluBackwardF {
  static constexpr bool staged16 = true;
  L negcoef, poscoef, negiptcoef;
  template <class D, class V>
  HWY_INLINE V vec(D d, V grad, V x) const {
    const auto neg = hn::Le(x, hn::Zero(d));
    const V g = hn::Mul(grad, hn::Set(d, negiptcoef));
    V below;
    if constexpr (kOfResult) {
      below = hn::Mul(g, hn::Add(x, hn::Set(d, negcoef)));
    } else {
      const V m = hn::IfThenElseZero(neg, hn::Mul(x, hn::Set(d, negiptcoef)));
      const V e = guarded(d, m, -kExpLimit<L>, kExpLimit<L>, [d](V v) { return exp_vec<1>(d, v); },
                          [](L c) { return std::exp(c); });
      below = hn::Mul(hn::Mul(g, hn::Set(d, negcoef)), e);
    }
    return hn::IfThenElse(neg, below, hn::Mul(grad, hn::Set(d, poscoef)));
  }
};
// atan2(a, b) of float32 lanes in float64: t = min(|a|, |b|) / max(|a|, |b|) in [0, 1] (the
// quotient of float32 numbers neither overflows nor underflows in float64), atan(t) = t + t s P(s)
// at s = t^2 with P of degree 11, a least-squares fit reweighted toward minimax of (atan(t) - t)
// / (t s) (relative error 1e-11, 2e-4 of a float32 ulp), then pi/2 - that where |a| > |b|, pi -
// that where b < 0, and a's sign: within a few float64 ulp, so the float32 result is as good as
// correctly rounded. Through Highway's float64 Atan of a / b (its own reduction divides again,
// its polynomial serves float64 precision) atan2 of 64K float32s took 67 us, this way 37. Zero,
// infinite and NaN operands, and float64 data, take the C library's atan2.
struct Atan2F {
  static constexpr bool staged16 = true;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b) const {
    using L = L_t<D>;
    if constexpr (kF32<L>) {
      const auto ok = hn::And(hn::And(hn::IsFinite(a), hn::IsFinite(b)), hn::Ne(b, hn::Zero(d)));
      if (HWY_LIKELY(hn::AllTrue(d, ok))) {
        return via_f64(d, a, b, [](auto dd, auto y, auto x) {
          static constexpr std::array<double, 12> kP = {
              -0.33333333111105223,  0.19999984221740799,  -0.14285320884214031,  0.11106143417258506,
              -0.090536295170164843, 0.075105110181623427, -0.06056955598994606,  0.04417909121999862,
              -0.026547765481823117, 0.011778633170783981, -0.0033264834831360571, 0.00044069252114125462};
          const auto ax = hn::Abs(x), ay = hn::Abs(y);
          const auto t = hn::Div(hn::Min(ax, ay), hn::Max(ax, ay));
          const auto s = hn::Mul(t, t);
          auto r = hn::MulAdd(hn::Mul(t, s), estrin(dd, s, kP), t);
          r = hn::IfThenElse(hn::Gt(ay, ax), hn::Sub(hn::Set(dd, 1.57079632679489661923), r), r);
          r = hn::IfThenElse(hn::Lt(x, hn::Zero(dd)), hn::Sub(hn::Set(dd, 3.14159265358979323846), r), r);
          return hn::CopySign(r, y);
        });
      }
    }
    return per_lane(d, a, b, [](L y, L x) { return std::atan2(y, x); });
  }
};

// a * log(b) with LogF's log, one rounding each as PyTorch's kernel; 0 where a is 0 unless b is
// NaN (then NaN), whatever log(b) is (0 * log(0) is 0, not NaN).
struct XlogyF {
  static constexpr bool staged16 = true;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b) const {
    const V r = hn::Mul(a, LogF{}.vec(d, b));
    return hn::IfThenZeroElse(hn::AndNot(hn::IsNaN(b), hn::Eq(a, hn::Zero(d))), r);
  }
};

// fmax/fmin: a NaN b loses to a (a NaN a to b, NaN when both are); a tie takes a.
template <bool kMax>
struct FmaxF {
  template <class D, class V>
  HWY_INLINE V vec(D, V a, V b) const {
    return hn::IfThenElse(hn::Or(kMax ? hn::Ge(a, b) : hn::Le(a, b), hn::IsNaN(b)), a, b);
  }
};

// hypot: float32 lanes as sqrt(a^2 + b^2) in float64 (the squares exact, no overflow, rounded
// once: glibc's hypotf, which libtorch calls); an infinite or NaN operand (hypot(inf, NaN) is inf)
// and float64 data take the C library's hypot.
struct HypotF {
  static constexpr bool staged16 = true;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b) const {
    using L = L_t<D>;
    if constexpr (kF32<L>) {
      if (HWY_LIKELY(hn::AllTrue(d, hn::And(hn::IsFinite(a), hn::IsFinite(b))))) {
        return via_f64(d, a, b, [](auto, auto x, auto y) { return hn::Sqrt(hn::MulAdd(x, x, hn::Mul(y, y))); });
      }
    }
    return per_lane(d, a, b, [](L x, L y) { return std::hypot(x, y); });
  }
};

// grad (Phi(x) + x phi(x)), Phi(x) = erfc(-x / sqrt(2)) / 2 as in GeluF (float32 lanes by the
// table form, or in float64 when a lane lies outside its range); below -12.5 (a result under
// 1e-34 of grad) the C library's erfc.
// PyTorch's hardswish_backward and hardsigmoid_backward kernels (1/6 as a float constant in
// every dtype, as theirs); NaN inputs pass the gradient through hardswish's, zero hardsigmoid's.
struct HardswishBackwardF {
  template <class D, class V>
  HWY_INLINE V vec(D d, V g, V x) const {
    using L = L_t<D>;
    const V mid = hn::Mul(g, hn::Add(hn::Div(x, hn::Set(d, L(3))), hn::Set(d, L(0.5))));
    return hn::IfThenZeroElse(hn::Lt(x, hn::Set(d, L(-3))), hn::IfThenElse(hn::Le(x, hn::Set(d, L(3))), mid, g));
  }
};
struct HardsigmoidBackwardF {
  template <class D, class V>
  HWY_INLINE V vec(D d, V g, V x) const {
    using L = L_t<D>;
    const auto inside = hn::And(hn::Gt(x, hn::Set(d, L(-3))), hn::Lt(x, hn::Set(d, L(3))));
    return hn::IfThenElseZero(inside, hn::Mul(g, hn::Set(d, static_cast<L>(1.0f / 6.0f))));
  }
};
struct SiluBackwardF {
  static constexpr bool staged16 = true;
  template <class D, class V>
  HWY_INLINE V vec(D d, V g, V x) const {
    using L = L_t<D>;
    const V s = SigmoidF{}.vec(d, x);
    return hn::Mul(hn::Mul(g, s), hn::MulAdd(x, hn::Sub(hn::Set(d, L(1)), s), hn::Set(d, L(1))));
  }
};
// PyTorch's sigmoid_backward and tanh_backward kernels, from the forward result y, in their order
// of operations: (g (1 - y)) y and g (1 - y y), one pass where the composites made three. One
// functor for both, (g (1 - y m)) k with m = 1 or k = 1 (exact products), so that their loops are
// compiled once.
struct ResultGradF {
  bool tanh;  // else sigmoid
  template <class D, class V>
  HWY_INLINE V vec(D d, V g, V y) const {
    const V one = hn::Set(d, L_t<D>(1));
    return hn::Mul(hn::Mul(g, hn::Sub(one, hn::Mul(y, tanh ? y : one))), tanh ? one : y);
  }
};
// gelu's tanh form differentiated as PyTorch's kernel does, in the compute type: with u = beta (x
// + kappa x^3) and t = tanh u, g (1 + t) / 2 + g x / 2 (1 - t^2) beta (1 + 3 kappa x^2); 16-bit
// data computed in float32 and rounded once. Out of line: one copy per target and lane type
// serves every loop of the kernel (inlined into each, with tanh's, it was 24 KB of library).
template <class D, class V>
HWY_NOINLINE V gelu_tanh_backward_vec(D d, V g, V x) {
  using L = L_t<D>;
  const V beta = hn::Set(d, L(M_SQRT2 * M_2_SQRTPI * 0.5)), kappa = hn::Set(d, L(0.044715)), half = hn::Set(d, L(0.5));
  const V one = hn::Set(d, L(1));
  const V x2 = hn::Mul(x, x);
  const V t = TanhF{}.vec(d, hn::Mul(beta, hn::MulAdd(kappa, hn::Mul(x2, x), x)));
  const V left = hn::Mul(half, hn::Add(one, t));
  const V right = hn::Mul(hn::Mul(hn::Mul(half, x), hn::NegMulAdd(t, t, one)),
                          hn::Mul(beta, hn::MulAdd(hn::Set(d, L(3 * 0.044715)), x2, one)));
  return hn::Mul(g, hn::Add(left, right));
}
struct GeluTanhBackwardF {
  static constexpr bool staged16 = true;
  template <class D, class V>
  HWY_INLINE V vec(D d, V g, V x) const {
    return gelu_tanh_backward_vec(d, g, x);
  }
};
struct GeluBackwardF {
  static constexpr bool staged16 = true;
  template <class D, class V>
  HWY_INLINE V vec(D d, V g, V x) const {
    using L = L_t<D>;
    auto sf = [](L gc, L c) {  // in float64, as GeluF's
      const double v = c;
      return static_cast<L>(gc * (0.5 * std::erfc(v * -M_SQRT1_2) + v * std::exp(-0.5 * v * v) * 0.398942280401432677939946));
    };
    if constexpr (kGeluTableLanes<D>() != 0) {  // +inf gives NaN (inf * 0), as libtorch's
      if (HWY_LIKELY(gelu_table_ok(d, x) && hn::AllTrue(d, hn::Le(x, hn::Set(d, kMax<L>))))) {
        return gelu_backward_table(d, g, x);
      }
    }
    if constexpr (kF32<L>) {
      const auto ok = hn::And(hn::Ge(x, hn::Set(d, L(-12.5))), hn::Le(x, hn::Set(d, kMax<L>)));
      if (HWY_LIKELY(hn::AllTrue(d, ok))) {
        return via_f64(d, g, x, [](auto dd, auto gv, auto xv) {
          decltype(xv) lo;
          const auto z = neg_x_over_sqrt2(dd, xv, &lo);
          const auto cdf = hn::Mul(hn::Set(dd, 0.5), erfc_vec(dd, z, lo));
          // e^(-x^2 / 2); past |z| = 26 it no longer shows beside Phi(x) = 1
          const auto e = exp_neg_square(dd, hn::Min(hn::Abs(z), hn::Set(dd, 26.0)), hn::Mul(hn::Add(z, z), lo));
          return hn::Mul(gv, hn::MulAdd(hn::Mul(xv, e), hn::Set(dd, 0.398942280401432677939946), cdf));
        });
      }
    }
    return per_lane(d, g, x, sf);
  }
};

// Calls run(f) with the functor of binary `op` for storage type T; false when op has no float form.
// kArithmetic: only the ops fx's fused kernels emit (add, sub, mul, div in its three rounding
// modes, pow, minimum, maximum; fx/fused.cpp), so that their loops compile no other functor.
template <class T, bool kArithmetic = false, class Run>
HWY_INLINE bool visit_binary(BinaryOp op, const Scalar& alpha, const UnaryParams& p, const Run& run) {
  auto call = [&](const auto& f) {
    run(f);
    return true;
  };
  using L = lane_t<T>;
  auto param = [](const std::optional<Scalar>& s) { return s.value_or(Scalar(1)).template to<L>(); };
  switch (op) {
    case BinaryOp::Add: return call(AddF<L>{alpha.to<L>()});
    case BinaryOp::Sub: return call(SubF<L>{alpha.to<L>()});
    case BinaryOp::Mul: return call(MulF{});
    case BinaryOp::Div: return call(DivF{});
    case BinaryOp::DivTrunc: return call(DivTruncF{});
    case BinaryOp::DivFloor: return call(DivFloorF{});
    case BinaryOp::Pow: return call(PowF{});
    case BinaryOp::Minimum: return call(MinimumF{});
    case BinaryOp::Maximum: return call(MaximumF{});
    default: break;
  }
  if constexpr (!kArithmetic) {
    switch (op) {
      case BinaryOp::Remainder: return call(RemainderF{});
      case BinaryOp::Fmod: return call(FmodF{});
      case BinaryOp::Atan2: return call(Atan2F{});
      case BinaryOp::Copysign: return call(CopysignF{});
      case BinaryOp::Xlogy: return call(XlogyF{});
      case BinaryOp::Fmax: return call(FmaxF<true>{});
      case BinaryOp::Fmin: return call(FmaxF<false>{});
      case BinaryOp::Hypot: return call(HypotF{});
      case BinaryOp::GeluBackward: return call(GeluBackwardF{});
      case BinaryOp::HardswishBackward: return call(HardswishBackwardF{});
      case BinaryOp::HardsigmoidBackward: return call(HardsigmoidBackwardF{});
      case BinaryOp::SiluBackward: return call(SiluBackwardF{});
      case BinaryOp::SigmoidBackward: return call(ResultGradF{false});
      case BinaryOp::TanhBackward: return call(ResultGradF{true});
      case BinaryOp::GeluTanhBackward: return call(GeluTanhBackwardF{});
      case BinaryOp::Lerp: return call(LerpScalarF<L>{alpha.to<L>()});
      case BinaryOp::ThresholdBackward: return call(ThresholdBackwardF<L>{alpha.to<L>()});
      case BinaryOp::LeakyReluBackward: return call(LeakyReluBackwardF<L>{alpha.to<L>()});
      case BinaryOp::LogSigmoidBackward: return call(LogSigmoidBackwardF{});
      case BinaryOp::HardtanhBackward: return call(HardtanhBackwardF<L>{param(p.a), param(p.b)});
      case BinaryOp::EluBackward:
      case BinaryOp::EluBackwardOfResult: {
        const L negcoef = param(p.a) * param(p.b), poscoef = param(p.b), negiptcoef = param(p.c);
        if (op == BinaryOp::EluBackward) return call(EluBackwardF<L, false>{negcoef, poscoef, negiptcoef});
        return call(EluBackwardF<L, true>{negcoef, poscoef, negiptcoef});
      }
      case BinaryOp::Add:  // (above)
      case BinaryOp::Sub:
      case BinaryOp::Mul:
      case BinaryOp::Div:
      case BinaryOp::DivTrunc:
      case BinaryOp::DivFloor:
      case BinaryOp::Pow:
      case BinaryOp::Minimum:
      case BinaryOp::Maximum:
      case BinaryOp::BitwiseAnd:
      case BinaryOp::BitwiseOr:
      case BinaryOp::BitwiseXor: break;
    }
  }
  return false;
}

// ==== ternary ==================================================================================
struct ClampTensorF {
  template <class D, class V>
  HWY_INLINE V vec(D, V a, V lo, V hi) const {
    const auto nan = hn::Or(hn::IsNaN(a), hn::Or(hn::IsNaN(lo), hn::IsNaN(hi)));
    return hn::IfThenElse(nan, hn::Add(a, hn::Add(lo, hi)), hn::Min(hn::Max(a, lo), hi));
  }
};

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_POINTWISE_FUNCTORS_INL_H_
