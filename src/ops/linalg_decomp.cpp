// torch.linalg's factorizations and solvers on LAPACK: LU (getrf), triangular solves (trsm),
// Cholesky (potrf), QR (geqrf/orgqr), symmetric eigen (syevd), SVD (gesdd), least squares
// (gelsy/gelsd/gelss/gels). Each copies its batch to column-major buffers, runs one LAPACK call
// per matrix, and records one node whose backward (PyTorch's formulas, derived again here) is
// written with Ember ops so that it is itself differentiable.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "ember/aten_tail.h"
#include "ember/complex_ops.h"
#include "ember/indexing.h"
#include "ops/linalg_common.h"
#include "ops/linalg_lapack.h"
#include "ops/linalg_small.h"

namespace ember {

using namespace linalg_detail;

namespace {

int to_int(int64_t v) { return static_cast<int>(v); }

// The size a pivot search compares: |x| for reals, |re| + |im| for complex (LAPACK's i?amax).
template <class T>
T pivot_abs(T x) {
  return std::abs(x);
}
template <class T>
T pivot_abs(complex<T> x) {
  return std::abs(x.real()) + std::abs(x.imag());
}

template <class T>
struct IsComplex : std::false_type {};
template <class R>
struct IsComplex<complex<R>> : std::true_type {};

// The workspace size a LAPACK query returns (in a complex routine, the real part).
template <class T>
int work_size(T q) {
  return std::max(1, static_cast<int>(q));
}
template <class T>
int work_size(complex<T> q) {
  return std::max(1, static_cast<int>(q.real()));
}

Tensor info_tensor(IntArrayRef batch) { return zeros(batch, kInt); }

// ---- LU ------------------------------------------------------------------------------------------

// Unblocked LU with partial pivoting (the first largest |pivot|, as LAPACK's getf2), column-major
// m x n with leading dimension m; info is the first zero pivot (1-based), as LAPACK's. Dim is
// int64_t or a std::integral_constant (sizes known at compile time: the loops unroll).
template <class T, class Dim>
void small_getrf(Dim m, Dim n, T* a, int* ipiv, int* info) {
  *info = 0;
  const int64_t k = std::min<int64_t>(m, n);
  for (int64_t j = 0; j < k; ++j) {
    T* col = a + j * m;
    int64_t p = j;
    auto best = pivot_abs(col[j]);
    for (int64_t i = j + 1; i < m; ++i) {
      const auto v = pivot_abs(col[i]);
      if (v > best) {
        best = v;
        p = i;
      }
    }
    ipiv[j] = static_cast<int>(p + 1);
    if (col[p] != T(0)) {
      if (p != j)
        for (int64_t c = 0; c < n; ++c) std::swap(a[c * m + j], a[c * m + p]);
      const T inv = T(1) / col[j];
      for (int64_t i = j + 1; i < m; ++i) col[i] *= inv;
    } else if (*info == 0) {
      *info = static_cast<int>(j + 1);
    }
    for (int64_t c = j + 1; c < n; ++c) {
      T* dst = a + c * m;
      const T f = dst[j];
      for (int64_t i = j + 1; i < m; ++i) dst[i] -= col[i] * f;
    }
  }
}

// The fused one-pass paths below take sizes up to kUnrolled, known at compile time (the loops
// unroll); 5..kSmall go the general way, whose LU is small_getrf at run-time sizes (a compiled
// copy per size was 25-30 KB of library each).
constexpr int64_t kUnrolled = 4;
// Calls f(std::integral_constant<int64_t, n>{}) for 1 <= n <= kUnrolled.
template <class F>
void with_small_size(int64_t n, F&& f) {
  switch (n) {
    case 1: return f(std::integral_constant<int64_t, 1>{});
    case 2: return f(std::integral_constant<int64_t, 2>{});
    case 3: return f(std::integral_constant<int64_t, 3>{});
    default: return f(std::integral_constant<int64_t, 4>{});
  }
}

// Solves L U X = B in place for the k columns of x (n x k, leading dimension n), L unit lower
// and U upper packed in the n x n column-major `a` (row interchanges already applied to x).
template <class T, class Dim>
void small_lu_substitute(Dim n, int64_t k, const T* a, T* x) {
  for (int64_t c = 0; c < k; ++c) {
    T* xc = x + c * n;
    for (int64_t i = 0; i < n; ++i) {
      T v = xc[i];
      for (int64_t r = 0; r < i; ++r) v -= a[r * n + i] * xc[r];
      xc[i] = v;
    }
    for (int64_t i = n - 1; i >= 0; --i) {
      T v = xc[i];
      for (int64_t r = i + 1; r < n; ++r) v -= a[r * n + i] * xc[r];
      xc[i] = v / a[i * n + i];
    }
  }
}

// getrf on each matrix of a column-major buffer (..., n, m): returns pivots (..., min) and info.
std::pair<Tensor, Tensor> getrf_batch(Tensor& buf, int64_t m, int64_t n, IntArrayRef batch) {
  const int64_t k = std::min(m, n), nb = buf.numel() / std::max<int64_t>(1, m * n);
  Tensor piv = make_empty(concat(batch, {k}), kInt);
  Tensor info = info_tensor(batch);
  if (m == 0 || n == 0) return {piv, info};
  on_field(buf.dtype(), [&](auto z) {
    using T = decltype(z);
    T* a = buf.data_ptr<T>();
    int* p = piv.data_ptr<int>();
    int* inf = info.data_ptr<int>();
    if (m == n && n <= kUnrolled) {
      with_small_size(n, [&](auto N) {
        constexpr int64_t kN = decltype(N)::value;
        for_each_matrix(nb, kN * kN * kN,
                        [&](int64_t i) { small_getrf(N, N, a + i * kN * kN, p + i * kN, inf + i); });
      });
      return;
    }
    const bool small = m <= kSmall && n <= kSmall;
    for_each_matrix(nb, m * n * k, [&](int64_t i) {
      if (small) {
        small_getrf(m, n, a + i * m * n, p + i * k, inf + i);
      } else {
        lapack::getrf(to_int(m), to_int(n), a + i * m * n, to_int(m), p + i * k, inf + i);
      }
    });
  });
  return {piv, info};
}

// Row interchanges of LAPACK's pivots as a permutation matrix P with A = P L U, of A's dtype.
Tensor pivots_to_permutation(const Tensor& pivots, int64_t m, ScalarType dtype) {
  const Tensor piv = pivots.contiguous();
  const int64_t k = piv.dim() ? piv.size(-1) : 0;
  DimVector batch(piv.sizes());
  batch.pop_back();
  Tensor P = zeros(concat(batch, {m, m}), TensorOptions().dtype(dtype));
  const int64_t nb = P.numel() / std::max<int64_t>(1, m * m);
  const int* pp = piv.data_ptr<int>();
  std::vector<int64_t> perm(m);
  on_field(dtype, [&](auto z) {
    using T = decltype(z);
    T* out = P.data_ptr<T>();
    for (int64_t b = 0; b < nb; ++b) {
      for (int64_t i = 0; i < m; ++i) perm[i] = i;
      for (int64_t i = 0; i < k; ++i) std::swap(perm[i], perm[pp[b * k + i] - 1]);
      // A[perm[j]] is row j of L U, so P[perm[j], j] = 1
      for (int64_t j = 0; j < m; ++j) out[b * m * m + perm[j] * m + j] = T(1);
    }
  });
  return P;
}

// ---- triangular solve --------------------------------------------------------------------------

// X = A^{-1} B for triangular A (left side), no autograd; A and B batch-broadcast already.
Tensor trsm_left(const Tensor& A, const Tensor& B, bool upper, bool unit) {
  const int64_t n = A.size(-1), k = B.size(-1);
  // the direct path reads a row-major or column-major A as it lies (a copy was half its time)
  const bool small = n <= kSmall && !is_complex_type(A.dtype());
  const bool rowmajor = small && A.is_contiguous(), as_is = rowmajor || (small && A.mT().is_contiguous());
  Tensor a = as_is ? A : colmajor_copy(A), x = colmajor_copy(B);
  const int64_t nb = batch_count(B);
  if (n == 0 || k == 0) return x;
  on_field(A.dtype(), [&](auto z) {
    using T = decltype(z);
    const T* pa = a.data_ptr<T>();
    T* px = x.data_ptr<T>();
    if constexpr (!IsComplex<T>::value) {
      if (small) {
        const int64_t rs = rowmajor ? n : 1, cs = rowmajor ? 1 : n;
        for_each_matrix(nb, n * n * k,
                        [&](int64_t i) { small_trsm_left(upper, unit, n, k, pa + i * n * n, rs, cs, px + i * n * k); });
        return;
      }
    }
    for_each_matrix(nb, n * n * k, [&](int64_t i) {
      lapack::trsm('L', upper ? 'U' : 'L', 'N', unit ? 'U' : 'N', to_int(n), to_int(k), T(1), pa + i * n * n,
                   to_int(n), px + i * n * k, to_int(n));
    });
  });
  return x;
}

}  // namespace

Tensor linalg_solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular) {
  const char* op = "linalg.solve_triangular";
  check_floating_or_complex(op, A);
  check_square(op, A);
  check_matrix(op, B, "B");
  EMBER_CHECK(A.dtype() == B.dtype(), op, "Expected A and B to have the same dtype, but found A of type ", A.dtype(),
              " and B of type ", B.dtype(), " instead");
  // X A = B is A^T X^T = B^T
  if (!left) return linalg_solve_triangular(A.mT(), B.mT(), !upper, true, unitriangular).mT();
  EMBER_CHECK(A.size(-1) == B.size(-2), op, "Incompatible shapes of A and B for the equation AX = B (", A.size(-2),
              "x", A.size(-1), " and ", B.size(-2), "x", B.size(-1), ")");
  auto [Ab, Bb] = broadcast_batch(op, A, B);
  Tensor X;
  {
    AutoGradMode off(false);
    X = trsm_left(Ab, Bb, upper, unitriangular);
  }
  // LinalgSolveTriangularBackward0 -- A, B: gB = solve_triangular(A^H, gX, !upper), gA = -(gB X^H) on
  // A's triangle
  record(op, {A, B}, std::array{X}, [&](autograd::Derivative& d) {
    d.name("LinalgSolveTriangularBackward0");
    d.grad({A, B}, [a = d.save(A), x = d.save_result(0), upper, unitriangular, as = DimVector(A.sizes()),
                    bs = DimVector(B.sizes())](const autograd::BackwardContext& c) {
      const Tensor gB = linalg_solve_triangular(c[a].adjoint(), c.grad(), !upper, true, unitriangular);
      Tensor gA;
      if (c.needs(0)) {
        gA = -gB.matmul(c[x].adjoint());
        gA = upper ? gA.triu(unitriangular ? 1 : 0) : gA.tril(unitriangular ? -1 : 0);
      }
      return variable_list{reduce_to(gA, as), reduce_to(gB, bs)};
    });
  });
  return X;
}

// ---- LU factorization, det, slogdet, solve, inv -------------------------------------------------

std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor_ex(const Tensor& A, bool pivot, bool check_errors) {
  const char* op = "torch.linalg.lu_factor_ex";
  check_floating_or_complex(op, A);
  check_matrix(op, A);
  EMBER_CHECK(pivot, op, "LU without pivoting is not implemented on the CPU");
  const int64_t m = A.size(-2), n = A.size(-1);
  Tensor buf = colmajor_copy(A);
  Tensor piv, info;
  std::tie(piv, info) = getrf_batch(buf, m, n, batch_shape(A));
  if (check_errors) check_infos(op, info, A.dim() > 2, InfoKind::kLuFactor);
  Tensor LU = buf;
  // LinalgLuFactorExBackward0 -- A = P L U, k = min(m, n), gL/gU the strict lower/upper parts of gLU
  // (^H the conjugate transpose, ^T for real A). Square: P L^{-H} (tril(L^H gL, -1) + triu(gU U^H)) U^{-H}.
  // Wide (U = [U1 | U2], U1 k x k): P L^{-H} [(tril(L^H gL - gU2 U2^H, -1) + triu(gU1 U1^H)) U1^{-H} | gU2].
  // Tall (L = [L1; L2]): P [L1^{-H} (tril(L1^H gL1, -1) + triu(gU U^H - L2^H gL2)); gL2] U^{-H}.
  record(op, {A}, std::array{LU, piv, info}, [&](autograd::Derivative& d) {
    d.name("LinalgLuFactorExBackward0");
    d.grad(A, 0, [lu_ = d.save_result(0), p = d.save_result(1), m, n](const autograd::BackwardContext& c) {
      const Tensor lu = c[lu_];
      const int64_t k = std::min(m, n);
      const Tensor L = lu.narrow(-1, 0, k).tril(-1) + eye(m, k, TensorOptions().dtype(lu.dtype()));
      const Tensor U = lu.narrow(-2, 0, k).triu();
      const Tensor gL = c.grad().narrow(-1, 0, k).tril(-1), gU = c.grad().narrow(-2, 0, k).triu();
      Tensor y;
      if (m <= n) {
        const Tensor U1 = U.narrow(-1, 0, k), gU1 = gU.narrow(-1, 0, k);
        Tensor phi = L.adjoint().matmul(gL);
        if (n > k) phi = phi - gU.narrow(-1, k, n - k).matmul(U.narrow(-1, k, n - k).adjoint());
        phi = phi.tril(-1) + gU1.matmul(U1.adjoint()).triu();
        y = linalg_solve_triangular(U1.adjoint(), phi, /*upper=*/false, /*left=*/false);
        if (n > k) y = cat({y, gU.narrow(-1, k, n - k)}, -1);
        y = linalg_solve_triangular(L.adjoint(), y, /*upper=*/true, /*left=*/true, /*unitriangular=*/true);
      } else {
        const Tensor L1 = L.narrow(-2, 0, k), L2 = L.narrow(-2, k, m - k);
        const Tensor gL1 = gL.narrow(-2, 0, k), gL2 = gL.narrow(-2, k, m - k);
        const Tensor phi =
            L1.adjoint().matmul(gL1).tril(-1) + (gU.matmul(U.adjoint()) - L2.adjoint().matmul(gL2)).triu();
        y = linalg_solve_triangular(L1.adjoint(), phi, /*upper=*/true, /*left=*/true, /*unitriangular=*/true);
        y = linalg_solve_triangular(U.adjoint(), cat({y, gL2}, -2), /*upper=*/false, /*left=*/false);
      }
      return pivots_to_permutation(c[p], m, lu.dtype()).matmul(y);
    });
  });
  return {LU, piv, info};
}

std::tuple<Tensor, Tensor> linalg_lu_factor(const Tensor& A, bool pivot) {
  auto [LU, piv, info] = linalg_lu_factor_ex(A, pivot, false);
  check_infos("torch.linalg.lu_factor", info, A.dim() > 2, InfoKind::kLuFactor);
  return {LU, piv};
}

std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU, const Tensor& pivots, bool unpack_data,
                                             bool unpack_pivots) {
  const char* op = "torch.lu_unpack";
  check_matrix(op, LU, "LU_data");
  EMBER_CHECK(pivots.dtype() == kInt, op, "LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.");
  const int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n);
  Tensor P, L, U;
  if (unpack_data) {
    L = LU.narrow(-1, 0, k).tril(-1) + eye(m, k, TensorOptions().dtype(LU.dtype()));
    U = LU.narrow(-2, 0, k).triu();
  } else {
    L = empty({0}, TensorOptions().dtype(LU.dtype()));
    U = empty({0}, TensorOptions().dtype(LU.dtype()));
  }
  P = unpack_pivots ? pivots_to_permutation(pivots, m, LU.dtype()) : empty({0}, TensorOptions().dtype(LU.dtype()));
  return {P, L, U};
}

std::tuple<Tensor, Tensor, Tensor> linalg_lu(const Tensor& A, bool pivot) {
  const char* op = "linalg.lu";
  check_floating_or_complex(op, A);
  check_matrix(op, A);
  auto [LU, piv, info] = linalg_lu_factor_ex(A, pivot, false);
  return lu_unpack(LU, piv);
}

Tensor linalg_lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint) {
  const char* op = "linalg.lu_solve";
  check_floating_or_complex(op, LU);
  check_square(op, LU, "LU");
  check_matrix(op, B, "B");
  if (!left) return linalg_lu_solve(LU, pivots, B.adjoint(), true, !adjoint).adjoint();  // X A = B is A^H X^H = B^H
  EMBER_CHECK(LU.size(-1) == B.size(-2), op, "Incompatible shapes of A and B for the equation AX = B (",
              LU.size(-2), "x", LU.size(-1), " and ", B.size(-2), "x", B.size(-1), ")");
  auto [P, L, U] = lu_unpack(LU, pivots);
  // A = P L U: A X = B gives X = U^{-1} L^{-1} P^T B; A^H X = B gives X = P L^{-H} U^{-H} B
  if (!adjoint) {
    const Tensor y = linalg_solve_triangular(L, P.mT().matmul(B), false, true, true);
    return linalg_solve_triangular(U, y, true);
  }
  const Tensor y = linalg_solve_triangular(U.adjoint(), B, false);
  return P.matmul(linalg_solve_triangular(L.adjoint(), y, true, true, true));
}

namespace {

// Solves A X = B (A square, batch-broadcast with B) through LU; returns X and the info. A
// row-major (contiguous) A is factored as its transpose, which LAPACK reads without a copy that
// transposes, as PyTorch does (so `info` names the same pivot as PyTorch's): A^T = P L U gives
// X = P L^{-T} U^{-T} B.
std::pair<Tensor, Tensor> lu_solve_raw(const Tensor& A, const Tensor& B, bool identity = false) {
  const int64_t n = A.size(-1), k = identity ? n : B.size(-1);
  const bool transposed = A.is_contiguous();
  // Small row-major matrices are factored in a local copy by the pass that solves (no buffer and
  // pivot tensor, one pass over the batch); a conjugated view's raw data would be read unconjugated.
  const bool fused = transposed && !A.is_conj() && n >= 1 && n <= kUnrolled;
  // inv's right-hand side, the identity, is written directly (B unused)
  Tensor x = identity ? colmajor_empty(batch_shape(A), n, n, A.dtype()) : colmajor_copy(B);
  Tensor a, piv, info;
  if (fused) {
    info = info_tensor(batch_shape(A));
  } else {
    if (transposed) {
      a = make_empty(A.sizes(), A.dtype());
      a.copy_(A);
    } else {
      a = colmajor_copy(A);
    }
    std::tie(piv, info) = getrf_batch(a, n, n, batch_shape(A));
  }
  const int64_t nb = identity ? batch_count(A) : batch_count(B);
  if (n == 0 || k == 0) return {x, info};
  on_field(A.dtype(), [&](auto z) {
    using T = decltype(z);
    T* px = x.data_ptr<T>();
    // X for matrix i from its LU factors and pivots; the order n is an int64_t, or an
    // std::integral_constant for the fused small sizes (the loops unroll).
    const auto solve = [&](int64_t i, auto n, const T* lu, const int* pv) {
      T* xb = px + i * n * k;
      if (identity) {
        std::fill(xb, xb + n * n, T(0));
        for (int64_t d = 0; d < n; ++d) xb[d * n + d] = T(1);
      }
      const auto swap_rows = [&](int64_t r) {
        const int64_t q = pv[r] - 1;
        if (q != r)
          for (int64_t c = 0; c < k; ++c) std::swap(xb[c * n + r], xb[c * n + q]);
      };
      if (!transposed) {
        for (int64_t r = 0; r < n; ++r) swap_rows(r);  // P^T B, in LAPACK's order
        if (n <= kSmall) {
          small_lu_substitute(n, k, lu, xb);
          return;
        }
        lapack::trsm('L', 'L', 'N', 'U', to_int(n), to_int(k), T(1), lu, to_int(n), xb, to_int(n));
        lapack::trsm('L', 'U', 'N', 'N', to_int(n), to_int(k), T(1), lu, to_int(n), xb, to_int(n));
        return;
      }
      if (n <= kSmall) {
        for (int64_t c = 0; c < k; ++c) {
          T* xc = xb + c * n;
          for (int64_t r = 0; r < n; ++r) {  // U^T (lower, U(j, r) at lu[r * n + j]) w = b
            T v = xc[r];
            for (int64_t j = 0; j < r; ++j) v -= lu[r * n + j] * xc[j];
            xc[r] = v / lu[r * n + r];
          }
          for (int64_t r = n - 1; r >= 0; --r) {  // L^T (unit upper, L(j, r) at lu[r * n + j]) z = w
            T v = xc[r];
            for (int64_t j = r + 1; j < n; ++j) v -= lu[r * n + j] * xc[j];
            xc[r] = v;
          }
        }
      } else {
        lapack::trsm('L', 'U', 'T', 'N', to_int(n), to_int(k), T(1), lu, to_int(n), xb, to_int(n));
        lapack::trsm('L', 'L', 'T', 'U', to_int(n), to_int(k), T(1), lu, to_int(n), xb, to_int(n));
      }
      for (int64_t r = n - 1; r >= 0; --r) swap_rows(r);  // P z, the interchanges undone in reverse
    };
    if (fused) {
      const T* src = A.data_ptr<T>();
      int* inf = info.data_ptr<int>();
      with_small_size(n, [&](auto N) {
        constexpr int64_t kN = decltype(N)::value;
        for_each_matrix(nb, kN * kN * (kN + k), [&](int64_t i) {
          T lu[kN * kN];
          int pv[kN];
          std::copy_n(src + i * kN * kN, kN * kN, lu);
          small_getrf(N, N, lu, pv, inf + i);
          solve(i, N, lu, pv);
        });
      });
      return;
    }
    const T* pa = a.data_ptr<T>();
    const int* pp = piv.data_ptr<int>();
    for_each_matrix(nb, n * n * (n + k), [&](int64_t i) { solve(i, n, pa + i * n * n, pp + i * n); });
  });
  return {x, info};
}

// PyTorch's rule: B is a (batch of) vector(s) when it is 1-D, or has one dim less than A and
// A's leading shape.
bool is_vector_rhs(const Tensor& A, const Tensor& B) {
  if (B.dim() == 1) return true;
  if (B.dim() != A.dim() - 1) return false;
  return B.sizes().equals(IntArrayRef(A.sizes().data(), A.dim() - 1));
}

}  // namespace

std::tuple<Tensor, Tensor> linalg_solve_ex(const Tensor& A, const Tensor& B, bool left, bool check_errors) {
  const char* op = "linalg.solve";
  check_floating_or_complex(op, A);
  check_square(op, A);
  EMBER_CHECK(A.dtype() == B.dtype(), op, "Expected A and B to have the same dtype, but found A of type ", A.dtype(),
              " and B of type ", B.dtype(), " instead");
  const bool vector = is_vector_rhs(A, B);
  const Tensor Bm = vector ? B.unsqueeze(-1) : B;
  EMBER_CHECK(Bm.dim() >= 1, op, "The input tensor B must have at least 1 dimensions.");
  if (!left) {
    EMBER_CHECK(!vector, op, "Vector broadcasting of the left hand side is not supported for left=False. In this "
                "case linalg.solve is equivalent to B / A.squeeze(-1)");
    auto [X, info] = linalg_solve_ex(A.mT(), Bm.mT(), true, check_errors);
    return {X.mT(), info};
  }
  EMBER_CHECK(A.size(-1) == Bm.size(-2), op, "Incompatible shapes of A and B for the equation AX = B (", A.size(-2),
              "x", A.size(-1), " and ", Bm.size(-2), "x", Bm.size(-1), ")");
  auto [Ab, Bb] = broadcast_batch(op, A, Bm);
  Tensor X, info;
  {
    AutoGradMode off(false);
    std::tie(X, info) = lu_solve_raw(Ab, Bb);
  }
  if (check_errors) check_infos("torch.linalg.solve", info, A.dim() > 2, InfoKind::kSingularSolve);
  // LinalgSolveExBackward0 -- A, B: gB = solve(A^H, gX), gA = -gB X^H
  record(op, {A, Bm}, std::array{X, info}, [&](autograd::Derivative& d) {
    d.name("LinalgSolveExBackward0");
    d.grad({A, Bm}, [a = d.save(A), x = d.save_result(0), as = DimVector(A.sizes()),
                     bs = DimVector(Bm.sizes())](const autograd::BackwardContext& c) {
      const Tensor gB = linalg_solve(c[a].adjoint(), c.grad());
      return variable_list{c.needs(0) ? reduce_to(-gB.matmul(c[x].adjoint()), as) : Tensor(), reduce_to(gB, bs)};
    });
  });
  return {vector ? X.squeeze(-1) : X, info};
}

Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left) {
  auto [X, info] = linalg_solve_ex(A, B, left, false);
  check_infos("torch.linalg.solve", info, A.dim() > 2, InfoKind::kSingularSolve);
  return X;
}

std::tuple<Tensor, Tensor> linalg_inv_ex(const Tensor& A, bool check_errors) {
  const char* op = "linalg.inv";
  check_floating_or_complex(op, A);
  check_square(op, A);
  Tensor X, info;
  {
    AutoGradMode off(false);
    std::tie(X, info) = lu_solve_raw(A, Tensor(), /*identity=*/true);
  }
  if (check_errors) check_infos(op, info, A.dim() > 2, InfoKind::kSingularInverse);
  // LinalgInvExBackward0 -- A: -X^H gX X^H
  record(op, {A}, std::array{X, info}, [&](autograd::Derivative& d) {
    d.name("LinalgInvExBackward0");
    d.grad(A, 0, [x = d.save_result(0)](const autograd::BackwardContext& c) {
      const Tensor xt = c[x].adjoint();
      return -xt.matmul(c.grad()).matmul(xt);
    });
  });
  return {X, info};
}

Tensor linalg_inv(const Tensor& A) {
  auto [X, info] = linalg_inv_ex(A, false);
  check_infos("linalg.inv", info, A.dim() > 2, InfoKind::kSingularInverse);
  return X;
}

namespace {
template <class T>
struct RealOf {
  using type = T;
};
template <class R>
struct RealOf<complex<R>> {
  using type = R;
};

// det, or (sign, log|det|), of one n x n matrix from its LU factors `m` (either storage order:
// det(A^T) = det(A)) and LAPACK's pivots; for complex A the sign is det / |det| and log|det| real.
template <class T>
void det_from_lu(int64_t n, const T* m, const int* p, bool log, T* first, typename RealOf<T>::type* second) {
  T parity = T(1);  // (-1)^(row interchanges)
  for (int64_t i = 0; i < n; ++i)
    if (p[i] != i + 1) parity = -parity;
  if constexpr (IsComplex<T>::value) {
    using R = typename T::value_type;
    T prod = parity, sign = parity;
    R logabs = 0;
    for (int64_t i = 0; i < n; ++i) {
      const T d = m[i * n + i];
      prod *= d;
      const R ad = abs(d);
      logabs += std::log(ad);
      sign *= ad == R(0) ? T(0) : d / T(ad);
    }
    *first = log ? sign : prod;
    *second = logabs;
  } else {
    T sign = parity, logabs = 0, prod = parity;
    for (int64_t i = 0; i < n; ++i) {
      const T d = m[i * n + i];
      prod *= d;
      if (d < 0) sign = -sign;
      if (log) logabs += std::log(std::abs(d));
    }
    if (log) {
      const bool zero = !(logabs > -std::numeric_limits<T>::infinity()) && !std::isnan(logabs);
      *first = zero ? T(0) : sign;
      *second = logabs;
    } else {
      *first = prod;
    }
  }
}

// det and log|det| of each matrix from its LU factors, without autograd: (det, unused) or
// (sign, log|det|).
// det of kLanes small real matrices at once, each SIMD lane a matrix: small_getrf's pivoting and
// elimination step for step (the same pivots and operations), with the row swaps and the pivot
// choice as selects instead of branches, which random data mispredicted. Lanes past `count` hold
// the identity. (The library requires AVX2 at run time: check_cpu_supported.)
constexpr int64_t kLanes = 16;
template <class T, int64_t kN>
[[gnu::target("avx2,fma")]] void small_det_lanes(const T* src, int64_t count, bool log, T* first, T* second) {
  T a[kN * kN][kLanes];  // a[j * kN + i]: row i, column j of the matrix as it lies (column-major)
  int32_t piv[kN][kLanes];
  for (int64_t l = count; l < kLanes; ++l)
    for (int64_t e = 0; e < kN * kN; ++e) a[e][l] = T(e % (kN + 1) == 0);
  for (int64_t l = 0; l < count; ++l)
    for (int64_t e = 0; e < kN * kN; ++e) a[e][l] = src[l * kN * kN + e];
  for (int64_t j = 0; j < kN; ++j) {
    int32_t p[kLanes];
    T best[kLanes];
#pragma omp simd
    for (int64_t l = 0; l < kLanes; ++l) {
      p[l] = static_cast<int32_t>(j);
      best[l] = std::abs(a[j * kN + j][l]);
    }
    for (int64_t i = j + 1; i < kN; ++i) {
#pragma omp simd
      for (int64_t l = 0; l < kLanes; ++l) {
        const T v = std::abs(a[j * kN + i][l]);
        const bool larger = v > best[l];
        best[l] = larger ? v : best[l];
        p[l] = larger ? static_cast<int32_t>(i) : p[l];
      }
    }
    for (int64_t i = j + 1; i < kN; ++i) {
      for (int64_t c = 0; c < kN; ++c) {
#pragma omp simd
        for (int64_t l = 0; l < kLanes; ++l) {
          const bool swap = p[l] == i;
          const T x = a[c * kN + j][l], y = a[c * kN + i][l];
          a[c * kN + j][l] = swap ? y : x;
          a[c * kN + i][l] = swap ? x : y;
        }
      }
    }
    T inv[kLanes];
#pragma omp simd
    for (int64_t l = 0; l < kLanes; ++l) {
      piv[j][l] = p[l] + 1;
      const T d = a[j * kN + j][l];
      inv[l] = d != T(0) ? T(1) / d : T(1);  // a zero pivot: its column below is zero, left as it is
    }
    for (int64_t i = j + 1; i < kN; ++i) {
#pragma omp simd
      for (int64_t l = 0; l < kLanes; ++l) a[j * kN + i][l] *= inv[l];
    }
    for (int64_t c = j + 1; c < kN; ++c) {
      for (int64_t i = j + 1; i < kN; ++i) {
#pragma omp simd
        for (int64_t l = 0; l < kLanes; ++l) a[c * kN + i][l] -= a[j * kN + i][l] * a[c * kN + j][l];
      }
    }
  }
  if (!log) {  // det_from_lu's product, in its order, lane by lane
    T prod[kLanes];
#pragma omp simd
    for (int64_t l = 0; l < kLanes; ++l) {
      T parity = T(1);
      for (int64_t j = 0; j < kN; ++j) parity = piv[j][l] != j + 1 ? -parity : parity;
      prod[l] = parity;
      for (int64_t j = 0; j < kN; ++j) prod[l] *= a[j * kN + j][l];
    }
    std::copy_n(prod, count, first);
    return;
  }
  for (int64_t l = 0; l < count; ++l) {
    T m[kN * kN];
    int ipiv[kN];
    for (int64_t e = 0; e < kN * kN; ++e) m[e] = a[e][l];
    for (int64_t j = 0; j < kN; ++j) ipiv[j] = piv[j][l];
    det_from_lu(kN, m, ipiv, log, first + l, second + l);
  }
}

std::pair<Tensor, Tensor> det_parts(const Tensor& A, bool log) {
  const int64_t n = A.size(-1);
  const DimVector batch = batch_shape(A);
  const int64_t nb = batch_count(A);
  Tensor first = make_empty(batch, A.dtype()), second = make_empty(batch, to_real_value_type(A.dtype()));
  // Small row-major matrices: each factored in a local copy as it lies (det(A^T) = det(A)), in
  // one pass over the batch, without the buffer, pivot and info tensors of the general path (a
  // conjugated view goes the general way: its raw data is not its values).
  if (n >= 1 && n <= kUnrolled && A.is_contiguous() && !A.is_conj()) {
    on_field(A.dtype(), [&](auto z) {
      using T = decltype(z);
      const T* src = A.data_ptr<T>();
      T* f = first.template data_ptr<T>();
      auto* s = second.template data_ptr<typename RealOf<T>::type>();
      with_small_size(n, [&](auto N) {
        constexpr int64_t kN = decltype(N)::value;
        if constexpr (std::is_floating_point_v<T>) {
          for_each_matrix((nb + kLanes - 1) / kLanes, kLanes * kN * kN * kN, [&](int64_t g) {
            const int64_t b = g * kLanes;
            small_det_lanes<T, kN>(src + b * kN * kN, std::min(kLanes, nb - b), log, f + b, s + b);
          });
        } else {
          for_each_matrix(nb, kN * kN * kN, [&](int64_t b) {
            T a[kN * kN];
            int p[kN], info;
            std::copy_n(src + b * kN * kN, kN * kN, a);
            small_getrf(N, N, a, p, &info);
            det_from_lu(kN, a, p, log, f + b, s + b);
          });
        }
      });
    });
    return {first, second};
  }
  Tensor buf;
  if (A.is_contiguous()) {
    buf = make_empty(A.sizes(), A.dtype());
    buf.copy_(A);
  } else {
    buf = colmajor_copy(A);
  }
  auto [piv, info] = getrf_batch(buf, n, n, batch);
  on_field(A.dtype(), [&](auto z) {
    using T = decltype(z);
    const T* a = buf.data_ptr<T>();
    const int* p = piv.data_ptr<int>();
    T* f = first.template data_ptr<T>();
    auto* s = second.template data_ptr<typename RealOf<T>::type>();
    for (int64_t b = 0; b < nb; ++b) det_from_lu(n, a + b * n * n, p + b * n, log, f + b, s + b);
  });
  return {first, second};
}

// The transposed cofactor direction of det for singular matrices: d det / dA = adj(A)^T, from
// the SVD A = U S V^T: adj(A)^T = det(U) det(V) U diag(prod_{j != i} s_j) V^T.
Tensor det_grad_via_svd(const Tensor& A) {
  AutoGradMode off(false);
  auto [U, S, Vh] = linalg_svd(A, false);
  const int64_t n = A.size(-1);
  // (complex A: S is real, and det(U) det(Vh) has modulus 1; its conjugate gives the gradient)
  std::vector<Tensor> cols;
  for (int64_t i = 0; i < n; ++i) {
    Tensor others = S.clone();
    others.narrow(-1, i, 1).fill_(1);
    cols.push_back(others.prod(-1));
  }
  const Tensor c = n ? stack(cols, -1) : S;
  const Tensor du = linalg_det(U), dv = linalg_det(Vh);
  return (du * dv).conj().unsqueeze(-1).unsqueeze(-1) * (U * c.unsqueeze(-2)).matmul(Vh);
}
}  // namespace

Tensor linalg_det(const Tensor& A) {
  const char* op = "linalg.det";
  check_floating_or_complex(op, A);
  check_square(op, A);
  Tensor det;
  {
    AutoGradMode off(false);
    det = det_parts(A, false).first;
  }
  // LinalgDetBackward0 -- A: g conj(det) A^{-H} (the conjugated adjugate via the SVD where det is 0)
  record(op, {A}, std::array{det}, [&](autograd::Derivative& d) {
    d.name("LinalgDetBackward0");
    d.grad(A, [a_ = d.save(A), det_ = d.save_result(0)](const autograd::BackwardContext& c) {
      const Tensor a = c[a_], det = c[det_];
      bool singular;
      {
        AutoGradMode off(false);
        singular = det.numel() > 0 && det.eq(0).any().item<bool>();
      }
      if (singular) return c.grad().unsqueeze(-1).unsqueeze(-1) * det_grad_via_svd(a);
      return (c.grad() * det.conj()).unsqueeze(-1).unsqueeze(-1) * linalg_inv(a).adjoint();
    });
  });
  return det;
}

std::tuple<Tensor, Tensor> linalg_slogdet(const Tensor& A) {
  const char* op = "linalg.slogdet";
  check_floating_or_complex(op, A);
  check_square(op, A);
  Tensor sign, logabs;
  {
    AutoGradMode off(false);
    std::tie(sign, logabs) = det_parts(A, true);
  }
  // LinalgSlogdetBackward0 -- A: (g_logabsdet - i Im(conj(g_sign) sign)) A^{-H}; a real sign's
  // gradient adds nothing (its node is the same, as PyTorch's)
  const bool cplx = is_complex_type(A.dtype());
  record(op, {A}, std::array{sign, logabs}, [&](autograd::Derivative& d) {
    d.name("LinalgSlogdetBackward0");
    d.grad(A, [a = d.save(A), s = d.save_result(0), cplx](const autograd::BackwardContext& c) {
      const Tensor gs = cplx ? c.grad(0) : Tensor(), gl = c.grad(1);
      if (!gs.defined() && !gl.defined()) return Tensor();
      Tensor w;
      if (gs.defined()) {
        const Tensor im = imag(gs.conj() * c[s]);
        w = make_complex(zeros_like(im), -im);
        if (gl.defined()) w = w + gl;
      } else {
        w = gl;
      }
      return w.unsqueeze(-1).unsqueeze(-1) * linalg_inv(c[a]).adjoint();
    });
  });
  return {sign, logabs};
}

// ---- Cholesky --------------------------------------------------------------------------------------

namespace {
template <class T>
T conj_of(T x) {
  return x;
}
template <class R>
complex<R> conj_of(complex<R> x) {
  return conj(x);
}
template <class T>
T real_of(T x) {
  return x;
}
template <class R>
R real_of(complex<R> x) {
  return x.real();
}

// A = L L^H in place for a small row-major n x n matrix: its lower triangle is read and
// overwritten by L (the strict upper one left as it is), the values LAPACK's potrf gives; info is
// the order of the first leading minor that is not positive-definite, as LAPACK's.
template <class T, class Dim>
void small_potrf_lower(Dim n, T* a, int* info) {
  *info = 0;
  for (int64_t j = 0; j < n; ++j) {
    T* rj = a + j * n;
    auto d = real_of(rj[j]);
    for (int64_t p = 0; p < j; ++p) d -= real_of(rj[p] * conj_of(rj[p]));
    if (!(d > 0)) {
      *info = static_cast<int>(j + 1);
      return;
    }
    d = std::sqrt(d);
    rj[j] = T(d);
    for (int64_t i = j + 1; i < n; ++i) {
      T* ri = a + i * n;
      T v = ri[j];
      for (int64_t p = 0; p < j; ++p) v -= ri[p] * conj_of(rj[p]);
      ri[j] = v / T(d);
    }
  }
}

std::tuple<Tensor, Tensor> cholesky_lower(const char* op, const Tensor& A) {
  const int64_t n = A.size(-1);
  // A row-major copy: LAPACK reads it as A^T, whose upper triangle is A's lower one, and the U it
  // computes (A = U^T U), read back row-major, is L. No transposing copy either way.
  Tensor buf = make_empty(A.sizes(), A.dtype());
  buf.copy_(A);
  const DimVector batch = batch_shape(A);
  Tensor info = info_tensor(batch);
  const int64_t nb = batch_count(A);
  if (n > 0) {
    on_field(A.dtype(), [&](auto z) {
      using T = decltype(z);
      T* a = buf.data_ptr<T>();
      int* inf = info.data_ptr<int>();
      if (n <= kUnrolled) {
        with_small_size(n, [&](auto N) {
          constexpr int64_t kN = decltype(N)::value;
          for_each_matrix(nb, kN * kN * kN, [&](int64_t i) { small_potrf_lower(N, a + i * kN * kN, inf + i); });
        });
        return;
      }
      if (n <= kSmall) {
        for_each_matrix(nb, n * n * n, [&](int64_t i) { small_potrf_lower(n, a + i * n * n, inf + i); });
        return;
      }
      for_each_matrix(nb, n * n * n, [&](int64_t i) { lapack::potrf('U', to_int(n), a + i * n * n, to_int(n), inf + i); });
    });
  }
  return {buf.tril_(), info};
}
}  // namespace

std::tuple<Tensor, Tensor> linalg_cholesky_ex(const Tensor& A, bool upper, bool check_errors) {
  const char* op = "linalg.cholesky_ex";
  check_floating_or_complex(op, A);
  check_square(op, A);
  Tensor L, info;
  {
    AutoGradMode off(false);
    std::tie(L, info) = cholesky_lower(op, A);
  }
  if (check_errors) check_infos("linalg.cholesky", info, A.dim() > 2, InfoKind::kNotPositiveDefinite);
  // LinalgCholeskyExBackward0 -- A: L^{-H} Phi L^{-1}, Phi = (tril(X) + tril(X, -1)^H) / 2 with
  // X = L^H gL (for real A: the symmetric part of L^{-T} (tril(X, -1) + diag(X) / 2) L^{-1})
  record(op, {A}, std::array{L, info}, [&](autograd::Derivative& d) {
    d.name("LinalgCholeskyExBackward0");
    d.grad(A, 0, [l_ = d.save_result(0)](const autograd::BackwardContext& c) {
      const Tensor l = c[l_];
      const Tensor x = l.adjoint().matmul(c.grad());
      const Tensor phi = (x.tril() + x.tril(-1).adjoint()) * 0.5;
      const Tensor gA = linalg_solve_triangular(l.adjoint(), phi, /*upper=*/true);
      return linalg_solve_triangular(l, gA, /*upper=*/false, /*left=*/false);
    });
  });
  return {upper ? L.adjoint() : L, info};
}

Tensor linalg_cholesky(const Tensor& A, bool upper) {
  auto [L, info] = linalg_cholesky_ex(A, upper, false);
  check_infos("linalg.cholesky", info, A.dim() > 2, InfoKind::kNotPositiveDefinite);
  return L;
}

Tensor cholesky(const Tensor& A, bool upper) {
  auto [L, info] = linalg_cholesky_ex(A, upper, false);
  check_infos("cholesky", info, A.dim() > 2, InfoKind::kNotPositiveDefinite);
  return L;
}

// ---- QR ----------------------------------------------------------------------------------------------

namespace {
// geqrf on a column-major buffer; returns tau (..., min(m, n)).
Tensor geqrf_batch(Tensor& buf, int64_t m, int64_t n, IntArrayRef batch) {
  const int64_t k = std::min(m, n), nb = buf.numel() / std::max<int64_t>(1, m * n);
  Tensor tau = zeros(concat(batch, {k}), TensorOptions().dtype(buf.dtype()));
  if (k == 0) return tau;
  on_field(buf.dtype(), [&](auto z) {
    using T = decltype(z);
    T* a = buf.data_ptr<T>();
    T* t = tau.data_ptr<T>();
    if constexpr (!IsComplex<T>::value) {
      if (m <= kSmall && n <= kSmall) {
        for_each_matrix(nb, m * n * k, [&](int64_t i) { small_geqrf(m, n, a + i * m * n, t + i * k); });
        return;
      }
    }
    T query;
    int info;
    lapack::geqrf(to_int(m), to_int(n), a, to_int(m), t, &query, -1, &info);
    const int lwork = work_size(query);
    for_each_matrix(nb, m * n * k, [&](int64_t i) {
      std::vector<T> work(lwork);
      int inf;
      lapack::geqrf(to_int(m), to_int(n), a + i * m * n, to_int(m), t + i * k, work.data(), lwork, &inf);
    });
  });
  return tau;
}

// orgqr on a column-major buffer of (m x cols) matrices holding k reflectors.
void orgqr_batch(Tensor& q, int64_t m, int64_t cols, const Tensor& tau) {
  const int64_t k = tau.size(-1), nb = q.numel() / std::max<int64_t>(1, m * cols);
  if (m == 0 || cols == 0) return;
  on_field(q.dtype(), [&](auto z) {
    using T = decltype(z);
    T* a = q.data_ptr<T>();
    const Tensor tc = tau.contiguous();
    const T* t = tc.data_ptr<T>();
    if constexpr (!IsComplex<T>::value) {
      if (m <= kSmall && cols <= kSmall) {
        for_each_matrix(nb, m * cols * k, [&](int64_t i) { small_orgqr(m, cols, k, a + i * m * cols, t + i * k); });
        return;
      }
    }
    T query;
    int info;
    lapack::orgqr(to_int(m), to_int(cols), to_int(k), a, to_int(m), t, &query, -1, &info);
    const int lwork = work_size(query);
    for_each_matrix(nb, m * cols * k, [&](int64_t i) {
      std::vector<T> work(lwork);
      int inf;
      lapack::orgqr(to_int(m), to_int(cols), to_int(k), a + i * m * cols, to_int(m), t + i * k, work.data(), lwork,
                    &inf);
    });
  });
}

// Q and R of A = Q R for square or tall R (m >= n): gA = (gQ + Q N) R^{-H},
// N = triu(M, 1) + triu(M, 1)^H + Re(diag(M)), M = gR R^H - Q^H gQ (R's diagonal is real).
Tensor qr_backward_tall(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R) {
  Tensor M;
  if (gR.defined()) M = gR.matmul(R.adjoint());
  if (gQ.defined()) M = M.defined() ? M - Q.adjoint().matmul(gQ) : -Q.adjoint().matmul(gQ);
  const Tensor up = M.triu(1);
  Tensor N = up + up.adjoint();
  const Tensor d = M.diagonal(0, -2, -1);
  N = N + diag_embed(is_complex_type(M.dtype()) ? real(d).to(M.dtype()) : d);
  Tensor Z = Q.matmul(N);
  if (gQ.defined()) Z = Z + gQ;
  return linalg_solve_triangular(R.adjoint(), Z, /*upper=*/false, /*left=*/false);
}
}  // namespace

std::tuple<Tensor, Tensor> geqrf(const Tensor& A) {
  const char* op = "geqrf";
  check_floating_or_complex(op, A, "input");
  check_matrix(op, A, "input");
  EMBER_CHECK(!any_requires_grad({A}), op, "the derivative for 'geqrf' is not implemented.");
  Tensor buf = colmajor_copy(A);
  Tensor tau = geqrf_batch(buf, A.size(-2), A.size(-1), batch_shape(A));
  return {buf, tau};
}

std::tuple<Tensor, Tensor> linalg_qr(const Tensor& A, std::string_view mode) {
  const char* op = "linalg.qr";
  check_floating_or_complex(op, A);
  check_matrix(op, A);
  EMBER_CHECK(mode == "reduced" || mode == "complete" || mode == "r", op,
              "qr received unrecognized mode '", mode, "' but expected one of 'reduced' (default), 'r', or 'complete'");
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const DimVector batch = batch_shape(A);
  Tensor Q, R;
  {
    AutoGradMode off(false);
    Tensor buf = colmajor_copy(A);
    Tensor tau = geqrf_batch(buf, m, n, batch);
    const int64_t rrows = mode == "complete" ? m : k;
    R = buf.narrow(-2, 0, rrows).triu();
    R = R.contiguous();
    if (mode == "r") {
      Q = empty({0}, TensorOptions().dtype(A.dtype()));
    } else {
      const int64_t qcols = mode == "complete" ? m : k;
      Tensor qb;
      if (qcols <= n) {
        qb = colmajor_copy(buf.narrow(-1, 0, qcols));
      } else {
        qb = colmajor_empty(batch, m, qcols, A.dtype());
        qb.zero_();
        qb.narrow(-1, 0, n).copy_(buf);
      }
      orgqr_batch(qb, m, qcols, tau);
      Q = qb;
    }
  }
  const bool complete = mode == "complete";
  const bool r_only = mode == "r";
  // LinalgQrBackward0 -- for m >= n as qr_backward_tall; for m < n, A = Q [X | Y]:
  // Y's gradient is Q gR_Y and X's the square case with gQ + Y gR_Y^H
  record(op, {A}, std::array{Q, R}, [&](autograd::Derivative& d) {
    d.name("LinalgQrBackward0");
    d.grad(A, [q = d.save_result(0), r = d.save_result(1), m, n, complete, r_only](const autograd::BackwardContext& c) {
      EMBER_CHECK(!r_only, "linalg.qr_backward",
                  "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                  "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.");
      EMBER_CHECK(!(complete && m > n), "linalg.qr_backward",
                  "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.");
      const Tensor Q = c[q], R = c[r];
      const Tensor& gQ = c.grad(0);
      const Tensor& gR = c.grad(1);
      if (m >= n) return qr_backward_tall(gQ, gR, Q, R);
      const Tensor RX = R.narrow(-1, 0, m), RY = R.narrow(-1, m, n - m);
      const Tensor Y = Q.matmul(RY);  // A's last n - m columns
      Tensor gX_Q = gQ, gX_R = gR.defined() ? gR.narrow(-1, 0, m) : Tensor(), gY;
      if (gR.defined()) {
        const Tensor gRY = gR.narrow(-1, m, n - m);
        gX_Q = gQ.defined() ? gQ + Y.matmul(gRY.adjoint()) : Y.matmul(gRY.adjoint());
        gY = Q.matmul(gRY);
      } else {
        gY = zeros_like(Y);
      }
      return cat({qr_backward_tall(gX_Q, gX_R, Q, RX), gY}, -1);
    });
  });
  return {Q, R};
}

// ---- symmetric eigendecomposition ----------------------------------------------------------------

std::tuple<Tensor, Tensor> linalg_eigh(const Tensor& A, std::string_view UPLO) {
  const char* op = "linalg.eigh";
  check_floating_or_complex(op, A);
  check_square(op, A);
  EMBER_CHECK(UPLO == "L" || UPLO == "U" || UPLO == "l" || UPLO == "u", op,
              "Expected UPLO argument to be 'L' or 'U', but got ", UPLO);
  const char uplo = (UPLO == "U" || UPLO == "u") ? 'U' : 'L';
  const int64_t n = A.size(-1);
  const DimVector batch = batch_shape(A);
  Tensor buf = colmajor_copy(A);
  Tensor w = make_empty(concat(batch, {n}), to_real_value_type(A.dtype()));  // real for Hermitian A too
  Tensor info = info_tensor(batch);
  const int64_t nb = batch_count(A);
  if (n > 0) {
    on_field(A.dtype(), [&](auto z) {
      using T = decltype(z);
      T* a = buf.data_ptr<T>();
      int* pi = info.data_ptr<int>();
      const int ni = to_int(n);
      if constexpr (IsComplex<T>::value) {
        using R = typename T::value_type;
        R* pw = w.data_ptr<R>();
        T wq;
        R rq;
        int iq, inf;
        lapack::heevd('V', uplo, ni, a, ni, pw, &wq, -1, &rq, -1, &iq, -1, &inf);
        const int lwork = work_size(wq), lrwork = work_size(rq), liwork = std::max(1, iq);
        for_each_matrix(nb, n * n * n, [&](int64_t i) {
          std::vector<T> work(lwork);
          std::vector<R> rwork(lrwork);
          std::vector<int> iwork(liwork);
          lapack::heevd('V', uplo, ni, a + i * n * n, ni, pw + i * n, work.data(), lwork, rwork.data(), lrwork,
                        iwork.data(), liwork, pi + i);
        });
      } else {
        T* pw = w.data_ptr<T>();
        if (n <= kSmall) {
          for_each_matrix(nb, n * n * n, [&](int64_t i) { pi[i] = small_syev(uplo, n, a + i * n * n, pw + i * n); });
          return;
        }
        T wq;
        int iq, inf;
        lapack::syevd('V', uplo, ni, a, ni, pw, &wq, -1, &iq, -1, &inf);
        const int lwork = work_size(wq), liwork = std::max(1, iq);
        for_each_matrix(nb, n * n * n, [&](int64_t i) {
          std::vector<T> work(lwork);
          std::vector<int> iwork(liwork);
          lapack::syevd('V', uplo, ni, a + i * n * n, ni, pw + i * n, work.data(), lwork, iwork.data(), liwork,
                        pi + i);
        });
      }
    });
  }
  check_infos(op, info, A.dim() > 2, InfoKind::kEigConverge);
  Tensor V = buf;
  // LinalgEighBackward0 -- A: V (diag(gL) + F o skew(V^H gV)) V^H, F_ij = 1 / (L_j - L_i),
  // skew(X) = (X - X^H) / 2. Complex eigenvectors are defined up to a phase each: a loss that
  // depends on it (Im(diag(V^H gV)) != 0) is ill-defined.
  record(op, {A}, std::array{w, V}, [&](autograd::Derivative& d) {
    d.name("LinalgEighBackward0");
    d.grad(A, [l = d.save_result(0), v = d.save_result(1)](const autograd::BackwardContext& c) {
      const Tensor L = c[l], V = c[v];
      Tensor inner;
      if (c.grad(1).defined()) {
        Tensor VhgV = V.adjoint().matmul(c.grad(1));
        if (is_complex_type(VhgV.dtype())) {
          AutoGradMode off(false);
          const Tensor im = imag(VhgV.diagonal(0, -2, -1));
          EMBER_CHECK(allclose(im, zeros_like(im), 1e-2, 1e-2), "linalg_eigh_backward",
                      "The eigenvectors in the complex case are specified up to multiplication by e^{i phi}. The "
                      "specified loss function depends on this quantity, so it is ill-defined.");
        }
        VhgV = (VhgV - VhgV.adjoint()) * 0.5;
        Tensor E = L.unsqueeze(-2) - L.unsqueeze(-1);  // E_ij = L_j - L_i
        E.diagonal(0, -2, -1).fill_(1);
        inner = VhgV / E;
        inner.diagonal(0, -2, -1).zero_();
      }
      if (c.grad(0).defined()) {
        const Tensor D = diag_embed(c.grad(0)).to(V.dtype());
        inner = inner.defined() ? inner + D : D;
      }
      return V.matmul(inner).matmul(V.adjoint());
    });
  });
  return {w, V};
}

Tensor linalg_eigvalsh(const Tensor& A, std::string_view UPLO) { return std::get<0>(linalg_eigh(A, UPLO)); }

std::tuple<Tensor, Tensor> symeig(const Tensor& A, bool eigenvectors, bool upper) {
  auto [L, V] = linalg_eigh(A, upper ? "U" : "L");
  // without eigenvectors: an empty tensor (of A's shape when the matrices are 0 x 0, as PyTorch)
  if (!eigenvectors) return {L, empty(A.size(-1) == 0 ? A.sizes() : IntArrayRef{0}, TensorOptions().dtype(A.dtype()))};
  return {L, V};
}

// ---- SVD -------------------------------------------------------------------------------------------

namespace {
// gesdd: values only, reduced or full vectors.
std::tuple<Tensor, Tensor, Tensor> svd_raw(const char* op, const Tensor& A, bool full, bool vectors) {
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const DimVector batch = batch_shape(A);
  const ScalarType dt = A.dtype();
  const int64_t ucols = full ? m : k, vrows = full ? n : k;
  Tensor S = make_empty(concat(batch, {k}), to_real_value_type(dt));  // real for complex A too
  Tensor U = vectors ? colmajor_empty(batch, m, ucols, dt) : Tensor();
  Tensor Vt = vectors ? colmajor_empty(batch, vrows, n, dt) : Tensor();
  if (k == 0) {
    if (!vectors) return {U, S, Vt};
    // an empty matrix's full bases are identities
    Tensor u = colmajor_copy((full ? eye(m, TensorOptions().dtype(dt)) : zeros({m, 0}, TensorOptions().dtype(dt)))
                                 .expand(concat(batch, {m, ucols})));
    Tensor v = colmajor_copy((full ? eye(n, TensorOptions().dtype(dt)) : zeros({0, n}, TensorOptions().dtype(dt)))
                                 .expand(concat(batch, {vrows, n})));
    return {u, S, v};
  }
  Tensor buf = colmajor_copy(A);
  Tensor info = info_tensor(batch);
  const int64_t nb = batch_count(A);
  const char jobz = !vectors ? 'N' : (full ? 'A' : 'S');
  on_field(dt, [&](auto z) {
    using T = decltype(z);
    using R = decltype(pivot_abs(z));  // the real type of the singular values
    T* a = buf.data_ptr<T>();
    R* s = S.data_ptr<R>();
    T* u = vectors ? U.data_ptr<T>() : nullptr;
    T* vt = vectors ? Vt.data_ptr<T>() : nullptr;
    int* pi = info.data_ptr<int>();
    if constexpr (!IsComplex<T>::value) {
      if (m <= kSmall && n <= kSmall) {
        // the kernel wants p >= q: a wide A is done as A^T = V S U^T, its vectors swapped
        const bool tall = m >= n;
        for_each_matrix(nb, m * n * k, [&](int64_t i) {
          const MatrixOut<T> uo{vectors ? u + i * m * ucols : nullptr, 1, m}, vo{vectors ? vt + i * vrows * n : nullptr, vrows, 1};
          pi[i] = tall ? small_gesvd(m, n, a + i * m * n, 1, m, s + i * k, uo, ucols, vo)
                       : small_gesvd(n, m, a + i * m * n, m, 1, s + i * k, vo, vrows, uo);
        });
        return;
      }
    }
    const int ldu = to_int(m), ldvt = to_int(std::max<int64_t>(1, vrows));
    // complex gesdd's real workspace (LAPACK's bound for each jobz)
    const int64_t mn = k, mx = std::max(m, n);
    const int64_t lrwork = !IsComplex<T>::value ? 0
                           : !vectors           ? 7 * mn
                                                : std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn);
    const auto call = [&](T* ai, R* si, T* ui, T* vti, T* work, int lwork, R* rwork, int* iwork, int* inf) {
      if constexpr (IsComplex<T>::value) {
        lapack::gesdd(jobz, to_int(m), to_int(n), ai, to_int(m), si, ui, ldu, vti, ldvt, work, lwork, rwork, iwork,
                      inf);
      } else {
        (void)rwork;
        lapack::gesdd(jobz, to_int(m), to_int(n), ai, to_int(m), si, ui, ldu, vti, ldvt, work, lwork, iwork, inf);
      }
    };
    T dummy = T(0);
    T wq;
    std::vector<int> iq(8 * k);
    std::vector<R> rq(std::max<int64_t>(1, lrwork));
    int inf;
    call(a, s, vectors ? u : &dummy, vectors ? vt : &dummy, &wq, -1, rq.data(), iq.data(), &inf);
    const int lwork = work_size(wq);
    for_each_matrix(nb, m * n * k, [&](int64_t i) {
      std::vector<T> work(lwork);
      std::vector<int> iwork(8 * k);
      std::vector<R> rwork(std::max<int64_t>(1, lrwork));
      T du = T(0), dv = T(0);
      call(a + i * m * n, s + i * k, vectors ? u + i * m * ucols : &du, vectors ? vt + i * vrows * n : &dv,
           work.data(), lwork, rwork.data(), iwork.data(), pi + i);
    });
  });
  check_infos(op, info, A.dim() > 2, InfoKind::kSvdConverge);
  return {U, S, Vt};
}

// Gradient of A = U diag(S) Vh (reduced, k = min(m, n)): U [(F o skew(U^H gU)) S + diag(gS)
// + S (F o skew(V^H gV))] Vh + (I - U U^H) gU S^{-1} Vh + U S^{-1} gV^H (I - V V^H),
// F_ij = 1 / (s_j^2 - s_i^2), skew(X) = X - X^H. Complex singular vectors are defined up to a
// common phase per pair (u_i, v_i): the loss must not depend on it (Im(diag(U^H gU)) +
// Im(diag(V^H gV)) = 0), and the diagonal gains i Im(diag(U^H gU)) / S.
Tensor svd_backward(const Tensor& gU_in, const Tensor& gS, const Tensor& gVh_in, const Tensor& U_in,
                    const Tensor& S, const Tensor& Vh_in) {
  const int64_t m = U_in.size(-2), n = Vh_in.size(-1), k = S.size(-1);
  const Tensor U = U_in.narrow(-1, 0, k), Vh = Vh_in.narrow(-2, 0, k);
  const Tensor gU = gU_in.defined() ? gU_in.narrow(-1, 0, k) : Tensor();
  const Tensor gVh = gVh_in.defined() ? gVh_in.narrow(-2, 0, k) : Tensor();
  if (!gU.defined() && !gVh.defined()) {
    return gS.defined() ? (U * gS.unsqueeze(-2)).matmul(Vh) : Tensor();
  }
  const bool cplx = is_complex_type(U.dtype());
  const Tensor V = Vh.adjoint();
  Tensor s2 = S * S;
  // F_ij = 1 / (s_j^2 - s_i^2) off the diagonal, 0 on it: a mask rather than writing into the
  // reciprocal's result, which its own backward keeps (double backward)
  const Tensor I = eye(k, TensorOptions().dtype(S.dtype()));
  const Tensor F = (s2.unsqueeze(-2) - s2.unsqueeze(-1) + I).reciprocal() * (1 - I);
  Tensor inner = zeros(concat(batch_shape(U), {k, k}), TensorOptions().dtype(U.dtype()));
  if (gS.defined()) inner = inner + diag_embed(gS);
  Tensor UhgU, VhgV;
  if (gU.defined()) {
    UhgU = U.adjoint().matmul(gU);
    inner = inner + (F * (UhgU - UhgU.adjoint())) * S.unsqueeze(-2);
  }
  if (gVh.defined()) {
    VhgV = Vh.matmul(gVh.adjoint());  // V^H gV
    inner = inner + S.unsqueeze(-1) * (F * (VhgV - VhgV.adjoint()));
  }
  if (cplx) {
    AutoGradMode off(false);
    Tensor im = UhgU.defined() ? imag(UhgU.diagonal(0, -2, -1)) : zeros_like(S);
    if (VhgV.defined()) im = im + imag(VhgV.diagonal(0, -2, -1));
    EMBER_CHECK(allclose(im, zeros_like(im), 1e-2, 1e-2), "svd_backward",
                "The singular vectors in the complex case are specified up to multiplication by e^{i phi}. The "
                "specified loss function depends on this phase term, making it ill-defined.");
  }
  if (cplx && UhgU.defined() && VhgV.defined()) {
    const Tensor im = imag(UhgU.diagonal(0, -2, -1)) / S;
    inner = inner + diag_embed(make_complex(zeros_like(im), im));
  }
  Tensor gA = U.matmul(inner).matmul(Vh);
  if (gU.defined() && m > k) {
    const Tensor t = gU - U.matmul(UhgU);
    gA = gA + (t / S.unsqueeze(-2)).matmul(Vh);
  }
  if (gVh.defined() && n > k) {
    const Tensor t = gVh - gVh.matmul(V).matmul(Vh);  // gV^H (I - V V^H)
    gA = gA + U.matmul(t / S.unsqueeze(-1));
  }
  return gA;
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A, bool full_matrices,
                                              std::optional<std::string_view> driver) {
  const char* op = "linalg.svd";
  check_floating_or_complex(op, A);
  check_matrix(op, A);
  EMBER_CHECK(!driver, op, "keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.");
  Tensor U, S, Vh;
  {
    AutoGradMode off(false);
    std::tie(U, S, Vh) = svd_raw(op, A, full_matrices, true);
  }
  record(op, {A}, std::array{U, S, Vh}, [&](autograd::Derivative& d) {
    d.name("LinalgSvdBackward0");
    d.grad(A, [u = d.save_result(0), s = d.save_result(1), vh = d.save_result(2)](const autograd::BackwardContext& c) {
      return svd_backward(c.grad(0), c.grad(1), c.grad(2), c[u], c[s], c[vh]);
    });
  });
  return {U, S, Vh};
}

Tensor linalg_svdvals(const Tensor& A, std::optional<std::string_view> driver) {
  const char* op = "linalg.svdvals";
  check_floating_or_complex(op, A);
  check_matrix(op, A);
  EMBER_CHECK(!driver, op, "keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.");
  // with a graph, the vectors are needed for the gradient
  if (any_requires_grad({A})) return std::get<1>(linalg_svd(A, false));
  AutoGradMode off(false);
  return std::get<1>(svd_raw(op, A, false, false));
}

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool some, bool compute_uv) {
  if (!compute_uv) {
    const Tensor S = linalg_svdvals(A);
    const TensorOptions o = TensorOptions().dtype(A.dtype());
    const DimVector batch = batch_shape(A);
    return {zeros(concat(batch, {A.size(-2), A.size(-2)}), o), S, zeros(concat(batch, {A.size(-1), A.size(-1)}), o)};
  }
  auto [U, S, Vh] = linalg_svd(A, !some);
  return {U, S, Vh.adjoint()};
}

// ---- least squares ---------------------------------------------------------------------------------

std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_lstsq(const Tensor& A, const Tensor& B_in,
                                                        std::optional<double> rcond,
                                                        std::optional<std::string_view> driver_in) {
  const char* op = "torch.linalg.lstsq";
  check_floating_or_complex(op, A);
  check_matrix(op, A);
  EMBER_CHECK(A.dtype() == B_in.dtype(), op, "Expected input and other to have the same dtype, but got input's dtype ",
              A.dtype(), " and other's dtype ", B_in.dtype());
  const std::string driver(driver_in.value_or("gelsy"));
  EMBER_CHECK(driver == "gelsy" || driver == "gelsd" || driver == "gelss" || driver == "gels", op,
              "parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  const bool vector = B_in.dim() == A.dim() - 1;
  const Tensor B = vector ? B_in.unsqueeze(-1) : B_in;
  EMBER_CHECK(B.dim() >= 2, op, "input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1");
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  EMBER_CHECK(B.size(-2) == m, op, "input.size(-2) should match other.size(-2)");
  auto [Ab, Bb] = broadcast_batch(op, A, B);
  const int64_t nrhs = Bb.size(-1);
  const DimVector batch = batch_shape(Ab);
  const ScalarType dt = A.dtype(), real_dt = to_real_value_type(dt);  // rank's cutoff, S: real
  const double eps = real_dt == kDouble ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
  const double rc = rcond.value_or(eps * std::max(m, n));
  const int64_t ldb = std::max<int64_t>(1, std::max(m, n));
  Tensor sol, rank, sv, residuals;
  {
    AutoGradMode off(false);
    Tensor a = colmajor_copy(Ab);
    // B in an ldb-row column-major buffer (LAPACK returns the n-row solution in its top rows)
    Tensor b = zeros(concat(batch, {nrhs, ldb}), TensorOptions().dtype(dt));
    b.narrow(-1, 0, m).copy_(Bb.mT());
    const int64_t nb = batch_count(Ab);
    const bool want_rank = driver != "gels", want_sv = driver == "gelsd" || driver == "gelss";
    Tensor rk = zeros(batch, kLong);
    sv = want_sv ? zeros(concat(batch, {k}), TensorOptions().dtype(real_dt)) : empty({0}, TensorOptions().dtype(real_dt));
    Tensor info = info_tensor(batch);
    if (m > 0 && n > 0) {
      on_field(dt, [&](auto z) {
        using T = decltype(z);
        using R = decltype(pivot_abs(z));
        T* pa = a.data_ptr<T>();
        T* pb = b.data_ptr<T>();
        int64_t* pr = rk.data_ptr<int64_t>();
        R* ps = want_sv ? sv.data_ptr<R>() : nullptr;
        int* pi = info.data_ptr<int>();
        for (int64_t i = 0; i < nb; ++i) {
          T* ai = pa + i * m * n;
          T* bi = pb + i * nrhs * ldb;
          int r = 0, inf = 0;
          T wq = T(0);
          if (driver == "gelsy") {
            std::vector<int> jpvt(n, 0);
            lapack::gelsy(to_int(m), to_int(n), to_int(nrhs), ai, to_int(m), bi, to_int(ldb), jpvt.data(), R(rc), &r,
                          &wq, -1, &inf);
            std::vector<T> work(work_size(wq));
            lapack::gelsy(to_int(m), to_int(n), to_int(nrhs), ai, to_int(m), bi, to_int(ldb), jpvt.data(), R(rc), &r,
                          work.data(), static_cast<int>(work.size()), &inf);
          } else if (driver == "gelsd") {
            int iq = 0;
            lapack::gelsd(to_int(m), to_int(n), to_int(nrhs), ai, to_int(m), bi, to_int(ldb), ps + i * k, R(rc), &r,
                          &wq, -1, &iq, &inf);
            std::vector<T> work(work_size(wq));
            std::vector<int> iwork(std::max(1, iq));
            lapack::gelsd(to_int(m), to_int(n), to_int(nrhs), ai, to_int(m), bi, to_int(ldb), ps + i * k, R(rc), &r,
                          work.data(), static_cast<int>(work.size()), iwork.data(), &inf);
          } else if (driver == "gelss") {
            lapack::gelss(to_int(m), to_int(n), to_int(nrhs), ai, to_int(m), bi, to_int(ldb), ps + i * k, R(rc), &r,
                          &wq, -1, &inf);
            std::vector<T> work(work_size(wq));
            lapack::gelss(to_int(m), to_int(n), to_int(nrhs), ai, to_int(m), bi, to_int(ldb), ps + i * k, R(rc), &r,
                          work.data(), static_cast<int>(work.size()), &inf);
          } else {
            lapack::gels('N', to_int(m), to_int(n), to_int(nrhs), ai, to_int(m), bi, to_int(ldb), &wq, -1, &inf);
            std::vector<T> work(work_size(wq));
            lapack::gels('N', to_int(m), to_int(n), to_int(nrhs), ai, to_int(m), bi, to_int(ldb), work.data(),
                         static_cast<int>(work.size()), &inf);
          }
          pr[i] = r;
          pi[i] = inf;
        }
      });
    }
    check_infos(op, info, A.dim() > 2, driver == "gels" ? InfoKind::kLstsqRank : InfoKind::kSvdConverge);
    rank = want_rank ? rk : empty({0}, kLong);
    sol = b.narrow(-1, 0, n).mT();
    // residuals: squared norms of the rows below n that gels/gelsd/gelss leave, when m > n and
    // every matrix has full rank
    bool full_rank = true;
    if (want_rank && rk.numel() > 0) full_rank = rk.eq(n).all().item<bool>();
    if (m > n && driver != "gelsy" && full_rank) {
      residuals = b.narrow(-1, n, m - n).mT().abs().pow(2).sum({-2});
    } else {
      residuals = empty({0}, TensorOptions().dtype(real_dt));
    }
    sol = sol.contiguous();
  }
  if (any_requires_grad({A, B})) {
    // the solution is pinv(A) B; its gradient is that of the composition
    sol = linalg_pinv(Ab, std::optional<double>(), std::optional<double>(rc)).matmul(Bb);
  }
  if (vector) sol = sol.squeeze(-1);
  return {sol, residuals, rank, sv};
}

}  // namespace ember
