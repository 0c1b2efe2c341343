// torch::jit::Module::save: writes the module back as a TorchScript archive that libtorch's and
// PyTorch's torch.jit.load read. The code, constants and version come unchanged from the archive the
// module was loaded from (a loaded module's code cannot change); data.pkl and data/ are written
// anew from the module's current attributes, so trained weights, a changed `training` flag or
// replaced tensors are saved. data.pkl is pickled as PyTorch's pickler writes it (protocol 2):
// objects as their class's global with a state dict, tensors as _rebuild_tensor_v2 over persistent
// storages (views of one storage share it), typed lists through torch.jit._pickle.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "ember/error.h"
#include "jit/script.h"
#include "serialize/zip.h"

namespace ember::jit {

namespace {

// Pickle opcodes (Python's pickle.py names).
enum Op : unsigned char {
  MARK = '(',
  STOP = '.',
  BINFLOAT = 'G',
  BININT = 'J',
  BININT1 = 'K',
  BININT2 = 'M',
  NONE = 'N',
  BINPERSID = 'Q',
  REDUCE = 'R',
  BINUNICODE = 'X',
  APPENDS = 'e',
  BINGET = 'h',
  LONG_BINGET = 'j',
  BINPUT = 'q',
  LONG_BINPUT = 'r',
  SETITEMS = 'u',
  GLOBAL = 'c',
  EMPTY_DICT = '}',
  EMPTY_LIST = ']',
  EMPTY_TUPLE = ')',
  TUPLE = 't',
  BUILD = 'b',
  NEWOBJ = 0x81,
  PROTO = 0x80,
  NEWTRUE = 0x88,
  NEWFALSE = 0x89,
  LONG1 = 0x8a,
};

const char* storage_class(ScalarType t, const std::string& what) {
  switch (t) {
    case kFloat:
      return "FloatStorage";
    case kDouble:
      return "DoubleStorage";
    case kHalf:
      return "HalfStorage";
    case kBFloat16:
      return "BFloat16Storage";
    case kLong:
      return "LongStorage";
    case kInt:
      return "IntStorage";
    case kShort:
      return "ShortStorage";
    case kChar:
      return "CharStorage";
    case kByte:
      return "ByteStorage";
    case kBool:
      return "BoolStorage";
    case kComplexFloat:
      return "ComplexFloatStorage";
    case kComplexDouble:
      return "ComplexDoubleStorage";
    default:
      throw Error(what + ": cannot save a tensor of dtype " + std::string(to_string(t)));
  }
}

class Pickler {
 public:
  explicit Pickler(std::string what) : what_(std::move(what)) {
    op(PROTO);
    out_.push_back(2);
  }

  void value(const IValue& v, int depth = 0) {
    EMBER_CHECK(depth < 200, what_.c_str(), "attributes nested more than 200 deep");
    switch (v.tag()) {
      case IValue::Tag::None:
        return op(NONE);
      case IValue::Tag::Bool:
        return op(v.toBool() ? NEWTRUE : NEWFALSE);
      case IValue::Tag::Int:
        return integer(v.toInt());
      case IValue::Tag::Double: {
        op(BINFLOAT);
        const double d = v.toDouble();
        uint64_t bits;
        std::memcpy(&bits, &d, 8);
        for (int i = 7; i >= 0; --i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));  // big-endian
        return;
      }
      case IValue::Tag::String:
        return string(v.toStringRef());
      case IValue::Tag::Tensor:
        return tensor(v.toTensor());
      case IValue::Tag::Tuple: {
        op(MARK);
        for (const IValue& e : v.toTuple()->elements()) value(e, depth + 1);
        return op(TUPLE);
      }
      case IValue::Tag::List:
        return list(v.toListRef(), depth);
      case IValue::Tag::GenericDict: {
        op(EMPTY_DICT);
        op(MARK);
        for (const DictEntry& e : v.toGenericDict().entries()) {
          value(e.key(), depth + 1);
          value(e.value(), depth + 1);
        }
        return op(SETITEMS);
      }
      case IValue::Tag::Object:
        return object(v.toObject(), depth);
      default:
        throw Error(what_ + ": cannot save an attribute holding a " + v.tag_name());
    }
  }

  std::string finish() {
    op(STOP);
    return std::move(out_);
  }
  // The storages the tensors refer to, key i at [i].
  const std::vector<IntrusivePtr<StorageImpl>>& storages() const { return storages_; }

 private:
  void op(unsigned char o) { out_.push_back(static_cast<char>(o)); }
  void le(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void integer(int64_t v) {
    if (v >= 0 && v < 256) {
      op(BININT1);
      le(static_cast<uint64_t>(v), 1);
    } else if (v >= 0 && v < 65536) {
      op(BININT2);
      le(static_cast<uint64_t>(v), 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      op(BININT);
      le(static_cast<uint64_t>(v), 4);
    } else {
      op(LONG1);
      out_.push_back(8);
      le(static_cast<uint64_t>(v), 8);
    }
  }
  void string(const std::string& s) {
    op(BINUNICODE);
    le(s.size(), 4);
    out_ += s;
  }
  void global(const std::string& module, const std::string& name) {
    op(GLOBAL);
    out_ += module + "\n" + name + "\n";
  }
  // BINPUT/BINGET with a one-byte id, LONG_BINPUT/LONG_BINGET past 255.
  void memo(unsigned char short_op, unsigned char long_op, uint32_t id) {
    op(id < 256 ? short_op : long_op);
    le(id, id < 256 ? 1 : 4);
  }

  // TorchScript's typed lists go through torch.jit._pickle.build_<type>list, as PyTorch writes them;
  // other lists (and empty ones, whose type Ember's IValues do not carry) as plain lists.
  void list(const std::vector<IValue>& items, int depth) {
    const char* builder = nullptr;
    if (!items.empty()) {
      auto all = [&](bool (IValue::*is)() const) {
        for (const IValue& e : items)
          if (!(e.*is)()) return false;
        return true;
      };
      builder = all(&IValue::isInt)      ? "build_intlist"
                : all(&IValue::isDouble) ? "build_doublelist"
                : all(&IValue::isBool)   ? "build_boollist"
                : all(&IValue::isTensor) ? "build_tensorlist"
                                         : nullptr;
    }
    if (builder) {
      global("torch.jit._pickle", builder);
      op(MARK);
    }
    op(EMPTY_LIST);
    op(MARK);
    for (const IValue& e : items) value(e, depth + 1);
    op(APPENDS);
    if (builder) {
      op(TUPLE);
      op(REDUCE);
    }
  }

  // A module object: its class as a global, then its attributes as a state dict, in order. An
  // object met again (a module shared by two parents) is the memo's, so loading keeps it shared.
  void object(const std::shared_ptr<Object>& obj, int depth) {
    if (auto it = memo_.find(obj.get()); it != memo_.end()) return memo(BINGET, LONG_BINGET, it->second);
    const std::string& name = obj->type->qualified_name;
    const size_t dot = name.rfind('.');
    EMBER_CHECK(dot != std::string::npos, what_.c_str(), "class name \"", name, "\" has no module");
    global(name.substr(0, dot), name.substr(dot + 1));
    op(EMPTY_TUPLE);
    op(NEWOBJ);
    const uint32_t id = next_memo_++;
    memo_.emplace(obj.get(), id);
    memo(BINPUT, LONG_BINPUT, id);
    op(EMPTY_DICT);
    op(MARK);
    for (const Object::Attr& a : obj->attrs) {
      string(a.name);
      value(a.value, depth + 1);
    }
    op(SETITEMS);
    op(BUILD);
  }

  // _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict()).
  void tensor(const Tensor& t0) {
    EMBER_CHECK(t0.layout() == kStrided && !t0.is_quantized(), what_.c_str(), "cannot save a ",
                t0.is_quantized() ? "quantized" : "sparse", " tensor");
    const Tensor t = t0.is_conj() || t0.is_neg() ? t0.resolve_conj().resolve_neg() : t0;
    const IntrusivePtr<StorageImpl>& storage = t.unsafeGetTensorImpl()->storage();
    auto [it, added] = storage_keys_.emplace(storage.get(), storages_.size());
    if (added) storages_.push_back(storage);
    global("torch._utils", "_rebuild_tensor_v2");
    op(MARK);
    op(MARK);  // the persistent id: ('storage', torch.<T>Storage, key, 'cpu', numel)
    string("storage");
    global("torch", storage_class(t.scalar_type(), what_));
    string(std::to_string(it->second));
    string("cpu");
    integer(static_cast<int64_t>(storage->nbytes() / element_size(t.scalar_type())));
    op(TUPLE);
    op(BINPERSID);
    integer(t.storage_offset());
    op(MARK);
    for (int64_t s : t.sizes()) integer(s);
    op(TUPLE);
    op(MARK);
    for (int64_t s : t.strides()) integer(s);
    op(TUPLE);
    op(t.requires_grad() ? NEWTRUE : NEWFALSE);
    global("collections", "OrderedDict");
    op(EMPTY_TUPLE);
    op(REDUCE);
    op(TUPLE);
    op(REDUCE);
  }

  std::string what_;
  std::string out_;
  std::unordered_map<const Object*, uint32_t> memo_;
  uint32_t next_memo_ = 0;
  std::unordered_map<const StorageImpl*, size_t> storage_keys_;
  std::vector<IntrusivePtr<StorageImpl>> storages_;
};

void save_to(const std::shared_ptr<Object>& root, std::ostream& out, const ExtraFilesMap& extra_files,
             const std::string& what) {
  EMBER_CHECK(root, what.c_str(), "the module is empty (default-constructed, not loaded)");
  const CompilationUnit& unit = *root->unit;
  Pickler pickler(what);
  pickler.value(IValue(root));
  const std::string data = pickler.finish();
  const std::string dir = unit.archive_name + "/";
  std::vector<serialize::ZipRecord> records;
  // data.pkl first: readers take the archive's directory name from the first entry
  records.push_back({dir + "data.pkl", data.data(), data.size()});
  for (const auto& [path, bytes] : unit.archived) records.push_back({dir + path, bytes.data(), bytes.size()});
  for (size_t i = 0; i < pickler.storages().size(); ++i) {
    const StorageImpl& s = *pickler.storages()[i];
    records.push_back({dir + "data/" + std::to_string(i), s.data(), s.nbytes()});
  }
  for (const auto& [name, bytes] : extra_files) records.push_back({dir + "extra/" + name, bytes.data(), bytes.size()});
  serialize::write_zip(out, records, what);
}

}  // namespace

std::vector<char> pickle_save(const IValue& value) {
  const std::string what = "torch::pickle_save";
  Pickler pickler(what);
  pickler.value(value);
  const std::string data = pickler.finish();
  // torch.save's layout: archive/data.pkl, then the storages under archive/data/, and the version
  std::vector<serialize::ZipRecord> records;
  records.push_back({"archive/data.pkl", data.data(), data.size()});
  for (size_t i = 0; i < pickler.storages().size(); ++i) {
    const StorageImpl& s = *pickler.storages()[i];
    records.push_back({"archive/data/" + std::to_string(i), s.data(), s.nbytes()});
  }
  const std::string version = "3\n";
  records.push_back({"archive/version", version.data(), version.size()});
  std::ostringstream out;
  serialize::write_zip(out, records, what);
  const std::string bytes = out.str();
  return std::vector<char>(bytes.begin(), bytes.end());
}

void Module::save(std::ostream& out, const ExtraFilesMap& extra_files) const {
  save_to(obj_, out, extra_files, "torch::jit::Module::save");
}

void Module::save(const std::string& filename, const ExtraFilesMap& extra_files) const {
  const std::string what = "torch::jit::Module::save('" + filename + "')";
  EMBER_CHECK(obj_, what.c_str(), "the module is empty (default-constructed, not loaded)");
  std::ofstream out(filename, std::ios::binary | std::ios::trunc);
  EMBER_CHECK(out.is_open(), what.c_str(), "cannot open the file for writing: ", std::strerror(errno));
  save_to(obj_, out, extra_files, what);
}

}  // namespace ember::jit
