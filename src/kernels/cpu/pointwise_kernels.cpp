// Float binary and ternary kernels, compiled for each SIMD target Highway selects at run time,
// and the dtype dispatch of binary_kernel / ternary_kernel (integers: pointwise_int.cpp). The
// functors: pointwise_functors-inl.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/pointwise_kernels.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include "kernels/cpu/hwy_util-inl.h"
#include "kernels/cpu/pointwise_int.h"
#include "kernels/cpu/pointwise_vec-inl.h"
#include "kernels/cpu/pointwise_functors-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace {

template <class T>
void binary_typed(TensorIterator& iter, BinaryOp op, const Scalar& alpha, const UnaryParams& params) {
  const bool done = visit_binary<T>(op, alpha, params, [&](const auto& f) { run_float<T, 2>(iter, f); });
  EMBER_CHECK(done, "binary_kernel", "op ", static_cast<int>(op), " has no float form");
}

template <class T>
void ternary_typed(TensorIterator& iter, TernaryOp op, const Scalar& value) {
  using L = lane_t<T>;
  auto run = [&](const auto& f) { run_float<T, 3>(iter, f); };
  switch (op) {
    case TernaryOp::Lerp: return run(LerpF{});
    case TernaryOp::Addcmul: return run(AddcmulF<L>{value.to<L>()});
    case TernaryOp::Addcdiv: return run(AddcdivF<L>{value.to<L>()});
    case TernaryOp::Clamp: return run(ClampTensorF{});
    case TernaryOp::Atan2Backward: return run(Atan2BackwardF<L>{value.to<L>()});
  }
}

}  // namespace

void binary_float(TensorIterator& iter, BinaryOp op, const Scalar& alpha, const UnaryParams& params) {
  visit_float(iter.common_dtype(), "pointwise", [&](auto t) { binary_typed<decltype(t)>(iter, op, alpha, params); });
}
void ternary_float(TensorIterator& iter, TernaryOp op, const Scalar& value) {
  visit_float(iter.common_dtype(), "pointwise", [&](auto t) { ternary_typed<decltype(t)>(iter, op, value); });
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernels/cpu/complex_kernels.h"
namespace ember::kernels {
HWY_EXPORT(binary_float);
HWY_EXPORT(ternary_float);

void binary_kernel(TensorIterator& iter, BinaryOp op, const Scalar& alpha, const UnaryParams& params) {
  if (is_complex_type(iter.common_dtype())) {
    complex_binary_kernel(iter, op, alpha);
  } else if (op == BinaryOp::Copysign && (iter.common_dtype() == kHalf || iter.common_dtype() == kBFloat16)) {
    copysign_16bit_kernel(iter);
  } else if (is_floating_type(iter.common_dtype())) {
    HWY_DYNAMIC_DISPATCH(binary_float)(iter, op, alpha, params);
  } else {
    binary_int_kernel(iter, op, alpha);
  }
}
void ternary_kernel(TensorIterator& iter, TernaryOp op, const Scalar& value) {
  if (is_complex_type(iter.common_dtype())) return complex_ternary_kernel(iter, op, value);
  if (is_floating_type(iter.common_dtype())) {
    HWY_DYNAMIC_DISPATCH(ternary_float)(iter, op, value);
  } else {
    ternary_int_kernel(iter, op, value);
  }
}
}  // namespace ember::kernels
#endif
