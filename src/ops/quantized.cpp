// Quantized tensors: quantize/dequantize, int_repr, the quantizer's accessors, the quantized forms
// of views, to (clone, contiguous) and cat, and fake quantization with its straight-through
// gradient. Rounding and clamping as PyTorch's CPU kernels (kernels/cpu/quantize.h).
#include <cmath>
#include <limits>

#include "dispatch/dispatch.h"
#include "ember/factory.h"
#include "ember/quantized.h"
#include "ember/reduce.h"
#include "ember/shape.h"
#include "kernels/cpu/quantize.h"
#include "ops/indexing_util.h"
#include "ops/quantized_util.h"

namespace ember {

std::string toString(QScheme s) {
  switch (s) {
    case kPerTensorAffine: return "per_tensor_affine";
    case kPerChannelAffine: return "per_channel_affine";
    case kPerTensorSymmetric: return "per_tensor_symmetric";
    case kPerChannelSymmetric: return "per_channel_symmetric";
    case kPerChannelAffineFloatQParams: return "per_channel_affine_float_qparams";
  }
  return "unknown";
}
std::ostream& operator<<(std::ostream& os, QScheme s) { return os << toString(s); }

namespace quantized {

int64_t qmin(ScalarType t) {
  return t == kQInt8 ? -128 : t == kQUInt8 ? 0 : std::numeric_limits<int32_t>::min();
}
int64_t qmax(ScalarType t) {
  return t == kQInt8 ? 127 : t == kQUInt8 ? 255 : std::numeric_limits<int32_t>::max();
}
ScalarType underlying_type(ScalarType t) { return t == kQInt8 ? kChar : t == kQUInt8 ? kByte : kInt; }

Tensor empty_quantized(IntArrayRef sizes, IntrusivePtr<Quantizer> q, MemoryFormat format) {
  Tensor t = make_empty(sizes, q->dtype, format);
  t.impl()->set_quantizer(std::move(q));
  return t;
}
Tensor raw_view(const Tensor& q) {
  const TensorImpl& i = *q.impl();
  return Tensor(IntrusivePtr<TensorImpl>::make(i.storage(), underlying_type(i.dtype()), i.sizes(), i.strides(),
                                               i.storage_offset()));
}
Tensor wrap(const Tensor& raw, IntrusivePtr<Quantizer> q) {
  const TensorImpl& i = *raw.impl();
  Tensor t(IntrusivePtr<TensorImpl>::make(i.storage(), q->dtype, i.sizes(), i.strides(), i.storage_offset()));
  t.impl()->set_quantizer(std::move(q));
  return t;
}
IntrusivePtr<Quantizer> per_tensor_quantizer(ScalarType qtype, double scale, int64_t zero_point) {
  auto q = IntrusivePtr<Quantizer>::make();
  q->qscheme = kPerTensorAffine;
  q->dtype = qtype;
  q->scale = scale;
  q->zero_point = zero_point;
  return q;
}

QParams choose_quantization_params(float min, float max, int64_t qmin, int64_t qmax, bool preserve_sparsity,
                                   bool reduce_range) {
  EMBER_CHECK(min <= max, "choose_qparams", "In ChooseQuantizationParams, min should be less than or equal to max (min ",
              min, ", max ", max, ")");
  if (reduce_range) {
    qmin /= 2;
    qmax /= 2;
  }
  if (min < 0 && max > 0 && preserve_sparsity) {
    const double symmetric_qmin = -((qmax - qmin) / 2 + 1);
    const double symmetric_qmax = (qmax - qmin) / 2;
    const double max_scale = std::max(std::fabs(min / symmetric_qmin), std::fabs(max / symmetric_qmax));
    min = static_cast<float>(max_scale * symmetric_qmin);
    max = static_cast<float>(max_scale * symmetric_qmax);
  }
  min = std::min(min, 0.f);
  max = std::max(max, 0.f);
  double scale = (static_cast<double>(max) - min) / static_cast<double>(qmax - qmin);
  if (static_cast<float>(scale) == 0.0f || std::isinf(1.0f / static_cast<float>(scale))) scale = 0.1;
  constexpr float kSmallScale = 6.1e-5f;  // PyTorch's SMALL_SCALE_THRESHOLD
  if (scale < kSmallScale) {
    const float org_scale = static_cast<float>(scale);
    scale = kSmallScale;
    if (min == 0.0f) {
      max = kSmallScale * static_cast<float>(qmax - qmin);
    } else if (max == 0.0f) {
      min = -kSmallScale * static_cast<float>(qmax - qmin);
    } else {
      const float amplifier = kSmallScale / org_scale;
      min *= amplifier;
      max *= amplifier;
    }
  }
  const double zp_from_min = static_cast<double>(qmin) - min / scale;
  const double zp_from_max = static_cast<double>(qmax) - max / scale;
  const double zp_from_min_error = std::abs(static_cast<double>(qmin)) - std::abs(min / scale);
  const double zp_from_max_error = std::abs(static_cast<double>(qmax)) - std::abs(max / scale);
  double initial = zp_from_min_error < zp_from_max_error ? zp_from_min : zp_from_max;
  if (min < 0 && max > 0 && preserve_sparsity) initial = static_cast<double>(qmin + qmax) / 2;
  int64_t zp;
  if (initial < static_cast<double>(qmin)) {
    zp = qmin;
  } else if (initial > static_cast<double>(qmax)) {
    zp = qmax;
  } else {
    zp = static_cast<int64_t>(std::nearbyint(initial));
  }
  return {scale, zp};
}

}  // namespace quantized

namespace {
using quantized::qmax;
using quantized::qmin;

void check_qtype(const char* op, ScalarType dtype) {
  EMBER_CHECK(is_quantized_type(dtype), op, "expected a quantized dtype (QInt8, QUInt8 or QInt32), got ", dtype);
}
void check_scale(const char* op, double scale) {
  EMBER_CHECK(std::isfinite(scale) && scale > 0, op, "scale must be finite and positive, got ", scale);
}
void check_zero_point(const char* op, int64_t zp, ScalarType dtype) {
  EMBER_CHECK(zp >= qmin(dtype) && zp <= qmax(dtype), op, "zero_point ", zp, " is out of the range of ", dtype, " [",
              qmin(dtype), ", ", qmax(dtype), "]");
}
void check_float_input(const char* op, const Tensor& self) {
  EMBER_CHECK(self.dtype() == kFloat, op, "Quantize only works on Float Tensor, got ", self.dtype());
}
const Quantizer& quantizer_of(const char* op, const Tensor& self) {
  EMBER_CHECK(self.is_quantized(), op, "expected a quantized tensor, got a tensor of dtype ", self.dtype());
  return *self.impl()->quantizer();
}
bool is_per_channel(QScheme s) { return s == kPerChannelAffine || s == kPerChannelAffineFloatQParams; }

// The per-channel parameters as vectors, checked against self's axis.
struct ChannelParams {
  std::vector<double> scales;
  std::vector<int64_t> zero_points;
  int64_t axis;
};
ChannelParams channel_params(const char* op, const Tensor& self, const Tensor& scales, const Tensor& zero_points,
                             int64_t axis, ScalarType dtype) {
  EMBER_CHECK(axis >= 0 && axis < self.dim(), op,
              "Channel axis out of range in per channel affine quantization. Got: ", axis, " Expected: [0, ",
              self.dim(), ")");
  EMBER_CHECK(scales.dim() == 1 && is_floating_type(scales.dtype()), op,
              "scales must be a 1-D floating-point tensor, got ", scales.dtype(), " of size ", scales.sizes());
  EMBER_CHECK(zero_points.dim() == 1 && is_integral_type(zero_points.dtype(), false), op,
              "zero_points must be a 1-D integer tensor, got ", zero_points.dtype(), " of size ", zero_points.sizes());
  const int64_t channels = self.size(axis);
  EMBER_CHECK(scales.numel() == channels, op, "length of scales (", scales.numel(),
              ") must equal to the number of channels (size ", channels, " of axis ", axis, ")");
  EMBER_CHECK(zero_points.numel() == channels, op, "length of zero_points (", zero_points.numel(),
              ") must equal to the number of channels (size ", channels, " of axis ", axis, ")");
  ChannelParams p{{}, {}, axis};
  const Tensor s = scales.to(kDouble).contiguous(), z = zero_points.to(kLong).contiguous();
  p.scales.assign(s.data_ptr<double>(), s.data_ptr<double>() + channels);
  p.zero_points.assign(z.data_ptr<int64_t>(), z.data_ptr<int64_t>() + channels);
  for (int64_t c = 0; c < channels; ++c) {
    check_scale(op, p.scales[c]);
    check_zero_point(op, p.zero_points[c], dtype);
  }
  return p;
}

IntrusivePtr<Quantizer> per_channel_quantizer(ScalarType qtype, ChannelParams&& p) {
  auto q = IntrusivePtr<Quantizer>::make();
  q->qscheme = kPerChannelAffine;
  q->dtype = qtype;
  q->scales = std::move(p.scales);
  q->zero_points = std::move(p.zero_points);
  q->axis = p.axis;
  return q;
}

// Quantizes float32 self into a new tensor carrying q, in self's memory format.
Tensor quantize_with(const Tensor& self, IntrusivePtr<Quantizer> q) {
  const MemoryFormat format = self.suggest_memory_format();
  const Tensor src = self.contiguous(format);
  Tensor out = quantized::empty_quantized(self.sizes(), q, format);
  if (out.numel() == 0) return out;
  if (q->qscheme == kPerTensorAffine) {
    kernels::quantize_per_tensor(src.data_ptr<float>(), out.data_ptr(), out.numel(), q->dtype, q->scale,
                                 q->zero_point);
  } else {
    kernels::quantize_per_channel(src.data_ptr<float>(), out.data_ptr(), out.numel(), q->dtype, q->scales.data(),
                                  q->zero_points.data(), out.size(q->axis), out.stride(q->axis));
  }
  return out;
}

struct QuantizePerTensorOp {
  static constexpr const char* name = "quantize_per_tensor";
  static constexpr bool differentiable = false;  // quantized results carry no gradient
  static Tensor run(const Tensor& self, double scale, int64_t zero_point, ScalarType dtype) {
    check_float_input(name, self);
    check_qtype(name, dtype);
    check_scale(name, scale);
    check_zero_point(name, zero_point, dtype);
    return quantize_with(self, quantized::per_tensor_quantizer(dtype, scale, zero_point));
  }
};

struct QuantizePerChannelOp {
  static constexpr const char* name = "quantize_per_channel";
  static constexpr bool differentiable = false;  // quantized results carry no gradient
  static Tensor run(const Tensor& self, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                    ScalarType dtype) {
    check_float_input(name, self);
    check_qtype(name, dtype);
    return quantize_with(self, per_channel_quantizer(dtype, channel_params(name, self, scales, zero_points, axis, dtype)));
  }
};

struct DequantizeOp {
  static constexpr const char* name = "dequantize";
  static constexpr bool quantized = true;
  static constexpr bool composite = true;  // a float32 input is returned as it is, its graph kept
  static Tensor run(const Tensor& self) {
    if (!self.is_quantized()) {  // PyTorch: dequantize of a float tensor is itself
      EMBER_CHECK(self.dtype() == kFloat, name, "expected a quantized or float32 tensor, got ", self.dtype());
      return self;
    }
    const Quantizer& q = *self.impl()->quantizer();
    const Tensor src = self.is_non_overlapping_and_dense() ? self : self.contiguous(self.suggest_memory_format());
    Tensor out = make_empty_strided(src.sizes(), src.strides(), kFloat);
    if (out.numel() == 0) return out;
    if (q.qscheme == kPerTensorAffine) {
      kernels::dequantize_per_tensor(src.data_ptr(), out.data_ptr<float>(), out.numel(), q.dtype, q.scale, q.zero_point);
    } else {
      kernels::dequantize_per_channel(src.data_ptr(), out.data_ptr<float>(), out.numel(), q.dtype, q.scales.data(),
                                      q.zero_points.data(), src.size(q.axis), src.stride(q.axis));
    }
    return out;
  }
};

// Dense quantized tensors are stored from their storage offset on in their memory order: the
// kernels above read and write data_ptr() linearly over numel elements.
struct IntReprOp {
  static constexpr const char* name = "int_repr";
  static constexpr bool quantized = true;
  static constexpr bool differentiable = false;
  static Tensor run(const Tensor& self) {
    quantizer_of(name, self);
    return quantized::raw_view(self).clone();
  }
};

struct MakePerTensorQuantizedOp {
  static constexpr const char* name = "_make_per_tensor_quantized_tensor";
  static constexpr bool differentiable = false;  // quantized results carry no gradient
  static Tensor run(const Tensor& self, double scale, int64_t zero_point) {
    const ScalarType qtype = self.dtype() == kChar ? kQInt8 : self.dtype() == kByte ? kQUInt8 : self.dtype() == kInt ? kQInt32 : ScalarType::Undefined;
    EMBER_CHECK(qtype != ScalarType::Undefined, name, "expected an int8, uint8 or int32 tensor, got ", self.dtype());
    check_scale(name, scale);
    check_zero_point(name, zero_point, qtype);
    return quantized::wrap(self.clone(), quantized::per_tensor_quantizer(qtype, scale, zero_point));
  }
};

struct MakePerChannelQuantizedOp {
  static constexpr const char* name = "_make_per_channel_quantized_tensor";
  static constexpr bool differentiable = false;  // quantized results carry no gradient
  static Tensor run(const Tensor& self, const Tensor& scales, const Tensor& zero_points, int64_t axis) {
    const ScalarType qtype = self.dtype() == kChar ? kQInt8 : self.dtype() == kByte ? kQUInt8 : self.dtype() == kInt ? kQInt32 : ScalarType::Undefined;
    EMBER_CHECK(qtype != ScalarType::Undefined, name, "expected an int8, uint8 or int32 tensor, got ", self.dtype());
    return quantized::wrap(self.clone(), per_channel_quantizer(qtype, channel_params(name, self, scales, zero_points,
                                                                                      axis, qtype)));
  }
};

// ---- fake quantization ----------------------------------------------------------------------

void check_fake_quant(const char* op, const Tensor& self, int64_t quant_min, int64_t quant_max) {
  EMBER_CHECK(self.dtype() == kFloat, op, "expected a float32 input, got ", self.dtype());
  EMBER_CHECK(quant_min <= quant_max, op, "`quant_min` should be less than or equal to `quant_max`.");
}

// The fake-quantized values and, with want_mask, the straight-through mask (bool), in self's
// memory format.
struct FakeQuant {
  float scale = 1;
  int64_t zero_point = 0;
  std::vector<float> scales;  // per channel
  std::vector<int64_t> zero_points;
  int64_t axis = -1;
  int64_t quant_min = 0, quant_max = 0;
  std::pair<Tensor, Tensor> apply(const Tensor& self, bool want_mask) const {
    const MemoryFormat format = self.suggest_memory_format();
    const Tensor src = self.contiguous(format);
    Tensor out = make_empty(self.sizes(), kFloat, format);
    Tensor mask = want_mask ? make_empty(self.sizes(), kBool, format) : Tensor();
    if (out.numel() == 0) return {out, mask};
    uint8_t* m = want_mask ? static_cast<uint8_t*>(mask.data_ptr()) : nullptr;
    if (axis < 0) {
      kernels::fake_quantize_per_tensor(src.data_ptr<float>(), out.data_ptr<float>(), m, out.numel(), scale, zero_point,
                                        quant_min, quant_max);
    } else {
      kernels::fake_quantize_per_channel(src.data_ptr<float>(), out.data_ptr<float>(), m, out.numel(), scales.data(),
                                         zero_points.data(), out.size(axis), out.stride(axis), quant_min, quant_max);
    }
    return {out, mask};
  }
};

struct FakeQuantizePerTensorOp {
  static constexpr const char* name = "fake_quantize_per_tensor_affine";
  static FakeQuant params(const Tensor& self, double scale, int64_t zero_point, int64_t quant_min, int64_t quant_max) {
    check_fake_quant(name, self, quant_min, quant_max);
    EMBER_CHECK(zero_point >= quant_min && zero_point <= quant_max, name,
                "`zero_point` must be between `quant_min` and `quant_max`.");
    FakeQuant f;
    f.scale = static_cast<float>(scale);
    f.zero_point = zero_point;
    f.quant_min = quant_min;
    f.quant_max = quant_max;
    return f;
  }
  static Tensor run(const Tensor& self, double scale, int64_t zero_point, int64_t quant_min, int64_t quant_max) {
    return params(self, scale, zero_point, quant_min, quant_max).apply(self, false).first;
  }
  // FakeQuantizePerTensorAffineCachemaskBackward0 -- self: grad * mask
  static void derivative(autograd::Derivative& d, const Tensor& self, double scale, int64_t zero_point,
                         int64_t quant_min, int64_t quant_max) {
    d.name("FakeQuantizePerTensorAffineCachemaskBackward0");
    d.grad(self, [s = d.save(self), f = params(self, scale, zero_point, quant_min, quant_max)](const auto& c) {
      return c.grad() * f.apply(c[s], true).second;
    });
  }
};

struct FakeQuantizePerChannelOp {
  static constexpr const char* name = "fake_quantize_per_channel_affine";
  static FakeQuant params(const Tensor& self, const Tensor& scale, const Tensor& zero_point, int64_t axis,
                          int64_t quant_min, int64_t quant_max) {
    check_fake_quant(name, self, quant_min, quant_max);
    EMBER_CHECK(axis >= 0 && axis < self.dim(), name,
                "`axis` must be between 0 and number of dimensions of input, got ", axis, " for ", self.dim(),
                " dims");
    EMBER_CHECK(scale.dim() == 1 && zero_point.dim() == 1 && scale.numel() == self.size(axis) &&
                    zero_point.numel() == self.size(axis),
                name, "dimensions of scale and zero-point are not consistent with input tensor: scale ", scale.sizes(),
                ", zero_point ", zero_point.sizes(), ", input ", self.sizes(), ", axis ", axis);
    EMBER_CHECK(is_floating_type(scale.dtype()), name, "scale must be a floating-point tensor, got ", scale.dtype());
    EMBER_CHECK(is_integral_type(zero_point.dtype(), false), name,
                "zero_point must be an integer tensor (Int or Long), got ", zero_point.dtype());
    FakeQuant f;
    const Tensor s = scale.to(kFloat).contiguous(), z = zero_point.to(kLong).contiguous();
    f.scales.assign(s.data_ptr<float>(), s.data_ptr<float>() + s.numel());
    f.zero_points.assign(z.data_ptr<int64_t>(), z.data_ptr<int64_t>() + z.numel());
    for (int64_t v : f.zero_points)
      EMBER_CHECK(v >= quant_min && v <= quant_max, name, "`zero_point` must be between `quant_min` and `quant_max`.");
    f.axis = axis;
    f.quant_min = quant_min;
    f.quant_max = quant_max;
    return f;
  }
  static Tensor run(const Tensor& self, const Tensor& scale, const Tensor& zero_point, int64_t axis, int64_t quant_min,
                    int64_t quant_max) {
    return params(self, scale, zero_point, axis, quant_min, quant_max).apply(self, false).first;
  }
  // FakeQuantizePerChannelAffineCachemaskBackward0 -- self: grad * mask
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& scale, const Tensor& zero_point,
                         int64_t axis, int64_t quant_min, int64_t quant_max) {
    d.name("FakeQuantizePerChannelAffineCachemaskBackward0");
    d.grad(self, [s = d.save(self), f = params(self, scale, zero_point, axis, quant_min, quant_max)](const auto& c) {
      return c.grad() * f.apply(c[s], true).second;
    });
  }
};

}  // namespace

// ---- views, to, cat ---------------------------------------------------------------------------

IntrusivePtr<Quantizer> view_quantizer(const Tensor& base, IntArrayRef sizes, IntArrayRef strides) {
  const IntrusivePtr<Quantizer>& q = base.impl()->quantizer();
  if (!is_per_channel(q->qscheme)) return q;
  const int64_t channels = base.size(q->axis), stride = base.stride(q->axis);
  int64_t found = -1, matches = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == channels && strides[d] == stride) {
      found = static_cast<int64_t>(d);
      ++matches;
    }
  }
  if (matches != 1 && channels == 1)
    return quantized::per_tensor_quantizer(q->dtype, q->scales[0], q->zero_points[0]);
  EMBER_CHECK(matches == 1, "view", "a view of a per-channel quantized tensor must keep its channel axis (dim ",
              q->axis, " of size ", channels, " and stride ", stride, "); the view has sizes ", sizes, " and strides ",
              strides);
  if (found == q->axis) return q;
  auto moved = IntrusivePtr<Quantizer>::make();
  moved->qscheme = q->qscheme;
  moved->dtype = q->dtype;
  moved->scales = q->scales;
  moved->zero_points = q->zero_points;
  moved->axis = found;
  return moved;
}

namespace quantized {

IntrusivePtr<Quantizer> subtensor_quantizer(const Tensor& self, int64_t dim, int64_t start, int64_t end, int64_t step,
                                            bool is_select) {
  const IntrusivePtr<Quantizer>& q = self.impl()->quantizer();
  if (!is_per_channel(q->qscheme)) return q;
  auto sub = IntrusivePtr<Quantizer>::make();
  sub->qscheme = q->qscheme;
  sub->dtype = q->dtype;
  sub->axis = q->axis;
  if (dim == q->axis) {
    for (int64_t c = start; is_select ? c == start : c < end; c += step) {
      sub->scales.push_back(q->scales[c]);
      sub->zero_points.push_back(q->zero_points[c]);
    }
  } else {
    sub->scales = q->scales;
    sub->zero_points = q->zero_points;
    if (is_select && dim < q->axis) --sub->axis;
  }
  if (sub->scales.size() == 1 && (is_select || dim == q->axis))
    return per_tensor_quantizer(q->dtype, sub->scales[0], sub->zero_points[0]);
  return sub;
}

Tensor to(const Tensor& self, ScalarType dtype, bool copy, std::optional<MemoryFormat> format) {
  EMBER_CHECK(dtype == self.dtype(), "to", "a quantized tensor (", self.dtype(), ") converts to ", dtype,
              " only through dequantize()");
  const MemoryFormat f = format.value_or(MemoryFormat::Preserve);
  if (!copy && (f == MemoryFormat::Preserve || self.is_contiguous(f))) return self;
  return wrap(raw_view(self).to(underlying_type(dtype), false, true, f), self.impl()->quantizer());
}

Tensor cat(TensorList tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), "cat", "expected a non-empty list of Tensors");
  const Tensor& first = tensors[0];
  for (const Tensor& t : tensors)
    EMBER_CHECK(t.is_quantized() && t.dtype() == first.dtype(), "cat",
                "the tensors must all be quantized with the same dtype: got ", first.dtype(), " and ", t.dtype());
  const IntrusivePtr<Quantizer>& q = first.impl()->quantizer();
  EMBER_CHECK(q->qscheme == kPerTensorAffine, "cat", "Only per-tensor quantization is supported in 'cat'!, got ",
              q->qscheme);
  bool shared = true;
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) {
    EMBER_CHECK(t.impl()->quantizer()->qscheme == kPerTensorAffine, "cat",
                "Only per-tensor quantization is supported in 'cat'!, got ", t.impl()->quantizer()->qscheme);
    shared = shared && t.impl()->quantizer()->same_as(*q);
  }
  // The result has the first tensor's parameters: the others' integers are copied when they
  // share them, else requantized from their values (PyTorch's cat_quantized_cpu).
  for (const Tensor& t : tensors) parts.push_back(shared ? raw_view(t) : t.dequantize());
  const Tensor joined = ember::cat(parts, dim);
  if (shared) return wrap(joined, q);
  return quantize_per_tensor(joined, q->scale, q->zero_point, q->dtype);
}

namespace {
int64_t relu_zero_point(const Tensor& self) {
  const IntrusivePtr<Quantizer>& q = self.impl()->quantizer();
  EMBER_CHECK(q->qscheme == kPerTensorAffine, "relu", "quantized relu takes tensors quantized per tensor, got ",
              q->qscheme);
  return q->zero_point;
}
}  // namespace
Tensor relu(const Tensor& self) {
  const int64_t zp = relu_zero_point(self);
  return wrap(raw_view(self).clamp_min(zp), self.impl()->quantizer());
}
Tensor& relu_(Tensor& self) {
  raw_view(self).clamp_min_(relu_zero_point(self));
  return self;
}

}  // namespace quantized

// ---- public functions and Tensor methods -------------------------------------------------------

Tensor quantize_per_tensor(const Tensor& self, double scale, int64_t zero_point, ScalarType dtype) {
  return dispatch::call<QuantizePerTensorOp>(self, scale, zero_point, dtype);
}
Tensor quantize_per_tensor(const Tensor& self, const Tensor& scale, const Tensor& zero_point, ScalarType dtype) {
  EMBER_CHECK(scale.numel() == 1 && zero_point.numel() == 1, "quantize_per_tensor",
              "scale and zero_point must be one-element tensors, got ", scale.sizes(), " and ", zero_point.sizes());
  return quantize_per_tensor(self, scale.item<double>(), zero_point.item<int64_t>(), dtype);
}
Tensor quantize_per_channel(const Tensor& self, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                            ScalarType dtype) {
  return dispatch::call<QuantizePerChannelOp>(self, scales, zero_points, axis, dtype);
}
Tensor dequantize(const Tensor& self) { return dispatch::call<DequantizeOp>(self); }
std::vector<Tensor> dequantize(TensorList tensors) {
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(dequantize(t));
  return out;
}
Tensor int_repr(const Tensor& self) { return dispatch::call<IntReprOp>(self); }
Tensor _make_per_tensor_quantized_tensor(const Tensor& self, double scale, int64_t zero_point) {
  return dispatch::call<MakePerTensorQuantizedOp>(self, scale, zero_point);
}
Tensor _make_per_channel_quantized_tensor(const Tensor& self, const Tensor& scales, const Tensor& zero_points,
                                          int64_t axis) {
  return dispatch::call<MakePerChannelQuantizedOp>(self, scales, zero_points, axis);
}
Tensor fake_quantize_per_tensor_affine(const Tensor& self, double scale, int64_t zero_point, int64_t quant_min,
                                       int64_t quant_max) {
  return dispatch::call<FakeQuantizePerTensorOp>(self, scale, zero_point, quant_min, quant_max);
}
Tensor fake_quantize_per_tensor_affine(const Tensor& self, const Tensor& scale, const Tensor& zero_point,
                                       int64_t quant_min, int64_t quant_max) {
  EMBER_CHECK(scale.numel() == 1 && zero_point.numel() == 1, "fake_quantize_per_tensor_affine",
              "scale and zero_point must be one-element tensors, got ", scale.sizes(), " and ", zero_point.sizes());
  return fake_quantize_per_tensor_affine(self, scale.item<double>(), zero_point.item<int64_t>(), quant_min, quant_max);
}
Tensor fake_quantize_per_channel_affine(const Tensor& self, const Tensor& scale, const Tensor& zero_point,
                                        int64_t axis, int64_t quant_min, int64_t quant_max) {
  return dispatch::call<FakeQuantizePerChannelOp>(self, scale, zero_point, axis, quant_min, quant_max);
}

std::tuple<double, int64_t> _choose_qparams_per_tensor(const Tensor& self, bool reduce_range) {
  EMBER_CHECK(self.dtype() == kFloat, "_choose_qparams_per_tensor", "expected a float32 tensor, got ", self.dtype());
  float lo = 0, hi = 0;
  if (self.numel() > 0) {
    lo = self.min().item<float>();
    hi = self.max().item<float>();
  }
  const quantized::QParams p = quantized::choose_quantization_params(lo, hi, 0, 255, false, reduce_range);
  return {p.scale, p.zero_point};
}

double q_scale(const Tensor& self) { return self.q_scale(); }
int64_t q_zero_point(const Tensor& self) { return self.q_zero_point(); }
Tensor q_per_channel_scales(const Tensor& self) { return self.q_per_channel_scales(); }
Tensor q_per_channel_zero_points(const Tensor& self) { return self.q_per_channel_zero_points(); }
int64_t q_per_channel_axis(const Tensor& self) { return self.q_per_channel_axis(); }

QScheme Tensor::qscheme() const { return quantizer_of("qscheme", *this).qscheme; }
double Tensor::q_scale() const {
  const Quantizer& q = quantizer_of("q_scale", *this);
  EMBER_CHECK(q.qscheme == kPerTensorAffine, "q_scale", "Expected quantizer to be PerTensorAffine, got ", q.qscheme);
  return q.scale;
}
int64_t Tensor::q_zero_point() const {
  const Quantizer& q = quantizer_of("q_zero_point", *this);
  EMBER_CHECK(q.qscheme == kPerTensorAffine, "q_zero_point", "Expected quantizer to be PerTensorAffine, got ",
              q.qscheme);
  return q.zero_point;
}
Tensor Tensor::q_per_channel_scales() const {
  const Quantizer& q = quantizer_of("q_per_channel_scales", *this);
  EMBER_CHECK(is_per_channel(q.qscheme), "q_per_channel_scales", "Expected quantizer to be PerChannelAffine, got ",
              q.qscheme);
  return tensor(q.scales, TensorOptions().dtype(kDouble));
}
Tensor Tensor::q_per_channel_zero_points() const {
  const Quantizer& q = quantizer_of("q_per_channel_zero_points", *this);
  EMBER_CHECK(is_per_channel(q.qscheme), "q_per_channel_zero_points",
              "Expected quantizer to be PerChannelAffine, got ", q.qscheme);
  return tensor(q.zero_points, TensorOptions().dtype(kLong));
}
int64_t Tensor::q_per_channel_axis() const {
  const Quantizer& q = quantizer_of("q_per_channel_axis", *this);
  EMBER_CHECK(is_per_channel(q.qscheme), "q_per_channel_axis", "Expected quantizer to be PerChannelAffine, got ",
              q.qscheme);
  return q.axis;
}
Tensor Tensor::int_repr() const { return ember::int_repr(*this); }
Tensor Tensor::dequantize() const { return ember::dequantize(*this); }

}  // namespace ember
