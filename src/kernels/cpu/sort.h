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

}  // namespace ember::kernels
