// ember::fx against libtorch: Conv1d/2d/3d and Linear each followed by a BatchNorm in eval mode,
// traced and folded by fx::fuse_conv_bn (and optimize_for_inference), against libtorch's eager
// unfused module with the same parameters and running statistics; the fused convolution and ReLU
// or Hardswish (nn::intrinsic's ConvReLU and fx's ConvHardswish, what optimize_for_inference
// makes) against libtorch's two ops.
#include "ember/fx.h"
#include "ember/nn/intrinsic.h"
#include "parity/parity.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace enn = ember::nn;
namespace tnn = torch::nn;

namespace {

// Traces `e`, folds it, and compares with libtorch's `t` on x (both in eval mode, running
// statistics moved away from their initial values first).
void expect_folded(enn::Sequential e, tnn::Sequential t, const ember::Tensor& x, size_t folds) {
  for (int i = 0; i < 2; ++i) e->forward(parity::random(x.sizes(), ember::kFloat, 100 + i) * 2.0 + 0.5);
  e->eval();
  t->eval();
  parity::copy_module_state(*e, *t);
  auto gm = ember::fx::symbolic_trace(e, x);
  EXPECT_EQ(ember::fx::fuse_conv_bn(*gm), folds);
  const torch::Tensor want = t->forward(parity::to_torch(x));
  EXPECT_TRUE(parity::Close(gm->forward(x), want, parity::Tol{1e-5, 1e-5}));
  auto gm2 = ember::fx::symbolic_trace(e, x);
  ember::fx::optimize_for_inference(*gm2);
  EXPECT_TRUE(parity::Close(gm2->forward(x), want, parity::Tol{1e-5, 1e-5}));
}

TEST(FxParity, ConvBnFoldingAgainstLibtorchEager) {
  expect_folded(enn::Sequential(enn::Conv1d(enn::Conv1dOptions(3, 5, 3).padding(1)), enn::BatchNorm1d(5), enn::ReLU()),
                tnn::Sequential(tnn::Conv1d(tnn::Conv1dOptions(3, 5, 3).padding(1)), tnn::BatchNorm1d(5), tnn::ReLU()),
                parity::random({4, 3, 9}, ember::kFloat, 1), 1);
  expect_folded(
      enn::Sequential(enn::Conv2d(enn::Conv2dOptions(3, 6, 3).stride(2).bias(false)), enn::BatchNorm2d(6),
                      enn::Conv2d(enn::Conv2dOptions(6, 4, 1).groups(2)), enn::BatchNorm2d(4), enn::Dropout(0.3)),
      tnn::Sequential(tnn::Conv2d(tnn::Conv2dOptions(3, 6, 3).stride(2).bias(false)), tnn::BatchNorm2d(6),
                      tnn::Conv2d(tnn::Conv2dOptions(6, 4, 1).groups(2)), tnn::BatchNorm2d(4), tnn::Dropout(0.3)),
      parity::random({2, 3, 11, 11}, ember::kFloat, 2), 2);
  expect_folded(enn::Sequential(enn::Conv3d(enn::Conv3dOptions(2, 3, 2)), enn::BatchNorm3d(3)),
                tnn::Sequential(tnn::Conv3d(tnn::Conv3dOptions(2, 3, 2)), tnn::BatchNorm3d(3)),
                parity::random({2, 2, 5, 5, 5}, ember::kFloat, 3), 1);
  expect_folded(enn::Sequential(enn::Linear(7, 5), enn::BatchNorm1d(5), enn::Linear(5, 3)),
                tnn::Sequential(tnn::Linear(7, 5), tnn::BatchNorm1d(5), tnn::Linear(5, 3)),
                parity::random({6, 7}, ember::kFloat, 4), 1);
}

struct ConvCase {
  std::vector<int64_t> x, w;
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups;
  bool bias;
};

// hardswish(conv) as fx's fused module runs it: Sequential(conv, Hardswish) holding w and b,
// traced, fused by fuse_conv_hardswish and run without a graph to record (or, given `params`, with
// one: the convolution and hardswish recorded; `params` receives the module's weight and bias).
template <class Conv, class Options>
ember::Tensor conv_hardswish_via_fx(const ember::Tensor& x, const ember::Tensor& w, const ember::Tensor& b,
                                    const ConvCase& c, std::vector<ember::Tensor>* params) {
  Conv conv(Options(c.x[1], c.w[0], std::vector<int64_t>(c.w.begin() + 2, c.w.end()))
                .stride(c.stride)
                .padding(c.padding)
                .dilation(c.dilation)
                .groups(c.groups)
                .bias(c.bias));
  conv->to(w.scalar_type());
  enn::set_data(conv->weight, w);
  if (c.bias) enn::set_data(conv->bias, b);
  enn::Sequential s(conv, enn::Hardswish());
  s->eval();
  auto gm = ember::fx::symbolic_trace(s, x.detach());
  EXPECT_EQ(ember::fx::fuse_conv_hardswish(*gm), 1u) << gm->code();
  if (params) {
    *params = {conv->weight, conv->bias};
    return gm->forward(x);
  }
  ember::InferenceMode guard;
  return gm->forward(x);
}

ember::Tensor conv_hardswish_via_fx(const ember::Tensor& x, const ember::Tensor& w, const ember::Tensor& b,
                                    const ConvCase& c, std::vector<ember::Tensor>* params = nullptr) {
  if (c.x.size() == 3) return conv_hardswish_via_fx<enn::Conv1d, enn::Conv1dOptions>(x, w, b, c, params);
  if (c.x.size() == 4) return conv_hardswish_via_fx<enn::Conv2d, enn::Conv2dOptions>(x, w, b, c, params);
  return conv_hardswish_via_fx<enn::Conv3d, enn::Conv3dOptions>(x, w, b, c, params);
}

// relu(conv) (nn::intrinsic's convolution_relu) and hardswish(conv) (fx's ConvHardswish) in one
// oneDNN primitive against libtorch's conv then relu or hardswish: 1-, 2- and 3-D, strides,
// paddings, dilation, groups (depthwise too), no bias, channels_last, bfloat16, and the recorded
// path's gradients.
TEST(FxParity, ConvolutionActivationAgainstLibtorch) {
  enum class Act { kReLU, kHardswish };
  auto activated = [](Act act, const torch::Tensor& y) { return act == Act::kReLU ? torch::relu(y) : torch::hardswish(y); };
  using Case = ConvCase;
  const Case cases[] = {
      {{3, 4, 17}, {6, 4, 3}, {1}, {1}, {1}, 1, true},
      {{2, 3, 13, 11}, {8, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true},
      {{2, 16, 12, 12}, {32, 16, 3, 3}, {2, 2}, {1, 0}, {1, 1}, 1, false},
      {{1, 8, 9, 10}, {8, 2, 3, 3}, {1, 1}, {2, 2}, {2, 2}, 4, true},
      {{2, 2, 5, 6, 7}, {3, 2, 2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1, true},
      {{1, 24, 14, 14}, {24, 1, 5, 5}, {2, 2}, {2, 2}, {1, 1}, 24, true},
  };
  uint64_t seed = 40;
  for (const Case& c : cases) {
    for (Act act : {Act::kReLU, Act::kHardswish}) {
      for (ember::ScalarType dt : {ember::kFloat, ember::kBFloat16}) {
        for (bool cl : {false, true}) {
          if (cl && c.x.size() != 4) continue;
          ember::Tensor x = parity::random(c.x, dt, ++seed), w = parity::random(c.w, dt, ++seed);
          const ember::Tensor b = c.bias ? parity::random({c.w[0]}, dt, ++seed) : ember::Tensor();
          if (cl) x = x.contiguous(ember::MemoryFormat::ChannelsLast);
          const ember::Tensor got =
              act == Act::kReLU ? ember::detail::convolution_relu(x, w, b, c.stride, c.padding, c.dilation, c.groups)
                                : conv_hardswish_via_fx(x, w, b, c);
          // The fused hardswish acts on the float32 sum and rounds once; libtorch's two ops round the
          // sum to bfloat16 first, which near x = -3 (hardswish's root) moves the result by up to
          // 10%: so in bfloat16 the reference is libtorch's float32 ops on the same values, rounded.
          // So it is where libtorch's bfloat16 convolution is not oneDNN's (it rounds as it sums).
          const bool widen =
              dt == ember::kBFloat16 && (act == Act::kHardswish || !parity::libtorch_bfloat16_on_onednn());
          auto T = [&](const ember::Tensor& t) { return widen ? parity::to_torch(t).to(torch::kFloat) : parity::to_torch(t); };
          const torch::Tensor tx = T(x), tw = T(w);
          const torch::Tensor tb = c.bias ? T(b) : torch::Tensor();
          torch::Tensor conv;
          if (c.x.size() == 3) conv = torch::conv1d(tx, tw, tb, c.stride, c.padding, c.dilation, c.groups);
          if (c.x.size() == 4) conv = torch::conv2d(tx, tw, tb, c.stride, c.padding, c.dilation, c.groups);
          if (c.x.size() == 5) conv = torch::conv3d(tx, tw, tb, c.stride, c.padding, c.dilation, c.groups);
          EXPECT_TRUE(parity::Close(got, activated(act, conv).to(parity::to_torch(dt))))
              << "input " << ember::IntArrayRef(c.x) << " " << dt << (cl ? " channels_last" : "") << " activation "
              << static_cast<int>(act);
          EXPECT_EQ(got.suggest_memory_format(), cl ? ember::MemoryFormat::ChannelsLast : ember::MemoryFormat::Contiguous);
        }
      }
    }
  }
  // With a gradient wanted, the two ops are recorded: the gradients are libtorch's.
  for (Act act : {Act::kReLU, Act::kHardswish}) {
    ember::Tensor x = parity::random({2, 3, 9, 8}, ember::kFloat, 90);
    ember::Tensor w = parity::random({5, 3, 3, 3}, ember::kFloat, 91), b = parity::random({5}, ember::kFloat, 92);
    torch::Tensor tx = parity::to_torch(x).requires_grad_(), tw = parity::to_torch(w).requires_grad_();
    torch::Tensor tb = parity::to_torch(b).requires_grad_();
    x.requires_grad_(), w.requires_grad_(), b.requires_grad_();
    std::vector<ember::Tensor> params{w, b};  // the module's own parameters on the fx path
    const ember::Tensor y =
        act == Act::kReLU ? ember::detail::convolution_relu(x, w, b, {1, 1}, {1, 1}, {1, 1}, 1)
                          : conv_hardswish_via_fx(x, w, b, Case{{2, 3, 9, 8}, {5, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true},
                                                  &params);
    const torch::Tensor ty = activated(act, torch::conv2d(tx, tw, tb, 1, 1));
    EXPECT_TRUE(parity::Close(y, ty));
    const ember::Tensor g = parity::random(y.sizes(), ember::kFloat, 93);
    y.backward(g);
    ty.backward(parity::to_torch(g));
    EXPECT_TRUE(parity::Close(x.grad(), tx.grad()));
    EXPECT_TRUE(parity::Close(params[0].grad(), tw.grad()));
    EXPECT_TRUE(parity::Close(params[1].grad(), tb.grad()));
  }
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
