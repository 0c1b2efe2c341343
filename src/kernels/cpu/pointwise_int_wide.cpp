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

// rows rows of m contiguous elements (row r of operand k at data[k] + r * outer[k]; outer read
// only when rows > 1), in wrapping arithmetic in the unsigned type: no signed overflow. The rows
// are walked here, not by the caller: a call per row (the switch and the target's dispatch) was
// half the time of a broadcast int32 add of 32 x 32. A scalar b (one value a row) is held in a
// register: read from a buffer filled with it, whose loads fell on the addresses of the output's
// stores modulo 4 KiB, int32 x * 3 of 4M elements took twice float32's time (1.3 against 0.65 ms,
// Zen 5).
template <class T, class F>
void loop(int64_t m, int64_t rows, char* const* data, const int64_t* outer, bool b_scalar, const F& f) {
  char* o = data[0];
  const char* a = data[1];
  const char* b = data[2];
  for (int64_t r = 0;;) {
    T* HWY_RESTRICT out = reinterpret_cast<T*>(o);
    const T* HWY_RESTRICT x = reinterpret_cast<const T*>(a);
    const T* HWY_RESTRICT y = reinterpret_cast<const T*>(b);
    if (b_scalar) {
      const T v = *y;
      for (int64_t i = 0; i < m; ++i) out[i] = f(x[i], v);
    } else {
      for (int64_t i = 0; i < m; ++i) out[i] = f(x[i], y[i]);
    }
    if (++r == rows) break;
    o += outer[0], a += outer[1], b += outer[2];
  }
}

template <class T>
void wide_typed(WideIntOp op, int64_t m, int64_t rows, char* const* data, const int64_t* outer, bool b_scalar) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
    case WideIntOp::Add: return loop<U>(m, rows, data, outer, b_scalar, [](U x, U y) { return static_cast<U>(x + y); });
    case WideIntOp::Sub: return loop<U>(m, rows, data, outer, b_scalar, [](U x, U y) { return static_cast<U>(x - y); });
    case WideIntOp::Mul: return loop<U>(m, rows, data, outer, b_scalar, [](U x, U y) { return static_cast<U>(x * y); });
    case WideIntOp::Min: return loop<T>(m, rows, data, outer, b_scalar, [](T x, T y) { return std::min(x, y); });
    case WideIntOp::Max: return loop<T>(m, rows, data, outer, b_scalar, [](T x, T y) { return std::max(x, y); });
    case WideIntOp::And: return loop<U>(m, rows, data, outer, b_scalar, [](U x, U y) { return static_cast<U>(x & y); });
    case WideIntOp::Or: return loop<U>(m, rows, data, outer, b_scalar, [](U x, U y) { return static_cast<U>(x | y); });
    case WideIntOp::Xor: return loop<U>(m, rows, data, outer, b_scalar, [](U x, U y) { return static_cast<U>(x ^ y); });
  }
}

void wide_int_binary(WideIntOp op, bool int64, int64_t m, int64_t rows, char* const* data, const int64_t* outer,
                     bool b_scalar) {
  if (int64) return wide_typed<int64_t>(op, m, rows, data, outer, b_scalar);
  wide_typed<int32_t>(op, m, rows, data, outer, b_scalar);
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {

HWY_EXPORT(wide_int_binary);

void wide_int_binary(WideIntOp op, bool int64, int64_t m, int64_t rows, char* const* data, const int64_t* outer,
                     bool b_scalar) {
  HWY_DYNAMIC_DISPATCH(wide_int_binary)(op, int64, m, rows, data, outer, b_scalar);
}

}  // namespace ember::kernels
#endif  // HWY_ONCE
