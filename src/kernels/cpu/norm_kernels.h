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
// x (N, C, L), or (N, L, C) when channels_last: mean and biased variance of each channel over N and L.
void channel_moments_kernel(const Tensor& x, double* mean, double* var, bool channels_last);
// y = x * scale[n * C + c] + shift[n * C + c] (scale/shift of N*C values) over x, y of one
// layout: (N, C, L), or (N, L, C) when channels_last.
void channel_affine_kernel(const Tensor& x, const Tensor& y, const double* scale, const double* shift,
                           bool channels_last);

// Backward of the channel norms (batch, instance, group) over contiguous dy, x of one dtype, seen
// as (N, C, L), or as (N, L, C) when channels_last. p = n * C + c indexes the (n, c) rows.
// sum_dy[p] = sum(dy), sum_dyx[p] = sum(dy * (x - mean[p])) over the row's positions.
void channel_grad_sums_kernel(const Tensor& dy, const Tensor& x, const double* mean, double* sum_dy, double* sum_dyx,
                              bool channels_last);
// dx = a[p] * dy + b[p] * x + k[p] (dx of x's shape, layout and dtype).
void channel_grad_input_kernel(const Tensor& dy, const Tensor& x, const Tensor& dx, const double* a, const double* b,
                               const double* k, bool channels_last);
// Backward of layer_norm (rms = false) and rms_norm over dy, x (rows, cols) with per-row mean
// (ignored for rms) and rstd, w of cols elements in x's dtype or undefined. Writes dx when
// defined; adds the weight/bias gradients to gw/gb (cols doubles, zeroed by the caller) when not null.
void row_norm_backward_kernel(const Tensor& dy, const Tensor& x, const Tensor& w, const double* mean, const double* rstd,
                              bool rms, const Tensor& dx, double* gw, double* gb);

}  // namespace ember::kernels
