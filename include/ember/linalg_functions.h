// torch.linalg: decompositions, solvers, norms and matrix functions on batches of matrices
// (leading dims are batch dims, broadcast where PyTorch broadcasts), float32 and float64 (and
// complex64/complex128 where docs/linalg.md says so), each differentiable. Two spellings, as libtorch 1.13: `torch::linalg::det(A)` (namespace
// ember::linalg) and the ATen form `torch::linalg_det(A)`; plus the older names (`torch::inverse`,
// `torch::svd`, `torch::symeig`, ...) and Tensor methods. Factorizations run on LAPACK (OpenBLAS).
// See docs/linalg.md for what is covered and what is not.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/tensor.h"

namespace ember {

// ---- ATen spellings (torch::linalg_*) ---------------------------------------------------------
Tensor linalg_det(const Tensor& A);
std::tuple<Tensor, Tensor> linalg_slogdet(const Tensor& A);
Tensor linalg_inv(const Tensor& A);
std::tuple<Tensor, Tensor> linalg_inv_ex(const Tensor& A, bool check_errors = false);
Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left = true);
std::tuple<Tensor, Tensor> linalg_solve_ex(const Tensor& A, const Tensor& B, bool left = true,
                                           bool check_errors = false);
Tensor linalg_cholesky(const Tensor& A, bool upper = false);
std::tuple<Tensor, Tensor> linalg_cholesky_ex(const Tensor& A, bool upper = false, bool check_errors = false);
std::tuple<Tensor, Tensor> linalg_qr(const Tensor& A, std::string_view mode = "reduced");
std::tuple<Tensor, Tensor> linalg_eigh(const Tensor& A, std::string_view UPLO = "L");
Tensor linalg_eigvalsh(const Tensor& A, std::string_view UPLO = "L");
// General square matrices (LAPACK geev): complex eigenvalues and unit-norm eigenvectors,
// complex64 for float32/complex64 input, complex128 for float64/complex128.
std::tuple<Tensor, Tensor> linalg_eig(const Tensor& A);
std::tuple<Tensor&, Tensor&> linalg_eig_out(Tensor& eigenvalues, Tensor& eigenvectors, const Tensor& A);
Tensor linalg_eigvals(const Tensor& A);
Tensor& linalg_eigvals_out(Tensor& out, const Tensor& A);
std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A, bool full_matrices = true,
                                              std::optional<std::string_view> driver = std::nullopt);
Tensor linalg_svdvals(const Tensor& A, std::optional<std::string_view> driver = std::nullopt);
// (solution, residuals, rank, singular_values); drivers "gelsy" (default), "gelsd", "gelss", "gels".
std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_lstsq(const Tensor& A, const Tensor& B,
                                                        std::optional<double> rcond = std::nullopt,
                                                        std::optional<std::string_view> driver = std::nullopt);
std::tuple<Tensor, Tensor> linalg_lu_factor(const Tensor& A, bool pivot = true);
std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor_ex(const Tensor& A, bool pivot = true, bool check_errors = false);
std::tuple<Tensor, Tensor, Tensor> linalg_lu(const Tensor& A, bool pivot = true);
Tensor linalg_lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left = true, bool adjoint = false);
Tensor linalg_solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left = true,
                               bool unitriangular = false);
Tensor linalg_vector_norm(const Tensor& x, const Scalar& ord = 2, OptionalIntArrayRef dim = std::nullopt,
                          bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor linalg_matrix_norm(const Tensor& A, const Scalar& ord, IntArrayRef dim = {-2, -1}, bool keepdim = false,
                          std::optional<ScalarType> dtype = std::nullopt);
Tensor linalg_matrix_norm(const Tensor& A, std::string_view ord = "fro", IntArrayRef dim = {-2, -1},
                          bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
// (const char* forms: a string literal would otherwise also convert to Scalar through bool)
inline Tensor linalg_matrix_norm(const Tensor& A, const char* ord, IntArrayRef dim = {-2, -1}, bool keepdim = false,
                                 std::optional<ScalarType> dtype = std::nullopt) {
  return linalg_matrix_norm(A, std::string_view(ord), dim, keepdim, dtype);
}
Tensor linalg_norm(const Tensor& A, const std::optional<Scalar>& ord = std::nullopt,
                   OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
                   std::optional<ScalarType> dtype = std::nullopt);
Tensor linalg_norm(const Tensor& A, std::string_view ord, OptionalIntArrayRef dim = std::nullopt,
                   bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
inline Tensor linalg_norm(const Tensor& A, const char* ord, OptionalIntArrayRef dim = std::nullopt,
                          bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) {
  return linalg_norm(A, std::string_view(ord), dim, keepdim, dtype);
}
Tensor linalg_cond(const Tensor& A, const std::optional<Scalar>& p = std::nullopt);
Tensor linalg_cond(const Tensor& A, std::string_view p);
inline Tensor linalg_cond(const Tensor& A, const char* p) { return linalg_cond(A, std::string_view(p)); }
Tensor linalg_matrix_rank(const Tensor& A, std::optional<double> atol, std::optional<double> rtol,
                          bool hermitian = false);
Tensor linalg_matrix_rank(const Tensor& A, double tol, bool hermitian = false);
Tensor linalg_matrix_rank(const Tensor& A, const std::optional<Tensor>& atol = std::nullopt,
                          const std::optional<Tensor>& rtol = std::nullopt, bool hermitian = false);
Tensor linalg_pinv(const Tensor& A, std::optional<double> atol, std::optional<double> rtol, bool hermitian = false);
Tensor linalg_pinv(const Tensor& A, double rcond, bool hermitian = false);
Tensor linalg_pinv(const Tensor& A, const std::optional<Tensor>& atol = std::nullopt,
                   const std::optional<Tensor>& rtol = std::nullopt, bool hermitian = false);
Tensor linalg_matrix_power(const Tensor& A, int64_t n);
Tensor linalg_matrix_exp(const Tensor& A);
Tensor linalg_multi_dot(TensorList tensors);
Tensor linalg_cross(const Tensor& a, const Tensor& b, int64_t dim = -1);
Tensor linalg_vecdot(const Tensor& x, const Tensor& y, int64_t dim = -1);
Tensor linalg_diagonal(const Tensor& A, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
Tensor linalg_householder_product(const Tensor& A, const Tensor& tau);
Tensor linalg_tensorinv(const Tensor& A, int64_t ind = 2);
Tensor linalg_tensorsolve(const Tensor& A, const Tensor& B, OptionalIntArrayRef dims = std::nullopt);
Tensor linalg_vander(const Tensor& x, std::optional<int64_t> N = std::nullopt);

// ---- older torch:: names ----------------------------------------------------------------------
Tensor det(const Tensor& A);
Tensor logdet(const Tensor& A);
std::tuple<Tensor, Tensor> slogdet(const Tensor& A);
Tensor inverse(const Tensor& A);
Tensor cholesky(const Tensor& A, bool upper = false);
Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper = false);
Tensor cholesky_inverse(const Tensor& L, bool upper = false);
std::tuple<Tensor, Tensor> qr(const Tensor& A, bool some = true);
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool some = true, bool compute_uv = true);
std::tuple<Tensor, Tensor> symeig(const Tensor& A, bool eigenvectors = false, bool upper = true);
// (solution, cloned_coefficient) of A X = B
std::tuple<Tensor, Tensor> triangular_solve(const Tensor& B, const Tensor& A, bool upper = true,
                                            bool transpose = false, bool unitriangular = false);
Tensor lu_solve(const Tensor& B, const Tensor& LU_data, const Tensor& LU_pivots);
std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU_data, const Tensor& LU_pivots, bool unpack_data = true,
                                             bool unpack_pivots = true);
Tensor matrix_power(const Tensor& A, int64_t n);
Tensor matrix_exp(const Tensor& A);
Tensor pinverse(const Tensor& A, double rcond = 1e-15);
std::tuple<Tensor, Tensor> geqrf(const Tensor& A);
Tensor orgqr(const Tensor& A, const Tensor& tau);
Tensor ormqr(const Tensor& A, const Tensor& tau, const Tensor& C, bool left = true, bool transpose = false);
Tensor chain_matmul(TensorList matrices);
Tensor linalg_matmul(const Tensor& self, const Tensor& other);  // matmul
Tensor frobenius_norm(const Tensor& self);
Tensor frobenius_norm(const Tensor& self, IntArrayRef dim, bool keepdim = false);
Tensor nuclear_norm(const Tensor& self, bool keepdim = false);
Tensor nuclear_norm(const Tensor& self, IntArrayRef dim, bool keepdim = false);

// ---- torch::linalg:: ---------------------------------------------------------------------------
namespace linalg {
inline Tensor det(const Tensor& A) { return linalg_det(A); }
inline Tensor linalg_det(const Tensor& A) { return ember::linalg_det(A); }  // libtorch's deprecated spelling
inline std::tuple<Tensor, Tensor> slogdet(const Tensor& A) { return linalg_slogdet(A); }
inline Tensor inv(const Tensor& A) { return linalg_inv(A); }
inline std::tuple<Tensor, Tensor> inv_ex(const Tensor& A, bool check_errors = false) {
  return linalg_inv_ex(A, check_errors);
}
inline Tensor solve(const Tensor& A, const Tensor& B, bool left = true) { return linalg_solve(A, B, left); }
inline std::tuple<Tensor, Tensor> solve_ex(const Tensor& A, const Tensor& B, bool left = true,
                                           bool check_errors = false) {
  return linalg_solve_ex(A, B, left, check_errors);
}
inline Tensor cholesky(const Tensor& A) { return linalg_cholesky(A); }
inline std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& A, bool upper = false, bool check_errors = false) {
  return linalg_cholesky_ex(A, upper, check_errors);
}
inline std::tuple<Tensor, Tensor> qr(const Tensor& A, std::string_view mode = "reduced") { return linalg_qr(A, mode); }
inline std::tuple<Tensor, Tensor> eigh(const Tensor& A, std::string_view uplo = "L") { return linalg_eigh(A, uplo); }
inline Tensor eigvalsh(const Tensor& A, std::string_view uplo = "L") { return linalg_eigvalsh(A, uplo); }
inline std::tuple<Tensor, Tensor> eig(const Tensor& A) { return linalg_eig(A); }
inline std::tuple<Tensor&, Tensor&> eig_out(Tensor& eigenvalues, Tensor& eigenvectors, const Tensor& A) {
  return linalg_eig_out(eigenvalues, eigenvectors, A);
}
inline Tensor eigvals(const Tensor& A) { return linalg_eigvals(A); }
inline Tensor& eigvals_out(Tensor& out, const Tensor& A) { return linalg_eigvals_out(out, A); }
inline std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices = true,
                                              std::optional<std::string_view> driver = std::nullopt) {
  return linalg_svd(A, full_matrices, driver);
}
inline Tensor svdvals(const Tensor& A, std::optional<std::string_view> driver = std::nullopt) {
  return linalg_svdvals(A, driver);
}
inline std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq(const Tensor& A, const Tensor& B,
                                                        std::optional<double> cond = std::nullopt,
                                                        std::optional<std::string_view> driver = std::nullopt) {
  return linalg_lstsq(A, B, cond, driver);
}
inline std::tuple<Tensor, Tensor> lu_factor(const Tensor& A, bool pivot = true) { return linalg_lu_factor(A, pivot); }
inline std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A, bool pivot = true,
                                                       bool check_errors = false) {
  return linalg_lu_factor_ex(A, pivot, check_errors);
}
inline std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A, bool pivot = true) { return linalg_lu(A, pivot); }
inline Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left = true,
                       bool adjoint = false) {
  return linalg_lu_solve(LU, pivots, B, left, adjoint);
}
inline Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left = true,
                               bool unitriangular = false) {
  return linalg_solve_triangular(A, B, upper, left, unitriangular);
}
inline Tensor vector_norm(const Tensor& x, const Scalar& ord = 2, OptionalIntArrayRef dim = std::nullopt,
                          bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) {
  return linalg_vector_norm(x, ord, dim, keepdim, dtype);
}
inline Tensor matrix_norm(const Tensor& A, const Scalar& ord, IntArrayRef dim = {-2, -1}, bool keepdim = false,
                          std::optional<ScalarType> dtype = std::nullopt) {
  return linalg_matrix_norm(A, ord, dim, keepdim, dtype);
}
inline Tensor matrix_norm(const Tensor& A, std::string ord = "fro", IntArrayRef dim = {-2, -1}, bool keepdim = false,
                          std::optional<ScalarType> dtype = std::nullopt) {
  return linalg_matrix_norm(A, std::string_view(ord), dim, keepdim, dtype);
}
inline Tensor matrix_norm(const Tensor& A, const char* ord, IntArrayRef dim = {-2, -1}, bool keepdim = false,
                          std::optional<ScalarType> dtype = std::nullopt) {
  return linalg_matrix_norm(A, std::string_view(ord), dim, keepdim, dtype);
}
inline Tensor norm(const Tensor& A, const std::optional<Scalar>& ord = std::nullopt,
                   OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
                   std::optional<ScalarType> dtype = std::nullopt) {
  return linalg_norm(A, ord, dim, keepdim, dtype);
}
inline Tensor norm(const Tensor& A, std::string_view ord, OptionalIntArrayRef dim = std::nullopt,
                   bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) {
  return linalg_norm(A, ord, dim, keepdim, dtype);
}
inline Tensor norm(const Tensor& A, const char* ord, OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
                   std::optional<ScalarType> dtype = std::nullopt) {
  return linalg_norm(A, std::string_view(ord), dim, keepdim, dtype);
}
inline Tensor cond(const Tensor& A, const std::optional<Scalar>& p = std::nullopt) { return linalg_cond(A, p); }
inline Tensor cond(const Tensor& A, std::string_view p) { return linalg_cond(A, p); }
inline Tensor cond(const Tensor& A, const char* p) { return linalg_cond(A, std::string_view(p)); }
inline Tensor matrix_rank(const Tensor& A, double tol, bool hermitian = false) {
  return linalg_matrix_rank(A, tol, hermitian);
}
inline Tensor matrix_rank(const Tensor& A, std::optional<double> atol, std::optional<double> rtol,
                          bool hermitian = false) {
  return linalg_matrix_rank(A, atol, rtol, hermitian);
}
inline Tensor matrix_rank(const Tensor& A, const std::optional<Tensor>& atol = std::nullopt,
                          const std::optional<Tensor>& rtol = std::nullopt, bool hermitian = false) {
  return linalg_matrix_rank(A, atol, rtol, hermitian);
}
inline Tensor pinv(const Tensor& A, double rcond, bool hermitian = false) { return linalg_pinv(A, rcond, hermitian); }
inline Tensor pinv(const Tensor& A, std::optional<double> atol, std::optional<double> rtol, bool hermitian = false) {
  return linalg_pinv(A, atol, rtol, hermitian);
}
inline Tensor pinv(const Tensor& A) { return linalg_pinv(A); }
inline Tensor matrix_power(const Tensor& A, int64_t n) { return linalg_matrix_power(A, n); }
inline Tensor matrix_exp(const Tensor& A) { return linalg_matrix_exp(A); }
inline Tensor multi_dot(TensorList tensors) { return linalg_multi_dot(tensors); }
inline Tensor cross(const Tensor& a, const Tensor& b, int64_t dim = -1) { return linalg_cross(a, b, dim); }
inline Tensor vecdot(const Tensor& x, const Tensor& y, int64_t dim = -1) { return linalg_vecdot(x, y, dim); }
inline Tensor diagonal(const Tensor& A, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1) {
  return linalg_diagonal(A, offset, dim1, dim2);
}
inline Tensor householder_product(const Tensor& A, const Tensor& tau) { return linalg_householder_product(A, tau); }
inline Tensor tensorinv(const Tensor& A, int64_t ind = 2) { return linalg_tensorinv(A, ind); }
inline Tensor tensorsolve(const Tensor& A, const Tensor& B, OptionalIntArrayRef dims = std::nullopt) {
  return linalg_tensorsolve(A, B, dims);
}
inline Tensor vander(const Tensor& x, std::optional<int64_t> N = std::nullopt) { return linalg_vander(x, N); }
}  // namespace linalg

}  // namespace ember
