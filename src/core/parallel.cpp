#include "core/parallel.h"

#include <atomic>

#include "ember/parallel.h"

namespace ember {
namespace {
// Ember's own count, so that a library sharing the OpenMP runtime (libtorch resets a thread's
// OpenMP count when it initialises) cannot silently change Ember's parallelism.
std::atomic<int> g_num_threads{0};
}  // namespace

int get_num_threads() {
  int n = g_num_threads.load(std::memory_order_relaxed);
  if (n == 0) {
    int expected = 0;
    g_num_threads.compare_exchange_strong(expected, omp_get_max_threads());  // OMP_NUM_THREADS or all cores
    n = g_num_threads.load(std::memory_order_relaxed);
  }
  return n;
}

void set_num_threads(int n) {
  EMBER_CHECK(n > 0, "set_num_threads", "expected a positive number of threads, got ", n);
  g_num_threads.store(n, std::memory_order_relaxed);
  omp_set_num_threads(n);
}

bool in_parallel_region() { return omp_in_parallel(); }

}  // namespace ember
