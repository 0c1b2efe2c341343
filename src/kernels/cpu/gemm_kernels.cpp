// The blocked matrix-product loops: small float products (where oneDNN's call overhead would
// dominate), float64 and float16 at every size, and integer dtypes. Float dtypes compute in
// Highway vectors of their compute type (float32 for the 16-bit floats, rounded once at the
// store); integers compute in wrapping unsigned arithmetic.
//
// Two tile shapes cover the layouts:
//  - "axpy" tiles (the general case): rows of C accumulate broadcast elements of A times
//    vectors of a row of B, so B must have unit column stride; other Bs are packed per column
//    panel (only the ragged last columns are packed when B is already unit-stride);
//  - "dot" tiles for narrow outputs (N below one vector, e.g. mv and dot) whose A rows and B
//    columns are unit-stride along K: vectors run along K and are summed at the end.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/gemm_kernels.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/hwy_util-inl.h"

#ifndef EMBER_GEMM_KERNELS_ONCE
#define EMBER_GEMM_KERNELS_ONCE
namespace ember::kernels {
namespace {
// Multiply-adds below which a piece of work is not split across threads.
constexpr int64_t kGemmGrain = int64_t{1} << 17;
// Bytes of B kept hot while row blocks sweep it.
constexpr int64_t kPanelBytes = int64_t{1} << 20;

// One product of the batch: pointers and element strides. c has unit column stride.
template <class T, class L>
struct Problem {
  const T* a;
  int64_t sam, sak;
  const T* b;
  int64_t sbk, sbn;
  T* c;
  int64_t scm;
  const T* bias;  // bias[n * sbias], or null
  int64_t sbias;
  int64_t M, N, K;
  L alpha, beta;

  // C^T = B^T A^T: for a one-column C (unit-stride as a row), so that vectors run along M.
  Problem transposed() const {
    return Problem{b, 0, sbk, a, sak, sam, c, 1, bias, 0, N, M, K, alpha, beta};
  }
};

// Runs f(i) for i in [0, n), split across threads when each item costs `work` multiply-adds.
template <class F>
void parallel_items(int64_t n, int64_t work, const F& f) {
  const int64_t grain = std::max<int64_t>(1, kGemmGrain / std::max<int64_t>(work, 1));
  parallel_for(0, n, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) f(i);
  });
}
}  // namespace
}  // namespace ember::kernels
#endif

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace {

constexpr int kRows = 4;  // rows of an axpy tile (with 2 vectors of columns: 8 accumulators)

// ---- float epilogue: alpha * (acc + bias) + beta * c --------------------------------------
template <class D, class T>
struct Epilogue {
  using L = lane_t<T>;
  const L* bias;  // padded copy, or null
  L alpha, beta;

  HWY_INLINE hn::Vec<D> vec(D d, hn::Vec<D> acc, const L* bias_at, const T* c, size_t n) const {
    if (bias) acc = hn::Add(acc, hn::LoadU(d, bias_at));
    if (alpha != L(1)) acc = hn::Mul(acc, hn::Set(d, alpha));
    if (beta != L(0)) {
      const auto old = n == hn::Lanes(d) ? LoadC(d, c) : LoadCN(d, c, n);
      acc = hn::MulAdd(hn::Set(d, beta), old, acc);
    }
    return acc;
  }
  HWY_INLINE T scalar(L acc, int64_t n, const T* c) const {
    if (bias) acc += bias[n];
    acc *= alpha;
    if (beta != L(0)) acc += beta * static_cast<L>(*c);
    return T(acc);
  }
};

template <class D, class T>
HWY_INLINE void store(D d, hn::Vec<D> v, T* p, size_t n) {
  if (n == hn::Lanes(d)) {
    StoreC(d, v, p);
  } else {
    StoreCN(d, v, p, n);
  }
}

// Where B's columns are: column j (a multiple of two vectors) of the current panel starts at
// base + (j / (2 vectors)) * strip_stride, and its row k is ldb further per k. Read in place,
// strip_stride is two vectors and ldb B's row stride; packed, each strip of two vectors of
// columns is a contiguous K x 2-vector block (the tile then reads memory in order, and rows of B
// a power-of-two apart cannot evict each other from the cache).
template <class TB>
struct Panel {
  const TB* base;
  int64_t ldb, strip_stride;
};

// C[m0 : m0+R, n0 : n0+cols] for cols <= 2 vectors; B's row k is bp + k * ldb (full vectors
// readable even past `cols`: packed panels are zero-padded).
template <int R, bool kTwo, class T, class TB>
HWY_NOINLINE void axpy_tile(const Problem<T, lane_t<T>>& p, const Epilogue<DC<T>, T>& ep, const TB* bp,
                            int64_t ldb, int64_t m0, int64_t n0, size_t cols) {
  const DC<T> d;
  using V = hn::Vec<DC<T>>;
  const size_t NL = hn::Lanes(d);
  const T* arow[R];
  V acc0[R], acc1[R];
  for (int r = 0; r < R; ++r) {
    arow[r] = p.a + (m0 + r) * p.sam;
    acc0[r] = hn::Zero(d);
    acc1[r] = hn::Zero(d);
  }
  const int64_t sak = p.sak;
  for (int64_t k = 0; k < p.K; ++k) {
    const V b0 = LoadC(d, bp + k * ldb);
    const V b1 = kTwo ? LoadC(d, bp + k * ldb + NL) : b0;
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const V av = hn::Set(d, static_cast<lane_t<T>>(arow[r][k * sak]));
      acc0[r] = hn::MulAdd(av, b0, acc0[r]);
      if (kTwo) acc1[r] = hn::MulAdd(av, b1, acc1[r]);
    }
  }
  const size_t n_first = std::min(cols, NL);
  for (int r = 0; r < R; ++r) {
    T* crow = p.c + (m0 + r) * p.scm + n0;
    store(d, ep.vec(d, acc0[r], ep.bias + n0, crow, n_first), crow, n_first);
    if (kTwo) store(d, ep.vec(d, acc1[r], ep.bias + n0 + NL, crow + NL, cols - NL), crow + NL, cols - NL);
  }
}

template <int R, class T, class TB>
HWY_INLINE void axpy_tile_cols(const Problem<T, lane_t<T>>& p, const Epilogue<DC<T>, T>& ep, const Panel<TB>& b,
                               int64_t m0, int64_t n0, int64_t cols) {
  const int64_t W = 2 * static_cast<int64_t>(hn::Lanes(DC<T>()));
  for (int64_t j = 0; j < cols; j += W) {
    const size_t w = static_cast<size_t>(std::min(W, cols - j));
    const TB* bp = b.base + (j / W) * b.strip_stride;
    if (static_cast<int64_t>(w) > W / 2) {
      axpy_tile<R, true>(p, ep, bp, b.ldb, m0, n0 + j, w);
    } else {
      axpy_tile<R, false>(p, ep, bp, b.ldb, m0, n0 + j, w);
    }
  }
}

template <class T, class TB>
void axpy_rows(const Problem<T, lane_t<T>>& p, const Epilogue<DC<T>, T>& ep, const Panel<TB>& b, int64_t n0,
               int64_t cols) {
  const int64_t blocks = (p.M + kRows - 1) / kRows;
  parallel_items(blocks, kRows * cols * p.K, [&](int64_t blk) {
    const int64_t m0 = blk * kRows;
    if (m0 + kRows <= p.M) {
      axpy_tile_cols<kRows>(p, ep, b, m0, n0, cols);
    } else {
      for (int64_t m = m0; m < p.M; ++m) axpy_tile_cols<1>(p, ep, b, m, n0, cols);
    }
  });
}

// B[:, n0 : n0+nc] into strips of W columns (see Panel), zero-padded, in compute type.
template <class T, class L>
void pack_b(const Problem<T, L>& p, int64_t n0, int64_t nc, int64_t W, L* out) {
  const DC<T> d;
  const int64_t NL = static_cast<int64_t>(hn::Lanes(d));
  const hn::RebindToSigned<decltype(d)> di;
  using I = hn::TFromD<decltype(di)>;
  // 32- and 64-bit floats move a vector at a time: loaded when B's rows are unit-stride, gathered otherwise
  const bool vector = std::is_same_v<T, L> && p.sbn * NL <= int64_t{1} << 30;
  const auto idx = hn::Mul(hn::Iota(di, 0), hn::Set(di, static_cast<I>(vector ? p.sbn : 0)));
  for (int64_t s0 = 0; s0 < nc; s0 += W, out += p.K * W) {
    const int64_t w = std::min(W, nc - s0);
    for (int64_t k = 0; k < p.K; ++k) {
      const T* src = p.b + k * p.sbk + (n0 + s0) * p.sbn;
      L* row = out + k * W;
      int64_t j = 0;
      if constexpr (std::is_same_v<T, L>) {
        if (vector) {
          for (; j + NL <= w; j += NL)
            hn::StoreU(p.sbn == 1 ? hn::LoadU(d, src + j) : hn::GatherIndex(d, src + j * p.sbn, idx), d, row + j);
        }
      }
      for (; j < w; ++j) row[j] = static_cast<L>(src[j * p.sbn]);
      for (; j % NL != 0; ++j) row[j] = L(0);
      for (; j < W; j += NL) hn::StoreU(hn::Zero(d), d, row + j);
    }
  }
}

template <class T>
void axpy_gemm(const Problem<T, lane_t<T>>& p, const Epilogue<DC<T>, T>& ep) {
  using L = lane_t<T>;
  const int64_t NL = static_cast<int64_t>(hn::Lanes(DC<T>())), W = 2 * NL;
  // Column panels of B that stay in cache while all row blocks use them.
  const int64_t nc_max = std::max<int64_t>(W, kPanelBytes / std::max<int64_t>(1, p.K * sizeof(L)) / W * W);
  // A unit-stride B is read in place by products of few rows (packing would cost more than it
  // saves), except for its ragged last columns.
  const bool in_place = p.sbn == 1 && p.M <= 4 * kRows;
  thread_local std::vector<L> buf;  // reused: small products must not pay an allocation
  for (int64_t n0 = 0; n0 < p.N; n0 += nc_max) {
    const int64_t nc = std::min(nc_max, p.N - n0);
    const int64_t direct = in_place ? nc - nc % NL : 0;
    if (direct > 0) axpy_rows(p, ep, Panel<T>{p.b + n0, p.sbk, W}, n0, direct);
    if (direct < nc) {
      const int64_t rest = nc - direct;
      const int64_t sw = rest <= NL ? NL : W;  // a one-vector panel packs one vector wide
      buf.resize(static_cast<size_t>(p.K * ((rest + sw - 1) / sw * sw)));
      pack_b(p, n0 + direct, rest, sw, buf.data());
      axpy_rows(p, ep, Panel<L>{buf.data(), sw, p.K * sw}, n0 + direct, rest);
    }
  }
}

// Dot tiles: C[m0 : m0+R, n0 : n0+C], A rows and B columns unit-stride along K.
template <int R, int C, class T>
HWY_NOINLINE void dot_tile(const Problem<T, lane_t<T>>& p, const Epilogue<DC<T>, T>& ep, int64_t m0, int64_t n0) {
  const DC<T> d;
  using V = hn::Vec<DC<T>>;
  const int64_t NL = static_cast<int64_t>(hn::Lanes(d));
  const T* arow[R];
  const T* bcol[C];
  V acc[R][C];
  // The loops over R and C unrolled, so that acc and bv live in registers (at -O2 GCC kept them on
  // the stack: a store and a reload around every FMA, 1/6 of the FMA rate).
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) arow[r] = p.a + (m0 + r) * p.sam;
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) bcol[c] = p.b + (n0 + c) * p.sbn;
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) acc[r][c] = hn::Zero(d);
  auto step = [&](auto load) {
    V bv[C];
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) bv[c] = load(bcol[c]);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const V av = load(arow[r]);
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) acc[r][c] = hn::MulAdd(av, bv[c], acc[r][c]);
    }
  };
  int64_t k = 0;
  for (; k + NL <= p.K; k += NL) step([&](const T* q) { return LoadC(d, q + k); });
  if (k < p.K) step([&](const T* q) { return LoadCN(d, q + k, static_cast<size_t>(p.K - k)); });
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) {
      T* out = p.c + (m0 + r) * p.scm + n0 + c;
      *out = ep.scalar(hn::GetLane(hn::SumOfLanes(d, acc[r][c])), n0 + c, out);
    }
  }
}

template <class T>
void dot_gemm(const Problem<T, lane_t<T>>& p, const Epilogue<DC<T>, T>& ep) {
  constexpr int kTile = 4;
  // Items of up to kTile rows by kDotCols columns: a product of few rows (a batch-1 linear) still
  // splits across threads. Each element's sum is computed alike whichever tile holds it.
  constexpr int64_t kDotCols = 64;
  const int64_t row_blocks = (p.M + kTile - 1) / kTile, col_blocks = (p.N + kDotCols - 1) / kDotCols;
  const int64_t work = std::min<int64_t>(kTile, p.M) * std::min(kDotCols, p.N) * p.K;
  parallel_items(row_blocks * col_blocks, work, [&](int64_t item) {
    const int64_t m0 = item / col_blocks * kTile, n0 = item % col_blocks * kDotCols;
    const int64_t n1 = std::min(p.N, n0 + kDotCols);
    const bool full_rows = m0 + kTile <= p.M;
    for (int64_t m = m0; m < std::min(p.M, m0 + kTile); m += full_rows ? kTile : 1) {
      int64_t n = n0;
      for (; n + kTile <= n1; n += kTile) full_rows ? dot_tile<kTile, kTile>(p, ep, m, n) : dot_tile<1, kTile>(p, ep, m, n);
      for (; n < n1; ++n) full_rows ? dot_tile<kTile, 1>(p, ep, m, n) : dot_tile<1, 1>(p, ep, m, n);
    }
  });
}

template <class T>
void float_gemm(Problem<T, lane_t<T>> p) {
  using L = lane_t<T>;
  const int64_t NL = static_cast<int64_t>(hn::Lanes(DC<T>()));
  const bool dot_ok = p.sak == 1 && p.sbk == 1;
  if (p.N == 1 && p.M > 1 && !dot_ok) p = p.transposed();
  // The bias in compute type, zero-padded so tiles read whole vectors.
  thread_local std::vector<L> bias;
  if (p.bias) {
    bias.assign(static_cast<size_t>((p.N + 2 * NL - 1) / NL * NL), L(0));
    for (int64_t n = 0; n < p.N; ++n) bias[n] = static_cast<L>(p.bias[n * p.sbias]);
  }
  const Epilogue<DC<T>, T> ep{p.bias ? bias.data() : nullptr, p.alpha, p.beta};
  // Dot tiles for narrow outputs, and for products of few rows whose B has unit stride along K
  // only (a linear layer's weight at batch 1 to 4): the axpy tiles would pack all of B first.
  if (dot_ok && (p.N < NL || (p.sbn != 1 && p.M <= kRows))) {
    dot_gemm(p, ep);
  } else {
    axpy_gemm(p, ep);
  }
}

// ---- integers: wrapping arithmetic in an unsigned type at least 32 bits wide ----------------
template <class T>
void int_gemm(const Problem<T, T>& p) {
  using W = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
  constexpr int64_t kCols = 256;
  const W alpha = static_cast<W>(p.alpha), beta = static_cast<W>(p.beta);
  // B once, contiguous (row k at k * N), in W.
  std::vector<W> bp(static_cast<size_t>(p.K * p.N));
  for (int64_t k = 0; k < p.K; ++k)
    for (int64_t n = 0; n < p.N; ++n) bp[k * p.N + n] = static_cast<W>(p.b[k * p.sbk + n * p.sbn]);
  parallel_items(p.M, p.N * p.K, [&](int64_t m) {
    W acc[kCols];
    const T* arow = p.a + m * p.sam;
    T* crow = p.c + m * p.scm;
    for (int64_t n0 = 0; n0 < p.N; n0 += kCols) {
      const int64_t nc = std::min(kCols, p.N - n0);
      std::fill(acc, acc + nc, W(0));
      for (int64_t k = 0; k < p.K; ++k) {
        const W av = static_cast<W>(arow[k * p.sak]);
        const W* brow = bp.data() + k * p.N + n0;
        for (int64_t j = 0; j < nc; ++j) acc[j] += av * brow[j];
      }
      for (int64_t j = 0; j < nc; ++j) {
        W v = acc[j];
        if (p.bias) v += static_cast<W>(p.bias[(n0 + j) * p.sbias]);
        v *= alpha;
        if (beta != 0) v += beta * static_cast<W>(crow[n0 + j]);
        crow[n0 + j] = static_cast<T>(v);
      }
    }
  });
}

template <class T>
void gemm_typed(const Matrices& out, const Matrices& a, const Matrices& b, const GemmEpilogue& e) {
  using L = compute_t<T>;
  const int64_t M = out.rows(), N = out.cols(), K = a.cols();
  const Problem<T, L> base{static_cast<const T*>(a.data), a.strides[1], a.strides[2],
                           static_cast<const T*>(b.data), b.strides[1], b.strides[2],
                           static_cast<T*>(out.data),     out.strides[1],
                           static_cast<const T*>(e.bias), e.bias_stride,
                           M, N, K, e.alpha.to<L>(), e.beta.to<L>()};
  parallel_items(out.batch(), M * N * K, [&](int64_t i) {
    Problem<T, L> p = base;
    p.a += i * a.strides[0];
    p.b += i * b.strides[0];
    p.c += i * out.strides[0];
    if constexpr (is_float_like_v<T>) {
      float_gemm(p);
    } else {
      int_gemm(p);
    }
  });
}

}  // namespace

void gemm_loops_impl(ScalarType dtype, const Matrices& out, const Matrices& a, const Matrices& b,
                     const GemmEpilogue& e) {
  switch (dtype) {
    case kFloat: return gemm_typed<float>(out, a, b, e);
    case kDouble: return gemm_typed<double>(out, a, b, e);
    case kHalf: return gemm_typed<Half>(out, a, b, e);
    case kBFloat16: return gemm_typed<BFloat16>(out, a, b, e);
    case kByte: return gemm_typed<uint8_t>(out, a, b, e);
    case kChar: return gemm_typed<int8_t>(out, a, b, e);
    case kShort: return gemm_typed<int16_t>(out, a, b, e);
    case kInt: return gemm_typed<int32_t>(out, a, b, e);
    case kLong: return gemm_typed<int64_t>(out, a, b, e);
    default: EMBER_CHECK(false, "gemm", "unsupported dtype ", dtype);
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(gemm_loops_impl);
void gemm_loops(ScalarType dtype, const Matrices& out, const Matrices& a, const Matrices& b,
                const GemmEpilogue& e) {
  if (out.batch() == 0 || out.rows() == 0 || out.cols() == 0) return;
  HWY_DYNAMIC_DISPATCH(gemm_loops_impl)(dtype, out, a, b, e);
}
}  // namespace ember::kernels
#endif
