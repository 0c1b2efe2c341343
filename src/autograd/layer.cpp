// The generic derivative node and the checks of the autograd layer.
#include "autograd/layer.h"

#include <algorithm>

#include "autograd/inplace.h"

namespace ember::autograd {

Tensor BackwardContext::operator[](Saved s) const { return node_.unpack(s); }

bool BackwardContext::needs(size_t k) const { return node_.should_compute_output(first_edge_ + k); }

const Tensor& BackwardContext::undefined() {
  static const Tensor none;
  return none;
}

Tensor FormulaNode::unpack(Saved s) const {
  EMBER_CHECK(s.index < saved_.size(), name_, "internal error: a formula reads a tensor it did not save");
  // Saved outputs get this node back as their grad_fn (for double backward).
  return saved_[s.index].unpack(std::const_pointer_cast<Node>(shared_from_this()));
}

variable_list FormulaNode::apply(variable_list&& grads) {
  variable_list out(num_outputs());
  if (std::none_of(grads.begin(), grads.end(), [](const Tensor& g) { return g.defined(); })) return out;
  BackwardContext ctx(*this, grads);
  const auto add = [&](size_t edge, Tensor&& g) {
    Tensor& sum = out[edge];
    if (!sum.defined()) {
      sum = std::move(g);
    } else if (g.defined()) {
      sum = sum + g;
    }
  };
  for (const Entry& e : formulas_) {
    if (!should_compute_output(e.edge)) continue;
    if (e.output != kAllOutputs && !ctx.grad(e.output).defined()) continue;  // an unused output adds nothing
    ctx.output_ = e.output == kAllOutputs ? 0 : e.output;
    add(e.edge, e.formula(ctx));
  }
  ctx.output_ = 0;
  for (const JointEntry& e : joint_) {
    ctx.first_edge_ = e.first_edge;
    bool wanted = false;
    for (uint32_t k = 0; k < e.edges; ++k) wanted = wanted || ctx.needs(k);
    if (!wanted) continue;
    variable_list g = e.formula(ctx);
    for (size_t k = 0; k < std::min<size_t>(g.size(), e.edges); ++k)
      if (ctx.needs(k)) add(e.first_edge + k, std::move(g[k]));
  }
  return out;
}

void FormulaNode::release_variables() {
  for (SavedVariable& s : saved_) s.reset_data();
}

Derivative::Derivative(const Tensor* results, size_t n, const char* forward_op, bool inplace, size_t inputs)
    : results_(results), num_results_(n), node_(std::allocate_shared<FormulaNode>(cpu_allocator::ObjectAllocator<FormulaNode>(), forward_op)), inplace_(inplace) {
  node_->reserve_edges(inputs);
  node_->saved_.reserve(inputs);
  node_->formulas_.reserve(inputs);
}

Saved Derivative::save(const Tensor& t) {
  // Before an in-place op, a formula that needs a value the op overwrites keeps a copy
  // (recorded, so that double backward still reaches its history).
  const bool overwritten = inplace_ && t.defined() && t.impl()->storage() == results_[0].impl()->storage();
  if (overwritten) {
    node_->saved_.emplace_back(t.clone(), false);
  } else {
    node_->saved_.emplace_back(t, false);  // no temporary: each tensor copy is an atomic increment
  }
  return {node_->saved_.size() - 1};
}

Saved Derivative::save_result(size_t i) {
  if (inplace_) {
    // The result is written only after the formulas are declared: saved in finish_inplace().
    node_->saved_.emplace_back();
    pending_results_.push_back(node_->saved_.size() - 1);
    return {node_->saved_.size() - 1};
  }
  // A result gets its grad_fn only in finish(); saved as an output it is kept without one (an
  // integer result never gets one: kept as it is).
  const Tensor& r = results_[i];
  if (is_differentiable_type(r.dtype())) {
    node_->saved_.emplace_back(r, true, static_cast<uint32_t>(i));
  } else {
    node_->saved_.emplace_back(r, false);
  }
  return {node_->saved_.size() - 1};
}

bool Derivative::any_edge() const {
  for (size_t i = 0; i < node_->num_outputs(); ++i)
    if (node_->should_compute_output(i)) return true;
  return false;
}

void Derivative::finish() {
  if (!any_edge()) return;
  if (num_results_ == 1) return detail::set_history(results_[0], std::move(node_), 0);
  for (size_t i = 0; i < num_results_; ++i)
    if (results_[i].defined() && is_differentiable_type(results_[i].dtype()))
      detail::set_history(results_[i], node_, static_cast<uint32_t>(i));
}

void Derivative::finish_inplace() {
  for (size_t i : pending_results_) node_->saved_[i] = SavedVariable(results_[0], true);
  if (any_edge()) rebase_history(results_[0], node_, self_edge_);
}

void fail_not_implemented(const char* op) {
  ::ember::detail::fail(op, "derivative for ", op, " is not implemented");
}

void fail_out_requires_grad(const char* op) {
  const std::string base(op, std::char_traits<char>::length(op) - 4);  // "add_out" -> "add"
  ::ember::detail::fail(op, base, "(): functions with out=... arguments don't support automatic differentiation, "
                        "but one of the arguments requires grad.");
}

void check_inplace(const Tensor& self, const char* op) {
  if (!self.defined()) return;
  // PyTorch's order: a view's own errors first (one made under no_grad is itself a leaf)
  AutogradMeta* m = get_meta(self);
  const bool view = m && m->base.defined();
  if (view) {
    if (m->creation != ViewCreation::kDefault) fail_view_inplace(op, self, /*indirect=*/false);
    EMBER_CHECK(!(m->base.requires_grad() && m->base.is_leaf()), op,
                "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
  EMBER_CHECK(!(self.requires_grad() && self.is_leaf()), op,
              "a leaf Variable that requires grad is being used in an in-place operation.");
  if (view) refresh_view_grad_fn(self, *m);
}

bool is_differentiable_type(ScalarType t) { return is_floating_type(t) || is_complex_type(t); }

}  // namespace ember::autograd
