// Training: whole steps (forward, loss, backward, optimizer) of small models, and one epoch of the
// main job's CNN on Fashion-MNIST. Each model is written once against libtorch's API and compiled
// for both frameworks, which start from the same weights.
#include <omp.h>

#include <chrono>
#include <cstdio>

#include "busy_processes.h"
#include "fashion_mnist.h"
#include "torch_check.h"
#include "train_models.h"

namespace {

using train_models::AdamClassifierSteps;
using train_models::check_same_parameters;
using train_models::copy_weights;
namespace E = train_models::on_ember;
namespace L = train_models::on_torch;
constexpr const char* kSteps = "train: one step (forward, loss, backward, optimizer)";

bench::Register tanh_mlp_sgd{{
    .name = "train_step_mlp16_tanh_sgd",
    .label = kSteps,
    .target = 0.25,
    .run =
        [](const bench::Context& ctx) {
          E::TanhMlp em;
          L::TanhMlp tm;
          copy_weights(em, tm);
          const ember::Tensor x = parity::random({8, 16}, ember::kFloat, 31), y = parity::random({8, 1}, ember::kFloat, 32);
          const torch::Tensor tx = parity::to_torch(x), ty = parity::to_torch(y);
          ember::optim::SGD eopt(em->parameters(), ember::optim::SGDOptions(0.01));
          torch::optim::SGD topt(tm->parameters(), torch::optim::SGDOptions(0.01));
          auto estep = [&] {
            eopt.zero_grad();
            ember::nn::functional::mse_loss(em(x), y).backward();
            eopt.step();
          };
          auto tstep = [&] {
            topt.zero_grad();
            torch::nn::functional::mse_loss(tm(tx), ty).backward();
            topt.step();
          };
          for (int i = 0; i < 3; ++i) estep(), tstep();
          check_same_parameters(ctx, em, tm, parity::Tol{1e-5, 1e-5});
          return bench::time_pair(ctx, {.ember = estep, .baseline = tstep});
        },
}};

bench::Register relu_mlp_adam{{
    .name = "train_step_mlp784_relu_adam",
    .label = kSteps,
    .target = 0.5,
    .run =
        [](const bench::Context& ctx) {
          E::ReluMlp em;
          L::ReluMlp tm;
          copy_weights(em, tm);
          AdamClassifierSteps<E::ReluMlp, L::ReluMlp> s{
              em, tm, parity::random({64, 784}, ember::kFloat, 41), ember::randint(0, 10, {64})};
          s.check(ctx, parity::Tol{1e-4, 1e-4});
          return bench::time_pair(ctx, {.ember = [&] { s.ember_step(); }, .baseline = [&] { s.torch_step(); }});
        },
}};

// A busy machine: as many processes as there are CPUs spin beside the step, so every thread the
// framework starts competes with one of them. OpenMP's barriers then wait for workers the
// scheduler is not running; Ember notices its threads waiting and runs regions serially
// (docs/threads.md). The CPUs are counted by OpenMP, as both frameworks count them.
int busy_processes_for_machine() { return omp_get_num_procs(); }

bench::Register mlp_adam_contention{{
    .name = "train_step_mlp784_adam_under_contention_vs_quiet",
    .label = kSteps,
    .target = 3.0,
    .baseline = bench::Baseline::Ember,
    .run =
        [](const bench::Context& ctx) {
          E::ReluMlp em;
          const ember::Tensor x = parity::random({64, 784}, ember::kFloat, 41);
          const ember::Tensor y = ember::randint(0, 10, {64});
          ember::optim::Adam eopt(em->parameters(), ember::optim::AdamOptions(1e-3));
          auto estep = [&] {
            eopt.zero_grad();
            ember::nn::functional::cross_entropy(em(x), y).backward();
            eopt.step();
          };
          bench::BusyProcesses busy(busy_processes_for_machine());
          busy.pause();
          bench::Outcome out = bench::time_pair(ctx, {.ember = estep,
                                                      .baseline = estep,
                                                      .min_run_time = 3.0,
                                                      .ember_enter = [&] { busy.resume(); },
                                                      .baseline_enter = [&] { busy.pause(); },
                                                      .settle = 0.3});
          out.notes.push_back(std::to_string(busy_processes_for_machine()) + " busy processes; adaptive threads " +
                              (ember::adaptive_threads() ? "on" : "off"));
          return out;
        },
}};

bench::Register cnn_contention{{
    .name = "train_step_cnn_under_contention",
    .label = kSteps,
    .target = 0.5,
    .run =
        [](const bench::Context& ctx) {
          E::FashionNet em;
          L::FashionNet tm;
          copy_weights(em, tm);
          em->eval();  // no dropout: both steps compute the same thing
          tm->eval();
          AdamClassifierSteps<E::FashionNet, L::FashionNet> s{
              em, tm, parity::random({64, 1, 28, 28}, ember::kFloat, 61), ember::randint(0, 10, {64})};
          s.check(ctx, parity::Tol{1e-3, 1e-4});
          const auto estep = [&] { s.ember_step(); };
          const auto tstep = [&] { s.torch_step(); };
          const bench::Outcome quiet = bench::time_pair(ctx, {.ember = estep, .baseline = tstep});
          bench::BusyProcesses busy(busy_processes_for_machine());
          bench::Outcome out = bench::time_pair(ctx, {.ember = estep, .baseline = tstep, .min_run_time = 4.0});
          char note[192];
          std::snprintf(note, sizeof note, "%d busy processes; quiet: ember %.0f us, libtorch %.0f us; adaptive threads %s",
                        busy_processes_for_machine(), quiet.ember, *quiet.baseline,
                        ember::adaptive_threads() ? "on" : "off");
          out.notes.emplace_back(note);
          return out;
        },
}};

// Issue 7: a train step of the 1024-wide MLP at batch 256 under bfloat16 autocast (the linears
// in bfloat16, the loss in float32, float32 parameters and SGD), against libtorch's step under
// its CPU autocast, and against Ember's own float32 step.
struct WideMlpSteps {
  E::WideMlp em;
  L::WideMlp tm;
  ember::Tensor x = parity::random({256, 1024}, ember::kFloat, 51);
  ember::Tensor y = ember::randint(0, 10, {256});
  torch::Tensor tx = parity::to_torch(x), ty = parity::to_torch(y);
  ember::optim::SGD eopt{em->parameters(), ember::optim::SGDOptions(0.01).momentum(0.9)};
  torch::optim::SGD topt{tm->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9)};
  WideMlpSteps() { copy_weights(em, tm); }
  void ember_step(bool autocast) {
    ember::Tensor loss;
    {
      ember::AutocastGuard guard(ember::kCPU, ember::kBFloat16, autocast);
      loss = ember::nn::functional::cross_entropy(em(x), y);
    }
    eopt.zero_grad();
    loss.backward();
    eopt.step();
  }
  void torch_step() {
    torch::Tensor loss;
    {
      parity::TorchAutocast guard;
      loss = torch::nn::functional::cross_entropy(tm(tx), ty);
    }
    topt.zero_grad();
    loss.backward();
    topt.step();
  }
};

bench::Register wide_mlp_autocast{{
    .name = "train_step_mlp1024_bf16_autocast",
    .label = kSteps,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          WideMlpSteps s;
          for (int i = 0; i < 3; ++i) s.ember_step(true), s.torch_step();
          check_same_parameters(ctx, s.em, s.tm, parity::Tol{1e-2, 1e-3});
          return bench::time_pair(ctx, {.ember = [&] { s.ember_step(true); },
                                        .baseline = [&] { s.torch_step(); },
                                        .min_run_time = 2.0});
        },
}};

bench::Register wide_mlp_autocast_vs_f32{{
    .name = "train_step_mlp1024_bf16_autocast_vs_f32",
    .label = kSteps,
    .target = 1 / 2.5,
    .baseline = bench::Baseline::Ember,
    .needs = bench::Needs::Amx,
    .run =
        [](const bench::Context& ctx) {
          WideMlpSteps s;
          return bench::time_pair(ctx, {.ember = [&] { s.ember_step(true); },
                                        .baseline = [&] { s.ember_step(false); },
                                        .min_run_time = 2.0});
        },
}};

// The epoch cases seed both frameworks first: their accuracy checks then see the same run each
// time, not one that depends on how much randomness the cases before them drew.
constexpr uint64_t kEpochSeed = 20;

// Hands out one shuffled order of the indices, the same in both frameworks, so that the two epochs
// see the same batches and their accuracies differ only by dropout masks and rounding.
// (libtorch 1.13 spells optional c10::optional.)
template <class Base, template <class> class Optional>
class FixedOrderSampler : public Base {
 public:
  explicit FixedOrderSampler(std::vector<size_t> order) : order_(std::move(order)) {}
  void reset(Optional<size_t> = {}) override { next_ = 0; }
  Optional<std::vector<size_t>> next(size_t batch_size) override {
    if (next_ >= order_.size()) return {};
    const size_t end = std::min(order_.size(), next_ + batch_size);
    std::vector<size_t> batch(order_.begin() + static_cast<std::ptrdiff_t>(next_),
                              order_.begin() + static_cast<std::ptrdiff_t>(end));
    next_ = end;
    return batch;
  }

 private:
  std::vector<size_t> order_;
  size_t next_ = 0;
};
using EmberOrder = FixedOrderSampler<ember::data::samplers::Sampler<>, std::optional>;
struct TorchOrder : FixedOrderSampler<torch::data::samplers::Sampler<>, c10::optional> {
  using FixedOrderSampler::FixedOrderSampler;
  void save(torch::serialize::OutputArchive&) const override {}
  void load(torch::serialize::InputArchive&) override {}
};

// One epoch of the main job (examples/fashion_mnist: batch 64, Adam, shuffled loader with one
// worker) in each framework, from the same weights and in the same shuffled order, then both
// evaluated on the 10,000 test images. An epoch takes tens of seconds, so each side runs once;
// the ratio is of wall times.
bench::Register cnn_epoch{{
    .name = "train_epoch_fashion_mnist_cnn",
    .label = "train: one epoch of the main job's CNN on Fashion-MNIST",
    .target = 0.7,
    .run =
        [](const bench::Context& ctx) {
          constexpr double kMean = 0.2860, kStd = 0.3530, kLr = 2e-3;
          constexpr int64_t kBatch = 64;
          // weights, order and dropout masks independent of the cases run before
          ember::manual_seed(kEpochSeed);
          torch::manual_seed(kEpochSeed);
          const bench::InflatedFashionMnist files;
          const std::string root = files.dir.string();
          E::FashionNet em;
          L::FashionNet tm;
          copy_weights(em, tm);

          using EMnist = ember::data::datasets::MNIST;
          using TMnist = torch::data::datasets::MNIST;
          namespace ed = ember::data;
          namespace td = torch::data;
          const ember::Tensor perm = ember::randperm(60000, ember::kLong);
          const std::vector<size_t> order(perm.data_ptr<int64_t>(), perm.data_ptr<int64_t>() + perm.numel());
          auto eloader = ed::make_data_loader(EMnist(root, EMnist::Mode::kTrain)
                                                  .map(ed::transforms::Normalize<>(kMean, kStd))
                                                  .map(ed::transforms::Stack<>()),
                                              EmberOrder(order), ed::DataLoaderOptions().batch_size(kBatch).workers(1));
          auto tloader = td::make_data_loader(TMnist(root, TMnist::Mode::kTrain)
                                                  .map(td::transforms::Normalize<>(kMean, kStd))
                                                  .map(td::transforms::Stack<>()),
                                              TorchOrder(order), td::DataLoaderOptions().batch_size(kBatch).workers(1));
          ember::optim::Adam eopt(em->parameters(), ember::optim::AdamOptions(kLr));
          torch::optim::Adam topt(tm->parameters(), torch::optim::AdamOptions(kLr));

          const auto seconds = [](auto&& epoch) {
            const auto start = std::chrono::steady_clock::now();
            epoch();
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          };
          em->train();
          tm->train();
          const double ember_s = seconds([&] {
            for (auto& batch : *eloader) {
              eopt.zero_grad();
              ember::nn::functional::cross_entropy(em(batch.data), batch.target).backward();
              eopt.step();
            }
          });
          const double torch_s = seconds([&] {
            for (auto& batch : *tloader) {
              topt.zero_grad();
              torch::nn::functional::cross_entropy(tm(batch.data), batch.target).backward();
              topt.step();
            }
          });

          em->eval();
          tm->eval();
          const TMnist test(root, TMnist::Mode::kTest);
          const torch::Tensor timages = (test.images() - kMean) / kStd;
          const ember::Tensor eimages = parity::to_ember(timages);
          const ember::Tensor etargets = parity::to_ember(test.targets());
          double ember_acc, torch_acc;
          {
            ember::InferenceMode guard;
            ember_acc = 100 * em(eimages).argmax(1).eq(etargets).to(ember::kDouble).mean().item<double>();
          }
          {
            torch::InferenceMode guard;
            torch_acc = 100 * tm(timages).argmax(1).eq(test.targets()).to(torch::kDouble).mean().item<double>();
          }
          if (ember_acc < torch_acc - 0.5) {
            char msg[192];
            std::snprintf(msg, sizeof msg,
                          "test accuracy after one epoch: Ember %.2f%%, libtorch %.2f%% (epoch: Ember %.1f s, "
                          "libtorch %.1f s)",
                          ember_acc, torch_acc, ember_s, torch_s);
            throw bench::CheckFailure(ctx.current.name + ": " + msg);
          }
          bench::Outcome out;
          out.unit = "s";
          out.ember = ember_s;
          out.baseline = torch_s;
          char note[160];
          std::snprintf(note, sizeof note, "%.0f vs %.0f images/s; test accuracy Ember %.2f%%, libtorch %.2f%%",
                        60000 / ember_s, 60000 / torch_s, ember_acc, torch_acc);
          out.notes.emplace_back(note);
          return out;
        },
}};

// Issue 7: the main job's epoch under bfloat16 autocast in channels_last against Ember's float32
// contiguous epoch, from the same weights in the same order; test accuracy within 0.5 points.
bench::Register cnn_epoch_bf16_cl{{
    .name = "train_epoch_fashion_mnist_cnn_bf16_cl_vs_f32",
    .label = "train: one epoch of the main job's CNN on Fashion-MNIST",
    .target = 1 / 1.5,
    .baseline = bench::Baseline::Ember,
    .needs = bench::Needs::BFloat16Instructions,
    .run =
        [](const bench::Context& ctx) {
          constexpr double kMean = 0.2860, kStd = 0.3530, kLr = 2e-3;
          ember::manual_seed(kEpochSeed);
          const bench::InflatedFashionMnist files;
          const std::string root = files.dir.string();
          using EMnist = ember::data::datasets::MNIST;
          namespace ed = ember::data;
          const ember::Tensor perm = ember::randperm(60000, ember::kLong);
          const std::vector<size_t> order(perm.data_ptr<int64_t>(), perm.data_ptr<int64_t>() + perm.numel());
          const auto cl = ember::MemoryFormat::ChannelsLast;
          E::FashionNet f32_model, bf16_model;
          {
            ember::NoGradGuard no_grad;
            const auto from = f32_model->named_parameters();
            for (auto& item : bf16_model->named_parameters()) item.value().copy_(from[item.key()]);
          }
          bf16_model->to(cl);
          // One epoch; returns (seconds, test accuracy in %).
          const auto run = [&](E::FashionNet& model, bool low_precision) {
            auto loader = ed::make_data_loader(EMnist(root, EMnist::Mode::kTrain)
                                                   .map(ed::transforms::Normalize<>(kMean, kStd))
                                                   .map(ed::transforms::Stack<>()),
                                               EmberOrder(order), ed::DataLoaderOptions().batch_size(64).workers(1));
            ember::optim::Adam opt(model->parameters(), ember::optim::AdamOptions(kLr));
            model->train();
            const auto start = std::chrono::steady_clock::now();
            for (auto& batch : *loader) {
              ember::Tensor loss;
              {
                ember::AutocastGuard autocast(ember::kCPU, ember::kBFloat16, low_precision);
                const ember::Tensor x = low_precision ? batch.data.contiguous(cl) : batch.data;
                loss = ember::nn::functional::cross_entropy(model(x), batch.target);
              }
              opt.zero_grad();
              loss.backward();
              opt.step();
            }
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            model->eval();
            const EMnist test(root, EMnist::Mode::kTest);
            const ember::Tensor images = (test.images() - kMean) / kStd;
            ember::InferenceMode inference;
            ember::AutocastGuard autocast(ember::kCPU, ember::kBFloat16, low_precision);
            const ember::Tensor logits = model(low_precision ? images.contiguous(cl) : images);
            return std::pair{seconds, 100 * logits.argmax(1).eq(test.targets()).to(ember::kDouble).mean().item<double>()};
          };
          const auto [f32_s, f32_acc] = run(f32_model, false);
          const auto [bf16_s, bf16_acc] = run(bf16_model, true);
          char note[192];
          std::snprintf(note, sizeof note, "%.0f vs %.0f images/s; test accuracy bf16+CL %.2f%%, f32 %.2f%%",
                        60000 / bf16_s, 60000 / f32_s, bf16_acc, f32_acc);
          if (std::abs(bf16_acc - f32_acc) > 0.5) throw bench::CheckFailure(ctx.current.name + ": " + note);
          bench::Outcome out;
          out.unit = "s";
          out.ember = bf16_s;
          out.baseline = f32_s;
          out.notes.emplace_back(note);
          return out;
        },
}};

}  // namespace
