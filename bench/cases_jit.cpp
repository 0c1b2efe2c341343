// TorchScript inference: the same archive, exported by python3-torch when the case runs, loaded by
// ember::jit::load and by libtorch's torch::jit::load, each forward under InferenceMode.
#include <torch/script.h>

#include "torch_check.h"
#include "torch_export.h"

namespace {

constexpr const char* kJit = "jit: forward of a loaded TorchScript archive";

bench::Outcome forward_pair(const bench::Context& ctx, const std::string& which, std::vector<int64_t> input_shape,
                            parity::Tol tol) {
  const bench::TorchExport exported(which);
  ember::jit::Module em = ember::jit::load(exported.archive());
  torch::jit::Module tm = torch::jit::load(exported.archive());
  em.eval();
  tm.eval();
  const ember::Tensor x = parity::random(input_shape, ember::kFloat, 71);
  const torch::Tensor tx = parity::to_torch(x);
  std::vector<ember::jit::IValue> einputs{x};
  std::vector<torch::jit::IValue> tinputs{tx};
  {
    ember::InferenceMode eguard;
    c10::InferenceMode tguard;
    bench::check_close(ctx, em.forward(einputs).toTensor(), tm.forward(tinputs).toTensor(), tol);
  }
  return bench::time_pair(ctx, {.ember =
                                    [&] {
                                      ember::InferenceMode guard;
                                      em.forward(einputs);
                                    },
                                .baseline =
                                    [&] {
                                      c10::InferenceMode guard;
                                      tm.forward(tinputs);
                                    }});
}

bench::Register jit_mlp{{
    .name = "jit_mlp_b1_infer",
    .label = kJit,
    .target = 0.3,
    .run = [](const bench::Context& ctx) { return forward_pair(ctx, "mlp", {1, 16}, parity::Tol{1e-5, 1e-5}); },
}};

bench::Register jit_resnet18{{
    .name = "jit_resnet18_b1_infer_224",
    .label = kJit,
    .target = 0.8,
    .run =
        [](const bench::Context& ctx) {
          return forward_pair(ctx, "resnet18", {1, 3, 224, 224}, parity::Tol{1e-4, 1e-4});
        },
}};

bench::Register jit_mobilenet_v3_large{{
    .name = "jit_mobilenet_v3_large_b1_infer_224",
    .label = kJit,
    .target = 0.8,
    .run =
        [](const bench::Context& ctx) {
          return forward_pair(ctx, "mobilenet_v3_large", {1, 3, 224, 224}, parity::Tol{1e-4, 1e-4});
        },
}};

}  // namespace
