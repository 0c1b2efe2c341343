// Fractional max pooling (2-D and 3-D) as a composition: the window starts of each plane come from
// its random sample as PyTorch's kernels compute them, every window element is gathered by its
// flat position, and the maximum over each window is taken, so autograd comes from gather and max.
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "ember/error.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/nn_ops.h"
#include "ember/reduce.h"
#include "ember/shape.h"

namespace ember {
namespace {

// The starts of `out` windows of `pool` over `in` positions for one sample u in [0, 1), in the
// input's floating type T as PyTorch computes them: the last window ends at the input's end.
template <class T>
void window_starts(T u, int64_t in, int64_t out, int64_t pool, int64_t* starts) {
  if (out > 1) {
    const T alpha = static_cast<T>(in - pool) / static_cast<T>(out - 1);
    for (int64_t i = 0; i < out - 1; ++i)
      starts[i] = static_cast<int64_t>((static_cast<T>(i) + u) * alpha) - static_cast<int64_t>(u * alpha);
  }
  if (out > 0) starts[out - 1] = in - pool;
}

template <size_t D>
std::tuple<Tensor, Tensor> fractional_max_pool(const char* op, const Tensor& input, IntArrayRef kernel,
                                               IntArrayRef output_size, const Tensor& samples) {
  static constexpr const char* kDimName[3][3] = {{}, {"height", "width"}, {"time", "height", "width"}};
  const std::vector<const char*> names(kDimName[D - 1], kDimName[D - 1] + D);
  EMBER_CHECK(input.defined(), op, "input is undefined");
  const int64_t dims = input.dim();
  EMBER_CHECK(dims == D + 1 || dims == D + 2, op, "Expected ", D + 1, "D or ", D + 2, "D tensor, but got: ",
              input.sizes());
  for (int64_t d = dims == D + 2 ? 1 : 0; d < dims; ++d)
    EMBER_CHECK(input.size(d) > 0, op, "Expected input to have non-zero size for non-batch dimensions, but got ",
                input.sizes());
  EMBER_CHECK(kernel.size() == D, op, "kernel_size must have ", D, " elements, got ", kernel.size());
  EMBER_CHECK(output_size.size() == D, op, "output_size must have ", D, " elements, got ", output_size.size());
  EMBER_CHECK(is_floating_type(input.dtype()), op, "expected a floating-point input, got ", input.dtype());
  const bool batched = dims == D + 2;
  const Tensor x = batched ? input : input.unsqueeze(0);
  const int64_t n = x.size(0), c = x.size(1);
  int64_t plane = 1, windows = 1, window = 1;
  std::vector<int64_t> in(D), out_sizes{n, c};
  for (size_t k = 0; k < D; ++k) {
    in[k] = x.size(static_cast<int64_t>(k) + 2);
    EMBER_CHECK(kernel[k] > 0 && output_size[k] >= 0, op, "kernel_size must be positive and output_size non-negative");
    EMBER_CHECK(output_size[k] + kernel[k] - 1 <= in[k], op, "pool ", names[k], " ", kernel[k],
                " too large relative to input ", names[k], " ", in[k]);
    plane *= in[k];
    windows *= output_size[k];
    window *= kernel[k];
    out_sizes.push_back(output_size[k]);
  }
  EMBER_CHECK(samples.defined() && samples.dim() == 3 && samples.size(0) == n && samples.size(1) == c &&
                  samples.size(2) == static_cast<int64_t>(D),
              op, "random_samples must have shape [", n, ", ", c, ", ", D, "], got ",
              samples.defined() ? samples.sizes() : IntArrayRef{});
  EMBER_CHECK(samples.dtype() == input.dtype(), op, "random_samples has dtype ", samples.dtype(),
              " but the input ", input.dtype());

  // PyTorch's kernels read the samples in this order: 2-D (width, height), 3-D (time, height, width).
  const size_t sample_of[3][3] = {{0}, {1, 0}, {0, 1, 2}};
  const Tensor u = samples.to(kDouble).contiguous();
  const double* up = u.data_ptr<double>();
  Tensor index = empty({n, c, windows, window}, TensorOptions().dtype(kLong));
  int64_t* ip = index.data_ptr<int64_t>();
  std::vector<std::vector<int64_t>> starts(D);
  for (size_t k = 0; k < D; ++k) starts[k].resize(static_cast<size_t>(output_size[k]));
  for (int64_t p = 0; p < n * c; ++p) {
    for (size_t k = 0; k < D; ++k) {
      const double s = up[p * static_cast<int64_t>(D) + static_cast<int64_t>(sample_of[D - 1][k])];
      if (input.dtype() == kDouble) {
        window_starts<double>(s, in[k], output_size[k], kernel[k], starts[k].data());
      } else {
        window_starts<float>(static_cast<float>(s), in[k], output_size[k], kernel[k], starts[k].data());
      }
    }
    // windows in row-major order of the output; within each, elements in row-major order
    for (int64_t w = 0; w < windows; ++w) {
      int64_t o[3] = {}, rest = w;
      for (size_t k = D; k-- > 0;) {
        o[k] = rest % output_size[k];
        rest /= output_size[k];
      }
      for (int64_t e = 0; e < window; ++e) {
        int64_t flat = 0, erest = e, j[3] = {};
        for (size_t k = D; k-- > 0;) {
          j[k] = erest % kernel[k];
          erest /= kernel[k];
        }
        for (size_t k = 0; k < D; ++k) flat = flat * in[k] + starts[k][static_cast<size_t>(o[k])] + j[k];
        *ip++ = flat;
      }
    }
  }
  const Tensor gathered = x.reshape({n, c, plane}).gather(2, index.view({n, c, windows * window}));
  auto [values, arg] = gathered.view({n, c, windows, window}).max(3);
  Tensor indices = index.gather(3, arg.unsqueeze(3)).squeeze(3);
  values = values.view(out_sizes);
  indices = indices.view(out_sizes);
  if (!batched) return {values.squeeze(0), indices.squeeze(0)};
  return {values, indices};
}

}  // namespace

std::tuple<Tensor, Tensor> fractional_max_pool2d(const Tensor& input, IntArrayRef kernel_size,
                                                 IntArrayRef output_size, const Tensor& random_samples) {
  return fractional_max_pool<2>("fractional_max_pool2d", input, kernel_size, output_size, random_samples);
}

std::tuple<Tensor, Tensor> fractional_max_pool3d(const Tensor& input, IntArrayRef kernel_size,
                                                 IntArrayRef output_size, const Tensor& random_samples) {
  return fractional_max_pool<3>("fractional_max_pool3d", input, kernel_size, output_size, random_samples);
}

}  // namespace ember
