// Benchmark utilities mirroring torch.utils.benchmark: Timer runs a statement in timed blocks,
// Measurement summarizes the per-run times, Compare prints several Measurements as a table.
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "ember/error.h"

namespace ember::benchmark {

// What a measurement is about (torch's TaskSpec without the statement source text).
struct TaskSpec {
  std::string label;        // table title in Compare
  std::string sub_label;    // row name in Compare
  std::string description;  // column name in Compare
  std::string env;          // shown beside the row name when a table mixes environments
  int num_threads = 1;

  std::string title() const;      // "label: sub_label"
  std::string summarize() const;  // title and description, one per line
  bool operator==(const TaskSpec&) const = default;
};

// Seconds from an arbitrary origin; must not go backwards. Injectable so tests can use a fake.
using Clock = std::function<double()>;
double default_clock();  // std::chrono::steady_clock

class Measurement {
 public:
  // raw_times[i] is the wall time of one block of number_per_run calls. Throws ember::Error when
  // a time is zero, negative or not finite, when there are no times or number_per_run < 1.
  Measurement(int64_t number_per_run, std::vector<double> raw_times, TaskSpec task_spec);

  int64_t number_per_run() const { return number_per_run_; }
  const std::vector<double>& raw_times() const { return raw_times_; }
  std::vector<double> times() const;  // per call: raw_times / number_per_run
  const TaskSpec& task_spec() const { return spec_; }
  const std::string& label() const { return spec_.label; }
  const std::string& sub_label() const { return spec_.sub_label; }
  const std::string& description() const { return spec_.description; }
  const std::string& env() const { return spec_.env; }
  int num_threads() const { return spec_.num_threads; }
  std::string as_row_name() const;  // sub_label, or "[Unknown]"

  // Per-call statistics in seconds; quantiles interpolate linearly as torch.quantile does.
  double mean() const { return mean_; }
  double median() const { return median_; }
  double iqr() const { return p75_ - p25_; }
  double p25() const { return p25_; }
  double p75() const { return p75_; }

  bool meets_confidence(double threshold = 0.1) const { return iqr() / median() < threshold; }
  // Set when IQR / median >= 0.1 (>= 0.25 is called significant environmental influence).
  bool has_warnings() const { return !warnings_.empty(); }
  const std::vector<std::string>& warnings() const { return warnings_; }
  // Figures of the median worth showing, from a rough confidence interval of the interquartile
  // points (z = 1.645, interval at least 25 ns); between 1 and 4.
  int significant_figures() const;

  // Measurements with equal TaskSpecs become one, with all their per-call times (number_per_run 1).
  static std::vector<Measurement> merge(const std::vector<Measurement>& measurements);

  std::string str() const;  // the printed form (see operator<<)

 private:
  int64_t number_per_run_;
  std::vector<double> raw_times_;
  TaskSpec spec_;
  std::vector<double> sorted_times_;  // per call
  double mean_ = 0, median_ = 0, p25_ = 0, p75_ = 0;
  std::vector<std::string> warnings_;
};

// Median in adaptive units, then the IQR, counts and any warning:
//   add_16m_f32: ember
//     Median: 9.51 ms
//     IQR:    0.12 ms (9.45 to 9.57)
//     50 measurements, 1 runs per measurement, 2 threads
std::ostream& operator<<(std::ostream& os, const Measurement& m);

// The unit torch prints a time in ("ns", "us", "ms" or "s") and its scale in seconds.
struct TimeUnit {
  const char* name;
  double scale;
};
TimeUnit select_unit(double seconds);
// x rounded to n significant figures.
double trim_sigfig(double x, int n);

struct TimerOptions {
  int num_threads = 1;  // ember::set_num_threads for the runs, restored afterwards
  std::string label, sub_label, description, env;
  Clock clock;  // default_clock when empty
};

class Timer {
 public:
  // setup runs once before each timed block, outside the timed region.
  explicit Timer(std::function<void()> stmt, std::function<void()> setup = {}, TimerOptions options = {});

  // One block of `number` calls.
  Measurement timeit(int64_t number = 1000000);
  // `repeat` blocks of `number` calls each.
  Measurement repeat(int64_t repeat = 5, int64_t number = 1000000);
  // Picks a block size (powers of 10) whose time dwarfs the timer overhead, then runs blocks
  // until min_run_time seconds have been spent.
  Measurement blocked_autorange(double min_run_time = 0.2);
  // Like blocked_autorange (block size from a 0.05 s search), but keeps running blocks until
  // IQR / median < threshold and min_run_time has passed, or max_run_time is exceeded.
  Measurement adaptive_autorange(double threshold = 0.1, double min_run_time = 0.01, double max_run_time = 10.0);

  const TaskSpec& task_spec() const { return spec_; }

 private:
  double time_block(int64_t number);  // seconds for `number` calls, setup excluded
  int64_t estimate_block_size(double min_run_time);
  std::vector<double> measurement_loop(int64_t number, double min_run_time, std::optional<double> max_run_time,
                                       const std::function<bool(const std::vector<double>&)>& can_stop);

  std::function<void()> stmt_, setup_;
  TaskSpec spec_;
  Clock clock_;
};

// Tables of Measurements: one block per label, rows by sub_label (grouped by thread count),
// columns by description, every time in one unit.
class Compare {
 public:
  explicit Compare(std::vector<Measurement> results = {});
  void extend_results(const std::vector<Measurement>& results);
  // Show only the significant figures each Measurement supports.
  void trim_significant_figures() { trim_significant_figures_ = true; }
  // Colour each cell relative to the best (lowest) time of its row, or of its column when
  // rowwise is false: green within 1%, blue within 10%, dim red at 2x, red at 5x or worse.
  void colorize(bool rowwise = true) { colorize_ = rowwise ? Colorize::Rowwise : Colorize::Columnwise; }
  // Mark cells whose IQR / median is large with "(! XX%)".
  void highlight_warnings() { highlight_warnings_ = true; }

  // The tables; with use_colour false the colorize() setting is ignored.
  std::string str(bool use_colour = false) const;
  // Writes str() to stdout, coloured only when colorize() was called and stdout is a terminal.
  void print() const;

 private:
  enum class Colorize { None, Rowwise, Columnwise };
  std::string render_table(const std::vector<Measurement>& results, bool use_colour) const;

  std::vector<Measurement> results_;
  bool trim_significant_figures_ = false;
  bool highlight_warnings_ = false;
  Colorize colorize_ = Colorize::None;
};

}  // namespace ember::benchmark
