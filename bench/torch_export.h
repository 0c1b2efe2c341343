// Models exported by python3-torch (and torchvision) when a case runs: a TorchScript archive for
// torch::jit::load and, for torchvision's models, the state dict Ember's zoo loads. Written into a
// temp dir removed when the case ends.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace bench {

// argv: out dir, `which` (mlp, or a torchvision model's name), variant: traced (the model traced
// on one 224x224 image), channels_last (weights and the tracing input in channels_last),
// channels_last_autocast (that, traced inside a bfloat16 autocast region) or train
// (traced in training mode on 16 112x112 images: batch norms use and update batch statistics). (A
// trace passed through optimize_for_inference in Python does not load in libtorch 1.13: cases
// that want it call torch::jit::optimize_for_inference after loading.)
inline const char* kTorchExport = R"PY(
import os, sys, torch, torchvision
out, which, variant = sys.argv[1], sys.argv[2], sys.argv[3]
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
    torch.jit.trace(MLP().eval(), torch.randn(1, 16)).save(os.path.join(out, 'archive.pt'))
else:
    model = getattr(torchvision.models, which)().eval()
    # BatchNorms not the identity: a fresh MobileNetV3's logits are ~1e-9, too small to compare.
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    torch.save(model.state_dict(), os.path.join(out, 'state.pt'))
    x = torch.randn(1, 3, 224, 224)
    if variant == 'train':
        model, x = model.train(), torch.randn(16, 3, 112, 112)
    if variant.startswith('channels_last'):
        model, x = model.to(memory_format=torch.channels_last), x.to(memory_format=torch.channels_last)
    if variant == 'channels_last_autocast':
        # the casts of bfloat16 autocast recorded in the trace, for freezing to fold
        with torch.no_grad(), torch.autocast('cpu', dtype=torch.bfloat16, cache_enabled=False):
            torch.jit.trace(model, x).save(os.path.join(out, 'archive.pt'))
    else:
        torch.jit.trace(model, x).save(os.path.join(out, 'archive.pt'))
)PY";

class TorchExport {
 public:
  explicit TorchExport(const std::string& which, const std::string& variant = "traced")
      : dir_(std::filesystem::temp_directory_path() / ("ember_bench_export_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
    const std::string script = (dir_ / "export.py").string();
    std::ofstream(script) << kTorchExport;
    const char* env = std::getenv("EMBER_PYTHON");
    const std::string py = env ? env : (std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3");
    const std::string cmd =
        py + " " + script + " " + dir_.string() + " " + which + " " + variant + " > " + script + ".log 2>&1";
    if (std::system(cmd.c_str()) != 0)
      throw std::runtime_error("exporting " + which + " with python3-torch and torchvision failed; see " + script +
                               ".log");
  }
  ~TorchExport() { std::filesystem::remove_all(dir_); }
  TorchExport(const TorchExport&) = delete;
  TorchExport& operator=(const TorchExport&) = delete;
  // The TorchScript archive.
  std::string archive() const { return (dir_ / "archive.pt").string(); }
  // torchvision models only: the model's state_dict, as torch.save wrote it.
  std::string state_dict() const { return (dir_ / "state.pt").string(); }

 private:
  std::filesystem::path dir_;
};

}  // namespace bench
