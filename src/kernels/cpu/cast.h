// Element conversion between dtypes, defined for every value (no C++ undefined behaviour):
// float to integer truncates toward zero, out-of-range and NaN give the type's minimum as x86
// does; to uint8 goes through int64 and wraps, as PyTorch; to bool is `!= 0`.
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ember/dtype.h"
#include "ember/error.h"

namespace ember::kernels {

template <class T>
constexpr bool is_float_like_v = std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// The type a kernel computes in for storage type T (float for the 16-bit floats).
template <class T> struct Compute { using type = T; };
template <> struct Compute<Half> { using type = float; };
template <> struct Compute<BFloat16> { using type = float; };
template <class T> using compute_t = typename Compute<T>::type;

template <class To, class From>
inline To cast(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (is_float_like_v<From>) return static_cast<float>(v) != 0.0f || static_cast<double>(v) != 0.0;
    else return v != 0;
  } else if constexpr (is_float_like_v<To>) {
    if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>) {
      return static_cast<To>(static_cast<float>(v));
    } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
      return To(static_cast<float>(v));
    } else {
      return static_cast<To>(v);
    }
  } else if constexpr (is_float_like_v<From>) {  // float to integer
    const double d = static_cast<double>(static_cast<std::conditional_t<std::is_same_v<From, double>, double, float>>(v));
    if constexpr (std::is_same_v<To, int64_t> || std::is_same_v<To, uint8_t>) {
      const int64_t i = (d >= -9223372036854775808.0 && d < 9223372036854775808.0)
                            ? static_cast<int64_t>(d)
                            : std::numeric_limits<int64_t>::min();
      return static_cast<To>(i);
    } else {
      const int32_t i = (d > -2147483649.0 && d < 2147483648.0) ? static_cast<int32_t>(d)
                                                                 : std::numeric_limits<int32_t>::min();
      return static_cast<To>(i);
    }
  } else {
    return static_cast<To>(v);  // integer to integer: modular
  }
}

// Calls f(T{}) with the storage type of a floating dtype; `op` names the caller in the error.
template <class F>
inline void visit_float(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case kFloat: return f(float{});
    case kDouble: return f(double{});
    case kHalf: return f(Half{});
    case kBFloat16: return f(BFloat16{});
    default: EMBER_CHECK(false, op, "expected a floating point dtype, got ", t);
  }
}

// Integer arithmetic that wraps on overflow like the hardware (signed overflow is undefined in C++).
template <class T>
inline T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <class T>
inline T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}
template <class T>
inline T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;  // avoid int promotion
    return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
  } else {
    return a * b;
  }
}

}  // namespace ember::kernels
