// Convolutions and transposed convolutions: PyTorch's argument checks and messages, the output
// shape and layout, then oneDNN (float32, bfloat16; float16 computed in float32 as oneDNN 2.6 has
// no float16 convolution, and bfloat16 too on CPUs without AVX-512, where oneDNN has no bfloat16
// convolution) or the im2col fallback (float64, and anything oneDNN declines).
// Derivatives (ConvolutionBackward0): the input's gradient is the adjoint convolution, the weight's
// oneDNN's backward-weights primitive (or the fallback), the bias's a sum of the output's gradient.
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "dispatch/dispatch.h"
#include "ember/nn_ops.h"
#include "kernels/cpu/conv_fallback.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/onednn_nn.h"
#include "ops/conv_activation.h"

namespace ember {
namespace {

struct ConvArgs {
  DimVector stride, padding_l, padding_r, dilation, output_padding;
  int64_t groups = 1;
  bool transposed = false;
  // the activation of the result fused into the convolution (a oneDNN post-op), inference only
  std::optional<detail::ConvActivation> activation;
  // the output holds a tensor the result is added to before the activation (oneDNN's sum post-op)
  bool sum = false;
};

// PyTorch accepts one value for every spatial dim or one per dim.
DimVector expand_param(const char* op, const char* name, IntArrayRef v, int64_t k) {
  if (v.size() == 1) return DimVector(static_cast<size_t>(k), v[0]);
  EMBER_CHECK(static_cast<int64_t>(v.size()) == k, op, "expected ", name, " to be a single integer value or a list of ",
              k, " values to match the convolution dimensions, but got ", name, "=", v);
  return DimVector(v);
}

// "(2 x 2)": how PyTorch prints per-channel sizes.
std::string by_x(IntArrayRef v) {
  std::ostringstream os;
  os << '(';
  for (size_t i = 0; i < v.size(); ++i) os << (i ? " x " : "") << v[i];
  os << ')';
  return os.str();
}

// Checks everything PyTorch checks and returns the output sizes; the input (`x_sizes`) is batched.
DimVector check_and_output_sizes(const char* op, IntArrayRef x_sizes, ScalarType x_dtype, const Tensor& w,
                                 const Tensor& b, const ConvArgs& a) {
  const int64_t k = w.dim() - 2;
  EMBER_CHECK(x_dtype == w.dtype(), op, "Input type (", x_dtype, ") and weight type (", w.dtype(),
              ") should be the same");
  EMBER_CHECK(!b.defined() || b.dtype() == x_dtype, op, "Input type (", x_dtype, ") and bias type (", b.dtype(),
              ") should be the same");
  EMBER_CHECK(is_floating_type(x_dtype), op, "\"", op, "\" not implemented for '", x_dtype, "'");
  for (int64_t s : a.stride) EMBER_CHECK(s > 0, op, "non-positive stride is not supported");
  for (int64_t p : a.padding_l) EMBER_CHECK(p >= 0, op, "negative padding is not supported");
  for (int64_t d : a.dilation) EMBER_CHECK(d > 0, op, "dilation should be greater than zero");
  EMBER_CHECK(a.groups > 0, op, "non-positive groups is not supported");
  EMBER_CHECK(w.size(0) % a.groups == 0, op, "Given groups=", a.groups, ", expected weight to be divisible by ",
              a.groups, " at dimension 0, but got weight of size ", w.sizes(), " instead");
  const int64_t in_ch = a.transposed ? w.size(0) : w.size(1) * a.groups;
  const int64_t out_ch = a.transposed ? w.size(1) * a.groups : w.size(0);
  if (a.transposed) {
    EMBER_CHECK(x_sizes[1] == in_ch, op, "Given transposed=1, weight of size ", w.sizes(), ", expected input",
                x_sizes, " to have ", in_ch, " channels, but got ", x_sizes[1], " channels instead");
  } else {
    EMBER_CHECK(x_sizes[1] == in_ch, op, "Given groups=", a.groups, ", weight of size ", w.sizes(), ", expected input",
                x_sizes, " to have ", in_ch, " channels, but got ", x_sizes[1], " channels instead");
  }
  EMBER_CHECK(!b.defined() || (b.dim() == 1 && b.size(0) == out_ch), op, "Given weight of size ", w.sizes(),
              ", expected bias to be 1-dimensional with ", out_ch, " elements, but got bias of size ", b.sizes(),
              " instead");
  DimVector out{x_sizes[0], out_ch};
  DimVector in_sp, padded, kernel, out_sp;
  for (int64_t d = 0; d < k; ++d) {
    const int64_t in = x_sizes[d + 2], dk = a.dilation[d] * (w.size(d + 2) - 1) + 1;
    in_sp.push_back(in);
    if (a.transposed) {
      EMBER_CHECK(a.output_padding[d] >= 0, op, "negative output_padding is not supported");
      EMBER_CHECK(a.output_padding[d] < a.stride[d] || a.output_padding[d] < a.dilation[d], op,
                  "output padding must be smaller than either stride or dilation, but got output_padding=",
                  a.output_padding.ref(), ", stride=", a.stride.ref(), ", dilation=", a.dilation.ref());
      out_sp.push_back((in - 1) * a.stride[d] - a.padding_l[d] - a.padding_r[d] + dk + a.output_padding[d]);
    } else {
      padded.push_back(in + a.padding_l[d] + a.padding_r[d]);
      kernel.push_back(dk);
      out_sp.push_back(padded.back() < dk ? 0 : (padded.back() - dk) / a.stride[d] + 1);
    }
  }
  if (a.transposed) {
    bool ok = true;
    for (int64_t s : out_sp) ok = ok && s > 0;
    EMBER_CHECK(ok, op, "Given input size per channel: ", by_x(in_sp), ". Calculated output size per channel: ",
                by_x(out_sp), ". Output size is too small");
  } else {
    bool ok = true;
    for (int64_t d = 0; d < k; ++d) ok = ok && padded[d] >= kernel[d];
    EMBER_CHECK(ok, op, "Calculated padded input size per channel: ", by_x(padded), ". Kernel size: ", by_x(kernel),
                ". Kernel size can't be greater than actual input size");
  }
  for (int64_t s : out_sp) out.push_back(s);
  return out;
}

// PyTorch's rule: channels_last output when the input or the weight is channels_last.
MemoryFormat output_format(const Tensor& x, const Tensor& w) {
  if (x.dim() == 4 && (x.suggest_memory_format() == MemoryFormat::ChannelsLast ||
                       w.suggest_memory_format() == MemoryFormat::ChannelsLast)) {
    return MemoryFormat::ChannelsLast;
  }
  if (x.dim() == 5 && (x.suggest_memory_format() == MemoryFormat::ChannelsLast3d ||
                       w.suggest_memory_format() == MemoryFormat::ChannelsLast3d)) {
    return MemoryFormat::ChannelsLast3d;
  }
  return MemoryFormat::Contiguous;
}

// oneDNN describes strided memory with positive strides; anything else is copied first.
Tensor describable(const Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.stride(d) <= 0 && t.size(d) > 1) return t.contiguous();
  return t;
}

dnnl::memory::dims to_dims(IntArrayRef v, int64_t minus = 0) {
  dnnl::memory::dims d;
  for (int64_t x : v) d.push_back(x - minus);
  return d;
}

// The weight as oneDNN sees it: (groups, oc/g, ic/g, *kernel) when grouped, oc and ic meaning
// the primitive's output and input channels (a transposed weight is (ic, oc/g, ...)).
dnnl::memory::desc weight_desc(const Tensor& w, const ConvArgs& a) {
  IntArrayRef s = w.sizes(), st = w.strides();
  const int64_t g = a.groups;
  DimVector sizes, strides;
  if (a.transposed) {
    const int64_t icg = s[0] / g;
    if (g > 1) sizes.push_back(g), strides.push_back(icg * st[0]);
    sizes.push_back(s[1]), strides.push_back(st[1]);
    sizes.push_back(icg), strides.push_back(st[0]);
  } else {
    const int64_t ocg = s[0] / g;
    if (g > 1) sizes.push_back(g), strides.push_back(ocg * st[0]);
    sizes.push_back(ocg), strides.push_back(st[0]);
    sizes.push_back(s[1]), strides.push_back(st[1]);
  }
  for (size_t d = 2; d < s.size(); ++d) sizes.push_back(s[d]), strides.push_back(st[d]);
  return onednn::desc_of(sizes, strides, w.dtype());
}

// Strides, dilations (oneDNN counts from 0) and paddings as oneDNN takes them.
struct DnnlGeometry {
  dnnl::memory::dims strides, dil, pl, pr;
  explicit DnnlGeometry(const ConvArgs& a)
      : strides(to_dims(a.stride)), dil(to_dims(a.dilation, 1)), pl(to_dims(a.padding_l)), pr(to_dims(a.padding_r)) {
    // oneDNN's transposed output size has no output_padding term: it is less right padding
    for (size_t d = 0; a.transposed && d < pr.size(); ++d) pr[d] -= a.output_padding[d];
  }
};

// Whether to run a primitive on the tensors' own layouts: gemm-based (im2col) implementations on
// plain layouts are much slower than the blocked kernels plus reorders (tens of times for the
// backward ones), so only the other optimized implementations qualify.
bool fast_on_plain(const dnnl::primitive_desc_base& pd) {
  return onednn::is_optimized(pd) && std::string(pd.impl_info_str()).find("gemm") == std::string::npos;
}

// Whether to try oneDNN's Winograd kernel (F(4x4, 3x3), AVX-512) before the direct one: float32 2-D
// 3x3 convolutions with unit stride and dilation and no groups, over at least 512 output positions
// (batch x height x width of `out_sizes`) per weight. It multiplies 2.25x fewer times but transforms the
// weight on every call: resnet18's 3x3 layers at batch 16 run their forward, input gradient and
// weight gradient 1.4-2.6x faster from 784 positions on (7x7 at batch 16, 28x28 at batch 1), and
// none faster at 196-256 (4x4 at batch 16: 512 channels' transforms cost what they save). Its
// float32 error against float64 is the direct kernel's size (1-2e-6 of the largest value).
// Not below 16 input channels: Winograd pads them to 16, so a first layer of 3 channels ran 2.5x
// slower than the direct kernel reading NCHW (8 x 3 x 56 x 56 to 32 channels: 1.1 ms + 0.13 ms of
// reorder against 0.44 ms, 1 thread, Zen 4).
bool prefers_winograd(ScalarType dtype, int64_t in_channels, const Tensor& w, IntArrayRef out_sizes,
                      const ConvArgs& a) {
  if (dtype != kFloat || w.dim() != 4 || a.groups != 1 || in_channels < 16 || w.size(2) != 3 || w.size(3) != 3)
    return false;
  for (size_t d = 0; d < 2; ++d)
    if (a.stride[d] != 1 || a.dilation[d] != 1) return false;
  return out_sizes[0] * out_sizes[2] * out_sizes[3] >= 512;
}

template <class PD>
onednn::Plan build_plan(const PD& pd, const dnnl::primitive& prim, const dnnl::memory::desc& src, const dnnl::memory::desc& wei,
                        const dnnl::memory::desc* bias, const dnnl::memory::desc& dst) {
  onednn::Plan plan;
  std::vector<onednn::Plan::Step> after;
  std::unordered_map<int, dnnl::memory> args;
  using Use = onednn::Plan::Use;
  args[DNNL_ARG_SRC] = plan.bind(DNNL_ARG_SRC, src, pd.src_desc(), Use::kInput);
  args[DNNL_ARG_WEIGHTS] = plan.bind(DNNL_ARG_WEIGHTS, wei, pd.weights_desc(), Use::kWeight);
  if (bias) args[DNNL_ARG_BIAS] = plan.bind(DNNL_ARG_BIAS, *bias, pd.bias_desc(), Use::kInput);
  args[DNNL_ARG_DST] = plan.bind(DNNL_ARG_DST, dst, pd.dst_desc(), Use::kOutput, &after);
  plan.steps.push_back({prim, std::move(args)});
  for (auto& s : after) plan.steps.push_back(std::move(s));
  return plan;
}

// The plan for a (transposed) convolution: the tensors' own strided layouts when a fast
// implementation takes them; for contiguous (NCHW) 2-D tensors, else, the 16-channel blocked
// layout (nChw16c: its reorders from and to NCHW are cheaper than NHWC's transposes, about 5% of
// a 3x3 64-channel conv, and it is what libtorch runs), the input kept plain when it has fewer
// than 16 channels (a first layer: oneDNN's kernel for it reads NCHW, and padding 1 or 3 channels
// to 16 would multiply its work; the blocked output and its reorder cost a third of NHWC's
// transpose); else the layouts the primitive prefers with reorders around it. Weights always go in the primitive's preferred layout: a reorder when
// theirs differs, which the plan skips while the weight is unchanged since its last run (same
// storage, address and version), so inference reorders each weight once; the input's gradient,
// a convolution of the same weight, runs through such a plan too.
// `src` and `dst` are the user's layouts: their tensors' own, or oneDNN's channel-blocked one (fx's
// blocked graphs, see convolution_blocked); `nchw` says both are contiguous 4-D tensors, `nhwc`
// that both are 4-D channels_last ones.
// Below AVX-512 (oneDNN's blocked kernels taking 8 channels), its direct kernel on NHWC is slower
// than the blocked one with both reorders: a 3x3 64-channel conv2d of 8 x 56 x 56 (Zen 3, AVX2,
// 2 threads) took 15.3-16.1 ms on NHWC, 12.1-13.0 ms blocked (11.5-11.8 ms from NCHW), so there
// a grouped-free forward convolution of 16 channels or more runs blocked.
onednn::Plan make_conv_plan(const dnnl::memory::desc& src, const dnnl::memory::desc& dst, bool nchw, bool nhwc,
                            const Tensor& w, const Tensor& b, const ConvArgs& a) {
  using dnnl::memory;
  const memory::data_type dt = *onednn::data_type(w.dtype());
  const memory::desc wei = weight_desc(w, a);
  const memory::desc bias = b.defined() ? onednn::desc_of(b) : memory::desc();
  const memory::desc wei_any(wei.dims(), dt, memory::format_tag::any);
  const DnnlGeometry geo(a);
  const memory::dims &strides = geo.strides, &dil = geo.dil, &pl = geo.pl, &pr = geo.pr;
  dnnl::primitive_attr attr;
  if (a.activation || a.sum) {
    dnnl::post_ops post;
    if (a.sum) post.append_sum(1.f);
    if (a.activation == detail::ConvActivation::kReLU)
      post.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    // x * clamp(x / 6 + 1 / 2, 0, 1): oneDNN 2.x ignores alpha and beta, 3.x reads them so
    if (a.activation == detail::ConvActivation::kHardswish)
      post.append_eltwise(1.f, dnnl::algorithm::eltwise_hardswish, 1.f / 6, 0.5f);
    attr.set_post_ops(post);
  }
  enum class Layout { kOwn, kBlocked16, kPreferred };
  const memory::dims in_sizes = src.dims(), out_sizes = dst.dims();
  const bool few_channels = !a.transposed && a.groups == 1 && in_sizes[1] < 16;
  const bool nhwc_via_blocked =
      nhwc && detail::channel_block() == 8 && !a.transposed && a.groups == 1 && !few_channels && !a.sum;
  // Winograd where it pays and oneDNN has it (AVX-512), else direct
  for (bool winograd : {true, false}) {
    if (winograd && !prefers_winograd(w.dtype(), in_sizes[1], w, a.transposed ? in_sizes : out_sizes, a)) continue;
    const dnnl::algorithm conv_alg =
        winograd ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct;
    const dnnl::algorithm deconv_alg =
        winograd ? dnnl::algorithm::deconvolution_winograd : dnnl::algorithm::deconvolution_direct;
    // for inference oneDNN's Winograd wants the weight pre-transformed by a reorder that takes
    // 50 ms for 256x256x3x3 (1 thread); in training mode the kernel transforms it, 10x faster
    const dnnl::prop_kind prop = winograd ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
    for (Layout layout : {Layout::kOwn, Layout::kBlocked16, Layout::kPreferred}) {
      if (layout == Layout::kBlocked16 && !nchw) continue;
      if (layout == Layout::kOwn && nhwc_via_blocked) continue;
      if (a.sum && layout != Layout::kOwn) continue;  // the sum reads the output where the user's data is
      const memory::format_tag tag =
          layout == Layout::kBlocked16 ? memory::format_tag::nChw16c : memory::format_tag::any;
      const bool own_src = layout == Layout::kOwn || (layout == Layout::kBlocked16 && few_channels);
      const memory::desc s = own_src ? src : memory::desc(src.dims(), dt, tag);
      const memory::desc d = layout == Layout::kOwn ? dst : memory::desc(dst.dims(), dt, tag);
      const bool must_be_fast = layout != Layout::kPreferred;
      try {
        if (a.transposed) {
          dnnl::deconvolution_forward::desc desc(prop, deconv_alg, s, wei_any, bias, d, strides, dil, pl, pr);
          dnnl::deconvolution_forward::primitive_desc pd(desc, attr, onednn::engine());
          onednn::skip_faulty(pd);
          if (must_be_fast && !fast_on_plain(pd)) continue;
          return build_plan(pd, dnnl::deconvolution_forward(pd), src, wei, b.defined() ? &bias : nullptr, dst);
        }
        dnnl::convolution_forward::desc desc(prop, conv_alg, s, wei_any, bias, d, strides, dil, pl, pr);
        dnnl::convolution_forward::primitive_desc pd(desc, attr, onednn::engine());
        onednn::skip_faulty(pd);
        if (must_be_fast && !fast_on_plain(pd)) continue;
        if (a.sum && pd.dst_desc() != dst) continue;
        return build_plan(pd, dnnl::convolution_forward(pd), src, wei, b.defined() ? &bias : nullptr, dst);
      } catch (const dnnl::error&) {
        if (layout == Layout::kPreferred && !winograd) throw;
      }
    }
  }
  throw dnnl::error(dnnl_unimplemented, "no convolution implementation");
}

// Whether oneDNN has bfloat16 convolutions on this CPU: from AVX-512 on (emulated below
// AVX512-BF16), none under AVX2.
bool onednn_has_bfloat16_conv() {
  static const bool has = onednn::implements([] {
    using dnnl::memory;
    const memory::desc m({1, 16, 4, 4}, memory::data_type::bf16, memory::format_tag::any);
    const memory::desc w({16, 16, 1, 1}, memory::data_type::bf16, memory::format_tag::any);
    dnnl::convolution_forward::primitive_desc(
        {dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, m, w, memory::desc(), m, {1, 1},
         {0, 0}, {0, 0}, {0, 0}},
        onednn::engine());
  });
  return has;
}

// The dtypes whose convolutions run in float32 and are rounded back: float16 (oneDNN 2.6 has no
// float16 convolution), and bfloat16 where oneDNN has none (there the im2col fallback would be
// 100x slower; a float32 convolution of bfloat16 values multiplies exactly and accumulates in
// float32, as oneDNN's bfloat16 kernels do).
bool computed_in_float(ScalarType t) { return t == kHalf || (t == kBFloat16 && !onednn_has_bfloat16_conv()); }

// Returns false when oneDNN has no implementation for these arguments.
// `blocked_src` and `blocked_dst`, when given, describe x and out as channel-blocked (see
// convolution_blocked) rather than by their strides.
bool onednn_conv(const Tensor& x_in, const Tensor& w_in, const Tensor& b_in, const Tensor& out, const ConvArgs& a,
                 const dnnl::memory::desc* blocked_src = nullptr, const dnnl::memory::desc* blocked_dst = nullptr) {
  const Tensor x = describable(x_in), w = describable(w_in), b = b_in.defined() ? describable(b_in) : b_in;
  onednn::Key key(a.transposed ? "conv_transpose" : "conv");
  key.add(x).add(w).add(b).add(out).add(a.stride).add(a.padding_l).add(a.padding_r).add(a.dilation).add(a.groups);
  key.add(a.activation ? static_cast<int64_t>(*a.activation) + 1 : 0).add(static_cast<int64_t>(a.sum));
  onednn::Plan* plan;
  try {
    plan = &onednn::cached_plan(key, [&] {
      const bool plain4d = !blocked_src && !blocked_dst && x.dim() == 4;
      const bool nchw = plain4d && x.is_contiguous() && out.is_contiguous();
      const bool nhwc = plain4d && !nchw && x.is_contiguous(MemoryFormat::ChannelsLast) &&
                        out.is_contiguous(MemoryFormat::ChannelsLast);
      return make_conv_plan(blocked_src ? *blocked_src : onednn::desc_of(x),
                            blocked_dst ? *blocked_dst : onednn::desc_of(out), nchw, nhwc, w, b, a);
    });
  } catch (const dnnl::error&) {
    return false;
  }
  if (b.defined()) {
    plan->execute({{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, out}});
  } else {
    plan->execute({{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, out}});
  }
  return true;
}

// The weight gradient's plan: oneDNN's backward-weights primitive (hinted by the training forward
// it differentiates), the source and output gradient in their own layouts when an optimized
// implementation takes them, else in its preferred ones; the gradient is reordered into the
// weight's layout. With grad_bias defined the same pass sums the bias's gradient (in float32,
// rounded into grad_bias's dtype).
onednn::Plan make_weight_grad_plan(const Tensor& x, const Tensor& grad, const Tensor& grad_weight,
                                   const Tensor& grad_bias, const ConvArgs& a) {
  using dnnl::memory;
  const memory::data_type dt = *onednn::data_type(x.dtype());
  const memory::desc src = onednn::desc_of(x), diff_dst = onednn::desc_of(grad), diff_wei = weight_desc(grad_weight, a);
  const memory::desc wei_any(diff_wei.dims(), dt, memory::format_tag::any);
  const memory::desc bias_user = grad_bias.defined() ? onednn::desc_of(grad_bias) : memory::desc();
  const memory::desc bias32 =
      grad_bias.defined() ? memory::desc({grad_bias.size(0)}, memory::data_type::f32, memory::format_tag::a)
                          : memory::desc();
  const DnnlGeometry geo(a);
  for (bool winograd : {true, false}) {
    const IntArrayRef out_sizes = (a.transposed ? x : grad).sizes();
    if (winograd && !prefers_winograd(x.dtype(), x.size(1), grad_weight, out_sizes, a)) continue;
    const dnnl::algorithm conv_alg =
        winograd ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct;
    const dnnl::algorithm deconv_alg =
        winograd ? dnnl::algorithm::deconvolution_winograd : dnnl::algorithm::deconvolution_direct;
    for (bool plain : {true, false}) {
      const memory::desc s = plain ? src : memory::desc(src.dims(), dt, memory::format_tag::any);
      const memory::desc dd = plain ? diff_dst : memory::desc(diff_dst.dims(), dt, memory::format_tag::any);
      try {
        onednn::Plan plan;
        std::vector<onednn::Plan::Step> after;
        std::unordered_map<int, dnnl::memory> args;
        auto bind_all = [&](const auto& pd) {
          using Use = onednn::Plan::Use;
          args[DNNL_ARG_SRC] = plan.bind(DNNL_ARG_SRC, src, pd.src_desc(), Use::kInput);
          args[DNNL_ARG_DIFF_DST] = plan.bind(DNNL_ARG_DIFF_DST, diff_dst, pd.diff_dst_desc(), Use::kInput);
          args[DNNL_ARG_DIFF_WEIGHTS] =
              plan.bind(DNNL_ARG_DIFF_WEIGHTS, diff_wei, pd.diff_weights_desc(), Use::kOutput, &after);
          if (grad_bias.defined()) {
            args[DNNL_ARG_DIFF_BIAS] =
                plan.bind(DNNL_ARG_DIFF_BIAS, bias_user, pd.diff_bias_desc(), Use::kOutput, &after);
          }
        };
        if (a.transposed) {
          const dnnl::deconvolution_forward::primitive_desc hint(
              {dnnl::prop_kind::forward_training, deconv_alg, s, wei_any, memory::desc(), dd, geo.strides, geo.dil,
               geo.pl, geo.pr},
              onednn::engine());
          const dnnl::deconvolution_backward_weights::primitive_desc pd(
              {deconv_alg, s, wei_any, bias32, dd, geo.strides, geo.dil, geo.pl, geo.pr}, onednn::engine(), hint);
          if (plain && !fast_on_plain(pd)) continue;
          bind_all(pd);
          plan.steps.push_back({dnnl::deconvolution_backward_weights(pd), std::move(args)});
        } else {
          const dnnl::convolution_forward::primitive_desc hint(
              {dnnl::prop_kind::forward_training, conv_alg, s, wei_any, memory::desc(), dd, geo.strides, geo.dil,
               geo.pl, geo.pr},
              onednn::engine());
          const dnnl::convolution_backward_weights::primitive_desc pd(
              {conv_alg, s, wei_any, bias32, dd, geo.strides, geo.dil, geo.pl, geo.pr}, onednn::engine(), hint);
          if (plain && !fast_on_plain(pd)) continue;
          bind_all(pd);
          plan.steps.push_back({dnnl::convolution_backward_weights(pd), std::move(args)});
        }
        for (auto& step : after) plan.steps.push_back(std::move(step));
        return plan;
      } catch (const dnnl::error&) {
        if (!plain && !winograd) throw;
      }
    }
  }
  throw dnnl::error(dnnl_unimplemented, "no convolution weight gradient implementation");
}

// Returns false when oneDNN has no implementation for these arguments.
bool onednn_weight_grad(const Tensor& grad_in, const Tensor& x_in, const Tensor& grad_weight, const Tensor& grad_bias,
                        const ConvArgs& a) {
  const Tensor x = describable(x_in), grad = describable(grad_in);
  onednn::Key key(a.transposed ? "conv_transpose_backward_weights" : "conv_backward_weights");
  key.add(x).add(grad).add(grad_weight).add(grad_bias).add(a.stride).add(a.padding_l).add(a.padding_r);
  key.add(a.dilation).add(a.groups);
  onednn::Plan* plan;
  try {
    plan = &onednn::cached_plan(key, [&] { return make_weight_grad_plan(x, grad, grad_weight, grad_bias, a); });
  } catch (const dnnl::error&) {
    return false;
  }
  if (grad_bias.defined()) {
    plan->execute({{DNNL_ARG_SRC, x}, {DNNL_ARG_DIFF_DST, grad}, {DNNL_ARG_DIFF_WEIGHTS, grad_weight},
                   {DNNL_ARG_DIFF_BIAS, grad_bias}});
  } else {
    plan->execute({{DNNL_ARG_SRC, x}, {DNNL_ARG_DIFF_DST, grad}, {DNNL_ARG_DIFF_WEIGHTS, grad_weight}});
  }
  return true;
}

// (N, C, *spatial) with 1..3 spatial dims as (N, C, D, H, W), contiguous.
Tensor as_5d(const Tensor& t) {
  DimVector s(t.sizes());
  while (s.size() < 5) s.insert(2, 1);
  return t.contiguous().view(s);
}

// The fallback's geometry of a convolution from `in` to `out` (as the kernels name them).
kernels::ConvGeometry geometry(const Tensor& in, const Tensor& out, IntArrayRef w_sizes, const ConvArgs& a) {
  const int64_t k = static_cast<int64_t>(w_sizes.size()) - 2, lead = 3 - k;
  kernels::ConvGeometry g{in.size(0), in.size(1), out.size(1), a.groups, {}, {}, {}, {}, {}, {}};
  for (int64_t d = 0; d < 3; ++d) {
    const bool real = d >= lead;
    g.in[d] = real ? in.size(d - lead + 2) : 1;
    g.out[d] = real ? out.size(d - lead + 2) : 1;
    g.kernel[d] = real ? w_sizes[d - lead + 2] : 1;
    g.stride[d] = real ? a.stride[d - lead] : 1;
    g.padding[d] = real ? a.padding_l[d - lead] : 0;
    g.dilation[d] = real ? a.dilation[d - lead] : 1;
  }
  return g;
}

ScalarType fallback_type(ScalarType t) { return t == kDouble ? kDouble : kFloat; }

void fallback_conv(const Tensor& x, const Tensor& w, const Tensor& b, Tensor out, const ConvArgs& a) {
  const ScalarType ct = fallback_type(x.dtype());
  Tensor res = make_empty(out.sizes(), ct);
  kernels::conv_fallback(as_5d(x.to(ct)), as_5d(w.to(ct)), b.defined() ? b.to(ct).contiguous() : b, as_5d(res),
                         geometry(x, out, w.sizes(), a), a.transposed);
  out.copy_(res);
}

// A transposed convolution from x to grad is the adjoint of the convolution from grad to x, whose
// weight has the same shape: its weight gradient is that convolution's with the roles swapped.
void fallback_weight_grad(const Tensor& grad, const Tensor& x, Tensor grad_weight, const ConvArgs& a) {
  const ScalarType ct = fallback_type(x.dtype());
  const Tensor& in = a.transposed ? grad : x;
  const Tensor& out = a.transposed ? x : grad;
  Tensor res = make_empty(grad_weight.sizes(), ct);
  kernels::conv_fallback_weight_grad(as_5d(in.to(ct)), as_5d(out.to(ct)), as_5d(res),
                                     geometry(in, out, grad_weight.sizes(), a));
  grad_weight.copy_(res);
}

// An activation the convolution did not fuse, applied afterwards.
void activate_(Tensor& out, detail::ConvActivation activation) {
  if (activation == detail::ConvActivation::kReLU) {
    out.relu_();
  } else {
    hardswish_(out);
  }
}

// A 1x1 convolution with unit strides and no padding over contiguous (NCHW) float32 tensors is one
// matrix product per image, out[n] (oc x HW) = w (oc x ic) @ x[n] (ic x HW): no reorders into and
// out of oneDNN's 16-channel blocks, whose padding of channel counts that are not multiples of 16
// (24, 40, 72, 120) also costs work. libtorch's single-threaded 1x1 convolutions are products too.
// Taken for images of one position (a matrix-vector product: squeeze-and-excitation's 1x1 convs,
// 2.6x faster) and of 256 or more (MobileNetV3's 1x1 convs on 28x28 to 112x112: 1.2-2.2x); on 7x7
// and 14x14 images the blocked convolution with its reorders is 5-15% faster than the product
// (1 thread, Zen 4). The bias is written first and the product added to it. Returns false when it
// does not apply.
bool conv_1x1_as_gemm(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& out, const ConvArgs& a) {
  if (a.transposed || a.groups != 1 || x.dtype() != kFloat || !x.is_contiguous() || !out.is_contiguous()) return false;
  for (int64_t d = 2; d < w.dim(); ++d)
    if (w.size(d) != 1 || a.stride[d - 2] != 1 || a.padding_l[d - 2] != 0 || a.padding_r[d - 2] != 0) return false;
  const int64_t n = x.size(0), ic = x.size(1), oc = w.size(0), hw = x.numel() / (n * ic);
  if (hw > 1 && hw < 256) return false;
  if (b.defined()) {
    DimVector bshape(static_cast<size_t>(out.dim()), 1);
    bshape[1] = oc;
    out.copy_(b.reshape(bshape).expand(out.sizes()));
  }
  const kernels::Matrices wm{w.data_ptr(), {n, oc, ic}, {0, w.stride(0), w.stride(1)}};
  const kernels::Matrices xm{x.data_ptr(), {n, ic, hw}, {ic * hw, hw, 1}};
  const kernels::Matrices om{out.data_ptr(), {n, oc, hw}, {oc * hw, hw, 1}};
  kernels::gemm(kFloat, om, wm, xm, {.beta = b.defined() ? 1 : 0}, kernels::Float32Math::kExact);
  return true;
}

// The convolution of a batched input (PyTorch's aten::convolution), the op that records
// ConvolutionBackward0; `op` is the public op its errors name.
struct ConvolutionOp {
  static constexpr const char* name = "convolution";
  static constexpr dispatch::Autocast autocast = dispatch::Autocast::kLowerPrecision;
  static Tensor run(const Tensor& x, const Tensor& weight, const Tensor& bias, const ConvArgs& a, const char* op) {
    const DimVector out_sizes = check_and_output_sizes(op, x.sizes(), x.dtype(), weight, bias, a);
    Tensor out = make_empty(out_sizes, x.dtype(), output_format(x, weight));
    if (out.numel() == 0) return out;
    bool activated = false;  // a.activation applied by oneDNN
    if (x.numel() == 0 || weight.numel() == 0) {  // no input channels: the bias alone
      if (bias.defined()) {
        DimVector bshape(out_sizes.size(), 1);
        bshape[1] = out_sizes[1];
        out.copy_(bias.reshape(bshape).expand(out_sizes));
      } else {
        out.zero_();
      }
    } else if (computed_in_float(x.dtype())) {
      Tensor out32 = make_empty(out_sizes, kFloat, output_format(x, weight));
      const Tensor b32 = bias.defined() ? bias.to(kFloat) : bias;
      activated = onednn_conv(x.to(kFloat), weight.to(kFloat), b32, out32, a);
      if (!activated) fallback_conv(x, weight, bias, out32, a);
      out.copy_(out32);
    } else if (x.dtype() == kFloat || x.dtype() == kBFloat16) {
      if (!conv_1x1_as_gemm(x, weight, bias, out, a)) {
        activated = onednn_conv(x, weight, bias, out, a);
        if (!activated) fallback_conv(x, weight, bias, out, a);
      }
    } else {
      fallback_conv(x, weight, bias, out, a);
    }
    if (a.activation && !activated) activate_(out, *a.activation);
    return out;
  }
  static void derivative(autograd::Derivative& d, const Tensor& x, const Tensor& weight, const Tensor& bias,
                         const ConvArgs& a, const char*);
};

// The bias's gradient: the output's gradient summed over all dims but the channels.
Tensor bias_grad(const Tensor& grad) {
  DimVector dims{0};
  for (int64_t i = 2; i < grad.dim(); ++i) dims.push_back(i);
  return grad.sum(dims.ref());
}

// The weight's gradient (PyTorch's convolution_backward for the weight): oneDNN's backward-weights
// primitive, or the fallback; a graph of the backward uses conv_weight_grad_recorded instead.
// With `with_bias`, `grad_bias` also receives the bias's gradient, from the same oneDNN pass (the
// flag rather than a null pointer: a graph's replay hands the op a slot of its own either way).
struct ConvolutionBackwardWeightOp {
  static constexpr const char* name = "convolution_backward";
  static Tensor run(const Tensor& grad, const Tensor& x, IntArrayRef weight_sizes, MemoryFormat format,
                    const ConvArgs& a, bool with_bias, Tensor* grad_bias_slot) {
    Tensor* grad_bias = with_bias ? grad_bias_slot : nullptr;
    Tensor grad_weight = make_empty(weight_sizes, x.dtype(), format);
    if (grad_bias) *grad_bias = make_empty({grad.size(1)}, grad.dtype());
    if (grad_weight.numel() == 0 || x.numel() == 0 || grad.numel() == 0) {
      grad_weight.zero_();
      if (grad_bias) *grad_bias = bias_grad(grad);
      return grad_weight;
    }
    if (computed_in_float(x.dtype())) {
      Tensor bias32;
      grad_weight.copy_(run(grad.to(kFloat), x.to(kFloat), weight_sizes, format, a, with_bias, &bias32));
      if (grad_bias) grad_bias->copy_(bias32);
      return grad_weight;
    }
    const bool onednn = x.dtype() == kFloat || x.dtype() == kBFloat16;
    if (!onednn || !onednn_weight_grad(grad, x, grad_weight, grad_bias ? *grad_bias : Tensor(), a)) {
      fallback_weight_grad(grad, x, grad_weight, a);
      if (grad_bias) *grad_bias = bias_grad(grad);
    }
    return grad_weight;
  }
};

// The input's gradient is the adjoint convolution of the output's gradient with the same weight:
// transposed for a convolution, direct for a transposed one. It records, so it is differentiable
// again with respect to the output's gradient and the weight.
Tensor conv_input_grad(const Tensor& grad, const Tensor& weight, ConvArgs a, IntArrayRef input_sizes) {
  const int64_t k = weight.dim() - 2;
  a.transposed = !a.transposed;
  if (a.transposed) {
    // the output_padding that brings the transposed output back to the input's size
    a.output_padding.clear();
    for (int64_t d = 0; d < k; ++d) {
      const int64_t dk = a.dilation[d] * (weight.size(d + 2) - 1) + 1;
      a.output_padding.push_back(input_sizes[d + 2] -
                                 ((grad.size(d + 2) - 1) * a.stride[d] - a.padding_l[d] - a.padding_r[d] + dk));
    }
    return dispatch::call<ConvolutionOp>(grad, weight, Tensor(), a, "convolution_backward");
  }
  // an output_padding below the dilation but not below the stride leaves positions no input reached
  Tensor grad_input = dispatch::call<ConvolutionOp>(grad, weight, Tensor(), a, "convolution_backward");
  for (int64_t d = 0; d < k; ++d) {
    if (grad_input.size(d + 2) != input_sizes[d + 2]) grad_input = grad_input.narrow(d + 2, 0, input_sizes[d + 2]);
  }
  return grad_input;
}

// The weight's gradient as a recorded convolution, for a graph of the backward (create_graph):
// gw[o][c][k] = sum over n, l of grad[n][o][l] * x[n][c][l * stride + k * dilation - padding] is a
// convolution of x with channels and batch swapped by grad as the weight, stride and dilation
// exchanged; groups become the convolution's groups over (group, image) channels. A transposed
// convolution's weight gradient is the one of its adjoint with x and grad exchanged.
Tensor conv_weight_grad_recorded(const Tensor& grad, const Tensor& x, IntArrayRef weight_sizes, ConvArgs a) {
  const Tensor& in = a.transposed ? grad : x;
  const Tensor& out = a.transposed ? x : grad;
  const int64_t g = a.groups, n = in.size(0), k = in.dim() - 2;
  const int64_t cg = in.size(1) / g, og = out.size(1) / g;
  DimVector in_split{n, g, cg}, out_split{n, g, og};
  DimVector in_perm{2, 1, 0}, out_perm{1, 2, 0};
  for (int64_t d = 0; d < k; ++d) {
    in_split.push_back(in.size(d + 2)), out_split.push_back(out.size(d + 2));
    in_perm.push_back(d + 3), out_perm.push_back(d + 3);
  }
  DimVector in_sizes{cg, g * n}, out_sizes{g * og, n};
  for (int64_t d = 0; d < k; ++d) in_sizes.push_back(in.size(d + 2)), out_sizes.push_back(out.size(d + 2));
  const Tensor images = in.reshape(in_split.ref()).permute(in_perm.ref()).reshape(in_sizes.ref());
  const Tensor filters = out.reshape(out_split.ref()).permute(out_perm.ref()).reshape(out_sizes.ref());
  std::swap(a.stride, a.dilation);
  a.transposed = false;
  Tensor gw = dispatch::call<ConvolutionOp>(images, filters, Tensor(), a, "convolution_backward").transpose(0, 1);
  for (int64_t d = 0; d < k; ++d) gw = gw.narrow(d + 2, 0, weight_sizes[d + 2]);
  return gw;
}

void ConvolutionOp::derivative(autograd::Derivative& d, const Tensor& x, const Tensor& weight, const Tensor& bias,
                               const ConvArgs& a, const char*) {
  d.name("ConvolutionBackward0");
  d.grad(x, [w = d.save_for(x, weight), a, sizes = DimVector(x.sizes()),
             format = output_format(x, weight)](const auto& c) {
    return conv_input_grad(c.grad(), c[w], a, sizes).contiguous(format);
  });
  // The weight's formula (run first) leaves the bias's gradient from its oneDNN pass here.
  auto fused_bias = std::make_shared<Tensor>();
  d.grad(weight, [x = d.save_for(weight, x), a, sizes = DimVector(weight.sizes()),
                  format = weight.suggest_memory_format(), fused_bias,
                  with_bias = d.needs(bias)](const auto& c) {
    const Tensor& grad = c.grad();
    const Tensor input = c[x];
    if (GradMode::is_enabled() && (grad.requires_grad() || input.requires_grad())) {
      return conv_weight_grad_recorded(grad, input, sizes.ref(), a).contiguous(format);
    }
    return dispatch::call<ConvolutionBackwardWeightOp>(grad, input, sizes.ref(), format, a, with_bias,
                                                       fused_bias.get());
  });
  d.grad(bias, [fused_bias](const auto& c) {
    return fused_bias->defined() ? std::exchange(*fused_bias, Tensor()) : bias_grad(c.grad());
  });
}

// The public convolutions: batch an unbatched input, then the recording op.
Tensor convolution(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvArgs& a,
                   int64_t k) {
  EMBER_CHECK(input.dim() == k + 1 || input.dim() == k + 2, op, "Expected ", k + 1, "D (unbatched) or ", k + 2,
              "D (batched) input to ", op, ", but got input of size: ", input.sizes());
  EMBER_CHECK(weight.dim() == k + 2, op, "Expected ", k + 2, "-dimensional weight for ", op, ", but got weight of size ",
              weight.sizes());
  if (input.dim() == k + 2) return dispatch::call<ConvolutionOp>(input, weight, bias, a, op);
  return dispatch::call<ConvolutionOp>(input.unsqueeze(0), weight, bias, a, op).squeeze(0);
}

ConvArgs conv_args(const char* op, int64_t k, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                   int64_t groups) {
  ConvArgs a;
  a.stride = expand_param(op, "stride", stride, k);
  a.padding_l = expand_param(op, "padding", padding, k);
  a.padding_r = a.padding_l;
  a.dilation = expand_param(op, "dilation", dilation, k);
  a.groups = groups;
  return a;
}

// padding="same" pads dilation * (kernel - 1) in total, the odd one on the right; "valid" none.
ConvArgs conv_args(const char* op, int64_t k, const Tensor& weight, IntArrayRef stride, std::string_view padding,
                   IntArrayRef dilation, int64_t groups) {
  EMBER_CHECK(padding == "same" || padding == "valid", op, "Invalid padding string: '", padding, "'");
  ConvArgs a = conv_args(op, k, stride, 0, dilation, groups);
  if (padding == "same") {
    for (int64_t s : a.stride)
      EMBER_CHECK(s == 1, op, "padding='same' is not supported for strided convolutions");
    EMBER_CHECK(weight.dim() == k + 2, op, "Expected ", k + 2, "-dimensional weight for ", op,
                ", but got weight of size ", weight.sizes());
    for (int64_t d = 0; d < k; ++d) {
      const int64_t total = a.dilation[d] * (weight.size(d + 2) - 1);
      a.padding_l[d] = total / 2;
      a.padding_r[d] = total - total / 2;
    }
  }
  return a;
}

template <int K>
struct ConvOp;
#define EMBER_CONV_OP(K, NAME)                                                                                    \
  template <>                                                                                                     \
  struct ConvOp<K> {                                                                                              \
    static constexpr const char* name = NAME;                                                                     \
    static constexpr bool composite = true;                                                                       \
    static constexpr dispatch::Autocast autocast = dispatch::Autocast::kLowerPrecision;                           \
    static Tensor run(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,          \
                      IntArrayRef padding, IntArrayRef dilation, int64_t groups) {                                \
      return convolution(name, input, weight, bias, conv_args(name, K, stride, padding, dilation, groups), K);    \
    }                                                                                                             \
    static Tensor run(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,          \
                      PaddingMode padding, IntArrayRef dilation, int64_t groups) {                                \
      return convolution(name, input, weight, bias,                                                              \
                         conv_args(name, K, weight, stride, padding.mode, dilation, groups), K);                  \
    }                                                                                                             \
  };
EMBER_CONV_OP(1, "conv1d")
EMBER_CONV_OP(2, "conv2d")
EMBER_CONV_OP(3, "conv3d")
#undef EMBER_CONV_OP

template <int K>
struct ConvTransposeOp {
  static constexpr const char* name = K == 1 ? "conv_transpose1d" : K == 2 ? "conv_transpose2d" : "conv_transpose3d";
  static constexpr bool composite = true;
  // lower precision as in PyTorch >= 2.0 (1.13's CPU list left conv_transpose in float32)
  static constexpr dispatch::Autocast autocast = dispatch::Autocast::kLowerPrecision;
  static Tensor run(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                    IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
    ConvArgs a = conv_args(name, K, stride, padding, dilation, groups);
    a.output_padding = expand_param(name, "output_padding", output_padding, K);
    a.transposed = true;
    return convolution(name, input, weight, bias, a, K);
  }
};

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  return dispatch::call<ConvOp<1>>(input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  return dispatch::call<ConvOp<2>>(input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  return dispatch::call<ConvOp<3>>(input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              PaddingMode padding, IntArrayRef dilation, int64_t groups) {
  return dispatch::call<ConvOp<1>>(input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              PaddingMode padding, IntArrayRef dilation, int64_t groups) {
  return dispatch::call<ConvOp<2>>(input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              PaddingMode padding, IntArrayRef dilation, int64_t groups) {
  return dispatch::call<ConvOp<3>>(input, weight, bias, stride, padding, dilation, groups);
}
// Not an op of its own: each op's layers cost the library about 28 KB; the profiler sees the
// convolution.
namespace detail {
namespace {
// Inside an autocast region: x, w and b cast as conv1d/2d/3d's autocast layer casts them (to the
// region's lower precision); true when they were.
bool autocast_conv_casts(Tensor& x, Tensor& w, Tensor& b) {
  if (!(dispatch::thread_state().active & dispatch::kAutocastLayer)) return false;
  const ScalarType to = dispatch::autocast_impl::region_dtype();
  x = dispatch::autocast_impl::cast(x, to);
  w = dispatch::autocast_impl::cast(w, to);
  b = dispatch::autocast_impl::cast(b, to);
  return true;
}
}  // namespace
Tensor convolution_activation(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                              IntArrayRef padding, IntArrayRef dilation, int64_t groups, ConvActivation activation) {
  const char* name = activation == ConvActivation::kReLU ? "convolution_relu" : "convolution_hardswish";
  const int64_t k = weight.dim() - 2;
  EMBER_CHECK(k >= 1 && k <= 3, name, "Expected a 3-, 4- or 5-dimensional weight, but got weight of size ",
              weight.sizes());
  if (Tensor x = input, w = weight, b = bias; autocast_conv_casts(x, w, b)) {
    const dispatch::autocast_impl::Suspend suspend;
    return convolution_activation(x, w, b, stride, padding, dilation, groups, activation);
  }
  const bool records = GradMode::is_enabled() && (input.requires_grad() || weight.requires_grad() ||
                                                   (bias.defined() && bias.requires_grad()));
  if (records || (dispatch::thread_state().active & dispatch::kTracingLayer)) {
    const Tensor y = k == 1   ? conv1d(input, weight, bias, stride, padding, dilation, groups)
                     : k == 2 ? conv2d(input, weight, bias, stride, padding, dilation, groups)
                              : conv3d(input, weight, bias, stride, padding, dilation, groups);
    return activation == ConvActivation::kReLU ? relu(y) : hardswish(y);
  }
  ConvArgs a = conv_args(name, k, stride, padding, dilation, groups);
  a.activation = activation;
  return convolution(name, input, weight, bias, a, k);
}
Tensor convolution_add_activation(const Tensor& other, const Tensor& input, const Tensor& weight, const Tensor& bias,
                                  IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups,
                                  std::optional<ConvActivation> activation) {
  constexpr const char* op = "convolution_add";
  if (Tensor x = input, w = weight, b = bias; autocast_conv_casts(x, w, b)) {
    const dispatch::autocast_impl::Suspend suspend;
    return convolution_add_activation(other, x, w, b, stride, padding, dilation, groups, activation);
  }
  EMBER_CHECK(!(dispatch::thread_state().active & dispatch::kTracingLayer), op, "it cannot be traced");
  auto unfused = [&] {  // into other when the sum has its size and dtype, else a new tensor (a broadcast)
    Tensor y = conv2d(input, weight, bias, stride, padding, dilation, groups);
    y = other.sizes() == y.sizes() && other.dtype() == y.dtype() ? other.add_(y) : y + other;
    if (activation) activate_(y, *activation);
    return y;
  };
  const ScalarType t = input.dtype();
  if (input.dim() != 4 || weight.dim() != 4 || other.dtype() != t || !(t == kFloat || t == kBFloat16) ||
      computed_in_float(t))
    return unfused();
  ConvArgs a = conv_args(op, 2, stride, padding, dilation, groups);
  const DimVector out_sizes = check_and_output_sizes(op, input.sizes(), t, weight, bias, a);
  a.activation = activation;
  a.sum = true;
  if (other.sizes() == out_sizes.ref() && input.numel() > 0 && weight.numel() > 0 &&
      other.is_contiguous(output_format(input, weight)) && !input.is_alias_of(other) && !weight.is_alias_of(other) &&
      (!bias.defined() || !bias.is_alias_of(other)) && onednn_conv(input, weight, bias, other, a)) {
    other.impl()->storage()->bump_version();
    return other;
  }
  return unfused();
}
// declared in ember/nn/intrinsic.h, beside the modules that run it
Tensor convolution_relu(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return convolution_activation(input, weight, bias, stride, padding, dilation, groups, ConvActivation::kReLU);
}

int64_t channel_block() {
  // oneDNN's blocked kernels take 16 channels at a time from AVX-512 on, 8 below
  static const int64_t block =
      (static_cast<int>(dnnl::get_effective_cpu_isa()) & static_cast<int>(dnnl::cpu_isa::avx512_core)) ==
              static_cast<int>(dnnl::cpu_isa::avx512_core)
          ? 16
          : 8;
  return block;
}

namespace {

// oneDNN's descriptor of the channel-blocked layout of a float32 tensor of sizes (N, C, H, W).
dnnl::memory::desc blocked_desc(IntArrayRef sizes) {
  return {{sizes[0], sizes[1], sizes[2], sizes[3]}, dnnl::memory::data_type::f32,
          channel_block() == 16 ? dnnl::memory::format_tag::nChw16c : dnnl::memory::format_tag::nChw8c};
}

void check_blocked(const char* op, const char* name, const Tensor& t, int64_t channels) {
  const int64_t b = channel_block();
  EMBER_CHECK(t.dim() == 5 && t.dtype() == kFloat && t.size(1) == (channels + b - 1) / b && t.size(4) == b &&
                  t.is_contiguous(),
              op, "expected ", name, " to be a contiguous float32 tensor of ", channels, " channels in blocks of ", b,
              " (N, ", (channels + b - 1) / b, ", H, W, ", b, "), but got ", t.dtype(), " of size ", t.sizes());
}

}  // namespace

Tensor convolution_blocked(const Tensor& input, bool blocked_input, const Tensor& weight, const Tensor& bias,
                           IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups,
                           std::optional<ConvActivation> activation, bool blocked_output, MemoryFormat plain_format) {
  constexpr const char* op = "convolution_blocked";
  EMBER_CHECK(!(dispatch::thread_state().active & dispatch::kTracingLayer), op,
              "a convolution on channel-blocked tensors (fx::optimize_for_inference's) cannot be traced");
  EMBER_CHECK(weight.dim() == 4 && weight.dtype() == kFloat, op, "expected a 4-dimensional float32 weight, but got ",
              weight.dtype(), " weight of size ", weight.sizes());
  ConvArgs a = conv_args(op, 2, stride, padding, dilation, groups);
  a.activation = activation;
  // a lower-precision plain input (an autocast region's): blocked convolutions run in float32
  const Tensor in = !blocked_input && dispatch::autocast_impl::eligible(input) ? input.to(kFloat) : input;
  DimVector in_sizes(in.sizes());
  if (blocked_input) {
    const int64_t channels = weight.size(1) * groups;
    check_blocked(op, "input", in, channels);
    in_sizes = {in.size(0), channels, in.size(2), in.size(3)};
  } else {
    EMBER_CHECK(in.dim() == 4, op, "Expected 4D (batched) input to conv2d, but got input of size: ", in.sizes());
  }
  const DimVector out_sizes = check_and_output_sizes(op, in_sizes.ref(), in.dtype(), weight, bias, a);
  const int64_t b = channel_block();
  Tensor out =
      blocked_output
          ? make_empty({out_sizes[0], (out_sizes[1] + b - 1) / b, out_sizes[2], out_sizes[3], b}, kFloat)
          : make_empty(out_sizes, kFloat, plain_format);
  if (out.numel() == 0) return out;
  const dnnl::memory::desc src = blocked_desc(in_sizes.ref()), dst = blocked_desc(out_sizes.ref());
  EMBER_CHECK(onednn_conv(in, weight, bias, out, a, blocked_input ? &src : nullptr, blocked_output ? &dst : nullptr),
              op, "oneDNN has no convolution of input ", in_sizes.ref(), " and weight ", weight.sizes());
  return out;
}

Tensor from_channel_blocked(const Tensor& blocked, int64_t channels, MemoryFormat format) {
  constexpr const char* op = "from_channel_blocked";
  check_blocked(op, "the blocked tensor", blocked, channels);
  const DimVector sizes{blocked.size(0), channels, blocked.size(2), blocked.size(3)};
  Tensor out = make_empty(sizes, kFloat, format);
  if (out.numel() == 0) return out;
  onednn::Key key(op);
  key.add(out);
  onednn::Primitive& reorder = onednn::cached(key, [&] {
    const dnnl::memory::desc from = blocked_desc(sizes.ref()), to = onednn::desc_of(out);
    const dnnl::engine& eng = onednn::engine();
    onednn::Primitive r;
    r.primitive = dnnl::reorder(dnnl::reorder::primitive_desc(eng, from, eng, to));
    r.args.emplace(DNNL_ARG_FROM, dnnl::memory(from, eng, DNNL_MEMORY_NONE));
    r.args.emplace(DNNL_ARG_TO, dnnl::memory(to, eng, DNNL_MEMORY_NONE));
    return r;
  });
  reorder.execute({{DNNL_ARG_FROM, blocked.data_ptr()}, {DNNL_ARG_TO, out.data_ptr()}});
  return out;
}
}  // namespace detail
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  return dispatch::call<ConvTransposeOp<1>>(input, weight, bias, stride, padding, output_padding, groups, dilation);
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  return dispatch::call<ConvTransposeOp<2>>(input, weight, bias, stride, padding, output_padding, groups, dilation);
}
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  return dispatch::call<ConvTransposeOp<3>>(input, weight, bias, stride, padding, output_padding, groups, dilation);
}

}  // namespace ember
