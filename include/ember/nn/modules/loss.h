// Losses: modules, their options (reduction torch::kNone / kMean / kSum) and functional forms
// (F::cross_entropy(x, y, F::CrossEntropyFuncOptions().label_smoothing(0.1))).
#pragma once
#include <variant>

#include "ember/nn/functional/loss.h"
#include "ember/nn/options.h"
#include "ember/nn/options/loss.h"
#include "ember/nn/pimpl.h"

namespace ember {

// at::Reduction: the integer reduction of the at:: loss functions.
namespace Reduction {
enum Reduction { None = 0, Mean = 1, Sum = 2 };
}

// Negative log-likelihood over class scores: input (C), (N, C) or (N, C, d1, ...), target the
// class indices ((), (N) or (N, d1, ...)); entries equal to ignore_index count for nothing. With
// weight (C) each entry counts weight[target]; Mean divides by the sum of those weights.
Tensor nll_loss(const Tensor& self, const Tensor& target, const Tensor& weight = {},
                int64_t reduction = Reduction::Mean, int64_t ignore_index = -100);
// The gradient of nll_loss with respect to self (linear in grad_output).
Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target, const Tensor& weight,
                         int64_t reduction, int64_t ignore_index);
// The other at:: losses (torch::mse_loss(x, y), torch::cross_entropy_loss(x, y, {}, at::Reduction::Sum),
// ...): libtorch's argument order and defaults, the same ops as the functional forms below.
Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction = Reduction::Mean);
Tensor l1_loss(const Tensor& self, const Tensor& target, int64_t reduction = Reduction::Mean);
Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, int64_t reduction = Reduction::Mean, double beta = 1.0);
Tensor huber_loss(const Tensor& self, const Tensor& target, int64_t reduction = Reduction::Mean, double delta = 1.0);
Tensor binary_cross_entropy(const Tensor& self, const Tensor& target, const Tensor& weight = {},
                            int64_t reduction = Reduction::Mean);
Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target, const Tensor& weight = {},
                                        const Tensor& pos_weight = {}, int64_t reduction = Reduction::Mean);
Tensor cross_entropy_loss(const Tensor& self, const Tensor& target, const Tensor& weight = {},
                          int64_t reduction = Reduction::Mean, int64_t ignore_index = -100,
                          double label_smoothing = 0.0);
Tensor kl_div(const Tensor& self, const Tensor& target, int64_t reduction = Reduction::Mean, bool log_target = false);

namespace nn {

using kldiv_reduction_t = std::variant<enumtype::kNone, enumtype::kBatchMean, enumtype::kSum, enumtype::kMean>;

#define EMBER_REDUCTION_OPTIONS(Name)                                                   \
  Name() = default;                                                                     \
  Name(reduction_t reduction) : reduction_(reduction) {} /* NOLINT */                   \
  /* one per tag, as libtorch's: F::mse_loss(x, y, torch::kSum) is one conversion */   \
  Name(enumtype::kNone) : reduction_(kNone) {} /* NOLINT */                             \
  Name(enumtype::kMean) : reduction_(kMean) {} /* NOLINT */                             \
  Name(enumtype::kSum) : reduction_(kSum) {}   /* NOLINT */                             \
  EMBER_ARG(reduction_t, reduction) = kMean;

struct MSELossOptions {
  EMBER_REDUCTION_OPTIONS(MSELossOptions)
};
struct L1LossOptions {
  EMBER_REDUCTION_OPTIONS(L1LossOptions)
};
struct SmoothL1LossOptions {
  EMBER_REDUCTION_OPTIONS(SmoothL1LossOptions)
  // Below beta the loss is quadratic (0.5 x^2 / beta), above linear (|x| - 0.5 beta).
  EMBER_ARG(double, beta) = 1.0;
};
struct HuberLossOptions {
  EMBER_REDUCTION_OPTIONS(HuberLossOptions)
  EMBER_ARG(double, delta) = 1.0;
};
struct CrossEntropyLossOptions {
  EMBER_REDUCTION_OPTIONS(CrossEntropyLossOptions)
  EMBER_ARG(Tensor, weight) = {};
  EMBER_ARG(int64_t, ignore_index) = -100;
  EMBER_ARG(double, label_smoothing) = 0.0;
};
struct NLLLossOptions {
  EMBER_REDUCTION_OPTIONS(NLLLossOptions)
  EMBER_ARG(Tensor, weight) = {};
  EMBER_ARG(int64_t, ignore_index) = -100;
};
struct BCELossOptions {
  EMBER_REDUCTION_OPTIONS(BCELossOptions)
  EMBER_ARG(Tensor, weight) = {};
};
struct BCEWithLogitsLossOptions {
  EMBER_REDUCTION_OPTIONS(BCEWithLogitsLossOptions)
  EMBER_ARG(Tensor, weight) = {};
  // Weight of the positive term per class (broadcast along the last dim).
  EMBER_ARG(Tensor, pos_weight) = {};
};
#undef EMBER_REDUCTION_OPTIONS
struct KLDivLossOptions {
  KLDivLossOptions() = default;
  KLDivLossOptions(kldiv_reduction_t reduction) : reduction_(reduction) {}  // NOLINT
  KLDivLossOptions(enumtype::kNone) : reduction_(kNone) {}                  // NOLINT
  KLDivLossOptions(enumtype::kBatchMean) : reduction_(kBatchMean) {}        // NOLINT
  KLDivLossOptions(enumtype::kSum) : reduction_(kSum) {}                    // NOLINT
  KLDivLossOptions(enumtype::kMean) : reduction_(kMean) {}                  // NOLINT
  EMBER_ARG(kldiv_reduction_t, reduction) = kMean;
  // Whether the target is given as log-probabilities.
  EMBER_ARG(bool, log_target) = false;
};

namespace functional {
using MSELossFuncOptions = MSELossOptions;
using L1LossFuncOptions = L1LossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
using KLDivFuncOptions = KLDivLossOptions;

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options = {});
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options = {});
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options = {});
// libtorch 1.13's spelling, beta apart from the options.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options, double beta);
Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options = {});
// target: class indices (integer dtype, input's shape without dim 1) or class probabilities
// (floating, the input's shape).
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options = {});
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options = {});
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options = {});
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options = {});
Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options = {});
}  // namespace functional

#define EMBER_LOSS_MODULE(Name, fn)                                                  \
  class Name##Impl : public Module {                                                 \
   public:                                                                           \
    explicit Name##Impl(const Name##Options& options = {}) : options(options) {}    \
    Tensor forward(const Tensor& input, const Tensor& target) {                      \
      return functional::fn(input, target, options);                                 \
    }                                                                                \
    void pretty_print(std::ostream& stream) const override {                         \
      stream << "torch::nn::" #Name "()";                                            \
    }                                                                                \
    Name##Options options;                                                           \
  };                                                                                 \
  EMBER_MODULE(Name);
EMBER_LOSS_MODULE(MSELoss, mse_loss)
EMBER_LOSS_MODULE(L1Loss, l1_loss)
EMBER_LOSS_MODULE(SmoothL1Loss, smooth_l1_loss)
EMBER_LOSS_MODULE(HuberLoss, huber_loss)
EMBER_LOSS_MODULE(CrossEntropyLoss, cross_entropy)
EMBER_LOSS_MODULE(NLLLoss, nll_loss)
EMBER_LOSS_MODULE(BCELoss, binary_cross_entropy)
EMBER_LOSS_MODULE(BCEWithLogitsLoss, binary_cross_entropy_with_logits)
EMBER_LOSS_MODULE(KLDivLoss, kl_div)
EMBER_LOSS_MODULE(MultiLabelMarginLoss, multilabel_margin_loss)
EMBER_LOSS_MODULE(SoftMarginLoss, soft_margin_loss)
EMBER_LOSS_MODULE(MultiLabelSoftMarginLoss, multilabel_soft_margin_loss)
EMBER_LOSS_MODULE(PoissonNLLLoss, poisson_nll_loss)
#undef EMBER_LOSS_MODULE

// The losses whose printed form shows options: pretty_print in src/nn/functional/loss_more.cpp.
#define EMBER_LOSS_MODULE_PRINTED(Name, fn)                                          \
  class Name##Impl : public Module {                                                 \
   public:                                                                           \
    explicit Name##Impl(const Name##Options& options = {}) : options(options) {}    \
    Tensor forward(const Tensor& input, const Tensor& target) {                      \
      return functional::fn(input, target, options);                                 \
    }                                                                                \
    void pretty_print(std::ostream& stream) const override;                          \
    Name##Options options;                                                           \
  };                                                                                 \
  EMBER_MODULE(Name);
EMBER_LOSS_MODULE_PRINTED(HingeEmbeddingLoss, hinge_embedding_loss)
EMBER_LOSS_MODULE_PRINTED(MultiMarginLoss, multi_margin_loss)
#undef EMBER_LOSS_MODULE_PRINTED

// Losses of three tensors: (input1, input2, target) or (anchor, positive, negative).
#define EMBER_LOSS3_MODULE(Name, fn)                                                 \
  class Name##Impl : public Module {                                                 \
   public:                                                                           \
    explicit Name##Impl(const Name##Options& options = {}) : options(options) {}    \
    Tensor forward(const Tensor& a, const Tensor& b, const Tensor& c) {              \
      return functional::fn(a, b, c, options);                                       \
    }                                                                                \
    void pretty_print(std::ostream& stream) const override;                          \
    Name##Options options;                                                           \
  };                                                                                 \
  EMBER_MODULE(Name);
EMBER_LOSS3_MODULE(MarginRankingLoss, margin_ranking_loss)
EMBER_LOSS3_MODULE(CosineEmbeddingLoss, cosine_embedding_loss)
EMBER_LOSS3_MODULE(TripletMarginLoss, triplet_margin_loss)
EMBER_LOSS3_MODULE(TripletMarginWithDistanceLoss, triplet_margin_with_distance_loss)
#undef EMBER_LOSS3_MODULE

class CTCLossImpl : public Module {
 public:
  explicit CTCLossImpl(const CTCLossOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                 const Tensor& target_lengths) {
    return functional::ctc_loss(log_probs, targets, input_lengths, target_lengths, options);
  }
  void pretty_print(std::ostream& stream) const override { stream << "torch::nn::CTCLoss()"; }
  CTCLossOptions options;
};
EMBER_MODULE(CTCLoss);

}  // namespace nn
}  // namespace ember
