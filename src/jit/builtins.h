// The builtins that TorchScript code calls (torch.*, ops.prim.*, torch.nn.functional.*, Python's
// len/range/getattr...), each one row of one table (builtins.cpp): its name, PyTorch's schema
// (argument names, types, defaults, keyword-only marker) and the Ember call.
#pragma once
#include <string>
#include <vector>

#include "jit/script.h"

namespace ember::jit {

struct SchemaArg {
  // The schema's type names (Tensor, Scalar, int, ScalarType, Layout, MemoryFormat, float, bool,
  // str, Device, int[], float[], Tensor[], Tensor?[], t[], t; num: int or float; None: a Generator,
  // which only None binds), parsed once. `optional` for a trailing '?'.
  enum class Type { Tensor, Scalar, Num, Int, Float, Bool, Str, Device, IntList, FloatList, TensorList, OptionalTensorList, List, Any, None };
  std::string name;
  Type type = Type::Any;
  std::string type_name;  // as the schema spells it: "int[2]", "Tensor?"
  bool optional = false;
  bool has_default = false;
  IValue default_value;
  bool kwarg_only = false;
};

// A builtin takes at most this many arguments (schema and varargs alike).
constexpr size_t kMaxBuiltinArgs = 64;

// A builtin's arguments in schema order (defaults filled in), borrowed: the caller's locals,
// constants of the code or the schema, or temporaries on the value stack.
struct Args {
  const IValue* const* refs;
  size_t count;
  const IValue& operator[](size_t i) const { return *refs[i]; }
  size_t size() const { return count; }
};

struct Builtin {
  std::string name;  // aten::add, prim::RaiseException
  std::string schema;  // as written in the table, for messages
  std::vector<SchemaArg> args;
  bool varargs = false;  // a trailing `...`: any further positional arguments
  size_t positional = 0;  // arguments before `*`
  IValue (*fn)(Args args);
};

// The overloads of the builtin that code names `name` (torch.relu, torch.nn.functional.relu,
// torch._C._nn.linear, ops.aten.relu, ops.prim.RaiseException, len), or null if unknown.
const std::vector<const Builtin*>* find_builtin(const std::string& name);

// PyTorch's ScalarType number of a dtype, as TorchScript code spells dtype arguments, and back
// (ember::Error for a number that is not a dtype Ember has).
int64_t scalar_type_code(ScalarType t);
ScalarType scalar_type_of_code(int64_t code);

// The first overload accepting `values` as all its arguments in schema order (keyword-only ones
// given by position too; missing trailing ones must have defaults), or null: how fx records an
// op call, whose C++ arguments follow the schema's order.
const Builtin* match_positional(const std::vector<const Builtin*>& overloads, const IValue* values, size_t n);

// Binds the `n` arguments `refs` (positional, then the values of `kwnames`) to the first overload
// that accepts them and runs it. ember::Error naming the builtin and `loc` if none does, or if
// the op fails.
IValue call_builtin(const std::vector<const Builtin*>& overloads, const IValue* const* refs, size_t n,
                    const std::vector<std::string>& kwnames, const std::string& name, const SourceLoc& loc);

}  // namespace ember::jit
