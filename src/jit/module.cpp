// torch::jit::load: a TorchScript archive is a zip of <name>/data.pkl (the module objects),
// <name>/constants.pkl (tensor constants of the code), <name>/code/**.py (the classes' source,
// deflated), <name>/data/<key> and <name>/constants/<key> (storage bytes) and <name>/version.
// Everything is validated before a tensor is allocated; the code is parsed and linked once.
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <unordered_map>
#include <unordered_set>

#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/nn/module.h"
#include "jit/script.h"
#include "serialize/checkpoint_format.h"
#include "serialize/pickle.h"
#include "serialize/zip.h"

namespace ember::jit {

namespace {

using serialize::PickleObject;
using Kind = PickleObject::Kind;

constexpr int kMaxNesting = 100;
// Code files are small; a deflated entry claiming more is refused before inflating.
constexpr uint64_t kMaxCodeFile = uint64_t{64} << 20;

std::string inflate_entry(const serialize::ZipEntry& e, const std::string& what) {
  const char* w = what.c_str();
  EMBER_CHECK(e.size <= kMaxCodeFile, w, "code file \"", e.name, "\" claims ", e.size, " bytes (limit ", kMaxCodeFile,
              ")");
  if (!e.deflated) {
    serialize::check_crc(e, what);
    return std::string(reinterpret_cast<const char*>(e.data), e.size);
  }
  std::string out(e.size, '\0');
  z_stream z{};
  EMBER_CHECK(inflateInit2(&z, -MAX_WBITS) == Z_OK, w, "zlib initialisation failed");
  z.next_in = const_cast<unsigned char*>(e.data);
  z.avail_in = static_cast<uInt>(std::min<uint64_t>(e.compressed_size, UINT32_MAX));
  z.next_out = reinterpret_cast<unsigned char*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&z, Z_FINISH);
  const uint64_t produced = z.total_out;
  inflateEnd(&z);
  EMBER_CHECK(rc == Z_STREAM_END && produced == e.size, w, "code file \"", e.name,
              "\" does not inflate to its recorded ", e.size, " bytes (corrupt archive)");
  serialize::check_crc(e, reinterpret_cast<const unsigned char*>(out.data()), out.size(), what);
  return out;
}

// Builds IValues from the unpickled objects: tensors on storages shared as in the file, module
// objects bound to their classes' code.
class Builder {
 public:
  Builder(const std::unordered_map<std::string, const serialize::ZipEntry*>& entries,
          std::shared_ptr<CompilationUnit> unit, const std::string& what)
      : entries_(entries), unit_(std::move(unit)), what_(what) {}

  IValue build(const PickleObject* o, const std::string& dir, const std::string& path, int depth) {
    EMBER_CHECK(depth < kMaxNesting, what_.c_str(), "objects nested deeper than ", kMaxNesting, " at ", path);
    if (auto it = built_.find(o); it != built_.end()) return it->second;
    EMBER_CHECK(!in_progress_.count(o), what_.c_str(), "object at ", path, " contains itself");
    in_progress_.insert(o);
    IValue v = make(o, dir, path, depth);
    in_progress_.erase(o);
    built_.emplace(o, v);
    return v;
  }

 private:
  IValue make(const PickleObject* o, const std::string& dir, const std::string& path, int depth) {
    const char* w = what_.c_str();
    switch (o->kind) {
      case Kind::None: return IValue();
      case Kind::Bool: return IValue(o->integer != 0);
      case Kind::Int: return IValue(o->integer);
      case Kind::Float: return IValue(o->real);
      case Kind::String: return IValue(o->text);
      case Kind::Tuple:
      case Kind::List: {
        std::vector<IValue> items;
        for (size_t i = 0; i < o->items.size(); ++i)
          items.push_back(build(o->items[i], dir, path + "[" + std::to_string(i) + "]", depth + 1));
        if (o->kind == Kind::List) return IValue(std::move(items));
        return IValue(std::make_shared<ivalue::Tuple>(std::move(items)));
      }
      case Kind::Dict: {
        GenericDict d;
        for (size_t i = 0; i + 1 < o->items.size(); i += 2)
          d.insert_or_assign(build(o->items[i], dir, path + " key", depth + 1),
                             build(o->items[i + 1], dir, path + " value", depth + 1));
        return IValue(std::move(d));
      }
      case Kind::Tensor: return tensor(o, dir, path);
      case Kind::Object: {
        EMBER_CHECK(unit_, w, "object of class ", o->text, " at ", path, ": only TorchScript archives hold objects");
        const ClassType* cls = unit_->find_class(o->text);
        EMBER_CHECK(cls, w, "class ", o->text, " of ", path, " has no code in the archive");
        EMBER_CHECK(o->items.size() == 1 && o->items[0]->kind == Kind::Dict, w, "object ", path,
                    " has no attribute dict");
        auto obj = std::make_shared<Object>();
        obj->type = cls;
        obj->unit = unit_;
        const auto& kv = o->items[0]->items;
        for (size_t i = 0; i + 1 < kv.size(); i += 2) {
          EMBER_CHECK(kv[i]->kind == Kind::String, w, "attribute name of ", path, " is not a string");
          const std::string& name = kv[i]->text;
          EMBER_CHECK(!obj->find(name), w, "attribute ", path, ".", name, " appears twice");
          IValue value = build(kv[i + 1], dir, path + "." + name, depth + 1);
          obj->attrs.push_back({name, unit_->intern(name), std::move(value)});
        }
        for (const auto& names : {&cls->parameters, &cls->buffers})
          for (const std::string& n : *names) {
            IValue* v = obj->find(n);
            EMBER_CHECK(v && (v->isTensor() || v->isNone()), w, path, ".", n,
                        " is declared a parameter or buffer but is not a tensor");
          }
        return IValue(std::move(obj));
      }
      default: detail::fail(w, "unexpected ", path, " (a storage or global outside a tensor)");
    }
  }

  IValue tensor(const PickleObject* t, const std::string& dir, const std::string& path) {
    serialize::check_tensor_storage(t, path, entries_, dir, storage_data_, what_);
    const PickleObject* s = t->items[0];
    auto it = storages_.find(s);
    if (it == storages_.end()) {
      Tensor base = empty({s->numel}, TensorOptions().dtype(s->dtype));
      if (base.nbytes()) std::memcpy(base.data_ptr(), storage_data_.at(s), base.nbytes());
      it = storages_.emplace(s, std::move(base)).first;
    }
    Tensor out = it->second.as_strided(t->sizes, t->strides, t->storage_offset);
    if (t->integer) out.requires_grad_(true);
    return IValue(std::move(out));
  }

  const std::unordered_map<std::string, const serialize::ZipEntry*>& entries_;
  std::shared_ptr<CompilationUnit> unit_;
  const std::string& what_;
  std::unordered_map<const PickleObject*, const unsigned char*> storage_data_;
  std::unordered_map<const PickleObject*, Tensor> storages_;
  std::unordered_map<const PickleObject*, IValue> built_;
  std::unordered_set<const PickleObject*> in_progress_;
};

Module load_bytes(const unsigned char* data, uint64_t size, const std::string& what, ExtraFilesMap* extra_files) {
  const char* w = what.c_str();
  const std::vector<serialize::ZipEntry> entries = serialize::read_zip(data, size, what, /*allow_deflate=*/true);
  std::unordered_map<std::string, const serialize::ZipEntry*> by_name;
  std::string prefix;
  for (const serialize::ZipEntry& e : entries) {
    by_name.emplace(e.name, &e);
    const size_t slash = e.name.find('/');
    if (slash != std::string::npos && e.name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      EMBER_CHECK(prefix.empty(), w, "archive holds two data.pkl entries");
      prefix = e.name.substr(0, slash + 1);
    }
  }
  EMBER_CHECK(!prefix.empty(), w, "no <archive>/data.pkl entry: not a TorchScript archive");
  auto entry = [&](const std::string& name) -> const serialize::ZipEntry* {
    auto it = by_name.find(prefix + name);
    return it == by_name.end() ? nullptr : it->second;
  };
  // The format version is `version`, or `.data/version` in archives of some writers.
  EMBER_CHECK(entry("constants.pkl") && (entry("version") || entry(".data/version")), w,
              "no constants.pkl or version entry: not a TorchScript archive (a torch.save checkpoint is read by "
              "ember::load_torch_checkpoint)");
  if (const serialize::ZipEntry* order = entry("byteorder")) {
    const std::string text = inflate_entry(*order, what);
    EMBER_CHECK(text == "little", w, "byteorder is \"", text, "\"; Ember reads little-endian archives only");
  }

  auto unit = std::make_shared<CompilationUnit>();
  const std::string code_dir = prefix + "code/";
  bool any_code = false;
  for (const serialize::ZipEntry& e : entries) {
    if (e.name.compare(0, code_dir.size(), code_dir) != 0 || e.name.size() < code_dir.size() + 4 ||
        e.name.compare(e.name.size() - 3, 3, ".py") != 0)
      continue;
    std::string module = e.name.substr(code_dir.size(), e.name.size() - code_dir.size() - 3);
    for (char& c : module)
      if (c == '/') c = '.';
    unit->parse_file(e.name.substr(prefix.size()), module, inflate_entry(e, what));
    any_code = true;
  }
  EMBER_CHECK(any_code, w, "archive has no code/ files");
  unit->resolve();
  unit->archive_name = prefix.substr(0, prefix.size() - 1);
  const auto contents = [&](const serialize::ZipEntry& e) {
    if (e.deflated) return inflate_entry(e, what);
    serialize::check_crc(e, what);
    return std::string(reinterpret_cast<const char*>(e.data), e.size);
  };
  for (const serialize::ZipEntry& e : entries) {
    if (e.name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string path = e.name.substr(prefix.size());
    if (path.compare(0, 6, "extra/") == 0) {  // only the files asked for
      if (!extra_files) continue;
      const auto wanted = extra_files->find(path.substr(6));
      if (wanted != extra_files->end()) wanted->second = contents(e);
      continue;
    }
    if (path == "data.pkl" || path.compare(0, 5, "data/") == 0) continue;
    unit->archived.emplace_back(path, contents(e));
  }

  Builder builder(by_name, unit, what);
  const serialize::ZipEntry* constants = entry("constants.pkl");
  serialize::check_crc(*constants, what);
  const serialize::Unpickled cp = serialize::unpickle_torchscript(constants->data, constants->size, what + " constants.pkl");
  const IValue consts = builder.build(cp.root(), prefix + "constants/", "CONSTANTS", 0);
  EMBER_CHECK(consts.isTuple(), w, "constants.pkl does not hold a tuple");
  unit->constants = consts.toTuple()->elements();

  const serialize::ZipEntry* pkl = entry("data.pkl");
  serialize::check_crc(*pkl, what);
  const serialize::Unpickled dp = serialize::unpickle_torchscript(pkl->data, pkl->size, what + " data.pkl");
  const IValue root = builder.build(dp.root(), prefix + "data/", "module", 0);
  EMBER_CHECK(root.isObject(), w, "data.pkl holds a ", root.tag_name(), ", not a module");
  return Module(root.toObject());
}

// Modules reachable from `obj` (itself first), with their dotted names.
void walk(const std::shared_ptr<Object>& obj, const std::string& prefix, bool recurse,
          const std::function<void(const std::shared_ptr<Object>&, const std::string&)>& visit) {
  visit(obj, prefix);
  if (!recurse) return;
  for (const Object::Attr& a : obj->attrs)
    if (a.value.isObject()) walk(a.value.toObject(), prefix + a.name + ".", true, visit);
}

// The parameters (or buffers) in libtorch's order: depth first through the attributes in their
// order, a submodule's before the attributes after it (one registered later comes last).
void collect_slots(const Object& o, const std::string& prefix, bool recurse, bool buffers,
                   std::vector<NamedTensor>& out) {
  const std::vector<std::string>& names = buffers ? o.type->buffers : o.type->parameters;
  for (const Object::Attr& a : o.attrs) {
    if (a.value.isTensor() && std::find(names.begin(), names.end(), a.name) != names.end()) {
      out.push_back({prefix + a.name, a.value.toTensor()});
    } else if (recurse && a.value.isObject()) {
      collect_slots(*a.value.toObject(), prefix + a.name + ".", true, buffers, out);
    }
  }
}
std::vector<NamedTensor> named_slots(const std::shared_ptr<Object>& root, bool recurse, bool buffers) {
  std::vector<NamedTensor> out;
  collect_slots(*root, "", recurse, buffers, out);
  return out;
}

const std::shared_ptr<Object>& checked(const std::shared_ptr<Object>& obj) {
  if (!obj) throw Error("torch::jit::Module: the module is empty (default-constructed, not loaded)");
  return obj;
}

}  // namespace

Module load(const std::string& path, std::optional<Device> device, ExtraFilesMap& extra_files) {
  const std::string what = "torch::jit::load('" + path + "')";
  if (device) check_cpu_device(what.c_str(), *device);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  EMBER_CHECK(in, what.c_str(), "cannot open the file for reading: ", std::strerror(errno));
  const std::streamoff size = in.tellg();
  EMBER_CHECK(size >= 0, what.c_str(), "cannot determine the file size");
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  EMBER_CHECK(in.read(bytes.data(), size), what.c_str(), "short read (file changed or truncated?)");
  return load_bytes(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), what, &extra_files);
}
Module load(const std::string& path, std::optional<Device> device) {
  ExtraFilesMap none;
  return load(path, device, none);
}

Module load(std::istream& in, std::optional<Device> device, ExtraFilesMap& extra_files) {
  const std::string what = "torch::jit::load(stream)";
  if (device) check_cpu_device(what.c_str(), *device);
  const std::string bytes = serialize::read_rest(in);
  EMBER_CHECK(!in.bad(), what.c_str(), "read error");
  return load_bytes(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), what, &extra_files);
}
Module load(std::istream& in, std::optional<Device> device) {
  ExtraFilesMap none;
  return load(in, device, none);
}

IValue pickle_load(const std::vector<char>& data) {
  const std::string what = "torch::pickle_load";
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  const std::vector<serialize::ZipEntry> entries = serialize::read_zip(bytes, data.size(), what);
  std::unordered_map<std::string, const serialize::ZipEntry*> by_name;
  const serialize::ZipEntry* pkl = nullptr;
  std::string prefix;
  for (const serialize::ZipEntry& e : entries) {
    by_name.emplace(e.name, &e);
    const size_t slash = e.name.find('/');
    if (slash != std::string::npos && e.name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      EMBER_CHECK(!pkl, what.c_str(), "archive holds two data.pkl entries");
      pkl = &e;
      prefix = e.name.substr(0, slash + 1);
    }
  }
  EMBER_CHECK(pkl, what.c_str(), "no <archive>/data.pkl entry: not data written by torch.save or pickle_save");
  if (auto it = by_name.find(prefix + "byteorder"); it != by_name.end()) {
    const std::string order = inflate_entry(*it->second, what);
    EMBER_CHECK(order == "little", what.c_str(), "byteorder is \"", order, "\"; Ember reads little-endian data only");
  }
  serialize::check_crc(*pkl, what);
  // TorchScript's pickle: libtorch's pickle_save tags typed containers (torch.jit._pickle); objects
  // of TorchScript classes have no code here and are refused by the builder
  const serialize::Unpickled pickled = serialize::unpickle_torchscript(pkl->data, pkl->size, what);
  return Builder(by_name, nullptr, what).build(pickled.root(), prefix + "data/", "data.pkl", 0);
}

Module freeze(const Module& module) {
  EMBER_CHECK(!module.is_training(), "torch::jit::freeze",
              "the module is in training mode; call eval() first (freezing is for inference, as in libtorch)");
  return module;
}

Module optimize_for_inference(Module& module) { return freeze(module); }

IValue Method::operator()(std::vector<IValue> inputs) const {
  const Function* fn = self_->type->method(name_);
  std::vector<IValue> args;
  args.reserve(inputs.size() + 1);
  args.emplace_back(self_);
  for (IValue& v : inputs) args.push_back(std::move(v));
  return call_function(*self_->unit, *fn, std::move(args));
}

Method Module::get_method(const std::string& name) const {
  const auto& obj = checked(obj_);
  EMBER_CHECK(obj->type->method(name), "torch::jit::Module::get_method", "module ", obj->type->qualified_name,
              " has no method '", name, "'");
  return Method(obj, name);
}

bool Module::has_method(const std::string& name) const { return checked(obj_)->type->method(name) != nullptr; }

std::vector<Method> Module::get_methods() const {
  const auto& obj = checked(obj_);
  std::vector<std::string> names;
  for (const auto& entry : obj->type->methods) names.push_back(entry.first);
  std::sort(names.begin(), names.end());
  std::vector<Method> out;
  for (std::string& name : names) out.push_back(Method(obj, std::move(name)));
  return out;
}

void Module::train(bool on) {
  walk(checked(obj_), "", true, [on](const std::shared_ptr<Object>& o, const std::string&) {
    if (IValue* t = o->find("training")) *t = IValue(on);
  });
}

bool Module::is_training() const {
  const IValue* t = checked(obj_)->find("training");
  return t && t->isBool() && t->toBool();
}

// Each tensor keeps its identity and takes the converted data, as libtorch's set_data: other
// attributes holding the same tensors (an RNN's _flat_weights list) see the new dtype too.
void Module::to(ScalarType dtype, bool non_blocking) {
  NoGradGuard no_grad;
  walk(checked(obj_), "", true, [dtype](const std::shared_ptr<Object>& o, const std::string&) {
    for (const auto* names : {&o->type->parameters, &o->type->buffers})
      for (const std::string& n : *names) {
        IValue* v = o->find(n);
        if (!v || !v->isTensor() || !v->toTensor().is_floating_point()) continue;
        nn::set_data(v->toTensor(), v->toTensor().to(dtype));
      }
  });
}

void Module::to(Device device, bool) { check_cpu_device("to", device); }
void Module::to(Device device, ScalarType dtype, bool non_blocking) {
  check_cpu_device("to", device);
  to(dtype, non_blocking);
}

std::vector<NamedTensor> Module::named_parameters(bool recurse) const { return named_slots(checked(obj_), recurse, false); }
std::vector<NamedTensor> Module::named_buffers(bool recurse) const { return named_slots(checked(obj_), recurse, true); }
std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& p : named_parameters(recurse)) out.push_back(std::move(p.value));
  return out;
}
std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& p : named_buffers(recurse)) out.push_back(std::move(p.value));
  return out;
}

std::vector<NamedModule> Module::named_children() const {
  std::vector<NamedModule> out;
  for (const Object::Attr& a : checked(obj_)->attrs)
    if (a.value.isObject()) out.push_back({a.name, Module(a.value.toObject())});
  return out;
}

std::vector<Module> Module::children() const {
  std::vector<Module> out;
  for (auto& c : named_children()) out.push_back(std::move(c.value));
  return out;
}

namespace {
void collect_attributes(const Object& o, const std::string& prefix, bool recurse, std::vector<NamedIValue>& out) {
  for (const Object::Attr& a : o.attrs) {
    out.push_back({prefix + a.name, a.value});
    if (recurse && a.value.isObject()) collect_attributes(*a.value.toObject(), prefix + a.name + ".", true, out);
  }
}

// copies of the mutable values (objects, lists, dicts, tensors) made so far, by identity
struct DeepCopy {
  std::unordered_map<const void*, IValue> memo;
  IValue operator()(const IValue& v) {
    const void* key = v.isTensor() ? static_cast<const void*>(v.toTensor().unsafeGetTensorImpl())
                      : v.isObject() ? static_cast<const void*>(&v.toObjectRef())
                      : v.isList()   ? static_cast<const void*>(v.list_data().get())
                                     : nullptr;  // (dicts and tuples are copied per path)
    if (key) {
      auto it = memo.find(key);
      if (it != memo.end()) return it->second;
    }
    IValue copy;
    if (v.isTensor()) {
      const Tensor& t = v.toTensor();
      Tensor c;
      {
        NoGradGuard no_grad;
        c = t.defined() ? t.clone() : t;
      }
      if (t.defined() && t.requires_grad()) c.requires_grad_(true);
      copy = c;
    } else if (v.isObject()) {
      const Object& o = v.toObjectRef();
      auto obj = std::make_shared<Object>();
      obj->type = o.type;
      obj->unit = o.unit;
      copy = IValue(obj);
      memo.emplace(key, copy);  // before the attributes: a cycle back to it finds the copy
      for (const Object::Attr& a : o.attrs) obj->attrs.push_back({a.name, a.id, (*this)(a.value)});
      return copy;
    } else if (v.isList()) {
      std::vector<IValue> items;
      for (const IValue& e : v.toListRef()) items.push_back((*this)(e));
      copy = IValue(std::move(items));
    } else if (v.isGenericDict()) {
      GenericDict d;
      for (const DictEntry& e : v.toGenericDict().entries()) d.insert_or_assign(e.key(), (*this)(e.value()));
      copy = IValue(d);
    } else if (v.isTuple()) {
      std::vector<IValue> items;
      for (const IValue& e : v.toTuple()->elements()) items.push_back((*this)(e));
      copy = IValue(std::make_shared<ivalue::Tuple>(std::move(items)));
    } else {
      return v;  // immutable: numbers, strings, None, functions
    }
    if (key) memo.emplace(key, copy);
    return copy;
  }
};
}  // namespace

std::vector<NamedIValue> Module::named_attributes(bool recurse) const {
  std::vector<NamedIValue> out;
  collect_attributes(*checked(obj_), "", recurse, out);
  return out;
}
std::vector<IValue> Module::attributes(bool recurse) const {
  std::vector<IValue> out;
  for (auto& a : named_attributes(recurse)) out.push_back(std::move(a.value));
  return out;
}
Module Module::clone(bool) const {
  DeepCopy copy;
  return Module(copy(IValue(checked(obj_))).toObject());
}

IValue Module::attr(const std::string& name) const {
  const auto& obj = checked(obj_);
  if (IValue* v = obj->find(name)) return *v;
  for (const auto& [k, v] : obj->type->constants)
    if (k == name) return v;
  detail::fail("torch::jit::Module::attr", "module ", obj->type->qualified_name, " has no attribute '", name, "'");
}

IValue Module::attr(const std::string& name, IValue or_else) const { return hasattr(name) ? attr(name) : or_else; }

bool Module::hasattr(const std::string& name) const {
  const auto& obj = checked(obj_);
  if (obj->find(name)) return true;
  for (const auto& c : obj->type->constants)
    if (c.first == name) return true;
  return false;
}

void Module::setattr(const std::string& name, IValue v) {
  const auto& obj = checked(obj_);
  if (IValue* slot = obj->find(name))
    *slot = std::move(v);
  else
    obj->attrs.push_back({name, obj->unit->id_of(name), std::move(v)});
}

void Module::register_parameter(const std::string& name, Tensor v, bool is_buffer) {
  auto* type = const_cast<ClassType*>(checked(obj_)->type);  // owned by the (shared) compilation unit
  std::vector<std::string>& list = is_buffer ? type->buffers : type->parameters;
  std::vector<std::string>& other = is_buffer ? type->parameters : type->buffers;
  EMBER_CHECK(std::find(other.begin(), other.end(), name) == other.end(), "torch::jit::Module::register_parameter",
              "attribute '", name, "' is already a ", is_buffer ? "parameter" : "buffer");
  if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
  setattr(name, std::move(v));
}

void Module::register_module(const std::string& name, const Module& module) {
  EMBER_CHECK(module._ivalue(), "torch::jit::Module::register_module", "the module '", name, "' is empty");
  setattr(name, IValue(module._ivalue()));
}

const std::string& Module::type_name() const { return checked(obj_)->type->qualified_name; }

}  // namespace ember::jit
