// Issue 17: static workloads captured once and replayed (ember::graphs, docs/graphs.md) against
// the same work run eagerly, in Ember and in libtorch. Each case first checks that the replays
// compute what eager steps compute (bit for bit against Ember, within the parity tolerances
// against libtorch); its notes give the replay's time against the sum of its steps' own times
// (the rest is the replay loop) and the graph's pool against the eager step's peak memory.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "ember/graphs.h"
#include "train_models.h"

namespace {

namespace E = train_models::on_ember;
namespace L = train_models::on_torch;
namespace G = ember::graphs;
constexpr const char* kGraphsLabel = "graphs: captured step replayed";

bool bitwise_equal(const ember::Tensor& a, const ember::Tensor& b) {
  const ember::Tensor ca = a.detach().contiguous(), cb = b.detach().contiguous();
  return ca.sizes().equals(cb.sizes()) && ca.dtype() == cb.dtype() &&
         std::memcmp(ca.data_ptr(), cb.data_ptr(), static_cast<size_t>(ca.numel()) * ca.element_size()) == 0;
}

template <class M>
void check_bitwise(const bench::Context& ctx, const M& a, const M& b) {
  const auto pa = a->parameters(), pb = b->parameters();
  for (size_t i = 0; i < pa.size(); ++i)
    if (!bitwise_equal(pa[i], pb[i]))
      throw bench::CheckFailure(ctx.current.name + ": parameter " + std::to_string(i) +
                                " after the replays differs from the eager steps'");
}

template <class M>
void copy_ember_parameters(const M& from, M& to) {
  ember::NoGradGuard no_grad;
  const auto src = from->parameters();
  auto dst = to->parameters();
  for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
}

// The most bytes an eager call holds at once beyond what was allocated before it (every block
// the caching allocator hands out and takes back, by size class, as its memory observer sees them).
int64_t g_live = 0, g_peak = 0;
void observe(const void*, int64_t bytes) {
  g_live += bytes;
  g_peak = std::max(g_peak, g_live);
}
size_t eager_peak_bytes(const std::function<void()>& f) {
  namespace A = ember::cpu_allocator;
  f();
  g_live = g_peak = 0;
  A::set_memory_observer(&observe);
  f();
  A::set_memory_observer(nullptr);
  return static_cast<size_t>(g_peak);
}

// The notes every case prints: the steps' own times against the replay, memory.
void add_notes(bench::Outcome& out, G::Graph& g, size_t eager_peak) {
  const std::vector<double> steps = g.step_times(200);
  const double sum_us = std::accumulate(steps.begin(), steps.end(), 0.0) * 1e6;
  const G::GraphStats st = g.stats();
  char note[256];
  std::snprintf(note, sizeof note,
                "%zu steps (%zu direct kernels, %zu op calls; %zu views skipped); their own times sum to %.2f us "
                "(replay overhead %.2f us)",
                st.kernel_steps + st.call_steps, st.kernel_steps, st.call_steps, st.skipped, sum_us,
                out.ember - sum_us);
  out.notes.emplace_back(note);
  std::snprintf(note, sizeof note, "pool %.1f KB in %zu blocks (%zu allocations reused); eager step peak %.1f KB",
                st.pool_bytes / 1024.0, st.pool_blocks, st.reused_allocations, eager_peak / 1024.0);
  out.notes.emplace_back(note);
}

// The tiny MLP's SGD step (16-16-16-1, batch 8), captured on one model and run eagerly on a twin.
struct TanhSgd {
  E::TanhMlp graphed, eager;
  ember::Tensor x = parity::random({8, 16}, ember::kFloat, 31), y = parity::random({8, 1}, ember::kFloat, 32);
  ember::optim::SGD gopt{graphed->parameters(), ember::optim::SGDOptions(0.01)};
  ember::optim::SGD eopt{eager->parameters(), ember::optim::SGDOptions(0.01)};
  G::Graph g;
  TanhSgd() {
    copy_ember_parameters(eager, graphed);
    step(graphed, gopt);  // warm-up
    {
      G::GraphCapture capture(g);
      step(graphed, gopt);
    }
  }
  void step(E::TanhMlp& m, ember::optim::SGD& opt) {
    opt.zero_grad();
    ember::nn::functional::mse_loss(m(x), y).backward();
    opt.step();
  }
  void eager_step() { step(eager, eopt); }
};

bench::Register mlp16_vs_eager{{
    .name = "graph_replay_train_step_mlp16_tanh_sgd",
    .label = kGraphsLabel,
    .target = 0.3,
    .baseline = bench::Baseline::Ember,
    .run =
        [](const bench::Context& ctx) {
          TanhSgd s;
          for (int i = 0; i < 2; ++i) s.eager_step();  // the graphed model's warm-up and captured steps
          for (int i = 0; i < 5; ++i) s.g.replay(), s.eager_step();
          check_bitwise(ctx, s.graphed, s.eager);
          bench::Outcome out = bench::time_pair(ctx, {.ember = [&] { s.g.replay(); }, .baseline = [&] { s.eager_step(); }});
          add_notes(out, s.g, eager_peak_bytes([&] { s.eager_step(); }));
          return out;
        },
}};

bench::Register mlp16_vs_libtorch{{
    .name = "graph_replay_train_step_mlp16_vs_libtorch",
    .label = kGraphsLabel,
    .target = 0.06,
    .run =
        [](const bench::Context& ctx) {
          TanhSgd s;
          L::TanhMlp tm;
          train_models::copy_weights(s.graphed, tm);
          const torch::Tensor tx = parity::to_torch(s.x), ty = parity::to_torch(s.y);
          torch::optim::SGD topt(tm->parameters(), torch::optim::SGDOptions(0.01));
          auto tstep = [&] {
            topt.zero_grad();
            torch::nn::functional::mse_loss(tm(tx), ty).backward();
            topt.step();
          };
          for (int i = 0; i < 3; ++i) s.g.replay(), tstep();
          train_models::check_same_parameters(ctx, s.graphed, tm, parity::Tol{1e-5, 1e-5});
          bench::Outcome out = bench::time_pair(ctx, {.ember = [&] { s.g.replay(); }, .baseline = tstep});
          add_notes(out, s.g, eager_peak_bytes([&] { s.eager_step(); }));
          return out;
        },
}};

// 784-256-128-10 at batch 64, cross-entropy, fused Adam.
bench::Register mlp784_adam{{
    .name = "graph_replay_train_step_mlp784_adam",
    .label = kGraphsLabel,
    .target = 0.9,
    .baseline = bench::Baseline::Ember,
    .run =
        [](const bench::Context& ctx) {
          E::ReluMlp graphed, eager;
          copy_ember_parameters(eager, graphed);
          const ember::Tensor x = parity::random({64, 784}, ember::kFloat, 41), y = ember::randint(0, 10, {64});
          ember::optim::Adam gopt(graphed->parameters(), ember::optim::AdamOptions(1e-3));
          ember::optim::Adam eopt(eager->parameters(), ember::optim::AdamOptions(1e-3));
          auto step = [&](E::ReluMlp& m, ember::optim::Adam& opt) {
            opt.zero_grad();
            ember::nn::functional::cross_entropy(m(x), y).backward();
            opt.step();
          };
          step(graphed, gopt);
          G::Graph g;
          {
            G::GraphCapture capture(g);
            step(graphed, gopt);
          }
          for (int i = 0; i < 2; ++i) step(eager, eopt);
          for (int i = 0; i < 3; ++i) g.replay(), step(eager, eopt);
          check_bitwise(ctx, graphed, eager);
          bench::Outcome out = bench::time_pair(
              ctx, {.ember = [&] { g.replay(); }, .baseline = [&] { step(eager, eopt); }, .min_run_time = 2.0});
          add_notes(out, g, eager_peak_bytes([&] { step(eager, eopt); }));
          return out;
        },
}};

// That MLP's forward at batch 1 in inference mode.
bench::Register mlp784_infer{{
    .name = "graph_replay_infer_mlp784_b1",
    .label = kGraphsLabel,
    .target = 0.4,
    .baseline = bench::Baseline::Ember,
    .run =
        [](const bench::Context& ctx) {
          E::ReluMlp m;
          m->eval();
          ember::InferenceMode inference;
          ember::Tensor static_x = parity::random({1, 784}, ember::kFloat, 43);
          const ember::Tensor x = static_x.clone();
          G::Graph g;
          ember::Tensor out;
          {
            G::GraphCapture capture(g);
            out = m(static_x);
          }
          static_x.copy_(parity::random({1, 784}, ember::kFloat, 44));
          g.replay();
          if (!bitwise_equal(out, m(static_x)))
            throw bench::CheckFailure(ctx.current.name + ": the replayed forward differs from the eager one");
          bench::Outcome o =
              bench::time_pair(ctx, {.ember = [&] { g.replay(); }, .baseline = [&] { (void)m(static_x); }});
          add_notes(o, g, eager_peak_bytes([&] { (void)m(static_x); }));
          return o;
        },
}};

}  // namespace
