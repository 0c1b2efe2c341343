// The profiler's recording side, shared by profiler.cpp (sessions, tables) and export.cpp
// (traces, reports): a session collects the events of the threads that record into it, each
// thread into a buffer of its own.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "ember/profiler.h"

namespace ember::profiler {

struct RawEvent {
  const char* name;
  EventKind kind;
  int64_t start, end = -1;
  int64_t sequence_nr = -1;
  uint64_t sequence_at_start = 0;  // ops: the autograd sequence number when they began
  int32_t parent;
  std::vector<OpInput> inputs;
  int64_t allocated = 0, freed = 0, flops = 0;
};

struct RawMemory {
  int64_t time, bytes, total;
  int32_t event;
};

// One thread's events in one session; its recorder appends under the mutex, stop() takes them.
struct ThreadBuffer {
  int64_t thread = 0;
  std::mutex mutex;
  std::vector<RawEvent> events;
  std::vector<RawMemory> memory;
  std::vector<int32_t> open;  // indices of the events begun and not ended, innermost last
  int64_t unrecorded = 0;     // ops begun while not recording and not ended
  std::unordered_set<std::string> names;  // ranges' names, which events point into
};

class Session {
 public:
  explicit Session(const ProfilerOptions& options);
  std::shared_ptr<ThreadBuffer> add_thread();
  int64_t now() const;  // ns since the session began
  const bool record_shapes, profile_memory, with_flops;
  std::atomic<bool> recording{true};
  std::atomic<int64_t> memory_total;  // allocator bytes in use, as the recorded threads moved it
  // Ends recording and returns every thread's events, open ones closed now.
  void collect(std::vector<FunctionEvent>& events, std::vector<MemoryEvent>& memory);

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
  void on_memory(int64_t bytes);
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

// Writes `text` to `path` through a temporary file renamed over it: a failure leaves no file.
void write_file_atomically(const std::string& path, const std::string& text, const char* what);

}  // namespace ember::profiler
