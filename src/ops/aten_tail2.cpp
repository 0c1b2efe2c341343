// libtorch's ATen functions and methods, round 2 (issue 26): integer and floating-point bit math,
// linear algebra and statistics compositions, copies, views and queries. Compositions of
// Ember's ops, so autograd follows them; the integer bit ops run one loop over int64 values.
#include <cmath>
#include <cstring>
#include <numeric>

#include "dispatch/dispatch.h"
#include "ember/aten_tail.h"
#include "ember/aten_tail2.h"
#include "ember/autograd.h"
#include "ember/indexing.h"
#include "ember/linalg.h"
#include "ember/nn/utils/rnn.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/shape.h"
#include "ops/op_util.h"

namespace ember {
namespace {

using op_util::to_float;

using op_util::operand;
using op_util::write_back;

// fn(a, b) over int64 values of the broadcast operands; the result has their promoted dtype
// (the cast back wraps as the narrow type's own arithmetic would).
template <class Fn>
Tensor integer_binary(const char* name, const Tensor& a, const Tensor& b, Fn fn) {
  const ScalarType t = promote_types(a.dtype(), b.dtype());
  EMBER_CHECK(is_integral_type(t, false), name, "\"", name, "_cpu\" not implemented for '", t, "'");
  const DimVector shape = infer_size(a.sizes(), b.sizes(), name);
  const Tensor x = a.to(kLong).expand(shape).contiguous(), y = b.to(kLong).expand(shape).contiguous();
  Tensor out = make_empty(shape, kLong);
  const int64_t* xp = x.data_ptr<int64_t>();
  const int64_t* yp = y.data_ptr<int64_t>();
  int64_t* op = out.data_ptr<int64_t>();
  const int bits = static_cast<int>(element_size(t) * 8);
  for (int64_t i = 0, n = out.numel(); i < n; ++i) op[i] = fn(xp[i], yp[i], bits);
  return out.to(t);
}
// A Scalar operand of an integer op: a 0-dim tensor of the other operand's dtype.
Tensor integer_scalar(const char* name, const Scalar& s, const Tensor& like) {
  EMBER_CHECK(!s.isFloatingPoint(), name, "\"", name, "_cpu\" not implemented for 'Float'");
  return scalar_tensor(s, TensorOptions().dtype(like.dtype()));
}

int64_t gcd_scalar(int64_t a, int64_t b) {
  a = a < 0 ? -a : a;
  b = b < 0 ? -b : b;
  while (a != 0) {
    const int64_t c = a;
    a = b % a;
    b = c;
  }
  return b;
}
int64_t left_shift(int64_t a, int64_t b, int bits) {
  if (b < 0 || b >= bits) return 0;
  return static_cast<int64_t>(static_cast<uint64_t>(a) << b);
}
int64_t right_shift(int64_t a, int64_t b, int bits) {
  if (b < 0 || b >= bits) return a >> (bits - 1);
  return a >> b;
}

}  // namespace

// ---- integer and floating-point bit math ----
Tensor gcd(const Tensor& self, const Tensor& other) {
  return integer_binary("gcd", self, other, [](int64_t a, int64_t b, int) { return gcd_scalar(a, b); });
}
Tensor& gcd_(Tensor& self, const Tensor& other) { return write_back("gcd_", self, gcd(self, other)); }
Tensor lcm(const Tensor& self, const Tensor& other) {
  return integer_binary("lcm", self, other, [](int64_t a, int64_t b, int) -> int64_t {
    const int64_t g = gcd_scalar(a, b);
    if (g == 0) return 0;
    const int64_t r = a / g * b;
    return r < 0 ? -r : r;
  });
}
Tensor& lcm_(Tensor& self, const Tensor& other) { return write_back("lcm_", self, lcm(self, other)); }
Tensor nextafter(const Tensor& self, const Tensor& other) {
  const ScalarType t = promote_types(self.dtype(), other.dtype());
  EMBER_CHECK(t == kFloat || t == kDouble, "nextafter", "\"nextafter_cpu\" not implemented for '", t, "'");
  const DimVector shape = infer_size(self.sizes(), other.sizes(), "nextafter");
  const Tensor x = self.detach().to(t).expand(shape).contiguous(), y = other.detach().to(t).expand(shape).contiguous();
  Tensor out = make_empty(shape, t);
  const int64_t n = out.numel();
  if (t == kFloat) {
    const float* xp = x.data_ptr<float>();
    const float* yp = y.data_ptr<float>();
    float* op = out.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i) op[i] = std::nextafter(xp[i], yp[i]);
  } else {
    const double* xp = x.data_ptr<double>();
    const double* yp = y.data_ptr<double>();
    double* op = out.data_ptr<double>();
    for (int64_t i = 0; i < n; ++i) op[i] = std::nextafter(xp[i], yp[i]);
  }
  return out;
}
namespace {
// The exponent by a loop; the mantissa as self / 2^exponent (exact).
struct FrexpOp {
  static constexpr const char* name = "frexp";
  static std::tuple<Tensor, Tensor> run(const Tensor& self) {
    EMBER_CHECK(is_floating_type(self.dtype()), name, "torch.frexp() only supports floating-point dtypes");
    const Tensor x = self.to(kDouble).contiguous();
    Tensor exponent = make_empty(self.sizes(), kInt);
    const double* xp = x.data_ptr<double>();
    int32_t* ep = exponent.data_ptr<int32_t>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) {
      int e = 0;
      if (std::isfinite(xp[i])) std::frexp(xp[i], &e);
      ep[i] = e;
    }
    return {self / pow(2.0, exponent.to(self.dtype())), exponent};
  }
  // FrexpBackward0 -- self: grad / exponent.exp2()
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    d.name("FrexpBackward0");
    d.grad(self, 0, [e = d.save_result(1)](const auto& c) { return c.grad() / c[e].exp2(); });
  }
};
}  // namespace
std::tuple<Tensor, Tensor> frexp(const Tensor& self) { return dispatch::call<FrexpOp>(self); }
Tensor bitwise_left_shift(const Tensor& self, const Tensor& other) {
  return integer_binary("lshift", self, other, left_shift);
}
Tensor bitwise_left_shift(const Tensor& self, const Scalar& other) {
  return bitwise_left_shift(self, integer_scalar("lshift", other, self));
}
Tensor bitwise_left_shift(const Scalar& self, const Tensor& other) {
  return bitwise_left_shift(integer_scalar("lshift", self, other), other);
}
Tensor bitwise_right_shift(const Tensor& self, const Tensor& other) {
  return integer_binary("rshift", self, other, right_shift);
}
Tensor bitwise_right_shift(const Tensor& self, const Scalar& other) {
  return bitwise_right_shift(self, integer_scalar("rshift", other, self));
}
Tensor bitwise_right_shift(const Scalar& self, const Tensor& other) {
  return bitwise_right_shift(integer_scalar("rshift", self, other), other);
}

// ---- linear algebra and statistics compositions ----
Tensor cross(const Tensor& self, const Tensor& other, std::optional<int64_t> dim) {
  EMBER_CHECK(self.dim() == other.dim(), "cross", "linalg.cross: inputs must have the same number of dimensions.");
  const DimVector shape = infer_size(self.sizes(), other.sizes(), "cross");
  int64_t d = -1;
  if (dim) {
    d = maybe_wrap_dim(*dim, static_cast<int64_t>(shape.size()), "cross");
  } else {
    // libtorch's deprecated default: the first dimension of size 3.
    for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
      if (shape[i] == 3) {
        d = i;
        break;
      }
    }
    EMBER_CHECK(d >= 0, "cross", "no dimension of size 3 in input");
  }
  EMBER_CHECK(self.size(d) == 3 && other.size(d) == 3, "cross", "linalg.cross: inputs dimension ", d,
              " must have length 3. Got ", self.size(d), " and ", other.size(d));
  const Tensor a = self.expand(shape), b = other.expand(shape);
  // component i: a[i+1] b[i+2] - a[i+2] b[i+1]
  return roll(a, {-1}, {d}) * roll(b, {-2}, {d}) - roll(a, {-2}, {d}) * roll(b, {-1}, {d});
}
Tensor tensordot(const Tensor& self, const Tensor& other, IntArrayRef dims_self, IntArrayRef dims_other) {
  EMBER_CHECK(dims_self.size() == dims_other.size(), "tensordot", "both dimension lists should have same length");
  std::vector<bool> contracted_self(static_cast<size_t>(self.dim()), false),
      contracted_other(static_cast<size_t>(other.dim()), false);
  std::vector<int64_t> p1, p2, out_shape;
  int64_t k = 1;
  for (size_t i = 0; i < dims_self.size(); ++i) {
    const int64_t d1 = maybe_wrap_dim(dims_self[i], self.dim(), "tensordot");
    const int64_t d2 = maybe_wrap_dim(dims_other[i], other.dim(), "tensordot");
    EMBER_CHECK(self.size(d1) == other.size(d2), "tensordot", "contracted dimensions need to match, but first has size ",
                self.size(d1), " in dim ", d1, " and second has size ", other.size(d2), " in dim ", d2);
    contracted_self[static_cast<size_t>(d1)] = true;
    contracted_other[static_cast<size_t>(d2)] = true;
    k *= self.size(d1);
  }
  int64_t m = 1, n = 1;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (contracted_self[static_cast<size_t>(i)]) continue;
    p1.push_back(i);
    out_shape.push_back(self.size(i));
    m *= self.size(i);
  }
  for (size_t i = 0; i < dims_self.size(); ++i) p1.push_back(maybe_wrap_dim(dims_self[i], self.dim()));
  for (size_t i = 0; i < dims_other.size(); ++i) p2.push_back(maybe_wrap_dim(dims_other[i], other.dim()));
  for (int64_t i = 0; i < other.dim(); ++i) {
    if (contracted_other[static_cast<size_t>(i)]) continue;
    p2.push_back(i);
    out_shape.push_back(other.size(i));
    n *= other.size(i);
  }
  const Tensor a = self.permute(p1).reshape({m, k});
  const Tensor b = other.permute(p2).reshape({k, n});
  return mm(a, b).reshape(out_shape);
}
Tensor inner(const Tensor& self, const Tensor& other) {
  if (self.dim() == 0 || other.dim() == 0) return self * other;
  EMBER_CHECK(self.size(-1) == other.size(-1), "inner", "inner() the last dimension must match on both input tensors but got shapes ",
              self.sizes(), " and ", other.sizes());
  return tensordot(self, other, {-1}, {-1});
}
Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) {
  EMBER_CHECK(vec1.dim() == 1, "addr", "addr: Expected 1-D argument vec1, but got ", vec1.dim(), "-D");
  EMBER_CHECK(vec2.dim() == 1, "addr", "addr: Expected 1-D argument vec2, but got ", vec2.dim(), "-D");
  const Tensor prod = outer(vec1, vec2);
  const Tensor scaled = alpha.toDouble() == 1 ? prod : prod * alpha;
  // beta == 0: self is ignored, NaN and inf included.
  if (beta.toDouble() == 0) return scaled + zeros_like(self).expand(prod.sizes());
  return (beta.toDouble() == 1 ? self : self * beta) + scaled;
}
Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  EMBER_CHECK(batch1.dim() == 3, "addbmm", "batch1 must be a 3D tensor");
  EMBER_CHECK(batch2.dim() == 3, "addbmm", "batch2 must be a 3D tensor");
  EMBER_CHECK(batch1.size(0) == batch2.size(0), "addbmm", "batch1 and batch2 must have same number of batches, got ",
              batch1.size(0), " and ", batch2.size(0));
  EMBER_CHECK(batch1.size(2) == batch2.size(1), "addbmm", "Incompatible matrix sizes for bmm (", batch1.size(1), "x",
              batch1.size(2), " and ", batch2.size(1), "x", batch2.size(2), ")");
  const int64_t b = batch1.size(0), n = batch1.size(1), k = batch1.size(2), p = batch2.size(2);
  // sum_b batch1[b] @ batch2[b] = (n, b * k) @ (b * k, p)
  const Tensor prod = mm(batch1.transpose(0, 1).reshape({n, b * k}), batch2.reshape({b * k, p}));
  const Tensor scaled = alpha.toDouble() == 1 ? prod : prod * alpha;
  if (beta.toDouble() == 0) return scaled + zeros_like(self).expand(prod.sizes());
  return (beta.toDouble() == 1 ? self : self * beta) + scaled;
}
// libtorch implements smm for a sparse self only; for dense tensors it is the product it names.
Tensor smm(const Tensor& self, const Tensor& mat2) { return mm(self, mat2); }

Tensor cov(const Tensor& self, int64_t correction, const std::optional<Tensor>& fweights,
           const std::optional<Tensor>& aweights) {
  EMBER_CHECK(self.dim() <= 2, "cov", "cov(): expected input to have two or fewer dimensions but got an input with ",
              self.dim(), " dimensions");
  const Tensor x = self.dim() < 2 ? self.view({1, -1}) : self;
  const int64_t num_obs = x.size(1);
  Tensor w;
  if (fweights && fweights->defined()) {
    const Tensor& f = *fweights;
    EMBER_CHECK(f.dim() <= 1, "cov", "cov(): expected fweights to have one or fewer dimensions but got fweights with ",
                f.dim(), " dimensions");
    EMBER_CHECK(is_integral_type(f.dtype(), false), "cov", "cov(): expected fweights to have integral dtype but got fweights with ",
                f.dtype(), " dtype");
    EMBER_CHECK(f.numel() == num_obs, "cov", "cov(): expected fweights to have the same numel as there are observations in the input but got ",
                f.numel(), " != ", num_obs);
    EMBER_CHECK(num_obs == 0 || f.min().item<int64_t>() >= 0, "cov", "cov(): fweights cannot be negative");
    w = f;
  }
  if (aweights && aweights->defined()) {
    const Tensor& a = *aweights;
    EMBER_CHECK(a.dim() <= 1, "cov", "cov(): expected aweights to have one or fewer dimensions but got aweights with ",
                a.dim(), " dimensions");
    EMBER_CHECK(is_floating_type(a.dtype()), "cov", "cov(): expected aweights to have floating point dtype but got aweights with ",
                a.dtype(), " dtype");
    EMBER_CHECK(a.numel() == num_obs, "cov", "cov(): expected aweights to have the same numel as there are observations in the input but got ",
                a.numel(), " != ", num_obs);
    EMBER_CHECK(num_obs == 0 || a.min().item<double>() >= 0, "cov", "cov(): aweights cannot be negative");
    w = w.defined() ? w * a : a;
  }
  const Tensor xf = to_float(x);
  const Tensor w_sum = w.defined() ? w.sum() : scalar_tensor(num_obs, TensorOptions().dtype(kLong));
  const Tensor avg = (w.defined() ? xf * w : xf).sum({1}) / w_sum;
  Tensor norm_factor;
  if (w.defined() && aweights && aweights->defined() && correction != 0) {
    norm_factor = w_sum - correction * (w * *aweights).sum() / w_sum;
  } else {
    norm_factor = w_sum - correction;
  }
  norm_factor = where(norm_factor <= 0, zeros_like(norm_factor), norm_factor);
  const Tensor xm = xf - avg.unsqueeze(1);
  const Tensor c = mm(xm, (w.defined() ? xm * w : xm).t());
  return (c / norm_factor).squeeze();
}
Tensor corrcoef(const Tensor& self) {
  const Tensor c = cov(self);
  if (c.dim() == 0) return c / c;
  const Tensor stddev = sqrt(diagonal(c));
  return clip((c / stddev.unsqueeze(1)) / stddev.unsqueeze(0), -1, 1);
}
Tensor vander(const Tensor& x, std::optional<int64_t> N, bool increasing) {
  EMBER_CHECK(x.dim() == 1, "vander", "x must be a one-dimensional tensor.");
  const int64_t n = N.value_or(x.size(0));
  EMBER_CHECK(n >= 0, "vander", "N must be non-negative.");
  const ScalarType t = promote_types(x.dtype(), kLong);
  Tensor result;
  if (n == 0) {
    result = empty({x.size(0), 0}, TensorOptions().dtype(t));
  } else {
    const Tensor col = ones({x.size(0), 1}, TensorOptions().dtype(t));
    if (n == 1) {
      result = col;
    } else {
      const Tensor powers = x.to(t).unsqueeze(1).expand({x.size(0), n - 1}).cumprod(1);
      result = cat({col, powers}, 1);
    }
  }
  return increasing ? result : result.flip({1});
}
Tensor combinations(const Tensor& self, int64_t r, bool with_replacement) {
  EMBER_CHECK(self.dim() == 1, "combinations", "Expect a 1D vector, but got shape ", self.sizes());
  EMBER_CHECK(r >= 0, "combinations", "Expect a non-negative number, but got ", r);
  if (r == 0) return empty({0}, TensorOptions().dtype(self.dtype()));
  const int64_t n = self.size(0);
  // Index tuples in lexicographic order: i_1 < i_2 < ... (<= with replacement).
  std::vector<std::vector<int64_t>> columns(static_cast<size_t>(r));
  std::vector<int64_t> idx(static_cast<size_t>(r), 0);
  if (!with_replacement) std::iota(idx.begin(), idx.end(), 0);
  auto valid = [&] { return n > 0 && idx.back() < n; };
  if (!with_replacement && r > n) idx.back() = n;  // no tuple
  while (valid()) {
    for (size_t j = 0; j < idx.size(); ++j) columns[j].push_back(idx[j]);
    // next tuple
    int64_t j = r - 1;
    while (j >= 0) {
      const int64_t limit = with_replacement ? n - 1 : n - r + j;
      if (idx[static_cast<size_t>(j)] < limit) break;
      --j;
    }
    if (j < 0) break;
    ++idx[static_cast<size_t>(j)];
    for (int64_t k = j + 1; k < r; ++k) {
      idx[static_cast<size_t>(k)] = with_replacement ? idx[static_cast<size_t>(j)] : idx[static_cast<size_t>(k - 1)] + 1;
    }
  }
  if (columns[0].empty()) return empty({0, r}, TensorOptions().dtype(self.dtype()));
  std::vector<Tensor> parts;
  for (const auto& c : columns) parts.push_back(self.index_select(0, tensor(c, kLong)));
  return stack(parts, 1);
}
Tensor kaiser_window(int64_t window_length, bool periodic, double beta, TensorOptions options) {
  const ScalarType t = options.dtype();
  EMBER_CHECK(is_floating_type(t), "kaiser_window", "kaiser_window expects floating point dtypes, got: ", t);
  EMBER_CHECK(window_length >= 0, "kaiser_window", "kaiser_window requires non-negative window_length, got window_length=",
              window_length);
  if (window_length == 0) return empty({0}, options);
  if (window_length == 1) return ones({1}, options);
  const int64_t n = periodic ? window_length + 1 : window_length;
  const double alpha = static_cast<double>(n - 1) / 2;
  const Tensor k = arange(0, n, TensorOptions().dtype(kDouble));
  const Tensor ratio = (k - alpha) / alpha;
  const Tensor w = i0(beta * sqrt(1 - ratio * ratio)) / std::cyl_bessel_i(0.0, std::fabs(beta));
  const Tensor out = w.to(t);
  return periodic ? out.narrow(0, 0, window_length) : out;
}
Tensor kaiser_window(int64_t window_length, TensorOptions options) { return kaiser_window(window_length, true, 12.0, options); }
Tensor kaiser_window(int64_t window_length, bool periodic, TensorOptions options) {
  return kaiser_window(window_length, periodic, 12.0, options);
}
// The norm over every dim but `dim`, shaped to broadcast against v (weight_norm's g).
Tensor norm_except_dim(const Tensor& v, int64_t pow, int64_t dim) {
  if (dim == -1) return v.norm(pow);
  if (dim == 0) {
    DimVector shape(static_cast<size_t>(v.dim()), 1);
    shape[0] = v.size(0);
    return v.contiguous().view({v.size(0), -1}).norm(pow, {1}).view(shape);
  }
  if (dim == v.dim() - 1) {
    DimVector shape(static_cast<size_t>(v.dim()), 1);
    shape[static_cast<size_t>(dim)] = v.size(dim);
    return v.contiguous().view({-1, v.size(dim)}).norm(pow, {0}).view(shape);
  }
  return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim);
}

namespace {
// One dim of torch.gradient: central differences inside, one-sided (edge_order 1) or second-
// order one-sided (edge_order 2) at the ends; `h` a uniform spacing or `x` the coordinates.
Tensor gradient_along(const Tensor& f, int64_t d, std::optional<double> h, const Tensor& x, int64_t edge_order) {
  const int64_t n = f.size(d);
  auto sl = [&](int64_t start, int64_t end) { return f.slice(d, start, end); };
  if (!x.defined()) {
    const double dx = *h;
    const Tensor center = (sl(2, n) - sl(0, n - 2)) / (2 * dx);
    Tensor first, last;
    if (edge_order == 1) {
      first = (sl(1, 2) - sl(0, 1)) / dx;
      last = (sl(n - 1, n) - sl(n - 2, n - 1)) / dx;
    } else {
      first = (sl(0, 1) * -1.5 + sl(1, 2) * 2 - sl(2, 3) * 0.5) / dx;
      last = (sl(n - 3, n - 2) * 0.5 - sl(n - 2, n - 1) * 2 + sl(n - 1, n) * 1.5) / dx;
    }
    return cat({first, center, last}, d);
  }
  DimVector shape(static_cast<size_t>(f.dim()), 1);
  auto along = [&](const Tensor& t) {
    shape[static_cast<size_t>(d)] = t.size(0);
    return t.view(shape);
  };
  const Tensor dxs = x.slice(0, 1, n) - x.slice(0, 0, n - 1);  // n - 1 spacings
  const Tensor dx1 = along(dxs.slice(0, 0, n - 2)), dx2 = along(dxs.slice(0, 1, n - 1));
  const Tensor a = -dx2 / (dx1 * (dx1 + dx2)), b = (dx2 - dx1) / (dx1 * dx2), c = dx1 / (dx2 * (dx1 + dx2));
  const Tensor center = a * sl(0, n - 2) + b * sl(1, n - 1) + c * sl(2, n);
  Tensor first, last;
  const Tensor d0 = dxs.slice(0, 0, 1), dl = dxs.slice(0, n - 2, n - 1);
  if (edge_order == 1) {
    first = (sl(1, 2) - sl(0, 1)) / along(d0);
    last = (sl(n - 1, n) - sl(n - 2, n - 1)) / along(dl);
  } else {
    const Tensor e0 = along(d0), e1 = along(dxs.slice(0, 1, 2));
    first = sl(0, 1) * (-(2 * e0 + e1) / (e0 * (e0 + e1))) + sl(1, 2) * ((e0 + e1) / (e0 * e1)) +
            sl(2, 3) * (-e0 / (e1 * (e0 + e1)));
    const Tensor l1 = along(dl), l2 = along(dxs.slice(0, n - 3, n - 2));
    last = sl(n - 3, n - 2) * (l1 / (l2 * (l1 + l2))) + sl(n - 2, n - 1) * (-(l1 + l2) / (l1 * l2)) +
           sl(n - 1, n) * ((2 * l1 + l2) / (l1 * (l1 + l2)));
  }
  return cat({first, center, last}, d);
}

struct Spacing {
  std::vector<double> h;       // per dim, when uniform
  std::vector<Tensor> coords;  // per dim, when given as coordinates
  bool list = false;           // given as a list (one entry per dim), not as one Scalar
};

std::vector<Tensor> gradient_impl(const Tensor& self, const Spacing& spacing, std::vector<int64_t> dims,
                                  int64_t edge_order, bool dim_given) {
  EMBER_CHECK(edge_order == 1 || edge_order == 2, "gradient", "torch.gradient only supports edge_order=1 and edge_order=2.");
  const size_t count = spacing.coords.empty() ? spacing.h.size() : spacing.coords.size();
  if (spacing.list && !dim_given) {
    EMBER_CHECK(count == dims.size(), "gradient",
                "torch.gradient expected spacing to be unspecified, a scalar or a list of length equal to 'self.dim() = ",
                self.dim(), "', since dim argument was not given, but got a list of length ", count);
  } else if (spacing.list) {
    EMBER_CHECK(count == dims.size(), "gradient",
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments to have the same length, but got a spacing argument of length ",
                count, " and a dim argument of length ", dims.size(), ".");
  }
  for (int64_t& d : dims) {
    d = maybe_wrap_dim(d, self.dim(), "gradient");
    EMBER_CHECK(self.size(d) >= edge_order + 1, "gradient",
                "torch.gradient expected each dimension size to be at least edge_order+1");
  }
  const Tensor f = to_float(self);
  std::vector<Tensor> out;
  for (size_t i = 0; i < dims.size(); ++i) {
    const size_t k = count == 1 ? 0 : i;
    if (spacing.coords.empty()) {
      out.push_back(gradient_along(f, dims[i], spacing.h[k], Tensor(), edge_order));
    } else {
      const Tensor& x = spacing.coords[k];
      if (x.dim() == 0) {
        out.push_back(gradient_along(f, dims[i], x.item<double>(), Tensor(), edge_order));
        continue;
      }
      EMBER_CHECK(x.dim() == 1 && x.size(0) == self.size(dims[i]), "gradient",
                  "torch.gradient expected each tensor to be on the same device and have one dimension of the size of the dimension it spaces, but got ",
                  x.sizes());
      out.push_back(gradient_along(f, dims[i], std::nullopt, to_float(x).to(f.dtype()), edge_order));
    }
  }
  return out;
}
std::vector<int64_t> all_dims(const Tensor& self) {
  std::vector<int64_t> d(static_cast<size_t>(self.dim()));
  std::iota(d.begin(), d.end(), 0);
  return d;
}
std::vector<double> scalars(ArrayRef<Scalar> s) {
  std::vector<double> v;
  for (const Scalar& x : s) v.push_back(x.toDouble());
  return v;
}
}  // namespace

std::vector<Tensor> gradient(const Tensor& self, const std::optional<Scalar>& spacing, std::optional<int64_t> dim,
                             int64_t edge_order) {
  const std::vector<int64_t> dims = dim ? std::vector<int64_t>{*dim} : all_dims(self);
  return gradient_impl(self, Spacing{{spacing ? spacing->toDouble() : 1.0}, {}}, dims, edge_order, dim.has_value());
}
std::vector<Tensor> gradient(const Tensor& self, const Scalar& spacing, IntArrayRef dim, int64_t edge_order) {
  return gradient_impl(self, Spacing{{spacing.toDouble()}, {}}, std::vector<int64_t>(dim.begin(), dim.end()), edge_order,
                       true);
}
std::vector<Tensor> gradient(const Tensor& self, IntArrayRef dim, int64_t edge_order) {
  return gradient_impl(self, Spacing{{1.0}, {}}, std::vector<int64_t>(dim.begin(), dim.end()), edge_order, true);
}
std::vector<Tensor> gradient(const Tensor& self, ArrayRef<Scalar> spacing, std::optional<int64_t> dim,
                             int64_t edge_order) {
  const std::vector<int64_t> dims = dim ? std::vector<int64_t>{*dim} : all_dims(self);
  return gradient_impl(self, Spacing{scalars(spacing), {}, true}, dims, edge_order, dim.has_value());
}
std::vector<Tensor> gradient(const Tensor& self, ArrayRef<Scalar> spacing, IntArrayRef dim, int64_t edge_order) {
  return gradient_impl(self, Spacing{scalars(spacing), {}, true}, std::vector<int64_t>(dim.begin(), dim.end()), edge_order,
                       true);
}
std::vector<Tensor> gradient(const Tensor& self, TensorList spacing, std::optional<int64_t> dim, int64_t edge_order) {
  const std::vector<int64_t> dims = dim ? std::vector<int64_t>{*dim} : all_dims(self);
  return gradient_impl(self, Spacing{{}, std::vector<Tensor>(spacing.begin(), spacing.end()), true}, dims, edge_order,
                       dim.has_value());
}
std::vector<Tensor> gradient(const Tensor& self, TensorList spacing, IntArrayRef dim, int64_t edge_order) {
  return gradient_impl(self, Spacing{{}, std::vector<Tensor>(spacing.begin(), spacing.end()), true},
                       std::vector<int64_t>(dim.begin(), dim.end()), edge_order, true);
}

// ---- copies, views and queries ----
// where() with an all-true mask: the value everywhere, and a zero gradient for self (PyTorch's).
Tensor fill(const Tensor& self, const Scalar& value) {
  return where(ones_like(self, kBool), scalar_tensor(value, TensorOptions().dtype(self.dtype())), self);
}
Tensor fill(const Tensor& self, const Tensor& value) {
  EMBER_CHECK(value.dim() == 0, "fill", "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
              " dimensions.");
  return where(ones_like(self, kBool), value.to(self.dtype()), self);
}
Tensor zero(const Tensor& self) { return fill(self, 0); }
// src broadcast to self's shape in self's dtype and strides; the result depends on src only (as
// libtorch's, whose self gets no gradient).
Tensor copy(const Tensor& self, const Tensor& src, bool non_blocking) {
  const Tensor value = src.to(self.dtype()).expand(self.sizes());
  Tensor out = empty_like(self);
  if (!GradMode::is_enabled() || !src.requires_grad()) return out.copy_(value, non_blocking);
  return value.clone(MemoryFormat::Contiguous);
}
Tensor alias(const Tensor& self) { return self.as_strided(self.sizes(), self.strides(), self.storage_offset()); }
const Tensor& as_strided_(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  const_cast<Tensor&>(self).as_strided_(size, stride, storage_offset);
  return self;
}
Tensor as_strided_copy(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  return self.as_strided(size, stride, storage_offset).clone(MemoryFormat::Contiguous);
}
Tensor as_strided_scatter(const Tensor& self, const Tensor& src, IntArrayRef size, IntArrayRef stride,
                          std::optional<int64_t> storage_offset) {
  Tensor out = self.clone();
  Tensor slice = out.as_strided(size, stride, storage_offset);
  EMBER_CHECK(slice.sizes() == src.sizes(), "as_strided_scatter", "expected src to have a size equal to the slice of self. src size = ",
              src.sizes(), ", slice size = ", slice.sizes());
  slice.copy_(src);
  return out;
}
std::vector<Tensor> unbind_copy(const Tensor& self, int64_t dim) {
  std::vector<Tensor> out = self.unbind(dim);
  for (Tensor& t : out) t = t.clone(MemoryFormat::Contiguous);
  return out;
}
std::vector<Tensor> split_copy(const Tensor& self, int64_t split_size, int64_t dim) {
  std::vector<Tensor> out = self.split(split_size, dim);
  for (Tensor& t : out) t = t.clone(MemoryFormat::Contiguous);
  return out;
}
std::vector<Tensor> split_with_sizes_copy(const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  std::vector<Tensor> out = split_with_sizes(self, split_sizes, dim);
  for (Tensor& t : out) t = t.clone(MemoryFormat::Contiguous);
  return out;
}
std::vector<Tensor> unsafe_split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  return split_with_sizes(self, split_sizes, dim);
}
const Tensor& resize_as_(const Tensor& self, const Tensor& the_template, std::optional<MemoryFormat> memory_format) {
  const_cast<Tensor&>(self).resize_(the_template.sizes(), memory_format);
  return self;
}
Tensor resize_as(const Tensor& self, const Tensor& the_template, std::optional<MemoryFormat> memory_format) {
  Tensor out = self.clone(MemoryFormat::Contiguous);
  out.resize_(the_template.sizes(), memory_format);
  return out;
}
// The functional resize: a resized copy (new elements uninitialized, as resize_ leaves them).
Tensor resize(const Tensor& self, IntArrayRef size, std::optional<MemoryFormat> memory_format) {
  Tensor out = self.clone(MemoryFormat::Contiguous);
  out.resize_(size, memory_format);
  return out;
}
Tensor argwhere(const Tensor& self) { return nonzero(self); }
std::vector<Tensor> nonzero_numpy(const Tensor& self) {
  if (self.dim() == 0) return nonzero(self.unsqueeze(0)).unbind(1);
  return nonzero(self).unbind(1);
}
Tensor lift(const Tensor& self) { return self; }
Tensor lift_fresh(const Tensor& self) { return self; }
Tensor lift_fresh_copy(const Tensor& self) { return self.clone(); }
bool is_distributed(const Tensor&) { return false; }

// ---- methods ----
bool Tensor::is_alias_of(const Tensor& other) const {
  return defined() && other.defined() && unsafeGetTensorImpl()->storage().get() == other.unsafeGetTensorImpl()->storage().get();
}
Tensor Tensor::isposinf() const { return ember::isposinf(*this); }
Tensor Tensor::isneginf() const { return ember::isneginf(*this); }
Tensor Tensor::isreal() const { return ember::isreal(*this); }
Tensor Tensor::broadcast_to(IntArrayRef size) const { return ember::broadcast_to(*this, size); }
Tensor Tensor::narrow_copy(int64_t dim, int64_t start, int64_t length) const {
  return ember::narrow_copy(*this, dim, start, length);
}
// The sum over the dims that `size` broadcasts: leading extra dims, and dims of size 1 in `size`.
Tensor Tensor::sum_to_size(IntArrayRef size) const {
  const int64_t n = static_cast<int64_t>(size.size()), lead = dim() - n;
  bool expandable = lead >= 0;
  for (int64_t i = 0; expandable && i < n; ++i) {
    expandable = size[i] == this->size(lead + i) || size[i] == 1;
  }
  EMBER_CHECK(expandable, "sum_to_size", "size {", size, "} is not expandable to size {", sizes(), "}.");
  std::vector<int64_t> reduce;
  for (int64_t i = 0; i < lead; ++i) reduce.push_back(i);
  for (int64_t i = 0; i < n; ++i) {
    if (size[i] == 1 && this->size(lead + i) != 1) reduce.push_back(lead + i);
  }
  if (reduce.empty()) return *this;
  const Tensor r = sum(reduce, true);
  return lead > 0 ? r.view(size) : r;  // (a view only where leading dims go, as PyTorch's sum_to)
}
Tensor Tensor::new_empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions options) const {
  return make_empty_strided(size, stride, options.dtype_opt().value_or(dtype()));
}
Tensor Tensor::argwhere() const { return ember::argwhere(*this); }
std::vector<Tensor> Tensor::nonzero_numpy() const { return ember::nonzero_numpy(*this); }
std::vector<Tensor> Tensor::unsafe_split_with_sizes(IntArrayRef split_sizes, int64_t dim) const {
  return ember::unsafe_split_with_sizes(*this, split_sizes, dim);
}
const Tensor& Tensor::resize_as_(const Tensor& the_template, std::optional<MemoryFormat> memory_format) const {
  return ember::resize_as_(*this, the_template, memory_format);
}
Tensor& Tensor::fill_diagonal_(const Scalar& fill_value, bool wrap) const {
  const int64_t nd = dim();
  EMBER_CHECK(nd >= 2, "fill_diagonal_", "dimensions must larger than 1");
  const int64_t h = size(0), w = size(1);
  if (nd > 2) {
    for (int64_t i = 1; i < nd; ++i) {
      EMBER_CHECK(size(i) == h, "fill_diagonal_", "all dimensions of input must be of equal length");
    }
  }
  std::vector<int64_t> rows, cols;
  if (nd == 2) {
    // Row-major flat positions k * (w + 1); with wrap they continue past the square part of a
    // tall matrix (one row skipped each time), as numpy's fill_diagonal.
    const int64_t total = wrap ? h * w : std::min(h, w) * w;
    for (int64_t k = 0; k * (w + 1) < total && (wrap || k < std::min(h, w)); ++k) {
      rows.push_back(k * (w + 1) / w);
      cols.push_back(k * (w + 1) % w);
    }
  }
  const Tensor value = scalar_tensor(fill_value, TensorOptions().dtype(dtype()));
  if (nd == 2) {
    if (rows.empty()) return mutable_self();
    std::vector<std::optional<Tensor>> idx{tensor(rows, kLong), tensor(cols, kLong)};
    ember::index_put_(mutable_self(), idx, value);
    return mutable_self();
  }
  const Tensor diag = arange(0, h, TensorOptions().dtype(kLong));
  std::vector<std::optional<Tensor>> idx(static_cast<size_t>(nd), diag);
  ember::index_put_(mutable_self(), idx, value);
  return mutable_self();
}
Tensor& Tensor::float_power_(const Scalar& exponent) const {
  EMBER_CHECK(dtype() == kDouble, "float_power_", "the base given to float_power_ has dtype ", dtype(),
              " but the operation's result requires dtype Double");
  return copy_(ember::float_power(operand(mutable_self()), exponent));
}
Tensor& Tensor::float_power_(const Tensor& exponent) const {
  EMBER_CHECK(dtype() == kDouble, "float_power_", "the base given to float_power_ has dtype ", dtype(),
              " but the operation's result requires dtype Double");
  return copy_(ember::float_power(operand(mutable_self()), exponent));
}
Tensor Tensor::bitwise_left_shift(const Tensor& other) const { return ember::bitwise_left_shift(*this, other); }
Tensor Tensor::bitwise_left_shift(const Scalar& other) const { return ember::bitwise_left_shift(*this, other); }
Tensor& Tensor::bitwise_left_shift_(const Tensor& other) const {
  return write_back("bitwise_left_shift_", mutable_self(), ember::bitwise_left_shift(mutable_self(), other));
}
Tensor& Tensor::bitwise_left_shift_(const Scalar& other) const {
  return write_back("bitwise_left_shift_", mutable_self(), ember::bitwise_left_shift(mutable_self(), other));
}
Tensor Tensor::bitwise_right_shift(const Tensor& other) const { return ember::bitwise_right_shift(*this, other); }
Tensor Tensor::bitwise_right_shift(const Scalar& other) const { return ember::bitwise_right_shift(*this, other); }
Tensor& Tensor::bitwise_right_shift_(const Tensor& other) const {
  return write_back("bitwise_right_shift_", mutable_self(), ember::bitwise_right_shift(mutable_self(), other));
}
Tensor& Tensor::bitwise_right_shift_(const Scalar& other) const {
  return write_back("bitwise_right_shift_", mutable_self(), ember::bitwise_right_shift(mutable_self(), other));
}
Tensor Tensor::gcd(const Tensor& other) const { return ember::gcd(*this, other); }
Tensor& Tensor::gcd_(const Tensor& other) const { return ember::gcd_(mutable_self(), other); }
Tensor Tensor::lcm(const Tensor& other) const { return ember::lcm(*this, other); }
Tensor& Tensor::lcm_(const Tensor& other) const { return ember::lcm_(mutable_self(), other); }
Tensor Tensor::nextafter(const Tensor& other) const { return ember::nextafter(*this, other); }
Tensor& Tensor::nextafter_(const Tensor& other) const {
  return write_back("nextafter_", mutable_self(), ember::nextafter(mutable_self(), other));
}
std::tuple<Tensor, Tensor> Tensor::frexp() const { return ember::frexp(*this); }
Tensor Tensor::cross(const Tensor& other, std::optional<int64_t> dim) const { return ember::cross(*this, other, dim); }
Tensor Tensor::inner(const Tensor& other) const { return ember::inner(*this, other); }
Tensor Tensor::addr(const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) const {
  return ember::addr(*this, vec1, vec2, beta, alpha);
}
Tensor& Tensor::addr_(const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) const {
  return write_back("addr_", mutable_self(), ember::addr(operand(mutable_self()), vec1, vec2, beta, alpha));
}
Tensor Tensor::addbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) const {
  return ember::addbmm(*this, batch1, batch2, beta, alpha);
}
Tensor& Tensor::addbmm_(const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) const {
  return write_back("addbmm_", mutable_self(), ember::addbmm(operand(mutable_self()), batch1, batch2, beta, alpha));
}
Tensor Tensor::smm(const Tensor& mat2) const { return ember::smm(*this, mat2); }
Tensor Tensor::cov(int64_t correction, const std::optional<Tensor>& fweights, const std::optional<Tensor>& aweights) const {
  return ember::cov(*this, correction, fweights, aweights);
}
Tensor Tensor::corrcoef() const { return ember::corrcoef(*this); }
Tensor Tensor::as_strided_scatter(const Tensor& src, IntArrayRef size, IntArrayRef stride,
                                  std::optional<int64_t> storage_offset) const {
  return ember::as_strided_scatter(*this, src, size, stride, storage_offset);
}

Tensor pad_sequence(TensorList sequences, bool batch_first, double padding_value) {
  return nn::utils::rnn::pad_sequence(sequences, batch_first, padding_value);
}
Tensor resolve_neg(const Tensor& self) { return self; }
Tensor Tensor::adjoint() const { return ember::adjoint(*this); }
Tensor Tensor::alias() const { return ember::alias(*this); }
Tensor Tensor::resolve_neg() const { return ember::resolve_neg(*this); }

}  // namespace ember
