// torch.linalg functions composed of other ops (their gradients are their compositions'):
// norms, cond, matrix_rank, pinv, matrix_power, matrix_exp, multi_dot, cross, vecdot,
// householder_product, tensorinv/tensorsolve, vander, and the older torch:: spellings and Tensor
// methods that map onto linalg.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <variant>

#include "ember/indexing.h"
#include "ops/linalg_common.h"

namespace ember {

using namespace linalg_detail;

namespace {

TensorOptions like(const Tensor& t) { return TensorOptions().dtype(t.dtype()); }
// Singular values, tolerances and condition numbers are real for complex A too.
TensorOptions real_like(const Tensor& t) { return TensorOptions().dtype(to_real_value_type(t.dtype())); }

double eps_of(ScalarType t) {
  return to_real_value_type(t) == kDouble ? std::numeric_limits<double>::epsilon()
                                          : std::numeric_limits<float>::epsilon();
}

int64_t wrap_dim(const char* op, int64_t d, int64_t ndim) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  EMBER_CHECK(d >= -n && d < n, op, "Dimension out of range (expected to be in range of [", -n, ", ", n - 1,
              "], but got ", d, ")");
  return d < 0 ? d + n : d;
}

// Moves the two matrix dims to the end; `back` undoes it for a result that kept them (keepdim)
// or dropped them.
Tensor to_last_two(const Tensor& A, int64_t d0, int64_t d1) { return A.movedim({d0, d1}, {-2, -1}); }

// Restores keepdim dims d0 < d1 (sorted) of a result that reduced both.
Tensor keep_two(const Tensor& r, int64_t d0, int64_t d1) {
  const int64_t a = std::min(d0, d1), b = std::max(d0, d1);
  return r.unsqueeze(a).unsqueeze(b);
}

}  // namespace

// ---- norms -----------------------------------------------------------------------------------------

Tensor linalg_vector_norm(const Tensor& x_in, const Scalar& ord, OptionalIntArrayRef dim, bool keepdim,
                          std::optional<ScalarType> dtype) {
  const char* op = "linalg.vector_norm";
  EMBER_CHECK(is_floating_type(x_in.dtype()) || is_complex_type(x_in.dtype()), op,
              "Expected a floating point or complex tensor as input. Got ", x_in.dtype());
  Tensor x = dtype ? x_in.to(*dtype) : x_in;
  if (is_complex_type(x.dtype())) x = x.abs();  // a complex vector's norm is that of its moduli (real)
  const double p = ord.toDouble();
  if (x.numel() == 0) {
    EMBER_CHECK(p >= 0 && !std::isinf(p), op, "Expected a non-empty input tensor when ord is negative or inf, got ",
                "an empty tensor");
  }
  DimVector dims;
  if (dim) dims = DimVector(*dim);
  if (!dim || dims.empty()) {
    const Tensor flat = x.reshape({-1});
    Tensor r = ember::norm(flat, ord, {0}, false);
    if (keepdim) {
      DimVector ones(x.dim(), 1);
      r = r.reshape(ones);
    }
    return r;
  }
  return ember::norm(x, ord, dims, keepdim);
}

namespace {
Tensor matrix_norm_impl(const char* op, const Tensor& A_in, const std::variant<double, std::string>& ord,
                        IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  check_floating_or_complex(op, A_in);
  EMBER_CHECK(A_in.dim() >= 2, op, "The input tensor A must have at least 2 dimensions.");
  EMBER_CHECK(dim.size() == 2, op, "dim must be a 2-tuple. Got ", dim);
  const Tensor A = dtype ? A_in.to(*dtype) : A_in;
  const int64_t d0 = wrap_dim(op, dim[0], A.dim()), d1 = wrap_dim(op, dim[1], A.dim());
  EMBER_CHECK(d0 != d1, op, "dims must be different. Got (", d0, ", ", d1, ")");
  if (std::holds_alternative<std::string>(ord)) {
    const std::string& o = std::get<std::string>(ord);
    if (o == "fro") return linalg_vector_norm(A, 2, IntArrayRef{d0, d1}, keepdim);
    EMBER_CHECK(o == "nuc", op, "Invalid norm type ", o, " for matrix norms. Supported types are 'fro' and 'nuc'");
    Tensor r = linalg_svdvals(to_last_two(A, d0, d1)).sum(IntArrayRef{-1});
    return keepdim ? keep_two(r, d0, d1) : r;
  }
  const double p = std::get<double>(ord);
  if (std::abs(p) == 2) {
    Tensor S = linalg_svdvals(to_last_two(A, d0, d1));
    Tensor r = p > 0 ? S.amax({-1}) : S.amin({-1});
    return keepdim ? keep_two(r, d0, d1) : r;
  }
  EMBER_CHECK(std::abs(p) == 1 || std::isinf(p), op, "Order ", p, " not supported.");
  // 1: max over columns of the column sums; inf: max over rows of the row sums
  const int64_t sum_dim = std::isinf(p) ? d1 : d0;
  const int64_t red_dim = std::isinf(p) ? d0 : d1;
  Tensor s = A.abs().sum(IntArrayRef{sum_dim}, true);
  Tensor r = p > 0 ? s.amax({red_dim}, true) : s.amin({red_dim}, true);
  if (!keepdim) r = r.squeeze(std::max(d0, d1)).squeeze(std::min(d0, d1));
  return r;
}
}  // namespace

Tensor linalg_matrix_norm(const Tensor& A, const Scalar& ord, IntArrayRef dim, bool keepdim,
                          std::optional<ScalarType> dtype) {
  return matrix_norm_impl("linalg.matrix_norm", A, ord.toDouble(), dim, keepdim, dtype);
}
Tensor linalg_matrix_norm(const Tensor& A, std::string_view ord, IntArrayRef dim, bool keepdim,
                          std::optional<ScalarType> dtype) {
  return matrix_norm_impl("linalg.matrix_norm", A, std::string(ord), dim, keepdim, dtype);
}

Tensor linalg_norm(const Tensor& A, const std::optional<Scalar>& ord, OptionalIntArrayRef dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  const char* op = "linalg.norm";
  if (dim) {
    EMBER_CHECK(dim->size() == 1 || dim->size() == 2, op, "If dim is specified, it must be of length 1 or 2. Got ",
                *dim);
  } else if (ord) {
    EMBER_CHECK(A.dim() == 1 || A.dim() == 2, op, "If dim is not specified but ord is, the input must be 1D or 2D. ",
                "Got ", A.dim(), "D.");
  }
  const bool matrix = dim ? dim->size() == 2 : (ord && A.dim() == 2);
  if (matrix) {
    const DimVector d = dim ? DimVector(*dim) : DimVector{-2, -1};
    if (!ord) return linalg_matrix_norm(A, "fro", d, keepdim, dtype);
    return linalg_matrix_norm(A, *ord, d, keepdim, dtype);
  }
  return linalg_vector_norm(A, ord.value_or(2), dim, keepdim, dtype);
}

Tensor linalg_norm(const Tensor& A, std::string_view ord, OptionalIntArrayRef dim, bool keepdim,
                   std::optional<ScalarType> dtype) {
  const char* op = "linalg.norm";
  if (dim) {
    EMBER_CHECK(dim->size() == 2, op, "If dim is specified, it mut be of length 2. Got ", *dim);
  } else {
    EMBER_CHECK(A.dim() == 2, op, "If dim is not specified but ord is, the input must be 2D. Got ", A.dim(), "D.");
  }
  const DimVector d = dim ? DimVector(*dim) : DimVector{-2, -1};
  return linalg_matrix_norm(A, ord, d, keepdim, dtype);
}

namespace {
Tensor cond_by_norms(const char* op, const Tensor& A, const std::variant<double, std::string>& p) {
  check_square(op, A);
  auto [Ainv, info] = linalg_inv_ex(A);
  Tensor r;
  if (std::holds_alternative<std::string>(p)) {
    const std::string& s = std::get<std::string>(p);
    r = linalg_matrix_norm(A, s) * linalg_matrix_norm(Ainv, s);
  } else {
    r = linalg_matrix_norm(A, std::get<double>(p)) * linalg_matrix_norm(Ainv, std::get<double>(p));
  }
  // singular matrices have infinite condition number
  return r.masked_fill(info.gt(0), std::numeric_limits<double>::infinity());
}
}  // namespace

Tensor linalg_cond(const Tensor& A, const std::optional<Scalar>& p) {
  const char* op = "linalg.cond";
  check_floating_or_complex(op, A);
  check_matrix(op, A);
  const double pv = p ? p->toDouble() : 2.0;
  if (std::abs(pv) == 2) {
    const Tensor S = linalg_svdvals(A);
    if (S.size(-1) == 0) return zeros(batch_shape(A), real_like(A));
    const Tensor hi = S.narrow(-1, 0, 1).squeeze(-1), lo = S.narrow(-1, S.size(-1) - 1, 1).squeeze(-1);
    return pv > 0 ? hi / lo : lo / hi;
  }
  EMBER_CHECK(std::abs(pv) == 1 || std::isinf(pv), op, "Order ", pv, " not supported.");
  return cond_by_norms(op, A, pv);
}

Tensor linalg_cond(const Tensor& A, std::string_view p) {
  const char* op = "linalg.cond";
  check_floating_or_complex(op, A);
  check_matrix(op, A);
  EMBER_CHECK(p == "fro" || p == "nuc", op, "Invalid norm type ", p, " for matrix norms. Supported types are 'fro' and 'nuc'");
  return cond_by_norms(op, A, std::string(p));
}

// ---- rank and pseudo-inverse --------------------------------------------------------------------------

namespace {
// The cutoff max(atol, rtol * s_max) per matrix, PyTorch's defaults: rtol = eps * max(m, n)
// when neither is given, and 0 when only atol is.
Tensor cutoff(const Tensor& A, const Tensor& smax, const std::optional<Tensor>& atol,
              const std::optional<Tensor>& rtol) {
  const double default_rtol = eps_of(A.dtype()) * std::max(A.size(-1), A.size(-2));
  const ScalarType real = to_real_value_type(A.dtype());
  Tensor rt;
  if (rtol) {
    rt = rtol->to(real);
  } else if (atol) {
    rt = full({}, 0.0, real_like(A));
  } else {
    rt = full({}, default_rtol, real_like(A));
  }
  Tensor tol = rt * smax;
  if (atol) tol = maximum(atol->to(real), tol);
  return tol;
}

std::optional<Tensor> opt_scalar(std::optional<double> v, const Tensor& A) {
  if (!v) return std::nullopt;
  return full({}, *v, real_like(A));
}

// Singular values (or |eigenvalues| for hermitian input), descending not required.
Tensor spectrum(const Tensor& A, bool hermitian) {
  return hermitian ? linalg_eigvalsh(A).abs() : linalg_svdvals(A);
}
}  // namespace

Tensor linalg_matrix_rank(const Tensor& A, const std::optional<Tensor>& atol, const std::optional<Tensor>& rtol,
                          bool hermitian) {
  const char* op = "linalg.matrix_rank";
  check_floating_or_complex(op, A);
  check_matrix(op, A);
  NoGradGuard no_grad;
  const Tensor S = spectrum(A, hermitian);
  if (S.size(-1) == 0) return zeros(batch_shape(A), kLong);
  const Tensor smax = S.amax({-1}, true);
  return S.gt(cutoff(A, smax, atol ? std::optional<Tensor>(atol->unsqueeze(-1)) : std::nullopt,
                     rtol ? std::optional<Tensor>(rtol->unsqueeze(-1)) : std::nullopt))
      .sum(IntArrayRef{-1}, false, kLong);
}
Tensor linalg_matrix_rank(const Tensor& A, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  return linalg_matrix_rank(A, opt_scalar(atol, A), opt_scalar(rtol, A), hermitian);
}
Tensor linalg_matrix_rank(const Tensor& A, double tol, bool hermitian) {
  return linalg_matrix_rank(A, std::optional<double>(tol), std::optional<double>(0.0), hermitian);
}

Tensor linalg_pinv(const Tensor& A, const std::optional<Tensor>& atol, const std::optional<Tensor>& rtol,
                   bool hermitian) {
  const char* op = "linalg.pinv";
  check_floating_or_complex(op, A);
  check_matrix(op, A);
  const auto ex = [](const std::optional<Tensor>& t) {
    return t ? std::optional<Tensor>(t->unsqueeze(-1)) : std::nullopt;
  };
  if (A.numel() == 0) return zeros(concat(batch_shape(A), {A.size(-1), A.size(-2)}), like(A));
  if (hermitian) {
    auto [L, V] = linalg_eigh(A);
    Tensor tol;
    {
      NoGradGuard g;
      tol = cutoff(A, L.abs().amax({-1}, true), ex(atol), ex(rtol));
    }
    const Tensor keep = L.abs().gt(tol);
    const Tensor inv = where(keep, L.reciprocal(), zeros_like(L));
    return (V * inv.unsqueeze(-2)).matmul(V.adjoint());
  }
  auto [U, S, Vh] = linalg_svd(A, false);
  Tensor tol;
  {
    NoGradGuard g;
    tol = cutoff(A, S.amax({-1}, true), ex(atol), ex(rtol));
  }
  const Tensor keep = S.gt(tol);
  const Tensor inv = where(keep, S.reciprocal(), zeros_like(S));
  return (Vh.adjoint() * inv.unsqueeze(-2)).matmul(U.adjoint());
}
Tensor linalg_pinv(const Tensor& A, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  return linalg_pinv(A, opt_scalar(atol, A), opt_scalar(rtol, A), hermitian);
}
Tensor linalg_pinv(const Tensor& A, double rcond, bool hermitian) {
  return linalg_pinv(A, std::optional<double>(0.0), std::optional<double>(rcond), hermitian);
}
Tensor pinverse(const Tensor& A, double rcond) { return linalg_pinv(A, rcond); }

// ---- matrix functions --------------------------------------------------------------------------------

Tensor linalg_matrix_power(const Tensor& A, int64_t n) {
  const char* op = "linalg.matrix_power";
  check_square(op, A);
  if (n == 0) return eye(A.size(-1), like(A)).expand(A.sizes()).clone();
  Tensor base = A;
  if (n < 0) {
    check_floating_or_complex(op, A);
    base = linalg_inv(A);
    n = -n;
  }
  if (n == 1) return base.clone();
  Tensor result;
  while (n > 0) {  // binary powering
    if (n & 1) result = result.defined() ? result.matmul(base) : base;
    n >>= 1;
    if (n > 0) base = base.matmul(base);
  }
  return result;
}
Tensor matrix_power(const Tensor& A, int64_t n) { return linalg_matrix_power(A, n); }

Tensor linalg_matrix_exp(const Tensor& A) {
  const char* op = "linalg.matrix_exp";
  check_square(op, A);
  check_floating_or_complex(op, A);
  const int64_t n = A.size(-1);
  if (A.numel() == 0) return A.clone();
  if (n == 1) return A.exp();
  // scaling and squaring: exp(A) = exp(A / 2^s)^(2^s), with ||A / 2^s||_1 <= 1/2 so that the
  // Taylor polynomial of degree 18 is exact to well below float64's rounding
  double norm1;
  {
    NoGradGuard g;
    norm1 = A.abs().sum(IntArrayRef{-2}).amax().item<double>();
  }
  int s = 0;
  if (norm1 > 0.5) s = static_cast<int>(std::ceil(std::log2(norm1 / 0.5)));
  const Tensor X = s > 0 ? A / std::ldexp(1.0, s) : A;
  // The smallest degree whose next term (the error of the derivative too) is below the dtype's
  // rounding: a small X needs few terms, and more would only multiply tiny values into float32
  // denormals, which made the backward of exp(a skew matrix near 0) 10x slower.
  const bool wide = to_real_value_type(A.dtype()) == kDouble;
  const double x = std::ldexp(norm1, -s), eps = wide ? 0x1p-53 : 0x1p-24;
  int degree = 1;
  for (double term = x; degree < (wide ? 18 : 10) && term > eps;) term *= x / ++degree;
  // Horner: I + X (I + X/2 (I + X/3 (...)))
  const Tensor I = eye(n, like(A)).expand(A.sizes());
  Tensor E = I + X / static_cast<double>(degree);
  for (int k = degree - 1; k >= 1; --k) E = I + X.matmul(E) / static_cast<double>(k);
  for (int i = 0; i < s; ++i) E = E.matmul(E);
  return E;
}
Tensor matrix_exp(const Tensor& A) { return linalg_matrix_exp(A); }

Tensor linalg_multi_dot(TensorList tensors) {
  const char* op = "linalg.multi_dot";
  const size_t n = tensors.size();
  EMBER_CHECK(n >= 2, op, "expected at least 2 tensors but got ", n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t d = tensors[i].dim();
    if (i == 0) {
      EMBER_CHECK(d == 1 || d == 2, op, "the first tensor must be 1D or 2D but got ", d, "D");
    } else if (i == n - 1) {
      EMBER_CHECK(d == 1 || d == 2, op, "the last tensor must be 1D or 2D but got ", d, "D");
    } else {
      EMBER_CHECK(d == 2, op, "tensor ", i, " must be 2D but got ", d, "D");
    }
  }
  std::vector<Tensor> m(tensors.begin(), tensors.end());
  const bool first_vec = m[0].dim() == 1, last_vec = m[n - 1].dim() == 1;
  if (first_vec) m[0] = m[0].unsqueeze(0);
  if (last_vec) m[n - 1] = m[n - 1].unsqueeze(1);
  for (size_t i = 0; i + 1 < n; ++i) {
    EMBER_CHECK(m[i].size(1) == m[i + 1].size(0), op, "expected ", i, "-th and ", i + 1,
                "-th tensors to be compatible for multiplication, but got shapes ", m[i].sizes(), " and ",
                m[i + 1].sizes());
    EMBER_CHECK(m[i].dtype() == m[i + 1].dtype(), op, "all tensors must have be the same dtype but tensor 0 is ",
                m[0].dtype(), " and tensor ", i + 1, " ", m[i + 1].dtype());
  }
  // the cheapest parenthesization (matrix-chain order, O(n^3) dynamic programming)
  std::vector<int64_t> p(n + 1);
  for (size_t i = 0; i < n; ++i) p[i] = m[i].size(0);
  p[n] = m[n - 1].size(1);
  std::vector<std::vector<double>> cost(n, std::vector<double>(n, 0));
  std::vector<std::vector<size_t>> split(n, std::vector<size_t>(n, 0));
  for (size_t len = 1; len < n; ++len) {
    for (size_t i = 0; i + len < n; ++i) {
      const size_t j = i + len;
      cost[i][j] = std::numeric_limits<double>::infinity();
      for (size_t k = i; k < j; ++k) {
        const double c = cost[i][k] + cost[k + 1][j] + double(p[i]) * double(p[k + 1]) * double(p[j + 1]);
        if (c < cost[i][j]) {
          cost[i][j] = c;
          split[i][j] = k;
        }
      }
    }
  }
  std::function<Tensor(size_t, size_t)> chain = [&](size_t i, size_t j) -> Tensor {
    if (i == j) return m[i];
    const size_t k = split[i][j];
    return chain(i, k).mm(chain(k + 1, j));
  };
  Tensor r = chain(0, n - 1);
  if (first_vec) r = r.squeeze(0);
  if (last_vec) r = r.squeeze(-1);
  return r;
}
// The deprecated form of multi_dot: matrices only, and one of them is allowed (a copy).
Tensor chain_matmul(TensorList matrices) {
  EMBER_CHECK(!matrices.empty(), "chain_matmul", "chain_matmul(): Expected one or more matrices");
  for (const Tensor& m : matrices)
    EMBER_CHECK(m.dim() == 2, "chain_matmul", "Tensor dimension is ", m.dim(), ", expected 2 instead.");
  if (matrices.size() == 1) return matrices[0].clone();
  return linalg_multi_dot(matrices);
}

Tensor linalg_matmul(const Tensor& self, const Tensor& other) { return matmul(self, other); }

Tensor frobenius_norm(const Tensor& self) { return linalg_vector_norm(self, 2); }
Tensor frobenius_norm(const Tensor& self, IntArrayRef dim, bool keepdim) {
  EMBER_CHECK(dim.size() <= 2, "frobenius_norm", "Expected at most 2 dimensions, but got ", dim.size(),
              " dimensions instead.");
  return linalg_vector_norm(self, 2, dim, keepdim);
}
Tensor nuclear_norm(const Tensor& self, bool keepdim) {
  EMBER_CHECK(self.dim() == 2, "nuclear_norm", "Expected a tensor with 2 dimensions, but got a tensor with ",
              self.dim(), " dimension", self.dim() == 1 ? "" : "s", " instead.");
  return linalg_matrix_norm(self, "nuc", {-2, -1}, keepdim);
}
Tensor nuclear_norm(const Tensor& self, IntArrayRef dim, bool keepdim) {
  return linalg_matrix_norm(self, "nuc", dim, keepdim);
}

Tensor linalg_cross(const Tensor& a, const Tensor& b, int64_t dim) {
  const char* op = "linalg.cross";
  EMBER_CHECK(a.dim() == b.dim(), op, "inputs must have the same number of dimensions.");
  EMBER_CHECK(a.dtype() == b.dtype(), op, "expected both inputs to have the same dtype, but got ", a.dtype(),
              " and ", b.dtype());
  const DimVector shape = infer_size(a.sizes(), b.sizes(), op);
  const int64_t d = wrap_dim(op, dim, static_cast<int64_t>(shape.size()));
  EMBER_CHECK(a.size(d) == 3 && b.size(d) == 3, op, "inputs dimension ", dim, " must have length 3. Got ", a.size(d),
              " and ", b.size(d));
  const Tensor x = a.expand(shape), y = b.expand(shape);
  const auto c = [&](const Tensor& t, int64_t i) { return t.narrow(d, i, 1); };
  return cat({c(x, 1) * c(y, 2) - c(x, 2) * c(y, 1), c(x, 2) * c(y, 0) - c(x, 0) * c(y, 2),
              c(x, 0) * c(y, 1) - c(x, 1) * c(y, 0)},
             d);
}

Tensor linalg_vecdot(const Tensor& x, const Tensor& y, int64_t dim) {
  const char* op = "linalg.vecdot";
  EMBER_CHECK(x.dtype() == y.dtype(), op, "Expected x and y to have the same dtype, but found x of type ", x.dtype(),
              " and y of type ", y.dtype(), " instead");
  return (x * y).sum(IntArrayRef{dim});
}

Tensor linalg_diagonal(const Tensor& A, int64_t offset, int64_t dim1, int64_t dim2) {
  return A.diagonal(offset, dim1, dim2);
}

Tensor linalg_householder_product(const Tensor& A, const Tensor& tau) {
  const char* op = "torch.linalg.householder_product";
  EMBER_CHECK(A.dim() >= 2, op, "input must have at least 2 dimensions.");
  EMBER_CHECK(A.size(-2) >= A.size(-1), op, "input.shape[-2] must be greater than or equal to input.shape[-1]");
  EMBER_CHECK(A.size(-1) >= tau.size(-1), op, "input.shape[-1] must be greater than or equal to tau.shape[-1]");
  EMBER_CHECK(A.dim() - tau.dim() == 1, op, "Expected tau to have one dimension less than input, but got tau.ndim ",
              "equal to ", tau.dim(), " and input.ndim is equal to ", A.dim());
  EMBER_CHECK(A.dtype() == tau.dtype(), op, "tau dtype ", tau.dtype(), " does not match input dtype ", A.dtype());
  check_floating_or_complex(op, A);
  const int64_t m = A.size(-2), n = A.size(-1), k = tau.size(-1);
  // H_1 ... H_k applied to the first n columns of the identity, H_i = I - tau_i v_i v_i^H with
  // v_i = (0, ..., 0, 1, A[i+1:, i])
  const Tensor V = A.tril(-1) + eye(m, n, like(A));
  Tensor Q = eye(m, n, like(A)).expand(A.sizes()).clone();
  for (int64_t i = k - 1; i >= 0; --i) {
    const Tensor v = V.narrow(-1, i, 1);                            // (..., m, 1)
    const Tensor t = tau.narrow(-1, i, 1).unsqueeze(-1);             // (..., 1, 1)
    Q = Q - (t * v).matmul(v.adjoint().matmul(Q));
  }
  return Q;
}
Tensor orgqr(const Tensor& A, const Tensor& tau) { return linalg_householder_product(A, tau); }

Tensor ormqr(const Tensor& A, const Tensor& tau, const Tensor& C, bool left, bool transpose) {
  const char* op = "torch.ormqr";
  EMBER_CHECK(A.dim() >= 2, op, "input must have at least 2 dimensions.");
  EMBER_CHECK(C.dim() >= 2, op, "other must have at least 2 dimensions.");
  const int64_t m = A.size(-2), k = tau.size(-1);
  EMBER_CHECK(k <= A.size(-1), op, "tau.shape[-1] must be less than or equal to input.shape[-1]");
  EMBER_CHECK((left ? C.size(-2) : C.size(-1)) == m, op, "other.shape[", left ? -2 : -1,
              "] must be equal to input.shape[-2]");
  // the full m x m Q = H_1 ... H_k
  const Tensor V = A.narrow(-1, 0, k).tril(-1) + eye(m, k, like(A));
  DimVector qshape = batch_shape(A);
  qshape.push_back(m);
  qshape.push_back(m);
  Tensor Q = eye(m, like(A)).expand(qshape).clone();
  for (int64_t i = k - 1; i >= 0; --i) {
    const Tensor v = V.narrow(-1, i, 1);
    const Tensor t = tau.narrow(-1, i, 1).unsqueeze(-1);
    Q = Q - (t * v).matmul(v.adjoint().matmul(Q));
  }
  const Tensor q = transpose ? Q.adjoint() : Q;  // PyTorch's "transpose" conjugates complex Q
  return left ? q.matmul(C) : C.matmul(q);
}

Tensor linalg_tensorinv(const Tensor& A, int64_t ind) {
  const char* op = "linalg.tensorinv";
  EMBER_CHECK(ind > 0, op, "Expected a strictly positive integer for 'ind', but got ", ind);
  const size_t split = static_cast<size_t>(std::min<int64_t>(ind, A.dim()));
  const DimVector out(IntArrayRef(A.sizes().data(), split)),
      in(IntArrayRef(A.sizes().data() + split, A.sizes().size() - split));
  int64_t po = 1, pi = 1;
  for (int64_t v : out) po *= v;
  for (int64_t v : in) pi *= v;
  EMBER_CHECK(po == pi, op, "Expected self to satisfy the requirement prod(self.shape[ind:]) == ",
              "prod(self.shape[:ind]), but got ", pi, " != ", po);
  return linalg_inv(A.reshape({po, pi})).reshape(concat(in, out));
}

Tensor linalg_tensorsolve(const Tensor& A_in, const Tensor& B, OptionalIntArrayRef dims) {
  const char* op = "linalg.tensorsolve";
  Tensor A = A_in;
  if (dims && !dims->empty()) {
    DimVector dest;
    for (size_t i = 0; i < dims->size(); ++i) dest.push_back(A.dim() - static_cast<int64_t>(dims->size()) + i);
    A = A.movedim(*dims, dest);
  }
  const size_t lead = static_cast<size_t>(std::min<int64_t>(B.dim(), A.dim()));
  const DimVector rest(IntArrayRef(A.sizes().data() + lead, A.sizes().size() - lead));
  int64_t pr = 1;
  for (int64_t v : rest) pr *= v;
  const int64_t pb = B.numel();
  EMBER_CHECK(pr == pb && A.numel() == pr * pb, op, "Expected self to satisfy the requirement ",
              "prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), but got ", pr, " != ",
              A.numel() / std::max<int64_t>(pr, 1));
  return linalg_solve(A.reshape({pb, pr}), B.reshape({pb})).reshape(rest);
}

Tensor linalg_vander(const Tensor& x, std::optional<int64_t> N) {
  const char* op = "linalg.vander";
  EMBER_CHECK(x.dim() >= 1, op, "x must have at least one dimension.");
  const int64_t n = N.value_or(x.size(-1));
  EMBER_CHECK(n > 1, op, "N must be greater than 1.");
  DimVector shape(x.sizes());
  shape.push_back(n - 1);
  const Tensor powers = x.unsqueeze(-1).expand(shape).cumprod(-1);
  return cat({ones_like(x).unsqueeze(-1), powers}, -1);
}

// ---- older names -------------------------------------------------------------------------------------

Tensor det(const Tensor& A) { return linalg_det(A); }
std::tuple<Tensor, Tensor> slogdet(const Tensor& A) { return linalg_slogdet(A); }
Tensor logdet(const Tensor& A) {
  auto [sign, logabs] = linalg_slogdet(A);
  // log(det) is nan for negative determinants and -inf for zero ones
  return logabs + sign.log();
}
Tensor inverse(const Tensor& A) { return linalg_inv(A); }

Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper) {
  const char* op = "cholesky_solve";
  EMBER_CHECK(B.dim() >= 2, op, "b should have at least 2 dimensions, but has ", B.dim(), " dimensions instead");
  EMBER_CHECK(L.dim() >= 2, op, "u should have at least 2 dimensions, but has ", L.dim(), " dimensions instead");
  // A = L L^H
  const Tensor lower = upper ? L.adjoint() : L;
  const Tensor y = linalg_solve_triangular(lower, B, /*upper=*/false);
  return linalg_solve_triangular(lower.adjoint(), y, /*upper=*/true);
}

Tensor cholesky_inverse(const Tensor& L, bool upper) {
  const char* op = "cholesky_inverse";
  check_square(op, L, "input");
  return cholesky_solve(eye(L.size(-1), like(L)).expand(L.sizes()), L, upper);
}

std::tuple<Tensor, Tensor> qr(const Tensor& A, bool some) { return linalg_qr(A, some ? "reduced" : "complete"); }

std::tuple<Tensor, Tensor> triangular_solve(const Tensor& B, const Tensor& A, bool upper, bool transpose,
                                            bool unitriangular) {
  const char* op = "triangular_solve";
  EMBER_CHECK(B.dim() >= 2, op, "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has ",
              B.dim(), " dimensions instead");
  EMBER_CHECK(A.dim() >= 2, op, "torch.triangular_solve: Expected A to have at least 2 dimensions, but it has ",
              A.dim(), " dimensions instead");
  const Tensor a = transpose ? A.mT() : A;
  Tensor X = linalg_solve_triangular(a, B, transpose ? !upper : upper, true, unitriangular);
  return {X, A.clone()};
}

Tensor lu_solve(const Tensor& B, const Tensor& LU_data, const Tensor& LU_pivots) {
  return linalg_lu_solve(LU_data, LU_pivots, B);
}

// ---- Tensor methods --------------------------------------------------------------------------------

Tensor Tensor::det() const { return ember::linalg_det(*this); }
Tensor Tensor::logdet() const { return ember::logdet(*this); }
std::tuple<Tensor, Tensor> Tensor::slogdet() const { return ember::linalg_slogdet(*this); }
Tensor Tensor::inverse() const { return ember::linalg_inv(*this); }
Tensor Tensor::cholesky(bool upper) const { return ember::cholesky(*this, upper); }
Tensor Tensor::cholesky_solve(const Tensor& input2, bool upper) const {
  return ember::cholesky_solve(*this, input2, upper);
}
Tensor Tensor::cholesky_inverse(bool upper) const { return ember::cholesky_inverse(*this, upper); }
std::tuple<Tensor, Tensor> Tensor::qr(bool some) const { return ember::qr(*this, some); }
std::tuple<Tensor, Tensor, Tensor> Tensor::svd(bool some, bool compute_uv) const {
  return ember::svd(*this, some, compute_uv);
}
std::tuple<Tensor, Tensor> Tensor::symeig(bool eigenvectors, bool upper) const {
  return ember::symeig(*this, eigenvectors, upper);
}
std::tuple<Tensor, Tensor> Tensor::triangular_solve(const Tensor& A, bool upper, bool transpose,
                                                    bool unitriangular) const {
  return ember::triangular_solve(*this, A, upper, transpose, unitriangular);
}
Tensor Tensor::lu_solve(const Tensor& LU_data, const Tensor& LU_pivots) const {
  return ember::lu_solve(*this, LU_data, LU_pivots);
}
Tensor Tensor::matrix_power(int64_t n) const { return ember::linalg_matrix_power(*this, n); }
Tensor Tensor::matrix_exp() const { return ember::linalg_matrix_exp(*this); }
Tensor Tensor::pinverse(double rcond) const { return ember::pinverse(*this, rcond); }
std::tuple<Tensor, Tensor> Tensor::geqrf() const { return ember::geqrf(*this); }
Tensor Tensor::orgqr(const Tensor& input2) const { return ember::orgqr(*this, input2); }
Tensor Tensor::ormqr(const Tensor& input2, const Tensor& input3, bool left, bool transpose) const {
  return ember::ormqr(*this, input2, input3, left, transpose);
}

}  // namespace ember
