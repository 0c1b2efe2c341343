// Scalar: a number that is not a tensor (libtorch's c10::Scalar), remembering whether it is
// boolean, integral, floating or complex so type promotion treats it as PyTorch treats a Python
// number.
#pragma once
#include <cstdint>
#include <ostream>
#include <type_traits>

#include "ember/dtype.h"

namespace ember {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Double, Complex };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::Bool) { v_.i = v; }  // NOLINT
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int) { v_.i = static_cast<int64_t>(v); }  // NOLINT
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Double) { v_.d = static_cast<double>(v); }  // NOLINT
  Scalar(Half v) : Scalar(static_cast<double>(static_cast<float>(v))) {}  // NOLINT
  Scalar(BFloat16 v) : Scalar(static_cast<double>(static_cast<float>(v))) {}  // NOLINT
  template <class T>
  Scalar(complex<T> v) : kind_(Kind::Complex) {  // NOLINT
    v_.z[0] = static_cast<double>(v.real());
    v_.z[1] = static_cast<double>(v.imag());
  }
  template <class T>
  Scalar(std::complex<T> v) : Scalar(complex<T>(v)) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool isBoolean() const { return kind_ == Kind::Bool; }
  bool isIntegral(bool include_bool) const {
    return kind_ == Kind::Int || (include_bool && kind_ == Kind::Bool);
  }
  bool isFloatingPoint() const { return kind_ == Kind::Double; }
  bool isComplex() const { return kind_ == Kind::Complex; }
  // The dtype PyTorch gives this number before promotion: Bool, Long, Double or ComplexDouble.
  ScalarType type() const {
    return kind_ == Kind::Bool ? kBool : kind_ == Kind::Int ? kLong : kind_ == Kind::Double ? kDouble : kComplexDouble;
  }

  // A complex number converted to a real type keeps its real part.
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, complex<float>> || std::is_same_v<T, complex<double>>) {
      using R = typename T::value_type;
      if (kind_ == Kind::Complex) return T(static_cast<R>(v_.z[0]), static_cast<R>(v_.z[1]));
      return T(kind_ == Kind::Double ? static_cast<R>(v_.d) : static_cast<R>(v_.i));
    } else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
      return static_cast<T>(to<complex<typename T::value_type>>());
    } else if constexpr (std::is_same_v<T, bool>) {
      if (kind_ == Kind::Complex) return v_.z[0] != 0 || v_.z[1] != 0;
      return kind_ == Kind::Double ? v_.d != 0 : v_.i != 0;
    } else if (kind_ == Kind::Complex) {
      return Scalar(v_.z[0]).to<T>();
    } else if (kind_ == Kind::Double) {
      return static_cast<T>(v_.d);
    } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      return T(static_cast<float>(v_.i));
    } else {
      return static_cast<T>(v_.i);
    }
  }
  double toDouble() const { return to<double>(); }
  float toFloat() const { return to<float>(); }
  int64_t toLong() const { return to<int64_t>(); }
  int toInt() const { return to<int>(); }
  bool toBool() const { return to<bool>(); }
  complex<double> toComplexDouble() const { return to<complex<double>>(); }
  complex<float> toComplexFloat() const { return to<complex<float>>(); }

  Scalar operator-() const {
    if (kind_ == Kind::Complex) return Scalar(complex<double>(-v_.z[0], -v_.z[1]));
    if (kind_ == Kind::Double) return Scalar(-v_.d);
    return Scalar(-v_.i);
  }
  bool equal(double d) const {
    if (kind_ == Kind::Complex) return v_.z[0] == d && v_.z[1] == 0;
    return kind_ == Kind::Double ? v_.d == d : static_cast<double>(v_.i) == d;
  }

 private:
  Kind kind_;
  union {
    int64_t i;
    double d;
    double z[2];
  } v_;
};

std::ostream& operator<<(std::ostream& os, const Scalar& s);

}  // namespace ember
