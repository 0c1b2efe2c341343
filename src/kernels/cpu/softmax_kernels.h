// softmax / log_softmax over one dim of a contiguous tensor viewed as (outer, dim, inner).
// The last-dim case (inner == 1) is vectorized with Highway; 16-bit floats compute in float32.
#pragma once
#include "ember/tensor.h"

namespace ember::kernels {

// The tensors' elements as (outer, dim, inner), whatever their shape (no views to make: two
// were a fifth of log_softmax's time on 32 x 32).
struct SoftmaxShape {
  int64_t outer, dim, inner;
};
// x and y contiguous, same dtype, outer * dim * inner elements.
void softmax_kernel(const Tensor& x, const Tensor& y, const SoftmaxShape& shape, bool log);
// The gradient of softmax (log = false) or log_softmax from its output y; all contiguous, of y's
// dtype.
void softmax_backward_kernel(const Tensor& grad, const Tensor& y, const Tensor& grad_input, const SoftmaxShape& shape,
                             bool log);

// The row steps of blocked attention (attention_kernels.cpp), on `rows` contiguous rows of `cols`
// float or double scores each (per row r: m[r], l[r], alpha[r], lse[r], delta[r]).
// The forward's online softmax: the running maximum m and sum l of each row are updated with the
// block, the scores become exp(score - new m), alpha gets exp(old m - new m), by which the row's
// earlier partial output is to be scaled.
template <class T>
void online_softmax_rows(T* s, int64_t rows, int64_t cols, T* m, T* l, T* alpha);
// The backward's probabilities from the row's logsumexp: s = exp(s - lse).
template <class T>
void softmax_from_logsumexp_rows(T* s, int64_t rows, int64_t cols, const T* lse);
// The scores' gradient: dp = p * (dp - delta).
template <class T>
void softmax_grad_rows(const T* p, T* dp, int64_t rows, int64_t cols, const T* delta);

}  // namespace ember::kernels
