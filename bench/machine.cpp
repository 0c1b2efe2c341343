// Peak FMA throughput and memory bandwidth. The FMA loop is compiled for each SIMD target and
// the best one the CPU supports runs, as Ember's own kernels do.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "machine.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// `iters` rounds of FMAs on independent accumulators; returns the float32 operations done.
// Twelve chains cover FMA latency x issue width (4 x 2 on current x86) and, with the two
// constants, still fit the 16 AVX2 registers.
double fma_loop(int64_t iters, float* sink) {
  constexpr int kChains = 12;
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const V m = hn::Set(d, 0.999999f), c = hn::Set(d, 1e-7f);  // converges: no overflow, no denormals
  V acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = hn::Set(d, static_cast<float>(k));
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int k = 0; k < kChains; ++k) acc[k] = hn::MulAdd(acc[k], m, c);
  }
  V total = acc[0];
  for (int k = 1; k < kChains; ++k) total = hn::Add(total, acc[k]);
  *sink = hn::GetLane(total);  // keeps the chains alive
  return 2.0 * kChains * static_cast<double>(hn::Lanes(d)) * static_cast<double>(iters);
}

const char* target_name() { return hwy::TargetName(HWY_TARGET); }

}  // namespace bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "machine.h"

namespace bench {
HWY_EXPORT(fma_loop);
HWY_EXPORT(target_name);

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Every thread runs the FMA loop at once; the wall time covers the slowest.
double fma_gflops(int threads, int64_t iters) {
  std::vector<float> sinks(static_cast<size_t>(threads) * 16);  // a cache line apart
  double flops = 0;
  const double start = now();
#pragma omp parallel num_threads(threads) reduction(+ : flops)
  flops += HWY_DYNAMIC_DISPATCH(fma_loop)(iters, &sinks[static_cast<size_t>(omp_get_thread_num()) * 16]);
  return flops / (now() - start) / 1e9;
}

// Arrays of at least the last-level cache each, so the triad streams from memory.
size_t triad_elements() {
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 <= 0) l3 = 64L << 20;
  return std::max<size_t>(static_cast<size_t>(l3), size_t{256} << 20) / sizeof(float);
}

double triad_gbps(int threads, size_t n) {
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]), c(new float[n]);
  const int64_t len = static_cast<int64_t>(n);
  // First touch by the threads that later stream the same ranges.
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < len; ++i) a[i] = 0, b[i] = 1, c[i] = 2;
  double best = 0;
  for (int trial = 0; trial < 6; ++trial) {
    const float s = 0.5f + static_cast<float>(trial);
    const double start = now();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < len; ++i) a[i] = b[i] + s * c[i];
    const double secs = now() - start;
    if (trial > 0) best = std::max(best, 3.0 * sizeof(float) * static_cast<double>(n) / secs / 1e9);
  }
  return best;
}

}  // namespace

MachineLimits measure_machine(int threads) {
  MachineLimits m;
  m.simd_target = HWY_DYNAMIC_DISPATCH(target_name)();
  // Size the FMA runs to about 0.2 s from a short single-thread probe.
  float sink;
  const double t0 = now();
  HWY_DYNAMIC_DISPATCH(fma_loop)(1 << 20, &sink);
  const double per_iter = (now() - t0) / (1 << 20);
  const int64_t iters = std::max<int64_t>(1 << 20, static_cast<int64_t>(0.2 / per_iter));
  for (int trial = 0; trial < 5; ++trial) m.fma_gflops = std::max(m.fma_gflops, fma_gflops(threads, iters));
  const size_t n = triad_elements();
  m.triad_mib = static_cast<double>(n * sizeof(float)) / (1 << 20);
  m.triad_gbps = triad_gbps(threads, n);
  return m;
}

}  // namespace bench
#endif  // HWY_ONCE
