// What every nn options struct is made of: EMBER_ARG (libtorch's TORCH_ARG: a field with a
// chaining setter and a getter), ExpandingArray (an int that stands for D equal values, or D
// values) and the enum tags libtorch passes as options (torch::kMean, torch::kFanIn, ...).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "ember/array_ref.h"
#include "ember/error.h"

// Declares `name_` with `options.name(value)` (returns *this) and `options.name()`.
#define EMBER_ARG(T, name)                                  \
 public:                                                    \
  inline auto name(const T& new_##name) -> decltype(*this) { \
    this->name##_ = new_##name;                             \
    return *this;                                           \
  }                                                         \
  inline auto name(T&& new_##name) -> decltype(*this) {     \
    this->name##_ = std::move(new_##name);                  \
    return *this;                                           \
  }                                                         \
  inline const T& name() const noexcept { return this->name##_; } \
  inline T& name() noexcept { return this->name##_; }       \
                                                            \
 private:                                                   \
  T name##_

namespace ember {

// D sizes given as one value (repeated) or as D values.
template <size_t D, class T = int64_t>
class ExpandingArray {
 public:
  template <class U, std::enable_if_t<std::is_arithmetic_v<U> || std::is_same_v<U, T> ||
                                          std::is_same_v<U, std::nullopt_t>, int> = 0>
  ExpandingArray(U single) { values_.fill(T(single)); }  // NOLINT: kernel_size(3)
  ExpandingArray(std::initializer_list<T> list) : ExpandingArray(ArrayRef<T>(list)) {}
  ExpandingArray(const std::vector<T>& v) : ExpandingArray(ArrayRef<T>(v)) {}  // NOLINT
  ExpandingArray(ArrayRef<T> v) {  // NOLINT
    EMBER_CHECK(v.size() == D, "ExpandingArray", "Expected ", D, " values, but instead got ", v.size());
    std::copy(v.begin(), v.end(), values_.begin());
  }
  T* data() { return values_.data(); }
  const T* data() const { return values_.data(); }
  static constexpr size_t size() { return D; }
  T& operator[](size_t i) { return values_[i]; }
  const T& operator[](size_t i) const { return values_[i]; }
  ArrayRef<T> operator*() const { return ArrayRef<T>(values_.data(), D); }
  std::array<T, D>* operator->() { return &values_; }  // kernel_size()->at(0), as libtorch's
  const std::array<T, D>* operator->() const { return &values_; }
  operator ArrayRef<T>() const { return ArrayRef<T>(values_.data(), D); }  // NOLINT
  bool operator==(const ExpandingArray& o) const { return values_ == o.values_; }
  bool operator!=(const ExpandingArray& o) const { return values_ != o.values_; }

 private:
  std::array<T, D> values_;
};
// As libtorch prints them: [3, 3], or the value alone for one dim.
template <size_t D, class T>
std::ostream& operator<<(std::ostream& os, const ExpandingArray<D, T>& a) {
  if constexpr (D == 1) {
    return os << a[0];
  } else {
    return os << *a;
  }
}

// Sizes where an entry may be left open (adaptive pooling: None keeps the input's size).
template <size_t D>
using ExpandingArrayWithOptionalElem = ExpandingArray<D, std::optional<int64_t>>;
template <size_t D>
std::ostream& operator<<(std::ostream& os, const ExpandingArray<D, std::optional<int64_t>>& a) {
  os << '[';
  for (size_t i = 0; i < D; ++i) {
    if (i) os << ", ";
    if (a[i]) os << *a[i]; else os << "None";
  }
  return os << ']';
}

// libtorch's enum tags: empty types, and constants of them in namespace ember (torch::kMean).
namespace enumtype {
#define EMBER_ENUM_TAG(Name, text)                                   \
  struct k##Name {                                                   \
    static constexpr const char* str = text;                         \
  };
EMBER_ENUM_TAG(None, "None")
EMBER_ENUM_TAG(Mean, "Mean")
EMBER_ENUM_TAG(Sum, "Sum")
EMBER_ENUM_TAG(BatchMean, "BatchMean")
EMBER_ENUM_TAG(FanIn, "FanIn")
EMBER_ENUM_TAG(FanOut, "FanOut")
EMBER_ENUM_TAG(Linear, "Linear")
EMBER_ENUM_TAG(Conv1D, "Conv1D")
EMBER_ENUM_TAG(Conv2D, "Conv2D")
EMBER_ENUM_TAG(Conv3D, "Conv3D")
EMBER_ENUM_TAG(ConvTranspose1D, "ConvTranspose1D")
EMBER_ENUM_TAG(ConvTranspose2D, "ConvTranspose2D")
EMBER_ENUM_TAG(ConvTranspose3D, "ConvTranspose3D")
EMBER_ENUM_TAG(Sigmoid, "Sigmoid")
EMBER_ENUM_TAG(Tanh, "Tanh")
EMBER_ENUM_TAG(ReLU, "ReLU")
EMBER_ENUM_TAG(GELU, "GELU")
EMBER_ENUM_TAG(LeakyReLU, "LeakyReLU")
EMBER_ENUM_TAG(Constant, "Constant")
EMBER_ENUM_TAG(Reflect, "Reflect")
EMBER_ENUM_TAG(Replicate, "Replicate")
EMBER_ENUM_TAG(Circular, "Circular")
EMBER_ENUM_TAG(Valid, "Valid")
EMBER_ENUM_TAG(Same, "Same")
EMBER_ENUM_TAG(Zeros, "Zeros")
EMBER_ENUM_TAG(Nearest, "Nearest")
EMBER_ENUM_TAG(Bilinear, "Bilinear")
EMBER_ENUM_TAG(Bicubic, "Bicubic")
EMBER_ENUM_TAG(Trilinear, "Trilinear")
EMBER_ENUM_TAG(Area, "Area")
EMBER_ENUM_TAG(NearestExact, "NearestExact")
EMBER_ENUM_TAG(Max, "Max")
EMBER_ENUM_TAG(Border, "Border")
EMBER_ENUM_TAG(Reflection, "Reflection")
EMBER_ENUM_TAG(LSTM, "LSTM")
EMBER_ENUM_TAG(GRU, "GRU")
EMBER_ENUM_TAG(RNN_TANH, "RNN_TANH")
EMBER_ENUM_TAG(RNN_RELU, "RNN_RELU")
#undef EMBER_ENUM_TAG
}  // namespace enumtype

inline constexpr enumtype::kNone kNone{};
inline constexpr enumtype::kMean kMean{};
inline constexpr enumtype::kSum kSum{};
inline constexpr enumtype::kBatchMean kBatchMean{};
inline constexpr enumtype::kFanIn kFanIn{};
inline constexpr enumtype::kFanOut kFanOut{};
inline constexpr enumtype::kLinear kLinear{};
inline constexpr enumtype::kConv1D kConv1D{};
inline constexpr enumtype::kConv2D kConv2D{};
inline constexpr enumtype::kConv3D kConv3D{};
inline constexpr enumtype::kConvTranspose1D kConvTranspose1D{};
inline constexpr enumtype::kConvTranspose2D kConvTranspose2D{};
inline constexpr enumtype::kConvTranspose3D kConvTranspose3D{};
inline constexpr enumtype::kSigmoid kSigmoid{};
inline constexpr enumtype::kTanh kTanh{};
inline constexpr enumtype::kReLU kReLU{};
inline constexpr enumtype::kGELU kGELU{};
inline constexpr enumtype::kLeakyReLU kLeakyReLU{};
inline constexpr enumtype::kConstant kConstant{};
inline constexpr enumtype::kReflect kReflect{};
inline constexpr enumtype::kReplicate kReplicate{};
inline constexpr enumtype::kCircular kCircular{};
inline constexpr enumtype::kValid kValid{};
inline constexpr enumtype::kSame kSame{};
inline constexpr enumtype::kZeros kZeros{};
inline constexpr enumtype::kNearest kNearest{};
inline constexpr enumtype::kBilinear kBilinear{};
inline constexpr enumtype::kBicubic kBicubic{};
inline constexpr enumtype::kTrilinear kTrilinear{};
inline constexpr enumtype::kArea kArea{};
inline constexpr enumtype::kNearestExact kNearestExact{};
inline constexpr enumtype::kMax kMax{};
inline constexpr enumtype::kBorder kBorder{};
inline constexpr enumtype::kReflection kReflection{};
inline constexpr enumtype::kLSTM kLSTM{};
inline constexpr enumtype::kGRU kGRU{};
inline constexpr enumtype::kRNN_TANH kRNN_TANH{};
inline constexpr enumtype::kRNN_RELU kRNN_RELU{};

// The name of the tag a variant holds ("Mean").
template <class V>
const char* enum_name(const V& v) {
  return std::visit([](const auto& tag) { return std::decay_t<decltype(tag)>::str; }, v);
}

}  // namespace ember
