// Views and shape ops: storage sharing (a write through a view is seen in its base), the sizes,
// strides and offsets libtorch gives, and bad input.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;

namespace {

std::vector<int64_t> vec(IntArrayRef a) { return a.vec(); }
using V = std::vector<int64_t>;

std::vector<int64_t> values(const Tensor& t) {
  Tensor c = t.contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

bool shares(const Tensor& a, const Tensor& b) { return a.impl()->storage() == b.impl()->storage(); }

// Geometry of a view: sizes, strides, storage offset.
void expect_view(const Tensor& v, const Tensor& base, V sizes, V strides, int64_t offset) {
  EXPECT_TRUE(shares(v, base));
  EXPECT_EQ(vec(v.sizes()), sizes);
  EXPECT_EQ(vec(v.strides()), strides);
  EXPECT_EQ(v.storage_offset(), offset);
}


}  // namespace

TEST(Views, WritesThroughAViewReachTheBase) {
  Tensor x = arange(24).view({2, 3, 4});
  x.transpose(0, 2).select(0, 1).fill_(-1);  // x[:, :, 1]
  x.slice(1, 0, 3, 2).narrow(2, 3, 1).fill_(-2);  // x[:, 0::2, 3]
  x.diagonal(0, 1, 2).fill_(-3);
  std::vector<int64_t> want = values(arange(24).view({2, 3, 4}));
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 0; c < 4; ++c) {
        int64_t& w = want[a * 12 + b * 4 + c];
        if (c == 1) w = -1;
        if (b % 2 == 0 && c == 3) w = -2;
        if (b == c) w = -3;
      }
  EXPECT_EQ(values(x), want);
  Tensor y = zeros({2, 6}, kLong);
  y.unfold(1, 2, 2).select(2, 0).fill_(1);  // every other column
  y.split(4, 1)[1].fill_(5);
  y.unbind(0)[1].narrow(0, 0, 1).fill_(7);
  EXPECT_EQ(values(y), (V{1, 0, 1, 0, 5, 5, 7, 0, 1, 0, 5, 5}));
  Tensor z = zeros({4}, kLong);
  z.view({2, 2}).t().reshape({4}).select(0, 1).fill_(3);  // reshape of a transposed 2x2 copies
  EXPECT_EQ(values(z), (V{0, 0, 0, 0}));
  z.view({2, 2}).t()[1][0].fill_(3);  // z[0][1] through the transpose
  EXPECT_EQ(values(z), (V{0, 3, 0, 0}));
}

TEST(Views, GeometryMatchesLibtorch) {
  Tensor x = zeros({2, 3, 4});
  expect_view(x.view({6, -1}), x, {6, 4}, {4, 1}, 0);
  expect_view(x.permute({2, 0, 1}), x, {4, 2, 3}, {1, 12, 4}, 0);
  expect_view(x.transpose(0, 2), x, {4, 3, 2}, {1, 4, 12}, 0);
  expect_view(x.movedim({0}, {2}), x, {3, 4, 2}, {4, 1, 12}, 0);
  expect_view(x.select(1, -1), x, {2, 4}, {12, 1}, 8);
  expect_view(x.slice(2, 1, 100, 2), x, {2, 3, 2}, {12, 4, 2}, 1);
  expect_view(x.slice(0, -1), x, {1, 3, 4}, {12, 4, 1}, 12);
  expect_view(x.narrow(1, 1, 2), x, {2, 2, 4}, {12, 4, 1}, 4);
  expect_view(x.expand({5, 2, 3, 4}), x, {5, 2, 3, 4}, {0, 12, 4, 1}, 0);
  Tensor v = zeros({3});
  expect_view(v.expand({1, 1, 3}), v, {1, 1, 3}, {3, 3, 1}, 0);  // new size-1 dims: contiguous strides
  expect_view(v.expand({2, 1, 3}), v, {2, 1, 3}, {0, 3, 1}, 0);
  expect_view(x.unsqueeze(1), x, {2, 1, 3, 4}, {12, 12, 4, 1}, 0);
  expect_view(x.unsqueeze(-1), x, {2, 3, 4, 1}, {12, 4, 1, 1}, 0);
  expect_view(x.unsqueeze(0).squeeze(), x, {2, 3, 4}, {12, 4, 1}, 0);
  expect_view(x.flatten(1), x, {2, 12}, {12, 1}, 0);
  expect_view(x.unflatten(2, {2, -1}), x, {2, 3, 2, 2}, {12, 4, 2, 1}, 0);
  expect_view(x.diagonal(1, 1, 2), x, {2, 3}, {12, 5}, 1);
  expect_view(x.diagonal(-1, 0, 1), x, {4, 1}, {1, 16}, 12);
  expect_view(x.as_strided({2, 2}, {1, 3}, 5), x, {2, 2}, {1, 3}, 5);
  expect_view(x.unfold(2, 3, 1), x, {2, 3, 2, 3}, {12, 4, 1, 1}, 0);
  Tensor m = zeros({3, 5});
  expect_view(m.t(), m, {5, 3}, {1, 5}, 0);
  expect_view(m.mT(), m, {5, 3}, {1, 5}, 0);
  expect_view(v.t(), v, {3}, {1}, 0);
  auto parts = m.chunk(2, 1);
  ASSERT_EQ(parts.size(), 2u);
  expect_view(parts[1], m, {3, 2}, {5, 1}, 3);
  auto rows = m.split_with_sizes({1, 0, 2}, 0);
  ASSERT_EQ(rows.size(), 3u);
  expect_view(rows[2], m, {2, 5}, {5, 1}, 5);
  EXPECT_EQ(rows[1].numel(), 0);
  auto cols = m.unbind(1);
  ASSERT_EQ(cols.size(), 5u);
  expect_view(cols[4], m, {3}, {5}, 4);
  auto b = broadcast_tensors({zeros({3, 1}), zeros({4})});
  EXPECT_EQ(vec(b[0].sizes()), (V{3, 4}));
  EXPECT_EQ(vec(b[0].strides()), (V{1, 0}));
  EXPECT_EQ(vec(b[1].strides()), (V{0, 1}));
  expect_view(broadcast_to(v, {2, 3}), v, {2, 3}, {0, 1}, 0);
}

TEST(Views, ReshapeCopiesOnlyWhenItMust) {
  Tensor x = arange(12).view({3, 4});
  EXPECT_TRUE(shares(x.reshape({4, 3}), x));
  EXPECT_TRUE(shares(x.t().reshape({4, 1, 3}), x));  // splitting a dim is always a view
  Tensor copy = x.t().reshape({12});
  EXPECT_FALSE(shares(copy, x));
  EXPECT_EQ(values(copy), (V{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_TRUE(copy.is_contiguous());
  EXPECT_TRUE(shares(x.slice(1, 0, 4, 2).reshape({6}), x));  // rows of stride 4 = 2 columns of stride 2
  EXPECT_FALSE(shares(x.slice(1, 0, 3).reshape({9}), x));
  EXPECT_TRUE(shares(x.flatten(), x));
  EXPECT_FALSE(shares(x.t().flatten(), x));
  EXPECT_EQ(values(zeros({0, 3}, kLong).reshape({3, 0, 5})).size(), 0u);
}

TEST(Views, DtypeViewsReinterpretBytes) {
  Tensor f = full({2, 2}, 1.0f);
  Tensor i = f.view(kInt);
  EXPECT_TRUE(shares(i, f));
  EXPECT_EQ(i[0][1].item<int64_t>(), 0x3f800000);
  Tensor h = f.view(kShort);  // smaller elements: the last dim grows
  EXPECT_EQ(vec(h.sizes()), (V{2, 4}));
  EXPECT_EQ(vec(h.strides()), (V{4, 1}));
  Tensor d = f.view(kDouble);  // larger elements: the last dim shrinks
  EXPECT_EQ(vec(d.sizes()), (V{2, 1}));
  EXPECT_EQ(vec(d.strides()), (V{1, 1}));
  EXPECT_TRUE(f.view(kFloat).is_same(f));
  EXPECT_ERROR(full({}, 1.0f).view(kShort), "view", "self.dim() cannot be 0 to view Float as Short");
  EXPECT_ERROR(zeros({2, 3}).view(kDouble), "view", "self.size(-1) must be divisible by 2");
  EXPECT_ERROR(zeros({2, 4}).t().view(kDouble), "view", "self.stride(-1) must be 1");
  EXPECT_ERROR(zeros({2, 4}).slice(1, 1, 3).view(kDouble), "view", "self.storage_offset() must be divisible by 2");
  EXPECT_ERROR(zeros({3, 6}, kChar).slice(1, 0, 4).view(kInt), "view", "self.stride(0) must be divisible by 4");
}

// Transposed copies of every word size (the tiled kernels move 16 x 16 blocks of bytes, 8 x 8 blocks
// of 2- and 4-byte words and 4 x 4 blocks of 8-byte words in registers, from rows of 16 bytes or 8
// words on), into a contiguous result
// and into a transposed destination, with edges on both sides, long and short: each element
// checked against its index.
TEST(Views, TransposedCopiesOfEveryWordSize) {
  for (ScalarType dt : {kByte, kHalf, kBFloat16, kShort, kFloat, kInt, kDouble, kLong}) {
    for (auto [r, c] : {std::pair<int64_t, int64_t>{256, 256}, {300, 257}, {33, 1000}, {7, 300}, {1003, 260}, {8, 8},
                        {32, 32}, {9, 13}, {2, 40}, {40, 2}, {3, 8}, {8, 7}, {100, 9}, {5, 4}, {16, 16}, {17, 33}, {31, 48},
                        {16, 15}}) {
      // values i * c + j modulo 256: exact in every dtype
      const Tensor x = remainder(arange(r * c, TensorOptions().dtype(kInt)), 256).to(dt).reshape({r, c});
      const Tensor expected = remainder(arange(c).reshape({c, 1}) + arange(r).reshape({1, r}) * c, 256).to(kInt);
      EXPECT_TRUE(equal(x.t().contiguous().to(kInt), expected)) << dt << " " << r << "x" << c;
      Tensor into = empty({c, r}, TensorOptions().dtype(dt)).t();  // a transposed destination
      into.copy_(x);
      EXPECT_TRUE(equal(into.to(kInt), x.to(kInt))) << dt << " " << r << "x" << c << " into a transposed destination";
    }
  }
}

// A column or a row repeated (expand then contiguous, copy_ from a broadcast source): the
// repeated-element path, for every word size and a complex dtype, against values built by index.
TEST(Views, BroadcastCopiesOfEveryWordSize) {
  for (ScalarType dt : {kBool, kByte, kHalf, kBFloat16, kFloat, kInt, kDouble, kLong, kComplexDouble}) {
    for (auto [r, c] : {std::pair<int64_t, int64_t>{300, 257}, {5, 1000}, {1000, 3}}) {
      const Tensor col = remainder(arange(r, TensorOptions().dtype(kInt)), 7).to(dt).reshape({r, 1});
      const Tensor row = remainder(arange(c, TensorOptions().dtype(kInt)), 5).to(dt).reshape({1, c});
      const Tensor by_row = remainder(arange(r), 7).reshape({r, 1}) + zeros({1, c}, TensorOptions().dtype(kLong));
      const Tensor by_col = remainder(arange(c), 5).reshape({1, c}) + zeros({r, 1}, TensorOptions().dtype(kLong));
      const Tensor a = col.expand({r, c}).contiguous(), b = row.expand({r, c}).contiguous();
      EXPECT_TRUE(a.is_contiguous() && b.is_contiguous());
      EXPECT_TRUE(equal(a.to(kLong), by_row.to(dt).to(kLong))) << dt << " " << r << "x" << c;
      EXPECT_TRUE(equal(b.to(kLong), by_col.to(dt).to(kLong))) << dt << " " << r << "x" << c;
      Tensor into = empty({c, r}, TensorOptions().dtype(dt)).t();  // a transposed destination
      into.copy_(col);
      EXPECT_TRUE(equal(into.to(kLong), by_row.to(dt).to(kLong))) << dt << " " << r << "x" << c << " transposed";
    }
  }
}

TEST(Views, ContiguousMemoryFormats) {
  Tensor x = arange(24).view({1, 2, 3, 4});
  EXPECT_TRUE(x.contiguous().is_same(x));
  Tensor cl = x.contiguous(MemoryFormat::ChannelsLast);
  EXPECT_FALSE(shares(cl, x));
  EXPECT_EQ(vec(cl.strides()), (V{24, 1, 8, 2}));
  EXPECT_EQ(values(cl), values(x));
  EXPECT_TRUE(cl.contiguous(MemoryFormat::ChannelsLast).is_same(cl));
  Tensor back = cl.contiguous();
  EXPECT_EQ(vec(back.strides()), (V{24, 12, 4, 1}));
  EXPECT_ERROR(zeros({2, 3}).contiguous(MemoryFormat::ChannelsLast), "channels_last");
  EXPECT_ERROR(zeros({2, 3, 4, 5}).contiguous(MemoryFormat::ChannelsLast3d), "channels_last_3d");
}

// Transposing copies (the tiled path of copy_) against the element-by-element
// converting copy, in every element width, with sizes that leave partial tiles, in both
// directions (strided source into a contiguous output, contiguous source into a strided one)
// and split across threads.
TEST(Views, TransposingCopiesMatchElementwise) {
  manual_seed(11);
  for (ScalarType dt : {kUInt8, kBFloat16, kFloat, kLong}) {
    for (const V& sizes : {V{3, 37, 301}, V{2, 19, 17, 290}, V{513, 257}}) {
      const Tensor x = (randn(sizes) * 100).to(dt);
      const Tensor tx = sizes.size() == 4 ? x.permute({0, 2, 3, 1}) : x.transpose(-1, -2);
      const Tensor want = empty(tx.sizes(), kDouble).copy_(tx);  // element by element, converting
      EXPECT_TRUE(equal(tx.contiguous().to(kDouble), want)) << dt << " " << x.sizes();
      Tensor into = empty(tx.sizes(), dt).transpose(-1, -2).contiguous().transpose(-1, -2);  // strided
      into.copy_(tx.contiguous());
      EXPECT_TRUE(equal(into.to(kDouble), want)) << dt << " " << x.sizes();
    }
  }
  const Tensor cl = randn({4, 64, 20, 20}).contiguous(MemoryFormat::ChannelsLast);
  EXPECT_TRUE(equal(cl.contiguous(), empty(cl.sizes(), kDouble).copy_(cl).to(kFloat)));
}

TEST(Views, InPlaceViewsChangeTheTensorItself) {
  Tensor x = arange(6).view({2, 3});
  Tensor alias = x;
  Tensor& r = x.transpose_(0, 1);
  EXPECT_TRUE(r.is_same(x));
  EXPECT_EQ(vec(alias.sizes()), (V{3, 2}));  // same TensorImpl
  EXPECT_EQ(vec(x.strides()), (V{1, 3}));
  x.t_();
  EXPECT_EQ(vec(x.strides()), (V{3, 1}));
  x.unsqueeze_(0);
  EXPECT_EQ(vec(x.sizes()), (V{1, 2, 3}));
  x.squeeze_(0);
  EXPECT_EQ(vec(x.sizes()), (V{2, 3}));
  x.unsqueeze_(-1).squeeze_();
  EXPECT_EQ(vec(x.sizes()), (V{2, 3}));
  x.as_strided_({2}, {2}, 1);
  EXPECT_EQ(values(x), (V{1, 3}));
  EXPECT_EQ(x.storage_offset(), 1);
  EXPECT_ERROR(x.as_strided_({2}, {9}), "as_strided", "out of bounds for storage of size 48");
  EXPECT_EQ(vec(x.sizes()), (V{2}));  // unchanged by the failed call
  EXPECT_ERROR(x.transpose_(0, 1), "transpose", "Dimension out of range");
}

TEST(Views, BadInput) {
  Tensor x = zeros({2, 3, 4});
  EXPECT_ERROR(x.transpose(0, 1).view({-1}), "view",
               "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
               "two contiguous subspaces). Use .reshape(...) instead.");
  EXPECT_ERROR(x.view({5, -1}), "view", "shape '[5, -1]' is invalid for input of size 24");
  EXPECT_ERROR(x.view({-1, -1}), "view", "only one dimension can be inferred");
  EXPECT_ERROR(x.reshape({-3, 8}), "reshape", "invalid shape dimension -3");
  EXPECT_ERROR(zeros({0, 3}).view({0, -1}), "view", "cannot reshape tensor of 0 elements into shape [0, -1]");
  EXPECT_ERROR(x.permute({0, 1}), "permute", "input.dim() = 3 is not equal to len(dims) = 2");
  EXPECT_ERROR(x.permute({0, 1, 1}), "permute", "duplicate dims are not allowed.");
  EXPECT_ERROR(x.permute({0, 1, 3}), "permute", "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
  EXPECT_ERROR(x.transpose(0, 3), "transpose", "Dimension out of range");
  EXPECT_ERROR(x.t(), "t", "t() expects a tensor with <= 2 dimensions, but self is 3D");
  EXPECT_ERROR(zeros({3}).mT(), "mT", "Got 1-D tensor.");
  EXPECT_ERROR(x.select(0, 2), "select", "select(): index 2 out of range for tensor of size [2, 3, 4] at dimension 0");
  EXPECT_ERROR(x.select(3, 0), "select", "Dimension out of range");
  EXPECT_ERROR(zeros({}).select(0, 0), "select", "select() cannot be applied to a 0-dim tensor.");
  EXPECT_ERROR(x.slice(0, 0, 2, -1), "slice", "slice step must be positive");
  EXPECT_ERROR(x.slice(0, 0, 2, 0), "slice", "slice step must be positive");
  EXPECT_ERROR(x.narrow(1, 2, 2), "narrow", "start (2) + length (2) exceeds dimension size (3).");
  EXPECT_ERROR(x.narrow(1, 4, 0), "narrow", "Dimension out of range");
  EXPECT_ERROR(x.expand({2, 3, 5}), "expand",
               "The expanded size of the tensor (5) must match the existing size (4) at non-singleton dimension 2.  "
               "Target sizes: [2, 3, 5].  Tensor sizes: [2, 3, 4]");
  EXPECT_ERROR(x.expand({3, 4}), "expand", "the number of sizes provided (2) must be greater or equal");
  EXPECT_ERROR(x.expand({-1, 2, 3, 4}), "expand", "isn't allowed in a leading, non-existing dimension 0");
  EXPECT_ERROR(x.squeeze(3), "squeeze", "Dimension out of range");
  EXPECT_ERROR(x.unsqueeze(4), "unsqueeze", "Dimension out of range (expected to be in range of [-4, 3], but got 4)");
  EXPECT_ERROR(x.flatten(2, 1), "flatten", "start_dim cannot come after end_dim");
  EXPECT_ERROR(x.unflatten(1, {2, 2}), "unflatten", "Provided sizes [2, 2] don't multiply up to the size of dim 1 (3)");
  EXPECT_ERROR(zeros({}).unflatten(0, {1}), "unflatten", "has no dimensions");
  EXPECT_ERROR(x.diagonal(0, 1, 1), "diagonal", "diagonal dimensions cannot be identical 1, 1");
  EXPECT_ERROR(x.as_strided({2, 2}, {12, 1}, 12), "as_strided",
               "requiring a storage size of 104 are out of bounds for storage of size 96");
  EXPECT_ERROR(x.as_strided({2, 2}, {-1, 1}), "as_strided", "Negative strides are not supported");
  EXPECT_ERROR(x.as_strided({2}, {1}, -1), "as_strided", "invalid storage offset -1");
  EXPECT_ERROR(x.as_strided({2, 2}, {1}), "as_strided", "mismatch in length of strides and shape");
  EXPECT_ERROR(x.unfold(2, 5, 1), "unfold", "maximum size for tensor at dimension 2 is 4 but size is 5");
  EXPECT_ERROR(x.unfold(2, 2, 0), "unfold", "step is 0 but must be > 0");
  EXPECT_ERROR(x.split(0, 1), "split", "split_size can only be 0 if dimension size is 0");
  EXPECT_ERROR(x.split_with_sizes({1, 1}, 1), "split_with_sizes", "to sum exactly to 3");
  EXPECT_ERROR(x.chunk(0), "chunk", "chunk expects `chunks` to be greater than 0, got: 0");
  EXPECT_ERROR(zeros({}).unbind(), "unbind", "dimension specified as 0 but tensor has no dimensions");
  EXPECT_ERROR(x.movedim({0, 0}, {1, 2}), "movedim", "repeated dim in `source` ([0, 0])");
  EXPECT_ERROR(x.movedim({0}, {1, 2}), "movedim", "Invalid source or destination dims");
  EXPECT_ERROR(broadcast_tensors({x, zeros({5})}), "broadcast_tensors",
               "The size of tensor a (4) must match the size of tensor b (5) at non-singleton dimension 2");
}

TEST(Views, ZeroDimTensors) {
  Tensor s = full({}, 5);
  EXPECT_EQ(s.view({1, 1}).dim(), 2);
  EXPECT_EQ(s.reshape({-1}).numel(), 1);
  EXPECT_EQ(s.unsqueeze(0).dim(), 1);
  EXPECT_EQ(s.squeeze().dim(), 0);
  EXPECT_EQ(s.flatten().dim(), 1);
  EXPECT_EQ(s.t().dim(), 0);
  EXPECT_EQ(s.mT().dim(), 0);
  EXPECT_EQ(s.movedim({0}, {0}).dim(), 0);
  EXPECT_EQ(s.transpose(0, -1).dim(), 0);
  EXPECT_EQ(vec(s.expand({2, 1}).strides()), (V{0, 0}));
  EXPECT_EQ(vec(s.unfold(0, 1, 1).sizes()), (V{1}));
  EXPECT_TRUE(shares(s.permute({}), s));
}

}  // namespace EMBER_UNITY_FILE
