// The at:: convolution entry points and the *_forward forms of some nn ops (issue 26, round 2):
// libtorch's internal-looking but public names (convolution, slow_conv*, thnn_conv2d, im2col,
// grid_sampler, nll_loss_forward, ...) as the Ember ops or F:: forms that compute them.
#include "ember/aten_tail.h"
#include "ember/aten_tail2.h"
#include "ember/autograd.h"
#include "ember/indexing.h"
#include "ember/linalg.h"
#include "ember/nn/functional.h"
#include "ember/nn/modules/fold.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/shape.h"

namespace ember {
namespace {
namespace F = nn::functional;
Tensor bias_of(const std::optional<Tensor>& b) { return b ? *b : Tensor(); }
}  // namespace

Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups) {
  const int64_t spatial = weight.dim() - 2;
  EMBER_CHECK(spatial >= 1 && spatial <= 3, "convolution", "expected a weight of 3, 4 or 5 dims, got ", weight.sizes());
  const Tensor b = bias_of(bias);
  if (transposed) {
    if (spatial == 1) return conv_transpose1d(input, weight, b, stride, padding, output_padding, groups, dilation);
    if (spatial == 2) return conv_transpose2d(input, weight, b, stride, padding, output_padding, groups, dilation);
    return conv_transpose3d(input, weight, b, stride, padding, output_padding, groups, dilation);
  }
  if (spatial == 1) return conv1d(input, weight, b, stride, padding, dilation, groups);
  if (spatial == 2) return conv2d(input, weight, b, stride, padding, dilation, groups);
  return conv3d(input, weight, b, stride, padding, dilation, groups);
}
// Time-batch-channel layout: self (T, B, C_in), weight (K, C_in, C_out), bias (C_out).
Tensor conv_tbc(const Tensor& self, const Tensor& weight, const Tensor& bias, int64_t pad) {
  EMBER_CHECK(self.dim() == 3, "conv_tbc", "Input must have 3 dims: time, batch, in_channel");
  EMBER_CHECK(weight.dim() == 3, "conv_tbc", "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.");
  EMBER_CHECK(bias.dim() == 1, "conv_tbc", "Bias must be 1-D");
  EMBER_CHECK(self.size(2) == weight.size(1), "conv_tbc", "Input dim 2 (input channels) is not == dim 1 in the weight tensor");
  EMBER_CHECK(weight.size(2) == bias.size(0), "conv_tbc", "Bias size must equal dim 2 in the weight tensor (output channels).");
  const Tensor out = conv1d(self.permute({1, 2, 0}), weight.permute({2, 1, 0}), bias, 1, pad);
  return out.permute({2, 0, 1});
}
Tensor slow_conv3d(const Tensor& self, const Tensor& weight, IntArrayRef kernel_size, const std::optional<Tensor>& bias,
                   IntArrayRef stride, IntArrayRef padding) {
  return conv3d(self, weight, bias_of(bias), stride, padding);
}
Tensor slow_conv3d_forward(const Tensor& self, const Tensor& weight, IntArrayRef kernel_size,
                           const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding) {
  return conv3d(self, weight, bias_of(bias), stride, padding);
}
Tensor slow_conv_dilated2d(const Tensor& self, const Tensor& weight, IntArrayRef kernel_size,
                           const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation) {
  return conv2d(self, weight, bias_of(bias), stride, padding, dilation);
}
Tensor slow_conv_dilated3d(const Tensor& self, const Tensor& weight, IntArrayRef kernel_size,
                           const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation) {
  return conv3d(self, weight, bias_of(bias), stride, padding, dilation);
}
Tensor slow_conv_transpose2d(const Tensor& self, const Tensor& weight, IntArrayRef kernel_size,
                             const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                             IntArrayRef output_padding, IntArrayRef dilation) {
  return conv_transpose2d(self, weight, bias_of(bias), stride, padding, output_padding, 1, dilation);
}
Tensor slow_conv_transpose3d(const Tensor& self, const Tensor& weight, IntArrayRef kernel_size,
                             const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                             IntArrayRef output_padding, IntArrayRef dilation) {
  return conv_transpose3d(self, weight, bias_of(bias), stride, padding, output_padding, 1, dilation);
}
Tensor thnn_conv2d(const Tensor& self, const Tensor& weight, IntArrayRef kernel_size, const std::optional<Tensor>& bias,
                   IntArrayRef stride, IntArrayRef padding) {
  return conv2d(self, weight, bias_of(bias), stride, padding);
}
Tensor im2col(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  return F::unfold(self, F::UnfoldFuncOptions(kernel_size).dilation(dilation).padding(padding).stride(stride));
}
Tensor col2im(const Tensor& self, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  return F::fold(self, F::FoldFuncOptions(output_size, kernel_size).dilation(dilation).padding(padding).stride(stride));
}
Tensor affine_grid_generator(const Tensor& theta, IntArrayRef size, bool align_corners) {
  return F::affine_grid(theta, size, align_corners);
}
namespace {
Tensor grid_sample_modes(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                         bool align_corners) {
  EMBER_CHECK(interpolation_mode == 0 || interpolation_mode == 1, "grid_sampler",
              "grid_sampler(): interpolation mode ", interpolation_mode, " is not supported (0 bilinear, 1 nearest)");
  EMBER_CHECK(padding_mode >= 0 && padding_mode <= 2, "grid_sampler", "grid_sampler(): padding mode ", padding_mode,
              " is not one of 0 (zeros), 1 (border), 2 (reflection)");
  F::GridSampleFuncOptions o;
  if (interpolation_mode == 0) o.mode(kBilinear);
  if (interpolation_mode == 1) o.mode(kNearest);
  if (padding_mode == 0) o.padding_mode(kZeros);
  if (padding_mode == 1) o.padding_mode(kBorder);
  if (padding_mode == 2) o.padding_mode(kReflection);
  o.align_corners(align_corners);
  return F::grid_sample(input, grid, o);
}
}  // namespace
Tensor grid_sampler(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                    bool align_corners) {
  return grid_sample_modes(input, grid, interpolation_mode, padding_mode, align_corners);
}
Tensor grid_sampler_2d(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                       bool align_corners) {
  EMBER_CHECK(input.dim() == 4, "grid_sampler_2d", "grid_sampler(): expected 4D input and grid, got input of ", input.dim(), " dims");
  return grid_sample_modes(input, grid, interpolation_mode, padding_mode, align_corners);
}

// (output, buffer): libtorch's buffer is its kernel's scratch; here it holds exp(-|x|), what that
// kernel stores.
std::tuple<Tensor, Tensor> log_sigmoid_forward(const Tensor& self) {
  return {log_sigmoid(self), exp(-abs(self.detach()))};
}
// (output, total_weight): the sum of the weights of the targets that count.
std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                            int64_t reduction, int64_t ignore_index) {
  const Tensor out = nll_loss(self, target, bias_of(weight), reduction, ignore_index);
  const Tensor t = target.reshape({-1});
  const Tensor keep = t != ignore_index;
  const Tensor safe = where(keep, t, zeros_like(t));
  const Tensor w = weight && weight->defined() ? weight->detach().index_select(0, safe) : ones(t.sizes(), self.dtype());
  const Tensor total = reduction == 0 && self.dim() > 1 ? zeros({}, self.dtype()) : (w * keep.to(self.dtype())).sum();
  return {out, total};
}
std::tuple<Tensor, Tensor> nll_loss2d_forward(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                              int64_t reduction, int64_t ignore_index) {
  EMBER_CHECK(self.dim() == 4, "nll_loss2d_forward", "only batches of spatial inputs supported (4D tensors), but got input of size: ",
              self.sizes());
  return nll_loss_forward(self, target, weight, reduction, ignore_index);
}
// (output, is_target): is_target marks, per sample, the classes named before the first -1.
std::tuple<Tensor, Tensor> multilabel_margin_loss_forward(const Tensor& self, const Tensor& target, int64_t reduction) {
  const Tensor out = multilabel_margin_loss(self, target, reduction);
  const Tensor t = target.dim() == 1 ? target.unsqueeze(0) : target;
  // a target counts until its row's first -1
  const Tensor before_end = (t == -1).to(kLong).cumsum(1) == 0;
  Tensor is_target = zeros(t.sizes(), self.dtype());
  const Tensor safe = where(before_end, t, zeros_like(t));
  is_target = is_target.scatter_add(1, safe, before_end.to(self.dtype())).clamp_max(1);
  return {out, target.dim() == 1 ? is_target.squeeze(0) : is_target};
}
Tensor flatten_dense_tensors(TensorList tensors) {
  if (tensors.empty()) return empty({0});
  std::vector<Tensor> flat;
  for (const Tensor& t : tensors) flat.push_back(t.reshape({-1}));
  return cat(flat, 0);
}
std::vector<Tensor> unflatten_dense_tensors(const Tensor& flat, TensorList tensors) {
  std::vector<Tensor> out;
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    out.push_back(flat.narrow(0, offset, t.numel()).view(t.sizes()));
    offset += t.numel();
  }
  return out;
}
Tensor adjoint(const Tensor& self) {
  EMBER_CHECK(self.dim() >= 2, "adjoint", "tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor.");
  return self.transpose(-2, -1).conj();
}
Tensor& addmv_(Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
  const Tensor r = addmv(self.requires_grad() ? self.clone() : self, mat, vec, beta, alpha);
  return self.copy_(r);
}
// noise receives the slopes used (1 where the input is non-negative), as libtorch's.
Tensor rrelu_with_noise(const Tensor& self, const Tensor& noise, const Scalar& lower, const Scalar& upper, bool training,
                        Generator* generator) {
  if (!training) return leaky_relu(self, (lower.toDouble() + upper.toDouble()) / 2);
  EMBER_CHECK(noise.sizes() == self.sizes(), "rrelu_with_noise", "noise must have the shape of self, got ", noise.sizes(),
              " and ", self.sizes());
  Tensor slopes = empty_like(self.detach()).uniform_(lower.toDouble(), upper.toDouble(), generator);
  slopes = where(self.detach() >= 0, ones_like(slopes), slopes);
  {
    NoGradGuard guard;
    const_cast<Tensor&>(noise).copy_(slopes);
  }
  return self * slopes;
}
Tensor& rrelu_with_noise_(Tensor& self, const Tensor& noise, const Scalar& lower, const Scalar& upper, bool training,
                          Generator* generator) {
  return self.copy_(rrelu_with_noise(self.requires_grad() ? self.clone() : self, noise, lower, upper, training, generator));
}

}  // namespace ember
