#include "kernels/cpu/quantize.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/parallel.h"

namespace ember::kernels {
namespace {

constexpr int64_t kGrain = 32768;

// float -> int64 as x86's cvttss2si: NaN and values out of range give INT64_MIN (which PyTorch's
// static_cast produces there, and its clamp then maps to the dtype's minimum).
inline int64_t to_int64(float f) {
  return f >= -9.2233720368547758e18f && f < 9.2233720368547758e18f ? static_cast<int64_t>(f)
                                                                   : std::numeric_limits<int64_t>::min();
}
// PyTorch's quantize_val: the sum zero_point + nearbyint(...) is taken in float.
inline int64_t quantize_val(float inv_scale, int64_t zero_point, float x) {
  return to_int64(static_cast<float>(zero_point) + std::nearbyint(x * inv_scale));
}

template <class T>
void quantize_tensor(const float* src, T* dst, int64_t n, double scale, int64_t zp) {
  constexpr int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  const float inv_scale = 1.0f / static_cast<float>(scale);
  if constexpr (sizeof(T) == 1) {
    // The same results without a libm call per element (dynamic quantization runs this on every
    // input; GCC 12 still keeps it scalar at the x86-64 baseline): nearbyint of |t| <= 2^22 is
    // (t + 1.5 * 2^23) - 1.5 * 2^23
    // (the sum lands where floats are integers: rounded to nearest even); beyond, every t clamps
    // to the same end. As above, zp + t outside int64 (or NaN) gives the minimum.
    const float fzp = static_cast<float>(zp), flo = static_cast<float>(lo), fhi = static_cast<float>(hi);
    parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
      // locals: a store through the 1-byte dst may alias anything, so values read through the
      // lambda's references would be loaded again for every element, and the loop not vectorized
      const float* __restrict in = src;
      T* __restrict out = dst;
      const float inv = inv_scale, z = fzp, qlo = flo, qhi = fhi;
#pragma omp simd
      for (int64_t i = b; i < e; ++i) {
        const float t = in[i] * inv;
        const float tc = std::min(std::max(t, -4194304.0f), 4194304.0f);
        const float r = (tc + 12582912.0f) - 12582912.0f;
        const float q = std::min(std::max(z + r, qlo), qhi);
        const bool valid = std::fabs(z + t) < 9.2233720368547758e18f;
        out[i] = static_cast<T>(static_cast<int32_t>(valid ? q : qlo));
      }
    });
    return;
  }
  parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = static_cast<T>(std::clamp(quantize_val(inv_scale, zp, src[i]), lo, hi));
  });
}

template <class T>
void quantize_channel(const float* src, T* dst, int64_t n, const double* scales, const int64_t* zps, int64_t channels,
                      int64_t stride) {
  constexpr int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t c = (i / stride) % channels;
      const float inv_scale = 1.0f / static_cast<float>(scales[c]);
      dst[i] = static_cast<T>(std::clamp(quantize_val(inv_scale, zps[c], src[i]), lo, hi));
    }
  });
}

// PyTorch's dequantize_val: float(scale) * (q - zero_point).
template <class T>
void dequantize_tensor(const T* src, float* dst, int64_t n, double scale, int64_t zp) {
  const float s = static_cast<float>(scale);
  parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = s * static_cast<float>(static_cast<int64_t>(src[i]) - zp);
  });
}

// PyTorch's per-channel dequantize: (float(q) - zero_point) * scale, the product in double.
template <class T>
void dequantize_channel(const T* src, float* dst, int64_t n, const double* scales, const int64_t* zps,
                        int64_t channels, int64_t stride) {
  parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t c = (i / stride) % channels;
      dst[i] = static_cast<float>(static_cast<double>(static_cast<float>(src[i]) - static_cast<float>(zps[c])) *
                                  scales[c]);
    }
  });
}

template <class F>
void visit_qtype(ScalarType qtype, F&& f) {
  switch (qtype) {
    case kQInt8: return f(int8_t{});
    case kQUInt8: return f(uint8_t{});
    default: return f(int32_t{});
  }
}

// Whether fake_quantize_fast gives fake_quantize_val's results for this integer range: below
// 2^22 quanta from the zero point, where the rounding trick of quantize_tensor holds (beyond,
// every value lands outside [qmin, qmax] either way).
inline bool fast_fake_quantize(int64_t zp, int64_t qmin, int64_t qmax) {
  constexpr int64_t kExact = int64_t{1} << 22;
  return qmax - zp < kExact && zp - qmin < kExact;
}

// fake_quantize_val over n values without a libm call per element, vectorized: quantization-aware
// training runs it on every activation and weight of every step. (zp, qmin, qmax as floats.)
inline void fake_quantize_fast(const float* __restrict in, float* __restrict out, uint8_t* __restrict mask, int64_t n,
                               float scale, float inv_scale, float zp, float qmin, float qmax) {
  auto value = [=](float x, bool& inside) {
    const float t = x * inv_scale;
    const float tc = std::min(std::max(t, -4194304.0f), 4194304.0f);
    const float q = zp + ((tc + 12582912.0f) - 12582912.0f);
    const bool valid = std::fabs(zp + t) < 9.2233720368547758e18f;  // else PyTorch's int64 minimum
    inside = valid && q >= qmin && q <= qmax;
    return ((valid ? std::min(std::max(q, qmin), qmax) : qmin) - zp) * scale;
  };
  if (mask) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      bool inside;
      out[i] = value(in[i], inside);
      mask[i] = inside;
    }
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      bool inside;
      out[i] = value(in[i], inside);
    }
  }
}

inline float fake_quantize_val(float x, float scale, float inv_scale, int64_t zp, int64_t qmin, int64_t qmax,
                               uint8_t* mask) {
  const int64_t q = to_int64(static_cast<float>(zp) + std::nearbyint(x * inv_scale));
  if (mask) *mask = qmin <= q && q <= qmax;
  return static_cast<float>(std::clamp(q, qmin, qmax) - zp) * scale;
}

}  // namespace

void quantize_per_tensor(const float* src, void* dst, int64_t n, ScalarType qtype, double scale, int64_t zero_point) {
  visit_qtype(qtype, [&](auto t) { quantize_tensor(src, static_cast<decltype(t)*>(dst), n, scale, zero_point); });
}
void quantize_per_channel(const float* src, void* dst, int64_t n, ScalarType qtype, const double* scales,
                          const int64_t* zero_points, int64_t channels, int64_t stride) {
  visit_qtype(qtype, [&](auto t) {
    quantize_channel(src, static_cast<decltype(t)*>(dst), n, scales, zero_points, channels, stride);
  });
}
void dequantize_per_tensor(const void* src, float* dst, int64_t n, ScalarType qtype, double scale,
                           int64_t zero_point) {
  visit_qtype(qtype,
              [&](auto t) { dequantize_tensor(static_cast<const decltype(t)*>(src), dst, n, scale, zero_point); });
}
void dequantize_per_channel(const void* src, float* dst, int64_t n, ScalarType qtype, const double* scales,
                            const int64_t* zero_points, int64_t channels, int64_t stride) {
  visit_qtype(qtype, [&](auto t) {
    dequantize_channel(static_cast<const decltype(t)*>(src), dst, n, scales, zero_points, channels, stride);
  });
}

void fake_quantize_per_tensor(const float* src, float* out, uint8_t* mask, int64_t n, float scale, int64_t zero_point,
                              int64_t quant_min, int64_t quant_max) {
  const float inv_scale = 1.0f / scale;
  if (fast_fake_quantize(zero_point, quant_min, quant_max)) {
    const float fzp = static_cast<float>(zero_point), fmin = static_cast<float>(quant_min),
                fmax = static_cast<float>(quant_max);
    parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
      const float* in = src;
      float* res = out;
      uint8_t* m = mask;
      fake_quantize_fast(in + b, res + b, m ? m + b : nullptr, e - b, scale, inv_scale, fzp, fmin, fmax);
    });
    return;
  }
  parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      out[i] = fake_quantize_val(src[i], scale, inv_scale, zero_point, quant_min, quant_max, mask ? mask + i : nullptr);
  });
}
void fake_quantize_per_channel(const float* src, float* out, uint8_t* mask, int64_t n, const float* scales,
                               const int64_t* zero_points, int64_t channels, int64_t stride, int64_t quant_min,
                               int64_t quant_max) {
  bool fast = true;
  for (int64_t c = 0; c < channels; ++c) fast = fast && fast_fake_quantize(zero_points[c], quant_min, quant_max);
  if (fast && stride > 0 && channels > 0) {
    // runs of `stride` values share a channel
    const int64_t runs = n / stride;
    parallel_for(0, runs, std::max<int64_t>(1, kGrain / stride), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t c = r % channels, at = r * stride;
        fake_quantize_fast(src + at, out + at, mask ? mask + at : nullptr, stride, scales[c], 1.0f / scales[c],
                           static_cast<float>(zero_points[c]), static_cast<float>(quant_min),
                           static_cast<float>(quant_max));
      }
    });
    return;
  }
  parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t c = (i / stride) % channels;
      out[i] = fake_quantize_val(src[i], scales[c], 1.0f / scales[c], zero_points[c], quant_min, quant_max,
                                 mask ? mask + i : nullptr);
    }
  });
}

}  // namespace ember::kernels
