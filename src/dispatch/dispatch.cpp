#include "dispatch/dispatch.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "ember/observer.h"

namespace ember {
namespace dispatch {

namespace {
thread_local ThreadState tls_state;
thread_local std::vector<OpObserver*> tls_observers;
thread_local TraceRecorder* tls_recorder = nullptr;
thread_local CaptureRecorder* tls_capture = nullptr;
std::atomic<void (*)()> thread_hook{nullptr};

// The thread's observers, after the thread hook (if any) had its turn. Taking the list first
// constructs it before anything the hook makes on this thread, so it is destroyed after them at
// the thread's exit (a recorder the hook made leaves the list as it is destroyed).
std::vector<OpObserver*>& hooked_observers() {
  std::vector<OpObserver*>& observers = tls_observers;
  if (auto hook = thread_hook.load(std::memory_order_acquire)) hook();
  return observers;
}
}  // namespace

std::atomic<uint32_t> all_threads_layers{0};
void set_thread_hook(void (*hook)()) { thread_hook.store(hook, std::memory_order_release); }
void observe_all_threads(bool on) {
  if (on)
    all_threads_layers.fetch_or(kObserverLayer);
  else
    all_threads_layers.fetch_and(~static_cast<uint32_t>(kObserverLayer));
}

CaptureRecorder* capture_recorder() { return tls_capture; }
void set_capture_recorder(CaptureRecorder* r) {
  tls_capture = r;
  if (r)
    tls_state.active |= kCaptureLayer;
  else
    tls_state.active &= ~static_cast<uint32_t>(kCaptureLayer);
}
CapturedCall::CapturedCall(Run run, std::vector<std::unique_ptr<StoredArg>> args) : run_(run), args_(std::move(args)) {
  values_.reserve(args_.size());
  for (const auto& a : args_) values_.push_back(a->value());
}
CapturedCall::~CapturedCall() = default;
void CapturedCall::replay() { run_(values_.data(), nullptr, 0); }
size_t CapturedCall::args(TracedArg* out) const {
  const size_t n = std::min<size_t>(args_.size(), 16);
  for (size_t i = 0; i < n; ++i) out[i] = args_[i]->traced();
  return n;
}

void record_kernel(const char* name, std::function<void()> replay, TensorList reads, TensorList writes) {
  if (capturing()) tls_capture->kernel(name, std::move(replay), reads, writes);
}

TraceRecorder* trace_recorder() { return tls_recorder; }
void set_trace_recorder(TraceRecorder* r) {
  tls_recorder = r;
  if (r)
    tls_state.active |= kTracingLayer;
  else
    tls_state.active &= ~static_cast<uint32_t>(kTracingLayer);
}

ThreadState& thread_state() { return tls_state; }

// ---- The boxed layers (boxed.h) ----
namespace {

// Tells the observers of this thread that an op begins, and ends it at the end of the scope.
class ObservedOp {
 public:
  explicit ObservedOp(const char* name) : name_(name) {
    for (OpObserver* o : hooked_observers()) {
      o->on_enter(name_);
      wants_inputs_ = wants_inputs_ || o->wants_inputs();
    }
  }
  ~ObservedOp() {
    for (auto it = tls_observers.rbegin(); it != tls_observers.rend(); ++it) (*it)->on_exit(name_);
  }
  ObservedOp(const ObservedOp&) = delete;
  ObservedOp& operator=(const ObservedOp&) = delete;
  bool wants_inputs() const { return wants_inputs_; }
  void report_inputs(const std::vector<OpInput>& inputs) {
    for (OpObserver* o : tls_observers)
      if (o->wants_inputs()) o->on_inputs(inputs);
  }

 private:
  const char* name_;
  bool wants_inputs_ = false;
};

void describe_tensor(OpInput& in, const Tensor& t) {
  if (!t.defined()) return;
  in.kind = OpInput::Kind::Tensor;
  in.dtype = t.dtype();
  in.values.assign(t.sizes().begin(), t.sizes().end());
}

// Clears the capture bit while a recorded op runs, so that the ops it calls are not recorded.
struct SuspendCapture {
  SuspendCapture() { tls_state.active &= ~static_cast<uint32_t>(kCaptureLayer); }
  ~SuspendCapture() { tls_state.active |= kCaptureLayer; }
  SuspendCapture(const SuspendCapture&) = delete;
  SuspendCapture& operator=(const SuspendCapture&) = delete;
};

// One op call being recorded: begins it with the recorder, keeps its arguments, ends it with its
// results, or abandons it if the op throws before.
class CaptureScope {
 public:
  CaptureScope(const char* op, const TracedArg* args, size_t n, uint32_t writes, bool returns_tensors)
      : rec_(tls_capture) {
    rec_->begin(op, args, n, writes, returns_tensors);
    args_.reserve(n);
  }
  ~CaptureScope() {
    if (!ended_) rec_->abandon();
  }
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;
  CaptureRecorder& recorder() { return *rec_; }
  void keep(std::unique_ptr<StoredArg> arg) { args_.push_back(std::move(arg)); }
  void end(CapturedCall::Run run, const Tensor* const* results, size_t n) {
    rec_->end(std::make_unique<CapturedCall>(run, std::move(args_)), results, n);
    ended_ = true;
  }

 private:
  CaptureRecorder* rec_;
  std::vector<std::unique_ptr<StoredArg>> args_;
  bool ended_ = false;
};

Tensor resolved(const Tensor& t) { return t.defined() && t.is_conj() ? resolve_conj_for_fallback(t) : t; }

// An op's call on its way through the boxed layers: its arguments, of which the conjugate
// fallback and autocast may replace tensors by new ones (held here), and its result.
class Frame {
 public:
  Frame(const boxed::OpInfo& info, void** args, void* result, Autocast policy)
      : info(info), args(args), result(result), policy(policy) {}

  std::vector<TracedArg> traced() const {
    std::vector<TracedArg> r(info.nargs);
    for (size_t i = 0; i < info.nargs; ++i) r[i] = info.args[i]->traced(args[i]);
    return r;
  }
  std::vector<const Tensor*> results() const {
    std::vector<const Tensor*> r;
    if (info.results) info.results(result, r);
    return r;
  }
  // Gives f every tensor of the arguments.
  template <class F>
  void for_each_tensor(F f) const {
    for (size_t i = 0; i < info.nargs; ++i) {
      const void* a = args[i];
      switch (info.args[i]->tensors) {
        case boxed::Tensors::kNone: break;
        case boxed::Tensors::kTensor: f(*static_cast<const Tensor*>(a)); break;
        case boxed::Tensors::kOptional:
          if (const auto& o = *static_cast<const std::optional<Tensor>*>(a)) f(*o);
          break;
        case boxed::Tensors::kList:
          for (const Tensor& t : *static_cast<const TensorList*>(a)) f(t);
          break;
        case boxed::Tensors::kVector:
          for (const Tensor& t : *static_cast<const std::vector<Tensor>*>(a)) f(t);
          break;
      }
    }
  }
  // Replaces every tensor t of the arguments by f(t): a Tensor (or an optional one) only when f
  // makes a new one, so that an argument the op writes and returns stays the caller's own.
  template <class F>
  void replace_tensors(F f) {
    if (held_.empty()) held_.resize(info.nargs);
    for (size_t i = 0; i < info.nargs; ++i) {
      Held& h = held_[i];
      switch (info.args[i]->tensors) {
        case boxed::Tensors::kNone: break;
        case boxed::Tensors::kTensor: {
          const Tensor& t = *static_cast<const Tensor*>(args[i]);
          Tensor r = f(t);
          if (!r.is_same(t)) {
            h.tensor = std::move(r);
            args[i] = &h.tensor;
          }
          break;
        }
        case boxed::Tensors::kOptional: {
          const auto& o = *static_cast<const std::optional<Tensor>*>(args[i]);
          if (!o) break;
          Tensor r = f(*o);
          if (!r.is_same(*o)) {
            h.optional = std::move(r);
            args[i] = &h.optional;
          }
          break;
        }
        case boxed::Tensors::kList:
        case boxed::Tensors::kVector: {
          const bool list = info.args[i]->tensors == boxed::Tensors::kList;
          const TensorList ts = list ? *static_cast<const TensorList*>(args[i])
                                     : TensorList(*static_cast<const std::vector<Tensor>*>(args[i]));
          std::vector<Tensor> v;
          v.reserve(ts.size());
          for (const Tensor& t : ts) v.push_back(f(t));
          h.tensors = std::move(v);
          h.list = h.tensors;
          args[i] = list ? static_cast<void*>(&h.list) : &h.tensors;
          break;
        }
      }
    }
  }

  const boxed::OpInfo& info;
  void** const args;  // the caller's array
  void* const result;
  const Autocast policy;

 private:
  struct Held {
    Tensor tensor;
    std::optional<Tensor> optional;
    std::vector<Tensor> tensors;
    TensorList list;
  };
  std::vector<Held> held_;
};

// The autocast layer: an op with a policy gets its arguments cast and runs with autocast off.
void autocast_layer(Frame& f, uint32_t active) {
  if (!f.info.casts || !(active & kAutocastLayer)) return f.info.call(f.args, f.result, active);
  std::optional<ScalarType> to;
  switch (f.policy) {
    case Autocast::kLowerPrecision: to = autocast_impl::region_dtype(); break;
    case Autocast::kFloat32: to = kFloat; break;
    case Autocast::kPromote: f.for_each_tensor([&](const Tensor& t) { autocast_impl::widen(to, t); }); break;
    case Autocast::kNone: break;
  }
  autocast_impl::Suspend off;
  if (to) f.replace_tensors([&](const Tensor& t) { return autocast_impl::cast(t, *to); });
  f.info.call(f.args, f.result, active & ~static_cast<uint32_t>(kAutocastLayer));
}

// The op observer, then autocast.
void observed_layers(Frame& f, uint32_t active) {
  if (!(active & kObserverLayer)) return autocast_layer(f, active);
  ObservedOp scope(f.info.name);
  if (scope.wants_inputs()) {
    std::vector<OpInput> described;
    described.reserve(f.info.nargs);
    for (size_t i = 0; i < f.info.nargs; ++i) {
      OpInput& in = described.emplace_back();
      const boxed::Observed observed = f.info.args[i]->observed;
      if (observed == boxed::Observed::kNothing) continue;
      const TracedArg a = f.info.args[i]->traced(f.args[i]);
      if (observed == boxed::Observed::kInts) {
        in.kind = OpInput::Kind::Ints;
        if (a.kind == TracedArg::Kind::Int) in.values.push_back(a.i);
        if (a.kind == TracedArg::Kind::IntList) in.values.assign(a.ints, a.ints + a.count);
      } else if (a.kind == TracedArg::Kind::Tensor) {
        describe_tensor(in, *a.tensor);
      } else if (a.kind == TracedArg::Kind::TensorList) {  // one input per tensor
        described.pop_back();
        for (size_t k = 0; k < a.count; ++k) describe_tensor(described.emplace_back(), a.tensors[k]);
      }
    }
    scope.report_inputs(described);
  }
  autocast_layer(f, active);
}

// The tracing layer: the recorder sees the arguments, the op runs below it (all other layers
// included) on the real values, the recorder maps the results to the new node.
void traced_layers(Frame& f, uint32_t active) {
  if (!(active & kTracingLayer)) return observed_layers(f, active);
  TraceRecorder* rec = tls_recorder;
  const std::vector<TracedArg> targs = f.traced();
  SuspendTracing off;
  const bool recorded = rec->begin(f.info.name, targs.data(), targs.size(), f.info.returns_tensors);
  observed_layers(f, tls_state.active);
  if (recorded && f.info.returns_tensors) {
    const std::vector<const Tensor*> results = f.results();
    rec->end(results.data(), results.size(), f.info.multiple);
  }
}

}  // namespace

namespace boxed {

void call(const OpInfo& info, void** args, void* result, uint32_t active, Autocast policy) {
  Tensor* const caller_first = info.writes_first ? static_cast<Tensor*>(args[0]) : nullptr;
  Frame f(info, args, result, policy);
  if (!(active & kConjFallback)) return traced_layers(f, active);
  // The conjugate fallback (dispatch.h): the op gets its conjugated arguments resolved; one that
  // writes into a conjugate view writes into its resolved copy, then back through the bit.
  active &= ~static_cast<uint32_t>(kConjFallback);
  f.replace_tensors(resolved);
  if (!caller_first || f.args[0] == caller_first) return traced_layers(f, active);
  if (!info.returns_self) {
    ::ember::detail::fail(info.name, "writing into a conjugate view is not supported by this op; call "
                          "resolve_conj() first");
  }
  traced_layers(f, active);
  copy_for_fallback(*caller_first, *static_cast<const Tensor*>(f.args[0]));
  static_cast<Result<Tensor&>*>(result)->v.emplace(*caller_first);
}

void capture(const OpInfo& info, void** args, void* result) {
  // A composite op in grad mode: its inner ops record themselves (capture.h).
  if (info.composite && (tls_state.active & kGradModeLayer)) return info.call(args, result, 0);
  const Frame f(info, args, result, Autocast::kNone);
  const std::vector<TracedArg> targs = f.traced();
  CaptureScope scope(info.name, targs.data(), targs.size(), info.writes, info.returns_tensors);
  for (size_t i = 0; i < info.nargs; ++i) scope.keep(info.args[i]->keep(scope.recorder(), args[i]));
  {
    SuspendCapture off;
    info.call(args, result, 0);
  }
  const std::vector<const Tensor*> results = f.results();
  scope.end(info.call, results.data(), results.size());
}

}  // namespace boxed

void fail_quantized(const char* op) {
  ::ember::detail::fail(op, "this op does not take quantized tensors (PyTorch: Could not run 'aten::", op,
                        "' with arguments from the 'QuantizedCPU' backend); dequantize() the input first");
}
void fail_inference_write(const char* op) {
  ::ember::detail::fail(op, "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
                        "clone to get a normal tensor before doing inplace update.See "
                        "https://github.com/pytorch/rfcs/pull/17 for more details.");
}

ObservedRange::ObservedRange(const char* name, RangeKind kind, int64_t sequence_nr)
    : observed_(!hooked_observers().empty()) {
  for (OpObserver* o : tls_observers) o->on_enter_range(name, kind, sequence_nr);
}
ObservedRange::~ObservedRange() {
  if (!observed_) return;
  for (auto it = tls_observers.rbegin(); it != tls_observers.rend(); ++it) (*it)->on_exit_range();
}

void push_observer(OpObserver* o) {
  tls_observers.push_back(o);
  tls_state.active |= kObserverLayer;
}
void pop_observer(OpObserver* o) {
  for (auto it = tls_observers.end(); it != tls_observers.begin();) {
    --it;
    if (*it == o) {
      tls_observers.erase(it);
      break;
    }
  }
  if (tls_observers.empty()) tls_state.active &= ~static_cast<uint32_t>(kObserverLayer);
}

}  // namespace dispatch

OpObserver::OpObserver() { dispatch::push_observer(this); }
OpObserver::~OpObserver() { dispatch::pop_observer(this); }

}  // namespace ember
