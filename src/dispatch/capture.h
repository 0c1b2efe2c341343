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
};

// A recorded op call: the op's run on the arguments the graph keeps. Not a template: each
// argument is kept by a class of its type (StoredArgOf, shared by every op taking that type), and
// the op's own part is one function that hands them to Op::run (replay_call).
class CapturedCall {
 public:
  using Run = void (*)(StoredArg* const* args);
  CapturedCall(Run run, std::vector<std::unique_ptr<StoredArg>> args);
  ~CapturedCall();
  CapturedCall(const CapturedCall&) = delete;
  CapturedCall& operator=(const CapturedCall&) = delete;
  void replay();
  // The kept arguments, tagged as the tracing layer tags them (at most 16).
  size_t args(TracedArg* out) const;

 private:
  Run run_;
  std::vector<std::unique_ptr<StoredArg>> owned_;
  std::vector<StoredArg*> args_;
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

// Clears the capture bit while a recorded op runs, so that the ops it calls are not recorded.
struct SuspendCapture {
  SuspendCapture() { thread_state().active &= ~static_cast<uint32_t>(kCaptureLayer); }
  ~SuspendCapture() { thread_state().active |= kCaptureLayer; }
  SuspendCapture(const SuspendCapture&) = delete;
  SuspendCapture& operator=(const SuspendCapture&) = delete;
};

namespace capture_impl {

template <class T>
struct is_array_ref : std::false_type {};
template <class T>
struct is_array_ref<ArrayRef<T>> : std::true_type {};

// An argument as a recorded call keeps it: tensors as the recorder's aliases, views of the
// caller's memory (ArrayRef, string_view) as owned copies, a Tensor* out-parameter as a slot of
// the call's own; other values as they are.
template <class D>
struct Stored {
  D v;
  Stored(CaptureRecorder&, const D& x) : v(x) {}
  D& get() { return v; }
  const D& view() const { return v; }
};
template <>
struct Stored<Tensor> {
  Tensor v;
  Stored(CaptureRecorder& r, const Tensor& x) : v(x.defined() ? r.keep(x) : Tensor()) {}
  Tensor& get() { return v; }
  const Tensor& view() const { return v; }
};
template <>
struct Stored<std::optional<Tensor>> {
  std::optional<Tensor> v;
  Stored(CaptureRecorder& r, const std::optional<Tensor>& x) {
    if (x) v = x->defined() ? r.keep(*x) : Tensor();
  }
  std::optional<Tensor>& get() { return v; }
  const std::optional<Tensor>& view() const { return v; }
};
template <>
struct Stored<std::vector<Tensor>> {
  std::vector<Tensor> v;
  Stored(CaptureRecorder& r, const std::vector<Tensor>& x) {
    v.reserve(x.size());
    for (const Tensor& t : x) v.push_back(t.defined() ? r.keep(t) : Tensor());
  }
  std::vector<Tensor>& get() { return v; }
  const std::vector<Tensor>& view() const { return v; }
};
template <>
struct Stored<std::vector<std::optional<Tensor>>> {
  std::vector<std::optional<Tensor>> v;
  Stored(CaptureRecorder& r, const std::vector<std::optional<Tensor>>& x) {
    v.reserve(x.size());
    for (const auto& t : x) v.push_back(t ? std::optional<Tensor>(t->defined() ? r.keep(*t) : Tensor()) : std::nullopt);
  }
  std::vector<std::optional<Tensor>>& get() { return v; }
  const std::vector<std::optional<Tensor>>& view() const { return v; }
};
template <class T>
struct Stored<ArrayRef<T>> {
  Stored<std::vector<std::decay_t<T>>> items;
  Stored(CaptureRecorder& r, ArrayRef<T> x) : items(r, std::vector<std::decay_t<T>>(x.begin(), x.end())) {}
  ArrayRef<T> get() { return ArrayRef<T>(items.get()); }
  ArrayRef<T> view() const { return ArrayRef<T>(items.view()); }
};
template <>
struct Stored<OptionalIntArrayRef> {
  std::optional<std::vector<int64_t>> v;
  Stored(CaptureRecorder&, const OptionalIntArrayRef& x) {
    if (x) v.emplace(x->begin(), x->end());
  }
  OptionalIntArrayRef get() const { return v ? OptionalIntArrayRef(IntArrayRef(*v)) : OptionalIntArrayRef(); }
  OptionalIntArrayRef view() const { return get(); }
};
template <>
struct Stored<std::optional<IntArrayRef>> {
  std::optional<std::vector<int64_t>> v;
  Stored(CaptureRecorder&, const std::optional<IntArrayRef>& x) {
    if (x) v.emplace(x->begin(), x->end());
  }
  std::optional<IntArrayRef> get() const { return v ? std::optional<IntArrayRef>(IntArrayRef(*v)) : std::nullopt; }
  std::optional<IntArrayRef> view() const { return get(); }
};
template <>
struct Stored<std::string_view> {
  std::string v;
  Stored(CaptureRecorder&, std::string_view x) : v(x) {}
  std::string_view get() const { return v; }
  std::string_view view() const { return v; }
};
template <>
struct Stored<std::optional<std::string_view>> {
  std::optional<std::string> v;
  Stored(CaptureRecorder&, const std::optional<std::string_view>& x) {
    if (x) v.emplace(*x);
  }
  std::optional<std::string_view> get() const { return v ? std::optional<std::string_view>(*v) : std::nullopt; }
  std::optional<std::string_view> view() const { return get(); }
};
template <>
struct Stored<Tensor*> {  // an out-parameter the op fills: the call's own slot
  Tensor slot;
  Stored(CaptureRecorder&, Tensor*) {}
  Tensor* get() { return &slot; }
  std::nullopt_t view() const { return std::nullopt; }
};

template <class D>
class StoredArgOf final : public StoredArg {
 public:
  StoredArgOf(CaptureRecorder& r, const D& x) : stored(r, x) {}
  TracedArg traced() const override { return traced_arg(stored.view()); }
  Stored<D> stored;
};
// The op's part of a replay: its run on the kept arguments.
template <class Op, class... A, size_t... I>
void replay_call_at(StoredArg* const* args, std::index_sequence<I...>) {
  (void)Op::run(static_cast<StoredArgOf<std::decay_t<A>>*>(args[I])->stored.get()...);
}
template <class Op, class... A>
void replay_call(StoredArg* const* args) {
  replay_call_at<Op, A...>(args, std::index_sequence_for<A...>{});
}

// One op call being recorded (out of line, for every op): begins it with the recorder, keeps its
// arguments, ends it with its results, or abandons it if the op throws before.
class CaptureScope {
 public:
  CaptureScope(const char* op, const TracedArg* args, size_t n, uint32_t writes, bool returns_tensors);
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;
  CaptureRecorder& recorder() { return *rec_; }
  void keep(std::unique_ptr<StoredArg> arg) { args_.push_back(std::move(arg)); }
  void end(CapturedCall::Run run, const Tensor* const* results, size_t n);

 private:
  CaptureRecorder* rec_;
  std::vector<std::unique_ptr<StoredArg>> args_;
  bool ended_ = false;
};

template <class D>
[[gnu::noinline]] void keep_arg(CaptureScope& scope, const D& x) {
  scope.keep(std::make_unique<StoredArgOf<D>>(scope.recorder(), x));
}

template <class T>
inline constexpr bool is_written_arg = std::is_same_v<T, Tensor&> || std::is_same_v<std::decay_t<T>, Tensor*>;
template <class... A>
constexpr uint32_t written_args() {
  uint32_t bits = 0, i = 0;
  ((bits |= (is_written_arg<A> && i < 32 ? 1u << i : 0u), ++i), ...);
  return bits;
}

template <class R>
void end_call(CaptureScope& scope, CapturedCall::Run run, const R& r) {
  using D = std::decay_t<R>;
  if constexpr (std::is_same_v<D, Tensor>) {
    const Tensor* p = &r;
    scope.end(run, &p, 1);
  } else if constexpr (std::is_same_v<D, std::vector<Tensor>>) {
    std::vector<const Tensor*> ps;
    for (const Tensor& t : r) ps.push_back(&t);
    scope.end(run, ps.data(), ps.size());
  } else if constexpr (is_tensor_tuple<D>) {
    std::apply(
        [&](const auto&... t) {
          const Tensor* ps[] = {&t...};
          scope.end(run, ps, sizeof...(t));
        },
        r);
  } else {
    scope.end(run, nullptr, 0);
  }
}

// Op::run, recorded (see the top of this file); A are references (capture_arg_t, dispatch.h).
// Out of line and cold: a capture is rare, and each op's layers share this one copy.
template <class Op, class... A>
[[gnu::noinline, gnu::cold]] auto capture_call(A... a) -> decltype(Op::run(a...)) {
  using R = decltype(Op::run(a...));
  if constexpr (autograd::IsComposite<Op>) {
    if (thread_state().active & kGradModeLayer) return Op::run(a...);  // its inner ops record
  }
  const TracedArg targs[sizeof...(A) + 1] = {traced_arg(a)...};
  CaptureScope scope(Op::name, targs, sizeof...(A), written_args<A...>(), returns_tensors<R>);
  (keep_arg<std::decay_t<A>>(scope, a), ...);
  if constexpr (std::is_void_v<R>) {
    {
      SuspendCapture off;
      Op::run(a...);
    }
    scope.end(&replay_call<Op, A...>, nullptr, 0);
  } else {
    R r = [&]() -> R {
      SuspendCapture off;
      return Op::run(a...);
    }();
    end_call(scope, &replay_call<Op, A...>, r);
    return r;
  }
}

}  // namespace capture_impl

// Declared in autograd/layer.h, for the autograd layer's calls of Op::run.
template <class Op, class... A>
auto run_op(A&&... a) -> decltype(Op::run(std::forward<A>(a)...)) {
  if (capturing()) return capture_impl::capture_run<Op>(std::forward<A>(a)...);
  return Op::run(std::forward<A>(a)...);
}

}  // namespace ember::dispatch
