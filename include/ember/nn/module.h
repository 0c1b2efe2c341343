// nn::Module: the base of every layer and model, as libtorch's torch::nn::Module. A module owns
// named parameters, buffers and child modules; the recursive accessors walk the tree in
// registration order (pre-order), naming entries "child.grandchild.weight".
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/ordered_dict.h"
#include "ember/tensor.h"

namespace ember::serialize {
class OutputArchive;
class InputArchive;
}  // namespace ember::serialize

namespace ember::nn {

template <class Contained>
class ModuleHolder;
class Module;
namespace utils::parametrize {
class ParametrizationListImpl;
}

// module->parametrizations["weight"]: the module's parametrized tensors, each with its
// ParametrizationList (original tensors and the chain; ember/nn/utils/parametrize.h). Empty until
// register_parametrization; it is the module's child "parametrizations", as PyTorch's ModuleDict.
class ParametrizationDict {
 public:
  // Raises ember::Error when `tensor_name` is not parametrized.
  std::shared_ptr<utils::parametrize::ParametrizationListImpl> operator[](const std::string& tensor_name) const;
  bool contains(const std::string& tensor_name) const;
  bool is_empty() const { return dict_ == nullptr; }
  std::vector<std::string> keys() const;

 private:
  friend struct ParametrizationAccess;
  std::shared_ptr<Module> dict_;  // the "parametrizations" child, its children the lists
  // The classic hooks (nn::utils::weight_norm, spectral_norm): lists outside the module tree,
  // whose tensors the module holds under the classic names (weight_g, weight_orig, ...).
  std::vector<std::pair<std::string, std::shared_ptr<utils::parametrize::ParametrizationListImpl>>> hooks_;
};

namespace detail {
// The demangled name of a type, for messages and Module::name() ("ember::Tensor", "Net").
std::string demangle(const char* mangled);

// How many tensors of the process are parametrized: the holders' refresh (below) costs one load
// when none is.
extern std::atomic<int64_t> live_parametrizations;
void refresh_parametrizations_slow(const Module& module);
// Brings the parametrized tensors of `module` and its descendants up to date with their originals
// (ModuleHolder's -> and () call it).
inline void refresh_parametrizations(const Module& module) {
  if (live_parametrizations.load(std::memory_order_relaxed) != 0) refresh_parametrizations_slow(module);
}
}  // namespace detail

class Module : public std::enable_shared_from_this<Module> {
 public:
  using ModuleApplyFunction = std::function<void(Module&)>;
  using ConstModuleApplyFunction = std::function<void(const Module&)>;
  using NamedModuleApplyFunction = std::function<void(const std::string&, Module&)>;
  using ConstNamedModuleApplyFunction = std::function<void(const std::string&, const Module&)>;
  using ModulePointerApplyFunction = std::function<void(const std::shared_ptr<Module>&)>;

  explicit Module(std::string name);
  Module();
  Module(const Module&) = default;
  Module& operator=(const Module&) = default;
  virtual ~Module() = default;

  // The class name, demangled ("Net", "ember::nn::LinearImpl") unless given to the constructor.
  const std::string& name() const noexcept;

  // Calls fn on this module, then on every descendant (pre-order).
  void apply(const ModuleApplyFunction& fn);
  void apply(const ConstModuleApplyFunction& fn) const;
  void apply(const NamedModuleApplyFunction& fn, const std::string& name_prefix = std::string());
  void apply(const ConstNamedModuleApplyFunction& fn, const std::string& name_prefix = std::string()) const;
  void apply(const ModulePointerApplyFunction& fn) const;

  std::vector<Tensor> parameters(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  // Including this module needs it to be held by a shared_ptr (std::make_shared<Net>()).
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true) const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(const std::string& name_prefix = std::string(),
                                                                  bool include_self = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;

  // Training mode for this module and all descendants (dropout, batch norm read it).
  virtual void train(bool on = true);
  void eval() { train(false); }
  virtual bool is_training() const noexcept { return is_training_; }

  // Casts floating-point parameters and buffers (as PyTorch's Module.to; integer buffers such as
  // num_batches_tracked keep their dtype), in place: tensors held elsewhere see the change.
  virtual void to(ScalarType dtype, bool non_blocking = false);
  // libtorch's device forms: the CPU is the only device (another raises ember::Error).
  virtual void to(Device device, bool non_blocking = false);
  virtual void to(Device device, ScalarType dtype, bool non_blocking = false);
  // Lays out 4-D parameters and buffers (conv weights) in `format`.
  virtual void to(MemoryFormat format);
  // Clears the gradients of all parameters (or zeroes them when !set_to_none).
  virtual void zero_grad(bool set_to_none = true);

  // The module as its derived type, or nullptr.
  template <class ModuleType>
  typename ModuleType::ContainedType* as() noexcept {
    return as<typename ModuleType::ContainedType>();
  }
  template <class ModuleType, std::enable_if_t<std::is_base_of_v<Module, ModuleType>, int> = 0>
  ModuleType* as() noexcept {
    return dynamic_cast<ModuleType*>(this);
  }
  template <class ModuleType>
  const typename ModuleType::ContainedType* as() const noexcept {
    return as<typename ModuleType::ContainedType>();
  }
  template <class ModuleType, std::enable_if_t<std::is_base_of_v<Module, ModuleType>, int> = 0>
  const ModuleType* as() const noexcept {
    return dynamic_cast<const ModuleType*>(this);
  }

  // One line describing this module (no children); operator<< prints the whole tree.
  virtual void pretty_print(std::ostream& stream) const;
  virtual bool is_serializable() const { return true; }
  // As libtorch's: parameters, buffers, then one nested archive per serializable child (so the
  // archive holds the state_dict's names). load reads into the existing tensors, which keep their
  // identity; a name missing from the archive or a shape that differs raises ember::Error.
  virtual void save(serialize::OutputArchive& archive) const;
  virtual void load(serialize::InputArchive& archive);

  // Adds a parameter (requires_grad set as asked) and returns the stored tensor. An undefined
  // tensor is allowed (an absent bias) and is skipped by parameters().
  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  Tensor& register_buffer(std::string name, Tensor tensor);
  template <class ModuleType>
  std::shared_ptr<ModuleType> register_module(std::string name, std::shared_ptr<ModuleType> module) {
    check_child(name, module.get());
    children_.insert(std::move(name), std::static_pointer_cast<Module>(module));
    return module;
  }
  // Given a holder (nn::Linear(3, 4)), returns it.
  template <class Holder, class Contained = typename Holder::ContainedType,
            std::enable_if_t<std::is_base_of_v<ModuleHolder<Contained>, Holder>, int> = 0>
  Holder register_module(std::string name, Holder holder) {
    register_module(std::move(name), holder.ptr());
    return holder;
  }
  template <class ModuleType>
  std::shared_ptr<ModuleType> replace_module(const std::string& name, std::shared_ptr<ModuleType> module) {
    check_child(name, module.get(), /*replace=*/true);
    children_[name] = std::static_pointer_cast<Module>(module);
    return module;
  }
  template <class Holder, class Contained = typename Holder::ContainedType,
            std::enable_if_t<std::is_base_of_v<ModuleHolder<Contained>, Holder>, int> = 0>
  Holder replace_module(const std::string& name, Holder holder) {
    replace_module(name, holder.ptr());
    return holder;
  }
  void unregister_module(const std::string& name);

  void pretty_print_recursive(std::ostream& stream, const std::string& indentation) const;

  // The parametrized tensors (register_parametrization): module->parametrizations["weight"]->original.
  ParametrizationDict parametrizations;

 protected:
  OrderedDict<std::string, Tensor> parameters_{"Parameter"};
  OrderedDict<std::string, Tensor> buffers_{"Buffer"};
  OrderedDict<std::string, std::shared_ptr<Module>> children_{"Submodule"};

 private:
  friend struct ParametrizationAccess;
  void check_child(const std::string& name, const Module* module, bool replace = false) const;
  void apply_to_tensors(const std::function<Tensor(const Tensor&)>& fn);
  mutable std::optional<std::string> name_;
  bool is_training_ = true;
};

std::ostream& operator<<(std::ostream& stream, const Module& module);

// Replaces a tensor's data (dtype, sizes, strides, storage) by new_data's, keeping the tensor's
// identity (its autograd state and every handle to it): libtorch's Tensor::set_data.
void set_data(const Tensor& self, const Tensor& new_data);

}  // namespace ember::nn
