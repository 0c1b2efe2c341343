// torch.linalg.eig / eigvals: the eigendecomposition of general square matrices on LAPACK's geev
// (sgeev/dgeev for real input, cgeev/zgeev for complex), batched over the leading dims. Results
// are complex (complex64 for float32 and complex64 input, complex128 for float64 and complex128),
// the eigenvectors normalized as LAPACK returns them (unit 2-norm, largest component real) and
// stored column-major as PyTorch's. The backward is written with Ember ops (so it records under
// create_graph); eigvals differentiates through eig.
#include <cmath>
#include <vector>

#include "ember/aten_tail.h"
#include "ember/complex_ops.h"
#include "ops/linalg_common.h"
#include "ops/linalg_lapack.h"

namespace ember {

using namespace linalg_detail;

namespace {

int eig_int(int64_t v) { return static_cast<int>(v); }

// PyTorch checks the input of eig (LAPACK's geev reports NaN as an illegal argument and prints to
// stderr): "torch.linalg.eig: input tensor should not contain infs or NaNs."
void eig_check_finite(const char* op, const Tensor& buf) {
  bool finite = true;
  const int64_t count = buf.numel() * (is_complex_type(buf.dtype()) ? 2 : 1);
  const auto scan = [&](const auto* p) {
    for (int64_t i = 0; i < count && finite; ++i) finite = std::isfinite(p[i]);
  };
  if (to_real_value_type(buf.dtype()) == kDouble) {
    scan(static_cast<const double*>(buf.data_ptr()));
  } else {
    scan(static_cast<const float*>(buf.data_ptr()));
  }
  EMBER_CHECK(finite, op, "input tensor should not contain infs or NaNs.");
}

// geev on each matrix of the column-major buffer `buf` (destroyed). Writes the eigenvalues into L
// (..., n) and, when `vectors`, the eigenvectors into the column-major V (..., n, n).
template <class T>
void geev_batch(Tensor& buf, Tensor& L, Tensor* V, Tensor& info, int64_t n, int64_t nb) {
  using C = complex<T>;
  T* a = buf.data_ptr<T>();
  C* w = L.data_ptr<C>();
  C* v = V ? V->data_ptr<C>() : nullptr;
  int* pi = info.data_ptr<int>();
  const char jobvr = V ? 'V' : 'N';
  const int ni = eig_int(n);
  T wq = 0;
  int inf = 0;
  {
    std::vector<T> wr(n), wi(n), vr(V ? n * n : 1);
    lapack::geev(jobvr, ni, a, ni, wr.data(), wi.data(), vr.data(), V ? ni : 1, &wq, -1, &inf);
  }
  const int lwork = std::max(1, static_cast<int>(wq));
  for_each_matrix(nb, 10 * n * n * n, [&](int64_t i) {
    std::vector<T> work(lwork), wr(n), wi(n), vr(V ? n * n : 1);
    lapack::geev(jobvr, ni, a + i * n * n, ni, wr.data(), wi.data(), vr.data(), V ? ni : 1, work.data(), lwork,
                 pi + i);
    C* wo = w + i * n;
    for (int64_t j = 0; j < n; ++j) wo[j] = C(wr[j], wi[j]);
    if (!V) return;
    // LAPACK packs a complex pair (wi[j] > 0, then its conjugate) as the real and imaginary parts
    // in columns j and j + 1
    C* vo = v + i * n * n;
    for (int64_t j = 0; j < n; ++j) {
      const T* re = vr.data() + j * n;
      if (wi[j] == T(0) || j + 1 == n) {
        for (int64_t r = 0; r < n; ++r) vo[j * n + r] = C(re[r], T(0));
        continue;
      }
      const T* im = re + n;
      for (int64_t r = 0; r < n; ++r) {
        vo[j * n + r] = C(re[r], im[r]);
        vo[(j + 1) * n + r] = C(re[r], -im[r]);
      }
      ++j;
    }
  });
}

template <class T>
void geev_batch_complex(Tensor& buf, Tensor& L, Tensor* V, Tensor& info, int64_t n, int64_t nb) {
  using C = complex<T>;
  C* a = buf.data_ptr<C>();
  C* w = L.data_ptr<C>();
  C* v = V ? V->data_ptr<C>() : nullptr;
  int* pi = info.data_ptr<int>();
  const char jobvr = V ? 'V' : 'N';
  const int ni = eig_int(n);
  C wq;
  int inf = 0;
  {
    std::vector<T> rwork(2 * n);
    C dv;
    lapack::geev(jobvr, ni, a, ni, w, V ? v : &dv, V ? ni : 1, &wq, -1, rwork.data(), &inf);
  }
  const int lwork = std::max(1, static_cast<int>(wq.real()));
  for_each_matrix(nb, 10 * n * n * n, [&](int64_t i) {
    std::vector<C> work(lwork);
    std::vector<T> rwork(2 * n);
    C dv;
    lapack::geev(jobvr, ni, a + i * n * n, ni, w + i * n, V ? v + i * n * n : &dv, V ? ni : 1, work.data(), lwork,
                 rwork.data(), pi + i);
  });
}

// (eigenvalues, eigenvectors or undefined) without autograd.
std::pair<Tensor, Tensor> eig_raw(const char* op, const Tensor& A, bool vectors) {
  const int64_t n = A.size(-1);
  const DimVector batch = batch_shape(A);
  const ScalarType ct = to_complex_type(A.dtype());
  Tensor L = make_empty(concat(batch, {n}), ct);
  Tensor V = vectors ? colmajor_empty(batch, n, n, ct) : Tensor();
  if (n == 0 || batch_count(A) == 0) return {L, V};
  Tensor buf = colmajor_copy(A);
  eig_check_finite(op, buf);
  Tensor info = zeros(batch, kInt);
  const int64_t nb = batch_count(A);
  Tensor* pv = vectors ? &V : nullptr;
  switch (A.dtype()) {
    case kFloat: geev_batch<float>(buf, L, pv, info, n, nb); break;
    case kDouble: geev_batch<double>(buf, L, pv, info, n, nb); break;
    case kComplexFloat: geev_batch_complex<float>(buf, L, pv, info, n, nb); break;
    default: geev_batch_complex<double>(buf, L, pv, info, n, nb); break;
  }
  check_infos(op, info, A.dim() > 2, InfoKind::kEigConverge);
  return {L, V};
}

// Gradient of A = V diag(L) V^{-1} with unit-norm columns of V (PyTorch's linalg_eig_backward,
// derived again): with W = V^H gV,
//   gA = V^{-H} (diag(gL) + (W - V^H V Re(diag(W))) / conj(E)) V^H,  E_ij = L_j - L_i off the diagonal,
// the diagonal of the quotient replaced by gL. A loss that depends on the eigenvectors' phases is
// ill-defined: Im(diag(W)) must vanish.
Tensor eig_backward(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V, bool real_input) {
  const Tensor VH = V.adjoint();
  Tensor gA;
  if (!gV.defined()) {
    gA = linalg_solve(VH, gL.unsqueeze(-1) * VH);
  } else {
    Tensor W = VH.matmul(gV);
    const Tensor d = W.diagonal(0, -2, -1);
    {
      AutoGradMode off(false);
      const Tensor im = imag(d);
      EMBER_CHECK(allclose(im, zeros_like(im), 1e-2, 1e-2), "linalg_eig_backward",
                  "The eigenvectors in the complex case are specified up to multiplication by e^{i phi}. The "
                  "specified loss function depends on this quantity, so it is ill-defined.");
    }
    W = W - VH.matmul(V * real(d).unsqueeze(-2));
    const Tensor Lc = L.conj();
    Tensor E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1);  // conj(L_j) - conj(L_i)
    E.diagonal(0, -2, -1).fill_(1);
    W = W / E;
    W.diagonal(0, -2, -1).zero_();
    if (gL.defined()) W = W + diag_embed(gL);
    gA = linalg_solve(VH, W.matmul(VH));
  }
  return real_input ? real(gA) : gA;
}

Tensor& eig_copy_out(const char* op, Tensor& out, const Tensor& result, const char* what) {
  EMBER_CHECK(can_cast(result.dtype(), out.dtype()), op, "Expected ", what, " to be safely castable from ",
              result.dtype(), " dtype, but got ", what, " with dtype ", out.dtype());
  if (!out.sizes().equals(result.sizes())) out.resize_(result.sizes());
  out.copy_(result);
  return out;
}

}  // namespace

std::tuple<Tensor, Tensor> linalg_eig(const Tensor& A) {
  const char* op = "linalg.eig";
  check_matrix(op, A);
  check_square(op, A);
  check_floating_or_complex(op, A);
  Tensor L, V;
  {
    AutoGradMode off(false);
    std::tie(L, V) = eig_raw("torch.linalg.eig", A, true);
  }
  // LinalgEigBackward0 -- A: eig_backward (its real part for real A)
  const bool real_input = !is_complex_type(A.dtype());
  record(op, {A}, std::array{L, V}, [&](autograd::Derivative& d) {
    d.name("LinalgEigBackward0");
    d.grad(A, [l = d.save_result(0), v = d.save_result(1), real_input](const autograd::BackwardContext& c) {
      return eig_backward(c.grad(0), c.grad(1), c[l], c[v], real_input);
    });
  });
  return {L, V};
}

Tensor linalg_eigvals(const Tensor& A) {
  const char* op = "linalg.eigvals";
  check_matrix(op, A);
  check_square(op, A);
  check_floating_or_complex(op, A);
  // with a graph, the gradient needs the eigenvectors
  if (any_requires_grad({A})) return std::get<0>(linalg_eig(A));
  AutoGradMode off(false);
  return eig_raw("torch.linalg.eigvals", A, false).first;
}

std::tuple<Tensor&, Tensor&> linalg_eig_out(Tensor& eigenvalues, Tensor& eigenvectors, const Tensor& A) {
  auto [L, V] = linalg_eig(A);
  const char* op = "torch.linalg.eig";
  EMBER_CHECK(can_cast(L.dtype(), eigenvalues.dtype()), op, "Expected eigenvalues to be safely castable from ",
              L.dtype(), " dtype, but got eigenvalues with dtype ", eigenvalues.dtype());
  EMBER_CHECK(can_cast(V.dtype(), eigenvectors.dtype()), op, "Expected eigenvectors to be safely castable from ",
              V.dtype(), " dtype, but got eigenvectors with dtype ", eigenvectors.dtype());
  eig_copy_out(op, eigenvalues, L, "eigenvalues");
  eig_copy_out(op, eigenvectors, V, "eigenvectors");
  return {eigenvalues, eigenvectors};
}

Tensor& linalg_eigvals_out(Tensor& out, const Tensor& A) {
  const Tensor L = linalg_eigvals(A);
  return eig_copy_out("torch.linalg.eigvals", out, L, "eigenvalues");
}

}  // namespace ember
