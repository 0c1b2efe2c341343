// Softmax kernels, compiled for each SIMD target Highway selects at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/softmax_kernels.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include <hwy/contrib/math/math-inl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/exp-inl.h"
#include "kernels/cpu/hwy_util-inl.h"
#include "kernels/cpu/softmax_kernels.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace {

// softmax_rows' loops over its rows, unrolled in the AVX-512 copy (see there). The AVX2 copy is
// left rolled, its arrays on the stack as before: the machines Ember runs on take the AVX-512
// copy, and unrolled the AVX2 one was 48 KB more of the library.
#undef EMBER_UNROLL_ROWS
#if HWY_TARGET <= HWY_AVX3
#define EMBER_UNROLL_ROWS _Pragma("GCC unroll 4")
#else
#define EMBER_UNROLL_ROWS
#endif

// dim is not innermost (its stride is `inner`): plain loops along it, for `count` inner positions
// one at a time.
template <class T>
void softmax_strided(const T* x, T* y, int64_t dim, int64_t inner, int64_t count, bool log,
                     std::vector<compute_t<T>>& buf) {
  using C = compute_t<T>;
  buf.resize(static_cast<size_t>(dim));
  for (int64_t j = 0; j < count; ++j) {
    C mx = -std::numeric_limits<C>::infinity();
    for (int64_t k = 0; k < dim; ++k) {
      const C v = static_cast<C>(x[k * inner + j]);
      buf[k] = v;
      mx = std::max(mx, v);  // a NaN turns the sum, and so the outputs, into NaN
    }
    C sum = 0;
    for (int64_t k = 0; k < dim; ++k) sum += std::exp(buf[k] - mx);
    const C log_sum = std::log(sum);  // (x - max) - log_sum, in PyTorch's order: see softmax_rows
    for (int64_t k = 0; k < dim; ++k)
      y[k * inner + j] = static_cast<T>(log ? buf[k] - mx - log_sum : std::exp(buf[k] - mx) / sum);
  }
}

// R contiguous rows of n (row r at x + r * n): max, then sum of exp(x - max), then the output,
// each row as alone, the R rows side by side so that their reductions overlap (rows of 32 floats
// were bound by the latency of one row's reductions). Rows of float/double keep exp(x - max) in y
// between the passes; 16-bit rows keep it in float32 on the stack (storing to y would round
// early), or recompute it where they are long.
// The loops over the rows that touch the vector arrays are unrolled by pragma in the AVX-512 copy
// (EMBER_UNROLL_ROWS): GCC keeps an array of 512-bit vectors in registers only when each access
// has a constant index by then, and in that copy (compiled by target attribute, not -march) it
// did not unroll them early enough on its own: the per-row vectors lived on the stack
// (log_softmax of 32 x 32 float32 0.78 -> 0.67 us).
template <size_t R, class T>
HWY_INLINE void softmax_rows(const T* x, T* y, size_t n, bool log) {
  using L = lane_t<T>;
  const DC<T> d;
  using V = hn::Vec<DC<T>>;
  const size_t N = hn::Lanes(d);
  const V ninf = hn::Set(d, -std::numeric_limits<L>::infinity());
  V vmax[R], vsum[R], acc[R];
  L mx[R], sum[R];
EMBER_UNROLL_ROWS
  for (size_t r = 0; r < R; ++r) vmax[r] = ninf, vsum[r] = acc[r] = hn::Zero(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
EMBER_UNROLL_ROWS
    for (size_t r = 0; r < R; ++r) {
      const V v = LoadC(d, x + r * n + i);
      vmax[r] = hn::Max(vmax[r], v);
      vsum[r] = hn::Add(vsum[r], v);
    }
  }
  bool special = false;
EMBER_UNROLL_ROWS
  for (size_t r = 0; r < R; ++r) {
    mx[r] = hn::GetLane(hn::MaxOfLanes(d, vmax[r]));
    L total = hn::GetLane(hn::SumOfLanes(d, vsum[r]));
    for (size_t k = i; k < n; ++k) {
      mx[r] = std::max(mx[r], static_cast<L>(x[r * n + k]));
      total += static_cast<L>(x[r * n + k]);
    }
    // NaN anywhere (the sum shows it) or an infinite maximum: Highway's Exp does not carry NaN
    // through, so such rows take the scalar path, which gives PyTorch's NaNs.
    special = special || std::isnan(total) || std::isinf(mx[r]);
  }
  if (special) {
    std::vector<L> buf;
    for (size_t r = 0; r < R; ++r) {
      if constexpr (R == 1) {
        softmax_strided(x, y, static_cast<int64_t>(n), 1, 1, log, buf);
      } else {
        softmax_rows<1>(x + r * n, y + r * n, n, log);
      }
    }
    return;
  }
  constexpr bool keep = std::is_same_v<T, L>;
  // 16-bit rows of up to kStaged keep exp(x - max) in float32 on the stack instead (rows padded
  // to whole vectors): softmax of 32 x 32 bfloat16 0.89 -> 0.61 us, of 256 x 256 45 -> 30 us
  constexpr size_t kStaged = 256;
  HWY_ALIGN L staged[keep ? 1 : R * kStaged];
  const bool stage = !keep && !log && n <= kStaged;
  const size_t padded = (n + N - 1) / N * N;
  i = 0;
  for (; i + N <= n; i += N) {
EMBER_UNROLL_ROWS
    for (size_t r = 0; r < R; ++r) {
      const V e = exp_shifted(d, hn::Sub(LoadC(d, x + r * n + i), hn::Set(d, mx[r])));
      if constexpr (keep) {
        if (!log) hn::StoreU(e, d, y + r * n + i);
      } else {
        if (stage) hn::Store(e, d, staged + r * padded + i);
      }
      acc[r] = hn::Add(acc[r], e);
    }
  }
EMBER_UNROLL_ROWS
  for (size_t r = 0; r < R; ++r) {
    if (i < n) {
      const V e = hn::IfThenElseZero(hn::FirstN(d, n - i),
                                     exp_shifted(d, hn::Sub(LoadCN(d, x + r * n + i, n - i), hn::Set(d, mx[r]))));
      if constexpr (keep) {
        if (!log) StoreCN(d, e, y + r * n + i, n - i);
      } else {
        if (stage) hn::Store(e, d, staged + r * padded + i);
      }
      acc[r] = hn::Add(acc[r], e);
    }
    sum[r] = hn::GetLane(hn::SumOfLanes(d, acc[r]));
  }
  for (size_t r = 0; r < R; ++r) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    size_t k = 0;
    if (log) {
      // (x - max) - log(sum), in PyTorch's order: max + log(sum) first loses log(sum) to the
      // rounding of a large max (exp of a row's log_softmax then missed its softmax by 2e-6)
      const V vm = hn::Set(d, mx[r]), log_sum = hn::Set(d, std::log(sum[r]));
      for (; k + N <= n; k += N) StoreC(d, hn::Sub(hn::Sub(LoadC(d, xr + k), vm), log_sum), yr + k);
      if (k < n) StoreCN(d, hn::Sub(hn::Sub(LoadCN(d, xr + k, n - k), vm), log_sum), yr + k, n - k);
      continue;
    }
    const V vm = hn::Set(d, mx[r]), inv = hn::Set(d, L(1) / sum[r]);
    const L* er = stage ? staged + r * padded : nullptr;
    for (; k + N <= n; k += N) {
      const V e = keep ? LoadC(d, yr + k) : stage ? hn::Load(d, er + k) : exp_shifted(d, hn::Sub(LoadC(d, xr + k), vm));
      StoreC(d, hn::Mul(e, inv), yr + k);
    }
    if (k < n) {
      const V e = keep    ? LoadCN(d, yr + k, n - k)
                  : stage ? hn::Load(d, er + k)
                          : exp_shifted(d, hn::Sub(LoadCN(d, xr + k, n - k), vm));
      StoreCN(d, hn::Mul(e, inv), yr + k, n - k);
    }
  }
}

// Inner positions (columns) a piece of a softmax along a strided dim takes at most: each pass reads
// a row of the piece as one run of up to 1 KB (float32). One vector of columns at a time walked
// the dim in strides of a whole row, every pass missing the caches: softmax along dim 0 of
// 2048 x 2048 float32 took 11.5 ms, 5x its time along dim 1.
constexpr int64_t kBlockCols = 256;

// Whether a softmax (or its backward) along a strided dim walks each vector of columns down the
// dim, its sums in registers (softmax_columns, softmax_backward_block), rather than reading
// blocks of columns row by row: small slices, and 16-bit ones along a dim short enough to keep
// exp(x - max) in float32 on the stack. Row by row, their sums went through memory: softmax along
// dim 0 of 32 x 32 float32 0.21 -> 0.27 of libtorch's time, of 256 x 256 bfloat16 0.30 -> 0.55.
// 16-bit columns of up to kStagedDim keep exp(x - max) in float32 on the stack (softmax_columns).
constexpr int64_t kStagedDim = 256;
template <class T>
bool walk_columns(int64_t dim, int64_t inner) {
  return dim * inner <= 4096 || (!std::is_same_v<T, lane_t<T>> && dim <= kStagedDim);
}

// dim is not innermost: one vector of adjacent inner positions (columns) at a time, each lane
// running the passes of softmax_row down its column. False, with nothing written, when a column
// holds a NaN or an infinite maximum (softmax_strided then gives PyTorch's NaNs).
template <class T>
HWY_INLINE bool softmax_columns(const T* x, T* y, int64_t dim, int64_t inner, bool log) {
  using L = lane_t<T>;
  const DC<T> d;
  auto vmax = hn::Set(d, -std::numeric_limits<L>::infinity()), vsum = hn::Zero(d);
  for (int64_t k = 0; k < dim; ++k) {
    const auto v = LoadC(d, x + k * inner);
    vmax = hn::Max(vmax, v);
    vsum = hn::Add(vsum, v);
  }
  if (!hn::AllTrue(d, hn::And(hn::Not(hn::IsNaN(vsum)), hn::IsFinite(vmax)))) return false;
  // exp(x - max) is kept between the passes: in y for float/double, in float32 on the stack for
  // 16-bit columns of up to kStagedDim (storing it to y would round it early; 16 KB of stack in
  // the AVX-512 copy); longer 16-bit columns compute it again (softmax along dim 0 of bfloat16
  // 32 x 32: 0.77 -> 0.50 us, 256 x 256: 41-44 -> 25-26 us, when each exp was computed twice).
  constexpr bool keep = std::is_same_v<T, L>;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  HWY_ALIGN L stage[keep ? 1 : kStagedDim * hn::MaxLanes(d)];
  const bool staged = !keep && !log && dim <= kStagedDim;
  auto acc = hn::Zero(d);
  for (int64_t k = 0; k < dim; ++k) {
    const auto e = exp_shifted(d, hn::Sub(LoadC(d, x + k * inner), vmax));
    if constexpr (keep) {
      if (!log) hn::StoreU(e, d, y + k * inner);
    } else {
      if (staged) hn::Store(e, d, stage + k * N);
    }
    acc = hn::Add(acc, e);
  }
  if (log) {
    const auto log_sum = hn::Log(d, acc);  // (x - max) - log(sum), as softmax_rows
    for (int64_t k = 0; k < dim; ++k) {
      StoreC(d, hn::Sub(hn::Sub(LoadC(d, x + k * inner), vmax), log_sum), y + k * inner);
    }
    return true;
  }
  const auto inv = hn::Div(hn::Set(d, L(1)), acc);
  for (int64_t k = 0; k < dim; ++k) {
    const auto e = keep     ? LoadC(d, y + k * inner)
                   : staged ? hn::Load(d, stage + k * N)
                            : exp_shifted(d, hn::Sub(LoadC(d, x + k * inner), vmax));
    StoreC(d, hn::Mul(e, inv), y + k * inner);
  }
  return true;
}

// w neighbouring columns (whole vectors, w <= kBlockCols) of a dim strided by `inner`: the passes
// of softmax_rows down each column, each lane adding in the order of the dim as the scalar loop,
// the per-column maxima and sums in buffers, the block read row by row. Vectors of columns with a
// NaN or an infinite maximum are left to softmax_strided (PyTorch's NaNs).
template <class T>
void softmax_block(const T* x, T* y, int64_t dim, int64_t inner, int64_t w, bool log, std::vector<compute_t<T>>& buf) {
  using L = lane_t<T>;
  const DC<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  HWY_ALIGN L vmax[kBlockCols], vsum[kBlockCols];
  for (int64_t v = 0; v < w; v += N) {
    hn::Store(hn::Set(d, -std::numeric_limits<L>::infinity()), d, vmax + v);
    hn::Store(hn::Zero(d), d, vsum + v);
  }
  for (int64_t k = 0; k < dim; ++k) {
    const T* row = x + k * inner;
    for (int64_t v = 0; v < w; v += N) {
      const auto a = LoadC(d, row + v);
      hn::Store(hn::Max(hn::Load(d, vmax + v), a), d, vmax + v);
      hn::Store(hn::Add(hn::Load(d, vsum + v), a), d, vsum + v);
    }
  }
  bool ok[kBlockCols];
  bool all_ok = true;
  for (int64_t v = 0; v < w; v += N) {
    ok[v] = hn::AllTrue(d, hn::And(hn::Not(hn::IsNaN(hn::Load(d, vsum + v))), hn::IsFinite(hn::Load(d, vmax + v))));
    all_ok = all_ok && ok[v];
    hn::Store(hn::Zero(d), d, vsum + v);
  }
  constexpr bool keep = std::is_same_v<T, L>;  // exp(x - max) kept in y between the passes (16-bit: computed again)
  for (int64_t k = 0; k < dim; ++k) {
    const T* row = x + k * inner;
    for (int64_t v = 0; v < w; v += N) {
      if (!all_ok && !ok[v]) continue;
      const auto e = exp_shifted(d, hn::Sub(LoadC(d, row + v), hn::Load(d, vmax + v)));
      if constexpr (keep) {
        if (!log) hn::StoreU(e, d, y + k * inner + v);
      }
      hn::Store(hn::Add(hn::Load(d, vsum + v), e), d, vsum + v);
    }
  }
  // vsum becomes log(sum) for log_softmax ((x - max) - log(sum), as softmax_rows), else 1 / sum
  for (int64_t v = 0; v < w; v += N) {
    const auto sum = hn::Load(d, vsum + v);
    hn::Store(log ? hn::Log(d, sum) : hn::Div(hn::Set(d, L(1)), sum), d, vsum + v);
  }
  for (int64_t k = 0; k < dim; ++k) {
    const T* row = x + k * inner;
    T* out = y + k * inner;
    for (int64_t v = 0; v < w; v += N) {
      if (!all_ok && !ok[v]) continue;
      const auto s = hn::Load(d, vsum + v);
      if (log) {
        StoreC(d, hn::Sub(hn::Sub(LoadC(d, row + v), hn::Load(d, vmax + v)), s), out + v);
        continue;
      }
      const auto e = keep ? LoadC(d, out + v) : exp_shifted(d, hn::Sub(LoadC(d, row + v), hn::Load(d, vmax + v)));
      StoreC(d, hn::Mul(e, s), out + v);
    }
  }
  if (all_ok) return;
  for (int64_t v = 0; v < w; v += N)
    if (!ok[v]) softmax_strided(x + v, y + v, dim, inner, N, log, buf);
}

// cols (at most kBlockCols) neighbouring inner positions (stride `inner` along the dim): whole
// vectors (walk_columns) or one block of them, the remaining columns one by one.
template <class T>
void softmax_outer(const T* x, T* y, int64_t dim, int64_t inner, int64_t cols, bool log,
                   std::vector<compute_t<T>>& buf) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(DC<T>()));
  const int64_t whole = cols / N * N;
  if (walk_columns<T>(dim, inner)) {
    for (int64_t j = 0; j < whole; j += N)
      if (!softmax_columns(x + j, y + j, dim, inner, log)) softmax_strided(x + j, y + j, dim, inner, N, log, buf);
  } else {
    softmax_block(x, y, dim, inner, whole, log, buf);
  }
  softmax_strided(x + whole, y + whole, dim, inner, cols - whole, log, buf);
}

// Calls f(o, j0, j1) on the inner positions [j0, j1) of outer slice o, in pieces the threads
// share: by slices, and by columns when the dim is not innermost (softmax along dim 0 of a
// matrix is one slice: it ran on one thread, 1.4x libtorch's time at 2 threads).
template <class F>
void for_softmax_pieces(int64_t outer, int64_t dim, int64_t inner, const F& f) {
  const int64_t cols = inner == 1 ? 1 : std::min(inner, kBlockCols);
  const int64_t pieces = (inner + cols - 1) / cols;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(dim * cols, 1));
  parallel_for(0, outer * pieces, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / pieces, j0 = t % pieces * cols;
      f(o, j0, std::min(inner, j0 + cols));
    }
  });
}

template <class T>
void softmax_typed(const Tensor& x, const Tensor& y, const SoftmaxShape& shape, bool log) {
  const int64_t outer = shape.outer, dim = shape.dim, inner = shape.inner;
  const T* xp = static_cast<const T*>(x.data_ptr());
  T* yp = static_cast<T*>(y.data_ptr());
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(DC<T>()));
  if (inner == 1) {  // rows of up to 4 vectors four at a time
    const size_t n = static_cast<size_t>(dim);
    const bool short_rows = dim <= 4 * lanes;
    parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(dim, 1)), [&](int64_t b, int64_t e) {
      int64_t o = b;
      if (short_rows) {
        for (; o + 4 <= e; o += 4) softmax_rows<4>(xp + o * dim, yp + o * dim, n, log);
      }
      for (; o < e; ++o) softmax_rows<1>(xp + o * dim, yp + o * dim, n, log);
    });
    return;
  }
  for_softmax_pieces(outer, dim, inner, [&](int64_t o, int64_t j0, int64_t j1) {
    std::vector<compute_t<T>> buf;  // (for the columns past the last whole vector)
    const int64_t off = o * dim * inner + j0;
    softmax_outer(xp + off, yp + off, dim, inner, j1 - j0, log, buf);
  });
}

// K vectors of neighbouring inner positions starting at column j: the sums over the dim in
// registers (each lane adds in the order of the dim, as the scalar loop), then the gradient.
template <size_t K, class T>
HWY_INLINE void softmax_backward_block(const T* g, const T* y, T* gi, int64_t dim, int64_t inner, bool log) {
  const DC<T> d;
  const size_t N = hn::Lanes(d);
  hn::Vec<DC<T>> s[K];
  for (size_t u = 0; u < K; ++u) s[u] = hn::Zero(d);
  for (int64_t k = 0; k < dim; ++k) {
    const T* gk = g + k * inner;
    const T* yk = y + k * inner;
    for (size_t u = 0; u < K; ++u) {
      const auto gv = LoadC(d, gk + u * N);
      s[u] = log ? hn::Add(s[u], gv) : hn::MulAdd(gv, LoadC(d, yk + u * N), s[u]);
    }
  }
  for (int64_t k = 0; k < dim; ++k) {
    const T* gk = g + k * inner;
    const T* yk = y + k * inner;
    T* ik = gi + k * inner;
    for (size_t u = 0; u < K; ++u) {
      const auto gv = LoadC(d, gk + u * N), yv = LoadC(d, yk + u * N);
      StoreC(d, log ? hn::NegMulAdd(exp_shifted(d, yv), s[u], gv) : hn::Mul(yv, hn::Sub(gv, s[u])), ik + u * N);
    }
  }
}

// Backward along a strided dim (inner > 1), cols <= kBlockCols neighbouring inner positions: blocks
// of vectors walked down the columns (walk_columns), or one block read row by row, its sums over
// the dim in a buffer (as softmax_block), each lane adding in the order of the dim as the scalar
// loop; the remaining positions one by one.
template <class T>
void softmax_backward_outer(const T* g, const T* y, T* gi, int64_t dim, int64_t inner, int64_t cols, bool log) {
  using L = lane_t<T>;
  const DC<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const int64_t w = cols / N * N;
  if (walk_columns<T>(dim, inner)) {
    int64_t j = 0;
    for (; j + 4 * N <= w; j += 4 * N) softmax_backward_block<4>(g + j, y + j, gi + j, dim, inner, log);
    for (; j < w; j += N) softmax_backward_block<1>(g + j, y + j, gi + j, dim, inner, log);
  } else {
    HWY_ALIGN L s[kBlockCols];
    for (int64_t v = 0; v < w; v += N) hn::Store(hn::Zero(d), d, s + v);
    for (int64_t k = 0; k < dim; ++k) {
      for (int64_t v = 0; v < w; v += N) {
        const auto gv = LoadC(d, g + k * inner + v), sv = hn::Load(d, s + v);
        hn::Store(log ? hn::Add(sv, gv) : hn::MulAdd(gv, LoadC(d, y + k * inner + v), sv), d, s + v);
      }
    }
    for (int64_t k = 0; k < dim; ++k) {
      for (int64_t v = 0; v < w; v += N) {
        const int64_t at = k * inner + v;
        const auto gv = LoadC(d, g + at), yv = LoadC(d, y + at), sv = hn::Load(d, s + v);
        StoreC(d, log ? hn::NegMulAdd(exp_shifted(d, yv), sv, gv) : hn::Mul(yv, hn::Sub(gv, sv)), gi + at);
      }
    }
  }
  using C = compute_t<T>;
  for (int64_t j = w; j < cols; ++j) {
    C s = 0;
    for (int64_t k = 0; k < dim; ++k) {
      const C gv = static_cast<C>(g[k * inner + j]);
      s += log ? gv : gv * static_cast<C>(y[k * inner + j]);
    }
    for (int64_t k = 0; k < dim; ++k) {
      const C gv = static_cast<C>(g[k * inner + j]), yv = static_cast<C>(y[k * inner + j]);
      gi[k * inner + j] = static_cast<T>(log ? gv - std::exp(yv) * s : yv * (gv - s));
    }
  }
}

// One contiguous row: softmax gi = y * (g - sum(g*y)); log_softmax gi = g - exp(y) * sum(g).
template <class T>
HWY_INLINE void softmax_backward_row(const T* g, const T* y, T* gi, size_t n, bool log) {
  const DC<T> d;
  const size_t N = hn::Lanes(d);
  auto acc0 = hn::Zero(d), acc1 = hn::Zero(d);
  size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    const auto g0 = LoadC(d, g + i), g1 = LoadC(d, g + i + N);
    acc0 = log ? hn::Add(acc0, g0) : hn::MulAdd(g0, LoadC(d, y + i), acc0);
    acc1 = log ? hn::Add(acc1, g1) : hn::MulAdd(g1, LoadC(d, y + i + N), acc1);
  }
  for (; i < n; i += N) {  // loads past the end read zeros
    const size_t m = std::min(N, n - i);
    const auto gv = LoadCN(d, g + i, m);
    acc0 = log ? hn::Add(acc0, gv) : hn::MulAdd(gv, LoadCN(d, y + i, m), acc0);
  }
  const auto s = hn::Set(d, hn::GetLane(hn::SumOfLanes(d, hn::Add(acc0, acc1))));
  auto out = [&](auto gv, auto yv) { return log ? hn::NegMulAdd(exp_shifted(d, yv), s, gv) : hn::Mul(yv, hn::Sub(gv, s)); };
  i = 0;
  for (; i + N <= n; i += N) StoreC(d, out(LoadC(d, g + i), LoadC(d, y + i)), gi + i);
  if (i < n) StoreCN(d, out(LoadCN(d, g + i, n - i), LoadCN(d, y + i, n - i)), gi + i, n - i);
}

template <class T>
void softmax_backward_typed(const Tensor& grad, const Tensor& y, const Tensor& gin, const SoftmaxShape& shape,
                            bool log) {
  const int64_t outer = shape.outer, dim = shape.dim, inner = shape.inner;
  const T* gp = static_cast<const T*>(grad.data_ptr());
  const T* yp = static_cast<const T*>(y.data_ptr());
  T* ip = static_cast<T*>(gin.data_ptr());
  for_softmax_pieces(outer, dim, inner, [&](int64_t o, int64_t j0, int64_t j1) {
    const int64_t off = o * dim * inner + j0;
    if (inner == 1) {
      softmax_backward_row(gp + off, yp + off, ip + off, static_cast<size_t>(dim), log);
    } else {
      softmax_backward_outer(gp + off, yp + off, ip + off, dim, inner, j1 - j0, log);
    }
  });
}

// ---- the row steps of blocked attention (attention_kernels.cpp) ----

// One row of a block of n scores joining the row's running softmax: m, the maximum so far, and l,
// the sum of exp(score - m) so far. The scores become exp(score - m_new); returns exp(m_old -
// m_new), the factor of the row's earlier partial output. While every score so far is -inf (keys
// masked) the shift is 0, so the exponentials are 0 rather than exp(-inf + inf) = NaN. A NaN score,
// or +inf (exp(inf - inf) is NaN in softmax too), takes the scalar loop, which carries NaN into l
// (Highway's Exp gives 0 for NaN).
template <class T>
HWY_INLINE T online_softmax_row(T* s, size_t n, T& m, T& l) {
  const DC<T> d;
  const size_t N = hn::Lanes(d);
  constexpr T kInf = std::numeric_limits<T>::infinity();
  auto vmax = hn::Set(d, -kInf), vsum = hn::Zero(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, s + i);
    vmax = hn::Max(vmax, v);
    vsum = hn::Add(vsum, v);
  }
  T mx = hn::GetLane(hn::MaxOfLanes(d, vmax)), total = hn::GetLane(hn::SumOfLanes(d, vsum));
  for (; i < n; ++i) {
    mx = std::max(mx, s[i]);
    total += s[i];
  }
  if (std::isnan(total) || mx == kInf || std::isnan(m)) {
    T bmax = -kInf;
    for (i = 0; i < n; ++i) bmax = std::isnan(s[i]) || s[i] > bmax ? s[i] : bmax;
    const T m_new = std::isnan(m) || std::isnan(bmax) ? std::numeric_limits<T>::quiet_NaN() : std::max(m, bmax);
    const T shift = m_new == -kInf ? T(0) : m_new;
    T sum = 0;
    for (i = 0; i < n; ++i) sum += (s[i] = std::exp(s[i] - shift));
    const T alpha = std::exp(m - shift);
    l = l * alpha + sum;
    m = m_new;
    return alpha;
  }
  const T m_new = std::max(m, mx), shift = m_new == -kInf ? T(0) : m_new;
  const auto vshift = hn::Set(d, shift);
  auto acc = hn::Zero(d);
  for (i = 0; i < n; i += N) {  // one loop with the partial last vector: one copy of Exp's code
    const size_t k = std::min(N, n - i);
    const auto e = hn::IfThenElseZero(hn::FirstN(d, k), exp_shifted(d, hn::Sub(LoadCN(d, s + i, k), vshift)));
    StoreCN(d, e, s + i, k);
    acc = hn::Add(acc, e);
  }
  const T alpha = std::exp(m - shift);
  l = l * alpha + hn::GetLane(hn::SumOfLanes(d, acc));
  m = m_new;
  return alpha;
}

template <class T>
void online_softmax_rows_typed(T* s, int64_t rows, int64_t cols, T* m, T* l, T* alpha) {
  for (int64_t r = 0; r < rows; ++r) alpha[r] = online_softmax_row(s + r * cols, static_cast<size_t>(cols), m[r], l[r]);
}

// The probabilities recomputed from the forward's row logsumexp: p = exp(score - lse). A row whose
// lse is not finite (every key masked, or NaN scores) had NaN outputs, as softmax gives; its
// probabilities are NaN too, so its gradients are.
template <class T>
void softmax_from_logsumexp_rows_typed(T* s, int64_t rows, int64_t cols, const T* lse) {
  const DC<T> d;
  const size_t N = hn::Lanes(d), n = static_cast<size_t>(cols);
  for (int64_t r = 0; r < rows; ++r) {
    T* row = s + r * cols;
    if (!std::isfinite(lse[r])) {
      std::fill(row, row + n, std::numeric_limits<T>::quiet_NaN());
      continue;
    }
    const auto v = hn::Set(d, lse[r]);
    for (size_t i = 0; i < n; i += N) {
      const size_t k = std::min(N, n - i);
      StoreCN(d, exp_shifted(d, hn::Sub(LoadCN(d, row + i, k), v)), row + i, k);
    }
  }
}

// The scores' gradient from the probabilities' (softmax's backward): dp = p * (dp - delta), where
// delta is the row's sum of grad_output * output (= sum of dp * p).
template <class T>
void softmax_grad_rows_typed(const T* p, T* dp, int64_t rows, int64_t cols, const T* delta) {
  const DC<T> d;
  const size_t N = hn::Lanes(d), n = static_cast<size_t>(cols);
  for (int64_t r = 0; r < rows; ++r) {
    const T* pr = p + r * cols;
    T* gr = dp + r * cols;
    const auto v = hn::Set(d, delta[r]);
    size_t i = 0;
    for (; i + N <= n; i += N) hn::StoreU(hn::Mul(hn::LoadU(d, pr + i), hn::Sub(hn::LoadU(d, gr + i), v)), d, gr + i);
    if (i < n) StoreCN(d, hn::Mul(LoadCN(d, pr + i, n - i), hn::Sub(LoadCN(d, gr + i, n - i), v)), gr + i, n - i);
  }
}

}  // namespace

void online_softmax_rows_f(float* s, int64_t rows, int64_t cols, float* m, float* l, float* alpha) {
  online_softmax_rows_typed(s, rows, cols, m, l, alpha);
}
void online_softmax_rows_d(double* s, int64_t rows, int64_t cols, double* m, double* l, double* alpha) {
  online_softmax_rows_typed(s, rows, cols, m, l, alpha);
}
void softmax_from_logsumexp_rows_f(float* s, int64_t rows, int64_t cols, const float* lse) {
  softmax_from_logsumexp_rows_typed(s, rows, cols, lse);
}
void softmax_from_logsumexp_rows_d(double* s, int64_t rows, int64_t cols, const double* lse) {
  softmax_from_logsumexp_rows_typed(s, rows, cols, lse);
}
void softmax_grad_rows_f(const float* p, float* dp, int64_t rows, int64_t cols, const float* delta) {
  softmax_grad_rows_typed(p, dp, rows, cols, delta);
}
void softmax_grad_rows_d(const double* p, double* dp, int64_t rows, int64_t cols, const double* delta) {
  softmax_grad_rows_typed(p, dp, rows, cols, delta);
}

void softmax_impl(const Tensor& x, const Tensor& y, const SoftmaxShape& shape, bool log) {
  switch (x.dtype()) {
    case kFloat: return softmax_typed<float>(x, y, shape, log);
    case kDouble: return softmax_typed<double>(x, y, shape, log);
    case kHalf: return softmax_typed<Half>(x, y, shape, log);
    case kBFloat16: return softmax_typed<BFloat16>(x, y, shape, log);
    default: EMBER_CHECK(false, "softmax", "unsupported dtype ", x.dtype());
  }
}

void softmax_backward_impl(const Tensor& grad, const Tensor& y, const Tensor& gin, const SoftmaxShape& shape,
                           bool log) {
  visit_float(y.dtype(), "softmax_backward_data",
              [&](auto t) { softmax_backward_typed<decltype(t)>(grad, y, gin, shape, log); });
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(softmax_impl);
void softmax_kernel(const Tensor& x, const Tensor& y, const SoftmaxShape& shape, bool log) {
  HWY_DYNAMIC_DISPATCH(softmax_impl)(x, y, shape, log);
}
HWY_EXPORT(softmax_backward_impl);
void softmax_backward_kernel(const Tensor& grad, const Tensor& y, const Tensor& grad_input, const SoftmaxShape& shape,
                             bool log) {
  HWY_DYNAMIC_DISPATCH(softmax_backward_impl)(grad, y, grad_input, shape, log);
}
HWY_EXPORT(online_softmax_rows_f);
HWY_EXPORT(online_softmax_rows_d);
template <>
void online_softmax_rows(float* s, int64_t rows, int64_t cols, float* m, float* l, float* alpha) {
  HWY_DYNAMIC_DISPATCH(online_softmax_rows_f)(s, rows, cols, m, l, alpha);
}
template <>
void online_softmax_rows(double* s, int64_t rows, int64_t cols, double* m, double* l, double* alpha) {
  HWY_DYNAMIC_DISPATCH(online_softmax_rows_d)(s, rows, cols, m, l, alpha);
}
HWY_EXPORT(softmax_from_logsumexp_rows_f);
HWY_EXPORT(softmax_from_logsumexp_rows_d);
template <>
void softmax_from_logsumexp_rows(float* s, int64_t rows, int64_t cols, const float* lse) {
  HWY_DYNAMIC_DISPATCH(softmax_from_logsumexp_rows_f)(s, rows, cols, lse);
}
template <>
void softmax_from_logsumexp_rows(double* s, int64_t rows, int64_t cols, const double* lse) {
  HWY_DYNAMIC_DISPATCH(softmax_from_logsumexp_rows_d)(s, rows, cols, lse);
}
HWY_EXPORT(softmax_grad_rows_f);
HWY_EXPORT(softmax_grad_rows_d);
template <>
void softmax_grad_rows(const float* p, float* dp, int64_t rows, int64_t cols, const float* delta) {
  HWY_DYNAMIC_DISPATCH(softmax_grad_rows_f)(p, dp, rows, cols, delta);
}
template <>
void softmax_grad_rows(const double* p, double* dp, int64_t rows, int64_t cols, const double* delta) {
  HWY_DYNAMIC_DISPATCH(softmax_grad_rows_d)(p, dp, rows, cols, delta);
}
}  // namespace ember::kernels
#endif
