// The profiler (PyTorch's torch.profiler in C++): where time and memory go, op by op.
//
//   namespace P = ember::profiler;
//   {
//     P::profile prof(P::ProfilerOptions().record_shapes(true).profile_memory(true));
//     train_step();
//     prof.stop();
//     std::cout << prof.key_averages().table("self_cpu_time_total", 10);
//     prof.export_chrome_trace("trace.json");
//   }
//
// It is a rule of the dispatch point (an op observer, ember/observer.h): every op, those run
// inside other ops and by the autograd engine included, is an event named as PyTorch's profiler
// names it (aten::add, autograd::engine::evaluate_function: AddmmBackward0, ...); when off it
// costs nothing. It records the thread that started it; other threads join with RecordThread.
// See docs/profiler.md.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/nn/options.h"
#include "ember/observer.h"
#include "ember/tensor.h"

namespace ember {
namespace nn {
class Module;
}
namespace optim {
class Optimizer;
}
}  // namespace ember

namespace ember::profiler {

enum class ProfilerActivity { CPU };

// What a schedule asks for at a step (PyTorch's ProfilerAction).
enum class ProfilerAction { NONE, WARMUP, RECORD, RECORD_AND_SAVE };
using Schedule = std::function<ProfilerAction(int64_t step)>;
// PyTorch's torch.profiler.schedule: skip `skip_first` steps, then cycles of `wait` idle steps,
// `warmup` steps and `active` recorded steps, `repeat` times (0: until the profiler stops). The
// last active step of a cycle is RECORD_AND_SAVE: the trace of the cycle is then ready.
Schedule schedule(int64_t wait, int64_t warmup, int64_t active, int64_t repeat = 0, int64_t skip_first = 0);

class profile;
using TraceReadyHandler = std::function<void(profile&)>;
// PyTorch's tensorboard_trace_handler: writes each ready trace to
// `dir_name/<worker_name>.<step>.pt.trace.json` (worker_name defaults to "<host>_<pid>"),
// creating the directory.
TraceReadyHandler tensorboard_trace_handler(const std::string& dir_name, const std::string& worker_name = "");

struct ProfilerOptions {
  EMBER_ARG(std::vector<ProfilerActivity>, activities) = {ProfilerActivity::CPU};
  EMBER_ARG(bool, record_shapes) = false;   // input shapes and dtypes of each op
  EMBER_ARG(bool, profile_memory) = false;  // allocations and frees of the CPU allocator
  // The C++ call stack of each op and range (FunctionEvent::stack): the frames outside Ember's own
  // code, innermost first, at most stack_depth of them. Symbolized at stop(); a frame is named
  // when its function is in the dynamic symbol table (a shared library's exports, or an
  // executable linked with -rdynamic), else shown as "module+0xoffset".
  EMBER_ARG(bool, with_stack) = false;
  EMBER_ARG(int64_t, stack_depth) = 16;
  EMBER_ARG(bool, with_flops) = false;      // FLOPs of matmul, mm, bmm, addmm, linear, convolutions
  EMBER_ARG(Schedule, schedule);            // none: every step is recorded
  EMBER_ARG(TraceReadyHandler, on_trace_ready);
};

enum class EventKind : uint8_t { Op, UserScope, BackwardNode };

// One recorded range (PyTorch's FunctionEvent). Times are nanoseconds since the profiler started.
struct FunctionEvent {
  int64_t id = 0;  // index in profile::events()
  std::string name;
  EventKind kind = EventKind::Op;
  int64_t thread = 0;  // 1 for the thread that started the profiler, then in order of first event
  int64_t start_ns = 0, end_ns = 0;
  // Forward ops: the sequence number of the autograd node they recorded; backward nodes: the one
  // of the forward op that recorded them (the link between the two). -1 when none.
  int64_t sequence_nr = -1;
  int64_t parent = -1;  // the enclosing event on the same thread
  std::vector<int64_t> children;
  std::vector<std::vector<int64_t>> input_shapes;  // with record_shapes: one per argument ([] if not a tensor)
  std::vector<std::string> input_dtypes;           // "float", "long", ... ("" if not a tensor)
  // With profile_memory: bytes allocated and freed while this event was the innermost one, and
  // the net change including the events inside it (PyTorch's self_cpu_memory_usage / cpu_memory_usage).
  int64_t allocated_bytes = 0, freed_bytes = 0;
  int64_t self_cpu_memory_usage = 0, cpu_memory_usage = 0;
  int64_t flops = 0;  // with with_flops, for the ops that have a formula
  std::vector<std::string> stack;  // with with_stack: function names (or "module+0xoffset"), innermost first
  int64_t cpu_time_total_ns() const { return end_ns - start_ns; }
  int64_t self_cpu_time_total_ns = 0;  // minus the events inside it
  bool is_backward() const { return kind == EventKind::BackwardNode; }
};

// What a block of memory held (PyTorch 2's memory_timeline categories, in its order; PyTorch's
// INPUT and AUTOGRAD_DETAIL are not told apart here and fall under Unknown and Temporary).
//   Parameter: a module's parameter (profile::register_module), an optimizer's parameter
//     (register_optimizer), or a leaf the autograd engine accumulated a gradient into.
//   OptimizerState: a tensor of a registered optimizer's per-parameter state (Adam's exp_avg...).
//   Temporary: allocated and freed while recording, and none of the others.
//   Activation: a tensor autograd saved for backward, made while recording (one made before, such
//     as the batch, is an input: Unknown).
//   Gradient: a parameter's .grad (set by the engine, or seen on a registered parameter).
//   Unknown: the rest (inputs, results still alive, memory allocated before the profiler started).
// A block takes the first that applies, in this order: Parameter, Gradient, OptimizerState,
// Activation, Temporary, Unknown.
enum class MemoryCategory : uint8_t { Parameter, OptimizerState, Temporary, Activation, Gradient, Unknown };
constexpr int kMemoryCategories = 6;
const char* to_string(MemoryCategory c);  // "parameter", "optimizer_state", ..., "unknown"

// One allocation (bytes > 0) or free (bytes < 0) of the CPU allocator.
struct MemoryEvent {
  int64_t time_ns = 0;
  int64_t bytes = 0;
  int64_t total_allocated = 0;  // bytes in use by the allocator's blocks right after it
  int64_t thread = 0;
  int64_t event = -1;  // the innermost event running on that thread, -1 when none
  const void* ptr = nullptr;  // the block
  MemoryCategory category = MemoryCategory::Unknown;  // what the block held (decided at stop())
};

// The allocator's bytes in use over time, split by category: a point before the first memory
// event (what was in use when recording began) and one after each.
struct MemoryTimeline {
  std::vector<int64_t> times_ns;
  std::vector<std::array<int64_t, kMemoryCategories>> bytes;  // indexed by MemoryCategory
  std::vector<int64_t> total() const;  // the sum over categories at each point
};

// Events grouped by name (and input shapes), PyTorch's FunctionEventAvg.
struct FunctionEventAvg {
  std::string key;
  std::string input_shapes;  // when grouped by input shape
  std::vector<std::string> stack;  // when grouped by stack: the first group_by_stack_n frames
  int64_t count = 0;
  int64_t cpu_time_total_ns = 0, self_cpu_time_total_ns = 0;
  int64_t cpu_memory_usage = 0, self_cpu_memory_usage = 0;
  int64_t flops = 0;
  bool is_backward = false;
  int64_t cpu_time_ns() const { return count ? cpu_time_total_ns / count : 0; }
};

class KeyAverages {
 public:
  KeyAverages(std::vector<FunctionEventAvg> rows, bool input_shapes, bool memory, bool flops, bool stack = false)
      : rows_(std::move(rows)), input_shapes_(input_shapes), memory_(memory), flops_(flops), stack_(stack) {}
  const std::vector<FunctionEventAvg>& rows() const { return rows_; }
  // PyTorch's table: sort_by one of "cpu_time", "cpu_time_total", "self_cpu_time_total",
  // "cpu_memory_usage", "self_cpu_memory_usage", "count", "flops" (descending; "" keeps the
  // order of first appearance); at most row_limit rows (< 0: all). Grouped by stack, a "Source
  // Location" column shows the frames, one per line, as PyTorch's.
  std::string table(const std::string& sort_by = "", int64_t row_limit = 100) const;

 private:
  std::vector<FunctionEventAvg> rows_;
  bool input_shapes_, memory_, flops_, stack_;
};

class Session;

// The profiler, as a scoped object: recording starts at construction (or at the schedule's first
// recorded step) and stops with stop() or at destruction. One at a time: a second one raises.
class profile {
 public:
  explicit profile(ProfilerOptions options = {});
  ~profile();
  profile(const profile&) = delete;
  profile& operator=(const profile&) = delete;
  // Ends the current step (PyTorch's prof.step()): the schedule decides what the next one does.
  void step();
  int64_t step_num() const { return step_num_; }
  // Stops recording; the events of the last cycle stay readable. Raises if already stopped.
  void stop();

  // The events of the last recorded cycle (of the current one, once stop() or step() closed it).
  const std::vector<FunctionEvent>& events() const { return events_; }
  const std::vector<MemoryEvent>& memory_events() const { return memory_events_; }
  // PyTorch's key_averages: by name, and by input shapes and/or the first group_by_stack_n frames
  // of the call stack (with with_stack) when asked.
  KeyAverages key_averages(bool group_by_input_shape = false, int64_t group_by_stack_n = 0) const;
  // Trace Event Format JSON (chrome://tracing, Perfetto): one row per thread, flow arrows from
  // forward ops to their backward nodes, a memory counter track, call stacks ("Call stack") with
  // with_stack. Written to a temporary file and renamed, so a failed export leaves no file.
  void export_chrome_trace(const std::string& path) const;
  // One self-contained HTML page (no network): the op table, a timeline, memory over time
  // stacked by category.
  void export_html(const std::string& path) const;
  // Bytes in use over time by category (with profile_memory; see MemoryCategory).
  MemoryTimeline memory_timeline() const;
  // The same as JSON: {"times_ns": [...], "total_allocated": [...], "categories": ["parameter",
  // ...], "bytes": [[...], ...]}: total_allocated has one entry per memory event (after it), bytes
  // one row per entry of times_ns, the first at 0 (before the first event), one number per category.
  void export_memory_timeline(const std::string& path) const;
  // Tells the memory view which storages are parameters (and, through them, gradients) and
  // optimizer state: what they hold is read when called, at each step() and when recording stops.
  // The optimizer must outlive the recording (the module's parameters are kept by the profile).
  // Without them, the engine's accumulation still marks the leaves it reaches and their .grad.
  void register_module(const nn::Module& module);
  void register_optimizer(const optim::Optimizer& optimizer);
  const ProfilerOptions& options() const { return options_; }

 private:
  void start_cycle();
  void stop_cycle();
  void open_step_range();
  void snapshot_registered();
  ProfilerOptions options_;
  int64_t step_num_ = 0;
  ProfilerAction action_ = ProfilerAction::RECORD;
  bool stopped_ = false;
  std::shared_ptr<Session> session_;  // while a cycle records
  struct ThreadState;
  std::unique_ptr<ThreadState> thread_;  // this thread's recorder and step range
  std::vector<FunctionEvent> events_;
  std::vector<MemoryEvent> memory_events_;
  std::array<int64_t, kMemoryCategories> memory_at_start_{};  // by category, when recording began
  std::vector<Tensor> registered_parameters_;
  std::vector<const optim::Optimizer*> registered_optimizers_;
};

// A user range (PyTorch's record_function): an event named `name` from construction to
// destruction, nested like ops, in tables and traces. Costs nothing when no profiler records.
class record_function {
 public:
  explicit record_function(const std::string& name) : range_(name.c_str(), RangeKind::UserScope) {}

 private:
  dispatch::ObservedRange range_;
};

// Records this thread's ops into the active profiler (if any) while alive: PyTorch's profiler
// follows the threads it starts itself, and a user's thread joins with this guard.
class RecordThread {
 public:
  RecordThread();
  ~RecordThread();
  RecordThread(const RecordThread&) = delete;
  RecordThread& operator=(const RecordThread&) = delete;

 private:
  std::unique_ptr<OpObserver> recorder_;
};

}  // namespace ember::profiler
