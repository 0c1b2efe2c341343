// nn::quantized::Conv1d/2d/3d and nn::intrinsic::quantized::ConvReLU1d/2d/3d on oneDNN's int8
// convolution (kernels::Int8Conv).
#include <cmath>
#include <sstream>
#include <tuple>
#include <variant>

#include "ember/factory.h"
#include "ember/quantization.h"
#include "kernels/cpu/onednn_quant.h"
#include "nn/quantized/prepared.h"
#include "ops/quantized_util.h"

namespace ember::nn::quantized {

// The kernel and the geometry it is made with; get() prepares it (again, after a load).
template <size_t D>
struct ConvNdImpl<D>::Packed {
  detail::Prepared<kernels::Int8Conv> kernel;
  kernels::Int8ConvGeometry geometry;
  std::shared_ptr<const kernels::Int8Conv> get(const char* op, const Tensor& qweight_now,
                                               const std::optional<Tensor>& bias_now);
};

namespace {

const char* conv_name(size_t d, bool relu) {
  static const char* const names[2][3] = {{"QuantizedConv1d", "QuantizedConv2d", "QuantizedConv3d"},
                                          {"QuantizedConvReLU1d", "QuantizedConvReLU2d", "QuantizedConvReLU3d"}};
  return names[relu][d - 1];
}

// The order of a channels-last tensor's dims: N, spatial..., C.
DimVector channels_last_order(int64_t dims) {
  DimVector order{0};
  for (int64_t d = 2; d < dims; ++d) order.push_back(d);
  order.push_back(1);
  return order;
}

// The integers of t laid out channels-last densely (t itself when they are already).
Tensor channels_last_integers(const Tensor& raw) {
  const DimVector order = channels_last_order(raw.dim());
  const Tensor permuted = raw.permute(order);
  if (permuted.is_contiguous()) return raw;
  DimVector inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  return permuted.contiguous().permute(inverse);
}

// The strides of a dense channels-last tensor of `sizes`: what oneDNN is told, also where a dim of
// size 1 lets the tensor's own strides read as another layout (one channel: also NCHW), which
// would make oneDNN take its reference kernel.
DimVector channels_last_strides(IntArrayRef sizes) {
  const DimVector order = channels_last_order(static_cast<int64_t>(sizes.size()));
  DimVector strides(sizes.size());
  int64_t step = 1;
  for (size_t i = order.size(); i-- > 0;) {
    strides[static_cast<size_t>(order[i])] = step;
    step *= sizes[static_cast<size_t>(order[i])];
  }
  return strides;
}

// A new uint8 tensor of `sizes` laid out channels-last.
Tensor empty_channels_last(IntArrayRef sizes) {
  const DimVector order = channels_last_order(static_cast<int64_t>(sizes.size()));
  DimVector permuted_sizes, inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    permuted_sizes.push_back(sizes[static_cast<size_t>(order[i])]);
    inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  }
  return empty(permuted_sizes, TensorOptions().dtype(kByte)).permute(inverse);
}

}  // namespace

template <size_t D>
ConvNdImpl<D>::ConvNdImpl(const Tensor& qweight, const std::optional<Tensor>& bias, const ConvOptions<D>& options,
                          double scale, int64_t zero_point)
    : ConvNdImpl(qweight, bias, options, scale, zero_point, false) {}

template <size_t D>
ConvNdImpl<D>::ConvNdImpl(const Tensor& qweight, const std::optional<Tensor>& bias, const ConvOptions<D>& options,
                          double scale, int64_t zero_point, bool relu)
    : qweight_(qweight), bias_(bias), options_(options), relu_(relu) {
  const char* op = conv_name(D, relu);
  std::tie(scale_, zero_point_) = detail::register_output_qparams(*this, op, scale, zero_point);
  EMBER_CHECK(qweight.defined() && qweight.is_quantized() && qweight.dtype() == kQInt8 &&
                  qweight.dim() == static_cast<int64_t>(D) + 2,
              op, "expected a ", D + 2, "-D qint8 quantized weight [out, in / groups, kernel...], got ",
              qweight.defined() ? std::string(to_string(qweight.dtype())) : std::string("an undefined tensor"),
              qweight.defined() ? " of " + std::to_string(qweight.dim()) + " dims" : std::string());
  EMBER_CHECK(std::holds_alternative<enumtype::kZeros>(options.padding_mode()), op,
              "only zeros padding is supported by quantized convolutions");
  const int64_t groups = options.groups();
  const int64_t out = qweight.size(0), in = qweight.size(1) * groups;
  EMBER_CHECK(groups > 0 && out % groups == 0, op, "the weight's ", out, " output channels are not divisible by groups=",
              groups);
  EMBER_CHECK(options.in_channels() == in && options.out_channels() == out, op, "the options say ",
              options.in_channels(), " -> ", options.out_channels(), " channels, the weight of size ", qweight.sizes(),
              " with groups=", groups, " says ", in, " -> ", out);
  kernels::Int8ConvGeometry g;
  g.groups = groups;
  g.relu = relu;
  for (size_t d = 0; d < D; ++d) {
    const int64_t k = qweight.size(static_cast<int64_t>(d) + 2);
    EMBER_CHECK(k == options.kernel_size()[d], op, "the options' kernel_size ", options.kernel_size(),
                " differs from the weight's size ", qweight.sizes());
    const int64_t s = options.stride()[d], dil = options.dilation()[d];
    EMBER_CHECK(s > 0 && dil > 0, op, "stride and dilation must be positive, got stride=", options.stride(),
                ", dilation=", options.dilation());
    int64_t lo = 0, hi = 0;
    if (const auto* p = std::get_if<ExpandingArray<D>>(&options.padding())) {
      lo = hi = (*p)[d];
      EMBER_CHECK(lo >= 0, op, "negative padding is not supported");
    } else if (std::holds_alternative<enumtype::kSame>(options.padding())) {
      EMBER_CHECK(s == 1, op, "padding='same' is not supported for strided convolutions");
      const int64_t total = dil * (k - 1);  // as PyTorch: the odd one on the right
      lo = total / 2;
      hi = total - lo;
    }
    g.stride.push_back(s);
    g.dilation.push_back(dil);
    g.padding_l.push_back(lo);
    g.padding_r.push_back(hi);
  }
  packed_ = std::make_shared<Packed>();
  packed_->geometry = std::move(g);
  if (bias_ && !bias_->defined()) bias_ = std::nullopt;
  packed_->get(op, qweight_, bias_);  // prepared now, so that a bad weight or bias raises here
  register_buffer("weight", qweight_);
  if (bias_) register_buffer("bias", *bias_);
}

template <size_t D>
std::shared_ptr<const kernels::Int8Conv> ConvNdImpl<D>::Packed::get(const char* op, const Tensor& qweight_now,
                                                                    const std::optional<Tensor>& bias_now) {
  return kernel.get(qweight_now, bias_now, [&](const Tensor& qweight, const std::optional<Tensor>& bias) {
    const int64_t out = qweight.size(0);
    EMBER_CHECK(qweight.is_quantized() && qweight.dtype() == kQInt8, op, "the weight must be qint8, got ",
                qweight.dtype());
    std::vector<float> scales;
    if (qweight.qscheme() == kPerTensorAffine) {
      EMBER_CHECK(qweight.q_zero_point() == 0, op, "the weight must be quantized symmetrically (zero point 0), got ",
                  qweight.q_zero_point());
      scales = {static_cast<float>(qweight.q_scale())};
    } else {
      EMBER_CHECK(qweight.q_per_channel_axis() == 0, op, "per-channel weights must be quantized along axis 0 (the ",
                  "outputs), got axis ", qweight.q_per_channel_axis());
      const Tensor s = qweight.q_per_channel_scales().to(kFloat).contiguous();
      const Tensor z = qweight.q_per_channel_zero_points().contiguous();
      for (int64_t c = 0; c < out; ++c) {
        EMBER_CHECK(z.data_ptr<int64_t>()[c] == 0, op, "the weight must be quantized symmetrically (zero points 0), ",
                    "got a zero point ", z.data_ptr<int64_t>()[c], " for output channel ", c);
        scales.push_back(s.data_ptr<float>()[c]);
      }
    }
    Tensor b;
    if (bias) {
      EMBER_CHECK(bias->dtype() == kFloat && bias->dim() == 1 && bias->size(0) == out, op,
                  "expected a float32 bias of size [", out, "], got ", bias->dtype(), " of size ", bias->sizes());
      b = bias->detach().contiguous();
    }
    const Tensor w = qweight.int_repr().contiguous();
    return std::make_shared<const kernels::Int8Conv>(w.data_ptr<int8_t>(), w.sizes(), scales,
                                                     b.defined() ? b.data_ptr<float>() : nullptr, geometry);
  });
}

template <size_t D>
double ConvNdImpl<D>::scale() const {
  return scale_.item<double>();
}
template <size_t D>
int64_t ConvNdImpl<D>::zero_point() const {
  return zero_point_.item<int64_t>();
}

template <size_t D>
std::pair<Tensor, std::optional<Tensor>> ConvNdImpl<D>::quantized_weight_and_bias(const nn::ConvNdImpl<D>& conv) {
  const Tensor w = conv.weight.detach();
  std::optional<Tensor> bias = conv.bias.defined() ? std::optional<Tensor>(conv.bias.detach()) : std::nullopt;
  if (conv.weight_fake_quant) {  // after quantization-aware training (as PyTorch, it sees W once more)
    conv.weight_fake_quant->forward(w);
    return {quantization::detail::quantize_weight(w, *conv.weight_fake_quant), bias};
  }
  quantization::PerChannelMinMaxObserver observer(
      quantization::ObserverOptions().dtype(kQInt8).qscheme(kPerChannelSymmetric));
  observer(w);
  auto [scales, zero_points] = observer->calculate_qparams();
  return {quantize_per_channel(w, scales.to(kDouble), zero_points, 0, kQInt8), bias};
}

namespace {

// The output's sizes for a batched input, checked as PyTorch checks them.
template <size_t D>
DimVector output_sizes(const char* op, const Tensor& input, const Tensor& qweight, const ConvOptions<D>& options) {
  EMBER_CHECK(input.is_quantized() && input.dtype() == kQUInt8 && input.qscheme() == kPerTensorAffine, op,
              "expected a quint8 input quantized per tensor (quantize it first, e.g. with a QuantStub), got ",
              input.is_quantized() ? toString(input.qscheme()) + " " : std::string(), input.dtype());
  EMBER_CHECK(input.dim() == static_cast<int64_t>(D) + 2, op, "expected a batched ", D + 2, "-D input, got input of size ",
              input.sizes());
  const int64_t groups = options.groups();
  EMBER_CHECK(input.size(1) == qweight.size(1) * groups, op, "Given groups=", groups, ", weight of size ",
              qweight.sizes(), ", expected input", input.sizes(), " to have ", qweight.size(1) * groups,
              " channels, but got ", input.size(1), " channels instead");
  DimVector out{input.size(0), qweight.size(0)};
  for (size_t d = 0; d < D; ++d) {
    const int64_t k = qweight.size(static_cast<int64_t>(d) + 2), dil = options.dilation()[d];
    const int64_t s = options.stride()[d];
    int64_t pad = 0;
    if (const auto* p = std::get_if<ExpandingArray<D>>(&options.padding())) {
      pad = 2 * (*p)[d];
    } else if (std::holds_alternative<enumtype::kSame>(options.padding())) {
      pad = dil * (k - 1);
    }
    const int64_t span = input.size(static_cast<int64_t>(d) + 2) + pad - dil * (k - 1) - 1;
    EMBER_CHECK(span >= 0, op, "the padded input of size ", input.sizes(), " is smaller than the kernel ",
                qweight.sizes(), " (dilation ", options.dilation(), ")");
    out.push_back(span / s + 1);
  }
  return out;
}

}  // namespace

template <size_t D>
Tensor ConvNdImpl<D>::forward(const Tensor& input) {
  const char* op = conv_name(D, relu_);
  const DimVector out = output_sizes(op, input, qweight_, options_);
  const double scale = this->scale();
  const int64_t zero_point = this->zero_point();
  EMBER_CHECK(std::isfinite(scale) && scale > 0 && zero_point >= 0 && zero_point <= 255, op,
              "the output's scale must be finite and positive and its zero point in [0, 255], got ", scale, " and ",
              zero_point);
  const auto k = packed_->get(op, qweight_, bias_);
  Tensor y = empty_channels_last(out);
  if (y.numel() > 0) {
    const Tensor x = channels_last_integers(ember::quantized::raw_view(input));
    k->run(x.data_ptr<uint8_t>(), x.sizes(), channels_last_strides(x.sizes()), static_cast<float>(input.q_scale()),
           static_cast<int32_t>(input.q_zero_point()), y.data_ptr<uint8_t>(), out, channels_last_strides(out),
           static_cast<float>(scale), static_cast<int32_t>(zero_point));
  }
  return ember::quantized::wrap(y, ember::quantized::per_tensor_quantizer(kQUInt8, scale, zero_point));
}

template <size_t D>
std::string ConvNdImpl<D>::kernel(const Tensor& input) const {
  const char* op = conv_name(D, relu_);
  const DimVector out = output_sizes(op, input, qweight_, options_);
  const auto k = packed_->get(op, qweight_, bias_);
  const std::string impl = k->impl(input.sizes(), channels_last_strides(input.sizes()),
                                   static_cast<float>(input.q_scale()), out, channels_last_strides(out),
                                   static_cast<float>(scale()));
  return "oneDNN " + impl + " (ISA " + kernels::onednn_cpu_isa() + ")";
}

template <size_t D>
void ConvNdImpl<D>::pretty_print(std::ostream& stream) const {
  stream << conv_name(D, relu_) << "(" << options_.in_channels() << ", " << options_.out_channels()
         << ", kernel_size=" << options_.kernel_size() << ", stride=" << options_.stride() << ", scale=" << scale()
         << ", zero_point=" << zero_point();
  if (const auto* p = std::get_if<ExpandingArray<D>>(&options_.padding())) {
    if (*p != ExpandingArray<D>(0)) stream << ", padding=" << *p;
  } else {
    stream << ", padding=" << (std::holds_alternative<enumtype::kSame>(options_.padding()) ? "'same'" : "'valid'");
  }
  if (options_.dilation() != ExpandingArray<D>(1)) stream << ", dilation=" << options_.dilation();
  if (options_.groups() != 1) stream << ", groups=" << options_.groups();
  if (!bias_) stream << ", bias=False";
  stream << ")";
}

template class ConvNdImpl<1>;
template class ConvNdImpl<2>;
template class ConvNdImpl<3>;

}  // namespace ember::nn::quantized
