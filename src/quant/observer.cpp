// Observers (torch.ao.quantization.observer): the running min and max of what they see, and the
// scale and zero point PyTorch's UniformQuantizationObserverBase._calculate_qparams derives from
// them, computed in float32 as PyTorch's tensor arithmetic does.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/pointwise.h"
#include "ember/quantization.h"
#include "ember/reduce.h"
#include "ember/shape.h"

namespace ember::quantization {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

bool is_per_channel_scheme(QScheme s) {
  return s == kPerChannelAffine || s == kPerChannelSymmetric || s == kPerChannelAffineFloatQParams;
}

// PyTorch's calculate_qmin_qmax.
std::pair<int64_t, int64_t> qmin_qmax(const ObserverOptions& o, bool custom) {
  const ScalarType dtype = o.dtype();
  if (custom) {
    int64_t lo = 0, hi = dtype == kQInt32 ? (int64_t{1} << 31) - 1 : 255;
    if (o.quant_min() && o.quant_max()) {
      lo = *o.quant_min();
      hi = *o.quant_max();
    }
    const int64_t len = hi - lo + 1;
    int64_t qmin, qmax;
    if (dtype == kQInt8) {
      qmin = -(len / 2);  // Python's -len // 2 for even len
      if (len % 2) qmin = -((len + 1) / 2);
      qmax = len / 2 - 1;
    } else if (dtype == kQInt32) {
      qmin = -(int64_t{1} << 31);
      qmax = (int64_t{1} << 31) - 1;
    } else {
      qmin = 0;
      qmax = len - 1;
    }
    if (o.reduce_range()) {
      qmin = qmin >= 0 ? qmin / 2 : -((-qmin + 1) / 2);  // floor division
      qmax = qmax >= 0 ? qmax / 2 : -((-qmax + 1) / 2);
    }
    return {qmin, qmax};
  }
  if (dtype == kQInt8) return o.reduce_range() ? std::pair<int64_t, int64_t>{-64, 63} : std::pair<int64_t, int64_t>{-128, 127};
  if (dtype == kQUInt8) return o.reduce_range() ? std::pair<int64_t, int64_t>{0, 127} : std::pair<int64_t, int64_t>{0, 255};
  return {-(int64_t{1} << 31), (int64_t{1} << 31) - 1};
}

// The tensor's values per channel of ch_axis: [channels, rest] (PyTorch permutes ch_axis to the
// front and flattens the rest).
Tensor by_channel(const Tensor& x, int64_t ch_axis) {
  DimVector perm;
  for (int64_t d = 0; d < x.dim(); ++d) perm.push_back(d);
  std::swap(perm[0], perm[ch_axis]);
  return x.permute(perm).flatten(1);
}

// m + c * (cur - m), elementwise in float32.
Tensor moving_average(const Tensor& m, const Tensor& cur, double averaging_constant) {
  const float c = static_cast<float>(averaging_constant);
  Tensor out = empty_like(cur);
  const Tensor mc = m.contiguous(), cc = cur.contiguous();
  for (int64_t i = 0; i < cur.numel(); ++i)
    out.data_ptr<float>()[i] = mc.data_ptr<float>()[i] + c * (cc.data_ptr<float>()[i] - mc.data_ptr<float>()[i]);
  return out;
}

const char* scheme_name(QScheme s) {
  switch (s) {
    case kPerTensorAffine: return "torch.per_tensor_affine";
    case kPerTensorSymmetric: return "torch.per_tensor_symmetric";
    case kPerChannelAffine: return "torch.per_channel_affine";
    case kPerChannelSymmetric: return "torch.per_channel_symmetric";
    case kPerChannelAffineFloatQParams: return "torch.per_channel_affine_float_qparams";
  }
  return "?";
}
const char* dtype_name(ScalarType t) { return t == kQInt8 ? "torch.qint8" : t == kQUInt8 ? "torch.quint8" : "torch.qint32"; }

}  // namespace

ObserverBase::ObserverBase(const ObserverOptions& options, QScheme default_qscheme, bool per_channel)
    : options_(options), qscheme_(options.qscheme().value_or(default_qscheme)) {
  const char* op = per_channel ? "PerChannelMinMaxObserver" : "MinMaxObserver";
  EMBER_CHECK(is_quantized_type(options.dtype()), op,
              "Default Observer only works for qint8, quint8 and qint32 data type, got ", options.dtype());
  EMBER_CHECK(is_per_channel_scheme(qscheme_) == per_channel, op, "the qscheme ", qscheme_, " is not a ",
              per_channel ? "per-channel" : "per-tensor", " scheme");
  EMBER_CHECK(!(qscheme_ == (per_channel ? kPerChannelSymmetric : kPerTensorSymmetric) && options.reduce_range() &&
                options.dtype() == kQUInt8),
              op, "Cannot reduce range for symmetric quantization for quint8");
  custom_range_ = options.quant_min().has_value() || options.quant_max().has_value();
  if (custom_range_) {
    EMBER_CHECK(options.quant_min() && options.quant_max(), op, "quant_min and quant_max must be given together");
    EMBER_CHECK(*options.quant_min() <= 0 && 0 <= *options.quant_max(), op,
                "Used-specified quantization range must include 0.");
    EMBER_CHECK(*options.quant_min() < *options.quant_max(), op,
                "qmin must be strictly less than qmax for user-specified quantization range.");
  }
  std::tie(quant_min_, quant_max_) = qmin_qmax(options, custom_range_);
  if (per_channel) {
    min_val = register_buffer("min_val", empty({0}));
    max_val = register_buffer("max_val", empty({0}));
  } else {
    min_val = register_buffer("min_val", scalar_tensor(kInf, TensorOptions().dtype(kFloat)));
    max_val = register_buffer("max_val", scalar_tensor(-kInf, TensorOptions().dtype(kFloat)));
  }
}

std::tuple<Tensor, Tensor> ObserverBase::calculate_qparams() const {
  const bool float_zp = qscheme_ == kPerChannelAffineFloatQParams;
  const auto defaults = [&] {
    return std::tuple<Tensor, Tensor>{full({1}, 1.0, TensorOptions().dtype(kFloat)),
                                      full({1}, 0, TensorOptions().dtype(float_zp ? kFloat : kLong))};
  };
  // PyTorch's check_min_max_valid: nothing observed yet gives scale 1 and zero point 0
  if (min_val.numel() == 0) return defaults();
  const Tensor mins = min_val.contiguous().view({-1}), maxs = max_val.contiguous().view({-1});
  const int64_t n = mins.numel();
  const float* lo = mins.data_ptr<float>();
  const float* hi = maxs.data_ptr<float>();
  if (min_val.dim() == 0 && lo[0] == kInf && hi[0] == -kInf) return defaults();
  for (int64_t i = 0; i < n; ++i)
    EMBER_CHECK(lo[i] <= hi[i], "calculate_qparams", "min ", lo[i], " should be less than max ", hi[i]);

  Tensor scale = empty({n});
  Tensor zero_point = float_zp ? empty({n}) : empty({n}, TensorOptions().dtype(kLong));
  const float eps = static_cast<float>(options_.eps());
  const float qmin = static_cast<float>(quant_min_), qmax = static_cast<float>(quant_max_);
  for (int64_t i = 0; i < n; ++i) {
    const float min_neg = std::min(lo[i], 0.0f), max_pos = std::max(hi[i], 0.0f);
    float s;
    if (qscheme_ == kPerTensorSymmetric || qscheme_ == kPerChannelSymmetric) {
      s = std::max(std::max(-min_neg, max_pos) / static_cast<float>(static_cast<double>(quant_max_ - quant_min_) / 2),
                   eps);
      int64_t zp = 0;
      if (options_.dtype() == kQUInt8) {
        const int64_t sum = quant_min_ + quant_max_;
        zp = custom_range_ ? (sum >= 0 ? sum / 2 : -((-sum + 1) / 2)) : 128;
      }
      zero_point.data_ptr<int64_t>()[i] = zp;
    } else if (float_zp) {
      s = (hi[i] - lo[i]) / (qmax - qmin);
      if (!(s > eps)) s = 1.0f;
      zero_point.data_ptr<float>()[i] = -1 * lo[i] / s;
    } else {
      s = std::max((max_pos - min_neg) / (qmax - qmin), eps);
      const int64_t zp = quant_min_ - static_cast<int32_t>(std::nearbyint(min_neg / s));
      zero_point.data_ptr<int64_t>()[i] = std::clamp(zp, quant_min_, quant_max_);
    }
    scale.data_ptr<float>()[i] = s;
  }
  return {scale, zero_point};
}

MinMaxObserverImpl::MinMaxObserverImpl(const ObserverOptions& options)
    : ObserverBase(options, kPerTensorAffine, false) {}

Tensor MinMaxObserverImpl::forward(const Tensor& x_orig) {
  if (x_orig.numel() == 0) return x_orig;
  NoGradGuard no_grad;
  const Tensor x = x_orig.detach().to(kFloat);
  min_val.copy_(minimum(x.min(), min_val));
  max_val.copy_(maximum(x.max(), max_val));
  return x_orig;
}

MovingAverageMinMaxObserverImpl::MovingAverageMinMaxObserverImpl(const ObserverOptions& options)
    : ObserverBase(options, kPerTensorAffine, false) {}

Tensor MovingAverageMinMaxObserverImpl::forward(const Tensor& x_orig) {
  if (x_orig.numel() == 0) return x_orig;
  NoGradGuard no_grad;
  const Tensor x = x_orig.detach().to(kFloat);
  if (min_val.item<float>() == kInf && max_val.item<float>() == -kInf) {
    min_val.copy_(x.min());
    max_val.copy_(x.max());
  } else {
    min_val.copy_(moving_average(min_val, x.min(), options_.averaging_constant()));
    max_val.copy_(moving_average(max_val, x.max(), options_.averaging_constant()));
  }
  return x_orig;
}

PerChannelMinMaxObserverImpl::PerChannelMinMaxObserverImpl(const ObserverOptions& options)
    : ObserverBase(options, kPerChannelAffine, true) {}

namespace {
// The per-channel observers' step: each channel's min and max of x along ch_axis, combined with
// the running ones (when there are any) by `combine`, and stored.
template <class Combine>
void observe_channels(const char* name, ObserverBase& o, int64_t ch_axis, const Tensor& x_orig, Combine combine) {
  NoGradGuard no_grad;
  const int64_t axis = maybe_wrap_dim(ch_axis, x_orig.dim(), name);
  const Tensor y = by_channel(x_orig.detach().to(kFloat), axis);
  Tensor lo = y.amin({1}), hi = y.amax({1});
  if (o.min_val.numel() != 0) {
    EMBER_CHECK(o.min_val.numel() == lo.numel(), name, "observed ", o.min_val.numel(), " channels before, now ",
                lo.numel());
    lo = combine(o.min_val, lo, true);
    hi = combine(o.max_val, hi, false);
  }
  o.min_val.resize_(lo.sizes());
  o.max_val.resize_(hi.sizes());
  o.min_val.copy_(lo);
  o.max_val.copy_(hi);
}
}  // namespace

Tensor PerChannelMinMaxObserverImpl::forward(const Tensor& x_orig) {
  if (x_orig.numel() == 0) return x_orig;
  observe_channels("PerChannelMinMaxObserver", *this, options_.ch_axis(), x_orig,
                   [](const Tensor& running, const Tensor& cur, bool is_min) {
                     return is_min ? minimum(cur, running) : maximum(cur, running);
                   });
  return x_orig;
}

MovingAveragePerChannelMinMaxObserverImpl::MovingAveragePerChannelMinMaxObserverImpl(const ObserverOptions& options)
    : ObserverBase(options, kPerChannelAffine, true) {}

Tensor MovingAveragePerChannelMinMaxObserverImpl::forward(const Tensor& x_orig) {
  if (x_orig.numel() == 0) return x_orig;
  const double c = options_.averaging_constant();
  observe_channels("MovingAveragePerChannelMinMaxObserver", *this, options_.ch_axis(), x_orig,
                   [c](const Tensor& running, const Tensor& cur, bool) { return moving_average(running, cur, c); });
  return x_orig;
}

namespace {
void print_observer(std::ostream& os, const char* name, const ObserverBase& o) {
  os << name << "(min_val=" << (o.min_val.numel() == 1 ? o.min_val.item<float>() : 0.0f)
     << ", max_val=" << (o.max_val.numel() == 1 ? o.max_val.item<float>() : 0.0f) << ", dtype=" << dtype_name(o.dtype())
     << ", qscheme=" << scheme_name(o.qscheme()) << ", quant_min=" << o.quant_min() << ", quant_max=" << o.quant_max()
     << ")";
}
}  // namespace
void MinMaxObserverImpl::pretty_print(std::ostream& os) const { print_observer(os, "MinMaxObserver", *this); }
void MovingAverageMinMaxObserverImpl::pretty_print(std::ostream& os) const {
  print_observer(os, "MovingAverageMinMaxObserver", *this);
}
void PerChannelMinMaxObserverImpl::pretty_print(std::ostream& os) const {
  print_observer(os, "PerChannelMinMaxObserver", *this);
}
void MovingAveragePerChannelMinMaxObserverImpl::pretty_print(std::ostream& os) const {
  print_observer(os, "MovingAveragePerChannelMinMaxObserver", *this);
}

QConfig get_default_qconfig(const std::string& backend) {
  EMBER_CHECK(backend == "x86" || backend == "fbgemm", "get_default_qconfig",
              "backend must be \"x86\" or \"fbgemm\" (the others are not in Ember yet), got \"", backend, "\"");
  QConfig c;
  c.activation = [] {
    return std::static_pointer_cast<ObserverBase>(
        std::make_shared<MinMaxObserverImpl>(ObserverOptions().dtype(kQUInt8).reduce_range(true)));
  };
  c.weight = [] {
    return std::static_pointer_cast<ObserverBase>(std::make_shared<PerChannelMinMaxObserverImpl>(
        ObserverOptions().dtype(kQInt8).qscheme(kPerChannelSymmetric)));
  };
  return c;
}

}  // namespace ember::quantization
