// Quantized tensors inside the library: the helpers the views, clone/contiguous, cat, printing
// and the quantization features (src/quant, nn::quantized) share.
#pragma once
#include <cstdint>
#include <optional>

#include "ember/tensor.h"
#include "kernels/cpu/pool_kernels.h"

namespace ember::quantized {

// The integer range of a quantized dtype ([-128, 127], [0, 255], [-2^31, 2^31 - 1]).
int64_t qmin(ScalarType qtype);
int64_t qmax(ScalarType qtype);
// The integer dtype storing a quantized dtype's values (kChar, kByte, kInt).
ScalarType underlying_type(ScalarType qtype);
// An empty quantized tensor carrying q.
Tensor empty_quantized(IntArrayRef sizes, IntrusivePtr<Quantizer> q, MemoryFormat format = MemoryFormat::Contiguous);
// The same elements as integers (a view: no quantizer, the underlying dtype).
Tensor raw_view(const Tensor& qtensor);
// A quantized tensor over raw's storage and geometry (raw of q's underlying dtype).
Tensor wrap(const Tensor& raw, IntrusivePtr<Quantizer> q);
IntrusivePtr<Quantizer> per_tensor_quantizer(ScalarType qtype, double scale, int64_t zero_point);

// The quantizer of select/slice of a quantized tensor along dim: along a per-channel axis the
// channels' parameters are selected or sliced too (one channel left: per tensor), as PyTorch.
IntrusivePtr<Quantizer> subtensor_quantizer(const Tensor& self, int64_t dim, int64_t start, int64_t end, int64_t step,
                                            bool is_select);
// The quantized forms of to (clone, contiguous: same dtype only) and cat (per-tensor schemes).
Tensor to(const Tensor& self, ScalarType dtype, bool copy, std::optional<MemoryFormat> format);
Tensor cat(TensorList tensors, int64_t dim);
// relu of a per-tensor quantized tensor: its integers clamped below at the zero point, the
// parameters kept (PyTorch's quantized relu); relu_ in place.
Tensor relu(const Tensor& self);
Tensor& relu_(Tensor& self);

// ---- quantized nn ops (quantized_nn.cpp): per-tensor quint8/qint8 inputs, PyTorch 1.13's rules ----

// 2-D max or average pooling of a 4-D (N, C, H, W) quantized view over the windows h x w (as
// pool.cpp computes them), on PyTorch's channels_last kernel when `channels_last` (x4 is then
// channels_last contiguous) and its NCHW one otherwise. The result keeps the input's parameters
// and the kernel's layout; averages are rounded as each kernel rounds (NCHW:
// nearbyint(acc * m + zp), channels_last: zp + nearbyint(acc * m); they differ on ties).
Tensor pool2d(const char* op, const Tensor& x4, bool channels_last, const kernels::PoolAxis& h,
              const kernels::PoolAxis& w, bool is_max, bool count_extent, int64_t divisor_override);
// clamp with scalar bounds (relu6, hardtanh): the integers clamped to the quantized bounds, the
// parameters kept.
Tensor clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max);
// sigmoid and hardsigmoid: fixed output parameters (scale 1/256, zero point 0 for quint8, -128
// for qint8); hardswish: the output parameters given.
Tensor sigmoid(const Tensor& self);
Tensor hardsigmoid(const Tensor& self);
Tensor hardswish(const Tensor& self, double scale, int64_t zero_point);
// torch.ops.quantized.add / add_relu / mul / mul_relu / cat: requantized to (scale, zero_point).
Tensor add_requant(const Tensor& qa, const Tensor& qb, double scale, int64_t zero_point, bool relu);
Tensor mul_requant(const Tensor& qa, const Tensor& qb, double scale, int64_t zero_point, bool relu);
// torch.ops.quantized.add_scalar / mul_scalar: the output parameters follow from the scalar
// (PyTorch's rules: shifted zero point, or scale and zero point covering the shifted range).
Tensor add_scalar(const Tensor& qa, double other);
Tensor mul_scalar(const Tensor& qa, double other);
Tensor cat_requant(TensorList tensors, int64_t dim, std::optional<double> scale, std::optional<int64_t> zero_point);

// torch.ops.quantized.batch_norm2d: eval-mode batch norm of a 4-D input with the
// per-channel statistics and affine parameters (float32; weight and bias may be undefined),
// quantized to (scale, zero_point); channels_last result, as PyTorch's.
Tensor batch_norm2d(const Tensor& qx, const Tensor& weight, const Tensor& bias, const Tensor& mean, const Tensor& var,
                    double eps, double scale, int64_t zero_point);

// PyTorch's ChooseQuantizationParams (quant_utils.h): the affine (scale, zero point) of
// [qmin, qmax] covering [min, max] extended to 0, zero point nudged to an integer.
struct QParams {
  double scale;
  int64_t zero_point;
};
QParams choose_quantization_params(float min, float max, int64_t qmin, int64_t qmax, bool preserve_sparsity = false,
                                   bool reduce_range = false);

}  // namespace ember::quantized
