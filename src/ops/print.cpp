// Printing in libtorch's C++ style: values in aligned columns, matrices row by row, higher
// dims as (i,j,.,.) slices, then "[ CPUFloatType{2,3} ]".
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "ember/tensor.h"

namespace ember {
namespace {

struct Format {
  bool integral = true;  // every value is a whole number
  bool sci = false;
  int width = 1;
  int precision = 4;
};

Format choose_format(const double* v, int64_t n) {
  Format f;
  double max_abs = 0, min_abs = INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    const double x = v[i];
    if (!std::isfinite(x)) continue;
    if (x != std::nearbyint(x)) f.integral = false;
    const double a = std::fabs(x);
    max_abs = std::max(max_abs, a);
    if (a > 0) min_abs = std::min(min_abs, a);
  }
  if (!f.integral && (max_abs >= 1e8 || (min_abs < 1e-4 && min_abs > 0))) f.sci = true;
  if (f.integral && max_abs >= 1e10) f.sci = true;
  int width = 1;
  for (int64_t i = 0; i < n; ++i) {
    std::ostringstream os;
    if (f.sci) {
      os << std::scientific << std::setprecision(f.precision) << v[i];
    } else if (f.integral) {
      os << std::fixed << std::setprecision(0) << v[i];
    } else {
      os << std::fixed << std::setprecision(f.precision) << v[i];
    }
    width = std::max<int>(width, static_cast<int>(os.str().size()));
  }
  f.width = width;
  return f;
}

void put(std::ostream& os, double x, const Format& f) {
  os << std::setw(f.width + 1);
  if (f.sci) {
    os << std::scientific << std::setprecision(f.precision) << x;
  } else {
    os << std::fixed << std::setprecision(f.integral ? 0 : f.precision) << x;
  }
}

void print_matrix(std::ostream& os, const double* v, int64_t rows, int64_t cols, const Format& f) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) put(os, v[r * cols + c], f);
    os << '\n';
  }
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ Tensor (undefined) ]";
  std::ios_base::fmtflags flags(os.flags());
  const Tensor d = t.to(kDouble).contiguous();
  const double* v = d.data_ptr<double>();
  const Format f = choose_format(v, d.numel());
  if (t.numel() == 0) {
    os << "[ " << t.toString() << "{" ;
  } else if (t.dim() == 0) {
    put(os, v[0], f);
    os << "\n[ " << t.toString() << "{";
  } else if (t.dim() == 1) {
    for (int64_t i = 0; i < t.numel(); ++i) {
      put(os, v[i], f);
      os << '\n';
    }
    os << "[ " << t.toString() << "{";
  } else {
    const int64_t rows = t.sizes()[t.dim() - 2], cols = t.sizes()[t.dim() - 1];
    const int64_t nmat = t.numel() / (rows * cols);
    for (int64_t m = 0; m < nmat; ++m) {
      if (t.dim() > 2) {
        os << '(';
        int64_t rem = m;
        DimVector idx(t.dim() - 2);
        for (int64_t k = t.dim() - 3; k >= 0; --k) {
          idx[k] = rem % t.sizes()[k];
          rem /= t.sizes()[k];
        }
        for (int64_t k = 0; k < t.dim() - 2; ++k) os << idx[k] + 1 << ',';
        os << ".,.) = \n";
      }
      print_matrix(os, v + m * rows * cols, rows, cols, f);
      if (t.dim() > 2 && m + 1 < nmat) os << '\n';
    }
    os << "[ " << t.toString() << "{";
  }
  for (int64_t i = 0; i < t.dim(); ++i) os << (i ? "," : "") << t.sizes()[i];
  os << "} ]";
  os.flags(flags);
  return os;
}

void Tensor::print() const { std::cout << *this << std::endl; }

}  // namespace ember
