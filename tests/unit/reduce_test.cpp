// Reductions, scans and sorts: dtype rules, shapes, special values and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ember/ember.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;

namespace {

std::vector<double> values(const Tensor& t) {
  const Tensor d = t.to(kDouble).contiguous();
  return std::vector<double>(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
}
std::vector<int64_t> longs(const Tensor& t) {
  const Tensor d = t.contiguous();
  return std::vector<int64_t>(d.data_ptr<int64_t>(), d.data_ptr<int64_t>() + d.numel());
}

// float64 data, where exact expected values are checked (tensor() of doubles gives float32)
Tensor f64(const TensorInit& init) { return tensor(init, TensorOptions().dtype(kDouble)); }

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST(Reduce, SumDtypes) {
  EXPECT_EQ(sum(tensor({1, 2, 3}, TensorOptions().dtype(kChar))).dtype(), kLong);
  EXPECT_EQ(sum(tensor({true, true, false})).item<int64_t>(), 2);
  EXPECT_EQ(sum(tensor({true, true})).dtype(), kLong);
  EXPECT_EQ(sum(tensor({1.5, 2.5}), kInt).dtype(), kInt);
  EXPECT_EQ(sum(tensor({1.5, 2.5}), kInt).item<int>(), 3);  // the input is cast first, as PyTorch
  EXPECT_EQ(sum(tensor({1, -1}), kBool).item<bool>(), true);
  EXPECT_EQ(sum(tensor({1.0, 2.0}).to(kHalf)).dtype(), kHalf);
  EXPECT_EQ(prod(tensor({3, 4}, TensorOptions().dtype(kShort))).item<int64_t>(), 12);
  // int64 accumulation wraps like PyTorch
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(sum(tensor({big, int64_t{1}})).item<int64_t>(), std::numeric_limits<int64_t>::min());
}

// Outputs over short inner rows take a path without the pairwise tree and the cursor: every row,
// with one kept dim or several (the cursor's walk), in a strided output, equals its own reduction
// over that row alone.
TEST(Reduce, ShortInnerRowsMatchRowByRow) {
  manual_seed(3);
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{7, 300}, {3, 5, 37}, {2, 3, 2, 16}, {9, 1}}) {
    const Tensor x = rand(shape) * 1.8 - 0.9;
    const int64_t last = static_cast<int64_t>(shape.size()) - 1;
    const Tensor rows = x.reshape({-1, shape.back()});
    for (bool is_prod : {false, true}) {
      const Tensor all = is_prod ? x.prod(last) : x.sum(last);
      // a transposed out= result: strided stores
      Tensor out = all.dim() == 2 ? empty({all.size(1), all.size(0)}).t() : all.clone();
      const std::vector<int64_t> dims = {last};
      if (!is_prod && all.dim() == 2) sum_out(out, x, dims);
      const std::vector<double> got = values(all), got_out = values(out);
      for (int64_t r = 0; r < rows.size(0); ++r) {
        const Tensor one = rows[r].unsqueeze(0);  // a single output
        const double want = (is_prod ? one.prod(1) : one.sum(1)).item<float>();
        EXPECT_EQ(got[r], want) << "row " << r << " of " << all.sizes() << (is_prod ? " prod" : " sum");
        if (!is_prod && all.dim() == 2) EXPECT_EQ(got_out[r], want) << "out= row " << r;
      }
    }
  }
}

// Integer max/min (16 bits and wider) and int64 sums run on vectors: rows of every length around
// the vector widths, the type's extremes anywhere in a row, wrapping int64 sums, against a scalar
// loop over each row.
TEST(Reduce, IntegerRowsOnVectors) {
  manual_seed(5);
  for (ScalarType dt : {kShort, kInt, kLong}) {
    for (int64_t n : {1, 3, 4, 8, 15, 16, 17, 31, 32, 33, 64, 65, 100, 257}) {
      Tensor x = randint(-1000, 1000, {5, n}, TensorOptions().dtype(dt));
      // the type's extremes at the first, a middle and the last position of some rows
      const int64_t type_min = dt == kShort ? std::numeric_limits<int16_t>::min()
                               : dt == kInt ? std::numeric_limits<int32_t>::min()
                                            : std::numeric_limits<int64_t>::min();
      const int64_t type_max = dt == kShort ? std::numeric_limits<int16_t>::max()
                               : dt == kInt ? std::numeric_limits<int32_t>::max()
                                            : std::numeric_limits<int64_t>::max();
      x.select(0, 1).select(0, 0).fill_(type_min);
      x.select(0, 2).select(0, n / 2).fill_(type_max);
      x.select(0, 3).select(0, n - 1).fill_(dt == kLong ? type_max : type_min);
      const Tensor rows = x.to(kLong);
      const std::vector<int64_t> mx = longs(x.amax(1).to(kLong)), mn = longs(x.amin(1).to(kLong));
      const std::vector<int64_t> sm = longs(x.sum(1));
      for (int64_t r = 0; r < 5; ++r) {
        const std::vector<int64_t> row = longs(rows[r].contiguous());
        int64_t want_max = row[0], want_min = row[0];
        uint64_t want_sum = 0;  // wraps, as int64 sums do
        for (int64_t v : row) {
          want_max = std::max(want_max, v);
          want_min = std::min(want_min, v);
          want_sum += static_cast<uint64_t>(v);
        }
        EXPECT_EQ(mx[r], want_max) << dt << " n " << n << " row " << r;
        EXPECT_EQ(mn[r], want_min) << dt << " n " << n << " row " << r;
        EXPECT_EQ(sm[r], static_cast<int64_t>(want_sum)) << dt << " n " << n << " row " << r;
      }
    }
  }
}

TEST(Reduce, MeanNeedsFloatingDtype) {
  EXPECT_NE(error_of([] { mean(tensor({1, 2})); }).find("mean: could not infer output dtype. Input dtype must be "
                                                        "either a floating point or complex dtype. Got: Long"),
            std::string::npos);
  EXPECT_NE(error_of([] { mean(tensor({1.0, 2.0}), kInt); }).find("Optional dtype must be either a floating point"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(mean(tensor({1, 2}), kDouble).item<double>(), 1.5);
}

TEST(Reduce, EmptyInputs) {
  const Tensor e = empty({0, 3});
  EXPECT_EQ(sum(e).item<float>(), 0.0f);
  EXPECT_EQ(prod(e).item<float>(), 1.0f);
  EXPECT_TRUE(std::isnan(mean(e).item<float>()));
  EXPECT_TRUE(std::isnan(var(e).item<float>()));
  EXPECT_EQ(values(sum(e, {0})), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(sum(e, {1}).sizes(), IntArrayRef({0}));
  EXPECT_EQ(all(e).item<bool>(), true);
  EXPECT_EQ(any(e).item<bool>(), false);
  EXPECT_EQ(norm(e, INFINITY).item<float>(), 0.0f);
  EXPECT_EQ(values(logsumexp(e, {0})), (std::vector<double>{-kInf, -kInf, -kInf}));
  EXPECT_EQ(amax(e, {1}).sizes(), IntArrayRef({0}));
  EXPECT_EQ(std::get<1>(max(e, 1)).sizes(), IntArrayRef({0}));
}

TEST(Reduce, ExtremesOfEmptyInputsThrow) {
  const Tensor e = empty({0, 3});
  EXPECT_EQ(error_of([&] { max(e); }),
            "max: Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the "
            "'dim' argument.");
  EXPECT_NE(error_of([&] { min(e); }).find("min: Expected reduction dim to be specified"), std::string::npos);
  EXPECT_EQ(error_of([&] { amax(e, {0}); }), "amax: Expected reduction dim 0 to have non-zero size.");
  EXPECT_EQ(error_of([&] { max(e, 0); }), "max: Expected reduction dim 0 to have non-zero size.");
  EXPECT_NE(error_of([&] { argmax(e); }).find("argmax: Expected reduction dim to be specified"), std::string::npos);
  EXPECT_EQ(error_of([&] { kthvalue(e, 1, 0); }), "kthvalue: Expected reduction dim 0 to have non-zero size.");
}

TEST(Reduce, DimsAndKeepdim) {
  const Tensor x = arange(24, TensorOptions().dtype(kFloat)).view({2, 3, 4});
  EXPECT_EQ(sum(x, {0, 2}).sizes(), IntArrayRef({3}));
  EXPECT_EQ(sum(x, {0, 2}, true).sizes(), IntArrayRef({1, 3, 1}));
  EXPECT_EQ(values(sum(x, {-1, 0})), (std::vector<double>{60, 92, 124}));
  EXPECT_EQ(sum(x, IntArrayRef{}).sizes(), IntArrayRef({}));  // an empty list reduces every dim
  EXPECT_EQ(sum(x, IntArrayRef{}).item<float>(), 276.0f);
  EXPECT_EQ(x.sum(1).sizes(), IntArrayRef({2, 4}));           // a single int dim, as libtorch's t.sum(1)
  EXPECT_EQ(values(x.sum({0, 1})), (std::vector<double>{60, 66, 72, 78}));
  EXPECT_EQ(amax(x, {}, true).sizes(), IntArrayRef({1, 1, 1}));
  EXPECT_EQ(argmax(x, std::nullopt, true).sizes(), IntArrayRef({1, 1, 1}));
  EXPECT_EQ(argmax(x).item<int64_t>(), 23);
  EXPECT_EQ(error_of([&] { sum(x, {0, -3}); }), "sum: dim 0 appears multiple times in the list of dims");
  EXPECT_EQ(error_of([&] { sum(x, {3}); }), "sum: Dimension out of range (expected to be in range of [-3, 2], but got 3)");
  EXPECT_NE(error_of([&] { cumsum(x, -4); }).find("cumsum: Dimension out of range"), std::string::npos);
  EXPECT_NE(error_of([&] { sort(x, 3); }).find("sort: Dimension out of range"), std::string::npos);
  // results are fresh tensors, not views (as PyTorch's: _is_view() is False)
  const Tensor m = x.select(0, 1);
  for (const Tensor& r : {x.sum(0), x.sum(), x.max(), x.amax(1), x.mean(), x.sum({0, 2}, true), argmax(x), x.norm(),
                          m.median(), std::get<0>(m.median(1)), std::get<1>(m.median(1)), std::get<0>(m.mode(1)),
                          std::get<1>(m.kthvalue(2, 0)), m.t().reshape({12}), m.sum_to_size({1, 4})})
    EXPECT_FALSE(r.is_view()) << r.sizes();
  EXPECT_TRUE(m.reshape({12}).is_view());          // a reshape that can be a view is one
  EXPECT_TRUE(x.sum_to_size({3, 1}).is_view());     // leading dims summed away: sum_to views, as PyTorch's
}

TEST(Reduce, ZeroDimInputs) {
  const Tensor s = scalar_tensor(2.5);
  EXPECT_EQ(sum(s, {0}).dim(), 0);
  EXPECT_EQ(sum(s, {-1}, true).dim(), 0);
  EXPECT_EQ(std::get<1>(max(s, 0)).item<int64_t>(), 0);
  EXPECT_EQ(cumsum(s, 0).item<float>(), 2.5f);
  EXPECT_EQ(std::get<0>(sort(s, 0)).item<float>(), 2.5f);
  EXPECT_EQ(std::get<0>(topk(s, 1)).item<float>(), 2.5f);
  EXPECT_EQ(std::get<0>(kthvalue(s, 1)).item<float>(), 2.5f);
  EXPECT_TRUE(std::isnan(var(s).item<float>()));
  EXPECT_NE(error_of([&] { sum(s, {1}); }).find("expected to be in range of [-1, 0]"), std::string::npos);
}

TEST(Reduce, TiesGiveTheFirstIndexAndNaNWins) {
  const Tensor t = tensor({1.0, 3.0, 3.0, 2.0, 3.0});
  EXPECT_EQ(std::get<1>(max(t, 0)).item<int64_t>(), 1);
  EXPECT_EQ(argmin(tensor({2.0, 1.0, 1.0})).item<int64_t>(), 1);
  const Tensor n = tensor({1.0, kNaN, 3.0, kNaN});
  EXPECT_EQ(std::get<1>(max(n, 0)).item<int64_t>(), 1);
  EXPECT_EQ(std::get<1>(min(n, 0)).item<int64_t>(), 1);
  EXPECT_TRUE(std::isnan(amax(n).item<double>()));
  EXPECT_TRUE(std::isnan(max(n).item<double>()));
  EXPECT_TRUE(std::isnan(sum(n).item<double>()));
  EXPECT_TRUE(std::isnan(norm(n, INFINITY).item<double>()));
  EXPECT_EQ(norm(n, 0).item<double>(), 4.0);  // NaN is not zero
  // the vectorized paths see NaN in any lane
  Tensor big = zeros({1000, 37});
  big.data_ptr<float>()[777 * 37 + 5] = NAN;
  EXPECT_TRUE(std::isnan(values(amax(big, {0}))[5]));
  EXPECT_FALSE(std::isnan(values(amax(big, {0}))[4]));
  EXPECT_EQ(longs(std::get<1>(max(big, 0)))[5], 777);
}

TEST(Reduce, VarCorrection) {
  const Tensor t = f64({1.0, 2.0, 3.0, 4.0});
  EXPECT_DOUBLE_EQ(var(t).item<double>(), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(t.var(false).item<double>(), 1.25);
  // A correction is an std::optional<int64_t>: a plain integer converts to `unbiased`, as in libtorch.
  using C = std::optional<int64_t>;
  EXPECT_DOUBLE_EQ(var(t, std::nullopt, C(2)).item<double>(), 2.5);
  EXPECT_DOUBLE_EQ(var(t, std::nullopt, 2).item<double>(), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(ember::std(t, std::nullopt, C(0)).item<double>(), std::sqrt(1.25));
  EXPECT_TRUE(std::isinf(var(t, std::nullopt, C(5)).item<double>()));                   // max(0, n - correction) = 0
  EXPECT_TRUE(std::isnan(var(tensor({1.0, 1.0}), std::nullopt, C(3)).item<double>()));  // 0 / 0
  auto [v, m] = var_mean(t, IntArrayRef{0}, 1, true);
  EXPECT_EQ(v.sizes(), IntArrayRef({1}));
  EXPECT_DOUBLE_EQ(m.item<double>(), 2.5);
  EXPECT_EQ(error_of([] { var(tensor({1, 2})); }), "var: std and var only support floating point and complex dtypes");
  EXPECT_EQ(var(tensor({1.0, 2.0}).to(kHalf)).dtype(), kHalf);
}

TEST(Reduce, Norms) {
  const Tensor t = f64({3.0, -4.0, 0.0});
  EXPECT_DOUBLE_EQ(norm(t).item<double>(), 5.0);
  EXPECT_DOUBLE_EQ(norm(t, 1).item<double>(), 7.0);
  EXPECT_DOUBLE_EQ(norm(t, 0).item<double>(), 2.0);
  EXPECT_DOUBLE_EQ(norm(t, INFINITY).item<double>(), 4.0);
  EXPECT_DOUBLE_EQ(norm(t, -INFINITY).item<double>(), 0.0);
  EXPECT_NEAR(norm(t, 3).item<double>(), std::cbrt(91.0), 1e-12);
  EXPECT_DOUBLE_EQ(norm(t, -1).item<double>(), 0.0);  // 1/0 terms make the sum infinite
  EXPECT_DOUBLE_EQ(norm(t, std::nullopt, {0}, true).item<double>(), 5.0);
  EXPECT_EQ(error_of([] { norm(tensor({1, 2})); }),
            "norm: input dtype should be either floating point or complex. Got Long instead.");
}

TEST(Reduce, Logsumexp) {
  EXPECT_NEAR(logsumexp(f64({1.0, 2.0}), {0}).item<double>(), std::log(std::exp(1.0) + std::exp(2.0)), 1e-12);
  EXPECT_NEAR(logsumexp(f64({1000.0, 1000.0}), {0}).item<double>(), 1000 + std::log(2.0), 1e-12);  // stable
  EXPECT_FLOAT_EQ(logsumexp(tensor({1000.0, 1000.0}), {0}).item<float>(), 1000.6931f);
  EXPECT_EQ(logsumexp(tensor({kInf, kInf}), {0}).item<double>(), kInf);
  EXPECT_EQ(logsumexp(tensor({-kInf, -kInf}), {0}).item<double>(), -kInf);
  EXPECT_EQ(logsumexp(tensor({-kInf, 1.0}), {0}).item<double>(), 1.0);
  EXPECT_EQ(logsumexp(tensor({1, 2}), {0}).dtype(), kFloat);  // integers give the default float dtype
  Tensor wide = full({3, 100}, -kInf, TensorOptions().dtype(kFloat));
  wide.data_ptr<float>()[150] = INFINITY;
  EXPECT_EQ(values(logsumexp(wide, {1})), (std::vector<double>{-kInf, kInf, -kInf}));
}

TEST(Reduce, AllAny) {
  EXPECT_EQ(all(tensor({1, 2}, TensorOptions().dtype(kByte))).dtype(), kByte);
  EXPECT_EQ(any(tensor({1, 2}, TensorOptions().dtype(kByte)), 0, true).dtype(), kByte);
  EXPECT_EQ(all(tensor({1, 2}, TensorOptions().dtype(kInt))).dtype(), kBool);
  EXPECT_TRUE(all(tensor({1.0, kNaN})).item<bool>());  // NaN is true
  EXPECT_TRUE(any(tensor({0.0, kNaN})).item<bool>());
  EXPECT_FALSE(all(tensor({1.0, 0.0})).item<bool>());
}

// all/any test each element's bits (sign ignored, NaN nonzero) in byte loops over the inner dim
// and across neighbouring outputs (a transposed input): against element-by-element answers, with
// -0.0 and NaN among the values, rows of every outcome, in every dtype.
TEST(Reduce, AllAnyLayouts) {
  manual_seed(11);
  const ScalarType dtypes[] = {kFloat, kDouble, kHalf, kBFloat16, kInt, kLong, kBool, kByte};
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{37, 45}, {3, 300}}) {
    for (double p_nonzero : {1.0 / 64, 63.0 / 64}) {
      const Tensor u = rand({rows, cols}, TensorOptions().dtype(kDouble));
      Tensor x = where(u < p_nonzero, where(u < p_nonzero / 8, kNaN, 2.0), -0.0);
      for (ScalarType dt : dtypes) {
        Tensor xd = is_floating_type(dt) ? x : where(u < p_nonzero, 2.0, 0.0);
        for (const Tensor& in : {xd.to(dt), xd.to(dt).t().contiguous().t()}) {
          for (int64_t dim : {0, 1}) {
            const Tensor all_got = in.all(dim), any_got = in.any(dim);
            const Tensor ref = in.to(kDouble).contiguous();
            for (int64_t o = 0; o < in.size(1 - dim); ++o) {
              bool all_want = true, any_want = false;
              for (int64_t r = 0; r < in.size(dim); ++r) {
                const double v = dim == 1 ? ref[o][r].item<double>() : ref[r][o].item<double>();
                all_want &= v != 0, any_want |= v != 0;  // NaN != 0
              }
              ASSERT_EQ(all_got[o].item<bool>(), all_want) << dt << " dim " << dim << " output " << o;
              ASSERT_EQ(any_got[o].item<bool>(), any_want) << dt << " dim " << dim << " output " << o;
            }
          }
        }
      }
    }
  }
}

TEST(Reduce, Scans) {
  EXPECT_EQ(cumsum(tensor({1, 2}, TensorOptions().dtype(kChar)), 0).dtype(), kLong);
  EXPECT_EQ(cumprod(tensor({true, true}), 0).dtype(), kLong);
  EXPECT_EQ(longs(cumprod(tensor({true, false, true}), 0)), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(values(cumsum(tensor({1.5, 2.5}), 0, kInt)), (std::vector<double>{1, 3}));
  EXPECT_EQ(values(cumsum(tensor({{1, 2}, {3, 4}}), 0)), (std::vector<double>{1, 2, 4, 6}));
  EXPECT_EQ(values(cumprod(tensor({{1, 2}, {3, 4}}), 1)), (std::vector<double>{1, 2, 3, 12}));
  // int8 results wrap
  EXPECT_EQ(values(cumsum(tensor({100, 100}), 0, kChar)), (std::vector<double>{100, -56}));
}

// Scans of 16-bit floats run in float64 and round each result to float32 and then to the dtype,
// as the float32 scan's results rounded: bit-equal to it in every layout the staged lines take
// (contiguous along the lines or across them, on either side, adjacent or apart, groups of four
// and a rest, lines past the stage's length) and in those it leaves to the element loops.
TEST(Reduce, HalfScansEqualTheFloatScanRounded) {
  for (ScalarType dt : {kHalf, kBFloat16}) {
    for (std::vector<int64_t> shape : std::vector<std::vector<int64_t>>{{7, 33}, {37, 41}, {3, 5, 9}, {2, 700}, {600, 3}}) {
      // magnitudes 2^-12 to 2^12 apart: running sums that float32 would round (the scans add in float64)
      const Tensor x16 = randn(shape).mul(pow(2, randint(-12, 12, shape, TensorOptions().dtype(kFloat)))).to(dt);
      const std::vector<Tensor> layouts = {x16, x16.transpose(0, -1).contiguous().transpose(0, -1),
                                           x16.flip({0}), cat({x16, x16}, -1).narrow(-1, 1, shape.back())};
      for (const Tensor& x : layouts) {
        for (int64_t d = 0; d < x.dim(); ++d) {
          const Tensor xf = x.to(kFloat);
          EXPECT_TRUE(cumsum(x, d).equal(cumsum(xf, d).to(dt))) << dt << " cumsum dim " << d << " " << x.sizes() << x.strides();
          EXPECT_TRUE(cumprod(x.div(4).add(1), d).equal(cumprod(x.div(4).add(1).to(kFloat), d).to(dt)))
              << dt << " cumprod dim " << d << " " << x.sizes();
          const Tensor y = x.clone();  // in place: the output in the input's layout
          y.cumsum_(d);
          EXPECT_TRUE(y.equal(cumsum(xf, d).to(dt))) << dt << " cumsum_ dim " << d << " " << x.sizes() << x.strides();
        }
      }
    }
  }
}

// Integer scans run across neighbouring lines where one side has them side by side and the other
// runs along the lines (a stage transposed in or out): the values of the float64 scan, which is
// exact for these, in every layout on both sides (in place writes the input's layout), int32 input
// (an int64 result) included, lines past the stage's length and groups past its width.
TEST(Reduce, IntegerScansAcrossLayouts) {
  for (ScalarType dt : {kLong, kInt}) {
    for (std::vector<int64_t> shape :
         std::vector<std::vector<int64_t>>{{7, 33}, {37, 41}, {3, 5, 9}, {2, 700}, {600, 3}, {300, 8}, {9, 300}}) {
      const Tensor x0 = randint(-1000, 1000, shape, TensorOptions().dtype(dt));
      const Tensor s0 = randint(0, 2, shape, TensorOptions().dtype(dt)).mul(2).sub(1);  // +-1: exact products
      for (const bool signs : {false, true}) {
        const Tensor base = signs ? s0 : x0;
        const std::vector<Tensor> layouts = {base, base.transpose(0, -1).contiguous().transpose(0, -1),
                                             base.flip({0}), cat({base, base}, -1).narrow(-1, 1, shape.back())};
        for (const Tensor& x : layouts) {
          for (int64_t d = 0; d < x.dim(); ++d) {
            const Tensor xd = x.to(kDouble);
            const Tensor sum = cumsum(x, d);
            EXPECT_EQ(sum.dtype(), kLong);
            EXPECT_TRUE(sum.equal(cumsum(xd, d).to(kLong))) << dt << " cumsum dim " << d << " " << x.sizes() << x.strides();
            if (signs) {
              EXPECT_TRUE(cumprod(x, d).equal(cumprod(xd, d).to(kLong)))
                  << dt << " cumprod dim " << d << " " << x.sizes() << x.strides();
            }
            if (dt == kLong) {
              const Tensor y = x.clone();  // in place: the output in the input's layout
              y.cumsum_(d);
              EXPECT_TRUE(y.equal(cumsum(xd, d).to(kLong))) << "cumsum_ dim " << d << " " << x.sizes() << x.strides();
            }
          }
        }
      }
    }
  }
}

TEST(Reduce, SortOrders) {
  const Tensor t = tensor({3.0, kNaN, 1.0, 3.0, -kInf});
  auto [v, i] = sort(t);
  EXPECT_EQ(longs(i), (std::vector<int64_t>{4, 2, 0, 3, 1}));  // NaN last, ties stable
  auto [vd, id] = sort(t, true, 0, true);
  EXPECT_EQ(longs(id), (std::vector<int64_t>{1, 0, 3, 2, 4}));  // NaN first, ties still in input order
  EXPECT_EQ(longs(argsort(tensor({2, 1, 2, 1}))), (std::vector<int64_t>{1, 3, 0, 2}));
  // -0 ties with 0 (input order kept), in float32, float64 and bfloat16
  for (ScalarType dt : {kFloat, kDouble, kBFloat16}) {
    const Tensor z = tensor({1.0, -0.0, 0.0, kNaN, -1.0, 0.0}).to(dt);
    EXPECT_EQ(longs(argsort(z)), (std::vector<int64_t>{4, 1, 2, 5, 0, 3}));
    EXPECT_EQ(longs(argsort(z, 0, true)), (std::vector<int64_t>{3, 0, 1, 2, 5, 4}));
  }
  // integer extremes, 8 to 64 bits, and bool
  const Tensor big = tensor({std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), int64_t{0},
                             int64_t{-1}});
  EXPECT_EQ(longs(argsort(big)), (std::vector<int64_t>{1, 3, 2, 0}));
  EXPECT_EQ(longs(argsort(big, 0, true)), (std::vector<int64_t>{0, 2, 3, 1}));
  EXPECT_EQ(longs(argsort(tensor({127, -128, 0, -128}).to(kChar))), (std::vector<int64_t>{1, 3, 2, 0}));
  EXPECT_EQ(longs(argsort(tensor({255, 0, 7}).to(kByte), 0, true)), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(longs(argsort(tensor({1, 0, 1, 0}).to(kBool))), (std::vector<int64_t>{1, 3, 0, 2}));
  EXPECT_EQ(longs(argsort(tensor({1, 0, 1, 0}).to(kBool), 0, true)), (std::vector<int64_t>{0, 2, 1, 3}));
  const Tensor cl = rand({2, 3, 4, 5}).contiguous(MemoryFormat::ChannelsLast);
  EXPECT_TRUE(std::get<0>(sort(cl, 1)).is_contiguous(MemoryFormat::ChannelsLast));  // layout kept
}

TEST(Reduce, TopkAndKthvalue) {
  const Tensor t = tensor({5.0, 1.0, kNaN, 4.0, 2.0});
  auto [v, i] = topk(t, 2);
  EXPECT_TRUE(std::isnan(values(v)[0]));
  EXPECT_EQ(longs(i), (std::vector<int64_t>{2, 0}));
  auto [vs, is] = topk(t, 2, -1, false);
  EXPECT_EQ(values(vs), (std::vector<double>{1, 2}));
  EXPECT_EQ(longs(is), (std::vector<int64_t>{1, 4}));
  auto [kv, ki] = kthvalue(t, 3);
  EXPECT_EQ(kv.item<double>(), 4.0);
  EXPECT_EQ(ki.item<int64_t>(), 3);
  EXPECT_EQ(std::get<0>(kthvalue(rand({3, 4}), 2, 1, true)).sizes(), IntArrayRef({3, 1}));
  EXPECT_NE(error_of([&] { topk(t, 6); }).find("topk: selected index k out of range"), std::string::npos);
  EXPECT_NE(error_of([&] { topk(t, -1); }).find("topk: selected index k out of range"), std::string::npos);
  EXPECT_NE(error_of([&] { kthvalue(t, 0); }).find("kthvalue: selected number k out of range for dimension 0"),
            std::string::npos);
}

// topk of a few among many (one pass keeping the best so far) agrees with the stable sort's first
// k: ties by position, NaN the largest, -0 equal to 0, rising and falling lines (every element
// enters, or none after the first k), long lines and short ones, in float32, bfloat16 and int64, k
// up to 16 and beyond, the lines contiguous or transposed.
TEST(Reduce, TopkOfAFewMatchesTheStableSort) {
  const Tensor r = rand({3, 600});
  const std::vector<Tensor> lines = {
      randn({4, 700}),
      r.mul(4).round(),                    // ties
      arange(600.0).view({1, 600}),        // rising
      arange(600.0).neg().view({1, 600}),  // falling
      full({2, 400}, 1.0),                 // all equal
      r.masked_fill(r > 0.9, kNaN).masked_fill(r < 0.05, -0.0).masked_fill(r > 0.85 & r < 0.9, 0.0),
      r.narrow(1, 0, 32).mul(4).round(),  // short lines (up to 128: the same pass), ties
      r.narrow(1, 0, 100).masked_fill(r.narrow(1, 0, 100) > 0.8, kNaN)};
  for (const Tensor& line : lines) {
    for (ScalarType dt : {kFloat, kBFloat16, kLong}) {
      const Tensor x = dt == kLong ? line.nan_to_num(1e6).mul(3).to(kLong) : line.to(dt);
      for (int64_t k : {1, 8, 16, 17}) {
        for (bool largest : {true, false}) {
          auto [v, i] = topk(x, k, 1, largest);
          auto [sv, si] = x.sort(1, largest);
          EXPECT_TRUE(i.equal(si.narrow(1, 0, k))) << dt << " k " << k << " largest " << largest;
          // the same lines laid out transposed (copied a tile of neighbours at a time)
          const Tensor xt = x.t().contiguous().t();
          EXPECT_TRUE(std::get<1>(topk(xt, k, 1, largest)).equal(i)) << dt << " transposed, k " << k;
          EXPECT_TRUE(std::get<1>(xt.sort(1, largest)).equal(si)) << dt << " transposed sort";
          const Tensor g = x.gather(1, i);  // (NaN where the line has NaN)
          EXPECT_TRUE(v.eq(g).logical_or(v.isnan().logical_and(g.isnan())).all().item<bool>()) << dt << " k " << k;
        }
      }
    }
  }
}

// Short lines (up to 128) with AVX-512 go through the selection in vector lanes, eight lines at a
// time: groups of eight and partial groups, every dtype, ties, NaN and -0, int64 lines whose
// values span 2^32 or more (those groups go line by line), lines read in place and transposed,
// each k up to the lane path's 16, against the stable sort.
TEST(Reduce, TopkOfManyShortLinesMatchesTheStableSort) {
  for (int64_t n : {2, 5, 31, 32, 100, 128}) {
    const Tensor r = rand({19, n});
    Tensor x = r.mul(8).round().sub(4);  // ties, both signs
    x = x.masked_fill(r > 0.93, kNaN).masked_fill(r < 0.04, -0.0);
    for (ScalarType dt : {kFloat, kDouble, kHalf, kBFloat16, kInt, kLong, kShort, kChar, kByte, kBool}) {
      Tensor xd = is_floating_type(dt) ? x.to(dt) : x.nan_to_num(7).mul(dt == kBool ? 1 : 1000).to(dt);
      if (dt == kLong) {  // lines 9 to 15 span more than 2^32, the rest are plain
        xd.narrow(0, 9, 7).narrow(1, 0, 1).fill_(std::numeric_limits<int64_t>::min() + 5);
        xd[12][n - 1] = std::numeric_limits<int64_t>::max();
      }
      for (int64_t k : {1, 2, 3, 5, 8, 9, 16}) {
        if (k > n) continue;
        for (bool largest : {true, false}) {
          auto [v, i] = topk(xd, k, 1, largest);
          auto [sv, si] = xd.sort(1, largest);
          EXPECT_TRUE(i.equal(si.narrow(1, 0, k))) << dt << " n " << n << " k " << k << " largest " << largest;
          const Tensor g = xd.gather(1, i);
          const Tensor same = is_floating_type(dt) ? v.eq(g).logical_or(v.isnan().logical_and(g.isnan())) : v.eq(g);
          EXPECT_TRUE(same.all().item<bool>()) << dt << " n " << n << " k " << k;
          const Tensor xt = xd.t().contiguous().t();
          EXPECT_TRUE(std::get<1>(topk(xt, k, 1, largest)).equal(i)) << dt << " transposed, n " << n << " k " << k;
          // along dim 0 of the transpose: the same lines, neighbours next to each other in memory
          EXPECT_TRUE(std::get<1>(topk(xt.t(), k, 0, largest)).equal(i.t())) << dt << " dim 0, n " << n << " k " << k;
        }
      }
    }
  }
}

// Short lines are ordered by rank (every key counted against every other, a few SIMD vectors of
// keys at a time): lines of every length up to past the rank sort's limit (64) and across its
// vector groups, with ties (kept in input order), NaN (last), -0 equal to 0, infinities and the
// int32 and int64 extremes, ascending and descending, against std::stable_sort of the same values.
TEST(Reduce, SortShortLinesByRank) {
  const double inf = std::numeric_limits<double>::infinity();
  const double specials[] = {kNaN, -0.0, 0.0, inf, -inf, 1.0, -1.0};
  for (ScalarType dt : {kFloat, kDouble, kBFloat16, kInt, kLong}) {
    for (int64_t n = 1; n <= 70; ++n) {
      Tensor x = rand({3, n}).mul(12).sub(6).round();  // ties, both signs
      if (is_floating_type(dt)) {
        for (int64_t i = 0; i < n; i += 5) x[i % 3][i] = specials[(i / 5) % 7];
      }
      x = x.to(dt);
      if (dt == kLong && n > 2) {
        x[0][0] = std::numeric_limits<int64_t>::max();
        x[1][1] = std::numeric_limits<int64_t>::min();
      }
      if (dt == kInt && n > 2) {
        x[0][1] = std::numeric_limits<int32_t>::min();
        x[2][2] = std::numeric_limits<int32_t>::max();
      }
      const Tensor xd = x.to(kDouble);
      for (bool descending : {false, true}) {
        auto [v, i] = x.sort(1, descending);
        for (int64_t r = 0; r < 3; ++r) {
          std::vector<int64_t> want(static_cast<size_t>(n));
          for (int64_t j = 0; j < n; ++j) want[static_cast<size_t>(j)] = j;
          auto value = [&](int64_t j) {
            return dt == kLong ? static_cast<double>(x[r][j].item<int64_t>()) : xd[r][j].item<double>();
          };
          std::stable_sort(want.begin(), want.end(), [&](int64_t a, int64_t b) {
            const double p = value(a), q = value(b);
            if (descending) return (std::isnan(p) && !std::isnan(q)) || p > q;
            return (std::isnan(q) && !std::isnan(p)) || p < q;
          });
          for (int64_t j = 0; j < n; ++j) {
            ASSERT_EQ(i[r][j].item<int64_t>(), want[static_cast<size_t>(j)])
                << dt << " n " << n << " row " << r << " at " << j << (descending ? " descending" : "");
          }
          const Tensor g = x[r].index_select(0, i[r]);
          EXPECT_TRUE(v[r].eq(g).logical_or(v[r].isnan().logical_and(g.isnan())).all().item<bool>())
              << dt << " n " << n;
        }
      }
    }
  }
}

TEST(Reduce, SumOut) {
  const Tensor x = tensor({{1.5, 2.5}, {3.5, 4.5}});
  Tensor out = empty({5}, TensorOptions().dtype(kInt));
  sum_out(out, x, {1});  // the out dtype decides: the input is cast to int first, as PyTorch
  EXPECT_EQ(out.sizes(), IntArrayRef({2}));
  EXPECT_EQ(values(out), (std::vector<double>{3, 7}));
  Tensor keep = full({3}, 9.0, TensorOptions().dtype(kHalf));
  EXPECT_EQ(error_of([&] { sum_out(keep, x, {1}, false, kFloat); }),
            "sum_out: Expected out tensor to have dtype Float, but got Half instead");
  EXPECT_EQ(values(keep), (std::vector<double>{9, 9, 9}));  // untouched on error
  EXPECT_THROW(sum_out(keep, x, {2}), Error);
  EXPECT_EQ(values(keep), (std::vector<double>{9, 9, 9}));
  Tensor y = tensor({1.0, 2.0, 3.0});
  sum_out(y, y, {0});  // the result may alias the input
  EXPECT_EQ(y.item<double>(), 6.0);
}

TEST(Reduce, NonContiguousAndThreadedInputs) {
  const Tensor base = arange(12, TensorOptions().dtype(kFloat)).view({3, 4});
  EXPECT_EQ(values(sum(base.t(), {1})), (std::vector<double>{12, 15, 18, 21}));
  EXPECT_EQ(values(sum(base.slice(1, 0, 4, 2), {1})), (std::vector<double>{2, 10, 18}));
  EXPECT_EQ(values(sum(tensor({{1.0}, {2.0}}).expand({2, 3}), {1})), (std::vector<double>{3, 6}));
  // one thread and two threads agree on a long exact integer sum and a float one within rounding
  const Tensor ints = arange(1 << 20, TensorOptions().dtype(kInt));
  const Tensor ones_f = ones({1 << 22});
  const int threads = get_num_threads();
  set_num_threads(1);
  const int64_t serial = sum(ints).item<int64_t>();
  const float serial_f = sum(ones_f).item<float>();
  set_num_threads(2);
  EXPECT_EQ(sum(ints).item<int64_t>(), serial);
  EXPECT_EQ(sum(ones_f).item<float>(), serial_f);
  set_num_threads(threads);
  EXPECT_EQ(serial, (int64_t{1} << 20) * ((int64_t{1} << 20) - 1) / 2);
  EXPECT_EQ(serial_f, float(1 << 22));
}

}  // namespace EMBER_UNITY_FILE
