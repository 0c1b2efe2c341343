// gradcheck: analytic Jacobians (one backward per output element) against central differences;
// gradgradcheck: the same for the map from (inputs, grad_outputs) to the first-order gradients.
#include <cmath>
#include <sstream>

#include "ember/autograd.h"
#include "ember/complex_ops.h"
#include "ember/factory.h"
#include "ember/pointwise.h"

namespace ember::autograd {

namespace {

// Flat float64 values of a tensor (any layout); a complex tensor gives its real and imaginary
// parts side by side. Complex tensors are checked as the real tensors of their parts, as
// PyTorch's gradcheck does: each part of each input is perturbed, each part of each output is
// the seed of a backward (1 or i), and the gradient's parts are the derivatives of that output
// part w.r.t. the input's real and imaginary parts (PyTorch's convention for complex autograd).
std::vector<double> values(const Tensor& t) {
  Tensor c = t.detach();
  c = c.is_complex() ? view_as_real(c.to(kComplexDouble).resolve_conj()).contiguous() : c.to(kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}
// The number of real values of a tensor (two per complex element).
int64_t real_numel(const Tensor& t) { return t.is_complex() ? 2 * t.numel() : t.numel(); }

}  // namespace

bool gradcheck(const std::function<variable_list(const variable_list&)>& fn, const variable_list& inputs, double eps,
               double atol, double rtol) {
  for (const Tensor& x : inputs)
    EMBER_CHECK(!x.requires_grad() || x.dtype() == kDouble || x.dtype() == kComplexDouble, "gradcheck",
                "inputs requiring grad should be float64 or complex128 (got ", x.dtype(), "); finite differences in "
                "lower precision are not reliable");
  const variable_list outs = fn(inputs);
  for (size_t o = 0; o < outs.size(); ++o) {
    const Tensor& out = outs[o];
    const int64_t n_out = real_numel(out);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& x = inputs[i];
      if (!x.requires_grad()) continue;
      const int64_t n_in = real_numel(x);
      // analytic[k][j] = d out[k] / d x[j], row k from one backward with a one-hot grad_output.
      std::vector<std::vector<double>> analytic(n_out, std::vector<double>(n_in, 0.0));
      if (out.requires_grad()) {
        for (int64_t k = 0; k < n_out; ++k) {
          Tensor onehot = zeros(out.sizes(), TensorOptions().dtype(out.dtype()));
          (out.is_complex() ? view_as_real(onehot) : onehot).view({-1})[k].fill_(1);
          const variable_list g = grad({out}, {x}, {onehot}, /*retain_graph=*/true, false, /*allow_unused=*/true);
          if (g[0].defined()) analytic[k] = values(g[0]);
        }
      }
      // numerical: perturb x[j] by +-eps (on a contiguous copy) and difference the outputs.
      std::vector<std::vector<double>> numeric(n_out, std::vector<double>(n_in, 0.0));
      Tensor base = x.detach().resolve_conj().clone(MemoryFormat::Contiguous);
      double* p = static_cast<double*>(base.data_ptr());  // float64, or complex128's parts
      // fn runs with grad mode on and inputs requiring grad as given: gradgradcheck's fn calls grad().
      for (int64_t j = 0; j < n_in; ++j) {
        variable_list args = inputs;
        const double orig = p[j];
        p[j] = orig + eps;
        args[i] = base.clone().requires_grad_();
        const std::vector<double> plus = values(fn(args)[o]);
        p[j] = orig - eps;
        args[i] = base.clone().requires_grad_();
        const std::vector<double> minus = values(fn(args)[o]);
        p[j] = orig;
        for (int64_t k = 0; k < n_out; ++k) numeric[k][j] = (plus[k] - minus[k]) / (2 * eps);
      }
      double worst = 0;
      int64_t wk = -1, wj = -1;
      for (int64_t k = 0; k < n_out; ++k) {
        for (int64_t j = 0; j < n_in; ++j) {
          const double a = analytic[k][j], nu = numeric[k][j];
          const double excess = std::abs(a - nu) - (atol + rtol * std::abs(nu));
          if (excess > 0 && (wk < 0 || excess > worst)) {
            worst = excess;
            wk = k;
            wj = j;
          }
        }
      }
      EMBER_CHECK(wk < 0, "gradcheck", "Jacobian mismatch for output ", o, " with respect to input ", i,
                  ", worst at output element ", wk, ", input element ", wj, ": numerical ", numeric[wk][wj],
                  " analytical ", analytic[wk][wj]);
    }
  }
  return true;
}

bool gradcheck(const std::function<Tensor(const variable_list&)>& fn, const variable_list& inputs, double eps,
               double atol, double rtol) {
  return gradcheck([&](const variable_list& xs) { return variable_list{fn(xs)}; }, inputs, eps, atol, rtol);
}

bool gradgradcheck(const std::function<variable_list(const variable_list&)>& fn, const variable_list& inputs,
                   const variable_list& grad_outputs, double eps, double atol, double rtol) {
  variable_list gos = grad_outputs;
  if (gos.empty()) {
    Generator gen(0);
    for (const Tensor& out : fn(inputs))
      gos.push_back(randn(out.sizes(), &gen, TensorOptions().dtype(kDouble)).requires_grad_());
  }
  const size_t n = inputs.size();
  // The first-order gradients w.r.t. the inputs requiring grad, recorded (zeros where unused).
  auto first_order = [&](const variable_list& all) {
    const variable_list xs(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
    const variable_list go(all.begin() + static_cast<std::ptrdiff_t>(n), all.end());
    variable_list outs, diff_inputs, grads_out, result;
    const variable_list ys = fn(xs);
    for (size_t k = 0; k < ys.size(); ++k) {
      if (!ys[k].requires_grad()) continue;
      outs.push_back(ys[k]);
      grads_out.push_back(go[k]);
    }
    for (const Tensor& x : xs)
      if (x.requires_grad()) diff_inputs.push_back(x);
    const variable_list g = outs.empty() ? variable_list(diff_inputs.size())
                                         : grad(outs, diff_inputs, grads_out, true, /*create_graph=*/true, true);
    for (size_t k = 0; k < g.size(); ++k) result.push_back(g[k].defined() ? g[k] : zeros_like(diff_inputs[k]));
    return result;
  };
  variable_list all = inputs;
  all.insert(all.end(), gos.begin(), gos.end());
  return gradcheck(first_order, all, eps, atol, rtol);
}

bool gradgradcheck(const std::function<Tensor(const variable_list&)>& fn, const variable_list& inputs,
                   const variable_list& grad_outputs, double eps, double atol, double rtol) {
  return gradgradcheck([&](const variable_list& xs) { return variable_list{fn(xs)}; }, inputs, grad_outputs, eps,
                       atol, rtol);
}

}  // namespace ember::autograd
