// The FuncOptions forms of the normalizations, and normalize / local_response_norm as
// compositions of differentiable ops.
#include "ember/nn/functional/normalization.h"

#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"

namespace ember::nn::functional {

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& o) {
  EMBER_CHECK(input.defined() && input.dim() >= 2, "batch_norm", "expected an input of at least 2 dims, got ",
              input.defined() ? input.sizes() : IntArrayRef());
  if (o.training()) {
    // Training needs more than one value per channel to estimate a variance (PyTorch's check).
    int64_t per_channel = input.size(0);
    for (int64_t d = 2; d < input.dim(); ++d) per_channel *= input.size(d);
    EMBER_CHECK(per_channel != 1, "batch_norm", "Expected more than 1 value per channel when training, got input size ",
                input.sizes());
  }
  EMBER_CHECK(o.momentum().has_value(), "batch_norm", "momentum must be given (got nullopt)");
  return ember::batch_norm(input, o.weight(), o.bias(), running_mean, running_var, o.training(), *o.momentum(),
                           o.eps());
}

Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& o) {
  return ember::instance_norm(input, o.weight(), o.bias(), o.running_mean(), o.running_var(), o.use_input_stats(),
                              o.momentum(), o.eps());
}

Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& o) {
  return ember::layer_norm(input, o.normalized_shape(), o.weight(), o.bias(), o.eps());
}

Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& o) {
  return ember::group_norm(input, o.num_groups(), o.weight(), o.bias(), o.eps());
}

Tensor normalize(const Tensor& input, NormalizeFuncOptions o) {
  EMBER_CHECK(input.defined(), "normalize", "input must be defined");
  const Tensor denom = input.norm(o.p(), {o.dim()}, true).clamp_min(o.eps()).expand_as(input);
  Tensor result = input / denom;
  if (o.out()) {
    o.out()->copy_(result);
    return *o.out();
  }
  return result;
}

// PyTorch's composition: the mean of x^2 over `size` channels (zero-padded) by average pooling
// along the channel dim of a (N, 1, C, rest) view.
Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& o) {
  EMBER_CHECK(input.defined() && input.dim() >= 3, "local_response_norm",
              "Expected 3D or higher dimensionality input (got ", input.defined() ? input.dim() : 0, " dimensions)");
  EMBER_CHECK(o.size() > 0, "local_response_norm", "size must be positive, got ", o.size());
  if (input.numel() == 0) return input;
  const int64_t n = input.size(0), c = input.size(1);
  Tensor div = (input * input).reshape({n, 1, c, -1});
  div = ember::pad(div, {0, 0, o.size() / 2, (o.size() - 1) / 2});
  div = ember::avg_pool2d(div, {o.size(), 1}, {1, 1}).view(input.sizes());
  return input / (div * o.alpha() + o.k()).pow(o.beta());
}

}  // namespace ember::nn::functional
