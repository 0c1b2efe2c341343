// fx::fuse_pointwise: each maximal group of pointwise call_function nodes whose results are read
// only inside the group (but the last) becomes one call_module node running the fused engine
// (ember/fx/fused.h): one pass over memory instead of one per op.
#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ember/error.h"
#include "ember/fx.h"
#include "ember/fx/fused.h"
#include "jit/builtins.h"

namespace ember::fx {

namespace {

// A node argument as an argument of a fused step: a reference (resolved by the caller) or a
// constant the engine takes; nullopt for what it cannot (lists, tuples).
std::optional<FusedArg> constant_arg(const jit::IValue& v) {
  if (v.isNone()) return FusedArg::none();
  if (v.isBool()) return FusedArg::flag(v.toBool());
  if (v.isInt()) return FusedArg::scalar(Scalar(v.toInt()));
  if (v.isDouble()) return FusedArg::scalar(Scalar(v.toDouble()));
  if (v.isString()) return FusedArg::str(v.toStringRef());
  return std::nullopt;
}

// A node's arguments in its op's schema order: the positional ones, then the keyword-only ones
// (add's alpha), which the tracer records as kwargs in that order.
std::vector<Argument> schema_args(const Node* n) {
  std::vector<Argument> args = n->args();
  for (const auto& kv : n->kwargs()) args.push_back(kv.second);
  return args;
}

bool candidate(const Node* n) {
  if (n->op() != OpKind::CallFunction || !fusable(n->target())) return false;
  for (const Argument& a : schema_args(n))
    if (!a.is_node() && (a.is_list() || !constant_arg(a.value()))) return false;
  return true;
}

// The group's steps in graph order, its external inputs in order of first use, or nullopt when
// the engine refuses the chain (an argument form it does not take).
struct Chain {
  std::vector<Node*> inputs;
  std::optional<FusedPointwise> fused;
};

Chain compile(const std::vector<Node*>& members) {
  std::unordered_map<const Node*, int> step_of;
  for (size_t k = 0; k < members.size(); ++k) step_of[members[k]] = static_cast<int>(k);
  Chain chain;
  std::unordered_map<const Node*, int> input_of;
  for (Node* m : members)
    for (const Argument& a : schema_args(m))
      if (a.is_node() && !step_of.count(a.node()) && !input_of.count(a.node())) {
        input_of[a.node()] = static_cast<int>(chain.inputs.size());
        chain.inputs.push_back(a.node());
      }
  const int num_inputs = static_cast<int>(chain.inputs.size());
  std::vector<FusedStep> steps;
  for (Node* m : members) {
    FusedStep step{m->target(), {}};
    const std::vector<Argument> args = schema_args(m);
    for (size_t i = 0; i < args.size(); ++i) {
      const Argument& a = args[i];
      if (a.is_node()) {
        const auto s = step_of.find(a.node());
        step.args.push_back(FusedArg::ref(s != step_of.end() ? num_inputs + s->second : input_of.at(a.node())));
      } else if (m->target() == "to" && i == 1 && a.value().isInt()) {
        step.args.push_back(FusedArg::dtype(jit::scalar_type_of_code(a.value().toInt())));
      } else {
        step.args.push_back(*constant_arg(a.value()));
      }
    }
    steps.push_back(std::move(step));
  }
  try {
    chain.fused.emplace(num_inputs, std::move(steps), std::vector<int>{num_inputs + static_cast<int>(members.size()) - 1});
  } catch (const Error&) {
    chain.fused.reset();
  }
  return chain;
}

// The call_module invoker of a fused node: its inputs are the chain's, its result the last step's.
Tensor invoke_fused(nn::Module& module, const Tensor* inputs) {
  auto& m = static_cast<FusedPointwiseModuleImpl&>(module);
  return m.chain(std::vector<Tensor>(inputs, inputs + m.chain.num_inputs()))[0];
}

}  // namespace

size_t fuse_pointwise(GraphModule& gm) {
  Graph& g = gm.graph();
  const std::vector<Node*> nodes = g.nodes();
  std::unordered_map<const Node*, size_t> position;
  for (size_t i = 0; i < nodes.size(); ++i) position[nodes[i]] = i;
  std::unordered_set<const Node*> taken;
  size_t fused = 0;
  // From the last node back: a candidate not yet in a group roots one, which then takes each
  // candidate producer all of whose readers are already in the group, until none is left.
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    Node* root = *it;
    if (taken.count(root) || !candidate(root)) continue;
    std::unordered_set<const Node*> group{root};
    std::vector<Node*> members{root};
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t k = 0; k < members.size(); ++k) {
        for (Node* p : members[k]->all_input_nodes()) {
          if (group.count(p) || taken.count(p) || !candidate(p)) continue;
          const auto& users = p->users();
          if (!std::all_of(users.begin(), users.end(), [&](Node* u) { return group.count(u) > 0; })) continue;
          group.insert(p);
          members.push_back(p);
          grew = true;
        }
      }
    }
    if (members.size() < 2) continue;
    std::sort(members.begin(), members.end(), [&](Node* a, Node* b) { return position[a] < position[b]; });
    Chain chain = compile(members);
    if (!chain.fused) continue;
    for (Node* m : members) taken.insert(m);
    std::string name = "fused_pointwise";
    for (size_t k = 1; gm.submodule(name); ++k) name = "fused_pointwise_" + std::to_string(k);
    gm.set_submodule(name, std::make_shared<FusedPointwiseModuleImpl>(std::move(*chain.fused)), &invoke_fused);
    Node* call = nullptr;
    {
      auto at = g.inserting_before(root);
      call = g.call_module(name, std::vector<Argument>(chain.inputs.begin(), chain.inputs.end()));
    }
    call->meta = root->meta;
    root->replace_all_uses_with(call);
    for (auto m = members.rbegin(); m != members.rend(); ++m) g.erase_node(*m);
    ++fused;
  }
  if (fused) gm.recompile();
  return fused;
}

}  // namespace ember::fx
