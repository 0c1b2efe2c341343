// Scalar special functions in double precision, and the elementwise maps that run them over a
// tensor (aten_tail2_special.cpp: gamma family, i0, incomplete gamma; special_functions.cpp: the
// Bessel, Airy, error-function and polynomial families of torch.special).
#pragma once
#include <cstdint>

#include "ember/factory.h"
#include "ember/shape.h"
#include "ember/tensor.h"

namespace ember::special_math {

// Hurwitz zeta(s, q) = sum_k (q + k)^-s for s > 1, by Euler-Maclaurin summation.
double hurwitz_zeta(double s, double q);
// Modified Bessel functions of the first kind.
double i0(double x);
double i1(double x);

// The dtype of a function's result: the input's floating type, the default one for integers.
inline ScalarType float_result(ScalarType t) { return is_floating_type(t) ? t : get_default_dtype(); }

// out = fn(x) elementwise, computed in double, for a result of x's float dtype.
template <class Fn>
Tensor map_unary(const Tensor& self, Fn fn) {
  const ScalarType out_t = float_result(self.dtype());
  const Tensor x = self.to(kDouble).contiguous();
  Tensor out = make_empty(self.sizes(), kDouble);
  const double* xp = x.data_ptr<double>();
  double* op = out.data_ptr<double>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) op[i] = fn(xp[i]);
  return out_t == kDouble ? out : out.to(out_t);
}
// out = fn(a, b) elementwise over the broadcast shape, in double, for a result of the promoted
// float dtype.
template <class Fn>
Tensor map_binary(const char* name, const Tensor& a, const Tensor& b, Fn fn) {
  const DimVector shape = infer_size(a.sizes(), b.sizes(), name);
  const ScalarType out_t = float_result(promote_types(a.dtype(), b.dtype()));
  const Tensor x = a.to(kDouble).expand(shape).contiguous(), y = b.to(kDouble).expand(shape).contiguous();
  Tensor out = make_empty(shape, kDouble);
  const double* xp = x.data_ptr<double>();
  const double* yp = y.data_ptr<double>();
  double* op = out.data_ptr<double>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) op[i] = fn(xp[i], yp[i]);
  return out_t == kDouble ? out : out.to(out_t);
}

}  // namespace ember::special_math
