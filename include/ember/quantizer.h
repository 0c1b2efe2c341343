// The quantization a quantized tensor (dtype kQInt8, kQUInt8, kQInt32) carries: its scheme and
// parameters, as c10's QScheme and ATen's Quantizer. Immutable once made; views share it.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "ember/dtype.h"
#include "ember/intrusive_ptr.h"

namespace ember {

// c10::QScheme
enum class QScheme : uint8_t {
  PER_TENSOR_AFFINE = 0,
  PER_CHANNEL_AFFINE = 1,
  PER_TENSOR_SYMMETRIC = 2,
  PER_CHANNEL_SYMMETRIC = 3,
  PER_CHANNEL_AFFINE_FLOAT_QPARAMS = 4,
};
constexpr QScheme kPerTensorAffine = QScheme::PER_TENSOR_AFFINE;
constexpr QScheme kPerChannelAffine = QScheme::PER_CHANNEL_AFFINE;
constexpr QScheme kPerTensorSymmetric = QScheme::PER_TENSOR_SYMMETRIC;
constexpr QScheme kPerChannelSymmetric = QScheme::PER_CHANNEL_SYMMETRIC;
constexpr QScheme kPerChannelAffineFloatQParams = QScheme::PER_CHANNEL_AFFINE_FLOAT_QPARAMS;
std::string toString(QScheme s);  // "per_tensor_affine", as c10
std::ostream& operator<<(std::ostream& os, QScheme s);

// A quantized tensor's parameters. Tensors store affine schemes only (as PyTorch: symmetric is a
// way of choosing them). Per channel: one scale and zero point per index of `axis`.
struct Quantizer : RefCounted {
  QScheme qscheme = kPerTensorAffine;
  ScalarType dtype = kQInt8;
  double scale = 1.0;  // per tensor
  int64_t zero_point = 0;
  std::vector<double> scales;  // per channel
  std::vector<int64_t> zero_points;
  int64_t axis = 0;
  bool same_as(const Quantizer& o) const {
    return qscheme == o.qscheme && dtype == o.dtype && scale == o.scale && zero_point == o.zero_point &&
           scales == o.scales && zero_points == o.zero_points && axis == o.axis;
  }
};

}  // namespace ember
