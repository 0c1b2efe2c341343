// Measurement statistics and printed form, following torch.utils.benchmark.Measurement.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "ember/benchmark.h"

namespace ember::benchmark {
namespace {

// torch.quantile's default: linear interpolation between the two nearest order statistics.
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = static_cast<size_t>(std::ceil(pos));
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

constexpr double kIqrWarnThreshold = 0.1;
constexpr double kIqrGrossWarnThreshold = 0.25;
constexpr double kMinConfidenceInterval = 25e-9;  // seconds; timer resolution makes finer claims dubious
constexpr int kMaxSignificantFigures = 4;

}  // namespace

std::string TaskSpec::title() const {
  if (label.empty()) return sub_label;
  return sub_label.empty() ? label : label + ": " + sub_label;
}

std::string TaskSpec::summarize() const {
  std::string t = title();
  if (t.empty()) return description;
  return description.empty() ? t : t + "\n" + description;
}

Measurement::Measurement(int64_t number_per_run, std::vector<double> raw_times, TaskSpec task_spec)
    : number_per_run_(number_per_run), raw_times_(std::move(raw_times)), spec_(std::move(task_spec)) {
  EMBER_CHECK(number_per_run_ >= 1, "Measurement", "number_per_run must be at least 1, got ", number_per_run_);
  EMBER_CHECK(!raw_times_.empty(), "Measurement", "expected at least one time, got none");
  for (size_t i = 0; i < raw_times_.size(); ++i) {
    EMBER_CHECK(std::isfinite(raw_times_[i]) && raw_times_[i] > 0, "Measurement",
                "times must be positive and finite, got ", raw_times_[i], " s at index ", i,
                " (a clock that did not advance or went backwards?)");
  }
  sorted_times_ = times();
  std::sort(sorted_times_.begin(), sorted_times_.end());
  double total = 0;
  for (double t : sorted_times_) total += t;
  mean_ = total / static_cast<double>(sorted_times_.size());
  median_ = quantile(sorted_times_, 0.5);
  p25_ = quantile(sorted_times_, 0.25);
  p75_ = quantile(sorted_times_, 0.75);

  auto add_warning = [&](const char* msg) {
    warnings_.push_back("  WARNING: Interquartile range is " + fixed(iqr() / median_ * 100, 1) +
                        "% of the median measurement.\n           " + msg);
  };
  if (!meets_confidence(kIqrGrossWarnThreshold)) {
    add_warning("This suggests significant environmental influence.");
  } else if (!meets_confidence(kIqrWarnThreshold)) {
    add_warning("This could indicate system fluctuation.");
  }
}

std::vector<double> Measurement::times() const {
  std::vector<double> out;
  out.reserve(raw_times_.size());
  for (double t : raw_times_) out.push_back(t / static_cast<double>(number_per_run_));
  return out;
}

std::string Measurement::as_row_name() const { return spec_.sub_label.empty() ? "[Unknown]" : spec_.sub_label; }

int Measurement::significant_figures() const {
  // Only the interquartile points, to keep the tails' skew out of the estimate.
  const size_t n = sorted_times_.size();
  const size_t lower = n / 4;
  const size_t upper = static_cast<size_t>(std::ceil(3.0 * static_cast<double>(n) / 4.0));
  const size_t count = upper - lower;
  double mean = 0;
  for (size_t i = lower; i < upper; ++i) mean += sorted_times_[i];
  mean /= static_cast<double>(count);
  double var = 0;
  for (size_t i = lower; i < upper; ++i) var += (sorted_times_[i] - mean) * (sorted_times_[i] - mean);
  const double std = std::sqrt(var / static_cast<double>(count));
  // z = 1.645 stands in for t: n is not expected to be small.
  const double ci = std::max(1.645 * std / std::sqrt(static_cast<double>(count)), kMinConfidenceInterval);
  const int figures = static_cast<int>(std::floor(std::log10(median_ / ci)));
  return std::clamp(figures, 1, kMaxSignificantFigures);
}

std::vector<Measurement> Measurement::merge(const std::vector<Measurement>& measurements) {
  std::vector<TaskSpec> specs;
  std::vector<std::vector<double>> times;
  for (const Measurement& m : measurements) {
    auto it = std::find(specs.begin(), specs.end(), m.task_spec());
    if (it == specs.end()) {
      specs.push_back(m.task_spec());
      times.emplace_back();
      it = specs.end() - 1;
    }
    // Block sizes may differ between measurements, so merge per-call times.
    const std::vector<double> t = m.times();
    auto& dst = times[static_cast<size_t>(it - specs.begin())];
    dst.insert(dst.end(), t.begin(), t.end());
  }
  std::vector<Measurement> out;
  for (size_t i = 0; i < specs.size(); ++i) out.emplace_back(1, std::move(times[i]), specs[i]);
  return out;
}

TimeUnit select_unit(double seconds) {
  // torch picks the unit from floor(log10(t) / 3); times under 1 ns stay in ns here.
  const double e = std::floor(std::log10(seconds) / 3);
  if (e <= -3) return {"ns", 1e-9};
  if (e == -2) return {"us", 1e-6};
  if (e == -1) return {"ms", 1e-3};
  return {"s", 1.0};
}

double trim_sigfig(double x, int n) {
  if (x == 0 || !std::isfinite(x)) return x;
  const int magnitude = static_cast<int>(std::ceil(std::log10(std::fabs(x))));
  const double scale = std::pow(10.0, magnitude - n);
  return std::nearbyint(x / scale) * scale;  // round half to even, as torch.round
}

std::string Measurement::str() const {
  std::ostringstream os;
  const size_t n = sorted_times_.size();
  const TimeUnit u = select_unit(median_);
  const std::string unit = std::string(" ") + u.name;
  const std::string summary = spec_.summarize();
  if (!summary.empty()) os << summary << "\n";
  os << "  " << (n > 1 ? "Median: " : "") << fixed(median_ / u.scale, 2) << unit << "\n";
  if (n >= 4) {
    os << "  IQR:    " << fixed(iqr() / u.scale, 2) << unit << " (" << fixed(p25_ / u.scale, 2) << " to "
       << fixed(p75_ / u.scale, 2) << ")\n";
  }
  os << "  " << n << " measurement" << (n > 1 ? "s" : "") << ", " << number_per_run_ << " runs"
     << (n > 1 ? " per measurement" : "") << ", " << spec_.num_threads << " thread"
     << (spec_.num_threads > 1 ? "s" : "");
  for (const std::string& w : warnings_) os << "\n" << w;
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Measurement& m) { return os << m.str(); }

}  // namespace ember::benchmark
