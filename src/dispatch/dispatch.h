// The single entry point of every op. Public functions are one line: `return dispatch::call<Op>(args...)`
// where Op is the op's description (see docs/ops.md): a struct with `name` and `run`.
//
// A thread-local word says which layers are active. Each active layer takes its turn around the
// op, outermost first; layers are written once, generically, never inside each op. The layers:
// the tracer (fx::Tracer records the call as a graph node, trace.h), the op observer (the hook the
// profiler and tests use), autocast (casts arguments per the op's
// policy, see autocast.h), autograd (grad mode, on by default: it acts only when a Tensor
// argument requires grad) and inference mode; quantized tensors take the layers' path and reach
// only the ops that accept them (AcceptsQuantized). While a graph captures
// (ember::graphs, capture.h), the op's own run is recorded where the layers call it. The layers
// that are rarely active (tracer, observer, autocast, the conjugate fallback below, the capture)
// are compiled once, on type-erased arguments (boxed.h); autograd and inference mode, per op.
// A global word adds layers to every thread's: a profiler follows every thread by setting the
// observer layer there (a thread's first observed op then attaches the thread's recorder).
// The fast path, a direct call to Op::run, is taken when no layer but grad mode is on and no
// argument requires grad: one TLS load, one global load and one load per Tensor argument.
// It also records views (a result sharing its first argument's storage), in grad mode so that
// in-place writes into them reach the base's graph, under no_grad so that such a write in grad
// mode later raises PyTorch's error (see autograd/layer.h). Inference mode has a path of its own
// that records nothing but views of normal tensors: its other results are inference tensors, which never meet
// autograd.
#pragma once
#include <atomic>
#include <concepts>
#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "autograd/layer.h"
#include "dispatch/autocast.h"
#include "dispatch/trace.h"
#include "ember/observer.h"
#include "ember/tensor.h"

namespace ember::dispatch {

enum Layer : uint32_t {
  kObserverLayer = 1u << 0,
  kGradModeLayer = 1u << 1,   // graph recording enabled (cleared by NoGradGuard, InferenceMode)
  kInferenceLayer = 1u << 2,  // inside InferenceMode: results are inference tensors
  kAutocastLayer = 1u << 3,   // inside an autocast region (ember::AutocastGuard)
  kTracingLayer = 1u << 4,    // an fx::Tracer records the ops called (trace.h), outermost of all
  kCaptureLayer = 1u << 5,    // a graph records each op's run (capture.h, ember::graphs)
  // Not a thread's layer: call<Op> passes it to call_with_layers for an argument that is a
  // conjugate view, when Op is not ConjAware (the conjugate fallback, below).
  kConjFallback = 1u << 31,
};

struct ThreadState {
  uint32_t active = kGradModeLayer;  // OR of Layer bits
};
ThreadState& thread_state();  // defined out of line: one TLS access, no guard variable

// Layers every thread takes whatever its own word says (kObserverLayer while a profiler follows
// every thread; see set_thread_hook).
extern std::atomic<uint32_t> all_threads_layers;
inline uint32_t active_layers() { return thread_state().active | all_threads_layers.load(std::memory_order_relaxed); }
// Whether this thread's ops and ranges go to observers (its own, or ones a thread hook attaches).
inline bool observing() { return active_layers() & kObserverLayer; }
// While kObserverLayer is in all_threads_layers, every observed op and range calls `hook` on its
// thread before the thread's observers see it; the hook may push or pop that thread's observers
// (the profiler attaches a recorder to a thread on its first op, and drops one whose session
// ended). A thread holding observers its hook pushed keeps calling it after the layer is
// cleared, so it can drop them at its next op. Set once; `on` sets or clears the layer.
void set_thread_hook(void (*hook)());
void observe_all_threads(bool on);

// The OR of the tensors' flags bytes (TensorImpl::dispatch_flags: requires grad, conjugate,
// quantized) in an argument, so that the fast path tests them all with one load per tensor.
inline uint8_t tensor_flags(const Tensor& t) { return t.defined() ? t.unsafeGetTensorImpl()->dispatch_flags() : 0; }
template <class T>
inline uint8_t arg_flags(const T& a) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, Tensor>) {
    return tensor_flags(a);
  } else if constexpr (std::is_same_v<D, std::optional<Tensor>>) {
    return a ? tensor_flags(*a) : 0;
  } else if constexpr (std::is_same_v<D, TensorList> || std::is_same_v<D, std::vector<Tensor>>) {
    uint8_t f = 0;
    for (const Tensor& t : a) f |= tensor_flags(t);
    return f;
  } else {
    return 0;
  }
}
template <class... Args>
inline uint8_t any_flags(const Args&... args) {
  return (arg_flags(args) | ... | uint8_t{0});
}
// Whether an argument is (or holds) a tensor that requires grad.
template <class... Args>
inline bool any_requires_grad(const Args&... args) {
  return (any_flags(args...) & TensorImpl::kRequiresGradFlag) != 0;
}

// Quantized tensors reach only the ops that declare `static constexpr bool quantized = true` (they
// handle them: views, clone, cat, quantize and dequantize); any other op raises an ember::Error
// naming it (PyTorch: "Could not run 'aten::xxx' with arguments from the 'QuantizedCPU' backend").
template <class Op>
concept AcceptsQuantized = requires { requires Op::quantized; };
[[noreturn]] void fail_quantized(const char* op);
// (Inlined even at -O0: one function less per op in the sanitizer builds.)
template <class Op, class... Args>
[[gnu::always_inline]] inline void check_quantized(const Args&... args) {
  if constexpr (!AcceptsQuantized<Op>) {
    if (any_flags(args...) & TensorImpl::kQuantizedFlag) fail_quantized(Op::name);
  }
}

// Inference mode's results, as PyTorch's: a new tensor is an inference tensor, whose storage then
// keeps no version counter (it can never be saved for backward); a view is one when its base is,
// and a view of a normal tensor stays normal, recorded as made in inference mode.
template <class First>
void mark_inference_tensor(const Tensor& r, const First& first) {
  if (!r.defined()) return;
  TensorImpl* impl = r.unsafeGetTensorImpl();
  if constexpr (std::is_same_v<std::decay_t<First>, Tensor>) {
    if (first.defined() && impl->storage() == first.unsafeGetTensorImpl()->storage()) {
      if (first.unsafeGetTensorImpl()->is_inference()) {
        impl->set_inference(true);
      } else {
        autograd::track_view(r, first, autograd::ViewCreation::kInferenceMode);
      }
      return;
    }
  }
  impl->set_inference(true);
  impl->storage()->mark_inference();
}
template <class R, class First>
void mark_inference_result(const R& r, const First& first) {
  if constexpr (std::is_same_v<R, Tensor>) {
    mark_inference_tensor(r, first);
  } else if constexpr (std::is_same_v<R, std::vector<Tensor>>) {
    for (const Tensor& t : r) mark_inference_tensor(t, first);
  } else if constexpr (requires { std::tuple_size<R>::value; }) {
    std::apply([&](const auto&... t) { (mark_inference_result(t, first), ...); }, r);
  }
}

// Ops writing into their first argument (in-place and out=).
template <class... Args>
inline constexpr bool writes_first = std::is_same_v<std::tuple_element_t<0, std::tuple<Args..., void>>, Tensor&>;
// Ops that may return a view of their first argument.
template <class Op, class... Args>
concept MayReturnView = std::is_same_v<std::decay_t<std::tuple_element_t<0, std::tuple<Args..., void>>>, Tensor> &&
                        !writes_first<Args...> && requires(Args&&... a) {
                          { Op::run(std::forward<Args>(a)...) } -> std::same_as<Tensor>;
                        };

[[noreturn]] void fail_inference_write(const char* op);
template <class First, class... Rest>
inline void check_write(const char* op, const First& self, const Rest&...) {
  if (self.defined() && self.unsafeGetTensorImpl()->is_inference()) fail_inference_write(op);
}

namespace capture_impl {
// How a recorded call receives an argument: a written tensor (in-place, out=) as Tensor&, anything
// else as a const reference, so that the layers' call sites share one recorded call per op.
template <class A>
using capture_arg_t = std::conditional_t<std::is_same_v<A, Tensor&>, Tensor&, const std::decay_t<A>&>;
template <class Op, class... A>
auto capture_call(A... a) -> decltype(Op::run(a...));  // Op::run, recorded (boxed.h, capture.h)
// (Inlined even at -O0: the conversion to capture_arg_t, which also turns an array, such as a
// string literal, into the pointer the op receives, happens at the call.)
template <class Op, class... A>
[[gnu::always_inline]] inline auto capture_run(A&&... a) -> decltype(Op::run(std::forward<A>(a)...)) {
  return capture_call<Op, capture_arg_t<A>...>(a...);
}
}  // namespace capture_impl

// A view of an inference tensor is one (PyTorch); others are recorded as views.
template <class Op, class First, class... Rest>
Tensor run_tracking_views(autograd::ViewCreation creation, uint32_t active, First&& first, Rest&&... rest) {
  Tensor r = active & kCaptureLayer ? capture_impl::capture_run<Op>(first, std::forward<Rest>(rest)...)
                                    : Op::run(first, std::forward<Rest>(rest)...);
  if (r.defined() && r.unsafeGetTensorImpl()->storage() == first.unsafeGetTensorImpl()->storage()) {
    if (first.unsafeGetTensorImpl()->is_inference()) {
      r.unsafeGetTensorImpl()->set_inference(true);
    } else {
      autograd::track_view(r, first, creation);
    }
  }
  return r;
}

// Inference mode: the op alone, its results marked as above.
template <class Op, class First, class... Rest>
decltype(auto) run_inference(uint32_t active, First&& first, Rest&&... rest) {
  if (active & kCaptureLayer) {
    decltype(auto) r = capture_impl::capture_run<Op>(first, std::forward<Rest>(rest)...);
    if constexpr (!std::is_reference_v<decltype(r)>) mark_inference_result(r, first);
    return r;
  }
  decltype(auto) r = Op::run(first, std::forward<Rest>(rest)...);
  if constexpr (!std::is_reference_v<decltype(r)>) mark_inference_result(r, first);  // not in-place/out=
  return r;
}

// The layers under the observer: autograd, then inference mode.
template <class Op, class... Args>
decltype(auto) call_grad_layers(uint32_t active, Args&&... args) {
  if constexpr (writes_first<Args...>) {
    if (!(active & kInferenceLayer)) check_write(Op::name, args...);
  }
  if ((active & kGradModeLayer) && any_requires_grad(args...)) return autograd::apply<Op>(std::forward<Args>(args)...);
  if (active & kInferenceLayer) return run_inference<Op>(active, std::forward<Args>(args)...);
  if constexpr (MayReturnView<Op, Args...>) {
    const auto creation = active & kGradModeLayer ? autograd::ViewCreation::kDefault : autograd::ViewCreation::kNoGrad;
    return run_tracking_views<Op>(creation, active, std::forward<Args>(args)...);
  }
  if (active & kCaptureLayer) return capture_impl::capture_run<Op>(std::forward<Args>(args)...);
  return Op::run(std::forward<Args>(args)...);
}

// What Op::run returns for these arguments, and so what every layer returns.
template <class Op, class... Args>
using op_result_t = decltype(Op::run(std::declval<Args>()...));

// The layers' path (boxed.h).
template <class Op, class... Args>
op_result_t<Op, Args...> call_with_layers(uint32_t active, Args&&... args);

// Clears the tracing bit while an op being recorded runs, so that the ops it calls are not.
struct SuspendTracing {
  SuspendTracing() { thread_state().active &= ~static_cast<uint32_t>(kTracingLayer); }
  ~SuspendTracing() { thread_state().active |= kTracingLayer; }
  SuspendTracing(const SuspendTracing&) = delete;
  SuspendTracing& operator=(const SuspendTracing&) = delete;
};

// The conjugate fallback (PyTorch's ConjugateFallback). An op that reads or writes elements
// without knowing the conjugate bit gets its conjugated arguments materialized; a conjugated
// tensor it writes (in-place, out=) gets the result written back through the bit by copy_.
// Ops that read the bit themselves declare `static constexpr bool conj_aware = true;`: views
// (which pass it on), copy_, the pointwise ops (whose complex loops fold it into their loads),
// the matmul family and the complex ops. The fallback is the outermost of the boxed layers
// (dispatch.cpp): the op's call goes on with the resolved arguments through the other layers.
template <class Op>
concept ConjAware = requires { requires Op::conj_aware; };
Tensor resolve_conj_for_fallback(const Tensor& t);  // resolve_conj() (src/ops/complex.cpp)
void copy_for_fallback(Tensor& dst, const Tensor& src);  // dst.copy_(src)

template <class Op, class... Args>
inline decltype(auto) call_resolved(Args&&... args) {
  const uint32_t active = active_layers();
  const uint8_t flags = any_flags(args...);
  if constexpr (!ConjAware<Op> && sizeof...(Args) > 0) {
    if (__builtin_expect(flags & TensorImpl::kConjFlag, 0))
      return call_with_layers<Op>(active | kConjFallback, std::forward<Args>(args)...);
  }
  // a quantized argument, or one requiring grad in grad mode, takes the layers' path
  const uint8_t slow = active == 0 ? TensorImpl::kQuantizedFlag : TensorImpl::kQuantizedFlag | TensorImpl::kRequiresGradFlag;
  if (__builtin_expect((active & ~static_cast<uint32_t>(kGradModeLayer)) == 0, 1) && !(flags & slow)) {
    if constexpr (writes_first<Args...>) check_write(Op::name, args...);
    if constexpr (MayReturnView<Op, Args...>) {
      const auto creation = active == 0 ? autograd::ViewCreation::kNoGrad : autograd::ViewCreation::kDefault;
      return run_tracking_views<Op>(creation, active, std::forward<Args>(args)...);
    }
    return Op::run(std::forward<Args>(args)...);
  }
  if (active == kInferenceLayer) {
    check_quantized<Op>(args...);
    return run_inference<Op>(active, std::forward<Args>(args)...);
  }
  return call_with_layers<Op>(active, std::forward<Args>(args)...);
}

// A Tensor::dtype() (a TypeMeta) reaches ops as the ScalarType it holds, so that layers that
// record or box arguments (graph capture, fx tracing) see one type for a dtype.
template <class T>
decltype(auto) as_op_argument(T&& arg) {
  if constexpr (std::is_same_v<std::decay_t<T>, TypeMeta>) {
    return arg.toScalarType();
  } else {
    return std::forward<T>(arg);
  }
}

template <class Op, class... Args>
inline decltype(auto) call(Args&&... args) {
  if constexpr ((std::is_same_v<std::decay_t<Args>, TypeMeta> || ...)) {
    return call<Op>(as_op_argument(std::forward<Args>(args))...);
  } else {
    return call_resolved<Op>(std::forward<Args>(args)...);
  }
}

}  // namespace ember::dispatch

#include "dispatch/capture.h"  // IWYU pragma: export
#include "dispatch/boxed.h"    // IWYU pragma: export
