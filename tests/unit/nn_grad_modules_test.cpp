// Gradients through the nn layers and losses, by gradcheck in float64 (small shapes). Several
// depend on derivatives of forward ops (log_softmax, conv, norms, pooling, abs/sign-free
// composites) that land separately; this file holds them apart from the always-green tests.
#include <gtest/gtest.h>

#include "ember/ember.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace nn = ember::nn;
namespace F = ember::nn::functional;
using ember::Tensor;
using ember::autograd::gradcheck;
using ember::autograd::variable_list;

namespace {

ember::TensorOptions f64() { return ember::TensorOptions().dtype(ember::kDouble); }
Tensor leaf(ember::IntArrayRef sizes, uint64_t seed) {
  ember::Generator g(seed);
  return ember::randn(sizes, &g, f64()).requires_grad_();
}
Tensor labels(ember::IntArrayRef sizes, int64_t classes, uint64_t seed) {
  ember::Generator g(seed);
  return ember::randint(0, classes, sizes, &g, ember::TensorOptions().dtype(ember::kLong));
}
// The module's gradient with respect to its input, its parameters in float64.
template <class M>
bool input_gradcheck(M& m, const Tensor& x) {
  m->to(ember::kDouble);
  return gradcheck([&](const variable_list& v) { return m(v[0]); }, {x});
}

}  // namespace

// ---- ready now: ops with derivatives in place -------------------------------------------------

TEST(NnGradModules, NllLossAllReductionsWeightsIgnoreIndex) {
  Tensor x = leaf({4, 3}, 1), w = ember::tensor({0.5, 2.0, 1.0}, f64());
  Tensor y = ember::tensor({0, 2, -100, 1});
  for (int64_t r : {0, 1, 2}) {
    EXPECT_TRUE(gradcheck([&](const variable_list& v) { return ember::nll_loss(v[0], y, w, r, -100); }, {x}));
    EXPECT_TRUE(gradcheck([&](const variable_list& v) { return ember::nll_loss(v[0], y, {}, r, -100); }, {x}));
  }
  Tensor x4 = leaf({2, 3, 2, 2}, 2);
  Tensor y4 = labels({2, 2, 2}, 3, 3);
  EXPECT_TRUE(gradcheck([&](const variable_list& v) { return ember::nll_loss(v[0], y4, w, 1, -100); }, {x4}));
  Tensor x1 = leaf({3}, 4);
  EXPECT_TRUE(gradcheck([&](const variable_list& v) { return ember::nll_loss(v[0], ember::tensor(2)); }, {x1}));
}

TEST(NnGradModules, LinearBilinearAndPointwiseLosses) {
  nn::Linear fc(3, 2);
  fc->to(ember::kDouble);
  EXPECT_TRUE(gradcheck([&](const variable_list& v) { return fc(v[0]); }, {leaf({4, 3}, 5)}));
  nn::Bilinear bil(2, 3, 2);
  bil->to(ember::kDouble);
  EXPECT_TRUE(gradcheck([&](const variable_list& v) { return bil(v[0], v[1]); }, {leaf({3, 2}, 6), leaf({3, 3}, 7)}));

  Tensor x = leaf({3, 4}, 8), t = leaf({3, 4}, 9);
  for (auto r : {nn::reduction_t(ember::kNone), nn::reduction_t(ember::kMean), nn::reduction_t(ember::kSum)}) {
    EXPECT_TRUE(gradcheck([&](const variable_list& v) { return F::mse_loss(v[0], v[1], r); }, {x, t}));
    EXPECT_TRUE(gradcheck([&](const variable_list& v) { return F::l1_loss(v[0], v[1], r); }, {x, t}));
    EXPECT_TRUE(gradcheck(
        [&](const variable_list& v) { return F::smooth_l1_loss(v[0], v[1], F::SmoothL1LossFuncOptions(r).beta(0.5)); },
        {x, t}));
    EXPECT_TRUE(gradcheck(
        [&](const variable_list& v) { return F::huber_loss(v[0], v[1], F::HuberLossFuncOptions(r).delta(0.7)); },
        {x, t}));
  }
}

TEST(NnGradModules, BinaryCrossEntropyAndKlDiv) {
  Tensor p = ember::rand({3, 4}, f64()).mul(0.8).add(0.1).requires_grad_();
  Tensor t = ember::rand({3, 4}, f64());
  Tensor w = ember::rand({4}, f64());
  EXPECT_TRUE(gradcheck(
      [&](const variable_list& v) { return F::binary_cross_entropy(v[0], t, F::BinaryCrossEntropyFuncOptions().weight(w)); },
      {p}));
  Tensor logits = leaf({3, 4}, 10), pw = ember::rand({4}, f64()).add(0.5);
  EXPECT_TRUE(gradcheck(
      [&](const variable_list& v) {
        return F::binary_cross_entropy_with_logits(v[0], t,
                                                   F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(pw));
      },
      {logits}));
  Tensor logq = leaf({3, 4}, 11);
  EXPECT_TRUE(gradcheck(
      [&](const variable_list& v) { return F::kl_div(v[0], t, F::KLDivFuncOptions(ember::kBatchMean)); }, {logq}));
  EXPECT_TRUE(gradcheck(
      [&](const variable_list& v) { return F::kl_div(v[0], v[1], F::KLDivFuncOptions(ember::kSum).log_target(true)); },
      {logq, leaf({3, 4}, 12)}));
}

// ---- waiting on derivatives of forward ops ---------------------------------------------------

TEST(NnGradPending, CrossEntropyNeedsLogSoftmax) {
  Tensor x = leaf({4, 5}, 13);
  Tensor y = ember::tensor({0, 4, -100, 2});
  Tensor w = ember::rand({5}, f64()).add(0.5);
  EXPECT_TRUE(gradcheck(
      [&](const variable_list& v) {
        return F::cross_entropy(v[0], y, F::CrossEntropyFuncOptions().weight(w).label_smoothing(0.2));
      },
      {x}));
  Tensor probs = ember::softmax(ember::randn({4, 5}, f64()), 1);
  EXPECT_TRUE(gradcheck([&](const variable_list& v) { return F::cross_entropy(v[0], probs); }, {x}));
}

TEST(NnGradPending, ConvNormPoolNeedTheirDerivatives) {
  nn::Conv2d conv(nn::Conv2dOptions(2, 3, 3).padding(1).stride(2));
  EXPECT_TRUE(input_gradcheck(conv, leaf({2, 2, 5, 5}, 14)));
  nn::BatchNorm2d bn(2);
  bn->eval();  // fixed statistics: gradcheck's repeated forwards must not move them
  EXPECT_TRUE(input_gradcheck(bn, leaf({3, 2, 2, 2}, 15)));
  nn::LayerNorm ln(std::vector<int64_t>{4});
  EXPECT_TRUE(input_gradcheck(ln, leaf({3, 4}, 16)));
  nn::GroupNorm gn(2, 4);
  EXPECT_TRUE(input_gradcheck(gn, leaf({2, 4, 3}, 20)));
  nn::MaxPool2d pool(2);
  EXPECT_TRUE(gradcheck([&](const variable_list& v) { return pool(v[0]); }, {leaf({1, 2, 4, 4}, 17)}));
  nn::AvgPool2d avg(nn::AvgPool2dOptions(3).stride(2).padding(1));
  EXPECT_TRUE(gradcheck([&](const variable_list& v) { return avg(v[0]); }, {leaf({1, 2, 5, 5}, 18)}));
}

TEST(NnGradPending, AttentionAndEmbeddingNeedSoftmaxAndEmbedding) {
  nn::MultiheadAttention mha(4, 2);
  mha->to(ember::kDouble);
  EXPECT_TRUE(gradcheck([&](const variable_list& v) { return std::get<0>(mha(v[0], v[0], v[0])); },
                        {leaf({3, 2, 4}, 19)}));
  // Embedding: the gradient reaches the weight (rows looked up, none for padding_idx).
  nn::Embedding emb(nn::EmbeddingOptions(5, 3).padding_idx(0));
  emb(ember::tensor({0, 3, 3, 1})).sum().backward();
  EXPECT_TRUE(emb->weight.grad().equal(ember::tensor({{0.f, 0.f, 0.f}, {1.f, 1.f, 1.f}, {0.f, 0.f, 0.f},
                                                      {2.f, 2.f, 2.f}, {0.f, 0.f, 0.f}})));
}

}  // namespace EMBER_UNITY_FILE
