// The summary table and the JSON array of a suite run (see report.h).
#include "report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "ember/parallel.h"  // has_bfloat16_instructions, cpu_kernel_paths

namespace bench {

namespace {

bool hardware_present(Needs needs) {
  switch (needs) {
    case Needs::BFloat16Instructions: return ember::has_bfloat16_instructions();
    case Needs::Amx: return ember::has_amx_instructions();
    case Needs::Nothing: break;
  }
  return true;
}

const char* needs_name(Needs needs) {
  return needs == Needs::Amx ? "AMX" : "bfloat16 instructions (AVX512-BF16 or AMX)";
}

struct Result {
  const Case* c;
  std::optional<Outcome> outcome;  // none when the case failed
  std::string error;
  std::optional<double> ratio() const {
    if (!outcome || !outcome->baseline) return std::nullopt;
    return outcome->ember / *outcome->baseline;
  }
  std::optional<bool> met() const {
    const auto r = ratio();
    if (!outcome) return c->target ? std::optional<bool>(false) : std::nullopt;
    if (!r || !c->target || !hardware_present(c->needs)) return std::nullopt;
    return *r <= *c->target;
  }
};

// Four significant figures without an exponent ("0.2523", "16001"); "-" when absent.
std::string num(std::optional<double> v) {
  if (!v) return "-";
  const int decimals = *v > 0 ? std::max(0, 3 - static_cast<int>(std::floor(std::log10(*v)))) : 0;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, *v);
  return buf;
}

void write_json(const std::string& path, const std::vector<Result>& results, const char* program) {
  std::ofstream f(path);
  f << "[\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    const Outcome* o = r.outcome ? &*r.outcome : nullptr;
    const auto met = r.met();
    f << "  {\"name\": " << json_string(r.c->name) << ", \"unit\": " << json_string(o ? o->unit : "us")
      << ", \"ember\": " << json_number(o ? std::optional<double>(o->ember) : std::nullopt)
      << ", \"libtorch\": " << json_number(o ? o->baseline : std::nullopt) << ", \"ratio\": " << json_number(r.ratio())
      << ", \"target\": " << json_number(r.c->target)
      << ", \"met\": " << (met ? (*met ? "true" : "false") : "null");
    if (r.c->baseline == Baseline::Ember) f << ", \"baseline\": \"ember\"";
    if (!o) f << ", \"error\": " << json_string(r.error);
    f << "}" << (i + 1 < results.size() ? "," : "") << "\n";
  }
  f << "]\n";
  if (!f) {
    std::fprintf(stderr, "%s: could not write %s\n", program, path.c_str());
    std::exit(1);
  }
}

void print_summary(const std::vector<Result>& results, const char* baseline_name) {
  std::printf("%-24s %5s %12s %12s %8s %7s %5s\n", "case", "unit", "ember", "baseline", "ratio", "target", "met");
  for (const Result& r : results) {
    const Outcome* o = r.outcome ? &*r.outcome : nullptr;
    const auto met = r.met();
    std::printf("%-24s %5s %12s %12s %8s %7s %5s\n", r.c->name.c_str(), o ? o->unit.c_str() : "-",
                num(o ? std::optional<double>(o->ember) : std::nullopt).c_str(),
                (num(o ? o->baseline : std::nullopt) + (r.c->baseline == Baseline::Ember ? "*" : "")).c_str(),
                num(r.ratio()).c_str(), num(r.c->target).c_str(), met ? (*met ? "yes" : "NO") : "-");
    if (o)
      for (const std::string& n : o->notes) std::printf("    %s\n", n.c_str());
    if (!o) std::printf("    FAILED: %s\n", r.error.c_str());
  }
  std::printf("(ratio = ember / baseline, lower is better; baseline is %s, * marks Ember's default mode)\n",
              baseline_name);
}

}  // namespace

int run_suite(const std::vector<const Case*>& cases, int threads, const MachineLimits& limits,
              const std::string& json_path, const char* program, const char* baseline_name) {
  std::vector<Result> results;
  bool failed = false;
  for (const Case* c : cases) {
    Result r{c, std::nullopt, ""};
    try {
      r.outcome = c->run(Context{*c, threads, limits});
      if (!hardware_present(c->needs)) {
        r.outcome->notes.push_back(std::string("target not judged: it assumes ") + needs_name(c->needs) +
                                   ", which this CPU lacks (" + ember::cpu_kernel_paths() + ")");
      }
      std::printf("%-24s ember %s %s, baseline %s\n", c->name.c_str(), num(r.outcome->ember).c_str(),
                  r.outcome->unit.c_str(), num(r.outcome->baseline).c_str());
    } catch (const std::exception& e) {
      // A mismatch (CheckFailure) or an error from either library fails the case, not the run.
      r.error = e.what();
      failed = true;
      std::printf("%-24s FAILED: %s\n", c->name.c_str(), e.what());
    }
    std::fflush(stdout);
    results.push_back(std::move(r));
  }

  ember::benchmark::Compare compare;
  for (const Result& r : results)
    if (r.outcome) compare.extend_results(r.outcome->measurements);
  compare.colorize();
  compare.highlight_warnings();
  std::printf("\n");
  compare.print();
  print_summary(results, baseline_name);
  if (!json_path.empty()) write_json(json_path, results, program);
  if (failed) std::fprintf(stderr, "%s: some cases FAILED (see above)\n", program);
  return failed ? 1 : 0;
}

}  // namespace bench
