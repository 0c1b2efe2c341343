// ember::benchmark: Timer's block-size search and stopping rules (with a fake clock, so every
// figure is exact), Measurement's statistics and printed form, Compare's table, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "ember/benchmark.h"
#include "ember/parallel.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace eb = ember::benchmark;

namespace {

// Time only moves when the statement says so (plus an optional cost per clock read), and
// binary fractions of a second keep every sum exact.
struct FakeTime {
  double now = 0;
  double read_cost = 0;
  eb::Clock clock() {
    return [this] {
      now += read_cost;
      return now;
    };
  }
};

eb::TimerOptions with_clock(FakeTime& t) {
  eb::TimerOptions o;
  o.clock = t.clock();
  return o;
}

eb::TaskSpec spec(std::string label, std::string sub_label, std::string description, int threads = 1,
                  std::string env = "") {
  return eb::TaskSpec{std::move(label), std::move(sub_label), std::move(description), std::move(env), threads};
}

// A Measurement whose per-call times are exactly `times`.
eb::Measurement per_call(std::vector<double> times, eb::TaskSpec s = {}) {
  return eb::Measurement(1, std::move(times), std::move(s));
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ember::Error& e) {
    return e.what();
  }
  return "<no ember::Error>";
}

constexpr double kMs = 1.0 / 1024;  // about a millisecond, exact in binary

}  // namespace

TEST(Timer, TimeitTimesOneBlockWithSetupOutside) {
  FakeTime t;
  int setups = 0, calls = 0;
  eb::Timer timer([&] { t.now += 2 * kMs, ++calls; }, [&] { t.now += 100, ++setups; }, with_clock(t));
  eb::Measurement m = timer.timeit(8);
  EXPECT_EQ(setups, 1);
  EXPECT_EQ(calls, 8);
  EXPECT_EQ(m.number_per_run(), 8);
  ASSERT_EQ(m.raw_times().size(), 1u);
  EXPECT_EQ(m.raw_times()[0], 16 * kMs);
  EXPECT_EQ(m.median(), 2 * kMs);
}

TEST(Timer, RepeatRunsSetupPerBlock) {
  FakeTime t;
  int setups = 0;
  double cost = kMs;
  eb::Timer timer([&] { t.now += cost; }, [&] { ++setups, cost *= 2; }, with_clock(t));
  eb::Measurement m = timer.repeat(3, 4);
  EXPECT_EQ(setups, 3);
  EXPECT_EQ(m.raw_times(), (std::vector<double>{8 * kMs, 16 * kMs, 32 * kMs}));
  EXPECT_EQ(m.times(), (std::vector<double>{2 * kMs, 4 * kMs, 8 * kMs}));
  EXPECT_EQ(m.median(), 4 * kMs);
}

TEST(Timer, BlockedAutorangeGrowsBlockUntilOverheadIsNegligible) {
  // Each clock read costs 2^-20 s and a call 2^-14 s: blocks of 1, 10 and 100 calls carry more
  // than 0.01% overhead, 1000 calls do not.
  FakeTime t;
  t.read_cost = 1.0 / (1 << 20);
  eb::Timer timer([&] { t.now += 1.0 / (1 << 14); }, {}, with_clock(t));
  eb::Measurement m = timer.blocked_autorange(1.0);
  EXPECT_EQ(m.number_per_run(), 1000);
  const double block = 1000.0 / (1 << 14) + 1.0 / (1 << 20);
  // Blocks run until 1 s has been spent: ceil(1 / 0.061 s) = 17 blocks.
  EXPECT_EQ(m.raw_times().size(), 17u);
  for (double r : m.raw_times()) EXPECT_DOUBLE_EQ(r, block);
  EXPECT_DOUBLE_EQ(m.median(), block / 1000);
}

TEST(Timer, BlockedAutorangeStopsGrowingOnceABlockExceedsMinRunTime) {
  FakeTime t;
  t.read_cost = 1.0 / 1024;  // overhead never becomes negligible against 1/8 s calls
  eb::Timer timer([&] { t.now += 0.125; }, {}, with_clock(t));
  eb::Measurement m = timer.blocked_autorange(0.5);
  EXPECT_EQ(m.number_per_run(), 10);  // 1 call (0.126 s) is under 0.5 s, 10 calls are over
  EXPECT_EQ(m.raw_times().size(), 1u);
}

TEST(Timer, BlockedAutorangeRunsUntilMinRunTime) {
  FakeTime t;
  eb::Timer timer([&] { t.now += kMs; }, {}, with_clock(t));
  eb::Measurement m = timer.blocked_autorange(0.25);
  EXPECT_EQ(m.number_per_run(), 1);  // zero overhead, and 1/1024 s >= 0.25 s / 1000
  EXPECT_EQ(m.raw_times().size(), 256u);
}

TEST(Timer, AdaptiveAutorangeStopsWhenIqrIsSmall) {
  FakeTime t;
  eb::Timer timer([&] { t.now += kMs; }, {}, with_clock(t));
  // Constant times meet any threshold after four blocks; min_run_time 0.01 s needs 11 blocks.
  eb::Measurement m = timer.adaptive_autorange(0.1, 0.01, 10.0);
  EXPECT_EQ(m.number_per_run(), 1);
  EXPECT_EQ(m.raw_times().size(), 11u);
}

TEST(Timer, AdaptiveAutorangeKeepsGoingWhileNoisyUntilMaxRunTime) {
  FakeTime t;
  int i = 0;
  // Alternating 1 and 3 "ms": IQR / median stays at 1, so only max_run_time ends the run.
  eb::Timer timer([&] { t.now += (i++ % 2 ? 3 : 1) * kMs; }, {}, with_clock(t));
  eb::Measurement m = timer.adaptive_autorange(0.1, 0.01, 0.25);
  double total = 0;
  for (double r : m.raw_times()) total += r;
  EXPECT_GT(total, 0.25);
  EXPECT_LE(total - m.raw_times().back(), 0.25);
  EXPECT_TRUE(m.has_warnings());
}

TEST(Timer, AdaptiveAutorangeStopsOnceNoiseSettles) {
  FakeTime t;
  int i = 0;
  // Noisy for 20 blocks, then steady: stops once the steady blocks dominate the quartiles.
  eb::Timer timer([&] { t.now += (i < 20 ? (i % 2 ? 3 : 1) : 2) * kMs, ++i; }, {}, with_clock(t));
  eb::Measurement m = timer.adaptive_autorange(0.1, 0.01, 10.0);
  EXPECT_TRUE(m.meets_confidence(0.1));
  EXPECT_LT(m.raw_times().size(), 100u);
  EXPECT_GT(m.raw_times().size(), 20u);
}

TEST(Timer, SetsAndRestoresThreadCount) {
  const int before = ember::get_num_threads();
  FakeTime t;
  eb::TimerOptions o = with_clock(t);
  o.num_threads = before + 1;
  int seen = 0;
  eb::Timer timer([&] { seen = ember::get_num_threads(), t.now += kMs; }, {}, o);
  eb::Measurement m = timer.timeit(1);
  EXPECT_EQ(seen, before + 1);
  EXPECT_EQ(m.num_threads(), before + 1);
  EXPECT_EQ(ember::get_num_threads(), before);
}

TEST(Timer, RealClockMeasuresSomething) {
  volatile double sink = 0;
  eb::Timer timer([&] {
    for (int i = 0; i < 100; ++i) sink = sink + i;
  });
  eb::Measurement m = timer.blocked_autorange(0.01);
  EXPECT_GT(m.median(), 0);
  EXPECT_GE(m.number_per_run(), 1);
}

TEST(Timer, ThrowingStatementGivesErrorAndRestoresThreads) {
  const int before = ember::get_num_threads();
  FakeTime t;
  eb::TimerOptions o = with_clock(t);
  o.num_threads = before + 1;
  o.label = "add";
  o.sub_label = "small";
  eb::Timer timer([] { throw std::runtime_error("boom"); }, {}, o);
  const std::string msg = error_of([&] { timer.timeit(1); });
  EXPECT_NE(msg.find("Timer: the statement or its setup threw: boom"), std::string::npos) << msg;
  EXPECT_NE(msg.find("add: small"), std::string::npos) << msg;
  EXPECT_NE(error_of([&] { timer.blocked_autorange(0.1); }).find("boom"), std::string::npos);
  EXPECT_NE(error_of([&] { timer.adaptive_autorange(); }).find("boom"), std::string::npos);
  EXPECT_EQ(ember::get_num_threads(), before);

  eb::Timer bad_setup([&] { t.now += kMs; }, [] { throw 42; }, with_clock(t));
  EXPECT_NE(error_of([&] { bad_setup.timeit(1); }).find("non-standard exception"), std::string::npos);
}

TEST(Timer, ClockThatDoesNotAdvanceOrGoesBackIsAnError) {
  FakeTime t;
  eb::Timer still([] {}, {}, with_clock(t));
  EXPECT_NE(error_of([&] { still.timeit(5); }).find("measured a non-positive time (0 s for 5 runs)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { still.blocked_autorange(0.1); }).find("non-positive"), std::string::npos);
  eb::Timer back([&] { t.now -= 1; }, {}, with_clock(t));
  EXPECT_NE(error_of([&] { back.timeit(1); }).find("went backwards"), std::string::npos);
}

TEST(Timer, BadArgumentsAreErrors) {
  FakeTime t;
  eb::Timer timer([&] { t.now += kMs; }, {}, with_clock(t));
  EXPECT_NE(error_of([&] { timer.timeit(0); }).find("Timer.repeat: repeat and number must be at least 1"),
            std::string::npos);
  EXPECT_NE(error_of([&] { timer.repeat(0, 1); }).find("repeat=0"), std::string::npos);
  EXPECT_NE(error_of([&] { timer.blocked_autorange(0); }).find("min_run_time must be positive, got 0"),
            std::string::npos);
  EXPECT_NE(error_of([&] { timer.adaptive_autorange(0.1, 1, 0.5); }).find("max_run_time=0.5"), std::string::npos);
  EXPECT_NE(error_of([&] { timer.adaptive_autorange(-1); }).find("threshold=-1"), std::string::npos);
  EXPECT_NE(error_of([] { eb::Timer empty{std::function<void()>()}; }).find("empty function"), std::string::npos);
  eb::TimerOptions o;
  o.num_threads = 0;
  EXPECT_NE(error_of([&] { eb::Timer x([] {}, {}, o); }).find("num_threads must be positive, got 0"),
            std::string::npos);
}

TEST(Measurement, Statistics) {
  // Per-call times 1..4 ms from blocks of two calls; quantiles interpolate linearly.
  eb::Measurement m(2, {8e-3, 2e-3, 6e-3, 4e-3}, {});
  EXPECT_EQ(m.times(), (std::vector<double>{4e-3, 1e-3, 3e-3, 2e-3}));
  EXPECT_DOUBLE_EQ(m.mean(), 2.5e-3);
  EXPECT_DOUBLE_EQ(m.median(), 2.5e-3);
  EXPECT_DOUBLE_EQ(m.p25(), 1.75e-3);
  EXPECT_DOUBLE_EQ(m.p75(), 3.25e-3);
  EXPECT_DOUBLE_EQ(m.iqr(), 1.5e-3);
}

TEST(Measurement, WarningsFromIqrOverMedian) {
  EXPECT_FALSE(per_call({1.0, 1.0, 1.0, 1.0, 1.0}).has_warnings());
  // IQR / median = 0.1: system fluctuation.
  eb::Measurement mild = per_call({0.9, 0.95, 1.0, 1.05, 1.1});
  ASSERT_TRUE(mild.has_warnings());
  EXPECT_EQ(mild.warnings()[0],
            "  WARNING: Interquartile range is 10.0% of the median measurement.\n"
            "           This could indicate system fluctuation.");
  // IQR / median = 0.5: environmental influence.
  eb::Measurement gross = per_call({0.5, 0.75, 1.0, 1.25, 1.5});
  ASSERT_TRUE(gross.has_warnings());
  EXPECT_NE(gross.warnings()[0].find("50.0% of the median measurement.\n           This suggests significant "
                                     "environmental influence."),
            std::string::npos);
}

TEST(Measurement, SignificantFigures) {
  // No spread: the 25 ns floor on the interval decides. 1 ms / 25 ns = 40000 -> capped at 4.
  EXPECT_EQ(per_call({1e-3, 1e-3, 1e-3}).significant_figures(), 4);
  // 1.2 us / 25 ns = 48 -> 1 figure.
  EXPECT_EQ(per_call({1.2e-6, 1.2e-6}).significant_figures(), 1);
  // 100..107 us: interquartile points 102..105 us, std 1.118 us, interval 1.645 * 1.118 / 2 =
  // 0.92 us; 103.5 / 0.92 = 112.5 -> 2 figures.
  EXPECT_EQ(per_call({100e-6, 101e-6, 102e-6, 103e-6, 104e-6, 105e-6, 106e-6, 107e-6}).significant_figures(), 2);
  // Wide spread never gives fewer than one figure.
  EXPECT_EQ(per_call({1, 2, 3, 4, 5, 6, 7, 8}).significant_figures(), 1);
}

TEST(Measurement, PrintedForm) {
  eb::Measurement m(10, {1.5e-4, 1.5e-4, 1.5e-4, 1.5e-4}, spec("add", "small", "ember", 2));
  EXPECT_EQ(m.str(),
            "add: small\n"
            "ember\n"
            "  Median: 15.00 us\n"
            "  IQR:    0.00 us (15.00 to 15.00)\n"
            "  4 measurements, 10 runs per measurement, 2 threads");
  // One block: no "Median:" prefix, no IQR line.
  eb::Measurement one(1000, {2.5}, spec("", "", ""));
  EXPECT_EQ(one.str(), "  2.50 ms\n  1 measurement, 1000 runs, 1 thread");
  std::ostringstream os;
  os << per_call({0.5, 0.75, 1.0, 1.25, 1.5}, spec("x", "", ""));
  EXPECT_EQ(os.str(),
            "x\n  Median: 1.00 s\n  IQR:    0.50 s (0.75 to 1.25)\n  5 measurements, 1 runs per measurement, 1 "
            "thread\n  WARNING: Interquartile range is 50.0% of the median measurement.\n           This suggests "
            "significant environmental influence.");
}

TEST(Measurement, Units) {
  EXPECT_STREQ(eb::select_unit(3e-10).name, "ns");
  EXPECT_STREQ(eb::select_unit(5e-9).name, "ns");
  EXPECT_STREQ(eb::select_unit(999e-9).name, "ns");
  EXPECT_STREQ(eb::select_unit(2e-6).name, "us");
  EXPECT_STREQ(eb::select_unit(1.5e-3).name, "ms");
  EXPECT_STREQ(eb::select_unit(2.0).name, "s");
  EXPECT_STREQ(eb::select_unit(5000.0).name, "s");
  EXPECT_EQ(eb::select_unit(1.5e-3).scale, 1e-3);
  EXPECT_DOUBLE_EQ(eb::trim_sigfig(123.456, 2), 120);
  EXPECT_DOUBLE_EQ(eb::trim_sigfig(3.14159, 2), 3.1);
  EXPECT_DOUBLE_EQ(eb::trim_sigfig(0.0012345, 3), 0.00123);
  EXPECT_DOUBLE_EQ(eb::trim_sigfig(-2567, 2), -2600);
}

TEST(Measurement, Merge) {
  eb::Measurement a(10, {20e-3}, spec("l", "s", "d"));
  eb::Measurement b(1, {1e-3, 3e-3}, spec("l", "s", "d"));
  eb::Measurement c(1, {5e-3}, spec("l", "s", "other"));
  std::vector<eb::Measurement> merged = eb::Measurement::merge({a, c, b});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].description(), "d");
  EXPECT_EQ(merged[0].number_per_run(), 1);
  EXPECT_EQ(merged[0].raw_times(), (std::vector<double>{2e-3, 1e-3, 3e-3}));
  EXPECT_EQ(merged[1].raw_times(), (std::vector<double>{5e-3}));
}

TEST(Measurement, BadInputIsAnError) {
  EXPECT_EQ(error_of([] { per_call({1e-3, 0.0}); }),
            "Measurement: times must be positive and finite, got 0 s at index 1 (a clock that did not advance or "
            "went backwards?)");
  EXPECT_NE(error_of([] { per_call({-1e-3}); }).find("got -0.001 s at index 0"), std::string::npos);
  EXPECT_NE(error_of([] { per_call({INFINITY}); }).find("got inf s"), std::string::npos);
  EXPECT_EQ(error_of([] { per_call({}); }), "Measurement: expected at least one time, got none");
  EXPECT_EQ(error_of([] { eb::Measurement(0, {1.0}, {}); }), "Measurement: number_per_run must be at least 1, got 0");
}

namespace {
std::vector<eb::Measurement> add_table() {
  return {per_call({1.2e-6, 1.2e-6, 1.2e-6, 1.2e-6}, spec("add", "small", "ember")),
          per_call({4e-6, 4e-6, 4e-6, 4e-6}, spec("add", "small", "libtorch")),
          per_call({2.5e-3, 2.5e-3, 2.5e-3, 2.5e-3}, spec("add", "large", "ember")),
          per_call({2e-3, 2e-3, 2e-3, 2e-3}, spec("add", "large", "libtorch"))};
}
}  // namespace

TEST(Compare, TableLayout) {
  eb::Compare c(add_table());
  // Python's str.center puts the odd space on the right for even widths.
  EXPECT_EQ(c.str(),
            "[" + std::string(14, '-') + " add " + std::string(14, '-') + "]\n" +  //
                std::string(11, ' ') + "  |  ember   |  libtorch\n" +            //
                "1 threads: " + std::string(24, '-') + "\n" +                    //
                "      small  |     1.2  |      4.0 \n"
                "      large  |  2500.0  |   2000.0 \n"
                "\n"
                "Times are in microseconds (us).\n");
}

TEST(Compare, TrimSignificantFigures) {
  // Figures: 1.2 us -> 1, 4 us -> 2, the milliseconds -> 4; each column keeps the fewest decimals.
  eb::Compare c(add_table());
  c.trim_significant_figures();
  EXPECT_EQ(c.str(),
            "[" + std::string(13, '-') + " add " + std::string(14, '-') + "]\n" +  //
                std::string(11, ' ') + "  |  ember  |  libtorch\n" +             //
                "1 threads: " + std::string(23, '-') + "\n" +                    //
                "      small  |      1  |       4  \n"
                "      large  |   2500  |    2000  \n"
                "\n"
                "Times are in microseconds (us).\n");
}

TEST(Compare, MissingCellsGroupsAndEnvs) {
  eb::Compare c({per_call({3e-3}, spec("mm", "a", "ember", 1, "x")),
                 per_call({4e-3}, spec("mm", "b", "libtorch", 2, "y")),
                 per_call({1e-3}, spec("other", "c", "ember"))});
  const std::string s = c.str();
  // One table per label, in first-seen order, separated by a blank line; rows grouped by thread
  // count; with two envs each row shows its env; a missing cell is blank.
  const std::string mm = "[" + std::string(13, '-') + " mm " + std::string(12, '-') + "]\n" +
                         std::string(8, ' ') + "  |  ember  |  libtorch\n" +  //
                         "1 threads: " + std::string(20, '-') + "\n" +        //
                         "  (x)  a  |   3.0   |          \n" +               //
                         "2 threads: " + std::string(20, '-') + "\n" +        //
                         "  (y)  b  |         |    4.0   \n" +               //
                         "\nTimes are in milliseconds (ms).\n";
  EXPECT_EQ(s.substr(0, mm.size()), mm);
  EXPECT_EQ(s.substr(mm.size(), 2), "\n[");
  EXPECT_NE(s.find(" other "), std::string::npos);
}

TEST(Compare, HighlightWarnings) {
  std::vector<eb::Measurement> r = add_table();
  r[1] = per_call({2e-6, 2e-6, 4e-6, 4e-6}, spec("add", "small", "libtorch"));  // IQR / median = 67%
  eb::Compare c(r);
  EXPECT_EQ(c.str().find("(!"), std::string::npos);
  c.highlight_warnings();
  const std::string s = c.str();
  EXPECT_NE(s.find("   3.0 (! 67%)"), std::string::npos) << s;
  EXPECT_NE(s.find("2000.0       "), std::string::npos) << s;  // room kept in the noisy column
  EXPECT_NE(s.find("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"), std::string::npos);
}

TEST(Compare, ColorizeRelativeToRowBest) {
  eb::Compare c(add_table());
  c.colorize();
  EXPECT_EQ(c.str(false).find('\033'), std::string::npos);  // colours only when asked for
  const std::string s = c.str(true);
  // small: ember 1.2 is best (green, bold), libtorch 4.0 is >= 2x (dim red).
  EXPECT_NE(s.find("\033[92m\033[1m   1.2\033[0m\033[0m"), std::string::npos) << s;
  EXPECT_NE(s.find("\033[2m\033[91m    4.0 \033[0m\033[0m"), std::string::npos) << s;
  // large: libtorch 2000 is best; ember 2500 is 1.25x, uncoloured.
  EXPECT_NE(s.find("\033[92m\033[1m 2000.0 \033[0m\033[0m"), std::string::npos) << s;
  EXPECT_NE(s.find("|  2500.0  |"), std::string::npos) << s;

  // Columnwise: ember's best is small (1.2), so large (2500) is >= 5x: red.
  eb::Compare cols(add_table());
  cols.colorize(false);
  EXPECT_NE(cols.str(true).find("\033[31m\033[1m2500.0\033[0m\033[0m"), std::string::npos);
}

}  // namespace EMBER_UNITY_FILE
