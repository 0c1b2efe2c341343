#include "core/parallel.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/contention.h"
#include "ember/parallel.h"

namespace ember {
namespace {
// Ember's own count, so that a library sharing the OpenMP runtime (libtorch resets a thread's
// OpenMP count when it initialises) cannot silently change Ember's parallelism.
std::atomic<int> g_num_threads{0};

bool adaptive_from_env() {
  const char* v = std::getenv("EMBER_ADAPTIVE_THREADS");
  return !(v && std::strcmp(v, "0") == 0);
}
std::atomic<bool> g_adaptive{adaptive_from_env()};

// fork copies only the calling thread: a child forked after OpenMP started its workers has none,
// and libgomp's next region there waits for them forever. The child runs its regions on its own
// thread (set_num_threads may ask for more: its regions then need workers the child has not got,
// as in PyTorch). oneDNN's primitives take this count too (onednn.cpp).
void run_serially_after_fork() { g_num_threads.store(1, std::memory_order_relaxed); }
const bool g_fork_handler_installed = pthread_atfork(nullptr, nullptr, run_serially_after_fork) == 0;

// One policy per thread that starts regions: each judges the barriers it waits at.
detail::ContentionPolicy& thread_policy() {
  thread_local detail::ContentionPolicy policy;
  return policy;
}
}  // namespace

namespace detail {

bool ContentionPolicy::serial(int64_t now_ns) {
  if (serial_ && now_ns >= serial_until_ns_) {
    serial_ = false;  // try parallel regions again; the next window judges them
    window_wall_ns_ = window_stall_ns_ = 0;
  }
  return serial_;
}

void ContentionPolicy::record(int64_t now_ns, int64_t wall_ns, int64_t stall_ns) {
  if (serial_) return;
  window_wall_ns_ += wall_ns;
  window_stall_ns_ += stall_ns;
  if (window_wall_ns_ < kWindowNs) return;
  const bool stalled = static_cast<double>(window_stall_ns_) > kStalledShare * static_cast<double>(window_wall_ns_);
  window_wall_ns_ = window_stall_ns_ = 0;
  if (!stalled) {
    hold_ns_ = kFirstHoldNs;
    return;
  }
  serial_ = true;
  serial_until_ns_ = now_ns + hold_ns_;
  hold_ns_ = std::min(2 * hold_ns_, kMaxHoldNs);
}

int region_threads() {
  const int n = get_num_threads();
  if (n <= 1 || !g_adaptive.load(std::memory_order_relaxed)) return n;
  return thread_policy().serial(now_ns()) ? 1 : n;
}

// Each region reports when it started, when the starting thread began and finished its own part,
// and when it ended.
static void region_done(int64_t start_ns, int64_t own_start_ns, int64_t own_end_ns, int64_t end_ns) {
  if (!g_adaptive.load(std::memory_order_relaxed)) return;
  thread_policy().record(end_ns, end_ns - start_ns,
                         ContentionPolicy::region_stall(start_ns, own_start_ns, own_end_ns, end_ns));
}

void parallel_region(int64_t begin, int64_t end, int nthreads, RangeFn f) {
  const int64_t n = end - begin;
  const int64_t start = now_ns();
  int64_t own_start = start, own_end = start;  // written by thread 0, which is this thread
#pragma omp parallel num_threads(nthreads)
  {
    const int tid = omp_get_thread_num();
    const int nt = omp_get_num_threads();
    const int64_t chunk = (n + nt - 1) / nt;
    const int64_t b = begin + tid * chunk;
    const int64_t e = std::min(end, b + chunk);
    if (tid == 0) own_start = now_ns();
    if (b < e) f.call(f.obj, b, e);
    if (tid == 0) own_end = now_ns();
  }
  region_done(start, own_start, own_end, now_ns());
}

}  // namespace detail

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

void set_adaptive_threads(bool enabled) { g_adaptive.store(enabled, std::memory_order_relaxed); }
bool adaptive_threads() { return g_adaptive.load(std::memory_order_relaxed); }

bool in_parallel_region() { return omp_in_parallel(); }

}  // namespace ember
