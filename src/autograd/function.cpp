// Custom functions (Function<T>): the context their forward fills and the node that calls their backward.
#include <algorithm>

#include "autograd/variable.h"

namespace ember::autograd {

AutogradContext::AutogradContext() = default;
AutogradContext::~AutogradContext() = default;

void AutogradContext::save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  for (const Tensor& t : outputs) non_differentiable_.push_back(t.unsafeGetTensorImpl());
}

bool AutogradContext::is_non_differentiable(const Tensor& t) const {
  for (TensorImpl* p : non_differentiable_)
    if (p == t.unsafeGetTensorImpl()) return true;
  return false;
}

bool AutogradContext::needs_input_grad(size_t tensor_index) const {
  return tensor_index < needs_input_grad_.size() && needs_input_grad_[tensor_index];
}

// Saved tensors that are outputs of this call are kept without their history (see SavedVariable).
void AutogradContext::finish_forward(const std::shared_ptr<Node>& node, const variable_list& outputs) {
  node_ = node;
  for (const Tensor& t : to_save_) {
    bool is_output = false;
    for (const Tensor& o : outputs) is_output = is_output || (t.defined() && t.is_same(o));
    saved_.emplace_back(t, is_output && node != nullptr);
  }
  to_save_.clear();
}

variable_list AutogradContext::get_saved_variables() const {
  variable_list out;
  std::shared_ptr<Node> node = node_.lock();
  for (const SavedVariable& s : saved_) out.push_back(s.unpack(node));
  return out;
}

void AutogradContext::release_variables() {
  for (SavedVariable& s : saved_) s.reset_data();
}

namespace detail {

variable_list CustomNodeBase::apply(variable_list&& grads) {
  variable_list res = call_backward(std::move(grads));
  // As PyTorch: more gradients than forward inputs are accepted when the extra ones are all
  // undefined (a forward with a defaulted trailing argument the call left out), and dropped.
  if (res.size() > forward_arg_is_tensor.size() &&
      std::none_of(res.begin() + static_cast<std::ptrdiff_t>(forward_arg_is_tensor.size()), res.end(),
                   [](const Tensor& g) { return g.defined(); })) {
    res.resize(forward_arg_is_tensor.size());
  }
  EMBER_CHECK(res.size() == forward_arg_is_tensor.size(), name().c_str(),
              "function backward returned an incorrect number of gradients (expected ", forward_arg_is_tensor.size(),
              ", got ", res.size(), ")");
  variable_list out;
  for (size_t i = 0; i < res.size(); ++i) {
    if (forward_arg_is_tensor[i]) {
      out.push_back(res[i]);
    } else {
      EMBER_CHECK(!res[i].defined(), name().c_str(), "function backward returned a gradient different than None at "
                  "position ", i + 1, ", but the corresponding forward input was not a Variable");
    }
  }
  return out;
}

}  // namespace detail
}  // namespace ember::autograd
