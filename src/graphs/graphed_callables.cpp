// make_graphed_callables: a module's forward and its backward captured as two graphs sharing one
// pool (torch.cuda.make_graphed_callables). Each call copies its inputs into the static inputs and
// replays the forward graph; its output carries a node whose backward copies the incoming
// gradient into the static gradient and replays the backward graph, which computed the gradients
// of the inputs that require grad and of the module's parameters (autograd::grad, so .grad is
// left to the engine that runs the node: it accumulates them as an eager backward would).
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/graphs.h"

namespace ember::graphs {

using autograd::variable_list;

namespace {

struct Graphed {
  std::function<Tensor(const std::vector<Tensor>&)> forward;
  std::vector<Tensor> static_inputs;
  std::vector<size_t> grad_inputs;  // the static inputs that require grad
  std::vector<Tensor> params;       // the module's parameters that require grad
  Graph fwd, bwd;
  Tensor static_output, static_grad_output;
  variable_list static_grads;  // one per grad input, then one per parameter (undefined when unused)
};

struct GraphedBackward final : autograd::Node {
  std::shared_ptr<Graphed> g;
  std::string name() const override { return "GraphedBackward"; }
  variable_list apply(variable_list&& grads) override {
    {
      NoGradGuard no_grad;
      if (!grads.empty() && grads[0].defined()) {
        g->static_grad_output.copy_(grads[0]);
      } else {
        g->static_grad_output.zero_();
      }
    }
    g->bwd.replay();
    variable_list out;
    out.reserve(g->static_grads.size());
    for (const Tensor& t : g->static_grads) out.push_back(t.defined() ? t.detach() : Tensor());
    return out;
  }
};

variable_list differentiated(const Graphed& g) {
  variable_list v;
  for (size_t i : g.grad_inputs) v.push_back(g.static_inputs[i]);
  v.insert(v.end(), g.params.begin(), g.params.end());
  return v;
}

}  // namespace

GraphedCallable make_graphed_callables(const std::shared_ptr<nn::Module>& module,
                                       std::function<Tensor(const std::vector<Tensor>&)> forward,
                                       const std::vector<Tensor>& sample_args, int warmup_iters) {
  EMBER_CHECK(module != nullptr, "make_graphed_callables", "the module is null");
  auto g = std::make_shared<Graphed>();
  g->forward = std::move(forward);
  for (size_t i = 0; i < sample_args.size(); ++i) {
    const Tensor& s = sample_args[i];
    EMBER_CHECK(s.defined(), "make_graphed_callables", "sample argument ", i, " is undefined");
    Tensor t = s.detach().clone();
    if (s.requires_grad()) {
      t.requires_grad_(true);
      g->grad_inputs.push_back(i);
    }
    g->static_inputs.push_back(t);
  }
  for (const Tensor& p : module->parameters())
    if (p.requires_grad()) g->params.push_back(p);
  const variable_list wrt = differentiated(*g);
  // Warm-up on side tensors: lazy initialization and caches happen outside the capture.
  for (int i = 0; i < warmup_iters; ++i) {
    const Tensor out = g->forward(g->static_inputs);
    if (out.requires_grad() && !wrt.empty())
      (void)autograd::grad({out}, wrt, {ones_like(out)}, std::nullopt, false, /*allow_unused=*/true);
  }
  {
    GraphCapture capture(g->fwd);
    g->static_output = g->forward(g->static_inputs);
  }
  EMBER_CHECK(g->static_output.defined(), "make_graphed_callables", "the forward returned an undefined tensor");
  if (g->static_output.requires_grad() && !wrt.empty()) {
    g->static_grad_output = zeros_like(g->static_output.detach());
    GraphCapture capture(g->bwd, g->fwd.pool());
    g->static_grads =
        autograd::grad({g->static_output}, wrt, {g->static_grad_output}, false, false, /*allow_unused=*/true);
  }
  return [g](const std::vector<Tensor>& args) -> Tensor {
    EMBER_CHECK(args.size() == g->static_inputs.size(), "graphed callable", "expected ", g->static_inputs.size(),
                " arguments, got ", args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      const Tensor& s = g->static_inputs[i];
      EMBER_CHECK(args[i].defined() && args[i].sizes().equals(s.sizes()) && args[i].dtype() == s.dtype(),
                  "graphed callable", "argument ", i, " must have the sample's shape ", s.sizes(), " and dtype ",
                  s.dtype(), ", got ", args[i].defined() ? args[i].sizes() : IntArrayRef(), " ",
                  args[i].defined() ? args[i].dtype() : ScalarType::Undefined);
      EMBER_CHECK(args[i].requires_grad() == s.requires_grad() || !GradMode::is_enabled(), "graphed callable",
                  "argument ", i, (s.requires_grad() ? " must" : " must not"),
                  " require grad, as the sample argument did");
    }
    {
      NoGradGuard no_grad;
      for (size_t i = 0; i < args.size(); ++i) g->static_inputs[i].copy_(args[i]);
    }
    g->fwd.replay();
    // A tensor of its own over the static output's memory (which the next call overwrites).
    const TensorImpl* so = g->static_output.unsafeGetTensorImpl();
    Tensor out(IntrusivePtr<TensorImpl>::make(so->storage(), so->dtype(), so->sizes(), so->strides(),
                                              so->storage_offset()));
    if (GradMode::is_enabled() && g->bwd.captured()) {
      auto node = std::make_shared<GraphedBackward>();
      node->g = g;
      for (size_t i : g->grad_inputs) node->add_input_edge(args[i]);
      for (const Tensor& p : g->params) node->add_input_edge(p);
      autograd::detail::set_history(out, node, 0);
    }
    return out;
  };
}

}  // namespace ember::graphs
