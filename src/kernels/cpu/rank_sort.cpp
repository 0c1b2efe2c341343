// The stable order of a short line by rank: each element's place is the number of elements
// before it in the order (below it, or equal and earlier in the line), counted a SIMD vector of
// elements at a time against every element of the line. n^2 comparisons without a branch and
// without building position-carrying keys, so it beats a comparison sort on short lines only;
// sort_kernels.cpp calls it up to kRankSortMax elements.
// Also the selection of a few of several short lines at once (select_lanes).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/rank_sort.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include <algorithm>
#include <bit>
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
  if (n == 0) return;
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
  const auto one = hn::Set(dk, K{1});
  // Integer keys within 2^(bits - 1 - log2 n) of each other (labels, counts: most integer data)
  // are made distinct, less the least and shifted, the position below: a rank is then the count
  // of the keys below, one compare a pair and none for ties (32 keys in [-8, 8), Zen 5: 56 -> 46
  // ns). (Float lines seldom span so little: the range check made sorts of random floats up to 8% slower.)
  if constexpr (!std::is_floating_point_v<C>) {
    for (int64_t i = n; i < padded; ++i) key[i] = key[0];  // the padding within the line's range
    auto vlo = hn::Load(dk, key), vhi = vlo;
    for (int64_t i = N; i < padded; i += N) {
      const auto k = hn::Load(dk, key + i);
      vlo = hn::Min(vlo, k), vhi = hn::Max(vhi, k);
    }
    using U = std::make_unsigned_t<K>;
    const K lo = hn::GetLane(hn::MinOfLanes(dk, vlo)), hi = hn::GetLane(hn::MaxOfLanes(dk, vhi));
    const int pos_bits = std::bit_width(static_cast<uint64_t>(n - 1));
    if (static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo)) >> (sizeof(K) * 8 - 1 - pos_bits) == 0) {
      const auto least = hn::Set(dk, lo);
      for (int64_t i = 0; i < padded; i += N) {
        const auto k = hn::ShiftLeftSame(hn::Sub(hn::Load(dk, key + i), least), pos_bits);
        hn::Store(hn::Or(k, hn::Iota(dk, static_cast<K>(i))), dk, key + i);
      }
      for (int64_t i0 = 0; i0 < padded; i0 += N) {
        const auto xi = hn::Load(dk, key + i0);
        auto r = hn::Zero(dk), r1 = hn::Zero(dk);  // two chains of adds
        int64_t j = 0;
        for (; j + 2 <= n; j += 2) {
          r = hn::IfThenElse(hn::Lt(hn::Set(dk, key[j]), xi), hn::Add(r, one), r);
          r1 = hn::IfThenElse(hn::Lt(hn::Set(dk, key[j + 1]), xi), hn::Add(r1, one), r1);
        }
        if (j < n) r = hn::IfThenElse(hn::Lt(hn::Set(dk, key[j]), xi), hn::Add(r, one), r);
        hn::Store(hn::Add(r, r1), dk, rank + i0);
      }
      for (int64_t i = 0; i < n; ++i) idx[rank[i]] = i;
      return;
    }
  }
  for (int64_t i0 = 0; i0 < padded; i0 += N) {
    const auto xi = hn::Load(dk, key + i0);
    // before the block, equal elements come first: i0 less those above; after it, those below
    auto r = hn::Set(dk, static_cast<K>(i0));
#pragma GCC unroll 4
    for (int64_t j = 0; j < i0; ++j) r = hn::IfThenElse(hn::Gt(hn::Set(dk, key[j]), xi), hn::Sub(r, one), r);
    const auto lane = hn::Iota(dk, static_cast<K>(i0));
    for (int64_t j = i0; j < std::min(i0 + N, n); ++j) {
      const auto b = hn::Set(dk, key[j]);
      const auto earlier_equal = hn::And(hn::Eq(b, xi), hn::Lt(hn::Set(dk, static_cast<K>(j)), lane));
      r = hn::IfThenElse(hn::Or(hn::Lt(b, xi), earlier_equal), hn::Add(r, one), r);
    }
#pragma GCC unroll 4
    for (int64_t j = i0 + N; j < n; ++j) r = hn::IfThenElse(hn::Lt(hn::Set(dk, key[j]), xi), hn::Add(r, one), r);
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
// (Narrowed a vector at a time: one element at a time took a sixth of int64 sort's time at 32 x 32.)
void rank_sort_i64(const int64_t* x, int64_t n, bool descending, int64_t* idx) {
  const hn::ScalableTag<uint64_t> d;
  const hn::Rebind<uint32_t, decltype(d)> d32;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int32_t x32[kRankSortMax];
  auto outside = hn::Zero(d);  // x + 2^31 has bits above the low 32 where x is outside int32
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto v = hn::LoadU(d, reinterpret_cast<const uint64_t*>(x + i));
    outside = hn::Or(outside, hn::ShiftRight<32>(hn::Add(v, hn::Set(d, uint64_t{1} << 31))));
    hn::StoreU(hn::TruncateTo(d32, v), d32, reinterpret_cast<uint32_t*>(x32 + i));
  }
  bool narrow = hn::AllTrue(d, hn::Eq(outside, hn::Zero(d)));
  for (; i < n; ++i) {
    x32[i] = static_cast<int32_t>(x[i]);
    narrow &= x[i] == x32[i];
  }
  if (!narrow) return rank_sort_line(x, n, descending, idx);
  rank_sort_line(x32, n, descending, idx);
}

// Where unsigned 64-bit min and max are instructions (AVX-512), line c of a group sits in lane c:
// each element enters as (key << 32 | position) and passes down the K best so far, each slot
// keeping the smaller of itself and the element and handing on the larger. No branch, and ties
// keep line order because the later position is the larger key. (Topk 8 of 32 x 32 float32,
// Zen 5: 1.0 us against 2.5 with the per-line insertion pass. AVX2 has no such instructions and
// keeps the per-line pass.)
#if HWY_TARGET <= HWY_AVX3
template <int K>
bool select_lanes_k(const void* rows, int64_t row_stride, int64_t n, int64_t count, LaneKeys kind, bool descending,
                    uint64_t* best_out) {
  const hn::ScalableTag<uint64_t> d;
  const hn::ScalableTag<int64_t> dl;
  const hn::Rebind<uint32_t, decltype(d)> du;
  const hn::Rebind<int32_t, decltype(d)> di;
  const hn::Rebind<float, decltype(d)> df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto row_at = [&](int64_t r) { return static_cast<const char*>(rows) + r * row_stride; };
  // int64 lines: each value less its line's least (its greatest, descending), if they span < 2^32
  auto base = hn::Zero(dl);
  if (kind == LaneKeys::kInt64) {
    auto lo = hn::LoadU(dl, reinterpret_cast<const int64_t*>(row_at(0))), hi = lo;
    for (int64_t r = 1; r < n; ++r) {
      const auto x = hn::LoadU(dl, reinterpret_cast<const int64_t*>(row_at(r)));
      lo = hn::Min(lo, x), hi = hn::Max(hi, x);
    }
    const auto span = hn::Sub(hn::BitCast(d, hi), hn::BitCast(d, lo));
    if (!hn::AllTrue(d, hn::Eq(hn::ShiftRight<32>(span), hn::Zero(d)))) return false;
    base = descending ? hi : lo;
  }
  const auto flip = hn::Set(du, descending ? ~0u : 0u);
  // The slots are named locals, not an array: under the per-target compile GCC kept an array of
  // 512-bit vectors in memory (a load and a store per slot and element: topk 8 of 32 x 32 float32
  // took 1.3 us instead of 0.9).
  const auto top = hn::Set(d, ~uint64_t{0});  // above every element
  auto b0 = top, b1 = top, b2 = top, b3 = top, b4 = top, b5 = top, b6 = top, b7 = top;
  auto b8 = top, b9 = top, b10 = top, b11 = top, b12 = top, b13 = top, b14 = top, b15 = top;
  for (int64_t r = 0; r < n; ++r) {
    hn::Vec<decltype(d)> key64;
    if (kind == LaneKeys::kInt64) {
      const auto x = hn::LoadU(dl, reinterpret_cast<const int64_t*>(row_at(r)));
      key64 = hn::BitCast(d, descending ? hn::Sub(base, x) : hn::Sub(x, base));
    } else {
      const auto words = hn::LoadU(du, reinterpret_cast<const uint32_t*>(row_at(r)));
      auto key = words;
      if (kind == LaneKeys::kFloat) {
        const auto x = hn::Add(hn::BitCast(df, words), hn::Zero(df));  // -0 made 0
        const auto b = hn::BitCast(du, x);
        // negative floats' bits reversed, positive ones' sign bit set; NaN the largest
        key = hn::Xor(b, hn::Or(hn::BitCast(du, hn::ShiftRight<31>(hn::BitCast(di, b))), hn::Set(du, 0x80000000u)));
        key = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(x)), hn::Set(du, ~0u), key);
      } else if (kind == LaneKeys::kInt) {
        key = hn::Xor(words, hn::Set(du, 0x80000000u));
      }
      key64 = hn::PromoteTo(d, hn::Xor(key, flip));
    }
    auto v = hn::Or(hn::ShiftLeft<32>(key64), hn::Set(d, static_cast<uint64_t>(r)));
    const auto pass = [&v](auto& slot) {
      const auto lo = hn::Min(slot, v);
      v = hn::Max(slot, v);
      slot = lo;
    };
    pass(b0), pass(b1);
    if constexpr (K > 2) pass(b2), pass(b3);
    if constexpr (K > 4) pass(b4), pass(b5), pass(b6), pass(b7);
    if constexpr (K > 8) pass(b8), pass(b9), pass(b10), pass(b11), pass(b12), pass(b13), pass(b14), pass(b15);
  }
  int64_t j = 0;
  for (const auto& slot : {b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15}) {
    if (j < count) hn::StoreU(slot, d, best_out + (j++) * N);
  }
  return true;
}

int64_t select_lanes_width() {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<uint64_t>()));
  return lanes <= kSelectLanesWidthMax ? lanes : 0;
}
bool select_lanes(const void* rows, int64_t row_stride, int64_t n, int64_t count, LaneKeys kind, bool descending,
                  uint64_t* best) {
  const auto run = [&](auto k) {
    return select_lanes_k<decltype(k)::value>(rows, row_stride, n, count, kind, descending, best);
  };
  if (count <= 2) return run(std::integral_constant<int, 2>());
  if (count <= 4) return run(std::integral_constant<int, 4>());
  if (count <= 8) return run(std::integral_constant<int, 8>());
  return run(std::integral_constant<int, kSelectLanesMax>());
}
#else
int64_t select_lanes_width() { return 0; }
bool select_lanes(const void*, int64_t, int64_t, int64_t, LaneKeys, bool, uint64_t*) { return false; }
#endif

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {

HWY_EXPORT(rank_sort_f32);
HWY_EXPORT(rank_sort_f64);
HWY_EXPORT(rank_sort_i32);
HWY_EXPORT(rank_sort_i64);
HWY_EXPORT(select_lanes_width);
HWY_EXPORT(select_lanes);

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
int64_t select_lanes_width() { return HWY_DYNAMIC_DISPATCH(select_lanes_width)(); }
bool select_lanes(const void* rows, int64_t row_stride, int64_t n, int64_t count, LaneKeys kind, bool descending,
                  uint64_t* best) {
  return HWY_DYNAMIC_DISPATCH(select_lanes)(rows, row_stride, n, count, kind, descending, best);
}

}  // namespace ember::kernels
#endif  // HWY_ONCE
