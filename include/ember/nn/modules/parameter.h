// ParameterList, ParameterDict (parameters held by position or key) and Functional (a function
// used as a module).
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ember/nn/pimpl.h"

namespace ember::nn {

// Parameters named "0", "1", ... in the order appended.
class ParameterListImpl : public Module {
 public:
  using Iterator = OrderedDict<std::string, Tensor>::iterator;
  using ConstIterator = OrderedDict<std::string, Tensor>::const_iterator;

  ParameterListImpl() = default;
  template <class... Tensors>
  explicit ParameterListImpl(Tensors&&... params) {
    (append(std::forward<Tensors>(params)), ...);
  }
  void append(Tensor param);
  // Appends the item's value (its key is not kept, as libtorch's).
  void append(const OrderedDict<std::string, Tensor>::Item& pair) { append(pair.value()); }
  template <class Container>
  void extend(const Container& container) {
    for (const auto& param : container) append(param);
  }
  Iterator begin() { return parameters_.begin(); }
  Iterator end() { return parameters_.end(); }
  ConstIterator begin() const { return parameters_.begin(); }
  ConstIterator end() const { return parameters_.end(); }
  Tensor& at(size_t idx);
  const Tensor& at(size_t idx) const;
  Tensor& operator[](size_t idx) { return at(idx); }
  const Tensor& operator[](size_t idx) const { return at(idx); }
  size_t size() const noexcept { return parameters_.size(); }
  bool is_empty() const noexcept { return parameters_.is_empty(); }
  void pretty_print(std::ostream& stream) const override;
};
EMBER_MODULE(ParameterList);

class ParameterDictImpl : public Module {
 public:
  using Iterator = OrderedDict<std::string, Tensor>::iterator;
  using ConstIterator = OrderedDict<std::string, Tensor>::const_iterator;

  ParameterDictImpl() = default;
  explicit ParameterDictImpl(const OrderedDict<std::string, Tensor>& params) { update(params); }
  // Adds key (an error if present); returns the parameter.
  Tensor& insert(std::string key, Tensor param);
  Tensor pop(const std::string& key);
  std::vector<std::string> keys() const { return parameters_.keys(); }
  std::vector<Tensor> values() const { return parameters_.values(); }
  bool contains(const std::string& key) const { return parameters_.contains(key); }
  size_t size() const noexcept { return parameters_.size(); }
  bool empty() const noexcept { return parameters_.is_empty(); }
  void clear() { parameters_.clear(); }
  // Replaces the tensors of the keys present, adds the others.
  template <class Container>
  void update(const Container& container) {
    for (const auto& item : container) {
      if (contains(item.key())) {
        parameters_[item.key()] = item.value();
      } else {
        insert(item.key(), item.value());
      }
    }
  }
  Iterator begin() { return parameters_.begin(); }
  Iterator end() { return parameters_.end(); }
  ConstIterator begin() const { return parameters_.begin(); }
  ConstIterator end() const { return parameters_.end(); }
  Tensor& get(const std::string& key) { return parameters_[key]; }
  const Tensor& get(const std::string& key) const { return parameters_[key]; }
  Tensor& operator[](const std::string& key) { return get(key); }
  const Tensor& operator[](const std::string& key) const { return get(key); }
  void pretty_print(std::ostream& stream) const override;
};
EMBER_MODULE(ParameterDict);

// Wraps a function of one tensor; extra arguments are bound after it
// (Functional(torch::leaky_relu, 0.2)).
class FunctionalImpl : public Module {
 public:
  using Function = std::function<Tensor(Tensor)>;
  explicit FunctionalImpl(Function function) : function_(std::move(function)) {}
  template <class SomeFunction, class... Args, std::enable_if_t<(sizeof...(Args) > 0), int> = 0>
  explicit FunctionalImpl(SomeFunction original_function, Args&&... args)
      : function_([f = std::move(original_function), ... bound = std::forward<Args>(args)](Tensor input) {
          return f(std::move(input), bound...);
        }) {}
  Tensor forward(Tensor input) { return function_(std::move(input)); }
  Tensor operator()(Tensor input) { return forward(std::move(input)); }
  void pretty_print(std::ostream& stream) const override { stream << "torch::nn::Functional()"; }

 private:
  Function function_;
};
EMBER_MODULE(Functional);

}  // namespace ember::nn
