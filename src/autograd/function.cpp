// Custom functions (Function<T>): the context their forward fills and the node that calls their backward.
#include <algorithm>

#include "autograd/inplace.h"
#include "autograd/variable.h"
#include "ember/factory.h"

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

void AutogradContext::mark_dirty(const variable_list& inputs) {
  for (const Tensor& t : inputs) dirty_.push_back(t.unsafeGetTensorImpl());
}

bool AutogradContext::is_dirty(const Tensor& t) const {
  return std::find(dirty_.begin(), dirty_.end(), t.unsafeGetTensorImpl()) != dirty_.end();
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

void wrap_outputs(const std::shared_ptr<CustomNodeBase>& node, variable_list& outputs, bool record) {
  AutogradContext& ctx = node->ctx;
  for (TensorImpl* dirty : ctx.dirty_) {
    const bool returned =
        std::any_of(outputs.begin(), outputs.end(), [&](const Tensor& o) { return o.unsafeGetTensorImpl() == dirty; });
    EMBER_CHECK(returned, node->name().c_str(),
                "Some elements marked as dirty during the forward method were not returned as output. ",
                "The inputs that are modified inplace must all be outputs of the Function.");
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor& out = outputs[i];
    if (!out.defined()) {
      node->forward_outputs.emplace_back();
      continue;
    }
    const auto arg = std::find(node->tensor_args.begin(), node->tensor_args.end(), out.unsafeGetTensorImpl());
    const bool modified = ctx.is_dirty(out);
    if (modified) {
      EMBER_CHECK(!(out.is_leaf() && out.requires_grad()), node->name().c_str(),
                  "a leaf Variable that requires grad has been used in an in-place operation.");
      out.unsafeGetTensorImpl()->storage()->bump_version();
    } else if (arg != node->tensor_args.end() && record) {
      AutoGradMode no_grad(false);
      out = out.view_as(out);
    }
    node->forward_outputs.push_back(InputMetadata{DimVector(out.sizes()), out.scalar_type()});
    if (!record || ctx.is_non_differentiable(out)) continue;
    const AutogradMeta* m = get_meta(out);
    if (modified && m && m->base.defined() && arg != node->tensor_args.end()) {
      // An input view written in place: its base's history goes through the call (CopySlices).
      EMBER_CHECK(outputs.size() == 1, node->name().c_str(), "an input view modified in place (mark_dirty) is ",
                  "supported in a function with one output, this one has ", outputs.size());
      rebase_history(out, node, static_cast<size_t>(arg - node->tensor_args.begin()));
    } else {
      set_history(out, node, static_cast<uint32_t>(i));
    }
  }
  node->tensor_args.clear();
  ctx.finish_forward(record ? node : nullptr, outputs);
}

variable_list CustomNodeBase::apply(variable_list&& grads) {
  if (grads.size() < forward_outputs.size()) grads.resize(forward_outputs.size());
  for (size_t i = 0; ctx.materialize_grads_ && i < forward_outputs.size(); ++i)
    if (!grads[i].defined() && forward_outputs[i])
      grads[i] = zeros(forward_outputs[i]->sizes, TensorOptions().dtype(forward_outputs[i]->dtype));
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
