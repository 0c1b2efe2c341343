// Quantized tensors (dtypes kQInt8, kQUInt8, kQInt32) and fake quantization, as libtorch's
// functions of the same names. A quantized tensor stores integers and carries its scheme and
// parameters (ember/quantizer.h); views, clone/contiguous and cat keep them, other ops refuse
// such a tensor with an ember::Error naming the op (dequantize() first). docs/quantization.md.
#pragma once
#include <cstdint>
#include <tuple>
#include <vector>

#include "ember/tensor.h"

namespace ember {

// q = clamp(zero_point + round_half_even(x / scale), dtype's range). `self` is float32; scale
// must be finite and > 0, zero_point within the dtype's range.
Tensor quantize_per_tensor(const Tensor& self, double scale, int64_t zero_point, ScalarType dtype);
// scale and zero_point as one-element tensors
Tensor quantize_per_tensor(const Tensor& self, const Tensor& scale, const Tensor& zero_point, ScalarType dtype);
// One scale and zero point per index of `axis` (scales: [self.size(axis)] float, zero_points integer).
Tensor quantize_per_channel(const Tensor& self, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                            ScalarType dtype);
// float32: (q - zero_point) * scale
Tensor dequantize(const Tensor& self);
std::vector<Tensor> dequantize(TensorList tensors);
Tensor int_repr(const Tensor& self);
double q_scale(const Tensor& self);
int64_t q_zero_point(const Tensor& self);
Tensor q_per_channel_scales(const Tensor& self);
Tensor q_per_channel_zero_points(const Tensor& self);
int64_t q_per_channel_axis(const Tensor& self);
// A quantized tensor over a copy of self's integers (int8 -> qint8, uint8 -> quint8, int32 -> qint32).
Tensor _make_per_tensor_quantized_tensor(const Tensor& self, double scale, int64_t zero_point);
Tensor _make_per_channel_quantized_tensor(const Tensor& self, const Tensor& scales, const Tensor& zero_points,
                                          int64_t axis);

// Quantize then dequantize in float32: (clamp(q, quant_min, quant_max) - zero_point) * scale. The
// gradient is the straight-through estimator: grad where quant_min <= q <= quant_max, else 0.
Tensor fake_quantize_per_tensor_affine(const Tensor& self, double scale, int64_t zero_point, int64_t quant_min,
                                       int64_t quant_max);
Tensor fake_quantize_per_tensor_affine(const Tensor& self, const Tensor& scale, const Tensor& zero_point,
                                       int64_t quant_min, int64_t quant_max);
Tensor fake_quantize_per_channel_affine(const Tensor& self, const Tensor& scale, const Tensor& zero_point,
                                        int64_t axis, int64_t quant_min, int64_t quant_max);

// The (scale, zero point) of quint8 [0, 255] (or [0, 127] with reduce_range) covering self's
// [min, max] and 0: what dynamic quantization gives its activations (PyTorch's).
std::tuple<double, int64_t> _choose_qparams_per_tensor(const Tensor& self, bool reduce_range = false);

}  // namespace ember
