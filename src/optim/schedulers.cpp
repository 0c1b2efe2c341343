// LR schedulers: PyTorch's recursive forms (each lr from the current one) for step(), and its
// closed forms (from the base lr) where SequentialLR restarts a scheduler.
#include "ember/optim/schedulers.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace ember::optim {

namespace {
// Python's % (the result takes the divisor's sign).
int64_t py_mod(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}
template <class F>
std::vector<double> map_lrs(const std::vector<double>& lrs, F f) {
  std::vector<double> out(lrs.size());
  for (size_t i = 0; i < lrs.size(); ++i) out[i] = f(lrs[i], i);
  return out;
}
}  // namespace

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (OptimizerParamGroup& g : optimizer_.param_groups()) {
    if (!g.initial_lr()) g.initial_lr() = g.options().get_lr();
    base_lrs_.push_back(*g.initial_lr());
  }
}

std::vector<double> LRScheduler::current_lrs() const {
  std::vector<double> lrs;
  for (const OptimizerParamGroup& g : optimizer_.param_groups()) lrs.push_back(g.options().get_lr());
  return lrs;
}

void LRScheduler::set_lrs(const std::vector<double>& lrs) {
  auto& groups = optimizer_.param_groups();
  EMBER_CHECK(lrs.size() == groups.size(), "LRScheduler", "the optimizer has ", groups.size(),
              " parameter groups but the scheduler was built for ", lrs.size());
  for (size_t i = 0; i < lrs.size(); ++i) groups[i].options().set_lr(lrs[i]);
  last_lr_ = lrs;
}

void LRScheduler::initial_step() { step(); }

void LRScheduler::step() {
  ++last_epoch_;
  set_lrs(get_lr());
  ++step_count_;
}

std::vector<double> LRScheduler::get_lrs() {
  ::ember::detail::fail("LRScheduler", "a scheduler overrides get_lr() (or libtorch's get_lrs())");
}

void LRScheduler::step_to(int64_t epoch) {
  last_epoch_ = epoch;
  std::optional<std::vector<double>> closed = closed_form_lr();
  set_lrs(closed ? *closed : get_lr());
}

// ---- StepLR ---------------------------------------------------------------------------------------
StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  EMBER_CHECK(step_size > 0, "StepLR", "step_size must be positive, got ", step_size);
  stepped_on_construction_ = false;
  last_lr_ = current_lrs();
}
std::vector<double> StepLR::get_lr() {
  if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return current_lrs();
  return map_lrs(current_lrs(), [&](double lr, size_t) { return lr * gamma_; });
}
std::optional<std::vector<double>> StepLR::closed_form_lr() {
  return map_lrs(base_lrs_,
                 [&](double b, size_t) { return b * std::pow(gamma_, static_cast<double>(last_epoch_ / step_size_)); });
}

// ---- MultiStepLR ----------------------------------------------------------------------------------
MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  initial_step();
}
std::vector<double> MultiStepLR::get_lr() {
  const auto hits = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  if (hits == 0) return current_lrs();
  return map_lrs(current_lrs(), [&](double lr, size_t) { return lr * std::pow(gamma_, static_cast<double>(hits)); });
}
std::optional<std::vector<double>> MultiStepLR::closed_form_lr() {
  const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  return map_lrs(base_lrs_, [&](double b, size_t) { return b * std::pow(gamma_, static_cast<double>(passed)); });
}

// ---- ExponentialLR --------------------------------------------------------------------------------
ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma) : LRScheduler(optimizer), gamma_(gamma) {
  initial_step();
}
std::vector<double> ExponentialLR::get_lr() {
  if (last_epoch_ == 0) return current_lrs();
  return map_lrs(current_lrs(), [&](double lr, size_t) { return lr * gamma_; });
}
std::optional<std::vector<double>> ExponentialLR::closed_form_lr() {
  return map_lrs(base_lrs_, [&](double b, size_t) { return b * std::pow(gamma_, static_cast<double>(last_epoch_)); });
}

// ---- CosineAnnealingLR ----------------------------------------------------------------------------
CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
  EMBER_CHECK(T_max > 0, "CosineAnnealingLR", "T_max must be positive, got ", T_max);
  initial_step();
}
std::vector<double> CosineAnnealingLR::get_lr() {
  constexpr double pi = std::numbers::pi;
  const double T = static_cast<double>(T_max_), e = static_cast<double>(last_epoch_);
  if (last_epoch_ == 0) return current_lrs();
  if (py_mod(last_epoch_ - 1 - T_max_, 2 * T_max_) == 0) {
    return map_lrs(current_lrs(),
                   [&](double lr, size_t i) { return lr + (base_lrs_[i] - eta_min_) * (1 - std::cos(pi / T)) / 2; });
  }
  return map_lrs(current_lrs(), [&](double lr, size_t) {
    return (1 + std::cos(pi * e / T)) / (1 + std::cos(pi * (e - 1) / T)) * (lr - eta_min_) + eta_min_;
  });
}
std::optional<std::vector<double>> CosineAnnealingLR::closed_form_lr() {
  const double e = static_cast<double>(last_epoch_), T = static_cast<double>(T_max_);
  return map_lrs(base_lrs_, [&](double b, size_t) {
    return eta_min_ + (b - eta_min_) * (1 + std::cos(std::numbers::pi * e / T)) / 2;
  });
}

// ---- LinearLR -------------------------------------------------------------------------------------
LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, int64_t total_iters)
    : LRScheduler(optimizer), start_factor_(start_factor), end_factor_(end_factor), total_iters_(total_iters) {
  EMBER_CHECK(start_factor > 0 && start_factor <= 1, "LinearLR",
              "Starting multiplicative factor expected to be greater than 0 and less or equal to 1, got ",
              start_factor);
  EMBER_CHECK(end_factor >= 0 && end_factor <= 1, "LinearLR",
              "Ending multiplicative factor expected to be between 0 and 1, got ", end_factor);
  initial_step();
}
std::vector<double> LinearLR::get_lr() {
  if (last_epoch_ == 0) return map_lrs(current_lrs(), [&](double lr, size_t) { return lr * start_factor_; });
  if (last_epoch_ > total_iters_) return current_lrs();
  const double delta = end_factor_ - start_factor_;
  return map_lrs(current_lrs(), [&](double lr, size_t) {
    return lr * (1 + delta / (static_cast<double>(total_iters_) * start_factor_ +
                              static_cast<double>(last_epoch_ - 1) * delta));
  });
}
std::optional<std::vector<double>> LinearLR::closed_form_lr() {
  const double t = static_cast<double>(std::min(total_iters_, last_epoch_)) / static_cast<double>(total_iters_);
  return map_lrs(base_lrs_, [&](double b, size_t) { return b * (start_factor_ + (end_factor_ - start_factor_) * t); });
}

// ---- LambdaLR -------------------------------------------------------------------------------------
LambdaLR::LambdaLR(Optimizer& optimizer, Lambda lr_lambda)
    : LambdaLR(optimizer, std::vector<Lambda>(optimizer.param_groups().size(), lr_lambda)) {}
LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<Lambda> lr_lambdas)
    : LRScheduler(optimizer), lambdas_(std::move(lr_lambdas)) {
  EMBER_CHECK(lambdas_.size() == base_lrs_.size(), "LambdaLR", "Expected ", base_lrs_.size(), " lr_lambdas, but got ",
              lambdas_.size());
  initial_step();
}
std::vector<double> LambdaLR::get_lr() {
  return map_lrs(base_lrs_, [&](double b, size_t i) { return b * lambdas_[i](last_epoch_); });
}

// ---- OneCycleLR -----------------------------------------------------------------------------------
OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps, OneCycleLROptions options)
    : OneCycleLR(optimizer, std::vector<double>(optimizer.param_groups().size(), max_lr), total_steps,
                 std::move(options)) {}

// The momentum-like hyperparameter of a group: SGD's/RMSprop's momentum or Adam's beta1.
static double* momentum_of(OptimizerOptions& o) {
  for (const OptimizerField& f : o.fields())
    if (f.number && (std::string(f.name) == "momentum" || std::string(f.name) == "beta1")) return f.number;
  return nullptr;
}

OneCycleLR::OneCycleLR(Optimizer& optimizer, std::vector<double> max_lrs, int64_t total_steps,
                       OneCycleLROptions options)
    : LRScheduler(optimizer), total_steps_(total_steps), options_(std::move(options)) {
  constexpr const char* op = "OneCycleLR";
  auto& groups = optimizer_.param_groups();
  EMBER_CHECK(total_steps > 0, op, "Expected positive integer total_steps, but got ", total_steps);
  EMBER_CHECK(max_lrs.size() == groups.size(), op, "expected ", groups.size(), " values for max_lr, got ",
              max_lrs.size());
  const double pct = options_.pct_start();
  EMBER_CHECK(pct >= 0 && pct <= 1, op, "Expected float between 0 and 1 pct_start, but got ", pct);
  EMBER_CHECK(options_.anneal_strategy() == "cos" || options_.anneal_strategy() == "linear", op,
              "anneal_strategy must by one of 'cos' or 'linear', instead got ", options_.anneal_strategy());
  const double T = static_cast<double>(total_steps);
  if (options_.three_phase()) {
    phases_ = {{pct * T - 1, 0, 1, false, false}, {2 * pct * T - 2, 1, 0, true, false}, {T - 1, 0, 2, true, true}};
  } else {
    phases_ = {{pct * T - 1, 0, 1, false, false}, {T - 1, 1, 2, true, false}};
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    const double initial = max_lrs[i] / options_.div_factor();
    group_lrs_.push_back({initial, max_lrs[i], initial / options_.final_div_factor()});
    groups[i].options().set_lr(initial);
    // PyTorch replaces the group's initial_lr with the cycle's start (last_epoch == -1).
    groups[i].initial_lr() = initial;
    base_lrs_[i] = initial;
    if (options_.cycle_momentum()) {
      double* m = momentum_of(groups[i].options());
      EMBER_CHECK(m, op, "optimizer must support momentum or beta1 with `cycle_momentum` option enabled");
      *m = options_.max_momentum();
    }
  }
  initial_step();
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (options_.anneal_strategy() == "cos") return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1);
  return (end - start) * pct + start;
}

std::vector<double> OneCycleLR::get_lr() {
  EMBER_CHECK(last_epoch_ <= total_steps_, "OneCycleLR", "Tried to step ", last_epoch_,
              " times. The specified number of total steps is ", total_steps_);
  const double step = static_cast<double>(last_epoch_);
  auto& groups = optimizer_.param_groups();
  std::vector<double> lrs(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    double start_step = 0;
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& ph = phases_[i];
      if (step <= ph.end_step || i + 1 == phases_.size()) {
        const double pct = (step - start_step) / (ph.end_step - start_step);
        lrs[g] = anneal(group_lrs_[g][ph.start_lr], group_lrs_[g][ph.end_lr], pct);
        if (options_.cycle_momentum()) {
          const double lo = options_.base_momentum(), hi = options_.max_momentum();
          const double m = ph.momentum_flat ? hi : ph.momentum_up ? anneal(lo, hi, pct) : anneal(hi, lo, pct);
          *momentum_of(groups[g].options()) = m;
        }
        break;
      }
      start_step = ph.end_step;
    }
  }
  return lrs;
}

// ---- SequentialLR ---------------------------------------------------------------------------------
SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<LRScheduler*> schedulers, std::vector<int64_t> milestones)
    : LRScheduler(optimizer), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  constexpr const char* op = "SequentialLR";
  EMBER_CHECK(!schedulers_.empty(), op, "expects at least one scheduler");
  EMBER_CHECK(milestones_.size() + 1 == schedulers_.size(), op,
              "Sequential Schedulers expects number of schedulers provided to be one more than the number of "
              "milestone points, but got number of schedulers ",
              schedulers_.size(), " and the number of milestones to be equal to ", milestones_.size());
  for (size_t i = 0; i < schedulers_.size(); ++i)
    EMBER_CHECK(&schedulers_[i]->optimizer_ == &optimizer_, op,
                "Sequential Schedulers expects all schedulers to belong to the same optimizer, but got scheduler ", i,
                " with a different one");
  last_epoch_ = 0;
  // Undo the schedulers' own initial steps, then take the first one's again.
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(*groups[i].initial_lr());
  for (LRScheduler* s : schedulers_)
    if (s->stepped_on_construction_) --s->last_epoch_;
  schedulers_[0]->initial_step();
  last_lr_ = schedulers_[0]->get_last_lr();
}

void SequentialLR::step() {
  ++last_epoch_;
  const size_t idx = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  LRScheduler* s = schedulers_[idx];
  if (idx > 0 && milestones_[idx - 1] == last_epoch_) {
    s->step_to(0);
  } else {
    s->step();
  }
  last_lr_ = s->get_last_lr();
}

}  // namespace ember::optim
