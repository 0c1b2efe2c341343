// libtorch's remaining reductions and statistics, and the in-place random fills (issue 26),
// composed from Ember's reductions, sort and pointwise ops.
#include <cmath>
#include <limits>
#include <numbers>

#include "dispatch/dispatch.h"
#include "ember/autograd.h"
#include "ember/complex_ops.h"
#include "ember/aten_tail.h"
#include "ember/indexing.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/shape.h"
#include "kernels/cpu/reduce.h"
#include "ops/indexing_util.h"
#include "ops/random.h"

namespace ember {

Tensor nansum(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  Tensor x = is_floating_type(self.dtype()) ? where(isnan(self), 0, self) : self;
  return sum(x, dim, keepdim, dtype);
}
Tensor nanmean(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  EMBER_CHECK(is_floating_type(self.dtype()), "nanmean",
              "nanmean(): expected input to have floating point dtype but got ", self.dtype());
  Tensor count = sum(logical_not(isnan(self)), dim, keepdim);
  return nansum(self, dim, keepdim, dtype) / count;
}
Tensor Tensor::nansum(OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return ember::nansum(*this, dim, keepdim, dtype);
}
Tensor Tensor::nanmean(OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return ember::nanmean(*this, dim, keepdim, dtype);
}

Tensor count_nonzero(const Tensor& self, IntArrayRef dim) { return sum(self != 0, dim); }
Tensor count_nonzero(const Tensor& self, std::optional<int64_t> dim) {
  if (!dim) return sum(self != 0);
  return sum(self != 0, IntArrayRef{*dim});
}
Tensor Tensor::count_nonzero(std::optional<int64_t> dim) const { return ember::count_nonzero(*this, dim); }
Tensor Tensor::count_nonzero(IntArrayRef dim) const { return ember::count_nonzero(*this, dim); }

namespace {
struct AminmaxOp {
  static constexpr const char* name = "aminmax";
  static std::tuple<Tensor, Tensor> run(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
    EMBER_CHECK(self.numel() > 0 && (!dim || self.dim() == 0 || self.size(*dim) > 0), name,
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
    if (dim) {
      const int64_t d = maybe_wrap_dim(*dim, self.dim(), name);
      if (self.dim() == 0) return {self.clone(), self.clone()};
      return {amin(self, {d}, keepdim), amax(self, {d}, keepdim)};
    }
    Tensor lo = amin(self), hi = amax(self);
    if (keepdim) {
      std::vector<int64_t> ones_shape(static_cast<size_t>(self.dim()), 1);
      return {lo.reshape(ones_shape), hi.reshape(ones_shape)};
    }
    return {lo, hi};
  }
  // AminmaxBackward0 (PyTorch 2's node; 1.13 has no derivative for aminmax) -- self: each result's
  // gradient shared evenly by the elements equal to it, as amin's and amax's
  static void derivative(autograd::Derivative& d, const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
    d.name("AminmaxBackward0");
    // the reduced dim put back when it was dropped
    const std::optional<int64_t> restore =
        dim && !keepdim && self.dim() > 0 ? std::optional(maybe_wrap_dim(*dim, self.dim(), name)) : std::nullopt;
    const std::optional<int64_t> over = dim && self.dim() > 0 ? std::optional(maybe_wrap_dim(*dim, self.dim(), name))
                                                              : std::nullopt;
    const autograd::Saved s = d.save(self);
    for (size_t i = 0; i < 2; ++i)
      d.grad(self, i, [s, r = d.save_result(i), restore, over](const auto& c) {
        Tensor g = c.grad(), v = c[r];
        if (restore) {
          g = g.unsqueeze(*restore);
          v = v.unsqueeze(*restore);
        }
        const Tensor mask = v == c[s];
        return g / (over ? mask.sum({*over}, true) : mask.sum()) * mask;
      });
  }
};

// median is the lower of the two middle values: the ((n - 1) / 2 + 1)-th smallest; NaN when there
// is one, as PyTorch's.
struct MedianOp {
  static constexpr const char* name = "median";
  static Tensor run(const Tensor& self) {
    const Tensor flat = self.reshape({-1});
    if (self.numel() == 0 || (is_floating_type(self.dtype()) && flat.isnan().any().item<bool>()))
      return full({}, std::numeric_limits<double>::quiet_NaN(), self.dtype());
    return std::get<0>(kthvalue(flat, (flat.numel() - 1) / 2 + 1, 0));
  }
  // MedianBackward0 -- self: evenly_distribute_backward(grad, self, result)
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    evenly_distributed_derivative(d, self, "MedianBackward0");
  }
};
}  // namespace

std::tuple<Tensor, Tensor> aminmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return dispatch::call<AminmaxOp>(self, dim, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::aminmax(std::optional<int64_t> dim, bool keepdim) const {
  return ember::aminmax(*this, dim, keepdim);
}

Tensor median(const Tensor& self) { return dispatch::call<MedianOp>(self); }
namespace {
struct MedianDimOp {
  static constexpr const char* name = "median";
  static std::tuple<Tensor, Tensor> run(const Tensor& self, int64_t dim, bool keepdim) {
    const int64_t d = maybe_wrap_dim(dim, self.dim(), name);
    const int64_t n = self.dim() == 0 ? 1 : self.size(d);
    EMBER_CHECK(n > 0, name, "median(): Expected reduction dim ", d, " to have non-zero size.");
    return kthvalue(self, (n - 1) / 2 + 1, d, keepdim);
  }
  // MedianBackward1 -- self: value_selecting_reduction_backward(grad, dim, indices, self.sizes(), keepdim)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t dim, bool keepdim) {
    value_selecting_derivative(d, self, dim, keepdim, "MedianBackward1");
  }
};
}  // namespace
std::tuple<Tensor, Tensor> median(const Tensor& self, int64_t dim, bool keepdim) {
  return dispatch::call<MedianDimOp>(self, dim, keepdim);
}
Tensor Tensor::median() const { return ember::median(*this); }
std::tuple<Tensor, Tensor> Tensor::median(int64_t dim, bool keepdim) const { return ember::median(*this, dim, keepdim); }

// Sorted values along the dim, then PyTorch's interpolation between the two ranks around
// q * (n - 1); a NaN in a slice (sorted last) makes that slice's quantile NaN.
Tensor quantile(const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim,
                std::string_view interpolation) {
  EMBER_CHECK(self.numel() > 0, "quantile", "quantile() input tensor must be non-empty");
  EMBER_CHECK(is_floating_type(self.dtype()), "quantile", "quantile() input tensor must be either float or double dtype");
  EMBER_CHECK(q >= 0 && q <= 1, "quantile", "quantile() q must be in the range [0, 1] but got ", q);
  EMBER_CHECK(interpolation == "linear" || interpolation == "lower" || interpolation == "higher" ||
                  interpolation == "midpoint" || interpolation == "nearest",
              "quantile",
              "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest. Got ", interpolation);
  Tensor x = dim ? self : self.reshape({-1});
  const int64_t d = dim ? maybe_wrap_dim(*dim, std::max<int64_t>(x.dim(), 1), "quantile") : 0;
  if (x.dim() == 0) x = x.reshape({1});
  Tensor sorted = std::get<0>(x.sort(d));
  const int64_t n = sorted.size(d);
  const double rank = q * static_cast<double>(n - 1);
  const auto lo = static_cast<int64_t>(std::floor(rank)), hi = static_cast<int64_t>(std::ceil(rank));
  Tensor vlo = sorted.select(d, lo), vhi = sorted.select(d, hi);
  Tensor out;
  if (interpolation == "lower") {
    out = vlo;
  } else if (interpolation == "higher") {
    out = vhi;
  } else if (interpolation == "midpoint") {
    out = lerp(vlo, vhi, 0.5);
  } else if (interpolation == "nearest") {
    out = std::nearbyint(rank) == static_cast<double>(lo) ? vlo : vhi;  // round half to even, as PyTorch
  } else {
    out = lerp(vlo, vhi, rank - static_cast<double>(lo));
  }
  out = where(isnan(sorted.select(d, n - 1)), std::numeric_limits<double>::quiet_NaN(), out);
  if (keepdim) {
    if (dim) return self.dim() == 0 ? out : out.unsqueeze(d);
    return out.reshape(std::vector<int64_t>(static_cast<size_t>(self.dim()), 1));
  }
  return out;
}
Tensor Tensor::quantile(double q, std::optional<int64_t> dim, bool keepdim, std::string_view interpolation) const {
  return ember::quantile(*this, q, dim, keepdim, interpolation);
}

namespace {
// log(cumsum(exp(x - m))) + m with m the slice's max: vectorized passes, right while every
// exp(x - m) keeps its precision. Where one would not (a finite x more than 80 below its slice's
// max in float32 and the 16-bit dtypes, 700 in float64, where exp underflows; a NaN, which must
// spoil only the positions from it on; a max of +inf), the whole tensor takes the running
// log-sum-exp of the scan kernel instead (in double, an element at a time, as PyTorch's loop).
struct LogcumsumexpOp {
  static constexpr const char* name = "logcumsumexp";
  static Tensor run(const Tensor& self, int64_t dim) {
    const int64_t d = maybe_wrap_dim(dim, self.dim(), name);
    EMBER_CHECK(!is_complex_type(self.dtype()), name, "logcumsumexp is not implemented for ", self.dtype());
    const Tensor x = is_floating_type(self.dtype()) ? self : self.to(get_default_dtype());
    if (x.numel() == 0) return empty_like(x);
    if (x.dim() > 0) {
      // (16-bit values are computed in float32 and rounded once, as PyTorch's scan does)
      const Tensor w = x.dtype() == kHalf || x.dtype() == kBFloat16 ? x.to(kFloat) : x;
      Tensor m = w.amax({d}, true);
      m = where(m == -INFINITY, 0.0, m);  // a slice of -inf only: exp(-inf) sums to 0, its log is -inf
      const Tensor shifted = w - m;
      const double low = x.dtype() == kDouble ? -700 : -80;
      const Tensor lost = logical_or(isnan(shifted), logical_and(shifted < low, shifted > -INFINITY));
      if (!lost.any().item<bool>()) {  // (a max of +inf is in `lost`: inf - inf is NaN)
        return (log(cumsum(exp(shifted), d)) + m).to(x.dtype());
      }
    }
    // (the scan's running value is a double whatever the dtype: rounded to float32, then to a
    // 16-bit dtype, as the other scans round it)
    Tensor out = empty(x.sizes(), TensorOptions().dtype(kDouble));
    kernels::cumulative_kernel(out, x.to(kDouble), d, kernels::ScanOp::LogAddExp);
    return x.dtype() == kDouble ? out : out.to(kFloat).to(x.dtype());
  }
  // LogcumsumexpBackward0 -- self: logcumsumexp_backward(grad, self, result, dim): the gradient's
  // positive and negative parts, each as a reversed log-cumsum-exp of log|grad| - result
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t dim) {
    d.name("LogcumsumexpBackward0");
    d.grad(self, [s = d.save(self), r = d.save_result(), dim = maybe_wrap_dim(dim, self.dim(), name)](const auto& c) {
      if (c.grad().dim() == 0 || c.grad().numel() == 0) return c.grad();
      // (16-bit gradients computed in float32 and rounded once: in their own dtype the formula's
      // exp of a difference of logs loses a few percent)
      const ScalarType t = c.grad().dtype();
      const bool narrow = t == kHalf || t == kBFloat16;
      auto wide = [narrow](const Tensor& x) { return narrow ? x.to(kFloat) : x; };
      const Tensor g = wide(c.grad()), x = wide(c[s]), result = wide(c[r]);
      auto reversed = [dim](const Tensor& v) { return logcumsumexp(v.flip({dim}), dim).flip({dim}); };
      const Tensor lowest = full({}, std::numeric_limits<double>::lowest(), TensorOptions().dtype(g.dtype()));
      const Tensor log_abs = g.abs().log();
      const Tensor pos = (reversed(where(g > 0, log_abs, lowest) - result) + x).exp();
      const Tensor neg = (reversed(where(g < 0, log_abs, lowest) - result) + x).exp();
      return (pos - neg).to(t);
    });
  }
};
}  // namespace
Tensor logcumsumexp(const Tensor& self, int64_t dim) { return dispatch::call<LogcumsumexpOp>(self, dim); }
Tensor Tensor::logcumsumexp(int64_t dim) const { return ember::logcumsumexp(*this, dim); }

Tensor diff(const Tensor& self, int64_t n, int64_t dim, const std::optional<Tensor>& prepend,
            const std::optional<Tensor>& append) {
  EMBER_CHECK(self.dim() >= 1, "diff", "diff expects input to be at least one-dimensional");
  EMBER_CHECK(n >= 0, "diff", "order must be non-negative but got ", n);
  const int64_t d = maybe_wrap_dim(dim, self.dim(), "diff");
  std::vector<Tensor> parts;
  if (prepend) parts.push_back(*prepend);
  parts.push_back(self);
  if (append) parts.push_back(*append);
  Tensor x = parts.size() == 1 ? self : cat(parts, d);
  for (int64_t i = 0; i < n && x.size(d) > 0; ++i) {
    const int64_t len = x.size(d) - 1;
    Tensor hi = x.narrow(d, 1, len), lo = x.narrow(d, 0, len);
    x = x.dtype() == kBool ? logical_xor(hi, lo) : hi - lo;
  }
  return x;
}
Tensor Tensor::diff(int64_t n, int64_t dim, const std::optional<Tensor>& prepend,
                    const std::optional<Tensor>& append) const {
  return ember::diff(*this, n, dim, prepend, append);
}

namespace {
// The trapezoids' mean heights along dim, (y[i] + y[i+1]) / 2, to be scaled by the spacing.
Tensor heights(const Tensor& y, int64_t d) {
  const int64_t len = y.size(d) - 1;
  return (y.narrow(d, 1, len) + y.narrow(d, 0, len)) * 0.5;
}
Tensor spacing(const char* op, const Tensor& y, const Tensor& x, int64_t d) {
  if (x.dim() == 1) {
    EMBER_CHECK(x.size(0) == y.size(d), op, "There must be one `x` value for each sample point");
    std::vector<int64_t> shape(static_cast<size_t>(y.dim()), 1);
    shape[static_cast<size_t>(d)] = x.size(0) - 1;
    return diff(x).view(shape);
  }
  return diff(x, 1, d);
}
}  // namespace
Tensor trapezoid(const Tensor& y, const Scalar& dx, int64_t dim) {
  const int64_t d = maybe_wrap_dim(dim, y.dim(), "trapezoid");
  if (y.size(d) == 0) return sum(y, IntArrayRef{d});
  return sum(heights(y, d) * dx, IntArrayRef{d});
}
Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  const int64_t d = maybe_wrap_dim(dim, y.dim(), "trapezoid");
  if (y.size(d) == 0) return sum(y, IntArrayRef{d});
  return sum(heights(y, d) * spacing("trapezoid", y, x, d), IntArrayRef{d});
}
Tensor trapz(const Tensor& y, double dx, int64_t dim) { return trapezoid(y, dx, dim); }
Tensor trapz(const Tensor& y, const Tensor& x, int64_t dim) { return trapezoid(y, x, dim); }
Tensor cumulative_trapezoid(const Tensor& y, const Scalar& dx, int64_t dim) {
  const int64_t d = maybe_wrap_dim(dim, y.dim(), "cumulative_trapezoid");
  if (y.size(d) == 0) return y.clone();
  return cumsum(heights(y, d) * dx, d);
}
Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  const int64_t d = maybe_wrap_dim(dim, y.dim(), "cumulative_trapezoid");
  if (y.size(d) == 0) return y.clone();
  return cumsum(heights(y, d) * spacing("cumulative_trapezoid", y, x, d), d);
}

Tensor dist(const Tensor& self, const Tensor& other, const Scalar& p) { return norm(self - other, p); }
Tensor Tensor::dist(const Tensor& other, const Scalar& p) const { return ember::dist(*this, other, p); }

// Each slice along dim whose p-norm exceeds maxnorm is scaled to norm maxnorm (1e-7 as PyTorch).
Tensor renorm(const Tensor& self, const Scalar& p, int64_t dim, const Scalar& maxnorm) {
  EMBER_CHECK(p.to<double>() > 0, "renorm", "renorm: non-positive-norm not supported");
  EMBER_CHECK(maxnorm.to<double>() >= 0, "renorm", "renorm: expected maxnorm to be >= 0 but got ", maxnorm.to<double>());
  EMBER_CHECK(self.dim() > 1, "renorm", "renorm: input needs at least 2 dimensions, got ", self.dim(), " dimensions");
  const int64_t d = maybe_wrap_dim(dim, self.dim(), "renorm");
  std::vector<int64_t> others;
  for (int64_t i = 0; i < self.dim(); ++i)
    if (i != d) others.push_back(i);
  Tensor norms = norm(self, p, others, true);
  const double mx = maxnorm.to<double>();
  return self * where(norms > mx, mx / (norms + 1e-7), 1.0);
}
Tensor Tensor::renorm(const Scalar& p, int64_t dim, const Scalar& maxnorm) const {
  return ember::renorm(*this, p, dim, maxnorm);
}
Tensor& Tensor::renorm_(const Scalar& p, int64_t dim, const Scalar& maxnorm) const {
  return copy_(ember::renorm(requires_grad() ? clone() : mutable_self(), p, dim, maxnorm));  // renorm saves its input
}

Tensor isin(const Tensor& elements, const Tensor& test_elements, bool, bool invert) {
  Tensor hit = (elements.reshape({-1, 1}) == test_elements.reshape({1, -1})).any(1).view(elements.sizes());
  return invert ? logical_not(hit) : hit;
}
Tensor isin(const Tensor& elements, const Scalar& test_element, bool assume_unique, bool invert) {
  return isin(elements, scalar_tensor(test_element, elements.dtype()), assume_unique, invert);
}
Tensor isin(const Scalar& element, const Tensor& test_elements, bool assume_unique, bool invert) {
  return isin(scalar_tensor(element, test_elements.dtype()), test_elements, assume_unique, invert);
}
Tensor isposinf(const Tensor& self) { return logical_and(isinf(self), self > 0); }
Tensor isneginf(const Tensor& self) { return logical_and(isinf(self), self < 0); }
Tensor isreal(const Tensor& self) { return ones_like(self, kBool); }

// ---- in-place random fills: libtorch's kernels (ops/random.cpp), written under no-grad ----
namespace {
void check_fill(const char* op, const Tensor& self) {
  EMBER_CHECK(is_floating_type(self.dtype()), op, op, " expects a floating point tensor, got ", self.dtype());
}
Tensor& fill_random(Tensor& self, const Tensor& values) {
  NoGradGuard guard;
  return self.copy_(values);
}
// A complex tensor draws its real and imaginary parts as a real tensor of twice the elements.
Tensor& fill_parts(Tensor& self, RandomFill kind, double a, double b, Generator* generator) {
  if (!self.is_complex()) return fill_random(self, random_fill(self, kind, a, b, generator));
  Tensor parts = view_as_real(self);
  fill_random(parts, random_fill(parts, kind, a, b, generator));
  return self;
}
}  // namespace
Tensor& Tensor::uniform_(double from, double to, Generator* generator) const {
  EMBER_CHECK(from <= to, "uniform_", "uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  if (!is_complex()) check_fill("uniform_", *this);
  return fill_parts(mutable_self(), RandomFill::Uniform, from, to, generator);
}
Tensor& Tensor::normal_(double mean, double std, Generator* generator) const {
  if (!is_complex()) check_fill("normal_", *this);
  EMBER_CHECK(std >= 0, "normal_", "normal expects std >= 0.0, but found std ", std);
  return fill_parts(mutable_self(), RandomFill::Normal, mean, is_complex() ? std / std::sqrt(2.0) : std, generator);
}
Tensor& Tensor::exponential_(double lambd, Generator* generator) const {
  check_fill("exponential_", *this);
  EMBER_CHECK(lambd > 0, "exponential_", "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  return fill_random(mutable_self(), random_fill(*this, RandomFill::Exponential, lambd, 0, generator));
}
Tensor& Tensor::cauchy_(double median, double sigma, Generator* generator) const {
  check_fill("cauchy_", *this);
  EMBER_CHECK(sigma > 0, "cauchy_", "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  return fill_random(mutable_self(), random_fill(*this, RandomFill::Cauchy, median, sigma, generator));
}
Tensor& Tensor::log_normal_(double mean, double std, Generator* generator) const {
  check_fill("log_normal_", *this);
  EMBER_CHECK(std > 0, "log_normal_", "log_normal_ expects std > 0.0, but found std=", std);
  return fill_random(mutable_self(), random_fill(*this, RandomFill::LogNormal, mean, std, generator));
}
Tensor& Tensor::geometric_(double p, Generator* generator) const {
  EMBER_CHECK(p > 0 && p < 1, "geometric_", "geometric_ expects p to be in (0, 1), but got p=", p);
  return fill_random(mutable_self(), random_fill(*this, RandomFill::Geometric, p, 0, generator));
}

}  // namespace ember
