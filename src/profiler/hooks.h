// What the rest of the library tells the profiler's memory view, at no cost when no profiler
// observes this thread: callers test the observer layer's bit first (a thread-local and a global load).
#pragma once
#include "dispatch/dispatch.h"
#include "ember/profiler.h"

namespace ember::profiler::hooks {

// `t`'s storage holds a tensor of this category now (autograd saved it, a leaf's .grad...).
void note_tensor(const Tensor& t, MemoryCategory category);

inline bool observed() { return dispatch::observing(); }

}  // namespace ember::profiler::hooks
