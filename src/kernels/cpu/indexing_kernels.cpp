// Loops of the indexing family (indexing.h). The accumulating scatter's row case (a whole
// contiguous row added at an indexed row, as index_add and index_put_ with accumulate along
// leading dims do) runs on SIMD vectors, Highway choosing the target per CPU at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/indexing_kernels.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#ifdef __F16C__
#include <immintrin.h>
#endif

#include "kernels/cpu/cast.h"
#include "kernels/cpu/hwy_util-inl.h"
#include "kernels/cpu/indexing.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace {

template <class T, class D>
HWY_INLINE void store_row(D d, hn::Vec<D> v, T* p) {
  if constexpr (is_float_like_v<T>) {
    StoreC(d, v, p);
  } else {
    hn::StoreU(v, d, p);
  }
}

// dst[i] += src[i] (src[0] for every i when bcast), i < n, in T's arithmetic: one rounding for
// the floats (16-bit ones add in float32), wrapping for the integers.
template <class T>
void add_row_typed(char* dst, const char* src, bool bcast, int64_t n) {
  T* out = reinterpret_cast<T*>(dst);
  const T* in = reinterpret_cast<const T*>(src);
  const DC<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  if (bcast) {
    const auto b = hn::Set(d, static_cast<lane_t<T>>(in[0]));
    for (; i + N <= n; i += N) store_row(d, hn::Add(LoadAny(d, out + i), b), out + i);
  } else {
    for (; i + N <= n; i += N) store_row(d, hn::Add(LoadAny(d, out + i), LoadAny(d, in + i)), out + i);
  }
  for (; i < n; ++i) {
    const T y = in[bcast ? 0 : i];
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      out[i] = T(static_cast<float>(out[i]) + static_cast<float>(y));
    } else {
      out[i] = wrap_add(out[i], y);
    }
  }
}

// Whether one of p[0..n) lies outside [lo, hi).
template <class Idx>
bool any_outside_typed(const Idx* p, int64_t n, int64_t lo, int64_t hi) {
  const hn::ScalableTag<Idx> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  // values outside the index type's range cannot occur: clamp the bounds into it
  const Idx l = static_cast<Idx>(std::clamp<int64_t>(lo, std::numeric_limits<Idx>::min(), std::numeric_limits<Idx>::max()));
  const Idx h = static_cast<Idx>(std::clamp<int64_t>(hi - 1, std::numeric_limits<Idx>::min(), std::numeric_limits<Idx>::max()));
  if (lo > std::numeric_limits<Idx>::max() || hi - 1 < std::numeric_limits<Idx>::min() || lo > hi - 1) return n > 0;
  const auto vl = hn::Set(d, l), vh = hn::Set(d, h);
  auto bad = hn::Zero(d);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, p + i);
    bad = hn::Or(bad, hn::VecFromMask(d, hn::Or(hn::Lt(v, vl), hn::Gt(v, vh))));
  }
  bool out = !hn::AllFalse(d, hn::Ne(bad, hn::Zero(d)));
  for (; i < n; ++i) out = out || p[i] < lo || p[i] >= hi;
  return out;
}

}  // namespace

// Whether one of n contiguous int64 (is64) or int32 values at p lies outside [lo, hi).
bool any_index_outside(bool is64, const char* p, int64_t n, int64_t lo, int64_t hi) {
  if (is64) return any_outside_typed(reinterpret_cast<const int64_t*>(p), n, lo, hi);
  return any_outside_typed(reinterpret_cast<const int32_t*>(p), n, lo, hi);
}

// add_row_typed for dtype dt; false for a dtype without a vector form.
bool add_row(ScalarType dt, char* dst, const char* src, bool bcast, int64_t n) {
  switch (dt) {
    case kFloat: add_row_typed<float>(dst, src, bcast, n); return true;
    case kDouble: add_row_typed<double>(dst, src, bcast, n); return true;
    case kHalf: add_row_typed<Half>(dst, src, bcast, n); return true;
    case kBFloat16: add_row_typed<BFloat16>(dst, src, bcast, n); return true;
    case kInt: add_row_typed<int32_t>(dst, src, bcast, n); return true;
    case kLong: add_row_typed<int64_t>(dst, src, bcast, n); return true;
    default: return false;
  }
}

// dst[i] += float32(src[i]), i < n, src float16 or bfloat16.
void add_row_to_float(ScalarType from, float* dst, const void* src, int64_t n) {
  const DC<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(src);
    int64_t i = 0;
    for (; i + N <= n; i += N) hn::StoreU(hn::Add(hn::LoadU(d, dst + i), LoadC(d, in + i)), d, dst + i);
    for (; i < n; ++i) dst[i] += static_cast<float>(in[i]);
  };
  if (from == kHalf) return run(Half{});
  run(BFloat16{});
}

// How many of the n elements of `bytes` bytes at p have a bit of `mask` set: nonzero's count
// (mask: every bit, or every bit but the sign for the floats, so that -0 is zero and NaN is not),
// a vector at a time (element by element it took a quarter of nonzero's time on 1K elements).
template <class U>
int64_t count_set_typed(const U* p, int64_t n, U mask) {
  const hn::ScalableTag<U> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto vm = hn::Set(d, mask);
  int64_t c = 0, i = 0;
  const auto zero = hn::Zero(d);
  // (not TestBit, which asks for every bit of the mask on AVX2 and for any on AVX-512)
  for (; i + N <= n; i += N) {
    c += static_cast<int64_t>(hn::CountTrue(d, hn::Ne(hn::And(hn::LoadU(d, p + i), vm), zero)));
  }
  for (; i < n; ++i) c += (p[i] & mask) != 0;
  return c;
}
int64_t count_set(const void* p, int64_t n, size_t bytes, uint64_t mask) {
  switch (bytes) {
    case 1: return count_set_typed(static_cast<const uint8_t*>(p), n, static_cast<uint8_t>(mask));
    case 2: return count_set_typed(static_cast<const uint16_t*>(p), n, static_cast<uint16_t>(mask));
    case 4: return count_set_typed(static_cast<const uint32_t*>(p), n, static_cast<uint32_t>(mask));
    default: return count_set_typed(static_cast<const uint64_t*>(p), n, mask);
  }
}

// nonzero's write of one run along the last dim: the positions c0 + j (j < run) of the elements
// of the run at p that count_set counts, stored to out in order, a vector of int64 lanes at a time
// (their words widened to 64 bits and compressed by the mask: element by element, with the
// coordinates of the other dims filled in by std::fill, took 0.6 us of 32 x 32's 1.1); the other
// columns (`fill` of them, `stride` apart) get the run's coordinates `coords`. Returns how many.
template <class U>
int64_t set_positions_typed(const U* p, U mask, int64_t c0, int64_t run, int64_t* out, int64_t nfill,
                            const int64_t* coords, int64_t stride) {
  const hn::ScalableTag<int64_t> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const hn::Rebind<U, decltype(d)> du;  // N words
  const auto widen = [&](auto v) {
    if constexpr (sizeof(U) == 8) {
      return hn::BitCast(d, v);
    } else if constexpr (sizeof(U) == 4) {
      return hn::BitCast(d, hn::PromoteTo(hn::Rebind<uint64_t, decltype(d)>(), v));
    } else {  // through 32 bits (Highway promotes 8 and 16 bits that far)
      const hn::Rebind<uint32_t, decltype(d)> d32;
      return hn::BitCast(d, hn::PromoteTo(hn::Rebind<uint64_t, decltype(d)>(), hn::PromoteTo(d32, v)));
    }
  };
  const auto vm = hn::Set(du, mask);
  auto pos = hn::Iota(d, c0);
  const auto step = hn::Set(d, N);
  int64_t count = 0, j = 0;
  for (; j + N <= run; j += N, pos = hn::Add(pos, step)) {
    const auto set = hn::Ne(widen(hn::And(hn::LoadU(du, p + j), vm)), hn::Zero(d));
#if HWY_TARGET <= HWY_AVX3
    // AVX-512: compressed in a register, then a masked store. Highway 1.0's CompressBlendedStore
    // compresses to memory, which AMD's Zen 4 and 5 run in microcode (nonzero over 64K int32 took
    // 80 cycles a vector, 1.3x libtorch's time), and its register Compress is a table permute.
    const auto packed = decltype(pos){_mm512_maskz_compress_epi64(set.raw, pos.raw)};
    const size_t k = hn::CountTrue(d, set);
    hn::BlendedStore(packed, hn::FirstN(d, k), d, out + count);
    count += static_cast<int64_t>(k);
#else
    count += static_cast<int64_t>(hn::CompressBlendedStore(pos, set, d, out + count));
#endif
  }
  for (; j < run; ++j) {  // (a store only for a set element: past the last one is another column's, or no memory)
    if ((p[j] & mask) != 0) out[count++] = c0 + j;
  }
  for (int64_t k = 0; k < nfill; ++k) {
    int64_t* o = out + (k - nfill) * stride;  // the columns before the last
    const auto v = hn::Set(d, coords[k]);
    int64_t i = 0;
    for (; i + N <= count; i += N) hn::StoreU(v, d, o + i);
    for (; i < count; ++i) o[i] = coords[k];
  }
  return count;
}
int64_t set_positions(const void* p, size_t bytes, uint64_t mask, int64_t c0, int64_t run, int64_t* out,
                      int64_t nfill, const int64_t* coords, int64_t stride) {
  switch (bytes) {
    case 1:
      return set_positions_typed(static_cast<const uint8_t*>(p), static_cast<uint8_t>(mask), c0, run, out, nfill,
                                 coords, stride);
    case 2:
      return set_positions_typed(static_cast<const uint16_t*>(p), static_cast<uint16_t>(mask), c0, run, out, nfill,
                                 coords, stride);
    case 4:
      return set_positions_typed(static_cast<const uint32_t*>(p), static_cast<uint32_t>(mask), c0, run, out, nfill,
                                 coords, stride);
    default: return set_positions_typed(static_cast<const uint64_t*>(p), mask, c0, run, out, nfill, coords, stride);
  }
}

// Rows [b, e) of cat_rows_kernel: blocks up to 4 KB in full vectors inline (a call of memcpy
// per block cost about as much as the copy), their tails under a mask (AVX-512; cat of two 32 x 32
// float32 along dim 1, Zen 5: 0.40 -> 0.34 us), longer ones through memcpy.
void cat_rows(char* dst, int64_t dst_stride, const RowBlock* blocks, size_t nblocks, int64_t b, int64_t e) {
  const hn::ScalableTag<uint8_t> d;
  const size_t N = hn::Lanes(d);
  for (int64_t r = b; r < e; ++r) {
    for (size_t k = 0; k < nblocks; ++k) {
      const RowBlock& blk = blocks[k];
      uint8_t* o = reinterpret_cast<uint8_t*>(dst + r * dst_stride + blk.offset);
      const uint8_t* in = reinterpret_cast<const uint8_t*>(blk.src + r * blk.bytes);
      const size_t nb = static_cast<size_t>(blk.bytes);
      if (nb > 4096) {
        std::memcpy(o, in, nb);
        continue;
      }
      size_t i = 0;
      for (; i + N <= nb; i += N) hn::StoreU(hn::LoadU(d, in + i), d, o + i);
      if (i == nb) continue;
      if constexpr (kMaskedNarrow) {  // (elsewhere Highway's byte-lane masked load reads a whole vector)
        const auto tail = hn::FirstN(d, nb - i);
        hn::BlendedStore(hn::MaskedLoad(tail, d, in + i), tail, d, o + i);
      } else {
        std::memcpy(o + i, in + i, nb - i);
      }
    }
  }
}

// out[i] = src[index[i] * step] for 4-byte elements, out and index contiguous, a vector of indices
// at a time while every one lies in [0, bound) (bound * step < 2^31): returns how many elements it
// wrote, the rest (from the vector holding a bad index, and the tail) left to the caller's scalar
// loop. AVX-512 only, and for strided rows: there its gathers beat the scalar loop (256 x 256
// float32 along the rows of a transposed source, Zen 5: 45 -> 38.7 us; 4M: 6.1-6.9 -> 5.7 ms),
// along the inner dim they lost to it; AVX2's gathers are slow on AMD's cores. 8-byte elements
// lost to the scalar loop on Zen 5 (int64 256 x 256 transposed: 70 against 44-48 us).
int64_t gather_along(int32_t* out, const int32_t* src, const int64_t* index, int64_t n, int32_t step, int64_t bound) {
#if HWY_TARGET == HWY_AVX3
  const hn::ScalableTag<int64_t> d64;
  const hn::Rebind<int32_t, decltype(d64)> d32;
  const size_t N = hn::Lanes(d64);
  const auto below = hn::Set(d64, -1), limit = hn::Set(d64, bound);
  const auto vstep = hn::Set(d32, step);
  int64_t i = 0;
  for (; i + static_cast<int64_t>(N) <= n; i += static_cast<int64_t>(N)) {
    const auto j = hn::LoadU(d64, index + i);
    if (HWY_UNLIKELY(!hn::AllTrue(d64, hn::And(hn::Gt(j, below), hn::Lt(j, limit))))) break;
    // (Highway 1.0 has no 64- to 32-bit integer demotion: vpmovqd)
    const auto offset = hn::Mul(hn::Vec<decltype(d32)>{_mm512_cvtepi64_epi32(j.raw)}, vstep);
    hn::StoreU(hn::GatherIndex(d32, src, offset), d32, out + i);
  }
  return i;
#else
  (void)out, (void)src, (void)index, (void)n, (void)step, (void)bound;
  return 0;
#endif
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(add_row);
HWY_EXPORT(any_index_outside);
HWY_EXPORT(cat_rows);
HWY_EXPORT(count_set);
HWY_EXPORT(set_positions);
HWY_EXPORT(add_row_to_float);
HWY_EXPORT(gather_along);

void add_row_to_float_kernel(ScalarType from, float* dst, const void* src, int64_t n) {
  HWY_DYNAMIC_DISPATCH(add_row_to_float)(from, dst, src, n);
}

namespace {

// Dtypes add_row takes.
bool has_vector_add_row(ScalarType t) {
  return t == kFloat || t == kDouble || t == kHalf || t == kBFloat16 || t == kInt || t == kLong;
}

// Plain data movement only needs the element size, so moving kernels are instantiated per size
// rather than per dtype (16 bytes: complex128).
struct Bytes16 {
  uint64_t lo, hi;
};
template <class F>
void visit_element_size(int64_t es, F&& f) {
  switch (es) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    case 16: return f(Bytes16{});
    default: break;
  }
  throw Error("indexing: unsupported element size " + std::to_string(es));
}

template <class F>
void visit_index_type(ScalarType t, F&& f) {
  if (t == kLong) return f(int64_t{});
  if (t == kInt) return f(int32_t{});
  throw Error(std::string("indexing: expected an int64 or int32 index, got ") + to_string(t));
}

template <class Idx>
inline int64_t load_index(const char* p) {
  Idx v;
  std::memcpy(&v, p, sizeof(Idx));
  return static_cast<int64_t>(v);
}

// Work of one iterator position is `len` element moves: keep threads' chunks about kGrainSize moves.
int64_t grain_for(int64_t len) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(len, 1)); }

// Memory copies pay off on another thread from about this many bytes (2 threads, Zen 5, 64K
// float32 elements: cat of two 5.2 -> 3.7 us, index_select 3.9 -> 2.7 us, embedding 4.0 -> 2.9
// us against a grain twice this, where they ran on one thread).
constexpr int64_t kGrainBytes = kGrainSize * 4;

// One 16-bit float to float32 and back. This file is compiled for AVX2 with F16C (as the other
// per-target files): float16 takes F16C's conversions, which round as Half's bit arithmetic
// does (to nearest even), in one instruction (scatter_add of float16 along the rows of 32 x 32:
// 3.8-5.2 -> 1.0 us; bfloat16 keeps its bit arithmetic, 1.8 us).
template <class T>
inline float widen(T v) {
#ifdef __F16C__
  if constexpr (std::is_same_v<T, Half>) return _cvtsh_ss(v.x);
#endif
  return static_cast<float>(v);
}
template <class T>
inline T narrow(float f) {
#ifdef __F16C__
  if constexpr (std::is_same_v<T, Half>) return Half::from_bits(static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT)));
#endif
  return T(f);
}

// BFloat16(float(a) + float(b)) without leaving the vector registers: each value loaded into the
// upper half of a float32 lane, the sum rounded to nearest even there and its upper half stored
// (NaN quieted as BFloat16's rounding does; of two NaNs, a's). Through the general registers, the
// bit arithmetic and the moves between the two register files made scatter_add of bfloat16 along
// the rows of 32 x 32 2.5x float32's time.
inline BFloat16 add_bf16(BFloat16 a, BFloat16 b) {
#ifdef __SSE4_1__
  const __m128i zero = _mm_setzero_si128();
  const __m128 sum = _mm_add_ss(_mm_castsi128_ps(_mm_insert_epi16(zero, a.x, 1)),
                                _mm_castsi128_ps(_mm_insert_epi16(zero, b.x, 1)));
  const __m128i u = _mm_castps_si128(sum);
  const __m128i odd = _mm_and_si128(_mm_srli_epi32(u, 16), _mm_set1_epi32(1));
  const __m128i rounded = _mm_add_epi32(_mm_add_epi32(u, _mm_set1_epi32(0x7fff)), odd);
  const __m128i quiet = _mm_or_si128(u, _mm_set1_epi32(0x400000));
  const __m128 r = _mm_blendv_ps(_mm_castsi128_ps(rounded), _mm_castsi128_ps(quiet), _mm_cmpunord_ss(sum, sum));
  return BFloat16::from_bits(static_cast<uint16_t>(_mm_extract_epi16(_mm_castps_si128(r), 1)));
#else
  return BFloat16(static_cast<float>(a) + static_cast<float>(b));
#endif
}

// a + alpha * b as PyTorch's CPU kernels compute it in T: 16-bit floats round the product and the
// sum to T, integers wrap, bools are logical.
template <class T>
inline T scaled_add(T a, T b, T alpha, bool has_alpha) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || (b && (!has_alpha || alpha));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return add_bf16(a, has_alpha ? BFloat16(widen(b) * widen(alpha)) : b);
  } else if constexpr (std::is_same_v<T, Half>) {
    const float p = has_alpha ? widen(narrow<T>(widen(b) * widen(alpha))) : widen(b);
    return narrow<T>(widen(a) + p);
  } else {
    return wrap_add(a, has_alpha ? wrap_mul(b, alpha) : b);
  }
}

// Splits [0, n) into chunks, the same in both passes of a compaction (count, then write).
struct Chunks {
  int64_t n, count;
  int64_t begin(int64_t c) const { return n * c / count; }
};
Chunks make_chunks(int64_t n) { return {n, std::clamp<int64_t>(n / kGrainSize, 1, detail::region_threads())}; }

// Output position of each chunk's first kept element, from count(begin, end) of every chunk.
template <class Count>
std::vector<int64_t> chunk_output_starts(const Chunks& ch, const Count& count, int64_t* total) {
  std::vector<int64_t> starts(ch.count + 1, 0);
  parallel_for(0, ch.count, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) starts[c + 1] = count(ch.begin(c), ch.begin(c + 1));
  });
  for (int64_t c = 0; c < ch.count; ++c) starts[c + 1] += starts[c];
  *total = starts[ch.count];
  return starts;
}
// write(begin, end, first_output_position, end_output_position) on every chunk. The writers
// store each element at the current position and advance it by the element's flag, without a
// branch: a skipped element's store is overwritten by the next kept one, which exists while the
// position is below the chunk's end (so they stop there).
template <class Write>
void write_chunks(const Chunks& ch, const std::vector<int64_t>& starts, const Write& write) {
  parallel_for(0, ch.count, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) write(ch.begin(c), ch.begin(c + 1), starts[c], starts[c + 1]);
  });
}

// Of the index values found outside their bounds, the one the first thread to find one saw.
struct FirstOutside {
  std::atomic<bool> found{false};
  int64_t value = 0;  // written once, by the thread that sets `found`
  void set(int64_t v) {
    bool expected = false;
    if (found.compare_exchange_strong(expected, true)) value = v;
  }
  std::optional<int64_t> get() const { return found.load() ? std::optional(value) : std::nullopt; }
};

// One row of a gather (an iterator's row-loop call): out[i] = src[i * s1 + index[i] * step].
template <class E, class Idx>
struct GatherRow {
  int64_t indexed_stride, bound;
  FirstOutside* bad_out;
  void operator()(char** data, const int64_t* strides, int64_t n) const {
    FirstOutside& bad = *bad_out;
    // typed accesses and element strides, in registers: stores through char* could alias them
    E* const out = reinterpret_cast<E*>(data[0]);
    const E* const src = reinterpret_cast<const E*>(data[1]);
    const Idx* const index = reinterpret_cast<const Idx*>(data[2]);
    const int64_t s0 = strides[0] / int64_t{sizeof(E)}, s1 = strides[1] / int64_t{sizeof(E)};
    const int64_t s2 = strides[2] / int64_t{sizeof(Idx)}, step = indexed_stride / int64_t{sizeof(E)};
    const auto outside = [&](int64_t j) {
      if (HWY_LIKELY(static_cast<uint64_t>(j) < static_cast<uint64_t>(bound))) return false;
      bad.set(j);
      return true;
    };
    if (s0 == 1 && s1 == 0 && s2 == 1 && step == 1) {  // along the inner dim: no multiplies
      // four elements per branch: one test per element made the loop's speed depend on where
      // the linker placed it (1.2x libtorch's time in ember_bench, 0.85x in another binary)
      const uint64_t ub = static_cast<uint64_t>(bound);
      int64_t i = 0;
      for (; i + 4 <= n; i += 4) {
        const uint64_t j0 = index[i], j1 = index[i + 1], j2 = index[i + 2], j3 = index[i + 3];
        if (HWY_UNLIKELY((j0 >= ub) | (j1 >= ub) | (j2 >= ub) | (j3 >= ub))) break;  // found below
        out[i] = src[j0];
        out[i + 1] = src[j1];
        out[i + 2] = src[j2];
        out[i + 3] = src[j3];
      }
      for (; i < n; ++i) {
        const int64_t j = index[i];
        if (outside(j)) return;
        out[i] = src[j];
      }
      return;
    }
    int64_t i = 0;
    // AVX-512 gathers as far as the indices are good (gather_along), the loops below going on from
    // i; along a strided dim only: along the inner dim the scalar loop above was faster (32 x 32
    // float32, Zen 5: 0.64 against 0.80 us)
    if constexpr (sizeof(E) == 4 && std::is_same_v<Idx, int64_t>) {
      if (s0 == 1 && s2 == 1 && s1 == 0 && step > 0 && bound <= std::numeric_limits<int32_t>::max() / step && n >= 8)
        i = HWY_DYNAMIC_DISPATCH(gather_along)(reinterpret_cast<int32_t*>(out), reinterpret_cast<const int32_t*>(src),
                                               index, n, static_cast<int32_t>(step), bound);
    }
    if (s0 == 1 && s2 == 1) {  // contiguous output and index: four reads at once, as above
      const uint64_t ub = static_cast<uint64_t>(bound);
      for (; i + 4 <= n; i += 4) {
        const uint64_t j0 = index[i], j1 = index[i + 1], j2 = index[i + 2], j3 = index[i + 3];
        if (HWY_UNLIKELY((j0 >= ub) | (j1 >= ub) | (j2 >= ub) | (j3 >= ub))) break;  // found below
        const E* const p = src + i * s1;
        out[i] = p[static_cast<int64_t>(j0) * step];
        out[i + 1] = p[s1 + static_cast<int64_t>(j1) * step];
        out[i + 2] = p[2 * s1 + static_cast<int64_t>(j2) * step];
        out[i + 3] = p[3 * s1 + static_cast<int64_t>(j3) * step];
      }
    }
    for (; i < n; ++i) {
      const int64_t j = index[i * s2];
      if (outside(j)) return;
      out[i * s0] = src[i * s1 + j * step];
    }
  }
};

}  // namespace

std::optional<int64_t> index_gather_kernel(TensorIterator& iter, int64_t indexed_stride, int64_t bound) {
  FirstOutside bad;
  visit_element_size(static_cast<int64_t>(element_size(iter.dtype(0))), [&](auto etag) {
    using E = decltype(etag);
    visit_index_type(iter.dtype(2), [&](auto itag) {
      iter.for_each(GatherRow<E, decltype(itag)>{indexed_stride, bound, &bad});
    });
  });
  return bad.get();
}

// The largest copy of lines index_gather_dense gathers a block of rows from (a thread's, in L2),
// and the largest source it gathers from in place instead (one that fits L1).
constexpr int64_t kStagedGatherBytes = 256 * 1024, kInPlaceGatherBytes = 32 * 1024;

std::optional<int64_t> index_gather_dense(ScalarType dt, void* out, const void* src, WalkStrides src_walk,
                                          const int64_t* index, int64_t outer, int64_t len, int64_t size,
                                          int64_t inner) {
  FirstOutside bad;
  const int64_t es = static_cast<int64_t>(element_size(dt));
  // Rows gathered along a strided dim of a source whose neighbouring rows are adjacent (a
  // transposed matrix gathered along its rows): each read of a row lands on another cache line,
  // and at strides of a few KiB those lines share a few L1 sets and evict each other before the
  // neighbouring rows read them. So the rows are gathered a cache line's worth at a time (16
  // float32 rows) from a copy of the lines they read, laid end to end in a buffer (line k at k *
  // 64 bytes: every set in use), each line copied once whole (256 x 256, 1 thread: float32 57 ->
  // 46 us, int64 114 -> 57 us). A source that fits L1 (32 x 32 int64: 8 KiB) loses no lines and
  // is gathered in place (1.15 -> 0.87 us).
  const int64_t block_rows = 64 / es;
  if (inner == 1 && src_walk.outer == 1 && src_walk.along * es >= 256 && 2 * len >= size &&
      size * src_walk.along * es > kInPlaceGatherBytes &&
      size * 64 <= kStagedGatherBytes && outer >= block_rows) {
    visit_element_size(es, [&](auto etag) {
      using E = decltype(etag);
      const GatherRow<E, int64_t> row{64, size, &bad};  // one step along the dim: one line of the copy
      const E* const sp = static_cast<const E*>(src);
      parallel_for(0, (outer + block_rows - 1) / block_rows, std::max<int64_t>(1, kGrainSize / (block_rows * len)),
                   [&](int64_t b, int64_t e) {
        std::vector<E> lines(static_cast<size_t>(size * block_rows));
        const int64_t strides[3] = {es, 0, 8};
        for (int64_t blk = b; blk < e && !bad.get(); ++blk) {
          const int64_t o0 = blk * block_rows, rows = std::min(block_rows, outer - o0);
          for (int64_t k = 0; k < size; ++k) {
            if (rows == block_rows) {
              std::memcpy(lines.data() + k * block_rows, sp + o0 + k * src_walk.along, 64);
            } else {
              std::memcpy(lines.data() + k * block_rows, sp + o0 + k * src_walk.along, static_cast<size_t>(rows * es));
            }
          }
          for (int64_t r = 0; r < rows; ++r) {
            char* data[3] = {static_cast<char*>(out) + (o0 + r) * len * es, reinterpret_cast<char*>(lines.data() + r),
                             reinterpret_cast<char*>(const_cast<int64_t*>(index + (o0 + r) * len))};
            row(data, strides, len);
          }
        }
      });
    });
    return bad.get();
  }
  visit_element_size(es, [&](auto etag) {
    const GatherRow<decltype(etag), int64_t> row{src_walk.along * es, size, &bad};
    // rows of the iterator's form: with inner 1, each outer slice a row of len positions (the
    // source's row read at the index); else each (outer, l) a row of inner positions
    const int64_t rows = inner == 1 ? outer : outer * len, n = inner == 1 ? len : inner;
    parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / n), [&](int64_t b, int64_t e) {
      const int64_t strides[3] = {es, inner == 1 ? 0 : src_walk.inner * es, 8};
      for (int64_t r = b; r < e; ++r) {
        const int64_t o = inner == 1 ? r : r / len;
        char* data[3] = {static_cast<char*>(out) + r * n * es,
                         const_cast<char*>(static_cast<const char*>(src)) + o * src_walk.outer * es,
                         reinterpret_cast<char*>(const_cast<int64_t*>(index + r * n))};
        row(data, strides, n);
      }
    });
  });
  return bad.get();
}

// One iterator call of a scatter in element units: dst[index[k]] = combine(dst[index[k]], src[k]) at
// the n positions and the len steps along the dim. Everything is a by-value parameter and every
// access is typed, so the compiler keeps strides and bases in registers; through char* and memcpy
// each store could alias them and they were reloaded per element (2x slower).
// The nearer of the two walks in memory runs inside (scatter_add along the last dim, as gather's
// backward runs it, steps along rows). For one position the
// steps keep their order either way, and positions write apart, so duplicate indices add (or the
// last write lands) in the same order.
// Each index value is compared with `bound` (unsigned, so negative ones fail too) as it is read:
// the first one outside is returned, with the writes before it done.
template <class E, class Combine>
std::optional<int64_t> scatter_steps(E* out, const E* src, const int64_t* index, int64_t n, int64_t out_stride,
                                     int64_t src_stride, int64_t index_stride, int64_t len, int64_t index_step,
                                     int64_t plain_step, int64_t indexed_stride, uint64_t bound, Combine combine) {
  const auto outside = [bound](int64_t j) { return HWY_UNLIKELY(static_cast<uint64_t>(j) >= bound); };
  // Steps inside read the source at plain_step and write the destination an index apart;
  // positions inside read at src_stride and write at out_stride. A strided read-modify-write of the
  // destination costs about twice a strided read (index_add along dim 0 of a transposed int64
  // source, 256 x 256: rows written whole, 4x faster than columns on Zen 5).
  const int64_t steps_apart = 2 * std::abs(indexed_stride) + std::abs(plain_step);
  const int64_t positions_apart = 2 * std::abs(out_stride) + std::abs(src_stride);
  if (n > 1 && len > 1 && steps_apart < positions_apart) {
    // two positions at once: their writes never meet, so each one's read-modify-writes have
    // twice as long to land before the next access of its own that may hit the same element.
    // Contiguous rows (scatter along the last dim) with their steps known to be one element.
    int64_t i = 0;
    auto pairs = [&](auto istep, auto pstep, auto xstride) -> std::optional<int64_t> {
      for (; i + 2 <= n; i += 2, out += 2 * out_stride, src += 2 * src_stride, index += 2 * index_stride) {
        for (int64_t k = 0; k < len; ++k) {
          const int64_t j0 = index[k * istep], j1 = index[index_stride + k * istep];
          if (outside(j0) | outside(j1)) return outside(j0) ? j0 : j1;
          E& d0 = out[j0 * xstride];
          E& d1 = out[out_stride + j1 * xstride];
          d0 = combine(d0, src[k * pstep]);
          d1 = combine(d1, src[src_stride + k * pstep]);
        }
      }
      return std::nullopt;
    };
    using One = std::integral_constant<int64_t, 1>;
    const std::optional<int64_t> bad = index_step == 1 && plain_step == 1 && indexed_stride == 1
                                           ? pairs(One{}, One{}, One{})
                                           : pairs(index_step, plain_step, indexed_stride);
    if (bad) return bad;
    for (; i < n; ++i, out += out_stride, src += src_stride, index += index_stride) {
      for (int64_t k = 0; k < len; ++k) {
        const int64_t j = index[k * index_step];
        if (outside(j)) return j;
        E& d = out[j * indexed_stride];
        d = combine(d, src[k * plain_step]);
      }
    }
  } else {
    // two steps at once, in order at each position: their index values often share a cache line
    int64_t k = 0;
    for (; k + 2 <= len; k += 2) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t* ix = index + k * index_step + i * index_stride;
        const E* x = src + k * plain_step + i * src_stride;
        const int64_t j0 = ix[0], j1 = ix[index_step];
        if (outside(j0) | outside(j1)) return outside(j0) ? j0 : j1;
        E& d0 = out[i * out_stride + j0 * indexed_stride];
        d0 = combine(d0, x[0]);
        E& d1 = out[i * out_stride + j1 * indexed_stride];
        d1 = combine(d1, x[plain_step]);
      }
    }
    for (; k < len; ++k) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t j = index[k * index_step + i * index_stride];
        if (outside(j)) return j;
        E& d = out[i * out_stride + j * indexed_stride];
        d = combine(d, src[k * plain_step + i * src_stride]);
      }
    }
  }
  return std::nullopt;
}

// scatter_steps on an iterator call's operands; byte strides become element strides (tensors'
// strides are whole elements). Outlined: inlined into the iterator's loop, whose live values push
// the walk's out of registers, scatter_add ran 1.6x slower.
template <class E, class Combine>
[[gnu::noinline]] void scatter_call(char** data, const int64_t* strides, int64_t n, const IndexWalk& w,
                                    FirstOutside& bad, Combine combine) {
  constexpr int64_t es = sizeof(E), is = sizeof(int64_t);
  if (bad.found.load(std::memory_order_relaxed)) return;
  if (auto j = scatter_steps(reinterpret_cast<E*>(data[0]), reinterpret_cast<const E*>(data[1]),
                             reinterpret_cast<const int64_t*>(data[2]), n, strides[0] / es, strides[1] / es,
                             strides[2] / is, w.len, w.index_step / is, w.plain_step / es, w.indexed_stride / es,
                             w.bound, combine))
    bad.set(*j);
}

namespace {
// The scatter's loops over the rows for_each(row, grain) visits (an iterator's, or dense ones).
template <class ForEach>
std::optional<int64_t> scatter_rows(ScalarType dt, const IndexWalk& w, ScatterMode mode, const Scalar& alpha,
                                    int64_t grain, const ForEach& for_each) {
  FirstOutside bad;
  if (mode == ScatterMode::Assign) {
    visit_element_size(static_cast<int64_t>(element_size(dt)), [&](auto etag) {
      using E = decltype(etag);
      for_each(
          [&w, &bad](char** data, const int64_t* strides, int64_t n) {
            scatter_call<E>(data, strides, n, w, bad, [](E, E y) { return y; });
          },
          grain);
    });
    return bad.get();
  }
  const bool has_alpha = !alpha.equal(1), multiply = mode == ScatterMode::Multiply;
  if (is_complex_type(dt)) {  // (scatter_add and index_put's accumulate of complex tensors)
    visit_complex(dt, [&](auto ctag) {
      using C = decltype(ctag);
      const C a = alpha.to<C>();
      for_each(
          [&w, &bad, a, has_alpha, multiply](char** data, const int64_t* strides, int64_t n) {
            scatter_call<C>(data, strides, n, w, bad,
                            [=](C x, C y) { return multiply ? x * y : has_alpha ? x + a * y : x + y; });
          },
          grain);
    });
    return bad.get();
  }
  const bool rows = !has_alpha && !multiply && has_vector_add_row(dt);
  visit_dtype(dt, [&](auto ttag) {
    using T = decltype(ttag);
    const T a = alpha.to<T>();
    for_each(
        [&w, &bad, a, has_alpha, multiply, rows, dt](char** data, const int64_t* strides, int64_t n) {
          constexpr int64_t es = sizeof(T);
          if (rows && n >= 16 && strides[2] == 0 && strides[0] == es && (strides[1] == es || strides[1] == 0)) {
            // one index for the n positions, both rows contiguous: a row added at a row
            for (int64_t k = 0; k < w.len; ++k) {
              const int64_t j = load_index<int64_t>(data[2] + k * w.index_step);
              if (static_cast<uint64_t>(j) >= w.bound) return bad.set(j);
              HWY_DYNAMIC_DISPATCH(add_row)(dt, data[0] + j * w.indexed_stride, data[1] + k * w.plain_step,
                                            strides[1] == 0, n);
            }
            return;
          }
          if (multiply || has_alpha) {
            scatter_call<T>(data, strides, n, w, bad, [=](T x, T y) {
              return multiply ? static_cast<T>(x * y) : scaled_add(x, y, a, has_alpha);
            });
          } else {  // scatter_add's common case without a test per element
            scatter_call<T>(data, strides, n, w, bad, [](T x, T y) { return scaled_add(x, y, T(1), false); });
          }
        },
        grain);
  });
  return bad.get();
}

}  // namespace

std::optional<int64_t> index_scatter_kernel(TensorIterator& iter, const IndexWalk& w, ScatterMode mode,
                                            const Scalar& alpha, bool serial) {
  EMBER_CHECK(iter.dtype(2) == kLong, "index_scatter_kernel", "internal: expected an int64 index, got ",
              iter.dtype(2));
  const int64_t grain = serial ? std::max<int64_t>(iter.numel(), 1) : grain_for(w.len);
  return scatter_rows(iter.dtype(0), w, mode, alpha, grain,
                      [&iter](const auto& row, int64_t g) { iter.for_each(row, g); });
}

std::optional<int64_t> index_scatter_dense(ScalarType dt, void* dst, const void* src, bool src_fixed,
                                           WalkStrides src_walk, const int64_t* index, int64_t outer, int64_t len,
                                           int64_t size, int64_t inner, ScatterMode mode) {
  const int64_t es = static_cast<int64_t>(element_size(dt));
  IndexWalk w;  // along the dim at each position (outer, inner)
  w.len = len;
  w.index_step = inner * 8;
  w.plain_step = src_fixed ? 0 : src_walk.along * es;
  w.indexed_stride = inner * es;
  w.bound = static_cast<uint64_t>(size);
  // positions p = o * inner + i, in runs within one o (the iterator's rows): with inner 1 all of
  // them are one run, each a row of dst, src and index
  const int64_t dst_slice = size * inner * es, src_slice = src_fixed ? 0 : src_walk.outer * es;
  const int64_t index_slice = len * inner * 8;
  const int64_t strides[3] = {inner == 1 ? dst_slice : es, inner == 1 ? src_slice : src_fixed ? 0 : src_walk.inner * es,
                              inner == 1 ? index_slice : 8};
  const auto each_run = [&](const auto& row, int64_t grain) {
    parallel_for(0, outer * inner, grain, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e;) {
        const int64_t o = inner == 1 ? 0 : p / inner, i = inner == 1 ? p : p % inner;
        const int64_t m = inner == 1 ? e - p : std::min(e - p, inner - i);
        char* data[3] = {static_cast<char*>(dst) + o * dst_slice + i * strides[0],
                         const_cast<char*>(static_cast<const char*>(src)) + o * src_slice + i * strides[1],
                         reinterpret_cast<char*>(const_cast<int64_t*>(index)) + o * index_slice + i * strides[2]};
        row(data, strides, m);
        p += m;
      }
    });
  };
  return scatter_rows(dt, w, mode, 1, grain_for(len), each_run);
}

std::optional<int64_t> find_index_out_of_range(TensorIterator& iter, int64_t lo, int64_t hi) {
  FirstOutside bad;
  visit_index_type(iter.dtype(0), [&](auto itag) {
    using Idx = decltype(itag);
    iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
      if (bad.found.load(std::memory_order_relaxed)) return;
      // contiguous runs are checked on vectors first; only a run with a bad value is searched
      if (strides[0] == sizeof(Idx) &&
          !HWY_DYNAMIC_DISPATCH(any_index_outside)(sizeof(Idx) == 8, data[0], n, lo, hi)) {
        return;
      }
      for (int64_t i = 0; i < n; ++i) {
        const int64_t v = load_index<Idx>(data[0] + i * strides[0]);
        if (v < lo || v >= hi) return bad.set(v);
      }
    });
  });
  return bad.get();
}

int64_t max_index(TensorIterator& iter) {
  std::atomic<int64_t> best{std::numeric_limits<int64_t>::min()};
  iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
    int64_t m = std::numeric_limits<int64_t>::min();
    for (int64_t i = 0; i < n; ++i) m = std::max(m, load_index<int64_t>(data[0] + i * strides[0]));
    int64_t cur = best.load(std::memory_order_relaxed);
    while (m > cur && !best.compare_exchange_weak(cur, m)) {
    }
  });
  return best.load();
}

std::optional<int64_t> add_index_offsets(TensorIterator& iter, int64_t size, int64_t stride, bool first) {
  FirstOutside bad;
  iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
    if (bad.found.load(std::memory_order_relaxed)) return;
    for (int64_t i = 0; i < n; ++i) {
      int64_t v = load_index<int64_t>(data[1] + i * strides[1]);
      if (v < -size || v >= size) return bad.set(v);
      if (v < 0) v += size;
      char* o = data[0] + i * strides[0];
      const int64_t acc = (first ? 0 : load_index<int64_t>(o)) + v * stride;
      std::memcpy(o, &acc, sizeof(acc));
    }
  });
  return bad.get();
}

void cat_rows_kernel(char* dst, int64_t dst_stride, const RowBlock* blocks, size_t nblocks, int64_t rows) {
  int64_t row_bytes = 0;
  for (size_t k = 0; k < nblocks; ++k) row_bytes += blocks[k].bytes;
  if (rows <= 0 || row_bytes <= 0) return;
  // Output rows in order, each filled from every input (the order of libtorch's serial kernel):
  // input by input, each output row was written in pieces far apart in time. Together with the
  // inline vector copies, cat along dim 1 of two 256 x 256 bfloat16 tensors 4.0 -> 2.8 us,
  // float32 8.4 -> 7.2 us (Zen 5).
  if (rows < 4 && row_bytes >= 4 * kGrainBytes) {
    // a few long rows (cat along dim 0 makes one): the threads split each block (one thread
    // copied them all: cat.dim0 of two 4M bfloat16 tensors took 1.5-3x libtorch's time at 2 threads)
    for (int64_t r = 0; r < rows; ++r) {
      for (size_t k = 0; k < nblocks; ++k) {
        char* d = dst + r * dst_stride + blocks[k].offset;
        const char* s = blocks[k].src + r * blocks[k].bytes;
        parallel_for(0, blocks[k].bytes, kGrainBytes, [&](int64_t b, int64_t e) { std::memcpy(d + b, s + b, e - b); });
      }
    }
    return;
  }
  parallel_for(0, rows, std::max<int64_t>(1, kGrainBytes / row_bytes), [&](int64_t b, int64_t e) {
    HWY_DYNAMIC_DISPATCH(cat_rows)(dst, dst_stride, blocks, nblocks, b, e);
  });
}

void index_select_rows_kernel(char* dst, const char* src, int64_t outer, int64_t src_outer_stride,
                              const Tensor& index, int64_t src_index_stride, int64_t row_bytes) {
  const int64_t n = index.numel();
  if (outer <= 0 || n == 0 || row_bytes <= 0) return;
  const int64_t istride = index.dim() == 0 ? 0 : index.stride(0) * static_cast<int64_t>(index.element_size());
  const char* ip = static_cast<const char*>(index.data_ptr());
  const size_t nb = static_cast<size_t>(row_bytes);
  auto rows = [&](auto itag, auto copy_row) {
    using Idx = decltype(itag);
    parallel_for(0, outer * n, std::max<int64_t>(1, kGrainBytes / row_bytes), [&](int64_t b, int64_t e) {
      int64_t o = b / n, k = b % n;
      for (int64_t r = b; r < e; ++r) {
        const int64_t j = load_index<Idx>(ip + k * istride);
        copy_row(dst + r * row_bytes, src + o * src_outer_stride + j * src_index_stride);
        if (++k == n) {
          k = 0;
          ++o;
        }
      }
    });
  };
  visit_index_type(index.dtype(), [&](auto itag) {
    if (row_bytes <= 8 && (row_bytes & (row_bytes - 1)) == 0) {  // one element: a fixed-size copy
      visit_element_size(row_bytes, [&](auto etag) {
        using E = decltype(etag);
        rows(itag, [](char* d, const char* s) { std::memcpy(d, s, sizeof(E)); });
      });
    } else {
      rows(itag, [nb](char* d, const char* s) { std::memcpy(d, s, nb); });
    }
  });
}

Tensor nonzero_kernel(const Tensor& self) {
  const int64_t n = self.numel(), nd = self.dim();
  const Chunks ch = make_chunks(n);
  Tensor out;
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(self.data_ptr());
    // x != 0 on the bits, the floats' sign masked off (-0 is zero, NaN is not): the count and
    // the writer below test the same bits, so they agree on every element
    using U = std::conditional_t<sizeof(T) == 1, uint8_t,
                                 std::conditional_t<sizeof(T) == 2, uint16_t,
                                                    std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
    const U sign = static_cast<U>(U{1} << (8 * sizeof(T) - 1));
    const U bits = is_float_like_v<T> ? static_cast<U>(sign - 1) : static_cast<U>(~U{0});
    int64_t total = 0;
    auto starts = chunk_output_starts(ch, [&](int64_t b, int64_t e) {
      return HWY_DYNAMIC_DISPATCH(count_set)(p + b, e - b, sizeof(T), bits);
    }, &total);
    // [total, nd] stored dim-major (strides [1, total]), as PyTorch lays out nonzero's result
    out = make_empty_strided({total, nd}, {1, total}, kLong);
    int64_t* o = static_cast<int64_t*>(out.data_ptr());
    IntArrayRef sizes = self.sizes();
    write_chunks(ch, starts, [&](int64_t b, int64_t e, int64_t pos, int64_t end) {
      // nothing kept (this also keeps the unravelling below away from empty dims), or no columns
      if (pos == end || nd == 0) return;
      DimVector coord(nd);
      for (int64_t d = nd - 1, rem = b; d >= 0; --d) {
        coord[d] = rem % sizes[d];
        rem /= sizes[d];
      }
      // a run along the last dim at a time (count_set and set_positions test the same bits: the
      // runs of [b, e) write end - pos positions)
      int64_t* last = o + (nd - 1) * total;
      for (int64_t i = b; pos < end;) {
        const int64_t c0 = coord[nd - 1], run = std::min(e - i, sizes[nd - 1] - c0);
        pos += HWY_DYNAMIC_DISPATCH(set_positions)(p + i, sizeof(T), bits, c0, run, last + pos, nd - 1,
                                                   coord.data(), total);
        i += run;
        coord[nd - 1] = 0;
        for (int64_t d = nd - 2; d >= 0 && ++coord[d] == sizes[d]; --d) coord[d] = 0;
      }
    });
  });
  return out;
}

// Where each chunk of a contiguous bool or uint8 mask (set iff the byte is not 0) starts among
// the set elements.
std::vector<int64_t> mask_chunk_starts(const Chunks& ch, const uint8_t* m, int64_t* total) {
  return chunk_output_starts(ch, [m](int64_t b, int64_t e) {
    // eight bytes at a time: each byte's "not 0" moved to its top bit, then the top bits summed
    // by a multiply (a byte at a time was 40% of masked_select's time)
    constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fu, kOnes = 0x0101010101010101u;
    int64_t c = 0, i = b;
    for (; i + 8 <= e; i += 8) {
      uint64_t w;
      std::memcpy(&w, m + i, 8);
      const uint64_t top = (((w & kLow7) + kLow7) | w) & ~kLow7;
      c += static_cast<int64_t>(((top >> 7) * kOnes) >> 56);
    }
    for (; i < e; ++i) c += m[i] != 0;
    return c;
  }, total);
}

Tensor masked_select_kernel(const Tensor& self, const Tensor& mask) {
  const uint8_t* m = static_cast<const uint8_t*>(mask.data_ptr());
  const Chunks ch = make_chunks(self.numel());
  int64_t total = 0;
  const std::vector<int64_t> starts = mask_chunk_starts(ch, m, &total);
  Tensor out = make_empty({total}, self.dtype());
  const int64_t es = static_cast<int64_t>(self.element_size());
  const char* src = static_cast<const char*>(self.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  visit_element_size(es, [&](auto etag) {
    using E = decltype(etag);
    write_chunks(ch, starts, [&](int64_t b, int64_t e, int64_t pos, int64_t end) {
      // typed pointers as locals: the stores could alias the captured ones, which were reloaded
      // per element (masked_select of 64K floats 1.6x libtorch's time)
      E* const out = reinterpret_cast<E*>(dst);
      const E* const in = reinterpret_cast<const E*>(src);
      const uint8_t* const set = m;
      for (int64_t i = b; i < e && pos < end; ++i) {
        out[pos] = in[i];
        pos += set[i] != 0;
      }
    });
  });
  return out;
}

Tensor masked_expand_kernel(const Tensor& values, const Tensor& mask) {
  const uint8_t* m = static_cast<const uint8_t*>(mask.data_ptr());
  const Chunks ch = make_chunks(mask.numel());
  int64_t total = 0;
  const std::vector<int64_t> starts = mask_chunk_starts(ch, m, &total);
  EMBER_CHECK(total == values.numel(), "masked_select_backward", "expected ", total, " values, got ", values.numel());
  Tensor out = make_empty(mask.sizes(), values.dtype());
  visit_element_size(static_cast<int64_t>(values.element_size()), [&](auto etag) {
    using E = decltype(etag);  // an integer of the element's size: E{} is every dtype's zero
    const E* src = static_cast<const E*>(values.data_ptr());
    E* dst = static_cast<E*>(out.data_ptr());
    write_chunks(ch, starts, [&](int64_t b, int64_t e, int64_t pos, int64_t) {
      for (int64_t i = b; i < e; ++i) dst[i] = m[i] ? src[pos++] : E{};
    });
  });
  return out;
}

void tril_kernel(char* dst, const char* src, int64_t batch, int64_t rows, int64_t cols, int64_t es, int64_t diagonal,
                 bool lower) {
  const int64_t total = batch * rows;
  if (total == 0 || cols == 0) return;
  parallel_for(0, total, std::max<int64_t>(1, kGrainBytes / (cols * es)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t i = r % rows;
      // kept columns [keep_begin, keep_end); tril keeps j <= i + diagonal, triu j >= i + diagonal
      const int64_t keep_begin = lower ? 0 : std::clamp<int64_t>(i + diagonal, 0, cols);
      const int64_t keep_end = lower ? std::clamp<int64_t>(i + diagonal + 1, 0, cols) : cols;
      char* d = dst + r * cols * es;
      const char* s = src + r * cols * es;
      std::memset(d, 0, static_cast<size_t>(keep_begin * es));
      if (src != dst && keep_end > keep_begin)
        std::memcpy(d + keep_begin * es, s + keep_begin * es, static_cast<size_t>((keep_end - keep_begin) * es));
      std::memset(d + keep_end * es, 0, static_cast<size_t>((cols - keep_end) * es));
    }
  });
}

}  // namespace ember::kernels
#endif  // HWY_ONCE
