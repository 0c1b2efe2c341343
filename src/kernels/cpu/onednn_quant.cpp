#include "kernels/cpu/onednn_quant.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <string_view>

#include "ember/error.h"
#include "core/parallel.h"
#include "kernels/cpu/onednn.h"

namespace ember::kernels {

using dt = dnnl::memory::data_type;
using dims = dnnl::memory::dims;

struct Int8Linear::State {
  uint64_t id;  // tells this layer's cached primitives from another's
  int64_t n, k;
  std::vector<int8_t> w;         // [n, k]
  std::vector<float> w_scales;   // n or 1
  std::vector<float> bias;       // n or none
  std::vector<int32_t> w_sums;   // sum_k w[j, k]: the zero point's correction
};

namespace {

std::atomic<uint64_t> next_layer_id{1};

// What a cached primitive keeps: the weight in its layout and the implementation's name.
struct Prepared {
  dnnl::memory weight;
  std::string impl;
};

// u8 [m, k] x s8 [k, n] -> s32 [m, n], the weight in the layout oneDNN prefers for m rows.
onednn::Primitive& linear_primitive(const Int8Linear::State& s, int64_t m) {
  onednn::Key key("int8_linear");
  key.add(static_cast<int64_t>(s.id)).add(m);
  return onednn::cached(key, [&] {
    const dnnl::engine& eng = onednn::engine();
    const dnnl::memory::desc src({m, s.k}, dt::u8, dims{s.k, 1});
    const dnnl::memory::desc dst({m, s.n}, dt::s32, dims{s.n, 1});
    const dnnl::memory::desc w_plain({s.k, s.n}, dt::s8, dims{1, s.k});  // W^T: w[n, k] read as [k, n]
    const dnnl::primitive_attr attr = onednn::user_scratchpad();
    dnnl::matmul::primitive_desc pd;
    try {
      pd = dnnl::matmul::primitive_desc(
          dnnl::matmul::desc(src, dnnl::memory::desc({s.k, s.n}, dt::s8, dnnl::memory::format_tag::any), dst), attr,
          eng);
    } catch (const dnnl::error&) {
      pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, w_plain, dst), attr, eng);
    }
    auto prepared = std::make_shared<Prepared>();
    prepared->impl = pd.impl_info_str();
    dnnl::memory user_w(w_plain, eng, const_cast<int8_t*>(s.w.data()));
    prepared->weight = dnnl::memory(pd.weights_desc(), eng);
    dnnl::reorder(user_w, prepared->weight).execute(onednn::stream(), user_w, prepared->weight);
    onednn::stream().wait();
    onednn::Primitive p;
    p.primitive = dnnl::matmul(pd);
    p.args = {{DNNL_ARG_SRC, dnnl::memory(src, eng, DNNL_MEMORY_NONE)},
              {DNNL_ARG_WEIGHTS, prepared->weight},
              {DNNL_ARG_DST, dnnl::memory(dst, eng, DNNL_MEMORY_NONE)}};
    p.use_scratchpad(pd);
    p.extra = prepared;
    return p;
  });
}

}  // namespace

Int8Linear::Int8Linear(const int8_t* w, int64_t n, int64_t k, const std::vector<float>& w_scales, const float* bias)
    : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.id = next_layer_id.fetch_add(1);
  s.n = n;
  s.k = k;
  s.w.assign(w, w + n * k);
  s.w_scales = w_scales;
  if (bias) s.bias.assign(bias, bias + n);
  s.w_sums.resize(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    int32_t sum = 0;
    for (int64_t i = 0; i < k; ++i) sum += w[j * k + i];
    s.w_sums[static_cast<size_t>(j)] = sum;
  }
}

Int8Linear::~Int8Linear() = default;

namespace {

// oneDNN's scales are PyTorch's reciprocals, which PyTorch computes in double and rounds to float.
float inverse_scale(float scale) { return static_cast<float>(1.0 / scale); }

// The int32 sums of x's rows with the weight handed to f(row, sums, correction) row by row across
// threads; correction[j] (x's zero point times column j's weight sum) is what f subtracts from
// sums[j], in its own pass over the row (a separate pass cost the dynamic Linear 8%).
template <class F>
void for_each_row_of_sums(const Int8Linear::State& s, const uint8_t* x, int64_t m, int32_t x_zero_point, const F& f) {
  onednn::Primitive& p = linear_primitive(s, m);
  const size_t bytes = static_cast<size_t>(m * s.n) * sizeof(int32_t);
  struct Sums {  // the int32 results, from the caching allocator
    size_t n;
    int32_t* p;
    explicit Sums(size_t b) : n(b), p(static_cast<int32_t*>(cpu_allocator::allocate(b))) {}
    ~Sums() { cpu_allocator::deallocate(p, n); }
  } acc(bytes);
  p.execute({{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, acc.p}});
  const int64_t n = s.n;
  std::vector<int32_t> correction(static_cast<size_t>(n));
  for (size_t j = 0; j < correction.size(); ++j) correction[j] = x_zero_point * s.w_sums[j];
  parallel_for(0, m, std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) f(r, acc.p + r * n, correction.data());
  });
}

}  // namespace

void Int8Linear::run(const uint8_t* x, int64_t m, float x_scale, int32_t x_zero_point, float* y) const {
  const State& s = *s_;
  const bool per_channel = s.w_scales.size() > 1;
  std::vector<float> scale(static_cast<size_t>(s.n)), shift(static_cast<size_t>(s.n));
  for (size_t j = 0; j < scale.size(); ++j) {
    scale[j] = x_scale * s.w_scales[per_channel ? j : 0];
    shift[j] = s.bias.empty() ? 0.f : s.bias[j];
  }
  const int64_t n = s.n;
  const float* sc = scale.data();
  const float* sh = shift.data();
  for_each_row_of_sums(s, x, m, x_zero_point, [n, y, sc, sh](int64_t r, const int32_t* a, const int32_t* c) {
    float* out = y + r * n;
    for (int64_t j = 0; j < n; ++j) out[j] = static_cast<float>(a[j] - c[j]) * sc[j] + sh[j];
  });
}

void Int8Linear::run(const uint8_t* x, int64_t m, float x_scale, int32_t x_zero_point, uint8_t* y, float y_scale,
                     int32_t y_zero_point) const {
  const State& s = *s_;
  const bool per_channel = s.w_scales.size() > 1;
  const float x_inv = inverse_scale(x_scale), y_inv = inverse_scale(y_scale);
  std::vector<float> scale(static_cast<size_t>(s.n)), shift(static_cast<size_t>(s.n));
  for (size_t j = 0; j < scale.size(); ++j) {
    const float w_inv = per_channel ? 1.0f / s.w_scales[j] : inverse_scale(s.w_scales[0]);
    scale[j] = y_inv / (x_inv * w_inv);
    shift[j] = s.bias.empty() ? 0.f : s.bias[j] * (x_inv * w_inv);
  }
  const float zero_point = static_cast<float>(y_zero_point);
  const int64_t n = s.n;
  const float* sc = scale.data();
  const float* sh = shift.data();
  for_each_row_of_sums(
      s, x, m, x_zero_point, [n, y, sc, sh, zero_point](int64_t r, const int32_t* a, const int32_t* c) {
        uint8_t* out = y + r * n;
        for (int64_t j = 0; j < n; ++j)
          out[j] = static_cast<uint8_t>(
              std::nearbyint(std::clamp((static_cast<float>(a[j] - c[j]) + sh[j]) * sc[j] + zero_point, 0.f, 255.f)));
      });
}

std::string Int8Linear::impl(int64_t m) const {
  return static_cast<const Prepared*>(linear_primitive(*s_, std::max<int64_t>(m, 1)).extra.get())->impl;
}

struct Int8Conv::State {
  uint64_t id;  // tells this convolution's cached primitives from another's
  DimVector w_sizes;
  std::vector<float> w_inv_scales;  // 1 / w_scales as PyTorch's prepacking computes them
  std::vector<float> bias;          // empty: none
  Int8ConvGeometry g;
  dnnl::memory::desc w_md;  // the user's weight: [groups,] out, in / groups, kernel... (plain)
  std::vector<int8_t> w;
};

namespace {

std::atomic<uint64_t> next_conv_id{1};

// What the cached primitive keeps: the weight in its layout and the implementation's name.
struct ConvExtra {
  dnnl::memory weight;
  std::string impl;
};

dims to_dims(IntArrayRef v) { return dims(v.begin(), v.end()); }

bool is_amx(std::string_view impl) { return impl.find("amx") != std::string_view::npos; }

// oneDNN 2.6.3's AMX int8 convolutions cost 10-20 us a call before any work: a 64 -> 24 channel
// 1x1 convolution of a 6x6 image takes 12 us there and 1.2 us in the AVX-512 VNNI kernel. They
// pay from about 8M multiply-adds per thread (Xeon with AMX, 1 and 2 threads, channels-last:
// 115M-925M 0.14-0.56 of VNNI's time, 30M-60M at 2 threads 0.60-0.87, 10.5M at 1 thread 0.86,
// 18M at 2 threads 1.28, 2.3M-5.4M at 1 thread 1.15-1.85); below that VNNI runs them.
bool amx_pays(const Int8Conv::State& s, IntArrayRef y_sizes) {
  double macs = 1;
  for (size_t d = 0; d < y_sizes.size(); ++d) macs *= static_cast<double>(y_sizes[d]);
  for (size_t d = 1; d < s.w_sizes.size(); ++d) macs *= static_cast<double>(s.w_sizes[d]);  // in / groups, kernel
  return macs >= 8e6 * get_num_threads();
}

// oneDNN 2.6 has no convolution taking its output scales at run time: they are part of the
// primitive, and so of its key (a statically quantized model keeps its scales from call to call).
onednn::Primitive& conv_primitive(const Int8Conv::State& s, IntArrayRef x_sizes, IntArrayRef x_strides, float x_scale,
                                  IntArrayRef y_sizes, IntArrayRef y_strides, float y_scale) {
  onednn::Key key("int8_conv");
  key.add(static_cast<int64_t>(s.id)).add(x_sizes).add(x_strides).add(y_sizes).add(y_strides);
  key.add(std::bit_cast<int32_t>(x_scale)).add(std::bit_cast<int32_t>(y_scale)).add(get_num_threads());  // amx_pays
  return onednn::cached(key, [&] {
    const dnnl::engine& eng = onednn::engine();
    const dnnl::memory::desc src(to_dims(x_sizes), dt::u8, to_dims(x_strides));
    const dnnl::memory::desc dst(to_dims(y_sizes), dt::u8, to_dims(y_strides));
    const int64_t out = s.w_sizes[0];
    const dnnl::memory::desc bias_md = s.bias.empty() ? dnnl::memory::desc() : dnnl::memory::desc({out}, dt::f32, dims{1});
    dnnl::primitive_attr attr = onednn::user_scratchpad();
    const float x_inv = inverse_scale(x_scale), y_inv = inverse_scale(y_scale);
    std::vector<float> scales(s.w_inv_scales.size());
    for (size_t i = 0; i < scales.size(); ++i) scales[i] = y_inv / (x_inv * s.w_inv_scales[i]);
    attr.set_output_scales(s.w_inv_scales.size() > 1 ? 1 << 1 : 0, scales);
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
    if (s.g.relu) {
      dnnl::post_ops ops;
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      attr.set_post_ops(ops);
    }
    dims dilation;
    for (int64_t d : s.g.dilation) dilation.push_back(d - 1);  // oneDNN counts the holes
    const dnnl::memory::desc w_any(s.w_md.dims(), dt::s8, dnnl::memory::format_tag::any);
    const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                               src, w_any, bias_md, dst, to_dims(s.g.stride), dilation,
                                               to_dims(s.g.padding_l), to_dims(s.g.padding_r));
    dnnl::convolution_forward::primitive_desc pd;
    try {
      pd = dnnl::convolution_forward::primitive_desc(desc, attr, eng);
      onednn::skip_faulty(pd);
      if (is_amx(pd.impl_info_str()) && !amx_pays(s, y_sizes)) {
        while (is_amx(pd.impl_info_str()) && pd.next_impl()) {
        }
        if (is_amx(pd.impl_info_str())) {  // nothing else: the first again
          pd = dnnl::convolution_forward::primitive_desc(desc, attr, eng);
          onednn::skip_faulty(pd);
        }
      }
    } catch (const dnnl::error& e) {
      detail::fail("quantized convolution", "oneDNN has no int8 convolution for input ", x_sizes, " and weight ",
                   IntArrayRef(s.w_sizes), ": ", e.what());
    }
    auto extra = std::make_shared<ConvExtra>();
    extra->impl = pd.impl_info_str();
    dnnl::memory user_w(s.w_md, eng, const_cast<int8_t*>(s.w.data()));
    extra->weight = dnnl::memory(pd.weights_desc(), eng);
    dnnl::reorder(user_w, extra->weight).execute(onednn::stream(), user_w, extra->weight);
    onednn::stream().wait();
    onednn::Primitive p;
    p.primitive = dnnl::convolution_forward(pd);
    p.args = {{DNNL_ARG_SRC, dnnl::memory(src, eng, DNNL_MEMORY_NONE)},
              {DNNL_ARG_WEIGHTS, extra->weight},
              {DNNL_ARG_DST, dnnl::memory(dst, eng, DNNL_MEMORY_NONE)},
              {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, dnnl::memory(dnnl::memory::desc({1}, dt::s32, dims{1}), eng, DNNL_MEMORY_NONE)},
              {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, dnnl::memory(dnnl::memory::desc({1}, dt::s32, dims{1}), eng, DNNL_MEMORY_NONE)}};
    if (!s.bias.empty()) p.args.emplace(DNNL_ARG_BIAS, dnnl::memory(bias_md, eng, DNNL_MEMORY_NONE));
    p.use_scratchpad(pd);
    p.extra = extra;
    return p;
  });
}

}  // namespace

Int8Conv::Int8Conv(const int8_t* w, IntArrayRef w_sizes, const std::vector<float>& w_scales, const float* bias,
                   Int8ConvGeometry geometry)
    : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.id = next_conv_id.fetch_add(1);
  s.w_sizes = DimVector(w_sizes);
  // PyTorch (qconv_prepack): 1.0f / scale per channel, float(1.0 / scale) per tensor
  for (float w_scale : w_scales) s.w_inv_scales.push_back(w_scales.size() > 1 ? 1.0f / w_scale : inverse_scale(w_scale));
  s.g = std::move(geometry);
  const int64_t out = w_sizes[0];
  if (bias) s.bias.assign(bias, bias + out);
  int64_t numel = 1;
  for (int64_t d : w_sizes) numel *= d;
  s.w.assign(w, w + numel);
  dims wd = to_dims(w_sizes);
  if (s.g.groups > 1) {  // [groups, out / groups, in / groups, kernel...]: the same bytes
    wd[0] /= s.g.groups;
    wd.insert(wd.begin(), s.g.groups);
  }
  dims strides(wd.size(), 1);
  for (size_t d = wd.size() - 1; d > 0; --d) strides[d - 1] = strides[d] * wd[d];
  s.w_md = dnnl::memory::desc(wd, dt::s8, strides);
}

Int8Conv::~Int8Conv() = default;

void Int8Conv::run(const uint8_t* x, IntArrayRef x_sizes, IntArrayRef x_strides, float x_scale, int32_t x_zero_point,
                   uint8_t* y, IntArrayRef y_sizes, IntArrayRef y_strides, float y_scale,
                   int32_t y_zero_point) const {
  const State& s = *s_;
  onednn::Primitive& p = conv_primitive(s, x_sizes, x_strides, x_scale, y_sizes, y_strides, y_scale);
  std::vector<float> bias(s.bias.size());
  const float x_inv = inverse_scale(x_scale);
  const bool per_channel = s.w_inv_scales.size() > 1;
  for (size_t c = 0; c < bias.size(); ++c) bias[c] = s.bias[c] * (x_inv * s.w_inv_scales[per_channel ? c : 0]);
  if (bias.empty()) {
    p.execute({{DNNL_ARG_SRC, x},
               {DNNL_ARG_DST, y},
               {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, &x_zero_point},
               {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, &y_zero_point}});
  } else {
    p.execute({{DNNL_ARG_SRC, x},
               {DNNL_ARG_DST, y},
               {DNNL_ARG_BIAS, bias.data()},
               {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, &x_zero_point},
               {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, &y_zero_point}});
  }
}

std::string Int8Conv::impl(IntArrayRef x_sizes, IntArrayRef x_strides, float x_scale, IntArrayRef y_sizes,
                           IntArrayRef y_strides, float y_scale) const {
  return static_cast<const ConvExtra*>(
             conv_primitive(*s_, x_sizes, x_strides, x_scale, y_sizes, y_strides, y_scale).extra.get())
      ->impl;
}

std::string onednn_cpu_isa() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

}  // namespace ember::kernels
