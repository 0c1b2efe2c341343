// Dropout (elements), Dropout2d/Dropout3d/FeatureDropout (whole channels), AlphaDropout and
// FeatureAlphaDropout (SELU-preserving). Identity in eval mode.
#pragma once
#include "ember/nn/functional/dropout.h"
#include "ember/nn/options/dropout.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

// Kind: 0 elements (Dropout), 1 channels (FeatureDropout), 2 channels of (N, C, H, W) (Dropout2d),
// 3 channels of (N, C, D, H, W) (Dropout3d), 4 AlphaDropout, 5 FeatureAlphaDropout.
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
#define EMBER_DROPOUT_MODULE(Name, Kind)              \
  class Name##Impl : public DropoutImplT<Kind> {      \
   public:                                            \
    using DropoutImplT<Kind>::DropoutImplT;           \
  };                                                  \
  EMBER_MODULE(Name);
EMBER_DROPOUT_MODULE(Dropout, 0)
EMBER_DROPOUT_MODULE(FeatureDropout, 1)
EMBER_DROPOUT_MODULE(Dropout2d, 2)
EMBER_DROPOUT_MODULE(Dropout3d, 3)
EMBER_DROPOUT_MODULE(AlphaDropout, 4)
EMBER_DROPOUT_MODULE(FeatureAlphaDropout, 5)
#undef EMBER_DROPOUT_MODULE

}  // namespace ember::nn
