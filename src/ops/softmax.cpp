// softmax and log_softmax over one dim (optionally after a cast to `dtype`). The output is
// contiguous, as PyTorch's CPU kernels make it. The derivatives use the saved output with one fused
// kernel per row (_softmax_backward_data / _log_softmax_backward_data).
#include "dispatch/dispatch.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "kernels/cpu/softmax_kernels.h"

namespace ember {
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
  kernels::softmax_kernel(x.contiguous(), y, {outer, len, inner}, log);
  return y;
}

// The kernel of the input's gradient (PyTorch's _softmax_backward_data and
// _log_softmax_backward_data), an op of its own so that the dispatch point's layers (the
// profiler, a capturing graph) see it.
template <bool Log>
struct SoftmaxBackwardDataOp {
  static constexpr const char* name = Log ? "_log_softmax_backward_data" : "_softmax_backward_data";
  static Tensor run(const Tensor& grad, const Tensor& y, int64_t dim) {
    Tensor gin = make_empty(y.sizes(), y.dtype());
    if (y.numel() == 0) return gin;
    const int64_t d = maybe_wrap_dim(dim, y.dim(), name);
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < d; ++i) outer *= y.size(i);
    for (int64_t i = d + 1; i < y.dim(); ++i) inner *= y.size(i);
    const int64_t len = y.dim() == 0 ? 1 : y.size(d);
    const Tensor g = grad.to(y.dtype()).contiguous();
    kernels::softmax_backward_kernel(g, y.contiguous(), gin, {outer, len, inner}, Log);
    return gin;
  }
};

// The input's gradient from the output y (of the dtype softmax computed in; the engine casts it
// back to the input's).
Tensor softmax_backward(const Tensor& grad, const Tensor& y, int64_t dim, bool log) {
  if (GradMode::is_enabled() && (grad.requires_grad() || y.requires_grad())) {
    // create_graph: the same formula from recorded ops, so it has a gradient of its own
    const Tensor g = grad.to(y.dtype());
    return log ? g - y.exp() * g.sum(dim, true) : y * (g - (g * y).sum(dim, true));
  }
  return log ? dispatch::call<SoftmaxBackwardDataOp<true>>(grad, y, dim)
             : dispatch::call<SoftmaxBackwardDataOp<false>>(grad, y, dim);
}

struct SoftmaxOp {
  static constexpr const char* name = "softmax";
  static Tensor run(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
    return softmax_impl(name, input, dim, dtype, false);
  }
  static void derivative(autograd::Derivative& d, const Tensor& input, int64_t dim, std::optional<ScalarType>) {
    d.name("SoftmaxBackward0");
    d.grad(input, [y = d.save_result(), dim](const auto& c) { return softmax_backward(c.grad(), c[y], dim, false); });
  }
};
struct LogSoftmaxOp {
  static constexpr const char* name = "log_softmax";
  static Tensor run(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
    return softmax_impl(name, input, dim, dtype, true);
  }
  static void derivative(autograd::Derivative& d, const Tensor& input, int64_t dim, std::optional<ScalarType>) {
    d.name("LogSoftmaxBackward0");
    d.grad(input, [y = d.save_result(), dim](const auto& c) { return softmax_backward(c.grad(), c[y], dim, true); });
  }
};

}  // namespace

Tensor softmax(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
  return dispatch::call<SoftmaxOp>(input, dim, dtype);
}
Tensor log_softmax(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
  return dispatch::call<LogSoftmaxOp>(input, dim, dtype);
}

}  // namespace ember

namespace ember {
Tensor Tensor::softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return ember::softmax(*this, dim, dtype);
}
Tensor Tensor::log_softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return ember::log_softmax(*this, dim, dtype);
}
}  // namespace ember
