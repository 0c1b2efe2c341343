// nn::init: the statistics of each initializer, gains and fans, seeding, and errors; and the
// default initialization of the layers (PyTorch's).
#include <gtest/gtest.h>

#include <cmath>

#include "ember/ember.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace init = ember::nn::init;
namespace nn = ember::nn;
using ember::Tensor;

namespace {

Tensor big(ember::IntArrayRef sizes = {200, 300}) { return ember::empty(sizes); }
double mean_of(const Tensor& t) { return t.mean().item<double>(); }
double stddev(const Tensor& t) { return t.std().item<double>(); }
double lo(const Tensor& t) { return t.min().item<double>(); }
double hi(const Tensor& t) { return t.max().item<double>(); }

// Uniform(-b, b): every value inside, the extremes near the bounds, std b / sqrt(3).
void expect_uniform(const Tensor& t, double b) {
  EXPECT_GE(lo(t), -b);
  EXPECT_LE(hi(t), b);
  EXPECT_LT(lo(t), -0.99 * b);
  EXPECT_GT(hi(t), 0.99 * b);
  EXPECT_NEAR(stddev(t), b / std::sqrt(3.0), 0.02 * b);
}

}  // namespace

TEST(NnInit, CalculateGain) {
  EXPECT_DOUBLE_EQ(init::calculate_gain(ember::kLinear), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain(ember::kConv2D), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain(ember::kSigmoid), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain(ember::kTanh), 5.0 / 3);
  EXPECT_DOUBLE_EQ(init::calculate_gain(ember::kReLU), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(init::calculate_gain(ember::kLeakyReLU), std::sqrt(2.0 / (1 + 0.01 * 0.01)));
  EXPECT_DOUBLE_EQ(init::calculate_gain(ember::kLeakyReLU, 0.2), std::sqrt(2.0 / 1.04));
}

TEST(NnInit, Fans) {
  auto [in, out] = init::_calculate_fan_in_and_fan_out(ember::empty({10, 4, 3, 5}));
  EXPECT_EQ(in, 4 * 15);
  EXPECT_EQ(out, 10 * 15);
  auto [in2, out2] = init::_calculate_fan_in_and_fan_out(ember::empty({7, 3}));
  EXPECT_EQ(in2, 3);
  EXPECT_EQ(out2, 7);
  EXPECT_ERROR(init::_calculate_fan_in_and_fan_out(ember::empty({5})), "fewer than 2 dimensions");
  EXPECT_ERROR(init::xavier_uniform_(ember::empty({5})), "fewer than 2 dimensions");
}

TEST(NnInit, UniformNormalConstant) {
  Tensor t = big();
  init::uniform_(t, -3, 5);
  EXPECT_GE(lo(t), -3);
  EXPECT_LT(hi(t), 5);
  EXPECT_NEAR(mean_of(t), 1.0, 0.05);
  init::normal_(t, 2, 0.5);
  EXPECT_NEAR(mean_of(t), 2.0, 0.01);
  EXPECT_NEAR(stddev(t), 0.5, 0.01);
  init::constant_(t, 1.5);
  EXPECT_EQ(lo(t), 1.5);
  EXPECT_EQ(hi(t), 1.5);
  init::zeros_(t);
  EXPECT_EQ(hi(t), 0);
  init::ones_(t);
  EXPECT_EQ(lo(t), 1);
  EXPECT_ERROR(init::uniform_(t, 2, 1), "uniform_", "from=2 > to=1");
  EXPECT_ERROR(init::normal_(t, 0, -1), "normal_", "std >= 0.0");
  EXPECT_ERROR(init::uniform_(ember::empty({2}, ember::TensorOptions().dtype(ember::kLong))), "floating-point");
  EXPECT_ERROR(init::normal_(Tensor()), "undefined");
}

TEST(NnInit, FillsAnyLayoutAndDtype) {
  Tensor d = ember::empty({100, 100}, ember::TensorOptions().dtype(ember::kDouble)).t();
  init::normal_(d);
  EXPECT_NEAR(stddev(d), 1.0, 0.03);
  Tensor h = ember::empty({100, 100}, ember::TensorOptions().dtype(ember::kBFloat16));
  init::uniform_(h, -1, 1);
  EXPECT_NEAR(stddev(h.to(ember::kFloat)), 1 / std::sqrt(3.0), 0.02);
}

TEST(NnInit, SeededRepeatable) {
  Tensor a = big({10, 10}), b = big({10, 10});
  ember::manual_seed(7);
  init::kaiming_normal_(a);
  ember::manual_seed(7);
  init::kaiming_normal_(b);
  EXPECT_TRUE(a.equal(b));
}

TEST(NnInit, NoGraphRecorded) {
  Tensor w = ember::empty({3, 3}).requires_grad_();
  init::normal_(w);
  EXPECT_TRUE(w.is_leaf());
  EXPECT_TRUE(w.requires_grad());
}

TEST(NnInit, Eye) {
  Tensor t = ember::empty({3, 5});
  init::eye_(t);
  EXPECT_TRUE(t.equal(ember::eye(3, 5)));
  EXPECT_ERROR(init::eye_(ember::empty({2, 2, 2})), "Only tensors with 2 dimensions");
}

TEST(NnInit, DiracIsTheIdentityOfAConvolution) {
  Tensor w = init::dirac_(ember::empty({3, 3, 3, 3}));
  const Tensor x = ember::randn({2, 3, 5, 6});
  EXPECT_TRUE(ember::conv2d(x, w, {}, 1, 1).equal(x));
  // more outputs than inputs: the extra output channels are zero
  Tensor w1 = init::dirac_(ember::empty({4, 2, 3}));
  const Tensor y = ember::conv1d(ember::randn({1, 2, 7}), w1, {}, 1, 1);
  EXPECT_EQ(y.select(1, 3).abs().sum().item<double>(), 0);
  EXPECT_EQ(w1.sum().item<double>(), 2);
  EXPECT_ERROR(init::dirac_(ember::empty({2, 2})), "dirac_", "Only tensors with 3, 4, or 5 dimensions");
}

TEST(NnInit, SparseZeroesAFractionOfEachColumn) {
  Tensor w = init::sparse_(ember::empty({100, 40}), 0.25, 0.5);
  const Tensor zeros_per_column = (w == 0).sum(0);
  EXPECT_TRUE(zeros_per_column.equal(ember::full({40}, 25, ember::TensorOptions().dtype(ember::kLong))));
  EXPECT_NEAR(stddev(w.masked_select(w != 0)), 0.5, 0.03);
  EXPECT_ERROR(init::sparse_(ember::empty({2, 2, 2}), 0.1), "sparse_", "Only tensors with 2 dimensions");
}

TEST(NnInit, Xavier) {
  Tensor t = big();  // fan_in 300, fan_out 200
  init::xavier_uniform_(t, 2.0);
  expect_uniform(t, 2.0 * std::sqrt(6.0 / 500));
  init::xavier_normal_(t, 0.5);
  EXPECT_NEAR(stddev(t), 0.5 * std::sqrt(2.0 / 500), 0.002);
  EXPECT_NEAR(mean_of(t), 0, 0.002);
}

TEST(NnInit, Kaiming) {
  Tensor t = ember::empty({64, 32, 3, 3});  // fan_in 288, fan_out 576
  init::kaiming_uniform_(t, 0, ember::kFanIn, ember::kReLU);
  expect_uniform(t, std::sqrt(2.0) * std::sqrt(3.0 / 288));
  init::kaiming_uniform_(t, std::sqrt(5.0));
  expect_uniform(t, 1.0 / std::sqrt(288.0));
  init::kaiming_normal_(t, 0, ember::kFanOut, ember::kReLU);
  EXPECT_NEAR(stddev(t), std::sqrt(2.0 / 576), 0.002);
  init::kaiming_normal_(t, 0, ember::kFanIn, ember::kTanh);
  EXPECT_NEAR(stddev(t), 5.0 / 3 / std::sqrt(288.0), 0.003);
  Tensor empty = ember::empty({0, 3});
  EXPECT_NO_THROW(init::kaiming_uniform_(empty));
}

TEST(NnInit, TruncNormal) {
  Tensor t = big();
  init::trunc_normal_(t, 1, 2, -1, 2);
  EXPECT_GE(lo(t), -1);
  EXPECT_LE(hi(t), 2);
  EXPECT_LT(lo(t), -0.99);
  EXPECT_GT(hi(t), 1.99);
  // Normal(1, 2) truncated to [-1, 2] (alpha = -1, beta = 0.5): mean 1 + 2 (phi(a) - phi(b)) / Z.
  auto phi = [](double x) { return std::exp(-x * x / 2) / std::sqrt(2 * M_PI); };
  auto cdf = [](double x) { return 0.5 * (1 + std::erf(x / std::sqrt(2.0))); };
  const double z = cdf(0.5) - cdf(-1);
  EXPECT_NEAR(mean_of(t), 1 + 2 * (phi(-1) - phi(0.5)) / z, 0.02);
  EXPECT_ERROR(init::trunc_normal_(t, 0, 1, 2, 1), "expected a < b");
}

TEST(NnInit, Orthogonal) {
  for (auto shape : {std::vector<int64_t>{6, 4}, std::vector<int64_t>{4, 6}, std::vector<int64_t>{3, 2, 2}}) {
    Tensor t = ember::empty(shape, ember::TensorOptions().dtype(ember::kDouble));
    init::orthogonal_(t, 2.0);
    Tensor m = t.reshape({shape[0], -1});
    // The smaller side is orthonormal (times gain^2).
    Tensor g = m.size(0) >= m.size(1) ? ember::matmul(m.t(), m) : ember::matmul(m, m.t());
    EXPECT_TRUE(g.allclose(ember::eye(g.size(0), ember::TensorOptions().dtype(ember::kDouble)) * 4, 1e-9, 1e-9))
        << g;
  }
  EXPECT_ERROR(init::orthogonal_(ember::empty({4})), "Only tensors with 2 or more dimensions");
}

TEST(NnInit, LayerDefaults) {
  ember::NoGradGuard no_grad;  // statistics of parameters only
  nn::Linear fc(400, 300);
  expect_uniform(fc->weight, 1.0 / std::sqrt(400.0));
  EXPECT_LE(hi(fc->bias.abs()), 1.0 / std::sqrt(400.0));
  nn::Conv2d conv(nn::Conv2dOptions(16, 32, 5));  // fan_in 400
  expect_uniform(conv->weight, 1.0 / std::sqrt(400.0));
  EXPECT_LE(hi(conv->bias.abs()), 1.0 / std::sqrt(400.0));
  nn::ConvTranspose2d convt(nn::ConvTranspose2dOptions(8, 16, 5));  // weight (8, 16, 5, 5): fan_in 400
  expect_uniform(convt->weight, 1.0 / std::sqrt(400.0));
  nn::BatchNorm2d bn(8);
  EXPECT_TRUE(bn->weight.equal(ember::ones({8})));
  EXPECT_TRUE(bn->bias.equal(ember::zeros({8})));
  EXPECT_TRUE(bn->running_var.equal(ember::ones({8})));
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 0);
  nn::Embedding emb(nn::EmbeddingOptions(300, 200).padding_idx(-1));
  EXPECT_NEAR(stddev(emb->weight), 1.0, 0.02);
  EXPECT_EQ(emb->options.padding_idx(), 299);
  EXPECT_EQ(emb->weight[299].abs().sum().item<double>(), 0.0);
  nn::MultiheadAttention mha(64, 4);
  expect_uniform(mha->in_proj_weight, std::sqrt(6.0 / (64 + 192)));
  EXPECT_EQ(mha->in_proj_bias.abs().sum().item<double>(), 0.0);
  EXPECT_EQ(mha->out_proj->bias.abs().sum().item<double>(), 0.0);
  nn::Bilinear bil(30, 40, 50);
  EXPECT_LE(hi(bil->weight.abs()), 1.0 / std::sqrt(30.0));
  nn::LayerNorm ln(std::vector<int64_t>{4, 5});
  EXPECT_TRUE(ln->weight.equal(ember::ones({4, 5})));
}

}  // namespace EMBER_UNITY_FILE
