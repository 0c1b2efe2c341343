// Stochastic gradient descent (libtorch's torch::optim::SGD, with PyTorch's maximize).
#pragma once
#include "ember/optim/optimizer.h"

namespace ember::optim {

struct SGDOptions : public OptimizerCloneableOptions<SGDOptions> {
  SGDOptions(double lr) : lr_(lr) {}  // NOLINT: libtorch converts implicitly
  EMBER_OPTIM_ARG(double, lr);
  EMBER_OPTIM_ARG(double, momentum) = 0;
  EMBER_OPTIM_ARG(double, dampening) = 0;
  EMBER_OPTIM_ARG(double, weight_decay) = 0;
  EMBER_OPTIM_ARG(bool, nesterov) = false;
  EMBER_OPTIM_ARG(bool, maximize) = false;

 public:
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<OptimizerField> fields() override;
};

struct SGDParamState : public OptimizerCloneableParamState<SGDParamState> {
  EMBER_OPTIM_ARG(Tensor, momentum_buffer);

 public:
  std::vector<StateField> fields() override { return {{"momentum_buffer", &momentum_buffer_}}; }
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults);
  SGD(std::vector<Tensor> params, SGDOptions defaults)
      : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}
  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_state(const Tensor& p, const OptimizerOptions& group) const override;
};

}  // namespace ember::optim
