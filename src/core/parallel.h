// Intra-op parallelism on the OpenMP runtime that oneDNN shares. Work below the grain size runs
// on the calling thread and never wakes a worker.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace ember {

constexpr int64_t kGrainSize = 32768;

int get_num_threads();
void set_num_threads(int n);
bool in_parallel_region();

namespace detail {
// Applies EMBER_CPU_CAPABILITY (cpu_capability.cpp) when the program starts; the allocator calls
// it so every program that makes a tensor links it.
bool cpu_capability_applied();
}  // namespace detail

// f(begin, end) over disjoint chunks of [begin, end), each at least grain_size long.
template <class F>
void parallel_for(int64_t begin, int64_t end, int64_t grain_size, const F& f) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  const int64_t max_chunks = std::max<int64_t>(1, n / std::max<int64_t>(grain_size, 1));
  const int nthreads = static_cast<int>(std::min<int64_t>(get_num_threads(), max_chunks));
  if (nthreads <= 1 || in_parallel_region()) {
    f(begin, end);
    return;
  }
#pragma omp parallel num_threads(nthreads)
  {
    const int tid = omp_get_thread_num();
    const int nt = omp_get_num_threads();
    const int64_t chunk = (n + nt - 1) / nt;
    const int64_t b = begin + tid * chunk;
    const int64_t e = std::min(end, b + chunk);
    if (b < e) f(b, e);
  }
}

}  // namespace ember
