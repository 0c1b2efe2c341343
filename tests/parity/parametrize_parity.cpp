// Parametrizations against PyTorch. libtorch 1.13's C++ API has none, so (1) libtorch computes
// each parametrization by hand, as torch/nn/utils/parametrizations.py does, from the same original
// tensors, and both sides' outputs and original gradients are compared; (2) Debian's python3-torch
// registers the real parametrizations, writes the state dicts and outputs, and Ember loads them.
#include <cstdlib>

#include "parity/parity.h"
#include "unit/temp_dir.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using parity::Close;
using parity::Tol;
namespace enn = ember::nn;
namespace PS = ember::nn::utils::parametrizations;
namespace tF = torch::nn::functional;

namespace {

torch::Tensor T(const ember::Tensor& e) { return parity::to_torch(e); }

const Tol kTol{1e-5, 1e-5};

// A Linear(in, out) whose weight is parametrized by `param`, and a loss whose gradient reaches
// the originals; libtorch's `weight(originals)` builds the same weight by hand.
struct Case {
  const char* name;
  int64_t in, out;
  std::function<void(enn::Linear&)> param;
  std::function<torch::Tensor(const std::vector<torch::Tensor>& originals, const enn::Linear&)> weight;
};

std::vector<ember::Tensor> originals_of(const enn::Linear& linear) {
  const auto list = linear->parametrizations["weight"];
  return list->original.defined() ? std::vector<ember::Tensor>{list->original} : list->originals;
}

torch::Tensor buffer(const enn::Linear& linear, const std::string& name) {
  return T(linear->named_buffers()["parametrizations.weight.0." + name].detach());
}

torch::Tensor skew(const torch::Tensor& X, int64_t n, int64_t k) {
  torch::Tensor L = X.tril();
  if (n != k) L = torch::cat({L, torch::zeros({n, n - k}, L.options())}, -1);
  return L - L.mT();
}

TEST(ParametrizeParity, OutputsAndOriginalGradientsMatchByHandLibtorch) {
  const std::vector<Case> cases = {
      {"orthogonal matrix_exp", 5, 5, [](enn::Linear& l) { PS::orthogonal(l); },
       [](const std::vector<torch::Tensor>& o, const enn::Linear& l) {
         return buffer(l, "base").mm(torch::matrix_exp(skew(o[0], 5, 5)));
       }},
      {"orthogonal cayley 6x3", 3, 6, [](enn::Linear& l) { PS::orthogonal(l, "weight", std::string("cayley")); },
       [](const std::vector<torch::Tensor>& o, const enn::Linear& l) {
         const torch::Tensor A = skew(o[0], 6, 3);
         const torch::Tensor I = torch::eye(6, A.options());
         const torch::Tensor Q = torch::linalg_solve(torch::add(I, A, -0.5), torch::add(I, A, 0.5));
         return buffer(l, "base").mm(Q.narrow(-1, 0, 3));
       }},
      {"orthogonal householder 3x6, no trivialization", 6, 3,
       [](enn::Linear& l) { PS::orthogonal(l, "weight", std::string("householder"), false); },
       [](const std::vector<torch::Tensor>& o, const enn::Linear&) {
         const torch::Tensor X = o[0].mT();
         const torch::Tensor A = X.tril(-1);
         const torch::Tensor tau = 2. / (1. + (A * A).sum(-2));
         const torch::Tensor Q = torch::linalg_householder_product(A, tau) * X.diagonal(0, -2, -1).to(torch::kInt).unsqueeze(-2);
         return Q.mT();
       }},
      {"weight_norm", 4, 3, [](enn::Linear& l) { PS::weight_norm(l); },
       [](const std::vector<torch::Tensor>& o, const enn::Linear&) { return torch::_weight_norm(o[1], o[0], 0); }},
      {"spectral_norm (eval)", 6, 5,
       [](enn::Linear& l) {
         PS::spectral_norm(l);
         l->eval();
       },
       [](const std::vector<torch::Tensor>& o, const enn::Linear& l) {
         return o[0] / torch::vdot(buffer(l, "_u"), torch::mv(o[0], buffer(l, "_v")));
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ember::manual_seed(11);
    enn::Linear linear(c.in, c.out);
    c.param(linear);
    const ember::Tensor x = parity::random({4, c.in}, ember::kFloat, 12);
    ember::Tensor y = linear(x);
    y.pow(2).sum().backward();

    std::vector<torch::Tensor> originals;
    for (const ember::Tensor& o : originals_of(linear)) originals.push_back(T(o.detach()).requires_grad_());
    const torch::Tensor w = c.weight(originals, linear);
    const torch::Tensor ty = tF::linear(T(x), w, T(linear->bias.detach()));
    ty.pow(2).sum().backward();
    EXPECT_TRUE(Close(linear->weight.detach(), w.detach(), kTol));
    EXPECT_TRUE(Close(y.detach(), ty.detach(), kTol));
    const auto ours = originals_of(linear);
    for (size_t i = 0; i < ours.size(); ++i) EXPECT_TRUE(Close(ours[i].grad(), originals[i].grad(), {1e-4, 1e-4}));
  }
}

TEST(ParametrizeParity, SpectralNormPowerIterationMatches) {
  ember::manual_seed(13);
  enn::Linear linear(7, 5);
  PS::spectral_norm(linear, "weight", /*n_power_iterations=*/3);
  const ember::Tensor W = linear->parametrizations["weight"]->original.detach();
  torch::Tensor u = buffer(linear, "_u"), v = buffer(linear, "_v");
  {
    ember::NoGradGuard no_grad;
    linear->parametrizations["weight"]->original.mul_(1.25);  // stale: the next use iterates 3 times
  }
  const ember::Tensor w = linear->weight.detach();
  const torch::Tensor tw = T(W);
  const auto unit = tF::NormalizeFuncOptions().dim(0).eps(1e-12);
  for (int i = 0; i < 3; ++i) {
    u = tF::normalize(torch::mv(tw, v), unit);
    v = tF::normalize(torch::mv(tw.t(), u), unit);
  }
  EXPECT_TRUE(Close(linear->named_buffers()["parametrizations.weight.0._u"], u, kTol));
  EXPECT_TRUE(Close(w, tw / torch::vdot(u, torch::mv(tw, v)), kTol));
}

// ---- state dicts written by PyTorch -------------------------------------------------------------

const char* kScript = R"PY(
import sys, torch
from torch.nn.utils import parametrize, parametrizations as P
torch.manual_seed(0)

class _WeightNorm(torch.nn.Module):  # PyTorch 2.x's torch.nn.utils.parametrizations.weight_norm
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim
    def forward(self, weight_g, weight_v):
        return torch._weight_norm(weight_v, weight_g, self.dim)
    def right_inverse(self, weight):
        return torch.norm_except_dim(weight, 2, self.dim), weight

out = {}
def add(name, module, x, train=False):
    module.double().eval()
    for k, v in module.state_dict().items():
        out[name + '/' + k] = v.clone()
    out[name + '//input'] = x
    with torch.no_grad():
        out[name + '//eval'] = module(x)
        if train:
            module.train()
            out[name + '//train'] = module(x)

x = torch.randn(3, 6, dtype=torch.float64)
add('orth_exp', P.orthogonal(torch.nn.Linear(6, 6).double()), x)
add('orth_cayley', P.orthogonal(torch.nn.Linear(6, 4).double(), orthogonal_map='cayley'), x)
add('orth_householder', P.orthogonal(torch.nn.Linear(6, 4).double()), x)
add('orth_householder_plain', P.orthogonal(torch.nn.Linear(6, 4).double(), use_trivialization=False), x)
add('spectral', P.spectral_norm(torch.nn.Linear(6, 5).double()), x, train=True)
add('spectral_conv', P.spectral_norm(torch.nn.Conv2d(2, 3, 3).double()), torch.randn(1, 2, 5, 5, dtype=torch.float64), train=True)
wn = torch.nn.Linear(6, 4).double()
parametrize.register_parametrization(wn, 'weight', _WeightNorm(0), unsafe=True)
add('weight_norm', wn, x)
chain = P.orthogonal(torch.nn.Linear(6, 6).double())
P.spectral_norm(chain)
add('chain', chain, x, train=True)
add('classic_weight_norm', torch.nn.utils.weight_norm(torch.nn.Linear(6, 4).double()), x)
add('classic_spectral', torch.nn.utils.spectral_norm(torch.nn.Linear(6, 5).double()), x, train=True)
torch.save(out, sys.argv[1])
)PY";

const ember::OrderedDict<std::string, ember::Tensor>& pytorch_file() {
  static const auto dict = [] {
    const TempDir dir("parametrize_parity");
    write_bytes(dir.file("write.py"), kScript);
    const std::string cmd =
        python() + " " + dir.file("write.py") + " " + dir.file("sd.pt") + " > " + dir.file("log") + " 2>&1";
    EMBER_CHECK(run_python_in(cmd, dir.file("")) == 0, "parametrize_parity", python(),
                " could not write the state dicts (it needs Debian's python3-torch, or EMBER_PYTHON): ",
                read_bytes(dir.file("log")));
    return ember::load_torch_checkpoint(dir.file("sd.pt"));
  }();
  return dict;
}

// The entries of one module, prefix removed; "//input", "//eval", "//train" are the data.
ember::OrderedDict<std::string, ember::Tensor> entries(const std::string& name) {
  ember::OrderedDict<std::string, ember::Tensor> out;
  for (const auto& item : pytorch_file())
    if (item.key().rfind(name + "/", 0) == 0) out.insert(item.key().substr(name.size() + 1), item.value());
  return out;
}

template <class M>
void check_against_pytorch(const std::string& name, M& module) {
  SCOPED_TRACE(name);
  auto sd = entries(name);
  ASSERT_TRUE(sd.contains("/input") && sd.contains("/eval")) << "no entries for " << name;
  const ember::Tensor x = sd["/input"], eval_out = sd["/eval"];
  ember::OrderedDict<std::string, ember::Tensor> state;
  for (const auto& item : sd)
    if (item.key()[0] != '/') state.insert(item.key(), item.value());
  // Eval first, as PyTorch's module was when it wrote the file: a spectral norm in training mode
  // would run a power iteration at the first use after the load.
  module->eval();
  ember::load_state_dict(module, state);
  EXPECT_EQ(ember::detail::named_tensors(module).keys(), state.keys());
  ember::NoGradGuard no_grad;
  EXPECT_TRUE(Close(module(x), T(eval_out), {1e-10, 1e-10}));
  if (sd.contains("/train")) {
    module->train();
    EXPECT_TRUE(Close(module(x), T(sd["/train"]), {1e-10, 1e-10}));
  }
}

TEST(ParametrizeParity, StateDictsWrittenByPyTorchLoadAndGiveItsOutputs) {
  auto linear = [](int64_t in, int64_t out) {
    enn::Linear l(in, out);
    l->to(ember::kDouble);
    return l;
  };
  {
    auto m = linear(6, 6);
    PS::orthogonal(m);
    check_against_pytorch("orth_exp", m);
  }
  {
    auto m = linear(6, 4);
    PS::orthogonal(m, "weight", std::string("cayley"));
    check_against_pytorch("orth_cayley", m);
  }
  {
    auto m = linear(6, 4);
    PS::orthogonal(m);
    check_against_pytorch("orth_householder", m);
  }
  {
    auto m = linear(6, 4);
    PS::orthogonal(m, "weight", std::nullopt, false);
    check_against_pytorch("orth_householder_plain", m);
  }
  {
    auto m = linear(6, 5);
    PS::spectral_norm(m);
    check_against_pytorch("spectral", m);
  }
  {
    enn::Conv2d m(enn::Conv2dOptions(2, 3, 3));
    m->to(ember::kDouble);
    PS::spectral_norm(m);
    check_against_pytorch("spectral_conv", m);
  }
  {
    auto m = linear(6, 4);
    PS::weight_norm(m);
    check_against_pytorch("weight_norm", m);
  }
  {
    auto m = linear(6, 6);
    PS::orthogonal(m);
    PS::spectral_norm(m);
    check_against_pytorch("chain", m);
  }
  {
    auto m = linear(6, 4);
    enn::utils::weight_norm(m);
    check_against_pytorch("classic_weight_norm", m);
  }
  {
    auto m = linear(6, 5);
    enn::utils::spectral_norm(m);
    check_against_pytorch("classic_spectral", m);
  }
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
