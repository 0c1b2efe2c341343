// The main job: trains a small CNN on Fashion-MNIST (Debian's dataset-fashion-mnist), evaluates it
// on the 10,000 test images, saves a checkpoint and prints a summary whose last line is
// `test accuracy: NN.NN%`. Written the way a libtorch user writes it. With --distributed (under
// `ember-run --nproc-per-node N`) each process trains on its share of every epoch under
// DistributedDataParallel, as a torch.distributed user writes it.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "ember/ember.h"
#include "ember/fx/quantize.h"
#ifdef EMBER_EXAMPLE_DISTRIBUTED
#include "ember/data/samplers/distributed_sampler.h"
#include "ember/distributed.h"
#include "ember/nn/parallel/distributed.h"
#endif

namespace T = ::ember;
#define MODULE EMBER_MODULE
#include "net.inc"
#undef MODULE

namespace {

struct Flags {
  int epochs = 5;
  int64_t batch_size = 64;
  double lr = 2e-3;
  int threads = 0;  // 0: Ember's default (all cores)
  int64_t seed = 0;
  std::string data = "/usr/share/datasets/fashion-mnist";
  std::string output = "fashion_mnist.safetensors";
  std::string amp = "off";  // off, bf16 or fp16: autocast regions around forward and loss
  bool channels_last = false;
  std::string profile;  // a directory: profile two training steps, write their trace and report there
  std::string quantize = "off";  // off, dynamic, static or qat: evaluate an int8 copy of the trained model too
  bool graph = false;  // capture one training step (ember::graphs) and replay it per batch
  bool distributed = false;  // one of several processes (ember-run), under DistributedDataParallel
};

[[noreturn]] void usage(const char* argv0, int code) {
  std::fprintf(code ? stderr : stdout,
               "usage: %s [--epochs N] [--batch-size N] [--lr X] [--threads N] [--seed N]\n"
               "          [--data DIR] [--output FILE] [--amp off|bf16|fp16] [--channels-last]\n"
               "          [--profile DIR] [--quantize off|dynamic|static|qat] [--graph] [--distributed]\n"
               "Trains a CNN on Fashion-MNIST (IDX files, plain or .gz, in DIR; default\n"
               "/usr/share/datasets/fashion-mnist) and saves its parameters to FILE (safetensors).\n"
               "--amp runs forward and loss under autocast (fp16 with a gradient scaler);\n"
               "--channels-last converts the model and the images to channels_last;\n"
               "--profile profiles training steps 2 and 3 and writes their Chrome trace\n"
               "(*.pt.trace.json) and an HTML report (profile.html) to DIR;\n"
               "--quantize also evaluates an int8 copy of the trained model (static: fx graph mode,\n"
               "calibrated on 5,000 training images; dynamic: int8 Linear layers; qat: fx graph\n"
               "mode, fine-tuned with fake quantization on 15,000 training images first);\n"
               "--graph captures one training step per epoch on static tensors and replays it\n"
               "for each full batch (the last, partial batch runs eagerly); not with --profile.\n"
               "--distributed: one of the processes `ember-run --nproc-per-node N` starts: each\n"
               "trains on its share of the images (DistributedSampler) in batches of --batch-size\n"
               "divided by the processes (the global batch of one process) under\n"
               "DistributedDataParallel; rank 0 reports, evaluates and saves. Not with --graph,\n"
               "--profile or --channels-last.\n",
               argv0);
  std::exit(code);
}

Flags parse_flags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") usage(argv[0], 0);
    if (arg == "--channels-last") {
      f.channels_last = true;
      continue;
    }
    if (arg == "--graph") {
      f.graph = true;
      continue;
    }
    if (arg == "--distributed") {
      f.distributed = true;
      continue;
    }
    if (i + 1 >= argc) usage(argv[0], 2);
    const char* value = argv[++i];
    if (arg == "--epochs") f.epochs = std::atoi(value);
    else if (arg == "--batch-size") f.batch_size = std::atoll(value);
    else if (arg == "--lr") f.lr = std::atof(value);
    else if (arg == "--threads") f.threads = std::atoi(value);
    else if (arg == "--seed") f.seed = std::atoll(value);
    else if (arg == "--data") f.data = value;
    else if (arg == "--output") f.output = value;
    else if (arg == "--amp") f.amp = value;
    else if (arg == "--profile") f.profile = value;
    else if (arg == "--quantize") f.quantize = value;
    else usage(argv[0], 2);
  }
  if (f.epochs < 1 || f.batch_size < 1 || !(f.lr > 0) || f.threads < 0) usage(argv[0], 2);
  if (f.amp != "off" && f.amp != "bf16" && f.amp != "fp16") usage(argv[0], 2);
  if (f.quantize != "off" && f.quantize != "dynamic" && f.quantize != "static" && f.quantize != "qat") usage(argv[0], 2);
  if (f.graph && !f.profile.empty()) usage(argv[0], 2);
  if (f.distributed && (f.graph || !f.profile.empty() || f.channels_last)) usage(argv[0], 2);
  return f;
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One line per epoch, redrawn in place on a terminal; a log gets only the finished line.
class ProgressBar {
 public:
  ProgressBar(int epoch, int epochs, int64_t total)
      : epoch_(epoch), epochs_(epochs), total_(total), tty_(isatty(STDOUT_FILENO)), start_(Clock::now()) {}
  void update(int64_t seen, double loss, double accuracy, bool done = false) {
    if (!done && (!tty_ || ++calls_ % 10 != 0)) return;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(kWidth * seen / total_);
    std::string bar(filled, '=');
    if (filled < kWidth) bar += '>' + std::string(kWidth - filled - 1, ' ');
    std::printf("%sepoch %d/%d [%s] %3d%%  loss %.4f  acc %6.2f%%  %6.0f img/s%s", tty_ ? "\r" : "", epoch_, epochs_,
                bar.c_str(), static_cast<int>(100 * seen / total_), loss, 100 * accuracy,
                seen / seconds_since(start_), done ? "\n" : "");
    std::fflush(stdout);
  }
  double elapsed() const { return seconds_since(start_); }

 private:
  int epoch_, epochs_;
  int64_t total_;
  bool tty_;
  Clock::time_point start_;
  int64_t calls_ = 0;
};

// The training set's sampler: a new permutation each epoch; with --distributed this process's
// share of it (DistributedSampler, whose epoch advances at each pass as a Python loop's
// sampler.set_epoch(epoch) does: the loader resets its sampler when an epoch begins).
class TrainSampler : public T::data::samplers::Sampler<> {
 public:
  TrainSampler(size_t size, bool distributed, uint64_t seed) : random_(static_cast<int64_t>(size)) {
#ifdef EMBER_EXAMPLE_DISTRIBUTED
    if (distributed) shard_.emplace(size, std::nullopt, std::nullopt, true, seed);
#endif
  }
  void reset(std::optional<size_t> new_size) override {
#ifdef EMBER_EXAMPLE_DISTRIBUTED
    if (shard_) {
      shard_->set_epoch(epoch_++);
      return shard_->reset(new_size);
    }
#endif
    random_.reset(new_size);
  }
  std::optional<std::vector<size_t>> next(size_t batch_size) override {
#ifdef EMBER_EXAMPLE_DISTRIBUTED
    if (shard_) return shard_->next(batch_size);
#endif
    return random_.next(batch_size);
  }

 private:
  T::data::samplers::RandomSampler random_;
#ifdef EMBER_EXAMPLE_DISTRIBUTED
  std::optional<T::distributed::DistributedSampler> shard_;
  size_t epoch_ = 0;
#endif
};

}  // namespace

int main(int argc, char** argv) try {
  const Flags flags = parse_flags(argc, argv);
  if (flags.threads > 0) T::set_num_threads(flags.threads);
  T::manual_seed(flags.seed);
  int world = 1;
  if (flags.distributed) {
#ifdef EMBER_EXAMPLE_DISTRIBUTED
    T::distributed::init_process_group("gloo");  // env:// (ember-run sets RANK, WORLD_SIZE, MASTER_*)
    const int rank = T::distributed::get_rank();
    world = T::distributed::get_world_size();
    if (flags.batch_size % world != 0)
      throw std::runtime_error("--batch-size must be a multiple of the number of processes");
    if (rank != 0 && !std::freopen("/dev/null", "w", stdout)) throw std::runtime_error("cannot silence stdout");
#else
    throw std::runtime_error("--distributed: this build has no ember_distributed (Gloo was not found)");
#endif
  }
  const int64_t batch_size = flags.batch_size / world;  // per process
  using T::data::datasets::MNIST;

  // Normalized with Fashion-MNIST's training-set mean and standard deviation.
  auto train_set = MNIST(flags.data, MNIST::Mode::kTrain)
                       .map(T::data::transforms::Normalize<>(0.2860, 0.3530))
                       .map(T::data::transforms::Stack<>());
  auto test_set = MNIST(flags.data, MNIST::Mode::kTest)
                      .map(T::data::transforms::Normalize<>(0.2860, 0.3530))
                      .map(T::data::transforms::Stack<>());
  const int64_t train_size = static_cast<int64_t>(train_set.size().value());
  const int64_t test_size = static_cast<int64_t>(test_set.size().value());
  auto train_loader = T::data::make_data_loader(
      std::move(train_set), TrainSampler(train_size, flags.distributed, flags.seed),
      T::data::DataLoaderOptions().batch_size(batch_size).workers(1));
  auto test_loader = T::data::make_data_loader(std::move(test_set), T::data::DataLoaderOptions().batch_size(1000));

  FashionNet model;
  // --distributed: the module every process runs; its gradients are averaged during backward
  std::function<T::Tensor(const T::Tensor&)> train_forward = [&](const T::Tensor& x) { return model->forward(x); };
#ifdef EMBER_EXAMPLE_DISTRIBUTED
  std::optional<T::nn::parallel::DistributedDataParallel> ddp;
  if (flags.distributed) {
    ddp.emplace(model);  // rank 0's initial weights everywhere
    train_forward = [&](const T::Tensor& x) { return (*ddp)->forward(x); };
  }
#endif
  const T::MemoryFormat format = flags.channels_last ? T::MemoryFormat::ChannelsLast : T::MemoryFormat::Contiguous;
  model->to(format);
  const bool amp = flags.amp != "off";
  const T::ScalarType amp_dtype = flags.amp == "fp16" ? T::kHalf : T::kBFloat16;
  // float16 gradients can underflow: the scaler multiplies the loss (a no-op when disabled)
  T::amp::GradScaler scaler(T::amp::GradScalerOptions().enabled(flags.amp == "fp16"));
  int64_t parameters = 0;
  for (const auto& p : model->parameters()) parameters += p.numel();
  std::cout << model << "\n" << parameters << " parameters, " << train_size << " training images, "
            << T::get_num_threads() << " threads"
            << (flags.distributed ? " per process, " + std::to_string(world) + " processes" : std::string()) << (amp ? ", autocast " + flags.amp : std::string())
            << (flags.channels_last ? ", channels_last" : "") << "\n"
            << (flags.graph ? "training: graph replay (one step captured per epoch, replayed per full batch of "
                            : "training: eager")
            << (flags.graph ? std::to_string(flags.batch_size) + "; a last partial batch runs eagerly)" : "") << "\n";

  T::optim::Adam optimizer(model->parameters(), T::optim::AdamOptions(flags.lr));
  T::optim::CosineAnnealingLR scheduler(optimizer, flags.epochs);

  // --profile: steps 2 and 3 (after one step of warm-up), as torch.profiler's schedule says it;
  // when they are done, their trace and report go to the directory and the table to stdout.
  std::optional<T::profiler::profile> profiler;
  if (!flags.profile.empty()) {
    namespace P = T::profiler;
    auto write_trace = P::tensorboard_trace_handler(flags.profile);
    profiler.emplace(P::ProfilerOptions()
                         .record_shapes(true)
                         .profile_memory(true)
                         .with_flops(true)
                         .schedule(P::schedule(/*wait=*/0, /*warmup=*/1, /*active=*/2, /*repeat=*/1))
                         .on_trace_ready([write_trace, dir = flags.profile](P::profile& prof) {
                           write_trace(prof);
                           prof.export_html(dir + "/profile.html");
                           std::cout << prof.key_averages().table("self_cpu_time_total", 15)
                                     << "profile: trace and report written to " << dir << std::endl;
                         }));
    // the report's memory chart tells parameters, gradients and Adam's state apart
    profiler->register_module(*model);
    profiler->register_optimizer(optimizer);
  }

  // One training step. Under --graph it is what the graph captures: the region reads the batch
  // from static tensors and leaves its loss and logits in tensors each replay overwrites.
  auto train_step = [&](const T::Tensor& images, const T::Tensor& targets, T::Tensor& logits, T::Tensor& loss) {
    {
      T::AutocastGuard autocast(T::kCPU, amp_dtype, amp);
      logits = train_forward(images);
      loss = T::nn::functional::cross_entropy(logits, targets);
    }
    optimizer.zero_grad();
    scaler.scale(loss).backward();
    scaler.step(optimizer);
    scaler.update();
  };
  // --graph: the static tensors a captured step reads, and the graph. The step is captured again at
  // each epoch (the learning rate the scheduler sets is a value the capture keeps), after one eager
  // step has created the optimizer's state.
  T::Tensor static_images, static_targets, static_logits, static_loss;
  T::graphs::Graph graph;
  bool warmed_up = false;
  if (flags.graph) {
    static_images = T::empty({flags.batch_size, 1, 28, 28}).contiguous(format);
    static_targets = T::empty({flags.batch_size}, T::TensorOptions().dtype(T::kLong));
  }

  const auto start = Clock::now();
  for (int epoch = 1; epoch <= flags.epochs; ++epoch) {
    model->train();
    graph.reset();
    ProgressBar bar(epoch, flags.epochs, train_size);
    double loss_sum = 0;
    int64_t seen = 0, correct = 0;
    for (auto& batch : *train_loader) {
      const int64_t n = batch.data.size(0);
      T::Tensor logits, loss;
      if (flags.graph && n == flags.batch_size && warmed_up) {
        static_images.copy_(batch.data);
        static_targets.copy_(batch.target);
        if (graph.captured()) {
          graph.replay();
        } else {
          T::graphs::GraphCapture capture(graph);  // runs this batch's step once, as it records it
          train_step(static_images, static_targets, static_logits, static_loss);
        }
        logits = static_logits;
        loss = static_loss;
      } else {
        train_step(batch.data.contiguous(format), batch.target, logits, loss);
        warmed_up = true;
      }
      loss_sum += loss.item<double>() * static_cast<double>(n);
      correct += logits.argmax(1).eq(batch.target).sum().item<int64_t>();
      seen += n;
      // the bar counts every process's images (each runs a batch as large); loss and accuracy are
      // this process's
      const double mean = 1.0 / static_cast<double>(seen);
      bar.update(seen * world, loss_sum * mean, static_cast<double>(correct) * mean);
      if (profiler) profiler->step();
    }
    const double mean = 1.0 / static_cast<double>(seen);
    bar.update(seen * world, loss_sum * mean, static_cast<double>(correct) * mean, /*done=*/true);
    scheduler.step();
  }
  graph.reset();
  const double train_seconds = seconds_since(start);
  profiler.reset();
#ifdef EMBER_EXAMPLE_DISTRIBUTED
  if (flags.distributed) {
    const bool lead = T::distributed::get_rank() == 0;
    T::distributed::destroy_process_group();
    if (!lead) return 0;  // rank 0 evaluates and saves the model they all hold
  }
#endif

  model->eval();
  // The test set's accuracy (%) and images/s of a forward function, batches of 1000.
  auto evaluate = [&](const std::function<T::Tensor(const T::Tensor&)>& forward) {
    T::InferenceMode guard;
    T::AutocastGuard autocast(T::kCPU, amp_dtype, amp);
    int64_t correct = 0;
    const auto t0 = Clock::now();
    for (auto& batch : *test_loader)
      correct += forward(batch.data.contiguous(format)).argmax(1).eq(batch.target).sum().item<int64_t>();
    return std::pair<double, double>(100.0 * static_cast<double>(correct) / static_cast<double>(test_size),
                                     static_cast<double>(test_size) / seconds_since(t0));
  };
  auto [accuracy, images_per_second] = evaluate([&](const T::Tensor& x) { return model->forward(x); });
  T::save(model, flags.output);
  std::printf("trained %d epochs in %.1f s (%.0f images/s); checkpoint: %s\n", flags.epochs, train_seconds,
              static_cast<double>(flags.epochs * train_size) / train_seconds, flags.output.c_str());

  // --quantize: an int8 copy of the trained model, evaluated beside the float one. static: the
  // model traced (fx), its batch norms folded, observed on 5,000 training images, converted;
  // dynamic: its Linear layers' weights in int8, the activations quantized per batch; qat: the
  // model traced for quantization-aware training (batch norms kept, weights and activations
  // fake-quantized), fine-tuned on 15,000 training images at a tenth of the learning rate, converted.
  if (flags.quantize != "off") {
    std::printf("float32: test accuracy %.2f%%, %.0f images/s\n", accuracy, images_per_second);
    std::function<T::Tensor(const T::Tensor&)> int8_forward;
    std::shared_ptr<T::fx::GraphModule> converted;
    auto training_images = [&](int64_t batch_size) {
      return T::data::make_data_loader<T::data::samplers::RandomSampler>(
          MNIST(flags.data, MNIST::Mode::kTrain)
              .map(T::data::transforms::Normalize<>(0.2860, 0.3530))
              .map(T::data::transforms::Stack<>()),
          T::data::DataLoaderOptions().batch_size(batch_size));
    };
    if (flags.quantize == "dynamic") {
      T::quantization::quantize_dynamic(*model);
      int8_forward = [&](const T::Tensor& x) { return model->forward(x); };
    } else if (flags.quantize == "static") {
      std::shared_ptr<T::fx::GraphModule> prepared;
      int batches = 0;
      auto calibration = training_images(1000);
      for (auto& batch : *calibration) {
        const T::Tensor x = batch.data.contiguous(format);
        if (!prepared) prepared = T::fx::prepare_fx(model, T::fx::get_default_qconfig_mapping("x86"), x);
        T::InferenceMode guard;
        prepared->forward(x);
        if (++batches == 5) break;
      }
      converted = T::fx::convert_fx(prepared);
    } else {  // qat
      model->train();
      std::shared_ptr<T::fx::GraphModule> prepared;
      std::optional<T::optim::Adam> qat_optimizer;
      int64_t seen = 0;
      const auto t0 = Clock::now();
      auto fine_tuning = training_images(flags.batch_size);
      for (auto& batch : *fine_tuning) {
        const T::Tensor x = batch.data.contiguous(format);
        if (!prepared) {
          prepared = T::fx::prepare_qat_fx(model, T::fx::get_default_qat_qconfig_mapping("x86"), x);
          qat_optimizer.emplace(prepared->parameters(), T::optim::AdamOptions(flags.lr / 10));
        }
        const T::Tensor loss = T::nn::functional::cross_entropy(prepared->forward(x), batch.target);
        qat_optimizer->zero_grad();
        loss.backward();
        qat_optimizer->step();
        if ((seen += x.size(0)) >= 15000) break;
      }
      std::printf("quantization-aware fine-tuning: %lld images in %.1f s\n", static_cast<long long>(seen),
                  seconds_since(t0));
      prepared->eval();
      converted = T::fx::convert_fx(prepared);
    }
    if (converted) int8_forward = [&](const T::Tensor& x) { return converted->forward(x); };
    std::tie(accuracy, images_per_second) = evaluate(int8_forward);
    std::printf("int8 (%s): test accuracy %.2f%%, %.0f images/s\n", flags.quantize.c_str(), accuracy,
                images_per_second);
    if (converted) {  // the int8 model's checkpoint beside the float one
      std::string int8_file = flags.output;
      const std::string suffix = ".safetensors";
      const bool has_suffix = int8_file.size() > suffix.size() && int8_file.ends_with(suffix);
      int8_file.insert(has_suffix ? int8_file.size() - suffix.size() : int8_file.size(), ".int8");
      T::save(converted, int8_file);
      const auto int8_bytes = std::filesystem::file_size(int8_file), float_bytes = std::filesystem::file_size(flags.output);
      std::printf("int8 checkpoint: %s, %ju bytes (float32: %ju bytes, %.2fx smaller)\n", int8_file.c_str(),
                  static_cast<uintmax_t>(int8_bytes), static_cast<uintmax_t>(float_bytes),
                  static_cast<double>(float_bytes) / static_cast<double>(int8_bytes));
    }
  }
  std::printf("test accuracy: %.2f%%\n", accuracy);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "fashion_mnist: " << e.what() << '\n';
  return 1;
}
