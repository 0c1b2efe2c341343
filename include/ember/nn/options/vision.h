// Options of F::grid_sample.
#pragma once
#include <optional>
#include <variant>

#include "ember/nn/options.h"

namespace ember::nn::functional {
struct GridSampleFuncOptions {
  using mode_t = std::variant<enumtype::kBilinear, enumtype::kNearest>;
  using padding_mode_t = std::variant<enumtype::kZeros, enumtype::kBorder, enumtype::kReflection>;
  EMBER_ARG(mode_t, mode) = kBilinear;
  EMBER_ARG(padding_mode_t, padding_mode) = kZeros;
  // nullopt: false, as libtorch's.
  EMBER_ARG(std::optional<bool>, align_corners) = std::nullopt;
};
}  // namespace ember::nn::functional
