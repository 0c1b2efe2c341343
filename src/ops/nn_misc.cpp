// embedding, dropout, interpolate and pad. Index maps (embedding rows, nearest neighbours,
// reflect/replicate padding) are one gather over the trailing dims; bilinear interpolation and
// dropout have their own loops.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "dispatch/dispatch.h"
#include "ember/factory.h"
#include "ember/nn_ops.h"
#include "kernels/cpu/cast.h"

namespace ember {
namespace nn::functional {
namespace {

// out(o, j1..jk) = in(o, map[0][j1], ..., map[k-1][jk]) over the last k dims of contiguous tensors
// (any dtype: elements are copied as bytes).
Tensor gather_trailing(const Tensor& input, const std::vector<std::vector<int64_t>>& map) {
  const Tensor in = input.contiguous();
  const int64_t k = static_cast<int64_t>(map.size()), lead = in.dim() - k;
  DimVector out_sizes(in.sizes());
  int64_t out_block = 1, in_block = 1;
  for (int64_t d = 0; d < k; ++d) {
    out_sizes[lead + d] = static_cast<int64_t>(map[d].size());
    out_block *= out_sizes[lead + d];
    in_block *= in.size(lead + d);
  }
  Tensor out = make_empty(out_sizes, in.dtype());
  if (out.numel() == 0) return out;
  const size_t es = in.element_size();
  DimVector in_strides(IntArrayRef(in.strides().data() + lead, static_cast<size_t>(k)));
  const char* ip = static_cast<const char*>(in.data_ptr());
  char* op = static_cast<char*>(out.data_ptr());
  const int64_t outer = out.numel() / out_block;
  parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / out_block), [&](int64_t b, int64_t e) {
    std::vector<int64_t> idx(static_cast<size_t>(k));
    for (int64_t o = b; o < e; ++o) {
      std::fill(idx.begin(), idx.end(), 0);
      const char* src = ip + o * in_block * static_cast<int64_t>(es);
      char* dst = op + o * out_block * static_cast<int64_t>(es);
      for (int64_t j = 0; j < out_block; ++j) {
        int64_t off = 0;
        for (int64_t d = 0; d < k; ++d) off += map[d][idx[d]] * in_strides[d];
        std::memcpy(dst + j * static_cast<int64_t>(es), src + off * static_cast<int64_t>(es), es);
        for (int64_t d = k - 1; d >= 0 && ++idx[d] == out_sizes[lead + d]; --d) idx[d] = 0;
      }
    }
  });
  return out;
}

struct EmbeddingOp {
  static constexpr const char* name = "embedding";
  static Tensor run(const Tensor& weight, const Tensor& indices, int64_t, bool, bool) {
    EMBER_CHECK(weight.dim() == 2, name, "'weight' must be 2-D");
    EMBER_CHECK(indices.dtype() == kLong || indices.dtype() == kInt, name,
                "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but "
                "got ",
                indices.dtype(), " instead (while checking arguments for embedding)");
    const Tensor idx = indices.to(kLong).contiguous(), w = weight.contiguous();
    const int64_t n = idx.numel(), rows = w.size(0), row_bytes = w.size(1) * static_cast<int64_t>(w.element_size());
    const int64_t* ip = idx.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i)
      EMBER_CHECK(ip[i] >= 0 && ip[i] < rows, name, "index out of range in self (index ", ip[i], ", weight of size ",
                  weight.sizes(), ")");
    DimVector out_sizes(indices.sizes());
    out_sizes.push_back(w.size(1));
    Tensor out = make_empty(out_sizes, w.dtype());
    const char* src = static_cast<const char*>(w.data_ptr());
    char* dst = static_cast<char*>(out.data_ptr());
    for (int64_t i = 0; i < n && row_bytes > 0; ++i) std::memcpy(dst + i * row_bytes, src + ip[i] * row_bytes, row_bytes);
    return out;
  }
};

// Keeps each element (or each (sample, channel) for feature dropout) with probability 1 - p and
// multiplies by 1/(1-p) or 0, as PyTorch: the scale is rounded to the input's dtype first, and a
// dropped NaN stays NaN.
Tensor dropout_impl(const char* op, const Tensor& input, double p, bool train, bool feature) {
  EMBER_CHECK(p >= 0 && p <= 1, op, "dropout probability has to be between 0 and 1, but got ", p);
  if (feature) {
    EMBER_CHECK(input.dim() >= 2, op, "Feature dropout requires at least 2 dimensions in the input");
  }
  if (!train || p == 0 || input.numel() == 0) return input;
  EMBER_CHECK(is_floating_type(input.dtype()), op, "\"", op, "\" not implemented for '", input.dtype(), "'");
  const Tensor x = input.contiguous();
  Tensor out = make_empty(x.sizes(), x.dtype());
  const int64_t units = feature ? x.size(0) * x.size(1) : x.numel();
  const int64_t per_unit = x.numel() / units;
  std::vector<uint8_t> keep(static_cast<size_t>(units));
  {
    Generator& gen = default_generator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    for (auto& k : keep) k = gen.next_double() < 1 - p;
  }
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = kernels::compute_t<T>;
    if constexpr (kernels::is_float_like_v<T>) {
      const C scale = static_cast<C>(static_cast<T>(p == 1 ? 0.0 : 1.0 / (1.0 - p)));
      const T* xp = static_cast<const T*>(x.data_ptr());
      T* yp = static_cast<T*>(out.data_ptr());
      parallel_for(0, units, std::max<int64_t>(1, kGrainSize / per_unit), [&](int64_t b, int64_t e) {
        for (int64_t u = b; u < e; ++u)
          for (int64_t i = u * per_unit; i < (u + 1) * per_unit; ++i)
            yp[i] = static_cast<T>(static_cast<C>(xp[i]) * (keep[u] ? scale : C(0)));  // NaN * 0 stays NaN
      });
    }
  });
  return out;
}

struct DropoutOp {
  static constexpr const char* name = "dropout";
  static Tensor run(const Tensor& input, double p, bool train) { return dropout_impl(name, input, p, train, false); }
};
struct FeatureDropoutOp {
  static constexpr const char* name = "feature_dropout";
  static Tensor run(const Tensor& input, double p, bool train) { return dropout_impl(name, input, p, train, true); }
};

// PyTorch's source coordinate scale: 1/scale_factor when one was given, else in/out.
double coordinate_scale(int64_t in, int64_t out, std::optional<double> scale, bool align_corners) {
  if (align_corners) return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  if (scale && *scale > 0) return 1.0 / *scale;
  return static_cast<double>(in) / static_cast<double>(out);
}

// Nearest: source index floor(dst * scale) in float arithmetic, as PyTorch's kernel. libtorch
// 1.13's 1-D kernel keeps the scale in the input's dtype, which for bfloat16 is coarse:
// `bfloat16_scale` reproduces that.
std::vector<int64_t> nearest_map(int64_t in, int64_t out, std::optional<double> scale, bool bfloat16_scale) {
  float s = static_cast<float>(coordinate_scale(in, out, scale, false));
  if (bfloat16_scale) s = static_cast<float>(BFloat16(s));
  std::vector<int64_t> m(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o)
    m[o] = out == in ? o : std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * s)), in - 1);
  return m;
}

// Bilinear over (planes, H, W) in the dtype's compute type (float, or double for double).
template <class T>
void bilinear(const Tensor& in, const Tensor& out, std::optional<double> sh, std::optional<double> sw, bool align) {
  using C = kernels::compute_t<T>;
  const int64_t P = in.size(0), H = in.size(1), W = in.size(2), oH = out.size(1), oW = out.size(2);
  struct Tap {
    int64_t i0, i1;
    C l0, l1;
  };
  auto taps = [&](int64_t isz, int64_t osz, std::optional<double> scale) {
    const C ratio = static_cast<C>(coordinate_scale(isz, osz, scale, align));
    std::vector<Tap> t(static_cast<size_t>(osz));
    for (int64_t o = 0; o < osz; ++o) {
      if (isz == osz) {
        t[o] = {o, o, C(1), C(0)};
        continue;
      }
      C src = align ? ratio * static_cast<C>(o) : ratio * (static_cast<C>(o) + C(0.5)) - C(0.5);
      if (!align && src < 0) src = 0;
      const int64_t i0 = static_cast<int64_t>(src);
      const C l1 = std::min(std::max(src - static_cast<C>(i0), C(0)), C(1));
      t[o] = {i0, i0 + (i0 < isz - 1 ? 1 : 0), C(1) - l1, l1};
    }
    return t;
  };
  auto lerp = [](C a, C la, C b, C lb) { return a * la + b * lb; };
  const std::vector<Tap> th = taps(H, oH, sh), tw = taps(W, oW, sw);
  const T* ip = static_cast<const T*>(in.data_ptr());
  T* op = static_cast<T*>(out.data_ptr());
  parallel_for(0, P, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(oH * oW, 1)), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* src = ip + p * H * W;
      for (int64_t y = 0; y < oH; ++y) {
        const Tap& a = th[y];
        for (int64_t x = 0; x < oW; ++x) {
          const Tap& c = tw[x];
          auto v = [&](int64_t i, int64_t j) { return static_cast<C>(src[i * W + j]); };
          const C top = lerp(v(a.i0, c.i0), c.l0, v(a.i0, c.i1), c.l1);
          const C bottom = lerp(v(a.i1, c.i0), c.l0, v(a.i1, c.i1), c.l1);
          op[(p * oH + y) * oW + x] = static_cast<T>(lerp(top, a.l0, bottom, a.l1));
        }
      }
    }
  });
}

struct InterpolateOp {
  static constexpr const char* name = "interpolate";
  static Tensor run(const Tensor& input, OptionalIntArrayRef size, const std::optional<std::vector<double>>& scale,
                    std::string_view mode, std::optional<bool> align_corners) {
    EMBER_CHECK(mode == "nearest" || mode == "bilinear", name, "unsupported mode '", mode,
                "' (supported: nearest, bilinear)");
    EMBER_CHECK(input.dim() == 3 || input.dim() == 4, name, "Input Error: Only 3D and 4D input Tensors supported (got ",
                input.dim(), "D) for the modes: nearest | bilinear");
    EMBER_CHECK(mode != "bilinear" || input.dim() == 4, name, "Got ", input.dim(), "D input, but bilinear mode needs 4D input");
    EMBER_CHECK(!align_corners || mode == "bilinear", name,
                "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | "
                "trilinear");
    EMBER_CHECK(size.has_value() != scale.has_value(), name,
                size ? "only one of size or scale_factor should be defined" : "either size or scale_factor should be defined");
    const int64_t nd = input.dim() - 2;
    DimVector out_sizes(input.sizes());
    std::vector<std::optional<double>> scales(static_cast<size_t>(nd));
    if (size) {
      EMBER_CHECK(size->size() == 1 || static_cast<int64_t>(size->size()) == nd, name, "size shape must match input shape. Input is ",
                  nd, "D, size is ", size->size());
      for (int64_t d = 0; d < nd; ++d) out_sizes[d + 2] = (*size)[size->size() == 1 ? 0 : d];
    } else {
      EMBER_CHECK(scale->size() == 1 || static_cast<int64_t>(scale->size()) == nd, name,
                  "scale_factor shape must match input shape. Input is ", nd, "D, scale_factor is ", scale->size());
      for (int64_t d = 0; d < nd; ++d) {
        scales[d] = (*scale)[scale->size() == 1 ? 0 : d];
        out_sizes[d + 2] = static_cast<int64_t>(std::floor(static_cast<double>(input.size(d + 2)) * *scales[d]));
      }
    }
    for (int64_t d = 0; d < nd; ++d)
      EMBER_CHECK(input.size(d + 2) > 0 && out_sizes[d + 2] > 0, name, "Input and output sizes should be greater than 0, but got input (",
                  IntArrayRef(input.sizes().data() + 2, nd), ") output (", IntArrayRef(out_sizes.data() + 2, nd), ")");
    const MemoryFormat format = input.dim() == 4 ? input.suggest_memory_format() : MemoryFormat::Contiguous;
    Tensor out;
    if (mode == "nearest") {
      std::vector<std::vector<int64_t>> map;
      const bool bf16_scale = nd == 1 && input.dtype() == kBFloat16;
      for (int64_t d = 0; d < nd; ++d)
        map.push_back(nearest_map(input.size(d + 2), out_sizes[d + 2], scales[d], bf16_scale));
      out = gather_trailing(input, map);
    } else {
      EMBER_CHECK(is_floating_type(input.dtype()), name, "\"upsample_bilinear2d\" not implemented for '", input.dtype(), "'");
      out = make_empty(out_sizes, input.dtype());
      const int64_t P = input.size(0) * input.size(1);
      if (P > 0) {
        const Tensor in3 = input.contiguous().view({P, input.size(2), input.size(3)});
        const Tensor out3 = out.view({P, out_sizes[2], out_sizes[3]});
        visit_dtype(input.dtype(), [&](auto tag) {
          using T = decltype(tag);
          if constexpr (kernels::is_float_like_v<T>) bilinear<T>(in3, out3, scales[0], scales[1], align_corners.value_or(false));
        });
      }
    }
    return format == MemoryFormat::Contiguous ? out : out.contiguous(format);
  }
};

struct ConstantPadNdOp {
  static constexpr const char* name = "constant_pad_nd";
  static Tensor run(const Tensor& input, IntArrayRef pad, const Scalar& value) {
    EMBER_CHECK(pad.size() % 2 == 0, name, "Length of pad must be even but instead it equals ", pad.size());
    const int64_t k = static_cast<int64_t>(pad.size()) / 2;
    EMBER_CHECK(k <= input.dim(), name, "Length of pad should be no more than twice the number of dimensions of the input. Pad length is ",
                pad.size(), " while the input has ", input.dim(), " dimensions.");
    DimVector out_sizes(input.sizes());
    for (int64_t i = 0; i < k; ++i) {
      const int64_t d = input.dim() - 1 - i;
      out_sizes[d] = input.size(d) + pad[2 * i] + pad[2 * i + 1];
      EMBER_CHECK(out_sizes[d] >= 0, name, "The input size ", input.size(d), ", plus negative padding ", pad[2 * i],
                  " and ", pad[2 * i + 1], " resulted in a negative output size, which is invalid. Check dimension ",
                  d, " of your input.");
    }
    const MemoryFormat f = input.dim() >= 4 ? input.suggest_memory_format() : MemoryFormat::Contiguous;
    Tensor out = make_empty(out_sizes, input.dtype(), f);
    out.fill_(value);
    // the overlap of input and output: negative pads crop the input, positive ones offset it
    Tensor src = input, dst = out;
    for (int64_t i = 0; i < k; ++i) {
      const int64_t d = input.dim() - 1 - i, l = pad[2 * i], r = pad[2 * i + 1];
      const int64_t len = input.size(d) + std::min<int64_t>(l, 0) + std::min<int64_t>(r, 0);
      if (len <= 0) return out;
      src = src.narrow(d, std::max<int64_t>(-l, 0), len);
      dst = dst.narrow(d, std::max<int64_t>(l, 0), len);
    }
    dst.copy_(src);
    return out;
  }
};

struct PadOp {
  static constexpr const char* name = "pad";
  static Tensor run(const Tensor& input, IntArrayRef pad, std::string_view mode, std::optional<double> value) {
    if (mode == "constant") return ConstantPadNdOp::run(input, pad, value.value_or(0.0));
    EMBER_CHECK(mode == "reflect" || mode == "replicate", name, "Unrecognised padding mode ", mode);
    EMBER_CHECK(!value || *value == 0, name, "Padding mode \"", mode, "\" doesn't take in value argument");
    const int64_t k = static_cast<int64_t>(pad.size()) / 2;
    EMBER_CHECK(pad.size() % 2 == 0 && k >= 1 && k <= 3 && (input.dim() == k + 1 || input.dim() == k + 2), name,
                "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now (got pad of length ",
                pad.size(), " for an input of size ", input.sizes(), ")");
    std::vector<std::vector<int64_t>> map(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) {
      const int64_t d = input.dim() - 1 - i, in = input.size(d), l = pad[2 * i], r = pad[2 * i + 1];
      if (mode == "reflect") {
        EMBER_CHECK(l < in && r < in, name, "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (",
                    l, ", ", r, ") at dimension ", d, " of input ", input.sizes());
      } else {
        EMBER_CHECK(in > 0, name, "input dimension ", d, " of ", input.sizes(), " must be non-empty to replicate");
      }
      const int64_t out = in + l + r;
      EMBER_CHECK(out >= 1, name, "input (", in, ") padded by (", l, ", ", r, ") at dimension ", d,
                  " gives an output size of ", out, ", which is too small");
      std::vector<int64_t>& m = map[k - 1 - i];
      m.resize(static_cast<size_t>(out));
      for (int64_t o = 0; o < out; ++o) {
        int64_t j = o - l;
        if (mode == "reflect") {
          j = j < 0 ? -j : j;
          j = j >= in ? 2 * (in - 1) - j : j;
        } else {
          j = std::min(std::max<int64_t>(j, 0), in - 1);
        }
        m[o] = j;
      }
    }
    return gather_trailing(input, map);
  }
};

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  return dispatch::call<EmbeddingOp>(weight, indices, padding_idx, scale_grad_by_freq, sparse);
}
Tensor dropout(const Tensor& input, double p, bool train) { return dispatch::call<DropoutOp>(input, p, train); }
Tensor feature_dropout(const Tensor& input, double p, bool train) {
  return dispatch::call<FeatureDropoutOp>(input, p, train);
}
Tensor dropout2d(const Tensor& input, double p, bool training) { return feature_dropout(input, p, training); }
Tensor interpolate(const Tensor& input, OptionalIntArrayRef size, std::optional<std::vector<double>> scale_factor,
                   std::string_view mode, std::optional<bool> align_corners) {
  return dispatch::call<InterpolateOp>(input, size, scale_factor, mode, align_corners);
}
Tensor pad(const Tensor& input, IntArrayRef pad, std::string_view mode, std::optional<double> value) {
  return dispatch::call<PadOp>(input, pad, mode, value);
}

}  // namespace nn::functional

Tensor constant_pad_nd(const Tensor& input, IntArrayRef pad, const Scalar& value) {
  return dispatch::call<nn::functional::ConstantPadNdOp>(input, pad, value);
}

}  // namespace ember
