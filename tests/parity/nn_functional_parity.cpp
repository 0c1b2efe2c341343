// torch::nn::functional's FuncOptions forms against libtorch's, one table row per call: the
// output and the gradient of every leaf (random float32 inputs, fixed seeds), called exactly as
// libtorch code writes them.
#include <functional>
#include <string>
#include <vector>

#include "parity/parity.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using parity::Close;
using parity::Tol;
namespace F = ember::nn::functional;
namespace tF = torch::nn::functional;

namespace {

torch::Tensor T(const ember::Tensor& e) { return parity::to_torch(e); }

using ELeaves = std::vector<ember::Tensor>;
using TLeaves = std::vector<torch::Tensor>;

struct Case {
  std::string name;
  std::vector<std::vector<int64_t>> shapes;  // the leaves, all requiring grad
  std::function<ember::Tensor(const ELeaves&)> ember_fn;
  std::function<torch::Tensor(const TLeaves&)> torch_fn;
  bool positive = false;  // leaves in (0.5, 1.5) (rates, fractional powers)
};

// Runs each case: forward, then the gradients of sum(y * g) for one random g.
void run(const std::vector<Case>& cases) {
  uint64_t seed = 7000;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ELeaves e;
    TLeaves t;
    for (const auto& shape : c.shapes) {
      ember::Tensor v = parity::random(shape, ember::kFloat, seed++);
      if (c.positive) v = v.abs() * 0.5 + 0.5;
      e.push_back(v.detach().requires_grad_(true));
      t.push_back(T(v).detach().requires_grad_(true));
    }
    const ember::Tensor ey = c.ember_fn(e);
    const torch::Tensor ty = c.torch_fn(t);
    ASSERT_TRUE(Close(ey, ty, {1e-5, 1e-5})) << c.name;
    if (!ey.requires_grad()) continue;
    const ember::Tensor g = parity::random(ey.sizes(), ember::kFloat, seed++);
    (ey * g).sum().backward();
    (ty * T(g)).sum().backward();
    for (size_t i = 0; i < e.size(); ++i) {
      if (!t[i].grad().defined()) continue;
      if (!e[i].grad().defined()) {  // no path to this leaf in Ember: libtorch's gradient must be zero
        EXPECT_EQ(t[i].grad().abs().max().item<double>(), 0.0) << c.name << " leaf " << i;
        continue;
      }
      EXPECT_TRUE(Close(e[i].grad(), t[i].grad(), {1e-4, 1e-5})) << c.name << " leaf " << i;
    }
  }
}

// Non-differentiable arguments shared by both sides.
ember::Tensor lng(std::vector<int64_t> v, ember::IntArrayRef shape) { return ember::tensor(v).view(shape); }
ember::Tensor flt(std::vector<float> v) { return ember::tensor(v); }

}  // namespace

TEST(NnFunctionalParity, ConvolutionsAndLinear) {
  run({
      {"conv1d", {{2, 4, 9}, {6, 2, 3}, {6}},
       [](const ELeaves& v) { return F::conv1d(v[0], v[1], F::Conv1dFuncOptions().bias(v[2]).stride(2).padding(1).groups(2)); },
       [](const TLeaves& v) { return tF::conv1d(v[0], v[1], tF::Conv1dFuncOptions().bias(v[2]).stride(2).padding(1).groups(2)); }},
      {"conv2d", {{2, 3, 8, 8}, {4, 3, 3, 3}, {4}},
       [](const ELeaves& v) { return F::conv2d(v[0], v[1], F::Conv2dFuncOptions().stride(2).padding(1).bias(v[2])); },
       [](const TLeaves& v) { return tF::conv2d(v[0], v[1], tF::Conv2dFuncOptions().stride(2).padding(1).bias(v[2])); }},
      {"conv2d no options", {{1, 3, 6, 6}, {2, 3, 3, 3}},
       [](const ELeaves& v) { return F::conv2d(v[0], v[1]); },
       [](const TLeaves& v) { return tF::conv2d(v[0], v[1]); }},
      {"conv2d same", {{1, 2, 7, 6}, {3, 2, 3, 2}},
       [](const ELeaves& v) { return F::conv2d(v[0], v[1], F::Conv2dFuncOptions().padding(ember::kSame).dilation({1, 2})); },
       [](const TLeaves& v) { return tF::conv2d(v[0], v[1], tF::Conv2dFuncOptions().padding(torch::kSame).dilation({1, 2})); }},
      {"conv3d", {{1, 2, 5, 5, 5}, {3, 2, 3, 3, 3}},
       [](const ELeaves& v) { return F::conv3d(v[0], v[1], F::Conv3dFuncOptions().padding(1)); },
       [](const TLeaves& v) { return tF::conv3d(v[0], v[1], tF::Conv3dFuncOptions().padding(1)); }},
      {"conv_transpose1d", {{2, 4, 5}, {4, 3, 3}, {3}},
       [](const ELeaves& v) { return F::conv_transpose1d(v[0], v[1], F::ConvTranspose1dFuncOptions().bias(v[2]).stride(2).output_padding(1)); },
       [](const TLeaves& v) { return tF::conv_transpose1d(v[0], v[1], tF::ConvTranspose1dFuncOptions().bias(v[2]).stride(2).output_padding(1)); }},
      {"conv_transpose2d", {{2, 4, 5, 5}, {4, 1, 3, 3}},
       [](const ELeaves& v) { return F::conv_transpose2d(v[0], v[1], F::ConvTranspose2dFuncOptions().stride(2).padding(1).groups(2)); },
       [](const TLeaves& v) { return tF::conv_transpose2d(v[0], v[1], tF::ConvTranspose2dFuncOptions().stride(2).padding(1).groups(2)); }},
      {"conv_transpose3d", {{1, 2, 3, 3, 3}, {2, 3, 2, 2, 2}},
       [](const ELeaves& v) { return F::conv_transpose3d(v[0], v[1], F::ConvTranspose3dFuncOptions().stride(2)); },
       [](const TLeaves& v) { return tF::conv_transpose3d(v[0], v[1], tF::ConvTranspose3dFuncOptions().stride(2)); }},
      {"linear", {{3, 5}, {4, 5}, {4}},
       [](const ELeaves& v) { return F::linear(v[0], v[1], v[2]); },
       [](const TLeaves& v) { return tF::linear(v[0], v[1], v[2]); }},
      {"bilinear", {{3, 5}, {3, 4}, {2, 5, 4}, {2}},
       [](const ELeaves& v) { return F::bilinear(v[0], v[1], v[2], v[3]); },
       [](const TLeaves& v) { return tF::bilinear(v[0], v[1], v[2], v[3]); }},
  });
}

TEST(NnFunctionalParity, Normalization) {
  ember::Tensor rm = parity::random({3}, ember::kFloat, 1), rv = parity::random({3}, ember::kFloat, 2).abs() + 0.5;
  run({
      {"batch_norm training", {{4, 3, 5}, {3}, {3}},
       [](const ELeaves& v) {
         return F::batch_norm(v[0], ember::zeros({3}), ember::ones({3}),
                              F::BatchNormFuncOptions().weight(v[1]).bias(v[2]).training(true).momentum(0.2).eps(1e-3));
       },
       [](const TLeaves& v) {
         return tF::batch_norm(v[0], torch::zeros({3}), torch::ones({3}),
                               tF::BatchNormFuncOptions().weight(v[1]).bias(v[2]).training(true).momentum(0.2).eps(1e-3));
       }},
      {"batch_norm eval", {{4, 3}, {3}},
       [&](const ELeaves& v) { return F::batch_norm(v[0], rm, rv, F::BatchNormFuncOptions().weight(v[1])); },
       [&](const TLeaves& v) { return tF::batch_norm(v[0], T(rm), T(rv), tF::BatchNormFuncOptions().weight(v[1])); }},
      {"instance_norm", {{2, 3, 6}, {3}, {3}},
       [](const ELeaves& v) { return F::instance_norm(v[0], F::InstanceNormFuncOptions().weight(v[1]).bias(v[2]).eps(1e-3)); },
       [](const TLeaves& v) { return tF::instance_norm(v[0], tF::InstanceNormFuncOptions().weight(v[1]).bias(v[2]).eps(1e-3)); }},
      {"layer_norm", {{3, 4, 5}, {4, 5}, {4, 5}},
       [](const ELeaves& v) { return F::layer_norm(v[0], F::LayerNormFuncOptions({4, 5}).weight(v[1]).bias(v[2]).eps(1e-4)); },
       [](const TLeaves& v) { return tF::layer_norm(v[0], tF::LayerNormFuncOptions({4, 5}).weight(v[1]).bias(v[2]).eps(1e-4)); }},
      {"group_norm", {{2, 6, 4}, {6}, {6}},
       [](const ELeaves& v) { return F::group_norm(v[0], F::GroupNormFuncOptions(3).weight(v[1]).bias(v[2])); },
       [](const TLeaves& v) { return tF::group_norm(v[0], tF::GroupNormFuncOptions(3).weight(v[1]).bias(v[2])); }},
      {"normalize", {{4, 6}},
       [](const ELeaves& v) { return F::normalize(v[0]); },
       [](const TLeaves& v) { return tF::normalize(v[0]); }},
      {"normalize p1 dim0", {{4, 6}},
       [](const ELeaves& v) { return F::normalize(v[0], F::NormalizeFuncOptions().p(1).dim(0)); },
       [](const TLeaves& v) { return tF::normalize(v[0], tF::NormalizeFuncOptions().p(1).dim(0)); }},
      {"local_response_norm 4d", {{2, 6, 5, 5}},
       [](const ELeaves& v) { return F::local_response_norm(v[0], F::LocalResponseNormFuncOptions(3).alpha(0.1).k(2)); },
       [](const TLeaves& v) { return tF::local_response_norm(v[0], tF::LocalResponseNormFuncOptions(3).alpha(0.1).k(2)); }},
      {"local_response_norm 3d", {{2, 6, 7}},
       [](const ELeaves& v) { return F::local_response_norm(v[0], F::LocalResponseNormFuncOptions(4)); },
       [](const TLeaves& v) { return tF::local_response_norm(v[0], tF::LocalResponseNormFuncOptions(4)); }},
  });
}

// Fractional max pooling with the same random samples on both sides: windows, values, indices and
// the gradient into each window's maximum.
TEST(NnFunctionalParity, FractionalMaxPool) {
  ember::Generator g(11);
  const ember::Tensor s2 = ember::rand({2, 3, 2}, &g), s3 = ember::rand({2, 2, 3}, &g);
  const ember::Tensor s2u = s2.narrow(0, 0, 1);
  run({
      {"fractional_max_pool2d output_size", {{2, 3, 9, 11}},
       [&](const ELeaves& v) { return F::fractional_max_pool2d(v[0], F::FractionalMaxPool2dFuncOptions(2).output_size(std::vector<int64_t>{5, 6})._random_samples(s2)); },
       [&](const TLeaves& v) { return tF::fractional_max_pool2d(v[0], tF::FractionalMaxPool2dFuncOptions(2).output_size(std::vector<int64_t>{5, 6})._random_samples(T(s2))); }},
      {"fractional_max_pool2d ratio, kernel 3x2", {{2, 3, 13, 10}},
       [&](const ELeaves& v) { return std::get<1>(F::fractional_max_pool2d_with_indices(v[0], F::FractionalMaxPool2dFuncOptions({3, 2}).output_ratio(std::vector<double>{0.5, 0.7})._random_samples(s2))); },
       [&](const TLeaves& v) { return std::get<1>(tF::fractional_max_pool2d_with_indices(v[0], tF::FractionalMaxPool2dFuncOptions({3, 2}).output_ratio(std::vector<double>{0.5, 0.7})._random_samples(T(s2)))); }},
      {"fractional_max_pool2d unbatched", {{3, 8, 8}},
       [&](const ELeaves& v) { return F::fractional_max_pool2d(v[0], F::FractionalMaxPool2dFuncOptions(3).output_size(std::vector<int64_t>{4, 5})._random_samples(s2u)); },
       [&](const TLeaves& v) { return tF::fractional_max_pool2d(v[0], tF::FractionalMaxPool2dFuncOptions(3).output_size(std::vector<int64_t>{4, 5})._random_samples(T(s2u))); }},
      {"fractional_max_pool3d", {{2, 2, 7, 8, 9}},
       [&](const ELeaves& v) { return F::fractional_max_pool3d(v[0], F::FractionalMaxPool3dFuncOptions({2, 3, 2}).output_size(std::vector<int64_t>{3, 4, 5})._random_samples(s3)); },
       [&](const TLeaves& v) { return tF::fractional_max_pool3d(v[0], tF::FractionalMaxPool3dFuncOptions({2, 3, 2}).output_size(std::vector<int64_t>{3, 4, 5})._random_samples(T(s3))); }},
      {"fractional_max_pool3d indices", {{2, 2, 7, 8, 9}},
       [&](const ELeaves& v) { return std::get<1>(F::fractional_max_pool3d_with_indices(v[0], F::FractionalMaxPool3dFuncOptions(2).output_ratio(0.6)._random_samples(s3))); },
       [&](const TLeaves& v) { return std::get<1>(tF::fractional_max_pool3d_with_indices(v[0], tF::FractionalMaxPool3dFuncOptions(2).output_ratio(0.6)._random_samples(T(s3)))); }},
  });
  // the modules, with the samples as their buffer, print as libtorch's
  ember::nn::FractionalMaxPool2d em(ember::nn::FractionalMaxPool2dOptions(2).output_size(std::vector<int64_t>{4, 4})._random_samples(s2));
  torch::nn::FractionalMaxPool2d tm(torch::nn::FractionalMaxPool2dOptions(2).output_size(std::vector<int64_t>{4, 4})._random_samples(T(s2)));
  const ember::Tensor x = parity::random({2, 3, 8, 8}, ember::kFloat, 5);
  EXPECT_TRUE(Close(em(x), tm(T(x))));
  std::ostringstream es, ts;
  es << *em;
  ts << *tm;
  EXPECT_EQ(es.str(), ts.str());
}

TEST(NnFunctionalParity, PoolingAndResampling) {
  run({
      {"max_pool1d", {{2, 3, 10}},
       [](const ELeaves& v) { return F::max_pool1d(v[0], F::MaxPool1dFuncOptions(3).stride(2).padding(1)); },
       [](const TLeaves& v) { return tF::max_pool1d(v[0], tF::MaxPool1dFuncOptions(3).stride(2).padding(1)); }},
      {"max_pool2d_with_indices", {{2, 3, 6, 6}},
       [](const ELeaves& v) { return std::get<0>(F::max_pool2d_with_indices(v[0], F::MaxPool2dFuncOptions(2))); },
       [](const TLeaves& v) { return std::get<0>(tF::max_pool2d_with_indices(v[0], tF::MaxPool2dFuncOptions(2))); }},
      {"avg_pool1d", {{2, 3, 10}},
       [](const ELeaves& v) { return F::avg_pool1d(v[0], F::AvgPool1dFuncOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false)); },
       [](const TLeaves& v) { return tF::avg_pool1d(v[0], tF::AvgPool1dFuncOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false)); }},
      {"adaptive_avg_pool1d", {{2, 3, 10}},
       [](const ELeaves& v) { return F::adaptive_avg_pool1d(v[0], F::AdaptiveAvgPool1dFuncOptions(4)); },
       [](const TLeaves& v) { return tF::adaptive_avg_pool1d(v[0], tF::AdaptiveAvgPool1dFuncOptions(4)); }},
      {"adaptive_max_pool1d", {{2, 3, 10}},
       [](const ELeaves& v) { return F::adaptive_max_pool1d(v[0], F::AdaptiveMaxPool1dFuncOptions(4)); },
       [](const TLeaves& v) { return tF::adaptive_max_pool1d(v[0], tF::AdaptiveMaxPool1dFuncOptions(4)); }},
      {"adaptive_max_pool2d", {{2, 3, 7, 5}},
       [](const ELeaves& v) { return F::adaptive_max_pool2d(v[0], F::AdaptiveMaxPool2dFuncOptions({3, std::nullopt})); },
       [](const TLeaves& v) { return tF::adaptive_max_pool2d(v[0], tF::AdaptiveMaxPool2dFuncOptions({3, c10::nullopt})); }},
      {"max_pool3d", {{2, 2, 5, 6, 7}},
       [](const ELeaves& v) { return F::max_pool3d(v[0], F::MaxPool3dFuncOptions({2, 3, 2}).stride({2, 1, 2}).padding({1, 1, 0})); },
       [](const TLeaves& v) { return tF::max_pool3d(v[0], tF::MaxPool3dFuncOptions({2, 3, 2}).stride({2, 1, 2}).padding({1, 1, 0})); }},
      {"max_pool3d dilation ceil", {{1, 2, 6, 7, 5}},
       [](const ELeaves& v) { return F::max_pool3d(v[0], F::MaxPool3dFuncOptions(2).stride(2).dilation({1, 2, 1}).ceil_mode(true)); },
       [](const TLeaves& v) { return tF::max_pool3d(v[0], tF::MaxPool3dFuncOptions(2).stride(2).dilation({1, 2, 1}).ceil_mode(true)); }},
      {"max_pool3d indices", {{2, 4, 5, 5}},
       [](const ELeaves& v) { return std::get<1>(F::max_pool3d_with_indices(v[0], F::MaxPool3dFuncOptions(2).padding(1).ceil_mode(true))); },
       [](const TLeaves& v) { return std::get<1>(tF::max_pool3d_with_indices(v[0], tF::MaxPool3dFuncOptions(2).padding(1).ceil_mode(true))); }},
      {"avg_pool3d", {{2, 2, 5, 6, 7}},
       [](const ELeaves& v) { return F::avg_pool3d(v[0], F::AvgPool3dFuncOptions(3).stride(2).padding(1)); },
       [](const TLeaves& v) { return tF::avg_pool3d(v[0], tF::AvgPool3dFuncOptions(3).stride(2).padding(1)); }},
      {"avg_pool3d no pad count ceil", {{1, 2, 5, 6, 7}},
       [](const ELeaves& v) { return F::avg_pool3d(v[0], F::AvgPool3dFuncOptions({3, 2, 2}).stride(2).padding(1).ceil_mode(true).count_include_pad(false)); },
       [](const TLeaves& v) { return tF::avg_pool3d(v[0], tF::AvgPool3dFuncOptions({3, 2, 2}).stride(2).padding(1).ceil_mode(true).count_include_pad(false)); }},
      {"avg_pool3d ceil include pad", {{1, 2, 5, 6, 7}},
       [](const ELeaves& v) { return F::avg_pool3d(v[0], F::AvgPool3dFuncOptions(2).stride(2).padding(1).ceil_mode(true)); },
       [](const TLeaves& v) { return tF::avg_pool3d(v[0], tF::AvgPool3dFuncOptions(2).stride(2).padding(1).ceil_mode(true)); }},
      {"avg_pool3d divisor", {{2, 4, 4, 4}},
       [](const ELeaves& v) { return F::avg_pool3d(v[0], F::AvgPool3dFuncOptions(2).divisor_override(3)); },
       [](const TLeaves& v) { return tF::avg_pool3d(v[0], tF::AvgPool3dFuncOptions(2).divisor_override(3)); }},
      {"adaptive_avg_pool3d", {{2, 2, 5, 7, 6}},
       [](const ELeaves& v) { return F::adaptive_avg_pool3d(v[0], F::AdaptiveAvgPool3dFuncOptions({3, std::nullopt, 4})); },
       [](const TLeaves& v) { return tF::adaptive_avg_pool3d(v[0], tF::AdaptiveAvgPool3dFuncOptions({3, c10::nullopt, 4})); }},
      {"adaptive_max_pool3d", {{2, 2, 5, 7, 6}},
       [](const ELeaves& v) { return F::adaptive_max_pool3d(v[0], F::AdaptiveMaxPool3dFuncOptions({3, 4, 2})); },
       [](const TLeaves& v) { return tF::adaptive_max_pool3d(v[0], tF::AdaptiveMaxPool3dFuncOptions({3, 4, 2})); }},
      {"adaptive_max_pool3d indices", {{2, 5, 7, 6}},
       [](const ELeaves& v) { return std::get<1>(F::adaptive_max_pool3d_with_indices(v[0], F::AdaptiveMaxPool3dFuncOptions({3, 4, 2}))); },
       [](const TLeaves& v) { return std::get<1>(tF::adaptive_max_pool3d_with_indices(v[0], tF::AdaptiveMaxPool3dFuncOptions({3, 4, 2}))); }},
      {"lp_pool1d", {{2, 3, 10}},
       [](const ELeaves& v) { return F::lp_pool1d(v[0], F::LPPool1dFuncOptions(2, 3).stride(2)); },
       [](const TLeaves& v) { return tF::lp_pool1d(v[0], tF::LPPool1dFuncOptions(2, 3).stride(2)); }},
      {"lp_pool2d", {{2, 3, 6, 6}},
       [](const ELeaves& v) { return F::lp_pool2d(v[0], F::LPPool2dFuncOptions(1.5, {2, 3})); },
       [](const TLeaves& v) { return tF::lp_pool2d(v[0], tF::LPPool2dFuncOptions(1.5, {2, 3})); }, true},
      {"interpolate bilinear", {{1, 2, 4, 5}},
       [](const ELeaves& v) { return F::interpolate(v[0], F::InterpolateFuncOptions().size(std::vector<int64_t>{7, 9}).mode(ember::kBilinear).align_corners(false)); },
       [](const TLeaves& v) { return tF::interpolate(v[0], tF::InterpolateFuncOptions().size(std::vector<int64_t>{7, 9}).mode(torch::kBilinear).align_corners(false)); }},
      {"interpolate bilinear scale", {{1, 2, 4, 5}},
       [](const ELeaves& v) { return F::interpolate(v[0], F::InterpolateFuncOptions().scale_factor(std::vector<double>{1.5, 2}).mode(ember::kBilinear).align_corners(true)); },
       [](const TLeaves& v) { return tF::interpolate(v[0], tF::InterpolateFuncOptions().scale_factor(std::vector<double>{1.5, 2}).mode(torch::kBilinear).align_corners(true)); }},
      {"interpolate linear", {{2, 3, 5}},
       [](const ELeaves& v) { return F::interpolate(v[0], F::InterpolateFuncOptions().size(std::vector<int64_t>{12}).mode(ember::kLinear).align_corners(false)); },
       [](const TLeaves& v) { return tF::interpolate(v[0], tF::InterpolateFuncOptions().size(std::vector<int64_t>{12}).mode(torch::kLinear).align_corners(false)); }},
      {"interpolate nearest", {{2, 3, 4, 4}},
       [](const ELeaves& v) { return F::interpolate(v[0], F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2})); },
       [](const TLeaves& v) { return tF::interpolate(v[0], tF::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2})); }},
      {"interpolate area", {{2, 3, 8, 6}},
       [](const ELeaves& v) { return F::interpolate(v[0], F::InterpolateFuncOptions().size(std::vector<int64_t>{3, 4}).mode(ember::kArea)); },
       [](const TLeaves& v) { return tF::interpolate(v[0], tF::InterpolateFuncOptions().size(std::vector<int64_t>{3, 4}).mode(torch::kArea)); }},
      {"unfold", {{2, 3, 6, 7}},
       [](const ELeaves& v) { return F::unfold(v[0], F::UnfoldFuncOptions({2, 3}).stride({1, 2}).padding(1).dilation({2, 1})); },
       [](const TLeaves& v) { return tF::unfold(v[0], tF::UnfoldFuncOptions({2, 3}).stride({1, 2}).padding(1).dilation({2, 1})); }},
      {"fold", {{2, 12, 12}},
       [](const ELeaves& v) { return F::fold(v[0], F::FoldFuncOptions({4, 5}, {2, 2})); },
       [](const TLeaves& v) { return tF::fold(v[0], tF::FoldFuncOptions({4, 5}, {2, 2})); }},
      {"fold strided unreached", {{1, 8, 6}},
       [](const ELeaves& v) { return F::fold(v[0], F::FoldFuncOptions({5, 8}, {2, 2}).stride(3).padding({1, 0})); },
       [](const TLeaves& v) { return tF::fold(v[0], tF::FoldFuncOptions({5, 8}, {2, 2}).stride(3).padding({1, 0})); }},
      {"max_unpool2d", {{2, 3, 6, 6}},
       [](const ELeaves& v) {
         auto [y, i] = F::max_pool2d_with_indices(v[0], F::MaxPool2dFuncOptions(2));
         return F::max_unpool2d(y, i, F::MaxUnpool2dFuncOptions(2));
       },
       [](const TLeaves& v) {
         auto [y, i] = tF::max_pool2d_with_indices(v[0], tF::MaxPool2dFuncOptions(2));
         return tF::max_unpool2d(y, i, tF::MaxUnpool2dFuncOptions(2));
       }},
      {"max_unpool1d", {{2, 3, 9}},
       [](const ELeaves& v) {
         auto [y, i] = F::max_pool1d_with_indices(v[0], F::MaxPool1dFuncOptions(3).stride(2));
         return F::max_unpool1d(y, i, F::MaxUnpool1dFuncOptions(3).stride(2));
       },
       [](const TLeaves& v) {
         auto [y, i] = tF::max_pool1d_with_indices(v[0], tF::MaxPool1dFuncOptions(3).stride(2));
         return tF::max_unpool1d(y, i, tF::MaxUnpool1dFuncOptions(3).stride(2));
       }},
      {"affine_grid", {{2, 2, 3}},
       [](const ELeaves& v) { return F::affine_grid(v[0], {2, 3, 4, 5}); },
       [](const TLeaves& v) { return tF::affine_grid(v[0], {2, 3, 4, 5}); }},
      {"affine_grid 3d align", {{2, 3, 4}},
       [](const ELeaves& v) { return F::affine_grid(v[0], {2, 1, 3, 4, 2}, true); },
       [](const TLeaves& v) { return tF::affine_grid(v[0], {2, 1, 3, 4, 2}, true); }},
      {"grid_sample", {{2, 3, 5, 6}, {2, 4, 7, 2}},
       [](const ELeaves& v) { return F::grid_sample(v[0], v[1] * 1.2); },
       [](const TLeaves& v) { return tF::grid_sample(v[0], v[1] * 1.2); }},
      {"grid_sample border align", {{2, 3, 5, 6}, {2, 4, 7, 2}},
       [](const ELeaves& v) { return F::grid_sample(v[0], v[1] * 1.2, F::GridSampleFuncOptions().padding_mode(ember::kBorder).align_corners(true)); },
       [](const TLeaves& v) { return tF::grid_sample(v[0], v[1] * 1.2, tF::GridSampleFuncOptions().padding_mode(torch::kBorder).align_corners(true)); }},
      {"grid_sample reflection", {{2, 3, 5, 6}, {2, 4, 7, 2}},
       [](const ELeaves& v) { return F::grid_sample(v[0], v[1] * 1.7, F::GridSampleFuncOptions().padding_mode(ember::kReflection)); },
       [](const TLeaves& v) { return tF::grid_sample(v[0], v[1] * 1.7, tF::GridSampleFuncOptions().padding_mode(torch::kReflection)); }},
      {"grid_sample reflection align", {{1, 2, 4, 5}, {1, 3, 3, 2}},
       [](const ELeaves& v) { return F::grid_sample(v[0], v[1] * 2.5, F::GridSampleFuncOptions().padding_mode(ember::kReflection).align_corners(true)); },
       [](const TLeaves& v) { return tF::grid_sample(v[0], v[1] * 2.5, tF::GridSampleFuncOptions().padding_mode(torch::kReflection).align_corners(true)); }},
      {"grid_sample nearest", {{2, 3, 5, 6}, {2, 4, 7, 2}},
       [](const ELeaves& v) { return F::grid_sample(v[0], v[1], F::GridSampleFuncOptions().mode(ember::kNearest)); },
       [](const TLeaves& v) { return tF::grid_sample(v[0], v[1], tF::GridSampleFuncOptions().mode(torch::kNearest)); }},
      {"pixel_shuffle", {{2, 8, 3, 3}},
       [](const ELeaves& v) { return F::pixel_shuffle(v[0], 2); },
       [](const TLeaves& v) { return tF::pixel_shuffle(v[0], 2); }},
      {"pixel_unshuffle", {{2, 2, 6, 4}},
       [](const ELeaves& v) { return F::pixel_unshuffle(v[0], 2); },
       [](const TLeaves& v) { return tF::pixel_unshuffle(v[0], 2); }},
  });
}

TEST(NnFunctionalParity, EmbeddingBag) {
  const ember::Tensor rows = lng({1, 4, 0, 2, 4, 3, 3, 9, 5, 1, 0, 0}, {3, 4});
  const ember::Tensor flat = rows.reshape({-1});
  const ember::Tensor offsets = lng({0, 3, 3, 7}, {4});
  const ember::Tensor offsets_last = lng({0, 3, 3, 7, 12}, {5});
  run({
      {"embedding_bag 2-D mean", {{10, 3}},
       [&](const ELeaves& v) { return F::embedding_bag(rows, v[0]); },
       [&](const TLeaves& v) { return tF::embedding_bag(T(rows), v[0]); }},
      {"embedding_bag offsets sum per_sample_weights", {{10, 3}, {12}},
       [&](const ELeaves& v) {
         return F::embedding_bag(flat, v[0], F::EmbeddingBagFuncOptions().offsets(offsets).mode(ember::kSum).per_sample_weights(v[1]));
       },
       [&](const TLeaves& v) {
         return tF::embedding_bag(T(flat), v[0], tF::EmbeddingBagFuncOptions().offsets(T(offsets)).mode(torch::kSum).per_sample_weights(v[1]));
       }},
      {"embedding_bag max include_last_offset padding_idx", {{10, 3}},
       [&](const ELeaves& v) {
         return F::embedding_bag(flat, v[0], F::EmbeddingBagFuncOptions().offsets(offsets_last).mode(ember::kMax).include_last_offset(true).padding_idx(4));
       },
       [&](const TLeaves& v) {
         return tF::embedding_bag(T(flat), v[0], tF::EmbeddingBagFuncOptions().offsets(T(offsets_last)).mode(torch::kMax).include_last_offset(true).padding_idx(4));
       }},
      {"embedding_bag mean padding_idx", {{10, 3}},
       [&](const ELeaves& v) { return F::embedding_bag(flat, v[0], F::EmbeddingBagFuncOptions().offsets(offsets).padding_idx(0)); },
       [&](const TLeaves& v) { return tF::embedding_bag(T(flat), v[0], tF::EmbeddingBagFuncOptions().offsets(T(offsets)).padding_idx(0)); }},
  });
}

TEST(NnFunctionalParity, Activations) {
  run({
      {"selu", {{3, 7}}, [](const ELeaves& v) { return F::selu(v[0]); }, [](const TLeaves& v) { return tF::selu(v[0]); }},
      {"glu", {{3, 8}}, [](const ELeaves& v) { return F::glu(v[0]); }, [](const TLeaves& v) { return tF::glu(v[0]); }},
      {"glu dim0", {{4, 3}}, [](const ELeaves& v) { return F::glu(v[0], 0); }, [](const TLeaves& v) { return tF::glu(v[0], 0); }},
      {"hardshrink", {{3, 7}},
       [](const ELeaves& v) { return F::hardshrink(v[0], F::HardshrinkFuncOptions().lambda(0.3)); },
       [](const TLeaves& v) { return tF::hardshrink(v[0], tF::HardshrinkFuncOptions().lambda(0.3)); }},
      {"softshrink", {{3, 7}},
       [](const ELeaves& v) { return F::softshrink(v[0], 0.3); },
       [](const TLeaves& v) { return tF::softshrink(v[0], 0.3); }},
      {"hardtanh", {{3, 7}},
       [](const ELeaves& v) { return F::hardtanh(v[0], F::HardtanhFuncOptions().min_val(-0.5).max_val(0.7)); },
       [](const TLeaves& v) { return tF::hardtanh(v[0], tF::HardtanhFuncOptions().min_val(-0.5).max_val(0.7)); }},
      {"celu", {{3, 7}},
       [](const ELeaves& v) { return F::celu(v[0], F::CELUFuncOptions().alpha(1.5)); },
       [](const TLeaves& v) { return tF::celu(v[0], tF::CELUFuncOptions().alpha(1.5)); }},
      {"threshold", {{3, 7}},
       [](const ELeaves& v) { return F::threshold(v[0], F::ThresholdFuncOptions(0.1, 20)); },
       [](const TLeaves& v) { return tF::threshold(v[0], tF::ThresholdFuncOptions(0.1, 20)); }},
      {"softmin", {{3, 7}},
       [](const ELeaves& v) { return F::softmin(v[0], F::SoftminFuncOptions(1)); },
       [](const TLeaves& v) { return tF::softmin(v[0], tF::SoftminFuncOptions(1)); }},
      {"mish", {{3, 7}}, [](const ELeaves& v) { return F::mish(v[0]); }, [](const TLeaves& v) { return tF::mish(v[0]); }},
      {"softsign", {{3, 7}}, [](const ELeaves& v) { return F::softsign(v[0]); }, [](const TLeaves& v) { return tF::softsign(v[0]); }},
      {"tanhshrink", {{3, 7}}, [](const ELeaves& v) { return F::tanhshrink(v[0]); }, [](const TLeaves& v) { return tF::tanhshrink(v[0]); }},
      {"logsigmoid", {{3, 7}}, [](const ELeaves& v) { return F::logsigmoid(v[0]); }, [](const TLeaves& v) { return tF::logsigmoid(v[0]); }},
      {"prelu", {{2, 3, 4}, {3}},
       [](const ELeaves& v) { return F::prelu(v[0], v[1]); },
       [](const TLeaves& v) { return tF::prelu(v[0], v[1]); }},
      {"prelu shared", {{2, 3, 4}, {1}},
       [](const ELeaves& v) { return F::prelu(v[0], v[1]); },
       [](const TLeaves& v) { return tF::prelu(v[0], v[1]); }},
      {"rrelu eval", {{3, 7}},
       [](const ELeaves& v) { return F::rrelu(v[0], F::RReLUFuncOptions().lower(0.1).upper(0.3)); },
       [](const TLeaves& v) { return tF::rrelu(v[0], tF::RReLUFuncOptions().lower(0.1).upper(0.3)); }},
  });
}

TEST(NnFunctionalParity, Distances) {
  run({
      {"cosine_similarity", {{4, 6}, {4, 6}},
       [](const ELeaves& v) { return F::cosine_similarity(v[0], v[1]); },
       [](const TLeaves& v) { return tF::cosine_similarity(v[0], v[1]); }},
      {"cosine_similarity broadcast dim0", {{4, 6}, {1, 6}},
       [](const ELeaves& v) { return F::cosine_similarity(v[0], v[1], F::CosineSimilarityFuncOptions().dim(0)); },
       [](const TLeaves& v) { return tF::cosine_similarity(v[0], v[1], tF::CosineSimilarityFuncOptions().dim(0)); }},
      {"pairwise_distance", {{4, 6}, {4, 6}},
       [](const ELeaves& v) { return F::pairwise_distance(v[0], v[1]); },
       [](const TLeaves& v) { return tF::pairwise_distance(v[0], v[1]); }},
      {"pairwise_distance p1.5 keepdim", {{4, 6}, {4, 6}},
       [](const ELeaves& v) { return F::pairwise_distance(v[0], v[1], F::PairwiseDistanceFuncOptions().p(1.5).keepdim(true)); },
       [](const TLeaves& v) { return tF::pairwise_distance(v[0], v[1], tF::PairwiseDistanceFuncOptions().p(1.5).keepdim(true)); }},
      {"pdist", {{5, 4}}, [](const ELeaves& v) { return F::pdist(v[0]); }, [](const TLeaves& v) { return tF::pdist(v[0]); }},
      {"pdist p1", {{5, 4}}, [](const ELeaves& v) { return F::pdist(v[0], 1); }, [](const TLeaves& v) { return tF::pdist(v[0], 1); }},
  });
}

TEST(NnFunctionalParity, Losses) {
  const ember::Tensor sign6 = flt({1, -1, -1, 1, 1, -1});
  const ember::Tensor sign4 = flt({1, -1, 1, -1});
  const ember::Tensor cls = lng({0, 4, 2, 2}, {4});
  const ember::Tensor multi = lng({3, 0, -1, 1, 1, 4, 2, -1, 0, 0, 0, 1, 2, 3, 4}, {3, 5});
  const ember::Tensor bits = flt({1, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0, 0, 1, 1, 1}).view({3, 5});
  const ember::Tensor counts = flt({0, 1, 3, 2, 5, 0});
  const ember::Tensor class_w = flt({0.5, 1, 2, 1.5, 0.25});
  const ember::Tensor ctc_targets = lng({1, 2, 2, 3, 0, 4, 1, 1, 0, 0, 2, 0}, {3, 4});
  const ember::Tensor ctc_in = lng({7, 5, 6}, {3}), ctc_tgt = lng({4, 2, 0}, {3});
  const ember::Tensor ctc_concat = lng({1, 2, 2, 3, 4, 1}, {6});
  run({
      {"ctc_loss", {{7, 3, 5}},
       [&](const ELeaves& v) { return F::ctc_loss(v[0].log_softmax(2), ctc_targets, ctc_in, ctc_tgt); },
       [&](const TLeaves& v) { return tF::ctc_loss(v[0].log_softmax(2), T(ctc_targets), T(ctc_in), T(ctc_tgt)); }},
      {"ctc_loss concatenated none blank 4", {{7, 3, 5}},
       [&](const ELeaves& v) {
         return F::ctc_loss(v[0].log_softmax(2), ctc_concat - 1 + (ctc_concat == 0).to(ember::kLong) * 4, ctc_in, ctc_tgt,
                            F::CTCLossFuncOptions().blank(4).reduction(ember::kNone));
       },
       [&](const TLeaves& v) {
         return tF::ctc_loss(v[0].log_softmax(2), T(ctc_concat - 1 + (ctc_concat == 0).to(ember::kLong) * 4), T(ctc_in),
                             T(ctc_tgt), tF::CTCLossFuncOptions().blank(4).reduction(torch::kNone));
       }},
      {"ctc_loss sum", {{7, 3, 5}},
       [&](const ELeaves& v) { return F::ctc_loss(v[0].log_softmax(2), ctc_targets, ctc_in, ctc_tgt, F::CTCLossFuncOptions().reduction(ember::kSum)); },
       [&](const TLeaves& v) { return tF::ctc_loss(v[0].log_softmax(2), T(ctc_targets), T(ctc_in), T(ctc_tgt), tF::CTCLossFuncOptions().reduction(torch::kSum)); }},
      {"margin_ranking_loss", {{6}, {6}},
       [&](const ELeaves& v) { return F::margin_ranking_loss(v[0], v[1], sign6, F::MarginRankingLossFuncOptions().margin(0.3)); },
       [&](const TLeaves& v) { return tF::margin_ranking_loss(v[0], v[1], T(sign6), tF::MarginRankingLossFuncOptions().margin(0.3)); }},
      {"hinge_embedding_loss", {{6}},
       [&](const ELeaves& v) { return F::hinge_embedding_loss(v[0], sign6, F::HingeEmbeddingLossFuncOptions().margin(0.5)); },
       [&](const TLeaves& v) { return tF::hinge_embedding_loss(v[0], T(sign6), tF::HingeEmbeddingLossFuncOptions().margin(0.5)); }},
      {"multi_margin_loss", {{4, 5}},
       [&](const ELeaves& v) { return F::multi_margin_loss(v[0], cls); },
       [&](const TLeaves& v) { return tF::multi_margin_loss(v[0], T(cls)); }},
      // libtorch's multi_margin_loss has no gradient for its weight: a constant here.
      {"multi_margin_loss p2 weight sum", {{4, 5}},
       [&](const ELeaves& v) { return F::multi_margin_loss(v[0], cls, F::MultiMarginLossFuncOptions().p(2).margin(0.7).weight(class_w).reduction(ember::kSum)); },
       [&](const TLeaves& v) { return tF::multi_margin_loss(v[0], T(cls), tF::MultiMarginLossFuncOptions().p(2).margin(0.7).weight(T(class_w)).reduction(torch::kSum)); }},
      {"cosine_embedding_loss", {{4, 6}, {4, 6}},
       [&](const ELeaves& v) { return F::cosine_embedding_loss(v[0], v[1], sign4, F::CosineEmbeddingLossFuncOptions().margin(0.2).reduction(ember::kNone)); },
       [&](const TLeaves& v) { return tF::cosine_embedding_loss(v[0], v[1], T(sign4), tF::CosineEmbeddingLossFuncOptions().margin(0.2).reduction(torch::kNone)); }},
      {"multilabel_margin_loss", {{3, 5}},
       [&](const ELeaves& v) { return F::multilabel_margin_loss(v[0], multi, ember::kNone); },
       [&](const TLeaves& v) { return tF::multilabel_margin_loss(v[0], T(multi), torch::kNone); }},
      {"soft_margin_loss", {{6}},
       [&](const ELeaves& v) { return F::soft_margin_loss(v[0], sign6); },
       [&](const TLeaves& v) { return tF::soft_margin_loss(v[0], T(sign6)); }},
      {"multilabel_soft_margin_loss", {{3, 5}, {5}},
       [&](const ELeaves& v) { return F::multilabel_soft_margin_loss(v[0], bits, F::MultilabelSoftMarginLossFuncOptions().weight(v[1])); },
       [&](const TLeaves& v) { return tF::multilabel_soft_margin_loss(v[0], T(bits), tF::MultilabelSoftMarginLossFuncOptions().weight(v[1])); }},
      {"triplet_margin_loss", {{4, 6}, {4, 6}, {4, 6}},
       [](const ELeaves& v) { return F::triplet_margin_loss(v[0], v[1], v[2], F::TripletMarginLossFuncOptions().margin(0.5).p(1.5).swap(true)); },
       [](const TLeaves& v) { return tF::triplet_margin_loss(v[0], v[1], v[2], tF::TripletMarginLossFuncOptions().margin(0.5).p(1.5).swap(true)); }},
      {"triplet_margin_with_distance_loss", {{4, 6}, {4, 6}, {4, 6}},
       [](const ELeaves& v) { return F::triplet_margin_with_distance_loss(v[0], v[1], v[2]); },
       [](const TLeaves& v) { return tF::triplet_margin_with_distance_loss(v[0], v[1], v[2]); }},
      {"triplet_margin_with_distance_loss cosine", {{4, 6}, {4, 6}, {4, 6}},
       [](const ELeaves& v) {
         auto d = [](const ember::Tensor& a, const ember::Tensor& b) { return 1 - F::cosine_similarity(a, b); };
         return F::triplet_margin_with_distance_loss(v[0], v[1], v[2], F::TripletMarginWithDistanceLossFuncOptions().distance_function(d).swap(true));
       },
       [](const TLeaves& v) {
         auto d = [](const torch::Tensor& a, const torch::Tensor& b) { return 1 - tF::cosine_similarity(a, b); };
         return tF::triplet_margin_with_distance_loss(v[0], v[1], v[2], tF::TripletMarginWithDistanceLossFuncOptions().distance_function(d).swap(true));
       }},
      {"poisson_nll_loss", {{6}},
       [&](const ELeaves& v) { return F::poisson_nll_loss(v[0], counts); },
       [&](const TLeaves& v) { return tF::poisson_nll_loss(v[0], T(counts)); }},
      {"poisson_nll_loss rate full", {{6}},
       [&](const ELeaves& v) { return F::poisson_nll_loss(v[0], counts, F::PoissonNLLLossFuncOptions().log_input(false).full(true).reduction(ember::kSum)); },
       [&](const TLeaves& v) { return tF::poisson_nll_loss(v[0], T(counts), tF::PoissonNLLLossFuncOptions().log_input(false).full(true).reduction(torch::kSum)); },
       true},
  });
}

// The dropouts draw from different generators: eval is the identity, training keeps the
// moments alpha dropout promises and drops whole channels where asked.
TEST(NnFunctionalParity, Dropouts) {
  ember::manual_seed(3);
  ember::Tensor x = ember::randn({64, 32, 4, 4});
  EXPECT_TRUE(F::dropout(x).defined());
  EXPECT_TRUE(F::alpha_dropout(x, F::AlphaDropoutFuncOptions().p(0.3)).equal(x));  // training(false) by default
  ember::Tensor a = F::alpha_dropout(x, F::AlphaDropoutFuncOptions().p(0.3).training(true));
  EXPECT_NEAR(a.mean().item<double>(), 0.0, 0.03);
  EXPECT_NEAR(a.std().item<double>(), 1.0, 0.03);
  ember::Tensor fa = F::feature_alpha_dropout(x, F::FeatureAlphaDropoutFuncOptions().p(0.5).training(true));
  ember::Tensor dropped = fa.std({2, 3}) < 1e-6;  // a dropped channel is one constant
  EXPECT_GT(dropped.sum().item<int64_t>(), 0);
  ember::Tensor d3 = F::dropout3d(ember::ones({2, 8, 2, 2, 2}), F::Dropout3dFuncOptions().p(0.5));
  ember::Tensor sums = d3.sum({2, 3, 4});
  EXPECT_TRUE(ember::logical_or(sums == 0, sums == 16).all().item<bool>());
}

// multi_head_attention_forward with libtorch's options: in_proj or separate projection weights,
// bias_k/bias_v, add_zero_attn, static keys and values, an additive mask, a key padding mask and
// per-head weights; outputs and the weights' gradients.
TEST(NnFunctionalParity, MultiHeadAttentionForward) {
  constexpr int64_t E = 8, H = 2, L = 3, S = 4, N = 2;
  uint64_t seed = 700;
  auto leaf = [&](ember::IntArrayRef sizes) { return (parity::random(sizes, ember::kFloat, seed++) * 0.5).requires_grad_(); };
  const ember::Tensor q = leaf({L, N, E}), k = leaf({S, N, E}), v = leaf({S, N, E});
  const ember::Tensor w = leaf({3 * E, E}), b = leaf({3 * E}), ow = leaf({E, E}), ob = leaf({E});
  const ember::Tensor bk = leaf({1, 1, E}), bv = leaf({1, 1, E});
  const ember::Tensor qw = leaf({E, E}), kw = leaf({E, E}), vw = leaf({E, E});
  const ember::Tensor sk = leaf({N * H, S, E / H}), sv = leaf({N * H, S, E / H});
  const ember::Tensor mask = parity::random({L, S}, ember::kFloat, seed++);
  const ember::Tensor kpm = ember::tensor({{false, false, true, false}, {false, false, false, false}});
  const std::vector<ember::Tensor> leaves = {q, k, v, w, b, ow, ob, bk, bv, qw, kw, vw, sk, sv};
  for (int variant = 0; variant < 4; ++variant) {
    SCOPED_TRACE(variant);
    std::vector<torch::Tensor> tl;
    for (const ember::Tensor& e : leaves) tl.push_back(T(e).detach().requires_grad_());
    for (const ember::Tensor& e : leaves) e.mutable_grad() = ember::Tensor();
    const bool separate = variant == 1, biased = variant == 2, statics = variant == 3;
    auto eo = F::MultiheadAttentionForwardFuncOptions(E, H, w, b, biased ? bk : ember::Tensor(), biased ? bv : ember::Tensor(),
                                                      variant == 2, 0.0, ow, ob)
                  .use_separate_proj_weight(separate).q_proj_weight(separate ? qw : ember::Tensor())
                  .k_proj_weight(separate ? kw : ember::Tensor()).v_proj_weight(separate ? vw : ember::Tensor())
                  .static_k(statics ? sk : ember::Tensor()).static_v(statics ? sv : ember::Tensor())
                  .attn_mask(statics ? ember::Tensor() : mask).key_padding_mask(statics ? ember::Tensor() : kpm)
                  .average_attn_weights(variant != 1);
    auto to = torch::nn::functional::MultiheadAttentionForwardFuncOptions(
                  E, H, tl[3], tl[4], biased ? tl[7] : torch::Tensor(), biased ? tl[8] : torch::Tensor(), variant == 2,
                  0.0, tl[5], tl[6])
                  .use_separate_proj_weight(separate).q_proj_weight(separate ? tl[9] : torch::Tensor())
                  .k_proj_weight(separate ? tl[10] : torch::Tensor()).v_proj_weight(separate ? tl[11] : torch::Tensor())
                  .static_k(statics ? tl[12] : torch::Tensor()).static_v(statics ? tl[13] : torch::Tensor())
                  .attn_mask(statics ? torch::Tensor() : T(mask))
                  .key_padding_mask(statics ? torch::Tensor() : T(kpm))
                  .average_attn_weights(variant != 1);
    auto [ey, ew] = F::multi_head_attention_forward(q, k, v, eo);
    auto [ty, tw] = torch::nn::functional::multi_head_attention_forward(tl[0], tl[1], tl[2], to);
    ASSERT_TRUE(Close(ey, ty, {1e-5, 1e-5}));
    ASSERT_TRUE(Close(ew, tw, {1e-5, 1e-5}));
    (ey.sum() + (ew * ew).sum()).backward();
    (ty.sum() + (tw * tw).sum()).backward();
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (!tl[i].grad().defined()) continue;
      EXPECT_TRUE(Close(leaves[i].grad(), tl[i].grad(), {1e-4, 1e-5})) << "leaf " << i;
    }
  }
  EXPECT_THROW(F::multi_head_attention_forward(q, k, v, F::MultiheadAttentionForwardFuncOptions(E, 3, w, b, {}, {}, false, 0.0, ow, ob)),
               ember::Error);
}

}  // namespace EMBER_UNITY_FILE
