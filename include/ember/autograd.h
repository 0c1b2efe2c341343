// Reverse-mode automatic differentiation, as libtorch's: grad modes, graph nodes, backward() and
// grad(), custom functions (Function<T>) and gradcheck. Ops record a node when an argument
// requires grad (see src/autograd/layer.h); an op's derivative sits beside its op struct.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <variant>
#include <vector>

#include "ember/tensor.h"

namespace ember {

// ---- grad modes ---------------------------------------------------------------------------------
struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};
bool is_grad_enabled();
void set_grad_enabled(bool enabled);

// Sets grad mode for a scope and restores the previous one.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled);
  ~AutoGradMode();
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  uint32_t saved_;
};
struct NoGradGuard : AutoGradMode {
  NoGradGuard() : AutoGradMode(false) {}
};

// libtorch's guards that send ops below the autograd layer for a scope: nothing is recorded and
// results do not require grad, as under NoGradGuard (which is what they are here). The older
// AutoNonVariableTypeMode(enabled) does so when enabled.
struct AutoDispatchBelowADInplaceOrView : AutoGradMode {
  AutoDispatchBelowADInplaceOrView() : AutoGradMode(false) {}
};
struct AutoDispatchBelowAutograd : AutoGradMode {
  AutoDispatchBelowAutograd() : AutoGradMode(false) {}
};
struct AutoNonVariableTypeMode : AutoGradMode {
  explicit AutoNonVariableTypeMode(bool enabled = true) : AutoGradMode(enabled ? false : GradMode::is_enabled()) {}
};

// No recording and results are inference tensors (is_inference()); nestable. InferenceMode(false)
// inside restores normal mode for its scope.
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true);
  ~InferenceMode();
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;
  static bool is_enabled();

 private:
  uint32_t saved_;
};

namespace autograd {
// libtorch's names in torch::autograd: a Variable is a Tensor since 1.0.
using Variable = Tensor;
using ::ember::AutoGradMode;
using ::ember::GradMode;
using ::ember::NoGradGuard;

using variable_list = std::vector<Tensor>;
using tensor_list = std::vector<Tensor>;

struct Node;
// A hook on a tensor's gradient (Tensor::register_hook): returns an undefined tensor to keep the
// gradient or a tensor of its shape to replace it. A removed hook leaves an empty slot.
using TensorHook = std::function<Tensor(const Tensor&)>;
using HookList = std::vector<TensorHook>;

// Where a gradient goes: input `input_nr` of `function`.
struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
  bool is_valid() const { return function != nullptr; }
};
// Room for the small arrays a node owns (edges, input metadata, saved tensors, formulas): a node
// that has a buffer carves them from it, so recording an op allocates the node and nothing else;
// requests that do not fit, and every request when there is no buffer, go to the thread's object
// cache (cpu_allocator::allocate_object).
class NodeArena {
 public:
  void reset(std::byte* begin, size_t bytes) {
    begin_ = next_ = begin;
    end_ = begin + bytes;
  }
  void* allocate(size_t bytes) {
    bytes = (bytes + 15) & ~size_t{15};
    if (static_cast<size_t>(end_ - next_) >= bytes) return std::exchange(next_, next_ + bytes);
    return cpu_allocator::allocate_object(bytes);
  }
  void deallocate(void* p, size_t bytes) {
    bytes = (bytes + 15) & ~size_t{15};
    auto* b = static_cast<std::byte*>(p);
    if (b < begin_ || b >= end_) {
      cpu_allocator::deallocate_object(p, bytes);
    } else if (b + bytes == next_) {
      next_ = b;  // the last block given out: a vector that grows may take its room again
    }
  }

 private:
  std::byte *begin_ = nullptr, *next_ = nullptr, *end_ = nullptr;
};
// The allocator of a node's arrays. A copy of such an array (made outside the node) allocates
// from the object cache, never from the node.
template <class T>
struct NodeAllocator {
  using value_type = T;
  NodeArena* arena = nullptr;
  NodeAllocator() = default;
  explicit NodeAllocator(NodeArena* a) noexcept : arena(a) {}
  template <class U>
  NodeAllocator(const NodeAllocator<U>& o) noexcept : arena(o.arena) {}  // NOLINT: rebinding
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    return static_cast<T*>(arena ? arena->allocate(bytes) : cpu_allocator::allocate_object(bytes));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (arena) {
      arena->deallocate(p, n * sizeof(T));
    } else {
      cpu_allocator::deallocate_object(p, n * sizeof(T));
    }
  }
  NodeAllocator select_on_container_copy_construction() const { return {}; }
  template <class U>
  bool operator==(const NodeAllocator<U>& o) const noexcept {
    return arena == o.arena;
  }
};
template <class T>
using node_vector = std::vector<T, NodeAllocator<T>>;
using edge_list = node_vector<Edge>;

// Shape and dtype of a forward input, so that the engine can sum a broadcast gradient back to
// the input's shape and cast it to the input's dtype.
struct InputMetadata {
  DimVector sizes;
  ScalarType dtype = kFloat;
};

// A node of the backward graph: it maps the gradients of a forward op's outputs to gradients of
// its inputs (one per next edge).
struct Node : std::enable_shared_from_this<Node> {
  Node();
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual std::string name() const = 0;
  virtual variable_list apply(variable_list&& grads) = 0;
  // Frees what the node saved for backward (after a backward that does not retain the graph).
  virtual void release_variables() {}

  const edge_list& next_edges() const { return next_edges_; }
  const Edge& next_edge(size_t i) const { return next_edges_[i]; }
  size_t num_outputs() const { return next_edges_.size(); }
  const InputMetadata& output_metadata(size_t i) const { return output_meta_[i]; }
  bool should_compute_output(size_t i) const { return i < next_edges_.size() && next_edges_[i].is_valid(); }
  // Creation order; the engine runs later-created nodes first, as PyTorch.
  uint64_t sequence_nr() const { return sequence_nr_; }

  // Adds an edge for a forward input (an invalid edge when it does not require grad).
  void add_input_edge(const Tensor& input);
  void reserve_edges(size_t n) {
    next_edges_.reserve(n);
    output_meta_.reserve(n);
  }
  // Non-leaf tensors that asked retain_grad(): output_nr and the slot their .grad reads.
  std::vector<std::pair<uint32_t, std::shared_ptr<Tensor>>> retained_grads;
  // Hooks of non-leaf tensors (output_nr, their list), run on the gradient before this node.
  std::vector<std::pair<uint32_t, std::shared_ptr<HookList>>> tensor_pre_hooks;
  // The forward op that made this node, recorded in anomaly mode for its error messages.
  const char* forward_op = nullptr;

 protected:
  NodeArena arena_;  // empty unless the derived node gives it a buffer
  edge_list next_edges_{NodeAllocator<Edge>(&arena_)};
  node_vector<InputMetadata> output_meta_{NodeAllocator<InputMetadata>(&arena_)};
  uint64_t sequence_nr_;
};

// Runs backward from `tensors`, accumulating into the .grad of the leaves.
void backward(const variable_list& tensors, const variable_list& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false);
// Queues fn to run on this thread when the backward pass running here has written its leaves'
// .grad (PyTorch's Engine::queue_callback; DistributedDataParallel waits for its all-reduces
// there). Only from within a backward pass, e.g. from a tensor hook.
void queue_callback(std::function<void()> fn);
// Returns the gradients of `outputs` with respect to `inputs` without touching .grad.
variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs = {},
                   std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                   bool allow_unused = false);

// ---- anomaly mode ------------------------------------------------------------------------------
// When enabled (process-wide, as PyTorch), nodes remember the forward op that made them and a NaN
// in a gradient produced by backward raises ember::Error naming the node and that op.
struct AnomalyMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard();
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool saved_;
};
// Runs fn with anomaly detection on (the scoped form of DetectAnomalyGuard).
template <class F>
decltype(auto) detect_anomaly(F&& fn) {
  DetectAnomalyGuard guard;
  return std::forward<F>(fn)();
}

// ---- custom functions ---------------------------------------------------------------------------

// A value kept in AutogradContext::saved_data (libtorch keeps IValues there).
class IValue {
 public:
  IValue() = default;
  IValue(Tensor t) : v_(std::move(t)) {}  // NOLINT
  IValue(double d) : v_(d) {}              // NOLINT
  IValue(bool b) : v_(b) {}                // NOLINT
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  IValue(I i) : v_(static_cast<int64_t>(i)) {}  // NOLINT
  IValue(std::string s) : v_(std::move(s)) {}   // NOLINT
  IValue(const char* s) : v_(std::string(s)) {} // NOLINT
  IValue(std::vector<int64_t> v) : v_(std::move(v)) {}  // NOLINT
  IValue(const Scalar& s) : v_(s) {}  // NOLINT

  bool isTensor() const { return std::holds_alternative<Tensor>(v_); }
  const Tensor& toTensor() const { return get<Tensor>("Tensor"); }
  double toDouble() const { return get<double>("Double"); }
  int64_t toInt() const { return get<int64_t>("Int"); }
  bool toBool() const { return get<bool>("Bool"); }
  const std::string& toStringRef() const { return get<std::string>("String"); }
  const std::vector<int64_t>& toIntVector() const { return get<std::vector<int64_t>>("IntList"); }
  const Scalar& toScalar() const { return get<Scalar>("Scalar"); }

 private:
  template <class T>
  const T& get(const char* what) const {
    const T* p = std::get_if<T>(&v_);
    EMBER_CHECK(p, "IValue", "Expected ", what, " but got another type");
    return *p;
  }
  std::variant<std::monostate, Tensor, double, bool, int64_t, std::string, std::vector<int64_t>, Scalar> v_;
};

class SavedVariable;
template <class T>
struct CppNode;

namespace detail {
struct CustomNodeBase;
void wrap_outputs(const std::shared_ptr<CustomNodeBase>& node, variable_list& outputs, bool record);
}  // namespace detail

// What a custom function's forward leaves for its backward.
class AutogradContext {
 public:
  AutogradContext();
  ~AutogradContext();
  void save_for_backward(variable_list to_save);
  variable_list get_saved_variables() const;
  void mark_non_differentiable(const variable_list& outputs);
  // Inputs the forward modified in place; each must be returned as an output, whose history then
  // continues from this call.
  void mark_dirty(const variable_list& inputs);
  // Whether backward receives zeros (the default) or undefined tensors as the gradients of the
  // outputs that got none.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  bool needs_input_grad(size_t tensor_index) const;
  std::unordered_map<std::string, IValue> saved_data;

  // Used by Function<T>::apply (not part of libtorch's surface).
  void finish_forward(const std::shared_ptr<Node>& node, const variable_list& outputs);
  bool is_non_differentiable(const Tensor& t) const;
  bool is_dirty(const Tensor& t) const;
  void release_variables();
  std::vector<bool> needs_input_grad_;
  bool materialize_grads_ = true;

 private:
  variable_list to_save_;
  std::vector<SavedVariable> saved_;
  std::weak_ptr<Node> node_;
  std::vector<TensorImpl*> non_differentiable_;
  std::vector<TensorImpl*> dirty_;
  friend void detail::wrap_outputs(const std::shared_ptr<detail::CustomNodeBase>&, variable_list&, bool);
};

namespace detail {
// The node of one custom-function call; forward_arg_is_tensor maps backward()'s results (one per
// forward argument) onto the next edges (one per Tensor argument).
struct CustomNodeBase : Node {
  AutogradContext ctx;
  std::vector<bool> forward_arg_is_tensor;
  std::vector<TensorImpl*> tensor_args;  // during the forward call only
  // Shape and dtype of each output (none for an undefined one), for the zeros that stand for the
  // gradients an output got none of.
  std::vector<std::optional<InputMetadata>> forward_outputs;
  variable_list apply(variable_list&& grads) override;
  void release_variables() override { ctx.release_variables(); }
  virtual variable_list call_backward(variable_list grads) = 0;
};
void set_history(const Tensor& out, std::shared_ptr<Node> fn, uint32_t output_nr);
// wrap_outputs gives the forward's outputs their history (none when !record), as PyTorch's
// _wrap_outputs: an input modified in place (mark_dirty) continues from the call, an input
// returned unchanged is returned as a view of itself.

template <class A>
void collect_arg(CustomNodeBase& node, const A& a) {
  if constexpr (std::is_same_v<std::decay_t<A>, Tensor>) {
    node.forward_arg_is_tensor.push_back(true);
    node.tensor_args.push_back(a.unsafeGetTensorImpl());
    node.add_input_edge(a);
    node.ctx.needs_input_grad_.push_back(node.should_compute_output(node.num_outputs() - 1));
  } else {
    node.forward_arg_is_tensor.push_back(false);
  }
}
}  // namespace detail

template <class T>
struct CppNode final : detail::CustomNodeBase {
  std::string name() const override { return name_; }
  variable_list call_backward(variable_list grads) override { return T::backward(&ctx, std::move(grads)); }
  std::string name_ = "CppNode";
};

// A differentiable function written by the user: T has
//   static R forward(AutogradContext* ctx, Args...);   // R is Tensor or variable_list
//   static variable_list backward(AutogradContext* ctx, variable_list grad_outputs);
// and T::apply(args...) runs forward and records T::backward, one gradient per forward argument.
template <class T>
struct Function {
  template <class... Args>
  static auto apply(Args&&... args) {
    auto node = std::make_shared<CppNode<T>>();
    node->name_ = "CppNode";
    (detail::collect_arg(*node, args), ...);
    bool any = false;
    for (size_t i = 0; i < node->num_outputs(); ++i) any = any || node->should_compute_output(i);
    const bool record = any && GradMode::is_enabled();
    using R = decltype(T::forward(&node->ctx, std::forward<Args>(args)...));
    variable_list outputs;
    {
      AutoGradMode no_grad(false);
      if constexpr (std::is_same_v<R, Tensor>) {
        outputs.push_back(T::forward(&node->ctx, std::forward<Args>(args)...));
      } else {
        outputs = T::forward(&node->ctx, std::forward<Args>(args)...);
      }
    }
    detail::wrap_outputs(node, outputs, record);
    if constexpr (std::is_same_v<R, Tensor>) {
      return outputs[0];
    } else {
      return R(std::move(outputs));
    }
  }
};

// ---- gradcheck ----------------------------------------------------------------------------------
// Compares the analytic Jacobian of fn at `inputs` (float64 tensors; those requiring grad are
// checked) with central finite differences; throws ember::Error naming the worst element on
// mismatch (|a - n| > atol + rtol * |n|), returns true otherwise.
bool gradcheck(const std::function<variable_list(const variable_list&)>& fn, const variable_list& inputs,
               double eps = 1e-6, double atol = 1e-5, double rtol = 1e-3);
bool gradcheck(const std::function<Tensor(const variable_list&)>& fn, const variable_list& inputs,
               double eps = 1e-6, double atol = 1e-5, double rtol = 1e-3);
// PyTorch's gradgradcheck: gradchecks the map (inputs, grad_outputs) -> grad(fn(inputs), inputs,
// grad_outputs, create_graph) w.r.t. the inputs requiring grad and the grad_outputs (random
// float64 ones, from a fixed seed, when none are given).
bool gradgradcheck(const std::function<variable_list(const variable_list&)>& fn, const variable_list& inputs,
                   const variable_list& grad_outputs = {}, double eps = 1e-6, double atol = 1e-5,
                   double rtol = 1e-3);
bool gradgradcheck(const std::function<Tensor(const variable_list&)>& fn, const variable_list& inputs,
                   const variable_list& grad_outputs = {}, double eps = 1e-6, double atol = 1e-5,
                   double rtol = 1e-3);

}  // namespace autograd
}  // namespace ember
