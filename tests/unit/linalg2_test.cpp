// torch.linalg: gradcheck (float64, central differences) of every differentiable op, with
// gradgradcheck where the backward is itself written with differentiable ops; decompositions
// with sign freedom are checked through gauge-invariant functions of their outputs (as
// PyTorch's tests do); and bad input raising ember::Error with PyTorch's words.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ember/ember.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;  // NOLINT
using autograd::variable_list;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor rnd(IntArrayRef sizes, uint64_t seed) {
  Generator g(seed);
  return rand(sizes, &g, TensorOptions().dtype(kDouble)) * 2 - 1;
}
// A well-conditioned square batch requiring grad.
Tensor wellcond(IntArrayRef sizes, uint64_t seed) {
  const int64_t n = sizes.back();
  return (rnd(sizes, seed) + eye(n, kDouble) * static_cast<double>(n)).requires_grad_();
}
Tensor leaf(IntArrayRef sizes, uint64_t seed) { return rnd(sizes, seed).requires_grad_(); }
// Symmetric positive definite from any square X: X X^T + n I (so gradcheck may perturb X freely).
Tensor spd_of(const Tensor& X) {
  return X.matmul(X.mT()) + eye(X.size(-1), kDouble) * static_cast<double>(X.size(-1));
}
Tensor sym_of(const Tensor& X) { return X + X.mT(); }
// A complex128 leaf with parts in [-1, 1).
Tensor cleaf(IntArrayRef sizes, uint64_t seed) { return make_complex(rnd(sizes, seed), rnd(sizes, seed + 1000)).requires_grad_(); }

std::vector<int64_t> concat_shape(std::vector<int64_t> a, std::initializer_list<int64_t> b) {
  a.insert(a.end(), b);
  return a;
}

bool check(const std::function<Tensor(const variable_list&)>& f, const variable_list& in, bool twice = false) {
  const bool once = autograd::gradcheck(f, in);
  return twice ? once && autograd::gradgradcheck(f, in) : once;
}
bool check_multi(const std::function<variable_list(const variable_list&)>& f, const variable_list& in) {
  return autograd::gradcheck(f, in);
}

// lu_factor's LU (and its second order) and lu's L and U, differentiated at R.
void expect_lu_gradients(const Tensor& R) {
  EXPECT_TRUE(check([](const variable_list& v) { return std::get<0>(linalg::lu_factor(v[0])); }, {R}, true))
      << R.sizes();
  EXPECT_TRUE(check_multi(
      [](const variable_list& v) {
        auto [P, L, U] = linalg::lu(v[0]);
        return variable_list{L, U};
      },
      {R}))
      << R.sizes();
}

}  // namespace

TEST(Linalg2Grad, DetSlogdetLogdet) {
  const Tensor A = wellcond({2, 3, 3}, 1);
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::det(v[0]); }, {A}, true));
  EXPECT_TRUE(check([](const variable_list& v) { return std::get<1>(linalg::slogdet(v[0])); }, {A}, true));
  EXPECT_TRUE(check([](const variable_list& v) { return logdet(spd_of(v[0])); }, {leaf({3, 3}, 2)}));
  EXPECT_TRUE(check([](const variable_list& v) { return v[0].det(); }, {wellcond({1, 1}, 3)}));
  // at a singular matrix det's gradient is the cofactor matrix
  Tensor S = tensor({1.0, 2.0, 2.0, 4.0}).reshape({2, 2}).requires_grad_();
  linalg::det(S).backward();
  EXPECT_TRUE(allclose(S.grad(), tensor({4.0, -2.0, -2.0, 1.0}).reshape({2, 2})));
}

TEST(Linalg2Grad, InvSolve) {
  const Tensor A = wellcond({2, 3, 3}, 4);
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::inv(v[0]); }, {A}, true));
  EXPECT_TRUE(check([](const variable_list& v) { return std::get<0>(linalg::inv_ex(v[0])); }, {A}));
  EXPECT_TRUE(check([](const variable_list& v) { return inverse(v[0]); }, {A}));
  const Tensor B = leaf({2, 3, 2}, 5);
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::solve(v[0], v[1]); }, {A, B}, true));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::solve(v[0], v[1], false); }, {A, leaf({2, 2, 3}, 6)}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::solve(v[0], v[1]); }, {A, leaf({2, 3}, 7)}));
  // broadcast: one A for a batch of B, one B for a batch of A
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::solve(v[0], v[1]); }, {wellcond({3, 3}, 8), B}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::solve(v[0], v[1]); }, {A, leaf({3, 2}, 9)}));
  EXPECT_TRUE(check([](const variable_list& v) { return std::get<0>(linalg::solve_ex(v[0], v[1])); }, {A, B}));
}

TEST(Linalg2Grad, Cholesky) {
  const Tensor X = leaf({2, 3, 3}, 10);
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::cholesky(spd_of(v[0])); }, {X}, true));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg_cholesky(spd_of(v[0]), true); }, {X}));
  EXPECT_TRUE(check([](const variable_list& v) { return std::get<0>(linalg::cholesky_ex(spd_of(v[0]))); }, {X}));
  EXPECT_TRUE(check([](const variable_list& v) { return cholesky(spd_of(v[0])); }, {X}));
  const Tensor L = linalg::cholesky(spd_of(rnd({3, 3}, 11))).detach().requires_grad_();
  EXPECT_TRUE(check([](const variable_list& v) { return cholesky_solve(v[1], v[0]); }, {L, leaf({3, 2}, 12)}));
  EXPECT_TRUE(check([](const variable_list& v) { return cholesky_inverse(v[0]); }, {L}));
}

TEST(Linalg2Grad, SolveTriangular) {
  const Tensor A = wellcond({2, 3, 3}, 13), B = leaf({2, 3, 2}, 14), Bt = leaf({2, 2, 3}, 15);
  for (bool upper : {false, true})
    for (bool unit : {false, true}) {
      EXPECT_TRUE(check([=](const variable_list& v) { return linalg::solve_triangular(v[0], v[1], upper, true, unit); },
                        {A, B}, true))
          << upper << unit;
      EXPECT_TRUE(check([=](const variable_list& v) { return linalg::solve_triangular(v[0], v[1], upper, false, unit); },
                        {A, Bt}))
          << upper << unit;
    }
  EXPECT_TRUE(check([](const variable_list& v) { return std::get<0>(triangular_solve(v[1], v[0], true, true)); }, {A, B}));
}

TEST(Linalg2Grad, Lu) {
  const Tensor A = wellcond({2, 3, 3}, 16);
  EXPECT_TRUE(check([](const variable_list& v) { return std::get<0>(linalg::lu_factor(v[0])); }, {A}, true));
  EXPECT_TRUE(check_multi(
      [](const variable_list& v) {
        auto [P, L, U] = linalg::lu(v[0]);
        return variable_list{L, U};
      },
      {A}));
  const Tensor B = leaf({2, 3, 2}, 17);
  EXPECT_TRUE(check(
      [](const variable_list& v) {
        auto [LU, piv] = linalg::lu_factor(v[0]);
        return linalg::lu_solve(LU, piv, v[1]);
      },
      {A, B}));
  EXPECT_TRUE(check(
      [](const variable_list& v) {
        auto [LU, piv] = linalg::lu_factor(v[0]);
        return linalg::lu_solve(LU, piv, v[1], false, true);
      },
      {A, leaf({2, 2, 3}, 18)}));
  // rectangular: wide (U = [U1 | U2]) and tall (L = [L1; L2]), as PyTorch's linalg_lu_backward
  for (auto shape : {std::vector<int64_t>{3, 5}, {2, 5, 3}, {4, 1}, {1, 4}}) {
    expect_lu_gradients(leaf(shape, 90));
  }
}

TEST(Linalg2Grad, Qr) {
  for (auto shape : {std::vector<int64_t>{4, 3}, {3, 3}, {2, 3, 5}}) {
    const Tensor A = leaf(shape, 19);
    EXPECT_TRUE(check_multi(
        [](const variable_list& v) {
          auto [Q, R] = linalg::qr(v[0]);
          return variable_list{Q, R};
        },
        {A}))
        << IntArrayRef(shape);
    EXPECT_TRUE(check([](const variable_list& v) { return std::get<1>(linalg::qr(v[0])); }, {A}, true));
  }
  // complete mode is differentiable for wide and square input
  EXPECT_TRUE(check([](const variable_list& v) { return std::get<0>(linalg::qr(v[0], "complete")); }, {leaf({2, 4}, 20)}));
}

TEST(Linalg2Grad, Eigh) {
  const Tensor X = leaf({2, 4, 4}, 21);
  // gauge invariant: eigenvalues, and V diag(f(L)) V^T
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::eigvalsh(sym_of(v[0])); }, {X}, true));
  EXPECT_TRUE(check(
      [](const variable_list& v) {
        auto [L, V] = linalg::eigh(sym_of(v[0]));
        return (V * L.exp().unsqueeze(-2)).matmul(V.mT());
      },
      {X}));
  EXPECT_TRUE(check([](const variable_list& v) { return std::get<1>(linalg::eigh(sym_of(v[0]), "U")).abs(); }, {X}));
  EXPECT_TRUE(check([](const variable_list& v) { return std::get<0>(symeig(sym_of(v[0]), true)); }, {X}));
}

// complex128 input: gradcheck checks the real and imaginary parts (PyTorch's convention).
TEST(Linalg2Grad, ComplexSolveInvDetCholesky) {
  const auto cwell = [](IntArrayRef sizes, uint64_t seed) {
    return (cleaf(sizes, seed).detach() + eye(sizes.back(), kComplexDouble) * static_cast<double>(sizes.back()))
        .requires_grad_();
  };
  const Tensor A = cwell({2, 3, 3}, 70), B = cleaf({2, 3, 2}, 71);
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::solve(v[0], v[1]); }, {A, B}, true));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::solve(v[0], v[1], false); }, {A, cleaf({2, 2, 3}, 72)}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::inv(v[0]); }, {A}, true));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::det(v[0]); }, {A}, true));
  EXPECT_TRUE(check_multi(
      [](const variable_list& v) {
        auto [s, l] = linalg::slogdet(v[0]);
        return variable_list{s, l};
      },
      {A}));
  EXPECT_TRUE(check([](const variable_list& v) { return logdet(v[0]); }, {A}));
  // at a singular matrix the gradient of Re(det) is the conjugated cofactor matrix (via the SVD)
  Tensor S = make_complex(tensor({1.0, 2.0, 2.0, 4.0}, kDouble), tensor({0.5, 1.0, 1.0, 2.0}, kDouble))
                 .reshape({2, 2})
                 .requires_grad_();
  real(linalg::det(S)).backward();
  const Tensor cof =
      make_complex(tensor({4.0, -2.0, -2.0, 1.0}, kDouble), tensor({2.0, -1.0, -1.0, 0.5}, kDouble)).reshape({2, 2});
  EXPECT_TRUE(allclose(S.grad(), cof.conj().resolve_conj(), 1e-9, 1e-9));
  for (bool upper : {false, true}) {
    EXPECT_TRUE(check([=](const variable_list& v) { return linalg::solve_triangular(v[0], v[1], upper); }, {A, B}))
        << upper;
    EXPECT_TRUE(check(
        [=](const variable_list& v) {
          const Tensor H = v[0].matmul(v[0].adjoint()) + eye(3, kComplexDouble) * 3.0;
          return linalg_cholesky(H, upper);
        },
        {cleaf({2, 3, 3}, 73)}, !upper))
        << upper;
  }
}

// complex LU: P L^{-H} (...) U^{-H} as PyTorch's linalg_lu_backward, square and rectangular;
// lu_solve on both sides, plain and adjoint.
TEST(Linalg2Grad, ComplexLu) {
  const Tensor A = (cleaf({2, 3, 3}, 80).detach() + eye(3, kComplexDouble) * 3.0).requires_grad_();
  for (auto shape : {std::vector<int64_t>{2, 3, 3}, {3, 5}, {5, 2}}) {
    expect_lu_gradients(cleaf(shape, 81));
  }
  for (bool left : {true, false})
    for (bool adjoint : {false, true}) {
      const Tensor B = cleaf(left ? std::vector<int64_t>{2, 3, 2} : std::vector<int64_t>{2, 2, 3}, 82);
      EXPECT_TRUE(check(
          [=](const variable_list& v) {
            auto [LU, piv] = linalg::lu_factor(v[0]);
            return linalg::lu_solve(LU, piv, v[1], left, adjoint);
          },
          {A, B}))
          << left << adjoint;
    }
}

// The composed ops on complex128: their gradients are their compositions' (conjugate Wirtinger,
// as PyTorch's).
TEST(Linalg2Grad, ComplexComposed) {
  const Tensor A = cleaf({2, 3, 3}, 85), R = cleaf({4, 3}, 86);
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::pinv(v[0]); }, {R}));
  EXPECT_TRUE(check([](const variable_list& v) { return std::get<0>(linalg::lstsq(v[0], v[1])); }, {R, cleaf({4, 2}, 92)}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg_pinv(v[0] + v[0].adjoint(), std::optional<double>(),
                                                                     std::optional<double>(), true); }, {A}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::matrix_exp(v[0]); }, {A}, true));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::cond(v[0]); }, {A}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg_cond(v[0], "fro"); }, {A}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::matrix_norm(v[0], "nuc"); }, {A}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::vector_norm(v[0], 3.0); }, {A}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::matrix_power(v[0], -2); },
                    {(cleaf({3, 3}, 87).detach() + eye(3, kComplexDouble) * 3.0).requires_grad_()}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::householder_product(v[0], v[1]); },
                    {cleaf({4, 3}, 88), cleaf({2}, 89)}));
  EXPECT_EQ(linalg::matrix_rank(R.detach().matmul(cleaf({3, 1}, 90).detach().matmul(cleaf({1, 3}, 91).detach())))
                .item<int64_t>(),
            1);
}

// complex QR, eigh and SVD through gauge-invariant functions (|Q| and |R| are not: a complex
// phase per column; Q R, Q Q^H, eigenvalues, V f(L) V^H, U Vh and |U| are).
TEST(Linalg2Grad, ComplexQrEighSvd) {
  for (auto shape : {std::vector<int64_t>{4, 3}, {3, 3}, {2, 3, 5}}) {
    const Tensor A = cleaf(shape, 80);
    EXPECT_TRUE(check_multi(
                    [](const variable_list& v) {
                      auto [Q, R] = linalg::qr(v[0]);
                      return variable_list{Q.matmul(R), Q.matmul(Q.adjoint()), R.abs()};
                    },
                    {A}))
        << IntArrayRef(shape);
    EXPECT_TRUE(check([](const variable_list& v) { return linalg::svdvals(v[0]); }, {A})) << IntArrayRef(shape);
    EXPECT_TRUE(check_multi(
                    [](const variable_list& v) {
                      auto [U, S, Vh] = linalg::svd(v[0], false);
                      return variable_list{S, U.matmul(Vh), U.abs(), Vh.abs()};
                    },
                    {A}))
        << IntArrayRef(shape);
  }
  const auto herm = [](const Tensor& X) { return X + X.adjoint(); };
  const Tensor X = cleaf({2, 4, 4}, 81);
  EXPECT_TRUE(check([=](const variable_list& v) { return linalg::eigvalsh(herm(v[0])); }, {X}, true));
  EXPECT_TRUE(check(
      [=](const variable_list& v) {
        auto [L, V] = linalg::eigh(herm(v[0]));
        return (V * L.exp().unsqueeze(-2)).matmul(V.adjoint());
      },
      {X}));
  EXPECT_TRUE(check([=](const variable_list& v) { return std::get<1>(linalg::eigh(herm(v[0]), "U")).abs(); }, {X}));
  // losses that depend on the vectors' phases are refused
  auto [L, V] = linalg::eigh(herm(cleaf({3, 3}, 82)));
  EXPECT_ERROR(real(V).sum().backward(), "linalg_eigh_backward", "specified up to multiplication by e^{i phi}");
  auto [U, S, Vh] = linalg::svd(cleaf({3, 3}, 83));
  EXPECT_ERROR(real(U).sum().backward(), "svd_backward", "specified up to multiplication by e^{i phi}");
}

// eig: functions invariant under each eigenvector's phase (eigenvalues, |V|, V diag(f(L)) V^{-1}),
// real and complex input; eigvals through eig. Random matrices have distinct eigenvalues.
TEST(Linalg2Grad, EigEigvals) {
  for (const Tensor& A : {leaf({4, 4}, 60), leaf({2, 3, 3}, 61), cleaf({3, 3}, 62), cleaf({2, 4, 4}, 63)}) {
    const std::string name = std::string(A.dtype() == kDouble ? "real " : "complex ") + std::to_string(A.dim());
    EXPECT_TRUE(check([](const variable_list& v) { return linalg::eigvals(v[0]); }, {A})) << name;
    EXPECT_TRUE(check_multi(
                    [](const variable_list& v) {
                      auto [L, V] = linalg::eig(v[0]);
                      return variable_list{L, V.abs()};
                    },
                    {A}))
        << name;
    // A = V diag(L) V^{-1}, and V diag(exp L) V^{-1} = matrix_exp(A): phase invariant, and through
    // both outputs at once
    EXPECT_TRUE(check(
                    [](const variable_list& v) {
                      auto [L, V] = linalg::eig(v[0]);
                      return linalg::solve(V, V * L.exp().unsqueeze(-2), /*left=*/false);
                    },
                    {A}))
        << name;
    EXPECT_TRUE(check([](const variable_list& v) { return std::get<1>(linalg::eig(v[0])).abs().pow(2).sum(-2); }, {A}))
        << name;
  }
  // second order through eigvals, and through the eigenvectors (a phase-invariant function)
  EXPECT_TRUE(autograd::gradgradcheck([](const variable_list& v) { return linalg::eigvals(v[0]); }, {leaf({3, 3}, 64)}));
  EXPECT_TRUE(autograd::gradgradcheck(
      [](const variable_list& v) {
        auto [L, V] = linalg::eig(v[0]);
        return variable_list{real(linalg::solve(V, V * L.exp().unsqueeze(-2), /*left=*/false))};
      },
      {leaf({3, 3}, 67)}));
  // a real input's gradient is real
  Tensor X = leaf({3, 3}, 65);
  real(linalg::eigvals(X)).sum().backward();
  EXPECT_EQ(X.grad().dtype(), kDouble);
  // the trace is the sum of the eigenvalues: its gradient is the identity
  EXPECT_TRUE(allclose(X.grad(), eye(3, kDouble), 1e-10, 1e-10));
  // a loss that depends on the eigenvectors' phases is refused
  auto [L, V] = linalg::eig(cleaf({3, 3}, 66));
  EXPECT_ERROR(real(V).sum().backward(), "linalg_eig_backward",
               "The eigenvectors in the complex case are specified up to multiplication by e^{i phi}");
}

TEST(Linalg2Grad, Svd) {
  for (auto shape : {std::vector<int64_t>{4, 3}, {3, 3}, {2, 3, 5}}) {
    const Tensor A = leaf(shape, 22);
    EXPECT_TRUE(check([](const variable_list& v) { return linalg::svdvals(v[0]); }, {A}, true)) << IntArrayRef(shape);
    // U Vh, |U| and |Vh| are invariant under the sign freedom of the singular vectors
    EXPECT_TRUE(check_multi(
        [](const variable_list& v) {
          auto [U, S, Vh] = linalg::svd(v[0], false);
          return variable_list{S, U.matmul(Vh), U.abs(), Vh.abs()};
        },
        {A}))
        << IntArrayRef(shape);
    EXPECT_TRUE(check(
        [](const variable_list& v) {
          auto [U, S, V] = svd(v[0]);
          return (U * S.unsqueeze(-2)).matmul(V.mT());
        },
        {A}))
        << IntArrayRef(shape);
  }
  // full_matrices: the extra columns carry no gradient of a function of the reduced part
  EXPECT_TRUE(check(
      [](const variable_list& v) {
        auto [U, S, Vh] = linalg::svd(v[0], true);
        return U.narrow(-1, 0, 3).matmul(Vh.narrow(-2, 0, 3));
      },
      {leaf({5, 3}, 23)}));
}

TEST(Linalg2Grad, LstsqPinvRank) {
  const Tensor A = leaf({5, 3}, 24), B = leaf({5, 2}, 25);
  EXPECT_TRUE(check([](const variable_list& v) { return std::get<0>(linalg::lstsq(v[0], v[1])); }, {A, B}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::pinv(v[0]); }, {A}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg_pinv(sym_of(v[0]), std::optional<double>(), std::optional<double>(), true); },
                    {leaf({3, 3}, 26)}));
  EXPECT_TRUE(check([](const variable_list& v) { return pinverse(v[0]); }, {leaf({2, 3, 4}, 27)}));
  // matrix_rank is an integer: no gradient, no graph
  EXPECT_FALSE(linalg::matrix_rank(A).requires_grad());
}

TEST(Linalg2Grad, Norms) {
  const Tensor A = leaf({2, 3, 4}, 28);
  for (double ord : {1.0, -1.0, 2.0, -2.0, kInf, -kInf})
    EXPECT_TRUE(check([=](const variable_list& v) { return linalg::matrix_norm(v[0], ord); }, {A})) << ord;
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::matrix_norm(v[0], "fro"); }, {A}, true));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::matrix_norm(v[0], "nuc"); }, {A}));
  for (double ord : {1.0, 2.0, 3.0, kInf, -kInf})
    EXPECT_TRUE(check([=](const variable_list& v) { return linalg::vector_norm(v[0], ord, std::vector<int64_t>{-1}); }, {A}))
        << ord;
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::norm(v[0]); }, {A}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::cond(v[0]); }, {leaf({3, 3}, 29)}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::cond(v[0], "fro"); }, {wellcond({3, 3}, 30)}));
}

TEST(Linalg2Grad, MatrixFunctions) {
  const Tensor A = leaf({2, 3, 3}, 31);
  for (int64_t p : {0, 1, 2, 5, -2}) {
    const Tensor M = p < 0 ? wellcond({2, 3, 3}, 32) : A;
    EXPECT_TRUE(check([=](const variable_list& v) { return linalg::matrix_power(v[0], p); }, {M})) << p;
  }
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::matrix_exp(v[0]); }, {A}, true));
  EXPECT_TRUE(check([](const variable_list& v) { return matrix_exp(v[0] * 4); }, {A}));  // with squaring
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::multi_dot({v[0], v[1], v[2]}); },
                    {leaf({3}, 33), leaf({3, 4}, 34), leaf({4, 2}, 35)}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::cross(v[0], v[1]); }, {leaf({2, 3}, 36), leaf({1, 3}, 37)}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::vecdot(v[0], v[1]); }, {leaf({2, 4}, 38), leaf({2, 4}, 39)}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::vander(v[0], 4); }, {leaf({2, 3}, 40)}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::diagonal(v[0], 1); }, {A}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::householder_product(v[0], v[1]); },
                    {leaf({4, 3}, 41), leaf({2}, 42)}));
  EXPECT_TRUE(check([](const variable_list& v) { return ormqr(v[0], v[1], v[2]); },
                    {leaf({4, 3}, 43), leaf({2}, 44), leaf({4, 2}, 45)}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::tensorinv(v[0].reshape({4, 2, 2}), 1); },
                    {wellcond({4, 4}, 46)}));
  EXPECT_TRUE(check([](const variable_list& v) { return linalg::tensorsolve(v[0].reshape({2, 2, 4}), v[1]); },
                    {wellcond({4, 4}, 47), leaf({2, 2}, 48)}));
}

// Second order of the ops whose first order is checked above without it (PyTorch's OpInfos check
// gradgrad for all of them): each backward is written with Ember ops, so it is differentiable.
// (eig's eigenvectors are not here: the double backward of a complex diagonal view needs a complex
// index_add, which Ember's kernel lacks; eigvals' second order is checked in EigEigvals.)
TEST(Linalg2Grad, SecondOrderOfTheRest) {
  using MultiFn = std::function<variable_list(const variable_list&)>;
  const auto gg = [](const MultiFn& f, const variable_list& in) { return autograd::gradgradcheck(f, in); };
  const auto one = [](const std::function<Tensor(const variable_list&)>& f) {
    return MultiFn([f](const variable_list& v) { return variable_list{f(v)}; });
  };
  const Tensor A = wellcond({2, 3, 3}, 100), B = leaf({2, 3, 2}, 101), X = leaf({2, 3, 3}, 102);
  const Tensor T = leaf({4, 3}, 103), Wd = leaf({2, 4}, 104);
  EXPECT_TRUE(gg(one([](const variable_list& v) { return std::get<0>(linalg::inv_ex(v[0])); }), {A}));
  EXPECT_TRUE(gg(one([](const variable_list& v) { return std::get<0>(linalg::solve_ex(v[0], v[1])); }), {A, B}));
  EXPECT_TRUE(gg(one([](const variable_list& v) { return std::get<0>(linalg::cholesky_ex(spd_of(v[0]))); }), {X}));
  EXPECT_TRUE(gg(
      [](const variable_list& v) {
        auto [P, L, U] = linalg::lu(v[0]);
        return variable_list{L, U};
      },
      {A}));
  EXPECT_TRUE(gg(one([](const variable_list& v) {
                   auto [LU, piv] = linalg::lu_factor(v[0]);
                   return linalg::lu_solve(LU, piv, v[1]);
                 }),
                 {A, B}));
  EXPECT_TRUE(gg(one([](const variable_list& v) {
                   auto [L, V] = linalg::eigh(sym_of(v[0]));
                   return (V * L.exp().unsqueeze(-2)).matmul(V.mT());
                 }),
                 {X}));
  EXPECT_TRUE(gg(
      [](const variable_list& v) {
        auto [U, S, Vh] = linalg::svd(v[0], false);
        return variable_list{S, U.matmul(Vh)};
      },
      {T}));
  EXPECT_TRUE(gg(one([](const variable_list& v) { return std::get<0>(linalg::lstsq(v[0], v[1])); }), {T, leaf({4, 2}, 106)}));
  EXPECT_TRUE(gg(one([](const variable_list& v) { return linalg::pinv(v[0]); }), {T}));
  for (int64_t p : {3, -2})
    EXPECT_TRUE(gg(one([=](const variable_list& v) { return linalg::matrix_power(v[0], p); }), {A})) << p;
  EXPECT_TRUE(gg(one([](const variable_list& v) { return linalg::multi_dot({v[0], v[1], v[2]}); }),
                 {leaf({3}, 107), leaf({3, 4}, 108), leaf({4, 2}, 109)}));
  EXPECT_TRUE(gg(one([](const variable_list& v) { return linalg::cross(v[0], v[1]); }), {leaf({2, 3}, 110), leaf({1, 3}, 111)}));
  EXPECT_TRUE(gg(one([](const variable_list& v) { return linalg::vecdot(v[0], v[1]); }), {Wd, leaf({2, 4}, 112)}));
  EXPECT_TRUE(gg(one([](const variable_list& v) { return linalg::vander(v[0], 4); }), {leaf({2, 3}, 113)}));
  EXPECT_TRUE(gg(one([](const variable_list& v) { return linalg::householder_product(v[0], v[1]); }),
                 {leaf({4, 3}, 114), leaf({2}, 115)}));
  EXPECT_TRUE(gg(one([](const variable_list& v) { return linalg::tensorinv(v[0].reshape({4, 2, 2}), 1); }),
                 {wellcond({4, 4}, 116)}));
  EXPECT_TRUE(gg(one([](const variable_list& v) { return linalg::tensorsolve(v[0].reshape({2, 2, 4}), v[1]); }),
                 {wellcond({4, 4}, 117), leaf({2, 2}, 118)}));
  for (double ord : {1.0, 2.0, 3.0, kInf})
    EXPECT_TRUE(gg(one([=](const variable_list& v) { return linalg::vector_norm(v[0], ord, std::vector<int64_t>{-1}); }),
                   {Wd}))
        << ord;
  for (double ord : {1.0, -2.0, 2.0, kInf})
    EXPECT_TRUE(gg(one([=](const variable_list& v) { return linalg::matrix_norm(v[0], ord); }), {T})) << ord;
  EXPECT_TRUE(gg(one([](const variable_list& v) { return linalg::matrix_norm(v[0], "nuc"); }), {T}));
  EXPECT_TRUE(gg(one([](const variable_list& v) { return linalg::norm(v[0]); }), {T}));
  EXPECT_TRUE(gg(one([](const variable_list& v) { return linalg::cond(v[0]); }), {leaf({3, 3}, 119)}));
}

// ---- bad input ------------------------------------------------------------------------------------

TEST(Linalg2Errors, ShapesAndDtypes) {
  EXPECT_ERROR(linalg::inv(ones({2, 3})), "linalg.inv", "must be batches of square matrices, but they are 2 by 3");
  EXPECT_ERROR(linalg::det(ones({3})), "linalg.det", "must have at least 2 dimensions");
  EXPECT_ERROR(linalg::cholesky(ones({3, 3}, kLong)), "Expected a floating point or complex tensor as input. Got Long");
  EXPECT_ERROR(linalg::solve(ones({3, 3}, kHalf), ones({3}, kHalf)), "Low precision dtypes not supported. Got Half");
  EXPECT_ERROR(linalg::solve(eye(3).expand({2, 3, 3}), ones({4, 3, 2})), "linalg.solve", "must match");
  EXPECT_ERROR(linalg::solve(eye(3), ones({4, 2})), "Incompatible shapes of A and B");
  EXPECT_ERROR(linalg::solve(eye(3), ones({3}, kDouble)), "same dtype");
  EXPECT_ERROR(linalg::matrix_power(ones({2, 3}), 2), "linalg.matrix_power", "square matrices");
  EXPECT_ERROR(linalg::qr(ones({3, 3}), "x"), "qr received unrecognized mode 'x'");
  EXPECT_ERROR(linalg::eigh(eye(3), "X"), "Expected UPLO argument to be 'L' or 'U', but got X");
  EXPECT_ERROR(linalg::lstsq(ones({3, 2}), ones({3, 1}), std::nullopt, "gelsx"), "driver");
  EXPECT_ERROR(linalg::cross(ones({2, 4}), ones({2, 4})), "must have length 3");
  EXPECT_ERROR(linalg::multi_dot({ones({2, 3})}), "expected at least 2 tensors");
  EXPECT_ERROR(linalg::multi_dot({ones({2, 3}), ones({4, 2})}), "compatible for multiplication");
  EXPECT_ERROR(linalg::vander(ones({3}), 1), "N must be greater than 1.");
  EXPECT_ERROR(linalg::householder_product(ones({2, 3}), ones({2})), "input.shape[-2] must be greater than or equal");
  EXPECT_ERROR(linalg::tensorinv(ones({2, 3}), 1), "prod(self.shape[ind:]) == prod(self.shape[:ind])");
  EXPECT_ERROR(linalg::matrix_norm(ones({3}), "fro"), "at least 2 dimensions");
  EXPECT_ERROR(linalg::matrix_norm(ones({3, 3}), "xyz"), "Invalid norm type xyz");
  EXPECT_ERROR(linalg::lu_factor(ones({3, 3}), false), "LU without pivoting is not implemented on the CPU");
  EXPECT_ERROR(linalg::eig(ones({2, 3})), "linalg.eig", "must be batches of square matrices, but they are 2 by 3");
  EXPECT_ERROR(linalg::eigvals(ones({2, 2, 3})), "linalg.eigvals", "square matrices, but they are 2 by 3");
  EXPECT_ERROR(linalg::eig(ones({3})), "linalg.eig", "must have at least 2 dimensions");
  EXPECT_ERROR(linalg::eig(ones({3, 3}, kLong)), "linalg.eig", "Expected a floating point or complex tensor as input. Got Long");
  EXPECT_ERROR(linalg::eigvals(ones({3, 3}, kInt)), "linalg.eigvals", "Got Int");
  EXPECT_ERROR(linalg::eig(ones({3, 3}, kHalf)), "linalg.eig", "Low precision dtypes not supported. Got Half");
  Tensor nf = ones({2, 3, 3}, kDouble);
  nf.select(0, 1).select(0, 0).fill_(std::numeric_limits<double>::quiet_NaN());
  EXPECT_ERROR(linalg::eig(nf), "torch.linalg.eig", "input tensor should not contain infs or NaNs.");
  nf.select(0, 1).select(0, 0).fill_(kInf);
  EXPECT_ERROR(linalg::eigvals(nf), "torch.linalg.eigvals", "input tensor should not contain infs or NaNs.");
  Tensor real_out = empty({0}), vec_out = empty({0}, kComplexFloat);
  EXPECT_ERROR(linalg::eig_out(real_out, vec_out, eye(3)), "Expected eigenvalues to be safely castable from ComplexFloat");
  EXPECT_ERROR(linalg::eigvals_out(real_out, eye(3)), "Expected eigenvalues to be safely castable from ComplexFloat");
}

TEST(Linalg2Errors, SingularAndNotPositiveDefinite) {
  Tensor S = zeros({2, 3, 3}, kDouble);
  S.select(0, 0).copy_(eye(3, kDouble));
  EXPECT_ERROR(linalg::inv(S), "linalg.inv: (Batch element 1): The diagonal element 1 is zero, the inversion could not be "
                               "completed because the input matrix is singular.");
  EXPECT_ERROR(linalg::inv(S.select(0, 1)), "linalg.inv: The diagonal element 1 is zero");
  EXPECT_ERROR(inverse(S.select(0, 1)), "input matrix is singular");
  EXPECT_ERROR(linalg::solve(S, ones({2, 3, 1}, kDouble)),
               "torch.linalg.solve: (Batch element 1): The solver failed because the input matrix is singular.");
  EXPECT_ERROR(linalg::cholesky(-eye(3, kDouble)),
               "linalg.cholesky: The factorization could not be completed because the input is not positive-definite "
               "(the leading minor of order 1 is not positive-definite).");
  Tensor N = eye(3, kDouble).expand({2, 3, 3}).clone();
  N.select(0, 1).select(0, 2).select(0, 2).fill_(-1);
  EXPECT_ERROR(linalg::cholesky(N), "linalg.cholesky: (Batch element 1):", "leading minor of order 3");
  EXPECT_ERROR(cholesky(-eye(2, kDouble)), "cholesky: The factorization could not be completed");
  EXPECT_ERROR(linalg::lu_factor(S.select(0, 1)), "U[1,1] is zero");
  EXPECT_ERROR(linalg::cholesky_ex(N, false, true), "(Batch element 1)");
  // the _ex forms report instead of raising
  auto [X, info] = linalg::inv_ex(S);
  EXPECT_EQ(info.select(0, 0).item<int>(), 0);
  EXPECT_EQ(info.select(0, 1).item<int>(), 1);
  auto [L, cinfo] = linalg::cholesky_ex(N);
  EXPECT_EQ(cinfo.select(0, 1).item<int>(), 3);
  // geqrf has no derivative (as PyTorch)
  EXPECT_ERROR(geqrf(ones({3, 3}, kDouble).requires_grad_()), "the derivative for 'geqrf' is not implemented");
  // the derivative of mode='r' needs Q
  Tensor A = rnd({3, 3}, 1).requires_grad_();
  Tensor R = std::get<1>(linalg::qr(A, "r"));
  EXPECT_ERROR(R.sum().backward(), "The derivative of linalg.qr depends on Q, which is not computed when mode='r'");
}

// Small matrices take Ember's direct path, which reads a contiguous batch as it lies: a lazily
// conjugated view (contiguous, its data unconjugated) must give the conjugated results.
TEST(Linalg2Small, ConjugatedViewsGiveConjugatedResults) {
  for (int64_t n : {3, 8, 9}) {
    const Tensor A = (cleaf({2, n, n}, 120).detach() + eye(n, kComplexDouble) * static_cast<double>(n));
    const Tensor Ac = A.conj();
    ASSERT_TRUE(Ac.is_conj() && Ac.is_contiguous());
    EXPECT_TRUE(allclose(linalg::det(Ac), linalg::det(A).conj().resolve_conj())) << n;
    EXPECT_TRUE(allclose(std::get<0>(linalg::slogdet(Ac)), std::get<0>(linalg::slogdet(A)).conj().resolve_conj())) << n;
    EXPECT_TRUE(allclose(linalg::inv(Ac), linalg::inv(A).conj().resolve_conj())) << n;
    const Tensor B = cleaf({2, n, 2}, 121).detach();
    EXPECT_TRUE(allclose(linalg::solve(Ac, B), linalg::solve(A, B.conj()).conj().resolve_conj())) << n;
    const Tensor H = A.matmul(A.adjoint());
    EXPECT_TRUE(allclose(linalg::cholesky(H.conj()), linalg::cholesky(H).conj().resolve_conj())) << n;
  }
}

// det of row-major real batches up to 4 x 4 factors 16 matrices at a time, one per SIMD lane:
// batches around that block (a partial last block), pivots in every row, singular, zero, inf and
// NaN matrices, against the general path (a transposed view) and slogdet.
TEST(Linalg2Small, DetInSimdLanesMatchesTheGeneralPath) {
  for (ScalarType dt : {kFloat, kDouble}) {
    for (int64_t n : {1, 2, 3, 4}) {
      for (int64_t batch : {1, 15, 16, 17, 40}) {
        Tensor A = randn({batch, n, n}, TensorOptions().dtype(dt));
        if (batch > 3) {
          A[1].fill_(0);                                      // zero matrix
          A[2].select(0, 0).copy_(A[2].select(0, n - 1));     // repeated row: singular (n > 1)
          A[3].select(1, 0).fill_(std::numeric_limits<double>::quiet_NaN());
        }
        const Tensor general = linalg::det(A.mT().contiguous().mT());
        const Tensor d = linalg::det(A);
        const double tol = dt == kFloat ? 1e-5 : 1e-12;
        EXPECT_TRUE(allclose(d, general, tol, tol, /*equal_nan=*/true)) << dt << " n " << n << " batch " << batch;
        auto [sign, logabs] = linalg::slogdet(A);
        EXPECT_TRUE(allclose(d, sign * logabs.exp(), 1e-4, 1e-6, /*equal_nan=*/true)) << dt << " n " << n;
        if (batch > 3) {
          EXPECT_EQ(d[1].item<double>(), 0.0);
          if (n > 1) EXPECT_NEAR(d[2].item<double>(), 0.0, tol);
          EXPECT_TRUE(std::isnan(d[3].item<double>()));
        }
      }
    }
  }
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor I = tensor({inf, 0.0, 0.0, 2.0}, TensorOptions().dtype(kDouble)).view({1, 2, 2});
  EXPECT_TRUE(allclose(linalg::det(I), linalg::det(I.mT().contiguous().mT()), 0, 0, true));
}

// Real QR, eigh, SVD and triangular solves up to 8 x 8 take the direct path; the same matrices
// as complex input take LAPACK's (zgeqrf and friends on real data compute what the real routines
// would): the values agree, QR's factors themselves (the same reflectors and signs), eigenvectors
// by their invariants and sign rule, over every order, batches with and without elements.
TEST(Linalg2Small, DirectPathsMatchLapack) {
  for (ScalarType dt : {kFloat, kDouble}) {
    const double tol = dt == kFloat ? 1e-4 : 1e-11;
    const ScalarType ct = dt == kFloat ? kComplexFloat : kComplexDouble;
    for (const std::vector<int64_t>& b : {std::vector<int64_t>{}, {2, 3}, {0}, {2, 0}})
      for (int64_t n = 1; n <= 8; ++n)
        for (int64_t m : {n, std::max<int64_t>(1, n - 2), n + 1}) {
          std::vector<int64_t> shape = b;
          shape.push_back(m);
          shape.push_back(n);
          const Tensor A = rnd(shape, 300 + n * 10 + m).to(dt);
          const Tensor Ac = A.to(ct);
          const auto near = [&](const Tensor& x, const Tensor& lapack) {
            return x.sizes().equals(lapack.sizes()) && allclose(x, real(lapack), tol, tol);
          };
          for (const char* mode : {"reduced", "complete"}) {
            auto [Q, R] = linalg::qr(A, mode);
            auto [Qc, Rc] = linalg::qr(Ac, mode);
            EXPECT_TRUE(near(Q, Qc) && near(R, Rc)) << dt << " " << m << "x" << n << " " << mode;
          }
          EXPECT_TRUE(near(linalg::svdvals(A), linalg::svdvals(Ac).to(ct))) << dt << " " << m << "x" << n;
          for (bool full : {false, true}) {
            auto [U, S, Vh] = linalg::svd(A, full);
            const int64_t k = std::min(m, n);
            EXPECT_EQ(U.sizes(), std::get<0>(linalg::svd(Ac, full)).sizes());
            EXPECT_TRUE(allclose(U.mT().matmul(U), eye(U.size(-1), dt).expand_as(U.mT().matmul(U)), tol, tol));
            EXPECT_TRUE(allclose(Vh.matmul(Vh.mT()), eye(Vh.size(-2), dt).expand_as(Vh.matmul(Vh.mT())), tol, tol));
            EXPECT_TRUE(allclose((U.narrow(-1, 0, k) * S.unsqueeze(-2)).matmul(Vh.narrow(-2, 0, k)), A, tol, tol))
                << dt << " " << m << "x" << n << " full " << full;
          }
          if (m != n) continue;
          const Tensor H = A + A.mT();
          auto [L, V] = linalg::eigh(H);
          auto [Lc, Vc] = linalg::eigh(H.to(ct));
          EXPECT_TRUE(allclose(L, Lc, tol, tol)) << dt << " n " << n;
          EXPECT_TRUE(allclose(H.matmul(V), V * L.unsqueeze(-2), tol, tol)) << dt << " n " << n;
          // each eigenvector's largest component is positive
          if (V.numel() > 0) {
            const Tensor big = V.abs().argmax(-2, true);
            EXPECT_TRUE(V.gather(-2, big).gt(0).all().item<bool>()) << dt << " n " << n;
          }
          const Tensor B = rnd(concat_shape(b, {n, 2}), 77).to(dt);
          for (bool upper : {false, true})
            for (bool unit : {false, true}) {
              const Tensor W = A + eye(n, dt) * static_cast<double>(n);
              EXPECT_TRUE(near(linalg::solve_triangular(W, B, upper, true, unit),
                               linalg::solve_triangular(W.to(ct), B.to(ct), upper, true, unit)))
                  << dt << " n " << n << " upper " << upper << " unit " << unit;
            }
        }
  }
}

// Degenerate input on the direct path: exact zeros, identities, repeated eigenvalues and rank
// deficiency give orthonormal factors; a zero column in QR leaves its reflector the identity
// (tau 0) as LAPACK's; NaN makes eigh and SVD raise as LAPACK's info does (SVD's LAPACK path
// reports NaN as an illegal argument, so does the direct path).
TEST(Linalg2Small, DegenerateInput) {
  for (int64_t n : {1, 3, 5, 8}) {
    const Tensor I = eye(n, kDouble);
    auto [L, V] = linalg::eigh(I);
    EXPECT_TRUE(allclose(L, ones({n}, kDouble)) && allclose(V, I)) << n;  // sorted, signs positive: V = I
    const Tensor Z = zeros({n, n}, kDouble);
    auto [U, S, Vh] = linalg::svd(Z);
    EXPECT_TRUE(allclose(S, zeros({n}, kDouble))) << n;
    EXPECT_TRUE(allclose(U.mT().matmul(U), I) && allclose(Vh.matmul(Vh.mT()), I)) << n;
    // rank one: u v^T
    const Tensor r1 = rnd({n, 1}, 5).matmul(rnd({1, n}, 6));
    std::tie(U, S, Vh) = linalg::svd(r1);
    EXPECT_TRUE(allclose(U.mT().matmul(U), I, 1e-12, 1e-12) && allclose((U * S).matmul(Vh), r1, 1e-12, 1e-12)) << n;
    auto [Q, R] = linalg::qr(Z);
    EXPECT_TRUE(allclose(Q, I) && allclose(R, Z)) << n;
    // two equal eigenvalues: any orthonormal basis of their space, A V = V diag(L)
    const Tensor D = diag_embed(tensor(std::vector<double>{2, 2, 1, 3, 3, 3, 0, 1}).narrow(0, 0, n));
    const Tensor Qr = std::get<0>(linalg::qr(rnd({n, n}, 7)));
    const Tensor A = Qr.matmul(D).matmul(Qr.mT());
    std::tie(L, V) = linalg::eigh(A);
    EXPECT_TRUE(allclose(A.matmul(V), V * L, 1e-12, 1e-12) && allclose(V.mT().matmul(V), I, 1e-12, 1e-12)) << n;
  }
  const Tensor nan = tensor({1.0, std::nan(""), std::nan(""), 1.0}, TensorOptions().dtype(kDouble)).view({2, 2});
  EXPECT_ERROR(linalg::eigh(nan), "linalg.eigh: The algorithm failed to converge");
  EXPECT_ERROR(linalg::svd(nan), "linalg.svd: Argument 4 has illegal value");
  // the LAPACK path (9 x 9) says the same
  EXPECT_ERROR(linalg::svd(ones({2, 9, 9}, kDouble) * std::nan("")), "linalg.svd: (Batch element 0): Argument 4 has illegal value");
}

// gradcheck at the direct path's ends (1 x 1 and 8 x 8); the other orders run in Linalg2Grad.
TEST(Linalg2Small, GradientsAtTheEnds) {
  for (int64_t n : {1, 8}) {
    const Tensor A = leaf({2, n, n}, 400 + n);
    EXPECT_TRUE(check_multi(
        [](const variable_list& v) {
          auto [Q, R] = linalg::qr(v[0]);
          return variable_list{Q, R};
        },
        {A}))
        << n;
    EXPECT_TRUE(check([](const variable_list& v) { return linalg::eigvalsh(sym_of(v[0])); }, {A})) << n;
    EXPECT_TRUE(check(
        [](const variable_list& v) {
          auto [L, V] = linalg::eigh(sym_of(v[0]));
          return (V * L.exp().unsqueeze(-2)).matmul(V.mT());
        },
        {A}))
        << n;
    EXPECT_TRUE(check_multi(
        [](const variable_list& v) {
          auto [U, S, Vh] = linalg::svd(v[0], false);
          return variable_list{S, U.matmul(Vh)};
        },
        {A}))
        << n;
    const Tensor W = wellcond({2, n, n}, 410 + n);
    EXPECT_TRUE(check([](const variable_list& v) { return linalg::solve_triangular(v[0], v[1], true); },
                      {W, leaf({2, n, 3}, 420)}))
        << n;
  }
}

// The Tensor methods are the older torch:: functions.
TEST(Linalg2Methods, MatchTheFunctions) {
  const Tensor A = wellcond({2, 3, 3}, 50).detach();
  const Tensor S = spd_of(A);
  const Tensor L = linalg::cholesky(S);
  const Tensor B = rnd({2, 3, 2}, 51);
  const auto same = [](const Tensor& a, const Tensor& b) { return a.sizes().equals(b.sizes()) && allclose(a, b); };
  EXPECT_TRUE(same(A.det(), det(A)));
  EXPECT_TRUE(same(linalg::linalg_det(A), linalg::det(A)));
  EXPECT_TRUE(same(S.logdet(), logdet(S)));
  EXPECT_TRUE(same(std::get<1>(A.slogdet()), std::get<1>(slogdet(A))));
  EXPECT_TRUE(same(A.inverse(), inverse(A)));
  EXPECT_TRUE(same(A.matmul(A.inverse()), eye(3, kDouble).expand({2, 3, 3})));
  EXPECT_TRUE(same(S.cholesky(), L));
  EXPECT_TRUE(same(S.cholesky(true), L.mT()));
  EXPECT_TRUE(same(B.cholesky_solve(L), linalg::solve(S, B)));
  EXPECT_TRUE(same(L.cholesky_inverse(), linalg::inv(S)));
  auto [Q, R] = A.qr();
  EXPECT_TRUE(same(Q.matmul(R), A));
  auto [U, Sv, V] = A.svd();
  EXPECT_TRUE(same((U * Sv.unsqueeze(-2)).matmul(V.mT()), A));
  EXPECT_TRUE(same(std::get<0>(S.symeig()), linalg::eigvalsh(S, "U")));
  EXPECT_TRUE(same(std::get<0>(B.triangular_solve(A)), linalg::solve_triangular(A, B, true)));
  auto [LU, piv] = linalg::lu_factor(A);
  EXPECT_TRUE(same(B.lu_solve(LU, piv), linalg::solve(A, B)));
  EXPECT_TRUE(same(A.matrix_power(3), A.matmul(A).matmul(A)));
  EXPECT_TRUE(same(A.matrix_exp(), linalg::matrix_exp(A)));
  EXPECT_TRUE(same(A.pinverse(), linalg::inv(A)));
  auto [a, tau] = A.geqrf();
  EXPECT_TRUE(same(a.orgqr(tau), Q));
  EXPECT_TRUE(same(a.ormqr(tau, B), Q.matmul(B)));
  EXPECT_TRUE(same(a.ormqr(tau, B, true, true), Q.mT().matmul(B)));
}

}  // namespace EMBER_UNITY_FILE
