// Op observers: see every op that enters Ember's dispatch point on this thread (the hook
// profilers and op counters are built on, like PyTorch's RecordFunction callbacks).
// An observer is active from construction to destruction, on the constructing thread only.
#pragma once

namespace ember {

class OpObserver {
 public:
  OpObserver();
  virtual ~OpObserver();
  OpObserver(const OpObserver&) = delete;
  OpObserver& operator=(const OpObserver&) = delete;
  virtual void on_enter(const char* op_name) = 0;
  virtual void on_exit(const char* /*op_name*/) {}
};

namespace dispatch {
void push_observer(OpObserver* o);
void pop_observer(OpObserver* o);
}  // namespace dispatch

}  // namespace ember
