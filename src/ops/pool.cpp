// Pooling: max (with PyTorch's flat per-plane indices, NaN-propagating), average (padding
// counted or not, divisor_override, ceil_mode) and adaptive average/max. 1-D pooling is 2-D
// pooling over a height of one. Outputs keep the input's layout (channels_last in, out).
#include <cmath>

#include "dispatch/dispatch.h"
#include "ember/nn_ops.h"
#include "kernels/cpu/pool_kernels.h"

namespace ember {
namespace nn::functional {
namespace {

using kernels::PoolAxis;

struct PoolParams {
  int64_t kernel[2], stride[2], padding[2], dilation[2];
  bool ceil_mode = false;
};

// One value for every spatial dim or one per dim; `allow_empty` for stride (empty = kernel).
void expand(const char* op, const char* what, IntArrayRef v, int64_t nd, int64_t* dst, bool allow_empty,
            const int64_t* fallback = nullptr) {
  if (v.empty() && allow_empty) {
    for (int64_t d = 0; d < nd; ++d) dst[2 - nd + d] = fallback[2 - nd + d];
    return;
  }
  EMBER_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == nd, op, what, " must either be ",
              allow_empty ? "omitted, " : "", "a single int, or a tuple of ", nd, " ints, but got ", v);
  for (int64_t d = 0; d < nd; ++d) dst[2 - nd + d] = v.size() == 1 ? v[0] : v[d];
}

PoolParams pool_params(const char* op, int64_t nd, IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding,
                       IntArrayRef dilation, bool ceil_mode) {
  PoolParams p{{1, 1}, {1, 1}, {0, 0}, {1, 1}, ceil_mode};
  expand(op, "kernel_size", kernel, nd, p.kernel, false);
  expand(op, "stride", stride, nd, p.stride, true, p.kernel);
  expand(op, "padding", padding, nd, p.padding, false);
  expand(op, "dilation", dilation, nd, p.dilation, false);
  EMBER_CHECK(p.kernel[0] > 0 && p.kernel[1] > 0, op, "kernel size should be greater than zero, but got kH: ",
              p.kernel[0], " kW: ", p.kernel[1]);
  EMBER_CHECK(p.stride[0] > 0 && p.stride[1] > 0, op, "stride should be greater than zero, but got dH: ", p.stride[0],
              " dW: ", p.stride[1]);
  EMBER_CHECK(p.dilation[0] > 0 && p.dilation[1] > 0, op, "dilation should be greater than zero, but got dilationH: ",
              p.dilation[0], " dilationW: ", p.dilation[1]);
  EMBER_CHECK(p.padding[0] >= 0 && p.padding[1] >= 0, op, "pad must be non-negative, but got padH: ", p.padding[0],
              " padW: ", p.padding[1]);
  EMBER_CHECK(p.padding[0] <= p.kernel[0] / 2 && p.padding[1] <= p.kernel[1] / 2, op,
              "pad should be smaller than or equal to half of kernel size, but got padW = ", p.padding[1],
              ", padH = ", p.padding[0], ", kW = ", p.kernel[1], ", kH = ", p.kernel[0]);
  return p;
}

int64_t div_floor(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// PyTorch's pooling_output_shape: in ceil mode the last window must start inside the input or
// its left padding.
int64_t output_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  int64_t out = div_floor(in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0), stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

PoolAxis window_axis(int64_t in, int64_t out, int64_t k, int64_t pad, int64_t stride, int64_t dil) {
  PoolAxis a;
  a.step = dil;
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = o * stride - pad;
    const int64_t end = std::min(start + (k - 1) * dil + 1, in);
    a.extent.push_back(std::min(start + k, in + pad) - start);
    while (start < 0) start += dil;
    a.begin.push_back(start);
    a.end.push_back(end);
  }
  return a;
}

PoolAxis adaptive_axis(int64_t in, int64_t out) {
  PoolAxis a;
  for (int64_t o = 0; o < out; ++o) {
    a.begin.push_back(o * in / out);
    a.end.push_back(((o + 1) * in + out - 1) / out);
    a.extent.push_back(a.end.back() - a.begin.back());
  }
  return a;
}

// The input as (N, C, H, W): 1-D inputs get a height of one, unbatched ones a batch of one.
struct Planes {
  Tensor x;  // 4-D view of the input
  int64_t nd;
  bool batched;
};

Planes as_planes(const char* op, const Tensor& input, int64_t nd) {
  const int64_t dim = input.dim();
  bool valid = dim == nd + 1 || dim == nd + 2;
  for (int64_t d = dim - nd - 1; valid && d < dim; ++d) valid = input.size(d) > 0;
  EMBER_CHECK(valid, op, "Expected ", nd + 1, "D or ", nd + 2,
              "D (batch mode) tensor with optional 0 dim batch size for input, but got:", input.sizes());
  EMBER_CHECK(is_floating_type(input.dtype()), op, "\"", op, "\" not implemented for '", input.dtype(), "'");
  Tensor x = dim == nd + 2 ? input : input.unsqueeze(0);
  if (nd == 1) x = x.unsqueeze(2);
  return {x, nd, dim == nd + 2};
}

// Runs `kernel(in3, out3)` over contiguous (planes, H, W) views and returns the output in the
// input's shape convention and layout.
template <class K>
Tensor run_planes(const Planes& p, int64_t oH, int64_t oW, ScalarType dtype, const K& kernel) {
  const Tensor& x = p.x;
  const int64_t N = x.size(0), C = x.size(1);
  Tensor out = make_empty({N, C, oH, oW}, dtype);
  if (out.numel() > 0) {
    kernel(x.contiguous().view({N * C, x.size(2), x.size(3)}), out.view({N * C, oH, oW}));
  }
  if (p.nd == 2 && x.suggest_memory_format() == MemoryFormat::ChannelsLast) {
    out = out.contiguous(MemoryFormat::ChannelsLast);
  }
  if (p.nd == 1) out = out.squeeze(2);
  return p.batched ? out : out.squeeze(0);
}

void check_output(const char* op, const Planes& p, int64_t oH, int64_t oW) {
  EMBER_CHECK(oH >= 1 && oW >= 1, op, "Given input size: (", p.x.size(1), "x", p.x.size(2), "x", p.x.size(3),
              "). Calculated output size: (", p.x.size(1), "x", oH, "x", oW, "). Output size is too small");
}

std::tuple<Tensor, Tensor> max_pool(const char* op, int64_t nd, const Tensor& input, IntArrayRef kernel,
                                    IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                    bool with_indices) {
  const PoolParams pp = pool_params(op, nd, kernel, stride, padding, dilation, ceil_mode);
  const Planes p = as_planes(op, input, nd);
  const int64_t H = p.x.size(2), W = p.x.size(3);
  const int64_t oH = output_size(H, pp.kernel[0], pp.padding[0], pp.stride[0], pp.dilation[0], ceil_mode);
  const int64_t oW = output_size(W, pp.kernel[1], pp.padding[1], pp.stride[1], pp.dilation[1], ceil_mode);
  check_output(op, p, oH, oW);
  const PoolAxis ah = window_axis(H, oH, pp.kernel[0], pp.padding[0], pp.stride[0], pp.dilation[0]);
  const PoolAxis aw = window_axis(W, oW, pp.kernel[1], pp.padding[1], pp.stride[1], pp.dilation[1]);
  Tensor indices;
  Tensor out = run_planes(p, oH, oW, input.dtype(), [&](const Tensor& in3, const Tensor& out3) {
    Tensor idx3 = with_indices ? make_empty(out3.sizes(), kLong) : Tensor();
    kernels::max_pool_kernel(in3, out3, idx3, ah, aw);
    if (with_indices) indices = idx3;
  });
  if (with_indices) {
    indices = indices.defined() ? indices.view(out.sizes()) : make_empty(out.sizes(), kLong);
    if (out.dim() == 4 && out.suggest_memory_format() == MemoryFormat::ChannelsLast) {
      indices = indices.contiguous(MemoryFormat::ChannelsLast);
    }
  }
  return {out, indices};
}

template <int ND>
struct MaxPoolOp {
  static constexpr const char* name = ND == 1 ? "max_pool1d" : "max_pool2d";
  static Tensor run(const Tensor& input, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d, bool ceil) {
    return std::get<0>(max_pool(name, ND, input, k, s, p, d, ceil, false));
  }
};
template <int ND>
struct MaxPoolWithIndicesOp {
  static constexpr const char* name = ND == 1 ? "max_pool1d_with_indices" : "max_pool2d_with_indices";
  static std::tuple<Tensor, Tensor> run(const Tensor& input, IntArrayRef k, IntArrayRef s, IntArrayRef p,
                                        IntArrayRef d, bool ceil) {
    return max_pool(name, ND, input, k, s, p, d, ceil, true);
  }
};

template <int ND>
struct AvgPoolOp {
  static constexpr const char* name = ND == 1 ? "avg_pool1d" : "avg_pool2d";
  static Tensor run(const Tensor& input, IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                    bool count_include_pad, std::optional<int64_t> divisor_override) {
    EMBER_CHECK(!divisor_override || *divisor_override != 0, name, "divisor must be not zero");
    const PoolParams pp = pool_params(name, ND, kernel, stride, padding, 1, ceil_mode);
    const Planes p = as_planes(name, input, ND);
    const int64_t H = p.x.size(2), W = p.x.size(3);
    const int64_t oH = output_size(H, pp.kernel[0], pp.padding[0], pp.stride[0], 1, ceil_mode);
    const int64_t oW = output_size(W, pp.kernel[1], pp.padding[1], pp.stride[1], 1, ceil_mode);
    check_output(name, p, oH, oW);
    const PoolAxis ah = window_axis(H, oH, pp.kernel[0], pp.padding[0], pp.stride[0], 1);
    const PoolAxis aw = window_axis(W, oW, pp.kernel[1], pp.padding[1], pp.stride[1], 1);
    return run_planes(p, oH, oW, input.dtype(), [&](const Tensor& in3, const Tensor& out3) {
      kernels::avg_pool_kernel(in3, out3, ah, aw, count_include_pad, divisor_override.value_or(0));
    });
  }
};

// Adaptive pooling: output cell o of an axis reads [floor(o * in / out), ceil((o + 1) * in / out)).
Planes adaptive_planes(const char* op, const Tensor& input, IntArrayRef output_size, int64_t nd) {
  EMBER_CHECK(static_cast<int64_t>(output_size.size()) == nd, op, "output_size must be ", nd);
  for (int64_t s : output_size)
    EMBER_CHECK(s >= 0, op, "elements of output_size must be greater than or equal to 0 but received {",
                output_size, "}");
  const int64_t dim = input.dim();
  EMBER_CHECK(dim == nd + 1 || dim == nd + 2, op, "Expected ", nd + 1, "D or ", nd + 2, "D tensor, but got ",
              input.sizes());
  for (int64_t d = dim - nd - 1; d < dim; ++d)
    EMBER_CHECK(input.size(d) > 0, op, "Expected input to have non-zero size for non-batch dimensions, but input has sizes ",
                input.sizes(), " with dimension ", d, " being empty");
  return as_planes(op, input, nd);
}

template <int ND>
struct AdaptiveAvgPoolOp {
  static constexpr const char* name = ND == 1 ? "adaptive_avg_pool1d" : "adaptive_avg_pool2d";
  static Tensor run(const Tensor& input, IntArrayRef output_size) {
    const Planes p = adaptive_planes(name, input, output_size, ND);
    const int64_t oH = ND == 1 ? 1 : output_size[0], oW = output_size[ND - 1];
    const PoolAxis ah = adaptive_axis(p.x.size(2), oH), aw = adaptive_axis(p.x.size(3), oW);
    return run_planes(p, oH, oW, input.dtype(), [&](const Tensor& in3, const Tensor& out3) {
      kernels::avg_pool_kernel(in3, out3, ah, aw, false, 0);
    });
  }
};

struct AdaptiveMaxPool2dOp {
  static constexpr const char* name = "adaptive_max_pool2d";
  static std::tuple<Tensor, Tensor> run(const Tensor& input, IntArrayRef output_size) {
    const Planes p = adaptive_planes(name, input, output_size, 2);
    const PoolAxis ah = adaptive_axis(p.x.size(2), output_size[0]), aw = adaptive_axis(p.x.size(3), output_size[1]);
    Tensor indices;
    Tensor out = run_planes(p, output_size[0], output_size[1], input.dtype(), [&](const Tensor& in3, const Tensor& out3) {
      indices = make_empty(out3.sizes(), kLong);
      kernels::max_pool_kernel(in3, out3, indices, ah, aw);
    });
    indices = indices.defined() ? indices.view(out.sizes()) : make_empty(out.sizes(), kLong);
    if (out.dim() == 4 && out.suggest_memory_format() == MemoryFormat::ChannelsLast) {
      indices = indices.contiguous(MemoryFormat::ChannelsLast);
    }
    return {out, indices};
  }
};

}  // namespace

Tensor max_pool1d(const Tensor& input, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d, bool ceil) {
  return dispatch::call<MaxPoolOp<1>>(input, k, s, p, d, ceil);
}
Tensor max_pool2d(const Tensor& input, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d, bool ceil) {
  return dispatch::call<MaxPoolOp<2>>(input, k, s, p, d, ceil);
}
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, IntArrayRef k, IntArrayRef s, IntArrayRef p,
                                                   IntArrayRef d, bool ceil) {
  return dispatch::call<MaxPoolWithIndicesOp<1>>(input, k, s, p, d, ceil);
}
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef k, IntArrayRef s, IntArrayRef p,
                                                   IntArrayRef d, bool ceil) {
  return dispatch::call<MaxPoolWithIndicesOp<2>>(input, k, s, p, d, ceil);
}
Tensor avg_pool1d(const Tensor& input, IntArrayRef k, IntArrayRef s, IntArrayRef p, bool ceil, bool count_include_pad) {
  return dispatch::call<AvgPoolOp<1>>(input, k, s, p, ceil, count_include_pad, std::optional<int64_t>());
}
Tensor avg_pool2d(const Tensor& input, IntArrayRef k, IntArrayRef s, IntArrayRef p, bool ceil, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  return dispatch::call<AvgPoolOp<2>>(input, k, s, p, ceil, count_include_pad, divisor_override);
}
Tensor adaptive_avg_pool1d(const Tensor& input, IntArrayRef output_size) {
  return dispatch::call<AdaptiveAvgPoolOp<1>>(input, output_size);
}
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  return dispatch::call<AdaptiveAvgPoolOp<2>>(input, output_size);
}
Tensor adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size) {
  return std::get<0>(dispatch::call<AdaptiveMaxPool2dOp>(input, output_size));
}
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input, IntArrayRef output_size) {
  return dispatch::call<AdaptiveMaxPool2dOp>(input, output_size);
}

}  // namespace nn::functional

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size) {
  return nn::functional::adaptive_max_pool2d_with_indices(input, output_size);
}

}  // namespace ember
