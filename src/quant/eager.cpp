// Eager-mode static quantization: QuantStub, DeQuantStub, prepare and convert
// (torch.ao.quantization.quantize), for Linear and FloatFunctional. docs/quantization.md.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "ember/quantization.h"

namespace ember::quantization {

Tensor QuantStubImpl::forward(const Tensor& x) {
  if (quantize) return quantize->forward(x);
  return activation_post_process ? activation_post_process->forward(x) : x;
}
void QuantStubImpl::pretty_print(std::ostream& stream) const {
  if (quantize) return quantize->pretty_print(stream);
  stream << "QuantStub()";
}

Tensor DeQuantStubImpl::forward(const Tensor& x) { return converted && x.is_quantized() ? x.dequantize() : x; }
void DeQuantStubImpl::pretty_print(std::ostream& stream) const { stream << (converted ? "DeQuantize()" : "DeQuantStub()"); }

namespace {
// The output qparams an observer chose, checked to be usable by the int8 modules.
std::pair<double, int64_t> observed(const nn::Module& m, const ObserverOrFakeQuantize& obs) {
  const auto* base = dynamic_cast<const ObserverBase*>(&obs);
  if (!base) {
    const auto* fq = dynamic_cast<const FakeQuantizeImpl*>(&obs);
    base = fq ? fq->activation_post_process.get() : nullptr;
  }
  EMBER_CHECK(base && base->min_val.numel() > 0 && base->min_val.dim() == 0 &&
                  std::isfinite(base->min_val.item<float>()),
              "convert", "the observer of ", m.name(),
              " has seen no data: run calibration data through the prepared model before convert");
  EMBER_CHECK(obs.dtype() == kQUInt8 && (obs.qscheme() == kPerTensorAffine || obs.qscheme() == kPerTensorSymmetric),
              "convert", "the activations of ", m.name(), " must be observed as quint8 per tensor, got ", obs.dtype(),
              " ", obs.qscheme());
  const auto [scale, zero_point] = obs.calculate_qparams();
  return {scale.item<double>(), zero_point.item<int64_t>()};
}
}  // namespace

int64_t prepare(nn::Module& model, const QConfig& qconfig) {
  EMBER_CHECK(qconfig.activation && qconfig.weight, "prepare", "the qconfig must have activation and weight factories");
  // every module checked first, so that a refusal leaves the model as it was
  std::vector<std::pair<nn::Module*, std::shared_ptr<ObserverOrFakeQuantize>*>> slots;
  model.apply([&](nn::Module& m) {
    if (auto* stub = dynamic_cast<QuantStubImpl*>(&m)) {
      slots.emplace_back(&m, &stub->activation_post_process);
    } else if (auto* linear = dynamic_cast<nn::LinearImpl*>(&m)) {
      EMBER_CHECK(!linear->dynamic_quantized, "prepare", "the Linear ", m.name(), " is dynamically quantized already");
      slots.emplace_back(&m, &linear->activation_post_process);
    } else if (auto* ff = dynamic_cast<nn::quantized::FloatFunctionalImpl*>(&m)) {
      EMBER_CHECK(!ff->qfunctional, "prepare", "the FloatFunctional ", m.name(), " is converted already");
      slots.emplace_back(&m, &ff->activation_post_process);
    }
  });
  for (const auto& [m, slot] : slots)
    EMBER_CHECK(!*slot, "prepare", "the module ", m->name(), " was prepared already");
  for (const auto& [m, slot] : slots) {
    *slot = qconfig.activation();
    m->register_module("activation_post_process", *slot);
  }
  return static_cast<int64_t>(slots.size());
}

int64_t convert(nn::Module& model) {
  // every observer's qparams first, so that a module that saw no data leaves the model unchanged
  std::vector<std::pair<nn::Module*, std::pair<double, int64_t>>> plan;
  std::vector<DeQuantStubImpl*> dequants;
  model.apply([&](nn::Module& m) {
    if (auto* stub = dynamic_cast<QuantStubImpl*>(&m); stub && stub->activation_post_process) {
      plan.emplace_back(&m, observed(m, *stub->activation_post_process));
    } else if (auto* linear = dynamic_cast<nn::LinearImpl*>(&m); linear && linear->activation_post_process) {
      plan.emplace_back(&m, observed(m, *linear->activation_post_process));
    } else if (auto* ff = dynamic_cast<nn::quantized::FloatFunctionalImpl*>(&m); ff && ff->activation_post_process) {
      plan.emplace_back(&m, observed(m, *ff->activation_post_process));
    } else if (auto* dequant = dynamic_cast<DeQuantStubImpl*>(&m)) {
      dequants.push_back(dequant);
    }
  });
  EMBER_CHECK(!plan.empty(), "convert", "no module of the model was prepared: call prepare(model, qconfig) and run "
              "calibration data through it first");
  for (auto& [m, qparams] : plan) {
    const auto [scale, zero_point] = qparams;
    if (auto* stub = dynamic_cast<QuantStubImpl*>(m)) {
      stub->quantize = std::make_shared<nn::quantized::QuantizeImpl>(scale, zero_point, kQUInt8);
      stub->activation_post_process = nullptr;
    } else if (auto* ff = dynamic_cast<nn::quantized::FloatFunctionalImpl*>(m)) {
      ff->qfunctional = std::make_shared<nn::quantized::QFunctionalImpl>(scale, zero_point);
      ff->activation_post_process = nullptr;
    } else {
      auto* linear = static_cast<nn::LinearImpl*>(m);
      linear->static_quantized = nn::quantized::LinearImpl::from_float(*linear, scale, zero_point);
      linear->activation_post_process = nullptr;
    }
    m->unregister_module("activation_post_process");
  }
  for (DeQuantStubImpl* d : dequants) d->converted = true;
  return static_cast<int64_t>(plan.size() + dequants.size());
}

}  // namespace ember::quantization
