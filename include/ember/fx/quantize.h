// FX graph-mode quantization, as torch.ao.quantization.quantize_fx's prepare_fx, prepare_qat_fx
// and convert_fx: the model is traced, so it needs no QuantStub/DeQuantStub edits.
// docs/quantization.md.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/fx.h"
#include "ember/quantization.h"

namespace ember::fx {

// PyTorch's QConfigMapping, the parts post-training quantization uses: a global qconfig and, per
// module name (a qualified name or a prefix of one: "features" covers "features.0.conv"), a
// qconfig or none (that module stays float). The longest matching name wins.
class QConfigMapping {
 public:
  QConfigMapping& set_global(quantization::QConfig qconfig);
  QConfigMapping& set_module_name(const std::string& name, std::optional<quantization::QConfig> qconfig);
  // The qconfig of a module by qualified name; nullopt: left float.
  std::optional<quantization::QConfig> qconfig_for(const std::string& qualified_name) const;

 private:
  std::optional<quantization::QConfig> global_;
  std::vector<std::pair<std::string, std::optional<quantization::QConfig>>> by_name_;
};
// get_default_qconfig_mapping(backend): get_default_qconfig(backend) for every module.
QConfigMapping get_default_qconfig_mapping(const std::string& backend = "x86");

// prepare_fx on a traced model in eval mode: folds batch norms into the convolutions before them,
// fuses Conv/Linear + ReLU (nn::intrinsic), and inserts observers (submodules
// activation_post_process_0, 1, ...) on the inputs and outputs of the layers that have an int8
// form (Conv1d/2d/3d, Linear and their ReLU fusions). Ops that work on quantized tensors as they
// are (relu, max and average pooling, flatten and the other views, dropout in eval mode) share
// their input's observer. Run calibration data through the returned module, then convert_fx.
std::shared_ptr<GraphModule> prepare_fx(std::shared_ptr<GraphModule> traced, const QConfigMapping& mapping);
// model: a module holder (as symbolic_trace takes), traced on the example inputs.
template <class M, class... T>
  requires(!std::is_convertible_v<M, std::shared_ptr<GraphModule>>)
std::shared_ptr<GraphModule> prepare_fx(M&& model, const QConfigMapping& mapping, const T&... example_inputs) {
  return prepare_fx(symbolic_trace(std::forward<M>(model), example_inputs...), mapping);
}

// get_default_qat_qconfig_mapping(backend): get_default_qat_qconfig(backend) for every module.
QConfigMapping get_default_qat_qconfig_mapping(const std::string& backend = "x86");

// prepare_qat_fx on a traced model in training mode (quantization-aware training): fuses
// Conv + BatchNorm (+ ReLU) into nn::intrinsic::ConvBn (ConvBnReLU), whose batch norm keeps
// training on the folded, fake-quantized weight, Conv/Linear + ReLU as prepare_fx, gives each layer
// with an int8 form a fake quantizer of its weight (weight_fake_quant) and puts fake quantizers
// (the qconfigs' activation, e.g. FusedMovingAvgObsFakeQuantize) where prepare_fx puts observers.
// Train the returned module with the usual optimizer on its parameters(), then eval() and
// convert_fx.
std::shared_ptr<GraphModule> prepare_qat_fx(std::shared_ptr<GraphModule> traced, const QConfigMapping& mapping);
template <class M, class... T>
  requires(!std::is_convertible_v<M, std::shared_ptr<GraphModule>>)
std::shared_ptr<GraphModule> prepare_qat_fx(M&& model, const QConfigMapping& mapping, const T&... example_inputs) {
  return prepare_qat_fx(symbolic_trace(std::forward<M>(model), example_inputs...), mapping);
}

// convert_fx: each observed layer becomes its int8 module (nn::quantized::Conv2d,
// nn::intrinsic::quantized::ConvReLU2d, nn::quantized::Linear, ...) with the output scale and zero
// point its observer chose, each observed input a quantize_per_tensor node, and a dequantize node
// goes before every op (and output) that needs float. In place; returns the module.
std::shared_ptr<GraphModule> convert_fx(std::shared_ptr<GraphModule> prepared);

}  // namespace ember::fx
