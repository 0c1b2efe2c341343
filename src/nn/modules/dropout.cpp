#include "ember/nn/modules/dropout.h"

#include "ember/nn_ops.h"

namespace ember::nn {
namespace {
constexpr const char* kNames[] = {"Dropout", "FeatureDropout", "Dropout2d"};
}

template <int Kind>
DropoutImplT<Kind>::DropoutImplT(const DropoutOptions& options) : options(options) {
  reset();
}

template <int Kind>
void DropoutImplT<Kind>::reset() {
  EMBER_CHECK(options.p() >= 0 && options.p() <= 1, kNames[Kind],
              "dropout probability has to be between 0 and 1, but got ", options.p());
}

template <int Kind>
Tensor DropoutImplT<Kind>::forward(const Tensor& input) {
  if constexpr (Kind == 0) return functional::dropout(input, options.p(), is_training());
  if constexpr (Kind == 1) return functional::feature_dropout(input, options.p(), is_training());
  if constexpr (Kind == 2) return functional::dropout2d(input, options.p(), is_training());
}

template <int Kind>
void DropoutImplT<Kind>::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "torch::nn::" << kNames[Kind] << "(p=" << options.p()
         << ", inplace=" << options.inplace() << ")";
}

namespace functional {
Tensor dropout(const Tensor& input, const DropoutFuncOptions& options) {
  EMBER_CHECK(options.p() >= 0 && options.p() <= 1, "dropout", "dropout probability has to be between 0 and 1, but got ",
              options.p());
  return dropout(input, options.p(), options.training());
}
Tensor dropout2d(const Tensor& input, const Dropout2dFuncOptions& options) {
  EMBER_CHECK(options.p() >= 0 && options.p() <= 1, "dropout2d",
              "dropout probability has to be between 0 and 1, but got ", options.p());
  return dropout2d(input, options.p(), options.training());
}
}  // namespace functional

template class DropoutImplT<0>;
template class DropoutImplT<1>;
template class DropoutImplT<2>;

}  // namespace ember::nn
