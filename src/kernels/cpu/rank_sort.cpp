// The stable order of a short line by rank: each element's place is the number of elements
// before it in the order (below it, or equal and earlier in the line), counted a SIMD vector of
// elements at a time against every element of the line. n^2 comparisons without a branch and
// without building position-carrying keys, so it beats a comparison sort on short lines only;
// sort_kernels.cpp calls it up to kRankSortMax elements.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/rank_sort.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cpu/sort.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class C>
void rank_sort_line(const C* x, int64_t n, bool descending, int64_t* idx) {
  using K = std::conditional_t<sizeof(C) == 4, int32_t, int64_t>;  // signed keys in the line's order
  const hn::ScalableTag<K> dk;
  const hn::ScalableTag<C> dc;
  const int64_t N = static_cast<int64_t>(hn::Lanes(dk));
  constexpr int64_t kMaxLanes = HWY_MAX_BYTES / sizeof(K);
  HWY_ALIGN C val[kRankSortMax + kMaxLanes];
  HWY_ALIGN K key[kRankSortMax + kMaxLanes];
  HWY_ALIGN K rank[kRankSortMax + kMaxLanes];
  const int64_t padded = (n + N - 1) / N * N;  // the padding's ranks are computed and not used
  std::copy_n(x, n, val);
  std::fill(val + n, val + padded, C(0));
  for (int64_t i = 0; i < padded; i += N) {
    auto v = hn::Load(dc, val + i);
    if constexpr (std::is_floating_point_v<C>) v = hn::Add(v, hn::Zero(dc));  // -0 made 0
    auto k = hn::BitCast(dk, v);
    if constexpr (std::is_floating_point_v<C>) {
      // the bits as a signed integer in the values' order: negative floats' magnitude bits
      // reversed, NaN the largest
      k = hn::Xor(k, hn::And(hn::ShiftRight<sizeof(K) * 8 - 1>(k), hn::Set(dk, std::numeric_limits<K>::max())));
      k = hn::IfThenElse(hn::RebindMask(dk, hn::IsNaN(v)), hn::Set(dk, std::numeric_limits<K>::max()), k);
    }
    if (descending) k = hn::Not(k);  // (NaN first, as PyTorch's descending sort)
    hn::Store(k, dk, key + i);
  }
  for (int64_t i0 = 0; i0 < padded; i0 += N) {
    const auto xi = hn::Load(dk, key + i0);
    // before the block, equal elements come first: i0 less those above; after it, those below
    auto r = hn::Set(dk, static_cast<K>(i0));
    for (int64_t j = 0; j < i0; ++j) r = hn::Add(r, hn::VecFromMask(dk, hn::Gt(hn::Set(dk, key[j]), xi)));
    const auto lane = hn::Iota(dk, static_cast<K>(i0));
    for (int64_t j = i0; j < std::min(i0 + N, n); ++j) {
      const auto b = hn::Set(dk, key[j]);
      const auto earlier_equal = hn::And(hn::Eq(b, xi), hn::Lt(hn::Set(dk, static_cast<K>(j)), lane));
      r = hn::Sub(r, hn::VecFromMask(dk, hn::Or(hn::Lt(b, xi), earlier_equal)));
    }
    for (int64_t j = i0 + N; j < n; ++j) r = hn::Sub(r, hn::VecFromMask(dk, hn::Lt(hn::Set(dk, key[j]), xi)));
    hn::Store(r, dk, rank + i0);
  }
  for (int64_t i = 0; i < n; ++i) idx[rank[i]] = i;
}

void rank_sort_f32(const float* x, int64_t n, bool descending, int64_t* idx) { rank_sort_line(x, n, descending, idx); }
void rank_sort_f64(const double* x, int64_t n, bool descending, int64_t* idx) { rank_sort_line(x, n, descending, idx); }
void rank_sort_i32(const int32_t* x, int64_t n, bool descending, int64_t* idx) {
  rank_sort_line(x, n, descending, idx);
}
// int64 lines within int32's range (the usual ones) are ranked as int32, twice the lanes.
void rank_sort_i64(const int64_t* x, int64_t n, bool descending, int64_t* idx) {
  bool narrow = true;
  for (int64_t i = 0; i < n; ++i) narrow &= x[i] == static_cast<int32_t>(x[i]);
  if (!narrow) return rank_sort_line(x, n, descending, idx);
  int32_t x32[kRankSortMax];
  for (int64_t i = 0; i < n; ++i) x32[i] = static_cast<int32_t>(x[i]);
  rank_sort_line(x32, n, descending, idx);
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {

HWY_EXPORT(rank_sort_f32);
HWY_EXPORT(rank_sort_f64);
HWY_EXPORT(rank_sort_i32);
HWY_EXPORT(rank_sort_i64);

void rank_sort(const float* x, int64_t n, bool descending, int64_t* idx) {
  HWY_DYNAMIC_DISPATCH(rank_sort_f32)(x, n, descending, idx);
}
void rank_sort(const double* x, int64_t n, bool descending, int64_t* idx) {
  HWY_DYNAMIC_DISPATCH(rank_sort_f64)(x, n, descending, idx);
}
void rank_sort(const int32_t* x, int64_t n, bool descending, int64_t* idx) {
  HWY_DYNAMIC_DISPATCH(rank_sort_i32)(x, n, descending, idx);
}
void rank_sort(const int64_t* x, int64_t n, bool descending, int64_t* idx) {
  HWY_DYNAMIC_DISPATCH(rank_sort_i64)(x, n, descending, idx);
}

}  // namespace ember::kernels
#endif  // HWY_ONCE
