// F::pixel_shuffle/unshuffle and F::interpolate.
#pragma once
#include "ember/nn/options/pixelshuffle.h"
#include "ember/nn/options/upsampling.h"
#include "ember/tensor.h"

namespace ember::nn::functional {
Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& options);
Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& options);
// Modes kNearest (3-D/4-D input), kLinear (3-D), kBilinear (4-D) and kArea; the others raise.
Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options = {});
}  // namespace ember::nn::functional
