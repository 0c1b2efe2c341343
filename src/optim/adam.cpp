// Adam and AdamW: libtorch's update (bias corrections from each parameter's own step count),
// in one fused kernel pass (the default) or, with fused(false), on the multi-tensor ops.
#include "ember/optim/adam.h"

#include <cmath>

#include "dispatch/dispatch.h"
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/foreach.h"
#include "ember/optim/adamw.h"
#include "ops/foreach.h"
#include "optim/adam_update.h"
#include "optim/slices.h"

namespace ember::optim {

namespace {
std::vector<OptimizerField> adam_fields(double& lr, std::tuple<double, double>& betas, double& eps, double& wd,
                                        bool& amsgrad, bool& maximize, bool& fused) {
  return {{"lr", &lr},
          {"beta1", &std::get<0>(betas)},
          {"beta2", &std::get<1>(betas)},
          {"eps", &eps},
          {"weight_decay", &wd},
          {"amsgrad", nullptr, &amsgrad},
          {"maximize", nullptr, &maximize},
          {"fused", nullptr, &fused}};
}

// The moments are laid out as the parameter (PyTorch's zeros_like(p, preserve_format)), so that a
// channels_last weight, whose gradient the engine also lays out so, stays on the fused update.
std::unique_ptr<OptimizerParamState> new_adam_state(const Tensor& p, bool amsgrad) {
  auto s = std::make_unique<AdamParamState>();
  s->exp_avg(zeros_like(p));
  s->exp_avg_sq(zeros_like(p));
  if (amsgrad) s->max_exp_avg_sq(zeros_like(p));
  return s;
}

// The fused kernel walks each tensor's memory as one flat array: it needs the parameter dense and
// every operand laid out as it (any dense layout, contiguous or channels_last).
bool fusable(const Tensor& p, const Tensor& g, const AdamParamState& s, bool amsgrad) {
  auto ok = [&](const Tensor& t) {
    return t.dtype() == p.dtype() && t.sizes() == p.sizes() && t.strides() == p.strides();
  };
  return is_floating_type(p.dtype()) && p.is_non_overlapping_and_dense() && ok(g) && ok(s.exp_avg()) &&
         ok(s.exp_avg_sq()) && (!amsgrad || ok(s.max_exp_avg_sq()));
}

std::vector<Tensor> field(const std::vector<OptimizerParamState*>& states, Tensor& (AdamParamState::*get)()) {
  std::vector<Tensor> out;
  out.reserve(states.size());
  for (OptimizerParamState* s : states) out.push_back((static_cast<AdamParamState*>(s)->*get)());
  return out;
}
}  // namespace

std::vector<OptimizerField> AdamOptions::fields() {
  return adam_fields(lr_, betas_, eps_, weight_decay_, amsgrad_, maximize_, fused_);
}
std::vector<OptimizerField> AdamWOptions::fields() {
  return adam_fields(lr_, betas_, eps_, weight_decay_, amsgrad_, maximize_, fused_);
}
std::vector<StateField> AdamParamState::fields() {
  return {{"step", nullptr, &step_},
          {"exp_avg", &exp_avg_},
          {"exp_avg_sq", &exp_avg_sq_},
          {"max_exp_avg_sq", &max_exp_avg_sq_}};
}

namespace detail {

void check_adam_options(const char* op, double lr, double eps, double beta1, double beta2, double weight_decay) {
  EMBER_CHECK(lr >= 0, op, "Invalid learning rate: ", lr);
  EMBER_CHECK(eps >= 0, op, "Invalid epsilon value: ", eps);
  EMBER_CHECK(beta1 >= 0 && beta1 < 1, op, "Invalid beta parameter at index 0: ", beta1);
  EMBER_CHECK(beta2 >= 0 && beta2 < 1, op, "Invalid beta parameter at index 1: ", beta2);
  EMBER_CHECK(weight_decay >= 0, op, "Invalid weight_decay value: ", weight_decay);
}

// The update through the multi-tensor ops, as libtorch's Adam writes it per parameter.
void adam_foreach(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<OptimizerParamState*>& states, const kernels::AdamHyper& h,
                  const std::vector<Scalar>& neg_step_size, const std::vector<Scalar>& bias2_sqrt) {
  std::vector<Tensor> g = h.maximize ? foreach_neg(grads) : grads;
  if (h.weight_decay != 0) {
    if (h.decoupled) {
      foreach_mul_(params, 1 - h.lr * h.weight_decay);
    } else {
      g = foreach_add(g, params, h.weight_decay);
    }
  }
  std::vector<Tensor> exp_avg = field(states, &AdamParamState::exp_avg);
  std::vector<Tensor> exp_avg_sq = field(states, &AdamParamState::exp_avg_sq);
  // exp_avg * beta1 + grad * (1 - beta1) as one pass (PyTorch's multi-tensor Adam does the same)
  foreach_lerp_(exp_avg, g, 1 - h.beta1);
  foreach_mul_(exp_avg_sq, h.beta2);
  foreach_addcmul_(exp_avg_sq, g, g, 1 - h.beta2);
  std::vector<Tensor> denom;
  if (h.amsgrad) {
    std::vector<Tensor> max_sq = field(states, &AdamParamState::max_exp_avg_sq);
    foreach_maximum_(max_sq, exp_avg_sq);
    denom = foreach_sqrt(max_sq);
  } else {
    denom = foreach_sqrt(exp_avg_sq);
  }
  // step * m / (sqrt(v) / c + eps) == (step * c) * m / (sqrt(v) + eps * c): one pass fewer
  const size_t n = params.size();
  std::vector<Scalar> eps(n), neg_step(n);
  for (size_t i = 0; i < n; ++i) {
    eps[i] = h.eps * bias2_sqrt[i].toDouble();
    neg_step[i] = neg_step_size[i].toDouble() * bias2_sqrt[i].toDouble();
  }
  foreach_add_(denom, eps);
  foreach_addcdiv_(params, exp_avg, denom, neg_step);
}

// A parameter's next step count and its step size and bias correction (lr / (1 - beta1^t) and
// sqrt(1 - beta2^t)).
void advance(AdamParamState& s, const kernels::AdamHyper& h, double& step_size, double& bias2_sqrt) {
  const int64_t step = ++s.step();
  const double bias1 = 1 - std::pow(h.beta1, static_cast<double>(step));
  const double bias2 = 1 - std::pow(h.beta2, static_cast<double>(step));
  step_size = h.lr / bias1;
  bias2_sqrt = std::sqrt(bias2);
}

namespace {
// The fused step: each parameter's step count advances and gives its step sizes, then one kernel
// pass; nothing when *skip (GradScaler found inf or NaN gradients: ops/foreach.h). A captured
// graph's replay runs it again, advancing the counts as an eager step would.
void fused_step(std::vector<kernels::ForeachItem>& items, const std::vector<AdamParamState*>& st,
                const kernels::AdamHyper& h, const float* skip, ScalarType dtype) {
  if (skip && *skip != 0) return;
  for (size_t i = 0; i < st.size(); ++i) advance(*st[i], h, items[i].s[0], items[i].s[1]);
  kernels::fused_adam_kernel(dtype, items.data(), static_cast<int64_t>(items.size()), h);
}
}  // namespace

void adam_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                 const std::vector<OptimizerParamState*>& states, const kernels::AdamHyper& h, bool fused) {
  const size_t n = params.size();
  const bool capturing = dispatch::capturing();
  bool all_fusable = fused;
  for (size_t i = 0; i < n; ++i) {
    auto& s = *static_cast<AdamParamState*>(states[i]);
    if (h.amsgrad && !s.max_exp_avg_sq().defined()) {
      EMBER_CHECK(!capturing, "Adam", "amsgrad's max_exp_avg_sq is made at a parameter's first step: run one step "
                  "before capturing it in a graph (warm-up)");
      s.max_exp_avg_sq(zeros_like(s.exp_avg_sq()));
    }
    all_fusable = all_fusable && fusable(params[i], grads[i], s, h.amsgrad);
  }
  EMBER_CHECK(all_fusable || !capturing, "Adam",
              "only the fused update can be captured in a graph (its step sizes are computed again at each replay; "
              "the multi-tensor path would keep this step's): use fused(true) with dense parameters of one "
              "floating dtype, their gradients and state laid out as they are");
  if (!all_fusable) {
    // Per-parameter step sizes: a loaded state dict may give parameters different step counts.
    std::vector<Scalar> neg_step_size(n), bias2_sqrt(n);
    for (size_t i = 0; i < n; ++i) {
      double step_size = 0, b2 = 0;
      advance(*static_cast<AdamParamState*>(states[i]), h, step_size, b2);
      neg_step_size[i] = -step_size;
      bias2_sqrt[i] = b2;
    }
    for_each_slice(params, [&](size_t b, size_t e) {
      adam_foreach(slice(params, b, e), slice(grads, b, e), slice(states, b, e), h, slice(neg_step_size, b, e),
                   slice(bias2_sqrt, b, e));
    });
    return;
  }
  std::vector<kernels::ForeachItem> items(n);
  std::vector<AdamParamState*> st(n);
  for (size_t i = 0; i < n; ++i) {
    st[i] = static_cast<AdamParamState*>(states[i]);
    kernels::ForeachItem& it = items[i];
    it.data[0] = static_cast<char*>(params[i].data_ptr());
    it.data[1] = static_cast<char*>(grads[i].data_ptr());
    it.data[2] = static_cast<char*>(st[i]->exp_avg().data_ptr());
    it.data[3] = static_cast<char*>(st[i]->exp_avg_sq().data_ptr());
    it.data[4] = h.amsgrad ? static_cast<char*>(st[i]->max_exp_avg_sq().data_ptr()) : nullptr;
    it.numel = params[i].numel();
  }
  const Tensor* found_inf = ::ember::detail::SkipStepOnInf::found_inf();
  const float* skip = found_inf ? found_inf->data_ptr<float>() : nullptr;
  const ScalarType dtype = params[0].dtype();
  fused_step(items, st, h, skip, dtype);
  auto for_each_written = [&](const auto& f) {
    for (size_t i = 0; i < n; ++i) {
      f(params[i]);
      f(st[i]->exp_avg());
      f(st[i]->exp_avg_sq());
      if (h.amsgrad) f(st[i]->max_exp_avg_sq());
    }
  };
  for_each_written([](const Tensor& t) { t.impl()->storage()->bump_version(); });
  if (capturing) {
    std::vector<Tensor> writes;
    for_each_written([&](const Tensor& t) { writes.push_back(t); });
    std::vector<Tensor> reads(grads);
    reads.insert(reads.end(), writes.begin(), writes.end());
    if (found_inf) reads.push_back(*found_inf);
    dispatch::record_kernel(
        "fused_adam", [items, st, h, skip, dtype]() mutable { fused_step(items, st, h, skip, dtype); }, reads, writes);
  }
}

}  // namespace detail

Adam::Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamOptions>(defaults)) {
  detail::check_adam_options("Adam", defaults.lr(), defaults.eps(), std::get<0>(defaults.betas()),
                             std::get<1>(defaults.betas()), defaults.weight_decay());
}

std::unique_ptr<OptimizerParamState> Adam::make_state(const Tensor& p, const OptimizerOptions& group) const {
  return new_adam_state(p, static_cast<const AdamOptions&>(group).amsgrad());
}

Tensor Adam::step(LossClosure closure) {
  const dispatch::ObservedRange range("Optimizer.step#Adam.step", RangeKind::UserScope);  // PyTorch's name
  Tensor loss = evaluate(closure);
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups_) {
    const auto& o = static_cast<const AdamOptions&>(group.options());
    const auto [beta1, beta2] = o.betas();
    detail::check_adam_options("Adam", o.lr(), o.eps(), beta1, beta2, o.weight_decay());
    const kernels::AdamHyper h{o.lr(), beta1, beta2, o.eps(), o.weight_decay(), o.amsgrad(), o.maximize(), false};
    for (Batch& b : batches(group)) detail::adam_update(b.params, b.grads, b.states, h, o.fused());
  }
  return loss;
}

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamWOptions>(defaults)) {
  detail::check_adam_options("AdamW", defaults.lr(), defaults.eps(), std::get<0>(defaults.betas()),
                             std::get<1>(defaults.betas()), defaults.weight_decay());
}

std::unique_ptr<OptimizerParamState> AdamW::make_state(const Tensor& p, const OptimizerOptions& group) const {
  return new_adam_state(p, static_cast<const AdamWOptions&>(group).amsgrad());
}

Tensor AdamW::step(LossClosure closure) {
  const dispatch::ObservedRange range("Optimizer.step#AdamW.step", RangeKind::UserScope);  // PyTorch's name
  Tensor loss = evaluate(closure);
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups_) {
    const auto& o = static_cast<const AdamWOptions&>(group.options());
    const auto [beta1, beta2] = o.betas();
    detail::check_adam_options("AdamW", o.lr(), o.eps(), beta1, beta2, o.weight_decay());
    const kernels::AdamHyper h{o.lr(), beta1, beta2, o.eps(), o.weight_decay(), o.amsgrad(), o.maximize(), true};
    for (Batch& b : batches(group)) detail::adam_update(b.params, b.grads, b.states, h, o.fused());
  }
  return loss;
}

}  // namespace ember::optim
