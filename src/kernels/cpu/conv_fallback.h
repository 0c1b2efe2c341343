// Convolution without oneDNN (float64, and shapes oneDNN declines): im2col / col2im with a plain
// GEMM, over three spatial dims (1-D and 2-D convolutions arrive with leading size-1 dims).
#pragma once
#include "ember/tensor.h"

namespace ember::kernels {

struct ConvGeometry {
  int64_t batch, in_channels, out_channels, groups;
  int64_t in[3], out[3], kernel[3], stride[3], padding[3], dilation[3];
};

// x (N, C_in, D, H, W), out (N, C_out, oD, oH, oW), bias (C_out) or undefined, all contiguous and
// of one dtype (float or double). weight (C_out, C_in/g, kD, kH, kW), or for a transposed
// convolution (C_in, C_out/g, kD, kH, kW), contiguous. out is overwritten.
void conv_fallback(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out,
                   const ConvGeometry& g, bool transposed);
// The weight gradient of the forward (not transposed) convolution `g`: x (N, C_in, D, H, W), grad
// (N, C_out, oD, oH, oW), grad_weight (C_out, C_in/g, kD, kH, kW) overwritten; contiguous, one
// dtype (float or double). A transposed convolution's weight gradient is this one with x the
// output's gradient and grad the transposed convolution's input.
void conv_fallback_weight_grad(const Tensor& x, const Tensor& grad, const Tensor& grad_weight, const ConvGeometry& g);

}  // namespace ember::kernels
