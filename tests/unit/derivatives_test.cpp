// Derivatives of the tensor-core and linalg ops: gradcheck (float64, central differences) of every
// op on small random inputs, with broadcasting and non-contiguous leaves; gradgradcheck (gradcheck
// of the create_graph gradient) where the op is twice differentiable; and the cases where the
// gradient is a choice (ties, zeros, indices) against values worked out by hand or by PyTorch.
#include <gtest/gtest.h>

#include <string>

#include "ember/ember.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;  // NOLINT
using autograd::variable_list;

namespace {

using Fn = std::function<Tensor(const variable_list&)>;

enum class Domain { Any, Positive, Unit };  // randn, |randn| + 0.3, uniform in (-0.8, 0.8)
enum class Layout { Contiguous, Transposed, Strided };

struct In {
  std::vector<int64_t> sizes;
  Domain domain = Domain::Any;
  Layout layout = Layout::Contiguous;
  bool requires_grad = true;
};

struct Case {
  const char* name;
  std::vector<In> inputs;
  Fn fn;
  bool gradgrad = false;  // also check the gradient of the gradient
};

Tensor make(const In& in) {
  std::vector<int64_t> sizes = in.sizes;
  if (in.layout == Layout::Transposed) std::swap(sizes[0], sizes[1]);
  if (in.layout == Layout::Strided) sizes.back() *= 2;
  const TensorOptions f64 = TensorOptions().dtype(kDouble);
  Tensor t = in.domain == Domain::Unit ? rand(sizes, f64) * 1.6 - 0.8 : randn(sizes, f64);
  if (in.domain == Domain::Positive) t = t.abs() + 0.3;
  if (in.layout == Layout::Transposed) t = t.transpose(0, 1);
  if (in.layout == Layout::Strided) t = t.slice(-1, 0, std::nullopt, 2);
  if (in.requires_grad) t.requires_grad_();
  return t;
}

void gradcheck_case(const Case& c) {
  SCOPED_TRACE(c.name);
  variable_list xs;
  for (const In& in : c.inputs) xs.push_back(make(in));
  try {
    autograd::gradcheck(c.fn, xs);
  } catch (const Error& e) {
    ADD_FAILURE() << "gradcheck: " << e.what();
  }
  if (!c.gradgrad) return;
  // The first derivatives (for a fixed random grad_output) as a function of the inputs.
  const Tensor gout = randn(c.fn(xs).sizes(), TensorOptions().dtype(kDouble));
  const Fn fn = c.fn;
  auto first = [fn, gout, xs](const variable_list& v) {
    AutoGradMode on(true);  // the numerical pass runs under no_grad
    variable_list args = v, wrt;
    for (size_t i = 0; i < args.size(); ++i) {
      if (!xs[i].requires_grad()) continue;
      if (!args[i].requires_grad()) args[i] = args[i].detach().requires_grad_();
      wrt.push_back(args[i]);
    }
    variable_list g = autograd::grad({fn(args)}, wrt, {gout}, true, /*create_graph=*/true, /*allow_unused=*/true);
    for (size_t k = 0; k < g.size(); ++k)
      if (!g[k].defined()) g[k] = zeros_like(wrt[k]);
    return g;
  };
  try {
    autograd::gradcheck(first, xs);
  } catch (const Error& e) {
    ADD_FAILURE() << "gradgradcheck: " << e.what();
  }
}

void run(const std::vector<Case>& cases, uint64_t seed) {
  manual_seed(seed);
  for (const Case& c : cases) gradcheck_case(c);
}

const Domain P = Domain::Positive, U = Domain::Unit, A = Domain::Any;
const Layout Tr = Layout::Transposed, St = Layout::Strided, C = Layout::Contiguous;
using V = variable_list;

TEST(Derivatives, UnaryMath) {
  run({
          {"abs", {{{2, 3}, A, Tr}}, [](const V& v) { return v[0].abs(); }, true},
          {"sign", {{{5}}}, [](const V& v) { return v[0].sign() * v[0]; }},
          {"exp2", {{{2, 3}}}, [](const V& v) { return v[0].exp2(); }, true},
          {"expm1", {{{2, 3}, A, St}}, [](const V& v) { return v[0].expm1(); }, true},
          {"log2", {{{5}, P}}, [](const V& v) { return v[0].log2(); }, true},
          {"log10", {{{5}, P}}, [](const V& v) { return v[0].log10(); }, true},
          {"log1p", {{{5}, P}}, [](const V& v) { return v[0].log1p(); }, true},
          {"rsqrt", {{{5}, P}}, [](const V& v) { return v[0].rsqrt(); }, true},
          {"tan", {{{2, 3}, U}}, [](const V& v) { return v[0].tan(); }, true},
          {"reciprocal", {{{5}, P}}, [](const V& v) { return v[0].reciprocal(); }, true},
          {"square", {{{2, 3}, A, Tr}}, [](const V& v) { return v[0].square(); }, true},
          {"erf", {{{5}}}, [](const V& v) { return v[0].erf(); }, true},
          {"erfc", {{{5}}}, [](const V& v) { return v[0].erfc(); }, true},
          {"erfinv", {{{5}, U}}, [](const V& v) { return v[0].erfinv(); }, true},
          {"floor", {{{5}}}, [](const V& v) { return v[0].floor() + v[0]; }},
          {"ceil", {{{5}}}, [](const V& v) { return v[0].ceil() + v[0]; }},
          {"round", {{{5}}}, [](const V& v) { return v[0].round() + v[0]; }},
          {"trunc", {{{5}}}, [](const V& v) { return v[0].trunc() + v[0]; }},
          {"nan_to_num", {{{5}}}, [](const V& v) { return v[0].nan_to_num(); }},
      },
      11);
}

TEST(Derivatives, Activations) {
  run({
          {"silu", {{{2, 3}}}, [](const V& v) { return silu(v[0]); }, true},
          {"hardswish", {{{2, 5}}}, [](const V& v) { return hardswish(v[0] * 3); }, true},
          {"hardsigmoid", {{{2, 5}}}, [](const V& v) { return hardsigmoid(v[0] * 3); }},
          {"gelu", {{{2, 3}, A, St}}, [](const V& v) { return gelu(v[0]); }, true},
          {"gelu tanh", {{{2, 3}}}, [](const V& v) { return gelu(v[0], "tanh"); }, true},
          {"leaky_relu", {{{2, 3}}}, [](const V& v) { return leaky_relu(v[0], 0.2); }, true},
          {"relu", {{{2, 3}}}, [](const V& v) { return relu(v[0]); }, true},
          {"threshold_backward", {{{2, 3}}, {{2, 3}}}, [](const V& v) { return threshold_backward(v[0], v[1], 0.1); },
           true},
          {"elu", {{{2, 3}}}, [](const V& v) { return elu(v[0], 1.5, 1.2, 0.7); }, true},
          {"softplus", {{{2, 3}}}, [](const V& v) { return softplus(v[0], 2, 1); }, true},
      },
      12);
}

TEST(Derivatives, BinaryPointwise) {
  run({
          {"remainder", {{{2, 3}}, {{3}, P}}, [](const V& v) { return v[0].remainder(v[1]); }},
          {"remainder scalar", {{{5}}}, [](const V& v) { return v[0].remainder(0.7); }},
          {"scalar remainder", {{{5}, P}}, [](const V& v) { return remainder(2.5, v[0]); }},
          {"fmod", {{{3, 1}}, {{4}, P}}, [](const V& v) { return v[0].fmod(v[1]); }},
          {"fmod scalar", {{{5}}}, [](const V& v) { return v[0].fmod(0.7); }},
          {"pow tensor", {{{2, 3}, P}, {{3}}}, [](const V& v) { return v[0].pow(v[1]); }, true},
          {"pow scalar base", {{{5}}}, [](const V& v) { return pow(2.5, v[0]); }, true},
          {"minimum", {{{3, 1}}, {{4}}}, [](const V& v) { return minimum(v[0], v[1]); }},
          {"maximum", {{{2, 3}, A, Tr}, {{2, 3}}}, [](const V& v) { return maximum(v[0], v[1]); }},
          {"atan2", {{{2, 3}}, {{3}}}, [](const V& v) { return v[0].atan2(v[1]); }, true},
          {"lerp scalar", {{{2, 3}}, {{3}}}, [](const V& v) { return v[0].lerp(v[1], 0.3); }},
          {"lerp tensor", {{{2, 3}}, {{3}}, {{2, 1}}}, [](const V& v) { return v[0].lerp(v[1], v[2]); }, true},
          {"addcmul", {{{3}}, {{2, 3}}, {{2, 1}}}, [](const V& v) { return v[0].addcmul(v[1], v[2], 0.5); }, true},
          {"addcdiv", {{{3}}, {{2, 3}}, {{2, 1}, P}}, [](const V& v) { return v[0].addcdiv(v[1], v[2], 2); }, true},
          {"div floor", {{{5}}, {{5}, P}}, [](const V& v) { return v[0].div(v[1], "floor") + v[0]; }},
      },
      13);
}

// atan2's gradients without a graph to record are one kernel pass each; recorded (create_graph),
// the composite formula. Both agree, over dtypes (16-bit ones computed in float32, mixed ones
// promoted), broadcasting (the engine sums) and transposed operands.
TEST(Derivatives, Atan2OnePassMatchesTheRecordedFormula) {
  struct Shapes {
    std::vector<int64_t> y, x;
    bool transpose;
  };
  const std::vector<Shapes> shapes{{{33, 17}, {33, 17}, false}, {{40, 24}, {24}, false}, {{9, 1}, {1, 70}, false},
                                   {{30, 20}, {30, 20}, true}};
  const std::vector<std::pair<ScalarType, ScalarType>> dtypes{
      {kFloat, kFloat}, {kDouble, kDouble}, {kBFloat16, kBFloat16}, {kHalf, kHalf}, {kBFloat16, kFloat}};
  manual_seed(3);
  for (const auto& [ty, tx] : dtypes) {
    for (const Shapes& sh : shapes) {
      SCOPED_TRACE(std::string(to_string(ty)) + " " + to_string(tx) + " " +
                   std::to_string(sh.y.size()) + "-d" + (sh.transpose ? " transposed" : ""));
      Tensor y = randn(sh.y).to(ty), x = randn(sh.x).to(tx);
      if (sh.transpose) {
        y = y.t().contiguous().t();
        x = x.t().contiguous().t();
      }
      y.requires_grad_();
      x.requires_grad_();
      const Tensor out = atan2(y, x);
      const Tensor g = randn(out.sizes()).to(out.scalar_type());
      const variable_list one_pass = autograd::grad({out}, {y, x}, {g}, /*retain_graph=*/true);
      const variable_list recorded = autograd::grad({out}, {y, x}, {g}, true, /*create_graph=*/true);
      for (size_t i = 0; i < 2; ++i) {
        ASSERT_EQ(one_pass[i].scalar_type(), recorded[i].scalar_type());
        ASSERT_EQ(one_pass[i].sizes(), recorded[i].sizes());
        const bool narrow = is_reduced_floating_type(one_pass[i].scalar_type());
        EXPECT_TRUE(allclose(one_pass[i].detach().to(kDouble), recorded[i].detach().to(kDouble), narrow ? 1e-2 : 1e-5,
                             narrow ? 1e-2 : 1e-6))
            << "gradient " << i;
      }
    }
  }
}

// gelu's tanh form: its gradient without a graph to record is one kernel pass (PyTorch's formula
// in the compute type); recorded (create_graph), the composite formula. Both agree over dtypes
// (16-bit ones computed in float32 and rounded once), layouts and large arguments (tanh saturated).
TEST(Derivatives, GeluTanhOnePassMatchesTheRecordedFormula) {
  manual_seed(4);
  for (ScalarType dt : {kFloat, kDouble, kBFloat16, kHalf}) {
    for (bool transpose : {false, true}) {
      SCOPED_TRACE(std::string(to_string(dt)) + (transpose ? " transposed" : ""));
      Tensor x = (randn({37, 29}) * 3).to(dt);
      x.index_put_({0, 0}, 30.0);
      x.index_put_({0, 1}, -30.0);
      if (transpose) x = x.t().contiguous().t();
      x.requires_grad_();
      const Tensor out = gelu(x, "tanh");
      const Tensor g = randn(out.sizes()).to(dt);
      const Tensor one_pass = autograd::grad({out}, {x}, {g}, /*retain_graph=*/true)[0];
      const Tensor recorded = autograd::grad({out}, {x}, {g}, true, /*create_graph=*/true)[0];
      ASSERT_EQ(one_pass.scalar_type(), dt);
      ASSERT_EQ(one_pass.sizes(), x.sizes());
      const bool narrow = is_reduced_floating_type(dt);
      EXPECT_TRUE(allclose(one_pass.detach().to(kDouble), recorded.detach().to(kDouble), narrow ? 2e-2 : 1e-5,
                           narrow ? 2e-2 : 1e-6));
    }
  }
}

TEST(Derivatives, ClampWhereMaskedFill) {
  const Tensor mask = randn({2, 3}) > 0;
  run({
          {"clamp", {{{2, 5}}}, [](const V& v) { return v[0].clamp(-0.5, 0.5); }},
          {"clamp min", {{{2, 5}}}, [](const V& v) { return v[0].clamp(-0.5); }},
          {"clamp max", {{{2, 5}}}, [](const V& v) { return v[0].clamp(std::nullopt, 0.5); }},
          {"clamp_min", {{{2, 5}}}, [](const V& v) { return v[0].clamp_min(0.2); }},
          {"clamp_max", {{{2, 5}}}, [](const V& v) { return v[0].clamp_max(0.2); }},
          {"clamp tensors", {{{2, 5}}, {{5}}, {{2, 1}}},
           [](const V& v) { return v[0].clamp(std::optional<Tensor>(v[1]), std::optional<Tensor>(v[2])); }},
          {"clamp tensor min", {{{2, 5}}, {{5}}},
           [](const V& v) { return v[0].clamp(std::optional<Tensor>(v[1]), std::optional<Tensor>()); }},
          {"where", {{{2, 3}}, {{3}}}, [mask](const V& v) { return where(mask, v[0], v[1]); }},
          {"where scalar", {{{2, 3}}}, [mask](const V& v) { return where(mask, v[0], 2.0); }},
          {"masked_fill", {{{2, 3}, A, Tr}}, [mask](const V& v) { return v[0].masked_fill(mask, 1.5); }},
          {"masked_fill tensor", {{{2, 3}}, {{}}}, [mask](const V& v) { return v[0].masked_fill(mask, v[1]); }},
      },
      14);
}

TEST(Derivatives, Reductions) {
  run({
          {"prod", {{{2, 3}}}, [](const V& v) { return v[0].prod(); }, true},
          {"prod dim", {{{2, 3}, A, Tr}}, [](const V& v) { return v[0].prod(1); }, true},
          {"prod keepdim", {{{2, 3}}}, [](const V& v) { return v[0].prod(0, true); }, true},
          {"max", {{{2, 3}}}, [](const V& v) { return v[0].max(); }},
          {"min", {{{2, 3}}}, [](const V& v) { return v[0].min(); }},
          {"max dim", {{{3, 4}}}, [](const V& v) { return std::get<0>(v[0].max(1)); }},
          {"min dim keepdim", {{{3, 4}, A, St}}, [](const V& v) { return std::get<0>(v[0].min(0, true)); }},
          {"amax", {{{2, 3, 4}}}, [](const V& v) { return v[0].amax({0, 2}); }},
          {"amin keepdim", {{{2, 3}}}, [](const V& v) { return v[0].amin({1}, true); }},
          {"var", {{{2, 3}}}, [](const V& v) { return v[0].var(); }, true},
          {"var dim correction 0", {{{3, 4}, A, Tr}}, [](const V& v) { return v[0].var({1}, int64_t{0}); }, true},
          {"std", {{{3, 4}}}, [](const V& v) { return v[0].std({0}, true, true); }, true},
          {"var_mean", {{{3, 4}}},
           [](const V& v) {
             auto [var, mean] = var_mean(v[0], {{1}});
             return var * 2 + mean;
           },
           true},
          {"std_mean", {{{3, 4}}},
           [](const V& v) {
             auto [sd, mean] = std_mean(v[0], std::nullopt, 0);
             return sd * 2 + mean;
           }},
          {"norm", {{{2, 3}}}, [](const V& v) { return v[0].norm(); }, true},
          {"norm 1", {{{2, 3}}}, [](const V& v) { return v[0].norm(1, {1}); }},
          {"norm 3 keepdim", {{{2, 3}, A, St}}, [](const V& v) { return v[0].norm(3, {0}, true); }, true},
          {"norm 1.5", {{{2, 3}}}, [](const V& v) { return v[0].norm(1.5, {1}); }},
          {"norm 0.5", {{{2, 3}}}, [](const V& v) { return v[0].norm(0.5); }},
          {"norm inf", {{{2, 3}}}, [](const V& v) { return v[0].norm(INFINITY, {1}); }},
          {"norm -inf", {{{2, 3}}}, [](const V& v) { return v[0].norm(-INFINITY); }},
          {"logsumexp", {{{3, 4}}}, [](const V& v) { return v[0].logsumexp({1}); }, true},
          {"logsumexp keepdim", {{{3, 4}, A, Tr}}, [](const V& v) { return v[0].logsumexp({0, 1}, true); }},
          {"cumsum", {{{3, 4}}}, [](const V& v) { return v[0].cumsum(1); }},
          {"cumprod", {{{3, 4}, A, Tr}}, [](const V& v) { return v[0].cumprod(-1); }, true},
          {"mean dtype", {{{3, 4}}}, [](const V& v) { return v[0].mean({1}, false, kDouble); }},
      },
      15);
}

TEST(Derivatives, SortAndSelection) {
  run({
          {"sort", {{{3, 4}}}, [](const V& v) { return std::get<0>(v[0].sort(1)); }},
          {"sort descending", {{{3, 4}, A, Tr}}, [](const V& v) { return std::get<0>(v[0].sort(0, true)); }},
          {"topk", {{{3, 5}}}, [](const V& v) { return std::get<0>(v[0].topk(2)); }},
          {"topk smallest", {{{3, 5}}}, [](const V& v) { return std::get<0>(v[0].topk(3, 0, false)); }},
          {"kthvalue", {{{3, 5}}}, [](const V& v) { return std::get<0>(v[0].kthvalue(2)); }},
          {"kthvalue keepdim", {{{3, 5}}}, [](const V& v) { return std::get<0>(v[0].kthvalue(2, 0, true)); }},
      },
      16);
}

TEST(Derivatives, IndexingAndScatter) {
  const Tensor idx = tensor(std::vector<int64_t>{2, 0, 2});
  const Tensor idx2 = tensor(std::vector<int64_t>{1, 0, 3, 1, 2, 2}).view({2, 3});
  const Tensor mask = randn({3, 4}) > 0;
  using indexing::Slice;
  run({
          {"index_select", {{{3, 4}}}, [idx](const V& v) { return v[0].index_select(0, idx); }},
          {"gather", {{{3, 4}, A, Tr}}, [idx2](const V& v) { return v[0].gather(1, idx2); }},
          {"scatter", {{{3, 4}}, {{2, 3}}}, [](const V& v) {
             const Tensor i = tensor(std::vector<int64_t>{1, 0, 3, 0, 2, 1}).view({2, 3});
             return v[0].scatter(1, i, v[1]);
           }},
          {"scatter value", {{{3, 4}}}, [idx2](const V& v) { return v[0].scatter(1, idx2, 2.0); }},
          {"scatter_add", {{{3, 4}}, {{2, 3}}}, [idx2](const V& v) { return v[0].scatter_add(1, idx2, v[1]); }},
          {"index_add", {{{3, 4}}, {{3, 3}}}, [idx](const V& v) { return v[0].index_add(1, idx, v[1], 2); }},
          {"masked_select", {{{3, 4}}}, [mask](const V& v) { return v[0].masked_select(mask); }},
          {"masked_select broadcast", {{{4}}}, [mask](const V& v) { return v[0].masked_select(mask); }},
          {"index tensor", {{{3, 4}}}, [idx](const V& v) { return v[0].index({idx}); }},
          {"index two tensors", {{{3, 4}, A, St}},
           [idx](const V& v) { return v[0].index({idx, tensor(std::vector<int64_t>{1, 3, 1})}); }},
          {"index slice and tensor", {{{3, 4}}}, [idx](const V& v) { return v[0].index({Slice(), idx}); }},
          {"index mask", {{{3, 4}}}, [mask](const V& v) { return v[0].index({mask}); }},
          {"index ellipsis", {{{3, 4}}}, [](const V& v) { return v[0].index({indexing::Ellipsis}); }},
      },
      17);
}

TEST(Derivatives, JoiningAndViews) {
  run({
          {"cat", {{{2, 3}}, {{2, 1}}, {{2, 2}, A, Tr}}, [](const V& v) { return cat({v[0], v[1], v[2]}, -1); }},
          {"cat legacy empty", {{{2, 3}}, {{0}}}, [](const V& v) { return cat({v[0], v[1]}, 0); }},
          {"stack", {{{2, 3}}, {{2, 3}, A, Tr}}, [](const V& v) { return stack({v[0], v[1]}, 1); }},
          {"split", {{{5, 2}}}, [](const V& v) { return v[0].split(2)[2]; }},
          {"chunk", {{{5, 2}}}, [](const V& v) { return v[0].chunk(2, 0)[1] * 3; }},
          {"unbind", {{{3, 2}}}, [](const V& v) { return v[0].unbind(1)[1]; }},
          {"flip", {{{2, 3}}}, [](const V& v) { return v[0].flip({0, 1}); }},
          {"roll", {{{2, 3}}}, [](const V& v) { return v[0].roll({1, -1}, {0, 1}); }},
          {"roll flat", {{{2, 3}, A, Tr}}, [](const V& v) { return v[0].roll({2}); }},
          {"repeat", {{{2, 3}}}, [](const V& v) { return v[0].repeat({2, 1, 3}); }},
          {"repeat 0-dim", {{{}}}, [](const V& v) { return v[0].repeat({3}); }},
          {"tril", {{{3, 4}}}, [](const V& v) { return v[0].tril(1); }},
          {"triu", {{{2, 3, 3}}}, [](const V& v) { return v[0].triu(-1); }},
          {"diagonal", {{{3, 4}}}, [](const V& v) { return v[0].diagonal(1); }},
          {"diagonal dims", {{{2, 3, 3}, A, Tr}}, [](const V& v) { return v[0].diagonal(0, 1, 2); }},
          {"unfold", {{{2, 7}}}, [](const V& v) { return v[0].unfold(1, 3, 2); }},
          {"unfold overlapping", {{{6}}}, [](const V& v) { return v[0].unfold(0, 3, 1); }},
          {"as_strided", {{{6}}}, [](const V& v) { return v[0].as_strided({3, 2}, {1, 2}); }},
          {"as_strided of expanded", {{{3, 1}}}, [](const V& v) { return v[0].expand({3, 2}).as_strided({2, 2}, {1, 0}); }},
      },
      18);
}

TEST(Derivatives, LinearAlgebra) {
  run({
          {"bmm", {{{2, 3, 4}}, {{2, 4, 2}}}, [](const V& v) { return v[0].bmm(v[1]); }, true},
          {"addmm", {{{2}}, {{3, 4}}, {{4, 2}, A, Tr}}, [](const V& v) { return addmm(v[0], v[1], v[2], 0.5, 2); }, true},
          {"addmv", {{{3}}, {{3, 4}}, {{4}}}, [](const V& v) { return addmv(v[0], v[1], v[2], 2, 0.5); }, true},
          {"baddbmm", {{{3, 1}}, {{2, 3, 4}}, {{2, 4, 2}}},
           [](const V& v) { return baddbmm(v[0], v[1], v[2], 0.5, 1.5); }, true},
          {"dot", {{{4}}, {{4}}}, [](const V& v) { return v[0].dot(v[1]); }, true},
          {"vdot", {{{4}}, {{4}}}, [](const V& v) { return v[0].vdot(v[1]); }, true},
          {"mv", {{{3, 4}, A, Tr}, {{4}}}, [](const V& v) { return v[0].mv(v[1]); }, true},
          {"outer", {{{3}}, {{4}}}, [](const V& v) { return v[0].outer(v[1]); }, true},
          {"einsum mm", {{{3, 4}}, {{4, 2}}}, [](const V& v) { return einsum("ij,jk->ik", {v[0], v[1]}); }, true},
          {"einsum batched", {{{2, 3, 4}}, {{2, 4, 2}}},
           [](const V& v) { return einsum("bij,bjk->bik", {v[0], v[1]}); }},
          {"einsum diagonal", {{{3, 3}}}, [](const V& v) { return einsum("ii->i", {v[0]}); }},
          {"einsum trace and sum", {{{3, 3}}, {{3}}}, [](const V& v) { return einsum("ii,j->j", {v[0], v[1]}); }},
          {"einsum ellipsis", {{{2, 3}}, {{3}}}, [](const V& v) { return einsum("...i,i", {v[0], v[1]}); }},
      },
      19);
}

// ---- gradients that are a choice ---------------------------------------------------------------

Tensor leaf(std::vector<double> v) { return tensor(v, TensorOptions().dtype(kDouble)).requires_grad_(); }
std::vector<double> values(const Tensor& t) {
  const Tensor c = t.detach().contiguous().view({-1});
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}
std::vector<double> grad_of(const Tensor& x, const Tensor& y) {
  return values(autograd::grad({y.sum()}, {x})[0]);
}
using D = std::vector<double>;

TEST(Derivatives, TiesShareTheGradientAsPyTorch) {
  const Tensor a = leaf({1, 2, 3}), b = leaf({1, 1, 4});
  EXPECT_EQ(grad_of(a, maximum(a, b)), D({0.5, 1, 0}));
  EXPECT_EQ(grad_of(b, maximum(a, b)), D({0.5, 0, 1}));
  EXPECT_EQ(grad_of(a, minimum(a, b)), D({0.5, 0, 1}));
  const Tensor x = leaf({3, 1, 3, 2});
  EXPECT_EQ(grad_of(x, x.max()), D({0.5, 0, 0.5, 0}));
  EXPECT_EQ(grad_of(x, x.amax()), D({0.5, 0, 0.5, 0}));
  EXPECT_EQ(grad_of(x, x.norm(INFINITY)), D({0.5, 0, 0.5, 0}));
  EXPECT_EQ(grad_of(x, std::get<0>(x.max(0))), D({1, 0, 0, 0}));  // the index returned
  const Tensor m = leaf({2, 5, 5, 1, 1, 0});
  EXPECT_EQ(grad_of(m, m.view({2, 3}).amax({1})), D({0, 0.5, 0.5, 0.5, 0.5, 0}));
  EXPECT_EQ(grad_of(m, m.view({2, 3}).amin({1})), D({1, 0, 0, 0, 0, 1}));
  EXPECT_EQ(grad_of(m, std::get<0>(m.view({2, 3}).max(1))), D({0, 1, 0, 1, 0, 0}));
  const Tensor t = leaf({2, 1, 2, 3});
  EXPECT_EQ(grad_of(t, t.median()), D({0.5, 0, 0.5, 0}));
  const Tensor n = leaf({NAN, 2, 1, 2, 3});
  EXPECT_EQ(grad_of(n, n.nanmedian()), D({0, 0.5, 0, 0.5, 0}));
  EXPECT_EQ(grad_of(n, n.median()), D({1, 0, 0, 0, 0}));  // NaN is the median, and its gradient's
  const auto [lo, hi] = aminmax(x);
  EXPECT_EQ(grad_of(x, lo + 2 * hi), D({1, 1, 1, 0}));
}

TEST(Derivatives, ClampBoundsTiesAndCrossedBounds) {
  // self at a bound keeps the gradient; min > max gives max (PyTorch's clamp_backward_min_max)
  const Tensor x = leaf({0, 1, 2, 4, 5, 1, 3, 2}), lo = leaf({1, 1, 1, 1, 1, 3, 2, 2}), hi = leaf({4, 4, 4, 4, 4, 2, 2, 2});
  const variable_list g = autograd::grad({x.clamp(std::optional<Tensor>(lo), std::optional<Tensor>(hi)).sum()}, {x, lo, hi});
  EXPECT_EQ(values(g[0]), D({0, 1, 1, 1, 0, 0, 0, 1}));
  EXPECT_EQ(values(g[1]), D({1, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(values(g[2]), D({0, 0, 0, 0, 1, 1, 1, 0}));
  EXPECT_EQ(grad_of(x, x.clamp(1, 4)), D({0, 1, 1, 1, 0, 1, 1, 1}));
}

TEST(Derivatives, ProductsWithZeros) {
  const Tensor one_zero = leaf({2, 0, 3});
  EXPECT_EQ(grad_of(one_zero, one_zero.prod()), D({0, 6, 0}));
  const Tensor two_zeros = leaf({2, 0, 0, 3});
  EXPECT_EQ(grad_of(two_zeros, two_zeros.prod()), D({0, 0, 0, 0}));
  const Tensor rows = leaf({2, 0, 3, 4, 5, 6});
  EXPECT_EQ(grad_of(rows, rows.view({2, 3}).prod(1)), D({0, 6, 0, 30, 24, 20}));
  // cumprod of [2, 0, 3]: outputs 2, 0, 0; d/dx1 = 2 + 2*3
  EXPECT_EQ(grad_of(one_zero, one_zero.cumprod(0)), D({1, 8, 0}));
  try {
    autograd::gradcheck([](const V& v) { return v[0].cumprod(1); }, {leaf({1.5, 0, -2, 0.5, 0, 0}).view({2, 3})});
    autograd::gradcheck([](const V& v) { return v[0].prod(0); }, {leaf({1.5, 0, -2, 0.5, 0, 0}).view({2, 3})});
  } catch (const Error& e) {
    ADD_FAILURE() << e.what();
  }
}

TEST(Derivatives, NormsAtZeroAsPyTorch) {
  const Tensor z = leaf({0, 0, 0});
  EXPECT_EQ(grad_of(z, z.norm()), D({0, 0, 0}));
  EXPECT_EQ(grad_of(z, z.norm(3)), D({0, 0, 0}));
  EXPECT_EQ(grad_of(z, z.norm(1)), D({0, 0, 0}));
  const Tensor x = leaf({0, -2, 1});
  // p = 0: no gradient at all, as PyTorch
  EXPECT_FALSE(autograd::grad({x.norm(0)}, {x}, {}, std::nullopt, false, /*allow_unused=*/true)[0].defined());
  EXPECT_EQ(grad_of(x, x.norm(1)), D({0, -1, 1}));
  const Tensor s = leaf({1, 1, 1, 1});
  EXPECT_EQ(grad_of(s, s.std()), D({0, 0, 0, 0}));  // std 0: zero gradient, not NaN
}

TEST(Derivatives, IndicesAndDuplicatesAccumulate) {
  const Tensor x = leaf({1, 2, 3, 4});
  const Tensor i = tensor(std::vector<int64_t>{3, 3, 0});
  EXPECT_EQ(grad_of(x, x.index({i})), D({1, 0, 0, 2}));
  EXPECT_EQ(grad_of(x, x.index_select(0, i)), D({1, 0, 0, 2}));
  EXPECT_EQ(grad_of(x, x.unfold(0, 2, 1)), D({1, 2, 2, 1}));
  EXPECT_EQ(grad_of(x, std::get<0>(x.sort(0, true))), D({1, 1, 1, 1}));
  const Tensor top = std::get<0>(x.topk(2));
  EXPECT_EQ(values(autograd::grad({top}, {x}, {tensor(std::vector<double>{10, 20}, TensorOptions().dtype(kDouble))})[0]),
            D({0, 0, 20, 10}));
}

TEST(Derivatives, NodeNames) {
  const Tensor x = leaf({1, 2, 3, 4}).view({2, 2});
  EXPECT_EQ(std::get<0>(x.max(1)).grad_fn()->name(), "MaxBackward0");
  EXPECT_EQ(std::get<0>(x.min(0)).grad_fn()->name(), "MinBackward0");
  EXPECT_EQ(std::get<0>(x.sort()).grad_fn()->name(), "SortBackward0");
  EXPECT_EQ(std::get<0>(x.topk(1)).grad_fn()->name(), "TopkBackward0");
  EXPECT_EQ(std::get<0>(x.kthvalue(1)).grad_fn()->name(), "KthvalueBackward0");
  EXPECT_EQ(x.square().grad_fn()->name(), "PowBackward0");
  EXPECT_EQ(x.view({-1}).outer(x.view({-1})).grad_fn()->name(), "MulBackward0");
  EXPECT_EQ(x.index({tensor(std::vector<int64_t>{0})}).grad_fn()->name(), "IndexBackward0");
  // integer results never carry a graph
  EXPECT_FALSE(x.argsort().requires_grad());
  EXPECT_FALSE(x.nonzero().requires_grad());
  EXPECT_FALSE(std::get<1>(x.max(0)).requires_grad());
  // without grad mode no graph
  NoGradGuard guard;
  EXPECT_FALSE(std::get<0>(x.sort()).requires_grad());
}

// Ops with several results: one node per call joins them (integer results get none), gradcheck
// through each output alone (the others' gradients undefined: a split with an unused part, var_mean
// with the mean unused), through all together, and the second derivatives likewise.
TEST(Derivatives, MultiOutputOps) {
  const auto pair = [](const std::tuple<Tensor, Tensor>& t) { return V{std::get<0>(t), std::get<1>(t)}; };
  struct MultiCase {
    const char* name;
    std::vector<int64_t> sizes;
    std::function<V(const Tensor&)> fn;
  };
  const std::vector<MultiCase> cases = {
      {"split", {3, 5}, [](const Tensor& x) { return x.split(2, 1); }},
      {"split_with_sizes", {3, 5}, [](const Tensor& x) { return x.split_with_sizes({1, 3, 1}, 1); }},
      {"chunk", {4, 3}, [](const Tensor& x) { return x.chunk(2, 0); }},
      {"unbind", {3, 4}, [](const Tensor& x) { return x.unbind(1); }},
      {"var_mean", {3, 4}, [&](const Tensor& x) { return pair(var_mean(x, {{1}})); }},
      {"std_mean keepdim", {3, 4}, [&](const Tensor& x) { return pair(std_mean(x, {{0}}, 1, true)); }},
      {"max dim", {3, 4}, [&](const Tensor& x) { return pair(x.max(1)); }},
      {"min dim keepdim", {3, 4}, [&](const Tensor& x) { return pair(x.min(0, true)); }},
      {"sort", {3, 4}, [&](const Tensor& x) { return pair(x.sort(1, true)); }},
      {"topk", {3, 5}, [&](const Tensor& x) { return pair(x.topk(2)); }},
      {"kthvalue", {3, 5}, [&](const Tensor& x) { return pair(x.kthvalue(2, 0)); }},
      {"kthvalue 0-dim", {}, [&](const Tensor& x) { return pair(x.kthvalue(1)); }},
      {"median dim", {3, 5}, [&](const Tensor& x) { return pair(x.median(1)); }},
      {"nanmedian dim keepdim", {4, 3}, [&](const Tensor& x) { return pair(x.nanmedian(0, true)); }},
      {"mode", {3, 4}, [&](const Tensor& x) { return pair(x.mode(1)); }},
      {"cummax", {3, 4}, [&](const Tensor& x) { return pair(x.cummax(1)); }},
      {"cummin 0-dim", {}, [&](const Tensor& x) { return pair(x.cummin(0)); }},
      {"frexp", {3, 4}, [&](const Tensor& x) { return pair(x.frexp()); }},
      {"aminmax", {3, 4}, [&](const Tensor& x) { return pair(aminmax(x)); }},
      {"aminmax dim", {3, 4}, [&](const Tensor& x) { return pair(aminmax(x, 1)); }},
      {"aminmax dim keepdim", {3, 4}, [&](const Tensor& x) { return pair(aminmax(x, 0, true)); }},
      {"linalg_slogdet", {3, 3}, [&](const Tensor& x) { return pair(linalg_slogdet(x)); }},
      {"linalg_qr", {4, 3}, [&](const Tensor& x) { return pair(linalg_qr(x)); }},
      {"linalg_eigh", {3, 3}, [&](const Tensor& x) { return pair(linalg_eigh(x + x.mT())); }},
      {"linalg_lu_factor_ex", {3, 3},
       [&](const Tensor& x) {
         const auto [lu, piv, info] = linalg_lu_factor_ex(x);
         return V{lu, piv, info};
       }},
  };
  manual_seed(17);
  for (const MultiCase& c : cases) {
    SCOPED_TRACE(c.name);
    const Tensor x = randn(c.sizes, TensorOptions().dtype(kDouble)).requires_grad_();
    const V outs = c.fn(x);
    std::vector<size_t> diff;  // the differentiable outputs
    for (size_t i = 0; i < outs.size(); ++i) {
      if (!outs[i].is_floating_point()) {
        EXPECT_FALSE(outs[i].requires_grad());
        continue;
      }
      diff.push_back(i);
      ASSERT_TRUE(outs[i].grad_fn());
      EXPECT_EQ(outs[i].grad_fn(), outs[0].grad_fn());
      EXPECT_EQ(outs[i].output_nr(), i);
    }
    const MultiCase* mc = &c;
    for (size_t i : diff) {
      SCOPED_TRACE("output " + std::to_string(i) + " alone");
      const std::function<Tensor(const V&)> alone = [mc, i](const V& v) { return mc->fn(v[0])[i]; };
      EXPECT_NO_THROW(autograd::gradcheck(alone, {x}));
      EXPECT_NO_THROW(autograd::gradgradcheck(alone, {x}));
    }
    SCOPED_TRACE("all outputs");
    const std::function<V(const V&)> all = [mc, diff](const V& v) {
      const V o = mc->fn(v[0]);
      V r;
      for (size_t i : diff) r.push_back(o[i]);
      return r;
    };
    // one backward through every output at once (each output's Jacobian is checked alone above)
    const std::function<Tensor(const V&)> together = [all](const V& v) {
      Tensor s = zeros({}, TensorOptions().dtype(kDouble));
      double w = 1;
      for (const Tensor& o : all(v)) s = s + (o * o).sum() * w++;
      return s;
    };
    EXPECT_NO_THROW(autograd::gradcheck(together, {x}));
    EXPECT_NO_THROW(autograd::gradgradcheck(all, {x}));
  }
}

// Hooks and retained gradients on the outputs of one multi-output node, and retain_graph.
TEST(Derivatives, MultiOutputNodeHooksAndRetainGraph) {
  manual_seed(18);
  const Tensor x = randn({3, 4}, TensorOptions().dtype(kDouble)).requires_grad_();
  auto [var, mean] = var_mean(x, {{1}});
  int var_hook_calls = 0;
  var.register_hook([&](const Tensor&) { ++var_hook_calls; });
  mean.register_hook([](const Tensor& g) { return g * 3; });
  mean.retain_grad();
  const Tensor loss = (var + mean).sum();
  loss.backward({}, /*retain_graph=*/true);
  const Tensor expected = autograd::grad({x.var({1}).sum() + 3 * x.mean({1}).sum()}, {x})[0];
  EXPECT_TRUE(allclose(x.grad(), expected));
  EXPECT_EQ(var_hook_calls, 1);
  EXPECT_TRUE(allclose(mean.grad(), full({3}, 3.0, TensorOptions().dtype(kDouble))));
  loss.backward();  // the retained graph runs again, then is freed
  EXPECT_TRUE(allclose(x.grad(), expected * 2));
  EXPECT_EQ(var_hook_calls, 2);
  EXPECT_ERROR(loss.backward(), "Trying to backward through the graph a second time");

  // a hook on one part of a split: the unused parts add nothing
  const Tensor y = randn({2, 6}, TensorOptions().dtype(kDouble)).requires_grad_();
  const V parts = y.split(2, 1);
  parts[1].register_hook([](const Tensor& g) { return g * 10; });
  (parts[1].sum() + parts[2].sum()).backward();
  EXPECT_TRUE(equal(y.grad(), tensor(std::vector<double>{0, 0, 10, 10, 1, 1, 0, 0, 10, 10, 1, 1}).view({2, 6})));
}

// The solvers give A's and B's gradients from one formula (B's is computed on the way to A's):
// each input alone requiring grad, both, and second derivatives.
TEST(Derivatives, SolversOneFormulaForBothInputs) {
  manual_seed(23);
  const TensorOptions f64 = TensorOptions().dtype(kDouble);
  const Tensor a0 = randn({3, 3}, f64) + 3 * eye(3, f64), b0 = randn({3, 2}, f64);
  const std::vector<std::function<Tensor(const V&)>> solvers = {
      [](const V& v) { return linalg_solve(v[0], v[1]); },
      [](const V& v) { return linalg_solve_triangular(v[0], v[1], /*upper=*/true); },
      [](const V& v) { return linalg_solve_triangular(v[0], v[1], /*upper=*/false, /*left=*/false); },
  };
  for (size_t k = 0; k < solvers.size(); ++k) {
    SCOPED_TRACE("solver " + std::to_string(k));
    const auto& solve = solvers[k];
    const Tensor b = k == 2 ? b0.mT().contiguous() : b0;
    for (int wanted = 1; wanted <= 3; ++wanted) {
      const Tensor A = a0.clone().requires_grad_((wanted & 1) != 0), B = b.clone().requires_grad_((wanted & 2) != 0);
      const Tensor X = solve({A, B});
      ASSERT_TRUE(X.grad_fn());
      if (k < 2) EXPECT_EQ(X.grad_fn()->num_outputs(), 2u);  // one node, an edge per input (left=false: a view of it)
      const std::function<Tensor(const V&)> of_A = [&](const V& v) { return solve({v[0], B.detach()}); };
      const std::function<Tensor(const V&)> of_B = [&](const V& v) { return solve({A.detach(), v[0]}); };
      if (wanted == 1) EXPECT_NO_THROW(autograd::gradcheck(of_A, {A}));
      if (wanted == 2) EXPECT_NO_THROW(autograd::gradcheck(of_B, {B}));
      if (wanted == 3) {
        EXPECT_NO_THROW(autograd::gradcheck(solve, {A, B}));
        EXPECT_NO_THROW(autograd::gradgradcheck(solve, {A, B}));
      }
    }
  }
}

TEST(Derivatives, FloorDivideHasNoDerivativeAsInPyTorch) {
  const Tensor x = leaf({1, 2});
  EXPECT_ERROR(x.floor_divide(x), "derivative for floor_divide is not implemented");
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
