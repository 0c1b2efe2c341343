// libtorch's ATen functions and methods, round 2 (issue 26): histograms, searching, uniqueness,
// order statistics, scatter reductions, put and random sampling. Positions (bins, sorted order,
// modes, running extrema) are found by loops over double values without recording; the values
// returned are then gathered from the input, so autograd flows through the gather as PyTorch's
// value-selecting derivatives do.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "dispatch/dispatch.h"
#include "ember/aten_tail.h"
#include "ember/aten_tail2.h"
#include "ember/autograd.h"
#include "ember/indexing.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/shape.h"
#include "ops/indexing_util.h"
#include "ops/op_util.h"
#include "ops/random.h"

namespace ember {
namespace {

using op_util::kNaN;

using op_util::operand;
using op_util::write_back;

// The values of t as doubles, contiguous, without recording.
std::vector<double> values_of(const Tensor& t) {
  const Tensor d = t.detach().to(kDouble).contiguous();
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + d.numel());
}

// self with `dim` moved last and flattened to (rows, n).
struct Rows {
  Tensor moved;  // self.movedim(dim, -1)
  int64_t rows = 0, n = 0;
  std::vector<double> v;
};
Rows rows_of(const Tensor& self, int64_t dim) {
  Rows r;
  r.moved = self.dim() == 0 ? self.reshape({1}) : self.movedim(dim, -1);
  r.n = r.moved.size(-1);
  r.rows = r.n == 0 ? 0 : r.moved.numel() / r.n;
  r.v = values_of(r.moved);
  return r;
}
// (values, indices) from per-row positions: values gathered from self along dim.
std::tuple<Tensor, Tensor> select_along(const Tensor& self, int64_t dim, const Rows& r, const std::vector<int64_t>& pos,
                                        bool keepdim) {
  if (self.dim() == 0) return {self.clone(), zeros({}, kLong)};
  DimVector shape(r.moved.sizes());
  shape.back() = 1;
  Tensor idx = tensor(pos, kLong).view(shape).movedim(-1, dim);
  Tensor values = self.gather(dim, idx);
  idx = idx.contiguous();
  if (!keepdim) {  // fresh results, not views (as PyTorch's): the same memory in the dropped shape
    DimVector dropped(values.sizes());
    dropped.erase(static_cast<size_t>(dim));
    values = contiguous_alias(values, dropped);
    idx = contiguous_alias(idx, dropped);
  }
  return {values, idx};
}

}  // namespace

// ---- histograms ----
namespace {
// Counts (or weight sums) of x in the bins of the increasing edges: bin i holds [e_i, e_{i+1}),
// the last bin also its right edge; values outside and NaN count for nothing.
Tensor hist_from_edges(const Tensor& self, const Tensor& edges, const std::optional<Tensor>& weight, bool density) {
  const std::vector<double> x = values_of(self.reshape({-1}));
  const std::vector<double> e = values_of(edges);
  const int64_t bins = static_cast<int64_t>(e.size()) - 1;
  std::vector<double> w;
  if (weight && weight->defined()) w = values_of(weight->reshape({-1}));
  std::vector<double> h(static_cast<size_t>(std::max<int64_t>(bins, 0)), 0.0);
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    if (!(v >= e.front() && v <= e.back())) continue;
    int64_t pos = std::upper_bound(e.begin(), e.end(), v) - e.begin() - 1;
    if (pos >= bins) pos = bins - 1;
    h[static_cast<size_t>(pos)] += w.empty() ? 1.0 : w[i];
  }
  Tensor hist = tensor(h, kDouble);
  if (density) {
    const double total = std::accumulate(h.begin(), h.end(), 0.0);
    const Tensor widths = edges.to(kDouble).slice(0, 1, bins + 1) - edges.to(kDouble).slice(0, 0, bins);
    hist = hist / (widths * total);
  }
  return hist.to(self.dtype());
}
void check_hist_input(const char* op, const Tensor& self) {
  EMBER_CHECK(is_floating_type(self.dtype()), op, "torch.", op, ": input tensor and bins tensors should have the same dtype, but got input ",
              self.dtype());
}
std::pair<double, double> data_range(const Tensor& self) {
  if (self.numel() == 0) return {0.0, 0.0};
  const std::vector<double> v = values_of(self.reshape({-1}));
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double x : v) {
    if (std::isnan(x)) continue;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  if (lo > hi) return {0.0, 0.0};
  return {lo, hi};
}
}  // namespace

Tensor histc(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max) {
  EMBER_CHECK(is_floating_type(self.dtype()), "histc", "\"histogram_cpu\" not implemented for '", self.dtype(), "'");
  EMBER_CHECK(bins > 0, "histc", "torch.histc(): bins must be > 0, but got ", bins, " for bins");
  double lo = min.toDouble(), hi = max.toDouble();
  if (lo == hi && self.numel() > 0) std::tie(lo, hi) = data_range(self);
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  EMBER_CHECK(std::isfinite(lo) && std::isfinite(hi), "histc", "torch.histc(): range of [", lo, ", ", hi, "] is not finite");
  EMBER_CHECK(lo < hi, "histc", "torch.histc(): max must be larger than min");
  const Tensor edges = linspace(lo, hi, bins + 1, TensorOptions().dtype(self.dtype()));
  return hist_from_edges(self, edges, std::nullopt, false);
}
std::tuple<Tensor, Tensor> histogram(const Tensor& self, const Tensor& bins, const std::optional<Tensor>& weight,
                                     bool density) {
  check_hist_input("histogram", self);
  EMBER_CHECK(bins.dim() == 1, "histogram", "torch.histogram(): bins tensor should have one dimension, but got ", bins.dim(),
              " dimensions in the bins tensor");
  EMBER_CHECK(bins.numel() > 0, "histogram", "torch.histogram(): bins tensor should have at least 1 element, but got ",
              bins.numel(), " elements");
  EMBER_CHECK(!weight || !weight->defined() || weight->sizes() == self.sizes(), "histogram",
              "torch.histogram(): if weight tensor is provided it should have the same shape as the input tensor excluding its innermost dimension, but got input with shape ",
              self.sizes(), " and weight with shape ", weight ? weight->sizes() : IntArrayRef());
  const Tensor edges = bins.to(self.dtype()).contiguous();
  return {hist_from_edges(self, edges, weight, density), edges};
}
std::tuple<Tensor, Tensor> histogram(const Tensor& self, int64_t bins, std::optional<ArrayRef<double>> range,
                                     const std::optional<Tensor>& weight, bool density) {
  check_hist_input("histogram", self);
  EMBER_CHECK(bins > 0, "histogram", "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  double lo = 0, hi = 0;
  if (range) {
    EMBER_CHECK(range->size() == 2, "histogram", "torch.histogram(): range should have 2 elements, but got ", range->size());
    lo = (*range)[0];
    hi = (*range)[1];
  } else {
    std::tie(lo, hi) = data_range(self);
  }
  EMBER_CHECK(lo <= hi, "histogram", "torch.histogram(): min should not exceed max, but got min ", lo, " max ", hi,
              " for dimension 0");
  if (lo == hi) {
    lo -= 0.5;
    hi += 0.5;
  }
  const Tensor edges = linspace(lo, hi, bins + 1, TensorOptions().dtype(self.dtype()));
  return {hist_from_edges(self, edges, weight, density), edges};
}
namespace {
// histogramdd over the last dim of self (D coordinates per point): per dim, edges from `bins`
// (counts with the range or the data's extent, or given edges); a point outside any dim's
// edges counts for nothing.
std::tuple<Tensor, std::vector<Tensor>> histogramdd_impl(const Tensor& self, const std::vector<int64_t>& counts,
                                                         std::vector<Tensor> edges, std::optional<ArrayRef<double>> range,
                                                         const std::optional<Tensor>& weight, bool density) {
  check_hist_input("histogramdd", self);
  EMBER_CHECK(self.dim() >= 2, "histogramdd", "torch.histogramdd: input tensor should have at least 2 dimensions, but got ",
              self.dim());
  const int64_t d = self.size(-1);
  const Tensor pts = self.reshape({-1, d});
  const int64_t n = pts.size(0);
  if (edges.empty()) {
    EMBER_CHECK(static_cast<int64_t>(counts.size()) == d, "histogramdd", "torch.histogramdd: expected ", d,
                " sequences of bin edges for each of the ", d, " dimensions of the input, but got ", counts.size());
    EMBER_CHECK(!range || static_cast<int64_t>(range->size()) == 2 * d, "histogramdd", "torch.histogramdd: for a ", d,
                "-dimensional histogram range should have ", 2 * d, " elements, but got ", range ? range->size() : 0);
    for (int64_t k = 0; k < d; ++k) {
      EMBER_CHECK(counts[static_cast<size_t>(k)] > 0, "histogramdd", "torch.histogramdd(): bins must be > 0, but got ",
                  counts[static_cast<size_t>(k)], " for dimension ", k);
      double lo = 0, hi = 0;
      if (range) {
        lo = (*range)[static_cast<size_t>(2 * k)];
        hi = (*range)[static_cast<size_t>(2 * k + 1)];
      } else {
        std::tie(lo, hi) = data_range(pts.select(1, k));
      }
      EMBER_CHECK(lo <= hi, "histogramdd", "torch.histogramdd: min should not exceed max, but got min ", lo, " max ", hi,
                  " for dimension ", k);
      if (lo == hi) {
        lo -= 0.5;
        hi += 0.5;
      }
      edges.push_back(linspace(lo, hi, counts[static_cast<size_t>(k)] + 1, TensorOptions().dtype(self.dtype())));
    }
  }
  EMBER_CHECK(static_cast<int64_t>(edges.size()) == d, "histogramdd", "torch.histogramdd: expected ", d,
              " sequences of bin edges for each of the ", d, " dimensions of the input, but got ", edges.size());
  std::vector<std::vector<double>> e;
  std::vector<int64_t> shape;
  for (Tensor& t : edges) {
    t = t.to(self.dtype()).contiguous();
    e.push_back(values_of(t));
    shape.push_back(t.numel() - 1);
  }
  const std::vector<double> x = values_of(pts);
  std::vector<double> w;
  if (weight && weight->defined()) w = values_of(weight->reshape({-1}));
  int64_t cells = 1;
  for (int64_t b : shape) cells *= b;
  std::vector<double> h(static_cast<size_t>(cells), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t flat = 0;
    bool inside = true;
    for (int64_t k = 0; k < d && inside; ++k) {
      const double v = x[static_cast<size_t>(i * d + k)];
      const auto& ek = e[static_cast<size_t>(k)];
      const int64_t bins = shape[static_cast<size_t>(k)];
      if (!(v >= ek.front() && v <= ek.back())) {
        inside = false;
        break;
      }
      int64_t pos = std::upper_bound(ek.begin(), ek.end(), v) - ek.begin() - 1;
      if (pos >= bins) pos = bins - 1;
      flat = flat * bins + pos;
    }
    if (inside) h[static_cast<size_t>(flat)] += w.empty() ? 1.0 : w[static_cast<size_t>(i)];
  }
  Tensor hist = tensor(h, kDouble).view(shape);
  if (density) {
    const double total = std::accumulate(h.begin(), h.end(), 0.0);
    hist = hist / total;
    for (int64_t k = 0; k < d; ++k) {
      const Tensor ek = edges[static_cast<size_t>(k)].to(kDouble);
      const int64_t bins = shape[static_cast<size_t>(k)];
      DimVector ws(static_cast<size_t>(d), 1);
      ws[static_cast<size_t>(k)] = bins;
      hist = hist / (ek.slice(0, 1, bins + 1) - ek.slice(0, 0, bins)).view(ws);
    }
  }
  return {hist.to(self.dtype()), edges};
}
}  // namespace
std::tuple<Tensor, std::vector<Tensor>> histogramdd(const Tensor& self, IntArrayRef bins, std::optional<ArrayRef<double>> range,
                                                    const std::optional<Tensor>& weight, bool density) {
  return histogramdd_impl(self, std::vector<int64_t>(bins.begin(), bins.end()), {}, range, weight, density);
}
std::tuple<Tensor, std::vector<Tensor>> histogramdd(const Tensor& self, int64_t bins, std::optional<ArrayRef<double>> range,
                                                    const std::optional<Tensor>& weight, bool density) {
  return histogramdd_impl(self, std::vector<int64_t>(static_cast<size_t>(self.dim() ? self.size(-1) : 0), bins), {}, range,
                          weight, density);
}
std::tuple<Tensor, std::vector<Tensor>> histogramdd(const Tensor& self, TensorList bins, std::optional<ArrayRef<double>> range,
                                                    const std::optional<Tensor>& weight, bool density) {
  return histogramdd_impl(self, {}, std::vector<Tensor>(bins.begin(), bins.end()), range, weight, density);
}

Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  EMBER_CHECK(minlength >= 0, "bincount", "minlength should be >= 0");
  EMBER_CHECK(self.dim() == 1 && is_integral_type(self.dtype(), false), "bincount",
              "bincount only supports 1-d non-negative integral inputs.");
  const bool weighted = weights && weights->defined();
  EMBER_CHECK(!weighted || (weights->dim() == 1 && weights->size(0) == self.size(0)), "bincount",
              "weights should be 1-d and have the same length as input");
  const Tensor idx = self.to(kLong).contiguous();
  const int64_t* p = idx.data_ptr<int64_t>();
  int64_t top = -1;
  for (int64_t i = 0; i < idx.numel(); ++i) {
    EMBER_CHECK(p[i] >= 0, "bincount", "bincount only supports 1-d non-negative integral inputs.");
    top = std::max(top, p[i]);
  }
  const int64_t n = std::max(top + 1, minlength);
  std::vector<double> w;
  if (weighted) w = values_of(*weights);
  std::vector<double> counts(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < idx.numel(); ++i) counts[static_cast<size_t>(p[i])] += weighted ? w[static_cast<size_t>(i)] : 1.0;
  const ScalarType t = !weighted ? kLong : (weights->dtype() == kFloat ? kFloat : kDouble);
  return tensor(counts, kDouble).to(t);
}

// ---- searching ----
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                    std::optional<std::string_view> side, const std::optional<Tensor>& sorter) {
  if (side) {
    EMBER_CHECK(*side == "left" || *side == "right", "searchsorted",
                "torch.searchsorted(): side can only be 'left' or 'right' but got ", *side);
    EMBER_CHECK(!(*side == "left" && right), "searchsorted",
                "torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True");
    right = *side == "right";
  }
  const Tensor& seq = sorted_sequence;
  EMBER_CHECK(seq.dim() >= 1, "searchsorted", "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we got boundaries tensor dim(",
              seq.dim(), ")");
  const bool one_d = seq.dim() == 1;
  if (!one_d) {
    bool leading = seq.dim() == self.dim();
    for (int64_t i = 0; leading && i + 1 < seq.dim(); ++i) leading = seq.size(i) == self.size(i);
    EMBER_CHECK(leading, "searchsorted",
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor ",
                seq.sizes(), " and input value tensor ", self.sizes());
  }
  Tensor ordered = seq;
  if (sorter && sorter->defined()) {
    EMBER_CHECK(sorter->sizes() == seq.sizes(), "searchsorted",
                "torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor ", seq.sizes(),
                "and got sorter tensor ", sorter->sizes());
    EMBER_CHECK(sorter->dtype() == kLong, "searchsorted", "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype ",
                sorter->dtype());
    ordered = seq.gather(-1, *sorter);
  }
  const int64_t m = seq.size(-1);
  const std::vector<double> b = values_of(ordered);
  const std::vector<double> v = values_of(self);
  const int64_t per_row = self.dim() == 0 ? 1 : self.size(-1);
  std::vector<int64_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const size_t row = one_d ? 0 : i / static_cast<size_t>(std::max<int64_t>(per_row, 1));
    const auto first = b.begin() + static_cast<std::ptrdiff_t>(row * static_cast<size_t>(m));
    const auto last = first + m;
    // NaN sorts last, as in PyTorch's comparisons.
    auto less = [](double a, double c) { return a < c || (!std::isnan(a) && std::isnan(c)); };
    const auto it = right ? std::upper_bound(first, last, v[i], less) : std::lower_bound(first, last, v[i], less);
    out[i] = it - first;
  }
  return tensor(out, kLong).view(self.sizes()).to(out_int32 ? kInt : kLong);
}
Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right,
                    std::optional<std::string_view> side, const std::optional<Tensor>& sorter) {
  EMBER_CHECK(sorted_sequence.dim() == 1, "searchsorted",
              "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we got boundaries tensor dim(",
              sorted_sequence.dim(), ")");
  return searchsorted(sorted_sequence, scalar_tensor(self, TensorOptions().dtype(sorted_sequence.dtype())), out_int32,
                      right, side, sorter);
}
Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
  EMBER_CHECK(boundaries.dim() == 1, "bucketize", "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  return searchsorted(boundaries, self, out_int32, right);
}
Tensor bucketize(const Scalar& self, const Tensor& boundaries, bool out_int32, bool right) {
  return bucketize(scalar_tensor(self, TensorOptions().dtype(boundaries.dtype())), boundaries, out_int32, right);
}

// ---- uniqueness ----
namespace {
// Slices of self along dim as rows of doubles; `order` the row order to scan (identity, or
// lexicographically sorted); consecutive equal rows collapse into one.
std::tuple<Tensor, Tensor, Tensor> unique_rows(const Tensor& self, int64_t dim, bool sort, bool return_inverse,
                                               bool return_counts) {
  const Tensor moved = self.movedim(dim, 0);
  const int64_t n = moved.size(0);
  const int64_t width = n == 0 ? 0 : moved.numel() / n;
  const std::vector<double> v = values_of(moved);
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  auto row_less = [&](int64_t a, int64_t b) {
    return std::lexicographical_compare(v.begin() + a * width, v.begin() + (a + 1) * width, v.begin() + b * width,
                                        v.begin() + (b + 1) * width);
  };
  auto row_equal = [&](int64_t a, int64_t b) {
    return std::equal(v.begin() + a * width, v.begin() + (a + 1) * width, v.begin() + b * width);
  };
  if (sort) std::stable_sort(order.begin(), order.end(), row_less);
  std::vector<int64_t> picks, counts, inverse(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = order[static_cast<size_t>(i)];
    if (picks.empty() || !row_equal(picks.back(), r)) {
      picks.push_back(r);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[static_cast<size_t>(r)] = static_cast<int64_t>(picks.size()) - 1;
  }
  const Tensor values = self.detach().index_select(dim, tensor(picks, kLong));
  const Tensor inv = return_inverse ? tensor(inverse, kLong) : empty({0}, kLong);
  const Tensor cnt = return_counts ? tensor(counts, kLong) : empty({0}, kLong);
  return {values, inv, cnt};
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& self, bool return_inverse, bool return_counts,
                                                      std::optional<int64_t> dim) {
  if (dim) return unique_dim_consecutive(self, *dim, return_inverse, return_counts);
  auto [values, inverse, counts] = unique_rows(self.reshape({-1}), 0, false, return_inverse, return_counts);
  if (return_inverse) inverse = inverse.view(self.sizes());
  return {values, inverse, counts};
}
std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& self, int64_t dim, bool sorted, bool return_inverse,
                                              bool return_counts) {
  const int64_t d = maybe_wrap_dim(dim, self.dim(), "unique_dim");
  return unique_rows(self, d, true, return_inverse, return_counts);
}
std::tuple<Tensor, Tensor, Tensor> unique_dim_consecutive(const Tensor& self, int64_t dim, bool return_inverse,
                                                          bool return_counts) {
  const int64_t d = maybe_wrap_dim(dim, self.dim(), "unique_dim_consecutive");
  return unique_rows(self, d, false, return_inverse, return_counts);
}

// ---- order statistics ----
namespace {
// The most frequent value of each row (the smallest among equally frequent ones) and the last
// index holding it, as PyTorch's CPU kernel.
struct ModeOp {
  static constexpr const char* name = "mode";
  static std::tuple<Tensor, Tensor> run(const Tensor& self, int64_t dim, bool keepdim) {
    const int64_t d = self.dim() == 0 ? 0 : maybe_wrap_dim(dim, self.dim(), "mode");
    EMBER_CHECK(self.dim() == 0 || self.size(d) > 0, "mode", "mode(): Expected reduction dim ", d, " to have non-zero size.");
    const Rows r = rows_of(self, d);
    std::vector<int64_t> pos(static_cast<size_t>(r.rows));
    std::vector<std::pair<double, int64_t>> e(static_cast<size_t>(r.n));
    for (int64_t row = 0; row < r.rows; ++row) {
      for (int64_t j = 0; j < r.n; ++j) e[static_cast<size_t>(j)] = {r.v[static_cast<size_t>(row * r.n + j)], j};
      std::sort(e.begin(), e.end());
      int64_t best = 0, best_index = 0;
      for (int64_t j = 0; j < r.n;) {
        int64_t k = j;
        while (k < r.n && e[static_cast<size_t>(k)].first == e[static_cast<size_t>(j)].first) ++k;
        if (k - j > best) {
          best = k - j;
          best_index = e[static_cast<size_t>(k - 1)].second;
        }
        j = k == j ? j + 1 : k;
      }
      pos[static_cast<size_t>(row)] = best_index;
    }
    return select_along(self, d, r, pos, keepdim);
  }
  // ModeBackward0 -- self: value_selecting_reduction_backward(grad, dim, indices, self.sizes(), keepdim)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t dim, bool keepdim) {
    value_selecting_derivative(d, self, dim, keepdim, "ModeBackward0");
  }
};
// The lower median of each row's non-NaN values (rows of NaN only: their first NaN).
std::vector<int64_t> nanmedian_positions(const Rows& r) {
  std::vector<int64_t> pos(static_cast<size_t>(r.rows));
  std::vector<std::pair<double, int64_t>> e;
  for (int64_t row = 0; row < r.rows; ++row) {
    e.clear();
    for (int64_t j = 0; j < r.n; ++j) {
      const double x = r.v[static_cast<size_t>(row * r.n + j)];
      if (!std::isnan(x)) e.push_back({x, j});
    }
    if (e.empty()) {
      pos[static_cast<size_t>(row)] = 0;
      continue;
    }
    std::stable_sort(e.begin(), e.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    pos[static_cast<size_t>(row)] = e[(e.size() - 1) / 2].second;
  }
  return pos;
}
}  // namespace
namespace {
struct NanmedianOp {
  static constexpr const char* name = "nanmedian";
  static Tensor run(const Tensor& self) {
    const Tensor flat = self.reshape({-1});
    if (flat.numel() == 0) return full({}, kNaN, TensorOptions().dtype(self.dtype()));
    const Rows r = rows_of(flat, 0);
    return std::get<0>(select_along(flat, 0, r, nanmedian_positions(r), false));
  }
  // NanmedianBackward0 -- self: evenly_distribute_backward(grad, self, result)
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    evenly_distributed_derivative(d, self, "NanmedianBackward0");
  }
};
}  // namespace
Tensor nanmedian(const Tensor& self) { return dispatch::call<NanmedianOp>(self); }
namespace {
struct NanmedianDimOp {
  static constexpr const char* name = "nanmedian";
  static std::tuple<Tensor, Tensor> run(const Tensor& self, int64_t dim, bool keepdim) {
    const int64_t d = self.dim() == 0 ? 0 : maybe_wrap_dim(dim, self.dim(), name);
    EMBER_CHECK(self.dim() == 0 || self.size(d) > 0, name, "nanmedian(): Expected reduction dim ", d,
                " to have non-zero size.");
    const Rows r = rows_of(self, d);
    return select_along(self, d, r, nanmedian_positions(r), keepdim);
  }
  // NanmedianBackward1 -- self: value_selecting_reduction_backward(grad, dim, indices, self.sizes(), keepdim)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t dim, bool keepdim) {
    value_selecting_derivative(d, self, dim, keepdim, "NanmedianBackward1");
  }
};
}  // namespace
std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim, bool keepdim) {
  return dispatch::call<ModeOp>(self, dim, keepdim);
}
std::tuple<Tensor, Tensor> nanmedian(const Tensor& self, int64_t dim, bool keepdim) {
  return dispatch::call<NanmedianDimOp>(self, dim, keepdim);
}

namespace {
// Quantiles of each row's non-NaN values, interpolated between the sorted values around rank
// q * (count - 1); rows of NaN only give NaN.
Tensor nanquantile_impl(const Tensor& self, const std::vector<double>& qs, std::optional<int64_t> dim, bool keepdim,
                        std::string_view interpolation, bool scalar_q) {
  EMBER_CHECK(interpolation == "linear" || interpolation == "lower" || interpolation == "higher" ||
                  interpolation == "midpoint" || interpolation == "nearest",
              "nanquantile", "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest. Got ",
              interpolation);
  EMBER_CHECK(is_floating_type(self.dtype()), "nanquantile",
              "quantile() input tensor must be either float or double dtype");
  for (double q : qs) {
    EMBER_CHECK(q >= 0 && q <= 1, "nanquantile", "quantile() q values must be in the range [0, 1]");
  }
  Tensor x = dim ? self : self.reshape({-1});
  const int64_t d = dim ? maybe_wrap_dim(*dim, std::max<int64_t>(self.dim(), 1), "nanquantile") : 0;
  if (x.dim() == 0) x = x.reshape({1});
  EMBER_CHECK(x.size(d) > 0 || x.numel() == 0, "nanquantile", "quantile() input tensor must be non-empty");
  const Tensor sorted = std::get<0>(x.sort(d));  // NaN last
  const Tensor valid = x.detach().isnan().logical_not().sum({d}, true);  // (.., 1, ..)
  std::vector<Tensor> outs;
  for (double q : qs) {
    const Tensor rank = (valid.to(kDouble) - 1).clamp_min(0) * q;
    Tensor lo = rank.floor(), hi = rank.ceil();
    if (interpolation == "nearest") lo = hi = rank.round();
    const Tensor below = sorted.gather(d, lo.to(kLong).clamp_max(std::max<int64_t>(x.size(d) - 1, 0)));
    const Tensor above = sorted.gather(d, hi.to(kLong).clamp_max(std::max<int64_t>(x.size(d) - 1, 0)));
    Tensor r;
    if (interpolation == "lower" || interpolation == "nearest") {
      r = below;
    } else if (interpolation == "higher") {
      r = above;
    } else if (interpolation == "midpoint") {
      r = lerp(below, above, 0.5);
    } else {
      r = lerp(below, above, (rank - lo).to(x.dtype()));
    }
    r = where(valid == 0, full({}, kNaN, TensorOptions().dtype(x.dtype())), r);
    if (!keepdim) {
      r = r.squeeze(d);
    } else if (!dim) {
      DimVector ones_shape(static_cast<size_t>(self.dim()), 1);
      r = r.reshape(ones_shape);
    }
    outs.push_back(r);
  }
  if (scalar_q) return outs[0];
  return stack(outs, 0);
}
}  // namespace
Tensor nanquantile(const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim, std::string_view interpolation) {
  return nanquantile_impl(self, {q}, dim, keepdim, interpolation, true);
}
Tensor nanquantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                   std::string_view interpolation) {
  EMBER_CHECK(q.dim() <= 1, "nanquantile", "quantile() q must be a scalar or 1D tensor");
  EMBER_CHECK(q.dtype() == self.dtype(), "nanquantile", "quantile() q tensor must be same dtype as the input tensor");
  return nanquantile_impl(self, values_of(q), dim, keepdim, interpolation, q.dim() == 0);
}

namespace {
// Running max (min) along dim: a later equal value (or NaN) takes over, as PyTorch's kernel.
std::tuple<Tensor, Tensor> cumulative_extreme(const char* op, const Tensor& self, int64_t dim, bool max) {
  const int64_t d = self.dim() == 0 ? 0 : maybe_wrap_dim(dim, self.dim(), op);
  if (self.numel() == 0) return {self.clone(), empty(self.sizes(), kLong)};
  const Rows r = rows_of(self, d);
  std::vector<int64_t> idx(r.v.size());
  for (int64_t row = 0; row < r.rows; ++row) {
    double best = 0;
    int64_t at = 0;
    for (int64_t j = 0; j < r.n; ++j) {
      const double x = r.v[static_cast<size_t>(row * r.n + j)];
      const bool take = j == 0 || std::isnan(x) || (!std::isnan(best) && (max ? x >= best : x <= best));
      if (take) {
        best = x;
        at = j;
      }
      idx[static_cast<size_t>(row * r.n + j)] = at;
    }
  }
  if (self.dim() == 0) return {self.clone(), zeros({}, kLong)};
  const Tensor indices = tensor(idx, kLong).view(r.moved.sizes()).movedim(-1, d).contiguous();
  return {self.gather(d, indices), indices};
}
template <bool Max>
struct CumulativeExtremeOp {
  static constexpr const char* name = Max ? "cummax" : "cummin";
  static std::tuple<Tensor, Tensor> run(const Tensor& self, int64_t dim) { return cumulative_extreme(name, self, dim, Max); }
  // CummaxBackward0 / CumminBackward0 -- self: cummaxmin_backward(grad, self, indices, dim): each
  // value's gradient added where it came from
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t dim) {
    d.name(Max ? "CummaxBackward0" : "CumminBackward0");
    d.grad(self, 0, [i = d.save_result(1), sizes = DimVector(self.sizes()),
                     dim = self.dim() == 0 ? 0 : maybe_wrap_dim(dim, self.dim(), name)](const auto& c) {
      if (sizes.empty()) return c.grad();
      return zeros(sizes, TensorOptions().dtype(c.grad().dtype())).scatter_add_(dim, c[i], c.grad());
    });
  }
};
}  // namespace
std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim) {
  return dispatch::call<CumulativeExtremeOp<true>>(self, dim);
}
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim) {
  return dispatch::call<CumulativeExtremeOp<false>>(self, dim);
}

// ---- scatter and put ----
Tensor index_put(const Tensor& self, ArrayRef<std::optional<Tensor>> indices, const Tensor& values, bool accumulate) {
  Tensor out = self.clone();
  index_put_(out, indices, values, accumulate);
  return out;
}

namespace {
// Where index sends each src element along dim: the reduction of the values landing on each
// position of self (self's own value first when include_self), by one loop; then, for autograd,
// the result rebuilt from self and src so that each one's gradient is PyTorch's: sum and mean
// through scatter_add, amax/amin split evenly among the elements equal to the result.
Tensor scatter_reduce_impl(const char* op, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                           std::string_view reduce, bool include_self) {
  EMBER_CHECK(reduce == "sum" || reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin", op,
              "reduce argument must be either sum, prod, mean, amax or amin, got ", reduce);
  EMBER_CHECK(index.dtype() == kLong, op, op, "(): Expected dtype int64 for index");
  EMBER_CHECK(self.dtype() == src.dtype(), op, op, "(): self (", self.dtype(), ") and src (", src.dtype(),
              ") must have the same scalar type");
  const int64_t d = maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1), op);
  EMBER_CHECK(index.dim() == src.dim() || index.numel() == 0, op, "Index tensor must have the same number of dimensions as src tensor");
  if (index.numel() > 0) {
    const int64_t lo = index.min().item<int64_t>(), hi = index.max().item<int64_t>();
    const int64_t size = self.dim() == 0 ? 1 : self.size(d);
    EMBER_CHECK(lo >= 0 && hi < size, op, "index ", lo < 0 ? lo : hi, " is out of bounds for dimension ", d, " with size ", size);
  }
  const Tensor zero_at = zeros_like(self).scatter(d, index, 0.0);  // positions that receive a value
  const Tensor ones_src = ones_like(src);
  if (reduce == "sum" || reduce == "mean") {
    Tensor base = include_self ? self : self.scatter(d, index, 0.0);
    Tensor total = base.scatter_add(d, index, src);
    if (reduce == "sum") return total;
    Tensor count = (include_self ? ones_like(self) : ones_like(self).scatter(d, index, 0.0)).scatter_add(d, index, ones_src);
    count = where(count == 0, ones_like(count), count);
    return is_floating_type(self.dtype()) ? total / count : floor_divide(total, count);
  }
  // prod, amax, amin: the values by a loop over positions.
  const Tensor sd = self.detach().to(kDouble).contiguous();
  Tensor result = sd.clone();
  const Tensor received = zeros(self.sizes(), kBool).scatter(d, index, ones(index.sizes(), kBool)).contiguous();
  double* rp = result.data_ptr<double>();
  {
    const bool* got = received.data_ptr<bool>();
    for (int64_t i = 0; i < result.numel(); ++i) {
      if (!got[i] || include_self) continue;
      rp[i] = reduce == "prod" ? 1.0 : reduce == "amax" ? -std::numeric_limits<double>::infinity()
                                                        : std::numeric_limits<double>::infinity();
    }
  }
  // Flat destination of every src element: index along d, src's position elsewhere.
  const Tensor sv = src.detach().to(kDouble).contiguous();
  const Tensor iv = index.contiguous();
  const double* sp = sv.data_ptr<double>();
  const int64_t* ip = iv.data_ptr<int64_t>();
  const int64_t nd = index.dim();
  std::vector<int64_t> coord(static_cast<size_t>(nd), 0);
  for (int64_t i = 0; i < index.numel(); ++i) {
    int64_t flat = 0, src_flat = 0;
    for (int64_t k = 0; k < nd; ++k) {
      const int64_t c = k == d ? ip[i] : coord[static_cast<size_t>(k)];
      EMBER_CHECK(k != d || (c >= 0 && c < self.size(d)), op, "index ", ip[i], " is out of bounds for dimension ", d,
                  " with size ", self.size(d));
      flat += c * sd.stride(k);
      src_flat += coord[static_cast<size_t>(k)] * sv.stride(k);
    }
    const double v = sp[src_flat];
    double& r = rp[flat];
    if (reduce == "prod") r *= v;
    if (reduce == "amax") r = (std::isnan(v) || std::isnan(r)) ? kNaN : std::max(r, v);
    if (reduce == "amin") r = (std::isnan(v) || std::isnan(r)) ? kNaN : std::min(r, v);
    for (int64_t k = nd - 1; k >= 0; --k) {
      if (++coord[static_cast<size_t>(k)] < index.size(k)) break;
      coord[static_cast<size_t>(k)] = 0;
    }
  }
  const Tensor values = result.to(self.dtype());
  if (!(self.requires_grad() || src.requires_grad()) || !GradMode::is_enabled()) return values;
  EMBER_CHECK(reduce != "prod", op, "the derivative of ", op, " with reduce='prod' is not implemented");
  // amax/amin: gradient shared evenly by the elements equal to the result.
  const Tensor self_wins = (self.detach() == values) & (include_self ? ones_like(received) : received.logical_not());
  const Tensor src_wins = src.detach() == values.gather(d, index);
  const Tensor count = self_wins.to(self.dtype()).scatter_add(d, index, src_wins.to(self.dtype()));
  const Tensor share = where(count == 0, ones_like(count), count);
  const Tensor from_self = (self - self.detach()) * self_wins.to(self.dtype()) / share;
  const Tensor from_src =
      zeros_like(self).scatter_add(d, index, (src - src.detach()) * src_wins.to(self.dtype())) / share;
  return values + from_self + from_src;
}
}  // namespace
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                      bool include_self) {
  return scatter_reduce_impl("scatter_reduce", self, dim, index, src, reduce, include_self);
}
// index_reduce along dim = scatter_reduce with the 1-D index broadcast over source's other dims.
Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                    bool include_self) {
  EMBER_CHECK(reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin", "index_reduce",
              "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got ", reduce, ".");
  EMBER_CHECK(index.dim() <= 1, "index_reduce", "index_reduce_(): Index is supposed to be a vector");
  EMBER_CHECK(index.dtype() == kLong || index.dtype() == kInt, "index_reduce",
              "index_reduce_(): Expected dtype int32/int64 for index but got ", index.dtype());
  const int64_t d = maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1), "index_reduce");
  EMBER_CHECK(source.dim() == 0 ? index.numel() == 1 : source.size(d) == index.numel(), "index_reduce",
              "index_reduce_(): Number of indices (", index.numel(), ") should be equal to source.size(dim) (",
              source.dim() == 0 ? 1 : source.size(d), ")");
  if (self.dim() == 0) return scatter_reduce_impl("index_reduce", self.reshape({1}), 0, index.reshape({1}).to(kLong), source.reshape({1}), reduce, include_self).reshape({});
  DimVector shape(static_cast<size_t>(source.dim()), 1);
  shape[static_cast<size_t>(d)] = -1;
  const Tensor full_index = index.to(kLong).reshape(shape).expand(source.sizes());
  return scatter_reduce_impl("index_reduce", self, d, full_index, source, reduce, include_self);
}
namespace {
// put_: index addresses self as if flattened row-major; written through index_put_ with the
// index unravelled per dim, so any layout works.
Tensor& put_impl(Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  EMBER_CHECK(index.dtype() == kLong, "put_", "put_(): Expected a long tensor for index, but got ", index.dtype());
  EMBER_CHECK(self.dtype() == source.dtype(), "put_", "put_(): self and source expected to have the same dtype, but got self.dtype = ",
              self.dtype(), " and source.dtype = ", source.dtype());
  EMBER_CHECK(source.numel() == index.numel(), "put_",
              "put_(): Expected source and index to have the same number of elements, but got source.numel() = ",
              source.numel(), ", index.numel() = ", index.numel());
  const int64_t n = self.numel();
  if (index.numel() == 0) return self;
  EMBER_CHECK(n > 0, "put_", "put_(): Tried to put elements into an empty tensor");
  const Tensor flat = index.reshape({-1});
  const int64_t lo = flat.min().item<int64_t>(), hi = flat.max().item<int64_t>();
  EMBER_CHECK(lo >= -n && hi < n, "put_", "out of range: tried to access index ", hi >= n ? hi : lo, " on a tensor of ", n,
              " elements.");
  Tensor rest = where(flat < 0, flat + n, flat);
  Tensor target = self.dim() == 0 ? self.view({1}) : self;
  std::vector<std::optional<Tensor>> idx(static_cast<size_t>(target.dim()));
  for (int64_t k = target.dim() - 1; k >= 0; --k) {
    idx[static_cast<size_t>(k)] = remainder(rest, target.size(k));
    rest = floor_divide(rest, target.size(k));
  }
  index_put_(target, idx, source.reshape({-1}), accumulate);
  return self;
}
}  // namespace
Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  Tensor out = self.clone();
  return put_impl(out, index, source, accumulate);
}

// ---- random sampling ----
Tensor uniform(const Tensor& self, double from, double to, Generator* generator) {
  return empty_like(self).uniform_(from, to, generator);
}
Tensor cauchy(const Tensor& self, double median, double sigma, Generator* generator) {
  return empty_like(self).cauchy_(median, sigma, generator);
}
Tensor exponential(const Tensor& self, double lambd, Generator* generator) {
  return empty_like(self).exponential_(lambd, generator);
}
Tensor geometric(const Tensor& self, double p, Generator* generator) { return empty_like(self).geometric_(p, generator); }
Tensor log_normal(const Tensor& self, double mean, double std, Generator* generator) {
  return empty_like(self).log_normal_(mean, std, generator);
}
Tensor random(const Tensor& self, int64_t from, std::optional<int64_t> to, Generator* generator) {
  return empty_like(self).random_(from, to, generator);
}
Tensor random(const Tensor& self, int64_t to, Generator* generator) { return empty_like(self).random_(to, generator); }
Tensor random(const Tensor& self, Generator* generator) { return empty_like(self).random_(generator); }
Tensor normal_functional(const Tensor& self, double mean, double std, Generator* generator) {
  EMBER_CHECK(std >= 0, "normal", "normal expects std >= 0.0, but found std ", std);
  return empty_like(self).normal_(mean, std, generator);
}

Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement, Generator* generator) {
  EMBER_CHECK(self.dim() > 0 && self.dim() <= 2, "multinomial", "prob_dist must be 1 or 2 dim");
  EMBER_CHECK(is_floating_type(self.dtype()), "multinomial", "multinomial only supports floating-point dtypes for input, got: ",
              self.dtype());
  EMBER_CHECK(num_samples > 0, "multinomial", "cannot sample n_sample <= 0 samples");
  const int64_t n = self.size(-1);
  EMBER_CHECK(replacement || num_samples <= n, "multinomial", "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  const Tensor p = self.detach().to(kDouble).reshape({-1, n});
  EMBER_CHECK(p.numel() == 0 || (p.isfinite().all().item<bool>() && p.ge(0).all().item<bool>()), "multinomial",
              "probability tensor contains either `inf`, `nan` or element < 0");
  EMBER_CHECK(p.size(0) == 0 || p.sum({1}).gt(0).all().item<bool>(), "multinomial",
              "invalid multinomial distribution (sum of probabilities <= 0)");
  Tensor out;
  if (replacement) {
    out = make_empty({p.size(0), num_samples}, kLong);
    rng::multinomial_with_replacement(self.detach().reshape({-1, n}).contiguous(), out, generator);
  } else {
    // without replacement, libtorch's exponential race: the indices of the num_samples largest
    // p / q, q ~ Exponential(1) drawn in self's dtype and layout (indices in order proportionally to p)
    const Tensor q = empty_like(self).exponential_(1, generator);
    const Tensor race = (self.detach() / q).reshape({-1, n});
    out = num_samples == 1 ? race.argmax(1, true) : std::get<1>(topk(race, num_samples, 1));
  }
  return self.dim() == 1 ? out.squeeze(0) : out;
}
namespace {
void check_gamma_dtype(const char* op, const char* kernel, const Tensor& t) {
  EMBER_CHECK(t.defined(), op, "expected a defined tensor");
  EMBER_CHECK(t.dtype() == kFloat || t.dtype() == kDouble, op, "\"", kernel, "\" not implemented for '", t.dtype(),
              "'");
}
// Gamma(self, 1) samples, libtorch's draws (rng::standard_gamma).
struct StandardGammaOp {
  static constexpr const char* name = "_standard_gamma";
  static Tensor run(const Tensor& self, Generator* g) {
    check_gamma_dtype(name, "gamma_cpu", self);
    Tensor out = make_empty(self.sizes(), self.dtype());
    rng::standard_gamma(self, out, g);
    return out;
  }
  // StandardGammaBackward0 -- self: grad * _standard_gamma_grad(self, result)
  static void derivative(autograd::Derivative& d, const Tensor& self, Generator* /*g*/) {
    d.name("StandardGammaBackward0");
    d.grad(self, [s = d.save(self), r = d.save_result()](const auto& c) {
      return c.grad() * _standard_gamma_grad(c[s], c[r]);
    });
  }
};
// Dirichlet(self) samples over the last dim, as libtorch's: Gamma(alpha, 1) drawn in double, each
// row divided by its sum, rounded to self's dtype and kept inside (0, 1).
struct SampleDirichletOp {
  static constexpr const char* name = "_sample_dirichlet";
  static Tensor run(const Tensor& self, Generator* g) {
    check_gamma_dtype(name, "dirichlet", self);
    Tensor gamma = make_empty(self.sizes(), kDouble);
    rng::standard_gamma(self.to(kDouble), gamma, g);
    Tensor out = (self.dim() == 0 ? gamma / gamma : gamma / gamma.sum({-1}, true)).to(self.dtype());
    const double low = self.dtype() == kFloat ? std::numeric_limits<float>::min() : std::numeric_limits<double>::min();
    const double high = self.dtype() == kFloat ? std::nextafter(1.0f, 0.0f) : std::nextafter(1.0, 0.0);
    return out.clamp(low, high);
  }
  // SampleDirichletBackward0 -- self: not_implemented("_sample_dirichlet")
  static void derivative(autograd::Derivative& d, const Tensor& self, Generator* /*g*/) {
    d.name("SampleDirichletBackward0");
    d.grad(self, [](const auto&) -> Tensor {
      EMBER_CHECK(false, name, "derivative for aten::_sample_dirichlet is not implemented");
      return {};
    });
  }
};
}  // namespace
Tensor _standard_gamma(const Tensor& self, Generator* generator) {
  return dispatch::call<StandardGammaOp>(self, generator);
}
Tensor _sample_dirichlet(const Tensor& self, Generator* generator) {
  return dispatch::call<SampleDirichletOp>(self, generator);
}
Tensor binomial(const Tensor& count, const Tensor& prob, Generator* generator) {
  EMBER_CHECK(is_floating_type(count.dtype()), "binomial", "\"binomial_cpu\" not implemented for '", count.dtype(), "'");
  const DimVector shape = infer_size(count.sizes(), prob.sizes(), "binomial");
  const std::vector<double> c = values_of(count.expand(shape)), p = values_of(prob.expand(shape));
  Generator& g = generator ? *generator : default_generator();
  std::vector<double> out(c.size());
  {
    std::lock_guard<std::mutex> lock(g.mutex());
    std::mt19937_64 engine(g.next_u64());
    for (size_t i = 0; i < c.size(); ++i) {
      if (!(c[i] >= 0) || !(p[i] >= 0 && p[i] <= 1)) {
        out[i] = kNaN;
        continue;
      }
      std::binomial_distribution<int64_t> dist(static_cast<int64_t>(c[i]), p[i]);
      out[i] = static_cast<double>(dist(engine));
    }
  }
  return tensor(out, kDouble).view(shape).to(count.dtype());
}
Tensor poisson(const Tensor& self, Generator* generator) {
  EMBER_CHECK(is_floating_type(self.dtype()), "poisson", "\"poisson_cpu\" not implemented for '", self.dtype(), "'");
  const std::vector<double> rate = values_of(self);
  Generator& g = generator ? *generator : default_generator();
  std::vector<double> out(rate.size());
  {
    std::lock_guard<std::mutex> lock(g.mutex());
    std::mt19937_64 engine(g.next_u64());
    for (size_t i = 0; i < rate.size(); ++i) {
      EMBER_CHECK(rate[i] >= 0, "poisson", "invalid Poisson rate, expected rate to be non-negative");
      if (rate[i] == 0) {
        out[i] = 0;
        continue;
      }
      std::poisson_distribution<int64_t> dist(rate[i]);
      out[i] = static_cast<double>(dist(engine));
    }
  }
  return tensor(out, kDouble).view(self.sizes()).to(self.dtype());
}

// ---- methods ----
Tensor Tensor::histc(int64_t bins, const Scalar& min, const Scalar& max) const { return ember::histc(*this, bins, min, max); }
std::tuple<Tensor, Tensor> Tensor::histogram(const Tensor& bins, const std::optional<Tensor>& weight, bool density) const {
  return ember::histogram(*this, bins, weight, density);
}
std::tuple<Tensor, Tensor> Tensor::histogram(int64_t bins, std::optional<ArrayRef<double>> range,
                                             const std::optional<Tensor>& weight, bool density) const {
  return ember::histogram(*this, bins, range, weight, density);
}
Tensor Tensor::bincount(const std::optional<Tensor>& weights, int64_t minlength) const {
  return ember::bincount(*this, weights, minlength);
}
std::tuple<Tensor, Tensor> Tensor::cummax(int64_t dim) const { return ember::cummax(*this, dim); }
std::tuple<Tensor, Tensor> Tensor::cummin(int64_t dim) const { return ember::cummin(*this, dim); }
std::tuple<Tensor, Tensor> Tensor::mode(int64_t dim, bool keepdim) const { return ember::mode(*this, dim, keepdim); }
Tensor Tensor::nanmedian() const { return ember::nanmedian(*this); }
std::tuple<Tensor, Tensor> Tensor::nanmedian(int64_t dim, bool keepdim) const { return ember::nanmedian(*this, dim, keepdim); }
Tensor Tensor::nanquantile(double q, std::optional<int64_t> dim, bool keepdim, std::string_view interpolation) const {
  return ember::nanquantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::nanquantile(const Tensor& q, std::optional<int64_t> dim, bool keepdim, std::string_view interpolation) const {
  return ember::nanquantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::index_put(ArrayRef<std::optional<Tensor>> indices, const Tensor& values, bool accumulate) const {
  return ember::index_put(*this, indices, values, accumulate);
}
Tensor Tensor::index_reduce(int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                            bool include_self) const {
  return ember::index_reduce(*this, dim, index, source, reduce, include_self);
}
Tensor& Tensor::index_reduce_(int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                              bool include_self) const {
  return write_back("index_reduce_", mutable_self(),
                    ember::index_reduce(operand(mutable_self()), dim, index, source, reduce, include_self));
}
Tensor Tensor::put(const Tensor& index, const Tensor& source, bool accumulate) const {
  return ember::put(*this, index, source, accumulate);
}
Tensor& Tensor::put_(const Tensor& index, const Tensor& source, bool accumulate) const {
  return put_impl(mutable_self(), index, source, accumulate);
}
Tensor Tensor::scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                              bool include_self) const {
  return ember::scatter_reduce(*this, dim, index, src, reduce, include_self);
}
Tensor& Tensor::scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                                bool include_self) const {
  return write_back("scatter_reduce_", mutable_self(),
                    ember::scatter_reduce(operand(mutable_self()), dim, index, src, reduce, include_self));
}
Tensor Tensor::bernoulli(Generator* generator) const { return ember::bernoulli(*this, generator); }
Tensor Tensor::bernoulli(double p, Generator* generator) const { return ember::bernoulli(*this, p, generator); }
Tensor& Tensor::bernoulli_(const Tensor& p, Generator* generator) const {
  NoGradGuard guard;
  return copy_(bernoulli_like(*this, p, generator));
}
Tensor& Tensor::bernoulli_(double p, Generator* generator) const {
  EMBER_CHECK(p >= 0 && p <= 1, "bernoulli_", "bernoulli_ expects p to be in [0, 1], but got p=", p);
  NoGradGuard guard;
  return copy_(random_fill(*this, RandomFill::Bernoulli, p, 0, generator));
}
Tensor Tensor::multinomial(int64_t num_samples, bool replacement, Generator* generator) const {
  return ember::multinomial(*this, num_samples, replacement, generator);
}
Tensor& Tensor::random_(Generator* generator) const {
  NoGradGuard guard;
  return copy_(random_int_fill(*this, std::nullopt, std::nullopt, generator));
}
Tensor& Tensor::random_(int64_t from, std::optional<int64_t> to, Generator* generator) const {
  NoGradGuard guard;
  return copy_(random_int_fill(*this, from, to, generator));
}
Tensor& Tensor::random_(int64_t to, Generator* generator) const {
  NoGradGuard guard;
  return copy_(random_int_fill(*this, 0, to, generator));
}

}  // namespace ember
