// oneDNN's int8 matmul as a linear layer: y[m, n] (float32) = x_scale * w_scale[n] *
// sum_k (x[m, k] - x_zero_point) * w[n, k] + bias[n], x uint8, w int8 (symmetric: zero point 0),
// the int32 accumulation scaled and the bias added by the primitive (output scales, a binary
// post-op). The weight is reordered once into the layout the primitive asks for; the primitive
// takes any number of rows (a run-time M), so it is made once too.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ember::kernels {

class Int8Linear {
 public:
  // w: [n, k] row-major; w_scales: n values (one per output) or 1 (per tensor); bias: n or null.
  Int8Linear(const int8_t* w, int64_t n, int64_t k, const std::vector<float>& w_scales, const float* bias);
  ~Int8Linear();
  void run(const uint8_t* x, int64_t m, float x_scale, int32_t x_zero_point, float* y) const;
  // oneDNN's implementation ("gemm:jit", "brg:avx512_core_vnni", ...)
  const std::string& impl() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// The instruction set oneDNN's kernels use on this CPU ("avx2", "avx512_core_vnni", ...).
std::string onednn_cpu_isa();

}  // namespace ember::kernels
