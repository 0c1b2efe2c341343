// Scalar: a number that is not a tensor (libtorch's c10::Scalar), remembering whether it is
// boolean, integral or floating so type promotion treats it as PyTorch treats a Python number.
#pragma once
#include <cstdint>
#include <ostream>
#include <type_traits>

#include "ember/dtype.h"

namespace ember {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Double };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::Bool) { v_.i = v; }  // NOLINT
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int) { v_.i = static_cast<int64_t>(v); }  // NOLINT
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Double) { v_.d = static_cast<double>(v); }  // NOLINT
  Scalar(Half v) : Scalar(static_cast<double>(static_cast<float>(v))) {}  // NOLINT
  Scalar(BFloat16 v) : Scalar(static_cast<double>(static_cast<float>(v))) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool isBoolean() const { return kind_ == Kind::Bool; }
  bool isIntegral(bool include_bool) const {
    return kind_ == Kind::Int || (include_bool && kind_ == Kind::Bool);
  }
  bool isFloatingPoint() const { return kind_ == Kind::Double; }
  // The dtype PyTorch gives this number before promotion: Bool, Long or Double.
  ScalarType type() const { return kind_ == Kind::Bool ? kBool : kind_ == Kind::Int ? kLong : kDouble; }

  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return kind_ == Kind::Double ? v_.d != 0 : v_.i != 0;
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

  Scalar operator-() const {
    if (kind_ == Kind::Double) return Scalar(-v_.d);
    return Scalar(-v_.i);
  }
  bool equal(double d) const { return kind_ == Kind::Double ? v_.d == d : static_cast<double>(v_.i) == d; }

 private:
  Kind kind_;
  union {
    int64_t i;
    double d;
  } v_;
};

std::ostream& operator<<(std::ostream& os, const Scalar& s);

}  // namespace ember
