// Options of the losses beyond those of ember/nn/modules/loss.h (margin, embedding, triplet,
// Poisson and CTC losses), and the reduction every loss takes: torch::kNone / kMean / kSum.
#pragma once
#include <functional>
#include <optional>
#include <variant>

#include "ember/nn/options.h"
#include "ember/tensor.h"

namespace ember::nn {

using reduction_t = std::variant<enumtype::kNone, enumtype::kMean, enumtype::kSum>;

#define EMBER_REDUCTION_OPTIONS(Name)                                                   \
  Name() = default;                                                                     \
  Name(reduction_t reduction) : reduction_(reduction) {} /* NOLINT */                   \
  /* one per tag, as libtorch's: F::mse_loss(x, y, torch::kSum) is one conversion */   \
  Name(enumtype::kNone) : reduction_(kNone) {} /* NOLINT */                             \
  Name(enumtype::kMean) : reduction_(kMean) {} /* NOLINT */                             \
  Name(enumtype::kSum) : reduction_(kSum) {}   /* NOLINT */                             \
  EMBER_ARG(reduction_t, reduction) = kMean;

struct MarginRankingLossOptions {
  EMBER_REDUCTION_OPTIONS(MarginRankingLossOptions)
  EMBER_ARG(double, margin) = 0;
};
struct HingeEmbeddingLossOptions {
  EMBER_REDUCTION_OPTIONS(HingeEmbeddingLossOptions)
  EMBER_ARG(double, margin) = 1.0;
};
struct MultiMarginLossOptions {
  EMBER_REDUCTION_OPTIONS(MultiMarginLossOptions)
  EMBER_ARG(int64_t, p) = 1;  // 1 or 2
  EMBER_ARG(double, margin) = 1.0;
  EMBER_ARG(Tensor, weight) = Tensor();
};
struct CosineEmbeddingLossOptions {
  EMBER_REDUCTION_OPTIONS(CosineEmbeddingLossOptions)
  EMBER_ARG(double, margin) = 0.0;
};
struct MultiLabelMarginLossOptions {
  EMBER_REDUCTION_OPTIONS(MultiLabelMarginLossOptions)
};
struct SoftMarginLossOptions {
  EMBER_REDUCTION_OPTIONS(SoftMarginLossOptions)
};
struct MultiLabelSoftMarginLossOptions {
  EMBER_REDUCTION_OPTIONS(MultiLabelSoftMarginLossOptions)
  EMBER_ARG(Tensor, weight) = Tensor();
};
struct TripletMarginLossOptions {
  EMBER_REDUCTION_OPTIONS(TripletMarginLossOptions)
  EMBER_ARG(double, margin) = 1.0;
  EMBER_ARG(double, p) = 2.0;
  EMBER_ARG(double, eps) = 1e-6;
  // Use the distance from positive to negative when it is smaller than anchor's.
  EMBER_ARG(bool, swap) = false;
};
struct TripletMarginWithDistanceLossOptions {
  using distance_function_t = std::function<Tensor(const Tensor&, const Tensor&)>;
  EMBER_REDUCTION_OPTIONS(TripletMarginWithDistanceLossOptions)
  // nullopt: F::pairwise_distance.
  EMBER_ARG(std::optional<distance_function_t>, distance_function) = std::nullopt;
  EMBER_ARG(double, margin) = 1.0;
  EMBER_ARG(bool, swap) = false;
};
struct PoissonNLLLossOptions {
  EMBER_REDUCTION_OPTIONS(PoissonNLLLossOptions)
  // Whether input is log(rate) (else the rate).
  EMBER_ARG(bool, log_input) = true;
  // Adds Stirling's approximation of log(target!).
  EMBER_ARG(bool, full) = false;
  EMBER_ARG(double, eps) = 1e-8;
};
struct CTCLossOptions {
  EMBER_REDUCTION_OPTIONS(CTCLossOptions)
  EMBER_ARG(int64_t, blank) = 0;
  // Infinite losses (targets the input is too short for) and their gradients become zero.
  EMBER_ARG(bool, zero_infinity) = false;
};
#undef EMBER_REDUCTION_OPTIONS

namespace functional {
using CTCLossFuncOptions = CTCLossOptions;
using MarginRankingLossFuncOptions = MarginRankingLossOptions;
using HingeEmbeddingLossFuncOptions = HingeEmbeddingLossOptions;
using MultiMarginLossFuncOptions = MultiMarginLossOptions;
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
using MultilabelMarginLossFuncOptions = MultiLabelMarginLossOptions;
using SoftMarginLossFuncOptions = SoftMarginLossOptions;
using MultilabelSoftMarginLossFuncOptions = MultiLabelSoftMarginLossOptions;
using TripletMarginLossFuncOptions = TripletMarginLossOptions;
using TripletMarginWithDistanceLossFuncOptions = TripletMarginWithDistanceLossOptions;
using PoissonNLLLossFuncOptions = PoissonNLLLossOptions;
}  // namespace functional
}  // namespace ember::nn
