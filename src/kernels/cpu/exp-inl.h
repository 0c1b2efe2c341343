// e^x for float32 lanes in about half the operations of Highway's Exp, within an ulp
// (PointwiseAccuracy.Float32ExpFamilyWithinUlps): the pointwise kernels' exponential family
// (pointwise_functors-inl.h) and softmax's. Compiled once per SIMD target (include after
// hwy/highway.h in a file using foreach_target.h).

#if defined(EMBER_KERNELS_EXP_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_EXP_INL_H_
#undef EMBER_KERNELS_EXP_INL_H_
#else
#define EMBER_KERNELS_EXP_INL_H_
#endif

#include <hwy/contrib/math/math-inl.h>

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// e^(K x) (K = +-1, +-2) as s (1 + q), s = 2^n: n = round(K x / ln 2) (adding 1.5 * 2^23 rounds
// it, and leaves n in the low bits of the sum, whence s's exponent field by one shift and add),
// r = x - n ln2 / K in two FMAs (the first exact), and e^(K r) - 1 = y + y^2 Q(y) at y = K r,
// |y| <= ln2 / 2, with Q of degree 4: a float32 minimax fit to (e^y - 1 - y) / y^2 (relative
// error of e^y below 3.2e-9, a twentieth of a float32 ulp), K^k folded into the coefficients
// (exact: K is a power of 2). Valid while K x lies in [-87.3, 88.3] (s and the result normal):
// the callers keep their lanes there. Returns q and sets s.
template <int K, class D, class V>
HWY_INLINE V exp_parts(D d, V x, V* s) {
  const hn::RebindToSigned<D> di;
  constexpr double kLn2 = 0.693147180559945309417232121458;
  constexpr float kHi = static_cast<float>(kLn2 / K);
  constexpr float kLo = static_cast<float>(kLn2 / K - kHi);
  constexpr float k2 = K * K, k3 = k2 * K, k4 = k3 * K;
  const V magic = hn::Set(d, 12582912.0f);
  const V big = hn::MulAdd(x, hn::Set(d, static_cast<float>(K / kLn2)), magic);
  const V n = hn::Sub(big, magic);
  V r = hn::NegMulAdd(n, hn::Set(d, kHi), x);
  r = hn::NegMulAdd(n, hn::Set(d, kLo), r);
  V p = hn::Set(d, 1.381893875e-03f * k4);
  p = hn::MulAdd(p, r, hn::Set(d, 8.368703537e-03f * k3));
  p = hn::MulAdd(p, r, hn::Set(d, 4.166828841e-02f * k2));
  p = hn::MulAdd(p, r, hn::Set(d, 1.666652113e-01f * K));
  p = hn::MulAdd(p, r, hn::Set(d, 4.999999404e-01f));
  const V y = K == 1 ? r : hn::Mul(r, hn::Set(d, static_cast<float>(K)));
  *s = hn::BitCast(d, hn::Add(hn::ShiftLeft<23>(hn::BitCast(di, big)), hn::Set(di, 0x3f800000)));
  return hn::MulAdd(hn::Mul(y, y), p, y);
}
// e^(K x): float32 lanes by exp_parts (with the caller's range), float64 lanes by Highway's.
template <int K, class D, class V>
HWY_INLINE V exp_vec(D d, V x) {
  if constexpr (sizeof(hn::TFromD<D>) == 4) {
    V s;
    const V q = exp_parts<K>(d, x, &s);
    return hn::MulAdd(s, q, s);
  } else {
    return hn::Exp(d, K == 1 ? x : hn::Mul(hn::Set(d, hn::TFromD<D>(K)), x));
  }
}
// Highway's Exp out of line: the rare vectors exp_shifted does not take itself, one copy per
// target instead of one at each of softmax's call sites.
template <class D, class V>
HWY_NOINLINE V exp_full_range(D d, V v) {
  return hn::Exp(d, v);
}
// e^v where v is x - max (or a log-probability): at most a little above 0, down to -inf. Vectors
// whose every lane lies in [-87, 87] take exp_vec; others (results below float32's normal range,
// -inf, NaN) Highway's Exp, as float64 lanes do.
template <class D, class V>
HWY_INLINE V exp_shifted(D d, V v) {
  if constexpr (sizeof(hn::TFromD<D>) == 4) {
    const auto ok = hn::And(hn::Ge(v, hn::Set(d, -87.0f)), hn::Le(v, hn::Set(d, 87.0f)));
    if (HWY_LIKELY(hn::AllTrue(d, ok))) return exp_vec<1>(d, v);
    return exp_full_range(d, v);
  } else {
    return hn::Exp(d, v);
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_EXP_INL_H_
