// torch.linalg against libtorch: each op over batch shapes ({}, {2}, {2, 3}), sizes (0, 1, 3, 6:
// Ember's direct path for n <= 8; 12: LAPACK), float and double, contiguous and transposed (non-contiguous) input. Outputs that are unique
// are compared directly; decompositions with sign freedom (QR, eigh, SVD) are compared through
// their invariants as PyTorch's own tests do: reconstruction, orthogonality, the values
// themselves, and |R| / projectors.
#include "parity/parity.h"

#include <limits>

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using parity::Close;
using parity::to_torch;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

const ember::ScalarType kTypes[] = {ember::kFloat, ember::kDouble};
// float32, float64, complex64, complex128: the ops with a complex path
const std::vector<ember::ScalarType> kFieldTypes = {ember::kFloat, ember::kDouble, ember::kComplexFloat,
                                                    ember::kComplexDouble};
const std::vector<std::vector<int64_t>> kBatches = {{}, {2}, {2, 3}};
const int64_t kSizes[] = {0, 1, 3, 6, 12};

// LAPACK in both libraries, but blocked differently: agreement to a few ulps of the condition.
parity::Tol tol(ember::ScalarType t) {
  const bool dbl = ember::to_real_value_type(t) == ember::kDouble;
  return dbl ? parity::Tol{1e-9, 1e-9} : parity::Tol{2e-4, 2e-4};
}

std::vector<int64_t> with(std::vector<int64_t> b, std::initializer_list<int64_t> tail) {
  for (int64_t v : tail) b.push_back(v);
  return b;
}

// Random (batch..., m, n); `transposed` builds it as the transpose of a contiguous (n, m) one.
ember::Tensor make(const std::vector<int64_t>& b, int64_t m, int64_t n, ember::ScalarType dt, uint64_t seed,
                   bool transposed) {
  if (transposed) return parity::random(with(b, {n, m}), dt, seed).mT();
  return parity::random(with(b, {m, n}), dt, seed);
}
// Well conditioned square: A + n I (random entries in [-2, 2)).
ember::Tensor wellcond(const ember::Tensor& A) {
  const int64_t n = A.size(-1);
  return A + ember::eye(n, ember::TensorOptions().dtype(A.dtype())) * static_cast<double>(2 * n + 1);
}
// Symmetric (Hermitian) positive definite: A A^H + n I.
ember::Tensor spd(const ember::Tensor& A) {
  const int64_t n = A.size(-1);
  return A.matmul(A.adjoint()) + ember::eye(n, ember::TensorOptions().dtype(A.dtype())) * static_cast<double>(n + 1);
}

// Runs body(A, name) over every batch, size, dtype and layout for square matrices (float32 and
// float64, or the dtypes given).
template <class F>
void for_square(F&& body, const std::vector<ember::ScalarType>& types = {ember::kFloat, ember::kDouble}) {
  uint64_t seed = 100;
  for (ember::ScalarType dt : types)
    for (const auto& b : kBatches)
      for (int64_t n : kSizes)
        for (bool tr : {false, true}) {
          std::ostringstream name;
          name << dt << " batch" << ember::IntArrayRef(b) << " n=" << n << (tr ? " transposed" : "");
          body(make(b, n, n, dt, seed++, tr), name.str());
        }
}
// Rectangular shapes too.
const std::pair<int64_t, int64_t> kRect[] = {{0, 0}, {1, 1}, {3, 3}, {5, 3}, {3, 5}, {6, 2}, {0, 3}, {3, 0}};
template <class F>
void for_rect(F&& body, const std::vector<ember::ScalarType>& types = {ember::kFloat, ember::kDouble}) {
  uint64_t seed = 500;
  for (ember::ScalarType dt : types)
    for (const auto& b : kBatches)
      for (auto [m, n] : kRect)
        for (bool tr : {false, true}) {
          std::ostringstream name;
          name << dt << " batch" << ember::IntArrayRef(b) << " " << m << "x" << n << (tr ? " transposed" : "");
          body(make(b, m, n, dt, seed++, tr), name.str());
        }
}

torch::Tensor T(const ember::Tensor& e) { return to_torch(e); }

// ||X^H X - I|| small: the columns of X are orthonormal.
::testing::AssertionResult Orthonormal(const ember::Tensor& X) {
  const ember::Tensor g = X.adjoint().matmul(X);
  const ember::Tensor I = ember::eye(X.size(-1), ember::TensorOptions().dtype(X.dtype())).expand(g.sizes());
  return Close(g, T(I), tol(X.dtype()));
}

}  // namespace

TEST(Linalg2Parity, DetSlogdetLogdet) {
  for_square([](const ember::Tensor& A0, const std::string& name) {
    const ember::Tensor A = A0;  // random: any sign, may be ill conditioned but never singular in practice
    EXPECT_TRUE(Close(ember::linalg::det(A), torch::linalg::det(T(A)), tol(A.dtype()))) << name;
    auto [s, l] = ember::linalg::slogdet(A);
    auto [ts, tl] = torch::linalg::slogdet(T(A));
    EXPECT_TRUE(Close(s, ts, tol(A.dtype()))) << name;
    EXPECT_TRUE(Close(l, tl, tol(A.dtype()))) << name;
    EXPECT_TRUE(Close(ember::logdet(A), torch::logdet(T(A)), tol(A.dtype()))) << name;
    EXPECT_TRUE(Close(A.det(), T(A).det(), tol(A.dtype()))) << name;
  }, kFieldTypes);
  // singular: det 0, slogdet (0, -inf), logdet -inf
  const ember::Tensor S = ember::ones({3, 3}, ember::kDouble);
  EXPECT_TRUE(Close(ember::linalg_det(S), torch::linalg_det(T(S)), tol(ember::kDouble)));
  EXPECT_TRUE(Close(std::get<0>(ember::linalg_slogdet(S)), std::get<0>(torch::linalg_slogdet(T(S)))));
  EXPECT_TRUE(Close(std::get<1>(ember::linalg_slogdet(S)), std::get<1>(torch::linalg_slogdet(T(S)))));
}

TEST(Linalg2Parity, InvSolve) {
  for_square([](const ember::Tensor& A0, const std::string& name) {
    const ember::Tensor A = wellcond(A0);
    const auto t = tol(A.dtype());
    EXPECT_TRUE(Close(ember::linalg::inv(A), torch::linalg::inv(T(A)), t)) << name;
    EXPECT_TRUE(Close(ember::inverse(A), torch::inverse(T(A)), t)) << name;
    auto [X, info] = ember::linalg::inv_ex(A);
    auto [tX, tinfo] = torch::linalg_inv_ex(T(A));
    EXPECT_TRUE(Close(X, tX, t)) << name;
    EXPECT_TRUE(Close(info, tinfo)) << name;
    const int64_t n = A.size(-1);
    std::vector<int64_t> b(A.sizes().begin(), A.sizes().end() - 2);
    // matrix, vector and broadcast right-hand sides; left=false
    const ember::Tensor B = parity::random(with(b, {n, 2}), A.dtype(), 7);
    EXPECT_TRUE(Close(ember::linalg::solve(A, B), torch::linalg::solve(T(A), T(B), true), t)) << name;
    const ember::Tensor Bt = parity::random(with(b, {2, n}), A.dtype(), 8);
    EXPECT_TRUE(Close(ember::linalg::solve(A, Bt, false), torch::linalg::solve(T(A), T(Bt), false), t)) << name;
    const ember::Tensor v = parity::random(with(b, {n}), A.dtype(), 9);
    EXPECT_TRUE(Close(ember::linalg::solve(A, v), torch::linalg::solve(T(A), T(v), true), t)) << name;
    // B with more batch dims than A, broadcast (stride 0) in its first
    const ember::Tensor Bb = parity::random(with({1}, {n, 2}), A.dtype(), 10).expand(with({4}, {n, 2}));
    if (b.empty()) EXPECT_TRUE(Close(ember::linalg_solve(A, Bb), torch::linalg_solve(T(A), T(Bb)), t)) << name;
    auto [Y, yinfo] = ember::linalg::solve_ex(A, B);
    EXPECT_TRUE(Close(Y, torch::linalg_solve(T(A), T(B)), t)) << name;
    EXPECT_TRUE(Close(yinfo, std::get<1>(torch::linalg_solve_ex(T(A), T(B))))) << name;
  }, kFieldTypes);
  // _ex on singular input reports the info as LAPACK's getrf
  ember::Tensor S = ember::zeros({2, 3, 3}, ember::kDouble);
  S.select(0, 0).copy_(ember::eye(3, ember::kDouble));
  EXPECT_TRUE(Close(std::get<1>(ember::linalg_inv_ex(S)), std::get<1>(torch::linalg_inv_ex(T(S)))));
  // which pivot is zero depends on whether A or A^T is factored: libtorch factors A^T when A is
  // row-major, A otherwise
  const ember::Tensor Z = ember::tensor({0.0, 0.0, 1.0, 1.0}, ember::kDouble).reshape({2, 2});
  const ember::Tensor ZF = Z.mT().contiguous().mT();
  const ember::Tensor one = ember::ones({2, 1}, ember::kDouble);
  EXPECT_TRUE(Close(std::get<1>(ember::linalg_inv_ex(Z)), std::get<1>(torch::linalg_inv_ex(T(Z)))));
  EXPECT_TRUE(Close(std::get<1>(ember::linalg_inv_ex(ZF)), std::get<1>(torch::linalg_inv_ex(T(ZF)))));
  EXPECT_TRUE(Close(std::get<1>(ember::linalg_solve_ex(Z, one)), std::get<1>(torch::linalg_solve_ex(T(Z), T(one)))));
  EXPECT_TRUE(Close(std::get<1>(ember::linalg_solve_ex(ZF, one)), std::get<1>(torch::linalg_solve_ex(T(ZF), T(one)))));
}

TEST(Linalg2Parity, Cholesky) {
  for_square([](const ember::Tensor& A0, const std::string& name) {
    const ember::Tensor A = spd(A0);
    const auto t = tol(A.dtype());
    EXPECT_TRUE(Close(ember::linalg::cholesky(A), torch::linalg::cholesky(T(A)), t)) << name;
    EXPECT_TRUE(Close(ember::linalg_cholesky(A, true), torch::linalg_cholesky(T(A), true), t)) << name;
    EXPECT_TRUE(Close(ember::cholesky(A, true), torch::cholesky(T(A), true), t)) << name;
    auto [L, info] = ember::linalg::cholesky_ex(A);
    EXPECT_TRUE(Close(info, std::get<1>(torch::linalg_cholesky_ex(T(A))))) << name;
    const int64_t n = A.size(-1);
    std::vector<int64_t> b(A.sizes().begin(), A.sizes().end() - 2);
    const ember::Tensor B = parity::random(with(b, {n, 2}), A.dtype(), 11);
    const torch::Tensor tL = torch::linalg::cholesky(T(A));
    EXPECT_TRUE(Close(ember::cholesky_solve(B, L), torch::cholesky_solve(T(B), tL), t)) << name;
    EXPECT_TRUE(Close(ember::cholesky_solve(B, L.adjoint(), true), torch::cholesky_solve(T(B), tL.mH(), true), t))
        << name;
    EXPECT_TRUE(Close(ember::cholesky_inverse(L), torch::cholesky_inverse(tL), t)) << name;
  }, kFieldTypes);
  // not positive definite: the info names the failing minor
  ember::Tensor N = ember::eye(3, ember::kDouble);
  N.select(0, 1).select(0, 1).fill_(-1);
  EXPECT_TRUE(Close(std::get<1>(ember::linalg_cholesky_ex(N)), std::get<1>(torch::linalg_cholesky_ex(T(N)))));
}

TEST(Linalg2Parity, SolveTriangular) {
  for_square([](const ember::Tensor& A0, const std::string& name) {
    const ember::Tensor A = wellcond(A0);
    const auto t = tol(A.dtype());
    const int64_t n = A.size(-1);
    std::vector<int64_t> b(A.sizes().begin(), A.sizes().end() - 2);
    const ember::Tensor B = parity::random(with(b, {n, 3}), A.dtype(), 12);
    const ember::Tensor Bt = parity::random(with(b, {3, n}), A.dtype(), 13);
    for (bool upper : {false, true})
      for (bool unit : {false, true}) {
        // the op reads only the triangle it is told (the other one holds noise)
        EXPECT_TRUE(Close(ember::linalg::solve_triangular(A, B, upper, true, unit),
                          torch::linalg::solve_triangular(T(A), T(B), upper, true, unit), t))
            << name << " upper " << upper << " unit " << unit;
        EXPECT_TRUE(Close(ember::linalg::solve_triangular(A, Bt, upper, false, unit),
                          torch::linalg::solve_triangular(T(A), T(Bt), upper, false, unit), t))
            << name << " right, upper " << upper << " unit " << unit;
        for (bool trans : {false, true}) {
          auto [X, Ac] = ember::triangular_solve(B, A, upper, trans, unit);
          auto [tX, tAc] = torch::triangular_solve(T(B), T(A), upper, trans, unit);
          EXPECT_TRUE(Close(X, tX, t)) << name << " triangular_solve " << upper << trans << unit;
          EXPECT_TRUE(Close(Ac, tAc)) << name;
        }
      }
  }, kFieldTypes);
}

TEST(Linalg2Parity, LuFamily) {
  for_rect([](const ember::Tensor& A, const std::string& name) {
    const auto t = tol(A.dtype());
    auto [LU, piv, info] = ember::linalg::lu_factor_ex(A);
    auto [tLU, tpiv, tinfo] = torch::linalg_lu_factor_ex(T(A));
    EXPECT_TRUE(Close(LU, tLU, t)) << name;
    EXPECT_TRUE(Close(piv, tpiv)) << name;
    EXPECT_TRUE(Close(info, tinfo)) << name;
    auto [P, L, U] = ember::linalg::lu(A);
    auto [tP, tL, tU] = torch::linalg_lu(T(A));
    EXPECT_TRUE(Close(P, tP)) << name;
    EXPECT_TRUE(Close(L, tL, t)) << name;
    EXPECT_TRUE(Close(U, tU, t)) << name;
    auto [uP, uL, uU] = ember::lu_unpack(LU, piv);
    auto [tuP, tuL, tuU] = torch::lu_unpack(tLU, tpiv);
    EXPECT_TRUE(Close(uP, tuP)) << name;
    EXPECT_TRUE(Close(uL, tuL, t)) << name;
    EXPECT_TRUE(Close(uU, tuU, t)) << name;
  }, kFieldTypes);
  for_square([](const ember::Tensor& A0, const std::string& name) {
    const ember::Tensor A = wellcond(A0);
    const auto t = tol(A.dtype());
    auto [LU, piv] = ember::linalg::lu_factor(A);
    auto [tLU, tpiv] = torch::linalg_lu_factor(T(A));
    const int64_t n = A.size(-1);
    std::vector<int64_t> b(A.sizes().begin(), A.sizes().end() - 2);
    const ember::Tensor B = parity::random(with(b, {n, 2}), A.dtype(), 14);
    const ember::Tensor Bt = parity::random(with(b, {2, n}), A.dtype(), 15);
    for (bool adjoint : {false, true}) {
      EXPECT_TRUE(Close(ember::linalg::lu_solve(LU, piv, B, true, adjoint),
                        torch::linalg_lu_solve(tLU, tpiv, T(B), true, adjoint), t))
          << name << " adjoint " << adjoint;
      EXPECT_TRUE(Close(ember::linalg::lu_solve(LU, piv, Bt, false, adjoint),
                        torch::linalg_lu_solve(tLU, tpiv, T(Bt), false, adjoint), t))
          << name << " right, adjoint " << adjoint;
    }
    EXPECT_TRUE(Close(ember::lu_solve(B, LU, piv), torch::lu_solve(T(B), tLU, tpiv), t)) << name;
  }, kFieldTypes);
}

TEST(Linalg2Parity, Qr) {
  for_rect([](const ember::Tensor& A, const std::string& name) {
    const auto t = tol(A.dtype());
    const int64_t m = A.size(-2), n = A.size(-1);
    for (const char* mode : {"reduced", "complete", "r"}) {
      auto [Q, R] = ember::linalg::qr(A, mode);
      auto [tQ, tR] = torch::linalg::qr(T(A), mode);
      // |R| is unique up to the signs of its rows
      EXPECT_TRUE(Close(R.abs(), tR.abs(), t)) << name << " " << mode;
      if (std::string(mode) == "r") {
        EXPECT_EQ(Q.numel(), 0) << name;
        continue;
      }
      EXPECT_TRUE(Close(Q.matmul(R), T(A), t)) << name << " " << mode << ": Q R = A";
      EXPECT_TRUE(Orthonormal(Q)) << name << " " << mode;
      EXPECT_EQ(Q.sizes().vec(), tQ.sizes().vec()) << name << " " << mode;
      // the column spaces agree: Q Q^T of the first min(m, n) columns
      const int64_t k = std::min(m, n);
      const ember::Tensor q = Q.narrow(-1, 0, k);
      const torch::Tensor tq = tQ.narrow(-1, 0, k);
      EXPECT_TRUE(Close(q.matmul(q.adjoint()), tq.matmul(tq.mH()), t)) << name << " " << mode << " projector";
    }
    auto [Q, R] = ember::qr(A, false);
    auto [tQ, tR] = torch::qr(T(A), false);
    EXPECT_TRUE(Close(Q.matmul(R), T(A), t)) << name;
    EXPECT_EQ(Q.sizes().vec(), tQ.sizes().vec()) << name;
  }, kFieldTypes);
}

TEST(Linalg2Parity, GeqrfHouseholder) {
  for_rect([](const ember::Tensor& A, const std::string& name) {
    const auto t = tol(A.dtype());
    auto [a, tau] = ember::geqrf(A);
    auto [ta, ttau] = torch::geqrf(T(A));
    EXPECT_TRUE(Close(a, ta, t)) << name;
    EXPECT_TRUE(Close(tau, ttau, t)) << name;
    if (A.size(-2) >= A.size(-1)) {
      EXPECT_TRUE(Close(ember::linalg::householder_product(a, tau), torch::linalg_householder_product(ta, ttau), t))
          << name;
      EXPECT_TRUE(Close(ember::orgqr(a, tau), torch::orgqr(ta, ttau), t)) << name;
    }
    const int64_t m = A.size(-2);
    std::vector<int64_t> b(A.sizes().begin(), A.sizes().end() - 2);
    const ember::Tensor C = parity::random(with(b, {m, 2}), A.dtype(), 16);
    const ember::Tensor Ct = parity::random(with(b, {2, m}), A.dtype(), 17);
    for (bool trans : {false, true}) {
      EXPECT_TRUE(Close(ember::ormqr(a, tau, C, true, trans), torch::ormqr(ta, ttau, T(C), true, trans), t))
          << name << " left, transpose " << trans;
      EXPECT_TRUE(Close(ember::ormqr(a, tau, Ct, false, trans), torch::ormqr(ta, ttau, T(Ct), false, trans), t))
          << name << " right, transpose " << trans;
    }
  }, kFieldTypes);
}

TEST(Linalg2Parity, Eigh) {
  for_square([](const ember::Tensor& A0, const std::string& name) {
    const ember::Tensor A = A0 + A0.adjoint();
    const auto t = tol(A.dtype());
    for (const char* uplo : {"L", "U"}) {
      // only the named triangle is read: the other holds noise
      const ember::Tensor An = std::string(uplo) == "L" ? A.tril() + A0.triu(1) : A.triu() + A0.tril(-1);
      auto [L, V] = ember::linalg::eigh(An, uplo);
      auto [tL, tV] = torch::linalg::eigh(T(An), uplo);
      EXPECT_TRUE(Close(L, tL, t)) << name << " " << uplo;
      EXPECT_TRUE(Close(ember::linalg::eigvalsh(An, uplo), tL, t)) << name << " " << uplo;
      EXPECT_TRUE(Close((V * L.unsqueeze(-2)).matmul(V.adjoint()), T(A), t)) << name << " " << uplo << ": V L V^H = A";
      EXPECT_TRUE(Orthonormal(V)) << name;
      // eigenvectors up to sign: |V| (random eigenvalues are distinct)
      EXPECT_TRUE(Close(V.abs(), tV.abs(), parity::Tol{t.rtol * 100, t.atol * 100})) << name << " " << uplo;
    }
    auto [e, v] = ember::symeig(A, true, true);
    auto [te, tv] = torch::symeig(T(A), true, true);
    EXPECT_TRUE(Close(e, te, t)) << name;
    EXPECT_TRUE(Close(std::get<1>(ember::symeig(A)), std::get<1>(torch::symeig(T(A))))) << name;
  }, kFieldTypes);
}

TEST(Linalg2Parity, Svd) {
  for_rect([](const ember::Tensor& A, const std::string& name) {
    const auto t = tol(A.dtype());
    const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
    for (bool full : {false, true}) {
      auto [U, S, Vh] = ember::linalg::svd(A, full);
      auto [tU, tS, tVh] = torch::linalg::svd(T(A), full, c10::nullopt);
      EXPECT_TRUE(Close(S, tS, t)) << name << " full " << full;
      EXPECT_EQ(U.sizes().vec(), tU.sizes().vec()) << name;
      EXPECT_EQ(Vh.sizes().vec(), tVh.sizes().vec()) << name;
      EXPECT_TRUE(Orthonormal(U)) << name << " full " << full;
      EXPECT_TRUE(Orthonormal(Vh.adjoint())) << name << " full " << full;
      const ember::Tensor Uk = U.narrow(-1, 0, k), Vk = Vh.narrow(-2, 0, k);
      EXPECT_TRUE(Close((Uk * S.unsqueeze(-2)).matmul(Vk), T(A), t)) << name << " full " << full << ": U S Vh = A";
    }
    EXPECT_TRUE(Close(ember::linalg::svdvals(A), torch::linalg::svdvals(T(A), c10::nullopt), t)) << name;
    auto [U, S, V] = ember::svd(A);
    auto [tU, tS, tV] = torch::svd(T(A));
    EXPECT_TRUE(Close(S, tS, t)) << name;
    EXPECT_TRUE(Close((U * S.unsqueeze(-2)).matmul(V.adjoint()), T(A), t)) << name << " torch::svd: U S V^H = A";
    auto [U0, S0, V0] = ember::svd(A, true, false);
    auto [tU0, tS0, tV0] = torch::svd(T(A), true, false);
    EXPECT_TRUE(Close(U0, tU0)) << name;
    EXPECT_TRUE(Close(V0, tV0)) << name;
  }, kFieldTypes);
}

// Real matrices up to 8 x 8 take Ember's direct path (Householder QR, Jacobi eigh and SVD,
// substitution), libtorch LAPACK's: every order 1..8, random, ill-conditioned (singular values
// 1 .. 1e-6 in float64, 1 .. 1e-3 in float32) and repeated-eigenvalue input, batches {}, {3}, {0}.
TEST(Linalg2Parity, SmallDirectPath) {
  uint64_t seed = 900;
  for (ember::ScalarType dt : kTypes)
    for (const std::vector<int64_t>& b : {std::vector<int64_t>{}, {3}, {0}})
      for (int64_t n = 1; n <= 8; ++n) {
        const auto t = tol(dt);
        const ember::TensorOptions o = ember::TensorOptions().dtype(dt);
        std::ostringstream os;
        os << dt << " batch" << ember::IntArrayRef(b) << " n=" << n;
        const std::string name = os.str();
        const ember::Tensor X = parity::random(with(b, {n, n}), dt, seed++);
        const ember::Tensor Q0 = std::get<0>(ember::linalg::qr(parity::random(with(b, {n, n}), dt, seed++)));
        // Q0 diag(d) Q0^T: d geometric down to 1e-6 (1e-3 in float32), or in repeated groups
        const double low = dt == ember::kDouble ? 1e-6 : 1e-3;
        const ember::Tensor geometric = ember::logspace(0, std::log10(low), n, 10, o);
        const ember::Tensor repeated = (ember::arange(n, o) / 3).floor() + 1;  // 1, 1, 1, 2, 2, 2, 3, 3
        for (const auto& [A, what] : {std::pair{X, "random"}, {(Q0 * geometric).matmul(Q0.mT()), "ill-conditioned"},
                                      {(Q0 * repeated).matmul(Q0.mT()), "repeated"}}) {
          const std::string label = name + " " + what;
          // QR: the same reflectors as geqrf, so Q and R themselves (not only |R|) agree
          for (const char* mode : {"reduced", "complete", "r"}) {
            auto [Q, R] = ember::linalg::qr(A, mode);
            auto [tQ, tR] = torch::linalg::qr(T(A), mode);
            EXPECT_TRUE(Close(R, tR, t)) << label << " " << mode;
            if (std::string(mode) != "r") EXPECT_TRUE(Close(Q, tQ, t)) << label << " " << mode;
          }
          const ember::Tensor S = (A + A.mT()) * 0.5;
          auto [L, V] = ember::linalg::eigh(S);
          auto [tL, tV] = torch::linalg::eigh(T(S), "L");
          EXPECT_TRUE(Close(L, tL, t)) << label;
          EXPECT_TRUE(Orthonormal(V)) << label;
          EXPECT_TRUE(Close(S.matmul(V), T(V * L.unsqueeze(-2)), t)) << label << ": A V = V diag(L)";
          for (bool full : {false, true}) {
            auto [U, Sv, Vh] = ember::linalg::svd(A, full);
            auto [tU, tS, tVh] = torch::linalg::svd(T(A), full, c10::nullopt);
            EXPECT_TRUE(Close(Sv, tS, t)) << label;
            EXPECT_TRUE(Orthonormal(U) && Orthonormal(Vh.mT())) << label;
            EXPECT_TRUE(Close((U * Sv.unsqueeze(-2)).matmul(Vh), T(A), t)) << label << ": U S Vh = A";
          }
          EXPECT_TRUE(Close(ember::linalg::svdvals(A), torch::linalg::svdvals(T(A), c10::nullopt), t)) << label;
        }
        // rectangular QR and SVD: every m x n with m, n <= 8 around this order
        for (int64_t m : {std::max<int64_t>(1, n - 3), std::min<int64_t>(8, n + 2)}) {
          const ember::Tensor R = parity::random(with(b, {m, n}), dt, seed++);
          for (const char* mode : {"reduced", "complete"}) {
            auto [Q, Rr] = ember::linalg::qr(R, mode);
            auto [tQ, tR] = torch::linalg::qr(T(R), mode);
            EXPECT_TRUE(Close(Q, tQ, t) && Close(Rr, tR, t)) << name << " m=" << m << " " << mode;
          }
          for (bool full : {false, true}) {
            auto [U, Sv, Vh] = ember::linalg::svd(R, full);
            auto [tU, tS, tVh] = torch::linalg::svd(T(R), full, c10::nullopt);
            const int64_t k = std::min(m, n);
            EXPECT_TRUE(Close(Sv, tS, t)) << name << " m=" << m;
            EXPECT_EQ(U.sizes().vec(), tU.sizes().vec()) << name << " m=" << m;
            EXPECT_TRUE(Orthonormal(U) && Orthonormal(Vh.mT())) << name << " m=" << m << " full " << full;
            EXPECT_TRUE(Close((U.narrow(-1, 0, k) * Sv.unsqueeze(-2)).matmul(Vh.narrow(-2, 0, k)), T(R), t))
                << name << " m=" << m << " full " << full;
          }
        }
        const ember::Tensor W = wellcond(X);
        const ember::Tensor B = parity::random(with(b, {n, 3}), dt, seed++);
        const ember::Tensor Bt = parity::random(with(b, {3, n}), dt, seed++);
        for (bool upper : {false, true})
          for (bool unit : {false, true}) {
            EXPECT_TRUE(Close(ember::linalg::solve_triangular(W, B, upper, true, unit),
                              torch::linalg::solve_triangular(T(W), T(B), upper, true, unit), t))
                << name << " upper " << upper << " unit " << unit;
            EXPECT_TRUE(Close(ember::linalg::solve_triangular(W, Bt, upper, false, unit),
                              torch::linalg::solve_triangular(T(W), T(Bt), upper, false, unit), t))
                << name << " right, upper " << upper << " unit " << unit;
          }
      }
}

TEST(Linalg2Parity, Lstsq) {
  uint64_t seed = 900;
  for (ember::ScalarType dt : kFieldTypes)
    for (const auto& b : kBatches)
      for (auto [m, n] : {std::pair<int64_t, int64_t>{5, 3}, {3, 3}, {3, 5}, {6, 1}})
        for (const char* driver : {"gelsy", "gelsd", "gelss", "gels"}) {
          if (std::string(driver) == "gels" && m < n) continue;  // needs full rank; fine, but the solution is not min-norm
          const ember::Tensor A = make(b, m, n, dt, seed++, seed % 2 == 0);
          const ember::Tensor B = parity::random(with(b, {m, 2}), dt, seed++);
          const auto t = parity::Tol{tol(dt).rtol * 10, tol(dt).atol * 10};
          std::ostringstream name;
          name << dt << " batch" << ember::IntArrayRef(b) << " " << m << "x" << n << " " << driver;
          auto [X, res, rank, sv] = ember::linalg::lstsq(A, B, std::nullopt, driver);
          auto [tX, tres, trank, tsv] = torch::linalg::lstsq(T(A), T(B), c10::nullopt, driver);
          EXPECT_TRUE(Close(X, tX, t)) << name.str();
          EXPECT_TRUE(Close(res, tres, t)) << name.str();
          EXPECT_TRUE(Close(rank, trank)) << name.str();
          EXPECT_TRUE(Close(sv, tsv, t)) << name.str();
        }
  // a vector right-hand side, the default driver
  const ember::Tensor A = parity::random({4, 2}, ember::kDouble, 1), v = parity::random({4}, ember::kDouble, 2);
  EXPECT_TRUE(Close(std::get<0>(ember::linalg_lstsq(A, v.unsqueeze(-1))), std::get<0>(torch::linalg_lstsq(T(A), T(v).unsqueeze(-1))), tol(ember::kDouble)));
}

TEST(Linalg2Parity, Norms) {
  for_rect([](const ember::Tensor& A, const std::string& name) {
    const auto t = tol(A.dtype());
    const bool empty = A.numel() == 0;
    for (double ord : {1.0, -1.0, 2.0, -2.0, kInf, -kInf}) {
      if (empty && (ord < 0 || std::isinf(ord) || std::abs(ord) == 2 || ord == 1)) continue;  // libtorch raises
      EXPECT_TRUE(Close(ember::linalg::matrix_norm(A, ord), torch::linalg::matrix_norm(T(A), ord, {-2, -1}, false, c10::nullopt), t))
          << name << " ord " << ord;
    }
    EXPECT_TRUE(Close(ember::linalg::matrix_norm(A, "fro"), torch::linalg::matrix_norm(T(A), "fro", {-2, -1}, false, c10::nullopt), t)) << name;
    EXPECT_TRUE(Close(ember::linalg_matrix_norm(A, "nuc", {-2, -1}, true), torch::linalg_matrix_norm(T(A), "nuc", {-2, -1}, true), t)) << name;
    if (A.dim() >= 3 && !empty) {
      EXPECT_TRUE(Close(ember::linalg_matrix_norm(A, 1, {0, -1}), torch::linalg_matrix_norm(T(A), 1, {0, -1}), t)) << name;
      EXPECT_TRUE(Close(ember::linalg_matrix_norm(A, -2, {-1, 0}, true), torch::linalg_matrix_norm(T(A), -2, {-1, 0}, true), t)) << name;
      EXPECT_TRUE(Close(ember::linalg_matrix_norm(A, kInf, {-1, 0}, true), torch::linalg_matrix_norm(T(A), kInf, {-1, 0}, true), t)) << name;
    }
    for (double ord : {2.0, 1.0, 0.0, 3.5, -1.0, kInf, -kInf}) {
      if (empty && (ord < 0 || std::isinf(ord))) continue;
      EXPECT_TRUE(Close(ember::linalg::vector_norm(A, ord), torch::linalg::vector_norm(T(A), ord, c10::nullopt, false, c10::nullopt), t))
          << name << " vector ord " << ord;
      if (A.size(-1) > 0 || ord >= 0 && !std::isinf(ord)) {
        EXPECT_TRUE(Close(ember::linalg_vector_norm(A, ord, {-1}, true), torch::linalg_vector_norm(T(A), ord, {-1}, true), t))
            << name << " vector ord " << ord << " dim -1";
      }
    }
    EXPECT_TRUE(Close(ember::linalg_vector_norm(A, 2, std::nullopt, false, ember::kDouble), torch::linalg_vector_norm(T(A), 2, c10::nullopt, false, torch::kDouble), t)) << name;
    EXPECT_TRUE(Close(ember::linalg::norm(A), torch::linalg::norm(T(A), c10::nullopt, c10::nullopt, false, c10::nullopt), t)) << name;
    if (A.dim() == 2) {
      EXPECT_TRUE(Close(ember::linalg_norm(A, "fro"), torch::linalg_norm(T(A), "fro"), t)) << name;
      if (!empty) EXPECT_TRUE(Close(ember::linalg_norm(A, 1), torch::linalg_norm(T(A), 1), t)) << name;
    }
    EXPECT_TRUE(Close(ember::linalg_norm(A, 3, std::vector<int64_t>{-1}), torch::linalg_norm(T(A), 3, std::vector<int64_t>{-1}), t)) << name;
  });
}

// Norms of complex input are those of the moduli (real results).
TEST(Linalg2Parity, ComplexNorms) {
  for_rect([](const ember::Tensor& A, const std::string& name) {
    const auto t = tol(A.dtype());
    if (A.numel() == 0) return;
    for (double ord : {2.0, 1.0, 0.0, 3.5, -1.0, kInf, -kInf})
      EXPECT_TRUE(Close(ember::linalg_vector_norm(A, ord, {-1}, true), torch::linalg_vector_norm(T(A), ord, {-1}, true), t))
          << name << " vector ord " << ord;
    for (double ord : {1.0, -1.0, 2.0, -2.0, kInf, -kInf})
      EXPECT_TRUE(Close(ember::linalg::matrix_norm(A, ord), torch::linalg::matrix_norm(T(A), ord, {-2, -1}, false, c10::nullopt), t))
          << name << " ord " << ord;
    EXPECT_TRUE(Close(ember::linalg::matrix_norm(A, "fro"), torch::linalg::matrix_norm(T(A), "fro", {-2, -1}, false, c10::nullopt), t)) << name;
    EXPECT_TRUE(Close(ember::linalg::matrix_norm(A, "nuc"), torch::linalg::matrix_norm(T(A), "nuc", {-2, -1}, false, c10::nullopt), t)) << name;
  }, {ember::kComplexFloat, ember::kComplexDouble});
}

TEST(Linalg2Parity, CondRankPinv) {
  for_rect([](const ember::Tensor& A, const std::string& name) {
    const auto t = tol(A.dtype());
    const parity::Tol loose{t.rtol * 20, t.atol * 20};
    if (A.numel() > 0) {
      EXPECT_TRUE(Close(ember::linalg::cond(A), torch::linalg_cond(T(A)), loose)) << name;
      EXPECT_TRUE(Close(ember::linalg_cond(A, -2), torch::linalg_cond(T(A), -2), loose)) << name;
      if (A.size(-1) == A.size(-2)) {
        const ember::Tensor W = wellcond(A);
        for (double p : {1.0, -1.0, kInf, -kInf})
          EXPECT_TRUE(Close(ember::linalg_cond(W, p), torch::linalg_cond(T(W), p), loose)) << name << " p " << p;
        EXPECT_TRUE(Close(ember::linalg_cond(W, "fro"), torch::linalg_cond(T(W), "fro"), loose)) << name;
        EXPECT_TRUE(Close(ember::linalg_cond(W, "nuc"), torch::linalg_cond(T(W), "nuc"), loose)) << name;
      }
    }
    EXPECT_TRUE(Close(ember::linalg::matrix_rank(A), torch::linalg::matrix_rank(T(A), c10::optional<double>(), c10::optional<double>(), false))) << name;
    // rank-deficient: a product through a thin middle
    if (A.size(-1) > 1 && A.size(-2) > 1) {
      const ember::Tensor D = A.narrow(-1, 0, 1).matmul(A.narrow(-2, 0, 1));
      EXPECT_TRUE(Close(ember::linalg_matrix_rank(D), torch::linalg_matrix_rank(T(D)))) << name;
      EXPECT_TRUE(Close(ember::linalg_matrix_rank(D, 0.5), torch::linalg_matrix_rank(T(D), 0.5))) << name;
      EXPECT_TRUE(Close(ember::linalg_pinv(D), torch::linalg_pinv(T(D)), loose)) << name;
    }
    EXPECT_TRUE(Close(ember::linalg::pinv(A), torch::linalg::pinv(T(A), 1e-15, false), loose)) << name;
    EXPECT_TRUE(Close(ember::pinverse(A), torch::pinverse(T(A)), loose)) << name;
    if (A.size(-1) == A.size(-2)) {
      const ember::Tensor H = A + A.adjoint();
      EXPECT_TRUE(Close(ember::linalg_pinv(H, std::optional<double>(), std::optional<double>(), true), torch::linalg_pinv(T(H), c10::optional<double>(), c10::optional<double>(), true), loose)) << name;
      EXPECT_TRUE(Close(ember::linalg_matrix_rank(H, std::optional<double>(), std::optional<double>(), true), torch::linalg_matrix_rank(T(H), c10::optional<double>(), c10::optional<double>(), true))) << name;
    }
  }, kFieldTypes);
}

TEST(Linalg2Parity, MatrixFunctions) {
  for_square([](const ember::Tensor& A0, const std::string& name) {
    const auto t = tol(A0.dtype());
    const ember::Tensor A = A0 * 0.5;
    for (int64_t p : {0, 1, 2, 3, 6, -1, -3}) {
      const ember::Tensor M = p < 0 ? wellcond(A0) / static_cast<double>(2 * A0.size(-1) + 1) : A;
      EXPECT_TRUE(Close(ember::linalg::matrix_power(M, p), torch::linalg::matrix_power(T(M), p), t)) << name << " p " << p;
    }
    EXPECT_TRUE(Close(A.matrix_power(2), T(A).matrix_power(2), t)) << name;
    EXPECT_TRUE(Close(ember::linalg::matrix_exp(A), torch::linalg::matrix_exp(T(A)), t)) << name;
    const ember::Tensor big = A0 * 3.0;  // needs scaling and squaring
    // complex entries reach |exp| ~ 1e6 at n = 12, where both libraries' float rounding of the
    // largest entries (libtorch's own complex64 vs complex128: ~1 absolute) swamps the smaller ones
    const torch::Tensor tbig = torch::matrix_exp(T(big));
    const double atol = ember::is_complex_type(A0.dtype()) && tbig.numel() > 0
                            ? std::max(t.atol * 10, t.rtol * 1e-2 * tbig.abs().max().item<double>())
                            : t.atol * 10;
    EXPECT_TRUE(Close(ember::matrix_exp(big), tbig, parity::Tol{t.rtol * 10, atol})) << name;
    EXPECT_TRUE(Close(ember::linalg::diagonal(A), torch::linalg_diagonal(T(A)))) << name;
    EXPECT_TRUE(Close(ember::linalg_diagonal(A, 1), torch::linalg_diagonal(T(A), 1))) << name;
  }, kFieldTypes);
}

TEST(Linalg2Parity, Products) {
  uint64_t seed = 1000;
  for (ember::ScalarType dt : kTypes) {
    const auto t = tol(dt);
    // multi_dot: vectors at the ends, several chains (the order is chosen by cost)
    const std::vector<std::vector<std::vector<int64_t>>> chains = {
        {{3, 4}, {4, 5}}, {{4}, {4, 5}, {5, 2}}, {{3, 4}, {4, 50}, {50, 2}, {2}}, {{10, 1}, {1, 10}, {10, 1}},
        {{2, 0}, {0, 3}}, {{5}, {5}}};
    for (const auto& c : chains) {
      std::vector<ember::Tensor> e;
      std::vector<torch::Tensor> tt;
      for (const auto& s : c) {
        e.push_back(parity::random(s, dt, seed++));
        tt.push_back(T(e.back()));
      }
      EXPECT_TRUE(Close(ember::linalg::multi_dot(e), torch::linalg::multi_dot(tt), t)) << dt << " chain of " << c.size();
      if (c[0].size() == 2 && c.back().size() == 2)
        EXPECT_TRUE(Close(ember::chain_matmul(e), torch::chain_matmul(tt), t)) << dt;
    }
    // cross / vecdot with broadcasting and a non-last dim
    const ember::Tensor a = parity::random({4, 3}, dt, seed++), b = parity::random({2, 1, 3}, dt, seed++);
    EXPECT_TRUE(Close(ember::linalg::cross(a.unsqueeze(0), b), torch::linalg_cross(T(a).unsqueeze(0), T(b)), t)) << dt;
    const ember::Tensor a3 = parity::random({2, 3, 5}, dt, seed++), b3 = parity::random({2, 3, 5}, dt, seed++).mT().contiguous().mT();
    EXPECT_TRUE(Close(ember::linalg_cross(a3, b3, 1), torch::linalg_cross(T(a3), T(b3), 1), t)) << dt;
    EXPECT_TRUE(Close(ember::linalg::vecdot(a, b), torch::linalg_vecdot(T(a), T(b)), t)) << dt;
    EXPECT_TRUE(Close(ember::linalg_vecdot(a3, b3, 0), torch::linalg_vecdot(T(a3), T(b3), 0), t)) << dt;
    // vander
    const ember::Tensor x = parity::random({2, 4}, dt, seed++);
    EXPECT_TRUE(Close(ember::linalg::vander(x), torch::linalg_vander(T(x)), t)) << dt;
    EXPECT_TRUE(Close(ember::linalg_vander(x, 6), torch::linalg_vander(T(x), 6), t)) << dt;
    // tensorinv / tensorsolve
    const ember::Tensor Ti = wellcond(parity::random({6, 6}, dt, seed++)).reshape({6, 2, 3});
    EXPECT_TRUE(Close(ember::linalg::tensorinv(Ti, 1), torch::linalg_tensorinv(T(Ti), 1), t)) << dt;
    const ember::Tensor Ti2 = wellcond(parity::random({6, 6}, dt, seed++)).reshape({2, 3, 6});
    EXPECT_TRUE(Close(ember::linalg_tensorinv(Ti2, 2), torch::linalg_tensorinv(T(Ti2), 2), t)) << dt;
    const ember::Tensor Bs = parity::random({2, 3}, dt, seed++);
    EXPECT_TRUE(Close(ember::linalg::tensorsolve(Ti2, Bs), torch::linalg_tensorsolve(T(Ti2), T(Bs)), t)) << dt;
    EXPECT_TRUE(Close(ember::linalg_tensorsolve(Ti2.permute({2, 0, 1}), Bs, std::vector<int64_t>{0}),
                      torch::linalg_tensorsolve(T(Ti2).permute({2, 0, 1}), T(Bs), std::vector<int64_t>{0}), t))
        << dt;
  }
}

// ---- eig / eigvals ----------------------------------------------------------------------------------

namespace {
// Pairs each of Ember's eigenvalues (..., n) with the nearest of libtorch's in the same matrix
// (greedily, each used once): perm[b][j] is the index in libtorch's list. Fails when a pair is
// farther apart than the tolerance.
::testing::AssertionResult MatchEigenvalues(const ember::Tensor& L, const torch::Tensor& tL, parity::Tol t,
                                            std::vector<std::vector<int64_t>>& perm) {
  const int64_t n = L.size(-1), nb = n == 0 ? 0 : L.numel() / n;
  const torch::Tensor e = T(L).to(torch::kComplexDouble).reshape({nb, n}).contiguous();
  const torch::Tensor r = tL.to(torch::kComplexDouble).reshape({nb, n}).contiguous();
  perm.assign(nb, std::vector<int64_t>(n));
  const auto* pe = e.data_ptr<c10::complex<double>>();
  const auto* pr = r.data_ptr<c10::complex<double>>();
  for (int64_t b = 0; b < nb; ++b) {
    std::vector<bool> used(n, false);
    for (int64_t j = 0; j < n; ++j) {
      const std::complex<double> x(pe[b * n + j].real(), pe[b * n + j].imag());
      int64_t best = -1;
      double dist = 0;
      for (int64_t k = 0; k < n; ++k) {
        if (used[k]) continue;
        const double d = std::abs(x - std::complex<double>(pr[b * n + k].real(), pr[b * n + k].imag()));
        if (best < 0 || d < dist) {
          best = k;
          dist = d;
        }
      }
      used[best] = true;
      perm[b][j] = best;
      if (dist > t.atol + t.rtol * std::abs(x))
        return ::testing::AssertionFailure() << "eigenvalue " << j << " of matrix " << b << ": " << x
                                             << " has no match in libtorch's (nearest " << dist << " away)";
    }
  }
  return ::testing::AssertionSuccess();
}

// Ember's eigenvectors (columns of V) against libtorch's paired by perm: equal up to a phase,
// |v^H v_torch| = 1 for unit vectors.
::testing::AssertionResult SameEigenvectors(const ember::Tensor& V, const torch::Tensor& tV,
                                            const std::vector<std::vector<int64_t>>& perm, double tol) {
  const int64_t n = V.size(-1);
  if (n == 0) return ::testing::AssertionSuccess();
  const torch::Tensor e = T(V).to(torch::kComplexDouble).reshape({-1, n, n});
  const torch::Tensor r = tV.to(torch::kComplexDouble).reshape({-1, n, n});
  for (int64_t b = 0; b < e.size(0); ++b)
    for (int64_t j = 0; j < n; ++j) {
      const torch::Tensor v = e[b].select(1, j), w = r[b].select(1, perm[b][j]);
      const double nv = torch::linalg::vector_norm(v, 2, c10::nullopt, false, c10::nullopt).item<double>();
      const double overlap = torch::abs((v.conj() * w).sum()).item<double>();
      if (std::abs(nv - 1) > tol || std::abs(overlap - 1) > tol)
        return ::testing::AssertionFailure() << "eigenvector " << j << " of matrix " << b << ": norm " << nv
                                             << ", |v^H v_torch| " << overlap;
    }
  return ::testing::AssertionSuccess();
}
}  // namespace

TEST(Linalg2Parity, EigEigvals) {
  for_square(
      [](const ember::Tensor& A, const std::string& name) {
        const auto t = tol(A.dtype());
        const bool dbl = ember::to_real_value_type(A.dtype()) == ember::kDouble;
        const ember::ScalarType ct = dbl ? ember::kComplexDouble : ember::kComplexFloat;
        auto [L, V] = ember::linalg::eig(A);
        auto [tL, tV] = torch::linalg::eig(T(A));
        EXPECT_EQ(L.dtype(), ct) << name;
        EXPECT_EQ(V.dtype(), ct) << name;
        EXPECT_EQ(L.sizes().vec(), tL.sizes().vec()) << name;
        EXPECT_EQ(V.sizes().vec(), tV.sizes().vec()) << name;
        if (V.numel() > 0) EXPECT_EQ(V.strides().vec(), tV.strides().vec()) << name << ": column-major as libtorch's";
        std::vector<std::vector<int64_t>> perm;
        const parity::Tol loose{t.rtol * 10, t.atol * 10};
        EXPECT_TRUE(MatchEigenvalues(L, tL, loose, perm)) << name;
        EXPECT_TRUE(SameEigenvectors(V, tV, perm, dbl ? 1e-8 : 1e-3)) << name;
        // A V = V diag(L)
        EXPECT_TRUE(Close(A.to(ct).matmul(V), T(V * L.unsqueeze(-2)), loose)) << name << ": A V = V diag(L)";
        const ember::Tensor ev = ember::linalg::eigvals(A);
        EXPECT_TRUE(MatchEigenvalues(ev, torch::linalg::eigvals(T(A)), loose, perm)) << name << " eigvals";
        EXPECT_TRUE(Close(ev, T(L), t)) << name << ": eigvals = eig's values";
      },
      kFieldTypes);
  // a real matrix with complex pairs (a rotation), and a defective-free symmetric one
  const ember::Tensor R = ember::tensor({0.0, -2.0, 1.0, 2.0, 0.0, 0.5, 0.0, 0.0, 3.0}, ember::kDouble).reshape({3, 3});
  std::vector<std::vector<int64_t>> perm;
  auto [L, V] = ember::linalg::eig(R);
  auto [tL, tV] = torch::linalg::eig(T(R));
  EXPECT_TRUE(MatchEigenvalues(L, tL, tol(ember::kDouble), perm));
  EXPECT_TRUE(SameEigenvectors(V, tV, perm, 1e-9));
  // out= forms: complex results of either precision; a real out is refused as libtorch does
  for (ember::ScalarType ot : {ember::kComplexFloat, ember::kComplexDouble}) {
    ember::Tensor lo = ember::empty({0}, ot), vo = ember::empty({0}, ot), eo = ember::empty({0}, ot);
    ember::linalg::eig_out(lo, vo, R);
    ember::linalg::eigvals_out(eo, R);
    EXPECT_TRUE(Close(lo, tL.to(parity::to_torch(ot)), tol(ot))) << ot;
    EXPECT_TRUE(Close(eo, tL.to(parity::to_torch(ot)), tol(ot))) << ot;
    EXPECT_TRUE(Close(vo, tV.to(parity::to_torch(ot)), tol(ot))) << ot;
  }
}

// Gradients of phase-invariant losses against libtorch's on the same inputs.
TEST(Linalg2Parity, EigGradients) {
  uint64_t seed = 900;
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble, ember::kComplexFloat, ember::kComplexDouble})
    for (const auto& b : kBatches) {
      const ember::Tensor A0 = parity::random(with(b, {4, 4}), dt, seed++);
      const ember::Tensor A = A0.detach().requires_grad_();
      const torch::Tensor tA = T(A0).detach().requires_grad_();
      auto [L, V] = ember::linalg::eig(A);
      auto [tL, tV] = torch::linalg::eig(tA);
      (ember::real(L).sum() + ember::imag(L).pow(2).sum() + V.abs().pow(3).sum()).backward();
      (torch::real(tL).sum() + torch::imag(tL).pow(2).sum() + tV.abs().pow(3).sum()).backward();
      const auto t = tol(dt);
      EXPECT_TRUE(Close(A.grad(), tA.grad(), parity::Tol{t.rtol * 10, t.atol * 10})) << dt << " " << ember::IntArrayRef(b);
      const ember::Tensor B = A0.detach().requires_grad_();
      const torch::Tensor tB = T(A0).detach().requires_grad_();
      ember::linalg::eigvals(B).abs().sum().backward();
      torch::linalg::eigvals(tB).abs().sum().backward();
      EXPECT_TRUE(Close(B.grad(), tB.grad(), parity::Tol{t.rtol * 10, t.atol * 10})) << dt << " " << ember::IntArrayRef(b);
    }
}

// Errors name the op and say what is wrong, as PyTorch's.
TEST(Linalg2Parity, ErrorMessagesMatchLibtorch) {
  const auto same = [](const std::function<void()>& e, const std::function<void()>& t) {
    std::string em, tm;
    try {
      e();
    } catch (const ember::Error& x) {
      em = x.what();
    }
    try {
      t();
    } catch (const c10::Error& x) {
      tm = x.what_without_backtrace();
    }
    EXPECT_FALSE(em.empty());
    EXPECT_FALSE(tm.empty());
    // libtorch's message is the first line of what it reports; Ember names the op in front of
    // the few messages where libtorch does not
    tm = tm.substr(0, tm.find('\n'));
    const bool prefixed = em.size() >= tm.size() + 2 && em.compare(em.size() - tm.size(), tm.size(), tm) == 0 &&
                          em.compare(em.size() - tm.size() - 2, 2, ": ") == 0;
    if (!prefixed) EXPECT_EQ(em, tm);
  };
  ember::Tensor S = ember::zeros({2, 3, 3}, ember::kDouble);
  S.select(0, 0).copy_(ember::eye(3, ember::kDouble));
  same([&] { ember::linalg::inv(S); }, [&] { torch::linalg::inv(T(S)); });
  same([&] { ember::linalg::inv(S.select(0, 1)); }, [&] { torch::linalg::inv(T(S).select(0, 1)); });
  same([&] { ember::linalg::solve(S, S); }, [&] { torch::linalg::solve(T(S), T(S), true); });
  same([&] { ember::linalg::cholesky(-S); }, [&] { torch::linalg::cholesky(-T(S)); });
  same([&] { ember::linalg::inv(ember::ones({2, 3})); }, [&] { torch::linalg::inv(torch::ones({2, 3})); });
  same([&] { ember::linalg::det(ember::ones({3})); }, [&] { torch::linalg::det(torch::ones({3})); });
  same([&] { ember::linalg::inv(ember::ones({3, 3}, ember::kLong)); }, [&] { torch::linalg::inv(torch::ones({3, 3}, torch::kLong)); });
  same([&] { ember::linalg::lu_factor(S.select(0, 1)); }, [&] { torch::linalg::lu_factor(T(S).select(0, 1), true); });
  same([&] { ember::linalg::matrix_power(ember::ones({2, 3}), 2); }, [&] { torch::linalg::matrix_power(torch::ones({2, 3}), 2); });
  same([&] { ember::linalg::eigh(ember::eye(3), "X"); }, [&] { torch::linalg::eigh(torch::eye(3), "X"); });
  same([&] { ember::linalg::eig(ember::ones({2, 3})); }, [&] { torch::linalg::eig(torch::ones({2, 3})); });
  same([&] { ember::linalg::eigvals(ember::ones({2, 3})); }, [&] { torch::linalg::eigvals(torch::ones({2, 3})); });
  same([&] { ember::linalg::eig(ember::ones({3})); }, [&] { torch::linalg::eig(torch::ones({3})); });
  ember::Tensor N = ember::ones({2, 3, 3});
  N.select(0, 1).select(0, 2).fill_(std::numeric_limits<float>::quiet_NaN());
  same([&] { ember::linalg::eig(N); }, [&] { torch::linalg::eig(T(N)); });
  N.select(0, 1).select(0, 2).fill_(kInf);
  same([&] { ember::linalg::eig(N); }, [&] { torch::linalg::eig(T(N)); });
  ember::Tensor f = ember::empty({0}), v = ember::empty({0});
  torch::Tensor tf = torch::empty({0}), tv = torch::empty({0});
  same([&] { ember::linalg::eig_out(f, v, ember::eye(3)); }, [&] { torch::linalg::eig_out(tf, tv, torch::eye(3)); });
  same([&] { ember::linalg::eigvals_out(f, ember::eye(3)); }, [&] { torch::linalg::eigvals_out(tf, torch::eye(3)); });
}

}  // namespace EMBER_UNITY_FILE
