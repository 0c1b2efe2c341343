// Compare: Measurements laid out as torch.utils.benchmark.Compare lays them out.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <tuple>

#include "ember/benchmark.h"

namespace ember::benchmark {
namespace {

const char* const kBest = "\033[92m";
const char* const kGood = "\033[34m";
const char* const kBad = "\033[2m\033[91m";
const char* const kVeryBad = "\033[31m";
const char* const kBold = "\033[1m";
const char* const kTerminate = "\033[0m";

// Python's str.center: the odd space goes left only when both the margin and width are odd.
std::string center(const std::string& s, size_t width, char fill = ' ') {
  if (s.size() >= width) return s;
  const size_t margin = width - s.size();
  const size_t left = margin / 2 + (margin & width & 1);
  return std::string(left, fill) + s + std::string(margin - left, fill);
}
std::string ljust(const std::string& s, size_t width, char fill = ' ') {
  return s.size() >= width ? s : s + std::string(width - s.size(), fill);
}
std::string rjust(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string unit_to_english(const std::string& u) {
  if (u == "ns") return "nanosecond";
  if (u == "us") return "microsecond";
  if (u == "ms") return "millisecond";
  return "second";
}

using Cell = const Measurement*;  // null where a row has no result for a column

// How one column prints its numbers: a fixed number of decimals for the whole column.
class Column {
 public:
  Column(std::vector<Cell> cells, double scale, bool trim, bool highlight) : scale_(scale), trim_(trim) {
    highlight_ = highlight && std::any_of(cells.begin(), cells.end(), [](Cell m) { return m && m->has_warnings(); });
    int unit_digits = std::numeric_limits<int>::min();
    int min_decimals = std::numeric_limits<int>::max();
    for (Cell m : cells) {
      if (!m) continue;
      const int leading = static_cast<int>(std::ceil(std::log10(m->median() / scale_)));
      unit_digits = std::max(unit_digits, leading);
      min_decimals = std::min(min_decimals, std::max(m->significant_figures() - leading, 0));
    }
    decimals_ = trim_ ? min_decimals : 1;
    width_ = std::max(unit_digits, 0) + decimals_ + (decimals_ ? 1 : 0);
  }

  std::string num_to_str(Cell m) const {
    if (!m) return std::string(format(1.0, 1, std::nullopt).size(), ' ');
    std::optional<double> spread;
    if (m->has_warnings()) spread = m->iqr() / m->median();
    return format(m->median() / scale_, m->significant_figures(), spread);
  }

 private:
  std::string format(double value, int sigfigs, std::optional<double> spread) const {
    if (trim_) value = trim_sigfig(value, sigfigs);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%*.*f", width_, decimals_, value);
    if (!highlight_) return buf;
    // A column with any noisy cell reserves room for the note in every cell.
    const std::string note =
        spread ? " (! " + std::to_string(static_cast<long long>(std::nearbyint(*spread * 100))) + "%)" : "";
    return buf + rjust(note, 7);
  }

  double scale_;
  bool trim_;
  bool highlight_ = false;
  int decimals_ = 1;
  int width_ = 0;
};

std::string color_segment(const std::string& segment, double value, double best) {
  const std::string end = std::string(kTerminate) + kTerminate;
  if (value <= best * 1.01 || value <= best + 100e-9) return kBest + std::string(kBold) + segment + end;
  if (value <= best * 1.1) return kGood + std::string(kBold) + segment + end;
  if (value >= best * 5) return kVeryBad + std::string(kBold) + segment + end;
  if (value >= best * 2) return kBad + segment + end;
  return segment;
}

}  // namespace

Compare::Compare(std::vector<Measurement> results) : results_(std::move(results)) {}

void Compare::extend_results(const std::vector<Measurement>& results) {
  results_.insert(results_.end(), results.begin(), results.end());
}

std::string Compare::render_table(const std::vector<Measurement>& results, bool use_colour) const {
  const TimeUnit unit = select_unit(
      std::min_element(results.begin(), results.end(), [](const auto& a, const auto& b) {
        return a.median() < b.median();
      })->median());

  // Rows keyed by (threads, env, row name) in first-seen order, then grouped by threads and env;
  // columns keyed by description in first-seen order.
  using RowKey = std::tuple<int, std::string, std::string>;
  std::vector<RowKey> row_keys;
  std::vector<std::string> col_keys;
  for (const Measurement& m : results) {
    RowKey k{m.num_threads(), m.env(), m.as_row_name()};
    if (std::find(row_keys.begin(), row_keys.end(), k) == row_keys.end()) row_keys.push_back(k);
    if (std::find(col_keys.begin(), col_keys.end(), m.description()) == col_keys.end())
      col_keys.push_back(m.description());
  }
  std::stable_sort(row_keys.begin(), row_keys.end(), [](const RowKey& a, const RowKey& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  std::vector<std::vector<Cell>> cells(row_keys.size(), std::vector<Cell>(col_keys.size(), nullptr));
  for (const Measurement& m : results) {
    const RowKey k{m.num_threads(), m.env(), m.as_row_name()};
    const size_t i = static_cast<size_t>(std::find(row_keys.begin(), row_keys.end(), k) - row_keys.begin());
    const size_t j =
        static_cast<size_t>(std::find(col_keys.begin(), col_keys.end(), m.description()) - col_keys.begin());
    cells[i][j] = &m;
  }

  std::vector<std::string> envs;
  for (const Measurement& m : results)
    if (std::find(envs.begin(), envs.end(), m.env()) == envs.end()) envs.push_back(m.env());
  const bool render_env = envs.size() > 1;
  size_t env_len = 0;
  if (render_env)
    for (const auto& e : envs) env_len = std::max(env_len, e.size());

  // Thread groups: a separator line opens each; column colouring compares within a group.
  std::vector<int> group_of(row_keys.size());
  std::vector<bool> opens_group(row_keys.size());
  std::vector<bool> shows_env(row_keys.size());
  {
    int prior_threads = -1, group = -1;
    std::string prior_env;
    for (size_t i = 0; i < row_keys.size(); ++i) {
      const auto& [threads, env, name] = row_keys[i];
      opens_group[i] = threads != prior_threads;
      if (opens_group[i]) {
        prior_threads = threads;
        prior_env.clear();
        ++group;
      }
      group_of[i] = group;
      shows_env[i] = render_env && env != prior_env;
      prior_env = env;
    }
  }

  std::vector<Column> columns;
  for (size_t j = 0; j < col_keys.size(); ++j) {
    std::vector<Cell> col;
    for (const auto& row : cells) col.push_back(row[j]);
    columns.emplace_back(col, unit.scale, trim_significant_figures_, highlight_warnings_);
  }

  std::vector<std::vector<std::string>> strings;
  strings.push_back({""});
  strings[0].insert(strings[0].end(), col_keys.begin(), col_keys.end());
  for (size_t i = 0; i < row_keys.size(); ++i) {
    const std::string env = shows_env[i] ? "(" + std::get<1>(row_keys[i]) + ")" : "";
    std::vector<std::string> row{"  " + ljust(env, env_len + 4) + std::get<2>(row_keys[i])};
    for (size_t j = 0; j < col_keys.size(); ++j) row.push_back(columns[j].num_to_str(cells[i][j]));
    strings.push_back(row);
  }
  std::vector<size_t> widths(col_keys.size() + 1, 0);
  for (const auto& row : strings)
    for (size_t j = 0; j < row.size(); ++j) widths[j] = std::max(widths[j], row[j].size());

  auto join = [](const std::vector<std::string>& parts) {
    std::string out;
    for (size_t j = 0; j < parts.size(); ++j) out += (j ? "  |  " : "") + parts[j];
    return out;
  };
  std::vector<std::string> header;
  for (size_t j = 0; j < strings[0].size(); ++j) header.push_back(center(strings[0][j], widths[j]));
  std::vector<std::string> lines{join(header)};
  const size_t overall_width = lines[0].size();

  for (size_t i = 0; i < row_keys.size(); ++i) {
    if (opens_group[i]) lines.push_back(ljust(std::to_string(std::get<0>(row_keys[i])) + " threads: ", overall_width, '-'));
    std::vector<std::optional<double>> best(col_keys.size());
    if (colorize_ == Colorize::Rowwise) {
      double row_min = INFINITY;
      for (Cell m : cells[i])
        if (m) row_min = std::min(row_min, m->median());
      std::fill(best.begin(), best.end(), row_min);
    } else if (colorize_ == Colorize::Columnwise) {
      for (size_t j = 0; j < col_keys.size(); ++j)
        for (size_t r = 0; r < row_keys.size(); ++r)
          if (group_of[r] == group_of[i] && cells[r][j])
            best[j] = std::min(best[j].value_or(INFINITY), cells[r][j]->median());
    }
    std::vector<std::string> parts{ljust(strings[i + 1][0], widths[0])};
    for (size_t j = 0; j < col_keys.size(); ++j) {
      std::string s = center(strings[i + 1][j + 1], widths[j + 1]);
      if (use_colour && colorize_ != Colorize::None && cells[i][j] && best[j]) {
        s = color_segment(s, cells[i][j]->median(), *best[j]);
      }
      parts.push_back(s);
    }
    lines.push_back(join(parts));
  }

  const bool warned = highlight_warnings_ && std::any_of(results.begin(), results.end(),
                                                         [](const Measurement& m) { return m.has_warnings(); });
  std::ostringstream os;
  const std::string label = results.front().label();
  os << "[" << center(" " + label + " ", overall_width - 2, '-') << "]\n";
  for (const auto& l : lines) os << l << "\n";
  os << "\nTimes are in " << unit_to_english(unit.name) << "s (" << unit.name << ").\n";
  if (warned) os << "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n";
  return os.str();
}

std::string Compare::str(bool use_colour) const {
  const std::vector<Measurement> merged = Measurement::merge(results_);
  std::vector<std::string> labels;
  for (const Measurement& m : merged)
    if (std::find(labels.begin(), labels.end(), m.label()) == labels.end()) labels.push_back(m.label());
  std::string out;
  for (size_t i = 0; i < labels.size(); ++i) {
    std::vector<Measurement> group;
    for (const Measurement& m : merged)
      if (m.label() == labels[i]) group.push_back(m);
    if (i) out += "\n";
    out += render_table(group, use_colour);
  }
  return out;
}

void Compare::print() const {
  std::cout << str(colorize_ != Colorize::None && isatty(STDOUT_FILENO)) << std::endl;
}

}  // namespace ember::benchmark
