// ModuleHolder: the value type users handle (nn::Linear), a shared pointer to the module
// implementation (nn::LinearImpl) with `->` access and a call operator that forwards to forward().
// EMBER_MODULE(Name) declares Name as the holder of NameImpl (libtorch's TORCH_MODULE).
#pragma once
#include <cstddef>
#include <memory>
#include <ostream>
#include <type_traits>
#include <utility>

#include "ember/error.h"
#include "ember/nn/module.h"

namespace ember::nn {

namespace detail {
template <class T, class Contained>
inline constexpr bool is_holder_arg_v =
    std::is_base_of_v<ModuleHolder<Contained>, std::decay_t<T>> ||
    std::is_same_v<std::decay_t<T>, std::shared_ptr<Contained>> || std::is_same_v<std::decay_t<T>, std::nullptr_t>;
}  // namespace detail

template <class Contained>
class ModuleHolder {
 public:
  using ContainedType = Contained;

  // Default-constructs the module; modules without a default constructor need `= nullptr`.
  ModuleHolder() : impl_(default_construct()) {}
  ModuleHolder(std::nullptr_t) {}  // NOLINT: the empty state (`nn::Linear fc{nullptr};`)
  // Constructs the module from the arguments: nn::Linear(784, 10), nn::Linear(options).
  template <class Head, class... Tail,
            std::enable_if_t<!(detail::is_holder_arg_v<Head, Contained> && sizeof...(Tail) == 0), int> = 0>
  explicit ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(std::make_shared<Contained>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {}
  ModuleHolder(std::shared_ptr<Contained> module) : impl_(std::move(module)) {}  // NOLINT

  explicit operator bool() const noexcept { return !is_empty(); }
  bool is_empty() const noexcept { return impl_ == nullptr; }
  // Both refresh the module's parametrized tensors (register_parametrization) when their
  // originals changed, so that module->weight and forward() read the current value.
  Contained* operator->() {
    detail::refresh_parametrizations(*get());
    return get();
  }
  const Contained* operator->() const {
    detail::refresh_parametrizations(*get());
    return get();
  }
  Contained& operator*() { return *get(); }
  const Contained& operator*() const { return *get(); }
  const std::shared_ptr<Contained>& ptr() const {
    EMBER_CHECK(impl_, "ModuleHolder", "Accessing empty ModuleHolder");
    return impl_;
  }
  operator std::shared_ptr<Contained>() const { return impl_; }  // NOLINT: as register_module's result
  Contained* get() { return ptr().get(); }
  const Contained* get() const { return ptr().get(); }

  template <class... Args>
  decltype(auto) operator()(Args&&... args) {
    detail::refresh_parametrizations(*get());
    return get()->forward(std::forward<Args>(args)...);
  }
  template <class Arg>
  decltype(auto) operator[](Arg&& arg) {
    return (*get())[std::forward<Arg>(arg)];
  }

 protected:
  std::shared_ptr<Contained> impl_;

 private:
  static std::shared_ptr<Contained> default_construct() {
    if constexpr (std::is_default_constructible_v<Contained>) {
      return std::make_shared<Contained>();
    } else {
      static_assert(std::is_default_constructible_v<Contained>,
                    "You are trying to default construct a module which has no default constructor. Use = "
                    "nullptr to give it the empty state (e.g. `Linear linear = nullptr;` instead of `Linear "
                    "linear;`).");
      return nullptr;
    }
  }
};

template <class Contained>
std::ostream& operator<<(std::ostream& stream, const ModuleHolder<Contained>& holder) {
  return stream << *holder;
}

}  // namespace ember::nn

#define EMBER_MODULE_IMPL(Name, ImplType)                                     \
  class Name : public ::ember::nn::ModuleHolder<ImplType> {                   \
   public:                                                                   \
    using ::ember::nn::ModuleHolder<ImplType>::ModuleHolder;                 \
    using Impl = ImplType;                                                   \
  }
#define EMBER_MODULE(Name) EMBER_MODULE_IMPL(Name, Name##Impl)
