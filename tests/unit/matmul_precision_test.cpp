// set_float32_matmul_precision: the setting, its error, and what each mode computes for the
// matmul family ("medium": operands rounded to bfloat16, float32 accumulation; otherwise exact).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;

namespace {

// Sets a precision for one test and restores the previous one.
class PrecisionGuard {
 public:
  explicit PrecisionGuard(const std::string& precision) { set_float32_matmul_precision(precision); }
  ~PrecisionGuard() { set_float32_matmul_precision(saved_); }
  PrecisionGuard(const PrecisionGuard&) = delete;
  PrecisionGuard& operator=(const PrecisionGuard&) = delete;

 private:
  std::string saved_ = get_float32_matmul_precision();
};

// ||a - b|| / ||b||, in float64.
double relative_error(const Tensor& a, const Tensor& b) {
  const Tensor b64 = b.to(kDouble);
  return (a.to(kDouble) - b64).norm().item<double>() / b64.norm().item<double>();
}

Tensor rounded_to_bfloat16(const Tensor& t) { return t.to(kBFloat16).to(kDouble); }

// A float32 product with its operands, so it can be recomputed in float64 from any operands.
struct Case {
  const char* name;
  std::vector<Tensor> operands;
  std::function<Tensor(const std::vector<Tensor>&)> run;
  int addend = -1;  // the index of the addend or bias, which "medium" keeps in float32
};

std::vector<Case> cases() {
  manual_seed(0);
  return {
      {"mm", {randn({128, 256}), randn({256, 96})}, [](const auto& x) { return mm(x[0], x[1]); }},
      {"matmul_transposed", {randn({128, 256}), randn({96, 256})}, [](const auto& x) { return matmul(x[0], x[1].t()); }},
      {"bmm", {randn({4, 64, 128}), randn({4, 128, 80})}, [](const auto& x) { return bmm(x[0], x[1]); }},
      {"matmul_broadcast", {randn({96, 128}), randn({3, 128, 64})}, [](const auto& x) { return matmul(x[0], x[1]); }},
      {"addmm", {randn({80}), randn({128, 256}), randn({256, 80})},
       [](const auto& x) { return addmm(x[0], x[1], x[2], 0.5, 2.0); }, 0},
      {"baddbmm", {randn({2, 64, 72}), randn({2, 64, 128}), randn({2, 128, 72})},
       [](const auto& x) { return baddbmm(x[0], x[1], x[2], 0.5, 2.0); }, 0},
      {"linear", {randn({100, 256}), randn({120, 256}), randn({120})},
       [](const auto& x) { return linear(x[0], x[1], x[2]); }, 2},
  };
}

std::vector<Tensor> map(const std::vector<Tensor>& xs, Tensor (*f)(const Tensor&)) {
  std::vector<Tensor> out;
  for (const Tensor& x : xs) out.push_back(f(x));
  return out;
}

}  // namespace

TEST(MatmulPrecision, SetGetAndDefault) {
  EXPECT_EQ(get_float32_matmul_precision(), "highest");
  for (const char* p : {"medium", "high", "highest"}) {
    PrecisionGuard guard(p);
    EXPECT_EQ(get_float32_matmul_precision(), p);
  }
  EXPECT_EQ(get_float32_matmul_precision(), "highest");
}

TEST(MatmulPrecision, UnknownNameRaisesAndKeepsTheSetting) {
  PrecisionGuard guard("medium");
  EXPECT_ERROR(set_float32_matmul_precision("low"), "set_float32_matmul_precision", "\"highest\"", "\"high\"",
               "\"medium\"", "\"low\"");
  EXPECT_ERROR(set_float32_matmul_precision("Highest"), "set_float32_matmul_precision");
  EXPECT_EQ(get_float32_matmul_precision(), "medium");
}

// "medium": the product of the bfloat16-rounded operands accumulated in float32, so within bf16
// tolerance of the exact product and different from the float32 result; on a CPU without
// bfloat16 instructions (or under ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI), the float32 result.
TEST(MatmulPrecision, MediumRoundsOperandsToBFloat16) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Tensor highest = c.run(c.operands);
    Tensor medium;
    {
      PrecisionGuard guard("medium");
      medium = c.run(c.operands);
    }
    ASSERT_EQ(medium.dtype(), kFloat);
    ASSERT_EQ(medium.sizes().vec(), highest.sizes().vec());
    const Tensor exact = c.run(map(c.operands, [](const Tensor& t) { return t.to(kDouble); }));
    EXPECT_LT(relative_error(highest, exact), 1e-6);
    if (!has_bfloat16_instructions()) {  // emulated bfloat16 would be slower: medium computes as highest
      EXPECT_TRUE(medium.equal(highest)) << cpu_kernel_paths();
      continue;
    }
    const double err = relative_error(medium, exact);
    EXPECT_LT(err, 1e-2);
    EXPECT_GT(err, 1e-4) << "medium computed at float32 precision";
    // What it computes: the exact product of the rounded matrices, plus the float32 addend.
    std::vector<Tensor> rounded = map(c.operands, rounded_to_bfloat16);
    if (c.addend >= 0) rounded[c.addend] = c.operands[c.addend].to(kDouble);
    EXPECT_LT(relative_error(medium, c.run(rounded)), 1e-5);
  }
}

TEST(MatmulPrecision, HighestAndHighAreExactAfterMedium) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Tensor before = c.run(c.operands);
    {
      PrecisionGuard guard("medium");
      (void)c.run(c.operands);  // the same shapes' primitives cached in medium mode
    }
    EXPECT_TRUE(c.run(c.operands).equal(before));
    PrecisionGuard guard("high");
    EXPECT_TRUE(c.run(c.operands).equal(before));
  }
}

TEST(MatmulPrecision, OtherDtypesAndSmallProductsIgnoreTheSetting) {
  manual_seed(1);
  const Tensor a = randn({128, 256}), b = randn({256, 96});
  const Tensor small_a = randn({8, 8}), small_b = randn({8, 8});
  const Tensor d = mm(a.to(kDouble), b.to(kDouble)), h = mm(a.to(kHalf), b.to(kHalf));
  const Tensor bf = mm(a.to(kBFloat16), b.to(kBFloat16)), small = mm(small_a, small_b);
  PrecisionGuard guard("medium");
  EXPECT_TRUE(mm(a.to(kDouble), b.to(kDouble)).equal(d));
  EXPECT_TRUE(mm(a.to(kHalf), b.to(kHalf)).equal(h));
  EXPECT_TRUE(mm(a.to(kBFloat16), b.to(kBFloat16)).equal(bf));
  EXPECT_TRUE(mm(small_a, small_b).equal(small));  // below oneDNN's threshold: the float32 loops
}

}  // namespace EMBER_UNITY_FILE
