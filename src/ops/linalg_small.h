// Direct kernels for real matrices up to kSmall x kSmall (the 3x3 and 4x4 of geometry code), where
// a LAPACK call's overhead is most of the work: QR by Householder reflectors as LAPACK's
// geqr2/org2r, triangular solves by substitution, symmetric eigen by cyclic Jacobi, SVD by
// one-sided Jacobi. Matrices are column-major with leading dimension = their row count, as the
// buffers of linalg_decomp.cpp; instantiated for float and double.
#pragma once
#include <cstdint>

namespace ember::linalg_detail {

// Matrices up to this order take a direct path instead of a LAPACK call per matrix.
constexpr int64_t kSmall = 8;

// A = Q R in place (m x n): R in the upper triangle, reflectors below it with scalars tau
// (min(m, n)), the same values as LAPACK's geqrf.
template <class T>
void small_geqrf(int64_t m, int64_t n, T* a, T* tau);
// The first `cols` columns of Q = H(0) ... H(k-1) in place from k reflectors (LAPACK's orgqr).
template <class T>
void small_orgqr(int64_t m, int64_t cols, int64_t k, T* a, const T* tau);
// X = A^{-1} X for triangular n x n A, element (i, j) at a[i * rs + j * cs], and n x k X
// (LAPACK's trsm with side 'L').
template <class T>
void small_trsm_left(bool upper, bool unit, int64_t n, int64_t k, const T* a, int64_t rs, int64_t cs, T* x);
// Eigenvalues (ascending) into w and orthonormal eigenvectors over `a` of the symmetric n x n
// matrix whose lower (uplo 'L') or upper triangle `a` holds. Each eigenvector's component of
// largest magnitude (the first of equals) is positive. Returns 0, or 1 when the input is not
// finite (the results are then NaN).
template <class T>
int small_syev(char uplo, int64_t n, T* a, T* w);
// Where a matrix is written: element (i, j) at p[i * rs + j * cs].
template <class T>
struct MatrixOut {
  T* p;
  int64_t rs, cs;
};
// Singular values (descending) of the p x q matrix (p >= q) read at a[i * rs + j * cs]; when
// u.p is not null, also the p x ucols left vectors (ucols = q, or p for the full basis) and the
// q x q right ones (V, not V^T). Returns 0, or -4 when the input is not finite (gesdd's "argument
// 4 has an illegal value", which is what LAPACK returns for it).
template <class T>
int small_gesvd(int64_t p, int64_t q, const T* a, int64_t rs, int64_t cs, T* s, MatrixOut<T> u, int64_t ucols,
                MatrixOut<T> v);

}  // namespace ember::linalg_detail
