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
template <class D>
HWY_INLINE hn::Vec<D> LoadC(D d, const Half* p) {
  const hn::Rebind<hwy::float16_t, D> dh;
  return hn::PromoteTo(d, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p)));
}
template <class D>
HWY_INLINE hn::Vec<D> LoadC(D d, const BFloat16* p) {
  const hn::Rebind<uint16_t, D> du16;
  const hn::Rebind<uint32_t, D> du32;
  const auto bits = hn::PromoteTo(du32, hn::LoadU(du16, reinterpret_cast<const uint16_t*>(p)));
  return hn::BitCast(d, hn::ShiftLeft<16>(bits));
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
  const hn::Rebind<hwy::float16_t, D> dh;
  hn::StoreU(hn::DemoteTo(dh, v), dh, reinterpret_cast<hwy::float16_t*>(p));
}
template <class D>
HWY_INLINE void StoreC(D d, hn::Vec<D> v, BFloat16* p) {
  // Round to nearest even (Highway 1.0's DemoteTo truncates); NaN stays a quiet NaN.
  const hn::RebindToUnsigned<D> du32;
  const hn::Rebind<int32_t, D> di32;
  const hn::Rebind<uint16_t, D> du16;
  const auto u = hn::BitCast(du32, v);
  const auto lsb = hn::And(hn::ShiftRight<16>(u), hn::Set(du32, 1u));
  auto r = hn::Add(u, hn::Add(hn::Set(du32, 0x7fffu), lsb));
  r = hn::IfThenElse(hn::RebindMask(du32, hn::IsNaN(v)), hn::Or(u, hn::Set(du32, 0x400000u)), r);
  const auto hi = hn::BitCast(di32, hn::ShiftRight<16>(r));
  hn::StoreU(hn::DemoteTo(du16, hi), du16, reinterpret_cast<uint16_t*>(p));
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

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_HWY_UTIL_INL_H_
