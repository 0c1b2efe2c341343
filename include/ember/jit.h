// Running TorchScript archives written by PyTorch's torch.jit.save (traced or scripted models) with
// Ember's ops, under libtorch's names: torch::jit::load, torch::jit::Module, torch::jit::IValue.
// The archive's code is interpreted (src/jit): see docs/jit.md for the subset that runs.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/dtype.h"
#include "ember/tensor.h"

namespace ember::jit {

class IValue;
struct Object;
class Module;

namespace ivalue {
struct Tuple;
}  // namespace ivalue

// Lists and dicts are shared and mutable (TorchScript's reference semantics), as in libtorch.
struct ListData;
struct DictData;

// One entry of a generic dict, spelled as c10::Dict's iterator entries are (key(), value()).
class DictEntry {
 public:
  const IValue& key() const;
  const IValue& value() const;

 private:
  friend struct DictData;
  friend class GenericDict;
  DictEntry() = default;
  std::shared_ptr<const std::pair<IValue, IValue>> kv_;
};

// A dict with IValue keys (strings, ints, floats, bools, tensors by identity) in insertion order.
class GenericDict {
 public:
  GenericDict();
  size_t size() const;
  bool contains(const IValue& key) const;
  const IValue& at(const IValue& key) const;  // throws ember::Error if absent
  void insert_or_assign(IValue key, IValue value);
  std::vector<DictEntry> entries() const;  // a snapshot, in insertion order

  // Range-for over the entries in insertion order, as over a c10::Dict (`for (const auto& kv :
  // dict)`, kv.key(), kv.value()). Inserting a new key while iterating invalidates nothing already
  // visited; the loop sees entries up to the size at each step.
  class iterator {
   public:
    const DictEntry& operator*() const;
    const DictEntry* operator->() const { return &**this; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const iterator& o) const { return i_ == o.i_; }
    bool operator!=(const iterator& o) const { return i_ != o.i_; }

   private:
    friend class GenericDict;
    iterator(const DictData* d, size_t i) : d_(d), i_(i) {}
    const DictData* d_;
    size_t i_;
    mutable DictEntry entry_;
  };
  iterator begin() const { return {d_.get(), 0}; }
  iterator end() const { return {d_.get(), size()}; }

 private:
  friend class IValue;
  explicit GenericDict(std::shared_ptr<DictData> d) : d_(std::move(d)) {}
  std::shared_ptr<DictData> d_;
};

// The qualified name of a function or method value (a TorchScript function assigned to a local).
struct FunctionRef {
  std::string qualified_name;
};

class IValue {
 public:
  enum class Tag { None, Tensor, Double, Int, Bool, String, Tuple, List, GenericDict, Object, Function };

  IValue() = default;  // None
  IValue(std::nullopt_t) {}  // NOLINT
  IValue(Tensor t) : tag_(Tag::Tensor), tensor_(std::move(t)) {}  // NOLINT
  IValue(double d) : tag_(Tag::Double) { n_.d = d; }  // NOLINT
  IValue(int64_t i) : tag_(Tag::Int) { n_.i = i; }  // NOLINT
  IValue(int i) : tag_(Tag::Int) { n_.i = i; }  // NOLINT
  IValue(bool b) : tag_(Tag::Bool) { n_.b = b; }  // NOLINT
  IValue(std::string s) : tag_(Tag::String), ptr_(std::make_shared<std::string>(std::move(s))) {}  // NOLINT
  IValue(const char* s) : IValue(std::string(s)) {}  // NOLINT
  IValue(std::shared_ptr<ivalue::Tuple> t) : tag_(Tag::Tuple), ptr_(std::move(t)) {}  // NOLINT
  IValue(std::vector<IValue> list);  // NOLINT: a generic list
  IValue(const std::vector<Tensor>& list);  // NOLINT: a list of tensors
  IValue(const std::vector<int64_t>& list);  // NOLINT: a list of ints
  // (a template, so that a braced list never picks it over the vectors)
  template <class T>
    requires std::is_same_v<T, IntArrayRef>
  IValue(const T& list) : IValue(list.vec()) {}  // NOLINT: a list of ints (x.sizes())
  IValue(GenericDict d) : tag_(Tag::GenericDict), ptr_(std::move(d.d_)) {}  // NOLINT
  IValue(std::shared_ptr<Object> o) : tag_(Tag::Object), ptr_(std::move(o)) {}  // NOLINT
  IValue(FunctionRef f) : tag_(Tag::Function), ptr_(std::make_shared<FunctionRef>(std::move(f))) {}  // NOLINT
  // A tuple (libtorch's IValue(std::tuple<...>)) and an optional (None when empty).
  template <class... T>
  IValue(const std::tuple<T...>& t)  // NOLINT
      : IValue(std::apply([](const auto&... e) { return tuple(e...); }, t)) {}
  template <class T>
  IValue(const std::optional<T>& v) : IValue(v ? IValue(*v) : IValue()) {}  // NOLINT
  template <class... T>
  static IValue tuple(T&&... elems) {
    return IValue(std::make_shared<ivalue::Tuple>(std::vector<IValue>{IValue(std::forward<T>(elems))...}));
  }

  Tag tag() const { return tag_; }
  const char* tag_name() const;
  bool isNone() const { return tag() == Tag::None; }
  bool isTensor() const { return tag() == Tag::Tensor; }
  bool isDouble() const { return tag() == Tag::Double; }
  bool isInt() const { return tag() == Tag::Int; }
  bool isBool() const { return tag() == Tag::Bool; }
  bool isString() const { return tag() == Tag::String; }
  bool isTuple() const { return tag() == Tag::Tuple; }
  bool isList() const { return tag() == Tag::List; }
  bool isTensorList() const;  // a list whose elements are all tensors
  bool isIntList() const;
  bool isGenericDict() const { return tag() == Tag::GenericDict; }
  bool isObject() const { return tag() == Tag::Object; }
  bool isModule() const { return isObject(); }
  bool isScalar() const { return isDouble() || isInt() || isBool(); }

  // Each throws ember::Error naming the expected and the actual kind.
  const Tensor& toTensor() const&;
  Tensor toTensor() &&;
  double toDouble() const;  // also from an int, as libtorch's toScalar().toDouble()
  int64_t toInt() const;
  bool toBool() const;
  const std::string& toStringRef() const;
  std::string toString() const { return toStringRef(); }
  std::shared_ptr<ivalue::Tuple> toTuple() const;
  std::vector<IValue> toList() const;
  std::vector<IValue> toListRef() const { return toList(); }  // a copy here, for libtorch's spelling
  std::vector<Tensor> toTensorList() const;
  std::vector<Tensor> toTensorVector() const { return toTensorList(); }
  std::vector<int64_t> toIntList() const;
  std::vector<int64_t> toIntVector() const { return toIntList(); }
  std::vector<double> toDoubleList() const;
  GenericDict toGenericDict() const;
  std::shared_ptr<Object> toObject() const;
  Module toModule() const;  // an object (a submodule's attribute), as a Module sharing it
  Object& toObjectRef() const;
  const FunctionRef& toFunction() const;
  Scalar toScalar() const;
  // libtorch's generic forms: the value as T (a tensor, number, bool, string, tuple, vector or
  // optional of those), or nullopt for None.
  template <class T>
  T to() const;
  template <class T>
  std::optional<T> toOptional() const {
    if (isNone()) return std::nullopt;
    return to<T>();
  }

  // The list's shared storage (the interpreter appends to it in place).
  std::shared_ptr<ListData> list_data() const;
  // Same object (tensors: same TensorImpl; lists, dicts, objects: same container) or equal
  // immutable values: TorchScript's `is`.
  bool is(const IValue& other) const;

 private:
  // A tag and plain members rather than a std::variant: copying, moving and destroying the
  // interpreter's values (mostly tensors) then costs two null checks, not a visit.
  Tag tag_ = Tag::None;
  union {
    double d;
    int64_t i;
    bool b;
  } n_{};
  Tensor tensor_;
  std::shared_ptr<void> ptr_;  // String, Tuple, List, GenericDict, Object, Function
};

std::ostream& operator<<(std::ostream& os, const IValue& v);

namespace ivalue {
// libtorch's c10::ivalue::Tuple: immutable, shared by the IValues that hold it.
struct Tuple {
  explicit Tuple(std::vector<IValue> elems);
  const std::vector<IValue>& elements() const { return elements_; }
  size_t size() const { return elements_.size(); }

 private:
  std::vector<IValue> elements_;
};

// IValue::to's tests of T
template <class T>
struct is_std_tuple : std::false_type {};
template <class... T>
struct is_std_tuple<std::tuple<T...>> : std::true_type {};
template <class T>
struct is_std_vector : std::false_type {};
template <class T>
struct is_std_vector<std::vector<T>> : std::true_type {};
template <class T>
struct is_std_optional : std::false_type {};
template <class T>
struct is_std_optional<std::optional<T>> : std::true_type {};
[[noreturn]] void tuple_size_mismatch(size_t expected, size_t actual);
}  // namespace ivalue

template <class T>
T IValue::to() const {
  if constexpr (std::is_same_v<T, IValue>) {
    return *this;
  } else if constexpr (std::is_same_v<T, Tensor>) {
    return toTensor();
  } else if constexpr (std::is_same_v<T, bool>) {
    return toBool();
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(toInt());
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(toDouble());
  } else if constexpr (std::is_same_v<T, std::string>) {
    return toStringRef();
  } else if constexpr (std::is_same_v<T, Scalar>) {
    return toScalar();
  } else if constexpr (ivalue::is_std_optional<T>::value) {
    return toOptional<typename T::value_type>();
  } else if constexpr (ivalue::is_std_vector<T>::value) {
    T out;
    for (const IValue& v : toList()) out.push_back(v.to<typename T::value_type>());
    return out;
  } else {
    static_assert(ivalue::is_std_tuple<T>::value, "IValue::to<T>: unsupported T");
    const auto t = toTuple();
    constexpr size_t n = std::tuple_size_v<T>;
    if (t->size() != n) ivalue::tuple_size_mismatch(n, t->size());
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return T{t->elements()[I].template to<std::tuple_element_t<I, T>>()...};
    }
    (std::make_index_sequence<n>{});
  }
}

struct ListData {
  std::vector<IValue> items;
};

// c10::QualifiedName: a dotted name such as "__torch__.torch.nn.modules.conv.Conv2d".
class QualifiedName {
 public:
  explicit QualifiedName(std::string qualified) : qualified_(std::move(qualified)) {}
  const std::string& qualifiedName() const { return qualified_; }
  std::string name() const { return qualified_.substr(qualified_.rfind('.') + 1); }  // "Conv2d"
  std::string prefix() const {
    const size_t dot = qualified_.rfind('.');
    return dot == std::string::npos ? std::string() : qualified_.substr(0, dot);
  }

 private:
  std::string qualified_;
};

// What Module::type() returns: the module's TorchScript class, by name (libtorch's ClassType).
class ModuleClassType {
 public:
  explicit ModuleClassType(std::string qualified) : name_(std::move(qualified)) {}
  std::optional<QualifiedName> name() const { return name_; }
  std::string str() const { return name_.qualifiedName(); }

 private:
  QualifiedName name_;
};

// libtorch's slot-list items: `.name` and `.value`.
struct NamedTensor {
  std::string name;
  Tensor value;
};
struct NamedModule;

// A method bound to its module: callable with the inputs after `self`.
class Method {
 public:
  IValue operator()(std::vector<IValue> inputs) const;
  const std::string& name() const { return name_; }

 private:
  friend class Module;
  Method(std::shared_ptr<Object> self, std::string name) : self_(std::move(self)), name_(std::move(name)) {}
  std::shared_ptr<Object> self_;
  std::string name_;
};

// Files stored beside a module in its archive (<archive>/extra/<name>), as libtorch's.
using ExtraFilesMap = std::unordered_map<std::string, std::string>;

// A loaded TorchScript module (libtorch's torch::jit::script::Module). Copies share the module,
// as in libtorch.
class Module {
 public:
  Module() = default;
  explicit Module(std::shared_ptr<Object> obj) : obj_(std::move(obj)) {}

  IValue forward(std::vector<IValue> inputs) const { return get_method("forward")(std::move(inputs)); }
  Method get_method(const std::string& name) const;
  bool has_method(const std::string& name) const;
  template <class... Args>
  IValue run_method(const std::string& name, Args&&... args) const {
    return get_method(name)(std::vector<IValue>{IValue(std::forward<Args>(args))...});
  }

  // Writes the module as a TorchScript archive that torch::jit::load (Ember's, libtorch's,
  // PyTorch's) reads: the loaded archive's code and constants, the current attributes (trained
  // parameters, buffers, `training`), and `extra_files` under extra/.
  void save(std::ostream& out, const ExtraFilesMap& extra_files = ExtraFilesMap()) const;
  void save(const std::string& filename, const ExtraFilesMap& extra_files = ExtraFilesMap()) const;

  // Sets `training` on this module and every submodule.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const;
  // Casts the floating-point parameters and buffers (libtorch's Module::to(dtype)).
  void to(ScalarType dtype, bool non_blocking = false);
  // libtorch's device forms: the CPU is the only device (another raises ember::Error).
  void to(Device device, bool non_blocking = false);
  void to(Device device, ScalarType dtype, bool non_blocking = false);

  std::vector<NamedTensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> parameters(bool recurse = true) const;
  std::vector<NamedTensor> named_buffers(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  std::vector<NamedModule> named_children() const;
  std::vector<Module> children() const;

  IValue attr(const std::string& name) const;  // throws ember::Error if absent
  IValue attr(const std::string& name, IValue or_else) const;
  bool hasattr(const std::string& name) const;
  void setattr(const std::string& name, IValue v);
  // Adds (or replaces) an attribute and lists it in the module's class as a parameter or buffer,
  // or as a submodule, as libtorch's (the class is shared by the modules of one archive).
  void register_parameter(const std::string& name, Tensor v, bool is_buffer);
  void register_buffer(const std::string& name, Tensor v) { register_parameter(name, std::move(v), true); }
  void register_module(const std::string& name, const Module& module);
  // The qualified name of the module's TorchScript class (`__torch__.MLP`).
  const std::string& type_name() const;
  std::shared_ptr<const ModuleClassType> type() const { return std::make_shared<ModuleClassType>(type_name()); }

  const std::shared_ptr<Object>& _ivalue() const { return obj_; }

 private:
  std::shared_ptr<Object> obj_;
};

struct NamedModule {
  std::string name;
  Module value;
};

// torch.jit.load: reads a TorchScript archive (a zip written by torch.jit.save / Module::save).
// Every part of the file is validated; anything malformed or outside what Ember runs is an
// ember::Error naming it.
Module load(const std::string& path);
Module load(std::istream& in);

// libtorch's passes that prepare a module for inference. Ember interprets the module's code as
// written, so both return the module itself; freeze requires eval mode, as libtorch's does.
Module freeze(const Module& module);
Module optimize_for_inference(Module& module);

// A value in the format of Python's torch.save (a zip archive: data.pkl and one entry per
// storage), as libtorch's pickle_save / pickle_load: None, bools, ints, floats, strings, tensors,
// tuples, lists and dicts. pickle_load reads files torch.save wrote (state dicts, dicts and lists of
// tensors and numbers; tensors sharing a storage stay shared) through the restricted unpickler, which
// never runs code from the data; anything else raises ember::Error.
std::vector<char> pickle_save(const IValue& value);
IValue pickle_load(const std::vector<char>& data);

// libtorch's operator registry as TorchScript code sees it (torch/csrc/jit/runtime/operator.h):
// getAllOperators() lists the builtins Ember's interpreter runs (the table of src/jit/builtins.cpp),
// one Operator per overload, each with its schema's qualified name ("aten::add"), namespace and
// arguments (name, type as the schema spells it, default, keyword-only). Ember's table does not
// carry PyTorch's overload names or return types: overload_name() is empty and returns() lists
// none, and a schema prints without its "-> ..." part.
class SchemaType {
 public:
  explicit SchemaType(std::string name) : name_(std::move(name)) {}
  const std::string& str() const { return name_; }
  const std::string& annotation_str() const { return name_; }
  const std::string& repr_str() const { return name_; }

 private:
  std::string name_;
};
using TypePtr = std::shared_ptr<const SchemaType>;

class Argument {
 public:
  Argument(std::string name, TypePtr type, std::optional<IValue> default_value, bool kwarg_only);
  const std::string& name() const { return name_; }
  const TypePtr& type() const { return type_; }
  const std::optional<IValue>& default_value() const { return default_value_; }
  bool kwarg_only() const { return kwarg_only_; }
  std::optional<int32_t> N() const { return std::nullopt; }
  bool is_out() const { return false; }

 private:
  std::string name_;
  TypePtr type_;
  std::optional<IValue> default_value_;
  bool kwarg_only_;
};

class FunctionSchema {
 public:
  // `text`: the arguments as the schema writes them ("Tensor self, *, Scalar alpha=1")
  FunctionSchema(std::string name, std::vector<Argument> arguments, bool vararg, std::string text);
  const std::string& name() const { return name_; }
  const std::string& overload_name() const { return overload_name_; }
  // "aten" of "aten::add"; nullopt for a name without one
  std::optional<std::string> getNamespace() const;
  const std::vector<Argument>& arguments() const { return arguments_; }
  const std::vector<Argument>& returns() const { return returns_; }
  bool is_vararg() const { return vararg_; }
  bool is_varret() const { return false; }

 private:
  friend std::ostream& operator<<(std::ostream& os, const FunctionSchema& schema);
  std::string name_, overload_name_;
  std::vector<Argument> arguments_, returns_;
  bool vararg_;
  std::string text_;
};
// "aten::add(Tensor self, Tensor other, *, Scalar alpha=1)"
std::ostream& operator<<(std::ostream& os, const FunctionSchema& schema);

class Operator {
 public:
  explicit Operator(FunctionSchema schema) : schema_(std::move(schema)) {}
  const FunctionSchema& schema() const { return schema_; }

 private:
  FunctionSchema schema_;
};
std::vector<std::shared_ptr<Operator>> getAllOperators();

// c10::Symbol: an operator's qualified name ("aten::relu"), as getAllOperatorsFor takes it.
class Symbol {
 public:
  // ember::Error for a name without a namespace ("relu")
  static Symbol fromQualString(const std::string& qual);
  static Symbol aten(const std::string& name) { return Symbol("aten::" + name); }
  static Symbol prim(const std::string& name) { return Symbol("prim::" + name); }
  const std::string& toQualString() const { return qual_; }
  std::string toUnqualString() const { return qual_.substr(qual_.find("::") + 2); }
  std::string ns() const { return qual_.substr(0, qual_.find("::")); }
  bool operator==(const Symbol& o) const { return qual_ == o.qual_; }

 private:
  explicit Symbol(std::string qual) : qual_(std::move(qual)) {}
  std::string qual_;
};
// The overloads of one operator, in the table's order; empty if Ember has none of that name.
std::vector<std::shared_ptr<Operator>> getAllOperatorsFor(Symbol name);

namespace script {
using Module = ::ember::jit::Module;
using Method = ::ember::jit::Method;
}  // namespace script

}  // namespace ember::jit

namespace ember {
// c10::IValue, at::IValue and torch::IValue are spelled as well as torch::jit::IValue.
using jit::IValue;
using jit::pickle_load;  // torch::pickle_load, as libtorch's torch/serialize.h
using jit::pickle_save;
}  // namespace ember
