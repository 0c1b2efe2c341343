// Observers (torch.ao.quantization.observer): the running min and max of what they see, and the
// scale and zero point PyTorch's UniformQuantizationObserverBase._calculate_qparams derives from
// them, computed in float32 as PyTorch's tensor arithmetic does.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ember/aten_tail2.h"
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

ObserverBase::ObserverBase(const ObserverOptions& options, QScheme default_qscheme, bool per_channel, const char* op)
    : options_(options), qscheme_(options.qscheme().value_or(default_qscheme)) {
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

namespace {
// PyTorch's check_min_max_valid: nothing observed yet gives scale 1 and zero point 0.
std::tuple<Tensor, Tensor> default_qparams(QScheme scheme) {
  return {full({1}, 1.0, TensorOptions().dtype(kFloat)),
          full({1}, 0, TensorOptions().dtype(scheme == kPerChannelAffineFloatQParams ? kFloat : kLong))};
}
bool unobserved(const Tensor& min_val, const Tensor& max_val) {
  return min_val.numel() == 0 ||
         (min_val.dim() == 0 && min_val.item<float>() == kInf && max_val.item<float>() == -kInf);
}
}  // namespace

std::tuple<Tensor, Tensor> ObserverBase::calculate_qparams() const {
  if (unobserved(min_val, max_val)) return default_qparams(qscheme_);
  return qparams_of(min_val, max_val);
}

std::tuple<Tensor, Tensor> ObserverBase::qparams_of(const Tensor& min_vals, const Tensor& max_vals) const {
  const bool float_zp = qscheme_ == kPerChannelAffineFloatQParams;
  const Tensor mins = min_vals.contiguous().view({-1}), maxs = max_vals.contiguous().view({-1});
  const int64_t n = mins.numel();
  const float* lo = mins.data_ptr<float>();
  const float* hi = maxs.data_ptr<float>();
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
    : ObserverBase(options, kPerTensorAffine, false, "MinMaxObserver") {}

Tensor MinMaxObserverImpl::forward(const Tensor& x_orig) {
  if (x_orig.numel() == 0) return x_orig;
  NoGradGuard no_grad;
  const Tensor x = x_orig.detach().to(kFloat);
  min_val.copy_(minimum(x.min(), min_val));
  max_val.copy_(maximum(x.max(), max_val));
  return x_orig;
}

MovingAverageMinMaxObserverImpl::MovingAverageMinMaxObserverImpl(const ObserverOptions& options)
    : ObserverBase(options, kPerTensorAffine, false, "MovingAverageMinMaxObserver") {}

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
    : ObserverBase(options, kPerChannelAffine, true, "PerChannelMinMaxObserver") {}

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
    : ObserverBase(options, kPerChannelAffine, true, "MovingAveragePerChannelMinMaxObserver") {}

Tensor MovingAveragePerChannelMinMaxObserverImpl::forward(const Tensor& x_orig) {
  if (x_orig.numel() == 0) return x_orig;
  const double c = options_.averaging_constant();
  observe_channels("MovingAveragePerChannelMinMaxObserver", *this, options_.ch_axis(), x_orig,
                   [c](const Tensor& running, const Tensor& cur, bool) { return moving_average(running, cur, c); });
  return x_orig;
}

// ---- HistogramObserver (PyTorch 1.13's algorithm; its float32 arithmetic where the choice of bins
// depends on it) ----

HistogramObserverImpl::HistogramObserverImpl(const ObserverOptions& options)
    : ObserverBase(options, kPerTensorAffine, false, "HistogramObserver") {
  EMBER_CHECK(options.bins() > 0, "HistogramObserver", "bins must be positive, got ", options.bins());
  EMBER_CHECK(options.upsample_rate() > 0, "HistogramObserver", "upsample_rate must be positive, got ",
              options.upsample_rate());
  histogram = register_buffer("histogram", zeros({options.bins()}));
}

namespace {
// histogram's counts spread over a wider range (PyTorch's _combine_histograms): old bin i covers
// the fine positions [start + i * up, start + (i + 1) * up) and new bin j the positions
// [j * down, (j + 1) * down); each fine position carries 1/up of its old bin's count. Computed per
// old bin rather than on a bins * down buffer (PyTorch's), which a batch far wider than the range
// so far makes huge.
std::vector<double> spread(const float* old, int64_t bins, int64_t up, int64_t down, int64_t start) {
  std::vector<double> out(static_cast<size_t>(bins), 0.0);
  const int64_t last = bins * down - 1;
  for (int64_t i = 0; i < bins; ++i) {
    if (old[i] == 0) continue;
    const int64_t p0 = std::clamp<int64_t>(start + i * up, 0, last), p1 = std::clamp<int64_t>(start + (i + 1) * up - 1, 0, last);
    for (int64_t j = p0 / down; j <= p1 / down; ++j) {
      const int64_t count = std::min(p1 + 1, (j + 1) * down) - std::max(p0, j * down);
      out[static_cast<size_t>(j)] += static_cast<double>(old[i]) * static_cast<double>(count);
    }
  }
  for (double& v : out) v /= static_cast<double>(up);
  return out;
}
}  // namespace

Tensor HistogramObserverImpl::forward(const Tensor& x_orig) {
  if (x_orig.numel() == 0) return x_orig;
  NoGradGuard no_grad;
  const Tensor x = x_orig.detach().to(kFloat);
  const auto [lo_t, hi_t] = x.aminmax();
  const float lo = lo_t.item<float>(), hi = hi_t.item<float>();
  EMBER_CHECK(std::isfinite(lo) && std::isfinite(hi), "HistogramObserver", "the input of shape ", x.sizes(),
              " must be finite, got values in [", lo, ", ", hi, "]");
  const int64_t bins = options_.bins();
  EMBER_CHECK(histogram.numel() == bins, "HistogramObserver", "the histogram buffer has ", histogram.numel(),
              " bins, the observer ", bins, " (a state dict from an observer with other bins?)");
  const float min_v = min_val.item<float>(), max_v = max_val.item<float>();
  const bool unobserved_yet = min_v == kInf && max_v == -kInf;
  if (unobserved_yet || min_v == max_v) {
    // The first batch, or a range of one value so far: a histogram over the range. PyTorch 1.13
    // passes histc int(min) and int(max), which drops the values beyond the truncated bounds (all
    // but one bin's for data within (-1, 1)), and forgets the count of the one value seen so far;
    // Ember passes the range itself and keeps that count, in the bin where the value falls.
    const float new_lo = unobserved_yet ? lo : std::min(lo, min_v), new_hi = unobserved_yet ? hi : std::max(hi, max_v);
    Tensor fresh = histc(x, bins, new_lo, new_hi);
    if (!unobserved_yet) fresh += histc(full({1}, min_v), bins, new_lo, new_hi) * histogram.sum();
    histogram.copy_(fresh);
    min_val.fill_(new_lo);
    max_val.fill_(new_hi);
    return x_orig;
  }
  // PyTorch's _adjust_min_max, in float32: the new range is a whole number of the old range's
  // bins (split `up` times), starting at the new minimum.
  const int64_t up = options_.upsample_rate();
  const float cmin = std::min(lo, min_v);
  float cmax = std::max(hi, max_v);
  const float hist_bin_width = (max_v - min_v) / static_cast<float>(bins * up);
  const float old_width = static_cast<float>(bins) * hist_bin_width;
  const auto down = static_cast<int64_t>(std::ceil((cmax - cmin) / old_width));
  EMBER_CHECK(down >= 1 && down <= (int64_t{1} << 40), "HistogramObserver", "a batch with values in [", lo, ", ", hi,
              "] is too wide for the range so far [", min_v, ", ", max_v, "]");
  cmax = cmax + (static_cast<float>(down) * old_width - (cmax - cmin));
  const auto start = static_cast<int64_t>(std::nearbyint((min_v - cmin) / hist_bin_width));
  Tensor combined = histc(x, bins, cmin, cmax);
  float* c = combined.data_ptr<float>();
  const Tensor old = histogram.contiguous();
  const float* h = old.data_ptr<float>();
  if (cmin == min_v && cmax == max_v) {
    for (int64_t i = 0; i < bins; ++i) c[i] += h[i];
  } else {
    const std::vector<double> moved = spread(h, bins, up, down, start);
    for (int64_t i = 0; i < bins; ++i) c[i] += static_cast<float>(moved[static_cast<size_t>(i)]);
  }
  histogram.copy_(combined);
  min_val.fill_(cmin);
  max_val.fill_(cmax);
  return x_orig;
}

namespace {
// torch.div(a, b, rounding_mode='floor') on float32 (Python's floor division)
float floor_divide(float a, float b) {
  const float mod = std::fmod(a, b);
  float div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return std::copysign(0.0f, a / b);
  float f = std::floor(div);
  if (div - f > 0.5f) f += 1;
  return f;
}
// the L2 norm of values spread evenly over [begin, end] with the given density
float l2_norm(float begin, float end, float density) { return density * ((end * end * end - begin * begin * begin) / 3); }
}  // namespace

// PyTorch's _compute_quantization_error: the L2 error of quantizing the histogram with
// [start_bin, end_bin] mapped onto the dtype's 2^bits levels (float32 per bin, as PyTorch's
// tensors; the sum rounded to float32 as PyTorch's .sum()).
double HistogramObserverImpl::quantization_error(int64_t start_bin, int64_t end_bin) const {
  const int64_t bins = options_.bins();
  const double dst_nbins = dtype() == kQInt32 ? 4294967296.0 : 256.0;
  const double bin_width = (static_cast<double>(max_val.item<float>()) - static_cast<double>(min_val.item<float>())) /
                           static_cast<double>(bins);
  const double dst_width = bin_width * static_cast<double>(end_bin - start_bin + 1) / dst_nbins;
  if (dst_width == 0.0) return 0.0;
  const float w = static_cast<float>(bin_width), dw = static_cast<float>(dst_width);
  const float half = static_cast<float>(dst_width / 2), top = static_cast<float>(dst_nbins - 1);
  const float whole = l2_norm(static_cast<float>(-dst_width / 2), half, 1.0f);
  const Tensor hist = histogram.contiguous();
  const float* h = hist.data_ptr<float>();
  double sum = 0;
  for (int64_t i = 0; i < bins; ++i) {
    const float begin = static_cast<float>(i - start_bin) * w, end = begin + w;
    const float db = std::clamp(floor_divide(begin, dw), 0.0f, top);
    const float de = std::clamp(floor_divide(end, dw), 0.0f, top);
    const float density = h[i] / w;
    float norm = l2_norm(begin - (db + 0.5f) * dw, half, density);
    norm += (de - db - 1) * (density * whole);
    norm += l2_norm(static_cast<float>(-dst_width / 2), end - (de * dw + half), density);
    sum += norm;
  }
  return static_cast<float>(sum);
}

// PyTorch's _non_linear_param_search (caffe2's NormMinimization): narrow [min, max] from whichever
// end holds less of the histogram's mass, 1e-5 of it at a time, while the quantization error falls.
std::pair<float, float> HistogramObserverImpl::non_linear_param_search() const {
  const int64_t bins = options_.bins();
  const float min_v = min_val.item<float>(), max_v = max_val.item<float>();
  const float bin_width = (max_v - min_v) / static_cast<float>(bins);
  const Tensor hist = histogram.contiguous();
  const float* h = hist.data_ptr<float>();
  std::vector<float> csum(static_cast<size_t>(bins));
  double running = 0;
  for (int64_t i = 0; i < bins; ++i) {
    running += h[i];
    csum[static_cast<size_t>(i)] = static_cast<float>(running);
  }
  const double total = static_cast<float>(running);
  const double step = 1e-5;
  double alpha = 0, beta = 1, norm_min = std::numeric_limits<double>::infinity();
  int64_t start_bin = 0, end_bin = bins - 1;
  while (alpha < beta) {
    const double next_alpha = alpha + step, next_beta = beta - step;
    int64_t l = start_bin, r = end_bin;
    while (l < end_bin && csum[static_cast<size_t>(l)] < static_cast<float>(next_alpha * total)) ++l;
    while (r > start_bin && csum[static_cast<size_t>(r)] > static_cast<float>(next_beta * total)) --r;
    int64_t next_start = start_bin, next_end = end_bin;
    if (l - start_bin > end_bin - r) {
      next_start = l;
      alpha = next_alpha;
    } else {
      next_end = r;
      beta = next_beta;
    }
    if (next_start == start_bin && next_end == end_bin) continue;
    const double norm = quantization_error(next_start, next_end);
    if (norm > norm_min) break;
    norm_min = norm;
    start_bin = next_start;
    end_bin = next_end;
  }
  return {min_v + bin_width * static_cast<float>(start_bin), min_v + bin_width * static_cast<float>(end_bin + 1)};
}

std::tuple<Tensor, Tensor> HistogramObserverImpl::calculate_qparams() const {
  if (unobserved(min_val, max_val)) return default_qparams(qscheme_);
  EMBER_CHECK(histogram.numel() == options_.bins(), "HistogramObserver",
              "The number of bins in histogram should be equal to the number of bins supplied while making this "
              "observer (", histogram.numel(), " against ", options_.bins(), ")");
  const auto [lo, hi] = non_linear_param_search();
  return qparams_of(scalar_tensor(lo, TensorOptions().dtype(kFloat)), scalar_tensor(hi, TensorOptions().dtype(kFloat)));
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
void HistogramObserverImpl::pretty_print(std::ostream& os) const { print_observer(os, "HistogramObserver", *this); }

QConfig get_default_qconfig(const std::string& backend) {
  EMBER_CHECK(backend == "x86" || backend == "fbgemm", "get_default_qconfig",
              "backend must be \"x86\" or \"fbgemm\" (the others are not in Ember yet), got \"", backend, "\"");
  QConfig c;
  c.activation = [] {
    return std::static_pointer_cast<ObserverOrFakeQuantize>(
        std::make_shared<HistogramObserverImpl>(ObserverOptions().dtype(kQUInt8).reduce_range(true)));
  };
  c.weight = [] {
    return std::static_pointer_cast<ObserverOrFakeQuantize>(std::make_shared<PerChannelMinMaxObserverImpl>(
        ObserverOptions().dtype(kQInt8).qscheme(kPerChannelSymmetric)));
  };
  return c;
}

}  // namespace ember::quantization
