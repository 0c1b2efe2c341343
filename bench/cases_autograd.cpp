// Autograd cases: the per-op cost of recording a graph, a 100-op chain with its backward, the
// grad modes on small tensors (InferenceMode against libtorch and against Ember's NoGradGuard),
// and the peak memory of forward + backward through a deep MLP.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "counting_allocator.h"
#include "torch_check.h"

namespace {

constexpr const char* kRecord = "autograd: small tensors";
constexpr const char* kMemory = "autograd: MLP 50x1024 b64";

struct Small {
  ember::Tensor a, b;
  torch::Tensor ta, tb;
  Small()
      : a(parity::random({8}, ember::kFloat, 1)),
        b(parity::random({8}, ember::kFloat, 2)),
        ta(parity::to_torch(a)),
        tb(parity::to_torch(b)) {
    a.requires_grad_();
    ta.requires_grad_();
  }
};

bench::Register mul_record_small_f32{{
    .name = "autograd_mul_small_f32",
    .label = kRecord,
    .target = 0.3,
    .run =
        [](const bench::Context& ctx) {
          const Small in;
          bench::check_close(ctx, (in.a * in.b).detach(), (in.ta * in.tb).detach());
          return bench::time_pair(ctx, {.ember = [&] { (void)(in.a * in.b); },
                                        .baseline = [&] { (void)(in.ta * in.tb); }});
        },
}};

// 200 recorded ops, then a backward through all of them into the leaf's .grad (reset each time).
bench::Register chain_backward_small_f32{{
    .name = "autograd_chain100_backward_small_f32",
    .label = kRecord,
    .target = 0.25,
    .run =
        [](const bench::Context& ctx) {
          const Small in;
          auto ember_step = [&] {
            in.a.mutable_grad() = ember::Tensor();
            ember::Tensor h = in.a;
            for (int i = 0; i < 100; ++i) h = h * 1.0001 + 0.5;
            h.sum().backward();
          };
          auto torch_step = [&] {
            in.ta.mutable_grad().reset();
            torch::Tensor h = in.ta;
            for (int i = 0; i < 100; ++i) h = h * 1.0001 + 0.5;
            h.sum().backward();
          };
          ember_step();
          torch_step();
          bench::check_close(ctx, in.a.grad(), in.ta.grad());
          return bench::time_pair(ctx, {.ember = ember_step, .baseline = torch_step});
        },
}};

bench::Register add_inference_small_f32{{
    .name = "autograd_add_inference_mode_small_f32",
    .label = kRecord,
    .target = 0.25,
    .run =
        [](const bench::Context& ctx) {
          const Small in;
          ember::InferenceMode guard;
          c10::InferenceMode torch_guard;
          bench::check_close(ctx, in.a + in.b, in.ta + in.tb);
          return bench::time_pair(ctx, {.ember = [&] { (void)(in.a + in.b); },
                                        .baseline = [&] { (void)(in.ta + in.tb); }});
        },
}};

// `step` under InferenceMode against the same under NoGradGuard, each guard taken per call.
template <class Step>
bench::Outcome inference_vs_no_grad(const bench::Context& ctx, const Step& step) {
  return bench::time_pair(ctx, {.ember =
                                    [&] {
                                      ember::InferenceMode guard;
                                      step();
                                    },
                                .baseline =
                                    [&] {
                                      ember::NoGradGuard guard;
                                      step();
                                    }});
}

// An add alone: neither mode records anything for it, so the two cost the same; the case shows that
// inference mode adds nothing to a plain op.
bench::Register add_inference_vs_no_grad{{
    .name = "autograd_add_inference_vs_no_grad_small_f32",
    .label = kRecord,
    .target = 1.0,
    .baseline = bench::Baseline::Ember,
    .run =
        [](const bench::Context& ctx) {
          const Small in;
          return inference_vs_no_grad(ctx, [&] { (void)(in.a + in.b); });
        },
}};

// What inference mode skips and no_grad still does: a result's in-place write bumps no version, a
// view of it records no base (under no_grad a view of a normal tensor keeps its base, so that a
// later in-place write in grad mode can raise PyTorch's error). A typical step of inference code:
// an op, an in-place activation, a reshape and a select.
bench::Register step_inference_vs_no_grad{{
    .name = "autograd_step_inference_vs_no_grad_small_f32",
    .label = kRecord,
    .target = 1.0,
    .baseline = bench::Baseline::Ember,
    .run =
        [](const bench::Context& ctx) {
          const Small in;
          return inference_vs_no_grad(ctx, [&] {
            ember::Tensor y = in.a + in.b;
            y.relu_();
            (void)y.view({2, 4}).select(0, 1);
          });
        },
}};

bench::Register mlp_peak_memory{{
    .name = "autograd_mlp50x1024_b64_peak_memory",
    .label = kMemory,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          constexpr int kLayers = 50;
          constexpr int64_t kWidth = 1024, kBatch = 64;
          constexpr double kMB = 1024.0 * 1024.0;
          c10::Allocator* previous = c10::GetCPUAllocator();
          static bench::CountingAllocator counting(previous);  // outlives every tensor it allocated
          c10::SetCPUAllocator(&counting, /*priority=*/100);
          std::vector<ember::Tensor> w;
          std::vector<torch::Tensor> tw;
          for (int i = 0; i < kLayers; ++i) {
            // uniform(-2, 2) scaled to He's std sqrt(2 / width): activations stay O(1) through 50 ReLUs
            w.push_back((parity::random({kWidth, kWidth}, ember::kFloat, 100 + i) * 0.0383).requires_grad_());
            tw.push_back(parity::to_torch(w.back()).requires_grad_());
          }
          const ember::Tensor x = parity::random({kBatch, kWidth}, ember::kFloat, 99);
          const torch::Tensor tx = parity::to_torch(x);

          const size_t ember_before = ember::cpu_allocator::stats().allocated_bytes;
          ember::cpu_allocator::reset_peak_stats();
          {
            ember::Tensor h = x;
            for (const ember::Tensor& wi : w) h = ember::relu(ember::linear(h, wi));
            h.sum().backward();
          }
          const double ember_mb =
              static_cast<double>(ember::cpu_allocator::stats().peak_allocated_bytes - ember_before) / kMB;

          counting.reset_peak();
          const size_t torch_before = counting.live();
          {
            torch::Tensor h = tx;
            for (const torch::Tensor& wi : tw) h = torch::relu(torch::linear(h, wi));
            h.sum().backward();
          }
          const double torch_mb = static_cast<double>(counting.peak() - torch_before) / kMB;
          c10::SetCPUAllocator(previous, /*priority=*/100);

          // The last layer's gradient: earlier ones pass through 50 ReLU masks, where a pre-activation
          // within rounding of 0 may switch sides in one library and not the other.
          bench::check_close(ctx, w.back().grad(), tw.back().grad(), parity::Tol{1e-3, 1e-4});
          bench::Outcome out;
          out.unit = "MB";
          out.ember = ember_mb;
          out.baseline = torch_mb;
          char note[96];
          std::snprintf(note, sizeof note, "peak above the weights: Ember %.1f MB, libtorch %.1f MB", ember_mb,
                        torch_mb);
          out.notes.emplace_back(note);
          return out;
        },
}};

}  // namespace
