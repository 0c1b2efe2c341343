// Op observers: see every op that enters Ember's dispatch point on this thread (the hook
// profilers and op counters are built on, like PyTorch's RecordFunction callbacks).
// An observer is active from construction to destruction, on the constructing thread only.
#pragma once
#include <cstdint>
#include <vector>

#include "ember/dtype.h"

namespace ember {

// One argument of an observed op, described for observers that ask for inputs: a tensor's sizes
// and dtype, an integer list's values (strides, paddings) or an integer's value; other arguments
// (scalars, options) appear with neither.
struct OpInput {
  enum class Kind : uint8_t { Other, Tensor, Ints };
  Kind kind = Kind::Other;
  ScalarType dtype = ScalarType::Undefined;
  std::vector<int64_t> values;  // a tensor's sizes, or the integers
};

// What an observer sees besides ops: user ranges (profiler::record_function) and the backward
// nodes the autograd engine runs (with the sequence number of the forward op that recorded them).
enum class RangeKind : uint8_t { UserScope, BackwardNode };

class OpObserver {
 public:
  OpObserver();
  virtual ~OpObserver();
  OpObserver(const OpObserver&) = delete;
  OpObserver& operator=(const OpObserver&) = delete;
  virtual void on_enter(const char* op_name) = 0;
  virtual void on_exit(const char* /*op_name*/) {}
  // Observers that return true get on_inputs right after each on_enter; ops pay for describing
  // their arguments only while such an observer is active.
  virtual bool wants_inputs() const { return false; }
  virtual void on_inputs(const std::vector<OpInput>& /*inputs*/) {}
  virtual void on_enter_range(const char* /*name*/, RangeKind /*kind*/, int64_t /*sequence_nr*/) {}
  virtual void on_exit_range() {}
};

namespace dispatch {
void push_observer(OpObserver* o);
void pop_observer(OpObserver* o);

// A range that is not an op, told to this thread's observers from construction to destruction.
// `name` need only live until the constructor returns.
class ObservedRange {
 public:
  ObservedRange(const char* name, RangeKind kind, int64_t sequence_nr = -1);
  ~ObservedRange();
  ObservedRange(const ObservedRange&) = delete;
  ObservedRange& operator=(const ObservedRange&) = delete;

 private:
  bool observed_;
};
}  // namespace dispatch

}  // namespace ember
