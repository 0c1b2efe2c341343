// The fused pointwise engine (ember/fx/fused.h): parity with the same chain run op by op over many
// chains, shapes (odd sizes, broadcasting, channels_last, non-contiguous, 0-size, 0-dim) and dtypes;
// outputs' dtypes and layouts; gradients (gradcheck, double backward) through fused chains; and
// the errors of bad chains and bad inputs.
#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include "ember/ember.h"
#include "ember/fx/fused.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;  // NOLINT
using fx::FusedArg;
using fx::FusedPointwise;
using fx::FusedStep;

namespace {

std::string dtype_name(ScalarType t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

FusedArg R(int i) { return FusedArg::ref(i); }
FusedArg S(const Scalar& s) { return FusedArg::scalar(s); }

// y = sigmoid(x * a + b) * tanh(x) + relu(c): the benchmark's chain.
FusedPointwise bench_chain() {
  return FusedPointwise(4,
                        {{"mul", {R(0), R(1)}},
                         {"add", {R(4), R(2), S(1)}},
                         {"sigmoid", {R(5)}},
                         {"tanh", {R(0)}},
                         {"mul", {R(6), R(7)}},
                         {"relu", {R(3)}},
                         {"add", {R(8), R(9)}}},
                        {10});
}

struct Chain {
  const char* name;
  int num_inputs;
  std::vector<FusedStep> steps;
  std::vector<int> outputs;
  bool exact;  // only ops whose eager results the fused ones equal bit for bit
};

// Chains of two inputs (x, y), covering every op family.
std::vector<Chain> chains() {
  return {
      {"arith", 2, {{"add", {R(0), R(1), S(2)}}, {"mul", {R(2), R(0)}}, {"sub", {R(3), S(0.5), S(3)}}, {"neg", {R(4)}}},
       {5}, true},
      {"relu_where", 2,
       {{"gt", {R(0), R(1)}}, {"relu", {R(1)}}, {"where", {R(2), R(0), R(3)}}, {"maximum", {R(4), R(1)}},
        {"minimum", {R(5), R(0)}}, {"abs", {R(6)}}},
       {7}, true},
      {"clamp", 2,
       {{"clamp", {R(0), S(-0.5), S(0.75)}}, {"clamp", {R(1), R(0), R(2)}}, {"clamp_min", {R(3), S(-0.25)}},
        {"clamp_max", {R(4), R(1)}}, {"clamp", {R(5), FusedArg::none(), S(0.5)}}},
       {6}, true},
      {"activations", 2,
       {{"gelu", {R(0)}}, {"gelu", {R(1), FusedArg::str("tanh")}}, {"silu", {R(2)}}, {"hardswish", {R(3)}},
        {"add", {R(4), R(5)}}, {"hardsigmoid", {R(6)}}, {"leaky_relu", {R(7), S(0.2)}}, {"elu", {R(0), S(1.5)}},
        {"softplus", {R(1), S(2), S(1)}}, {"mul", {R(8), R(9)}}, {"add", {R(11), R(10)}}},
       {12}, false},
      {"math", 2,
       {{"exp", {R(0)}}, {"log1p", {R(2)}}, {"abs", {R(1)}}, {"sqrt", {R(4)}}, {"rsqrt", {R(3)}}, {"sin", {R(5)}},
        {"cos", {R(6)}}, {"div", {R(7), R(8)}}, {"pow", {R(9), S(2)}}, {"tanh", {R(10)}}, {"expm1", {R(11)}},
        {"pow", {R(4), R(0)}}, {"add", {R(12), R(13)}}, {"reciprocal", {R(14)}}, {"square", {R(15)}}},
       {16}, false},
      {"div_modes", 2,
       {{"div", {R(0), R(1), FusedArg::str("trunc")}}, {"div", {R(0), S(0.3), FusedArg::str("floor")}},
        {"floor", {R(1)}}, {"ceil", {R(0)}}, {"round", {R(0)}}, {"trunc", {R(1)}}, {"sign", {R(0)}},
        {"add", {R(2), R(3)}}, {"add", {R(9), R(4)}}, {"add", {R(10), R(5)}}, {"add", {R(11), R(6)}},
        {"add", {R(12), R(7)}}, {"add", {R(13), R(8)}}},
       {14}, false},
      {"compare_cast", 2,
       {{"le", {R(0), S(0.1)}}, {"to", {R(2), FusedArg::dtype(kFloat)}}, {"mul", {R(3), R(1)}}, {"ne", {R(0), R(1)}},
        {"where", {R(5), R(4), S(-1)}}, {"pow", {S(2), R(6)}}, {"eq", {R(0), R(0)}}, {"where", {R(8), S(3.0), S(4.0)}},
        {"add", {R(7), R(9)}}},
       {10}, false},
      // Float32 runs an add, sub (alpha 1) or mul of the value made just before in that op's loop
      // (fused_pointwise_kernels.cpp, Epilogue): the value on either side, an input first read by
      // that step (loaded before the op), and the steps it must leave alone (both operands the
      // value, alpha 2).
      {"epilogues", 2,
       {{"abs", {R(0)}}, {"sub", {R(2), R(1)}}, {"relu", {R(3)}}, {"sub", {R(0), R(4)}}, {"neg", {R(5)}},
        {"add", {R(1), R(6)}}, {"mul", {R(7), R(7)}}, {"add", {R(8), R(0), S(2)}}, {"mul", {R(1), R(9)}},
        {"maximum", {R(10), R(0)}}, {"mul", {R(11), R(1)}}},
       {12}, true},
      {"multi_output", 2, {{"mul", {R(0), R(1)}}, {"sigmoid", {R(2)}}, {"lt", {R(2), S(0)}}, {"add", {R(3), R(0)}}},
       {3, 5, 4, 1, 3}, false},
  };
}

void expect_same(const Tensor& fused, const Tensor& eager, bool exact, const std::string& what) {
  ASSERT_EQ(fused.dtype(), eager.dtype()) << what;
  ASSERT_EQ(fused.sizes().vec(), eager.sizes().vec()) << what;
  // A 16-bit result is rounded after every step, from the same float32 value the eager op
  // computes, so it is the eager result bit for bit whatever the ops.
  if (exact || fused.dtype() == kBool || fused.dtype() == kBFloat16 || fused.dtype() == kHalf) {
    EXPECT_TRUE(equal(fused, eager)) << what << ": max |diff| "
                                     << (fused.to(kDouble) - eager.to(kDouble)).abs().max().item<double>();
    return;
  }
  const ScalarType t = fused.dtype();
  const double rtol = t == kFloat ? 2e-6 : 1e-13;
  EXPECT_TRUE(allclose(fused.to(kDouble), eager.to(kDouble), rtol, rtol, true))
      << what << ": max |diff| " << (fused.to(kDouble) - eager.to(kDouble)).abs().max().item<double>();
}

// Inputs of dtype t in several layouts; each pair broadcasts.
struct Case {
  const char* name;
  std::function<std::vector<Tensor>(ScalarType)> make;
};
std::vector<Case> cases() {
  auto r = [](IntArrayRef s, ScalarType t) { return randn(s).to(t); };
  return {
      {"odd_size", [=](ScalarType t) { return std::vector<Tensor>{r({1037}, t), r({1037}, t)}; }},
      {"large", [=](ScalarType t) { return std::vector<Tensor>{r({3, 20001}, t), r({3, 20001}, t)}; }},
      {"broadcast", [=](ScalarType t) { return std::vector<Tensor>{r({37, 1}, t), r({1, 29}, t)}; }},
      {"channels_last",
       [=](ScalarType t) {
         return std::vector<Tensor>{r({2, 3, 5, 7}, t).contiguous(MemoryFormat::ChannelsLast),
                                    r({2, 3, 5, 7}, t).contiguous(MemoryFormat::ChannelsLast)};
       }},
      {"non_contiguous",
       [=](ScalarType t) {
         return std::vector<Tensor>{r({13, 22}, t).t(), r({22, 26}, t).slice(1, 0, 26, 2)};
       }},
      {"zero_dim", [=](ScalarType t) { return std::vector<Tensor>{r({61}, t), r({}, t)}; }},
      {"empty", [=](ScalarType t) { return std::vector<Tensor>{r({0, 5}, t), r({1, 5}, t)}; }},
  };
}

}  // namespace

TEST(FxFused, BenchChainMatchesEager) {
  manual_seed(1);
  const FusedPointwise chain = bench_chain();
  for (ScalarType t : {kFloat, kBFloat16, kHalf, kDouble}) {
    std::vector<Tensor> in;
    for (int i = 0; i < 4; ++i) in.push_back(randn({4099}).to(t));
    EXPECT_TRUE(chain.fuses(in));
    const auto fused = chain(in);
    const auto eager = chain.run_eager(in);
    ASSERT_EQ(fused.size(), 1u);
    expect_same(fused[0], eager[0], false, std::string("bench chain ") + dtype_name(t));
  }
  // Past kernels::kFusedLargeElements outputs are streamed past the caches and the next tile of
  // each contiguous input requested ahead (before sigmoid's and tanh's loops); a sliced input
  // starts off the vector alignment, a broadcast one is not requested.
  const int64_t n = (int64_t{1} << 21) + 77;
  for (ScalarType t : {kFloat, kBFloat16, kDouble}) {
    std::vector<Tensor> big;
    for (int i = 0; i < 4; ++i) big.push_back(randn({n + 4}).to(t).slice(0, i, i + n));
    big[1] = big[1].slice(0, 0, 1);
    EXPECT_TRUE(chain.fuses(big));
    expect_same(chain(big)[0], chain.run_eager(big)[0], false, std::string("bench chain, large, ") + dtype_name(t));
  }
}

TEST(FxFused, ChainsShapesDtypes) {
  manual_seed(2);
  for (const Chain& c : chains()) {
    const FusedPointwise chain(c.num_inputs, c.steps, c.outputs);
    for (const Case& k : cases()) {
      for (ScalarType t : {kFloat, kBFloat16, kHalf, kDouble}) {
        const std::vector<Tensor> in = k.make(t);
        // Run op by op: the eager op truncates a 16-bit quotient after rounding it; casts to float32
        // and where's float Scalars (the default dtype) mix float32 into a float64 chain.
        const bool trunc16 = std::string(c.name) == "div_modes" && (t == kHalf || t == kBFloat16);
        const bool mixed64 = std::string(c.name) == "compare_cast" && t == kDouble;
        EXPECT_EQ(chain.fuses(in), !trunc16 && !mixed64) << c.name << " / " << k.name << " / " << dtype_name(t);
        const auto fused = chain(in);
        const auto eager = chain.run_eager(in);
        ASSERT_EQ(fused.size(), eager.size());
        for (size_t j = 0; j < fused.size(); ++j) {
          const std::string what = std::string(c.name) + " / " + k.name + " / " + dtype_name(t) + " / output " +
                                   std::to_string(j);
          expect_same(fused[j], eager[j], c.exact, what);
          if (std::string(k.name) == "channels_last")
            EXPECT_EQ(fused[j].strides().vec(), eager[j].strides().vec()) << what;
        }
      }
    }
  }
}

TEST(FxFused, MultipleOutputsShareAndAlias) {
  manual_seed(3);
  const Tensor x = randn({5, 7}), y = randn({5, 7});
  const FusedPointwise chain(2, {{"mul", {R(0), R(1)}}, {"sigmoid", {R(2)}}, {"gt", {R(2), S(0)}}}, {3, 1, 4, 3});
  const auto out = chain({x, y});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(out[1].is_same(y));  // an input listed as an output is returned as is
  EXPECT_TRUE(out[0].is_same(out[3]));
  EXPECT_EQ(out[2].dtype(), kBool);
  EXPECT_TRUE(equal(out[2], (x * y) > 0));
  EXPECT_TRUE(allclose(out[0], (x * y).sigmoid(), 1e-6, 1e-7));
  // A Bool first output (the iterator allocates it).
  const FusedPointwise cmp(2, {{"gt", {R(0), R(1)}}}, {2});
  EXPECT_TRUE(cmp.fuses({x, y}));
  EXPECT_TRUE(equal(cmp({x, y})[0], x > y));
  // 30 values alive at once: more than the kernel's tile buffers, so the chain runs op by op.
  std::vector<FusedStep> wide;
  for (int k = 0; k < 30; ++k) wide.push_back({"mul", {R(0), S(k)}});
  for (int k = 0; k < 29; ++k) wide.push_back({"add", {R(k == 0 ? 2 : 31 + k), R(3 + k)}});
  const FusedPointwise many(2, wide, {2 + 30 + 28});
  EXPECT_FALSE(many.fuses({x, y}));
  EXPECT_TRUE(allclose(many({x, y})[0], x * 435, 1e-5, 1e-5));
  // An output smaller than the broadcast of all inputs: op by op, each output its own shape.
  const Tensor col = randn({3, 1}), row = randn({1, 4});
  const FusedPointwise shapes(2, {{"relu", {R(0)}}, {"mul", {R(0), R(1)}}}, {2, 3});
  EXPECT_FALSE(shapes.fuses({col, row}));
  const auto outs = shapes({col, row});
  EXPECT_EQ(outs[0].sizes().vec(), std::vector<int64_t>({3, 1}));
  EXPECT_TRUE(equal(outs[1], col * row));
  // Only an input as output: the dead step is never run.
  const FusedPointwise passthrough(1, {{"relu", {R(0)}}}, {0});
  EXPECT_FALSE(passthrough.fuses({x}));
  EXPECT_TRUE(passthrough({x})[0].is_same(x));
}

TEST(FxFused, MixedDtypesFollowPromotion) {
  manual_seed(4);
  const Tensor xb = randn({333}).to(kBFloat16), s = tensor(std::vector<double>{0.1}).to(kFloat).reshape({});
  const Tensor i = randint(-5, 5, {333}, TensorOptions().dtype(kInt)), m = randn({333}) > 0;
  const Tensor xh = randn({333}).to(kHalf);
  // bf16 x 0-dim float32 (the 0-dim tensor is rounded to bf16), int * bf16, bool mask, half + bf16 -> float
  const std::vector<FusedStep> steps{{"mul", {R(0), R(1)}},
                                     {"mul", {R(2), R(5)}},
                                     {"mul", {R(6), R(3)}},
                                     {"add", {R(7), R(4)}},
                                     {"exp", {R(2)}},
                                     {"to", {R(8), FusedArg::dtype(kBFloat16)}},
                                     {"to", {R(10), FusedArg::dtype(kBool)}}};
  const std::vector<Tensor> in{xb, s, i, m, xh};
  const FusedPointwise chain(5, steps, {7, 9, 11});
  EXPECT_TRUE(chain.fuses(in));
  const auto fused = chain(in);
  const auto eager = chain.run_eager(in);
  const std::vector<ScalarType> dtypes{kBFloat16, kFloat, kBool};
  for (size_t j = 0; j < fused.size(); ++j) {
    EXPECT_EQ(fused[j].dtype(), dtypes[j]) << j;
    expect_same(fused[j], eager[j], j != 1, "mixed output " + std::to_string(j));
  }
  // 7 outputs and 5 inputs exceed the iterator's 8 operands: the chain runs op by op.
  const FusedPointwise wide(5, steps, {5, 6, 7, 8, 9, 10, 11});
  EXPECT_FALSE(wide.fuses(in));
  const auto all = wide(in);
  EXPECT_TRUE(equal(all[2], fused[0]));
  EXPECT_EQ(all[0].dtype(), kBFloat16);
  EXPECT_EQ(all[3].dtype(), kFloat);
}

TEST(FxFused, IntegerChainsRunEagerly) {
  const Tensor a = arange(10), b = arange(10) * 3;
  const FusedPointwise chain(2, {{"add", {R(0), R(1)}}, {"mul", {R(2), S(2)}}, {"relu", {R(3)}}}, {4});
  EXPECT_FALSE(chain.fuses({a, b}));
  const Tensor y = chain({a, b})[0];
  EXPECT_EQ(y.dtype(), kLong);
  EXPECT_TRUE(equal(y, (a + b) * 2));
}

TEST(FxFused, GradcheckThroughFusedChains) {
  manual_seed(5);
  auto leaf = [](IntArrayRef s) { return randn(s, TensorOptions().dtype(kDouble)).requires_grad_(); };
  const FusedPointwise bench = bench_chain();
  const autograd::variable_list in{leaf({3, 4}), leaf({4}), leaf({3, 1}), leaf({3, 4})};
  EXPECT_TRUE(autograd::gradcheck([&](const autograd::variable_list& v) { return bench(v)[0]; }, in));
  EXPECT_TRUE(autograd::gradgradcheck([&](const autograd::variable_list& v) { return bench(v)[0]; }, in));

  const FusedPointwise other(2,
                             {{"gt", {R(0), S(0)}},
                              {"gelu", {R(1)}},
                              {"softplus", {R(0), S(2)}},
                              {"where", {R(2), R(3), R(4)}},
                              {"clamp", {R(5), S(-1), S(1.5)}},
                              {"div", {R(6), R(1)}},
                              {"silu", {R(0)}}},
                             {7, 8});
  const autograd::variable_list in2{leaf({7}), leaf({7}) + 3};
  EXPECT_TRUE(autograd::gradcheck([&](const autograd::variable_list& v) { return other(v); }, in2));
}

TEST(FxFused, BackwardMatchesEagerAndChecksVersions) {
  manual_seed(6);
  const FusedPointwise chain = bench_chain();
  std::vector<Tensor> in, in_eager;
  for (int i = 0; i < 4; ++i) {
    in.push_back(randn({6, 9}).requires_grad_(i != 2));
    in_eager.push_back(in.back().detach().requires_grad_(i != 2));
  }
  const Tensor y = chain(in)[0];
  EXPECT_EQ(y.grad_fn()->name(), "FusedPointwiseBackward");
  y.sum().backward();
  chain.run_eager(in_eager)[0].sum().backward();
  for (int i : {0, 1, 3}) EXPECT_TRUE(allclose(in[i].grad(), in_eager[i].grad(), 1e-5, 1e-6)) << i;
  EXPECT_FALSE(in[2].grad().defined());

  // An input chained from another input: each gets its own partial derivative.
  const Tensor a = randn({5}).requires_grad_();
  const Tensor b = a * 2;
  const FusedPointwise prod(2, {{"mul", {R(0), R(1)}}}, {2});
  prod({a, b})[0].sum().backward();
  EXPECT_TRUE(allclose(a.grad(), 4 * a.detach(), 1e-6, 1e-6));

  // A comparison's output needs no gradient; an in-place change of a saved input is refused.
  const Tensor x = randn({4}).requires_grad_();
  Tensor c = randn({4});
  const FusedPointwise two(2, {{"mul", {R(0), R(1)}}, {"gt", {R(0), S(0)}}}, {2, 3});
  const auto out = two({x, c});
  EXPECT_TRUE(out[0].requires_grad());
  EXPECT_FALSE(out[1].requires_grad());
  c.add_(1);
  expect_error([&] { out[0].sum().backward(); }, {"FusedPointwiseBackward", "modified by an inplace operation"});
}

TEST(FxFused, BadChains) {
  expect_error([] { FusedPointwise(1, {{"frobnicate", {R(0)}}}, {1}); }, {"step 0", "unknown op 'frobnicate'"});
  expect_error([] { FusedPointwise(1, {{"relu", {R(0)}}, {"add", {R(0), R(2)}}}, {2}); },
               {"step 1", "%2 = add(%0, %2)", "references %2"});
  expect_error([] { FusedPointwise(1, {{"mul", {R(0)}}}, {1}); }, {"step 0", "mul takes 2 to 2 arguments, got 1"});
  expect_error([] { FusedPointwise(1, {{"to", {R(0), S(1)}}}, {1}); }, {"argument 1 of to must be a ScalarType"});
  expect_error([] { FusedPointwise(1, {{"add", {S(1), S(2)}}}, {1}); }, {"argument 0 of add must be a reference"});
  expect_error([] { FusedPointwise(1, {{"clamp", {R(0), FusedArg::none(), FusedArg::none()}}}, {1}); },
               {"At least one of 'min' or 'max'"});
  expect_error([] { FusedPointwise(1, {{"gelu", {R(0), FusedArg::str("fast")}}}, {1}); }, {"'none' or 'tanh'"});
  expect_error([] { FusedPointwise(1, {{"relu", {R(0)}}}, {2}); }, {"output 0 references %2"});
  expect_error([] { FusedPointwise(1, {{"relu", {R(0)}}}, {}); }, {"at least one output"});
  EXPECT_TRUE(fx::fusable("sigmoid"));
  EXPECT_FALSE(fx::fusable("matmul"));
}

TEST(FxFused, BadInputs) {
  const FusedPointwise chain = bench_chain();
  expect_error([&] { chain({randn({3})}); }, {"fx::FusedPointwise", "expected 4 inputs, got 1"});
  expect_error([&] { chain({randn({3}), randn({4}), randn({3}), randn({3})}); },
               {"step 0", "%4 = mul(%0, %1)", "must match"});
  expect_error([&] { chain({randn({3}), randn({3}), Tensor(), randn({3})}); }, {"input 2 is an undefined tensor"});
  const FusedPointwise sub(2, {{"sub", {R(0), R(1)}}}, {2});
  expect_error([&] { sub({randn({3}) > 0, randn({3}) > 0}); }, {"step 0", "Subtraction"});
  const FusedPointwise where(2, {{"where", {R(0), R(1), S(0)}}}, {2});
  expect_error([&] { where({randn({3}), randn({3})}); }, {"step 0", "boolean tensor"});
}

TEST(FxFused, ModuleAndListing) {
  fx::FusedPointwiseModule m(bench_chain());
  const std::vector<Tensor> in{randn({8}), randn({8}), randn({8}), randn({8})};
  EXPECT_TRUE(allclose(m->forward(in)[0], bench_chain().run_eager(in)[0], 1e-6, 1e-7));
  std::ostringstream os;
  m->pretty_print(os);
  EXPECT_EQ(os.str(), "fx::FusedPointwiseModule(inputs=4, steps=7, outputs=1)");
  const std::string listing = bench_chain().str();
  EXPECT_NE(listing.find("%5 = add(%4, %2, 1)"), std::string::npos) << listing;
  EXPECT_NE(listing.find("return (%10)"), std::string::npos) << listing;
}

TEST(FxFused, AutocastRunsOpByOp) {
  // Autocast casts per op, so under it the chain runs through the eager ops (and their casts).
  const FusedPointwise chain = bench_chain();
  std::vector<Tensor> in;
  for (int i = 0; i < 4; ++i) in.push_back(randn({9}).requires_grad_());
  {
    AutocastGuard autocast(kCPU, kBFloat16);
    EXPECT_FALSE(chain.fuses(in));
    const Tensor y = chain(in)[0];
    EXPECT_TRUE(equal(y, chain.run_eager(in)[0]));
    y.sum().backward();
  }
  EXPECT_TRUE(in[0].grad().defined());
  EXPECT_TRUE(chain.fuses(in));
  EXPECT_EQ(chain(in)[0].dtype(), kFloat);
}

TEST(FxFused, ConcurrentCallsShareTheCompiledChain) {
  const FusedPointwise chain = bench_chain();
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const ScalarType dt = t % 2 ? kBFloat16 : kFloat;
      std::vector<Tensor> in;
      for (int i = 0; i < 4; ++i) in.push_back(ones({100 + t}, TensorOptions().dtype(dt)) * (0.1 * (i + 1)));
      ok[t] = allclose(chain(in)[0].to(kFloat), chain.run_eager(in)[0].to(kFloat), 1e-2, 1e-2);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_TRUE(ok[t]) << t;
}

}  // namespace EMBER_UNITY_FILE
