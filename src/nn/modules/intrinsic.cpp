#include "ember/nn/intrinsic.h"

#include "ember/autograd.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/nn/quantized.h"
#include "ember/quantization.h"

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
  const auto& o = conv->options;
  // The convolution's own padding as one value per dim, when it has one: zeros padding mode and
  // explicit or symmetric ('valid', or 'same' with odd extents) padding.
  std::vector<int64_t> padding;
  if (o.padding_mode().index() == 0) {
    const std::vector<int64_t>& pads = conv->_reversed_padding_repeated_twice;  // last dim first, (left, right)
    for (size_t i = 0; i < D; ++i) {
      const size_t at = 2 * (D - 1 - i);
      if (pads[at] != pads[at + 1]) {
        padding.clear();
        break;
      }
      padding.push_back(pads[at]);
    }
  }
  if (padding.size() != D) {
    Tensor y = conv->forward(input);
    return records(input, conv->weight, conv->bias) ? ember::relu(y) : y.relu_();
  }
  // convolution_relu itself records conv and relu when a gradient is wanted
  return ember::detail::convolution_relu(input, conv->weight, conv->bias, IntArrayRef(o.stride()), padding,
                                         IntArrayRef(o.dilation()), o.groups());
}

template <size_t D>
void ConvReLUImpl<D>::pretty_print(std::ostream& stream) const {
  if (static_quantized) return static_quantized->pretty_print(stream);
  stream << "torch::nn::intrinsic::ConvReLU" << D << "d";
}

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
  Tensor y = bn->forward(input);
  return GradMode::is_enabled() && y.requires_grad() ? ember::relu(y) : y.relu_();
}

template <size_t D>
void BNReLUImpl<D>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::intrinsic::BNReLU" << D << "d";
}

template class BNReLUImpl<2>;
template class BNReLUImpl<3>;

}  // namespace ember::nn::intrinsic
