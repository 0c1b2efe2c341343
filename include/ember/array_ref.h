// Non-owning views of contiguous arrays (libtorch's IntArrayRef) and a small inline vector.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <optional>
#include <ostream>
#include <type_traits>
#include <vector>

#include "ember/error.h"

namespace ember {

template <class T>
class ArrayRef {
 public:
  using value_type = T;
  using iterator = const T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<const T*>;

  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T& one) : data_(&one), size_(1) {}  // NOLINT: libtorch allows t.sum(1)
  constexpr ArrayRef(const T* data, size_t n) : data_(data), size_(n) {}
  constexpr ArrayRef(const T* begin, const T* end) : data_(begin), size_(end - begin) {}
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  // Like libtorch's: valid for the full-expression that holds the braced list (a call argument).
  // (The pointer comes through first(): GCC's -Winit-list-lifetime flags a member initialized
  // from il.begin() itself, and a diagnostic pragma around it is lost in a precompiled header.)
  constexpr ArrayRef(std::initializer_list<T> il) : data_(first(il)), size_(il.size()) {}  // NOLINT
  template <size_t N>
  constexpr ArrayRef(const T (&arr)[N]) : data_(arr), size_(N) {}  // NOLINT
  template <size_t N>
  constexpr ArrayRef(const std::array<T, N>& arr) : data_(arr.data()), size_(N) {}  // NOLINT

  constexpr const T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T* cbegin() const { return data_; }
  constexpr const T* cend() const { return data_ + size_; }
  reverse_iterator rbegin() const { return reverse_iterator(end()); }
  reverse_iterator rend() const { return reverse_iterator(begin()); }
  constexpr const T& operator[](size_t i) const { return data_[i]; }
  constexpr const T& front() const { return data_[0]; }
  constexpr const T& back() const { return data_[size_ - 1]; }
  // As libtorch's: bounds-checked element, the m elements from n on, the elements from n on.
  const T& at(size_t i) const {
    EMBER_CHECK(i < size_, "ArrayRef", "invalid index Index = ", i, "; Length = ", size_);
    return data_[i];
  }
  ArrayRef slice(size_t n, size_t m) const {
    EMBER_CHECK(n <= size_ && m <= size_ - n, "ArrayRef", "invalid slice, N = ", n, "; M = ", m, "; size = ", size_);
    return ArrayRef(data_ + n, m);
  }
  ArrayRef slice(size_t n) const {
    EMBER_CHECK(n <= size_, "ArrayRef", "invalid slice, N = ", n, "; size = ", size_);
    return ArrayRef(data_ + n, size_ - n);
  }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  bool equals(ArrayRef other) const {
    if (size_ != other.size_) return false;
    for (size_t i = 0; i < size_; ++i)  // shapes are short: a loop beats a memcmp call
      if (!(data_[i] == other.data_[i])) return false;
    return true;
  }
  friend bool operator==(ArrayRef a, ArrayRef b) { return a.equals(b); }
  friend bool operator!=(ArrayRef a, ArrayRef b) { return !a.equals(b); }

 private:
  static constexpr const T* first(std::initializer_list<T> il) { return il.begin() == il.end() ? nullptr : il.begin(); }

  const T* data_ = nullptr;
  size_t size_ = 0;
};

using IntArrayRef = ArrayRef<int64_t>;
// An optional IntArrayRef whose conversions run in the caller's expression, as libtorch's
// OptionalIntArrayRef: std::optional's converting constructor would build the IntArrayRef inside
// itself, so `t.sum(1)` or `t.sum({0, 1})` would point at a temporary already destroyed.
class OptionalIntArrayRef : public std::optional<IntArrayRef> {
  using Base = std::optional<IntArrayRef>;

 public:
  OptionalIntArrayRef() = default;
  OptionalIntArrayRef(std::nullopt_t) {}                            // NOLINT
  OptionalIntArrayRef(IntArrayRef a) : Base(a) {}                   // NOLINT
  OptionalIntArrayRef(const int64_t& one) : Base(IntArrayRef(one)) {}  // NOLINT
  OptionalIntArrayRef(std::initializer_list<int64_t> il) : Base(IntArrayRef(il)) {}  // NOLINT
  template <class C, std::enable_if_t<std::is_convertible_v<const C&, IntArrayRef> && !std::is_arithmetic_v<C> &&
                                          !std::is_same_v<C, IntArrayRef>,
                                      int> = 0>
  OptionalIntArrayRef(const C& c) : Base(IntArrayRef(c)) {}  // NOLINT: std::vector, DimVector
};

template <class T>
std::ostream& operator<<(std::ostream& os, ArrayRef<T> a) {
  os << '[';
  for (size_t i = 0; i < a.size(); ++i) os << (i ? ", " : "") << a[i];
  return os << ']';
}

// A vector of trivially copyable T that keeps up to N elements inline: sizes and strides of
// tensors up to N dims live inside the TensorImpl without a heap allocation.
template <class T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  SmallVector() = default;
  explicit SmallVector(size_t n, T v = T()) { resize(n, v); }
  SmallVector(ArrayRef<T> a) { assign(a.begin(), a.end()); }  // NOLINT
  SmallVector(std::initializer_list<T> il) { assign(il.begin(), il.end()); }
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector(SmallVector&& o) noexcept { steal(o); }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~SmallVector() { release(); }

  void assign(const T* b, const T* e) {
    size_t n = e - b;
    reserve(n);
    if (n) std::memmove(data_, b, n * sizeof(T));
    size_ = n;
  }
  void reserve(size_t n) {
    if (n <= cap_) return;
    size_t cap = std::max(n, cap_ * 2);
    T* p = static_cast<T*>(std::malloc(cap * sizeof(T)));
    if (!p) throw std::bad_alloc();
    if (size_) std::memcpy(p, data_, size_ * sizeof(T));
    if (data_ != inline_) std::free(data_);
    data_ = p;
    cap_ = cap;
  }
  void resize(size_t n, T v = T()) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = v;
    size_ = n;
  }
  void push_back(T v) {
    if (size_ == cap_) reserve(size_ + 1);
    data_[size_++] = v;
  }
  void insert(size_t pos, T v) {
    push_back(v);
    for (size_t i = size_ - 1; i > pos; --i) data_[i] = data_[i - 1];
    data_[pos] = v;
  }
  void erase(size_t pos) {
    for (size_t i = pos; i + 1 < size_; ++i) data_[i] = data_[i + 1];
    --size_;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  operator ArrayRef<T>() const { return ArrayRef<T>(data_, size_); }  // NOLINT
  ArrayRef<T> ref() const { return ArrayRef<T>(data_, size_); }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

 private:
  void release() {
    if (data_ != inline_) std::free(data_);
    data_ = inline_;
    cap_ = N;
    size_ = 0;
  }
  void steal(SmallVector& o) {
    if (o.data_ == o.inline_) {
      data_ = inline_;
      cap_ = N;
      size_ = o.size_;
      if (size_) std::memcpy(inline_, o.inline_, size_ * sizeof(T));
    } else {
      data_ = o.data_;
      cap_ = o.cap_;
      size_ = o.size_;
      o.data_ = o.inline_;
      o.cap_ = N;
    }
    o.size_ = 0;
  }
  T inline_[N];
  T* data_ = inline_;
  size_t size_ = 0;
  size_t cap_ = N;
};

using DimVector = SmallVector<int64_t, 5>;

}  // namespace ember
