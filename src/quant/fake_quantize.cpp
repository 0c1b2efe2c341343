// FakeQuantize (torch.ao.quantization.fake_quantize): an observer and fake quantization with the
// scale and zero point it chooses, for quantization-aware training. docs/quantization.md.
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/quantization.h"

namespace ember::quantization {

FakeQuantizeImpl::FakeQuantizeImpl(std::shared_ptr<ObserverBase> observer)
    : activation_post_process(observer ? std::move(observer) : std::make_shared<MovingAverageMinMaxObserverImpl>()) {
  register_module("activation_post_process", activation_post_process);
  const QScheme scheme = activation_post_process->qscheme();
  EMBER_CHECK(scheme != kPerChannelAffineFloatQParams, "FakeQuantize",
              "observers with float zero points (per_channel_affine_float_qparams) are not in Ember's FakeQuantize yet");
  quant_min = activation_post_process->quant_min();
  quant_max = activation_post_process->quant_max();
  if (scheme == kPerChannelAffine || scheme == kPerChannelSymmetric) ch_axis = activation_post_process->options().ch_axis();
  fake_quant_enabled = register_buffer("fake_quant_enabled", ones({1}, TensorOptions().dtype(kByte)));
  observer_enabled = register_buffer("observer_enabled", ones({1}, TensorOptions().dtype(kByte)));
  scale = register_buffer("scale", ones({1}));
  zero_point = register_buffer("zero_point", zeros({1}, TensorOptions().dtype(kInt)));
}

void FakeQuantizeImpl::enable_fake_quant(bool enabled) { fake_quant_enabled.fill_(enabled ? 1 : 0); }
void FakeQuantizeImpl::enable_observer(bool enabled) { observer_enabled.fill_(enabled ? 1 : 0); }

Tensor FakeQuantizeImpl::forward(const Tensor& x) {
  if (observer_enabled.item<uint8_t>() == 1) {
    activation_post_process->forward(x.detach());
    const auto [s, z] = calculate_qparams();
    NoGradGuard no_grad;
    if (scale.sizes() != s.sizes()) {
      scale.resize_(s.sizes());
      zero_point.resize_(z.sizes());
    }
    scale.copy_(s);
    zero_point.copy_(z);
  }
  if (fake_quant_enabled.item<uint8_t>() != 1) return x;
  if (is_per_channel()) {
    const int64_t axis = ch_axis < 0 ? ch_axis + x.dim() : ch_axis;
    return fake_quantize_per_channel_affine(x, scale, zero_point, axis, quant_min, quant_max);
  }
  return fake_quantize_per_tensor_affine(x, scale, zero_point, quant_min, quant_max);
}

void FakeQuantizeImpl::pretty_print(std::ostream& os) const {
  os << "FakeQuantize(fake_quant_enabled=" << int{fake_quant_enabled.item<uint8_t>()}
     << ", observer_enabled=" << int{observer_enabled.item<uint8_t>()} << ", quant_min=" << quant_min
     << ", quant_max=" << quant_max << ", dtype=" << activation_post_process->dtype()
     << ", qscheme=" << activation_post_process->qscheme() << ", ch_axis=" << ch_axis << ")";
}

FakeQuantize default_fake_quant() {
  return FakeQuantize(std::make_shared<MovingAverageMinMaxObserverImpl>(
      ObserverOptions().dtype(kQUInt8).quant_min(0).quant_max(255).reduce_range(true)));
}
FakeQuantize default_weight_fake_quant() {
  return FakeQuantize(std::make_shared<MovingAverageMinMaxObserverImpl>(
      ObserverOptions().dtype(kQInt8).quant_min(-128).quant_max(127).qscheme(kPerTensorSymmetric)));
}
FakeQuantize default_per_channel_weight_fake_quant() {
  return FakeQuantize(std::make_shared<MovingAveragePerChannelMinMaxObserverImpl>(
      ObserverOptions().dtype(kQInt8).quant_min(-128).quant_max(127).qscheme(kPerChannelSymmetric).ch_axis(0)));
}

}  // namespace ember::quantization
