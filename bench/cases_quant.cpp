// Dynamic int8 quantization: a 1024 -> 1024 Linear at batch 64, its weight quantized per channel
// and prepacked once, its input quantized per call, against Ember's float32 Linear and against
// libtorch's quantized::linear_dynamic (its default engine, called through the op registry).
// Static int8 convolution: 3x3, 64 -> 64 channels, 56x56, batch 8, channels-last, against Ember's
// float32 convolution and libtorch's quantized::conv2d. The main job's CNN, trained one epoch,
// quantized statically in fx graph mode: int8 inference over the test set against float32.
// The notes name oneDNN's implementation and instruction set: on a CPU without VNNI the int8
// products go through 16-bit pair sums (vpmaddubsw), which is why the inputs use PyTorch's
// reduce_range ([0, 127]).
#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <chrono>
#include <cstdio>

#include "ember/fx/quantize.h"
#include "fashion_mnist.h"
#include "torch_check.h"
#include "train_models.h"

namespace {

constexpr const char* kQuant = "quant: dynamic int8 linear 1024x1024 b64";
constexpr int64_t kIn = 1024, kOut = 1024, kQuantBatch = 64;

struct Setup {
  ember::nn::Linear linear{kIn, kOut};
  std::shared_ptr<ember::nn::quantized::dynamic::LinearImpl> qlinear;
  ember::Tensor x;
  Setup() {
    ember::manual_seed(7);
    linear = ember::nn::Linear(kIn, kOut);
    qlinear = ember::nn::quantized::dynamic::LinearImpl::from_float(*linear);
    x = parity::random({kQuantBatch, kIn}, ember::kFloat, 71);
  }
  // One quantum of the activations as the output sees it: an input element rounded the other
  // way (libtorch's onednn engine quantizes x inside oneDNN with 1 / scale taken in double)
  // moves an output by its scale times a weight, at most the largest one.
  double quantum() const {
    const auto [xs, xz] = ember::_choose_qparams_per_tensor(x, true);
    return xs * qlinear->weight().dequantize().abs().max().item<double>();
  }
};

std::string engine_name() {
  switch (at::globalContext().qEngine()) {
    case at::QEngine::FBGEMM: return "fbgemm";
    case at::QEngine::QNNPACK: return "qnnpack";
    case at::QEngine::ONEDNN: return "onednn";
    default: return "none";
  }
}

bench::Register vs_f32{{
    .name = "quant_linear_dynamic_1024_b64_vs_f32",
    .label = kQuant,
    .target = 0.33,
    .baseline = bench::Baseline::Ember,
    .run =
        [](const bench::Context& ctx) {
          Setup s;
          const ember::Tensor y = s.qlinear->forward(s.x), ref = s.linear(s.x);
          bench::check_close(ctx, y, parity::to_torch(ref), parity::Tol{0, 0.05});
          bench::Outcome o =
              bench::time_pair(ctx, {.ember = [&] { (void)s.qlinear->forward(s.x); },
                                     .baseline = [&] { (void)s.linear(s.x); },
                                     .flops = 2.0 * kQuantBatch * kIn * kOut});
          o.notes.push_back("int8: " + s.qlinear->kernel(s.x));
          return o;
        },
}};

bench::Register vs_libtorch{{
    .name = "quant_linear_dynamic_1024_b64",
    .label = kQuant,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          Setup s;
          const ember::Tensor& qw = s.qlinear->weight();
          const torch::Tensor tqw = torch::_make_per_channel_quantized_tensor(
              parity::to_torch(qw.int_repr()), parity::to_torch(qw.q_per_channel_scales()),
              parity::to_torch(qw.q_per_channel_zero_points()), 0);
          auto& dispatcher = c10::Dispatcher::singleton();
          torch::jit::Stack prepack{tqw, c10::optional<at::Tensor>(parity::to_torch(s.linear->bias))};
          dispatcher.findSchemaOrThrow("quantized::linear_prepack", "").callBoxed(&prepack);
          const c10::IValue packed = prepack.at(0);
          const c10::OperatorHandle run = dispatcher.findSchemaOrThrow("quantized::linear_dynamic", "");
          const torch::Tensor tx = parity::to_torch(s.x);
          auto torch_forward = [&] {
            torch::jit::Stack stack{tx, packed, true};
            run.callBoxed(&stack);
            return stack.at(0).toTensor();
          };
          bench::check_close(ctx, s.qlinear->forward(s.x), torch_forward(), parity::Tol{0, s.quantum()});
          bench::Outcome o = bench::time_pair(ctx, {.ember = [&] { (void)s.qlinear->forward(s.x); },
                                                    .baseline = [&] { (void)torch_forward(); },
                                                    .flops = 2.0 * kQuantBatch * kIn * kOut});
          o.notes.push_back("ember " + s.qlinear->kernel(s.x) + "; libtorch engine " + engine_name());
          return o;
        },
}};

constexpr const char* kQuantConv = "quant: static int8 conv2d 3x3 64->64 56x56 b8";
constexpr int64_t kConvBatch = 8, kConvChannels = 64, kConvSize = 56;
constexpr double kConvFlops = 2.0 * kConvBatch * kConvChannels * kConvChannels * 9 * kConvSize * kConvSize;

// The float conv and its quantized twin; the input's scale covers [0, 4) in [0, 127], the range
// PyTorch's x86 qconfig keeps activations in.
struct ConvSetup {
  ember::nn::Conv2d conv{ember::nn::Conv2dOptions(kConvChannels, kConvChannels, 3).padding(1)};
  std::shared_ptr<ember::nn::quantized::Conv2dImpl> qconv;
  ember::Tensor x, qx;
  static constexpr double kInScale = 4.0 / 128, kOutScale = 0.05;
  static constexpr int64_t kOutZeroPoint = 128;
  ConvSetup() {
    ember::manual_seed(11);
    conv = ember::nn::Conv2d(ember::nn::Conv2dOptions(kConvChannels, kConvChannels, 3).padding(1));
    qconv = ember::nn::quantized::Conv2dImpl::from_float(*conv, kOutScale, kOutZeroPoint);
    x = (parity::random({kConvBatch, kConvChannels, kConvSize, kConvSize}, ember::kFloat, 73).abs() * 1.5)
            .contiguous(ember::MemoryFormat::ChannelsLast);
    qx = ember::quantize_per_tensor(x, kInScale, 0, ember::kQUInt8);
  }
};

bench::Register conv_vs_f32{{
    .name = "quant_conv2d_3x3_64_56_b8_vs_f32",
    .label = kQuantConv,
    .target = 0.4,
    .baseline = bench::Baseline::Ember,
    .run =
        [](const bench::Context& ctx) {
          ConvSetup s;
          ember::InferenceMode guard;
          const ember::Tensor xd = s.qx.dequantize().contiguous(ember::MemoryFormat::ChannelsLast);
          const ember::Tensor ref = s.conv(xd);
          bench::check_close(ctx, s.qconv->forward(s.qx).dequantize(), parity::to_torch(ref),
                             parity::Tol{0, 0.05});
          bench::Outcome o = bench::time_pair(ctx, {.ember = [&] { (void)s.qconv->forward(s.qx); },
                                                    .baseline = [&] { (void)s.conv(xd); },
                                                    .flops = kConvFlops});
          o.notes.push_back("int8: " + s.qconv->kernel(s.qx));
          return o;
        },
}};

bench::Register conv_vs_libtorch{{
    .name = "quant_conv2d_3x3_64_56_b8",
    .label = kQuantConv,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          ConvSetup s;
          const ember::Tensor& qw = s.qconv->weight();
          const torch::Tensor tqw = torch::_make_per_channel_quantized_tensor(
              parity::to_torch(qw.int_repr()), parity::to_torch(qw.q_per_channel_scales()),
              parity::to_torch(qw.q_per_channel_zero_points()), 0);
          auto& dispatcher = c10::Dispatcher::singleton();
          const std::vector<int64_t> one{1, 1};
          torch::jit::Stack prepack{tqw, c10::optional<at::Tensor>(parity::to_torch(s.conv->bias)), one, one, one,
                                    int64_t{1}};
          dispatcher.findSchemaOrThrow("quantized::conv2d_prepack", "").callBoxed(&prepack);
          const c10::IValue packed = prepack.at(0);
          const c10::OperatorHandle run = dispatcher.findSchemaOrThrow("quantized::conv2d", "new");
          const torch::Tensor tqx =
              torch::_make_per_tensor_quantized_tensor(parity::to_torch(s.qx.int_repr()), ConvSetup::kInScale, 0)
                  .contiguous(torch::MemoryFormat::ChannelsLast);
          auto torch_forward = [&] {
            torch::jit::Stack stack{tqx, packed, ConvSetup::kOutScale, ConvSetup::kOutZeroPoint};
            run.callBoxed(&stack);
            return stack.at(0).toTensor();
          };
          // within one quantum of the output
          bench::check_close(ctx, s.qconv->forward(s.qx).int_repr().to(ember::kFloat),
                             torch_forward().int_repr().to(torch::kFloat), parity::Tol{0, 1.0});
          bench::Outcome o = bench::time_pair(ctx, {.ember = [&] { (void)s.qconv->forward(s.qx); },
                                                    .baseline = [&] { (void)torch_forward(); },
                                                    .flops = kConvFlops});
          o.notes.push_back("ember " + s.qconv->kernel(s.qx) + "; libtorch engine " + engine_name());
          return o;
        },
}};

// One epoch of the main job's training (batch 64, Adam), then the model quantized by prepare_fx
// (calibrated on 5,000 training images) and convert_fx; both evaluated on the 10,000 test images in
// batches of 1,000, inference mode. Their accuracies must be within 0.5 points.
bench::Register cnn_int8{{
    .name = "quant_cnn_infer_fashion_mnist_vs_f32",
    .label = "quant: the main job's CNN, int8 (fx, static) inference on the test set",
    .target = 0.5,
    .baseline = bench::Baseline::Ember,
    .run =
        [](const bench::Context& ctx) {
          constexpr double kMean = 0.2860, kStd = 0.3530;
          namespace ed = ember::data;
          using Mnist = ed::datasets::MNIST;
          ember::manual_seed(17);
          const bench::InflatedFashionMnist files;
          const std::string root = files.dir.string();
          train_models::on_ember::FashionNet model;
          {
            auto loader = ed::make_data_loader<ed::samplers::RandomSampler>(
                Mnist(root, Mnist::Mode::kTrain).map(ed::transforms::Normalize<>(kMean, kStd)).map(ed::transforms::Stack<>()),
                ed::DataLoaderOptions().batch_size(64));
            ember::optim::Adam opt(model->parameters(), ember::optim::AdamOptions(2e-3));
            model->train();
            for (auto& batch : *loader) {
              opt.zero_grad();
              ember::nn::functional::cross_entropy(model(batch.data), batch.target).backward();
              opt.step();
            }
          }
          model->eval();
          constexpr int64_t kBatch = 1000;
          const Mnist train(root, Mnist::Mode::kTrain), test(root, Mnist::Mode::kTest);
          const ember::Tensor calib = (train.images().narrow(0, 0, 5 * kBatch) - kMean) / kStd;
          const ember::Tensor images = (test.images() - kMean) / kStd, targets = test.targets();
          auto prepared = ember::fx::prepare_fx(model, ember::fx::get_default_qconfig_mapping("x86"),
                                                calib.narrow(0, 0, kBatch));
          {
            ember::InferenceMode guard;
            for (int64_t b = 0; b < 5; ++b) prepared->forward(calib.narrow(0, b * kBatch, kBatch));
          }
          auto converted = ember::fx::convert_fx(prepared);
          const int64_t n = images.size(0);
          auto run = [&](auto&& forward) {
            ember::InferenceMode guard;
            int64_t correct = 0;
            for (int64_t b = 0; b < n; b += kBatch)
              correct += forward(images.narrow(0, b, kBatch)).argmax(1).eq(targets.narrow(0, b, kBatch))
                             .sum()
                             .template item<int64_t>();
            return 100.0 * static_cast<double>(correct) / static_cast<double>(n);
          };
          const double int8_acc = run([&](const ember::Tensor& x) { return converted->forward(x); });
          const double float_acc = run([&](const ember::Tensor& x) { return model(x); });
          char note[160];
          std::snprintf(note, sizeof note, "test accuracy int8 %.2f%%, float32 %.2f%%", int8_acc, float_acc);
          if (std::abs(int8_acc - float_acc) > 0.5) throw bench::CheckFailure(ctx.current.name + ": " + note);
          bench::Outcome o = bench::time_pair(
              ctx, {.ember = [&] { (void)run([&](const ember::Tensor& x) { return converted->forward(x); }); },
                    .baseline = [&] { (void)run([&](const ember::Tensor& x) { return model(x); }); },
                    .min_run_time = 2.0,
                    .rounds = 3});
          o.notes.emplace_back(note);
          return o;
        },
}};

}  // namespace
