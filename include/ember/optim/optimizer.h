// The optimizer base, as libtorch's torch::optim::Optimizer: parameter groups with per-group
// options, per-parameter state, zero_grad, step(closure) and a state dict of named tensors and
// numbers (so a checkpoint writer can store it).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/ordered_dict.h"
#include "ember/tensor.h"

namespace ember::serialize {
class OutputArchive;
class InputArchive;
}  // namespace ember::serialize

namespace ember::optim {

// libtorch's TORCH_ARG: `options.name(value)` sets and chains, `options.name()` reads.
#define EMBER_OPTIM_ARG(T, name)                      \
 public:                                              \
  auto name(const T& new_value) -> decltype(*this) {  \
    this->name##_ = new_value;                        \
    return *this;                                     \
  }                                                   \
  const T& name() const { return name##_; }           \
  T& name() { return name##_; }                       \
                                                      \
 private:                                             \
  T name##_

// A named hyperparameter for the state dict, which stores each as a number: a number, a flag
// (0/1), an integer, an optional integer (NaN when unset), or an optional choice among `choices`
// (its index, NaN when unset).
struct OptimizerField {
  const char* name;
  double* number = nullptr;
  bool* flag = nullptr;
  int64_t* integer = nullptr;
  std::optional<int64_t>* optional_integer = nullptr;
  std::optional<std::string>* choice = nullptr;
  std::vector<std::string> choices = {};

  double get() const;
  void set(double value) const;  // checks that a choice is one of `choices`
};

// libtorch's base: an options class of a user's optimizer written for libtorch overrides clone(),
// get_lr()/set_lr() (the schedulers use them) and serialize(); the defaults raise as libtorch's.
// Ember's optimizers list their hyperparameters in fields() (the state dict's numbers); the default
// serialize() writes and reads those fields.
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const;
  virtual double get_lr() const;
  virtual void set_lr(const double lr);
  virtual void serialize(serialize::InputArchive& archive);
  virtual void serialize(serialize::OutputArchive& archive) const;
  // Every hyperparameter, lr first (none by default: a libtorch-style options class has none).
  virtual std::vector<OptimizerField> fields() { return {}; }
};

template <class Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
 public:
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

// A named part of a parameter's state: a tensor shaped as the parameter, or a step count (stored as
// a 0-dim int64 tensor), or a number (a 0-dim double tensor), or a list of tensors (stored as
// "<name>.0", "<name>.1", ...); `any_shape` lifts the tensors' shape check (LBFGS's flat vectors).
struct StateField {
  const char* name;
  Tensor* tensor = nullptr;
  int64_t* count = nullptr;
  double* number = nullptr;
  std::deque<Tensor>* list = nullptr;
  bool any_shape = false;
};

// libtorch's base, as OptimizerOptions above: clone() and serialize() for a user's state class.
class OptimizerParamState {
 public:
  virtual ~OptimizerParamState() = default;
  virtual std::unique_ptr<OptimizerParamState> clone() const;
  virtual void serialize(serialize::InputArchive& archive);
  virtual void serialize(serialize::OutputArchive& archive) const;
  virtual std::vector<StateField> fields() { return {}; }
};

template <class Derived>
class OptimizerCloneableParamState : public OptimizerParamState {
 public:
  std::unique_ptr<OptimizerParamState> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params);  // NOLINT: libtorch converts implicitly
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options);
  OptimizerParamGroup(const OptimizerParamGroup& other);
  OptimizerParamGroup& operator=(const OptimizerParamGroup& other);
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) = default;

  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }
  // The lr before any LR scheduler changed it (PyTorch's group["initial_lr"]), set by the first
  // scheduler attached to the optimizer.
  std::optional<double>& initial_lr() { return initial_lr_; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
  std::optional<double> initial_lr_;
};

// What state_dict() returns and load_state_dict() takes. Parameters are numbered across groups
// in order, as in PyTorch: state holds "<index>.<field>" (e.g. "3.exp_avg", "3.step"), and each
// group its hyperparameters by name plus "params", its number of parameters.
struct OptimizerStateDict {
  OrderedDict<std::string, Tensor> state{"state"};
  std::vector<OrderedDict<std::string, double>> param_groups;
};

// Per-parameter state keyed as libtorch keys it: the parameter's TensorImpl address as a string
// (c10::guts::to_string(p.unsafeGetTensorImpl()), "0x..."), so an optimizer written for libtorch
// finds its state. Ember's shorter form: find/at/count/operator[] with the TensorImpl* itself.
class OptimizerStateMap : public std::unordered_map<std::string, std::unique_ptr<OptimizerParamState>> {
  using Base = std::unordered_map<std::string, std::unique_ptr<OptimizerParamState>>;

 public:
  using Base::at;
  using Base::count;
  using Base::find;
  using Base::operator[];
  static std::string key(const TensorImpl* p);
  iterator find(const TensorImpl* p) { return find(key(p)); }
  const_iterator find(const TensorImpl* p) const { return find(key(p)); }
  std::unique_ptr<OptimizerParamState>& at(const TensorImpl* p) { return at(key(p)); }
  const std::unique_ptr<OptimizerParamState>& at(const TensorImpl* p) const { return at(key(p)); }
  size_t count(const TensorImpl* p) const { return count(key(p)); }
  std::unique_ptr<OptimizerParamState>& operator[](const TensorImpl* p) { return (*this)[key(p)]; }
};

class Optimizer {
 public:
  using LossClosure = std::function<Tensor()>;
  using StateMap = OptimizerStateMap;

  Optimizer(std::vector<OptimizerParamGroup> param_groups, std::unique_ptr<OptimizerOptions> defaults);
  Optimizer(std::vector<Tensor> parameters, std::unique_ptr<OptimizerOptions> defaults);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient, under NoGradGuard; the closure (if any)
  // re-evaluates the loss with grad mode on first, and its result is returned.
  virtual Tensor step(LossClosure closure = nullptr) = 0;
  void add_param_group(const OptimizerParamGroup& group);
  void zero_grad(bool set_to_none = true);

  size_t size() const;  // the number of parameters over all groups
  // libtorch's older forms (deprecated there): the first group's parameters, and adding to them.
  std::vector<Tensor>& parameters() noexcept { return param_groups_.at(0).params(); }
  const std::vector<Tensor>& parameters() const noexcept { return param_groups_.at(0).params(); }
  void add_parameters(const std::vector<Tensor>& parameters);
  OptimizerOptions& defaults() { return *defaults_; }
  const OptimizerOptions& defaults() const { return *defaults_; }
  std::vector<OptimizerParamGroup>& param_groups() { return param_groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const { return param_groups_; }
  // Per-parameter state, keyed by the parameter's TensorImpl (created at a parameter's first step).
  StateMap& state() { return state_; }
  const StateMap& state() const { return state_; }

  OptimizerStateDict state_dict() const;
  // Checks everything (group and parameter counts, each state tensor's shape) before changing
  // anything; state tensors are cast to their parameter's dtype, as PyTorch does.
  void load_state_dict(const OptimizerStateDict& dict);
  // libtorch's archive forms (torch::save(optimizer, stream) and an OutputArchive << optimizer):
  // the state dict's tensors and hyperparameters; an optimizer written for libtorch may override them.
  virtual void save(serialize::OutputArchive& archive) const;
  virtual void load(serialize::InputArchive& archive);

 protected:
  // A fresh state for p (what a parameter's first step starts from, before its fields are set).
  // Ember's optimizers override it; one written for libtorch makes its own state and never calls batches().
  virtual std::unique_ptr<OptimizerParamState> make_state(const Tensor& p, const OptimizerOptions& group) const;

  // The parameters of a group that have a gradient, split by parameter dtype: the lists each
  // optimizer hands to the multi-tensor ops. `states` are created with make_state as needed.
  struct Batch {
    std::vector<Tensor> params, grads;
    std::vector<OptimizerParamState*> states;
  };
  std::vector<Batch> batches(const OptimizerParamGroup& group);

  // Runs the closure (if any) with grad mode on; step() implementations call it first.
  static Tensor evaluate(const LossClosure& closure);

  std::vector<OptimizerParamGroup> param_groups_;
  StateMap state_;
  std::unique_ptr<OptimizerOptions> defaults_;
};

}  // namespace ember::optim
