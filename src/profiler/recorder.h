// The profiler's recording side, shared by profiler.cpp (sessions, tables) and export.cpp
// (traces, reports): a session collects the events of the threads that record into it, each
// thread into a buffer of its own.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ember/profiler.h"

namespace ember::profiler {

struct RawEvent {
  const char* name;  // an op's Ember name (Op::name), or a range's interned name
  EventKind kind;
  int64_t start, end = -1;
  int64_t sequence_nr = -1;
  uint64_t sequence_at_start = 0;  // ops: the autograd sequence number when they began
  int32_t parent;
  std::vector<OpInput> inputs;
  int64_t allocated = 0, freed = 0, flops = 0;
  uint32_t frames_begin = 0, frames_count = 0;  // with_stack: its return addresses in ThreadBuffer::frames
};

struct RawMemory {
  int64_t time, bytes, total;
  int32_t event;
  const void* ptr;
};

// A storage seen holding something of a category (a saved tensor, a leaf's .grad, a registered
// parameter...) at a time: matched at stop() with the block that held it then.
struct RawNote {
  int64_t time;
  const void* ptr;
  int64_t bytes;  // the block's bytes as the allocator counts them
  MemoryCategory category;
};

// One thread's events in one session; its recorder appends under the mutex, stop() takes them.
struct ThreadBuffer {
  int64_t thread = 0;
  std::mutex mutex;
  std::vector<RawEvent> events;
  std::vector<RawMemory> memory;
  std::vector<RawNote> notes;
  std::vector<void*> frames;  // with_stack: the events' return addresses, one run per event
  std::vector<int32_t> open;  // indices of the events begun and not ended, innermost last
  int64_t unrecorded = 0;     // ops begun while not recording and not ended
  std::unordered_set<std::string> names;  // ranges' names, which events point into
};

class Session {
 public:
  explicit Session(const ProfilerOptions& options);
  std::shared_ptr<ThreadBuffer> add_thread();
  int64_t now() const;  // ns since the session began
  const bool record_shapes, profile_memory, with_flops, with_stack;
  const int64_t stack_depth;
  std::atomic<bool> recording{true};
  const int64_t memory_at_start;      // allocator bytes in use when the session began
  std::atomic<int64_t> memory_total;  // allocator bytes in use, as the recorded threads moved it
  // Ends recording and returns every thread's events, open ones closed now, with memory
  // categories decided (`at_start`: the bytes in use at the start, by category).
  void collect(std::vector<FunctionEvent>& events, std::vector<MemoryEvent>& memory,
               std::array<int64_t, kMemoryCategories>& at_start);

 private:
  const int64_t origin_;
  std::mutex mutex_;
  std::vector<std::shared_ptr<ThreadBuffer>> buffers_;
};

// The op observer recording one thread into a session; lives on that thread.
class Recorder final : public OpObserver {
 public:
  explicit Recorder(std::shared_ptr<Session> session);
  ~Recorder() override;
  void on_enter(const char* op_name) override;
  void on_exit(const char* op_name) override;
  bool wants_inputs() const override { return wants_inputs_; }
  void on_inputs(const std::vector<OpInput>& inputs) override;
  void on_enter_range(const char* name, RangeKind kind, int64_t sequence_nr) override;
  void on_exit_range() override;
  void on_memory(const void* ptr, int64_t bytes);
  // A storage holding a tensor of this category now (with profile_memory).
  void note(const Tensor& t, MemoryCategory category);
  // The profiler's own "ProfilerStep#N" range: ended by prof.step(), not by the innermost exit.
  void begin_step(const std::string& name);
  void end_step();
  const Session* session() const { return session_.get(); }

 private:
  void begin(const char* name, EventKind kind, int64_t sequence_nr);
  void end();
  const char* intern(const std::string& name);  // a range's name, kept as long as the buffer
  std::shared_ptr<Session> session_;
  std::shared_ptr<ThreadBuffer> buffer_;
  bool wants_inputs_;
  Recorder* previous_;      // the thread's recorder before this one
  int32_t step_event_ = -1;  // the open step range's event
};

// The FLOPs of one call of `op` with these inputs (0 when the op has no formula).
int64_t op_flops(const char* op, const std::vector<OpInput>& inputs);

// The name PyTorch's profiler gives Ember's op `name`: "aten::add" for "add", "aten::add" for
// the out= form "add_out", names with a namespace as they are, "ember::..." for Ember's own ops.
std::string pytorch_op_name(const char* name);

// with_stack: the return addresses of the current call stack outside Ember's own code (at most
// `depth`, innermost first, appended to `out`), and their names, symbolized when asked.
void capture_stack(std::vector<void*>& out, int64_t depth);
using FrameNames = std::unordered_map<const void*, std::string>;  // "": a frame of Ember's own
std::vector<std::string> symbolize(const void* const* frames, size_t n, int64_t depth, FrameNames& names);

// Decides each memory event's category from the notes (see MemoryCategory); returns the bytes in
// use when recording began, by category.
std::array<int64_t, kMemoryCategories> classify_memory(std::vector<MemoryEvent>& memory, std::vector<RawNote>& notes,
                                                       int64_t memory_at_start);

// Writes `text` to `path` through a temporary file renamed over it: a failure leaves no file.
void write_file_atomically(const std::string& path, const std::string& text, const char* what);

}  // namespace ember::profiler
