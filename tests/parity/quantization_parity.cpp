// Quantization against libtorch: quantize/dequantize/int_repr bitwise (per tensor and per
// channel, every quantized dtype, ties and clamping), printing, views keeping the parameters,
// fake quantization forward and backward, _choose_qparams_per_tensor, and the dynamic int8
// Linear against libtorch's quantized::linear_dynamic (called through its op registry).
#include <ATen/core/dispatch/Dispatcher.h>

#include <limits>

#include "parity.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

using parity::to_ember;
using parity::to_torch;

torch::ScalarType torch_qtype(ember::ScalarType t) {
  return t == ember::kQInt8 ? torch::kQInt8 : t == ember::kQUInt8 ? torch::kQUInt8 : torch::kQInt32;
}

// Random values, with exact ties (halves of the scale) and values far outside the range mixed in.
ember::Tensor qinput(ember::IntArrayRef sizes, double scale, uint64_t seed) {
  ember::Tensor x = parity::random(sizes, ember::kFloat, seed) * 40;
  ember::Generator g(seed + 1);
  const ember::Tensor ties = (ember::randint(-300, 300, sizes, &g, ember::TensorOptions().dtype(ember::kFloat)) *
                              static_cast<float>(scale / 2));
  const ember::Tensor pick = ember::rand(sizes, &g) < 0.5;
  return ember::where(pick, ties, x);
}

void expect_bitwise(const ember::Tensor& e, const torch::Tensor& t, const std::string& what) {
  ASSERT_EQ(parity::to_torch(e.dtype()), t.scalar_type()) << what;
  const torch::Tensor a = to_torch(e.contiguous()).flatten(), b = t.contiguous().flatten();
  ASSERT_EQ(a.numel(), b.numel()) << what;
  if (std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) == 0) return;
  const torch::Tensor differ = (a.to(torch::kDouble) != b.to(torch::kDouble)).nonzero().flatten();
  const int64_t i = differ.numel() ? differ[0].item<int64_t>() : 0;
  ADD_FAILURE() << what << ": " << differ.numel() << " elements differ, first at flat index " << i << ": ember "
                << a[i].item<double>() << " vs libtorch " << b[i].item<double>();
}

TEST(QuantizationParity, PerTensorBitwise) {
  const double scales[] = {0.1, 0.0173, 1.0, 3.7, 1e-3};
  const std::pair<ember::ScalarType, std::vector<int64_t>> cases[] = {
      {ember::kQInt8, {0, -3, 17, -128, 127}}, {ember::kQUInt8, {0, 3, 128, 255}}, {ember::kQInt32, {0, -5, 1000}}};
  uint64_t seed = 1;
  for (const auto& [dtype, zps] : cases) {
    for (double scale : scales) {
      for (int64_t zp : zps) {
        const ember::Tensor x = qinput({37, 29}, scale, seed++);
        const ember::Tensor q = ember::quantize_per_tensor(x, scale, zp, dtype);
        const torch::Tensor tq = torch::quantize_per_tensor(to_torch(x), scale, zp, torch_qtype(dtype));
        const std::string what = std::string(ember::to_string(dtype)) + " scale " + std::to_string(scale) + " zp " +
                                 std::to_string(zp);
        expect_bitwise(q.int_repr(), tq.int_repr(), "int_repr " + what);
        expect_bitwise(q.dequantize(), tq.dequantize(), "dequantize " + what);
        EXPECT_EQ(q.q_scale(), tq.q_scale());
        EXPECT_EQ(q.q_zero_point(), tq.q_zero_point());
      }
    }
  }
}

TEST(QuantizationParity, PerTensorLayoutsAndTensorScale) {
  // channels_last input: the result keeps the layout, as libtorch's
  const ember::Tensor x = qinput({2, 3, 5, 4}, 0.05, 7).contiguous(ember::MemoryFormat::ChannelsLast);
  const ember::Tensor q = ember::quantize_per_tensor(x, ember::scalar_tensor(0.05), ember::scalar_tensor(4),
                                                     ember::kQUInt8);
  const torch::Tensor tq = torch::quantize_per_tensor(to_torch(x), torch::scalar_tensor(0.05),
                                                      torch::scalar_tensor(4), torch::kQUInt8);
  EXPECT_TRUE(q.is_contiguous(ember::MemoryFormat::ChannelsLast));
  expect_bitwise(q.int_repr(), tq.int_repr(), "channels_last");
  expect_bitwise(q.dequantize(), tq.dequantize(), "channels_last dequantize");
  // a transposed (non-contiguous) input
  const ember::Tensor xt = qinput({9, 13}, 0.2, 8).t();
  expect_bitwise(ember::quantize_per_tensor(xt, 0.2, -1, ember::kQInt8).int_repr(),
                 torch::quantize_per_tensor(to_torch(xt), 0.2, -1, torch::kQInt8).int_repr(), "transposed");
}

TEST(QuantizationParity, PerChannelBitwise) {
  uint64_t seed = 100;
  for (ember::ScalarType dtype : {ember::kQInt8, ember::kQUInt8, ember::kQInt32}) {
    for (int64_t axis : {0, 1, 2}) {
      const ember::Tensor x = qinput({4, 6, 5}, 0.05, seed++);
      const int64_t c = x.size(axis);
      ember::Generator g(seed++);
      const ember::Tensor scales = (ember::rand({c}, &g, ember::TensorOptions().dtype(ember::kDouble)) * 0.2 + 0.01);
      const int64_t lo = dtype == ember::kQUInt8 ? 0 : -20;
      const ember::Tensor zps = ember::randint(lo, lo + 40, {c}, &g, ember::TensorOptions().dtype(ember::kLong));
      const ember::Tensor q = ember::quantize_per_channel(x, scales, zps, axis, dtype);
      const torch::Tensor tq =
          torch::quantize_per_channel(to_torch(x), to_torch(scales), to_torch(zps), axis, torch_qtype(dtype));
      const std::string what = std::string(ember::to_string(dtype)) + " axis " + std::to_string(axis);
      expect_bitwise(q.int_repr(), tq.int_repr(), "int_repr " + what);
      expect_bitwise(q.dequantize(), tq.dequantize(), "dequantize " + what);
      expect_bitwise(q.q_per_channel_scales(), tq.q_per_channel_scales(), "scales " + what);
      expect_bitwise(q.q_per_channel_zero_points(), tq.q_per_channel_zero_points(), "zero points " + what);
      EXPECT_EQ(q.q_per_channel_axis(), tq.q_per_channel_axis());
    }
  }
  // channels_last along the channels
  const ember::Tensor x = qinput({2, 3, 4, 5}, 0.05, 9).contiguous(ember::MemoryFormat::ChannelsLast);
  const ember::Tensor scales = ember::tensor(std::vector<double>{0.03, 0.1, 0.07});
  const ember::Tensor zps = ember::tensor(std::vector<int64_t>{1, -2, 0});
  expect_bitwise(ember::quantize_per_channel(x, scales, zps, 1, ember::kQInt8).int_repr(),
                 torch::quantize_per_channel(to_torch(x), to_torch(scales), to_torch(zps), 1, torch::kQInt8).int_repr(),
                 "per channel channels_last");
}

TEST(QuantizationParity, Printing) {
  const ember::Tensor x = qinput({2, 3}, 0.25, 11);
  auto both = [](const ember::Tensor& e, const torch::Tensor& t) {
    std::ostringstream a, b;
    a << e;
    b << t;
    EXPECT_EQ(a.str(), b.str());
  };
  both(ember::quantize_per_tensor(x, 0.25, 3, ember::kQUInt8),
       torch::quantize_per_tensor(to_torch(x), 0.25, 3, torch::kQUInt8));
  both(ember::quantize_per_tensor(x[0], 0.5, 0, ember::kQInt8),
       torch::quantize_per_tensor(to_torch(x)[0], 0.5, 0, torch::kQInt8));
  const ember::Tensor scales = ember::tensor(std::vector<double>{0.1, 0.2});
  const ember::Tensor zps = ember::tensor(std::vector<int64_t>{0, 1});
  both(ember::quantize_per_channel(x, scales, zps, 0, ember::kQInt8),
       torch::quantize_per_channel(to_torch(x), to_torch(scales), to_torch(zps), 0, torch::kQInt8));
}

TEST(QuantizationParity, ViewsCloneCat) {
  const ember::Tensor x = qinput({4, 5, 6}, 0.1, 12);
  const ember::Tensor q = ember::quantize_per_tensor(x, 0.1, 2, ember::kQInt8);
  const torch::Tensor tq = torch::quantize_per_tensor(to_torch(x), 0.1, 2, torch::kQInt8);
  expect_bitwise(q.permute({2, 0, 1}).int_repr(), tq.permute({2, 0, 1}).int_repr(), "permute");
  expect_bitwise(q.transpose(0, 2).contiguous().int_repr(), tq.transpose(0, 2).contiguous().int_repr(), "contiguous");
  expect_bitwise(q.select(1, 3).int_repr(), tq.select(1, 3).int_repr(), "select");
  expect_bitwise(q.slice(2, 1, 5, 2).int_repr(), tq.slice(2, 1, 5, 2).int_repr(), "slice");
  expect_bitwise(q.reshape({20, 6}).int_repr(), tq.reshape({20, 6}).int_repr(), "reshape");
  expect_bitwise(q.view({-1}).dequantize(), tq.view({-1}).dequantize(), "view");
  expect_bitwise(q.clone().int_repr(), tq.clone().int_repr(), "clone");
  // cat: shared parameters copy the integers; others are requantized to the first's
  const ember::Tensor q2 = ember::quantize_per_tensor(x * 0.5, 0.1, 2, ember::kQInt8);
  const ember::Tensor q3 = ember::quantize_per_tensor(x * 0.5, 0.07, -3, ember::kQInt8);
  const torch::Tensor tq2 = torch::quantize_per_tensor(to_torch(x * 0.5), 0.1, 2, torch::kQInt8);
  const torch::Tensor tq3 = torch::quantize_per_tensor(to_torch(x * 0.5), 0.07, -3, torch::kQInt8);
  expect_bitwise(ember::cat({q, q2}, 1).int_repr(), torch::cat({tq, tq2}, 1).int_repr(), "cat shared");
  expect_bitwise(ember::cat({q, q3}, 0).int_repr(), torch::cat({tq, tq3}, 0).int_repr(), "cat requantized");
  // per channel: select along the axis leaves one channel, per tensor
  const ember::Tensor scales = ember::tensor(std::vector<double>{0.1, 0.2, 0.3, 0.4});
  const ember::Tensor zps = ember::tensor(std::vector<int64_t>{0, 1, 2, 3});
  const ember::Tensor pc = ember::quantize_per_channel(x, scales, zps, 0, ember::kQInt8);
  const torch::Tensor tpc = torch::quantize_per_channel(to_torch(x), to_torch(scales), to_torch(zps), 0, torch::kQInt8);
  EXPECT_EQ(pc.select(0, 2).qscheme(), ember::kPerTensorAffine);
  EXPECT_EQ(pc.select(0, 2).q_scale(), tpc.select(0, 2).q_scale());
  EXPECT_EQ(pc.select(0, 2).q_zero_point(), tpc.select(0, 2).q_zero_point());
  expect_bitwise(pc.slice(0, 1, 3).q_per_channel_scales(), tpc.slice(0, 1, 3).q_per_channel_scales(), "slice scales");
  // (libtorch 1.13 loses the axis here: its dequantize raises "Channel axis out of range")
  expect_bitwise(pc.select(1, 2).dequantize(), tpc.dequantize().select(1, 2), "select other dim");
}

TEST(QuantizationParity, FakeQuantizeForwardBackward) {
  const std::tuple<double, int64_t, int64_t, int64_t> cases[] = {
      {0.1, 0, -128, 127}, {0.037, 10, 0, 255}, {0.5, 3, 0, 15}, {1.0, -2, -8, 7}};
  uint64_t seed = 200;
  for (const auto& [scale, zp, qmin, qmax] : cases) {
    ember::Tensor x = qinput({33, 17}, scale, seed++);
    {  // values no quantum holds: infinities, NaN, beyond 2^22 quanta
      const float inf = std::numeric_limits<float>::infinity();
      const std::vector<float> special = {inf, -inf, std::numeric_limits<float>::quiet_NaN(), 1e30f, -1e30f,
                                          static_cast<float>(scale) * 5e6f, static_cast<float>(scale) * -5e6f};
      for (size_t i = 0; i < special.size(); ++i) x[0][static_cast<int64_t>(i)].fill_(special[i]);
    }
    x.requires_grad_();
    const torch::Tensor tx = to_torch(x.detach()).requires_grad_();
    const ember::Tensor y = ember::fake_quantize_per_tensor_affine(x, scale, zp, qmin, qmax);
    const torch::Tensor ty = torch::fake_quantize_per_tensor_affine(tx, scale, zp, qmin, qmax);
    expect_bitwise(y.detach(), ty.detach(), "fake_quantize_per_tensor_affine");
    const ember::Tensor g = parity::random({33, 17}, ember::kFloat, seed++);
    y.backward(g);
    ty.backward(to_torch(g));
    expect_bitwise(x.grad(), tx.grad(), "fake_quantize_per_tensor_affine backward");
  }
  for (int64_t axis : {0, 1}) {
    const ember::Tensor x = qinput({6, 7, 3}, 0.1, seed++).requires_grad_();
    const torch::Tensor tx = to_torch(x.detach()).requires_grad_();
    const int64_t c = x.size(axis);
    ember::Generator gen(seed++);
    const ember::Tensor scales = ember::rand({c}, &gen) * 0.3f + 0.02f;
    const ember::Tensor zps = ember::randint(-10, 10, {c}, &gen, ember::TensorOptions().dtype(ember::kInt));
    const ember::Tensor y = ember::fake_quantize_per_channel_affine(x, scales, zps, axis, -128, 127);
    const torch::Tensor ty =
        torch::fake_quantize_per_channel_affine(tx, to_torch(scales), to_torch(zps), axis, -128, 127);
    expect_bitwise(y.detach(), ty.detach(), "fake_quantize_per_channel_affine");
    const ember::Tensor g = parity::random({6, 7, 3}, ember::kFloat, seed++);
    y.backward(g);
    ty.backward(to_torch(g));
    expect_bitwise(x.grad(), tx.grad(), "fake_quantize_per_channel_affine backward");
  }
}

TEST(QuantizationParity, ChooseQParamsPerTensor) {
  uint64_t seed = 300;
  for (float mul : {1.0f, 1e-6f, 100.0f}) {
    for (float shift : {0.0f, 3.0f, -3.0f}) {
      for (bool reduce_range : {false, true}) {
        const ember::Tensor x = parity::random({50}, ember::kFloat, seed++) * mul + shift;
        const auto [s, z] = ember::_choose_qparams_per_tensor(x, reduce_range);
        const auto [ts, tz] = torch::_choose_qparams_per_tensor(to_torch(x), reduce_range);
        EXPECT_EQ(s, ts) << "mul " << mul << " shift " << shift << " reduce_range " << reduce_range;
        EXPECT_EQ(z, tz) << "mul " << mul << " shift " << shift << " reduce_range " << reduce_range;
      }
    }
  }
}

// libtorch's quantized::linear_prepack and quantized::linear_dynamic (reduce_range, as PyTorch's
// DynamicQuantizedLinear calls it), through the dispatcher.
torch::Tensor torch_linear_dynamic(const torch::Tensor& x, const torch::Tensor& qweight, const torch::Tensor& bias) {
  auto& dispatcher = c10::Dispatcher::singleton();
  torch::jit::Stack prepack{qweight, c10::optional<at::Tensor>(bias)};
  dispatcher.findSchemaOrThrow("quantized::linear_prepack", "").callBoxed(&prepack);
  torch::jit::Stack run{x, prepack.at(0), true};
  dispatcher.findSchemaOrThrow("quantized::linear_dynamic", "").callBoxed(&run);
  return run.at(0).toTensor();
}

TEST(QuantizationParity, DynamicLinear) {
  for (const auto& [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{7, 33, 19}, {64, 256, 128}}) {
    ember::manual_seed(static_cast<uint64_t>(m));
    ember::nn::Linear linear(k, n);
    const ember::Tensor x = parity::random({m, k}, ember::kFloat, 400 + m) * 3;
    const auto q = ember::nn::quantized::dynamic::LinearImpl::from_float(*linear);
    const ember::Tensor y = q->forward(x);
    const torch::Tensor ty = torch_linear_dynamic(to_torch(x), torch::_make_per_channel_quantized_tensor(
                                                      to_torch(q->weight().int_repr()),
                                                      to_torch(q->weight().q_per_channel_scales()),
                                                      to_torch(q->weight().q_per_channel_zero_points()), 0),
                                                  to_torch(linear->bias));
    // one quantum of the activations as the output sees it: an input element rounded the other
    // way (libtorch's onednn engine quantizes x inside oneDNN, with 1 / scale taken in double)
    // moves an output by x's scale times a weight, at most the largest one
    const auto [xs, xz] = ember::_choose_qparams_per_tensor(x, true);
    const double quantum = xs * q->weight().dequantize().abs().max().item<double>();
    EXPECT_TRUE(parity::Close(y, ty, {0, quantum})) << m << "x" << k << "x" << n << " " << q->kernel(x);
    // and near the float Linear (7-bit activations: a few hundredths per output here)
    EXPECT_TRUE(parity::Close(y, to_torch(linear(x)), {0, 0.25}));
  }
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
