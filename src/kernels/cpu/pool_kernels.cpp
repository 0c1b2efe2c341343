// Pooling kernels. Max pooling runs as SIMD code compiled for each target Highway selects at run
// time: 2x2 stride-2 windows (the CNN case) with their own kernel, other windows a vector of
// output columns at a time (the clipped windows at the edges one by one); channels_last avg
// pooling a vector of channels at a time; avg pooling's 2x2 stride-2 windows (forward and backward,
// float32 and the 16-bit dtypes) a vector of outputs at a time. The other avg pooling and the
// backwards are scalar loops.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/pool_kernels.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/aligned_allocator.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/parallel.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/hwy_util-inl.h"
#include "kernels/cpu/pool_kernels.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace {

// One output row of 2x2 stride-2 max pooling: r0, r1 are input rows 2*oh and 2*oh + 1; the
// outputs [0, n) read columns [0, 2n). The window is visited in PyTorch's order (r0 c0, r0 c1,
// r1 c0, r1 c1), taking a value that is greater or NaN, so ties and NaNs pick PyTorch's index.
// `code` gets, per output, which of the four positions won (row * 2 + column).
template <class T>
void max2x2_row(const T* r0, const T* r1, T* out, int32_t* code, int64_t n) {
#if HWY_TARGET != HWY_SCALAR
  const DC<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  using TI = hn::TFromD<decltype(di)>;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  HWY_ALIGN TI buf[hn::MaxLanes(di)];
  // `count` inputs from p: a full vector, or the first lanes (rows are often narrower than a vector)
  const auto load = [&](const T* p, int64_t count) {
    return count >= N ? LoadC(d, p) : LoadCN(d, p, static_cast<size_t>(std::max<int64_t>(count, 0)));
  };
  for (int64_t o = 0; o < n; o += N) {
    const int64_t r = std::min(N, n - o), m = 2 * r;
    const auto lo0 = load(r0 + 2 * o, m), hi0 = load(r0 + 2 * o + N, m - N);
    const auto lo1 = load(r1 + 2 * o, m), hi1 = load(r1 + 2 * o + N, m - N);
    auto best = hn::ConcatEven(d, hi0, lo0);
    auto which = hn::Zero(di);
    const auto candidates = {hn::ConcatOdd(d, hi0, lo0), hn::ConcatEven(d, hi1, lo1), hn::ConcatOdd(d, hi1, lo1)};
    TI k = 1;
    for (const auto& v : candidates) {
      const auto take = hn::Or(hn::Gt(v, best), hn::IsNaN(v));
      best = hn::IfThenElse(take, v, best);
      which = hn::IfThenElse(hn::RebindMask(di, take), hn::Set(di, k++), which);
    }
    if (r == N) {
      StoreC(d, best, out + o);
    } else {
      StoreCN(d, best, out + o, static_cast<size_t>(r));
    }
    if (code) {
      hn::Store(which, di, buf);
      for (int64_t j = 0; j < r; ++j) code[o + j] = static_cast<int32_t>(buf[j]);
    }
  }
#else  // one lane: no even/odd split
  using C = lane_t<T>;
  for (int64_t o = 0; o < n; ++o) {
    const C v[4] = {static_cast<C>(r0[2 * o]), static_cast<C>(r0[2 * o + 1]), static_cast<C>(r1[2 * o]),
                    static_cast<C>(r1[2 * o + 1])};
    int32_t w = 0;
    for (int32_t k = 1; k < 4; ++k)
      if (v[k] > v[w] || std::isnan(v[k])) w = k;
    out[o] = static_cast<T>(v[w]);
    if (code) code[o] = w;
  }
#endif
}

template <class T>
void max2x2_typed(const Tensor& in, const Tensor& out, const Tensor& indices) {
  const int64_t P = in.size(0), H = in.size(1), W = in.size(2);
  const int64_t oH = out.size(1), oW = out.size(2);
  const T* ip = static_cast<const T*>(in.data_ptr());
  T* op = static_cast<T*>(out.data_ptr());
  int64_t* xp = indices.defined() ? indices.data_ptr<int64_t>() : nullptr;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(H * W, 1));
  parallel_for(0, P, grain, [&](int64_t b, int64_t e) {
    std::vector<int32_t> code(xp ? oW : 0);
    for (int64_t p = b; p < e; ++p) {
      for (int64_t oh = 0; oh < oH; ++oh) {
        const T* r0 = ip + (p * H + 2 * oh) * W;
        const int64_t o = (p * oH + oh) * oW;
        max2x2_row(r0, r0 + W, op + o, xp ? code.data() : nullptr, oW);
        if (!xp) continue;
        for (int64_t ow = 0; ow < oW; ++ow)
          xp[o + ow] = (2 * oh + (code[ow] >> 1)) * W + 2 * ow + (code[ow] & 1);
      }
    }
  });
}

// One output row of 2x2 stride-2 average pooling (rows and loads as max2x2_row): each window summed
// in PyTorch's order (r0 c0, r0 c1, r1 c0, r1 c1) in the compute type, then divided by `divisor`,
// so that the results are the scalar loop's (avg_typed) bit for bit.
template <class T>
void avg2x2_row(const T* r0, const T* r1, T* out, int64_t n, lane_t<T> divisor) {
#if HWY_TARGET != HWY_SCALAR
  const DC<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto load = [&](const T* p, int64_t count) {
    return count >= N ? LoadC(d, p) : LoadCN(d, p, static_cast<size_t>(std::max<int64_t>(count, 0)));
  };
  const auto div = hn::Set(d, divisor);
  for (int64_t o = 0; o < n; o += N) {
    const int64_t r = std::min(N, n - o), m = 2 * r;
    const auto lo0 = load(r0 + 2 * o, m), hi0 = load(r0 + 2 * o + N, m - N);
    const auto lo1 = load(r1 + 2 * o, m), hi1 = load(r1 + 2 * o + N, m - N);
    // from +0, as the scalar sum: four -0 inputs average to +0
    auto sum = hn::Add(hn::Add(hn::Zero(d), hn::ConcatEven(d, hi0, lo0)), hn::ConcatOdd(d, hi0, lo0));
    sum = hn::Add(sum, hn::ConcatEven(d, hi1, lo1));
    sum = hn::Div(hn::Add(sum, hn::ConcatOdd(d, hi1, lo1)), div);
    if (r == N) {
      StoreC(d, sum, out + o);
    } else {
      StoreCN(d, sum, out + o, static_cast<size_t>(r));
    }
  }
#else
  using C = lane_t<T>;
  for (int64_t o = 0; o < n; ++o) {
    C sum = 0;
    for (const C v : {static_cast<C>(r0[2 * o]), static_cast<C>(r0[2 * o + 1]), static_cast<C>(r1[2 * o]),
                      static_cast<C>(r1[2 * o + 1])})
      sum += v;
    out[o] = static_cast<T>(sum / divisor);
  }
#endif
}

template <class T>
void avg2x2_typed(const Tensor& in, const Tensor& out, int64_t divisor) {
  const int64_t P = in.size(0), H = in.size(1), W = in.size(2);
  const int64_t oH = out.size(1), oW = out.size(2);
  const T* ip = static_cast<const T*>(in.data_ptr());
  T* op = static_cast<T*>(out.data_ptr());
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(H * W, 1));
  parallel_for(0, P, grain, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      for (int64_t oh = 0; oh < oH; ++oh) {
        const T* r0 = ip + (p * H + 2 * oh) * W;
        avg2x2_row(r0, r0 + W, op + (p * oH + oh) * oW, oW, static_cast<lane_t<T>>(divisor));
      }
    }
  });
}

// avg2x2's backward (avg_backward_typed's 2x2 case): each output's gradient divided and rounded to
// T as the scalar loop rounds it, added to the zeroed input (0 + v: a -0 becomes +0), lands on its
// four inputs: a vector of gradients doubled along the row (lanes 0 0 1 1 ...) into both rows.
template <class T>
void avg2x2_backward_typed(const Tensor& grad_out, const Tensor& grad_in, int64_t divisor) {
  const int64_t P = grad_in.size(0), H = grad_in.size(1), W = grad_in.size(2);
  const int64_t oH = grad_out.size(1), oW = grad_out.size(2);
  const T* go = static_cast<const T*>(grad_out.data_ptr());
  T* gi = static_cast<T*>(grad_in.data_ptr());
  const bool edges = H != 2 * oH || W != 2 * oW;  // a last row or column that no window covers
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(H * W, 1));
  parallel_for(0, P, grain, [&](int64_t b, int64_t e) {
    using L = lane_t<T>;
    const DC<T> d;
#if HWY_TARGET != HWY_SCALAR
    const hn::RebindToSigned<decltype(d)> di;
    using TI = hn::TFromD<decltype(di)>;
    const int64_t N = static_cast<int64_t>(hn::Lanes(d));
    HWY_ALIGN TI lo_lanes[hn::MaxLanes(di)], hi_lanes[hn::MaxLanes(di)];
    for (int64_t j = 0; j < N; ++j) lo_lanes[j] = static_cast<TI>(j / 2), hi_lanes[j] = static_cast<TI>(N / 2 + j / 2);
    const auto lo_ix = hn::SetTableIndices(d, lo_lanes), hi_ix = hn::SetTableIndices(d, hi_lanes);
    HWY_ALIGN T rounded[hn::MaxLanes(d)];
#endif
    for (int64_t p = b; p < e; ++p) {
      T* dst = gi + p * H * W;
      if (edges) std::fill(dst, dst + H * W, T(0));
      for (int64_t oh = 0; oh < oH; ++oh) {
        const T* g = go + (p * oH + oh) * oW;
        T* r0 = dst + 2 * oh * W;
#if HWY_TARGET != HWY_SCALAR
        for (int64_t o = 0; o < oW; o += N) {
          const int64_t r = std::min(N, oW - o), m = 2 * r;
          auto v = hn::Div(r == N ? LoadC(d, g + o) : LoadCN(d, g + o, static_cast<size_t>(r)), hn::Set(d, L(divisor)));
          if constexpr (!std::is_same_v<T, L>) {  // rounded to T first, as the scalar loop
            StoreC(d, v, rounded);
            v = LoadC(d, rounded);
          }
          v = hn::Add(hn::Zero(d), v);
          const auto lo = hn::TableLookupLanes(v, lo_ix), hi = hn::TableLookupLanes(v, hi_ix);
          for (T* row : {r0, r0 + W}) {
            StoreCN(d, lo, row + 2 * o, static_cast<size_t>(std::min(m, N)));
            if (m > N) StoreCN(d, hi, row + 2 * o + N, static_cast<size_t>(m - N));
          }
        }
#else
        for (int64_t o = 0; o < oW; ++o) {
          const L v = L(0) + static_cast<L>(static_cast<T>(static_cast<L>(g[o]) / static_cast<L>(divisor)));
          r0[2 * o] = r0[2 * o + 1] = r0[W + 2 * o] = r0[W + 2 * o + 1] = static_cast<T>(v);
        }
#endif
      }
    }
  });
}

// The inputs at p[0], p[s], ..., p[(n - 1) s] as the first n lanes of a compute vector (n <= lanes).
template <class D, class T>
HWY_INLINE hn::Vec<D> LoadStrided(D d, const T* p, int64_t s, int64_t n) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  if (s == 1) return n == N ? LoadC(d, p) : LoadCN(d, p, static_cast<size_t>(n));
#if HWY_TARGET != HWY_SCALAR
  if (s == 2) {  // the even inputs of [0, 2n - 1), masked so nothing past the last one is read
    const int64_t m = 2 * n - 1;
    const auto lo = LoadCN(d, p, static_cast<size_t>(std::min(m, N)));
    const auto hi = LoadCN(d, p + N, static_cast<size_t>(std::max<int64_t>(m - N, 0)));
    return hn::ConcatEven(d, hi, lo);
  }
#endif
  HWY_ALIGN lane_t<T> buf[hn::MaxLanes(d)] = {};
  for (int64_t j = 0; j < n; ++j) buf[j] = static_cast<lane_t<T>>(p[j * s]);
  return hn::Load(d, buf);
}

// The maximum of one output's window (PyTorch's order: rows, then columns; greater or NaN
// replaces), its flat input index in *at.
template <class T>
lane_t<T> max_window(const T* plane, int64_t W, const PoolAxis& h, const PoolAxis& w, int64_t oh, int64_t ow,
                     int64_t* at) {
  using C = lane_t<T>;
  int64_t best_i = h.begin[oh] * W + w.begin[ow];
  C best = -std::numeric_limits<C>::infinity();
  for (int64_t ih = h.begin[oh]; ih < h.end[oh]; ih += h.step) {
    for (int64_t iw = w.begin[ow]; iw < w.end[ow]; iw += w.step) {
      const C v = static_cast<C>(plane[ih * W + iw]);
      const bool take = (v > best) | std::isnan(v);  // selects, not branches: data decides
      best = take ? v : best;
      best_i = take ? ih * W + iw : best_i;
    }
  }
  *at = best_i;
  return best;
}

// Max pooling of planes whose rows are at most a vector (W <= lanes of d): each output row's window
// rows' maximum (and, with indices, the row it came from) stays in a register, and the window
// columns are taken by lane permutes, tap k of output ow being lane idx[k][ow] (a clipped window
// repeats its last tap). The winner is max_window's: the first maximum in its order (rows, then
// columns: the least flat index among equal values) or else its last NaN (the greatest flat
// index among NaN). (16 8x8 planes, 3x3 windows at stride 2: max_pool2d 1.33 -> 0.78 us without
// indices, with them forward and backward 4.1 -> 3.0 us; the columns one by one took a third of
// the time.) False where a window is empty or has more than 8 columns.
template <class T, bool kIndices, class D>
bool max_rows_in_vector(D d, const T* ip, T* op, int64_t* xp, int64_t P, int64_t H, int64_t W, int64_t oH,
                        int64_t oW, const PoolAxis& h, const PoolAxis& w, int64_t grain) {
  using C = lane_t<T>;
  using TI = hwy::MakeSigned<C>;
  const hn::RebindToSigned<D> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  constexpr int64_t kMaxTaps = 8;
  int64_t taps = 0;
  for (int64_t ow = 0; ow < oW; ++ow) {
    const int64_t n = (w.end[ow] - w.begin[ow] + w.step - 1) / w.step;
    if (n <= 0) return false;
    taps = std::max(taps, n);
  }
  if (W > N || taps > kMaxTaps) return false;
  HWY_ALIGN TI idx[kMaxTaps][hn::MaxLanes(d)] = {};
  for (int64_t k = 0; k < taps; ++k) {
    for (int64_t ow = 0; ow < oW; ++ow) {
      const int64_t last = w.begin[ow] + (w.end[ow] - w.begin[ow] - 1) / w.step * w.step;
      idx[k][ow] = static_cast<TI>(std::min(w.begin[ow] + k * w.step, last));
    }
  }
  parallel_for(0, P, grain, [&](int64_t b, int64_t e) {
    const auto lowest = hn::Set(d, -std::numeric_limits<C>::infinity());
    const auto column = hn::Iota(di, 0);
    HWY_ALIGN C res[hn::MaxLanes(d)];
    HWY_ALIGN TI at[hn::MaxLanes(d)];
    for (int64_t p = b; p < e; ++p) {
      const T* plane = ip + p * H * W;
      for (int64_t oh = 0; oh < oH; ++oh) {
        auto acc = lowest;
        auto row = hn::Set(di, static_cast<TI>(h.begin[oh] * W));  // (the winning row's first flat index)
        for (int64_t ih = h.begin[oh]; ih < h.end[oh]; ih += h.step) {
          const T* x = plane + ih * W;
          const auto v = W == N ? LoadC(d, x) : LoadCN(d, x, static_cast<size_t>(W));
          const auto take = hn::Or(hn::Gt(v, acc), hn::IsNaN(v));
          acc = hn::IfThenElse(take, v, acc);
          if constexpr (kIndices) row = hn::IfThenElse(hn::RebindMask(di, take), hn::Set(di, static_cast<TI>(ih * W)), row);
        }
        auto best = lowest;
        auto nan = hn::FirstN(d, 0);
        // flat indices: the window's first position to begin with, which no tap precedes
        const auto flat = hn::Add(row, column);
        auto best_at = hn::Set(di, static_cast<TI>(h.begin[oh] * W));
        if constexpr (kIndices) best_at = hn::Add(best_at, hn::Load(di, idx[0]));
        for (int64_t k = 0; k < taps; ++k) {
          const auto ix = hn::SetTableIndices(di, idx[k]);
          const auto t = hn::BitCast(d, hn::TableLookupLanes(hn::BitCast(di, acc), ix));
          const auto t_nan = hn::IsNaN(t);
          if constexpr (kIndices) {
            const auto t_at = hn::TableLookupLanes(flat, ix);
            const auto earlier = hn::RebindMask(d, hn::Lt(t_at, best_at));
            const auto later = hn::RebindMask(d, hn::Gt(t_at, best_at));
            // a NaN replaces a number or an earlier NaN; a number replaces a greater number or an
            // equal later one
            const auto take = hn::Or(hn::And(t_nan, hn::Or(hn::Not(nan), later)),
                                     hn::AndNot(nan, hn::Or(hn::Gt(t, best), hn::And(hn::Eq(t, best), earlier))));
            best = hn::IfThenElse(take, t, best);
            best_at = hn::IfThenElse(hn::RebindMask(di, take), t_at, best_at);
            nan = hn::Or(nan, t_nan);
          } else {
            best = hn::IfThenElse(hn::Gt(t, best), t, best);
            nan = hn::Or(nan, t_nan);
          }
        }
        if constexpr (kIndices) {
          hn::Store(best, d, res);
          hn::Store(best_at, di, at);
        } else {
          hn::Store(hn::IfThenElse(nan, hn::Set(d, std::numeric_limits<C>::quiet_NaN()), best), d, res);
        }
        T* o = op + (p * oH + oh) * oW;
        for (int64_t ow = 0; ow < oW; ++ow) o[ow] = static_cast<T>(res[ow]);
        if constexpr (kIndices) {
          int64_t* oi = xp + (p * oH + oh) * oW;
          for (int64_t ow = 0; ow < oW; ++ow) oi[ow] = at[ow];
        }
      }
    }
  });
  return true;
}

// Max pooling without indices of planes whose rows of outputs are shorter than a vector (below,
// the vector path would run on partial vectors, every input read as a strided load):
// the maximum is separable, taken over each output row's window rows first, a whole input row at
// a time in vectors, then over each output's window columns of those.
// NaN propagates either way. (A 3x3 window, stride 2, on 16 8x8 planes: the op took 0.76-0.88x
// libtorch's time, 0.54-0.66x so.)
template <class T, class D>
void max_separable_in(D d, const T* ip, T* op, int64_t P, int64_t H, int64_t W, int64_t oH, int64_t oW,
                      const PoolAxis& h, const PoolAxis& w, int64_t grain) {
  using C = lane_t<T>;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  if constexpr (!std::is_same_v<T, double>) {  // (float64 keeps the loops below: 8 KB of library less)
    if (max_rows_in_vector<T, false>(d, ip, op, nullptr, P, H, W, oH, oW, h, w, grain)) return;
  }
  parallel_for(0, P, grain, [&](int64_t b, int64_t e) {
    const int64_t padded = (W + N - 1) / N * N;
    constexpr int64_t kOnStack = 256;  // a row of up to 256 inputs without an allocation
    HWY_ALIGN C small[kOnStack];
    hwy::AlignedFreeUniquePtr<C[]> large;
    if (padded > kOnStack) large = hwy::AllocateAligned<C>(static_cast<size_t>(padded));
    C* HWY_RESTRICT m = large ? large.get() : small;
    for (int64_t p = b; p < e; ++p) {
      const T* plane = ip + p * H * W;
      for (int64_t oh = 0; oh < oH; ++oh) {
        const auto lowest = hn::Set(d, -std::numeric_limits<C>::infinity());
        for (int64_t iw = 0; iw < padded; iw += N) hn::Store(lowest, d, m + iw);
        for (int64_t ih = h.begin[oh]; ih < h.end[oh]; ih += h.step) {
          const T* x = plane + ih * W;
          int64_t iw = 0;
          for (; iw < W; iw += N) {
            // a float row's tail in a plain loop, which GCC vectorizes at the width that fits (an
            // 8-wide row took 20% longer as a masked 16-lane vector); a 16-bit one masked
            if (std::is_same_v<T, C> && iw + N > W) break;
            const auto v = iw + N <= W ? LoadC(d, x + iw) : LoadCN(d, x + iw, static_cast<size_t>(W - iw));
            const auto acc = hn::Load(d, m + iw);
            hn::Store(hn::IfThenElse(hn::Or(hn::Gt(v, acc), hn::IsNaN(v)), v, acc), d, m + iw);
          }
          for (; iw < W; ++iw) {
            const C v = static_cast<C>(x[iw]);
            m[iw] = (v > m[iw]) | (v != v) ? v : m[iw];
          }
        }
        T* o = op + (p * oH + oh) * oW;
        for (int64_t ow = 0; ow < oW; ++ow) {
          // a maximum instruction and a NaN flag: the select of the vertical pass, here on
          // scalars, became branches the data mispredicted
          C best = -std::numeric_limits<C>::infinity();
          bool nan = false;
          for (int64_t iw = w.begin[ow]; iw < w.end[ow]; iw += w.step) {
            best = m[iw] > best ? m[iw] : best;
            nan |= m[iw] != m[iw];
          }
          o[ow] = static_cast<T>(nan ? std::numeric_limits<C>::quiet_NaN() : best);
        }
      }
    }
  });
}
template <class T>
void max_separable(const T* ip, T* op, int64_t P, int64_t H, int64_t W, int64_t oH, int64_t oW, const PoolAxis& h,
                   const PoolAxis& w, int64_t grain) {
  using C = lane_t<T>;
  // rows of up to 8 in vectors of 8 lanes (16-lane vectors left half of each load unused)
  if (W <= 8 && hn::Lanes(DC<T>()) > 8) return max_separable_in<T>(hn::CappedTag<C, 8>(), ip, op, P, H, W, oH, oW, h, w, grain);
  max_separable_in<T>(DC<T>(), ip, op, P, H, W, oH, oW, h, w, grain);
}

// Max pooling of (P, H, W) planes with any windows. The output columns [lo, hi), whose windows
// are whole and start `stride` apart, go a vector of outputs at a time: each tap of the window
// reads a strided row of inputs, visited in the order of max_window, with its rule, so values and
// indices are the same. The other columns (clipped windows at the edges) go one by one.
template <class T, bool kIndices>
void max_general_typed(const Tensor& in, const Tensor& out, const Tensor& indices, const PoolAxis& h,
                       const PoolAxis& w, const MaxColumns& cols) {
  const int64_t P = in.size(0), H = in.size(1), W = in.size(2);
  const int64_t oH = out.size(1), oW = out.size(2);
  const T* ip = static_cast<const T*>(in.data_ptr());
  T* op = static_cast<T*>(out.data_ptr());
  int64_t* xp = kIndices ? indices.data_ptr<int64_t>() : nullptr;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(H * W + oH * oW, 1));
  if constexpr (!kIndices) {
    if (oW < static_cast<int64_t>(hn::Lanes(DC<T>()))) return max_separable<T>(ip, op, P, H, W, oH, oW, h, w, grain);
  } else if constexpr (!std::is_same_v<T, double>) {  // (as max_separable_in's)
    using C = lane_t<T>;
    if (oW < static_cast<int64_t>(hn::Lanes(DC<T>()))) {
      if (W <= 8 && hn::Lanes(DC<T>()) > 8) {
        if (max_rows_in_vector<T, true>(hn::CappedTag<C, 8>(), ip, op, xp, P, H, W, oH, oW, h, w, grain)) return;
      } else if (max_rows_in_vector<T, true>(DC<T>(), ip, op, xp, P, H, W, oH, oW, h, w, grain)) {
        return;
      }
    }
  }
  parallel_for(0, P, grain, [&](int64_t b, int64_t e) {
    const DC<T> d;
    const hn::RebindToSigned<decltype(d)> di;
    using TI = hn::TFromD<decltype(di)>;
    const int64_t N = static_cast<int64_t>(hn::Lanes(d));
    HWY_ALIGN TI buf[hn::MaxLanes(di)], picked[hn::MaxLanes(di)];
    for (int64_t j = 0; j < N; ++j) buf[j] = static_cast<TI>(j * cols.stride);
    const auto lane_offset = hn::Load(di, buf);  // lane j's column, relative to lane 0's
    for (int64_t p = b; p < e; ++p) {
      const T* plane = ip + p * H * W;
      for (int64_t oh = 0; oh < oH; ++oh) {
        const int64_t row = (p * oH + oh) * oW;
        const auto one = [&](int64_t ow) {
          int64_t at;
          op[row + ow] = static_cast<T>(max_window(plane, W, h, w, oh, ow, &at));
          if constexpr (kIndices) xp[row + ow] = at;
        };
        for (int64_t ow = 0; ow < cols.lo; ++ow) one(ow);
        for (int64_t o = cols.lo; o < cols.hi; o += N) {
          const int64_t r = std::min(N, cols.hi - o);
          auto best = hn::Set(d, -std::numeric_limits<lane_t<T>>::infinity());
          auto which = hn::Add(hn::Set(di, static_cast<TI>(h.begin[oh] * W + w.begin[o])), lane_offset);
          for (int64_t ih = h.begin[oh]; ih < h.end[oh]; ih += h.step) {
            for (int64_t iw = w.begin[o]; iw < w.end[o]; iw += w.step) {
              const auto v = LoadStrided(d, plane + ih * W + iw, cols.stride, r);
              const auto take = hn::Or(hn::Gt(v, best), hn::IsNaN(v));
              best = hn::IfThenElse(take, v, best);
              if constexpr (kIndices) {
                const auto at = hn::Add(hn::Set(di, static_cast<TI>(ih * W + iw)), lane_offset);
                which = hn::IfThenElse(hn::RebindMask(di, take), at, which);
              }
            }
          }
          if (r == N) {
            StoreC(d, best, op + row + o);
          } else {
            StoreCN(d, best, op + row + o, static_cast<size_t>(r));
          }
          if constexpr (kIndices) {
            hn::Store(which, di, picked);
            for (int64_t j = 0; j < r; ++j) xp[row + o + j] = static_cast<int64_t>(picked[j]);
          }
        }
        for (int64_t ow = std::max(cols.lo, cols.hi); ow < oW; ++ow) one(ow);
      }
    }
  });
}

void max_general_impl(const Tensor& in, const Tensor& out, const Tensor& indices, const PoolAxis& h,
                      const PoolAxis& w, const MaxColumns& cols) {
  visit_float(in.dtype(), "max_pool2d", [&](auto tag) {
    using T = decltype(tag);
    if (indices.defined()) {
      max_general_typed<T, true>(in, out, indices, h, w, cols);
    } else {
      max_general_typed<T, false>(in, out, indices, h, w, cols);
    }
  });
}

// A maximum of bfloat16 inputs is one of them: its float32 value converts back exactly, by
// truncation, without StoreC's rounding (emulated on CPUs without bfloat16 instructions).
template <class D, class T>
HWY_INLINE void StoreExact(D d, hn::Vec<D> v, T* p) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    const hn::Rebind<int32_t, D> di32;
    const hn::Rebind<uint32_t, D> du32;
    const hn::Rebind<uint16_t, D> du16;
    const auto bits = hn::BitCast(di32, hn::ShiftRight<16>(hn::BitCast(du32, v)));  // in [0, 65535]
    hn::StoreU(hn::DemoteTo(du16, bits), du16, reinterpret_cast<uint16_t*>(p));
  } else {
    StoreC(d, v, p);
  }
}

// channels_last max pooling, in (N, H, W, C) -> out (N, oH, oW, C): each output position takes
// the window's maximum across the channels in compute vectors, visiting the window in the same
// order and with the same rule (greater or NaN) as the plane kernel; the indices only when asked.
template <class T, bool kIndices>
void max_cl_typed(const Tensor& in, const Tensor& out, const Tensor& indices, const PoolAxis& h, const PoolAxis& w) {
  const int64_t N = in.size(0), H = in.size(1), W = in.size(2), C = in.size(3);
  const int64_t oH = out.size(1), oW = out.size(2);
  const T* ip = static_cast<const T*>(in.data_ptr());
  T* op = static_cast<T*>(out.data_ptr());
  int64_t* xp = kIndices ? indices.data_ptr<int64_t>() : nullptr;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(oW * C * 4, 1));
  parallel_for(0, N * oH, grain, [&](int64_t b, int64_t e) {
    const DC<T> d;
    const hn::RebindToSigned<decltype(d)> di;
    using TI = hn::TFromD<decltype(di)>;
    const int64_t V = static_cast<int64_t>(hn::Lanes(d));
    HWY_ALIGN TI buf[hn::MaxLanes(di)];
    for (int64_t r = b; r < e; ++r) {
      const int64_t n = r / oH, oh = r % oH;
      const T* plane = ip + n * H * W * C;
      for (int64_t ow = 0; ow < oW; ++ow) {
        const int64_t o = (r * oW + ow) * C;
        int64_t c = 0;
#if HWY_TARGET == HWY_AVX2
        if constexpr (std::is_same_v<T, BFloat16> && !kIndices) {
          // 16 channels a step, without conversions: a 32-byte load interleaved with zeros is two
          // float vectors (channels 0-3 and 8-11, 4-7 and 12-15), and the maxima's high halves
          // packed back per 128-bit block are the 16 channels in order. (Widening and narrowing
          // each vector made bfloat16 take 1.4x float32's time, and libtorch's.)
          const __m256i zero = _mm256_setzero_si256();
          for (; c + 16 <= C; c += 16) {
            auto lo = hn::Set(d, -std::numeric_limits<float>::infinity()), hi = lo;
            for (int64_t ih = h.begin[oh]; ih < h.end[oh]; ih += h.step) {
              for (int64_t iw = w.begin[ow]; iw < w.end[ow]; iw += w.step) {
                const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(plane + (ih * W + iw) * C + c));
                const hn::Vec<decltype(d)> a{_mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, x))};
                const hn::Vec<decltype(d)> z{_mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, x))};
                lo = hn::IfThenElse(hn::Or(hn::Gt(a, lo), hn::IsNaN(a)), a, lo);
                hi = hn::IfThenElse(hn::Or(hn::Gt(z, hi), hn::IsNaN(z)), z, hi);
              }
            }
            const __m256i lb = _mm256_srli_epi32(_mm256_castps_si256(lo.raw), 16);
            const __m256i hb = _mm256_srli_epi32(_mm256_castps_si256(hi.raw), 16);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(op + o + c), _mm256_packus_epi32(lb, hb));
          }
        }
#endif
        for (; c < C; c += V) {
          const int64_t k = std::min(V, C - c);
          auto best = hn::Set(d, -std::numeric_limits<lane_t<T>>::infinity());
          auto which = hn::Set(di, static_cast<TI>(h.begin[oh] * W + w.begin[ow]));
          for (int64_t ih = h.begin[oh]; ih < h.end[oh]; ih += h.step) {
            for (int64_t iw = w.begin[ow]; iw < w.end[ow]; iw += w.step) {
              const T* src = plane + (ih * W + iw) * C + c;
              const auto v = k == V ? LoadC(d, src) : LoadCN(d, src, static_cast<size_t>(k));
              const auto take = hn::Or(hn::Gt(v, best), hn::IsNaN(v));
              best = hn::IfThenElse(take, v, best);
              if constexpr (kIndices) {
                which = hn::IfThenElse(hn::RebindMask(di, take), hn::Set(di, static_cast<TI>(ih * W + iw)), which);
              }
            }
          }
          if (k == V) {
            StoreExact(d, best, op + o + c);
          } else {
            StoreCN(d, best, op + o + c, static_cast<size_t>(k));
          }
          if constexpr (kIndices) {
            hn::Store(which, di, buf);
            for (int64_t j = 0; j < k; ++j) xp[o + c + j] = static_cast<int64_t>(buf[j]);
          }
        }
      }
    }
  });
}

// channels_last avg pooling: one output row (n, oh) per task; per window, the channels' sums a
// vector at a time in the plane kernel's order and compute type (so the results are bitwise
// the plane kernel's), divided by divisors[oh * oW + ow] (0: an empty window, which gives 0).
// 2x2 windows at stride 2 (two_by_two) take a loop of their own: the four positions' vectors
// summed as above, with no list of positions and one divisor (avg_pool2d of 1 x 16 x 8 x 8: the
// general loop's set-up per window was a third of the op's time).
template <class T>
void avg_cl_typed(const Tensor& in, const Tensor& out, const PoolAxis& h, const PoolAxis& w, const int64_t* divisors,
                  bool two_by_two) {
  const DC<T> d;
  const int64_t V = static_cast<int64_t>(hn::Lanes(d));
  const int64_t H = in.size(1), W = in.size(2), Ch = in.size(3);
  const int64_t oH = out.size(1), oW = out.size(2);
  const T* ip = static_cast<const T*>(in.data_ptr());
  T* op = static_cast<T*>(out.data_ptr());
  const int64_t work = std::max<int64_t>(1, (W + oW) * Ch);
  if (two_by_two) {
    const auto div = hn::Set(d, static_cast<hn::TFromD<DC<T>>>(divisors[0]));
    parallel_for(0, in.size(0) * oH, std::max<int64_t>(1, kGrainSize / work), [&, H, W, Ch, oH, oW](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {
        const T* r0 = ip + (row / oH * H + 2 * (row % oH)) * W * Ch;
        const T* r1 = r0 + W * Ch;
        T* dst = op + row * oW * Ch;
        for (int64_t ow = 0; ow < oW; ++ow, r0 += 2 * Ch, r1 += 2 * Ch, dst += Ch) {
          for (int64_t c = 0; c < Ch; c += V) {
            const size_t k = static_cast<size_t>(std::min(V, Ch - c));
            const auto load = [&](const T* p) { return k == static_cast<size_t>(V) ? LoadC(d, p) : LoadCN(d, p, k); };
            auto sum = hn::Add(hn::Add(hn::Zero(d), load(r0 + c)), load(r0 + Ch + c));
            sum = hn::Div(hn::Add(hn::Add(sum, load(r1 + c)), load(r1 + Ch + c)), div);
            if (k == static_cast<size_t>(V)) {
              StoreC(d, sum, dst + c);
            } else {
              StoreCN(d, sum, dst + c, k);
            }
          }
        }
      }
    });
    return;
  }
  size_t window = 0;  // the most positions a window has
  for (size_t oh = 0; oh < h.begin.size(); ++oh)
    for (size_t ow = 0; ow < w.begin.size(); ++ow)
      window = std::max<size_t>(window, static_cast<size_t>(std::max<int64_t>(h.end[oh] - h.begin[oh], 0) *
                                                            std::max<int64_t>(w.end[ow] - w.begin[ow], 0)));
  parallel_for(0, in.size(0) * oH, std::max<int64_t>(1, kGrainSize / work), [&](int64_t b, int64_t e) {
    std::vector<const T*> pixels(window);  // a window's positions, channel 0
    for (int64_t row = b; row < e; ++row) {
      const int64_t n = row / oH, oh = row % oH;
      for (int64_t ow = 0; ow < oW; ++ow) {
        const int64_t divisor = divisors[oh * oW + ow];
        T* dst = op + (row * oW + ow) * Ch;
        size_t np = 0;
        for (int64_t ih = h.begin[oh]; ih < h.end[oh]; ih += h.step)
          for (int64_t iw = w.begin[ow]; iw < w.end[ow]; iw += w.step) pixels[np++] = ip + ((n * H + ih) * W + iw) * Ch;
        const auto average = [&](hn::Vec<DC<T>> sum) {
          return divisor == 0 ? hn::Zero(d) : hn::Div(sum, hn::Set(d, static_cast<hn::TFromD<DC<T>>>(divisor)));
        };
        int64_t c = 0;
        if constexpr (std::is_same_v<T, BFloat16>) {  // two vectors to one store (StoreC2)
          for (; c + 2 * V <= Ch; c += 2 * V) {
            auto s0 = hn::Zero(d), s1 = hn::Zero(d);
            for (size_t j = 0; j < np; ++j) {
              s0 = hn::Add(s0, LoadC(d, pixels[j] + c));
              s1 = hn::Add(s1, LoadC(d, pixels[j] + c + V));
            }
            StoreC2(d, average(s0), average(s1), dst + c);
          }
        }
        for (; c < Ch; c += V) {
          const size_t k = static_cast<size_t>(std::min(V, Ch - c));
          auto sum = hn::Zero(d);
          if (k == static_cast<size_t>(V)) {
            for (size_t j = 0; j < np; ++j) sum = hn::Add(sum, LoadC(d, pixels[j] + c));
          } else {
            for (size_t j = 0; j < np; ++j) sum = hn::Add(sum, LoadCN(d, pixels[j] + c, k));
          }
          const auto avg = average(sum);
          if (k == static_cast<size_t>(V)) {
            StoreC(d, avg, dst + c);
          } else {
            StoreCN(d, avg, dst + c, k);
          }
        }
      }
    }
  });
}

void avg_cl_impl(const Tensor& in, const Tensor& out, const PoolAxis& h, const PoolAxis& w, const int64_t* divisors,
                 bool two_by_two) {
  visit_float(in.dtype(), "avg_pool2d",
              [&](auto tag) { avg_cl_typed<decltype(tag)>(in, out, h, w, divisors, two_by_two); });
}

void max_cl_impl(const Tensor& in, const Tensor& out, const Tensor& indices, const PoolAxis& h, const PoolAxis& w) {
  visit_float(in.dtype(), "max_pool2d", [&](auto tag) {
    if (indices.defined()) {
      max_cl_typed<decltype(tag), true>(in, out, indices, h, w);
    } else {
      max_cl_typed<decltype(tag), false>(in, out, indices, h, w);
    }
  });
}

void max2x2_impl(const Tensor& in, const Tensor& out, const Tensor& indices) {
  visit_float(in.dtype(), "max_pool2d", [&](auto tag) { max2x2_typed<decltype(tag)>(in, out, indices); });
}
// (float32, bfloat16 and float16: float64 keeps the scalar loops, 6 KB of library less)
void avg2x2_impl(const Tensor& in, const Tensor& out, int64_t divisor) {
  visit_float(in.dtype(), "avg_pool2d", [&](auto tag) {
    if constexpr (!std::is_same_v<decltype(tag), double>) avg2x2_typed<decltype(tag)>(in, out, divisor);
  });
}
void avg2x2_backward_impl(const Tensor& grad_out, const Tensor& grad_in, int64_t divisor) {
  visit_float(grad_in.dtype(), "avg_pool2d_backward", [&](auto tag) {
    if constexpr (!std::is_same_v<decltype(tag), double>) avg2x2_backward_typed<decltype(tag)>(grad_out, grad_in, divisor);
  });
}

}  // namespace
}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(max2x2_impl);
HWY_EXPORT(avg2x2_impl);
HWY_EXPORT(avg2x2_backward_impl);
HWY_EXPORT(max_cl_impl);
HWY_EXPORT(max_general_impl);
HWY_EXPORT(avg_cl_impl);
namespace {

// The output columns whose windows are whole (the widest span) and start a constant stride
// apart: the longest such run from the first whole window. None when flat indices into the plane
// would not fit the vector kernel's 32-bit lanes.
MaxColumns max_columns(const PoolAxis& w, int64_t plane_elements) {
  const int64_t n = static_cast<int64_t>(w.begin.size());
  if (plane_elements > std::numeric_limits<int32_t>::max() || n == 0) return {};
  const auto span = [&](int64_t o) { return w.end[o] - w.begin[o]; };
  int64_t widest = 0;
  for (int64_t o = 0; o < n; ++o) widest = std::max(widest, span(o));
  int64_t lo = 0;
  while (span(lo) != widest) ++lo;
  const int64_t stride = lo + 1 < n ? w.begin[lo + 1] - w.begin[lo] : 1;
  int64_t hi = lo + 1;
  while (hi < n && span(hi) == widest && w.begin[hi] == w.begin[lo] + (hi - lo) * stride) ++hi;
  return {lo, hi, hi - lo > 1 ? stride : 1};
}

// Whether every window of the axis is [2o, 2o + 2): kernel 2, stride 2, no padding or dilation.
bool windows_2_by_2(const PoolAxis& a) {
  if (a.step != 1) return false;
  for (size_t o = 0; o < a.begin.size(); ++o)
    if (a.begin[o] != static_cast<int64_t>(2 * o) || a.end[o] != static_cast<int64_t>(2 * o + 2)) return false;
  return true;
}

// f(plane) over all planes, in parallel when the work is large enough.
template <class F>
void for_planes(int64_t planes, int64_t work_per_plane, const F& f) {
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(work_per_plane, 1));
  parallel_for(0, planes, grain, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) f(p);
  });
}

// What avg pooling divides output (oh, ow)'s window sum by; 0 for an empty window.
int64_t avg_divisor(const PoolAxis& h, const PoolAxis& w, int64_t oh, int64_t ow, bool count_extent,
                    int64_t divisor_override) {
  const int64_t count = std::max<int64_t>(h.end[oh] - h.begin[oh], 0) * std::max<int64_t>(w.end[ow] - w.begin[ow], 0);
  if (count == 0) return 0;
  return divisor_override ? divisor_override : count_extent ? h.extent[oh] * w.extent[ow] : count;
}

template <class T>
void avg_typed(const Tensor& in, const Tensor& out, const PoolAxis& h, const PoolAxis& w, bool count_extent,
               int64_t divisor_override) {
  using C = compute_t<T>;
  const int64_t P = in.size(0), H = in.size(1), W = in.size(2);
  const int64_t oH = out.size(1), oW = out.size(2);
  const T* ip = static_cast<const T*>(in.data_ptr());
  T* op = static_cast<T*>(out.data_ptr());
  for_planes(P, H * W + oH * oW, [&](int64_t p) {
    const T* src = ip + p * H * W;
    for (int64_t oh = 0; oh < oH; ++oh) {
      for (int64_t ow = 0; ow < oW; ++ow) {
        C sum = 0;
        for (int64_t ih = h.begin[oh]; ih < h.end[oh]; ih += h.step)
          for (int64_t iw = w.begin[ow]; iw < w.end[ow]; iw += w.step) sum += static_cast<C>(src[ih * W + iw]);
        const int64_t divisor = avg_divisor(h, w, oh, ow, count_extent, divisor_override);
        op[(p * oH + oh) * oW + ow] = static_cast<T>(divisor == 0 ? C(0) : sum / static_cast<C>(divisor));
      }
    }
  });
}

// The backward loops zero one plane of grad_in and accumulate into it in its own dtype, in output
// order, as PyTorch does (16-bit types round after every addition, as theirs do).
template <class T, class F>
void for_grad_planes(const Tensor& grad_in, int64_t work_per_plane, const F& accumulate) {
  const int64_t P = grad_in.size(0), HW = grad_in.size(1) * grad_in.size(2);
  T* gp = static_cast<T*>(grad_in.data_ptr());
  for_planes(P, HW + work_per_plane, [&](int64_t p) {
    T* dst = gp + p * HW;
    std::fill(dst, dst + HW, T(0));
    accumulate(p, dst);
  });
}

template <class T>
void max_backward_typed(const Tensor& grad_out, const Tensor& indices, const Tensor& grad_in) {
  using C = compute_t<T>;
  const int64_t O = grad_out.size(1) * grad_out.size(2);
  const T* go = static_cast<const T*>(grad_out.data_ptr());
  const int64_t* ip = indices.data_ptr<int64_t>();
  for_grad_planes<T>(grad_in, O, [&](int64_t p, T* dst) {
    const T* g = go + p * O;
    const int64_t* idx = ip + p * O;
    for (int64_t o = 0; o < O; ++o) dst[idx[o]] = static_cast<T>(static_cast<C>(dst[idx[o]]) + static_cast<C>(g[o]));
  });
}

template <class T>
void avg_backward_typed(const Tensor& grad_out, const Tensor& grad_in, const PoolAxis& h, const PoolAxis& w,
                        bool count_extent, int64_t divisor_override) {
  using C = compute_t<T>;
  const int64_t oH = grad_out.size(1), oW = grad_out.size(2), W = grad_in.size(2);
  const T* go = static_cast<const T*>(grad_out.data_ptr());
  for_grad_planes<T>(grad_in, oH * oW, [&](int64_t p, T* dst) {
    const T* g = go + p * oH * oW;
    for (int64_t oh = 0; oh < oH; ++oh) {
      for (int64_t ow = 0; ow < oW; ++ow) {
        const int64_t divisor = avg_divisor(h, w, oh, ow, count_extent, divisor_override);
        if (divisor == 0) continue;
        const C v = static_cast<C>(static_cast<T>(static_cast<C>(g[oh * oW + ow]) / static_cast<C>(divisor)));
        for (int64_t ih = h.begin[oh]; ih < h.end[oh]; ih += h.step)
          for (int64_t iw = w.begin[ow]; iw < w.end[ow]; iw += w.step)
            dst[ih * W + iw] = static_cast<T>(static_cast<C>(dst[ih * W + iw]) + v);
      }
    }
  });
}

// Its backward: one sample per task, accumulated in the plane kernel's order and dtype.
template <class T>
void avg_backward_cl_typed(const Tensor& grad_out, const Tensor& grad_in, const PoolAxis& h, const PoolAxis& w,
                           bool count_extent, int64_t divisor_override) {
  using C = compute_t<T>;
  const int64_t N = grad_in.size(0), W = grad_in.size(2), Ch = grad_in.size(3), HWC = grad_in.size(1) * W * Ch;
  const int64_t oH = grad_out.size(1), oW = grad_out.size(2);
  const T* go = static_cast<const T*>(grad_out.data_ptr());
  T* gp = static_cast<T*>(grad_in.data_ptr());
  parallel_for(0, N, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(HWC + oH * oW * Ch, 1)),
               [&](int64_t b, int64_t e) {
                 std::vector<C> v(static_cast<size_t>(Ch));
                 for (int64_t n = b; n < e; ++n) {
                   T* dst = gp + n * HWC;
                   std::fill(dst, dst + HWC, T(0));
                   for (int64_t oh = 0; oh < oH; ++oh) {
                     for (int64_t ow = 0; ow < oW; ++ow) {
                       const int64_t divisor = avg_divisor(h, w, oh, ow, count_extent, divisor_override);
                       if (divisor == 0) continue;
                       const T* g = go + ((n * oH + oh) * oW + ow) * Ch;
                       for (int64_t c = 0; c < Ch; ++c)
                         v[c] = static_cast<C>(static_cast<T>(static_cast<C>(g[c]) / static_cast<C>(divisor)));
                       for (int64_t ih = h.begin[oh]; ih < h.end[oh]; ih += h.step)
                         for (int64_t iw = w.begin[ow]; iw < w.end[ow]; iw += w.step) {
                           T* slot = dst + (ih * W + iw) * Ch;
                           for (int64_t c = 0; c < Ch; ++c) slot[c] = static_cast<T>(static_cast<C>(slot[c]) + v[c]);
                         }
                     }
                   }
                 }
               });
}

}  // namespace

void max_pool_kernel(const Tensor& in, const Tensor& out, const Tensor& indices, const PoolAxis& h,
                     const PoolAxis& w) {
  if (windows_2_by_2(h) && windows_2_by_2(w)) return HWY_DYNAMIC_DISPATCH(max2x2_impl)(in, out, indices);
  HWY_DYNAMIC_DISPATCH(max_general_impl)(in, out, indices, h, w, max_columns(w, in.size(1) * in.size(2)));
}

void avg_pool_kernel(const Tensor& in, const Tensor& out, const PoolAxis& h, const PoolAxis& w, bool count_extent,
                     int64_t divisor_override) {
  // 2x2 windows at stride 2 (every window whole, so both divisors are 4): a vector of outputs at a
  // time (1 x 16 x 8 x 8 float32, 1 thread: 1.5 -> 0.65 us)
  if (in.dtype() != kDouble && windows_2_by_2(h) && windows_2_by_2(w))
    return HWY_DYNAMIC_DISPATCH(avg2x2_impl)(in, out, divisor_override ? divisor_override : 4);
  visit_float(in.dtype(), "pool", [&](auto tag) { avg_typed<decltype(tag)>(in, out, h, w, count_extent, divisor_override); });
}

void max_pool_backward_kernel(const Tensor& grad_out, const Tensor& indices, const Tensor& grad_in) {
  visit_float(grad_in.dtype(), "pool", [&](auto tag) { max_backward_typed<decltype(tag)>(grad_out, indices, grad_in); });
}

void max_pool_cl_kernel(const Tensor& in, const Tensor& out, const Tensor& indices, const PoolAxis& h,
                        const PoolAxis& w) {
  HWY_DYNAMIC_DISPATCH(max_cl_impl)(in, out, indices, h, w);
}

void max_pool_backward_cl_kernel(const Tensor& grad_out, const Tensor& indices, const Tensor& grad_in) {
  visit_float(grad_in.dtype(), "pool", [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    const int64_t N = grad_in.size(0), HW = grad_in.size(1) * grad_in.size(2), Ch = grad_in.size(3);
    const int64_t O = grad_out.size(1) * grad_out.size(2);
    const T* go = static_cast<const T*>(grad_out.data_ptr());
    const int64_t* ip = indices.data_ptr<int64_t>();
    T* gp = static_cast<T*>(grad_in.data_ptr());
    // one sample per task: its outputs add into its own plane only, in output order as PyTorch's
    parallel_for(0, N, std::max<int64_t>(1, kGrainSize / std::max<int64_t>((HW + O) * Ch, 1)), [&](int64_t b, int64_t e) {
      for (int64_t n = b; n < e; ++n) {
        T* dst = gp + n * HW * Ch;
        std::fill(dst, dst + HW * Ch, T(0));
        for (int64_t o = 0; o < O; ++o) {
          const int64_t base = (n * O + o) * Ch;
          for (int64_t c = 0; c < Ch; ++c) {
            T& slot = dst[ip[base + c] * Ch + c];
            slot = static_cast<T>(static_cast<C>(slot) + static_cast<C>(go[base + c]));
          }
        }
      }
    });
  });
}

void avg_pool_cl_kernel(const Tensor& in, const Tensor& out, const PoolAxis& h, const PoolAxis& w, bool count_extent,
                        int64_t divisor_override) {
  const int64_t oH = out.size(1), oW = out.size(2);
  std::vector<int64_t> divisors(static_cast<size_t>(oH * oW));
  for (int64_t oh = 0; oh < oH; ++oh)
    for (int64_t ow = 0; ow < oW; ++ow) divisors[oh * oW + ow] = avg_divisor(h, w, oh, ow, count_extent, divisor_override);
  HWY_DYNAMIC_DISPATCH(avg_cl_impl)(in, out, h, w, divisors.data(), windows_2_by_2(h) && windows_2_by_2(w));
}

void avg_pool_backward_cl_kernel(const Tensor& grad_out, const Tensor& grad_in, const PoolAxis& h, const PoolAxis& w,
                                 bool count_extent, int64_t divisor_override) {
  visit_float(grad_in.dtype(), "pool", [&](auto tag) {
    avg_backward_cl_typed<decltype(tag)>(grad_out, grad_in, h, w, count_extent, divisor_override);
  });
}

void avg_pool_backward_kernel(const Tensor& grad_out, const Tensor& grad_in, const PoolAxis& h, const PoolAxis& w,
                              bool count_extent, int64_t divisor_override) {
  if (grad_in.dtype() != kDouble && windows_2_by_2(h) && windows_2_by_2(w))
    return HWY_DYNAMIC_DISPATCH(avg2x2_backward_impl)(grad_out, grad_in, divisor_override ? divisor_override : 4);
  visit_float(grad_in.dtype(), "pool", [&](auto tag) {
    avg_backward_typed<decltype(tag)>(grad_out, grad_in, h, w, count_extent, divisor_override);
  });
}

}  // namespace ember::kernels
#endif  // HWY_ONCE
