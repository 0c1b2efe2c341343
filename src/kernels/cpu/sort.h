// Sorting and selection along one dim. Outputs have the input's rank; along `dim` they hold the
// selected elements (all of them for sort, k for topk, one for kthvalue) and their int64
// indices. NaN is ordered above every number, as in PyTorch.
#pragma once
#include <cstdint>

#include "ember/tensor.h"

namespace ember::kernels {

// Always stable: equal elements keep their input order (PyTorch's stable=true order).
void sort_kernel(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim, bool descending);
// The k largest (or smallest), in order; equal elements in input order.
void topk_kernel(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t k, int64_t dim, bool largest);
// The k-th smallest (1-based); among equal elements the one earlier in the input.
void kthvalue_kernel(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t k, int64_t dim);

// The stable order of a short line x[0, n), n <= kRankSortMax: idx[r] = the position of its r-th
// element, NaN above every number, -0 equal to 0, equal elements in line order; descending
// reverses the values' order only (rank_sort.cpp).
inline constexpr int64_t kRankSortMax = 64;
void rank_sort(const float* x, int64_t n, bool descending, int64_t* idx);
void rank_sort(const double* x, int64_t n, bool descending, int64_t* idx);
void rank_sort(const int32_t* x, int64_t n, bool descending, int64_t* idx);
void rank_sort(const int64_t* x, int64_t n, bool descending, int64_t* idx);

// The `count` (<= kSelectLanesMax) least of select_lanes_width() lines at once, each of n < 2^32
// elements: row r (at byte offset r * row_stride from rows) holds element r of each line, a
// float32, an int32, a 32-bit key in the wanted order (kKey) or an int64; descending picks the
// greatest. best[j * width + c] is line c's j-th as (key << 32 | position) (best holds
// kSelectLanesMax * width words: the rows after count are scratch), NaN above every number, -0
// equal to 0, equal elements in line order. False, with nothing chosen, where an int64 line's
// values span 2^32 or more (the keys are the values less the line's least). The width is 0 where
// a CPU has no fast path for it (rank_sort.cpp), else at most kSelectLanesWidthMax.
enum class LaneKeys { kFloat, kInt, kKey, kInt64 };
inline constexpr int64_t kSelectLanesMax = 16;
inline constexpr int64_t kSelectLanesWidthMax = 8;
int64_t select_lanes_width();
bool select_lanes(const void* rows, int64_t row_stride, int64_t n, int64_t count, LaneKeys kind, bool descending,
                  uint64_t* best);

}  // namespace ember::kernels
