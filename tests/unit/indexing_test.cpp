// Indexing and joining ops: semantics on small hand-checked cases, and bad input (the op's name
// and PyTorch's words in the error, nothing written before the error).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ember/ember.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;
using indexing::Ellipsis;
using indexing::None;
using indexing::Slice;

namespace {

template <class T = int64_t>
std::vector<T> values(const Tensor& t) {
  Tensor c = t.contiguous();
  const T* p = c.data_ptr<T>();
  return std::vector<T>(p, p + c.numel());
}

std::vector<int64_t> shape(const Tensor& t) { return t.sizes().vec(); }

Tensor arange_long(int64_t n) { return arange(n); }


}  // namespace

// ---- cat / stack ------------------------------------------------------------------------------

TEST(Cat, JoinsAlongDimAndPromotes) {
  Tensor a = arange_long(6).view({2, 3}), b = arange_long(3).view({1, 3});
  Tensor r = cat({a, b});
  EXPECT_EQ(shape(r), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(values(r), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 0, 1, 2}));
  Tensor c = cat({a, a}, -1);
  EXPECT_EQ(values(c), (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  Tensor f = cat({a, full({2, 1}, 0.5)}, 1);
  EXPECT_EQ(f.dtype(), kFloat);
  EXPECT_EQ(values<float>(f), (std::vector<float>{0, 1, 2, 0.5, 3, 4, 5, 0.5}));
  // a 1-D empty tensor is skipped whatever its shape, but takes part in promotion
  Tensor skipped = cat({a, empty({0}, kDouble)}, 1);
  EXPECT_EQ(skipped.dtype(), kDouble);
  EXPECT_EQ(shape(skipped), (std::vector<int64_t>{2, 3}));
}

// The contiguous inputs of out's dtype are copied as blocks of each output row: blocks that end
// in a partial vector, blocks over 4 KB, beside inputs that need a view copy (transposed, another
// dtype); and the few long rows of a cat along dim 0, which the threads split.
TEST(Cat, RowBlocksOfEveryKind) {
  const Tensor a = rand({5, 37}), b = rand({5, 1100}), c = rand({3, 5}).t(), i = arange_long(10).view({5, 2});
  const Tensor r = cat({a, b, c, i}, 1);
  ASSERT_EQ(shape(r), (std::vector<int64_t>{5, 1142}));
  EXPECT_TRUE(r.narrow(1, 0, 37).equal(a));
  EXPECT_TRUE(r.narrow(1, 37, 1100).equal(b));
  EXPECT_TRUE(r.narrow(1, 1137, 3).equal(c));
  EXPECT_TRUE(r.narrow(1, 1140, 2).equal(i.to(kFloat)));
  const Tensor x = rand({700001}), y = rand({3, 200000}).to(kBFloat16).to(kFloat).flatten();
  const Tensor z = cat({x, y, x.narrow(0, 5, 99)});
  ASSERT_EQ(z.numel(), 1300100);
  EXPECT_TRUE(z.narrow(0, 0, 700001).equal(x));
  EXPECT_TRUE(z.narrow(0, 700001, 600000).equal(y));
  EXPECT_TRUE(z.narrow(0, 1300001, 99).equal(x.narrow(0, 5, 99)));
}

TEST(Cat, StackAddsADim) {
  Tensor a = arange_long(3), b = arange_long(3).add(10);
  EXPECT_EQ(values(stack({a, b})), (std::vector<int64_t>{0, 1, 2, 10, 11, 12}));
  Tensor s = stack({a, b}, 1);
  EXPECT_EQ(shape(s), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values(s), (std::vector<int64_t>{0, 10, 1, 11, 2, 12}));
  Tensor scalars = stack({full({}, 1), full({}, 2)});
  EXPECT_EQ(values(scalars), (std::vector<int64_t>{1, 2}));
}

TEST(Cat, OutIsResizedAndCast) {
  Tensor out = empty({0}, kDouble);
  Tensor& r = cat_out(out, {arange_long(2), arange_long(3)});
  EXPECT_TRUE(r.is_same(out));
  EXPECT_EQ(values<double>(out), (std::vector<double>{0, 1, 0, 1, 2}));
}

TEST(Cat, BadInput) {
  Tensor a = zeros({2, 3});
  EXPECT_ERROR(cat(std::vector<Tensor>{}), "cat", "expected a non-empty list of Tensors");
  EXPECT_ERROR(cat({a, zeros({})}), "cat", "zero-dimensional tensor (at position 1) cannot be concatenated");
  EXPECT_ERROR(cat({a, zeros({2})}), "cat", "Tensors must have same number of dimensions: got 2 and 1");
  EXPECT_ERROR(cat({a, zeros({2, 4})}), "cat",
               "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for tensor number 1");
  EXPECT_ERROR(cat({a, a}, 2), "cat", "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  EXPECT_ERROR(stack(std::vector<Tensor>{}), "stack", "non-empty TensorList");
  EXPECT_ERROR(stack({a, zeros({3, 2})}), "stack",
               "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [3, 2] at entry 1");
}

TEST(Cat, OutIsUntouchedOnError) {
  Tensor out = full({4, 3}, 7);
  EXPECT_ERROR(cat_out(out, {zeros({2, 3}), zeros({2, 3})}), "cat_out",
               "input types can't be cast to the desired output type Long");
  EXPECT_EQ(values(out), std::vector<int64_t>(12, 7));
  Tensor f = full({4, 3}, 7.0);
  EXPECT_ERROR(cat_out(f, {f.narrow(0, 0, 2), zeros({2, 3})}), "cat_out", "refer to a single memory location");
  EXPECT_EQ(values<float>(f), std::vector<float>(12, 7));
  Tensor expanded = zeros({1}).expand({6});
  EXPECT_ERROR(cat_out(expanded, {zeros({3}), zeros({3})}), "cat_out",
               "more than one element of the written-to tensor refers to a single memory location");
  EXPECT_ERROR(cat_out(f, {zeros({2, 3}), zeros({2, 4})}), "cat_out", "Sizes of tensors must match");
  EXPECT_EQ(shape(f), (std::vector<int64_t>{4, 3}));
}

// ---- index_select / gather / scatter / index_add -----------------------------------------------

TEST(IndexSelect, PicksRows) {
  Tensor x = arange_long(12).view({3, 4});
  EXPECT_EQ(values(x.index_select(0, tensor({2, 0, 2}))), (std::vector<int64_t>{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(values(x.index_select(1, tensor({3, 1}).to(kInt))), (std::vector<int64_t>{3, 1, 7, 5, 11, 9}));
  EXPECT_EQ(values(x.t().index_select(0, tensor({1}))), (std::vector<int64_t>{1, 5, 9}));
  EXPECT_EQ(shape(x.index_select(0, full({}, 1))), (std::vector<int64_t>{1, 4}));
}

TEST(IndexSelect, BadInput) {
  Tensor x = zeros({3, 4});
  EXPECT_ERROR(x.index_select(0, tensor({0, 5})), "index_select", "index 5 is out of bounds for dimension 0 with size 3");
  EXPECT_ERROR(x.index_select(1, tensor({-1})), "index_select", "index -1 is out of bounds for dimension 1 with size 4");
  EXPECT_ERROR(x.index_select(0, tensor({0.0})), "index_select", "Expected dtype int32 or int64 for index");
  EXPECT_ERROR(x.index_select(0, tensor({{0}})), "index_select", "Index is supposed to be a vector");
  EXPECT_ERROR(x.index_select(2, tensor({0})), "index_select", "Dimension out of range");
}

TEST(Gather, FollowsTheIndexAlongDim) {
  Tensor x = tensor({{1, 2}, {3, 4}});
  EXPECT_EQ(values(x.gather(1, tensor({{0, 0}, {1, 0}}))), (std::vector<int64_t>{1, 1, 4, 3}));
  EXPECT_EQ(values(x.gather(0, tensor({{1, 0}}))), (std::vector<int64_t>{3, 2}));
}

// The range checks (index_select's on vectors before it reads; gather's as it reads, four
// values per test): a bad value is found wherever it sits in a long run (vector or group body,
// or tail), for int64 and int32 indices, and valid runs pass; gather from a contiguous source and
// from a strided one (another loop).
TEST(Gather, RangeCheckFindsABadIndexAnywhereInALongRun) {
  for (const Tensor& x : {arange(40.0).view({1, 40}), arange(80.0).view({40, 2}).t().narrow(0, 1, 1)}) {
    for (int64_t len : {1, 7, 8, 16, 17, 100}) {
      for (int64_t pos : {int64_t{0}, len / 2, len - 1}) {
        for (int64_t bad : {int64_t{40}, int64_t{-1}, int64_t{1} << 40}) {
          Tensor idx = arange(len).remainder(40).view({1, len});
          idx.view({len})[pos].fill_(bad);
          const std::string value = std::to_string(bad);
          EXPECT_ERROR(x.gather(1, idx), "gather", "index " + value + " is out of bounds for dimension 1 with size 40");
          if (bad < (int64_t{1} << 31)) {
            EXPECT_ERROR(x.index_select(1, idx.view({len}).to(kInt)), "index_select",
                         "index " + value + " is out of bounds for dimension 1 with size 40");
          }
        }
      }
      Tensor ok = arange(len).remainder(40).view({1, len});
      const Tensor want = x.contiguous().view({40}).index_select(0, ok.view({len})).view({1, len});
      EXPECT_EQ(values<float>(x.gather(1, ok)), values<float>(want));
      EXPECT_EQ(values<float>(x.index_select(1, ok.view({len}).to(kInt))), values<float>(want));
    }
  }
}

// Gathering along the rows of a transposed matrix (rows adjacent in memory, the dim strided by
// 256 bytes or more) takes a cache line of rows at a time from a copy of the lines they read
// (indexing_kernels.cpp): the same values as from the contiguous copy over element sizes, a
// last block of fewer rows, fewer positions than the dim and 2 threads; a bad index in any row
// raises the same error.
TEST(Gather, AlongTheRowsOfATransposedSource) {
  const int threads = get_num_threads();
  manual_seed(7);
  for (ScalarType dt : {kFloat, kLong, kHalf, kDouble, kComplexDouble, kByte}) {
    for (int64_t len : {300, 180}) {
      for (int n : {1, 2}) {
        SCOPED_TRACE(std::string(to_string(dt)) + " len " + std::to_string(len) + " threads " + std::to_string(n));
        set_num_threads(n);
        const Tensor x = randint(0, 100, {300, 150}).to(dt).t();  // 150 rows of 300, row stride 1
        const Tensor idx = randint(0, 300, {150, len});
        EXPECT_TRUE(equal(x.gather(1, idx), x.contiguous().gather(1, idx)));
        Tensor bad = idx.clone();
        bad.index_put_({70, len - 1}, 300);
        EXPECT_ERROR(x.gather(1, bad), "gather", "index 300 is out of bounds for dimension 1 with size 300");
      }
    }
  }
  set_num_threads(threads);
}

TEST(Gather, BadInput) {
  Tensor x = zeros({3, 4});
  EXPECT_ERROR(x.gather(0, tensor({{0, 5}})), "gather", "index 5 is out of bounds for dimension 0 with size 3");
  EXPECT_ERROR(x.gather(0, tensor({{0, -1}})), "gather", "index -1 is out of bounds for dimension 0 with size 3");
  // an index of self's shape but along dim (the loop without an iterator)
  EXPECT_ERROR(x.gather(0, tensor({{0, 1, 2, 0}, {2, 2, 3, 1}})), "gather",
               "index 3 is out of bounds for dimension 0 with size 3");
  EXPECT_ERROR(x.gather(1, tensor({{0, 1}, {2, -2}, {3, 3}})), "gather",
               "index -2 is out of bounds for dimension 1 with size 4");
  EXPECT_ERROR(x.gather(0, tensor({{0}}).to(kInt)), "gather", "Expected dtype int64 for index");
  EXPECT_ERROR(x.gather(0, tensor({0})), "gather", "Index tensor must have the same number of dimensions as input tensor");
  EXPECT_ERROR(x.gather(0, zeros({3, 5}, kLong)), "gather",
               "Size does not match at dimension 1 expected index [3, 5] to be smaller than self [3, 4] apart from "
               "dimension 0");
}

TEST(Scatter, WritesAndAdds) {
  Tensor self = zeros({2, 3}, kLong);
  Tensor idx = tensor({{1, 0, 1}});
  Tensor src = tensor({{5, 6, 7}});
  EXPECT_EQ(values(self.scatter(0, idx, src)), (std::vector<int64_t>{0, 6, 0, 5, 0, 7}));
  EXPECT_EQ(values(self.scatter(0, idx, 9)), (std::vector<int64_t>{0, 9, 0, 9, 0, 9}));
  Tensor dup = tensor({{0, 0, 0}});
  EXPECT_EQ(values(self.scatter_add(1, dup, src)), (std::vector<int64_t>{18, 0, 0, 0, 0, 0}));
  EXPECT_EQ(values(self), std::vector<int64_t>(6, 0));  // out of place
  const uint32_t v = self.impl()->storage()->version();
  Tensor& r = self.scatter_(1, tensor({{2}, {1}}), tensor({{1}, {2}}));
  EXPECT_TRUE(r.is_same(self));
  EXPECT_EQ(values(self), (std::vector<int64_t>{0, 0, 1, 0, 2, 0}));
  EXPECT_GT(self.impl()->storage()->version(), v);
  self.scatter_add_(1, tensor({{2, 2}}), tensor({{10, 20}}));
  EXPECT_EQ(values(self), (std::vector<int64_t>{0, 0, 31, 0, 2, 0}));
}

TEST(Scatter, BadInputWritesNothing) {
  Tensor self = zeros({3, 4});
  Tensor src = ones({3, 4});
  EXPECT_ERROR(self.scatter_(0, tensor({{0, 1, 2, 3}}), src), "scatter_",
               "index 3 is out of bounds for dimension 0 with size 3");
  EXPECT_ERROR(self.scatter_add_(1, tensor({{0, 1, 9}}), src), "scatter_add_",
               "index 9 is out of bounds for dimension 1 with size 4");
  EXPECT_EQ(values<float>(self), std::vector<float>(12, 0));  // the valid indices were not written either
  EXPECT_ERROR(self.scatter(0, tensor({{0}}), ones({1, 1}, kDouble)), "scatter", "Expected self.dtype to be equal to src.dtype");
  EXPECT_ERROR(self.scatter(0, tensor({{0}}).to(kInt), src), "scatter", "Expected dtype int64 for index");
  EXPECT_ERROR(self.scatter(0, zeros({3, 5}, kLong), ones({3, 5})), "scatter",
               "Expected index [3, 5] to be smaller than self [3, 4] apart from dimension 0 and to be smaller size than "
               "src [3, 5]");
  EXPECT_ERROR(self.scatter(0, zeros({2, 2}, kLong), ones({1, 2})), "scatter", "to be smaller size than src [1, 2]");
  Tensor expanded = zeros({4}).expand({3, 4});
  EXPECT_ERROR(expanded.scatter_(0, zeros({1, 1}, kLong), 1.0), "scatter_",
               "more than one element of the written-to tensor refers to a single memory location");
  EXPECT_ERROR(self.scatter_(0, zeros({1, 1}, kLong), self), "scatter_", "refer to a single memory location");
}

// scatter and scatter_add check their index as the kernel writes their copy of self: a bad value is
// found wherever it sits, in each of the kernel's walks (along rows or columns, positions two at a
// time or one, scatter_add's row adds), and self is left as it was.
TEST(Scatter, OutOfPlaceFindsABadIndexAsItWrites) {
  for (int64_t dim : {0, 1}) {
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{5, 7}, std::vector<int64_t>{1, 9},
                                              std::vector<int64_t>{9, 1}, std::vector<int64_t>{20, 17}}) {
      const Tensor self = zeros(shape), src = ones(shape);
      for (int64_t bad : {shape[dim], int64_t{-1}}) {
        for (int64_t pos : {int64_t{0}, shape[0] * shape[1] / 2, shape[0] * shape[1] - 1}) {
          Tensor idx = zeros(shape, kLong);
          idx.view({-1})[pos].fill_(bad);
          const std::string what =
              "index " + std::to_string(bad) + " is out of bounds for dimension " + std::to_string(dim) +
              " with size " + std::to_string(shape[dim]);
          EXPECT_ERROR(self.scatter(dim, idx, src), "scatter", what);
          EXPECT_ERROR(self.scatter(dim, idx, 2.0), "scatter", what);
          EXPECT_ERROR(self.scatter_add(dim, idx, src), "scatter_add", what);
          EXPECT_ERROR(self.scatter_add(dim, idx, src.expand(shape)), "scatter_add", what);
        }
        if (dim == 0) {  // one index value for a whole row: scatter_add adds rows
          Tensor rows = zeros({shape[0], 1}, kLong);
          rows[shape[0] - 1].fill_(bad);
          EXPECT_ERROR(self.scatter_add(0, rows.expand(shape), src), "scatter_add",
                       "index " + std::to_string(bad) + " is out of bounds for dimension 0 with size " +
                           std::to_string(shape[0]));
        }
      }
      EXPECT_EQ(values<float>(self), std::vector<float>(static_cast<size_t>(shape[0] * shape[1]), 0));
      const Tensor ok = zeros(shape, kLong);
      EXPECT_EQ(values<float>(self.scatter_add(dim, ok, src).sum()), std::vector<float>{float(shape[0] * shape[1])});
    }
  }
}

TEST(IndexAdd, AddsScaledSlices) {
  Tensor self = zeros({3, 2}, kLong);
  Tensor r = self.index_add(0, tensor({2, 0, 2}), tensor({{1, 2}, {3, 4}, {5, 6}}), 2);
  EXPECT_EQ(values(r), (std::vector<int64_t>{6, 8, 0, 0, 12, 16}));
  Tensor f = zeros({2, 2});
  f.index_add_(1, tensor({1}).to(kInt), ones({2, 1}), 0.5);
  EXPECT_EQ(values<float>(f), (std::vector<float>{0, 0.5, 0, 0.5}));
}

TEST(IndexAdd, BadInputWritesNothing) {
  Tensor self = zeros({3, 4});
  EXPECT_ERROR(self.index_add_(0, tensor({0, 3}), ones({2, 4})), "index_add_",
               "index 3 is out of bounds for dimension 0 with size 3");
  EXPECT_EQ(values<float>(self), std::vector<float>(12, 0));
  EXPECT_ERROR(self.index_add(0, tensor({{0, 1}}), ones({2, 4})), "index_add", "Index is supposed to be a vector");
  EXPECT_ERROR(self.index_add(0, tensor({0, 1}).to(kShort), ones({2, 4})), "index_add",
               "Expected dtype int32/int64 for index but got: Short");
  EXPECT_ERROR(self.index_add(0, tensor({0, 1}), ones({2, 4}, kDouble)), "index_add",
               "self (Float) and source (Double) must have the same scalar type");
  EXPECT_ERROR(self.index_add(0, tensor({0, 1}), ones({3, 4})), "index_add",
               "Number of indices (2) should be equal to source.size(dim): (3), for dim: 0");
  EXPECT_ERROR(self.index_add(0, tensor({0, 1}), ones({2, 3})), "index_add", "must match the size");
}

// ---- masks -----------------------------------------------------------------------------------

TEST(Masks, MaskedSelectNonzeroOneHot) {
  Tensor x = arange_long(6).view({2, 3});
  Tensor m = tensor({true, false, true});
  EXPECT_EQ(values(x.masked_select(m)), (std::vector<int64_t>{0, 2, 3, 5}));
  Tensor nz = x.nonzero();
  EXPECT_EQ(shape(nz), (std::vector<int64_t>{5, 2}));
  EXPECT_EQ(values(nz), (std::vector<int64_t>{0, 1, 0, 2, 1, 0, 1, 1, 1, 2}));
  EXPECT_EQ(shape(full({}, 3).nonzero()), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(values(one_hot(tensor({0, 2}))), (std::vector<int64_t>{1, 0, 0, 0, 0, 1}));
  EXPECT_EQ(shape(one_hot(empty({0}, kLong), 4)), (std::vector<int64_t>{0, 4}));
}

// masked_select counts the set bytes eight at a time (a uint8 mask's bytes may be any value):
// ragged lengths and every byte value against an element-by-element selection.
TEST(Masks, MaskedSelectRagged) {
  manual_seed(5);
  for (int64_t n : {1, 7, 8, 9, 1003}) {
    const Tensor x = arange_long(n);
    const Tensor bytes = randint(0, 4, {n}, nullptr, TensorOptions().dtype(kByte)) * 85;  // 0, 85, 170, 255
    std::vector<int64_t> want;
    for (int64_t i = 0; i < n; ++i)
      if (bytes[i].item<int64_t>() != 0) want.push_back(i);
    EXPECT_EQ(values(x.masked_select(bytes)), want) << n;
    EXPECT_EQ(values(x.to(kFloat).masked_select(bytes != 0).to(kLong)), want) << n;
  }
}

TEST(Masks, BadInput) {
  Tensor x = zeros({3, 4});
  EXPECT_ERROR(x.masked_select(ones({4})), "masked_select", "expected BoolTensor or ByteTensor for mask");
  EXPECT_ERROR(x.masked_select(ones({5}, kBool)), "masked_select",
               "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 1");
  EXPECT_ERROR(one_hot(tensor({0, 1}).to(kInt)), "one_hot", "one_hot is only applicable to index tensor.");
  EXPECT_ERROR(one_hot(tensor({0, -2}), 3), "one_hot", "Class values must be non-negative.");
  EXPECT_ERROR(one_hot(tensor({0, 2}), 2), "one_hot", "Class values must be smaller than num_classes.");
  EXPECT_ERROR(one_hot(empty({0}, kLong)), "one_hot", "Can not infer total number of classes from empty tensor.");
}

// ---- repeat / flip / roll / tril / triu ------------------------------------------------------

TEST(Rearrange, RepeatFlipRollTri) {
  Tensor x = arange_long(6).view({2, 3});
  EXPECT_EQ(values(tensor({1, 2}).repeat({2, 2})), (std::vector<int64_t>{1, 2, 1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(shape(x.repeat({1, 2, 1})), (std::vector<int64_t>{1, 4, 3}));
  EXPECT_EQ(values(x.flip({0, 1})), (std::vector<int64_t>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(values(x.flip({1})), (std::vector<int64_t>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(values(x.roll({1})), (std::vector<int64_t>{5, 0, 1, 2, 3, 4}));
  EXPECT_EQ(values(x.roll({-1}, {1})), (std::vector<int64_t>{1, 2, 0, 4, 5, 3}));
  EXPECT_EQ(values(x.roll({1, 1}, {0, 1})), (std::vector<int64_t>{5, 3, 4, 2, 0, 1}));
  Tensor sq = arange_long(9).view({3, 3}).add(1);
  EXPECT_EQ(values(sq.tril()), (std::vector<int64_t>{1, 0, 0, 4, 5, 0, 7, 8, 9}));
  EXPECT_EQ(values(sq.triu(1)), (std::vector<int64_t>{0, 2, 3, 0, 0, 6, 0, 0, 0}));
  Tensor t = sq.t();  // in place through a transposed view
  t.tril_(-1);  // keeps t[i][j] = sq[j][i] for j < i: sq's strict upper triangle
  EXPECT_EQ(values(sq), (std::vector<int64_t>{0, 2, 3, 0, 0, 6, 0, 0, 0}));
}

TEST(Rearrange, BadInput) {
  Tensor x = zeros({2, 3});
  EXPECT_ERROR(x.repeat({2}), "repeat",
               "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  EXPECT_ERROR(x.repeat({-1, 1}), "repeat", "Trying to create tensor with negative dimension -2");
  EXPECT_ERROR(x.flip({0, -2}), "flip", "dim 0 appears multiple times in the list of dims");
  EXPECT_ERROR(x.flip({2}), "flip", "Dimension out of range");
  EXPECT_ERROR(x.roll({}, {}), "roll", "`shifts` required");
  EXPECT_ERROR(x.roll({1, 2}), "roll", "shifts and dimensions must align. shifts: 2, dims:0");
  EXPECT_ERROR(x.roll({1}, {0, 1}), "roll", "shifts and dimensions must align. shifts: 1, dims:2");
  EXPECT_ERROR(zeros({3}).tril(), "tril", "at least 2 dimensions");
  Tensor v = zeros({3});
  EXPECT_ERROR(v.triu_(), "triu_", "at least 2 dimensions");
}

// ---- Tensor.index / index_put_ ---------------------------------------------------------------

TEST(TensorIndexing, BasicIndexingIsAView) {
  Tensor x = arange_long(12).view({3, 4});
  Tensor row = x.index({1});
  EXPECT_EQ(values(row), (std::vector<int64_t>{4, 5, 6, 7}));
  Tensor col = x.index({Slice(), 2});
  col.fill_(-1);  // writes through to x
  EXPECT_EQ(values(x), (std::vector<int64_t>{0, 1, -1, 3, 4, 5, -1, 7, 8, 9, -1, 11}));
  EXPECT_EQ(shape(x.index({None, Ellipsis, None})), (std::vector<int64_t>{1, 3, 4, 1}));
  EXPECT_EQ(shape(x.index({"...", Slice(1, None, 2)})), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(x.index({-1, -1}).item<int64_t>(), 11);
  Tensor all = x.index({Ellipsis});
  EXPECT_FALSE(all.is_same(x));
  EXPECT_EQ(all.impl()->storage(), x.impl()->storage());
}

TEST(TensorIndexing, AdvancedIndexing) {
  Tensor x = arange_long(12).view({3, 4});
  EXPECT_EQ(values(x.index({tensor({2, -3})})), (std::vector<int64_t>{8, 9, 10, 11, 0, 1, 2, 3}));
  EXPECT_EQ(values(x.index({tensor({0, 2}), tensor({1, 3})})), (std::vector<int64_t>{1, 11}));
  Tensor above6 = tensor({{false, false, false, false}, {false, false, false, true}, {true, true, true, true}});
  EXPECT_EQ(values(x.index({above6})), (std::vector<int64_t>{7, 8, 9, 10, 11}));
  EXPECT_EQ(shape(x.index({true})), (std::vector<int64_t>{1, 3, 4}));
  EXPECT_EQ(shape(x.index({false})), (std::vector<int64_t>{0, 3, 4}));
  // indices separated by a slice: the indexed dims go first
  Tensor y = arange_long(24).view({2, 3, 4});
  Tensor r = y.index({tensor({0, 1}), Slice(), tensor({1, 2})});
  EXPECT_EQ(shape(r), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(r), (std::vector<int64_t>{1, 5, 9, 14, 18, 22}));
  // broadcasting index tensors
  EXPECT_EQ(shape(y.index({tensor({{0}, {1}}), tensor({0, 2, 1})})), (std::vector<int64_t>{2, 3, 4}));
}

TEST(TensorIndexing, BadInput) {
  Tensor x = zeros({3, 4});
  EXPECT_ERROR(x.index({3}), "index 3 is out of bounds for dimension 0 with size 3");
  EXPECT_ERROR(x.index({0, 0, 0}), "too many indices for tensor of dimension 2");
  EXPECT_ERROR(x.index({Slice(None, None, 0)}), "slice step cannot be zero");
  EXPECT_ERROR(x.index({Slice(None, None, -1)}), "step must be greater than zero");
  EXPECT_ERROR(x.index({Ellipsis, 0, Ellipsis}), "an index can only have a single ellipsis");
  EXPECT_ERROR(indexing::TensorIndex("..x"), "Expected \"...\"");
  EXPECT_ERROR(x.index({tensor({0}).to(kInt)}), "index", "tensors used as indices must be long, byte or bool tensors");
  EXPECT_ERROR(x.index({tensor({0.5})}), "index", "tensors used as indices must be long, byte or bool tensors");
  EXPECT_ERROR(x.index({tensor({5})}), "index", "index 5 is out of bounds for dimension 0 with size 3");
  EXPECT_ERROR(x.index({Ellipsis, tensor({-5})}), "index", "index -5 is out of bounds for dimension 0 with size 4");
  EXPECT_ERROR(x.index({ones({2}, kBool)}), "index",
               "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3, 4] at index 0");
  EXPECT_ERROR(x.index({tensor({0, 1}), tensor({0, 1, 2})}), "index",
               "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]");
  EXPECT_ERROR(ember::index(x, {tensor({0}), tensor({0}), tensor({0})}), "index",
               "too many indices for tensor of dimension 2");
}

TEST(TensorIndexing, IndexPut) {
  Tensor x = zeros({3, 4}, kLong);
  x.index_put_({1}, 5);  // basic index: a fill of the view
  EXPECT_EQ(values(x.index({1})), std::vector<int64_t>(4, 5));
  x.index_put_({Slice(), 0}, tensor({7, 8, 9}));
  EXPECT_EQ(values(x.index({Slice(), 0})), (std::vector<int64_t>{7, 8, 9}));
  x.index_put_({tensor({0, 2}), tensor({3, 3})}, tensor({1, 2}));
  EXPECT_EQ(values(x.index({Slice(), 3})), (std::vector<int64_t>{1, 5, 2}));
  x.index_put_({tensor({{false, false, false, false}, {false, true, true, true}, {false, false, false, false}})}, -1);
  EXPECT_EQ(values(x.index({1})), (std::vector<int64_t>{8, -1, -1, -1}));
  // leading size-1 dims of the value are dropped, as libtorch does
  x.index_put_({tensor({0})}, tensor({{{1, 2, 3, 4}}}));
  EXPECT_EQ(values(x.index({0})), (std::vector<int64_t>{1, 2, 3, 4}));
  Tensor acc = zeros({3}, kLong);
  const uint32_t v = acc.impl()->storage()->version();
  Tensor& r = index_put_(acc, {tensor({0, 0, 2, 0})}, tensor({1, 2, 3, 4}), true);
  EXPECT_TRUE(r.is_same(acc));
  EXPECT_EQ(values(acc), (std::vector<int64_t>{7, 0, 3}));
  EXPECT_GT(acc.impl()->storage()->version(), v);
}

TEST(TensorIndexing, IndexPutBadInputWritesNothing) {
  Tensor x = zeros({3, 4});
  EXPECT_ERROR(x.index_put_({tensor({0, 1, 3})}, ones({4})), "index_put_",
               "index 3 is out of bounds for dimension 0 with size 3");
  EXPECT_EQ(values<float>(x), std::vector<float>(12, 0));
  EXPECT_ERROR(index_put_(x, {tensor({0})}, ones({4}, kDouble)), "index_put_",
               "Index put requires the source and destination dtypes match, got Float for the destination and Double "
               "for the source.");
  EXPECT_ERROR(index_put_(x, {tensor({0, 1})}, ones({3})), "index_put_",
               "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2, 4]");
  EXPECT_ERROR(index_put_(x, {tensor({0})}, x.index({Slice(1, 2)})), "index_put_",
               "refer to a single memory location");
  EXPECT_ERROR(x.index_put_({Slice(), 0}, ones({4})), "expand", "must match the existing size");
  EXPECT_EQ(values<float>(x), std::vector<float>(12, 0));
}

TEST(Indexing, ScatterReduceAndWhereOfCondition) {
  const Tensor x = ones({2, 3});
  const Tensor index = tensor({0, 0, 1}, kLong).view({1, 3});
  const Tensor src = full({1, 3}, 3.0);
  EXPECT_EQ(values<float>(x.scatter(0, index, src, "multiply")), (std::vector<float>{3, 3, 1, 1, 1, 3}));
  EXPECT_EQ(values<float>(x.scatter(0, index, 2.0, "add")), (std::vector<float>{3, 3, 1, 1, 1, 3}));
  Tensor y = x.clone();
  y.scatter_(1, tensor({2, 2}, kLong).view({2, 1}), full({2, 1}, 5.0), "add");
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 1, 6, 1, 1, 6}));
  EXPECT_ERROR(x.scatter(0, index, src, "max"), "scatter", "reduce argument must be either add or multiply, got max");
  EXPECT_ERROR(y.scatter_(0, index, 1.0, "mean"), "scatter_", "reduce argument must be either add or multiply");
  EXPECT_EQ(values<float>(x), std::vector<float>(6, 1));  // the out-of-place forms left x alone
  const Tensor leaf = ones({2, 3}).requires_grad_();
  EXPECT_ERROR(leaf.scatter(0, index, src, "add"), "scatter", "not implemented");
  const std::vector<Tensor> where_true = where(tensor({false, true, true, false}).view({2, 2}));
  ASSERT_EQ(where_true.size(), 2u);
  EXPECT_EQ(values<int64_t>(where_true[0]), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(values<int64_t>(where_true[1]), (std::vector<int64_t>{1, 0}));
}

}  // namespace EMBER_UNITY_FILE
