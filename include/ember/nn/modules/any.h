// AnyValue (a value of any copyable type) and AnyModule (a module of any type, called through
// values of any type), what Sequential holds so that it can chain modules of different forward
// signatures, as libtorch's.
#pragma once
#include <any>
#include <concepts>
#include <cstddef>
#include <memory>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "ember/nn/pimpl.h"

namespace ember::nn {

// Holds one value of a decayed, copyable type; get<T>() returns it when T is that exact type.
class AnyValue {
 public:
  template <class T, std::enable_if_t<!std::is_same_v<std::decay_t<T>, AnyValue>, int> = 0>
  explicit AnyValue(T&& value) : value_(std::in_place_type<std::decay_t<T>>, std::forward<T>(value)) {}

  template <class T>
  T* try_get() {
    static_assert(!std::is_reference_v<T>, "AnyValue stores decayed types, you cannot cast it to a reference type");
    static_assert(!std::is_array_v<T>, "AnyValue stores decayed types, you must cast it to T* instead of T[]");
    return std::any_cast<T>(&value_);
  }
  template <class T>
  T get() {
    T* value = try_get<T>();
    EMBER_CHECK(value, "AnyValue", "Attempted to cast AnyValue to ", detail::demangle(typeid(T).name()),
                ", but its actual type is ", detail::demangle(type_info().name()));
    return *value;
  }
  const std::type_info& type_info() const noexcept { return value_.type(); }

 private:
  std::any value_;
};

namespace detail {
template <class T>
AnyValue to_any_value(T&& value) {
  if constexpr (std::is_same_v<std::decay_t<T>, AnyValue>) {
    return std::forward<T>(value);
  } else {
    return AnyValue(std::forward<T>(value));
  }
}

// Raise ember::Error naming the module when a call's arguments do not fit its forward().
void check_forward_arity(const Module& module, size_t given, size_t min_args, size_t max_args);
void check_forward_argument(const Module& module, size_t index, const AnyValue& value,
                            const std::type_info& expected);

// A module's forward() as a member function type, when it has exactly one, not a template.
template <class F>
struct ForwardSignature;
template <class R, class C, class... A>
struct ForwardSignature<R (C::*)(A...)> {
  using Return = R;
  using Args = std::tuple<A...>;
};
template <class R, class C, class... A>
struct ForwardSignature<R (C::*)(A...) const> : ForwardSignature<R (C::*)(A...)> {};
template <class M>
concept HasPlainForward = requires { typename ForwardSignature<decltype(&M::forward)>::Return; };

// Calls M::forward with arguments given as AnyValues: checks their count (forward's default
// arguments, read from its declaration, may be left out) and each one's type, then forwards
// them in their declared types.
template <class M, class Args = typename ForwardSignature<decltype(&M::forward)>::Args>
struct TypedForward;
template <class M, class... A>
struct TypedForward<M, std::tuple<A...>> {
  template <size_t N>
  using Arg = std::tuple_element_t<N, std::tuple<A...>>;
  template <size_t... I>
  static constexpr bool callable_with(std::index_sequence<I...>) {
    return requires(M& m) { m.forward(std::declval<Arg<I>>()...); };
  }
  static constexpr size_t min_args() {
    size_t n = sizeof...(A);
    [&]<size_t... K>(std::index_sequence<K...>) {
      // n - 1 arguments suffice when forward's nth parameter has a default; stop at the first that has none.
      (void)((callable_with(std::make_index_sequence<sizeof...(A) - 1 - K>()) ? (--n, true) : false) && ...);
    }(std::make_index_sequence<sizeof...(A)>());
    return n;
  }
  static constexpr size_t kMin = min_args();

  template <size_t... I>
  static AnyValue call(Module& module, std::vector<AnyValue>& args, std::index_sequence<I...>) {
    (check_forward_argument(module, I, args[I], typeid(std::decay_t<Arg<I>>)), ...);
    return AnyValue(call_forward(static_cast<M&>(module),
                                 std::forward<Arg<I>>(*args[I].template try_get<std::decay_t<Arg<I>>>())...));
  }
  static AnyValue invoke(Module& module, std::vector<AnyValue>& args) {
    check_forward_arity(module, args.size(), kMin, sizeof...(A));
    return [&]<size_t... K>(std::index_sequence<K...>) {
      using Call = AnyValue (*)(Module&, std::vector<AnyValue>&);
      constexpr Call by_count[] = {
          [](Module& m, std::vector<AnyValue>& a) { return call(m, a, std::make_index_sequence<kMin + K>()); }...};
      return by_count[args.size() - kMin](module, args);
    }(std::make_index_sequence<sizeof...(A) - kMin + 1>());
  }
};

template <class M>
concept TensorForward = requires(M& m, const Tensor& x) {
  { m.forward(x) } -> std::same_as<Tensor>;
};
// Whether forward(Tensor) -> Tensor is the same call as the AnyValue one (one argument of type
// Tensor, the rest defaulted), so that a Tensor may take the short way around AnyValue.
template <class M>
constexpr bool tensor_forward_is_exact() {
  if constexpr (!TensorForward<M>) {
    return false;
  } else if constexpr (!HasPlainForward<M>) {
    return true;  // a template forward (a nested Sequential): called with one Tensor
  } else {
    using Sig = ForwardSignature<decltype(&M::forward)>;
    if constexpr (std::tuple_size_v<typename Sig::Args> == 0) {
      return false;
    } else {
      return std::is_same_v<std::decay_t<std::tuple_element_t<0, typename Sig::Args>>, Tensor> &&
             TypedForward<M>::kMin <= 1;
    }
  }
}
}  // namespace detail

// A module of any type. forward<R>(args...) calls the module's forward with the arguments and
// returns its result as R; any_forward(args...) returns it as an AnyValue. Arguments must have
// forward's parameter types exactly (after decay); a wrong count or type raises ember::Error.
class AnyModule {
 public:
  AnyModule() = default;
  template <class M, std::enable_if_t<std::is_base_of_v<Module, M>, int> = 0>
  AnyModule(std::shared_ptr<M> module) : module_(module), type_(&typeid(M)) {  // NOLINT
    if constexpr (detail::HasPlainForward<M>) {
      using R = typename detail::ForwardSignature<decltype(&M::forward)>::Return;
      if constexpr (!std::is_void_v<R> && std::is_copy_constructible_v<std::decay_t<R>>) {
        forward_ = &detail::TypedForward<M>::invoke;
      }
    } else if constexpr (detail::TensorForward<M>) {
      forward_ = [](Module& m, std::vector<AnyValue>& args) {
        detail::check_forward_arity(m, args.size(), 1, 1);
        detail::check_forward_argument(m, 0, args[0], typeid(Tensor));
        return AnyValue(detail::call_forward(static_cast<M&>(m), *args[0].try_get<Tensor>()));
      };
    }
    if constexpr (detail::tensor_forward_is_exact<M>()) {
      tensor_forward_ = [](Module& m, const Tensor& x) -> Tensor { return detail::call_forward(static_cast<M&>(m), x); };
    }
  }
  template <class M>
  AnyModule(const ModuleHolder<M>& holder) : AnyModule(holder.ptr()) {}  // NOLINT
  template <class M, std::enable_if_t<std::is_base_of_v<Module, M>, int> = 0>
  AnyModule(M&& module) : AnyModule(std::make_shared<std::decay_t<M>>(std::forward<M>(module))) {}  // NOLINT

  template <class... Args>
  AnyValue any_forward(Args&&... args) const {
    std::vector<AnyValue> values;
    values.reserve(sizeof...(Args));
    (values.push_back(detail::to_any_value(std::forward<Args>(args))), ...);
    return call(values);
  }
  template <class ReturnType = Tensor, class... Args>
  ReturnType forward(Args&&... args) const {
    if constexpr (std::is_same_v<ReturnType, Tensor> && sizeof...(Args) == 1 &&
                  (std::is_same_v<std::decay_t<Args>, Tensor> && ...)) {
      if (tensor_forward_) return tensor_forward_(*module_, args...);
    }
    return any_forward(std::forward<Args>(args)...).template get<ReturnType>();
  }

  const std::shared_ptr<Module>& ptr() const { return module_; }
  template <class T>
  std::shared_ptr<T> ptr() const {
    auto p = std::dynamic_pointer_cast<T>(module_);
    EMBER_CHECK(p, "AnyModule", "Attempted to cast module of type ", module_->name(), " to a different type");
    return p;
  }
  // The module (get<LinearImpl>()) or a holder of it (get<Linear>()).
  template <class T>
    requires std::is_base_of_v<Module, T>
  T& get() const {
    return *ptr<T>();
  }
  template <class T, class Contained = typename T::ContainedType>
  T get() const {
    return T(ptr<Contained>());
  }
  // The type the module was given as.
  const std::type_info& type_info() const;
  bool is_empty() const { return module_ == nullptr; }

 private:
  friend class SequentialImpl;
  AnyValue call(std::vector<AnyValue>& args) const;

  std::shared_ptr<Module> module_;
  const std::type_info* type_ = nullptr;
  AnyValue (*forward_)(Module&, std::vector<AnyValue>&) = nullptr;
  // forward(Tensor) -> Tensor without boxing, when that is the same call (Sequential chains these).
  Tensor (*tensor_forward_)(Module&, const Tensor&) = nullptr;
};

}  // namespace ember::nn

// libtorch modules list their forward's default arguments with this macro for AnyModule; Ember
// reads them from forward's declaration, so the list is not needed. (A file that includes
// libtorch's headers too keeps libtorch's definition.)
#ifndef FORWARD_HAS_DEFAULT_ARGS
#define FORWARD_HAS_DEFAULT_ARGS(...)
#endif
