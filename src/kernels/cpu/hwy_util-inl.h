// Highway helpers shared by the kernel families, compiled once per SIMD target (Highway's
// "-inl.h" pattern: include it after hwy/highway.h inside a file using foreach_target.h).
//
// Storage types map to a compute vector: float -> f32, double -> f64, Half/BFloat16 -> f32
// (loaded with a widening conversion, stored with round-to-nearest-even). Kernels written
// against LoadC/StoreC therefore handle all four float dtypes with one body.

#if defined(EMBER_KERNELS_HWY_UTIL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_HWY_UTIL_INL_H_
#undef EMBER_KERNELS_HWY_UTIL_INL_H_
#else
#define EMBER_KERNELS_HWY_UTIL_INL_H_
#endif

#include <hwy/highway.h>

#include <type_traits>

#include "ember/dtype.h"

namespace ember::kernels {
// The CPU converts float32 to bfloat16 itself (AVX512-BF16's vcvtneps2bf16; oneDNN's view of
// the CPU, so ONEDNN_MAX_CPU_ISA below avx512_core_bf16 turns it off). Defined in
// core/cpu_capability.cpp; false until that file's initialization has run.
extern const bool g_native_bfloat16_store;
}  // namespace ember::kernels

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Compute lane type for a storage type.
template <class T> struct Lane { using type = T; };
template <> struct Lane<Half> { using type = float; };
template <> struct Lane<BFloat16> { using type = float; };
template <class T> using lane_t = typename Lane<T>::type;

// The descriptor of full compute vectors for storage type T.
template <class T> using DC = hn::ScalableTag<lane_t<T>>;

template <class D>
HWY_INLINE hn::Vec<D> LoadC(D d, const float* p) { return hn::LoadU(d, p); }
template <class D>
HWY_INLINE hn::Vec<D> LoadC(D d, const double* p) { return hn::LoadU(d, p); }
// float16 <-> float32. x86 targets from AVX2 on convert with F16C instructions. Below them Highway
// 1.0 emulates the conversions without infinities, NaN or rounding (half inf widens to 65536,
// 1e6 narrows to 62496), so those targets use these integer forms of Half::to_float/from_float.
constexpr bool kNativeF16 = HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL;

template <class D>  // D: f32 lanes; bits: the halves' bit patterns in u32 lanes
HWY_INLINE hn::Vec<D> HalfBitsToFloat(D d, hn::Vec<hn::RebindToUnsigned<D>> bits) {
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  const auto magnitude = hn::And(bits, hn::Set(du, 0x7fffu));
  const auto exp = hn::ShiftRight<10>(magnitude);
  const auto shifted = hn::ShiftLeft<13>(magnitude);
  const auto normal = hn::Add(shifted, hn::Set(du, (127u - 15u) << 23));
  const auto special = hn::Or(shifted, hn::Set(du, 0x7f800000u));  // inf and NaN keep their payload
  const auto subnormal = hn::BitCast(du, hn::Mul(hn::ConvertTo(d, hn::BitCast(di, magnitude)),
                                                 hn::Set(d, 5.9604644775390625e-08f)));  // 2^-24
  auto r = hn::IfThenElse(hn::Eq(exp, hn::Set(du, 31u)), special, normal);
  r = hn::IfThenElse(hn::Eq(exp, hn::Zero(du)), subnormal, r);
  return hn::BitCast(d, hn::Or(r, hn::ShiftLeft<16>(hn::And(bits, hn::Set(du, 0x8000u)))));
}

template <class D>  // the halves (round to nearest even) as u32 lanes
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> FloatToHalfBits(D d, hn::Vec<D> v) {
  const hn::RebindToUnsigned<D> du;
  const auto u = hn::BitCast(du, v);
  const auto sign = hn::And(hn::ShiftRight<16>(u), hn::Set(du, 0x8000u));
  const auto a = hn::And(u, hn::Set(du, 0x7fffffffu));
  const auto odd = hn::And(hn::ShiftRight<13>(a), hn::Set(du, 1u));
  auto r = hn::ShiftRight<13>(hn::Add(a, hn::Add(hn::Set(du, 0xc8000fffu), odd)));  // rebias, round
  // below 2^-14 the half is subnormal: adding 0.5 lets the float adder round at 2^-24
  const auto sub = hn::Sub(hn::BitCast(du, hn::Add(hn::BitCast(d, a), hn::Set(d, 0.5f))), hn::Set(du, 0x3f000000u));
  r = hn::IfThenElse(hn::Lt(a, hn::Set(du, 0x38800000u)), sub, r);
  r = hn::IfThenElse(hn::Gt(a, hn::Set(du, 0x477fefffu)), hn::Set(du, 0x7c00u), r);  // rounds to inf
  r = hn::IfThenElse(hn::Gt(a, hn::Set(du, 0x7f800000u)), hn::Set(du, 0x7e00u), r);  // NaN
  return hn::Or(r, sign);
}

template <class D>
HWY_INLINE hn::Vec<D> LoadC(D d, const Half* p) {
  if constexpr (kNativeF16) {
    const hn::Rebind<hwy::float16_t, D> dh;
    return hn::PromoteTo(d, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p)));
  } else {
    const hn::Rebind<uint16_t, D> du16;
    const hn::RebindToUnsigned<D> du32;
    return HalfBitsToFloat(d, hn::PromoteTo(du32, hn::LoadU(du16, reinterpret_cast<const uint16_t*>(p))));
  }
}
template <class D>
HWY_INLINE hn::Vec<D> LoadC(D d, const BFloat16* p) {
  const hn::Rebind<uint16_t, D> du16;
  const hn::Rebind<uint32_t, D> du32;
  const auto bits = hn::PromoteTo(du32, hn::LoadU(du16, reinterpret_cast<const uint16_t*>(p)));
  return hn::BitCast(d, hn::ShiftLeft<16>(bits));
}

// A full vector of T in the lanes it is computed in: the float dtypes through LoadC, integers as
// they are.
template <class D, class T>
HWY_INLINE hn::Vec<D> LoadAny(D d, const T* p) {
  if constexpr (std::is_integral_v<T>) {
    return hn::LoadU(d, p);
  } else {
    return LoadC(d, p);
  }
}

// Partial vectors for loop tails: the first n lanes (others are zero on load, untouched on store).
// AVX-512 masks every access (fault-free), AVX2 masks 32/64-bit lanes; elsewhere the tail goes
// through a buffer, since Highway's emulated masked loads read whole vectors.
constexpr bool kMaskedWide = HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX2;
constexpr bool kMaskedNarrow = HWY_TARGET == HWY_AVX3;

template <class D, class T>
HWY_INLINE hn::Vec<D> LoadCN(D d, const T* p, size_t n) {
  if constexpr (kMaskedWide && (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
    return hn::MaskedLoad(hn::FirstN(d, n), d, p);
  } else if constexpr (kMaskedNarrow && (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)) {
    const hn::Rebind<uint16_t, D> du16;
    const auto bits = hn::MaskedLoad(hn::FirstN(du16, n), du16, reinterpret_cast<const uint16_t*>(p));
    if constexpr (std::is_same_v<T, BFloat16>) {
      const hn::Rebind<uint32_t, D> du32;
      return hn::BitCast(d, hn::ShiftLeft<16>(hn::PromoteTo(du32, bits)));
    } else {
      const hn::Rebind<hwy::float16_t, D> dh;
      return hn::PromoteTo(d, hn::BitCast(dh, bits));
    }
  } else {
    HWY_ALIGN lane_t<T> buf[hn::MaxLanes(d)] = {};
    for (size_t i = 0; i < n; ++i) buf[i] = static_cast<lane_t<T>>(p[i]);
    return hn::Load(d, buf);
  }
}

template <class D>
HWY_INLINE void StoreC(D d, hn::Vec<D> v, float* p) { hn::StoreU(v, d, p); }
template <class D>
HWY_INLINE void StoreC(D d, hn::Vec<D> v, double* p) { hn::StoreU(v, d, p); }
template <class D>
HWY_INLINE void StoreC(D d, hn::Vec<D> v, Half* p) {
  if constexpr (kNativeF16) {
    const hn::Rebind<hwy::float16_t, D> dh;
    hn::StoreU(hn::DemoteTo(dh, v), dh, reinterpret_cast<hwy::float16_t*>(p));
  } else {
    const hn::Rebind<int32_t, D> di32;
    const hn::Rebind<uint16_t, D> du16;
    hn::StoreU(hn::DemoteTo(du16, hn::BitCast(di32, FloatToHalfBits(d, v))), du16, reinterpret_cast<uint16_t*>(p));
  }
}
// float32 rounded to nearest even bfloat16 (Highway 1.0's DemoteTo truncates), in the low 16 bits
// of each 32-bit lane; NaN stays a quiet NaN.
template <class D>
HWY_INLINE hn::Vec<hn::Rebind<int32_t, D>> BFloat16Bits(D d, hn::Vec<D> v) {
  const hn::RebindToUnsigned<D> du32;
  const hn::Rebind<int32_t, D> di32;
  const auto u = hn::BitCast(du32, v);
  const auto lsb = hn::And(hn::ShiftRight<16>(u), hn::Set(du32, 1u));
  auto r = hn::Add(u, hn::Add(hn::Set(du32, 0x7fffu), lsb));
  r = hn::IfThenElse(hn::RebindMask(du32, hn::IsNaN(v)), hn::Or(u, hn::Set(du32, 0x400000u)), r);
  (void)d;
  return hn::BitCast(di32, hn::ShiftRight<16>(r));
}
template <class D>
HWY_INLINE void StoreC(D d, hn::Vec<D> v, BFloat16* p) {
#if HWY_TARGET == HWY_AVX3
  if constexpr (sizeof(float) * hn::MaxLanes(d) == 64) {
    __m256i bits;
    // vcvtneps2bf16 rounds as BFloat16Bits does (to nearest even, NaN made quiet) but flushes
    // float32 subnormals to zero, so a vector holding one takes the integer form. (Highway 1.0's
    // AVX3 target does not enable the instruction set: inline assembly, behind the CPU check.)
    // exp, sigmoid and tanh in bfloat16 22-28% faster, gelu 18% (Zen 5).
    if (g_native_bfloat16_store && HWY_LIKELY(_mm512_fpclass_ps_mask(v.raw, 0x20) == 0)) {
      asm("vcvtneps2bf16 %1, %0" : "=v"(bits) : "v"(v.raw));
    } else {
      // the bits are in [0, 0xffff]: one truncating vpmovdw, where Highway's DemoteTo packs,
      // then permutes by an index vector it loads (abs and relu 10-13% faster, Zen 5)
      bits = _mm512_cvtepi32_epi16(BFloat16Bits(d, v).raw);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), bits);
    return;
  }
#endif
  const hn::Rebind<uint16_t, D> du16;
  hn::StoreU(hn::DemoteTo(du16, BFloat16Bits(d, v)), du16, reinterpret_cast<uint16_t*>(p));
}
// Two vectors to 2 * Lanes(d) bfloat16s at p: on AVX2 one pack and one permute for both (the
// demotion of each vector on its own packs and permutes half as much data).
template <class D>
HWY_INLINE void StoreC2(D d, hn::Vec<D> v0, hn::Vec<D> v1, BFloat16* p) {
#if HWY_TARGET == HWY_AVX2
  if constexpr (sizeof(float) * hn::MaxLanes(d) == 32) {
    const __m256i packed = _mm256_packus_epi32(BFloat16Bits(d, v0).raw, BFloat16Bits(d, v1).raw);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm256_permute4x64_epi64(packed, 0xd8));
    return;
  }
#endif
  StoreC(d, v0, p);
  StoreC(d, v1, p + hn::Lanes(d));
}
template <class D, class T>
HWY_INLINE void StoreCN(D d, hn::Vec<D> v, T* p, size_t n) {
  if constexpr (kMaskedWide && (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
    hn::BlendedStore(v, hn::FirstN(d, n), d, p);
  } else {
    HWY_ALIGN lane_t<T> buf[hn::MaxLanes(d)];
    hn::Store(v, d, buf);
    for (size_t i = 0; i < n; ++i) p[i] = T(buf[i]);
  }
}

// An 8 x 8 block of 4-byte words: row k of dst (dst + k * dst_stride bytes) = column k of src's
// rows (src + k * src_stride): pairs, then quads of words interleaved within 128-bit blocks, then
// the blocks exchanged.
HWY_INLINE void transpose8x8(const char* src, int64_t src_stride, char* dst, int64_t dst_stride) {
  const hn::FixedTag<uint32_t, 8> d;
  const hn::Repartition<uint64_t, decltype(d)> d64;
  using V = hn::Vec<decltype(d)>;
  V r[8], t[8], u[8];
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) r[k] = hn::LoadU(d, reinterpret_cast<const uint32_t*>(src + k * src_stride));
#pragma GCC unroll 4
  for (int k = 0; k < 8; k += 2) {
    t[k] = hn::InterleaveLower(d, r[k], r[k + 1]);      // (k, k+1) of columns 0 1 | 4 5
    t[k + 1] = hn::InterleaveUpper(d, r[k], r[k + 1]);  // columns 2 3 | 6 7
  }
#pragma GCC unroll 2
  for (int h = 0; h < 8; h += 4) {  // rows 0-3, then 4-7: u[h + c] holds column c | column c + 4
    const auto a = hn::BitCast(d64, t[h]), b = hn::BitCast(d64, t[h + 1]);
    const auto c = hn::BitCast(d64, t[h + 2]), e = hn::BitCast(d64, t[h + 3]);
    u[h + 0] = hn::BitCast(d, hn::InterleaveLower(d64, a, c));
    u[h + 1] = hn::BitCast(d, hn::InterleaveUpper(d64, a, c));
    u[h + 2] = hn::BitCast(d, hn::InterleaveLower(d64, b, e));
    u[h + 3] = hn::BitCast(d, hn::InterleaveUpper(d64, b, e));
  }
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    hn::StoreU(hn::ConcatLowerLower(d, u[4 + c], u[c]), d, reinterpret_cast<uint32_t*>(dst + c * dst_stride));
    hn::StoreU(hn::ConcatUpperUpper(d, u[4 + c], u[c]), d, reinterpret_cast<uint32_t*>(dst + (c + 4) * dst_stride));
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_HWY_UTIL_INL_H_
