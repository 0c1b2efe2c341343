// Derivatives of the nn ops (norms, softmax, dropout, embedding, interpolate, pad): gradcheck in
// float64 for every op and option on small shapes (contiguous and channels_last), node names,
// running statistics kept out of the graph, and bad input.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "ember/ember.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;  // NOLINT
using autograd::variable_list;
namespace F = ember::nn::functional;

namespace {

Tensor rand64(IntArrayRef sizes, bool requires_grad = true) {
  Tensor t = randn(sizes, TensorOptions().dtype(kDouble));
  if (requires_grad) t.requires_grad_();
  return t;
}
Tensor channels_last(IntArrayRef sizes) {
  return rand64(sizes, false).contiguous(MemoryFormat::ChannelsLast).requires_grad_();
}

using Fn = std::function<Tensor(const variable_list&)>;
void check(const char* what, const Fn& f, const variable_list& inputs) {
  SCOPED_TRACE(what);
  try {
    EXPECT_TRUE(autograd::gradcheck(f, inputs));
  } catch (const Error& e) {
    ADD_FAILURE() << e.what();
  }
}

std::string node_of(const Tensor& t) { return t.grad_fn() ? t.grad_fn()->name() : "(none)"; }

TEST(NnGrad, BatchNormTrainingAndEval) {
  manual_seed(1);
  for (bool cl : {false, true}) {
    const Tensor x = cl ? channels_last({3, 4, 2, 3}) : rand64({3, 4, 2, 3});
    const variable_list in = {x, rand64({4}), rand64({4})};
    check(cl ? "train channels_last" : "train", [](const variable_list& v) {
      return ember::batch_norm(v[0], v[1], v[2], Tensor(), Tensor(), true, 0.1, 1e-5);
    }, in);
    const Tensor rm = rand64({4}, false), rv = rand64({4}, false).abs() + 0.5;
    check(cl ? "eval channels_last" : "eval", [&](const variable_list& v) {
      return ember::batch_norm(v[0], v[1], v[2], rm, rv, false, 0.1, 1e-5);
    }, in);
  }
  check("train, no affine, 2-D", [](const variable_list& v) {
    return ember::batch_norm(v[0], Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5);
  }, {rand64({5, 3})});
  check("train, 3-D, weight only", [](const variable_list& v) {
    return ember::batch_norm(v[0], v[1], Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5);
  }, {rand64({2, 3, 5}), rand64({3})});
  check("native_batch_norm output", [](const variable_list& v) {
    return std::get<0>(ember::native_batch_norm(v[0], v[1], v[2], Tensor(), Tensor(), true, 0.1, 1e-5));
  }, {rand64({4, 2, 3}), rand64({2}), rand64({2})});
}

TEST(NnGrad, BatchNormRunningStatsStayOutOfTheGraph) {
  manual_seed(2);
  const Tensor x = rand64({4, 3, 5}), w = rand64({3}), b = rand64({3});
  Tensor rm = zeros({3}, TensorOptions().dtype(kDouble)), rv = ones({3}, TensorOptions().dtype(kDouble));
  const Tensor y = ember::batch_norm(x, w, b, rm, rv, true, 0.1, 1e-5);
  EXPECT_EQ(node_of(y), "NativeBatchNormBackward0");
  EXPECT_FALSE(rm.requires_grad());
  EXPECT_FALSE(rv.requires_grad());
  EXPECT_FALSE(rm.grad_fn());
  EXPECT_NE(rm.abs().sum().item<double>(), 0.0);  // updated all the same
  y.sum().backward();
  EXPECT_TRUE(x.grad().defined());
  // the gradient of a sum through batch statistics is zero for the input, N*L for the bias
  EXPECT_LT(x.grad().abs().max().item<double>(), 1e-12);
  EXPECT_TRUE(allclose(b.grad(), full({3}, 20.0, TensorOptions().dtype(kDouble))));
}

// The three gradients of a norm share one pass per incoming gradient: a retained graph run with
// another gradient, or for a subset of the inputs, must not reuse the previous run's sums.
TEST(NnGrad, NormNodesRecomputePerIncomingGradient) {
  manual_seed(17);
  const Tensor x = rand64({3, 4, 5}), w = rand64({4}), b = rand64({4}), g1 = rand64({3, 4, 5}, false),
               g2 = rand64({3, 4, 5}, false);
  using Norm = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>;
  const Norm batch = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    return ember::batch_norm(x, w, b, Tensor(), Tensor(), true, 0.1, 1e-5);
  };
  const Norm layer = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    return ember::layer_norm(x.transpose(1, 2), {4}, w, b, 1e-5).transpose(1, 2);
  };
  for (const Norm& norm : {batch, layer}) {
    const Tensor y = norm(x, w, b);
    const variable_list first = autograd::grad({y}, {x, w, b}, {g1}, true);
    const variable_list second = autograd::grad({y}, {x, w, b}, {g2}, true);
    const variable_list weight_only = autograd::grad({y}, {w}, {g1}, true);
    const variable_list fresh = autograd::grad({norm(x, w, b)}, {x, w, b}, {g2});
    for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(allclose(second[i], fresh[i], 1e-12, 1e-12)) << i;
    EXPECT_TRUE(allclose(weight_only[0], first[1], 1e-12, 1e-12));
    EXPECT_FALSE(allclose(first[1], second[1]));
  }
}

TEST(NnGrad, InstanceAndGroupNorm) {
  manual_seed(3);
  for (bool cl : {false, true}) {
    const Tensor x = cl ? channels_last({2, 4, 3, 2}) : rand64({2, 4, 3, 2});
    check("instance_norm", [](const variable_list& v) {
      return ember::instance_norm(v[0], v[1], v[2], Tensor(), Tensor(), true, 0.1, 1e-5);
    }, {x, rand64({4}), rand64({4})});
    check("group_norm", [](const variable_list& v) { return ember::group_norm(v[0], 2, v[1], v[2], 1e-5); },
          {x, rand64({4}), rand64({4})});
  }
  const Tensor rm = rand64({3}, false), rv = rand64({3}, false).abs() + 0.5;
  check("instance_norm running stats", [&](const variable_list& v) {
    return ember::instance_norm(v[0], v[1], Tensor(), rm, rv, false, 0.1, 1e-5);
  }, {rand64({2, 3, 4}), rand64({3})});
  check("group_norm no affine, 1 group", [](const variable_list& v) {
    return ember::group_norm(v[0], 1, Tensor(), Tensor(), 1e-5);
  }, {rand64({3, 4, 2})});
  check("group_norm 2-D, groups = channels", [](const variable_list& v) {
    return ember::group_norm(v[0], 6, v[1], Tensor(), 1e-5);
  }, {rand64({2, 6}), rand64({6})});
}

TEST(NnGrad, LayerAndRmsNorm) {
  manual_seed(4);
  check("layer_norm", [](const variable_list& v) { return ember::layer_norm(v[0], {5}, v[1], v[2], 1e-5); },
        {rand64({3, 5}), rand64({5}), rand64({5})});
  check("layer_norm 2-D shape, bias only", [](const variable_list& v) {
    return ember::layer_norm(v[0], {2, 3}, Tensor(), v[1], 1e-5);
  }, {rand64({2, 2, 3}), rand64({2, 3})});
  check("layer_norm transposed input", [](const variable_list& v) {
    return ember::layer_norm(v[0].transpose(0, 1), {4}, v[1], Tensor(), 1e-5);
  }, {rand64({4, 3}), rand64({4})});
  check("native_layer_norm output", [](const variable_list& v) {
    return std::get<0>(ember::native_layer_norm(v[0], {7}, v[1], v[2], 1e-5));
  }, {rand64({2, 7}), rand64({7}), rand64({7})});
  check("rms_norm", [](const variable_list& v) { return ember::rms_norm(v[0], {6}, v[1], 1e-6); },
        {rand64({3, 6}), rand64({6})});
  check("rms_norm no weight", [](const variable_list& v) { return ember::rms_norm(v[0], {2, 3}, Tensor(), std::nullopt); },
        {rand64({4, 2, 3})});
}

TEST(NnGrad, SoftmaxAndLogSoftmax) {
  manual_seed(5);
  for (int64_t dim : {0, 1, -1}) {
    check("softmax", [dim](const variable_list& v) { return ember::softmax(v[0], dim); }, {rand64({3, 4, 5})});
    check("log_softmax", [dim](const variable_list& v) { return ember::log_softmax(v[0], dim); }, {rand64({3, 4, 5})});
  }
  check("softmax long row", [](const variable_list& v) { return ember::softmax(v[0], 1); }, {rand64({2, 37})});
  check("log_softmax 0-D", [](const variable_list& v) { return ember::log_softmax(v[0], 0); }, {rand64({})});
  // computed in double from a float input: the gradient comes back as float
  const Tensor x = randn({2, 3}).requires_grad_();
  const Tensor y = ember::log_softmax(x, 1, kDouble);
  EXPECT_EQ(y.dtype(), kDouble);
  y.backward(ones_like(y));
  EXPECT_EQ(x.grad().dtype(), kFloat);
}

// gradcheck of the first gradient as a function of the input and the incoming gradient
TEST(NnGrad, SoftmaxSecondOrder) {
  manual_seed(15);
  for (bool log : {false, true}) {
    check(log ? "log_softmax double backward" : "softmax double backward", [log](const variable_list& v) {
      // gradcheck's finite differences run without grad mode, on inputs that do not require grad
      AutoGradMode enable(true);
      const Tensor x = v[0].requires_grad() ? v[0] : v[0].detach().requires_grad_();
      const Tensor y = log ? ember::log_softmax(x, 1) : ember::softmax(x, 1);
      return autograd::grad({y}, {x}, {v[1]}, true, true)[0];
    }, {rand64({3, 4}), rand64({3, 4})});
  }
}

TEST(NnGrad, LayerAndRmsNormSecondOrder) {
  manual_seed(16);
  for (bool rms : {false, true}) {
    for (int which : {0, 1}) {  // the gradient of the input, of the weight
      check(rms ? "rms_norm double backward" : "layer_norm double backward", [rms, which](const variable_list& v) {
        AutoGradMode enable(true);
        const Tensor x = v[0].requires_grad() ? v[0] : v[0].detach().requires_grad_();
        const Tensor w = v[1].requires_grad() ? v[1] : v[1].detach().requires_grad_();
        const Tensor y = rms ? ember::rms_norm(x, {4}, w, 1e-5) : ember::layer_norm(x, {4}, w, Tensor(), 1e-5);
        return autograd::grad({y}, {x, w}, {v[2]}, true, true)[which];
      }, {rand64({3, 4}), rand64({4}), rand64({3, 4})});
    }
  }
}

TEST(NnGrad, FusedBackwardsRefuseCreateGraph) {
  const Tensor x = rand64({2, 3}), w = rand64({3});
  const Tensor b = ember::batch_norm(x, w, Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5);
  EXPECT_ERROR(autograd::grad({b.sum()}, {w}, {}, true, true), "double backward of NativeBatchNormBackward0");
  const Tensor ew = rand64({4, 2});
  const Tensor e = ember::embedding(ew, tensor(std::vector<int64_t>{1, 2}));
  const Tensor g = ones_like(e).requires_grad_();
  EXPECT_ERROR(autograd::grad({e}, {ew}, {g}, true, true), "double backward of embedding");
  // first-order gradients under create_graph are fine when nothing needs a second order
  const Tensor p = ember::pad(x, {1, 1}, "reflect");
  EXPECT_EQ(autograd::grad({p.sum()}, {x}, {}, true, false)[0].sizes(), x.sizes());
}

TEST(NnGrad, Dropout) {
  manual_seed(6);
  // a fixed seed per call: the finite differences see the same mask as the backward
  check("dropout", [](const variable_list& v) {
    manual_seed(11);
    return ember::dropout(v[0], 0.4, true);
  }, {rand64({4, 5})});
  check("feature_dropout", [](const variable_list& v) {
    manual_seed(12);
    return ember::feature_dropout(v[0], 0.5, true);
  }, {rand64({3, 4, 2, 2})});
  check("dropout2d channels_last", [](const variable_list& v) {
    manual_seed(13);
    return ember::dropout2d(v[0], 0.3, true);
  }, {channels_last({2, 3, 2, 2})});
  const Tensor x = rand64({50});
  const Tensor y = ember::dropout(x, 0.5, true);
  EXPECT_EQ(node_of(y), "MulBackward0");
  y.backward(ones_like(y));
  // the gradient is the mask: 2 where kept, 0 where dropped, like the output's pattern
  EXPECT_TRUE(equal(x.grad(), (y != 0).to(kDouble) * 2));
  EXPECT_TRUE(ember::dropout(x, 0.5, false).is_same(x));
}

TEST(NnGrad, Embedding) {
  manual_seed(7);
  const Tensor idx = tensor(std::vector<int64_t>{1, 3, 1, 0, 3, 3}).view({2, 3});
  check("embedding", [&](const variable_list& v) { return ember::embedding(v[0], idx); }, {rand64({5, 3})});
  // padding_idx and scale_grad_by_freq change the gradient on purpose (no gradcheck): checked by value
  const Tensor w = rand64({5, 2});
  const Tensor y = ember::embedding(w, idx, 1, true);
  EXPECT_EQ(node_of(y), "EmbeddingBackward0");
  y.backward(ones_like(y));
  const Tensor g = w.grad();
  // row 1 is padding, row 3 is seen three times (scaled by 1/3), row 0 once, rows 2 and 4 never
  EXPECT_EQ(g[1].abs().sum().item<double>(), 0.0);
  EXPECT_DOUBLE_EQ(g[3][0].item<double>(), 1.0);
  EXPECT_DOUBLE_EQ(g[0][1].item<double>(), 1.0);
  EXPECT_EQ(g[2].abs().sum().item<double>() + g[4].abs().sum().item<double>(), 0.0);
  // float16/bfloat16 weights: each row's gradient summed in float32 in index order (repeated
  // indices, a padding row, rows of 37 values: whole vectors and a rest), rounded once
  const Tensor many = randint(0, 50, {3000});
  for (ScalarType dt : {kBFloat16, kHalf}) {
    const Tensor w16 = randn({50, 37}).to(dt).requires_grad_(true);
    const Tensor out = ember::embedding(w16, many, 7);
    const Tensor seed = randn(out.sizes()).to(dt);
    out.backward(seed);
    const Tensor w32 = w16.detach().to(kFloat).requires_grad_(true);
    ember::embedding(w32, many, 7).backward(seed.to(kFloat));
    EXPECT_TRUE(w16.grad().equal(w32.grad().to(dt))) << dt;
    EXPECT_EQ(w16.grad()[7].abs().sum().item<double>(), 0.0);
  }
}

TEST(NnGrad, Interpolate) {
  manual_seed(8);
  for (bool cl : {false, true}) {
    const Tensor x = cl ? channels_last({2, 2, 3, 4}) : rand64({2, 2, 3, 4});
    check("nearest 2-D size", [](const variable_list& v) { return ember::interpolate(v[0], std::vector<int64_t>{5, 7}); },
          {x});
    check("nearest 2-D downscale",
          [](const variable_list& v) { return ember::interpolate(v[0], std::vector<int64_t>{2, 3}); }, {x});
    for (bool align : {false, true}) {
      check(align ? "bilinear align_corners" : "bilinear", [align](const variable_list& v) {
        return ember::interpolate(v[0], std::vector<int64_t>{5, 6}, std::nullopt, "bilinear", align);
      }, {x});
    }
    check("bilinear scale", [](const variable_list& v) {
      return ember::interpolate(v[0], std::nullopt, std::vector<double>{1.5, 0.75}, "bilinear", false);
    }, {x});
  }
  check("nearest 1-D scale",
        [](const variable_list& v) { return ember::interpolate(v[0], std::nullopt, std::vector<double>{2.5}); },
        {rand64({2, 3, 4})});
  const Tensor x = rand64({1, 1, 2, 2});
  EXPECT_EQ(node_of(ember::interpolate(x, std::vector<int64_t>{4, 4})), "UpsampleNearest2DBackward1");
  EXPECT_EQ(node_of(ember::interpolate(x, std::vector<int64_t>{4, 4}, std::nullopt, "bilinear")),
            "UpsampleBilinear2DBackward1");
  EXPECT_EQ(node_of(ember::interpolate(rand64({1, 2, 3}), std::vector<int64_t>{5})), "UpsampleNearest1DBackward1");
  const Tensor cl = channels_last({1, 3, 2, 2});
  ember::interpolate(cl, std::vector<int64_t>{3, 3}, std::nullopt, "bilinear").sum().backward();
  EXPECT_TRUE(cl.grad().is_contiguous(MemoryFormat::ChannelsLast));
}

TEST(NnGrad, Pad) {
  manual_seed(9);
  const Tensor x = rand64({2, 3, 4});
  check("constant", [](const variable_list& v) { return ember::pad(v[0], {1, 2, 0, 1}, "constant", 1.5); }, {x});
  check("constant crop", [](const variable_list& v) { return ember::pad(v[0], {-1, 2, 1, -2}); }, {x});
  check("constant_pad_nd", [](const variable_list& v) { return constant_pad_nd(v[0], {2, 1}, 0.0); }, {x});
  for (const char* mode : {"reflect", "replicate"}) {
    check(mode, [mode](const variable_list& v) { return ember::pad(v[0], {2, 3}, mode); }, {x});
    check(mode, [mode](const variable_list& v) { return ember::pad(v[0], {1, 2, 2, 1}, mode); }, {rand64({1, 2, 3, 4})});
    check(mode, [mode](const variable_list& v) { return ember::pad(v[0], {1, 0, 1, 1, 0, 1}, mode); },
          {rand64({1, 2, 2, 2, 3})});
  }
  EXPECT_EQ(node_of(ember::pad(x, {1, 1})), "ConstantPadNdBackward0");
  EXPECT_EQ(node_of(ember::pad(x, {1, 1}, "reflect")), "ReflectionPad1DBackward0");
  EXPECT_EQ(node_of(ember::pad(x, {1, 1, 1, 1}, "replicate")), "ReplicationPad2DBackward0");
  const Tensor cl = channels_last({1, 2, 2, 3});
  ember::pad(cl, {1, 1}).sum().backward();
  EXPECT_TRUE(allclose(cl.grad(), ones_like(cl)));
}

TEST(NnGrad, NodeNames) {
  const Tensor x = rand64({2, 3, 4}), w = rand64({3});
  EXPECT_EQ(node_of(ember::batch_norm(x, w, w, Tensor(), Tensor(), true, 0.1, 1e-5)), "NativeBatchNormBackward0");
  EXPECT_EQ(node_of(ember::instance_norm(x, w, w, Tensor(), Tensor(), true, 0.1, 1e-5)), "NativeBatchNormBackward0");
  EXPECT_EQ(node_of(ember::group_norm(x, 3, w, w, 1e-5)), "NativeGroupNormBackward0");
  EXPECT_EQ(node_of(ember::layer_norm(x, {4}, Tensor(), Tensor(), 1e-5)), "NativeLayerNormBackward0");
  EXPECT_EQ(node_of(ember::softmax(x, 1)), "SoftmaxBackward0");
  EXPECT_EQ(node_of(ember::log_softmax(x, 1)), "LogSoftmaxBackward0");
}

TEST(NnGrad, EmptyInputs) {
  const Tensor x = rand64({0, 3, 4}), w = rand64({3});
  const Tensor y = ember::batch_norm(x, w, w, Tensor(), Tensor(), true, 0.1, 1e-5);
  y.sum().backward();
  EXPECT_EQ(x.grad().sizes(), x.sizes());
  EXPECT_EQ(w.grad().abs().sum().item<double>(), 0.0);
  const Tensor z = rand64({0, 5});
  ember::layer_norm(z, {5}, Tensor(), Tensor(), 1e-5).sum().backward();
  EXPECT_EQ(z.grad().sizes(), z.sizes());
  const Tensor s = rand64({0, 5});
  ember::log_softmax(s, 1).sum().backward();
  EXPECT_EQ(s.grad().sizes(), s.sizes());
}

TEST(NnGrad, BadInput) {
  const Tensor w = rand64({5, 3});
  EXPECT_ERROR(ember::embedding(w, tensor(std::vector<int64_t>{1}), -1, false, true), "embedding",
               "sparse gradients are not supported");
  EXPECT_ERROR(ember::batch_norm(rand64({2, 3, 4}), rand64({4}), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5),
               "batch_norm", "weight should contain 3 elements not 4");
  EXPECT_ERROR(ember::layer_norm(rand64({2, 3}), {4}, Tensor(), Tensor(), 1e-5), "layer_norm",
               "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[2, 3]");
  EXPECT_ERROR(ember::group_norm(rand64({2, 3, 4}), 2, Tensor(), Tensor(), 1e-5), "native_group_norm",
               "divisible by num_groups");
  EXPECT_ERROR(ember::pad(rand64({2, 3}), {3, 3}, "reflect"), "pad", "Padding size should be less than");
  EXPECT_ERROR(ember::interpolate(rand64({1, 1, 2, 2}), std::vector<int64_t>{3, 3}, std::nullopt, "bicubic"),
               "interpolate", "unsupported mode 'bicubic'");
  // a node runs once unless the graph is retained
  const Tensor x = rand64({2, 3});
  const Tensor y = ember::log_softmax(x, 1).sum();
  y.backward();
  EXPECT_ERROR(y.backward(), "Trying to backward through the graph a second time");
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
