// Scalar types: the fifteen dtypes, the 16-bit float storage types and PyTorch's promotion rules.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>
#include <stdexcept>

#include "ember/complex.h"

namespace ember {

// 16-bit IEEE half. Arithmetic goes through float, as PyTorch does on CPU.
struct Half {
  uint16_t x = 0;
  Half() = default;
  Half(float f) : x(from_float(f)) {}  // NOLINT: implicit like c10::Half
  operator float() const { return to_float(x); }  // NOLINT
  static Half from_bits(uint16_t b) {
    Half h;
    h.x = b;
    return h;
  }
  static uint16_t from_float(float f);  // round to nearest even
  static float to_float(uint16_t h);
};

// bfloat16: the top half of a float32.
struct BFloat16 {
  uint16_t x = 0;
  BFloat16() = default;
  BFloat16(float f) : x(from_float(f)) {}  // NOLINT
  operator float() const { return to_float(x); }  // NOLINT
  static BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.x = b;
    return h;
  }
  static uint16_t from_float(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);                                                     // nearest even
    return static_cast<uint16_t>(u >> 16);
  }
  static float to_float(uint16_t b) {
    uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

inline uint16_t Half::from_float(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  if (u > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (u >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow (rounds to inf)
  if (u < 0x38800000u) {  // subnormal or zero in half: add 0.5 (as float) so the FPU rounds for us
    float v;
    std::memcpy(&v, &u, 4);
    v += 0.5f;
    uint32_t r;
    std::memcpy(&r, &v, 4);
    return static_cast<uint16_t>(sign | (r - 0x3f000000u));
  }
  const uint32_t mant_odd = (u >> 13) & 1u;
  u += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
  return static_cast<uint16_t>(sign | (u >> 13));
}

inline float Half::to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t u;
  if (exp == 0x1f) {
    u = sign | 0x7f800000u | (mant << 13);
  } else if (exp == 0) {
    if (mant == 0) {
      u = sign;
    } else {  // subnormal: value = mant * 2^-24
      float v = static_cast<float>(mant) * 5.9604644775390625e-08f;
      std::memcpy(&u, &v, 4);
      u |= sign;
    }
  } else {
    u = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Names follow c10::ScalarType.
enum class ScalarType : int8_t {
  Byte,      // uint8
  Char,      // int8
  Short,     // int16
  Int,       // int32
  Long,      // int64
  Half,      // float16
  Float,     // float32
  Double,    // float64
  Bool,
  BFloat16,
  ComplexFloat,   // complex64
  ComplexDouble,  // complex128
  QInt8,   // quantized int8 (ember/quantizer.h: a tensor of these carries its scale and zero point)
  QUInt8,  // quantized uint8
  QInt32,  // quantized int32
  Undefined,
};
constexpr int kNumScalarTypes = static_cast<int>(ScalarType::Undefined);
using Dtype = ScalarType;

constexpr ScalarType kByte = ScalarType::Byte, kUInt8 = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char, kInt8 = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short, kInt16 = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int, kInt32 = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long, kInt64 = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half, kFloat16 = ScalarType::Half;
constexpr ScalarType kFloat = ScalarType::Float, kFloat32 = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double, kFloat64 = ScalarType::Double;
constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kComplexFloat = ScalarType::ComplexFloat, kComplexDouble = ScalarType::ComplexDouble;
constexpr ScalarType kQInt8 = ScalarType::QInt8, kQUInt8 = ScalarType::QUInt8, kQInt32 = ScalarType::QInt32;

constexpr size_t element_size(ScalarType t) {
  constexpr size_t sizes[] = {1, 1, 2, 4, 8, 2, 4, 8, 1, 2, 8, 16, 1, 1, 4, 0};
  return sizes[static_cast<int>(t)];
}
constexpr bool is_floating_type(ScalarType t) {
  return t == kFloat || t == kDouble || t == kHalf || t == kBFloat16;
}
constexpr bool is_reduced_floating_type(ScalarType t) { return t == kHalf || t == kBFloat16; }
constexpr bool is_integral_type(ScalarType t, bool include_bool) {
  return t == kByte || t == kChar || t == kShort || t == kInt || t == kLong || (include_bool && t == kBool);
}
constexpr bool is_signed_type(ScalarType t) { return t != kByte && t != kBool && t != kQUInt8; }
// c10's isQIntType. visit_dtype never visits these: quantized tensors have their own code paths.
constexpr bool is_quantized_type(ScalarType t) { return t == kQInt8 || t == kQUInt8 || t == kQInt32; }
constexpr bool is_complex_type(ScalarType t) { return t == kComplexFloat || t == kComplexDouble; }
// complex64 <-> float32, complex128 <-> float64 (c10::toRealValueType, c10::toComplexType)
constexpr ScalarType to_real_value_type(ScalarType t) {
  return t == kComplexFloat ? kFloat : t == kComplexDouble ? kDouble : t;
}
constexpr ScalarType to_complex_type(ScalarType t) {
  return t == kDouble || t == kComplexDouble ? kComplexDouble : kComplexFloat;
}
const char* to_string(ScalarType t);  // "Float", as c10 prints it
std::ostream& operator<<(std::ostream& os, ScalarType t);

// PyTorch's promote_types lattice.
ScalarType promote_types(ScalarType a, ScalarType b);
// The float dtype used for integer inputs of float-valued ops (float32, settable like torch.set_default_dtype).
ScalarType get_default_dtype();
void set_default_dtype(ScalarType t);

template <class T> struct CppTypeToScalarType;
#define EMBER_MAP_TYPE(T, S) \
  template <> struct CppTypeToScalarType<T> { static constexpr ScalarType value = S; };
EMBER_MAP_TYPE(uint8_t, kByte)
EMBER_MAP_TYPE(int8_t, kChar)
EMBER_MAP_TYPE(int16_t, kShort)
EMBER_MAP_TYPE(int32_t, kInt)
EMBER_MAP_TYPE(int64_t, kLong)
EMBER_MAP_TYPE(Half, kHalf)
EMBER_MAP_TYPE(float, kFloat)
EMBER_MAP_TYPE(double, kDouble)
EMBER_MAP_TYPE(bool, kBool)
EMBER_MAP_TYPE(BFloat16, kBFloat16)
EMBER_MAP_TYPE(complex<float>, kComplexFloat)
EMBER_MAP_TYPE(complex<double>, kComplexDouble)
#undef EMBER_MAP_TYPE

// What Tensor::dtype() returns, as libtorch's caffe2::TypeMeta: it compares with a ScalarType,
// prints the C++ type's name (`std::cout << t.dtype()` shows "float", "long int", "c10::Half"),
// and, beyond libtorch, converts to ScalarType, so code that treats dtype() as one keeps working.
class TypeMeta {
 public:
  constexpr TypeMeta() noexcept = default;
  static constexpr TypeMeta fromScalarType(ScalarType t) noexcept { return TypeMeta(t); }
  template <class T>
  static constexpr TypeMeta Make() noexcept {
    return TypeMeta(CppTypeToScalarType<T>::value);
  }
  template <class T>
  constexpr bool Match() const noexcept {
    return type_ == CppTypeToScalarType<T>::value;
  }
  constexpr operator ScalarType() const noexcept { return type_; }  // NOLINT
  constexpr ScalarType toScalarType() const noexcept { return type_; }
  constexpr bool isScalarType(ScalarType t) const noexcept { return type_ == t; }
  constexpr size_t itemsize() const noexcept { return type_ == ScalarType::Undefined ? 0 : element_size(type_); }
  const char* name() const noexcept;  // "float", "long int", "c10::complex<float>": the C++ type
  TypeMeta& operator=(ScalarType t) noexcept {
    type_ = t;
    return *this;
  }
  friend constexpr bool operator==(TypeMeta a, TypeMeta b) noexcept { return a.type_ == b.type_; }
  friend constexpr bool operator==(TypeMeta a, ScalarType b) noexcept { return a.type_ == b; }

 private:
  constexpr explicit TypeMeta(ScalarType t) noexcept : type_(t) {}
  ScalarType type_ = ScalarType::Undefined;
};
std::ostream& operator<<(std::ostream& os, TypeMeta m);
constexpr TypeMeta scalarTypeToTypeMeta(ScalarType t) noexcept { return TypeMeta::fromScalarType(t); }
constexpr ScalarType typeMetaToScalarType(TypeMeta m) noexcept { return m.toScalarType(); }

// Calls f(T{}) with the C++ type of dtype t, a real dtype. Complex dtypes have their own visitor
// (visit_complex) and their own kernels: generic real code never sees them.
template <class F>
decltype(auto) visit_dtype(ScalarType t, F&& f) {
  switch (t) {
    case kByte: return f(uint8_t{});
    case kChar: return f(int8_t{});
    case kShort: return f(int16_t{});
    case kInt: return f(int32_t{});
    case kLong: return f(int64_t{});
    case kHalf: return f(Half{});
    case kFloat: return f(float{});
    case kDouble: return f(double{});
    case kBool: return f(bool{});
    case kBFloat16: return f(BFloat16{});
    default: break;
  }
  throw std::runtime_error(is_complex_type(t) ? "ember: this op does not support complex dtypes"
                                              : "ember: undefined dtype");
}

// Calls f(T{}) with ember::complex<float> or complex<double> for a complex dtype.
template <class F>
decltype(auto) visit_complex(ScalarType t, F&& f) {
  if (t == kComplexDouble) return f(complex<double>{});
  if (t == kComplexFloat) return f(complex<float>{});
  throw std::runtime_error("ember: expected a complex dtype");
}

}  // namespace ember

namespace std {
template <> class numeric_limits<ember::Half> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static ember::Half lowest() { return ember::Half::from_bits(0xfbff); }
  static ember::Half max() { return ember::Half::from_bits(0x7bff); }
  static ember::Half min() { return ember::Half::from_bits(0x0400); }
  static ember::Half epsilon() { return ember::Half::from_bits(0x1400); }
  static ember::Half infinity() { return ember::Half::from_bits(0x7c00); }
  static ember::Half quiet_NaN() { return ember::Half::from_bits(0x7e00); }
};
template <> class numeric_limits<ember::BFloat16> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static ember::BFloat16 lowest() { return ember::BFloat16::from_bits(0xff7f); }
  static ember::BFloat16 max() { return ember::BFloat16::from_bits(0x7f7f); }
  static ember::BFloat16 min() { return ember::BFloat16::from_bits(0x0080); }
  static ember::BFloat16 epsilon() { return ember::BFloat16::from_bits(0x3c00); }
  static ember::BFloat16 infinity() { return ember::BFloat16::from_bits(0x7f80); }
  static ember::BFloat16 quiet_NaN() { return ember::BFloat16::from_bits(0x7fc0); }
};
}  // namespace std
