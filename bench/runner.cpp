// The case registry and the paired timing every time case uses.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "registry.h"

namespace bench {

std::vector<Case>& registry() {
  static std::vector<Case> cases;
  return cases;
}

namespace {

// The name of the file that registered each case of registry(), by index.
std::vector<std::string>& case_files() {
  static std::vector<std::string> files;
  return files;
}

}  // namespace

void add_case(Case c, std::string_view file) {
  const std::string name(file.substr(file.find_last_of('/') + 1));  // npos + 1 = 0: no directory
  std::vector<std::string>& files = case_files();
  const auto at = std::upper_bound(files.begin(), files.end(), name) - files.begin();
  files.insert(files.begin() + at, name);
  registry().insert(registry().begin() + at, std::move(c));
}

namespace {

namespace eb = ember::benchmark;

// "ember 41.2 GB/s (83% of triad)" for a per-call amount of work and a median in microseconds.
std::string rate_note(const std::string& who, double amount, double median_us, const char* unit, double limit,
                      const char* limit_name) {
  const double rate = amount / (median_us * 1e-6) / 1e9;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s %.1f %s (%.0f%% of %s)", who.c_str(), rate, unit, 100 * rate / limit,
                limit_name);
  return buf;
}

}  // namespace

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string json_number(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", *v);
  return buf;
}

Outcome time_pair(const Context& ctx, const Pair& pair) {
  const Case& c = ctx.current;
  const std::string base_name = c.baseline == Baseline::Ember ? "ember default" : "libtorch";
  auto options = [&](const std::string& description) {
    eb::TimerOptions o;
    o.num_threads = ctx.threads;
    o.label = c.label;
    o.sub_label = c.name;
    o.description = description;
    return o;
  };
  eb::Timer ember_timer(pair.ember, {}, options("ember"));
  std::optional<eb::Timer> base_timer;
  if (pair.baseline) base_timer.emplace(pair.baseline, std::function<void()>(), options(base_name));

  // Short rounds alternate between the sides (and which side opens a round), so drift in clock
  // speed or background load lands on both alike.
  std::vector<eb::Measurement> rounds;
  const double per_round = pair.min_run_time / pair.rounds;
  auto round = [&](eb::Timer& timer, const std::function<void()>& enter, const std::function<void()>& stmt) {
    if (enter) {
      enter();
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(pair.settle);
      while (std::chrono::steady_clock::now() < until) stmt();
    }
    rounds.push_back(timer.blocked_autorange(per_round));
  };
  for (int r = 0; r < pair.rounds; ++r) {
    const bool ember_first = !base_timer || r % 2 == 0;
    if (ember_first) round(ember_timer, pair.ember_enter, pair.ember);
    if (base_timer) round(*base_timer, pair.baseline_enter, pair.baseline);
    if (!ember_first) round(ember_timer, pair.ember_enter, pair.ember);
  }

  Outcome out;
  for (eb::Measurement& m : eb::Measurement::merge(rounds)) {
    if (m.description() == "ember") {
      out.ember = m.median() * 1e6;
    } else {
      out.baseline = m.median() * 1e6;
    }
    out.measurements.push_back(std::move(m));
  }
  auto add_rates = [&](double amount, const char* unit, double limit, const char* limit_name) {
    if (amount <= 0) return;
    out.notes.push_back(rate_note("ember", amount, out.ember, unit, limit, limit_name));
    if (out.baseline) out.notes.push_back(rate_note(base_name, amount, *out.baseline, unit, limit, limit_name));
  };
  add_rates(pair.bytes, "GB/s", ctx.limits.triad_gbps, "triad");
  add_rates(pair.flops, "GFLOP/s", ctx.limits.fma_gflops, "FMA peak");
  return out;
}

}  // namespace bench
