// TorchScript inference: the same archive, exported by python3-torch when the case runs, loaded by
// ember::jit::load and by libtorch's torch::jit::load, each forward under InferenceMode.
#include <torch/script.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "torch_check.h"

namespace {

constexpr const char* kJit = "jit: forward of a loaded TorchScript archive";

const char* kExport = R"PY(
import os, sys, torch, torchvision
out, which = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 32)
        self.fc3 = torch.nn.Linear(32, 4)
    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))
if which == 'mlp':
    torch.jit.trace(MLP().eval(), torch.randn(1, 16)).save(os.path.join(out, 'mlp.pt'))
else:
    model = getattr(torchvision.models, which)().eval()
    torch.jit.trace(model, torch.randn(1, 3, 224, 224)).save(os.path.join(out, which + '.pt'))
)PY";

// Exports `which` (mlp, or a torchvision model's name) into a temp dir and returns the archive's path; the dir is
// removed when the case ends.
class Exported {
 public:
  explicit Exported(const std::string& which)
      : dir_(std::filesystem::temp_directory_path() / ("ember_bench_jit_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
    const std::string script = (dir_ / "export.py").string();
    std::ofstream(script) << kExport;
    const char* env = std::getenv("EMBER_PYTHON");
    const std::string py = env ? env : (std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3");
    const std::string cmd = py + " " + script + " " + dir_.string() + " " + which + " > " + script + ".log 2>&1";
    if (std::system(cmd.c_str()) != 0)
      throw std::runtime_error("exporting " + which + " with python3-torch and torchvision failed; see " + script +
                               ".log");
    path_ = (dir_ / (which + ".pt")).string();
  }
  ~Exported() { std::filesystem::remove_all(dir_); }
  const std::string& path() const { return path_; }

 private:
  std::filesystem::path dir_;
  std::string path_;
};

bench::Outcome forward_pair(const bench::Context& ctx, const std::string& which, std::vector<int64_t> input_shape,
                            parity::Tol tol) {
  const Exported archive(which);
  ember::jit::Module em = ember::jit::load(archive.path());
  torch::jit::Module tm = torch::jit::load(archive.path());
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

bench::Register mlp{{
    .name = "jit_mlp_b1_infer",
    .label = kJit,
    .target = 0.3,
    .run = [](const bench::Context& ctx) { return forward_pair(ctx, "mlp", {1, 16}, parity::Tol{1e-5, 1e-5}); },
}};

bench::Register resnet18{{
    .name = "jit_resnet18_b1_infer_224",
    .label = kJit,
    .target = 0.8,
    .run =
        [](const bench::Context& ctx) {
          return forward_pair(ctx, "resnet18", {1, 3, 224, 224}, parity::Tol{1e-4, 1e-4});
        },
}};

bench::Register mobilenet_v3_large{{
    .name = "jit_mobilenet_v3_large_b1_infer_224",
    .label = kJit,
    .target = 0.8,
    .run =
        [](const bench::Context& ctx) {
          return forward_pair(ctx, "mobilenet_v3_large", {1, 3, 224, 224}, parity::Tol{1e-4, 1e-4});
        },
}};

}  // namespace
