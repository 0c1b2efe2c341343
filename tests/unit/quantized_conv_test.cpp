// Quantized convolutions (nn::quantized::Conv1d/2d/3d, nn::intrinsic::quantized::ConvReLU1d/2d/3d)
// against Debian's python3-torch (its onednn engine) on the same float weights and inputs: the
// quantized weights and the output integers equal (the requantization is ideep's arithmetic);
// layouts, padding modes and bad input. The inputs' integers stay within [0, 127] (zero point 64),
// as PyTorch's x86 qconfig keeps them (reduce_range): CPUs without VNNI sum pairs of int8
// products in 16 bits, which saturate beyond that, in PyTorch as in Ember.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "expect_error.h"
#include "kernels/cpu/onednn_quant.h"
#include "temp_dir.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

using ember::Tensor;
namespace nnq = ember::nn::quantized;
namespace nniq = ember::nn::intrinsic::quantized;

// Reads the cases from its first argument (one per line: dims n cin cout k s p d groups bias relu
// per_channel in_len), the float data from the second; writes each case's quantized weight and
// output integers (contiguous) to the third.
const char* kConvScript = R"PY(
import sys, torch
import torch.ao.nn.quantized as nnq
import torch.nn.intrinsic.quantized as nniq
from torch.ao.quantization.observer import PerChannelMinMaxObserver, MinMaxObserver
torch.backends.quantized.engine = 'onednn'
data = torch.frombuffer(bytearray(open(sys.argv[2], 'rb').read()), dtype=torch.float32)
out = bytearray()
off = 0
def take(shape):
    global off
    n = 1
    for s in shape: n *= s
    t = data[off:off + n].reshape(shape)
    off += n
    return t
for line in open(sys.argv[1]):
    dims, n, cin, cout, k, s, p, d, g, bias, relu, per_channel, length = map(int, line.split())
    x = take([n, cin] + [length] * dims)
    w = take([cout, cin // g] + [k] * dims)
    b = take([cout]) if bias else None
    if per_channel:
        obs = PerChannelMinMaxObserver(dtype=torch.qint8, qscheme=torch.per_channel_symmetric)
        obs(w)
        sc, zp = obs.calculate_qparams()
        qw = torch.quantize_per_channel(w, sc.double(), zp, 0, torch.qint8)
    else:
        obs = MinMaxObserver(dtype=torch.qint8, qscheme=torch.per_tensor_symmetric)
        obs(w)
        sc, zp = obs.calculate_qparams()
        qw = torch.quantize_per_tensor(w, float(sc), int(zp), torch.qint8)
    cls = [[nnq.Conv1d, nnq.Conv2d, nnq.Conv3d], [nniq.ConvReLU1d, nniq.ConvReLU2d, nniq.ConvReLU3d]][relu][dims - 1]
    m = cls(cin, cout, k, stride=s, padding=p, dilation=d, groups=g, bias=bool(bias))
    m.set_weight_bias(qw, b)
    m.scale, m.zero_point = 0.07, 110
    y = m(torch.quantize_per_tensor(x, 0.05, 64, torch.quint8))
    out += qw.int_repr().contiguous().numpy().tobytes()
    out += y.int_repr().contiguous().numpy().tobytes()
open(sys.argv[3], 'wb').write(out)
)PY";

struct Case {
  int64_t dims, n, cin, cout, k, s, p, d, groups;
  bool bias, relu, per_channel;
  int64_t length;
  bool optimized = true;  // oneDNN has a jit kernel for it on every CPU (not for odd group sizes on AVX2)
};

std::vector<int64_t> shape(int64_t a, int64_t b, int64_t dims, int64_t len) {
  std::vector<int64_t> s{a, b};
  for (int64_t i = 0; i < dims; ++i) s.push_back(len);
  return s;
}

// Ember's module for a case, from the float weight and bias.
template <size_t D>
Tensor run_case(const Case& c, const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, Tensor* qweight,
                std::string* kernel) {
  ember::nn::ConvOptions<D> options(c.cin, c.cout, c.k);
  options.stride(c.s).padding(c.p).dilation(c.d).groups(c.groups).bias(c.bias);
  Tensor qw;
  if (c.per_channel) {
    ember::nn::ConvNdImpl<D> conv(options);
    {
      ember::NoGradGuard no_grad;
      conv.weight.copy_(w);
    }
    qw = nnq::ConvNdImpl<D>::quantized_weight_and_bias(conv).first;
  } else {
    ember::quantization::MinMaxObserver obs(
        ember::quantization::ObserverOptions().dtype(ember::kQInt8).qscheme(ember::kPerTensorSymmetric));
    obs(w);
    auto [sc, zp] = obs->calculate_qparams();
    qw = ember::quantize_per_tensor(w, sc.item<double>(), zp.item<int64_t>(), ember::kQInt8);
  }
  *qweight = qw;
  const Tensor qx = ember::quantize_per_tensor(x, 0.05, 64, ember::kQUInt8);
  std::shared_ptr<nnq::ConvNdImpl<D>> m;
  if (c.relu) {
    m = std::make_shared<nniq::ConvReLUImpl<D>>(qw, b, options, 0.07, 110);
  } else {
    m = std::make_shared<nnq::ConvNdImpl<D>>(qw, b, options, 0.07, 110);
  }
  *kernel = m->kernel(qx);
  const Tensor y = m->forward(qx);
  EXPECT_EQ(y.dtype(), ember::kQUInt8);
  EXPECT_EQ(y.q_scale(), 0.07);
  EXPECT_EQ(y.q_zero_point(), 110);
  // a contiguous (not channels-last) input gives the same integers
  const Tensor y_plain = m->forward(qx.contiguous());
  EXPECT_TRUE(y.int_repr().equal(y_plain.int_repr()));
  // and the float convolution of the dequantized operands, rounded to the output's grid
  const Tensor xd = qx.dequantize(), wd = qw.dequantize(), bd = b ? *b : Tensor();
  Tensor ref = D == 1   ? ember::conv1d(xd, wd, bd, c.s, c.p, c.d, c.groups)
               : D == 2 ? ember::conv2d(xd, wd, bd, c.s, c.p, c.d, c.groups)
                        : ember::conv3d(xd, wd, bd, c.s, c.p, c.d, c.groups);
  if (c.relu) ref = ref.relu();
  ref = ref.clamp(-110 * 0.07, 145 * 0.07);
  EXPECT_LE((y.dequantize() - ref).abs().max().item<double>(), 0.07 * 0.5 + 1e-4);
  return y;
}

TEST(QuantizedConv, MatchesPyTorchWithinOneQuantum) {
  const std::vector<Case> cases = {
      {2, 2, 8, 16, 3, 1, 1, 1, 1, true, false, true, 10},   // 3x3, padding 1
      {2, 2, 8, 12, 3, 2, 2, 2, 2, true, true, true, 11, false},  // strided, dilated, grouped, ReLU
      {2, 1, 4, 6, 1, 1, 0, 1, 1, false, false, false, 7},   // 1x1, no bias, weight per tensor
      {2, 2, 16, 16, 3, 1, 1, 1, 16, true, true, true, 9},   // depthwise (MobileNet's)
      {2, 3, 1, 8, 3, 1, 1, 1, 1, true, true, true, 9},      // one input channel (an image's first layer)
      {1, 3, 6, 8, 5, 2, 2, 1, 1, true, false, true, 17},    // Conv1d
      {1, 2, 4, 4, 3, 1, 1, 1, 1, false, true, true, 12},    // ConvReLU1d
      {3, 1, 4, 8, 3, 1, 1, 1, 1, true, true, true, 6},      // ConvReLU3d
  };
  TempDir dir("quantized_conv_test");
  std::ostringstream spec;
  int64_t total = 0;
  for (const Case& c : cases) {
    int64_t in = c.n * c.cin, w = c.cout * (c.cin / c.groups);
    for (int64_t i = 0; i < c.dims; ++i) {
      in *= c.length;
      w *= c.k;
    }
    total += in + w + (c.bias ? c.cout : 0);
    spec << c.dims << ' ' << c.n << ' ' << c.cin << ' ' << c.cout << ' ' << c.k << ' ' << c.s << ' ' << c.p << ' '
         << c.d << ' ' << c.groups << ' ' << c.bias << ' ' << c.relu << ' ' << c.per_channel << ' ' << c.length
         << '\n';
  }
  ember::Generator g(31);
  const Tensor data = ember::randn({total}, &g);
  write_bytes(dir.file("cases.txt"), spec.str());
  write_bytes(dir.file("d.bin"), std::string(static_cast<const char*>(data.data_ptr()), data.nbytes()));
  write_bytes(dir.file("conv.py"), kConvScript);
  const std::string cmd = python() + " " + dir.file("conv.py") + " " + dir.file("cases.txt") + " " +
                          dir.file("d.bin") + " " + dir.file("out.bin") + " 2> " + dir.file("err.txt");
  ASSERT_EQ(run_python_in(cmd, dir.file("")), 0)
      << python() << " (python3-torch) failed: " << read_bytes(dir.file("err.txt"));
  const std::string want = read_bytes(dir.file("out.bin"));

  int64_t off = 0, want_off = 0;
  auto take = [&](const std::vector<int64_t>& sizes) {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    const Tensor t = data.slice(0, off, off + n).view(sizes);
    off += n;
    return t;
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE("case " + std::to_string(i));
    const Tensor x = take(shape(c.n, c.cin, c.dims, c.length));
    const Tensor w = take(shape(c.cout, c.cin / c.groups, c.dims, c.k));
    const std::optional<Tensor> b = c.bias ? std::optional<Tensor>(take({c.cout})) : std::nullopt;
    Tensor qw, y;
    std::string kernel;
    if (c.dims == 1) y = run_case<1>(c, x, w, b, &qw, &kernel);
    if (c.dims == 2) y = run_case<2>(c, x, w, b, &qw, &kernel);
    if (c.dims == 3) y = run_case<3>(c, x, w, b, &qw, &kernel);
    if (c.optimized) EXPECT_EQ(kernel.find("ref"), std::string::npos) << kernel;
    const Tensor qw_int = qw.int_repr().contiguous();
    ASSERT_LE(want_off + qw_int.numel(), static_cast<int64_t>(want.size()));
    EXPECT_EQ(std::memcmp(qw_int.data_ptr(), want.data() + want_off, static_cast<size_t>(qw_int.numel())), 0)
        << "quantized weights differ from PyTorch's";
    want_off += qw_int.numel();
    const Tensor yi = y.int_repr().contiguous();
    ASSERT_LE(want_off + yi.numel(), static_cast<int64_t>(want.size()));
    const uint8_t* got = yi.data_ptr<uint8_t>();
    int64_t differ = 0;
    for (int64_t j = 0; j < yi.numel(); ++j) differ += got[j] != static_cast<uint8_t>(want[static_cast<size_t>(want_off + j)]);
    EXPECT_EQ(differ, 0) << "output integers differ from PyTorch's, of " << yi.numel();
    want_off += yi.numel();
  }
  EXPECT_EQ(want_off, static_cast<int64_t>(want.size()));
}

// The kernel writes its output and nothing past it, for the 1x1 shapes on 6x6 images whose
// channels-last output oneDNN 2.6.3's AMX 1x1 kernel overruns (2x24x6x6: 288 bytes past the end),
// with the values of the float computation; on every CPU, whichever kernel oneDNN picks.
TEST(QuantizedConv, KernelWritesItsOutputOnly) {
  for (int64_t n : {1, 2, 3}) {
    for (int64_t cin : {64, 96}) {
      for (int64_t cout : {8, 24, 72}) {
        SCOPED_TRACE("n " + std::to_string(n) + " in " + std::to_string(cin) + " out " + std::to_string(cout));
        const std::vector<int64_t> w_sizes{cout, cin, 1, 1}, x_sizes{n, cin, 6, 6}, y_sizes{n, cout, 6, 6};
        const std::vector<int64_t> x_strides{36 * cin, 1, 6 * cin, cin}, y_strides{36 * cout, 1, 6 * cout, cout};
        const Tensor w = ember::randint(-127, 128, {cout, cin}, ember::kInt8);
        const Tensor x = ember::randint(0, 128, {n * 36, cin}, ember::kUInt8);  // rows: positions
        const Tensor bias = ember::randn({cout});
        const float x_scale = 0.05f, w_scale = 0.002f, y_scale = 0.3f;
        const int32_t x_zp = 64, y_zp = 100;
        ember::kernels::Int8Conv conv(w.data_ptr<int8_t>(), w_sizes, {w_scale}, bias.data_ptr<float>(),
                                      {{1, 1}, {0, 0}, {0, 0}, {1, 1}});
        constexpr int64_t kGuard = 4096;
        std::vector<uint8_t> y(static_cast<size_t>(n * 36 * cout + kGuard), 0xAB);
        conv.run(x.data_ptr<uint8_t>(), x_sizes, x_strides, x_scale, x_zp, y.data(), y_sizes, y_strides, y_scale, y_zp);
        for (int64_t i = n * 36 * cout; i < static_cast<int64_t>(y.size()); ++i) {
          ASSERT_EQ(y[static_cast<size_t>(i)], 0xAB)
              << "written " << i - n * 36 * cout << " bytes past the output ("
              << conv.impl(x_sizes, x_strides, x_scale, y_sizes, y_strides, y_scale) << ")";
        }
        const Tensor ref = ((x.to(ember::kFloat) - x_zp) * x_scale)
                               .matmul(w.to(ember::kFloat).t() * w_scale)
                               .add(bias)
                               .div(y_scale)
                               .round()
                               .add(y_zp)
                               .clamp(0, 255);
        const Tensor got = ember::from_blob(y.data(), {n * 36, cout}, ember::kUInt8).to(ember::kFloat);
        EXPECT_LE((got - ref).abs().max().item<float>(), 1.f);
      }
    }
  }
}

TEST(QuantizedConv, FromFloatPaddingModesPrintingAndBadInput) {
  ember::manual_seed(5);
  ember::nn::Conv2d conv(ember::nn::Conv2dOptions(3, 8, 3).padding(1));
  const Tensor x = ember::rand({2, 3, 9, 9});
  const Tensor qx = ember::quantize_per_tensor(x, 1.0 / 128, 0, ember::kQUInt8);
  auto m = nnq::Conv2dImpl::from_float(*conv, 0.02, 60);
  const Tensor y = m->forward(qx);
  EXPECT_EQ(y.sizes(), ember::IntArrayRef({2, 8, 9, 9}));
  EXPECT_TRUE(y.is_contiguous(ember::MemoryFormat::ChannelsLast));  // as PyTorch's
  EXPECT_LE((y.dequantize() - conv(qx.dequantize()).clamp(-60 * 0.02, 195 * 0.02)).abs().max().item<double>(), 0.03);
  std::ostringstream os;
  os << *m;
  EXPECT_EQ(os.str(), "QuantizedConv2d(3, 8, kernel_size=[3, 3], stride=[1, 1], scale=0.02, zero_point=60, "
                      "padding=[1, 1])");

  // 'same' (odd total padding: the extra one on the right, as PyTorch) and 'valid'
  ember::nn::Conv2d even(ember::nn::Conv2dOptions(3, 4, 4).padding(ember::kSame).bias(false));
  auto same = nnq::Conv2dImpl::from_float(*even, 0.02, 60);
  const Tensor ys = same->forward(qx);
  EXPECT_EQ(ys.sizes(), ember::IntArrayRef({2, 4, 9, 9}));
  EXPECT_LE((ys.dequantize() - even(qx.dequantize()).clamp(-60 * 0.02, 195 * 0.02)).abs().max().item<double>(),
            0.03);
  ember::nn::Conv2d valid(ember::nn::Conv2dOptions(3, 4, 3).padding(ember::kValid));
  EXPECT_EQ(nnq::Conv2dImpl::from_float(*valid, 0.02, 60)->forward(qx).sizes(), ember::IntArrayRef({2, 4, 7, 7}));

  // ConvReLU from the float fused module: clamped at the zero point
  ember::nn::intrinsic::ConvReLU2d fused(conv);
  const Tensor yr = nniq::ConvReLU2dImpl::from_float(*fused, 0.02, 60)->forward(qx);
  EXPECT_TRUE(yr.int_repr().equal(y.int_repr().clamp_min(60)));

  expect_error([&] { m->forward(x); }, "expected a quint8 input");
  expect_error([&] { m->forward(ember::quantize_per_tensor(x, 0.01, 0, ember::kQInt8)); }, "expected a quint8 input");
  expect_error([&] { m->forward(qx.narrow(1, 0, 2)); }, "to have 3 channels, but got 2 channels");
  expect_error([&] { m->forward(qx[0]); }, "expected a batched 4-D input");
  expect_error(
      [&] {
        nnq::Conv2dImpl::from_float(*valid, 0.02, 60)->forward(
            ember::quantize_per_tensor(ember::rand({1, 3, 2, 2}), 0.1, 0, ember::kQUInt8));
      },
      "smaller than the kernel");
  expect_error([&] { nnq::Conv2dImpl::from_float(*conv, 0.0, 60); }, "finite and positive");
  expect_error([&] { nnq::Conv2dImpl::from_float(*conv, 0.1, 256); }, "zero point must be in [0, 255]");
  const Tensor qw = m->weight();
  expect_error([&] { nnq::Conv2d(qw.dequantize(), std::nullopt, ember::nn::Conv2dOptions(3, 8, 3), 0.1, 0); },
               "expected a 4-D qint8 quantized weight");
  expect_error([&] { nnq::Conv2d(qw, std::nullopt, ember::nn::Conv2dOptions(4, 8, 3), 0.1, 0); },
               "the options say 4 -> 8 channels");
  expect_error([&] { nnq::Conv2d(qw, std::nullopt, ember::nn::Conv2dOptions(3, 8, 3).padding_mode(ember::kReflect), 0.1, 0); },
               "only zeros padding");
  expect_error([&] { nnq::Conv2d(qw, ember::zeros({7}), ember::nn::Conv2dOptions(3, 8, 3), 0.1, 0); },
               "expected a float32 bias of size [8]");
  const Tensor asym = ember::quantize_per_tensor(qw.dequantize(), 0.01, 3, ember::kQInt8);
  expect_error([&] { nnq::Conv2d(asym, std::nullopt, ember::nn::Conv2dOptions(3, 8, 3), 0.1, 0); },
               "quantized symmetrically");
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
