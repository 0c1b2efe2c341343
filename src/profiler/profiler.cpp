// The profiler: sessions recording threads through op observers, schedules, and the tables.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "autograd/engine.h"
#include "core/allocator.h"
#include "core/parallel.h"
#include "ember/nn/module.h"
#include "ember/optim/optimizer.h"
#include "ember/storage.h"
#include "profiler/hooks.h"
#include "profiler/recorder.h"

namespace ember::profiler {

namespace {

// The active profile (one at a time) and the session it records into (RecordThread joins it).
std::mutex g_mutex;
const profile* g_active = nullptr;
std::shared_ptr<Session> g_session;

thread_local Recorder* t_recorder = nullptr;
// The recorder follow_thread attached to this thread (no RecordThread, no profile of its own).
thread_local std::unique_ptr<Recorder> t_followed;

// The thread hook (dispatch::set_thread_hook): a thread's first op or range while a session
// records attaches a recorder to it, and its first after the session ended drops it.
void follow_thread() {
  if (t_followed && !t_followed->session()->recording.load(std::memory_order_relaxed)) t_followed.reset();
  if (t_recorder && t_recorder->session()->recording.load(std::memory_order_relaxed)) return;
  // no session records: a thread with observers of its own (the hook stays installed) takes no lock
  if (!(dispatch::all_threads_layers.load(std::memory_order_relaxed) & dispatch::kObserverLayer)) return;
  std::shared_ptr<Session> session;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    session = g_session;
  }
  if (session && session->recording.load()) t_followed = std::make_unique<Recorder>(std::move(session));
}

void memory_hook(const void* ptr, int64_t bytes) {
  if (Recorder* r = t_recorder) r->on_memory(ptr, bytes);
}

std::string dtype_name(ScalarType t) {
  std::string s = to_string(t);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

// ---- recording ----

Session::Session(const ProfilerOptions& options)
    : record_shapes(options.record_shapes()),
      profile_memory(options.profile_memory()),
      with_flops(options.with_flops()),
      with_stack(options.with_stack()),
      stack_depth(options.stack_depth()),
      memory_at_start(static_cast<int64_t>(cpu_allocator::stats().allocated_bytes)),
      memory_total(memory_at_start),
      origin_(detail::now_ns()) {}

int64_t Session::now() const { return detail::now_ns() - origin_; }

std::shared_ptr<ThreadBuffer> Session::add_thread() {
  auto b = std::make_shared<ThreadBuffer>();
  std::lock_guard<std::mutex> lock(mutex_);
  b->thread = static_cast<int64_t>(buffers_.size()) + 1;
  buffers_.push_back(b);
  return b;
}

void Session::collect(std::vector<FunctionEvent>& events, std::vector<MemoryEvent>& memory,
                      std::array<int64_t, kMemoryCategories>& at_start) {
  recording.store(false);
  const int64_t stop = now();
  events.clear();
  memory.clear();
  std::vector<RawNote> notes;
  std::unordered_map<const char*, std::string> op_names;  // Ember's op names as PyTorch's
  FrameNames frame_names;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& b : buffers_) {
    std::lock_guard<std::mutex> block(b->mutex);
    for (int32_t i : b->open) b->events[i].end = stop;  // ranges still open when recording stops
    b->unrecorded += static_cast<int64_t>(b->open.size());
    b->open.clear();
    const int64_t base = static_cast<int64_t>(events.size());
    for (RawEvent& r : b->events) {
      FunctionEvent& e = events.emplace_back();
      e.id = static_cast<int64_t>(events.size()) - 1;
      if (r.kind == EventKind::Op) {
        auto [it, fresh] = op_names.try_emplace(r.name);
        if (fresh) it->second = pytorch_op_name(r.name);
        e.name = it->second;
      } else {
        e.name = r.name;
      }
      e.kind = r.kind;
      e.thread = b->thread;
      e.start_ns = r.start;
      e.end_ns = r.end;
      e.sequence_nr = r.sequence_nr;
      e.parent = r.parent < 0 ? -1 : base + r.parent;
      if (record_shapes) {
        for (const OpInput& in : r.inputs) {
          e.input_shapes.emplace_back(in.kind == OpInput::Kind::Tensor ? in.values : std::vector<int64_t>{});
          e.input_dtypes.push_back(in.kind == OpInput::Kind::Tensor ? dtype_name(in.dtype) : std::string());
        }
      }
      e.allocated_bytes = r.allocated;
      e.freed_bytes = r.freed;
      e.flops = r.flops;
      if (r.frames_count)
        e.stack = symbolize(b->frames.data() + r.frames_begin, r.frames_count, stack_depth, frame_names);
    }
    for (const RawMemory& m : b->memory)
      memory.push_back({m.time, m.bytes, m.total, b->thread, m.event < 0 ? -1 : base + m.event, m.ptr});
    notes.insert(notes.end(), b->notes.begin(), b->notes.end());
    b->events.clear();
    b->memory.clear();
    b->notes.clear();
    b->frames.clear();
  }
  // Order by start; an event before the events inside it (same start: the longer first).
  std::vector<int64_t> order(events.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const FunctionEvent &x = events[a], &y = events[b];
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    return x.end_ns > y.end_ns;
  });
  std::vector<int64_t> new_id(events.size());
  for (size_t i = 0; i < order.size(); ++i) new_id[order[i]] = static_cast<int64_t>(i);
  std::vector<FunctionEvent> sorted(events.size());
  for (size_t i = 0; i < order.size(); ++i) {
    FunctionEvent& e = sorted[i] = std::move(events[order[i]]);
    e.id = static_cast<int64_t>(i);
    if (e.parent >= 0) e.parent = new_id[e.parent];
  }
  for (MemoryEvent& m : memory)
    if (m.event >= 0) m.event = new_id[m.event];
  std::stable_sort(memory.begin(), memory.end(),
                   [](const MemoryEvent& a, const MemoryEvent& b) { return a.time_ns < b.time_ns; });
  at_start = classify_memory(memory, notes, memory_at_start);
  // Children, self times and memory including the events inside (children come after parents).
  for (FunctionEvent& e : sorted) {
    e.self_cpu_time_total_ns = e.cpu_time_total_ns();
    e.self_cpu_memory_usage = e.cpu_memory_usage = e.allocated_bytes - e.freed_bytes;
    if (e.parent >= 0) sorted[e.parent].children.push_back(e.id);
  }
  for (auto it = sorted.rbegin(); it != sorted.rend(); ++it) {
    if (it->parent < 0) continue;
    FunctionEvent& p = sorted[it->parent];
    p.self_cpu_time_total_ns -= it->cpu_time_total_ns();
    p.cpu_memory_usage += it->cpu_memory_usage;
  }
  events = std::move(sorted);
}

Recorder::Recorder(std::shared_ptr<Session> session)
    : session_(std::move(session)),
      buffer_(session_->add_thread()),
      wants_inputs_(session_->record_shapes || session_->with_flops),
      previous_(t_recorder) {
  t_recorder = this;
}

Recorder::~Recorder() { t_recorder = previous_; }

void Recorder::begin(const char* name, EventKind kind, int64_t sequence_nr) {
  std::lock_guard<std::mutex> lock(buffer_->mutex);
  if (!session_->recording.load(std::memory_order_relaxed)) {
    ++buffer_->unrecorded;
    return;
  }
  const int32_t parent = buffer_->open.empty() ? -1 : buffer_->open.back();
  buffer_->open.push_back(static_cast<int32_t>(buffer_->events.size()));
  RawEvent& e = buffer_->events.emplace_back(RawEvent{name, kind, session_->now(), -1, sequence_nr, 0, parent, {}});
  if (kind == EventKind::Op) e.sequence_at_start = autograd::peek_sequence_nr();
  if (session_->with_stack) {
    e.frames_begin = static_cast<uint32_t>(buffer_->frames.size());
    capture_stack(buffer_->frames, session_->stack_depth);
    e.frames_count = static_cast<uint32_t>(buffer_->frames.size()) - e.frames_begin;
  }
}

void Recorder::end() {
  std::lock_guard<std::mutex> lock(buffer_->mutex);
  if (buffer_->unrecorded > 0) {
    --buffer_->unrecorded;
    return;
  }
  // The innermost open event, passing over the step range (a user range begun before
  // prof.step() may end after it); none when it began before this recorder existed.
  auto it = std::find_if(buffer_->open.rbegin(), buffer_->open.rend(), [&](int32_t i) { return i != step_event_; });
  if (it == buffer_->open.rend()) return;
  RawEvent& e = buffer_->events[*it];
  buffer_->open.erase(std::next(it).base());
  e.end = session_->now();
  // An op that recorded autograd nodes carries the first one's number (PyTorch's sequence_nr).
  if (e.kind == EventKind::Op && autograd::peek_sequence_nr() != e.sequence_at_start)
    e.sequence_nr = static_cast<int64_t>(e.sequence_at_start);
}

void Recorder::begin_step(const std::string& name) {
  begin(intern(name), EventKind::UserScope, -1);
  std::lock_guard<std::mutex> lock(buffer_->mutex);
  if (!buffer_->open.empty()) step_event_ = buffer_->open.back();
}

void Recorder::end_step() {
  std::lock_guard<std::mutex> lock(buffer_->mutex);
  auto it = std::find(buffer_->open.begin(), buffer_->open.end(), step_event_);
  if (step_event_ < 0 || it == buffer_->open.end()) return;
  buffer_->open.erase(it);
  buffer_->events[step_event_].end = session_->now();
  step_event_ = -1;
}

void Recorder::on_enter(const char* op_name) { begin(op_name, EventKind::Op, -1); }
void Recorder::on_exit(const char* /*op_name*/) { end(); }

void Recorder::on_inputs(const std::vector<OpInput>& inputs) {
  std::lock_guard<std::mutex> lock(buffer_->mutex);
  if (buffer_->unrecorded > 0 || buffer_->open.empty()) return;
  RawEvent& e = buffer_->events[buffer_->open.back()];
  if (session_->with_flops) e.flops = op_flops(e.name, inputs);
  if (session_->record_shapes) e.inputs = inputs;
}

const char* Recorder::intern(const std::string& name) {
  std::lock_guard<std::mutex> lock(buffer_->mutex);
  return buffer_->names.emplace(name).first->c_str();
}

void Recorder::on_enter_range(const char* name, RangeKind kind, int64_t sequence_nr) {
  begin(intern(name), kind == RangeKind::BackwardNode ? EventKind::BackwardNode : EventKind::UserScope, sequence_nr);
}
void Recorder::on_exit_range() { end(); }

void Recorder::on_memory(const void* ptr, int64_t bytes) {
  if (!session_->profile_memory) return;
  std::lock_guard<std::mutex> lock(buffer_->mutex);
  if (!session_->recording.load(std::memory_order_relaxed)) return;
  const int64_t total = session_->memory_total.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  const int32_t event = buffer_->open.empty() ? -1 : buffer_->open.back();
  if (event >= 0) (bytes > 0 ? buffer_->events[event].allocated : buffer_->events[event].freed) += std::abs(bytes);
  buffer_->memory.push_back({session_->now(), bytes, total, event, ptr});
}

void Recorder::note(const Tensor& t, MemoryCategory category) {
  if (!session_->profile_memory || !t.defined()) return;
  const StorageImpl* s = t.unsafeGetTensorImpl()->storage().get();
  if (!s || !s->data()) return;
  // Only the allocator's blocks count (not memory from_blob wraps, nor inference storage, whose
  // blocks are the allocator's too but cannot be told apart from borrowed ones here).
  const int64_t bytes = s->version_tracks_writes() ? static_cast<int64_t>(cpu_allocator::block_bytes(s->nbytes())) : 0;
  std::lock_guard<std::mutex> lock(buffer_->mutex);
  if (!session_->recording.load(std::memory_order_relaxed)) return;
  buffer_->notes.push_back({session_->now(), s->data(), bytes, category});
}

namespace hooks {
void note_tensor(const Tensor& t, MemoryCategory category) {
  if (Recorder* r = t_recorder) r->note(t, category);
}
}  // namespace hooks

// ---- FLOPs (the formulas of PyTorch's profiler: two per multiply-add) ----

int64_t op_flops(const char* op, const std::vector<OpInput>& all) {
  std::string_view name = op;
  // an out= form ("mm_out") takes its output first, then the op's arguments
  size_t skip = 0;
  if (name.size() > 4 && name.substr(name.size() - 4) == "_out") {
    name.remove_suffix(4);
    skip = 1;
  }
  const std::vector<OpInput> in(all.begin() + static_cast<std::ptrdiff_t>(std::min(skip, all.size())), all.end());
  auto tensor = [&](size_t i) -> const std::vector<int64_t>* {
    return i < in.size() && in[i].kind == OpInput::Kind::Tensor ? &in[i].values : nullptr;
  };
  auto prod = [](const std::vector<int64_t>& v, size_t from, size_t to) {
    int64_t p = 1;
    for (size_t i = from; i < to; ++i) p *= v[i];
    return p;
  };
  if (name == "mm" || name == "addmm" || name == "bmm" || name == "matmul") {
    const size_t first = name == "addmm" ? 1 : 0;
    const auto *a = tensor(first), *b = tensor(first + 1);
    if (!a || !b || a->empty() || b->empty()) return 0;
    const int64_t k = a->back();
    const int64_t m = a->size() >= 2 ? (*a)[a->size() - 2] : 1;
    const int64_t n = b->size() >= 2 ? b->back() : 1;
    const int64_t batch = std::max(a->size() > 2 ? prod(*a, 0, a->size() - 2) : 1,
                                   b->size() > 2 ? prod(*b, 0, b->size() - 2) : 1);
    return 2 * batch * m * k * n;
  }
  if (name == "linear") {
    const auto *x = tensor(0), *w = tensor(1);
    if (!x || !w || x->empty() || w->empty()) return 0;
    return 2 * prod(*x, 0, x->size()) * (w->size() == 2 ? (*w)[0] : 1);
  }
  if (name == "conv1d" || name == "conv2d" || name == "conv3d") {
    // (input, weight, bias, stride, padding, dilation, groups); a padding mode gives no FLOPs
    const auto *x = tensor(0), *w = tensor(1);
    if (!x || !w || in.size() < 7 || in[4].kind != OpInput::Kind::Ints || x->size() != w->size()) return 0;
    const size_t k = w->size() - 2;
    auto param = [&](size_t arg, size_t d) {
      const std::vector<int64_t>& v = in[arg].values;
      return v.empty() ? 1 : v[v.size() == 1 ? 0 : std::min(d, v.size() - 1)];
    };
    int64_t out = (*x)[0] * (*w)[0];
    for (size_t d = 0; d < k; ++d) {
      if (param(3, d) <= 0) return 0;  // the op itself will raise
      const int64_t size = ((*x)[d + 2] + 2 * param(4, d) - param(5, d) * ((*w)[d + 2] - 1) - 1) / param(3, d) + 1;
      out *= std::max<int64_t>(size, 0);
    }
    return 2 * out * prod(*w, 1, w->size());
  }
  return 0;
}

// ---- schedules and the profile ----

Schedule schedule(int64_t wait, int64_t warmup, int64_t active, int64_t repeat, int64_t skip_first) {
  EMBER_CHECK(wait >= 0 && warmup >= 0 && active > 0 && repeat >= 0 && skip_first >= 0, "schedule",
              "Invalid profiler schedule arguments: wait=", wait, ", warmup=", warmup, ", active=", active,
              ", repeat=", repeat, ", skip_first=", skip_first,
              " (active must be positive, the others non-negative)");
  return [=](int64_t step) {
    EMBER_CHECK(step >= 0, "schedule", "step must be non-negative, got ", step);
    if (step < skip_first) return ProfilerAction::NONE;
    step -= skip_first;
    const int64_t cycle = wait + warmup + active;
    if (repeat > 0 && step / cycle >= repeat) return ProfilerAction::NONE;
    const int64_t mod = step % cycle;
    if (mod < wait) return ProfilerAction::NONE;
    if (mod < wait + warmup) return ProfilerAction::WARMUP;
    return mod < cycle - 1 ? ProfilerAction::RECORD : ProfilerAction::RECORD_AND_SAVE;
  };
}

namespace {
bool records(ProfilerAction a) { return a == ProfilerAction::RECORD || a == ProfilerAction::RECORD_AND_SAVE; }
}  // namespace

struct profile::ThreadState {
  std::thread::id owner = std::this_thread::get_id();
  std::unique_ptr<Recorder> recorder;
};

profile::profile(ProfilerOptions options) : options_(std::move(options)), thread_(std::make_unique<ThreadState>()) {
  EMBER_CHECK(!options_.with_stack() || options_.stack_depth() > 0, "profile",
              "stack_depth must be positive with with_stack, got ", options_.stack_depth());
  if (options_.with_stack()) {  // the unwinder loads on first use: not inside the first op
    std::vector<void*> warm;
    capture_stack(warm, 1);
  }
  action_ = options_.schedule() ? options_.schedule()(0) : ProfilerAction::RECORD;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    EMBER_CHECK(g_active == nullptr, "profile", "Profiler is already enabled: profilers cannot be nested");
    g_active = this;
  }
  if (records(action_)) {
    start_cycle();
    open_step_range();
  }
}

profile::~profile() {
  if (stopped_) return;
  if (std::this_thread::get_id() != thread_->owner) {
    // The observer lives in another thread's list: leave it to that thread (it records nothing
    // more, its session being stopped) rather than free it under that thread.
    if (session_) session_->recording.store(false);
    dispatch::observe_all_threads(false);
    (void)thread_->recorder.release();  // NOLINT: intentionally leaked, see above
    std::lock_guard<std::mutex> lock(g_mutex);
    g_active = nullptr;
    return;
  }
  try {
    stop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ember::profiler::profile: %s\n", e.what());
  }
}

void profile::open_step_range() {
  if (options_.schedule()) thread_->recorder->begin_step("ProfilerStep#" + std::to_string(step_num_));
}

void profile::start_cycle() {
  session_ = std::make_shared<Session>(options_);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_session = session_;
  }
  if (session_->profile_memory) cpu_allocator::set_memory_observer(memory_hook);
  thread_->recorder = std::make_unique<Recorder>(session_);
  dispatch::set_thread_hook(follow_thread);
  dispatch::observe_all_threads(true);
  snapshot_registered();
}

void profile::stop_cycle() {
  snapshot_registered();
  dispatch::observe_all_threads(false);
  thread_->recorder.reset();
  if (session_->profile_memory) cpu_allocator::set_memory_observer(nullptr);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_session.reset();
  }
  session_->collect(events_, memory_events_, memory_at_start_);
  session_.reset();
}

void profile::snapshot_registered() {
  if (!session_ || !session_->profile_memory || !thread_->recorder) return;
  Recorder& r = *thread_->recorder;
  for (const Tensor& p : registered_parameters_) {
    r.note(p, MemoryCategory::Parameter);
    r.note(p.grad(), MemoryCategory::Gradient);
  }
  for (const optim::Optimizer* o : registered_optimizers_) {
    for (const optim::OptimizerParamGroup& g : o->param_groups()) {
      for (const Tensor& p : g.params()) {
        r.note(p, MemoryCategory::Parameter);
        r.note(p.grad(), MemoryCategory::Gradient);
      }
    }
    for (const auto& [key, state] : o->state()) {
      for (const optim::StateField& f : state->fields()) {
        if (f.tensor) r.note(*f.tensor, MemoryCategory::OptimizerState);
        if (f.list)
          for (const Tensor& t : *f.list) r.note(t, MemoryCategory::OptimizerState);
      }
    }
  }
}

void profile::register_module(const nn::Module& module) {
  for (const Tensor& p : module.parameters()) registered_parameters_.push_back(p);
  snapshot_registered();
}

void profile::register_optimizer(const optim::Optimizer& optimizer) {
  registered_optimizers_.push_back(&optimizer);
  snapshot_registered();
}

void profile::step() {
  EMBER_CHECK(!stopped_, "step", "the profiler was stopped");
  EMBER_CHECK(std::this_thread::get_id() == thread_->owner, "step",
              "the profiler must be stepped on the thread that started it");
  const ProfilerAction previous = action_;
  snapshot_registered();
  if (thread_->recorder) thread_->recorder->end_step();
  ++step_num_;
  action_ = options_.schedule() ? options_.schedule()(step_num_) : ProfilerAction::RECORD;
  if (previous == ProfilerAction::RECORD_AND_SAVE) {
    stop_cycle();
    if (options_.on_trace_ready()) options_.on_trace_ready()(*this);
    if (records(action_)) start_cycle();
  } else if (previous == ProfilerAction::RECORD && !records(action_)) {
    std::fprintf(stderr, "ember::profiler: Incorrect schedule: RECORD followed by %s\n",
                 action_ == ProfilerAction::NONE ? "NONE" : "WARMUP");
    stop_cycle();
  } else if (!records(previous) && records(action_)) {
    start_cycle();
  }
  if (records(action_)) open_step_range();
}

void profile::stop() {
  EMBER_CHECK(!stopped_, "stop", "the profiler is not running (stopped already)");
  EMBER_CHECK(std::this_thread::get_id() == thread_->owner, "stop",
              "the profiler must be stopped on the thread that started it");
  stopped_ = true;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_active = nullptr;
  }
  if (!session_) return;
  stop_cycle();
  if (options_.on_trace_ready()) options_.on_trace_ready()(*this);
}

RecordThread::RecordThread() {
  std::shared_ptr<Session> session;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    session = g_session;
  }
  if (!session || !session->recording.load()) return;
  if (t_recorder && t_recorder->session() == session.get()) return;  // this thread records already
  recorder_ = std::make_unique<Recorder>(std::move(session));
}
RecordThread::~RecordThread() = default;

// ---- tables ----

namespace {

std::string shapes_string(const FunctionEvent& e) {
  std::string s = "[";
  for (size_t i = 0; i < e.input_shapes.size(); ++i) {
    if (i) s += ", ";
    s += '[';
    for (size_t j = 0; j < e.input_shapes[i].size(); ++j) s += (j ? ", " : "") + std::to_string(e.input_shapes[i][j]);
    s += ']';
  }
  return s + "]";
}

// PyTorch's _format_time, _format_memory and percentages.
std::string format_time(int64_t ns) {
  char b[32];
  const double us = static_cast<double>(ns) / 1e3;
  if (us >= 1e6) std::snprintf(b, sizeof b, "%.3fs", us / 1e6);
  else if (us >= 1e3) std::snprintf(b, sizeof b, "%.3fms", us / 1e3);
  else std::snprintf(b, sizeof b, "%.3fus", us);
  return b;
}
std::string format_memory(int64_t bytes) {
  char b[32];
  const double kb = 1024, mb = kb * 1024, gb = mb * 1024;
  const double v = static_cast<double>(bytes), a = std::abs(v);
  if (a >= gb) std::snprintf(b, sizeof b, "%.2f Gb", v / gb);
  else if (a >= mb) std::snprintf(b, sizeof b, "%.2f Mb", v / mb);
  else if (a >= kb) std::snprintf(b, sizeof b, "%.2f Kb", v / kb);
  else std::snprintf(b, sizeof b, "%lld b", static_cast<long long>(bytes));
  return b;
}
std::string format_percent(int64_t part, int64_t total) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f%%", total ? 100.0 * static_cast<double>(part) / static_cast<double>(total) : 0.0);
  return b;
}

}  // namespace

KeyAverages profile::key_averages(bool group_by_input_shape, int64_t group_by_stack_n) const {
  EMBER_CHECK(group_by_stack_n >= 0, "key_averages", "group_by_stack_n must be non-negative, got ", group_by_stack_n);
  const bool by_stack = group_by_stack_n > 0;
  std::vector<FunctionEventAvg> rows;
  std::map<std::tuple<std::string, std::string, std::vector<std::string>>, size_t> index;
  for (const FunctionEvent& e : events_) {
    const std::string shapes = group_by_input_shape ? shapes_string(e) : std::string();
    std::vector<std::string> stack;
    if (by_stack)
      stack.assign(e.stack.begin(), e.stack.begin() + std::min<int64_t>(group_by_stack_n, static_cast<int64_t>(e.stack.size())));
    auto [it, fresh] = index.emplace(std::make_tuple(e.name, shapes, stack), rows.size());
    if (fresh) {
      FunctionEventAvg& r = rows.emplace_back();
      r.key = e.name;
      r.input_shapes = shapes;
      r.stack = std::move(stack);
      r.is_backward = e.is_backward();
    }
    FunctionEventAvg& r = rows[it->second];
    ++r.count;
    r.cpu_time_total_ns += e.cpu_time_total_ns();
    r.self_cpu_time_total_ns += e.self_cpu_time_total_ns;
    r.cpu_memory_usage += e.cpu_memory_usage;
    r.self_cpu_memory_usage += e.self_cpu_memory_usage;
    r.flops += e.flops;
  }
  // Allocations and frees outside every event: PyTorch's "[memory]" row.
  FunctionEventAvg outside;
  outside.key = "[memory]";
  for (const MemoryEvent& m : memory_events_) {
    if (m.event >= 0) continue;
    ++outside.count;
    outside.cpu_memory_usage += m.bytes;
    outside.self_cpu_memory_usage += m.bytes;
  }
  if (outside.count) rows.push_back(outside);
  return KeyAverages(std::move(rows), group_by_input_shape, options_.profile_memory(), options_.with_flops(), by_stack);
}

std::string KeyAverages::table(const std::string& sort_by, int64_t row_limit) const {
  using Key = int64_t (*)(const FunctionEventAvg&);
  static const std::map<std::string, Key> keys = {
      {"cpu_time", [](const FunctionEventAvg& r) { return r.cpu_time_ns(); }},
      {"cpu_time_total", [](const FunctionEventAvg& r) { return r.cpu_time_total_ns; }},
      {"self_cpu_time_total", [](const FunctionEventAvg& r) { return r.self_cpu_time_total_ns; }},
      {"cpu_memory_usage", [](const FunctionEventAvg& r) { return r.cpu_memory_usage; }},
      {"self_cpu_memory_usage", [](const FunctionEventAvg& r) { return r.self_cpu_memory_usage; }},
      {"count", [](const FunctionEventAvg& r) { return r.count; }},
      {"flops", [](const FunctionEventAvg& r) { return r.flops; }},
  };
  std::vector<const FunctionEventAvg*> rows;
  for (const FunctionEventAvg& r : rows_) rows.push_back(&r);
  if (!sort_by.empty()) {
    auto it = keys.find(sort_by);
    std::string known;
    for (const auto& [k, f] : keys) known += (known.empty() ? "" : ", ") + k;
    EMBER_CHECK(it != keys.end(), "table", "unknown sort_by key '", sort_by, "'; expected one of ", known);
    std::stable_sort(rows.begin(), rows.end(),
                     [f = it->second](const FunctionEventAvg* a, const FunctionEventAvg* b) { return f(*a) > f(*b); });
  }
  int64_t self_total = 0;
  for (const FunctionEventAvg& r : rows_) self_total += r.self_cpu_time_total_ns;
  if (row_limit >= 0 && static_cast<int64_t>(rows.size()) > row_limit) rows.resize(static_cast<size_t>(row_limit));

  // FLOPs in the unit that suits the largest (PyTorch's auto_scale_flops).
  int64_t max_flops = 0;
  for (const FunctionEventAvg* r : rows) max_flops = std::max(max_flops, r->flops);
  static const char* const kFlopUnits[] = {"FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"};
  const int flop_unit = max_flops > 0 ? std::min(5, static_cast<int>(std::log10(static_cast<double>(max_flops)) / 3)) : 0;

  std::vector<std::string> headers = {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"};
  if (memory_) headers.insert(headers.end(), {"CPU Mem", "Self CPU Mem"});
  headers.push_back("# of Calls");
  if (input_shapes_) headers.push_back("Input Shapes");
  if (stack_) headers.push_back("Source Location");
  if (flops_) headers.push_back(std::string("Total ") + kFlopUnits[flop_unit]);

  std::vector<std::vector<std::string>> cells;
  for (const FunctionEventAvg* r : rows) {
    std::vector<std::string> c = {r->key,
                                  format_percent(r->self_cpu_time_total_ns, self_total),
                                  format_time(r->self_cpu_time_total_ns),
                                  format_percent(r->cpu_time_total_ns, self_total),
                                  format_time(r->cpu_time_total_ns),
                                  format_time(r->cpu_time_ns())};
    if (memory_) c.insert(c.end(), {format_memory(r->cpu_memory_usage), format_memory(r->self_cpu_memory_usage)});
    c.push_back(std::to_string(r->count));
    if (input_shapes_) c.push_back(r->input_shapes);
    if (stack_) c.push_back(r->stack.empty() ? std::string() : r->stack[0]);
    if (flops_) {
      char b[32];
      if (r->flops > 0) {
        std::snprintf(b, sizeof b, "%.3f", static_cast<double>(r->flops) / std::pow(10.0, 3 * flop_unit));
      } else {
        std::snprintf(b, sizeof b, "--");
      }
      c.emplace_back(b);
    }
    cells.push_back(std::move(c));
  }
  // Column widths as PyTorch's: names up to 55 characters, shapes up to 80, source locations
  // up to 55, the rest 12.
  std::vector<size_t> width(headers.size(), 12);
  const size_t shapes_col = headers.size() - (flops_ ? 2 : 1) - (stack_ ? 1 : 0);
  const size_t stack_col = headers.size() - (flops_ ? 2 : 1);
  size_t name_width = 4, shapes_width = 12, stack_width = 12;
  for (const FunctionEventAvg* r : rows)
    for (const std::string& f : r->stack) stack_width = std::max(stack_width, f.size() + 4);
  for (const auto& c : cells) {
    name_width = std::max(name_width, c[0].size() + 4);
    if (input_shapes_) shapes_width = std::max(shapes_width, c[shapes_col].size() + 4);
  }
  width[0] = std::min<size_t>(name_width, 55);
  if (input_shapes_) width[shapes_col] = std::min<size_t>(shapes_width, 80);
  if (stack_) width[stack_col] = std::min<size_t>(stack_width, 55);
  auto fit = [](std::string s, size_t w) {
    if (s.size() > w) s = s.substr(0, w - 3) + "...";
    return std::string(w - s.size(), ' ') + s;
  };
  std::string sep, out;
  for (size_t w : width) sep += std::string(w, '-') + "  ";
  sep += '\n';
  out += sep;
  for (size_t i = 0; i < headers.size(); ++i) out += fit(headers[i], width[i]) + "  ";
  out += '\n' + sep;
  for (size_t k = 0; k < cells.size(); ++k) {
    const auto& c = cells[k];
    for (size_t i = 0; i < c.size(); ++i) out += fit(c[i], width[i]) + "  ";
    out += '\n';
    // the further frames of the row's stack, one per line under its first (PyTorch's layout)
    if (stack_) {
      for (size_t f = 1; f < rows[k]->stack.size(); ++f) {
        for (size_t i = 0; i < c.size(); ++i) out += fit(i == stack_col ? rows[k]->stack[f] : "", width[i]) + "  ";
        out += '\n';
      }
    }
  }
  out += sep;
  out += "Self CPU time total: " + format_time(self_total) + '\n';
  return out;
}

// ---- trace handler ----

TraceReadyHandler tensorboard_trace_handler(const std::string& dir_name, const std::string& worker_name) {
  EMBER_CHECK(!dir_name.empty(), "tensorboard_trace_handler", "dir_name must not be empty");
  std::string worker = worker_name;
  if (worker.empty()) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    worker = std::string(host) + "_" + std::to_string(getpid());
  }
  return [dir_name, worker](profile& prof) {
    std::error_code ec;
    std::filesystem::create_directories(dir_name, ec);
    EMBER_CHECK(!ec, "tensorboard_trace_handler", "cannot create directory '", dir_name, "': ", ec.message());
    prof.export_chrome_trace(dir_name + "/" + worker + "." + std::to_string(prof.step_num()) + ".pt.trace.json");
  };
}

}  // namespace ember::profiler
