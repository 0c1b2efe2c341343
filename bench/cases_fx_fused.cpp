// The fused pointwise chain (issue 16, docs/fx_fusion.md): y = sigmoid(x * a + b) * tanh(x) + relu(c)
// over 16M float32 elements, traced and fused by fx::fuse_pointwise into one fx::FusedPointwise, against
// the same chain op by op in Ember and in libtorch, and against the time its memory traffic alone takes
// at the measured triad bandwidth.
#include "ember/fx.h"
#include "torch_check.h"

namespace {

using bench::k16M;
constexpr const char* kFusedChainLabel = "fx: fused pointwise chain, 16M float32";

ember::Tensor eager_chain(const ember::Tensor& x, const ember::Tensor& a, const ember::Tensor& b,
                          const ember::Tensor& c) {
  return ember::sigmoid(x * a + b) * ember::tanh(x) + ember::relu(c);
}

struct ChainInputs {
  std::vector<ember::Tensor> in;
  std::vector<torch::Tensor> tin;
  ChainInputs() {
    for (int i = 0; i < 4; ++i) {
      in.push_back(parity::random({k16M}, ember::kFloat, 10 + i));
      tin.push_back(parity::to_torch(in.back()));
    }
  }
  ember::Tensor eager() const { return eager_chain(in[0], in[1], in[2], in[3]); }
  torch::Tensor libtorch() const {
    return torch::sigmoid(tin[0] * tin[1] + tin[2]) * torch::tanh(tin[0]) + torch::relu(tin[3]);
  }
};

// The chain traced (fx::trace) and fused (fx::fuse_pointwise): one call_module node running the
// engine between the placeholders and the output.
struct Fused {
  std::shared_ptr<ember::fx::GraphModule> gm;
  std::vector<ember::jit::IValue> args;
  explicit Fused(const ChainInputs& in) : gm(ember::fx::trace(eager_chain, in.in[0], in.in[1], in.in[2], in.in[3])) {
    if (ember::fx::fuse_pointwise(*gm) != 1 || gm->graph().size() != 6) {
      throw bench::CheckFailure("fuse_pointwise did not make the chain one node:\n" + gm->code());
    }
    for (const ember::fx::Node* n : gm->graph().nodes()) {
      if (n->op() != ember::fx::OpKind::CallModule) continue;
      const auto& engine = static_cast<ember::fx::FusedPointwiseModuleImpl&>(*gm->submodule(n->target())).chain;
      if (!engine.fuses(in.in)) throw bench::CheckFailure("the chain did not take the fused kernel");
    }
    args.assign(in.in.begin(), in.in.end());
  }
  ember::Tensor operator()() const { return gm->forward(args).toTensor(); }
};

// Reads four inputs and writes one output.
constexpr double kBytes = 5.0 * sizeof(float) * k16M;

std::string path_note() { return "fused kernel on " + ember::get_cpu_capability(); }

bench::Register fused_vs_eager{{
    .name = "fx_pointwise_chain_16m_fused_vs_eager",
    .label = kFusedChainLabel,
    .target = 0.33,
    .baseline = bench::Baseline::Ember,
    .run =
        [](const bench::Context& ctx) {
          const ChainInputs in;
          const Fused fused(in);
          if (!ember::allclose(fused(), in.eager(), 1e-6, 1e-6))
            throw bench::CheckFailure("the fused chain differs from the eager one");
          auto out = bench::time_pair(ctx, {.ember = [&] { (void)fused(); },
                                            .baseline = [&] { (void)in.eager(); },
                                            .min_run_time = 2.0,
                                            .bytes = kBytes});
          out.notes.push_back(path_note());
          return out;
        },
}};

bench::Register fused_vs_memory_limit{{
    .name = "fx_pointwise_chain_16m_vs_memory_limit",
    .label = kFusedChainLabel,
    .target = 1.3,
    .baseline = bench::Baseline::Ember,
    .run =
        [](const bench::Context& ctx) {
          const ChainInputs in;
          const Fused fused(in);
          auto out = bench::time_pair(
              ctx, {.ember = [&] { (void)fused(); }, .baseline = {}, .min_run_time = 2.0, .bytes = kBytes});
          // The baseline: moving the inputs and the output once at the triad bandwidth of this run.
          out.baseline = kBytes / (ctx.limits.triad_gbps * 1e9) * 1e6;
          out.notes.push_back("baseline: 4 inputs + 1 output of 64 MiB at the triad's " +
                              std::to_string(static_cast<int>(ctx.limits.triad_gbps)) + " GB/s");
          out.notes.push_back(path_note());
          return out;
        },
}};

bench::Register fused_vs_libtorch{{
    .name = "fx_pointwise_chain_16m_fused_vs_libtorch",
    .label = kFusedChainLabel,
    .target = 0.3,
    .run =
        [](const bench::Context& ctx) {
          const ChainInputs in;
          const Fused fused(in);
          bench::check_close(ctx, fused(), in.libtorch());
          auto out = bench::time_pair(ctx, {.ember = [&] { (void)fused(); },
                                            .baseline = [&] { (void)in.libtorch(); },
                                            .min_run_time = 2.0,
                                            .bytes = kBytes});
          out.notes.push_back(path_note());
          return out;
        },
}};

}  // namespace
