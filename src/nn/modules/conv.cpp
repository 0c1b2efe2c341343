#include "ember/nn/modules/conv.h"

#include "ember/factory.h"
#include "ember/nn/functional/conv.h"
#include "ember/nn_ops.h"
#include "ember/nn/quantized.h"
#include "ember/quantization.h"
#include "nn/common.h"

namespace ember::nn {
namespace {

void check_channels(const char* op, int64_t in, int64_t out, int64_t groups) {
  EMBER_CHECK(in > 0 && out > 0, op, "in_channels and out_channels must be positive, got ", in, " and ", out);
  EMBER_CHECK(groups > 0, op, "groups must be a positive integer, got ", groups);
  EMBER_CHECK(in % groups == 0, op, "in_channels must be divisible by groups (", in, " vs ", groups, ")");
  EMBER_CHECK(out % groups == 0, op, "out_channels must be divisible by groups (", out, " vs ", groups, ")");
}

template <size_t D>
void print_padding(std::ostream& s, const ExpandingArray<D>& padding) {
  if (padding != ExpandingArray<D>(0)) s << ", padding=" << padding;
}
template <size_t D>
void print_padding(std::ostream& s, const typename ConvOptions<D>::padding_t& padding) {
  if (std::holds_alternative<enumtype::kValid>(padding)) s << ", padding='valid'";
  else if (std::holds_alternative<enumtype::kSame>(padding)) s << ", padding='same'";
  else print_padding<D>(s, std::get<ExpandingArray<D>>(padding));
}

// PyTorch's extra_repr: sizes always, the rest only when not the default.
template <size_t D, class Options>
void print_common(std::ostream& s, const Options& o) {
  s << std::boolalpha << o.in_channels() << ", " << o.out_channels() << ", kernel_size=" << o.kernel_size()
    << ", stride=" << o.stride();
  print_padding<D>(s, o.padding());
  if (o.dilation() != ExpandingArray<D>(1)) s << ", dilation=" << o.dilation();
}

constexpr const char* kPadModes[] = {"zeros", "reflect", "replicate", "circular"};

}  // namespace

template <size_t D>
ConvNdImpl<D>::ConvNdImpl(const ConvOptions<D>& options) : options(options) {
  reset();
}

template <size_t D>
void ConvNdImpl<D>::reset() {
  static constexpr const char* kName[] = {"", "Conv1d", "Conv2d", "Conv3d"};
  check_channels(kName[D], options.in_channels(), options.out_channels(), options.groups());
  // the explicit pads a non-zero padding mode applies before the convolution
  _reversed_padding_repeated_twice.assign(2 * D, 0);
  if (std::holds_alternative<enumtype::kSame>(options.padding())) {
    for (size_t i = 0; i < D; ++i) {
      EMBER_CHECK(options.stride()[i] == 1, kName[D], "padding='same' is not supported for strided convolutions");
      // as PyTorch: the odd unit of padding goes to the right (last dim first in the vector)
      const int64_t total = options.dilation()[i] * (options.kernel_size()[i] - 1);
      _reversed_padding_repeated_twice[2 * (D - 1 - i)] = total / 2;
      _reversed_padding_repeated_twice[2 * (D - 1 - i) + 1] = total - total / 2;
    }
  } else if (const auto* pad = std::get_if<ExpandingArray<D>>(&options.padding())) {
    for (size_t i = 0; i < D; ++i) {
      _reversed_padding_repeated_twice[2 * (D - 1 - i)] = (*pad)[i];
      _reversed_padding_repeated_twice[2 * (D - 1 - i) + 1] = (*pad)[i];
    }
  }
  DimVector shape{options.out_channels(), options.in_channels() / options.groups()};
  for (size_t i = 0; i < D; ++i) shape.push_back(options.kernel_size()[i]);
  weight = register_parameter("weight", empty(shape));
  bias = register_parameter("bias", options.bias() ? empty({options.out_channels()}) : Tensor(), options.bias());
  reset_parameters();
}

template <size_t D>
void ConvNdImpl<D>::reset_parameters() {
  reset_weight_and_bias(weight, bias);
}

template <size_t D>
Tensor ConvNdImpl<D>::forward(const Tensor& input) {
  if (static_quantized) return static_quantized->forward(input);
  Tensor y = _conv_forward(input, weight_fake_quant ? weight_fake_quant->forward(weight) : weight, bias);
  return activation_post_process ? activation_post_process->forward(y) : y;
}

template <size_t D>
Tensor ConvNdImpl<D>::_conv_forward(const Tensor& input, const Tensor& weight_, const Tensor& bias_) const {
  auto o = functional::ConvFuncOptions<D>()
               .bias(bias_)
               .stride(options.stride())
               .padding(options.padding())
               .dilation(options.dilation())
               .groups(options.groups());
  Tensor x = input;
  if (const size_t mode = options.padding_mode().index(); mode != 0) {  // not zeros: pad first
    x = ember::pad(input, _reversed_padding_repeated_twice, kPadModes[mode]);
    o.padding(ExpandingArray<D>(0));
  }
  if constexpr (D == 1) return functional::conv1d(x, weight_, o);
  if constexpr (D == 2) return functional::conv2d(x, weight_, o);
  if constexpr (D == 3) return functional::conv3d(x, weight_, o);
}

template <size_t D>
void ConvNdImpl<D>::pretty_print(std::ostream& stream) const {
  if (static_quantized) return static_quantized->pretty_print(stream);
  stream << "torch::nn::Conv" << D << "d(";
  print_common<D>(stream, options);
  if (options.groups() != 1) stream << ", groups=" << options.groups();
  if (!options.bias()) stream << ", bias=false";
  if (options.padding_mode().index() != 0) {
    std::visit([&](auto tag) { stream << ", padding_mode=k" << decltype(tag)::str; }, options.padding_mode());
  }
  stream << ")";
}

template class ConvNdImpl<1>;
template class ConvNdImpl<2>;
template class ConvNdImpl<3>;

template <size_t D>
ConvTransposeNdImpl<D>::ConvTransposeNdImpl(const ConvTransposeOptions<D>& options) : options(options) {
  reset();
}

template <size_t D>
void ConvTransposeNdImpl<D>::reset() {
  static constexpr const char* kName[] = {"", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"};
  check_channels(kName[D], options.in_channels(), options.out_channels(), options.groups());
  DimVector shape{options.in_channels(), options.out_channels() / options.groups()};
  for (size_t i = 0; i < D; ++i) shape.push_back(options.kernel_size()[i]);
  weight = register_parameter("weight", empty(shape));
  bias = register_parameter("bias", options.bias() ? empty({options.out_channels()}) : Tensor(), options.bias());
  reset_parameters();
}

template <size_t D>
void ConvTransposeNdImpl<D>::reset_parameters() {
  reset_weight_and_bias(weight, bias);
}

template <size_t D>
Tensor ConvTransposeNdImpl<D>::forward(const Tensor& input) {
  static constexpr const char* kName[] = {"", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"};
  EMBER_CHECK(options.padding_mode().index() == 0, kName[D], "Only `zeros` padding mode is supported for ", kName[D]);
  const auto o = functional::ConvTransposeFuncOptions<D>()
                     .bias(bias)
                     .stride(options.stride())
                     .padding(options.padding())
                     .output_padding(options.output_padding())
                     .groups(options.groups())
                     .dilation(options.dilation());
  if constexpr (D == 1) return functional::conv_transpose1d(input, weight, o);
  if constexpr (D == 2) return functional::conv_transpose2d(input, weight, o);
  if constexpr (D == 3) return functional::conv_transpose3d(input, weight, o);
}

template <size_t D>
void ConvTransposeNdImpl<D>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::ConvTranspose" << D << "d(";
  print_common<D>(stream, options);
  if (options.output_padding() != ExpandingArray<D>(0)) stream << ", output_padding=" << options.output_padding();
  if (options.groups() != 1) stream << ", groups=" << options.groups();
  if (!options.bias()) stream << ", bias=false";
  if (options.padding_mode().index() != 0) {
    std::visit([&](auto tag) { stream << ", padding_mode=k" << decltype(tag)::str; }, options.padding_mode());
  }
  stream << ")";
}

template class ConvTransposeNdImpl<1>;
template class ConvTransposeNdImpl<2>;
template class ConvTransposeNdImpl<3>;

}  // namespace ember::nn
