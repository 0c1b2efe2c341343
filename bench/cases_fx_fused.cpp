// The fused pointwise engine (issue 16, docs/fx_fusion.md): y = sigmoid(x * a + b) * tanh(x) + relu(c)
// over 16M float32 elements, as one fx::FusedPointwise against the same chain op by op in Ember and
// in libtorch, and against the time its memory traffic alone takes at the measured triad bandwidth.
#include "ember/fx/fused.h"
#include "torch_check.h"

namespace {

constexpr int64_t k16M = int64_t{16} << 20;
constexpr const char* kLabel = "fx: fused pointwise chain, 16M float32";

using ember::fx::FusedArg;

ember::fx::FusedPointwise chain() {
  auto R = [](int i) { return FusedArg::ref(i); };
  return ember::fx::FusedPointwise(4,
                                   {{"mul", {R(0), R(1)}},
                                    {"add", {R(4), R(2), FusedArg::scalar(1)}},
                                    {"sigmoid", {R(5)}},
                                    {"tanh", {R(0)}},
                                    {"mul", {R(6), R(7)}},
                                    {"relu", {R(3)}},
                                    {"add", {R(8), R(9)}}},
                                   {10});
}

struct Inputs {
  std::vector<ember::Tensor> in;
  std::vector<torch::Tensor> tin;
  Inputs() {
    for (int i = 0; i < 4; ++i) {
      in.push_back(parity::random({k16M}, ember::kFloat, 10 + i));
      tin.push_back(parity::to_torch(in.back()));
    }
  }
  ember::Tensor eager() const { return ember::sigmoid(in[0] * in[1] + in[2]) * ember::tanh(in[0]) + ember::relu(in[3]); }
  torch::Tensor libtorch() const {
    return torch::sigmoid(tin[0] * tin[1] + tin[2]) * torch::tanh(tin[0]) + torch::relu(tin[3]);
  }
};

// Reads four inputs and writes one output.
constexpr double kBytes = 5.0 * sizeof(float) * k16M;

std::string path_note() { return "fused kernel on " + ember::get_cpu_capability(); }

bench::Register fused_vs_eager{{
    .name = "fx_pointwise_chain_16m_fused_vs_eager",
    .label = kLabel,
    .target = 0.33,
    .baseline = bench::Baseline::Ember,
    .run =
        [](const bench::Context& ctx) {
          const Inputs in;
          const auto fused = chain();
          if (!fused.fuses(in.in)) throw bench::CheckFailure("the chain did not take the fused kernel");
          if (!ember::allclose(fused(in.in)[0], in.eager(), 1e-6, 1e-6))
            throw bench::CheckFailure("the fused chain differs from the eager one");
          auto out = bench::time_pair(ctx, {.ember = [&] { (void)fused(in.in); },
                                            .baseline = [&] { (void)in.eager(); },
                                            .min_run_time = 2.0,
                                            .bytes = kBytes});
          out.notes.push_back(path_note());
          return out;
        },
}};

bench::Register fused_vs_memory_limit{{
    .name = "fx_pointwise_chain_16m_vs_memory_limit",
    .label = kLabel,
    .target = 1.3,
    .baseline = bench::Baseline::Ember,
    .run =
        [](const bench::Context& ctx) {
          const Inputs in;
          const auto fused = chain();
          if (!fused.fuses(in.in)) throw bench::CheckFailure("the chain did not take the fused kernel");
          auto out = bench::time_pair(ctx, {.ember = [&] { (void)fused(in.in); }, .baseline = {}, .min_run_time = 2.0, .bytes = kBytes});
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
    .label = kLabel,
    .target = 0.3,
    .run =
        [](const bench::Context& ctx) {
          const Inputs in;
          const auto fused = chain();
          if (!fused.fuses(in.in)) throw bench::CheckFailure("the chain did not take the fused kernel");
          bench::check_close(ctx, fused(in.in)[0], in.libtorch());
          auto out = bench::time_pair(ctx, {.ember = [&] { (void)fused(in.in); },
                                            .baseline = [&] { (void)in.libtorch(); },
                                            .min_run_time = 2.0,
                                            .bytes = kBytes});
          out.notes.push_back(path_note());
          return out;
        },
}};

}  // namespace
