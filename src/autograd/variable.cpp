// Tensor's autograd methods, per-tensor autograd state and saved tensors.
#include "autograd/variable.h"

#include <sstream>

#include "autograd/engine.h"
#include "autograd/inplace.h"
#include "profiler/hooks.h"
#include "ember/reduce.h"
#include "ember/shape.h"

namespace ember {
namespace autograd {

AutogradMeta* get_meta(const Tensor& t) {
  return static_cast<AutogradMeta*>(t.unsafeGetTensorImpl()->autograd_meta());
}
AutogradMeta& materialize_meta(const Tensor& t) {
  TensorImpl* impl = t.unsafeGetTensorImpl();
  // `new AutogradMeta` rather than make_unique's value-initialization, which zero-fills the
  // object before running its member initializers.
  if (!impl->autograd_meta()) impl->set_autograd_meta(std::unique_ptr<AutogradMeta>(new AutogradMeta));
  return *static_cast<AutogradMeta*>(impl->autograd_meta());
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* m = get_meta(t);
  if (!m) return {};
  if (m->base.defined()) refresh_view_grad_fn(t, *m);
  if (m->grad_fn) return {m->grad_fn, m->output_nr};
  if (!m->requires_grad) return {};
  const std::lock_guard<SpinLock> lock(m->accumulator_lock);
  std::shared_ptr<Node> acc = m->grad_accumulator.lock();
  if (!acc) {
    acc = make_accumulate_grad(t);
    if (m->hooks) acc->tensor_pre_hooks.emplace_back(0, m->hooks);
    m->grad_accumulator = acc;
  }
  return {acc, 0};
}

namespace detail {
void set_history(const Tensor& out, std::shared_ptr<Node> fn, uint32_t output_nr) {
  AutogradMeta& m = materialize_meta(out);
  m.grad_fn = std::move(fn);
  m.output_nr = output_nr;
  m.requires_grad = false;
  out.unsafeGetTensorImpl()->set_requires_grad_flag(true);
}
}  // namespace detail

SavedVariable::SavedVariable(const Tensor& t, bool is_output, std::optional<uint32_t> output_nr) {
  if (!t.defined()) return;
  defined_ = true;
  is_output_ = is_output;
  version_ = t.unsafeGetTensorImpl()->storage()->version();
  requires_grad_ = t.requires_grad();
  EMBER_CHECK(!t.is_inference() || InferenceMode::is_enabled(), "autograd",
              "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal "
              "tensor and use it in autograd.");
  if (profiler::hooks::observed()) profiler::hooks::note_tensor(t, profiler::MemoryCategory::Activation);
  if (is_output) {
    // Kept without its grad_fn, which owns this saved variable.
    data_ = t.detach();
    output_nr_ = output_nr.value_or(t.output_nr());
    requires_grad_ = true;  // its grad_fn is the node that saved it
  } else {
    data_ = t;
  }
}

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& node) const {
  if (!defined_) return {};
  EMBER_CHECK(!released_, node->name().c_str(),
              "Trying to backward through the graph a second time (or directly access saved tensors after they "
              "have already been freed). Saved intermediate values of the graph are freed when you call "
              ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph "
              "a second time or if you need to access saved tensors after calling backward.");
  const uint32_t now = data_.unsafeGetTensorImpl()->storage()->version();
  if (now != version_) {
    // As PyTorch, a saved input is described by its history now (after the in-place op).
    const std::shared_ptr<Node> producer = is_output_ ? node : data_.grad_fn();
    const uint32_t nr = is_output_ ? output_nr_ : data_.output_nr();
    const std::string which =
        producer ? ", which is output " + std::to_string(nr) + " of " + producer->name() : std::string();
    std::ostringstream shape;
    shape << data_.sizes();
    ::ember::detail::fail(node->name().c_str(), "one of the variables needed for gradient computation has been modified by an "
                 "inplace operation: [", data_.toString(), " ", shape.str(), "]", which, ", is at version ", now,
                 "; expected version ", version_, " instead.");
  }
  if (!is_output_) return data_;
  Tensor t = data_.detach();
  if (requires_grad_) detail::set_history(t, node, output_nr_);
  return t;
}

void SavedVariable::reset_data() {
  data_.reset();
  released_ = true;
}

Tensor sum_to(const Tensor& grad, IntArrayRef sizes) {
  if (grad.sizes().equals(sizes)) return grad;
  const int64_t lead = grad.dim() - static_cast<int64_t>(sizes.size());
  DimVector dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  Tensor r = dims.empty() ? grad : grad.sum(dims, false);
  dims.clear();
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d)
    if (sizes[d] == 1 && r.size(d) != 1) dims.push_back(d);
  if (!dims.empty()) r = r.sum(dims, true);
  return r;
}

}  // namespace autograd

using autograd::AutogradMeta;
using autograd::get_meta;
using autograd::materialize_meta;

const Tensor& Tensor::requires_grad_(bool requires_grad) const {
  TensorImpl* impl = checked_impl();
  AutogradMeta* m = get_meta(*this);
  if (m && m->grad_fn) {
    EMBER_CHECK(requires_grad, "requires_grad_",
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
    return *this;
  }
  if (requires_grad) {
    EMBER_CHECK(autograd::is_differentiable_type(dtype()), "requires_grad_",
                "only Tensors of floating point and complex dtype can require gradients");
    EMBER_CHECK(!impl->is_inference() || InferenceMode::is_enabled(), "requires_grad_",
                "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
  }
  if (!m && !requires_grad) return *this;
  materialize_meta(*this).requires_grad = requires_grad;
  // A view's flag also derives from its base's, as PyTorch's DifferentiableViewMeta::requires_grad:
  // requires_grad_(false) on a view of a base that requires grad leaves it requiring grad.
  const bool from_base = !requires_grad && m && m->base.defined() && m->base.requires_grad();
  impl->set_requires_grad_flag(requires_grad || from_base);
  return *this;
}

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  const AutogradMeta* m = get_meta(*this);
  if (!m) return undefined;
  if (m->retained_grad) return *m->retained_grad;
  return m->grad;
}

Tensor& Tensor::mutable_grad() const {
  AutogradMeta& m = materialize_meta(*this);
  return m.retained_grad ? *m.retained_grad : m.grad;
}

const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  static const std::shared_ptr<autograd::Node> none;
  AutogradMeta* m = get_meta(*this);
  if (!m) return none;
  if (m->base.defined()) autograd::refresh_view_grad_fn(*this, *m);
  return m->grad_fn;
}

bool Tensor::is_view() const {
  const AutogradMeta* m = get_meta(*this);
  return m && m->base.defined();
}

const Tensor& Tensor::_base() const {
  static const Tensor undefined;
  const AutogradMeta* m = get_meta(*this);
  return m ? m->base : undefined;
}

unsigned Tensor::_register_hook(std::function<Tensor(const Tensor&)> hook) const {
  EMBER_CHECK(requires_grad(), "register_hook",
              "cannot register a hook on a tensor that doesn't require gradient");
  AutogradMeta& m = materialize_meta(*this);
  if (!m.hooks) {
    m.hooks = std::make_shared<autograd::HookList>();
    // The hooks run on the gradient entering the node this tensor's gradient goes to.
    if (const std::shared_ptr<autograd::Node>& fn = grad_fn()) {
      fn->tensor_pre_hooks.emplace_back(m.output_nr, m.hooks);
    } else if (std::shared_ptr<autograd::Node> acc = m.grad_accumulator.lock()) {
      acc->tensor_pre_hooks.emplace_back(0, m.hooks);
    }
  }
  m.hooks->push_back(std::move(hook));
  return static_cast<unsigned>(m.hooks->size() - 1);
}

void Tensor::remove_hook(unsigned pos) const {
  AutogradMeta* m = get_meta(*this);
  EMBER_CHECK(m && m->hooks && pos < m->hooks->size(), "remove_hook", "Invalid index ", pos, " passed to remove_hook");
  (*m->hooks)[pos] = nullptr;
}

bool Tensor::is_leaf() const { return grad_fn() == nullptr; }

uint32_t Tensor::output_nr() const {
  const AutogradMeta* m = get_meta(*this);
  return m ? m->output_nr : 0;
}

Tensor Tensor::detach() const {
  const TensorImpl* impl = checked_impl();
  auto out = IntrusivePtr<TensorImpl>::make(impl->storage(), impl->dtype(), impl->sizes(), impl->strides(),
                                            impl->storage_offset());
  out->set_inference(impl->is_inference());
  out->set_conj(impl->is_conj());
  return Tensor(std::move(out));
}

Tensor& Tensor::detach_() const {
  checked_impl()->set_autograd_meta(nullptr);
  impl_->set_requires_grad_flag(false);
  return mutable_self();
}

void Tensor::retain_grad() const {
  EMBER_CHECK(requires_grad(), "retain_grad", "can't retain_grad on Tensor that has requires_grad=False");
  if (is_leaf()) return;  // leaves keep their .grad anyway
  AutogradMeta& m = materialize_meta(*this);
  if (m.retained_grad) return;
  m.retained_grad = std::make_shared<Tensor>();
  m.grad_fn->retained_grads.emplace_back(m.output_nr, m.retained_grad);
}

bool Tensor::retains_grad() const {
  const AutogradMeta* m = get_meta(*this);
  return m && m->retained_grad != nullptr;
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph) const {
  autograd::backward({*this}, {gradient}, retain_graph, create_graph);
}

}  // namespace ember
