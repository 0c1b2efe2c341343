// fx::GraphModule (a compiled plan of the graph, run per forward), Interpreter, Transformer and
// ShapeProp.
#include <sstream>

#include "ember/error.h"
#include "ember/fx.h"
#include "fx/fx_internal.h"

namespace ember::fx {

// ---- ops by name ----------------------------------------------------------------------------

const std::vector<const Builtin*>* find_overloads(const std::string& target) {
  // Python's operator.getitem is TorchScript's aten::__getitem__.
  return jit::find_builtin(target == "getitem" ? "aten::__getitem__" : target);
}

const Builtin& find_op(const std::string& target, const jit::IValue* values, size_t n, const std::string& node) {
  const std::string where = node.empty() ? std::string() : " (node '" + node + "')";
  const auto* overloads = find_overloads(target);
  EMBER_CHECK(overloads, "fx", "op '", target, "'", where,
              " is not in the op table (src/jit/builtins.cpp), so a graph cannot call it");
  if (const Builtin* b = jit::match_positional(*overloads, values, n)) return *b;
  std::ostringstream os;
  for (size_t i = 0; i < n; ++i) os << (i ? ", " : "") << values[i].tag_name();
  std::string schemas;
  for (const Builtin* b : *overloads) schemas += "\n  " + target + "(" + b->schema + ")";
  ::ember::detail::fail("fx", "op '", target, "'", where, " called with (", os.str(), ") matches none of its schemas:", schemas);
}

jit::IValue scalar_value(const Scalar& s, const char* op) {
  if (s.isBoolean()) return s.toBool();
  if (s.isIntegral(false)) return s.toLong();
  EMBER_CHECK(s.isFloatingPoint(), "fx", "op '", op, "' takes a complex scalar, which a graph cannot hold");
  return s.toDouble();
}

// ---- GraphModule ----------------------------------------------------------------------------

namespace {
// The value of an argument given the values of the nodes it reads.
template <class Lookup>
jit::IValue value_of(const Argument& a, const Lookup& lookup) {
  if (a.is_node()) return lookup(a.node());
  if (!a.is_list()) return a.value();
  std::vector<jit::IValue> items;
  items.reserve(a.items().size());
  for (const Argument& e : a.items()) items.push_back(value_of(e, lookup));
  if (a.is_tuple()) return jit::IValue(std::make_shared<jit::ivalue::Tuple>(std::move(items)));
  return jit::IValue(std::move(items));
}
}  // namespace

// A node argument as the plan reads it: a value slot (the step that computes it), a constant, or
// a list of those. The plan never holds a Node, so a graph edited later cannot make it read one.
struct PlanArg {
  int64_t slot = -1;
  jit::IValue value;
  std::vector<PlanArg> items;
  bool list = false, tuple = false;
};

struct GraphModule::Plan {
  struct Step {
    OpKind op;
    std::string name;                                       // the node's, for errors
    const std::vector<const Builtin*>* overloads = nullptr;  // call_function, call_method
    std::vector<std::string> kwnames;
    nn::Module* module = nullptr;  // call_module
    nn::detail::ForwardInvoker invoke = nullptr;
    Tensor attr;                 // get_attr
    std::vector<PlanArg> args;   // positional, then the keyword arguments' values
    std::vector<size_t> frees;   // slots read for the last time here, released after the step
  };
  std::vector<Step> steps;
  size_t inputs = 0;
};

namespace {
const jit::IValue& plan_value(const PlanArg& a, const std::vector<jit::IValue>& env, jit::IValue& scratch) {
  if (a.slot >= 0) return env[static_cast<size_t>(a.slot)];
  if (!a.list) return a.value;
  std::vector<jit::IValue> items;
  items.reserve(a.items.size());
  for (const PlanArg& e : a.items) {
    jit::IValue tmp;
    items.push_back(plan_value(e, env, tmp));
  }
  scratch = a.tuple ? jit::IValue(std::make_shared<jit::ivalue::Tuple>(std::move(items))) : jit::IValue(std::move(items));
  return scratch;
}
}  // namespace

GraphModule::GraphModule(nn::Module& root, std::unique_ptr<Graph> graph,
                         std::unordered_map<std::string, nn::detail::ForwardInvoker> invokers,
                         std::vector<std::pair<std::string, Tensor>> constants)
    : nn::Module("GraphModule"), graph_(std::move(graph)), invokers_(std::move(invokers)) {
  EMBER_CHECK(graph_, "fx", "GraphModule needs a graph");
  for (const auto& item : root.named_children()) register_module(item.key(), item.value());
  for (const auto& item : root.named_parameters(/*recurse=*/false))
    register_parameter(item.key(), item.value(), item.value().requires_grad());
  for (const auto& item : root.named_buffers(/*recurse=*/false)) register_buffer(item.key(), item.value());
  for (auto& [name, t] : constants) register_buffer(name, t);
  train(root.is_training());
  recompile();
}

// Both walk one child per dotted component: listing named_modules() or named_parameters() of the
// whole tree for each lookup made the passes over a MobileNet quadratic in its size (half the time
// of optimize_for_inference went to listing modules).
std::shared_ptr<nn::Module> GraphModule::submodule(const std::string& qualified_name) const {
  size_t dot = qualified_name.find('.');
  const std::shared_ptr<nn::Module>* child = children_.find(qualified_name.substr(0, dot));
  std::shared_ptr<nn::Module> m = child ? *child : nullptr;
  while (m && dot != std::string::npos) {
    const size_t begin = dot + 1;
    dot = qualified_name.find('.', begin);
    const auto children = m->named_children();
    child = children.find(qualified_name.substr(begin, dot == std::string::npos ? dot : dot - begin));
    m = child ? *child : nullptr;
  }
  return m;
}

Tensor GraphModule::attribute(const std::string& qualified_name) const {
  const size_t dot = qualified_name.rfind('.');
  std::shared_ptr<nn::Module> holder = dot == std::string::npos ? nullptr : submodule(qualified_name.substr(0, dot));
  const nn::Module* owner = dot == std::string::npos ? this : holder.get();
  if (owner) {
    const std::string leaf = dot == std::string::npos ? qualified_name : qualified_name.substr(dot + 1);
    const auto parameters = owner->named_parameters(/*recurse=*/false);
    if (const Tensor* t = parameters.find(leaf)) return *t;
    const auto buffers = owner->named_buffers(/*recurse=*/false);
    if (const Tensor* t = buffers.find(leaf)) return *t;
  }
  ::ember::detail::fail("fx", "GraphModule has no parameter or buffer '", qualified_name, "'");
}

void GraphModule::set_submodule(const std::string& name, std::shared_ptr<nn::Module> module,
                                nn::detail::ForwardInvoker invoke) {
  EMBER_CHECK(name.find('.') == std::string::npos, "fx", "set_submodule: '", name, "' is not a top-level name");
  if (children_.contains(name))
    replace_module(name, std::move(module));
  else
    register_module(name, std::move(module));
  invokers_[name] = invoke;
}

std::string GraphModule::add_constant(const std::string& hint, const Tensor& value) {
  std::string name = hint;
  for (char& c : name)
    if (c == '.') c = '_';
  for (size_t k = 1; buffers_.contains(name) || parameters_.contains(name) || children_.contains(name); ++k)
    name = hint + "_" + std::to_string(k);
  register_buffer(name, value);
  return name;
}

nn::detail::ForwardInvoker GraphModule::invoker(const std::string& qualified_name) const {
  auto it = invokers_.find(qualified_name);
  return it == invokers_.end() ? nullptr : it->second;
}
void GraphModule::set_invoker(const std::string& qualified_name, nn::detail::ForwardInvoker invoke) {
  invokers_[qualified_name] = invoke;
}

void GraphModule::delete_all_unused_submodules() {
  std::vector<std::string> unused;
  for (const auto& item : named_children()) {
    const std::string& name = item.key();
    bool used = false;
    for (const Node* n : graph_->nodes()) {
      if (n->op() != OpKind::CallModule && n->op() != OpKind::GetAttr) continue;
      const std::string& t = n->target();
      used |= t == name || t.compare(0, name.size() + 1, name + ".") == 0;
    }
    if (!used) unused.push_back(name);
  }
  for (const std::string& name : unused) {
    unregister_module(name);
    invokers_.erase(name);
  }
}

std::shared_ptr<GraphModule> GraphModule::with_graph(std::unique_ptr<Graph> graph) {
  return std::make_shared<GraphModule>(*this, std::move(graph), invokers_);
}

void GraphModule::recompile() {
  graph_->lint();
  auto plan = std::make_shared<Plan>();
  std::unordered_map<const Node*, int64_t> slot;
  std::function<PlanArg(const Argument&)> to_plan = [&](const Argument& a) {
    PlanArg p;
    if (a.is_node()) {
      p.slot = slot.at(a.node());
    } else if (a.is_list()) {
      p.list = true;
      p.tuple = a.is_tuple();
      for (const Argument& e : a.items()) p.items.push_back(to_plan(e));
    } else {
      p.value = a.value();
    }
    return p;
  };
  for (Node* n : graph_->nodes()) {
    Plan::Step s;
    s.op = n->op();
    s.name = n->name();
    switch (n->op()) {
      case OpKind::Placeholder: ++plan->inputs; break;
      case OpKind::GetAttr: s.attr = attribute(n->target()); break;
      case OpKind::CallModule: {
        auto m = submodule(n->target());
        EMBER_CHECK(m, "fx", "node '", n->name(), "' calls module '", n->target(), "', which the GraphModule has not");
        s.invoke = invoker(n->target());
        EMBER_CHECK(s.invoke, "fx", "node '", n->name(), "' calls module '", n->target(), "' (", m->name(),
                    ") whose forward is unknown: a call_module target must have been traced or added by "
                    "GraphModule::add_module");
        EMBER_CHECK(n->kwargs().empty(), "fx", "node '", n->name(), "' passes keyword arguments to module '",
                    n->target(), "'");
        s.module = m.get();
        break;
      }
      case OpKind::CallFunction:
      case OpKind::CallMethod:
        s.overloads = find_overloads(n->target());
        EMBER_CHECK(s.overloads, "fx", "node '", n->name(), "' calls op '", n->target(),
                    "', which is not in the op table (src/jit/builtins.cpp)");
        break;
      case OpKind::Output: break;
    }
    for (const Argument& a : n->args()) s.args.push_back(to_plan(a));
    for (const auto& [k, a] : n->kwargs()) {
      s.kwnames.push_back(k);
      s.args.push_back(to_plan(a));
    }
    slot[n] = static_cast<int64_t>(plan->steps.size());
    plan->steps.push_back(std::move(s));
  }
  // Each value is released after its last reader (as FX's generated code sets `x = None`), so
  // intermediate results go back to the allocator while the next steps run and their memory
  // stays in cache, as in eager code.
  std::vector<size_t> last(plan->steps.size());
  std::function<void(const PlanArg&, size_t)> mark = [&](const PlanArg& a, size_t i) {
    if (a.slot >= 0) last[static_cast<size_t>(a.slot)] = i;
    for (const PlanArg& e : a.items) mark(e, i);
  };
  for (size_t i = 0; i < plan->steps.size(); ++i) {
    last[i] = i;
    for (const PlanArg& a : plan->steps[i].args) mark(a, i);
  }
  for (size_t s = 0; s < last.size(); ++s)
    if (plan->steps[last[s]].op != OpKind::Output) plan->steps[last[s]].frees.push_back(s);
  plan_ = std::move(plan);
  compiled_version_ = graph_->version();
}

jit::IValue GraphModule::forward(std::vector<jit::IValue> inputs) {
  EMBER_CHECK(graph_->version() == compiled_version_, "fx",
              "the graph was edited after the GraphModule compiled it: call recompile()");
  const std::shared_ptr<const Plan> keep = plan_;
  const Plan& plan = *keep;
  EMBER_CHECK(inputs.size() == plan.inputs, "fx", "GraphModule.forward takes ", plan.inputs, " inputs, not ",
              inputs.size());
  std::vector<jit::IValue> env(plan.steps.size());
  size_t next_input = 0;
  std::vector<jit::IValue> scratch;
  std::vector<const jit::IValue*> refs;
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Plan::Step& s = plan.steps[i];
    switch (s.op) {
      case OpKind::Placeholder: env[i] = std::move(inputs[next_input++]); break;
      case OpKind::GetAttr: env[i] = s.attr; break;
      case OpKind::CallModule: {
        tensors.clear();
        for (const PlanArg& a : s.args) {
          jit::IValue tmp;
          const jit::IValue& v = plan_value(a, env, tmp);
          EMBER_CHECK(v.isTensor(), "fx", "node '", s.name, "' passes a ", v.tag_name(), " to a module");
          tensors.push_back(v.toTensor());
        }
        env[i] = s.invoke(*s.module, tensors.data());
        break;
      }
      case OpKind::CallFunction:
      case OpKind::CallMethod: {
        scratch.assign(s.args.size(), jit::IValue());
        refs.clear();
        for (size_t k = 0; k < s.args.size(); ++k) refs.push_back(&plan_value(s.args[k], env, scratch[k]));
        try {
          env[i] = jit::call_builtin(*s.overloads, refs.data(), refs.size(), s.kwnames, s.name, jit::SourceLoc{});
        } catch (const Error& e) {
          ::ember::detail::fail("fx", "node '", s.name, "': ", e.what());
        }
        break;
      }
      case OpKind::Output: {
        jit::IValue tmp;
        return plan_value(s.args.at(0), env, tmp);
      }
    }
    for (size_t slot : s.frees) env[slot] = jit::IValue();
  }
  ::ember::detail::fail("fx", "the graph has no output node");
}

Tensor GraphModule::forward(const Tensor& x) { return forward(std::vector<jit::IValue>{x}).toTensor(); }
Tensor GraphModule::forward(const Tensor& a, const Tensor& b) {
  return forward(std::vector<jit::IValue>{a, b}).toTensor();
}

// ---- Interpreter ----------------------------------------------------------------------------

Interpreter::Interpreter(GraphModule& m) : module(m) {}

jit::IValue Interpreter::fetch(const Argument& a) const {
  return value_of(a, [&](Node* n) -> jit::IValue {
    auto it = env.find(n);
    EMBER_CHECK(it != env.end(), "fx", "Interpreter: node '", n->name(), "' is read before it ran");
    return it->second;
  });
}

jit::IValue Interpreter::run(std::vector<jit::IValue> inputs) {
  module.graph().lint();
  env.clear();
  inputs_ = std::move(inputs);
  next_input_ = 0;
  for (Node* n : module.graph().nodes()) {
    if (n->op() == OpKind::Output) {
      jit::IValue out = fetch(n->args().at(0));
      env.clear();
      return out;
    }
    env[n] = run_node(*n);
  }
  ::ember::detail::fail("fx", "Interpreter: the graph has no output node");
}

jit::IValue Interpreter::run_node(Node& n) {
  std::vector<jit::IValue> args;
  for (const Argument& a : n.args()) args.push_back(fetch(a));
  std::vector<std::pair<std::string, jit::IValue>> kwargs;
  for (const auto& [k, a] : n.kwargs()) kwargs.emplace_back(k, fetch(a));
  switch (n.op()) {
    case OpKind::Placeholder: return placeholder(n.target(), args);
    case OpKind::GetAttr: return get_attr(n.target());
    case OpKind::CallFunction: return call_function(n.target(), args, kwargs);
    case OpKind::CallModule:
      EMBER_CHECK(kwargs.empty(), "fx", "node '", n.name(), "' passes keyword arguments to a module");
      return call_module(n.target(), args);
    case OpKind::CallMethod: return call_method(n.target(), args, kwargs);
    case OpKind::Output: break;
  }
  ::ember::detail::fail("fx", "Interpreter: run_node of the output node '", n.name(), "'");
}

jit::IValue Interpreter::placeholder(const std::string& target, const std::vector<jit::IValue>&) {
  EMBER_CHECK(next_input_ < inputs_.size(), "fx", "Interpreter: no input given for placeholder '", target, "'");
  return inputs_[next_input_++];
}

jit::IValue Interpreter::get_attr(const std::string& target) { return module.attribute(target); }

jit::IValue Interpreter::call_function(const std::string& target, const std::vector<jit::IValue>& args,
                                       const std::vector<std::pair<std::string, jit::IValue>>& kwargs) {
  const auto* overloads = find_overloads(target);
  EMBER_CHECK(overloads, "fx", "op '", target, "' is not in the op table (src/jit/builtins.cpp)");
  std::vector<const jit::IValue*> refs;
  std::vector<std::string> kwnames;
  for (const jit::IValue& v : args) refs.push_back(&v);
  for (const auto& [k, v] : kwargs) {
    kwnames.push_back(k);
    refs.push_back(&v);
  }
  return jit::call_builtin(*overloads, refs.data(), refs.size(), kwnames, target, jit::SourceLoc{});
}

jit::IValue Interpreter::call_module(const std::string& target, const std::vector<jit::IValue>& args) {
  auto m = module.submodule(target);
  EMBER_CHECK(m, "fx", "Interpreter: no submodule '", target, "'");
  auto invoke = module.invoker(target);
  EMBER_CHECK(invoke, "fx", "Interpreter: the forward of module '", target, "' is unknown");
  std::vector<Tensor> in;
  for (const jit::IValue& v : args) in.push_back(v.toTensor());
  return invoke(*m, in.data());
}

jit::IValue Interpreter::call_method(const std::string& target, const std::vector<jit::IValue>& args,
                                     const std::vector<std::pair<std::string, jit::IValue>>& kwargs) {
  return call_function(target, args, kwargs);  // a tensor method is the op with self first
}

// ---- ShapeProp ------------------------------------------------------------------------------

jit::IValue ShapeProp::run_node(Node& node) {
  jit::IValue v = Interpreter::run_node(node);
  if (v.isTensor()) {
    const Tensor& t = v.toTensor();
    node.meta["shape"] = jit::IValue(t.sizes().vec());
    node.meta["dtype"] = jit::IValue(std::string(to_string(t.dtype())));
  }
  return v;
}

// ---- Transformer ----------------------------------------------------------------------------

Transformer::Transformer(GraphModule& m) : module(m) {}

std::shared_ptr<GraphModule> Transformer::transform() {
  graph_ = std::make_unique<Graph>();
  std::unordered_map<const Node*, Node*> mapped;
  auto map = [&](Node* n) -> Argument { return mapped.at(n); };
  for (Node* n : module.graph().nodes()) {
    std::vector<Argument> args;
    for (const Argument& a : n->args()) args.push_back(a.map_nodes(map));
    Kwargs kwargs;
    for (const auto& [k, a] : n->kwargs()) kwargs.emplace_back(k, a.map_nodes(map));
    Node* out = nullptr;
    switch (n->op()) {
      case OpKind::Placeholder: out = placeholder(*n); break;
      case OpKind::GetAttr: out = get_attr(*n); break;
      case OpKind::CallFunction: out = call_function(*n, std::move(args), std::move(kwargs)); break;
      case OpKind::CallModule: out = call_module(*n, std::move(args), std::move(kwargs)); break;
      case OpKind::CallMethod: out = call_method(*n, std::move(args), std::move(kwargs)); break;
      case OpKind::Output: out = graph_->output(args.at(0)); break;
    }
    mapped[n] = out;
  }
  return module.with_graph(std::move(graph_));
}

Node* Transformer::placeholder(const Node& old) { return graph_->placeholder(old.name()); }
Node* Transformer::get_attr(const Node& old) { return graph_->get_attr(old.target()); }
Node* Transformer::call_function(const Node& old, std::vector<Argument> args, Kwargs kwargs) {
  return graph_->call_function(old.target(), std::move(args), std::move(kwargs));
}
Node* Transformer::call_module(const Node& old, std::vector<Argument> args, Kwargs kwargs) {
  return graph_->call_module(old.target(), std::move(args), std::move(kwargs));
}
Node* Transformer::call_method(const Node& old, std::vector<Argument> args, Kwargs kwargs) {
  return graph_->call_method(old.target(), std::move(args), std::move(kwargs));
}

}  // namespace ember::fx
