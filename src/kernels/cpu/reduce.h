// Reduction and scan kernels. They know tensors and dtypes, never ops: argument checks, output
// allocation and dtype choice happen in src/ops/reduce.cpp. Outputs have the input's rank with
// size 1 at reduced dims (a keepdim view), in any strides.
#pragma once
#include <cstdint>

#include "ember/tensor.h"

namespace ember::kernels {

enum class ReduceKind : uint8_t { Sum, Prod, Max, Min, All, Any };

// Applied to each element before it is combined (`param` is the output's parameter).
enum class Transform : uint8_t {
  None,
  Abs,
  Square,
  AbsPow,            // |x|^p
  NonZero,           // x != 0 ? 1 : 0
  SquaredDeviation,  // (x - param)^2
  ExpShifted,        // exp(x - param)
};

// Applied to each accumulated value before it is stored.
enum class Finish : uint8_t {
  None,
  Divide,      // acc / divisor
  Sqrt,        // sqrt(acc)
  DivideSqrt,  // sqrt(acc / divisor)
  Root,        // acc^(1/p)
  LogAddParam  // log(acc) + param
};

struct ReduceSpec {
  ReduceKind kind = ReduceKind::Sum;
  Transform transform = Transform::None;
  Finish finish = Finish::None;
  double p = 2;        // AbsPow and Root
  double divisor = 1;  // Divide and DivideSqrt
  Tensor param;        // keepdim-shaped, contiguous, dtype of the input; only for float and double inputs
};

// Whether a floating reduction is compiled for every SIMD target (the common ones: sums, means,
// variances, logsumexp, products, max and min of float and double, and the plain forms of half
// and bfloat16) or for the static target alone, as integer reductions are: |x|^p is a scalar loop,
// and all/any, count_nonzero, the inf-norms and 16-bit norms are rare enough that a copy per
// target (about 10 KB each) is not worth its library size. `wide` is float or double.
constexpr bool reduce_per_target(bool wide, ReduceKind kind, Transform transform) {
  if (kind == ReduceKind::All || kind == ReduceKind::Any) return false;
  if (transform == Transform::AbsPow || transform == Transform::NonZero) return false;
  if ((kind == ReduceKind::Max || kind == ReduceKind::Min) && transform != Transform::None) return false;
  return wide || transform == Transform::None;
}

// Reduces `in` over the dims set in reduce_mask into `out`. Output dtypes: floating inputs keep
// their dtype (half and bfloat16 accumulate in float32); Sum/Prod of integers and bool give
// int64; Max/Min keep the dtype; All/Any give bool. Sums are pairwise (float32 error grows
// like log n). Empty reductions store the identity, finished.
void reduce_kernel(const Tensor& out, const Tensor& in, uint64_t reduce_mask, const ReduceSpec& spec);

// Max or min along `dim` with the index of its first occurrence; NaN is the extreme value.
// `values` (may be undefined, else in's dtype) and `indices` (int64) are keepdim-shaped.
void arg_reduce_kernel(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim, bool is_max);

// Running sum, product or log-sum-exp (float64 only) along `dim`; out has in's shape and dtype
// (float, double, half, bfloat16 or int64). Floats accumulate in double, int64 wraps.
enum class ScanOp : uint8_t { Sum, Prod, LogAddExp };
void cumulative_kernel(const Tensor& out, const Tensor& in, int64_t dim, ScanOp op);

}  // namespace ember::kernels
