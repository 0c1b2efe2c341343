// Argument checks of libtorch's remaining ATen functions (issue 26): each bad call raises
// ember::Error naming the op and the offending values, as PyTorch's checks do.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ember/ember.h"
#include "expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

using ember::Tensor;

TEST(AtenTail, UnaryInPlaceNeedsAFloatResultType) {
  Tensor l = ember::arange(5);
  expect_error([&] { ember::acos_(l); }, {"acos_", "can't be cast", "Long"});
  expect_error([&] { l.sinh_(); }, {"sinh_", "Long"});
  expect_error([&] { ember::frac(l); }, {"frac", "not implemented for 'Long'"});
  expect_error([&] { ember::positive(ember::ones({2}, ember::kBool)); }, {"positive", "bool"});
}

TEST(AtenTail, BinaryChecks) {
  Tensor f = ember::ones({3}), l = ember::arange(3);
  expect_error([&] { ember::heaviside(f, l); }, {"heaviside", "different dtypes", "Float", "Long"});
  expect_error([&] { ember::hypot(l, l); }, {"hypot", "Long"});
  expect_error([&] { ember::xlogy_(l, f); }, {"xlogy_", "can't be cast"});
  expect_error([&] { ember::is_nonzero(f); }, {"is_nonzero", "more than one value"});
  expect_error([&] { ember::is_nonzero(ember::ones({0})); }, {"is_nonzero", "no values"});
}

TEST(AtenTail, ShapeChecks) {
  Tensor m = ember::ones({4, 6});
  expect_error([&] { ember::tensor_split(m, 0); }, {"tensor_split", "larger than 0", "0"});
  expect_error([&] { ember::tensor_split(ember::ones({}), 2); }, {"tensor_split", "1-dimensional"});
  expect_error([&] { ember::hsplit(m, 4); }, {"hsplit", "size of the dimension 6", "split_size 4"});
  expect_error([&] { ember::vsplit(ember::ones({4}), 2); }, {"vsplit", "at least 2", "1 dimensions"});
  expect_error([&] { ember::dsplit(m, 2); }, {"dsplit", "at least 3"});
  expect_error([&] { ember::rot90(m, 1, {0}); }, {"rot90", "rotation dims == 2", "1"});
  expect_error([&] { ember::rot90(m, 1, {1, 1}); }, {"rot90", "different", "1"});
  expect_error([&] { ember::rot90(ember::ones({3}), 1); }, {"rot90", "total dims >= 2", "1"});
  expect_error([&] { ember::fliplr(ember::ones({3})); }, {"fliplr", ">= 2-d", "1-d"});
  expect_error([&] { ember::flipud(ember::ones({})); }, {"flipud", ">= 1-d", "0-d"});
  expect_error([&] { ember::diag(ember::ones({2, 2, 2})); }, {"diag", "3-D"});
  expect_error([&] { ember::diag_embed(m, 0, 1, -2); }, {"diag_embed", "identical"});
  expect_error([&] { ember::trace(ember::ones({3})); }, {"trace", "matrix", "1"});
  expect_error([&] { ember::block_diag({ember::ones({2, 2, 2})}); }, {"block_diag", "Input 0 has 3 dimensions"});
  expect_error([&] { ember::meshgrid({ember::ones({2})}, "xz"); }, {"meshgrid", "xz"});
  expect_error([&] { ember::meshgrid({ember::ones({2, 2})}); }, {"meshgrid", "0D or 1D", "2-D", "position 0"});
  expect_error([&] { ember::cartesian_prod({ember::ones({2, 2})}); }, {"cartesian_prod", "1D vector"});
  expect_error([&] { ember::tril_indices(-1, 3); }, {"tril_indices", "row must be non-negative"});
  expect_error([&] { ember::hstack({}); }, {"hstack", "non-empty"});
}

TEST(AtenTailIndexing, Checks) {
  Tensor m = ember::ones({3, 4});
  Tensor idx = ember::tensor(std::vector<int64_t>{0, 2});
  expect_error([&] { ember::take(m, ember::tensor(std::vector<int64_t>{12})); }, {"take", "index 12", "12 elements"});
  expect_error([&] { ember::take(m, ember::ones({2})); }, {"take", "long tensor", "Float"});
  expect_error([&] { ember::take(ember::ones({0}), idx); }, {"take", "empty tensor"});
  expect_error([&] { ember::take_along_dim(m, ember::zeros({3}, ember::kLong), 0); },
               {"take_along_dim", "same number of dimensions", "2", "1"});
  expect_error([&] { ember::index_fill(m, 0, idx.view({1, 2}), 1); }, {"index_fill", "vector", "2-D"});
  expect_error([&] { ember::index_fill(m, 0, ember::ones({2}), 1); }, {"index_fill", "int64", "Float"});
  expect_error([&] { ember::index_copy(m, 0, idx, ember::ones({2, 4}, ember::kDouble)); },
               {"index_copy", "same dtype", "Float", "Double"});
  expect_error([&] { ember::masked_scatter(m, m > 0, ember::ones({5})); },
               {"masked_scatter", "source < number of ones in mask", "5 < 12"});
  expect_error([&] { ember::masked_scatter(m, m, ember::ones({12})); }, {"masked_scatter", "boolean", "Float"});
  expect_error([&] { ember::select_scatter(m, ember::ones({4}), 1, 0); }, {"select_scatter", "[4]", "[3]"});
  expect_error([&] { ember::slice_scatter(m, ember::ones({3, 3}), 1, 0, 2); }, {"slice_scatter", "[3, 3]", "[3, 2]"});
  expect_error([&] { ember::diagonal_scatter(m, ember::ones({4})); }, {"diagonal_scatter", "[4]", "[3]"});
  expect_error([&] { ember::repeat_interleave(m, -1); }, {"repeat_interleave", "negative"});
}

TEST(AtenTailReductions, Checks) {
  Tensor m = ember::ones({3, 4});
  expect_error([&] { ember::nanmean(ember::arange(3)); }, {"nanmean", "floating point", "Long"});
  expect_error([&] { ember::aminmax(ember::ones({0})); }, {"aminmax", "empty"});
  expect_error([&] { ember::median(ember::ones({3, 0}), 1); }, {"median", "dim 1", "non-zero size"});
  expect_error([&] { ember::quantile(m, 1.5); }, {"quantile", "[0, 1]", "1.5"});
  expect_error([&] { ember::quantile(ember::ones({0}), 0.5); }, {"quantile", "non-empty"});
  expect_error([&] { ember::quantile(ember::arange(3), 0.5); }, {"quantile", "float or double"});
  expect_error([&] { ember::quantile(m, 0.5, 0, false, "cubic"); }, {"quantile", "interpolation", "cubic"});
  expect_error([&] { ember::diff(ember::ones({})); }, {"diff", "one-dimensional"});
  expect_error([&] { ember::diff(m, -1); }, {"diff", "non-negative", "-1"});
  expect_error([&] { ember::trapezoid(m, ember::ones({3})); }, {"trapezoid", "one `x` value for each sample"});
  expect_error([&] { ember::renorm(m, 0, 0, 1); }, {"renorm", "non-positive-norm"});
  expect_error([&] { ember::renorm(m, 2, 0, -1); }, {"renorm", "maxnorm", "-1"});
  expect_error([&] { ember::renorm(ember::ones({3}), 2, 0, 1); }, {"renorm", "at least 2 dimensions", "1"});
}

TEST(AtenTailFactories, Checks) {
  expect_error([&] { ember::hann_window(-1); }, {"hann_window", "non-negative", "-1"});
  expect_error([&] { ember::blackman_window(4, ember::kLong); }, {"blackman_window", "floating point", "Long"});
  expect_error([&] { ember::range(0, 1, 0); }, {"range", "nonzero"});
  expect_error([&] { ember::range(0, 1, -1); }, {"range", "inconsistent with step sign"});
  expect_error([&] { ember::logspace(0, 1, -2); }, {"logspace", "non-negative"});
  Tensor t = ember::empty({4});
  expect_error([&] { t.uniform_(2, 1); }, {"uniform_", "from=2", "to=1"});
  expect_error([&] { t.exponential_(0); }, {"exponential_", "lambda", "0"});
  expect_error([&] { t.geometric_(1.5); }, {"geometric_", "(0, 1)", "1.5"});
  expect_error([&] { ember::empty({2}, ember::kLong).normal_(); }, {"normal_", "floating point", "Long"});
}

// sinh, cosh, asinh, acosh and atanh are kernel ops (float32 computed in float64 and rounded once):
// every float32 result is the float64 libm value rounded, whatever its neighbours in a vector (NaN,
// infinities, values past the vector forms' ranges send a vector's lanes to libm in float64), on
// both kernel targets' paths; signed zeros, the domain edges and overflow as libm. The derivative
// nodes are PyTorch's; complex inputs stay complex (std::sinh of std::complex, as libtorch).
TEST(AtenTail, HyperbolicFunctionsRoundOnceAndKeepComplex) {
  std::vector<float> v = {0.f, -0.f, 1e-40f, -1e-40f, 1e-30f, 1e-7f, -1e-7f, 0.5f, -0.5f, 1.f, -1.f, 0.99999994f,
                          -0.99999994f, 1.0000001f, 2.f, 10.f, -10.f, 88.f, 89.f, 89.5f, -89.5f, 100.f, 1e20f, -1e20f,
                          3.4e38f, INFINITY, -INFINITY, NAN};
  for (int i = 0; i < 200; ++i) v.push_back(std::ldexp(1.0f + i * 0.00731f, i % 40 - 20) * (i % 3 ? 1.f : -1.f));
  const Tensor x = ember::tensor(v);
  struct Fn {
    const char* name;
    Tensor (*op)(const Tensor&);
    double (*libm)(double);
    const char* node;
  };
  const Fn fns[] = {{"sinh", ember::sinh, [](double a) { return std::sinh(a); }, "SinhBackward0"},
                    {"cosh", ember::cosh, [](double a) { return std::cosh(a); }, "CoshBackward0"},
                    {"asinh", ember::asinh, [](double a) { return std::asinh(a); }, "AsinhBackward0"},
                    {"acosh", ember::acosh, [](double a) { return std::acosh(a); }, "AcoshBackward0"},
                    {"atanh", ember::atanh, [](double a) { return std::atanh(a); }, "AtanhBackward0"}};
  for (const Fn& f : fns) {
    for (const Tensor& in : {x, x.flip({0}), x.slice(0, 3)}) {  // other neighbours in each vector
      const Tensor y = f.op(in).contiguous();
      const Tensor src = in.contiguous();
      for (int64_t i = 0; i < y.numel(); ++i) {
        const float a = src.data_ptr<float>()[i], got = y.data_ptr<float>()[i];
        const float want = static_cast<float>(f.libm(a));
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(got)) << f.name << "(" << a << ")";
        } else {
          EXPECT_EQ(got, want) << f.name << "(" << a << ")";
          EXPECT_EQ(std::signbit(got), std::signbit(want)) << f.name << "(" << a << ")";
        }
      }
    }
    const Tensor g = (ember::rand({3}) * 0.5 + 1.25).requires_grad_();
    EXPECT_EQ(f.op(g).grad_fn()->name(), f.node);
    const Tensor z = ember::randn({4}, ember::kComplexFloat);
    const Tensor zr = f.op(z);
    EXPECT_EQ(zr.dtype(), ember::kComplexFloat) << f.name;
    EXPECT_TRUE(ember::allclose(ember::real(zr), ember::real(f.op(z.to(ember::kComplexDouble))).to(ember::kFloat)))
        << f.name;
    EXPECT_EQ(f.op(ember::arange(3)).dtype(), ember::kFloat) << f.name;  // integers compute in float
  }
}

// logcumsumexp's derivative (PyTorch's formula, itself built from logcumsumexp) in float64, on
// values close together (the vectorized form) and hundreds apart (the running scan), through
// double backward; and integers compute in the default float dtype.
TEST(AtenTail, LogcumsumexpGradcheck) {
  ember::manual_seed(5);
  for (double scale : {1.0, 400.0}) {
    const Tensor x = (ember::randn({3, 5}, ember::kDouble) * scale).requires_grad_(true);
    auto f = [](const ember::autograd::variable_list& in) { return ember::logcumsumexp(in[0], 1); };
    EXPECT_TRUE(ember::autograd::gradcheck(f, {x})) << scale;
    EXPECT_TRUE(ember::autograd::gradgradcheck(f, {x})) << scale;
  }
  EXPECT_EQ(ember::logcumsumexp(ember::arange(4), 0).dtype(), ember::kFloat);
  EXPECT_ERROR(ember::logcumsumexp(ember::ones({2, 3}, ember::kComplexFloat), 1), "logcumsumexp",
               "not implemented for ComplexFloat");
  EXPECT_ERROR(ember::logcumsumexp(ember::ones({2, 3}), 2), "logcumsumexp", "out of range");
  EXPECT_TRUE(ember::allclose(ember::logcumsumexp(ember::arange(3), 0),
                              ember::log(ember::cumsum(ember::exp(ember::arange(3, ember::kFloat)), 0))));
}

// Empty and zero-size inputs give empty results rather than errors.
TEST(AtenTail, EmptyInputs) {
  Tensor e = ember::ones({0, 3});
  EXPECT_EQ(ember::sinh(e).sizes(), e.sizes());
  EXPECT_EQ(ember::rot90(e).sizes(), ember::IntArrayRef({3, 0}));
  EXPECT_EQ(ember::kron(e, ember::ones({2, 2})).sizes(), ember::IntArrayRef({0, 6}));
  EXPECT_EQ(ember::nansum(e, {0}).sizes(), ember::IntArrayRef({3}));
  EXPECT_EQ(ember::logcumsumexp(e, 0).sizes(), e.sizes());
  EXPECT_EQ(ember::diag_embed(e).sizes(), ember::IntArrayRef({0, 3, 3}));
  EXPECT_EQ(ember::masked_scatter(e, e > 0, ember::ones({0})).sizes(), e.sizes());
  EXPECT_EQ(ember::tensor_split(e, 2).size(), 2u);
  EXPECT_EQ(ember::hann_window(0).numel(), 0);
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
