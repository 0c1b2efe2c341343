#include "ember/nn/utils/parametrize.h"

#include <algorithm>
#include <sstream>

#include "ember/autograd.h"
#include "ember/factory.h"

namespace ember::nn {

std::atomic<int64_t> detail::live_parametrizations{0};

// The module internals register/remove touch (Module and ParametrizationDict befriend it).
struct ParametrizationAccess {
  static OrderedDict<std::string, Tensor>& parameters(Module& m) { return m.parameters_; }
  static OrderedDict<std::string, Tensor>& buffers(Module& m) { return m.buffers_; }
  static std::shared_ptr<Module>& dict(Module& m) { return m.parametrizations.dict_; }
  static const std::shared_ptr<Module>& dict(const ParametrizationDict& d) { return d.dict_; }
  static auto& hooks(Module& m) { return m.parametrizations.hooks_; }
  static const auto& hooks(const ParametrizationDict& d) { return d.hooks_; }
};

namespace {
using utils::parametrize::ParametrizationListImpl;

std::vector<std::shared_ptr<ParametrizationListImpl>> lists_of(const ParametrizationDict& d) {
  std::vector<std::shared_ptr<ParametrizationListImpl>> out;
  if (const auto& dict = ParametrizationAccess::dict(d))
    for (const auto& child : dict->children()) out.push_back(std::static_pointer_cast<ParametrizationListImpl>(child));
  for (const auto& hook : ParametrizationAccess::hooks(d)) out.push_back(hook.second);
  return out;
}
}  // namespace

std::shared_ptr<ParametrizationListImpl> ParametrizationDict::operator[](const std::string& tensor_name) const {
  EMBER_CHECK(contains(tensor_name), "parametrizations", "no parametrization on '", tensor_name, "'");
  return std::static_pointer_cast<ParametrizationListImpl>(dict_->named_children()[tensor_name]);
}

bool ParametrizationDict::contains(const std::string& tensor_name) const {
  return dict_ && dict_->named_children().contains(tensor_name);
}

std::vector<std::string> ParametrizationDict::keys() const {
  return dict_ ? dict_->named_children().keys() : std::vector<std::string>{};
}

void detail::refresh_parametrizations_slow(const Module& module) {
  const Module::ConstModuleApplyFunction refresh = [](const Module& m) {
    // A classic hook is outside the module tree, so train()/eval() reach it here.
    for (const auto& hook : ParametrizationAccess::hooks(m.parametrizations))
      if (hook.second->is_training() != m.is_training()) hook.second->train(m.is_training());
    for (const auto& list : lists_of(m.parametrizations)) list->refresh();
  };
  module.apply(refresh);
}

}  // namespace ember::nn

namespace ember::nn::utils::parametrize {
namespace {

std::atomic<uint64_t> next_cached_epoch{0};
thread_local int cached_depth = 0;
thread_local uint64_t cached_epoch = 0;

std::string shape_of(const Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

}  // namespace

// What the value was computed from: the storage and version of every tensor it depends on, and
// the parametrizations' training flags.
struct ParametrizationListImpl::Snapshot {
  std::vector<std::pair<IntrusivePtr<StorageImpl>, uint32_t>> tensors;
  std::vector<bool> training;
  // Set by a hook when a backward goes through the value's graph (which it frees).
  std::shared_ptr<std::atomic<bool>> consumed = std::make_shared<std::atomic<bool>>(false);
};

cached::cached() {
  if (cached_depth++ == 0) cached_epoch = ++next_cached_epoch;
}
cached::~cached() { --cached_depth; }

ParametrizationListImpl::ParametrizationListImpl(std::string owner, std::string tensor_name, Tensor value,
                                                 bool is_buffer, Parametrization first, bool unsafe_)
    : Module("ParametrizationList"),
      unsafe(unsafe_),
      owner_(std::move(owner)),
      tensor_name_(std::move(tensor_name)),
      value_(std::move(value)),
      is_buffer_(is_buffer),
      requires_grad_(value_.requires_grad()) {
  std::vector<Tensor> news{value_.detach()};
  if (first.right_inverse) {
    NoGradGuard no_grad;
    try {
      news = first.right_inverse(value_.detach());
    } catch (const NotImplementedError&) {
      // the identity, as PyTorch
    }
  }
  EMBER_CHECK(!news.empty(), "register_parametrization", where(), ": right_inverse returned no tensor");
  auto add = [&](const std::string& name, const Tensor& t) -> Tensor {
    EMBER_CHECK(t.defined(), "register_parametrization", where(), ": right_inverse returned an undefined tensor");
    return is_buffer_ ? register_buffer(name, t.detach())
                      : register_parameter(name, t.detach(), requires_grad_ && t.is_floating_point());
  };
  if (news.size() == 1) {
    EMBER_CHECK(news[0].defined() && news[0].dtype() == value_.dtype(), "register_parametrization", where(),
                ": when right_inverse returns one tensor it may not change the dtype: the tensor is ",
                value_.dtype(), " ", shape_of(value_), ", right_inverse gave ",
                news[0].defined() ? news[0].dtype() : value_.dtype(), " ",
                news[0].defined() ? shape_of(news[0]) : "undefined");
    original = add("original", news[0]);
  } else {
    for (size_t i = 0; i < news.size(); ++i) originals.push_back(add("original" + std::to_string(i), news[i]));
  }
  register_module("0", first.module);
  chain_.push_back(std::move(first));
  const Tensor y = forward();
  if (!unsafe) {
    EMBER_CHECK(y.dtype() == value_.dtype() && y.sizes() == value_.sizes(), "register_parametrization", where(),
                ": registering a parametrization may not change the shape or dtype of the tensor, unless `unsafe` "
                "is set: unparametrized ", value_.dtype(), " ", shape_of(value_), ", parametrized ", y.dtype(), " ",
                shape_of(y));
  }
  // The tensor leaves its storage to `original` (when right_inverse is the identity) and gets its own.
  set_data(value_, empty(y.sizes(), y.options()));
  install(y);
  ++nn::detail::live_parametrizations;
}

ParametrizationListImpl::~ParametrizationListImpl() { --nn::detail::live_parametrizations; }

std::string ParametrizationListImpl::where() const { return owner_ + "." + tensor_name_; }

const Parametrization& ParametrizationListImpl::operator[](size_t i) const {
  EMBER_CHECK(i < chain_.size(), "ParametrizationList", where(), ": index ", i, " out of range for ",
              chain_.size(), " parametrizations");
  return chain_[i];
}

Tensor ParametrizationListImpl::forward() {
  Tensor x = chain_[0].forward(original.defined() ? std::vector<Tensor>{original} : originals);
  for (size_t i = 1; i < chain_.size(); ++i) x = chain_[i].forward({x});
  return x;
}

void ParametrizationListImpl::append(Parametrization p, bool unsafe_) {
  register_module(std::to_string(chain_.size()), p.module);
  chain_.push_back(std::move(p));
  unsafe = unsafe || unsafe_;
  refresh(/*force=*/true);
}

void ParametrizationListImpl::right_inverse(const Tensor& value) {
  EMBER_CHECK(value.defined(), "right_inverse", where(), ": the value is undefined");
  std::vector<Tensor> vs{value};
  {
    NoGradGuard no_grad;
    for (size_t i = chain_.size(); i-- > 0;) {
      EMBER_CHECK(vs.size() == 1, "right_inverse", where(), ": parametrization ", i + 1, " (",
                  chain_[i + 1].module->name(), ") gave ", vs.size(), " tensors to the one before it");
      EMBER_CHECK(chain_[i].right_inverse, "right_inverse", where(), ": parametrization ", chain_[i].module->name(),
                  " does not implement right_inverse");
      vs = chain_[i].right_inverse(vs[0]);
    }
    const std::vector<Tensor> targets = original.defined() ? std::vector<Tensor>{original} : originals;
    EMBER_CHECK(vs.size() == targets.size(), "right_inverse", where(), ": right_inverse returned ", vs.size(),
                " tensors for ", targets.size(), " originals");
    for (size_t i = 0; i < vs.size(); ++i) {
      EMBER_CHECK(vs[i].defined() && vs[i].dtype() == targets[i].dtype() && vs[i].sizes() == targets[i].sizes(),
                  "right_inverse", where(), ": right_inverse returned ",
                  vs[i].defined() ? vs[i].dtype() : targets[i].dtype(), " ",
                  vs[i].defined() ? shape_of(vs[i]) : "undefined", " for an original of ", targets[i].dtype(), " ",
                  shape_of(targets[i]));
    }
    for (size_t i = 0; i < vs.size(); ++i) targets[i].detach().copy_(vs[i]);
  }
  refresh();
}

bool ParametrizationListImpl::stale() const {
  if (!snapshot_ || snapshot_->consumed->load()) return true;
  const std::vector<Tensor> now = parameters();
  const std::vector<Tensor> bufs = buffers();
  if (now.size() + bufs.size() != snapshot_->tensors.size()) return true;
  bool needs_graph = false;
  size_t k = 0;
  for (const auto* list : {&now, &bufs}) {
    for (const Tensor& t : *list) {
      const auto& [storage, version] = snapshot_->tensors[k++];
      if (t.unsafeGetTensorImpl()->storage() != storage || storage->version() != version) return true;
      needs_graph = needs_graph || t.requires_grad();
    }
  }
  for (size_t i = 0; i < chain_.size(); ++i)
    if (chain_[i].module->is_training() != snapshot_->training[i]) return true;
  return needs_graph && GradMode::is_enabled() && !value_.requires_grad();
}

void ParametrizationListImpl::refresh(bool force) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (refreshing_) return;
  if (!force && cached_depth > 0) {
    if (cached_epoch_ == cached_epoch) return;
    cached_epoch_ = cached_epoch;
  }
  if (!force && !stale()) return;
  refreshing_ = true;
  try {
    install(forward());
  } catch (...) {
    refreshing_ = false;
    throw;
  }
  refreshing_ = false;
}

void ParametrizationListImpl::install(const Tensor& computed) {
  // A leaf (a parametrization returning its input) gets a node, so that value_ can carry a history.
  const Tensor y = computed.requires_grad() && !computed.grad_fn() ? computed.view_as(computed) : computed;
  value_.detach_();
  if (value_.sizes() != y.sizes() || value_.dtype() != y.dtype()) set_data(value_, empty(y.sizes(), y.options()));
  {
    NoGradGuard no_grad;
    value_.copy_(y);  // in place: a graph that saved the old value sees its version change
  }
  auto snapshot = std::make_unique<Snapshot>();
  for (const auto& list : {parameters(), buffers()})
    for (const Tensor& t : list) snapshot->tensors.emplace_back(t.unsafeGetTensorImpl()->storage(), t.unsafeGetTensorImpl()->storage()->version());
  for (const auto& p : chain_) snapshot->training.push_back(p.module->is_training());
  if (y.requires_grad()) {
    autograd::detail::set_history(value_, y.grad_fn(), y.output_nr());
    y.register_hook([consumed = snapshot->consumed](const Tensor&) {
      consumed->store(true);
      return Tensor();
    });
  }
  snapshot_ = std::move(snapshot);
}

void detail::register_parametrization(Module& module, const std::string& tensor_name,
                                      Parametrization parametrization, bool unsafe) {
  const std::string where = module.name() + "." + tensor_name;
  parametrization.module->train(module.is_training());
  if (is_parametrized(module, tensor_name)) {
    const auto list = module.parametrizations[tensor_name];
    if (!unsafe) {
      list->refresh();
      const Tensor y = list->value();
      NoGradGuard no_grad;
      const Tensor x = parametrization.forward({y});
      EMBER_CHECK(x.dtype() == y.dtype() && x.sizes() == y.sizes(), "register_parametrization", where,
                  ": registering a parametrization may not change the shape or dtype of the tensor, unless `unsafe` "
                  "is set: ", y.dtype(), " ", shape_of(y), " became ", x.dtype(), " ", shape_of(x));
      std::vector<Tensor> z{x};
      if (parametrization.right_inverse) {
        try {
          z = parametrization.right_inverse(x);
        } catch (const NotImplementedError&) {
          // the identity, as PyTorch
        }
        EMBER_CHECK(z.size() == 1 && z[0].dtype() == y.dtype() && z[0].sizes() == y.sizes(),
                    "register_parametrization", where, ": right_inverse must return one tensor of the tensor's ",
                    "shape and dtype ", y.dtype(), " ", shape_of(y), ", got ", z.size(), " tensor(s)",
                    z.size() == 1 ? " of " + shape_of(z[0]) : std::string());
      }
    }
    list->append(std::move(parametrization), unsafe);
    return;
  }
  auto& params = ParametrizationAccess::parameters(module);
  auto& bufs = ParametrizationAccess::buffers(module);
  const bool is_param = params.contains(tensor_name) && params[tensor_name].defined();
  const bool is_buffer = !is_param && bufs.contains(tensor_name) && bufs[tensor_name].defined();
  EMBER_CHECK(is_param || is_buffer, "register_parametrization", "Module '", module.name(),
              "' does not have a parameter, a buffer, or a parametrized element with name '", tensor_name, "'");
  const Tensor value = is_param ? params[tensor_name] : bufs[tensor_name];
  auto list = std::make_shared<ParametrizationListImpl>(module.name(), tensor_name, value, is_buffer,
                                                        std::move(parametrization), unsafe);
  std::shared_ptr<Module>& dict = ParametrizationAccess::dict(module);
  if (!dict) {
    auto fresh = std::make_shared<Module>("ModuleDict");
    module.register_module("parametrizations", fresh);
    dict = std::move(fresh);
  }
  dict->register_module(tensor_name, list);
  (is_param ? params : bufs).erase(tensor_name);
}

void detail::register_hook(Module& module, const std::string& tensor_name, Parametrization parametrization,
                           const std::vector<std::string>& original_names,
                           const std::vector<std::pair<std::string, Tensor>>& buffers, const char* op) {
  auto& hooks = ParametrizationAccess::hooks(module);
  for (const auto& hook : hooks)
    EMBER_CHECK(hook.first != tensor_name, op, "Cannot register two ", op, " hooks on the same parameter ",
                tensor_name);
  auto& params = ParametrizationAccess::parameters(module);
  EMBER_CHECK(params.contains(tensor_name) && params[tensor_name].defined(), op, "Module '", module.name(),
              "' has no parameter '", tensor_name, "'");
  parametrization.module->train(module.is_training());
  auto list = std::make_shared<ParametrizationListImpl>(module.name(), tensor_name, params[tensor_name],
                                                        /*is_buffer=*/false, std::move(parametrization),
                                                        /*unsafe=*/true);
  const std::vector<Tensor> originals = list->original.defined() ? std::vector<Tensor>{list->original} : list->originals;
  params.erase(tensor_name);
  for (size_t i = 0; i < originals.size(); ++i)
    module.register_parameter(original_names.at(i), originals[i], originals[i].requires_grad());
  for (const auto& [name, tensor] : buffers) module.register_buffer(name, tensor);
  hooks.emplace_back(tensor_name, std::move(list));
}

void detail::remove_hook(Module& module, const std::string& tensor_name, const std::vector<std::string>& names,
                         const char* op) {
  auto& hooks = ParametrizationAccess::hooks(module);
  auto it = std::find_if(hooks.begin(), hooks.end(), [&](const auto& h) { return h.first == tensor_name; });
  EMBER_CHECK(it != hooks.end(), op, op, " of '", tensor_name, "' not found in ", module.name());
  const auto list = it->second;
  list->train(false);  // the value without a power iteration, as PyTorch's removal computes it
  list->refresh();
  Tensor value = list->value();
  value.detach_();
  auto& params = ParametrizationAccess::parameters(module);
  auto& bufs = ParametrizationAccess::buffers(module);
  for (const std::string& name : names) (params.contains(name) ? params : bufs).erase(name);
  const Tensor first = list->original.defined() ? list->original : list->originals[0];
  module.register_parameter(tensor_name, value, first.requires_grad());
  hooks.erase(it);
}

bool is_parametrized(const Module& module, const std::optional<std::string>& tensor_name) {
  if (module.parametrizations.is_empty()) return false;
  return !tensor_name || module.parametrizations.contains(*tensor_name);
}

void remove_parametrizations(Module& module, const std::string& tensor_name, bool leave_parametrized) {
  EMBER_CHECK(is_parametrized(module, tensor_name), "remove_parametrizations", "Module '", module.name(),
              "' does not have a parametrization on '", tensor_name, "'");
  const auto list = module.parametrizations[tensor_name];
  const Tensor& value = list->value();
  EMBER_CHECK(leave_parametrized || list->original.defined(), "remove_parametrizations", module.name(), ".",
              tensor_name, ": cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
              "parametrized in terms of a sequence of tensors");
  if (leave_parametrized) {
    list->refresh();
  } else {
    set_data(value, list->original.detach());
  }
  Tensor tensor = value;
  tensor.detach_();
  std::shared_ptr<Module>& dict = ParametrizationAccess::dict(module);
  dict->unregister_module(tensor_name);
  if (dict->children().empty()) {
    module.unregister_module("parametrizations");
    dict.reset();
  }
  if (list->original_is_buffer()) {
    module.register_buffer(tensor_name, tensor);
  } else {
    const Tensor first = list->original.defined() ? list->original : list->originals[0];
    module.register_parameter(tensor_name, tensor, first.requires_grad() && tensor.is_floating_point());
  }
}

}  // namespace ember::nn::utils::parametrize
