// Quantized nn ops (pooling, clamp/relu6/hardtanh, sigmoid, hardsigmoid, hardswish, batch_norm2d,
// add/mul/cat with requantization) against Debian's python3-torch run at test time on the same integers:
// bitwise equal int_repr (within one for the requantizing hardswish and add, see kWithinOne) and
// equal output parameters, NCHW and channels_last, quint8 and qint8;
// FloatFunctional through prepare/convert; fuse_modules against the unfused model's output and
// PyTorch's fused structure; bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "expect_error.h"
#include "temp_dir.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

using ember::Tensor;
namespace nnq = ember::nn::quantized;
namespace qf = ember::nn::quantized::functional;

// Reads the inputs x (2, 16, 9, 11), y (same shape), yb (1, 16, 1, 1) and x1 (2, 16, 13) as
// integers with their parameters, runs one op per case and writes each result's int_repr
// (contiguous) and "name scale zero_point" lines.
constexpr const char* kScript = R"PY(
import sys, torch
import torch.nn.functional as F
d, dt, layout = sys.argv[1], sys.argv[2], sys.argv[3]
qdt = torch.quint8 if dt == 'quint8' else torch.qint8
idt = torch.uint8 if dt == 'quint8' else torch.int8
def load(name, shape, scale, zp):
    raw = torch.frombuffer(bytearray(open(d + '/' + name + '.bin', 'rb').read()), dtype=idt).view(shape)
    q = torch._make_per_tensor_quantized_tensor(raw.clone(), scale, zp)
    return q.contiguous(memory_format=torch.channels_last) if layout == 'nhwc' and q.dim() == 4 else q
u = dt == 'quint8'
x = load('x', (2, 16, 9, 11), 0.05, 130 if u else 5)
y = load('y', (2, 16, 9, 11), 0.08, 100 if u else -7)
yb = load('yb', (1, 16, 1, 1), 0.08, 100 if u else -7)
x1 = load('x1', (2, 16, 13), 0.05, 130 if u else 5)
zo = 120 if u else -3
Q = torch.ops.quantized
i = torch.arange(16, dtype=torch.float32)
bn = torch.nn.BatchNorm2d(16).eval()
with torch.no_grad():
    bn.weight.copy_((i + 8) / 16); bn.bias.copy_((i - 8) / 8)
    bn.running_mean.copy_((i - 5) / 4); bn.running_var.copy_((i + 3) / 8)
cases = {
  'max_pool2d_k3s2p1': lambda: F.max_pool2d(x, 3, 2, 1),
  'max_pool2d_k2_dil2_ceil': lambda: F.max_pool2d(x, 2, 2, 0, 2, ceil_mode=True),
  'max_pool1d': lambda: F.max_pool1d(x1, 3, 2, 1),
  'avg_pool2d_k2': lambda: F.avg_pool2d(x, 2),
  'avg_pool2d_k3s2p1_ceil_nopad': lambda: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
  'avg_pool2d_k3s2p1_pad': lambda: F.avg_pool2d(x, 3, 2, 1),
  'avg_pool2d_divisor': lambda: F.avg_pool2d(x, 3, 1, 1, divisor_override=5),
  'avg_pool1d': lambda: F.avg_pool1d(x1, 4, 3, 2),
  'avg_pool2d_unbatched': lambda: F.avg_pool2d(x[1], 2),
  'adaptive_avg_pool2d_3x4': lambda: F.adaptive_avg_pool2d(x, (3, 4)),
  'adaptive_avg_pool2d_1x1': lambda: F.adaptive_avg_pool2d(x, 1),
  'adaptive_avg_pool2d_5x7': lambda: F.adaptive_avg_pool2d(x, (5, 7)),
  'relu6': lambda: F.relu6(x),
  'hardtanh': lambda: F.hardtanh(x, -0.5, 1.5),
  'clamp_min': lambda: torch.clamp(x, min=0.25),
  'sigmoid': lambda: torch.sigmoid(x),
  'hardsigmoid': lambda: F.hardsigmoid(x),
  'hardswish': lambda: Q.hardswish(x, 0.03, zo),
  'add': lambda: Q.add(x, y, 0.1, zo),
  'add_relu': lambda: Q.add_relu(x, y, 0.1, zo),
  'add_broadcast': lambda: Q.add(x, yb, 0.1, zo),
  'mul': lambda: Q.mul(x, y, 0.3, zo),
  'mul_broadcast_first': lambda: Q.mul(yb, x, 0.3, zo),
  'cat': lambda: Q.cat([x, y], 1, 0.07, zo),
  'cat_dim0': lambda: Q.cat([x, y], 0, 0.07, zo),
  'cat_first_qparams': lambda: Q.cat([x, y], 3, None, None),
  'add_scalar_shift': lambda: Q.add_scalar(x, 0.35),
  'add_scalar_above': lambda: Q.add_scalar(x, 7.0),
  'add_scalar_below': lambda: Q.add_scalar(x, -9.0),
  'mul_scalar': lambda: Q.mul_scalar(x, 1.7),
  'mul_scalar_negative': lambda: Q.mul_scalar(x, -0.6),
  'mul_scalar_zero': lambda: Q.mul_scalar(x, 0.0),
  'batch_norm2d': lambda: Q.batch_norm2d(x, bn.weight, bn.bias, bn.running_mean, bn.running_var, bn.eps, 0.06, zo),
}
with open(d + '/out.txt', 'w') as out:
    for name, f in cases.items():
        r = f()
        open(d + '/' + name + '.out', 'wb').write(r.int_repr().contiguous().numpy().tobytes())
        out.write('%s %r %d %d\n' % (name, r.q_scale(), r.q_zero_point(),
                                     int(r.dim() == 4 and r.is_contiguous(memory_format=torch.channels_last))))
)PY";

Tensor load_case_input(const Tensor& values, double scale, int64_t zp, ember::ScalarType dtype) {
  return ember::quantize_per_tensor(values, scale, zp, dtype);
}

struct Inputs {
  Tensor x, y, yb, x1;
};

Inputs make_inputs(ember::ScalarType dtype, bool nhwc) {
  ember::Generator g(7);
  const bool u = dtype == ember::kQUInt8;
  Inputs in;
  in.x = load_case_input(ember::randn({2, 16, 9, 11}, &g) * 2.5f, 0.05, u ? 130 : 5, dtype);
  in.y = load_case_input(ember::randn({2, 16, 9, 11}, &g) * 3.0f, 0.08, u ? 100 : -7, dtype);
  in.yb = load_case_input(ember::randn({1, 16, 1, 1}, &g) * 3.0f, 0.08, u ? 100 : -7, dtype);
  in.x1 = load_case_input(ember::randn({2, 16, 13}, &g) * 2.5f, 0.05, u ? 130 : 5, dtype);
  if (nhwc) {
    for (Tensor* t : {&in.x, &in.y, &in.yb}) *t = t->contiguous(ember::MemoryFormat::ChannelsLast);
  }
  return in;
}

std::string int_bytes(const Tensor& q) {
  const Tensor r = q.int_repr().contiguous();
  return std::string(static_cast<const char*>(r.data_ptr()), r.nbytes());
}

// The script's batch norm: exact float32 parameters and statistics.
ember::nn::BatchNorm2d test_batch_norm() {
  ember::nn::BatchNorm2d bn(16);
  bn->eval();
  const Tensor i = ember::arange(16, ember::TensorOptions().dtype(ember::kFloat));
  ember::NoGradGuard no_grad;
  bn->weight.copy_((i + 8) / 16);
  bn->bias.copy_((i - 8) / 8);
  bn->running_mean.copy_((i - 5) / 4);
  bn->running_var.copy_((i + 3) / 8);
  return bn;
}

std::map<std::string, std::function<Tensor()>> ember_cases(const Inputs& in, bool u) {
  namespace F = ember::nn::functional;
  const int64_t zo = u ? 120 : -3;
  return {
      {"max_pool2d_k3s2p1", [&] { return ember::max_pool2d(in.x, 3, 2, 1); }},
      {"max_pool2d_k2_dil2_ceil", [&] { return ember::max_pool2d(in.x, 2, 2, 0, 2, true); }},
      {"max_pool1d", [&] { return ember::max_pool1d(in.x1, 3, 2, 1); }},
      {"avg_pool2d_k2", [&] { return ember::avg_pool2d(in.x, 2); }},
      {"avg_pool2d_k3s2p1_ceil_nopad", [&] { return ember::avg_pool2d(in.x, 3, 2, 1, true, false); }},
      {"avg_pool2d_k3s2p1_pad", [&] { return ember::avg_pool2d(in.x, 3, 2, 1); }},
      {"avg_pool2d_divisor", [&] { return ember::avg_pool2d(in.x, 3, 1, 1, false, true, 5); }},
      {"avg_pool1d", [&] { return ember::avg_pool1d(in.x1, 4, 3, 2); }},
      {"avg_pool2d_unbatched", [&] { return ember::avg_pool2d(in.x.select(0, 1), 2); }},
      {"adaptive_avg_pool2d_3x4", [&] { return ember::adaptive_avg_pool2d(in.x, {3, 4}); }},
      {"adaptive_avg_pool2d_1x1", [&] { return ember::adaptive_avg_pool2d(in.x, {1, 1}); }},
      {"adaptive_avg_pool2d_5x7", [&] { return ember::adaptive_avg_pool2d(in.x, {5, 7}); }},
      {"relu6", [&] { return ember::relu6(in.x); }},
      {"hardtanh", [&] { return F::hardtanh(in.x, F::HardtanhFuncOptions().min_val(-0.5).max_val(1.5)); }},
      {"clamp_min", [&] { return ember::clamp(in.x, std::optional<ember::Scalar>(0.25)); }},
      {"sigmoid", [&] { return ember::sigmoid(in.x); }},
      {"hardsigmoid", [&] { return ember::hardsigmoid(in.x); }},
      {"hardswish", [&, zo] { return qf::hardswish(in.x, 0.03, zo); }},
      {"add", [&, zo] { return qf::add(in.x, in.y, 0.1, zo); }},
      {"add_relu", [&, zo] { return qf::add_relu(in.x, in.y, 0.1, zo); }},
      {"add_broadcast", [&, zo] { return qf::add(in.x, in.yb, 0.1, zo); }},
      {"mul", [&, zo] { return qf::mul(in.x, in.y, 0.3, zo); }},
      {"mul_broadcast_first", [&, zo] { return qf::mul(in.yb, in.x, 0.3, zo); }},  // squeeze-excitation's
      {"cat", [&, zo] { return qf::cat({in.x, in.y}, 1, 0.07, zo); }},
      {"cat_dim0", [&, zo] { return qf::cat({in.x, in.y}, 0, 0.07, zo); }},
      {"cat_first_qparams", [&] { return qf::cat({in.x, in.y}, 3, std::nullopt, std::nullopt); }},
      {"add_scalar_shift", [&] { return qf::add_scalar(in.x, 0.35); }},
      {"add_scalar_above", [&] { return qf::add_scalar(in.x, 7.0); }},
      {"add_scalar_below", [&] { return qf::add_scalar(in.x, -9.0); }},
      {"mul_scalar", [&] { return qf::mul_scalar(in.x, 1.7); }},
      {"mul_scalar_negative", [&] { return qf::mul_scalar(in.x, -0.6); }},
      {"mul_scalar_zero", [&] { return qf::mul_scalar(in.x, 0.0); }},
      {"batch_norm2d", [&, zo] { return nnq::BatchNorm2dImpl::from_float(*test_batch_norm(), 0.06, zo)->forward(in.x); }},
  };
}

// The requantizing ops whose PyTorch integers can be one off from Ember's (see below); mul
// requantizes the product of the integers in both of PyTorch's loops, and so bitwise in Ember's.
const std::set<std::string> kWithinOne = {"hardswish", "add", "add_relu", "add_broadcast"};

void check_against_pytorch(ember::ScalarType dtype, bool nhwc) {
  const bool u = dtype == ember::kQUInt8;
  const std::string tag = std::string(u ? "quint8" : "qint8") + (nhwc ? "_nhwc" : "_nchw");
  TempDir dir("quantized_ops_test_" + tag);
  const Inputs in = make_inputs(dtype, nhwc);
  write_bytes(dir.file("x.bin"), int_bytes(in.x));
  write_bytes(dir.file("y.bin"), int_bytes(in.y));
  write_bytes(dir.file("yb.bin"), int_bytes(in.yb));
  write_bytes(dir.file("x1.bin"), int_bytes(in.x1));
  write_bytes(dir.file("ops.py"), kScript);
  const std::string cmd = python() + " " + dir.file("ops.py") + " " + dir.file("") + " " + (u ? "quint8" : "qint8") +
                          " " + (nhwc ? "nhwc" : "nchw") + " 2> " + dir.file("err.txt");
  ASSERT_EQ(run_python_in(cmd, dir.file("")), 0)
      << python() << " (python3-torch) failed: " << read_bytes(dir.file("err.txt"));
  std::stringstream lines(read_bytes(dir.file("out.txt")));
  const auto cases = ember_cases(in, u);
  std::string name;
  double scale = 0;
  int64_t zp = 0, channels_last = 0;
  size_t checked = 0;
  while (lines >> name >> scale >> zp >> channels_last) {
    SCOPED_TRACE(tag + " " + name);
    ASSERT_EQ(cases.count(name), 1u);
    const Tensor got = cases.at(name)();
    ASSERT_TRUE(got.is_quantized());
    EXPECT_EQ(got.dtype(), dtype);
    EXPECT_DOUBLE_EQ(got.q_scale(), scale);
    EXPECT_EQ(got.q_zero_point(), zp);
    EXPECT_EQ(got.dim() == 4 && got.is_contiguous(ember::MemoryFormat::ChannelsLast), channels_last == 1);
    const std::string want = read_bytes(dir.file(name + ".out")), have = int_bytes(got);
    ASSERT_EQ(have.size(), want.size());
    int64_t differ = 0, worst = 0;
    for (size_t i = 0; i < have.size(); ++i) {
      const int64_t a = u ? int64_t{static_cast<uint8_t>(have[i])} : int64_t{static_cast<int8_t>(have[i])};
      const int64_t b = u ? int64_t{static_cast<uint8_t>(want[i])} : int64_t{static_cast<int8_t>(want[i])};
      differ += a != b;
      worst = std::max(worst, std::abs(a - b));
    }
    if (kWithinOne.count(name)) {
      // PyTorch rounds these with one formula in its vector loops and another in their scalar
      // remainders (the last elements of each inner loop, broadcast loops); Ember with the
      // vector one throughout (docs/quantization.md)
      EXPECT_LE(worst, 1) << differ << " integers differ from PyTorch's out of " << have.size();
      EXPECT_LE(differ * 10, static_cast<int64_t>(have.size())) << differ << " integers differ out of " << have.size();
    } else {
      EXPECT_EQ(differ, 0) << "integers differing from PyTorch's out of " << have.size();
    }
    ++checked;
  }
  EXPECT_EQ(checked, cases.size());
}

TEST(QuantizedOps, MatchPyTorchQUInt8Contiguous) { check_against_pytorch(ember::kQUInt8, false); }
TEST(QuantizedOps, MatchPyTorchQUInt8ChannelsLast) { check_against_pytorch(ember::kQUInt8, true); }
TEST(QuantizedOps, MatchPyTorchQInt8Contiguous) { check_against_pytorch(ember::kQInt8, false); }
TEST(QuantizedOps, MatchPyTorchQInt8ChannelsLast) { check_against_pytorch(ember::kQInt8, true); }

TEST(QuantizedOps, Modules) {
  const Tensor x = ember::quantize_per_tensor(ember::linspace(-8, 8, 33), 0.1, 100, ember::kQUInt8);
  nnq::ReLU6 relu6;
  const Tensor r = relu6(x);
  EXPECT_EQ(r.q_scale(), 0.1);
  EXPECT_TRUE(ember::equal(r.int_repr(), ember::relu6(x).int_repr()));
  EXPECT_EQ(r.dequantize().max().item<float>(), 6.0f);
  EXPECT_EQ(r.dequantize().min().item<float>(), 0.0f);
  nnq::Hardswish hs(0.05, 10);
  const Tensor h = hs(x);
  EXPECT_EQ(h.q_scale(), 0.05);
  EXPECT_EQ(h.q_zero_point(), 10);
  EXPECT_TRUE(ember::equal(h.int_repr(), qf::hardswish(x, 0.05, 10).int_repr()));
  nnq::QFunctional qfn(0.2, 5);
  EXPECT_TRUE(ember::equal(qfn->add(x, x).int_repr(), qf::add(x, x, 0.2, 5).int_repr()));
  EXPECT_TRUE(ember::equal(qfn->cat({x, x}).int_repr(), qf::cat({x, x}, 0, 0.2, 5).int_repr()));
}

// A float model with a FloatFunctional: prepare observes its results, convert quantizes them.
struct AddNet : ember::nn::Module {
  AddNet() {
    quant = register_module("quant", ember::quantization::QuantStub());
    ff = register_module("ff", nnq::FloatFunctional());
    dequant = register_module("dequant", ember::quantization::DeQuantStub());
  }
  Tensor forward(const Tensor& a) {
    const Tensor q = quant(a);
    return dequant(ff->add_relu(ff->mul(q, q), q));
  }
  ember::quantization::QuantStub quant{nullptr};
  nnq::FloatFunctional ff{nullptr};
  ember::quantization::DeQuantStub dequant{nullptr};
};

TEST(QuantizedOps, FloatFunctionalPrepareConvert) {
  ember::Generator g(3);
  const Tensor data = ember::randn({4, 8}, &g);
  AddNet net;
  const Tensor want = ember::relu(data * data + data);
  EXPECT_TRUE(ember::allclose(net.forward(data), want));  // float, no observer yet
  EXPECT_EQ(ember::quantization::prepare(net), 2);        // the QuantStub and the FloatFunctional
  ASSERT_TRUE(net.ff->activation_post_process);
  EXPECT_TRUE(ember::allclose(net.forward(data), want));
  EXPECT_EQ(ember::quantization::convert(net), 3);
  ASSERT_TRUE(net.ff->qfunctional);
  EXPECT_FALSE(net.ff->activation_post_process);
  const Tensor got = net.forward(data);
  // each op's output rounded to the observed range's quantum, the inputs' too
  const double tolerance = 4 * net.ff->qfunctional->scale;
  EXPECT_LE((got - want).abs().max().item<double>(), tolerance);
  // add_scalar and mul_scalar: float before convert, quantized::add_scalar/mul_scalar after
  const Tensor q = ember::quantize_per_tensor(data, 0.02, 128, ember::kQUInt8);
  EXPECT_TRUE(ember::equal(net.ff->add_scalar(q, 0.5).int_repr(), qf::add_scalar(q, 0.5).int_repr()));
  EXPECT_EQ(net.ff->mul_scalar(q, -2.0).q_scale(), qf::mul_scalar(q, -2.0).q_scale());
  nnq::FloatFunctional plain;
  EXPECT_TRUE(ember::allclose(plain->add_scalar(data, 0.5), data + 0.5));
  EXPECT_TRUE(ember::allclose(plain->mul_scalar(data, -2.0), data * -2.0));
  std::ostringstream s;
  net.ff->pretty_print(s);
  EXPECT_NE(s.str().find("QFunctional(scale="), std::string::npos);
}

TEST(QuantizedOps, BadInput) {
  const Tensor f = ember::randn({1, 2, 4, 4});
  const Tensor qu = ember::quantize_per_tensor(f, 0.1, 3, ember::kQUInt8);
  const Tensor qs = ember::quantize_per_tensor(f, 0.1, 3, ember::kQInt8);
  const Tensor pc = ember::quantize_per_channel(f, ember::tensor(std::vector<double>{0.1, 0.2}),
                                                ember::tensor(std::vector<int64_t>{0, 1}), 1, ember::kQUInt8);
  const Tensor q32 = ember::quantize_per_tensor(f, 0.1, 3, ember::kQInt32);
  expect_error([&] { qf::add(f, f, 0.1, 0); }, {"quantized::add", "expected a quantized tensor"});
  expect_error([&] { qf::hardswish(f, 0.1, 0); }, {"quantized::hardswish", "expected a quantized tensor"});
  expect_error([&] { qf::add(qu, qs, 0.1, 0); }, {"quantized::add", "same type"});
  expect_error([&] { qf::mul(qu, pc, 0.1, 0); }, {"quantized::mul", "per tensor", "per_channel_affine"});
  expect_error([&] { ember::max_pool2d(pc, 2); }, {"max_pool2d", "per tensor"});
  expect_error([&] { ember::avg_pool2d(q32, 2); }, {"avg_pool2d", "quint8 or qint8"});
  expect_error([&] { ember::sigmoid(pc); }, {"sigmoid", "per tensor"});
  expect_error([&] { qf::add(qu, qu, -1.0, 0); }, {"quantized::add", "scale must be finite and positive"});
  expect_error([&] { qf::add(qu, qu, 0.1, 300); }, {"quantized::add", "zero_point 300", "[0, 255]"});
  expect_error([&] { qf::add(qu, qu.narrow(3, 0, 3), 0.1, 0); }, {"quantized::add", "size"});
  expect_error([&] { qf::add_scalar(qu, std::nan("")); }, {"quantized::add_scalar", "finite"});
  expect_error([&] { qf::mul_scalar(qu, HUGE_VAL); }, {"quantized::mul_scalar", "finite and positive"});
  expect_error([&] { qf::mul_scalar(f, 2.0); }, {"quantized::mul_scalar", "expected a quantized tensor"});
  // an output scale whose float inverse overflows: saturated integers, no undefined conversion
  const Tensor tiny = qf::add(qu, qu, 1e-40, 0);
  EXPECT_EQ(tiny.int_repr().max().item<int64_t>(), 255);
  EXPECT_EQ(tiny.int_repr().min().item<int64_t>(), 0);
  expect_error([&] { qf::cat({qu, qs}, 0, 0.1, 0); }, {"quantized::cat", "same"});
  expect_error([&] { ember::hardswish(qu); }, "hardswish");  // PyTorch has no aten::hardswish for quantized
  expect_error([&] { ember::sigmoid_(const_cast<Tensor&>(qu)); }, "sigmoid_");
  expect_error([&] { ember::clamp(qu, std::optional<Tensor>(f), std::optional<Tensor>()); },
               {"clamp", "scalar bounds"});
  expect_error([&] { nnq::ReLU6()(f); }, {"quantized::ReLU6", "expected a quantized input"});
  nnq::BatchNorm2d qbn(2);
  expect_error([&] { qbn(qu.select(0, 0)); }, {"quantized::batch_norm2d", "rank 4", "[2, 4, 4]"});
  expect_error([&] { nnq::BatchNorm2d(3)(qu); }, {"quantized::batch_norm2d", "weight", "2 channels", "[3]"});
  nnq::FloatFunctional ff;
  ff->qfunctional = std::make_shared<nnq::QFunctionalImpl>(0.1, 0);
  expect_error([&] { ff->add(f, f); }, {"quantized::add", "expected a quantized tensor"});
}

// ---- fuse_modules ---------------------------------------------------------------------------

// The same model in python3-torch, fused with the same groups: its state dict's names and the
// fused modules' class names, one per line.
constexpr const char* kFuseScript = R"PY(
import sys, torch
import torch.nn as nn
from torch.ao.quantization import fuse_modules
m = nn.Sequential(
    nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU()),
    nn.Conv2d(8, 8, 3, bias=False), nn.BatchNorm2d(8),
    nn.Conv2d(8, 8, 1), nn.ReLU(),
    nn.BatchNorm2d(8), nn.ReLU(),
    nn.Flatten(), nn.Linear(288, 16), nn.BatchNorm1d(16),
    nn.Linear(16, 10), nn.ReLU()).eval()
fuse_modules(m, [['0.0', '0.1', '0.2'], ['1', '2'], ['3', '4'], ['5', '6'], ['8', '9'], ['10', '11']], inplace=True)
with open(sys.argv[1], 'w') as out:
    for k in m.state_dict().keys():
        out.write('key %s\n' % k)
    for name, mod in m.named_modules():
        if name:
            out.write('module %s %s\n' % (name, type(mod).__name__))
)PY";

ember::nn::Sequential fuse_model() {
  namespace nn = ember::nn;
  nn::Sequential m(nn::Sequential(nn::Conv2d(nn::Conv2dOptions(3, 8, 3).padding(1)), nn::BatchNorm2d(8), nn::ReLU()),
                   nn::Conv2d(nn::Conv2dOptions(8, 8, 3).bias(false)), nn::BatchNorm2d(8), nn::Conv2d(8, 8, 1),
                   nn::ReLU(), nn::BatchNorm2d(8), nn::ReLU(), nn::Flatten(), nn::Linear(288, 16),
                   nn::BatchNorm1d(16), nn::Linear(16, 10), nn::ReLU());
  // batch norms with statistics and affine parameters far from the identity
  ember::Generator g(21);
  ember::NoGradGuard no_grad;
  m->apply([&](nn::Module& mod) {
    for (const auto& item : mod.named_buffers(false)) {
      Tensor t = item.value();
      if (item.key() == "running_mean") t.copy_(ember::randn(t.sizes(), &g));
      if (item.key() == "running_var") t.copy_(ember::rand(t.sizes(), &g) + 0.5f);
    }
    if (dynamic_cast<nn::BatchNorm1dImpl*>(&mod) || dynamic_cast<nn::BatchNorm2dImpl*>(&mod)) {
      for (const auto& item : mod.named_parameters(false)) {
        Tensor t = item.value();
        t.copy_(ember::randn(t.sizes(), &g) * 0.5f + 1.0f);
      }
    }
  });
  m->eval();
  return m;
}

const std::vector<std::vector<std::string>> kGroups = {{"0.0", "0.1", "0.2"}, {"1", "2"},  {"3", "4"},
                                                       {"5", "6"},          {"8", "9"},  {"10", "11"}};

TEST(FuseModules, EvalModelKeepsItsOutputAndPyTorchsStructure) {
  auto m = fuse_model();
  ember::Generator g(4);
  const Tensor x = ember::randn({2, 3, 8, 8}, &g);
  const Tensor want = m->forward(x);
  ember::quantization::fuse_modules(*m, kGroups);
  const Tensor got = m->forward(x);
  EXPECT_TRUE(ember::allclose(got, want, 1e-4, 1e-5)) << (got - want).abs().max().item<float>();

  TempDir dir("quantized_ops_test_fuse");
  write_bytes(dir.file("fuse.py"), kFuseScript);
  const std::string cmd = python() + " " + dir.file("fuse.py") + " " + dir.file("out.txt") + " 2> " + dir.file("err.txt");
  ASSERT_EQ(run_python_in(cmd, dir.file("")), 0)
      << python() << " (python3-torch) failed: " << read_bytes(dir.file("err.txt"));
  std::stringstream lines(read_bytes(dir.file("out.txt")));
  std::vector<std::string> want_keys;
  std::map<std::string, std::string> want_types;
  std::string kind, name, type;
  while (lines >> kind >> name) {
    if (kind == "key") {
      want_keys.push_back(name);
    } else {
      lines >> type;
      want_types[name] = type;
    }
  }
  std::vector<std::string> keys;
  for (const auto& item : m->named_parameters()) keys.push_back(item.key());
  for (const auto& item : m->named_buffers()) keys.push_back(item.key());
  std::sort(keys.begin(), keys.end());
  std::sort(want_keys.begin(), want_keys.end());
  EXPECT_EQ(keys, want_keys);
  ASSERT_FALSE(want_types.empty());
  for (const auto& item : m->named_modules("", false)) {
    const std::string& n = item.key();
    const std::string ours = item.value()->name();
    ASSERT_EQ(want_types.count(n), 1u) << n;
    // "torch::nn::intrinsic::ConvReLU2dImpl" for PyTorch's "ConvReLU2d"
    EXPECT_NE(ours.find(want_types[n] + "Impl"), std::string::npos) << n << ": " << ours << " vs " << want_types[n];
  }
}

TEST(FuseModules, TrainingModeAndBadInput) {
  namespace nn = ember::nn;
  {  // conv-relu, linear-relu and bn-relu fuse in training mode too; conv-bn asks for eval
    nn::Sequential m(nn::Conv2d(2, 4, 3), nn::ReLU(), nn::BatchNorm2d(4), nn::ReLU(), nn::Conv2d(4, 4, 1),
                     nn::BatchNorm2d(4));
    ember::quantization::fuse_modules(*m, {{"0", "1"}, {"2", "3"}});
    EXPECT_NE(m->ptr(0)->name().find("ConvReLU2d"), std::string::npos);
    EXPECT_NE(m->ptr(2)->name().find("BNReLU2d"), std::string::npos);
    EXPECT_TRUE(m->ptr(0)->is_training());
    expect_error([&] { ember::quantization::fuse_modules(*m, {{"4", "5"}}); }, {"fuse_modules", "prepare_qat", "eval"});
    m->ptr(5)->eval();
    expect_error([&] { ember::quantization::fuse_modules(*m, {{"4", "5"}}); }, {"fuse_modules", "same mode"});
  }
  auto m = fuse_model();
  expect_error([&] { ember::quantization::fuse_modules(*m, {{"1", "nope"}}); }, {"fuse_modules", "no submodule 'nope'"});
  expect_error([&] { ember::quantization::fuse_modules(*m, {{"0.7", "1"}}); }, {"fuse_modules", "'0.7'", "no child '7'"});
  expect_error([&] { ember::quantization::fuse_modules(*m, {{"2", "1"}}); }, {"fuse_modules", "Cannot fuse modules"});
  expect_error([&] { ember::quantization::fuse_modules(*m, {{"8", "10"}}); }, {"fuse_modules", "Cannot fuse modules"});
  expect_error([&] { ember::quantization::fuse_modules(*m, {{"1"}}); }, {"fuse_modules", "at least two"});
  expect_error([&] { ember::quantization::fuse_modules(*m, {{"1", "2"}, {"2", "3"}}); },
               {"fuse_modules", "more than one group"});
  // a refused call leaves the model unchanged: the valid first group was not applied
  expect_error([&] { ember::quantization::fuse_modules(*m, {{"3", "4"}, {"5", "7"}}); }, "Cannot fuse modules");
  EXPECT_NE(m->ptr(3)->name().find("Conv2d"), std::string::npos);
  EXPECT_EQ(m->ptr(3)->name().find("ConvReLU"), std::string::npos);
  // a module held by a custom module's member cannot be swapped under its forward()
  struct Net : nn::Module {
    Net() {
      conv = register_module("conv", nn::Conv2d(1, 1, 1));
      relu = register_module("relu", nn::ReLU());
    }
    nn::Conv2d conv{nullptr};
    nn::ReLU relu{nullptr};
  } net;
  expect_error([&] { ember::quantization::fuse_modules(net, {{"conv", "relu"}}); },
               {"fuse_modules", "not of a Sequential"});
}

}  // namespace
}  // namespace EMBER_UNITY_FILE
