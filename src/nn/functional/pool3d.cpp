// 3-D pooling as compositions of differentiable ops (Ember has no 3-D pooling kernels): the
// windows of max and average pooling are Tensor::unfold views of the padded input, reduced over
// their last three dims; adaptive pooling is separable, one 1-D adaptive pool per spatial dim.
#include <algorithm>
#include <limits>
#include <utility>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/nn/modules/pooling.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"

namespace ember::nn::functional {
namespace {

struct Geometry {
  int64_t in[3], out[3], pad_right[3], span[3];
};

// PyTorch's pooling_output_shape per dim, and the padding past the right end that ceil_mode's
// last window needs.
Geometry geometry(const char* op, const Tensor& x, const ExpandingArray<3>& k, const ExpandingArray<3>& s,
                  const ExpandingArray<3>& p, const ExpandingArray<3>& d, bool ceil_mode) {
  Geometry g{};
  for (int i = 0; i < 3; ++i) {
    EMBER_CHECK(k[i] > 0 && s[i] > 0 && d[i] > 0, op, "kernel_size, stride and dilation must be positive, got ",
                k, ", ", s, " and ", d);
    g.in[i] = x.size(2 + i);
    g.span[i] = d[i] * (k[i] - 1) + 1;
    EMBER_CHECK(p[i] >= 0 && p[i] <= g.span[i] / 2, op,
                "pad should be at most half of effective kernel size, but got pad=", p[i], ", kernel_size=", k[i],
                " and dilation=", d[i]);
    const int64_t num = g.in[i] + 2 * p[i] - g.span[i] + (ceil_mode ? s[i] - 1 : 0);
    int64_t out = (num >= 0 ? num / s[i] : -((-num + s[i] - 1) / s[i])) + 1;
    if (ceil_mode && (out - 1) * s[i] >= g.in[i] + p[i]) --out;
    EMBER_CHECK(out >= 1, op, "Given input size ", x.sizes(), ", the calculated output size is too small (", out, ")");
    g.out[i] = out;
    g.pad_right[i] = std::max<int64_t>(0, (out - 1) * s[i] + g.span[i] - (g.in[i] + 2 * p[i]));
  }
  return g;
}

// (N, C, oD, oH, oW, kd, kh, kw) windows of x padded with `value`.
Tensor windows(const Tensor& x, const Geometry& g, const ExpandingArray<3>& s, const ExpandingArray<3>& p,
               const ExpandingArray<3>& d, double value) {
  Tensor w = ember::pad(x, {p[2], p[2] + g.pad_right[2], p[1], p[1] + g.pad_right[1], p[0], p[0] + g.pad_right[0]},
                        "constant", value);
  for (int i = 0; i < 3; ++i) w = w.unfold(2 + i, g.span[i], s[i]).narrow(2 + i, 0, g.out[i]);
  for (int i = 0; i < 3; ++i) {
    if (d[i] > 1) w = w.slice(5 + i, 0, std::nullopt, d[i]);
  }
  return w;
}

Tensor batched(const char* op, const Tensor& input) {
  EMBER_CHECK(input.defined() && (input.dim() == 4 || input.dim() == 5), op,
              "non-empty 4D or 5D (batch mode) tensor expected for input, got ",
              input.defined() ? input.sizes() : IntArrayRef());
  return input.dim() == 4 ? input.unsqueeze(0) : input;
}

Tensor unbatched_like(const Tensor& input, const Tensor& out) { return input.dim() == 4 ? out.squeeze(0) : out; }

// One 1-D adaptive pool along `dim`: the dim moved last, pooled over (M, 1, L).
Tensor adaptive_avg_along(const Tensor& t, int64_t dim, int64_t out) {
  const Tensor m = t.movedim(dim, -1);
  DimVector shape(m.sizes());
  const Tensor r = ember::adaptive_avg_pool1d(m.reshape({-1, 1, shape.back()}), {out});
  shape.back() = out;
  return r.reshape(shape).movedim(-1, dim);
}
std::tuple<Tensor, Tensor> adaptive_max_along(const Tensor& t, int64_t dim, int64_t out) {
  const Tensor m = t.movedim(dim, -1);
  DimVector shape(m.sizes());
  auto [v, i] = ember::adaptive_max_pool2d(m.reshape({-1, 1, 1, shape.back()}), {1, out});
  shape.back() = out;
  return {v.reshape(shape).movedim(-1, dim), i.reshape(shape).movedim(-1, dim)};
}

DimVector adaptive_size(const char* op, const Tensor& x, const ExpandingArrayWithOptionalElem<3>& size) {
  DimVector out;
  for (int i = 0; i < 3; ++i) {
    const int64_t s = size[i].value_or(x.size(2 + i));
    EMBER_CHECK(s >= 0, op, "output_size must be non-negative, got ", size);
    out.push_back(s);
  }
  return out;
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, const MaxPool3dFuncOptions& o) {
  const Tensor x = batched("max_pool3d", input);
  const Geometry g = geometry("max_pool3d", x, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
  const auto& k = o.kernel_size();
  const Tensor w = windows(x, g, o.stride(), o.padding(), o.dilation(), -std::numeric_limits<double>::infinity());
  const int64_t n = x.size(0), c = x.size(1);
  auto [values, arg] = w.reshape({n, c, g.out[0], g.out[1], g.out[2], k[0] * k[1] * k[2]}).max(-1);
  // The window offset (a_d, a_h, a_w) of the maximum, back to a flat position in the input's volume.
  Tensor pos[3];
  const Tensor offset[3] = {arg.floor_divide(k[1] * k[2]), arg.floor_divide(k[2]).remainder(k[1]), arg.remainder(k[2])};
  for (int i = 0; i < 3; ++i) {
    DimVector shape{g.out[i], 1, 1};
    std::swap(shape[0], shape[i]);
    const Tensor start = (arange(g.out[i]) * o.stride()[i] - o.padding()[i]).view(shape);
    pos[i] = start + offset[i] * o.dilation()[i];
  }
  const Tensor indices = (pos[0] * g.in[1] + pos[1]) * g.in[2] + pos[2];
  return {unbatched_like(input, values), unbatched_like(input, indices)};
}

Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& options) {
  return std::get<0>(max_pool3d_with_indices(input, options));
}

Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& o) {
  const Tensor x = batched("avg_pool3d", input);
  const ExpandingArray<3> one(1);
  const Geometry g = geometry("avg_pool3d", x, o.kernel_size(), o.stride(), o.padding(), one, o.ceil_mode());
  const Tensor sums = windows(x, g, o.stride(), o.padding(), one, 0.0).sum({5, 6, 7});
  if (o.divisor_override()) {
    EMBER_CHECK(*o.divisor_override() != 0, "avg_pool3d", "divisor must be not zero");
    return unbatched_like(input, sums / static_cast<double>(*o.divisor_override()));
  }
  // Each window's element count: those inside the padded extent (count_include_pad, as PyTorch
  // clips windows to it) or inside the input.
  Tensor count;
  {
    NoGradGuard no_grad;
    const auto& p = o.padding();
    const TensorOptions opts = TensorOptions().dtype(x.dtype());
    const Tensor inside = o.count_include_pad()
                              ? ones({1, 1, g.in[0] + 2 * p[0], g.in[1] + 2 * p[1], g.in[2] + 2 * p[2]}, opts)
                              : ember::pad(ones({1, 1, g.in[0], g.in[1], g.in[2]}, opts),
                                           {p[2], p[2], p[1], p[1], p[0], p[0]});
    Geometry gc = g;
    for (int i = 0; i < 3; ++i) gc.in[i] = inside.size(2 + i);
    count = windows(inside, gc, o.stride(), ExpandingArray<3>(0), one, 0.0).sum({5, 6, 7});
  }
  return unbatched_like(input, sums / count);
}

Tensor adaptive_avg_pool3d(const Tensor& input, const AdaptiveAvgPool3dFuncOptions& o) {
  const Tensor x = batched("adaptive_avg_pool3d", input);
  const DimVector out = adaptive_size("adaptive_avg_pool3d", x, o.output_size());
  Tensor y = x;
  for (int i = 2; i >= 0; --i) y = adaptive_avg_along(y, 2 + i, out[i]);
  return unbatched_like(input, y);
}

std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool3dFuncOptions& o) {
  const Tensor x = batched("adaptive_max_pool3d", input);
  const DimVector out = adaptive_size("adaptive_max_pool3d", x, o.output_size());
  // Max over W, then H, then D; each stage's positions are carried through the later choices.
  auto [v1, iw] = adaptive_max_along(x, 4, out[2]);
  auto [v2, ih] = adaptive_max_along(v1, 3, out[1]);
  const Tensor iw2 = iw.gather(3, ih);
  auto [v3, id] = adaptive_max_along(v2, 2, out[0]);
  const Tensor indices = (id * x.size(3) + ih.gather(2, id)) * x.size(4) + iw2.gather(2, id);
  return {unbatched_like(input, v3), unbatched_like(input, indices)};
}

Tensor adaptive_max_pool3d(const Tensor& input, const AdaptiveMaxPool3dFuncOptions& options) {
  return std::get<0>(adaptive_max_pool3d_with_indices(input, options));
}

}  // namespace ember::nn::functional
