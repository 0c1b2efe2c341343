// Integer and bool halves of the pointwise kernels (pointwise_int.cpp); binary_kernel,
// unary_kernel and ternary_kernel send the other dtypes to their Highway float halves.
#pragma once
#include "kernels/cpu/pointwise.h"

namespace ember::kernels {
void binary_int_kernel(TensorIterator& iter, BinaryOp op, const Scalar& alpha);
void unary_int_kernel(TensorIterator& iter, UnaryOp op, const UnaryParams& params);
void ternary_int_kernel(TensorIterator& iter, TernaryOp op, const Scalar& value);
// out[i] = a[i] op b[i] on `rows` rows of m contiguous int32 or int64 elements (operand k: out, a,
// b; row r at data[k] + r * outer[k], outer read only when rows > 1), wrapping, on the SIMD target
// Highway chose (pointwise_int_wide.cpp); with `b_scalar`, b is one value a row (a Scalar, or a
// broadcast column).
enum class WideIntOp { Add, Sub, Mul, Min, Max, And, Or, Xor };
void wide_int_binary(WideIntOp op, bool int64, int64_t m, int64_t rows, char* const* data, const int64_t* outer,
                     bool b_scalar = false);
// copysign of float16/bfloat16 on their bits, |a| with b's sign bit: exact without the widening
// to float and the rounding back (copysign of bfloat16 2x slower than libtorch's that way)
void copysign_16bit_kernel(TensorIterator& iter);
}  // namespace ember::kernels
