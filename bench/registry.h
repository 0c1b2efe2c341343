// The case registry of ember_bench. A case checks once that Ember agrees with its baseline, then
// measures itself and returns its figures. Most cases time a pair of statements with time_pair;
// a case may instead report figures it measured itself, in its own unit (e.g. MB of peak memory).
// No libtorch here: only the cases_*.cpp files and main.cpp include it.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ember/benchmark.h"
#include "machine.h"

namespace bench {

// 16 Mi elements: the size of the cases labelled "16M float32" (tensor_core, fx's fused chain).
inline constexpr int64_t k16M = int64_t{16} << 20;

// Whom Ember is compared with. A speed-up within Ember (a mode against Ember's own default)
// uses Ember's default as baseline; the JSON then says "baseline": "ember".
enum class Baseline { LibTorch, Ember };

// Hardware a case's target assumes. Where the CPU lacks it the case still runs and checks its
// result, but its target is not judged ("met" is "-", and a note names the path taken).
enum class Needs { Nothing, BFloat16Instructions, Amx };

struct Case;

struct Context {
  const Case& current;
  int threads;               // for both Ember and libtorch
  MachineLimits limits;      // measured in this run, to read GB/s and GFLOP/s against
};

// A case's figures; ratio = ember / baseline, lower is better.
struct Outcome {
  std::string unit = "us";
  double ember = 0;
  std::optional<double> baseline;  // none when the case has no twin
  std::vector<ember::benchmark::Measurement> measurements;  // shown in the Compare tables
  std::vector<std::string> notes;  // printed beside the figures, e.g. "41.2 GB/s (83% of triad)"
};

struct Case {
  std::string name;   // exact, used by --filter and in the JSON
  // The Compare table showing the case; one table prints in one unit, so cases of similar
  // magnitude share a label (e.g. "tensor_core: 16M float32").
  std::string label;
  std::optional<double> target;  // met when ember / baseline <= target
  Baseline baseline = Baseline::LibTorch;
  Needs needs = Needs::Nothing;
  // Checks that Ember's result matches the baseline's (throws CheckFailure otherwise), then
  // measures. Runs with Ember's and libtorch's thread counts already set to Context::threads.
  std::function<Outcome(const Context&)> run;
};

// Ember's result disagrees with the baseline's: the case fails and ember_bench exits non-zero.
struct CheckFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Every case, in the order --list prints and the suite runs them: by the name of the file that
// registers it, then as that file declares them. (The static initializers that register the
// cases run in the linker's order of the object files, which unity batches change.)
std::vector<Case>& registry();
void add_case(Case c, std::string_view file);

// `static bench::Register r{{.name = ..., .run = ...}};` in a cases_*.cpp file adds a case.
struct Register {
  explicit Register(Case c, std::source_location where = std::source_location::current()) {
    add_case(std::move(c), where.file_name());
  }
};

// Two statements timed against each other.
struct Pair {
  std::function<void()> ember;
  std::function<void()> baseline;  // empty when the case has no twin
  double min_run_time = 1.0;        // seconds per side, spread over the rounds
  int rounds = 5;                   // alternating ember / baseline blocks, so drift hits both alike
  double bytes = 0;                 // memory traffic per call: adds GB/s notes when > 0
  double flops = 0;                 // floating-point operations per call: adds GFLOP/s notes when > 0
  // Called before each round of that side (e.g. to start or pause contention), followed by
  // `settle` seconds of untimed calls, so each side is timed in its steady state.
  std::function<void()> ember_enter = {}, baseline_enter = {};
  double settle = 0;
};

// JSON spellings shared by the suite's and the sweep's --json: a quoted, escaped string; a
// number with six significant figures, or null when absent or not finite.
std::string json_string(const std::string& s);
std::string json_number(std::optional<double> v);

// Medians in microseconds from blocked_autorange rounds that alternate between the two sides.
Outcome time_pair(const Context& ctx, const Pair& pair);

}  // namespace bench
