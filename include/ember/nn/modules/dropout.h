// Dropout (elements), Dropout2d and FeatureDropout (whole channels). Identity in eval mode.
#pragma once
#include "ember/nn/options.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT
  EMBER_ARG(double, p);
  // Accepted for libtorch's spelling; the result is always a new tensor.
  EMBER_ARG(bool, inplace) = false;
};
using Dropout2dOptions = DropoutOptions;
using FeatureDropoutOptions = DropoutOptions;

// Kind: 0 elements (Dropout), 2 channels of (N, C, H, W) (Dropout2d), 1 channels (FeatureDropout).
template <int Kind>
class DropoutImplT : public Module {
 public:
  explicit DropoutImplT(double p) : DropoutImplT(DropoutOptions(p)) {}
  explicit DropoutImplT(const DropoutOptions& options = {});
  void reset();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  DropoutOptions options;
};
class DropoutImpl : public DropoutImplT<0> {
 public:
  using DropoutImplT<0>::DropoutImplT;
};
class Dropout2dImpl : public DropoutImplT<2> {
 public:
  using DropoutImplT<2>::DropoutImplT;
};
class FeatureDropoutImpl : public DropoutImplT<1> {
 public:
  using DropoutImplT<1>::DropoutImplT;
};
EMBER_MODULE(Dropout);
EMBER_MODULE(Dropout2d);
EMBER_MODULE(FeatureDropout);

namespace functional {
struct DropoutFuncOptions {
  EMBER_ARG(double, p) = 0.5;
  EMBER_ARG(bool, training) = true;
  EMBER_ARG(bool, inplace) = false;  // accepted; the result is a new tensor
};
using Dropout2dFuncOptions = DropoutFuncOptions;
// F::dropout(x, F::DropoutFuncOptions().p(0.2).training(is_training())).
Tensor dropout(const Tensor& input, const DropoutFuncOptions& options);
Tensor dropout2d(const Tensor& input, const Dropout2dFuncOptions& options);
}  // namespace functional

}  // namespace ember::nn
