// Heavy ops: matrix products and convolutions (arithmetic-bound: GFLOP/s against the FMA peak),
// row-wise softmax and layer_norm (a few passes over each row), and a tiny linear (dispatch
// overhead around a 16x16 product).
#include "ember/parallel.h"  // has_bfloat16_instructions
#include "torch_check.h"

namespace {

namespace F = ember::nn::functional;

constexpr const char* kMatmul = "heavy_ops: matmul";
constexpr const char* kConv = "heavy_ops: conv2d 3x3, [8,64,56,56] float32";
constexpr const char* kSmallConv = "heavy_ops: conv2d 3x3 inference, batch 1, float32";
constexpr const char* kRows = "heavy_ops: rows of [4096,1024] float32";
constexpr const char* kSmallLinear = "heavy_ops: small linear";

// Results that sum k products of inputs in [-2, 2): the libraries sum in different orders and
// blockings, so besides the dtype's tolerance they may differ by the rounding of that sum, up to
// k * 4 * eps of the float32 accumulator both use (bfloat16 included: each rounds once at the
// end). The same rule as the linalg parity tests.
parity::Tol sum_of_products_tol(ember::ScalarType dtype, int64_t k) {
  parity::Tol tol = parity::default_tol(dtype);
  tol.atol += static_cast<double>(k) * 4 * 0x1p-24;
  return tol;
}

using bench::Input;

// Square n x n matmul in `dtype`; libtorch's float32 product runs on OpenBLAS, its bfloat16
// product on oneDNN where the CPU has AVX-512 and otherwise on a loop that sums in bfloat16 (on
// Zen 3, 1024 x 1024 of randn: 13.6 off the exact product at worst). Ember's result is checked
// against the float32 product of the same operands, rounded to the dtype.
bench::Outcome square_matmul(const bench::Context& ctx, int64_t n, ember::ScalarType dtype, double min_run_time) {
  const Input a = parity::random({n, n}, dtype, 11), b = parity::random({n, n}, dtype, 12);
  const torch::Tensor expected =
      torch::matmul(a.t.to(torch::kFloat32), b.t.to(torch::kFloat32)).to(a.t.scalar_type());
  bench::check_close(ctx, ember::matmul(a.e, b.e), expected, sum_of_products_tol(dtype, n));
  return bench::time_pair(ctx, {.ember = [&] { (void)ember::matmul(a.e, b.e); },
                                .baseline = [&] { (void)torch::matmul(a.t, b.t); },
                                .min_run_time = min_run_time,
                                .flops = 2.0 * static_cast<double>(n * n * n)});
}

bench::Register matmul_f32_256{{
    .name = "matmul_f32_256",
    .label = kMatmul,
    .target = 0.67,
    .run = [](const bench::Context& ctx) { return square_matmul(ctx, 256, ember::kFloat, 1.0); },
}};

bench::Register matmul_f32_1024{{
    .name = "matmul_f32_1024",
    .label = kMatmul,
    .target = 0.67,
    .run = [](const bench::Context& ctx) { return square_matmul(ctx, 1024, ember::kFloat, 2.0); },
}};

// Tens of milliseconds per call: the rounds hold a few calls each.
bench::Register matmul_f32_2048{{
    .name = "matmul_f32_2048",
    .label = kMatmul,
    .target = 0.67,
    .run = [](const bench::Context& ctx) { return square_matmul(ctx, 2048, ember::kFloat, 4.0); },
}};

// The GFLOP/s note reads against the float32 FMA peak; bfloat16 units (AVX512-BF16, AMX) can
// exceed it.
bench::Register matmul_bf16_1024{{
    .name = "matmul_bf16_1024",
    .label = kMatmul,
    .target = 1.0,
    .run = [](const bench::Context& ctx) { return square_matmul(ctx, 1024, ember::kBFloat16, 1.0); },
}};

// set_float32_matmul_precision("medium") against "highest", both Ember, float32 1024 x 1024:
// where the CPU has bfloat16 instructions, medium rounds the operands to bfloat16 and runs the
// bfloat16 product with float32 accumulation, so its result must equal the float32 product of the
// rounded operands; elsewhere medium computes as highest (the float32 product itself).
bench::Register matmul_f32_1024_medium_vs_highest{{
    .name = "matmul_f32_1024_medium_vs_highest",
    .label = kMatmul,
    .target = 1.0 / 3,
    .baseline = bench::Baseline::Ember,
    .needs = bench::Needs::Amx,
    .run =
        [](const bench::Context& ctx) {
          constexpr int64_t kN = 1024;
          const Input a = parity::random({kN, kN}, ember::kFloat, 11), b = parity::random({kN, kN}, ember::kFloat, 12);
          const auto with = [&](const char* precision) {
            const std::string saved = ember::get_float32_matmul_precision();
            ember::set_float32_matmul_precision(precision);
            ember::Tensor out = ember::matmul(a.e, b.e);
            ember::set_float32_matmul_precision(saved);
            return out;
          };
          const auto rounded = [](const torch::Tensor& t) {
            return ember::has_bfloat16_instructions() ? t.to(torch::kBFloat16).to(torch::kFloat32) : t;
          };
          bench::check_close(ctx, with("medium"), torch::matmul(rounded(a.t), rounded(b.t)),
                             sum_of_products_tol(ember::kFloat, kN));
          return bench::time_pair(ctx, {.ember = [&] { (void)with("medium"); },
                                        .baseline = [&] { (void)with("highest"); },
                                        .min_run_time = 2.0,
                                        .flops = 2.0 * static_cast<double>(kN * kN * kN)});
        },
}};

// conv2d of input [8,64,56,56] with weight [64,64,3,3], stride 1, padding 1, in `format`.
bench::Outcome conv2d_3x3(const bench::Context& ctx, ember::MemoryFormat format) {
  constexpr int64_t kN = 8, kC = 64, kHW = 56;
  const Input x = parity::random({kN, kC, kHW, kHW}, ember::kFloat, 21).contiguous(format);
  const Input w = parity::random({kC, kC, 3, 3}, ember::kFloat, 22).contiguous(format);
  bench::check_close(ctx, ember::conv2d(x.e, w.e, {}, 1, 1), torch::conv2d(x.t, w.t, {}, 1, 1),
                     sum_of_products_tol(ember::kFloat, kC * 9));
  return bench::time_pair(ctx, {.ember = [&] { (void)ember::conv2d(x.e, w.e, {}, 1, 1); },
                                .baseline = [&] { (void)torch::conv2d(x.t, w.t, {}, 1, 1); },
                                .min_run_time = 2.0,
                                .flops = 2.0 * kN * kC * kHW * kHW * kC * 9});
}

bench::Register conv2d_3x3_64_56_b8_f32{{
    .name = "conv2d_3x3_64_56_b8_f32",
    .label = kConv,
    .target = 1.0,
    .run = [](const bench::Context& ctx) { return conv2d_3x3(ctx, ember::MemoryFormat::Contiguous); },
}};

bench::Register conv2d_3x3_64_56_b8_f32_cl{{
    .name = "conv2d_3x3_64_56_b8_f32_cl",
    .label = kConv,
    .target = 1.0,
    .run = [](const bench::Context& ctx) { return conv2d_3x3(ctx, ember::MemoryFormat::ChannelsLast); },
}};

// Issue 7: channels_last against contiguous (both Ember, float32), and channels_last under
// bfloat16 autocast against libtorch's CPU autocast.
bench::Register conv2d_3x3_64_56_b8_cl_vs_contiguous{{
    .name = "conv2d_3x3_64_56_b8_f32_cl_vs_contiguous",
    .label = kConv,
    .target = 1 / 1.1,
    .baseline = bench::Baseline::Ember,
    .run =
        [](const bench::Context& ctx) {
          const Input x = parity::random({8, 64, 56, 56}, ember::kFloat, 21);
          const Input w = parity::random({64, 64, 3, 3}, ember::kFloat, 22);
          const ember::Tensor xcl = x.e.contiguous(ember::MemoryFormat::ChannelsLast);
          const ember::Tensor wcl = w.e.contiguous(ember::MemoryFormat::ChannelsLast);
          bench::check_close(ctx, ember::conv2d(xcl, wcl, {}, 1, 1), torch::conv2d(x.t, w.t, {}, 1, 1),
                             sum_of_products_tol(ember::kFloat, 64 * 9));
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::conv2d(xcl, wcl, {}, 1, 1); },
                                        .baseline = [&] { (void)ember::conv2d(x.e, w.e, {}, 1, 1); },
                                        .min_run_time = 2.0,
                                        .flops = 2.0 * 8 * 64 * 56 * 56 * 64 * 9});
        },
}};

bench::Register conv2d_3x3_64_56_b8_cl_bf16_autocast{{
    .name = "conv2d_3x3_64_56_b8_cl_bf16_autocast",
    .label = kConv,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          const auto cl = ember::MemoryFormat::ChannelsLast;
          const Input x = parity::random({8, 64, 56, 56}, ember::kFloat, 21).contiguous(cl);
          const Input w = parity::random({64, 64, 3, 3}, ember::kFloat, 22).contiguous(cl);
          const auto ember_conv = [&] {
            ember::AutocastGuard autocast;
            return ember::conv2d(x.e, w.e, {}, 1, 1);
          };
          const auto torch_conv = [&] {
            parity::TorchAutocast autocast;
            return torch::conv2d(x.t, w.t, {}, 1, 1);
          };
          const ember::Tensor out = ember_conv();
          if (out.dtype() != ember::kBFloat16 || !out.is_contiguous(cl))
            throw bench::CheckFailure(ctx.current.name + ": expected a channels_last bfloat16 output");
          // both round the same inputs to bfloat16 and accumulate in float32
          bench::check_close(ctx, out.to(ember::kFloat), torch_conv().to(torch::kFloat), parity::Tol{1.6e-2, 2e-2});
          return bench::time_pair(ctx, {.ember = [&] { (void)ember_conv(); },
                                        .baseline = [&] { (void)torch_conv(); },
                                        .min_run_time = 2.0,
                                        .flops = 2.0 * 8 * 64 * 56 * 56 * 64 * 9});
        },
}};

// Issue 4: convolutions of batch 1 under InferenceMode, where reordering the weight into oneDNN's
// blocked layout is part of each call unless it is cached (libtorch 1.13 reorders it on every
// call): a small layer, and a deep one (ResNet-18's last stage) whose weight outweighs its input.
bench::Outcome conv2d_3x3_inference(const bench::Context& ctx, int64_t in, int64_t out, int64_t hw) {
  const Input x = parity::random({1, in, hw, hw}, ember::kFloat, 61);
  const Input w = parity::random({out, in, 3, 3}, ember::kFloat, 62);
  const Input b = parity::random({out}, ember::kFloat, 63);
  ember::InferenceMode guard;
  c10::InferenceMode torch_guard;
  bench::check_close(ctx, ember::conv2d(x.e, w.e, b.e, 1, 1), torch::conv2d(x.t, w.t, b.t, 1, 1),
                     sum_of_products_tol(ember::kFloat, in * 9));
  return bench::time_pair(ctx, {.ember = [&] { (void)ember::conv2d(x.e, w.e, b.e, 1, 1); },
                                .baseline = [&] { (void)torch::conv2d(x.t, w.t, b.t, 1, 1); },
                                .flops = 2.0 * static_cast<double>(hw * hw * out * in * 9)});
}

bench::Register conv2d_3x3_32to64_28_b1_inference{{
    .name = "conv2d_3x3_32to64_28_b1_f32_inference",
    .label = kSmallConv,
    .target = 1.0,
    .run = [](const bench::Context& ctx) { return conv2d_3x3_inference(ctx, 32, 64, 28); },
}};

bench::Register conv2d_3x3_512_7_b1_inference{{
    .name = "conv2d_3x3_512_7_b1_f32_inference",
    .label = kSmallConv,
    .target = 1.0,
    .run = [](const bench::Context& ctx) { return conv2d_3x3_inference(ctx, 512, 512, 7); },
}};

bench::Register softmax_4096x1024{{
    .name = "softmax_4096x1024",
    .label = kRows,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          const Input x = parity::random({4096, 1024}, ember::kFloat, 31);
          bench::check_close(ctx, ember::softmax(x.e, -1), torch::softmax(x.t, -1));
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::softmax(x.e, -1); },
                                        .baseline = [&] { (void)torch::softmax(x.t, -1); },
                                        .min_run_time = 1.5});
        },
}};

bench::Register layer_norm_4096x1024{{
    .name = "layer_norm_4096x1024",
    .label = kRows,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          constexpr int64_t kRow = 1024;
          const Input x = parity::random({4096, kRow}, ember::kFloat, 41);
          const Input w = parity::random({kRow}, ember::kFloat, 42), b = parity::random({kRow}, ember::kFloat, 43);
          bench::check_close(ctx, ember::layer_norm(x.e, {kRow}, w.e, b.e), torch::layer_norm(x.t, {kRow}, w.t, b.t));
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::layer_norm(x.e, {kRow}, w.e, b.e); },
                                        .baseline = [&] { (void)torch::layer_norm(x.t, {kRow}, w.t, b.t); },
                                        .min_run_time = 1.5});
        },
}};

// 4K multiply-adds: the time is mostly each library's per-call overhead.
bench::Register linear_16x16_b8{{
    .name = "linear_16x16_b8",
    .label = kSmallLinear,
    .target = 0.3,
    .run =
        [](const bench::Context& ctx) {
          const Input x = parity::random({8, 16}, ember::kFloat, 51), w = parity::random({16, 16}, ember::kFloat, 52),
                      b = parity::random({16}, ember::kFloat, 53);
          bench::check_close(ctx, ember::linear(x.e, w.e, b.e), torch::linear(x.t, w.t, b.t),
                             sum_of_products_tol(ember::kFloat, 16));
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::linear(x.e, w.e, b.e); },
                                        .baseline = [&] { (void)torch::linear(x.t, w.t, b.t); }});
        },
}};

}  // namespace
