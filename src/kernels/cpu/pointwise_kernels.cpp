// Float binary and ternary kernels, compiled for each SIMD target Highway selects at run time,
// and the dtype dispatch of binary_kernel / ternary_kernel (integers: pointwise_int.cpp).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/pointwise_kernels.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include <cmath>

#include "kernels/cpu/hwy_util-inl.h"
#include "kernels/cpu/pointwise_int.h"
#include "kernels/cpu/pointwise_vec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace {

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

template <class T>
void binary_typed(TensorIterator& iter, BinaryOp op, const Scalar& alpha) {
  using L = lane_t<T>;
  auto run = [&](const auto& f) { run_float<T, 2>(iter, f); };
  switch (op) {
    case BinaryOp::Add: return run(AddF<L>{alpha.to<L>()});
    case BinaryOp::Sub: return run(SubF<L>{alpha.to<L>()});
    case BinaryOp::Mul: return run(MulF{});
    case BinaryOp::Div: return run(DivF{});
    case BinaryOp::DivTrunc: return run(DivTruncF{});
    case BinaryOp::DivFloor: return run(DivFloorF{});
    case BinaryOp::Remainder: return run(RemainderF{});
    case BinaryOp::Fmod: return run(FmodF{});
    case BinaryOp::Pow: return run(PowF{});
    case BinaryOp::Minimum: return run(MinimumF{});
    case BinaryOp::Maximum: return run(MaximumF{});
    case BinaryOp::Atan2: return run(Atan2F{});
    case BinaryOp::Lerp: return run(LerpScalarF<L>{alpha.to<L>()});
    case BinaryOp::ThresholdBackward: return run(ThresholdBackwardF<L>{alpha.to<L>()});
    case BinaryOp::BitwiseAnd:
    case BinaryOp::BitwiseOr:
    case BinaryOp::BitwiseXor: break;
  }
  EMBER_CHECK(false, "binary_kernel", "op ", static_cast<int>(op), " has no float form");
}

// ---- ternary functors -----------------------------------------------------------------------
struct ClampF {
  template <class D, class V>
  HWY_INLINE V vec(D, V a, V lo, V hi) const {
    const auto nan = hn::Or(hn::IsNaN(a), hn::Or(hn::IsNaN(lo), hn::IsNaN(hi)));
    return hn::IfThenElse(nan, hn::Add(a, hn::Add(lo, hi)), hn::Min(hn::Max(a, lo), hi));
  }
};

template <class T>
void ternary_typed(TensorIterator& iter, TernaryOp op, const Scalar& value) {
  using L = lane_t<T>;
  auto run = [&](const auto& f) { run_float<T, 3>(iter, f); };
  switch (op) {
    case TernaryOp::Lerp: return run(LerpF{});
    case TernaryOp::Addcmul: return run(AddcmulF<L>{value.to<L>()});
    case TernaryOp::Addcdiv: return run(AddcdivF<L>{value.to<L>()});
    case TernaryOp::Clamp: return run(ClampF{});
  }
}

}  // namespace

void binary_float(TensorIterator& iter, BinaryOp op, const Scalar& alpha) {
  visit_float(iter.common_dtype(), "pointwise", [&](auto t) { binary_typed<decltype(t)>(iter, op, alpha); });
}
void ternary_float(TensorIterator& iter, TernaryOp op, const Scalar& value) {
  visit_float(iter.common_dtype(), "pointwise", [&](auto t) { ternary_typed<decltype(t)>(iter, op, value); });
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(binary_float);
HWY_EXPORT(ternary_float);

void binary_kernel(TensorIterator& iter, BinaryOp op, const Scalar& alpha) {
  if (is_floating_type(iter.common_dtype())) {
    HWY_DYNAMIC_DISPATCH(binary_float)(iter, op, alpha);
  } else {
    binary_int_kernel(iter, op, alpha);
  }
}
void ternary_kernel(TensorIterator& iter, TernaryOp op, const Scalar& value) {
  if (is_floating_type(iter.common_dtype())) {
    HWY_DYNAMIC_DISPATCH(ternary_float)(iter, op, value);
  } else {
    ternary_int_kernel(iter, op, value);
  }
}
}  // namespace ember::kernels
#endif
