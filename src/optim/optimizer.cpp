// The optimizer base: parameter groups, state and zero_grad (the state dict: optimizer_state.cpp).
#include "ember/optim/optimizer.h"

#include <cxxabi.h>

#include <charconv>
#include <optional>
#include <string>
#include <typeinfo>

#include "dispatch/dispatch.h"
#include "ember/autograd.h"

namespace ember::optim {

OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}
OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
    : params_(std::move(params)), options_(std::move(options)) {}
OptimizerParamGroup::OptimizerParamGroup(const OptimizerParamGroup& other)
    : params_(other.params_),
      options_(other.options_ ? other.options_->clone() : nullptr),
      initial_lr_(other.initial_lr_) {}
OptimizerParamGroup& OptimizerParamGroup::operator=(const OptimizerParamGroup& other) {
  if (this != &other) {
    params_ = other.params_;
    options_ = other.options_ ? other.options_->clone() : nullptr;
    initial_lr_ = other.initial_lr_;
  }
  return *this;
}
OptimizerOptions& OptimizerParamGroup::options() {
  EMBER_CHECK(options_, "OptimizerParamGroup", "the group has no options");
  return *options_;
}
const OptimizerOptions& OptimizerParamGroup::options() const {
  EMBER_CHECK(options_, "OptimizerParamGroup", "the group has no options");
  return *options_;
}

// ---- libtorch's defaults, for options and states of an optimizer written for libtorch ----
std::unique_ptr<OptimizerOptions> OptimizerOptions::clone() const {
  ::ember::detail::fail("OptimizerOptions::clone",
               "not implemented: derive the options from OptimizerCloneableOptions<YourOptions> "
               "(as libtorch asks) to inherit clone()");
}
double OptimizerOptions::get_lr() const {
  ::ember::detail::fail("OptimizerOptions::get_lr",
               "not overridden: an options class that schedulers or the state dict read the "
               "learning rate of must override get_lr() and set_lr()");
}
void OptimizerOptions::set_lr(const double /*lr*/) {
  ::ember::detail::fail("OptimizerOptions::set_lr",
               "not overridden: an options class that schedulers or the state dict set the "
               "learning rate of must override get_lr() and set_lr()");
}

std::unique_ptr<OptimizerParamState> OptimizerParamState::clone() const {
  ::ember::detail::fail("OptimizerParamState::clone",
               "not implemented: derive the state from "
               "OptimizerCloneableParamState<YourState> (as libtorch asks) to inherit clone()");
}

std::string OptimizerStateMap::key(const TensorImpl* p) {
  // as `std::ostream << (const void*)p` prints it, which libtorch's c10::guts::to_string(p) uses
  char buf[2 + 16 + 1] = "0x";
  const auto r = std::to_chars(buf + 2, buf + sizeof buf, reinterpret_cast<uintptr_t>(p), 16);
  return p ? std::string(buf, r.ptr) : std::string("0");
}

Optimizer::Optimizer(std::vector<OptimizerParamGroup> param_groups, std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  for (const OptimizerParamGroup& g : param_groups) add_param_group(g);
}
Optimizer::Optimizer(std::vector<Tensor> parameters, std::unique_ptr<OptimizerOptions> defaults)
    : Optimizer(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(parameters))}, std::move(defaults)) {}

void Optimizer::add_parameters(const std::vector<Tensor>& parameters) {
  EMBER_CHECK(!param_groups_.empty(), "add_parameters", "the optimizer has no parameter group to add to");
  std::vector<Tensor>& params = param_groups_[0].params();
  params.insert(params.end(), parameters.begin(), parameters.end());
}

std::unique_ptr<OptimizerParamState> Optimizer::make_state(const Tensor& /*p*/,
                                                           const OptimizerOptions& /*group*/) const {
  ::ember::detail::fail("Optimizer",
               "this optimizer makes its parameters' state itself (it overrides neither make_state nor uses "
               "Ember's batches())");
}


void Optimizer::add_param_group(const OptimizerParamGroup& group) {
  constexpr const char* op = "add_param_group";
  for (size_t i = 0; i < group.params().size(); ++i) {
    const Tensor& p = group.params()[i];
    EMBER_CHECK(p.defined(), op, "parameter ", i, " of the group is undefined");
    EMBER_CHECK(p.is_leaf(), op, "can't optimize a non-leaf Tensor (parameter ", i, ")");
    for (const OptimizerParamGroup& g : param_groups_)
      for (const Tensor& q : g.params())
        EMBER_CHECK(!q.is_same(p), op, "some parameters appear in more than one parameter group (parameter ", i,
                    " of shape ", p.sizes(), ")");
  }
  OptimizerParamGroup g(group.params(), group.has_options() ? group.options().clone() : defaults_->clone());
  param_groups_.push_back(std::move(g));
}

// PyTorch's range around zero_grad, "Optimizer.zero_grad#Adam.zero_grad": named by the optimizer's
// class (its name without namespaces), and only when an observer (the profiler) sees it.
namespace {
std::string profiler_name(const Optimizer& o, const char* method) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(typeid(o).name(), nullptr, nullptr, &status);
  std::string cls = status == 0 && demangled ? demangled : typeid(o).name();
  std::free(demangled);
  if (const size_t colon = cls.rfind("::"); colon != std::string::npos) cls.erase(0, colon + 2);
  return std::string("Optimizer.") + method + "#" + cls + "." + method;
}
}  // namespace

void Optimizer::zero_grad(bool set_to_none) {
  std::optional<dispatch::ObservedRange> range;
  if (dispatch::observing())
    range.emplace(profiler_name(*this, "zero_grad").c_str(), RangeKind::UserScope);
  for (OptimizerParamGroup& g : param_groups_) {
    for (Tensor& p : g.params()) {
      Tensor& grad = p.mutable_grad();
      if (!grad.defined()) continue;
      if (set_to_none) {
        grad.reset();
      } else {
        if (grad.grad_fn()) grad = grad.detach();
        grad.requires_grad_(false);
        grad.zero_();
      }
    }
  }
}

size_t Optimizer::size() const {
  size_t n = 0;
  for (const OptimizerParamGroup& g : param_groups_) n += g.params().size();
  return n;
}

std::vector<Optimizer::Batch> Optimizer::batches(const OptimizerParamGroup& group) {
  std::vector<Batch> out;
  std::vector<ScalarType> dtypes;
  for (const Tensor& p : group.params()) {
    const Tensor& g = p.grad();
    if (!g.defined()) continue;
    size_t k = 0;
    while (k < dtypes.size() && dtypes[k] != p.dtype()) ++k;
    if (k == dtypes.size()) {
      dtypes.push_back(p.dtype());
      out.emplace_back();
    }
    std::unique_ptr<OptimizerParamState>& s = state_[p.unsafeGetTensorImpl()];
    if (!s) {
      EMBER_CHECK(!dispatch::capturing(), "optimizer", "a parameter's state is made at its first step: run one "
                  "step before capturing the optimizer in a graph (warm-up)");
      s = make_state(p, group.options());
    }
    out[k].params.push_back(p);
    out[k].grads.push_back(g);
    out[k].states.push_back(s.get());
  }
  return out;
}

Tensor Optimizer::evaluate(const LossClosure& closure) {
  if (!closure) return {};
  AutoGradMode enable(true);
  return closure();
}


}  // namespace ember::optim
