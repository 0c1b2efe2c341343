// F::pixel_shuffle/unshuffle, F::interpolate, F::affine_grid and F::grid_sample.
#pragma once
#include "ember/nn/options/pixelshuffle.h"
#include "ember/nn/options/upsampling.h"
#include "ember/nn/options/vision.h"
#include "ember/tensor.h"

namespace ember::nn::functional {
Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& options);
Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& options);
// Modes kNearest (3-D/4-D input), kLinear (3-D), kBilinear (4-D) and kArea; the others raise.
Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options = {});
// The sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) of the affine maps theta (N, 2, 3) (or
// (N, 3, 4)) for an output of `size` (N, C, H, W) (or (N, C, D, H, W)).
Tensor affine_grid(const Tensor& theta, const IntArrayRef& size, bool align_corners = false);
// input (N, C, H, W) sampled at grid (N, H_out, W_out, 2) in [-1, 1] (x, y): bilinear or nearest,
// padding kZeros, kBorder or kReflection. 5-D inputs are not supported.
Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options = {});
}  // namespace ember::nn::functional
