// RMSprop (libtorch's torch::optim::RMSprop).
#pragma once
#include "ember/optim/optimizer.h"

namespace ember::optim {

struct RMSpropOptions : public OptimizerCloneableOptions<RMSpropOptions> {
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: libtorch converts implicitly
  EMBER_OPTIM_ARG(double, lr);
  EMBER_OPTIM_ARG(double, alpha) = 0.99;
  EMBER_OPTIM_ARG(double, eps) = 1e-8;
  EMBER_OPTIM_ARG(double, weight_decay) = 0;
  EMBER_OPTIM_ARG(double, momentum) = 0;
  EMBER_OPTIM_ARG(bool, centered) = false;

 public:
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<OptimizerField> fields() override;
};

struct RMSpropParamState : public OptimizerCloneableParamState<RMSpropParamState> {
  EMBER_OPTIM_ARG(int64_t, step) = 0;
  EMBER_OPTIM_ARG(Tensor, square_avg);
  EMBER_OPTIM_ARG(Tensor, momentum_buffer);
  EMBER_OPTIM_ARG(Tensor, grad_avg);

 public:
  std::vector<StateField> fields() override;
};

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults = {});
  RMSprop(std::vector<Tensor> params, RMSpropOptions defaults = {})
      : RMSprop(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}
  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_state(const Tensor& p, const OptimizerOptions& group) const override;
};

}  // namespace ember::optim
