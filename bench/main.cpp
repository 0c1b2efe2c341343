// ember_bench: every registered case in Ember and in its baseline (libtorch, or Ember's own
// default mode), same run, same thread count, then Compare tables, a summary against the
// targets and, with --json, one object per case.
#include <malloc.h>
#include <omp.h>
#include <torch/utils.h>  // torch::set_num_threads

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <regex>
#include <string>

#include "ember/ember.h"
#include "registry.h"
#include "report.h"
#include "sweep.h"

namespace {

struct Options {
  int threads = omp_get_num_procs();
  std::string filter;
  std::string json;
  bool list = false;
  bool sweep = false;
  bool check_only = false;
  std::vector<int64_t> sizes = {1 << 10, 1 << 16, 1 << 22};
  double sweep_seconds = 0.15;
};

[[noreturn]] void usage(int code) {
  std::fprintf(code ? stderr : stdout,
               "usage: ember_bench [--threads N] [--filter REGEX] [--json FILE] [--list]\n"
               "       ember_bench --sweep [--sizes LIST] [--seconds S] [--check-only] [--threads N] [--filter REGEX] [--json FILE]\n"
               "  --threads N     threads for Ember and libtorch alike (default: all cores)\n"
               "  --filter REGEX  run only the cases (sweep rows) whose name matches (std::regex_search)\n"
               "  --json FILE     also write the results as a JSON array\n"
               "  --list          print the case names and exit\n"
               "  --sweep         every op against libtorch over sizes, dtypes and layouts (docs/benchmark.md)\n"
               "  --sizes LIST    the sweep's elements per operand, e.g. 1K,64K,4M (the default)\n"
               "  --seconds S     the sweep's timing per side and row (default 0.15)\n"
               "  --check-only    the sweep compares every row with libtorch and times nothing\n");
  std::exit(code);
}

// "1K,64K,4M" -> {1024, 65536, 4194304}
std::vector<int64_t> parse_sizes(const std::string& list) {
  std::vector<int64_t> sizes;
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    const std::string item = list.substr(pos, comma - pos);
    char* end = nullptr;
    long long n = std::strtoll(item.c_str(), &end, 10);
    if (*end == 'K') {
      n <<= 10;
      ++end;
    } else if (*end == 'M') {
      n <<= 20;
      ++end;
    }
    if (item.empty() || *end != '\0' || n < 1 || n > (1LL << 30)) {
      std::fprintf(stderr, "ember_bench: --sizes expects sizes such as 1K,64K,4M, got '%s'\n", list.c_str());
      usage(2);
    }
    sizes.push_back(n);
    pos = comma + 1;
  }
  return sizes;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ember_bench: %s needs a value\n", arg.c_str());
        usage(2);
      }
      return argv[++i];
    };
    if (arg == "--threads") {
      const std::string v = value();
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (*end != '\0' || n < 1 || n > 4096) {
        std::fprintf(stderr, "ember_bench: --threads expects a positive integer, got '%s'\n", v.c_str());
        usage(2);
      }
      o.threads = static_cast<int>(n);
    } else if (arg == "--filter") {
      o.filter = value();
    } else if (arg == "--json") {
      o.json = value();
    } else if (arg == "--list") {
      o.list = true;
    } else if (arg == "--sweep") {
      o.sweep = true;
    } else if (arg == "--check-only") {
      o.check_only = true;
    } else if (arg == "--seconds") {
      const std::string v = value();
      char* end = nullptr;
      o.sweep_seconds = std::strtod(v.c_str(), &end);
      if (*end != '\0' || !(o.sweep_seconds > 0) || o.sweep_seconds > 3600) {
        std::fprintf(stderr, "ember_bench: --seconds expects a positive number, got '%s'\n", v.c_str());
        usage(2);
      }
    } else if (arg == "--sizes") {
      o.sizes = parse_sizes(value());
    } else if (arg == "--help" || arg == "-h") {
      usage(0);
    } else {
      std::fprintf(stderr, "ember_bench: unknown argument '%s'\n", arg.c_str());
      usage(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  std::regex filter;
  try {
    filter = std::regex(opt.filter);
  } catch (const std::regex_error& e) {
    std::fprintf(stderr, "ember_bench: bad --filter regex '%s': %s\n", opt.filter.c_str(), e.what());
    return 2;
  }
  std::vector<const bench::Case*> selected;
  for (const bench::Case& c : bench::registry())
    if (std::regex_search(c.name, filter)) selected.push_back(&c);
  if (opt.list) {
    for (const bench::Case* c : selected) std::printf("%s\n", c->name.c_str());
    return 0;
  }
  if (selected.empty() && !opt.sweep) {
    std::fprintf(stderr, "ember_bench: no case matches '%s' (see --list)\n", opt.filter.c_str());
    return 2;
  }

  // libtorch's CPU allocator takes every tensor from malloc. glibc serves blocks above a threshold
  // with fresh mmaps (page faults on each first touch) and moves that threshold up as such blocks
  // are freed, so libtorch's speed on multi-MiB tensors depended on which cases ran before (a
  // conv case alone: 4.4 ms; after others: 0.9 ms). Fixed thresholds give the baseline its steady
  // best: blocks up to 32 MiB (glibc's maximum) come from the heap, which is not trimmed.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);

  ember::set_num_threads(opt.threads);
  torch::set_num_threads(opt.threads);
  const bench::MachineLimits limits = bench::measure_machine(opt.threads);
  std::printf("ember_bench: %d thread%s\n", opt.threads, opt.threads > 1 ? "s" : "");
  std::printf("machine: FMA peak %.1f GFLOP/s (float32, %s), triad bandwidth %.1f GB/s (3 x %.0f MiB arrays)\n",
              limits.fma_gflops, limits.simd_target.c_str(), limits.triad_gbps, limits.triad_mib);
  // Matmul figures depend on the BLAS kernels libtorch runs, which this variable selects.
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  std::printf("kernels: %s; libtorch's OpenBLAS: %s\n\n", ember::cpu_kernel_paths().c_str(),
              coretype ? (std::string("OPENBLAS_CORETYPE=") + coretype).c_str() : "its own choice of core type");
  std::fflush(stdout);
  if (opt.sweep) {
    return bench::run_sweep({.sizes = opt.sizes, .filter = opt.filter, .seconds = opt.sweep_seconds,
                             .check_only = opt.check_only, .json = opt.json, .threads = opt.threads},
                            limits);
  }

  return bench::run_suite(selected, opt.threads, limits, opt.json, "ember_bench", "libtorch");
}
