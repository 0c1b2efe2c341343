// The boxed path of dispatch::call. The layers that are rarely active (the tracer, the op
// observer, autocast, the conjugate fallback, and a graph's capture of Op::run) are written once,
// in dispatch.cpp, on type-erased arguments, instead of being instantiated for every op: with
// some fifteen functions of those layers per op, the per-op code was most of what the glue files
// cost to compile. An op's call reaches them as an array of pointers to its arguments and a slot
// for its result, with a table (OpInfo) that describes the argument types (ArgType, one per type,
// shared by every op taking it) and holds the op's one adaptor back into typed code: for the
// layers, call_grad_layers (autograd and inference mode, per op as before); for the capture,
// Op::run. The fast path and the autograd layer never go through here.
//
// Included at the end of dispatch.h, after capture.h.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace ember::dispatch::boxed {

// Which tensors an argument holds, for autocast (which casts them) and the conjugate fallback
// (which resolves them): the argument types dispatch::any_flags reads.
enum class Tensors : uint8_t { kNone, kTensor, kOptional, kList, kVector };
// What the op observer reports of an argument (ember/observer.h's OpInput): tensors' dtypes and
// sizes, integers and integer lists' values, nothing of the rest.
enum class Observed : uint8_t { kNothing, kTensors, kInts };

// An argument type as the boxed layers see it; the pointers given are to a value of that type.
struct ArgType {
  TracedArg (*traced)(const void* arg);
  std::unique_ptr<StoredArg> (*keep)(CaptureRecorder& r, const void* arg);  // a recorded call's copy
  Tensors tensors;
  Observed observed;
};

// An op's call, type-erased.
struct OpInfo {
  const char* name;
  const ArgType* const* args;
  uint32_t nargs;
  uint32_t writes;  // the capture: bit i set when argument i is written (capture_impl::written_args)
  // The op below the boxed layers (call_grad_layers with the layer word `active`), or its run for
  // the capture, on the arguments; the result goes into `result` (a Result<R>; a replay gives
  // none).
  void (*call)(void* const* args, void* result, uint32_t active);
  // The tensors of a result (null when it holds none).
  void (*results)(const void* result, std::vector<const Tensor*>& out);
  bool returns_tensors;  // returns_tensors<R> (trace.h)
  bool multiple;         // the tensors come as several outputs (a tuple or a list)
  bool returns_self;     // R is Tensor& (an in-place op: the conjugate fallback writes back)
  bool writes_first;     // the first argument is a Tensor& it writes
  bool casts;            // an autocast policy applies (HasAutocast, not in-place or out=)
  bool composite;        // the capture: autograd::IsComposite
};

// Runs the boxed layers active in `active` (kTracingLayer, kObserverLayer, kAutocastLayer,
// kConjFallback), outermost first, then info.call. Autocast and the conjugate fallback replace
// pointers of `args` by new values of theirs. `policy`: the op's autocast policy when
// info.casts and kAutocastLayer is set.
void call(const OpInfo& info, void** args, void* result, uint32_t active, Autocast policy);
// Op::run recorded into this thread's capture (capture.h); info.call is the op's run.
void capture(const OpInfo& info, void** args, void* result);

// Where an adaptor puts the op's result; the caller takes it out.
template <class R>
struct Result {
  std::optional<std::conditional_t<std::is_reference_v<R>, std::reference_wrapper<std::remove_reference_t<R>>, R>> v;
  const std::remove_reference_t<R>& get() const {
    if constexpr (std::is_reference_v<R>) {
      return v->get();
    } else {
      return *v;
    }
  }
  R take() {
    if constexpr (std::is_reference_v<R>) {
      return v->get();
    } else {
      return std::move(*v);
    }
  }
};
template <>
struct Result<void> {
  void take() {}
};

template <class R>
void results_of(const void* result, std::vector<const Tensor*>& out) {
  const auto& r = static_cast<const Result<R>*>(result)->get();
  using D = std::decay_t<R>;
  if constexpr (std::is_same_v<D, Tensor>) {
    out.push_back(&r);
  } else if constexpr (std::is_same_v<D, std::vector<Tensor>>) {
    for (const Tensor& t : r) out.push_back(&t);
  } else {
    std::apply([&](const auto&... t) { (out.push_back(&t), ...); }, r);
  }
}
template <class R>
constexpr auto results_fn() -> void (*)(const void*, std::vector<const Tensor*>&) {
  if constexpr (std::is_void_v<R> || !returns_tensors<R>) {
    return nullptr;
  } else {
    return &results_of<R>;
  }
}
template <class R>
inline constexpr bool multiple_results = std::is_same_v<std::decay_t<R>, std::vector<Tensor>> ||
                                         is_tensor_tuple<std::decay_t<R>>;

template <class D>
TracedArg traced_of(const void* arg) {
  return traced_arg(*static_cast<const D*>(arg));
}
template <class D>
std::unique_ptr<StoredArg> keep_of(CaptureRecorder& r, const void* arg) {
  return std::make_unique<capture_impl::StoredArgOf<D>>(r, *static_cast<const D*>(arg));
}
template <class D>
constexpr Tensors tensors_of() {
  if constexpr (std::is_same_v<D, Tensor>) return Tensors::kTensor;
  if constexpr (std::is_same_v<D, std::optional<Tensor>>) return Tensors::kOptional;
  if constexpr (std::is_same_v<D, TensorList>) return Tensors::kList;
  if constexpr (std::is_same_v<D, std::vector<Tensor>>) return Tensors::kVector;
  return Tensors::kNone;
}
template <class D>
constexpr Observed observed_of() {
  if constexpr (tensors_of<D>() != Tensors::kNone) return Observed::kTensors;
  // (no number or enum: IntArrayRef's one-element constructor would view a converted temporary)
  if constexpr ((std::is_integral_v<D> && !std::is_same_v<D, bool>) ||
                (!std::is_arithmetic_v<D> && !std::is_enum_v<D> && std::is_convertible_v<const D&, IntArrayRef>))
    return Observed::kInts;
  return Observed::kNothing;
}
// D: the argument's type without reference or const. An array (a string literal given to call<Op>)
// is pointed at as an array; the capture never sees one (capture_arg_t decays it), so it keeps none.
template <class D>
constexpr auto keep_fn() -> std::unique_ptr<StoredArg> (*)(CaptureRecorder&, const void*) {
  if constexpr (std::is_array_v<D>) {
    return nullptr;
  } else {
    return &keep_of<D>;
  }
}
template <class D>
inline constexpr ArgType arg_type{&traced_of<D>, keep_fn<D>(), tensors_of<std::decay_t<D>>(),
                                  observed_of<std::decay_t<D>>()};

// An argument's address, as the boxed layers hold it.
template <class A>
[[gnu::always_inline]] inline void* box(const A& a) {
  return const_cast<void*>(static_cast<const void*>(&a));
}
// The argument at `p` as the op takes it (A: its type in the op's instantiation, a reference for
// an lvalue).
template <class A>
[[gnu::always_inline]] inline A&& unbox(void* p) {
  return static_cast<A&&>(*static_cast<std::remove_reference_t<A>*>(p));
}

template <class Op, class... Args>
inline constexpr bool casts = !writes_first<Args...> && HasAutocast<Op, Args...>;

// The table of an op's call with these arguments (Args as call<Op> deduced them), whose adaptor
// calls the layers below the boxed ones.
template <class Op, class Seq, class... Args>
struct Layers;
template <class Op, size_t... I, class... Args>
struct Layers<Op, std::index_sequence<I...>, Args...> {
  using R = op_result_t<Op, Args...>;
  static void below(void* const* args, void* result, uint32_t active) {
    if constexpr (std::is_void_v<R>) {
      call_grad_layers<Op>(active, unbox<Args>(args[I])...);
    } else {
      static_cast<Result<R>*>(result)->v.emplace(call_grad_layers<Op>(active, unbox<Args>(args[I])...));
    }
  }
  static constexpr const ArgType* types[] = {&arg_type<std::remove_cvref_t<Args>>..., nullptr};
  static constexpr OpInfo info = {Op::name,
                                  types,
                                  sizeof...(Args),
                                  0,
                                  &below,
                                  results_fn<R>(),
                                  returns_tensors<R>,
                                  multiple_results<R>,
                                  std::is_same_v<R, Tensor&>,
                                  writes_first<Args...>,
                                  casts<Op, Args...>,
                                  false};
  // The layers that take this op's call to the boxed path.
  static constexpr uint32_t layers =
      kTracingLayer | kObserverLayer | kConjFallback | (casts<Op, Args...> ? kAutocastLayer : 0u);
};

// The table of an op's run on arguments of types A (capture_impl::capture_arg_t), whose adaptor
// is the run: recorded, and replayed on the recorded arguments (CapturedCall).
template <class Op, class Seq, class... A>
struct Run;
template <class Op, size_t... I, class... A>
struct Run<Op, std::index_sequence<I...>, A...> {
  using R = decltype(Op::run(std::declval<A>()...));
  static void run(void* const* args, void* result, uint32_t) {
    if constexpr (std::is_void_v<R>) {
      Op::run(unbox<A>(args[I])...);
    } else {
      decltype(auto) r = Op::run(unbox<A>(args[I])...);
      if (result) static_cast<Result<R>*>(result)->v.emplace(std::forward<R>(r));
    }
  }
  static constexpr const ArgType* types[] = {&arg_type<std::remove_cvref_t<A>>..., nullptr};
  static constexpr OpInfo info = {Op::name,
                                  types,
                                  sizeof...(A),
                                  capture_impl::written_args<A...>(),
                                  &run,
                                  results_fn<R>(),
                                  returns_tensors<R>,
                                  multiple_results<R>,
                                  std::is_same_v<R, Tensor&>,
                                  writes_first<A...>,
                                  false,
                                  autograd::IsComposite<Op>};
};

}  // namespace ember::dispatch::boxed

namespace ember::dispatch {

// Out of line: the layers run on the slow path only. The boxed layers first, when one is active.
template <class Op, class... Args>
[[gnu::noinline]] op_result_t<Op, Args...> call_with_layers(uint32_t active, Args&&... args) {
  check_quantized<Op>(args...);
  using Boxed = boxed::Layers<Op, std::index_sequence_for<Args...>, Args...>;
  if (active & Boxed::layers) [[unlikely]] {
    Autocast policy = Autocast::kNone;
    if constexpr (boxed::casts<Op, Args...>) {
      if (active & kAutocastLayer) policy = autocast_policy_of<Op>(args...);
    }
    void* boxed_args[] = {boxed::box(args)..., nullptr};
    boxed::Result<op_result_t<Op, Args...>> r;
    boxed::call(Boxed::info, boxed_args, &r, active, policy);
    return r.take();
  }
  return call_grad_layers<Op>(active, std::forward<Args>(args)...);
}

namespace capture_impl {
// Op::run, recorded (see the top of capture.h); A are references (capture_arg_t, dispatch.h),
// so that the layers' calls of one op share one run and one replay. Out of line and cold: a
// capture is rare.
template <class Op, class... A>
[[gnu::noinline, gnu::cold]] auto capture_call(A... a) -> decltype(Op::run(a...)) {
  void* boxed_args[] = {boxed::box(a)..., nullptr};
  boxed::Result<decltype(Op::run(a...))> r;
  boxed::capture(boxed::Run<Op, std::index_sequence_for<A...>, A...>::info, boxed_args, &r);
  return r.take();
}
}  // namespace capture_impl

}  // namespace ember::dispatch
