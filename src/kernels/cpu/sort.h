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

// Sorts keys[0, n) ascending, n <= kRankSortMax, the keys distinct (a short line's keys carry
// their positions): each key's place is the count of keys below it (rank_sort.cpp).
inline constexpr int64_t kRankSortMax = 64;
void rank_sort(uint64_t* keys, int64_t n);

}  // namespace ember::kernels
