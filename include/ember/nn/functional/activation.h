// The functional activations beyond relu ... log_softmax (ember/nn/modules/activation.h).
#pragma once
#include <tuple>

#include "ember/nn/options/activation.h"
#include "ember/tensor.h"

namespace ember::nn::functional {
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
