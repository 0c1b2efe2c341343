#include "ember/nn/intrinsic.h"

#include "ember/autograd.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/nn/quantized.h"
#include "ember/quantization.h"
#include "nn/utils/fusion.h"

namespace ember::nn::intrinsic {
namespace {

// Whether running on these tensors would record a graph.
bool records(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  return GradMode::is_enabled() &&
         (input.requires_grad() || weight.requires_grad() || (bias.defined() && bias.requires_grad()));
}

}  // namespace

template <size_t D>
ConvReLUImpl<D>::ConvReLUImpl(ConvHolder<D> conv_, ReLU relu_) : conv(std::move(conv_)), relu(std::move(relu_)) {
  register_module("0", conv);
  register_module("1", relu);
}

template <size_t D>
Tensor ConvReLUImpl<D>::forward(const Tensor& input) {
  if (static_quantized) return static_quantized->forward(input);
  Tensor y = float_forward(input);
  return activation_post_process ? activation_post_process->forward(y) : y;
}

template <size_t D>
Tensor ConvReLUImpl<D>::float_forward(const Tensor& input) {
  return nn::detail::conv_activation_forward(*conv, input, ember::detail::ConvActivation::kReLU);
}

template <size_t D>
void ConvReLUImpl<D>::pretty_print(std::ostream& stream) const {
  if (static_quantized) return static_quantized->pretty_print(stream);
  stream << "torch::nn::intrinsic::ConvReLU" << D << "d";
}

}  // namespace ember::nn::intrinsic

namespace ember::nn::detail {

std::pair<Tensor, Tensor> fold_batch_norm(const Tensor& weight, const Tensor& bias, const BatchNormFold& bn,
                                          bool linear) {
  NoGradGuard no_grad;
  const ScalarType dtype = weight.scalar_type();
  const Tensor inv_std = bn.inv_std.to(dtype), gamma = bn.weight.defined() ? bn.weight.to(dtype) : Tensor();
  const Tensor scale = gamma.defined() ? gamma * inv_std : inv_std;
  std::vector<int64_t> shape(static_cast<size_t>(weight.dim()), 1);
  shape[0] = -1;
  const Tensor centred = bias.defined() ? bias - bn.mean.to(dtype) : -bn.mean.to(dtype);
  Tensor b = linear || !gamma.defined() ? centred * scale : centred * inv_std * gamma;
  if (bn.bias.defined()) b = b + bn.bias.to(dtype);
  return {weight * scale.reshape(shape), b};
}

template <size_t D>
std::vector<int64_t> symmetric_padding(const ConvNdImpl<D>& conv) {
  std::vector<int64_t> padding;
  if (conv.options.padding_mode().index() != 0) return padding;
  const std::vector<int64_t>& pads = conv._reversed_padding_repeated_twice;  // last dim first, (left, right)
  for (size_t i = 0; i < D; ++i) {
    const size_t at = 2 * (D - 1 - i);
    if (pads[at] != pads[at + 1]) return {};
    padding.push_back(pads[at]);
  }
  return padding;
}
template std::vector<int64_t> symmetric_padding(const ConvNdImpl<1>&);
template std::vector<int64_t> symmetric_padding(const ConvNdImpl<2>&);
template std::vector<int64_t> symmetric_padding(const ConvNdImpl<3>&);

template <size_t D>
Tensor conv_activation_forward(ConvNdImpl<D>& conv, const Tensor& input, ember::detail::ConvActivation activation) {
  const auto& o = conv.options;
  const std::vector<int64_t> padding = symmetric_padding(conv);
  if (padding.size() != D || conv.weight_fake_quant) {  // (QAT: conv applies its weight's fake quantizer)
    Tensor y = conv.forward(input);
    const bool relu = activation == ember::detail::ConvActivation::kReLU;
    if (intrinsic::records(input, conv.weight, conv.bias)) return relu ? ember::relu(y) : ember::hardswish(y);
    return relu ? y.relu_() : ember::hardswish_(y);
  }
  // convolution_activation itself records the convolution and the activation when a gradient is wanted
  return ember::detail::convolution_activation(input, conv.weight, conv.bias, IntArrayRef(o.stride()), padding,
                                               IntArrayRef(o.dilation()), o.groups(), activation);
}
template Tensor conv_activation_forward(ConvNdImpl<1>&, const Tensor&, ember::detail::ConvActivation);
template Tensor conv_activation_forward(ConvNdImpl<2>&, const Tensor&, ember::detail::ConvActivation);
template Tensor conv_activation_forward(ConvNdImpl<3>&, const Tensor&, ember::detail::ConvActivation);

}  // namespace ember::nn::detail

namespace ember::nn::intrinsic {

template class ConvReLUImpl<1>;
template class ConvReLUImpl<2>;
template class ConvReLUImpl<3>;

LinearReLUImpl::LinearReLUImpl(Linear linear_, ReLU relu_) : linear(std::move(linear_)), relu(std::move(relu_)) {
  register_module("0", linear);
  register_module("1", relu);
}

Tensor LinearReLUImpl::forward(const Tensor& input) {
  if (static_quantized) return ember::relu(static_quantized->forward(input));  // clamped at the zero point
  Tensor y = linear->forward(input);
  y = records(input, linear->weight, linear->bias) ? ember::relu(y) : y.relu_();
  return activation_post_process ? activation_post_process->forward(y) : y;
}

void LinearReLUImpl::pretty_print(std::ostream& stream) const {
  if (static_quantized) {
    stream << "QuantizedLinearReLU(in_features=" << static_quantized->in_features()
           << ", out_features=" << static_quantized->out_features() << ", scale=" << static_quantized->scale()
           << ", zero_point=" << static_quantized->zero_point() << ")";
    return;
  }
  stream << "torch::nn::intrinsic::LinearReLU";
}

template <size_t D>
BNReLUImpl<D>::BNReLUImpl(BatchNormHolder<D> bn_, ReLU relu_) : bn(std::move(bn_)), relu(std::move(relu_)) {
  register_module("0", bn);
  register_module("1", relu);
}

template <size_t D>
Tensor BNReLUImpl<D>::forward(const Tensor& input) {
  if (static_quantized) return ember::relu(static_quantized->forward(input));  // clamped at the zero point
  Tensor y = bn->forward(input);
  y = GradMode::is_enabled() && y.requires_grad() ? ember::relu(y) : y.relu_();
  return activation_post_process ? activation_post_process->forward(y) : y;
}

template <size_t D>
void BNReLUImpl<D>::pretty_print(std::ostream& stream) const {
  if (static_quantized) {
    stream << "QuantizedBNReLU" << D << "d(" << static_quantized->weight.numel() << ", eps=" << static_quantized->eps
           << ", scale=" << static_quantized->scale << ", zero_point=" << static_quantized->zero_point << ")";
    return;
  }
  stream << "torch::nn::intrinsic::BNReLU" << D << "d";
}

template <size_t D>
ConvBnImpl<D>::ConvBnImpl(ConvHolder<D> conv_, BatchNormHolder<D> bn_) : ConvBnImpl(std::move(conv_), std::move(bn_), nullptr) {}

template <size_t D>
ConvBnImpl<D>::ConvBnImpl(ConvHolder<D> conv_, BatchNormHolder<D> bn_, ReLU relu_)
    : conv(std::move(conv_)), bn(std::move(bn_)), relu(std::move(relu_)) {
  const char* op = relu ? "ConvBnReLU" : "ConvBn";
  EMBER_CHECK(bn->options.num_features() == conv->options.out_channels(), op, "the batch norm has ",
              bn->options.num_features(), " features but the convolution ", conv->options.out_channels(),
              " output channels");
  register_module("0", conv);
  register_module("1", bn);
  if (relu) register_module("2", relu);
}

template <size_t D>
Tensor ConvBnImpl<D>::forward(const Tensor& input) {
  if (static_quantized) return static_quantized->forward(input);
  Tensor y;
  if (conv->weight_fake_quant) {
    // PyTorch's QAT ConvBn forward (_forward_approximate): the convolution of the weight scaled as
    // the batch norm's running statistics will fold it, fake-quantized; its result scaled back,
    // the conv's bias added, then the batch norm (training: batch statistics, as the float model's)
    const char* op = relu ? "ConvBnReLU" : "ConvBn";
    EMBER_CHECK(bn->running_var.defined() && bn->weight.defined(), op,
                "quantization-aware training needs a batch norm with running statistics and affine parameters");
    const Tensor scale_factor = bn->weight / (bn->running_var + bn->options.eps()).sqrt();
    std::vector<int64_t> weight_shape(D + 2, 1), bias_shape(D + 2, 1);
    weight_shape[0] = -1;
    bias_shape[1] = -1;
    const Tensor scaled_weight = conv->weight_fake_quant->forward(conv->weight * scale_factor.reshape(weight_shape));
    y = conv->_conv_forward(input, scaled_weight, Tensor()) / scale_factor.reshape(bias_shape);
    if (conv->bias.defined()) y = y + conv->bias.reshape(bias_shape);
    y = bn->forward(y);
  } else {
    y = bn->forward(conv->forward(input));
  }
  if (relu) y = GradMode::is_enabled() && y.requires_grad() ? ember::relu(y) : y.relu_();
  return activation_post_process ? activation_post_process->forward(y) : y;
}

template <size_t D>
std::shared_ptr<ConvNdImpl<D>> ConvBnImpl<D>::folded_conv() const {
  const char* op = relu ? "ConvBnReLU" : "ConvBn";
  nn::detail::BatchNormFold fold;
  EMBER_CHECK(nn::detail::bn_fold<D>(*bn, fold, /*any_mode=*/true), op,
              "the batch norm has no running statistics to fold (track_running_stats=false)");
  std::shared_ptr<ConvNdImpl<D>> folded = nn::detail::folded(*conv, conv->options, fold);
  folded->weight_fake_quant = conv->weight_fake_quant;
  return folded;
}

template <size_t D>
std::shared_ptr<nn::quantized::ConvNdImpl<D>> ConvBnImpl<D>::quantized(double scale, int64_t zero_point) const {
  const auto folded = folded_conv();
  if (!relu) return nn::quantized::ConvImpl<D>::from_float(*folded, scale, zero_point);
  auto [w, b] = nn::quantized::ConvNdImpl<D>::quantized_weight_and_bias(*folded);
  return std::make_shared<nn::intrinsic::quantized::ConvReLUImpl<D>>(w, b, folded->options, scale, zero_point);
}

template <size_t D>
void ConvBnImpl<D>::pretty_print(std::ostream& stream) const {
  if (static_quantized) return static_quantized->pretty_print(stream);
  stream << "torch::nn::intrinsic::ConvBn" << (relu ? "ReLU" : "") << D << "d";
}

template class ConvBnImpl<1>;
template class ConvBnImpl<2>;
template class ConvBnImpl<3>;

template class BNReLUImpl<2>;
template class BNReLUImpl<3>;

}  // namespace ember::nn::intrinsic
