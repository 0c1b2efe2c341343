// The functors of the float pointwise kernels (vec(d, x...) on compute vectors, or scalar(c...)
// for ScalarOnly ones) and the switches that map UnaryOp/BinaryOp onto them, compiled once per
// SIMD target (include after hwy_util-inl.h and pointwise_vec-inl.h in a file using
// foreach_target.h). The eager kernels (unary_kernels.cpp, pointwise_kernels.cpp) and the fused
// pointwise engine (src/fx/fused_kernels.cpp) share them, so a fused chain computes each op
// exactly as its eager kernel does.
//
// Transcendentals use hwy/contrib/math inside the range where they are accurate to a few ulp;
// a vector holding any lane outside it (NaN, infinities, overflow, subnormal results, huge
// trigonometric arguments) is computed lane by lane with the C library instead (`guarded`),
// so special values follow libm exactly and the common case stays vectorized.

#if defined(EMBER_KERNELS_POINTWISE_FUNCTORS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_POINTWISE_FUNCTORS_INL_H_
#undef EMBER_KERNELS_POINTWISE_FUNCTORS_INL_H_
#else
#define EMBER_KERNELS_POINTWISE_FUNCTORS_INL_H_
#endif

#include <hwy/contrib/math/math-inl.h>

#include <cmath>
#include <limits>
#include <optional>

#include "kernels/cpu/pointwise.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {

// ==== unary ====================================================================================
template <class D>
using L_t = hn::TFromD<D>;

// vf(x) when every lane of x lies in [lo, hi] (NaN never does), else sf on each lane.
template <class D, class V, class VF, class SF>
HWY_INLINE V guarded(D d, V x, L_t<D> lo, L_t<D> hi, const VF& vf, const SF& sf) {
  const auto ok = hn::And(hn::Ge(x, hn::Set(d, lo)), hn::Le(x, hn::Set(d, hi)));
  if (HWY_LIKELY(hn::AllTrue(d, ok))) return vf(x);
  HWY_ALIGN L_t<D> buf[hn::MaxLanes(d)];
  hn::Store(x, d, buf);
  for (size_t i = 0; i < hn::Lanes(d); ++i) buf[i] = sf(buf[i]);
  return hn::Load(d, buf);
}

template <class L>
constexpr bool kF32 = sizeof(L) == 4;
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

// 2^x = 2^n * e^(f ln2) with n = round(x): f ln2 is small, so no precision is lost to scaling.
template <class D, class V>
HWY_INLINE V exp2_inrange(D d, V x) {
  using L = L_t<D>;
  const V n = hn::Round(x);
  const V e = hn::Exp(d, hn::Mul(hn::Sub(x, n), hn::Set(d, L(0.693147180559945309417232121458))));
  return hn::Mul(e, pow2_int(d, n));
}

// ---- functors: vec(d, x) on compute vectors, or scalar(c) for ScalarOnly ones ----------------
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
  EMBER_VEC(guarded(d, x, -kExpLimit<L>, kExpLimit<L>, [d](V v) { return hn::Exp(d, v); },
                    [](L c) { return std::exp(c); }))
};
struct Exp2F {
  EMBER_VEC(guarded(d, x, kF32<L> ? L(-125) : L(-1021), kF32<L> ? L(127) : L(1023),
                    [d](V v) { return exp2_inrange(d, v); }, [](L c) { return std::exp2(c); }))
};
struct Expm1F {
  EMBER_VEC(guarded(d, x, -kExpLimit<L>, kExpLimit<L>, [d](V v) { return hn::Expm1(d, v); },
                    [](L c) { return std::expm1(c); }))
};
struct LogF {
  EMBER_VEC(guarded(d, x, kMinNormal<L>, kMax<L>, [d](V v) { return hn::Log(d, v); },
                    [](L c) { return std::log(c); }))
};
struct Log2F {
  EMBER_VEC(guarded(d, x, kMinNormal<L>, kMax<L>, [d](V v) { return hn::Log2(d, v); },
                    [](L c) { return std::log2(c); }))
};
struct Log10F {
  EMBER_VEC(guarded(d, x, kMinNormal<L>, kMax<L>, [d](V v) { return hn::Log10(d, v); },
                    [](L c) { return std::log10(c); }))
};
struct Log1pF {
  EMBER_VEC(guarded(d, x, L(-0.99), kMax<L>, [d](V v) { return hn::Log1p(d, v); },
                    [](L c) { return std::log1p(c); }))
};
struct SqrtF { EMBER_VEC(hn::Sqrt(x)) };
struct RsqrtF { EMBER_VEC(hn::Div(hn::Set(d, L(1)), hn::Sqrt(x))) };
struct SinF {
  EMBER_VEC(guarded(d, x, L(-30000), L(30000), [d](V v) { return hn::Sin(d, v); },
                    [](L c) { return std::sin(c); }))
};
struct CosF {
  EMBER_VEC(guarded(d, x, L(-30000), L(30000), [d](V v) { return hn::Cos(d, v); },
                    [](L c) { return std::cos(c); }))
};
struct TanhF {
  EMBER_VEC(guarded(d, x, -kMax<L>, kMax<L>, [d](V v) { return hn::Tanh(d, v); },
                    [](L c) { return std::tanh(c); }))
};
// 1 / (1 + e^-x); below -kExpLimit the result is subnormal or zero and comes from libm.
struct SigmoidF {
  EMBER_VEC(guarded(
      d, x, -kExpLimit<L>, kMax<L>,
      [d](V v) { return hn::Div(hn::Set(d, L(1)), hn::Add(hn::Set(d, L(1)), hn::Exp(d, hn::Neg(v)))); },
      [](L c) { return L(1) / (L(1) + std::exp(-c)); }))
};
struct SiluF {
  EMBER_VEC(guarded(
      d, x, -kExpLimit<L>, kMax<L>, [d](V v) { return hn::Div(v, hn::Add(hn::Set(d, L(1)), hn::Exp(d, hn::Neg(v)))); },
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
struct ReciprocalF { EMBER_VEC(hn::Div(hn::Set(d, L(1)), x)) };
struct SquareF { EMBER_VEC(hn::Mul(x, x)) };
struct CubeF { EMBER_VEC(hn::Mul(hn::Mul(x, x), x)) };
struct InvSquareF { EMBER_VEC(hn::Div(hn::Set(d, L(1)), hn::Mul(x, x))) };
#undef EMBER_VEC

// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
struct GeluTanhF {
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    using L = L_t<D>;
    const V inner = hn::Mul(hn::Set(d, L(0.797884560802865355879892119869)),
                            hn::MulAdd(hn::Set(d, L(0.044715)), hn::Mul(hn::Mul(x, x), x), x));
    const V t = guarded(d, inner, -kMax<L>, kMax<L>, [d](V v) { return hn::Tanh(d, v); },
                        [](L c) { return std::tanh(c); });
    return hn::Mul(hn::Mul(hn::Set(d, L(0.5)), x), hn::Add(hn::Set(d, L(1)), t));
  }
};
struct LeakyReluF {
  double slope;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    return hn::IfThenElse(hn::Gt(x, hn::Zero(d)), x, hn::Mul(x, hn::Set(d, static_cast<L_t<D>>(slope))));
  }
};
// x > 0 ? scale x : alpha scale (e^(input_scale x) - 1)
struct EluF {
  double alpha, scale, input_scale;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    using L = L_t<D>;
    const L negcoef = static_cast<L>(alpha * scale), poscoef = static_cast<L>(scale);
    const L negiptcoef = static_cast<L>(input_scale);
    const auto neg = hn::Le(x, hn::Zero(d));
    const V m = hn::IfThenElseZero(neg, hn::Mul(x, hn::Set(d, negiptcoef)));
    const V e = guarded(d, m, -kMax<L>, kExpLimit<L>, [d](V v) { return hn::Expm1(d, v); },
                        [](L c) { return std::expm1(c); });
    return hn::IfThenElse(neg, hn::Mul(e, hn::Set(d, negcoef)), hn::Mul(x, hn::Set(d, poscoef)));
  }
};
// beta x > threshold ? x : log1p(e^(beta x)) / beta
struct SoftplusF {
  double beta, threshold;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    using L = L_t<D>;
    const V b = hn::Set(d, static_cast<L>(beta));
    const V xb = hn::Mul(x, b);
    const auto linear = hn::Gt(xb, hn::Set(d, static_cast<L>(threshold)));
    const V m = hn::IfThenZeroElse(linear, xb);
    const V e = guarded(d, m, -kExpLimit<L>, kExpLimit<L>, [d](V v) { return hn::Exp(d, v); },
                        [](L c) { return std::exp(c); });
    return hn::IfThenElse(linear, x, hn::Div(hn::Log1p(d, e), b));
  }
};
// min/max against optional bounds; a NaN input stays NaN, a NaN bound makes every lane NaN.
struct ClampF {
  double lo, hi;
  bool has_lo, has_hi;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    using L = L_t<D>;
    if ((has_lo && std::isnan(lo)) || (has_hi && std::isnan(hi))) return hn::Set(d, std::numeric_limits<L>::quiet_NaN());
    V r = x;
    if (has_lo) r = hn::Max(r, hn::Set(d, static_cast<L>(lo)));
    if (has_hi) r = hn::Min(r, hn::Set(d, static_cast<L>(hi)));
    return hn::IfThenElse(hn::IsNaN(x), x, r);
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

// Functions computed by the C library one element at a time.
struct TanF : ScalarOnly {
  template <class C> C scalar(C x) const { return std::tan(x); }
};
struct ErfF : ScalarOnly {
  template <class C> C scalar(C x) const { return std::erf(x); }
};
struct ErfcF : ScalarOnly {
  template <class C> C scalar(C x) const { return std::erfc(x); }
};
struct GeluF : ScalarOnly {
  template <class C> C scalar(C x) const { return x * C(0.5) * (C(1) + std::erf(x * C(M_SQRT1_2))); }
};
struct PowScalarF : ScalarOnly {
  double e;
  template <class C> C scalar(C x) const { return std::pow(x, static_cast<C>(e)); }
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
struct ErfinvF : ScalarOnly {
  template <class C> C scalar(C x) const { return static_cast<C>(erfinv_double(static_cast<double>(x))); }
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
    case UnaryOp::Tanh: return call(TanhF{});
    case UnaryOp::Sigmoid: return call(SigmoidF{});
    case UnaryOp::Relu: return call(ReluF{});
    case UnaryOp::Silu: return call(SiluF{});
    case UnaryOp::Hardswish: return call(HardswishF{});
    case UnaryOp::Hardsigmoid: return call(HardsigmoidF{});
    case UnaryOp::Erf: return call(ErfF{});
    case UnaryOp::Erfc: return call(ErfcF{});
    case UnaryOp::Erfinv: return call(ErfinvF{});
    case UnaryOp::Floor: return call(FloorF{});
    case UnaryOp::Ceil: return call(CeilF{});
    case UnaryOp::Round: return call(RoundF{});
    case UnaryOp::Trunc: return call(TruncF{});
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
      if (e == 2) return call(SquareF{});
      if (e == 3) return call(CubeF{});
      if (e == 0.5) return call(SqrtF{});
      if (e == -0.5) return call(RsqrtF{});
      if (e == -1) return call(ReciprocalF{});
      if (e == -2) return call(InvSquareF{});
      return call(PowScalarF{{}, e});
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


// Python's floor division on floats (PyTorch's div_floor): exact through fmod, never off by one.
struct DivFloorF : ScalarOnly {
  template <class C>
  C scalar(C a, C b) const {
    if (b == C(0)) return a / b;
    const C mod = std::fmod(a, b);
    C div = (a - mod) / b;
    if (mod != C(0) && (b < C(0)) != (mod < C(0))) div -= C(1);
    if (div == C(0)) return std::copysign(C(0), a / b);
    C floordiv = std::floor(div);
    if (div - floordiv > C(0.5)) floordiv += C(1);
    return floordiv;
  }
};
// Python's %: the result takes the divisor's sign.
struct RemainderF : ScalarOnly {
  template <class C>
  C scalar(C a, C b) const {
    C mod = std::fmod(a, b);
    if (mod != C(0) && (b < C(0)) != (mod < C(0))) mod += b;
    return mod;
  }
};
struct FmodF : ScalarOnly {
  template <class C>
  C scalar(C a, C b) const { return std::fmod(a, b); }
};
struct PowF : ScalarOnly {
  template <class C>
  C scalar(C a, C b) const { return std::pow(a, b); }
};
template <class L>
struct ThresholdBackwardF {
  L threshold;
  template <class D, class V>
  HWY_INLINE V vec(D d, V grad, V x) const { return hn::IfThenZeroElse(hn::Le(x, hn::Set(d, threshold)), grad); }
};
struct Atan2F : ScalarOnly {
  template <class C>
  C scalar(C a, C b) const { return std::atan2(a, b); }
};

// Calls run(f) with the functor of binary `op` for storage type T; false when op has no float form.
template <class T, class Run>
HWY_INLINE bool visit_binary(BinaryOp op, const Scalar& alpha, const Run& run) {
  auto call = [&](const auto& f) {
    run(f);
    return true;
  };
  using L = lane_t<T>;
  switch (op) {
    case BinaryOp::Add: return call(AddF<L>{alpha.to<L>()});
    case BinaryOp::Sub: return call(SubF<L>{alpha.to<L>()});
    case BinaryOp::Mul: return call(MulF{});
    case BinaryOp::Div: return call(DivF{});
    case BinaryOp::DivTrunc: return call(DivTruncF{});
    case BinaryOp::DivFloor: return call(DivFloorF{});
    case BinaryOp::Remainder: return call(RemainderF{});
    case BinaryOp::Fmod: return call(FmodF{});
    case BinaryOp::Pow: return call(PowF{});
    case BinaryOp::Minimum: return call(MinimumF{});
    case BinaryOp::Maximum: return call(MaximumF{});
    case BinaryOp::Atan2: return call(Atan2F{});
    case BinaryOp::Lerp: return call(LerpScalarF<L>{alpha.to<L>()});
    case BinaryOp::ThresholdBackward: return call(ThresholdBackwardF<L>{alpha.to<L>()});
    case BinaryOp::BitwiseAnd:
    case BinaryOp::BitwiseOr:
    case BinaryOp::BitwiseXor: break;
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
