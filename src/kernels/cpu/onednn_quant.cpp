#include "kernels/cpu/onednn_quant.h"

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/cpu/onednn.h"

namespace ember::kernels {

using dt = dnnl::memory::data_type;
using dims = dnnl::memory::dims;

struct Int8Linear::State {
  int64_t n, k;
  bool per_channel;
  std::vector<float> w_scales;
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul primitive;
  dnnl::memory weight;  // in the primitive's layout
  dnnl::memory bias;    // [1, n] f32, or none
  std::string impl;
};

Int8Linear::Int8Linear(const int8_t* w, int64_t n, int64_t k, const std::vector<float>& w_scales, const float* bias)
    : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.n = n;
  s.k = k;
  s.per_channel = w_scales.size() > 1;
  s.w_scales = w_scales;
  const dnnl::engine& eng = onednn::engine();
  const dnnl::memory::desc src({DNNL_RUNTIME_DIM_VAL, k}, dt::u8, dims{k, 1});
  const dnnl::memory::desc dst({DNNL_RUNTIME_DIM_VAL, n}, dt::f32, dims{n, 1});
  const dnnl::memory::desc w_plain({k, n}, dt::s8, dims{1, k});  // W^T: w[n, k] read as [k, n]
  dnnl::primitive_attr attr;
  attr.set_output_scales(s.per_channel ? 1 << 1 : 0, {DNNL_RUNTIME_F32_VAL});
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  const dnnl::memory::desc bias_md({1, n}, dt::f32, dims{n, 1});
  if (bias) {
    dnnl::post_ops ops;
    ops.append_binary(dnnl::algorithm::binary_add, bias_md);
    attr.set_post_ops(ops);
  }
  // the weight in the layout oneDNN prefers for this shape, else as it is
  try {
    const dnnl::memory::desc w_any({k, n}, dt::s8, dnnl::memory::format_tag::any);
    s.pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, w_any, dst), attr, eng);
  } catch (const dnnl::error&) {
    s.pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, w_plain, dst), attr, eng);
  }
  s.primitive = dnnl::matmul(s.pd);
  s.impl = s.pd.impl_info_str();
  dnnl::memory user_w(w_plain, eng, const_cast<int8_t*>(w));
  s.weight = dnnl::memory(s.pd.weights_desc(), eng);
  dnnl::reorder(user_w, s.weight).execute(onednn::stream(), user_w, s.weight);
  onednn::stream().wait();
  if (bias) {
    s.bias = dnnl::memory(bias_md, eng);
    std::copy(bias, bias + n, static_cast<float*>(s.bias.get_data_handle()));
  }
}

Int8Linear::~Int8Linear() = default;

void Int8Linear::run(const uint8_t* x, int64_t m, float x_scale, int32_t x_zero_point, float* y) const {
  const State& s = *s_;
  const dnnl::engine& eng = onednn::engine();
  std::vector<float> scales(s.w_scales.size());
  for (size_t i = 0; i < scales.size(); ++i) scales[i] = x_scale * s.w_scales[i];
  dnnl::memory src(dnnl::memory::desc({m, s.k}, dt::u8, dims{s.k, 1}), eng, const_cast<uint8_t*>(x));
  dnnl::memory dst(dnnl::memory::desc({m, s.n}, dt::f32, dims{s.n, 1}), eng, y);
  dnnl::memory scale_mem(dnnl::memory::desc({static_cast<int64_t>(scales.size())}, dt::f32, dims{1}), eng,
                         scales.data());
  int32_t zp = x_zero_point;
  dnnl::memory zp_mem(dnnl::memory::desc({1}, dt::s32, dims{1}), eng, &zp);
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, src},
                                             {DNNL_ARG_WEIGHTS, s.weight},
                                             {DNNL_ARG_DST, dst},
                                             {DNNL_ARG_ATTR_OUTPUT_SCALES, scale_mem},
                                             {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zp_mem}};
  if (s.bias) args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, s.bias);
  dnnl::stream& st = onednn::stream();
  s.primitive.execute(st, args);
  st.wait();
}

const std::string& Int8Linear::impl() const { return s_->impl; }

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
