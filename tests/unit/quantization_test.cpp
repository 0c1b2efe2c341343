// Quantization: quantized dtypes and tensors (values, parameters, views, clone, cat, printing, bad
// input), the refusal of ordinary ops, fake quantization's straight-through gradient, observers
// against the qparams Debian's python3-torch computes at test time on the same data, and dynamic
// quantization of Linear layers (nn::quantized::dynamic::Linear, quantize_dynamic).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

#include "ember/ember.h"
#include "expect_error.h"
#include "temp_dir.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

using ember::Tensor;
namespace q = ember::quantization;

std::vector<float> values(const Tensor& t) {
  const Tensor c = t.to(ember::kFloat).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}
std::vector<int64_t> ints(const Tensor& t) {
  const Tensor c = t.to(ember::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

TEST(QuantizedDtype, Basics) {
  EXPECT_EQ(ember::element_size(ember::kQInt8), 1u);
  EXPECT_EQ(ember::element_size(ember::kQUInt8), 1u);
  EXPECT_EQ(ember::element_size(ember::kQInt32), 4u);
  EXPECT_TRUE(ember::is_quantized_type(ember::kQUInt8));
  EXPECT_FALSE(ember::is_quantized_type(ember::kChar));
  EXPECT_FALSE(ember::is_signed_type(ember::kQUInt8));
  EXPECT_STREQ(ember::to_string(ember::kQInt32), "QInt32");
  EXPECT_EQ(ember::toString(ember::kPerChannelAffine), "per_channel_affine");
  expect_error([] { ember::promote_types(ember::kQInt8, ember::kFloat); }, {"promote_types", "quantized"});
}

TEST(QuantizedTensor, PerTensorValues) {
  const Tensor x = ember::tensor(std::vector<float>{0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 1000.f, -1000.f, 0.2f});
  const Tensor qx = ember::quantize_per_tensor(x, 1.0, 0, ember::kQInt8);
  EXPECT_TRUE(qx.is_quantized());
  EXPECT_EQ(qx.dtype(), ember::kQInt8);
  EXPECT_EQ(qx.qscheme(), ember::kPerTensorAffine);
  EXPECT_EQ(qx.q_scale(), 1.0);
  EXPECT_EQ(qx.q_zero_point(), 0);
  EXPECT_EQ(qx.int_repr().dtype(), ember::kChar);
  // halves round to even; the range clamps
  EXPECT_EQ(ints(qx.int_repr()), (std::vector<int64_t>{0, 2, 2, 0, -2, 127, -128, 0}));
  EXPECT_EQ(values(qx.dequantize()), (std::vector<float>{0, 2, 2, 0, -2, 127, -128, 0}));
  const Tensor qu = ember::quantize_per_tensor(x, 0.5, 10, ember::kQUInt8);
  EXPECT_EQ(qu.int_repr().dtype(), ember::kByte);
  EXPECT_EQ(ints(qu.int_repr()), (std::vector<int64_t>{11, 13, 15, 9, 7, 255, 0, 10}));
  const Tensor q32 = ember::quantize_per_tensor(x, 0.001, 0, ember::kQInt32);
  EXPECT_EQ(ints(q32.int_repr())[5], 1000000);
  EXPECT_EQ(ember::_make_per_tensor_quantized_tensor(qu.int_repr(), 0.5, 10).dequantize().equal(qu.dequantize()),
            true);
}

TEST(QuantizedTensor, PerChannel) {
  const Tensor w = ember::tensor(std::vector<float>{1, -2, 3, 0.5f, 0.25f, -1}).view({2, 3});
  const Tensor scales = ember::tensor(std::vector<double>{0.5, 0.25});
  const Tensor zps = ember::tensor(std::vector<int64_t>{1, -1});
  const Tensor qw = ember::quantize_per_channel(w, scales, zps, 0, ember::kQInt8);
  EXPECT_EQ(qw.qscheme(), ember::kPerChannelAffine);
  EXPECT_EQ(qw.q_per_channel_axis(), 0);
  EXPECT_EQ(qw.q_per_channel_scales().dtype(), ember::kDouble);
  EXPECT_EQ(ints(qw.q_per_channel_zero_points()), (std::vector<int64_t>{1, -1}));
  EXPECT_EQ(ints(qw.int_repr()), (std::vector<int64_t>{3, -3, 7, 1, 0, -5}));
  EXPECT_EQ(values(qw.dequantize()), (std::vector<float>{1, -2, 3, 0.5f, 0.25f, -1}));
  // views move the axis with the channels
  EXPECT_EQ(qw.t().q_per_channel_axis(), 1);
  EXPECT_EQ(values(qw.t().dequantize()), values(w.t()));
  EXPECT_EQ(qw.unsqueeze(0).q_per_channel_axis(), 1);
  EXPECT_EQ(values(qw.t().contiguous().dequantize()), values(w.t()));
  EXPECT_EQ(qw.t().contiguous().q_per_channel_axis(), 1);
  // select along the axis: one channel, per tensor; across it the scheme stays per channel
  EXPECT_EQ(qw[1].qscheme(), ember::kPerTensorAffine);
  EXPECT_EQ(qw[1].q_scale(), 0.25);
  EXPECT_EQ(qw.select(1, 2).q_per_channel_axis(), 0);
  EXPECT_EQ(values(qw.select(1, 2).dequantize()), (std::vector<float>{3, -1}));
  expect_error([&] { qw.view({6}); }, {"view", "channel axis"});
  expect_error([&] { ember::cat({qw, qw}); }, {"cat", "per-tensor"});
}

TEST(QuantizedTensor, ViewsCloneCatKeepParameters) {
  const Tensor x = ember::arange(24, ember::TensorOptions().dtype(ember::kFloat)).view({2, 3, 4}) * 0.1f;
  const Tensor qx = ember::quantize_per_tensor(x, 0.1, 5, ember::kQUInt8);
  for (const Tensor& v : {qx.permute({2, 0, 1}), qx.transpose(0, 1), qx.reshape({6, 4}), qx.select(0, 1),
                          qx.slice(2, 1, 3), qx.view({-1}), qx.clone(), qx.permute({2, 0, 1}).contiguous(),
                          qx.flatten(), qx.unsqueeze(1), qx.narrow(1, 1, 2), qx.expand({2, 2, 3, 4})}) {
    EXPECT_TRUE(v.is_quantized());
    EXPECT_EQ(v.q_scale(), 0.1);
    EXPECT_EQ(v.q_zero_point(), 5);
  }
  EXPECT_EQ(values(qx.permute({2, 0, 1}).contiguous().dequantize()), values(qx.dequantize().permute({2, 0, 1})));
  EXPECT_EQ(qx.transpose(0, 2).storage_offset(), 0);
  const Tensor joined = ember::cat({qx, qx}, 1);
  EXPECT_EQ(joined.sizes().vec(), (std::vector<int64_t>{2, 6, 4}));
  EXPECT_EQ(joined.q_zero_point(), 5);
  EXPECT_EQ(values(joined.dequantize()), values(ember::cat({qx.dequantize(), qx.dequantize()}, 1)));
  // different parameters: requantized to the first's
  const Tensor other = ember::quantize_per_tensor(x, 0.2, 0, ember::kQUInt8);
  EXPECT_EQ(ember::cat({qx, other}).q_scale(), 0.1);
  expect_error([&] { ember::cat({qx, x}); }, {"cat", "quantized"});
}

// PyTorch's copy_ into a quantized tensor: a quantized source's integers and parameters (what
// loading a quantized model's state does), a float one quantized with the destination's.
TEST(QuantizedTensor, CopyIntoAQuantizedTensor) {
  const Tensor x = ember::randn({3, 4});
  Tensor dst = ember::quantize_per_tensor(ember::zeros({3, 4}), 0.5, 3, ember::kQUInt8);
  const Tensor src = ember::quantize_per_tensor(x, 0.02, 100, ember::kQUInt8);
  const int64_t version = dst._version();
  dst.copy_(src);
  EXPECT_GT(dst._version(), version);
  EXPECT_EQ(dst.q_scale(), 0.02);
  EXPECT_EQ(dst.q_zero_point(), 100);
  EXPECT_TRUE(dst.int_repr().equal(src.int_repr()));
  dst.copy_(x.t().t());  // float: quantized with dst's parameters
  EXPECT_TRUE(dst.int_repr().equal(src.int_repr()));
  Tensor per_channel = ember::quantize_per_channel(x, ember::tensor({0.1, 0.2, 0.3}, ember::kDouble),
                                                   ember::tensor({0, 0, 0}), 0, ember::kQInt8);
  per_channel.copy_(x * 2);
  EXPECT_TRUE(per_channel.int_repr().equal(
      ember::quantize_per_channel(x * 2, ember::tensor({0.1, 0.2, 0.3}, ember::kDouble), ember::tensor({0, 0, 0}), 0,
                                  ember::kQInt8)
          .int_repr()));
  expect_error([&] { dst.copy_(ember::quantize_per_tensor(x, 0.1, 0, ember::kQInt8)); }, "same dtype and qscheme");
  expect_error([&] { dst.copy_(x.to(ember::kDouble)); }, "only works with kFloat as source");
  Tensor f = ember::zeros({3, 4});
  expect_error([&] { f.copy_(src); }, "dequantize() it first");
}

TEST(QuantizedTensor, ReluClampsAtTheZeroPoint) {
  // PyTorch's quantized relu: the integers below the zero point become it, the parameters stay
  const Tensor x = ember::tensor(std::vector<float>{-1.0f, -0.2f, 0.0f, 0.3f, 1.2f});
  const Tensor qx = ember::quantize_per_tensor(x, 0.1, 5, ember::kQUInt8);
  const Tensor r = ember::relu(qx);
  EXPECT_EQ(r.dtype(), ember::kQUInt8);
  EXPECT_EQ(r.q_scale(), 0.1);
  EXPECT_EQ(r.q_zero_point(), 5);
  EXPECT_EQ(ints(r.int_repr()), (std::vector<int64_t>{5, 5, 5, 8, 17}));
  EXPECT_EQ(ints(qx.int_repr()), (std::vector<int64_t>{0, 3, 5, 8, 17}));  // unchanged
  Tensor in_place = qx.clone();
  ember::relu_(in_place);
  EXPECT_TRUE(in_place.int_repr().equal(r.int_repr()));
  EXPECT_EQ(ints(ember::nn::ReLU()(qx).int_repr()), ints(r.int_repr()));
  const Tensor qc = ember::quantize_per_channel(x.view({5, 1}), ember::full({5}, 0.1, ember::TensorOptions().dtype(ember::kDouble)),
                                                ember::zeros({5}, ember::TensorOptions().dtype(ember::kLong)), 0,
                                                ember::kQInt8);
  expect_error([&] { (void)ember::relu(qc); }, {"relu", "per tensor"});
}

TEST(QuantizedTensor, OrdinaryOpsRefuseThem) {
  const Tensor qx = ember::quantize_per_tensor(ember::ones({3}), 0.1, 0, ember::kQInt8);
  expect_error([&] { (void)(qx + qx); }, {"add", "quantized", "dequantize"});
  expect_error([&] { (void)qx.sum(); }, {"sum", "quantized"});
  expect_error([&] { (void)ember::log(qx); }, {"log", "quantized"});  // sigmoid takes them (quantized_ops_test)
  expect_error([&] { (void)qx.to(ember::kFloat); }, {"to", "dequantize"});
  {
    ember::NoGradGuard no_grad;
    expect_error([&] { (void)qx.mul(2); }, {"mul", "quantized"});
  }
  {
    ember::InferenceMode inference;
    expect_error([&] { (void)qx.exp(); }, {"exp", "quantized"});
  }
  expect_error([&] { (void)qx.requires_grad_(); }, "requires_grad_");
}

TEST(QuantizedTensor, Printing) {
  const Tensor qx = ember::quantize_per_tensor(ember::tensor(std::vector<float>{0.5f, 1.0f}), 0.5, 2, ember::kQUInt8);
  std::ostringstream os;
  os << qx;
  // (libtorch prints the scale in the values' fixed format; quantization_parity compares the whole text)
  EXPECT_NE(os.str().find("QuantizedCPUQUInt8Type{2}, qscheme: per_tensor_affine, scale: 0.5000, zero_point: 2"),
            std::string::npos)
      << os.str();
}

TEST(QuantizedTensor, EmptyOfAQuantizedDtype) {
  // PyTorch's torch.empty(..., dtype=torch.qint8): per tensor affine, scale 1, zero point 0
  for (ember::ScalarType t : {ember::kQInt8, ember::kQUInt8, ember::kQInt32}) {
    const Tensor e = ember::empty({2, 3}, ember::TensorOptions().dtype(t));
    ASSERT_TRUE(e.is_quantized());
    EXPECT_EQ(e.dtype(), t);
    EXPECT_EQ(e.sizes(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(e.qscheme(), ember::kPerTensorAffine);
    EXPECT_EQ(e.q_scale(), 1.0);
    EXPECT_EQ(e.q_zero_point(), 0);
    EXPECT_EQ(e.int_repr().dtype(), t == ember::kQInt8 ? ember::kChar : t == ember::kQUInt8 ? ember::kByte : ember::kInt);
  }
}

TEST(QuantizedTensor, BadInput) {
  const Tensor x = ember::ones({2, 3});
  expect_error([&] { ember::quantize_per_tensor(x, 0.1, 0, ember::kChar); }, {"quantize_per_tensor", "quantized dtype"});
  expect_error([&] { ember::quantize_per_tensor(x, 0.0, 0, ember::kQInt8); }, {"quantize_per_tensor", "scale"});
  expect_error([&] { ember::quantize_per_tensor(x, -1.0, 0, ember::kQInt8); }, "scale must be finite and positive");
  expect_error([&] { ember::quantize_per_tensor(x, INFINITY, 0, ember::kQInt8); }, "scale must be finite");
  expect_error([&] { ember::quantize_per_tensor(x, NAN, 0, ember::kQInt8); }, "scale must be finite");
  expect_error([&] { ember::quantize_per_tensor(x, 0.1, 200, ember::kQInt8); }, {"zero_point 200", "[-128, 127]"});
  expect_error([&] { ember::quantize_per_tensor(x, 0.1, -1, ember::kQUInt8); }, "zero_point -1");
  expect_error([&] { ember::quantize_per_tensor(x.to(ember::kDouble), 0.1, 0, ember::kQInt8); },
               "Quantize only works on Float Tensor");
  const Tensor s = ember::tensor(std::vector<double>{0.1, 0.2, 0.3});
  const Tensor z = ember::zeros({3}, ember::TensorOptions().dtype(ember::kLong));
  expect_error([&] { ember::quantize_per_channel(x, s, z, 2, ember::kQInt8); }, {"quantize_per_channel", "axis"});
  expect_error([&] { ember::quantize_per_channel(x, s, z, 0, ember::kQInt8); }, "length of scales");
  expect_error([&] { ember::quantize_per_channel(x, s.slice(0, 0, 2), z, 1, ember::kQInt8); }, "length of scales");
  expect_error([&] { ember::quantize_per_channel(x, s * -1, z, 1, ember::kQInt8); }, "scale must be finite");
  expect_error([&] { ember::quantize_per_channel(x, s, z + 300, 1, ember::kQInt8); }, "zero_point 300");
  expect_error([&] { x.q_scale(); }, {"q_scale", "quantized tensor"});
  const Tensor qc = ember::quantize_per_channel(x, s, z, 1, ember::kQInt8);
  expect_error([&] { qc.q_scale(); }, {"q_scale", "PerTensorAffine"});
  expect_error([&] { ember::quantize_per_tensor(x, 0.1, 0, ember::kQInt8).q_per_channel_axis(); },
               "PerChannelAffine");
  expect_error([&] { ember::fake_quantize_per_tensor_affine(x, 0.1, 0, 5, 3); }, "quant_min");
  expect_error([&] { ember::fake_quantize_per_tensor_affine(x, 0.1, 9, 0, 3); }, "`zero_point` must be between");
  expect_error([&] { ember::fake_quantize_per_channel_affine(x, s.to(ember::kFloat), z, 0, 0, 255); },
               "not consistent");
}

TEST(FakeQuantize, StraightThroughGradient) {
  const Tensor x = ember::tensor(std::vector<float>{-20, -0.31f, 0.04f, 0.26f, 5, 12.7f, 12.8f, 30}).requires_grad_();
  // scale 0.1, zero point 0, int8 range: [-12.8, 12.7] passes the gradient
  const Tensor y = ember::fake_quantize_per_tensor_affine(x, 0.1, 0, -128, 127);
  EXPECT_EQ(values(y), (std::vector<float>{-12.8f, -0.3f, 0.0f, 0.3f, 5.0f, 12.7f, 12.7f, 12.7f}));
  y.sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{0, 1, 1, 1, 1, 1, 0, 0}));
  // per channel: each row its own scale and clamp range
  const Tensor w = ember::tensor(std::vector<float>{1, 3, -1, -3}).view({2, 2}).requires_grad_();
  const Tensor yw = ember::fake_quantize_per_channel_affine(w, ember::tensor(std::vector<float>{1, 0.5f}),
                                                            ember::tensor(std::vector<int32_t>{0, 0}), 0, -2, 1);
  EXPECT_EQ(values(yw), (std::vector<float>{1, 1, -1, -1}));
  (yw * ember::tensor(std::vector<float>{1, 2, 3, 4}).view({2, 2})).sum().backward();
  EXPECT_EQ(values(w.grad()), (std::vector<float>{1, 0, 3, 0}));
}

// ---- observers against python3-torch --------------------------------------------------------

const char* kObserverScript = R"PY(
import sys, torch
from torch.ao.quantization import observer as o
data = torch.frombuffer(bytearray(open(sys.argv[1], 'rb').read()), dtype=torch.float32).reshape(3, 8, 5, 3)
# batches whose ranges are whole numbers: PyTorch 1.13's HistogramObserver passes histc int(min) and
# int(max), which Ember does not copy (see observer.cpp); on such data the two agree
hist_data = torch.frombuffer(bytearray(open(sys.argv[2], 'rb').read()), dtype=torch.float32).reshape(5, 300)
hist_cases = [
  ('histogram', o.HistogramObserver()),
  ('histogram_reduce', o.HistogramObserver(reduce_range=True)),
  ('histogram_sym_qint8', o.HistogramObserver(dtype=torch.qint8, qscheme=torch.per_tensor_symmetric)),
  ('histogram_bins256', o.HistogramObserver(bins=256, upsample_rate=16, dtype=torch.qint8)),
]
for name, obs in hist_cases:
    for batch in hist_data:
        obs(batch)
    s, z = obs.calculate_qparams()
    print(name, ','.join(float(v).hex() for v in s.flatten().tolist()), ','.join(float(v).hex() for v in z.flatten().tolist()))
cases = [
  ('minmax', o.MinMaxObserver()),
  ('minmax_sym_qint8', o.MinMaxObserver(dtype=torch.qint8, qscheme=torch.per_tensor_symmetric)),
  ('minmax_sym_quint8', o.MinMaxObserver(dtype=torch.quint8, qscheme=torch.per_tensor_symmetric)),
  ('minmax_reduce', o.MinMaxObserver(reduce_range=True)),
  ('minmax_qint8_reduce', o.MinMaxObserver(dtype=torch.qint8, reduce_range=True)),
  ('minmax_custom', o.MinMaxObserver(dtype=torch.qint8, quant_min=-8, quant_max=7)),
  ('moving', o.MovingAverageMinMaxObserver()),
  ('moving_03', o.MovingAverageMinMaxObserver(averaging_constant=0.3, dtype=torch.qint8)),
  ('perchannel_sym', o.PerChannelMinMaxObserver(dtype=torch.qint8, qscheme=torch.per_channel_symmetric)),
  ('perchannel_affine_axis1', o.PerChannelMinMaxObserver(ch_axis=1)),
  ('perchannel_float', o.PerChannelMinMaxObserver(qscheme=torch.per_channel_affine_float_qparams)),
  ('moving_perchannel', o.MovingAveragePerChannelMinMaxObserver(ch_axis=2, dtype=torch.qint8, averaging_constant=0.2)),
]
for name, obs in cases:
    for batch in data:
        obs(batch)
    s, z = obs.calculate_qparams()
    print(name, ','.join(float(v).hex() for v in s.flatten().tolist()), ','.join(float(v).hex() for v in z.flatten().tolist()))
)PY";

std::shared_ptr<q::ObserverBase> make_observer(const std::string& name) {
  using O = q::ObserverOptions;
  using ember::kQInt8;
  using ember::kQUInt8;
  if (name == "minmax") return std::make_shared<q::MinMaxObserverImpl>();
  if (name == "minmax_sym_qint8")
    return std::make_shared<q::MinMaxObserverImpl>(O().dtype(kQInt8).qscheme(ember::kPerTensorSymmetric));
  if (name == "minmax_sym_quint8")
    return std::make_shared<q::MinMaxObserverImpl>(O().dtype(kQUInt8).qscheme(ember::kPerTensorSymmetric));
  if (name == "minmax_reduce") return std::make_shared<q::MinMaxObserverImpl>(O().reduce_range(true));
  if (name == "minmax_qint8_reduce") return std::make_shared<q::MinMaxObserverImpl>(O().dtype(kQInt8).reduce_range(true));
  if (name == "minmax_custom") return std::make_shared<q::MinMaxObserverImpl>(O().dtype(kQInt8).quant_min(-8).quant_max(7));
  if (name == "moving") return std::make_shared<q::MovingAverageMinMaxObserverImpl>();
  if (name == "moving_03")
    return std::make_shared<q::MovingAverageMinMaxObserverImpl>(O().averaging_constant(0.3).dtype(kQInt8));
  if (name == "perchannel_sym")
    return std::make_shared<q::PerChannelMinMaxObserverImpl>(O().dtype(kQInt8).qscheme(ember::kPerChannelSymmetric));
  if (name == "perchannel_affine_axis1") return std::make_shared<q::PerChannelMinMaxObserverImpl>(O().ch_axis(1));
  if (name == "perchannel_float")
    return std::make_shared<q::PerChannelMinMaxObserverImpl>(O().qscheme(ember::kPerChannelAffineFloatQParams));
  if (name == "histogram") return std::make_shared<q::HistogramObserverImpl>();
  if (name == "histogram_reduce") return std::make_shared<q::HistogramObserverImpl>(O().reduce_range(true));
  if (name == "histogram_sym_qint8")
    return std::make_shared<q::HistogramObserverImpl>(O().dtype(kQInt8).qscheme(ember::kPerTensorSymmetric));
  if (name == "histogram_bins256")
    return std::make_shared<q::HistogramObserverImpl>(O().bins(256).upsample_rate(16).dtype(kQInt8));
  if (name == "moving_perchannel")
    return std::make_shared<q::MovingAveragePerChannelMinMaxObserverImpl>(
        O().ch_axis(2).dtype(kQInt8).averaging_constant(0.2));
  return nullptr;
}

std::vector<double> parse_hex(const std::string& s) {
  std::vector<double> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::strtod(item.c_str(), nullptr));
  return out;
}

// Five batches for the histogram observers, each spanning whole numbers exactly (its first two
// values are its ends): the range grows twice (by a power of two, so the histogram so far is spread
// over the new bins), shrinks (the new values land in the bins there are), and grows on one side.
Tensor histogram_batches(ember::Generator& g) {
  const float ends[5][2] = {{-2, 2}, {-4, 4}, {-1, 3}, {-8, 8}, {-8, 24}};
  Tensor batches = ember::empty({5, 300});
  for (int64_t b = 0; b < 5; ++b) {
    const float lo = ends[b][0], hi = ends[b][1];
    // most of the mass near the middle, as activations have: the search trims the tails
    Tensor row = (ember::randn({300}, &g) * ((hi - lo) / 8) + (lo + hi) / 2).clamp(lo, hi);
    row[0] = lo;
    row[1] = hi;
    batches[b].copy_(row);
  }
  return batches;
}

TEST(Observers, MatchPyTorch) {
  TempDir dir("quantization_test");
  ember::Generator g(5);
  const Tensor data = ember::randn({3, 8, 5, 3}, &g) * 2 + 0.3f;
  const Tensor hist_data = histogram_batches(g);
  write_bytes(dir.file("data.bin"), std::string(static_cast<const char*>(data.data_ptr()), data.nbytes()));
  write_bytes(dir.file("hist.bin"), std::string(static_cast<const char*>(hist_data.data_ptr()), hist_data.nbytes()));
  write_bytes(dir.file("observers.py"), kObserverScript);
  const std::string cmd = python() + " " + dir.file("observers.py") + " " + dir.file("data.bin") + " " +
                          dir.file("hist.bin") + " > " + dir.file("out.txt") + " 2> " + dir.file("err.txt");
  ASSERT_EQ(run_python_in(cmd, dir.file("")), 0)
      << python() << " (python3-torch) failed: " << read_bytes(dir.file("err.txt"));
  std::stringstream out(read_bytes(dir.file("out.txt")));
  std::string name, scales, zero_points;
  int cases = 0;
  while (out >> name >> scales >> zero_points) {
    ++cases;
    auto obs = make_observer(name);
    ASSERT_TRUE(obs) << name;
    const Tensor& batches = name.rfind("histogram", 0) == 0 ? hist_data : data;
    for (int64_t b = 0; b < batches.size(0); ++b) obs->forward(batches[b]);
    const auto [s, z] = obs->calculate_qparams();
    const std::vector<double> want_s = parse_hex(scales), want_z = parse_hex(zero_points);
    ASSERT_EQ(s.numel(), static_cast<int64_t>(want_s.size())) << name;
    const std::vector<float> got_s = values(s);
    const std::vector<float> got_z = values(z.to(ember::kFloat));
    for (size_t i = 0; i < want_s.size(); ++i) {
      EXPECT_EQ(got_s[i], static_cast<float>(want_s[i])) << name << " scale " << i;
      EXPECT_EQ(got_z[i], static_cast<float>(want_z[i])) << name << " zero point " << i;
    }
  }
  EXPECT_EQ(cases, 16);
}

TEST(Observers, HistogramKeepsEveryValueAndRefusesBadInput) {
  // ranges that are not whole numbers (PyTorch 1.13 would drop the values beyond int(min) and
  // int(max)): every value observed stays counted as the range grows and shrinks
  ember::Generator g(11);
  q::HistogramObserver obs;
  int64_t seen = 0;
  float lowest = std::numeric_limits<float>::infinity(), highest = -lowest;
  for (float spread : {0.3f, 1.7f, 0.9f, 5.5f}) {
    const Tensor x = ember::randn({40, 25}, &g) * spread - 0.25f;
    obs(x);
    seen += x.numel();
    lowest = std::min(lowest, x.min().item<float>());
    highest = std::max(highest, x.max().item<float>());
    EXPECT_NEAR(obs->histogram.sum().item<double>(), static_cast<double>(seen), 1e-3 * static_cast<double>(seen));
    EXPECT_EQ(obs->min_val.item<float>(), lowest);  // the range grows at its top by whole old ranges
    EXPECT_GE(obs->max_val.item<float>(), highest);
  }
  const auto [s, z] = obs->calculate_qparams();
  // the chosen range trims the tails but keeps the bulk: within the observed one, around zero
  const float lo = (0 - z.item<int64_t>()) * s.item<float>(), hi = (255 - z.item<int64_t>()) * s.item<float>();
  EXPECT_LE(obs->min_val.item<float>(), lo + s.item<float>());
  EXPECT_GE(obs->max_val.item<float>(), hi - s.item<float>());
  EXPECT_LT(lo, -2.0f);
  EXPECT_GT(hi, 2.0f);
  // a constant batch first, then a wider one
  q::HistogramObserver flat;
  flat(ember::full({10}, 3.0));
  flat(ember::arange(0, 10).to(ember::kFloat));
  EXPECT_FLOAT_EQ(flat->min_val.item<float>(), 0.0f);
  EXPECT_NEAR(flat->histogram.sum().item<double>(), 20.0, 1e-4);

  expect_error([] { q::HistogramObserver(q::ObserverOptions().qscheme(ember::kPerChannelAffine)); }, "per-tensor");
  expect_error([] { q::HistogramObserver(q::ObserverOptions().bins(0)); }, "bins must be positive");
  expect_error(
      [] {
        q::HistogramObserver h;
        h->histogram.resize_({16});  // as a state dict of an observer with 16 bins would leave it
        h(ember::ones({4}));
      },
      "histogram buffer has 16 bins");
  expect_error(
      [] {
        q::HistogramObserver h;
        h(ember::tensor(std::vector<float>{1, std::numeric_limits<float>::quiet_NaN()}));
      },
      "must be finite");
}

TEST(Observers, DefaultsAndBadInput) {
  q::MinMaxObserver obs;
  auto [s, z] = obs->calculate_qparams();  // nothing observed: scale 1, zero point 0
  EXPECT_EQ(values(s), std::vector<float>{1});
  EXPECT_EQ(ints(z), std::vector<int64_t>{0});
  EXPECT_EQ(obs->quant_min(), 0);
  EXPECT_EQ(obs->quant_max(), 255);
  expect_error([] { q::MinMaxObserver(q::ObserverOptions().qscheme(ember::kPerTensorSymmetric).reduce_range(true)); },
               "Cannot reduce range for symmetric quantization for quint8");
  expect_error([] { q::MinMaxObserver(q::ObserverOptions().qscheme(ember::kPerChannelAffine)); }, "per-tensor");
  expect_error([] { q::MinMaxObserver(q::ObserverOptions().dtype(ember::kFloat)); }, "qint8, quint8");
  expect_error([] { q::MinMaxObserver(q::ObserverOptions().quant_min(1).quant_max(5)); }, "must include 0");
  const q::QConfig qconfig = q::get_default_qconfig("x86");
  EXPECT_EQ(qconfig.weight()->qscheme(), ember::kPerChannelSymmetric);
  EXPECT_EQ(qconfig.activation()->quant_max(), 127);
  EXPECT_TRUE(std::dynamic_pointer_cast<q::HistogramObserverImpl>(qconfig.activation()));
  const q::QConfig qat = q::get_default_qat_qconfig("x86");
  EXPECT_TRUE(std::dynamic_pointer_cast<q::FusedMovingAvgObsFakeQuantizeImpl>(qat.activation()));
  EXPECT_EQ(qat.weight()->qscheme(), ember::kPerChannelSymmetric);
  EXPECT_EQ(qat.weight()->quant_min(), -128);
  EXPECT_EQ(q::get_default_qat_qconfig("x86", 0).activation()->quant_max(), 127);
  expect_error([] { q::get_default_qat_qconfig("x86", 2); }, "version must be 0 or 1");
  expect_error([] { q::FusedMovingAvgObsFakeQuantize(std::make_shared<q::MinMaxObserverImpl>()); },
               "only works with MovingAverageMinMaxObserver");
  expect_error([] { q::get_default_qconfig("qnnpack"); }, "get_default_qconfig");
}

// ---- FakeQuantize modules against python3-torch -------------------------------------------------

const char* kFakeQuantizeScript = R"PY(
import sys, torch
from torch.ao.quantization import fake_quantize as fq
from torch.ao.quantization import get_default_qat_qconfig
x = torch.frombuffer(bytearray(open(sys.argv[1], 'rb').read()), dtype=torch.float32).reshape(3, 8, 6)
qat = get_default_qat_qconfig('x86')
out = []
for m in [fq.default_fake_quant(), fq.default_weight_fake_quant(), fq.default_per_channel_weight_fake_quant(),
          qat.activation(), qat.weight()]:
    for i, batch in enumerate(x):
        if i == 2:
            m.disable_observer()  # the third batch uses the second's qparams
        out.append(m(batch).flatten())
    out += [m.scale.float(), m.zero_point.float(), torch.tensor([float(m.quant_min), float(m.quant_max)])]
open(sys.argv[2], 'wb').write(torch.cat(out).numpy().tobytes())
)PY";

TEST(FakeQuantizeModule, MatchesPyTorchDefaults) {
  TempDir dir("quantization_test");
  ember::Generator g(17);
  const Tensor x = ember::randn({3, 8, 6}, &g) * 1.5f + 0.2f;
  write_bytes(dir.file("x.bin"), std::string(static_cast<const char*>(x.data_ptr()), x.nbytes()));
  write_bytes(dir.file("fq.py"), kFakeQuantizeScript);
  const std::string cmd = python() + " " + dir.file("fq.py") + " " + dir.file("x.bin") + " " + dir.file("out.bin") +
                          " 2> " + dir.file("err.txt");
  ASSERT_EQ(run_python_in(cmd, dir.file("")), 0)
      << python() << " (python3-torch) failed: " << read_bytes(dir.file("err.txt"));
  const std::string bytes = read_bytes(dir.file("out.bin"));
  std::vector<float> want(bytes.size() / sizeof(float));
  std::memcpy(want.data(), bytes.data(), want.size() * sizeof(float));

  std::vector<float> got;
  const auto append = [&](const Tensor& t) {
    const std::vector<float> v = values(t);
    got.insert(got.end(), v.begin(), v.end());
  };
  const q::QConfig qat = q::get_default_qat_qconfig("x86");
  for (const auto& m : {q::default_fake_quant().ptr(), q::default_weight_fake_quant().ptr(),
                        q::default_per_channel_weight_fake_quant().ptr(),
                        std::dynamic_pointer_cast<q::FakeQuantizeImpl>(qat.activation()),
                        std::dynamic_pointer_cast<q::FakeQuantizeImpl>(qat.weight())}) {
    ASSERT_TRUE(m);
    for (int64_t i = 0; i < 3; ++i) {
      if (i == 2) m->disable_observer();
      append(m->forward(x[i]).flatten());
    }
    append(m->scale);
    append(m->zero_point);
    append(ember::tensor(std::vector<float>{static_cast<float>(m->quant_min()), static_cast<float>(m->quant_max())}));
  }
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "value " << i;
}

TEST(FakeQuantizeModule, TogglesStateDictAndGradient) {
  q::FakeQuantize fq = q::default_fake_quant();
  EXPECT_EQ(fq->quant_min(), 0);
  EXPECT_EQ(fq->quant_max(), 127);  // reduce_range halves [0, 255]
  EXPECT_FALSE(fq->is_per_channel());
  EXPECT_TRUE(q::default_per_channel_weight_fake_quant()->is_per_channel());
  std::vector<std::string> names;
  for (const auto& item : fq->named_buffers()) names.push_back(item.key());
  EXPECT_EQ(names, (std::vector<std::string>{"fake_quant_enabled", "observer_enabled", "scale", "zero_point",
                                             "activation_post_process.min_val", "activation_post_process.max_val"}));

  Tensor x = ember::linspace(-1, 3, 9).requires_grad_();
  Tensor y = fq(x);
  EXPECT_GT(fq->scale.item<float>(), 0.0f);
  // the straight-through gradient: 1 where the value was inside the quantized range
  y.sum().backward();
  EXPECT_EQ(values(x.grad()), std::vector<float>(9, 1.0f));
  // fake quantization off: the input comes back as it is, the observer still sees it
  fq->disable_fake_quant();
  const Tensor wide = ember::linspace(-5, 5, 7);
  EXPECT_TRUE(fq(wide).equal(wide));
  EXPECT_LT(fq->activation_post_process->min_val.item<float>(), -1.0f);
  // observer off: the scale stays
  fq->enable_fake_quant();
  fq->disable_observer();
  const float kept = fq->scale.item<float>();
  Tensor far = (wide * 10).requires_grad_();  // [-50, 50]: beyond the kept range at both ends
  fq(far).sum().backward();
  EXPECT_EQ(fq->scale.item<float>(), kept);
  EXPECT_EQ(values(far.grad()), (std::vector<float>{0, 0, 0, 1, 0, 0, 0}));

  expect_error(
      [] {
        q::FakeQuantize(std::make_shared<q::PerChannelMinMaxObserverImpl>(
            q::ObserverOptions().qscheme(ember::kPerChannelAffineFloatQParams)));
      },
      "FakeQuantize");
}

// ---- static quantized Linear against python3-torch -------------------------------------------

const char* kStaticLinearScript = R"PY(
import sys, torch
from torch.ao.quantization.observer import PerChannelMinMaxObserver
d = torch.frombuffer(bytearray(open(sys.argv[1], 'rb').read()), dtype=torch.float32)
x, w, b = d[:6 * 16].reshape(6, 16), d[96:96 + 8 * 16].reshape(8, 16), d[224:232]
obs = PerChannelMinMaxObserver(dtype=torch.qint8, qscheme=torch.per_channel_symmetric)
obs(w)
s, z = obs.calculate_qparams()
lin = torch.ao.nn.quantized.Linear(16, 8)
lin.set_weight_bias(torch.quantize_per_channel(w, s.double(), z, 0, torch.qint8), b)
lin.scale, lin.zero_point = 0.1, 128
y = lin(torch.quantize_per_tensor(x, 0.03, 120, torch.quint8))
open(sys.argv[2], 'wb').write(y.int_repr().numpy().tobytes())
)PY";

TEST(StaticQuantization, LinearMatchesPyTorch) {
  TempDir dir("quantization_test");
  ember::Generator g(23);
  const Tensor data = ember::randn({232}, &g);
  write_bytes(dir.file("d.bin"), std::string(static_cast<const char*>(data.data_ptr()), data.nbytes()));
  write_bytes(dir.file("lin.py"), kStaticLinearScript);
  const std::string cmd = python() + " " + dir.file("lin.py") + " " + dir.file("d.bin") + " " + dir.file("y.bin") +
                          " 2> " + dir.file("err.txt");
  ASSERT_EQ(run_python_in(cmd, dir.file("")), 0)
      << python() << " (python3-torch) failed: " << read_bytes(dir.file("err.txt"));
  const std::string want = read_bytes(dir.file("y.bin"));
  ASSERT_EQ(want.size(), 6u * 8u);

  ember::nn::Linear linear(16, 8);
  {
    ember::NoGradGuard no_grad;
    linear->weight.copy_(data.slice(0, 96, 224).view({8, 16}));
    linear->bias.copy_(data.slice(0, 224, 232));
  }
  const Tensor x = data.slice(0, 0, 96).view({6, 16});
  // Quantize -> quantized Linear -> DeQuantize, as a converted model runs
  ember::nn::Sequential model(ember::nn::quantized::Quantize(0.03, 120, ember::kQUInt8),
                              ember::nn::quantized::Linear(ember::nn::quantized::LinearImpl::from_float(*linear, 0.1, 128)),
                              ember::nn::quantized::DeQuantize());
  const Tensor yq = model[1]->as<ember::nn::quantized::LinearImpl>()->forward(
      ember::quantize_per_tensor(x, 0.03, 120, ember::kQUInt8));
  EXPECT_EQ(yq.dtype(), ember::kQUInt8);
  EXPECT_EQ(yq.q_scale(), 0.1);
  EXPECT_EQ(yq.q_zero_point(), 128);
  const std::vector<int64_t> got = ints(yq.int_repr());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], static_cast<uint8_t>(want[i])) << "output " << i;
  // the whole chain gives the dequantized result, near the float Linear
  const Tensor y = model->forward(x);
  EXPECT_TRUE(y.equal(yq.dequantize()));
  EXPECT_LT((y - linear(x)).abs().max().item<float>(), 0.4f);  // inputs, weights and outputs each rounded

  const auto q = ember::nn::quantized::LinearImpl::from_float(*linear, 0.1, 128);
  expect_error([&] { q->forward(x); }, "expected a quint8 input");
  expect_error([&] { q->forward(ember::quantize_per_tensor(x.narrow(1, 0, 8), 0.03, 120, ember::kQUInt8)); },
               "in_features");
  expect_error([&] { ember::nn::quantized::LinearImpl::from_float(*linear, 0.0, 128); }, "finite and positive");
  expect_error([] { ember::nn::quantized::Quantize(-1.0, 0, ember::kQUInt8); }, "scale");
}

// ---- eager static quantization (prepare, calibrate, convert) against python3-torch ----------------

const char* kEagerScript = R"PY(
import sys, torch
import torch.nn as nn
from torch.ao.quantization import QuantStub, DeQuantStub, QConfig, prepare, convert
from torch.ao.quantization.observer import MinMaxObserver, PerChannelMinMaxObserver
d = torch.frombuffer(bytearray(open(sys.argv[1], 'rb').read()), dtype=torch.float32)
sizes = [(32, 16), (32,), (8, 32), (8,), (4, 20, 16), (10, 16)]
parts, at = [], 0
for s in sizes:
    n = 1
    for v in s: n *= v
    parts.append(d[at:at + n].reshape(s)); at += n
w1, b1, w2, b2, calib, x = parts
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant, self.fc1, self.relu, self.fc2, self.dequant = QuantStub(), nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8), DeQuantStub()
    def forward(self, x):
        return self.dequant(self.fc2(self.relu(self.fc1(self.quant(x)))))
net = Net()
with torch.no_grad():
    net.fc1.weight.copy_(w1); net.fc1.bias.copy_(b1); net.fc2.weight.copy_(w2); net.fc2.bias.copy_(b2)
net.qconfig = QConfig(activation=MinMaxObserver.with_args(reduce_range=True),
                      weight=PerChannelMinMaxObserver.with_args(dtype=torch.qint8, qscheme=torch.per_channel_symmetric))
net.eval()
prepare(net, inplace=True)
for batch in calib:
    net(batch)
convert(net, inplace=True)
y = net(x)
out = torch.cat([y.flatten(), torch.tensor([net.quant.scale.item(), float(net.quant.zero_point.item()),
                 net.fc1.scale, float(net.fc1.zero_point), net.fc2.scale, float(net.fc2.zero_point)])])
open(sys.argv[2], 'wb').write(out.numpy().tobytes())
)PY";

struct EagerNetImpl : ember::nn::Module {
  q::QuantStub quant{register_module("quant", q::QuantStub())};
  ember::nn::Linear fc1{register_module("fc1", ember::nn::Linear(16, 32))};
  ember::nn::ReLU relu{register_module("relu", ember::nn::ReLU())};
  ember::nn::Linear fc2{register_module("fc2", ember::nn::Linear(32, 8))};
  q::DeQuantStub dequant{register_module("dequant", q::DeQuantStub())};
  Tensor forward(const Tensor& x) { return dequant(fc2(relu(fc1(quant(x))))); }
};
EMBER_MODULE(EagerNet);

TEST(StaticQuantization, EagerPrepareCalibrateConvertMatchesPyTorch) {
  TempDir dir("quantization_test");
  ember::Generator g(31);
  const int64_t n = 32 * 16 + 32 + 8 * 32 + 8 + 4 * 20 * 16 + 10 * 16;
  // Multiples of 1/4: every product and sum of the float layers is exact in float32 (at most 21
  // significant bits), so the activations the observers see are PyTorch's bit for bit whatever
  // order a matmul kernel sums in (with randn's values, oneDNN capped at AVX512_CORE_VNNI summed
  // fc2's 32 products otherwise than python3-torch on a Sapphire Rapids guest: its scale differed
  // in the last bit).
  const Tensor d = (ember::randn({n}, &g) * 4).round() / 4;
  write_bytes(dir.file("d.bin"), std::string(static_cast<const char*>(d.data_ptr()), d.nbytes()));
  write_bytes(dir.file("eager.py"), kEagerScript);
  const std::string cmd = python() + " " + dir.file("eager.py") + " " + dir.file("d.bin") + " " + dir.file("y.bin") +
                          " 2> " + dir.file("err.txt");
  ASSERT_EQ(run_python_in(cmd, dir.file("")), 0)
      << python() << " (python3-torch) failed: " << read_bytes(dir.file("err.txt"));
  const std::string bytes = read_bytes(dir.file("y.bin"));
  std::vector<float> want(bytes.size() / sizeof(float));
  ASSERT_EQ(want.size(), 10u * 8u + 6u);
  std::memcpy(want.data(), bytes.data(), bytes.size());

  EagerNet net;
  int64_t at = 0;
  const auto take = [&](std::vector<int64_t> sizes) {
    int64_t count = 1;
    for (int64_t v : sizes) count *= v;
    const Tensor t = d.slice(0, at, at + count).view(sizes);
    at += count;
    return t;
  };
  {
    ember::NoGradGuard no_grad;
    net->fc1->weight.copy_(take({32, 16}));
    net->fc1->bias.copy_(take({32}));
    net->fc2->weight.copy_(take({8, 32}));
    net->fc2->bias.copy_(take({8}));
  }
  const Tensor calib = take({4, 20, 16}), x = take({10, 16});
  const Tensor y_float = net(x);

  q::QConfig qconfig;
  qconfig.activation = [] {
    return std::make_shared<q::MinMaxObserverImpl>(q::ObserverOptions().reduce_range(true));
  };
  qconfig.weight = [] {
    return std::make_shared<q::PerChannelMinMaxObserverImpl>(
        q::ObserverOptions().dtype(ember::kQInt8).qscheme(ember::kPerChannelSymmetric));
  };
  expect_error([&] { q::convert(*net); }, "no module of the model was prepared");
  EXPECT_EQ(q::prepare(*net, qconfig), 3);  // the QuantStub and both Linear layers
  EXPECT_TRUE(net->fc1->named_buffers().contains("activation_post_process.min_val"));
  expect_error([&] { q::prepare(*net, qconfig); }, "was prepared already");
  expect_error([&] { q::convert(*net); }, "has seen no data");
  EXPECT_FALSE(net->fc1->static_quantized);  // the failed convert changed nothing
  for (int64_t b = 0; b < 4; ++b) EXPECT_TRUE(net(calib[b]).allclose(net->fc2(net->relu(net->fc1(calib[b])))));
  EXPECT_EQ(q::convert(*net), 4);
  EXPECT_FALSE(net->fc1->named_buffers().contains("activation_post_process.min_val"));

  // the qparams each observer chose are PyTorch's
  EXPECT_EQ(static_cast<float>(net->quant->quantize->scale), want[80]);
  EXPECT_EQ(static_cast<float>(net->quant->quantize->zero_point), want[81]);
  EXPECT_EQ(static_cast<float>(net->fc1->static_quantized->scale()), want[82]);
  EXPECT_EQ(static_cast<float>(net->fc1->static_quantized->zero_point()), want[83]);
  EXPECT_EQ(static_cast<float>(net->fc2->static_quantized->scale()), want[84]);
  EXPECT_EQ(static_cast<float>(net->fc2->static_quantized->zero_point()), want[85]);

  const Tensor y = net(x);
  EXPECT_EQ(y.dtype(), ember::kFloat);
  // the same qparams and PyTorch's requantization arithmetic: PyTorch's outputs
  const std::vector<float> got = values(y);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], want[i]) << "output " << i;
  // and near the float model: 7-bit activations (reduce_range) lose a few percent of the range
  const float range = (y_float.max() - y_float.min()).item<float>();
  EXPECT_LT((y - y_float).abs().max().item<float>(), 0.05f * range) << "range " << range;
  std::ostringstream printed;
  printed << *net;
  EXPECT_NE(printed.str().find("QuantizedLinear"), std::string::npos) << printed.str();
}

// A standalone BatchNorm2d and a BNReLU2d convert to the int8 batch norm (PyTorch's mapping).
TEST(StaticQuantization, ConvertsBatchNorm2dAndBNReLU2d) {
  ember::manual_seed(4);
  ember::nn::BatchNorm2d bn(3);
  ember::nn::intrinsic::BNReLU2d bn_relu{ember::nn::BatchNorm2d(3)};
  for (auto* b : {bn.get(), bn_relu->bn.get()}) {
    ember::NoGradGuard no_grad;
    b->running_mean.uniform_(-0.5, 0.5);
    b->running_var.uniform_(0.5, 2.0);
    b->weight.uniform_(0.5, 1.5);
    b->bias.uniform_(-0.3, 0.3);
  }
  ember::nn::Sequential net(q::QuantStub(), bn, bn_relu, q::DeQuantStub());
  net->eval();
  const Tensor x = ember::randn({4, 3, 5, 5});
  const Tensor y_float = net->forward(x);
  q::QConfig qconfig;
  qconfig.activation = [] { return std::make_shared<q::MinMaxObserverImpl>(); };
  qconfig.weight = [] { return std::make_shared<q::MinMaxObserverImpl>(q::ObserverOptions().dtype(ember::kQInt8)); };
  EXPECT_EQ(q::prepare(*net, qconfig), 3);  // the QuantStub, the BatchNorm2d, the BNReLU2d
  net->forward(x);
  EXPECT_EQ(q::convert(*net), 4);
  ASSERT_TRUE(bn->static_quantized && bn_relu->static_quantized);
  const Tensor y = net->forward(x);
  EXPECT_GE(y.min().item<float>(), 0.0f);
  // the input, the batch norm's output and the result each rounded once
  const double tol = 2.01 * (bn->static_quantized->scale + bn_relu->static_quantized->scale) +
                     std::dynamic_pointer_cast<q::QuantStubImpl>(net->ptr(0))->quantize->scale * 4;
  EXPECT_LT((y - y_float).abs().max().item<double>(), tol);
  std::ostringstream printed;
  printed << *net;
  EXPECT_NE(printed.str().find("QuantizedBatchNorm2d(3"), std::string::npos) << printed.str();
  EXPECT_NE(printed.str().find("QuantizedBNReLU2d(3"), std::string::npos) << printed.str();
}

// ---- dynamic quantization ---------------------------------------------------------------------

struct NetImpl : ember::nn::Module {
  ember::nn::Linear fc1{register_module("fc1", ember::nn::Linear(16, 32))};
  ember::nn::Sequential head{register_module(
      "head", ember::nn::Sequential(ember::nn::ReLU(), ember::nn::Linear(32, 8), ember::nn::ReLU()))};
  Tensor forward(const Tensor& x) { return head->forward(fc1(x)); }
};
EMBER_MODULE(Net);

TEST(DynamicQuantization, LinearAndQuantizeDynamic) {
  ember::manual_seed(0);
  Net net;
  ember::Generator g(9);
  const Tensor x = ember::randn({5, 16}, &g);
  const Tensor y_float = net->forward(x);
  EXPECT_EQ(q::quantize_dynamic(*net), 2);
  EXPECT_EQ(q::quantize_dynamic(*net), 0);  // already quantized
  ASSERT_TRUE(net->fc1->dynamic_quantized);
  EXPECT_EQ(net->fc1->dynamic_quantized->weight().qscheme(), ember::kPerChannelAffine);
  EXPECT_EQ(net->fc1->dynamic_quantized->weight().dtype(), ember::kQInt8);
  const Tensor y = net->forward(x);
  EXPECT_TRUE(y.allclose(y_float, 0, 0.1)) << (y - y_float).abs().max().item<float>();
  EXPECT_FALSE(y.equal(y_float));  // it did compute in int8
  std::ostringstream os;
  os << *net;
  EXPECT_NE(os.str().find("DynamicQuantizedLinear(in_features=16, out_features=32, dtype=torch.qint8, "
                          "qscheme=torch.per_channel_affine)"),
            std::string::npos)
      << os.str();
  // batches of any size, leading dims, empty
  EXPECT_EQ(net->fc1(ember::randn({2, 3, 16})).sizes().vec(), (std::vector<int64_t>{2, 3, 32}));
  EXPECT_EQ(net->fc1(ember::randn({0, 16})).sizes().vec(), (std::vector<int64_t>{0, 32}));
  expect_error([&] { net->fc1(ember::randn({2, 15})); }, {"DynamicQuantizedLinear", "in_features"});
  expect_error([&] { q::quantize_dynamic(*net, ember::kQUInt8); }, "quantize_dynamic");
  const Tensor asym = ember::quantize_per_tensor(ember::randn({4, 4}), 0.1, 3, ember::kQInt8);
  expect_error([&] { ember::nn::quantized::dynamic::Linear{asym}; }, "symmetrically");
}

// quantize_dynamic of LSTM and GRU against python3-torch's (DynamicQuantizedLSTM/GRU, onednn
// engine) on the same weights: both near the float modules, Ember's int8 error (weights per
// channel) no larger than PyTorch's (per tensor) up to a margin.
const char* kDynamicRnnScript = R"PY(
import sys, torch
import torch.nn as nn
d = torch.frombuffer(bytearray(open(sys.argv[1], 'rb').read()), dtype=torch.float32)
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = nn.GRU(8, 16)
m = M()
at = 0
with torch.no_grad():
    for p in m.parameters():
        p.copy_(d[at:at + p.numel()].reshape(p.shape)); at += p.numel()
x = d[at:at + 3 * 5 * 8].reshape(3, 5, 8)
out = [m.lstm(x)[0].flatten(), m.gru(x)[0].flatten()]
q = torch.ao.quantization.quantize_dynamic(m, {nn.LSTM, nn.GRU}, dtype=torch.qint8)
out += [q.lstm(x)[0].flatten(), q.gru(x)[0].flatten()]
open(sys.argv[2], 'wb').write(torch.cat(out).detach().numpy().tobytes())
)PY";

struct RnnNetImpl : ember::nn::Module {
  ember::nn::LSTM lstm{register_module(
      "lstm", ember::nn::LSTM(ember::nn::LSTMOptions(8, 16).num_layers(2).bidirectional(true).batch_first(true)))};
  ember::nn::GRU gru{register_module("gru", ember::nn::GRU(8, 16))};
};
EMBER_MODULE(RnnNet);

TEST(DynamicQuantization, LstmAndGruNearPyTorchs) {
  TempDir dir("quantization_test");
  RnnNet net;
  int64_t n = 3 * 5 * 8;
  for (const Tensor& p : net->parameters()) n += p.numel();
  ember::Generator g(23);
  const Tensor d = ember::randn({n}, &g) * 0.3f;
  write_bytes(dir.file("d.bin"), std::string(static_cast<const char*>(d.data_ptr()), d.nbytes()));
  write_bytes(dir.file("rnn.py"), kDynamicRnnScript);
  const std::string cmd = python() + " " + dir.file("rnn.py") + " " + dir.file("d.bin") + " " + dir.file("y.bin") +
                          " 2> " + dir.file("err.txt");
  ASSERT_EQ(run_python_in(cmd, dir.file("")), 0)
      << python() << " (python3-torch) failed: " << read_bytes(dir.file("err.txt"));
  const std::string bytes = read_bytes(dir.file("y.bin"));
  const int64_t lstm_n = 3 * 5 * 32, gru_n = 3 * 5 * 16;
  ASSERT_EQ(bytes.size(), sizeof(float) * 2 * (lstm_n + gru_n));
  const Tensor want = ember::empty({2 * (lstm_n + gru_n)});
  std::memcpy(want.data_ptr(), bytes.data(), bytes.size());
  int64_t at = 0;
  {
    ember::NoGradGuard no_grad;
    for (Tensor p : net->parameters()) {
      p.copy_(d.slice(0, at, at + p.numel()).view(p.sizes()));
      at += p.numel();
    }
  }
  const Tensor x = d.slice(0, at, at + 3 * 5 * 8).view({3, 5, 8});
  const Tensor lstm_float = std::get<0>(net->lstm(x)).flatten(), gru_float = std::get<0>(net->gru(x)).flatten();
  const Tensor want_lstm_float = want.slice(0, 0, lstm_n), want_gru_float = want.slice(0, lstm_n, lstm_n + gru_n);
  const Tensor want_lstm_q = want.slice(0, lstm_n + gru_n, 2 * lstm_n + gru_n), want_gru_q = want.slice(0, 2 * lstm_n + gru_n);
  ASSERT_TRUE(lstm_float.allclose(want_lstm_float, 1e-4, 1e-5));
  ASSERT_TRUE(gru_float.allclose(want_gru_float, 1e-4, 1e-5));

  EXPECT_EQ(q::quantize_dynamic(*net), 2);
  EXPECT_EQ(net->lstm->dynamic_quantized.size(), 16u);  // 2 layers x 2 directions x (w_ih, w_hh, b_ih, b_hh)
  EXPECT_TRUE(net->lstm->dynamic_quantized[0] && !net->lstm->dynamic_quantized[2]);
  const Tensor lstm_q = std::get<0>(net->lstm(x)).flatten(), gru_q = std::get<0>(net->gru(x)).flatten();
  const auto expect_near = [](const Tensor& got, const Tensor& theirs, const Tensor& exact, const char* what) {
    const double err = (got - exact).abs().mean().item<double>(), their_err = (theirs - exact).abs().mean().item<double>();
    EXPECT_GT(err, 0.0) << what << ": computed in int8";
    EXPECT_LE(err, 1.25 * their_err + 1e-4) << what << ": mean error vs float, PyTorch's " << their_err;
    EXPECT_LT((got - exact).abs().max().item<double>(), 0.05) << what;
    EXPECT_LT((got - theirs).abs().max().item<double>(), 0.05) << what;
  };
  expect_near(lstm_q, want_lstm_q, want_lstm_float, "LSTM");
  expect_near(gru_q, want_gru_q, want_gru_float, "GRU");
  std::ostringstream os;
  os << *net;
  EXPECT_NE(os.str().find("DynamicQuantizedLSTM(input_size=8, hidden_size=16, num_layers=2"), std::string::npos)
      << os.str();
  // projections (weight_hr) and plain RNNs, which PyTorch leaves float
  ember::nn::LSTM proj(ember::nn::LSTMOptions(8, 16).proj_size(4));
  ember::nn::RNN rnn(8, 16);
  const Tensor x2 = ember::randn({5, 2, 8}, &g);
  const Tensor proj_float = std::get<0>(proj(x2)), rnn_float = std::get<0>(rnn(x2));
  EXPECT_EQ(q::quantize_dynamic(*proj), 1);
  EXPECT_EQ(q::quantize_dynamic(*rnn), 0);
  EXPECT_TRUE(std::get<0>(proj(x2)).allclose(proj_float, 0, 0.05));
  EXPECT_FALSE(std::get<0>(proj(x2)).equal(proj_float));
  EXPECT_TRUE(std::get<0>(rnn(x2)).equal(rnn_float));
  expect_error([&] { ember::nn::quantized::dynamic::LinearImpl::from_weight(ember::randn({4})); },
               {"DynamicQuantizedLinear", "float32 weight"});
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
