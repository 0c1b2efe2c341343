#include "ember/nn/modules/container.h"

namespace ember::nn {

namespace detail {
void check_forward_arity(const Module& module, size_t given, size_t min_args, size_t max_args) {
  if (min_args == max_args) {
    EMBER_CHECK(given == max_args, "AnyModule", module.name(), "'s forward() method expects ", max_args,
                " argument(s), but received ", given);
  } else {
    EMBER_CHECK(given >= min_args && given <= max_args, "AnyModule", module.name(),
                "'s forward() method expects at least ", min_args, " argument(s) and at most ", max_args,
                " argument(s), but received ", given);
  }
}

void check_forward_argument(const Module& module, size_t index, const AnyValue& value,
                            const std::type_info& expected) {
  EMBER_CHECK(value.type_info() == expected, "AnyModule", module.name(), "'s forward() method expects argument #",
              index, " to be of type ", demangle(expected.name()), ", but received a value of type ",
              demangle(value.type_info().name()));
}
}  // namespace detail

AnyValue AnyModule::call(std::vector<AnyValue>& args) const {
  EMBER_CHECK(module_, "AnyModule", "Cannot call forward() on an empty AnyModule");
  EMBER_CHECK(forward_, "AnyModule", "module ", module_->name(),
              " has no forward() that AnyModule can call (one non-template forward returning a copyable value, "
              "or forward(Tensor) returning a Tensor)");
  return forward_(*module_, args);
}

const std::type_info& AnyModule::type_info() const {
  EMBER_CHECK(module_, "AnyModule", "Cannot call type_info() on an empty AnyModule");
  return *type_;
}

SequentialImpl::SequentialImpl(OrderedDict<std::string, AnyModule>&& ordered_dict) {
  for (auto& item : ordered_dict) push_back(item.key(), item.value());
}
SequentialImpl::SequentialImpl(std::initializer_list<NamedAnyModule> named_modules) {
  for (const NamedAnyModule& m : named_modules) push_back(m.name(), m.module());
}

Tensor SequentialImpl::forward_tensor(const Tensor& input) {
  EMBER_CHECK(!modules_.empty(), "Sequential", "Cannot call forward() on an empty Sequential");
  Tensor x = input;
  for (size_t i = 0; i < modules_.size(); ++i) {
    const AnyModule& m = modules_[i];
    if (!m.tensor_forward_) {
      AnyValue output = forward_from(i + 1, m.any_forward(x));
      check_return_type(output, typeid(Tensor));
      return *output.try_get<Tensor>();
    }
    x = m.tensor_forward_(*m.module_, x);
  }
  return x;
}

AnyValue SequentialImpl::forward_from(size_t index, AnyValue value) const {
  for (; index < modules_.size(); ++index) value = modules_[index].any_forward(std::move(value));
  return value;
}

void SequentialImpl::check_return_type(const AnyValue& output, const std::type_info& asked) {
  EMBER_CHECK(output.type_info() == asked, "Sequential", "The type of the return value is ",
              detail::demangle(output.type_info().name()), ", but you asked for type ", detail::demangle(asked.name()));
}

void SequentialImpl::push_back(const SequentialImpl& other) {
  for (const AnyModule& m : other) push_back(m);
}

void SequentialImpl::replace(const std::string& name, AnyModule module) {
  const std::vector<std::string> names = named_children().keys();
  size_t index = 0;
  while (index < names.size() && names[index] != name) ++index;
  EMBER_CHECK(index < modules_.size(), "Sequential", "no module named '", name, "' to replace");
  replace_module(name, module.ptr());
  modules_[index] = std::move(module);
}

const AnyModule& SequentialImpl::at_any(size_t index) const {
  EMBER_CHECK(index < modules_.size(), "Sequential", "Index out of range (index ", index, ", size ",
              modules_.size(), ")");
  return modules_[index];
}

void SequentialImpl::pretty_print(std::ostream& stream) const { stream << "torch::nn::Sequential"; }

void ModuleListImpl::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

void ModuleListImpl::insert(size_t index, std::shared_ptr<Module> module) {
  EMBER_CHECK(index <= modules_.size(), "ModuleList", "Index out of range (index ", index, ", size ",
              modules_.size(), ")");
  EMBER_CHECK(module, "ModuleList", "cannot insert an empty module");
  modules_.insert(modules_.begin() + static_cast<std::ptrdiff_t>(index), std::move(module));
  // Children are named by position: rebuild their names in order.
  children_.clear();
  for (size_t i = 0; i < modules_.size(); ++i) register_module(std::to_string(i), modules_[i]);
}

std::shared_ptr<Module> ModuleListImpl::ptr(size_t index) const {
  EMBER_CHECK(index < modules_.size(), "ModuleList", "Index out of range (index ", index, ", size ",
              modules_.size(), ")");
  return modules_[index];
}

void ModuleListImpl::pretty_print(std::ostream& stream) const { stream << "torch::nn::ModuleList"; }

ModuleDictImpl::ModuleDictImpl(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules) {
  update(modules);
}
ModuleDictImpl::ModuleDictImpl(const OrderedDict<std::string, std::shared_ptr<Module>>& modules) { update(modules); }

void ModuleDictImpl::update(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules) {
  for (const auto& [key, m] : modules) insert(key, m);
}
void ModuleDictImpl::update(const OrderedDict<std::string, std::shared_ptr<Module>>& modules) {
  for (const auto& item : modules) insert(item.key(), item.value());
}

std::shared_ptr<Module> ModuleDictImpl::insert(const std::string& key, std::shared_ptr<Module> module) {
  if (modules_.contains(key)) {
    replace_module(key, module);
  } else {
    register_module(key, module);
  }
  modules_.insert_or_assign(key, module);
  return module;
}

std::shared_ptr<Module> ModuleDictImpl::pop(const std::string& key) {
  EMBER_CHECK(modules_.contains(key), "ModuleDict", "Module '", key, "' is not defined");
  auto m = modules_[key];
  modules_.erase(key);
  unregister_module(key);
  return m;
}

void ModuleDictImpl::clear() {
  modules_.clear();
  children_.clear();
}

std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& key) const {
  EMBER_CHECK(modules_.contains(key), "ModuleDict", "Module '", key, "' is not defined");
  return modules_[key];
}

void ModuleDictImpl::pretty_print(std::ostream& stream) const { stream << "torch::nn::ModuleDict"; }

}  // namespace ember::nn
