// Batched matrix products, the one kernel behind mm, bmm, matmul, addmm, addmv, baddbmm, dot,
// mv, linear and einsum:
//
//   out[i] = alpha * (a[i] @ b[i] + bias) + beta * out[i]        for each batch i
//
// a is [B, M, K], b is [B, K, N] with any strides (a batch stride of 0 broadcasts one matrix
// over the batch), out is a contiguous [B, M, N], bias an optional [N] added to every row. With
// beta == 0 the previous contents of out are ignored (NaN included), as in BLAS. All operands
// share one dtype: a float dtype or an integer dtype (integers wrap on overflow).
//
// float32 and bfloat16 products run on oneDNN (AMX for bfloat16 where the CPU has it) above a
// size threshold; small products, float64, float16 (oneDNN 2.6 has no CPU float16 matmul) and
// integers run on the blocked loops of gemm_kernels.cpp. With Float32Math::kBFloat16 the float32
// products that would run on oneDNN round their operands to bfloat16 and run oneDNN's bfloat16
// matmul into the float32 output (float32 accumulation, bias and epilogue): oneDNN 2.6's float32
// matmul ignores the fpmath_mode attribute, so the rounding is done here.
//
// Operands are plain pointers and strides rather than Tensors: building views for a small
// product would cost more than the product.
#pragma once
#include "ember/tensor.h"

namespace ember::kernels {

// B matrices of R x C: element (i, r, c) at data + (i * strides[0] + r * strides[1] + c * strides[2]) elements.
struct Matrices {
  void* data;
  int64_t sizes[3];
  int64_t strides[3];

  int64_t batch() const { return sizes[0]; }
  int64_t rows() const { return sizes[1]; }
  int64_t cols() const { return sizes[2]; }
};
// A 2-D tensor (a batch of one) or a 3-D tensor.
Matrices matrices(const Tensor& t);

struct GemmEpilogue {
  Scalar alpha = 1;
  Scalar beta = 0;
  const void* bias = nullptr;  // bias[n * bias_stride] for n < N, or null
  int64_t bias_stride = 0;
};

// How float32 products may compute (set_float32_matmul_precision): exactly, or from operands
// rounded to bfloat16 with float32 accumulation. Other dtypes ignore it.
enum class Float32Math { kExact, kBFloat16 };

void gemm(ScalarType dtype, const Matrices& out, const Matrices& a, const Matrices& b, const GemmEpilogue& epilogue,
          Float32Math math);

// The blocked loops alone (the small-product and non-oneDNN path of gemm); same contract.
void gemm_loops(ScalarType dtype, const Matrices& out, const Matrices& a, const Matrices& b,
                const GemmEpilogue& epilogue);

}  // namespace ember::kernels
