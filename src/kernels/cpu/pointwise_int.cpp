// Integer and bool pointwise kernels: plain loops (see pointwise_loops.h) with wrapping
// arithmetic. Division by zero never reaches here (the ops call check_no_zero_divisor); the
// loops still return 0 for it, and x / -1 wraps, so no input is undefined behaviour.
#include <algorithm>
#include <bit>
#include <cmath>
#include <type_traits>

#include "kernels/cpu/pointwise_int.h"
#include "kernels/cpu/pointwise_loops.h"

namespace ember::kernels {
namespace {

template <class T>
constexpr bool kSigned = std::is_signed_v<T>;

// Wrapping product; for bool, logical and (what PyTorch's bool multiply gives).
template <class T>
T mul(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else {
    return wrap_mul(a, b);
  }
}

// Integer division in double. Where |a| and |b| are below 2^50, the double quotient of a and b
// rounds to a double on the same side of every integer: rounding is monotonic and the integers
// near a / b are doubles, so it can only reach one, k, if a / b is within half an ulp of k, and
// that half ulp, at most |k| 2^-53, is less than a / b's distance 1/|b| from k unless
// |k| |b| >= 2^53 (|k| |b| <= |a| + |b| here). So trunc and floor of it are exact, as are the
// products and differences below (integers below 2^52). That holds for every pair of integers of
// up to 32 bits, and for int64 chunks whose operands all lie below 2^50 (the others divide as
// integers); the double division vectorizes where the integer one does not (fmod of int32 1.5x,
// of int64 1.5x slower than libtorch's). A zero divisor gives 0, as the integer forms below.
enum class Div { Trunc, Floor, Fmod, Remainder };
template <class T>
constexpr bool kViaDouble = std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) <= 4;

// int64 in [-2^51, 2^51) to double and back in integer adds and double subtractions (AVX2 has no
// conversion instruction between them): 1.5 * 2^52 + x is the double whose low mantissa bits are
// 2^51 + x.
constexpr double kMagic = 0x1.8p52;
constexpr int64_t kMagicBits = 0x4338000000000000;
inline double small_to_double(int64_t x) { return std::bit_cast<double>(x + kMagicBits) - kMagic; }
inline int64_t small_from_double(double whole) { return std::bit_cast<int64_t>(whole + kMagic) - kMagicBits; }

template <class T>
double to_double(T x) {
  if constexpr (sizeof(T) == 8) {
    return small_to_double(x);
  } else {
    return static_cast<double>(x);
  }
}
// A whole number as T, wrapping as the integer division does (int32's minimum / -1: 2^31).
template <class T>
T from_whole(double q) {
  if constexpr (sizeof(T) == 8) {
    return small_from_double(q);
  } else {
    if constexpr (sizeof(T) == 4 && kSigned<T>) {
      const double wrapped = q - 0x1p32;
      q = q >= 0x1p31 ? wrapped : q;
    }
    return static_cast<T>(static_cast<int32_t>(q));
  }
}
// Computes unconditionally and selects for a zero divisor afterwards, a branch-free loop GCC
// vectorizes (with -fno-trapping-math on this file, CMakeLists.txt).
template <Div kOp, class T>
T div_via_double(T a, T b) {
  const double x = to_double(a), y = to_double(b == 0 ? T(1) : b);
  const double q = x / y;
  double r;
  if constexpr (kOp == Div::Trunc) r = std::trunc(q);
  if constexpr (kOp == Div::Floor) r = std::floor(q);
  if constexpr (kOp == Div::Fmod) r = x - std::trunc(q) * y;
  if constexpr (kOp == Div::Remainder) r = x - std::floor(q) * y;
  return b == 0 ? T(0) : from_whole<T>(r);
}

template <Div kOp, class T>
T div_exact(T a, T b) {
  if (b == 0) return 0;
  if constexpr (kSigned<T>) {
    if (b == T(-1)) return kOp == Div::Trunc || kOp == Div::Floor ? wrap_sub(T(0), a) : T(0);
  }
  const T q = static_cast<T>(a / b), r = static_cast<T>(a % b);
  bool fix = false;  // floor and Python's % differ from trunc and fmod here
  if constexpr (kSigned<T>) fix = r != 0 && (r < 0) != (b < 0);
  if constexpr (kOp == Div::Trunc) return q;
  if constexpr (kOp == Div::Floor) return fix ? static_cast<T>(q - 1) : q;
  if constexpr (kOp == Div::Fmod) return r;
  return fix ? static_cast<T>(r + b) : r;
}

// out = a kOp b over the iterator: via double where that is exact (see above), else as integers.
template <Div kOp, class T>
void run_div(TensorIterator& iter) {
  if constexpr (kViaDouble<T>) {
    scalar_for_each<T, 2>(iter, [](T a, T b) { return div_via_double<kOp>(a, b); });
  } else if constexpr (std::is_same_v<T, int64_t>) {
    chunk_for_each<T, 2>(iter, [](int64_t m, T* out, const T* a, const T* b) {
      constexpr int64_t kBlock = 512;  // one check per block: a large operand costs its block only
      for (int64_t i0 = 0; i0 < m; i0 += kBlock) {
        const int64_t c = std::min(kBlock, m - i0);
        uint64_t big = 0;  // bit 51 or above set: some operand outside [-2^50, 2^50)
        for (int64_t i = i0; i < i0 + c; ++i)
          big |= (static_cast<uint64_t>(a[i]) + (uint64_t{1} << 50)) | (static_cast<uint64_t>(b[i]) + (uint64_t{1} << 50));
        if (big >> 51 == 0) {
          for (int64_t i = i0; i < i0 + c; ++i) out[i] = div_via_double<kOp>(a[i], b[i]);
        } else {
          for (int64_t i = i0; i < i0 + c; ++i) out[i] = div_exact<kOp>(a[i], b[i]);
        }
      }
    });
  } else {
    scalar_for_each<T, 2>(iter, [](T a, T b) { return div_exact<kOp>(a, b); });
  }
}

// PyTorch's powi: negative exponents give 1, +-1 or 0 (integer division of 1 by the power).
template <class T>
T pow_int(T base, T exp) {
  if constexpr (kSigned<T>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == T(-1)) return (exp & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  T result = 1;
  while (exp) {
    if (exp & 1) result = mul(result, base);
    exp = static_cast<T>(exp >> 1);
    base = mul(base, base);
  }
  return result;
}

// The int32 and int64 ops of one instruction a vector, on the loops compiled for each SIMD target
// (pointwise_int_wide.cpp). One function per dtype, not per op: a row loop per op and dtype was
// 16 KB of library.
template <class T>
void wide_binary(TensorIterator& iter, WideIntOp w) {
  constexpr int64_t es = sizeof(T);
  iter.for_each([w](char** data, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer) {
    if (s[0] == es && s[1] == es && s[2] == es) return wide_int_binary(w, es == 8, n, rows, data, outer);
    if (s[0] == es && s[1] == es && s[2] == 0) {  // a Scalar, or a broadcast column: one value a row
      return wide_int_binary(w, es == 8, n, rows, data, outer, /*b_scalar=*/true);
    }
    // strided or broadcast operands through contiguous chunks
    chunk_map_impl<T>(
        [w](int64_t m, T* out, const T* a, const T* b) {
          char* p[3] = {reinterpret_cast<char*>(out), reinterpret_cast<char*>(const_cast<T*>(a)),
                        reinterpret_cast<char*>(const_cast<T*>(b))};
          wide_int_binary(w, es == 8, m, 1, p, nullptr);
        },
        data, s, n, rows, outer, std::make_index_sequence<2>{});
  });
}

template <class T>
void binary_typed(TensorIterator& iter, BinaryOp op, const Scalar& alpha) {
  // f is a lambda, never a function pointer: the loop inlines it instead of calling per element
  auto run = [&](auto f) { scalar_for_each<T, 2>(iter, f); };
  // the ops of one instruction a vector: wide_binary on int32 and int64, f for the other dtypes
  auto simple = [&](WideIntOp w, auto f) {
    if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      wide_binary<T>(iter, w);
    } else {
      run(f);
    }
  };
  const T al = alpha.to<T>();
  // alpha 1 (a plain add or sub) without the multiply: AVX2 has no 64-bit one, and GCC's
  // vectorized emulation made an int64 add 1.7x slower than libtorch's
  const bool unit = al == T(1);
  switch (op) {
    case BinaryOp::Add:
      if (unit) return simple(WideIntOp::Add, [](T a, T b) { return static_cast<T>(wrap_add(a, b)); });
      return run([al](T a, T b) { return static_cast<T>(wrap_add(a, mul(al, b))); });
    case BinaryOp::Sub:
      if (unit) return simple(WideIntOp::Sub, [](T a, T b) { return static_cast<T>(wrap_sub(a, b)); });
      return run([al](T a, T b) { return static_cast<T>(wrap_sub(a, mul(al, b))); });
    case BinaryOp::Mul: return simple(WideIntOp::Mul, [](T a, T b) { return mul(a, b); });
    case BinaryOp::DivTrunc: return run_div<Div::Trunc, T>(iter);
    case BinaryOp::DivFloor: return run_div<Div::Floor, T>(iter);
    case BinaryOp::Remainder: return run_div<Div::Remainder, T>(iter);
    case BinaryOp::Fmod: return run_div<Div::Fmod, T>(iter);
    case BinaryOp::Pow: return run([](T a, T b) { return pow_int(a, b); });
    case BinaryOp::Minimum:
    case BinaryOp::Fmin: return simple(WideIntOp::Min, [](T a, T b) { return std::min(a, b); });
    case BinaryOp::Maximum:
    case BinaryOp::Fmax: return simple(WideIntOp::Max, [](T a, T b) { return std::max(a, b); });
    case BinaryOp::ThresholdBackward: return run([al](T g, T x) { return x <= al ? T(0) : g; });
    case BinaryOp::BitwiseAnd: return simple(WideIntOp::And, [](T a, T b) { return static_cast<T>(a & b); });
    case BinaryOp::BitwiseOr: return simple(WideIntOp::Or, [](T a, T b) { return static_cast<T>(a | b); });
    case BinaryOp::BitwiseXor: return simple(WideIntOp::Xor, [](T a, T b) { return static_cast<T>(a ^ b); });
    case BinaryOp::Div:
    case BinaryOp::Atan2:
    case BinaryOp::Copysign:
    case BinaryOp::Xlogy:
    case BinaryOp::Hypot:
    case BinaryOp::GeluBackward:
    case BinaryOp::GeluTanhBackward:
    case BinaryOp::HardswishBackward:
    case BinaryOp::HardsigmoidBackward:
    case BinaryOp::SiluBackward:
    case BinaryOp::SigmoidBackward:
    case BinaryOp::TanhBackward:
    case BinaryOp::LeakyReluBackward:
    case BinaryOp::LogSigmoidBackward:
    case BinaryOp::HardtanhBackward:
    case BinaryOp::EluBackward:
    case BinaryOp::EluBackwardOfResult:
    case BinaryOp::Lerp: break;  // float-valued: the ops promote integers or refuse them
  }
  EMBER_CHECK(false, "binary_kernel", "op ", static_cast<int>(op), " has no integer form");
}

template <class T>
void unary_typed(TensorIterator& iter, UnaryOp op, const UnaryParams& p) {
  auto run = [&](auto f) { scalar_for_each<T, 1>(iter, f); };
  switch (op) {
    case UnaryOp::Abs:
      if constexpr (kSigned<T>) {
        return run([](T x) { return x < 0 ? wrap_sub(T(0), x) : x; });
      } else {
        return run([](T x) { return x; });
      }
    case UnaryOp::Neg: return run([](T x) { return wrap_sub(T(0), x); });
    case UnaryOp::Sign:
      if constexpr (std::is_same_v<T, bool>) {
        return run([](T x) { return x; });
      } else {
        // each comparison widened to T before the subtraction: on int the int64 loop converted
        // between widths per element (sign of int64 1.2x slower than libtorch's)
        return run([](T x) { return static_cast<T>(static_cast<T>(T(0) < x) - static_cast<T>(x < T(0))); });
      }
    case UnaryOp::Relu:
      if constexpr (kSigned<T>) {
        return run([](T x) { return x < 0 ? T(0) : x; });
      } else {
        return run([](T x) { return x; });
      }
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Round:
    case UnaryOp::Trunc:
    case UnaryOp::NanToNum: return run([](T x) { return x; });
    case UnaryOp::Square: return run([](T x) { return mul(x, x); });
    case UnaryOp::BitwiseNot:
      if constexpr (std::is_same_v<T, bool>) {
        // on the bytes (0 or 1): GCC vectorizes x ^ 1 on uint8_t, not !x on bool (10x slower)
        return scalar_for_each<uint8_t, 1>(iter, [](uint8_t x) { return static_cast<uint8_t>(x ^ 1); });
      } else {
        return run([](T x) { return static_cast<T>(~x); });
      }
    case UnaryOp::PowScalar: {
      const T e = p.a->to<T>();
      return run([e](T x) { return pow_int(x, e); });
    }
    case UnaryOp::Clamp: {
      if (p.a && p.b) {
        const T lo = p.a->to<T>(), hi = p.b->to<T>();
        return run([lo, hi](T x) { return std::min(std::max(x, lo), hi); });
      }
      if (p.a) {
        const T lo = p.a->to<T>();
        return run([lo](T x) { return std::max(x, lo); });
      }
      const T hi = p.b->to<T>();
      return run([hi](T x) { return std::min(x, hi); });
    }
    default: break;
  }
  EMBER_CHECK(false, "unary_kernel", "op ", static_cast<int>(op), " has no integer form");
}

template <class T>
void ternary_typed(TensorIterator& iter, TernaryOp op, const Scalar& value) {
  auto run = [&](auto f) { scalar_for_each<T, 3>(iter, f); };
  switch (op) {
    case TernaryOp::Addcmul: {
      const T v = value.to<T>();
      return run([v](T a, T b, T c) { return static_cast<T>(wrap_add(a, mul(v, mul(b, c)))); });
    }
    case TernaryOp::Clamp: return run([](T a, T lo, T hi) { return std::min(std::max(a, lo), hi); });
    case TernaryOp::Lerp:
    case TernaryOp::Addcdiv:
    case TernaryOp::Atan2Backward: break;  // floats only
  }
  EMBER_CHECK(false, "ternary_kernel", "op ", static_cast<int>(op), " has no integer form");
}

template <class F>
void visit_int(TensorIterator& iter, const char* what, F&& f) {
  switch (iter.common_dtype()) {
    case kByte: return f(uint8_t{});
    case kChar: return f(int8_t{});
    case kShort: return f(int16_t{});
    case kInt: return f(int32_t{});
    case kLong: return f(int64_t{});
    case kBool: return f(bool{});
    default: EMBER_CHECK(false, what, "unsupported dtype ", iter.common_dtype());
  }
}

}  // namespace

void binary_int_kernel(TensorIterator& iter, BinaryOp op, const Scalar& alpha) {
  visit_int(iter, "binary_kernel", [&](auto t) { binary_typed<decltype(t)>(iter, op, alpha); });
}
void copysign_16bit_kernel(TensorIterator& iter) {
  scalar_for_each<uint16_t, 2>(iter, [](uint16_t a, uint16_t b) { return static_cast<uint16_t>((a & 0x7fff) | (b & 0x8000)); });
}
void unary_int_kernel(TensorIterator& iter, UnaryOp op, const UnaryParams& params) {
  visit_int(iter, "unary_kernel", [&](auto t) { unary_typed<decltype(t)>(iter, op, params); });
}
void ternary_int_kernel(TensorIterator& iter, TernaryOp op, const Scalar& value) {
  visit_int(iter, "ternary_kernel", [&](auto t) { ternary_typed<decltype(t)>(iter, op, value); });
}

void check_no_zero_divisor(const TensorIterator& iter, int arg, const char* op) {
  int64_t zeros = 0;
  visit_dtype(iter.dtype(arg), [&](auto t) {
    using T = decltype(t);
    // counted without an early exit, which GCC vectorizes on contiguous rows (a scan stopping at
    // the first zero cost twice the int64 fmod it guards)
    auto scan = [&](char** data, const int64_t* s, int64_t n) {
      const char* p = data[arg];
      if (zeros > 0) return;
      if (s[arg] == sizeof(T)) {
        const T* v = reinterpret_cast<const T*>(p);
        for (int64_t i = 0; i < n; ++i) zeros += v[i] == T(0);
      } else {
        for (int64_t i = 0; i < n; ++i) {
          T v;
          std::memcpy(&v, p + i * s[arg], sizeof(T));
          zeros += v == T(0);
        }
      }
    };
    if (iter.numel() > 0) iter.serial_for_each(scan, 0, iter.numel());
  });
  EMBER_CHECK(zeros == 0, op, "ZeroDivisionError");
}

}  // namespace ember::kernels
