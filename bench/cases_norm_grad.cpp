// Forward + backward of the normalizations and softmax on the training hot path: batch_norm2d in
// training mode over a CNN's feature maps, layer_norm and softmax over rows, and log_softmax over
// 10 classes. Each call builds the graph and takes the gradients of the input and the affine
// parameters with autograd::grad (no accumulation into .grad on either side).
#include "torch_check.h"

namespace {

namespace F = ember::nn::functional;

constexpr const char* kNormGradLabel = "norm_grad: fwd+bwd float32";

struct FwdBwdInput {
  ember::Tensor e;
  torch::Tensor t;
  explicit FwdBwdInput(const ember::Tensor& tensor, bool requires_grad = true)
      : e(tensor.detach()), t(parity::to_torch(tensor)) {
    if (requires_grad) {
      e.requires_grad_();
      t.requires_grad_();
    }
  }
};

using EFn = std::function<ember::Tensor()>;
using TFn = std::function<torch::Tensor()>;

// Gradients of f's output (against `g`) with respect to `leaves`, on both sides; checks them once.
bench::Outcome fwd_bwd(const bench::Context& ctx, const std::vector<const FwdBwdInput*>& leaves, const FwdBwdInput& g,
                       const EFn& ef, const TFn& tf, parity::Tol tol) {
  ember::autograd::variable_list ex;
  std::vector<torch::Tensor> tx;
  for (const FwdBwdInput* l : leaves) ex.push_back(l->e), tx.push_back(l->t);
  auto ember_grads = [&] { return ember::autograd::grad({ef()}, ex, {g.e}); };
  auto torch_grads = [&] { return torch::autograd::grad({tf()}, tx, {g.t}); };
  const auto eg = ember_grads();
  const auto tg = torch_grads();
  for (size_t i = 0; i < eg.size(); ++i) bench::check_close(ctx, eg[i], tg[i], tol);
  return bench::time_pair(ctx, {.ember = [&] { (void)ember_grads(); },
                                .baseline = [&] { (void)torch_grads(); },
                                .min_run_time = 1.0});
}

bench::Outcome batch_norm2d(const bench::Context& ctx, ember::MemoryFormat format) {
  const FwdBwdInput x(parity::random({64, 64, 28, 28}, ember::kFloat, 51).contiguous(format));
  const FwdBwdInput w(parity::random({64}, ember::kFloat, 52)), b(parity::random({64}, ember::kFloat, 53));
  const FwdBwdInput g(parity::random({64, 64, 28, 28}, ember::kFloat, 54).contiguous(format), false);
  const FwdBwdInput rm(ember::zeros({64}), false), rv(ember::ones({64}), false);
  return fwd_bwd(
      ctx, {&x, &w, &b}, g, [&] { return ember::batch_norm(x.e, w.e, b.e, rm.e, rv.e, true, 0.1, 1e-5); },
      [&] { return torch::batch_norm(x.t, w.t, b.t, rm.t, rv.t, true, 0.1, 1e-5, false); },
      {1e-4, 1e-2});  // weight/bias gradients sum 50K terms
}

bench::Register batch_norm2d_contiguous{{
    .name = "batch_norm2d_train_fwd_bwd_64x64x28x28",
    .label = kNormGradLabel,
    .target = 1.0,
    .run = [](const bench::Context& ctx) { return batch_norm2d(ctx, ember::MemoryFormat::Contiguous); },
}};

bench::Register batch_norm2d_channels_last{{
    .name = "batch_norm2d_train_fwd_bwd_64x64x28x28_cl",
    .label = kNormGradLabel,
    .target = 1.0,
    .run = [](const bench::Context& ctx) { return batch_norm2d(ctx, ember::MemoryFormat::ChannelsLast); },
}};

bench::Register layer_norm_fwd_bwd{{
    .name = "layer_norm_fwd_bwd_4096x1024",
    .label = kNormGradLabel,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          const FwdBwdInput x(parity::random({4096, 1024}, ember::kFloat, 61));
          const FwdBwdInput w(parity::random({1024}, ember::kFloat, 62)), b(parity::random({1024}, ember::kFloat, 63));
          const FwdBwdInput g(parity::random({4096, 1024}, ember::kFloat, 64), false);
          return fwd_bwd(
              ctx, {&x, &w, &b}, g, [&] { return ember::layer_norm(x.e, {1024}, w.e, b.e); },
              [&] { return torch::layer_norm(x.t, {1024}, w.t, b.t); }, {1e-4, 2e-3});
        },
}};

bench::Register softmax_fwd_bwd{{
    .name = "softmax_fwd_bwd_4096x1024",
    .label = kNormGradLabel,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          const FwdBwdInput x(parity::random({4096, 1024}, ember::kFloat, 71));
          const FwdBwdInput g(parity::random({4096, 1024}, ember::kFloat, 72), false);
          return fwd_bwd(
              ctx, {&x}, g, [&] { return ember::softmax(x.e, -1); }, [&] { return torch::softmax(x.t, -1); },
              {1e-4, 1e-5});
        },
}};

bench::Register log_softmax_fwd_bwd{{
    .name = "log_softmax_fwd_bwd_128x10",
    .label = kNormGradLabel,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          const FwdBwdInput x(parity::random({128, 10}, ember::kFloat, 81));
          const FwdBwdInput g(parity::random({128, 10}, ember::kFloat, 82), false);
          return fwd_bwd(
              ctx, {&x}, g, [&] { return ember::log_softmax(x.e, 1); }, [&] { return torch::log_softmax(x.t, 1); },
              {1e-4, 1e-5});
        },
}};

}  // namespace
