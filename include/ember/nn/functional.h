// torch::nn::functional: the forms that take FuncOptions, as libtorch's (the at::-style
// positional forms are ember::conv2d, ember::embedding(weight, indices), ... in ember/nn_ops.h).
// Users write `namespace F = torch::nn::functional;`.
#pragma once
#include "ember/nn/functional/activation.h"
#include "ember/nn/functional/conv.h"
#include "ember/nn/functional/distance.h"
#include "ember/nn/functional/dropout.h"
#include "ember/nn/functional/linear.h"
#include "ember/nn/functional/loss.h"
#include "ember/nn/functional/normalization.h"
#include "ember/nn/functional/vision.h"
#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/embedding.h"
#include "ember/nn/modules/fold.h"
#include "ember/nn/modules/loss.h"
#include "ember/nn/modules/pooling.h"
#include "ember/nn_ops.h"

namespace ember::nn::functional {

// libtorch's F::pad(input, F::PadFuncOptions({1, 1}).mode(torch::kReflect).value(0)).
struct PadFuncOptions {
  using mode_t = std::variant<enumtype::kConstant, enumtype::kReflect, enumtype::kReplicate, enumtype::kCircular>;
  PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}  // NOLINT: implicit, as libtorch
  EMBER_ARG(std::vector<int64_t>, pad);
  EMBER_ARG(mode_t, mode) = enumtype::kConstant{};
  EMBER_ARG(double, value) = 0;
};
inline Tensor pad(const Tensor& input, const PadFuncOptions& options) {
  static constexpr const char* kModes[] = {"constant", "reflect", "replicate", "circular"};
  const char* mode = kModes[options.mode().index()];
  return ember::pad(input, options.pad(), mode,
             std::holds_alternative<enumtype::kConstant>(options.mode()) ? std::optional(options.value()) : std::nullopt);
}

}  // namespace ember::nn::functional
