// Chooses between oneDNN's matmul and the blocked loops, and drives oneDNN: one cached primitive
// per (shapes, strides, dtypes, alpha, beta, bias), with alpha as output scale, beta as a sum
// post-op and the bias as matmul's bias, so addmm and linear are a single primitive.
#include "kernels/cpu/gemm.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "core/parallel.h"
#include "ember/parallel.h"
#include "ember/factory.h"
#include "ember/shape.h"
#include "kernels/cpu/onednn.h"

namespace ember::kernels {
namespace {

// Multiply-adds per product below which the blocked loops beat a oneDNN call (whose fixed cost
// is ~0.5 us through the cache). Measured on square products (single thread, AVX-512 + AMX):
// float32 n=32 loops 0.74 us vs oneDNN 0.87 us, n=40 2.25 vs 1.43; bfloat16 (AMX) n=24 0.77 vs
// 0.79, n=32 1.00 vs 0.75.
int64_t small_product_limit(ScalarType t) { return t == kBFloat16 ? 32 * 32 * 32 : 40 * 40 * 40; }

// How a cached primitive takes its operands: oneDNN runs its slow reference code on some strided
// layouts (inner strides other than 1), so those operands are copied to contiguous memory first.
struct OperandCopies {
  bool copy_a = false, copy_b = false;
};

bool is_reference(const dnnl::matmul::primitive_desc& pd) {
  return std::string_view(pd.impl_info_str()).substr(0, 3) == "ref";
}

// oneDNN's description of a batched operand. A batch stride of 0 becomes a batch of 1, which
// oneDNN broadcasts; dims of size 1 get the stride of a dense layout (the tensor's own stride
// there is arbitrary and may hide an otherwise plain layout from oneDNN).
dnnl::memory::desc operand_desc(const Matrices& m, ScalarType dtype) {
  int64_t sizes[3] = {m.sizes[0], m.sizes[1], m.sizes[2]};
  int64_t strides[3] = {m.strides[0], m.strides[1], m.strides[2]};
  if (sizes[0] > 1 && strides[0] == 0) sizes[0] = 1;
  for (int d = 2; d >= 0; --d) {
    if (sizes[d] != 1) continue;
    strides[d] = 1;
    for (int e = d + 1; e < 3; ++e) strides[d] = std::max(strides[d], sizes[e] * strides[e]);
  }
  return onednn::desc_of(sizes, strides, dtype);
}

dnnl::memory::desc dense_desc(const Matrices& m, ScalarType dtype) {
  return onednn::desc_of(m.sizes, contiguous_strides(m.sizes), dtype);
}

bool is_dense(const Matrices& m) {
  return (m.sizes[2] == 1 || m.strides[2] == 1) && (m.sizes[1] == 1 || m.strides[1] == m.sizes[2]) &&
         (m.sizes[0] == 1 || m.strides[0] == m.sizes[1] * m.sizes[2]);
}

// Dense, or the transpose of a dense batch (a weight's .t(), k.transpose(1, 2)); a broadcast
// batch (stride 0) counts as the one matrix oneDNN is given.
bool is_plain(const Matrices& m) {
  const int64_t batch = m.strides[0] == 0 ? 1 : m.sizes[0];
  const Matrices r{m.data, {batch, m.sizes[1], m.sizes[2]}, {m.strides[0], m.strides[1], m.strides[2]}};
  const Matrices t{m.data, {batch, m.sizes[2], m.sizes[1]}, {m.strides[0], m.strides[2], m.strides[1]}};
  return is_dense(r) || is_dense(t);
}

bool is_brgemm(const dnnl::matmul::primitive_desc& pd) {
  return std::string_view(pd.impl_info_str()).substr(0, 3) == "brg";
}

// The transpose of a column-major matrix (in[c * ld + r] -> out[r * cols + c]) in 32 x 32 tiles,
// so that both sides stay in cache; rows of tiles are split across threads.
template <class Word>
void transpose_tiles(const char* in, char* out, int64_t rows, int64_t cols, int64_t ld) {
  constexpr int64_t kTile = 32;
  const Word* src = reinterpret_cast<const Word*>(in);
  Word* dst = reinterpret_cast<Word*>(out);
  parallel_for(0, (rows + kTile - 1) / kTile, std::max<int64_t>(1, 16384 / (kTile * std::max<int64_t>(cols, 1))),
               [&](int64_t tb, int64_t te) {
                 for (int64_t r0 = tb * kTile; r0 < std::min(rows, te * kTile); r0 += kTile) {
                   const int64_t r1 = std::min(rows, r0 + kTile);
                   for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
                     const int64_t c1 = std::min(cols, c0 + kTile);
                     for (int64_t r = r0; r < r1; ++r)
                       for (int64_t c = c0; c < c1; ++c) dst[r * cols + c] = src[c * ld + r];
                   }
                 }
               });
}

// A dense copy of m, for the operands oneDNN would otherwise run through its reference code.
// Transposed matrices (a weight's .t()) take the tiled transpose.
Tensor dense_copy(const Matrices& m, ScalarType dtype) {
  const size_t es = element_size(dtype);
  const bool column_major = m.strides[1] == 1 && m.strides[2] >= m.sizes[1] && m.sizes[1] > 1 && m.sizes[2] > 1;
  if (!column_major || (es != 2 && es != 4)) {
    return from_blob(m.data, m.sizes, m.strides, TensorOptions().dtype(dtype)).contiguous();
  }
  Tensor out = empty({m.sizes[0], m.sizes[1], m.sizes[2]}, TensorOptions().dtype(dtype));
  const int64_t plane = m.sizes[1] * m.sizes[2];
  for (int64_t b = 0; b < m.sizes[0]; ++b) {
    const char* in = static_cast<const char*>(m.data) + b * m.strides[0] * static_cast<int64_t>(es);
    char* o = static_cast<char*>(out.data_ptr()) + b * plane * static_cast<int64_t>(es);
    if (es == 2) {
      transpose_tiles<uint16_t>(in, o, m.sizes[1], m.sizes[2], m.strides[2]);
    } else {
      transpose_tiles<uint32_t>(in, o, m.sizes[1], m.sizes[2], m.strides[2]);
    }
  }
  return out;
}

// Operands a and b in `dtype`, out and the bias in `out_dtype`.
onednn::Primitive make_matmul(ScalarType dtype, ScalarType out_dtype, const Matrices& out, const Matrices& a,
                              const Matrices& b, const GemmEpilogue& e) {
  dnnl::primitive_attr attr = onednn::user_scratchpad();
  if (!e.alpha.equal(1)) attr.set_output_scales(0, {e.alpha.toFloat()});
  if (!e.beta.equal(0)) {
    dnnl::post_ops ops;
    ops.append_sum(e.beta.toFloat());
    attr.set_post_ops(ops);
  }
  const dnnl::memory::desc dst = dense_desc(out, out_dtype);
  dnnl::memory::desc bias;
  if (e.bias) {
    const int64_t n = out.cols();
    bias = operand_desc(Matrices{nullptr, {1, 1, n}, {n, n, e.bias_stride}}, out_dtype);
  }
  auto make_pd = [&](const dnnl::memory::desc& da, const dnnl::memory::desc& db) {
    const dnnl::matmul::desc d = e.bias ? dnnl::matmul::desc(da, db, bias, dst) : dnnl::matmul::desc(da, db, dst);
    return dnnl::matmul::primitive_desc(d, attr, onednn::engine());
  };
  OperandCopies plan;
  // oneDNN 2.6.3's AMX bfloat16 matmul returns wrong values for some transposed weights (seen
  // here: 7x300 @ (50x300)^T off by ~70, and 65 rows of a transposed `a` with 50 columns); dense
  // weights are correct, so bfloat16 weights are given dense, except in the case checked correct
  // over a grid of shapes (rows 64..1000, inner 16..1024, columns 16..2048, 1 and 2 threads): a
  // dense `a` of at least 64 rows and a multiple of 16 columns, a linear layer's training shapes.
  // Without AMX (AVX512-BF16, emulated bfloat16) oneDNN runs other kernels, which take transposed
  // weights correctly (LinalgParity.BFloat16MatchesLibtorchOneDnnProducts, 7x300 @ (50x300)^T
  // included, checked on AVX512-BF16), and the copy would cost more than the product (a 2048x1000
  // weight at 8 rows, one thread: 7.5 ms at best against 0.45 ms, its cast included).
  const bool transposed_b_ok = !has_amx_instructions() || (is_dense(a) && out.rows() >= 64 && out.cols() % 16 == 0);
  plan.copy_b = dtype == kBFloat16 && !is_dense(b) && !transposed_b_ok;
  dnnl::memory::desc da = operand_desc(a, dtype), db = plan.copy_b ? dense_desc(b, dtype) : operand_desc(b, dtype);
  dnnl::matmul::primitive_desc pd = make_pd(da, db);
  if (is_reference(pd)) {
    plan.copy_a = !is_dense(a);
    plan.copy_b = plan.copy_b || !is_dense(b);
    if (plan.copy_a) da = dense_desc(a, dtype);
    if (plan.copy_b) db = dense_desc(b, dtype);
    pd = make_pd(da, db);
  } else if (out.batch() > 1 && !is_brgemm(pd)) {
    // oneDNN's brgemm kernels take dense and transposed matrices only: interleaved batches with
    // dense rows (the heads of attention, (L, N * H, d).transpose(0, 1)) send the product to its
    // gemm-based code, 5-7% slower on (64, 256, 64) heads (one thread, AVX-512) than dense copies
    // of their rows and brgemm. Interleaved columns are left alone: their transposing copy costs
    // more than it saves.
    const bool rows_a = !is_plain(a) && a.strides[2] == 1, rows_b = !is_plain(b) && b.strides[2] == 1;
    if ((rows_a || rows_b) && (rows_a || is_plain(a)) && (rows_b || is_plain(b))) {
      const dnnl::memory::desc ca = rows_a ? dense_desc(a, dtype) : da, cb = rows_b ? dense_desc(b, dtype) : db;
      const dnnl::matmul::primitive_desc copied = make_pd(ca, cb);
      if (is_brgemm(copied)) {
        plan.copy_a = rows_a;
        plan.copy_b = plan.copy_b || rows_b;
        da = ca, db = cb, pd = copied;
      }
    }
  }
  onednn::Primitive p;
  p.primitive = dnnl::matmul(pd);
  p.use_scratchpad(pd);
  const dnnl::engine& eng = onednn::engine();
  p.args.emplace(DNNL_ARG_SRC, dnnl::memory(da, eng, DNNL_MEMORY_NONE));
  p.args.emplace(DNNL_ARG_WEIGHTS, dnnl::memory(db, eng, DNNL_MEMORY_NONE));
  p.args.emplace(DNNL_ARG_DST, dnnl::memory(dst, eng, DNNL_MEMORY_NONE));
  if (e.bias) p.args.emplace(DNNL_ARG_BIAS, dnnl::memory(bias, eng, DNNL_MEMORY_NONE));
  p.extra = std::make_shared<OperandCopies>(plan);
  return p;
}

int64_t bits_of(const Scalar& s) {
  const double d = s.toDouble();
  int64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  return bits;
}

void onednn_gemm(ScalarType dtype, ScalarType out_dtype, const Matrices& out, const Matrices& a, const Matrices& b,
                 const GemmEpilogue& e) {
  onednn::Key key("matmul");
  key.add(static_cast<int64_t>(dtype)).add(static_cast<int64_t>(out_dtype));
  key.add(out.sizes).add(a.sizes).add(a.strides).add(b.sizes).add(b.strides);
  key.add(e.bias ? e.bias_stride : -1).add(bits_of(e.alpha)).add(bits_of(e.beta));
  onednn::Primitive& p = onednn::cached(key, [&] { return make_matmul(dtype, out_dtype, out, a, b, e); });
  const OperandCopies& plan = *static_cast<const OperandCopies*>(p.extra.get());
  Tensor ca, cb;  // dense copies when the plan asks for them
  if (plan.copy_a) ca = dense_copy(a, dtype);
  if (plan.copy_b) cb = dense_copy(b, dtype);
  const void* pa = plan.copy_a ? ca.data_ptr() : a.data;
  const void* pb = plan.copy_b ? cb.data_ptr() : b.data;
  if (e.bias) {
    p.execute({{DNNL_ARG_SRC, pa}, {DNNL_ARG_WEIGHTS, pb}, {DNNL_ARG_DST, out.data}, {DNNL_ARG_BIAS, e.bias}});
  } else {
    p.execute({{DNNL_ARG_SRC, pa}, {DNNL_ARG_WEIGHTS, pb}, {DNNL_ARG_DST, out.data}});
  }
}

Tensor as_tensor(const Matrices& m, ScalarType dtype) {
  return from_blob(m.data, m.sizes, m.strides, TensorOptions().dtype(dtype));
}

// Whether oneDNN has a bfloat16 matmul on this CPU: 2.6 has one from AVX-512 (native with
// AVX512-BF16 or AMX, emulated without) and none on AVX2-only CPUs, where creating it throws.
// Asked once, by creating a small one.
bool onednn_has_bfloat16_matmul() {
  static const bool has = onednn::implements([] {
    const dnnl::memory::desc m({2, 2}, dnnl::memory::data_type::bf16, dnnl::memory::format_tag::ab);
    const dnnl::memory::desc o({2, 2}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
    dnnl::matmul::primitive_desc(dnnl::matmul::desc(m, m, o), onednn::engine());
  });
  return has;
}

// oneDNN 2.6 has no CPU float16 matmul, nor a bfloat16 one on AVX2-only CPUs: large products in
// those dtypes widen their operands to float32 (exactly), run in float32 and round once, which is
// what the loops compute too, only slower.
void widened_to_float(ScalarType dtype, const Matrices& out, const Matrices& a, const Matrices& b,
                      const GemmEpilogue& e) {
  const Tensor a32 = as_tensor(a, dtype).to(kFloat), b32 = as_tensor(b, dtype).to(kFloat);
  const Tensor out16 = as_tensor(out, dtype);
  const Tensor out32 = e.beta.equal(0) ? empty(out16.sizes()) : out16.to(kFloat);
  Tensor bias32;
  GemmEpilogue e32 = e;
  if (e.bias) {
    bias32 = from_blob(const_cast<void*>(e.bias), {out.cols()}, {e.bias_stride}, TensorOptions().dtype(dtype))
                 .to(kFloat);
    e32.bias = bias32.data_ptr();
    e32.bias_stride = bias32.stride(0);
  }
  onednn_gemm(kFloat, kFloat, matrices(out32), matrices(a32), matrices(b32), e32);
  Tensor(out16).copy_(out32);
}

// A dense bfloat16 copy of the float32 operand m, kept alive by `storage`; a broadcast batch
// (batch stride 0) is copied once and stays broadcast. oneDNN's reorder rounds (to nearest even,
// as Ember's casts): its jit code is 3x faster than the cast loop on dense operands and 9x on
// transposed ones (linear's weight), measured single-threaded on 1024 x 1024.
Matrices bfloat16_copy(const Matrices& m, Tensor& storage) {
  const bool broadcast = m.batch() > 1 && m.strides[0] == 0;
  Matrices one = m;
  if (broadcast) one.sizes[0] = 1;
  storage = empty(one.sizes, kBFloat16);
  onednn::Key key("matmul_operand_to_bf16");
  key.add(one.sizes).add(one.strides);
  onednn::Primitive& p = onednn::cached(key, [&] {
    const dnnl::memory::desc from = operand_desc(one, kFloat), to = dense_desc(one, kBFloat16);
    const dnnl::engine& eng = onednn::engine();
    onednn::Primitive r;
    r.primitive = dnnl::reorder(dnnl::reorder::primitive_desc(eng, from, eng, to));
    r.args.emplace(DNNL_ARG_FROM, dnnl::memory(from, eng, DNNL_MEMORY_NONE));
    r.args.emplace(DNNL_ARG_TO, dnnl::memory(to, eng, DNNL_MEMORY_NONE));
    return r;
  });
  p.execute({{DNNL_ARG_FROM, m.data}, {DNNL_ARG_TO, storage.data_ptr()}});
  Matrices r = matrices(storage);
  if (broadcast) {
    r.sizes[0] = m.batch();
    r.strides[0] = 0;
  }
  return r;
}

// Float32Math::kBFloat16: both operands rounded to bfloat16 (dense, which oneDNN's AMX kernels
// take fastest and its transposed-weight bug above needs), then oneDNN's bfloat16 matmul accumulating
// in float32 into the float32 output, bias and epilogue in float32.
void float_via_bfloat16(const Matrices& out, const Matrices& a, const Matrices& b, const GemmEpilogue& e) {
  Tensor a16, b16;
  const Matrices ma = bfloat16_copy(a, a16), mb = bfloat16_copy(b, b16);
  onednn_gemm(kBFloat16, kFloat, out, ma, mb, e);
}

}  // namespace

Matrices matrices(const Tensor& t) {
  if (t.dim() == 2) {
    return Matrices{t.data_ptr(), {1, t.size(0), t.size(1)}, {t.size(0) * t.size(1), t.stride(0), t.stride(1)}};
  }
  return Matrices{t.data_ptr(), {t.size(0), t.size(1), t.size(2)}, {t.stride(0), t.stride(1), t.stride(2)}};
}

void gemm(ScalarType dtype, const Matrices& out, const Matrices& a, const Matrices& b, const GemmEpilogue& e,
          Float32Math math) {
  if (out.batch() == 0 || out.rows() == 0 || out.cols() == 0) return;
  // oneDNN for matrix-matrix products above the threshold; matrix-vector shapes (dot, mv) run
  // faster in the loops' dot tiles than in oneDNN's matmul. With alpha == 0 PyTorch still
  // computes 0 * (a @ b), so NaN and infinities in the operands reach the result: the loops do
  // that, while oneDNN's gemm-based matmul (its bfloat16 kernel on CPUs without bfloat16
  // instructions, its float32 one under AVX2) skips a product scaled by 0 and then reads its
  // accumulator, which it never wrote.
  const bool big = a.cols() > 0 && out.rows() > 1 && out.cols() > 1 && !e.alpha.equal(0) &&
                   out.rows() * out.cols() * a.cols() >= small_product_limit(dtype);
  // Float32Math::kBFloat16 is a speed mode: where oneDNN has no bfloat16 matmul it computes in
  // float32, never slower than the default.
  const bool bf16 = onednn_has_bfloat16_matmul();
  if (big && dtype == kFloat && math == Float32Math::kBFloat16 && bf16) {
    float_via_bfloat16(out, a, b, e);
  } else if (big && (dtype == kFloat || (dtype == kBFloat16 && bf16))) {
    onednn_gemm(dtype, dtype, out, a, b, e);
  } else if (big && (dtype == kHalf || dtype == kBFloat16)) {
    widened_to_float(dtype, out, a, b, e);
  } else {
    gemm_loops(dtype, out, a, b, e);
  }
}

}  // namespace ember::kernels
