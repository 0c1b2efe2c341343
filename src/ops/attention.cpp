// scaled_dot_product_attention (PyTorch 2.0's semantics) and libtorch 1.13's
// _scaled_dot_product_attention spelling (that op without weights, else the composition):
// softmax(q k^T / sqrt(E) + mask) v over any broadcast batch dims. Two paths, as PyTorch's: the
// math composition (recorded ops; the L x S scores materialized), taken for dropout, attention
// weights asked for, a mask that wants its gradient and short key sequences; and the blocked
// kernel (kernels/cpu/attention.h: never the L x S matrix, saves only the output and each row's
// logsumexp, its own backward) otherwise.
#include "kernels/cpu/attention.h"

#include <array>
#include <cmath>

#include "dispatch/dispatch.h"
#include "ember/factory.h"
#include "ember/linalg.h"
#include "ember/nn/functional/activation.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/shape.h"

namespace ember {
namespace {

DimVector batch_of(const Tensor& t) { return DimVector(t.sizes().slice(0, t.dim() - 2)); }
// The batch dims followed by `last`.
DimVector with_last(IntArrayRef batch, std::initializer_list<int64_t> last) {
  DimVector sizes(batch);
  for (int64_t s : last) sizes.push_back(s);
  return sizes;
}

// The broadcast batch dims of query, key and value, after PyTorch's checks.
DimVector check_inputs(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                       double dropout_p, bool is_causal) {
  EMBER_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, op,
              "expected query (..., L, E), key (..., S, E) and value (..., S, Ev) of at least 2 dimensions, ",
              "got query ", q.sizes(), ", key ", k.sizes(), ", value ", v.sizes());
  EMBER_CHECK(is_floating_type(q.dtype()) && k.dtype() == q.dtype() && v.dtype() == q.dtype(), op,
              "expected query, key and value of one floating dtype, got ", q.dtype(), ", ", k.dtype(), ", ", v.dtype());
  EMBER_CHECK(q.size(-1) == k.size(-1), op, "query's embedding size E must match key's: query ", q.sizes(), ", key ",
              k.sizes());
  EMBER_CHECK(k.size(-2) == v.size(-2), op, "key and value must have the same sequence length S: key ", k.sizes(),
              ", value ", v.sizes());
  EMBER_CHECK(dropout_p >= 0 && dropout_p <= 1, op, "dropout_p must be in [0, 1], got ", dropout_p);
  DimVector batch = infer_size(infer_size(batch_of(q).ref(), batch_of(k).ref(), op).ref(), batch_of(v).ref(), op);
  if (mask.defined()) {
    EMBER_CHECK(!is_causal, op, "attn_mask and is_causal cannot both be given");
    EMBER_CHECK(mask.dtype() == kBool || mask.dtype() == q.dtype(), op,
                "expected attn_mask of dtype bool or the query's dtype ", q.dtype(), ", got ", mask.dtype());
    const DimVector full = with_last(batch.ref(), {q.size(-2), k.size(-2)});
    bool fits = mask.dim() <= static_cast<int64_t>(full.size());
    for (int64_t d = 1; fits && d <= mask.dim(); ++d) {
      const int64_t m = mask.size(-d), f = full[full.size() - d];
      fits = m == 1 || m == f;
    }
    EMBER_CHECK(fits, op, "attn_mask of shape ", mask.sizes(), " does not broadcast to (..., L, S) = ", full.ref(),
                " (query ", q.sizes(), ", key ", k.sizes(), ")");
  }
  return batch;
}

// The computation's dtype on the blocked path: float32 for the 16-bit floats.
ScalarType compute_dtype(ScalarType t) { return t == kDouble ? kDouble : kFloat; }

// q, k or v as (B, rows, cols) contiguous in the computation's dtype.
Tensor flat(const Tensor& t) {
  int64_t b = 1;
  for (int64_t d = 0; d < t.dim() - 2; ++d) b *= t.size(d);
  return t.to(compute_dtype(t.dtype())).reshape({b, t.size(-2), t.size(-1)}).contiguous();
}

// The mask as the kernel reads it (`keep` holds the converted tensor), broadcast over `batch`.
struct KernelMask {
  Tensor keep;
  kernels::AttentionMask mask;
};
KernelMask kernel_mask(const Tensor& mask, IntArrayRef batch, int64_t L, int64_t S, ScalarType compute) {
  KernelMask r;
  if (!mask.defined()) return r;
  r.keep = (mask.dtype() == kBool ? mask : mask.to(compute)).expand(with_last(batch, {L, S}).ref());
  const int64_t nb = static_cast<int64_t>(batch.size());
  kernels::AttentionMask& m = r.mask;
  m.data = r.keep.data_ptr();
  m.is_bool = mask.dtype() == kBool;
  m.row_stride = r.keep.stride(nb);
  m.col_stride = r.keep.stride(nb + 1);
  int64_t count = 1;
  for (int64_t s : batch) count *= s;
  m.offsets.resize(static_cast<size_t>(count));
  for (int64_t b = 0; b < count; ++b) {
    int64_t offset = 0, rest = b;
    for (int64_t d = nb - 1; d >= 0; --d) {
      offset += rest % batch[d] * r.keep.stride(d);
      rest /= batch[d];
    }
    m.offsets[static_cast<size_t>(b)] = offset;
  }
  return r;
}

// The blocked kernel's gradients (PyTorch's _scaled_dot_product_flash_attention_backward): a
// kernel of its own, so the dispatch point's layers see it; it has no derivative (double backward
// raises, as PyTorch's flash attention does).
struct FlashAttentionBackwardOp {
  static constexpr const char* name = "_scaled_dot_product_flash_attention_backward";
  static std::tuple<Tensor, Tensor, Tensor> run(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                                const Tensor& mask, bool causal, double scale, const Tensor& out,
                                                const Tensor& lse) {
    const ScalarType compute = compute_dtype(q.dtype());
    const Tensor q3 = flat(q), k3 = flat(k), v3 = flat(v), g3 = flat(grad.to(q.dtype())), o3 = flat(out);
    const Tensor dq = empty(q3.sizes(), compute), dk = empty(k3.sizes(), compute), dv = empty(v3.sizes(), compute);
    const KernelMask m = kernel_mask(mask, batch_of(q).ref(), q.size(-2), k.size(-2), compute);
    kernels::attention_backward(g3, q3, k3, v3, m.mask, causal, scale, o3, lse.to(compute).contiguous(), dq, dk, dv);
    return {dq.view(q.sizes()).to(q.dtype()), dk.view(k.sizes()).to(k.dtype()), dv.view(v.sizes()).to(v.dtype())};
  }
};

// The blocked kernel on query, key and value of one batch shape (..., L, E), (..., S, E),
// (..., S, Ev) and a mask that broadcasts to (..., L, S): (output, logsumexp (..., L) in the
// computation's dtype).
struct FlashAttentionOp {
  static constexpr const char* name = "_scaled_dot_product_flash_attention";
  static std::tuple<Tensor, Tensor> run(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                        bool causal, double scale) {
    const ScalarType compute = compute_dtype(q.dtype());
    const DimVector batch = batch_of(q);
    const Tensor q3 = flat(q), k3 = flat(k), v3 = flat(v);
    const Tensor out = empty({q3.size(0), q3.size(1), v3.size(2)}, compute),
                 lse = empty({q3.size(0), q3.size(1)}, compute);
    const KernelMask m = kernel_mask(mask, batch.ref(), q.size(-2), k.size(-2), compute);
    kernels::attention_forward(q3, k3, v3, m.mask, causal, scale, out, lse);
    return {out.view(with_last(batch.ref(), {q.size(-2), v.size(-1)}).ref()).to(q.dtype()),
            lse.view(with_last(batch.ref(), {q.size(-2)}).ref())};
  }
  // One backward kernel gives all three gradients: the first formula to run computes them, each
  // formula takes its own.
  static void derivative(autograd::Derivative& d, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                         bool causal, double scale) {
    d.name("ScaledDotProductFlashAttentionBackward0");
    struct Gradients {
      std::array<Tensor, 3> grads;
      std::array<bool, 3> pending{};
    };
    auto shared = std::make_shared<Gradients>();
    const autograd::Saved sq = d.save(q), sk = d.save(k), sv = d.save(v), so = d.save_result(0), sl = d.save_result(1);
    const std::array<const Tensor*, 3> inputs{&q, &k, &v};
    for (size_t i = 0; i < 3; ++i) {
      d.grad(*inputs[i], [=](const auto& c) {
        if (!c.grad(0).defined()) return Tensor();
        if (!shared->pending[i]) {
          const Tensor query = c[sq], key = c[sk], value = c[sv], out = c[so], lse = c[sl];
          auto [gq, gk, gv] =
              dispatch::call<FlashAttentionBackwardOp>(c.grad(0), query, key, value, mask, causal, scale, out, lse);
          shared->grads = {gq, gk, gv};
          shared->pending = {true, true, true};
        }
        shared->pending[i] = false;
        return std::exchange(shared->grads[i], Tensor());
      });
    }
  }
};

// PyTorch's math composition: (output, attention weights).
std::tuple<Tensor, Tensor> attention_math(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                          double dropout_p, bool causal, double scale) {
  Tensor scores = matmul(q * scale, k.transpose(-2, -1));
  if (causal) {
    scores = scores.masked_fill(ones({q.size(-2), k.size(-2)}, kBool).tril().logical_not(), -INFINITY);
  }
  if (mask.defined())
    scores = mask.dtype() == kBool ? scores.masked_fill(mask.logical_not(), -INFINITY) : scores + mask;
  Tensor weights = softmax(scores, -1);
  if (dropout_p > 0) weights = dropout(weights, dropout_p, true);
  return {matmul(weights, v), weights};
}

std::tuple<Tensor, Tensor> attention(const char* op, const Tensor& q, const Tensor& k, const Tensor& v,
                                     const Tensor& mask, double dropout_p, bool need_weights, bool causal) {
  const DimVector batch = check_inputs(op, q, k, v, mask, dropout_p, causal);
  const double scale = 1 / std::sqrt(static_cast<double>(q.size(-1)));
  const bool blocked = !need_weights && dropout_p == 0 && k.size(-2) >= kernels::attention_blocks().min_keys &&
                       !(mask.defined() && mask.requires_grad());
  if (!blocked) return attention_math(q, k, v, mask, dropout_p, causal, scale);
  auto expand = [&](const Tensor& t) { return t.expand(with_last(batch.ref(), {t.size(-2), t.size(-1)}).ref()); };
  const Tensor eq = expand(q), ek = expand(k), ev = expand(v);
  return {std::get<0>(dispatch::call<FlashAttentionOp>(eq, ek, ev, mask, causal, scale)), Tensor()};
}

struct ScaledDotProductAttentionOp {
  static constexpr const char* name = "scaled_dot_product_attention";
  static constexpr bool composite = true;  // its paths' ops record
  static constexpr dispatch::Autocast autocast = dispatch::Autocast::kLowerPrecision;
  static Tensor run(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double dropout_p,
                    bool is_causal) {
    return std::get<0>(attention(name, q, k, v, mask, dropout_p, false, is_causal));
  }
};

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal) {
  return dispatch::call<ScaledDotProductAttentionOp>(query, key, value, attn_mask, dropout_p, is_causal);
}

std::tuple<Tensor, Tensor> _scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                                         const Tensor& attn_mask, double dropout_p,
                                                         bool need_attn_weights, bool is_causal) {
  if (!need_attn_weights)
    return {scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal), Tensor()};
  return attention("_scaled_dot_product_attention", query, key, value, attn_mask, dropout_p, true, is_causal);
}

}  // namespace ember
