// Float unary kernels, compiled for each SIMD target Highway selects at run time, and the dtype
// dispatch of unary_kernel (integers: pointwise_int.cpp). The functors: pointwise_functors-inl.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/unary_kernels.cpp"
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
void unary_typed(TensorIterator& iter, UnaryOp op, const UnaryParams& p) {
  const bool done = visit_unary<T>(op, p, [&](const auto& f) { run_float<T, 1>(iter, f); });
  EMBER_CHECK(done, "unary_kernel", "op ", static_cast<int>(op), " has no float form");
}

}  // namespace

void unary_float(TensorIterator& iter, UnaryOp op, const UnaryParams& params) {
  visit_float(iter.common_dtype(), "pointwise", [&](auto t) { unary_typed<decltype(t)>(iter, op, params); });
}

int64_t dispatched_target() { return HWY_TARGET; }

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "kernels/cpu/complex_kernels.h"
namespace ember::kernels {
HWY_EXPORT(unary_float);
HWY_EXPORT(dispatched_target);

int64_t dispatched_target() { return HWY_DYNAMIC_DISPATCH(dispatched_target)(); }

void unary_kernel(TensorIterator& iter, UnaryOp op, const UnaryParams& params) {
  if (is_complex_type(iter.dtype(1))) {
    complex_unary_kernel(iter, op, params);
  } else if (is_floating_type(iter.common_dtype())) {
    HWY_DYNAMIC_DISPATCH(unary_float)(iter, op, params);
  } else {
    unary_int_kernel(iter, op, params);
  }
}
}  // namespace ember::kernels
#endif
