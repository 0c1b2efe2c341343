// The machine's limits, measured in the same run as the cases so their GB/s and GFLOP/s can be
// read against what the cores in use can actually do.
#pragma once
#include <string>

namespace bench {

struct MachineLimits {
  double fma_gflops = 0;    // peak float32 FMA throughput of all threads together
  std::string simd_target;  // Highway target the FMA loop ran on
  double triad_gbps = 0;    // a = b + s * c, counting 3 arrays of traffic per element
  double triad_mib = 0;     // size of each triad array
};

// Best of several trials, with `threads` OpenMP threads.
MachineLimits measure_machine(int threads);

}  // namespace bench
