// Autocast: each op picks its own precision inside a region (PyTorch's torch.autocast("cpu")).
//
//   {
//     ember::AutocastGuard autocast;                // bfloat16 on CPU; AutocastGuard(kCPU, kHalf)
//     Tensor loss = loss_fn(model->forward(x), y);  // linear/conv/matmul in bfloat16, losses in float32
//   }
//   loss.backward();                                // outside the region: backward ops run in the
//                                                   // dtypes their forward ops were cast to
//
// The policy of each op is part of its description (see docs/amp.md for the lists, which follow
// PyTorch's CPU autocast): lower-precision ops (conv, conv_transpose, mm, bmm, matmul, addmm,
// baddbmm, linear) cast floating inputs (not float64) to the autocast dtype; float32 ops (losses,
// prod, reflect/replicate pad) cast them to float32; promote ops (cat, stack) cast them
// to the widest among them. Other ops run in their inputs' dtypes. The casts are recorded by
// autograd, so gradients of float32 parameters arrive in float32.
//
// With cache_enabled (the default), the low-precision copy of a float32 leaf that requires grad
// (a parameter) is made once and reused until the outermost region ends or the leaf is modified.
#pragma once
#include <optional>
#include <string_view>
#include <utility>

#include "ember/device.h"
#include "ember/dtype.h"

namespace ember {

// Enters an autocast region (or, with enabled = false, a full-precision region inside one);
// restores the previous state on destruction. Nestable and thread-local. `dtype` defaults to the
// enclosing region's (bfloat16 at top level); only bfloat16 and float16 are accepted, and only
// the "cpu" device: anything else raises ember::Error.
class AutocastGuard {
 public:
  explicit AutocastGuard(DeviceType device = kCPU, std::optional<ScalarType> dtype = std::nullopt, bool enabled = true,
                         std::optional<bool> cache_enabled = std::nullopt);
  explicit AutocastGuard(std::string_view device_type, std::optional<ScalarType> dtype = std::nullopt,
                         bool enabled = true, std::optional<bool> cache_enabled = std::nullopt);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool prev_enabled_;
  ScalarType prev_dtype_;
  bool prev_cache_enabled_;
};

// Runs f() in an autocast region: ember::with_autocast([&] { return model->forward(x); }).
template <class F>
decltype(auto) with_autocast(F&& f, ScalarType dtype = kBFloat16, bool enabled = true) {
  AutocastGuard guard(kCPU, dtype, enabled);
  return std::forward<F>(f)();
}

bool is_autocast_enabled(DeviceType device = kCPU);
ScalarType get_autocast_dtype(DeviceType device = kCPU);
bool is_autocast_cache_enabled();

// libtorch's spelling (at::autocast, ATen/autocast_mode.h), which the guard above is built on.
namespace autocast {
bool is_cpu_enabled();
void set_cpu_enabled(bool enabled);
ScalarType get_autocast_cpu_dtype();
void set_autocast_cpu_dtype(ScalarType dtype);  // bfloat16 or float16, else ember::Error
bool is_autocast_cache_enabled();
void set_autocast_cache_enabled(bool enabled);
void clear_cache();
// The CUDA autocast flag and dtype of libtorch 1.13 (`set_enabled(true)` around GPU code): kept
// per thread and read back; without a GPU they change nothing, as in a CPU build of libtorch.
bool is_enabled();
void set_enabled(bool enabled);
ScalarType get_autocast_gpu_dtype();
void set_autocast_gpu_dtype(ScalarType dtype);
int increment_nesting();
int decrement_nesting();  // returns the new level; the guard clears the cache when it reaches 0
}  // namespace autocast

}  // namespace ember
