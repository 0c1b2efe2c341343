// The model zoo, as torchvision's models: the same structure and module names, so a state dict
// written by torchvision (torch.save(model.state_dict())) loads with load_torch_checkpoint and
// load_state_dict and gives the same outputs. Built from nn modules: autograd, Module::to(dtype or
// MemoryFormat) and autocast work as for any model. See docs/vision.md.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/normalization.h"
#include "ember/nn/modules/pooling.h"
#include "ember/nn/options.h"
#include "ember/quantization.h"

namespace ember::vision::models {

// ---- ResNet ----

struct ResNetOptions {
  EMBER_ARG(int64_t, num_classes) = 1000;
  // Zeroes the last BatchNorm's weight of each residual branch, so every block starts as the identity.
  EMBER_ARG(bool, zero_init_residual) = false;
};

// conv3x3 -> bn -> relu -> conv3x3 -> bn, plus the input (through `downsample` when given).
class BasicBlockImpl : public nn::Module {
 public:
  static constexpr int64_t expansion = 1;
  BasicBlockImpl(int64_t inplanes, int64_t planes, int64_t stride = 1, nn::Sequential downsample = nullptr);
  Tensor forward(const Tensor& x);

  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  nn::ReLU relu{nullptr};
  nn::Conv2d conv2{nullptr};
  nn::BatchNorm2d bn2{nullptr};
  nn::Sequential downsample{nullptr};
};
EMBER_MODULE(BasicBlock);

// conv1x1 -> conv3x3 (with the stride) -> conv1x1 to planes * 4, each with its bn, plus the input.
class BottleneckImpl : public nn::Module {
 public:
  static constexpr int64_t expansion = 4;
  BottleneckImpl(int64_t inplanes, int64_t planes, int64_t stride = 1, nn::Sequential downsample = nullptr);
  Tensor forward(const Tensor& x);

  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  nn::Conv2d conv2{nullptr};
  nn::BatchNorm2d bn2{nullptr};
  nn::Conv2d conv3{nullptr};
  nn::BatchNorm2d bn3{nullptr};
  nn::ReLU relu{nullptr};
  nn::Sequential downsample{nullptr};
};
EMBER_MODULE(Bottleneck);

enum class ResNetBlock { Basic, Bottleneck };

// conv1 -> bn1 -> relu -> maxpool -> layer1..layer4 (`layers[i]` blocks each) -> avgpool -> fc.
class ResNetImpl : public nn::Module {
 public:
  ResNetImpl(ResNetBlock block, const std::vector<int64_t>& layers, const ResNetOptions& options = {});
  Tensor forward(const Tensor& x);

  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  nn::ReLU relu{nullptr};
  nn::MaxPool2d maxpool{nullptr};
  nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
  nn::AdaptiveAvgPool2d avgpool{nullptr};
  nn::Linear fc{nullptr};
};
EMBER_MODULE(ResNet);

ResNet resnet18(const ResNetOptions& options = {});
ResNet resnet34(const ResNetOptions& options = {});
ResNet resnet50(const ResNetOptions& options = {});

// ---- MobileNetV3 ----

// Conv2d (no bias, padding (kernel - 1) / 2 * dilation) -> BatchNorm2d -> the activation, children
// named "0", "1", "2" as torchvision's Conv2dNormActivation.
enum class Activation { None, ReLU, Hardswish };
class Conv2dNormActivationImpl : public nn::SequentialImpl {
 public:
  Conv2dNormActivationImpl(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride,
                           int64_t groups, int64_t dilation, Activation activation);
};
EMBER_MODULE(Conv2dNormActivation);

// x * hardsigmoid(fc2(relu(fc1(avgpool(x))))), fc1 and fc2 being 1x1 convolutions.
class SqueezeExcitationImpl : public nn::Module {
 public:
  SqueezeExcitationImpl(int64_t input_channels, int64_t squeeze_channels);
  Tensor forward(const Tensor& x);

  nn::AdaptiveAvgPool2d avgpool{nullptr};
  nn::Conv2d fc1{nullptr}, fc2{nullptr};
  nn::ReLU activation{nullptr};
  nn::Hardsigmoid scale_activation{nullptr};
};
EMBER_MODULE(SqueezeExcitation);

// One row of a MobileNetV3 table; channels are given for width_mult 1 and scaled by the constructor.
struct InvertedResidualConfig {
  InvertedResidualConfig(int64_t input_channels, int64_t kernel, int64_t expanded_channels, int64_t out_channels,
                         bool use_se, bool use_hs, int64_t stride, int64_t dilation, double width_mult);
  // round(channels * width_mult) to a multiple of 8, never below 8 nor more than 10% below.
  static int64_t adjust_channels(int64_t channels, double width_mult);
  int64_t input_channels, kernel, expanded_channels, out_channels;
  bool use_se, use_hs;
  int64_t stride, dilation;
};

// Makes a block's squeeze-excitation layer from (input channels, squeeze channels): torchvision's
// se_layer argument.
using SELayerFactory = std::function<nn::AnyModule(int64_t input_channels, int64_t squeeze_channels)>;

// block: expand (1x1, when expanded != input) -> depthwise -> squeeze-excitation (when use_se; a
// SqueezeExcitation unless se_layer makes another) -> project (1x1, no activation); the input is
// added when stride is 1 and the channels are kept.
class InvertedResidualImpl : public nn::Module {
 public:
  explicit InvertedResidualImpl(const InvertedResidualConfig& config, const SELayerFactory& se_layer = nullptr);
  Tensor forward(const Tensor& x);

  nn::Sequential block{nullptr};
  bool use_res_connect;
};
EMBER_MODULE(InvertedResidual);

struct MobileNetV3Options {
  EMBER_ARG(int64_t, num_classes) = 1000;
  EMBER_ARG(double, width_mult) = 1.0;
  // Halves the channels of the last blocks (torchvision's reduced_tail).
  EMBER_ARG(bool, reduced_tail) = false;
  // Dilation 2 instead of stride 2 in the last stage (torchvision's dilated).
  EMBER_ARG(bool, dilated) = false;
  EMBER_ARG(double, dropout) = 0.2;
};

// Makes a block from its table row: torchvision's block argument (InvertedResidual by default).
using BlockFactory = std::function<nn::AnyModule(const InvertedResidualConfig& config)>;

// features (stem, the inverted residuals, a 1x1 conv to 6x the last block's channels) -> avgpool ->
// classifier (Linear -> Hardswish -> Dropout -> Linear).
class MobileNetV3Impl : public nn::Module {
 public:
  MobileNetV3Impl(const std::vector<InvertedResidualConfig>& setting, int64_t last_channel,
                  const MobileNetV3Options& options = {}, const BlockFactory& block = nullptr);
  Tensor forward(const Tensor& x);

  nn::Sequential features{nullptr};
  nn::AdaptiveAvgPool2d avgpool{nullptr};
  nn::Sequential classifier{nullptr};
};
EMBER_MODULE(MobileNetV3);

MobileNetV3 mobilenet_v3_large(const MobileNetV3Options& options = {});
MobileNetV3 mobilenet_v3_small(const MobileNetV3Options& options = {});

// torchvision.models.quantization: MobileNetV3 ready for eager static quantization or
// quantization-aware training (ember/quantization.h). The same module names as the float model
// plus parameterless stubs and FloatFunctionals, so a torchvision state dict loads into either.
namespace quantization {

// The scale multiplied through a FloatFunctional (skip_mul), whose result eager quantization
// observes and requantizes.
class QuantizableSqueezeExcitationImpl : public SqueezeExcitationImpl {
 public:
  QuantizableSqueezeExcitationImpl(int64_t input_channels, int64_t squeeze_channels);
  Tensor forward(const Tensor& x);
  // fc1 and its ReLU become nn::intrinsic::ConvReLU2d under the name "fc1" ("activation":
  // Identity), as fuse_modules(["fc1", "activation"]); is_qat defaults to the training mode.
  void fuse_model(std::optional<bool> is_qat = std::nullopt);
  nn::quantized::FloatFunctional skip_mul{nullptr};
  nn::intrinsic::ConvReLU2d fc1_relu{nullptr};  // set by fuse_model
};
EMBER_MODULE(QuantizableSqueezeExcitation);

// The residual sum through a FloatFunctional (skip_add); QuantizableSqueezeExcitation as se_layer.
class QuantizableInvertedResidualImpl : public InvertedResidualImpl {
 public:
  explicit QuantizableInvertedResidualImpl(const InvertedResidualConfig& config);
  Tensor forward(const Tensor& x);
  nn::quantized::FloatFunctional skip_add{nullptr};
};
EMBER_MODULE(QuantizableInvertedResidual);

// quant -> the float model's layers -> dequant, with QuantizableInvertedResidual blocks and
// non-inplace ReLUs (torchvision's _replace_relu).
class QuantizableMobileNetV3Impl : public MobileNetV3Impl {
 public:
  QuantizableMobileNetV3Impl(const std::vector<InvertedResidualConfig>& setting, int64_t last_channel,
                             const MobileNetV3Options& options = {});
  Tensor forward(const Tensor& x);
  // torchvision's fuse_model: every Conv2dNormActivation's conv and batch norm (and ReLU when it
  // has one) fused, and each squeeze-excitation's fc1 and ReLU; eval mode folds the batch norms
  // (fuse_modules), QAT keeps them (fuse_modules_qat). is_qat defaults to each module's training mode.
  void fuse_model(std::optional<bool> is_qat = std::nullopt);
  ember::quantization::QuantStub quant{nullptr};
  ember::quantization::DeQuantStub dequant{nullptr};
};
EMBER_MODULE(QuantizableMobileNetV3);

QuantizableMobileNetV3 mobilenet_v3_large(const MobileNetV3Options& options = {});
QuantizableMobileNetV3 mobilenet_v3_small(const MobileNetV3Options& options = {});

}  // namespace quantization

}  // namespace ember::vision::models
