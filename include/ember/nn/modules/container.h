// Containers: Sequential (forward chains its modules), ModuleList and ModuleDict (hold modules,
// no forward). Children are named "0", "1", ... unless given names.
#pragma once
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "ember/nn/modules/any.h"

namespace ember::nn {

// A module with its name, for named Sequentials: Sequential({{"conv", Conv2d(...)}, ...}).
class NamedAnyModule {
 public:
  template <class M>
  NamedAnyModule(std::string name, M&& module) : name_(std::move(name)), module_(std::forward<M>(module)) {}
  const std::string& name() const { return name_; }
  const AnyModule& module() const { return module_; }

 private:
  std::string name_;
  AnyModule module_;
};

class SequentialImpl : public Module {
 public:
  using Iterator = std::vector<AnyModule>::iterator;
  using ConstIterator = std::vector<AnyModule>::const_iterator;

  SequentialImpl() = default;
  template <class... Modules>
  explicit SequentialImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  explicit SequentialImpl(OrderedDict<std::string, AnyModule>&& ordered_dict);
  explicit SequentialImpl(std::initializer_list<NamedAnyModule> named_modules);

  // Runs the modules in order, the first on the inputs, each next one on the previous one's
  // output, whatever their types; ReturnType names the last one's (an ember::Error if it differs).
  template <class ReturnType = Tensor, class... InputTypes>
  ReturnType forward(InputTypes&&... inputs) {
    if constexpr (std::is_same_v<ReturnType, Tensor> && sizeof...(InputTypes) == 1 &&
                  (std::is_same_v<std::decay_t<InputTypes>, Tensor> && ...)) {
      return forward_tensor(inputs...);
    } else {
      EMBER_CHECK(!modules_.empty(), "Sequential", "Cannot call forward() on an empty Sequential");
      AnyValue output = forward_from(1, modules_.front().any_forward(std::forward<InputTypes>(inputs)...));
      check_return_type(output, typeid(ReturnType));
      return std::move(*output.template try_get<ReturnType>());
    }
  }
  void pretty_print(std::ostream& stream) const override;

  template <class M>
  void push_back(M&& module) {
    push_back(std::to_string(modules_.size()), std::forward<M>(module));
  }
  template <class M>
  void push_back(std::string name, M&& module) {
    AnyModule any(std::forward<M>(module));
    register_module(std::move(name), any.ptr());
    modules_.push_back(std::move(any));
  }
  void push_back(const SequentialImpl& other);
  template <class Container>
  void extend(const Container& container) {
    for (const auto& m : container) push_back(m);
  }

  Iterator begin() { return modules_.begin(); }
  Iterator end() { return modules_.end(); }
  ConstIterator begin() const { return modules_.begin(); }
  ConstIterator end() const { return modules_.end(); }
  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }

  // Puts `module` in the place of the one registered as `name` (PyTorch's setattr on a
  // Sequential, what quantization::fuse_modules does to the layers it fuses).
  void replace(const std::string& name, AnyModule module);

  const AnyModule& at_any(size_t index) const;
  std::shared_ptr<Module> ptr(size_t index) const { return at_any(index).ptr(); }
  template <class T>
  std::shared_ptr<T> ptr(size_t index) const {
    return at_any(index).template ptr<T>();
  }
  std::shared_ptr<Module> operator[](size_t index) const { return ptr(index); }
  template <class T>
  T& at(size_t index) {
    return *ptr<T>(index);
  }

 private:
  // A Tensor through the modules, unboxed as long as each one maps a Tensor to a Tensor.
  Tensor forward_tensor(const Tensor& input);
  // The modules from `index` on, the first of them on `value`.
  AnyValue forward_from(size_t index, AnyValue value) const;
  static void check_return_type(const AnyValue& output, const std::type_info& asked);

  std::vector<AnyModule> modules_;
};
// Spelled out (not EMBER_MODULE) for the named form: Sequential({{"conv", Conv2d(1, 2, 3)}, ...}).
class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  using Impl = SequentialImpl;
  Sequential() : ModuleHolder(std::make_shared<SequentialImpl>()) {}
  Sequential(std::initializer_list<NamedAnyModule> named_modules)  // NOLINT
      : ModuleHolder(std::make_shared<SequentialImpl>(named_modules)) {}
};

class ModuleListImpl : public Module {
 public:
  using Iterator = std::vector<std::shared_ptr<Module>>::iterator;
  using ConstIterator = std::vector<std::shared_ptr<Module>>::const_iterator;

  ModuleListImpl() = default;
  template <class... Modules>
  explicit ModuleListImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  void push_back(std::shared_ptr<Module> module);
  template <class M>
  void push_back(const ModuleHolder<M>& holder) {
    push_back(std::static_pointer_cast<Module>(holder.ptr()));
  }
  template <class M, std::enable_if_t<std::is_base_of_v<Module, std::decay_t<M>>, int> = 0>
  void push_back(M&& module) {
    push_back(std::static_pointer_cast<Module>(std::make_shared<std::decay_t<M>>(std::forward<M>(module))));
  }
  template <class Container>
  void extend(const Container& container) {
    for (const auto& m : container) push_back(m);
  }
  // Inserts before `index` (index == size() appends); later modules are renumbered.
  void insert(size_t index, std::shared_ptr<Module> module);
  template <class M>
  void insert(size_t index, const ModuleHolder<M>& holder) {
    insert(index, std::static_pointer_cast<Module>(holder.ptr()));
  }

  Iterator begin() { return modules_.begin(); }
  Iterator end() { return modules_.end(); }
  ConstIterator begin() const { return modules_.begin(); }
  ConstIterator end() const { return modules_.end(); }
  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }
  std::shared_ptr<Module> ptr(size_t index) const;
  template <class T>
  std::shared_ptr<T> ptr(size_t index) const {
    auto p = std::dynamic_pointer_cast<T>(ptr(index));
    EMBER_CHECK(p, "ModuleList", "Unable to cast module at index ", index);
    return p;
  }
  std::shared_ptr<Module> operator[](size_t index) const { return ptr(index); }
  template <class T>
  T& at(size_t index) {
    return *ptr<T>(index);
  }
  void pretty_print(std::ostream& stream) const override;

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};
EMBER_MODULE(ModuleList);

class ModuleDictImpl : public Module {
 public:
  ModuleDictImpl() = default;
  explicit ModuleDictImpl(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules);
  explicit ModuleDictImpl(const OrderedDict<std::string, std::shared_ptr<Module>>& modules);

  // Adds or replaces (keeping the first position) each entry.
  void update(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules);
  void update(const OrderedDict<std::string, std::shared_ptr<Module>>& modules);
  template <class M>
  std::shared_ptr<Module> insert(const std::string& key, const ModuleHolder<M>& holder) {
    return insert(key, std::static_pointer_cast<Module>(holder.ptr()));
  }
  std::shared_ptr<Module> insert(const std::string& key, std::shared_ptr<Module> module);
  std::shared_ptr<Module> pop(const std::string& key);
  void clear();

  std::shared_ptr<Module> operator[](const std::string& key) const;
  template <class T>
  T& at(const std::string& key) {
    auto p = std::dynamic_pointer_cast<T>((*this)[key]);
    EMBER_CHECK(p, "ModuleDict", "Unable to cast module[", key, "]");
    return *p;
  }
  bool contains(const std::string& key) const { return modules_.contains(key); }
  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.is_empty(); }
  std::vector<std::string> keys() const { return modules_.keys(); }
  std::vector<std::shared_ptr<Module>> values() const { return modules_.values(); }
  // (name, module) pairs, as libtorch's (`item.first`, `item.second`).
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> items() const { return modules_.pairs(); }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }
  void pretty_print(std::ostream& stream) const override;

 private:
  OrderedDict<std::string, std::shared_ptr<Module>> modules_{"Module"};
};
EMBER_MODULE(ModuleDict);

}  // namespace ember::nn
