// Views and in-place ops in the graph: CopySlices (the base's history after an in-place write
// into one of its views) and AsStridedBackward0 (a view's history regenerated from its base).
#include "autograd/inplace.h"

#include "ember/factory.h"

namespace ember::autograd {

namespace {

// Where a view sits in its base: both geometries, offsets relative to the base's.
struct ViewGeometry {
  DimVector base_sizes, base_strides, sizes, strides;
  int64_t offset = 0;
  ScalarType dtype = kFloat;

  ViewGeometry(const Tensor& base, const Tensor& view)
      : base_sizes(base.sizes()),
        base_strides(base.strides()),
        sizes(view.sizes()),
        strides(view.strides()),
        offset(view.storage_offset() - base.storage_offset()),
        dtype(base.dtype()) {
    // A fresh tensor with the base's strides has the same layout only when the base is dense.
    EMBER_CHECK(base.is_non_overlapping_and_dense() && offset >= 0, "autograd",
                "in-place operations on a view are supported only when its base is non-overlapping and dense "
                "(base of sizes ", base.sizes(), " and strides ", base.strides(), ")");
  }
  // A base-shaped tensor laid out as the base, and the region of the view in it.
  Tensor base_like(const Tensor& like) const {
    return empty_strided(base_sizes, base_strides, TensorOptions().dtype(like.dtype()));
  }
  Tensor region(const Tensor& base_like) const { return base_like.as_strided(sizes, strides, offset); }
};

// The base's history after an in-place op `fn` wrote into one of its views: the gradient of the
// base is the incoming one outside the view and fn's gradient of its self inside it; fn's other
// inputs get fn's gradients for them.
struct CopySlices final : Node {
  CopySlices(const Tensor& base, const Tensor& view, std::shared_ptr<Node> fn, size_t self_edge)
      : geometry(base, view), fn(std::move(fn)), self_edge(self_edge) {
    forward_op = this->fn->forward_op;
    add_input_edge(base);
    for (size_t i = 0; i < this->fn->num_outputs(); ++i) {
      if (i == self_edge) continue;
      next_edges_.push_back(this->fn->next_edge(i));
      output_meta_.push_back(this->fn->output_metadata(i));
    }
  }
  std::string name() const override { return "torch::autograd::CopySlices"; }
  variable_list apply(variable_list&& grads) override {
    variable_list out(num_outputs());
    if (!grads[0].defined()) return out;
    Tensor result = geometry.base_like(grads[0]);
    result.copy_(grads[0]);
    Tensor slice = geometry.region(result);
    variable_list res = fn->apply({slice.clone()});
    if (self_edge < res.size() && res[self_edge].defined()) {
      slice.copy_(res[self_edge]);
    } else {
      slice.zero_();
    }
    out[0] = std::move(result);
    for (size_t i = 0, o = 1; i < res.size(); ++i)
      if (i != self_edge) out[o++] = std::move(res[i]);
    return out;
  }
  void release_variables() override { fn->release_variables(); }
  ViewGeometry geometry;
  std::shared_ptr<Node> fn;
  size_t self_edge;
};

// A view's history regenerated from its base's: the view's gradient placed into a zero base.
struct AsStridedBackward final : Node {
  AsStridedBackward(const Tensor& base, const Tensor& view) : geometry(base, view) {
    add_input_edge(base);
  }
  std::string name() const override { return "AsStridedBackward0"; }
  variable_list apply(variable_list&& grads) override {
    if (!grads[0].defined()) return {Tensor()};
    Tensor result = geometry.base_like(grads[0]).zero_();
    geometry.region(result).copy_(grads[0]);
    return {result};
  }
  ViewGeometry geometry;
};

uint32_t version_of(const Tensor& t) { return t.unsafeGetTensorImpl()->storage()->version(); }

}  // namespace

void set_view_base(const Tensor& view, const Tensor& of, ViewCreation creation) {
  const AutogradMeta* om = get_meta(of);
  const bool of_is_view = om && om->base.defined();
  AutogradMeta& m = materialize_meta(view);
  m.base = of_is_view ? om->base : of;
  m.view_version = version_of(view);
  // PyTorch propagates creation_meta from a view to its views
  m.creation = creation != ViewCreation::kDefault ? creation : of_is_view ? om->creation : ViewCreation::kDefault;
  // PyTorch: a view made without recording (no_grad, inference mode) of a tensor that requires
  // grad requires grad too, with neither history nor an accumulator of its own (gradients through
  // it reach nothing); an in-place write on it with grad mode on raises.
  if ((creation == ViewCreation::kNoGrad || creation == ViewCreation::kInferenceMode) && of.requires_grad())
    view.unsafeGetTensorImpl()->set_requires_grad_flag(true);
}

void track_view(const Tensor& result, const Tensor& input, ViewCreation creation) {
  if (result.defined() && input.defined() && result.impl()->storage() == input.impl()->storage() &&
      !result.is_same(input))
    set_view_base(result, input, creation);
}

void fail_view_inplace(const char* op, const Tensor& view, bool indirect) {
  const AutogradMeta& m = *get_meta(view);
  const bool inference = m.creation == ViewCreation::kInferenceMode;
  const char* modified = indirect ? "its base or another view of its base has been" : "is being";
  const std::string what =
      m.creation == ViewCreation::kMultiOutput && m.grad_fn
          ? "Output " + std::to_string(m.output_nr) + " of " + m.grad_fn->name() + " is a view and " + modified +
                " modified inplace."
          : std::string("A view was created in ") + (inference ? "inference" : "no_grad") + " mode and " + modified +
                " modified inplace " + (inference ? "in normal mode." : "with grad mode enabled.");
  if (m.creation == ViewCreation::kMultiOutput) {
    ::ember::detail::fail(op, what, " This view is the output of a function that returns multiple views. Such "
                          "functions do not allow the output views to be modified inplace. You should replace the "
                          "inplace operation by an out-of-place one.");
  }
  ::ember::detail::fail(op, what, " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
                        "clarify your code by moving both the view and the inplace either both inside the ",
                        inference ? "inference_mode" : "no_grad",
                        " block (if you don't want the inplace to be tracked) or both outside (if you want the "
                        "inplace to be tracked).");
}

void refresh_view_grad_fn(const Tensor& view, AutogradMeta& m) {
  const uint32_t now = version_of(view);
  if (m.view_version == now) return;
  // A leaf base is never written with recording on, so the view's recorded history stays valid.
  if (!m.base.requires_grad() || m.base.is_leaf()) {
    m.view_version = now;
    return;
  }
  // A view made under no_grad or in inference mode has no history of its own to regenerate from,
  // nor has an output of a multi-view op (PyTorch raises too).
  if (m.creation != ViewCreation::kDefault) fail_view_inplace("autograd", view, /*indirect=*/true);
  m.view_version = now;
  detail::set_history(view, std::make_shared<AsStridedBackward>(m.base, view), 0);
}

void rebase_history(const Tensor& self, const std::shared_ptr<Node>& fn, size_t self_edge) {
  AutogradMeta* m = get_meta(self);
  if (!m || !m->base.defined()) {
    detail::set_history(self, fn, 0);
    return;
  }
  const Tensor base = m->base;
  detail::set_history(base, std::make_shared<CopySlices>(base, self, fn, self_edge), 0);
  detail::set_history(self, std::make_shared<AsStridedBackward>(base, self), 0);
  m->view_version = version_of(self);
}

}  // namespace ember::autograd
