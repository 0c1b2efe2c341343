// Adam (libtorch's torch::optim::Adam, with PyTorch's maximize and a fused single-pass kernel).
#pragma once
#include <tuple>

#include "ember/optim/optimizer.h"

namespace ember::optim {

struct AdamOptions : public OptimizerCloneableOptions<AdamOptions> {
  AdamOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT: libtorch converts implicitly
  EMBER_OPTIM_ARG(double, lr);
  using betas_t = std::tuple<double, double>;
  EMBER_OPTIM_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  EMBER_OPTIM_ARG(double, eps) = 1e-8;
  EMBER_OPTIM_ARG(double, weight_decay) = 0;
  EMBER_OPTIM_ARG(bool, amsgrad) = false;
  EMBER_OPTIM_ARG(bool, maximize) = false;
  // One kernel pass per chunk of parameters doing the whole update (the default: same formulas, one
  // read of each tensor); fused(false) takes the multi-tensor ops, libtorch's per-op sequence.
  EMBER_OPTIM_ARG(bool, fused) = true;

 public:
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<OptimizerField> fields() override;
};

struct AdamParamState : public OptimizerCloneableParamState<AdamParamState> {
  EMBER_OPTIM_ARG(int64_t, step) = 0;
  EMBER_OPTIM_ARG(Tensor, exp_avg);
  EMBER_OPTIM_ARG(Tensor, exp_avg_sq);
  EMBER_OPTIM_ARG(Tensor, max_exp_avg_sq);

 public:
  std::vector<StateField> fields() override;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults = {});
  Adam(std::vector<Tensor> params, AdamOptions defaults = {})
      : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}
  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_state(const Tensor& p, const OptimizerOptions& group) const override;
};

}  // namespace ember::optim
