// The loops of the complex dtypes (complex64, complex128). Real kernels never see a complex
// operand: the real kernels' entry points (binary_kernel, unary_kernel, predicate_kernel,
// copy_kernel, fill_kernel) hand complex iterators to these. An input that is a conjugate view
// (iter.is_conj(arg)) is conjugated as it is loaded.
#pragma once
#include "core/tensor_iterator.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/pointwise.h"

namespace ember::kernels {

// Copy between any two dtypes, at least one complex (to real: the real part).
void complex_copy_kernel(TensorIterator& iter);
void complex_fill_kernel(TensorIterator& iter, const Scalar& value);
// Add, Sub (with alpha), Mul, Div, Pow; operands out, a, b of one complex dtype.
void complex_binary_kernel(TensorIterator& iter, BinaryOp op, const Scalar& alpha);
// Lerp (weight c), Addcmul and Addcdiv (value * b * c, value * b / c added to a); one complex dtype.
void complex_ternary_kernel(TensorIterator& iter, TernaryOp op, const Scalar& value);
// Whether complex_unary_kernel computes `op` (others raise PyTorch's errors in the ops).
bool complex_unary_supported(UnaryOp op);
// out = f(x) for the supported ops; Abs writes a real output (operands out real, x complex).
// PowScalar's exponent is params.a.
void complex_unary_kernel(TensorIterator& iter, UnaryOp op, const UnaryParams& params);
// Eq, Ne, IsNan, IsInf, IsFinite into a Bool output.
void complex_predicate_kernel(TensorIterator& iter, PredicateOp op);
// out (real) = atan2(imag, real) of x (complex).
void complex_angle_kernel(TensorIterator& iter);
// out (complex) = conj(x): conj_physical.
void complex_conj_kernel(TensorIterator& iter);
// out (complex) = re + i im, or polar: abs * (cos(angle) + i sin(angle)); inputs real of out's
// part dtype.
void complex_from_parts_kernel(TensorIterator& iter, bool polar);

// gemm's contract (gemm.h) for complex64/complex128 on OpenBLAS's cgemm/zgemm; conj_a and conj_b
// conjugate an operand as BLAS reads it (its conjugate-transpose and OpenBLAS's conjugate-no-
// transpose modes), so a conjugate view is never materialized. An operand whose strides BLAS
// cannot take is copied (conjugated as it is copied).
void complex_gemm(ScalarType dtype, const Matrices& out, const Matrices& a, bool conj_a, const Matrices& b,
                  bool conj_b, const GemmEpilogue& epilogue);

// out[r] = product of in's row r (in: contiguous complex, rows x n; out: rows elements, contiguous);
// cumulative: out[r, i] = product of in[r, 0..i] (out: rows x n, contiguous).
void complex_prod_rows(const Tensor& out, const Tensor& in, int64_t rows, int64_t n, bool cumulative);

}  // namespace ember::kernels
