// ember::fx: programs captured as graphs of ops, rewritten by ordinary code and run again as
// modules (PyTorch's torch.fx). See docs/fx.md.
//
//   auto gm = fx::symbolic_trace(model, x);   // a GraphModule: an nn::Module running the graph
//   std::cout << gm->code();                   // one op per line
//   fx::optimize_for_inference(*gm);           // conv-bn folding, conv-activation fusion, dropout/identity removal
//   Tensor y = gm->forward(x);
#pragma once
#include <cstddef>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/fx/fused.h"
#include "ember/jit.h"
#include "ember/nn/module.h"
#include "ember/nn/pimpl.h"

namespace ember::fx {

class Node;
class Graph;
class GraphModule;

// FX's node kinds.
enum class OpKind { Placeholder, GetAttr, CallFunction, CallModule, CallMethod, Output };
const char* to_string(OpKind op);  // "placeholder", "get_attr", ...

// An argument of a node: a node, a constant (jit::IValue: None, bool, int, float, str, int list),
// or a list or tuple of arguments.
class Argument {
 public:
  Argument() = default;  // None
  Argument(Node* node) : node_(node) {}  // NOLINT
  Argument(jit::IValue value) : value_(std::move(value)) {}  // NOLINT
  static Argument list(std::vector<Argument> items, bool tuple = false);

  bool is_node() const { return node_ != nullptr; }
  bool is_list() const { return kind_ != Kind::Value; }
  bool is_tuple() const { return kind_ == Kind::Tuple; }
  Node* node() const { return node_; }
  const jit::IValue& value() const { return value_; }
  const std::vector<Argument>& items() const { return items_; }
  // Calls fn on every node this argument references.
  void for_each_node(const std::function<void(Node*)>& fn) const;
  // This argument with each referenced node replaced by fn(node).
  Argument map_nodes(const std::function<Argument(Node*)>& fn) const;

 private:
  enum class Kind { Value, List, Tuple };
  Kind kind_ = Kind::Value;
  Node* node_ = nullptr;
  jit::IValue value_;
  std::vector<Argument> items_;
};
using Kwargs = std::vector<std::pair<std::string, Argument>>;
std::ostream& operator<<(std::ostream& os, const Argument& a);

class Node {
 public:
  const std::string& name() const { return name_; }
  OpKind op() const { return op_; }
  // call_function: the op's PyTorch name ("add", "conv2d"); call_module, get_attr: a qualified
  // name ("layer1.0.conv1"); call_method: the method; placeholder: the input's name.
  const std::string& target() const { return target_; }
  const std::vector<Argument>& args() const { return args_; }
  const Kwargs& kwargs() const { return kwargs_; }
  void set_args(std::vector<Argument> args);
  void set_kwargs(Kwargs kwargs);
  void set_arg(size_t i, Argument a);
  void set_target(std::string target);
  // The nodes that read this one, in the order they started to.
  const std::vector<Node*>& users() const { return users_; }
  std::vector<Node*> all_input_nodes() const;
  Graph& graph() const { return *graph_; }
  Node* prev() const;  // null at the ends
  Node* next() const;
  bool erased() const { return erased_; }
  // Whether dead code elimination must keep the node though nothing reads it: placeholders,
  // the output, in-place ops (a name ending in '_').
  bool is_impure() const;

  // Makes every user read `replacement` instead; returns the users changed.
  std::vector<Node*> replace_all_uses_with(Node* replacement);
  void replace_input_with(Node* old_input, Node* new_input);

  // Filled by passes: ShapeProp sets "shape" (int list) and "dtype" (str).
  std::map<std::string, jit::IValue> meta;

  // "%relu : call_function[target=relu](args = (%x,), kwargs = {})", as FX's format_node.
  std::string format() const;

 private:
  friend class Graph;
  Node() = default;
  void set_inputs(std::vector<Argument> args, Kwargs kwargs);
  void remove_user(Node* user);
  Graph* graph_ = nullptr;
  std::list<std::unique_ptr<Node>>::iterator pos_;
  std::string name_;
  OpKind op_ = OpKind::CallFunction;
  std::string target_;
  std::vector<Argument> args_;
  Kwargs kwargs_;
  std::vector<Node*> users_;
  bool erased_ = false;
};

class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) = delete;

  // The nodes in order (a snapshot: editing while iterating it is safe).
  std::vector<Node*> nodes() const;
  size_t size() const { return nodes_.size(); }
  Node* find(const std::string& name) const;  // null if no node has that name
  Node* output_node() const;                  // null if none yet

  // Creates a node at the insertion point (the end unless inside an inserting_* scope). The name
  // is made unique from `name` (or the target) as FX does: relu, relu_1, ...
  Node* create_node(OpKind op, std::string target, std::vector<Argument> args = {}, Kwargs kwargs = {},
                    const std::string& name = "");
  Node* placeholder(const std::string& name);
  Node* get_attr(const std::string& qualified_name);
  Node* call_function(const std::string& op, std::vector<Argument> args = {}, Kwargs kwargs = {});
  Node* call_module(const std::string& qualified_name, std::vector<Argument> args = {}, Kwargs kwargs = {});
  Node* call_method(const std::string& method, std::vector<Argument> args = {}, Kwargs kwargs = {});
  Node* output(Argument result);
  // A copy of `node` (from any graph) whose node arguments are mapped by `map`.
  Node* node_copy(const Node& node, const std::function<Argument(Node*)>& map);

  // Where create_node inserts while the returned scope lives (then the previous point again).
  class InsertPoint {
   public:
    ~InsertPoint();
    InsertPoint(const InsertPoint&) = delete;
    InsertPoint& operator=(const InsertPoint&) = delete;

   private:
    friend class Graph;
    InsertPoint(Graph& g, Node* before);
    Graph& graph_;
    Node* saved_;
  };
  [[nodiscard]] InsertPoint inserting_before(Node* node);
  [[nodiscard]] InsertPoint inserting_after(Node* node);

  // Removes a node nothing reads (ember::Error naming its users otherwise).
  void erase_node(Node* node);
  // Erases nodes whose results nobody reads, last first; returns whether any was.
  bool eliminate_dead_code();
  // Checks the graph: unique names, every node argument a live node of this graph defined
  // earlier, users lists consistent with arguments, one output node, last. ember::Error naming
  // the node and the reason.
  void lint() const;

  // FX's print_tabular: opcode, name, target, args, kwargs, one node per row.
  std::string tabular() const;
  void print_tabular(std::ostream& os) const;
  // The graph as code, one op per line, as FX's generated forward:
  //   def forward(self, x):
  //       conv1 = self.conv1(x)
  //       relu = torch.relu(conv1)
  //       return relu
  std::string python_code() const;
  // Bumped by every edit (GraphModule checks it is running what it compiled).
  uint64_t version() const { return version_; }

 private:
  friend class Node;
  std::string unique_name(const std::string& candidate);
  std::list<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Node>> erased_;  // kept so that a stale pointer is detected, not read freed
  std::unordered_map<std::string, Node*> by_name_;
  std::unordered_map<std::string, size_t> name_counts_;
  Node* insert_before_ = nullptr;  // null: at the end
  uint64_t version_ = 0;
};
std::ostream& operator<<(std::ostream& os, const Graph& g);

// An nn::Module that runs a graph. Its submodules, parameters and buffers are the root's (shared:
// training one trains the other), plus what passes add (folded convolutions, constants).
class GraphModule : public nn::Module {
 public:
  // Takes root's children, parameters and buffers, then compiles the graph (recompile()).
  // `invokers` give the forward of each call_module target (the tracer records them),
  // `constants` the tensors the graph reads that are not root's (registered as buffers).
  GraphModule(nn::Module& root, std::unique_ptr<Graph> graph,
              std::unordered_map<std::string, nn::detail::ForwardInvoker> invokers = {},
              std::vector<std::pair<std::string, Tensor>> constants = {});

  Graph& graph() { return *graph_; }
  const Graph& graph() const { return *graph_; }
  // Checks the graph against the module (lint, every call_module naming a submodule with a known
  // forward, every get_attr a tensor, every call_function a known op) and prepares it to run.
  // Call it after editing the graph; forward refuses a graph edited since.
  void recompile();
  std::string code() const { return graph_->python_code(); }

  // The traced program on its inputs: returns what it returned (a tensor, a tuple, a list).
  jit::IValue forward(std::vector<jit::IValue> inputs);
  Tensor forward(const Tensor& x);
  Tensor forward(const Tensor& a, const Tensor& b);

  // A submodule by qualified name ("layer1.0.conv1"), or null.
  std::shared_ptr<nn::Module> submodule(const std::string& qualified_name) const;
  // A parameter, buffer or constant by qualified name; throws if none.
  Tensor attribute(const std::string& qualified_name) const;
  // Adds or replaces a top-level submodule called through `invoke` (see add_module below).
  void set_submodule(const std::string& name, std::shared_ptr<nn::Module> module, nn::detail::ForwardInvoker invoke);
  template <class M>
  void add_module(const std::string& name, std::shared_ptr<M> module) {
    set_submodule(name, module, &nn::detail::invoke_forward<M, 1>);
  }
  // Adds a tensor the graph reads by get_attr (a buffer of this module) and returns its name,
  // made unique from `hint`.
  std::string add_constant(const std::string& hint, const Tensor& value);
  // The forward of each call_module target, as recorded when it was traced.
  nn::detail::ForwardInvoker invoker(const std::string& qualified_name) const;
  void set_invoker(const std::string& qualified_name, nn::detail::ForwardInvoker invoke);

  // Unregisters the top-level submodules no node calls or reads from (FX's
  // delete_all_unused_submodules; submodules shared with the root are left untouched inside).
  void delete_all_unused_submodules();
  // A new GraphModule sharing this one's modules and tensors, running `graph`.
  std::shared_ptr<GraphModule> with_graph(std::unique_ptr<Graph> graph);

 private:
  struct Plan;
  std::unique_ptr<Graph> graph_;
  std::unordered_map<std::string, nn::detail::ForwardInvoker> invokers_;
  std::shared_ptr<const Plan> plan_;
  uint64_t compiled_version_ = 0;
};

// Records a graph from a run of traced code. Tracing runs the code on the example inputs (so
// shapes and every value read are those of the examples: the path taken is what is recorded, as
// torch.jit.trace does). Each op called with a traced tensor becomes a call_function node; each
// call of a leaf module through its holder (`conv(x)`, or inside Sequential) a call_module node;
// parameters and buffers of the root become get_attr nodes, other tensors constants.
class Tracer {
 public:
  Tracer() = default;
  virtual ~Tracer() = default;
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // FX's default: modules of ember::nn are leaves, except the containers (Sequential,
  // ModuleList, ModuleDict); the user's own modules are traced through.
  virtual bool is_leaf_module(const nn::Module& module, const std::string& qualified_name);

  // Inputs given by index here are concrete: not graph inputs but constants of the graph, whose
  // values the traced code may read (item()); later calls ignore what is passed for them.
  std::vector<size_t> concrete_args;

  // Traces fn(inputs) with root's tensors and submodules known by name. fn returns a tensor, a
  // tuple or a list of tensors (as an IValue).
  std::shared_ptr<GraphModule> trace(nn::Module& root, const std::vector<Tensor>& inputs,
                                     const std::function<jit::IValue(const std::vector<Tensor>&)>& fn);

  struct State;  // the recorder the dispatch point and the module holders call while tracing (internal)
};

namespace detail {
template <class R>
jit::IValue to_ivalue(R&& r) {
  using D = std::decay_t<R>;
  if constexpr (requires { std::tuple_size<D>::value; }) {
    return std::apply([](auto&&... e) { return jit::IValue::tuple(to_ivalue(e)...); }, r);
  } else {
    return jit::IValue(std::forward<R>(r));
  }
}
template <class F, size_t... I>
jit::IValue call_with(F& fn, const std::vector<Tensor>& in, std::index_sequence<I...>) {
  return to_ivalue(fn(in[I]...));
}
}  // namespace detail

// Traces module->forward(inputs...): `module` is a holder (nn::Sequential) or a shared_ptr.
template <class M, class... T>
std::shared_ptr<GraphModule> symbolic_trace(M&& module, const T&... inputs) {
  Tracer tracer;
  auto& m = *module;
  auto fn = [&m](const auto&... x) { return m.forward(x...); };
  return tracer.trace(m, {inputs...}, [&](const std::vector<Tensor>& in) {
    return detail::call_with(fn, in, std::index_sequence_for<T...>());
  });
}
// Traces a free function of tensors.
template <class F, class... T>
std::shared_ptr<GraphModule> trace(F&& fn, const T&... inputs) {
  Tracer tracer;
  nn::Module root("Function");
  return tracer.trace(root, {inputs...}, [&](const std::vector<Tensor>& in) {
    return detail::call_with(fn, in, std::index_sequence_for<T...>());
  });
}

// Runs a GraphModule node by node; override a method to observe or change what a kind of node
// does. Values are jit::IValues (tensors, numbers, lists, tuples).
class Interpreter {
 public:
  explicit Interpreter(GraphModule& module);
  virtual ~Interpreter() = default;
  jit::IValue run(std::vector<jit::IValue> inputs);

  virtual jit::IValue run_node(Node& node);
  virtual jit::IValue placeholder(const std::string& target, const std::vector<jit::IValue>& args);
  virtual jit::IValue get_attr(const std::string& target);
  virtual jit::IValue call_function(const std::string& target, const std::vector<jit::IValue>& args,
                                    const std::vector<std::pair<std::string, jit::IValue>>& kwargs);
  virtual jit::IValue call_module(const std::string& target, const std::vector<jit::IValue>& args);
  virtual jit::IValue call_method(const std::string& target, const std::vector<jit::IValue>& args,
                                  const std::vector<std::pair<std::string, jit::IValue>>& kwargs);

 protected:
  jit::IValue fetch(const Argument& a) const;  // an argument's value in the current run
  GraphModule& module;
  std::unordered_map<const Node*, jit::IValue> env;

 private:
  std::vector<jit::IValue> inputs_;
  size_t next_input_ = 0;
};

// Builds a new graph while walking the old one: each method gets the node's arguments mapped
// into the new graph and returns the new node (by default, a copy of the old one).
class Transformer {
 public:
  explicit Transformer(GraphModule& module);
  virtual ~Transformer() = default;
  std::shared_ptr<GraphModule> transform();

  virtual Node* placeholder(const Node& old);
  virtual Node* get_attr(const Node& old);
  virtual Node* call_function(const Node& old, std::vector<Argument> args, Kwargs kwargs);
  virtual Node* call_module(const Node& old, std::vector<Argument> args, Kwargs kwargs);
  virtual Node* call_method(const Node& old, std::vector<Argument> args, Kwargs kwargs);

 protected:
  GraphModule& module;
  Graph& new_graph() { return *graph_; }

 private:
  std::unique_ptr<Graph> graph_;
};

// Runs the module on example inputs and records each node's result: meta["shape"] (int list)
// and meta["dtype"] (dtype name) for tensor results.
class ShapeProp : public Interpreter {
 public:
  using Interpreter::Interpreter;
  jit::IValue propagate(std::vector<jit::IValue> inputs) { return run(std::move(inputs)); }
  jit::IValue run_node(Node& node) override;
};

namespace subgraph_rewriter {
struct Match {
  Node* anchor;                                  // the node matching the pattern's output
  std::unordered_map<const Node*, Node*> nodes_map;  // pattern node -> graph node
};
// Finds the non-overlapping occurrences of `pattern` (a traced function: its placeholders match
// anything, its ops and constants must be equal, its inner results used only inside) and
// replaces each by `replacement` (traced with as many inputs). Returns the matches; gm is
// recompiled.
std::vector<Match> replace_pattern(GraphModule& gm, const GraphModule& pattern, const GraphModule& replacement);
}  // namespace subgraph_rewriter

// Folds each BatchNorm (1d/2d/3d, eval mode) that reads only a Conv1d/2d/3d or Linear's result
// into a copy of that layer (weight and bias), leaving the root's modules unchanged. Returns the
// number folded.
size_t fuse_conv_bn(GraphModule& gm);
// Each Conv1d/2d/3d module whose result only a ReLU reads (module, relu or relu_) becomes an
// nn::intrinsic::ConvReLU1d/2d/3d sharing the convolution (ember/nn/intrinsic.h): without a graph
// to record, one oneDNN convolution applying the ReLU as it writes. Returns the number fused.
size_t fuse_conv_relu(GraphModule& gm);
// The same for Hardswish (module, hardswish or hardswish_): the convolution becomes a module of
// Ember's, "ember::fx::ConvHardswish{1,2,3}d", sharing the convolution (child "0"), which applies
// hardswish as oneDNN writes the result (a post-op) when no graph records. Returns the number fused.
size_t fuse_conv_hardswish(GraphModule& gm);
// CPU fusion: each maximal group of pointwise call_function nodes (the ops fx::fusable names)
// whose results are read only inside the group, but for its last node's, becomes one call_module
// node running the group as one fx::FusedPointwise (ember/fx/fused.h): one pass over memory per
// block of the output, no intermediate tensor, differentiable. Groups of one op are left alone.
// Returns the number of fused nodes made. Works in training mode too.
size_t fuse_pointwise(GraphModule& gm);
// The inference passes, in order: fuse_conv_bn, removal of Dropout and Identity modules and of
// dropout ops in eval, Conv2d in channels_last (outputs contiguous again), fuse_conv_relu,
// fuse_conv_hardswish, the channel-blocked layout between convolutions where Winograd pays, a
// Conv2d added to a value nothing reads afterwards (a residual block's identity) writing the sum,
// and the ReLU after it, into that value as it convolves (oneDNN's sum post-op), fuse_pointwise,
// dead code and unused submodule elimination. Requires eval mode. Called inside a CPU autocast
// region, it folds the region's casts into the graph, as freezing a trace made under autocast
// does: the channels_last convolutions hold their weights and biases in the region's dtype (cast
// once rather than at each call) and the graph casts their inputs to it, so they run in that
// dtype inside and outside autocast regions.
void optimize_for_inference(GraphModule& gm);

// One file holding the graph (JSON, as safetensors metadata) and every tensor it reads
// (safetensors). Only graphs of placeholder, get_attr, call_function and output nodes are saved
// (trace with a Tracer whose is_leaf_module returns false to get one).
void save(const GraphModule& gm, const std::string& path);
std::shared_ptr<GraphModule> load(const std::string& path);

}  // namespace ember::fx
