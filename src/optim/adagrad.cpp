// Adagrad on the multi-tensor ops, libtorch's update: the learning rate decays with each
// parameter's step count and divides by the root of the accumulated squared gradients.
#include "ember/optim/adagrad.h"

#include "dispatch/dispatch.h"
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/foreach.h"

namespace ember::optim {

std::vector<OptimizerField> AdagradOptions::fields() {
  return {{"lr", &lr_},
          {"lr_decay", &lr_decay_},
          {"weight_decay", &weight_decay_},
          {"initial_accumulator_value", &initial_accumulator_value_},
          {"eps", &eps_}};
}

namespace {
void check_options(const AdagradOptions& o) {
  constexpr const char* op = "Adagrad";
  EMBER_CHECK(o.lr() >= 0, op, "Invalid learning rate: ", o.lr());
  EMBER_CHECK(o.lr_decay() >= 0, op, "Invalid lr_decay value: ", o.lr_decay());
  EMBER_CHECK(o.weight_decay() >= 0, op, "Invalid weight_decay value: ", o.weight_decay());
  EMBER_CHECK(o.initial_accumulator_value() >= 0, op,
              "Invalid initial_accumulator_value value: ", o.initial_accumulator_value());
  EMBER_CHECK(o.eps() >= 0, op, "Invalid epsilon value: ", o.eps());
}
}  // namespace

Adagrad::Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdagradOptions>(defaults)) {
  check_options(defaults);
}

std::unique_ptr<OptimizerParamState> Adagrad::make_state(const Tensor& p, const OptimizerOptions& group) const {
  auto s = std::make_unique<AdagradParamState>();
  s->sum(full(p.sizes(), static_cast<const AdagradOptions&>(group).initial_accumulator_value(),
              TensorOptions().dtype(p.dtype())));
  return s;
}

Tensor Adagrad::step(LossClosure closure) {
  const dispatch::ObservedRange range("Optimizer.step#Adagrad.step", RangeKind::UserScope);  // PyTorch's name
  EMBER_CHECK(!dispatch::capturing(), "Adagrad", "cannot be captured in a graph: its step counts and learning-rate decay are host values a replay would not advance (SGD and fused Adam/AdamW can)");
  Tensor loss = evaluate(closure);
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups_) {
    const auto& o = static_cast<const AdagradOptions&>(group.options());
    check_options(o);
    for (Batch& b : batches(group)) {
      std::vector<Tensor> sums;
      std::vector<Scalar> neg_clr;
      for (OptimizerParamState* s : b.states) {
        auto& st = *static_cast<AdagradParamState*>(s);
        const int64_t step = ++st.step();
        neg_clr.push_back(-o.lr() / (1 + static_cast<double>(step - 1) * o.lr_decay()));
        sums.push_back(st.sum());
      }
      std::vector<Tensor> g = o.weight_decay() != 0 ? foreach_add(b.grads, b.params, o.weight_decay()) : b.grads;
      foreach_addcmul_(sums, g, g, 1.0);
      std::vector<Tensor> std_ = foreach_sqrt(sums);
      foreach_add_(std_, o.eps());
      foreach_addcdiv_(b.params, g, std_, neg_clr);
    }
  }
  return loss;
}

}  // namespace ember::optim
