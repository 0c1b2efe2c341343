// torch.special: aliases of Ember's ops under PyTorch's names, and the few compositions
// (entr, ndtr, xlog1py), which take their derivatives from the ops they are made of.
#include "ember/special.h"

#include <cmath>
#include <limits>

#include "ember/aten_tail.h"
#include "ember/aten_tail2.h"
#include "ember/factory.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/unary_ops.h"
#include "autograd/layer.h"
#include "ops/op_util.h"
#include "special_math.h"

namespace ember {
using op_util::to_float;

// -x log x for x > 0, 0 at 0, -inf below (and NaN stays NaN).
Tensor special_entr(const Tensor& self) {
  special_math::check_real("special_entr", "entr_cpu", self);
  const Tensor x = to_float(self);
  const Tensor positive = -x * log(x);
  return where(x > 0, positive, where(x == 0, zeros_like(x), full_like(x, -std::numeric_limits<double>::infinity())))
      .masked_fill(isnan(x), std::numeric_limits<double>::quiet_NaN());
}
// The standard normal CDF, through erfc so that the lower tail keeps its relative precision.
Tensor special_ndtr(const Tensor& self) {
  special_math::check_real("special_ndtr", "erf_vml_cpu", self);
  return erfc(to_float(self) * -M_SQRT1_2) * 0.5;
}
Tensor special_expm1(const Tensor& self) { return expm1(self); }
Tensor special_exp2(const Tensor& self) { return exp2(self); }
Tensor special_log1p(const Tensor& self) { return log1p(self); }
Tensor special_erf(const Tensor& self) { return erf(self); }
Tensor special_erfc(const Tensor& self) { return erfc(self); }
Tensor special_erfinv(const Tensor& self) { return erfinv(self); }
Tensor special_expit(const Tensor& self) { return sigmoid(self); }
Tensor special_sinc(const Tensor& self) { return sinc(self); }
Tensor special_psi(const Tensor& self) { return digamma(self); }
Tensor special_digamma(const Tensor& self) { return digamma(self); }
Tensor special_gammaln(const Tensor& self) { return lgamma(self); }
Tensor special_i0(const Tensor& self) { return i0(self); }
Tensor special_round(const Tensor& self, int64_t decimals) { return round(self, decimals); }
Tensor special_polygamma(int64_t n, const Tensor& self) { return polygamma(n, self); }
Tensor special_multigammaln(const Tensor& self, int64_t p) { return mvlgamma(self, p); }
Tensor special_logit(const Tensor& self, std::optional<double> eps) { return logit(self, eps); }
Tensor special_logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim) { return logsumexp(self, dim, keepdim); }
Tensor special_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax(self, dim, dtype);
}
Tensor special_log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return log_softmax(self, dim, dtype);
}
Tensor special_gammainc(const Tensor& self, const Tensor& other) { return igamma(self, other); }
Tensor special_gammaincc(const Tensor& self, const Tensor& other) { return igammac(self, other); }
Tensor special_xlogy(const Tensor& self, const Tensor& other) { return xlogy(self, other); }
Tensor special_xlogy(const Scalar& self, const Tensor& other) { return xlogy(self, other); }
Tensor special_xlogy(const Tensor& self, const Scalar& other) { return xlogy(self, other); }

// x * log1p(y) is already 0 where x is 0 unless log1p(y) is infinite (y = -1 or inf): only
// there is the factor replaced, so the gradient with respect to x stays log1p(y) everywhere, as
// PyTorch's formula has it (xlogy's is masked at 0, xlog1py's is not).
Tensor special_xlog1py(const Tensor& self, const Tensor& other) {
  special_math::check_real("special_xlog1py", "xlog1py_cpu", self);
  special_math::check_real("special_xlog1py", "xlog1py_cpu", other);
  const Tensor x = to_float(self), y = to_float(other), l = log1p(y);
  return x * where(logical_and(logical_and(x == 0, logical_not(isfinite(l))), logical_not(isnan(y))), 0.0, l);
}
// A Scalar operand takes the tensor's floating type, as a wrapped number does in PyTorch.
Tensor special_xlog1py(const Scalar& self, const Tensor& other) {
  return special_xlog1py(scalar_tensor(self, to_float(other).dtype()), other);
}
Tensor special_xlog1py(const Tensor& self, const Scalar& other) {
  return special_xlog1py(self, scalar_tensor(other, to_float(self).dtype()));
}

// ---- out= forms -------------------------------------------------------------------------------

Tensor& detail::special_write_out(const char* op, Tensor& result, const Tensor& value) {
  if (value.requires_grad()) autograd::fail_out_requires_grad(op);
  EMBER_CHECK(can_cast(value.dtype(), result.dtype()), op, "result type ", value.dtype(),
              " can't be cast to the desired output type ", result.dtype());
  if (!result.sizes().equals(value.sizes())) result.resize_(value.sizes());
  return result.copy_(value);
}

// round keeps its input's dtype, and libtorch wants exactly that dtype in out.
Tensor& special_round_out(Tensor& result, const Tensor& self, int64_t decimals) {
  EMBER_CHECK(result.dtype() == self.dtype(), "special_round_out", "Found dtype ", result.dtype(), " but expected ",
              self.dtype());
  return detail::special_write_out("special_round_out", result, special_round(self, decimals));
}
Tensor& special_logsumexp_out(Tensor& result, const Tensor& self, IntArrayRef dim, bool keepdim) {
  EMBER_CHECK(is_floating_type(result.dtype()) || is_complex_type(result.dtype()), "special_logsumexp_out",
              "logsumexp(): Expected floating point type for result tensor, but got: ", result.dtype());
  return detail::special_write_out("special_logsumexp_out", result, special_logsumexp(self, dim, keepdim));
}

}  // namespace ember
