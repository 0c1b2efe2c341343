// torch.special (stable since PyTorch 1.10), as libtorch spells it twice: the ATen functions
// `torch::special_erf(x)` and the namespace `torch::special::erf(x)`. Most are PyTorch's own
// aliases of ops Ember has (expit is sigmoid, psi digamma, gammaln lgamma, gammainc igamma, ...);
// entr, ndtr and xlog1py are compositions; the Bessel, Airy, error-function, zeta and polynomial
// families are kernels of their own (src/ops/special_functions.cpp). All are differentiable where
// PyTorch's are.
#pragma once
#include <cstdint>
#include <optional>

#include "ember/array_ref.h"
#include "ember/scalar.h"
#include "ember/tensor.h"

namespace ember {

// One-argument functions.
#define EMBER_SPECIAL_UNARY(X) \
  X(entr)                      \
  X(ndtr)                      \
  X(expm1)                     \
  X(exp2)                      \
  X(log1p)                     \
  X(erf)                       \
  X(erfc)                      \
  X(erfinv)                    \
  X(expit)                     \
  X(sinc)                      \
  X(psi)                       \
  X(digamma)                   \
  X(gammaln)                   \
  X(i0)                        \
  X(i0e)                       \
  X(i1)                        \
  X(i1e)                       \
  X(ndtri)                     \
  X(log_ndtr)                  \
  X(erfcx)                     \
  X(airy_ai)                   \
  X(bessel_j0)                 \
  X(bessel_j1)                 \
  X(bessel_y0)                 \
  X(bessel_y1)                 \
  X(modified_bessel_i0)        \
  X(modified_bessel_i1)        \
  X(modified_bessel_k0)        \
  X(modified_bessel_k1)        \
  X(scaled_modified_bessel_k0) \
  X(scaled_modified_bessel_k1) \
  X(spherical_bessel_j0)

// Functions of (x, n): the classical orthogonal polynomials of degree n (truncated toward zero;
// 0 for a negative degree), and the Hurwitz zeta function zeta(x, q). Each takes a Scalar for
// either argument too.
#define EMBER_SPECIAL_BINARY(X)      \
  X(chebyshev_polynomial_t)          \
  X(chebyshev_polynomial_u)          \
  X(chebyshev_polynomial_v)          \
  X(chebyshev_polynomial_w)          \
  X(shifted_chebyshev_polynomial_t)  \
  X(shifted_chebyshev_polynomial_u)  \
  X(shifted_chebyshev_polynomial_v)  \
  X(shifted_chebyshev_polynomial_w)  \
  X(hermite_polynomial_h)            \
  X(hermite_polynomial_he)           \
  X(laguerre_polynomial_l)           \
  X(legendre_polynomial_p)           \
  X(zeta)

#define EMBER_DECLARE_SPECIAL_UNARY(name) Tensor special_##name(const Tensor& self);
EMBER_SPECIAL_UNARY(EMBER_DECLARE_SPECIAL_UNARY)
#undef EMBER_DECLARE_SPECIAL_UNARY
#define EMBER_DECLARE_SPECIAL_BINARY(name)                     \
  Tensor special_##name(const Tensor& self, const Tensor& other); \
  Tensor special_##name(const Scalar& self, const Tensor& other); \
  Tensor special_##name(const Tensor& self, const Scalar& other);
EMBER_SPECIAL_BINARY(EMBER_DECLARE_SPECIAL_BINARY)
#undef EMBER_DECLARE_SPECIAL_BINARY

Tensor special_round(const Tensor& self, int64_t decimals = 0);
Tensor special_polygamma(int64_t n, const Tensor& self);
Tensor special_multigammaln(const Tensor& self, int64_t p);
Tensor special_logit(const Tensor& self, std::optional<double> eps = std::nullopt);
Tensor special_logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim = false);
Tensor special_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor special_log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor special_gammainc(const Tensor& self, const Tensor& other);
Tensor special_gammaincc(const Tensor& self, const Tensor& other);
Tensor special_xlogy(const Tensor& self, const Tensor& other);
Tensor special_xlogy(const Scalar& self, const Tensor& other);
Tensor special_xlogy(const Tensor& self, const Scalar& other);
// self * log1p(other), 0 where self is 0 (unless other is NaN).
Tensor special_xlog1py(const Tensor& self, const Tensor& other);
Tensor special_xlog1py(const Scalar& self, const Tensor& other);
Tensor special_xlog1py(const Tensor& self, const Scalar& other);

// The out= forms (libtorch's `special_erf_out(result, self)`): the result computed as by the
// functional form, then written into `result` by detail::special_write_out (src/ops/special.cpp):
// resized when its shape differs, its dtype able to hold the result's, no autograd history (an
// input that requires grad is an error), as libtorch's out= convention has it. Inline, so that the
// library holds one function for the ninety forms.
namespace detail {
Tensor& special_write_out(const char* op, Tensor& result, const Tensor& value);
}
#define EMBER_DEFINE_SPECIAL_OUT(name, params, args)                                          \
  inline Tensor& special_##name##_out params {                                                \
    return detail::special_write_out("special_" #name "_out", result, special_##name args);   \
  }
#define EMBER_DEFINE_SPECIAL_UNARY_OUT(name) EMBER_DEFINE_SPECIAL_OUT(name, (Tensor& result, const Tensor& self), (self))
EMBER_SPECIAL_UNARY(EMBER_DEFINE_SPECIAL_UNARY_OUT)
#undef EMBER_DEFINE_SPECIAL_UNARY_OUT
#define EMBER_SPECIAL_BINARY_WITH_SCALARS(X) EMBER_SPECIAL_BINARY(X) X(xlogy) X(xlog1py)
#define EMBER_DEFINE_SPECIAL_BINARY_OUT(name)                                                         \
  EMBER_DEFINE_SPECIAL_OUT(name, (Tensor& result, const Tensor& self, const Tensor& other), (self, other)) \
  EMBER_DEFINE_SPECIAL_OUT(name, (Tensor& result, const Scalar& self, const Tensor& other), (self, other)) \
  EMBER_DEFINE_SPECIAL_OUT(name, (Tensor& result, const Tensor& self, const Scalar& other), (self, other))
EMBER_SPECIAL_BINARY_WITH_SCALARS(EMBER_DEFINE_SPECIAL_BINARY_OUT)
#undef EMBER_DEFINE_SPECIAL_BINARY_OUT
EMBER_DEFINE_SPECIAL_OUT(gammainc, (Tensor& result, const Tensor& self, const Tensor& other), (self, other))
EMBER_DEFINE_SPECIAL_OUT(gammaincc, (Tensor& result, const Tensor& self, const Tensor& other), (self, other))
EMBER_DEFINE_SPECIAL_OUT(polygamma, (Tensor& result, int64_t n, const Tensor& self), (n, self))
EMBER_DEFINE_SPECIAL_OUT(multigammaln, (Tensor& result, const Tensor& self, int64_t p), (self, p))
EMBER_DEFINE_SPECIAL_OUT(logit, (Tensor& result, const Tensor& self, std::optional<double> eps = std::nullopt),
                         (self, eps))
#undef EMBER_DEFINE_SPECIAL_OUT
// (these two check `result`'s dtype first, as libtorch's)
Tensor& special_round_out(Tensor& result, const Tensor& self, int64_t decimals = 0);
Tensor& special_logsumexp_out(Tensor& result, const Tensor& self, IntArrayRef dim, bool keepdim = false);

namespace special {
#define EMBER_FORWARD_SPECIAL_UNARY(name) \
  inline Tensor name(const Tensor& self) { return special_##name(self); }
EMBER_SPECIAL_UNARY(EMBER_FORWARD_SPECIAL_UNARY)
#undef EMBER_FORWARD_SPECIAL_UNARY
#define EMBER_FORWARD_SPECIAL_BINARY(name) \
  template <class A, class B>              \
  Tensor name(const A& self, const B& other) { return special_##name(self, other); }
EMBER_SPECIAL_BINARY(EMBER_FORWARD_SPECIAL_BINARY)
#undef EMBER_FORWARD_SPECIAL_BINARY
inline Tensor round(const Tensor& self, int64_t decimals = 0) { return special_round(self, decimals); }
inline Tensor polygamma(int64_t n, const Tensor& self) { return special_polygamma(n, self); }
inline Tensor multigammaln(const Tensor& self, int64_t p) { return special_multigammaln(self, p); }
inline Tensor logit(const Tensor& self, std::optional<double> eps = std::nullopt) { return special_logit(self, eps); }
inline Tensor logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim = false) {
  return special_logsumexp(self, dim, keepdim);
}
inline Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt) {
  return special_softmax(self, dim, dtype);
}
inline Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt) {
  return special_log_softmax(self, dim, dtype);
}
inline Tensor gammainc(const Tensor& self, const Tensor& other) { return special_gammainc(self, other); }
inline Tensor gammaincc(const Tensor& self, const Tensor& other) { return special_gammaincc(self, other); }
template <class A, class B>
Tensor xlogy(const A& self, const B& other) {
  return special_xlogy(self, other);
}
template <class A, class B>
Tensor xlog1py(const A& self, const B& other) {
  return special_xlog1py(self, other);
}
// torch::special's out= forms forward every argument list of the functions above (libtorch's
// logit_out and round_out take no eps or decimals; these accept them too).
#define EMBER_FORWARD_SPECIAL_OUT(name)                        \
  template <class... Args>                                     \
  Tensor& name##_out(Tensor& result, const Args&... args) {    \
    return special_##name##_out(result, args...);              \
  }
EMBER_SPECIAL_UNARY(EMBER_FORWARD_SPECIAL_OUT)
EMBER_SPECIAL_BINARY_WITH_SCALARS(EMBER_FORWARD_SPECIAL_OUT)
EMBER_FORWARD_SPECIAL_OUT(round)
EMBER_FORWARD_SPECIAL_OUT(polygamma)
EMBER_FORWARD_SPECIAL_OUT(multigammaln)
EMBER_FORWARD_SPECIAL_OUT(logit)
EMBER_FORWARD_SPECIAL_OUT(gammainc)
EMBER_FORWARD_SPECIAL_OUT(gammaincc)
#undef EMBER_FORWARD_SPECIAL_OUT
inline Tensor& logsumexp_out(Tensor& result, const Tensor& self, IntArrayRef dims, bool keepdim) {
  return special_logsumexp_out(result, self, dims, keepdim);
}
}  // namespace special

}  // namespace ember
