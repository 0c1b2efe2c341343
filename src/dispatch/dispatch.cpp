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
CapturedCall::CapturedCall(Run run, std::vector<std::unique_ptr<StoredArg>> args) : run_(run), owned_(std::move(args)) {
  args_.reserve(owned_.size());
  for (const auto& a : owned_) args_.push_back(a.get());
}
CapturedCall::~CapturedCall() = default;
void CapturedCall::replay() { run_(args_.data()); }
size_t CapturedCall::args(TracedArg* out) const {
  const size_t n = std::min<size_t>(args_.size(), 16);
  for (size_t i = 0; i < n; ++i) out[i] = args_[i]->traced();
  return n;
}

namespace capture_impl {
CaptureScope::CaptureScope(const char* op, const TracedArg* args, size_t n, uint32_t writes, bool returns_tensors)
    : rec_(tls_capture) {
  rec_->begin(op, args, n, writes, returns_tensors);
  args_.reserve(n);
}
CaptureScope::~CaptureScope() {
  if (!ended_) rec_->abandon();
}
void CaptureScope::end(CapturedCall::Run run, const Tensor* const* results, size_t n) {
  rec_->end(std::make_unique<CapturedCall>(run, std::move(args_)), results, n);
  ended_ = true;
}
}  // namespace capture_impl

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

void fail_quantized(const char* op) {
  ::ember::detail::fail(op, "this op does not take quantized tensors (PyTorch: Could not run 'aten::", op,
                        "' with arguments from the 'QuantizedCPU' backend); dequantize() the input first");
}
void fail_inference_write(const char* op) {
  ::ember::detail::fail(op, "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
                        "clone to get a normal tensor before doing inplace update.See "
                        "https://github.com/pytorch/rfcs/pull/17 for more details.");
}

ObservedOp::ObservedOp(const char* name) : name_(name) {
  for (OpObserver* o : hooked_observers()) {
    o->on_enter(name_);
    wants_inputs_ = wants_inputs_ || o->wants_inputs();
  }
}
ObservedOp::~ObservedOp() {
  for (auto it = tls_observers.rbegin(); it != tls_observers.rend(); ++it) (*it)->on_exit(name_);
}
void ObservedOp::describe_tensor(OpInput& in, const Tensor& t) {
  if (!t.defined()) return;
  in.kind = OpInput::Kind::Tensor;
  in.dtype = t.dtype();
  in.values.assign(t.sizes().begin(), t.sizes().end());
}
void ObservedOp::report_inputs(const std::vector<OpInput>& inputs) {
  for (OpObserver* o : tls_observers)
    if (o->wants_inputs()) o->on_inputs(inputs);
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
