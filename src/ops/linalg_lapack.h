// The LAPACK (and two BLAS) routines torch::linalg calls, declared here (Fortran ABI: every
// argument by pointer, a hidden length per character argument at the end) and wrapped in
// overloads on float/double so the ops are written once as templates. LAPACK comes from OpenBLAS
// (Debian's libopenblas-dev provides liblapack.so.3). Matrices are column-major.
#pragma once
#include <algorithm>
#include <vector>
#include <cstddef>

#include "ember/complex.h"

// Fortran COMPLEX / COMPLEX*16: two reals, as ember::complex<T> lays them out.
using lapack_c = ember::complex<float>;
using lapack_z = ember::complex<double>;

extern "C" {
using lapack_len = size_t;  // gfortran's hidden character-length argument
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, lapack_len);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, lapack_len);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
             int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
             int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
             const int* lwork, int* iwork, const int* liwork, int* info, lapack_len, lapack_len);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, lapack_len, lapack_len);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u,
             const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork, int* iwork, int* info,
             lapack_len);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info,
             lapack_len);
void sgelsy_(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b, const int* ldb,
             int* jpvt, const float* rcond, int* rank, float* work, const int* lwork, int* info);
void dgelsy_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb,
             int* jpvt, const double* rcond, int* rank, double* work, const int* lwork, int* info);
void sgelsd_(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b, const int* ldb,
             float* s, const float* rcond, int* rank, float* work, const int* lwork, int* iwork, int* info);
void dgelsd_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb,
             double* s, const double* rcond, int* rank, double* work, const int* lwork, int* iwork, int* info);
void sgelss_(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b, const int* ldb,
             float* s, const float* rcond, int* rank, float* work, const int* lwork, int* info);
void dgelss_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb,
             double* s, const double* rcond, int* rank, double* work, const int* lwork, int* info);
void sgels_(const char* trans, const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b,
            const int* ldb, float* work, const int* lwork, int* info, lapack_len);
void dgels_(const char* trans, const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b,
            const int* ldb, double* work, const int* lwork, int* info, lapack_len);
void cpotrf_(const char* uplo, const int* n, lapack_c* a, const int* lda, int* info, lapack_len);
void zpotrf_(const char* uplo, const int* n, lapack_z* a, const int* lda, int* info, lapack_len);
void cgeqrf_(const int* m, const int* n, lapack_c* a, const int* lda, lapack_c* tau, lapack_c* work, const int* lwork,
             int* info);
void zgeqrf_(const int* m, const int* n, lapack_z* a, const int* lda, lapack_z* tau, lapack_z* work, const int* lwork,
             int* info);
void cungqr_(const int* m, const int* n, const int* k, lapack_c* a, const int* lda, const lapack_c* tau,
             lapack_c* work, const int* lwork, int* info);
void zungqr_(const int* m, const int* n, const int* k, lapack_z* a, const int* lda, const lapack_z* tau,
             lapack_z* work, const int* lwork, int* info);
void cheevd_(const char* jobz, const char* uplo, const int* n, lapack_c* a, const int* lda, float* w, lapack_c* work,
             const int* lwork, float* rwork, const int* lrwork, int* iwork, const int* liwork, int* info, lapack_len,
             lapack_len);
void zheevd_(const char* jobz, const char* uplo, const int* n, lapack_z* a, const int* lda, double* w, lapack_z* work,
             const int* lwork, double* rwork, const int* lrwork, int* iwork, const int* liwork, int* info,
             lapack_len, lapack_len);
void cgesdd_(const char* jobz, const int* m, const int* n, lapack_c* a, const int* lda, float* s, lapack_c* u,
             const int* ldu, lapack_c* vt, const int* ldvt, lapack_c* work, const int* lwork, float* rwork, int* iwork,
             int* info, lapack_len);
void zgesdd_(const char* jobz, const int* m, const int* n, lapack_z* a, const int* lda, double* s, lapack_z* u,
             const int* ldu, lapack_z* vt, const int* ldvt, lapack_z* work, const int* lwork, double* rwork,
             int* iwork, int* info, lapack_len);
void cgetrf_(const int* m, const int* n, lapack_c* a, const int* lda, int* ipiv, int* info);
void cgelsy_(const int* m, const int* n, const int* nrhs, lapack_c* a, const int* lda, lapack_c* b, const int* ldb,
             int* jpvt, const float* rcond, int* rank, lapack_c* work, const int* lwork, float* rwork, int* info);
void cgelsd_(const int* m, const int* n, const int* nrhs, lapack_c* a, const int* lda, lapack_c* b, const int* ldb,
             float* s, const float* rcond, int* rank, lapack_c* work, const int* lwork, float* rwork, int* iwork, int* info);
void cgelss_(const int* m, const int* n, const int* nrhs, lapack_c* a, const int* lda, lapack_c* b, const int* ldb,
             float* s, const float* rcond, int* rank, lapack_c* work, const int* lwork, float* rwork, int* info);
void cgels_(const char* trans, const int* m, const int* n, const int* nrhs, lapack_c* a, const int* lda, lapack_c* b,
            const int* ldb, lapack_c* work, const int* lwork, int* info, lapack_len);
void zgelsy_(const int* m, const int* n, const int* nrhs, lapack_z* a, const int* lda, lapack_z* b, const int* ldb,
             int* jpvt, const double* rcond, int* rank, lapack_z* work, const int* lwork, double* rwork, int* info);
void zgelsd_(const int* m, const int* n, const int* nrhs, lapack_z* a, const int* lda, lapack_z* b, const int* ldb,
             double* s, const double* rcond, int* rank, lapack_z* work, const int* lwork, double* rwork, int* iwork, int* info);
void zgelss_(const int* m, const int* n, const int* nrhs, lapack_z* a, const int* lda, lapack_z* b, const int* ldb,
             double* s, const double* rcond, int* rank, lapack_z* work, const int* lwork, double* rwork, int* info);
void zgels_(const char* trans, const int* m, const int* n, const int* nrhs, lapack_z* a, const int* lda, lapack_z* b,
            const int* ldb, lapack_z* work, const int* lwork, int* info, lapack_len);
void zgetrf_(const int* m, const int* n, lapack_z* a, const int* lda, int* ipiv, int* info);
// general eigenproblem (right eigenvectors only)
void sgeev_(const char* jobvl, const char* jobvr, const int* n, float* a, const int* lda, float* wr, float* wi,
            float* vl, const int* ldvl, float* vr, const int* ldvr, float* work, const int* lwork, int* info,
            lapack_len, lapack_len);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda, double* wr, double* wi,
            double* vl, const int* ldvl, double* vr, const int* ldvr, double* work, const int* lwork, int* info,
            lapack_len, lapack_len);
void cgeev_(const char* jobvl, const char* jobvr, const int* n, lapack_c* a, const int* lda, lapack_c* w,
            lapack_c* vl, const int* ldvl, lapack_c* vr, const int* ldvr, lapack_c* work, const int* lwork,
            float* rwork, int* info, lapack_len, lapack_len);
void zgeev_(const char* jobvl, const char* jobvr, const int* n, lapack_z* a, const int* lda, lapack_z* w,
            lapack_z* vl, const int* ldvl, lapack_z* vr, const int* ldvr, lapack_z* work, const int* lwork,
            double* rwork, int* info, lapack_len, lapack_len);
// BLAS: triangular solve with several right-hand sides (no singularity check, as PyTorch's)
void strsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const float* alpha, const float* a, const int* lda, float* b, const int* ldb, lapack_len, lapack_len,
            lapack_len, lapack_len);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const double* alpha, const double* a, const int* lda, double* b, const int* ldb, lapack_len, lapack_len,
            lapack_len, lapack_len);
void ctrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const lapack_c* alpha, const lapack_c* a, const int* lda, lapack_c* b, const int* ldb, lapack_len,
            lapack_len, lapack_len, lapack_len);
void ztrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const lapack_z* alpha, const lapack_z* a, const int* lda, lapack_z* b, const int* ldb, lapack_len,
            lapack_len, lapack_len, lapack_len);
}

namespace ember::lapack {

inline void getrf(int m, int n, float* a, int lda, int* ipiv, int* info) { sgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getrf(int m, int n, double* a, int lda, int* ipiv, int* info) { dgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getrf(int m, int n, lapack_c* a, int lda, int* ipiv, int* info) { cgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void getrf(int m, int n, lapack_z* a, int lda, int* ipiv, int* info) { zgetrf_(&m, &n, a, &lda, ipiv, info); }
inline void potrf(char uplo, int n, float* a, int lda, int* info) { spotrf_(&uplo, &n, a, &lda, info, 1); }
inline void potrf(char uplo, int n, double* a, int lda, int* info) { dpotrf_(&uplo, &n, a, &lda, info, 1); }
inline void potrf(char uplo, int n, lapack_c* a, int lda, int* info) { cpotrf_(&uplo, &n, a, &lda, info, 1); }
inline void potrf(char uplo, int n, lapack_z* a, int lda, int* info) { zpotrf_(&uplo, &n, a, &lda, info, 1); }
inline void geqrf(int m, int n, float* a, int lda, float* tau, float* work, int lwork, int* info) {
  sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
inline void geqrf(int m, int n, double* a, int lda, double* tau, double* work, int lwork, int* info) {
  dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
inline void orgqr(int m, int n, int k, float* a, int lda, const float* tau, float* work, int lwork, int* info) {
  sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
inline void orgqr(int m, int n, int k, double* a, int lda, const double* tau, double* work, int lwork, int* info) {
  dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
inline void syevd(char jobz, char uplo, int n, float* a, int lda, float* w, float* work, int lwork, int* iwork,
                  int liwork, int* info) {
  ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
inline void syevd(char jobz, char uplo, int n, double* a, int lda, double* w, double* work, int lwork, int* iwork,
                  int liwork, int* info) {
  dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
inline void gesdd(char jobz, int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt, int ldvt,
                  float* work, int lwork, int* iwork, int* info) {
  sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}
inline void gesdd(char jobz, int m, int n, double* a, int lda, double* s, double* u, int ldu, double* vt, int ldvt,
                  double* work, int lwork, int* iwork, int* info) {
  dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}
inline void gelsy(int m, int n, int nrhs, float* a, int lda, float* b, int ldb, int* jpvt, float rcond, int* rank,
                  float* work, int lwork, int* info) {
  sgelsy_(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work, &lwork, info);
}
inline void gelsy(int m, int n, int nrhs, double* a, int lda, double* b, int ldb, int* jpvt, double rcond, int* rank,
                  double* work, int lwork, int* info) {
  dgelsy_(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work, &lwork, info);
}
inline void gelsd(int m, int n, int nrhs, float* a, int lda, float* b, int ldb, float* s, float rcond, int* rank,
                  float* work, int lwork, int* iwork, int* info) {
  sgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, iwork, info);
}
inline void gelsd(int m, int n, int nrhs, double* a, int lda, double* b, int ldb, double* s, double rcond, int* rank,
                  double* work, int lwork, int* iwork, int* info) {
  dgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, iwork, info);
}
inline void gelss(int m, int n, int nrhs, float* a, int lda, float* b, int ldb, float* s, float rcond, int* rank,
                  float* work, int lwork, int* info) {
  sgelss_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, info);
}
inline void gelss(int m, int n, int nrhs, double* a, int lda, double* b, int ldb, double* s, double rcond, int* rank,
                  double* work, int lwork, int* info) {
  dgelss_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, info);
}
inline void gels(char trans, int m, int n, int nrhs, float* a, int lda, float* b, int ldb, float* work, int lwork,
                 int* info) {
  sgels_(&trans, &m, &n, &nrhs, a, &lda, b, &ldb, work, &lwork, info, 1);
}
inline void gels(char trans, int m, int n, int nrhs, double* a, int lda, double* b, int ldb, double* work, int lwork,
                 int* info) {
  dgels_(&trans, &m, &n, &nrhs, a, &lda, b, &ldb, work, &lwork, info, 1);
}
// Complex least squares: the wrappers size the real workspace (rwork) each routine also needs, so
// that callers read as the real routines' (gelsd's size comes from a workspace query).
template <class C, class R, class F>
void gelsy_complex(F f, int m, int n, int nrhs, C* a, int lda, C* b, int ldb, int* jpvt, R rcond, int* rank, C* work,
                   int lwork, int* info) {
  std::vector<R> rwork(std::max(1, 2 * n));
  f(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work, &lwork, rwork.data(), info);
}
template <class C, class R, class F>
void gelsd_complex(F f, int m, int n, int nrhs, C* a, int lda, C* b, int ldb, R* s, R rcond, int* rank, C* work,
                   int lwork, int* iwork, int* info) {
  R rq = 0;
  C wq;
  int iq = 0, query = -1;
  f(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, &wq, &query, &rq, &iq, info);
  if (lwork == -1) {  // the caller's query: the integer workspace's size is all it reads besides work's
    *work = wq;
    *iwork = iq;
    return;
  }
  std::vector<R> rwork(std::max(1, static_cast<int>(rq)));
  f(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, rwork.data(), iwork, info);
}
template <class C, class R, class F>
void gelss_complex(F f, int m, int n, int nrhs, C* a, int lda, C* b, int ldb, R* s, R rcond, int* rank, C* work,
                   int lwork, int* info) {
  std::vector<R> rwork(std::max(1, 5 * std::min(m, n)));
  f(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, rwork.data(), info);
}
inline void gelsy(int m, int n, int nrhs, lapack_c* a, int lda, lapack_c* b, int ldb, int* jpvt, float rcond, int* rank,
                  lapack_c* work, int lwork, int* info) {
  gelsy_complex(cgelsy_, m, n, nrhs, a, lda, b, ldb, jpvt, rcond, rank, work, lwork, info);
}
inline void gelsd(int m, int n, int nrhs, lapack_c* a, int lda, lapack_c* b, int ldb, float* s, float rcond, int* rank,
                  lapack_c* work, int lwork, int* iwork, int* info) {
  gelsd_complex(cgelsd_, m, n, nrhs, a, lda, b, ldb, s, rcond, rank, work, lwork, iwork, info);
}
inline void gelss(int m, int n, int nrhs, lapack_c* a, int lda, lapack_c* b, int ldb, float* s, float rcond, int* rank,
                  lapack_c* work, int lwork, int* info) {
  gelss_complex(cgelss_, m, n, nrhs, a, lda, b, ldb, s, rcond, rank, work, lwork, info);
}
inline void gels(char trans, int m, int n, int nrhs, lapack_c* a, int lda, lapack_c* b, int ldb, lapack_c* work, int lwork,
                 int* info) {
  cgels_(&trans, &m, &n, &nrhs, a, &lda, b, &ldb, work, &lwork, info, 1);
}
inline void gelsy(int m, int n, int nrhs, lapack_z* a, int lda, lapack_z* b, int ldb, int* jpvt, double rcond, int* rank,
                  lapack_z* work, int lwork, int* info) {
  gelsy_complex(zgelsy_, m, n, nrhs, a, lda, b, ldb, jpvt, rcond, rank, work, lwork, info);
}
inline void gelsd(int m, int n, int nrhs, lapack_z* a, int lda, lapack_z* b, int ldb, double* s, double rcond, int* rank,
                  lapack_z* work, int lwork, int* iwork, int* info) {
  gelsd_complex(zgelsd_, m, n, nrhs, a, lda, b, ldb, s, rcond, rank, work, lwork, iwork, info);
}
inline void gelss(int m, int n, int nrhs, lapack_z* a, int lda, lapack_z* b, int ldb, double* s, double rcond, int* rank,
                  lapack_z* work, int lwork, int* info) {
  gelss_complex(zgelss_, m, n, nrhs, a, lda, b, ldb, s, rcond, rank, work, lwork, info);
}
inline void gels(char trans, int m, int n, int nrhs, lapack_z* a, int lda, lapack_z* b, int ldb, lapack_z* work, int lwork,
                 int* info) {
  zgels_(&trans, &m, &n, &nrhs, a, &lda, b, &ldb, work, &lwork, info, 1);
}
inline void trsm(char side, char uplo, char trans, char diag, int m, int n, float alpha, const float* a, int lda,
                 float* b, int ldb) {
  strsm_(&side, &uplo, &trans, &diag, &m, &n, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1);
}
inline void trsm(char side, char uplo, char trans, char diag, int m, int n, double alpha, const double* a, int lda,
                 double* b, int ldb) {
  dtrsm_(&side, &uplo, &trans, &diag, &m, &n, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1);
}

inline void trsm(char side, char uplo, char trans, char diag, int m, int n, lapack_c alpha, const lapack_c* a,
                 int lda, lapack_c* b, int ldb) {
  ctrsm_(&side, &uplo, &trans, &diag, &m, &n, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1);
}
inline void trsm(char side, char uplo, char trans, char diag, int m, int n, lapack_z alpha, const lapack_z* a,
                 int lda, lapack_z* b, int ldb) {
  ztrsm_(&side, &uplo, &trans, &diag, &m, &n, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1);
}
inline void geqrf(int m, int n, lapack_c* a, int lda, lapack_c* tau, lapack_c* work, int lwork, int* info) {
  cgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
inline void geqrf(int m, int n, lapack_z* a, int lda, lapack_z* tau, lapack_z* work, int lwork, int* info) {
  zgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
// (the unitary ungqr for complex: orgqr's name kept for the templates)
inline void orgqr(int m, int n, int k, lapack_c* a, int lda, const lapack_c* tau, lapack_c* work, int lwork,
                  int* info) {
  cungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
inline void orgqr(int m, int n, int k, lapack_z* a, int lda, const lapack_z* tau, lapack_z* work, int lwork,
                  int* info) {
  zungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
inline void heevd(char jobz, char uplo, int n, lapack_c* a, int lda, float* w, lapack_c* work, int lwork, float* rwork,
                  int lrwork, int* iwork, int liwork, int* info) {
  cheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
}
inline void heevd(char jobz, char uplo, int n, lapack_z* a, int lda, double* w, lapack_z* work, int lwork,
                  double* rwork, int lrwork, int* iwork, int liwork, int* info) {
  zheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
}
inline void gesdd(char jobz, int m, int n, lapack_c* a, int lda, float* s, lapack_c* u, int ldu, lapack_c* vt,
                  int ldvt, lapack_c* work, int lwork, float* rwork, int* iwork, int* info) {
  cgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);
}
inline void gesdd(char jobz, int m, int n, lapack_z* a, int lda, double* s, lapack_z* u, int ldu, lapack_z* vt,
                  int ldvt, lapack_z* work, int lwork, double* rwork, int* iwork, int* info) {
  zgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info, 1);
}
// geev for real matrices: eigenvalues as (wr, wi), eigenvectors packed as LAPACK packs complex pairs
inline void geev(char jobvr, int n, float* a, int lda, float* wr, float* wi, float* vr, int ldvr, float* work,
                 int lwork, int* info) {
  const char jobvl = 'N';
  const int one = 1;
  float dummy = 0;
  sgeev_(&jobvl, &jobvr, &n, a, &lda, wr, wi, &dummy, &one, vr, &ldvr, work, &lwork, info, 1, 1);
}
inline void geev(char jobvr, int n, double* a, int lda, double* wr, double* wi, double* vr, int ldvr, double* work,
                 int lwork, int* info) {
  const char jobvl = 'N';
  const int one = 1;
  double dummy = 0;
  dgeev_(&jobvl, &jobvr, &n, a, &lda, wr, wi, &dummy, &one, vr, &ldvr, work, &lwork, info, 1, 1);
}
// geev for complex matrices (rwork: 2n reals)
inline void geev(char jobvr, int n, lapack_c* a, int lda, lapack_c* w, lapack_c* vr, int ldvr, lapack_c* work,
                 int lwork, float* rwork, int* info) {
  const char jobvl = 'N';
  const int one = 1;
  lapack_c dummy;
  cgeev_(&jobvl, &jobvr, &n, a, &lda, w, &dummy, &one, vr, &ldvr, work, &lwork, rwork, info, 1, 1);
}
inline void geev(char jobvr, int n, lapack_z* a, int lda, lapack_z* w, lapack_z* vr, int ldvr, lapack_z* work,
                 int lwork, double* rwork, int* info) {
  const char jobvl = 'N';
  const int one = 1;
  lapack_z dummy;
  zgeev_(&jobvl, &jobvr, &n, a, &lda, w, &dummy, &one, vr, &ldvr, work, &lwork, rwork, info, 1, 1);
}

}  // namespace ember::lapack
