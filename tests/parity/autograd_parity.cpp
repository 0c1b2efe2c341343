// Gradients against libtorch's: every op with a derivative, on random inputs (fixed seeds) in
// float32 and float64, with broadcasting shapes, transposed and strided leaves, a >64K-element
// case (threaded kernels), a random grad_output, node names, and second-order gradients.
//
// Tolerance: a gradient is a chain of ops, each rounding once, and reductions (sum, mean, mm)
// add up to K terms in a different order than libtorch: float32 allows 1e-5 relative plus
// K * 4 * 2^-24 absolute, float64 1e-12 relative plus K * 4 * 2^-53.
#include "parity/grad_cases.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using parity::Close;
using parity::to_torch;

namespace {

using grad_cases::Case;
using grad_cases::Domain;
using grad_cases::Layout;
constexpr double kFloatRtol = 1e-5;
parity::Tol grad_tol(ember::ScalarType dtype, int64_t k) { return grad_cases::grad_tol(dtype, k, kFloatRtol); }
void run_case(const Case& c, ember::ScalarType dtype, uint64_t seed) { grad_cases::run_case(c, dtype, seed, kFloatRtol); }

std::vector<Case> cases() {
  using E = std::vector<ember::Tensor>;
  using T = std::vector<torch::Tensor>;
  const Domain P = Domain::Positive;
  const Layout Tr = Layout::Transposed, St = Layout::Strided;
  return {
      {"add", {{{3, 4}}, {{4}}}, [](const E& v) { return ember::add(v[0], v[1], 2.5); },
       [](const T& v) { return torch::add(v[0], v[1], 2.5); }, "AddBackward0", 3},
      {"add scalar", {{{3, 4}}}, [](const E& v) { return v[0] + 1.5; }, [](const T& v) { return v[0] + 1.5; },
       "AddBackward1"},
      {"sub", {{{2, 1, 3}}, {{4, 1}, Domain::Any, Layout::Transposed}},
       [](const E& v) { return ember::sub(v[0], v[1], 0.5); }, [](const T& v) { return torch::sub(v[0], v[1], 0.5); },
       "SubBackward0", 6},
      {"sub scalar", {{{5}}}, [](const E& v) { return v[0] - 2; }, [](const T& v) { return v[0] - 2; }, "SubBackward1"},
      {"rsub", {{{5}}}, [](const E& v) { return ember::rsub(v[0], 2, 3); },
       [](const T& v) { return torch::rsub(v[0], 2, 3); }, "RsubBackward1"},
      {"rsub tensor", {{{2, 5}}, {{5}}}, [](const E& v) { return ember::rsub(v[0], v[1], 0.5); },
       [](const T& v) { return torch::rsub(v[0], v[1], 0.5); }, "RsubBackward0", 2},
      {"mul", {{{4, 3}, Domain::Any, Tr}, {{3}}}, [](const E& v) { return v[0] * v[1]; },
       [](const T& v) { return v[0] * v[1]; }, "MulBackward0", 4},
      {"mul no-grad other", {{{4, 3}}, {{4, 3}, Domain::Any, Layout::Contiguous, false}},
       [](const E& v) { return v[0] * v[1]; }, [](const T& v) { return v[0] * v[1]; }, "MulBackward0"},
      {"mul scalar", {{{4}}}, [](const E& v) { return v[0] * 3; }, [](const T& v) { return v[0] * 3; },
       "MulBackward1"},
      {"div", {{{2, 3}}, {{2, 1}, P}}, [](const E& v) { return v[0] / v[1]; },
       [](const T& v) { return v[0] / v[1]; }, "DivBackward0", 3},
      {"div scalar", {{{3}}}, [](const E& v) { return v[0] / 4; }, [](const T& v) { return v[0] / 4; },
       "DivBackward1"},
      {"neg", {{{3, 2}, Domain::Any, St}}, [](const E& v) { return -v[0]; }, [](const T& v) { return -v[0]; },
       "NegBackward0"},
      {"exp", {{{7}}}, [](const E& v) { return v[0].exp(); }, [](const T& v) { return v[0].exp(); }, "ExpBackward0"},
      {"log", {{{7}, P}}, [](const E& v) { return v[0].log(); }, [](const T& v) { return v[0].log(); },
       "LogBackward0"},
      {"sqrt", {{{7}, P}}, [](const E& v) { return v[0].sqrt(); }, [](const T& v) { return v[0].sqrt(); },
       "SqrtBackward0"},
      {"pow 3", {{{7}}}, [](const E& v) { return v[0].pow(3); }, [](const T& v) { return v[0].pow(3); },
       "PowBackward0"},
      {"pow -0.5", {{{7}, P}}, [](const E& v) { return v[0].pow(-0.5); }, [](const T& v) { return v[0].pow(-0.5); },
       "PowBackward0"},
      {"sin", {{{7}}}, [](const E& v) { return v[0].sin(); }, [](const T& v) { return v[0].sin(); }, "SinBackward0"},
      {"cos", {{{7}}}, [](const E& v) { return v[0].cos(); }, [](const T& v) { return v[0].cos(); }, "CosBackward0"},
      {"tanh", {{{7}}}, [](const E& v) { return v[0].tanh(); }, [](const T& v) { return v[0].tanh(); },
       "TanhBackward0"},
      {"sigmoid", {{{7}}}, [](const E& v) { return v[0].sigmoid(); }, [](const T& v) { return v[0].sigmoid(); },
       "SigmoidBackward0"},
      {"relu", {{{9}}}, [](const E& v) { return v[0].relu(); }, [](const T& v) { return v[0].relu(); },
       "ReluBackward0"},
      {"sum", {{{3, 4}, Domain::Any, Tr}}, [](const E& v) { return v[0].sum(); }, [](const T& v) { return v[0].sum(); },
       "SumBackward0"},
      {"sum dims", {{{2, 3, 4}}}, [](const E& v) { return v[0].sum({0, 2}); },
       [](const T& v) { return v[0].sum(std::vector<int64_t>{0, 2}); }, "SumBackward1"},
      {"sum keepdim", {{{2, 3, 4}}}, [](const E& v) { return v[0].sum({1}, true); },
       [](const T& v) { return v[0].sum(std::vector<int64_t>{1}, true); }, "SumBackward1"},
      {"mean", {{{2, 3}}}, [](const E& v) { return v[0].mean(); }, [](const T& v) { return v[0].mean(); },
       "MeanBackward0"},
      {"mean dims", {{{2, 3, 4}}}, [](const E& v) { return v[0].mean({-1}, true); },
       [](const T& v) { return v[0].mean(std::vector<int64_t>{-1}, true); }, "MeanBackward1"},
      {"view", {{{2, 6}}}, [](const E& v) { return v[0].view({3, 4}); }, [](const T& v) { return v[0].view({3, 4}); },
       "ViewBackward0"},
      {"reshape", {{{2, 6}, Domain::Any, Tr}}, [](const E& v) { return v[0].reshape({-1}); },
       [](const T& v) { return v[0].reshape({-1}); }},
      {"permute", {{{2, 3, 4}}}, [](const E& v) { return v[0].permute({1, 2, 0}); },
       [](const T& v) { return v[0].permute({1, 2, 0}); }, "PermuteBackward0"},
      {"transpose", {{{2, 3, 4}}}, [](const E& v) { return v[0].transpose(0, 2); },
       [](const T& v) { return v[0].transpose(0, 2); }, "TransposeBackward0"},
      {"t", {{{2, 3}}}, [](const E& v) { return v[0].t(); }, [](const T& v) { return v[0].t(); }},
      {"expand", {{{3, 1}}}, [](const E& v) { return v[0].expand({2, 3, 4}); },
       [](const T& v) { return v[0].expand({2, 3, 4}); }, "ExpandBackward0", 8},
      {"select", {{{3, 4}}}, [](const E& v) { return v[0].select(1, 2); },
       [](const T& v) { return v[0].select(1, 2); }, "SelectBackward0"},
      {"slice", {{{5, 4}}}, [](const E& v) { return v[0].slice(0, 1, 5, 2); },
       [](const T& v) { return v[0].slice(0, 1, 5, 2); }, "SliceBackward0"},
      {"squeeze", {{{3, 1, 2}}}, [](const E& v) { return v[0].squeeze(1); },
       [](const T& v) { return v[0].squeeze(1); }, "SqueezeBackward1"},
      {"unsqueeze", {{{3, 2}}}, [](const E& v) { return v[0].unsqueeze(0); },
       [](const T& v) { return v[0].unsqueeze(0); }, "UnsqueezeBackward0"},
      {"flatten", {{{2, 3, 4}}}, [](const E& v) { return v[0].flatten(1); },
       [](const T& v) { return v[0].flatten(1); }},
      {"mm", {{{5, 7}}, {{7, 3}, Domain::Any, Tr}}, [](const E& v) { return v[0].mm(v[1]); },
       [](const T& v) { return v[0].mm(v[1]); }, "MmBackward0", 7},
      {"matmul", {{{2, 5, 7}}, {{7, 3}}}, [](const E& v) { return v[0].matmul(v[1]); },
       [](const T& v) { return v[0].matmul(v[1]); }, nullptr, 10},
      {"matmul mv", {{{5, 7}}, {{7}}}, [](const E& v) { return v[0].matmul(v[1]); },
       [](const T& v) { return v[0].matmul(v[1]); }, nullptr, 7},
      {"linear", {{{4, 6}}, {{3, 6}}, {{3}}}, [](const E& v) { return ember::linear(v[0], v[1], v[2]); },
       [](const T& v) { return torch::linear(v[0], v[1], v[2]); }, nullptr, 6},
      {"to", {{{6}}}, [](const E& v) { return v[0].to(v[0].dtype() == ember::kDouble ? ember::kFloat : ember::kDouble); },
       [](const T& v) { return v[0].to(v[0].scalar_type() == torch::kDouble ? torch::kFloat : torch::kDouble); },
       "ToCopyBackward0"},
      {"clone", {{{6}}}, [](const E& v) { return v[0].clone(); }, [](const T& v) { return v[0].clone(); },
       "CloneBackward0"},
      {"contiguous", {{{3, 4}, Domain::Any, Tr}}, [](const E& v) { return v[0].contiguous(); },
       [](const T& v) { return v[0].contiguous(); }, "CloneBackward0"},
      {"large (threaded)", {{{300, 300}}, {{300}}},
       [](const E& v) { return (v[0] * v[1] + v[0].sin()).sum({1}); },
       [](const T& v) { return (v[0] * v[1] + v[0].sin()).sum(std::vector<int64_t>{1}); }, "SumBackward1", 300},
      {"composite", {{{4, 3}}, {{5, 3}}, {{5}}},
       [](const E& v) { return ember::linear(v[0], v[1], v[2]).tanh().mean({0}) * v[2].sigmoid(); },
       [](const T& v) { return torch::linear(v[0], v[1], v[2]).tanh().mean(std::vector<int64_t>{0}) * v[2].sigmoid(); }, "MulBackward0",
       12},
  };
}

// In-place ops on non-leaves and on views (history rebase through CopySlices / AsStridedBackward0).
std::vector<Case> inplace_cases() {
  using E = std::vector<ember::Tensor>;
  using T = std::vector<torch::Tensor>;
  return {
      {"mul_ on a non-leaf", {{{3, 4}}, {{4}}},
       [](const E& v) {
         ember::Tensor y = v[0] * 1;
         y.mul_(v[1]);
         return y.add_(v[0]);
       },
       [](const T& v) {
         torch::Tensor y = v[0] * 1;
         y.mul_(v[1]);
         return y.add_(v[0]);
       },
       "AddBackward0"},
      {"mul_ by a scalar, sub_ of a leaf, tanh_", {{{5}}, {{5}}},
       [](const E& v) {
         ember::Tensor y = v[0] * 0.5;
         y.mul_(3).sub_(v[1], 2);
         return y.tanh_();
       },
       [](const T& v) {
         torch::Tensor y = v[0] * 0.5;
         y.mul_(3).sub_(v[1], 2);
         return y.tanh_();
       },
       "TanhBackward0"},
      {"slice mul_", {{{3, 4}}, {{2}}},
       [](const E& v) {
         ember::Tensor y = v[0] * 1;
         y.slice(1, 1, 3).mul_(v[1]);
         return y;
       },
       [](const T& v) {
         torch::Tensor y = v[0] * 1;
         y.slice(1, 1, 3).mul_(v[1]);
         return y;
       },
       "torch::autograd::CopySlices"},
      {"select copy_", {{{3, 4}}, {{4}}},
       [](const E& v) {
         ember::Tensor y = v[0] * 2;
         y.select(0, 1).copy_(v[1].sin());
         return y;
       },
       [](const T& v) {
         torch::Tensor y = v[0] * 2;
         y.select(0, 1).copy_(v[1].sin());
         return y;
       },
       "torch::autograd::CopySlices"},
      {"transpose add_ then a view made before", {{{3, 4}}, {{3}}},
       [](const E& v) {
         ember::Tensor y = v[0] * 1;
         const ember::Tensor before = y.view({-1});
         y.t().add_(v[1]);
         return before * before;
       },
       [](const T& v) {
         torch::Tensor y = v[0] * 1;
         const torch::Tensor before = y.view({-1});
         y.t().add_(v[1]);
         return before * before;
       },
       "MulBackward0"},
      {"mul_ into a view of views", {{{4, 4}}, {{4}}},
       [](const E& v) {
         ember::Tensor y = v[0] * 1;
         y.view({2, 8}).view({4, 4}).t().narrow(0, 1, 2).mul_(v[1]);
         return y.tanh();
       },
       [](const T& v) {
         torch::Tensor y = v[0] * 1;
         y.view({2, 8}).view({4, 4}).t().narrow(0, 1, 2).mul_(v[1]);
         return y.tanh();
       },
       "TanhBackward0"},
      {"narrow masked_fill_ and zero_", {{{4, 3}}},
       [](const E& v) {
         ember::Tensor y = v[0] * 2;
         ember::Tensor top = y.narrow(0, 0, 2);
         top.masked_fill_(v[0].narrow(0, 0, 2).detach() > 0, 0.0);
         y.select(0, 3).zero_();
         return y;
       },
       [](const T& v) {
         torch::Tensor y = v[0] * 2;
         torch::Tensor top = y.narrow(0, 0, 2);
         top.masked_fill_(v[0].narrow(0, 0, 2).detach() > 0, 0.0);
         y.select(0, 3).zero_();
         return y;
       },
       "torch::autograd::CopySlices"},
      {"buffer filled through views", {{{2, 3}}, {{3}}},
       [](const E& v) {
         ember::Tensor buf = ember::zeros({4, 3}, v[0].options());
         buf.slice(0, 1, 3).copy_(v[0]);
         buf.index_put_({3}, v[1] * v[1]);
         const std::vector<std::optional<ember::Tensor>> row0{ember::zeros({1}, ember::TensorOptions().dtype(ember::kLong))};
         ember::index_put_(buf, row0, v[1].unsqueeze(0), /*accumulate=*/true);
         return buf.sigmoid();
       },
       [](const T& v) {
         torch::Tensor buf = torch::zeros({4, 3}, v[0].options());
         buf.slice(0, 1, 3).copy_(v[0]);
         buf.index_put_({3}, v[1] * v[1]);
         const c10::List<c10::optional<torch::Tensor>> row0({torch::zeros({1}, torch::kLong)});
         buf.index_put_(row0, v[1].unsqueeze(0), /*accumulate=*/true);
         return buf.sigmoid();
       },
       "SigmoidBackward0"},
      {"scatter_ into a buffer", {{{4, 3}}, {{2, 3}}},
       [](const E& v) {
         ember::Tensor y = v[0] * 1;
         return y.scatter_(0, ember::arange(6, ember::TensorOptions().dtype(ember::kLong)).reshape({2, 3}) % 4, v[1]);
       },
       [](const T& v) {
         torch::Tensor y = v[0] * 1;
         return y.scatter_(0, torch::arange(6, torch::kLong).reshape({2, 3}) % 4, v[1]);
       },
       "ScatterBackward0"},
      {"scatter_add_ and index_add_", {{{4, 3}}, {{2, 3}}},
       [](const E& v) {
         ember::Tensor y = v[0] * 1;
         const ember::Tensor idx = ember::arange(6, ember::TensorOptions().dtype(ember::kLong)).reshape({2, 3}) % 3;
         y.scatter_add_(1, idx, v[1] * v[1]);
         return y.index_add_(0, ember::arange(2, ember::TensorOptions().dtype(ember::kLong)) * 2 + 1, v[1].sin(), 0.5);
       },
       [](const T& v) {
         torch::Tensor y = v[0] * 1;
         const torch::Tensor idx = torch::arange(6, torch::kLong).reshape({2, 3}) % 3;
         y.scatter_add_(1, idx, v[1] * v[1]);
         return y.index_add_(0, torch::arange(2, torch::kLong) * 2 + 1, v[1].sin(), 0.5);
       },
       "IndexAddBackward0"},
  };
}

TEST(AutogradParity, InPlaceAndViewGradientsMatchLibtorch) {
  uint64_t seed = 5000;
  for (const Case& c : inplace_cases()) {
    for (ember::ScalarType dtype : {ember::kFloat, ember::kDouble}) run_case(c, dtype, seed += 10);
  }
}

TEST(AutogradParity, GradientsMatchLibtorch) {
  uint64_t seed = 1;
  for (const Case& c : cases()) {
    for (ember::ScalarType dtype : {ember::kFloat, ember::kDouble}) run_case(c, dtype, seed += 10);
  }
}

TEST(AutogradParity, SecondOrderGradientsMatchLibtorch) {
  const ember::Tensor x = parity::random({5}, ember::kDouble, 7).requires_grad_();
  const torch::Tensor tx = to_torch(x.detach()).requires_grad_();
  const ember::Tensor ey = (x.tanh() * x.exp() + x.pow(3) / (x * x + 1)).sum();
  const torch::Tensor ty = (tx.tanh() * tx.exp() + tx.pow(3) / (tx * tx + 1)).sum();
  const ember::Tensor eg = ember::autograd::grad({ey}, {x}, {}, std::nullopt, true)[0];
  const torch::Tensor tg = torch::autograd::grad({ty}, {tx}, {}, c10::nullopt, true)[0];
  EXPECT_TRUE(Close(eg.detach(), tg.detach(), grad_tol(ember::kDouble, 4)));
  const ember::Tensor eh = ember::autograd::grad({eg.sum()}, {x})[0];
  const torch::Tensor th = torch::autograd::grad({tg.sum()}, {tx})[0];
  EXPECT_TRUE(Close(eh, th, grad_tol(ember::kDouble, 8)));
}

}  // namespace

// Views made without recording (no_grad, inference mode) of a leaf, of a non-leaf and of a tensor
// not requiring grad: requires_grad, is_leaf, whether an in-place write with grad mode on raises,
// and where a gradient through the view goes, as libtorch.
TEST(AutogradParity, ViewsMadeWithoutRecordingMatchLibtorch) {
  struct Flags {
    bool requires_grad, is_leaf, write_raises, base_grad;
  };
  enum class Base { kLeaf, kNonLeaf, kPlain };
  for (bool inference : {false, true}) {
    for (Base kind : {Base::kLeaf, Base::kNonLeaf, Base::kPlain}) {
      SCOPED_TRACE(std::string(inference ? "inference mode" : "no_grad") + ", base " +
                   std::to_string(static_cast<int>(kind)));
      const ember::Tensor x = parity::random({4}, ember::kDouble, 11);
      const ember::Tensor ex = kind == Base::kPlain ? x : x.detach().requires_grad_();
      const torch::Tensor tx = kind == Base::kPlain ? to_torch(x) : to_torch(x).requires_grad_();
      const ember::Tensor eb = kind == Base::kNonLeaf ? ex * 2 : ex;
      const torch::Tensor tb = kind == Base::kNonLeaf ? tx * 2 : tx;
      ember::Tensor ev;
      torch::Tensor tv;
      if (inference) {
        ember::InferenceMode e_guard;
        c10::InferenceMode t_guard;
        ev = eb.slice(0, 1, 3);
        tv = tb.slice(0, 1, 3);
      } else {
        ember::NoGradGuard e_guard;
        torch::NoGradGuard t_guard;
        ev = eb.slice(0, 1, 3);
        tv = tb.slice(0, 1, 3);
      }
      const ember::Tensor ew = ember::ones({2}, ember::kDouble).requires_grad_();
      const torch::Tensor tw = torch::ones({2}, torch::kDouble).requires_grad_();
      if (ev.requires_grad()) (ev * ew).sum().backward();
      if (tv.requires_grad()) (tv * tw).sum().backward();
      bool e_raises = false, t_raises = false;
      try {
        ev.mul_(ew);
      } catch (const ember::Error&) {
        e_raises = true;
      }
      try {
        tv.mul_(tw);
      } catch (const c10::Error&) {
        t_raises = true;
      }
      const Flags e{ev.requires_grad(), ev.is_leaf(), e_raises, ex.grad().defined()};
      const Flags t{tv.requires_grad(), tv.is_leaf(), t_raises, tx.grad().defined()};
      EXPECT_EQ(e.requires_grad, t.requires_grad);
      EXPECT_EQ(e.is_leaf, t.is_leaf);
      EXPECT_EQ(e.write_raises, t.write_raises);
      EXPECT_EQ(e.base_grad, t.base_grad);
    }
  }
}

// requires_grad_ on views made without recording, as libtorch: a view's flag also derives from its
// base's (requires_grad_(false) leaves a view of a base requiring grad requiring grad), and the
// same calls raise.
TEST(AutogradParity, RequiresGradOfViewsMadeWithoutRecordingMatchesLibtorch) {
  enum class Base { kLeaf, kNonLeaf, kPlain };
  for (bool inference : {false, true}) {
    for (Base kind : {Base::kLeaf, Base::kNonLeaf, Base::kPlain}) {
      for (bool flag : {false, true}) {
        SCOPED_TRACE(std::string(inference ? "inference mode" : "no_grad") + ", base " +
                     std::to_string(static_cast<int>(kind)) + ", requires_grad_(" + (flag ? "true)" : "false)"));
        const ember::Tensor x = parity::random({4}, ember::kDouble, 12);
        const ember::Tensor ex = kind == Base::kPlain ? x : x.detach().requires_grad_();
        const torch::Tensor tx = kind == Base::kPlain ? to_torch(x) : to_torch(x).requires_grad_();
        const ember::Tensor eb = kind == Base::kNonLeaf ? ex * 2 : ex;
        const torch::Tensor tb = kind == Base::kNonLeaf ? tx * 2 : tx;
        ember::Tensor ev;
        torch::Tensor tv;
        if (inference) {
          ember::InferenceMode e_guard;
          c10::InferenceMode t_guard;
          ev = eb.slice(0, 1, 3);
          tv = tb.slice(0, 1, 3);
        } else {
          ember::NoGradGuard e_guard;
          torch::NoGradGuard t_guard;
          ev = eb.slice(0, 1, 3);
          tv = tb.slice(0, 1, 3);
        }
        bool e_raises = false, t_raises = false;
        try {
          ev.requires_grad_(flag);
        } catch (const ember::Error&) {
          e_raises = true;
        }
        try {
          tv.requires_grad_(flag);
        } catch (const c10::Error&) {
          t_raises = true;
        }
        EXPECT_EQ(e_raises, t_raises);
        EXPECT_EQ(ev.requires_grad(), tv.requires_grad());
        EXPECT_EQ(ev.is_leaf(), tv.is_leaf());
      }
    }
  }
}

// split, split_with_sizes, chunk and unbind, as libtorch: one node joins all outputs (its name),
// gradients with outputs left unused, double backward, and the errors of in-place writes into the
// outputs (of a non-leaf, of a leaf, of a tensor not requiring grad, after the base was written,
// and made under no_grad).
TEST(AutogradParity, MultiOutputViewsMatchLibtorch) {
  struct Op {
    const char* name;
    std::function<std::vector<ember::Tensor>(const ember::Tensor&)> ember;
    std::function<std::vector<torch::Tensor>(const torch::Tensor&)> torch;
  };
  const std::vector<Op> ops = {
      {"split", [](const ember::Tensor& x) { return x.split(2, 1); },
       [](const torch::Tensor& x) { return x.split(2, 1); }},
      {"split_with_sizes", [](const ember::Tensor& x) { return x.split_with_sizes({1, 3, 1}, 1); },
       [](const torch::Tensor& x) { return x.split_with_sizes({1, 3, 1}, 1); }},
      {"chunk", [](const ember::Tensor& x) { return x.chunk(3, -1); },
       [](const torch::Tensor& x) { return x.chunk(3, -1); }},
      {"unbind", [](const ember::Tensor& x) { return x.unbind(1); },
       [](const torch::Tensor& x) { return x.unbind(1); }},
  };
  // The error a write raises (each case here raises): Ember's message holds libtorch's.
  const auto same_error = [](const char* where, const auto& ember_write, const auto& torch_write) {
    SCOPED_TRACE(where);
    std::string expected = "(no error)";
    try {
      torch_write();
    } catch (const c10::Error& e) {
      expected = e.what_without_backtrace();
    }
    std::string got = "(no error)";
    try {
      ember_write();
    } catch (const ember::Error& e) {
      got = e.what();
    }
    EXPECT_NE(expected, "(no error)") << "Ember: " << got;
    EXPECT_NE(got.find(expected), std::string::npos) << "libtorch: " << expected << "\nEmber: " << got;
  };
  uint64_t seed = 900;
  for (const Op& op : ops) {
    SCOPED_TRACE(op.name);
    const ember::Tensor x = parity::random({3, 5}, ember::kDouble, ++seed).requires_grad_();
    const torch::Tensor tx = to_torch(x.detach()).requires_grad_();
    const std::vector<ember::Tensor> eo = op.ember(x * 1.5);
    const std::vector<torch::Tensor> to = op.torch(tx * 1.5);
    ASSERT_EQ(eo.size(), to.size());
    for (size_t i = 0; i < eo.size(); ++i) {
      ASSERT_TRUE(eo[i].grad_fn());
      EXPECT_EQ(eo[i].grad_fn()->name(), to[i].grad_fn()->name());
      EXPECT_EQ(eo[i].grad_fn(), eo[0].grad_fn());  // one node
    }
    // the middle outputs unused
    const ember::Tensor el = eo.front().pow(3).sum() + (eo.back() * eo.back()).sum();
    const torch::Tensor tl = to.front().pow(3).sum() + (to.back() * to.back()).sum();
    const ember::Tensor eg = ember::autograd::grad({el}, {x}, {}, std::nullopt, true)[0];
    const torch::Tensor tg = torch::autograd::grad({tl}, {tx}, {}, c10::nullopt, true)[0];
    EXPECT_TRUE(Close(eg.detach(), tg.detach(), grad_tol(ember::kDouble, 2)));
    EXPECT_TRUE(Close(ember::autograd::grad({eg.sum()}, {x})[0], torch::autograd::grad({tg.sum()}, {tx})[0],
                      grad_tol(ember::kDouble, 2)));

    const ember::Tensor ew = ember::ones({1}, ember::kDouble).requires_grad_();
    const torch::Tensor tw = torch::ones({1}, torch::kDouble).requires_grad_();
    const auto write = [&](const char* where, std::vector<ember::Tensor> e, std::vector<torch::Tensor> t) {
      const ember::Tensor e1 = e[1];
      const torch::Tensor t1 = t[1];
      same_error(where, [&] { ember::Tensor(e1).mul_(2); }, [&] { torch::Tensor(t1).mul_(2); });
    };
    write("non-leaf", op.ember(x * 1.5), op.torch(tx * 1.5));
    write("leaf", op.ember(x), op.torch(tx));
    {                                              // of a tensor not requiring grad, with an operand that does
      const std::vector<ember::Tensor> e = op.ember(x.detach());
      const std::vector<torch::Tensor> t = op.torch(tx.detach());
      ember::Tensor e0 = e[0].narrow(0, 0, 2);  // a view of an output is one too
      torch::Tensor t0 = t[0].narrow(0, 0, 2);
      same_error("not requiring grad", [&] { e0.add_(ew); }, [&] { t0.add_(tw); });
      EXPECT_FALSE(e[0].requires_grad());
    }
    {  // after the base was written in place, reading an output's history raises
      ember::Tensor eb = x * 1.5;
      torch::Tensor tb = tx * 1.5;
      const std::vector<ember::Tensor> e = op.ember(eb);
      const std::vector<torch::Tensor> t = op.torch(tb);
      eb.mul_(2);
      tb.mul_(2);
      same_error("base written", [&] { (void)e[0].grad_fn(); }, [&] { (void)t[0].grad_fn(); });
    }
    {  // made under no_grad: views as any other made there
      const ember::Tensor eb = x * 1.5;
      const torch::Tensor tb = tx * 1.5;
      std::vector<ember::Tensor> e;
      std::vector<torch::Tensor> t;
      {
        ember::NoGradGuard e_guard;
        torch::NoGradGuard t_guard;
        e = op.ember(eb);
        t = op.torch(tb);
      }
      EXPECT_EQ(e[0].requires_grad(), t[0].requires_grad());
      EXPECT_EQ(e[0].is_leaf(), t[0].is_leaf());
      write("no_grad", e, t);
    }
  }
}

// The nodes of multi-output ops and of their recorded backward (create_graph) are libtorch's, and
// integer results (indices) have none in either.
TEST(AutogradParity, MultiOutputNodeNamesMatchLibtorch) {
  using E = std::vector<ember::Tensor>;
  using T = std::vector<torch::Tensor>;
  const auto ep = [](const std::tuple<ember::Tensor, ember::Tensor>& t) { return E{std::get<0>(t), std::get<1>(t)}; };
  const auto tp = [](const std::tuple<torch::Tensor, torch::Tensor>& t) { return T{std::get<0>(t), std::get<1>(t)}; };
  struct Op {
    const char* name;
    std::function<E(const ember::Tensor&)> ember;
    std::function<T(const torch::Tensor&)> torch;
    // vectors defined up to sign (eigh, svd): LAPACK's choices may differ, so do gradients through them
    bool names_only = false;
  };
  const std::vector<Op> ops = {
      {"max.dim", [&](const auto& x) { return ep(x.max(1)); }, [&](const auto& x) { return tp(x.max(1)); }},
      {"min.dim keepdim", [&](const auto& x) { return ep(x.min(0, true)); }, [&](const auto& x) { return tp(x.min(0, true)); }},
      {"sort", [&](const auto& x) { return ep(x.sort(1, true)); }, [&](const auto& x) { return tp(x.sort(1, true)); }},
      {"topk", [&](const auto& x) { return ep(x.topk(2)); }, [&](const auto& x) { return tp(x.topk(2)); }},
      {"kthvalue", [&](const auto& x) { return ep(x.kthvalue(2, 0)); }, [&](const auto& x) { return tp(x.kthvalue(2, 0)); }},
      {"median.dim", [&](const auto& x) { return ep(x.median(1)); }, [&](const auto& x) { return tp(x.median(1)); }},
      {"nanmedian.dim", [&](const auto& x) { return ep(x.nanmedian(0, true)); },
       [&](const auto& x) { return tp(x.nanmedian(0, true)); }},
      {"mode", [&](const auto& x) { return ep(x.mode(1)); }, [&](const auto& x) { return tp(x.mode(1)); }},
      {"cummax", [&](const auto& x) { return ep(x.cummax(1)); }, [&](const auto& x) { return tp(x.cummax(1)); }},
      {"cummin", [&](const auto& x) { return ep(x.cummin(0)); }, [&](const auto& x) { return tp(x.cummin(0)); }},
      {"var_mean", [&](const auto& x) { return ep(ember::var_mean(x, {1})); },
       [&](const auto& x) { return tp(torch::var_mean(x, {1})); }},
      {"std_mean", [&](const auto& x) { return ep(ember::std_mean(x, {0}, 1, true)); },
       [&](const auto& x) { return tp(torch::std_mean(x, {0}, 1, true)); }},
      {"split", [](const auto& x) { return x.split(2, 1); }, [](const auto& x) { return x.split(2, 1); }},
      {"split_with_sizes", [](const auto& x) { return x.split_with_sizes({1, 3, 1}, 1); },
       [](const auto& x) { return x.split_with_sizes({1, 3, 1}, 1); }},
      {"chunk", [](const auto& x) { return x.chunk(2, 0); }, [](const auto& x) { return x.chunk(2, 0); }},
      {"unbind", [](const auto& x) { return x.unbind(1); }, [](const auto& x) { return x.unbind(1); }},
      {"frexp", [&](const auto& x) { return ep(x.frexp()); }, [&](const auto& x) { return tp(x.frexp()); }},
      {"median", [](const auto& x) { return E{x.median()}; }, [](const auto& x) { return T{x.median()}; }},
      {"nanmedian", [](const auto& x) { return E{x.nanmedian()}; }, [](const auto& x) { return T{x.nanmedian()}; }},
      {"max", [](const auto& x) { return E{x.max()}; }, [](const auto& x) { return T{x.max()}; }},
      // the linalg decompositions and solvers, on 4 x 4 matrices made of x
      {"linalg_det", [](const auto& x) { return E{ember::linalg_det(x.narrow(1, 0, 4))}; },
       [](const auto& x) { return T{torch::linalg_det(x.narrow(1, 0, 4))}; }},
      {"linalg_slogdet", [&](const auto& x) { return ep(ember::linalg_slogdet(x.narrow(1, 0, 4))); },
       [&](const auto& x) { return tp(torch::linalg_slogdet(x.narrow(1, 0, 4))); }},
      {"linalg_inv_ex", [&](const auto& x) { return ep(ember::linalg_inv_ex(x.narrow(1, 0, 4))); },
       [&](const auto& x) { return tp(torch::linalg_inv_ex(x.narrow(1, 0, 4))); }},
      {"linalg_solve_ex", [&](const auto& x) { return ep(ember::linalg_solve_ex(x.narrow(1, 0, 4), x)); },
       [&](const auto& x) { return tp(torch::linalg_solve_ex(x.narrow(1, 0, 4), x)); }},
      {"linalg_solve_triangular",
       [](const auto& x) { return E{ember::linalg_solve_triangular(x.narrow(1, 0, 4) + 4 * ember::eye(4, x.options()),
                                                                   x, true)}; },
       [](const auto& x) { return T{torch::linalg_solve_triangular(x.narrow(1, 0, 4) + 4 * torch::eye(4, x.options()),
                                                                   x, true)}; }},
      {"linalg_lu_factor", [&](const auto& x) { return ep(ember::linalg_lu_factor(x.narrow(1, 0, 4))); },
       [&](const auto& x) { return tp(torch::linalg_lu_factor(x.narrow(1, 0, 4))); }},
      {"linalg_cholesky_ex",
       [&](const auto& x) { return ep(ember::linalg_cholesky_ex(x.matmul(x.mT()) + ember::eye(4, x.options()))); },
       [&](const auto& x) { return tp(torch::linalg_cholesky_ex(x.matmul(x.mT()) + torch::eye(4, x.options()))); }},
      {"linalg_qr", [&](const auto& x) { return ep(ember::linalg_qr(x.mT())); },
       [&](const auto& x) { return tp(torch::linalg_qr(x.mT())); }},
      {"linalg_eigh", [&](const auto& x) { return ep(ember::linalg_eigh(x.matmul(x.mT()))); },
       [&](const auto& x) { return tp(torch::linalg_eigh(x.matmul(x.mT()))); }, true},
      {"linalg_svd",
       [](const auto& x) {
         const auto [u, s, vh] = ember::linalg_svd(x, false);
         return E{u, s, vh};
       },
       [](const auto& x) {
         const auto [u, s, vh] = torch::linalg_svd(x, false);
         return T{u, s, vh};
       },
       true},
  };
  uint64_t seed = 970;
  for (const Op& op : ops) {
    SCOPED_TRACE(op.name);
    const ember::Tensor x = parity::random({4, 5}, ember::kDouble, ++seed).requires_grad_();
    const torch::Tensor tx = to_torch(x.detach()).requires_grad_();
    const E eo = op.ember(x);
    const T to = op.torch(tx);
    ASSERT_EQ(eo.size(), to.size());
    for (size_t i = 0; i < eo.size(); ++i) {
      ASSERT_EQ(eo[i].grad_fn() != nullptr, to[i].grad_fn() != nullptr) << "output " << i;
      if (!to[i].grad_fn()) continue;
      EXPECT_EQ(eo[i].grad_fn()->name(), to[i].grad_fn()->name());
      if (op.names_only) continue;
      // the recorded backward through this output alone (none for a real slogdet's sign: both raise)
      const ember::Tensor ev = ember::ones_like(eo[i]).requires_grad_();
      const torch::Tensor tv = torch::ones_like(to[i]).requires_grad_();
      torch::Tensor tg;
      try {
        tg = torch::autograd::grad({to[i]}, {tx}, {tv}, true, true)[0];
      } catch (const c10::Error&) {
        EXPECT_THROW(ember::autograd::grad({eo[i]}, {x}, {ev}, true, true), ember::Error) << "output " << i;
        continue;
      }
      const ember::Tensor eg = ember::autograd::grad({eo[i]}, {x}, {ev}, true, true)[0];
      EXPECT_EQ(eg.grad_fn()->name(), tg.grad_fn()->name()) << "output " << i;
      EXPECT_TRUE(Close(eg.detach(), tg.detach(), grad_tol(ember::kDouble, 4)));
    }
  }
}

// mul by a Scalar records MulBackward1; its recorded backward multiplies by the scalar as a 0-dim
// tensor, a MulBackward0, as libtorch's.
TEST(AutogradParity, MulByScalarDoubleBackwardNodeMatchesLibtorch) {
  const ember::Tensor x = parity::random({3, 4}, ember::kDouble, 990).requires_grad_();
  const torch::Tensor tx = to_torch(x.detach()).requires_grad_();
  const ember::Tensor ey = x * 2;
  const torch::Tensor ty = tx * 2;
  EXPECT_EQ(ey.grad_fn()->name(), ty.grad_fn()->name());  // MulBackward1
  const ember::Tensor ev = ember::ones_like(ey).requires_grad_();
  const torch::Tensor tv = torch::ones_like(ty).requires_grad_();
  const ember::Tensor eg = ember::autograd::grad({ey}, {x}, {ev}, true, true)[0];
  const torch::Tensor tg = torch::autograd::grad({ty}, {tx}, {tv}, true, true)[0];
  EXPECT_EQ(eg.grad_fn()->name(), tg.grad_fn()->name());  // MulBackward0
  EXPECT_TRUE(Close(eg.detach(), tg.detach(), grad_tol(ember::kDouble, 1)));
  // and through a chain: the gradient of exp(x * 2.5) records MulBackward0 for the scalar product
  const ember::Tensor eh = ember::autograd::grad({(x * 2.5).exp().sum()}, {x}, {}, true, true)[0];
  const torch::Tensor th = torch::autograd::grad({(tx * 2.5).exp().sum()}, {tx}, {}, true, true)[0];
  EXPECT_EQ(eh.grad_fn()->name(), th.grad_fn()->name());
  EXPECT_TRUE(Close(eh.detach(), th.detach(), grad_tol(ember::kDouble, 2)));
  EXPECT_TRUE(Close(ember::autograd::grad({eh.sum()}, {x})[0], torch::autograd::grad({th.sum()}, {tx})[0],
                    grad_tol(ember::kDouble, 4)));
}

// div by a Scalar records DivBackward1; its recorded backward divides by the scalar as a 0-dim
// tensor, a DivBackward0, as libtorch's.
TEST(AutogradParity, DivByScalarDoubleBackwardNodeMatchesLibtorch) {
  const ember::Tensor x = parity::random({3, 4}, ember::kDouble, 991).requires_grad_();
  const torch::Tensor tx = to_torch(x.detach()).requires_grad_();
  const ember::Tensor ey = x / 2.5;
  const torch::Tensor ty = tx / 2.5;
  EXPECT_EQ(ey.grad_fn()->name(), ty.grad_fn()->name());  // DivBackward1
  const ember::Tensor ev = ember::ones_like(ey).requires_grad_();
  const torch::Tensor tv = torch::ones_like(ty).requires_grad_();
  const ember::Tensor eg = ember::autograd::grad({ey}, {x}, {ev}, true, true)[0];
  const torch::Tensor tg = torch::autograd::grad({ty}, {tx}, {tv}, true, true)[0];
  EXPECT_EQ(eg.grad_fn()->name(), tg.grad_fn()->name());  // DivBackward0
  EXPECT_TRUE(Close(eg.detach(), tg.detach(), grad_tol(ember::kDouble, 1)));
  EXPECT_TRUE(Close(ember::autograd::grad({eg.sum()}, {ev})[0], torch::autograd::grad({tg.sum()}, {tv})[0],
                    grad_tol(ember::kDouble, 1)));
}

// The recurrent cells: on the CPU libtorch has no fused cell either, so their results' nodes are
// those of the gate arithmetic (LSTMCell: h' MulBackward0, c' AddBackward0; GRUCell: AddBackward0).
TEST(AutogradParity, RecurrentCellNodeNamesMatchLibtorch) {
  const ember::Tensor x = parity::random({2, 4}, ember::kFloat, 992), h = parity::random({2, 3}, ember::kFloat, 993);
  const torch::Tensor tx = to_torch(x), th = to_torch(h);
  ember::nn::LSTMCell lstm(4, 3);
  torch::nn::LSTMCell tlstm(4, 3);
  const auto [eh, ec] = lstm->forward(x, std::make_tuple(h, h));
  const auto [teh, tec] = tlstm->forward(tx, std::make_tuple(th, th));
  EXPECT_EQ(eh.grad_fn()->name(), teh.grad_fn()->name());
  EXPECT_EQ(ec.grad_fn()->name(), tec.grad_fn()->name());
  ember::nn::GRUCell gru(4, 3);
  torch::nn::GRUCell tgru(4, 3);
  EXPECT_EQ(gru->forward(x, h).grad_fn()->name(), tgru->forward(tx, th).grad_fn()->name());
}

// var_mean and std_mean, as libtorch: one node for both results (its name), gradients when either
// result alone is used or both, and second-order gradients.
TEST(AutogradParity, VarMeanAndStdMeanMatchLibtorch) {
  uint64_t seed = 950;
  for (bool take_std : {false, true}) {
    for (int use : {0, 1, 2}) {  // var (std) only, mean only, both
      SCOPED_TRACE(std::string(take_std ? "std_mean" : "var_mean") + ", use " + std::to_string(use));
      const ember::Tensor x = parity::random({4, 6}, ember::kDouble, ++seed).requires_grad_();
      const torch::Tensor tx = to_torch(x.detach()).requires_grad_();
      auto [ev, em] = take_std ? ember::std_mean(x, {1}, 1, true) : ember::var_mean(x, {1}, 1, true);
      auto [tv, tm] = take_std ? torch::std_mean(tx, {1}, 1, true) : torch::var_mean(tx, {1}, 1, true);
      ASSERT_TRUE(ev.grad_fn());
      EXPECT_EQ(ev.grad_fn()->name(), tv.grad_fn()->name());
      EXPECT_EQ(ev.grad_fn(), em.grad_fn());
      const ember::Tensor el = use == 0 ? ev.pow(2).sum() : use == 1 ? em.pow(3).sum() : (ev * em).sum();
      const torch::Tensor tl = use == 0 ? tv.pow(2).sum() : use == 1 ? tm.pow(3).sum() : (tv * tm).sum();
      const ember::Tensor eg = ember::autograd::grad({el}, {x}, {}, std::nullopt, true)[0];
      const torch::Tensor tg = torch::autograd::grad({tl}, {tx}, {}, c10::nullopt, true)[0];
      EXPECT_TRUE(Close(eg.detach(), tg.detach(), grad_tol(ember::kDouble, 6)));
      EXPECT_TRUE(Close(ember::autograd::grad({eg.pow(2).sum()}, {x})[0],
                        torch::autograd::grad({tg.pow(2).sum()}, {tx})[0], grad_tol(ember::kDouble, 36)));
    }
  }
}

// The version counter, as libtorch's: a factory's result and a copy (clone, contiguous, to) start
// at 0 whatever fill or copy made them, and each in-place write adds one.
TEST(AutogradParity, FactoriesAndCopiesStartAtVersionZero) {
  const ember::Tensor m = parity::random({3, 40}, ember::kFloat, 970);
  const torch::Tensor tm = to_torch(m);
  const std::vector<std::pair<std::string, std::pair<ember::Tensor, torch::Tensor>>> cases = {
      {"empty", {ember::empty({3}), torch::empty({3})}},
      {"zeros", {ember::zeros({3}), torch::zeros({3})}},
      {"ones", {ember::ones({3}), torch::ones({3})}},
      {"full", {ember::full({3}, 2.5), torch::full({3}, 2.5)}},
      {"eye", {ember::eye(3), torch::eye(3)}},
      {"arange", {ember::arange(5), torch::arange(5)}},
      {"linspace", {ember::linspace(0, 1, 5), torch::linspace(0, 1, 5)}},
      {"rand", {ember::rand({300}), torch::rand({300})}},
      {"randn", {ember::randn({300}), torch::randn({300})}},  // its vector path (from 16 elements)
      {"normal", {ember::normal(1.0, 2.0, {300}), torch::normal(1.0, 2.0, {300})}},
      {"normal of tensors", {ember::normal(m, m.abs()), at::normal(tm, tm.abs(), c10::nullopt)}},
      {"randint", {ember::randint(5, {3}), torch::randint(5, {3})}},
      {"randperm", {ember::randperm(4), torch::randperm(4)}},
      {"zeros_like", {ember::zeros_like(m), torch::zeros_like(tm)}},
      {"ones_like", {ember::ones_like(m), torch::ones_like(tm)}},
      {"full_like", {ember::full_like(m, 3), torch::full_like(tm, 3)}},
      {"rand_like", {ember::rand_like(m), torch::rand_like(tm)}},
      {"randn_like", {ember::randn_like(m), torch::randn_like(tm)}},
      {"ones requiring grad", {ember::ones({2}, ember::TensorOptions().requires_grad(true)),
                               torch::ones({2}, torch::TensorOptions().requires_grad(true))}},
      {"clone", {m.clone(), tm.clone()}},
      {"contiguous", {m.t().contiguous(), tm.t().contiguous()}},
      {"to double", {m.to(ember::kDouble), tm.to(torch::kDouble)}},
      {"channels_last", {m.view({1, 3, 5, 8}).contiguous(ember::MemoryFormat::ChannelsLast),
                         tm.view({1, 3, 5, 8}).contiguous(torch::MemoryFormat::ChannelsLast)}},
  };
  for (const auto& [name, pair] : cases) EXPECT_EQ(pair.first._version(), pair.second._version()) << name;
  // libtorch's C++ torch::tensor({...}) returns version 2 (its copies count); Python's torch.tensor
  // and Ember's tensor() start at 0.
  EXPECT_EQ(ember::tensor({1.0, 2.0})._version(), 0);
  ember::Tensor e = ember::zeros({3});
  torch::Tensor t = torch::zeros({3});
  e.add_(1), t.add_(1);
  e.mul_(2), t.mul_(2);
  EXPECT_EQ(e._version(), t._version());
  EXPECT_EQ(e.clone()._version(), t.clone()._version());
}

// div's gradient for the divisor divides twice, as libtorch's (-grad * ((self / other) / other)):
// through other * other, float16 divisors above 256 overflowed to a zero gradient. The broadcast
// divisor's gradient is also summed over the rows, as the sweep's div.backward row does.
TEST(AutogradParity, DivFloat16DivisorGradientAbove256) {
  const ember::Tensor x = parity::random({16, 8}, ember::kFloat, 994) * 50;
  const ember::Tensor other = (parity::random({1, 8}, ember::kFloat, 995) + 2) * 80 + 260;  // [260, 580)
  const ember::Tensor g = parity::random({16, 8}, ember::kHalf, 996);
  const ember::Tensor ex = x.to(ember::kHalf).requires_grad_(), eo = other.to(ember::kHalf).requires_grad_();
  const torch::Tensor tx = to_torch(ex.detach()).requires_grad_(), to = to_torch(eo.detach()).requires_grad_();
  ember::autograd::backward({ex / eo}, {g});
  torch::autograd::backward({tx / to}, {to_torch(g)});
  EXPECT_TRUE(Close(ex.grad(), tx.grad()));
  EXPECT_TRUE(Close(eo.grad(), to.grad(), {4e-3, 1e-5}));  // the row sums round differently
  EXPECT_GT(eo.grad().abs().min().item<float>(), 0.0f);
}

// masked_select of a transposed input: the gradient lands at the mask's positions of the
// logical (row-major) order. libtorch 1.13's own gradient for a transposed input is scattered in
// memory order (wrong: torch.zeros(n, n)[mask] = grad disagrees), so the reference is libtorch's
// gradient of the same values made contiguous.
TEST(AutogradParity, MaskedSelectOfTransposedInputGradient) {
  ember::Generator gen(997);
  const ember::Tensor mask = ember::randint(0, 2, {32, 32}, &gen, ember::TensorOptions().dtype(ember::kBool));
  for (ember::ScalarType dt : {ember::kFloat, ember::kHalf}) {
    const ember::Tensor x = parity::random({32, 32}, dt, 998).t().requires_grad_();
    const ember::Tensor y = x.masked_select(mask);
    const ember::Tensor g = parity::random({y.numel()}, dt, 999);
    ember::autograd::backward({y}, {g});
    const torch::Tensor tx = to_torch(x.detach()).contiguous().requires_grad_();
    torch::autograd::backward({tx.masked_select(to_torch(mask))}, {to_torch(g)});
    EXPECT_TRUE(Close(x.grad(), tx.grad())) << dt;
  }
}

// Custom functions (autograd::Function), written once for each framework: what backward receives
// for an output that got no gradient (set_materialize_grads), an input modified in place
// (mark_dirty: a non-leaf, a view, a leaf, one not returned) and an input returned unchanged.
#define CUSTOM_FUNCTIONS(AG, Tensor)                                                                   \
  struct TwoOutputs : AG::Function<TwoOutputs> {                                                       \
    static inline bool second_defined = false;                                                         \
    static AG::variable_list forward(AG::AutogradContext* ctx, const Tensor& x, bool materialize) {    \
      ctx->set_materialize_grads(materialize);                                                         \
      return {x * 2, x * 3};                                                                           \
    }                                                                                                  \
    static AG::variable_list backward(AG::AutogradContext*, AG::variable_list g) {                     \
      second_defined = g[1].defined();                                                                 \
      return {second_defined ? g[0] * 2 + g[1] * 3 : g[0] * 2, Tensor()};                              \
    }                                                                                                  \
  };                                                                                                   \
  struct DoubleInPlace : AG::Function<DoubleInPlace> {                                                 \
    static Tensor forward(AG::AutogradContext* ctx, Tensor x) {                                        \
      x.mul_(2);                                                                                       \
      ctx->mark_dirty({x});                                                                            \
      return x;                                                                                        \
    }                                                                                                  \
    static AG::variable_list backward(AG::AutogradContext*, AG::variable_list g) { return {g[0] * 2}; } \
  };                                                                                                   \
  struct ReturnsInput : AG::Function<ReturnsInput> {                                                   \
    static Tensor forward(AG::AutogradContext*, const Tensor& x) { return x; }                         \
    static AG::variable_list backward(AG::AutogradContext*, AG::variable_list g) { return {g[0] * 5}; } \
  };                                                                                                   \
  struct DirtyNotReturned : AG::Function<DirtyNotReturned> {                                           \
    static Tensor forward(AG::AutogradContext* ctx, Tensor x, const Tensor& y) {                       \
      x.add_(1);                                                                                       \
      ctx->mark_dirty({y});                                                                            \
      return x;                                                                                        \
    }                                                                                                  \
    static AG::variable_list backward(AG::AutogradContext*, AG::variable_list g) { return {g[0], g[0]}; } \
  };
namespace custom_ember {
CUSTOM_FUNCTIONS(ember::autograd, ember::Tensor)
}
namespace custom_torch {
CUSTOM_FUNCTIONS(torch::autograd, torch::Tensor)
}
#undef CUSTOM_FUNCTIONS

TEST(AutogradParity, CustomFunctionsMatchLibtorch) {
  const ember::Tensor x0 = parity::random({2, 3}, ember::kDouble, 1001);
  for (bool materialize : {true, false}) {
    const ember::Tensor x = x0.clone().requires_grad_();
    const torch::Tensor tx = to_torch(x0).requires_grad_();
    custom_ember::TwoOutputs::apply(x, materialize)[0].sum().backward();
    custom_torch::TwoOutputs::apply(tx, materialize)[0].sum().backward();
    EXPECT_EQ(custom_ember::TwoOutputs::second_defined, custom_torch::TwoOutputs::second_defined) << materialize;
    EXPECT_EQ(custom_ember::TwoOutputs::second_defined, materialize);
    EXPECT_TRUE(Close(x.grad(), tx.grad()));
  }
  {  // a non-leaf modified in place continues from the call
    const ember::Tensor l = x0.clone().requires_grad_();
    const torch::Tensor tl = to_torch(x0).requires_grad_();
    const ember::Tensor a = l * 3;
    const torch::Tensor ta = tl * 3;
    const ember::Tensor b = custom_ember::DoubleInPlace::apply(a);
    const torch::Tensor tb = custom_torch::DoubleInPlace::apply(ta);
    EXPECT_TRUE(b.is_same(a));
    EXPECT_TRUE(tb.is_same(ta));
    EXPECT_EQ(a._version(), ta._version());
    EXPECT_EQ(a.grad_fn(), b.grad_fn());
    EXPECT_EQ(a.grad_fn()->next_edges()[0].function->name(), ta.grad_fn()->next_edges()[0].function->name());
    (b * b).sum().backward();
    (tb * tb).sum().backward();
    EXPECT_TRUE(Close(b.detach(), tb.detach()));
    EXPECT_TRUE(Close(l.grad(), tl.grad()));
  }
  {  // a view modified in place: its base's history goes through the call
    const ember::Tensor l = x0.clone().requires_grad_();
    const torch::Tensor tl = to_torch(x0).requires_grad_();
    const ember::Tensor g = l * 1;
    const torch::Tensor tg = tl * 1;
    const ember::Tensor w = custom_ember::DoubleInPlace::apply(g.select(0, 1));
    const torch::Tensor tw = custom_torch::DoubleInPlace::apply(tg.select(0, 1));
    EXPECT_EQ(w.grad_fn()->name(), tw.grad_fn()->name());
    EXPECT_EQ(g.grad_fn()->name(), tg.grad_fn()->name());
    (g * g).sum().backward();
    (tg * tg).sum().backward();
    EXPECT_TRUE(Close(l.grad(), tl.grad()));
  }
  {  // an input returned unchanged comes back as a view, the input's history untouched
    const ember::Tensor l = x0.clone().requires_grad_();
    const torch::Tensor tl = to_torch(x0).requires_grad_();
    const ember::Tensor c = l * 1;
    const torch::Tensor tc = tl * 1;
    const ember::Tensor d = custom_ember::ReturnsInput::apply(c);
    const torch::Tensor td = custom_torch::ReturnsInput::apply(tc);
    EXPECT_EQ(d.is_same(c), td.is_same(tc));
    EXPECT_EQ(d.is_view(), td.is_view());
    EXPECT_EQ(c.grad_fn()->name(), tc.grad_fn()->name());
    (d + c).sum().backward();
    (td + tc).sum().backward();
    EXPECT_TRUE(Close(l.grad(), tl.grad()));
  }
  {  // without gradients: the in-place result, no history
    const ember::Tensor n = x0.clone();
    const torch::Tensor tn = to_torch(x0);
    const ember::Tensor r = custom_ember::DoubleInPlace::apply(n);
    const torch::Tensor tr = custom_torch::DoubleInPlace::apply(tn);
    EXPECT_EQ(r.requires_grad(), tr.requires_grad());
    EXPECT_TRUE(Close(n, tn));
  }
  // a leaf requiring grad, and a dirty input not returned: the same errors
  const ember::Tensor leaf = x0.clone().requires_grad_();
  const torch::Tensor tleaf = to_torch(x0).requires_grad_();
  const std::string leaf_error = parity::torch_error([&] { custom_torch::DoubleInPlace::apply(tleaf); });
  EXPECT_FALSE(leaf_error.empty());
  EXPECT_EQ(parity::ember_error([&] { custom_ember::DoubleInPlace::apply(leaf); }), "CppNode: " + leaf_error);
  const std::string dirty_error =
      parity::torch_error([&] { custom_torch::DirtyNotReturned::apply(tleaf * 1, tleaf * 1); });
  EXPECT_FALSE(dirty_error.empty());
  EXPECT_EQ(parity::ember_error([&] { custom_ember::DirtyNotReturned::apply(leaf * 1, leaf * 1); }),
            "CppNode: " + dirty_error);
}

}  // namespace EMBER_UNITY_FILE
