// Small-matrix kernels (see linalg_small.h). Sizes are run-time values: a compiled copy per
// order would cost library size for a call overhead these loops do not have anyway.
#include "ops/linalg_small.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace ember::linalg_detail {

namespace {

// The running max(|x|) of a matrix that stays NaN once it meets one (std::max drops NaN).
template <class T>
T abs_max(T m, T x) {
  const T a = std::abs(x);
  return a > m || std::isnan(a) ? a : m;
}

// 2-norm of n values at stride `inc`: the plain sum of squares when it neither overflows nor
// loses digits to underflow, else scaled (as LAPACK's nrm2) so that it does neither.
template <class T>
T norm2(int64_t n, const T* x, int64_t inc) {
  T sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i * inc] * x[i * inc];
  using L = std::numeric_limits<T>;
  if (sum >= L::min() / L::epsilon() && sum <= L::max()) return std::sqrt(sum);
  T big = 0;
  for (int64_t i = 0; i < n; ++i) big = abs_max(big, x[i * inc]);
  if (big == 0 || !std::isfinite(big)) return big;
  const T r = T(1) / big;
  sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += (x[i * inc] * r) * (x[i * inc] * r);
  return big * std::sqrt(sum);
}

// A power of two bringing the largest |a| near 1 (exact, so scaling back loses nothing); 1 for a
// zero matrix.
template <class T>
T unit_scale(T largest) {
  return largest == 0 ? T(1) : std::ldexp(T(1), -std::ilogb(largest));
}

// t = tan of the Jacobi rotation angle that zeroes the off-diagonal of [[x, g], [g, y]]:
// the smaller root of t^2 + 2 zeta t - 1 = 0, zeta = (y - x) / (2 g).
template <class T>
T jacobi_tangent(T x, T y, T g) {
  const T zeta = (y - x) / (2 * g);
  const T az = std::abs(zeta);
  // beyond 1/sqrt(eps), sqrt(zeta^2 + 1) is |zeta| to rounding (and zeta^2 may overflow)
  const T root = az > 1 / std::sqrt(std::numeric_limits<T>::epsilon()) ? az : std::sqrt(az * az + 1);
  return std::copysign(T(1) / (az + root), zeta);
}

// Rotates columns x and y (n values each): x' = c x - s y, y' = s x + c y.
template <class T>
void rotate(int64_t n, T* x, T* y, T c, T s) {
  for (int64_t i = 0; i < n; ++i) {
    const T a = x[i], b = y[i];
    x[i] = c * a - s * b;
    y[i] = s * a + c * b;
  }
}

// Sorts order[0..n) by key (an insertion sort: stable, and small in code for n <= kSmall).
template <class T, class Before>
void sort_order(int64_t n, int64_t* order, const T* key, Before before) {
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  for (int64_t i = 1; i < n; ++i)
    for (int64_t j = i; j > 0 && before(key[order[j]], key[order[j - 1]]); --j) std::swap(order[j], order[j - 1]);
}

// Jacobi stops when every off-diagonal pair is below eps relative to its diagonal (convergence is
// quadratic: a handful of sweeps); the cap only bounds pathological (denormal) input.
constexpr int kMaxSweeps = 40;

}  // namespace

template <class T>
void small_geqrf(int64_t m, int64_t n, T* a, T* tau) {
  const int64_t k = std::min(m, n);
  for (int64_t j = 0; j < k; ++j) {
    T* col = a + j * m;
    const T alpha = col[j];
    const T xnorm = norm2(m - j - 1, col + j + 1, 1);
    // LAPACK's larfg: H = I - tau v v^T with v = [1; x / (alpha - beta)] maps [alpha; x] to
    // [beta; 0], beta = -sign(alpha) ||[alpha; x]||; H = I when x is already zero
    if (xnorm == 0) {
      tau[j] = 0;
      continue;
    }
    const T pair[2] = {alpha, xnorm};
    const T beta = -std::copysign(norm2(2, pair, 1), alpha);
    tau[j] = (beta - alpha) / beta;
    const T scale = T(1) / (alpha - beta);
    for (int64_t i = j + 1; i < m; ++i) col[i] *= scale;
    col[j] = beta;
    for (int64_t c = j + 1; c < n; ++c) {
      T* dst = a + c * m;
      T w = dst[j];
      for (int64_t i = j + 1; i < m; ++i) w += col[i] * dst[i];
      w *= tau[j];
      dst[j] -= w;
      for (int64_t i = j + 1; i < m; ++i) dst[i] -= w * col[i];
    }
  }
}

template <class T>
void small_orgqr(int64_t m, int64_t cols, int64_t k, T* a, const T* tau) {
  // LAPACK's org2r: columns past the reflectors start as the identity's, then H(i) is applied
  // from the last to the first, each turning its own column into Q's
  for (int64_t j = k; j < cols; ++j) {
    std::fill(a + j * m, a + (j + 1) * m, T(0));
    if (j < m) a[j * m + j] = 1;
  }
  for (int64_t i = k - 1; i >= 0; --i) {
    T* v = a + i * m;
    v[i] = 1;
    for (int64_t c = i + 1; c < cols; ++c) {
      T* dst = a + c * m;
      T w = 0;
      for (int64_t r = i; r < m; ++r) w += v[r] * dst[r];
      w *= tau[i];
      for (int64_t r = i; r < m; ++r) dst[r] -= w * v[r];
    }
    for (int64_t r = i + 1; r < m; ++r) v[r] *= -tau[i];
    v[i] = 1 - tau[i];
    for (int64_t r = 0; r < i; ++r) v[r] = 0;
  }
}

template <class T>
void small_trsm_left(bool upper, bool unit, int64_t n, int64_t k, const T* a, int64_t rs, int64_t cs, T* x) {
  // row by row across all k columns: the columns' substitutions are independent chains that
  // overlap, where one column at a time waits on each row's result; the diagonal's reciprocals
  // (as OpenBLAS's trsm keeps them) take the divisions off those chains. (Compile-time orders
  // gained nothing here: the copies around the kernel are most of the time.)
  T inv[kSmall];
  for (int64_t i = 0; i < n; ++i) inv[i] = unit ? T(1) : T(1) / a[i * (rs + cs)];
  for (int64_t s = 0; s < n; ++s) {
    const int64_t i = upper ? n - 1 - s : s;  // upper: back substitution, lower: forward
    const int64_t lo = upper ? i + 1 : 0, hi = upper ? n : i;
    for (int64_t c = 0; c < k; ++c) {
      T* xc = x + c * n;
      T v = xc[i];
      for (int64_t r = lo; r < hi; ++r) v -= a[i * rs + r * cs] * xc[r];
      xc[i] = v * inv[i];
    }
  }
}

template <class T>
int small_syev(char uplo, int64_t n, T* a, T* w) {
  T s[kSmall * kSmall], v[kSmall * kSmall];  // the symmetric matrix and the rotations, column-major
  T largest = 0;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = j; i < n; ++i) {
      const T x = uplo == 'L' ? a[j * n + i] : a[i * n + j];
      s[j * n + i] = s[i * n + j] = x;
      largest = abs_max(largest, x);
    }
  if (!std::isfinite(largest)) {
    std::fill(w, w + n, std::numeric_limits<T>::quiet_NaN());
    std::fill(a, a + n * n, std::numeric_limits<T>::quiet_NaN());
    return 1;
  }
  const T scale = unit_scale(largest);
  for (int64_t i = 0; i < n * n; ++i) {
    s[i] *= scale;
    v[i] = i % (n + 1) == 0 ? T(1) : T(0);
  }
  const T eps = std::numeric_limits<T>::epsilon();
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        const T g = s[q * n + p], spp = s[p * n + p], sqq = s[q * n + q];
        if (std::abs(g) <= eps * std::sqrt(std::abs(spp) * std::abs(sqq)) || g == 0) continue;
        rotated = true;
        const T t = jacobi_tangent(spp, sqq, g);
        const T c = 1 / std::sqrt(t * t + 1), sn = t * c;
        // columns then rows p and q of S (S' = J^T S J), then V' = V J
        rotate(n, s + p * n, s + q * n, c, sn);
        for (int64_t r = 0; r < n; ++r) {
          const T x = s[r * n + p], y = s[r * n + q];
          s[r * n + p] = c * x - sn * y;
          s[r * n + q] = sn * x + c * y;
        }
        s[q * n + p] = s[p * n + q] = 0;
        rotate(n, v + p * n, v + q * n, c, sn);
      }
    if (!rotated) break;
  }
  // ascending eigenvalues (a stable selection: equal ones keep their order), eigenvectors signed
  T diag[kSmall];
  int64_t order[kSmall];
  for (int64_t i = 0; i < n; ++i) diag[i] = s[i * n + i];
  sort_order(n, order, diag, std::less<T>());
  for (int64_t j = 0; j < n; ++j) {
    const int64_t src = order[j];
    w[j] = diag[src] / scale;
    const T* col = v + src * n;
    int64_t big = 0;
    for (int64_t i = 1; i < n; ++i)
      if (std::abs(col[i]) > std::abs(col[big])) big = i;
    const T sign = col[big] < 0 ? T(-1) : T(1);
    for (int64_t i = 0; i < n; ++i) a[j * n + i] = sign * col[i];
  }
  return 0;
}

template <class T>
int small_gesvd(int64_t p, int64_t q, const T* a, int64_t rs, int64_t cs, T* s, MatrixOut<T> u, int64_t ucols,
                MatrixOut<T> v) {
  T wk[kSmall * kSmall], vk[kSmall * kSmall];  // A V, column-major p x q, and V (q x q)
  T largest = 0;
  for (int64_t j = 0; j < q; ++j)
    for (int64_t i = 0; i < p; ++i) largest = abs_max(largest, a[i * rs + j * cs]);
  if (!std::isfinite(largest)) return -4;
  const T scale = unit_scale(largest);
  for (int64_t j = 0; j < q; ++j) {
    for (int64_t i = 0; i < p; ++i) wk[j * p + i] = a[i * rs + j * cs] * scale;
    for (int64_t i = 0; i < q; ++i) vk[j * q + i] = i == j ? T(1) : T(0);
  }
  const bool vectors = u.p != nullptr;
  const T eps = std::numeric_limits<T>::epsilon();
  // one-sided Jacobi (Hestenes): rotate column pairs of A V until all are orthogonal; the
  // columns' norms are then the singular values, the normalized columns the left vectors
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool rotated = false;
    for (int64_t i = 0; i < q; ++i)
      for (int64_t j = i + 1; j < q; ++j) {
        T* x = wk + i * p;
        T* y = wk + j * p;
        T alpha = 0, beta = 0, gamma = 0;
        for (int64_t r = 0; r < p; ++r) {
          alpha += x[r] * x[r];
          beta += y[r] * y[r];
          gamma += x[r] * y[r];
        }
        if (std::abs(gamma) <= eps * std::sqrt(alpha * beta) || gamma == 0) continue;
        rotated = true;
        const T t = jacobi_tangent(alpha, beta, gamma);
        const T c = 1 / std::sqrt(t * t + 1), sn = t * c;
        rotate(p, x, y, c, sn);
        if (vectors) rotate(q, vk + i * q, vk + j * q, c, sn);
      }
    if (!rotated) break;
  }
  T norms[kSmall];
  int64_t order[kSmall];
  for (int64_t j = 0; j < q; ++j) norms[j] = norm2(p, wk + j * p, 1);
  sort_order(q, order, norms, std::greater<T>());
  for (int64_t j = 0; j < q; ++j) s[j] = norms[order[j]] / scale;
  if (!vectors) return 0;
  T uk[kSmall * kSmall];  // the left vectors, column-major p x ucols
  int64_t filled = 0;
  for (; filled < q && norms[order[filled]] > 0; ++filled) {
    const int64_t src = order[filled];
    for (int64_t i = 0; i < p; ++i) uk[filled * p + i] = wk[src * p + i] / norms[src];
  }
  // columns of U with no singular value to define them (zero ones, or the full basis past q):
  // the unit vector with the largest part orthogonal to the columns so far, orthogonalized twice
  for (; filled < ucols; ++filled) {
    T* col = uk + filled * p;
    T best = -1;
    for (int64_t e = 0; e < p; ++e) {
      T cand[kSmall];
      for (int64_t i = 0; i < p; ++i) cand[i] = i == e ? T(1) : T(0);
      for (int pass = 0; pass < 2; ++pass)
        for (int64_t c = 0; c < filled; ++c) {
          const T* uc = uk + c * p;
          T d = 0;
          for (int64_t i = 0; i < p; ++i) d += uc[i] * cand[i];
          for (int64_t i = 0; i < p; ++i) cand[i] -= d * uc[i];
        }
      const T nrm = norm2(p, cand, 1);
      if (nrm > best) {
        best = nrm;
        for (int64_t i = 0; i < p; ++i) col[i] = cand[i] / nrm;
      }
    }
  }
  for (int64_t j = 0; j < ucols; ++j)
    for (int64_t i = 0; i < p; ++i) u.p[i * u.rs + j * u.cs] = uk[j * p + i];
  for (int64_t j = 0; j < q; ++j)
    for (int64_t i = 0; i < q; ++i) v.p[i * v.rs + j * v.cs] = vk[order[j] * q + i];
  return 0;
}

#define EMBER_SMALL_LINALG(T)                                                                                 \
  template void small_geqrf<T>(int64_t, int64_t, T*, T*);                                                    \
  template void small_orgqr<T>(int64_t, int64_t, int64_t, T*, const T*);                                     \
  template void small_trsm_left<T>(bool, bool, int64_t, int64_t, const T*, int64_t, int64_t, T*);                              \
  template int small_syev<T>(char, int64_t, T*, T*);                                                         \
  template int small_gesvd<T>(int64_t, int64_t, const T*, int64_t, int64_t, T*, MatrixOut<T>, int64_t, MatrixOut<T>);
EMBER_SMALL_LINALG(float)
EMBER_SMALL_LINALG(double)
#undef EMBER_SMALL_LINALG

}  // namespace ember::linalg_detail
