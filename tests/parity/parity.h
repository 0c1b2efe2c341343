// Shared helpers of the parity tests: move tensors between Ember and libtorch, compare them,
// and report the worst mismatch. Only parity tests include libtorch.
#pragma once
#include <gtest/gtest.h>
#include <ATen/autocast_mode.h>
#include <c10/core/CPUAllocator.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "ember/ember.h"

namespace parity {

// libtorch symbolizes a backtrace (dladdr per frame, milliseconds) for every c10::Error it builds,
// and the parity tests make it throw on purpose thousands of times (shapes and dtypes it
// rejects, errors compared with Ember's): two thirds of reduce_parity's time went there. The
// tests read only the messages.
inline const bool kNoLibtorchBacktraces = (c10::SetStackTraceFetcher([] { return std::string(); }), true);

// libtorch's CPU allocator, keeping freed blocks for reuse. The test programs carry
// AddressSanitizer's runtime, whose allocator maps every block above 128 KiB afresh and unmaps it
// when freed, so each page libtorch wrote into a new tensor faulted: a third of the parity tests'
// time against the Release library was the kernel's (8.2 M page faults). Blocks of 64 KiB and more
// are kept in size classes (four per power of two, as Ember's allocator), up to 1 GiB. libtorch's
// code is not instrumented: ASan saw nothing in its blocks before either.
class CachingTorchAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) const override {
    if (n == 0) return {nullptr, nullptr, &release, c10::Device(c10::DeviceType::CPU)};
    const size_t bytes = size_class(n);
    void* block = nullptr;
    if (bytes >= kCachedFrom) {
      Cache& c = cache();
      std::lock_guard<std::mutex> lock(c.mutex);
      auto it = c.free.find(bytes);
      if (it != c.free.end() && !it->second.empty()) {
        block = it->second.back();
        it->second.pop_back();
        c.bytes -= bytes;
      }
    }
    if (!block) {
      block = std::aligned_alloc(kHeader, kHeader + bytes);
      if (!block) throw std::bad_alloc();
      std::memcpy(block, &bytes, sizeof bytes);
    }
    void* data = static_cast<char*>(block) + kHeader;
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }

 private:
  static constexpr size_t kHeader = 64;  // the block's size class, before data (libtorch's alignment)
  static constexpr size_t kCachedFrom = size_t{64} << 10;
  static constexpr size_t kMaxCached = size_t{1} << 30;
  struct Cache {
    std::mutex mutex;
    std::unordered_map<size_t, std::vector<void*>> free;
    size_t bytes = 0;
  };
  static Cache& cache() {
    static Cache* c = new Cache;  // never destroyed: tensors may be freed during static destruction
    return *c;
  }
  static size_t size_class(size_t n) {
    n = (n + kHeader - 1) / kHeader * kHeader;
    if (n < kCachedFrom) return n;
    const size_t step = (size_t{1} << (63 - __builtin_clzll(n - 1))) / 4;
    return (n + step - 1) / step * step;
  }
  static void release(void* data) {
    if (!data) return;
    void* block = static_cast<char*>(data) - kHeader;
    size_t bytes;
    std::memcpy(&bytes, block, sizeof bytes);
    if (bytes >= kCachedFrom) {
      Cache& c = cache();
      std::lock_guard<std::mutex> lock(c.mutex);
      if (c.bytes + bytes <= kMaxCached) {
        c.free[bytes].push_back(block);
        c.bytes += bytes;
        return;
      }
    }
    std::free(block);
  }
};
inline const bool kCachingTorchAllocator = [] {
  c10::SetCPUAllocator(new CachingTorchAllocator, /*priority=*/1);  // kept to the end: tensors outlive main
  return true;
}();

// Every dtype Ember and libtorch share.
inline constexpr ember::ScalarType kAllTypes[] = {ember::kFloat, ember::kDouble, ember::kHalf, ember::kBFloat16,
                                                  ember::kByte,  ember::kChar,   ember::kShort, ember::kInt,
                                                  ember::kLong,  ember::kBool};

// libtorch 1.13 runs bfloat16 matmul and convolution on oneDNN only on CPUs with AVX512-BW, -VL
// and -DQ (its mkldnn_bf16_device_check). Elsewhere (AVX2-only CPUs such as AMD Zen 3) its own
// kernels accumulate in bfloat16 and miss the rounded product by several bfloat16 ulps on sums of
// tens of terms, while Ember accumulates in float32 on every CPU. Tests of those products then
// compare with libtorch's float32 result on the same values, rounded once to bfloat16: what its
// oneDNN path computes.
inline bool libtorch_bfloat16_on_onednn() {
  static const bool on = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                         __builtin_cpu_supports("avx512dq");
  return on;
}
inline torch::ScalarType to_torch(ember::ScalarType t) {
  switch (t) {
    case ember::kByte: return torch::kUInt8;
    case ember::kChar: return torch::kInt8;
    case ember::kShort: return torch::kInt16;
    case ember::kInt: return torch::kInt32;
    case ember::kLong: return torch::kInt64;
    case ember::kHalf: return torch::kFloat16;
    case ember::kFloat: return torch::kFloat32;
    case ember::kDouble: return torch::kFloat64;
    case ember::kBool: return torch::kBool;
    case ember::kBFloat16: return torch::kBFloat16;
    case ember::kComplexFloat: return torch::kComplexFloat;
    case ember::kComplexDouble: return torch::kComplexDouble;
    default: throw std::runtime_error("parity: unsupported dtype");
  }
}

inline ember::ScalarType to_ember(torch::ScalarType t) {
  switch (t) {
    case torch::kUInt8: return ember::kByte;
    case torch::kInt8: return ember::kChar;
    case torch::kInt16: return ember::kShort;
    case torch::kInt32: return ember::kInt;
    case torch::kInt64: return ember::kLong;
    case torch::kFloat16: return ember::kHalf;
    case torch::kFloat32: return ember::kFloat;
    case torch::kFloat64: return ember::kDouble;
    case torch::kBool: return ember::kBool;
    case torch::kBFloat16: return ember::kBFloat16;
    case torch::kComplexFloat: return ember::kComplexFloat;
    case torch::kComplexDouble: return ember::kComplexDouble;
    default: throw std::runtime_error("parity: unsupported dtype");
  }
}

// Same values, sizes and strides (the storage is copied, so layouts such as channels_last or
// transposed views carry over).
inline torch::Tensor to_torch(const ember::Tensor& t_in) {
  const ember::Tensor t = t_in.resolve_conj();  // the values a conjugate view reads
  const ember::Tensor dense = t.is_non_overlapping_and_dense() ? t : t.contiguous();
  torch::Tensor out = torch::empty_strided(std::vector<int64_t>(dense.sizes().begin(), dense.sizes().end()),
                                           std::vector<int64_t>(dense.strides().begin(), dense.strides().end()),
                                           torch::TensorOptions().dtype(to_torch(t.dtype())));
  if (dense.numel() > 0) {
    // dense tensors occupy exactly numel elements starting at their data pointer's lowest address
    int64_t min_off = 0;
    for (int64_t d = 0; d < dense.dim(); ++d)
      if (dense.strides()[d] < 0) min_off += (dense.sizes()[d] - 1) * dense.strides()[d];
    std::memcpy(static_cast<char*>(out.data_ptr()) + min_off * static_cast<int64_t>(dense.element_size()),
                static_cast<const char*>(dense.data_ptr()) + min_off * static_cast<int64_t>(dense.element_size()),
                dense.nbytes());
  }
  return out;
}

inline ember::Tensor to_ember(const torch::Tensor& t_in) {
  const torch::Tensor t = t_in.resolve_conj().resolve_neg();
  const torch::Tensor dense = t.is_non_overlapping_and_dense() ? t : t.contiguous();
  ember::Tensor out = ember::empty_strided(ember::IntArrayRef(dense.sizes().data(), dense.sizes().size()),
                                           ember::IntArrayRef(dense.strides().data(), dense.strides().size()),
                                           ember::TensorOptions().dtype(to_ember(t.scalar_type())));
  if (dense.numel() > 0) std::memcpy(out.data_ptr(), dense.data_ptr(), dense.nbytes());
  return out;
}

// Tolerances suited to a dtype: exact for integers and bool.
struct Tol {
  double rtol, atol;
};
inline Tol default_tol(ember::ScalarType t) {
  switch (t) {
    case ember::kFloat:
    case ember::kComplexFloat: return {1.3e-6, 1e-5};
    case ember::kDouble:
    case ember::kComplexDouble: return {1e-7, 1e-7};
    case ember::kHalf: return {1e-3, 1e-5};
    case ember::kBFloat16: return {1.6e-2, 1e-5};
    default: return {0, 0};
  }
}

// Compares dtype, shape and values; NaNs must match NaNs, infinities must match exactly.
// On failure the message names the worst element.
inline ::testing::AssertionResult Close(const ember::Tensor& e, const torch::Tensor& t, Tol tol) {
  if (to_torch(e.dtype()) != t.scalar_type()) {
    return ::testing::AssertionFailure() << "dtype: ember " << e.dtype() << " vs libtorch " << t.scalar_type();
  }
  std::vector<int64_t> es(e.sizes().begin(), e.sizes().end());
  if (es != t.sizes().vec()) {
    return ::testing::AssertionFailure() << "shape: ember " << e.sizes() << " vs libtorch " << t.sizes();
  }
  torch::Tensor ta = to_torch(e), tb = t.resolve_conj().resolve_neg();
  if (ta.is_complex()) {  // the parts side by side
    ta = torch::view_as_real(ta);
    tb = torch::view_as_real(tb);
  }
  torch::Tensor a = ta.to(torch::kDouble).contiguous().view(-1);
  torch::Tensor b = tb.to(torch::kDouble).contiguous().view(-1);
  const double* pa = a.data_ptr<double>();
  const double* pb = b.data_ptr<double>();
  double worst = 0;
  int64_t worst_i = -1;
  // (the count read once and equal values passed at once: this loop runs at -O0, where each
  // numel() and isnan() is a call, and was a tenth of the parity tests' time)
  const int64_t n = a.numel();
  for (int64_t i = 0; i < n; ++i) {
    const double x = pa[i], y = pb[i];
    if (x == y) continue;  // within any tolerance, infinities included
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) {
        worst = INFINITY;
        worst_i = i;
        break;
      }
      continue;
    }
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y) {
        worst = INFINITY;
        worst_i = i;
        break;
      }
      continue;
    }
    const double excess = std::fabs(x - y) - (tol.atol + tol.rtol * std::fabs(y));
    if (excess > worst) {
      worst = excess;
      worst_i = i;
    }
  }
  if (worst_i < 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "worst mismatch at flat index " << worst_i << ": ember " << pa[worst_i]
                                       << " vs libtorch " << pb[worst_i] << " (rtol " << tol.rtol << ", atol "
                                       << tol.atol << ", shape " << e.sizes() << ", dtype " << e.dtype() << ")";
}
inline ::testing::AssertionResult Close(const ember::Tensor& e, const torch::Tensor& t) {
  return Close(e, t, default_tol(e.dtype()));
}

// Random test data with a fixed seed: floats in [-2, 2), integers in [-8, 8) (unsigned [0, 16)), bools.
// Copies an Ember module's parameters and buffers into the libtorch module of the same
// structure, so both compute with the same values. Both must list the same names, which also
// checks that the registration names and order agree.
inline void copy_module_state(const ember::nn::Module& e, torch::nn::Module& t) {
  auto ep = e.named_parameters(), eb = e.named_buffers();
  auto tp = t.named_parameters(), tb = t.named_buffers();
  ASSERT_EQ(ep.keys(), tp.keys());
  ASSERT_EQ(eb.keys(), tb.keys());
  torch::NoGradGuard no_grad;
  for (const auto& item : ep) tp[item.key()].copy_(to_torch(item.value()));
  for (const auto& item : eb) tb[item.key()].copy_(to_torch(item.value()));
}

inline ember::Tensor random(ember::IntArrayRef sizes, ember::ScalarType dtype, uint64_t seed) {
  ember::Generator g(seed);
  if (ember::is_complex_type(dtype)) {  // both parts in [-2, 2)
    const ember::ScalarType r = ember::to_real_value_type(dtype);
    return ember::make_complex(random(sizes, r, seed), random(sizes, r, seed + 7919));
  }
  if (ember::is_floating_type(dtype)) {
    return (ember::rand(sizes, &g, ember::TensorOptions().dtype(ember::kDouble)) * 4 - 2).to(dtype);
  }
  if (dtype == ember::kBool) return ember::randint(0, 2, sizes, &g, ember::TensorOptions().dtype(ember::kBool));
  if (dtype == ember::kByte) return ember::randint(0, 16, sizes, &g, ember::TensorOptions().dtype(dtype));
  return ember::randint(-8, 8, sizes, &g, ember::TensorOptions().dtype(dtype));
}

// libtorch's bfloat16 CPU autocast region for a scope (what torch.autocast("cpu") does), to
// compare with ember::AutocastGuard.
struct TorchAutocast {
  TorchAutocast() {
    at::autocast::set_autocast_cpu_dtype(torch::kBFloat16);
    at::autocast::set_cpu_enabled(true);
    at::autocast::increment_nesting();
  }
  ~TorchAutocast() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_cpu_enabled(false);
  }
  TorchAutocast(const TorchAutocast&) = delete;
  TorchAutocast& operator=(const TorchAutocast&) = delete;
};

// The message of the ember::Error `f` raises ("" when it raises none).
template <class F>
std::string ember_error(F&& f) {
  try {
    f();
  } catch (const ember::Error& e) {
    return e.what();
  }
  return "";
}
// The first line of the c10::Error `f` raises ("" when it raises none).
template <class F>
std::string torch_error(F&& f) {
  try {
    f();
  } catch (const c10::Error& e) {
    const std::string m = e.what();
    return m.substr(0, m.find('\n'));
  }
  return "";
}

}  // namespace parity

// Both raise, and Ember's message holds libtorch's first line.
#define EXPECT_SAME_ERROR(ember_call, torch_call)                                          \
  do {                                                                                     \
    const std::string em = parity::ember_error([&] { (void)(ember_call); });               \
    const std::string tm = parity::torch_error([&] { (void)(torch_call); });               \
    EXPECT_FALSE(tm.empty()) << "libtorch accepted " #torch_call;                          \
    EXPECT_NE(em.find(tm), std::string::npos) << "ember: " << em << "\nlibtorch: " << tm; \
  } while (0)
