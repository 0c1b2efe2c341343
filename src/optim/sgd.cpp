// SGD on the multi-tensor ops: libtorch's update (momentum buffer starts as a copy of the first
// gradient; nesterov looks ahead along it), with PyTorch's maximize negating the gradient first.
#include "ember/optim/sgd.h"

#include "dispatch/dispatch.h"
#include "ember/autograd.h"
#include "ember/foreach.h"
#include "optim/slices.h"

namespace ember::optim {

std::vector<OptimizerField> SGDOptions::fields() {
  return {{"lr", &lr_},
          {"momentum", &momentum_},
          {"dampening", &dampening_},
          {"weight_decay", &weight_decay_},
          {"nesterov", nullptr, &nesterov_},
          {"maximize", nullptr, &maximize_}};
}

namespace {
void check_options(const SGDOptions& o) {
  constexpr const char* op = "SGD";
  EMBER_CHECK(o.lr() >= 0, op, "Invalid learning rate: ", o.lr());
  EMBER_CHECK(o.momentum() >= 0, op, "Invalid momentum value: ", o.momentum());
  EMBER_CHECK(o.weight_decay() >= 0, op, "Invalid weight_decay value: ", o.weight_decay());
  EMBER_CHECK(!o.nesterov() || (o.momentum() > 0 && o.dampening() == 0), op,
              "Nesterov momentum requires a momentum and zero dampening");
}

// libtorch's update of a list of parameters with gradients.
void update(const SGDOptions& o, const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
            const std::vector<OptimizerParamState*>& states) {
  std::vector<Tensor> d_p = o.maximize() ? foreach_neg(grads) : grads;
  if (o.weight_decay() != 0) d_p = foreach_add(d_p, params, o.weight_decay());
  if (o.momentum() != 0) {
    std::vector<Tensor> bufs, grads_of_bufs;
    for (size_t i = 0; i < params.size(); ++i) {
      Tensor& buf = static_cast<SGDParamState*>(states[i])->momentum_buffer();
      if (!buf.defined()) {
        EMBER_CHECK(!dispatch::capturing(), "SGD", "the momentum buffer is made at a parameter's first step: run one "
                    "step before capturing it in a graph (warm-up)");
        buf = d_p[i].clone();
      } else {
        bufs.push_back(buf);
        grads_of_bufs.push_back(d_p[i]);
      }
    }
    if (!bufs.empty()) {
      foreach_mul_(bufs, o.momentum());
      foreach_add_(bufs, grads_of_bufs, 1 - o.dampening());
    }
    std::vector<Tensor> all_bufs;
    for (OptimizerParamState* s : states) all_bufs.push_back(static_cast<SGDParamState*>(s)->momentum_buffer());
    if (o.nesterov()) {
      d_p = foreach_add(d_p, all_bufs, o.momentum());
    } else {
      d_p = std::move(all_bufs);
    }
  }
  foreach_add_(params, d_p, -o.lr());
}
}  // namespace

SGD::SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<SGDOptions>(defaults)) {
  check_options(defaults);
}

std::unique_ptr<OptimizerParamState> SGD::make_state(const Tensor&, const OptimizerOptions&) const {
  return std::make_unique<SGDParamState>();
}

Tensor SGD::step(LossClosure closure) {
  const dispatch::ObservedRange range("Optimizer.step#SGD.step", RangeKind::UserScope);  // PyTorch's name
  Tensor loss = evaluate(closure);
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups_) {
    const auto& o = static_cast<const SGDOptions&>(group.options());
    check_options(o);
    for (Batch& b : batches(group))
      detail::for_each_slice(b.params, [&](size_t begin, size_t end) {
        update(o, detail::slice(b.params, begin, end), detail::slice(b.grads, begin, end),
               detail::slice(b.states, begin, end));
      });
  }
  return loss;
}

}  // namespace ember::optim
