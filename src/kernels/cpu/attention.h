// Blocked ("flash") attention on the CPU: softmax(scale * q k^T + mask) v without the L x S matrix
// of scores. Each block of queries meets the keys block by block: the block's scores are a small
// product (gemm), joined to each row's running softmax (maximum and sum, the row's partial output
// rescaled when the maximum grows), then the block's probabilities times the values are added to
// the output. The forward keeps each row's logsumexp; the backward recomputes the blocks'
// probabilities from it (dV += P^T dO, dP = dO V^T, dS = P * (dP - rowsum(dO * O)),
// dQ += scale * dS K, dK += scale * dS^T Q). Implemented in attention_kernels.cpp.
#pragma once
#include <vector>

#include "ember/tensor.h"

namespace ember::kernels {

// The block sizes (queries, keys) and the number of keys from which scaled_dot_product_attention
// takes this path rather than materializing the scores (below 512 keys the math composition was
// 0-15% faster, docs/nn.md); tests shrink them to reach several blocks on small shapes.
struct AttentionBlocks {
  int64_t queries = 64;
  int64_t keys = 256;
  int64_t min_keys = 512;
};
AttentionBlocks attention_blocks();
void set_attention_blocks(const AttentionBlocks& blocks);

// An optional mask over (batch, L, S): element (b, i, j) at data + offsets[b] + i * row_stride +
// j * col_stride, bool (true = attend) or of the computation's dtype (added to the scores).
struct AttentionMask {
  const void* data = nullptr;
  bool is_bool = false;
  std::vector<int64_t> offsets;
  int64_t row_stride = 0, col_stride = 0;
};

// q (B, L, E), k (B, S, E), v (B, S, Ev) contiguous, float or double; writes out (B, L, Ev) and
// lse (B, L), contiguous of the same dtype. causal: query i attends keys j <= i.
void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask, bool causal,
                       double scale, const Tensor& out, const Tensor& lse);
// The gradients of q, k, v (written, contiguous as them) from grad_out (B, L, Ev) and the
// forward's out and lse, all contiguous of one dtype.
void attention_backward(const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
                        const AttentionMask& mask, bool causal, double scale, const Tensor& out, const Tensor& lse,
                        const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v);

}  // namespace ember::kernels
