// nn::utils::parametrize: a module's parameter or buffer replaced by a function of underlying
// tensors (PyTorch's torch.nn.utils.parametrize). A parametrization is any nn::Module with
// `Tensor forward(const Tensor&)` (or `forward(const std::vector<Tensor>&)` when its right_inverse
// returns several tensors) and optionally `right_inverse(const Tensor&)` returning a Tensor or a
// std::vector<Tensor>.
//
//   register_parametrization(linear, "weight", std::make_shared<Symmetric>());
//   linear->weight;                                            // Symmetric()(original), current
//   linear->parametrizations["weight"]->original;              // the parameter optimizers step
//
// How module->weight stays current (the module reads a Tensor member, which no property can
// intercept): the member keeps its TensorImpl, which becomes the parametrized value, a non-leaf
// whose grad_fn leads to the originals. It is recomputed in place when it is stale: when an
// original, a parametrization's parameter or buffer, or a training flag changed since it was
// computed, when a backward went through it, or when grad mode needs a graph it lacks. The check
// runs whenever the module (or an ancestor) is reached through a holder: `linear(x)`,
// `linear->forward(x)`, `linear->weight`, `net->forward(x)`. Within one value, calls share it, as
// inside PyTorch's cached(); a module reached only through a plain shared_ptr is not refreshed.
#pragma once
#include <concepts>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/nn/module.h"
#include "ember/nn/pimpl.h"
#include "ember/serialize.h"
#include "ember/tensor.h"

namespace ember::nn::utils::parametrize {

// What a right_inverse throws when it cannot invert (PyTorch's NotImplementedError): registration
// then keeps the tensor as the original (the identity); assigning through it raises it.
class NotImplementedError : public Error {
 public:
  using Error::Error;
};

// One parametrization of a chain, its module and its calls.
struct Parametrization {
  std::shared_ptr<Module> module;
  std::function<Tensor(const std::vector<Tensor>&)> forward;
  // Empty when the module has no right_inverse (the identity at registration, an error when assigning).
  std::function<std::vector<Tensor>(const Tensor&)> right_inverse;
};

namespace detail {
template <class P>
Parametrization make_parametrization(std::shared_ptr<P> p) {
  static_assert(std::is_base_of_v<Module, P>, "a parametrization is an nn::Module");
  EMBER_CHECK(p, "register_parametrization", "the parametrization is null (an empty module holder)");
  Parametrization out;
  P* raw = p.get();  // kept alive by out.module
  out.module = std::move(p);
  if constexpr (requires(P& q, const std::vector<Tensor>& v) {
                  { q.forward(v) } -> std::convertible_to<Tensor>;
                }) {
    out.forward = [raw](const std::vector<Tensor>& xs) -> Tensor { return raw->forward(xs); };
  } else {
    static_assert(requires(P& q, const Tensor& t) {
      { q.forward(t) } -> std::convertible_to<Tensor>;
    }, "a parametrization needs Tensor forward(const Tensor&) or forward(const std::vector<Tensor>&)");
    out.forward = [raw](const std::vector<Tensor>& xs) -> Tensor {
      EMBER_CHECK(xs.size() == 1, "parametrize", "the first parametrization of '", raw->name(),
                  "' takes one tensor (forward(const Tensor&)) but right_inverse gave ", xs.size());
      return raw->forward(xs[0]);
    };
  }
  if constexpr (requires(P& q, const Tensor& t) { q.right_inverse(t); }) {
    using R = decltype(raw->right_inverse(std::declval<const Tensor&>()));
    if constexpr (std::is_convertible_v<R, Tensor>) {
      out.right_inverse = [raw](const Tensor& v) { return std::vector<Tensor>{raw->right_inverse(v)}; };
    } else {
      out.right_inverse = [raw](const Tensor& v) { return std::vector<Tensor>(raw->right_inverse(v)); };
    }
  }
  return out;
}
template <class P>
Parametrization make_parametrization(const ModuleHolder<P>& p) {
  return make_parametrization(p.ptr());
}
void register_parametrization(Module& module, const std::string& tensor_name, Parametrization parametrization,
                              bool unsafe);
// The classic hooks (nn::utils::weight_norm, spectral_norm): `parametrization` on the parameter
// tensor_name, its originals and `buffers` held by the module under the given names instead of
// under "parametrizations". `op` names the hook in messages.
void register_hook(Module& module, const std::string& tensor_name, Parametrization parametrization,
                   const std::vector<std::string>& original_names,
                   const std::vector<std::pair<std::string, Tensor>>& buffers, const char* op);
// Makes tensor_name a parameter again, holding the value computed in eval mode, and drops `names`.
void remove_hook(Module& module, const std::string& tensor_name, const std::vector<std::string>& names,
                 const char* op);
}  // namespace detail

// The chain on one tensor: module->parametrizations["weight"] (PyTorch's ParametrizationList).
// Its parameters (or buffers, when the tensor was a buffer) are `original`, or `original0`,
// `original1`, ... when the first parametrization's right_inverse returns several tensors; its
// children "0", "1", ... are the parametrizations, applied in that order.
class ParametrizationListImpl : public Module {
 public:
  // Defined when there is one original; otherwise `originals` holds original0, original1, ...
  Tensor original;
  std::vector<Tensor> originals;
  bool unsafe = false;

  // The parametrized value computed from the originals now (a new tensor; with a graph in grad mode).
  Tensor forward();
  // Sets the originals so that forward() gives `value` (through each right_inverse, last first):
  // PyTorch's `module.weight = value`. Refreshes module->weight.
  void right_inverse(const Tensor& value);
  size_t size() const { return chain_.size(); }
  const Parametrization& operator[](size_t i) const;

  ~ParametrizationListImpl() override;

  // Internal (used by register/remove): `owner` names the module in messages.
  ParametrizationListImpl(std::string owner, std::string tensor_name, Tensor value, bool is_buffer,
                          Parametrization first, bool unsafe);
  void append(Parametrization p, bool unsafe);
  // Recomputes the parametrized tensor (module->weight) when stale; `force` recomputes anyway.
  void refresh(bool force = false);
  const Tensor& value() const { return value_; }
  bool original_is_buffer() const { return is_buffer_; }

 private:
  struct Snapshot;
  // Makes value_ hold y (in place) with y's history, and records what it was computed from.
  void install(const Tensor& y);
  bool stale() const;
  std::string where() const;
  std::vector<Parametrization> chain_;
  std::string owner_, tensor_name_;
  Tensor value_;  // the module's tensor (its member shares this TensorImpl)
  bool is_buffer_ = false;
  bool requires_grad_ = false;
  std::unique_ptr<Snapshot> snapshot_;
  uint64_t cached_epoch_ = 0;
  // Recursive, with refreshing_, so that a parametrization reading its own module through a
  // holder (which refreshes) sees the value being replaced instead of deadlocking.
  std::recursive_mutex mutex_;
  bool refreshing_ = false;
};

// Parametrizes module.tensor_name (a parameter or buffer) by `parametrization`; a second call on
// the same name chains it after the first. Without `unsafe`, the parametrization may not change
// the tensor's shape or dtype (checked once, at registration).
template <class M, class P>
void register_parametrization(M&& module, const std::string& tensor_name, P&& parametrization,
                              bool unsafe = false) {
  detail::register_parametrization(ember::detail::module_of(module), tensor_name,
                                   detail::make_parametrization(std::forward<P>(parametrization)), unsafe);
}

// Whether module has a parametrization (on tensor_name when given).
bool is_parametrized(const Module& module, const std::optional<std::string>& tensor_name = std::nullopt);
template <class M>
  requires(!std::is_base_of_v<Module, std::remove_cvref_t<M>>)
bool is_parametrized(M&& module, const std::optional<std::string>& tensor_name = std::nullopt) {
  return is_parametrized(ember::detail::module_of(module), tensor_name);
}

// Removes the chain on tensor_name: the module's tensor becomes a parameter (or buffer) again,
// holding the parametrized value (leave_parametrized) or the original (which needs one original).
// module->weight keeps its TensorImpl; `original` is dropped, so an optimizer must be given the
// module's parameters again.
void remove_parametrizations(Module& module, const std::string& tensor_name, bool leave_parametrized = true);
template <class M>
  requires(!std::is_base_of_v<Module, std::remove_cvref_t<M>>)
void remove_parametrizations(M&& module, const std::string& tensor_name, bool leave_parametrized = true) {
  remove_parametrizations(ember::detail::module_of(module), tensor_name, leave_parametrized);
}

// Within this scope (on this thread) a parametrized tensor is computed at most once, even if its
// originals change: PyTorch's `with parametrize.cached():`. Nestable.
class cached {
 public:
  cached();
  ~cached();
  cached(const cached&) = delete;
  cached& operator=(const cached&) = delete;
};

}  // namespace ember::nn::utils::parametrize
