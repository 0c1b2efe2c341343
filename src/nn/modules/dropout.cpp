#include "ember/nn/modules/dropout.h"

#include <algorithm>
#include <cmath>

#include "ember/aten_tail.h"
#include "ember/aten_tail2.h"
#include "ember/factory.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"

namespace ember::nn {
namespace {
constexpr const char* kNames[] = {"Dropout", "FeatureDropout", "Dropout2d", "Dropout3d", "AlphaDropout",
                                  "FeatureAlphaDropout"};

void check_p(const char* op, double p) {
  EMBER_CHECK(p >= 0 && p <= 1, op, "dropout probability has to be between 0 and 1, but got ", p);
}

// PyTorch's _dropout_impl for alpha dropout: the noise drawn by bernoulli_(1 - p), dropped entries
// take SELU's negative saturation, then a * x + b restores mean 0 and variance 1. feature: one
// draw per (dim 0, dim 1) entry.
Tensor alpha_dropout_impl(const char* op, const Tensor& input, double p, bool training, bool feature) {
  check_p(op, p);
  if (p == 0 || !training || input.numel() == 0) return input;
  if (p == 1) return input * zeros({}, TensorOptions().dtype(input.dtype()));
  EMBER_CHECK(!feature || input.dim() >= 2, op, "Feature dropout requires at least 2 dimensions in the input, got ",
              input.sizes());
  constexpr double kAlpha = 1.7580993408473766;  // SELU's scale * alpha
  const double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1) * (1 - p));
  DimVector shape(input.sizes());
  if (feature) std::fill(shape.begin() + 2, shape.end(), 1);
  const Tensor keep = bernoulli(empty(shape, TensorOptions().dtype(input.dtype())), 1 - p);
  const Tensor b = (keep - 1) * (kAlpha * a) + kAlpha * a * p;
  return input * (keep * a) + b;
}
}  // namespace

template <int Kind>
DropoutImplT<Kind>::DropoutImplT(const DropoutOptions& options) : options(options) {
  reset();
}

template <int Kind>
void DropoutImplT<Kind>::reset() {
  check_p(kNames[Kind], options.p());
}

template <int Kind>
Tensor DropoutImplT<Kind>::forward(const Tensor& input) {
  const auto o = functional::DropoutFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace());
  const auto alpha = functional::AlphaDropoutFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace());
  if constexpr (Kind == 0) return functional::dropout(input, o);
  if constexpr (Kind == 1) {
    Tensor self = input;
    return o.inplace() ? ember::feature_dropout_(self, o.p(), o.training()) : ember::feature_dropout(input, o.p(), o.training());
  }
  if constexpr (Kind == 2) return functional::dropout2d(input, o);
  if constexpr (Kind == 3) return functional::dropout3d(input, o);
  if constexpr (Kind == 4) return functional::alpha_dropout(input, alpha);
  if constexpr (Kind == 5) return functional::feature_alpha_dropout(input, alpha);
}

template <int Kind>
void DropoutImplT<Kind>::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "torch::nn::" << kNames[Kind] << "(p=" << options.p()
         << ", inplace=" << options.inplace() << ")";
}

namespace functional {
// With inplace(true) the dropout runs in place on the input, which is returned, as libtorch's.
Tensor dropout(const Tensor& input, const DropoutFuncOptions& options) {
  check_p("dropout", options.p());
  Tensor self = input;
  return options.inplace() ? ember::dropout_(self, options.p(), options.training())
                           : ember::dropout(input, options.p(), options.training());
}
Tensor dropout2d(const Tensor& input, const Dropout2dFuncOptions& options) {
  check_p("dropout2d", options.p());
  Tensor self = input;
  return options.inplace() ? ember::feature_dropout_(self, options.p(), options.training())
                           : ember::dropout2d(input, options.p(), options.training());
}
Tensor dropout3d(const Tensor& input, const Dropout3dFuncOptions& options) {
  check_p("dropout3d", options.p());
  EMBER_CHECK(input.dim() == 4 || input.dim() == 5, "dropout3d",
              "dropout3d: Expected 4D or 5D input, got a tensor of shape ", input.sizes());
  // An unbatched (C, D, H, W) input gets a batch dim so each channel draws once.
  Tensor batched = input.dim() == 4 ? input.unsqueeze(0) : input;
  if (options.inplace()) {
    ember::feature_dropout_(batched, options.p(), options.training());
    return input;
  }
  const Tensor out = ember::feature_dropout(batched, options.p(), options.training());
  return input.dim() == 4 ? out.squeeze(0) : out;
}
Tensor alpha_dropout(const Tensor& input, const AlphaDropoutFuncOptions& options) {
  if (!options.inplace()) return alpha_dropout_impl("alpha_dropout", input, options.p(), options.training(), false);
  Tensor self = input;
  return ember::alpha_dropout_(self, options.p(), options.training());
}
Tensor feature_alpha_dropout(const Tensor& input, const FeatureAlphaDropoutFuncOptions& options) {
  if (!options.inplace()) return alpha_dropout_impl("feature_alpha_dropout", input, options.p(), options.training(), true);
  Tensor self = input;
  return ember::feature_alpha_dropout_(self, options.p(), options.training());
}
}  // namespace functional

template class DropoutImplT<0>;
template class DropoutImplT<1>;
template class DropoutImplT<2>;
template class DropoutImplT<3>;
template class DropoutImplT<4>;
template class DropoutImplT<5>;

}  // namespace ember::nn
