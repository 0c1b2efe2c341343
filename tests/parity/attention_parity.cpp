// scaled_dot_product_attention against libtorch: its math composition softmax(q k^T / sqrt(E) +
// mask) v (with autograd for the gradients) and 1.13's at::_scaled_dot_product_attention, over
// sequences long enough for several blocks of the blocked kernel (L != S, Ev != E, broadcast
// batch dims, bool and float masks, causal), in float32 and bfloat16; and MultiheadAttention
// without weights (the blocked path) against libtorch's module.
#include <string>
#include <vector>

#include "parity/parity.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using parity::Close;
using parity::Tol;

namespace {

torch::Tensor T(const ember::Tensor& e) { return parity::to_torch(e); }

torch::Tensor torch_math(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                         const torch::Tensor& mask, bool causal) {
  torch::Tensor s = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(-1)));
  if (causal) s = s.masked_fill(torch::ones({q.size(-2), k.size(-2)}, torch::kBool).tril().logical_not(), -INFINITY);
  if (mask.defined()) s = mask.scalar_type() == torch::kBool ? s.masked_fill(mask.logical_not(), -INFINITY) : s + mask;
  return torch::matmul(torch::softmax(s, -1), v);
}

struct Case {
  std::string what;
  std::vector<int64_t> qs, ks, vs, mask_sizes;
  int mask;  // 0 none, 1 bool, 2 float, 3 causal
};

// At least 512 keys (the blocked path), several query blocks (64) and key blocks (256), ragged.
const std::vector<Case> kCases = {
    {"plain", {2, 2, 150, 32}, {2, 2, 600, 32}, {2, 2, 600, 48}, {}, 0},
    {"broadcast key/value batch, bool mask", {2, 2, 130, 16}, {1, 2, 530, 16}, {2, 1, 530, 16}, {130, 530}, 1},
    {"float mask over (N, 1, L, S)", {2, 2, 70, 24}, {2, 2, 520, 24}, {2, 2, 520, 8}, {2, 1, 70, 520}, 2},
    {"causal, L == S", {1, 3, 520, 16}, {1, 3, 520, 16}, {1, 3, 520, 16}, {}, 3},
    {"causal, L < S", {3, 200, 64}, {3, 600, 64}, {3, 600, 32}, {}, 3},
};

}  // namespace

TEST(AttentionParity, ForwardAndGradientsAgainstMathComposition) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.what);
    uint64_t seed = 1;
    const ember::Tensor q = parity::random(c.qs, ember::kFloat, seed++),
                        k = parity::random(c.ks, ember::kFloat, seed++),
                        v = parity::random(c.vs, ember::kFloat, seed++);
    ember::Tensor mask;
    if (c.mask == 1) mask = parity::random(c.mask_sizes, ember::kFloat, seed++) > -1.5;
    if (c.mask == 2) mask = parity::random(c.mask_sizes, ember::kFloat, seed++);
    const ember::Tensor eq = q.clone().requires_grad_(), ek = k.clone().requires_grad_(),
                        ev = v.clone().requires_grad_();
    const torch::Tensor tq = T(q).requires_grad_(), tk = T(k).requires_grad_(), tv = T(v).requires_grad_();
    const ember::Tensor out = ember::scaled_dot_product_attention(eq, ek, ev, mask, 0.0, c.mask == 3);
    const torch::Tensor tout = torch_math(tq, tk, tv, mask.defined() ? T(mask) : torch::Tensor(), c.mask == 3);
    EXPECT_EQ(out.grad_fn()->name(), "ScaledDotProductFlashAttentionBackward0");  // the blocked path
    EXPECT_TRUE(Close(out, tout, Tol{1e-5, 1e-5}));
    const ember::Tensor g = parity::random(out.sizes(), ember::kFloat, seed++);
    out.backward(g);
    tout.backward(T(g));
    EXPECT_TRUE(Close(eq.grad(), tq.grad(), Tol{1e-4, 1e-5}));
    EXPECT_TRUE(Close(ek.grad(), tk.grad(), Tol{1e-4, 1e-5}));
    EXPECT_TRUE(Close(ev.grad(), tv.grad(), Tol{1e-4, 1e-5}));
    if (c.mask != 2) {  // libtorch 1.13's function, where its semantics are PyTorch 2.0's
      const torch::Tensor t113 = std::get<0>(at::_scaled_dot_product_attention(
          T(q), T(k), T(v), mask.defined() ? c10::optional<at::Tensor>(T(mask)) : c10::nullopt, 0.0, false,
          c.mask == 3));
      EXPECT_TRUE(Close(ember::scaled_dot_product_attention(q, k, v, mask, 0.0, c.mask == 3), t113, Tol{1e-5, 1e-5}));
    }
  }
}

TEST(AttentionParity, BFloat16) {
  // libtorch computes its math composition in float32 on the same bfloat16 values; Ember's
  // blocked kernel computes in float32 and rounds the output once
  for (bool causal : {false, true}) {
    const ember::Tensor q = parity::random({2, 130, 32}, ember::kBFloat16, 1),
                        k = parity::random({2, 520, 32}, ember::kBFloat16, 2),
                        v = parity::random({2, 520, 32}, ember::kBFloat16, 3);
    const ember::Tensor out = ember::scaled_dot_product_attention(q, k, v, {}, 0.0, causal);
    const torch::Tensor ref =
        torch_math(T(q).to(torch::kFloat), T(k).to(torch::kFloat), T(v).to(torch::kFloat), {}, causal)
            .to(torch::kBFloat16);
    EXPECT_TRUE(Close(out, ref, Tol{1.6e-2, 1e-2}));
  }
}

TEST(AttentionParity, MultiheadAttentionWithoutWeights) {
  ember::nn::MultiheadAttention e(64, 4);
  torch::nn::MultiheadAttention t(64, 4);
  parity::copy_module_state(*e, *t);
  const ember::Tensor x = parity::random({520, 2, 64}, ember::kFloat, 1) * 0.5;
  ember::Tensor padding = ember::zeros({2, 520}, ember::kBool);
  padding.select(0, 1).narrow(0, 450, 70).fill_(true);
  const ember::Tensor ex = x.clone().requires_grad_();
  const torch::Tensor tx = T(x).requires_grad_();
  const ember::Tensor out = std::get<0>(e(ex, ex, ex, padding, false));
  const torch::Tensor tout = std::get<0>(t->forward(tx, tx, tx, T(padding), false));
  EXPECT_TRUE(Close(out, tout, Tol{1e-4, 1e-5}));
  out.sum().backward();
  tout.sum().backward();
  EXPECT_TRUE(Close(ex.grad(), tx.grad(), Tol{1e-4, 1e-5}));
}

}  // namespace EMBER_UNITY_FILE
