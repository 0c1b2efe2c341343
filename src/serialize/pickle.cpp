#include "serialize/pickle.h"

#include <cstring>
#include <unordered_map>

#include "ember/error.h"

namespace ember::serialize {

namespace {

using Kind = PickleObject::Kind;

// Opcodes of pickle protocols 2-4 that a state_dict uses.
enum Op : unsigned char {
  MARK = '(', STOP = '.', POP = '0', POP_MARK = '1', DUP = '2', BINFLOAT = 'G', BININT = 'J', BININT1 = 'K',
  BININT2 = 'M', NONE = 'N', NEWOBJ = 0x81, BINPERSID = 'Q', REDUCE = 'R', BINUNICODE = 'X', APPEND = 'a', BUILD = 'b',
  GLOBAL = 'c', DICT = 'd', APPENDS = 'e', BINGET = 'h', LONG_BINGET = 'j', LIST = 'l', BINPUT = 'q',
  LONG_BINPUT = 'r', SETITEM = 's', TUPLE = 't', SETITEMS = 'u', EMPTY_DICT = '}', EMPTY_LIST = ']',
  EMPTY_TUPLE = ')', PROTO = 0x80, TUPLE1 = 0x85, TUPLE2 = 0x86, TUPLE3 = 0x87, NEWTRUE = 0x88, NEWFALSE = 0x89,
  LONG1 = 0x8a, SHORT_BINUNICODE = 0x8c, BINUNICODE8 = 0x8d, STACK_GLOBAL = 0x93, MEMOIZE = 0x94, FRAME = 0x95,
};

constexpr size_t kMaxDims = 64;

struct StorageType {
  const char* name;
  ScalarType dtype;
};
constexpr StorageType kStorageTypes[] = {
    {"torch.FloatStorage", kFloat}, {"torch.DoubleStorage", kDouble}, {"torch.HalfStorage", kHalf},
    {"torch.BFloat16Storage", kBFloat16}, {"torch.LongStorage", kLong}, {"torch.IntStorage", kInt},
    {"torch.ShortStorage", kShort}, {"torch.CharStorage", kChar}, {"torch.ByteStorage", kByte},
    {"torch.BoolStorage", kBool}, {"torch.ComplexFloatStorage", kComplexFloat},
    {"torch.ComplexDoubleStorage", kComplexDouble},
};
constexpr const char* kCallables[] = {"collections.OrderedDict", "torch._utils._rebuild_tensor_v2",
                                      "torch._utils._rebuild_parameter"};
// TorchScript's typed containers: build_<type>list(list) is the list, restore_type_tag(value,
// type) the value (Ember's IValues carry no static element type).
constexpr const char* kTorchScriptCallables[] = {"torch.jit._pickle.build_intlist", "torch.jit._pickle.build_floatlist",
                                                 "torch.jit._pickle.build_boollist", "torch.jit._pickle.build_tensorlist",
                                                 "torch.jit._pickle.build_doublelist", "torch.jit._pickle.restore_type_tag"};
constexpr const char kClassPrefix[] = "__torch__.";

}  // namespace

class Unpickler {
 public:
  Unpickler(const unsigned char* data, uint64_t size, const std::string& what, bool torchscript)
      : p_(data), size_(size), what_(what), torchscript_(torchscript) {}

  Unpickled run() {
    for (;;) {
      const uint64_t at = pos_;
      const unsigned char op = bytes(1, "opcode")[0];
      if (op == STOP) break;
      step(op, at);
    }
    EMBER_CHECK(stack_.size() == 1 && marks_.empty(), what_.c_str(), "pickle ends with ", stack_.size(),
                " values on its stack (corrupt data.pkl)");
    result_.root_ = stack_.back();
    return std::move(result_);
  }

 private:
  template <class... Args>
  [[noreturn]] void fail(uint64_t at, const Args&... args) const {
    detail::fail(what_.c_str(), "data.pkl byte ", at, ": ", args...);
  }

  const unsigned char* bytes(uint64_t n, const char* part) {
    if (n > size_ - pos_) fail(pos_, "truncated ", part);
    const unsigned char* b = p_ + pos_;
    pos_ += n;
    return b;
  }
  uint64_t uint_le(int n) {
    const unsigned char* b = bytes(n, "argument");
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | b[i];
    return v;
  }
  std::string line(uint64_t at) {
    const uint64_t start = pos_;
    while (pos_ < size_ && p_[pos_] != '\n') ++pos_;
    if (pos_ >= size_) fail(at, "truncated GLOBAL");
    return std::string(reinterpret_cast<const char*>(p_ + start), pos_++ - start);
  }

  PickleObject* make(Kind k) {
    result_.arena_.push_back(std::make_unique<PickleObject>());
    result_.arena_.back()->kind = k;
    return result_.arena_.back().get();
  }
  PickleObject* make_int(int64_t v, Kind k = Kind::Int) {
    PickleObject* o = make(k);
    o->integer = v;
    return o;
  }
  PickleObject* pop(uint64_t at) {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail(at, "pickle stack underflow");
    PickleObject* o = stack_.back();
    stack_.pop_back();
    return o;
  }
  PickleObject* top(uint64_t at) {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail(at, "pickle stack underflow");
    return stack_.back();
  }
  // The items pushed since the last MARK, which is dropped.
  std::vector<PickleObject*> pop_mark(uint64_t at) {
    if (marks_.empty()) fail(at, "pickle MARK missing");
    std::vector<PickleObject*> items(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }
  PickleObject* tuple(std::vector<PickleObject*> items) {
    PickleObject* t = make(Kind::Tuple);
    t->items = std::move(items);
    return t;
  }
  void memo_put(uint64_t index, uint64_t at) { memo_[index] = top(at); }
  PickleObject* memo_get(uint64_t index, uint64_t at) {
    auto it = memo_.find(index);
    if (it == memo_.end()) fail(at, "pickle memo entry ", index, " missing");
    return it->second;
  }
  PickleObject* expect(PickleObject* o, Kind k, const char* role, uint64_t at) {
    if (o->kind != k) fail(at, role, " has the wrong type");
    return o;
  }

  PickleObject* global(const std::string& module, const std::string& name, uint64_t at) {
    const std::string full = module + "." + name;
    for (const char* c : kCallables)
      if (full == c) {
        PickleObject* g = make(Kind::Global);
        g->text = full;
        return g;
      }
    if (torchscript_) {
      bool allowed = full.compare(0, sizeof kClassPrefix - 1, kClassPrefix) == 0;
      for (const char* c : kTorchScriptCallables) allowed = allowed || full == c;
      if (allowed) {
        PickleObject* g = make(Kind::Global);
        g->text = full;
        return g;
      }
    }
    for (const StorageType& s : kStorageTypes)
      if (full == s.name) {
        PickleObject* g = make(Kind::Global);
        g->text = full;
        g->dtype = s.dtype;
        return g;
      }
    fail(at, "global '", full,
         "' is not allowed: only the contents of a state_dict (tensors, storages, ordered dicts, plain containers "
         "and numbers) are loaded, and nothing in the file is executed");
  }

  // BINPERSID: ('storage', <storage type>, key, location, numel) names one storage of the archive.
  PickleObject* storage(PickleObject* pid, uint64_t at) {
    const auto& f = pid->items;
    if (pid->kind != Kind::Tuple || f.size() != 5 || f[0]->kind != Kind::String || f[0]->text != "storage" ||
        f[1]->kind != Kind::Global || f[1]->dtype == ScalarType::Undefined || f[2]->kind != Kind::String ||
        f[3]->kind != Kind::String || f[4]->kind != Kind::Int || f[4]->integer < 0)
      fail(at, "unsupported persistent id (expected ('storage', type, key, location, numel))");
    auto [it, fresh] = storages_.try_emplace(f[2]->text, nullptr);
    if (!fresh) {
      if (it->second->dtype != f[1]->dtype || it->second->numel != f[4]->integer)
        fail(at, "storage '", f[2]->text, "' is described twice with different types or sizes");
      return it->second;
    }
    PickleObject* s = make(Kind::Storage);
    s->text = f[2]->text;
    s->dtype = f[1]->dtype;
    s->numel = f[4]->integer;
    return it->second = s;
  }

  std::vector<int64_t> int_tuple(PickleObject* t, const char* role, uint64_t at) {
    if (t->kind != Kind::Tuple || t->items.size() > kMaxDims)
      fail(at, role, " must be a tuple of at most ", kMaxDims, " ints");
    std::vector<int64_t> out;
    for (PickleObject* i : t->items) {
      if (i->kind != Kind::Int || i->integer < 0) fail(at, role, " must hold non-negative ints");
      out.push_back(i->integer);
    }
    return out;
  }

  PickleObject* call(PickleObject* fn, PickleObject* args, uint64_t at) {
    if (fn->kind != Kind::Global || fn->dtype != ScalarType::Undefined) fail(at, "REDUCE of a non-callable");
    if (args->kind != Kind::Tuple) fail(at, "REDUCE arguments must be a tuple");
    const auto& a = args->items;
    if (fn->text == "collections.OrderedDict") {
      if (!a.empty()) fail(at, "OrderedDict() takes no arguments here");
      return make(Kind::Dict);
    }
    if (fn->text.compare(0, sizeof kClassPrefix - 1, kClassPrefix) == 0)
      fail(at, "class '", fn->text, "' can only be instantiated by NEWOBJ");
    if (fn->text == "torch.jit._pickle.restore_type_tag") {
      if (a.size() != 2 || a[1]->kind != Kind::String) fail(at, "restore_type_tag expects (value, type string)");
      return a[0];
    }
    if (fn->text.compare(0, 24, "torch.jit._pickle.build_") == 0) {
      if (a.size() != 1 || a[0]->kind != Kind::List) fail(at, fn->text, " expects one list");
      return a[0];
    }
    if (fn->text == "torch._utils._rebuild_parameter") {
      // (data, requires_grad, backward_hooks): a Parameter is its data in a state_dict.
      if (a.size() != 3 || a[0]->kind != Kind::Tensor) fail(at, "_rebuild_parameter expects (tensor, bool, hooks)");
      return a[0];
    }
    // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
    if ((a.size() != 6 && a.size() != 7) || a[0]->kind != Kind::Storage || a[1]->kind != Kind::Int ||
        a[1]->integer < 0 || a[4]->kind != Kind::Bool || a[5]->kind != Kind::Dict || !a[5]->items.empty())
      fail(at, "_rebuild_tensor_v2 expects (storage, offset, size, stride, requires_grad, empty hooks)");
    PickleObject* t = make(Kind::Tensor);
    t->items = {a[0]};
    t->integer = a[4]->integer;
    t->storage_offset = a[1]->integer;
    t->sizes = int_tuple(a[2], "tensor size", at);
    t->strides = int_tuple(a[3], "tensor stride", at);
    if (t->sizes.size() != t->strides.size()) fail(at, "tensor size and stride have different lengths");
    return t;
  }

  void step(unsigned char op, uint64_t at) {
    switch (op) {
      case PROTO: {
        const unsigned v = bytes(1, "protocol")[0];
        if (v < 2 || v > 5) fail(at, "unsupported pickle protocol ", v);
        break;
      }
      case FRAME: uint_le(8); break;
      case MARK: marks_.push_back(stack_.size()); break;
      case POP: pop(at); break;
      case POP_MARK: pop_mark(at); break;
      case DUP: stack_.push_back(top(at)); break;
      case BINPUT: memo_put(uint_le(1), at); break;
      case LONG_BINPUT: memo_put(uint_le(4), at); break;
      case MEMOIZE: memo_put(memo_.size(), at); break;
      case BINGET: stack_.push_back(memo_get(uint_le(1), at)); break;
      case LONG_BINGET: stack_.push_back(memo_get(uint_le(4), at)); break;
      case NONE: stack_.push_back(make(Kind::None)); break;
      case NEWTRUE: stack_.push_back(make_int(1, Kind::Bool)); break;
      case NEWFALSE: stack_.push_back(make_int(0, Kind::Bool)); break;
      case BININT: stack_.push_back(make_int(static_cast<int32_t>(uint_le(4)))); break;
      case BININT1: stack_.push_back(make_int(static_cast<int64_t>(uint_le(1)))); break;
      case BININT2: stack_.push_back(make_int(static_cast<int64_t>(uint_le(2)))); break;
      case LONG1: {
        const uint64_t n = uint_le(1);
        if (n > 8) fail(at, "integer of ", n, " bytes is too large");
        uint64_t v = n ? uint_le(static_cast<int>(n)) : 0;
        if (n && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);  // sign-extend
        stack_.push_back(make_int(static_cast<int64_t>(v)));
        break;
      }
      case BINFLOAT: {
        const unsigned char* b = bytes(8, "float");
        uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = (bits << 8) | b[i];  // big-endian
        PickleObject* o = make(Kind::Float);
        std::memcpy(&o->real, &bits, 8);
        stack_.push_back(o);
        break;
      }
      case BINUNICODE:
      case SHORT_BINUNICODE:
      case BINUNICODE8: {
        const uint64_t n = uint_le(op == SHORT_BINUNICODE ? 1 : op == BINUNICODE ? 4 : 8);
        PickleObject* s = make(Kind::String);
        s->text.assign(reinterpret_cast<const char*>(bytes(n, "string")), n);
        stack_.push_back(s);
        break;
      }
      case EMPTY_TUPLE: stack_.push_back(tuple({})); break;
      case TUPLE1:
      case TUPLE2:
      case TUPLE3: {
        std::vector<PickleObject*> items(op - TUPLE1 + 1);
        for (size_t i = items.size(); i-- > 0;) items[i] = pop(at);
        stack_.push_back(tuple(std::move(items)));
        break;
      }
      case TUPLE: stack_.push_back(tuple(pop_mark(at))); break;
      case EMPTY_LIST: stack_.push_back(make(Kind::List)); break;
      case LIST: {
        PickleObject* l = make(Kind::List);
        l->items = pop_mark(at);
        stack_.push_back(l);
        break;
      }
      case EMPTY_DICT: stack_.push_back(make(Kind::Dict)); break;
      case DICT: {
        PickleObject* d = make(Kind::Dict);
        d->items = pop_mark(at);
        if (d->items.size() % 2) fail(at, "DICT with an odd number of items");
        stack_.push_back(d);
        break;
      }
      case APPEND: {
        PickleObject* v = pop(at);
        expect(top(at), Kind::List, "APPEND target", at)->items.push_back(v);
        break;
      }
      case APPENDS: {
        auto items = pop_mark(at);
        auto& dst = expect(top(at), Kind::List, "APPENDS target", at)->items;
        dst.insert(dst.end(), items.begin(), items.end());
        break;
      }
      case SETITEM: {
        PickleObject* v = pop(at);
        PickleObject* k = pop(at);
        auto& dst = expect(top(at), Kind::Dict, "SETITEM target", at)->items;
        dst.push_back(k);
        dst.push_back(v);
        break;
      }
      case SETITEMS: {
        auto items = pop_mark(at);
        if (items.size() % 2) fail(at, "SETITEMS with an odd number of items");
        auto& dst = expect(top(at), Kind::Dict, "SETITEMS target", at)->items;
        dst.insert(dst.end(), items.begin(), items.end());
        break;
      }
      case GLOBAL: {
        std::string module = line(at);
        std::string name = line(at);
        stack_.push_back(global(module, name, at));
        break;
      }
      case STACK_GLOBAL: {
        PickleObject* name = pop(at);
        PickleObject* module = pop(at);
        if (name->kind != Kind::String || module->kind != Kind::String) fail(at, "STACK_GLOBAL needs two strings");
        stack_.push_back(global(module->text, name->text, at));
        break;
      }
      case BINPERSID: stack_.push_back(storage(pop(at), at)); break;
      case REDUCE: {
        PickleObject* args = pop(at);
        PickleObject* fn = pop(at);
        stack_.push_back(call(fn, args, at));
        break;
      }
      case NEWOBJ: {
        // cls.__new__(cls): an object of a TorchScript class, whose attributes BUILD then sets.
        PickleObject* args = pop(at);
        PickleObject* cls = pop(at);
        if (!torchscript_ || cls->kind != Kind::Global ||
            cls->text.compare(0, sizeof kClassPrefix - 1, kClassPrefix) != 0)
          fail(at, "NEWOBJ is only allowed for TorchScript classes (__torch__.*)");
        if (args->kind != Kind::Tuple || !args->items.empty()) fail(at, "NEWOBJ of '", cls->text, "' with arguments");
        PickleObject* o = make(Kind::Object);
        o->text = cls->text;
        stack_.push_back(o);
        break;
      }
      case BUILD: {
        PickleObject* state = pop(at);
        if (torchscript_ && top(at)->kind == Kind::Object) {
          PickleObject* obj = top(at);
          if (state->kind != Kind::Dict || !obj->items.empty())
            fail(at, "BUILD of '", obj->text, "' needs one attribute dict");
          obj->items = {state};
          break;
        }
        // OrderedDict's state is the state_dict's _metadata (module versions), which Ember does not
        // need; nothing else may be given state.
        if (top(at)->kind != Kind::Dict || (state->kind != Kind::Dict && state->kind != Kind::None))
          fail(at, "BUILD is only supported for an OrderedDict's attributes");
        break;
      }
      default:
        fail(at, "pickle opcode 0x", "0123456789abcdef"[op >> 4], "0123456789abcdef"[op & 15],
             " is not allowed in a ", torchscript_ ? "TorchScript archive" : "state_dict");
    }
  }

  const unsigned char* p_;
  uint64_t size_;
  uint64_t pos_ = 0;
  const std::string& what_;
  const bool torchscript_;
  std::vector<PickleObject*> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, PickleObject*> memo_;
  std::unordered_map<std::string, PickleObject*> storages_;
  Unpickled result_;
};

Unpickled unpickle_state_dict(const unsigned char* data, uint64_t size, const std::string& what) {
  return Unpickler(data, size, what, false).run();
}

Unpickled unpickle_torchscript(const unsigned char* data, uint64_t size, const std::string& what) {
  return Unpickler(data, size, what, true).run();
}

}  // namespace ember::serialize
