// Trains the model zoo's MobileNetV3-Small (torchvision's quantizable form) on Fashion-MNIST
// (Debian's dataset-fashion-mnist, resized to 32x32 or 64x64, three equal channels), then fuses
// it, quantizes it with eager post-training static quantization (fbgemm/x86 qconfig, calibrated
// on training images) and reports test accuracy, size and inference speed of the float and the
// int8 model. Written the way a libtorch user writes it. docs/vision.md has a run's figures.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ember/ember.h"

namespace T = ::ember;
namespace F = T::nn::functional;
namespace models = T::vision::models;

namespace {

struct Flags {
  int epochs = 8;
  int64_t batch_size = 128;
  double lr = 3e-3;
  int64_t size = 32;  // 32 or 64
  int64_t calibration_batches = 8;  // of batch_size training images
  int threads = 0;  // 0: Ember's default (all cores)
  int64_t seed = 0;
  int64_t smoke = 0;  // > 0: train and evaluate on that many batches only (CI's smoke run)
  std::string data = "/usr/share/datasets/fashion-mnist";
  std::string output = "mobilenet_v3_small.safetensors";
};

[[noreturn]] void usage(const char* argv0, int code) {
  std::fprintf(code ? stderr : stdout,
               "usage: %s [--epochs N] [--batch-size N] [--lr X] [--size 32|64] [--calibration-batches N]\n"
               "          [--threads N] [--seed N] [--smoke N] [--data DIR] [--output FILE]\n"
               "Trains MobileNetV3-Small on Fashion-MNIST (IDX files in DIR, default\n"
               "/usr/share/datasets/fashion-mnist) resized to SIZE x SIZE, saves its parameters to FILE\n"
               "(safetensors), then fuses and quantizes it (eager mode, calibrated on N batches of\n"
               "training images) and compares the float and int8 models' test accuracy, size and speed.\n"
               "--smoke N trains and evaluates on N batches only.\n",
               argv0);
  std::exit(code);
}

Flags parse_flags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") usage(argv[0], 0);
    if (i + 1 >= argc) usage(argv[0], 2);
    const char* value = argv[++i];
    if (arg == "--epochs") f.epochs = std::atoi(value);
    else if (arg == "--batch-size") f.batch_size = std::atoll(value);
    else if (arg == "--lr") f.lr = std::atof(value);
    else if (arg == "--size") f.size = std::atoll(value);
    else if (arg == "--calibration-batches") f.calibration_batches = std::atoll(value);
    else if (arg == "--threads") f.threads = std::atoi(value);
    else if (arg == "--seed") f.seed = std::atoll(value);
    else if (arg == "--smoke") f.smoke = std::atoll(value);
    else if (arg == "--data") f.data = value;
    else if (arg == "--output") f.output = value;
    else usage(argv[0], 2);
  }
  if (f.epochs < 1 || f.batch_size < 1 || !(f.lr > 0) || (f.size != 32 && f.size != 64) ||
      f.calibration_batches < 1 || f.threads < 0 || f.smoke < 0)
    usage(argv[0], 2);
  return f;
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Fashion-MNIST's [N, 1, 28, 28] images in [0, 1], resized (bilinear), normalized with the
// training set's mean and standard deviation, as 3 equal channels (the zoo's models take RGB).
T::Tensor prepare_images(const T::Tensor& images, int64_t size) {
  const auto options =
      F::InterpolateFuncOptions().size(std::vector<int64_t>{size, size}).mode(T::kBilinear).align_corners(false);
  const T::Tensor resized = F::interpolate(images, options);
  return ((resized - 0.2860) / 0.3530).expand({-1, 3, -1, -1}).contiguous();
}

// Test accuracy (%) and images/s of the model on the test set, batches of 500.
std::pair<double, double> evaluate(models::quantization::QuantizableMobileNetV3& model, const T::Tensor& images,
                                   const T::Tensor& labels) {
  T::InferenceMode guard;
  int64_t correct = 0;
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < images.size(0); i += 500) {
    const int64_t n = std::min<int64_t>(500, images.size(0) - i);
    correct += model->forward(images.narrow(0, i, n)).argmax(1).eq(labels.narrow(0, i, n)).sum().item<int64_t>();
  }
  const double seconds = seconds_since(t0);
  return {100.0 * static_cast<double>(correct) / static_cast<double>(images.size(0)),
          static_cast<double>(images.size(0)) / seconds};
}

// Median milliseconds of one image's forward (batch 1) over 200 test images.
double latency_ms(models::quantization::QuantizableMobileNetV3& model, const T::Tensor& images) {
  T::InferenceMode guard;
  std::vector<double> ms;
  for (int64_t i = 0; i < std::min<int64_t>(200, images.size(0)); ++i) {
    const auto t0 = Clock::now();
    model->forward(images.narrow(0, i, 1));
    ms.push_back(1e3 * seconds_since(t0));
  }
  std::nth_element(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(ms.size() / 2), ms.end());
  return ms[ms.size() / 2];
}

// Bytes of the int8 model's state as PyTorch's quantized layers save it: int8 weights, float32
// biases, a float64 scale and an int64 zero point per output channel.
int64_t int8_bytes(const T::Tensor& qweight, const std::optional<T::Tensor>& bias) {
  return qweight.numel() + (bias ? static_cast<int64_t>(bias->nbytes()) : 0) + 16 * qweight.size(0);
}
int64_t int8_state_bytes(T::nn::Module& model) {
  int64_t bytes = 0;
  for (const auto& m : model.modules()) {
    if (auto* conv = m->as<T::nn::Conv2d>(); conv && conv->static_quantized)
      bytes += int8_bytes(conv->static_quantized->weight(), conv->static_quantized->bias());
    else if (auto* fused = m->as<T::nn::intrinsic::ConvReLU2d>(); fused && fused->static_quantized)
      bytes += int8_bytes(fused->static_quantized->weight(), fused->static_quantized->bias());
    else if (auto* linear = m->as<T::nn::Linear>(); linear && linear->static_quantized)
      bytes += int8_bytes(linear->static_quantized->weight(), linear->static_quantized->bias());
  }
  return bytes;
}

}  // namespace

int main(int argc, char** argv) try {
  const Flags flags = parse_flags(argc, argv);
  if (flags.threads > 0) T::set_num_threads(flags.threads);
  T::manual_seed(flags.seed);
  using T::data::datasets::MNIST;
  const MNIST train_set(flags.data, MNIST::Mode::kTrain), test_set(flags.data, MNIST::Mode::kTest);
  T::Tensor train_images = prepare_images(train_set.images(), flags.size), train_labels = train_set.targets();
  T::Tensor test_images = prepare_images(test_set.images(), flags.size), test_labels = test_set.targets();
  if (flags.smoke > 0) {
    const int64_t n = flags.smoke * flags.batch_size;
    train_images = train_images.narrow(0, 0, n), train_labels = train_labels.narrow(0, 0, n);
    test_images = test_images.narrow(0, 0, n), test_labels = test_labels.narrow(0, 0, n);
  }
  const int64_t train_size = train_images.size(0);

  auto model = models::quantization::mobilenet_v3_small(models::MobileNetV3Options().num_classes(10));
  int64_t parameters = 0;
  for (const auto& p : model->parameters()) parameters += p.numel();
  std::printf("MobileNetV3-Small, %lld parameters; %lld training images at %lldx%lld; %d threads\n",
              static_cast<long long>(parameters), static_cast<long long>(train_size),
              static_cast<long long>(flags.size), static_cast<long long>(flags.size), T::get_num_threads());

  T::optim::Adam optimizer(model->parameters(), T::optim::AdamOptions(flags.lr).weight_decay(1e-5));
  T::optim::CosineAnnealingLR scheduler(optimizer, flags.epochs);
  const auto start = Clock::now();
  for (int epoch = 1; epoch <= flags.epochs; ++epoch) {
    model->train();
    const auto t0 = Clock::now();
    const T::Tensor order = T::randperm(train_size);
    double loss_sum = 0;
    int64_t correct = 0;
    for (int64_t i = 0; i < train_size; i += flags.batch_size) {
      const T::Tensor idx = order.narrow(0, i, std::min(flags.batch_size, train_size - i));
      T::Tensor x = train_images.index_select(0, idx);
      // random horizontal flips of half the batch: the only augmentation
      const int64_t half = x.size(0) / 2;
      x = T::cat({x.narrow(0, 0, half).flip({3}), x.narrow(0, half, x.size(0) - half)});
      const T::Tensor y = train_labels.index_select(0, idx);
      const T::Tensor logits = model->forward(x);
      const T::Tensor loss = F::cross_entropy(logits, y);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      loss_sum += loss.item<double>() * static_cast<double>(x.size(0));
      correct += logits.argmax(1).eq(y).sum().item<int64_t>();
    }
    scheduler.step();
    model->eval();
    const double accuracy = evaluate(model, test_images, test_labels).first;
    std::printf("epoch %d/%d: loss %.4f, train accuracy %.2f%%, test accuracy %.2f%%, %.1f s\n", epoch, flags.epochs,
                loss_sum / static_cast<double>(train_size),
                100.0 * static_cast<double>(correct) / static_cast<double>(train_size), accuracy, seconds_since(t0));
    std::fflush(stdout);
  }
  std::printf("trained %d epochs in %.1f s\n", flags.epochs, seconds_since(start));
  model->eval();
  T::save(model, flags.output);

  // float32: the trained model as it is (eval mode)
  const auto [float_accuracy, float_ips] = evaluate(model, test_images, test_labels);
  const double float_ms = latency_ms(model, test_images);
  int64_t float_bytes = 0;
  for (const auto& t : model->parameters()) float_bytes += static_cast<int64_t>(t.nbytes());
  for (const auto& t : model->buffers()) float_bytes += static_cast<int64_t>(t.nbytes());

  // int8: conv-bn(-relu) and fc1-relu fused, observers from the fbgemm qconfig, calibration on
  // training images, convert
  const auto tq = Clock::now();
  model->fuse_model();
  T::quantization::prepare(*model, T::quantization::get_default_qconfig("fbgemm"));
  {
    T::NoGradGuard no_grad;
    const T::Tensor order = T::randperm(train_size);
    for (int64_t b = 0; b < flags.calibration_batches && b * flags.batch_size < train_size; ++b) {
      const int64_t first = b * flags.batch_size;
      const int64_t n = std::min(flags.batch_size, train_size - first);
      model->forward(train_images.index_select(0, order.narrow(0, first, n)));
    }
  }
  T::quantization::convert(*model);
  const double quantize_seconds = seconds_since(tq);
  const auto [int8_accuracy, int8_ips] = evaluate(model, test_images, test_labels);
  const double int8_ms = latency_ms(model, test_images);
  const int64_t int8_size = int8_state_bytes(*model);

  std::printf("quantized (fuse, prepare, %lld calibration images, convert) in %.1f s\n",
              static_cast<long long>(std::min(flags.calibration_batches * flags.batch_size, train_size)),
              quantize_seconds);
  std::printf("%-8s %14s %12s %14s %16s\n", "model", "test accuracy", "size (KiB)", "images/s (b500)",
              "batch-1 ms (median)");
  std::printf("%-8s %13.2f%% %12.1f %14.0f %16.2f\n", "float32", float_accuracy, float_bytes / 1024.0, float_ips,
              float_ms);
  std::printf("%-8s %13.2f%% %12.1f %14.0f %16.2f\n", "int8", int8_accuracy, int8_size / 1024.0, int8_ips, int8_ms);
  std::printf("checkpoint (float32 state dict): %s, %ju bytes\n", flags.output.c_str(),
              static_cast<uintmax_t>(std::filesystem::file_size(flags.output)));
  std::printf("test accuracy: %.2f%% (float32), %.2f%% (int8)\n", float_accuracy, int8_accuracy);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "mobilenet_v3: " << e.what() << '\n';
  return 1;
}
