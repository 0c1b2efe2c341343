// The passes that ship: conv-bn folding, conv-activation fusion, the inference pass list, and the
// subgraph rewriter.
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "dispatch/autocast.h"
#include "dispatch/dispatch.h"
#include "ember/autocast.h"
#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/fx.h"
#include "ember/nn/intrinsic.h"
#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/normalization.h"
#include "ember/nn/modules/pooling.h"
#include "ember/pointwise.h"
#include "ember/shape.h"
#include "jit/builtins.h"
#include "nn/utils/fusion.h"

namespace ember::fx {

namespace {

using nn::detail::bn_fold;
using nn::detail::folded;

// A name for a new top-level submodule of gm: `target` plus `suffix`, made unique.
std::string owned_name(GraphModule& gm, const std::string& target, const char* suffix) {
  std::string base = target + suffix;
  for (char& c : base)
    if (c == '.') c = '_';
  std::string name = base;
  for (size_t k = 1; gm.submodule(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

// Registers `module` as a new top-level submodule of gm under owned_name; returns the name.
template <class M>
std::string add_owned(GraphModule& gm, const std::string& target, const char* suffix, std::shared_ptr<M> module) {
  std::string name = owned_name(gm, target, suffix);
  gm.add_module(name, std::move(module));
  return name;
}

// The fused replacement of `conv` followed by the batch norm `bn`, registered in gm; its name, or
// empty if conv is not a layer that folds.
std::string fold_into(GraphModule& gm, const std::string& conv_name, const nn::Module& conv,
                      const nn::detail::BatchNormFold& bn) {
  auto add = [&](auto module) { return add_owned(gm, conv_name, "_fused", std::move(module)); };
  if (const auto* c = dynamic_cast<const nn::Conv1dImpl*>(&conv)) return add(folded(*c, c->options, bn));
  if (const auto* c = dynamic_cast<const nn::Conv2dImpl*>(&conv)) return add(folded(*c, c->options, bn));
  if (const auto* c = dynamic_cast<const nn::Conv3dImpl*>(&conv)) return add(folded(*c, c->options, bn));
  if (const auto* l = dynamic_cast<const nn::LinearImpl*>(&conv)) return add(folded(*l, l->options, bn));
  return {};
}

}  // namespace

size_t fuse_conv_bn(GraphModule& gm) {
  Graph& g = gm.graph();
  size_t count = 0;
  for (Node* bn : g.nodes()) {
    if (bn->op() != OpKind::CallModule || bn->args().size() != 1 || !bn->args()[0].is_node()) continue;
    Node* conv = bn->args()[0].node();
    if (conv->op() != OpKind::CallModule || conv->users().size() != 1) continue;
    auto bn_module = gm.submodule(bn->target());
    auto conv_module = gm.submodule(conv->target());
    if (!bn_module || !conv_module) continue;
    nn::detail::BatchNormFold fold;
    if (!bn_fold<1>(*bn_module, fold) && !bn_fold<2>(*bn_module, fold) && !bn_fold<3>(*bn_module, fold)) continue;
    const std::string name = fold_into(gm, conv->target(), *conv_module, fold);
    if (name.empty()) continue;
    conv->set_target(name);
    bn->replace_all_uses_with(conv);
    g.erase_node(bn);
    ++count;
  }
  gm.recompile();
  return count;
}

namespace {

// Whether a convolution runs on channel-blocked tensors (convolution_blocked): float32 Conv2d with
// zeros padding, one value per dim, and no fake quantizer.
bool blockable(const nn::ConvNdImpl<2>& conv) {
  return conv.weight.dtype() == kFloat && !conv.weight_fake_quant && nn::detail::symmetric_padding(conv).size() == 2;
}

}  // namespace

// Runs each Conv2d that is not to be blocked (`blocked`) in channels_last, as PyTorch's
// optimize_for_inference moves convolutions to oneDNN's layout: a copy of the layer with its weight
// in channels_last, its input made channels_last (free when it already is, as the previous
// convolution's output and what pointwise ops make of it are), and the graph's outputs made
// contiguous again, so that oneDNN needs no reorder between layers. With `dtype` the copies' floating
// weights and biases are in it. Returns whether it moved any.
bool convolutions_to_channels_last(GraphModule& gm, const std::unordered_set<const Node*>& blocked,
                                   std::optional<ScalarType> dtype) {
  Graph& g = gm.graph();
  bool any = false;
  for (Node* n : g.nodes()) {
    if (n->op() != OpKind::CallModule || n->args().size() != 1 || !n->args()[0].is_node()) continue;
    auto m = gm.submodule(n->target());
    const auto* conv = dynamic_cast<const nn::Conv2dImpl*>(m.get());
    if (!conv || blocked.count(n)) continue;
    auto copy = std::make_shared<nn::Conv2dImpl>(conv->options);
    const ScalarType to =
        dtype && dispatch::autocast_impl::eligible(conv->weight) ? *dtype : conv->weight.scalar_type();
    copy->to(to);
    {
      NoGradGuard no_grad;
      nn::set_data(copy->weight, conv->weight.to(to).clone(MemoryFormat::ChannelsLast));
      if (conv->bias.defined()) copy->bias.copy_(conv->bias);
    }
    copy->train(false);
    Node* input = n->args()[0].node();
    Node* cl;
    {
      auto at = g.inserting_before(n);
      // the cast autocast would make of the input, in the graph (a no-op on a cast value)
      if (to != conv->weight.scalar_type())
        input = g.call_function("to", {input, jit::IValue(jit::scalar_type_code(to))});
      cl = g.call_function("contiguous", {input},
                           {{"memory_format", jit::IValue(static_cast<int64_t>(MemoryFormat::ChannelsLast))}});
    }
    n->set_args({cl});
    n->set_target(add_owned(gm, n->target(), "_cl", copy));
    any = true;
  }
  if (!any) return false;
  Node* out = g.output_node();
  auto at = g.inserting_before(out);
  out->set_args({out->args()[0].map_nodes([&](Node* r) -> Argument { return g.call_function("contiguous", {r}); })});
  return true;
}

namespace {

// A convolution and the Hardswish after it, what fuse_conv_hardswish makes: child "0" is the
// convolution (shared with the graph's module), whose result gets hardswish as oneDNN writes it
// when no graph records (nn::detail::conv_activation_forward).
template <size_t D>
class ConvHardswishImpl : public nn::Module {
 public:
  explicit ConvHardswishImpl(std::shared_ptr<nn::ConvNdImpl<D>> conv_)
      : nn::Module("ember::fx::ConvHardswish" + std::to_string(D) + "d"), conv(std::move(conv_)) {
    register_module("0", conv);
  }
  Tensor forward(const Tensor& input) {
    return nn::detail::conv_activation_forward(*conv, input, ember::detail::ConvActivation::kHardswish);
  }
  void pretty_print(std::ostream& stream) const override { stream << name(); }
  std::shared_ptr<nn::ConvNdImpl<D>> conv;
};

// Whether n applies the activation (as the function `op`, its in-place form, or the module M) to
// its one argument.
template <class M>
bool applies(GraphModule& gm, const Node* n, const std::string& op) {
  if (n->op() == OpKind::CallFunction) return n->target() == op || n->target() == op + "_";
  return n->op() == OpKind::CallModule && std::dynamic_pointer_cast<M>(gm.submodule(n->target())) != nullptr;
}

// Each convolution module whose result only an activation node reads (`is_activation`) becomes the
// module `fuse` registers for it (its name, or empty when the layer is not one it fuses), and the
// activation node goes. Returns the number fused.
template <class IsActivation, class Fuse>
size_t fuse_conv_activation(GraphModule& gm, IsActivation is_activation, Fuse fuse) {
  Graph& g = gm.graph();
  size_t count = 0;
  for (Node* act : g.nodes()) {
    if (act->erased() || act->args().size() != 1 || !act->args()[0].is_node() || !act->kwargs().empty()) continue;
    Node* conv = act->args()[0].node();
    if (!is_activation(act) || conv->op() != OpKind::CallModule || conv->users().size() != 1) continue;
    const std::string name = fuse(gm.submodule(conv->target()), conv->target());
    if (name.empty()) continue;
    conv->set_target(name);
    act->replace_all_uses_with(conv);
    g.erase_node(act);
    ++count;
  }
  gm.recompile();
  return count;
}

}  // namespace

size_t fuse_conv_relu(GraphModule& gm) {
  return fuse_conv_activation(
      gm, [&](const Node* n) { return applies<nn::ReLUImpl>(gm, n, "relu"); },
      [&](const std::shared_ptr<nn::Module>& m, const std::string& target) -> std::string {
        auto add = [&](auto module) { return add_owned(gm, target, "_relu", std::move(module)); };
        if (auto c = std::dynamic_pointer_cast<nn::Conv1dImpl>(m)) return add(std::make_shared<nn::intrinsic::ConvReLU1dImpl>(nn::Conv1d(c)));
        if (auto c = std::dynamic_pointer_cast<nn::Conv2dImpl>(m)) return add(std::make_shared<nn::intrinsic::ConvReLU2dImpl>(nn::Conv2d(c)));
        if (auto c = std::dynamic_pointer_cast<nn::Conv3dImpl>(m)) return add(std::make_shared<nn::intrinsic::ConvReLU3dImpl>(nn::Conv3d(c)));
        return {};
      });
}

size_t fuse_conv_hardswish(GraphModule& gm) {
  return fuse_conv_activation(
      gm, [&](const Node* n) { return applies<nn::HardswishImpl>(gm, n, "hardswish"); },
      [&](const std::shared_ptr<nn::Module>& m, const std::string& target) -> std::string {
        auto add = [&](auto module) { return add_owned(gm, target, "_hardswish", std::move(module)); };
        if (auto c = std::dynamic_pointer_cast<nn::ConvNdImpl<1>>(m)) return add(std::make_shared<ConvHardswishImpl<1>>(c));
        if (auto c = std::dynamic_pointer_cast<nn::ConvNdImpl<2>>(m)) return add(std::make_shared<ConvHardswishImpl<2>>(c));
        if (auto c = std::dynamic_pointer_cast<nn::ConvNdImpl<3>>(m)) return add(std::make_shared<ConvHardswishImpl<3>>(c));
        return {};
      });
}

namespace {

// A Conv2d whose result is added to another value, and the ReLU of the sum when there is one, what
// fuse_conv_add makes (child "0" is the convolution, shared with the graph's module): when no graph
// records, the sum is written into the other value, which nothing reads afterwards (one oneDNN
// convolution adding it as it writes: convolution_add_activation); otherwise conv, add and relu.
class ConvAddImpl : public nn::Module {
 public:
  ConvAddImpl(std::shared_ptr<nn::Conv2dImpl> conv_, bool relu)
      : nn::Module(relu ? "ember::fx::ConvAddReLU2d" : "ember::fx::ConvAdd2d"),
        conv(std::move(conv_)),
        padding_(nn::detail::symmetric_padding(*conv)),
        relu_(relu) {
    register_module("0", conv);
  }
  Tensor forward(const Tensor& input, const Tensor& other) {
    // (a sum of another dtype, a broadcast, autocast's casts: convolution_add_activation's own cases)
    const bool records =
        GradMode::is_enabled() && (input.requires_grad() || other.requires_grad() || conv->weight.requires_grad() ||
                                   (conv->bias.defined() && conv->bias.requires_grad()));
    if (records || (dispatch::thread_state().active & dispatch::kTracingLayer)) {
      const Tensor sum = conv->forward(input) + other;
      return relu_ ? ember::relu(sum) : sum;
    }
    const auto& o = conv->options;
    return ember::detail::convolution_add_activation(
        other, input, conv->weight, conv->bias, IntArrayRef(o.stride()), padding_, IntArrayRef(o.dilation()),
        o.groups(), relu_ ? std::optional(ember::detail::ConvActivation::kReLU) : std::nullopt);
  }
  void pretty_print(std::ostream& stream) const override { stream << name(); }
  std::shared_ptr<nn::Conv2dImpl> conv;

 private:
  std::vector<int64_t> padding_;
  bool relu_;
};

using Order = std::unordered_map<const Node*, size_t>;

// Whether a module returns a new tensor (never its input): the convolutions and their fused forms,
// and max pooling.
bool returns_new(const std::shared_ptr<nn::Module>& m) {
  return std::dynamic_pointer_cast<nn::Conv2dImpl>(m) || std::dynamic_pointer_cast<nn::intrinsic::ConvReLU2dImpl>(m) ||
         std::dynamic_pointer_cast<ConvHardswishImpl<2>>(m) || std::dynamic_pointer_cast<ConvAddImpl>(m) ||
         std::dynamic_pointer_cast<nn::MaxPool2dImpl>(m);
}

// Whether every reader of v but `from` and `add` runs before `add` and none is `conv`: readers that
// return a new tensor, or those that may return v itself (to, contiguous, a ReLU module), whose own
// readers are held to the same rule.
bool read_before(GraphModule& gm, const Node* v, const Node* from, const Node* conv, const Node* add,
                 const Order& order) {
  for (const Node* u : v->users()) {
    if (u == add || u == from) continue;
    const auto at = order.find(u);
    if (u == conv || at == order.end() || at->second > order.at(add)) return false;
    if (u->op() != OpKind::CallModule && u->op() != OpKind::CallFunction) return false;
    const auto m = u->op() == OpKind::CallModule ? gm.submodule(u->target()) : nullptr;
    if (m && returns_new(m)) continue;
    const bool alias =
        m ? std::dynamic_pointer_cast<nn::ReLUImpl>(m) != nullptr : u->target() == "to" || u->target() == "contiguous";
    if (!alias || !read_before(gm, u, v, conv, add, order)) return false;
  }
  return true;
}

// Whether v's value is a tensor of its own (a new tensor, or a ReLU's in place on one) that nothing
// reads after `add` (read_before): add's fused replacement may write into it.
bool overwritable(GraphModule& gm, const Node* v, const Node* conv, const Node* add, const Order& order) {
  if (!read_before(gm, v, nullptr, conv, add, order)) return false;
  if (v->op() == OpKind::CallFunction) return v->target() == "add";
  if (v->op() != OpKind::CallModule) return false;
  const auto m = gm.submodule(v->target());
  if (returns_new(m)) return true;
  const auto relu = std::dynamic_pointer_cast<nn::ReLUImpl>(m);
  if (!relu || v->args().size() != 1 || !v->args()[0].is_node()) return false;
  if (!relu->options.inplace()) return true;
  const Node* input = v->args()[0].node();
  return input->users().size() == 1 && overwritable(gm, input, conv, add, order);
}

// Each Conv2d module (zeros padding) whose result only an add reads, adding a value that nothing reads
// afterwards (a residual block's identity or downsampled input), becomes a ConvAdd module that writes
// the sum into that value, taking the ReLU that alone reads the sum when there is one. Returns the
// number fused.
size_t fuse_conv_add(GraphModule& gm) {
  Graph& g = gm.graph();
  Order order;
  for (const Node* n : g.nodes()) order.emplace(n, order.size());
  size_t count = 0;
  for (Node* add : g.nodes()) {
    const auto& args = add->args();
    if (add->erased() || add->op() != OpKind::CallFunction || add->target() != "add" || args.size() != 2 ||
        !args[0].is_node() || !args[1].is_node())
      continue;
    bool unit_alpha = true;
    for (const auto& [name, value] : add->kwargs())
      unit_alpha = unit_alpha && name == "alpha" && !value.is_node() && !value.is_list() &&
                   ((value.value().isInt() && value.value().toInt() == 1) ||
                    (value.value().isDouble() && value.value().toDouble() == 1.0));
    if (!unit_alpha) continue;
    for (size_t k = 0; k < 2; ++k) {
      Node* conv = args[k].node();
      Node* other = args[1 - k].node();
      if (conv->op() != OpKind::CallModule || conv->users().size() != 1 || conv->args().size() != 1) continue;
      auto c = std::dynamic_pointer_cast<nn::Conv2dImpl>(gm.submodule(conv->target()));
      if (!c || c->weight_fake_quant || nn::detail::symmetric_padding(*c).size() != 2) continue;
      if (!overwritable(gm, other, conv, add, order)) continue;
      Node* relu = add->users().size() == 1 ? add->users()[0] : nullptr;
      if (relu && !(relu->args().size() == 1 && relu->kwargs().empty() && applies<nn::ReLUImpl>(gm, relu, "relu")))
        relu = nullptr;
      const std::string name = owned_name(gm, conv->target(), relu ? "_add_relu" : "_add");
      gm.set_submodule(name, std::make_shared<ConvAddImpl>(c, relu != nullptr),
                       &nn::detail::invoke_forward<ConvAddImpl, 2>);
      Node* fused;
      {
        auto at = g.inserting_before(add);
        fused = g.call_module(name, {conv->args()[0], Argument(other)});
      }
      order.emplace(fused, order.at(add));
      Node* last = relu ? relu : add;
      last->replace_all_uses_with(fused);
      if (relu) g.erase_node(relu);
      g.erase_node(add);
      g.erase_node(conv);
      ++count;
      break;
    }
  }
  gm.recompile();
  return count;
}

// A 2-D convolution, and the activation fused after it, run by convolution_blocked: reading its
// input channel-blocked (else in its own layout) and writing its result channel-blocked (else in
// `plain_format`). Child "0" is the convolution, shared with the graph's module.
class BlockedConv2dImpl : public nn::Module {
 public:
  BlockedConv2dImpl(std::shared_ptr<nn::ConvNdImpl<2>> conv_, std::optional<ember::detail::ConvActivation> activation,
                    bool blocked_input, bool blocked_output, MemoryFormat plain_format)
      : nn::Module("ember::fx::BlockedConv2d"),
        conv(std::move(conv_)),
        padding_(nn::detail::symmetric_padding(*conv)),
        activation_(activation),
        blocked_input_(blocked_input),
        blocked_output_(blocked_output),
        plain_format_(plain_format) {
    register_module("0", conv);
  }
  Tensor forward(const Tensor& input) {
    const auto& o = conv->options;
    return ember::detail::convolution_blocked(input, blocked_input_, conv->weight, conv->bias, IntArrayRef(o.stride()),
                                              padding_, IntArrayRef(o.dilation()), o.groups(), activation_,
                                              blocked_output_, plain_format_);
  }
  void pretty_print(std::ostream& stream) const override {
    stream << name() << "(" << (blocked_input_ ? "blocked" : "plain") << " -> "
           << (blocked_output_ ? "blocked" : "plain");
    if (activation_) stream << (*activation_ == ember::detail::ConvActivation::kReLU ? ", relu" : ", hardswish");
    stream << ")";
  }
  std::shared_ptr<nn::ConvNdImpl<2>> conv;

 private:
  std::vector<int64_t> padding_;
  std::optional<ember::detail::ConvActivation> activation_;
  bool blocked_input_, blocked_output_;
  MemoryFormat plain_format_;
};

// A channel-blocked tensor of `channels` channels made an ordinary one in `format`.
class FromChannelBlockedImpl : public nn::Module {
 public:
  FromChannelBlockedImpl(int64_t channels, MemoryFormat format)
      : nn::Module("ember::fx::FromChannelBlocked"), channels_(channels), format_(format) {}
  Tensor forward(const Tensor& blocked) { return ember::detail::from_channel_blocked(blocked, channels_, format_); }

 private:
  int64_t channels_;
  MemoryFormat format_;
};

// A convolution node block_convolutions may rewrite: its convolution and activation.
struct ConvNode {
  std::shared_ptr<nn::ConvNdImpl<2>> conv;
  std::optional<ember::detail::ConvActivation> activation;
};

std::optional<ConvNode> conv_node(GraphModule& gm, const Node* n) {
  if (n->op() != OpKind::CallModule || n->args().size() != 1 || !n->args()[0].is_node()) return std::nullopt;
  auto m = gm.submodule(n->target());
  std::optional<ConvNode> c;
  if (auto conv = std::dynamic_pointer_cast<nn::Conv2dImpl>(m)) c = ConvNode{conv, std::nullopt};
  if (auto cr = std::dynamic_pointer_cast<nn::intrinsic::ConvReLU2dImpl>(m); cr && !cr->static_quantized)
    c = ConvNode{cr->conv.ptr(), ember::detail::ConvActivation::kReLU};
  if (auto ch = std::dynamic_pointer_cast<ConvHardswishImpl<2>>(m))
    c = ConvNode{ch->conv, ember::detail::ConvActivation::kHardswish};
  if (!c || !blockable(*c->conv)) return std::nullopt;
  return c;
}

// Whether n computes elementwise on channel-blocked operands as on ordinary ones, keeping zeros
// zero (so the blocks' padding stays zero): relu, hardswish, or the sum of two tensors. Its tensor
// operands are returned in `operands`; `in_place` says whether it writes into the first.
bool blocked_elementwise(GraphModule& gm, const Node* n, std::vector<Node*>& operands, bool& in_place) {
  const auto& args = n->args();
  operands.clear();
  in_place = false;
  if (n->op() == OpKind::CallModule) {
    auto m = gm.submodule(n->target());
    const auto relu = std::dynamic_pointer_cast<nn::ReLUImpl>(m);
    if (!relu && !std::dynamic_pointer_cast<nn::HardswishImpl>(m)) return false;
    in_place = relu && relu->options.inplace();
  } else if (n->op() == OpKind::CallFunction) {
    const std::string& t = n->target();
    in_place = !t.empty() && t.back() == '_';
    const std::string op = in_place ? t.substr(0, t.size() - 1) : t;
    if (op == "add") {
      // add(self, other, *, alpha): alpha * 0 + 0 is 0
      if (args.size() != 2 || !args[1].is_node()) return false;
      for (const auto& [name, value] : n->kwargs())
        if (name != "alpha" || value.is_node() || value.is_list()) return false;
    } else if ((op != "relu" && op != "hardswish") || !n->kwargs().empty()) {
      return false;
    }
  } else {
    return false;
  }
  for (const Argument& a : args) {
    if (!a.is_node()) return false;
    operands.push_back(a.node());
  }
  return !operands.empty();
}

// A value that can be kept channel-blocked: its channel count, the convolution that makes it (none:
// an elementwise op), and whether it is blocked.
struct Value {
  int64_t channels;
  std::optional<ConvNode> conv;
  bool blocked = false;
};
using Values = std::unordered_map<const Node*, Value>;

// The values that can be blocked: the results of the convolutions conv_node() takes (of those in
// `convs` when given), then those of the elementwise ops all of whose operands are such values of
// as many channels. A value an op writes into is not, unless that op is its only reader: a reader
// given a copy before the write would not see it.
Values blockable_values(GraphModule& gm, const std::unordered_set<const Node*>* convs) {
  Graph& g = gm.graph();
  std::unordered_set<const Node*> excluded;
  std::vector<Node*> operands;
  bool in_place = false;
  for (Node* n : g.nodes()) {
    const bool writes = blocked_elementwise(gm, n, operands, in_place)
                            ? in_place
                            : n->op() == OpKind::CallFunction && !n->target().empty() && n->target().back() == '_';
    if (writes && !n->args().empty() && n->args()[0].is_node() && n->args()[0].node()->users().size() > 1)
      excluded.insert(n->args()[0].node());
  }
  Values values;
  for (Node* n : g.nodes()) {
    if (excluded.count(n)) continue;
    if (auto c = conv_node(gm, n); c && (!convs || convs->count(n))) {
      values[n] = {c->conv->options.out_channels(), std::move(c)};
    } else if (blocked_elementwise(gm, n, operands, in_place)) {
      const auto first = values.find(operands[0]);
      bool all = first != values.end();
      for (const Node* o : operands) all = all && values.count(o) && values.at(o).channels == first->second.channels;
      if (all) values[n] = {first->second.channels, std::nullopt};
    }
  }
  return values;
}

// Whether reader u takes the value v blocked: an elementwise op among the values, or a convolution
// reading v as its input, of as many channels.
bool takes_blocked(const Values& values, const Node* u, const Node* v) {
  const auto it = values.find(u);
  if (it == values.end() || !it->second.conv) return it != values.end();
  return u->args()[0].node() == v && it->second.conv->conv->options.in_channels() == values.at(v).channels;
}

// The convolutions to block: those of each group of values connected by blocked reads that holds
// a 3x3 unit-stride convolution of 16 or more input channels, which oneDNN runs by Winograd on
// blocked tensors (from 512 output positions; its direct kernel is as fast on them) whatever layout
// it is given, so reorders around it are saved. Groups without one (MobileNet's 1x1, depthwise and
// strided convolutions) stay in channels_last, where oneDNN's kernels need no reorder and no padding
// of channel counts such as 24 or 40 to the blocks.
std::unordered_set<const Node*> convolutions_to_block(GraphModule& gm) {
  const Values values = blockable_values(gm, nullptr);
  std::unordered_set<const Node*> seen, chosen;
  for (const auto& entry : values) {
    if (!seen.insert(entry.first).second) continue;
    std::vector<const Node*> group{entry.first};
    bool winograd = false;
    for (size_t k = 0; k < group.size(); ++k) {
      const Node* v = group[k];
      if (const auto& c = values.at(v).conv) {
        const auto& o = c->conv->options;
        winograd = winograd || (o.in_channels() >= 16 && o.groups() == 1 && o.kernel_size()[0] == 3 &&
                                o.kernel_size()[1] == 3 && o.stride()[0] == 1 && o.stride()[1] == 1 &&
                                o.dilation()[0] == 1 && o.dilation()[1] == 1);
      }
      for (const Node* u : v->users())
        if (takes_blocked(values, u, v) && seen.insert(u).second) group.push_back(u);
      for (const Node* p : v->all_input_nodes())
        if (values.count(p) && takes_blocked(values, v, p) && seen.insert(p).second) group.push_back(p);
    }
    for (const Node* n : group)
      if (winograd && values.at(n).conv) chosen.insert(n);
  }
  return chosen;
}

// Keeps the activations between consecutive convolutions (`convs`, from convolutions_to_block) in
// oneDNN's channel-blocked layout, as PyTorch's optimize_for_inference keeps mkldnn tensors: each
// becomes a BlockedConv2d writing its result blocked when a reader takes it so (another of them
// of as many input channels, or relu, hardswish or a sum of blocked values, which work on the
// blocks elementwise); every other reader (the graph's output included) reads it through one
// FromChannelBlocked node. A chain of convolutions then reorders into the blocks once (inside its
// first convolution) and out once, instead of around each convolution. Results read plain are in
// `plain_format`: channels_last where other convolutions run in channels_last (resnet's stem,
// whose pooled result the first residual sum adds to a blocked convolution's), so that ops never
// mix layouts.
void block_convolutions(GraphModule& gm, const std::unordered_set<const Node*>& convs, MemoryFormat plain_format) {
  Graph& g = gm.graph();
  Values values = blockable_values(gm, &convs);
  // An elementwise op's result is blocked (its operands are); a convolution's when a reader takes it.
  for (auto& [v, value] : values) {
    value.blocked = !value.conv;
    for (const Node* u : v->users()) value.blocked = value.blocked || takes_blocked(values, u, v);
  }
  auto blocked = [&](const Node* v) {
    const auto it = values.find(v);
    return it != values.end() && it->second.blocked;
  };
  for (Node* n : g.nodes()) {
    if (!blocked(n)) continue;
    std::vector<Node*> plain;
    for (Node* u : n->users())
      if (!takes_blocked(values, u, n)) plain.push_back(u);
    if (plain.empty()) continue;
    Node* convert;
    {
      auto at = g.inserting_after(n);
      convert = g.call_module(
          add_owned(gm, n->name(), "_plain",
                    std::make_shared<FromChannelBlockedImpl>(values.at(n).channels, plain_format)),
          {n});
    }
    for (Node* u : plain) u->replace_input_with(n, convert);
  }
  for (Node* n : g.nodes()) {
    const auto it = values.find(n);
    if (it == values.end() || !it->second.conv) continue;
    const Node* input = n->args()[0].node();
    const bool blocked_input = blocked(input) && takes_blocked(values, n, input);
    if (!blocked_input && !it->second.blocked) continue;
    const ConvNode& c = *it->second.conv;
    auto module =
        std::make_shared<BlockedConv2dImpl>(c.conv, c.activation, blocked_input, it->second.blocked, plain_format);
    n->set_target(add_owned(gm, n->target(), "_blocked", std::move(module)));
  }
  gm.recompile();
}

}  // namespace

void optimize_for_inference(GraphModule& gm) {
  EMBER_CHECK(!gm.is_training(), "fx", "optimize_for_inference needs a module in eval mode (call eval())");
  fuse_conv_bn(gm);
  Graph& g = gm.graph();
  for (Node* n : g.nodes()) {
    bool identity = false;
    if (n->op() == OpKind::CallModule) {
      auto m = gm.submodule(n->target());
      const std::string& type = m ? m->name() : std::string();
      identity = type == "ember::nn::IdentityImpl" ||
                 (type.find("Dropout") != std::string::npos && type.rfind("ember::nn::", 0) == 0);
    } else if (n->op() == OpKind::CallFunction &&
               (n->target() == "dropout" || n->target() == "feature_dropout" || n->target() == "alpha_dropout" ||
                n->target() == "feature_alpha_dropout")) {
      // dropout(input, p, train): the identity when train is False.
      const Argument& train = n->args().size() > 2 ? n->args()[2] : Argument();
      identity = !train.is_node() && train.value().isBool() && !train.value().toBool();
    }
    if (!identity || n->args().empty() || !n->args()[0].is_node()) continue;
    n->replace_all_uses_with(n->args()[0].node());
    g.erase_node(n);
  }
  // Inside a CPU autocast region the graph is made for it, as freezing a trace made under autocast
  // folds the casts of the weights: the channels_last convolutions keep their weights in the
  // region's dtype (the cast each call would make, made once), and none runs blocked (oneDNN's
  // blocked layout here is float32's).
  const std::optional<ScalarType> region =
      is_autocast_enabled(kCPU) ? std::optional<ScalarType>(get_autocast_dtype(kCPU)) : std::nullopt;
  const std::unordered_set<const Node*> blocked =
      region ? std::unordered_set<const Node*>() : convolutions_to_block(gm);
  const bool channels_last = convolutions_to_channels_last(gm, blocked, region);
  fuse_conv_relu(gm);
  fuse_conv_hardswish(gm);
  block_convolutions(gm, blocked, channels_last ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous);
  fuse_conv_add(gm);
  fuse_pointwise(gm);
  g.eliminate_dead_code();
  gm.delete_all_unused_submodules();
  gm.recompile();
}

// ---- subgraph_rewriter ------------------------------------------------------------------------

namespace subgraph_rewriter {
namespace {

bool same_value(const jit::IValue& a, const jit::IValue& b) {
  if (a.tag() != b.tag()) return false;
  if (a.isNone()) return true;
  if (a.isBool()) return a.toBool() == b.toBool();
  if (a.isInt()) return a.toInt() == b.toInt();
  if (a.isDouble()) return a.toDouble() == b.toDouble();
  if (a.isString()) return a.toStringRef() == b.toStringRef();
  if (!a.isList()) return false;
  const auto x = a.toListRef(), y = b.toListRef();
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (!same_value(x[i], y[i])) return false;
  return true;
}

struct Matcher {
  std::vector<Node*> placeholders;  // the pattern's, in order
  std::unordered_map<const Node*, Node*> map;
  const std::unordered_set<const Node*>& taken;

  bool match(const Node* p, Node* n) {
    if (auto it = map.find(p); it != map.end()) return it->second == n;
    if (p->op() == OpKind::Placeholder) {
      map[p] = n;
      return true;
    }
    if (taken.count(n) || p->op() != n->op() || p->target() != n->target() || p->args().size() != n->args().size() ||
        p->kwargs().size() != n->kwargs().size())
      return false;
    map[p] = n;
    for (size_t i = 0; i < p->args().size(); ++i)
      if (!match_arg(p->args()[i], n->args()[i])) return false;
    for (size_t i = 0; i < p->kwargs().size(); ++i)
      if (p->kwargs()[i].first != n->kwargs()[i].first || !match_arg(p->kwargs()[i].second, n->kwargs()[i].second))
        return false;
    return true;
  }
  bool match_arg(const Argument& p, const Argument& n) {
    if (p.is_node()) return n.is_node() && match(p.node(), n.node());
    if (p.is_list()) {
      if (!n.is_list() || p.items().size() != n.items().size()) return false;
      for (size_t i = 0; i < p.items().size(); ++i)
        if (!match_arg(p.items()[i], n.items()[i])) return false;
      return true;
    }
    return !n.is_node() && !n.is_list() && same_value(p.value(), n.value());
  }
};

}  // namespace

std::vector<Match> replace_pattern(GraphModule& gm, const GraphModule& pattern, const GraphModule& replacement) {
  const Node* p_out = pattern.graph().output_node();
  EMBER_CHECK(p_out && p_out->args().size() == 1 && p_out->args()[0].is_node(), "fx",
              "replace_pattern: the pattern must return one tensor");
  const Node* anchor = p_out->args()[0].node();
  std::vector<const Node*> p_inputs, r_inputs;
  for (const Node* n : pattern.graph().nodes())
    if (n->op() == OpKind::Placeholder) p_inputs.push_back(n);
  for (const Node* n : replacement.graph().nodes()) {
    if (n->op() == OpKind::Placeholder) r_inputs.push_back(n);
    EMBER_CHECK(n->op() != OpKind::CallModule && n->op() != OpKind::GetAttr, "fx", "replace_pattern: replacement node '",
                n->name(), "' is a ", to_string(n->op()), "; a replacement may only call ops on its inputs");
  }
  EMBER_CHECK(p_inputs.size() == r_inputs.size(), "fx", "replace_pattern: the pattern takes ", p_inputs.size(),
              " inputs and the replacement ", r_inputs.size());
  Graph& g = gm.graph();
  std::unordered_set<const Node*> taken;
  std::vector<Match> matches;
  for (Node* n : g.nodes()) {
    if (n->erased() || n->op() == OpKind::Placeholder || n->op() == OpKind::Output) continue;
    Matcher m{{}, {}, taken};
    if (!m.match(anchor, n)) continue;
    // Inner results may not escape: every user of a matched inner node is matched too.
    bool contained = true;
    std::unordered_set<const Node*> inner;
    for (const auto& [p, gn] : m.map)
      if (p->op() != OpKind::Placeholder) inner.insert(gn);
    for (const auto& [p, gn] : m.map) {
      if (p->op() == OpKind::Placeholder || p == anchor) continue;
      for (const Node* u : gn->users()) contained &= inner.count(u) > 0;
    }
    if (!contained) continue;
    // Splice the replacement in before the anchor.
    std::unordered_map<const Node*, Node*> r_map;
    for (size_t i = 0; i < r_inputs.size(); ++i) r_map[r_inputs[i]] = m.map.at(p_inputs[i]);
    Node* result = nullptr;
    {
      auto at = g.inserting_before(n);
      for (const Node* r : replacement.graph().nodes()) {
        if (r->op() == OpKind::Placeholder) continue;
        if (r->op() == OpKind::Output) {
          EMBER_CHECK(r->args().size() == 1 && r->args()[0].is_node(), "fx",
                      "replace_pattern: the replacement must return one tensor");
          result = r_map.at(r->args()[0].node());
          continue;
        }
        r_map[r] = g.node_copy(*r, [&](Node* x) -> Argument { return r_map.at(x); });
      }
    }
    n->replace_all_uses_with(result);
    Match match{result, {}};
    // Erase the matched nodes, users first (the pattern's order reversed).
    auto p_nodes = pattern.graph().nodes();
    for (auto it = p_nodes.rbegin(); it != p_nodes.rend(); ++it) {
      const Node* p = *it;
      if (p->op() == OpKind::Placeholder || p->op() == OpKind::Output) continue;
      Node* gn = m.map.at(p);
      match.nodes_map[p] = gn;
      if (gn->users().empty()) g.erase_node(gn);
      taken.insert(gn);
    }
    matches.push_back(std::move(match));
  }
  gm.recompile();
  return matches;
}

}  // namespace subgraph_rewriter

}  // namespace ember::fx
