// Neural-network ops (forward): convolutions, pooling, normalization, softmax, embedding,
// dropout, interpolation and padding, with PyTorch 1.13 semantics.
//
// These are libtorch's positional at:: forms (torch::conv2d, torch::embedding(weight, indices),
// torch::dropout(x, p, train), torch::max_pool2d(x, {2, 2}), ...) and Ember's positional
// interpolate and pad, all in namespace ember. torch::nn::functional has only the FuncOptions
// forms (ember/nn/functional.h), as libtorch's: a positional form there would make calls such as
// F::dropout(x) or F::adaptive_avg_pool1d(x, {4}) ambiguous. An optional tensor argument is an
// undefined Tensor ({}) when absent.
#pragma once
#include <optional>
#include <string_view>
#include <tuple>

#include "ember/tensor.h"

namespace ember {

// ---- convolution ---------------------------------------------------------------------------
// input (N, C_in, *spatial) or unbatched (C_in, *spatial); weight (C_out, C_in / groups, *kernel).
// The output is channels_last when the input or the weight suggests it (PyTorch's rule).
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
// padding "same" (stride must be 1) or "valid" (no padding). Its own type so that a literal 0
// passed as padding stays the integer form.
struct PaddingMode {
  template <size_t N>
  PaddingMode(const char (&s)[N]) : mode(s, N - 1) {}  // NOLINT: conv2d(x, w, {}, 1, "same")
  PaddingMode(std::string_view s) : mode(s) {}         // NOLINT
  std::string_view mode;
};
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, PaddingMode padding,
              IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, PaddingMode padding,
              IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, PaddingMode padding,
              IntArrayRef dilation = 1, int64_t groups = 1);
// weight (C_in, C_out / groups, *kernel).
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
                        IntArrayRef padding = 0, IntArrayRef output_padding = 0, int64_t groups = 1,
                        IntArrayRef dilation = 1);
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
                        IntArrayRef padding = 0, IntArrayRef output_padding = 0, int64_t groups = 1,
                        IntArrayRef dilation = 1);
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
                        IntArrayRef padding = 0, IntArrayRef output_padding = 0, int64_t groups = 1,
                        IntArrayRef dilation = 1);

// ---- pooling -------------------------------------------------------------------------------
// An empty stride means stride = kernel_size. Indices are flat positions in each input plane
// (h * W + w), as PyTorch's.
Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true);
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor adaptive_avg_pool1d(const Tensor& input, IntArrayRef output_size);
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);
// Fractional max pooling, as at::fractional_max_pool2d/3d: (values, indices); random_samples is
// (N, C, 2) or (N, C, 3) in [0, 1), ordered width, height (2-D) or time, height, width (3-D) as
// PyTorch's kernels read them. Indices are flat positions in each input plane.
std::tuple<Tensor, Tensor> fractional_max_pool2d(const Tensor& input, IntArrayRef kernel_size,
                                                 IntArrayRef output_size, const Tensor& random_samples);
std::tuple<Tensor, Tensor> fractional_max_pool3d(const Tensor& input, IntArrayRef kernel_size,
                                                 IntArrayRef output_size, const Tensor& random_samples);
// torch::adaptive_max_pool2d: (values, indices), as at::adaptive_max_pool2d.
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size);

// ---- normalization -------------------------------------------------------------------------
// Training normalizes with the batch's biased variance and, when running stats are given,
// updates running_mean/var in place with momentum (running_var gets the unbiased variance).
Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps, bool cudnn_enabled = true);
// (output, save_mean, save_invstd): what the backward needs. In eval mode the saved tensors are
// empty, as PyTorch's CPU kernel.
std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                     const Tensor& running_mean, const Tensor& running_var,
                                                     bool training, double momentum, double eps);
Tensor instance_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                     const Tensor& running_var, bool use_input_stats, double momentum, double eps,
                     bool cudnn_enabled = true);
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5, bool cudnn_enable = true);
// (output, mean, rstd); mean and rstd have the input's leading dims and size-1 normalized dims.
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                                                     const Tensor& weight, const Tensor& bias, double eps);
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5, bool cudnn_enabled = true);
// (output, mean, rstd), mean and rstd of shape (N, num_groups).
std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                     int64_t num_groups, double eps);
// y = x / sqrt(mean(x^2 over normalized_shape) + eps) * weight; eps defaults to the dtype's epsilon.
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = {},
                std::optional<double> eps = std::nullopt);

// ---- softmax -------------------------------------------------------------------------------
// With dtype, the input is cast to it first (and the result has it).
Tensor softmax(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);

// ---- embedding, dropout --------------------------------------------------------------------
// Rows of weight at indices (int32/int64); padding_idx only matters to the backward.
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1,
                 bool scale_grad_by_freq = false, bool sparse = false);
// Zeroes each element with probability p and scales the rest by 1/(1-p); identity when !train.
// Draws from ember's global Generator.
Tensor dropout(const Tensor& input, double p = 0.5, bool train = true);
// Zeroes whole channels: one draw per (dim 0, dim 1) entry, as PyTorch 1.13 (dropout2d treats a
// 3-D input as (N, C, L)).
Tensor feature_dropout(const Tensor& input, double p = 0.5, bool train = true);
Tensor dropout2d(const Tensor& input, double p = 0.5, bool training = true);

// ---- interpolation and padding -------------------------------------------------------------
// mode "nearest" (3-D/4-D input) or "bilinear" (4-D); size or scale_factor (one value for every
// spatial dim, or one per dim). align_corners only for bilinear (default false).
Tensor interpolate(const Tensor& input, OptionalIntArrayRef size = std::nullopt,
                   std::optional<std::vector<double>> scale_factor = std::nullopt, std::string_view mode = "nearest",
                   std::optional<bool> align_corners = std::nullopt);
// pad lists (left, right) pairs starting from the last dim. mode "constant", "reflect", "replicate".
Tensor pad(const Tensor& input, IntArrayRef pad, std::string_view mode = "constant",
           std::optional<double> value = std::nullopt);
// torch::constant_pad_nd.
Tensor constant_pad_nd(const Tensor& input, IntArrayRef pad, const Scalar& value = 0);

// ATen's recurrent functions (at::lstm, at::gru, at::rnn_tanh, at::rnn_relu and their cells): the
// recurrence of nn::LSTM/GRU/RNN on weights given as tensors, in PyTorch's flat order (per layer
// and direction w_ih, w_hh[, b_ih, b_hh][, w_hr]). The sequence forms take a 3-D input, or a packed
// sequence's (data, batch_sizes); they return (output, h_n[, c_n]).
std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, TensorList hx, TensorList params, bool has_biases,
                                        int64_t num_layers, double dropout, bool train, bool bidirectional,
                                        bool batch_first);
std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& data, const Tensor& batch_sizes, TensorList hx,
                                        TensorList params, bool has_biases, int64_t num_layers, double dropout,
                                        bool train, bool bidirectional);
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, TensorList hx, const Tensor& w_ih, const Tensor& w_hh,
                                     const std::optional<Tensor>& b_ih = std::nullopt,
                                     const std::optional<Tensor>& b_hh = std::nullopt);
#define EMBER_DECLARE_ATEN_RNN(fn)                                                                                 \
  std::tuple<Tensor, Tensor> fn(const Tensor& input, const Tensor& hx, TensorList params, bool has_biases,        \
                                int64_t num_layers, double dropout, bool train, bool bidirectional,               \
                                bool batch_first);                                                                \
  std::tuple<Tensor, Tensor> fn(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx, TensorList params, \
                                bool has_biases, int64_t num_layers, double dropout, bool train, bool bidirectional); \
  Tensor fn##_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,                 \
                   const std::optional<Tensor>& b_ih = std::nullopt, const std::optional<Tensor>& b_hh = std::nullopt);
EMBER_DECLARE_ATEN_RNN(gru)
EMBER_DECLARE_ATEN_RNN(rnn_tanh)
EMBER_DECLARE_ATEN_RNN(rnn_relu)
#undef EMBER_DECLARE_ATEN_RNN

}  // namespace ember
