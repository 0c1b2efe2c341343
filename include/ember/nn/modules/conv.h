// Conv1d/2d/3d (zero, reflect, replicate or circular padding), ConvTranspose1d/2d/3d (zero
// padding; as libtorch, another padding_mode is accepted by the options and refused by forward).
#pragma once
#include <variant>
#include <vector>

#include "ember/nn/options.h"
#include "ember/nn/pimpl.h"

namespace ember::quantization {
class ObserverOrFakeQuantize;
}
namespace ember::nn {
namespace quantized {
template <size_t D>
class ConvNdImpl;
}  // namespace quantized

template <size_t D>
struct ConvOptions {
  // An explicit padding, or kValid (none) / kSame (output size = input size, stride 1).
  using padding_t = std::variant<ExpandingArray<D>, enumtype::kValid, enumtype::kSame>;
  // What the padding holds: zeros, or the input reflected, replicated or wrapped around.
  using padding_mode_t = std::variant<enumtype::kZeros, enumtype::kReflect, enumtype::kReplicate, enumtype::kCircular>;
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  EMBER_ARG(int64_t, in_channels);
  EMBER_ARG(int64_t, out_channels);
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(padding_t, padding) = ExpandingArray<D>(0);

 public:
  decltype(auto) padding(std::initializer_list<int64_t> il) { return padding(ExpandingArray<D>(il)); }
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(padding_mode_t, padding_mode) = enumtype::kZeros{};
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;
using Conv3dOptions = ConvOptions<3>;

template <size_t D>
struct ConvTransposeOptions {
  // As libtorch's: a field conv's modes share, of which the transposed modules take only kZeros.
  using padding_mode_t = std::variant<enumtype::kZeros, enumtype::kReflect, enumtype::kReplicate, enumtype::kCircular>;
  ConvTransposeOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  EMBER_ARG(int64_t, in_channels);
  EMBER_ARG(int64_t, out_channels);
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
  EMBER_ARG(ExpandingArray<D>, output_padding) = 0;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
  EMBER_ARG(padding_mode_t, padding_mode) = enumtype::kZeros{};
};
using ConvTranspose1dOptions = ConvTransposeOptions<1>;
using ConvTranspose2dOptions = ConvTransposeOptions<2>;
using ConvTranspose3dOptions = ConvTransposeOptions<3>;

// Weight (out, in / groups, *kernel), initialized as Linear's (kaiming_uniform_(a = sqrt(5))).
template <size_t D>
class ConvNdImpl : public Module {
 public:
  ConvNdImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : ConvNdImpl(ConvOptions<D>(in_channels, out_channels, kernel_size)) {}
  explicit ConvNdImpl(const ConvOptions<D>& options);
  void reset();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  ConvOptions<D> options;
  Tensor weight;
  Tensor bias;
  // libtorch's: the pad each side of each dim, last dim first (F::pad's order), used when
  // padding_mode is not kZeros
  std::vector<int64_t> _reversed_padding_repeated_twice;
  // Eager static quantization, as Linear's: prepare sets the observer of the output, convert the
  // int8 module forward then runs instead (quint8 in and out).
  std::shared_ptr<quantization::ObserverOrFakeQuantize> activation_post_process;
  std::shared_ptr<quantized::ConvNdImpl<D>> static_quantized;
  // Quantization-aware training, as Linear's: the weight's fake quantizer, applied by forward.
  std::shared_ptr<quantization::ObserverOrFakeQuantize> weight_fake_quant;

  // The convolution of this module's options (padding mode included) with the given weight and
  // bias (libtorch's _conv_forward): what forward runs, and the QAT ConvBn modules with a folded
  // weight.
  Tensor _conv_forward(const Tensor& input, const Tensor& weight, const Tensor& bias) const;
  Tensor _conv_forward(const Tensor& input, const Tensor& weight) const { return _conv_forward(input, weight, bias); }
};
class Conv1dImpl : public ConvNdImpl<1> {
 public:
  using ConvNdImpl<1>::ConvNdImpl;
};
class Conv2dImpl : public ConvNdImpl<2> {
 public:
  using ConvNdImpl<2>::ConvNdImpl;
};
class Conv3dImpl : public ConvNdImpl<3> {
 public:
  using ConvNdImpl<3>::ConvNdImpl;
};
EMBER_MODULE(Conv1d);
EMBER_MODULE(Conv2d);
EMBER_MODULE(Conv3d);

// Weight (in, out / groups, *kernel).
template <size_t D>
class ConvTransposeNdImpl : public Module {
 public:
  ConvTransposeNdImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : ConvTransposeNdImpl(ConvTransposeOptions<D>(in_channels, out_channels, kernel_size)) {}
  explicit ConvTransposeNdImpl(const ConvTransposeOptions<D>& options);
  void reset();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  ConvTransposeOptions<D> options;
  Tensor weight;
  Tensor bias;
};
class ConvTranspose1dImpl : public ConvTransposeNdImpl<1> {
 public:
  using ConvTransposeNdImpl<1>::ConvTransposeNdImpl;
};
class ConvTranspose2dImpl : public ConvTransposeNdImpl<2> {
 public:
  using ConvTransposeNdImpl<2>::ConvTransposeNdImpl;
};
class ConvTranspose3dImpl : public ConvTransposeNdImpl<3> {
 public:
  using ConvTransposeNdImpl<3>::ConvTransposeNdImpl;
};
EMBER_MODULE(ConvTranspose1d);
EMBER_MODULE(ConvTranspose2d);
EMBER_MODULE(ConvTranspose3d);

}  // namespace ember::nn
