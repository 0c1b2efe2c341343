// The fused LSTM step (lstm_cell without a graph, float32, a small batch): both matrix-vector
// products and the gate math in one parallel pass.
#pragma once
#include <cstdint>

namespace ember::kernels {

// One LSTM step for `batch` rows, gates in PyTorch's order (i, f, g, o), every array row-major
// and contiguous:
//   pre[b, r] = b_ih[r] + b_hh[r] + x[b] . w_ih[r] + h[b] . w_hh[r]   (a null bias adds nothing)
//   c_out = sigmoid(f) c + sigmoid(i) tanh(g),  h_out = sigmoid(o) tanh(c_out)
// with the eager kernels' sigmoid and tanh. A thread owns a range of hidden units j and reads
// their gate rows (j, H + j, 2H + j, 3H + j) for the whole batch, then finishes their h and c: no
// gate tensor, one parallel region, and at every step the same thread reads the same rows of the
// weights (which stay in its core's cache when they fit).
struct LstmStep {
  int64_t batch = 0, input_size = 0, hidden = 0;
  const float* x = nullptr;     // [batch, input_size]
  const float* w_ih = nullptr;  // [4 hidden, input_size]
  const float* b_ih = nullptr;  // [4 hidden] or null
  const float* b_hh = nullptr;  // [4 hidden] or null
  const float* h = nullptr;     // [batch, hidden]
  const float* w_hh = nullptr;  // [4 hidden, hidden]
  const float* c = nullptr;     // [batch, hidden]
  float* h_out = nullptr;       // [batch, hidden]
  float* c_out = nullptr;       // [batch, hidden]
};
void lstm_step(const LstmStep& s);
// The most rows lstm_step takes (its per-thread buffer).
constexpr int64_t kMaxLstmBatch = 8;

}  // namespace ember::kernels
