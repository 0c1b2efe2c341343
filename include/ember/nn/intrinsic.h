// Fused modules (PyTorch's torch.nn.intrinsic): a layer and the ReLU after it as one module, what
// fx::optimize_for_inference and quantization::fuse_modules make. As PyTorch's, the layer is
// child "0" and the ReLU child "1", so state dicts keep PyTorch's keys ("0.weight", "0.bias").
// When no gradient is wanted (inference mode, no_grad, or no argument requiring grad), ConvReLU
// runs one oneDNN convolution with the ReLU applied as it writes its result, and LinearReLU
// applies the ReLU in place on the linear layer's result; otherwise both record the two ops.
#pragma once
#include <cstddef>
#include <ostream>
#include <type_traits>

#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/normalization.h"
#include "ember/nn/pimpl.h"

namespace ember::detail {
// relu(conv{1,2,3}d(...)), the dimension from the weight's (PyTorch 2's mkldnn
// _convolution_pointwise with attr "relu"): with no graph to record, the ReLU is applied as the
// convolution writes its result. What ConvReLU1d/2d/3d run.
Tensor convolution_relu(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef dilation, int64_t groups);
}  // namespace ember::detail

namespace ember::nn::intrinsic {

template <size_t D>
using ConvHolder = std::conditional_t<D == 1, Conv1d, std::conditional_t<D == 2, Conv2d, Conv3d>>;

template <size_t D>
class ConvReLUImpl : public Module {
 public:
  explicit ConvReLUImpl(ConvHolder<D> conv, ReLU relu = ReLU());
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  ConvHolder<D> conv;  // child "0"
  ReLU relu;           // child "1"
  // Eager static quantization, as Conv's (the int8 module is a quantized ConvReLU).
  std::shared_ptr<quantization::ObserverOrFakeQuantize> activation_post_process;
  std::shared_ptr<nn::quantized::ConvNdImpl<D>> static_quantized;

 private:
  Tensor float_forward(const Tensor& input);
};
class ConvReLU1dImpl : public ConvReLUImpl<1> {
 public:
  using ConvReLUImpl<1>::ConvReLUImpl;
};
class ConvReLU2dImpl : public ConvReLUImpl<2> {
 public:
  using ConvReLUImpl<2>::ConvReLUImpl;
};
class ConvReLU3dImpl : public ConvReLUImpl<3> {
 public:
  using ConvReLUImpl<3>::ConvReLUImpl;
};
EMBER_MODULE(ConvReLU1d);
EMBER_MODULE(ConvReLU2d);
EMBER_MODULE(ConvReLU3d);

class LinearReLUImpl : public Module {
 public:
  explicit LinearReLUImpl(Linear linear, ReLU relu = ReLU());
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  Linear linear;  // child "0"
  ReLU relu;      // child "1"
  // Eager static quantization, as Linear's (the int8 Linear's result then clamped at its zero point).
  std::shared_ptr<quantization::ObserverOrFakeQuantize> activation_post_process;
  std::shared_ptr<nn::quantized::LinearImpl> static_quantized;
};
EMBER_MODULE(LinearReLU);

template <size_t D>
using BatchNormHolder = std::conditional_t<D == 1, BatchNorm1d, std::conditional_t<D == 2, BatchNorm2d, BatchNorm3d>>;

// A convolution, the batch norm after it and, for ConvBnReLU, a ReLU (PyTorch's
// torch.nn.intrinsic.ConvBn1d/2d/3d and ConvBnReLU1d/2d/3d, what quantization::fuse_modules_qat
// and fx::prepare_qat_fx make; children "0", "1", "2"). Without a fake quantizer on the
// convolution's weight it runs the three modules. During quantization-aware training
// (conv->weight_fake_quant set by prepare_qat) it runs PyTorch's QAT ConvBn forward: the weight
// scaled by gamma / sqrt(running_var + eps) is what is fake-quantized and convolved, the result
// divided by that scale again (plus the conv's bias) goes through the batch norm, which keeps
// training its statistics; convert folds the batch norm into the weight and quantizes it.
template <size_t D>
class ConvBnImpl : public Module {
 public:
  ConvBnImpl(ConvHolder<D> conv, BatchNormHolder<D> bn);
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  // A copy of the convolution with the batch norm's running statistics folded into its weight and
  // bias (whatever the mode), sharing the conv's weight_fake_quant: what convert quantizes.
  std::shared_ptr<ConvNdImpl<D>> folded_conv() const;
  // The int8 module convert makes of it: folded_conv() quantized (by its weight_fake_quant after
  // quantization-aware training), a quantized Conv, or ConvReLU for ConvBnReLU, with this output
  // scale and zero point.
  std::shared_ptr<nn::quantized::ConvNdImpl<D>> quantized(double scale, int64_t zero_point) const;
  ConvHolder<D> conv;   // child "0"
  BatchNormHolder<D> bn;  // child "1"
  ReLU relu{nullptr};   // child "2" (ConvBnReLU)
  // Eager static quantization, as Conv's (the int8 module: a quantized Conv, or ConvReLU).
  std::shared_ptr<quantization::ObserverOrFakeQuantize> activation_post_process;
  std::shared_ptr<nn::quantized::ConvNdImpl<D>> static_quantized;

 protected:
  ConvBnImpl(ConvHolder<D> conv, BatchNormHolder<D> bn, ReLU relu);
};
template <size_t D>
class ConvBnReLUImpl : public ConvBnImpl<D> {
 public:
  ConvBnReLUImpl(ConvHolder<D> conv, BatchNormHolder<D> bn, ReLU relu = ReLU()) : ConvBnImpl<D>(conv, bn, relu) {}
};
#define EMBER_CONV_BN(D)                                         \
  class ConvBn##D##dImpl : public ConvBnImpl<D> {                \
   public:                                                       \
    using ConvBnImpl<D>::ConvBnImpl;                             \
  };                                                             \
  class ConvBnReLU##D##dImpl : public ConvBnReLUImpl<D> {        \
   public:                                                       \
    using ConvBnReLUImpl<D>::ConvBnReLUImpl;                     \
  };                                                             \
  EMBER_MODULE(ConvBn##D##d);                                    \
  EMBER_MODULE(ConvBnReLU##D##d);
EMBER_CONV_BN(1)
EMBER_CONV_BN(2)
EMBER_CONV_BN(3)
#undef EMBER_CONV_BN
// ConvBn{D}dImpl and ConvBnReLU{D}dImpl by dimension.
template <size_t D>
using ConvBnFor = std::conditional_t<D == 1, ConvBn1dImpl, std::conditional_t<D == 2, ConvBn2dImpl, ConvBn3dImpl>>;
template <size_t D>
using ConvBnReLUFor =
    std::conditional_t<D == 1, ConvBnReLU1dImpl, std::conditional_t<D == 2, ConvBnReLU2dImpl, ConvBnReLU3dImpl>>;

// relu(batch_norm(x)), PyTorch's BNReLU2d/BNReLU3d.
template <size_t D>
class BNReLUImpl : public Module {
 public:
  explicit BNReLUImpl(BatchNormHolder<D> bn, ReLU relu = ReLU());
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  BatchNormHolder<D> bn;  // child "0"
  ReLU relu;              // child "1"
  // Eager static quantization (BNReLU2d, as PyTorch's): the int8 batch norm, its result clamped
  // at its zero point.
  std::shared_ptr<quantization::ObserverOrFakeQuantize> activation_post_process;
  std::shared_ptr<nn::quantized::BatchNorm2dImpl> static_quantized;
};
class BNReLU2dImpl : public BNReLUImpl<2> {
 public:
  using BNReLUImpl<2>::BNReLUImpl;
};
class BNReLU3dImpl : public BNReLUImpl<3> {
 public:
  using BNReLUImpl<3>::BNReLUImpl;
};
EMBER_MODULE(BNReLU2d);
EMBER_MODULE(BNReLU3d);

}  // namespace ember::nn::intrinsic
