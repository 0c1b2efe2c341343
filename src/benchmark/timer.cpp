// Timer: blocks of calls timed with an injectable clock, following torch.utils.benchmark.Timer.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>

#include "ember/benchmark.h"
#include "ember/parallel.h"

namespace ember::benchmark {
namespace {

// Sets Ember's thread count for the runs and restores the caller's afterwards, even on a throw.
class ThreadsGuard {
 public:
  explicit ThreadsGuard(int n) : saved_(get_num_threads()) { set_num_threads(n); }
  ~ThreadsGuard() { set_num_threads(saved_); }
  ThreadsGuard(const ThreadsGuard&) = delete;
  ThreadsGuard& operator=(const ThreadsGuard&) = delete;

 private:
  int saved_;
};

}  // namespace

double default_clock() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Timer::Timer(std::function<void()> stmt, std::function<void()> setup, TimerOptions options)
    : stmt_(std::move(stmt)),
      setup_(std::move(setup)),
      spec_{std::move(options.label), std::move(options.sub_label), std::move(options.description),
            std::move(options.env), options.num_threads},
      clock_(options.clock ? std::move(options.clock) : Clock(default_clock)) {
  EMBER_CHECK(static_cast<bool>(stmt_), "Timer", "expected a statement to time, got an empty function");
  EMBER_CHECK(spec_.num_threads > 0, "Timer", "num_threads must be positive, got ", spec_.num_threads);
}

double Timer::time_block(int64_t number) {
  double elapsed = 0;
  try {
    if (setup_) setup_();
    const double start = clock_();
    for (int64_t i = 0; i < number; ++i) stmt_();
    elapsed = clock_() - start;
  } catch (const std::exception& e) {
    throw Error(std::string("Timer: the statement or its setup threw: ") + e.what() +
                (spec_.title().empty() ? "" : " (while timing " + spec_.title() + ")"));
  } catch (...) {
    throw Error("Timer: the statement or its setup threw a non-standard exception" +
                (spec_.title().empty() ? std::string() : " (while timing " + spec_.title() + ")"));
  }
  // Zero is only plausible for an empty block (overhead below the clock's resolution).
  EMBER_CHECK(std::isfinite(elapsed) && (elapsed > 0 || (elapsed == 0 && number == 0)), "Timer",
              "measured a non-positive time (", elapsed, " s for ", number,
              " runs): the clock did not advance or went backwards");
  return elapsed;
}

Measurement Timer::timeit(int64_t number) { return repeat(1, number); }

Measurement Timer::repeat(int64_t repeat, int64_t number) {
  EMBER_CHECK(repeat >= 1 && number >= 1, "Timer.repeat", "repeat and number must be at least 1, got repeat=",
              repeat, ", number=", number);
  ThreadsGuard threads(spec_.num_threads);
  std::vector<double> times;
  for (int64_t i = 0; i < repeat; ++i) times.push_back(time_block(number));
  return Measurement(number, std::move(times), spec_);
}

int64_t Timer::estimate_block_size(double min_run_time) {
  // Timer overhead from empty blocks; the median of five also serves as a warm-up.
  std::vector<double> empty;
  for (int i = 0; i < 5; ++i) empty.push_back(time_block(0));
  std::nth_element(empty.begin(), empty.begin() + 2, empty.end());
  const double overhead = empty[2];
  int64_t number = 1;
  while (true) {
    const double taken = time_block(number);
    // Overhead below 0.01% and a block long enough to time: done.
    if (overhead / taken <= 1e-4 && taken >= min_run_time / 1000) break;
    if (taken > min_run_time) break;
    if (number > std::numeric_limits<int32_t>::max() / 10) break;  // torch's cap
    number *= 10;
  }
  return number;
}

std::vector<double> Timer::measurement_loop(int64_t number, double min_run_time, std::optional<double> max_run_time,
                                            const std::function<bool(const std::vector<double>&)>& can_stop) {
  std::vector<double> times;
  double total = 0;
  bool stop = false;
  while (total < min_run_time || !stop) {
    const double t = time_block(number);
    times.push_back(t);
    total += t;
    stop = can_stop(times);
    if (max_run_time && total > *max_run_time) break;
  }
  return times;
}

Measurement Timer::blocked_autorange(double min_run_time) {
  EMBER_CHECK(min_run_time > 0, "Timer.blocked_autorange", "min_run_time must be positive, got ", min_run_time);
  ThreadsGuard threads(spec_.num_threads);
  const int64_t number = estimate_block_size(min_run_time);
  std::vector<double> times = measurement_loop(number, min_run_time, std::nullopt, [](const auto&) { return true; });
  return Measurement(number, std::move(times), spec_);
}

Measurement Timer::adaptive_autorange(double threshold, double min_run_time, double max_run_time) {
  EMBER_CHECK(threshold > 0 && min_run_time > 0 && max_run_time >= min_run_time, "Timer.adaptive_autorange",
              "expected threshold > 0 and 0 < min_run_time <= max_run_time, got threshold=", threshold,
              ", min_run_time=", min_run_time, ", max_run_time=", max_run_time);
  ThreadsGuard threads(spec_.num_threads);
  const int64_t number = estimate_block_size(0.05);
  std::vector<double> times = measurement_loop(number, min_run_time, max_run_time, [&](const std::vector<double>& t) {
    // Quartiles of fewer than four blocks say little.
    return t.size() > 3 && Measurement(number, t, spec_).meets_confidence(threshold);
  });
  return Measurement(number, std::move(times), spec_);
}

}  // namespace ember::benchmark
