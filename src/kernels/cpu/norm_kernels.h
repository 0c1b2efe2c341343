// Normalization loops. Row kernels (layer_norm, rms_norm, and the statistics of group and
// instance norm) are vectorized with Highway; all take contiguous tensors of one float dtype.
#pragma once
#include "ember/tensor.h"

namespace ember::kernels {

// x (rows, cols). Per row: mean and biased variance var, or for rms mean = 0 and var = mean(x^2).
// When y is defined: y = (x - mean) / sqrt(var + eps) * w + b (w, b of cols elements in x's
// dtype, or undefined). mean/var receive `rows` values.
void row_norm_kernel(const Tensor& x, const Tensor& y, const Tensor& w, const Tensor& b, double eps, bool rms,
                     double* mean, double* var);
// x (N, C, L): mean and biased variance of each channel over N and L.
void channel_moments_kernel(const Tensor& x, double* mean, double* var);
// y (N, C, L) = x * scale[n * C + c] + shift[n * C + c] (scale/shift of N*C values).
void channel_affine_kernel(const Tensor& x, const Tensor& y, const double* scale, const double* shift);

}  // namespace ember::kernels
