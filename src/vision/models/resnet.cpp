#include <utility>

#include "ember/nn/init.h"
#include "ember/pointwise.h"
#include "ember/shape.h"
#include "ember/vision/models.h"

namespace ember::vision::models {
namespace {

nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

// The residual sum of a block's branch `out` and its (possibly downsampled) input, then relu.
Tensor residual(Tensor out, const Tensor& x, nn::Sequential& downsample, nn::ReLU& relu) {
  out = out + (downsample.is_empty() ? x : downsample->forward(x));
  return relu(out);
}

}  // namespace

BasicBlockImpl::BasicBlockImpl(int64_t inplanes, int64_t planes, int64_t stride, nn::Sequential downsample_) {
  conv1 = register_module("conv1", conv(inplanes, planes, 3, stride));
  bn1 = register_module("bn1", nn::BatchNorm2d(planes));
  relu = register_module("relu", nn::ReLU(nn::ReLUOptions(true)));
  conv2 = register_module("conv2", conv(planes, planes, 3, 1));
  bn2 = register_module("bn2", nn::BatchNorm2d(planes));
  if (!downsample_.is_empty()) downsample = register_module("downsample", std::move(downsample_));
}

Tensor BasicBlockImpl::forward(const Tensor& x) {
  Tensor out = relu(bn1(conv1(x)));
  return residual(bn2(conv2(out)), x, downsample, relu);
}

BottleneckImpl::BottleneckImpl(int64_t inplanes, int64_t planes, int64_t stride, nn::Sequential downsample_) {
  conv1 = register_module("conv1", conv(inplanes, planes, 1, 1));
  bn1 = register_module("bn1", nn::BatchNorm2d(planes));
  conv2 = register_module("conv2", conv(planes, planes, 3, stride));
  bn2 = register_module("bn2", nn::BatchNorm2d(planes));
  conv3 = register_module("conv3", conv(planes, planes * expansion, 1, 1));
  bn3 = register_module("bn3", nn::BatchNorm2d(planes * expansion));
  relu = register_module("relu", nn::ReLU(nn::ReLUOptions(true)));
  if (!downsample_.is_empty()) downsample = register_module("downsample", std::move(downsample_));
}

Tensor BottleneckImpl::forward(const Tensor& x) {
  Tensor out = relu(bn1(conv1(x)));
  out = relu(bn2(conv2(out)));
  return residual(bn3(conv3(out)), x, downsample, relu);
}

ResNetImpl::ResNetImpl(ResNetBlock block, const std::vector<int64_t>& layers, const ResNetOptions& options) {
  EMBER_CHECK(layers.size() == 4, "ResNet", "expected 4 stage depths, got ", layers.size());
  for (int64_t n : layers) EMBER_CHECK(n > 0, "ResNet", "expected positive stage depths, got ", n);
  EMBER_CHECK(options.num_classes() > 0, "ResNet", "expected a positive num_classes, got ", options.num_classes());
  const bool bottleneck = block == ResNetBlock::Bottleneck;
  const int64_t expansion = bottleneck ? BottleneckImpl::expansion : BasicBlockImpl::expansion;

  conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(3, 64, 7).stride(2).padding(3).bias(false)));
  bn1 = register_module("bn1", nn::BatchNorm2d(64));
  relu = register_module("relu", nn::ReLU(nn::ReLUOptions(true)));
  maxpool = register_module("maxpool", nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)));
  int64_t inplanes = 64;
  // One stage: the first block changes the stride and channels (downsampling its input to match).
  auto make_layer = [&](int64_t planes, int64_t blocks, int64_t stride) {
    nn::Sequential layer;
    for (int64_t i = 0; i < blocks; ++i) {
      nn::Sequential downsample{nullptr};
      const int64_t s = i == 0 ? stride : 1;
      if (i == 0 && (stride != 1 || inplanes != planes * expansion))
        downsample = nn::Sequential(conv(inplanes, planes * expansion, 1, stride), nn::BatchNorm2d(planes * expansion));
      if (bottleneck)
        layer->push_back(Bottleneck(inplanes, planes, s, downsample));
      else
        layer->push_back(BasicBlock(inplanes, planes, s, downsample));
      inplanes = planes * expansion;
    }
    return layer;
  };
  layer1 = register_module("layer1", make_layer(64, layers[0], 1));
  layer2 = register_module("layer2", make_layer(128, layers[1], 2));
  layer3 = register_module("layer3", make_layer(256, layers[2], 2));
  layer4 = register_module("layer4", make_layer(512, layers[3], 2));
  avgpool = register_module("avgpool", nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({1, 1})));
  fc = register_module("fc", nn::Linear(512 * expansion, options.num_classes()));

  // torchvision's initialization: He normal (fan_out) convolutions, BatchNorm as the identity;
  // fc keeps Linear's default.
  for (const auto& m : modules(false)) {
    if (auto* c = m->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(c->weight, 0, ember::kFanOut, ember::kReLU);
    } else if (auto* b = m->as<nn::BatchNorm2d>()) {
      nn::init::ones_(b->weight);
      nn::init::zeros_(b->bias);
    }
  }
  if (options.zero_init_residual()) {
    for (const auto& m : modules(false)) {
      if (auto* b = m->as<Bottleneck>()) nn::init::zeros_(b->bn3->weight);
      if (auto* b = m->as<BasicBlock>()) nn::init::zeros_(b->bn2->weight);
    }
  }
}

Tensor ResNetImpl::forward(const Tensor& x) {
  Tensor y = maxpool(relu(bn1(conv1(x))));
  y = layer4(layer3(layer2(layer1(y))));
  return fc(flatten(avgpool(y), 1));
}

ResNet resnet18(const ResNetOptions& options) { return ResNet(ResNetBlock::Basic, std::vector<int64_t>{2, 2, 2, 2}, options); }
ResNet resnet34(const ResNetOptions& options) { return ResNet(ResNetBlock::Basic, std::vector<int64_t>{3, 4, 6, 3}, options); }
ResNet resnet50(const ResNetOptions& options) {
  return ResNet(ResNetBlock::Bottleneck, std::vector<int64_t>{3, 4, 6, 3}, options);
}

}  // namespace ember::vision::models
