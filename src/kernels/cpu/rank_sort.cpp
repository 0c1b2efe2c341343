// Sorting a short line of distinct 64-bit keys by rank: each key's place is the number of keys
// below it, counted a vector of keys at a time against every key of the line. n^2 comparisons
// without a branch, so it beats a comparison sort only on short lines; sort_kernels.cpp calls it
// up to kRankSortMax keys.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/rank_sort.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include <cstdint>
#include <limits>

#include "kernels/cpu/sort.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void rank_sort(uint64_t* keys, int64_t n) {
  const hn::ScalableTag<int64_t> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  // Four vectors of keys at a time share each broadcast key. The keys are compared as signed
  // (their top bit flipped: AVX2 has no unsigned 64-bit compare); the padding is the largest key,
  // which is below none.
  constexpr int64_t kMaxLanes = HWY_MAX_BYTES / sizeof(int64_t);
  HWY_ALIGN int64_t k[kRankSortMax + 4 * kMaxLanes];
  HWY_ALIGN int64_t rank[kRankSortMax + 4 * kMaxLanes];
  const int64_t padded = (n + 4 * N - 1) / (4 * N) * (4 * N);
  constexpr uint64_t kTop = uint64_t{1} << 63;
  for (int64_t i = 0; i < n; ++i) k[i] = static_cast<int64_t>(keys[i] ^ kTop);
  for (int64_t i = n; i < padded; ++i) k[i] = std::numeric_limits<int64_t>::max();
  for (int64_t i = 0; i < padded; i += 4 * N) {
    const auto x0 = hn::Load(d, k + i), x1 = hn::Load(d, k + i + N);
    const auto x2 = hn::Load(d, k + i + 2 * N), x3 = hn::Load(d, k + i + 3 * N);
    auto r0 = hn::Zero(d), r1 = hn::Zero(d), r2 = hn::Zero(d), r3 = hn::Zero(d);
    for (int64_t j = 0; j < n; ++j) {  // a true mask is -1
      const auto b = hn::Set(d, k[j]);
      r0 = hn::Sub(r0, hn::VecFromMask(d, hn::Lt(b, x0)));
      r1 = hn::Sub(r1, hn::VecFromMask(d, hn::Lt(b, x1)));
      r2 = hn::Sub(r2, hn::VecFromMask(d, hn::Lt(b, x2)));
      r3 = hn::Sub(r3, hn::VecFromMask(d, hn::Lt(b, x3)));
    }
    hn::Store(r0, d, rank + i);
    hn::Store(r1, d, rank + i + N);
    hn::Store(r2, d, rank + i + 2 * N);
    hn::Store(r3, d, rank + i + 3 * N);
  }
  for (int64_t i = 0; i < n; ++i) keys[rank[i]] = static_cast<uint64_t>(k[i]) ^ kTop;
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {

HWY_EXPORT(rank_sort);

void rank_sort(uint64_t* keys, int64_t n) { HWY_DYNAMIC_DISPATCH(rank_sort)(keys, n); }

}  // namespace ember::kernels
#endif  // HWY_ONCE
