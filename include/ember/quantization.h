// torch.ao.quantization in C++: observers that choose scales and zero points, QConfig, and
// dynamic quantization of a model's Linear layers. docs/quantization.md.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ember/nn/module.h"
#include "ember/nn/options.h"
#include "ember/nn/pimpl.h"
#include "ember/nn/quantized.h"
#include "ember/quantized.h"

namespace ember::quantization {

// The observers' arguments, as PyTorch's keyword arguments; qscheme defaults to the observer's
// own (per_tensor_affine, or per_channel_affine for the per-channel ones).
struct ObserverOptions {
  EMBER_ARG(ScalarType, dtype) = kQUInt8;
  EMBER_ARG(std::optional<QScheme>, qscheme) = std::nullopt;
  EMBER_ARG(bool, reduce_range) = false;
  EMBER_ARG(std::optional<int64_t>, quant_min) = std::nullopt;
  EMBER_ARG(std::optional<int64_t>, quant_max) = std::nullopt;
  EMBER_ARG(double, eps) = std::numeric_limits<float>::epsilon();
  EMBER_ARG(double, averaging_constant) = 0.01;  // the moving-average observers
  EMBER_ARG(int64_t, ch_axis) = 0;               // the per-channel observers
  EMBER_ARG(int64_t, bins) = 2048;               // HistogramObserver
  EMBER_ARG(int64_t, upsample_rate) = 128;       // HistogramObserver
};

// What a QConfig makes for a tensor to be observed: an observer or a fake quantizer (PyTorch's
// ObserverOrFakeQuantize). forward returns its input (fake-quantized by a fake quantizer).
class ObserverOrFakeQuantize : public nn::Module {
 public:
  virtual Tensor forward(const Tensor& x) = 0;
  // (scale float32, zero_point int64): one element per tensor, one per channel per channel.
  virtual std::tuple<Tensor, Tensor> calculate_qparams() const = 0;
  virtual ScalarType dtype() const = 0;
  virtual QScheme qscheme() const = 0;
  virtual int64_t quant_min() const = 0;
  virtual int64_t quant_max() const = 0;
};

// The observers' common part (PyTorch's UniformQuantizationObserverBase): the scheme, the
// integer range, and the scale and zero point of a [min, max] (per tensor or per channel).
class ObserverBase : public ObserverOrFakeQuantize {
 public:
  // Records x's range (x is returned unchanged).
  Tensor forward(const Tensor& x) override = 0;
  std::tuple<Tensor, Tensor> calculate_qparams() const override;
  ScalarType dtype() const override { return options_.dtype(); }
  const ObserverOptions& options() const { return options_; }
  QScheme qscheme() const override { return qscheme_; }
  int64_t quant_min() const override { return quant_min_; }
  int64_t quant_max() const override { return quant_max_; }
  Tensor min_val, max_val;  // buffers, as PyTorch's

 protected:
  ObserverBase(const ObserverOptions& options, QScheme default_qscheme, bool per_channel, const char* name);
  // The scale and zero point of the ranges [lo[i], hi[i]] (PyTorch's _calculate_qparams).
  std::tuple<Tensor, Tensor> qparams_of(const Tensor& lo, const Tensor& hi) const;
  ObserverOptions options_;
  QScheme qscheme_;
  int64_t quant_min_, quant_max_;
  bool custom_range_;
};

// min and max over everything seen.
class MinMaxObserverImpl : public ObserverBase {
 public:
  explicit MinMaxObserverImpl(const ObserverOptions& options = {});
  Tensor forward(const Tensor& x) override;
  void pretty_print(std::ostream& stream) const override;
};
EMBER_MODULE(MinMaxObserver);

// min and max as exponential moving averages: m += averaging_constant * (batch's - m).
class MovingAverageMinMaxObserverImpl : public ObserverBase {
 public:
  explicit MovingAverageMinMaxObserverImpl(const ObserverOptions& options = {});
  Tensor forward(const Tensor& x) override;
  void pretty_print(std::ostream& stream) const override;
};
EMBER_MODULE(MovingAverageMinMaxObserver);

// min and max per index of ch_axis.
class PerChannelMinMaxObserverImpl : public ObserverBase {
 public:
  explicit PerChannelMinMaxObserverImpl(const ObserverOptions& options = {});
  Tensor forward(const Tensor& x) override;
  void pretty_print(std::ostream& stream) const override;
};
EMBER_MODULE(PerChannelMinMaxObserver);

class MovingAveragePerChannelMinMaxObserverImpl : public ObserverBase {
 public:
  explicit MovingAveragePerChannelMinMaxObserverImpl(const ObserverOptions& options = {});
  Tensor forward(const Tensor& x) override;
  void pretty_print(std::ostream& stream) const override;
};
EMBER_MODULE(MovingAveragePerChannelMinMaxObserver);

// A running histogram of everything seen (`bins` bins over [min_val, max_val]), from which
// calculate_qparams chooses the range that minimizes the L2 error of quantizing it (PyTorch's
// HistogramObserver, per-tensor schemes only). When a batch widens the range, the histogram so far
// is spread over the new bins as PyTorch does (each bin split into `upsample_rate` equal parts).
class HistogramObserverImpl : public ObserverBase {
 public:
  explicit HistogramObserverImpl(const ObserverOptions& options = {});
  Tensor forward(const Tensor& x) override;
  std::tuple<Tensor, Tensor> calculate_qparams() const override;
  void pretty_print(std::ostream& stream) const override;
  Tensor histogram;  // buffer, float32 [bins]

 private:
  std::pair<float, float> non_linear_param_search() const;
  double quantization_error(int64_t start_bin, int64_t end_bin) const;
};
EMBER_MODULE(HistogramObserver);

// PyTorch's FakeQuantize (quantization-aware training): each forward lets the observer see the
// input (while the observer is enabled), keeps the scale and zero point it then chooses in the
// buffers `scale` (float32) and `zero_point` (int32), and returns the input fake-quantized with
// them (while fake quantization is enabled; gradient: the straight-through estimator). The
// observer, a submodule named activation_post_process as in PyTorch, decides the dtype, the scheme
// (per tensor, or per channel along its ch_axis) and the integer range. Without one it is
// PyTorch's default, MovingAverageMinMaxObserver().
class FakeQuantizeImpl : public ObserverOrFakeQuantize {
 public:
  explicit FakeQuantizeImpl(std::shared_ptr<ObserverBase> observer = nullptr);
  Tensor forward(const Tensor& x) override;
  std::tuple<Tensor, Tensor> calculate_qparams() const override { return activation_post_process->calculate_qparams(); }
  ScalarType dtype() const override { return activation_post_process->dtype(); }
  QScheme qscheme() const override { return activation_post_process->qscheme(); }
  int64_t quant_min() const override { return activation_post_process->quant_min(); }
  int64_t quant_max() const override { return activation_post_process->quant_max(); }
  int64_t ch_axis() const { return ch_axis_; }  // -1 per tensor
  bool is_per_channel() const { return ch_axis_ >= 0; }
  void enable_fake_quant(bool enabled = true);
  void disable_fake_quant() { enable_fake_quant(false); }
  void enable_observer(bool enabled = true);
  void disable_observer() { enable_observer(false); }
  void pretty_print(std::ostream& stream) const override;

  std::shared_ptr<ObserverBase> activation_post_process;
  Tensor fake_quant_enabled, observer_enabled;  // uint8 [1] buffers, as PyTorch's
  Tensor scale, zero_point;

 protected:
  // switches: the dtype of the two switch buffers (uint8 here, int64 in the fused module)
  FakeQuantizeImpl(std::shared_ptr<ObserverBase> observer, ScalarType switches);
  // The qparams of what the observer has seen: its calculate_qparams().
  virtual std::tuple<Tensor, Tensor> observed_qparams() const { return calculate_qparams(); }

 private:
  int64_t ch_axis_ = -1;
};
EMBER_MODULE(FakeQuantize);

// PyTorch's default fake quantizers: activations MovingAverageMinMaxObserver(quint8, quant range
// [0, 255] reduced to [0, 127]); weights MovingAverageMinMaxObserver(qint8, [-128, 127],
// per_tensor_symmetric); per-channel weights MovingAveragePerChannelMinMaxObserver(qint8,
// [-128, 127], per_channel_symmetric, ch_axis 0).
FakeQuantize default_fake_quant();
FakeQuantize default_weight_fake_quant();
FakeQuantize default_per_channel_weight_fake_quant();

// PyTorch's FusedMovingAvgObsFakeQuantize (the QAT default since 1.10; one fused op there): a
// FakeQuantize over a moving-average observer whose qparams come from the running min and max by
// libtorch's ChooseQuantizationParams (symmetric schemes preserving sparsity) rather than the
// observer's calculate_qparams; the two can differ in the last bits of the scale.
class FusedMovingAvgObsFakeQuantizeImpl : public FakeQuantizeImpl {
 public:
  // observer: a MovingAverageMinMaxObserver or MovingAveragePerChannelMinMaxObserver (the default
  // is MovingAverageMinMaxObserver()).
  explicit FusedMovingAvgObsFakeQuantizeImpl(std::shared_ptr<ObserverBase> observer = nullptr);
  void pretty_print(std::ostream& stream) const override;

 protected:
  std::tuple<Tensor, Tensor> observed_qparams() const override;
};
EMBER_MODULE(FusedMovingAvgObsFakeQuantize);

// PyTorch's enable_observer, disable_observer, enable_fake_quant and disable_fake_quant: applied to
// a model (model->apply(quantization::disable_observer)) they switch every FakeQuantize in it (the
// other modules are left alone), e.g. to freeze the qparams for the last steps of QAT.
void enable_observer(nn::Module& module);
void disable_observer(nn::Module& module);
void enable_fake_quant(nn::Module& module);
void disable_fake_quant(nn::Module& module);

namespace detail {
// PyTorch's _quantize_weight: a float weight quantized to qint8 with the qparams its observer or
// fake quantizer chose (per tensor, or per channel along the observer's axis).
Tensor quantize_weight(const Tensor& weight, const ObserverOrFakeQuantize& observer);
}  // namespace detail

// PyTorch's QConfig: how to observe activations and weights (factories: each call makes a new
// observer or fake quantizer).
struct QConfig {
  std::function<std::shared_ptr<ObserverOrFakeQuantize>()> activation;
  std::function<std::shared_ptr<ObserverOrFakeQuantize>()> weight;
};
// get_default_qconfig("x86" or "fbgemm"), as PyTorch's: activations HistogramObserver(quint8,
// reduce_range), weights PerChannelMinMaxObserver(qint8, per_channel_symmetric).
QConfig get_default_qconfig(const std::string& backend = "x86");
// get_default_qat_qconfig("x86" or "fbgemm", version 1), as PyTorch's: activations
// FusedMovingAvgObsFakeQuantize(MovingAverageMinMaxObserver, quint8 [0, 255], reduce_range),
// weights FusedMovingAvgObsFakeQuantize(MovingAveragePerChannelMinMaxObserver, qint8 [-128, 127],
// per_channel_symmetric). Version 0 uses FakeQuantize instead of the fused module.
QConfig get_default_qat_qconfig(const std::string& backend = "x86", int version = 1);

// PyTorch's QuantStub and DeQuantStub: where a model's float input becomes quantized and its
// quantized output float again. Identities until convert; prepare observes the QuantStub's output,
// and convert makes it quantize with the qparams observed (quint8 per tensor) and the DeQuantStub
// dequantize.
class QuantStubImpl : public nn::Module {
 public:
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& stream) const override;
  std::shared_ptr<ObserverOrFakeQuantize> activation_post_process;  // set by prepare
  std::shared_ptr<nn::quantized::QuantizeImpl> quantize;            // set by convert
};
EMBER_MODULE(QuantStub);

class DeQuantStubImpl : public nn::Module {
 public:
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& stream) const override;
  bool converted = false;  // set by convert
};
EMBER_MODULE(DeQuantStub);

// Eager-mode static quantization, as torch.ao.quantization's prepare and convert, in place (the
// model's holders keep their modules; each module runs its observed or quantized form):
// prepare(model, qconfig) gives every QuantStub, nn::Linear, Conv1d/2d/3d, BatchNorm2d, fused
// module (nn::intrinsic LinearReLU, ConvReLU1d/2d/3d, ConvBn(ReLU)1d/2d/3d, BNReLU2d; whole) and
// nn::quantized::FloatFunctional in the tree an observer of its output made by qconfig.activation
// (a submodule named activation_post_process); run calibration data through the model;
// convert(model) replaces each by its int8 form (QuantStub: Quantize with the observed qparams;
// Linear: nn::quantized::Linear, weight per channel, output qparams observed; convolutions:
// nn::quantized::Conv / ConvReLU; BatchNorm2d: nn::quantized::BatchNorm2d; FloatFunctional: a
// QFunctional with the observed qparams; DeQuantStub: dequantize) and drops the observers.
// Between them, the model's own code runs on quantized tensors: relu, pooling, relu6/hardtanh,
// sigmoid and hardsigmoid take them, other float ops raise (dequantize first with a DeQuantStub;
// docs/quantization.md). Each returns the number of modules it prepared or converted.
int64_t prepare(nn::Module& model, const QConfig& qconfig = get_default_qconfig());
int64_t convert(nn::Module& model);

// Quantization-aware training, as torch.ao.quantization.prepare_qat, in place, on a model in
// training mode: every layer prepare would observe gets a fake quantizer of its output
// (qconfig.activation, activation_post_process), and the Linear and Conv layers among them
// (fused ones included: LinearReLU, ConvReLU, ConvBn, ConvBnReLU) one of their weight
// (qconfig.weight, a submodule weight_fake_quant of the Linear or Conv), which forward applies.
// Train as usual (the fake quantizers' qparams follow the weights and activations; a ConvBn keeps
// training its batch norm on the folded weight), then eval() and convert(model) as after prepare:
// each weight is quantized with the qparams its fake quantizer chose, ConvBn's batch norm folded
// first. Returns the number of modules prepared.
int64_t prepare_qat(nn::Module& model, const QConfig& qconfig = get_default_qat_qconfig());

// torch.ao.quantization.fuse_modules, in place: each group of module names (dotted paths reach
// nested modules: {{"features.0", "features.1", "features.2"}, ...}) becomes one module under the
// first name and Identity under the others. Patterns: conv-bn and linear-bn (eval mode: the batch
// norm folded into a copy of the layer's weight and bias), conv-bn-relu (eval: ConvReLU{1,2,3}d of
// the folded conv), conv-relu, linear-relu, bn-relu (nn::intrinsic::ConvReLU/LinearReLU/BNReLU2d/
// 3d, any mode). The layers must be held by an nn::Sequential: a C++ module's forward() calls its
// members, which replacing them in the tree would not change. Training-mode batch-norm folding
// (PyTorch's ConvBn QAT modules) raises. Every group is checked before any is fused.
void fuse_modules(nn::Module& model, const std::vector<std::vector<std::string>>& modules_to_fuse);
// torch.ao.quantization.fuse_modules_qat, for quantization-aware training: as fuse_modules, but
// conv-bn and conv-bn-relu become nn::intrinsic::ConvBn{1,2,3}d / ConvBnReLU{1,2,3}d, which keep
// the batch norm (in either mode; prepare_qat then folds it into the weight as it trains).
void fuse_modules_qat(nn::Module& model, const std::vector<std::vector<std::string>>& modules_to_fuse);

// PyTorch's quantize_dynamic(model, {nn.Linear, nn.LSTM, nn.GRU}, dtype=torch.qint8): every
// nn::Linear in the module tree (model included) computes in int8 from now on (its weight
// quantized per channel and prepacked once; see nn::quantized::dynamic::Linear), and so do the
// input, hidden and projection products of every nn::LSTM and nn::GRU (each weight matrix a
// dynamic int8 Linear; the gate math stays float32). In place: the model's holders keep their
// modules. Returns the number of layers quantized.
int64_t quantize_dynamic(nn::Module& model, ScalarType dtype = kQInt8);

}  // namespace ember::quantization
