// Quantized modules (libtorch's torch.ao.nn.quantized): Linear (static and dynamic), Conv1d/2d/3d
// (and torch.ao.nn.intrinsic.quantized's ConvReLU1d/2d/3d), Quantize and DeQuantize, ReLU6,
// Hardswish, BatchNorm2d, FloatFunctional and QFunctional; the quantized ops PyTorch reaches
// through torch.ops.quantized and torch.ao.nn.quantized.functional.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/nn/intrinsic.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/normalization.h"
#include "ember/nn/pimpl.h"
#include "ember/quantized.h"

namespace ember::quantization {
class ObserverOrFakeQuantize;
}

namespace ember::nn::quantized::functional {
// Per-tensor quint8 or qint8 inputs; the result requantized to (scale, zero_point).
// torch.ao.nn.quantized.functional.hardswish: hardswish of the dequantized values.
Tensor hardswish(const Tensor& input, double scale, int64_t zero_point);
// torch.ops.quantized.add / add_relu / mul / mul_relu: qa and qb of one dtype, qb broadcast to
// qa's shape, computed on the dequantized values (the result in qa's layout).
Tensor add(const Tensor& qa, const Tensor& qb, double scale, int64_t zero_point);
Tensor add_relu(const Tensor& qa, const Tensor& qb, double scale, int64_t zero_point);
Tensor mul(const Tensor& qa, const Tensor& qb, double scale, int64_t zero_point);
Tensor mul_relu(const Tensor& qa, const Tensor& qb, double scale, int64_t zero_point);
// torch.ops.quantized.add_scalar / mul_scalar: x + c and x * c with the output parameters PyTorch
// derives from c (add: the zero point shifted by round(c / scale) while it stays in range, else
// the range requantized; mul: the scale times |c|, the integers mirrored for c < 0, zeros for 0).
Tensor add_scalar(const Tensor& qa, double other);
Tensor mul_scalar(const Tensor& qa, double other);
// torch.ops.quantized.cat(qx, dim, scale, zero_point): the tensors (one dtype) dequantized, joined
// along dim and quantized (by default with the first tensor's parameters).
Tensor cat(TensorList tensors, int64_t dim, std::optional<double> scale, std::optional<int64_t> zero_point);
}  // namespace ember::nn::quantized::functional

namespace ember::nn::quantized {

// PyTorch's quantized ReLU6: clamp of the integers to the quantized [0, 6], the parameters kept
// (ember::relu6 of a quantized tensor).
class ReLU6Impl : public Module {
 public:
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
};
EMBER_MODULE(ReLU6);

// PyTorch's quantized Hardswish: functional::hardswish with the module's output parameters.
class HardswishImpl : public Module {
 public:
  HardswishImpl(double scale, int64_t zero_point);
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  double scale;
  int64_t zero_point;
};
EMBER_MODULE(Hardswish);

// PyTorch's quantized BatchNorm2d (torch.ops.quantized.batch_norm2d): the eval-mode batch norm of
// a 4-D quint8/qint8 input per tensor, quantized to the module's scale and zero point; the
// result is channels_last, as PyTorch's.
class BatchNorm2dImpl : public Module {
 public:
  explicit BatchNorm2dImpl(int64_t num_features, double eps = 1e-5);
  // PyTorch's from_float: the float module's parameters and statistics, the output's scale and
  // zero point given (what an observer of its output chose).
  static std::shared_ptr<BatchNorm2dImpl> from_float(const nn::BatchNormImpl<2>& bn, double scale, int64_t zero_point);
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  double eps;
  double scale = 1.0;
  int64_t zero_point = 0;
  Tensor weight, bias, running_mean, running_var;  // float32 buffers
};
EMBER_MODULE(BatchNorm2d);

// PyTorch's QFunctional: add, mul, cat and add_relu of quantized tensors, requantized to the
// module's scale and zero point (those an observer of the float model's result chose);
// add_scalar and mul_scalar with the parameters functional::add_scalar/mul_scalar derive.
class QFunctionalImpl : public Module {
 public:
  explicit QFunctionalImpl(double scale = 1.0, int64_t zero_point = 0);
  Tensor add(const Tensor& x, const Tensor& y);
  Tensor add_scalar(const Tensor& x, double y);
  Tensor mul(const Tensor& x, const Tensor& y);
  Tensor mul_scalar(const Tensor& x, double y);
  Tensor cat(TensorList tensors, int64_t dim = 0);
  Tensor add_relu(const Tensor& x, const Tensor& y);
  void pretty_print(std::ostream& stream) const override;
  double scale;
  int64_t zero_point;
};
EMBER_MODULE(QFunctional);

// PyTorch's FloatFunctional: add, mul, cat and add_relu of float tensors as modules, so that
// quantization::prepare can observe their results (activation_post_process) and convert can
// quantize them; add_scalar and mul_scalar are not observed (their quantized forms derive their
// parameters), as PyTorch's. C++ code holds its modules directly, so convert does not swap this module for a
// QFunctional as PyTorch's does: it gives it one (`qfunctional`), which its methods then run.
class FloatFunctionalImpl : public Module {
 public:
  Tensor add(const Tensor& x, const Tensor& y);
  Tensor add_scalar(const Tensor& x, double y);
  Tensor mul(const Tensor& x, const Tensor& y);
  Tensor mul_scalar(const Tensor& x, double y);
  Tensor cat(TensorList tensors, int64_t dim = 0);
  Tensor add_relu(const Tensor& x, const Tensor& y);
  void pretty_print(std::ostream& stream) const override;
  // attached by prepare (none: results pass as they are, PyTorch's Identity)
  std::shared_ptr<quantization::ObserverOrFakeQuantize> activation_post_process;
  // set by convert
  std::shared_ptr<QFunctionalImpl> qfunctional;

 private:
  Tensor observe(const Tensor& r);
};
EMBER_MODULE(FloatFunctional);

// PyTorch's quantized Linear (static quantization): the input a quint8 tensor quantized per
// tensor, y = x W^T + b computed from its integers on oneDNN's int8 matmul (W int8, symmetric, per
// channel or per tensor, prepacked; b float32), and the result quantized to quint8 with the
// module's own scale and zero point (chosen by an observer of the float model's output).
// Its state (buffers, as PyTorch's quantized layers' state dict): weight (quantized), bias,
// scale (float64 []) and zero_point (int64 []); a load into them prepares the kernel again.
class LinearImpl : public Module {
 public:
  LinearImpl(const Tensor& qweight, const std::optional<Tensor>& bias, double scale, int64_t zero_point);
  // PyTorch's from_float: W observed by a PerChannelMinMaxObserver(qint8, per_channel_symmetric)
  // (after quantization-aware training: by its weight_fake_quant), the output's scale and zero
  // point given.
  static std::shared_ptr<LinearImpl> from_float(const nn::LinearImpl& linear, double scale, int64_t zero_point);
  Tensor forward(const Tensor& input);
  const Tensor& weight() const { return qweight_; }  // quantized
  const std::optional<Tensor>& bias() const { return bias_; }
  double scale() const;
  int64_t zero_point() const;
  int64_t in_features() const { return qweight_.size(1); }
  int64_t out_features() const { return qweight_.size(0); }
  void pretty_print(std::ostream& stream) const override;
  std::string kernel(const Tensor& input) const;  // as dynamic::Linear's
  struct Packed;

 private:
  Tensor qweight_;
  std::optional<Tensor> bias_;
  Tensor scale_, zero_point_;
  std::shared_ptr<Packed> packed_;
};
EMBER_MODULE(Linear);

// PyTorch's quantized convolutions (static quantization): the input quint8 quantized per tensor,
// the weight qint8 [out, in / groups, kernel...] symmetric per channel (axis 0) or per tensor,
// prepared for oneDNN's int8 convolution once per input shape, the bias float32; the result is
// requantized inside the convolution to quint8 with the module's scale and zero point (and, for
// ConvReLU, clamped below at that zero point), in channels-last order as PyTorch's (a NHWC tensor
// for Conv2d). Padding: zeros, explicit, 'valid' or 'same' (stride 1), as the float module's.
// State as Linear's: weight, bias, scale and zero_point buffers.
template <size_t D>
class ConvNdImpl : public Module {
 public:
  ConvNdImpl(const Tensor& qweight, const std::optional<Tensor>& bias, const ConvOptions<D>& options, double scale,
             int64_t zero_point);
  Tensor forward(const Tensor& input);
  const Tensor& weight() const { return qweight_; }  // quantized
  const std::optional<Tensor>& bias() const { return bias_; }
  double scale() const;
  int64_t zero_point() const;
  const ConvOptions<D>& options() const { return options_; }
  void pretty_print(std::ostream& stream) const override;
  // What computes it for this input: oneDNN's implementation and instruction set.
  std::string kernel(const Tensor& input) const;
  // PyTorch's from_float: the float conv's weight observed by a PerChannelMinMaxObserver(qint8,
  // per_channel_symmetric) (after quantization-aware training: by its weight_fake_quant) and
  // quantized, its bias kept.
  static std::pair<Tensor, std::optional<Tensor>> quantized_weight_and_bias(const nn::ConvNdImpl<D>& conv);
  struct Packed;

 protected:
  ConvNdImpl(const Tensor& qweight, const std::optional<Tensor>& bias, const ConvOptions<D>& options, double scale,
             int64_t zero_point, bool relu);

 private:
  Tensor qweight_;
  std::optional<Tensor> bias_;
  ConvOptions<D> options_;
  Tensor scale_, zero_point_;
  bool relu_;
  std::shared_ptr<Packed> packed_;
};
// Conv1d/2d/3d, made by from_float(float conv, output scale, output zero point).
template <size_t D>
class ConvImpl : public ConvNdImpl<D> {
 public:
  using ConvNdImpl<D>::ConvNdImpl;
  static std::shared_ptr<ConvImpl> from_float(const nn::ConvNdImpl<D>& conv, double scale, int64_t zero_point) {
    auto [w, b] = ConvNdImpl<D>::quantized_weight_and_bias(conv);
    return std::make_shared<ConvImpl>(w, b, conv.options, scale, zero_point);
  }
};
using Conv1dImpl = ConvImpl<1>;
using Conv2dImpl = ConvImpl<2>;
using Conv3dImpl = ConvImpl<3>;
EMBER_MODULE(Conv1d);
EMBER_MODULE(Conv2d);
EMBER_MODULE(Conv3d);

// PyTorch's Quantize module: quantize_per_tensor(x, scale, zero_point, dtype).
class QuantizeImpl : public Module {
 public:
  QuantizeImpl(double scale, int64_t zero_point, ScalarType dtype);
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& stream) const override;
  double scale;
  int64_t zero_point;
  ScalarType dtype;
};
EMBER_MODULE(Quantize);

// PyTorch's DeQuantize module: x.dequantize().
class DeQuantizeImpl : public Module {
 public:
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& stream) const override;
};
EMBER_MODULE(DeQuantize);

}  // namespace ember::nn::quantized

namespace ember::nn::intrinsic::quantized {

// torch.ao.nn.intrinsic.quantized.ConvReLU1d/2d/3d: a quantized convolution whose result is
// clamped below at its zero point (ReLU applied inside oneDNN's convolution); from_float takes the
// float fused module (nn::intrinsic::ConvReLU1d/2d/3d).
template <size_t D>
class ConvReLUImpl : public nn::quantized::ConvNdImpl<D> {
 public:
  ConvReLUImpl(const Tensor& qweight, const std::optional<Tensor>& bias, const ConvOptions<D>& options, double scale,
               int64_t zero_point)
      : nn::quantized::ConvNdImpl<D>(qweight, bias, options, scale, zero_point, /*relu=*/true) {}
  static std::shared_ptr<ConvReLUImpl> from_float(const intrinsic::ConvReLUImpl<D>& fused, double scale,
                                                  int64_t zero_point) {
    auto [w, b] = nn::quantized::ConvNdImpl<D>::quantized_weight_and_bias(*fused.conv);
    return std::make_shared<ConvReLUImpl>(w, b, fused.conv->options, scale, zero_point);
  }
};
using ConvReLU1dImpl = ConvReLUImpl<1>;
using ConvReLU2dImpl = ConvReLUImpl<2>;
using ConvReLU3dImpl = ConvReLUImpl<3>;
EMBER_MODULE(ConvReLU1d);
EMBER_MODULE(ConvReLU2d);
EMBER_MODULE(ConvReLU3d);

}  // namespace ember::nn::intrinsic::quantized

namespace ember::nn::quantized::dynamic {

// PyTorch's DynamicQuantizedLinear: y = x W^T + b with W int8 (per-channel or per-tensor,
// symmetric: zero points 0) quantized and prepacked once, x quantized to uint8 for each call
// from its own min and max (range [0, 127], PyTorch's reduce_range, which keeps CPUs without
// VNNI from saturating their 16-bit products), the int32 products scaled back to float32 and b
// added, on oneDNN's int8 matmul.
class LinearImpl : public Module {
 public:
  // From a quantized qint8 weight [out, in] and an optional float32 bias [out].
  explicit LinearImpl(const Tensor& qweight, const std::optional<Tensor>& bias = std::nullopt);
  // PyTorch's from_float: W observed by a PerChannelMinMaxObserver(qint8, per_channel_symmetric).
  static std::shared_ptr<LinearImpl> from_float(const nn::LinearImpl& linear);
  // The same from a float32 weight [out, in] (a recurrent layer's weight_ih_l0, ...).
  static std::shared_ptr<LinearImpl> from_weight(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt);
  Tensor forward(const Tensor& input);
  const Tensor& weight() const { return qweight_; }  // quantized
  const std::optional<Tensor>& bias() const { return bias_; }
  int64_t in_features() const { return qweight_.size(1); }
  int64_t out_features() const { return qweight_.size(0); }
  void pretty_print(std::ostream& stream) const override;
  // What computes it for this input: oneDNN's implementation and instruction set
  // ("oneDNN brg:avx512_core_amx_int8 (ISA avx512_core_amx)").
  std::string kernel(const Tensor& input) const;

 private:
  Tensor qweight_;
  std::optional<Tensor> bias_;
  std::shared_ptr<quantized::LinearImpl::Packed> packed_;  // oneDNN's prepacked weight and primitive
};
EMBER_MODULE(Linear);

}  // namespace ember::nn::quantized::dynamic
