// ember::fx (issue 16): what running a traced GraphModule costs against eager Ember, and a small
// convnet after optimize_for_inference (conv-bn folded) against eager Ember and eager libtorch.
#include <torch/torch.h>

#include "ember/fx.h"
#include "torch_check.h"

namespace {

constexpr const char* kFx = "fx: traced GraphModule forward";

// 50 x (Linear(128, 128), ReLU), batch 16: the graph has 100 call_module nodes.
bench::Outcome mlp50(const bench::Context& ctx) {
  ember::manual_seed(0);
  ember::nn::Sequential mlp;
  for (int i = 0; i < 50; ++i) {
    mlp->push_back(ember::nn::Linear(128, 128));
    mlp->push_back(ember::nn::ReLU());
  }
  mlp->eval();
  const ember::Tensor x = ember::randn({16, 128});
  auto gm = ember::fx::symbolic_trace(mlp, x);
  {
    ember::InferenceMode guard;
    if (!ember::equal(gm->forward(x), mlp->forward(x)))
      throw bench::CheckFailure(ctx.current.name + ": the GraphModule's result differs from eager's");
  }
  return bench::time_pair(ctx, {.ember =
                                    [&] {
                                      ember::InferenceMode guard;
                                      gm->forward(x);
                                    },
                                .baseline =
                                    [&] {
                                      ember::InferenceMode guard;
                                      mlp->forward(x);
                                    }});
}

// Four conv-bn-relu blocks (3 -> 32 -> 32 -> 64 -> 64 channels), batch 8, 56x56, eval mode.
struct ConvNet {
  ember::nn::Sequential ember_net;
  torch::nn::Sequential torch_net;
  ConvNet() {
    ember::manual_seed(0);
    const int64_t channels[] = {3, 32, 32, 64, 64};
    for (int i = 0; i < 4; ++i) {
      ember_net->push_back(ember::nn::Conv2d(ember::nn::Conv2dOptions(channels[i], channels[i + 1], 3).padding(1)));
      ember_net->push_back(ember::nn::BatchNorm2d(channels[i + 1]));
      ember_net->push_back(ember::nn::ReLU());
      torch_net->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(channels[i], channels[i + 1], 3).padding(1)));
      torch_net->push_back(torch::nn::BatchNorm2d(channels[i + 1]));
      torch_net->push_back(torch::nn::ReLU());
    }
    // Running statistics away from (0, 1), then the same tensors in both.
    for (int i = 0; i < 2; ++i) ember_net->forward(ember::randn({4, 3, 16, 16}));
    ember_net->eval();
    torch_net->eval();
    torch::NoGradGuard no_grad;
    auto es = ember_net->named_parameters();
    for (const auto& b : ember_net->named_buffers()) es.insert(b.key(), b.value());
    for (auto& p : torch_net->named_parameters()) p.value().copy_(parity::to_torch(es[p.key()]));
    for (auto& b : torch_net->named_buffers()) b.value().copy_(parity::to_torch(es[b.key()]));
  }
};

enum class Against { EmberEager, LibTorchEager };

bench::Outcome convnet(const bench::Context& ctx, Against against) {
  ConvNet net;
  const ember::Tensor x = parity::random({8, 3, 56, 56}, ember::kFloat, 5);
  const torch::Tensor tx = parity::to_torch(x);
  auto gm = ember::fx::symbolic_trace(net.ember_net, x);
  ember::fx::optimize_for_inference(*gm);
  {
    ember::InferenceMode eguard;
    c10::InferenceMode tguard;
    bench::check_close(ctx, gm->forward(x), net.torch_net->forward(tx), parity::Tol{1e-4, 1e-4});
  }
  std::function<void()> baseline;
  if (against == Against::EmberEager) {
    baseline = [&] {
      ember::InferenceMode guard;
      net.ember_net->forward(x);
    };
  } else {
    baseline = [&] {
      c10::InferenceMode guard;
      net.torch_net->forward(tx);
    };
  }
  return bench::time_pair(ctx, {.ember =
                                    [&] {
                                      ember::InferenceMode guard;
                                      gm->forward(x);
                                    },
                                .baseline = baseline});
}

bench::Register graphmodule_overhead{{
    .name = "fx_graphmodule_overhead_mlp50",
    .label = kFx,
    .target = 1.05,
    .baseline = bench::Baseline::Ember,
    .run = mlp50,
}};

bench::Register convnet_vs_eager{{
    .name = "fx_convnet_eval_folded_vs_eager",
    .label = kFx,
    .target = 0.8,
    .baseline = bench::Baseline::Ember,
    .run = [](const bench::Context& ctx) { return convnet(ctx, Against::EmberEager); },
}};

bench::Register convnet_vs_libtorch{{
    .name = "fx_convnet_eval_folded_vs_libtorch",
    .label = kFx,
    .target = 0.7,
    .run = [](const bench::Context& ctx) { return convnet(ctx, Against::LibTorchEager); },
}};

}  // namespace
