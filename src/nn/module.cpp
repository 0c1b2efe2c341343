#include "ember/nn/module.h"

#include <cxxabi.h>

#include <cstdlib>
#include <typeinfo>

#include "ember/autograd.h"
#include "ember/nn/pimpl.h"
#include "ember/serialize/archive.h"

namespace ember::nn {
namespace {

std::string join_name(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

void check_name(const char* what, const std::string& name) {
  EMBER_CHECK(!name.empty(), "Module", what, " name must not be empty");
  EMBER_CHECK(name.find('.') == std::string::npos, "Module", what, " name must not contain a dot (got \"", name,
              "\")");
}

}  // namespace

std::string detail::demangle(const char* mangled) {
  int status = 0;
  char* out = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string s = status == 0 && out ? out : mangled;
  std::free(out);
  return s;
}

Module::Module(std::string name) : name_(std::move(name)) {}
Module::Module() = default;

namespace detail {
ModuleCallHook*& module_call_hook() {
  thread_local ModuleCallHook* hook = nullptr;
  return hook;
}
}  // namespace detail

const std::string& Module::name() const noexcept {
  // typeid(*this) is the most derived type only once construction is over, hence lazily.
  if (!name_) name_ = detail::demangle(typeid(*this).name());
  return *name_;
}

void Module::apply(const ModuleApplyFunction& fn) {
  fn(*this);
  for (auto& child : children_) child.value()->apply(fn);
}
void Module::apply(const ConstModuleApplyFunction& fn) const {
  fn(*this);
  for (const auto& child : children_) static_cast<const Module&>(*child.value()).apply(fn);
}
void Module::apply(const NamedModuleApplyFunction& fn, const std::string& name_prefix) {
  fn(name_prefix, *this);
  for (auto& child : children_) child.value()->apply(fn, join_name(name_prefix, child.key()));
}
void Module::apply(const ConstNamedModuleApplyFunction& fn, const std::string& name_prefix) const {
  fn(name_prefix, *this);
  for (const auto& child : children_)
    static_cast<const Module&>(*child.value()).apply(fn, join_name(name_prefix, child.key()));
}
void Module::apply(const ModulePointerApplyFunction& fn) const {
  for (const auto& m : modules(/*include_self=*/true)) fn(m);
}

OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  OrderedDict<std::string, Tensor> result("Parameter");
  auto add = [&](const std::string& prefix, const Module& m) {
    for (const auto& p : m.parameters_)
      if (p.value().defined()) result.insert(join_name(prefix, p.key()), p.value());
  };
  if (recurse) {
    apply(ConstNamedModuleApplyFunction(add));
  } else {
    add("", *this);
  }
  return result;
}
std::vector<Tensor> Module::parameters(bool recurse) const { return named_parameters(recurse).values(); }

OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  OrderedDict<std::string, Tensor> result("Buffer");
  auto add = [&](const std::string& prefix, const Module& m) {
    for (const auto& b : m.buffers_)
      if (b.value().defined()) result.insert(join_name(prefix, b.key()), b.value());
  };
  if (recurse) {
    apply(ConstNamedModuleApplyFunction(add));
  } else {
    add("", *this);
  }
  return result;
}
std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(const std::string& name_prefix,
                                                                         bool include_self) const {
  OrderedDict<std::string, std::shared_ptr<Module>> result("Module");
  if (include_self) {
    auto self = std::const_pointer_cast<Module>(weak_from_this().lock());
    EMBER_CHECK(self, "Module",
                "It looks like you attempted to retrieve your top-level module as a shared_ptr, but it is not "
                "stored in a shared_ptr. Use std::make_shared<", name(), "> instead of creating your module on "
                "the stack, or alternatively do not try to access your top-level module at all by passing "
                "/*include_self=*/false to modules() or named_modules()");
    result.insert(name_prefix, self);
  }
  for (const auto& child : children_) {
    const std::string prefix = join_name(name_prefix, child.key());
    result.update(child.value()->named_modules(prefix, /*include_self=*/true));
  }
  return result;
}
std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) const {
  return named_modules("", include_self).values();
}
std::vector<std::shared_ptr<Module>> Module::children() const { return children_.values(); }
OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const { return children_; }

void Module::train(bool on) {
  for (auto& child : children_) child.value()->train(on);
  is_training_ = on;
}

void Module::apply_to_tensors(const std::function<Tensor(const Tensor&)>& fn) {
  for (auto& child : children_) child.value()->apply_to_tensors(fn);
  NoGradGuard no_grad;
  for (auto* dict : {&parameters_, &buffers_}) {
    for (auto& item : *dict) {
      const Tensor& t = item.value();
      if (!t.defined()) continue;
      Tensor converted = fn(t);
      if (converted.is_same(t)) continue;
      set_data(t, converted);
      if (t.grad().defined()) set_data(t.grad(), fn(t.grad()));
    }
  }
}

void Module::to(ScalarType dtype, bool /*non_blocking*/) {
  EMBER_CHECK(is_floating_type(dtype), "Module.to", "nn.Module.to only accepts floating point dtypes, but got desired dtype=",
              dtype);
  apply_to_tensors([dtype](const Tensor& t) { return t.is_floating_point() ? t.to(dtype) : t; });
}

void Module::to(Device device, bool /*non_blocking*/) { check_cpu_device("Module.to", device); }

void Module::to(Device device, ScalarType dtype, bool non_blocking) {
  check_cpu_device("Module.to", device);
  to(dtype, non_blocking);
}

void Module::to(MemoryFormat format) {
  apply_to_tensors([format](const Tensor& t) { return t.dim() == 4 ? t.contiguous(format) : t; });
}

void Module::zero_grad(bool set_to_none) {
  for (const Tensor& p : parameters()) {
    Tensor& g = p.mutable_grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      g.reset();
    } else {
      g = g.detach();
      g.zero_();
    }
  }
}

void Module::save(serialize::OutputArchive& archive) const {
  for (const auto& p : named_parameters(/*recurse=*/false)) archive.write(p.key(), p.value());
  for (const auto& b : named_buffers(/*recurse=*/false)) archive.write(b.key(), b.value(), /*is_buffer=*/true);
  for (const auto& child : children_) {
    if (!child.value()->is_serializable()) continue;
    serialize::OutputArchive nested;
    child.value()->save(nested);
    archive.write(child.key(), nested);
  }
}

void Module::load(serialize::InputArchive& archive) {
  // Everything is checked before anything is read, so a failed load leaves the module as it was
  // (libtorch's stops half way).
  std::function<void(const Module&, const std::string&)> check = [&](const Module& m, const std::string& prefix) {
    auto expect = [&](const std::string& key, const Tensor& t) {
      const Tensor* stored = archive.find(prefix + key);
      EMBER_CHECK(stored, "Module::load", "No such serialized tensor '", archive.prefix() + prefix + key, "'");
      EMBER_CHECK(stored->sizes() == t.sizes(), "Module::load", "'", archive.prefix() + prefix + key,
                  "' has shape ", stored->sizes(), " in the archive but ", t.sizes(), " in the module");
    };
    for (const auto& p : m.named_parameters(/*recurse=*/false)) expect(p.key(), p.value());
    for (const auto& b : m.named_buffers(/*recurse=*/false)) expect(b.key(), b.value());
    for (const auto& child : m.children_)
      if (child.value()->is_serializable()) check(*child.value(), prefix + child.key() + ".");
  };
  check(*this, "");
  for (const auto& p : named_parameters(/*recurse=*/false)) {
    Tensor t = p.value();
    archive.read(p.key(), t);
  }
  for (const auto& b : named_buffers(/*recurse=*/false)) {
    Tensor t = b.value();
    archive.read(b.key(), t, /*is_buffer=*/true);
  }
  for (const auto& child : children_) {
    if (!child.value()->is_serializable()) continue;
    serialize::InputArchive nested;
    archive.try_read(child.key(), nested);  // a child without tensors wrote nothing
    child.value()->load(nested);
  }
}

void Module::pretty_print(std::ostream& stream) const { stream << name(); }

void Module::pretty_print_recursive(std::ostream& stream, const std::string& indentation) const {
  pretty_print(stream);
  if (children_.is_empty()) return;
  stream << "(\n";
  const std::string next = indentation + "  ";
  for (const auto& child : children_) {
    stream << next << "(" << child.key() << "): ";
    child.value()->pretty_print_recursive(stream, next);
    stream << '\n';
  }
  stream << indentation << ")";
}

std::ostream& operator<<(std::ostream& stream, const Module& module) {
  module.pretty_print_recursive(stream, "");
  return stream;
}

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_name("Parameter", name);
  if (tensor.defined()) tensor.requires_grad_(requires_grad);
  return parameters_.insert(std::move(name), std::move(tensor));
}

Tensor& Module::register_buffer(std::string name, Tensor tensor) {
  check_name("Buffer", name);
  return buffers_.insert(std::move(name), std::move(tensor));
}

void Module::check_child(const std::string& name, const Module* module, bool replace) const {
  check_name("Submodule", name);
  EMBER_CHECK(module, "Module", "Submodule '", name, "' is null (an empty module holder)");
  EMBER_CHECK(module != this, "Module", "Submodule '", name, "' is the module itself");
  if (replace) {
    EMBER_CHECK(children_.contains(name), "Module", "Submodule '", name, "' is not defined");
  }
}

void Module::unregister_module(const std::string& name) {
  EMBER_CHECK(children_.contains(name), "Module", "No Module with name `", name, "` is registered");
  children_.erase(name);
}

void set_data(const Tensor& self, const Tensor& new_data) {
  TensorImpl* impl = self.unsafeGetTensorImpl();
  const TensorImpl* src = new_data.unsafeGetTensorImpl();
  EMBER_CHECK(impl && src, "set_data", "both tensors must be defined");
  impl->set_storage(src->storage());
  impl->set_dtype(src->dtype());
  impl->set_sizes_and_strides(src->sizes(), src->strides(), src->storage_offset());
}

}  // namespace ember::nn

void ember::Tensor::set_data(const Tensor& new_data) const { nn::set_data(*this, new_data); }
