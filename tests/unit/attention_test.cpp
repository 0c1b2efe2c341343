// scaled_dot_product_attention: the blocked kernel against the math composition (several query
// and key blocks through small block sizes, ragged last blocks, masks, causal, broadcast batch
// dims, NaN semantics), gradcheck of the blocked path in float64, bad input, the ops the
// dispatch point's layers see, and MultiheadAttention's need_weights=false path and in-projection
// thirds.
#include "kernels/cpu/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ember/fx.h"
#include "ember/torch.h"
#include "expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using ember::Tensor;
using ember::autograd::gradcheck;
using ember::autograd::variable_list;

namespace {
Tensor randn(ember::IntArrayRef sizes, uint64_t seed, ember::ScalarType dtype = ember::kFloat) {
  ember::Generator g(seed);
  return ember::randn(sizes, &g, ember::TensorOptions().dtype(dtype));
}

// Small blocks for the test's lifetime: every call with >= min_keys keys takes the blocked kernel.
class SmallBlocks {
 public:
  explicit SmallBlocks(int64_t queries = 4, int64_t keys = 8, int64_t min_keys = 1)
      : saved_(ember::kernels::attention_blocks()) {
    ember::kernels::set_attention_blocks({queries, keys, min_keys});
  }
  ~SmallBlocks() { ember::kernels::set_attention_blocks(saved_); }

 private:
  ember::kernels::AttentionBlocks saved_;
};

// The math composition, for reference: softmax(q k^T / sqrt(E) + mask) v.
Tensor reference(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool causal) {
  Tensor s = ember::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(-1)));
  if (causal) s = s.masked_fill(ember::ones({q.size(-2), k.size(-2)}, ember::kBool).tril().logical_not(), -INFINITY);
  if (mask.defined()) s = mask.dtype() == ember::kBool ? s.masked_fill(mask.logical_not(), -INFINITY) : s + mask;
  return ember::matmul(ember::softmax(s, -1), v);
}

double max_diff(const Tensor& a, const Tensor& b) {
  return (a.to(ember::kDouble) - b.to(ember::kDouble)).abs().max().item<double>();
}
}  // namespace

TEST(Attention, BlockedMatchesMathOverShapesAndMasks) {
  const SmallBlocks blocks;
  struct Case {
    std::vector<int64_t> qb, kb;  // batch dims of q and of k, v (broadcast)
    int64_t L, S, E, Ev;
    int mask;  // 0 none, 1 bool, 2 float, 3 causal
    std::vector<int64_t> mask_sizes;
  };
  const std::vector<Case> cases = {
      {{2, 3}, {2, 3}, 9, 17, 5, 7, 0, {}},       // ragged query and key blocks, Ev != E
      {{2, 3}, {1, 3}, 13, 6, 4, 4, 1, {13, 6}},  // broadcast key batch, bool (L, S) mask
      {{2}, {2}, 8, 20, 3, 6, 2, {2, 1, 20}},     // float mask broadcast over queries
      {{3}, {3}, 11, 11, 8, 5, 3, {}},            // causal
      {{3}, {3}, 7, 12, 8, 5, 3, {}},             // causal with L < S
      {{}, {4}, 10, 9, 6, 6, 2, {4, 10, 9}},      // unbatched query against batched key/value
  };
  for (size_t n = 0; n < cases.size(); ++n) {
    const Case& c = cases[n];
    std::vector<int64_t> qs = c.qb, ks = c.kb, vs = c.kb;
    qs.insert(qs.end(), {c.L, c.E});
    ks.insert(ks.end(), {c.S, c.E});
    vs.insert(vs.end(), {c.S, c.Ev});
    const Tensor q = randn(qs, 10 + n), k = randn(ks, 20 + n), v = randn(vs, 30 + n);
    Tensor mask;
    if (c.mask == 1) mask = randn(c.mask_sizes, 40 + n) > -0.8;
    if (c.mask == 2) mask = randn(c.mask_sizes, 40 + n);
    const Tensor out = ember::scaled_dot_product_attention(q, k, v, mask, 0.0, c.mask == 3);
    const Tensor ref = reference(q, k, v, mask, c.mask == 3);
    ASSERT_EQ(out.sizes(), ref.sizes()) << "case " << n;
    EXPECT_LT(max_diff(out, ref), 1e-5) << "case " << n;
  }
}

TEST(Attention, MaskedRowsAndNaN) {
  const SmallBlocks blocks;
  const Tensor q = randn({1, 6, 4}, 1), k = randn({1, 12, 4}, 2), v = randn({1, 12, 3}, 3);
  // row 2 attends nothing (NaN, as softmax over -inf gives); row 4 only keys of its second block
  Tensor mask = ember::ones({6, 12}, ember::kBool);
  mask.select(0, 2).fill_(false);
  mask.select(0, 4).narrow(0, 0, 8).fill_(false);
  const Tensor out = ember::scaled_dot_product_attention(q, k, v, mask);
  const Tensor ref = reference(q, k, v, mask, false);
  EXPECT_TRUE(out.select(1, 2).isnan().all().item<bool>());
  EXPECT_LT(max_diff(out.narrow(1, 3, 3), ref.narrow(1, 3, 3)), 1e-5);
  EXPECT_LT(max_diff(out.narrow(1, 0, 2), ref.narrow(1, 0, 2)), 1e-5);
  // a NaN key element makes every row NaN, as in the math composition
  Tensor kn = k.clone();
  kn.select(1, 9).select(1, 0).fill_(NAN);
  EXPECT_TRUE(ember::scaled_dot_product_attention(q, kn, v).isnan().all().item<bool>());
}

TEST(Attention, BFloat16) {
  const SmallBlocks blocks;
  const Tensor q = randn({2, 9, 8}, 1), k = randn({2, 19, 8}, 2), v = randn({2, 19, 8}, 3);
  const Tensor qb = q.to(ember::kBFloat16), kb = k.to(ember::kBFloat16), vb = v.to(ember::kBFloat16);
  const Tensor out = ember::scaled_dot_product_attention(qb, kb, vb, {}, 0.0, true);
  EXPECT_EQ(out.dtype(), ember::kBFloat16);
  EXPECT_LT(max_diff(out, reference(qb.to(ember::kFloat), kb.to(ember::kFloat), vb.to(ember::kFloat), {}, true)), 2e-2);
}

TEST(Attention, GradcheckBlocked) {
  const SmallBlocks blocks(3, 4);
  const Tensor q = randn({2, 7, 3}, 1, ember::kDouble).requires_grad_(),
               k = randn({2, 10, 3}, 2, ember::kDouble).requires_grad_(),
               v = randn({2, 10, 5}, 3, ember::kDouble).requires_grad_();
  const Tensor bool_mask = randn({7, 10}, 4) > -0.5, float_mask = randn({2, 1, 10}, 5, ember::kDouble);
  EXPECT_TRUE(gradcheck([&](const variable_list& x) { return ember::scaled_dot_product_attention(x[0], x[1], x[2]); },
                        {q, k, v}));
  EXPECT_TRUE(gradcheck(
      [&](const variable_list& x) { return ember::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, true); },
      {q, k, v}));
  EXPECT_TRUE(gradcheck(
      [&](const variable_list& x) { return ember::scaled_dot_product_attention(x[0], x[1], x[2], bool_mask); },
      {q, k, v}));
  EXPECT_TRUE(gradcheck(
      [&](const variable_list& x) { return ember::scaled_dot_product_attention(x[0], x[1], x[2], float_mask); },
      {q, k, v}));
  // broadcast batch dims: the gradient of the broadcast key sums over the batch
  const Tensor k1 = randn({1, 10, 3}, 6, ember::kDouble).requires_grad_();
  EXPECT_TRUE(gradcheck([&](const variable_list& x) { return ember::scaled_dot_product_attention(x[0], x[1], x[2]); },
                        {q, k1, v}));
}

TEST(Attention, BlockedPathIsTheFlashOpAndMathPathIsNot) {
  const SmallBlocks blocks;
  const Tensor q = randn({2, 5, 4}, 1).requires_grad_(), k = randn({2, 9, 4}, 2), v = randn({2, 9, 4}, 3);
  const Tensor out = ember::scaled_dot_product_attention(q, k, v);
  EXPECT_EQ(out.grad_fn()->name(), "ScaledDotProductFlashAttentionBackward0");
  // dropout and a mask that wants its gradient take the math composition
  const Tensor dropped = ember::scaled_dot_product_attention(q, k, v, {}, 0.5);
  EXPECT_NE(dropped.grad_fn()->name(), "ScaledDotProductFlashAttentionBackward0");
  const Tensor mask = randn({5, 9}, 4).requires_grad_();
  const Tensor with_mask = ember::scaled_dot_product_attention(q, k, v, mask);
  with_mask.sum().backward();
  EXPECT_TRUE(mask.grad().defined());
  // a graph of the backward (create_graph) through the blocked kernel raises, as PyTorch's flash attention
  EXPECT_ERROR(ember::autograd::grad({out.sum()}, {q}, {}, true, true),
               "derivative for _scaled_dot_product_flash_attention_backward is not implemented");
}

TEST(Attention, LibtorchSpellings) {
  const SmallBlocks blocks;
  const Tensor q = randn({2, 5, 4}, 1), k = randn({2, 9, 4}, 2), v = randn({2, 9, 3}, 3);
  const Tensor a = torch::scaled_dot_product_attention(q, k, v);
  const Tensor b = torch::nn::functional::scaled_dot_product_attention(q, k, v);
  auto [c, w] = torch::_scaled_dot_product_attention(q, k, v, {}, 0.0, true, false);
  EXPECT_LT(max_diff(a, b), 1e-7);
  EXPECT_LT(max_diff(a, c), 1e-5);
  EXPECT_EQ(w.sizes(), (ember::IntArrayRef{2, 5, 9}));
  EXPECT_LT(max_diff(w.sum(-1), ember::ones({2, 5})), 1e-5);
}

TEST(Attention, Autocast) {
  const SmallBlocks blocks;
  const Tensor q = randn({2, 5, 8}, 1), k = randn({2, 9, 8}, 2), v = randn({2, 9, 8}, 3);
  ember::AutocastGuard guard(ember::kCPU, ember::kBFloat16);
  EXPECT_EQ(ember::scaled_dot_product_attention(q, k, v).dtype(), ember::kBFloat16);
}

TEST(Attention, TracedByFx) {
  const SmallBlocks blocks;
  const Tensor q = randn({2, 5, 4}, 1), k = randn({2, 9, 4}, 2), v = randn({2, 9, 3}, 3);
  auto f = [](const Tensor& a, const Tensor& b, const Tensor& c) {
    return ember::scaled_dot_product_attention(a, b, c, {}, 0.0, true);
  };
  auto gm = ember::fx::trace(f, q, k, v);
  EXPECT_NE(gm->code().find("scaled_dot_product_attention"), std::string::npos) << gm->code();
  EXPECT_LT(max_diff(gm->forward({q, k, v}).toTensor(), f(q, k, v)), 1e-7);
}

TEST(AttentionErrors, BadInput) {
  const Tensor q = randn({2, 5, 4}, 1), k = randn({2, 9, 4}, 2), v = randn({2, 9, 3}, 3);
  EXPECT_ERROR(ember::scaled_dot_product_attention(q, randn({2, 9, 3}, 4), v), "scaled_dot_product_attention",
               "query's embedding size E must match key's", "[2, 5, 4]", "[2, 9, 3]");
  EXPECT_ERROR(ember::scaled_dot_product_attention(q, k, randn({2, 8, 3}, 4)), "scaled_dot_product_attention",
               "same sequence length S", "[2, 9, 4]", "[2, 8, 3]");
  EXPECT_ERROR(ember::scaled_dot_product_attention(q, randn({3, 9, 4}, 4), randn({3, 9, 3}, 5)),
               "scaled_dot_product_attention", "must match");
  EXPECT_ERROR(ember::scaled_dot_product_attention(randn({4}, 1), k, v), "scaled_dot_product_attention",
               "at least 2 dimensions", "[4]");
  EXPECT_ERROR(ember::scaled_dot_product_attention(q, k, v, randn({5, 8}, 4)), "scaled_dot_product_attention",
               "attn_mask of shape [5, 8] does not broadcast to (..., L, S) = [2, 5, 9]");
  EXPECT_ERROR(ember::scaled_dot_product_attention(q, k, v, randn({5, 9}, 4).to(ember::kLong)),
               "scaled_dot_product_attention", "attn_mask of dtype bool or the query's dtype");
  EXPECT_ERROR(ember::scaled_dot_product_attention(q, k, v, randn({5, 9}, 4), 0.0, true),
               "scaled_dot_product_attention", "attn_mask and is_causal");
  EXPECT_ERROR(ember::scaled_dot_product_attention(q, k.to(ember::kDouble), v), "scaled_dot_product_attention",
               "one floating dtype");
  EXPECT_ERROR(ember::scaled_dot_product_attention(q, k, v, {}, 1.5), "dropout_p must be in [0, 1]");
}

// in_proj_weight's thirds (chunks, one SplitBackward0) against the same thirds given as separate
// weights: equal outputs, weights and gradients, for self-attention, key-is-value attention and
// three distinct inputs; a float64 gradcheck of self-attention through the thirds.
TEST(Attention, MultiheadAttentionInProjThirdsMatchSeparateWeights) {
  namespace F = ember::nn::functional;
  const int64_t E = 8, H = 2;
  auto leaf = [](ember::IntArrayRef sizes, uint64_t seed) { return randn(sizes, seed).requires_grad_(true); };
  const Tensor w = leaf({3 * E, E}, 1), b = leaf({3 * E}, 2), ow = leaf({E, E}, 3), ob = leaf({E}, 4);
  const Tensor x = leaf({5, 3, E}, 5), mem = leaf({7, 3, E}, 6), other = leaf({7, 3, E}, 7);
  struct Case {
    Tensor q, k, v;
  };
  for (const Case& c : {Case{x, x, x}, Case{x, mem, mem}, Case{x, mem, other}}) {
    std::vector<Tensor> grads[2];
    Tensor outs[2], weights[2];
    for (int separate = 0; separate < 2; ++separate) {
      for (const Tensor& t : {w, b, ow, ob, x, mem, other}) t.mutable_grad() = Tensor();
      auto o = F::MultiheadAttentionForwardFuncOptions(E, H, w, b, {}, {}, false, 0.0, ow, ob);
      if (separate) {
        o.use_separate_proj_weight(true).q_proj_weight(w.narrow(0, 0, E)).k_proj_weight(w.narrow(0, E, E))
            .v_proj_weight(w.narrow(0, 2 * E, E));
      }
      auto [out, weight] = F::multi_head_attention_forward(c.q, c.k, c.v, o);
      (out.sum() + (weight * weight).sum()).backward();
      outs[separate] = out.detach();
      weights[separate] = weight.detach();
      for (const Tensor& t : {w, b, ow, ob, x, mem, other}) grads[separate].push_back(t.grad());
    }
    EXPECT_LT(max_diff(outs[0], outs[1]), 1e-6);
    EXPECT_LT(max_diff(weights[0], weights[1]), 1e-6);
    for (size_t i = 0; i < grads[0].size(); ++i) {
      ASSERT_EQ(grads[0][i].defined(), grads[1][i].defined()) << i;
      if (grads[0][i].defined()) EXPECT_LT(max_diff(grads[0][i], grads[1][i]), 1e-5) << i;
    }
  }
  ember::nn::MultiheadAttention mha(6, 3);
  mha->to(ember::kDouble);
  EXPECT_TRUE(gradcheck([&](const variable_list& v) { return std::get<0>(mha(v[0], v[0], v[0])); },
                        {randn({4, 2, 6}, 8, ember::kDouble).requires_grad_(true)}));
  EXPECT_TRUE(gradcheck([&](const variable_list& v) { return std::get<0>(mha(v[0], v[1], v[1])); },
                        {randn({4, 2, 6}, 9, ember::kDouble).requires_grad_(true),
                         randn({3, 2, 6}, 10, ember::kDouble).requires_grad_(true)}));
  EXPECT_ERROR(F::multi_head_attention_forward(x, x, x, F::MultiheadAttentionForwardFuncOptions(
                                                            E, H, randn({2 * E, E}, 11), b, {}, {}, false, 0.0, ow, ob)),
               "multi_head_attention_forward", "expected in_proj_weight of (24, E), got [16, 8]");
}

TEST(Attention, MultiheadAttentionWithoutWeightsTakesTheBlockedPath) {
  const SmallBlocks blocks;
  ember::nn::MultiheadAttention mha(ember::nn::MultiheadAttentionOptions(8, 2).add_bias_kv(true));
  mha->eval();
  const Tensor x = randn({6, 3, 8}, 1), kv = randn({11, 3, 8}, 2);
  Tensor attn_mask = randn({6, 11}, 3) > 0.5;  // add_bias_kv appends a key
  attn_mask.select(1, 0).fill_(false);  // every row keeps a key
  Tensor padding = ember::zeros({3, 11}, ember::kBool);
  padding.select(0, 1).narrow(0, 7, 4).fill_(true);
  const Tensor float_mask = randn({6, 11}, 4);
  for (const Tensor& m : {Tensor(), attn_mask, float_mask}) {
    for (const Tensor& p : {Tensor(), padding}) {
      const Tensor with = std::get<0>(mha(x, kv, kv, p, true, m));
      const Tensor without = std::get<0>(mha(x, kv, kv, p, false, m));
      EXPECT_LT(max_diff(with, without), 1e-5);
    }
  }
}

// The weights path folds the scores' 1/sqrt(head_dim) into the query's projection (weight and
// bias); the path without weights scales inside scaled_dot_product_attention. Both give the same
// output and gradients, with key and value sizes other than embed_dim (kdim, vdim), masks and
// padded keys, and the folded path passes gradcheck.
TEST(Attention, MultiheadAttentionScaleFoldedIntoTheQueryProjection) {
  ember::nn::MultiheadAttention mha(ember::nn::MultiheadAttentionOptions(8, 2).kdim(5).vdim(5));
  const Tensor x = randn({6, 2, 8}, 1).requires_grad_(true), k = randn({4, 2, 5}, 2), v = randn({4, 2, 5}, 3);
  Tensor padding = ember::zeros({2, 4}, ember::kBool);
  padding.select(0, 1).select(0, 3).fill_(true);
  for (const Tensor& m : {Tensor(), randn({6, 4}, 4)}) {
    std::vector<Tensor> grads[2];
    Tensor outs[2];
    for (int need = 0; need < 2; ++need) {
      mha->zero_grad();
      x.mutable_grad() = Tensor();
      outs[need] = std::get<0>(mha(x, k, v, padding, need == 1, m));
      (outs[need] * outs[need]).sum().backward();
      grads[need].push_back(x.grad());
      for (const Tensor& p : mha->parameters()) grads[need].push_back(p.grad());
    }
    EXPECT_LT(max_diff(outs[0], outs[1]), 1e-5);
    for (size_t i = 0; i < grads[0].size(); ++i) EXPECT_LT(max_diff(grads[0][i], grads[1][i]), 1e-4) << i;
  }
  mha->to(ember::kDouble);
  const Tensor kd = k.to(ember::kDouble), vd = v.to(ember::kDouble);
  EXPECT_TRUE(gradcheck([&](const variable_list& in) { return std::get<0>(mha(in[0], kd, vd, padding)); },
                        {randn({3, 2, 8}, 5, ember::kDouble).requires_grad_(true)}));
}

}  // namespace EMBER_UNITY_FILE
