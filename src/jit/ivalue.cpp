// IValue: the values TorchScript code computes with, as libtorch's c10::IValue.
#include <ostream>

#include "ember/error.h"
#include "jit/script.h"

namespace ember::jit {

namespace ivalue {
Tuple::Tuple(std::vector<IValue> elems) : elements_(std::move(elems)) {}
}  // namespace ivalue

struct DictData {
  std::vector<std::shared_ptr<const std::pair<IValue, IValue>>> items;

  // Keys compare as Python's: equal numbers and strings, the same tensor.
  static bool same_key(const IValue& a, const IValue& b) {
    if (a.isString() && b.isString()) return a.toStringRef() == b.toStringRef();
    if ((a.isInt() || a.isBool()) && (b.isInt() || b.isBool())) return a.toInt() == b.toInt();
    if (a.isDouble() || b.isDouble()) return a.isScalar() && b.isScalar() && a.toDouble() == b.toDouble();
    return a.is(b);
  }
  const std::pair<IValue, IValue>* find(const IValue& key) const {
    for (const auto& kv : items)
      if (same_key(kv->first, key)) return kv.get();
    return nullptr;
  }
  static DictEntry entry(std::shared_ptr<const std::pair<IValue, IValue>> kv) {
    DictEntry e;
    e.kv_ = std::move(kv);
    return e;
  }
};

const IValue& DictEntry::key() const { return kv_->first; }
const IValue& DictEntry::value() const { return kv_->second; }

GenericDict::GenericDict() : d_(std::make_shared<DictData>()) {}
size_t GenericDict::size() const { return d_->items.size(); }
bool GenericDict::contains(const IValue& key) const { return d_->find(key) != nullptr; }
const IValue& GenericDict::at(const IValue& key) const {
  const auto* kv = d_->find(key);
  if (!kv) {
    std::ostringstream os;
    os << "GenericDict::at: key " << key << " is not in the dict";
    throw Error(os.str());
  }
  return kv->second;
}
void GenericDict::insert_or_assign(IValue key, IValue value) {
  for (auto& kv : d_->items)
    if (DictData::same_key(kv->first, key)) {
      kv = std::make_shared<const std::pair<IValue, IValue>>(kv->first, std::move(value));
      return;
    }
  d_->items.push_back(std::make_shared<const std::pair<IValue, IValue>>(std::move(key), std::move(value)));
}
const DictEntry& GenericDict::iterator::operator*() const {
  entry_ = DictData::entry(d_->items.at(i_));
  return entry_;
}
std::vector<DictEntry> GenericDict::entries() const {
  std::vector<DictEntry> out;
  for (const auto& kv : d_->items) out.push_back(DictData::entry(kv));
  return out;
}

IValue::IValue(std::vector<IValue> list)
    : tag_(Tag::List), ptr_(std::make_shared<ListData>(ListData{std::move(list)})) {}
IValue::IValue(const std::vector<Tensor>& list) : tag_(Tag::List), ptr_(std::make_shared<ListData>()) {
  auto& items = static_cast<ListData*>(ptr_.get())->items;
  for (const Tensor& t : list) items.emplace_back(t);
}
IValue::IValue(const std::vector<int64_t>& list) : tag_(Tag::List), ptr_(std::make_shared<ListData>()) {
  auto& items = static_cast<ListData*>(ptr_.get())->items;
  for (int64_t i : list) items.emplace_back(i);
}

const char* IValue::tag_name() const {
  static const char* kNames[] = {"None", "Tensor", "float", "int", "bool", "str", "Tuple", "List", "Dict", "Object",
                                 "Function"};
  return kNames[static_cast<int>(tag_)];
}

namespace {
[[noreturn]] void wrong_kind(const IValue& v, const char* expected) {
  throw Error(std::string("IValue: expected ") + expected + " but got " + v.tag_name());
}
}  // namespace

bool IValue::isTensorList() const {
  if (!isList()) return false;
  for (const IValue& v : static_cast<const ListData*>(ptr_.get())->items)
    if (!v.isTensor()) return false;
  return true;
}
bool IValue::isIntList() const {
  if (!isList()) return false;
  for (const IValue& v : static_cast<const ListData*>(ptr_.get())->items)
    if (!v.isInt()) return false;
  return true;
}

const Tensor& IValue::toTensor() const& {
  if (!isTensor()) wrong_kind(*this, "Tensor");
  return tensor_;
}
Tensor IValue::toTensor() && {
  if (!isTensor()) wrong_kind(*this, "Tensor");
  return std::move(tensor_);
}
double IValue::toDouble() const {
  if (isDouble()) return n_.d;
  if (isInt()) return static_cast<double>(n_.i);
  if (isBool()) return n_.b ? 1.0 : 0.0;
  wrong_kind(*this, "float");
}
int64_t IValue::toInt() const {
  if (isInt()) return n_.i;
  if (isBool()) return n_.b ? 1 : 0;
  wrong_kind(*this, "int");
}
bool IValue::toBool() const {
  if (!isBool()) wrong_kind(*this, "bool");
  return n_.b;
}
const std::string& IValue::toStringRef() const {
  if (!isString()) wrong_kind(*this, "str");
  return *static_cast<const std::string*>(ptr_.get());
}
std::shared_ptr<ivalue::Tuple> IValue::toTuple() const {
  if (!isTuple()) wrong_kind(*this, "Tuple");
  return std::static_pointer_cast<ivalue::Tuple>(ptr_);
}
void ivalue::tuple_size_mismatch(size_t expected, size_t actual) {
  ::ember::detail::fail("IValue::to", "expected a tuple of ", expected, " elements, got one of ", actual);
}
std::shared_ptr<ListData> IValue::list_data() const {
  if (!isList()) wrong_kind(*this, "List");
  return std::static_pointer_cast<ListData>(ptr_);
}
List<IValue> IValue::toList() const { return List<IValue>(list_data()); }
const std::vector<IValue>& IValue::toListRef() const {
  if (!isList()) wrong_kind(*this, "List");
  return static_cast<const ListData*>(ptr_.get())->items;
}
namespace {
// The list, each element checked with `is` and named `what` when it fails.
template <class T>
List<T> checked_list(const IValue& v, bool (IValue::*is)() const, const char* what) {
  for (const IValue& e : v.toListRef())
    if (!(e.*is)()) wrong_kind(e, what);
  return List<T>(v.list_data());
}
}  // namespace
List<Tensor> IValue::toTensorList() const { return checked_list<Tensor>(*this, &IValue::isTensor, "Tensor (in a list of tensors)"); }
std::vector<Tensor> IValue::toTensorVector() const { return toTensorList().vec(); }
List<int64_t> IValue::toIntList() const {
  if (isTuple()) {
    List<int64_t> out;
    for (const IValue& v : toTuple()->elements()) out.push_back(v.toInt());
    return out;
  }
  return checked_list<int64_t>(*this, &IValue::isInt, "int (in a list of ints)");
}
std::vector<int64_t> IValue::toIntVector() const { return toIntList().vec(); }
List<double> IValue::toDoubleList() const { return List<double>(list_data()); }
std::vector<double> IValue::toDoubleVector() const { return toDoubleList().vec(); }
List<bool> IValue::toBoolList() const { return checked_list<bool>(*this, &IValue::isBool, "bool (in a list of bools)"); }
GenericDict IValue::toGenericDict() const {
  if (!isGenericDict()) wrong_kind(*this, "Dict");
  return GenericDict(std::static_pointer_cast<DictData>(ptr_));
}
std::shared_ptr<Object> IValue::toObject() const {
  if (!isObject()) wrong_kind(*this, "Object");
  return std::static_pointer_cast<Object>(ptr_);
}
Module IValue::toModule() const { return Module(toObject()); }

Object& IValue::toObjectRef() const {
  if (!isObject()) wrong_kind(*this, "Object");
  return *static_cast<Object*>(ptr_.get());
}
const FunctionRef& IValue::toFunction() const {
  if (tag() != Tag::Function) wrong_kind(*this, "Function");
  return *static_cast<const FunctionRef*>(ptr_.get());
}
Scalar IValue::toScalar() const {
  if (isDouble()) return Scalar(n_.d);
  if (isInt()) return Scalar(n_.i);
  if (isBool()) return Scalar(n_.b);
  wrong_kind(*this, "a number");
}

bool IValue::is(const IValue& other) const {
  if (tag() != other.tag()) return false;
  switch (tag()) {
    case Tag::None: return true;
    case Tag::Tensor: return toTensor().unsafeGetTensorImpl() == other.toTensor().unsafeGetTensorImpl();
    case Tag::Double: return toDouble() == other.toDouble();
    case Tag::Int: return toInt() == other.toInt();
    case Tag::Bool: return toBool() == other.toBool();
    case Tag::String: return toStringRef() == other.toStringRef();
    case Tag::Tuple:
    case Tag::List:
    case Tag::GenericDict:
    case Tag::Object: return ptr_ == other.ptr_;
    case Tag::Function: return toFunction().qualified_name == other.toFunction().qualified_name;
  }
  return false;
}

std::ostream& operator<<(std::ostream& os, const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::None: return os << "None";
    case IValue::Tag::Tensor: return os << v.toTensor();
    case IValue::Tag::Double: return os << v.toDouble();
    case IValue::Tag::Int: return os << v.toInt();
    case IValue::Tag::Bool: return os << (v.toBool() ? "True" : "False");
    case IValue::Tag::String: return os << '"' << v.toStringRef() << '"';
    case IValue::Tag::Tuple:
    case IValue::Tag::List: {
      const bool tuple = v.isTuple();
      const std::vector<IValue>& items = tuple ? v.toTuple()->elements() : v.toListRef();
      os << (tuple ? "(" : "[");
      for (size_t i = 0; i < items.size(); ++i) os << (i ? ", " : "") << items[i];
      return os << (tuple ? (items.size() == 1 ? ",)" : ")") : "]");
    }
    case IValue::Tag::GenericDict: {
      os << "{";
      bool first = true;
      for (const DictEntry& e : v.toGenericDict().entries()) {
        os << (first ? "" : ", ") << e.key() << ": " << e.value();
        first = false;
      }
      return os << "}";
    }
    case IValue::Tag::Object: return os << "<" << v.toObject()->type->qualified_name << " object>";
    case IValue::Tag::Function: return os << "<function " << v.toFunction().qualified_name << ">";
  }
  return os;
}

}  // namespace ember::jit
