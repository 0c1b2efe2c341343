// Learning-rate schedulers with PyTorch's semantics: constructing one takes the initial step
// (epoch 0), each step() advances one epoch and writes the new lr into every parameter group,
// computed by PyTorch's recursive ("chainable") forms from the current lr, so schedulers compose.
// StepLR, the one scheduler libtorch's C++ frontend has, counts as libtorch's does instead: its
// constructor takes no step and its first step() is epoch 0, so a program moved from libtorch
// trains with the same rates (docs/compat.md).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ember/optim/optimizer.h"

namespace ember::optim {

class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler() = default;
  virtual void step();
  // The lr of each group after the last step.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }

 protected:
  friend class SequentialLR;
  // The lrs at last_epoch_ (already advanced). By default libtorch's get_lrs().
  virtual std::vector<double> get_lr() { return get_lrs(); }
  // libtorch's interface, for a scheduler written against it: it overrides get_lrs() (computed
  // from get_current_lrs() and step_count_, the steps taken before this one) and its constructor
  // takes no step, so its first step() is libtorch's first.
  virtual std::vector<double> get_lrs();
  std::vector<double> get_current_lrs() const { return current_lrs(); }
  unsigned step_count_ = 0;
  // The lrs at last_epoch_ straight from base_lrs_, for schedulers that have a closed form
  // (used when SequentialLR restarts a scheduler at epoch 0).
  virtual std::optional<std::vector<double>> closed_form_lr() { return std::nullopt; }
  std::vector<double> current_lrs() const;
  void set_lrs(const std::vector<double>& lrs);
  // Derived constructors end with this: epoch 0, as PyTorch's constructors do.
  void initial_step();
  // Moves to `epoch` (SequentialLR's restart at 0).
  void step_to(int64_t epoch);

  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  int64_t last_epoch_ = -1;
  // False for libtorch's StepLR, whose epoch 0 is its first step() rather than its construction.
  bool stepped_on_construction_ = true;
  std::vector<double> last_lr_;
};

// lr * gamma every step_size epochs; libtorch's counting (above): after k step() calls the lr is
// PyTorch's after k - 1.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr * gamma at each milestone (a repeated milestone multiplies again).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1);

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() override;

 private:
  std::vector<int64_t> milestones_;  // sorted
  double gamma_;
};

// lr * gamma every epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() override;

 private:
  double gamma_;
};

// Cosine from the base lr down to eta_min over T_max epochs, then back up (SGDR without restarts).
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0);

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() override;

 private:
  int64_t T_max_;
  double eta_min_;
};

// The base lr times a factor going linearly from start_factor to end_factor over total_iters.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5);

 protected:
  std::vector<double> get_lr() override;
  std::optional<std::vector<double>> closed_form_lr() override;

 private:
  double start_factor_, end_factor_;
  int64_t total_iters_;
};

// The base lr times lr_lambda(epoch); one function for all groups or one per group.
class LambdaLR : public LRScheduler {
 public:
  using Lambda = std::function<double(int64_t)>;
  LambdaLR(Optimizer& optimizer, Lambda lr_lambda);
  LambdaLR(Optimizer& optimizer, std::vector<Lambda> lr_lambdas);

 protected:
  std::vector<double> get_lr() override;

 private:
  std::vector<Lambda> lambdas_;
};

// The 1cycle policy: lr from max_lr / div_factor up to max_lr over pct_start of total_steps, then
// down to that / final_div_factor (three_phase: back to the initial lr first, then down);
// momentum (or Adam's beta1) cycles inversely between max_momentum and base_momentum.
struct OneCycleLROptions {
  EMBER_OPTIM_ARG(double, pct_start) = 0.3;
  EMBER_OPTIM_ARG(std::string, anneal_strategy) = "cos";  // or "linear"
  EMBER_OPTIM_ARG(bool, cycle_momentum) = true;
  EMBER_OPTIM_ARG(double, base_momentum) = 0.85;
  EMBER_OPTIM_ARG(double, max_momentum) = 0.95;
  EMBER_OPTIM_ARG(double, div_factor) = 25;
  EMBER_OPTIM_ARG(double, final_div_factor) = 1e4;
  EMBER_OPTIM_ARG(bool, three_phase) = false;
};
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps, OneCycleLROptions options = {});
  OneCycleLR(Optimizer& optimizer, std::vector<double> max_lrs, int64_t total_steps, OneCycleLROptions options = {});

 protected:
  std::vector<double> get_lr() override;

 private:
  struct Phase {
    double end_step;
    int start_lr, end_lr;  // 0: initial, 1: max, 2: min
    bool momentum_up;      // base -> max (else max -> base; the last of three phases stays at max)
    bool momentum_flat;
  };
  double anneal(double start, double end, double pct) const;
  int64_t total_steps_;
  OneCycleLROptions options_;
  std::vector<Phase> phases_;
  std::vector<std::array<double, 3>> group_lrs_;  // initial, max, min per group
};

// Runs schedulers one after another, switching at the milestones (each restarts at epoch 0).
class SequentialLR : public LRScheduler {
 public:
  // The schedulers must be built on `optimizer` and outlive this object.
  SequentialLR(Optimizer& optimizer, std::vector<LRScheduler*> schedulers, std::vector<int64_t> milestones);
  void step() override;

 protected:
  std::vector<double> get_lr() override { return current_lrs(); }

 private:
  std::vector<LRScheduler*> schedulers_;
  std::vector<int64_t> milestones_;
};

}  // namespace ember::optim
