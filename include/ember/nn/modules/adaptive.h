// AdaptiveLogSoftmaxWithLoss: Grave et al.'s adaptive softmax, as libtorch's module (a head over
// the frequent classes and one cluster token per tail, each tail a two-layer projection of
// shrinking width).
#pragma once
#include <vector>

#include "ember/nn/modules/container.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/options.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

struct AdaptiveLogSoftmaxWithLossOptions {
  AdaptiveLogSoftmaxWithLossOptions(int64_t in_features, int64_t n_classes, std::vector<int64_t> cutoffs)  // NOLINT
      : in_features_(in_features), n_classes_(n_classes), cutoffs_(std::move(cutoffs)) {}
  EMBER_ARG(int64_t, in_features);
  EMBER_ARG(int64_t, n_classes);
  EMBER_ARG(std::vector<int64_t>, cutoffs);
  EMBER_ARG(double, div_value) = 4.;
  EMBER_ARG(bool, head_bias) = false;
};

// forward's result, as libtorch's: the target log-probability of every example, and the mean
// negative log-likelihood as a number (libtorch's type; differentiate through `output`).
struct ASMoutput {
  ASMoutput(Tensor output_, double loss_) : output(std::move(output_)), loss(loss_) {}
  Tensor output;
  double loss;
};

class AdaptiveLogSoftmaxWithLossImpl : public Module {
 public:
  AdaptiveLogSoftmaxWithLossImpl(int64_t in_features, int64_t n_classes, std::vector<int64_t> cutoffs)
      : AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions(in_features, n_classes, std::move(cutoffs))) {}
  explicit AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions options_);
  // input (batch, in_features) with target (batch), or input (in_features) with a 0-dim target
  ASMoutput forward(const Tensor& input, const Tensor& target);
  void reset();
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  // log-probabilities of every class (batch, n_classes), from the head's output on input
  Tensor _get_full_log_prob(const Tensor& input, const Tensor& head_output);
  Tensor log_prob(const Tensor& input);
  // the most likely class of every row
  Tensor predict(const Tensor& input);

  AdaptiveLogSoftmaxWithLossOptions options;
  std::vector<int64_t> cutoffs;  // the options' cutoffs, then n_classes
  int64_t shortlist_size = 0;
  int64_t n_clusters = 0;
  int64_t head_size = 0;
  Linear head = nullptr;
  ModuleList tail;
};
EMBER_MODULE(AdaptiveLogSoftmaxWithLoss);

}  // namespace ember::nn
