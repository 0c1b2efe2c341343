// Quantized tensors inside the library: the helpers the views, clone/contiguous, cat, printing
// and the quantization features (src/quant, nn::quantized) share.
#pragma once
#include <cstdint>

#include "ember/tensor.h"

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

// PyTorch's ChooseQuantizationParams (quant_utils.h): the affine (scale, zero point) of
// [qmin, qmax] covering [min, max] extended to 0, zero point nudged to an integer.
struct QParams {
  double scale;
  int64_t zero_point;
};
QParams choose_quantization_params(float min, float max, int64_t qmin, int64_t qmax, bool preserve_sparsity = false,
                                   bool reduce_range = false);

}  // namespace ember::quantized
