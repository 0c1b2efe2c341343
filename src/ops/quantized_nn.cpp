// The quantized forms of nn ops on per-tensor quint8/qint8 tensors, with PyTorch 1.13's integer
// results: pooling and clamp keep the input's parameters; sigmoid and hardsigmoid have fixed
// output parameters; hardswish, batch_norm2d, add, mul and cat requantize to given ones. The
// ordinary op structs (pool.cpp, pointwise.cpp, pointwise_unary.cpp) send quantized inputs here;
// the requantizing ones are their own ops (torch.ops.quantized.*). docs/quantization.md.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "dispatch/dispatch.h"
#include "ember/pointwise.h"
#include "ember/quantized.h"
#include "ember/shape.h"
#include "ops/quantized_util.h"

namespace ember::quantized {
namespace {

// The quantizer of an input these ops take: quint8 or qint8, per tensor.
const Quantizer& per_tensor_8bit(const char* op, const Tensor& t) {
  EMBER_CHECK(t.is_quantized(), op, "expected a quantized tensor (quint8 or qint8), got a tensor of dtype ",
              t.dtype());
  const Quantizer& q = *t.impl()->quantizer();
  EMBER_CHECK(q.qscheme == kPerTensorAffine, op, "expected a tensor quantized per tensor (per_tensor_affine), got ",
              q.qscheme);
  EMBER_CHECK(q.dtype == kQUInt8 || q.dtype == kQInt8, op, "expected a quint8 or qint8 tensor, got ", q.dtype);
  return q;
}

void check_output_qparams(const char* op, ScalarType dtype, double scale, int64_t zero_point) {
  EMBER_CHECK(std::isfinite(scale) && scale > 0, op, "the output scale must be finite and positive, got ", scale);
  EMBER_CHECK(zero_point >= qmin(dtype) && zero_point <= qmax(dtype), op, "the output zero_point ", zero_point,
              " is out of the range of ", dtype, " [", qmin(dtype), ", ", qmax(dtype), "]");
}

template <class T>
T saturate(int64_t v) {
  return static_cast<T>(std::clamp<int64_t>(v, std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max()));
}
// nearbyint(t) as an integer, far-out values (an extreme output scale) and NaN kept in range so
// that the conversion is defined; saturate then clamps them to the dtype's.
int64_t round_to_int(float t) {
  constexpr float kLimit = 1e12f;
  const float r = std::nearbyint(t);
  return static_cast<int64_t>(r >= -kLimit ? std::min(r, kLimit) : -kLimit);
}

// Calls f.template operator()<T>() with T the integer type storing qtype.
template <class F>
decltype(auto) with_int_type(ScalarType qtype, const F& f) {
  if (qtype == kQUInt8) return f.template operator()<uint8_t>();
  return f.template operator()<int8_t>();
}

// PyTorch's vectorized dequantization: fma(q, scale, -zero_point * scale) in float.
struct Dequant {
  float scale, premul;
  Dequant(double s, int64_t zp) : scale(static_cast<float>(s)), premul(static_cast<float>(-zp) * scale) {}
  float operator()(float q) const { return std::fma(q, scale, premul); }
};
// PyTorch's vectorized quantization: zero_point + nearbyint(x * inv_scale), saturated. Its kernels
// take inv_scale as float(1 / scale) (hardswish) or 1.0f / float(scale) (add), which differ in the
// last bit for a few scales.
struct Quant {
  float inv_scale;
  int64_t zero_point;
  Quant(float inv, int64_t zp) : inv_scale(inv), zero_point(zp) {}
  template <class T>
  T to(float x) const {
    return saturate<T>(zero_point + round_to_int(x * inv_scale));
  }
};

// out = Quant(f(Dequant(in))) elementwise over self's memory order, into a tensor carrying q.
template <class F>
Tensor requantize_unary(const Tensor& self, const Quantizer& in, IntrusivePtr<Quantizer> out_q, const F& f) {
  const MemoryFormat format = self.suggest_memory_format();
  const Tensor src = self.contiguous(format);
  Tensor out = empty_quantized(self.sizes(), out_q, format);
  const Dequant dq(in.scale, in.zero_point);
  const Quant qu(static_cast<float>(1.0 / out_q->scale), out_q->zero_point);
  with_int_type(in.dtype, [&]<class T>() {
    const T* x = static_cast<const T*>(src.data_ptr());
    T* y = static_cast<T*>(out.data_ptr());
    parallel_for(0, out.numel(), 1 << 14, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = qu.template to<T>(f(dq(static_cast<float>(x[i]))));
    });
  });
  return out;
}

// The fixed output parameters of sigmoid and hardsigmoid: [0, 1] over the whole integer range.
IntrusivePtr<Quantizer> unit_interval_quantizer(ScalarType qtype) {
  return per_tensor_quantizer(qtype, 1.0 / 256, qtype == kQInt8 ? -128 : 0);
}

// A float tensor of dq(t's integers), in t's layout.
Tensor dequantize_fma(const Tensor& t, ScalarType qtype, const Dequant& dq) {
  const MemoryFormat format = t.suggest_memory_format();
  const Tensor src = t.contiguous(format);
  Tensor out = make_empty(t.sizes(), kFloat, format);
  with_int_type(qtype, [&]<class T>() {
    const T* x = static_cast<const T*>(src.data_ptr());
    float* y = out.data_ptr<float>();
    for (int64_t i = 0, n = out.numel(); i < n; ++i) y[i] = dq(static_cast<float>(x[i]));
  });
  return out;
}

// quantized::add/mul (and their _relu forms): both inputs per tensor of one dtype, broadcast to
// each other (MobileNetV3's squeeze-excitation multiplies a [N, C, 1, 1] scale by the [N, C, H, W]
// input), the result quantized to (scale, zero_point) in qa's layout, as PyTorch's kernels compute
// it: add dequantizes (fma), sums and quantizes with 1.0f / float(scale) (qadd_kernel); mul
// requantizes the product of the integers, zp + nearbyint((qa - za) * (qb - zb) * m) with
// m = float(sa) * float(sb) * (1.0f / float(scale)) (qmul_kernel), the product of two differences
// (each within +-255) exact in float.
Tensor binary_requant(const char* op, const Tensor& qa, const Tensor& qb, double scale, int64_t zero_point, bool relu,
                      bool is_mul) {
  const Quantizer& a = per_tensor_8bit(op, qa);
  const Quantizer& b = per_tensor_8bit(op, qb);
  EMBER_CHECK(a.dtype == b.dtype, op, "Both inputs to ", op, " must have the same type, got ", a.dtype, " and ",
              b.dtype);
  check_output_qparams(op, a.dtype, scale, zero_point);
  const DimVector shape = infer_size(qa.sizes(), qb.sizes(), op);
  const float inv_scale = 1.0f / static_cast<float>(scale);
  const Tensor da = dequantize_fma(qa, a.dtype, Dequant(is_mul ? 1.0 : a.scale, a.zero_point));
  const Tensor db = dequantize_fma(qb, b.dtype, Dequant(is_mul ? 1.0 : b.scale, b.zero_point));
  Tensor c = is_mul ? ember::mul(da, db) : ember::add(da, db);
  const MemoryFormat format = qa.suggest_memory_format();
  c = c.contiguous(format);
  auto q = per_tensor_quantizer(a.dtype, scale, zero_point);
  Tensor out = empty_quantized(shape.ref(), q, format);
  const Quant qu(is_mul ? static_cast<float>(a.scale) * static_cast<float>(b.scale) * inv_scale : inv_scale,
                 zero_point);
  with_int_type(a.dtype, [&]<class T>() {
    const float* x = c.data_ptr<float>();
    T* y = static_cast<T*>(out.data_ptr());
    for (int64_t i = 0, n = out.numel(); i < n; ++i) y[i] = qu.template to<T>(relu ? std::max(x[i], 0.0f) : x[i]);
  });
  return out;
}

struct QuantizedAddOp {
  static constexpr const char* name = "quantized::add";
  static constexpr bool quantized = true;
  static constexpr bool differentiable = false;
  static Tensor run(const Tensor& qa, const Tensor& qb, double scale, int64_t zero_point, bool relu) {
    return binary_requant(relu ? "quantized::add_relu" : name, qa, qb, scale, zero_point, relu, false);
  }
};
struct QuantizedMulOp {
  static constexpr const char* name = "quantized::mul";
  static constexpr bool quantized = true;
  static constexpr bool differentiable = false;
  static Tensor run(const Tensor& qa, const Tensor& qb, double scale, int64_t zero_point, bool relu) {
    return binary_requant(relu ? "quantized::mul_relu" : name, qa, qb, scale, zero_point, relu, true);
  }
};

// The integers of qa (a copy, in its layout) under new parameters.
Tensor with_parameters(const Tensor& qa, ScalarType dtype, double scale, int64_t zero_point) {
  return wrap(raw_view(qa).clone(qa.suggest_memory_format()), per_tensor_quantizer(dtype, scale, zero_point));
}

// quantized::add_scalar: x + c with c_q = nearbyint(c / s). When z - c_q is a valid zero point
// the integers stay and the zero point becomes it; otherwise the result's range is [x's min + c,
// x's max + c] again over the whole integer range (scale s', zero point at the end that
// overflowed) and the integers are requantized: zp' + nearbyint((q - z + c_q) * float(s / s')).
struct QuantizedAddScalarOp {
  static constexpr const char* name = "quantized::add_scalar";
  static constexpr bool quantized = true;
  static constexpr bool differentiable = false;
  static Tensor run(const Tensor& qa, double other) {
    const Quantizer& q = per_tensor_8bit(name, qa);
    EMBER_CHECK(std::isfinite(other), name, "the scalar must be finite, got ", other);
    const double s = q.scale;
    const int64_t z = q.zero_point, lo = qmin(q.dtype), hi = qmax(q.dtype);
    const int64_t c_q = static_cast<int64_t>(std::nearbyint(std::clamp(other / s, -1e15, 1e15)));
    if (z - c_q >= lo && z - c_q <= hi) return with_parameters(qa, q.dtype, s, z - c_q);
    const bool below = z - c_q < lo;
    const double s_prime = (below ? static_cast<double>(hi) - static_cast<double>(z - c_q)
                                  : static_cast<double>(z - c_q) - static_cast<double>(lo)) /
                           (static_cast<double>(hi) - static_cast<double>(lo)) * s;
    const int64_t z_prime = below ? lo : hi;
    const float multiplier = static_cast<float>(s) * (1.0f / static_cast<float>(s_prime));
    const MemoryFormat format = qa.suggest_memory_format();
    const Tensor src = qa.contiguous(format);
    Tensor out = empty_quantized(qa.sizes(), per_tensor_quantizer(q.dtype, s_prime, z_prime), format);
    with_int_type(q.dtype, [&]<class T>() {
      const T* x = static_cast<const T*>(src.data_ptr());
      T* y = static_cast<T*>(out.data_ptr());
      for (int64_t i = 0, n = out.numel(); i < n; ++i)
        y[i] = saturate<T>(z_prime + round_to_int(static_cast<float>(x[i] - z + c_q) * multiplier));
    });
    return out;
  }
};

// quantized::mul_scalar: x * c by new parameters alone: c > 0 scales the scale; c < 0 mirrors the
// integers (q -> qmax + qmin - q) and the zero point; c == 0 gives zeros with scale 1.
struct QuantizedMulScalarOp {
  static constexpr const char* name = "quantized::mul_scalar";
  static constexpr bool quantized = true;
  static constexpr bool differentiable = false;
  static Tensor run(const Tensor& qa, double other) {
    const Quantizer& q = per_tensor_8bit(name, qa);
    const double scale = std::fabs(other) * q.scale;
    EMBER_CHECK(other == 0 || (std::isfinite(scale) && scale > 0), name, "the result's scale |", other, "| * ",
                q.scale, " must be finite and positive");
    if (other > 0) return with_parameters(qa, q.dtype, scale, q.zero_point);
    if (other == 0) {
      Tensor out = empty_quantized(qa.sizes(), per_tensor_quantizer(q.dtype, 1.0, 0), qa.suggest_memory_format());
      raw_view(out).fill_(0);
      return out;
    }
    const int64_t lo = qmin(q.dtype), hi = qmax(q.dtype);
    const Tensor mirrored = (raw_view(qa).to(kLong).neg() + (hi + lo)).to(underlying_type(q.dtype));
    return wrap(mirrored.contiguous(qa.suggest_memory_format()),
                per_tensor_quantizer(q.dtype, scale, hi - (q.zero_point - lo)));
  }
};

// quantized::cat: every input dequantized, joined, and quantized to (scale, zero_point), by
// default the first input's.
struct QuantizedCatOp {
  static constexpr const char* name = "quantized::cat";
  static constexpr bool quantized = true;
  static constexpr bool differentiable = false;
  static Tensor run(TensorList tensors, int64_t dim, std::optional<double> out_scale,
                    std::optional<int64_t> out_zero_point) {
    EMBER_CHECK(!tensors.empty(), name, "expected a non-empty list of Tensors");
    const Quantizer& first = per_tensor_8bit(name, tensors[0]);
    const ScalarType dtype = first.dtype;
    const double scale = out_scale.value_or(first.scale);
    const int64_t zero_point = out_zero_point.value_or(first.zero_point);
    std::vector<Tensor> values;
    values.reserve(tensors.size());
    for (const Tensor& t : tensors) {
      EMBER_CHECK(per_tensor_8bit(name, t).dtype == dtype, name, "All dtypes must be the same: got ", dtype, " and ",
                  t.dtype());
      values.push_back(t.dequantize());
    }
    check_output_qparams(name, dtype, scale, zero_point);
    return quantize_per_tensor(ember::cat(values, dim), scale, zero_point, dtype);
  }
};

struct QuantizedHardswishOp {
  static constexpr const char* name = "quantized::hardswish";
  static constexpr bool quantized = true;
  static constexpr bool differentiable = false;
  static Tensor run(const Tensor& self, double scale, int64_t zero_point) {
    const Quantizer& q = per_tensor_8bit(name, self);
    check_output_qparams(name, q.dtype, scale, zero_point);
    return requantize_unary(self, q, per_tensor_quantizer(q.dtype, scale, zero_point),
                            [](float x) { return x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f; });
  }
};

// quantized::batch_norm2d: with PyTorch's fused parameters (compute_fused_params, in float),
// y = zp + nearbyint(fma(alpha[c], q - in_zp, beta[c])) over the channels_last input.
struct QuantizedBatchNorm2dOp {
  static constexpr const char* name = "quantized::batch_norm2d";
  static constexpr bool quantized = true;
  static constexpr bool differentiable = false;
  static Tensor run(const Tensor& qx, const Tensor& weight, const Tensor& bias, const Tensor& mean, const Tensor& var,
                    double eps, double scale, int64_t zero_point) {
    const Quantizer& q = per_tensor_8bit(name, qx);
    EMBER_CHECK(qx.dim() == 4, name, "Expecting the input tensor of rank 4, got ", qx.sizes());
    check_output_qparams(name, q.dtype, scale, zero_point);
    const int64_t C = qx.size(1);
    auto floats = [&](const Tensor& t, const char* what) {
      if (!t.defined()) return Tensor();
      EMBER_CHECK(t.dtype() == kFloat && t.dim() == 1 && t.numel() == C, name, what,
                  " must be a float32 vector of the input's ", C, " channels, got ", t.dtype(), " of size ", t.sizes());
      return t.contiguous();
    };
    const Tensor w = floats(weight, "weight"), b = floats(bias, "bias");
    const Tensor m = floats(mean, "running_mean"), v = floats(var, "running_var");
    EMBER_CHECK(m.defined() && v.defined(), name, "running_mean and running_var are needed");
    std::vector<float> alpha(static_cast<size_t>(C)), beta(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) {
      const float inv_sigma = static_cast<float>(1.0 / std::sqrt(v.data_ptr<float>()[c] + static_cast<float>(eps)));
      const float weight_v = w.defined() ? w.data_ptr<float>()[c] : 1.0f;
      const float bias_v = b.defined() ? b.data_ptr<float>()[c] : 0.0f;
      alpha[c] = static_cast<float>(inv_sigma * weight_v * (q.scale / scale));
      beta[c] = static_cast<float>((bias_v - m.data_ptr<float>()[c] * inv_sigma * weight_v) / scale);
    }
    const Tensor x = qx.contiguous(MemoryFormat::ChannelsLast);
    Tensor out = empty_quantized(qx.sizes(), per_tensor_quantizer(q.dtype, scale, zero_point), MemoryFormat::ChannelsLast);
    const int64_t rows = out.numel() / std::max<int64_t>(C, 1), in_zp = q.zero_point;
    with_int_type(q.dtype, [&]<class T>() {
      const T* xp = static_cast<const T*>(x.data_ptr());
      T* yp = static_cast<T*>(out.data_ptr());
      parallel_for(0, rows, 256, [&](int64_t lo, int64_t hi) {
        for (int64_t r = lo; r < hi; ++r) {
          for (int64_t c = 0; c < C; ++c) {
            // one rounding, as PyTorch's kernel compiled with FMA contraction
            const float t = std::fma(alpha[c], static_cast<float>(xp[r * C + c] - in_zp), beta[c]);
            yp[r * C + c] = saturate<T>(zero_point + round_to_int(t));
          }
        }
      });
    });
    return out;
  }
};

// Max pooling of (N, C, H, W) with any strides: the integers' maximum over each window.
template <class T>
void max_pool_loop(const T* x, T* y, const int64_t* sizes, const int64_t* xs, const int64_t* ys,
                   const kernels::PoolAxis& h, const kernels::PoolAxis& w, bool channels_inner) {
  const int64_t N = sizes[0], C = sizes[1], oH = static_cast<int64_t>(h.begin.size()),
                oW = static_cast<int64_t>(w.begin.size());
  auto window = [&](int64_t oh, int64_t ow, const T* xp) {
    T m = std::numeric_limits<T>::lowest();
    for (int64_t ih = h.begin[oh]; ih < h.end[oh]; ih += h.step)
      for (int64_t iw = w.begin[ow]; iw < w.end[ow]; iw += w.step) m = std::max(m, xp[ih * xs[2] + iw * xs[3]]);
    return m;
  };
  if (channels_inner) {  // channels_last: each window's rows read C contiguous channels at a time
    parallel_for(0, N * oH, 1, [&](int64_t b, int64_t e) {
      std::vector<T> acc(static_cast<size_t>(C));
      for (int64_t i = b; i < e; ++i) {
        const int64_t n = i / oH, oh = i % oH;
        for (int64_t ow = 0; ow < oW; ++ow) {
          std::fill(acc.begin(), acc.end(), std::numeric_limits<T>::lowest());
          for (int64_t ih = h.begin[oh]; ih < h.end[oh]; ih += h.step)
            for (int64_t iw = w.begin[ow]; iw < w.end[ow]; iw += w.step) {
              const T* xp = x + n * xs[0] + ih * xs[2] + iw * xs[3];
              for (int64_t c = 0; c < C; ++c) acc[c] = std::max(acc[c], xp[c]);
            }
          T* yp = y + n * ys[0] + oh * ys[2] + ow * ys[3];
          std::copy(acc.begin(), acc.end(), yp);
        }
      }
    });
    return;
  }
  parallel_for(0, N * C, 1, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t n = p / C, c = p % C;
      const T* xp = x + n * xs[0] + c * xs[1];
      T* yp = y + n * ys[0] + c * ys[1];
      for (int64_t oh = 0; oh < oH; ++oh)
        for (int64_t ow = 0; ow < oW; ++ow) yp[oh * ys[2] + ow * ys[3]] = window(oh, ow, xp);
    }
  });
}

// Average pooling with PyTorch's requantization (same parameters in and out): acc = sum of the
// window's integers - zp * count; NCHW: nearbyint(acc * m + zp), channels_last:
// zp + nearbyint(acc * m), m = float(1 / divisor).
template <class T>
void avg_pool_loop(const T* x, T* y, const int64_t* sizes, const int64_t* xs, const int64_t* ys,
                   const kernels::PoolAxis& h, const kernels::PoolAxis& w, bool channels_inner, bool count_extent,
                   int64_t divisor_override, int64_t zp) {
  const int64_t N = sizes[0], C = sizes[1], oH = static_cast<int64_t>(h.begin.size()),
                oW = static_cast<int64_t>(w.begin.size());
  auto multiplier = [&](int64_t oh, int64_t ow, int64_t count) {
    const int64_t divisor = divisor_override ? divisor_override
                            : count_extent   ? h.extent[oh] * w.extent[ow]
                                             : count;
    return static_cast<float>(1.0 / static_cast<double>(divisor));
  };
  if (channels_inner) {
    parallel_for(0, N * oH, 1, [&](int64_t b, int64_t e) {
      std::vector<int64_t> acc(static_cast<size_t>(C));
      for (int64_t i = b; i < e; ++i) {
        const int64_t n = i / oH, oh = i % oH;
        for (int64_t ow = 0; ow < oW; ++ow) {
          const int64_t count = (h.end[oh] - h.begin[oh]) * (w.end[ow] - w.begin[ow]);
          std::fill(acc.begin(), acc.end(), -zp * count);
          for (int64_t ih = h.begin[oh]; ih < h.end[oh]; ++ih)
            for (int64_t iw = w.begin[ow]; iw < w.end[ow]; ++iw) {
              const T* xp = x + n * xs[0] + ih * xs[2] + iw * xs[3];
              for (int64_t c = 0; c < C; ++c) acc[c] += xp[c];
            }
          const float m = multiplier(oh, ow, count);
          T* yp = y + n * ys[0] + oh * ys[2] + ow * ys[3];
          for (int64_t c = 0; c < C; ++c)
            yp[c] = saturate<T>(zp + round_to_int(static_cast<float>(acc[c]) * m));
        }
      }
    });
    return;
  }
  parallel_for(0, N * C, 1, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t n = p / C, c = p % C;
      const T* xp = x + n * xs[0] + c * xs[1];
      T* yp = y + n * ys[0] + c * ys[1];
      for (int64_t oh = 0; oh < oH; ++oh)
        for (int64_t ow = 0; ow < oW; ++ow) {
          const int64_t count = (h.end[oh] - h.begin[oh]) * (w.end[ow] - w.begin[ow]);
          int64_t acc = -zp * count;
          for (int64_t ih = h.begin[oh]; ih < h.end[oh]; ++ih)
            for (int64_t iw = w.begin[ow]; iw < w.end[ow]; ++iw) acc += xp[ih * xs[2] + iw * xs[3]];
          const float v = static_cast<float>(acc) * multiplier(oh, ow, count) + static_cast<float>(zp);
          yp[oh * ys[2] + ow * ys[3]] = saturate<T>(round_to_int(v));
        }
    }
  });
}

}  // namespace

Tensor pool2d(const char* op, const Tensor& x4, bool channels_last, const kernels::PoolAxis& h,
              const kernels::PoolAxis& w, bool is_max, bool count_extent, int64_t divisor_override) {
  const Quantizer& q = per_tensor_8bit(op, x4);
  const Tensor x = channels_last ? x4 : x4.contiguous();
  const int64_t oH = static_cast<int64_t>(h.begin.size()), oW = static_cast<int64_t>(w.begin.size());
  Tensor out = empty_quantized({x.size(0), x.size(1), oH, oW}, x.impl()->quantizer(),
                               channels_last ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous);
  if (out.numel() == 0) return out;
  const int64_t sizes[4] = {x.size(0), x.size(1), x.size(2), x.size(3)};
  const int64_t xs[4] = {x.stride(0), x.stride(1), x.stride(2), x.stride(3)};
  const int64_t ys[4] = {out.stride(0), out.stride(1), out.stride(2), out.stride(3)};
  with_int_type(q.dtype, [&]<class T>() {
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = static_cast<T*>(out.data_ptr());
    if (is_max) {
      max_pool_loop<T>(xp, yp, sizes, xs, ys, h, w, channels_last);
    } else {
      avg_pool_loop<T>(xp, yp, sizes, xs, ys, h, w, channels_last, count_extent, divisor_override, q.zero_point);
    }
  });
  return out;
}

Tensor clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  const Quantizer& q = per_tensor_8bit("clamp", self);
  // the bounds quantized as PyTorch's quantize_val: zp + nearbyint(v * (1 / float(scale)))
  const float inv_scale = 1.0f / static_cast<float>(q.scale);
  auto bound = [&](const Scalar& v) {
    const float t = static_cast<float>(v.toDouble()) * inv_scale;
    return std::clamp<int64_t>(q.zero_point + round_to_int(t), qmin(q.dtype), qmax(q.dtype));
  };
  const int64_t lo = min ? bound(*min) : qmin(q.dtype), hi = max ? bound(*max) : qmax(q.dtype);
  const Tensor raw = raw_view(self);
  return wrap(raw.clamp_min(lo).clamp_max(hi), self.impl()->quantizer());
}

Tensor sigmoid(const Tensor& self) {
  const Quantizer& q = per_tensor_8bit("sigmoid", self);
  return requantize_unary(self, q, unit_interval_quantizer(q.dtype),
                          [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
}

Tensor hardsigmoid(const Tensor& self) {
  const Quantizer& q = per_tensor_8bit("hardsigmoid", self);
  return requantize_unary(self, q, unit_interval_quantizer(q.dtype),
                          [](float x) { return std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f; });
}

Tensor batch_norm2d(const Tensor& qx, const Tensor& weight, const Tensor& bias, const Tensor& mean, const Tensor& var,
                    double eps, double scale, int64_t zero_point) {
  return dispatch::call<QuantizedBatchNorm2dOp>(qx, weight, bias, mean, var, eps, scale, zero_point);
}
Tensor hardswish(const Tensor& self, double scale, int64_t zero_point) {
  return dispatch::call<QuantizedHardswishOp>(self, scale, zero_point);
}
Tensor add_requant(const Tensor& qa, const Tensor& qb, double scale, int64_t zero_point, bool relu) {
  return dispatch::call<QuantizedAddOp>(qa, qb, scale, zero_point, relu);
}
Tensor mul_requant(const Tensor& qa, const Tensor& qb, double scale, int64_t zero_point, bool relu) {
  return dispatch::call<QuantizedMulOp>(qa, qb, scale, zero_point, relu);
}
Tensor add_scalar(const Tensor& qa, double other) { return dispatch::call<QuantizedAddScalarOp>(qa, other); }
Tensor mul_scalar(const Tensor& qa, double other) { return dispatch::call<QuantizedMulScalarOp>(qa, other); }
Tensor cat_requant(TensorList tensors, int64_t dim, std::optional<double> scale, std::optional<int64_t> zero_point) {
  return dispatch::call<QuantizedCatOp>(tensors, dim, scale, zero_point);
}

}  // namespace ember::quantized
