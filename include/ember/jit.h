// Running TorchScript archives written by PyTorch's torch.jit.save (traced or scripted models) with
// Ember's ops, under libtorch's names: torch::jit::load, torch::jit::Module, torch::jit::IValue.
// The archive's code is interpreted (src/jit): see docs/jit.md for the subset that runs.
#pragma once
#include <atomic>
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
template <class T>
class List;
template <class K, class V>
class Dict;
class SchemaType;

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
  template <class T>
  IValue(const List<T>& list);  // NOLINT: shares the list, as libtorch's
  template <class K, class V>
  IValue(const Dict<K, V>& dict);  // NOLINT: shares the dict
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
  // libtorch's name of the kind: "Tensor", "Double", "Int", "GenericList", ...
  std::string tagKind() const {
    static const char* const kKinds[] = {"None",  "Tensor",      "Double",      "Int",    "Bool",    "String",
                                         "Tuple", "GenericList", "GenericDict", "Object", "Function"};
    return kKinds[static_cast<int>(tag_)];
  }
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
  // Lists as libtorch returns them: c10::List<T> shares the list (a change made through it is
  // seen by every holder), toListRef() is a view of its elements, the *Vector forms copies. An
  // element of another kind raises ember::Error; the int forms also take a tuple of ints.
  List<IValue> toList() const;
  const std::vector<IValue>& toListRef() const;
  List<Tensor> toTensorList() const;
  std::vector<Tensor> toTensorVector() const;
  List<int64_t> toIntList() const;
  std::vector<int64_t> toIntVector() const;
  List<double> toDoubleList() const;
  std::vector<double> toDoubleVector() const;
  List<bool> toBoolList() const;
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
  // libtorch's factories: Tuple::create({a, b}) or Tuple::create(a, b)
  static std::shared_ptr<Tuple> create(std::vector<IValue> elems) { return std::make_shared<Tuple>(std::move(elems)); }
  template <class... Args>
  static std::shared_ptr<Tuple> create(Args&&... elems) {
    return std::make_shared<Tuple>(std::vector<IValue>{IValue(std::forward<Args>(elems))...});
  }
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
template <class T>
struct is_c10_list : std::false_type {};
template <class T>
struct is_c10_list<List<T>> : std::true_type {};
template <class T>
struct is_c10_dict : std::false_type {};
template <class K, class V>
struct is_c10_dict<Dict<K, V>> : std::true_type {};
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
  } else if constexpr (ivalue::is_c10_list<T>::value) {
    return T(list_data());
  } else if constexpr (ivalue::is_c10_dict<T>::value) {
    return T(toGenericDict());
  } else if constexpr (ivalue::is_std_vector<T>::value) {
    T out;
    for (const IValue& v : toListRef()) out.push_back(v.to<typename T::value_type>());
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

// c10::List<T>: a list shared by its copies (TorchScript's reference semantics: a change made
// through one is seen by all, and by the IValue it came from), its elements held as IValues.
// Reads return elements by value (`list[i]`, `get(i)`, range-for); `set`, `push_back`, ... write
// (const, as libtorch's: they change the shared list, not the handle). `vec()` copies it out; an
// Ember addition: it also converts to std::vector<T>. List<IValue> is c10::impl::GenericList.
template <class T>
class List {
 public:
  using value_type = T;
  using size_type = size_t;
  class iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = T;
    iterator() = default;
    T operator*() const { return (*items_)[i_].template to<T>(); }
    T operator[](difference_type k) const { return (*items_)[i_ + k].template to<T>(); }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++i_;
      return old;
    }
    iterator& operator--() {
      --i_;
      return *this;
    }
    iterator& operator+=(difference_type k) {
      i_ += k;
      return *this;
    }
    iterator operator+(difference_type k) const { return iterator(items_, i_ + k); }
    iterator operator-(difference_type k) const { return iterator(items_, i_ - k); }
    difference_type operator-(const iterator& o) const { return static_cast<difference_type>(i_) - o.i_; }
    bool operator==(const iterator& o) const { return i_ == o.i_; }
    bool operator!=(const iterator& o) const { return i_ != o.i_; }
    bool operator<(const iterator& o) const { return i_ < o.i_; }

   private:
    friend class List;
    iterator(const std::vector<IValue>* items, size_t i) : items_(items), i_(i) {}
    const std::vector<IValue>* items_ = nullptr;
    size_t i_ = 0;
  };
  using const_iterator = iterator;

  List() : d_(std::make_shared<ListData>()) {}
  List(std::initializer_list<T> values) : List() {
    for (const T& v : values) d_->items.emplace_back(v);
  }
  explicit List(const std::vector<T>& values) : List() {
    for (const T& v : values) d_->items.emplace_back(v);
  }
  // GenericList(elementType), as libtorch's: the type is not kept here
  template <class U = T>
    requires std::is_same_v<U, IValue>
  explicit List(const std::shared_ptr<const SchemaType>&) : List() {}
  // (a view of an IValue's list: toList(), to<c10::List<T>>())
  explicit List(std::shared_ptr<ListData> d) : d_(std::move(d)) {}

  size_t size() const { return d_->items.size(); }
  bool empty() const { return d_->items.empty(); }
  void reserve(size_t n) const { d_->items.reserve(n); }
  void clear() const { d_->items.clear(); }
  T get(size_t i) const { return slot(i).template to<T>(); }
  T operator[](size_t i) const { return get(i); }
  // moves the element out (the list keeps a None in its place)
  T extract(size_t i) const {
    T v = get(i);
    slot(i) = IValue();
    return v;
  }
  void set(size_t i, T value) const { slot(i) = IValue(std::move(value)); }
  void push_back(T value) const { d_->items.emplace_back(std::move(value)); }
  template <class... Args>
  void emplace_back(Args&&... args) const {
    d_->items.emplace_back(T(std::forward<Args>(args)...));
  }
  void append(const List& other) const {
    const std::vector<IValue> tail = other.d_->items;  // (other may be this list)
    d_->items.insert(d_->items.end(), tail.begin(), tail.end());
  }
  void pop_back() const {
    if (empty()) detail::fail("c10::List::pop_back", "the list is empty");
    d_->items.pop_back();
  }
  iterator begin() const { return iterator(&d_->items, 0); }
  iterator end() const { return iterator(&d_->items, size()); }
  std::vector<T> vec() const {
    std::vector<T> out;
    out.reserve(size());
    for (const IValue& v : d_->items) out.push_back(v.template to<T>());
    return out;
  }
  operator std::vector<T>() const { return vec(); }  // NOLINT: Ember's addition
  List copy() const { return List(std::make_shared<ListData>(*d_)); }
  bool is(const List& other) const { return d_ == other.d_; }
  size_t use_count() const { return static_cast<size_t>(d_.use_count()); }
  const std::shared_ptr<ListData>& data() const { return d_; }

 private:
  IValue& slot(size_t i) const {
    if (i >= size()) detail::fail("c10::List", "index ", i, " is out of range for a list of ", size(), " elements");
    return d_->items[i];
  }
  std::shared_ptr<ListData> d_;
};

template <class T>
IValue::IValue(const List<T>& list) : tag_(Tag::List), ptr_(list.data()) {}
// element by element, as libtorch's
template <class T>
bool operator==(const List<T>& a, const List<T>& b) {
  return a.is(b) || a.vec() == b.vec();
}
template <class T>
bool operator!=(const List<T>& a, const List<T>& b) {
  return !(a == b);
}

// c10::Dict<K, V>: a typed view of a shared dict (insertion order, as GenericDict).
template <class K, class V>
class Dict {
 public:
  // An entry, as c10::Dict's iterators give them: key() and value(), typed.
  class Entry {
   public:
    explicit Entry(DictEntry e) : e_(std::move(e)) {}
    K key() const { return e_.key().template to<K>(); }
    V value() const { return e_.value().template to<V>(); }

   private:
    DictEntry e_;
  };
  class iterator {
   public:
    Entry operator*() const { return Entry(*it_); }
    iterator& operator++() {
      ++it_;
      return *this;
    }
    bool operator==(const iterator& o) const { return it_ == o.it_; }
    bool operator!=(const iterator& o) const { return it_ != o.it_; }

   private:
    friend class Dict;
    explicit iterator(GenericDict::iterator it) : it_(std::move(it)) {}
    GenericDict::iterator it_;
  };

  Dict() = default;
  explicit Dict(GenericDict d) : d_(std::move(d)) {}
  size_t size() const { return d_.size(); }
  bool empty() const { return size() == 0; }
  bool contains(const K& key) const { return d_.contains(IValue(key)); }
  V at(const K& key) const { return d_.at(IValue(key)).template to<V>(); }
  // adds the entry if the key is absent (true), else leaves the dict as it is (false)
  bool insert(K key, V value) const {
    if (contains(key)) return false;
    d_.insert_or_assign(IValue(std::move(key)), IValue(std::move(value)));
    return true;
  }
  void insert_or_assign(K key, V value) const { d_.insert_or_assign(IValue(std::move(key)), IValue(std::move(value))); }
  iterator begin() const { return iterator(d_.begin()); }
  iterator end() const { return iterator(d_.end()); }
  const GenericDict& generic() const { return d_; }

 private:
  mutable GenericDict d_;
};

template <class K, class V>
IValue::IValue(const Dict<K, V>& dict) : IValue(dict.generic()) {}

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
struct NamedIValue {
  std::string name;
  IValue value;
};

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

// The interpreter's operand stack, as libtorch names it (custom operators and Method calls pass one)
using Stack = std::vector<IValue>;

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
  std::optional<Method> find_method(const std::string& name) const {
    return has_method(name) ? std::optional<Method>(get_method(name)) : std::nullopt;
  }
  // The methods of the module's class (not its submodules'), by name.
  std::vector<Method> get_methods() const;
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
  // Every attribute (parameters, buffers, submodules, `training`, other values), with recurse
  // those of the submodules too, dotted, each submodule's right after the submodule itself.
  std::vector<NamedIValue> named_attributes(bool recurse = true) const;
  std::vector<IValue> attributes(bool recurse = true) const;
  // A deep copy: its own tensors (cloned, leaves with the originals' requires_grad), lists, dicts
  // and submodules (one shared by two paths stays shared); the code is shared. inplace is
  // accepted for libtorch's signature (its copy shares the class type either way here).
  Module clone(bool inplace = false) const;
  Module deepcopy() const { return clone(); }

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
// device: where libtorch would put the tensors; the CPU is the only one (another raises
// ember::Error). extra_files: each key present in the archive's extra/ gets its contents (the
// others are left as they are), as libtorch's.
Module load(const std::string& path, std::optional<Device> device = std::nullopt);
Module load(const std::string& path, std::optional<Device> device, ExtraFilesMap& extra_files);
Module load(std::istream& in, std::optional<Device> device = std::nullopt);
Module load(std::istream& in, std::optional<Device> device, ExtraFilesMap& extra_files);

// libtorch's passes that prepare a module for inference. Ember interprets the module's code as
// written, so both return the module itself; freeze requires eval mode, as libtorch's does.
Module freeze(const Module& module);
Module optimize_for_inference(Module& module);

// libtorch's switches of its graph executor and fusers, which inference programs turn off to skip
// the profiling runs. Ember interprets a module's code as it is, with no executor to tune: the
// switches are kept and read back, as libtorch's defaults, and change nothing.
enum class FusionBehavior { STATIC, DYNAMIC };
using FusionStrategy = std::vector<std::pair<FusionBehavior, size_t>>;
struct ExecutorSwitches {  // (their storage)
  static std::atomic<bool>& optimize() {
    static std::atomic<bool> on{true};
    return on;
  }
  static std::atomic<bool>& texpr_fuser() {
    static std::atomic<bool> on{true};
    return on;
  }
  static std::atomic<bool>& fuse_on_cpu() {
    static std::atomic<bool> on{true};
    return on;
  }
  static FusionStrategy& fusion_strategy() {
    static FusionStrategy strategy{{FusionBehavior::STATIC, 2}, {FusionBehavior::DYNAMIC, 10}};
    return strategy;
  }
};
inline std::atomic<bool>& getProfilingMode() {
  static std::atomic<bool> on{true};
  return on;
}
inline std::atomic<bool>& getExecutorMode() {
  static std::atomic<bool> on{true};
  return on;
}
inline std::atomic<size_t>& getNumProfiledRuns() {
  static std::atomic<size_t> runs{1};
  return runs;
}
inline void setGraphExecutorOptimize(bool on) { ExecutorSwitches::optimize() = on; }
inline bool getGraphExecutorOptimize() { return ExecutorSwitches::optimize(); }
inline void setTensorExprFuserEnabled(bool on) { ExecutorSwitches::texpr_fuser() = on; }
inline bool tensorExprFuserEnabled() { return ExecutorSwitches::texpr_fuser(); }
inline void overrideCanFuseOnCPU(bool on) { ExecutorSwitches::fuse_on_cpu() = on; }
inline bool canFuseOnCPU() { return ExecutorSwitches::fuse_on_cpu(); }
inline void overrideCanFuseOnGPU(bool) {}
inline bool canFuseOnGPU() { return false; }
inline FusionStrategy getFusionStrategy() { return ExecutorSwitches::fusion_strategy(); }
// returns the strategy it replaces, as libtorch's
inline FusionStrategy setFusionStrategy(FusionStrategy& strategy) {
  FusionStrategy old = ExecutorSwitches::fusion_strategy();
  ExecutorSwitches::fusion_strategy() = strategy;
  return old;
}

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
// c10's singleton types, by the names schemas give them (c10::List<IValue>(c10::AnyType::get())).
#define EMBER_JIT_TYPE(Name, spelling)                                 \
  struct Name {                                                        \
    static TypePtr get() {                                             \
      static const TypePtr type = std::make_shared<SchemaType>(spelling); \
      return type;                                                     \
    }                                                                  \
  };
EMBER_JIT_TYPE(AnyType, "Any")
EMBER_JIT_TYPE(TensorType, "Tensor")
EMBER_JIT_TYPE(IntType, "int")
EMBER_JIT_TYPE(FloatType, "float")
EMBER_JIT_TYPE(BoolType, "bool")
EMBER_JIT_TYPE(StringType, "str")
EMBER_JIT_TYPE(NoneType, "NoneType")
#undef EMBER_JIT_TYPE

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
