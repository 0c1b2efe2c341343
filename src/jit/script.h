// The parsed form of a TorchScript archive's code: expressions and statements of the subset
// that torch.jit.save prints (docs/jit.md), the classes and free functions of its code/ files,
// and the module objects of data.pkl.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/jit.h"

namespace ember::jit {

struct Builtin;
struct Function;
struct ClassType;

// Where a piece of code came from, for error messages: "code/__torch__/x.py:12".
struct SourceLoc {
  const std::string* file = nullptr;
  int line = 0;
};
std::string to_string(const SourceLoc& loc);

struct Expr {
  enum class Kind {
    Const,     // value
    Local,     // slot
    Global,    // name: a dotted name that is not a local (torch.relu, CONSTANTS.c0, __torch__.f)
    Attr,      // kids[0].name
    Call,      // kids[0](kids[1..]); the last kwnames.size() arguments are keywords
    Tuple,     // (kids...)
    List,      // [kids...]
    Dict,      // {kids[0]: kids[1], ...}
    And,       // kids[0] and kids[1]
    Or,        // kids[0] or kids[1]
    IfExp,     // kids[1] if kids[0] else kids[2]
  };
  Kind kind;
  SourceLoc loc;
  IValue value;
  int slot = -1;
  std::string name;
  std::vector<std::unique_ptr<Expr>> kids;
  std::vector<std::string> kwnames;
  // A Global callee, resolved once all files are parsed (CompilationUnit::resolve): a function
  // of the archive or else a builtin's overloads; neither if unknown (an error when run, so
  // code on paths never taken may use what Ember lacks).
  const Function* function = nullptr;
  const std::vector<const Builtin*>* builtins = nullptr;
  const ClassType* named_tuple = nullptr;  // a NamedTuple class: the call builds a tuple of its fields
  // Attr (and the Attr callee of a method call): `name` interned by the CompilationUnit, so
  // attributes and methods are found by comparing ints.
  int name_id = -1;
};
using ExprPtr = std::unique_ptr<Expr>;

struct Stmt {
  enum class Kind { Assign, Expr, Return, If, For, While, Pass, Break, Continue };
  Kind kind;
  SourceLoc loc;
  ExprPtr target;  // Assign, For: a Local, Attr, or a Tuple of them
  ExprPtr value;   // Assign, Expr, Return (null: None), If and While condition, For iterable
  std::vector<std::unique_ptr<Stmt>> body, orelse;
};
using StmtPtr = std::unique_ptr<Stmt>;

struct Param {
  std::string name;
  ExprPtr default_value;  // null if required
};

struct Function {
  std::string qualified_name;  // __torch__.torch.nn.functional.relu, or Class.method
  SourceLoc loc;
  std::vector<Param> params;  // methods: params[0] is self
  bool is_method = false;
  int num_slots = 0;          // params take slots 0..params.size()-1
  std::vector<StmtPtr> body;
};

struct ClassType {
  std::string qualified_name;
  std::unordered_map<std::string, std::unique_ptr<Function>> methods;
  std::vector<std::string> parameters, buffers;  // __parameters__, __buffers__
  std::vector<std::pair<std::string, IValue>> constants;  // `name : Final[T] = value`
  // A NamedTuple (torch.nn.utils.rnn.PackedSequence): its instances are tuples of `fields`.
  bool named_tuple = false;
  std::vector<std::string> fields;
  std::vector<const Function*> methods_by_id;  // indexed by interned name (CompilationUnit::resolve)
  const Function* method(const std::string& name) const {
    auto it = methods.find(name);
    return it == methods.end() ? nullptr : it->second.get();
  }
  const Function* method(int id) const {
    return id >= 0 && static_cast<size_t>(id) < methods_by_id.size() ? methods_by_id[static_cast<size_t>(id)] : nullptr;
  }
};

// Everything parsed from one archive's code/ files, plus its tensor constants.
class CompilationUnit {
 public:
  // Parses one code file: `module` is its Python module name (__torch__.torch.nn.modules.linear).
  void parse_file(const std::string& path, const std::string& module, const std::string& source);
  const ClassType* find_class(const std::string& qualified_name) const;
  const Function* find_function(const std::string& qualified_name) const;
  // Links each call of a global name to its function or builtin, interns attribute and method
  // names.
  void resolve();
  // The id of a name (attribute or method), made on first use. Only while loading: the unit is
  // read-only once a module runs.
  int intern(const std::string& name);
  int id_of(const std::string& name) const;  // -1 if never interned

  std::vector<IValue> constants;  // CONSTANTS.c<i>
  // What Module::save writes back unchanged: the loaded archive's directory name and its entries
  // but data.pkl, data/ (the module's tensors, written anew) and extra/ (the caller's files), by
  // path inside the directory, inflated.
  std::string archive_name;
  std::vector<std::pair<std::string, std::string>> archived;

 private:
  std::vector<std::unique_ptr<std::string>> files_;  // paths, referred to by SourceLoc
  std::unordered_map<std::string, std::unique_ptr<ClassType>> classes_;
  std::unordered_map<std::string, std::unique_ptr<Function>> functions_;
  std::unordered_map<std::string, int> ids_;
};

// An instance of a TorchScript class (a module): its attributes in data.pkl's order.
struct Object {
  struct Attr {
    std::string name;
    int id;  // interned by the unit; -1 for a name its code never uses
    IValue value;
  };
  const ClassType* type = nullptr;
  std::shared_ptr<const CompilationUnit> unit;  // keeps the code alive
  std::vector<Attr> attrs;

  IValue* find(const std::string& name) {
    for (Attr& a : attrs)
      if (a.name == name) return &a.value;
    return nullptr;
  }
  IValue* find(int id) {
    for (Attr& a : attrs)
      if (a.id == id) return &a.value;
    return nullptr;
  }
};

// The values of the running calls (frames' locals, builtins' arguments) on one contiguous stack
// per thread, so that a call allocates nothing. It never reallocates: a frame's values stay put
// while calls above it run.
class ValueStack {
 public:
  static constexpr size_t kCapacity = size_t{1} << 17;
  ValueStack();
  ~ValueStack();
  ValueStack(const ValueStack&) = delete;
  ValueStack& operator=(const ValueStack&) = delete;
  static ValueStack& current();  // this thread's

  size_t size() const { return size_; }
  IValue* at(size_t i) { return data_ + i; }
  void push(IValue v);  // ember::Error past kCapacity values
  void pop_to(size_t n) {
    while (size_ > n) data_[--size_].~IValue();
  }

 private:
  IValue* data_;
  size_t size_ = 0;
};

// Pops what was pushed since it was made, also when an exception leaves the scope.
struct StackMark {
  ValueStack& stack;
  size_t base;
  explicit StackMark(ValueStack& s) : stack(s), base(s.size()) {}
  ~StackMark() { stack.pop_to(base); }
};

// Runs `fn` with `args` (self first for methods; missing trailing arguments take defaults).
IValue call_function(const CompilationUnit& unit, const Function& fn, std::vector<IValue> args);

}  // namespace ember::jit
