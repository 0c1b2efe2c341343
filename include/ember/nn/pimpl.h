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
// Calls a module's forward(Tensor...) -> Tensor given its inputs; made per module type.
using ForwardInvoker = Tensor (*)(Module& module, const Tensor* inputs);
template <class M, size_t... I>
Tensor invoke_forward(Module& module, const Tensor* inputs, std::index_sequence<I...>) {
  return static_cast<M&>(module).forward(inputs[I]...);
}
template <class M, size_t N>
Tensor invoke_forward(Module& module, const Tensor* inputs) {
  return invoke_forward<M>(module, inputs, std::make_index_sequence<N>());
}

// fx's tracer sees module calls through this (a built-in module called while tracing becomes one
// call_module node): set for the thread while a trace runs, null otherwise.
class ModuleCallHook {
 public:
  virtual Tensor call(Module& module, ForwardInvoker invoke, const Tensor* inputs, size_t n) = 0;

 protected:
  ~ModuleCallHook() = default;
};
ModuleCallHook*& module_call_hook();

// module.forward(args...), seen by the hook when it is set and the call takes and returns tensors.
template <class M, class... Args>
decltype(auto) call_forward(M& module, Args&&... args) {
  if constexpr (sizeof...(Args) > 0 && (std::is_same_v<std::decay_t<Args>, Tensor> && ...) &&
                std::is_same_v<decltype(module.forward(std::forward<Args>(args)...)), Tensor>) {
    if (ModuleCallHook* hook = module_call_hook()) [[unlikely]] {
      const Tensor inputs[] = {args...};
      return hook->call(module, &invoke_forward<M, sizeof...(Args)>, inputs, sizeof...(Args));
    }
  }
  return module.forward(std::forward<Args>(args)...);
}

template <class T, class Contained>
inline constexpr bool is_holder_arg_v =
    std::is_base_of_v<ModuleHolder<Contained>, std::decay_t<T>> ||
    std::is_same_v<std::decay_t<T>, std::shared_ptr<Contained>> || std::is_same_v<std::decay_t<T>, std::nullptr_t>;
// A holder of something other than a module (TORCH_MODULE over a dataset, as libtorch allows)
// has no parametrizations to refresh.
template <class T, std::enable_if_t<!std::is_base_of_v<Module, T>, int> = 0>
void refresh_parametrizations(const T&) {}
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
    return detail::call_forward(*get(), std::forward<Args>(args)...);
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
