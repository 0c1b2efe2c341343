// The backward engine: counts dependencies from the roots, then runs nodes from a ready queue
// ordered as PyTorch's (later-created first), summing each node's incoming gradients before it
// runs. Each backward runs on its calling thread with its own state; graphs of several threads
// may share leaves, whose accumulation is locked. Leaves are written only once the whole graph
// ran, so an error in backward leaves every .grad as it was; only leaves with post-accumulate
// hooks (DistributedDataParallel's) are written as soon as their gradient is complete.
#include <atomic>
#include <mutex>
#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "autograd/engine.h"
#include "autograd/variable.h"
#include "dispatch/dispatch.h"
#include "ember/factory.h"
#include "ember/pointwise.h"
#include "ember/shape.h"
#include "profiler/hooks.h"

namespace ember::autograd {

namespace {
// Per thread, as PyTorch's: nodes made on one thread are ordered by creation, which is all the
// engine's ready queue needs, and a recorded op pays no atomic instruction.
constinit thread_local uint64_t next_sequence_nr = 0;
// The callbacks queued by the backward pass running on this thread (null outside one).
constinit thread_local std::vector<std::function<void()>>* final_callbacks = nullptr;
std::atomic<bool> anomaly_enabled{false};
}  // namespace

bool AnomalyMode::is_enabled() { return anomaly_enabled.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool enabled) { anomaly_enabled.store(enabled, std::memory_order_relaxed); }
DetectAnomalyGuard::DetectAnomalyGuard() : saved_(AnomalyMode::is_enabled()) { AnomalyMode::set_enabled(true); }
DetectAnomalyGuard::~DetectAnomalyGuard() { AnomalyMode::set_enabled(saved_); }

Node::Node() : sequence_nr_(next_sequence_nr++) {}
uint64_t peek_sequence_nr() { return next_sequence_nr; }

void Node::add_input_edge(const Tensor& input) {
  const bool wanted = input.defined() && input.requires_grad();
  next_edges_.push_back(wanted ? gradient_edge(input) : Edge{});
  InputMetadata& meta = output_meta_.emplace_back();
  if (input.defined()) {
    meta.sizes.assign(input.sizes().begin(), input.sizes().end());
    meta.dtype = input.dtype();
  }
}

namespace {

// PyTorch's layout contract: a dense leaf's .grad has the leaf's strides (a transposed product
// from a linear backward is copied, so optimizers' multi-tensor kernels see matching layouts);
// other leaves get contiguous gradients.
DimVector grad_strides(const Tensor& v) {
  return v.is_non_overlapping_and_dense() ? DimVector(v.strides())
                                          : contiguous_strides(v.sizes());
}
bool obeys_layout(const Tensor& g, const Tensor& v) { return g.strides().equals(grad_strides(v).ref()); }

// Accumulates into a leaf's .grad: the first gradient becomes .grad when nothing else holds it
// or its storage (PyTorch steals it too, so a backward's peak memory holds one copy of each
// gradient) and is copied otherwise (never an alias of a tensor the caller holds); later ones
// are added (in place, unless the graph of this backward is being recorded).
struct AccumulateGrad final : Node {
  explicit AccumulateGrad(Tensor v) : variable(std::move(v)) {
    sequence_nr_ = UINT64_MAX;  // run as soon as ready, as PyTorch
  }
  std::string name() const override { return "torch::autograd::AccumulateGrad"; }
  variable_list apply(variable_list&& grads) override {
    Tensor g = std::move(grads[0]);
    if (!g.defined()) return {};
    const std::lock_guard<std::mutex> lock(mutex);
    Tensor& grad = variable.mutable_grad();
    if (!grad.defined()) {
      if (GradMode::is_enabled()) {
        grad = g.clone();
      } else if (g.use_count() == 1 && g.impl()->storage()->use_count() == 1 && obeys_layout(g, variable) &&
                 !g.requires_grad()) {
        grad = std::move(g);
      } else {
        grad = empty_strided(variable.sizes(), grad_strides(variable).ref(), g.options());
        grad.copy_(g.detach());
      }
    } else if (!GradMode::is_enabled()) {
      grad.add_(g);
    } else {
      grad = grad + g;
    }
    if (profiler::hooks::observed()) {  // the profiler's memory view: a parameter and its gradient
      profiler::hooks::note_tensor(variable, profiler::MemoryCategory::Parameter);
      profiler::hooks::note_tensor(grad, profiler::MemoryCategory::Gradient);
    }
    return {};
  }
  // The leaf's post-accumulate hooks (null when none): the engine accumulates such a leaf as
  // soon as it is ready and runs them after.
  const std::vector<std::function<void(const Tensor&)>>* post_hooks() const {
    const AutogradMeta* m = get_meta(variable);
    return m ? m->post_accumulate_hooks.get() : nullptr;
  }
  Tensor variable;
  std::mutex mutex;  // backward passes of several threads may reach one leaf
};

// Runs the hooks registered on the tensors whose gradients enter `node`.
void run_tensor_hooks(const Node& node, variable_list& in) {
  for (const auto& [nr, hooks] : node.tensor_pre_hooks) {
    if (nr >= in.size() || !in[nr].defined()) continue;
    for (size_t h = 0; h < hooks->size(); ++h) {
      const TensorHook& hook = (*hooks)[h];
      if (!hook) continue;
      Tensor r = hook(in[nr]);
      if (!r.defined()) continue;
      EMBER_CHECK(r.sizes().equals(in[nr].sizes()), "register_hook", "hook '", h,
                  "' has changed the size of value: the gradient has shape ", in[nr].sizes(),
                  " but the hook returned shape ", r.sizes());
      in[nr] = std::move(r);
    }
  }
}

// Anomaly mode: a NaN in a gradient a node produced names the node and its forward op.
void check_anomaly(const Node& node, const variable_list& out) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].defined() || !is_floating_type(out[i].dtype())) continue;
    EMBER_CHECK(!out[i].isnan().any().item<bool>(), node.name().c_str(), "Function '", node.name(),
                "' returned nan values in its ", i, "th output. The node was created by the forward op '",
                node.forward_op ? node.forward_op : "unknown", "'.");
  }
}

// Gives a gradient the shape and dtype of the forward input it belongs to.
Tensor validate(const Node& node, size_t i, Tensor g) {
  if (!g.defined()) return g;
  const InputMetadata& meta = node.output_metadata(i);
  if (!g.sizes().equals(meta.sizes)) {
    bool expandable = g.dim() >= static_cast<int64_t>(meta.sizes.size());
    const int64_t lead = g.dim() - static_cast<int64_t>(meta.sizes.size());
    for (size_t d = 0; expandable && d < meta.sizes.size(); ++d)
      expandable = meta.sizes[d] == g.size(lead + static_cast<int64_t>(d)) || meta.sizes[d] == 1;
    EMBER_CHECK(expandable, node.name().c_str(), "Function ", node.name(), " returned an invalid gradient at index ",
                i, " - got ", g.sizes(), " but expected shape compatible with ", IntArrayRef(meta.sizes));
    g = sum_to(g, meta.sizes);
  }
  if (g.dtype() != meta.dtype) g = g.to(meta.dtype);
  return g;
}

// The thread's observers (the profiler) see each node run as PyTorch names it: the range
// "autograd::engine::evaluate_function: <node>" around the node's own range and around what the
// engine does with its gradients (shaping them to the inputs' sizes and dtypes, summing the ones
// that meet), both with the sequence number of the forward op that recorded the node (-1 for a
// leaf's AccumulateGrad).
int64_t observed_sequence_nr(const Node& node) {
  return node.sequence_nr() == UINT64_MAX ? -1 : static_cast<int64_t>(node.sequence_nr());
}
struct EvaluateRange {
  std::optional<dispatch::ObservedRange> range;
  explicit EvaluateRange(const Node& node, bool observed = true) {
    if (observed && dispatch::observing())
      range.emplace(("autograd::engine::evaluate_function: " + node.name()).c_str(), RangeKind::BackwardNode,
                    observed_sequence_nr(node));
  }
};

// Runs a node (inside its EvaluateRange).
variable_list apply_node(Node& node, variable_list&& in) {
  if (!dispatch::observing()) return node.apply(std::move(in));
  const dispatch::ObservedRange call(node.name().c_str(), RangeKind::BackwardNode, observed_sequence_nr(node));
  return node.apply(std::move(in));
}

struct ReadyOrder {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

// Gradients arriving at a node's inputs, summed.
void accumulate(variable_list& buffer, uint32_t pos, const Tensor& g) {
  if (!g.defined()) return;
  if (buffer.size() <= pos) buffer.resize(pos + 1);
  buffer[pos] = buffer[pos].defined() ? buffer[pos] + g : g;
}

// Runs the graph behind `outputs`; with `inputs`, returns their gradients instead of accumulating.
variable_list run_graph(const variable_list& outputs, const variable_list& grad_outputs, bool keep_graph,
                        bool create_graph, const variable_list& inputs, bool allow_unused) {
  AutoGradMode mode(create_graph);
  std::vector<std::function<void()>> callbacks;
  struct CallbackScope {
    std::vector<std::function<void()>>* saved;
    ~CallbackScope() { final_callbacks = saved; }
  } callback_scope{std::exchange(final_callbacks, &callbacks)};
  // Backward is not autocast: each backward op runs in the dtypes its forward op was cast to.
  dispatch::autocast_impl::Suspend no_autocast;
  std::vector<Edge> roots;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    EMBER_CHECK(out.requires_grad(), "backward", "element ", i,
                " of tensors does not require grad and does not have a grad_fn");
    roots.push_back(gradient_edge(out));
  }

  // Dependencies: how many edges point at each reachable node.
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> stack;
  std::unordered_set<Node*> seen;
  for (const Edge& e : roots)
    if (seen.insert(e.function.get()).second) stack.push_back(e.function.get());
  std::vector<Node*> order;  // discovery order (for the needed-pass below)
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    order.push_back(n);
    for (const Edge& e : n->next_edges()) {
      if (!e.is_valid()) continue;
      ++deps[e.function.get()];
      if (seen.insert(e.function.get()).second) stack.push_back(e.function.get());
    }
  }

  // grad(): capture the gradients reaching the inputs; run only nodes leading to one of them.
  const bool capture = !inputs.empty();
  std::vector<Edge> targets;
  std::unordered_map<Node*, bool> needed;
  variable_list captured(inputs.size());
  if (capture) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      EMBER_CHECK(inputs[i].requires_grad(), "grad", "One of the differentiated Tensors does not require grad");
      targets.push_back(gradient_edge(inputs[i]));
    }
    std::unordered_set<Node*> target_nodes;
    for (const Edge& t : targets) target_nodes.insert(t.function.get());
    // Reverse topological evaluation by fixed point over the discovered nodes (graphs are small).
    bool changed = true;
    while (changed) {
      changed = false;
      for (Node* n : order) {
        if (needed[n]) continue;
        for (const Edge& e : n->next_edges()) {
          if (e.is_valid() && (target_nodes.count(e.function.get()) || needed[e.function.get()])) {
            needed[n] = changed = true;
            break;
          }
        }
      }
    }
  }

  std::unordered_map<Node*, variable_list> buffers;
  std::vector<std::pair<Node*, variable_list>> leaf_updates;  // applied once the graph ran
  const bool anomaly = AnomalyMode::is_enabled();
  std::priority_queue<Node*, std::vector<Node*>, ReadyOrder> ready;
  for (size_t i = 0; i < roots.size(); ++i) accumulate(buffers[roots[i].function.get()], roots[i].input_nr, grad_outputs[i]);
  for (const Edge& e : roots) {
    Node* n = e.function.get();
    if (deps[n] == 0 && seen.erase(n)) ready.push(n);  // `seen` doubles as "not queued yet"
  }

  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    variable_list in = std::move(buffers[node]);
    buffers.erase(node);
    if (in.empty()) in.resize(1);
    run_tensor_hooks(*node, in);
    if (capture) {
      for (size_t i = 0; i < targets.size(); ++i)
        if (targets[i].function.get() == node && targets[i].input_nr < in.size()) captured[i] = in[targets[i].input_nr];
      if (!needed[node]) continue;
    }
    auto* const leaf = node->num_outputs() == 0 ? dynamic_cast<AccumulateGrad*>(node) : nullptr;
    const EvaluateRange evaluating(*node, !leaf);
    for (auto& [nr, slot] : node->retained_grads) {
      if (nr >= in.size() || !in[nr].defined()) continue;
      *slot = slot->defined() ? *slot + in[nr] : (create_graph ? in[nr].clone() : in[nr].detach().clone());
    }
    if (leaf) {
      if (const auto* hooks = leaf->post_hooks()) {
        const EvaluateRange leaf_range(*leaf);
        const bool accumulated = in[0].defined();
        apply_node(*leaf, std::move(in));
        for (size_t h = 0; accumulated && h < hooks->size(); ++h)
          if ((*hooks)[h]) (*hooks)[h](leaf->variable);
      } else {
        leaf_updates.emplace_back(node, std::move(in));
      }
      continue;
    }
    variable_list out = apply_node(*node, std::move(in));
    if (anomaly) check_anomaly(*node, out);
    if (!keep_graph) node->release_variables();
    for (size_t i = 0; i < node->num_outputs(); ++i) {
      const Edge& e = node->next_edge(i);
      if (!e.is_valid()) continue;
      Node* next = e.function.get();
      if (i < out.size()) accumulate(buffers[next], e.input_nr, validate(*node, i, std::move(out[i])));
      if (--deps[next] == 0) ready.push(next);
    }
  }

  for (auto& [node, in] : leaf_updates) {
    const EvaluateRange evaluating(*node);
    apply_node(*node, std::move(in));
  }
  for (size_t i = 0; i < callbacks.size(); ++i) callbacks[i]();  // a callback may queue more
  if (capture) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      EMBER_CHECK(captured[i].defined() || allow_unused, "grad",
                  "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True "
                  "if this is the desired behavior.");
      if (captured[i].defined() && !create_graph) captured[i] = captured[i].detach();
    }
  }
  return captured;
}

variable_list make_grads(const variable_list& outputs, const variable_list& grad_outputs) {
  variable_list grads;
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor g = i < grad_outputs.size() ? grad_outputs[i] : Tensor();
    if (!g.defined()) {
      EMBER_CHECK(outputs[i].numel() == 1, "backward", "grad can be implicitly created only for scalar outputs");
      g = ones_like(outputs[i]);
    } else {
      EMBER_CHECK(g.sizes().equals(outputs[i].sizes()), "backward", "Mismatch in shape: grad_output[", i,
                  "] has a shape of ", g.sizes(), " and output[", i, "] has a shape of ", outputs[i].sizes(), ".");
      if (g.dtype() != outputs[i].dtype()) g = g.to(outputs[i].dtype());
    }
    grads.push_back(g);
  }
  return grads;
}

}  // namespace

std::shared_ptr<Node> make_accumulate_grad(const Tensor& leaf) {
  return std::allocate_shared<AccumulateGrad>(cpu_allocator::ObjectAllocator<AccumulateGrad>(), leaf);
}

unsigned register_post_accumulate_grad_hook(const Tensor& leaf, std::function<void(const Tensor&)> fn) {
  EMBER_CHECK(leaf.is_leaf(), "register_post_accumulate_grad_hook",
              "post accumulate grad hooks cannot be registered on non-leaf tensors");
  EMBER_CHECK(leaf.requires_grad(), "register_post_accumulate_grad_hook",
              "cannot register a hook on a tensor that doesn't require gradient");
  AutogradMeta& m = materialize_meta(leaf);
  if (!m.post_accumulate_hooks)
    m.post_accumulate_hooks = std::make_unique<std::vector<std::function<void(const Tensor&)>>>();
  m.post_accumulate_hooks->push_back(std::move(fn));
  return static_cast<unsigned>(m.post_accumulate_hooks->size() - 1);
}

void remove_post_accumulate_grad_hook(const Tensor& leaf, unsigned handle) {
  AutogradMeta* m = get_meta(leaf);
  EMBER_CHECK(m && m->post_accumulate_hooks && handle < m->post_accumulate_hooks->size(),
              "remove_post_accumulate_grad_hook", "Invalid handle ", handle,
              " passed to remove_post_accumulate_grad_hook");
  (*m->post_accumulate_hooks)[handle] = nullptr;
}

void queue_callback(std::function<void()> fn) {
  EMBER_CHECK(final_callbacks, "queue_callback", "Final callbacks can only be installed during backward pass.");
  final_callbacks->push_back(std::move(fn));
}

void backward(const variable_list& tensors, const variable_list& grad_tensors, std::optional<bool> retain_graph,
              bool create_graph) {
  run_graph(tensors, make_grads(tensors, grad_tensors), retain_graph.value_or(create_graph), create_graph, {}, false);
}

variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs,
                   std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  EMBER_CHECK(!inputs.empty(), "grad", "grad requires non-empty inputs.");
  return run_graph(outputs, make_grads(outputs, grad_outputs), retain_graph.value_or(create_graph), create_graph,
                   inputs, allow_unused);
}

}  // namespace ember::autograd
