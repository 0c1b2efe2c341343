// Running a suite of cases and reporting it, shared by ember_bench and ember_dist_bench: each
// case's line as it finishes, the Compare tables, the summary against the targets and, with a
// JSON path, one object per case.
#pragma once
#include <string>
#include <vector>

#include "registry.h"

namespace bench {

// Runs the cases in order (a case that throws fails alone) and reports them; `program` names the
// caller in messages, `baseline_name` what Baseline::LibTorch cases compare with (the JSON's
// "libtorch" field). Returns the exit status: 1 when a case failed.
int run_suite(const std::vector<const Case*>& cases, int threads, const MachineLimits& limits,
              const std::string& json_path, const char* program, const char* baseline_name);

}  // namespace bench
