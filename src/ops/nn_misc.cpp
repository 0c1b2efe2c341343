// embedding, dropout, interpolate and pad. Index maps (embedding rows, nearest neighbours,
// reflect/replicate padding) are one gather over the trailing dims, and their derivatives the
// matching scatter-add; bilinear interpolation has its own loops both ways. Dropout multiplies by
// a mask, so its derivative is the multiplication's.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "dispatch/dispatch.h"
#include "ember/factory.h"
#include "ember/nn_ops.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/indexing.h"
#include "ops/first_order.h"
#include "ops/op_util.h"
#include "ops/random.h"

namespace ember {
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

using op_util::layout_of;

// The adjoint of gather_trailing: gin(o, i1..ik) sums grad(o, j1..jk) over the j with
// map[d][jd] = id, accumulated in the compute type. `in_sizes` is the input's shape.
Tensor scatter_trailing(const Tensor& grad, const std::vector<std::vector<int64_t>>& map, IntArrayRef in_sizes) {
  const Tensor g = grad.contiguous();
  Tensor gin = make_empty(in_sizes, g.dtype());
  const int64_t k = static_cast<int64_t>(map.size()), lead = gin.dim() - k;
  int64_t out_block = 1, in_block = 1;
  for (int64_t d = 0; d < k; ++d) out_block *= g.size(lead + d), in_block *= gin.size(lead + d);
  if (gin.numel() == 0) return gin;
  DimVector in_strides(IntArrayRef(gin.strides().data() + lead, static_cast<size_t>(k)));
  const int64_t outer = gin.numel() / in_block;
  kernels::visit_float(g.dtype(), "scatter_trailing", [&](auto tag) {
    using T = decltype(tag);
    using C = kernels::compute_t<T>;
    const T* gp = static_cast<const T*>(g.data_ptr());
    T* ip = static_cast<T*>(gin.data_ptr());
    parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(out_block, 1)), [&](int64_t b, int64_t e) {
      std::vector<int64_t> idx(static_cast<size_t>(k));
      std::vector<C> acc(static_cast<size_t>(in_block));
      for (int64_t o = b; o < e; ++o) {
        std::fill(idx.begin(), idx.end(), 0);
        std::fill(acc.begin(), acc.end(), C(0));
        const T* src = gp + o * out_block;
        for (int64_t j = 0; j < out_block; ++j) {
          int64_t off = 0;
          for (int64_t d = 0; d < k; ++d) off += map[d][idx[d]] * in_strides[d];
          acc[off] += static_cast<C>(src[j]);
          for (int64_t d = k - 1; d >= 0 && ++idx[d] == g.size(lead + d); --d) idx[d] = 0;
        }
        T* dst = ip + o * in_block;
        for (int64_t i = 0; i < in_block; ++i) dst[i] = static_cast<T>(acc[i]);
      }
    });
  });
  return gin;
}

// The gradient of a gather_trailing output, in the input's layout.
Tensor scatter_grad(const char* node, const Tensor& grad, const std::vector<std::vector<int64_t>>& map,
                    IntArrayRef in_sizes, MemoryFormat format) {
  check_first_order(node, {grad});
  const Tensor gin = scatter_trailing(grad, map, in_sizes);
  return format == MemoryFormat::Contiguous ? gin : gin.contiguous(format);
}

// EmbeddingBackward0 -- weight: rows of grad added at their indices, except at padding_idx;
// scale_grad_by_freq divides by how often each index occurs. Threads own disjoint weight rows.
// Unscaled rows are summed in float32 for 16-bit grads (rounded once at the end), float32 and
// float64 ones through index_add_'s vector row path; scaled ones accumulate here, in float32 for
// 16-bit rows.
Tensor embedding_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights, int64_t padding_idx,
                          bool scale_grad_by_freq) {
  check_first_order("embedding", {grad});
  const Tensor idx = indices.to(kLong).contiguous();
  const int64_t n = idx.numel(), D = grad.size(-1);
  const Tensor g = grad.contiguous().view({n, D});
  if (!scale_grad_by_freq && (g.dtype() == kHalf || g.dtype() == kBFloat16)) {
    // float32 sums of the 16-bit rows in index order, as index_add_ below makes them, without a
    // float32 copy of grad (1.6x libtorch's time for 4M bfloat16 values); threads own weight rows
    Tensor gw = zeros({num_weights, D}, kFloat);
    const int64_t* ip = idx.data_ptr<int64_t>();
    float* wp = gw.data_ptr<float>();
    const char* gp = static_cast<const char*>(g.data_ptr());
    const int64_t row_bytes = D * static_cast<int64_t>(g.element_size());
    const int64_t grain = std::max<int64_t>(1, kGrainSize * num_weights / std::max<int64_t>(n * D, 1));
    parallel_for(0, num_weights, grain, [&](int64_t b, int64_t e) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t r = ip[i];
        if (r >= b && r < e && r != padding_idx)
          kernels::add_row_to_float_kernel(g.dtype(), wp + r * D, gp + i * row_bytes, D);
      }
    });
    return gw.to(g.dtype());
  }
  if (!scale_grad_by_freq) {
    // in index order as below; the padding row's sum is dropped
    const ScalarType acc = g.dtype() == kDouble ? kDouble : kFloat;
    Tensor gw = zeros({num_weights, D}, acc);
    gw.index_add_(0, idx.view({n}), g.to(acc));
    if (padding_idx >= 0 && padding_idx < num_weights) gw.select(0, padding_idx).zero_();
    return gw.to(g.dtype());
  }
  Tensor gw = make_empty({num_weights, D}, g.dtype());
  const int64_t* ip = idx.data_ptr<int64_t>();
  std::vector<int64_t> freq(scale_grad_by_freq ? num_weights : 0, 0);
  for (int64_t i = 0; i < n && scale_grad_by_freq; ++i) ++freq[ip[i]];
  kernels::visit_float(g.dtype(), "embedding_backward", [&](auto tag) {
    using T = decltype(tag);
    using C = kernels::compute_t<T>;
    const T* gp = static_cast<const T*>(g.data_ptr());
    T* wp = static_cast<T*>(gw.data_ptr());
    parallel_for(0, num_weights, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * D, 1)), [&](int64_t b, int64_t e) {
      std::vector<C> acc(static_cast<size_t>((e - b) * D), C(0));
      for (int64_t i = 0; i < n; ++i) {
        const int64_t r = ip[i];
        if (r < b || r >= e || r == padding_idx) continue;
        const C s = scale_grad_by_freq ? C(1) / static_cast<C>(freq[r]) : C(1);
        C* a = acc.data() + (r - b) * D;
        for (int64_t j = 0; j < D; ++j) a[j] += static_cast<C>(gp[i * D + j]) * s;
      }
      for (int64_t i = 0; i < (e - b) * D; ++i) wp[b * D + i] = static_cast<T>(acc[i]);
    });
  });
  return gw;
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
    // index_select's row copy, split across threads (a loop of memcpy here ran on one thread:
    // 4M float32 values took 2.4x libtorch's time at 2 threads)
    kernels::index_select_rows_kernel(static_cast<char*>(out.data_ptr()), static_cast<const char*>(w.data_ptr()), 1,
                                      0, idx.view({n}), row_bytes, row_bytes);
    return out;
  }
  static void derivative(autograd::Derivative& d, const Tensor& weight, const Tensor& indices, int64_t padding_idx,
                         bool scale_grad_by_freq, bool sparse) {
    EMBER_CHECK(!sparse, name, "sparse gradients are not supported; use sparse=false");
    d.name("EmbeddingBackward0");
    d.grad(weight, [i = d.save_for(weight, indices), rows = weight.size(0), padding_idx, scale_grad_by_freq](const auto& c) {
      return embedding_backward(c.grad(), c[i], rows, padding_idx, scale_grad_by_freq);
    });
  }
};

// libtorch's _dropout_impl: a noise tensor of 1 (probability 1 - p) and 0 in the input's dtype,
// drawn by bernoulli_(1 - p) over the input's shape (for feature dropout one per (sample, channel)),
// divided by 1 - p, times the input (p = 1: times a zero, nothing drawn), so a dropped NaN stays
// NaN. The noise comes from a dispatch op (random_fill), so that a captured graph draws a new mask
// at each replay, as an eager step does (ember::graphs). The product is recorded (MulBackward0).
Tensor dropout_impl(const char* op, const Tensor& input, double p, bool train, bool feature) {
  EMBER_CHECK(p >= 0 && p <= 1, op, "dropout probability has to be between 0 and 1, but got ", p);
  if (feature) {
    EMBER_CHECK(input.dim() >= 2, op, "Feature dropout requires at least 2 dimensions in the input");
  }
  if (!train || p == 0 || input.numel() == 0) return input;
  EMBER_CHECK(is_floating_type(input.dtype()), op, "\"", op, "\" not implemented for '", input.dtype(), "'");
  if (p == 1) return input.mul(zeros({}, TensorOptions().dtype(input.dtype())));
  DimVector noise_sizes(input.sizes());
  if (feature) std::fill(noise_sizes.begin() + 2, noise_sizes.end(), 1);
  Tensor noise = random_fill(make_empty(noise_sizes, input.dtype()), RandomFill::Bernoulli, 1 - p, 0, nullptr);
  return input.mul(noise.div_(1 - p));
}

struct DropoutOp {
  static constexpr const char* name = "dropout";
  static constexpr bool composite = true;
  // eval mode returns the input, so that a quantized model's Dropout passes int8 tensors, as
  // PyTorch's; training raises (not a floating type)
  static constexpr bool quantized = true;
  static Tensor run(const Tensor& input, double p, bool train) { return dropout_impl(name, input, p, train, false); }
};
struct FeatureDropoutOp {
  static constexpr const char* name = "feature_dropout";
  static constexpr bool composite = true;
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

// Source taps of bilinear interpolation along one dim: output o mixes inputs i0 and i1 with
// weights l0 and l1.
template <class C>
struct Tap {
  int64_t i0, i1;
  C l0, l1;
};
template <class C>
std::vector<Tap<C>> bilinear_taps(int64_t isz, int64_t osz, std::optional<double> scale, bool align) {
  const C ratio = static_cast<C>(coordinate_scale(isz, osz, scale, align));
  std::vector<Tap<C>> t(static_cast<size_t>(osz));
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
}

// Bilinear over (planes, H, W) in the dtype's compute type (float, or double for double).
template <class T>
void bilinear(const Tensor& in, const Tensor& out, std::optional<double> sh, std::optional<double> sw, bool align) {
  using C = kernels::compute_t<T>;
  const int64_t P = in.size(0), H = in.size(1), W = in.size(2), oH = out.size(1), oW = out.size(2);
  auto lerp = [](C a, C la, C b, C lb) { return a * la + b * lb; };
  const std::vector<Tap<C>> th = bilinear_taps<C>(H, oH, sh, align), tw = bilinear_taps<C>(W, oW, sw, align);
  const T* ip = static_cast<const T*>(in.data_ptr());
  T* op = static_cast<T*>(out.data_ptr());
  parallel_for(0, P, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(oH * oW, 1)), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* src = ip + p * H * W;
      for (int64_t y = 0; y < oH; ++y) {
        const Tap<C>& a = th[y];
        for (int64_t x = 0; x < oW; ++x) {
          const Tap<C>& c = tw[x];
          auto v = [&](int64_t i, int64_t j) { return static_cast<C>(src[i * W + j]); };
          const C top = lerp(v(a.i0, c.i0), c.l0, v(a.i0, c.i1), c.l1);
          const C bottom = lerp(v(a.i1, c.i0), c.l0, v(a.i1, c.i1), c.l1);
          op[(p * oH + y) * oW + x] = static_cast<T>(lerp(top, a.l0, bottom, a.l1));
        }
      }
    }
  });
}

// The adjoint of bilinear: each output gradient spreads over its four taps (planes in parallel,
// accumulated in the compute type).
template <class T>
void bilinear_backward(const Tensor& grad, const Tensor& gin, std::optional<double> sh, std::optional<double> sw,
                       bool align) {
  using C = kernels::compute_t<T>;
  const int64_t P = gin.size(0), H = gin.size(1), W = gin.size(2), oH = grad.size(1), oW = grad.size(2);
  const std::vector<Tap<C>> th = bilinear_taps<C>(H, oH, sh, align), tw = bilinear_taps<C>(W, oW, sw, align);
  const T* gp = static_cast<const T*>(grad.data_ptr());
  T* ip = static_cast<T*>(gin.data_ptr());
  parallel_for(0, P, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(oH * oW, 1)), [&](int64_t b, int64_t e) {
    std::vector<C> acc(static_cast<size_t>(H * W));
    for (int64_t p = b; p < e; ++p) {
      std::fill(acc.begin(), acc.end(), C(0));
      for (int64_t y = 0; y < oH; ++y) {
        const Tap<C>& a = th[y];
        for (int64_t x = 0; x < oW; ++x) {
          const Tap<C>& c = tw[x];
          const C g = static_cast<C>(gp[(p * oH + y) * oW + x]);
          acc[a.i0 * W + c.i0] += g * a.l0 * c.l0;
          acc[a.i0 * W + c.i1] += g * a.l0 * c.l1;
          acc[a.i1 * W + c.i0] += g * a.l1 * c.l0;
          acc[a.i1 * W + c.i1] += g * a.l1 * c.l1;
        }
      }
      for (int64_t i = 0; i < H * W; ++i) ip[p * H * W + i] = static_cast<T>(acc[i]);
    }
  });
}

// What interpolate computes, after its checks: the output's shape and the scale of each spatial dim.
struct InterpolatePlan {
  DimVector out_sizes;
  std::vector<std::optional<double>> scales;
  bool nearest;
  bool align_corners;
  // The nearest source of each output index, per spatial dim.
  std::vector<std::vector<int64_t>> nearest_maps(const Tensor& input) const {
    const int64_t nd = input.dim() - 2;
    const bool bf16_scale = nd == 1 && input.dtype() == kBFloat16;
    std::vector<std::vector<int64_t>> map;
    for (int64_t d = 0; d < nd; ++d) map.push_back(nearest_map(input.size(d + 2), out_sizes[d + 2], scales[d], bf16_scale));
    return map;
  }
};

InterpolatePlan interpolate_plan(const char* name, const Tensor& input, OptionalIntArrayRef size,
                                 const std::optional<std::vector<double>>& scale, std::string_view mode,
                                 std::optional<bool> align_corners) {
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
  InterpolatePlan plan{DimVector(input.sizes()), std::vector<std::optional<double>>(static_cast<size_t>(nd)),
                       mode == "nearest", align_corners.value_or(false)};
  DimVector& out_sizes = plan.out_sizes;
  if (size) {
    EMBER_CHECK(size->size() == 1 || static_cast<int64_t>(size->size()) == nd, name, "size shape must match input shape. Input is ",
                nd, "D, size is ", size->size());
    for (int64_t d = 0; d < nd; ++d) out_sizes[d + 2] = (*size)[size->size() == 1 ? 0 : d];
  } else {
    EMBER_CHECK(scale->size() == 1 || static_cast<int64_t>(scale->size()) == nd, name,
                "scale_factor shape must match input shape. Input is ", nd, "D, scale_factor is ", scale->size());
    for (int64_t d = 0; d < nd; ++d) {
      plan.scales[d] = (*scale)[scale->size() == 1 ? 0 : d];
      out_sizes[d + 2] = static_cast<int64_t>(std::floor(static_cast<double>(input.size(d + 2)) * *plan.scales[d]));
    }
  }
  for (int64_t d = 0; d < nd; ++d)
    EMBER_CHECK(input.size(d + 2) > 0 && out_sizes[d + 2] > 0, name, "Input and output sizes should be greater than 0, but got input (",
                IntArrayRef(input.sizes().data() + 2, nd), ") output (", IntArrayRef(out_sizes.data() + 2, nd), ")");
  EMBER_CHECK(plan.nearest || is_floating_type(input.dtype()), name, "\"upsample_bilinear2d\" not implemented for '",
              input.dtype(), "'");
  return plan;
}

struct InterpolateOp {
  static constexpr const char* name = "interpolate";
  static Tensor run(const Tensor& input, OptionalIntArrayRef size, const std::optional<std::vector<double>>& scale,
                    std::string_view mode, std::optional<bool> align_corners) {
    const InterpolatePlan plan = interpolate_plan(name, input, size, scale, mode, align_corners);
    Tensor out;
    if (plan.nearest) {
      out = gather_trailing(input, plan.nearest_maps(input));
    } else {
      out = make_empty(plan.out_sizes, input.dtype());
      const int64_t P = input.size(0) * input.size(1);
      if (P > 0) {
        const Tensor in3 = input.contiguous().view({P, input.size(2), input.size(3)});
        const Tensor out3 = out.view({P, plan.out_sizes[2], plan.out_sizes[3]});
        kernels::visit_float(input.dtype(), name,
                    [&](auto tag) { bilinear<decltype(tag)>(in3, out3, plan.scales[0], plan.scales[1], plan.align_corners); });
      }
    }
    const MemoryFormat format = layout_of(input);
    return format == MemoryFormat::Contiguous ? out : out.contiguous(format);
  }
  // UpsampleNearest1DBackward1 / UpsampleNearest2DBackward1 / UpsampleBilinear2DBackward1
  static void derivative(autograd::Derivative& d, const Tensor& input, OptionalIntArrayRef size,
                         const std::optional<std::vector<double>>& scale, std::string_view mode,
                         std::optional<bool> align_corners) {
    const InterpolatePlan plan = interpolate_plan(name, input, size, scale, mode, align_corners);
    const MemoryFormat format = layout_of(input);
    if (plan.nearest) {
      d.name(input.dim() == 3 ? "UpsampleNearest1DBackward1" : "UpsampleNearest2DBackward1");
      d.grad(input, [map = plan.nearest_maps(input), in_sizes = DimVector(input.sizes()), format](const auto& c) {
        return scatter_grad("interpolate", c.grad(), map, in_sizes, format);
      });
      return;
    }
    d.name("UpsampleBilinear2DBackward1");
    d.grad(input, [plan, in_sizes = DimVector(input.sizes()), format](const auto& c) {
      check_first_order(name, {c.grad()});
      const Tensor g = c.grad().contiguous();
      Tensor gin = make_empty(in_sizes, g.dtype());
      const int64_t P = in_sizes[0] * in_sizes[1];
      if (P > 0) {
        const Tensor g3 = g.view({P, plan.out_sizes[2], plan.out_sizes[3]}), gin3 = gin.view({P, in_sizes[2], in_sizes[3]});
        kernels::visit_float(g.dtype(), name, [&](auto tag) {
          bilinear_backward<decltype(tag)>(g3, gin3, plan.scales[0], plan.scales[1], plan.align_corners);
        });
      }
      return format == MemoryFormat::Contiguous ? gin : gin.contiguous(format);
    });
  }
};

DimVector negated(IntArrayRef pad) {
  DimVector n(pad);
  for (int64_t& v : n) v = -v;
  return n;
}

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
  // ConstantPadNdBackward0 -- self: the gradient cropped back (padded by the negated pads).
  static void derivative(autograd::Derivative& d, const Tensor& input, IntArrayRef pad, const Scalar&) {
    d.name("ConstantPadNdBackward0");
    d.grad(input, [crop = negated(pad), format = layout_of(input)](const auto& c) {
      return dispatch::call<ConstantPadNdOp>(c.grad(), crop, Scalar(0.0)).contiguous(format);
    });
  }
};

// Reflect/replicate/circular padding as one gather: the source index of each output index per
// padded dim.
std::vector<std::vector<int64_t>> pad_maps(const char* name, const Tensor& input, IntArrayRef pad, std::string_view mode,
                                           std::optional<double> value) {
  EMBER_CHECK(mode == "reflect" || mode == "replicate" || mode == "circular", name, "Unrecognised padding mode ", mode);
  EMBER_CHECK(!value || *value == 0, name, "Padding mode \"", mode, "\" doesn't take in value argument");
  const int64_t k = static_cast<int64_t>(pad.size()) / 2;
  EMBER_CHECK(pad.size() % 2 == 0 && k >= 1 && k <= 3 && (input.dim() == k + 1 || input.dim() == k + 2), name,
              "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now (got pad of length ",
              pad.size(), " for an input of size ", input.sizes(), ")");
  // circular padding wants a batch and a channel dimension, as PyTorch's _pad_circular
  EMBER_CHECK(mode != "circular" || input.dim() == k + 2, name, "Expected padding of length ", 2 * (input.dim() - 2),
              " for circular padding of an input of size ", input.sizes(), ", but got ", pad.size());
  std::vector<std::vector<int64_t>> map(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) {
    const int64_t d = input.dim() - 1 - i, in = input.size(d), l = pad[2 * i], r = pad[2 * i + 1];
    // circular: a negative pad crops first; the rest wraps around what is left (PyTorch's
    // _pad_circular)
    const int64_t kept = in + std::min<int64_t>(l, 0) + std::min<int64_t>(r, 0);
    if (mode == "reflect") {
      EMBER_CHECK(l < in && r < in, name, "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (",
                  l, ", ", r, ") at dimension ", d, " of input ", input.sizes());
    } else if (mode == "circular") {
      EMBER_CHECK(l <= kept && r <= kept, name, "Padding value causes wrapping around more than once: padding (", l,
                  ", ", r, ") at dimension ", d, " of input ", input.sizes());
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
      } else if (mode == "circular") {
        const int64_t c = o - std::max<int64_t>(l, 0);  // position in the kept part, wrapped
        j = std::max<int64_t>(-l, 0) + (c % kept + kept) % kept;
      } else {
        j = std::min(std::max<int64_t>(j, 0), in - 1);
      }
      m[o] = j;
    }
  }
  return map;
}

struct PadOp {
  static constexpr const char* name = "pad";
  // reflection_pad and replication_pad are on PyTorch's float32 autocast list; constant_pad_nd and
  // circular padding (slices and cat) are not
  static dispatch::Autocast autocast_policy(const Tensor&, IntArrayRef, std::string_view mode, std::optional<double>) {
    return mode == "reflect" || mode == "replicate" ? dispatch::Autocast::kFloat32 : dispatch::Autocast::kNone;
  }
  static Tensor run(const Tensor& input, IntArrayRef pad, std::string_view mode, std::optional<double> value) {
    if (mode == "constant") return ConstantPadNdOp::run(input, pad, value.value_or(0.0));
    return gather_trailing(input, pad_maps(name, input, pad, mode, value));
  }
  // ConstantPadNdBackward0, or Reflection/ReplicationPad{1,2,3}DBackward0: the scatter-add of the gather.
  static void derivative(autograd::Derivative& d, const Tensor& input, IntArrayRef pad, std::string_view mode,
                         std::optional<double> value) {
    if (mode == "constant") return ConstantPadNdOp::derivative(d, input, pad, value.value_or(0.0));
    static constexpr const char* names[2][3] = {
        {"ReflectionPad1DBackward0", "ReflectionPad2DBackward0", "ReflectionPad3DBackward0"},
        {"ReplicationPad1DBackward0", "ReplicationPad2DBackward0", "ReplicationPad3DBackward0"}};
    // PyTorch 1.13 composes circular padding of slices and cat
    d.name(mode == "circular" ? "CatBackward0" : names[mode == "replicate"][pad.size() / 2 - 1]);
    d.grad(input, [map = pad_maps(name, input, pad, mode, value), in_sizes = DimVector(input.sizes()),
                   format = layout_of(input)](const auto& c) { return scatter_grad("pad", c.grad(), map, in_sizes, format); });
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

Tensor constant_pad_nd(const Tensor& input, IntArrayRef pad, const Scalar& value) {
  return dispatch::call<ConstantPadNdOp>(input, pad, value);
}

}  // namespace ember
