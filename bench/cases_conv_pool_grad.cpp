// Forward plus backward of the Fashion-MNIST CNN's convolutions and pooling (28x28 images, batch
// 64, 1 -> 32 -> 64 channels), the hot path of its training epoch: each side runs the op on
// leaves requiring grad and backpropagates a fixed output gradient.
#include "torch_check.h"

namespace {

namespace F = ember::nn::functional;

constexpr const char* kConvPoolGradLabel = "conv_pool_grad: fwd+bwd, batch 64 float32";

// A seeded leaf requiring grad on both sides (same strides, so channels_last carries over).
struct Leaf {
  ember::Tensor e;
  torch::Tensor t;
  explicit Leaf(const ember::Tensor& x)
      : e(x.detach().requires_grad_()), t(parity::to_torch(x).requires_grad_()) {}
  void clear() {
    e.mutable_grad() = ember::Tensor();
    t.mutable_grad() = torch::Tensor();
  }
};

// conv2d(x, w, b, padding) forward and backward; `input_grad` says whether x requires grad (the
// first layer's input does not).
bench::Outcome conv_fwd_bwd(const bench::Context& ctx, int64_t cin, int64_t cout, int64_t hw, int64_t k,
                            int64_t padding, bool input_grad, ember::MemoryFormat format) {
  constexpr int64_t kN = 64;
  ember::Tensor xv = parity::random({kN, cin, hw, hw}, ember::kFloat, 61).contiguous(format);
  Leaf x(xv), w(parity::random({cout, cin, k, k}, ember::kFloat, 62)), b(parity::random({cout}, ember::kFloat, 63));
  if (!input_grad) {
    x.e = x.e.detach();
    x.t = x.t.detach();
  }
  const int64_t out = hw + 2 * padding - k + 1;
  const ember::Tensor gv = parity::random({kN, cout, out, out}, ember::kFloat, 64).contiguous(format);
  const torch::Tensor gt = parity::to_torch(gv);
  auto run_ember = [&] { ember::conv2d(x.e, w.e, b.e, 1, padding).backward(gv); };
  auto run_torch = [&] { torch::conv2d(x.t, w.t, b.t, 1, padding).backward(gt); };
  run_ember();
  run_torch();
  const parity::Tol tol{1e-4, 4e-5 * static_cast<double>(kN * out * out)};
  bench::check_close(ctx, w.e.grad(), w.t.grad(), tol);
  bench::check_close(ctx, b.e.grad(), b.t.grad(), tol);
  if (input_grad) bench::check_close(ctx, x.e.grad(), x.t.grad(), parity::Tol{1e-4, 4e-5 * cout * k * k});
  return bench::time_pair(ctx, {.ember = [&] { w.clear(), b.clear(), x.clear(), run_ember(); },
                                .baseline = [&] { w.clear(), b.clear(), x.clear(), run_torch(); },
                                .min_run_time = 1.0,
                                .flops = 2.0 * 2.0 * kN * cout * out * out * cin * k * k * (input_grad ? 1.5 : 1.0)});
}

bench::Register conv1_5x5{{
    .name = "conv2d_grad_5x5_1_32_28_b64",
    .label = kConvPoolGradLabel,
    .target = 1.0,
    .run = [](const bench::Context& ctx) { return conv_fwd_bwd(ctx, 1, 32, 28, 5, 0, false, {}); },
}};

bench::Register conv2_3x3{{
    .name = "conv2d_grad_3x3_32_64_28_b64",
    .label = kConvPoolGradLabel,
    .target = 1.0,
    .run = [](const bench::Context& ctx) { return conv_fwd_bwd(ctx, 32, 64, 28, 3, 1, true, {}); },
}};

bench::Register conv2_3x3_cl{{
    .name = "conv2d_grad_3x3_32_64_28_b64_cl",
    .label = kConvPoolGradLabel,
    .target = 1.0,
    .run = [](const bench::Context& ctx) {
      return conv_fwd_bwd(ctx, 32, 64, 28, 3, 1, true, ember::MemoryFormat::ChannelsLast);
    },
}};

bench::Register max_pool_2x2{{
    .name = "max_pool2d_grad_2x2_32_28_b64",
    .label = kConvPoolGradLabel,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          Leaf x(parity::random({64, 32, 28, 28}, ember::kFloat, 71));
          const ember::Tensor gv = parity::random({64, 32, 14, 14}, ember::kFloat, 72);
          const torch::Tensor gt = parity::to_torch(gv);
          auto run_ember = [&] { ember::max_pool2d(x.e, 2).backward(gv); };
          auto run_torch = [&] { torch::max_pool2d(x.t, 2).backward(gt); };
          run_ember();
          run_torch();
          bench::check_close(ctx, x.e.grad(), x.t.grad());
          return bench::time_pair(ctx, {.ember = [&] { x.clear(), run_ember(); },
                                        .baseline = [&] { x.clear(), run_torch(); },
                                        .bytes = 64.0 * 32 * 28 * 28 * 4 * 2.5});
        },
}};

}  // namespace
