// libtorch's upsample_* functions (issue 26, round 2): nearest, linear, bilinear, bicubic and
// trilinear resampling of the last 1-3 dims, composed per dim from index_select and weights, so
// the derivative is that of the composition (index_add of the weighted gradient). The source
// positions and weights follow PyTorch's CPU kernels (UpSample.h): scales 1/scale_factor when
// given, else in/out; half-pixel centres unless align_corners; bicubic with A = -0.75 and the
// taps clamped to the border. They are computed in the input's precision, as PyTorch's are.
#include <cmath>
#include <vector>

#include "ember/aten_tail2.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/pointwise.h"
#include "ember/shape.h"

namespace ember {
namespace {

struct Taps {
  std::vector<std::vector<int64_t>> index;  // per tap, one source index per output position
  std::vector<std::vector<double>> weight;  // per tap (empty for nearest)
};

template <class S>
S scale_of(int64_t in, int64_t out, bool align_corners, std::optional<double> scale, bool linear) {
  if (linear && align_corners) return out > 1 ? static_cast<S>(in - 1) / static_cast<S>(out - 1) : S(0);
  if (scale && *scale > 0) return static_cast<S>(1.0 / *scale);
  return static_cast<S>(in) / static_cast<S>(out);
}

template <class S>
Taps nearest_taps(int64_t in, int64_t out, std::optional<double> scale) {
  Taps t;
  t.index.resize(1);
  const S s = scale_of<S>(in, out, false, scale, false);
  for (int64_t i = 0; i < out; ++i) {
    int64_t src;
    if (out == in) {
      src = i;
    } else if (out == 2 * in) {
      src = i >> 1;
    } else {
      src = std::min(static_cast<int64_t>(std::floor(static_cast<S>(i) * s)), in - 1);
    }
    t.index[0].push_back(src);
  }
  return t;
}

template <class S>
Taps linear_taps(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  Taps t;
  t.index.resize(2);
  t.weight.resize(2);
  const S s = scale_of<S>(in, out, align_corners, scale, true);
  for (int64_t i = 0; i < out; ++i) {
    S real = align_corners ? s * static_cast<S>(i) : s * (static_cast<S>(i) + S(0.5)) - S(0.5);
    if (!align_corners && real < 0) real = 0;
    const int64_t i0 = std::min(static_cast<int64_t>(std::floor(real)), in - 1);
    const S lambda = std::min(std::max(real - static_cast<S>(i0), S(0)), S(1));
    const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
    t.index[0].push_back(i0);
    t.index[1].push_back(i1);
    t.weight[0].push_back(static_cast<double>(S(1) - lambda));
    t.weight[1].push_back(static_cast<double>(lambda));
  }
  return t;
}

template <class S>
S cubic1(S x, S a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
template <class S>
S cubic2(S x, S a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

template <class S>
Taps cubic_taps(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  Taps t;
  t.index.resize(4);
  t.weight.resize(4);
  const S s = scale_of<S>(in, out, align_corners, scale, true);
  const S a = S(-0.75);
  for (int64_t i = 0; i < out; ++i) {
    const S real = align_corners ? s * static_cast<S>(i) : s * (static_cast<S>(i) + S(0.5)) - S(0.5);
    const int64_t base = static_cast<int64_t>(std::floor(real));
    const S f = real - static_cast<S>(base);
    const S w[4] = {cubic2<S>(f + 1, a), cubic1<S>(f, a), cubic1<S>(1 - f, a), cubic2<S>(2 - f, a)};
    for (int k = 0; k < 4; ++k) {
      t.index[static_cast<size_t>(k)].push_back(std::min(std::max<int64_t>(base - 1 + k, 0), in - 1));
      t.weight[static_cast<size_t>(k)].push_back(static_cast<double>(w[k]));
    }
  }
  return t;
}

enum class ResampleMode { Nearest, Linear, Cubic };

// Resamples dim `d` of x to `out` positions.
Tensor resample(const Tensor& x, int64_t d, int64_t out, ResampleMode mode, bool align_corners, std::optional<double> scale) {
  const int64_t in = x.size(d);
  const bool dbl = x.dtype() == kDouble;
  Taps t;
  if (mode == ResampleMode::Nearest) t = dbl ? nearest_taps<double>(in, out, scale) : nearest_taps<float>(in, out, scale);
  if (mode == ResampleMode::Linear) {
    t = dbl ? linear_taps<double>(in, out, align_corners, scale) : linear_taps<float>(in, out, align_corners, scale);
  }
  if (mode == ResampleMode::Cubic) {
    t = dbl ? cubic_taps<double>(in, out, align_corners, scale) : cubic_taps<float>(in, out, align_corners, scale);
  }
  if (in == 0 || out == 0) {
    DimVector shape(x.sizes());
    shape[static_cast<size_t>(d)] = out;
    return zeros(shape, TensorOptions().dtype(x.dtype())) + x.sum() * 0;
  }
  if (t.weight.empty()) return x.index_select(d, tensor(t.index[0], kLong));
  DimVector wshape(static_cast<size_t>(x.dim()), 1);
  wshape[static_cast<size_t>(d)] = out;
  Tensor r;
  for (size_t k = 0; k < t.index.size(); ++k) {
    const Tensor term = x.index_select(d, tensor(t.index[k], kLong)) * tensor(t.weight[k], kDouble).to(x.dtype()).view(wshape);
    r = r.defined() ? r + term : term;
  }
  return r;
}

// The checks and output sizes of an upsample over the last `spatial` dims.
Tensor upsample(const char* op, const Tensor& input, int64_t spatial, OptionalIntArrayRef output_size,
                std::optional<ArrayRef<double>> scale_factors, std::vector<std::optional<double>> scales, ResampleMode mode,
                bool align_corners) {
  EMBER_CHECK(input.dim() == spatial + 2, op, "Non-empty ", spatial + 2, "D data tensor expected but got a tensor with sizes ",
              input.sizes());
  EMBER_CHECK(is_floating_type(input.dtype()) || mode == ResampleMode::Nearest, op, "\"", op, "\" not implemented for '",
              input.dtype(), "'");
  EMBER_CHECK(output_size.has_value() != scale_factors.has_value(), op,
              "Must specify exactly one of output_size and scale_factors");
  std::vector<int64_t> out(static_cast<size_t>(spatial));
  if (output_size) {
    EMBER_CHECK(static_cast<int64_t>(output_size->size()) == spatial, op, "It is expected output_size equals to ", spatial,
                ", but got size ", output_size->size());
    for (int64_t i = 0; i < spatial; ++i) out[static_cast<size_t>(i)] = (*output_size)[i];
  } else {
    EMBER_CHECK(static_cast<int64_t>(scale_factors->size()) == spatial, op, "It is expected scale_factors equals to ",
                spatial, ", but got size ", scale_factors->size());
    for (int64_t i = 0; i < spatial; ++i) {
      const double f = (*scale_factors)[i];
      out[static_cast<size_t>(i)] = static_cast<int64_t>(std::floor(static_cast<double>(input.size(2 + i)) * f));
      scales[static_cast<size_t>(i)] = f;
    }
  }
  for (int64_t i = 0; i < spatial; ++i) {
    EMBER_CHECK(input.size(2 + i) > 0 && out[static_cast<size_t>(i)] > 0, op,
                "Input and output sizes should be greater than 0, but got input (", input.sizes(), ") and output (",
                IntArrayRef(out), ")");
  }
  Tensor r = input;
  for (int64_t i = 0; i < spatial; ++i) {
    r = resample(r, 2 + i, out[static_cast<size_t>(i)], mode, align_corners, scales[static_cast<size_t>(i)]);
  }
  return r;
}

}  // namespace

Tensor upsample_nearest1d(const Tensor& input, OptionalIntArrayRef output_size, std::optional<ArrayRef<double>> scale_factors) {
  return upsample("upsample_nearest1d", input, 1, output_size, scale_factors, {std::nullopt}, ResampleMode::Nearest, false);
}
Tensor upsample_nearest1d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales) {
  return upsample("upsample_nearest1d", self, 1, output_size, std::nullopt, {scales}, ResampleMode::Nearest, false);
}
Tensor upsample_nearest2d(const Tensor& input, OptionalIntArrayRef output_size, std::optional<ArrayRef<double>> scale_factors) {
  return upsample("upsample_nearest2d", input, 2, output_size, scale_factors, {std::nullopt, std::nullopt}, ResampleMode::Nearest,
                  false);
}
Tensor upsample_nearest2d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_h,
                          std::optional<double> scales_w) {
  return upsample("upsample_nearest2d", self, 2, output_size, std::nullopt, {scales_h, scales_w}, ResampleMode::Nearest, false);
}
Tensor upsample_nearest3d(const Tensor& input, OptionalIntArrayRef output_size, std::optional<ArrayRef<double>> scale_factors) {
  return upsample("upsample_nearest3d", input, 3, output_size, scale_factors, {std::nullopt, std::nullopt, std::nullopt},
                  ResampleMode::Nearest, false);
}
Tensor upsample_nearest3d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_d,
                          std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample("upsample_nearest3d", self, 3, output_size, std::nullopt, {scales_d, scales_h, scales_w}, ResampleMode::Nearest,
                  false);
}
Tensor upsample_linear1d(const Tensor& input, OptionalIntArrayRef output_size, bool align_corners,
                         std::optional<ArrayRef<double>> scale_factors) {
  return upsample("upsample_linear1d", input, 1, output_size, scale_factors, {std::nullopt}, ResampleMode::Linear, align_corners);
}
Tensor upsample_linear1d(const Tensor& self, IntArrayRef output_size, bool align_corners, std::optional<double> scales) {
  return upsample("upsample_linear1d", self, 1, output_size, std::nullopt, {scales}, ResampleMode::Linear, align_corners);
}
Tensor upsample_bilinear2d(const Tensor& input, OptionalIntArrayRef output_size, bool align_corners,
                           std::optional<ArrayRef<double>> scale_factors) {
  return upsample("upsample_bilinear2d", input, 2, output_size, scale_factors, {std::nullopt, std::nullopt}, ResampleMode::Linear,
                  align_corners);
}
Tensor upsample_bilinear2d(const Tensor& self, IntArrayRef output_size, bool align_corners, std::optional<double> scales_h,
                           std::optional<double> scales_w) {
  return upsample("upsample_bilinear2d", self, 2, output_size, std::nullopt, {scales_h, scales_w}, ResampleMode::Linear,
                  align_corners);
}
Tensor upsample_bicubic2d(const Tensor& input, OptionalIntArrayRef output_size, bool align_corners,
                          std::optional<ArrayRef<double>> scale_factors) {
  return upsample("upsample_bicubic2d", input, 2, output_size, scale_factors, {std::nullopt, std::nullopt}, ResampleMode::Cubic,
                  align_corners);
}
Tensor upsample_bicubic2d(const Tensor& self, IntArrayRef output_size, bool align_corners, std::optional<double> scales_h,
                          std::optional<double> scales_w) {
  return upsample("upsample_bicubic2d", self, 2, output_size, std::nullopt, {scales_h, scales_w}, ResampleMode::Cubic, align_corners);
}
Tensor upsample_trilinear3d(const Tensor& input, OptionalIntArrayRef output_size, bool align_corners,
                            std::optional<ArrayRef<double>> scale_factors) {
  return upsample("upsample_trilinear3d", input, 3, output_size, scale_factors, {std::nullopt, std::nullopt, std::nullopt},
                  ResampleMode::Linear, align_corners);
}
Tensor upsample_trilinear3d(const Tensor& self, IntArrayRef output_size, bool align_corners, std::optional<double> scales_d,
                            std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample("upsample_trilinear3d", self, 3, output_size, std::nullopt, {scales_d, scales_h, scales_w}, ResampleMode::Linear,
                  align_corners);
}

}  // namespace ember
