// AdamW: Adam with decoupled weight decay (libtorch's torch::optim::AdamW; weight_decay 1e-2).
#pragma once
#include "ember/optim/adam.h"

namespace ember::optim {

struct AdamWOptions : public OptimizerCloneableOptions<AdamWOptions> {
  AdamWOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT: libtorch converts implicitly
  EMBER_OPTIM_ARG(double, lr);
  using betas_t = std::tuple<double, double>;
  EMBER_OPTIM_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  EMBER_OPTIM_ARG(double, eps) = 1e-8;
  EMBER_OPTIM_ARG(double, weight_decay) = 1e-2;
  EMBER_OPTIM_ARG(bool, amsgrad) = false;
  EMBER_OPTIM_ARG(bool, maximize) = false;
  EMBER_OPTIM_ARG(bool, fused) = true;

 public:
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<OptimizerField> fields() override;
};

using AdamWParamState = AdamParamState;

class AdamW : public Optimizer {
 public:
  AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults = {});
  AdamW(std::vector<Tensor> params, AdamWOptions defaults = {})
      : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}
  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_state(const Tensor& p, const OptimizerOptions& group) const override;
};

}  // namespace ember::optim
