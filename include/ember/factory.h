// Factories, random numbers and the global Generator.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ember/shape.h"
#include "ember/tensor.h"

namespace ember {

// The CPU generator of libtorch: a 32-bit Mersenne twister (mt19937) seeded with the low 32 bits
// of the seed, so that a seed gives the numbers libtorch gives (src/ops/random.cpp draws each
// distribution as libtorch's CPU kernels do). The global one is seeded by manual_seed; ops take an
// optional Generator like PyTorch's `generator=` argument.
class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ull) { set_current_seed(seed); }
  void set_current_seed(uint64_t seed);
  uint64_t current_seed() const { return seed_; }
  uint32_t random();         // the next 32 bits of the stream
  uint64_t random64();       // two draws: the first the high half
  uint64_t next_u64() { return random64(); }
  double next_double();      // uniform in [0, 1): 53 bits of random64(), libtorch's double uniform
  float next_float();        // uniform in [0, 1): 24 bits of random(), libtorch's float uniform
  double next_normal();      // standard normal, libtorch's normal_distribution<double> (Box-Muller, cached)
  std::mutex& mutex() { return mutex_; }

 private:
  static constexpr int kStateSize = 624;
  uint64_t seed_ = 0;
  uint32_t state_[kStateSize] = {};
  int next_ = kStateSize;
  std::optional<double> next_normal_;  // the second value of the last Box-Muller pair
  std::mutex mutex_;
};

Generator& default_generator();
void manual_seed(uint64_t seed);

Tensor empty(IntArrayRef sizes, TensorOptions options = {});
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions options = {});
Tensor zeros(IntArrayRef sizes, TensorOptions options = {});
Tensor ones(IntArrayRef sizes, TensorOptions options = {});
Tensor full(IntArrayRef sizes, const Scalar& value, TensorOptions options = {});
Tensor scalar_tensor(const Scalar& value, TensorOptions options = {});
Tensor arange(const Scalar& end, TensorOptions options = {});
Tensor arange(const Scalar& start, const Scalar& end, TensorOptions options = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions options = {});
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, TensorOptions options = {});
Tensor eye(int64_t n, TensorOptions options = {});
Tensor eye(int64_t n, int64_t m, TensorOptions options = {});
Tensor rand(IntArrayRef sizes, TensorOptions options = {});
Tensor rand(IntArrayRef sizes, Generator* generator, TensorOptions options = {});
Tensor randn(IntArrayRef sizes, TensorOptions options = {});
Tensor randn(IntArrayRef sizes, Generator* generator, TensorOptions options = {});
Tensor randint(int64_t high, IntArrayRef sizes, TensorOptions options = {});
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, TensorOptions options = {});
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, Generator* generator, TensorOptions options = {});
Tensor randperm(int64_t n, TensorOptions options = {});
Tensor randperm(int64_t n, Generator* generator, TensorOptions options = {});
Tensor normal(double mean, double std, IntArrayRef sizes, Generator* generator = nullptr, TensorOptions options = {});
// libtorch's spelling with a generator object (torch::randn(sizes, gen))
inline Tensor rand(IntArrayRef sizes, Generator& generator, TensorOptions options = {}) {
  return rand(sizes, &generator, options);
}
inline Tensor randn(IntArrayRef sizes, Generator& generator, TensorOptions options = {}) {
  return randn(sizes, &generator, options);
}
inline Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, Generator& generator, TensorOptions options = {}) {
  return randint(low, high, sizes, &generator, options);
}
inline Tensor randint(int64_t high, IntArrayRef sizes, Generator& generator, TensorOptions options = {}) {
  return randint(0, high, sizes, &generator, options);
}
inline Tensor randperm(int64_t n, Generator& generator, TensorOptions options = {}) {
  return randperm(n, &generator, options);
}
// With a tensor mean or std (broadcast): libtorch's draws; mean and std get zero gradients.
Tensor normal(const Tensor& mean, const Tensor& std, Generator* generator = nullptr);
Tensor normal(const Tensor& mean, double std = 1, Generator* generator = nullptr);
Tensor normal(double mean, const Tensor& std, Generator* generator = nullptr);
Tensor bernoulli(const Tensor& probs, Generator* generator = nullptr);
Tensor bernoulli(const Tensor& self, double p, Generator* generator = nullptr);

Tensor empty_like(const Tensor& self, TensorOptions options = {});
Tensor zeros_like(const Tensor& self, TensorOptions options = {});
Tensor ones_like(const Tensor& self, TensorOptions options = {});
Tensor full_like(const Tensor& self, const Scalar& value, TensorOptions options = {});
Tensor rand_like(const Tensor& self, TensorOptions options = {});
Tensor randn_like(const Tensor& self, TensorOptions options = {});
Tensor randint_like(const Tensor& self, int64_t low, int64_t high, TensorOptions options = {});
Tensor randint_like(const Tensor& self, int64_t high, TensorOptions options = {});

// Wraps memory owned elsewhere; the tensor never frees it unless a deleter is given.
Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions options = {});
Tensor from_blob(void* data, IntArrayRef sizes, const std::function<void(void*)>& deleter, TensorOptions options = {});
// (target_device, as libtorch's: the device the memory lives on; only the CPU here)
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const std::function<void(void*)>& deleter,
                 TensorOptions options = {}, std::optional<Device> target_device = std::nullopt);
// data is the start of the memory; the tensor's first element is storage_offset elements on.
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset,
                 const std::function<void(void*)>& deleter, TensorOptions options = {},
                 std::optional<Device> target_device = std::nullopt);

// size elements of the file's bytes (options' dtype, else the default): with shared, a mapping of
// the file itself (created or extended as needed; writes reach it), else a private copy-on-write
// mapping of a file that holds at least that many bytes.
Tensor from_file(std::string_view filename, std::optional<bool> shared = std::nullopt,
                 std::optional<int64_t> size = 0, TensorOptions options = {});

// libtorch's builder of a tensor over memory owned elsewhere:
// for_blob(data, sizes).strides(s).storage_offset(k).deleter(f).options(o).make_tensor().
// context(ctx, release) frees ctx (not data) when the storage is released.
class TensorMaker {
 public:
  using ContextDeleter = void (*)(void*);
  TensorMaker& strides(OptionalIntArrayRef value) noexcept {
    strides_ = value;
    return *this;
  }
  TensorMaker& storage_offset(std::optional<int64_t> value) noexcept {
    storage_offset_ = value;
    return *this;
  }
  TensorMaker& deleter(std::function<void(void*)> value) noexcept {
    deleter_ = std::move(value);
    return *this;
  }
  TensorMaker& context(void* value, ContextDeleter release = nullptr) noexcept {
    context_ = value;
    context_deleter_ = release;
    return *this;
  }
  TensorMaker& target_device(std::optional<Device> value) noexcept {
    device_ = value;
    return *this;
  }
  TensorMaker& options(TensorOptions value) noexcept {
    options_ = value;
    return *this;
  }
  Tensor make_tensor() {
    std::function<void(void*)> release = deleter_;
    if (context_) {
      void* const ctx = context_;
      const ContextDeleter free_ctx = context_deleter_;
      release = [ctx, free_ctx](void*) {
        if (free_ctx) free_ctx(ctx);
      };
    }
    const DimVector contiguous = strides_ ? DimVector() : contiguous_strides(sizes_);
    return from_blob(data_, sizes_, strides_ ? *strides_ : contiguous.ref(), storage_offset_.value_or(0), release,
                     options_, device_);
  }

 private:
  friend TensorMaker for_blob(void* data, IntArrayRef sizes) noexcept;
  TensorMaker(void* data, IntArrayRef sizes) noexcept : data_(data), sizes_(sizes) {}
  void* data_;
  IntArrayRef sizes_;
  OptionalIntArrayRef strides_;
  std::optional<int64_t> storage_offset_;
  std::function<void(void*)> deleter_;
  void* context_ = nullptr;
  ContextDeleter context_deleter_ = nullptr;
  std::optional<Device> device_;
  TensorOptions options_;
};
inline TensorMaker for_blob(void* data, IntArrayRef sizes) noexcept { return TensorMaker(data, sizes); }

// tensor({1, 2, 3}), tensor({{1., 2.}, {3., 4.}}), tensor(3.5): dtype inferred as PyTorch does
// (floating -> default dtype, integers -> int64, bool -> bool) unless options say otherwise.
class TensorInit {
 public:
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  TensorInit(T v) : scalar_(v), is_scalar_(true) {}  // NOLINT
  TensorInit(std::initializer_list<TensorInit> list) : children_(list) {}  // NOLINT
  bool is_scalar() const { return is_scalar_; }
  const Scalar& scalar() const { return scalar_; }
  const std::vector<TensorInit>& children() const { return children_; }

 private:
  Scalar scalar_;
  std::vector<TensorInit> children_;
  bool is_scalar_ = false;
};
Tensor tensor(const TensorInit& init, TensorOptions options = {});
namespace detail {
// The values are written in T's dtype, then converted when options ask for another.
template <class T, class Values>
Tensor tensor_of_values(const Values& values, TensorOptions options) {
  const ScalarType own = CppTypeToScalarType<T>::value;
  Tensor out = empty({static_cast<int64_t>(values.size())}, options.dtype(own).requires_grad(std::nullopt));
  T* p = out.template data_ptr<T>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  if (options.has_dtype() && options.dtype() != own) out = out.to(options.dtype());
  return options.requires_grad() ? out.requires_grad_(true) : out;
}
}  // namespace detail
template <class T>
Tensor tensor(const std::vector<T>& values, TensorOptions options = {}) {
  return detail::tensor_of_values<T>(values, options);
}
template <class T>
Tensor tensor(ArrayRef<T> values, TensorOptions options = {}) {
  return detail::tensor_of_values<T>(values, options);
}

}  // namespace ember
