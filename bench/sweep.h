// ember_bench --sweep: every public op with a libtorch twin, at several sizes, dtypes and layouts,
// checked against libtorch and timed against it (see docs/benchmark.md, "The op sweep").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "machine.h"

namespace bench {

struct SweepOptions {
  std::vector<int64_t> sizes;  // elements per operand: 1K, 64K, 4M by default
  std::string filter;          // regex over the row names
  double seconds = 0.15;       // timed per side and row, spread over alternating rounds
  bool check_only = false;     // compare with libtorch, time nothing (CI's smoke run)
  std::string json;            // also write the rows as the suite's JSON
  int threads = 1;
};

// Runs the sweep; returns the process's exit code (1 when a row's result differs from libtorch's
// or an op fails, 2 on a bad filter or no matching row).
int run_sweep(const SweepOptions& options, const MachineLimits& limits);

}  // namespace bench
