// The functional activations beyond relu ... log_softmax (ember/nn/modules/activation.h).
#pragma once
#include <tuple>

#include "ember/nn/options/activation.h"
#include "ember/tensor.h"

namespace ember {
// softmax(query key^T / sqrt(E) + attn_mask) value (PyTorch 2.0's torch::scaled_dot_product_attention):
// query (..., L, E), key (..., S, E), value (..., S, Ev), batch dims broadcast; attn_mask broadcast
// to (..., L, S), bool (true = attend) or of the query's dtype (added to the scores); is_causal:
// query i attends keys j <= i (no attn_mask then); dropout on the attention weights. Without
// dropout, long key sequences take a blocked kernel that never holds the L x S scores
// (docs/nn.md).
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = {}, double dropout_p = 0.0, bool is_causal = false);
// libtorch 1.13's spelling: (output, attention weights), the weights only when need_attn_weights
// (1.13 computes them always).
std::tuple<Tensor, Tensor> _scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                                         const Tensor& attn_mask = {}, double dropout_p = 0.0,
                                                         bool need_attn_weights = false, bool is_causal = false);
}  // namespace ember

namespace ember::nn::functional {
using ember::scaled_dot_product_attention;
Tensor selu(const Tensor& input, const SELUFuncOptions& options = {});
// a * sigmoid(b) for the two halves a, b of dim.
Tensor glu(const Tensor& input, const GLUFuncOptions& options = {});
Tensor hardshrink(const Tensor& input, const HardshrinkFuncOptions& options = {});
Tensor softshrink(const Tensor& input, const SoftshrinkFuncOptions& options = {});
Tensor hardtanh(const Tensor& input, const HardtanhFuncOptions& options = {});
Tensor celu(const Tensor& input, const CELUFuncOptions& options = {});
Tensor threshold(const Tensor& input, const ThresholdFuncOptions& options);
Tensor softmin(const Tensor& input, const SoftminFuncOptions& options);
Tensor mish(const Tensor& input);
Tensor softsign(const Tensor& input);
Tensor tanhshrink(const Tensor& input);
Tensor logsigmoid(const Tensor& input);
// weight: one slope, or one per channel (dim 1; dim 0 of a 1-D input).
Tensor prelu(const Tensor& input, const Tensor& weight);
// Training: a random slope in [lower, upper] per negative element; else their mean.
Tensor rrelu(const Tensor& input, const RReLUFuncOptions& options = {});
Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& options = {});
// Multi-head attention over (L, N, E) query and (S, N, E) key/value with weights given as tensors
// (MultiheadAttention's forward): (output (L, N, E), attention weights (N, L, S) averaged over
// heads, or (N, H, L, S); undefined when !need_weights). attn_mask (L, S) or (N * H, L, S): bool
// (true = masked out) or added to the scores; key_padding_mask (N, S), true = ignore that key.
std::tuple<Tensor, Tensor> multi_head_attention_forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                        const MultiheadAttentionForwardFuncOptions& options);
}  // namespace ember::nn::functional
