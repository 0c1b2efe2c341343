// The generic derivative node and the checks of the autograd layer.
#include "autograd/layer.h"

namespace ember::autograd {

Tensor BackwardContext::operator[](Saved s) const { return node_.unpack(s); }

Tensor FormulaNode::unpack(Saved s) const {
  EMBER_CHECK(s.index < saved_.size(), name_, "internal error: a formula reads a tensor it did not save");
  // Saved outputs get this node back as their grad_fn (for double backward).
  return saved_[s.index].unpack(std::const_pointer_cast<Node>(shared_from_this()));
}

variable_list FormulaNode::apply(variable_list&& grads) {
  variable_list out(formulas_.size());
  if (!grads[0].defined()) return out;
  const BackwardContext ctx(*this, grads);
  for (size_t i = 0; i < formulas_.size(); ++i)
    if (should_compute_output(i)) out[i] = formulas_[i](ctx);
  return out;
}

void FormulaNode::release_variables() {
  for (SavedVariable& s : saved_) s.reset_data();
}

Saved Derivative::save(const Tensor& t) {
  node_->saved_.emplace_back(t, false);
  return {node_->saved_.size() - 1};
}

Saved Derivative::save_result() {
  // The result gets its grad_fn only in finish(); saved as an output it is kept without one.
  node_->saved_.emplace_back(result_, true);
  return {node_->saved_.size() - 1};
}

void Derivative::finish() {
  for (size_t i = 0; i < node_->num_outputs(); ++i) {
    if (node_->should_compute_output(i)) {
      detail::set_history(result_, node_, 0);
      return;
    }
  }
}

void fail_not_implemented(const char* op) {
  ::ember::detail::fail(op, "derivative for ", op, " is not implemented");
}

void check_inplace(const Tensor& self, const char* op) {
  EMBER_CHECK(!(self.defined() && self.requires_grad() && self.is_leaf()), op,
              "a leaf Variable that requires grad is being used in an in-place operation.");
}

bool is_differentiable_type(ScalarType t) { return is_floating_type(t); }

}  // namespace ember::autograd
