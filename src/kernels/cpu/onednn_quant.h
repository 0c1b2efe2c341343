// oneDNN's int8 matmul as a linear layer: y[m, n] (float32) = x_scale * w_scale[n] *
// (sum_k x[m, k] * w[n, k] - x_zero_point * sum_k w[n, k]) + bias[n], x uint8, w int8 (symmetric:
// zero point 0). The primitive computes the int32 sums alone: with no scales or zero points among
// its attributes and a fixed number of rows, oneDNN 2.6 runs its brgemm kernels (AMX, VNNI), which
// it does not for run-time scales, zero points or rows (its gemm:jit, 2-9x slower on AMX); the
// zero point's correction, the scales and the bias are one pass over the result. Primitives are
// cached per thread by the number of rows, with the weight in each one's layout.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ember/array_ref.h"

namespace ember::kernels {

class Int8Linear {
 public:
  // w: [n, k] row-major; w_scales: n values (one per output) or 1 (per tensor); bias: n or null.
  Int8Linear(const int8_t* w, int64_t n, int64_t k, const std::vector<float>& w_scales, const float* bias);
  ~Int8Linear();
  void run(const uint8_t* x, int64_t m, float x_scale, int32_t x_zero_point, float* y) const;
  // y uint8, requantized as PyTorch's int8 linear (ideep's matmul): with oneDNN's reciprocal scales
  // X, W[j], Y, y = clamp(round((sums + bias[j] * (X * W[j])) * (Y / (X * W[j])) + y_zero_point)),
  // in float and in that order, as Int8Conv.
  void run(const uint8_t* x, int64_t m, float x_scale, int32_t x_zero_point, uint8_t* y, float y_scale,
           int32_t y_zero_point) const;
  // oneDNN's implementation for m rows ("brg:avx512_core_amx_int8", "gemm:jit", ...)
  std::string impl(int64_t m) const;
  struct State;

 private:
  std::unique_ptr<State> s_;
};

// oneDNN's int8 convolution (1 to 3 spatial dims) requantizing inside the primitive, as PyTorch's
// quantized conv (ideep's): with oneDNN's reciprocal scales X = 1 / x_scale, W[c] = 1 / w_scale[c]
// and Y = 1 / y_scale in float, y = clamp(round(act((sum (x - x_zero_point) * w + bias[c] * (X *
// W[c])) * (Y / (X * W[c]))) + y_zero_point)), x and y uint8 in channels-last order, w int8
// symmetric (zero point 0), act ReLU or none; computed in that order and in float, the integers are
// PyTorch's bit for bit (oneDNN 2.x adds the bias to the int32 sums before the output scales, hence
// its scaling). The zero points are run-time arguments; the scales are part of the primitive
// (oneDNN 2.6 takes them only when it is made): one primitive per input shape and pair of scales,
// cached per thread (onednn::cached) with the weight in its layout.
struct Int8ConvGeometry {
  std::vector<int64_t> stride, padding_l, padding_r, dilation;  // one per spatial dim; dilation 1 = dense
  int64_t groups = 1;
  bool relu = false;
};

class Int8Conv {
 public:
  // w: [out, in / groups, kernel...] contiguous; w_scales: out values or 1; bias: out values or null.
  Int8Conv(const int8_t* w, IntArrayRef w_sizes, const std::vector<float>& w_scales, const float* bias,
           Int8ConvGeometry geometry);
  ~Int8Conv();
  Int8Conv(const Int8Conv&) = delete;
  Int8Conv& operator=(const Int8Conv&) = delete;
  // x: [N, C, spatial...] with channels-last-dense strides (in elements); y: the output's sizes and
  // strides, channels-last-dense too.
  void run(const uint8_t* x, IntArrayRef x_sizes, IntArrayRef x_strides, float x_scale, int32_t x_zero_point,
           uint8_t* y, IntArrayRef y_sizes, IntArrayRef y_strides, float y_scale, int32_t y_zero_point) const;
  // oneDNN's implementation for that input ("brg:avx512_core_amx", ...).
  std::string impl(IntArrayRef x_sizes, IntArrayRef x_strides, float x_scale, IntArrayRef y_sizes,
                   IntArrayRef y_strides, float y_scale) const;
  struct State;

 private:
  std::unique_ptr<State> s_;
};

// The instruction set oneDNN's kernels use on this CPU ("avx2", "avx512_core_vnni", ...).
std::string onednn_cpu_isa();

}  // namespace ember::kernels
