// Copy with dtype conversion, and fill. Dense runs between float32, float16 and bfloat16 (the
// casts autocast makes), and from float32 to int32/int64, convert as SIMD code compiled for each
// target Highway selects at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/copy.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/cpu/cast.h"
#include "kernels/cpu/complex_kernels.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/hwy_util-inl.h"
#include "kernels/cpu/pointwise_loops.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace {

template <class To, class From>
void convert_typed(To* out, const From* in, int64_t n) {
  const DC<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  if constexpr (std::is_same_v<To, BFloat16>) {
    for (; i + 2 * N <= n; i += 2 * N) StoreC2(d, LoadC(d, in + i), LoadC(d, in + i + N), out + i);
  }
  for (; i + N <= n; i += N) StoreC(d, LoadC(d, in + i), out + i);
  for (; i < n; ++i) out[i] = cast<To>(in[i]);
}

// float32 to int32 or int64 with cast<>'s rule: truncation, and NaN or out of range give the
// minimum, which is what x86's truncating conversions return (Highway's ConvertTo saturates).
template <class To>
void float_to_int(To* out, const float* in, int64_t n) {
  int64_t i = 0;
#if HWY_TARGET == HWY_AVX3
  if constexpr (sizeof(To) == 4) {
    for (; i + 16 <= n; i += 16) _mm512_storeu_si512(out + i, _mm512_cvttps_epi32(_mm512_loadu_ps(in + i)));
  } else {
    for (; i + 8 <= n; i += 8) _mm512_storeu_si512(out + i, _mm512_cvttps_epi64(_mm256_loadu_ps(in + i)));
  }
#elif HWY_TARGET == HWY_AVX2
  if constexpr (sizeof(To) == 4) {
    for (; i + 8 <= n; i += 8) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_cvttps_epi32(_mm256_loadu_ps(in + i)));
    }
  } else {  // through int32, widened; a lane at int32's minimum may be out of its range
    for (; i + 4 <= n; i += 4) {
      const __m128i v = _mm_cvttps_epi32(_mm_loadu_ps(in + i));
      if (_mm_movemask_epi8(_mm_cmpeq_epi32(v, _mm_set1_epi32(std::numeric_limits<int32_t>::min()))) != 0) {
        for (int64_t k = i; k < i + 4; ++k) out[k] = cast<To>(in[k]);
        continue;
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_cvtepi32_epi64(v));
    }
  }
#endif
  for (; i < n; ++i) out[i] = cast<To>(in[i]);
}

// int32 to float32 or a 16-bit float as cast<> converts it (to float32, rounded to nearest, then
// to the 16-bit float), in one pass: through a float32 block, int32 to bfloat16 took 1.3-2x
// libtorch's time on AVX2.
template <class To>
void int_to_float(To* out, const int32_t* in, int64_t n) {
  const DC<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  if constexpr (std::is_same_v<To, BFloat16>) {
    for (; i + 2 * N <= n; i += 2 * N) {
      StoreC2(d, hn::ConvertTo(d, hn::LoadU(di, in + i)), hn::ConvertTo(d, hn::LoadU(di, in + i + N)), out + i);
    }
  }
  for (; i + N <= n; i += N) StoreC(d, hn::ConvertTo(d, hn::LoadU(di, in + i)), out + i);
  for (; i < n; ++i) out[i] = cast<To>(static_cast<float>(in[i]));
}

// n dense elements between float32, float16 and bfloat16 (to != from), from float32 to int32 or
// int64, or from int32 to the float dtypes.
void convert_span(ScalarType to, ScalarType from, void* out, const void* in, int64_t n) {
  if (to == kInt) return float_to_int(static_cast<int32_t*>(out), static_cast<const float*>(in), n);
  if (to == kLong) return float_to_int(static_cast<int64_t*>(out), static_cast<const float*>(in), n);
  if (from == kInt) {
    const auto* x = static_cast<const int32_t*>(in);
    if (to == kFloat) return int_to_float(static_cast<float*>(out), x, n);
    if (to == kHalf) return int_to_float(static_cast<Half*>(out), x, n);
    return int_to_float(static_cast<BFloat16*>(out), x, n);
  }
  const auto typed = [&](auto to_tag, auto from_tag) {
    using To = decltype(to_tag);
    using From = decltype(from_tag);
    convert_typed(static_cast<To*>(out), static_cast<const From*>(in), n);
  };
  const auto with_from = [&](auto to_tag) {
    switch (from) {
      case kFloat: return typed(to_tag, float{});
      case kHalf: return typed(to_tag, Half{});
      default: return typed(to_tag, BFloat16{});
    }
  };
  switch (to) {
    case kFloat: return with_from(float{});
    case kHalf: return with_from(Half{});
    default: return with_from(BFloat16{});
  }
}

}  // namespace

// An 8 x 8 block of 2-byte words (one 128-bit row each): pairs of rows interleaved, then pairs of
// pairs, then quads, so that row c of dst = column c of src.
HWY_INLINE void transpose8x8_u16(const char* src, int64_t src_stride, char* dst, int64_t dst_stride) {
  const hn::FixedTag<uint16_t, 8> d;
  const hn::Repartition<uint32_t, decltype(d)> d32;
  const hn::Repartition<uint64_t, decltype(d)> d64;
  using V = hn::Vec<decltype(d)>;
  V r[8], a[8], b[8];
  for (int k = 0; k < 8; ++k) r[k] = hn::LoadU(d, reinterpret_cast<const uint16_t*>(src + k * src_stride));
  for (int k = 0; k < 8; k += 2) {
    a[k] = hn::InterleaveLower(d, r[k], r[k + 1]);      // rows k, k+1 of columns 0-3
    a[k + 1] = hn::InterleaveUpper(d, r[k], r[k + 1]);  // of columns 4-7
  }
  for (int h = 0; h < 8; h += 4) {  // rows h..h+3: b[h + q] holds columns 2q, 2q+1
    const auto a0 = hn::BitCast(d32, a[h]), a1 = hn::BitCast(d32, a[h + 1]);
    const auto a2 = hn::BitCast(d32, a[h + 2]), a3 = hn::BitCast(d32, a[h + 3]);
    b[h + 0] = hn::BitCast(d, hn::InterleaveLower(d32, a0, a2));
    b[h + 1] = hn::BitCast(d, hn::InterleaveUpper(d32, a0, a2));
    b[h + 2] = hn::BitCast(d, hn::InterleaveLower(d32, a1, a3));
    b[h + 3] = hn::BitCast(d, hn::InterleaveUpper(d32, a1, a3));
  }
  for (int q = 0; q < 4; ++q) {  // rows 0-3 and 4-7 of columns 2q and 2q+1 joined
    const auto lo = hn::BitCast(d64, b[q]), hi = hn::BitCast(d64, b[4 + q]);
    hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, lo, hi)), d,
               reinterpret_cast<uint16_t*>(dst + 2 * q * dst_stride));
    hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, lo, hi)), d,
               reinterpret_cast<uint16_t*>(dst + (2 * q + 1) * dst_stride));
  }
}
// A 16 x 16 block of bytes (one 128-bit row each), in four rounds of interleaves as the 2-byte
// block's: a[p][h] holds columns 8h..8h+7 of rows 2p, 2p+1; b[q][g] columns 4g..4g+3 of rows
// 4q..4q+3; c[o][m] columns 2m, 2m+1 of rows 8o..8o+7; the last round joins the two halves of
// each column.
HWY_INLINE void transpose16x16_u8(const char* src, int64_t src_stride, char* dst, int64_t dst_stride) {
  const hn::FixedTag<uint8_t, 16> d;
  const hn::Repartition<uint16_t, decltype(d)> d16;
  const hn::Repartition<uint32_t, decltype(d)> d32;
  const hn::Repartition<uint64_t, decltype(d)> d64;
  using V = hn::Vec<decltype(d)>;
  V r[16], a[8][2], b[4][4], c[2][8];
  for (int k = 0; k < 16; ++k) r[k] = hn::LoadU(d, reinterpret_cast<const uint8_t*>(src + k * src_stride));
  for (int p = 0; p < 8; ++p) {
    a[p][0] = hn::InterleaveLower(d, r[2 * p], r[2 * p + 1]);
    a[p][1] = hn::InterleaveUpper(d, r[2 * p], r[2 * p + 1]);
  }
  for (int q = 0; q < 4; ++q) {
    for (int h = 0; h < 2; ++h) {
      const auto x = hn::BitCast(d16, a[2 * q][h]), y = hn::BitCast(d16, a[2 * q + 1][h]);
      b[q][2 * h] = hn::BitCast(d, hn::InterleaveLower(d16, x, y));
      b[q][2 * h + 1] = hn::BitCast(d, hn::InterleaveUpper(d16, x, y));
    }
  }
  for (int o = 0; o < 2; ++o) {
    for (int g = 0; g < 4; ++g) {
      const auto x = hn::BitCast(d32, b[2 * o][g]), y = hn::BitCast(d32, b[2 * o + 1][g]);
      c[o][2 * g] = hn::BitCast(d, hn::InterleaveLower(d32, x, y));
      c[o][2 * g + 1] = hn::BitCast(d, hn::InterleaveUpper(d32, x, y));
    }
  }
  for (int m = 0; m < 8; ++m) {
    const auto x = hn::BitCast(d64, c[0][m]), y = hn::BitCast(d64, c[1][m]);
    hn::StoreU(hn::BitCast(d, hn::InterleaveLower(d64, x, y)), d, reinterpret_cast<uint8_t*>(dst + 2 * m * dst_stride));
    hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(d64, x, y)), d,
               reinterpret_cast<uint8_t*>(dst + (2 * m + 1) * dst_stride));
  }
}
// A 4 x 4 block of 8-byte words (one 256-bit row each): pairs interleaved within 128-bit blocks,
// then the blocks exchanged.
HWY_INLINE void transpose4x4_u64(const char* src, int64_t src_stride, char* dst, int64_t dst_stride) {
  const hn::FixedTag<uint64_t, 4> d;
  using V = hn::Vec<decltype(d)>;
  V r[4];
  for (int k = 0; k < 4; ++k) r[k] = hn::LoadU(d, reinterpret_cast<const uint64_t*>(src + k * src_stride));
  const V t0 = hn::InterleaveLower(d, r[0], r[1]), t1 = hn::InterleaveUpper(d, r[0], r[1]);  // columns 0 | 2, 1 | 3
  const V t2 = hn::InterleaveLower(d, r[2], r[3]), t3 = hn::InterleaveUpper(d, r[2], r[3]);
  hn::StoreU(hn::ConcatLowerLower(d, t2, t0), d, reinterpret_cast<uint64_t*>(dst));
  hn::StoreU(hn::ConcatLowerLower(d, t3, t1), d, reinterpret_cast<uint64_t*>(dst + dst_stride));
  hn::StoreU(hn::ConcatUpperUpper(d, t2, t0), d, reinterpret_cast<uint64_t*>(dst + 2 * dst_stride));
  hn::StoreU(hn::ConcatUpperUpper(d, t3, t1), d, reinterpret_cast<uint64_t*>(dst + 3 * dst_stride));
}

// A transpose of W-byte words (see is_transpose in the HWY_ONCE part) in tiles of 32 x 32: whole
// B x B blocks in registers (`block`), the edges word by word.
template <int64_t W, int64_t B, class Block>
HWY_INLINE void transposed_blocks(char** data, const int64_t* strides, int64_t n, int64_t rows, const int64_t* outer,
                                  Block block) {
  constexpr int64_t kTile = 32;
  const int64_t so = strides[0], si = strides[1], oo = outer[0], oi = outer[1];
  // out rows (r) contiguous along i and in rows (i) along r, or the other way round
  const bool out_along_i = so == W && oi == W;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t r1 = std::min(rows, r0 + kTile);
    for (int64_t i0 = 0; i0 < n; i0 += kTile) {
      const int64_t i1 = std::min(n, i0 + kTile);
      const int64_t rb = r0 + (r1 - r0) / B * B, ib = i0 + (i1 - i0) / B * B;
      for (int64_t r = r0; r < rb; r += B) {
        for (int64_t i = i0; i < ib; i += B) {
          const char* in = data[1] + r * oi + i * si;
          char* out = data[0] + r * oo + i * so;
          if (out_along_i) {
            block(in, si, out, oo);
          } else {
            block(in, oi, out, so);
          }
        }
      }
      for (int64_t r = r0; r < r1; ++r) {  // the edges: columns past ib, and rows past rb
        for (int64_t i = r < rb ? ib : i0; i < i1; ++i) std::memcpy(data[0] + r * oo + i * so, data[1] + r * oi + i * si, W);
      }
    }
  }
}
void transposed_words1(char** data, const int64_t* strides, int64_t n, int64_t rows, const int64_t* outer) {
  transposed_blocks<1, 16>(data, strides, n, rows, outer, transpose16x16_u8);
}
void transposed_words2(char** data, const int64_t* strides, int64_t n, int64_t rows, const int64_t* outer) {
  transposed_blocks<2, 8>(data, strides, n, rows, outer, transpose8x8_u16);
}
void transposed_words4(char** data, const int64_t* strides, int64_t n, int64_t rows, const int64_t* outer) {
  transposed_blocks<4, 8>(data, strides, n, rows, outer, transpose8x8);
}
void transposed_words8(char** data, const int64_t* strides, int64_t n, int64_t rows, const int64_t* outer) {
  transposed_blocks<8, 4>(data, strides, n, rows, outer, transpose4x4_u64);
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(convert_span);
HWY_EXPORT(transposed_words1);
HWY_EXPORT(transposed_words2);
HWY_EXPORT(transposed_words4);
HWY_EXPORT(transposed_words8);

namespace {
template <class T>
constexpr bool is_simd_float = std::is_same_v<T, float> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// m <= 256 float32 values to an integer, bool or double dtype, as cast<> converts them: the
// 32-bit and 64-bit integers through the SIMD truncation, the narrower ones through the one
// cast<> takes (int32, or int64 for uint8) and then wrapped, as cast<> wraps them.
template <class To>
void from_float_block(To* o, const float* block, int64_t m) {
  if constexpr (std::is_same_v<To, int32_t> || std::is_same_v<To, int64_t>) {
    HWY_DYNAMIC_DISPATCH(convert_span)(CppTypeToScalarType<To>::value, kFloat, o, block, m);
  } else if constexpr (std::is_integral_v<To> && !std::is_same_v<To, bool>) {
    using Via = std::conditional_t<std::is_same_v<To, uint8_t>, int64_t, int32_t>;
    Via via[256];
    HWY_DYNAMIC_DISPATCH(convert_span)(CppTypeToScalarType<Via>::value, kFloat, via, block, m);
    for (int64_t i = 0; i < m; ++i) o[i] = static_cast<To>(via[i]);
  } else {
    for (int64_t i = 0; i < m; ++i) o[i] = cast<To>(block[i]);
  }
}

// n contiguous elements converted.
template <class To, class From>
void cast_span(char* out, const char* in, int64_t n) {
  if constexpr ((is_simd_float<To> && is_simd_float<From>) ||
                (std::is_same_v<From, float> && (std::is_same_v<To, int32_t> || std::is_same_v<To, int64_t>)) ||
                (std::is_same_v<From, int32_t> && is_simd_float<To>)) {
    HWY_DYNAMIC_DISPATCH(convert_span)(CppTypeToScalarType<To>::value, CppTypeToScalarType<From>::value, out, in, n);
  } else if constexpr ((std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>)&&!is_simd_float<From>) {
    // integers and doubles to a 16-bit float (exactly what cast<> does): to float32 in blocks, then
    // the SIMD rounding (element by element, double to float16 took 3.6x libtorch's time)
    constexpr int64_t kBlock = 256;
    float block[kBlock];
    const From* x = reinterpret_cast<const From*>(in);
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t m = std::min(kBlock, n - b);
      for (int64_t i = 0; i < m; ++i) block[i] = static_cast<float>(x[b + i]);
      HWY_DYNAMIC_DISPATCH(convert_span)(CppTypeToScalarType<To>::value, kFloat, out + b * int64_t{sizeof(To)}, block, m);
    }
  } else if constexpr (is_simd_float<From> && !is_simd_float<To>) {
    // float32 and 16-bit floats to integers, bool or double (cast<> goes through float32): the SIMD
    // widening in blocks, then float32's conversion (element by element, float16 to int32 took 11x
    // libtorch's time on a CPU whose baseline has no F16C, float32 to uint8 1.8x)
    constexpr int64_t kBlock = 256;
    float wide[kBlock];
    To* o = reinterpret_cast<To*>(out);
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t m = std::min(kBlock, n - b);
      if constexpr (std::is_same_v<From, float>) {
        from_float_block(o + b, reinterpret_cast<const float*>(in) + b, m);
      } else {
        HWY_DYNAMIC_DISPATCH(convert_span)
        (kFloat, CppTypeToScalarType<From>::value, wide, in + b * int64_t{sizeof(From)}, m);
        from_float_block(o + b, wide, m);
      }
    }
  } else {
    // bools read as their bytes (0 or 1): GCC vectorizes the widening of uint8_t, not of bool
    // (bool to int64 2.5x slower than libtorch)
    using Src = std::conditional_t<std::is_same_v<From, bool>, uint8_t, From>;
    To* o = reinterpret_cast<To*>(out);
    const Src* x = reinterpret_cast<const Src*>(in);
    for (int64_t i = 0; i < n; ++i) o[i] = cast<To>(x[i]);
  }
}
template <class To, class From>
void cast_loop(char** data, const int64_t* strides, int64_t n, int64_t rows, const int64_t* outer) {
  // strided or broadcast operands converted a contiguous chunk at a time (element by element, a
  // transposed bool to int64 ran 5x slower than libtorch), contiguous ones in place
  const size_t size[2] = {sizeof(To), sizeof(From)};
  contiguous_chunks(data, strides, n, rows, outer, size, 2,
                    [](const void*, char** p, int64_t m) { cast_span<To, From>(p[0], p[1], m); }, nullptr);
}
// n elements of es bytes between strided positions (a transpose's inner loop), moved as
// integers of that width rather than one memcpy call each.
template <class Word>
void strided_words(char** data, const int64_t* strides, int64_t n) {
  const int64_t so = strides[0], si = strides[1];
  for (int64_t i = 0; i < n; ++i) {
    Word w;
    std::memcpy(&w, data[1] + i * si, sizeof(Word));
    std::memcpy(data[0] + i * so, &w, sizeof(Word));
  }
}
// One element repeated along a contiguous run (a broadcast operand made contiguous): a loop the
// compiler turns into vector stores (word by word through strided_words, a column broadcast to
// 1024 x 1024 took 2.2x libtorch's time in float32, 3x in bfloat16).
template <class Word>
void repeated_words(char* out, const char* in, int64_t n) {
  Word w;
  std::memcpy(&w, in, sizeof(Word));
  for (int64_t i = 0; i < n; ++i) std::memcpy(out + i * int64_t{sizeof(Word)}, &w, sizeof(Word));
}
void strided_copy(int64_t es, char** data, const int64_t* strides, int64_t n) {
  if (strides[0] == es && strides[1] == 0) {
    switch (es) {
      case 1:
        std::memset(data[0], static_cast<unsigned char>(*data[1]), static_cast<size_t>(n));
        return;
      case 2:
        return repeated_words<uint16_t>(data[0], data[1], n);
      case 4:
        return repeated_words<uint32_t>(data[0], data[1], n);
      case 8:
        return repeated_words<uint64_t>(data[0], data[1], n);
      default:
        break;
    }
  }
  switch (es) {
    case 1: return strided_words<uint8_t>(data, strides, n);
    case 2: return strided_words<uint16_t>(data, strides, n);
    case 4: return strided_words<uint32_t>(data, strides, n);
    case 8: return strided_words<uint64_t>(data, strides, n);
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(data[0] + i * strides[0], data[1] + i * strides[1], es);
  }
}
// Bytes move in 16 x 16 blocks where the rows and their number are both 16 or more; else (few
// channels to channels_last: 8 x 3 x 224 x 224 uint8 670 us, 750 us as edges of blocks, 850 us
// row by row) byte by byte in tiles, which pays from rows of 256 on.
bool byte_blocks(int64_t n, int64_t rows) { return n >= 16 && rows >= 16; }
template <class Word>
void transposed_words(char** data, const int64_t* strides, int64_t n, int64_t rows, const int64_t* outer) {
  constexpr int64_t kTile = 32;
  const int64_t so = strides[0], si = strides[1], oo = outer[0], oi = outer[1];
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t r1 = std::min(rows, r0 + kTile);
    for (int64_t i0 = 0; i0 < n; i0 += kTile) {
      const int64_t i1 = std::min(n, i0 + kTile);
      for (int64_t r = r0; r < r1; ++r) {
        char* out = data[0] + r * oo;
        const char* in = data[1] + r * oi;
        for (int64_t i = i0; i < i1; ++i) {
          Word w;
          std::memcpy(&w, in + i * si, sizeof(Word));
          std::memcpy(out + i * so, &w, sizeof(Word));
        }
      }
    }
  }
}
// Whether the rows are a transpose of words of es bytes long enough to tile (see
// transposed_blocks). Row by row, each element of the strided side touched a new cache line,
// which the next rows had to find again; tiles reuse a tile's lines while they are in L1, and
// move whole blocks in registers: at every size measured they beat row by row from rows of 8
// words of 2, 4 and 8 bytes on (float32, 1 thread, Zen 5: 32 x 32 transposed 0.45 -> 0.18 us,
// 128 x 128 7.7 -> 1.5 us, 8 x 64 x 56 x 56 to channels_last 553 -> 173 us, 8 x 64 x 7 x 7 7.5 ->
// 2.4 us; bfloat16 alike), and bytes as byte_blocks says (bool 32 x 32 0.63 -> 0.35-0.39 us,
// 256 x 256 21-28 -> 3-5 us; 8 x 64 x 56 x 56 uint8 to channels_last 500 -> 77-130 us).
bool is_transpose(int64_t es, const int64_t* strides, int64_t n, int64_t rows, const int64_t* outer) {
  if (rows < 2 || (es == 1 ? !byte_blocks(n, rows) && n < 256 : n < 8) || (es != 1 && es != 2 && es != 4 && es != 8))
    return false;
  if (strides[0] == 0 || strides[1] == 0) return false;  // a broadcast: see repeated_words
  return (strides[0] == es && outer[1] == es && strides[1] != es) || (strides[1] == es && outer[0] == es && strides[0] != es);
}
}  // namespace

void transposed_copy(int64_t es, char** data, const int64_t* strides, int64_t n, int64_t rows, const int64_t* outer) {
  switch (es) {
    case 1:
      if (!byte_blocks(n, rows)) return transposed_words<uint8_t>(data, strides, n, rows, outer);
      return HWY_DYNAMIC_DISPATCH(transposed_words1)(data, strides, n, rows, outer);
    case 2:
      return HWY_DYNAMIC_DISPATCH(transposed_words2)(data, strides, n, rows, outer);
    case 4: return HWY_DYNAMIC_DISPATCH(transposed_words4)(data, strides, n, rows, outer);
    default:
      return HWY_DYNAMIC_DISPATCH(transposed_words8)(data, strides, n, rows, outer);
  }
}

void widen_to_float(ScalarType from, float* out, const void* in, int64_t n) {
  HWY_DYNAMIC_DISPATCH(convert_span)(kFloat, from, out, in, n);
}
void narrow_from_float(ScalarType to, void* out, const float* in, int64_t n) {
  HWY_DYNAMIC_DISPATCH(convert_span)(to, kFloat, out, in, n);
}

void copy_kernel(TensorIterator& iter) {
  const ScalarType to = iter.dtype(0), from = iter.dtype(1);
  if (is_complex_type(to) || is_complex_type(from)) {
    if (to != from || iter.is_conj(1)) return complex_copy_kernel(iter);
  }
  if (to == from) {
    const int64_t es = static_cast<int64_t>(element_size(to));
    iter.for_each([es](char** data, const int64_t* strides, int64_t n, int64_t rows, const int64_t* outer) {
      if (is_transpose(es, strides, n, rows, outer)) return transposed_copy(es, data, strides, n, rows, outer);
      char* ptrs[2] = {data[0], data[1]};
      for (int64_t r = 0;;) {
        if (strides[0] == es && strides[1] == es) {
          std::memcpy(ptrs[0], ptrs[1], static_cast<size_t>(n * es));
        } else {
          strided_copy(es, ptrs, strides, n);
        }
        if (++r == rows) break;
        ptrs[0] += outer[0], ptrs[1] += outer[1];
      }
    });
    return;
  }
  visit_dtype(to, [&](auto o) {
    visit_dtype(from, [&](auto i) {
      iter.for_each(cast_loop<decltype(o), decltype(i)>);
    });
  });
}

void fill_kernel(TensorIterator& iter, const Scalar& value) {
  if (is_complex_type(iter.dtype(0))) return complex_fill_kernel(iter, value);
  visit_dtype(iter.dtype(0), [&](auto tag) {
    using T = decltype(tag);
    const T v = value.to<T>();
    iter.for_each([v](char** data, const int64_t* strides, int64_t n) {
      if (strides[0] == sizeof(T)) {
        T* o = reinterpret_cast<T*>(data[0]);
        for (int64_t i = 0; i < n; ++i) o[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) std::memcpy(data[0] + i * strides[0], &v, sizeof(T));
      }
    });
  });
}

}  // namespace ember::kernels
#endif  // HWY_ONCE
