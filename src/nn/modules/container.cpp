#include "ember/nn/modules/container.h"

namespace ember::nn {

Tensor AnyModule::forward(const Tensor& x) const {
  EMBER_CHECK(module_, "AnyModule", "Cannot call forward() on an empty AnyModule");
  EMBER_CHECK(forward_, "Sequential", "module ", module_->name(),
              " has no forward(Tensor) returning a Tensor, so it cannot be chained");
  return forward_(x);
}

SequentialImpl::SequentialImpl(OrderedDict<std::string, AnyModule>&& ordered_dict) {
  for (auto& item : ordered_dict) push_back(item.key(), item.value());
}
SequentialImpl::SequentialImpl(std::initializer_list<NamedAnyModule> named_modules) {
  for (const NamedAnyModule& m : named_modules) push_back(m.name(), m.module());
}

Tensor SequentialImpl::forward(const Tensor& input) {
  EMBER_CHECK(!modules_.empty(), "Sequential", "Cannot call forward() on an empty Sequential");
  Tensor x = modules_.front().forward(input);
  for (size_t i = 1; i < modules_.size(); ++i) x = modules_[i].forward(x);
  return x;
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
