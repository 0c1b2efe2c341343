// Autograd semantics: the engine (accumulation, ordering, retain_graph, higher order), grad
// modes, in-place and version errors, custom functions, and gradcheck of every derivative.
#include <gtest/gtest.h>

#include <string>

#include "ember/ember.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;  // NOLINT
using autograd::variable_list;

namespace {

Tensor leaf(std::initializer_list<double> v, ScalarType dtype = kDouble) {
  return tensor(std::vector<double>(v), TensorOptions().dtype(kDouble)).to(dtype).requires_grad_();
}
Tensor rand64(IntArrayRef sizes, bool requires_grad = true) {
  Tensor t = randn(sizes, TensorOptions().dtype(kDouble));
  if (requires_grad) t.requires_grad_();
  return t;
}
double at(const Tensor& t, int64_t i) { return t.to(kDouble).contiguous().view({-1})[i].item<double>(); }

TEST(Autograd, WorkedExample) {
  const Tensor x = leaf({0.5, 0.75});
  const Tensor y = (x[0] * x[1]).log() * x[1].sin();
  y.backward();
  EXPECT_NEAR(at(x.grad(), 0), 1.3633, 1e-4);
  EXPECT_NEAR(at(x.grad(), 1), 0.1912, 1e-4);
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward0");
  EXPECT_TRUE(x.is_leaf());
  EXPECT_FALSE(y.is_leaf());
}

TEST(Autograd, MultiPathAccumulationAndRepeatedBackward) {
  const Tensor x = leaf({1.0, -2.0, 3.0});
  const Tensor y = (x * x + x * 3).sum();  // dy/dx = 2x + 3, x reaches y along three paths
  y.backward({}, /*retain_graph=*/true);
  for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(at(x.grad(), i), 2 * at(x, i) + 3);
  y.backward();  // a second backward accumulates into .grad
  for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(at(x.grad(), i), 2 * (2 * at(x, i) + 3));
}

TEST(Autograd, FreshGradIsNotAnAliasOfTheIncomingGradient) {
  const Tensor x = leaf({1.0, 2.0});
  const Tensor g = tensor(std::vector<double>{5.0, 6.0}, TensorOptions().dtype(kDouble));
  x.clone().backward(g);
  EXPECT_TRUE(x.grad().equal(g));
  EXPECT_NE(x.grad().data_ptr(), g.data_ptr());
  EXPECT_FALSE(x.grad().requires_grad());
}

TEST(Autograd, SecondBackwardWithoutRetainGraphRaises) {
  const Tensor x = leaf({1.0, 2.0});
  const Tensor y = x.exp().sum();
  y.backward();
  const std::string err = error_of([&] { y.backward(); });
  EXPECT_NE(err.find("Trying to backward through the graph a second time"), std::string::npos) << err;
}

TEST(Autograd, BroadcastGradientsAreSummedToTheInputShape) {
  const Tensor a = rand64({3, 1});
  const Tensor b = rand64({4});
  (a * b).sum().backward();
  EXPECT_EQ(a.grad().sizes(), IntArrayRef({3, 1}));
  EXPECT_EQ(b.grad().sizes(), IntArrayRef({4}));
  EXPECT_NEAR(at(a.grad(), 1), at(b.sum(), 0), 1e-12);
  EXPECT_NEAR(at(b.grad(), 2), at(a.sum(), 0), 1e-12);
}

TEST(Autograd, CastGradientsReturnToTheInputDtype) {
  const Tensor x = leaf({1.0, 2.0}, kFloat);
  const Tensor y = x.to(kDouble) * 3;
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward1");
  y.sum().backward();
  EXPECT_EQ(x.grad().dtype(), kFloat);
  EXPECT_FLOAT_EQ(static_cast<float>(at(x.grad(), 0)), 3.0f);
  EXPECT_TRUE(x.to(kFloat).is_same(x));  // no-op casts hand back the input, no node
}

TEST(Autograd, HigherOrderGradients) {
  const Tensor x = leaf({2.0});
  const Tensor y = x.pow(3);
  const Tensor dy = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  EXPECT_DOUBLE_EQ(at(dy, 0), 12.0);  // 3x^2
  EXPECT_TRUE(dy.requires_grad());
  const Tensor d2y = autograd::grad({dy}, {x}, {}, std::nullopt, true)[0];
  EXPECT_DOUBLE_EQ(at(d2y, 0), 12.0);  // 6x
  const Tensor d3y = autograd::grad({d2y}, {x})[0];
  EXPECT_DOUBLE_EQ(at(d3y, 0), 6.0);
  EXPECT_FALSE(x.grad().defined());  // grad() leaves .grad alone

  // through saved results (exp, tanh) and backward(create_graph) into .grad
  const Tensor z = leaf({0.3});
  const Tensor t = z.tanh();
  t.backward({}, std::nullopt, /*create_graph=*/true);
  const double th = std::tanh(0.3);
  EXPECT_NEAR(at(z.grad(), 0), 1 - th * th, 1e-12);
  const Tensor g2 = autograd::grad({z.grad()}, {z})[0];
  EXPECT_NEAR(at(g2, 0), -2 * th * (1 - th * th), 1e-12);
  // z.grad's graph ends in z's AccumulateGrad, which holds z: a cycle, as in PyTorch (which warns
  // about backward(create_graph=True) for this reason); resetting .grad breaks it
  z.mutable_grad().reset();
}

TEST(Autograd, GradAllowUnusedAndErrors) {
  const Tensor x = leaf({1.0});
  const Tensor unused = leaf({1.0});
  const Tensor y = x * 2;
  const std::string err = error_of([&] { autograd::grad({y}, {unused}, {}, true); });
  EXPECT_NE(err.find("appears to not have been used in the graph"), std::string::npos) << err;
  const variable_list g = autograd::grad({y}, {x, unused}, {}, true, false, /*allow_unused=*/true);
  EXPECT_DOUBLE_EQ(at(g[0], 0), 2.0);
  EXPECT_FALSE(g[1].defined());
  const Tensor v = leaf({1.0, 2.0}) * 2;
  EXPECT_NE(error_of([&] { v.backward(); }).find("grad can be implicitly created only for scalar outputs"),
            std::string::npos);
  const Tensor c = ones({2});
  EXPECT_NE(error_of([&] { c.sum().backward(); }).find("does not require grad and does not have a grad_fn"),
            std::string::npos);
}

TEST(Autograd, RetainGradOnNonLeaf) {
  const Tensor x = leaf({1.0, 2.0});
  const Tensor h = x * 3;
  h.retain_grad();
  EXPECT_TRUE(h.retains_grad());
  (h * h).sum().backward();
  EXPECT_DOUBLE_EQ(at(h.grad(), 1), 12.0);  // 2h
  EXPECT_DOUBLE_EQ(at(x.grad(), 1), 36.0);  // 2h * 3
}

TEST(Autograd, NoGradAndInferenceMode) {
  const Tensor x = leaf({1.0, 2.0});
  EXPECT_TRUE(is_grad_enabled());
  {
    NoGradGuard guard;
    EXPECT_FALSE(is_grad_enabled());
    const Tensor y = x * 2;
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
    {
      AutoGradMode enable(true);
      EXPECT_TRUE((x * 2).requires_grad());
    }
    EXPECT_FALSE(is_grad_enabled());
  }
  EXPECT_TRUE(is_grad_enabled());
  set_grad_enabled(false);
  EXPECT_FALSE((x + 1).requires_grad());
  set_grad_enabled(true);
  {
    InferenceMode guard;
    EXPECT_TRUE(InferenceMode::is_enabled());
    EXPECT_FALSE(is_grad_enabled());
    const Tensor y = x * 2;
    EXPECT_TRUE(y.is_inference());
    EXPECT_FALSE(y.requires_grad());
    {
      InferenceMode nested;
      EXPECT_TRUE((y + 1).is_inference());
    }
    EXPECT_TRUE(InferenceMode::is_enabled());
  }
  EXPECT_FALSE(InferenceMode::is_enabled());
  EXPECT_TRUE(is_grad_enabled());
  EXPECT_FALSE((x * 2).is_inference());
  EXPECT_TRUE((x * 2).requires_grad());
}

TEST(Autograd, InPlaceOnLeafRequiringGradRaises) {
  Tensor x = leaf({1.0, 2.0});
  const std::string err = error_of([&] { x.add_(1); });
  EXPECT_NE(err.find("a leaf Variable that requires grad is being used in an in-place operation."),
            std::string::npos) << err;
  EXPECT_DOUBLE_EQ(at(x, 0), 1.0);
  {
    NoGradGuard guard;  // optimizer-style updates are allowed
    x.sub_(0.5);
  }
  EXPECT_DOUBLE_EQ(at(x, 0), 0.5);
}

TEST(Autograd, ModifiedSavedTensorRaisesNamingTheNode) {
  const Tensor x = leaf({1.0, 2.0});
  Tensor a = tensor(std::vector<double>{3.0, 4.0}, TensorOptions().dtype(kDouble));
  const Tensor y = (x * a).sum();
  a.add_(1);
  const std::string err = error_of([&] { y.backward(); });
  EXPECT_NE(err.find("MulBackward0"), std::string::npos) << err;
  EXPECT_NE(err.find("modified by an inplace operation"), std::string::npos) << err;
  EXPECT_NE(err.find("is at version 1; expected version 0 instead"), std::string::npos) << err;

  // a saved result modified under no_grad names the node whose output it is
  const Tensor z = leaf({0.5});
  Tensor e = z.exp();
  {
    NoGradGuard guard;
    e.mul_(2);
  }
  const std::string err2 = error_of([&] { e.sum().backward(); });
  EXPECT_NE(err2.find("which is output 0 of ExpBackward0"), std::string::npos) << err2;
}

TEST(Autograd, OpsWithoutDerivativeRaise) {
  const Tensor x = leaf({0.5});
  // floor_divide has no derivative in PyTorch either
  const std::string err = error_of([&] { x.floor_divide(x); });
  EXPECT_NE(err.find("derivative for floor_divide is not implemented"), std::string::npos) << err;
  Tensor h = x * 2;
  EXPECT_NE(error_of([&] { h.floor_divide_(2); }).find("derivative for floor_divide_ is not implemented"), std::string::npos);
  // without grad recording the same ops run
  NoGradGuard guard;
  EXPECT_NO_THROW(x.floor_divide(x));
}

TEST(Autograd, ComparisonsOfTensorsRequiringGradCarryNoGraph) {
  const Tensor x = leaf({-1.0, 2.0});
  const Tensor m = x > 0;
  EXPECT_FALSE(m.requires_grad());
  EXPECT_EQ(m.dtype(), kBool);
}

TEST(Autograd, DetachAndRequiresGradRules) {
  const Tensor x = leaf({1.0, 2.0});
  const Tensor y = x * 2;
  const Tensor d = y.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_EQ(d.data_ptr(), y.data_ptr());
  Tensor e = x * 3;
  e.detach_();
  EXPECT_FALSE(e.requires_grad());
  EXPECT_EQ(e.grad_fn(), nullptr);
  EXPECT_NE(error_of([&] { y.requires_grad_(false); }).find("only change requires_grad flags of leaf variables"),
            std::string::npos);
  const Tensor i = ones({2}, TensorOptions().dtype(kLong));
  EXPECT_NE(error_of([&] { i.requires_grad_(); }).find("only Tensors of floating point"), std::string::npos);
}

// ---- custom functions ---------------------------------------------------------------------------

struct MulConstant : autograd::Function<MulConstant> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x, double c) {
    ctx->saved_data["c"] = c;
    ctx->save_for_backward({x});
    return x * c;
  }
  static variable_list backward(autograd::AutogradContext* ctx, variable_list grads) {
    const double c = ctx->saved_data["c"].toDouble();
    EXPECT_EQ(ctx->get_saved_variables().size(), 1u);
    return {grads[0] * c, Tensor()};
  }
};

struct ExpWithArgmax : autograd::Function<ExpWithArgmax> {
  static variable_list forward(autograd::AutogradContext* ctx, const Tensor& x) {
    const Tensor e = x.exp();
    const Tensor idx = x.argmax();
    ctx->mark_non_differentiable({idx});
    ctx->save_for_backward({e});  // an output: kept without its history
    return {e, idx};
  }
  static variable_list backward(autograd::AutogradContext* ctx, variable_list grads) {
    return {grads[0] * ctx->get_saved_variables()[0]};
  }
};

TEST(Autograd, CustomFunction) {
  const Tensor x = leaf({1.0, 2.0});
  const Tensor y = MulConstant::apply(x, 5.0);
  EXPECT_TRUE(y.requires_grad());
  EXPECT_EQ(y.grad_fn()->name(), "CppNode");
  y.sum().backward();
  EXPECT_DOUBLE_EQ(at(x.grad(), 1), 5.0);

  const Tensor z = leaf({0.1, 0.7});
  const variable_list out = ExpWithArgmax::apply(z);
  EXPECT_TRUE(out[0].requires_grad());
  EXPECT_FALSE(out[1].requires_grad());
  out[0].sum().backward();
  EXPECT_NEAR(at(z.grad(), 1), std::exp(0.7), 1e-12);

  EXPECT_TRUE(autograd::gradcheck([](const variable_list& v) { return MulConstant::apply(v[0], 1.5); },
                                  {rand64({3})}));
  NoGradGuard guard;
  EXPECT_FALSE(MulConstant::apply(x, 2.0).requires_grad());
}

// ---- gradcheck of every derivative ------------------------------------------------------------

TEST(Autograd, GradcheckReportsTheWorstElement) {
  struct WrongGrad : autograd::Function<WrongGrad> {
    static Tensor forward(autograd::AutogradContext*, const Tensor& x) { return x * 2; }
    static variable_list backward(autograd::AutogradContext*, variable_list g) { return {g[0] * 3}; }
  };
  const std::string err =
      error_of([] { autograd::gradcheck([](const variable_list& v) { return WrongGrad::apply(v[0]); }, {rand64({2})}); });
  EXPECT_NE(err.find("Jacobian mismatch for output 0 with respect to input 0"), std::string::npos) << err;
  EXPECT_NE(err.find("numerical 2"), std::string::npos) << err;
}

using Fn = std::function<Tensor(const variable_list&)>;
void check(const char* what, const Fn& f, const variable_list& inputs, double eps = 1e-6) {
  SCOPED_TRACE(what);
  EXPECT_NO_THROW({
    try {
      autograd::gradcheck(f, inputs, eps);
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  });
}

TEST(Autograd, GradcheckBinaryWithBroadcasting) {
  manual_seed(1);
  const variable_list ab = {rand64({3, 1}), rand64({1, 4})};
  check("add", [](const variable_list& v) { return add(v[0], v[1], 2.5); }, ab);
  check("sub", [](const variable_list& v) { return sub(v[0], v[1], 0.5); }, ab);
  check("rsub", [](const variable_list& v) { return rsub(v[0], v[1], 2); }, ab);
  check("mul", [](const variable_list& v) { return v[0] * v[1]; }, ab);
  const variable_list pos = {rand64({2, 3}), (rand64({3}, false).abs() + 0.5).requires_grad_()};
  check("div", [](const variable_list& v) { return v[0] / v[1]; }, pos);
  check("add scalar", [](const variable_list& v) { return v[0] + 3; }, ab);
  check("sub scalar", [](const variable_list& v) { return v[0] - 3; }, ab);
  check("mul scalar", [](const variable_list& v) { return v[0] * 3; }, ab);
  check("div scalar", [](const variable_list& v) { return v[0] / 3; }, ab);
  check("scalar div", [](const variable_list& v) { return 2 / v[1]; }, pos);
  check("scalar sub", [](const variable_list& v) { return 2 - v[0]; }, ab);
  // the same input on both sides, and one input not requiring grad
  check("mul self", [](const variable_list& v) { return v[0] * v[0]; }, {rand64({4})});
  check("mul const", [](const variable_list& v) { return v[0] * v[1]; }, {rand64({2, 2}), rand64({2}, false)});
}

TEST(Autograd, GradcheckUnary) {
  manual_seed(2);
  const Tensor x = rand64({2, 3});
  const Tensor p = (rand64({2, 3}, false).abs() + 0.3).requires_grad_();
  check("neg", [](const variable_list& v) { return -v[0]; }, {x});
  check("exp", [](const variable_list& v) { return v[0].exp(); }, {x});
  check("log", [](const variable_list& v) { return v[0].log(); }, {p});
  check("sqrt", [](const variable_list& v) { return v[0].sqrt(); }, {p});
  check("pow 3", [](const variable_list& v) { return v[0].pow(3); }, {x});
  check("pow 2.5", [](const variable_list& v) { return v[0].pow(2.5); }, {p});
  check("pow -1", [](const variable_list& v) { return v[0].pow(-1); }, {p});
  check("pow 0", [](const variable_list& v) { return v[0].pow(0); }, {x});
  check("sin", [](const variable_list& v) { return v[0].sin(); }, {x});
  check("cos", [](const variable_list& v) { return v[0].cos(); }, {x});
  check("tanh", [](const variable_list& v) { return v[0].tanh(); }, {x});
  check("sigmoid", [](const variable_list& v) { return v[0].sigmoid(); }, {x});
  check("relu", [](const variable_list& v) { return v[0].relu(); }, {x});  // randn is never within eps of 0
}

TEST(Autograd, GradcheckReductions) {
  manual_seed(3);
  const Tensor x = rand64({2, 3, 4});
  check("sum", [](const variable_list& v) { return v[0].sum(); }, {x});
  check("sum dims", [](const variable_list& v) { return v[0].sum({0, 2}); }, {x});
  check("sum keepdim", [](const variable_list& v) { return v[0].sum({1}, true); }, {x});
  check("sum neg dim", [](const variable_list& v) { return v[0].sum({-1}); }, {x});
  check("mean", [](const variable_list& v) { return v[0].mean(); }, {x});
  check("mean dims", [](const variable_list& v) { return v[0].mean({0, 2}); }, {x});
  check("mean keepdim", [](const variable_list& v) { return v[0].mean({1}, true); }, {x});
  check("sum 0-dim", [](const variable_list& v) { return v[0].sum(); }, {rand64({})});
}

TEST(Autograd, GradcheckViews) {
  manual_seed(4);
  const Tensor x = rand64({2, 3, 4});
  check("view", [](const variable_list& v) { return v[0].view({6, 4}) * 2; }, {x});
  check("reshape", [](const variable_list& v) { return v[0].transpose(0, 2).reshape({-1}); }, {x});
  check("permute", [](const variable_list& v) { return v[0].permute({2, 0, 1}); }, {x});
  check("transpose", [](const variable_list& v) { return v[0].transpose(-1, 0); }, {x});
  check("t", [](const variable_list& v) { return v[0].t(); }, {rand64({3, 2})});
  check("expand", [](const variable_list& v) { return v[0].expand({2, 3, 4}); }, {rand64({3, 1})});
  check("select", [](const variable_list& v) { return v[0].select(1, -1); }, {x});
  check("slice", [](const variable_list& v) { return v[0].slice(2, 1, 4, 2); }, {x});
  check("narrow", [](const variable_list& v) { return v[0].narrow(1, 1, 2); }, {x});
  check("squeeze", [](const variable_list& v) { return v[0].squeeze(); }, {rand64({2, 1, 3})});
  check("squeeze dim", [](const variable_list& v) { return v[0].squeeze(1); }, {rand64({2, 1, 3})});
  check("unsqueeze", [](const variable_list& v) { return v[0].unsqueeze(-1); }, {x});
  check("flatten", [](const variable_list& v) { return v[0].flatten(1); }, {x});
  check("indexing", [](const variable_list& v) { return v[0][1]; }, {x});
}

TEST(Autograd, GradcheckMatrixProductsCastsAndCopies) {
  manual_seed(5);
  const Tensor a = rand64({3, 4}), b = rand64({4, 2});
  check("mm", [](const variable_list& v) { return v[0].mm(v[1]); }, {a, b});
  check("mm transposed", [](const variable_list& v) { return v[0].t().mm(v[1].t()); }, {rand64({4, 3}), rand64({2, 4})});
  check("matmul", [](const variable_list& v) { return v[0].matmul(v[1]); }, {a, b});
  check("matmul mv", [](const variable_list& v) { return v[0].matmul(v[1]); }, {a, rand64({4})});
  check("matmul vm", [](const variable_list& v) { return v[0].matmul(v[1]); }, {rand64({3}), a});
  check("matmul dot", [](const variable_list& v) { return v[0].matmul(v[1]); }, {rand64({3}), rand64({3})});
  check("matmul batched", [](const variable_list& v) { return v[0].matmul(v[1]); }, {rand64({2, 3, 4}), b});
  check("linear", [](const variable_list& v) { return linear(v[0], v[1], v[2]); },
        {rand64({5, 4}), rand64({3, 4}), rand64({3})});
  check("linear 3-D no bias", [](const variable_list& v) { return linear(v[0], v[1]); },
        {rand64({2, 5, 4}), rand64({3, 4})});
  // through float32 the function is linear but rounded: a large step keeps the difference exact
  check("to float and back", [](const variable_list& v) { return v[0].to(kFloat).to(kDouble) * 1; }, {a}, 1e-2);
  check("clone", [](const variable_list& v) { return v[0].clone(); }, {a});
  check("contiguous", [](const variable_list& v) { return v[0].t().contiguous(); }, {a});
}

TEST(Autograd, GradcheckComposedGraph) {
  manual_seed(6);
  check("mlp",
        [](const variable_list& v) {
          const Tensor h = linear(v[0], v[1], v[2]).tanh();
          return (h.matmul(v[3]).sigmoid() * v[0].mean()).sum({1});
        },
        {rand64({4, 3}), rand64({5, 3}), rand64({5}), rand64({5, 2})});
}

}  // namespace

// libtorch's factories make a leaf that requires grad when their options say so, the commonest way
// libtorch programs create parameters (`torch::ones({2, 2}, torch::requires_grad())`).
TEST(Autograd, FactoriesHonourRequiresGradOption) {
  const TensorOptions rg = requires_grad();
  const TensorOptions rg64 = TensorOptions().dtype(kDouble).requires_grad(true);
  float blob[6] = {1, 2, 3, 4, 5, 6};
  const Tensor like = ones({2, 3});
  const std::vector<std::pair<std::string, Tensor>> made = {
      {"empty", empty({2, 3}, rg)},
      {"empty_strided", empty_strided({2, 3}, {1, 2}, rg)},
      {"zeros", zeros({2, 3}, rg)},
      {"ones", ones({2, 3}, rg)},
      {"full", full({2, 3}, 1.5, rg)},
      {"scalar_tensor", scalar_tensor(2.0, rg)},
      {"arange", arange(0.0, 3.0, 0.5, rg)},
      {"arange end", arange(4, rg64)},
      {"linspace", linspace(0, 1, 5, rg)},
      {"eye", eye(3, rg)},
      {"rand", rand({2, 3}, rg)},
      {"randn", randn({2, 3}, TensorOptions().requires_grad(true))},
      {"randint", randint(0, 5, {2, 3}, rg64)},
      {"randperm", randperm(4, rg64)},
      {"normal", normal(0.0, 1.0, {3}, nullptr, rg)},
      {"empty_like", empty_like(like, rg)},
      {"zeros_like", zeros_like(like, rg)},
      {"ones_like", ones_like(like, rg)},
      {"full_like", full_like(like, 2, rg)},
      {"rand_like", rand_like(like, rg)},
      {"randn_like", randn_like(like, rg)},
      {"randint_like", randint_like(like, 0, 4, rg)},
      {"from_blob", from_blob(blob, {2, 3}, rg)},
      {"from_blob strided", from_blob(blob, {3, 2}, {1, 3}, rg)},
      {"from_blob deleter", from_blob(blob, {6}, [](void*) {}, rg)},
      {"tensor", tensor({0.5, 0.75}, rg)},
      {"tensor nested", tensor({{1.0, 2.0}, {3.0, 4.0}}, rg64)},
      {"tensor vector", tensor(std::vector<float>{1, 2, 3}, rg)},
      {"tensor vector cast", tensor(std::vector<int>{1, 2, 3}, rg64)},
  };
  for (const auto& [name, t] : made) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(t.requires_grad());
    EXPECT_TRUE(t.is_leaf());
    EXPECT_FALSE(t.grad_fn());
    (t * 2).sum().backward();  // the first backward of such programs threw "does not require grad"
    ASSERT_TRUE(t.grad().defined());
    EXPECT_TRUE(t.grad().equal(full_like(t.detach(), 2)));
  }
  // without the option, or with it false, nothing requires grad
  EXPECT_FALSE(ones({2}).requires_grad());
  EXPECT_FALSE(ones({2}, requires_grad(false)).requires_grad());
  EXPECT_FALSE(tensor({1.0}, TensorOptions().requires_grad(false)).requires_grad());
  // as PyTorch: integer tensors cannot require grad
  expect_error([] { ones({2}, TensorOptions().dtype(kLong).requires_grad(true)); }, "floating point");
  expect_error([] { tensor({1, 2}, requires_grad()); }, "floating point");
}

}  // namespace EMBER_UNITY_FILE
