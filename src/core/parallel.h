// Intra-op parallelism on the OpenMP runtime that oneDNN shares. Work below the grain size runs
// on the calling thread and never wakes a worker.
#pragma once
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace ember {

constexpr int64_t kGrainSize = 32768;

int get_num_threads();
void set_num_threads(int n);
bool in_parallel_region();

namespace detail {
// The threads a parallel region started now by this thread gets: get_num_threads(), or 1 while
// this thread's regions keep waiting for workers the scheduler is not running (docs/threads.md).
// parallel_for asks it, and kernels that size per-thread buffers for it. oneDNN's primitives keep
// get_num_threads(): long enough to gain from a second thread even on a busy machine.
int region_threads();
inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// Applies EMBER_CPU_CAPABILITY (cpu_capability.cpp) when the program starts; the allocator calls
// it so every program that makes a tensor links it.
bool cpu_capability_applied();
// Throws an ember::Error on a CPU that has none of the targets the kernels are compiled for
// (below AVX2); the allocator calls it before the first block, so no kernel runs there.
void check_cpu_supported();
}  // namespace detail

namespace detail {
// A callable f(begin, end), by reference: the parallel region below is compiled once, not once per
// lambda (each of the library's ~1500 parallel loops carried its own copy of OpenMP's outlined
// region: half a megabyte).
struct RangeFn {
  const void* obj;
  void (*call)(const void* obj, int64_t begin, int64_t end);
};
// Runs f over [begin, end) split in nthreads chunks, on OpenMP threads.
void parallel_region(int64_t begin, int64_t end, int nthreads, RangeFn f);
// f(begin, end) through a pointer to f: the one out-of-line copy of f's body, which both the
// serial path and the parallel region call (inlined into the serial path as well, each of the
// library's loop bodies was compiled twice: 60 KB of the pooling kernels alone).
template <class F>
[[gnu::noinline]] void call_range(const void* f, int64_t begin, int64_t end) {
  (*static_cast<const F*>(f))(begin, end);
}
}  // namespace detail

// f(begin, end) over disjoint chunks of [begin, end), each at least grain_size long.
template <class F>
void parallel_for(int64_t begin, int64_t end, int64_t grain_size, const F& f) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  const int64_t max_chunks = std::max<int64_t>(1, n / std::max<int64_t>(grain_size, 1));
  const int nthreads = max_chunks <= 1 || in_parallel_region()
                           ? 1
                           : static_cast<int>(std::min<int64_t>(detail::region_threads(), max_chunks));
  if (nthreads <= 1) return detail::call_range<F>(&f, begin, end);
  detail::parallel_region(begin, end, nthreads, {&f, &detail::call_range<F>});
}

}  // namespace ember
