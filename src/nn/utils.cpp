#include "ember/nn/utils.h"

#include <cmath>

#include "ember/autograd.h"
#include "ember/indexing.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/shape.h"

namespace ember::nn::utils {

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return 0.0;
  double total = 0;
  if (std::isinf(norm_type)) {
    for (const Tensor& g : grads) total = std::max(total, g.abs().max().item<double>());
  } else {
    // The norm of the per-tensor norms is the norm of all elements together.
    for (const Tensor& g : grads) total += std::pow(g.norm(norm_type).item<double>(), norm_type);
    total = std::pow(total, 1.0 / norm_type);
  }
  EMBER_CHECK(!error_if_nonfinite || std::isfinite(total), "clip_grad_norm_", "The total norm of order ", norm_type,
              " for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and "
              "scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=false`");
  const double coef = max_norm / (total + 1e-6);
  if (coef < 1) {
    for (const Tensor& g : grads) const_cast<Tensor&>(g).mul_(coef);
  }
  return total;
}

double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type, bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  NoGradGuard no_grad;
  for (const Tensor& p : parameters)
    if (p.grad().defined()) p.mutable_grad().clamp_(-clip_value, clip_value);
}

void clip_grad_value_(const Tensor& parameter, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{parameter}, clip_value);
}

Tensor parameters_to_vector(const std::vector<Tensor>& parameters) {
  std::vector<Tensor> flat;
  flat.reserve(parameters.size());
  for (const Tensor& p : parameters) flat.push_back(p.reshape({-1}));
  return cat(flat);
}

void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters) {
  EMBER_CHECK(vec.dim() == 1, "vector_to_parameters", "expected vec to be a 1-D tensor, but got ", vec.sizes());
  int64_t total = 0;
  for (const Tensor& p : parameters) total += p.numel();
  EMBER_CHECK(vec.numel() == total, "vector_to_parameters", "vec has ", vec.numel(),
              " elements but the parameters have ", total);
  NoGradGuard no_grad;
  int64_t offset = 0;
  for (const Tensor& p : parameters) {
    const_cast<Tensor&>(p).copy_(vec.narrow(0, offset, p.numel()).view(p.sizes()));
    offset += p.numel();
  }
}

}  // namespace ember::nn::utils
