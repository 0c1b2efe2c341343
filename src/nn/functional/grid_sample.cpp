// F::affine_grid and F::grid_sample (4-D input) as compositions: the sampling positions are
// unnormalized from [-1, 1], padded (zeros: out-of-range corners count 0; border: clipped;
// reflection: mirrored, then clipped), and the corners gathered from the flattened planes. The
// floor of each position is detached, so the gradient for the grid is the bilinear weights'.
#include "ember/nn/functional/vision.h"

#include <vector>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/linalg.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/shape.h"

namespace ember::nn::functional {
namespace {

// Normalized coordinates of `size` points along one dim, as PyTorch's affine_grid base.
Tensor base_coords(int64_t size, bool align_corners, ScalarType dtype) {
  const TensorOptions o = TensorOptions().dtype(dtype);
  if (size <= 1) return zeros({size}, o);
  Tensor t = linspace(-1, 1, size, o);
  return align_corners ? t : t * (static_cast<double>(size - 1) / static_cast<double>(size));
}

// PyTorch's reflect_coordinates: mirrors x into [twice_low / 2, twice_high / 2].
Tensor reflect(const Tensor& x, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return zeros_like(x);
  const double min = static_cast<double>(twice_low) / 2, span = static_cast<double>(twice_high - twice_low) / 2;
  const Tensor in = (x - min).abs();
  const Tensor extra = in.fmod(span);
  const Tensor even = (in.detach() / span).floor().fmod(2) == 0;
  return where(even, extra + min, span - extra + min);
}

// The input-space position of normalized coordinate g along a dim of `size`.
Tensor source_index(const Tensor& g, int64_t size, bool align, int padding) {
  Tensor x = align ? (g + 1) / 2 * static_cast<double>(size - 1) : ((g + 1) * static_cast<double>(size) - 1) / 2;
  if (padding == 2) x = align ? reflect(x, 0, 2 * (size - 1)) : reflect(x, -1, 2 * size - 1);
  if (padding >= 1) x = x.clamp(0.0, static_cast<double>(size - 1));
  return x;
}

}  // namespace

Tensor affine_grid(const Tensor& theta, const IntArrayRef& size, bool align_corners) {
  EMBER_CHECK(theta.defined() && is_floating_type(theta.dtype()), "affine_grid",
              "Expected theta to have floating point type");
  if (size.size() == 4) {
    EMBER_CHECK(theta.dim() == 3 && theta.size(1) == 2 && theta.size(2) == 3, "affine_grid",
                "Expected a batch of 2D affine matrices of shape Nx2x3 for size ", size, ". Got ", theta.sizes(), ".");
  } else {
    EMBER_CHECK(size.size() == 5 && theta.dim() == 3 && theta.size(1) == 3 && theta.size(2) == 4, "affine_grid",
                "Expected a batch of 3D affine matrices of shape Nx3x4 for size ", size, ". Got ", theta.sizes(), ".");
  }
  EMBER_CHECK(theta.size(0) == size[0], "affine_grid", "Expected theta's batch size ", theta.size(0),
              " to match size[0] = ", size[0]);
  const ScalarType dt = theta.dtype();
  const int64_t n = size[0];
  // Base grid (..., spatial dims, D + 1) of [x, y(, z), 1], x along the last dim.
  std::vector<Tensor> comps;
  const int64_t d = static_cast<int64_t>(size.size()) - 2;
  DimVector spatial(IntArrayRef(size.data() + 2, static_cast<size_t>(d)));
  for (int64_t i = 0; i < d; ++i) {
    const int64_t axis = d - 1 - i;  // x is the last spatial dim
    DimVector view(static_cast<size_t>(d), 1);
    view[axis] = spatial[axis];
    comps.push_back(base_coords(spatial[axis], align_corners, dt).view(view).expand(spatial));
  }
  comps.push_back(ones(spatial, TensorOptions().dtype(dt)));
  const Tensor base = stack(comps, -1).reshape({1, -1, d + 1});
  DimVector out{n};
  for (int64_t s : spatial) out.push_back(s);
  out.push_back(d);
  return matmul(base, theta.transpose(1, 2)).view(out);
}

Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& o) {
  EMBER_CHECK(input.defined() && grid.defined() && input.dim() == 4 && grid.dim() == 4 && grid.size(3) == 2,
              "grid_sample", "expected a 4-D input and a (N, H_out, W_out, 2) grid (5-D inputs are not supported), got ",
              input.defined() ? input.sizes() : IntArrayRef(), " and ", grid.defined() ? grid.sizes() : IntArrayRef());
  EMBER_CHECK(input.size(0) == grid.size(0), "grid_sample",
              "grid_sampler(): expected grid and input to have same batch size, but got input with sizes ",
              input.sizes(), " and grid with sizes ", grid.sizes());
  const bool align = o.align_corners().value_or(false);
  const int padding = std::holds_alternative<enumtype::kZeros>(o.padding_mode()) ? 0
                      : std::holds_alternative<enumtype::kBorder>(o.padding_mode()) ? 1
                                                                                    : 2;
  const int64_t n = input.size(0), c = input.size(1), h = input.size(2), w = input.size(3);
  const int64_t ho = grid.size(1), wo = grid.size(2);
  const Tensor ix = source_index(grid.select(3, 0), w, align, padding);
  const Tensor iy = source_index(grid.select(3, 1), h, align, padding);
  const Tensor planes = input.reshape({n, c, h * w});
  // The values at integer positions (x, y), zero outside the input.
  auto corner = [&](const Tensor& x, const Tensor& y) {
    const Tensor inside = ((x >= 0) & (x <= w - 1) & (y >= 0) & (y <= h - 1));
    const Tensor flat = (y.clamp(0, h - 1) * w + x.clamp(0, w - 1)).to(kLong).reshape({n, 1, ho * wo});
    const Tensor v = planes.gather(2, flat.expand({n, c, ho * wo})).view({n, c, ho, wo});
    return v * inside.to(input.dtype()).unsqueeze(1);
  };
  if (std::holds_alternative<enumtype::kNearest>(o.mode())) return corner(ix.detach().round(), iy.detach().round());
  const Tensor x0 = ix.detach().floor(), y0 = iy.detach().floor();
  const Tensor wx = (ix - x0).unsqueeze(1), wy = (iy - y0).unsqueeze(1);
  return corner(x0, y0) * (1 - wx) * (1 - wy) + corner(x0 + 1, y0) * wx * (1 - wy) +
         corner(x0, y0 + 1) * (1 - wx) * wy + corner(x0 + 1, y0 + 1) * wx * wy;
}

}  // namespace ember::nn::functional
