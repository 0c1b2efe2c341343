// The autograd engine's semantics beyond plain recording: hooks, in-place ops on non-leaves and
// on views (history rebase), version errors, out= errors, anomaly mode, concurrent backward,
// gradgradcheck and bad input. Gradients of in-place/view graphs against libtorch are in
// tests/parity/autograd_parity.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "autograd/engine.h"
#include "ember/ember.h"
#include "unit/expect_error.h"

using namespace ember;  // NOLINT
using autograd::variable_list;

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

const TensorOptions kF64 = TensorOptions().dtype(kDouble);

Tensor vec(std::initializer_list<double> v) { return tensor(std::vector<double>(v), kF64); }
Tensor leaf(std::initializer_list<double> v) { return vec(v).requires_grad_(); }
std::vector<double> values(const Tensor& t) {
  const Tensor c = t.detach().to(kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}
using V = std::vector<double>;

// ---- hooks ------------------------------------------------------------------------------------

TEST(AutogradHooks, LeafAndNonLeafHooksSeeAndReplaceTheGradient) {
  const Tensor x = leaf({1.0, 2.0});
  const Tensor y = x * 3;
  std::vector<std::string> order;
  Tensor seen;
  y.register_hook([&](const Tensor& g) {
    order.push_back("y");
    seen = g.clone();
  });
  x.register_hook([&](const Tensor& g) {
    order.push_back("x1");
    return g * 10;
  });
  x.register_hook([&](Tensor g) {
    order.push_back("x2");
    return g + 1;  // runs on the first hook's result
  });
  y.sum().backward();
  EXPECT_EQ(order, (std::vector<std::string>{"y", "x1", "x2"}));
  EXPECT_EQ(values(seen), (V{1.0, 1.0}));
  EXPECT_EQ(values(x.grad()), (V{31.0, 31.0}));
}

TEST(AutogradHooks, RemovedHooksDoNotRunAndRetainGradSeesTheHookedValue) {
  const Tensor x = leaf({1.0, 2.0});
  const Tensor y = x * 2;
  y.retain_grad();
  const unsigned h = y.register_hook([](const Tensor& g) { return g * 5; });
  const unsigned h2 = x.register_hook([](const Tensor& g) { return g * 100; });
  x.remove_hook(h2);
  y.sum().backward();
  EXPECT_EQ(values(y.grad()), (V{5.0, 5.0}));
  EXPECT_EQ(values(x.grad()), (V{10.0, 10.0}));
  y.remove_hook(h);
  expect_error([&] { y.remove_hook(7); }, {"remove_hook", "Invalid index 7"});
}

TEST(AutogradHooks, HookOnTheAccumulatorMadeBeforeRegistration) {
  const Tensor x = leaf({1.0});
  const Tensor y = x * 2;  // the accumulator of x exists before the hook
  x.register_hook([](const Tensor& g) { return g * 3; });
  y.backward();
  EXPECT_EQ(values(x.grad()), (V{6.0}));
}

TEST(AutogradHooks, WrongShapeFromAHookRaisesAndLeavesGradUntouched) {
  const Tensor x = leaf({1.0, 2.0});
  const Tensor w = leaf({3.0, 4.0});
  const Tensor y = (x * w).sum();
  x.register_hook([](const Tensor& g) { return g.sum(); });
  expect_error([&] { y.backward({}, true); }, {"register_hook", "hook '0' has changed the size of value", "[2]", "[]"});
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(w.grad().defined());  // no leaf is written by a failed backward
  expect_error([] { vec({1.0}).register_hook([](const Tensor&) {}); },
               "cannot register a hook on a tensor that doesn't require gradient");
}

// A post-accumulate hook sees the leaf once its .grad holds the sum, while backward still runs:
// a node deeper in the graph runs after it, and other leaves are written only at the end.
TEST(AutogradHooks, PostAccumulateGradHookRunsOnceTheLeafIsWrittenDuringBackward) {
  const Tensor x = leaf({1.0, 2.0});
  const Tensor w = leaf({0.5, 0.25});
  const Tensor w2 = w * 1;
  std::vector<std::string> order;
  w2.register_hook([&](const Tensor&) { order.push_back("w2"); });
  std::vector<V> seen;
  const unsigned h = autograd::register_post_accumulate_grad_hook(x, [&](const Tensor& p) {
    EXPECT_TRUE(p.is_same(x));
    EXPECT_EQ(w.grad().defined(), !seen.empty());  // w (no hook) is written after the graph ran
    order.push_back("x");
    seen.push_back(values(p.grad()));
  });
  const unsigned removed =
      autograd::register_post_accumulate_grad_hook(x, [&](const Tensor&) { order.push_back("removed"); });
  autograd::remove_post_accumulate_grad_hook(x, removed);
  (x * w2.sin()).sum().backward({}, true);
  (x * w2.sin()).sum().backward();
  EXPECT_EQ(order, (std::vector<std::string>{"x", "w2", "x", "w2"}));
  const double s0 = std::sin(0.5), s1 = std::sin(0.25);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], (V{s0, s1}));
  EXPECT_EQ(seen[1], (V{2 * s0, 2 * s1}));  // accumulated into the earlier .grad
  autograd::remove_post_accumulate_grad_hook(x, h);
  (x * 2).sum().backward();
  EXPECT_EQ(seen.size(), 2u);
  // autograd::grad accumulates nothing: no hook runs
  autograd::register_post_accumulate_grad_hook(x, [&](const Tensor&) { order.push_back("grad()"); });
  autograd::grad({(x * 2).sum()}, {x});
  EXPECT_EQ(order.size(), 4u);
  expect_error([&] { autograd::register_post_accumulate_grad_hook(x * 2, [](const Tensor&) {}); },
               {"register_post_accumulate_grad_hook", "non-leaf"});
  expect_error([] { autograd::register_post_accumulate_grad_hook(vec({1.0}), [](const Tensor&) {}); },
               {"register_post_accumulate_grad_hook", "doesn't require gradient"});
  expect_error([&] { autograd::remove_post_accumulate_grad_hook(x, 9); }, {"Invalid handle 9"});
}

// ---- in-place ops on tensors requiring grad --------------------------------------------------

TEST(AutogradInplace, InPlaceOnANonLeafRebasesItsHistory) {
  const Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 2;
  const int64_t v0 = y._version();
  y.add_(1);
  EXPECT_EQ(y.grad_fn()->name(), "AddBackward1");
  EXPECT_EQ(y._version(), v0 + 1);
  y.mul_(y);  // the formula needs the old y for both inputs: a saved copy, not the written tensor
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward0");
  y.sum().backward();
  // y = (2x + 1)^2: dy/dx = 4 (2x + 1)
  EXPECT_EQ(values(x.grad()), (V{12.0, 20.0}));
}

TEST(AutogradInplace, InPlaceWithAnOtherRequiringGradMakesTheTargetANonLeaf) {
  const Tensor w = leaf({2.0, 3.0});
  Tensor acc = zeros({2}, kF64);
  acc.add_(w * w);
  acc.mul_(w);  // the old acc (w^2) is needed for w's gradient
  EXPECT_FALSE(acc.is_leaf());
  acc.sum().backward();
  EXPECT_EQ(values(w.grad()), (V{12.0, 27.0}));  // d(w^3) = 3 w^2
}

TEST(AutogradInplace, UnaryInPlaceSavesTheResult) {
  const Tensor x = leaf({0.5, 1.0});
  Tensor y = x * 1;
  y.exp_();
  EXPECT_EQ(y.grad_fn()->name(), "ExpBackward0");
  y.sum().backward();
  EXPECT_NEAR(values(x.grad())[0], std::exp(0.5), 1e-12);
  EXPECT_NEAR(values(x.grad())[1], std::exp(1.0), 1e-12);
}

TEST(AutogradInplace, InPlaceOnAViewRebasesTheBase) {
  const Tensor x = leaf({1.0, 2.0, 3.0, 4.0});
  Tensor y = x * 1;
  Tensor v = y.slice(0, 1, 3);
  EXPECT_TRUE(v.is_view());
  EXPECT_TRUE(v._base().is_same(y));
  v.mul_(10);
  EXPECT_EQ(y.grad_fn()->name(), "torch::autograd::CopySlices");
  EXPECT_EQ(v.grad_fn()->name(), "AsStridedBackward0");
  EXPECT_EQ(values(y), (V{1.0, 20.0, 30.0, 4.0}));
  (y * vec({1.0, 2.0, 3.0, 4.0})).sum().backward();
  EXPECT_EQ(values(x.grad()), (V{1.0, 20.0, 30.0, 4.0}));
}

TEST(AutogradInplace, ViewsCreatedBeforeAnInPlaceOpSeeTheNewHistory) {
  const Tensor x = leaf({1.0, 2.0, 3.0});
  Tensor y = x * 1;
  const Tensor first = y.select(0, 0);
  y.mul_(3);
  EXPECT_EQ(first.grad_fn()->name(), "AsStridedBackward0");
  first.backward();
  EXPECT_EQ(values(x.grad()), (V{3.0, 0.0, 0.0}));
}

TEST(AutogradInplace, CopyFillAndIndexPutIntoViewsOfATensorNotRequiringGrad) {
  const Tensor a = leaf({1.0, 2.0});
  const Tensor b = leaf({5.0});
  Tensor out = zeros({2, 3}, kF64);
  out.select(0, 0).slice(0, 0, 2).copy_(a * 2);  // out[0, :2] = 2a
  out.select(0, 1).fill_(7);
  out.index_put_({1, 2}, b * 3);                  // out[1, 2] = 3b
  EXPECT_FALSE(out.is_leaf());
  EXPECT_EQ(values(out), (V{2.0, 4.0, 0.0, 7.0, 7.0, 15.0}));
  (out * arange(6, kF64).view({2, 3})).sum().backward();
  EXPECT_EQ(values(a.grad()), (V{0.0, 2.0}));
  EXPECT_EQ(values(b.grad()), (V{15.0}));
}

TEST(AutogradInplace, MaskedFillAndZeroOnAView) {
  const Tensor x = leaf({1.0, 2.0, 3.0, 4.0});
  Tensor y = x * 2;
  Tensor v = y.view({2, 2});
  v.masked_fill_(tensor(std::vector<bool>{true, false, false, true}).view({2, 2}), 0.0);
  y.select(0, 1).zero_();
  y.sum().backward();
  EXPECT_EQ(values(y), (V{0.0, 0.0, 6.0, 0.0}));
  EXPECT_EQ(values(x.grad()), (V{0.0, 0.0, 2.0, 0.0}));
}

TEST(AutogradInplace, InPlaceOnAViewOfALeafRaises) {
  const Tensor x = leaf({1.0, 2.0});
  Tensor v = x.slice(0, 0, 1);
  expect_error([&] { v.add_(1); },
               {"add_", "a view of a leaf Variable that requires grad is being used in an in-place operation."});
  EXPECT_EQ(values(x), (V{1.0, 2.0}));
}

// As PyTorch's creation_meta: views made under no_grad are tracked, and an in-place op recorded
// on one (or on a view of one) raises rather than writing into the base outside its graph.
TEST(AutogradInplace, InPlaceWithGradOnAViewMadeUnderNoGradRaises) {
  const Tensor x = leaf({1.0, 2.0, 3.0});
  const Tensor w = leaf({2.0, 2.0});
  Tensor y = x * 1;
  Tensor buffer = zeros({3}, kF64);
  Tensor v, b;
  {
    NoGradGuard guard;
    v = y.slice(0, 0, 2);
    b = buffer.slice(0, 1, 3);
  }
  EXPECT_TRUE(v.is_view());
  EXPECT_TRUE(v._base().is_same(y));
  EXPECT_TRUE(v.requires_grad());  // as its base, without a history: a leaf
  EXPECT_TRUE(v.is_leaf());
  EXPECT_FALSE(b.requires_grad());
  const std::string direct = "A view was created in no_grad mode and is being modified inplace with grad mode enabled.";
  expect_error([&] { v.mul_(w); }, {"mul_", direct});
  expect_error([&] { v.mul_(2); }, {"mul_", direct});  // v requires grad: the write would be recorded
  expect_error([&] { b.copy_(w * 2); }, {"copy_", direct});
  Tensor vv = v.slice(0, 0, 1);  // a view of it, made with grad mode on, inherits its creation mode
  expect_error([&] { vv.add_(w.slice(0, 0, 1)); }, {"add_", direct});
  EXPECT_EQ(values(y), (V{1.0, 2.0, 3.0}));
  b.mul_(2);  // nothing requires grad: not recorded, allowed as in PyTorch
  {
    NoGradGuard guard;
    b.copy_(w * 2);  // view and write both under no_grad: allowed
  }
  EXPECT_EQ(values(buffer), (V{0.0, 4.0, 4.0}));
}

// As PyTorch: a view made under no_grad or in inference mode of a tensor that requires grad
// requires grad, as a leaf with no accumulator: ops on it in grad mode are recorded, and the
// gradients they send it reach neither its base nor a .grad of its own.
TEST(AutogradInplace, ViewsMadeWithoutRecordingRequireGradAndStopGradients) {
  for (bool inference : {false, true}) {
    SCOPED_TRACE(inference ? "inference mode" : "no_grad");
    const Tensor x = leaf({1.0, 2.0, 3.0});
    const Tensor w = leaf({4.0, 5.0});
    Tensor v, u;
    {
      std::optional<NoGradGuard> no_grad;
      std::optional<InferenceMode> inference_mode;
      if (inference) {
        inference_mode.emplace();
      } else {
        no_grad.emplace();
      }
      v = x.slice(0, 0, 2);
      u = x.detach().slice(0, 0, 2);
    }
    EXPECT_TRUE(v.requires_grad());
    EXPECT_TRUE(v.is_leaf());
    EXPECT_EQ(v.grad_fn(), nullptr);
    EXPECT_FALSE(v.is_inference());
    EXPECT_FALSE(u.requires_grad());
    const Tensor y = (v * w).sum();
    ASSERT_NE(y.grad_fn(), nullptr);
    y.backward();
    EXPECT_EQ(values(w.grad()), (V{1.0, 2.0}));
    EXPECT_FALSE(x.grad().defined());
    EXPECT_FALSE(v.grad().defined());
  }
}

TEST(AutogradInplace, ViewMadeUnderNoGradWhoseBaseIsRebasedRaisesOnGradFn) {
  const Tensor x = leaf({1.0, 2.0, 3.0});
  Tensor y = x * 1;
  Tensor v;
  {
    NoGradGuard guard;
    v = y.select(0, 0);
  }
  y.mul_(3);
  expect_error([&] { (void)v.grad_fn(); },
               "A view was created in no_grad mode and its base or another view of its base has been modified "
               "inplace with grad mode enabled.");
}

// As PyTorch: a view made in inference mode of a normal tensor is a normal tensor, recorded as a
// view made there; a view of an inference tensor (made anywhere) is an inference tensor and no view.
TEST(AutogradInplace, InferenceModeViewsFollowTheirBase) {
  const Tensor x = leaf({1.0, 2.0, 3.0});
  Tensor x2 = x * 2;
  const Tensor y = ones({3}, kF64);
  const int64_t y_version = y._version();
  Tensor vx, vy, t, vt;
  {
    InferenceMode guard;
    vx = x2.slice(0, 0, 2);
    vy = y.slice(0, 0, 2);
    t = ones({3}, kF64);
    vt = t.slice(0, 0, 2);
    EXPECT_TRUE(vx.is_view());
    EXPECT_FALSE(vx.is_inference());
    EXPECT_TRUE(vy.is_view());
    EXPECT_FALSE(vy.is_inference());
    EXPECT_FALSE(vt.is_view());
    EXPECT_TRUE(vt.is_inference());
    vy.add_(1);  // a normal tensor written in inference mode still counts the write
  }
  EXPECT_EQ(y._version(), y_version + 1);
  EXPECT_EQ(values(y), (V{2.0, 2.0, 1.0}));
  Tensor outside = t.slice(0, 1, 3);
  EXPECT_TRUE(outside.is_inference());
  expect_error([&] { outside.add_(1); }, "Inplace update to inference tensor outside InferenceMode is not allowed");
  // once its base's history changes, the view has no history of its own to regenerate from
  x2.mul_(3);
  expect_error([&] { (void)vx.grad_fn(); },
               "A view was created in inference mode and its base or another view of its base has been modified "
               "inplace in normal mode. Given that this use case is ambiguous and error-prone, it is forbidden. You "
               "can clarify your code by moving both the view and the inplace either both inside the inference_mode "
               "block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be "
               "tracked).");
}

// Inference tensors keep no version counter (in-place ops on them skip the increment); asking for
// one raises PyTorch's error.
TEST(AutogradInplace, InferenceTensorsTrackNoVersion) {
  Tensor t;
  {
    InferenceMode guard;
    t = ones({2}, kF64);
    t.add_(1);
    t.slice(0, 0, 1).mul_(3);
  }
  EXPECT_EQ(values(t), (V{6.0, 2.0}));
  expect_error([&] { (void)t._version(); }, {"_version", "Inference tensors do not track version counter."});
}

TEST(AutogradInplace, OutArgumentsWithInputsRequiringGradRaise) {
  const Tensor x = leaf({1.0, 2.0});
  Tensor out = empty({2}, kF64);
  expect_error([&] { add_out(out, x, x); },
               "add(): functions with out=... arguments don't support automatic differentiation, but one of the "
               "arguments requires grad.");
}

TEST(AutogradInplace, InferenceTensorsAreNotWrittenOrSavedOutsideInferenceMode) {
  Tensor t;
  {
    InferenceMode guard;
    t = ones({2}, kF64);
    t.add_(1);  // allowed inside
  }
  expect_error([&] { t.add_(1); }, {"add_", "Inplace update to inference tensor outside InferenceMode is not allowed"});
  const Tensor x = leaf({1.0, 2.0});
  expect_error([&] { (void)(x * t); }, "Inference tensors cannot be saved for backward");
  EXPECT_EQ(values(t + 1), (V{3.0, 3.0}));  // reading is fine
}

// ---- version counter errors --------------------------------------------------------------------

TEST(AutogradVersion, ModifyingASavedNonLeafNamesTheNodeAndBothVersions) {
  const Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 2;
  const Tensor z = y * y;  // saves y at version 0
  y.add_(1);  // y's history is now AddBackward1 (libtorch's Scalar overload), which the message names
  const std::string err = error_of([&] { z.sum().backward(); });
  for (const char* piece :
       {"one of the variables needed for gradient computation has been modified by an inplace operation",
        "[CPUDoubleType [2]]", "which is output 0 of AddBackward1", "is at version 1; expected version 0 instead"})
    EXPECT_NE(err.find(piece), std::string::npos) << piece << " not in: " << err;
  EXPECT_NE(err.find("MulBackward0"), std::string::npos) << err;
  EXPECT_FALSE(x.grad().defined());
}

// ---- anomaly mode ------------------------------------------------------------------------------

TEST(AutogradAnomaly, NaNInBackwardNamesTheNodeAndTheForwardOp) {
  const Tensor x = leaf({0.0, 1.0});
  EXPECT_FALSE(autograd::AnomalyMode::is_enabled());
  {
    autograd::DetectAnomalyGuard guard;
    EXPECT_TRUE(autograd::AnomalyMode::is_enabled());
    const Tensor y = x.sqrt();  // d sqrt(0) = inf, times the zero of the mask below gives NaN
    const Tensor z = (y * vec({0.0, 1.0})).sum();
    expect_error([&] { z.backward(); },
                 {"Function 'SqrtBackward0' returned nan values in its 0th output", "forward op 'sqrt'"});
  }
  EXPECT_FALSE(autograd::AnomalyMode::is_enabled());
  // Without anomaly mode the NaN goes through.
  (x.sqrt() * vec({0.0, 1.0})).sum().backward();
  EXPECT_TRUE(std::isnan(values(x.grad())[0]));
  const bool caught = autograd::detect_anomaly([&] {
    try {
      (x.sqrt() * vec({0.0, 1.0})).sum().backward();
    } catch (const Error&) {
      return true;
    }
    return false;
  });
  EXPECT_TRUE(caught);
}

// ---- threads -----------------------------------------------------------------------------------

TEST(AutogradThreads, ConcurrentBackwardOnIndependentGraphsAndSharedLeaves) {
  const Tensor shared = leaf({1.0, 2.0, 3.0});
  constexpr int kThreads = 4, kIters = 200;
  std::vector<std::thread> threads;
  std::vector<int> ok(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Tensor own = leaf({1.0, 1.0, 1.0});
      EXPECT_TRUE(is_grad_enabled());
      for (int i = 0; i < kIters; ++i) {
        const Tensor y = (shared * own * (t + 1)).sum();
        y.backward();
        if (i % 50 == 0) {
          NoGradGuard guard;  // grad mode is per thread
          EXPECT_FALSE((own * 2).requires_grad());
        }
      }
      ok[t] = values(own.grad()) == V{kIters * 1.0 * (t + 1), kIters * 2.0 * (t + 1), kIters * 3.0 * (t + 1)};
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(ok[t]) << "thread " << t;
  // every backward adds (1 + 2 + 3 + 4) to each element of the shared leaf's gradient
  EXPECT_EQ(values(shared.grad()), (V{kIters * 10.0, kIters * 10.0, kIters * 10.0}));
}

// ---- gradgradcheck -----------------------------------------------------------------------------

TEST(AutogradGradgradcheck, SecondDerivativesOfComposedOps) {
  const Tensor a = randn({2, 3}, kF64).requires_grad_();
  const Tensor b = randn({3}, kF64).requires_grad_();
  EXPECT_TRUE(autograd::gradgradcheck([](const variable_list& in) { return (in[0] * in[1]).exp().sum(1); }, {a, b}));
  EXPECT_TRUE(autograd::gradgradcheck([](const variable_list& in) { return (in[0].sin() / (in[1] + 3)); }, {a, b}));
  // linear in its input: the first-order gradient is constant and the check passes trivially
  EXPECT_TRUE(autograd::gradgradcheck([](const variable_list& in) { return in[0] * 2; }, {a}));
}

TEST(AutogradGradgradcheck, AWrongSecondDerivativeIsReported) {
  struct BadSquare : autograd::Function<BadSquare> {
    static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x) {
      ctx->save_for_backward({x});
      return x * x;
    }
    // Right first derivative, but computed from a detached x: its own derivative is lost.
    static variable_list backward(autograd::AutogradContext* ctx, variable_list g) {
      return {g[0] * ctx->get_saved_variables()[0].detach() * 2};
    }
  };
  const Tensor x = randn({3}, kF64).requires_grad_();
  EXPECT_TRUE(autograd::gradcheck([](const variable_list& in) { return BadSquare::apply(in[0]); }, {x}));
  const std::string err =
      error_of([&] { autograd::gradgradcheck([](const variable_list& in) { return BadSquare::apply(in[0]); }, {x}); });
  EXPECT_NE(err.find("Jacobian mismatch"), std::string::npos) << err;
}

// ---- bad input ---------------------------------------------------------------------------------

TEST(AutogradBadInput, EachRaisesAndLeavesGradUntouched) {
  const Tensor x = leaf({1.0, 2.0});
  expect_error([&] { (x * 2).backward(); }, {"backward", "grad can be implicitly created only for scalar outputs"});
  expect_error([&] { (x * 2).backward(vec({1.0})); }, {"Mismatch in shape", "[1]", "[2]"});
  const Tensor y = x.exp().sum();
  y.backward();
  const V before = values(x.grad());
  expect_error([&] { y.backward(); }, "Trying to backward through the graph a second time");
  EXPECT_EQ(values(x.grad()), before);
  expect_error([&] { autograd::grad({(x * 2).sum()}, {vec({1.0, 2.0})}); },
               "One of the differentiated Tensors does not require grad");
  expect_error([&] { vec({1.0}).backward(); }, "does not require grad and does not have a grad_fn");

  struct WrongCount : autograd::Function<WrongCount> {
    static Tensor forward(autograd::AutogradContext*, const Tensor& a, const Tensor& b) { return a * b; }
    static variable_list backward(autograd::AutogradContext*, variable_list g) { return {g[0]}; }
  };
  struct WrongShape : autograd::Function<WrongShape> {
    static Tensor forward(autograd::AutogradContext*, const Tensor& a) { return a * 2; }
    static variable_list backward(autograd::AutogradContext*, variable_list) { return {ones({3}, kF64)}; }
  };
  const Tensor w = leaf({3.0, 4.0});
  expect_error([&] { WrongCount::apply(x, w).sum().backward(); },
               {"function backward returned an incorrect number of gradients (expected 2, got 1)"});
  expect_error([&] { WrongShape::apply(w).sum().backward(); },
               {"returned an invalid gradient at index 0", "[3]", "[2]"});
  // an extra gradient is dropped only when undefined (a defaulted trailing forward argument)
  struct ExtraDefined : autograd::Function<ExtraDefined> {
    static Tensor forward(autograd::AutogradContext*, const Tensor& a) { return a * 2; }
    static variable_list backward(autograd::AutogradContext*, variable_list g) { return {g[0] * 2, g[0]}; }
  };
  expect_error([&] { ExtraDefined::apply(w).sum().backward(); },
               {"function backward returned an incorrect number of gradients (expected 1, got 2)"});
  EXPECT_FALSE(w.grad().defined());
  EXPECT_EQ(values(x.grad()), before);
}

// pytorch/examples' cpp/autograd: a forward whose trailing argument has a default, called without
// it, and a backward that returns an undefined gradient for it anyway.
TEST(AutogradEngine, CustomFunctionMayReturnUndefinedGradientsForOmittedArguments) {
  struct Scale : autograd::Function<Scale> {
    static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x, const Tensor& bias = Tensor()) {
      ctx->save_for_backward({x, bias});
      return bias.defined() ? x * 3 + bias : x * 3;
    }
    static variable_list backward(autograd::AutogradContext* ctx, variable_list g) {
      const Tensor bias = ctx->get_saved_variables()[1];
      return {g[0] * 3, bias.defined() ? g[0] : Tensor()};
    }
  };
  const Tensor x = leaf({1.0, 2.0});
  Scale::apply(x).sum().backward();
  EXPECT_EQ(values(x.grad()), (V{3.0, 3.0}));
  const Tensor b = leaf({0.5, 0.5});
  Scale::apply(x, b).sum().backward();
  EXPECT_EQ(values(x.grad()), (V{6.0, 6.0}));
  EXPECT_EQ(values(b.grad()), (V{1.0, 1.0}));
}

// PyTorch's layout contract: a dense leaf's .grad has the leaf's strides, whatever layout the
// last node produced (linear's weight gradient comes out of a transposed product).
TEST(AutogradEngine, LeafGradTakesTheLeafsLayout) {
  manual_seed(3);
  Tensor w = randn({4, 3}).requires_grad_();
  nn::functional::linear(randn({5, 3}), w).sum().backward();
  EXPECT_TRUE(w.grad().is_contiguous());
  Tensor cl = randn({2, 3, 4, 4}).contiguous(MemoryFormat::ChannelsLast).requires_grad_();
  (cl * 2).permute({0, 2, 3, 1}).contiguous().sum().backward();
  EXPECT_EQ(cl.grad().strides(), cl.strides());
  Tensor t = randn({3, 4}).t().requires_grad_();  // a transposed leaf keeps its strides too
  (t * t.detach()).sum().backward();
  EXPECT_EQ(t.grad().strides(), t.strides());
  EXPECT_TRUE(t.grad().allclose(t.detach()));
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
