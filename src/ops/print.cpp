// Printing in libtorch's C++ format, so that output matches a libtorch program's: one format per
// tensor (or per matrix slice) chosen from the magnitudes of its finite values: integers,
// fixed with 4 decimals, fixed with a common scale ("1e+06 *"), or scientific; matrices wider
// than 80 characters split into "Columns a to b" blocks; then "[ CPUFloatType{2,3} ]".
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>

#include "core/value_read.h"
#include "ember/tensor.h"

namespace ember {
namespace {

constexpr int64_t kLineSize = 80;

struct Format {
  double scale = 1;
  int64_t width = 0;
};

Format choose_format(std::ostream& os, const double* v, int64_t n) {
  if (n == 0) return {1, 0};
  bool int_mode = true;
  for (int64_t i = 0; i < n; ++i)
    if (std::isfinite(v[i]) && v[i] != std::ceil(v[i])) {
      int_mode = false;
      break;
    }
  int64_t first = 0;
  while (first < n && !std::isfinite(v[first])) ++first;
  double exp_min = 1, exp_max = 1;
  if (first < n) {
    double lo = std::fabs(v[first]), hi = lo;
    for (int64_t i = first; i < n; ++i) {
      const double z = std::fabs(v[i]);
      if (!std::isfinite(z)) continue;
      lo = std::min(lo, z);
      if (v[i] > hi) hi = z;  // compares the signed value, as libtorch does
    }
    exp_min = lo != 0 ? std::floor(std::log10(lo)) + 1 : 1;
    exp_max = hi != 0 ? std::floor(std::log10(hi)) + 1 : 1;
  }
  Format f;
  if (int_mode) {
    if (exp_max > 9) {
      f.width = 11;
      os << std::scientific << std::setprecision(4);
    } else {
      f.width = static_cast<int64_t>(exp_max) + 1;
      os << std::defaultfloat;
    }
  } else if (exp_max - exp_min > 4) {
    f.width = (std::fabs(exp_max) > 99 || std::fabs(exp_min) > 99) ? 12 : 11;
    os << std::scientific << std::setprecision(4);
  } else {
    if (exp_max > 5 || exp_max < 0) {
      f.width = 7;
      f.scale = std::pow(10, exp_max - 1);
    } else {
      f.width = exp_max == 0 ? 7 : static_cast<int64_t>(exp_max) + 6;
    }
    os << std::fixed << std::setprecision(4);
  }
  return f;
}

void print_scale(std::ostream& os, double scale) {
  const std::ios_base::fmtflags flags(os.flags());
  os << std::defaultfloat << scale << " *" << '\n';
  os.flags(flags);
}

void indent(std::ostream& os, int64_t n) {
  for (int64_t i = 0; i < n; ++i) os << ' ';
}

void print_matrix(std::ostream& os, const double* v, int64_t rows, int64_t cols, int64_t ind, int64_t linesize) {
  const Format f = choose_format(os, v, rows * cols);
  indent(os, ind);
  const int64_t per_line = std::max<int64_t>((linesize - ind) / (f.width + 1), 1);
  int64_t first = 0;
  while (first < cols) {
    const int64_t last = first + per_line <= cols ? first + per_line - 1 : cols - 1;
    if (per_line < cols) {
      if (first != 0) os << '\n';
      os << "Columns " << first + 1 << " to " << last + 1;
      indent(os, ind);
    }
    if (f.scale != 1) {
      print_scale(os, f.scale);
      indent(os, ind);
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = first; c <= last; ++c) {
        os << std::setw(static_cast<int>(f.width)) << v[r * cols + c] / f.scale;
        if (c == last) {
          os << '\n';
          if (r != rows - 1) {
            indent(os, ind);
            if (f.scale != 1) os << ' ';
          }
        } else {
          os << ' ';
        }
      }
    }
    first = last + 1;
  }
}

}  // namespace

std::ostream& print(std::ostream& os, const Tensor& t, int64_t linesize) {
  if (!t.defined()) return os << "[ Tensor (undefined) ]";
  if (detail::ValueReadHook hook = detail::value_read_hook()) hook(t, "print");  // a host read of the values
  const std::ios_base::fmtflags flags(os.flags());
  const std::streamsize precision = os.precision();
  const Tensor d = (t.is_quantized() ? t.dequantize() : t).to(kDouble).contiguous();
  const double* v = d.data_ptr<double>();
  if (t.dim() == 0) {
    os << std::defaultfloat << v[0] << '\n' << "[ " << t.toString() << "{}";
  } else if (t.dim() == 1) {
    if (t.numel() > 0) {
      const Format f = choose_format(os, v, t.numel());
      if (f.scale != 1) print_scale(os, f.scale);
      for (int64_t i = 0; i < t.numel(); ++i) os << std::setw(static_cast<int>(f.width)) << v[i] / f.scale << '\n';
    }
    os << "[ " << t.toString() << "{" << t.sizes()[0] << "}";
  } else if (t.dim() == 2) {
    print_matrix(os, v, t.sizes()[0], t.sizes()[1], 0, linesize);
    os << "[ " << t.toString() << "{" << t.sizes()[0] << "," << t.sizes()[1] << "}";
  } else {
    if (t.numel() > 0) {
      const int64_t rows = t.sizes()[t.dim() - 2], cols = t.sizes()[t.dim() - 1];
      const int64_t nmat = t.numel() / (rows * cols);
      // slices in libtorch's order: the first index varies fastest
      for (int64_t m = 0; m < nmat; ++m) {
        if (m > 0) os << '\n';
        os << '(';
        int64_t rem = m, offset = 0, stride = rows * cols;
        DimVector idx(t.dim() - 2);
        for (int64_t k = 0; k < t.dim() - 2; ++k) {
          idx[k] = rem % t.sizes()[k];
          rem /= t.sizes()[k];
        }
        for (int64_t k = t.dim() - 3; k >= 0; --k) {
          offset += idx[k] * stride;
          stride *= t.sizes()[k];
        }
        for (int64_t k = 0; k < t.dim() - 2; ++k) os << idx[k] + 1 << ',';
        os << ".,.) = " << '\n';
        print_matrix(os, v + offset, rows, cols, 1, linesize);
      }
    }
    os << "[ " << t.toString() << "{";
    for (int64_t i = 0; i < t.dim(); ++i) os << (i ? "," : "") << t.sizes()[i];
    os << "}";
  }
  if (t.is_quantized()) {  // libtorch's: the scheme and parameters after the type
    os << ", qscheme: " << t.qscheme();
    if (t.qscheme() == kPerTensorAffine) {
      os << ", scale: " << t.q_scale() << ", zero_point: " << t.q_zero_point();
    } else {
      os << ", scales: " << t.q_per_channel_scales() << ", zero_points: " << t.q_per_channel_zero_points()
         << ", axis: " << t.q_per_channel_axis();
    }
  }
  os << " ]";
  os.flags(flags);
  os.precision(precision);
  return os;
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return print(os, t, kLineSize); }

void print(const Tensor& t, int64_t linesize) { print(std::cout, t, linesize); }

void Tensor::print() const {
  if (defined()) {
    std::cerr << "[" << toString() << " " << sizes() << "]" << std::endl;
  } else {
    std::cerr << "[UndefinedTensor]" << std::endl;
  }
}

}  // namespace ember
