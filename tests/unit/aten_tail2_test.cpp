// Argument checks of libtorch's ATen functions, round 2 (issue 26): each bad call raises
// ember::Error with PyTorch's message; empty and zero-size inputs do not crash; the device
// queries give libtorch's CPU answers.
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

using ember::Tensor;
using L = std::vector<int64_t>;

Tensor longs(L v) { return ember::tensor(v, ember::kLong); }

TEST(AtenTail2, ActivationAndLossChecks) {
  Tensor f = ember::ones({3, 4});
  expect_error([&] { ember::glu(ember::ones({3, 5})); }, {"glu", "Halving dimension must be even", "5"});
  expect_error([&] { ember::celu(f, 0); }, {"celu", "alpha"});
  expect_error([&] { ember::softshrink(f, -1); }, {"softshrink", "lambda must be greater or equal to 0"});
  expect_error([&] { ember::prelu(f, ember::ones({3})); }, {"prelu", "Mismatch of parameter numbers and input channel size"});
  expect_error([&] { ember::rrelu(f, 0.5, 0.1); }, {"rrelu", "lower bound should be less than or equal to the upper bound"});
  expect_error([&] { ember::native_dropout(f, 1.5, true); }, {"native_dropout", "between 0 and 1", "1.5"});
  expect_error([&] { ember::hinge_embedding_loss(f, f, 1.0, 7); }, {"hinge_embedding_loss", "7 is not a valid value for reduction"});
  expect_error([&] { ember::multi_margin_loss(f, longs({0, 1, 2}), 3); }, {"multi_margin_loss", "only p == 1 and p == 2 supported"});
  expect_error([&] { ember::nll_loss2d(f, longs({0, 1, 2})); }, {"nll_loss2d", "4D tensors", "[3, 4]"});
}

TEST(AtenTail2, DistancePoolAndPadChecks) {
  Tensor f = ember::ones({3, 4});
  expect_error([&] { ember::cdist(ember::ones({4}), f); }, {"cdist", "at least 2D tensors, X1 got: 1D"});
  expect_error([&] { ember::cdist(f, ember::ones({2, 5})); }, {"cdist", "same number of columns", "4", "5"});
  expect_error([&] { ember::pdist(ember::ones({2, 2, 2})); }, {"pdist", "2D tensors", "3D"});
  expect_error([&] { ember::channel_shuffle(ember::ones({2, 6, 3}), 4); }, {"channel_shuffle", "divisible by groups", "6", "4"});
  expect_error([&] { ember::channel_shuffle(f, 2); }, {"channel_shuffle", "at least 3 dimensions"});
  expect_error([&] { ember::pixel_shuffle(ember::ones({1, 3, 2, 2}), 2); }, {"pixel_shuffle"});
  expect_error([&] { ember::adaptive_max_pool1d(ember::ones({2, 3, 4}), {2, 2}); }, {"adaptive_max_pool1d", "output_size must be 1"});
  expect_error([&] { ember::max_unpool2d(ember::ones({1, 1, 2, 2}), ember::zeros({1, 1, 2, 2}, ember::kLong), {2}); },
               {"max_unpool2d", "exactly two elements"});
  expect_error([&] { ember::max_unpool2d(ember::ones({1, 1, 2, 2}), longs({0, 1, 2, 99}).view({1, 1, 2, 2}), {4, 4}); },
               {"max_unpool2d", "invalid max index", "99"});
  expect_error([&] { ember::reflection_pad2d(ember::ones({1, 2, 3, 3}), {1, 1}); }, {"reflection_pad2d", "padding size is expected to be 4", "2"});
  expect_error([&] { ember::replication_pad1d(ember::ones({5}), {1, 1}); }, {"replication_pad1d", "Expected 2D or 3D"});
  expect_error([&] { ember::embedding_bag(f, longs({0, 1}), longs({0}), false, 3); }, {"embedding_bag", "mode", "3"});
  expect_error([&] { ember::conv_tbc(f, ember::ones({3, 4, 2}), ember::ones({2})); }, {"conv_tbc", "Input must have 3 dims"});
  expect_error([&] { ember::convolution(f, f, std::nullopt, L{1}, L{0}, L{1}, false, L{0}, 1); }, {"convolution", "weight of 3, 4 or 5 dims"});
  expect_error([&] { ember::adjoint(ember::ones({3})); }, {"adjoint", "only supported on matrices"});
  expect_error([&] { ember::grid_sampler(ember::ones({1, 1, 2, 2}), ember::zeros({1, 2, 2, 2}), 2, 0, false); },
               {"grid_sampler", "interpolation mode 2"});
  expect_error([&] { ember::upsample_nearest1d(f, L{4}); }, {"upsample_nearest1d", "3D data tensor expected", "[3, 4]"});
  expect_error([&] { ember::upsample_bilinear2d(ember::ones({1, 1, 2, 2}), L{4}, false); },
               {"upsample_bilinear2d", "output_size equals to 2", "size 1"});
  expect_error([&] { ember::upsample_bicubic2d(ember::ones({1, 1, 2, 2}), std::nullopt, false, std::nullopt); },
               {"upsample_bicubic2d", "exactly one of output_size and scale_factors"});
  expect_error([&] { ember::embedding_renorm_(f, ember::ones({2}), 1.0, 2.0); }, {"embedding_renorm_", "Long, Int", "Float"});
}

TEST(AtenTail2, MathChecks) {
  Tensor f = ember::ones({3}), l = ember::arange(3);
  expect_error([&] { ember::gcd(f, f); }, {"gcd", "not implemented for 'Float'"});
  expect_error([&] { ember::lcm(l, f); }, {"lcm", "Float"});
  expect_error([&] { ember::nextafter(l, l); }, {"nextafter", "Long"});
  expect_error([&] { ember::frexp(l); }, {"frexp", "only supports floating-point dtypes"});
  expect_error([&] { ember::bitwise_left_shift(f, 1); }, {"lshift", "Float"});
  expect_error([&] { ember::polygamma(-1, f); }, {"polygamma", "does not support negative n"});
  expect_error([&] { ember::mvlgamma(f, 3); }, {"mvlgamma", "All elements must be greater than (p-1)/2"});
  expect_error([&] { ember::mvlgamma(f * 5, 0); }, {"mvlgamma", "p has to be greater than or equal to 1"});
  expect_error([&] { l.lgamma_(); }, {"lgamma_", "can't be cast", "Long"});
  expect_error([&] { ember::igamma(f, ember::ones({2})); }, {"igamma"});
  // igamma has no derivative in its first argument (PyTorch: not implemented)
  Tensor a = ember::full({2}, 2.0).requires_grad_();
  Tensor x = ember::full({2}, 1.0).requires_grad_();
  Tensor y = ember::igamma(a, x).sum();
  expect_error([&] { y.backward(); }, {"igamma", "derivative for 'igamma: input' is not implemented"});
  // double backward of lgamma goes through digamma and polygamma
  Tensor z = ember::full({1}, 3.5, ember::kDouble).requires_grad_();
  Tensor g = ember::autograd::grad({ember::lgamma(z).sum()}, {z}, {}, std::nullopt, true)[0];
  Tensor gg = ember::autograd::grad({g.sum()}, {z})[0];
  EXPECT_NEAR(g.item<double>(), 1.1031566406452432, 1e-12);    // digamma(3.5)
  EXPECT_NEAR(gg.item<double>(), 0.330357756100235, 1e-11);  // trigamma(3.5)
}

TEST(AtenTail2, LinalgAndStatisticsChecks) {
  Tensor m = ember::ones({3, 4});
  expect_error([&] { ember::cross(ember::ones({3, 2}), ember::ones({3, 2}), 1); }, {"cross", "must have length 3", "2"});
  expect_error([&] { ember::cross(ember::ones({3}), m); }, {"cross", "same number of dimensions"});
  expect_error([&] { ember::cross(ember::ones({2, 4}), ember::ones({2, 4})); }, {"cross", "no dimension of size 3"});
  expect_error([&] { ember::inner(m, ember::ones({3})); }, {"inner", "last dimension must match", "[3, 4]", "[3]"});
  expect_error([&] { ember::tensordot(m, m, {0}, {1}); }, {"tensordot", "contracted dimensions need to match", "3", "4"});
  expect_error([&] { ember::tensordot(m, m, {0, 1}, {0}); }, {"tensordot", "same length"});
  expect_error([&] { ember::addr(m, m, ember::ones({4})); }, {"addr", "Expected 1-D argument vec1, but got 2-D"});
  expect_error([&] { ember::addbmm(m, m, m); }, {"addbmm", "batch1 must be a 3D tensor"});
  expect_error([&] { ember::chain_matmul({}); }, {"chain_matmul", "one or more matrices"});
  expect_error([&] { ember::chain_matmul({ember::ones({2})}); }, {"chain_matmul", "Tensor dimension is 1, expected 2"});
  expect_error([&] { ember::cov(ember::ones({2, 2, 2})); }, {"cov", "two or fewer dimensions", "3"});
  expect_error([&] { ember::cov(m, 1, ember::ones({4})); }, {"cov", "fweights to have integral dtype"});
  expect_error([&] { ember::cov(m, 1, longs({1, 1, 1})); }, {"cov", "same numel as there are observations", "3 != 4"});
  expect_error([&] { ember::cov(m, 1, longs({1, -1, 1, 1})); }, {"cov", "fweights cannot be negative"});
  expect_error([&] { ember::cov(m, 1, std::nullopt, longs({1, 1, 1, 1})); }, {"cov", "aweights to have floating point dtype"});
  expect_error([&] { ember::vander(m); }, {"vander", "one-dimensional"});
  expect_error([&] { ember::vander(ember::ones({3}), -1); }, {"vander", "N must be non-negative"});
  expect_error([&] { ember::combinations(m); }, {"combinations", "Expect a 1D vector"});
  expect_error([&] { ember::combinations(ember::ones({3}), -1); }, {"combinations", "non-negative", "-1"});
  expect_error([&] { ember::kaiser_window(4, ember::kLong); }, {"kaiser_window", "floating point dtypes", "Long"});
  expect_error([&] { ember::frobenius_norm(m, {0, 1, 2}); }, {"frobenius_norm", "at most 2 dimensions", "3"});
  expect_error([&] { ember::gradient(m, std::nullopt, std::nullopt, 3); }, {"gradient", "edge_order=1 and edge_order=2"});
  expect_error([&] { ember::gradient(ember::ones({1, 4})); }, {"gradient", "at least edge_order+1"});
  expect_error([&] { ember::gradient(m, std::vector<ember::Scalar>{1.0, 2.0, 3.0}); },
               {"gradient", "a list of length equal to 'self.dim() = 2'", "length 3"});
  expect_error([&] { ember::gradient(m, std::vector<Tensor>{ember::arange(3)}); }, {"gradient", "'self.dim() = 2'", "length 1"});
  expect_error([&] { ember::gradient(m, std::vector<ember::Scalar>{1.0}, L{0, 1}); },
               {"gradient", "spacing argument of length 1 and a dim argument of length 2"});
  expect_error([&] { ember::histc(ember::arange(3)); }, {"histc", "not implemented for 'Long'"});
  expect_error([&] { ember::histc(ember::ones({3}), 0); }, {"histc", "bins must be > 0"});
  expect_error([&] { ember::histc(ember::ones({3}), 4, 2, 1); }, {"histc", "max must be larger than min"});
  expect_error([&] { ember::histogram(ember::ones({3}), 4, std::vector<double>{1.0}); }, {"histogram", "range should have 2 elements"});
  expect_error([&] { ember::bincount(ember::ones({3})); }, {"bincount", "1-d non-negative integral"});
  expect_error([&] { ember::bincount(longs({1, -1})); }, {"bincount", "non-negative"});
  expect_error([&] { ember::bincount(longs({1, 2}), ember::ones({3})); }, {"bincount", "same length"});
  expect_error([&] { ember::bucketize(ember::ones({3}), m); }, {"bucketize", "boundaries tensor must be 1 dimension", "2"});
  expect_error([&] { ember::searchsorted(ember::ones({3}), ember::ones({2}), false, true, "left"); },
               {"searchsorted", "side and right can't be set to opposites"});
  expect_error([&] { ember::searchsorted(ember::ones({3}), ember::ones({2}), false, false, "middle"); },
               {"searchsorted", "'left' or 'right'", "middle"});
  expect_error([&] { ember::searchsorted(m, ember::ones({2, 2})); }, {"searchsorted", "first N-1 dimensions"});
  expect_error([&] { ember::mode(ember::ones({3, 0}), 1); }, {"mode", "non-zero size"});
  expect_error([&] { ember::nanquantile(m, 1.5); }, {"nanquantile", "in the range [0, 1]"});
  expect_error([&] { ember::nanquantile(m, 0.5, 0, false, "cubic"); }, {"nanquantile", "interpolation must be one of", "cubic"});
  expect_error([&] { ember::nanquantile(ember::arange(4), 0.5); }, {"nanquantile", "float or double"});
}

TEST(AtenTail2, IndexingChecks) {
  Tensor m = ember::zeros({3, 4});
  expect_error([&] { ember::put(m, ember::ones({2}), ember::ones({2})); }, {"put_", "long tensor for index", "Float"});
  expect_error([&] { ember::put(m, longs({0, 1}), ember::ones({3})); }, {"put_", "same number of elements", "3", "2"});
  expect_error([&] { ember::put(m, longs({12}), ember::ones({1})); }, {"put_", "out of range", "index 12", "12 elements"});
  expect_error([&] { ember::put(m, longs({0}), ember::ones({1}, ember::kDouble)); }, {"put_", "same dtype", "Float", "Double"});
  expect_error([&] { ember::scatter_reduce(m, 0, longs({0}).view({1, 1}), ember::ones({1, 1}), "max"); },
               {"scatter_reduce", "sum, prod, mean, amax or amin", "max"});
  expect_error([&] { ember::scatter_reduce(m, 0, longs({5}).view({1, 1}), ember::ones({1, 1}), "amax"); },
               {"scatter_reduce", "index 5 is out of bounds for dimension 0 with size 3"});
  expect_error([&] { ember::index_reduce(m, 0, longs({0, 1}), ember::ones({2, 4}), "sum"); },
               {"index_reduce", "prod, mean, amax or amin", "sum"});
  expect_error([&] { ember::index_reduce(m, 0, longs({0, 1}), ember::ones({3, 4}), "amax"); },
               {"index_reduce", "Number of indices (2) should be equal to source.size(dim) (3)"});
  Tensor p = ember::ones({3}).requires_grad_();
  expect_error([&] { ember::scatter_reduce(p, 0, longs({0, 0}), ember::ones({2}), "prod"); }, {"scatter_reduce", "prod", "not implemented"});
  expect_error([&] { ember::multinomial(ember::ones({2, 2, 2}), 1); }, {"multinomial", "prob_dist must be 1 or 2 dim"});
  expect_error([&] { ember::multinomial(ember::ones({3}), 4); }, {"multinomial", "without replacement"});
  expect_error([&] { ember::multinomial(-ember::ones({3}), 1); }, {"multinomial", "element < 0"});
  expect_error([&] { ember::multinomial(ember::zeros({3}), 1); }, {"multinomial", "sum of probabilities <= 0"});
  expect_error([&] { ember::ones({3}).fill_diagonal_(1); }, {"fill_diagonal_", "dimensions must larger than 1"});
  expect_error([&] { ember::ones({2, 3, 3}).fill_diagonal_(1); }, {"fill_diagonal_", "equal length"});
  expect_error([&] { ember::ones({3}).float_power_(2); }, {"float_power_", "dtype Float", "requires dtype Double"});
  expect_error([&] { ember::ones({2, 3}).sum_to_size({4}); }, {"sum_to_size", "is not expandable"});
  expect_error([&] { ember::as_strided_scatter(m, ember::ones({3}), {2, 2}, {4, 1}); }, {"as_strided_scatter", "src"});
  expect_error([&] { ember::fill(m, ember::ones({2})); }, {"fill", "0-dimension value tensor", "1 dimensions"});
  expect_error([&] { ember::empty({3}).random_(5, 2); }, {"random_", "'from' to be less than 'to'"});
}

TEST(AtenTail2, EmptyAndZeroSizeInputs) {
  Tensor e = ember::ones({0, 3});
  EXPECT_EQ(ember::selu(e).sizes(), e.sizes());
  EXPECT_EQ(ember::lgamma(e).sizes(), e.sizes());
  EXPECT_EQ(ember::igamma(e, e).sizes(), e.sizes());
  EXPECT_EQ(ember::cdist(e, ember::ones({2, 3})).sizes(), (L{0, 2}));
  EXPECT_EQ(ember::gcd(ember::zeros({0}, ember::kLong), ember::zeros({0}, ember::kLong)).numel(), 0);
  EXPECT_EQ(std::get<0>(ember::frexp(e)).sizes(), e.sizes());
  EXPECT_EQ(ember::histc(ember::ones({0}), 4).sum().item<double>(), 0);
  EXPECT_EQ(ember::bincount(ember::zeros({0}, ember::kLong)).numel(), 0);
  EXPECT_EQ(ember::searchsorted(ember::ones({3}), ember::ones({0})).numel(), 0);
  EXPECT_EQ(std::get<0>(ember::unique_consecutive(ember::ones({0}))).numel(), 0);
  EXPECT_EQ(std::get<0>(ember::unique_dim(e, 0)).sizes(), e.sizes());
  EXPECT_EQ(std::get<0>(ember::cummax(e, 0)).sizes(), e.sizes());
  EXPECT_EQ(ember::nanmedian(ember::ones({0})).dim(), 0);
  EXPECT_EQ(ember::put(e, ember::zeros({0}, ember::kLong), ember::ones({0})).sizes(), e.sizes());
  EXPECT_EQ(ember::scatter_reduce(e, 0, ember::zeros({0, 3}, ember::kLong), e, "amax").sizes(), e.sizes());
  EXPECT_EQ(ember::argwhere(e).sizes(), (L{0, 2}));
  EXPECT_EQ(ember::combinations(ember::ones({0})).sizes(), (L{0, 2}));
  EXPECT_EQ(ember::vander(ember::ones({0})).sizes(), (L{0, 0}));
  EXPECT_EQ(ember::cov(ember::ones({2, 0})).sizes(), (L{2, 2}));
  EXPECT_EQ(ember::channel_shuffle(ember::ones({0, 4, 2}), 2).sizes(), (L{0, 4, 2}));
  EXPECT_EQ(ember::reflection_pad2d(ember::ones({0, 1, 3, 3}), {1, 1, 1, 1}).sizes(), (L{0, 1, 5, 5}));
  EXPECT_EQ(ember::max_unpool2d(ember::ones({0, 1, 2, 2}), ember::zeros({0, 1, 2, 2}, ember::kLong), {4, 4}).sizes(),
            (L{0, 1, 4, 4}));
  EXPECT_EQ(ember::multinomial(ember::ones({0, 3}), 2).sizes(), (L{0, 2}));
  EXPECT_EQ(ember::poisson(ember::ones({0})).numel(), 0);
}

TEST(AtenTail2, QueriesAndAliases) {
  Tensor t = ember::ones({2, 3});
  EXPECT_EQ(t.get_device(), -1);
  EXPECT_FALSE(t.has_names());
  EXPECT_TRUE(t.has_storage());
  EXPECT_FALSE(t.is_meta());
  EXPECT_FALSE(t.is_pinned());
  EXPECT_FALSE(t.is_distributed());
  EXPECT_FALSE(ember::is_distributed(t));
  EXPECT_TRUE(t.is_variable());
  EXPECT_FALSE(t.is_xla() || t.is_hip() || t.is_xpu() || t.is_lazy() || t.is_metal() || t.is_ve() || t.is_ipu() ||
               t.is_hpu() || t.is_ort());
  EXPECT_TRUE(t.is_alias_of(t.view({3, 2})));
  EXPECT_TRUE(ember::alias(t).is_alias_of(t));
  EXPECT_FALSE(t.is_alias_of(t.clone()));
  EXPECT_FALSE(ember::as_strided_copy(t, {2}, {1}).is_alias_of(t));
  EXPECT_EQ(ember::lift_fresh_copy(t).is_alias_of(t), false);
  Tensor s = t.new_empty_strided({2, 2}, {1, 2});
  EXPECT_EQ(s.strides(), (L{1, 2}));
  EXPECT_EQ(s.dtype(), ember::kFloat);
  EXPECT_EQ(t.new_empty_strided({2}, {1}, ember::kLong).dtype(), ember::kLong);
  Tensor r = ember::ones({4});
  ember::resize_as_(r, t);
  EXPECT_EQ(r.sizes(), t.sizes());
  EXPECT_EQ(ember::resize_as(ember::ones({2}), t).sizes(), t.sizes());
  Tensor v = ember::arange(6).to(ember::kFloat);
  ember::as_strided_(v, {2, 2}, {1, 2}, 1);
  EXPECT_EQ(v.sizes(), (L{2, 2}));
  EXPECT_EQ(v[1][0].item<double>(), 2);
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
