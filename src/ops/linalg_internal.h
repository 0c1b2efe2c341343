// What the matrix-product ops share: argument checks worded as PyTorch's, and `product`, the
// single route from an op to the gemm kernel (result allocation, out= handling, the addend).
#pragma once
#include <utility>

#include "ember/linalg.h"
#include "ember/shape.h"

namespace ember::linalg {

// "expected scalar type Float but found Double" when b's dtype differs from a's.
void check_same_dtype(const char* op, const Tensor& a, const Tensor& b);
// Rejects dtypes PyTorch's CPU kernel `kernel` has no loop for ("\"bmm\" not implemented for 'Bool'").
void check_supported(const char* op, const char* kernel, ScalarType t);
// PyTorch's expand error when `self` does not broadcast to `sizes`.
void check_expandable(const char* op, const Tensor& self, IntArrayRef sizes);

struct Product {
  Product() = default;
  Product(Tensor a, Tensor b, IntArrayRef sizes, Tensor self = {}, Scalar beta = 1, Scalar alpha = 1)
      : a(std::move(a)), b(std::move(b)), sizes(sizes), self(std::move(self)), beta(beta), alpha(alpha) {}

  Tensor a, b;         // [M, K] and [K, N], or batched [B, M, K] and [B, K, N] (batch stride 0 broadcasts)
  DimVector sizes;     // the result's shape: B * M * N elements laid out contiguously
  Tensor self;         // optional addend, broadcastable to sizes, of the result dtype
  Scalar beta = 1;     // weight of self (0: self ignored, NaN included)
  Scalar alpha = 1;    // weight of a @ b
  bool transpose_b = false;  // b holds b^T (its last two dims are read swapped)
};

// Computes p into `out` (resized to p.sizes; its dtype must be the operands') or, when out is
// null, into a new contiguous tensor, which is returned.
Tensor product(const char* op, const Product& p, Tensor* out = nullptr);

}  // namespace ember::linalg
