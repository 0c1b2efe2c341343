// torch.special (stable since PyTorch 1.10), as libtorch spells it twice: the ATen functions
// `torch::special_erf(x)` and the namespace `torch::special::erf(x)`. Most are PyTorch's own
// aliases of ops Ember has (expit is sigmoid, psi digamma, gammaln lgamma, gammainc igamma, ...);
// entr, ndtr and xlog1py are compositions. All are differentiable where PyTorch's are.
#pragma once
#include <cstdint>
#include <optional>

#include "ember/array_ref.h"
#include "ember/scalar.h"
#include "ember/tensor.h"

namespace ember {

// One-argument functions: ATen name, then the op it stands for.
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
  X(i0)

#define EMBER_DECLARE_SPECIAL_UNARY(name) Tensor special_##name(const Tensor& self);
EMBER_SPECIAL_UNARY(EMBER_DECLARE_SPECIAL_UNARY)
#undef EMBER_DECLARE_SPECIAL_UNARY

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

namespace special {
#define EMBER_FORWARD_SPECIAL_UNARY(name) \
  inline Tensor name(const Tensor& self) { return special_##name(self); }
EMBER_SPECIAL_UNARY(EMBER_FORWARD_SPECIAL_UNARY)
#undef EMBER_FORWARD_SPECIAL_UNARY
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
}  // namespace special

}  // namespace ember
