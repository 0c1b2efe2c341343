// The process-wide settings object of libtorch's ATen (at::globalContext(), ATen/Context.h), as
// programs call it: determinism, float32 matmul precision, and the CUDA/cuDNN switches. On a CPU
// build the CUDA switches are stored and reported back, as libtorch's CPU-only build does, and
// change nothing; allowTF32CuBLAS is the float32 matmul precision seen as a flag, as in libtorch
// (set_float32_matmul_precision, linalg.h).
#pragma once
#include <xmmintrin.h>

#include <string>

#include "ember/device.h"

namespace ember {

class Generator;

enum class Float32MatmulPrecision { HIGHEST, HIGH, MEDIUM };

class Context {
 public:
  // Denormal floats read as zero and results that would be denormal are flushed to zero, on the
  // calling thread (the x86 MXCSR's DAZ and FTZ bits), as libtorch's: true, the CPU supports it.
  bool setFlushDenormal(bool on) {
    unsigned csr = _mm_getcsr();
    csr = on ? (csr | 0x8040u) : (csr & ~0x8040u);  // FTZ (bit 15) and DAZ (bit 6)
    _mm_setcsr(csr);
    return true;
  }
  bool userEnabledCuDNN() const { return cudnn_enabled_; }
  void setUserEnabledCuDNN(bool e) { cudnn_enabled_ = e; }
  // Ember's convolutions and matrix products always run on oneDNN; the flag is kept for programs
  // that set and read it.
  bool userEnabledMkldnn() const { return mkldnn_enabled_; }
  void setUserEnabledMkldnn(bool e) { mkldnn_enabled_ = e; }
  bool benchmarkCuDNN() const { return cudnn_benchmark_; }
  void setBenchmarkCuDNN(bool b) { cudnn_benchmark_ = b; }
  int benchmarkLimitCuDNN() const { return cudnn_benchmark_limit_; }
  void setBenchmarkLimitCuDNN(int n) { cudnn_benchmark_limit_ = n; }
  bool deterministicCuDNN() const { return cudnn_deterministic_; }
  void setDeterministicCuDNN(bool b) { cudnn_deterministic_ = b; }

  // torch.use_deterministic_algorithms: every CPU op of Ember is deterministic (same inputs, same
  // thread count: same bits), so the setting has nothing to refuse or warn about.
  bool deterministicAlgorithms() const { return deterministic_; }
  bool deterministicAlgorithmsWarnOnly() const { return deterministic_warn_only_; }
  void setDeterministicAlgorithms(bool b, bool warn_only = false) {
    deterministic_ = b;
    deterministic_warn_only_ = warn_only;
  }

  Float32MatmulPrecision float32MatmulPrecision() const;
  void setFloat32MatmulPrecision(Float32MatmulPrecision p);
  void setFloat32MatmulPrecision(const std::string& s);  // "highest", "high" or "medium"
  bool allowTF32CuBLAS() const { return float32MatmulPrecision() != Float32MatmulPrecision::HIGHEST; }
  void setAllowTF32CuBLAS(bool b) {
    setFloat32MatmulPrecision(b ? Float32MatmulPrecision::HIGH : Float32MatmulPrecision::HIGHEST);
  }
  bool allowTF32CuDNN() const { return allow_tf32_cudnn_; }
  void setAllowTF32CuDNN(bool b) { allow_tf32_cudnn_ = b; }
  bool allowFP16ReductionCuBLAS() const { return allow_fp16_reduction_; }
  void setAllowFP16ReductionCuBLAS(bool b) { allow_fp16_reduction_ = b; }

  // The CPU's default generator (torch::manual_seed seeds it); other devices raise ember::Error.
  Generator& defaultGenerator(Device device) const;

  static bool hasCUDA() { return false; }
  static bool hasHIP() { return false; }
  static bool hasMPS() { return false; }
  static bool hasMKL() { return false; }
  static bool hasMKLDNN() { return true; }
  static bool hasOpenMP() { return true; }
  static bool hasLAPACK() { return true; }

 private:
  bool cudnn_enabled_ = true;
  bool mkldnn_enabled_ = true;
  bool cudnn_benchmark_ = false;
  int cudnn_benchmark_limit_ = 10;
  bool cudnn_deterministic_ = false;
  bool deterministic_ = false;
  bool deterministic_warn_only_ = false;
  bool allow_tf32_cudnn_ = true;
  bool allow_fp16_reduction_ = true;
};

Context& globalContext();

inline bool hasCUDA() { return Context::hasCUDA(); }
inline bool hasHIP() { return Context::hasHIP(); }
inline bool hasMPS() { return Context::hasMPS(); }
inline bool hasMKL() { return Context::hasMKL(); }
inline bool hasMKLDNN() { return Context::hasMKLDNN(); }
inline bool hasOpenMP() { return Context::hasOpenMP(); }
inline bool hasLAPACK() { return Context::hasLAPACK(); }

}  // namespace ember
