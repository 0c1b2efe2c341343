// Quantized modules (libtorch's torch.ao.nn.quantized). This slice has the dynamic Linear.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "ember/nn/modules/linear.h"
#include "ember/nn/pimpl.h"
#include "ember/quantized.h"

namespace ember::nn::quantized::dynamic {

// PyTorch's DynamicQuantizedLinear: y = x W^T + b with W int8 (per-channel or per-tensor,
// symmetric: zero points 0) quantized and prepacked once, x quantized to uint8 for each call
// from its own min and max (range [0, 127], PyTorch's reduce_range, which keeps CPUs without
// VNNI from saturating their 16-bit products), the int32 products scaled back to float32 and b
// added, on oneDNN's int8 matmul.
class LinearImpl : public Module {
 public:
  // From a quantized qint8 weight [out, in] and an optional float32 bias [out].
  explicit LinearImpl(const Tensor& qweight, const std::optional<Tensor>& bias = std::nullopt);
  // PyTorch's from_float: W observed by a PerChannelMinMaxObserver(qint8, per_channel_symmetric).
  static std::shared_ptr<LinearImpl> from_float(const nn::LinearImpl& linear);
  Tensor forward(const Tensor& input);
  const Tensor& weight() const { return qweight_; }  // quantized
  const std::optional<Tensor>& bias() const { return bias_; }
  int64_t in_features() const { return qweight_.size(1); }
  int64_t out_features() const { return qweight_.size(0); }
  void pretty_print(std::ostream& stream) const override;
  // What computes it: oneDNN's implementation and instruction set ("oneDNN gemm:jit (ISA avx2)").
  std::string kernel() const;
  struct Packed;  // oneDNN's prepacked weight and primitive (src/nn/quantized)

 private:
  Tensor qweight_;
  std::optional<Tensor> bias_;
  std::shared_ptr<Packed> packed_;
};
EMBER_MODULE(Linear);

}  // namespace ember::nn::quantized::dynamic
