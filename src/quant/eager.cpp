// Eager-mode static quantization and quantization-aware training: QuantStub, DeQuantStub,
// prepare, prepare_qat and convert (torch.ao.quantization), for Linear, Conv1d/2d/3d, their ReLU
// and batch-norm fusions, BatchNorm2d, BNReLU2d, Hardswish, Hardsigmoid and FloatFunctional.
// docs/quantization.md.
#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ember/nn/intrinsic.h"
#include "ember/nn/modules/activation.h"
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
// Whether an observer (or a fake quantizer's observer) has seen data.
bool seen_data(const ObserverOrFakeQuantize& obs) {
  const auto* base = dynamic_cast<const ObserverBase*>(&obs);
  if (!base) {
    const auto* fq = dynamic_cast<const FakeQuantizeImpl*>(&obs);
    base = fq ? fq->activation_post_process.get() : nullptr;
  }
  return base && base->min_val.numel() > 0 && base->min_val.dim() == 0 && std::isfinite(base->min_val.item<float>());
}

// The output qparams an observer chose, checked to be usable by the int8 modules.
std::pair<double, int64_t> observed(const nn::Module& m, const ObserverOrFakeQuantize& obs) {
  EMBER_CHECK(seen_data(obs), "convert", "the observer of ", m.name(),
              " has seen no data: run calibration data through the prepared model before convert");
  EMBER_CHECK(obs.dtype() == kQUInt8 && (obs.qscheme() == kPerTensorAffine || obs.qscheme() == kPerTensorSymmetric),
              "convert", "the activations of ", m.name(), " must be observed as quint8 per tensor, got ", obs.dtype(),
              " ", obs.qscheme());
  const auto [scale, zero_point] = obs.calculate_qparams();
  return {scale.item<double>(), zero_point.item<int64_t>()};
}
}  // namespace

namespace {

// A module eager quantization handles: its observer's slot, and how convert makes its int8 form
// from the output's qparams (none: the module takes quantized tensors as it is, and its observer
// is PyTorch's fixed-qparams fake quantizer instead of the qconfig's).
struct Quantizable {
  nn::Module* module;
  std::shared_ptr<ObserverOrFakeQuantize>* observer;
  std::function<void(double scale, int64_t zero_point)> convert;
  // the layer whose weight quantization-aware training fake-quantizes (Linear or Conv), if any
  nn::Module* weight_owner = nullptr;
  std::shared_ptr<ObserverOrFakeQuantize>* weight_fake_quant = nullptr;
  // A FloatFunctional that calibration never ran (torchvision's skip_add of a block without a
  // residual connection) stays float: PyTorch converts it with scale 1 and zero point 0 and a
  // warning; Ember's raises if it is ever called with quantized tensors.
  bool skip_when_unseen = false;
};

template <size_t D>
bool add_conv(nn::Module& m, std::vector<Quantizable>& out) {
  if (auto* c = dynamic_cast<nn::ConvNdImpl<D>*>(&m)) {
    out.push_back({&m, &c->activation_post_process,
                   [c](double s, int64_t z) { c->static_quantized = nn::quantized::ConvImpl<D>::from_float(*c, s, z); },
                   c, &c->weight_fake_quant});
    return true;
  }
  if (auto* f = dynamic_cast<nn::intrinsic::ConvReLUImpl<D>*>(&m)) {
    out.push_back({&m, &f->activation_post_process,
                   [f](double s, int64_t z) {
                     f->static_quantized = nn::intrinsic::quantized::ConvReLUImpl<D>::from_float(*f, s, z);
                   },
                   f->conv.get(), &f->conv->weight_fake_quant});
    return true;
  }
  if (auto* cb = dynamic_cast<nn::intrinsic::ConvBnImpl<D>*>(&m)) {  // and ConvBnReLU
    out.push_back({&m, &cb->activation_post_process,
                   [cb](double s, int64_t z) { cb->static_quantized = cb->quantized(s, z); },  // batch norm folded
                   cb->conv.get(), &cb->conv->weight_fake_quant});
    return true;
  }
  return false;
}

// The modules of the tree that eager quantization handles, as PyTorch's prepare finds them; a
// module found is quantized whole (fused modules: not their children). DeQuantStubs go to
// `dequants` when asked for.
void find_quantizable(nn::Module& m, std::vector<Quantizable>& out, std::vector<DeQuantStubImpl*>* dequants) {
  if (auto* stub = dynamic_cast<QuantStubImpl*>(&m)) {
    out.push_back({&m, &stub->activation_post_process, [stub](double s, int64_t z) {
                     stub->quantize = std::make_shared<nn::quantized::QuantizeImpl>(s, z, kQUInt8);
                   }});
  } else if (auto* linear = dynamic_cast<nn::LinearImpl*>(&m)) {
    EMBER_CHECK(!linear->dynamic_quantized, "prepare", "the Linear ", m.name(), " is dynamically quantized already");
    out.push_back({&m, &linear->activation_post_process,
                   [linear](double s, int64_t z) {
                     linear->static_quantized = nn::quantized::LinearImpl::from_float(*linear, s, z);
                   },
                   linear, &linear->weight_fake_quant});
  } else if (auto* lr = dynamic_cast<nn::intrinsic::LinearReLUImpl*>(&m)) {
    out.push_back({&m, &lr->activation_post_process,
                   [lr](double s, int64_t z) {
                     lr->static_quantized = nn::quantized::LinearImpl::from_float(*lr->linear, s, z);
                   },
                   lr->linear.get(), &lr->linear->weight_fake_quant});
  } else if (auto* ff = dynamic_cast<nn::quantized::FloatFunctionalImpl*>(&m)) {
    EMBER_CHECK(!ff->qfunctional, "prepare", "the FloatFunctional ", m.name(), " is converted already");
    out.push_back({&m, &ff->activation_post_process,
                   [ff](double s, int64_t z) {
                     ff->qfunctional = std::make_shared<nn::quantized::QFunctionalImpl>(s, z);
                   },
                   nullptr, nullptr, /*skip_when_unseen=*/true});
  } else if (auto* bn = dynamic_cast<nn::BatchNormImpl<2>*>(&m)) {
    out.push_back({&m, &bn->activation_post_process, [bn](double s, int64_t z) {
                     bn->static_quantized = nn::quantized::BatchNorm2dImpl::from_float(*bn, s, z);
                   }});
  } else if (auto* bnr = dynamic_cast<nn::intrinsic::BNReLUImpl<2>*>(&m)) {
    out.push_back({&m, &bnr->activation_post_process, [bnr](double s, int64_t z) {
                     bnr->static_quantized = nn::quantized::BatchNorm2dImpl::from_float(*bnr->bn, s, z);
                   }});
  } else if (auto* hs = dynamic_cast<nn::HardswishImpl*>(&m)) {
    out.push_back({&m, &hs->activation_post_process, [hs](double s, int64_t z) {
                     hs->static_quantized = std::make_shared<nn::quantized::HardswishImpl>(s, z);
                   }});
  } else if (auto* hsig = dynamic_cast<nn::HardsigmoidImpl*>(&m)) {
    out.push_back({&m, &hsig->activation_post_process, nullptr});
  } else if (auto* dequant = dynamic_cast<DeQuantStubImpl*>(&m)) {
    if (dequants) dequants->push_back(dequant);
  } else if (!add_conv<1>(m, out) && !add_conv<2>(m, out) && !add_conv<3>(m, out)) {
    for (const auto& child : m.children()) find_quantizable(*child, out, dequants);
  }
}

}  // namespace

namespace {
// The modules prepare and prepare_qat handle, each checked not to be prepared yet.
std::vector<Quantizable> to_prepare(nn::Module& model, const QConfig& qconfig, const char* op) {
  EMBER_CHECK(qconfig.activation && qconfig.weight, op, "the qconfig must have activation and weight factories");
  std::vector<Quantizable> found;
  find_quantizable(model, found, nullptr);
  for (const Quantizable& q : found)
    EMBER_CHECK(!*q.observer && !(q.weight_fake_quant && *q.weight_fake_quant), op, "the module ", q.module->name(),
                " was prepared already");
  return found;
}

// PyTorch's default_fixed_qparams_range_0to1_fake_quant (Hardsigmoid's, and so the quantized
// op's output parameters): quint8 [0, 255], scale 1/256, zero point 0, never observing.
std::shared_ptr<ObserverOrFakeQuantize> fixed_qparams_0to1() {
  auto fq = std::make_shared<FakeQuantizeImpl>(std::make_shared<MinMaxObserverImpl>());
  fq->disable_observer();
  fq->scale.fill_(1.0 / 256);
  return fq;
}

void add_activation_observers(const std::vector<Quantizable>& found, const QConfig& qconfig) {
  for (const Quantizable& q : found) {
    // as PyTorch's _has_special_act_post_process: the fixed-qparams fake quantizer only in
    // training mode (quantization-aware training); post-training calibration leaves it out
    if (!q.convert && !q.module->is_training()) continue;
    *q.observer = q.convert ? qconfig.activation() : fixed_qparams_0to1();
    q.module->register_module("activation_post_process", *q.observer);
  }
}
}  // namespace

int64_t prepare(nn::Module& model, const QConfig& qconfig) {
  // every module checked first, so that a refusal leaves the model as it was
  const std::vector<Quantizable> found = to_prepare(model, qconfig, "prepare");
  add_activation_observers(found, qconfig);
  return static_cast<int64_t>(found.size());
}

int64_t prepare_qat(nn::Module& model, const QConfig& qconfig) {
  EMBER_CHECK(model.is_training(), "prepare_qat", "prepare_qat only works on models in training mode (call train() "
              "first)");
  const std::vector<Quantizable> found = to_prepare(model, qconfig, "prepare_qat");
  for (const Quantizable& q : found) {
    if (!q.weight_fake_quant) continue;
    *q.weight_fake_quant = qconfig.weight();
    q.weight_owner->register_module("weight_fake_quant", *q.weight_fake_quant);
  }
  add_activation_observers(found, qconfig);
  return static_cast<int64_t>(found.size());
}

int64_t convert(nn::Module& model) {
  std::vector<Quantizable> found;
  std::vector<DeQuantStubImpl*> dequants;
  find_quantizable(model, found, &dequants);
  // every observer's qparams first, so that a module that saw no data leaves the model unchanged
  // (module, whether it gets its int8 form, the qparams of that)
  std::vector<std::tuple<const Quantizable*, bool, std::pair<double, int64_t>>> plan;
  for (const Quantizable& q : found) {
    if (!*q.observer) continue;
    const bool make = q.convert && !(q.skip_when_unseen && !seen_data(**q.observer));
    plan.emplace_back(&q, make, make ? observed(*q.module, **q.observer) : std::pair<double, int64_t>{});
  }
  EMBER_CHECK(!plan.empty(), "convert", "no module of the model was prepared: call prepare(model, qconfig) and run "
              "calibration data through it first");
  for (const auto& [q, make, qparams] : plan) {
    if (make) q->convert(qparams.first, qparams.second);
    *q->observer = nullptr;
    q->module->unregister_module("activation_post_process");
    if (q->weight_fake_quant && *q->weight_fake_quant) {
      *q->weight_fake_quant = nullptr;
      q->weight_owner->unregister_module("weight_fake_quant");
    }
  }
  for (DeQuantStubImpl* d : dequants) d->converted = true;
  return static_cast<int64_t>(plan.size() + dequants.size());
}

}  // namespace ember::quantization
