#include <algorithm>

#include "ember/nn/init.h"
#include "ember/pointwise.h"
#include "ember/nn/modules/dropout.h"
#include "ember/shape.h"
#include "ember/vision/models.h"

namespace ember::vision::models {

Conv2dNormActivationImpl::Conv2dNormActivationImpl(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                                                   int64_t stride, int64_t groups, int64_t dilation,
                                                   Activation activation) {
  push_back(nn::Conv2d(nn::Conv2dOptions(in_channels, out_channels, kernel_size)
                           .stride(stride)
                           .padding((kernel_size - 1) / 2 * dilation)
                           .dilation(dilation)
                           .groups(groups)
                           .bias(false)));
  // MobileNetV3's BatchNorm: eps 1e-3, momentum 0.01.
  push_back(nn::BatchNorm2d(nn::BatchNormOptions(out_channels).eps(0.001).momentum(0.01)));
  if (activation == Activation::ReLU) push_back(nn::ReLU(nn::ReLUOptions(true)));
  if (activation == Activation::Hardswish) push_back(nn::Hardswish());
}

SqueezeExcitationImpl::SqueezeExcitationImpl(int64_t input_channels, int64_t squeeze_channels) {
  avgpool = register_module("avgpool", nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions(1)));
  fc1 = register_module("fc1", nn::Conv2d(nn::Conv2dOptions(input_channels, squeeze_channels, 1)));
  fc2 = register_module("fc2", nn::Conv2d(nn::Conv2dOptions(squeeze_channels, input_channels, 1)));
  activation = register_module("activation", nn::ReLU());
  scale_activation = register_module("scale_activation", nn::Hardsigmoid());
}

Tensor SqueezeExcitationImpl::forward(const Tensor& x) {
  return scale_activation(fc2(activation(fc1(avgpool(x))))) * x;
}

int64_t InvertedResidualConfig::adjust_channels(int64_t channels, double width_mult) {
  EMBER_CHECK(width_mult > 0, "MobileNetV3", "expected a positive width_mult, got ", width_mult);
  const double v = static_cast<double>(channels) * width_mult;
  int64_t rounded = std::max<int64_t>(8, static_cast<int64_t>(v + 4) / 8 * 8);
  if (static_cast<double>(rounded) < 0.9 * v) rounded += 8;
  return rounded;
}

InvertedResidualConfig::InvertedResidualConfig(int64_t input_channels, int64_t kernel, int64_t expanded_channels,
                                               int64_t out_channels, bool use_se, bool use_hs, int64_t stride,
                                               int64_t dilation, double width_mult)
    : input_channels(adjust_channels(input_channels, width_mult)),
      kernel(kernel),
      expanded_channels(adjust_channels(expanded_channels, width_mult)),
      out_channels(adjust_channels(out_channels, width_mult)),
      use_se(use_se),
      use_hs(use_hs),
      stride(stride),
      dilation(dilation) {}

InvertedResidualImpl::InvertedResidualImpl(const InvertedResidualConfig& c, const SELayerFactory& se_layer)
    : use_res_connect(c.stride == 1 && c.input_channels == c.out_channels) {
  EMBER_CHECK(c.stride == 1 || c.stride == 2, "InvertedResidual", "expected stride 1 or 2, got ", c.stride);
  const Activation act = c.use_hs ? Activation::Hardswish : Activation::ReLU;
  block = register_module("block", nn::Sequential());
  if (c.expanded_channels != c.input_channels)
    block->push_back(Conv2dNormActivation(c.input_channels, c.expanded_channels, 1, 1, 1, 1, act));
  // A dilated depthwise convolution keeps the resolution instead of striding.
  block->push_back(Conv2dNormActivation(c.expanded_channels, c.expanded_channels, c.kernel,
                                        c.dilation > 1 ? 1 : c.stride, c.expanded_channels, c.dilation, act));
  if (c.use_se) {
    const int64_t squeeze = InvertedResidualConfig::adjust_channels(c.expanded_channels / 4, 1.0);
    block->push_back(se_layer ? se_layer(c.expanded_channels, squeeze)
                              : nn::AnyModule(SqueezeExcitation(c.expanded_channels, squeeze)));
  }
  block->push_back(Conv2dNormActivation(c.expanded_channels, c.out_channels, 1, 1, 1, 1, Activation::None));
}

Tensor InvertedResidualImpl::forward(const Tensor& x) {
  Tensor out = block(x);
  return use_res_connect ? out + x : out;
}

MobileNetV3Impl::MobileNetV3Impl(const std::vector<InvertedResidualConfig>& setting, int64_t last_channel,
                                 const MobileNetV3Options& options, const BlockFactory& block) {
  EMBER_CHECK(!setting.empty(), "MobileNetV3", "The inverted_residual_setting should not be empty");
  EMBER_CHECK(options.num_classes() > 0, "MobileNetV3", "expected a positive num_classes, got ", options.num_classes());
  features = register_module("features", nn::Sequential());
  features->push_back(Conv2dNormActivation(3, setting.front().input_channels, 3, 2, 1, 1, Activation::Hardswish));
  for (const auto& c : setting) features->push_back(block ? block(c) : nn::AnyModule(InvertedResidual(c)));
  const int64_t lastconv_input = setting.back().out_channels, lastconv_output = 6 * lastconv_input;
  features->push_back(Conv2dNormActivation(lastconv_input, lastconv_output, 1, 1, 1, 1, Activation::Hardswish));
  avgpool = register_module("avgpool", nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions(1)));
  classifier = register_module("classifier", nn::Sequential(nn::Linear(lastconv_output, last_channel), nn::Hardswish(),
                                                            nn::Dropout(nn::DropoutOptions(options.dropout()).inplace(true)),
                                                            nn::Linear(last_channel, options.num_classes())));

  // torchvision's initialization: He normal (fan_out) convolutions with zero biases, BatchNorm as
  // the identity, linears drawn from N(0, 0.01) with zero biases.
  for (const auto& m : modules(false)) {
    if (auto* conv = m->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(conv->weight, 0, ember::kFanOut);
      if (conv->bias.defined()) nn::init::zeros_(conv->bias);
    } else if (auto* bn = m->as<nn::BatchNorm2d>()) {
      nn::init::ones_(bn->weight);
      nn::init::zeros_(bn->bias);
    } else if (auto* linear = m->as<nn::Linear>()) {
      nn::init::normal_(linear->weight, 0, 0.01);
      nn::init::zeros_(linear->bias);
    }
  }
}

Tensor MobileNetV3Impl::forward(const Tensor& x) { return classifier(flatten(avgpool(features(x)), 1)); }

namespace {

// torchvision's tables: (input, kernel, expanded, out, use_se, use_hs, stride, dilation) per block;
// `reduce` divides the channels of the last stage, `dilation` replaces its stride.
std::vector<InvertedResidualConfig> large_setting(double w, int64_t reduce, int64_t d) {
  using C = InvertedResidualConfig;
  return {C(16, 3, 16, 16, false, false, 1, 1, w),
          C(16, 3, 64, 24, false, false, 2, 1, w),
          C(24, 3, 72, 24, false, false, 1, 1, w),
          C(24, 5, 72, 40, true, false, 2, 1, w),
          C(40, 5, 120, 40, true, false, 1, 1, w),
          C(40, 5, 120, 40, true, false, 1, 1, w),
          C(40, 3, 240, 80, false, true, 2, 1, w),
          C(80, 3, 200, 80, false, true, 1, 1, w),
          C(80, 3, 184, 80, false, true, 1, 1, w),
          C(80, 3, 184, 80, false, true, 1, 1, w),
          C(80, 3, 480, 112, true, true, 1, 1, w),
          C(112, 3, 672, 112, true, true, 1, 1, w),
          C(112, 5, 672, 160 / reduce, true, true, 2, d, w),
          C(160 / reduce, 5, 960 / reduce, 160 / reduce, true, true, 1, d, w),
          C(160 / reduce, 5, 960 / reduce, 160 / reduce, true, true, 1, d, w)};
}

std::vector<InvertedResidualConfig> small_setting(double w, int64_t reduce, int64_t d) {
  using C = InvertedResidualConfig;
  return {C(16, 3, 16, 16, true, false, 2, 1, w),
          C(16, 3, 72, 24, false, false, 2, 1, w),
          C(24, 3, 88, 24, false, false, 1, 1, w),
          C(24, 5, 96, 40, true, true, 2, 1, w),
          C(40, 5, 240, 40, true, true, 1, 1, w),
          C(40, 5, 240, 40, true, true, 1, 1, w),
          C(40, 5, 120, 48, true, true, 1, 1, w),
          C(48, 5, 144, 48, true, true, 1, 1, w),
          C(48, 5, 288, 96 / reduce, true, true, 2, d, w),
          C(96 / reduce, 5, 576 / reduce, 96 / reduce, true, true, 1, d, w),
          C(96 / reduce, 5, 576 / reduce, 96 / reduce, true, true, 1, d, w)};
}

// torchvision's _mobilenet_v3_conf and its builders, for the float or the quantizable model.
template <class Model>
Model build(const MobileNetV3Options& o, bool large) {
  const int64_t reduce = o.reduced_tail() ? 2 : 1, d = o.dilated() ? 2 : 1;
  const double w = o.width_mult();
  return Model(large ? large_setting(w, reduce, d) : small_setting(w, reduce, d),
               InvertedResidualConfig::adjust_channels((large ? 1280 : 1024) / reduce, w), o);
}

}  // namespace

MobileNetV3 mobilenet_v3_large(const MobileNetV3Options& o) { return build<MobileNetV3>(o, /*large=*/true); }
MobileNetV3 mobilenet_v3_small(const MobileNetV3Options& o) { return build<MobileNetV3>(o, /*large=*/false); }

namespace quantization {

QuantizableSqueezeExcitationImpl::QuantizableSqueezeExcitationImpl(int64_t input_channels, int64_t squeeze_channels)
    : SqueezeExcitationImpl(input_channels, squeeze_channels) {
  skip_mul = register_module("skip_mul", nn::quantized::FloatFunctional());
}

Tensor QuantizableSqueezeExcitationImpl::forward(const Tensor& x) {
  const Tensor pooled = avgpool(x);
  const Tensor squeezed = fc1_relu ? fc1_relu(pooled) : activation(fc1(pooled));
  return skip_mul->mul(scale_activation(fc2(squeezed)), x);
}

void QuantizableSqueezeExcitationImpl::fuse_model(std::optional<bool> /*is_qat: conv-relu fuses alike*/) {
  EMBER_CHECK(!fc1_relu, "fuse_model", "the squeeze-excitation ", name(), " is fused already");
  fc1_relu = nn::intrinsic::ConvReLU2d(fc1, activation);
  fc1_relu->train(fc1->is_training());
  replace_module("fc1", fc1_relu);
  auto identity = nn::Identity();
  identity->train(activation->is_training());
  replace_module("activation", identity);
}

QuantizableInvertedResidualImpl::QuantizableInvertedResidualImpl(const InvertedResidualConfig& config)
    : InvertedResidualImpl(config, [](int64_t input, int64_t squeeze) {
        return nn::AnyModule(QuantizableSqueezeExcitation(input, squeeze));
      }) {
  skip_add = register_module("skip_add", nn::quantized::FloatFunctional());
}

Tensor QuantizableInvertedResidualImpl::forward(const Tensor& x) {
  return use_res_connect ? skip_add->add(x, block(x)) : block(x);
}

QuantizableMobileNetV3Impl::QuantizableMobileNetV3Impl(const std::vector<InvertedResidualConfig>& setting,
                                                       int64_t last_channel, const MobileNetV3Options& options)
    : MobileNetV3Impl(setting, last_channel, options, [](const InvertedResidualConfig& c) {
        return nn::AnyModule(QuantizableInvertedResidual(c));
      }) {
  quant = register_module("quant", ember::quantization::QuantStub());
  dequant = register_module("dequant", ember::quantization::DeQuantStub());
  for (const auto& m : modules(false))
    if (auto* relu = m->as<nn::ReLU>()) relu->options.inplace(false);
}

Tensor QuantizableMobileNetV3Impl::forward(const Tensor& x) { return dequant(MobileNetV3Impl::forward(quant(x))); }

void QuantizableMobileNetV3Impl::fuse_model(std::optional<bool> is_qat) {
  for (const auto& m : modules(false)) {
    const bool qat = is_qat.value_or(m->is_training());
    if (auto* cna = dynamic_cast<Conv2dNormActivationImpl*>(m.get())) {
      std::vector<std::string> group{"0", "1"};
      if (cna->size() == 3 && cna->ptr(2)->as<nn::ReLU>()) group.emplace_back("2");
      (qat ? ember::quantization::fuse_modules_qat : ember::quantization::fuse_modules)(*cna, {group});
    } else if (auto* se = dynamic_cast<QuantizableSqueezeExcitationImpl*>(m.get())) {
      se->fuse_model(qat);
    }
  }
}

QuantizableMobileNetV3 mobilenet_v3_large(const MobileNetV3Options& o) {
  return build<QuantizableMobileNetV3>(o, /*large=*/true);
}
QuantizableMobileNetV3 mobilenet_v3_small(const MobileNetV3Options& o) {
  return build<QuantizableMobileNetV3>(o, /*large=*/false);
}

}  // namespace quantization
}  // namespace ember::vision::models
