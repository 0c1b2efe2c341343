// torch::jit::load round trips: models exported at test time by Debian's python3-torch (traced
// and scripted), run by Ember's interpreter and by libtorch's on the same archive and input.
#include <torch/script.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <set>
#include <cstring>
#include <sstream>
#include <filesystem>
#include <fstream>

#include "parity.h"
#include "unit/temp_dir.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

// Exports every model of the tests into the directory given as argv[1]. BatchNorm running stats
// are randomized so that normalization is not the identity.
const char* kExport = R"PY(
import os, sys, torch, torchvision
from typing import Dict, Optional
out = sys.argv[1]
torch.manual_seed(0)

def randomize_bn(m):
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 1.5)
            if mod.affine:
                mod.weight.data.uniform_(0.5, 1.5)
                mod.bias.data.uniform_(-0.5, 0.5)
    return m.eval()

class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 4)
    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))

class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.MaxPool2d(2)
        self.drop = torch.nn.Dropout(0.5)
        self.fc = torch.nn.Linear(8 * 8 * 8, 10)
    def forward(self, x):
        x = self.pool(torch.relu(self.bn(self.conv(x))))
        x = torch.flatten(x, 1)
        return self.fc(self.drop(x))

class Control(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.n = 3
    def forward(self, x, flag: bool = True):
        y = x
        for i in range(self.n):
            y = self.fc(y) + i
        if flag:
            y = y * 2
        else:
            y = -y
        outs = [y, x]
        for t in [x, y]:
            outs.append(t.sum(dim=0))
        return y.sum(dim=1), outs

# Scripted language features: a submodule returning a tuple, ModuleList iteration, Optional
# arguments, a while loop, a list comprehension, a dict, len(); nn layers beyond the CNNs'.
class Features(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.ln = torch.nn.LayerNorm(8)
        self.emb = torch.nn.Embedding(10, 8)
        self.seq = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(), torch.nn.Tanh())
        self.blocks = torch.nn.ModuleList([torch.nn.Linear(8, 8) for _ in range(2)])
    def pair(self, x):
        y = self.lin(x)
        return y, y.relu()
    def forward(self, x, ids, scale: Optional[float] = None):
        a, b = self.pair(x)
        h = x.view(x.size(0), -1) + self.emb(ids).mean(dim=1)
        for blk in self.blocks:
            h = blk(h)
        h = self.seq(self.ln(h))
        if scale is not None:
            h = h * scale
        n = 0
        while n < 3:
            h = torch.sigmoid(h) + n
            n += 1
        parts = [t * 2 for t in [a, b, h]]
        d: Dict[str, torch.Tensor] = {"out": torch.nn.functional.softmax(torch.cat(parts, dim=1), dim=1)}
        return d["out"], torch.stack([a, b]).sum(0), len(parts)

# Ops a traced model meets beyond the CNNs': masking, where, slicing, expand, index_select,
# split, pad, nearest upsampling, relu6, elu, zeros_like/ones_like (with keyword arguments), a
# tensor constant.
class TracedOps(torch.nn.Module):
    def forward(self, x, mask):
        y = x.masked_fill(mask, 0.5)
        z = torch.where(mask, x, y * 2)
        e = z[:, :1].expand(-1, 4)
        i = torch.index_select(x, 1, torch.tensor([2, 0]))
        a, b = torch.split(x, 2, dim=1)
        p = torch.nn.functional.pad(x, [1, 1])
        u = torch.nn.functional.interpolate(x.view(1, 1, 3, 4), scale_factor=2.0, mode='nearest')
        g = torch.nn.functional.relu6(x) + torch.nn.functional.elu(x) + torch.zeros_like(x) + torch.ones_like(x)
        return torch.cat([y, z, e, i, a, b, p[:, 1:5], g], dim=1), u

# Recurrent layers: an embedding into a 2-layer bidirectional LSTM into a GRU (batch first).
class Recurrent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(20, 8)
        self.lstm = torch.nn.LSTM(8, 16, num_layers=2, batch_first=True, bidirectional=True)
        self.gru = torch.nn.GRU(32, 8, batch_first=True)
        self.fc = torch.nn.Linear(8, 3)
    def forward(self, ids):
        y, (h, c) = self.lstm(self.emb(ids))
        z, hg = self.gru(y)
        return self.fc(z[:, -1]) + h.sum() + hg.sum()

# The other recurrent paths: RNN (tanh, time major; relu, with h0), LSTM with proj_size, an
# unbatched GRU input, a PackedSequence through the LSTM (pack_padded_sequence of an unsorted
# batch, pad_packed_sequence), LSTMCell, GRUCell and RNNCell (relu, unbatched).
class RecurrentVariants(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tanh = torch.nn.RNN(4, 6, num_layers=2, bidirectional=True)
        self.relu = torch.nn.RNN(4, 5, nonlinearity='relu', batch_first=True)
        self.proj = torch.nn.LSTM(4, 8, num_layers=2, proj_size=3, batch_first=True, bidirectional=True)
        self.gru = torch.nn.GRU(4, 5)
        self.cell = torch.nn.LSTMCell(4, 5)
        self.gcell = torch.nn.GRUCell(4, 5)
        self.rcell = torch.nn.RNNCell(4, 5, nonlinearity='relu')
    def forward(self, x, lengths):
        a, ha = self.tanh(x.transpose(0, 1))
        b, hb = self.relu(x, torch.ones(1, x.size(0), 5))
        c, (hc, cc) = self.proj(x)
        u, hu = self.gru(x[0])
        p = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        q, (hq, cq) = self.proj(p)
        padded, lens = torch.nn.utils.rnn.pad_packed_sequence(q, batch_first=True)
        h, cs = self.cell(x[:, 0])
        g = self.gcell(x[:, 1], h)
        r = self.rcell(x[2, 0])
        return a, ha, b, hb, c, hc, cc, u, hu, padded, lens, hq, cq, h, cs, g, r

def save(name, m, example, script):
    m = randomize_bn(m)
    (torch.jit.script(m) if script else torch.jit.trace(m, example)).save(os.path.join(out, name + '.pt'))

img = torch.randn(1, 3, 224, 224)
save('mlp_traced', MLP(), torch.randn(2, 16), False)
save('mlp_scripted', MLP(), None, True)
save('cnn_traced', CNN(), torch.randn(2, 3, 16, 16), False)
save('cnn_scripted', CNN(), None, True)
save('control_scripted', Control(), None, True)
save('features_scripted', Features(), None, True)
ops_x = torch.randn(3, 4)
save('ops_traced', TracedOps(), (ops_x, ops_x > 0), False)
save('resnet18_traced', torchvision.models.resnet18(), img, False)
save('resnet18_scripted', torchvision.models.resnet18(), None, True)
save('mobilenet_v3_small_traced', torchvision.models.mobilenet_v3_small(), img, False)
save('mobilenet_v3_small_scripted', torchvision.models.mobilenet_v3_small(), None, True)
save('mobilenet_v3_large_traced', torchvision.models.mobilenet_v3_large(), img, False)
save('mobilenet_v3_large_scripted', torchvision.models.mobilenet_v3_large(), None, True)
save('recurrent_traced', Recurrent(), torch.randint(0, 20, (2, 5)), False)
save('recurrent_scripted', Recurrent(), None, True)
seq = (torch.randn(3, 5, 4), torch.tensor([5, 2, 4]))
save('recurrent_variants_traced', RecurrentVariants(), seq, False)
save('recurrent_variants_scripted', RecurrentVariants(), None, True)
)PY";

// The exported archives, written once per test program into a temp dir removed at exit.
class Archives {
 public:
  Archives() : dir_(std::filesystem::temp_directory_path() / ("ember_jit_parity_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
    const std::string script = (dir_ / "export.py").string();
    std::ofstream(script) << kExport;
    const std::string cmd = python() + " " + script + " " + dir_.string() + " > " + script + ".log 2>&1";
    status_ = run_python_in(cmd, dir_.string());
  }
  ~Archives() { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / (name + ".pt")).string(); }
  bool ok() const { return status_ == 0; }
  std::string log() const {
    std::ifstream in(dir_ / "export.py.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  std::filesystem::path dir_;
  int status_;
};

const Archives& archives() {
  static Archives a;
  return a;
}

// max |ember - torch| / max |torch| over the outputs' elements.
double rel_error(const ember::Tensor& e, const torch::Tensor& t) {
  EXPECT_EQ(std::vector<int64_t>(e.sizes().begin(), e.sizes().end()), t.sizes().vec());
  const torch::Tensor et = parity::to_torch(e.contiguous()).to(torch::kDouble);
  const torch::Tensor tt = t.to(torch::kDouble);
  const double scale = tt.abs().max().item<double>();
  return (et - tt).abs().max().item<double>() / (scale > 0 ? scale : 1.0);
}

// Runs `name` on the same input in both and returns the worst relative error of its tensors.
double run_both(const std::string& name, const std::vector<int64_t>& input_shape) {
  EXPECT_TRUE(archives().ok()) << archives().log();
  torch::manual_seed(1);
  const torch::Tensor x = torch::randn(input_shape);

  torch::jit::Module tm = torch::jit::load(archives().path(name));
  tm.eval();
  ember::jit::Module em = ember::jit::load(archives().path(name));
  em.eval();
  torch::Tensor expected;
  ember::Tensor actual;
  {
    torch::InferenceMode guard;
    expected = tm.forward({x}).toTensor();
  }
  {
    ember::InferenceMode guard;
    actual = em.forward({parity::to_ember(x)}).toTensor();
  }
  const double err = rel_error(actual, expected);
  std::cout << name << ": max relative error " << err << "\n";
  return err;
}

constexpr double kTol = 1e-4;

TEST(JitParity, MlpTraced) { EXPECT_LT(run_both("mlp_traced", {2, 16}), kTol); }
TEST(JitParity, MlpScripted) { EXPECT_LT(run_both("mlp_scripted", {2, 16}), kTol); }
TEST(JitParity, CnnTraced) { EXPECT_LT(run_both("cnn_traced", {2, 3, 16, 16}), kTol); }
TEST(JitParity, CnnScripted) { EXPECT_LT(run_both("cnn_scripted", {2, 3, 16, 16}), kTol); }
TEST(JitParity, Resnet18Traced) { EXPECT_LT(run_both("resnet18_traced", {1, 3, 224, 224}), kTol); }
TEST(JitParity, Resnet18Scripted) { EXPECT_LT(run_both("resnet18_scripted", {1, 3, 224, 224}), kTol); }
TEST(JitParity, MobilenetV3SmallTraced) { EXPECT_LT(run_both("mobilenet_v3_small_traced", {1, 3, 224, 224}), kTol); }
TEST(JitParity, MobilenetV3SmallScripted) {
  EXPECT_LT(run_both("mobilenet_v3_small_scripted", {1, 3, 224, 224}), kTol);
}
TEST(JitParity, MobilenetV3LargeTraced) { EXPECT_LT(run_both("mobilenet_v3_large_traced", {1, 3, 224, 224}), kTol); }
TEST(JitParity, MobilenetV3LargeScripted) {
  EXPECT_LT(run_both("mobilenet_v3_large_scripted", {1, 3, 224, 224}), kTol);
}

// The tensors of an output (a tensor, or tuples and lists of them), depth first.
void flatten(const torch::jit::IValue& v, std::vector<torch::Tensor>& out) {
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTuple()->elements()) flatten(e, out);
  } else {
    ASSERT_TRUE(v.isList()) << v.tagKind();
    for (const auto& e : v.toListRef()) flatten(e, out);
  }
}
void flatten(const ember::jit::IValue& v, std::vector<ember::Tensor>& out) {
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTuple()->elements()) flatten(e, out);
  } else {
    ASSERT_TRUE(v.isList()) << v.tag_name();
    for (const auto& e : v.toList()) flatten(e, out);
  }
}

// Runs `name` on the same inputs in both (after converting both to `dtype` if given) and
// compares every output tensor: same dtype, relative error below kTol.
void compare_outputs(const std::string& name, const std::vector<torch::Tensor>& inputs,
                     std::optional<torch::ScalarType> dtype = std::nullopt) {
  ASSERT_TRUE(archives().ok()) << archives().log();
  torch::jit::Module tm = torch::jit::load(archives().path(name));
  ember::jit::Module em = ember::jit::load(archives().path(name));
  tm.eval();
  em.eval();
  if (dtype) {
    tm.to(*dtype);
    em.to(parity::to_ember(*dtype));
  }
  std::vector<torch::jit::IValue> t_in;
  std::vector<ember::jit::IValue> e_in;
  for (const torch::Tensor& x : inputs) {
    t_in.emplace_back(x);
    e_in.emplace_back(parity::to_ember(x));
  }
  std::vector<torch::Tensor> expected;
  std::vector<ember::Tensor> actual;
  {
    torch::InferenceMode guard;
    flatten(tm.forward(t_in), expected);
  }
  {
    ember::InferenceMode guard;
    flatten(em.forward(e_in), actual);
  }
  ASSERT_EQ(actual.size(), expected.size());
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_EQ(parity::to_torch(actual[i].dtype()), expected[i].scalar_type()) << name << " output " << i;
    const double err = rel_error(actual[i], expected[i]);
    EXPECT_LT(err, kTol) << name << " output " << i;
    worst = std::max(worst, err);
  }
  std::cout << name << ": " << actual.size() << " outputs, max relative error " << worst << "\n";
}

std::vector<torch::Tensor> token_ids() {
  torch::manual_seed(5);
  return {torch::randint(0, 20, {2, 5}, torch::kLong)};
}
// The traced variants keep the example's batch of 3 in their packed path; the lengths differ
// from the example's.
std::vector<torch::Tensor> sequences() {
  torch::manual_seed(6);
  return {torch::randn({3, 5, 4}), torch::tensor({3, 5, 1}, torch::kLong)};
}

TEST(JitParity, RecurrentTraced) { compare_outputs("recurrent_traced", token_ids()); }
TEST(JitParity, RecurrentScripted) { compare_outputs("recurrent_scripted", token_ids()); }
TEST(JitParity, RecurrentVariantsTraced) { compare_outputs("recurrent_variants_traced", sequences()); }
TEST(JitParity, RecurrentVariantsScripted) { compare_outputs("recurrent_variants_scripted", sequences()); }
// Module::to converts the parameters in place: the RNN's _flat_weights list (the same tensors)
// follows, as in libtorch.
TEST(JitParity, RecurrentScriptedToDouble) { compare_outputs("recurrent_scripted", token_ids(), torch::kDouble); }

// if/for, keyword-free default arguments, a tuple of a tensor and a list (appended to in a loop).
TEST(JitParity, ControlFlowScripted) {
  ASSERT_TRUE(archives().ok()) << archives().log();
  torch::manual_seed(2);
  const torch::Tensor x = torch::randn({2, 4});
  torch::jit::Module tm = torch::jit::load(archives().path("control_scripted"));
  ember::jit::Module em = ember::jit::load(archives().path("control_scripted"));
  for (bool flag : {true, false}) {
    const auto expected = tm.forward({x, flag}).toTuple();
    const auto actual = em.forward({parity::to_ember(x), flag}).toTuple();
    ASSERT_EQ(actual->elements().size(), 2u);
    EXPECT_LT(rel_error(actual->elements()[0].toTensor(), expected->elements()[0].toTensor()), kTol);
    const auto e_list = actual->elements()[1].toTensorList();
    const auto t_list = expected->elements()[1].toTensorList();
    ASSERT_EQ(e_list.size(), 4u);
    ASSERT_EQ(t_list.size(), 4u);
    for (size_t i = 0; i < e_list.size(); ++i) EXPECT_LT(rel_error(e_list[i], t_list[i]), kTol) << "list item " << i;
  }
  // The default of `flag` (True) when only x is given.
  const auto expected = tm.forward({x}).toTuple();
  const auto actual = em.forward({parity::to_ember(x)}).toTuple();
  EXPECT_LT(rel_error(actual->elements()[0].toTensor(), expected->elements()[0].toTensor()), kTol);
}

TEST(JitParity, ScriptedLanguageFeatures) {
  ASSERT_TRUE(archives().ok()) << archives().log();
  torch::manual_seed(3);
  const torch::Tensor x = torch::randn({2, 8});
  const torch::Tensor ids = torch::tensor({1, 2, 3, 4}, torch::kLong).view({2, 2});
  torch::jit::Module tm = torch::jit::load(archives().path("features_scripted"));
  ember::jit::Module em = ember::jit::load(archives().path("features_scripted"));
  tm.eval();
  em.eval();
  for (const bool with_scale : {false, true}) {
    const torch::jit::IValue t_scale = with_scale ? torch::jit::IValue(2.0) : torch::jit::IValue();
    const ember::jit::IValue e_scale = with_scale ? ember::jit::IValue(2.0) : ember::jit::IValue();
    const auto expected = tm.forward({x, ids, t_scale}).toTuple()->elements();
    const auto actual = em.forward({parity::to_ember(x), parity::to_ember(ids), e_scale}).toTuple()->elements();
    ASSERT_EQ(actual.size(), 3u);
    EXPECT_LT(rel_error(actual[0].toTensor(), expected[0].toTensor()), kTol) << "scale " << with_scale;
    EXPECT_LT(rel_error(actual[1].toTensor(), expected[1].toTensor()), kTol) << "scale " << with_scale;
    EXPECT_EQ(actual[2].toInt(), expected[2].toInt());
  }
}

TEST(JitParity, TracedOps) {
  ASSERT_TRUE(archives().ok()) << archives().log();
  torch::manual_seed(4);
  const torch::Tensor x = torch::randn({3, 4});
  const torch::Tensor mask = x > 0;
  torch::jit::Module tm = torch::jit::load(archives().path("ops_traced"));
  ember::jit::Module em = ember::jit::load(archives().path("ops_traced"));
  const auto expected = tm.forward({x, mask}).toTuple()->elements();
  const auto actual = em.forward({parity::to_ember(x), parity::to_ember(mask)}).toTuple()->elements();
  ASSERT_EQ(actual.size(), 2u);
  EXPECT_LT(rel_error(actual[0].toTensor(), expected[0].toTensor()), kTol);
  EXPECT_LT(rel_error(actual[1].toTensor(), expected[1].toTensor()), kTol);
}

// Parameters (names, order, values, requires_grad), buffers' names and children's names as libtorch's.
void expect_same_slots(const ember::jit::Module& em, const torch::jit::Module& tm) {
  const auto tp = tm.named_parameters();
  const auto ep = em.named_parameters();
  ASSERT_EQ(ep.size(), tp.size());
  size_t i = 0;
  for (const auto& p : tp) {
    EXPECT_EQ(ep[i].name, p.name);
    EXPECT_TRUE(parity::Close(ep[i].value.detach(), p.value.detach())) << p.name;
    EXPECT_EQ(ep[i].value.requires_grad(), p.value.requires_grad()) << p.name;
    ++i;
  }
  const auto tb = tm.named_buffers();
  const auto eb = em.named_buffers();
  ASSERT_EQ(eb.size(), tb.size());
  i = 0;
  for (const auto& b : tb) EXPECT_EQ(eb[i++].name, b.name);
  std::vector<std::string> t_children, e_children;
  for (const auto& c : tm.named_children()) t_children.push_back(c.name);
  for (const auto& c : em.named_children()) e_children.push_back(c.name);
  EXPECT_EQ(e_children, t_children);
}

// register_parameter / register_buffer / register_module, as libtorch's: the lists of
// parameters, buffers and children afterwards (names, order, values).
TEST(JitParity, RegisteringAttributes) {
  ASSERT_TRUE(archives().ok()) << archives().log();
  torch::jit::Module tm = torch::jit::load(archives().path("mlp_scripted"));
  ember::jit::Module em = ember::jit::load(archives().path("mlp_scripted"));
  const torch::jit::Module tchild = torch::jit::load(archives().path("mlp_traced"));
  const ember::jit::Module echild = ember::jit::load(archives().path("mlp_traced"));
  const ember::Tensor scale = ember::full({3}, 0.5), count = ember::zeros({1});
  tm.register_parameter("scale", parity::to_torch(scale), false);
  em.register_parameter("scale", scale, false);
  tm.register_buffer("count", parity::to_torch(count));
  em.register_buffer("count", count);
  tm.register_module("extra", tchild);
  em.register_module("extra", echild);
  tm.register_parameter("scale", parity::to_torch(scale * 2), false);  // replaces the value
  em.register_parameter("scale", scale * 2, false);
  expect_same_slots(em, tm);
  EXPECT_THROW(em.register_buffer("scale", count), ember::Error);  // a parameter already
}

// torch::jit::getAllOperators: every builtin Ember's interpreter runs is an operator libtorch
// registers too (but for the Python builtins TorchScript code calls by name, and ops newer than
// libtorch 1.13), and where Ember's schema is not generic (no `t` or `num` argument, which stand
// for several of libtorch's overloads at once) one of libtorch's overloads has the same arguments
// (names, types, keyword-only flags).
TEST(JitParity, AllOperatorsAreLibtorchs) {
  const std::vector<std::shared_ptr<ember::jit::Operator>> ops = ember::jit::getAllOperators();
  ASSERT_GT(ops.size(), 300u);
  const std::set<std::string> not_libtorch_ops = {"aten::int", "aten::float", "aten::bool", "aten::device",
                                                  "aten::getattr", "aten::range",
                                                  "aten::scaled_dot_product_attention"};
  // overloads of Ember's own, which accept what libtorch's code generation also emits in other
  // forms (a Scalar on the left of mul, an implicit conversion of a value already of the type, `to`
  // with a device and an optional dtype)
  const std::set<std::string> own_overloads = {
      "aten::mul(Scalar self, Tensor other)", "aten::ScalarImplicit(Scalar a)", "aten::IntImplicit(int a)",
      "aten::FloatImplicit(float a)",
      "aten::to(Tensor self, Device? device, ScalarType? dtype=None, bool non_blocking=False, bool copy=False, "
      "int? memory_format=None)"};
  // a type as libtorch's str() writes it: enums are ints, sized lists plain, SymInt an int
  const auto base_type = [](std::string t) {
    if (const size_t b = t.find('['); b != std::string::npos && t[b + 1] != ']') t.erase(b + 1, t.find(']') - b - 1);
    for (const char* e : {"ScalarType", "Layout", "MemoryFormat", "SymInt"})
      if (t.rfind(e, 0) == 0) t.replace(0, std::strlen(e), "int");
    return t;
  };
  std::vector<std::string> unmatched;
  for (const auto& op : ops) {
    const ember::jit::FunctionSchema& es = op->schema();
    EXPECT_EQ(es.getNamespace().value_or(""), es.name().substr(0, es.name().find("::")));
    if (not_libtorch_ops.count(es.name())) continue;
    const auto overloads = torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(es.name()));
    bool generic = false;
    for (const ember::jit::Argument& a : es.arguments()) {
      const std::string& t = a.type()->str();
      generic = generic || t == "t" || t == "t[]" || t == "num";
    }
    bool found = generic && !overloads.empty();
    for (const auto& top : overloads) {
      const c10::FunctionSchema& ts = top->schema();
      if (ts.arguments().size() != es.arguments().size() || ts.is_vararg() != es.is_vararg()) continue;
      bool same = true;
      for (size_t i = 0; i < ts.arguments().size() && same; ++i) {
        const c10::Argument& ta = ts.arguments()[i];
        const ember::jit::Argument& ea = es.arguments()[i];
        same = ta.name() == ea.name() && ta.kwarg_only() == ea.kwarg_only() &&
               base_type(ta.type()->str()) == base_type(ea.type()->str());
      }
      found = found || same;
    }
    std::ostringstream os;
    os << es;
    if (!found && !own_overloads.count(os.str())) unmatched.push_back(os.str());
  }
  EXPECT_TRUE(unmatched.empty()) << unmatched.size() << " of Ember's schemas match none of libtorch's, the first: "
                                 << (unmatched.empty() ? "" : unmatched.front());
  // one operator by name, as libtorch looks it up
  const auto relu = ember::jit::getAllOperatorsFor(ember::jit::Symbol::fromQualString("aten::relu"));
  ASSERT_FALSE(relu.empty());
  EXPECT_EQ(relu[0]->schema().name(), "aten::relu");
  EXPECT_EQ(relu[0]->schema().arguments()[0].name(), "self");
  EXPECT_EQ(relu[0]->schema().arguments()[0].type()->str(), "Tensor");
  std::ostringstream os;
  os << relu[0]->schema();
  EXPECT_EQ(os.str(), "aten::relu(Tensor self)");
  EXPECT_TRUE(ember::jit::getAllOperatorsFor(ember::jit::Symbol::aten("no_such_op")).empty());
  EXPECT_THROW(ember::jit::Symbol::fromQualString("relu"), ember::Error);
  EXPECT_ANY_THROW(c10::Symbol::fromQualString("relu"));
}

// The module API agrees with libtorch's on the same archive: parameter and buffer names, order
// and values, children, attributes, training flags.
TEST(JitParity, ModuleApi) {
  ASSERT_TRUE(archives().ok()) << archives().log();
  torch::jit::Module tm = torch::jit::load(archives().path("resnet18_scripted"));
  ember::jit::Module em = ember::jit::load(archives().path("resnet18_scripted"));
  expect_same_slots(em, tm);
  EXPECT_EQ(em.attr("inplanes").toInt(), tm.attr("inplanes").toInt());
  EXPECT_EQ(em.is_training(), tm.is_training());
  em.eval();
  EXPECT_FALSE(em.is_training());
  EXPECT_FALSE(em.named_children()[1].value.is_training());  // bn1
  em.train();
  EXPECT_TRUE(em.named_children()[1].value.is_training());
}

// Module::save: a loaded module with changed parameters and training flag, written by Ember, read
// by libtorch (and by Ember again) with the same parameters, flag, outputs and extra files.
TEST(JitParity, SaveRoundTrip) {
  ASSERT_TRUE(archives().ok()) << archives().log();
  const TempDir dir("jit_save");
  const std::vector<std::pair<std::string, std::vector<int64_t>>> models = {
      {"mlp_scripted", {2, 16}}, {"cnn_traced", {2, 3, 16, 16}}, {"resnet18_scripted", {1, 3, 64, 64}}};
  for (const auto& [name, shape] : models) {
    ember::jit::Module em = ember::jit::load(archives().path(name));
    {
      ember::NoGradGuard no_grad;
      for (const ember::jit::NamedTensor& p : em.named_parameters()) p.value.mul_(0.5).add_(0.01);
    }
    em.eval();
    const std::string path = dir.file(name + ".pt");
    em.save(path, {{"note.txt", "saved by Ember"}});

    torch::jit::ExtraFilesMap extra{{"note.txt", ""}};
    torch::jit::Module tm = torch::jit::load(path, c10::nullopt, extra);
    EXPECT_EQ(extra["note.txt"], "saved by Ember") << name;
    EXPECT_FALSE(tm.is_training()) << name;
    const auto tp = tm.named_parameters();
    const auto ep = em.named_parameters();
    ASSERT_EQ(ep.size(), tp.size()) << name;
    size_t i = 0;
    for (const auto& p : tp) {
      EXPECT_EQ(ep[i].name, p.name);
      EXPECT_TRUE(parity::Close(ep[i].value.detach(), p.value.detach(), parity::Tol{0, 0})) << name << " " << p.name;
      EXPECT_EQ(ep[i].value.requires_grad(), p.value.requires_grad()) << p.name;
      ++i;
    }
    torch::manual_seed(2);
    const torch::Tensor x = torch::randn(shape);
    ember::InferenceMode eguard;
    torch::InferenceMode tguard;
    const ember::Tensor actual = em.forward({parity::to_ember(x)}).toTensor();
    EXPECT_LT(rel_error(actual, tm.forward({x}).toTensor()), kTol) << name;
    // Ember reads it back too, from a file and from a stream
    EXPECT_TRUE(ember::equal(ember::jit::load(path).forward({parity::to_ember(x)}).toTensor(), actual)) << name;
    std::stringstream buffer;
    em.save(buffer);
    EXPECT_TRUE(ember::equal(ember::jit::load(buffer).forward({parity::to_ember(x)}).toTensor(), actual)) << name;
  }
  EXPECT_THROW(ember::jit::Module().save(dir.file("empty.pt")), ember::Error);
  const ember::jit::Module mlp = ember::jit::load(archives().path("mlp_scripted"));
  EXPECT_THROW(mlp.save(dir.file("no_such_dir/mlp.pt")), ember::Error);
}

// What inference programs call around torch::jit::load, as libtorch's: load onto a device and
// with extra files, attributes by name, deep copies, typed lists and dicts shared with the IValue
// they came from, tuples made with Tuple::create, and the executor's switches.
TEST(JitParity, DeploymentApi) {
  ASSERT_TRUE(archives().ok()) << archives().log();
  const TempDir dir("jit_deploy");
  const std::string path = dir.file("cnn.pt");
  ember::jit::load(archives().path("cnn_traced")).save(path, {{"meta.json", "{\"classes\": 10}"}, {"other", "x"}});

  torch::jit::ExtraFilesMap t_extra{{"meta.json", ""}, {"absent", "kept"}};
  ember::jit::ExtraFilesMap e_extra{{"meta.json", ""}, {"absent", "kept"}};
  torch::jit::Module tm = torch::jit::load(path, torch::kCPU, t_extra);
  ember::jit::Module em = ember::jit::load(path, ember::kCPU, e_extra);
  EXPECT_EQ(e_extra, t_extra);
  EXPECT_EQ(e_extra["meta.json"], "{\"classes\": 10}");
  EXPECT_EQ(e_extra.count("other"), 0u);  // only the keys asked for
  std::ifstream in(path, std::ios::binary);
  ember::jit::ExtraFilesMap s_extra{{"other", ""}};
  EXPECT_EQ(ember::jit::load(in, std::nullopt, s_extra).named_parameters().size(), tm.named_parameters().size());
  EXPECT_EQ(s_extra["other"], "x");
  EXPECT_THROW(ember::jit::load(path, ember::Device(ember::kCUDA, 0)), ember::Error);
  EXPECT_THROW(torch::jit::load(path, torch::Device(torch::kCUDA, 0)), c10::Error);

  // methods by name
  EXPECT_TRUE(em.find_method("forward").has_value());
  EXPECT_FALSE(em.find_method("no_such_method").has_value());
  EXPECT_EQ(em.find_method("no_such_method").has_value(), tm.find_method("no_such_method").has_value());
  std::vector<std::string> e_methods, t_methods;
  for (const auto& m : em.get_methods()) e_methods.push_back(m.name());
  for (const auto& m : tm.get_methods()) t_methods.push_back(m.name());
  std::sort(t_methods.begin(), t_methods.end());  // (Ember lists them by name)
  EXPECT_EQ(e_methods, t_methods);
  ember::jit::Stack stack{ember::jit::IValue(ember::ones({1, 3, 16, 16}))};
  EXPECT_EQ((*em.find_method("forward"))(stack).toTensor().dim(), 2);
  for (const auto& [e, t] : std::vector<std::pair<ember::jit::IValue, torch::jit::IValue>>{
           {ember::jit::IValue(), torch::jit::IValue()},
           {ember::jit::IValue(1.5), torch::jit::IValue(1.5)},
           {ember::jit::IValue(int64_t{2}), torch::jit::IValue(int64_t{2})},
           {ember::jit::IValue(true), torch::jit::IValue(true)},
           {ember::jit::IValue("s"), torch::jit::IValue("s")},
           {ember::jit::IValue(ember::ones({1})), torch::jit::IValue(torch::ones({1}))},
           {ember::jit::IValue::tuple(1, 2), torch::jit::IValue(std::make_tuple(1, 2))},
           {ember::jit::IValue(ember::jit::List<int64_t>({1})), torch::jit::IValue(c10::List<int64_t>({1}))},
           {ember::jit::IValue(ember::jit::GenericDict()),
            torch::jit::IValue(c10::impl::GenericDict(c10::StringType::get(), c10::AnyType::get()))}})
    EXPECT_EQ(e.tagKind(), t.tagKind());

  // named_attributes: names, order and kinds
  const auto ta = tm.named_attributes();
  const auto ea = em.named_attributes();
  ASSERT_EQ(ea.size(), ta.size());
  size_t i = 0;
  for (const auto& a : ta) {
    EXPECT_EQ(ea[i].name, a.name);
    EXPECT_EQ(ea[i].value.isTensor(), a.value.isTensor()) << a.name;
    EXPECT_EQ(ea[i].value.isObject(), a.value.isObject()) << a.name;
    EXPECT_EQ(ea[i].value.isBool(), a.value.isBool()) << a.name;
    ++i;
  }
  EXPECT_EQ(em.named_attributes(false).size(), tm.named_attributes(false).size());
  EXPECT_EQ(em.attributes().size(), ta.size());

  // clone: the same outputs, its own parameters
  torch::manual_seed(3);
  const torch::Tensor x = torch::randn({2, 3, 16, 16});
  const ember::Tensor ex = parity::to_ember(x);
  ember::jit::Module ec = em.clone();
  torch::jit::Module tc = tm.clone();
  expect_same_slots(ec, tc);
  const ember::Tensor before = em.forward({ex}).toTensor();
  EXPECT_TRUE(ember::equal(ec.forward({ex}).toTensor(), before));
  {
    ember::NoGradGuard no_grad;
    for (const auto& p : ec.named_parameters()) p.value.zero_();
  }
  EXPECT_TRUE(ember::equal(em.forward({ex}).toTensor(), before));
  EXPECT_FALSE(ember::equal(ec.forward({ex}).toTensor(), before));
  EXPECT_LT(rel_error(before, tm.forward({x}).toTensor()), kTol);

  // c10::List and c10::Dict: typed views sharing the IValue's container
  const torch::Tensor a = torch::ones({2}), b = torch::zeros({3});
  const ember::Tensor ea_t = parity::to_ember(a), eb_t = parity::to_ember(b);
  c10::List<torch::Tensor> tl({a});
  ember::jit::List<ember::Tensor> el({ea_t});
  torch::jit::IValue tiv(tl);
  ember::jit::IValue eiv(el);
  tl.push_back(b);
  el.push_back(eb_t);
  EXPECT_EQ(eiv.toTensorList().size(), tiv.toTensorList().size());
  EXPECT_EQ(eiv.toList().size(), tiv.toList().size());
  EXPECT_EQ(eiv.toTensorVector().size(), tiv.toTensorVector().size());
  EXPECT_EQ(eiv.toTensorList().vec()[1].sizes().vec(), tiv.toTensorList().vec()[1].sizes().vec());
  eiv.toList().push_back(ember::jit::IValue(ember::ones({1})));
  tiv.toList().push_back(torch::jit::IValue(torch::ones({1})));
  EXPECT_EQ(el.size(), tl.size());
  EXPECT_EQ(el.size(), 3u);
  EXPECT_EQ(el.get(0).sizes().vec(), tl.get(0).sizes().vec());
  el.set(0, eb_t);
  tl.set(0, b);
  EXPECT_EQ(el[0].numel(), static_cast<int64_t>(tl.get(0).numel()));
  int64_t e_total = 0, t_total = 0;
  for (const ember::Tensor& t : el) e_total += t.numel();
  for (const torch::Tensor& t : tl) t_total += t.numel();
  EXPECT_EQ(e_total, t_total);
  EXPECT_THROW(ember::jit::IValue(std::vector<ember::jit::IValue>{ember::jit::IValue(1)}).toTensorList(), ember::Error);
  c10::List<int64_t> ti({1, 2, 3});
  ember::jit::List<int64_t> ei({1, 2, 3});
  EXPECT_EQ(ember::jit::IValue(ei).toIntList().vec(), torch::jit::IValue(ti).toIntList().vec());
  EXPECT_EQ(ember::jit::IValue(ei).toIntVector(), torch::jit::IValue(ti).toIntVector());
  EXPECT_EQ(ember::jit::IValue(ei).to<ember::jit::List<int64_t>>().get(2), 3);
  c10::impl::GenericList tg(c10::AnyType::get());
  ember::jit::List<ember::jit::IValue> eg(ember::jit::AnyType::get());
  tg.push_back(torch::jit::IValue(1.5));
  eg.push_back(ember::jit::IValue(1.5));
  EXPECT_EQ(eg.get(0).toDouble(), tg.get(0).toDouble());

  c10::Dict<std::string, torch::Tensor> td;
  ember::jit::Dict<std::string, ember::Tensor> ed;
  EXPECT_EQ(ed.insert("a", ea_t), td.insert("a", a).second);
  EXPECT_EQ(ed.insert("a", eb_t), td.insert("a", b).second);  // present: unchanged
  ed.insert_or_assign("b", eb_t);
  td.insert_or_assign("b", b);
  EXPECT_EQ(ed.size(), td.size());
  EXPECT_EQ(ed.at("a").numel(), td.at("a").numel());
  EXPECT_TRUE(ed.contains("b"));
  const ember::jit::IValue edv(ed);
  const torch::jit::IValue tdv(td);
  EXPECT_EQ(edv.isGenericDict(), tdv.isGenericDict());
  std::vector<std::string> ekeys, tkeys;
  for (const auto& e : edv.toGenericDict()) ekeys.push_back(e.key().toStringRef());
  for (const auto& e : tdv.toGenericDict()) tkeys.push_back(e.key().toStringRef());
  EXPECT_EQ(ekeys, tkeys);
  std::vector<int64_t> enumels;
  for (const auto& e : ed) enumels.push_back(e.value().numel());
  EXPECT_EQ(enumels, (std::vector<int64_t>{2, 3}));

  const auto ett = ember::jit::ivalue::Tuple::create(ea_t, 2);
  const auto ttt = c10::ivalue::Tuple::create(a, 2);
  EXPECT_EQ(ett->elements().size(), ttt->elements().size());
  EXPECT_EQ(ember::jit::IValue(ett).toTuple()->elements()[1].toInt(), 2);
  EXPECT_EQ(ember::jit::ivalue::Tuple::create({ember::jit::IValue(1), ember::jit::IValue(2)})->size(), 2u);

  // the executor's switches: kept and read back as libtorch's
  EXPECT_EQ(ember::jit::getProfilingMode().load(), torch::jit::getProfilingMode().load());
  EXPECT_EQ(ember::jit::getExecutorMode().load(), torch::jit::getExecutorMode().load());
  EXPECT_EQ(ember::jit::getGraphExecutorOptimize(), torch::jit::getGraphExecutorOptimize());
  ember::jit::getProfilingMode() = false;
  ember::jit::setGraphExecutorOptimize(false);
  EXPECT_FALSE(ember::jit::getProfilingMode());
  EXPECT_FALSE(ember::jit::getGraphExecutorOptimize());
  EXPECT_TRUE(ember::equal(em.forward({ex}).toTensor(), before));
  ember::jit::getProfilingMode() = true;
  ember::jit::setGraphExecutorOptimize(true);
  ember::jit::FusionStrategy strategy{{ember::jit::FusionBehavior::DYNAMIC, 3}};
  const auto old = ember::jit::setFusionStrategy(strategy);
  EXPECT_EQ(ember::jit::getFusionStrategy().size(), 1u);
  auto restore = old;
  ember::jit::setFusionStrategy(restore);
}

// torch::pickle_save / pickle_load (torch.save's format) across the two libraries: a dict of
// tensors (two views of one storage among them), numbers, strings, None, a list and a tuple, each
// library reading what the other wrote.
TEST(JitParity, PickleSaveLoad) {
  const ember::Tensor base = ember::arange(12, ember::kFloat).reshape({3, 4});
  ember::jit::GenericDict d;
  d.insert_or_assign(ember::IValue("w"), ember::IValue(base));
  d.insert_or_assign(ember::IValue("col"), ember::IValue(base.select(1, 2)));
  d.insert_or_assign(ember::IValue("ints"), ember::IValue(ember::arange(5, ember::kLong)));
  d.insert_or_assign(ember::IValue("n"), ember::IValue(int64_t{7}));
  d.insert_or_assign(ember::IValue("x"), ember::IValue(2.5));
  d.insert_or_assign(ember::IValue("s"), ember::IValue("hi"));
  d.insert_or_assign(ember::IValue("none"), ember::IValue());
  d.insert_or_assign(ember::IValue("list"),
                     ember::IValue(std::vector<ember::IValue>{ember::IValue(true), ember::IValue(int64_t{3})}));
  d.insert_or_assign(ember::IValue("tuple"), ember::IValue::tuple(1, "a"));
  const std::vector<char> bytes = ember::pickle_save(ember::IValue(d));

  const torch::IValue t = torch::pickle_load(bytes);
  ASSERT_TRUE(t.isGenericDict());
  const c10::impl::GenericDict td = t.toGenericDict();
  EXPECT_EQ(td.size(), 9u);
  EXPECT_TRUE(parity::Close(base, td.at("w").toTensor(), parity::Tol{0, 0}));
  EXPECT_TRUE(parity::Close(base.select(1, 2), td.at("col").toTensor(), parity::Tol{0, 0}));
  EXPECT_TRUE(parity::Close(ember::arange(5, ember::kLong), td.at("ints").toTensor(), parity::Tol{0, 0}));
  EXPECT_EQ(td.at("n").toInt(), 7);
  EXPECT_EQ(td.at("x").toDouble(), 2.5);
  EXPECT_EQ(td.at("s").toStringRef(), "hi");
  EXPECT_TRUE(td.at("none").isNone());
  EXPECT_EQ(td.at("list").toList().size(), 2u);
  EXPECT_EQ(td.at("tuple").toTuple()->elements()[1].toStringRef(), "a");

  // and back: libtorch writes, Ember reads
  c10::Dict<std::string, torch::Tensor> tw;
  const torch::Tensor tb = torch::randn({2, 5});
  tw.insert("a", tb);
  tw.insert("a_t", tb.t());
  tw.insert("h", torch::randn({3}).to(torch::kHalf));
  const ember::IValue e = ember::pickle_load(torch::pickle_save(tw));
  ASSERT_TRUE(e.isGenericDict());
  const ember::jit::GenericDict& ed = e.toGenericDict();
  EXPECT_EQ(ed.size(), 3u);
  EXPECT_TRUE(parity::Close(ed.at(ember::IValue("a")).toTensor(), tb, parity::Tol{0, 0}));
  EXPECT_TRUE(parity::Close(ed.at(ember::IValue("a_t")).toTensor(), tb.t(), parity::Tol{0, 0}));
  EXPECT_TRUE(parity::Close(ed.at(ember::IValue("h")).toTensor(), tw.at("h"), parity::Tol{0, 0}));
  std::vector<std::string> keys;
  for (const auto& kv : ed) keys.push_back(kv.key().toStringRef());
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "a_t", "h"}));
  // Ember reads its own (the two views still share one storage), and refuses what is not such data
  const ember::jit::GenericDict back = ember::pickle_load(bytes).toGenericDict();
  EXPECT_EQ(back.at(ember::IValue("s")).toStringRef(), "hi");
  EXPECT_TRUE(back.at(ember::IValue("col")).toTensor().equal(base.select(1, 2)));
  EXPECT_EQ(back.at(ember::IValue("col")).toTensor().data_ptr<float>() - 2,
            back.at(ember::IValue("w")).toTensor().data_ptr<float>());
  for (size_t cut : {size_t{0}, size_t{10}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_THROW(ember::pickle_load(std::vector<char>(bytes.begin(), bytes.begin() + cut)), ember::Error) << cut;
  }
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
