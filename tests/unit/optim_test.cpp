// Optimizers and LR schedulers: parameter groups, zero_grad, closures, skipped parameters, the
// state dict round trip and its errors, fused against multi-tensor Adam in every float dtype,
// option errors, and each scheduler's lr sequence against PyTorch 1.13's (the numbers below were
// printed by python3-torch: a one-parameter SGD(lr=0.1, momentum=0.9), 12 scheduler steps).
// Trajectories against libtorch are in tests/parity/optim_parity.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <sstream>
#include <string>

#include "ember/ember.h"
#include "ember/torch.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;
namespace eo = ember::optim;

namespace {

std::vector<Tensor> make_params(uint64_t seed, ScalarType dtype = kFloat) {
  Generator g(seed);
  std::vector<Tensor> ps;
  for (auto s : {std::vector<int64_t>{3, 4}, {5}, {}, {2, 0}})
    ps.push_back(randn(s, &g, TensorOptions().dtype(dtype)).requires_grad_());
  return ps;
}
void set_grads(const std::vector<Tensor>& ps, int step) {
  Generator g(1000 + step);
  for (const Tensor& p : ps) p.mutable_grad() = randn(p.sizes(), &g, TensorOptions().dtype(p.dtype()));
}
std::vector<Tensor> clone_params(const std::vector<Tensor>& ps) {
  std::vector<Tensor> out;
  for (const Tensor& p : ps) out.push_back(p.detach().clone().requires_grad_());
  return out;
}
void expect_equal_params(const std::vector<Tensor>& a, const std::vector<Tensor>& b, double tol = 0) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(a[i].allclose(b[i], tol, tol)) << "parameter " << i << "\n" << a[i] << "\n" << b[i];
}

// The lrs a scheduler gives: after construction, then after each of `steps` steps.
template <class Make>
std::vector<double> lr_sequence(const Make& make, int steps = 12, std::vector<double>* momentum = nullptr) {
  std::vector<Tensor> ps = {zeros({1}).requires_grad_()};
  eo::SGD opt(ps, eo::SGDOptions(0.1).momentum(0.9));
  auto sched = make(opt);
  std::vector<double> lrs = {sched->get_last_lr()[0]};
  for (int i = 0; i < steps; ++i) {
    opt.step();
    sched->step();
    lrs.push_back(sched->get_last_lr()[0]);
    EXPECT_EQ(opt.param_groups()[0].options().get_lr(), lrs.back());
    if (momentum) momentum->push_back(static_cast<eo::SGDOptions&>(opt.param_groups()[0].options()).momentum());
  }
  return lrs;
}
void expect_sequence(const std::vector<double>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-12 * std::max(1.0, std::fabs(want[i]))) << what << " at " << i;
}

}  // namespace

TEST(Optim, ParamGroupsTakeDefaultsOrTheirOwnOptions) {
  auto a = make_params(1), b = make_params(2);
  std::vector<eo::OptimizerParamGroup> groups;
  groups.emplace_back(a);
  groups.emplace_back(b, std::make_unique<eo::SGDOptions>(eo::SGDOptions(0.5).momentum(0.9)));
  eo::SGD opt(std::move(groups), eo::SGDOptions(0.1));
  ASSERT_EQ(opt.param_groups().size(), 2u);
  EXPECT_EQ(opt.param_groups()[0].options().get_lr(), 0.1);
  EXPECT_EQ(static_cast<eo::SGDOptions&>(opt.param_groups()[1].options()).momentum(), 0.9);
  EXPECT_EQ(opt.size(), 8u);
  auto c = make_params(3);
  opt.add_param_group(eo::OptimizerParamGroup(c));
  EXPECT_EQ(opt.param_groups()[2].options().get_lr(), 0.1);
  EXPECT_ERROR(opt.add_param_group(eo::OptimizerParamGroup({a[1]})), "add_param_group",
               "more than one parameter group");
  Tensor non_leaf = a[0] * 2;
  EXPECT_ERROR(opt.add_param_group(eo::OptimizerParamGroup({non_leaf})), "add_param_group", "non-leaf");

  // each group moves with its own lr: p -= lr * grad
  auto before = clone_params(a), before_c = clone_params(c);
  set_grads(a, 0);
  set_grads(c, 0);
  opt.step();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i].allclose(before[i] - a[i].grad() * 0.1));
  // b has no gradients: skipped, no state created
  for (const Tensor& p : b) EXPECT_EQ(opt.state().count(p.unsafeGetTensorImpl()), 0u);
  EXPECT_TRUE(c[0].allclose(before_c[0] - c[0].grad() * 0.1));
}

TEST(Optim, StepRunsWithoutRecordingAndTheClosureWithGrad) {
  auto ps = make_params(4);
  eo::Adam opt(ps, eo::AdamOptions(0.1));
  int calls = 0;
  Tensor loss = opt.step([&] {
    ++calls;
    EXPECT_TRUE(is_grad_enabled());
    opt.zero_grad();
    Tensor l = (ps[0] * ps[0]).sum() + ps[1].sum();
    l.backward();
    return l;
  });
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(loss.defined());
  EXPECT_TRUE(ps[0].is_leaf());
  EXPECT_EQ(ps[0].grad_fn(), nullptr);
  EXPECT_TRUE(ps[0].requires_grad());
  EXPECT_FALSE(ps[2].grad().defined());  // never reached by the loss: skipped
  const Tensor untouched = ps[2].detach().clone();
  opt.step();
  EXPECT_TRUE(ps[2].equal(untouched));
  EXPECT_EQ(static_cast<eo::AdamParamState&>(*opt.state().at(ps[0].unsafeGetTensorImpl())).step(), 2);
}

TEST(Optim, ZeroGradSetsToNoneOrZeros) {
  auto ps = make_params(5);
  eo::SGD opt(ps, eo::SGDOptions(0.1));
  set_grads(ps, 0);
  opt.zero_grad(false);
  EXPECT_TRUE(ps[0].grad().defined());
  EXPECT_TRUE(ps[0].grad().equal(zeros({3, 4})));
  opt.zero_grad();
  EXPECT_FALSE(ps[0].grad().defined());
}

TEST(Optim, FusedAdamMatchesMultiTensorAdamInEveryFloatDtype) {
  for (ScalarType t : {kFloat, kDouble, kHalf, kBFloat16}) {
    for (bool amsgrad : {false, true}) {
      for (bool adamw : {false, true}) {
        auto a = make_params(6, t), b = clone_params(a);
        std::unique_ptr<eo::Optimizer> fa, fb;
        if (adamw) {
          fa = std::make_unique<eo::AdamW>(a, eo::AdamWOptions(0.01).amsgrad(amsgrad).fused(true));
          fb = std::make_unique<eo::AdamW>(b, eo::AdamWOptions(0.01).amsgrad(amsgrad));
        } else {
          fa = std::make_unique<eo::Adam>(a, eo::AdamOptions(0.01).amsgrad(amsgrad).weight_decay(0.1).fused(true));
          fb = std::make_unique<eo::Adam>(b, eo::AdamOptions(0.01).amsgrad(amsgrad).weight_decay(0.1));
        }
        for (int k = 0; k < 5; ++k) {
          set_grads(a, k);
          set_grads(b, k);
          fa->step();
          fb->step();
        }
        // float32/float64 differ by FMA contraction only; Half/BFloat16 round the same values
        const double tol = t == kFloat ? 1e-6 : t == kDouble ? 1e-14 : t == kHalf ? 2e-3 : 1.6e-2;
        SCOPED_TRACE(std::string(to_string(t)) + (amsgrad ? " amsgrad" : "") + (adamw ? " adamw" : ""));
        expect_equal_params(a, b, tol);
      }
    }
  }
}

// Caches of derived data (oneDNN's reordered convolution weights) trust the storage's version:
// a step must bump the version of every tensor it writes, parameters and state alike.
TEST(Optim, StepsBumpTheVersionOfEveryTensorTheyWrite) {
  using Make = std::function<std::unique_ptr<eo::Optimizer>(const std::vector<Tensor>&)>;
  const std::vector<std::pair<const char*, Make>> optimizers = {
      {"sgd", [](const auto& p) { return std::make_unique<eo::SGD>(p, eo::SGDOptions(0.1).momentum(0.9)); }},
      {"adam", [](const auto& p) { return std::make_unique<eo::Adam>(p, eo::AdamOptions(0.01).amsgrad(true)); }},
      {"fused adam",
       [](const auto& p) { return std::make_unique<eo::Adam>(p, eo::AdamOptions(0.01).amsgrad(true).fused(true)); }},
      {"fused adamw",
       [](const auto& p) { return std::make_unique<eo::AdamW>(p, eo::AdamWOptions(0.01).amsgrad(true).fused(true)); }},
      {"rmsprop",
       [](const auto& p) {
         return std::make_unique<eo::RMSprop>(p, eo::RMSpropOptions(0.01).momentum(0.9).centered(true));
       }},
      {"adagrad", [](const auto& p) { return std::make_unique<eo::Adagrad>(p, eo::AdagradOptions(0.1)); }},
  };
  for (const auto& [name, make] : optimizers) {
    SCOPED_TRACE(name);
    auto ps = make_params(8);
    auto opt = make(ps);
    set_grads(ps, 0);
    opt->step();  // creates the state
    std::vector<std::pair<std::string, Tensor>> written;
    for (const Tensor& p : ps) {
      if (p.numel() == 0) continue;  // nothing to write
      written.emplace_back("parameter", p);
      for (const eo::StateField& f : opt->state().at(p.unsafeGetTensorImpl())->fields())
        if (f.tensor && f.tensor->defined()) written.emplace_back(f.name, *f.tensor);
    }
    std::vector<int64_t> before;
    for (const auto& w : written) before.push_back(w.second._version());
    set_grads(ps, 1);
    opt->step();
    for (size_t i = 0; i < written.size(); ++i)
      EXPECT_GT(written[i].second._version(), before[i]) << written[i].first << " " << written[i].second.sizes();
  }
}

TEST(Optim, StateDictRoundTrip) {
  auto a = make_params(7);
  eo::Adam opt(a, eo::AdamOptions(0.05).amsgrad(true));
  for (int k = 0; k < 3; ++k) {
    set_grads(a, k);
    opt.step();
  }
  const eo::OptimizerStateDict dict = opt.state_dict();
  EXPECT_TRUE(dict.state.contains("0.exp_avg"));
  EXPECT_TRUE(dict.state.contains("3.max_exp_avg_sq"));
  EXPECT_EQ(dict.state["1.step"].item<int64_t>(), 3);
  EXPECT_EQ(dict.state["1.step"].dtype(), kLong);
  ASSERT_EQ(dict.param_groups.size(), 1u);
  EXPECT_EQ(dict.param_groups[0]["lr"], 0.05);
  EXPECT_EQ(dict.param_groups[0]["amsgrad"], 1.0);
  EXPECT_EQ(dict.param_groups[0]["params"], 4.0);

  auto b = clone_params(a);
  eo::Adam other(b, eo::AdamOptions(0.5));
  other.load_state_dict(dict);
  EXPECT_EQ(other.param_groups()[0].options().get_lr(), 0.05);
  EXPECT_TRUE(static_cast<eo::AdamOptions&>(other.param_groups()[0].options()).amsgrad());
  for (int k = 3; k < 6; ++k) {
    set_grads(a, k);
    set_grads(b, k);
    opt.step();
    other.step();
  }
  expect_equal_params(a, b);
  // the dict holds copies: stepping did not change it
  EXPECT_EQ(dict.state["1.step"].item<int64_t>(), 3);

  // SGD's momentum buffers and RMSprop's averages round-trip too
  auto c = make_params(8), d = clone_params(c);
  eo::RMSprop r1(c, eo::RMSpropOptions(0.01).centered(true).momentum(0.5));
  set_grads(c, 0);
  r1.step();
  eo::RMSprop r2(d, eo::RMSpropOptions(0.01).centered(true).momentum(0.5));
  r2.load_state_dict(r1.state_dict());
  d[0].detach().copy_(c[0].detach());
  d[1].detach().copy_(c[1].detach());
  d[2].detach().copy_(c[2].detach());
  set_grads(c, 1);
  set_grads(d, 1);
  r1.step();
  r2.step();
  expect_equal_params(c, d);
}

TEST(Optim, LoadStateDictErrorsLeaveTheOptimizerUnchanged) {
  auto a = make_params(9);
  eo::Adam opt(a, eo::AdamOptions(0.05));
  set_grads(a, 0);
  opt.step();
  const eo::OptimizerStateDict good = opt.state_dict();

  eo::OptimizerStateDict two_groups = good;
  two_groups.param_groups.push_back(good.param_groups[0]);
  EXPECT_ERROR(opt.load_state_dict(two_groups), "load_state_dict", "different number of parameter groups");

  eo::OptimizerStateDict wrong_count = good;
  wrong_count.param_groups[0].insert_or_assign("params", 3.0);
  EXPECT_ERROR(opt.load_state_dict(wrong_count), "load_state_dict", "doesn't match the size");

  eo::OptimizerStateDict wrong_shape = good;
  wrong_shape.state.insert_or_assign("0.exp_avg", zeros({4, 3}));
  EXPECT_ERROR(opt.load_state_dict(wrong_shape), "load_state_dict", "'0.exp_avg'", "[4, 3]", "[3, 4]");

  eo::OptimizerStateDict extra = good;
  extra.state.insert("7.exp_avg", zeros({1}));
  EXPECT_ERROR(opt.load_state_dict(extra), "load_state_dict", "unexpected key '7.exp_avg'");

  eo::OptimizerStateDict no_lr = good;
  no_lr.param_groups[0].erase("lr");
  EXPECT_ERROR(opt.load_state_dict(no_lr), "load_state_dict", "'lr'");

  wrong_shape.param_groups[0].insert_or_assign("lr", 9.0);
  EXPECT_ANY_THROW(opt.load_state_dict(wrong_shape));
  EXPECT_EQ(opt.param_groups()[0].options().get_lr(), 0.05);
  const auto& s = static_cast<eo::AdamParamState&>(*opt.state().at(a[0].unsafeGetTensorImpl()));
  EXPECT_TRUE(s.exp_avg().equal(good.state["0.exp_avg"]));
  EXPECT_EQ(s.step(), 1);
}

// A channels_last weight (a convolution's, in a model moved to channels_last): Adam's moments are
// laid out as it when made and when loaded, so that it stays on the fused update (which a graph
// capture needs), and that update walks its memory as the multi-tensor path computes it.
TEST(Optim, AdamStateIsLaidOutAsItsParameter) {
  Generator g(21);
  const Tensor w = randn({4, 3, 5, 2}, &g).contiguous(MemoryFormat::ChannelsLast).requires_grad_();
  std::vector<Tensor> a = {w}, b = clone_params(a);
  ASSERT_TRUE(b[0].is_contiguous(MemoryFormat::ChannelsLast));
  eo::Adam fused(a, eo::AdamOptions(0.01).amsgrad(true)), unfused(b, eo::AdamOptions(0.01).amsgrad(true).fused(false));
  for (int k = 0; k < 4; ++k) {
    for (auto* ps : {&a, &b}) {
      Generator gk(100 + k);
      (*ps)[0].mutable_grad() = randn(w.sizes(), &gk).contiguous(MemoryFormat::ChannelsLast);
    }
    fused.step();
    unfused.step();
  }
  expect_equal_params(a, b, 1e-6);  // FMA contraction apart, the same arithmetic
  auto expect_laid_out_as_w = [&](eo::Adam& opt, const Tensor& p) {
    const auto& s = static_cast<const eo::AdamParamState&>(*opt.state().at(p.unsafeGetTensorImpl()));
    EXPECT_EQ(s.exp_avg().strides(), p.strides());
    EXPECT_EQ(s.exp_avg_sq().strides(), p.strides());
    EXPECT_EQ(s.max_exp_avg_sq().strides(), p.strides());
  };
  expect_laid_out_as_w(fused, a[0]);
  // a state dict's contiguous tensors load laid out as the parameter, values unchanged
  eo::OptimizerStateDict dict = fused.state_dict();
  dict.state.insert_or_assign("0.exp_avg", dict.state["0.exp_avg"].contiguous());
  auto c = clone_params(a);
  eo::Adam loaded(c, eo::AdamOptions(0.01));
  loaded.load_state_dict(dict);
  expect_laid_out_as_w(loaded, c[0]);
  const auto& s = static_cast<const eo::AdamParamState&>(*loaded.state().at(c[0].unsafeGetTensorImpl()));
  EXPECT_TRUE(s.exp_avg().equal(dict.state["0.exp_avg"]));
}

TEST(Optim, MixedDtypesAndNonContiguousParameters) {
  std::vector<Tensor> ps = {ones({4}).requires_grad_(), ones({3}, TensorOptions().dtype(kDouble)).requires_grad_(),
                            ones({3, 2}).t().requires_grad_(),
                            ones({5}, TensorOptions().dtype(kBFloat16)).requires_grad_()};
  eo::SGD opt(ps, eo::SGDOptions(0.5).momentum(0.9));
  for (int k = 0; k < 2; ++k) {
    for (const Tensor& p : ps) p.mutable_grad() = ones_like(p);
    opt.step();
  }
  // step 1: p = 1 - 0.5; step 2: buf = 0.9 + 1, p -= 0.5 * 1.9 (BFloat16 rounds 1.9 to 1.8984375)
  for (const Tensor& p : ps) {
    const double want = p.dtype() == kBFloat16 ? 0.5 - 0.5 * 1.8984375 : 1 - 0.5 - 0.95;
    EXPECT_TRUE(p.to(kDouble).allclose(full(p.sizes(), want, TensorOptions().dtype(kDouble)), 1e-6, 1e-6)) << p;
  }
  EXPECT_EQ(ps[1].dtype(), kDouble);
}

TEST(Optim, OptionErrors) {
  auto ps = make_params(10);
  EXPECT_ERROR(eo::SGD(ps, eo::SGDOptions(-1)), "SGD", "Invalid learning rate: -1");
  EXPECT_ERROR(eo::SGD(ps, eo::SGDOptions(0.1).nesterov(true)), "SGD", "Nesterov momentum requires a momentum");
  EXPECT_ERROR(eo::Adam(ps, eo::AdamOptions(0.1).betas({1.0, 0.9})), "Adam", "Invalid beta parameter at index 0");
  EXPECT_ERROR(eo::AdamW(ps, eo::AdamWOptions(0.1).eps(-1)), "AdamW", "Invalid epsilon value");
  EXPECT_ERROR(eo::RMSprop(ps, eo::RMSpropOptions(0.1).alpha(-0.5)), "RMSprop", "Invalid alpha value");
  EXPECT_ERROR(eo::Adagrad(ps, eo::AdagradOptions(0.1).lr_decay(-1)), "Adagrad", "Invalid lr_decay value");
  eo::SGD opt(ps, eo::SGDOptions(0.1));
  static_cast<eo::SGDOptions&>(opt.param_groups()[0].options()).lr(-2);
  set_grads(ps, 0);
  const Tensor before = ps[0].detach().clone();
  EXPECT_ERROR(opt.step(), "SGD", "Invalid learning rate: -2");
  EXPECT_TRUE(ps[0].equal(before));
}

// LBFGS's state is flat vectors, numbers and lists of curvature pairs: a state dict carries them
// all, so a restored optimizer continues exactly as the original.
TEST(Optim, LBFGSStateDictRoundTripAndErrors) {
  auto objective = [](const std::vector<Tensor>& p) { return p[0].pow(4).sum() + ((p[1] - 1).pow(2) * 3).sum(); };
  auto step = [&](eo::LBFGS& opt, std::vector<Tensor>& p) {
    return opt.step([&] {
      opt.zero_grad();
      Tensor loss = objective(p);
      loss.backward();
      return loss;
    });
  };
  auto a = std::vector<Tensor>{full({3}, 2.0, TensorOptions().dtype(kDouble)).requires_grad_(),
                               zeros({2, 2}, TensorOptions().dtype(kDouble)).requires_grad_()};
  eo::LBFGS opt(a, eo::LBFGSOptions(0.8).max_iter(3).history_size(2).line_search_fn("strong_wolfe"));
  EXPECT_EQ(*static_cast<eo::LBFGSOptions&>(opt.defaults()).max_eval(), 3);  // max_iter * 5 / 4
  step(opt, a);
  step(opt, a);
  const eo::OptimizerStateDict dict = opt.state_dict();
  EXPECT_EQ(dict.param_groups[0]["max_iter"], 3.0);
  EXPECT_EQ(dict.param_groups[0]["line_search_fn"], 0.0);  // the index of "strong_wolfe"
  EXPECT_EQ(dict.state["0.d"].numel(), 7);
  EXPECT_TRUE(dict.state.contains("0.old_dirs.1"));
  EXPECT_FALSE(dict.state.contains("1.d"));  // kept on the first parameter only

  auto b = std::vector<Tensor>{a[0].detach().clone().requires_grad_(), a[1].detach().clone().requires_grad_()};
  eo::LBFGS other(b, eo::LBFGSOptions(0.1));
  other.load_state_dict(dict);
  EXPECT_EQ(*static_cast<eo::LBFGSOptions&>(other.param_groups()[0].options()).line_search_fn(), "strong_wolfe");
  for (int k = 0; k < 2; ++k) EXPECT_TRUE(step(opt, a).equal(step(other, b)));
  expect_equal_params(a, b);

  eo::OptimizerStateDict bad_choice = dict;
  bad_choice.param_groups[0].insert_or_assign("line_search_fn", 4.0);
  EXPECT_ERROR(other.load_state_dict(bad_choice), "load_state_dict", "'line_search_fn' holds 4");

  EXPECT_ERROR(eo::LBFGS(std::vector<eo::OptimizerParamGroup>{eo::OptimizerParamGroup({a[0]}),
                                                               eo::OptimizerParamGroup({a[1]})}),
               "LBFGS", "doesn't support per-parameter options");
  EXPECT_ERROR(opt.step(nullptr), "LBFGS", "needs a closure");
  eo::LBFGS backtracking(a, eo::LBFGSOptions().line_search_fn("backtracking"));
  EXPECT_ERROR(step(backtracking, a), "LBFGS", "only 'strong_wolfe' is supported");
}

TEST(Schedulers, MatchPyTorch) {
  using S = std::unique_ptr<eo::LRScheduler>;
  // StepLR counts as libtorch's C++ StepLR: the first step() is PyTorch's epoch 0.
  expect_sequence(lr_sequence([](eo::Optimizer& o) { return S(new eo::StepLR(o, 3, 0.5)); }),
                  {0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.0125, 0.0125, 0.0125}, "StepLR");
  expect_sequence(lr_sequence([](eo::Optimizer& o) {
                    return S(new eo::MultiStepLR(o, {2, 5, 5, 9}, 0.1));
                  }),
                  {0.1, 0.1, 0.01, 0.01, 0.01, 1e-4, 1e-4, 1e-4, 1e-4, 1e-5, 1e-5, 1e-5, 1e-5}, "MultiStepLR");
  expect_sequence(lr_sequence([](eo::Optimizer& o) { return S(new eo::ExponentialLR(o, 0.9)); }),
                  {0.1, 0.09, 0.081, 0.0729, 0.06561, 0.059049, 0.0531441, 0.04782969, 0.043046721, 0.0387420489,
                   0.03486784401, 0.031381059609, 0.028242953648100012},
                  "ExponentialLR");
  expect_sequence(lr_sequence([](eo::Optimizer& o) { return S(new eo::CosineAnnealingLR(o, 5, 0.01)); }),
                  {0.1, 0.09140576474687263, 0.06890576474687263, 0.04109423525312736, 0.018594235253127367, 0.01,
                   0.018594235253127367, 0.04109423525312739, 0.06890576474687267, 0.09140576474687269,
                   0.10000000000000006, 0.09140576474687272, 0.06890576474687268},
                  "CosineAnnealingLR");
  expect_sequence(lr_sequence([](eo::Optimizer& o) { return S(new eo::LinearLR(o, 0.25, 0.9, 4)); }),
                  {0.025, 0.04125, 0.0575, 0.07375, 0.09, 0.09, 0.09, 0.09, 0.09, 0.09, 0.09, 0.09, 0.09}, "LinearLR");
  expect_sequence(
      lr_sequence([](eo::Optimizer& o) {
        return S(new eo::LambdaLR(o, [](int64_t e) { return 1.0 / static_cast<double>(e + 1); }));
      }),
      {0.1, 0.05, 0.1 / 3, 0.025, 0.02, 0.1 / 6, 0.1 / 7, 0.0125, 0.1 / 9, 0.01, 0.1 / 11, 0.1 / 12, 0.1 / 13},
      "LambdaLR");
}

TEST(Schedulers, OneCycleLRAndMomentumCycling) {
  std::vector<double> momentum;
  expect_sequence(
      lr_sequence([](eo::Optimizer& o) { return std::make_unique<eo::OneCycleLR>(o, 1.0, 12); }, 12, &momentum),
      {0.040000000000000036, 0.3497896542195831, 0.8792851591221287, 0.9944154354509117, 0.9330129698414117,
       0.811745653949763, 0.6473789976951033, 0.46263710266697505, 0.28306099820869923, 0.1334775301888306,
       0.03456698742539522, 4e-06, 0.034566987425395164},
      "OneCycleLR cos");
  expect_sequence(momentum,
                  {0.9177302443521267, 0.8625744625914449, 0.8505584586887436, 0.856698729810778, 0.8688255099070633,
                   0.8852622412794547, 0.9037365046793212, 0.9216941869558779, 0.9366525935914912, 0.9465436874322102,
                   0.95, 0.9465436874322102},
                  "OneCycleLR momentum");
  momentum.clear();
  expect_sequence(lr_sequence(
                      [](eo::Optimizer& o) {
                        return std::make_unique<eo::OneCycleLR>(o, 1.0, 12,
                                                                eo::OneCycleLROptions()
                                                                    .anneal_strategy("linear")
                                                                    .three_phase(true)
                                                                    .div_factor(10)
                                                                    .final_div_factor(100)
                                                                    .pct_start(0.25));
                      },
                      12, &momentum),
                  {0.1, 0.55, 1.0, 0.55, 0.1, 0.08585714285714287, 0.07171428571428572, 0.05757142857142858,
                   0.043428571428571434, 0.02928571428571429, 0.015142857142857152, 0.001, -0.013142857142857137},
                  "OneCycleLR linear three_phase");
  expect_sequence(momentum, {0.9, 0.85, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95},
                  "OneCycleLR three_phase momentum");

  // Adam cycles beta1
  std::vector<Tensor> ps = {zeros({1}).requires_grad_()};
  eo::Adam adam(ps, eo::AdamOptions(0.1));
  eo::OneCycleLR sched(adam, 1.0, 12);
  adam.step();
  sched.step();
  EXPECT_NEAR(std::get<0>(static_cast<eo::AdamOptions&>(adam.param_groups()[0].options()).betas()), 0.9177302443521267,
              1e-12);
  for (int i = 1; i < 12; ++i) sched.step();
  EXPECT_ERROR(sched.step(), "OneCycleLR", "Tried to step 13 times", "12");
  EXPECT_ERROR(eo::OneCycleLR(adam, 1.0, 12, eo::OneCycleLROptions().anneal_strategy("cubic")), "OneCycleLR",
               "instead got cubic");
  eo::Adagrad adagrad(ps, eo::AdagradOptions(0.1));
  EXPECT_ERROR(eo::OneCycleLR(adagrad, 1.0, 12), "OneCycleLR", "momentum or beta1");
}

TEST(Schedulers, SequentialLR) {
  std::vector<eo::LRScheduler*> raw;
  std::vector<std::unique_ptr<eo::LRScheduler>> owned;
  expect_sequence(
      lr_sequence([&](eo::Optimizer& o) {
        owned.push_back(std::make_unique<eo::LinearLR>(o, 0.5, 1.0, 3));
        owned.push_back(std::make_unique<eo::ExponentialLR>(o, 0.8));
        owned.push_back(std::make_unique<eo::CosineAnnealingLR>(o, 4));
        return std::make_unique<eo::SequentialLR>(
            o, std::vector<eo::LRScheduler*>{owned[0].get(), owned[1].get(), owned[2].get()},
            std::vector<int64_t>{3, 7});
      }),
      {0.05, 0.06666666666666667, 0.08333333333333333, 0.1, 0.08000000000000002, 0.06400000000000002,
       0.051200000000000016, 0.1, 0.08535533905932738, 0.05, 0.014644660940672627, 0.0, 0.014644660940672622},
      "SequentialLR");
  std::vector<Tensor> ps = {zeros({1}).requires_grad_()};
  eo::SGD opt(ps, eo::SGDOptions(0.1));
  eo::StepLR a(opt, 2);
  EXPECT_ERROR(eo::SequentialLR(opt, {&a}, {3}), "SequentialLR", "one more than the number of milestone");
}

// libtorch's optimizer base as its users' own optimizers see it: state keyed by the parameter's
// TensorImpl printed as a string, the bases' defaults, and the archive forms torch::save uses.
TEST(Optim, LibtorchOptimizerBase) {
  auto a = make_params(9);
  eo::Adam opt(a, eo::AdamOptions(0.05));
  set_grads(a, 0);
  opt.step();
  std::ostringstream printed;
  printed << static_cast<const void*>(a[0].unsafeGetTensorImpl());
  EXPECT_EQ(c10::guts::to_string(a[0].unsafeGetTensorImpl()), printed.str());
  ASSERT_EQ(opt.state().count(c10::guts::to_string(a[0].unsafeGetTensorImpl())), 1u);
  EXPECT_EQ(opt.state().at(printed.str()).get(), opt.state().at(a[0].unsafeGetTensorImpl()).get());
  EXPECT_EQ(&opt.parameters(), &opt.param_groups()[0].params());

  // through a stream: Optimizer::save into an archive, then load into another optimizer
  std::stringstream stream;
  torch::save(opt, stream);
  auto b = clone_params(a);
  eo::Adam other(b, eo::AdamOptions(0.5).amsgrad(true));
  torch::load(other, stream);
  EXPECT_EQ(other.param_groups()[0].options().get_lr(), 0.05);
  EXPECT_FALSE(static_cast<eo::AdamOptions&>(other.param_groups()[0].options()).amsgrad());
  for (int k = 1; k < 4; ++k) {
    set_grads(a, k);
    set_grads(b, k);
    opt.step();
    other.step();
  }
  expect_equal_params(a, b);
  std::stringstream empty_stream;
  torch::serialize::OutputArchive nothing;
  nothing.save_to(empty_stream);
  EXPECT_ERROR(torch::load(other, empty_stream), "Optimizer::load", "no param_groups");

  // the bases' defaults, as libtorch's: overridable, raising when a subclass did not override
  struct Bare : torch::optim::OptimizerCloneableOptions<Bare> {};
  Bare bare;
  EXPECT_ERROR(bare.get_lr(), "get_lr", "not overridden");
  EXPECT_ERROR(bare.set_lr(0.1), "set_lr", "not overridden");
  EXPECT_NE(bare.clone(), nullptr);
  EXPECT_ERROR(torch::optim::OptimizerOptions().clone(), "OptimizerOptions::clone", "OptimizerCloneableOptions");
  EXPECT_ERROR(torch::optim::OptimizerParamState().clone(), "OptimizerParamState::clone");
  // an options class's fields through its default serialize
  torch::serialize::OutputArchive out;
  eo::SGDOptions(0.3).momentum(0.7).nesterov(true).serialize(out);
  std::stringstream sgd_stream;
  out.save_to(sgd_stream);
  torch::serialize::InputArchive in;
  in.load_from(sgd_stream);
  eo::SGDOptions read(1);
  read.serialize(in);
  EXPECT_EQ(read.lr(), 0.3);
  EXPECT_EQ(read.momentum(), 0.7);
  EXPECT_TRUE(read.nesterov());
  // an archive from elsewhere: integers and choices must be whole numbers in range
  auto read_lbfgs = [](const char* key, double value) {
    torch::serialize::OutputArchive bad;
    bad.write(key, torch::IValue(value));
    std::stringstream stream;
    bad.save_to(stream);
    torch::serialize::InputArchive in;
    in.load_from(stream);
    eo::LBFGSOptions lbfgs(1);
    lbfgs.serialize(in);
    return lbfgs;
  };
  EXPECT_EQ(read_lbfgs("max_iter", 7).max_iter(), 7);
  EXPECT_EQ(*read_lbfgs("line_search_fn", 0).line_search_fn(), "strong_wolfe");
  EXPECT_ERROR(read_lbfgs("max_iter", 2.5), "load_state_dict", "'max_iter' is 2.5, not a whole number");
  EXPECT_ERROR(read_lbfgs("max_iter", 1e300), "load_state_dict", "'max_iter' is 1e+300");
  EXPECT_ERROR(read_lbfgs("line_search_fn", 4), "load_state_dict", "'line_search_fn' is 4", "[0, 1)");
  EXPECT_ERROR(read_lbfgs("line_search_fn", -1), "load_state_dict", "'line_search_fn' is -1");
}

TEST(Optim, LibtorchSpellings) {
  // a libtorch program's optimizer code, through ember/torch.h's namespace mapping
  std::vector<torch::Tensor> params = {torch::ones({2}).requires_grad_()};
  torch::optim::SGD opt(params, torch::optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
  params[0].mutable_grad() = torch::ones({2});
  opt.step();
  torch::optim::StepLR sched(opt, 1, 0.5);
  sched.step();  // libtorch's first step is epoch 0
  EXPECT_EQ(opt.param_groups()[0].options().get_lr(), 0.1);
  sched.step();
  EXPECT_EQ(opt.param_groups()[0].options().get_lr(), 0.05);
  at::_foreach_zero_(params);
  EXPECT_TRUE(params[0].equal(torch::zeros({2})));
}

}  // namespace EMBER_UNITY_FILE
