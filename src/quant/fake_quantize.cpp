// FakeQuantize and FusedMovingAvgObsFakeQuantize (torch.ao.quantization.fake_quantize): an observer
// and fake quantization with the scale and zero point it chooses, for quantization-aware training;
// the default QAT qconfig. docs/quantization.md.
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/quantization.h"
#include "ops/quantized_util.h"

namespace ember::quantization {

FakeQuantizeImpl::FakeQuantizeImpl(std::shared_ptr<ObserverBase> observer)
    : FakeQuantizeImpl(std::move(observer), kByte) {}

FakeQuantizeImpl::FakeQuantizeImpl(std::shared_ptr<ObserverBase> observer, ScalarType switches)
    : activation_post_process(observer ? std::move(observer) : std::make_shared<MovingAverageMinMaxObserverImpl>()) {
  const QScheme scheme = activation_post_process->qscheme();
  EMBER_CHECK(scheme != kPerChannelAffineFloatQParams, "FakeQuantize",
              "observers with float zero points (per_channel_affine_float_qparams) are not in Ember's FakeQuantize yet");
  if (scheme == kPerChannelAffine || scheme == kPerChannelSymmetric) ch_axis_ = activation_post_process->options().ch_axis();
  fake_quant_enabled = register_buffer("fake_quant_enabled", ones({1}, TensorOptions().dtype(switches)));
  observer_enabled = register_buffer("observer_enabled", ones({1}, TensorOptions().dtype(switches)));
  scale = register_buffer("scale", ones({1}));
  zero_point = register_buffer("zero_point", zeros({1}, TensorOptions().dtype(kInt)));
  register_module("activation_post_process", activation_post_process);
}

void FakeQuantizeImpl::enable_fake_quant(bool enabled) { fake_quant_enabled.fill_(enabled ? 1 : 0); }
void FakeQuantizeImpl::enable_observer(bool enabled) { observer_enabled.fill_(enabled ? 1 : 0); }

Tensor FakeQuantizeImpl::forward(const Tensor& x) {
  if (observer_enabled.item<int64_t>() == 1) {
    activation_post_process->forward(x.detach());
    const auto [s, z] = observed_qparams();
    NoGradGuard no_grad;
    if (scale.sizes() != s.sizes()) {
      scale.resize_(s.sizes());
      zero_point.resize_(z.sizes());
    }
    scale.copy_(s);
    zero_point.copy_(z);
  }
  if (fake_quant_enabled.item<int64_t>() != 1) return x;
  if (is_per_channel()) {
    const int64_t axis = ch_axis_ < 0 ? ch_axis_ + x.dim() : ch_axis_;
    return fake_quantize_per_channel_affine(x, scale, zero_point, axis, quant_min(), quant_max());
  }
  return fake_quantize_per_tensor_affine(x, scale, zero_point, quant_min(), quant_max());
}

void FakeQuantizeImpl::pretty_print(std::ostream& os) const {
  os << "FakeQuantize(fake_quant_enabled=" << fake_quant_enabled.item<int64_t>()
     << ", observer_enabled=" << observer_enabled.item<int64_t>() << ", quant_min=" << quant_min()
     << ", quant_max=" << quant_max() << ", dtype=" << dtype() << ", qscheme=" << qscheme() << ", ch_axis=" << ch_axis_
     << ")";
}

FusedMovingAvgObsFakeQuantizeImpl::FusedMovingAvgObsFakeQuantizeImpl(std::shared_ptr<ObserverBase> observer)
    : FakeQuantizeImpl(std::move(observer), kLong) {
  EMBER_CHECK(dynamic_cast<MovingAverageMinMaxObserverImpl*>(activation_post_process.get()) ||
                  dynamic_cast<MovingAveragePerChannelMinMaxObserverImpl*>(activation_post_process.get()),
              "FusedMovingAvgObsFakeQuantize", "Fused observer+fake_quant module only works with MovingAverageMinMaxObserver");
}

// libtorch's choose_qparams_fake_quant: ChooseQuantizationParams per running [min, max], keeping
// zero exact (preserve_sparsity) for the symmetric schemes
std::tuple<Tensor, Tensor> FusedMovingAvgObsFakeQuantizeImpl::observed_qparams() const {
  const Tensor lo = activation_post_process->min_val.contiguous().view({-1});
  const Tensor hi = activation_post_process->max_val.contiguous().view({-1});
  const bool symmetric = qscheme() == kPerTensorSymmetric || qscheme() == kPerChannelSymmetric;
  const int64_t n = lo.numel();
  Tensor s = empty({n}), z = empty({n}, TensorOptions().dtype(kLong));
  for (int64_t i = 0; i < n; ++i) {
    const ember::quantized::QParams qp = ember::quantized::choose_quantization_params(
        lo.data_ptr<float>()[i], hi.data_ptr<float>()[i], quant_min(), quant_max(), symmetric);
    s.data_ptr<float>()[i] = static_cast<float>(qp.scale);
    z.data_ptr<int64_t>()[i] = qp.zero_point;
  }
  return {s, z};
}

void FusedMovingAvgObsFakeQuantizeImpl::pretty_print(std::ostream& os) const {
  os << "FusedMovingAvgObsFakeQuantize(fake_quant_enabled=" << fake_quant_enabled.item<int64_t>()
     << ", observer_enabled=" << observer_enabled.item<int64_t>() << ", dtype=" << dtype()
     << ", quant_min=" << quant_min() << ", quant_max=" << quant_max() << ", qscheme=" << qscheme()
     << ", reduce_range=" << (activation_post_process->options().reduce_range() ? "True" : "False") << ")";
}

namespace {
std::shared_ptr<ObserverBase> moving_average(ScalarType dtype, int64_t lo, int64_t hi, QScheme scheme,
                                             bool reduce_range = false) {
  const ObserverOptions o =
      ObserverOptions().dtype(dtype).quant_min(lo).quant_max(hi).qscheme(scheme).reduce_range(reduce_range);
  if (scheme == kPerChannelSymmetric || scheme == kPerChannelAffine)
    return std::make_shared<MovingAveragePerChannelMinMaxObserverImpl>(o);
  return std::make_shared<MovingAverageMinMaxObserverImpl>(o);
}
}  // namespace

FakeQuantize default_fake_quant() { return FakeQuantize(moving_average(kQUInt8, 0, 255, kPerTensorAffine, true)); }
FakeQuantize default_weight_fake_quant() {
  return FakeQuantize(moving_average(kQInt8, -128, 127, kPerTensorSymmetric));
}
FakeQuantize default_per_channel_weight_fake_quant() {
  return FakeQuantize(moving_average(kQInt8, -128, 127, kPerChannelSymmetric));
}

QConfig get_default_qat_qconfig(const std::string& backend, int version) {
  EMBER_CHECK(backend == "x86" || backend == "fbgemm", "get_default_qat_qconfig",
              "backend must be \"x86\" or \"fbgemm\" (the others are not in Ember yet), got \"", backend, "\"");
  EMBER_CHECK(version == 0 || version == 1, "get_default_qat_qconfig", "version must be 0 or 1, got ", version);
  QConfig c;
  if (version == 0) {
    c.activation = [] { return default_fake_quant().ptr(); };
    c.weight = [] { return default_per_channel_weight_fake_quant().ptr(); };
  } else {
    c.activation = [] {
      return std::make_shared<FusedMovingAvgObsFakeQuantizeImpl>(moving_average(kQUInt8, 0, 255, kPerTensorAffine, true));
    };
    c.weight = [] {
      return std::make_shared<FusedMovingAvgObsFakeQuantizeImpl>(moving_average(kQInt8, -128, 127, kPerChannelSymmetric));
    };
  }
  return c;
}

namespace {
template <class F>
void for_fake_quantize(nn::Module& module, F f) {
  if (auto* fq = dynamic_cast<FakeQuantizeImpl*>(&module)) f(*fq);
}
}  // namespace

void enable_observer(nn::Module& m) { for_fake_quantize(m, [](FakeQuantizeImpl& fq) { fq.enable_observer(); }); }
void disable_observer(nn::Module& m) { for_fake_quantize(m, [](FakeQuantizeImpl& fq) { fq.disable_observer(); }); }
void enable_fake_quant(nn::Module& m) { for_fake_quantize(m, [](FakeQuantizeImpl& fq) { fq.enable_fake_quant(); }); }
void disable_fake_quant(nn::Module& m) { for_fake_quantize(m, [](FakeQuantizeImpl& fq) { fq.disable_fake_quant(); }); }

Tensor detail::quantize_weight(const Tensor& weight, const ObserverOrFakeQuantize& observer) {
  EMBER_CHECK(observer.dtype() == kQInt8, "convert", "Weight observer must have dtype torch.qint8, got ",
              observer.dtype());
  const auto [scale, zero_point] = observer.calculate_qparams();
  const QScheme scheme = observer.qscheme();
  if (scheme == kPerTensorAffine || scheme == kPerTensorSymmetric)
    return quantize_per_tensor(weight, scale.item<double>(), zero_point.item<int64_t>(), kQInt8);
  EMBER_CHECK(scheme == kPerChannelAffine || scheme == kPerChannelSymmetric, "convert",
              "the weight's observer has scheme ", scheme, "; Ember quantizes weights per tensor or per channel");
  int64_t axis = 0;
  if (const auto* fq = dynamic_cast<const FakeQuantizeImpl*>(&observer)) axis = fq->ch_axis();
  else if (const auto* base = dynamic_cast<const ObserverBase*>(&observer)) axis = base->options().ch_axis();
  return quantize_per_channel(weight, scale.to(kDouble), zero_point.to(kLong), axis, kQInt8);
}

}  // namespace ember::quantization
