// Autograd's per-tensor state and saved tensors (internal to src/autograd and the op layer).
#pragma once
#include <functional>
#include <memory>
#include <atomic>
#include <mutex>
#include <optional>
#include <thread>
#include <string>
#include <vector>

#include "ember/autograd.h"

namespace ember::autograd {

// A lock taken once per recorded use of a leaf and almost never contended: one atomic exchange to
// take, a plain store to release (a pthread mutex costs two atomic instructions and two calls).
class SpinLock {
 public:
  void lock() {
    while (locked_.exchange(true, std::memory_order_acquire))
      while (locked_.load(std::memory_order_relaxed)) std::this_thread::yield();
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

// Where a view was made (PyTorch's creation_meta): an in-place write recorded through a view made
// under no_grad or in inference mode raises, since its history cannot be told; so does one through
// an output of an op returning several views (split, chunk, unbind: one node joins them all).
enum class ViewCreation : uint8_t { kDefault, kNoGrad, kInferenceMode, kMultiOutput };

// What TensorImpl's autograd slot holds.
struct AutogradMeta final : AutogradMetaInterface {
  // Every recorded result gets one: from the thread's object cache, as its TensorImpl.
  static void* operator new(size_t n) { return cpu_allocator::allocate_object(n); }
  static void operator delete(void* p, size_t n) { cpu_allocator::deallocate_object(p, n); }
  Tensor grad;
  std::shared_ptr<Node> grad_fn;            // null for leaves
  std::weak_ptr<Node> grad_accumulator;     // leaves: the AccumulateGrad node, made on first use
  SpinLock accumulator_lock;                // threads recording ops on one leaf make one accumulator
  std::shared_ptr<Tensor> retained_grad;    // non-leaves after retain_grad()
  std::shared_ptr<HookList> hooks;          // register_hook; the node the gradient enters reads them
  // leaves: register_post_accumulate_grad_hook (engine.h), read by the AccumulateGrad node
  std::unique_ptr<std::vector<std::function<void(const Tensor&)>>> post_accumulate_hooks;
  // Views: the tensor they alias (never itself a view). After an in-place op on the base or on
  // another view, grad_fn is regenerated from the base's history (see layer.cpp).
  Tensor base;
  uint32_t view_version = 0;                // the storage version grad_fn was made at
  ViewCreation creation = ViewCreation::kDefault;  // where it was made (or its base view was)
  uint32_t output_nr = 0;
  bool requires_grad = false;               // leaves only; non-leaves require grad through grad_fn
};

AutogradMeta* get_meta(const Tensor& t);      // null when the tensor never met autograd
AutogradMeta& materialize_meta(const Tensor& t);
// Where this tensor's gradient goes: its grad_fn, or its leaf's AccumulateGrad.
Edge gradient_edge(const Tensor& t);
// Records that `view` aliases `of` (their storage is shared), made where `creation` says.
void set_view_base(const Tensor& view, const Tensor& of, ViewCreation creation);
// PyTorch's error for an in-place write recorded on a view made under no_grad, in inference mode
// or by an op returning several views (`indirect`: the write was into its base or another view of it).
[[noreturn]] void fail_view_inplace(const char* op, const Tensor& view, bool indirect);
// A view whose base's history changed since its grad_fn was made gets an AsStridedBackward0 node
// onto the base's current history (PyTorch regenerates it the same way).
void refresh_view_grad_fn(const Tensor& view, AutogradMeta& m);

// A tensor kept for backward. Checks on unpack that no in-place op changed it since (the
// storage's version counter) and that the graph was not freed. An op's own output is kept
// without its history (it would own the node that owns it) and gets it back on unpack.
class SavedVariable {
 public:
  SavedVariable() = default;
  // `output_nr`: which output of its node an output is (by default the one it has now).
  SavedVariable(const Tensor& t, bool is_output, std::optional<uint32_t> output_nr = std::nullopt);
  // `node` is the node unpacking (for outputs: their grad_fn; for messages: its name).
  Tensor unpack(const std::shared_ptr<Node>& node) const;
  void reset_data();

 private:
  Tensor data_;
  uint32_t version_ = 0;
  uint32_t output_nr_ = 0;
  bool defined_ = false;
  bool is_output_ = false;
  bool released_ = false;
  bool requires_grad_ = false;
};

// Dtypes that carry gradients (floating point).
bool is_differentiable_type(ScalarType t);

// Sums a gradient over broadcast dimensions down to `sizes` (PyTorch's sum_to).
Tensor sum_to(const Tensor& grad, IntArrayRef sizes);

}  // namespace ember::autograd
