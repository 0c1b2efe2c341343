// FX graph-mode quantization: prepare_fx, prepare_qat_fx and convert_fx
// (include/ember/fx/quantize.h).
#include "ember/fx/quantize.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "ember/factory.h"
#include "ember/nn/intrinsic.h"
#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/pooling.h"
#include "ember/nn/quantized.h"

namespace ember::fx {

QConfigMapping& QConfigMapping::set_global(quantization::QConfig qconfig) {
  global_ = std::move(qconfig);
  return *this;
}

QConfigMapping& QConfigMapping::set_module_name(const std::string& name, std::optional<quantization::QConfig> qconfig) {
  by_name_.emplace_back(name, std::move(qconfig));
  return *this;
}

std::optional<quantization::QConfig> QConfigMapping::qconfig_for(const std::string& qualified_name) const {
  const std::pair<std::string, std::optional<quantization::QConfig>>* best = nullptr;
  for (const auto& entry : by_name_) {
    const std::string& name = entry.first;
    const bool covers = qualified_name == name ||
                        (qualified_name.size() > name.size() && qualified_name.compare(0, name.size(), name) == 0 &&
                         qualified_name[name.size()] == '.');
    if (covers && (!best || name.size() >= best->first.size())) best = &entry;
  }
  return best ? best->second : global_;
}

QConfigMapping get_default_qconfig_mapping(const std::string& backend) {
  return QConfigMapping().set_global(quantization::get_default_qconfig(backend));
}

QConfigMapping get_default_qat_qconfig_mapping(const std::string& backend) {
  return QConfigMapping().set_global(quantization::get_default_qat_qconfig(backend));
}

namespace {

constexpr const char* kObserverPrefix = "activation_post_process_";
constexpr int64_t kQUInt8Code = 13;  // PyTorch's ScalarType code of quint8, as graphs spell dtypes

// A layer that has an int8 form: the Linear or Conv holding its weight, and that module's slot
// for the weight's fake quantizer (quantization-aware training); {nullptr, nullptr} for others.
std::pair<nn::Module*, std::shared_ptr<quantization::ObserverOrFakeQuantize>*> weight_layer(nn::Module* m) {
  auto conv = [&]<size_t D>() -> std::pair<nn::Module*, std::shared_ptr<quantization::ObserverOrFakeQuantize>*> {
    if (auto* c = dynamic_cast<nn::ConvNdImpl<D>*>(m)) return {c, &c->weight_fake_quant};
    if (auto* f = dynamic_cast<nn::intrinsic::ConvReLUImpl<D>*>(m)) return {f->conv.get(), &f->conv->weight_fake_quant};
    if (auto* f = dynamic_cast<nn::intrinsic::ConvBnImpl<D>*>(m)) return {f->conv.get(), &f->conv->weight_fake_quant};
    return {nullptr, nullptr};
  };
  if (auto* l = dynamic_cast<nn::LinearImpl*>(m)) return {l, &l->weight_fake_quant};
  if (auto* f = dynamic_cast<nn::intrinsic::LinearReLUImpl*>(m)) return {f->linear.get(), &f->linear->weight_fake_quant};
  for (auto found : {conv.template operator()<1>(), conv.template operator()<2>(), conv.template operator()<3>()})
    if (found.first) return found;
  return {nullptr, nullptr};
}
bool quantizable(const std::shared_ptr<nn::Module>& m) { return weight_layer(m.get()).first != nullptr; }

Node* first_input(const Node& n) {
  return !n.args().empty() && n.args()[0].is_node() ? n.args()[0].node() : nullptr;
}

// Ops whose result is quantized as their (first) input is, with its parameters: they take a
// quantized tensor as it is.
bool passes_through(GraphModule& gm, const Node& n) {
  static const std::unordered_set<std::string> ops = {
      "relu",    "relu_",     "max_pool1d", "max_pool2d", "adaptive_avg_pool2d", "avg_pool2d", "flatten",
      "view",    "reshape",   "permute",    "transpose",  "squeeze",             "unsqueeze",  "contiguous",
      "clone",   "hardtanh_", "relu6"};
  if (n.op() == OpKind::CallFunction) return ops.count(n.target()) > 0;
  if (n.op() != OpKind::CallModule) return false;
  const auto m = gm.submodule(n.target());
  return dynamic_cast<const nn::ReLUImpl*>(m.get()) || dynamic_cast<const nn::MaxPool1dImpl*>(m.get()) ||
         dynamic_cast<const nn::MaxPool2dImpl*>(m.get()) || dynamic_cast<const nn::AdaptiveAvgPool2dImpl*>(m.get()) ||
         dynamic_cast<const nn::AvgPool2dImpl*>(m.get()) || dynamic_cast<const nn::FlattenImpl*>(m.get());
}

// Dropout in eval mode and Identity modules return their input: removed from the graph.
void remove_identities(GraphModule& gm) {
  Graph& g = gm.graph();
  for (Node* n : g.nodes()) {
    bool identity = false;
    if (n->op() == OpKind::CallModule) {
      const auto m = gm.submodule(n->target());
      identity = dynamic_cast<const nn::IdentityImpl*>(m.get()) ||
                 (m && m->name().find("Dropout") != std::string::npos && !m->is_training());
    } else if (n->op() == OpKind::CallFunction && n->target() == "dropout") {  // dropout(input, p, train)
      const Argument& train = n->args().size() > 2 ? n->args()[2] : Argument();
      identity = !train.is_node() && train.value().isBool() && !train.value().toBool();
    }
    Node* in = first_input(*n);
    if (!identity || !in) continue;
    n->replace_all_uses_with(in);
    g.erase_node(n);
  }
}

// Registers `module` as a new top-level submodule named after `target` (dots made underscores)
// plus `suffix`, unique; returns the name.
template <class M>
std::string add_module_for(GraphModule& gm, const std::string& target, const char* suffix, std::shared_ptr<M> m) {
  std::string base = target + suffix;
  std::replace(base.begin(), base.end(), '.', '_');
  std::string name = base;
  for (size_t k = 1; gm.submodule(name); ++k) name = base + "_" + std::to_string(k);
  gm.add_module(name, std::move(m));
  return name;
}

// Linear followed only by a ReLU (module or op) becomes nn::intrinsic::LinearReLU.
void fuse_linear_relu(GraphModule& gm) {
  Graph& g = gm.graph();
  for (Node* relu : g.nodes()) {
    if (relu->erased() || relu->args().size() != 1 || !relu->kwargs().empty()) continue;
    Node* lin = first_input(*relu);
    const bool is_relu = relu->op() == OpKind::CallFunction
                             ? relu->target() == "relu" || relu->target() == "relu_"
                             : relu->op() == OpKind::CallModule &&
                                   std::dynamic_pointer_cast<nn::ReLUImpl>(gm.submodule(relu->target())) != nullptr;
    if (!is_relu || !lin || lin->op() != OpKind::CallModule || lin->users().size() != 1) continue;
    auto linear = std::dynamic_pointer_cast<nn::LinearImpl>(gm.submodule(lin->target()));
    if (!linear) continue;
    lin->set_target(
        add_module_for(gm, lin->target(), "_relu", std::make_shared<nn::intrinsic::LinearReLUImpl>(nn::Linear(linear))));
    relu->replace_all_uses_with(lin);
    g.erase_node(relu);
  }
}

// Quantization-aware training's fusion: a Conv{1,2,3}d read only by a BatchNorm of its dimension
// (and that only by a ReLU, module or op) becomes nn::intrinsic::ConvBn (ConvBnReLU) of the two
// (three) modules, which keeps training the batch norm.
void fuse_conv_bn_qat(GraphModule& gm) {
  Graph& g = gm.graph();
  auto is_relu = [&](const Node* n) {
    if (n->args().size() != 1 || !n->kwargs().empty()) return false;
    if (n->op() == OpKind::CallFunction) return n->target() == "relu" || n->target() == "relu_";
    return n->op() == OpKind::CallModule && std::dynamic_pointer_cast<nn::ReLUImpl>(gm.submodule(n->target()));
  };
  auto fuse = [&]<size_t D>(Node* conv_node, Node* bn_node) {
    // (Conv{D}dImpl and BatchNorm{D}dImpl themselves: the holders ConvBn takes)
    auto conv = std::dynamic_pointer_cast<typename nn::intrinsic::ConvHolder<D>::Impl>(gm.submodule(conv_node->target()));
    auto bn = std::dynamic_pointer_cast<typename nn::intrinsic::BatchNormHolder<D>::Impl>(gm.submodule(bn_node->target()));
    if (!conv || !bn || conv->options.out_channels() != bn->options.num_features()) return false;
    Node* relu = bn_node->users().size() == 1 && is_relu(bn_node->users()[0]) ? bn_node->users()[0] : nullptr;
    std::shared_ptr<nn::intrinsic::ConvBnImpl<D>> fused;
    if (relu) fused = std::make_shared<nn::intrinsic::ConvBnReLUFor<D>>(conv, bn);
    else fused = std::make_shared<nn::intrinsic::ConvBnFor<D>>(conv, bn);
    fused->train(conv->is_training());
    conv_node->set_target(add_module_for(gm, conv_node->target(), relu ? "_bn_relu" : "_bn", fused));
    for (Node* gone : {relu, bn_node}) {
      if (!gone) continue;
      gone->replace_all_uses_with(conv_node);
      g.erase_node(gone);
    }
    return true;
  };
  for (Node* bn : g.nodes()) {
    if (bn->erased() || bn->op() != OpKind::CallModule || bn->args().size() != 1 || !bn->kwargs().empty()) continue;
    Node* conv = first_input(*bn);
    if (!conv || conv->op() != OpKind::CallModule || conv->users().size() != 1) continue;
    fuse.template operator()<1>(conv, bn) || fuse.template operator()<2>(conv, bn) ||
        fuse.template operator()<3>(conv, bn);
  }
}

// An observer node reading `input`, placed right after it; the given users read it instead.
Node* insert_observer(GraphModule& gm, Node* input, const quantization::QConfig& qconfig, size_t& count,
                      const std::vector<Node*>& users) {
  auto observer = qconfig.activation();
  const std::string name = kObserverPrefix + std::to_string(count++);
  gm.add_module(name, observer);
  Graph& g = gm.graph();
  Node* obs;
  {
    auto at = g.inserting_after(input);
    obs = g.call_module(name, {input});
  }
  for (Node* u : users) u->replace_input_with(input, obs);
  return obs;
}

bool is_observer(const Node& n) { return n.op() == OpKind::CallModule && n.target().rfind(kObserverPrefix, 0) == 0; }

// The mark prepare_fx leaves on the layers it prepared for int8 (meta), which convert_fx converts:
// another layer may read an observed value without being quantized (its qconfig is none).
constexpr const char* kQuantizeMark = "quantize";

}  // namespace

namespace {

// prepare_fx and prepare_qat_fx (qat: batch norms kept in ConvBn modules, the weights of the
// prepared layers fake-quantized).
std::shared_ptr<GraphModule> prepare(std::shared_ptr<GraphModule> traced, const QConfigMapping& mapping, bool qat) {
  const char* op = qat ? "prepare_qat_fx" : "prepare_fx";
  EMBER_CHECK(traced, op, "expected a traced module, got null");
  GraphModule& gm = *traced;
  if (qat) {
    EMBER_CHECK(gm.is_training(), op, "quantization-aware training needs the model in training mode (call train() "
                "first; prepare_fx prepares a model in eval mode)");
  } else {
    EMBER_CHECK(!gm.is_training(), op, "post-training static quantization needs the model in eval mode (call eval() "
                "first; prepare_qat_fx prepares a model in training mode)");
  }
  // qconfigs go by the modules' names in the model: fusion renames the nodes' targets
  // ("conv1" -> "conv1_fused_relu") but keeps the nodes
  std::unordered_map<const Node*, std::string> module_name;
  for (const Node* n : gm.graph().nodes())
    if (n->op() == OpKind::CallModule) module_name.emplace(n, n->target());
  auto qconfig_of = [&](const Node* n) { return mapping.qconfig_for(module_name.at(n)); };
  if (qat) {
    fuse_conv_bn_qat(gm);
  } else {
    fuse_conv_bn(gm);
    remove_identities(gm);
  }
  fuse_conv_relu(gm);
  fuse_linear_relu(gm);
  Graph& g = gm.graph();
  // which node's value is observed, and by which observer node
  std::unordered_map<const Node*, Node*> observed;
  size_t count = 0;
  for (Node* n : g.nodes()) {
    if (n->erased() || is_observer(*n)) continue;
    if (passes_through(gm, *n)) {
      if (Node* in = first_input(*n); in && observed.count(in)) observed[n] = observed[in];
      continue;
    }
    if (n->op() != OpKind::CallModule || !quantizable(gm.submodule(n->target()))) continue;
    const std::optional<quantization::QConfig> qconfig = qconfig_of(n);
    Node* in = first_input(*n);
    if (!qconfig || !in || n->args().size() != 1) continue;
    EMBER_CHECK(qconfig->activation && (!qat || qconfig->weight), op, "the qconfig of ", module_name.at(n),
                " has no activation observer", qat ? " or no weight fake quantizer" : "");
    if (!observed.count(in)) {  // the input observed once, for every quantized layer reading it
      std::vector<Node*> readers;
      for (Node* u : in->users())
        if (u->op() == OpKind::CallModule && quantizable(gm.submodule(u->target())) &&
            qconfig_of(u))
          readers.push_back(u);
      Node* obs = insert_observer(gm, in, *qconfig, count, readers);
      observed[in] = observed[obs] = obs;
    }
    std::vector<Node*> users = n->users();
    Node* obs = insert_observer(gm, n, *qconfig, count, users);
    observed[n] = observed[obs] = obs;
    n->meta[kQuantizeMark] = jit::IValue(true);
    if (qat) {  // the layer's weight fake-quantized as it trains
      auto [owner, slot] = weight_layer(gm.submodule(n->target()).get());
      if (!*slot) {
        *slot = qconfig->weight();
        owner->register_module("weight_fake_quant", *slot);
      }
    }
  }
  EMBER_CHECK(count > 0, op, "the model has no layer with an int8 form (Conv1d/2d/3d, Linear) that the "
              "qconfig mapping quantizes");
  // the modules fusion replaced (their parameters live on in the fused ones)
  gm.delete_all_unused_submodules();
  gm.recompile();
  return traced;
}

}  // namespace

std::shared_ptr<GraphModule> prepare_fx(std::shared_ptr<GraphModule> traced, const QConfigMapping& mapping) {
  return prepare(std::move(traced), mapping, /*qat=*/false);
}
std::shared_ptr<GraphModule> prepare_qat_fx(std::shared_ptr<GraphModule> traced, const QConfigMapping& mapping) {
  return prepare(std::move(traced), mapping, /*qat=*/true);
}

namespace {

std::pair<double, int64_t> qparams_of(GraphModule& gm, const Node& obs) {
  auto m = std::dynamic_pointer_cast<quantization::ObserverOrFakeQuantize>(gm.submodule(obs.target()));
  EMBER_CHECK(m, "convert_fx", "the node ", obs.name(), " does not call an observer");
  const auto* base = dynamic_cast<const quantization::ObserverBase*>(m.get());
  if (const auto* fq = dynamic_cast<const quantization::FakeQuantizeImpl*>(m.get())) base = fq->activation_post_process.get();
  EMBER_CHECK(!base || (base->min_val.numel() > 0 && base->min_val.dim() == 0 &&
                        std::isfinite(base->min_val.item<float>())),
              "convert_fx", "the observer ", obs.target(),
              " has seen no data: run calibration data through the prepared model before convert_fx");
  EMBER_CHECK(m->dtype() == kQUInt8 &&
                  (m->qscheme() == kPerTensorAffine || m->qscheme() == kPerTensorSymmetric),
              "convert_fx", "activations must be observed as quint8 per tensor, ", obs.target(), " observes ",
              m->dtype(), " ", m->qscheme());
  const auto [scale, zero_point] = m->calculate_qparams();
  return {scale.item<double>(), zero_point.item<int64_t>()};
}

// The int8 module of a float layer with these output qparams; its name in gm.
std::string quantized_module(GraphModule& gm, const std::string& target, double scale, int64_t zp, bool& relu_after) {
  namespace nnq = nn::quantized;
  namespace nniq = nn::intrinsic::quantized;
  const auto m = gm.submodule(target);
  relu_after = false;
  auto add = [&](auto q) { return add_module_for(gm, target, "_quantized", std::move(q)); };
  std::string name;
  auto conv = [&]<size_t D>() {
    if (!name.empty()) return;
    if (auto c = std::dynamic_pointer_cast<nn::ConvNdImpl<D>>(m)) name = add(nnq::ConvImpl<D>::from_float(*c, scale, zp));
    if (auto c = std::dynamic_pointer_cast<nn::intrinsic::ConvReLUImpl<D>>(m))
      name = add(nniq::ConvReLUImpl<D>::from_float(*c, scale, zp));
    if (auto c = std::dynamic_pointer_cast<nn::intrinsic::ConvBnImpl<D>>(m)) name = add(c->quantized(scale, zp));
  };
  conv.template operator()<1>();
  conv.template operator()<2>();
  conv.template operator()<3>();
  if (!name.empty()) return name;
  if (auto l = std::dynamic_pointer_cast<nn::LinearImpl>(m)) return add(nnq::LinearImpl::from_float(*l, scale, zp));
  auto lr = std::dynamic_pointer_cast<nn::intrinsic::LinearReLUImpl>(m);
  EMBER_CHECK(lr, "convert_fx", "the module ", target, " has no int8 form");
  relu_after = true;  // quantized relu: the integers clamped at the zero point
  return add(nnq::LinearImpl::from_float(*lr->linear, scale, zp));
}

}  // namespace

std::shared_ptr<GraphModule> convert_fx(std::shared_ptr<GraphModule> prepared) {
  EMBER_CHECK(prepared, "convert_fx", "expected a prepared module, got null");
  GraphModule& gm = *prepared;
  Graph& g = gm.graph();
  std::vector<Node*> observers;
  for (Node* n : g.nodes())
    if (is_observer(*n)) observers.push_back(n);
  EMBER_CHECK(!observers.empty(), "convert_fx", "the module was not prepared: call prepare_fx and run calibration "
              "data through it first");
  std::unordered_map<const Node*, std::pair<double, int64_t>> qparams;  // every observer's, checked first
  for (Node* obs : observers) qparams[obs] = qparams_of(gm, *obs);
  remove_identities(gm);  // after quantization-aware training: dropout, now in eval mode

  std::unordered_set<const Node*> quantized;  // nodes whose value is a quantized tensor
  for (Node* n : g.nodes()) {
    if (n->erased()) continue;
    Node* in = first_input(*n);
    if (is_observer(*n)) {
      if (quantized.count(in)) {  // a quantized layer's output observer: the layer quantizes itself
        n->replace_all_uses_with(in);
      } else {  // an observed float value: quantized here
        // the qparams as buffers (as PyTorch's _input_scale_0), so that they load with the weights
        const auto [scale, zp] = qparams.at(n);
        const std::string s = gm.add_constant("_input_scale", scalar_tensor(scale, TensorOptions().dtype(kDouble)));
        const std::string z = gm.add_constant("_input_zero_point", scalar_tensor(zp, TensorOptions().dtype(kLong)));
        Node* q;
        {
          auto at = g.inserting_before(n);
          q = g.call_function("quantize_per_tensor", {in, g.get_attr(s), g.get_attr(z), jit::IValue(kQUInt8Code)});
        }
        n->replace_all_uses_with(q);
        quantized.insert(q);
      }
      g.erase_node(n);
      continue;
    }
    if (n->op() == OpKind::CallModule && in && quantized.count(in) && n->meta.count(kQuantizeMark)) {
      // its output observer (prepare put one after each quantized layer) gives its qparams
      Node* out_obs = nullptr;
      for (Node* u : n->users())
        if (is_observer(*u)) out_obs = u;
      if (out_obs) {
        const auto [scale, zp] = qparams.at(out_obs);
        bool relu_after = false;
        n->set_target(quantized_module(gm, n->target(), scale, zp, relu_after));
        quantized.insert(n);
        if (relu_after) {
          Node* relu;
          {
            auto at = g.inserting_after(n);
            relu = g.call_function("relu", {n});
          }
          n->replace_all_uses_with(relu);
          relu->set_arg(0, n);
          quantized.erase(n);
          quantized.insert(relu);
          // the output observer now reads the relu
        }
        continue;
      }
    }
    if (in && quantized.count(in) && passes_through(gm, *n)) {
      quantized.insert(n);
      continue;
    }
    // anything else takes float: its quantized inputs dequantized first
    for (Node* input : n->all_input_nodes()) {
      if (!quantized.count(input)) continue;
      Node* dq;
      {
        auto at = g.inserting_before(n);
        dq = g.call_function("dequantize", {input});
      }
      n->replace_input_with(input, dq);
    }
  }
  g.eliminate_dead_code();
  gm.delete_all_unused_submodules();
  gm.recompile();
  return prepared;
}

}  // namespace ember::fx
