// The int32 and int64 binary ops that take a single instruction a vector (add, sub, mul, min,
// max, and, or, xor), as plain loops compiled once per SIMD target: GCC vectorizes them for
// AVX-512 as for AVX2, and Highway's dispatch picks the target as for every kernel. The rest of
// the integer kernels (pointwise_int.cpp) are AVX2 plain loops; these are the ones where 512-bit
// vectors pay (a broadcast int32 add of 256 x 256 1.15x libtorch's time with AVX2 alone).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/pointwise_int_wide.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/pointwise_int.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {

// wrapping arithmetic in the unsigned type: no signed overflow
template <class T, class F>
void loop(int64_t m, void* out, const void* a, const void* b, const F& f) {
  T* HWY_RESTRICT o = static_cast<T*>(out);
  const T* HWY_RESTRICT x = static_cast<const T*>(a);
  const T* HWY_RESTRICT y = static_cast<const T*>(b);
  for (int64_t i = 0; i < m; ++i) o[i] = f(x[i], y[i]);
}

template <class T>
void wide_typed(WideIntOp op, int64_t m, void* out, const void* a, const void* b) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
    case WideIntOp::Add: return loop<U>(m, out, a, b, [](U x, U y) { return static_cast<U>(x + y); });
    case WideIntOp::Sub: return loop<U>(m, out, a, b, [](U x, U y) { return static_cast<U>(x - y); });
    case WideIntOp::Mul: return loop<U>(m, out, a, b, [](U x, U y) { return static_cast<U>(x * y); });
    case WideIntOp::Min: return loop<T>(m, out, a, b, [](T x, T y) { return std::min(x, y); });
    case WideIntOp::Max: return loop<T>(m, out, a, b, [](T x, T y) { return std::max(x, y); });
    case WideIntOp::And: return loop<U>(m, out, a, b, [](U x, U y) { return static_cast<U>(x & y); });
    case WideIntOp::Or: return loop<U>(m, out, a, b, [](U x, U y) { return static_cast<U>(x | y); });
    case WideIntOp::Xor: return loop<U>(m, out, a, b, [](U x, U y) { return static_cast<U>(x ^ y); });
  }
}

void wide_int_binary(WideIntOp op, bool int64, int64_t m, void* out, const void* a, const void* b) {
  if (int64) return wide_typed<int64_t>(op, m, out, a, b);
  wide_typed<int32_t>(op, m, out, a, b);
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {

HWY_EXPORT(wide_int_binary);

void wide_int_binary(WideIntOp op, bool int64, int64_t m, void* out, const void* a, const void* b) {
  HWY_DYNAMIC_DISPATCH(wide_int_binary)(op, int64, m, out, a, b);
}

}  // namespace ember::kernels
#endif  // HWY_ONCE
