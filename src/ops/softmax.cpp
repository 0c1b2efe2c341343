// softmax and log_softmax over one dim (optionally after a cast to `dtype`). The output is
// contiguous, as PyTorch's CPU kernels make it.
#include "dispatch/dispatch.h"
#include "ember/nn_ops.h"
#include "kernels/cpu/softmax_kernels.h"

namespace ember::nn::functional {
namespace {

Tensor softmax_impl(const char* op, const Tensor& input, int64_t dim, std::optional<ScalarType> dtype, bool log) {
  const Tensor x = dtype ? input.to(*dtype) : input;
  EMBER_CHECK(is_floating_type(x.dtype()), op, "\"", op, "\" not implemented for '", x.dtype(), "'");
  const int64_t d = maybe_wrap_dim(dim, x.dim(), op);
  Tensor y = make_empty(x.sizes(), x.dtype());
  if (x.numel() == 0) return y;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= x.size(i);
  for (int64_t i = d + 1; i < x.dim(); ++i) inner *= x.size(i);
  const int64_t len = x.dim() == 0 ? 1 : x.size(d);
  kernels::softmax_kernel(x.contiguous().view({outer, len, inner}), y.view({outer, len, inner}), log);
  return y;
}

struct SoftmaxOp {
  static constexpr const char* name = "softmax";
  static Tensor run(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
    return softmax_impl(name, input, dim, dtype, false);
  }
};
struct LogSoftmaxOp {
  static constexpr const char* name = "log_softmax";
  static Tensor run(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
    return softmax_impl(name, input, dim, dtype, true);
  }
};

}  // namespace

Tensor softmax(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
  return dispatch::call<SoftmaxOp>(input, dim, dtype);
}
Tensor log_softmax(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
  return dispatch::call<LogSoftmaxOp>(input, dim, dtype);
}

}  // namespace ember::nn::functional
