// GradScaler (PyTorch's semantics) and its multi-tensor kernels: scaling and unscaling, the
// skipped step and backoff on inf/NaN, growth, state_dict, bad use, and a float16 model trained
// with it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ember/ember.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// A parameter with the gradient `grad` already set.
Tensor param_with_grad(const Tensor& value, const Tensor& grad) {
  Tensor p = value.clone().set_requires_grad(true);
  p.mutable_grad() = grad.clone();
  return p;
}

amp::GradScaler scaler_with(double init_scale, int64_t growth_interval = 2000) {
  return amp::GradScaler(amp::GradScalerOptions().init_scale(init_scale).growth_interval(growth_interval));
}

}  // namespace

TEST(AmpForeach, UnscalesEveryDtypeAndLayoutInOnePass) {
  // Above the kernel's grain (several threads share the list), small, and every float dtype.
  const Tensor big = arange(100000, kFloat), small = tensor({1., -2., 3.}, kFloat);
  std::vector<Tensor> grads = {big * 8, small.to(kDouble) * 8, small.to(kHalf) * 8, small.to(kBFloat16) * 8,
                               (small * 8).view({3, 1}).expand({3, 2}).contiguous().t()};  // non-contiguous
  Tensor found_inf = zeros({1}, kFloat);
  _amp_foreach_non_finite_check_and_unscale_(grads, found_inf, full({1}, 0.125, kFloat));
  EXPECT_EQ(found_inf.item<float>(), 0);
  EXPECT_TRUE(grads[0].equal(big));
  EXPECT_TRUE(grads[1].equal(small.to(kDouble)));
  EXPECT_TRUE(grads[2].equal(small.to(kHalf)));
  EXPECT_TRUE(grads[3].equal(small.to(kBFloat16)));
  EXPECT_TRUE(grads[4].equal(small.view({1, 3}).expand({2, 3})));
}

TEST(AmpForeach, FindsInfAndNanAnywhere) {
  for (const ScalarType dtype : {kFloat, kDouble, kHalf, kBFloat16}) {
    for (const float bad : {kInf, -kInf, std::nanf("")}) {
      SCOPED_TRACE(::testing::Message() << dtype << " " << bad);
      Tensor g = ones({70001}, dtype);
      g[70000].fill_(bad);  // the last element, in the last thread's vector tail
      Tensor clean = ones({5}, dtype);
      Tensor found_inf = zeros({1}, kFloat);
      std::vector<Tensor> grads = {clean, g};
      _amp_foreach_non_finite_check_and_unscale_(grads, found_inf, full({1}, 0.5, kFloat));
      EXPECT_EQ(found_inf.item<float>(), 1);
      EXPECT_EQ(g[0].item<double>(), 0.5);  // unscaled all the same, as PyTorch
      EXPECT_EQ(clean[4].item<double>(), 0.5);
    }
  }
  // found_inf is only ever set: a clean pass leaves a 1 in place.
  Tensor found_inf = ones({1}, kFloat);
  std::vector<Tensor> grads = {ones({4})};
  _amp_foreach_non_finite_check_and_unscale_(grads, found_inf, ones({1}));
  EXPECT_EQ(found_inf.item<float>(), 1);
}

TEST(AmpForeach, BadArguments) {
  Tensor found_inf = zeros({1}, kFloat);
  std::vector<Tensor> ints = {ones({3}), ones({3}, kLong)};
  EXPECT_ERROR(_amp_foreach_non_finite_check_and_unscale_(ints, found_inf, ones({1})),
               "_amp_foreach_non_finite_check_and_unscale_", "floating point", "index 1", "Long");
  EXPECT_TRUE(ints[0].equal(ones({3})));  // checked before anything was written
  std::vector<Tensor> grads = {ones({3})};
  Tensor two = zeros({2}, kFloat), dbl = zeros({1}, kDouble);
  EXPECT_ERROR(_amp_foreach_non_finite_check_and_unscale_(grads, two, ones({1})), "found_inf", "1-element float");
  EXPECT_ERROR(_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, ones({1}, kDouble)), "inv_scale");
  Tensor scale = ones({1}), tracker = zeros({1}, kLong);
  EXPECT_ERROR(_amp_update_scale_(scale, tracker, found_inf, 2, 0.5, 10), "_amp_update_scale_", "growth_tracker");
  EXPECT_ERROR(_amp_update_scale_(dbl, tracker, found_inf, 2, 0.5, 10), "_amp_update_scale_", "current_scale");
}

TEST(AmpUpdateScale, BackoffAndGrowth) {
  Tensor scale = full({1}, 8.0, kFloat), tracker = zeros({1}, kInt);
  const Tensor clean = zeros({1}, kFloat), overflow = ones({1}, kFloat);
  _amp_update_scale_(scale, tracker, clean, 2, 0.5, 3);
  _amp_update_scale_(scale, tracker, clean, 2, 0.5, 3);
  EXPECT_EQ(scale.item<float>(), 8);
  EXPECT_EQ(tracker.item<int>(), 2);
  _amp_update_scale_(scale, tracker, clean, 2, 0.5, 3);
  EXPECT_EQ(scale.item<float>(), 16);
  EXPECT_EQ(tracker.item<int>(), 0);
  _amp_update_scale_(scale, tracker, clean, 2, 0.5, 3);
  _amp_update_scale_(scale, tracker, overflow, 2, 0.5, 3);
  EXPECT_EQ(scale.item<float>(), 8);
  EXPECT_EQ(tracker.item<int>(), 0);
  // growth that would overflow float32 keeps the scale
  Tensor huge = full({1}, 3e38, kFloat);
  _amp_update_scale_(huge, tracker, clean, 2, 0.5, 1);
  EXPECT_EQ(huge.item<float>(), 3e38f);
}

TEST(GradScaler, ScaleAndUnscaleValues) {
  amp::GradScaler scaler;
  EXPECT_TRUE(scaler.is_enabled());
  EXPECT_EQ(scaler.get_scale(), 65536.0);
  const Tensor loss = tensor(1.5, kHalf);
  const Tensor scaled = scaler.scale(loss);
  EXPECT_EQ(scaled.dtype(), kFloat);  // the float32 scale promotes, as in PyTorch
  EXPECT_EQ(scaled.item<double>(), 1.5 * 65536);
  const std::vector<Tensor> both = scaler.scale(std::vector<Tensor>{loss, tensor(2.0)});
  EXPECT_EQ(both[1].item<double>(), 2.0 * 65536);

  const Tensor g = tensor({0.5, -1.0, 3.0}, kFloat);
  Tensor p32 = param_with_grad(zeros({3}), g * 65536), p64 = param_with_grad(zeros({3}, kDouble), g.to(kDouble) * 65536);
  optim::SGD opt({p32, p64}, optim::SGDOptions(1.0));
  scaler.unscale_(opt);
  EXPECT_TRUE(p32.grad().equal(g));
  EXPECT_TRUE(p64.grad().equal(g.to(kDouble)));
  EXPECT_TRUE(scaler.step(opt));  // already unscaled: steps with the true gradients
  EXPECT_TRUE(p32.equal(-g));
  scaler.update();
  EXPECT_EQ(scaler.get_scale(), 65536.0);
}

TEST(GradScaler, OverflowSkipsTheStepAndHalvesTheScale) {
  amp::GradScaler scaler = scaler_with(1024);
  Tensor a = param_with_grad(ones({4}), full({4}, 1024.0)), b = param_with_grad(ones({2}, kHalf), ones({2}, kHalf));
  b.mutable_grad()[1].fill_(kInf);
  optim::SGD opt({a, b}, optim::SGDOptions(0.1));
  EXPECT_FALSE(scaler.step(opt));
  EXPECT_TRUE(a.equal(ones({4})));  // parameters unchanged
  EXPECT_TRUE(b.equal(ones({2}, kHalf)));
  scaler.update();
  EXPECT_EQ(scaler.get_scale(), 512.0);
  EXPECT_EQ(scaler.state_dict()["_growth_tracker"], 0);
  // the next clean iteration steps
  a.mutable_grad().fill_(512.0);
  b.mutable_grad().fill_(512.0);
  EXPECT_TRUE(scaler.step(opt));
  EXPECT_TRUE(a.equal(full({4}, 0.9)));
  scaler.update();
  EXPECT_EQ(scaler.get_scale(), 512.0);
  EXPECT_EQ(scaler.state_dict()["_growth_tracker"], 1);
}

TEST(GradScaler, GrowsAfterGrowthIntervalCleanSteps) {
  amp::GradScaler scaler = scaler_with(16, 3);
  Tensor p = param_with_grad(zeros({2}), ones({2}));
  optim::SGD opt({p}, optim::SGDOptions(0.0));
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(scaler.step(opt));
    scaler.update();
    EXPECT_EQ(scaler.get_scale(), 16.0);
  }
  EXPECT_TRUE(scaler.step(opt));
  scaler.update();
  EXPECT_EQ(scaler.get_scale(), 32.0);
  EXPECT_EQ(scaler.state_dict()["_growth_tracker"], 0);
  scaler.update(4.0);  // an explicit new scale
  EXPECT_EQ(scaler.get_scale(), 4.0);
}

TEST(GradScaler, StateDictRoundTrip) {
  amp::GradScaler a(amp::GradScalerOptions().init_scale(256).growth_factor(4).backoff_factor(0.25).growth_interval(5));
  Tensor p = param_with_grad(zeros({2}), ones({2}));
  optim::SGD opt({p}, optim::SGDOptions(0.0));
  a.step(opt);
  a.update();
  const OrderedDict<std::string, double> dict = a.state_dict();
  EXPECT_EQ(dict.keys(), (std::vector<std::string>{"scale", "growth_factor", "backoff_factor", "growth_interval",
                                                   "_growth_tracker"}));
  EXPECT_EQ(dict["scale"], 256);
  EXPECT_EQ(dict["_growth_tracker"], 1);
  amp::GradScaler b;
  b.load_state_dict(dict);
  EXPECT_EQ(b.get_scale(), 256);
  EXPECT_EQ(b.get_growth_factor(), 4);
  EXPECT_EQ(b.get_backoff_factor(), 0.25);
  EXPECT_EQ(b.get_growth_interval(), 5);
  for (const auto& item : b.state_dict()) EXPECT_EQ(item.value(), dict[item.key()]) << item.key();
  // a disabled scaler saves nothing, and an enabled one refuses that
  amp::GradScaler off(amp::GradScalerOptions().enabled(false));
  EXPECT_TRUE(off.state_dict().is_empty());
  EXPECT_ERROR(b.load_state_dict(off.state_dict()), "load_state_dict", "empty");
  const OrderedDict<std::string, double> partial{{"scale", 2.0}};
  EXPECT_ERROR(b.load_state_dict(partial), "load_state_dict", "growth_factor");
}

TEST(GradScaler, BadUseRaises) {
  amp::GradScaler scaler;
  Tensor p = param_with_grad(zeros({2}), ones({2}));
  optim::SGD opt({p}, optim::SGDOptions(0.1));
  EXPECT_ERROR(scaler.update(), "update", "No inf checks were recorded prior to update.");
  scaler.unscale_(opt);
  EXPECT_ERROR(scaler.unscale_(opt), "unscale_",
               "unscale_() has already been called on this optimizer since the last update().");
  scaler.step(opt);
  EXPECT_ERROR(scaler.step(opt), "step", "step() has already been called since the last update().");
  EXPECT_ERROR(scaler.unscale_(opt), "unscale_", "unscale_() is being called after step().");
  scaler.update();
  scaler.unscale_(opt);  // a new iteration
  scaler.update();

  Tensor q = zeros({2}).set_requires_grad(true);
  q.mutable_grad() = ones({2}, kInt);
  optim::SGD int_opt({q}, optim::SGDOptions(0.1));
  EXPECT_ERROR(scaler.unscale_(int_opt), "unscale_", "floating point", "Int");
  EXPECT_ERROR(amp::GradScaler(amp::GradScalerOptions().growth_factor(1.0)), "GradScaler", "growth_factor");
  EXPECT_ERROR(amp::GradScaler(amp::GradScalerOptions().backoff_factor(1.0)), "GradScaler", "backoff_factor");
  EXPECT_ERROR(amp::GradScaler(amp::GradScalerOptions().growth_interval(0)), "GradScaler", "growth_interval");
}

TEST(GradScaler, DisabledIsAPassThrough) {
  amp::GradScaler scaler(amp::GradScalerOptions().enabled(false));
  EXPECT_FALSE(scaler.is_enabled());
  EXPECT_EQ(scaler.get_scale(), 1.0);
  const Tensor loss = tensor(3.0);
  EXPECT_TRUE(scaler.scale(loss).is_same(loss));
  Tensor p = param_with_grad(zeros({2}), full({2}, kInf));
  optim::SGD opt({p}, optim::SGDOptions(1.0));
  scaler.unscale_(opt);
  scaler.unscale_(opt);
  EXPECT_TRUE(std::isinf(p.grad()[0].item<float>()));  // untouched
  EXPECT_TRUE(scaler.step(opt));                      // steps whatever the gradients
  scaler.update();
}

// A float16 MLP (Ember has no autocast yet, so the parameters themselves are float16) fitting a
// random teacher. Its first iteration overflows: the float16 gradient of loss * 65536 is inf
// (65536 > float16's max 65504), so GradScaler skips it and backs off, then training proceeds.
TEST(GradScaler, TrainsAFloat16Model) {
  manual_seed(0);
  const Tensor x = randn({256, 16});
  nn::Sequential teacher(nn::Linear(16, 32), nn::Tanh(), nn::Linear(32, 1));
  const Tensor y = teacher->forward(x).detach().to(kHalf);
  nn::Sequential model(nn::Linear(16, 64), nn::ReLU(), nn::Linear(64, 1));
  model->to(kHalf);
  const Tensor xh = x.to(kHalf);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  amp::GradScaler scaler;
  double first = 0, last = 0;
  int skipped = 0;
  for (int it = 0; it < 300; ++it) {
    opt.zero_grad();
    const Tensor loss = nn::functional::mse_loss(model->forward(xh), y);
    ASSERT_EQ(loss.dtype(), kHalf);
    scaler.scale(loss).backward();
    skipped += scaler.step(opt) ? 0 : 1;
    scaler.update();
    if (it == 0) first = loss.item<double>();
    last = loss.item<double>();
  }
  EXPECT_GE(skipped, 1);
  EXPECT_LE(skipped, 10);
  EXPECT_LT(scaler.get_scale(), 65536.0);
  EXPECT_LT(last, 0.1 * first) << "first loss " << first << ", last " << last;
}

}  // namespace EMBER_UNITY_FILE
