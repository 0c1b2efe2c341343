// torch.ao.nn.quantized's functional ops and the modules made of them: ReLU6, Hardswish,
// BatchNorm2d, QFunctional and FloatFunctional. The ops are in ops/quantized_nn.cpp.
#include <ostream>

#include "ember/aten_tail.h"
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/pointwise.h"
#include "ember/quantization.h"
#include "ops/quantized_util.h"

namespace ember::nn::quantized {

namespace functional {
Tensor hardswish(const Tensor& input, double scale, int64_t zero_point) {
  return ember::quantized::hardswish(input, scale, zero_point);
}
Tensor add(const Tensor& qa, const Tensor& qb, double scale, int64_t zero_point) {
  return ember::quantized::add_requant(qa, qb, scale, zero_point, false);
}
Tensor add_relu(const Tensor& qa, const Tensor& qb, double scale, int64_t zero_point) {
  return ember::quantized::add_requant(qa, qb, scale, zero_point, true);
}
Tensor mul(const Tensor& qa, const Tensor& qb, double scale, int64_t zero_point) {
  return ember::quantized::mul_requant(qa, qb, scale, zero_point, false);
}
Tensor mul_relu(const Tensor& qa, const Tensor& qb, double scale, int64_t zero_point) {
  return ember::quantized::mul_requant(qa, qb, scale, zero_point, true);
}
Tensor add_scalar(const Tensor& qa, double other) { return ember::quantized::add_scalar(qa, other); }
Tensor mul_scalar(const Tensor& qa, double other) { return ember::quantized::mul_scalar(qa, other); }
Tensor cat(TensorList tensors, int64_t dim, std::optional<double> scale, std::optional<int64_t> zero_point) {
  return ember::quantized::cat_requant(tensors, dim, scale, zero_point);
}
}  // namespace functional

Tensor ReLU6Impl::forward(const Tensor& input) {
  EMBER_CHECK(input.is_quantized(), "quantized::ReLU6", "expected a quantized input, got ", input.dtype());
  return ember::relu6(input);
}
void ReLU6Impl::pretty_print(std::ostream& stream) const { stream << "ReLU6()"; }

HardswishImpl::HardswishImpl(double scale_, int64_t zero_point_) : scale(scale_), zero_point(zero_point_) {}
Tensor HardswishImpl::forward(const Tensor& input) { return functional::hardswish(input, scale, zero_point); }
void HardswishImpl::pretty_print(std::ostream& stream) const {
  stream << "QuantizedHardswish(scale=" << scale << ", zero_point=" << zero_point << ")";
}

BatchNorm2dImpl::BatchNorm2dImpl(int64_t num_features, double eps_) : eps(eps_) {
  EMBER_CHECK(num_features > 0, "quantized::BatchNorm2d", "num_features must be positive, got ", num_features);
  weight = register_buffer("weight", ones({num_features}));
  bias = register_buffer("bias", zeros({num_features}));
  running_mean = register_buffer("running_mean", zeros({num_features}));
  running_var = register_buffer("running_var", ones({num_features}));
}
std::shared_ptr<BatchNorm2dImpl> BatchNorm2dImpl::from_float(const nn::BatchNormImpl<2>& bn, double scale,
                                                             int64_t zero_point) {
  const int64_t n = bn.options.num_features();
  EMBER_CHECK(bn.running_mean.defined() && bn.running_var.defined(), "quantized::BatchNorm2d::from_float",
              "the batch norm has no running statistics (track_running_stats=false)");
  auto q = std::make_shared<BatchNorm2dImpl>(n, bn.options.eps());
  NoGradGuard no_grad;
  if (bn.weight.defined()) q->weight.copy_(bn.weight);
  if (bn.bias.defined()) q->bias.copy_(bn.bias);
  q->running_mean.copy_(bn.running_mean);
  q->running_var.copy_(bn.running_var);
  q->scale = scale;
  q->zero_point = zero_point;
  return q;
}
Tensor BatchNorm2dImpl::forward(const Tensor& input) {
  return ember::quantized::batch_norm2d(input, weight, bias, running_mean, running_var, eps, scale, zero_point);
}
void BatchNorm2dImpl::pretty_print(std::ostream& stream) const {
  stream << "QuantizedBatchNorm2d(" << weight.size(0) << ", eps=" << eps << ", scale=" << scale
         << ", zero_point=" << zero_point << ")";
}

QFunctionalImpl::QFunctionalImpl(double scale_, int64_t zero_point_) : scale(scale_), zero_point(zero_point_) {}
Tensor QFunctionalImpl::add(const Tensor& x, const Tensor& y) { return functional::add(x, y, scale, zero_point); }
Tensor QFunctionalImpl::add_scalar(const Tensor& x, double y) { return functional::add_scalar(x, y); }
Tensor QFunctionalImpl::mul(const Tensor& x, const Tensor& y) { return functional::mul(x, y, scale, zero_point); }
Tensor QFunctionalImpl::mul_scalar(const Tensor& x, double y) { return functional::mul_scalar(x, y); }
Tensor QFunctionalImpl::cat(TensorList tensors, int64_t dim) {
  return functional::cat(tensors, dim, scale, zero_point);
}
Tensor QFunctionalImpl::add_relu(const Tensor& x, const Tensor& y) {
  return functional::add_relu(x, y, scale, zero_point);
}
void QFunctionalImpl::pretty_print(std::ostream& stream) const {
  stream << "QFunctional(scale=" << scale << ", zero_point=" << zero_point << ")";
}

Tensor FloatFunctionalImpl::observe(const Tensor& r) {
  return activation_post_process ? activation_post_process->forward(r) : r;
}
Tensor FloatFunctionalImpl::add(const Tensor& x, const Tensor& y) {
  return qfunctional ? qfunctional->add(x, y) : observe(ember::add(x, y));
}
Tensor FloatFunctionalImpl::add_scalar(const Tensor& x, double y) {
  return qfunctional ? qfunctional->add_scalar(x, y) : ember::add(x, y);
}
Tensor FloatFunctionalImpl::mul_scalar(const Tensor& x, double y) {
  return qfunctional ? qfunctional->mul_scalar(x, y) : ember::mul(x, y);
}
Tensor FloatFunctionalImpl::mul(const Tensor& x, const Tensor& y) {
  return qfunctional ? qfunctional->mul(x, y) : observe(ember::mul(x, y));
}
Tensor FloatFunctionalImpl::cat(TensorList tensors, int64_t dim) {
  return qfunctional ? qfunctional->cat(tensors, dim) : observe(ember::cat(tensors, dim));
}
Tensor FloatFunctionalImpl::add_relu(const Tensor& x, const Tensor& y) {
  return qfunctional ? qfunctional->add_relu(x, y) : observe(ember::relu(ember::add(x, y)));
}
void FloatFunctionalImpl::pretty_print(std::ostream& stream) const {
  if (qfunctional) return qfunctional->pretty_print(stream);
  stream << "FloatFunctional()";
}

}  // namespace ember::nn::quantized
