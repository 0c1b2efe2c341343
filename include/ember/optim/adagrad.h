// Adagrad (libtorch's torch::optim::Adagrad).
#pragma once
#include "ember/optim/optimizer.h"

namespace ember::optim {

struct AdagradOptions : public OptimizerCloneableOptions<AdagradOptions> {
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: libtorch converts implicitly
  EMBER_OPTIM_ARG(double, lr);
  EMBER_OPTIM_ARG(double, lr_decay) = 0;
  EMBER_OPTIM_ARG(double, weight_decay) = 0;
  EMBER_OPTIM_ARG(double, initial_accumulator_value) = 0;
  EMBER_OPTIM_ARG(double, eps) = 1e-10;

 public:
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<OptimizerField> fields() override;
};

struct AdagradParamState : public OptimizerCloneableParamState<AdagradParamState> {
  EMBER_OPTIM_ARG(Tensor, sum);
  EMBER_OPTIM_ARG(int64_t, step) = 0;

 public:
  std::vector<StateField> fields() override { return {{"sum", &sum_}, {"step", nullptr, &step_}}; }
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults = {});
  Adagrad(std::vector<Tensor> params, AdagradOptions defaults = {})
      : Adagrad(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}
  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_state(const Tensor& p, const OptimizerOptions& group) const override;
};

}  // namespace ember::optim
