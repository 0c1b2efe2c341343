// ember::fx against libtorch: Conv1d/2d/3d and Linear each followed by a BatchNorm in eval mode,
// traced and folded by fx::fuse_conv_bn (and optimize_for_inference), against libtorch's eager
// unfused module with the same parameters and running statistics.
#include "ember/fx.h"
#include "parity/parity.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace enn = ember::nn;
namespace tnn = torch::nn;

namespace {

// Traces `e`, folds it, and compares with libtorch's `t` on x (both in eval mode, running
// statistics moved away from their initial values first).
void expect_folded(enn::Sequential e, tnn::Sequential t, const ember::Tensor& x, size_t folds) {
  for (int i = 0; i < 2; ++i) e->forward(parity::random(x.sizes(), ember::kFloat, 100 + i) * 2.0 + 0.5);
  e->eval();
  t->eval();
  parity::copy_module_state(*e, *t);
  auto gm = ember::fx::symbolic_trace(e, x);
  EXPECT_EQ(ember::fx::fuse_conv_bn(*gm), folds);
  const torch::Tensor want = t->forward(parity::to_torch(x));
  EXPECT_TRUE(parity::Close(gm->forward(x), want, parity::Tol{1e-5, 1e-5}));
  auto gm2 = ember::fx::symbolic_trace(e, x);
  ember::fx::optimize_for_inference(*gm2);
  EXPECT_TRUE(parity::Close(gm2->forward(x), want, parity::Tol{1e-5, 1e-5}));
}

TEST(FxParity, ConvBnFoldingAgainstLibtorchEager) {
  expect_folded(enn::Sequential(enn::Conv1d(enn::Conv1dOptions(3, 5, 3).padding(1)), enn::BatchNorm1d(5), enn::ReLU()),
                tnn::Sequential(tnn::Conv1d(tnn::Conv1dOptions(3, 5, 3).padding(1)), tnn::BatchNorm1d(5), tnn::ReLU()),
                parity::random({4, 3, 9}, ember::kFloat, 1), 1);
  expect_folded(
      enn::Sequential(enn::Conv2d(enn::Conv2dOptions(3, 6, 3).stride(2).bias(false)), enn::BatchNorm2d(6),
                      enn::Conv2d(enn::Conv2dOptions(6, 4, 1).groups(2)), enn::BatchNorm2d(4), enn::Dropout(0.3)),
      tnn::Sequential(tnn::Conv2d(tnn::Conv2dOptions(3, 6, 3).stride(2).bias(false)), tnn::BatchNorm2d(6),
                      tnn::Conv2d(tnn::Conv2dOptions(6, 4, 1).groups(2)), tnn::BatchNorm2d(4), tnn::Dropout(0.3)),
      parity::random({2, 3, 11, 11}, ember::kFloat, 2), 2);
  expect_folded(enn::Sequential(enn::Conv3d(enn::Conv3dOptions(2, 3, 2)), enn::BatchNorm3d(3)),
                tnn::Sequential(tnn::Conv3d(tnn::Conv3dOptions(2, 3, 2)), tnn::BatchNorm3d(3)),
                parity::random({2, 2, 5, 5, 5}, ember::kFloat, 3), 1);
  expect_folded(enn::Sequential(enn::Linear(7, 5), enn::BatchNorm1d(5), enn::Linear(5, 3)),
                tnn::Sequential(tnn::Linear(7, 5), tnn::BatchNorm1d(5), tnn::Linear(5, 3)),
                parity::random({6, 7}, ember::kFloat, 4), 1);
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
