#include "fx/graph_format.h"

#include <charconv>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

#include "ember/error.h"
#include "serialize/json.h"

namespace ember::fx::format {

namespace {
using serialize::Json;

const Json& member(const Json& j, std::string_view key, Json::Kind kind, const std::string& what, const char* where) {
  const Json* m = j.is_object() ? j.find(key) : nullptr;
  EMBER_CHECK(m && m->kind() == kind, what.c_str(), where, " needs a member '", std::string(key), "' of the right kind");
  return *m;
}

int64_t parse_int(const std::string& s, const std::string& what) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  EMBER_CHECK(ec == std::errc() && end == s.data() + s.size() && !s.empty(), what.c_str(), "bad integer '", s, "'");
  return v;
}

double parse_float(const std::string& s, const std::string& what) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  EMBER_CHECK(ec == std::errc() && end == s.data() + s.size() && !s.empty(), what.c_str(), "bad float '", s, "'");
  return v;
}

struct Reader {
  const std::string& what;
  std::unordered_map<std::string, size_t> index;  // names of the nodes read so far

  Arg arg(const Json& j, const std::string& node) {
    Arg a;
    switch (j.kind()) {
      case Json::Kind::Null: return a;
      case Json::Kind::Bool:
        a.kind = Arg::Kind::Bool;
        a.b = j.boolean();
        return a;
      case Json::Kind::Object: break;
      default: ::ember::detail::fail(what.c_str(), "node '", node, "': an argument must be null, a bool or an object");
    }
    EMBER_CHECK(j.members().size() == 1, what.c_str(), "node '", node, "': an argument object has one member");
    const std::string& key = j.members()[0].first;
    const Json& v = j.members()[0].second;
    auto text = [&]() -> const std::string& {
      EMBER_CHECK(v.is_string(), what.c_str(), "node '", node, "': '", key, "' takes a string");
      return v.text();
    };
    if (key == "int") {
      a.kind = Arg::Kind::Int;
      a.i = parse_int(text(), what);
    } else if (key == "float") {
      a.kind = Arg::Kind::Float;
      a.d = parse_float(text(), what);
    } else if (key == "str") {
      a.kind = Arg::Kind::Str;
      a.str = text();
    } else if (key == "node") {
      auto it = index.find(text());
      EMBER_CHECK(it != index.end(), what.c_str(), "node '", node, "' reads '", text(), "', which is not an earlier node");
      a.kind = Arg::Kind::Node;
      a.node = it->second;
    } else if (key == "list" || key == "tuple" || key == "values") {
      EMBER_CHECK(v.is_array(), what.c_str(), "node '", node, "': '", key, "' takes an array");
      a.kind = key == "list" ? Arg::Kind::List : key == "tuple" ? Arg::Kind::Tuple : Arg::Kind::Values;
      for (const Json& e : v.elements()) {
        a.items.push_back(arg(e, node));
        EMBER_CHECK(a.kind != Arg::Kind::Values || (a.items.back().kind != Arg::Kind::Node &&
                                                    a.items.back().kind != Arg::Kind::List &&
                                                    a.items.back().kind != Arg::Kind::Tuple),
                    what.c_str(), "node '", node, "': a constant list holds constants only");
      }
    } else {
      ::ember::detail::fail(what.c_str(), "node '", node, "': unknown argument kind '", key, "'");
    }
    return a;
  }
};

void write_arg(std::string& out, const Arg& a, const std::vector<NodeSpec>& nodes) {
  auto tagged = [&](const char* key, const std::string& text) {
    out += "{\"";
    out += key;
    out += "\": ";
    serialize::append_json_string(out, text);
    out += "}";
  };
  switch (a.kind) {
    case Arg::Kind::None: out += "null"; break;
    case Arg::Kind::Bool: out += a.b ? "true" : "false"; break;
    case Arg::Kind::Int: tagged("int", std::to_string(a.i)); break;
    case Arg::Kind::Float: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", a.d);
      tagged("float", buf);
      break;
    }
    case Arg::Kind::Str: tagged("str", a.str); break;
    case Arg::Kind::Node: tagged("node", nodes.at(a.node).name); break;
    case Arg::Kind::List:
    case Arg::Kind::Tuple:
    case Arg::Kind::Values:
      out += a.kind == Arg::Kind::List ? "{\"list\": [" : a.kind == Arg::Kind::Tuple ? "{\"tuple\": [" : "{\"values\": [";
      for (size_t k = 0; k < a.items.size(); ++k) {
        if (k) out += ", ";
        write_arg(out, a.items[k], nodes);
      }
      out += "]}";
      break;
  }
}
}  // namespace

GraphSpec parse_graph(std::string_view json, const std::string& what) {
  const Json doc = Json::parse(json, what.c_str());
  const Json& version = member(doc, "version", Json::Kind::Number, what, "the graph");
  EMBER_CHECK(version.text() == "1", what.c_str(), "unknown graph version ", version.text());
  GraphSpec spec;
  std::unordered_set<std::string> attrs;
  for (const Json& a : member(doc, "attributes", Json::Kind::Array, what, "the graph").elements()) {
    AttributeSpec s;
    s.name = member(a, "name", Json::Kind::String, what, "an attribute").text();
    s.dtype = member(a, "dtype", Json::Kind::String, what, "an attribute").text();
    for (const Json& d : member(a, "shape", Json::Kind::Array, what, "an attribute").elements()) {
      uint64_t v = 0;
      EMBER_CHECK(d.to_uint64(v) && v <= uint64_t{1} << 62, what.c_str(), "attribute '", s.name, "': bad size in its shape");
      s.shape.push_back(static_cast<int64_t>(v));
    }
    const Json* p = a.find("parameter");
    s.parameter = p && p->is_bool() && p->boolean();
    EMBER_CHECK(attrs.insert(s.name).second, what.c_str(), "attribute '", s.name, "' is listed twice");
    spec.attributes.push_back(std::move(s));
  }
  Reader r{what, {}};
  static const std::unordered_set<std::string> kOps = {"placeholder", "get_attr", "call_function", "call_method",
                                                       "output"};
  for (const Json& n : member(doc, "nodes", Json::Kind::Array, what, "the graph").elements()) {
    NodeSpec s;
    s.name = member(n, "name", Json::Kind::String, what, "a node").text();
    s.op = member(n, "op", Json::Kind::String, what, "a node").text();
    s.target = member(n, "target", Json::Kind::String, what, "a node").text();
    EMBER_CHECK(!s.name.empty() && !s.target.empty(), what.c_str(), "a node needs a name and a target");
    EMBER_CHECK(kOps.count(s.op), what.c_str(), "node '", s.name, "' is a '", s.op,
                "': a saved graph holds placeholder, get_attr, call_function, call_method and output nodes");
    EMBER_CHECK(!r.index.count(s.name), what.c_str(), "two nodes are named '", s.name, "'");
    EMBER_CHECK(spec.nodes.empty() || spec.nodes.back().op != "output", what.c_str(), "node '", s.name,
                "' comes after the output node");
    for (const Json& a : member(n, "args", Json::Kind::Array, what, "a node").elements()) s.args.push_back(r.arg(a, s.name));
    for (const Json& kv : member(n, "kwargs", Json::Kind::Array, what, "a node").elements()) {
      EMBER_CHECK(kv.is_array() && kv.elements().size() == 2 && kv.elements()[0].is_string(), what.c_str(), "node '", s.name,
                  "': a keyword argument is a [name, argument] pair");
      s.kwargs.emplace_back(kv.elements()[0].text(), r.arg(kv.elements()[1], s.name));
    }
    if (s.op == "placeholder" || s.op == "get_attr")
      EMBER_CHECK(s.args.empty() && s.kwargs.empty(), what.c_str(), "node '", s.name, "' takes no arguments");
    if (s.op == "get_attr")
      EMBER_CHECK(attrs.count(s.target), what.c_str(), "node '", s.name, "' reads attribute '", s.target,
                  "', which the file does not list");
    if (s.op == "output")
      EMBER_CHECK(s.args.size() == 1 && s.kwargs.empty(), what.c_str(), "the output node takes one argument");
    r.index[s.name] = spec.nodes.size();
    spec.nodes.push_back(std::move(s));
  }
  EMBER_CHECK(!spec.nodes.empty() && spec.nodes.back().op == "output", what.c_str(), "the graph has no output node");
  return spec;
}

std::string write_graph(const GraphSpec& spec) {
  std::string out = "{\"version\": 1, \"attributes\": [";
  for (size_t i = 0; i < spec.attributes.size(); ++i) {
    const AttributeSpec& a = spec.attributes[i];
    out += i ? ", {\"name\": " : "{\"name\": ";
    serialize::append_json_string(out, a.name);
    out += ", \"dtype\": ";
    serialize::append_json_string(out, a.dtype);
    out += ", \"shape\": [";
    for (size_t k = 0; k < a.shape.size(); ++k) out += (k ? ", " : "") + std::to_string(a.shape[k]);
    out += a.parameter ? "], \"parameter\": true}" : "], \"parameter\": false}";
  }
  out += "], \"nodes\": [";
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    const NodeSpec& n = spec.nodes[i];
    out += i ? ",\n{\"name\": " : "\n{\"name\": ";
    serialize::append_json_string(out, n.name);
    out += ", \"op\": ";
    serialize::append_json_string(out, n.op);
    out += ", \"target\": ";
    serialize::append_json_string(out, n.target);
    out += ", \"args\": [";
    for (size_t k = 0; k < n.args.size(); ++k) {
      if (k) out += ", ";
      write_arg(out, n.args[k], spec.nodes);
    }
    out += "], \"kwargs\": [";
    for (size_t k = 0; k < n.kwargs.size(); ++k) {
      out += k ? ", [" : "[";
      serialize::append_json_string(out, n.kwargs[k].first);
      out += ", ";
      write_arg(out, n.kwargs[k].second, spec.nodes);
      out += "]";
    }
    out += "]}";
  }
  out += "]}";
  return out;
}

}  // namespace ember::fx::format
