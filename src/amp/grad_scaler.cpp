// GradScaler with PyTorch's semantics (torch/cuda/amp/grad_scaler.py), its two kernels being the
// multi-tensor ops _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_.
#include "ember/amp.h"

#include "dispatch/dispatch.h"
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/foreach.h"
#include "ember/optim/adamw.h"
#include "ember/optim/sgd.h"
#include "ember/pointwise.h"
#include "ops/foreach.h"

namespace ember::amp {

GradScaler::GradScaler(GradScalerOptions options) : options_(options) {
  if (!is_enabled()) return;
  EMBER_CHECK(options_.growth_factor() > 1.0, "GradScaler", "growth_factor should be > 1, got ",
              options_.growth_factor());
  EMBER_CHECK(options_.backoff_factor() < 1.0, "GradScaler", "backoff_factor should be < 1, got ",
              options_.backoff_factor());
  EMBER_CHECK(options_.growth_interval() > 0, "GradScaler", "growth_interval should be > 0, got ",
              options_.growth_interval());
  scale_ = full({1}, options_.init_scale(), kFloat);
  growth_tracker_ = zeros({1}, kInt);
}

Tensor GradScaler::scale(const Tensor& outputs) const {
  if (!is_enabled()) return outputs;
  return outputs * scale_;
}

std::vector<Tensor> GradScaler::scale(const std::vector<Tensor>& outputs) const {
  std::vector<Tensor> scaled;
  scaled.reserve(outputs.size());
  for (const Tensor& t : outputs) scaled.push_back(scale(t));
  return scaled;
}

void GradScaler::unscale_(optim::Optimizer& optimizer) {
  if (!is_enabled()) return;
  OptimizerState& state = per_optimizer_[&optimizer];
  EMBER_CHECK(state.stage != Stage::kUnscaled, "unscale_",
              "unscale_() has already been called on this optimizer since the last update().");
  EMBER_CHECK(state.stage != Stage::kStepped, "unscale_", "unscale_() is being called after step().");
  std::vector<Tensor> grads;
  for (const optim::OptimizerParamGroup& group : optimizer.param_groups()) {
    for (const Tensor& p : group.params()) {
      const Tensor& g = p.grad();
      if (!g.defined()) continue;
      EMBER_CHECK(is_floating_type(g.dtype()), "unscale_", "expected floating point gradients, got ", g.dtype(),
                  " for a parameter of shape ", p.sizes());
      grads.push_back(g);
    }
  }
  // 1 / scale in float64, then rounded to float32, as PyTorch; ops rather than a host read, so
  // that a captured graph unscales by each replay's scale.
  const Tensor inv_scale = scale_.to(kDouble).reciprocal().to(kFloat);
  state.found_inf = zeros({1}, kFloat);
  _amp_foreach_non_finite_check_and_unscale_(grads, state.found_inf, inv_scale);
  state.stage = Stage::kUnscaled;
}

bool GradScaler::step(optim::Optimizer& optimizer) {
  if (!is_enabled()) {
    optimizer.step();
    return true;
  }
  OptimizerState& state = per_optimizer_[&optimizer];
  EMBER_CHECK(state.stage != Stage::kStepped, "step", "step() has already been called since the last update().");
  if (state.stage == Stage::kReady) unscale_(optimizer);
  state.stage = Stage::kStepped;
  if (dispatch::capturing()) {
    // Each replay decides on its own gradients: the optimizer's kernels read found_inf when they
    // run and skip themselves on inf/NaN (no host read). Whether it stepped is not known here.
    EMBER_CHECK(dynamic_cast<optim::Adam*>(&optimizer) || dynamic_cast<optim::AdamW*>(&optimizer) ||
                    dynamic_cast<optim::SGD*>(&optimizer),
                "step",
                "in a captured graph, GradScaler can skip the step of SGD, Adam and AdamW only (their kernels read "
                "the inf check); other optimizers would need a host read of it");
    const detail::SkipStepOnInf skip(state.found_inf);
    optimizer.step();
    return true;
  }
  if (state.found_inf.item<float>() != 0) return false;
  optimizer.step();
  return true;
}

void GradScaler::update() {
  if (!is_enabled()) return;
  Tensor found_inf = zeros({1}, kFloat);
  bool any = false;
  for (const auto& [optimizer, state] : per_optimizer_) {
    if (!state.found_inf.defined()) continue;
    found_inf.add_(state.found_inf);
    any = true;
  }
  EMBER_CHECK(any, "update", "No inf checks were recorded prior to update.");
  _amp_update_scale_(scale_, growth_tracker_, found_inf, options_.growth_factor(), options_.backoff_factor(),
                     options_.growth_interval());
  per_optimizer_.clear();
}

void GradScaler::update(double new_scale) {
  if (!is_enabled()) return;
  scale_.fill_(new_scale);
  per_optimizer_.clear();
}

double GradScaler::get_scale() const { return is_enabled() ? scale_.item<double>() : 1.0; }

OrderedDict<std::string, double> GradScaler::state_dict() const {
  OrderedDict<std::string, double> dict;
  if (!is_enabled()) return dict;
  dict.insert("scale", get_scale());
  dict.insert("growth_factor", options_.growth_factor());
  dict.insert("backoff_factor", options_.backoff_factor());
  dict.insert("growth_interval", static_cast<double>(options_.growth_interval()));
  dict.insert("_growth_tracker", growth_tracker_.item<double>());
  return dict;
}

void GradScaler::load_state_dict(const OrderedDict<std::string, double>& dict) {
  if (!is_enabled()) return;
  EMBER_CHECK(!dict.is_empty(), "load_state_dict",
              "The source state dict is empty, possibly because it was saved from a disabled instance of GradScaler.");
  for (const char* key : {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"})
    EMBER_CHECK(dict.contains(key), "load_state_dict", "the state dict has no \"", key, "\"");
  options_.init_scale(dict["scale"]);
  options_.growth_factor(dict["growth_factor"]);
  options_.backoff_factor(dict["backoff_factor"]);
  options_.growth_interval(static_cast<int64_t>(dict["growth_interval"]));
  scale_.fill_(dict["scale"]);
  growth_tracker_.fill_(dict["_growth_tracker"]);
}

}  // namespace ember::amp
