// The JSON form of an fx graph, as fx::save writes it into a safetensors file's metadata.
// Kept free of Tensor so that the fuzz target compiles it alone (fuzz/fx_graph_fuzz.cpp).
//
// {"version": 1, "nodes": [{"name": "relu", "op": "call_function", "target": "relu",
//   "args": [{"node": "x"}], "kwargs": [["alpha", {"int": "2"}]]}, ...],
//  "attributes": [{"name": "conv1.weight", "dtype": "F32", "shape": [8, 3, 3, 3], "parameter": true}]}
// An argument is null (None), true/false, {"int": "<decimal>"}, {"float": "<%.17g>"},
// {"str": "..."}, {"node": "<an earlier node's name>"}, or {"list"|"tuple"|"values": [args...]}
// ("values": a constant list, e.g. an int[] argument; "list"/"tuple": ones holding nodes).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ember::fx::format {

struct Arg {
  enum class Kind { None, Bool, Int, Float, Str, Node, List, Tuple, Values };
  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;
  double d = 0;
  std::string str;
  size_t node = 0;  // Node: the index of the node it reads (an earlier one)
  std::vector<Arg> items;
};

struct NodeSpec {
  std::string name, op, target;  // op: placeholder, get_attr, call_function, call_method, output
  std::vector<Arg> args;
  std::vector<std::pair<std::string, Arg>> kwargs;
};

struct AttributeSpec {
  std::string name, dtype;  // dtype as safetensors names it ("F32")
  std::vector<int64_t> shape;
  bool parameter = false;
};

struct GraphSpec {
  std::vector<NodeSpec> nodes;
  std::vector<AttributeSpec> attributes;
};

// Parses and checks a graph: known node kinds (never call_module), unique names, arguments
// that read earlier nodes only, placeholders and get_attr without arguments, get_attr naming a
// listed attribute, one output node, last. ember::Error "<what>: ..." otherwise.
GraphSpec parse_graph(std::string_view json, const std::string& what);
std::string write_graph(const GraphSpec& spec);

}  // namespace ember::fx::format
