// What the quantized layers (Linear, dynamic Linear, the convolutions) share: an int8 kernel
// prepared from the layer's weight and bias buffers, and prepared again when a load (copy_ into
// those buffers) has changed them since; the output's scale and zero point as buffers.
#pragma once
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "ember/factory.h"
#include "ember/nn/module.h"
#include "ember/tensor.h"

namespace ember::nn::quantized::detail {

// The weight's quantizer and the versions of the weight's and the bias's storage.
struct PreparedSource {
  const void* quantizer = nullptr;
  uint32_t weight_version = 0, bias_version = 0;
  bool operator==(const PreparedSource&) const = default;
};

inline PreparedSource source_of(const Tensor& weight, const std::optional<Tensor>& bias) {
  return {weight.unsafeGetTensorImpl()->quantizer().get(), weight.unsafeGetTensorImpl()->storage()->version(),
          bias ? bias->unsafeGetTensorImpl()->storage()->version() : 0u};
}

// A kernel K made by make(weight, bias) on first use and whenever the source changed; the lock
// lets several threads run one module.
template <class K>
class Prepared {
 public:
  template <class Make>
  std::shared_ptr<const K> get(const Tensor& weight, const std::optional<Tensor>& bias, const Make& make) {
    std::lock_guard<std::mutex> lock(mutex_);
    const PreparedSource now = source_of(weight, bias);
    if (!kernel_ || !(now == source_)) {
      kernel_ = make(weight, bias);
      source_ = now;
    }
    return kernel_;
  }

 private:
  std::mutex mutex_;
  std::shared_ptr<const K> kernel_;
  PreparedSource source_;
};

// The output's scale and zero point (quint8), checked, registered on m as 0-dim buffers "scale"
// (float64) and "zero_point" (int64) so that they load with the weights.
inline std::pair<Tensor, Tensor> register_output_qparams(Module& m, const char* op, double scale,
                                                         int64_t zero_point) {
  EMBER_CHECK(std::isfinite(scale) && scale > 0, op, "the output scale must be finite and positive, got ", scale);
  EMBER_CHECK(zero_point >= 0 && zero_point <= 255, op, "the output zero point must be in [0, 255] (quint8), got ",
              zero_point);
  Tensor s = m.register_buffer("scale", scalar_tensor(scale, TensorOptions().dtype(kDouble)));
  Tensor z = m.register_buffer("zero_point", scalar_tensor(zero_point, TensorOptions().dtype(kLong)));
  return {s, z};  // copies: the second registration may move the first buffer's slot
}

}  // namespace ember::nn::quantized::detail
