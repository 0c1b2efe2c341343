// torch.special against libtorch: each function's values and gradient on random inputs in its
// domain, float and double, by both spellings (special_x and special::x).
#include <functional>
#include <string>
#include <vector>

#include "parity/parity.h"

namespace {

using parity::Close;
torch::Tensor T(const ember::Tensor& e) { return parity::to_torch(e); }

struct Row {
  std::string name;
  double lo, hi;  // inputs drawn uniformly from [lo, hi)
  std::function<ember::Tensor(const ember::Tensor&)> e;
  std::function<torch::Tensor(const torch::Tensor&)> t;
  bool differentiable = true;
};

#define ROW(name, lo, hi, call) \
  Row { #name, lo, hi, [](const ember::Tensor& x) { return ember::call; }, [](const torch::Tensor& x) { return torch::call; } }

std::vector<Row> rows() {
  const ember::Tensor y = ember::rand({4, 5}, ember::kDouble) + 0.25;
  const torch::Tensor ty = T(y);
  std::vector<Row> r = {
      ROW(entr, 0.05, 2.0, special_entr(x)),
      ROW(ndtr, -6.0, 4.0, special_ndtr(x)),
      ROW(expm1, -2.0, 2.0, special_expm1(x)),
      ROW(exp2, -2.0, 2.0, special_exp2(x)),
      ROW(log1p, -0.5, 2.0, special_log1p(x)),
      ROW(erf, -2.0, 2.0, special_erf(x)),
      ROW(erfc, -2.0, 2.0, special_erfc(x)),
      ROW(erfinv, -0.9, 0.9, special_erfinv(x)),
      ROW(expit, -4.0, 4.0, special_expit(x)),
      ROW(sinc, -2.0, 2.0, special_sinc(x)),
      ROW(psi, 0.2, 5.0, special_psi(x)),
      ROW(digamma, 0.2, 5.0, special_digamma(x)),
      ROW(gammaln, 0.2, 5.0, special_gammaln(x)),
      ROW(i0, -3.0, 3.0, special_i0(x)),
      ROW(polygamma, 0.2, 5.0, special_polygamma(2, x)),
      ROW(multigammaln, 1.6, 5.0, special_multigammaln(x, 3)),
      ROW(logit, 0.05, 0.95, special_logit(x)),
      ROW(logit_eps, 0.0, 1.0, special_logit(x, 0.1)),
      ROW(logsumexp, -2.0, 2.0, special_logsumexp(x, {1})),
      ROW(softmax, -2.0, 2.0, special_softmax(x, 0)),
      ROW(log_softmax, -2.0, 2.0, special_log_softmax(x, 1)),
      ROW(xlogy_scalar, 0.1, 2.0, special_xlogy(x, 3.0)),
      ROW(xlog1py_scalar, -0.5, 2.0, special_xlog1py(x, 0.5)),
      ROW(namespace_erf, -2.0, 2.0, special::erf(x)),
      ROW(namespace_xlog1py, 0.1, 2.0, special::xlog1py(x, x)),
      ROW(round, -3.0, 3.0, special_round(x * 10, 1)),
  };
  // entr at 0 and below: values only (PyTorch's gradient there is inf and NaN, Ember's 0)
  r.push_back({"entr at 0 and below", -0.5, 2.0, [](const ember::Tensor& x) { return ember::special_entr(x); },
               [](const torch::Tensor& x) { return torch::special_entr(x); }, false});
  r.push_back({"xlogy", 0.1, 2.0, [y](const ember::Tensor& x) { return ember::special_xlogy(x, y.to(x.dtype())); },
               [ty](const torch::Tensor& x) { return torch::special_xlogy(x, ty.to(x.scalar_type())); }});
  r.push_back({"xlog1py", -0.5, 2.0, [y](const ember::Tensor& x) { return ember::special_xlog1py(x, y.to(x.dtype())); },
               [ty](const torch::Tensor& x) { return torch::special_xlog1py(x, ty.to(x.scalar_type())); }});
  r.push_back({"gammainc", 0.2, 4.0, [y](const ember::Tensor& x) { return ember::special_gammainc(x, y.to(x.dtype())); },
               [ty](const torch::Tensor& x) { return torch::special_gammainc(x, ty.to(x.scalar_type())); }, false});
  r.push_back({"gammaincc", 0.2, 4.0, [y](const ember::Tensor& x) { return ember::special_gammaincc(x, y.to(x.dtype())); },
               [ty](const torch::Tensor& x) { return torch::special_gammaincc(x, ty.to(x.scalar_type())); }, false});
  return r;
}

}  // namespace

TEST(SpecialParity, ValuesAndGradients) {
  ember::manual_seed(3);
  for (const Row& row : rows()) {
    for (ember::ScalarType dtype : {ember::kFloat, ember::kDouble}) {
      SCOPED_TRACE(row.name + (dtype == ember::kFloat ? " float" : " double"));
      const parity::Tol tol = dtype == ember::kFloat ? parity::Tol{2e-5, 1e-6} : parity::Tol{1e-9, 1e-12};
      ember::Tensor base = (ember::rand({4, 5}, ember::kDouble) * (row.hi - row.lo) + row.lo).to(dtype);
      // exact zeros where the function has a special case there (entr, xlogy, xlog1py), kept
      // only where 0 is in the row's domain
      base[0][1] = 0.0;
      base[3][2] = 0.0;
      const ember::Tensor x = base.clamp(row.lo, row.hi);
      ember::Tensor ex = x.detach().requires_grad_(row.differentiable);
      torch::Tensor tx = T(x).detach().requires_grad_(row.differentiable);
      const ember::Tensor ey = row.e(ex);
      const torch::Tensor ty = row.t(tx);
      ASSERT_TRUE(Close(ey, ty, tol));
      if (!row.differentiable) continue;
      const ember::Tensor g = ember::rand(ey.sizes(), ember::kDouble).to(ey.dtype());
      (ey * g).sum().backward();
      (ty * T(g)).sum().backward();
      EXPECT_TRUE(Close(ex.grad(), tx.grad(), dtype == ember::kFloat ? parity::Tol{1e-4, 1e-5} : parity::Tol{1e-8, 1e-10}));
    }
  }
}
