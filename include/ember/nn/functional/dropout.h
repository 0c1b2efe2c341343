// The functional dropouts with libtorch's FuncOptions.
#pragma once
#include "ember/nn/options/dropout.h"
#include "ember/tensor.h"

namespace ember::nn::functional {
Tensor dropout(const Tensor& input, const DropoutFuncOptions& options = {});
Tensor dropout2d(const Tensor& input, const Dropout2dFuncOptions& options = {});
Tensor dropout3d(const Tensor& input, const Dropout3dFuncOptions& options = {});
// Keeps mean 0 and variance 1 of SELU activations: dropped entries become SELU's negative
// saturation, then an affine map restores the moments.
Tensor alpha_dropout(const Tensor& input, const AlphaDropoutFuncOptions& options = {});
// alpha_dropout with one draw per channel (dims 0 and 1).
Tensor feature_alpha_dropout(const Tensor& input, const FeatureAlphaDropoutFuncOptions& options = {});
}  // namespace ember::nn::functional
