// A tree-walking interpreter of the parsed TorchScript code. Locals live in per-call slot
// vectors (resolved by the parser) and global calls were linked to their builtin or function
// once after loading, so a call costs its argument vector and the op itself.
#include <algorithm>
#include <sstream>

#include "ember/error.h"
#include "ember/shape.h"
#include "jit/builtins.h"
#include "jit/script.h"

namespace ember::jit {

namespace {

// Deeper TorchScript recursion than this is refused rather than overflowing the C++ stack.
constexpr int kMaxCallDepth = 500;

void resolve_expr(CompilationUnit& unit, Expr& e) {
  if (e.kind == Expr::Kind::Call && e.kids[0]->kind == Expr::Kind::Global) {
    Expr& callee = *e.kids[0];
    callee.function = unit.find_function(callee.name);
    if (const ClassType* cls = callee.function ? nullptr : unit.find_class(callee.name); cls && cls->named_tuple)
      callee.named_tuple = cls;
    else if (!callee.function)
      callee.builtins = find_builtin(callee.name);
  }
  if (e.kind == Expr::Kind::Attr) e.name_id = unit.intern(e.name);
  for (auto& k : e.kids) resolve_expr(unit, *k);
}
void resolve_block(CompilationUnit& unit, std::vector<StmtPtr>& body) {
  for (auto& s : body) {
    if (s->target) resolve_expr(unit, *s->target);
    if (s->value) resolve_expr(unit, *s->value);
    resolve_block(unit, s->body);
    resolve_block(unit, s->orelse);
  }
}
void resolve_function(CompilationUnit& unit, Function& fn) {
  for (auto& p : fn.params)
    if (p.default_value) resolve_expr(unit, *p.default_value);
  resolve_block(unit, fn.body);
}

[[noreturn]] void fail_at(const SourceLoc& loc, const std::string& msg) {
  throw Error("torch::jit: " + to_string(loc) + ": " + msg);
}

bool truth(const IValue& v, const SourceLoc& loc) {
  if (v.isBool()) return v.toBool();
  if (v.isInt()) return v.toInt() != 0;
  if (v.isDouble()) return v.toDouble() != 0;
  if (v.isNone()) return false;
  if (v.isTensor()) return v.toTensor().item().toBool();
  fail_at(loc, std::string("a ") + v.tag_name() + " is not a condition");
}

enum class Flow { Normal, Return, Break, Continue };

class Interpreter {
 public:
  explicit Interpreter(const CompilationUnit& unit) : unit_(unit), stack_(ValueStack::current()) {}

  // Runs `fn` on the arguments pushed from `base` up (positional, then the values of
  // `kwnames`), which become the first slots of its frame. The caller pops the frame.
  IValue call(const Function& fn, size_t base, const std::vector<std::string>& kwnames, const SourceLoc& caller) {
    if (++depth_ > kMaxCallDepth) {
      --depth_;
      fail_at(caller, "maximum TorchScript call depth (" + std::to_string(kMaxCallDepth) + ") exceeded");
    }
    struct Leave {
      int& d;
      ~Leave() { --d; }
    } leave{depth_};
    bind(fn, base, kwnames, caller);
    IValue ret;
    exec(fn.body, stack_.at(base), ret);
    return ret;
  }

 private:
  // Positional arguments are already in their slots; keywords move to theirs, defaults fill the
  // rest, and the frame grows to the function's slot count.
  void bind(const Function& fn, size_t base, const std::vector<std::string>& kwnames, const SourceLoc& caller) {
    const size_t npos = stack_.size() - base - kwnames.size();
    const size_t nparams = fn.params.size();
    const size_t method = fn.is_method;
    auto signature = [&] {
      std::ostringstream os;
      size_t required = 0;
      for (size_t i = method; i < nparams; ++i) required += !fn.params[i].default_value;
      os << fn.qualified_name << "() expects " << required;
      if (required != nparams - method) os << " to " << nparams - method;
      os << " input(s) (";
      for (size_t i = method; i < nparams; ++i) os << (i > method ? ", " : "") << fn.params[i].name;
      os << ")";
      return os.str();
    };
    if (npos > nparams) fail_at(caller, signature() + ", got " + std::to_string(npos - method));
    if (npos == nparams && kwnames.empty()) {  // the common case
      for (size_t i = nparams; i < static_cast<size_t>(fn.num_slots); ++i) stack_.push(IValue());
      return;
    }
    std::vector<IValue> keywords;
    for (size_t k = 0; k < kwnames.size(); ++k) keywords.push_back(std::move(*stack_.at(base + npos + k)));
    stack_.pop_to(base + npos);
    for (size_t i = npos; i < static_cast<size_t>(fn.num_slots); ++i) stack_.push(IValue());
    IValue* f = stack_.at(base);
    // Which parameters have a value: by position, then by keyword.
    std::vector<bool> set(nparams, false);
    for (size_t i = 0; i < npos; ++i) set[i] = true;
    for (size_t k = 0; k < kwnames.size(); ++k) {
      size_t i = 0;
      while (i < nparams && fn.params[i].name != kwnames[k]) ++i;
      if (i == nparams) fail_at(caller, signature() + ": no input named '" + kwnames[k] + "'");
      if (set[i]) fail_at(caller, signature() + ": input '" + kwnames[k] + "' given twice");
      f[i] = std::move(keywords[k]);
      set[i] = true;
    }
    for (size_t i = 0; i < nparams; ++i) {
      if (set[i]) continue;
      if (!fn.params[i].default_value)
        fail_at(caller, signature() + ", got " + std::to_string(npos - method) + " (missing '" + fn.params[i].name +
                            "')");
      f[i] = eval(*fn.params[i].default_value, f);
    }
  }

  Flow exec(const std::vector<StmtPtr>& body, IValue* f, IValue& ret) {
    for (const StmtPtr& sp : body) {
      const Stmt& s = *sp;
      switch (s.kind) {
        case Stmt::Kind::Assign: assign(*s.target, eval(*s.value, f), f); break;
        case Stmt::Kind::Expr: eval(*s.value, f); break;
        case Stmt::Kind::Return:
          ret = s.value ? eval(*s.value, f) : IValue();
          return Flow::Return;
        case Stmt::Kind::Pass: break;
        case Stmt::Kind::Break: return Flow::Break;
        case Stmt::Kind::Continue: return Flow::Continue;
        case Stmt::Kind::If: {
          const Flow flow = exec(truth(eval(*s.value, f), s.loc) ? s.body : s.orelse, f, ret);
          if (flow != Flow::Normal) return flow;
          break;
        }
        case Stmt::Kind::For: {
          const IValue seq = eval(*s.value, f);
          std::vector<IValue> items;
          if (seq.isList() || seq.isTuple()) {
            items = seq.isList() ? seq.toListRef() : seq.toTuple()->elements();
          } else if (seq.isGenericDict()) {
            for (const DictEntry& e : seq.toGenericDict().entries()) items.push_back(e.key());
          } else if (seq.isTensor()) {
            for (const Tensor& t : unbind(seq.toTensor(), 0)) items.emplace_back(t);
          } else {
            fail_at(s.loc, std::string("cannot iterate over a ") + seq.tag_name());
          }
          for (IValue& item : items) {
            assign(*s.target, std::move(item), f);
            const Flow flow = exec(s.body, f, ret);
            if (flow == Flow::Return) return flow;
            if (flow == Flow::Break) break;
          }
          break;
        }
        case Stmt::Kind::While: {
          while (truth(eval(*s.value, f), s.loc)) {
            const Flow flow = exec(s.body, f, ret);
            if (flow == Flow::Return) return flow;
            if (flow == Flow::Break) break;
          }
          break;
        }
      }
    }
    return Flow::Normal;
  }

  void assign(const Expr& target, IValue v, IValue* f) {
    switch (target.kind) {
      case Expr::Kind::Local: f[target.slot] = std::move(v); return;
      case Expr::Kind::Tuple: {
        std::vector<IValue> items;
        if (v.isTuple())
          items = v.toTuple()->elements();
        else if (v.isList())
          items = v.toListRef();
        else
          fail_at(target.loc, std::string("cannot unpack a ") + v.tag_name());
        if (items.size() != target.kids.size())
          fail_at(target.loc, "cannot unpack " + std::to_string(items.size()) + " values into " +
                                  std::to_string(target.kids.size()) + " names");
        for (size_t i = 0; i < items.size(); ++i) assign(*target.kids[i], std::move(items[i]), f);
        return;
      }
      case Expr::Kind::Attr: {
        const IValue obj = eval(*target.kids[0], f);
        if (!obj.isObject()) fail_at(target.loc, std::string("cannot set an attribute of a ") + obj.tag_name());
        Object& o = obj.toObjectRef();
        if (IValue* slot = o.find(target.name_id))
          *slot = std::move(v);
        else
          o.attrs.push_back({target.name, target.name_id, std::move(v)});
        return;
      }
      default: fail_at(target.loc, "cannot assign to this expression");
    }
  }

  IValue eval(const Expr& e, IValue* f) {
    switch (e.kind) {
      case Expr::Kind::Const: return e.value;
      case Expr::Kind::Local: return f[e.slot];
      case Expr::Kind::Global: return global(e);
      case Expr::Kind::Attr: {
        const IValue obj = eval(*e.kids[0], f);
        if (!obj.isObject()) fail_at(e.loc, std::string("a ") + obj.tag_name() + " has no attribute '" + e.name + "'");
        Object& o = obj.toObjectRef();
        if (IValue* v = o.find(e.name_id)) return *v;
        for (const auto& [k, v] : o.type->constants)
          if (k == e.name) return v;
        fail_at(e.loc, "'" + o.type->qualified_name + "' object has no attribute '" + e.name + "'");
      }
      case Expr::Kind::Call: return call_expr(e, f);
      case Expr::Kind::Tuple:
      case Expr::Kind::List: {
        std::vector<IValue> items;
        items.reserve(e.kids.size());
        for (const auto& k : e.kids) items.push_back(eval(*k, f));
        if (e.kind == Expr::Kind::List) return IValue(std::move(items));
        return IValue(std::make_shared<ivalue::Tuple>(std::move(items)));
      }
      case Expr::Kind::Dict: {
        GenericDict d;
        for (size_t i = 0; i + 1 < e.kids.size(); i += 2) d.insert_or_assign(eval(*e.kids[i], f), eval(*e.kids[i + 1], f));
        return IValue(std::move(d));
      }
      case Expr::Kind::And: return truth(eval(*e.kids[0], f), e.loc) ? IValue(truth(eval(*e.kids[1], f), e.loc)) : IValue(false);
      case Expr::Kind::Or: return truth(eval(*e.kids[0], f), e.loc) ? IValue(true) : IValue(truth(eval(*e.kids[1], f), e.loc));
      case Expr::Kind::IfExp: return eval(*e.kids[truth(eval(*e.kids[0], f), e.loc) ? 1 : 2], f);
    }
    fail_at(e.loc, "unsupported expression");
  }

  // A global name used as a value: a tensor constant or a function.
  IValue global(const Expr& e) {
    static const std::string kConstants = "CONSTANTS.c";
    if (e.name.compare(0, kConstants.size(), kConstants) == 0) {
      const std::string index = e.name.substr(kConstants.size());
      if (!index.empty() && index.size() < 10 && index.find_first_not_of("0123456789") == std::string::npos) {
        const size_t i = std::stoul(index);
        if (i < unit_.constants.size()) return unit_.constants[i];
      }
      fail_at(e.loc, "constant " + e.name + " is not in constants.pkl (which holds " +
                         std::to_string(unit_.constants.size()) + ")");
    }
    if (unit_.find_function(e.name)) return IValue(FunctionRef{e.name});
    fail_at(e.loc, "unknown name '" + e.name + "'");
  }

  void push_args(const Expr& e, IValue* f) {
    for (size_t i = 1; i < e.kids.size(); ++i) stack_.push(eval(*e.kids[i], f));
  }

  // A builtin's arguments by reference: locals and constants as they are, anything else
  // evaluated onto the value stack (which never moves its values). `self` first if given.
  IValue run_builtin(const std::vector<const Builtin*>& overloads, const Expr& e, IValue* f, const IValue* self,
                     const std::string& name) {
    const IValue* refs[kMaxBuiltinArgs];
    size_t n = 0;
    if (e.kids.size() - 1 + (self != nullptr) > kMaxBuiltinArgs)
      fail_at(e.loc, name + " is given more than " + std::to_string(kMaxBuiltinArgs) + " arguments");
    if (self) refs[n++] = self;
    for (size_t i = 1; i < e.kids.size(); ++i) {
      const Expr& a = *e.kids[i];
      if (a.kind == Expr::Kind::Local) {
        refs[n++] = &f[a.slot];
      } else if (a.kind == Expr::Kind::Const) {
        refs[n++] = &a.value;
      } else {
        stack_.push(eval(a, f));
        refs[n++] = stack_.at(stack_.size() - 1);
      }
    }
    return call_builtin(overloads, refs, n, e.kwnames, name, e.loc);
  }

  // A NamedTuple built from its fields, given by position or by name (all of them).
  IValue named_tuple(const ClassType& cls, const Expr& e, IValue* f) {
    const size_t nfields = cls.fields.size(), nkw = e.kwnames.size(), npos = e.kids.size() - 1 - nkw;
    std::vector<IValue> items(nfields);
    std::vector<bool> set(nfields, false);
    if (npos > nfields)
      fail_at(e.loc, cls.qualified_name + "() takes " + std::to_string(nfields) + " fields, got " + std::to_string(npos));
    for (size_t i = 0; i < npos; ++i) {
      items[i] = eval(*e.kids[1 + i], f);
      set[i] = true;
    }
    for (size_t k = 0; k < nkw; ++k) {
      const auto it = std::find(cls.fields.begin(), cls.fields.end(), e.kwnames[k]);
      if (it == cls.fields.end() || set[static_cast<size_t>(it - cls.fields.begin())])
        fail_at(e.loc, cls.qualified_name + "(): unknown or repeated field '" + e.kwnames[k] + "'");
      const auto i = static_cast<size_t>(it - cls.fields.begin());
      items[i] = eval(*e.kids[1 + npos + k], f);
      set[i] = true;
    }
    for (size_t i = 0; i < nfields; ++i)
      if (!set[i]) fail_at(e.loc, cls.qualified_name + "(): missing field '" + cls.fields[i] + "'");
    return IValue(std::make_shared<ivalue::Tuple>(std::move(items)));
  }

  IValue call_expr(const Expr& e, IValue* f) {
    const Expr& callee = *e.kids[0];
    const StackMark mark(stack_);
    switch (callee.kind) {
      case Expr::Kind::Global: {
        if (callee.named_tuple) return named_tuple(*callee.named_tuple, e, f);
        if (!callee.function && !callee.builtins)
          fail_at(e.loc, "unknown builtin '" + callee.name +
                             "': Ember's TorchScript interpreter does not implement it (docs/jit.md lists what it runs)");
        if (callee.builtins) return run_builtin(*callee.builtins, e, f, nullptr, callee.name);
        push_args(e, f);
        return call(*callee.function, mark.base, e.kwnames, e.loc);
      }
      case Expr::Kind::Attr: {
        IValue self = eval(*callee.kids[0], f);
        if (self.isObject()) {
          const ClassType& type = *self.toObjectRef().type;
          const Function* m = type.method(callee.name_id);
          if (!m) fail_at(e.loc, "'" + type.qualified_name + "' has no method '" + callee.name + "'");
          stack_.push(std::move(self));
          push_args(e, f);
          return call(*m, mark.base, e.kwnames, e.loc);
        }
        // Methods of tensors and lists are the builtins of the same name with self first.
        const std::string name = "aten::" + callee.name;
        const auto* overloads = find_builtin(name);
        if (!overloads) fail_at(e.loc, std::string("unknown method '") + callee.name + "' of a " + self.tag_name());
        return run_builtin(*overloads, e, f, &self, name);
      }
      default: {
        const IValue fn = eval(callee, f);
        if (fn.tag() != IValue::Tag::Function) fail_at(e.loc, std::string("a ") + fn.tag_name() + " is not callable");
        const Function* target = unit_.find_function(fn.toFunction().qualified_name);
        if (!target) fail_at(e.loc, "unknown function '" + fn.toFunction().qualified_name + "'");
        push_args(e, f);
        return call(*target, mark.base, e.kwnames, e.loc);
      }
    }
  }

  const CompilationUnit& unit_;
  ValueStack& stack_;
  int depth_ = 0;
};

}  // namespace

void CompilationUnit::resolve() {
  for (auto& [name, fn] : functions_) resolve_function(*this, *fn);
  for (auto& [name, cls] : classes_)
    for (auto& [m, fn] : cls->methods) {
      resolve_function(*this, *fn);
      const auto id = static_cast<size_t>(intern(m));
      if (cls->methods_by_id.size() <= id) cls->methods_by_id.resize(id + 1);
      cls->methods_by_id[id] = fn.get();
    }
}

ValueStack::ValueStack() : data_(static_cast<IValue*>(::operator new(kCapacity * sizeof(IValue)))) {}
ValueStack::~ValueStack() {
  pop_to(0);
  ::operator delete(data_);
}

ValueStack& ValueStack::current() {
  thread_local ValueStack stack;
  return stack;
}

void ValueStack::push(IValue v) {
  if (size_ == kCapacity)
    throw Error("torch::jit: the interpreter's value stack is full (" + std::to_string(kCapacity) +
                " values in the running calls)");
  new (data_ + size_) IValue(std::move(v));
  ++size_;
}

IValue call_function(const CompilationUnit& unit, const Function& fn, std::vector<IValue> args) {
  Interpreter interpreter(unit);
  ValueStack& stack = ValueStack::current();
  const StackMark mark(stack);
  for (IValue& v : args) stack.push(std::move(v));
  return interpreter.call(fn, mark.base, {}, fn.loc);
}

}  // namespace ember::jit
