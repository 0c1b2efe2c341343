// Optimizer steps over many parameters: 200 parameters of 64x64 float32 with gradients set, one
// step() per call, in Ember (fused and multi-tensor Adam, SGD with momentum) and libtorch
// (torch::optim, a loop of per-parameter ops). Parameters and state move as both sides step;
// each side only ever steps its own copy.
#include <memory>

#include "ember/optim.h"
#include "torch_check.h"

namespace {

constexpr int kParams = 200;
constexpr const char* kOptimLabel = "optim: step over 200 parameters of 64x64";

struct Model {
  std::vector<ember::Tensor> e;
  std::vector<torch::Tensor> t;
  Model() {
    for (int i = 0; i < kParams; ++i) {
      const ember::Tensor p = parity::random({64, 64}, ember::kFloat, 10 + i);
      const ember::Tensor g = parity::random({64, 64}, ember::kFloat, 1000 + i);
      e.push_back(p.clone().requires_grad_());
      e.back().mutable_grad() = g.clone();
      t.push_back(parity::to_torch(p).requires_grad_());
      t.back().mutable_grad() = parity::to_torch(g);
    }
  }
};

// A few steps on both sides, then every parameter must agree.
void check_steps(const bench::Context& ctx, const Model& m, ember::optim::Optimizer& eo, torch::optim::Optimizer& to) {
  for (int k = 0; k < 3; ++k) {
    eo.step();
    to.step();
  }
  for (int i = 0; i < kParams; ++i) bench::check_close(ctx, m.e[i].detach(), m.t[i].detach(), parity::Tol{1e-5, 1e-6});
}

bench::Outcome time_steps(const bench::Context& ctx, ember::optim::Optimizer& eo, torch::optim::Optimizer& to) {
  // reads param, grad, exp_avg, exp_avg_sq and writes three of them (Adam); SGD: param, grad, buffer
  return bench::time_pair(ctx, {.ember = [&] { eo.step(); }, .baseline = [&] { to.step(); }});
}

bench::Outcome adam_case(const bench::Context& ctx, bool fused) {
  Model m;
  ember::optim::Adam eo(m.e, ember::optim::AdamOptions(1e-3).fused(fused));
  torch::optim::Adam to(m.t, torch::optim::AdamOptions(1e-3));
  check_steps(ctx, m, eo, to);
  return time_steps(ctx, eo, to);
}

bench::Register adam_fused{{
    .name = "adam_step_200x64x64_fused",
    .label = kOptimLabel,
    .target = 0.2,
    .run = [](const bench::Context& ctx) { return adam_case(ctx, true); },
}};

bench::Register adam_foreach{{
    .name = "adam_step_200x64x64_foreach",
    .label = kOptimLabel,
    .target = 0.2,
    .run = [](const bench::Context& ctx) { return adam_case(ctx, false); },
}};

bench::Register sgd_momentum{{
    .name = "sgd_momentum_step_200x64x64",
    .label = kOptimLabel,
    .target = std::nullopt,  // the issue sets none for SGD
    .run =
        [](const bench::Context& ctx) {
          Model m;
          ember::optim::SGD eo(m.e, ember::optim::SGDOptions(1e-3).momentum(0.9));
          torch::optim::SGD to(m.t, torch::optim::SGDOptions(1e-3).momentum(0.9));
          check_steps(ctx, m, eo, to);
          return time_steps(ctx, eo, to);
        },
}};

}  // namespace
