// Derivatives of convolution and pooling: gradcheck in float64 of every op and option, PyTorch's
// node names, gradient layouts, reuse of the cached oneDNN backward primitives and errors.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "ember/ember.h"
#include "kernels/cpu/onednn.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;  // NOLINT
namespace F = ember::nn::functional;
using autograd::variable_list;

namespace {

Tensor rand64(IntArrayRef sizes, MemoryFormat format = MemoryFormat::Contiguous) {
  return randn(sizes, TensorOptions().dtype(kDouble)).contiguous(format).requires_grad_();
}

using Fn = std::function<Tensor(const variable_list&)>;
void check(const std::string& what, const Fn& f, const variable_list& inputs) {
  SCOPED_TRACE(what);
  try {
    EXPECT_TRUE(autograd::gradcheck(f, inputs));
  } catch (const Error& e) {
    ADD_FAILURE() << e.what();
  }
}

// d/dx of sum(f(x) * u), recorded (create_graph) so that gradcheck differentiates it again; its
// finite differences run under no_grad and with x not requiring grad, so both are restored here.
Tensor recorded_grad(const std::function<Tensor(const Tensor&)>& f, const Tensor& x, const Tensor& u) {
  AutoGradMode enable(true);
  const Tensor leaf = x.requires_grad() ? x : x.detach().requires_grad_();
  return autograd::grad({(f(leaf) * u).sum()}, {leaf}, {}, std::nullopt, true)[0];
}

std::string grad_fn_name(const Tensor& t) { return t.grad_fn() ? t.grad_fn()->name() : "(leaf)"; }

// ---- convolution -------------------------------------------------------------------------------

TEST(ConvGrad, Conv2dOptions) {
  manual_seed(1);
  struct Opt {
    int64_t stride, padding, dilation, groups;
  };
  for (const Opt o : {Opt{1, 0, 1, 1}, Opt{2, 1, 1, 1}, Opt{1, 2, 2, 1}, Opt{2, 1, 1, 2}, Opt{3, 0, 2, 4}}) {
    const std::string what = "stride " + std::to_string(o.stride) + " padding " + std::to_string(o.padding) +
                             " dilation " + std::to_string(o.dilation) + " groups " + std::to_string(o.groups);
    check(what,
          [o](const variable_list& v) { return ember::conv2d(v[0], v[1], v[2], o.stride, o.padding, o.dilation, o.groups); },
          {rand64({2, 4, 7, 6}), rand64({4, 4 / o.groups, 3, 2}), rand64({4})});
  }
  // no bias, asymmetric stride and padding, an unbatched input
  check("no bias", [](const variable_list& v) { return ember::conv2d(v[0], v[1], {}, {2, 1}, {1, 0}); },
        {rand64({1, 2, 5, 5}), rand64({3, 2, 3, 3})});
  check("unbatched", [](const variable_list& v) { return ember::conv2d(v[0], v[1], v[2], 1, 1); },
        {rand64({2, 4, 4}), rand64({3, 2, 3, 3}), rand64({3})});
  check("channels_last", [](const variable_list& v) { return ember::conv2d(v[0], v[1], v[2], 1, 1); },
        {rand64({2, 3, 5, 4}, MemoryFormat::ChannelsLast), rand64({2, 3, 3, 3}), rand64({2})});
}

TEST(ConvGrad, Conv1dAnd3dAndPaddingModes) {
  manual_seed(2);
  check("conv1d", [](const variable_list& v) { return ember::conv1d(v[0], v[1], v[2], 2, 1, 2, 2); },
        {rand64({2, 4, 9}), rand64({6, 2, 3}), rand64({6})});
  check("conv1d same", [](const variable_list& v) { return ember::conv1d(v[0], v[1], v[2], 1, "same", 2); },
        {rand64({1, 2, 7}), rand64({3, 2, 4}), rand64({3})});
  check("conv2d same", [](const variable_list& v) { return ember::conv2d(v[0], v[1], {}, 1, "same"); },
        {rand64({1, 2, 5, 6}), rand64({2, 2, 2, 3})});
  check("conv2d valid", [](const variable_list& v) { return ember::conv2d(v[0], v[1], v[2], 1, "valid"); },
        {rand64({2, 2, 4, 4}), rand64({2, 2, 3, 3}), rand64({2})});
  check("conv3d", [](const variable_list& v) { return ember::conv3d(v[0], v[1], v[2], {1, 2, 1}, 1, 1, 2); },
        {rand64({1, 4, 4, 5, 3}), rand64({2, 2, 2, 3, 2}), rand64({2})});
}

TEST(ConvGrad, ConvTranspose) {
  manual_seed(3);
  check("conv_transpose2d", [](const variable_list& v) { return ember::conv_transpose2d(v[0], v[1], v[2], 2, 1, 1); },
        {rand64({2, 3, 4, 3}), rand64({3, 2, 3, 3}), rand64({2})});
  check("conv_transpose2d groups dilation",
        [](const variable_list& v) { return ember::conv_transpose2d(v[0], v[1], v[2], {2, 1}, {0, 1}, {1, 0}, 2, {1, 2}); },
        {rand64({1, 4, 3, 4}), rand64({4, 3, 2, 3}), rand64({6})});
  // output_padding below the dilation but not the stride: outputs no input position reaches
  check("conv_transpose1d", [](const variable_list& v) { return ember::conv_transpose1d(v[0], v[1], v[2], 1, 0, 1, 1, 2); },
        {rand64({2, 3, 5}), rand64({3, 2, 3}), rand64({2})});
  check("conv_transpose1d unbatched", [](const variable_list& v) { return ember::conv_transpose1d(v[0], v[1], {}, 3); },
        {rand64({2, 4}), rand64({2, 3, 2})});
}

TEST(ConvGrad, NodeNamesAndLayouts) {
  const Tensor x = randn({2, 3, 6, 6}).requires_grad_(), w = randn({4, 3, 3, 3}).requires_grad_();
  EXPECT_EQ(grad_fn_name(ember::conv2d(x, w)), "ConvolutionBackward0");
  EXPECT_EQ(grad_fn_name(ember::conv1d(randn({2, 3, 6}).requires_grad_(), randn({2, 3, 3}))), "ConvolutionBackward0");
  EXPECT_EQ(grad_fn_name(ember::conv_transpose2d(x, randn({3, 2, 3, 3}))), "ConvolutionBackward0");
  EXPECT_EQ(grad_fn_name(ember::conv2d(x[0], w)), "SqueezeBackward1");
  {
    NoGradGuard guard;
    EXPECT_FALSE(ember::conv2d(x, w).requires_grad());
  }
  // a channels_last input gets a channels_last gradient; bfloat16 gradients stay bfloat16
  const Tensor xcl = randn({2, 3, 6, 6}).contiguous(MemoryFormat::ChannelsLast).requires_grad_();
  ember::conv2d(xcl, w, {}, 1, 1).sum().backward();
  EXPECT_TRUE(xcl.grad().is_contiguous(MemoryFormat::ChannelsLast));
  const Tensor xb = randn({2, 3, 6, 6}).to(kBFloat16).requires_grad_(), wb = randn({4, 3, 3, 3}).to(kBFloat16).requires_grad_();
  ember::conv2d(xb, wb).sum().backward();
  EXPECT_EQ(xb.grad().dtype(), kBFloat16);
  EXPECT_EQ(wb.grad().dtype(), kBFloat16);
  EXPECT_EQ(wb.grad().sizes(), wb.sizes());
}

TEST(ConvGrad, EmptyBatchAndHalf) {
  const Tensor x = empty({0, 3, 5, 5}).requires_grad_(), w = randn({2, 3, 3, 3}).requires_grad_();
  const Tensor b = randn({2}).requires_grad_();
  ember::conv2d(x, w, b).sum().backward();
  EXPECT_EQ(x.grad().sizes(), x.sizes());
  EXPECT_EQ(w.grad().abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(b.grad().abs().sum().item<float>(), 0.0f);
  // float16 runs in float32: the gradients match the float32 ones to float16 precision
  const Tensor x32 = randn({1, 2, 5, 5}).requires_grad_(), w32 = randn({3, 2, 3, 3}).requires_grad_();
  const Tensor x16 = x32.detach().to(kHalf).requires_grad_(), w16 = w32.detach().to(kHalf).requires_grad_();
  ember::conv2d(x32, w32).sum().backward();
  ember::conv2d(x16, w16).sum().backward();
  EXPECT_LT((w16.grad().to(kFloat) - w32.grad()).abs().max().item<float>(), 0.05f);
  EXPECT_LT((x16.grad().to(kFloat) - x32.grad()).abs().max().item<float>(), 0.05f);
}

TEST(ConvGrad, BiasWithAndWithoutTheWeight) {
  // the bias's gradient comes from the weight's oneDNN pass when both are wanted, else from a sum
  const Tensor x = randn({2, 3, 6, 6}), w = randn({4, 3, 3, 3}), b = randn({4}).requires_grad_();
  const Tensor g = randn({2, 4, 4, 4});
  ember::conv2d(x, w, b).backward(g);
  const Tensor expected = g.sum(IntArrayRef{0, 2, 3});
  EXPECT_LT((b.grad() - expected).abs().max().item<float>(), 1e-4f);
  const Tensor wg = w.detach().requires_grad_(), bg = b.detach().requires_grad_();
  ember::conv2d(x, wg, bg).backward(g);
  EXPECT_LT((bg.grad() - expected).abs().max().item<float>(), 1e-4f);
  // twice: the fused gradient is handed over once per backward
  const Tensor y = ember::conv2d(x, wg, bg);
  y.backward(g, true);
  y.backward(g);
  EXPECT_LT((bg.grad() - expected * 3).abs().max().item<float>(), 1e-3f);
  const Tensor bf = randn({4}).to(kBFloat16).requires_grad_();
  ember::conv2d(x.to(kBFloat16), wg.detach().to(kBFloat16).requires_grad_(), bf).backward(g.to(kBFloat16));
  EXPECT_EQ(bf.grad().dtype(), kBFloat16);
  const Tensor expected_bf = g.to(kBFloat16).to(kFloat).sum(IntArrayRef{0, 2, 3});
  EXPECT_LT((bf.grad().to(kFloat) - expected_bf).abs().max().item<float>(), 0.1f);
}

TEST(ConvGrad, RepeatedBackwardCreatesNoPrimitive) {
  const Tensor x = randn({4, 3, 8, 8}).requires_grad_(), w = randn({5, 3, 3, 3}).requires_grad_();
  ember::conv2d(x, w, {}, 1, 1).sum().backward();
  const size_t entries = onednn::cache_size();
  for (int i = 0; i < 3; ++i) ember::conv2d(x, w, {}, 1, 1).sum().backward();
  EXPECT_EQ(onednn::cache_size(), entries);
}

TEST(ConvGrad, DoubleBackward) {
  // the gradients of both the input's and the weight's gradient, as functions of x, w and u
  manual_seed(4);
  check("grad of grad_input",
        [](const variable_list& v) {
          return recorded_grad([&](const Tensor& x) { return ember::conv2d(x, v[1], {}, 2, 1, 1, 2); }, v[0], v[2]);
        },
        {rand64({1, 4, 5, 5}), rand64({2, 2, 3, 3}), rand64({1, 2, 3, 3})});
  check("grad of grad_weight",
        [](const variable_list& v) {
          return recorded_grad([&](const Tensor& w) { return ember::conv2d(v[0], w, {}, {2, 1}, {1, 0}, {1, 2}, 2); }, v[1],
                               v[2]);
        },
        {rand64({2, 4, 5, 6}), rand64({2, 2, 3, 2}), rand64({2, 2, 3, 4})});
  check("grad of conv_transpose1d grad_weight",
        [](const variable_list& v) {
          return recorded_grad([&](const Tensor& w) { return ember::conv_transpose1d(v[0], w, {}, 2, 1, 1, 2, 2); }, v[1],
                               v[2]);
        },
        {rand64({2, 4, 4}), rand64({4, 1, 2}), rand64({2, 2, 8})});
  check("grad of conv1d same grad_weight",
        [](const variable_list& v) {
          return recorded_grad([&](const Tensor& w) { return ember::conv1d(v[0], w, {}, 1, "same", 2); }, v[1], v[2]);
        },
        {rand64({2, 2, 6}), rand64({3, 2, 2}), rand64({2, 3, 6})});
}

TEST(ConvGrad, Errors) {
  const Tensor x = randn({1, 3, 6, 6}).requires_grad_();
  EXPECT_ERROR(ember::conv2d(x, randn({4, 2, 3, 3})), "conv2d", "expected input[1, 3, 6, 6] to have 2 channels");
  EXPECT_ERROR(ember::conv_transpose2d(x, randn({2, 2, 3, 3})), "conv_transpose2d", "expected input[1, 3, 6, 6]");
  EXPECT_ERROR(ember::conv2d(x, randn({2, 3, 7, 7}).requires_grad_()), "conv2d", "Kernel size can't be greater");
  EXPECT_ERROR(ember::conv1d(randn({3, 2}).requires_grad_(), randn({2, 3, 3})), "conv1d", "Kernel size can't be greater");
}

// ---- pooling -----------------------------------------------------------------------------------

TEST(PoolGrad, MaxPool) {
  manual_seed(5);
  check("max_pool2d", [](const variable_list& v) { return ember::max_pool2d(v[0], 2); }, {rand64({2, 3, 5, 4})});
  check("max_pool2d padding dilation ceil",
        [](const variable_list& v) { return ember::max_pool2d(v[0], {3, 2}, {2, 1}, {1, 1}, {1, 2}, true); },
        {rand64({1, 2, 7, 6})});
  check("max_pool2d overlapping windows", [](const variable_list& v) { return ember::max_pool2d(v[0], 3, 1, 1); },
        {rand64({1, 1, 4, 5})});
  check("max_pool2d channels_last unbatched", [](const variable_list& v) { return ember::max_pool2d(v[0], 2); },
        {rand64({2, 3, 4, 4}, MemoryFormat::ChannelsLast)});
  check("max_pool2d unbatched", [](const variable_list& v) { return ember::max_pool2d(v[0], 2, 1); }, {rand64({2, 3, 3})});
  check("max_pool1d", [](const variable_list& v) { return ember::max_pool1d(v[0], 3, 2, 1, 2, true); },
        {rand64({2, 3, 9})});
  check("max_pool2d_with_indices",
        [](const variable_list& v) { return std::get<0>(ember::max_pool2d_with_indices(v[0], 2, 1)); },
        {rand64({1, 2, 4, 4})});
  check("max_pool1d_with_indices",
        [](const variable_list& v) { return std::get<0>(ember::max_pool1d_with_indices(v[0], 2)); }, {rand64({2, 6})});
  check("max_pool2d double backward",
        [](const variable_list& v) { return recorded_grad([](const Tensor& x) { return ember::max_pool2d(x, 2, 1); }, v[0], v[1]); },
        {rand64({1, 1, 4, 4}), rand64({1, 1, 3, 3})});
}

TEST(PoolGrad, AvgPool) {
  manual_seed(6);
  for (bool ceil : {false, true})
    for (bool count_pad : {false, true}) {
      const std::string what = std::string("avg_pool2d ceil ") + (ceil ? "1" : "0") + " count_include_pad " +
                               (count_pad ? "1" : "0");
      check(what, [=](const variable_list& v) { return ember::avg_pool2d(v[0], {3, 2}, {2, 2}, {1, 1}, ceil, count_pad); },
            {rand64({2, 2, 6, 5})});
      check("avg_pool1d, " + what, [=](const variable_list& v) { return ember::avg_pool1d(v[0], 3, 2, 1, ceil, count_pad); },
            {rand64({2, 7})});
    }
  check("avg_pool2d divisor_override",
        [](const variable_list& v) { return ember::avg_pool2d(v[0], 2, 1, 0, false, true, 3); }, {rand64({1, 2, 3, 4})});
  check("avg_pool2d double backward",
        [](const variable_list& v) {
          return recorded_grad([](const Tensor& x) { return ember::avg_pool2d(x, 3, 2, 1, true, false); }, v[0], v[1]);
        },
        {rand64({1, 2, 5, 6}), rand64({1, 2, 3, 4})});
  check("avg_pool2d channels_last", [](const variable_list& v) { return ember::avg_pool2d(v[0], 2); },
        {rand64({2, 3, 4, 6}, MemoryFormat::ChannelsLast)});
}

TEST(PoolGrad, AdaptivePool) {
  manual_seed(7);
  check("adaptive_avg_pool2d", [](const variable_list& v) { return ember::adaptive_avg_pool2d(v[0], {3, 2}); },
        {rand64({2, 2, 7, 5})});
  check("adaptive_avg_pool2d unbatched larger", [](const variable_list& v) { return ember::adaptive_avg_pool2d(v[0], {4, 6}); },
        {rand64({2, 3, 5})});
  check("adaptive_avg_pool2d 1x1 channels_last", [](const variable_list& v) { return ember::adaptive_avg_pool2d(v[0], {1, 1}); },
        {rand64({2, 3, 4, 5}, MemoryFormat::ChannelsLast)});
  check("adaptive_avg_pool2d double backward",
        [](const variable_list& v) {
          return recorded_grad([](const Tensor& x) { return ember::adaptive_avg_pool2d(x, {2, 3}); }, v[0], v[1]);
        },
        {rand64({1, 2, 5, 4}), rand64({1, 2, 2, 3})});
  check("adaptive_avg_pool1d", [](const variable_list& v) { return ember::adaptive_avg_pool1d(v[0], {4}); },
        {rand64({2, 3, 10})});
  check("adaptive_max_pool2d", [](const variable_list& v) { return std::get<0>(ember::adaptive_max_pool2d(v[0], {2, 3})); },
        {rand64({1, 2, 5, 7})});
  check("adaptive_max_pool2d channels_last", [](const variable_list& v) { return std::get<0>(ember::adaptive_max_pool2d(v[0], {3, 3})); },
        {rand64({2, 3, 6, 6}, MemoryFormat::ChannelsLast)});
}

TEST(PoolGrad, NodeNamesAndLayouts) {
  const Tensor x = randn({2, 3, 6, 6}).requires_grad_(), x1 = randn({2, 3, 6}).requires_grad_();
  EXPECT_EQ(grad_fn_name(ember::max_pool2d(x, 2)), "MaxPool2DWithIndicesBackward0");
  EXPECT_EQ(grad_fn_name(ember::max_pool2d(x[0], 2)), "MaxPool2DWithIndicesBackward0");
  EXPECT_EQ(grad_fn_name(std::get<0>(ember::max_pool2d_with_indices(x, 2))), "MaxPool2DWithIndicesBackward0");
  EXPECT_EQ(grad_fn_name(ember::max_pool1d(x1, 2)), "SqueezeBackward1");
  EXPECT_EQ(grad_fn_name(ember::avg_pool2d(x, 2)), "AvgPool2DBackward0");
  EXPECT_EQ(grad_fn_name(ember::avg_pool1d(x1, 2)), "SqueezeBackward1");
  EXPECT_EQ(grad_fn_name(ember::adaptive_avg_pool2d(x, {3, 3})), "AdaptiveAvgPool2DBackward0");
  EXPECT_EQ(grad_fn_name(ember::adaptive_avg_pool1d(x1, {3})), "SqueezeBackward1");
  EXPECT_EQ(grad_fn_name(std::get<0>(ember::adaptive_max_pool2d(x, {3, 3}))), "AdaptiveMaxPool2DBackward0");
  EXPECT_EQ(grad_fn_name(ember::adaptive_avg_pool2d(x, {1, 1})), "MeanBackward1");
  const auto [values, indices] = ember::max_pool2d_with_indices(x, 2);
  EXPECT_FALSE(indices.requires_grad());
  // the indices a max pooling returns are the ones its gradient uses
  values.sum().backward();
  EXPECT_EQ(x.grad().sum().item<float>(), static_cast<float>(values.numel()));

  const Tensor xcl = randn({2, 3, 6, 6}).contiguous(MemoryFormat::ChannelsLast).requires_grad_();
  (ember::max_pool2d(xcl, 2).sum() + ember::avg_pool2d(xcl, 3).sum()).backward();
  EXPECT_TRUE(xcl.grad().is_contiguous(MemoryFormat::ChannelsLast));
  const Tensor xb = randn({1, 2, 4, 4}).to(kBFloat16).requires_grad_();
  ember::max_pool2d(xb, 2).sum().backward();
  EXPECT_EQ(xb.grad().dtype(), kBFloat16);
  // an empty batch has an empty gradient
  const Tensor xe = empty({0, 2, 4, 4}).requires_grad_();
  ember::max_pool2d(xe, 2).sum().backward();
  EXPECT_EQ(xe.grad().sizes(), xe.sizes());
}

TEST(PoolGrad, Errors) {
  const Tensor x = randn({1, 2, 4, 4}).requires_grad_();
  EXPECT_ERROR(ember::max_pool2d(x, 5), "max_pool2d", "Output size is too small");
  EXPECT_ERROR(ember::max_pool1d(randn({2, 3}).requires_grad_(), 2, 1, 2), "max_pool1d",
               "pad should be smaller than or equal to half of kernel size");
  EXPECT_ERROR(ember::avg_pool1d(randn({2, 3, 4, 5}).requires_grad_(), 2), "avg_pool1d", "Expected 2D or 3D");
  EXPECT_ERROR(ember::avg_pool2d(x, 2, 2, 0, false, true, 0), "avg_pool2d", "divisor must be not zero");
  EXPECT_ERROR(ember::adaptive_avg_pool1d(x, {2}), "adaptive_avg_pool1d", "Expected 2D or 3D tensor");
  EXPECT_ERROR(ember::adaptive_max_pool2d(x, {2}), "adaptive_max_pool2d", "output_size must be 2");
}

}  // namespace

// channels_last avg pooling runs in place (no layout copies) and gives the contiguous kernel's
// results bit for bit, forward and backward, adaptive too.
TEST(PoolGrad, AvgPoolChannelsLastMatchesContiguousExactly) {
  for (const ScalarType dt : {kFloat, kBFloat16, kDouble}) {
    const Tensor x = randn({2, 5, 9, 8}).to(dt);
    const Tensor xc = x.clone().set_requires_grad(true);
    const Tensor xl = x.contiguous(MemoryFormat::ChannelsLast).set_requires_grad(true);
    for (int variant = 0; variant < 3; ++variant) {
      SCOPED_TRACE(::testing::Message() << dt << " variant " << variant);
      const auto pool = [&](const Tensor& t) {
        if (variant == 0) return ember::avg_pool2d(t, 3, 2, 1, true, false);
        if (variant == 1) return ember::avg_pool2d(t, 2, 1, 0, false, true, 3);
        return ember::adaptive_avg_pool2d(t, {4, 3});
      };
      const Tensor yc = pool(xc), yl = pool(xl);
      EXPECT_TRUE(yl.is_contiguous(MemoryFormat::ChannelsLast));
      EXPECT_TRUE(yl.equal(yc));
      const Tensor g = randn(yc.sizes()).to(dt);
      const Tensor gc = autograd::grad({yc}, {xc}, {g})[0];
      const Tensor gl = autograd::grad({yl}, {xl}, {g.contiguous(MemoryFormat::ChannelsLast)})[0];
      EXPECT_TRUE(gl.is_contiguous(MemoryFormat::ChannelsLast));
      EXPECT_TRUE(gl.equal(gc));
    }
  }
}

}  // namespace EMBER_UNITY_FILE
