// L-BFGS (libtorch's torch::optim::LBFGS): a quasi-Newton method that keeps the last
// `history_size` steps and gradient changes, with an optional strong-Wolfe line search. One
// parameter group only; step() needs a closure that recomputes the loss and its gradients.
#pragma once
#include <deque>
#include <optional>
#include <string>

#include "ember/optim/optimizer.h"

namespace ember::optim {

struct LBFGSOptions : public OptimizerCloneableOptions<LBFGSOptions> {
  LBFGSOptions(double lr = 1) : lr_(lr) {}  // NOLINT: libtorch converts implicitly
  EMBER_OPTIM_ARG(double, lr);
  EMBER_OPTIM_ARG(int64_t, max_iter) = 20;
  EMBER_OPTIM_ARG(std::optional<int64_t>, max_eval) = std::nullopt;  // max_iter * 5 / 4 when unset
  EMBER_OPTIM_ARG(double, tolerance_grad) = 1e-7;
  EMBER_OPTIM_ARG(double, tolerance_change) = 1e-9;
  EMBER_OPTIM_ARG(int64_t, history_size) = 100;
  EMBER_OPTIM_ARG(std::optional<std::string>, line_search_fn) = std::nullopt;  // or "strong_wolfe"

 public:
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<OptimizerField> fields() override;
};

// Kept on the group's first parameter, as in libtorch. d and prev_flat_grad are flat vectors over
// all parameters; old_dirs/old_stps/ro the curvature pairs; al is scratch of the two-loop recursion.
struct LBFGSParamState : public OptimizerCloneableParamState<LBFGSParamState> {
  EMBER_OPTIM_ARG(int64_t, func_evals) = 0;
  EMBER_OPTIM_ARG(int64_t, n_iter) = 0;
  EMBER_OPTIM_ARG(double, t) = 0;
  EMBER_OPTIM_ARG(double, prev_loss) = 0;
  EMBER_OPTIM_ARG(Tensor, d);
  EMBER_OPTIM_ARG(Tensor, H_diag);
  EMBER_OPTIM_ARG(Tensor, prev_flat_grad);
  EMBER_OPTIM_ARG(std::deque<Tensor>, old_dirs);
  EMBER_OPTIM_ARG(std::deque<Tensor>, old_stps);
  EMBER_OPTIM_ARG(std::deque<Tensor>, ro);
  EMBER_OPTIM_ARG(std::optional<std::vector<Tensor>>, al) = std::nullopt;

 public:
  std::vector<StateField> fields() override;
};

class LBFGS : public Optimizer {
 public:
  explicit LBFGS(std::vector<OptimizerParamGroup> param_groups, LBFGSOptions defaults = {});
  explicit LBFGS(std::vector<Tensor> params, LBFGSOptions defaults = {})
      : LBFGS(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}
  // Up to max_iter iterations; returns the loss the closure gave before the first of them.
  Tensor step(LossClosure closure) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_state(const Tensor& p, const OptimizerOptions& group) const override;

 private:
  int64_t numel() const;
  Tensor gather_flat_grad() const;
  void add_grad(double step_size, const Tensor& update);
  std::vector<Tensor> clone_params() const;
  void set_params(const std::vector<Tensor>& values);
  // The loss and flat gradient at params + t * d (the parameters are restored afterwards).
  std::pair<double, Tensor> directional_evaluate(const LossClosure& closure, const std::vector<Tensor>& x, double t,
                                                 const Tensor& d);
};

}  // namespace ember::optim
