// Autocast regions: state and nesting, the policies, gradients through casts, the parameter cast
// cache, bad input, thread-locality, and training under bfloat16 (the main job's CNN on
// Fashion-MNIST) and float16 with a GradScaler.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

#include "ember/ember.h"
#include "ember/torch.h"
#include "sanitized.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;
namespace F = ember::nn::functional;

namespace {

// Counts the casts (op "to") entering dispatch on this thread.
struct CastCounter : OpObserver {
  int casts = 0;
  void on_enter(const char* op) override { casts += std::strcmp(op, "to") == 0; }
};

}  // namespace

TEST(Autocast, GuardSetsAndRestoresTheThreadState) {
  EXPECT_FALSE(is_autocast_enabled());
  EXPECT_EQ(get_autocast_dtype(), kBFloat16);
  {
    AutocastGuard outer;
    EXPECT_TRUE(is_autocast_enabled());
    EXPECT_TRUE(autocast::is_cpu_enabled());
    EXPECT_TRUE(is_autocast_cache_enabled());
    {
      AutocastGuard inner(kCPU, kHalf, /*enabled=*/true, /*cache_enabled=*/false);
      EXPECT_EQ(get_autocast_dtype(), kHalf);
      EXPECT_FALSE(is_autocast_cache_enabled());
      EXPECT_EQ(mm(ones({2, 2}), ones({2, 2})).dtype(), kHalf);
      {
        AutocastGuard off(kCPU, std::nullopt, /*enabled=*/false);
        EXPECT_FALSE(is_autocast_enabled());
        EXPECT_EQ(get_autocast_dtype(), kHalf);  // inherited
        EXPECT_EQ(mm(ones({2, 2}), ones({2, 2})).dtype(), kFloat);
      }
      EXPECT_TRUE(is_autocast_enabled());
    }
    EXPECT_EQ(get_autocast_dtype(), kBFloat16);
    EXPECT_TRUE(is_autocast_cache_enabled());
    EXPECT_EQ(mm(ones({2, 2}), ones({2, 2})).dtype(), kBFloat16);
  }
  EXPECT_FALSE(is_autocast_enabled());
  EXPECT_EQ(mm(ones({2, 2}), ones({2, 2})).dtype(), kFloat);
  EXPECT_EQ(with_autocast([] { return mm(ones({2, 2}), ones({2, 2})); }).dtype(), kBFloat16);
  EXPECT_EQ(with_autocast([] { return mm(ones({2, 2}), ones({2, 2})); }, kHalf).dtype(), kHalf);
}

// A libtorch program drives autocast through at::autocast (what torch.autocast does in Python).
TEST(Autocast, LibtorchSpelling) {
  at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  at::autocast::set_cpu_enabled(true);
  at::autocast::increment_nesting();
  EXPECT_TRUE(at::autocast::is_cpu_enabled());
  EXPECT_EQ(at::autocast::get_autocast_cpu_dtype(), torch::kBFloat16);
  EXPECT_EQ(torch::mm(torch::ones({2, 2}), torch::ones({2, 2})).dtype(), torch::kBFloat16);
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_cpu_enabled(false);
  EXPECT_EQ(torch::mm(torch::ones({2, 2}), torch::ones({2, 2})).dtype(), torch::kFloat32);
}

TEST(Autocast, StateIsPerThread) {
  AutocastGuard autocast;
  bool other_enabled = true;
  ScalarType other_dtype = kFloat;
  std::thread([&] {
    other_enabled = is_autocast_enabled();
    other_dtype = mm(ones({2, 2}), ones({2, 2})).dtype();
  }).join();
  EXPECT_FALSE(other_enabled);
  EXPECT_EQ(other_dtype, kFloat);
}

TEST(Autocast, BadDtypeOrDeviceRaisesAndChangesNothing) {
  for (const ScalarType bad : {kInt, kLong, kBool, kFloat, kDouble}) {
    EXPECT_ERROR(AutocastGuard g(kCPU, bad), "autocast", "bfloat16 and float16");
    EXPECT_FALSE(is_autocast_enabled());
    EXPECT_EQ(get_autocast_dtype(), kBFloat16);
  }
  EXPECT_ERROR(AutocastGuard g("cuda"), "autocast", "unsupported device type 'cuda'", "'cpu'");
  EXPECT_ERROR(autocast::set_autocast_cpu_dtype(kInt), "autocast", "Int");
  EXPECT_FALSE(is_autocast_enabled());
  AutocastGuard by_name("cpu");
  EXPECT_TRUE(is_autocast_enabled());
}

TEST(Autocast, PoliciesCastOnlyEligibleInputs) {
  const Tensor a = randn({4, 8}), b = randn({8, 3});
  AutocastGuard autocast;
  // lower precision: float32 in, bfloat16 out; float64 and integers untouched
  EXPECT_EQ(mm(a, b).dtype(), kBFloat16);
  EXPECT_EQ(matmul(a, b.to(kHalf)).dtype(), kBFloat16);
  EXPECT_EQ(F::linear(a, b.t(), ones({3})).dtype(), kBFloat16);
  EXPECT_EQ(mm(a.to(kDouble), b.to(kDouble)).dtype(), kDouble);
  EXPECT_EQ(ember::conv2d(randn({1, 2, 5, 5}), randn({3, 2, 3, 3})).dtype(), kBFloat16);
  EXPECT_EQ(ember::conv_transpose2d(randn({1, 2, 5, 5}), randn({2, 3, 3, 3})).dtype(), kBFloat16);
  // float32: bfloat16 in, float32 out
  const Tensor lo = randn({4, 5}).to(kBFloat16);
  EXPECT_EQ(F::mse_loss(lo, lo).dtype(), kFloat);
  EXPECT_EQ(F::cross_entropy(lo, tensor({0, 1, 2, 3}, kLong)).dtype(), kFloat);
  EXPECT_EQ(lo.prod().dtype(), kFloat);
  EXPECT_EQ(F::pad(lo.unsqueeze(0), F::PadFuncOptions({1, 1}).mode(kReflect)).dtype(), kFloat);
  EXPECT_EQ(ember::pad(lo.unsqueeze(0), {1, 1}).dtype(), kBFloat16);  // constant: no list
  EXPECT_EQ(F::mse_loss(lo.to(kDouble), lo.to(kDouble)).dtype(), kDouble);
  // promote: the widest floating input
  EXPECT_EQ(cat({lo, lo.to(kFloat)}).dtype(), kFloat);
  EXPECT_EQ(stack({lo, lo}).dtype(), kBFloat16);
  // no list: the inputs' dtypes
  EXPECT_EQ(lo.softmax(1).dtype(), kBFloat16);
  EXPECT_EQ(a.relu().dtype(), kFloat);
}

TEST(Autocast, ValuesAreTheOpOnRoundedInputs) {
  const Tensor a = randn({16, 32}), b = randn({32, 8});
  Tensor r;
  {
    AutocastGuard autocast;
    r = mm(a, b);
  }
  EXPECT_TRUE(r.equal(mm(a.to(kBFloat16), b.to(kBFloat16))));
}

TEST(Autocast, GradientsOfFloat32ParametersArriveInFloat32) {
  nn::Linear lin(8, 4);
  const Tensor x = randn({5, 8});
  Tensor y;
  {
    AutocastGuard autocast;
    y = lin->forward(x);
    ASSERT_EQ(y.dtype(), kBFloat16);
    y = F::mse_loss(y, zeros({5, 4}));  // float32
  }
  y.backward();
  ASSERT_TRUE(lin->weight.grad().defined());
  EXPECT_EQ(lin->weight.grad().dtype(), kFloat);
  EXPECT_EQ(lin->bias.grad().dtype(), kFloat);
  // against the same computation written with explicit casts
  Tensor w = lin->weight.detach().clone().set_requires_grad(true);
  Tensor b = lin->bias.detach().clone().set_requires_grad(true);
  Tensor ref = F::mse_loss(F::linear(x.to(kBFloat16), w.to(kBFloat16), b.to(kBFloat16)).to(kFloat), zeros({5, 4}));
  ref.backward();
  EXPECT_TRUE(lin->weight.grad().allclose(w.grad(), 1e-6, 1e-6));
  EXPECT_TRUE(lin->bias.grad().allclose(b.grad(), 1e-6, 1e-6));
}

TEST(Autocast, BackwardInsideARegionRunsInTheForwardDtypes) {
  Tensor w = randn({8, 4}).set_requires_grad(true);
  const Tensor x = randn({3, 8});
  Tensor g_inside, g_outside;
  {
    AutocastGuard autocast;
    Tensor loss = mm(x, w).to(kFloat).pow(2).sum();
    g_inside = autograd::grad({loss}, {w})[0];
  }
  {
    AutocastGuard autocast;
    Tensor loss = mm(x, w).to(kFloat).pow(2).sum();
    loss.backward();
    g_outside = w.grad();
  }
  EXPECT_EQ(g_inside.dtype(), kFloat);
  EXPECT_TRUE(g_inside.equal(g_outside));
}

TEST(Autocast, ParameterCastsAreCachedPerRegion) {
  nn::Linear lin(8, 4);
  const Tensor x = randn({2, 8});
  {
    AutocastGuard autocast;
    CastCounter counter;
    lin->forward(x);
    const int first = counter.casts;  // input, weight, bias
    EXPECT_EQ(first, 3);
    lin->forward(x);
    EXPECT_EQ(counter.casts, first + 1);  // only the input again
    {
      AutocastGuard nested;  // nested regions share the outer region's cache
      lin->forward(x);
      EXPECT_EQ(counter.casts, first + 2);
    }
    lin->forward(x);
    EXPECT_EQ(counter.casts, first + 3);
    {
      NoGradGuard no_grad;
      lin->weight.add_(1.0);  // a modified parameter is cast again
    }
    const Tensor y = lin->forward(x);
    EXPECT_EQ(counter.casts, first + 5);
    EXPECT_TRUE(y.equal(F::linear(x.to(kBFloat16), lin->weight.to(kBFloat16), lin->bias.to(kBFloat16))));
  }
  {
    AutocastGuard autocast;  // a new region casts afresh
    CastCounter counter;
    lin->forward(x);
    EXPECT_EQ(counter.casts, 3);
  }
  {
    AutocastGuard autocast(kCPU, std::nullopt, true, /*cache_enabled=*/false);
    CastCounter counter;
    lin->forward(x);
    lin->forward(x);
    EXPECT_EQ(counter.casts, 6);
  }
}

TEST(Autocast, CastCachedUnderNoGradIsNotReusedForTraining) {
  nn::Linear lin(8, 4);
  const Tensor x = randn({2, 8});
  AutocastGuard autocast;
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(lin->forward(x).requires_grad());
  }
  Tensor y = lin->forward(x);
  ASSERT_TRUE(y.requires_grad());
  y.to(kFloat).sum().backward();
  EXPECT_TRUE(lin->weight.grad().defined());
}

TEST(Autocast, InferenceModeAndNoGradRegions) {
  nn::Linear lin(8, 4);
  const Tensor x = randn({2, 8});
  AutocastGuard autocast;
  InferenceMode inference;
  const Tensor y = lin->forward(x);
  EXPECT_EQ(y.dtype(), kBFloat16);
  EXPECT_TRUE(y.is_inference());
}

// Float16 autocast with a GradScaler: a small classifier trains, its parameters stay float32.
TEST(Autocast, Float16WithGradScalerTrainsASmallModel) {
  manual_seed(3);
  const Tensor x = randn({256, 10});
  const Tensor y = (x.narrow(1, 0, 1).squeeze(1) + x.narrow(1, 1, 1).squeeze(1) > 0).to(kLong);
  nn::Sequential model(nn::Linear(10, 32), nn::ReLU(), nn::Linear(32, 2));
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  amp::GradScaler scaler;
  double first_loss = 0, last_loss = 0;
  for (int step = 0; step < 150; ++step) {
    Tensor loss;
    {
      AutocastGuard autocast(kCPU, kHalf);
      const Tensor logits = model->forward(x);
      ASSERT_EQ(logits.dtype(), kHalf);
      loss = F::cross_entropy(logits, y);
      ASSERT_EQ(loss.dtype(), kFloat);
    }
    opt.zero_grad();
    scaler.scale(loss).backward();
    scaler.step(opt);
    scaler.update();
    (step == 0 ? first_loss : last_loss) = loss.item<double>();
  }
  for (const Tensor& p : model->parameters()) EXPECT_EQ(p.dtype(), kFloat);
  EXPECT_LT(last_loss, 0.25 * first_loss);
  NoGradGuard no_grad;
  const double accuracy = model->forward(x).argmax(1).eq(y).to(kFloat).mean().item<double>();
  EXPECT_GT(accuracy, 0.95);
}

TEST(Autocast, OverflowUnderFloat16SkipsTheStepAndHalvesTheScale) {
  nn::Linear lin(4, 1);
  optim::SGD opt(lin->parameters(), optim::SGDOptions(0.1));
  amp::GradScaler scaler;
  const Tensor before = lin->weight.detach().clone();
  Tensor loss;
  {
    AutocastGuard autocast(kCPU, kHalf);
    loss = lin->forward(full({2, 4}, 1e4)).sum();  // float16 output; the scaled gradient overflows
  }
  scaler.scale(loss).backward();
  EXPECT_FALSE(scaler.step(opt));
  scaler.update();
  EXPECT_TRUE(lin->weight.equal(before));
  EXPECT_EQ(scaler.get_scale(), 32768.0);
}

// The main job's CNN trains under bfloat16 autocast in channels_last on real Fashion-MNIST.
namespace T = ::ember;
#define MODULE EMBER_MODULE
#include "../../examples/fashion_mnist/net.inc"
#undef MODULE

TEST(Autocast, FashionMnistCnnTrainsInBfloat16ChannelsLast) {
  const std::string root = "/usr/share/datasets/fashion-mnist";
  using data::datasets::MNIST;
  auto train = MNIST(root, MNIST::Mode::kTrain);
  auto test = MNIST(root, MNIST::Mode::kTest);
  const Tensor train_x = ((train.images().narrow(0, 0, 12800) - 0.2860) / 0.3530).contiguous(MemoryFormat::ChannelsLast);
  const Tensor train_y = train.targets().narrow(0, 0, 12800);
  const Tensor test_x = (test.images().narrow(0, 0, 2000) - 0.2860) / 0.3530;
  const Tensor test_y = test.targets().narrow(0, 0, 2000);

  manual_seed(0);
  FashionNet model;
  model->to(MemoryFormat::ChannelsLast);
  optim::Adam opt(model->parameters(), optim::AdamOptions(2e-3));
  // under sanitizers a tenth of the steps: the same code, not the accuracy it reaches
  const int64_t steps = sanitized() ? 20 : 200;
  double first_loss = 0, last_loss = 0;
  for (int64_t i = 0; i < steps; ++i) {
    const Tensor xb = train_x.narrow(0, i * 64, 64), yb = train_y.narrow(0, i * 64, 64);
    Tensor loss;
    {
      AutocastGuard autocast;
      const Tensor logits = model->forward(xb);
      ASSERT_EQ(logits.dtype(), kBFloat16);
      loss = F::cross_entropy(logits, yb);
    }
    opt.zero_grad();
    loss.backward();
    opt.step();
    (i == 0 ? first_loss : last_loss) = loss.item<double>();
  }
  EXPECT_LT(last_loss, first_loss);
  for (const Tensor& p : model->parameters()) {
    EXPECT_EQ(p.dtype(), kFloat);
    ASSERT_TRUE(p.grad().defined());
    EXPECT_EQ(p.grad().dtype(), kFloat);
  }
  model->eval();
  AutocastGuard autocast;
  InferenceMode inference;
  const double accuracy = model->forward(test_x).argmax(1).eq(test_y).to(kFloat).mean().item<double>();
  EXPECT_GT(accuracy, sanitized() ? 0.3 : 0.78);
}

}  // namespace EMBER_UNITY_FILE
