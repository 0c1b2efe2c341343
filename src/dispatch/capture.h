// The capture rule of dispatch::call (ember::graphs, docs/graphs.md). While a graph captures on
// this thread, kCaptureLayer is set in the layer word, as kTracingLayer is while fx traces: every
// op takes the layers' path and runs as usual (its outputs are real), and where the layers call
// the op's own run (Op::run: in call_grad_layers, run_inference, run_tracking_views and the
// autograd layer) that call is recorded, with the arguments the op receives: after autocast
// (whose casts are ops of their own, recorded) and under autograd (whose nodes make backward's
// ops, recorded when backward runs in the region). A replay makes the same calls again with no
// layer and, through the graph's pool, on the same memory (see graphs/graph.cpp).
//
// Ops called inside a recorded op are not recorded (the op calls them again when replayed),
// except inside a composite op under grad mode: those record their own nodes, so they are
// recorded one by one and the composite is not. Code that calls a kernel outside dispatch::call
// (the multi-tensor ops, the fused optimizers) tells the graph with record_kernel.
//
// Included at the end of dispatch.h.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace ember::dispatch {

// One argument a recorded call keeps, type-erased (capture_impl::StoredArgOf).
class StoredArg {
 public:
  virtual ~StoredArg() = default;
  virtual TracedArg traced() const = 0;
  virtual void* value() = 0;  // the value the op receives (a boxed argument, boxed.h)
};

// A recorded op call: the op's run on the arguments the graph keeps. Not a template: each
// argument is kept by a class of its type (StoredArgOf, shared by every op taking that type), and
// the op's own part is its boxed run (boxed::Run), given their values.
class CapturedCall {
 public:
  using Run = void (*)(void* const* args, void* result, uint32_t active);
  CapturedCall(Run run, std::vector<std::unique_ptr<StoredArg>> args);
  ~CapturedCall();
  CapturedCall(const CapturedCall&) = delete;
  CapturedCall& operator=(const CapturedCall&) = delete;
  void replay();
  // The kept arguments, tagged as the tracing layer tags them (at most 16).
  size_t args(TracedArg* out) const;

 private:
  Run run_;
  std::vector<std::unique_ptr<StoredArg>> args_;
  std::vector<void*> values_;
};

// Implemented by ember::graphs (a graph's capture).
class CaptureRecorder {
 public:
  // Before the op runs: throws an ember::Error if the call cannot be replayed. `writes` has bit
  // i set when argument i is written (a non-const Tensor& or a Tensor*).
  virtual void begin(const char* op, const TracedArg* args, size_t n, uint32_t writes, bool returns_tensors) = 0;
  // A tensor argument as the recorded call keeps it: an alias of the same memory and layout.
  virtual Tensor keep(const Tensor& t) = 0;
  // After the op ran: the call to make again, and its results.
  virtual void end(std::unique_ptr<CapturedCall> call, const Tensor* const* results, size_t n) = 0;
  // The op threw: nothing is recorded.
  virtual void abandon() noexcept = 0;
  // A kernel run outside dispatch::call: `replay` runs it again on the same memory. `reads` and
  // `writes` are the tensors whose memory it reads and writes (written ones get their version
  // bumped at each replay, as the kernel's caller does).
  virtual void kernel(const char* name, std::function<void()> replay, TensorList reads, TensorList writes) = 0;

 protected:
  ~CaptureRecorder() = default;
};
CaptureRecorder* capture_recorder();            // this thread's, while it captures
void set_capture_recorder(CaptureRecorder* r);  // also sets or clears kCaptureLayer

// Whether this thread captures (outside any recorded op).
inline bool capturing() { return (thread_state().active & kCaptureLayer) != 0; }
// For code that calls kernels directly: while capturing, the call is recorded (see kernel above).
void record_kernel(const char* name, std::function<void()> replay, TensorList reads, TensorList writes);

namespace capture_impl {

// An argument as a recorded call keeps it (`v`, what the op receives): tensors as the recorder's
// aliases, views of the caller's memory (ArrayRef, string_view) viewing owned copies, a Tensor*
// out-parameter pointing to a slot of the call's own; other values as they are. Never moved (a
// StoredArgOf lives on the heap), so that the views stay valid.
template <class D>
struct Stored {
  D v;
  Stored(CaptureRecorder&, const D& x) : v(x) {}
};
template <>
struct Stored<Tensor> {
  Tensor v;
  Stored(CaptureRecorder& r, const Tensor& x) : v(x.defined() ? r.keep(x) : Tensor()) {}
};
template <>
struct Stored<std::optional<Tensor>> {
  std::optional<Tensor> v;
  Stored(CaptureRecorder& r, const std::optional<Tensor>& x) {
    if (x) v = x->defined() ? r.keep(*x) : Tensor();
  }
};
template <>
struct Stored<std::vector<Tensor>> {
  std::vector<Tensor> v;
  Stored(CaptureRecorder& r, const std::vector<Tensor>& x) {
    v.reserve(x.size());
    for (const Tensor& t : x) v.push_back(t.defined() ? r.keep(t) : Tensor());
  }
};
template <>
struct Stored<std::vector<std::optional<Tensor>>> {
  std::vector<std::optional<Tensor>> v;
  Stored(CaptureRecorder& r, const std::vector<std::optional<Tensor>>& x) {
    v.reserve(x.size());
    for (const auto& t : x) v.push_back(t ? std::optional<Tensor>(t->defined() ? r.keep(*t) : Tensor()) : std::nullopt);
  }
};
template <class T>
struct Stored<ArrayRef<T>> {
  Stored<std::vector<std::decay_t<T>>> items;
  ArrayRef<T> v;
  Stored(CaptureRecorder& r, ArrayRef<T> x) : items(r, std::vector<std::decay_t<T>>(x.begin(), x.end())), v(items.v) {}
};
template <>
struct Stored<OptionalIntArrayRef> {
  std::optional<std::vector<int64_t>> items;
  OptionalIntArrayRef v;
  Stored(CaptureRecorder&, const OptionalIntArrayRef& x) {
    if (x) v = IntArrayRef(items.emplace(x->begin(), x->end()));
  }
};
template <>
struct Stored<std::optional<IntArrayRef>> {
  std::optional<std::vector<int64_t>> items;
  std::optional<IntArrayRef> v;
  Stored(CaptureRecorder&, const std::optional<IntArrayRef>& x) {
    if (x) v = IntArrayRef(items.emplace(x->begin(), x->end()));
  }
};
template <>
struct Stored<std::string_view> {
  std::string s;
  std::string_view v;
  Stored(CaptureRecorder&, std::string_view x) : s(x), v(s) {}
};
template <>
struct Stored<std::optional<std::string_view>> {
  std::optional<std::string> s;
  std::optional<std::string_view> v;
  Stored(CaptureRecorder&, const std::optional<std::string_view>& x) {
    if (x) v = std::string_view(s.emplace(*x));
  }
};
template <>
struct Stored<Tensor*> {  // an out-parameter the op fills: the call's own slot
  Tensor slot;
  Tensor* v = &slot;
  Stored(CaptureRecorder&, Tensor*) {}
};

template <class D>
class StoredArgOf final : public StoredArg {
 public:
  StoredArgOf(CaptureRecorder& r, const D& x) : stored(r, x) {}
  TracedArg traced() const override {
    if constexpr (std::is_same_v<D, Tensor*>) {
      return TracedArg();  // the slot is the call's own, not an argument
    } else {
      return traced_arg(stored.v);
    }
  }
  void* value() override { return &stored.v; }
  Stored<D> stored;
};

template <class T>
inline constexpr bool is_written_arg = std::is_same_v<T, Tensor&> || std::is_same_v<std::decay_t<T>, Tensor*>;
template <class... A>
constexpr uint32_t written_args() {
  uint32_t bits = 0, i = 0;
  ((bits |= (is_written_arg<A> && i < 32 ? 1u << i : 0u), ++i), ...);
  return bits;
}

}  // namespace capture_impl

// Declared in autograd/layer.h, for the autograd layer's calls of Op::run. (Inlined even at -O0:
// one function less per op in the sanitizer builds.)
template <class Op, class... A>
[[gnu::always_inline]] inline auto run_op(A&&... a) -> decltype(Op::run(std::forward<A>(a)...)) {
  if (capturing()) return capture_impl::capture_run<Op>(std::forward<A>(a)...);
  return Op::run(std::forward<A>(a)...);
}

}  // namespace ember::dispatch
