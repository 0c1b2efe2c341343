// torch::jit::load on archives that Debian's python3-torch writes at test time: the module API,
// IValue, and refusals of malformed or unsupported archives (each an ember::Error naming the
// problem), plus mutated archives that must fail cleanly or load, never crash.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>
#include <thread>

#include "ember/ember.h"
#include "ember/torch.h"  // c10::impl::GenericDict
#include "expect_error.h"
#include "temp_dir.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

using ember::Tensor;
using ember::jit::IValue;

const TempDir& dir() {
  static TempDir d("jit_test");
  return d;
}

// Archives of a small MLP and variants with one defect each; `mutants/` holds copies of the
// MLP archive with random byte changes inside data.pkl or the code (CRCs recomputed, so the
// unpickler, parser and interpreter see them).
const char* kWrite = R"PY(
import io, os, pickle, random, sys, torch, zipfile
out = sys.argv[1]
torch.manual_seed(0)

class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 4)
    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))
    @torch.jit.export
    def scaled(self, x, k: float = 2.0):
        return self.forward(x) * k

class Unknown(torch.nn.Module):
    def forward(self, x):
        return torch.logcumsumexp(x, 0)

# Python's int semantics: floor division and modulo of negatives, ranges with negative steps
class IntOps(torch.nn.Module):
    def forward(self, a: int, b: int):
        s = 0
        for i in range(a, b, -2):
            s = s + i
        return s, a // -3, a % -3, a ** 3, -a
    @torch.jit.export
    def mul(self, a: int, b: int):
        return a * b

# An LSTM scripted (its checks are code) and traced (torch.lstm's own); a tensor given for numbers
class Recurrent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, batch_first=True)
    def forward(self, x):
        return self.lstm(x)[0]

class Implicit(torch.nn.Module):
    def forward(self, n: torch.Tensor, x: torch.Tensor):
        return torch.arange(0, n), x.size(n)

torch.jit.script(MLP()).save(os.path.join(out, 'mlp.pt'))
recurrent = Recurrent()
torch.jit.script(recurrent).save(os.path.join(out, 'lstm_scripted.pt'))
torch.jit.trace(recurrent, torch.randn(2, 5, 8)).save(os.path.join(out, 'lstm_traced.pt'))
torch.jit.script(Implicit()).save(os.path.join(out, 'implicit.pt'))
torch.jit.script(IntOps()).save(os.path.join(out, 'int_ops.pt'))
torch.jit.script(Unknown()).save(os.path.join(out, 'unknown_builtin.pt'))
torch.save(MLP().state_dict(), os.path.join(out, 'checkpoint.pt'))
# a traced Sequential, as pytorch-cpp's neural style transfer ships VGG19's layers to torch::load
layers = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Conv2d(4, 2, 1), torch.nn.BatchNorm2d(2))
layers.eval()
torch.jit.trace(layers, torch.randn(1, 3, 6, 6)).save(os.path.join(out, 'layers_traced.pt'))

# The builtins of reductions, sorting, losses, upsampling and random numbers: a scripted module
# (keyword and default arguments bound by the schemas) and a traced one (what F.* lower to), their
# inputs and PyTorch's outputs saved as buffers of a holder module.
import torch.nn.functional as F
class Stats(torch.nn.Module):
    def forward(self, x):
        sm = torch.std_mean(x, 0)
        vm = torch.var_mean(x, [1], keepdim=True)
        tv, ti = torch.topk(x, 3, dim=1, largest=False)
        kv, ki = torch.kthvalue(x, 2, 1)
        return [torch.prod(x, 1, keepdim=True), torch.prod(x), torch.prod(x, 0, dtype=torch.float64),
                torch.std(x, 1, unbiased=False, keepdim=True), torch.var(x), torch.var(x, dim=[0], correction=0),
                torch.std(x, unbiased=False), sm[0], sm[1], vm[0], vm[1], tv, ti, kv, ki,
                torch.argsort(x, dim=0, descending=True), torch.nonzero(x > 0), torch.amax(x, 1),
                torch.amin(x, [0, 1]), torch.argmin(x, 1), torch.cumprod(x, 1), x.norm(3, 1), torch.norm(x),
                torch.min(x, 1)[0], torch.all(x > -10), torch.any(x > 1, 1), torch.masked_select(x, x > 0),
                torch.sin(x), torch.floor(x), torch.square(x), torch.minimum(x, x.flip(0)),
                torch.var_mean(x, None, correction=2)[0]]

class LossesUpsampling(torch.nn.Module):
    def forward(self, x, labels, img):
        return (F.nll_loss(F.log_softmax(x, 1), labels), F.cross_entropy(x, labels),
                F.cross_entropy(x, labels, reduction='sum', label_smoothing=0.1),
                F.interpolate(img, scale_factor=2.0, mode='bilinear', align_corners=False),
                F.interpolate(img, size=(5, 7), mode='bicubic', align_corners=True),
                F.interpolate(img[0], size=9, mode='linear'),
                F.interpolate(img[0], scale_factor=3, mode='nearest'),
                F.interpolate(img.unsqueeze(2), scale_factor=2, mode='nearest'),
                F.interpolate(img.unsqueeze(2), size=(2, 3, 5), mode='trilinear'),
                F.interpolate(img, size=(8, 12), mode='nearest'))

class Random(torch.nn.Module):
    def forward(self, x):
        return (torch.rand_like(x), torch.randn_like(x), torch.bernoulli(torch.sigmoid(x)), torch.rand(3, 2),
                torch.randint(0, 5, (7,)), torch.randperm(6), torch.normal(x, 0.5), torch.multinomial(x.abs(), 2))

# Losses as F.* lowers them, division with a rounding mode, other binary math, in-place forms
# (index_put_ from an indexed assignment), pools, instance_norm and factories, traced.
class MoreRows(torch.nn.Module):
    def forward(self, x, y, b, labels):
        p, q = torch.sigmoid(x), torch.sigmoid(y)
        c = x.clone()
        c.div_(y)
        c.pow_(2)
        c.clamp_min_(-1.0)
        c.clamp_max_(1.0)
        c.lerp_(y, 0.5)
        c.fmod_(0.75)
        c[labels.remainder(4)] = y[:4]
        c.index_add_(0, labels, y[:4], alpha=0.5)
        return (F.mse_loss(x, y), F.l1_loss(x, y, reduction='sum'), F.smooth_l1_loss(x, y, beta=0.5),
                F.huber_loss(x, y, delta=2.0), F.binary_cross_entropy(p, q),
                F.binary_cross_entropy_with_logits(x, q, pos_weight=q[0]),
                F.kl_div(F.log_softmax(x, 1), F.softmax(y, 1), reduction='batchmean'), F.soft_margin_loss(x, y.sign()),
                F.hinge_embedding_loss(x, y.sign()), F.multi_margin_loss(x, labels[:1].expand(6), p=2, margin=0.5),
                F.poisson_nll_loss(x, y.abs()), torch.div(x, y, rounding_mode='floor'), x / 2, torch.fmod(x, 1.5),
                torch.floor_divide(x, y), torch.atan2(x, y), torch.copysign(x, y),
                torch.baddbmm(b[:, :, :3], b, b.transpose(1, 2), beta=0.5, alpha=2.0), torch.addmv(x[:, 0], x, y[0]),
                torch.isclose(x, y, 0.5, 0.5), torch.nan_to_num(torch.log(x), 0.0, 1.0, -1.0), torch.lgamma(x.abs() + 1),
                torch.digamma(x.abs() + 1), F.instance_norm(b), F.avg_pool1d(b, 2, 1, 1, True, False),
                F.adaptive_avg_pool1d(b, 2), torch.full((2, 3), 1.5) + x[0, 0], torch.linspace(0, 1, 5) + x[0, 0],
                torch.eye(3) + x[0, 0], x.norm(), c)

class Holder(torch.nn.Module):
    def __init__(self, ts):
        super().__init__()
        for i, t in enumerate(ts):
            self.register_buffer('t%d' % i, t)
    def forward(self):
        return self.t0

x, labels, img = torch.randn(4, 6), torch.tensor([0, 5, 2, 3]), torch.randn(1, 2, 4, 6)
stats, losses = Stats(), LossesUpsampling()
torch.jit.script(stats).save(os.path.join(out, 'stats.pt'))
torch.jit.trace(losses, (x, labels, img)).save(os.path.join(out, 'losses_upsampling.pt'))
torch.jit.script(Random()).save(os.path.join(out, 'random_scripted.pt'))
torch.jit.trace(Random(), (x,), check_trace=False).save(os.path.join(out, 'random_traced.pt'))
torch.jit.script(Holder([x, labels, img] + stats(x) + list(losses(x, labels, img)))).save(
    os.path.join(out, 'new_rows_expected.pt'))
x6, y6, b6 = torch.randn(6, 6), torch.randn(6, 6), torch.randn(2, 3, 5)
more = MoreRows()
torch.jit.trace(more, (x6, y6, b6, labels)).save(os.path.join(out, 'more_rows.pt'))
torch.jit.script(Holder([x6, y6, b6, labels] + list(more(x6, y6, b6, labels)))).save(
    os.path.join(out, 'more_rows_expected.pt'))

def read(path):
    with zipfile.ZipFile(path) as z:
        return [(i, z.read(i.filename)) for i in z.infolist()]

def write(path, entries):
    with zipfile.ZipFile(path, 'w') as z:
        for info, data in entries:
            z.writestr(info, data)

mlp = read(os.path.join(out, 'mlp.pt'))
# fc1.weight's storage (key 0, 512 floats) cut short
write(os.path.join(out, 'truncated_storage.pt'),
      [(i, d[:100] if i.filename.endswith('/data/0') else d) for i, d in mlp])
# fc1.weight claims 33 rows of its 32-row storage
def patch_size(d):
    assert d.count(b'K\x20K\x10') == 1
    return d.replace(b'K\x20K\x10', b'K\x21K\x10')
write(os.path.join(out, 'bad_size.pt'),
      [(i, patch_size(d) if i.filename.endswith('/data.pkl') else d) for i, d in mlp])
# data.pkl that would run a command under plain pickle
class Evil:
    def __reduce__(self):
        return (os.system, ('echo pwned',))
write(os.path.join(out, 'evil.pt'),
      [(i, pickle.dumps(Evil(), protocol=2) if i.filename.endswith('/data.pkl') else d) for i, d in mlp])

os.makedirs(os.path.join(out, 'mutants'))
rng = random.Random(1234)
targets = [k for k, (i, d) in enumerate(mlp) if i.filename.endswith('/data.pkl') or i.filename.endswith('.py')]
for n in range(300):
    entries = list(mlp)
    k = rng.choice(targets)
    info, data = entries[k]
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        pos = rng.randrange(len(data))
        op = rng.randrange(3)
        if op == 0:
            data[pos] = rng.randrange(256)
        elif op == 1:
            del data[pos]
        else:
            data.insert(pos, rng.choice(b'()[]:,.=\n 0123456789abcdefhjqtKMNX\x80\x81\x93'))
    entries[k] = (info, bytes(data))
    write(os.path.join(out, 'mutants', '%03d.pt' % n), entries)
)PY";

bool written() {
  static const bool ok = [] {
    const std::string script = dir().file("write.py");
    write_bytes(script, kWrite);
    const std::string cmd = python() + " " + script + " " + dir().file("") + " > " + script + ".log 2>&1";
    return run_python_in(cmd, dir().file("")) == 0;
  }();
  return ok;
}

class JitTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(written()) << read_bytes(dir().file("write.py.log")); }
};

TEST_F(JitTest, RunsForwardAndOtherMethods) {
  ember::jit::Module m = ember::jit::load(dir().file("mlp.pt"));
  m.eval();
  ember::manual_seed(0);
  const Tensor x = ember::randn({3, 16});
  const Tensor out = m.forward({x}).toTensor();
  // the same arithmetic with the module's own parameters
  const auto p = m.named_parameters();
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].name, "fc1.weight");
  EXPECT_EQ(p[3].name, "fc2.bias");
  const Tensor expected = ember::linear(ember::relu(ember::linear(x, p[0].value, p[1].value)), p[2].value, p[3].value);
  EXPECT_TRUE(ember::allclose(out, expected));
  // an exported method with a default argument, by get_method and run_method
  EXPECT_TRUE(ember::allclose(m.get_method("scaled")({x}).toTensor(), expected * 2.0));
  EXPECT_TRUE(ember::allclose(m.run_method("scaled", x, 3.0).toTensor(), expected * 3.0));
  EXPECT_TRUE(m.has_method("scaled"));
  EXPECT_FALSE(m.has_method("backward"));
  EXPECT_ERROR(m.get_method("backward"), "has no method 'backward'");
}

TEST_F(JitTest, ModuleApi) {
  ember::jit::Module m = ember::jit::load(dir().file("mlp.pt"));
  EXPECT_EQ(m.parameters().size(), 4u);
  EXPECT_TRUE(m.parameters()[0].requires_grad());
  EXPECT_TRUE(m.named_buffers().empty());
  const auto children = m.named_children();
  ASSERT_EQ(children.size(), 2u);
  EXPECT_EQ(children[0].name, "fc1");
  EXPECT_EQ(children[0].value.named_parameters(false).size(), 2u);
  EXPECT_EQ(m.attr("fc1").toObject(), children[0].value._ivalue());
  // libtorch's spellings: a submodule attribute as a Module, and the class name of a module
  EXPECT_TRUE(m.attr("fc1").toModule().attr("weight").toTensor().is_same(children[0].value.attr("weight").toTensor()));
  EXPECT_ERROR(m.attr("fc1").toModule().attr("weight").toModule(), "Object");
  const auto type_name = children[0].value.type()->name();
  ASSERT_TRUE(type_name.has_value());
  EXPECT_EQ(type_name->name(), "Linear");
  EXPECT_EQ(type_name->qualifiedName(), children[0].value.type_name());
  EXPECT_EQ(type_name->prefix() + ".Linear", type_name->qualifiedName());
  EXPECT_EQ(children[1].value.attr("out_features").toInt(), 4);  // a Final constant of the class
  EXPECT_ERROR(m.attr("nope"), "no attribute 'nope'");
  EXPECT_TRUE(m.attr("nope", IValue(7)).toInt() == 7);

  EXPECT_TRUE(m.is_training());  // saved in training mode
  EXPECT_ERROR(ember::jit::freeze(m), "training mode");
  m.eval();
  EXPECT_FALSE(children[1].value.is_training());
  EXPECT_EQ(ember::jit::freeze(m)._ivalue(), m._ivalue());
  EXPECT_EQ(ember::jit::optimize_for_inference(m)._ivalue(), m._ivalue());

  m.to(ember::kDouble);
  EXPECT_EQ(m.parameters()[0].dtype(), ember::kDouble);
  EXPECT_TRUE(m.parameters()[0].requires_grad());
  EXPECT_EQ(m.forward({ember::randn({2, 16}, ember::kDouble)}).toTensor().dtype(), ember::kDouble);
}

// torch::load(module, path) of a TorchScript archive fills a C++ module of the same structure,
// as libtorch's InputArchive does: parameters and buffers by qualified name.
TEST_F(JitTest, TorchLoadFillsAModuleFromAnArchive) {
  namespace nn = ember::nn;
  nn::Sequential layers(nn::Conv2d(nn::Conv2dOptions(3, 4, 3)), nn::ReLU(), nn::Conv2d(nn::Conv2dOptions(4, 2, 1)),
                        nn::BatchNorm2d(2));
  ember::load(layers, dir().file("layers_traced.pt"));
  layers->eval();
  ember::jit::Module traced = ember::jit::load(dir().file("layers_traced.pt"));
  const Tensor x = ember::randn({2, 3, 6, 6});
  EXPECT_TRUE(ember::allclose(layers->forward(x), traced.forward({x}).toTensor(), 1e-5, 1e-6));
  EXPECT_TRUE(layers->named_buffers()["3.running_var"].equal(traced.attr("3").toModule().attr("running_var").toTensor()));

  nn::Sequential other(nn::Conv2d(nn::Conv2dOptions(3, 4, 3)), nn::ReLU(), nn::Conv2d(nn::Conv2dOptions(4, 3, 1)));
  EXPECT_ERROR(ember::load(other, dir().file("layers_traced.pt")), "shape mismatch for \"2.weight\"");
  EXPECT_ERROR(ember::load(other, dir().file("checkpoint.pt")), "not a TorchScript archive");
}

TEST_F(JitTest, LoadsFromStream) {
  std::istringstream in(read_bytes(dir().file("mlp.pt")));
  ember::jit::Module m = ember::jit::load(in);
  EXPECT_EQ(m.forward({ember::ones({1, 16})}).toTensor().sizes(), (std::vector<int64_t>{1, 4}));
}

// One module run from several threads at once: each thread has its own interpreter stack and
// the parsed code is read-only.
TEST_F(JitTest, ForwardFromSeveralThreads) {
  ember::jit::Module m = ember::jit::load(dir().file("mlp.pt"));
  m.eval();
  const Tensor x = ember::randn({4, 16});
  const Tensor expected = m.forward({x}).toTensor();
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i)
        if (!ember::equal(m.forward({x}).toTensor(), expected)) ++mismatches;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST_F(JitTest, IntegerArithmeticAsPython) {
  ember::jit::Module m = ember::jit::load(dir().file("int_ops.pt"));
  const auto r = m.forward({IValue(7), IValue(0)}).toTuple()->elements();
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[0].toInt(), 7 + 5 + 3 + 1);
  EXPECT_EQ(r[1].toInt(), -3);  // 7 // -3
  EXPECT_EQ(r[2].toInt(), -2);  // 7 % -3
  EXPECT_EQ(r[3].toDouble(), 343.0);  // int ** int is a float in TorchScript
  EXPECT_EQ(r[4].toInt(), -7);
  EXPECT_EQ(m.run_method("mul", int64_t{1} << 31, int64_t{1} << 31).toInt(), int64_t{1} << 62);
  EXPECT_ERROR(m.run_method("mul", int64_t{1} << 62, 4), "integer overflow");
  EXPECT_ERROR(m.forward({IValue(int64_t{1} << 40), IValue(0)}), "has more than");
}

TEST(JitIValue, KindsAndAccessors) {
  EXPECT_TRUE(IValue().isNone());
  EXPECT_EQ(IValue(3).toInt(), 3);
  EXPECT_EQ(IValue(int64_t{1} << 40).toInt(), int64_t{1} << 40);
  EXPECT_EQ(IValue(2.5).toDouble(), 2.5);
  EXPECT_EQ(IValue(4).toDouble(), 4.0);
  EXPECT_TRUE(IValue(true).toBool());
  EXPECT_EQ(IValue("hi").toStringRef(), "hi");
  const IValue t = IValue::tuple(ember::ones({2}), 1, "x");
  ASSERT_TRUE(t.isTuple());
  EXPECT_EQ(t.toTuple()->elements().size(), 3u);
  EXPECT_TRUE(t.toTuple()->elements()[0].isTensor());
  const IValue l(std::vector<Tensor>{ember::zeros({1}), ember::ones({2})});
  EXPECT_TRUE(l.isList());
  EXPECT_TRUE(l.isTensorList());
  EXPECT_EQ(l.toTensorList()[1].numel(), 2);
  EXPECT_EQ(IValue(std::vector<int64_t>{1, 2}).toIntVector(), (std::vector<int64_t>{1, 2}));
  ember::jit::GenericDict d;
  d.insert_or_assign(IValue("a"), IValue(1));
  d.insert_or_assign(IValue("b"), IValue(2));
  d.insert_or_assign(IValue("a"), IValue(3));
  const IValue dv(d);
  ASSERT_TRUE(dv.isGenericDict());
  EXPECT_EQ(dv.toGenericDict().size(), 2u);
  EXPECT_EQ(dv.toGenericDict().at(IValue("a")).toInt(), 3);
  EXPECT_EQ(dv.toGenericDict().entries()[1].key().toStringRef(), "b");
  // range-for as over a c10::Dict (c10::impl::GenericDict in libtorch)
  std::string keys;
  int64_t sum = 0;
  const c10::impl::GenericDict& cd = d;
  for (const auto& kv : cd) {
    keys += kv.key().toStringRef();
    sum += kv.value().toInt();
  }
  EXPECT_EQ(keys, "ab");
  EXPECT_EQ(sum, 5);
  EXPECT_EQ(cd.begin()->key().toStringRef(), "a");
  ember::jit::GenericDict empty;
  EXPECT_TRUE(empty.begin() == empty.end());
  EXPECT_ERROR(IValue(1.5).toTensor(), "expected Tensor but got float");
  EXPECT_ERROR(IValue("s").toInt(), "expected int but got str");
  EXPECT_ERROR(t.toList(), "expected List but got Tuple");
  EXPECT_ERROR(l.toIntList(), "expected int");
  std::ostringstream os;
  os << IValue::tuple(1, 2.5, "s", IValue());
  EXPECT_EQ(os.str(), "(1, 2.5, \"s\", None)");
}

TEST_F(JitTest, RefusesMissingFile) {
  EXPECT_ERROR(ember::jit::load(dir().file("absent.pt")), "absent.pt", "cannot open");
}

TEST_F(JitTest, RefusesZipsThatAreNotArchives) {
  EXPECT_ERROR(ember::jit::load(dir().file("checkpoint.pt")), "not a TorchScript archive",
               "load_torch_checkpoint");
  EXPECT_ERROR(ember::jit::load(dir().file("write.py")), "no zip end of central directory");
}

TEST_F(JitTest, RefusesTruncatedStorage) {
  EXPECT_ERROR(ember::jit::load(dir().file("truncated_storage.pt")), "storage '0'", "module.fc1.weight",
               "claims 512 elements but its entry holds 100 bytes");
}

TEST_F(JitTest, RefusesParameterLargerThanItsStorage) {
  EXPECT_ERROR(ember::jit::load(dir().file("bad_size.pt")), "module.fc1.weight", "reach element 527",
               "which holds 512 elements");
}

TEST_F(JitTest, RefusesGlobalsOutsideTheAllowlist) {
  EXPECT_ERROR(ember::jit::load(dir().file("evil.pt")), "global 'posix.system' is not allowed");
}

TEST_F(JitTest, RefusesUnknownBuiltinNamingItsLine) {
  ember::jit::Module m = ember::jit::load(dir().file("unknown_builtin.pt"));
  EXPECT_ERROR(m.forward({ember::ones({3})}), "unknown builtin 'torch.logcumsumexp'", "code/__torch__.py:");
}

TEST_F(JitTest, RunsRecurrentLayersAndReportsTheirErrors) {
  ember::jit::Module scripted = ember::jit::load(dir().file("lstm_scripted.pt"));
  ember::jit::Module traced = ember::jit::load(dir().file("lstm_traced.pt"));
  scripted.eval();
  traced.eval();
  ember::manual_seed(0);
  const Tensor x = ember::randn({2, 5, 8});
  const Tensor y = scripted.forward({x}).toTensor();
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{2, 5, 16}));
  EXPECT_TRUE(ember::allclose(traced.forward({x}).toTensor(), y));
  // unbatched: the scripted code adds the batch dim and removes it again
  const Tensor y0 = scripted.forward({x[0]}).toTensor();
  EXPECT_EQ(y0.sizes(), (std::vector<int64_t>{5, 16}));
  EXPECT_TRUE(ember::allclose(y0, y[0]));
  // the scripted module's own check, raised by its code; torch.lstm's, named with the line
  EXPECT_ERROR(scripted.forward({ember::ones({2, 5, 7})}), "input.size(-1) must be equal to input_size. Expected 8, got 7",
               "RuntimeError");
  EXPECT_ERROR(traced.forward({ember::ones({2, 5, 7})}), "in torch.lstm at code/__torch__/torch/nn/modules/rnn", ".py:");
  // Module::to converts the tensors in place, so the list the scripted LSTM runs on follows
  scripted.to(ember::kDouble);
  EXPECT_EQ(scripted.forward({x.to(ember::kDouble)}).toTensor().dtype(), ember::kDouble);
}

// annotate(int | number, t) converts a 0-dim tensor as TorchScript does, refusing others.
TEST_F(JitTest, ConvertsTensorsGivenForNumbers) {
  ember::jit::Module m = ember::jit::load(dir().file("implicit.pt"));
  const auto r = m.forward({ember::scalar_tensor(1, ember::kLong), ember::ones({2, 3})}).toTuple()->elements();
  EXPECT_EQ(r[0].toTensor().sizes(), (std::vector<int64_t>{1}));
  EXPECT_EQ(r[1].toInt(), 3);
  EXPECT_ERROR(m.forward({ember::ones({2}, ember::kLong), ember::ones({2})}),
               "Cannot input a tensor of dimension other than 0 as a scalar argument", "code/__torch__.py:");
  EXPECT_ERROR(m.forward({ember::scalar_tensor(1.5), ember::ones({2})}),
               "Cannot input a tensor of type Float as an integral argument");
}

// Rows of reductions, sorting, losses, upsampling and random numbers, run from scripted and
// traced code: equal to PyTorch's results (indices and booleans exactly).
TEST_F(JitTest, RunsReductionSortLossUpsampleAndRandomRows) {
  ember::jit::Module expected = ember::jit::load(dir().file("new_rows_expected.pt"));
  auto t = [&](int i) { return expected.attr("t" + std::to_string(i)).toTensor(); };
  const Tensor x = t(0), labels = t(1), img = t(2);
  auto check = [](const Tensor& got, const Tensor& want, const std::string& what) {
    ASSERT_EQ(got.sizes(), want.sizes()) << what;
    ASSERT_EQ(got.dtype(), want.dtype()) << what;
    if (ember::is_floating_type(want.dtype()))
      EXPECT_TRUE(ember::allclose(got, want, 1e-5, 1e-5)) << what << "\n" << got << "\n" << want;
    else
      EXPECT_TRUE(ember::equal(got, want)) << what << "\n" << got << "\n" << want;
  };
  const auto stats = ember::jit::load(dir().file("stats.pt")).forward({x}).toTensorList();
  ASSERT_EQ(stats.size(), 32u);
  for (size_t i = 0; i < stats.size(); ++i) check(stats[i], t(3 + static_cast<int>(i)), "Stats output " + std::to_string(i));
  const auto losses = ember::jit::load(dir().file("losses_upsampling.pt")).forward({x, labels, img}).toTuple()->elements();
  ASSERT_EQ(losses.size(), 10u);
  for (size_t i = 0; i < losses.size(); ++i)
    check(losses[i].toTensor(), t(35 + static_cast<int>(i)), "LossesUpsampling output " + std::to_string(i));
  for (const char* file : {"random_scripted.pt", "random_traced.pt"}) {
    const auto r = ember::jit::load(dir().file(file)).forward({x}).toTuple()->elements();
    ASSERT_EQ(r.size(), 8u) << file;
    const Tensor u = r[0].toTensor(), b = r[2].toTensor(), ri = r[4].toTensor(), rp = r[5].toTensor();
    EXPECT_EQ(u.sizes(), x.sizes());
    EXPECT_TRUE((u >= 0).all().item<bool>() && (u < 1).all().item<bool>()) << file;
    EXPECT_EQ(r[1].toTensor().sizes(), x.sizes());
    EXPECT_TRUE(((b == 0) | (b == 1)).all().item<bool>()) << file;
    EXPECT_EQ(r[3].toTensor().sizes(), (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(ri.dtype(), ember::kLong);
    EXPECT_TRUE((ri >= 0).all().item<bool>() && (ri < 5).all().item<bool>()) << file;
    EXPECT_TRUE(ember::equal(std::get<0>(ember::sort(rp)), ember::arange(6))) << file;
    EXPECT_EQ(r[6].toTensor().sizes(), x.sizes());
    EXPECT_EQ(r[7].toTensor().sizes(), (std::vector<int64_t>{4, 2}));
  }
}

// More rows from traced code: losses as F.* lowers them (broadcast_tensors first), division with a
// rounding mode, in-place forms, pools, instance_norm, factories: equal to PyTorch's results.
TEST_F(JitTest, RunsLossArithmeticInPlaceAndPoolRows) {
  ember::jit::Module expected = ember::jit::load(dir().file("more_rows_expected.pt"));
  auto t = [&](int i) { return expected.attr("t" + std::to_string(i)).toTensor(); };
  const auto out = ember::jit::load(dir().file("more_rows.pt")).forward({t(0), t(1), t(2), t(3)}).toTuple()->elements();
  ASSERT_EQ(out.size(), 31u);
  for (size_t i = 0; i < out.size(); ++i) {
    const Tensor got = out[i].toTensor(), want = t(4 + static_cast<int>(i));
    ASSERT_EQ(got.sizes(), want.sizes()) << "output " << i;
    ASSERT_EQ(got.dtype(), want.dtype()) << "output " << i;
    if (ember::is_floating_type(want.dtype()))
      EXPECT_TRUE(ember::allclose(got, want, 1e-5, 1e-5)) << "output " << i << "\n" << got << "\n" << want;
    else
      EXPECT_TRUE(ember::equal(got, want)) << "output " << i << "\n" << got << "\n" << want;
  }
}

TEST_F(JitTest, RefusesWrongNumberOfInputs) {
  ember::jit::Module m = ember::jit::load(dir().file("mlp.pt"));
  EXPECT_ERROR(m.forward({}), "forward() expects 1 input(s) (x), got 0");
  EXPECT_ERROR(m.forward({ember::ones({1, 16}), ember::ones({1, 16})}), "forward() expects 1 input(s) (x), got 2");
  EXPECT_ERROR(m.run_method("scaled"), "scaled() expects 1 to 2 input(s) (x, k), got 0");
  // an op's own error carries the builtin and the line that called it
  EXPECT_ERROR(m.forward({ember::ones({1, 15})}), "in torch.linear at code/");
  EXPECT_ERROR(m.forward({IValue("text")}), "no overload of torch.linear accepts (str, Tensor, Tensor)");
}

// Mutated archives: every one either loads (and then runs or fails) with ember::Error, or is
// refused with one. A crash or another exception type fails the test.
TEST_F(JitTest, MutatedArchivesFailCleanly) {
  int loaded = 0, refused = 0;
  for (int n = 0; n < 300; ++n) {
    char name[32];
    std::snprintf(name, sizeof name, "mutants/%03d.pt", n);
    try {
      ember::jit::Module m = ember::jit::load(dir().file(name));
      ++loaded;
      m.forward({ember::ones({2, 16})});
    } catch (const ember::Error&) {
      ++refused;
    }
  }
  // byte flips straight into the archive's zip structure and entries
  const std::string good = read_bytes(dir().file("mlp.pt"));
  std::mt19937 rng(42);
  for (int n = 0; n < 300; ++n) {
    std::string bytes = good;
    for (int k = 0; k < 4; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    std::istringstream in(bytes);
    try {
      ember::jit::load(in).forward({ember::ones({2, 16})});
    } catch (const ember::Error&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 100);  // the mutations do reach the checks
  EXPECT_GT(loaded, 0);     // and some survive to run
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
