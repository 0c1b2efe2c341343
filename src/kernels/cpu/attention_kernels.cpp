// Blocked attention (attention.h): the products of each block run on gemm (oneDNN above its size
// threshold, the blocked loops below), the row steps of the softmax on the Highway kernels of
// softmax_kernels.cpp. Scratch blocks come from Ember's allocator, so its statistics see them.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/parallel.h"
#include "ember/factory.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/softmax_kernels.h"

namespace ember::kernels {
namespace {

AttentionBlocks g_blocks;

// rows x cols at p, element (r, c) at p[r * row_stride + c * col_stride].
Matrices mat(const void* p, int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  return Matrices{const_cast<void*>(p), {1, rows, cols}, {rows * cols, row_stride, col_stride}};
}
Matrices dense(const void* p, int64_t rows, int64_t cols) { return mat(p, rows, cols, cols, 1); }
Matrices transposed(const void* p, int64_t rows, int64_t cols) { return mat(p, rows, cols, 1, rows); }

void product(ScalarType dt, const Matrices& out, const Matrices& a, const Matrices& b, double alpha, double beta) {
  GemmEpilogue e;
  e.alpha = alpha;
  e.beta = beta;
  gemm(dt, out, a, b, e, Float32Math::kExact);
}

// The mask and the causal rule on the block of scores s (rows x cols, queries from i0, keys from
// j0, batch b).
template <class T>
void apply_mask(T* s, int64_t rows, int64_t cols, int64_t b, int64_t i0, int64_t j0, const AttentionMask& mask,
                bool causal) {
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  if (mask.data) {
    const int64_t rs = mask.row_stride, cs = mask.col_stride;
    const int64_t base = mask.offsets[b] + i0 * rs + j0 * cs;
    for (int64_t r = 0; r < rows; ++r) {
      T* sr = s + r * cols;
      if (mask.is_bool) {
        const bool* mr = static_cast<const bool*>(mask.data) + base + r * rs;
        for (int64_t c = 0; c < cols; ++c) sr[c] = mr[c * cs] ? sr[c] : kNegInf;
      } else {
        const T* mr = static_cast<const T*>(mask.data) + base + r * rs;
        for (int64_t c = 0; c < cols; ++c) sr[c] += mr[c * cs];
      }
    }
  }
  if (causal) {
    for (int64_t r = 0; r < rows; ++r)
      std::fill(s + r * cols + std::clamp<int64_t>(i0 + r + 1 - j0, 0, cols), s + (r + 1) * cols, kNegInf);
  }
}

template <class T>
void forward_typed(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask, bool causal,
                   double scale, const Tensor& out, const Tensor& lse) {
  const ScalarType dt = q.dtype();
  const int64_t B = q.size(0), L = q.size(1), E = q.size(2), S = k.size(1), Ev = v.size(2);
  const AttentionBlocks blk = g_blocks;
  const int64_t nq = (L + blk.queries - 1) / blk.queries;
  const T* qp = static_cast<const T*>(q.data_ptr());
  const T* kp = static_cast<const T*>(k.data_ptr());
  const T* vp = static_cast<const T*>(v.data_ptr());
  T* op = static_cast<T*>(out.data_ptr());
  T* lp = static_cast<T*>(lse.data_ptr());
  constexpr T kInf = std::numeric_limits<T>::infinity();
  // one item: a block of queries of one batch entry against all its keys
  parallel_for(0, B * nq, 1, [&](int64_t begin, int64_t end) {
    const Tensor scratch = empty({blk.queries * (blk.keys + 2)}, dt);
    T* s = static_cast<T*>(scratch.data_ptr());
    T* l = s + blk.queries * blk.keys;
    T* alpha = l + blk.queries;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t b = item / nq, i0 = item % nq * blk.queries, rows = std::min(blk.queries, L - i0);
      const T* qi = qp + (b * L + i0) * E;
      T* oi = op + (b * L + i0) * Ev;
      T* m = lp + b * L + i0;  // the running maximum, then the logsumexp
      std::fill(m, m + rows, -kInf);
      std::fill(l, l + rows, T(0));
      std::fill(oi, oi + rows * Ev, T(0));
      const int64_t keys = causal ? std::min(S, i0 + rows) : S;  // later keys are masked for every row
      for (int64_t j0 = 0; j0 < keys; j0 += blk.keys) {
        const int64_t cols = std::min(blk.keys, keys - j0);
        product(dt, dense(s, rows, cols), dense(qi, rows, E), transposed(kp + (b * S + j0) * E, E, cols), scale, 0);
        apply_mask(s, rows, cols, b, i0, j0, mask, causal);
        online_softmax_rows(s, rows, cols, m, l, alpha);
        if (j0 > 0) {
          for (int64_t r = 0; r < rows; ++r) {
            if (alpha[r] != T(1))
              std::transform(oi + r * Ev, oi + (r + 1) * Ev, oi + r * Ev, [a = alpha[r]](T x) { return x * a; });
          }
        }
        product(dt, dense(oi, rows, Ev), dense(s, rows, cols), dense(vp + (b * S + j0) * Ev, cols, Ev), 1, 1);
      }
      for (int64_t r = 0; r < rows; ++r) {
        // l == 0 (every key masked): 0/0 = NaN, as softmax over -inf scores gives; no keys: zeros
        const T inv = keys == 0 ? T(0) : T(1) / l[r];
        std::transform(oi + r * Ev, oi + (r + 1) * Ev, oi + r * Ev, [inv](T x) { return x * inv; });
        m[r] += std::log(l[r]);
      }
    }
  });
}

template <class T>
void backward_typed(const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
                    const AttentionMask& mask, bool causal, double scale, const Tensor& out, const Tensor& lse,
                    const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v) {
  const ScalarType dt = q.dtype();
  const int64_t B = q.size(0), L = q.size(1), E = q.size(2), S = k.size(1), Ev = v.size(2);
  const AttentionBlocks blk = g_blocks;
  const T* qp = static_cast<const T*>(q.data_ptr());
  const T* kp = static_cast<const T*>(k.data_ptr());
  const T* vp = static_cast<const T*>(v.data_ptr());
  const T* gop = static_cast<const T*>(grad_out.data_ptr());
  const T* op = static_cast<const T*>(out.data_ptr());
  const T* lp = static_cast<const T*>(lse.data_ptr());
  T* dqp = static_cast<T*>(grad_q.data_ptr());
  T* dkp = static_cast<T*>(grad_k.data_ptr());
  T* dvp = static_cast<T*>(grad_v.data_ptr());
  // one item: a batch entry (dQ sums over key blocks, dK and dV over query blocks)
  parallel_for(0, B, 1, [&](int64_t begin, int64_t end) {
    const Tensor scratch = empty({2 * blk.queries * blk.keys + L}, dt);
    T* p = static_cast<T*>(scratch.data_ptr());
    T* dp = p + blk.queries * blk.keys;
    T* delta = dp + blk.queries * blk.keys;
    for (int64_t b = begin; b < end; ++b) {
      const T* qb = qp + b * L * E;
      const T* kb = kp + b * S * E;
      const T* vb = vp + b * S * Ev;
      const T* gob = gop + b * L * Ev;
      const T* ob = op + b * L * Ev;
      T* dqb = dqp + b * L * E;
      T* dkb = dkp + b * S * E;
      T* dvb = dvp + b * S * Ev;
      for (int64_t i = 0; i < L; ++i) {
        T acc = 0;
        for (int64_t e = 0; e < Ev; ++e) acc += gob[i * Ev + e] * ob[i * Ev + e];
        delta[i] = acc;
      }
      std::fill(dqb, dqb + L * E, T(0));
      std::fill(dkb, dkb + S * E, T(0));
      std::fill(dvb, dvb + S * Ev, T(0));
      for (int64_t j0 = 0; j0 < S; j0 += blk.keys) {
        const int64_t cols = std::min(blk.keys, S - j0);
        // queries before j0 see none of these keys under the causal rule
        for (int64_t i0 = causal ? j0 / blk.queries * blk.queries : 0; i0 < L; i0 += blk.queries) {
          const int64_t rows = std::min(blk.queries, L - i0);
          product(dt, dense(p, rows, cols), dense(qb + i0 * E, rows, E), transposed(kb + j0 * E, E, cols), scale, 0);
          apply_mask(p, rows, cols, b, i0, j0, mask, causal);
          softmax_from_logsumexp_rows(p, rows, cols, lp + b * L + i0);
          product(dt, dense(dvb + j0 * Ev, cols, Ev), transposed(p, cols, rows), dense(gob + i0 * Ev, rows, Ev), 1, 1);
          product(dt, dense(dp, rows, cols), dense(gob + i0 * Ev, rows, Ev), transposed(vb + j0 * Ev, Ev, cols), 1, 0);
          softmax_grad_rows(p, dp, rows, cols, delta + i0);
          product(dt, dense(dqb + i0 * E, rows, E), dense(dp, rows, cols), dense(kb + j0 * E, cols, E), scale, 1);
          product(dt, dense(dkb + j0 * E, cols, E), transposed(dp, cols, rows), dense(qb + i0 * E, rows, E), scale, 1);
        }
      }
    }
  });
}

}  // namespace

AttentionBlocks attention_blocks() { return g_blocks; }
void set_attention_blocks(const AttentionBlocks& blocks) { g_blocks = blocks; }

void attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask, bool causal,
                       double scale, const Tensor& out, const Tensor& lse) {
  if (q.dtype() == kDouble) return forward_typed<double>(q, k, v, mask, causal, scale, out, lse);
  forward_typed<float>(q, k, v, mask, causal, scale, out, lse);
}

void attention_backward(const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
                        const AttentionMask& mask, bool causal, double scale, const Tensor& out, const Tensor& lse,
                        const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v) {
  if (q.dtype() == kDouble) {
    return backward_typed<double>(grad_out, q, k, v, mask, causal, scale, out, lse, grad_q, grad_k, grad_v);
  }
  backward_typed<float>(grad_out, q, k, v, mask, causal, scale, out, lse, grad_q, grad_k, grad_v);
}

}  // namespace ember::kernels
