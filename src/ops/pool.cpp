// Pooling: max (with PyTorch's flat per-plane indices, NaN-propagating), average (padding
// counted or not, divisor_override, ceil_mode) and adaptive average/max. 1-D pooling is 2-D
// pooling over a height of one. Outputs keep the input's layout (channels_last in, out), and so do
// the input gradients. Max pooling records its argmax indices for the derivative through the
// inner MaxPool2dRecordOp (the layer records single-Tensor results). Quantized inputs take
// PyTorch's quantized kernels (ops/quantized_nn.cpp).
#include <cmath>
#include <functional>

#include "dispatch/dispatch.h"
#include "ember/nn_ops.h"
#include "kernels/cpu/pool_kernels.h"
#include "ops/indexing_util.h"
#include "ops/quantized_util.h"

namespace ember {
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
  EMBER_CHECK(is_floating_type(input.dtype()) || input.is_quantized(), op, "\"", op, "\" not implemented for '",
              input.dtype(), "'");
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
    kernel(contiguous_alias(x.contiguous(), {N * C, x.size(2), x.size(3)}), contiguous_alias(out, {N * C, oH, oW}));
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

// The windows of every output row and column.
struct Windows {
  PoolAxis h, w;
  int64_t out_h() const { return static_cast<int64_t>(h.begin.size()); }
  int64_t out_w() const { return static_cast<int64_t>(w.begin.size()); }
};

// Checks a (dilated) max or avg pooling's arguments against the input and returns its windows.
Windows pool_windows(const char* op, int64_t nd, const Tensor& input, IntArrayRef kernel, IntArrayRef stride,
                     IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const PoolParams pp = pool_params(op, nd, kernel, stride, padding, dilation, ceil_mode);
  const Planes p = as_planes(op, input, nd);
  const int64_t H = p.x.size(2), W = p.x.size(3);
  const int64_t oH = output_size(H, pp.kernel[0], pp.padding[0], pp.stride[0], pp.dilation[0], ceil_mode);
  const int64_t oW = output_size(W, pp.kernel[1], pp.padding[1], pp.stride[1], pp.dilation[1], ceil_mode);
  check_output(op, p, oH, oW);
  return {window_axis(H, oH, pp.kernel[0], pp.padding[0], pp.stride[0], pp.dilation[0]),
          window_axis(W, oW, pp.kernel[1], pp.padding[1], pp.stride[1], pp.dilation[1])};
}

// The input's gradient of a 2-D pooling: `kernel(grad3, grad_input3)` over contiguous (planes, H, W)
// views, returned in the input's sizes and layout.
template <class K>
Tensor backward_planes(const Tensor& grad, IntArrayRef input_sizes, MemoryFormat format, const K& kernel) {
  const int64_t H = input_sizes[input_sizes.size() - 2], W = input_sizes[input_sizes.size() - 1];
  const int64_t oH = grad.size(-2), oW = grad.size(-1);
  const int64_t planes = grad.numel() / std::max<int64_t>(oH * oW, 1);
  Tensor grad_input = make_empty({planes, H, W}, grad.dtype());
  if (grad_input.numel() > 0) kernel(contiguous_alias(grad.contiguous(), {planes, oH, oW}), grad_input);
  grad_input = grad_input.view(input_sizes);
  return format == MemoryFormat::ChannelsLast ? grad_input.contiguous(format) : grad_input;
}

// A 4-D channels_last tensor as the (N, H, W, C) view the channels_last kernels take.
Tensor nhwc(const Tensor& t) {
  const Tensor c = t.contiguous(MemoryFormat::ChannelsLast);
  return make_view(c, {c.size(0), c.size(2), c.size(3), c.size(1)}, {c.stride(0), c.stride(2), c.stride(3), c.stride(1)},
                   c.storage_offset());
}
bool is_channels_last_4d(const Tensor& t) { return t.dim() == 4 && t.suggest_memory_format() == MemoryFormat::ChannelsLast; }

// (Adaptive) avg pooling forward: channels_last inputs in place, others over planes.
Tensor avg_pool_forward(const Planes& p, const Tensor& x, const Windows& win, bool count_extent, int64_t divisor) {
  if (is_channels_last_4d(x)) {
    Tensor out = make_empty({x.size(0), x.size(1), win.out_h(), win.out_w()}, x.dtype(), MemoryFormat::ChannelsLast);
    if (out.numel() > 0) kernels::avg_pool_cl_kernel(nhwc(x), nhwc(out), win.h, win.w, count_extent, divisor);
    return out;
  }
  return run_planes(p, win.out_h(), win.out_w(), x.dtype(), [&](const Tensor& in3, const Tensor& out3) {
    kernels::avg_pool_kernel(in3, out3, win.h, win.w, count_extent, divisor);
  });
}

// Quantized (per-tensor quint8/qint8) max or avg pooling: PyTorch's quantized kernels, the
// result keeping the input's parameters (ops/quantized_nn.cpp).
Tensor quantized_pool(const char* op, const Planes& p, const Windows& win, bool is_max, bool count_extent,
                      int64_t divisor) {
  // PyTorch takes its channels_last kernels for a 4-D channels_last contiguous input (the
  // unsqueezed one of 1-D pooling; an unbatched input is 3-D there)
  const bool channels_last = p.batched && p.x.is_contiguous(MemoryFormat::ChannelsLast);
  Tensor out = ember::quantized::pool2d(op, p.x, channels_last, win.h, win.w, is_max, count_extent, divisor);
  if (p.nd == 1) out = out.squeeze(2);
  return p.batched ? out : out.squeeze(0);
}

// The input's gradient of max pooling: the output's gradient added at the argmax positions.
// Twice differentiable: its own gradient gathers at the same positions.
struct MaxPool2dBackwardOp {
  static constexpr const char* name = "max_pool2d_with_indices_backward";
  static Tensor run(const Tensor& grad, const Tensor& indices, IntArrayRef input_sizes, MemoryFormat format) {
    if (format == MemoryFormat::ChannelsLast && input_sizes.size() == 4) {
      Tensor grad_input = make_empty(input_sizes, grad.dtype(), MemoryFormat::ChannelsLast);
      if (grad_input.numel() > 0) kernels::max_pool_backward_cl_kernel(nhwc(grad), nhwc(indices), nhwc(grad_input));
      return grad_input;
    }
    return backward_planes(grad, input_sizes, format, [&](const Tensor& g3, const Tensor& gi3) {
      kernels::max_pool_backward_kernel(g3, indices.contiguous().view(g3.sizes()), gi3);
    });
  }
  static void derivative(autograd::Derivative& d, const Tensor& grad, const Tensor& indices, IntArrayRef,
                         MemoryFormat) {
    d.name("MaxPool2DWithIndicesBackwardBackward0");
    d.grad(grad, [idx = d.save_for(grad, indices)](const auto& c) {
      const Tensor i = c[idx];
      return c.grad().flatten(-2).gather(-1, i.flatten(-2)).view(i.sizes());
    });
  }
};

// 2-D max pooling over windows, recording (max_pool2d_with_indices or adaptive_max_pool2d). x is
// (C, H, W) or (N, C, H, W); with `with_indices`, `indices` receives the argmax positions (flat
// h * W + w per plane), which the derivative keeps (a flag rather than a null pointer: a graph's
// replay hands the op a slot of its own either way). Callers ask for them whenever a gradient may
// be wanted.
template <bool Adaptive>
struct MaxPool2dRecordOp {
  static constexpr const char* name = Adaptive ? "adaptive_max_pool2d" : "max_pool2d_with_indices";
  static Tensor run(const Tensor& x, const Windows& win, bool with_indices, Tensor* indices_slot) {
    Tensor* indices = with_indices ? indices_slot : nullptr;
    const Planes p = as_planes(name, x, 2);
    if (is_channels_last_4d(x)) {  // in place, no copies
      const DimVector sizes{x.size(0), x.size(1), win.out_h(), win.out_w()};
      Tensor out = make_empty(sizes, x.dtype(), MemoryFormat::ChannelsLast);
      Tensor idx = indices ? make_empty(sizes, kLong, MemoryFormat::ChannelsLast) : Tensor();
      if (out.numel() > 0) kernels::max_pool_cl_kernel(nhwc(x), nhwc(out), indices ? nhwc(idx) : idx, win.h, win.w);
      if (indices) *indices = idx;
      return out;
    }
    Tensor idx;
    Tensor out = run_planes(p, win.out_h(), win.out_w(), x.dtype(), [&](const Tensor& in3, const Tensor& out3) {
      if (indices) idx = make_empty(out3.sizes(), kLong);
      kernels::max_pool_kernel(in3, out3, idx, win.h, win.w);
    });
    if (indices) {
      idx = idx.defined() ? idx.view(out.sizes()) : make_empty(out.sizes(), kLong);
      *indices = out.dim() == 4 && out.suggest_memory_format() == MemoryFormat::ChannelsLast
                     ? idx.contiguous(MemoryFormat::ChannelsLast)
                     : idx;
    }
    return out;
  }
  static void derivative(autograd::Derivative& d, const Tensor& x, const Windows&, bool, Tensor* indices) {
    d.name(Adaptive ? "AdaptiveMaxPool2DBackward0" : "MaxPool2DWithIndicesBackward0");
    d.grad(x, [idx = d.save_for(x, *indices), sizes = DimVector(x.sizes()),
               format = x.suggest_memory_format()](const auto& c) {
      return dispatch::call<MaxPool2dBackwardOp>(c.grad(), c[idx], sizes.ref(), format);
    });
  }
};

// Max pooling of 1 or 2 spatial dims: 1-D pooling is 2-D pooling of the input with a height of one
// inserted (and squeezed out of the results).
std::tuple<Tensor, Tensor> max_pool(const char* op, int64_t nd, const Tensor& input, IntArrayRef kernel,
                                    IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                    bool with_indices) {
  const Windows win = pool_windows(op, nd, input, kernel, stride, padding, dilation, ceil_mode);
  Tensor indices;
  const bool keep = with_indices || (GradMode::is_enabled() && input.requires_grad());
  const Tensor x = nd == 1 ? input.unsqueeze(-2) : input;
  Tensor out = dispatch::call<MaxPool2dRecordOp<false>>(x, win, keep, &indices);
  if (nd == 1) {
    out = out.squeeze(-2);
    if (with_indices) indices = indices.squeeze(-2);
  }
  return {out, indices};
}

template <int ND>
struct MaxPoolOp {
  static constexpr const char* name = ND == 1 ? "max_pool1d" : "max_pool2d";
  static constexpr bool composite = true;
  static constexpr bool quantized = true;
  static Tensor run(const Tensor& input, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d, bool ceil) {
    if (input.is_quantized()) {
      const Windows win = pool_windows(name, ND, input, k, s, p, d, ceil);
      return quantized_pool(name, as_planes(name, input, ND), win, true, false, 0);
    }
    return std::get<0>(max_pool(name, ND, input, k, s, p, d, ceil, false));
  }
};
template <int ND>
struct MaxPoolWithIndicesOp {
  static constexpr const char* name = ND == 1 ? "max_pool1d_with_indices" : "max_pool2d_with_indices";
  static constexpr bool composite = true;
  static std::tuple<Tensor, Tensor> run(const Tensor& input, IntArrayRef k, IntArrayRef s, IntArrayRef p,
                                        IntArrayRef d, bool ceil) {
    return max_pool(name, ND, input, k, s, p, d, ceil, true);
  }
};

// The recorded forward pooling, applied to a gradient of the input's shape.
using Pooling = std::function<Tensor(const Tensor&)>;

// The input's gradient of (adaptive) avg pooling: each output's gradient spread over its window
// with the forward's divisor. It is linear in the gradient, and its own derivative is the forward
// pooling (`forward`).
template <bool Adaptive>
struct AvgPool2dBackwardOp {
  static constexpr const char* name = Adaptive ? "adaptive_avg_pool2d_backward" : "avg_pool2d_backward";
  static Tensor run(const Tensor& grad, IntArrayRef input_sizes, MemoryFormat format, const Windows& win,
                    bool count_extent, int64_t divisor_override, const Pooling&) {
    if (format == MemoryFormat::ChannelsLast && input_sizes.size() == 4) {
      Tensor grad_input = make_empty(input_sizes, grad.dtype(), MemoryFormat::ChannelsLast);
      if (grad_input.numel() > 0)
        kernels::avg_pool_backward_cl_kernel(nhwc(grad), nhwc(grad_input), win.h, win.w, count_extent, divisor_override);
      return grad_input;
    }
    return backward_planes(grad, input_sizes, format, [&](const Tensor& g3, const Tensor& gi3) {
      kernels::avg_pool_backward_kernel(g3, gi3, win.h, win.w, count_extent, divisor_override);
    });
  }
  static void derivative(autograd::Derivative& d, const Tensor& grad, IntArrayRef, MemoryFormat, const Windows&, bool,
                         int64_t, const Pooling& forward) {
    d.name(Adaptive ? "AdaptiveAvgPool2DBackwardBackward0" : "AvgPool2DBackwardBackward0");
    d.grad(grad, [forward](const auto& c) { return forward(c.grad()); });
  }
};

template <int ND>
struct AvgPoolOp;

// avg_pool2d records AvgPool2DBackward0; avg_pool1d is avg_pool2d over a height of one.
template <>
struct AvgPoolOp<2> {
  static constexpr const char* name = "avg_pool2d";
  static constexpr bool quantized = true;
  static Windows windows(const Tensor& input, IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding,
                         bool ceil_mode, std::optional<int64_t> divisor_override) {
    EMBER_CHECK(!divisor_override || *divisor_override != 0, name, "divisor must be not zero");
    return pool_windows(name, 2, input, kernel, stride, padding, 1, ceil_mode);
  }
  static Tensor run(const Tensor& input, IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                    bool count_include_pad, std::optional<int64_t> divisor_override) {
    const Windows win = windows(input, kernel, stride, padding, ceil_mode, divisor_override);
    if (input.is_quantized()) {
      return quantized_pool(name, as_planes(name, input, 2), win, false, count_include_pad,
                            divisor_override.value_or(0));
    }
    return avg_pool_forward(as_planes(name, input, 2), input, win, count_include_pad, divisor_override.value_or(0));
  }
  static void derivative(autograd::Derivative& d, const Tensor& input, IntArrayRef kernel, IntArrayRef stride,
                         IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                         std::optional<int64_t> divisor_override) {
    d.name("AvgPool2DBackward0");
    d.grad(input, [win = windows(input, kernel, stride, padding, ceil_mode, divisor_override),
                   sizes = DimVector(input.sizes()), format = input.suggest_memory_format(), count_include_pad,
                   divisor = divisor_override.value_or(0),
                   forward = Pooling([k = DimVector(kernel), s = DimVector(stride), p = DimVector(padding), ceil_mode,
                                      count_include_pad, divisor_override](const Tensor& g) {
                     return dispatch::call<AvgPoolOp<2>>(g, k.ref(), s.ref(), p.ref(), ceil_mode, count_include_pad,
                                                         divisor_override);
                   })](const auto& c) {
      return dispatch::call<AvgPool2dBackwardOp<false>>(c.grad(), sizes.ref(), format, win, count_include_pad,
                                                         divisor, forward);
    });
  }
};

template <>
struct AvgPoolOp<1> {
  static constexpr const char* name = "avg_pool1d";
  static constexpr bool composite = true;
  static constexpr bool quantized = true;
  static Tensor run(const Tensor& input, IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                    bool count_include_pad, std::optional<int64_t> divisor_override) {
    const PoolParams pp = pool_params(name, 1, kernel, stride, padding, 1, ceil_mode);
    (void)pool_windows(name, 1, input, kernel, stride, padding, 1, ceil_mode);  // checks with this op's name
    const int64_t k2[2] = {1, pp.kernel[1]}, s2[2] = {1, pp.stride[1]}, p2[2] = {0, pp.padding[1]};
    return dispatch::call<AvgPoolOp<2>>(input.unsqueeze(-2), IntArrayRef(k2, 2), IntArrayRef(s2, 2),
                                        IntArrayRef(p2, 2), ceil_mode, count_include_pad, divisor_override)
        .squeeze(-2);
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

Windows adaptive_windows(const Planes& p, IntArrayRef output_size) {
  return {adaptive_axis(p.x.size(2), output_size[0]), adaptive_axis(p.x.size(3), output_size[1])};
}

template <int ND>
struct AdaptiveAvgPoolOp;

// The recording 2-D adaptive average pooling (PyTorch's _adaptive_avg_pool2d).
struct AdaptiveAvgPool2dRecordOp {
  static constexpr const char* name = "_adaptive_avg_pool2d";
  static Tensor run(const Tensor& input, IntArrayRef output_size) {
    const Planes p = adaptive_planes(name, input, output_size, 2);
    return avg_pool_forward(p, input, adaptive_windows(p, output_size), false, 0);
  }
  static void derivative(autograd::Derivative& d, const Tensor& input, IntArrayRef output_size) {
    d.name("AdaptiveAvgPool2DBackward0");
    d.grad(input, [win = adaptive_windows(as_planes(name, input, 2), output_size), sizes = DimVector(input.sizes()),
                   format = input.suggest_memory_format(), forward = Pooling([o = DimVector(output_size)](const Tensor& g) {
                     return dispatch::call<AdaptiveAvgPool2dRecordOp>(g, o.ref());
                   })](const auto& c) {
      return dispatch::call<AvgPool2dBackwardOp<true>>(c.grad(), sizes.ref(), format, win, false, int64_t{0},
                                                        forward);
    });
  }
};

// As in PyTorch, adaptive_avg_pool2d to 1x1 is the plane's mean (recording MeanBackward1), other
// sizes are _adaptive_avg_pool2d (AdaptiveAvgPool2DBackward0); the 1-D one is the 2-D one over a
// height of one.
template <>
struct AdaptiveAvgPoolOp<2> {
  static constexpr const char* name = "adaptive_avg_pool2d";
  static constexpr bool composite = true;
  static constexpr bool quantized = true;
  static Tensor run(const Tensor& input, IntArrayRef output_size) {
    const Planes p = adaptive_planes(name, input, output_size, 2);  // checks with this op's name
    // PyTorch's quantized kernel at every output size (no mean for 1x1)
    if (input.is_quantized()) return quantized_pool(name, p, adaptive_windows(p, output_size), false, false, 0);
    if (output_size[0] != 1 || output_size[1] != 1) return dispatch::call<AdaptiveAvgPool2dRecordOp>(input, output_size);
    const Tensor out = input.mean(IntArrayRef{-1, -2}, true);
    const bool cl = input.dim() == 4 && input.suggest_memory_format() == MemoryFormat::ChannelsLast;
    return cl ? out.contiguous(MemoryFormat::ChannelsLast) : out;
  }
};

template <>
struct AdaptiveAvgPoolOp<1> {
  static constexpr const char* name = "adaptive_avg_pool1d";
  static constexpr bool composite = true;
  static constexpr bool quantized = true;
  static Tensor run(const Tensor& input, IntArrayRef output_size) {
    (void)adaptive_planes(name, input, output_size, 1);  // checks with this op's name
    const int64_t size2[2] = {1, output_size[0]};
    return dispatch::call<AdaptiveAvgPoolOp<2>>(input.unsqueeze(-2), IntArrayRef(size2, 2)).squeeze(-2);
  }
};

struct AdaptiveMaxPool2dOp {
  static constexpr const char* name = "adaptive_max_pool2d";
  static constexpr bool composite = true;
  static std::tuple<Tensor, Tensor> run(const Tensor& input, IntArrayRef output_size) {
    const Windows win = adaptive_windows(adaptive_planes(name, input, output_size, 2), output_size);
    Tensor indices;
    Tensor out = dispatch::call<MaxPool2dRecordOp<true>>(input, win, true, &indices);
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
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size) {
  return dispatch::call<AdaptiveMaxPool2dOp>(input, output_size);
}

}  // namespace ember
