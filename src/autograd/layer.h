// The autograd layer of dispatch::call, and what an op writes to declare its derivative.
//
// An op struct declares one of:
//   - `derivative(autograd::Derivative& d, args...)`: names its node and gives, per
//     differentiable input, a formula of the output's gradient (PyTorch's derivatives.yaml):
//
//       // MulBackward0 -- self: grad * other; other: grad * self
//       template <class B>
//       static void derivative(autograd::Derivative& d, const Tensor& self, const B& other) {
//         d.name(autograd::is_tensor<B> ? "MulBackward0" : "MulBackward1");
//         d.grad(self, [o = d.save_for(self, other)](const auto& c) { return c.grad() * c[o]; });
//         d.grad(other, [s = d.save_for(other, self)](const auto& c) { return c.grad() * c[s]; });
//       }
//
//     The op then runs with recording off and one node joins its output to its inputs. Formulas
//     return a gradient of the forward output's shape or of the input's; the engine sums
//     broadcast dimensions and casts to the input's dtype.
//     An op returning a tuple of tensors gets the same: one node joins all its results (integer
//     ones, such as indices, get no history), and each output's gradient may be undefined (that
//     output was not used). A formula reads either one output's gradient, run only when it is
//     defined (successive ones of one input are summed):
//
//       // MaxBackward0 -- self: value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim)
//       d.grad(self, 0, [i = d.save_result(1), ...](const auto& c) { ... c.grad() ... c[i] ... });
//
//     or all of them at once (`d.grad(self, f)`, f reading `c.grad(i)`, undefined for unused
//     outputs: VarMeanBackward0 adds var's part and mean's part, each when defined; split's cat
//     puts zeros where an output got none). `d.save_result(i)` saves result i. Results that share the first argument's storage are multi-output views (an
//     in-place write on one raises PyTorch's error). Ops outside dispatch (split's views) make
//     the same node with `Derivative d(results, n, op)`, `d.grad(...)`, `d.finish()`.
//   - `static constexpr bool composite = true;`: the op runs with recording on and its inner
//     ops record their own nodes.
// Or `static constexpr bool differentiable = false;` (comparisons): results never require grad.
// An op with none of these, given a tensor that requires grad, raises "derivative for <op> is not
// implemented" rather than returning a result without a graph.
//
// In-place ops (first parameter `Tensor& self`) take their derivative from another struct:
//   - `using out_of_place = AddOp;`: the functional twin's derivative, called with the same
//     arguments (self as the first input);
//   - `using derivative_rule = autograd::CopyRule;`: a rule struct with a `derivative` (for
//     in-place ops without a twin: copy_, fill_, index_put_, masked_fill_; see inplace_rules.h).
// The layer records the node before the op runs (so self's edge is its old history, and a
// formula saving self gets a copy of the value before the write), runs the op, then rebases
// self's history onto the node. When self is a view, the base's history is rebased through a
// CopySlices node and the view's grad_fn becomes AsStridedBackward0 onto it, as PyTorch does.
// Out= ops (names ending in "_out") raise PyTorch's error when an argument requires grad.
//
// Views: a result sharing its first argument's storage is recorded as a view of that
// argument's base (in grad mode, also when nothing requires grad), so that in-place writes into
// views reach the base's graph. Under no_grad and in inference mode too (views of normal tensors),
// remembering where (PyTorch's creation_meta): an in-place op recorded on such a view, or reading
// the grad_fn of one whose base's history was rebased since, raises PyTorch's "A view was created
// in no_grad mode ..." (or "in inference mode ...") error.
#pragma once
#include <array>
#include <functional>
#include <initializer_list>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "autograd/variable.h"
#include "ember/autograd.h"

namespace ember::dispatch {
// Op::run, recorded while a graph captures on this thread (dispatch/capture.h).
template <class Op, class... A>
auto run_op(A&&... a) -> decltype(Op::run(std::forward<A>(a)...));
}  // namespace ember::dispatch

namespace ember::autograd {

template <class T>
inline constexpr bool is_tensor = std::is_same_v<std::decay_t<T>, Tensor>;

// A saved tensor: an index into the node's saved list.
struct Saved {
  size_t index;
};

class FormulaNode;
// What a formula sees: the outputs' gradients and the node's saved values.
class BackwardContext {
 public:
  BackwardContext(const FormulaNode& node, const variable_list& grads) : node_(node), grads_(grads) {}
  // The gradient of the output the formula was declared for (output 0 of a formula over all outputs).
  const Tensor& grad() const { return grads_[output_]; }
  // The gradient of output `i`: undefined when that output was not used.
  const Tensor& grad(size_t i) const { return i < grads_.size() ? grads_[i] : undefined(); }
  // In a formula for several inputs: whether the k-th of them wants its gradient.
  bool needs(size_t k) const;
  Tensor operator[](Saved s) const;
  // Scalars (and other values) are kept by value in the formula itself.
  template <class V>
  const V& operator[](const V& v) const {
    return v;
  }

 private:
  friend class FormulaNode;
  static const Tensor& undefined();
  const FormulaNode& node_;
  const variable_list& grads_;
  size_t output_ = 0;
  size_t first_edge_ = 0;  // a formula for several inputs: the first one's edge
};
using Formula = std::function<Tensor(const BackwardContext&)>;
// A formula for several inputs at once: their gradients in order (any may stay undefined).
using JointFormula = std::function<variable_list(const BackwardContext&)>;

// The node of an op with a derivative: one node per call, however many results the op has. Each
// formula gives one input's gradient, from one output's gradient (run only when that output got
// one) or from all of them (run when any did), or several inputs' gradients from all of them; the
// formulas of one input are summed.
class FormulaNode final : public Node {
 public:
  explicit FormulaNode(const char* forward_op = nullptr) {
    this->forward_op = forward_op;
    arena_.reset(buffer_, sizeof buffer_);
  }
  ~FormulaNode() override {  // the arrays' elements go while the buffer holding them is alive
    saved_.clear();
    formulas_.clear();
    next_edges_.clear();
    output_meta_.clear();
  }
  std::string name() const override { return name_; }
  variable_list apply(variable_list&& grads) override;
  void release_variables() override;
  Tensor unpack(Saved s) const;

 private:
  friend class Derivative;
  static constexpr uint32_t kAllOutputs = UINT32_MAX;
  struct Entry {
    Formula formula;
    uint32_t edge;    // the input it gives the gradient of
    uint32_t output;  // the output whose gradient it reads, or kAllOutputs
  };
  struct JointEntry {
    JointFormula formula;
    uint32_t first_edge, edges;  // the inputs it gives the gradients of
  };
  const char* name_ = "";
  // Edges, input metadata, saved tensors and formulas of an op with up to three tensor inputs.
  static constexpr size_t kInlineInputs = 3;
  alignas(16) std::byte buffer_[kInlineInputs * (sizeof(Edge) + sizeof(InputMetadata) + sizeof(SavedVariable) +
                                                 sizeof(Entry)) +
                                4 * 15];  // each array rounded up to 16 bytes
  node_vector<SavedVariable> saved_{NodeAllocator<SavedVariable>(&arena_)};
  node_vector<Entry> formulas_{NodeAllocator<Entry>(&arena_)};
  std::vector<JointEntry> joint_;  // rare (linalg's solvers): not worth room in every node
};

// Collects an op's derivative while the op records it (see the top of this file).
class Derivative {
 public:
  // `inplace`: the op will write into `result` after the formulas are declared (see the top).
  // `inputs`: how many tensor inputs the op has (the node reserves room for their edges, formulas
  // and saved tensors at once).
  Derivative(const Tensor& result, const char* forward_op, bool inplace = false, size_t inputs = 0)
      : Derivative(&result, 1, forward_op, inplace, inputs) {}
  // An op with several results (see the top of this file); they must outlive the Derivative.
  Derivative(const Tensor* results, size_t n, const char* forward_op, bool inplace = false, size_t inputs = 0);
  void name(const char* n) { node_->name_ = n; }
  // Whether a gradient is wanted for this input.
  template <class T>
  static bool needs(const T& input) {
    if constexpr (is_tensor<T>) {
      return input.requires_grad();
    } else if constexpr (std::is_same_v<std::decay_t<T>, std::optional<Tensor>>) {
      return input && input->requires_grad();
    } else {
      return false;
    }
  }
  Saved save(const Tensor& t);
  // Result `i` (an integer one, such as indices, is saved as a plain tensor).
  Saved save_result(size_t i = 0);
  // Saves `value` only when `input` needs a gradient (so nodes keep what their formulas use);
  // values that are not tensors are returned to be captured by the formula.
  template <class I, class V>
  auto save_for(const I& input, const V& value) {
    if constexpr (is_tensor<V>) {
      return needs(input) ? save(value) : Saved{SIZE_MAX};
    } else {
      return value;
    }
  }
  // The formula for an input's gradient, from the gradients of all outputs (c.grad(i), undefined
  // for outputs not used; c.grad() is output 0's); inputs that are not tensors take none.
  template <class T, class F>
  void grad(const T& input, F&& f) {
    if constexpr (is_tensor<T>) {
      if (inplace_ && self_edge_ == SIZE_MAX && input.is_same(results_[0])) self_edge_ = node_->num_outputs();
      node_->add_input_edge(input);
      add_formula(std::forward<F>(f), FormulaNode::kAllOutputs);
    } else if constexpr (std::is_same_v<std::decay_t<T>, std::optional<Tensor>>) {
      node_->add_input_edge(input ? *input : Tensor());
      add_formula(std::forward<F>(f), FormulaNode::kAllOutputs);
    }
    pair_input_ = nullptr;
  }
  // One formula for several inputs (derivatives.yaml's `A, B: f(...)` rows, where one input's
  // gradient is computed on the way to the other's), from all outputs' gradients: f returns their
  // gradients in order, and may skip those not wanted (`c.needs(k)`). Inputs may be undefined.
  template <class F>
  void grad(std::initializer_list<Tensor> inputs, F&& f) {
    const auto first = static_cast<uint32_t>(node_->num_outputs());
    for (const Tensor& t : inputs) node_->add_input_edge(t);
    node_->joint_.push_back({JointFormula(std::forward<F>(f)), first, static_cast<uint32_t>(inputs.size())});
    pair_input_ = nullptr;
  }
  // The part of an input's gradient that comes from output `output` (c.grad() is its gradient),
  // run only when that output got one. Successive calls for the same input argument share its
  // edge and their parts are summed: `d.grad(self, 0, f0); d.grad(self, 1, f1);`.
  template <class F>
  void grad(const Tensor& input, size_t output, F&& f) {
    if (&input != pair_input_) node_->add_input_edge(input);
    pair_input_ = &input;
    add_formula(std::forward<F>(f), static_cast<uint32_t>(output));
  }
  const Tensor& result(size_t i = 0) const { return results_[i]; }
  // Attaches the node to the result (when some input needs a gradient).
  void finish();
  // After the in-place op ran: rebases the written tensor's history onto the node.
  void finish_inplace();

 private:
  template <class F>
  void add_formula(F&& f, uint32_t output) {
    node_->formulas_.push_back({Formula(std::forward<F>(f)), static_cast<uint32_t>(node_->num_outputs() - 1), output});
  }
  bool any_edge() const;
  const Tensor* results_;  // the op's results (the derivative lives within the op's call)
  size_t num_results_;
  const Tensor* pair_input_ = nullptr;  // the input of the last grad(input, output, f)
  std::shared_ptr<FormulaNode> node_;
  std::vector<size_t> pending_results_;  // in-place: saved results, filled once the op ran
  size_t self_edge_ = SIZE_MAX;          // in-place: the edge of the written tensor's old history
  bool inplace_ = false;
};

[[noreturn]] void fail_not_implemented(const char* op);
[[noreturn]] void fail_out_requires_grad(const char* op);
void check_inplace(const Tensor& self, const char* op);
// Records `result` as a view of `input` when they share storage, made where `creation` says.
void track_view(const Tensor& result, const Tensor& input, ViewCreation creation = ViewCreation::kDefault);

// Whether an op writes into an out= argument (its name ends in "_out").
constexpr bool is_out_op(const char* name) {
  size_t n = 0;
  while (name[n]) ++n;
  return n > 4 && name[n - 4] == '_' && name[n - 3] == 'o' && name[n - 2] == 'u' && name[n - 1] == 't';
}

// The struct an in-place op takes its derivative from (void when it declares none).
template <class Op>
struct InplaceRule {
  using type = void;
};
template <class Op>
  requires requires { typename Op::out_of_place; }
struct InplaceRule<Op> {
  using type = typename Op::out_of_place;
};
template <class Op>
  requires requires { typename Op::derivative_rule; }
struct InplaceRule<Op> {
  using type = typename Op::derivative_rule;
};

template <class Op, class... Args>
concept HasDerivative = requires(Derivative& d, Args&... a) { Op::derivative(d, a...); };
template <class Op>
concept IsComposite = requires { requires Op::composite; };
// Ops whose results never carry gradients (comparisons): `static constexpr bool differentiable = false;`.
template <class Op>
concept IsNonDifferentiable = requires { requires !Op::differentiable; };

// How many arguments are tensors (a derivative's likely number of edges).
template <class... Args>
inline constexpr size_t tensor_args =
    ((is_tensor<Args> || std::is_same_v<std::decay_t<Args>, std::optional<Tensor>> ? 1 : 0) + ... + 0);

template <class T>
bool same_impl(const Tensor& r, const T& a) {
  if constexpr (is_tensor<T>) return r.is_same(a);
  return false;
}

// The in-place branch of the layer (see the top of this file).
template <class Op, class... Rest>
Tensor& apply_inplace(Tensor& self, Rest&... rest) {
  check_inplace(self, Op::name);
  using Rule = typename InplaceRule<Op>::type;
  if constexpr (!std::is_void_v<Rule> && HasDerivative<Rule, const Tensor, std::remove_reference_t<Rest>...>) {
    Derivative d(self, Op::name, /*inplace=*/true, 1 + tensor_args<Rest...>);
    Rule::derivative(d, std::as_const(self), rest...);
    {
      AutoGradMode no_grad(false);
      dispatch::run_op<Op>(self, rest...);
    }
    d.finish_inplace();
    return self;
  } else {
    fail_not_implemented(Op::name);
    return self;  // unreachable; gives the return type
  }
}

// An op with several results (a tuple of tensors): one node joins them all to the inputs; results
// that share the first argument's storage are its multi-output views (PyTorch's MULTI_OUTPUT_NODE).
template <class Op, class... Args>
auto apply_multi(Args&... args) {
  decltype(dispatch::run_op<Op>(args...)) r;
  {
    AutoGradMode no_grad(false);
    r = dispatch::run_op<Op>(args...);
  }
  const auto results = std::apply([](const auto&... t) { return std::array<Tensor, sizeof...(t)>{t...}; }, r);
  Derivative d(results.data(), results.size(), Op::name, /*inplace=*/false, tensor_args<Args...>);
  Op::derivative(d, args...);
  d.finish();
  using First = std::tuple_element_t<0, std::tuple<Args..., void>>;
  if constexpr (is_tensor<First>)
    for (const Tensor& t : results) track_view(t, std::get<0>(std::forward_as_tuple(args...)), ViewCreation::kMultiOutput);
  return r;
}

// The autograd layer: called by dispatch::call when grad mode is on and an argument requires grad.
template <class Op, class... Args>
decltype(auto) apply(Args&&... args) {
  using First = std::tuple_element_t<0, std::tuple<Args&&..., void>>;
  constexpr bool writes = std::is_same_v<First, Tensor&>;
  if constexpr (writes && is_out_op(Op::name)) {
    fail_out_requires_grad(Op::name);
    return Op::run(std::forward<Args>(args)...);  // unreachable; gives the return type
  } else if constexpr (IsComposite<Op>) {
    if constexpr (writes) check_inplace(std::get<0>(std::forward_as_tuple(args...)), Op::name);
    return Op::run(std::forward<Args>(args)...);
  } else if constexpr (IsNonDifferentiable<Op>) {
    if constexpr (writes) check_inplace(std::get<0>(std::forward_as_tuple(args...)), Op::name);
    AutoGradMode no_grad(false);
    return dispatch::run_op<Op>(std::forward<Args>(args)...);
  } else if constexpr (writes) {
    return apply_inplace<Op>(args...);
  } else if constexpr (HasDerivative<Op, std::remove_reference_t<Args>...> &&
                       !std::is_same_v<decltype(dispatch::run_op<Op>(args...)), Tensor>) {
    return apply_multi<Op>(args...);
  } else if constexpr (HasDerivative<Op, std::remove_reference_t<Args>...>) {
    Tensor result;
    {
      AutoGradMode no_grad(false);
      result = dispatch::run_op<Op>(args...);
    }
    // An op that hands back its input (to() to the same dtype) adds nothing to the graph.
    if ((same_impl(result, args) || ...) || !is_differentiable_type(result.dtype())) return result;
    Derivative d(result, Op::name, /*inplace=*/false, tensor_args<Args...>);
    Op::derivative(d, args...);
    d.finish();
    if constexpr (is_tensor<First>) track_view(result, std::get<0>(std::forward_as_tuple(args...)));
    return result;
  } else {
    fail_not_implemented(Op::name);
    return Op::run(std::forward<Args>(args)...);  // unreachable; gives the return type
  }
}

}  // namespace ember::autograd

#include "autograd/inplace_rules.h"  // IWYU pragma: export
