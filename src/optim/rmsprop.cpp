// RMSprop on the multi-tensor ops, libtorch's update: a running mean of squared gradients
// (centered: minus the squared running mean), optionally through a momentum buffer.
#include "ember/optim/rmsprop.h"

#include "dispatch/dispatch.h"
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/foreach.h"

namespace ember::optim {

std::vector<OptimizerField> RMSpropOptions::fields() {
  return {{"lr", &lr_},
          {"alpha", &alpha_},
          {"eps", &eps_},
          {"weight_decay", &weight_decay_},
          {"momentum", &momentum_},
          {"centered", nullptr, &centered_}};
}
std::vector<StateField> RMSpropParamState::fields() {
  return {{"step", nullptr, &step_},
          {"square_avg", &square_avg_},
          {"momentum_buffer", &momentum_buffer_},
          {"grad_avg", &grad_avg_}};
}

namespace {
void check_options(const RMSpropOptions& o) {
  constexpr const char* op = "RMSprop";
  EMBER_CHECK(o.lr() >= 0, op, "Invalid learning rate: ", o.lr());
  EMBER_CHECK(o.eps() >= 0, op, "Invalid epsilon value: ", o.eps());
  EMBER_CHECK(o.momentum() >= 0, op, "Invalid momentum value: ", o.momentum());
  EMBER_CHECK(o.weight_decay() >= 0, op, "Invalid weight_decay value: ", o.weight_decay());
  EMBER_CHECK(o.alpha() >= 0, op, "Invalid alpha value: ", o.alpha());
}
std::vector<Tensor> field(const std::vector<OptimizerParamState*>& states, Tensor& (RMSpropParamState::*get)()) {
  std::vector<Tensor> out;
  out.reserve(states.size());
  for (OptimizerParamState* s : states) out.push_back((static_cast<RMSpropParamState*>(s)->*get)());
  return out;
}
}  // namespace

RMSprop::RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<RMSpropOptions>(defaults)) {
  check_options(defaults);
}

std::unique_ptr<OptimizerParamState> RMSprop::make_state(const Tensor& p, const OptimizerOptions& group) const {
  const auto& o = static_cast<const RMSpropOptions&>(group);
  auto s = std::make_unique<RMSpropParamState>();
  const TensorOptions like = TensorOptions().dtype(p.dtype());
  s->square_avg(zeros(p.sizes(), like));
  if (o.momentum() > 0) s->momentum_buffer(zeros(p.sizes(), like));
  if (o.centered()) s->grad_avg(zeros(p.sizes(), like));
  return s;
}

Tensor RMSprop::step(LossClosure closure) {
  const dispatch::ObservedRange range("Optimizer.step#RMSprop.step", RangeKind::UserScope);  // PyTorch's name
  EMBER_CHECK(!dispatch::capturing(), "RMSprop", "cannot be captured in a graph: its step counts are host values a replay would not advance (SGD and fused Adam/AdamW can)");
  Tensor loss = evaluate(closure);
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups_) {
    const auto& o = static_cast<const RMSpropOptions&>(group.options());
    check_options(o);
    for (Batch& b : batches(group)) {
      for (OptimizerParamState* s : b.states) {
        auto& st = *static_cast<RMSpropParamState*>(s);
        ++st.step();
        // options changed after the first step (or a loaded state) may need buffers
        if (o.momentum() > 0 && !st.momentum_buffer().defined()) st.momentum_buffer(zeros_like(st.square_avg()));
        if (o.centered() && !st.grad_avg().defined()) st.grad_avg(zeros_like(st.square_avg()));
      }
      std::vector<Tensor> g = o.weight_decay() != 0 ? foreach_add(b.grads, b.params, o.weight_decay()) : b.grads;
      std::vector<Tensor> square_avg = field(b.states, &RMSpropParamState::square_avg);
      foreach_mul_(square_avg, o.alpha());
      foreach_addcmul_(square_avg, g, g, 1 - o.alpha());
      std::vector<Tensor> avg;
      if (o.centered()) {
        std::vector<Tensor> grad_avg = field(b.states, &RMSpropParamState::grad_avg);
        foreach_mul_(grad_avg, o.alpha());
        foreach_add_(grad_avg, g, 1 - o.alpha());
        avg = foreach_addcmul(square_avg, grad_avg, grad_avg, -1);
        foreach_sqrt_(avg);
      } else {
        avg = foreach_sqrt(square_avg);
      }
      foreach_add_(avg, o.eps());
      if (o.momentum() > 0) {
        std::vector<Tensor> buf = field(b.states, &RMSpropParamState::momentum_buffer);
        foreach_mul_(buf, o.momentum());
        foreach_addcdiv_(buf, g, avg);
        foreach_add_(b.params, buf, -o.lr());
      } else {
        foreach_addcdiv_(b.params, g, avg, -o.lr());
      }
    }
  }
  return loss;
}

}  // namespace ember::optim
