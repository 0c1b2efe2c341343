// fx::save / fx::load: one safetensors file holding the graph (JSON, fx/graph_format.h) in its
// metadata and every tensor the graph reads. Loading runs nothing but the op table's ops.
#include "ember/error.h"
#include "ember/fx.h"
#include "ember/serialize.h"
#include "fx/graph_format.h"
#include "serialize/safetensors_format.h"

namespace ember::fx {

namespace {
constexpr const char* kGraphKey = "ember.fx.graph";

format::Arg to_spec(const jit::IValue& v, const std::string& node) {
  format::Arg a;
  using K = format::Arg::Kind;
  if (v.isNone()) return a;
  if (v.isBool()) {
    a.kind = K::Bool;
    a.b = v.toBool();
  } else if (v.isInt()) {
    a.kind = K::Int;
    a.i = v.toInt();
  } else if (v.isDouble()) {
    a.kind = K::Float;
    a.d = v.toDouble();
  } else if (v.isString()) {
    a.kind = K::Str;
    a.str = v.toStringRef();
  } else if (v.isList()) {
    a.kind = K::Values;
    for (const jit::IValue& e : v.toListRef()) a.items.push_back(to_spec(e, node));
  } else {
    ::ember::detail::fail("fx::save", "node '", node, "' has a constant argument of kind ", v.tag_name(),
                          ", which the file format cannot hold");
  }
  return a;
}

format::Arg to_spec(const Argument& a, const std::unordered_map<const Node*, size_t>& index, const std::string& node) {
  if (a.is_node()) {
    format::Arg s;
    s.kind = format::Arg::Kind::Node;
    s.node = index.at(a.node());
    return s;
  }
  if (!a.is_list()) return to_spec(a.value(), node);
  format::Arg s;
  s.kind = a.is_tuple() ? format::Arg::Kind::Tuple : format::Arg::Kind::List;
  for (const Argument& e : a.items()) s.items.push_back(to_spec(e, index, node));
  return s;
}

jit::IValue constant_of(const format::Arg& a) {
  using K = format::Arg::Kind;
  switch (a.kind) {
    case K::None: return jit::IValue();
    case K::Bool: return jit::IValue(a.b);
    case K::Int: return jit::IValue(a.i);
    case K::Float: return jit::IValue(a.d);
    case K::Str: return jit::IValue(a.str);
    case K::Values: {
      bool ints = true;
      for (const format::Arg& e : a.items) ints &= e.kind == K::Int;
      if (ints) {
        std::vector<int64_t> v;
        for (const format::Arg& e : a.items) v.push_back(e.i);
        return jit::IValue(v);
      }
      std::vector<jit::IValue> v;
      for (const format::Arg& e : a.items) v.push_back(constant_of(e));
      return jit::IValue(std::move(v));
    }
    default: break;
  }
  return jit::IValue();  // Node, List, Tuple: handled by argument_of
}

Argument argument_of(const format::Arg& a, const std::vector<Node*>& nodes) {
  using K = format::Arg::Kind;
  if (a.kind == K::Node) return nodes.at(a.node);
  if (a.kind == K::List || a.kind == K::Tuple) {
    std::vector<Argument> items;
    for (const format::Arg& e : a.items) items.push_back(argument_of(e, nodes));
    return Argument::list(std::move(items), a.kind == K::Tuple);
  }
  return constant_of(a);
}

// The module holding `qualified_name`'s last part, made on the way ("a.b.c" -> child a, child b).
nn::Module& owner_of(nn::Module& root, const std::string& qualified_name, std::string& leaf, const std::string& what) {
  nn::Module* m = &root;
  size_t start = 0;
  for (size_t dot; (dot = qualified_name.find('.', start)) != std::string::npos; start = dot + 1) {
    const std::string part = qualified_name.substr(start, dot - start);
    EMBER_CHECK(!part.empty(), what.c_str(), "bad attribute name '", qualified_name, "'");
    std::shared_ptr<nn::Module> child;
    for (const auto& item : m->named_children())
      if (item.key() == part) child = item.value();
    if (!child) child = m->register_module(part, std::make_shared<nn::Module>("Module"));
    m = child.get();
  }
  leaf = qualified_name.substr(start);
  EMBER_CHECK(!leaf.empty(), what.c_str(), "bad attribute name '", qualified_name, "'");
  return *m;
}
}  // namespace

void save(const GraphModule& gm, const std::string& path) {
  const Graph& g = gm.graph();
  g.lint();
  format::GraphSpec spec;
  std::unordered_map<const Node*, size_t> index;
  OrderedDict<std::string, Tensor> tensors;
  const auto params = gm.named_parameters();
  for (const Node* n : g.nodes()) {
    EMBER_CHECK(n->op() != OpKind::CallModule, "fx::save", "node '", n->name(), "' calls module '", n->target(),
                "'; a saved graph holds ops only: trace with a Tracer whose is_leaf_module returns false");
    format::NodeSpec s;
    s.name = n->name();
    s.op = to_string(n->op());
    s.target = n->target();
    for (const Argument& a : n->args()) s.args.push_back(to_spec(a, index, n->name()));
    for (const auto& [k, a] : n->kwargs()) s.kwargs.emplace_back(k, to_spec(a, index, n->name()));
    if (n->op() == OpKind::GetAttr && !tensors.contains(n->target())) {
      const Tensor t = gm.attribute(n->target());
      tensors.insert(n->target(), t);
      spec.attributes.push_back({n->target(), serialize::safetensors_dtype_name(t.dtype()), t.sizes().vec(),
                                 params.contains(n->target())});
    }
    index[n] = spec.nodes.size();
    spec.nodes.push_back(std::move(s));
  }
  ember::save(tensors, path, {{"format", "ember.fx.GraphModule"}, {kGraphKey, format::write_graph(spec)}});
}

std::shared_ptr<GraphModule> load(const std::string& path) {
  const std::string what = "fx::load " + path;
  std::string json;
  for (const auto& [k, v] : load_metadata(path))
    if (k == kGraphKey) json = v;
  EMBER_CHECK(!json.empty(), what.c_str(), "the file holds no fx graph (metadata '", kGraphKey, "')");
  const format::GraphSpec spec = format::parse_graph(json, what);
  OrderedDict<std::string, Tensor> tensors = load_tensors(path);
  nn::Module root("GraphModule");
  for (const format::AttributeSpec& a : spec.attributes) {
    const Tensor* t = tensors.find(a.name);
    EMBER_CHECK(t, what.c_str(), "attribute '", a.name, "' is not among the file's tensors");
    EMBER_CHECK(a.dtype == serialize::safetensors_dtype_name(t->dtype()) && t->sizes().vec() == a.shape, what.c_str(),
                "attribute '", a.name, "' is listed as ", a.dtype, " ", IntArrayRef(a.shape), " but the file holds ",
                serialize::safetensors_dtype_name(t->dtype()), " ", t->sizes());
    std::string leaf;
    nn::Module& owner = owner_of(root, a.name, leaf, what);
    if (a.parameter)
      owner.register_parameter(leaf, *t, is_floating_type(t->dtype()));
    else
      owner.register_buffer(leaf, *t);
  }
  auto graph = std::make_unique<Graph>();
  std::vector<Node*> nodes;
  static const std::pair<const char*, OpKind> kKinds[] = {{"placeholder", OpKind::Placeholder},
                                                          {"get_attr", OpKind::GetAttr},
                                                          {"call_function", OpKind::CallFunction},
                                                          {"call_method", OpKind::CallMethod},
                                                          {"output", OpKind::Output}};
  for (const format::NodeSpec& s : spec.nodes) {
    OpKind op = OpKind::Output;
    for (const auto& [name, kind] : kKinds)
      if (s.op == name) op = kind;
    std::vector<Argument> args;
    for (const format::Arg& a : s.args) args.push_back(argument_of(a, nodes));
    Kwargs kwargs;
    for (const auto& [k, a] : s.kwargs) kwargs.emplace_back(k, argument_of(a, nodes));
    nodes.push_back(graph->create_node(op, s.target, std::move(args), std::move(kwargs), s.name));
  }
  try {
    return std::make_shared<GraphModule>(root, std::move(graph));
  } catch (const Error& e) {
    ::ember::detail::fail(what.c_str(), e.what());
  }
}

}  // namespace ember::fx
