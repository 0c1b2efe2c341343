#include "ember/nn/utils/parametrizations.h"

#include <limits>

#include "ember/aten_tail2.h"
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/linalg.h"
#include "ember/linalg_functions.h"
#include "ember/nn/functional/normalization.h"
#include "ember/nn/modules/conv.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"

namespace ember::nn::utils::parametrizations {
namespace {

// module.<name> as PyTorch's getattr: a parameter, a buffer or a parametrized tensor.
Tensor tensor_of(Module& module, const std::string& name, const char* op) {
  if (parametrize::is_parametrized(module, name)) return module.parametrizations[name]->value();
  const auto params = module.named_parameters(/*recurse=*/false);
  if (params.contains(name)) return params[name];
  const auto bufs = module.named_buffers(/*recurse=*/false);
  EMBER_CHECK(bufs.contains(name), op, "Module '", module.name(), "' has no parameter or buffer with name '", name,
              "'");
  return bufs[name];
}

// PyTorch's default dim of spectral_norm: 1 for transposed convolutions (their output channels).
int64_t default_spectral_dim(Module& module) {
  return dynamic_cast<ConvTranspose1dImpl*>(&module) || dynamic_cast<ConvTranspose2dImpl*>(&module) ||
                 dynamic_cast<ConvTranspose3dImpl*>(&module)
             ? 1
             : 0;
}

// The Q of A = QR with diag(R) >= 0, A tall (PyTorch's _make_orthogonal).
Tensor make_orthogonal(const Tensor& A) {
  auto [X, tau] = geqrf(A);
  return linalg_householder_product(X, tau) * X.diagonal(0, -2, -1).sgn().unsqueeze(-2);
}

bool is_orthogonal(const Tensor& Q) {
  const int64_t n = Q.size(-2), k = Q.size(-1);
  const double eps = Q.dtype() == kDouble ? std::numeric_limits<double>::epsilon()
                                          : static_cast<double>(std::numeric_limits<float>::epsilon());
  return Q.mT().matmul(Q).allclose(eye(k, Q.options()), 1e-5, 10.0 * static_cast<double>(n) * eps);
}

}  // namespace

// ---- weight_norm ----------------------------------------------------------------------------------

WeightNormImpl::WeightNormImpl(std::optional<int64_t> dim_) : Module("_WeightNorm"), dim(dim_.value_or(-1)) {}

Tensor WeightNormImpl::forward(const std::vector<Tensor>& g_and_v) {
  EMBER_CHECK(g_and_v.size() == 2, "weight_norm", "expected the originals (g, v), got ", g_and_v.size(),
              " tensors");
  const Tensor& g = g_and_v[0];
  const Tensor& v = g_and_v[1];
  return v * (g / norm_except_dim(v, 2, dim));
}

std::vector<Tensor> WeightNormImpl::right_inverse(const Tensor& weight) {
  return {norm_except_dim(weight, 2, dim), weight};
}

// ---- spectral_norm --------------------------------------------------------------------------------

SpectralNormImpl::SpectralNormImpl(const Tensor& weight, int64_t n_power_iterations_, int64_t dim_, double eps_)
    : Module("_SpectralNorm"), n_power_iterations(n_power_iterations_), dim(dim_), eps(eps_) {
  init_vectors(weight);
  if (_u.defined()) power_method(to_matrix(weight.detach()), 15);
}

SpectralNormImpl::SpectralNormImpl(Classic, const Tensor& weight, int64_t n_power_iterations_, int64_t dim_,
                                   double eps_)
    : Module("SpectralNorm"), n_power_iterations(n_power_iterations_), dim(dim_), eps(eps_), classic_(true) {
  init_vectors(weight);
}

void SpectralNormImpl::init_vectors(const Tensor& weight) {
  const int64_t ndim = weight.dim();
  EMBER_CHECK(dim >= -ndim && dim < ndim, "spectral_norm", "Dimension out of range (expected to be in range of [",
              -ndim, ", ", ndim - 1, "] but got ", dim, ")");
  EMBER_CHECK(n_power_iterations > 0, "spectral_norm",
              "Expected n_power_iterations to be positive, but got n_power_iterations=", n_power_iterations);
  if (dim < 0) dim += ndim;
  if (ndim == 1 && !classic_) return;  // normalized exactly
  NoGradGuard no_grad;
  const Tensor w = to_matrix(weight.detach());
  const auto unit = functional::NormalizeFuncOptions().dim(0).eps(eps);
  _u = register_buffer("_u", functional::normalize(empty({w.size(0)}, w.options()).normal_(0, 1), unit));
  _v = register_buffer("_v", functional::normalize(empty({w.size(1)}, w.options()).normal_(0, 1), unit));
}

Tensor SpectralNormImpl::to_matrix(const Tensor& weight) const {
  if (dim == 0) return weight.reshape({weight.size(0), -1});
  std::vector<int64_t> order{dim};
  for (int64_t d = 0; d < weight.dim(); ++d)
    if (d != dim) order.push_back(d);
  return weight.permute(order).reshape({weight.size(dim), -1});
}

void SpectralNormImpl::power_method(const Tensor& weight_mat, int64_t iterations) {
  NoGradGuard no_grad;
  const auto unit = functional::NormalizeFuncOptions().dim(0).eps(eps);
  for (int64_t i = 0; i < iterations; ++i) {
    if (classic_) {
      _v.copy_(functional::normalize(mv(weight_mat.t(), _u), unit));
      _u.copy_(functional::normalize(mv(weight_mat, _v), unit));
    } else {
      _u.copy_(functional::normalize(mv(weight_mat, _v), unit));
      _v.copy_(functional::normalize(mv(weight_mat.t(), _u), unit));
    }
  }
}

Tensor SpectralNormImpl::forward(const Tensor& weight) {
  if (!_u.defined()) return functional::normalize(weight, functional::NormalizeFuncOptions().dim(0).eps(eps));
  const Tensor w = to_matrix(weight);
  if (is_training()) power_method(w.detach(), n_power_iterations);
  // Clones: the buffers change in place at the next computation, after this graph saved them.
  const Tensor sigma = vdot(_u.clone(), mv(w, _v.clone()));
  return weight / sigma;
}

// ---- orthogonal -----------------------------------------------------------------------------------

OrthogonalImpl::OrthogonalImpl(const Tensor& weight, Map orthogonal_map_, bool use_trivialization_)
    : Module("_Orthogonal"),
      orthogonal_map(orthogonal_map_),
      use_trivialization(use_trivialization_),
      shape_(weight.sizes().vec()) {
  if (use_trivialization) register_buffer("base", Tensor());
}

Tensor OrthogonalImpl::forward(const Tensor& input) {
  Tensor X = input;
  int64_t n = X.size(-2), k = X.size(-1);
  const bool transposed = n < k;
  if (transposed) {
    X = X.mT();
    std::swap(n, k);
  }
  Tensor Q;
  if (orthogonal_map == Map::householder) {
    const Tensor A = X.tril(-1);
    const Tensor tau = 2.0 / (1.0 + (A * A).sum({-2}));
    Q = linalg_householder_product(A, tau);
    // The diagonal of X holds the signs (+-1), not differentiated through.
    Q = Q * X.diagonal(0, -2, -1).to(kInt).unsqueeze(-2);
  } else {
    X = X.tril();
    if (n != k) {
      std::vector<int64_t> pad_shape = X.sizes().vec();
      pad_shape.back() = n - k;
      X = cat({X, zeros(pad_shape, X.options())}, -1);
    }
    const Tensor A = X - X.mT();
    if (orthogonal_map == Map::matrix_exp) {
      Q = matrix_exp(A);
    } else {
      const Tensor I = eye(n, A.options());
      Q = linalg_solve(I - A * 0.5, I + A * 0.5);
    }
    if (n != k) Q = Q.narrow(-1, 0, k);
  }
  if (use_trivialization) {
    EMBER_CHECK(base.defined(), "orthogonal", "the base is not set (right_inverse was not called)");
    Q = base.matmul(Q);
  }
  return transposed ? Q.mT() : Q;
}

Tensor OrthogonalImpl::right_inverse(const Tensor& value) {
  NoGradGuard no_grad;
  EMBER_CHECK(value.sizes() == IntArrayRef(shape_), "orthogonal", "Expected a matrix or batch of matrices of shape ",
              IntArrayRef(shape_), ". Got a tensor of shape ", value.sizes(), ".");
  Tensor Q = value;
  int64_t n = Q.size(-2), k = Q.size(-1);
  const bool transposed = n < k;
  if (transposed) {
    Q = Q.mT();
    std::swap(n, k);
  }
  if (!use_trivialization) {
    if (orthogonal_map != Map::householder)
      throw parametrize::NotImplementedError(
          "orthogonal: It is not possible to assign to the matrix exponential or the Cayley parametrizations when "
          "use_trivialization=False.");
    auto [A, tau] = geqrf(Q);
    // diag(R) > 0, so that -Q = Q (-I) is not another answer; tau == 0 marks a reflection not used.
    Tensor diag = A.diagonal(0, -2, -1);
    diag.sign_();
    diag.mul_(1.0 - 2.0 * tau.eq(0).to(diag.dtype()));
    return transposed ? A.mT() : A;
  }
  if (n == k) {
    Q = is_orthogonal(Q) ? Q.clone() : make_orthogonal(Q);
  } else {
    std::vector<int64_t> extra = Q.sizes().vec();
    extra.back() = n - k;
    Q = make_orthogonal(cat({Q, randn(extra, Q.options())}, -1));
  }
  base = Q;
  buffers_["base"] = Q;
  // -I: householder(zeros) is then eye.
  Tensor neg_id = zeros_like(value);
  neg_id.diagonal(0, -2, -1).fill_(-1.0);
  return neg_id;
}

// ---- registration ---------------------------------------------------------------------------------

void weight_norm(Module& module, const std::string& name, std::optional<int64_t> dim) {
  parametrize::register_parametrization(module, name, std::make_shared<WeightNormImpl>(dim), /*unsafe=*/true);
}

void spectral_norm(Module& module, const std::string& name, int64_t n_power_iterations, double eps,
                   std::optional<int64_t> dim) {
  const Tensor weight = tensor_of(module, name, "spectral_norm");
  parametrize::register_parametrization(
      module, name,
      std::make_shared<SpectralNormImpl>(weight, n_power_iterations, dim.value_or(default_spectral_dim(module)), eps));
}

void orthogonal(Module& module, const std::string& name, const std::optional<std::string>& orthogonal_map,
                bool use_trivialization) {
  const Tensor weight = tensor_of(module, name, "orthogonal");
  EMBER_CHECK(weight.dim() >= 2, "orthogonal", "Expected a matrix or batch of matrices. Got a tensor of ",
              weight.dim(), " dimensions.");
  const std::string map = orthogonal_map.value_or(weight.size(-2) == weight.size(-1) ? "matrix_exp" : "householder");
  OrthogonalImpl::Map m;
  if (map == "matrix_exp") {
    m = OrthogonalImpl::Map::matrix_exp;
  } else if (map == "cayley") {
    m = OrthogonalImpl::Map::cayley;
  } else {
    EMBER_CHECK(map == "householder", "orthogonal",
                "orthogonal_map has to be one of \"matrix_exp\", \"cayley\", \"householder\". Got: ", map);
    m = OrthogonalImpl::Map::householder;
  }
  parametrize::register_parametrization(module, name, std::make_shared<OrthogonalImpl>(weight, m, use_trivialization),
                                        /*unsafe=*/true);
}

}  // namespace ember::nn::utils::parametrizations

namespace ember::nn::utils {

void weight_norm(Module& module, const std::string& name, std::optional<int64_t> dim) {
  parametrize::detail::register_hook(
      module, name, parametrize::detail::make_parametrization(std::make_shared<parametrizations::WeightNormImpl>(dim)),
      {name + "_g", name + "_v"}, {}, "weight_norm");
}

void remove_weight_norm(Module& module, const std::string& name) {
  parametrize::detail::remove_hook(module, name, {name + "_g", name + "_v"}, "weight_norm");
}

void spectral_norm(Module& module, const std::string& name, int64_t n_power_iterations, double eps,
                   std::optional<int64_t> dim) {
  const auto params = module.named_parameters(/*recurse=*/false);
  EMBER_CHECK(params.contains(name), "spectral_norm", "Module '", module.name(), "' has no parameter '", name, "'");
  auto sn = std::make_shared<parametrizations::SpectralNormImpl>(parametrizations::SpectralNormImpl::Classic{},
                                                                 params[name], n_power_iterations,
                                                                 dim.value_or(parametrizations::default_spectral_dim(module)), eps);
  const std::vector<std::pair<std::string, Tensor>> buffers{{name + "_u", sn->_u}, {name + "_v", sn->_v}};
  parametrize::detail::register_hook(module, name, parametrize::detail::make_parametrization(sn), {name + "_orig"},
                                     buffers, "spectral_norm");
}

void remove_spectral_norm(Module& module, const std::string& name) {
  parametrize::detail::remove_hook(module, name, {name + "_orig", name + "_u", name + "_v"}, "spectral_norm");
}

}  // namespace ember::nn::utils
