// nn::quantized::dynamic::Linear and quantization::quantize_dynamic.
#include <sstream>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/quantization.h"
#include "ember/reduce.h"
#include "kernels/cpu/onednn_quant.h"
#include "kernels/cpu/quantize.h"
#include "ops/quantized_util.h"

namespace ember::nn::quantized::dynamic {

struct LinearImpl::Packed {
  std::unique_ptr<kernels::Int8Linear> kernel;
};

LinearImpl::LinearImpl(const Tensor& qweight, const std::optional<Tensor>& bias) : qweight_(qweight), bias_(bias) {
  const char* op = "DynamicQuantizedLinear";
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
  if (bias && bias->defined()) {
    EMBER_CHECK(bias->dtype() == kFloat && bias->dim() == 1 && bias->size(0) == n, op,
                "expected a float32 bias of size [", n, "], got ", bias->dtype(), " of size ", bias->sizes());
    b = bias->contiguous();
  } else {
    bias_ = std::nullopt;
  }
  const Tensor w = qweight.int_repr().contiguous();
  packed_ = std::make_shared<Packed>();
  packed_->kernel = std::make_unique<kernels::Int8Linear>(w.data_ptr<int8_t>(), n, k, scales,
                                                          b.defined() ? b.data_ptr<float>() : nullptr);
}

std::shared_ptr<LinearImpl> LinearImpl::from_float(const nn::LinearImpl& linear) {
  quantization::PerChannelMinMaxObserver observer(
      quantization::ObserverOptions().dtype(kQInt8).qscheme(kPerChannelSymmetric));
  const Tensor w = linear.weight.detach();
  observer(w);
  auto [scales, zero_points] = observer->calculate_qparams();
  const Tensor qweight = quantize_per_channel(w, scales.to(kDouble), zero_points, 0, kQInt8);
  return std::make_shared<LinearImpl>(
      qweight, linear.bias.defined() ? std::optional<Tensor>(linear.bias.detach()) : std::nullopt);
}

Tensor LinearImpl::forward(const Tensor& input) {
  const char* op = "DynamicQuantizedLinear";
  EMBER_CHECK(input.dtype() == kFloat, op, "expected a float32 input, got ", input.dtype());
  const int64_t k = in_features(), n = out_features();
  EMBER_CHECK(input.dim() >= 1 && input.size(-1) == k, op, "the input's last dim must be in_features (", k,
              "), got input of size ", input.sizes());
  DimVector out_sizes(input.sizes());
  out_sizes.back() = n;
  const int64_t m = input.numel() / k;
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
  packed_->kernel->run(xq.data_ptr<uint8_t>(), m, static_cast<float>(qp.scale), static_cast<int32_t>(qp.zero_point),
                       y.data_ptr<float>());
  return y;
}

void LinearImpl::pretty_print(std::ostream& stream) const {
  stream << "DynamicQuantizedLinear(in_features=" << in_features() << ", out_features=" << out_features()
         << ", dtype=torch.qint8, qscheme=torch." << qweight_.qscheme() << ")";
}

std::string LinearImpl::kernel() const {
  return "oneDNN " + packed_->kernel->impl() + " (ISA " + kernels::onednn_cpu_isa() + ")";
}

}  // namespace ember::nn::quantized::dynamic

namespace ember::quantization {

int64_t quantize_dynamic(nn::Module& model, ScalarType dtype) {
  EMBER_CHECK(dtype == kQInt8, "quantize_dynamic",
              "only qint8 dynamic quantization is in Ember (float16 is not yet), got ", dtype);
  int64_t count = 0;
  model.apply([&](nn::Module& m) {
    auto* linear = dynamic_cast<nn::LinearImpl*>(&m);
    if (!linear || linear->dynamic_quantized) return;
    linear->dynamic_quantized = nn::quantized::dynamic::LinearImpl::from_float(*linear);
    ++count;
  });
  return count;
}

}  // namespace ember::quantization
