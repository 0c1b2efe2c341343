// libtorch's ATen functions, round 2 (issue 26): the at:: forms of the nn activations, losses,
// distances, pools, pads and upsamplers (src/nn/functional/aten_nn.cpp, over the F:: forms),
// special functions with their derivatives (src/ops/aten_tail2_special.cpp), and composite math,
// statistics, indexing and random sampling (src/ops/aten_tail2*.cpp). Names, overloads and
// defaults are libtorch 1.13's; `reduction` is at::Reduction's integer (0 none, 1 mean, 2 sum).
#pragma once
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/factory.h"
#include "ember/tensor.h"

namespace ember {

// ---- activations and dropouts ----
Tensor celu(const Tensor& self, const Scalar& alpha = 1.0);
Tensor& celu_(Tensor& self, const Scalar& alpha = 1.0);
Tensor selu(const Tensor& self);
Tensor& selu_(Tensor& self);
Tensor hardtanh(const Tensor& self, const Scalar& min_val = -1, const Scalar& max_val = 1);
Tensor& hardtanh_(Tensor& self, const Scalar& min_val = -1, const Scalar& max_val = 1);
// hardtanh's and elu's gradients given grad_output (libtorch's names), one pass each;
// self_or_result: elu's input, or its result when is_result (which needs alpha >= 0).
Tensor hardtanh_backward(const Tensor& grad_output, const Tensor& self, const Scalar& min_val, const Scalar& max_val);
Tensor elu_backward(const Tensor& grad_output, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale,
                    bool is_result, const Tensor& self_or_result);
Tensor mish(const Tensor& self);
Tensor& mish_(Tensor& self);
Tensor prelu(const Tensor& self, const Tensor& weight);
Tensor rrelu(const Tensor& self, const Scalar& lower = 0.125, const Scalar& upper = 0.3333333333333333,
             bool training = false, Generator* generator = nullptr);
Tensor& rrelu_(Tensor& self, const Scalar& lower = 0.125, const Scalar& upper = 0.3333333333333333,
               bool training = false, Generator* generator = nullptr);
Tensor hardshrink(const Tensor& self, const Scalar& lambd = 0.5);
Tensor softshrink(const Tensor& self, const Scalar& lambd = 0.5);
Tensor threshold(const Tensor& self, const Scalar& threshold, const Scalar& value);
Tensor& threshold_(Tensor& self, const Scalar& threshold, const Scalar& value);
Tensor log_sigmoid(const Tensor& self);
Tensor glu(const Tensor& self, int64_t dim = -1);
Tensor alpha_dropout(const Tensor& input, double p, bool train);
Tensor& alpha_dropout_(Tensor& self, double p, bool train);
Tensor feature_alpha_dropout(const Tensor& input, double p, bool train);
Tensor& feature_alpha_dropout_(Tensor& self, double p, bool train);
Tensor& feature_dropout_(Tensor& self, double p, bool train);
// (output, mask): mask is true where the element was kept.
std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train);

// ---- losses ----
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0.0,
                             int64_t reduction = 1);
Tensor hinge_embedding_loss(const Tensor& self, const Tensor& target, double margin = 1.0, int64_t reduction = 1);
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0.0,
                           int64_t reduction = 1);
Tensor multi_margin_loss(const Tensor& self, const Tensor& target, const Scalar& p = 1, const Scalar& margin = 1,
                         const std::optional<Tensor>& weight = std::nullopt, int64_t reduction = 1);
Tensor multilabel_margin_loss(const Tensor& self, const Tensor& target, int64_t reduction = 1);
Tensor soft_margin_loss(const Tensor& self, const Tensor& target, int64_t reduction = 1);
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin = 1.0,
                           double p = 2, double eps = 1e-06, bool swap = false, int64_t reduction = 1);
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps,
                        int64_t reduction);
Tensor nll_loss2d(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                  int64_t reduction = 1, int64_t ignore_index = -100);
Tensor nll_loss_nd(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                   int64_t reduction = 1, int64_t ignore_index = -100);
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths, IntArrayRef target_lengths,
                int64_t blank = 0, int64_t reduction = 1, bool zero_infinity = false);
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank = 0, int64_t reduction = 1, bool zero_infinity = false);

// ---- distances, shuffles, bilinear, embedding bags ----
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-08);
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2, double eps = 1e-06, bool keepdim = false);
Tensor pdist(const Tensor& self, double p = 2);
// compute_mode is accepted for libtorch's signature; the distances are always computed directly.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2, std::optional<int64_t> compute_mode = std::nullopt);
Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor);
Tensor channel_shuffle(const Tensor& self, int64_t groups);
Tensor native_channel_shuffle(const Tensor& self, int64_t groups);
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const std::optional<Tensor>& bias = std::nullopt);
// (output, offset2bag, bag_size, max_indices); mode 0 sum, 1 mean, 2 max.
std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(const Tensor& weight, const Tensor& indices,
                                                         const Tensor& offsets, bool scale_grad_by_freq = false,
                                                         int64_t mode = 0, bool sparse = false,
                                                         const std::optional<Tensor>& per_sample_weights = std::nullopt,
                                                         bool include_last_offset = false);
std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(const Tensor& weight, const Tensor& indices,
                                                         const Tensor& offsets, bool scale_grad_by_freq, int64_t mode,
                                                         bool sparse, const std::optional<Tensor>& per_sample_weights,
                                                         bool include_last_offset, std::optional<int64_t> padding_idx);
Tensor& embedding_renorm_(Tensor& self, const Tensor& indices, double max_norm, double norm_type);
Tensor embedding_renorm(const Tensor& self, const Tensor& indices, double max_norm, double norm_type);

// ---- pools and pads ----
Tensor adaptive_avg_pool3d(const Tensor& self, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& self, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& self, IntArrayRef output_size);
Tensor avg_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor max_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor max_unpool2d(const Tensor& self, const Tensor& indices, IntArrayRef output_size);
Tensor max_unpool3d(const Tensor& self, const Tensor& indices, IntArrayRef output_size, IntArrayRef stride,
                    IntArrayRef padding);
Tensor reflection_pad1d(const Tensor& self, IntArrayRef padding);
Tensor reflection_pad2d(const Tensor& self, IntArrayRef padding);
Tensor reflection_pad3d(const Tensor& self, IntArrayRef padding);
Tensor replication_pad1d(const Tensor& self, IntArrayRef padding);
Tensor replication_pad2d(const Tensor& self, IntArrayRef padding);
Tensor replication_pad3d(const Tensor& self, IntArrayRef padding);

// ---- integer and floating-point bit math ----
Tensor gcd(const Tensor& self, const Tensor& other);
Tensor& gcd_(Tensor& self, const Tensor& other);
Tensor lcm(const Tensor& self, const Tensor& other);
Tensor& lcm_(Tensor& self, const Tensor& other);
Tensor nextafter(const Tensor& self, const Tensor& other);
// (mantissa, exponent): self = mantissa * 2^exponent, |mantissa| in [0.5, 1), exponent int32.
std::tuple<Tensor, Tensor> frexp(const Tensor& self);
Tensor bitwise_left_shift(const Tensor& self, const Tensor& other);
Tensor bitwise_left_shift(const Tensor& self, const Scalar& other);
Tensor bitwise_left_shift(const Scalar& self, const Tensor& other);
Tensor bitwise_right_shift(const Tensor& self, const Tensor& other);
Tensor bitwise_right_shift(const Tensor& self, const Scalar& other);
Tensor bitwise_right_shift(const Scalar& self, const Tensor& other);

// ---- special functions (each with PyTorch's derivative) ----
Tensor lgamma(const Tensor& self);
Tensor digamma(const Tensor& self);
Tensor polygamma(int64_t n, const Tensor& self);
Tensor mvlgamma(const Tensor& self, int64_t p);
Tensor i0(const Tensor& self);
Tensor& i0_(Tensor& self);
// The regularized lower (igamma) and upper (igammac) incomplete gamma functions P(self, other)
// and Q(self, other); differentiable in other only, as PyTorch's.
Tensor igamma(const Tensor& self, const Tensor& other);
Tensor igammac(const Tensor& self, const Tensor& other);

// ---- linear algebra and statistics compositions ----
Tensor cross(const Tensor& self, const Tensor& other, std::optional<int64_t> dim = std::nullopt);
Tensor inner(const Tensor& self, const Tensor& other);
Tensor tensordot(const Tensor& self, const Tensor& other, IntArrayRef dims_self, IntArrayRef dims_other);
Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1, const Scalar& alpha = 1);
Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
              const Scalar& alpha = 1);
Tensor smm(const Tensor& self, const Tensor& mat2);
Tensor cov(const Tensor& self, int64_t correction = 1, const std::optional<Tensor>& fweights = std::nullopt,
           const std::optional<Tensor>& aweights = std::nullopt);
Tensor corrcoef(const Tensor& self);
Tensor vander(const Tensor& x, std::optional<int64_t> N = std::nullopt, bool increasing = false);
Tensor combinations(const Tensor& self, int64_t r = 2, bool with_replacement = false);
Tensor kaiser_window(int64_t window_length, TensorOptions options = {});
Tensor kaiser_window(int64_t window_length, bool periodic, TensorOptions options = {});
Tensor kaiser_window(int64_t window_length, bool periodic, double beta, TensorOptions options = {});
Tensor norm_except_dim(const Tensor& v, int64_t pow = 2, int64_t dim = 0);
std::vector<Tensor> gradient(const Tensor& self, const std::optional<Scalar>& spacing = std::nullopt,
                             std::optional<int64_t> dim = std::nullopt, int64_t edge_order = 1);
std::vector<Tensor> gradient(const Tensor& self, const Scalar& spacing, IntArrayRef dim, int64_t edge_order = 1);
std::vector<Tensor> gradient(const Tensor& self, IntArrayRef dim, int64_t edge_order = 1);
std::vector<Tensor> gradient(const Tensor& self, ArrayRef<Scalar> spacing, std::optional<int64_t> dim = std::nullopt,
                             int64_t edge_order = 1);
std::vector<Tensor> gradient(const Tensor& self, ArrayRef<Scalar> spacing, IntArrayRef dim, int64_t edge_order = 1);
std::vector<Tensor> gradient(const Tensor& self, TensorList spacing, std::optional<int64_t> dim = std::nullopt,
                             int64_t edge_order = 1);
std::vector<Tensor> gradient(const Tensor& self, TensorList spacing, IntArrayRef dim, int64_t edge_order = 1);

// ---- copies, views and queries ----
Tensor fill(const Tensor& self, const Scalar& value);
Tensor fill(const Tensor& self, const Tensor& value);
Tensor zero(const Tensor& self);
Tensor copy(const Tensor& self, const Tensor& src, bool non_blocking = false);
Tensor alias(const Tensor& self);
const Tensor& as_strided_(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                          std::optional<int64_t> storage_offset = std::nullopt);
Tensor as_strided_copy(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                       std::optional<int64_t> storage_offset = std::nullopt);
Tensor as_strided_scatter(const Tensor& self, const Tensor& src, IntArrayRef size, IntArrayRef stride,
                          std::optional<int64_t> storage_offset = std::nullopt);
std::vector<Tensor> unbind_copy(const Tensor& self, int64_t dim = 0);
std::vector<Tensor> split_copy(const Tensor& self, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes_copy(const Tensor& self, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> unsafe_split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim = 0);
const Tensor& resize_as_(const Tensor& self, const Tensor& the_template,
                         std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor resize_as(const Tensor& self, const Tensor& the_template, std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor resize(const Tensor& self, IntArrayRef size, std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor argwhere(const Tensor& self);
std::vector<Tensor> nonzero_numpy(const Tensor& self);
Tensor lift(const Tensor& self);
Tensor lift_fresh(const Tensor& self);
Tensor lift_fresh_copy(const Tensor& self);
bool is_distributed(const Tensor& self);

// ---- histograms, searching, uniqueness, order statistics ----
Tensor histc(const Tensor& self, int64_t bins = 100, const Scalar& min = 0, const Scalar& max = 0);
std::tuple<Tensor, Tensor> histogram(const Tensor& self, const Tensor& bins, const std::optional<Tensor>& weight = std::nullopt,
                                     bool density = false);
std::tuple<Tensor, Tensor> histogram(const Tensor& self, int64_t bins = 100,
                                     std::optional<ArrayRef<double>> range = std::nullopt,
                                     const std::optional<Tensor>& weight = std::nullopt, bool density = false);
// (hist, bin_edges per dim) of the points in self's last dim.
std::tuple<Tensor, std::vector<Tensor>> histogramdd(const Tensor& self, IntArrayRef bins,
                                                    std::optional<ArrayRef<double>> range = std::nullopt,
                                                    const std::optional<Tensor>& weight = std::nullopt, bool density = false);
std::tuple<Tensor, std::vector<Tensor>> histogramdd(const Tensor& self, int64_t bins,
                                                    std::optional<ArrayRef<double>> range = std::nullopt,
                                                    const std::optional<Tensor>& weight = std::nullopt, bool density = false);
std::tuple<Tensor, std::vector<Tensor>> histogramdd(const Tensor& self, TensorList bins,
                                                    std::optional<ArrayRef<double>> range = std::nullopt,
                                                    const std::optional<Tensor>& weight = std::nullopt, bool density = false);
Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights = std::nullopt, int64_t minlength = 0);
Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32 = false, bool right = false);
Tensor bucketize(const Scalar& self, const Tensor& boundaries, bool out_int32 = false, bool right = false);
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self, bool out_int32 = false, bool right = false,
                    std::optional<std::string_view> side = std::nullopt, const std::optional<Tensor>& sorter = std::nullopt);
Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& self, bool out_int32 = false, bool right = false,
                    std::optional<std::string_view> side = std::nullopt, const std::optional<Tensor>& sorter = std::nullopt);
// (values, inverse, counts); the outputs not asked for are empty, as libtorch's.
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& self, bool return_inverse = false,
                                                      bool return_counts = false, std::optional<int64_t> dim = std::nullopt);
std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& self, int64_t dim, bool sorted = true,
                                              bool return_inverse = false, bool return_counts = false);
std::tuple<Tensor, Tensor, Tensor> unique_dim_consecutive(const Tensor& self, int64_t dim, bool return_inverse = false,
                                                          bool return_counts = false);
std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim = -1, bool keepdim = false);
Tensor nanmedian(const Tensor& self);
std::tuple<Tensor, Tensor> nanmedian(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor nanquantile(const Tensor& self, double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                   std::string_view interpolation = "linear");
Tensor nanquantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                   std::string_view interpolation = "linear");
std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim);
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim);

// ---- scatter and put ----
Tensor index_put(const Tensor& self, ArrayRef<std::optional<Tensor>> indices, const Tensor& values,
                 bool accumulate = false);
Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                    bool include_self = true);
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                      bool include_self = true);
Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate = false);

// ---- random sampling (functional forms of the in-place fills) ----
Tensor uniform(const Tensor& self, double from = 0, double to = 1, Generator* generator = nullptr);
Tensor cauchy(const Tensor& self, double median = 0, double sigma = 1, Generator* generator = nullptr);
Tensor exponential(const Tensor& self, double lambd = 1, Generator* generator = nullptr);
Tensor geometric(const Tensor& self, double p, Generator* generator = nullptr);
Tensor log_normal(const Tensor& self, double mean = 1, double std = 2, Generator* generator = nullptr);
Tensor random(const Tensor& self, int64_t from, std::optional<int64_t> to, Generator* generator = nullptr);
Tensor random(const Tensor& self, int64_t to, Generator* generator = nullptr);
Tensor random(const Tensor& self, Generator* generator = nullptr);
Tensor normal_functional(const Tensor& self, double mean = 0, double std = 1, Generator* generator = nullptr);
Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement = false, Generator* generator = nullptr);
Tensor binomial(const Tensor& count, const Tensor& prob, Generator* generator = nullptr);
Tensor poisson(const Tensor& self, Generator* generator = nullptr);
// Gamma(self, 1) samples (float or double) with libtorch's draws; differentiable through
// _standard_gamma_grad (dx/dalpha at the sample's quantile, computed to ~1e-10 here where
// libtorch's fitted approximation is ~1e-3). _sample_dirichlet: Dirichlet(self) over the last dim.
Tensor _standard_gamma(const Tensor& self, Generator* generator = nullptr);
Tensor _standard_gamma_grad(const Tensor& self, const Tensor& output);
Tensor _sample_dirichlet(const Tensor& self, Generator* generator = nullptr);

// ---- ATen's _cast_<Type>(self, non_blocking): self.to(<type>) ----
#define EMBER_CAST_FUNCTION(Name, type) \
  inline Tensor _cast_##Name(const Tensor& self, bool non_blocking = false) { return self.to(type, non_blocking); }
EMBER_CAST_FUNCTION(Byte, kByte)
EMBER_CAST_FUNCTION(Char, kChar)
EMBER_CAST_FUNCTION(Short, kShort)
EMBER_CAST_FUNCTION(Int, kInt)
EMBER_CAST_FUNCTION(Long, kLong)
EMBER_CAST_FUNCTION(Half, kHalf)
EMBER_CAST_FUNCTION(Float, kFloat)
EMBER_CAST_FUNCTION(Double, kDouble)
#undef EMBER_CAST_FUNCTION

// ---- upsampling (the last 1-3 dims of (N, C, ...)) ----
Tensor upsample_nearest1d(const Tensor& input, OptionalIntArrayRef output_size, std::optional<ArrayRef<double>> scale_factors);
Tensor upsample_nearest1d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales = std::nullopt);
Tensor upsample_nearest2d(const Tensor& input, OptionalIntArrayRef output_size, std::optional<ArrayRef<double>> scale_factors);
Tensor upsample_nearest2d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_h = std::nullopt,
                          std::optional<double> scales_w = std::nullopt);
Tensor upsample_nearest3d(const Tensor& input, OptionalIntArrayRef output_size, std::optional<ArrayRef<double>> scale_factors);
Tensor upsample_nearest3d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_d = std::nullopt,
                          std::optional<double> scales_h = std::nullopt, std::optional<double> scales_w = std::nullopt);
Tensor upsample_linear1d(const Tensor& input, OptionalIntArrayRef output_size, bool align_corners,
                         std::optional<ArrayRef<double>> scale_factors);
Tensor upsample_linear1d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                         std::optional<double> scales = std::nullopt);
Tensor upsample_bilinear2d(const Tensor& input, OptionalIntArrayRef output_size, bool align_corners,
                           std::optional<ArrayRef<double>> scale_factors);
Tensor upsample_bilinear2d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scales_h = std::nullopt, std::optional<double> scales_w = std::nullopt);
Tensor upsample_bicubic2d(const Tensor& input, OptionalIntArrayRef output_size, bool align_corners,
                          std::optional<ArrayRef<double>> scale_factors);
Tensor upsample_bicubic2d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                          std::optional<double> scales_h = std::nullopt, std::optional<double> scales_w = std::nullopt);
Tensor upsample_trilinear3d(const Tensor& input, OptionalIntArrayRef output_size, bool align_corners,
                            std::optional<ArrayRef<double>> scale_factors);
Tensor upsample_trilinear3d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                            std::optional<double> scales_d = std::nullopt, std::optional<double> scales_h = std::nullopt,
                            std::optional<double> scales_w = std::nullopt);

// ---- convolution entry points and *_forward forms (src/nn/functional/aten_nn_conv.cpp) ----
Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups);
Tensor conv_tbc(const Tensor& self, const Tensor& weight, const Tensor& bias, int64_t pad = 0);
Tensor slow_conv3d_forward(const Tensor& self, const Tensor& weight, IntArrayRef kernel_size,
                           const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding);
Tensor slow_conv3d(const Tensor& self, const Tensor& weight, IntArrayRef kernel_size,
                   const std::optional<Tensor>& bias = std::nullopt, IntArrayRef stride = 1, IntArrayRef padding = 0);
Tensor slow_conv_dilated2d(const Tensor& self, const Tensor& weight, IntArrayRef kernel_size,
                           const std::optional<Tensor>& bias = std::nullopt, IntArrayRef stride = 1,
                           IntArrayRef padding = 0, IntArrayRef dilation = 1);
Tensor slow_conv_dilated3d(const Tensor& self, const Tensor& weight, IntArrayRef kernel_size,
                           const std::optional<Tensor>& bias = std::nullopt, IntArrayRef stride = 1,
                           IntArrayRef padding = 0, IntArrayRef dilation = 1);
Tensor slow_conv_transpose2d(const Tensor& self, const Tensor& weight, IntArrayRef kernel_size,
                             const std::optional<Tensor>& bias = std::nullopt, IntArrayRef stride = 1,
                             IntArrayRef padding = 0, IntArrayRef output_padding = 0, IntArrayRef dilation = 1);
Tensor slow_conv_transpose3d(const Tensor& self, const Tensor& weight, IntArrayRef kernel_size,
                             const std::optional<Tensor>& bias = std::nullopt, IntArrayRef stride = 1,
                             IntArrayRef padding = 0, IntArrayRef output_padding = 0, IntArrayRef dilation = 1);
Tensor thnn_conv2d(const Tensor& self, const Tensor& weight, IntArrayRef kernel_size,
                   const std::optional<Tensor>& bias = std::nullopt, IntArrayRef stride = 1, IntArrayRef padding = 0);
Tensor im2col(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride);
Tensor col2im(const Tensor& self, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride);
Tensor affine_grid_generator(const Tensor& theta, IntArrayRef size, bool align_corners);
// interpolation_mode 0 bilinear, 1 nearest; padding_mode 0 zeros, 1 border, 2 reflection.
Tensor grid_sampler(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                    bool align_corners);
Tensor grid_sampler_2d(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                       bool align_corners);
std::tuple<Tensor, Tensor> log_sigmoid_forward(const Tensor& self);
std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                            int64_t reduction, int64_t ignore_index);
std::tuple<Tensor, Tensor> nll_loss2d_forward(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                              int64_t reduction, int64_t ignore_index);
std::tuple<Tensor, Tensor> multilabel_margin_loss_forward(const Tensor& self, const Tensor& target, int64_t reduction);
Tensor flatten_dense_tensors(TensorList tensors);
std::vector<Tensor> unflatten_dense_tensors(const Tensor& flat, TensorList tensors);
Tensor adjoint(const Tensor& self);
Tensor& addmv_(Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta = 1, const Scalar& alpha = 1);
Tensor rrelu_with_noise(const Tensor& self, const Tensor& noise, const Scalar& lower = 0.125,
                        const Scalar& upper = 0.3333333333333333, bool training = false, Generator* generator = nullptr);
Tensor& rrelu_with_noise_(Tensor& self, const Tensor& noise, const Scalar& lower = 0.125,
                          const Scalar& upper = 0.3333333333333333, bool training = false,
                          Generator* generator = nullptr);

// torch::pad_sequence, as nn::utils::rnn::pad_sequence.
Tensor pad_sequence(TensorList sequences, bool batch_first = false, double padding_value = 0.0);
// resolve_conj: a conjugate view materialized, any other tensor itself (src/ops/complex.cpp).
// Ember has no negative bit: resolve_neg returns the tensor itself.
Tensor resolve_conj(const Tensor& self);
Tensor resolve_neg(const Tensor& self);

}  // namespace ember
