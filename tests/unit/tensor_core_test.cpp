// Tensor metadata, dtypes, promotion, allocation, copies and casts.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "ember/ember.h"

using namespace ember;

TEST(Dtype, HalfRoundTripAndRounding) {
  EXPECT_EQ(Half(1.0f).x, 0x3c00);
  EXPECT_EQ(Half(65504.0f).x, 0x7bff);
  EXPECT_EQ(Half(65520.0f).x, 0x7c00);  // ties to even overflows to inf
  EXPECT_EQ(Half(1.0f + 1.0f / 2048).x, 0x3c00);  // tie: even mantissa kept
  EXPECT_EQ(Half(1.0f + 3.0f / 2048).x, 0x3c02);  // tie: rounds up to even
  EXPECT_EQ(Half(5.9604644775390625e-08f).x, 0x0001);  // smallest subnormal
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(NAN))));
  for (uint32_t b = 0; b < 0x7c00; ++b) {  // every finite positive half survives a round trip
    float f = Half::to_float(static_cast<uint16_t>(b));
    ASSERT_EQ(Half(f).x, b) << b;
  }
}

TEST(Dtype, BFloat16Rounding) {
  EXPECT_EQ(BFloat16(1.0f).x, 0x3f80);
  uint32_t u = 0x3f808000;  // exactly half way between 0x3f80 and 0x3f81: even wins
  float f;
  std::memcpy(&f, &u, 4);
  EXPECT_EQ(BFloat16(f).x, 0x3f80);
  u = 0x3f818000;
  std::memcpy(&f, &u, 4);
  EXPECT_EQ(BFloat16(f).x, 0x3f82);
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(NAN))));
}

TEST(Dtype, PromoteTypes) {
  EXPECT_EQ(promote_types(kByte, kChar), kShort);
  EXPECT_EQ(promote_types(kByte, kLong), kLong);
  EXPECT_EQ(promote_types(kHalf, kBFloat16), kFloat);
  EXPECT_EQ(promote_types(kInt, kHalf), kHalf);
  EXPECT_EQ(promote_types(kBool, kChar), kChar);
  EXPECT_EQ(promote_types(kFloat, kDouble), kDouble);
}

TEST(TensorCore, EmptyHasShapeStridesAndDtype) {
  Tensor t = empty({2, 3, 4});
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.strides(), IntArrayRef({12, 4, 1}));
  EXPECT_EQ(t.dtype(), kFloat);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, 0u);
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_THROW(t.size(3), Error);
}

TEST(TensorCore, ChannelsLast) {
  Tensor t = empty({2, 3, 4, 5}, TensorOptions().memory_format(MemoryFormat::ChannelsLast));
  EXPECT_EQ(t.strides(), IntArrayRef({60, 1, 15, 3}));
  EXPECT_TRUE(t.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.suggest_memory_format(), MemoryFormat::ChannelsLast);
  Tensor c = t.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_THROW(empty({2, 3}).contiguous(MemoryFormat::ChannelsLast), Error);
}

TEST(TensorCore, NegativeAndOverflowingSizesThrow) {
  EXPECT_THROW(empty({2, -1}), Error);
  EXPECT_THROW(empty({int64_t{1} << 40, int64_t{1} << 40}), Error);
}

TEST(TensorCore, FactoriesAndItem) {
  Tensor z = zeros({3});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(z.data_ptr<float>()[i], 0.0f);
  Tensor f = full({2, 2}, 7);
  EXPECT_EQ(f.dtype(), kLong);
  EXPECT_EQ(f[1][1].item<int64_t>(), 7);
  EXPECT_THROW(f.item(), Error);
  EXPECT_THROW(f.data_ptr<float>(), Error);
  EXPECT_EQ(full({}, 2.5).dtype(), kFloat);
  EXPECT_EQ(tensor({1, 2, 3}).dtype(), kLong);
  EXPECT_EQ(tensor({{1.0, 2.0}, {3.0, 4.0}}).sizes(), IntArrayRef({2, 2}));
  EXPECT_THROW(tensor({{1.0, 2.0}, {3.0}}), Error);
}
