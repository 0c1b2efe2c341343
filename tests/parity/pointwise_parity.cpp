// Pointwise ops against libtorch: random inputs of many shapes, layouts and dtypes.
#include "parity/parity.h"

using parity::Close;
using parity::random;
using parity::to_torch;

namespace {

const ember::ScalarType kAllTypes[] = {ember::kFloat, ember::kDouble, ember::kHalf, ember::kBFloat16, ember::kByte,
                                       ember::kChar, ember::kShort, ember::kInt, ember::kLong, ember::kBool};

struct ShapePair {
  std::vector<int64_t> a, b;
};
const ShapePair kShapes[] = {
    {{}, {}},           {{7}, {7}},          {{1000}, {1000}}, {{3, 4}, {4}},     {{3, 1}, {1, 5}},
    {{2, 3, 4}, {}},    {{0, 3}, {3}},       {{70000}, {1}},   {{5, 6, 7}, {6, 1}}, {{2, 1, 4, 3}, {5, 1, 1}},
};

}  // namespace

TEST(PointwiseParity, AddSubMulDivBroadcastAllDtypes) {
  uint64_t seed = 1;
  for (ember::ScalarType dt : kAllTypes) {
    for (const auto& s : kShapes) {
      ember::Tensor a = random(s.a, dt, seed++), b = random(s.b, dt, seed++);
      torch::Tensor ta = to_torch(a), tb = to_torch(b);
      EXPECT_TRUE(Close(ember::add(a, b), torch::add(ta, tb))) << "add " << dt;
      EXPECT_TRUE(Close(ember::mul(a, b), torch::mul(ta, tb))) << "mul " << dt;
      if (dt != ember::kBool) {
        EXPECT_TRUE(Close(ember::sub(a, b, 2), torch::sub(ta, tb, 2))) << "sub " << dt;
      }
      if (ember::is_floating_type(dt)) {
        EXPECT_TRUE(Close(ember::div(a, b), torch::div(ta, tb))) << "div " << dt;
        EXPECT_TRUE(Close(ember::add(a, b, 0.5), torch::add(ta, tb, 0.5))) << "add alpha " << dt;
      }
    }
  }
}

TEST(PointwiseParity, MixedDtypesScalarsAndZeroDim) {
  uint64_t seed = 100;
  for (ember::ScalarType da : kAllTypes) {
    for (ember::ScalarType db : kAllTypes) {
      ember::Tensor a = random({3, 4}, da, seed++), b = random({4}, db, seed++), z = random({}, db, seed++);
      torch::Tensor ta = to_torch(a), tb = to_torch(b), tz = to_torch(z);
      EXPECT_TRUE(Close(ember::add(a, b), torch::add(ta, tb))) << da << " + " << db;
      EXPECT_TRUE(Close(ember::mul(a, z), torch::mul(ta, tz))) << da << " * 0-dim " << db;
    }
    ember::Tensor a = random({5}, da, seed++);
    torch::Tensor ta = to_torch(a);
    EXPECT_TRUE(Close(ember::add(a, 3), torch::add(ta, 3))) << da << " + int";
    EXPECT_TRUE(Close(ember::mul(a, 2.5), torch::mul(ta, 2.5))) << da << " * double";
    EXPECT_TRUE(Close(ember::add(a, true), torch::add(ta, true))) << da << " + bool";
  }
}

TEST(PointwiseParity, LayoutsArePreserved) {
  ember::Tensor a = random({2, 3, 5, 4}, ember::kFloat, 7).contiguous(ember::MemoryFormat::ChannelsLast);
  ember::Tensor b = random({2, 3, 5, 4}, ember::kFloat, 8);
  torch::Tensor ta = to_torch(a), tb = to_torch(b);
  ember::Tensor r = ember::add(a, a);
  EXPECT_TRUE(r.is_contiguous(ember::MemoryFormat::ChannelsLast));
  EXPECT_TRUE(Close(r, torch::add(ta, ta)));
  EXPECT_TRUE(Close(ember::mul(a, b), torch::mul(ta, tb)));
  ember::Tensor t = random({6, 9}, ember::kFloat, 9).t();
  ember::Tensor rt = ember::mul(t, 3);
  EXPECT_EQ(rt.strides(), t.strides());
  EXPECT_TRUE(Close(rt, torch::mul(to_torch(t), 3)));
  ember::Tensor sliced = random({10, 12}, ember::kDouble, 10).slice(1, 1, 12, 3);
  EXPECT_TRUE(Close(ember::add(sliced, sliced), torch::add(to_torch(sliced), to_torch(sliced))));
}
