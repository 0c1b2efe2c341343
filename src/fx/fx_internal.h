// What the tracer, the GraphModule and the file reader share: ops found by name in the jit's
// builtin table (src/jit/builtins.cpp), which both TorchScript and fx graphs call.
#pragma once
#include <string>

#include "ember/fx.h"
#include "jit/builtins.h"

namespace ember::fx {

using jit::Builtin;

// The overloads of a call_function target ("add", "getitem"), or null if no op has that name.
const std::vector<const Builtin*>* find_overloads(const std::string& target);

// The overload of `target` taking `values` in schema order; ember::Error naming the op (and
// `node`, if given) otherwise.
const Builtin& find_op(const std::string& target, const jit::IValue* values, size_t n, const std::string& node);

// A Scalar as the graph holds it: a bool, an int or a float.
jit::IValue scalar_value(const Scalar& s, const char* op);

}  // namespace ember::fx
