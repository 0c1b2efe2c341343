// ember::graphs: capture and replay of static workloads. Replays equal the same number of eager
// steps bit for bit (MLP with SGD, SGD with momentum, fused Adam, dropout, inference, the main
// job's CNN in training mode with batch norm and dropout, group and instance norm, batch norm's
// cumulative average, float16 autocast with a GradScaler skipping overflowed steps), the refusals
// at capture and replay name what broke the contract, the pool's reuse follows the capture's
// lifetimes, reset leaves no leak, and make_graphed_callables composes with eager autograd.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <utility>
#include <vector>

#include "dispatch/dispatch.h"
#include "ember/ember.h"
#include "ember/graphs.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;
namespace F = ember::nn::functional;
using graphs::Graph;
using graphs::GraphCapture;

namespace {

struct TanhMlpImpl : nn::Module {
  nn::Linear l1{register_module("l1", nn::Linear(16, 16))};
  nn::Linear l2{register_module("l2", nn::Linear(16, 16))};
  nn::Linear l3{register_module("l3", nn::Linear(16, 1))};
  Tensor forward(const Tensor& x) { return l3(tanh(l2(tanh(l1(x))))); }
};
EMBER_MODULE(TanhMlp);

struct ReluMlpImpl : nn::Module {
  nn::Linear l1{register_module("l1", nn::Linear(32, 24))};
  nn::Linear l2{register_module("l2", nn::Linear(24, 10))};
  nn::Dropout drop{register_module("drop", nn::Dropout(0.3))};
  bool dropout = false;
  Tensor forward(const Tensor& x) {
    Tensor h = relu(l1(x));
    if (dropout) h = drop(h);
    return l2(h);
  }
};
EMBER_MODULE(ReluMlp);

// The main job's CNN (conv, batch norm, relu, max pool, dropout, linear).
namespace cnn {
namespace T = ::ember;
#define MODULE EMBER_MODULE
#include "../../examples/fashion_mnist/net.inc"
#undef MODULE
}  // namespace cnn

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || !a.sizes().equals(b.sizes())) return false;
  const Tensor ca = a.detach().contiguous(), cb = b.detach().contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), static_cast<size_t>(ca.numel()) * ca.element_size()) == 0;
}

template <class M>
void copy_parameters(const M& from, M& to) {
  NoGradGuard no_grad;
  auto src = from->parameters();
  auto dst = to->parameters();
  for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
}

template <class M>
void expect_same_parameters(const M& a, const M& b, const std::string& when) {
  auto pa = a->parameters();
  auto pb = b->parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    EXPECT_TRUE(bitwise_equal(pa[i], pb[i])) << "parameter " << i << " differs " << when;
    ASSERT_TRUE(pa[i].grad().defined() == pb[i].grad().defined()) << "grad " << i << " " << when;
    if (pa[i].grad().defined()) EXPECT_TRUE(bitwise_equal(pa[i].grad(), pb[i].grad())) << "grad " << i << " " << when;
  }
}

// Batch k of a fixed random stream.
Tensor batch(int64_t k, IntArrayRef sizes) {
  Generator g(1000 + static_cast<uint64_t>(k));
  return randn(sizes, &g);
}

// Eager steps of one model against a captured step replayed on another (same weights, same data).
template <class M, class Opt, class Loss>
void replay_equals_eager(M& eager, M& graphed, Opt& eager_opt, Opt& graph_opt, const Loss& loss_fn,
                         IntArrayRef x_sizes, IntArrayRef y_sizes, int steps) {
  auto step = [&](M& m, Opt& opt, const Tensor& x, const Tensor& y) {
    opt.zero_grad();
    Tensor loss = loss_fn(m(x), y);
    loss.backward();
    opt.step();
    return loss;
  };
  Tensor static_x = batch(0, x_sizes), static_y = batch(1, y_sizes);
  // warm-up: optimizer state exists before capture
  step(eager, eager_opt, static_x, static_y);
  step(graphed, graph_opt, static_x, static_y);
  expect_same_parameters(eager, graphed, "after warm-up");

  Graph g;
  Tensor static_loss;
  {
    GraphCapture capture(g);
    static_loss = step(graphed, graph_opt, static_x, static_y);
  }
  Tensor loss = step(eager, eager_opt, static_x, static_y);
  EXPECT_TRUE(bitwise_equal(loss, static_loss));
  expect_same_parameters(eager, graphed, "after the captured step");
  for (int k = 0; k < steps; ++k) {
    const Tensor x = batch(10 + 2 * k, x_sizes), y = batch(11 + 2 * k, y_sizes);
    loss = step(eager, eager_opt, x, y);
    static_x.copy_(x);
    static_y.copy_(y);
    g.replay();
    ASSERT_TRUE(bitwise_equal(loss, static_loss)) << "loss at replay " << k;
    expect_same_parameters(eager, graphed, "at replay " + std::to_string(k));
  }
}

}  // namespace

TEST(Graphs, MlpSgdReplayEqualsEager) {
  TanhMlp eager, graphed;
  copy_parameters(eager, graphed);
  optim::SGD eo(eager->parameters(), optim::SGDOptions(0.01));
  optim::SGD go(graphed->parameters(), optim::SGDOptions(0.01));
  replay_equals_eager(eager, graphed, eo, go, [](const Tensor& a, const Tensor& b) { return F::mse_loss(a, b); },
                      {8, 16}, {8, 1}, 30);
}

TEST(Graphs, SgdMomentumReplayEqualsEager) {
  TanhMlp eager, graphed;
  copy_parameters(eager, graphed);
  optim::SGD eo(eager->parameters(), optim::SGDOptions(0.01).momentum(0.9).weight_decay(1e-3));
  optim::SGD go(graphed->parameters(), optim::SGDOptions(0.01).momentum(0.9).weight_decay(1e-3));
  replay_equals_eager(eager, graphed, eo, go, [](const Tensor& a, const Tensor& b) { return F::mse_loss(a, b); },
                      {8, 16}, {8, 1}, 20);
}

TEST(Graphs, FusedAdamReplayEqualsEager) {
  ReluMlp eager, graphed;
  copy_parameters(eager, graphed);
  optim::Adam eo(eager->parameters(), optim::AdamOptions(1e-2));
  optim::Adam go(graphed->parameters(), optim::AdamOptions(1e-2));
  auto loss = [](const Tensor& out, const Tensor& y) { return F::cross_entropy(out, y.argmax(1)); };
  replay_equals_eager(eager, graphed, eo, go, loss, {16, 32}, {16, 10}, 20);
  // the step counts advance at each replay, as eager steps
  for (const Tensor& p : graphed->parameters()) {
    const auto& s = static_cast<optim::AdamParamState&>(*go.state().at(p.unsafeGetTensorImpl()));
    EXPECT_EQ(s.step(), 22);
  }
}

TEST(Graphs, AdamWAmsgradReplayEqualsEager) {
  ReluMlp eager, graphed;
  copy_parameters(eager, graphed);
  auto opts = optim::AdamWOptions(1e-2).amsgrad(true).weight_decay(0.1);
  optim::AdamW eo(eager->parameters(), opts);
  optim::AdamW go(graphed->parameters(), opts);
  auto loss = [](const Tensor& out, const Tensor& y) { return F::mse_loss(out, y); };
  replay_equals_eager(eager, graphed, eo, go, loss, {4, 32}, {4, 10}, 10);
}

namespace {
// --amp fp16: forward and loss under float16 autocast and a GradScaler. The scaler's unscale, inf
// check, skip and scale update read their tensors when they run (no host read), so replays equal
// eager steps bit for bit, a step whose gradients overflow included: it is skipped (parameters,
// optimizer state and step counts unchanged) and the scale halves in both. After three clean
// steps the scale doubles in both.
template <class Opt, class MakeOpt>
void float16_scaler_replays_as_eager(const MakeOpt& make_opt) {
  ReluMlp eager, graphed;
  copy_parameters(eager, graphed);
  Opt eo = make_opt(eager), go = make_opt(graphed);
  const auto scaler_options = amp::GradScalerOptions().init_scale(1024).growth_interval(3);
  amp::GradScaler es(scaler_options), gs(scaler_options);
  auto step = [](ReluMlp& m, Opt& opt, amp::GradScaler& scaler, const Tensor& x, const Tensor& y) {
    opt.zero_grad();
    Tensor loss;
    {
      AutocastGuard autocast(kCPU, kHalf, true);
      loss = F::cross_entropy(m(x), y.argmax(1));
    }
    scaler.scale(loss).backward();
    scaler.step(opt);
    scaler.update();
    return loss;
  };
  Tensor static_x = batch(100, {8, 32}), static_y = batch(101, {8, 10});
  step(eager, eo, es, static_x, static_y);  // warm-up
  step(graphed, go, gs, static_x, static_y);
  Graph g;
  Tensor static_loss;
  {
    GraphCapture capture(g);
    static_loss = step(graphed, go, gs, static_x, static_y);
  }
  Tensor loss = step(eager, eo, es, static_x, static_y);
  ASSERT_TRUE(bitwise_equal(loss, static_loss));
  const int overflow = 4;  // this step's input overflows float16 in the first layer
  std::vector<double> scales;
  for (int k = 0; k < 8; ++k) {
    const Tensor x = batch(102 + 2 * k, {8, 32}) * (k == overflow ? 1e6 : 1.0), y = batch(103 + 2 * k, {8, 10});
    const Tensor before = graphed->l1->weight.detach().clone();
    static_x.copy_(x);
    static_y.copy_(y);
    g.replay();
    loss = step(eager, eo, es, x, y);
    ASSERT_TRUE(bitwise_equal(loss, static_loss)) << "replay " << k;
    expect_same_parameters(eager, graphed, "at replay " + std::to_string(k));
    EXPECT_EQ(es.get_scale(), gs.get_scale()) << "replay " << k;
    EXPECT_EQ(es.state_dict()["_growth_tracker"], gs.state_dict()["_growth_tracker"]) << "replay " << k;
    EXPECT_EQ(bitwise_equal(before, graphed->l1->weight), k == overflow) << "replay " << k;
    scales.push_back(gs.get_scale());
  }
  EXPECT_EQ(scales, (std::vector<double>{2048, 2048, 2048, 4096, 2048, 2048, 2048, 4096}));
  if constexpr (std::is_same_v<Opt, optim::AdamW>) {
    for (const Tensor& p : graphed->parameters()) {  // the skipped step did not count
      const auto& s = static_cast<optim::AdamParamState&>(*go.state().at(p.unsafeGetTensorImpl()));
      EXPECT_EQ(s.step(), 9);
    }
  }
}
}  // namespace

TEST(Graphs, Float16GradScalerAdamWReplaysAsEager) {
  float16_scaler_replays_as_eager<optim::AdamW>(
      [](const ReluMlp& m) { return optim::AdamW(m->parameters(), optim::AdamWOptions(1e-2)); });
}

TEST(Graphs, Float16GradScalerSgdReplaysAsEager) {
  float16_scaler_replays_as_eager<optim::SGD>([](const ReluMlp& m) {
    return optim::SGD(m->parameters(), optim::SGDOptions(0.05).momentum(0.9).weight_decay(1e-3).nesterov(true));
  });
}

// Inside a capture GradScaler::step hands its inf check to the optimizer's kernels: other
// optimizers (whose updates cannot skip themselves) are refused.
TEST(Graphs, RefusesGradScalerWithOtherOptimizers) {
  ReluMlp m;
  optim::RMSprop opt(m->parameters(), optim::RMSpropOptions(0.01));
  amp::GradScaler scaler;
  const Tensor x = batch(120, {4, 32}), y = batch(121, {4, 10});
  Graph g;
  expect_error(
      [&] {
        GraphCapture capture(g);
        opt.zero_grad();
        scaler.scale(F::mse_loss(m(x), y)).backward();
        scaler.step(opt);
      },
      {"step", "SGD, Adam and AdamW only"});
}

// Dropout draws from the default generator at each replay as an eager step would: from the same
// seed, N replays draw what N eager steps draw.
TEST(Graphs, DropoutDrawsAsEagerSteps) {
  ReluMlp model;
  model->dropout = true;
  model->train();
  const Tensor x = batch(3, {8, 32});
  const auto state = model->parameters();
  std::vector<Tensor> eager_outputs;
  {
    NoGradGuard no_grad;
    manual_seed(77);
    for (int i = 0; i < 5; ++i) eager_outputs.push_back(model(x).clone());
  }
  NoGradGuard no_grad;
  manual_seed(77);
  Graph g;
  Tensor out;
  {
    GraphCapture capture(g);
    out = model(x);
  }
  EXPECT_TRUE(bitwise_equal(out, eager_outputs[0]));
  for (int i = 1; i < 5; ++i) {
    g.replay();
    EXPECT_TRUE(bitwise_equal(out, eager_outputs[static_cast<size_t>(i)])) << "replay " << i;
  }
}

TEST(Graphs, InferenceReplayFollowsInputs) {
  ReluMlp model;
  model->eval();
  InferenceMode guard;
  Tensor static_x = batch(4, {1, 32});
  Graph g;
  Tensor out;
  {
    GraphCapture capture(g);
    out = softmax(model(static_x), 1);
  }
  for (int k = 0; k < 5; ++k) {
    const Tensor x = batch(20 + k, {1, 32});
    static_x.copy_(x);
    g.replay();
    EXPECT_TRUE(bitwise_equal(out, softmax(model(x), 1))) << "replay " << k;
  }
  EXPECT_GT(g.stats().kernel_steps + g.stats().call_steps, 0u);
}

// Three steps of an LSTM cell without a graph (the fused lstm_cell op, batch 1 and 3) replay on new
// inputs and states as eager steps compute them.
TEST(Graphs, LstmCellStepsReplay) {
  nn::LSTMCell cell(24, 40);
  NoGradGuard no_grad;
  for (int64_t rows : {1, 3}) {
    Tensor xs = batch(30, {3, rows, 24}), h0 = batch(31, {rows, 40}), c0 = batch(32, {rows, 40});
    auto run = [&](const Tensor& x, const Tensor& h, const Tensor& c) {
      std::tuple<Tensor, Tensor> s{h, c};
      for (int64_t t = 0; t < 3; ++t) s = cell(x[t], s);
      return s;
    };
    Graph g;
    std::tuple<Tensor, Tensor> out;
    {
      GraphCapture capture(g);
      out = run(xs, h0, c0);
    }
    EXPECT_EQ(g.stats().call_steps, 3u) << "one lstm_cell call a step";
    for (int k = 0; k < 3; ++k) {
      const Tensor x = batch(40 + k, {3, rows, 24}), h = batch(50 + k, {rows, 40}), c = batch(60 + k, {rows, 40});
      xs.copy_(x), h0.copy_(h), c0.copy_(c);
      g.replay();
      const auto [eh, ec] = run(x, h, c);
      EXPECT_TRUE(bitwise_equal(std::get<0>(out), eh)) << rows << " rows, replay " << k;
      EXPECT_TRUE(bitwise_equal(std::get<1>(out), ec)) << rows << " rows, replay " << k;
    }
  }
}

// The main job's CNN: its evaluation (batch norm in eval mode) replays.
TEST(Graphs, CnnEvaluationReplays) {
  cnn::FashionNet net;
  const Tensor images = batch(60, {4, 1, 28, 28});
  net->train();
  (void)net(images);  // running statistics away from their initial values
  net->eval();
  NoGradGuard no_grad;
  Tensor static_images = images.clone();
  Graph g;
  Tensor logits;
  {
    GraphCapture capture(g);
    logits = net(static_images);
  }
  for (int k = 0; k < 3; ++k) {
    const Tensor x = batch(61 + k, {4, 1, 28, 28});
    static_images.copy_(x);
    g.replay();
    EXPECT_TRUE(bitwise_equal(logits, net(x))) << "replay " << k;
  }
}

namespace {

// What a training step leaves: its loss, then each parameter and its gradient, then the buffers
// (batch norm's running statistics and batch counts).
std::vector<Tensor> training_state(const cnn::FashionNet& m, const Tensor& loss) {
  std::vector<Tensor> s{loss.detach().clone()};
  for (const Tensor& p : m->parameters()) {
    s.push_back(p.detach().clone());
    s.push_back(p.grad().defined() ? p.grad().clone() : Tensor());
  }
  for (const Tensor& b : m->buffers()) s.push_back(b.clone());
  return s;
}

void expect_same_state(const std::vector<Tensor>& eager, const std::vector<Tensor>& graphed, const std::string& when) {
  ASSERT_EQ(eager.size(), graphed.size());
  for (size_t i = 0; i < eager.size(); ++i) {
    ASSERT_EQ(eager[i].defined(), graphed[i].defined()) << "item " << i << " " << when;
    if (eager[i].defined()) EXPECT_TRUE(bitwise_equal(eager[i], graphed[i])) << "item " << i << " differs " << when;
  }
}

// How the main job's step runs: forward and loss under bfloat16 autocast (--amp bf16) or float16
// autocast with a GradScaler (--amp fp16), model and images in channels_last (--channels-last).
struct StepMode {
  bool bf16 = false;
  bool fp16 = false;
  bool channels_last = false;
};

// The main job's CNN in training mode (batch norm's batch statistics and running updates,
// dropout): replays of its captured training step equal as many eager steps bit for bit (loss,
// gradients, parameters, running statistics, batch counts), the dropout masks included. The eager
// run and the graphed one each start from the same seed (they draw from the default generator).
template <class Opt, class MakeOpt>
void cnn_training_replays_as_eager(const MakeOpt& make_opt, int replays, StepMode mode = {}) {
  cnn::FashionNet eager, graphed;
  copy_parameters(eager, graphed);
  const MemoryFormat format = mode.channels_last ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous;
  eager->to(format);
  graphed->to(format);
  eager->train();
  graphed->train();
  Opt eager_opt = make_opt(eager), graph_opt = make_opt(graphed);
  amp::GradScaler eager_scaler(amp::GradScalerOptions().enabled(mode.fp16)),
      graph_scaler(amp::GradScalerOptions().enabled(mode.fp16));
  auto step = [&](cnn::FashionNet& m, Opt& opt, const Tensor& x, const Tensor& y) {
    amp::GradScaler& scaler = &m == &eager ? eager_scaler : graph_scaler;
    opt.zero_grad();
    Tensor loss;
    {
      AutocastGuard autocast(kCPU, mode.fp16 ? kHalf : kBFloat16, mode.bf16 || mode.fp16);
      loss = F::cross_entropy(m(x), y.argmax(1));
    }
    scaler.scale(loss).backward();
    scaler.step(opt);
    scaler.update();
    return loss;
  };
  const std::vector<int64_t> x_sizes{6, 1, 28, 28}, y_sizes{6, 10};
  auto images = [&](int64_t k) { return batch(k, x_sizes).contiguous(format); };
  std::vector<std::vector<Tensor>> expected;
  std::vector<double> scales;
  manual_seed(321);
  step(eager, eager_opt, images(0), batch(1, y_sizes));  // warm-up
  expected.push_back(training_state(eager, step(eager, eager_opt, images(0), batch(1, y_sizes))));
  for (int k = 0; k < replays; ++k) {
    expected.push_back(training_state(eager, step(eager, eager_opt, images(10 + 2 * k), batch(11 + 2 * k, y_sizes))));
    scales.push_back(eager_scaler.get_scale());
  }

  manual_seed(321);
  Tensor static_x = images(0), static_y = batch(1, y_sizes);
  step(graphed, graph_opt, static_x, static_y);  // warm-up: optimizer state exists before capture
  Graph g;
  Tensor static_loss;
  {
    GraphCapture capture(g);
    static_loss = step(graphed, graph_opt, static_x, static_y);
  }
  expect_same_state(expected[0], training_state(graphed, static_loss), "after the captured step");
  for (int k = 0; k < replays; ++k) {
    static_x.copy_(batch(10 + 2 * k, x_sizes));
    static_y.copy_(batch(11 + 2 * k, y_sizes));
    g.replay();
    expect_same_state(expected[static_cast<size_t>(k) + 1], training_state(graphed, static_loss),
                      "at replay " + std::to_string(k));
    EXPECT_EQ(graph_scaler.get_scale(), scales[static_cast<size_t>(k)]) << "replay " << k;
    if (::testing::Test::HasFailure()) return;
  }
  // batch norm counted every replayed batch
  EXPECT_EQ(graphed->bn1->num_batches_tracked.item<int64_t>(), replays + 2);
}

}  // namespace

TEST(Graphs, CnnTrainingSgdMomentumReplaysAsEager) {
  cnn_training_replays_as_eager<optim::SGD>(
      [](const cnn::FashionNet& m) {
        return optim::SGD(m->parameters(), optim::SGDOptions(0.01).momentum(0.9).weight_decay(1e-4));
      },
      24);
}

TEST(Graphs, CnnTrainingAdamReplaysAsEager) {
  cnn_training_replays_as_eager<optim::Adam>(
      [](const cnn::FashionNet& m) { return optim::Adam(m->parameters(), optim::AdamOptions(2e-3)); }, 24);
}

// --amp bf16: the step's forward and loss under bfloat16 autocast (weights cast per step, the
// loss in float32) replay as eager steps.
TEST(Graphs, CnnTrainingBf16AutocastReplaysAsEager) {
  cnn_training_replays_as_eager<optim::Adam>(
      [](const cnn::FashionNet& m) { return optim::Adam(m->parameters(), optim::AdamOptions(2e-3)); }, 12,
      {.bf16 = true});
}

// --channels-last: convolution weights (and so their gradients and Adam's moments) in
// channels_last stay on the fused Adam update, which replays.
TEST(Graphs, CnnTrainingChannelsLastAdamReplaysAsEager) {
  cnn_training_replays_as_eager<optim::Adam>(
      [](const cnn::FashionNet& m) { return optim::Adam(m->parameters(), optim::AdamOptions(2e-3)); }, 12,
      {.channels_last = true});
}

// --amp fp16: float16 autocast with a GradScaler (unscale, inf check, skipped steps, scale
// updates inside the graph).
TEST(Graphs, CnnTrainingFloat16GradScalerReplaysAsEager) {
  cnn_training_replays_as_eager<optim::Adam>(
      [](const cnn::FashionNet& m) { return optim::Adam(m->parameters(), optim::AdamOptions(2e-3)); }, 12,
      {.fp16 = true});
}

TEST(Graphs, CnnTrainingBf16ChannelsLastReplaysAsEager) {
  cnn_training_replays_as_eager<optim::Adam>(
      [](const cnn::FashionNet& m) { return optim::Adam(m->parameters(), optim::AdamOptions(2e-3)); }, 12,
      {.bf16 = true, .channels_last = true});
}

// Group norm and instance norm in training take their statistics from ops too: their training
// steps replay as eager steps.
TEST(Graphs, GroupAndInstanceNormTrainingReplay) {
  nn::GroupNorm gn_e(2, 4), gn_g(2, 4);
  nn::InstanceNorm2d in_e(nn::InstanceNorm2dOptions(4).affine(true).track_running_stats(true)),
      in_g(nn::InstanceNorm2dOptions(4).affine(true).track_running_stats(true));
  copy_parameters(gn_e, gn_g);
  copy_parameters(in_e, in_g);
  std::vector<Tensor> params_e = gn_e->parameters(), params_g = gn_g->parameters();
  for (const Tensor& p : in_e->parameters()) params_e.push_back(p);
  for (const Tensor& p : in_g->parameters()) params_g.push_back(p);
  optim::SGD eo(params_e, optim::SGDOptions(0.1)), go(params_g, optim::SGDOptions(0.1));
  auto step = [](nn::GroupNorm& gn, nn::InstanceNorm2d& in, optim::SGD& opt, const Tensor& x) {
    opt.zero_grad();
    Tensor loss = (in(gn(x)) * x).sum();
    loss.backward();
    opt.step();
    return loss;
  };
  Tensor static_x = batch(70, {3, 4, 5, 5});
  step(gn_e, in_e, eo, static_x);
  step(gn_g, in_g, go, static_x);
  Graph g;
  Tensor static_loss;
  {
    GraphCapture capture(g);
    static_loss = step(gn_g, in_g, go, static_x);
  }
  Tensor loss = step(gn_e, in_e, eo, static_x);
  for (int k = 0; k < 5; ++k) {
    const Tensor x = batch(71 + k, {3, 4, 5, 5});
    static_x.copy_(x);
    g.replay();
    loss = step(gn_e, in_e, eo, x);
    ASSERT_TRUE(bitwise_equal(loss, static_loss)) << "replay " << k;
    for (size_t i = 0; i < params_e.size(); ++i) {
      EXPECT_TRUE(bitwise_equal(params_e[i], params_g[i])) << "parameter " << i << " at replay " << k;
      EXPECT_TRUE(bitwise_equal(params_e[i].grad(), params_g[i].grad())) << "grad " << i << " at replay " << k;
    }
    EXPECT_TRUE(bitwise_equal(in_e->running_mean, in_g->running_mean)) << "replay " << k;
    EXPECT_TRUE(bitwise_equal(in_e->running_var, in_g->running_var)) << "replay " << k;
  }
}

// Layer norm and rms norm in training: their statistics are made by the op and read by their
// backward op, so each replay normalizes with its own batch's statistics.
TEST(Graphs, LayerAndRmsNormTrainingReplay) {
  nn::Linear lin_e(6, 8), lin_g(6, 8);
  nn::LayerNorm ln_e(nn::LayerNormOptions({8})), ln_g(nn::LayerNormOptions({8}));
  copy_parameters(lin_e, lin_g);
  copy_parameters(ln_e, ln_g);
  const Tensor rw_e = batch(79, {8}).requires_grad_(), rw_g = rw_e.detach().clone().requires_grad_();
  std::vector<Tensor> params_e = lin_e->parameters(), params_g = lin_g->parameters();
  for (const Tensor& p : ln_e->parameters()) params_e.push_back(p);
  for (const Tensor& p : ln_g->parameters()) params_g.push_back(p);
  params_e.push_back(rw_e);
  params_g.push_back(rw_g);
  optim::Adam eo(params_e, optim::AdamOptions(0.01)), go(params_g, optim::AdamOptions(0.01));
  auto step = [](nn::Linear& lin, nn::LayerNorm& ln, const Tensor& rw, optim::Adam& opt, const Tensor& x) {
    opt.zero_grad();
    const Tensor h = ln(lin(x));
    Tensor loss = (rms_norm(h.tanh(), {8}, rw) * h).sum();
    loss.backward();
    opt.step();
    return loss;
  };
  Tensor static_x = batch(80, {5, 3, 6});
  step(lin_e, ln_e, rw_e, eo, static_x);
  step(lin_g, ln_g, rw_g, go, static_x);
  Graph g;
  Tensor static_loss;
  {
    GraphCapture capture(g);
    static_loss = step(lin_g, ln_g, rw_g, go, static_x);
  }
  Tensor loss = step(lin_e, ln_e, rw_e, eo, static_x);
  ASSERT_TRUE(bitwise_equal(loss, static_loss));
  for (int k = 0; k < 5; ++k) {
    const Tensor x = batch(81 + k, {5, 3, 6});
    static_x.copy_(x);
    g.replay();
    loss = step(lin_e, ln_e, rw_e, eo, x);
    ASSERT_TRUE(bitwise_equal(loss, static_loss)) << "replay " << k;
    for (size_t i = 0; i < params_e.size(); ++i) {
      EXPECT_TRUE(bitwise_equal(params_e[i], params_g[i])) << "parameter " << i << " at replay " << k;
      EXPECT_TRUE(bitwise_equal(params_e[i].grad(), params_g[i].grad())) << "grad " << i << " at replay " << k;
    }
  }
}

namespace {
// Conv, batch norm keeping cumulative running averages (momentum nullopt), relu, linear.
struct ConvBnCmaImpl : nn::Module {
  nn::Conv2d conv{register_module("conv", nn::Conv2d(nn::Conv2dOptions(2, 4, 3)))};
  nn::BatchNorm2d bn{register_module("bn", nn::BatchNorm2d(nn::BatchNorm2dOptions(4).momentum(std::nullopt)))};
  nn::Linear fc{register_module("fc", nn::Linear(4 * 4 * 4, 3))};
  Tensor forward(const Tensor& x) { return fc(relu(bn(conv(x))).flatten(1)); }
};
EMBER_MODULE(ConvBnCma);
}  // namespace

// Batch norm's cumulative average (momentum nullopt) moves its running statistics by
// 1 / num_batches_tracked, which its statistics op reads: each replay uses its own step's count,
// and loss, parameters, gradients, running statistics and counts equal eager steps bit for bit.
TEST(Graphs, BatchNormCumulativeAverageReplay) {
  ConvBnCma eager, graphed;
  copy_parameters(eager, graphed);
  optim::SGD eo(eager->parameters(), optim::SGDOptions(0.05).momentum(0.9)),
      go(graphed->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  auto step = [](ConvBnCma& m, optim::SGD& opt, const Tensor& x, const Tensor& y) {
    opt.zero_grad();
    Tensor loss = F::mse_loss(m(x), y);
    loss.backward();
    opt.step();
    return loss;
  };
  Tensor static_x = batch(90, {5, 2, 6, 6}), static_y = batch(91, {5, 3});
  step(eager, eo, static_x, static_y);
  step(graphed, go, static_x, static_y);
  Graph g;
  Tensor static_loss;
  {
    GraphCapture capture(g);
    static_loss = step(graphed, go, static_x, static_y);
  }
  Tensor loss = step(eager, eo, static_x, static_y);
  ASSERT_TRUE(bitwise_equal(loss, static_loss));
  for (int k = 0; k < 8; ++k) {
    const Tensor x = batch(92 + 2 * k, {5, 2, 6, 6}) * (1 + k), y = batch(93 + 2 * k, {5, 3});
    static_x.copy_(x);
    static_y.copy_(y);
    g.replay();
    loss = step(eager, eo, x, y);
    ASSERT_TRUE(bitwise_equal(loss, static_loss)) << "replay " << k;
    expect_same_parameters(eager, graphed, "at replay " + std::to_string(k));
    const auto be = eager->buffers(), bg = graphed->buffers();
    ASSERT_EQ(be.size(), 3u);
    for (size_t i = 0; i < be.size(); ++i)
      EXPECT_TRUE(bitwise_equal(be[i], bg[i])) << "buffer " << i << " at replay " << k;
  }
  EXPECT_EQ(graphed->bn->num_batches_tracked.item<int64_t>(), 10);
}

// The pool reuses a block once its tensor died, never while it lives.
TEST(Graphs, PoolReusesBlocksOfDeadTensors) {
  NoGradGuard no_grad;
  const Tensor x = randn({64, 64});
  Graph g;
  Tensor kept, c;
  const void* a_ptr = nullptr;
  const void* b_ptr = nullptr;
  {
    GraphCapture capture(g);
    Tensor a = x * 2;  // dies after b
    a_ptr = a.data_ptr();
    Tensor b = a + 1;  // lives to the end
    b_ptr = b.data_ptr();
    a.reset();
    c = b * 3;  // may take a's block
    kept = b;
  }
  EXPECT_EQ(c.data_ptr(), a_ptr);
  EXPECT_NE(c.data_ptr(), b_ptr);
  EXPECT_NE(kept.data_ptr(), a_ptr);
  EXPECT_EQ(g.stats().reused_allocations, 1u);
  for (int i = 0; i < 3; ++i) {
    NoGradGuard ng;
    Tensor(x).mul_(1.5);
    g.replay();
    EXPECT_TRUE(bitwise_equal(c, (x * 2 + 1) * 3));
    EXPECT_TRUE(bitwise_equal(kept, x * 2 + 1));
  }
}

// Graphs captured in sequence into one pool share blocks freed by the first.
TEST(Graphs, SharedPool) {
  NoGradGuard no_grad;
  const Tensor x = randn({32, 32});
  Graph g1, g2;
  Tensor y1, y2;
  {
    GraphCapture capture(g1);
    Tensor t = x.exp();  // a temporary of g1
    y1 = t + 1;
  }
  {
    GraphCapture capture(g2, g1.pool());
    Tensor t = y1 * 2;  // a temporary of g2: takes the block g1's temporary left
    y2 = t - 1;
  }
  EXPECT_EQ(g1.pool(), g2.pool());
  EXPECT_EQ(g2.stats().reused_allocations, 1u);
  Tensor(x).fill_(0.5);
  g1.replay();
  g2.replay();
  EXPECT_TRUE(bitwise_equal(y2, (x.exp() + 1) * 2 - 1));
}

// A graphed module between eager layers: forward values and every gradient as a fully eager twin's.
TEST(Graphs, GraphedCallableInsideEagerModel) {
  nn::Linear pre(8, 16), post(1, 3);
  TanhMlp mid;
  nn::Linear pre_e(8, 16), post_e(1, 3);
  TanhMlp mid_e;
  copy_parameters(pre, pre_e);
  copy_parameters(post, post_e);
  copy_parameters(mid, mid_e);
  auto graphed = graphs::make_graphed_callables(mid, {randn({4, 16}).requires_grad_()});
  for (int k = 0; k < 5; ++k) {
    const Tensor x = batch(50 + k, {4, 8});
    const Tensor out = post(graphed({pre(x)}));
    const Tensor out_e = post_e(mid_e(pre_e(x)));
    ASSERT_TRUE(bitwise_equal(out, out_e)) << "forward " << k;
    out.pow(2).sum().backward();
    out_e.pow(2).sum().backward();
    expect_same_parameters(pre, pre_e, "pre, step " + std::to_string(k));
    expect_same_parameters(mid, mid_e, "mid, step " + std::to_string(k));
    expect_same_parameters(post, post_e, "post, step " + std::to_string(k));
  }
  // inputs of another shape are refused
  EXPECT_ERROR(graphed({randn({5, 16})}), "graphed callable", "shape");
}

// reset() frees what the graph holds; its pool goes with the last tensor of it (the captured
// step's loss and the gradients the replays wrote), and nothing of it is left (under ASan,
// LeakSanitizer checks at exit). The graph then captures again.
TEST(Graphs, ResetFreesThePool) {
  cnn::FashionNet net;
  net->train();
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.01).momentum(0.9));
  Tensor static_x = batch(80, {2, 1, 28, 28}), static_y = batch(81, {2, 10});
  auto step = [&] {
    opt.zero_grad();
    Tensor loss = F::cross_entropy(net(static_x), static_y.argmax(1));
    loss.backward();
    opt.step();
    return loss;
  };
  step();
  Graph g;
  std::weak_ptr<graphs::MemoryPool> pool;
  {
    Tensor loss;
    {
      GraphCapture capture(g);
      loss = step();
    }
    g.replay();
    pool = g.pool();
    g.reset();
    EXPECT_FALSE(g.captured());
    EXPECT_EQ(g.pool(), nullptr);
    EXPECT_FALSE(pool.expired());  // the loss and the gradients still hold blocks of it
  }
  opt.zero_grad();  // drops the gradients
  EXPECT_TRUE(pool.expired());
  Tensor loss;
  {
    GraphCapture capture(g);
    loss = step();
  }
  g.replay();
  EXPECT_TRUE(g.captured());
}

// Ops whose out-parameter the caller may leave out (max pooling's indices when no gradient is
// wanted, the convolution's bias gradient when it has no bias) replay as they were captured.
TEST(Graphs, OptionalOutParametersReplayAsCaptured) {
  Tensor static_x = batch(90, {2, 3, 8, 8});
  const Tensor w = batch(89, {4, 3, 3, 3}).requires_grad_();
  auto run = [&](const Tensor& x) {
    const Tensor pooled = max_pool2d(x, {2, 2});  // in grad mode, of an input needing no gradient
    return std::make_pair(pooled, autograd::grad({conv2d(pooled, w).sum()}, {w})[0]);
  };
  Graph g;
  std::pair<Tensor, Tensor> out;
  {
    GraphCapture capture(g);
    out = run(static_x);
  }
  for (int k = 0; k < 3; ++k) {
    static_x.copy_(batch(91 + k, {2, 3, 8, 8}));
    g.replay();
    const auto expected = run(static_x);
    EXPECT_TRUE(bitwise_equal(out.first, expected.first)) << "replay " << k;
    EXPECT_TRUE(bitwise_equal(out.second, expected.second)) << "replay " << k;
  }
}

// ---- refusals ----------------------------------------------------------------------------------

TEST(Graphs, RefusesHostReads) {
  const Tensor x = randn({4});
  Graph g;
  expect_error(
      [&] {
        GraphCapture capture(g);
        (void)(x * 2).sum().item<float>();
      },
      {"graphs", "item() reads the values"});
  EXPECT_FALSE(g.captured());
  expect_error(
      [&] {
        GraphCapture capture(g);
        std::ostringstream os;
        os << x * 2;
      },
      {"graphs", "print() reads the values"});
  expect_error(
      [&] {
        GraphCapture capture(g);
        (void)nonzero(x > 0);
      },
      {"nonzero", "depends on the data"});
  expect_error(
      [&] {
        GraphCapture capture(g);
        (void)equal(x * 2, x);
      },
      {"equal", "host synchronization"});
  // the graph is still usable
  Tensor y;
  {
    GraphCapture capture(g);
    y = x * 3;
  }
  g.replay();
  EXPECT_TRUE(bitwise_equal(y, x * 3));
}

TEST(Graphs, RefusesNestedCaptureAndBadReplays) {
  Graph never;
  EXPECT_ERROR(never.replay(), "replay", "never captured");
  const Tensor x = randn({4});
  Graph g, h;
  g.capture_begin();
  EXPECT_ERROR(h.capture_begin(), "nested capture");
  EXPECT_ERROR(g.replay(), "still capturing");
  Tensor y = x + 1;
  g.capture_end();
  EXPECT_ERROR(g.capture_begin(), "reset() it first");
  g.replay();
  g.reset();
  EXPECT_ERROR(g.replay(), "reset");
  EXPECT_ERROR(g.capture_end(), "capture_begin was not called");
}

TEST(Graphs, ThrowingRegionLeavesGraphEmptyAndUsable) {
  const Tensor x = randn({8});
  Graph g;
  try {
    GraphCapture capture(g);
    Tensor a = x * 2;
    Tensor b = a.view({3, 3});  // throws: 8 elements
  } catch (const Error&) {
  }
  EXPECT_FALSE(g.captured());
  EXPECT_FALSE(dispatch::capturing());
  Tensor y;
  {
    GraphCapture capture(g);
    y = x.exp();
  }
  g.replay();
  EXPECT_TRUE(bitwise_equal(y, x.exp()));
}

TEST(Graphs, RefusesChangedStaticInputs) {
  NoGradGuard no_grad;
  Tensor x = randn({4, 4});
  nn::Linear lin(4, 3);
  Graph g;
  Tensor y;
  {
    GraphCapture capture(g);
    y = lin(x);
  }
  g.replay();
  x.resize_({2, 8});
  EXPECT_ERROR(g.replay(), "replay", "static input", "[4, 4]", "[2, 8]");
  x.resize_({4, 4});
  g.replay();
  lin->to(kDouble);
  EXPECT_ERROR(g.replay(), "static input", "Double");
}

TEST(Graphs, RefusesFreedStaticInput) {
  NoGradGuard no_grad;
  auto x = std::make_unique<Tensor>(randn({4}));
  Graph g;
  {
    GraphCapture capture(g);
    (void)(*x * 2);
  }
  x.reset();
  EXPECT_ERROR(g.replay(), "freed after capture");
}

TEST(Graphs, RefusesOptimizerWithoutWarmup) {
  TanhMlp m;
  optim::SGD opt(m->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  const Tensor x = randn({8, 16}), y = randn({8, 1});
  Graph g;
  expect_error(
      [&] {
        GraphCapture capture(g);
        opt.zero_grad();
        F::mse_loss(m(x), y).backward();
        opt.step();
      },
      {"warm-up"});
  optim::Adam adam(m->parameters(), optim::AdamOptions(0.1));
  expect_error(
      [&] {
        GraphCapture capture(g);
        adam.zero_grad();
        F::mse_loss(m(x), y).backward();
        adam.step();
      },
      {"optimizer", "warm-up"});
  optim::Adam slow(m->parameters(), optim::AdamOptions(0.1).fused(false));
  slow.zero_grad();
  F::mse_loss(m(x), y).backward();
  slow.step();
  expect_error(
      [&] {
        GraphCapture capture(g);
        slow.zero_grad();
        F::mse_loss(m(x), y).backward();
        slow.step();
      },
      {"Adam", "fused"});
}

TEST(Graphs, RefusesTensorsMadeOnTheHost) {
  const Tensor x = randn({3});
  Graph g;
  expect_error(
      [&] {
        GraphCapture capture(g);
        std::vector<float> v = {1, 2, 3};
        Tensor made = empty({3});
        std::memcpy(made.data_ptr(), v.data(), sizeof(float) * 3);
        (void)(x + made);
      },
      {"graphs", "host code"});
}

}  // namespace EMBER_UNITY_FILE
