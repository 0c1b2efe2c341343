// nn::quantized::Linear (static), Quantize and DeQuantize, nn::quantized::dynamic::Linear and
// quantization::quantize_dynamic.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <tuple>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/nn/modules/rnn.h"
#include "ember/quantization.h"
#include "ember/reduce.h"
#include "kernels/cpu/onednn_quant.h"
#include "kernels/cpu/quantize.h"
#include "nn/quantized/prepared.h"
#include "ops/quantized_util.h"

namespace ember::nn::quantized {

struct LinearImpl::Packed {
  detail::Prepared<kernels::Int8Linear> kernel;
};

namespace {

// The weight checked and handed to oneDNN (both Linear modules): qint8 [out, in], symmetric
// (zero points 0), per tensor or per channel along the outputs; bias float32 [out] or none.
std::shared_ptr<const kernels::Int8Linear> make_kernel(const char* op, const Tensor& qweight,
                                                       const std::optional<Tensor>& bias) {
  EMBER_CHECK(qweight.defined() && qweight.is_quantized() && qweight.dtype() == kQInt8 && qweight.dim() == 2, op,
              "expected a 2-D qint8 quantized weight, got ",
              qweight.defined() ? std::string(to_string(qweight.dtype())) : std::string("an undefined tensor"));
  const int64_t n = qweight.size(0), k = qweight.size(1);
  std::vector<float> scales;
  std::vector<int64_t> zero_points;
  if (qweight.qscheme() == kPerTensorAffine) {
    scales = {static_cast<float>(qweight.q_scale())};
    zero_points = {qweight.q_zero_point()};
  } else {
    EMBER_CHECK(qweight.q_per_channel_axis() == 0, op, "per-channel weights must be quantized along axis 0 (the ",
                "outputs), got axis ", qweight.q_per_channel_axis());
    const Tensor s = qweight.q_per_channel_scales().to(kFloat), z = qweight.q_per_channel_zero_points();
    scales.assign(s.data_ptr<float>(), s.data_ptr<float>() + n);
    zero_points.assign(z.data_ptr<int64_t>(), z.data_ptr<int64_t>() + n);
  }
  for (int64_t zp : zero_points)
    EMBER_CHECK(zp == 0, op, "the weight must be quantized symmetrically (zero points 0), got a zero point ", zp);
  Tensor b;
  if (bias) {
    EMBER_CHECK(bias->dtype() == kFloat && bias->dim() == 1 && bias->size(0) == n, op,
                "expected a float32 bias of size [", n, "], got ", bias->dtype(), " of size ", bias->sizes());
    b = bias->contiguous();
  }
  const Tensor w = qweight.int_repr().contiguous();
  return std::make_shared<const kernels::Int8Linear>(w.data_ptr<int8_t>(), n, k, scales,
                                                     b.defined() ? b.data_ptr<float>() : nullptr);
}

// A module's weight and bias as buffers (an undefined bias dropped), its kernel prepared once now
// so that bad arguments raise here.
std::shared_ptr<LinearImpl::Packed> register_and_pack(Module& m, const char* op, const Tensor& qweight,
                                                      std::optional<Tensor>& bias) {
  if (bias && !bias->defined()) bias = std::nullopt;
  auto packed = std::make_shared<LinearImpl::Packed>();
  packed->kernel.get(qweight, bias, [op](const Tensor& w, const std::optional<Tensor>& b) {
    return make_kernel(op, w, b);
  });
  m.register_buffer("weight", qweight);
  if (bias) m.register_buffer("bias", *bias);
  return packed;
}


// W observed by a PerChannelMinMaxObserver(qint8, per_channel_symmetric) and quantized.
Tensor quantized_per_channel(const Tensor& w) {
  quantization::PerChannelMinMaxObserver observer(
      quantization::ObserverOptions().dtype(kQInt8).qscheme(kPerChannelSymmetric));
  observer(w);
  auto [scales, zero_points] = observer->calculate_qparams();
  return quantize_per_channel(w, scales.to(kDouble), zero_points, 0, kQInt8);
}

// PyTorch's from_float for both: W observed by a PerChannelMinMaxObserver(qint8, per_channel_symmetric)
// (after quantization-aware training: by the weight's fake quantizer, which sees W once more)
std::pair<Tensor, std::optional<Tensor>> quantized_weight_and_bias(const nn::LinearImpl& linear) {
  const Tensor w = linear.weight.detach();
  std::optional<Tensor> bias = linear.bias.defined() ? std::optional<Tensor>(linear.bias.detach()) : std::nullopt;
  if (linear.weight_fake_quant) {
    linear.weight_fake_quant->forward(w);
    return {quantization::detail::quantize_weight(w, *linear.weight_fake_quant), bias};
  }
  return {quantized_per_channel(w), bias};
}

// The output's sizes (the input's with its last dim in_features -> out_features) and the number of
// rows, checked.
std::pair<DimVector, int64_t> output_sizes(const char* op, const Tensor& input, int64_t k, int64_t n) {
  EMBER_CHECK(input.dim() >= 1 && input.size(-1) == k, op, "the input's last dim must be in_features (", k,
              "), got input of size ", input.sizes());
  DimVector sizes(input.sizes());
  int64_t m = 1;
  for (size_t d = 0; d + 1 < sizes.size(); ++d) m *= sizes[d];
  sizes.back() = n;
  return {sizes, m};
}

std::string kernel_name(LinearImpl::Packed& p, const Tensor& w, const std::optional<Tensor>& b, const char* op,
                        const Tensor& input) {
  const auto k = p.kernel.get(w, b, [op](const Tensor& w, const std::optional<Tensor>& b) { return make_kernel(op, w, b); });
  const int64_t rows = input.dim() == 0 ? 1 : input.numel() / std::max<int64_t>(input.size(-1), 1);
  return "oneDNN " + k->impl(rows) + " (ISA " + kernels::onednn_cpu_isa() + ")";
}

}  // namespace

LinearImpl::LinearImpl(const Tensor& qweight, const std::optional<Tensor>& bias, double scale, int64_t zero_point)
    : qweight_(qweight), bias_(bias) {
  const char* op = "QuantizedLinear";
  std::tie(scale_, zero_point_) = detail::register_output_qparams(*this, op, scale, zero_point);
  packed_ = register_and_pack(*this, op, qweight_, bias_);
}

double LinearImpl::scale() const { return scale_.item<double>(); }
int64_t LinearImpl::zero_point() const { return zero_point_.item<int64_t>(); }

std::shared_ptr<LinearImpl> LinearImpl::from_float(const nn::LinearImpl& linear, double scale, int64_t zero_point) {
  auto [qweight, bias] = quantized_weight_and_bias(linear);
  return std::make_shared<LinearImpl>(qweight, bias, scale, zero_point);
}

Tensor LinearImpl::forward(const Tensor& input) {
  const char* op = "QuantizedLinear";
  EMBER_CHECK(input.is_quantized() && input.dtype() == kQUInt8 && input.qscheme() == kPerTensorAffine, op,
              "expected a quint8 input quantized per tensor (quantize it first, e.g. with a QuantStub), got ",
              input.is_quantized() ? toString(input.qscheme()) + " " : std::string(), input.dtype());
  const auto [out_sizes, m] = output_sizes(op, input, in_features(), out_features());
  const auto kernel = packed_->kernel.get(qweight_, bias_, [op](const Tensor& w, const std::optional<Tensor>& b) {
    return make_kernel(op, w, b);
  });
  const double out_scale = scale();
  const int64_t out_zero_point = zero_point();
  EMBER_CHECK(std::isfinite(out_scale) && out_scale > 0 && out_zero_point >= 0 && out_zero_point <= 255, op,
              "the output's scale must be finite and positive and its zero point in [0, 255], got ", out_scale, " and ",
              out_zero_point);
  Tensor y = empty(out_sizes, TensorOptions().dtype(kByte));
  if (m > 0) {
    const Tensor xq = input.int_repr().contiguous();
    kernel->run(xq.data_ptr<uint8_t>(), m, static_cast<float>(input.q_scale()),
                static_cast<int32_t>(input.q_zero_point()), y.data_ptr<uint8_t>(), static_cast<float>(out_scale),
                static_cast<int32_t>(out_zero_point));
  }
  return ember::quantized::wrap(y, ember::quantized::per_tensor_quantizer(kQUInt8, out_scale, out_zero_point));
}

void LinearImpl::pretty_print(std::ostream& stream) const {
  stream << "QuantizedLinear(in_features=" << in_features() << ", out_features=" << out_features()
         << ", scale=" << scale() << ", zero_point=" << zero_point() << ", qscheme=torch." << qweight_.qscheme()
         << ")";
}

std::string LinearImpl::kernel(const Tensor& input) const {
  return kernel_name(*packed_, qweight_, bias_, "QuantizedLinear", input);
}

QuantizeImpl::QuantizeImpl(double scale_, int64_t zero_point_, ScalarType dtype_)
    : scale(scale_), zero_point(zero_point_), dtype(dtype_) {
  quantize_per_tensor(empty({0}), scale, zero_point, dtype);  // checks the parameters now
}
Tensor QuantizeImpl::forward(const Tensor& x) { return quantize_per_tensor(x, scale, zero_point, dtype); }
void QuantizeImpl::pretty_print(std::ostream& stream) const {
  stream << "Quantize(scale=" << scale << ", zero_point=" << zero_point << ", dtype=" << dtype << ")";
}

Tensor DeQuantizeImpl::forward(const Tensor& x) { return x.dequantize(); }
void DeQuantizeImpl::pretty_print(std::ostream& stream) const { stream << "DeQuantize()"; }

}  // namespace ember::nn::quantized

namespace ember::nn::quantized::dynamic {

LinearImpl::LinearImpl(const Tensor& qweight, const std::optional<Tensor>& bias) : qweight_(qweight), bias_(bias) {
  packed_ = register_and_pack(*this, "DynamicQuantizedLinear", qweight_, bias_);
}

std::shared_ptr<LinearImpl> LinearImpl::from_float(const nn::LinearImpl& linear) {
  auto [qweight, bias] = quantized_weight_and_bias(linear);
  return std::make_shared<LinearImpl>(qweight, bias);
}

std::shared_ptr<LinearImpl> LinearImpl::from_weight(const Tensor& weight, const std::optional<Tensor>& bias) {
  EMBER_CHECK(weight.dim() == 2 && weight.dtype() == kFloat, "DynamicQuantizedLinear",
              "expected a float32 weight [out, in], got ", weight.dtype(), " of size ", weight.sizes());
  return std::make_shared<LinearImpl>(quantized_per_channel(weight.detach()), bias);
}

Tensor LinearImpl::forward(const Tensor& input) {
  const char* op = "DynamicQuantizedLinear";
  EMBER_CHECK(input.dtype() == kFloat, op, "expected a float32 input, got ", input.dtype());
  const int64_t k = in_features();
  const auto [out_sizes, m] = output_sizes(op, input, k, out_features());
  Tensor y = empty(out_sizes);
  if (m == 0) return y;
  NoGradGuard no_grad;
  const Tensor x = input.detach().contiguous();
  // the activations' (scale, zero point): uint8 over [min, max] with range [0, 127] (PyTorch's
  // reduce_range), quantized with PyTorch's rounding
  const ember::quantized::QParams qp = ember::quantized::choose_quantization_params(
      x.min().item<float>(), x.max().item<float>(), 0, 255, false, /*reduce_range=*/true);
  Tensor xq = empty({m, k}, TensorOptions().dtype(kByte));
  kernels::quantize_per_tensor(x.data_ptr<float>(), xq.data_ptr(), m * k, kQUInt8, qp.scale, qp.zero_point);
  const auto kernel = packed_->kernel.get(qweight_, bias_, [op](const Tensor& w, const std::optional<Tensor>& b) {
    return make_kernel(op, w, b);
  });
  kernel->run(xq.data_ptr<uint8_t>(), m, static_cast<float>(qp.scale), static_cast<int32_t>(qp.zero_point),
              y.data_ptr<float>());
  return y;
}

void LinearImpl::pretty_print(std::ostream& stream) const {
  stream << "DynamicQuantizedLinear(in_features=" << in_features() << ", out_features=" << out_features()
         << ", dtype=torch.qint8, qscheme=torch." << qweight_.qscheme() << ")";
}

std::string LinearImpl::kernel(const Tensor& input) const {
  return kernel_name(*packed_, qweight_, bias_, "DynamicQuantizedLinear", input);
}

}  // namespace ember::nn::quantized::dynamic

namespace ember::quantization {

int64_t quantize_dynamic(nn::Module& model, ScalarType dtype) {
  EMBER_CHECK(dtype == kQInt8, "quantize_dynamic",
              "only qint8 dynamic quantization is in Ember (float16 is not yet), got ", dtype);
  int64_t count = 0;
  model.apply([&](nn::Module& m) {
    if (auto* linear = dynamic_cast<nn::LinearImpl*>(&m); linear && !linear->dynamic_quantized) {
      linear->dynamic_quantized = nn::quantized::dynamic::LinearImpl::from_float(*linear);
      ++count;
      return;
    }
    // LSTM and GRU (not RNN, as PyTorch): each weight matrix as a dynamic int8 Linear
    auto* rnn = dynamic_cast<nn::detail::RNNImplBase*>(&m);
    if (!rnn || dynamic_cast<nn::RNNImpl*>(&m) || !rnn->dynamic_quantized.empty()) return;
    std::vector<std::shared_ptr<nn::quantized::dynamic::LinearImpl>> quantized;
    for (const Tensor& w : rnn->all_weights())
      quantized.push_back(w.dim() == 2 ? nn::quantized::dynamic::LinearImpl::from_weight(w) : nullptr);
    rnn->dynamic_quantized = std::move(quantized);
    ++count;
  });
  return count;
}

}  // namespace ember::quantization
