// Matrix products with PyTorch's semantics: mm, bmm, matmul (1-D, 2-D and batched operands with
// broadcast batch dims), addmm, addmv, baddbmm, dot, vdot, mv, outer, linear and einsum.
// Operands must share a dtype (float or integer; bool is rejected as by PyTorch); results are
// new contiguous tensors, or the out= tensor. float16 products compute in float32 and round once
// (libtorch 1.13 itself rejects float16 matrix products on CPU).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "ember/tensor.h"

namespace ember {

Tensor mm(const Tensor& self, const Tensor& mat2);
Tensor& mm_out(Tensor& out, const Tensor& self, const Tensor& mat2);
Tensor bmm(const Tensor& self, const Tensor& mat2);
Tensor& bmm_out(Tensor& out, const Tensor& self, const Tensor& mat2);
Tensor matmul(const Tensor& self, const Tensor& other);
Tensor& matmul_out(Tensor& out, const Tensor& self, const Tensor& other);

// beta * self + alpha * (mat1 @ mat2), self broadcast to the product's shape.
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
             const Scalar& alpha = 1);
Tensor& addmm_out(Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
                  const Scalar& alpha = 1);
Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta = 1,
             const Scalar& alpha = 1);
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
               const Scalar& alpha = 1);

Tensor dot(const Tensor& self, const Tensor& tensor);
Tensor vdot(const Tensor& self, const Tensor& other);  // dot with self conjugated (real dtypes: dot)
Tensor mv(const Tensor& self, const Tensor& vec);
Tensor outer(const Tensor& self, const Tensor& vec2);
Tensor ger(const Tensor& self, const Tensor& vec2);  // alias of outer

// input @ weight^T (+ bias): input [*, in], weight [out, in] (or [in]), bias [out].
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt);

// Einstein summation: "ij,jk->ik", implicit output ("ij,jk"), ellipsis ("...ij,...jk"),
// repeated subscripts (diagonals: "ii->i", "ii"). Contractions run as batched products.
Tensor einsum(std::string_view equation, TensorList tensors);

// The internal precision of float32 matrix products (PyTorch's torch.set_float32_matmul_precision),
// process-wide, "highest" by default:
//   "highest"  float32 products compute in float32;
//   "high"     the same as "highest" here: oneDNN 2.6 offers no mode between float32 and
//              bfloat16 on CPUs (no TF32, no bfloat16x3), as PyTorch does without a faster mode;
//   "medium"   float32 products of the matmul family (mm, bmm, matmul, addmm, baddbmm, linear,
//              einsum, ...) large enough for oneDNN round their operands to bfloat16 and accumulate
//              in float32 (AMX); results keep about 3 significant digits. Convolutions stay float32.
// An unknown name raises ember::Error listing the valid ones.
void set_float32_matmul_precision(const std::string& precision);
std::string get_float32_matmul_precision();

namespace nn::functional {
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {});
}  // namespace nn::functional

}  // namespace ember
