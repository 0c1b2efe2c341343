// Scalar special functions in double precision, and the elementwise maps that run them over a
// tensor (aten_tail2_special.cpp: gamma family, i0, incomplete gamma; special_functions.cpp: the
// Bessel, Airy, error-function and polynomial families of torch.special).
#pragma once
#include <cstdint>

#include "core/parallel.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/shape.h"
#include "ember/tensor.h"
#include "kernels/cpu/special.h"

namespace ember::special_math {

// Hurwitz zeta(s, q) = sum_k (q + k)^-s for s > 1, by Euler-Maclaurin summation.
double hurwitz_zeta(double s, double q);

// Raises PyTorch's error for a complex argument of a function whose CPU kernel `kernel` has no
// complex form (`"erf_vml_cpu" not implemented for 'ComplexFloat'`).
inline void check_real(const char* op, const char* kernel, const Tensor& t) {
  EMBER_CHECK(!t.defined() || !is_complex_type(t.dtype()), op, "\"", kernel, "\" not implemented for '", t.dtype(), "'");
}

// The dtype of a function's result: the input's floating type, the default one for integers.
inline ScalarType float_result(ScalarType t) { return is_floating_type(t) ? t : get_default_dtype(); }

// The vectorized kernel `op` over self (integers and bool computed in the default float dtype).
Tensor map_kernel(const char* name, const Tensor& self, kernels::SpecialOp op);

// Elements per thread of the elementwise maps: their functions cost 20 to 500 ns each.
constexpr int64_t kMapGrain = 1024;

// out = fn(x) elementwise, computed in double, for a result of x's float dtype.
template <class Fn>
Tensor map_unary(const Tensor& self, Fn fn) {
  const ScalarType out_t = float_result(self.dtype());
  const Tensor x = self.to(kDouble).contiguous();
  Tensor out = make_empty(self.sizes(), kDouble);
  const double* xp = x.data_ptr<double>();
  double* op = out.data_ptr<double>();
  parallel_for(0, x.numel(), kMapGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) op[i] = fn(xp[i]);
  });
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
  parallel_for(0, x.numel(), kMapGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) op[i] = fn(xp[i], yp[i]);
  });
  return out_t == kDouble ? out : out.to(out_t);
}

}  // namespace ember::special_math
