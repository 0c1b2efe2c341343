// nn::utils::parametrizations: PyTorch's built-in parametrizations (torch.nn.utils.parametrizations),
// registered through nn::utils::parametrize on a module's tensor.
//   weight_norm(linear);                 // parametrizations.weight.original0 (g), .original1 (v)
//   spectral_norm(conv);                 // parametrizations.weight.original, .0._u, .0._v
//   orthogonal(linear, "weight", "cayley");
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ember/nn/utils/parametrize.h"

namespace ember::nn::utils::parametrizations {

// weight = v * g / norm_except_dim(v, 2, dim) (torch._weight_norm); dim nullopt is -1 (the whole tensor).
class WeightNormImpl : public Module {
 public:
  explicit WeightNormImpl(std::optional<int64_t> dim = 0);
  Tensor forward(const std::vector<Tensor>& g_and_v);
  std::vector<Tensor> right_inverse(const Tensor& weight);
  int64_t dim;
};

// weight / sigma, sigma the largest singular value of the weight as a matrix (dim first, the
// rest flattened), estimated by power iteration on the buffers _u and _v: n_power_iterations
// steps per computation in training mode, none in eval mode. 1-D weights are normalized exactly.
class SpectralNormImpl : public Module {
 public:
  SpectralNormImpl(const Tensor& weight, int64_t n_power_iterations = 1, int64_t dim = 0, double eps = 1e-12);
  // nn::utils::spectral_norm's variant (PyTorch's classic hook): random _u, _v without initial
  // iterations, _v updated before _u, and 1-D weights treated as a column.
  struct Classic {};
  SpectralNormImpl(Classic, const Tensor& weight, int64_t n_power_iterations, int64_t dim, double eps);
  Tensor forward(const Tensor& weight);
  Tensor right_inverse(const Tensor& value) { return value; }
  int64_t n_power_iterations, dim;
  double eps;
  Tensor _u, _v;

 private:
  bool classic_ = false;
  void init_vectors(const Tensor& weight);
  Tensor to_matrix(const Tensor& weight) const;
  void power_method(const Tensor& weight_mat, int64_t iterations);
};

// An orthogonal (semi-orthogonal for a non-square) matrix or batch of them: the matrix exponential
// or Cayley map of a skew-symmetric matrix, or a product of Householder reflectors. With
// use_trivialization the result is base @ map(original) and assigning sets `base`.
class OrthogonalImpl : public Module {
 public:
  enum class Map { matrix_exp, cayley, householder };
  OrthogonalImpl(const Tensor& weight, Map orthogonal_map, bool use_trivialization = true);
  Tensor forward(const Tensor& X);
  Tensor right_inverse(const Tensor& Q);
  Map orthogonal_map;
  bool use_trivialization;
  Tensor base;

 private:
  std::vector<int64_t> shape_;
};

void weight_norm(Module& module, const std::string& name = "weight", std::optional<int64_t> dim = 0);
// dim nullopt: 1 for ConvTranspose modules, 0 otherwise (as PyTorch).
void spectral_norm(Module& module, const std::string& name = "weight", int64_t n_power_iterations = 1,
                   double eps = 1e-12, std::optional<int64_t> dim = std::nullopt);
// orthogonal_map nullopt: "matrix_exp" for square matrices, "householder" otherwise.
void orthogonal(Module& module, const std::string& name = "weight",
                const std::optional<std::string>& orthogonal_map = std::nullopt, bool use_trivialization = true);

template <class M>
  requires(!std::is_base_of_v<Module, std::remove_cvref_t<M>>)
void weight_norm(M&& module, const std::string& name = "weight", std::optional<int64_t> dim = 0) {
  weight_norm(ember::detail::module_of(module), name, dim);
}
template <class M>
  requires(!std::is_base_of_v<Module, std::remove_cvref_t<M>>)
void spectral_norm(M&& module, const std::string& name = "weight", int64_t n_power_iterations = 1,
                   double eps = 1e-12, std::optional<int64_t> dim = std::nullopt) {
  spectral_norm(ember::detail::module_of(module), name, n_power_iterations, eps, dim);
}
template <class M>
  requires(!std::is_base_of_v<Module, std::remove_cvref_t<M>>)
void orthogonal(M&& module, const std::string& name = "weight",
                const std::optional<std::string>& orthogonal_map = std::nullopt, bool use_trivialization = true) {
  orthogonal(ember::detail::module_of(module), name, orthogonal_map, use_trivialization);
}

}  // namespace ember::nn::utils::parametrizations

namespace ember::nn::utils {

// PyTorch's classic hooks (torch.nn.utils.weight_norm / spectral_norm; libtorch 1.13's C++ API has
// neither): the module's parameters become `<name>_g` and `<name>_v` (weight_norm), or
// `<name>_orig` with buffers `<name>_u` and `<name>_v` (spectral_norm), and module-><name> is
// computed from them as under register_parametrization (ember/nn/utils/parametrize.h).
void weight_norm(Module& module, const std::string& name = "weight", std::optional<int64_t> dim = 0);
void remove_weight_norm(Module& module, const std::string& name = "weight");
// dim nullopt: 1 for ConvTranspose modules, 0 otherwise.
void spectral_norm(Module& module, const std::string& name = "weight", int64_t n_power_iterations = 1,
                   double eps = 1e-12, std::optional<int64_t> dim = std::nullopt);
void remove_spectral_norm(Module& module, const std::string& name = "weight");

template <class M>
  requires(!std::is_base_of_v<Module, std::remove_cvref_t<M>>)
void weight_norm(M&& module, const std::string& name = "weight", std::optional<int64_t> dim = 0) {
  weight_norm(ember::detail::module_of(module), name, dim);
}
template <class M>
  requires(!std::is_base_of_v<Module, std::remove_cvref_t<M>>)
void remove_weight_norm(M&& module, const std::string& name = "weight") {
  remove_weight_norm(ember::detail::module_of(module), name);
}
template <class M>
  requires(!std::is_base_of_v<Module, std::remove_cvref_t<M>>)
void spectral_norm(M&& module, const std::string& name = "weight", int64_t n_power_iterations = 1,
                   double eps = 1e-12, std::optional<int64_t> dim = std::nullopt) {
  spectral_norm(ember::detail::module_of(module), name, n_power_iterations, eps, dim);
}
template <class M>
  requires(!std::is_base_of_v<Module, std::remove_cvref_t<M>>)
void remove_spectral_norm(M&& module, const std::string& name = "weight") {
  remove_spectral_norm(ember::detail::module_of(module), name);
}

}  // namespace ember::nn::utils
