// torch::nn::functional's FuncOptions forms and the modules added with them: bad input raises
// ember::Error naming the op and the offending sizes or values, empty inputs pass through, and
// libtorch's spellings resolve (F::dropout(x), F::embedding(indices, weight), braced options).
#include <gtest/gtest.h>

#include <functional>

#include "ember/ember.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;  // NOLINT
namespace F = ember::nn::functional;

TEST(NnFunctional, LibtorchSpellingsResolve) {
  manual_seed(0);
  const Tensor x = randn({2, 4});
  EXPECT_EQ(F::dropout(x).sizes(), x.sizes());
  EXPECT_TRUE(F::dropout(x, F::DropoutFuncOptions().training(false)).equal(x));
  EXPECT_EQ(F::layer_norm(x, F::LayerNormFuncOptions({4})).sizes(), x.sizes());
  EXPECT_EQ(F::adaptive_avg_pool1d(randn({1, 2, 8}), {4}).sizes(), IntArrayRef({1, 2, 4}));
  EXPECT_EQ(F::max_pool1d(randn({1, 2, 8}), {2}).sizes(), IntArrayRef({1, 2, 4}));
  const Tensor w = randn({5, 3});
  const Tensor idx = tensor({{4, 0}});
  EXPECT_TRUE(F::embedding(idx, w).equal(ember::embedding(w, idx)));
  EXPECT_EQ(F::conv2d(randn({1, 2, 5, 5}), randn({3, 2, 3, 3})).sizes(), IntArrayRef({1, 3, 3, 3}));
  EXPECT_EQ(F::glu(x, 0).sizes(), IntArrayRef({1, 4}));
  EXPECT_EQ(F::softshrink(x, 0.2).sizes(), x.sizes());
}

// inplace(true), as libtorch's: the op writes into its input and returns it; the values (and, for
// a non-leaf, the gradients) are those of the out-of-place form; a leaf that requires grad refuses.
TEST(NnFunctional, InplaceOptionsWriteIntoTheInput) {
  using Fn = std::function<Tensor(const Tensor&, bool)>;
  const std::vector<std::pair<const char*, Fn>> ops = {
      {"relu", [](const Tensor& t, bool i) { return F::relu(t, F::ReLUFuncOptions(i)); }},
      {"relu6", [](const Tensor& t, bool i) { return F::relu6(t, F::ReLU6FuncOptions(i)); }},
      {"leaky_relu", [](const Tensor& t, bool i) { return F::leaky_relu(t, F::LeakyReLUFuncOptions().negative_slope(0.2).inplace(i)); }},
      {"elu", [](const Tensor& t, bool i) { return F::elu(t, F::ELUFuncOptions().alpha(0.7).inplace(i)); }},
      {"selu", [](const Tensor& t, bool i) { return F::selu(t, F::SELUFuncOptions(i)); }},
      {"celu", [](const Tensor& t, bool i) { return F::celu(t, F::CELUFuncOptions().alpha(1.5).inplace(i)); }},
      {"hardtanh", [](const Tensor& t, bool i) { return F::hardtanh(t, F::HardtanhFuncOptions().min_val(-0.5).max_val(0.8).inplace(i)); }},
      {"threshold", [](const Tensor& t, bool i) { return F::threshold(t, F::ThresholdFuncOptions(0.1, -2.0).inplace(i)); }},
      {"rrelu", [](const Tensor& t, bool i) { return F::rrelu(t, F::RReLUFuncOptions().training(true).inplace(i)); }},
      {"dropout", [](const Tensor& t, bool i) { return F::dropout(t, F::DropoutFuncOptions().p(0.3).inplace(i)); }},
      {"dropout2d", [](const Tensor& t, bool i) { return F::dropout2d(t, F::Dropout2dFuncOptions().p(0.5).inplace(i)); }},
      {"dropout3d", [](const Tensor& t, bool i) { return F::dropout3d(t, F::Dropout3dFuncOptions().p(0.5).inplace(i)); }},
      {"alpha_dropout", [](const Tensor& t, bool i) { return F::alpha_dropout(t, F::AlphaDropoutFuncOptions().p(0.3).training(true).inplace(i)); }},
      {"feature_alpha_dropout", [](const Tensor& t, bool i) {
         return F::feature_alpha_dropout(t, F::FeatureAlphaDropoutFuncOptions().p(0.3).training(true).inplace(i));
       }},
      {"Dropout module", [](const Tensor& t, bool i) { return nn::Dropout(nn::DropoutOptions(0.4).inplace(i))(t); }},
      {"ReLU module", [](const Tensor& t, bool i) { return nn::ReLU(nn::ReLUOptions(i))(t); }},
  };
  for (const auto& [name, f] : ops) {
    manual_seed(7);
    const Tensor x = randn({2, 3, 4, 5});
    const Tensor expected = f(x, false);
    EXPECT_FALSE(expected.is_same(x)) << name;
    Tensor y = x.clone();
    manual_seed(7);
    (void)randn({2, 3, 4, 5});
    const Tensor out = f(y, true);
    EXPECT_TRUE(out.is_same(y)) << name;
    EXPECT_TRUE(y.equal(expected)) << name;

    const Tensor a = x.clone().requires_grad_(true), b = x.clone().requires_grad_(true);
    manual_seed(8);
    f(a * 1, false).sum().backward();
    manual_seed(8);
    f(b * 1, true).sum().backward();
    EXPECT_TRUE(b.grad().equal(a.grad())) << name;
    EXPECT_THROW(f(b, true), Error) << name;
  }
}

TEST(NnFunctional, BadInputNamesTheOp) {
  const Tensor x = randn({2, 3});
  EXPECT_ERROR(F::glu(randn({2, 3})), "glu", "Halving dimension must be even", "size 3");
  EXPECT_ERROR(F::glu(tensor(1.0)), "glu", "scalars");
  EXPECT_ERROR(F::softshrink(x, -1.0), "softshrink", "lambda");
  EXPECT_ERROR(F::hardtanh(x, F::HardtanhFuncOptions().min_val(1).max_val(0)), "hardtanh", "max_val");
  EXPECT_ERROR(F::prelu(randn({2, 3, 4}), ones({4})), "prelu", "channel size = 3");
  EXPECT_ERROR(F::rrelu(x, F::RReLUFuncOptions().lower(0.5).upper(0.1)), "rrelu", "lower bound");
  EXPECT_ERROR(F::pixel_shuffle(randn({1, 3, 2, 2}), 2), "pixel_shuffle", "divisible", "4");
  EXPECT_ERROR(F::pixel_unshuffle(randn({1, 1, 3, 4}), 2), "pixel_unshuffle", "[1, 1, 3, 4]");
  EXPECT_ERROR(F::pixel_shuffle(randn({3, 3}), 1), "pixel_shuffle", "at least 3 dimensions");
  EXPECT_ERROR(F::pdist(randn({2, 3, 4})), "pdist", "2D");
  EXPECT_ERROR(F::bilinear(randn({2, 3}), randn({2, 4}), randn({5, 3, 3})), "bilinear", "input2 size");
  EXPECT_ERROR(F::multi_margin_loss(x, tensor({0, 5})), "multi_margin_loss", "target out of range");
  EXPECT_ERROR(F::multi_margin_loss(x, tensor({0, 1}), F::MultiMarginLossFuncOptions().p(3)), "multi_margin_loss",
               "p == 1 and p == 2");
  EXPECT_ERROR(F::multilabel_margin_loss(x, tensor({0, 1})), "multilabel_margin_loss", "[2]", "[2, 3]");
  EXPECT_ERROR(F::soft_margin_loss(x, randn({3})), "soft_margin_loss", "[3]", "[2, 3]");
  EXPECT_ERROR(F::margin_ranking_loss(randn({3}), randn({3}), randn({1, 3})), "margin_ranking_loss", "[1, 3]");
  EXPECT_ERROR(F::cosine_embedding_loss(x, x, randn({2, 2})), "cosine_embedding_loss", "[2, 2]");
  EXPECT_ERROR(F::triplet_margin_loss(x, x, randn({3})), "triplet_margin_loss", "same number of dims");
  EXPECT_ERROR(F::triplet_margin_with_distance_loss(x, x, x, F::TripletMarginWithDistanceLossFuncOptions().margin(0)),
               "triplet_margin_with_distance_loss", "margin");
  EXPECT_ERROR(F::local_response_norm(x, 2), "local_response_norm", "3D or higher");
  EXPECT_ERROR(F::batch_norm(randn({1, 3}), {}, {}, F::BatchNormFuncOptions().training(true)), "batch_norm",
               "more than 1 value per channel", "[1, 3]");
  EXPECT_ERROR(F::interpolate(randn({1, 1, 4}), F::InterpolateFuncOptions().size(std::vector<int64_t>{8}).mode(kBilinear)),
               "interpolate", "bilinear mode needs 4D input");
  EXPECT_ERROR(F::interpolate(randn({1, 1, 4, 4}), F::InterpolateFuncOptions().size(std::vector<int64_t>{8}).mode(kBicubic)),
               "interpolate", "Bicubic");
  EXPECT_ERROR(F::interpolate(randn({1, 1, 4, 4})), "interpolate", "only one of size or scale_factor");
  EXPECT_ERROR(F::adaptive_max_pool1d(randn({4}), {2}), "adaptive_max_pool1d", "[4]");
  EXPECT_ERROR(F::lp_pool1d(randn({1, 2, 6}), F::LPPool1dFuncOptions(0, 2)), "lp_pool1d", "norm_type");
  EXPECT_ERROR(F::dropout3d(randn({2, 3}), F::Dropout3dFuncOptions()), "dropout3d", "[2, 3]");
  EXPECT_ERROR(F::alpha_dropout(x, F::AlphaDropoutFuncOptions().p(2).training(true)), "alpha_dropout", "probability");
  EXPECT_ERROR(F::ctc_loss(randn({3, 2, 4}), tensor({{1, 2}, {1, 1}}), tensor({4, 3}), tensor({2, 2})), "ctc_loss",
               "input_lengths to have value at most 3", "value 4");
  EXPECT_ERROR(F::ctc_loss(randn({3, 1, 4}), tensor({{1, 7}}), tensor({3}), tensor({2})), "ctc_loss", "target 7");
  EXPECT_ERROR(F::cosine_similarity(x, randn({2, 4})), "cosine_similarity", "tensor a (3)", "tensor b (4)");
  EXPECT_ERROR(nn::PReLU(nn::PReLUOptions().num_parameters(0)), "PReLU", "num_parameters");
  EXPECT_ERROR(F::affine_grid(randn({2, 3, 3}), {2, 1, 4, 4}), "affine_grid", "Nx2x3", "[2, 3, 3]");
  EXPECT_ERROR(F::grid_sample(randn({1, 1, 4, 4, 4}), randn({1, 2, 2, 2, 3})), "grid_sample", "[1, 1, 4, 4, 4]");
  EXPECT_ERROR(F::grid_sample(randn({2, 1, 4, 4}), randn({1, 2, 2, 2})), "grid_sample", "same batch size");
  EXPECT_ERROR(nn::InstanceNorm2d(4)(randn({4, 4})), "InstanceNorm2d", "expected 3D or 4D input");
  EXPECT_ERROR(nn::Softmax2d()(randn({2, 3})), "Softmax2d", "3D or 4D");
  EXPECT_ERROR(nn::Conv3d(nn::Conv3dOptions(3, 4, 3).groups(2)), "Conv3d", "divisible by groups");
  EXPECT_ERROR(nn::ConvTranspose1d(0, 2, 3), "ConvTranspose1d", "positive");
}

// The random activations: properties, as their draws differ from libtorch's.
TEST(NnFunctional, RandomActivations) {
  manual_seed(5);
  const Tensor logits = randn({4, 6}).set_requires_grad(true);
  const Tensor soft = F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().tau(0.5));
  EXPECT_TRUE(soft.sum(1).allclose(ones({4})));
  const Tensor hard = F::gumbel_softmax(logits, F::GumbelSoftmaxFuncOptions().hard(true).dim(1));
  EXPECT_TRUE(hard.sum(1).equal(ones({4})));
  EXPECT_TRUE(logical_or(hard == 0, hard == 1).all().item<bool>());
  (hard * arange(6).to(kFloat)).sum().backward();  // straight-through: the soft sample's gradient
  EXPECT_GT(logits.grad().abs().sum().item<double>(), 0);
  const Tensor x = -rand({1000}) - 0.1;
  const Tensor slope = F::rrelu(x, F::RReLUFuncOptions().lower(0.2).upper(0.4).training(true)) / x;
  EXPECT_GE(slope.min().item<double>(), 0.2 - 1e-6);
  EXPECT_LE(slope.max().item<double>(), 0.4 + 1e-6);
  EXPECT_GT(slope.std().item<double>(), 0.01);  // one draw per element
  EXPECT_TRUE(F::rrelu(-x, F::RReLUFuncOptions().training(true)).equal(-x));
}

TEST(NnFunctional, MaxUnpoolOutputSize) {
  const Tensor x = tensor({{{1.f, 5.f, 2.f, 7.f}}});
  auto [y, i] = F::max_pool1d_with_indices(x, F::MaxPool1dFuncOptions(2));
  const Tensor z = F::max_unpool1d(y, i, F::MaxUnpool1dFuncOptions(2).output_size(std::vector<int64_t>{5}));
  EXPECT_TRUE(z.equal(tensor({{{0.f, 5.f, 0.f, 7.f, 0.f}}})));
  EXPECT_ERROR(F::max_unpool1d(y, i + 10, F::MaxUnpool1dFuncOptions(2)), "max_unpool1d", "invalid max index");
  EXPECT_ERROR(F::max_unpool2d(y.squeeze(0), i.squeeze(0), F::MaxUnpool2dFuncOptions(2)), "max_unpool2d", "[1, 2]");
  EXPECT_ERROR(F::fold(randn({1, 5, 4}), F::FoldFuncOptions({3, 3}, {2, 2})), "fold", "divisible");
  EXPECT_ERROR(F::unfold(randn({2, 3}), F::UnfoldFuncOptions(2)), "unfold", "2D");
  EXPECT_ERROR(nn::CrossMapLRN2d(3)(randn({2, 3, 4})), "CrossMapLRN2d", "4D");
  nn::ParameterList list(ones({2}));
  EXPECT_ERROR(list->at(3), "ParameterList", "out of range");
  nn::ParameterDict dict;
  dict->insert("a", ones({1}));
  EXPECT_ERROR(dict->insert("a", ones({1})), "already defined");
  EXPECT_ERROR(dict->pop("b"), "ParameterDict", "'b'");
}

TEST(NnFunctional, EmptyInputs) {
  const Tensor e = randn({0, 3});
  EXPECT_EQ(F::selu(e).numel(), 0);
  EXPECT_EQ(F::glu(randn({0, 4})).sizes(), IntArrayRef({0, 2}));
  EXPECT_EQ(F::mish(e).numel(), 0);
  EXPECT_EQ(F::softmin(e, 1).numel(), 0);
  EXPECT_EQ(F::normalize(e).numel(), 0);
  EXPECT_EQ(F::pairwise_distance(e, e).sizes(), IntArrayRef({0}));
  EXPECT_EQ(F::cosine_similarity(e, e).sizes(), IntArrayRef({0}));
  EXPECT_EQ(F::pdist(randn({1, 3})).numel(), 0);
  EXPECT_EQ(F::pixel_shuffle(randn({0, 4, 2, 2}), 2).sizes(), IntArrayRef({0, 1, 4, 4}));
  EXPECT_EQ(F::local_response_norm(randn({0, 3, 4}), 2).numel(), 0);
  EXPECT_EQ(F::soft_margin_loss(e, e, kNone).numel(), 0);
  EXPECT_EQ(F::alpha_dropout(e, F::AlphaDropoutFuncOptions().training(true)).numel(), 0);
  EXPECT_EQ(nn::ReflectionPad1d(1)(randn({0, 2, 3})).sizes(), IntArrayRef({0, 2, 5}));
}

TEST(NnFunctional, FractionalMaxPoolErrors) {
  namespace F = ember::nn::functional;
  const ember::Tensor x = ember::randn({1, 2, 6, 6});
  EXPECT_ERROR(F::fractional_max_pool2d(x, F::FractionalMaxPool2dFuncOptions(2)), "fractional_max_pool2d",
               "requires specifying either an output_size or an output_ratio");
  EXPECT_ERROR(F::fractional_max_pool2d(x, F::FractionalMaxPool2dFuncOptions(4).output_size(std::vector<int64_t>{4, 4})),
               "fractional_max_pool2d", "pool height 4 too large relative to input height 6");
  EXPECT_ERROR(F::fractional_max_pool2d(ember::randn({6, 6}), F::FractionalMaxPool2dFuncOptions(2).output_size(3)),
               "fractional_max_pool2d", "Expected 3D or 4D tensor");
  EXPECT_ERROR(ember::fractional_max_pool2d(x, {2, 2}, {3, 3}, ember::rand({1, 3, 2})), "fractional_max_pool2d",
               "random_samples must have shape [1, 2, 2]");
  EXPECT_ERROR(ember::nn::FractionalMaxPool2d(ember::nn::FractionalMaxPool2dOptions(2)), "FractionalMaxPool2d",
               "requires specifying either an output size, or a pooling ratio");
  EXPECT_ERROR(ember::nn::FractionalMaxPool3d(ember::nn::FractionalMaxPool3dOptions(2).output_ratio(1.5)),
               "FractionalMaxPool3d", "output_ratio must be between 0 and 1");
  // an empty batch pools to an empty batch
  EXPECT_EQ(F::fractional_max_pool2d(ember::randn({0, 2, 6, 6}), F::FractionalMaxPool2dFuncOptions(2).output_size(3)).sizes(),
            (ember::IntArrayRef{0, 2, 3, 3}));
}

}  // namespace EMBER_UNITY_FILE
