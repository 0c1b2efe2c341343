// The recurrent modules' fused step (rnn_kernels.h), compiled for each SIMD target Highway selects
// at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/rnn_kernels.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include <algorithm>
#include <atomic>

#include "core/parallel.h"
#include "kernels/cpu/hwy_util-inl.h"
#include "kernels/cpu/pointwise_vec-inl.h"
#include "kernels/cpu/pointwise_functors-inl.h"
#include "kernels/cpu/rnn_kernels.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace {

using DF = hn::ScalableTag<float>;

// a[u][r][g] += w[g * apart] . v[r] over n (see gate_dots), U vectors of each row a step.
template <int R, int U>
HWY_INLINE void gate_pass(DF d, const float* w, int64_t apart, const float* const* v, size_t n,
                          hn::Vec<DF> (&a)[U][R][4]) {
  const size_t N = hn::Lanes(d);
  const float* wg[4] = {w, w + apart, w + 2 * apart, w + 3 * apart};
  size_t k = 0;
  for (; k + U * N <= n; k += U * N) {
#pragma GCC unroll 2
    for (int u = 0; u < U; ++u) {
      hn::Vec<DF> xv[R];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) xv[r] = hn::LoadU(d, v[r] + k + u * N);
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g) {
        const auto wv = hn::LoadU(d, wg[g] + k + u * N);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) a[u][r][g] = hn::MulAdd(wv, xv[r], a[u][r][g]);
      }
    }
  }
  for (; k < n; k += N) {
    const size_t m = std::min(N, n - k);
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      const auto wv = LoadCN(d, wg[g] + k, m);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) a[0][r][g] = hn::MulAdd(wv, LoadCN(d, v[r] + k, m), a[0][r][g]);
    }
  }
}

// The four gates' dot products of one hidden unit for R rows of the batch:
//   out[4 r + g] = h[r] . w_hh[g * hh_apart] + x[r] . w_ih[g * ih_apart]
// the unit's four gate rows side by side, each weight vector loaded once for the R rows; a single
// row takes two vectors a step, so that eight sums are in flight either way (local vectors, in
// registers), the tails masked. Out of line, as the activations below: one copy per target.
template <int R>
HWY_NOINLINE void gate_dots(DF d, const float* w_hh, int64_t hh_apart, const float* const* h, size_t H,
                            const float* w_ih, int64_t ih_apart, const float* const* x, size_t K, float* out) {
  constexpr int U = R == 1 ? 2 : 1;
  hn::Vec<DF> a[U][R][4];
#pragma GCC unroll 2
  for (int u = 0; u < U; ++u)
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g) a[u][r][g] = hn::Zero(d);
  gate_pass<R, U>(d, w_hh, hh_apart, h, H, a);
  gate_pass<R, U>(d, w_ih, ih_apart, x, K, a);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g)
      out[4 * r + g] = hn::GetLane(hn::SumOfLanes(d, U == 2 ? hn::Add(a[0][r][g], a[U - 1][r][g]) : a[0][r][g]));
}

HWY_NOINLINE hn::Vec<DF> gate_sigmoid(DF d, hn::Vec<DF> v) { return SigmoidF{}.vec(d, v); }
HWY_NOINLINE hn::Vec<DF> gate_tanh(DF d, hn::Vec<DF> v) { return TanhF{}.vec(d, v); }

// Hidden units [j0, j1) of every batch row, a vector of units at a time: their gates' dot
// products into pre[row][gate][unit] (a unit's weight rows read from memory once, then from L1 for
// the other rows of the batch), then the gate math on whole vectors.
void lstm_units(const LstmStep& s, int64_t j0, int64_t j1, bool backwards) {
  const DF d;
  constexpr size_t kN = hn::MaxLanes(DF());
  const size_t N = hn::Lanes(d);
  const int64_t H = s.hidden;
  const size_t K = static_cast<size_t>(s.input_size), Hs = static_cast<size_t>(H);
  HWY_ALIGN float pre[kMaxLstmBatch][4][kN];
  const int64_t blocks = (j1 - j0 + static_cast<int64_t>(N) - 1) / static_cast<int64_t>(N);
  for (int64_t block = 0; block < blocks; ++block) {
    const int64_t j = j0 + (backwards ? blocks - 1 - block : block) * static_cast<int64_t>(N);
    const size_t units = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(N), j1 - j));
    if (units < N) std::fill(&pre[0][0][0], &pre[0][0][0] + sizeof pre / sizeof(float), 0.0f);  // no garbage
    for (size_t u = 0; u < units; ++u) {
      const int64_t unit = j + static_cast<int64_t>(u);
      float bias[4] = {0, 0, 0, 0};
      for (int64_t g = 0; g < 4; ++g) {
        if (s.b_ih) bias[g] += s.b_ih[g * H + unit];
        if (s.b_hh) bias[g] += s.b_hh[g * H + unit];
      }
      for (int64_t b = 0; b < s.batch; b += 2) {  // two rows a pass over the weights, then one
        const float* hs[2] = {s.h + b * H, s.h + (b + 1) * H};
        const float* xs[2] = {s.x + b * s.input_size, s.x + (b + 1) * s.input_size};
        const bool pair = b + 1 < s.batch;
        float dots[8];
        (pair ? gate_dots<2> : gate_dots<1>)(d, s.w_hh + unit * H, H * H, hs, Hs, s.w_ih + unit * s.input_size,
                                             H * s.input_size, xs, K, dots);
        for (int64_t r = 0; r < (pair ? 2 : 1); ++r)
          for (int64_t g = 0; g < 4; ++g) pre[b + r][g][u] = bias[g] + dots[4 * r + g];
      }
    }
    for (int64_t b = 0; b < s.batch; ++b) {
      const auto i = gate_sigmoid(d, hn::Load(d, pre[b][0]));
      const auto f = gate_sigmoid(d, hn::Load(d, pre[b][1]));
      const auto g = gate_tanh(d, hn::Load(d, pre[b][2]));
      const auto o = gate_sigmoid(d, hn::Load(d, pre[b][3]));
      const auto c = hn::MulAdd(i, g, hn::Mul(f, LoadCN(d, s.c + b * H + j, units)));
      const auto h = hn::Mul(o, gate_tanh(d, c));
      StoreCN(d, c, s.c_out + b * H + j, units);
      StoreCN(d, h, s.h_out + b * H + j, units);
    }
  }
}

// Steps alternate the order they read the weights in: a thread's share of the weights is about
// its core's L2 (1 MB of 2 MB at hidden 256), which a read in the same order every step would
// empty of them (each line evicted before its turn comes again); read backwards, the lines last
// read come first, while they are still there.
std::atomic<uint32_t> lstm_steps{0};

}  // namespace

void lstm_step_impl(const LstmStep& s) {
  EMBER_CHECK(s.batch <= kMaxLstmBatch, "lstm_cell", "the fused step takes at most ", kMaxLstmBatch,
              " rows, got ", s.batch);
  // A unit's work: its four gate rows of both products, for every batch row.
  const int64_t work = std::max<int64_t>(1, 4 * (s.hidden + s.input_size) * s.batch);
  const int64_t units = static_cast<int64_t>(hn::Lanes(DF()));
  const int64_t grain = (kGrainSize / work + units - 1) / units * units;
  const bool backwards = lstm_steps.fetch_add(1, std::memory_order_relaxed) & 1;
  parallel_for(0, s.hidden, std::max(grain, units),
               [&](int64_t j0, int64_t j1) { lstm_units(s, j0, j1, backwards); });
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(lstm_step_impl);
void lstm_step(const LstmStep& s) { HWY_DYNAMIC_DISPATCH(lstm_step_impl)(s); }
}  // namespace ember::kernels
#endif
