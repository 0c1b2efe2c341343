// Optimizer trajectories against libtorch's: every optimizer and option combination runs 100
// steps from the same parameters on the same gradients (those of a fixed quadratic, 0.5 * p^2 /
// 2, plus seeded noise: gradients depend on the trajectory, so drift would grow) and must stay
// within float32 tolerance of libtorch's parameters after every step. The parameter list mixes
// shapes (0-dim, empty, odd sizes), a transposed leaf (the per-tensor path) and a parameter
// without gradient (skipped). Adam/AdamW's fused kernel and multi-tensor path agree too.
// libtorch 1.13's C++ optimizers have no `maximize`: Ember's maximize is checked against
// libtorch minimizing with negated gradients, which is what maximize means.
#include <functional>
#include <memory>

#include "ember/optim.h"
#include "parity/parity.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using parity::Close;
using parity::to_torch;

namespace {

namespace eo = ember::optim;
namespace to = torch::optim;
using EMake = std::function<std::unique_ptr<eo::Optimizer>(std::vector<ember::Tensor>)>;
using TMake = std::function<std::unique_ptr<to::Optimizer>(std::vector<torch::Tensor>)>;

constexpr int kSteps = 100;
const std::vector<std::vector<int64_t>> kShapes = {{5, 3}, {7}, {}, {2, 3, 4}, {0}, {4, 6}, {3}};
constexpr size_t kTransposed = 5;  // kShapes[5] is held transposed
constexpr size_t kNoGrad = 6;      // never gets a gradient

struct Params {
  std::vector<ember::Tensor> e;
  std::vector<torch::Tensor> t;
};
Params make_params(ember::ScalarType dtype) {
  Params p;
  for (size_t i = 0; i < kShapes.size(); ++i) {
    ember::Tensor x = parity::random(kShapes[i], dtype, 100 + i);
    if (i == kTransposed) x = x.t().contiguous().t();
    p.e.push_back(x.detach().requires_grad_());
    p.t.push_back(to_torch(x).detach().requires_grad_());
  }
  return p;
}

// Sets the gradients of step k in both frameworks.
void set_grads(Params& p, int k, bool negate_torch) {
  for (size_t i = 0; i < p.e.size(); ++i) {
    if (i == kNoGrad) continue;
    const ember::Tensor noise = parity::random(kShapes[i], p.e[i].dtype(), 1000 * k + i) * 0.1;
    p.e[i].mutable_grad() = p.e[i].detach() * 0.5 + noise;
    torch::Tensor g = p.t[i].detach() * 0.5 + to_torch(noise);
    p.t[i].mutable_grad() = negate_torch ? -g : g;
  }
}

::testing::AssertionResult same_params(const Params& p, parity::Tol tol) {
  for (size_t i = 0; i < p.e.size(); ++i) {
    auto r = Close(p.e[i], p.t[i].detach(), tol);
    if (!r) return r << " (parameter " << i << ")";
  }
  return ::testing::AssertionSuccess();
}

parity::Tol tol_for(ember::ScalarType t) {
  return t == ember::kDouble ? parity::Tol{1e-10, 1e-12} : parity::Tol{2e-6, 2e-6};
}

void run(const std::string& name, const EMake& make_e, const TMake& make_t, bool negate_torch = false,
         ember::ScalarType dtype = ember::kFloat) {
  SCOPED_TRACE(name);
  Params p = make_params(dtype);
  auto eopt = make_e(p.e);
  auto topt = make_t(p.t);
  for (int k = 0; k < kSteps; ++k) {
    set_grads(p, k, negate_torch);
    eopt->step();
    topt->step();
    ASSERT_TRUE(same_params(p, tol_for(dtype))) << "after step " << k + 1;
  }
}

template <class EO, class EOpts, class TO, class TOpts>
void run_pair(const std::string& name, const EOpts& eo_opts, const TOpts& to_opts, bool negate_torch = false,
              ember::ScalarType dtype = ember::kFloat) {
  run(
      name, [&](std::vector<ember::Tensor> ps) { return std::make_unique<EO>(ps, eo_opts); },
      [&](std::vector<torch::Tensor> ps) { return std::make_unique<TO>(ps, to_opts); }, negate_torch, dtype);
}

}  // namespace

TEST(OptimParity, SGD) {
  run_pair<eo::SGD, eo::SGDOptions, to::SGD, to::SGDOptions>("plain", eo::SGDOptions(0.1), to::SGDOptions(0.1));
  run_pair<eo::SGD, eo::SGDOptions, to::SGD, to::SGDOptions>("momentum", eo::SGDOptions(0.05).momentum(0.9),
                                                             to::SGDOptions(0.05).momentum(0.9));
  run_pair<eo::SGD, eo::SGDOptions, to::SGD, to::SGDOptions>(
      "dampening+decay", eo::SGDOptions(0.05).momentum(0.9).dampening(0.1).weight_decay(0.01),
      to::SGDOptions(0.05).momentum(0.9).dampening(0.1).weight_decay(0.01));
  run_pair<eo::SGD, eo::SGDOptions, to::SGD, to::SGDOptions>(
      "nesterov", eo::SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(0.1),
      to::SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(0.1));
  run_pair<eo::SGD, eo::SGDOptions, to::SGD, to::SGDOptions>(
      "maximize", eo::SGDOptions(0.01).momentum(0.5).maximize(true), to::SGDOptions(0.01).momentum(0.5), true);
}

TEST(OptimParity, Adam) {
  for (bool fused : {false, true}) {
    const std::string f = fused ? " fused" : " foreach";
    run_pair<eo::Adam, eo::AdamOptions, to::Adam, to::AdamOptions>("default" + f, eo::AdamOptions(0.01).fused(fused),
                                                                   to::AdamOptions(0.01));
    run_pair<eo::Adam, eo::AdamOptions, to::Adam, to::AdamOptions>(
        "decay+betas+eps" + f, eo::AdamOptions(0.02).betas({0.8, 0.95}).eps(1e-6).weight_decay(0.1).fused(fused),
        to::AdamOptions(0.02).betas({0.8, 0.95}).eps(1e-6).weight_decay(0.1));
    run_pair<eo::Adam, eo::AdamOptions, to::Adam, to::AdamOptions>(
        "amsgrad" + f, eo::AdamOptions(0.01).amsgrad(true).fused(fused), to::AdamOptions(0.01).amsgrad(true));
    run_pair<eo::Adam, eo::AdamOptions, to::Adam, to::AdamOptions>(
        "maximize" + f, eo::AdamOptions(0.01).maximize(true).fused(fused), to::AdamOptions(0.01), true);
    run_pair<eo::Adam, eo::AdamOptions, to::Adam, to::AdamOptions>(
        "float64" + f, eo::AdamOptions(0.01).amsgrad(true).weight_decay(0.01).fused(fused),
        to::AdamOptions(0.01).amsgrad(true).weight_decay(0.01), false, ember::kDouble);
  }
}

TEST(OptimParity, AdamW) {
  for (bool fused : {false, true}) {
    const std::string f = fused ? " fused" : " foreach";
    run_pair<eo::AdamW, eo::AdamWOptions, to::AdamW, to::AdamWOptions>(
        "default" + f, eo::AdamWOptions(0.01).fused(fused), to::AdamWOptions(0.01));
    run_pair<eo::AdamW, eo::AdamWOptions, to::AdamW, to::AdamWOptions>(
        "amsgrad+decay" + f, eo::AdamWOptions(0.01).amsgrad(true).weight_decay(0.1).fused(fused),
        to::AdamWOptions(0.01).amsgrad(true).weight_decay(0.1));
  }
}

TEST(OptimParity, RMSprop) {
  run_pair<eo::RMSprop, eo::RMSpropOptions, to::RMSprop, to::RMSpropOptions>("default", eo::RMSpropOptions(0.01),
                                                                             to::RMSpropOptions(0.01));
  run_pair<eo::RMSprop, eo::RMSpropOptions, to::RMSprop, to::RMSpropOptions>(
      "centered", eo::RMSpropOptions(0.01).centered(true), to::RMSpropOptions(0.01).centered(true));
  run_pair<eo::RMSprop, eo::RMSpropOptions, to::RMSprop, to::RMSpropOptions>(
      "momentum", eo::RMSpropOptions(0.01).momentum(0.9).alpha(0.9), to::RMSpropOptions(0.01).momentum(0.9).alpha(0.9));
  run_pair<eo::RMSprop, eo::RMSpropOptions, to::RMSprop, to::RMSpropOptions>(
      "centered+momentum+decay", eo::RMSpropOptions(0.005).centered(true).momentum(0.5).weight_decay(0.1).eps(1e-6),
      to::RMSpropOptions(0.005).centered(true).momentum(0.5).weight_decay(0.1).eps(1e-6));
}

TEST(OptimParity, Adagrad) {
  run_pair<eo::Adagrad, eo::AdagradOptions, to::Adagrad, to::AdagradOptions>("default", eo::AdagradOptions(0.1),
                                                                             to::AdagradOptions(0.1));
  run_pair<eo::Adagrad, eo::AdagradOptions, to::Adagrad, to::AdagradOptions>(
      "decays+accumulator", eo::AdagradOptions(0.1).lr_decay(0.01).weight_decay(0.1).initial_accumulator_value(0.1),
      to::AdagradOptions(0.1).lr_decay(0.01).weight_decay(0.1).initial_accumulator_value(0.1));
}

TEST(OptimParity, ParamGroupsWithTheirOwnOptions) {
  run(
      "groups",
      [](std::vector<ember::Tensor> ps) {
        std::vector<eo::OptimizerParamGroup> groups;
        groups.emplace_back(std::vector<ember::Tensor>(ps.begin(), ps.begin() + 3));
        groups.emplace_back(std::vector<ember::Tensor>(ps.begin() + 3, ps.end()),
                            std::make_unique<eo::AdamOptions>(eo::AdamOptions(0.05).amsgrad(true)));
        return std::make_unique<eo::Adam>(std::move(groups), eo::AdamOptions(0.01));
      },
      [](std::vector<torch::Tensor> ps) {
        std::vector<to::OptimizerParamGroup> groups;
        groups.emplace_back(std::vector<torch::Tensor>(ps.begin(), ps.begin() + 3));
        groups.emplace_back(std::vector<torch::Tensor>(ps.begin() + 3, ps.end()),
                            std::make_unique<to::AdamOptions>(to::AdamOptions(0.05).amsgrad(true)));
        return std::make_unique<to::Adam>(std::move(groups), to::AdamOptions(0.01));
      });
}

// A scheduler written against libtorch's LRScheduler (get_lrs() from get_current_lrs() and
// step_count_), compiled against both: warm-up for 3 steps, then decay by 0.8 a step.
#define WARMUP_SCHEDULER(NS)                                                  \
  class WarmupThenDecay : public NS::LRScheduler {                          \
   public:                                                                  \
    explicit WarmupThenDecay(NS::Optimizer& optimizer) : LRScheduler(optimizer) {} \
                                                                            \
   private:                                                                 \
    std::vector<double> get_lrs() override {                                \
      std::vector<double> lrs = get_current_lrs();                          \
      for (double& lr : lrs) lr *= step_count_ < 3 ? 2.0 : 0.8;             \
      return lrs;                                                           \
    }                                                                       \
  };
namespace ember_sched {
WARMUP_SCHEDULER(eo)
}
namespace torch_sched {
WARMUP_SCHEDULER(to)
}
#undef WARMUP_SCHEDULER

TEST(OptimParity, LibtorchStyleSchedulerSubclass) {
  auto ep = ember::zeros({1}).requires_grad_();
  auto tp = torch::zeros({1}).requires_grad_();
  eo::SGD eopt({ep}, eo::SGDOptions(0.01));
  to::SGD topt({tp}, to::SGDOptions(0.01));
  ember_sched::WarmupThenDecay es(eopt);
  torch_sched::WarmupThenDecay ts(topt);
  for (int k = 0; k < 8; ++k) {
    EXPECT_DOUBLE_EQ(eopt.param_groups()[0].options().get_lr(), topt.param_groups()[0].options().get_lr()) << k;
    es.step();
    ts.step();
  }
  EXPECT_DOUBLE_EQ(eopt.param_groups()[0].options().get_lr(), 0.01 * 8 * 0.8 * 0.8 * 0.8 * 0.8 * 0.8);
}

TEST(OptimParity, StepLRMatchesLibtorchStepLR) {
  // libtorch's StepLR counts from its first step() where PyTorch's counts from construction;
  // Ember's StepLR counts as libtorch's (issue 29: step_size 5, gamma 0.5, 20 steps leave 0.0125).
  auto ep = ember::zeros({1}).requires_grad_();
  auto tp = torch::zeros({1}).requires_grad_();
  eo::SGD eopt({ep}, eo::SGDOptions(0.5));
  to::SGD topt({tp}, to::SGDOptions(0.5));
  eo::StepLR es(eopt, 3, 0.5);
  to::StepLR ts(topt, 3, 0.5);
  for (int k = 0; k < 21; ++k) {
    EXPECT_DOUBLE_EQ(eopt.param_groups()[0].options().get_lr(), topt.param_groups()[0].options().get_lr()) << k;
    es.step();
    ts.step();
  }
  eo::SGD eopt5({ep}, eo::SGDOptions(0.1));
  to::SGD topt5({tp}, to::SGDOptions(0.1));
  eo::StepLR es5(eopt5, 5, 0.5);
  to::StepLR ts5(topt5, 5, 0.5);
  for (int k = 0; k < 20; ++k) {
    es5.step();
    ts5.step();
  }
  EXPECT_DOUBLE_EQ(topt5.param_groups()[0].options().get_lr(), 0.0125);
  EXPECT_DOUBLE_EQ(eopt5.param_groups()[0].options().get_lr(), 0.0125);
}

namespace {
// A smooth, non-quadratic objective of two parameters (Rosenbrock's valley in x, a quartic bowl
// in w, and a term coupling them), written once for both frameworks.
template <class T>
T lbfgs_objective(const std::vector<T>& p) {
  const T a = p[0].narrow(0, 0, 1), b = p[0].narrow(0, 1, 1);
  const T rosenbrock = ((1 - a).pow(2) + 10 * (b - a.pow(2)).pow(2)).sum();
  const T bowl = (p[1].pow(4) * 0.1 + (p[1] - 0.5).pow(2)).sum();
  return rosenbrock + bowl + p[0].sum() * p[1].mean();
}

template <class T, class Opt>
T lbfgs_step(Opt& opt, std::vector<T>& params) {
  return opt.step([&] {
    opt.zero_grad();
    T loss = lbfgs_objective(params);
    loss.backward();
    return loss;
  });
}

void run_lbfgs(const std::string& name, const eo::LBFGSOptions& eo_opts, const to::LBFGSOptions& to_opts) {
  SCOPED_TRACE(name);
  const ember::Tensor x0 = ember::tensor({-1.2, 1.0}, ember::kDouble);
  const ember::Tensor w0 = parity::random({3, 4}, ember::kDouble, 7);
  std::vector<ember::Tensor> ep = {x0.clone().requires_grad_(), w0.clone().requires_grad_()};
  std::vector<torch::Tensor> tp = {to_torch(x0).requires_grad_(), to_torch(w0).requires_grad_()};
  eo::LBFGS eopt(ep, eo_opts);
  to::LBFGS topt(tp, to_opts);
  // (A steeper valley, 100 instead of 10, amplifies the rounding differences of the dot products
  // a thousandfold per step until a line search branches differently.)
  const parity::Tol tol{1e-9, 1e-12};
  for (int k = 0; k < 6; ++k) {
    const ember::Tensor el = lbfgs_step(eopt, ep);
    const torch::Tensor tl = lbfgs_step(topt, tp);
    ASSERT_TRUE(Close(el, tl, tol)) << "loss of step " << k + 1;
    for (size_t i = 0; i < ep.size(); ++i)
      ASSERT_TRUE(Close(ep[i].detach(), tp[i].detach(), tol)) << "parameter " << i << " after step " << k + 1;
    const auto& es = static_cast<const eo::LBFGSParamState&>(*eopt.state().at(ep[0].unsafeGetTensorImpl()));
    const auto& ts =
        static_cast<const to::LBFGSParamState&>(*topt.state().at(c10::guts::to_string(tp[0].unsafeGetTensorImpl())));
    ASSERT_EQ(es.func_evals(), ts.func_evals()) << "after step " << k + 1;
    ASSERT_EQ(es.n_iter(), ts.n_iter()) << "after step " << k + 1;
    ASSERT_EQ(es.old_dirs().size(), ts.old_dirs().size()) << "after step " << k + 1;
  }
  // the objective's minimum is near x = (1, 1): both got close to it the same way
  EXPECT_LT(lbfgs_objective(ep).item<double>(), lbfgs_objective(std::vector<ember::Tensor>{x0, w0}).item<double>());
}
}  // namespace

TEST(OptimParity, LBFGS) {
  run_lbfgs("fixed step", eo::LBFGSOptions(0.5), to::LBFGSOptions(0.5));
  run_lbfgs("short history", eo::LBFGSOptions(0.5).history_size(3).max_iter(7),
            to::LBFGSOptions(0.5).history_size(3).max_iter(7));
  run_lbfgs("strong wolfe", eo::LBFGSOptions(1).line_search_fn("strong_wolfe"),
            to::LBFGSOptions(1).line_search_fn("strong_wolfe"));
  run_lbfgs("strong wolfe, short history and eval budget",
            eo::LBFGSOptions(1).line_search_fn("strong_wolfe").history_size(2).max_iter(3).max_eval(4),
            to::LBFGSOptions(1).line_search_fn("strong_wolfe").history_size(2).max_iter(3).max_eval(4));
}

}  // namespace EMBER_UNITY_FILE
