// What the rest of the library tells the profiler's memory view, at no cost when no profiler
// observes this thread: callers test the observer layer's bit first (one thread-local load).
#pragma once
#include "dispatch/dispatch.h"
#include "ember/profiler.h"

namespace ember::profiler::hooks {

// `t`'s storage holds a tensor of this category now (autograd saved it, a leaf's .grad...).
void note_tensor(const Tensor& t, MemoryCategory category);

inline bool observed() { return dispatch::thread_state().active & dispatch::kObserverLayer; }

}  // namespace ember::profiler::hooks
