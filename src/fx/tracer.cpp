// fx::Tracer: records the ops the dispatch point sees (its tracing layer) and the leaf module
// calls the module holders see, while traced code runs on its example inputs.
#include <algorithm>

#include "core/value_read.h"
#include "dispatch/dispatch.h"
#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/fx.h"
#include "fx/fx_internal.h"
#include "jit/builtins.h"

namespace ember::fx {

struct Tracer::State final : dispatch::TraceRecorder, nn::detail::ModuleCallHook {
  State(Tracer& t, nn::Module& r) : tracer(t), root(r), graph(std::make_unique<Graph>()) {}

  Tracer& tracer;
  nn::Module& root;
  std::unique_ptr<Graph> graph;
  std::unordered_map<const TensorImpl*, Node*> traced;  // proxies: tensors computed from the inputs
  std::vector<Tensor> alive;  // keeps traced tensors (and so their addresses) alive while tracing
  std::unordered_map<const TensorImpl*, std::string> attr_names;  // the root's parameters and buffers
  std::unordered_map<std::string, Node*> attr_nodes;
  std::unordered_map<const nn::Module*, std::string> module_names;
  std::unordered_map<std::string, nn::detail::ForwardInvoker> invokers;
  std::vector<std::pair<std::string, Tensor>> constants;
  Node* pending = nullptr;

  Node* traced_node(const Tensor& t) const {
    if (!t.defined()) return nullptr;
    auto it = traced.find(t.unsafeGetTensorImpl());
    return it == traced.end() ? nullptr : it->second;
  }
  void map(const Tensor& t, Node* n) {
    traced[t.unsafeGetTensorImpl()] = n;
    alive.push_back(t);
  }

  // A tensor argument: its node if traced, else a get_attr of the root's tensor or of a constant.
  Argument arg_of(const Tensor& t) {
    if (!t.defined()) return Argument();
    if (Node* n = traced_node(t)) return n;
    std::string name;
    if (auto it = attr_names.find(t.unsafeGetTensorImpl()); it != attr_names.end()) {
      name = it->second;
    } else {
      name = "_tensor_constant" + std::to_string(constants.size());
      constants.emplace_back(name, t);
      attr_names[t.unsafeGetTensorImpl()] = name;
      alive.push_back(t);
    }
    Node*& node = attr_nodes[name];
    if (!node) node = graph->get_attr(name);
    return node;
  }

  bool any_traced(const dispatch::TracedArg* args, size_t n, std::string* first) const {
    using K = dispatch::TracedArg::Kind;
    auto check = [&](const Tensor& t) {
      Node* node = traced_node(t);
      if (node && first && first->empty()) *first = node->name();
      return node != nullptr;
    };
    bool any = false;
    for (size_t i = 0; i < n; ++i) {
      const auto& a = args[i];
      if (a.kind == K::Tensor) any |= check(*a.tensor);
      if (a.kind == K::TensorList)
        for (size_t k = 0; k < a.count; ++k) any |= check(a.tensors[k]);
      if (a.kind == K::OptTensorList)
        for (size_t k = 0; k < a.count; ++k) any |= a.optional_tensors[k] && check(*a.optional_tensors[k]);
    }
    return any;
  }

  // Ember ops whose one C++ signature covers several libtorch overloads, rewritten to the
  // overload (and name) libtorch's schema has:
  // - prod, all, any without a dim (Ember passes dim=None, keepdim=false): prod(self, *, dtype),
  //   all(self), any(self);
  // - instance_norm: cudnn_enabled added; avg_pool1d: Ember's divisor_override (None) dropped;
  // - interpolate: upsample_nearest1d/2d or upsample_bilinear2d by mode and rank, with the
  //   size or scale list given for every spatial dim, as F.interpolate calls them.
  static void to_libtorch_call(std::string& op, std::vector<jit::IValue>& values, std::vector<Argument>& args) {
    if ((op == "prod" || op == "all" || op == "any") && values.size() >= 3 && values[1].isNone() &&
        values[2].isBool() && !values[2].toBool()) {
      values.erase(values.begin() + 1, values.begin() + 3);
      args.erase(args.begin() + 1, args.begin() + 3);
      return;
    }
    // instance_norm without cudnn_enabled (F.instance_norm passes torch.backends.cudnn.enabled, true);
    // avg_pool1d without divisor_override (libtorch's has none).
    if (op == "instance_norm" && values.size() == 8) {
      values.emplace_back(true);
      args.emplace_back(jit::IValue(true));
      return;
    }
    if (op == "avg_pool1d" && values.size() == 7 && values[6].isNone()) {
      values.pop_back();
      args.pop_back();
      return;
    }
    if (op != "interpolate" || values.size() != 5 || !values[0].isTensor() || !values[3].isString()) return;
    const int64_t rank = values[0].toTensor().dim();
    const std::string& mode = values[3].toStringRef();
    const bool bilinear = mode == "bilinear" && rank == 4;
    if (!(bilinear || (mode == "nearest" && (rank == 3 || rank == 4)))) return;  // interpolate's own error
    const size_t spatial = static_cast<size_t>(rank - 2);
    jit::IValue size = values[1], scales = values[2];
    if (size.isIntList() && size.toIntVector().size() == 1)
      size = jit::IValue(std::vector<int64_t>(spatial, size.toIntVector()[0]));
    if (scales.isList() && scales.toListRef().size() == 1)
      scales = jit::IValue(std::vector<jit::IValue>(spatial, scales.toListRef()[0]));
    op = bilinear ? "upsample_bilinear2d" : rank == 3 ? "upsample_nearest1d" : "upsample_nearest2d";
    Argument input = args[0];
    if (bilinear) {
      const jit::IValue align(values[4].isNone() ? false : values[4].toBool());
      values = {values[0], size, align, scales};
      args = {input, Argument(size), Argument(align), Argument(scales)};
    } else {
      values = {values[0], size, scales};
      args = {input, Argument(size), Argument(scales)};
    }
  }

  bool begin(const char* op, const dispatch::TracedArg* args, size_t n, bool returns_tensors) override {
    using K = dispatch::TracedArg::Kind;
    pending = nullptr;
    std::string first;
    if (!any_traced(args, n, &first)) return false;
    EMBER_CHECK(returns_tensors, "fx", "op '", op, "' turns traced tensor '", first,
                "' into a value: data-dependent control flow cannot be traced (the graph would keep this example's "
                "result); mark the input concrete (Tracer::concrete_args) or keep the op out of the traced code");
    std::vector<jit::IValue> values;  // the call's values, to pick the schema
    std::vector<Argument> graph_args;
    for (size_t i = 0; i < n; ++i) {
      const auto& a = args[i];
      switch (a.kind) {
        case K::None: values.emplace_back(); graph_args.emplace_back(); break;
        case K::Tensor: values.emplace_back(*a.tensor); graph_args.push_back(arg_of(*a.tensor)); break;
        case K::TensorList: {
          std::vector<Argument> items;
          std::vector<Tensor> ts;
          for (size_t k = 0; k < a.count; ++k) {
            items.push_back(arg_of(a.tensors[k]));
            ts.push_back(a.tensors[k]);
          }
          values.emplace_back(ts);
          graph_args.push_back(Argument::list(std::move(items)));
          break;
        }
        case K::OptTensorList: {
          std::vector<Argument> items;
          std::vector<jit::IValue> vs;
          for (size_t k = 0; k < a.count; ++k) {
            const auto& t = a.optional_tensors[k];
            items.push_back(t ? arg_of(*t) : Argument());
            vs.push_back(t ? jit::IValue(*t) : jit::IValue());
          }
          values.emplace_back(std::move(vs));
          graph_args.push_back(Argument::list(std::move(items)));
          break;
        }
        case K::Scalar: values.push_back(scalar_value(*a.scalar, op)); graph_args.emplace_back(values.back()); break;
        case K::Int:
        case K::Layout:
        case K::MemoryFormat: values.emplace_back(a.i); graph_args.emplace_back(values.back()); break;
        case K::Bool: values.emplace_back(a.i != 0); graph_args.emplace_back(values.back()); break;
        case K::Double: values.emplace_back(a.d); graph_args.emplace_back(values.back()); break;
        case K::Dtype:
          values.emplace_back(jit::scalar_type_code(static_cast<ScalarType>(a.i)));
          graph_args.emplace_back(values.back());
          break;
        case K::IntList:
          values.emplace_back(std::vector<int64_t>(a.ints, a.ints + a.count));
          graph_args.emplace_back(values.back());
          break;
        case K::DoubleList: {
          std::vector<jit::IValue> ds(a.doubles, a.doubles + a.count);
          values.emplace_back(std::move(ds));
          graph_args.emplace_back(values.back());
          break;
        }
        case K::String: values.emplace_back(std::string(a.str)); graph_args.emplace_back(values.back()); break;
        case K::Unsupported:
          ::ember::detail::fail("fx", "op '", op, "' takes an argument (number ", i, ") of a type a graph cannot hold; "
                       "it cannot be traced");
      }
    }
    // Ember's `to` (also clone and contiguous) takes (self, dtype, copy, memory_format):
    // libtorch's schema has non_blocking before copy.
    if (std::string_view(op) == "to" && values.size() == 4) {
      values.insert(values.begin() + 2, jit::IValue(false));
      graph_args.insert(graph_args.begin() + 2, Argument(jit::IValue(false)));
    }
    std::string target = op;
    to_libtorch_call(target, values, graph_args);
    const size_t count = values.size();
    const Builtin& b = find_op(target, values.data(), count, "");
    std::vector<Argument> positional(graph_args.begin(), graph_args.begin() + std::min(count, b.positional));
    Kwargs kwargs;
    for (size_t i = b.positional; i < count; ++i) kwargs.emplace_back(b.args[i].name, graph_args[i]);
    pending = graph->call_function(target, std::move(positional), std::move(kwargs));
    return true;
  }

  void end(const Tensor* const* results, size_t n, bool multiple) override {
    Node* node = pending;
    pending = nullptr;
    if (!node) return;
    if (!multiple) {
      if (n == 1) map(*results[0], node);
      return;
    }
    for (size_t i = 0; i < n; ++i)
      map(*results[i], graph->call_function("getitem", {node, jit::IValue(static_cast<int64_t>(i))}));
  }

  Tensor call(nn::Module& module, nn::detail::ForwardInvoker invoke, const Tensor* inputs, size_t n) override {
    if (!(dispatch::thread_state().active & dispatch::kTracingLayer)) return invoke(module, inputs);
    auto it = module_names.find(&module);
    bool any = false;
    for (size_t i = 0; i < n; ++i) any |= traced_node(inputs[i]) != nullptr;
    if (it == module_names.end() || !any || !tracer.is_leaf_module(module, it->second)) return invoke(module, inputs);
    std::vector<Argument> args;
    for (size_t i = 0; i < n; ++i) args.push_back(arg_of(inputs[i]));
    Node* node = graph->call_module(it->second, std::move(args));
    invokers[it->second] = invoke;
    Tensor out;
    {
      dispatch::SuspendTracing off;
      out = invoke(module, inputs);
    }
    map(out, node);
    return out;
  }

  Argument output_of(const jit::IValue& v) {
    if (v.isTensor()) return arg_of(v.toTensor());
    if (v.isTuple() || v.isList()) {
      std::vector<Argument> items;
      for (const jit::IValue& e : v.isTuple() ? v.toTuple()->elements() : v.toListRef()) items.push_back(output_of(e));
      return Argument::list(std::move(items), v.isTuple());
    }
    EMBER_CHECK(v.isNone() || v.isScalar() || v.isString(), "fx", "the traced code returns a ", v.tag_name(),
                ", which a graph cannot return");
    return Argument(v);
  }
};

namespace {
thread_local Tracer::State* tls_state = nullptr;  // NOLINT: the tracer of this thread, for the read hook

void refuse_value_read(const Tensor& t, const char* what) {
  if (!tls_state || !(dispatch::thread_state().active & dispatch::kTracingLayer)) return;
  if (Node* n = tls_state->traced_node(t))
    ::ember::detail::fail("fx", what, "() reads the value of traced tensor '", n->name(),
                 "': data-dependent control flow cannot be traced (the graph would keep this example's value); mark "
                 "the input concrete (Tracer::concrete_args) or keep the read out of the traced code");
}

// Installs the state as this thread's recorder, module hook and read hook for a scope.
struct Installed {
  explicit Installed(Tracer::State& s) {
    EMBER_CHECK(!tls_state, "fx", "a trace is already running on this thread");
    tls_state = &s;
    nn::detail::module_call_hook() = &s;
    ::ember::detail::value_read_hook() = &refuse_value_read;
    dispatch::set_trace_recorder(&s);
  }
  ~Installed() {
    dispatch::set_trace_recorder(nullptr);
    ::ember::detail::value_read_hook() = nullptr;
    nn::detail::module_call_hook() = nullptr;
    tls_state = nullptr;
  }
  Installed(const Installed&) = delete;
  Installed& operator=(const Installed&) = delete;
};
}  // namespace

bool Tracer::is_leaf_module(const nn::Module& module, const std::string&) {
  const std::string& name = module.name();
  if (name.rfind("ember::nn::", 0) != 0) return false;
  return name != "ember::nn::SequentialImpl" && name != "ember::nn::ModuleListImpl" &&
         name != "ember::nn::ModuleDictImpl";
}

std::shared_ptr<GraphModule> Tracer::trace(nn::Module& root, const std::vector<Tensor>& inputs,
                                           const std::function<jit::IValue(const std::vector<Tensor>&)>& fn) {
  State st(*this, root);
  for (const auto& item : root.named_modules("", /*include_self=*/false)) st.module_names[item.value().get()] = item.key();
  for (const auto& item : root.named_parameters()) st.attr_names[item.value().unsafeGetTensorImpl()] = item.key();
  for (const auto& item : root.named_buffers()) st.attr_names[item.value().unsafeGetTensorImpl()] = item.key();
  for (size_t i : concrete_args)
    EMBER_CHECK(i < inputs.size(), "fx", "concrete_args names input ", i, " of ", inputs.size());
  std::vector<Tensor> proxies;
  {
    NoGradGuard no_grad;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const bool concrete = std::find(concrete_args.begin(), concrete_args.end(), i) != concrete_args.end();
      if (concrete) {
        proxies.push_back(inputs[i]);
        continue;
      }
      EMBER_CHECK(inputs[i].defined(), "fx", "example input ", i, " is an undefined tensor");
      // A copy, so that in-place ops of the traced code leave the caller's tensor alone.
      proxies.push_back(inputs[i].clone());
      st.map(proxies.back(), st.graph->placeholder(i == 0 ? "x" : "x_" + std::to_string(i)));
    }
    // Tracing runs the code on the example: what that does to the module's buffers (a batch
    // norm's running statistics in training mode) is undone afterwards, as PyTorch's symbolic
    // tracing, which runs nothing, leaves them.
    std::vector<std::pair<Tensor, Tensor>> buffers;
    for (const auto& item : root.named_buffers())
      if (item.value().defined()) buffers.emplace_back(item.value(), item.value().clone());
    jit::IValue out;
    {
      Installed on(st);
      out = fn(proxies);
    }
    for (auto& [buffer, before] : buffers) buffer.copy_(before);
    st.graph->output(st.output_of(out));
  }
  st.alive.clear();
  return std::make_shared<GraphModule>(root, std::move(st.graph), std::move(st.invokers), std::move(st.constants));
}

}  // namespace ember::fx
