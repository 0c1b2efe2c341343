// The profiler (issue 19, docs/profiler.md): what it costs when off, when on against unprofiled
// Ember, and when on against libtorch's step under libtorch's own profiler.
#include <torch/csrc/autograd/profiler_kineto.h>

#include <optional>

#include "train_models.h"

namespace {

namespace P = ember::profiler;
namespace E = train_models::on_ember;
namespace L = train_models::on_torch;
constexpr const char* kSmallAdd = "profiler: 8-element add";
constexpr const char* kStep = "profiler: 784-256-128-10 Adam step, shapes and memory on";

P::ProfilerOptions step_options() { return P::ProfilerOptions().record_shapes(true).profile_memory(true); }

// With the profiler compiled in, started once and stopped: the 8-element add of add_small_f32,
// whose per-op cost must stay where it was before the profiler existed (its target: 0.25).
bench::Register off_overhead{{
    .name = "profiler_off_overhead_add_small",
    .label = kSmallAdd,
    .target = 0.25,
    .run =
        [](const bench::Context& ctx) {
          const ember::Tensor a = parity::random({8}, ember::kFloat, 1), b = parity::random({8}, ember::kFloat, 2);
          const torch::Tensor ta = parity::to_torch(a), tb = parity::to_torch(b);
          {
            P::profile prof(step_options());
            (void)(a + b);
          }
          bench::check_close(ctx, a + b, ta + tb);
          return bench::time_pair(ctx, {.ember = [&] { (void)(a + b); }, .baseline = [&] { (void)(ta + tb); }});
        },
}};

// The Adam step profiled against the same step unprofiled: a profile records the Ember rounds only
// (started as each round begins, stopped, with its events dropped, as the other side's begins).
bench::Register on_overhead{{
    .name = "profiler_on_overhead_mlp784_adam_step",
    .label = kStep,
    .target = 1.15,
    .baseline = bench::Baseline::Ember,
    .run =
        [](const bench::Context& ctx) {
          E::ReluMlp em;
          L::ReluMlp tm;
          train_models::copy_weights(em, tm);
          train_models::AdamClassifierSteps<E::ReluMlp, L::ReluMlp> s{
              em, tm, parity::random({64, 784}, ember::kFloat, 41), ember::randint(0, 10, {64})};
          {
            P::profile prof(step_options());
            s.check(ctx, parity::Tol{1e-4, 1e-4});  // profiled steps compute the same
          }
          std::optional<P::profile> prof;
          bench::Outcome out = bench::time_pair(ctx, {.ember = [&] { s.ember_step(); },
                                                      .baseline = [&] { s.ember_step(); },
                                                      .ember_enter = [&] { prof.emplace(step_options()); },
                                                      .baseline_enter = [&] { prof.reset(); },
                                                      .settle = 0.05});
          prof.reset();
          return out;
        },
}};

// libtorch's profiler in C++: the kineto entry points (enableProfiler/disableProfiler), CPU
// activity with input shapes and memory, as torch.profiler.profile(record_shapes=True,
// profile_memory=True) sets them.
struct TorchProfiler {
  TorchProfiler() {
    using namespace torch::profiler::impl;
    const ProfilerConfig config(ProfilerState::KINETO, /*report_input_shapes=*/true, /*profile_memory=*/true);
    torch::autograd::profiler::prepareProfiler(config, {ActivityType::CPU});
    torch::autograd::profiler::enableProfiler(config, {ActivityType::CPU});
  }
  ~TorchProfiler() { (void)torch::autograd::profiler::disableProfiler(); }
};

bench::Register on_vs_libtorch{{
    .name = "profiler_on_mlp784_adam_step_vs_libtorch",
    .label = kStep,
    .target = 0.5,
    .run =
        [](const bench::Context& ctx) {
          E::ReluMlp em;
          L::ReluMlp tm;
          train_models::copy_weights(em, tm);
          train_models::AdamClassifierSteps<E::ReluMlp, L::ReluMlp> s{
              em, tm, parity::random({64, 784}, ember::kFloat, 41), ember::randint(0, 10, {64})};
          s.check(ctx, parity::Tol{1e-4, 1e-4});
          std::optional<P::profile> prof;
          std::optional<TorchProfiler> tprof;
          bench::Outcome out = bench::time_pair(ctx, {.ember = [&] { s.ember_step(); },
                                                      .baseline = [&] { s.torch_step(); },
                                                      .ember_enter =
                                                          [&] {
                                                            tprof.reset();
                                                            prof.emplace(step_options());
                                                          },
                                                      .baseline_enter =
                                                          [&] {
                                                            prof.reset();
                                                            tprof.emplace();
                                                          },
                                                      .settle = 0.05});
          prof.reset();
          tprof.reset();
          return out;
        },
}};

}  // namespace
