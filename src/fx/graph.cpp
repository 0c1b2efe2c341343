// fx::Graph and fx::Node: the node list, editing, checks and the printed forms.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <iomanip>
#include <sstream>
#include <unordered_set>

#include "ember/error.h"
#include "ember/fx.h"

namespace ember::fx {

const char* to_string(OpKind op) {
  switch (op) {
    case OpKind::Placeholder: return "placeholder";
    case OpKind::GetAttr: return "get_attr";
    case OpKind::CallFunction: return "call_function";
    case OpKind::CallModule: return "call_module";
    case OpKind::CallMethod: return "call_method";
    case OpKind::Output: return "output";
  }
  return "?";
}

// ---- Argument -------------------------------------------------------------------------------

Argument Argument::list(std::vector<Argument> items, bool tuple) {
  Argument a;
  a.kind_ = tuple ? Kind::Tuple : Kind::List;
  a.items_ = std::move(items);
  return a;
}

void Argument::for_each_node(const std::function<void(Node*)>& fn) const {
  if (node_) fn(node_);
  for (const Argument& a : items_) a.for_each_node(fn);
}

Argument Argument::map_nodes(const std::function<Argument(Node*)>& fn) const {
  if (node_) return fn(node_);
  if (!is_list()) return *this;
  std::vector<Argument> items;
  items.reserve(items_.size());
  for (const Argument& a : items_) items.push_back(a.map_nodes(fn));
  return list(std::move(items), is_tuple());
}

namespace {
// Python's spelling of a constant.
void print_value(std::ostream& os, const jit::IValue& v) {
  if (v.isNone()) {
    os << "None";
  } else if (v.isBool()) {
    os << (v.toBool() ? "True" : "False");
  } else if (v.isString()) {
    os << "'" << v.toStringRef() << "'";
  } else if (v.isDouble()) {
    // Python's repr: the shortest form that reads back, with a '.0' on whole numbers.
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v.toDouble());
    const std::string text(buf, r.ptr);
    os << text << (text.find_first_of(".eni") == std::string::npos ? ".0" : "");
  } else if (v.isList()) {
    os << "[";
    const auto items = v.toListRef();
    for (size_t i = 0; i < items.size(); ++i) {
      os << (i ? ", " : "");
      print_value(os, items[i]);
    }
    os << "]";
  } else {
    os << v;
  }
}

void print_arg(std::ostream& os, const Argument& a, const char* node_prefix) {
  if (a.is_node()) {
    os << node_prefix << a.node()->name();
  } else if (a.is_list()) {
    os << (a.is_tuple() ? "(" : "[");
    for (size_t i = 0; i < a.items().size(); ++i) {
      os << (i ? ", " : "");
      print_arg(os, a.items()[i], node_prefix);
    }
    if (a.is_tuple() && a.items().size() == 1) os << ",";
    os << (a.is_tuple() ? ")" : "]");
  } else {
    print_value(os, a.value());
  }
}

void print_call_args(std::ostream& os, const std::vector<Argument>& args, const Kwargs& kwargs, const char* prefix) {
  bool first = true;
  for (const Argument& a : args) {
    os << (first ? "" : ", ");
    print_arg(os, a, prefix);
    first = false;
  }
  for (const auto& [k, a] : kwargs) {
    os << (first ? "" : ", ") << k << " = ";
    print_arg(os, a, prefix);
    first = false;
  }
}
}  // namespace

std::ostream& operator<<(std::ostream& os, const Argument& a) {
  print_arg(os, a, "%");
  return os;
}

// ---- Node -----------------------------------------------------------------------------------

void Node::remove_user(Node* user) {
  // A user may read this node through several arguments: drop it only when none is left.
  bool still = false;
  auto check = [&](Node* n) { still |= n == this; };
  for (const Argument& a : user->args_) a.for_each_node(check);
  for (const auto& kv : user->kwargs_) kv.second.for_each_node(check);
  if (!still) users_.erase(std::remove(users_.begin(), users_.end(), user), users_.end());
}

void Node::set_inputs(std::vector<Argument> args, Kwargs kwargs) {
  const std::vector<Node*> old = all_input_nodes();
  args_ = std::move(args);
  kwargs_ = std::move(kwargs);
  for (Node* n : old) n->remove_user(this);
  for (Node* n : all_input_nodes()) {
    EMBER_CHECK(!n->erased_, "fx", "node '", name_, "' cannot read node '", n->name_, "': it was erased");
    if (std::find(n->users_.begin(), n->users_.end(), this) == n->users_.end()) n->users_.push_back(this);
  }
  ++graph_->version_;
}

void Node::set_args(std::vector<Argument> args) { set_inputs(std::move(args), kwargs_); }
void Node::set_kwargs(Kwargs kwargs) { set_inputs(args_, std::move(kwargs)); }
void Node::set_arg(size_t i, Argument a) {
  EMBER_CHECK(i < args_.size(), "fx", "node '", name_, "' has ", args_.size(), " arguments, not ", i + 1);
  std::vector<Argument> args = args_;
  args[i] = std::move(a);
  set_args(std::move(args));
}
void Node::set_target(std::string target) {
  target_ = std::move(target);
  ++graph_->version_;
}

std::vector<Node*> Node::all_input_nodes() const {
  std::vector<Node*> out;
  auto add = [&](Node* n) {
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  for (const Argument& a : args_) a.for_each_node(add);
  for (const auto& kv : kwargs_) kv.second.for_each_node(add);
  return out;
}

Node* Node::prev() const {
  if (erased_ || pos_ == graph_->nodes_.begin()) return nullptr;
  return std::prev(pos_)->get();
}
Node* Node::next() const {
  if (erased_) return nullptr;
  auto it = std::next(pos_);
  return it == graph_->nodes_.end() ? nullptr : it->get();
}

bool Node::is_impure() const {
  return op_ == OpKind::Placeholder || op_ == OpKind::Output ||
         (op_ == OpKind::CallFunction && !target_.empty() && target_.back() == '_');
}

std::vector<Node*> Node::replace_all_uses_with(Node* replacement) {
  EMBER_CHECK(replacement && replacement->graph_ == graph_, "fx", "replace_all_uses_with: node '", name_,
              "' can only be replaced by a node of its graph");
  std::vector<Node*> changed = users_;
  for (Node* user : changed) user->replace_input_with(this, replacement);
  return changed;
}

void Node::replace_input_with(Node* old_input, Node* new_input) {
  auto map = [&](Node* n) -> Argument { return n == old_input ? new_input : n; };
  std::vector<Argument> args;
  for (const Argument& a : args_) args.push_back(a.map_nodes(map));
  Kwargs kwargs;
  for (const auto& [k, a] : kwargs_) kwargs.emplace_back(k, a.map_nodes(map));
  set_inputs(std::move(args), std::move(kwargs));
}

std::string Node::format() const {
  std::ostringstream os;
  os << "%" << name_ << " : " << to_string(op_) << "[target=" << target_ << "](args = (";
  print_call_args(os, args_, {}, "%");
  os << "), kwargs = {";
  bool first = true;
  for (const auto& [k, a] : kwargs_) {
    os << (first ? "" : ", ") << k << ": " << a;
    first = false;
  }
  os << "})";
  return os.str();
}

// ---- Graph ----------------------------------------------------------------------------------

Graph::Graph() = default;
Graph::~Graph() = default;

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (const auto& n : nodes_) out.push_back(n.get());
  return out;
}

Node* Graph::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

Node* Graph::output_node() const {
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it)
    if ((*it)->op_ == OpKind::Output) return it->get();
  return nullptr;
}

std::string Graph::unique_name(const std::string& candidate) {
  // A Python identifier: other characters become '_' ("layer1.0.conv" -> "layer1_0_conv").
  std::string base;
  for (char c : candidate) base += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "_" + base;
  std::string name = base;
  size_t& count = name_counts_[base];
  while (by_name_.count(name)) name = base + "_" + std::to_string(++count);
  return name;
}

Node* Graph::create_node(OpKind op, std::string target, std::vector<Argument> args, Kwargs kwargs,
                         const std::string& name) {
  auto owned = std::unique_ptr<Node>(new Node());
  Node* n = owned.get();
  n->graph_ = this;
  n->op_ = op;
  n->name_ = unique_name(name.empty() ? target : name);
  n->target_ = std::move(target);
  auto where = insert_before_ ? insert_before_->pos_ : nodes_.end();
  n->pos_ = nodes_.insert(where, std::move(owned));
  by_name_[n->name_] = n;
  try {
    n->set_inputs(std::move(args), std::move(kwargs));
  } catch (...) {
    by_name_.erase(n->name_);
    nodes_.erase(n->pos_);
    throw;
  }
  return n;
}

Node* Graph::placeholder(const std::string& name) { return create_node(OpKind::Placeholder, name); }
Node* Graph::get_attr(const std::string& qualified_name) { return create_node(OpKind::GetAttr, qualified_name); }
Node* Graph::call_function(const std::string& op, std::vector<Argument> args, Kwargs kwargs) {
  return create_node(OpKind::CallFunction, op, std::move(args), std::move(kwargs));
}
Node* Graph::call_module(const std::string& qualified_name, std::vector<Argument> args, Kwargs kwargs) {
  return create_node(OpKind::CallModule, qualified_name, std::move(args), std::move(kwargs));
}
Node* Graph::call_method(const std::string& method, std::vector<Argument> args, Kwargs kwargs) {
  return create_node(OpKind::CallMethod, method, std::move(args), std::move(kwargs));
}
Node* Graph::output(Argument result) { return create_node(OpKind::Output, "output", {std::move(result)}); }

Node* Graph::node_copy(const Node& node, const std::function<Argument(Node*)>& map) {
  std::vector<Argument> args;
  for (const Argument& a : node.args()) args.push_back(a.map_nodes(map));
  Kwargs kwargs;
  for (const auto& [k, a] : node.kwargs()) kwargs.emplace_back(k, a.map_nodes(map));
  Node* n = create_node(node.op(), node.target(), std::move(args), std::move(kwargs), node.name());
  n->meta = node.meta;
  return n;
}

Graph::InsertPoint::InsertPoint(Graph& g, Node* before) : graph_(g), saved_(g.insert_before_) {
  g.insert_before_ = before;
}
Graph::InsertPoint::~InsertPoint() { graph_.insert_before_ = saved_; }

Graph::InsertPoint Graph::inserting_before(Node* node) {
  EMBER_CHECK(node && node->graph_ == this && !node->erased_, "fx", "inserting_before: not a node of this graph");
  return InsertPoint(*this, node);
}
Graph::InsertPoint Graph::inserting_after(Node* node) {
  EMBER_CHECK(node && node->graph_ == this && !node->erased_, "fx", "inserting_after: not a node of this graph");
  return InsertPoint(*this, node->next());
}

void Graph::erase_node(Node* node) {
  EMBER_CHECK(node && node->graph_ == this && !node->erased_, "fx", "erase_node: not a live node of this graph");
  if (!node->users_.empty()) {
    std::string users;
    for (Node* u : node->users_) users += (users.empty() ? "" : ", ") + u->name_;
    ::ember::detail::fail("fx", "erase_node: node '", node->name_, "' still has ", node->users_.size(), " user(s) (", users, ")");
  }
  EMBER_CHECK(insert_before_ != node, "fx", "erase_node: node '", node->name_, "' is the insertion point");
  for (Node* n : node->all_input_nodes()) {
    n->users_.erase(std::remove(n->users_.begin(), n->users_.end(), node), n->users_.end());
  }
  by_name_.erase(node->name_);
  node->erased_ = true;
  erased_.push_back(std::move(*node->pos_));
  nodes_.erase(node->pos_);
  ++version_;
}

bool Graph::eliminate_dead_code() {
  // Last first, so that a node whose only users were dead is dead by the time it is reached.
  bool changed = false;
  const std::vector<Node*> all = nodes();
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if ((*it)->users_.empty() && !(*it)->is_impure()) {
      erase_node(*it);
      changed = true;
    }
  }
  return changed;
}

void Graph::lint() const {
  std::unordered_set<const Node*> seen;
  std::unordered_set<std::string> names;
  size_t outputs = 0;
  for (const auto& owned : nodes_) {
    const Node* n = owned.get();
    EMBER_CHECK(names.insert(n->name_).second, "fx", "lint: two nodes are named '", n->name_, "'");
    EMBER_CHECK(outputs == 0, "fx", "lint: node '", n->name_, "' comes after the output node");
    for (const Node* in : n->all_input_nodes()) {
      EMBER_CHECK(!in->erased_, "fx", "lint: node '", n->name_, "' reads node '", in->name_, "', which was erased");
      EMBER_CHECK(in->graph_ == this, "fx", "lint: node '", n->name_, "' reads node '", in->name_,
                  "' of another graph");
      EMBER_CHECK(seen.count(in), "fx", "lint: node '", n->name_, "' reads node '", in->name_,
                  "', which comes later (not in topological order)");
      EMBER_CHECK(std::find(in->users_.begin(), in->users_.end(), n) != in->users_.end(), "fx", "lint: node '",
                  n->name_, "' reads node '", in->name_, "' but is not among its users");
    }
    for (const Node* u : n->users_) {
      const auto ins = u->all_input_nodes();
      EMBER_CHECK(std::find(ins.begin(), ins.end(), n) != ins.end(), "fx", "lint: node '", u->name_,
                  "' is a user of '", n->name_, "' but does not read it");
    }
    if (n->op_ == OpKind::Output) {
      ++outputs;
      EMBER_CHECK(n->args_.size() == 1 && n->kwargs_.empty(), "fx", "lint: output node '", n->name_,
                  "' takes one argument, not ", n->args_.size());
    }
    if (n->op_ == OpKind::Placeholder || n->op_ == OpKind::GetAttr)
      EMBER_CHECK(n->args_.empty() && n->kwargs_.empty(), "fx", "lint: ", to_string(n->op_), " node '", n->name_,
                  "' takes no arguments");
    EMBER_CHECK(!n->target_.empty(), "fx", "lint: node '", n->name_, "' has no target");
    seen.insert(n);
  }
  EMBER_CHECK(outputs == 1, "fx", "lint: the graph has ", outputs, " output nodes, not one");
}

std::string Graph::tabular() const {
  std::vector<std::array<std::string, 5>> rows;
  rows.push_back({"opcode", "name", "target", "args", "kwargs"});
  for (const auto& n : nodes_) {
    std::ostringstream args, kwargs;
    args << "(";
    print_call_args(args, n->args_, {}, "");
    if (n->args_.size() == 1) args << ",";
    args << ")";
    kwargs << "{";
    bool first = true;
    for (const auto& [k, a] : n->kwargs_) {
      kwargs << (first ? "" : ", ") << k << ": ";
      print_arg(kwargs, a, "");
      first = false;
    }
    kwargs << "}";
    rows.push_back({to_string(n->op_), n->name_, n->target_, args.str(), kwargs.str()});
  }
  std::array<size_t, 5> width{};
  for (const auto& r : rows)
    for (size_t i = 0; i < 5; ++i) width[i] = std::max(width[i], r[i].size());
  std::ostringstream os;
  auto line = [&](const std::array<std::string, 5>& r) {
    for (size_t i = 0; i < 5; ++i) os << std::left << std::setw(static_cast<int>(width[i] + 2)) << r[i];
    os << "\n";
  };
  line(rows[0]);
  line({std::string(width[0], '-'), std::string(width[1], '-'), std::string(width[2], '-'),
        std::string(width[3], '-'), std::string(width[4], '-')});
  for (size_t i = 1; i < rows.size(); ++i) line(rows[i]);
  return os.str();
}

void Graph::print_tabular(std::ostream& os) const { os << tabular(); }

std::string Graph::python_code() const {
  std::ostringstream os, body;
  std::vector<std::string> params;
  for (const auto& owned : nodes_) {
    const Node* n = owned.get();
    switch (n->op_) {
      case OpKind::Placeholder: params.push_back(n->name_); break;
      case OpKind::GetAttr: body << "    " << n->name_ << " = self." << n->target_ << "\n"; break;
      case OpKind::CallFunction:
        body << "    " << n->name_ << " = " << (n->target_ == "getitem" ? "operator." : "torch.") << n->target_ << "(";
        print_call_args(body, n->args_, n->kwargs_, "");
        body << ")\n";
        break;
      case OpKind::CallModule:
        body << "    " << n->name_ << " = self." << n->target_ << "(";
        print_call_args(body, n->args_, n->kwargs_, "");
        body << ")\n";
        break;
      case OpKind::CallMethod:
        body << "    " << n->name_ << " = ";
        if (!n->args_.empty()) print_arg(body, n->args_[0], "");
        body << "." << n->target_ << "(";
        print_call_args(body, std::vector<Argument>(n->args_.begin() + (n->args_.empty() ? 0 : 1), n->args_.end()),
                        n->kwargs_, "");
        body << ")\n";
        break;
      case OpKind::Output:
        body << "    return ";
        print_arg(body, n->args_.empty() ? Argument() : n->args_[0], "");
        body << "\n";
        break;
    }
  }
  os << "def forward(self";
  for (const std::string& p : params) os << ", " << p;
  os << "):\n" << body.str();
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Graph& g) {
  os << "graph():\n";
  for (const Node* n : g.nodes()) os << "    " << n->format() << "\n";
  return os;
}

}  // namespace ember::fx
