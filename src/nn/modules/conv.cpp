#include "ember/nn/modules/conv.h"

#include "ember/factory.h"
#include "ember/nn_ops.h"
#include "nn/common.h"

namespace ember::nn {
namespace {

void check_channels(const char* op, int64_t in, int64_t out, int64_t groups) {
  EMBER_CHECK(in > 0 && out > 0, op, "in_channels and out_channels must be positive, got ", in, " and ", out);
  EMBER_CHECK(groups > 0, op, "groups must be a positive integer, got ", groups);
  EMBER_CHECK(in % groups == 0, op, "in_channels must be divisible by groups (", in, " vs ", groups, ")");
  EMBER_CHECK(out % groups == 0, op, "out_channels must be divisible by groups (", out, " vs ", groups, ")");
}

// PyTorch's extra_repr: sizes always, the rest only when not the default.
template <size_t D, class Options>
void print_common(std::ostream& s, const Options& o) {
  s << std::boolalpha << o.in_channels() << ", " << o.out_channels() << ", kernel_size=" << o.kernel_size()
    << ", stride=" << o.stride();
  if (o.padding() != ExpandingArray<D>(0)) s << ", padding=" << o.padding();
  if (o.dilation() != ExpandingArray<D>(1)) s << ", dilation=" << o.dilation();
}

}  // namespace

template <size_t D>
ConvNdImpl<D>::ConvNdImpl(const ConvOptions<D>& options) : options(options) {
  reset();
}

template <size_t D>
void ConvNdImpl<D>::reset() {
  check_channels(D == 1 ? "Conv1d" : "Conv2d", options.in_channels(), options.out_channels(), options.groups());
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
  if constexpr (D == 1) {
    return functional::conv1d(input, weight, bias, options.stride(), options.padding(), options.dilation(),
                              options.groups());
  } else {
    return functional::conv2d(input, weight, bias, options.stride(), options.padding(), options.dilation(),
                              options.groups());
  }
}

template <size_t D>
void ConvNdImpl<D>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::Conv" << D << "d(";
  print_common<D>(stream, options);
  if (options.groups() != 1) stream << ", groups=" << options.groups();
  if (!options.bias()) stream << ", bias=false";
  stream << ")";
}

template class ConvNdImpl<1>;
template class ConvNdImpl<2>;

ConvTranspose2dImpl::ConvTranspose2dImpl(const ConvTranspose2dOptions& options) : options(options) { reset(); }

void ConvTranspose2dImpl::reset() {
  check_channels("ConvTranspose2d", options.in_channels(), options.out_channels(), options.groups());
  weight = register_parameter("weight", empty({options.in_channels(), options.out_channels() / options.groups(),
                                               options.kernel_size()[0], options.kernel_size()[1]}));
  bias = register_parameter("bias", options.bias() ? empty({options.out_channels()}) : Tensor(), options.bias());
  reset_parameters();
}

void ConvTranspose2dImpl::reset_parameters() { reset_weight_and_bias(weight, bias); }

Tensor ConvTranspose2dImpl::forward(const Tensor& input) {
  return functional::conv_transpose2d(input, weight, bias, options.stride(), options.padding(),
                                      options.output_padding(), options.groups(), options.dilation());
}

void ConvTranspose2dImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::ConvTranspose2d(";
  print_common<2>(stream, options);
  if (options.output_padding() != ExpandingArray<2>(0)) stream << ", output_padding=" << options.output_padding();
  if (options.groups() != 1) stream << ", groups=" << options.groups();
  if (!options.bias()) stream << ", bias=false";
  stream << ")";
}

}  // namespace ember::nn
