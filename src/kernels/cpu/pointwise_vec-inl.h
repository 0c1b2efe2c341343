// The vector loop of the float pointwise kernels, compiled once per SIMD target (include after
// hwy_util-inl.h in a file using foreach_target.h).
//
// A functor gives `vec(d, v0, ..., vK-1)` on compute vectors (float for Half/BFloat16). Contiguous
// operands and broadcast scalars (stride 0) stream straight through it; any other layout is
// gathered in chunks into compute-type buffers, run through the same `vec`, and scattered back,
// so each function has a single vector definition. A functor deriving from ScalarOnly instead
// gives `scalar(c0, ..., cK-1)` on compute scalars (functions without a good vector form).

#if defined(EMBER_KERNELS_POINTWISE_VEC_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_POINTWISE_VEC_INL_H_
#undef EMBER_KERNELS_POINTWISE_VEC_INL_H_
#else
#define EMBER_KERNELS_POINTWISE_VEC_INL_H_
#endif

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

#include <hwy/cache_control.h>

#include "core/tensor_iterator.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/pointwise_loops.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {

struct ScalarOnly {};
// A functor with a large vector body (transcendental functions, their derivatives) declares
// `static constexpr bool staged16 = true`: its float16 and bfloat16 data run through the float32
// loop, a chunk at a time widened into buffers and the results narrowed back (stage16), instead of
// a copy of its body per 16-bit dtype and target. Results are the same bits (the same float32
// body, rounded once by the same store); the two extra passes over an L1-resident chunk cost a few
// percent of such a body.
template <class F>
constexpr bool kStaged16 = requires { requires F::staged16; };

// The first m (< lanes) elements of a row to and from a vector's worth of buffer, with Highway's
// masked accesses where the target has them rather than a call of memcpy.
template <class T>
HWY_INLINE void load_partial(T* buf, const T* src, size_t m) {  // buf's other lanes: zero
  if constexpr (kMaskedWide && sizeof(T) >= 4) {
    const DC<T> d;
    hn::Store(hn::MaskedLoad(hn::FirstN(d, m), d, src), d, buf);
  } else if constexpr (kMaskedNarrow) {
    const hn::Rebind<uint16_t, DC<T>> du;
    hn::Store(hn::MaskedLoad(hn::FirstN(du, m), du, reinterpret_cast<const uint16_t*>(src)), du,
              reinterpret_cast<uint16_t*>(buf));
  } else {
    const DC<T> d;
    for (size_t i = m; i < hn::Lanes(d); ++i) buf[i] = T();
    std::memcpy(buf, src, m * sizeof(T));
  }
}
template <class T>
HWY_INLINE void store_partial(T* dst, const T* buf, size_t m) {
  if constexpr (kMaskedWide && sizeof(T) >= 4) {
    const DC<T> d;
    hn::BlendedStore(hn::Load(d, buf), hn::FirstN(d, m), d, dst);
  } else if constexpr (kMaskedNarrow) {
    const hn::Rebind<uint16_t, DC<T>> du;
    hn::BlendedStore(hn::Load(du, reinterpret_cast<const uint16_t*>(buf)), hn::FirstN(du, m), du,
                     reinterpret_cast<uint16_t*>(dst));
  } else {
    std::memcpy(dst, buf, m * sizeof(T));
  }
}

// out[i] = f(in_0[i], ...) over `rows` rows of n contiguous elements (row r of operand k at
// byte offset r * outer[k]; outer is read only when rows > 1); bcast[k] marks an input of
// inner stride 0. The one place each functor's vector code is compiled: every layout comes
// through the single call of f.vec below, and so does the partial vector that ends a row, staged
// through a vector's worth of buffers and run as a second pass of the same loop. (A copy per
// layout and for the remainder, per functor, dtype and target, made the library a megabyte
// larger.)
template <class T, class F, size_t... I>
HWY_INLINE void map_rows(const F& fn, T* out, const T* const* in, const bool* bcast_in, size_t n, int64_t rows,
                         const int64_t* outer, std::index_sequence<I...>) {
  constexpr size_t K = sizeof...(I);
  // Local copies: the stores to out could alias the caller's functor and flags as far as the
  // compiler knows, which would reload them in every iteration.
  const F f = fn;
  const bool bcast[K] = {bcast_in[I]...};
  const DC<T> d;
  using V = hn::Vec<DC<T>>;
  const size_t N = hn::Lanes(d);
  const size_t full = n / N * N;
  HWY_ALIGN T tail_in[K][hn::MaxLanes(d)];
  HWY_ALIGN T tail_out[hn::MaxLanes(d)];
  const T* row_in[K] = {in[I]...};
  for (int64_t r = 0; r < rows; ++r) {
    const V b[K] = {(bcast[I] ? hn::Set(d, static_cast<lane_t<T>>(row_in[I][0])) : hn::Zero(d))...};
    const T* src[K] = {row_in[I]...};
    T* dst = out;
    size_t len = full;
    for (bool tail = false;; tail = true) {
      for (size_t i = 0; i < len; i += N) StoreC(d, f.vec(d, (bcast[I] ? b[I] : LoadC(d, src[I] + i))...), dst + i);
      if (tail || full == n) break;
      for (size_t k = 0; k < K; ++k) {
        if (bcast[k]) continue;
        load_partial(tail_in[k], row_in[k] + full, n - full);
        src[k] = tail_in[k];
      }
      dst = tail_out;
      len = N;
    }
    if (full < n) store_partial(out + full, tail_out, n - full);
    if (r + 1 < rows) {
      out = reinterpret_cast<T*>(reinterpret_cast<char*>(out) + outer[0]);
      ((row_in[I] = reinterpret_cast<const T*>(reinterpret_cast<const char*>(row_in[I]) + outer[I + 1])), ...);
    }
  }
}

// One row of n contiguous elements.
template <class T, class F, size_t... I>
HWY_NOINLINE void map_contiguous(const F& f, T* out, const T* const* in, const bool* bcast, size_t n,
                                 std::index_sequence<I...> seq) {
  map_rows(f, out, in, bcast, n, 1, nullptr, seq);
}

// Strided operands gathered to and scattered from compute-type buffers (the same for every
// functor of a dtype).
template <class T>
HWY_NOINLINE void gather_chunk(lane_t<T>* dst, const char* p, int64_t stride, int64_t m) {
  for (int64_t j = 0; j < m; ++j) {
    T v;
    std::memcpy(&v, p + j * stride, sizeof(T));
    dst[j] = static_cast<lane_t<T>>(v);
  }
}
template <class T>
HWY_NOINLINE void scatter_chunk(char* o, int64_t stride, const lane_t<T>* src, int64_t m) {
  for (int64_t j = 0; j < m; ++j) {
    const T v = static_cast<T>(src[j]);
    std::memcpy(o + j * stride, &v, sizeof(T));
  }
}

// Operands that run across the output's rows (a transpose: inner stride not one element, outer
// stride one) are read in blocks of kTileRows rows: gathering them row by row would touch a new
// cache line per element. gather_across copies an rb x ib block (rows kTileCols apart) column by
// column, each column a few contiguous elements, 4-byte words in 8 x 8 register blocks; other
// strided blocks element by element. Per dtype, not per functor.
constexpr int64_t kTileRows = 16, kTileBytes = 512;
template <class T>
HWY_NOINLINE void gather_across(T* t, const char* p, int64_t si, int64_t so, int64_t rb, int64_t ib) {
  constexpr int64_t es = sizeof(T), kTileCols = kTileBytes / es;
  if (so != es) {
    for (int64_t r = 0; r < rb; ++r)
      for (int64_t i = 0; i < ib; ++i) std::memcpy(t + r * kTileCols + i, p + r * so + i * si, sizeof(T));
    return;
  }
  int64_t r8 = 0, i8 = 0;
  if constexpr (es == 4) {
    r8 = rb / 8 * 8;
    i8 = ib / 8 * 8;
    for (int64_t i = 0; i < i8; i += 8)
      for (int64_t r = 0; r < r8; r += 8)
        transpose8x8(p + i * si + r * es, si, reinterpret_cast<char*>(t + r * kTileCols + i), kTileCols * es);
  }
  // the rest: rows past r8 of the first i8 columns (none in whole blocks), every row of the others
  for (int64_t i = r8 < rb ? 0 : i8; i < ib; ++i) {
    const T* col = reinterpret_cast<const T*>(p + i * si);
    for (int64_t r = i < i8 ? r8 : 0; r < rb; ++r) t[r * kTileCols + i] = col[r];
  }
}

// rows rows of n elements whose output runs along the rows and some input across them, in blocks
// of kTileRows rows: the inputs across gathered (gather_across), the others read in place, and
// each block handed to run_block (the functor's own vec_loop, on contiguous operands). Per dtype
// and arity, not per functor.
using BlockFn = void (*)(const void* f, char** data, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer);
template <class T, size_t K>
HWY_NOINLINE void run_tiled(char** data, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer,
                            const void* f, BlockFn run_block) {
  constexpr int64_t es = sizeof(T), kTileCols = kTileBytes / es;
  HWY_ALIGN T tile[K][kTileRows * kTileCols];
  for (int64_t r0 = 0; r0 < rows; r0 += kTileRows) {
    const int64_t rb = std::min(kTileRows, rows - r0);
    for (int64_t i0 = 0; i0 < n; i0 += kTileCols) {
      const int64_t ib = std::min(kTileCols, n - i0);
      char* block[K + 1] = {data[0] + r0 * outer[0] + i0 * es};
      int64_t block_strides[K + 1] = {es}, block_outer[K + 1] = {outer[0]};
      for (size_t k = 1; k <= K; ++k) {
        char* p = data[k] + r0 * outer[k] + i0 * s[k];
        if (s[k] == es || s[k] == 0) {
          block[k] = p;
          block_strides[k] = s[k];
          block_outer[k] = outer[k];
        } else {
          gather_across<T>(tile[k - 1], p, s[k], outer[k], rb, ib);
          block[k] = reinterpret_cast<char*>(tile[k - 1]);
          block_strides[k] = es;
          block_outer[k] = kTileCols * es;
        }
      }
      run_block(f, block, block_strides, ib, rb, block_outer);
    }
  }
}

// m 16-bit values widened into float32 and back (out of line: one copy per dtype and target for
// every arity of stage16).
template <class T>
HWY_NOINLINE void widen_row(const T* in, float* to, size_t m) {
  const DC<T> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= m; i += N) hn::StoreU(LoadC(d, in + i), d, to + i);
  if (i < m) hn::StoreU(LoadCN(d, in + i, m - i), d, to + i);
}
template <class T>
HWY_NOINLINE void narrow_row(const float* from, T* out, size_t m) {
  const DC<T> d;
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= m; i += N) StoreC(d, hn::LoadU(d, from + i), out + i);
  if (i < m) StoreCN(d, hn::LoadU(d, from + i), out + i, m - i);
}

// Contiguous (or broadcast) 16-bit operands of a Staged16 functor: chunks of each row widened into
// float32 buffers, run by run_block (the functor's float32 vec_loop), the results narrowed into the
// output. Per dtype and arity, not per functor.
template <class T, size_t K>
HWY_NOINLINE void stage16(char** data, const bool* bcast, int64_t n, int64_t rows, const int64_t* outer,
                          const void* f, BlockFn run_block) {
  constexpr int64_t kChunk = 512;
  // (a vector more: the last row of a block of short rows ends anywhere, and its widened tail is
  // a whole vector)
  HWY_ALIGN float buf[K + 1][kChunk + hn::MaxLanes(hn::ScalableTag<float>())];
  char* chunk[K + 1];
  int64_t chunk_strides[K + 1] = {sizeof(float)};
  chunk[0] = reinterpret_cast<char*>(buf[0]);
  for (size_t k = 1; k <= K; ++k) {
    chunk[k] = reinterpret_cast<char*>(buf[k]);
    chunk_strides[k] = bcast[k - 1] ? 0 : int64_t{sizeof(float)};
  }
  // Rows of up to half a chunk go several to a block (a call of run_block a row was a third of
  // the time of a bfloat16 pow of 32 x 32 with a broadcast operand): row j of a block at buf[k] + j
  // * m, a broadcast operand's value for row j at buf[k][j]; a row every row reads (outer 0) is
  // widened once a block, rows that follow each other in memory in one call.
  const int64_t per = rows > 1 && n > 0 && n <= kChunk / 2 ? kChunk / n : 1;
  int64_t chunk_outer[K + 1] = {n * int64_t{sizeof(float)}};
  bool same_row[K + 1] = {}, adjacent[K + 1] = {};
  for (size_t k = 0; k <= K; ++k) {
    adjacent[k] = per > 1 && outer[k] == n * int64_t{sizeof(T)};
    if (k == 0) continue;
    same_row[k] = per > 1 && !bcast[k - 1] && outer[k] == 0;
    chunk_outer[k] = bcast[k - 1] ? int64_t{sizeof(float)} : same_row[k] ? 0 : chunk_outer[0];
  }
  char* row[K + 1];
  std::copy_n(data, K + 1, row);
  for (int64_t r = 0; r < rows;) {
    const int64_t rc = std::min(per, rows - r);
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
      const size_t m = static_cast<size_t>(std::min(kChunk, n - i0));
      // (row j of a block at row[k] + j * outer[k]: j > 0 only when rows > 1, where outer is read)
      const auto at = [&](size_t k, int64_t j) { return reinterpret_cast<const T*>(row[k] + (j ? j * outer[k] : 0)); };
      for (size_t k = 1; k <= K; ++k) {
        if (bcast[k - 1]) {
          for (int64_t j = 0; j < rc; ++j) buf[k][j] = static_cast<float>(at(k, j)[0]);
        } else if (same_row[k] || adjacent[k]) {  // (a block of rows: one chunk, i0 = 0, m = n)
          widen_row(at(k, 0), buf[k], static_cast<size_t>(adjacent[k] ? rc * n : n));
        } else {
          for (int64_t j = 0; j < rc; ++j) widen_row(at(k, j) + i0, buf[k] + j * static_cast<int64_t>(m), m);
        }
      }
      // the next chunk's input lines requested while this one computes: read in a burst between
      // two computations, they stalled the widening loop on memory (gelu of bfloat16, 4M
      // elements: that loop 52% of stage16's time)
      if (i0 + 2 * kChunk <= n) {
        for (size_t k = 1; k <= K; ++k) {
          if (bcast[k - 1]) continue;
          const char* next = reinterpret_cast<const char*>(reinterpret_cast<const T*>(row[k]) + i0 + kChunk);
          for (size_t b = 0; b < kChunk * sizeof(T); b += 64) hwy::Prefetch(next + b);
        }
      }
      run_block(f, chunk, chunk_strides, static_cast<int64_t>(m), rc, chunk_outer);
      if (adjacent[0]) {
        narrow_row(buf[0], reinterpret_cast<T*>(row[0]), static_cast<size_t>(rc * n));
      } else {
        for (int64_t j = 0; j < rc; ++j)
          narrow_row(buf[0] + j * static_cast<int64_t>(m), reinterpret_cast<T*>(row[0] + (j ? j * outer[0] : 0)) + i0, m);
      }
    }
    r += rc;
    if (r < rows)
      for (size_t k = 0; k <= K; ++k) row[k] += rc * outer[k];
  }
}

// rows rows of n elements (see map_rows) of any layout. Strided operands are gathered in chunks
// into compute-type buffers, run through this function again as contiguous rows, and scattered
// back, so each functor's vector code is compiled here once per dtype and target.
template <class T, size_t K, class F>
HWY_NOINLINE void vec_loop(const F& f, char** data, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer) {
  constexpr int64_t es = sizeof(T);
  bool contiguous = s[0] == es;
  bool bcast[K];
  const T* in[K];
  for (size_t k = 0; k < K; ++k) {
    bcast[k] = s[k + 1] == 0;
    contiguous = contiguous && (s[k + 1] == es || bcast[k]);
    in[k] = reinterpret_cast<const T*>(data[k + 1]);
  }
  if (contiguous) {
    if constexpr (kStaged16<F> && !std::is_same_v<lane_t<T>, T>) {
      stage16<T, K>(data, bcast, n, rows, outer, &f,
                    [](const void* fn, char** d, const int64_t* st, int64_t m, int64_t r, const int64_t* o) {
                      vec_loop<float, K>(*static_cast<const F*>(fn), d, st, m, r, o);
                    });
    } else {
      map_rows(f, reinterpret_cast<T*>(data[0]), in, bcast, static_cast<size_t>(n), rows, outer,
               std::make_index_sequence<K>{});
    }
    return;
  }
  if constexpr (K >= 2) {  // (binary and ternary ops: a transposed operand is common there)
    bool across = false;  // (outer is read only when rows > 1)
    for (size_t k = 1; k <= K && rows > 1; ++k) across = across || (s[k] != es && s[k] != 0 && outer[k] == es);
    if (s[0] == es && across) {
      // the blocks come back to this function, contiguous: the functor's loop is compiled once
      run_tiled<T, K>(data, s, n, rows, outer, &f, [](const void* fn, char** d, const int64_t* st, int64_t m,
                                                     int64_t r, const int64_t* o) {
        vec_loop<T, K>(*static_cast<const F*>(fn), d, st, m, r, o);
      });
      return;
    }
  }
  using L = lane_t<T>;
  constexpr int64_t kChunk = 256;
  HWY_ALIGN L buf[K + 1][kChunk];  // buf[0]: the results
  char* chunk[K + 1];
  int64_t chunk_strides[K + 1];
  for (size_t k = 0; k <= K; ++k) {
    chunk[k] = reinterpret_cast<char*>(buf[k]);
    chunk_strides[k] = k > 0 && bcast[k - 1] ? 0 : int64_t{sizeof(L)};
  }
  char* row[K + 1];
  std::copy_n(data, K + 1, row);
  for (int64_t r = 0; r < rows; ++r) {
    for (size_t k = 1; k <= K; ++k)
      if (bcast[k - 1]) buf[k][0] = static_cast<L>(*reinterpret_cast<const T*>(row[k]));
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
      const int64_t m = std::min(kChunk, n - i0);
      for (size_t k = 1; k <= K; ++k)
        if (!bcast[k - 1]) gather_chunk<T>(buf[k], row[k] + i0 * s[k], s[k], m);
      vec_loop<L, K>(f, chunk, chunk_strides, m, 1, nullptr);
      scatter_chunk<T>(row[0] + i0 * s[0], s[0], buf[0], m);
    }
    if (r + 1 < rows)
      for (size_t k = 0; k <= K; ++k) row[k] += outer[k];
  }
}

// Runs a K-input functor over the iterator (float storage type T).
template <class T, size_t K, class F>
HWY_INLINE void run_float(TensorIterator& iter, const F& f) {
  if constexpr (std::is_base_of_v<ScalarOnly, F>) {
    scalar_for_each<T, K>(iter, [&f](auto... x) { return f.scalar(x...); });
  } else {
    iter.for_each([&f](char** data, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer) {
      vec_loop<T, K>(f, data, s, n, rows, outer);
    });
  }
}



// ---- functors shared by the pointwise and multi-tensor kernels ----------------------------------
struct MaximumF {
  template <class D, class V>
  HWY_INLINE V vec(D, V a, V b) const {
    return hn::IfThenElse(hn::Or(hn::IsNaN(a), hn::IsNaN(b)), hn::Add(a, b), hn::Max(a, b));
  }
};
// Lerp from the nearer end keeps lerp(a, b, 1) == b exactly (PyTorch's formula).
template <class D, class V>
HWY_INLINE V lerp(D d, V a, V b, V w) {
  const V diff = hn::Sub(b, a);
  const auto small = hn::Lt(hn::Abs(w), hn::Set(d, 0.5));
  return hn::IfThenElse(small, hn::MulAdd(w, diff, a), hn::NegMulAdd(diff, hn::Sub(hn::Set(d, 1.0), w), b));
}
template <class L>
struct LerpScalarF {
  L weight;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b) const { return lerp(d, a, b, hn::Set(d, weight)); }
};
struct LerpF {
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b, V w) const { return lerp(d, a, b, w); }
};
template <class L>
struct AddcmulF {
  L value;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b, V c) const { return hn::MulAdd(hn::Mul(hn::Set(d, value), b), c, a); }
};
template <class L>
struct Atan2BackwardF {
  L value;
  template <class D, class V>
  HWY_INLINE V vec(D d, V g, V b, V c) const {
    return hn::Div(hn::Mul(hn::Mul(hn::Set(d, value), g), c), hn::MulAdd(b, b, hn::Mul(c, c)));
  }
};
template <class L>
struct AddcdivF {
  L value;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b, V c) const { return hn::Add(a, hn::Div(hn::Mul(hn::Set(d, value), b), c)); }
};

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_POINTWISE_VEC_INL_H_
