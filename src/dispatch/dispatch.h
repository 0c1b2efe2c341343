// The single entry point of every op. Public functions are one line: `return dispatch::call<Op>(args...)`
// where Op is the op's description (see docs/ops.md): a struct with `name` and `run`.
//
// A thread-local word says which layers are active. With none active, call<Op> is a direct call
// to Op::run. Otherwise each active layer takes its turn around the op, outermost first; layers
// are written once, generically, never inside each op. Today's layer is the op observer (the
// hook the profiler and tests use); autograd, autocast, tracing and quantization join here.
#pragma once
#include <cstdint>
#include <utility>

namespace ember::dispatch {

enum Layer : uint32_t {
  kObserverLayer = 1u << 0,
};

struct ThreadState {
  uint32_t active = 0;  // OR of Layer bits
};
ThreadState& thread_state();  // defined out of line: one TLS access, no guard variable

// Tells the observers of this thread that an op begins (the returned token ends it).
class ObservedOp {
 public:
  explicit ObservedOp(const char* name);
  ~ObservedOp();
  ObservedOp(const ObservedOp&) = delete;
  ObservedOp& operator=(const ObservedOp&) = delete;

 private:
  const char* name_;
};

template <class Op, class... Args>
decltype(auto) call_with_layers(uint32_t active, Args&&... args) {
  if (active & kObserverLayer) {
    ObservedOp scope(Op::name);
    return Op::run(std::forward<Args>(args)...);
  }
  return Op::run(std::forward<Args>(args)...);
}

template <class Op, class... Args>
inline decltype(auto) call(Args&&... args) {
  const uint32_t active = thread_state().active;
  if (__builtin_expect(active == 0, 1)) return Op::run(std::forward<Args>(args)...);
  return call_with_layers<Op>(active, std::forward<Args>(args)...);
}

}  // namespace ember::dispatch
