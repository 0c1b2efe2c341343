// Quantization-aware training: the QAT ConvBn/ConvBnReLU modules (folded, fake-quantized forward,
// folding at convert), eager fuse_modules_qat + prepare_qat + training + convert against Debian's
// python3-torch on the same weights and data, FX graph mode (prepare_qat_fx) giving the eager
// workflow's results, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/fx.h"
#include "ember/fx/quantize.h"
#include "expect_error.h"
#include "temp_dir.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

using ember::Tensor;
namespace nn = ember::nn;
namespace q = ember::quantization;

std::vector<float> values(const Tensor& t) {
  const Tensor c = t.to(ember::kFloat).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

// conv(2 -> 4, 3x3) -> bn -> relu -> flatten -> linear(64 -> 5), between a QuantStub and a DeQuantStub
nn::Sequential eager_net() {
  return nn::Sequential(q::QuantStub(), nn::Conv2d(nn::Conv2dOptions(2, 4, 3)), nn::BatchNorm2d(4), nn::ReLU(),
                        nn::Flatten(), nn::Linear(64, 5), q::DeQuantStub());
}

// The eager net's parameters, in the order the python script reads them.
const std::vector<std::vector<int64_t>> kParameterSizes = {{4, 2, 3, 3}, {4}, {4}, {4}, {5, 64}, {5}};
constexpr int64_t kSteps = 3, kBatch = 6;

// Reads consecutive tensors of the given sizes from a flat tensor.
struct Reader {
  Tensor data;
  int64_t at = 0;
  Tensor take(const std::vector<int64_t>& sizes) {
    int64_t count = 1;
    for (int64_t v : sizes) count *= v;
    Tensor t = data.slice(0, at, at + count).view(sizes);
    at += count;
    return t;
  }
};

void load_parameters(nn::Module& net, Reader& r) {
  ember::NoGradGuard no_grad;
  std::vector<Tensor> params = net.parameters();
  ASSERT_EQ(params.size(), kParameterSizes.size());
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_(r.take(kParameterSizes[i]));
}

// Trains the prepared net kSteps steps of SGD(lr 0.05) on mean squared error; returns each step's
// (fake-quantized) outputs.
std::vector<Tensor> train(nn::Module& net, const std::function<Tensor(const Tensor&)>& forward, const Tensor& x,
                          const Tensor& t) {
  ember::optim::SGD sgd(net.parameters(), ember::optim::SGDOptions(0.05));
  std::vector<Tensor> outputs;
  for (int64_t k = 0; k < kSteps; ++k) {
    const Tensor y = forward(x[k]);
    outputs.push_back(y.detach().clone());
    const Tensor loss = (y - t[k]).square().mean();
    sgd.zero_grad();
    loss.backward();
    sgd.step();
  }
  return outputs;
}

const char* kQatScript = R"PY(
import sys, torch
import torch.nn as nn
from torch.ao.quantization import QuantStub, DeQuantStub, get_default_qat_qconfig, prepare_qat, convert, fuse_modules_qat
d = torch.frombuffer(bytearray(open(sys.argv[1], 'rb').read()), dtype=torch.float32)
sizes = [(4, 2, 3, 3), (4,), (4,), (4,), (5, 64), (5,), (3, 6, 2, 6, 6), (3, 6, 5), (6, 2, 6, 6)]
parts, at = [], 0
for s in sizes:
    n = 1
    for v in s: n *= v
    parts.append(d[at:at + n].reshape(s)); at += n
m = nn.Sequential(QuantStub(), nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(64, 5), DeQuantStub())
with torch.no_grad():
    for p, v in zip(m.parameters(), parts[:6]):
        p.copy_(v)
x, t, x_test = parts[6:]
m.train()
fuse_modules_qat(m, [['1', '2', '3']], inplace=True)
m.qconfig = get_default_qat_qconfig('x86')
prepare_qat(m, inplace=True)
sgd = torch.optim.SGD(m.parameters(), lr=0.05)
out = []
for k in range(3):
    y = m(x[k])
    out.append(y.detach().flatten())
    loss = (y - t[k]).square().mean()
    sgd.zero_grad(); loss.backward(); sgd.step()
m.eval()
convert(m, inplace=True)
y = m(x_test)
conv, fc = m[1], m[5]
out += [y.flatten(), torch.tensor([m[0].scale.item(), float(m[0].zero_point.item()), conv.scale, float(conv.zero_point),
        fc.scale, float(fc.zero_point)]),
        conv.weight().int_repr().float().flatten(), conv.weight().q_per_channel_scales().float(), conv.bias().float(),
        fc.weight().int_repr().float().flatten(), fc.weight().q_per_channel_scales().float()]
open(sys.argv[2], 'wb').write(torch.cat(out).detach().numpy().tobytes())
)PY";

TEST(Qat, EagerFuseModulesQatPrepareQatTrainConvertMatchesPyTorch) {
  TempDir dir("qat_test");
  ember::Generator g(41);
  int64_t n = 0;
  for (const auto& s : kParameterSizes) n += std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
  n += kSteps * kBatch * 2 * 36 + kSteps * kBatch * 5 + kBatch * 2 * 36;
  const Tensor d = ember::randn({n}, &g) * 0.5f;
  write_bytes(dir.file("d.bin"), std::string(static_cast<const char*>(d.data_ptr()), d.nbytes()));
  write_bytes(dir.file("qat.py"), kQatScript);
  const std::string cmd = python() + " " + dir.file("qat.py") + " " + dir.file("d.bin") + " " + dir.file("out.bin") +
                          " 2> " + dir.file("err.txt");
  ASSERT_EQ(run_python_in(cmd, dir.file("")), 0)
      << python() << " (python3-torch) failed: " << read_bytes(dir.file("err.txt"));
  const std::string bytes = read_bytes(dir.file("out.bin"));
  std::vector<float> want(bytes.size() / sizeof(float));
  std::memcpy(want.data(), bytes.data(), want.size() * sizeof(float));
  ASSERT_EQ(want.size(), size_t(kSteps * kBatch * 5 + kBatch * 5 + 6 + 72 + 4 + 4 + 320 + 5));

  nn::Sequential net = eager_net();
  Reader r{d};
  load_parameters(*net, r);
  const Tensor x = r.take({kSteps, kBatch, 2, 6, 6}), t = r.take({kSteps, kBatch, 5}), x_test = r.take({kBatch, 2, 6, 6});
  net->train();
  q::fuse_modules_qat(*net, {{"1", "2", "3"}});
  auto fused = net->ptr<nn::intrinsic::ConvBnReLU2dImpl>(1);
  ASSERT_TRUE(fused);
  EXPECT_EQ(q::prepare_qat(*net), 3);  // the QuantStub, the ConvBnReLU and the Linear
  ASSERT_TRUE(fused->conv->weight_fake_quant);
  EXPECT_TRUE(net->named_buffers().contains("1.0.weight_fake_quant.scale"));
  EXPECT_TRUE(net->named_buffers().contains("5.weight_fake_quant.scale"));
  EXPECT_TRUE(net->named_buffers().contains("5.activation_post_process.scale"));
  const std::vector<Tensor> outputs = train(*net, [&](const Tensor& b) { return net->forward(b); }, x, t);
  net->eval();
  EXPECT_EQ(q::convert(*net), 4);
  EXPECT_FALSE(fused->conv->weight_fake_quant);
  EXPECT_FALSE(net->named_buffers().contains("1.0.weight_fake_quant.scale"));
  const Tensor y = net->forward(x_test);

  size_t at = 0;
  auto next = [&](size_t count) {
    std::vector<float> v(want.begin() + static_cast<std::ptrdiff_t>(at), want.begin() + static_cast<std::ptrdiff_t>(at + count));
    at += count;
    return v;
  };
  // The qparams PyTorch chose, then Ember's.
  const auto conv_q = std::dynamic_pointer_cast<nn::quantized::ConvNdImpl<2>>(fused->static_quantized);
  const auto fc_q = net->ptr<nn::LinearImpl>(5)->static_quantized;
  ASSERT_TRUE(conv_q && fc_q);
  const std::vector<float> training = next(kSteps * kBatch * 5), test = next(kBatch * 5), qparams = next(6);
  const double fc_scale = fc_q->scale(), conv_scale = conv_q->scale();
  // Float sums in another order can move a fake-quantized activation by one quantum, and the
  // Linear's output by that times a row of its weight.
  const double tol = 1.01 * fc_scale + conv_scale * net->ptr<nn::LinearImpl>(5)->weight.abs().sum(1).max().item<double>();
  const auto expect_near_all = [&](const std::vector<float>& got, const std::vector<float>& expected, const char* what) {
    ASSERT_EQ(got.size(), expected.size());
    int close = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], expected[i], tol) << what << " " << i;
      close += std::abs(got[i] - expected[i]) <= 1e-4 * fc_scale * 127;
    }
    EXPECT_GE(close, static_cast<int>(got.size() * 3 / 4)) << what << ": values equal to PyTorch's up to rounding";
  };
  std::vector<float> got;
  for (const Tensor& o : outputs) {
    const std::vector<float> v = values(o);
    got.insert(got.end(), v.begin(), v.end());
  }
  expect_near_all(got, training, "training output");
  expect_near_all(values(y), test, "int8 output");
  EXPECT_FLOAT_EQ(static_cast<float>(std::dynamic_pointer_cast<q::QuantStubImpl>(net->ptr(0))->quantize->scale), qparams[0]);
  EXPECT_EQ(std::dynamic_pointer_cast<q::QuantStubImpl>(net->ptr(0))->quantize->zero_point, qparams[1]);
  EXPECT_NEAR(conv_scale, qparams[2], 1e-4 * qparams[2]);
  EXPECT_NEAR(static_cast<double>(conv_q->zero_point()), qparams[3], 1.0);
  EXPECT_NEAR(fc_scale, qparams[4], 1e-4 * qparams[4]);
  EXPECT_NEAR(static_cast<double>(fc_q->zero_point()), qparams[5], 1.0);
  // the int8 weights (the conv's with the batch norm folded in) and their per-channel scales
  const auto expect_weights = [&](const Tensor& qweight, size_t count, size_t channels, const char* what) {
    const std::vector<float> ints = values(qweight.int_repr()), want_ints = next(count);
    int equal = 0;
    for (size_t i = 0; i < count; ++i) {
      EXPECT_NEAR(ints[i], want_ints[i], 1.0f) << what << " weight " << i;
      equal += ints[i] == want_ints[i];
    }
    EXPECT_GE(equal, static_cast<int>(count * 95 / 100)) << what;
    const std::vector<float> scales = values(qweight.q_per_channel_scales()), want_scales = next(channels);
    for (size_t c = 0; c < channels; ++c) EXPECT_NEAR(scales[c], want_scales[c], 1e-4 * want_scales[c]) << what << " scale " << c;
  };
  expect_weights(conv_q->weight(), 72, 4, "conv");
  const std::vector<float> bias = values(*conv_q->bias()), want_bias = next(4);
  for (size_t c = 0; c < 4; ++c) EXPECT_NEAR(bias[c], want_bias[c], 1e-4) << "folded bias " << c;
  expect_weights(fc_q->weight(), 320, 5, "fc");
  EXPECT_EQ(at, want.size());
}

// The same net as a module of its own for FX (no stubs: prepare_qat_fx places the fake quantizers),
// flattened with Tensor::flatten, which traces as flatten(x, 1) and so takes any batch size.
struct FxNetImpl : nn::Module {
  nn::Conv2d conv{register_module("conv", nn::Conv2d(nn::Conv2dOptions(2, 4, 3)))};
  nn::BatchNorm2d bn{register_module("bn", nn::BatchNorm2d(4))};
  nn::Linear fc{register_module("fc", nn::Linear(64, 5))};
  Tensor forward(const Tensor& x) { return fc(ember::relu(bn(conv(x))).flatten(1)); }
};
EMBER_MODULE(FxNet);

TEST(Qat, GraphModeGivesTheEagerWorkflowsResults) {
  ember::Generator g(5);
  Reader r{ember::randn({1000 + kSteps * kBatch * 2 * 36 + kSteps * kBatch * 5 + 2 * 2 * 36}, &g) * 0.5f};
  nn::Sequential eager = eager_net();
  load_parameters(*eager, r);
  FxNet net;
  Reader again{r.data};
  load_parameters(*net, again);
  const Tensor x = r.take({kSteps, kBatch, 2, 6, 6}), t = r.take({kSteps, kBatch, 5}), x_small = r.take({2, 2, 6, 6});

  eager->train();
  q::fuse_modules_qat(*eager, {{"1", "2", "3"}});
  q::prepare_qat(*eager);
  const std::vector<Tensor> eager_out = train(*eager, [&](const Tensor& b) { return eager->forward(b); }, x, t);

  net->train();
  auto prepared = ember::fx::prepare_qat_fx(net, ember::fx::get_default_qat_qconfig_mapping(), x[0]);
  std::ostringstream code;
  code << prepared->code();
  EXPECT_NE(code.str().find("flatten"), std::string::npos) << code.str();
  std::vector<std::string> kinds;
  for (const auto& child : prepared->children()) kinds.push_back(child->name());
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "ember::nn::intrinsic::ConvBnReLU2dImpl"), kinds.end());
  const std::vector<Tensor> fx_out = train(*prepared, [&](const Tensor& b) { return prepared->forward(b); }, x, t);
  for (int64_t k = 0; k < kSteps; ++k) EXPECT_TRUE(fx_out[k].equal(eager_out[k])) << "step " << k;
  // the model's own parameters trained (shared with the traced module)
  EXPECT_TRUE(net->fc->weight.equal(eager->ptr<nn::LinearImpl>(5)->weight));

  eager->eval();
  q::convert(*eager);
  prepared->eval();
  auto converted = ember::fx::convert_fx(prepared);
  std::ostringstream printed;
  printed << *converted;
  EXPECT_NE(printed.str().find("QuantizedConvReLU2d"), std::string::npos) << printed.str();
  EXPECT_EQ(printed.str().find("weight_fake_quant"), std::string::npos) << printed.str();
  // another batch size than the trace's
  const Tensor y = converted->forward(x_small);
  EXPECT_EQ(y.sizes(), (ember::IntArrayRef{2, 5}));
  EXPECT_TRUE(y.equal(eager->forward(x_small)));
}

TEST(Qat, ConvBnModules) {
  ember::manual_seed(2);
  nn::intrinsic::ConvBnReLU2d m(nn::Conv2d(nn::Conv2dOptions(3, 6, 3).padding(1)), nn::BatchNorm2d(6));
  {
    ember::NoGradGuard no_grad;
    m->bn->running_mean.uniform_(-0.3, 0.3);
    m->bn->running_var.uniform_(0.5, 2.0);
    m->bn->weight.uniform_(0.5, 1.5);
    m->bn->bias.uniform_(-0.2, 0.2);
  }
  std::vector<std::string> keys;
  for (const auto& item : m->named_parameters()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias"}));
  std::ostringstream printed;
  printed << *m;
  EXPECT_NE(printed.str().find("torch::nn::intrinsic::ConvBnReLU2d"), std::string::npos) << printed.str();
  const Tensor x = ember::randn({2, 3, 5, 5});
  m->eval();
  const Tensor reference = ember::relu(m->bn(m->conv(x)));
  EXPECT_TRUE(m(x).equal(reference));
  // the folded conv computes the same in eval mode
  EXPECT_TRUE(ember::relu(m->folded_conv()->forward(x)).allclose(reference, 1e-5, 1e-5));
  // with a weight fake quantizer that does not quantize, the QAT forward is the float one
  auto fq = q::default_per_channel_weight_fake_quant();
  fq->disable_fake_quant();
  m->conv->weight_fake_quant = fq.ptr();
  EXPECT_TRUE(m(x).allclose(reference, 1e-5, 1e-5));
  // quantizing, it stays near, and gradients reach the conv's weight and the batch norm
  fq->enable_fake_quant();
  EXPECT_TRUE(m(x).allclose(reference, 0.05, 0.05));
  m->train();
  m(x).sum().backward();
  EXPECT_GT(m->conv->weight.grad().abs().sum().item<float>(), 0.0f);
  EXPECT_GT(m->bn->weight.grad().abs().sum().item<float>(), 0.0f);
  // the 1-D and 3-D forms, without ReLU
  nn::intrinsic::ConvBn1d c1(nn::Conv1d(nn::Conv1dOptions(2, 3, 3)), nn::BatchNorm1d(3));
  c1->eval();
  const Tensor x1 = ember::randn({2, 2, 7});
  EXPECT_TRUE(c1(x1).equal(c1->bn(c1->conv(x1))));
  nn::intrinsic::ConvBn3d c3(nn::Conv3d(nn::Conv3dOptions(2, 3, 2)), nn::BatchNorm3d(3));
  c3->eval();
  const Tensor x3 = ember::randn({1, 2, 3, 3, 3});
  EXPECT_TRUE(c3(x3).equal(c3->bn(c3->conv(x3))));
}

TEST(Qat, BadInput) {
  expect_error([] { nn::intrinsic::ConvBn2d(nn::Conv2d(nn::Conv2dOptions(3, 6, 3)), nn::BatchNorm2d(5)); },
               {"ConvBn", "5 features", "6 output channels"});
  nn::Sequential net = eager_net();
  net->eval();
  expect_error([&] { q::prepare_qat(*net); }, {"prepare_qat", "training mode"});
  net->train();
  net[2]->eval();
  expect_error([&] { q::fuse_modules_qat(*net, {{"1", "2", "3"}}); }, {"fuse_modules", "same mode"});
  net[2]->train();
  expect_error([&] { q::fuse_modules(*net, {{"1", "2", "3"}}); }, {"fuse_modules", "fuse_modules_qat"});
  q::fuse_modules_qat(*net, {{"1", "2", "3"}});
  q::prepare_qat(*net);
  expect_error([&] { q::prepare_qat(*net); }, "was prepared already");
  expect_error([&] { q::convert(*net); }, "has seen no data");  // no training step yet
  q::QConfig float_weights = q::get_default_qat_qconfig();
  float_weights.weight = [] { return q::default_fake_quant().ptr(); };  // quint8: not a weight's dtype
  nn::Sequential other = eager_net();
  other->train();
  q::prepare_qat(*other, float_weights);
  other->forward(ember::randn({2, 2, 6, 6}));
  other->eval();
  expect_error([&] { q::convert(*other); }, {"Weight observer must have dtype torch.qint8", "QUInt8"});

  FxNet fx_net;
  fx_net->eval();
  expect_error([&] { ember::fx::prepare_qat_fx(fx_net, ember::fx::get_default_qat_qconfig_mapping(), ember::randn({1, 2, 6, 6})); },
               {"prepare_qat_fx", "training mode"});
  fx_net->train();
  expect_error([&] { ember::fx::prepare_fx(fx_net, ember::fx::get_default_qconfig_mapping(), ember::randn({1, 2, 6, 6})); },
               {"prepare_fx", "eval mode", "prepare_qat_fx"});
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
