// The model zoo (ember::vision::models) against libtorch running the same torchvision model,
// traced in Python and loaded with torch::jit::load; Ember's model loads the traced model's state
// dict. Both forward under InferenceMode.
#include <torch/script.h>

#include <optional>

#include "ember/fx.h"
#include "torch_check.h"
#include "torch_export.h"

namespace {

constexpr const char* kVisionLabel = "vision: zoo models against traced torchvision";

// max |ember - libtorch| <= tol * max |libtorch|.
void check_logits(const bench::Context& ctx, const ember::Tensor& e, const torch::Tensor& t, double tol) {
  const double scale = t.abs().max().item<double>();
  bench::check_close(ctx, e.to(ember::kFloat), t.to(torch::kFloat), parity::Tol{0, tol * scale});
}

// Issue 23: batch 1 against the trace frozen and optimized for inference by libtorch
// (torch::jit::optimize_for_inference: BatchNorms folded into convolutions, oneDNN layouts), Ember's
// model traced by fx and optimized by its counterpart, fx::optimize_for_inference (BatchNorms
// folded, convolutions in channels_last with their ReLU or Hardswish as oneDNN post-ops).
bench::Register mobilenet_v3_large{{
    .name = "mobilenet_v3_large_b1_infer_224",
    .label = kVisionLabel,
    .target = 0.8,
    .run =
        [](const bench::Context& ctx) {
          const bench::TorchExport exported("mobilenet_v3_large");
          auto em = ember::vision::models::mobilenet_v3_large();
          ember::load_state_dict(em, ember::load_torch_checkpoint(exported.state_dict()));
          em->eval();
          torch::jit::Module traced = torch::jit::load(exported.archive());
          traced.eval();
          torch::jit::Module tm = torch::jit::optimize_for_inference(traced);
          const ember::Tensor x0 = parity::random({1, 3, 224, 224}, ember::kFloat, 81);
          std::vector<torch::jit::IValue> tinputs{parity::to_torch(x0)};
          auto gm = ember::fx::symbolic_trace(em, x0);
          ember::fx::optimize_for_inference(*gm);
          auto ember_forward = [&] {
            ember::InferenceMode guard;
            return gm->forward(x0);
          };
          auto torch_forward = [&] {
            c10::InferenceMode guard;
            return tm.forward(tinputs).toTensor();
          };
          check_logits(ctx, ember_forward(), torch_forward(), 1e-4);
          return bench::time_pair(ctx, {.ember = [&] { (void)ember_forward(); },
                                        .baseline = [&] { (void)torch_forward(); }});
        },
}};

// Issue 23: resnet50 at batch 8 under bfloat16 autocast with channels_last weights and input.
// Eager (`deployed` false): Ember's model against libtorch's CPU autocast running the channels_last
// trace. Deployed: the model as each framework prepares it for inference, Ember's traced by fx and
// optimized by fx::optimize_for_inference inside the autocast region (BatchNorms folded, ReLUs and
// residual sums as oneDNN post-ops, the weights' bfloat16 casts made once), libtorch's traced inside
// an autocast region (the casts recorded), frozen and optimized by torch::jit::optimize_for_inference
// (which folds the weights' casts as constants).
bench::Outcome run_resnet50_bf16_cl(const bench::Context& ctx, bool deployed) {
  const auto cl = ember::MemoryFormat::ChannelsLast;
  const bench::TorchExport exported("resnet50", deployed ? "channels_last_autocast" : "channels_last");
  auto em = ember::vision::models::resnet50();
  ember::load_state_dict(em, ember::load_torch_checkpoint(exported.state_dict()));
  em->eval();
  em->to(cl);
  torch::jit::Module tm = torch::jit::load(exported.archive());
  const ember::Tensor x = parity::random({8, 3, 224, 224}, ember::kFloat, 82).contiguous(cl);
  std::vector<torch::jit::IValue> tinputs{parity::to_torch(x).contiguous(torch::MemoryFormat::ChannelsLast)};
  std::shared_ptr<ember::fx::GraphModule> gm;
  if (deployed) {
    tm.eval();
    tm = torch::jit::optimize_for_inference(tm);
    ember::AutocastGuard autocast(ember::kCPU, ember::kBFloat16);
    gm = ember::fx::symbolic_trace(em, x);
    ember::fx::optimize_for_inference(*gm);
  }
  auto ember_forward = [&] {
    ember::InferenceMode guard;
    ember::AutocastGuard autocast(ember::kCPU, ember::kBFloat16);
    return gm ? gm->forward(x) : em->forward(x);
  };
  auto torch_forward = [&] {
    c10::InferenceMode guard;
    std::optional<parity::TorchAutocast> autocast;
    if (!deployed) autocast.emplace();
    return tm.forward(tinputs).toTensor();
  };
  const ember::Tensor out = ember_forward();
  if (out.dtype() != ember::kBFloat16)
    throw bench::CheckFailure(ctx.current.name + ": expected bfloat16 logits under autocast");
  // both round the same values to bfloat16 at the same ops, over 50 layers
  check_logits(ctx, out, torch_forward(), 5e-2);
  return bench::time_pair(
      ctx, {.ember = [&] { (void)ember_forward(); }, .baseline = [&] { (void)torch_forward(); }, .rounds = 3});
}

bench::Register resnet50_bf16_cl{{
    .name = "resnet50_b8_infer_224_bf16_cl",
    .label = kVisionLabel,
    .target = 0.8,
    .needs = bench::Needs::BFloat16Instructions,
    .run = [](const bench::Context& ctx) { return run_resnet50_bf16_cl(ctx, false); },
}};

bench::Register resnet50_bf16_cl_deployed{{
    .name = "resnet50_b8_infer_224_bf16_cl_deployed",
    .label = kVisionLabel,
    .target = 0.8,
    .needs = bench::Needs::BFloat16Instructions,
    .run = [](const bench::Context& ctx) { return run_resnet50_bf16_cl(ctx, true); },
}};

// Issue 23: a training step of resnet18 at batch 16 on 112x112 images (forward in training mode,
// cross entropy, backward, SGD with momentum), against libtorch training the trace made in
// training mode with torch::optim::SGD over its parameters.
bench::Register resnet18_train_step{{
    .name = "resnet18_b16_train_step_112",
    .label = kVisionLabel,
    .target = 0.8,
    .run =
        [](const bench::Context& ctx) {
          const bench::TorchExport exported("resnet18", "train");
          auto em = ember::vision::models::resnet18();
          ember::load_state_dict(em, ember::load_torch_checkpoint(exported.state_dict()));
          em->train();
          torch::jit::Module tm = torch::jit::load(exported.archive());
          tm.train();
          std::vector<torch::Tensor> tparams;
          for (const torch::Tensor& p : tm.parameters()) tparams.push_back(p);
          ember::optim::SGD eopt(em->parameters(), ember::optim::SGDOptions(0.01).momentum(0.9));
          torch::optim::SGD topt(tparams, torch::optim::SGDOptions(0.01).momentum(0.9));
          const ember::Tensor x = parity::random({16, 3, 112, 112}, ember::kFloat, 83);
          const ember::Tensor y = ember::randint(0, 1000, {16});
          const torch::Tensor tx = parity::to_torch(x), ty = parity::to_torch(y);
          auto ember_step = [&] {
            ember::Tensor loss = ember::nn::functional::cross_entropy(em->forward(x), y);
            eopt.zero_grad();
            loss.backward();
            eopt.step();
            return loss;
          };
          auto torch_step = [&] {
            torch::Tensor loss = torch::nn::functional::cross_entropy(tm.forward({tx}).toTensor(), ty);
            topt.zero_grad();
            loss.backward();
            topt.step();
            return loss;
          };
          // the first step's loss: same weights, same batch statistics
          bench::check_close(ctx, ember_step(), torch_step(), parity::Tol{1e-4, 1e-4});
          return bench::time_pair(ctx, {.ember = [&] { (void)ember_step(); },
                                        .baseline = [&] { (void)torch_step(); },
                                        .rounds = 3});
        },
}};

}  // namespace
