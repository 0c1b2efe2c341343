// Quantize and dequantize loops over dense memory, with PyTorch's rounding (to nearest, ties to
// even, in float: zero_point + nearbyint(x * (1 / float(scale)))) and clamping to the integer
// dtype's range. `qtype` is kQInt8, kQUInt8 or kQInt32; the quantized side is its raw integers.
// Per channel: the element at linear position i of the dense block belongs to channel
// (i / stride) % channels (any dense layout: contiguous or channels_last).
#pragma once
#include <cstdint>

#include "ember/dtype.h"

namespace ember::kernels {

void quantize_per_tensor(const float* src, void* dst, int64_t n, ScalarType qtype, double scale, int64_t zero_point);
void quantize_per_channel(const float* src, void* dst, int64_t n, ScalarType qtype, const double* scales,
                          const int64_t* zero_points, int64_t channels, int64_t stride);
void dequantize_per_tensor(const void* src, float* dst, int64_t n, ScalarType qtype, double scale,
                           int64_t zero_point);
void dequantize_per_channel(const void* src, float* dst, int64_t n, ScalarType qtype, const double* scales,
                            const int64_t* zero_points, int64_t channels, int64_t stride);
// Fake quantization (float in, float out): out = (clamp(q, qmin, qmax) - zp) * scale with
// q = zp + nearbyint(x * (1 / scale)); mask (optional) = qmin <= q <= qmax, the straight-through
// gradient's support. Per channel as above with float scales.
void fake_quantize_per_tensor(const float* src, float* out, uint8_t* mask, int64_t n, float scale, int64_t zero_point,
                              int64_t quant_min, int64_t quant_max);
void fake_quantize_per_channel(const float* src, float* out, uint8_t* mask, int64_t n, const float* scales,
                               const int64_t* zero_points, int64_t channels, int64_t stride, int64_t quant_min,
                               int64_t quant_max);

}  // namespace ember::kernels
