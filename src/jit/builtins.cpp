// The builtin table: one row per overload, PyTorch's schema beside the Ember call. Adding a
// builtin is adding a row (docs/jit.md). Rows of one name are overloads, tried in order.
#include "jit/builtins.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <unordered_map>

#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/linalg.h"
#include "ember/linalg_functions.h"
#include "ember/aten_tail.h"
#include "ember/aten_tail2.h"
#include "ember/nn/functional/activation.h"
#include "ember/nn/modules/loss.h"
#include "ember/nn/utils/rnn.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/quantized.h"
#include "ember/reduce.h"
#include "ember/shape.h"

namespace ember::jit {

namespace {

const Tensor& T(const IValue& v) { return v.toTensor(); }
// Tensor? arguments: None is the undefined Tensor Ember's ops take for "absent".
Tensor opt(const IValue& v) { return v.isNone() ? Tensor() : v.toTensor(); }
std::optional<Tensor> optional(const IValue& v) { return v.isNone() ? std::nullopt : std::optional<Tensor>(T(v)); }
// int[N] arguments accept one int for all N.
std::vector<int64_t> ints(const IValue& v) { return v.isInt() ? std::vector<int64_t>{v.toInt()} : v.toIntVector(); }
std::vector<int64_t> ints(const IValue& v, size_t n) {
  return v.isInt() ? std::vector<int64_t>(n, v.toInt()) : v.toIntVector();
}
Scalar S(const IValue& v) { return v.toScalar(); }

// int? and float? arguments.
std::optional<int64_t> jit_row_opt_int(const IValue& v) { return v.isNone() ? std::nullopt : std::optional<int64_t>(v.toInt()); }
std::optional<std::string_view> jit_row_opt_str(const IValue& v) {
  return v.isNone() ? std::nullopt : std::optional<std::string_view>(v.toStringRef());
}
std::optional<double> jit_row_opt_double(const IValue& v) {
  return v.isNone() ? std::nullopt : std::optional<double>(v.toDouble());
}

// PyTorch's ScalarType numbering, as code spells dtype arguments and prim::dtype gives them.
constexpr std::pair<int64_t, ScalarType> kDtypeCodes[] = {{0, kByte},  {1, kChar},  {2, kShort},  {3, kInt},
                                                          {4, kLong},  {5, kHalf},  {6, kFloat},  {7, kDouble},
                                                          {11, kBool}, {12, kQInt8},  {13, kQUInt8}, {14, kQInt32},
                                                          {15, kBFloat16}};

std::optional<ScalarType> dtype(const IValue& v) {
  if (v.isNone()) return std::nullopt;
  for (const auto& [code, t] : kDtypeCodes)
    if (code == v.toInt()) return t;
  throw Error("dtype code " + std::to_string(v.toInt()) + " is not a dtype Ember has");
}

int64_t dtype_code(ScalarType t) {
  for (const auto& [code, dt] : kDtypeCodes)
    if (dt == t) return code;
  throw Error(std::string("dtype ") + to_string(t) + " has no TorchScript code in Ember");
}

// PyTorch's MemoryFormat numbering (contiguous_format, preserve_format, channels_last,
// channels_last_3d), which is Ember's enum order.
MemoryFormat memory_format(const IValue& v) {
  const int64_t code = v.toInt();
  if (code < 0 || code > static_cast<int64_t>(MemoryFormat::ChannelsLast3d))
    throw Error("memory format code " + std::to_string(code) + " is not a memory format");
  return static_cast<MemoryFormat>(code);
}

std::vector<IValue> elements(const IValue& v) { return v.isTuple() ? v.toTuple()->elements() : v.toListRef(); }
std::vector<Tensor> tensors(const IValue& v) {
  std::vector<Tensor> out;
  for (const IValue& e : elements(v)) out.push_back(e.toTensor());
  return out;
}

// Tensor?[] arguments (index's indices): None for a dim taken whole.
std::vector<std::optional<Tensor>> optional_tensors(const IValue& v) {
  std::vector<std::optional<Tensor>> out;
  for (const IValue& e : elements(v)) out.push_back(optional(e));
  return out;
}

IValue tuple_of(std::vector<IValue> elems) { return IValue(std::make_shared<ivalue::Tuple>(std::move(elems))); }
template <class... T>
IValue tuple_of(const std::tuple<T...>& t) {
  return std::apply([](const auto&... e) { return tuple_of(std::vector<IValue>{IValue(e)...}); }, t);
}

// Python's int and float arithmetic: int op int stays int, anything with a float is float.
IValue arith(const IValue& a, const IValue& b, char op) {
  if (!a.isDouble() && !b.isDouble()) {
    const int64_t x = a.toInt(), y = b.toInt();
    int64_t r = 0;
    bool overflow = false;
    switch (op) {
      case '+': overflow = __builtin_add_overflow(x, y, &r); break;
      case '-': overflow = __builtin_sub_overflow(x, y, &r); break;
      case '*': overflow = __builtin_mul_overflow(x, y, &r); break;
      case '/':
      case '%':
        if (y == 0) throw Error("integer division or modulo by zero");
        if (y == -1) {  // x / -1 overflows for the smallest int64
          overflow = op == '/' && __builtin_sub_overflow(int64_t{0}, x, &r);
          break;
        }
        r = op == '/' ? x / y - ((x % y != 0) && ((x < 0) != (y < 0)))  // floor division
                      : ((x % y) + y) % y;
        break;
    }
    if (overflow) throw Error("integer overflow in " + std::to_string(x) + " " + op + " " + std::to_string(y));
    return IValue(r);
  }
  const double x = a.toDouble(), y = b.toDouble();
  switch (op) {
    case '+': return IValue(x + y);
    case '-': return IValue(x - y);
    case '*': return IValue(x * y);
    case '/': return IValue(std::floor(x / y));
    case '%': return IValue(x - std::floor(x / y) * y);
  }
  return IValue();
}
int compare(const IValue& a, const IValue& b) {
  if (a.isString() && b.isString()) return a.toStringRef().compare(b.toStringRef());
  if (!a.isDouble() && !b.isDouble()) return a.toInt() < b.toInt() ? -1 : a.toInt() > b.toInt();
  return a.toDouble() < b.toDouble() ? -1 : a.toDouble() > b.toDouble();
}
bool equal(const IValue& a, const IValue& b) {
  if (a.isScalar() && b.isScalar()) return compare(a, b) == 0;
  if (a.isString() && b.isString()) return a.toStringRef() == b.toStringRef();
  if ((a.isList() || a.isTuple()) && (b.isList() || b.isTuple())) {
    const auto x = elements(a), y = elements(b);
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!equal(x[i], y[i])) return false;
    return true;
  }
  return a.is(b);
}

int64_t normalize_index(int64_t i, size_t n) {
  const int64_t size = static_cast<int64_t>(n);
  if (i < 0) i += size;
  if (i < 0 || i >= size) throw Error("index " + std::to_string(i) + " out of range for a sequence of " +
                                      std::to_string(size));
  return i;
}

// Python's str.format with positional {} fields, as TorchScript's aten::format.
IValue format(Args a) {
  const std::string& f = a[0].toStringRef();
  std::ostringstream os;
  size_t next = 1;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] == '{' && i + 1 < f.size() && f[i + 1] == '}') {
      if (next < a.size()) {
        if (a[next].isString())
          os << a[next].toStringRef();
        else
          os << a[next];
        ++next;
      }
      ++i;
    } else {
      os << f[i];
    }
  }
  return IValue(os.str());
}

Tensor convolution(Args a) {
  // _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, ...)
  const Tensor& x = T(a[0]);
  const Tensor& w = T(a[1]);
  const size_t n = static_cast<size_t>(std::max<int64_t>(w.dim() - 2, 1));
  const auto stride = ints(a[3], n), padding = ints(a[4], n), dilation = ints(a[5], n);
  const int64_t groups = a[8].toInt();
  if (a[6].toBool()) {
    const auto out_pad = ints(a[7], n);
    if (n == 1) return conv_transpose1d(x, w, opt(a[2]), stride, padding, out_pad, groups, dilation);
    if (n == 2) return conv_transpose2d(x, w, opt(a[2]), stride, padding, out_pad, groups, dilation);
    throw Error("transposed convolution of " + std::to_string(n) + " spatial dims is not supported");
  }
  if (n == 1) return conv1d(x, w, opt(a[2]), stride, padding, dilation, groups);
  if (n == 2) return conv2d(x, w, opt(a[2]), stride, padding, dilation, groups);
  if (n == 3) return conv3d(x, w, opt(a[2]), stride, padding, dilation, groups);
  throw Error("convolution of " + std::to_string(n) + " spatial dims is not supported");
}

IValue getitem(Args a) {
  if (a[0].isGenericDict()) return a[0].toGenericDict().at(a[1]);
  if (a[0].isString()) {
    const std::string& s = a[0].toStringRef();
    return IValue(std::string(1, s[static_cast<size_t>(normalize_index(a[1].toInt(), s.size()))]));
  }
  if (a[0].isTensor()) return IValue(T(a[0]).select(0, a[1].toInt()));
  if (a[0].isTuple()) {
    const auto& e = a[0].toTuple()->elements();
    return e[static_cast<size_t>(normalize_index(a[1].toInt(), e.size()))];
  }
  const auto& items = a[0].list_data()->items;
  return items[static_cast<size_t>(normalize_index(a[1].toInt(), items.size()))];
}

IValue len(Args a) {
  if (a[0].isTensor()) {
    if (T(a[0]).dim() == 0) throw Error("len() of a 0-d tensor");
    return IValue(T(a[0]).size(0));
  }
  if (a[0].isString()) return IValue(static_cast<int64_t>(a[0].toStringRef().size()));
  if (a[0].isGenericDict()) return IValue(static_cast<int64_t>(a[0].toGenericDict().size()));
  return IValue(static_cast<int64_t>(elements(a[0]).size()));
}

// range() is materialized as a list (TorchScript loops over it); larger ones are refused rather
// than exhausting memory.
constexpr int64_t kMaxRange = int64_t{1} << 24;

// The length of range(start, stop, step), computed without overflow.
__int128 range_length(int64_t start, int64_t stop, int64_t step) {
  if (step == 0) throw Error("range() arg 3 must not be zero");
  const __int128 span = static_cast<__int128>(stop) - start;
  return step > 0 ? (span > 0 ? (span + step - 1) / step : 0) : (span < 0 ? (span + step + 1) / step : 0);
}

IValue range(int64_t start, int64_t stop, int64_t step) {
  const __int128 n = range_length(start, stop, step);
  if (n > kMaxRange)
    throw Error("range(" + std::to_string(start) + ", " + std::to_string(stop) + ", " + std::to_string(step) +
                ") has more than " + std::to_string(kMaxRange) + " elements");
  std::vector<IValue> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t k = 0; k < static_cast<int64_t>(n); ++k) out.emplace_back(start + k * step);  // between start and stop
  return IValue(std::move(out));
}

IValue get_attr(Args a) {
  Object& obj = a[0].toObjectRef();
  if (IValue* v = obj.find(a[1].toStringRef())) return *v;
  for (const auto& [k, v] : obj.type->constants)
    if (k == a[1].toStringRef()) return v;
  throw Error("'" + obj.type->qualified_name + "' object has no attribute '" + a[1].toStringRef() + "'");
}

Tensor dropout_in_place(Args a) {
  Tensor x = T(a[0]);
  if (a[2].toBool() && a[1].toDouble() > 0) x.copy_(dropout(x, a[1].toDouble(), true));
  return x;
}

// A tensor given where code wants a number, converted as TorchScript's IntImplicit,
// FloatImplicit and ScalarImplicit do: a 0-dim tensor only (not one that requires grad while
// grad mode is on), and of an integral dtype for an int.
IValue implicit_number(const Tensor& t, SchemaArg::Type type) {
  const char* op = "implicit tensor-to-number conversion";
  EMBER_CHECK(!(t.requires_grad() && GradMode::is_enabled()), op,
              "Cannot input a tensor that requires grad as a scalar argument");
  EMBER_CHECK(t.dim() == 0, op, "Cannot input a tensor of dimension other than 0 as a scalar argument (got size ",
              t.sizes(), ")");
  if (type == SchemaArg::Type::Int) {
    EMBER_CHECK(is_integral_type(t.dtype(), false), op, "Cannot input a tensor of type ", to_string(t.dtype()),
                " as an integral argument");
    return IValue(t.item().toLong());
  }
  if (type == SchemaArg::Type::Float) return IValue(t.item().toDouble());
  const Scalar v = t.item();
  if (v.isBoolean()) return IValue(v.toBool());
  if (v.isIntegral(false)) return IValue(v.toLong());
  return IValue(v.toDouble());
}

struct Row {
  const char* name;
  const char* schema;
  IValue (*fn)(Args);
};

// Unary tensor ops: the functional and the in-place form.
#define EMBER_JIT_UNARY(op)                                                   \
  Row{"aten::" #op, "Tensor self", [](Args a) -> IValue { return op(T(a[0])); }}, \
      Row{"aten::" #op "_", "Tensor self", [](Args a) -> IValue {               \
            Tensor t = T(a[0]);                                               \
            op##_(t);                                                         \
            return t;                                                         \
          }}

// Recurrent sequence ops (gru, rnn_tanh, rnn_relu): the padded and the packed overload.
#define EMBER_JIT_RNN(op)                                                                                       \
  Row{"aten::" #op, "Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, "      \
      "bool train, bool bidirectional, bool batch_first",                                                           \
      [](Args a) -> IValue {                                                                                        \
        return tuple_of(op(T(a[0]), T(a[1]), tensors(a[2]), a[3].toBool(), a[4].toInt(), a[5].toDouble(),            \
                           a[6].toBool(), a[7].toBool(), a[8].toBool()));                                          \
      }},                                                                                                           \
      Row{"aten::" #op, "Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, "            \
          "int num_layers, float dropout, bool train, bool bidirectional",                                          \
          [](Args a) -> IValue {                                                                                    \
            return tuple_of(op(T(a[0]), T(a[1]), T(a[2]), tensors(a[3]), a[4].toBool(), a[5].toInt(),               \
                               a[6].toDouble(), a[7].toBool(), a[8].toBool()));                                     \
          }}

const Row kRows[] = {
    // ---- arithmetic: tensors, then Python numbers ----
    {"aten::add", "Tensor self, Tensor other, *, Scalar alpha=1", [](Args a) -> IValue { return add(T(a[0]), T(a[1]), S(a[2])); }},
    {"aten::add", "Tensor self, Scalar other, Scalar alpha=1", [](Args a) -> IValue { return add(T(a[0]), S(a[1]), S(a[2])); }},
    {"aten::add", "num a, num b", [](Args a) { return arith(a[0], a[1], '+'); }},
    {"aten::add", "str a, str b", [](Args a) { return IValue(a[0].toStringRef() + a[1].toStringRef()); }},
    {"aten::add", "t[] a, t[] b", [](Args a) {
       auto out = a[0].toListRef();
       for (const IValue& v : a[1].toListRef()) out.push_back(v);
       return IValue(std::move(out));
     }},
    {"aten::add_", "Tensor self, Tensor other, *, Scalar alpha=1", [](Args a) -> IValue { Tensor t = T(a[0]); t.add_(T(a[1]), S(a[2])); return t; }},
    {"aten::add_", "Tensor self, Scalar other, Scalar alpha=1", [](Args a) -> IValue { Tensor t = T(a[0]); t.add_(S(a[1]), S(a[2])); return t; }},
    {"aten::sub", "Tensor self, Tensor other, *, Scalar alpha=1", [](Args a) -> IValue { return sub(T(a[0]), T(a[1]), S(a[2])); }},
    {"aten::sub", "Tensor self, Scalar other, Scalar alpha=1", [](Args a) -> IValue { return sub(T(a[0]), S(a[1]), S(a[2])); }},
    {"aten::sub", "num a, num b", [](Args a) { return arith(a[0], a[1], '-'); }},
    {"aten::sub_", "Tensor self, Tensor other, *, Scalar alpha=1", [](Args a) -> IValue { Tensor t = T(a[0]); t.sub_(T(a[1]), S(a[2])); return t; }},
    {"aten::rsub", "Tensor self, Tensor other, *, Scalar alpha=1", [](Args a) -> IValue { return rsub(T(a[0]), T(a[1]), S(a[2])); }},
    {"aten::rsub", "Tensor self, Scalar other, Scalar alpha=1", [](Args a) -> IValue { return rsub(T(a[0]), S(a[1]), S(a[2])); }},
    {"aten::mul", "Tensor self, Tensor other", [](Args a) -> IValue { return mul(T(a[0]), T(a[1])); }},
    {"aten::mul", "Tensor self, Scalar other", [](Args a) -> IValue { return mul(T(a[0]), S(a[1])); }},
    {"aten::mul", "Scalar self, Tensor other", [](Args a) -> IValue { return mul(T(a[1]), S(a[0])); }},
    {"aten::mul", "num a, num b", [](Args a) { return arith(a[0], a[1], '*'); }},
    {"aten::mul_", "Tensor self, Tensor other", [](Args a) -> IValue { Tensor t = T(a[0]); t.mul_(T(a[1])); return t; }},
    {"aten::mul_", "Tensor self, Scalar other", [](Args a) -> IValue { Tensor t = T(a[0]); t.mul_(S(a[1])); return t; }},
    {"aten::quantize_per_tensor", "Tensor self, float scale, int zero_point, ScalarType dtype",
     [](Args a) -> IValue { return quantize_per_tensor(T(a[0]), a[1].toDouble(), a[2].toInt(), *dtype(a[3])); }},
    {"aten::quantize_per_tensor", "Tensor self, Tensor scale, Tensor zero_point, ScalarType dtype",
     [](Args a) -> IValue { return quantize_per_tensor(T(a[0]), T(a[1]), T(a[2]), *dtype(a[3])); }},
    {"aten::dequantize", "Tensor self", [](Args a) -> IValue { return T(a[0]).dequantize(); }},
    {"aten::div", "Tensor self, Tensor other", [](Args a) -> IValue { return div(T(a[0]), T(a[1])); }},
    {"aten::div", "Tensor self, Scalar other", [](Args a) -> IValue { return div(T(a[0]), S(a[1])); }},
    {"aten::div", "Tensor self, Tensor other, *, str? rounding_mode",
     [](Args a) -> IValue { return div(T(a[0]), T(a[1]), jit_row_opt_str(a[2])); }},
    {"aten::div", "Tensor self, Scalar other, *, str? rounding_mode",
     [](Args a) -> IValue { return div(T(a[0]), S(a[1]), jit_row_opt_str(a[2])); }},
    {"aten::div", "num a, num b", [](Args a) {
       if (a[1].toDouble() == 0) throw Error("division by zero");
       return IValue(a[0].toDouble() / a[1].toDouble());
     }},
    {"aten::floordiv", "num a, num b", [](Args a) { return arith(a[0], a[1], '/'); }},
    {"aten::remainder", "Tensor self, Scalar other", [](Args a) -> IValue { return remainder(T(a[0]), S(a[1])); }},
    {"aten::remainder", "num a, num b", [](Args a) { return arith(a[0], a[1], '%'); }},
    {"aten::pow", "Tensor self, Scalar exponent", [](Args a) -> IValue { return pow(T(a[0]), S(a[1])); }},
    {"aten::pow", "Tensor self, Tensor exponent", [](Args a) -> IValue { return pow(T(a[0]), T(a[1])); }},
    {"aten::pow", "num a, num b", [](Args a) -> IValue { return std::pow(a[0].toDouble(), a[1].toDouble()); }},  // float, as TorchScript's
    {"aten::neg", "Tensor self", [](Args a) -> IValue { return neg(T(a[0])); }},
    {"aten::neg", "num a", [](Args a) -> IValue { return a[0].isDouble() ? IValue(-a[0].toDouble()) : arith(IValue(0), a[0], '-'); }},
    {"aten::matmul", "Tensor self, Tensor other", [](Args a) -> IValue { return matmul(T(a[0]), T(a[1])); }},
    {"aten::mm", "Tensor self, Tensor mat2", [](Args a) -> IValue { return mm(T(a[0]), T(a[1])); }},
    {"aten::bmm", "Tensor self, Tensor mat2", [](Args a) -> IValue { return bmm(T(a[0]), T(a[1])); }},
    {"aten::addmm", "Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1",
     [](Args a) -> IValue { return addmm(T(a[0]), T(a[1]), T(a[2]), S(a[3]), S(a[4])); }},
    {"aten::linear", "Tensor input, Tensor weight, Tensor? bias=None",
     [](Args a) -> IValue { return linear(T(a[0]), T(a[1]), optional(a[2])); }},

    // ---- comparisons and logic ----
    {"aten::eq", "Tensor self, Tensor other", [](Args a) -> IValue { return eq(T(a[0]), T(a[1])); }},
    {"aten::eq", "Tensor self, Scalar other", [](Args a) -> IValue { return eq(T(a[0]), S(a[1])); }},
    {"aten::eq", "t a, t b", [](Args a) -> IValue { return equal(a[0], a[1]); }},
    {"aten::ne", "Tensor self, Tensor other", [](Args a) -> IValue { return ne(T(a[0]), T(a[1])); }},
    {"aten::ne", "Tensor self, Scalar other", [](Args a) -> IValue { return ne(T(a[0]), S(a[1])); }},
    {"aten::ne", "t a, t b", [](Args a) -> IValue { return !equal(a[0], a[1]); }},
    {"aten::lt", "Tensor self, Scalar other", [](Args a) -> IValue { return lt(T(a[0]), S(a[1])); }},
    {"aten::lt", "Tensor self, Tensor other", [](Args a) -> IValue { return lt(T(a[0]), T(a[1])); }},
    {"aten::lt", "t a, t b", [](Args a) -> IValue { return compare(a[0], a[1]) < 0; }},
    {"aten::le", "Tensor self, Scalar other", [](Args a) -> IValue { return le(T(a[0]), S(a[1])); }},
    {"aten::le", "Tensor self, Tensor other", [](Args a) -> IValue { return le(T(a[0]), T(a[1])); }},
    {"aten::le", "t a, t b", [](Args a) -> IValue { return compare(a[0], a[1]) <= 0; }},
    {"aten::gt", "Tensor self, Scalar other", [](Args a) -> IValue { return gt(T(a[0]), S(a[1])); }},
    {"aten::gt", "Tensor self, Tensor other", [](Args a) -> IValue { return gt(T(a[0]), T(a[1])); }},
    {"aten::gt", "t a, t b", [](Args a) -> IValue { return compare(a[0], a[1]) > 0; }},
    {"aten::ge", "Tensor self, Scalar other", [](Args a) -> IValue { return ge(T(a[0]), S(a[1])); }},
    {"aten::ge", "Tensor self, Tensor other", [](Args a) -> IValue { return ge(T(a[0]), T(a[1])); }},
    {"aten::ge", "t a, t b", [](Args a) -> IValue { return compare(a[0], a[1]) >= 0; }},
    {"aten::__is__", "t self, t obj", [](Args a) -> IValue { return a[0].is(a[1]); }},
    {"aten::__isnot__", "t self, t obj", [](Args a) -> IValue { return !a[0].is(a[1]); }},
    {"aten::__not__", "bool self", [](Args a) -> IValue { return !a[0].toBool(); }},
    {"aten::__contains__", "t container, t el", [](Args a) -> IValue {
       if (a[0].isGenericDict()) return a[0].toGenericDict().contains(a[1]);
       if (a[0].isString()) return a[0].toStringRef().find(a[1].toStringRef()) != std::string::npos;
       for (const IValue& v : elements(a[0]))
         if (equal(v, a[1])) return true;
       return false;
     }},

    // ---- activations and other elementwise ops ----
    EMBER_JIT_UNARY(relu), EMBER_JIT_UNARY(sigmoid), EMBER_JIT_UNARY(tanh), EMBER_JIT_UNARY(hardswish),
    EMBER_JIT_UNARY(hardsigmoid), EMBER_JIT_UNARY(silu), EMBER_JIT_UNARY(exp), EMBER_JIT_UNARY(log),
    EMBER_JIT_UNARY(sqrt), EMBER_JIT_UNARY(rsqrt), EMBER_JIT_UNARY(abs), EMBER_JIT_UNARY(erf),
    EMBER_JIT_UNARY(sign), EMBER_JIT_UNARY(exp2), EMBER_JIT_UNARY(expm1), EMBER_JIT_UNARY(log2),
    EMBER_JIT_UNARY(log10), EMBER_JIT_UNARY(log1p), EMBER_JIT_UNARY(sin), EMBER_JIT_UNARY(cos), EMBER_JIT_UNARY(tan),
    EMBER_JIT_UNARY(asin), EMBER_JIT_UNARY(acos), EMBER_JIT_UNARY(atan), EMBER_JIT_UNARY(erfc), EMBER_JIT_UNARY(erfinv),
    EMBER_JIT_UNARY(floor), EMBER_JIT_UNARY(ceil), EMBER_JIT_UNARY(round), EMBER_JIT_UNARY(trunc),
    EMBER_JIT_UNARY(reciprocal), EMBER_JIT_UNARY(square),
    {"aten::gelu", "Tensor self, *, str approximate='none'", [](Args a) -> IValue { return gelu(T(a[0]), a[1].toStringRef()); }},
    {"aten::leaky_relu", "Tensor self, Scalar negative_slope=0.01", [](Args a) -> IValue { return leaky_relu(T(a[0]), S(a[1])); }},
    {"aten::hardtanh", "Tensor self, Scalar min_val=-1, Scalar max_val=1", [](Args a) -> IValue { return hardtanh(T(a[0]), S(a[1]), S(a[2])); }},
    {"aten::hardtanh_", "Tensor self, Scalar min_val=-1, Scalar max_val=1", [](Args a) -> IValue {
       Tensor t = T(a[0]);
       return hardtanh_(t, S(a[1]), S(a[2]));
     }},
    {"aten::clamp", "Tensor self, Scalar? min=None, Scalar? max=None", [](Args a) -> IValue {
       return clamp(T(a[0]), a[1].isNone() ? std::nullopt : std::optional<Scalar>(S(a[1])),
                    a[2].isNone() ? std::nullopt : std::optional<Scalar>(S(a[2])));
     }},
    {"aten::relu6", "Tensor self", [](Args a) -> IValue { return clamp(T(a[0]), Scalar(0), Scalar(6)); }},
    {"aten::elu", "Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1",
     [](Args a) -> IValue { return elu(T(a[0]), S(a[1]), S(a[2]), S(a[3])); }},
    {"aten::masked_fill", "Tensor self, Tensor mask, Scalar value", [](Args a) -> IValue { return masked_fill(T(a[0]), T(a[1]), S(a[2])); }},
    {"aten::masked_fill", "Tensor self, Tensor mask, Tensor value", [](Args a) -> IValue { return masked_fill(T(a[0]), T(a[1]), T(a[2])); }},
    {"aten::where", "Tensor condition, Tensor self, Tensor other", [](Args a) -> IValue { return where(T(a[0]), T(a[1]), T(a[2])); }},
    {"aten::where", "Tensor condition, Tensor self, Scalar other", [](Args a) -> IValue { return where(T(a[0]), T(a[1]), S(a[2])); }},
    {"aten::where", "Tensor condition, Scalar self, Tensor other", [](Args a) -> IValue { return where(T(a[0]), S(a[1]), T(a[2])); }},
    {"aten::scaled_dot_product_attention",
     "Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False",
     [](Args a) -> IValue {
       return scaled_dot_product_attention(T(a[0]), T(a[1]), T(a[2]), opt(a[3]), a[4].toDouble(), a[5].toBool());
     }},
    {"aten::softmax", "Tensor self, int dim, ScalarType? dtype=None", [](Args a) -> IValue { return softmax(T(a[0]), a[1].toInt(), dtype(a[2])); }},
    {"aten::log_softmax", "Tensor self, int dim, ScalarType? dtype=None", [](Args a) -> IValue { return log_softmax(T(a[0]), a[1].toInt(), dtype(a[2])); }},

    // ---- neural-network layers ----
    {"aten::_convolution", "Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, "
     "bool transposed, int[] output_padding, int groups, bool benchmark, bool deterministic, bool cudnn_enabled, bool allow_tf32",
     [](Args a) -> IValue { return convolution(a); }},
    {"aten::conv1d", "Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, int[] padding=0, int[] dilation=1, int groups=1",
     [](Args a) -> IValue { return conv1d(T(a[0]), T(a[1]), opt(a[2]), ints(a[3], 1), ints(a[4], 1), ints(a[5], 1), a[6].toInt()); }},
    {"aten::conv2d", "Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, int[] padding=0, int[] dilation=1, int groups=1",
     [](Args a) -> IValue { return conv2d(T(a[0]), T(a[1]), opt(a[2]), ints(a[3], 2), ints(a[4], 2), ints(a[5], 2), a[6].toInt()); }},
    {"aten::conv2d", "Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, str padding=\"valid\", int[] dilation=1, int groups=1",
     [](Args a) -> IValue { return conv2d(T(a[0]), T(a[1]), opt(a[2]), ints(a[3], 2), PaddingMode(a[4].toStringRef()), ints(a[5], 2), a[6].toInt()); }},
    {"aten::conv3d", "Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, int[] padding=0, int[] dilation=1, int groups=1",
     [](Args a) -> IValue { return conv3d(T(a[0]), T(a[1]), opt(a[2]), ints(a[3], 3), ints(a[4], 3), ints(a[5], 3), a[6].toInt()); }},
    {"aten::batch_norm", "Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
     "bool training, float momentum, float eps, bool cudnn_enabled=True",
     [](Args a) -> IValue {
       return batch_norm(T(a[0]), opt(a[1]), opt(a[2]), opt(a[3]), opt(a[4]), a[5].toBool(), a[6].toDouble(), a[7].toDouble());
     }},
    {"aten::layer_norm", "Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True",
     [](Args a) -> IValue { return layer_norm(T(a[0]), ints(a[1]), opt(a[2]), opt(a[3]), a[4].toDouble()); }},
    {"aten::group_norm", "Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enabled=True",
     [](Args a) -> IValue { return group_norm(T(a[0]), a[1].toInt(), opt(a[2]), opt(a[3]), a[4].toDouble()); }},
    {"aten::max_pool2d", "Tensor self, int[] kernel_size, int[] stride=[], int[] padding=0, int[] dilation=1, bool ceil_mode=False",
     [](Args a) -> IValue {
       const auto stride = ints(a[2], 2);
       return max_pool2d(T(a[0]), ints(a[1], 2), stride, ints(a[3], 2), ints(a[4], 2), a[5].toBool());
     }},
    {"aten::avg_pool2d", "Tensor self, int[] kernel_size, int[] stride=[], int[] padding=0, bool ceil_mode=False, "
     "bool count_include_pad=True, int? divisor_override=None",
     [](Args a) -> IValue {
       return avg_pool2d(T(a[0]), ints(a[1], 2), ints(a[2], 2), ints(a[3], 2), a[4].toBool(), a[5].toBool(),
                         a[6].isNone() ? std::nullopt : std::optional<int64_t>(a[6].toInt()));
     }},
    {"aten::adaptive_avg_pool2d", "Tensor self, int[] output_size", [](Args a) -> IValue { return adaptive_avg_pool2d(T(a[0]), ints(a[1], 2)); }},
    {"aten::adaptive_max_pool2d", "Tensor self, int[] output_size",
     [](Args a) -> IValue { return tuple_of(ember::adaptive_max_pool2d(T(a[0]), ints(a[1], 2))); }},
    {"aten::dropout", "Tensor input, float p, bool train", [](Args a) -> IValue { return dropout(T(a[0]), a[1].toDouble(), a[2].toBool()); }},
    {"aten::dropout_", "Tensor self, float p, bool train", [](Args a) -> IValue { return dropout_in_place(a); }},
    {"aten::feature_dropout", "Tensor input, float p, bool train", [](Args a) -> IValue { return feature_dropout(T(a[0]), a[1].toDouble(), a[2].toBool()); }},
    {"aten::pad", "Tensor self, int[] pad, str mode=\"constant\", float? value=None", [](Args a) -> IValue {
       return ember::pad(T(a[0]), ints(a[1]), a[2].toStringRef(), a[3].isNone() ? std::nullopt : std::optional<double>(a[3].toDouble()));
     }},
    {"aten::constant_pad_nd", "Tensor self, int[] pad, Scalar value=0", [](Args a) -> IValue { return constant_pad_nd(T(a[0]), ints(a[1]), S(a[2])); }},
    {"aten::upsample_nearest2d", "Tensor input, int[]? output_size, float[]? scale_factors", [](Args a) -> IValue {
       return ember::interpolate(T(a[0]), a[1].isNone() ? std::nullopt : OptionalIntArrayRef(ints(a[1], 2)),
                          a[2].isNone() ? std::nullopt : std::optional<std::vector<double>>(a[2].toDoubleVector()), "nearest");
     }},
    {"aten::upsample_nearest2d", "Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None",
     [](Args a) -> IValue {
       return upsample_nearest2d(T(a[0]), ints(a[1], 2), jit_row_opt_double(a[2]), jit_row_opt_double(a[3]));
     }},
    {"aten::upsample_nearest1d", "Tensor input, SymInt[]? output_size, float[]? scale_factors", [](Args a) -> IValue {
       return ember::interpolate(T(a[0]), a[1].isNone() ? std::nullopt : OptionalIntArrayRef(ints(a[1], 1)),
                                 a[2].isNone() ? std::nullopt : std::optional<std::vector<double>>(a[2].toDoubleVector()), "nearest");
     }},
    {"aten::upsample_nearest1d", "Tensor self, SymInt[1] output_size, float? scales=None",
     [](Args a) -> IValue { return upsample_nearest1d(T(a[0]), ints(a[1], 1), jit_row_opt_double(a[2])); }},
    {"aten::upsample_nearest3d", "Tensor input, SymInt[]? output_size, float[]? scale_factors", [](Args a) -> IValue {
       const auto size = a[1].isNone() ? std::vector<int64_t>{} : ints(a[1], 3);
       const auto scales = a[2].isNone() ? std::vector<double>{} : a[2].toDoubleVector();
       return upsample_nearest3d(T(a[0]), a[1].isNone() ? OptionalIntArrayRef() : OptionalIntArrayRef(size),
                                 a[2].isNone() ? std::nullopt : std::optional<ArrayRef<double>>(scales));
     }},
    {"aten::upsample_nearest3d", "Tensor self, SymInt[3] output_size, float? scales_d=None, float? scales_h=None, float? scales_w=None",
     [](Args a) -> IValue {
       return upsample_nearest3d(T(a[0]), ints(a[1], 3), jit_row_opt_double(a[2]), jit_row_opt_double(a[3]),
                                 jit_row_opt_double(a[4]));
     }},
    {"aten::upsample_bilinear2d", "Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors",
     [](Args a) -> IValue {
       return ember::interpolate(T(a[0]), a[1].isNone() ? std::nullopt : OptionalIntArrayRef(ints(a[1], 2)),
                                 a[3].isNone() ? std::nullopt : std::optional<std::vector<double>>(a[3].toDoubleVector()),
                                 "bilinear", a[2].toBool());
     }},
    {"aten::upsample_bilinear2d", "Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None",
     [](Args a) -> IValue {
       return upsample_bilinear2d(T(a[0]), ints(a[1], 2), a[2].toBool(), jit_row_opt_double(a[3]), jit_row_opt_double(a[4]));
     }},
#define EMBER_JIT_UPSAMPLE(op, n)                                                                                       \
  Row{"aten::" #op, "Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors",                 \
      [](Args a) -> IValue {                                                                                            \
        const auto size = a[1].isNone() ? std::vector<int64_t>{} : ints(a[1], n);                                       \
        const auto scales = a[3].isNone() ? std::vector<double>{} : a[3].toDoubleVector();                                \
        return op(T(a[0]), a[1].isNone() ? OptionalIntArrayRef() : OptionalIntArrayRef(size), a[2].toBool(),           \
                  a[3].isNone() ? std::nullopt : std::optional<ArrayRef<double>>(scales));                              \
      }}
    EMBER_JIT_UPSAMPLE(upsample_linear1d, 1),
    {"aten::upsample_linear1d", "Tensor self, SymInt[1] output_size, bool align_corners, float? scales=None",
     [](Args a) -> IValue { return upsample_linear1d(T(a[0]), ints(a[1], 1), a[2].toBool(), jit_row_opt_double(a[3])); }},
    EMBER_JIT_UPSAMPLE(upsample_bicubic2d, 2),
    {"aten::upsample_bicubic2d", "Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None",
     [](Args a) -> IValue {
       return upsample_bicubic2d(T(a[0]), ints(a[1], 2), a[2].toBool(), jit_row_opt_double(a[3]), jit_row_opt_double(a[4]));
     }},
    EMBER_JIT_UPSAMPLE(upsample_trilinear3d, 3),
    {"aten::upsample_trilinear3d", "Tensor self, SymInt[3] output_size, bool align_corners, float? scales_d=None, "
     "float? scales_h=None, float? scales_w=None",
     [](Args a) -> IValue {
       return upsample_trilinear3d(T(a[0]), ints(a[1], 3), a[2].toBool(), jit_row_opt_double(a[3]), jit_row_opt_double(a[4]),
                                   jit_row_opt_double(a[5]));
     }},
#undef EMBER_JIT_UPSAMPLE
    {"aten::embedding", "Tensor weight, Tensor indices, int padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False",
     [](Args a) -> IValue { return embedding(T(a[0]), T(a[1]), a[2].toInt(), a[3].toBool(), a[4].toBool()); }},

    // ---- recurrent layers (what nn.RNN/LSTM/GRU and their cells run): the padded form, then a
    // packed sequence's (data, batch_sizes) ----
    {"aten::lstm", "Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, "
     "bool bidirectional, bool batch_first",
     [](Args a) -> IValue {
       return tuple_of(lstm(T(a[0]), tensors(a[1]), tensors(a[2]), a[3].toBool(), a[4].toInt(), a[5].toDouble(),
                            a[6].toBool(), a[7].toBool(), a[8].toBool()));
     }},
    {"aten::lstm", "Tensor data, Tensor batch_sizes, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, "
     "float dropout, bool train, bool bidirectional",
     [](Args a) -> IValue {
       return tuple_of(lstm(T(a[0]), T(a[1]), tensors(a[2]), tensors(a[3]), a[4].toBool(), a[5].toInt(), a[6].toDouble(),
                            a[7].toBool(), a[8].toBool()));
     }},
    EMBER_JIT_RNN(gru), EMBER_JIT_RNN(rnn_tanh), EMBER_JIT_RNN(rnn_relu),
    {"aten::lstm_cell", "Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None",
     [](Args a) -> IValue { return tuple_of(lstm_cell(T(a[0]), tensors(a[1]), T(a[2]), T(a[3]), optional(a[4]), optional(a[5]))); }},
    {"aten::gru_cell", "Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None",
     [](Args a) -> IValue { return gru_cell(T(a[0]), T(a[1]), T(a[2]), T(a[3]), optional(a[4]), optional(a[5])); }},
    {"aten::rnn_tanh_cell", "Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None",
     [](Args a) -> IValue { return rnn_tanh_cell(T(a[0]), T(a[1]), T(a[2]), T(a[3]), optional(a[4]), optional(a[5])); }},
    {"aten::rnn_relu_cell", "Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None",
     [](Args a) -> IValue { return rnn_relu_cell(T(a[0]), T(a[1]), T(a[2]), T(a[3]), optional(a[4]), optional(a[5])); }},
    // pack_padded_sequence and pad_packed_sequence of torch.nn.utils.rnn call these on sorted batches
    {"aten::_pack_padded_sequence", "Tensor input, Tensor lengths, bool batch_first", [](Args a) -> IValue {
       const auto p = nn::utils::rnn::pack_padded_sequence(T(a[0]), T(a[1]), a[2].toBool(), /*enforce_sorted=*/true);
       return tuple_of({IValue(p.data()), IValue(p.batch_sizes())});
     }},
    {"aten::_pad_packed_sequence", "Tensor data, Tensor batch_sizes, bool batch_first, Scalar padding_value, int total_length",
     [](Args a) -> IValue {
       return tuple_of(nn::utils::rnn::pad_packed_sequence(nn::utils::rnn::PackedSequence(T(a[0]), T(a[1])), a[2].toBool(),
                                                           a[3].toDouble(), a[4].toInt()));
     }},

    // ---- shapes ----
    {"aten::flatten", "Tensor self, int start_dim=0, int end_dim=-1", [](Args a) -> IValue { return flatten(T(a[0]), a[1].toInt(), a[2].toInt()); }},
    {"aten::view", "Tensor self, int[] size", [](Args a) -> IValue { return T(a[0]).view(ints(a[1])); }},
    {"aten::reshape", "Tensor self, int[] shape", [](Args a) -> IValue { return reshape(T(a[0]), ints(a[1])); }},
    {"aten::permute", "Tensor self, int[] dims", [](Args a) -> IValue { return permute(T(a[0]), ints(a[1])); }},
    {"aten::transpose", "Tensor self, int dim0, int dim1", [](Args a) -> IValue { return transpose(T(a[0]), a[1].toInt(), a[2].toInt()); }},
    {"aten::t", "Tensor self", [](Args a) -> IValue { return t(T(a[0])); }},
    {"aten::contiguous", "Tensor self, *, int memory_format=0", [](Args a) -> IValue { return T(a[0]).contiguous(memory_format(a[1])); }},
    {"aten::unsqueeze", "Tensor self, int dim", [](Args a) -> IValue { return unsqueeze(T(a[0]), a[1].toInt()); }},
    {"aten::squeeze", "Tensor self, int dim", [](Args a) -> IValue { return squeeze(T(a[0]), a[1].toInt()); }},
    {"aten::squeeze", "Tensor self", [](Args a) -> IValue { return squeeze(T(a[0])); }},
    {"aten::select", "Tensor self, int dim, int index", [](Args a) -> IValue { return select(T(a[0]), a[1].toInt(), a[2].toInt()); }},
    {"aten::slice", "Tensor self, int dim=0, int? start=None, int? end=None, int step=1", [](Args a) -> IValue {
       return slice(T(a[0]), a[1].toInt(), a[2].isNone() ? std::nullopt : std::optional<int64_t>(a[2].toInt()),
                    a[3].isNone() ? std::nullopt : std::optional<int64_t>(a[3].toInt()), a[4].toInt());
     }},
    {"aten::expand", "Tensor self, int[] size, *, bool implicit=False", [](Args a) -> IValue { return T(a[0]).expand(ints(a[1])); }},
    {"aten::index_select", "Tensor self, int dim, Tensor index", [](Args a) -> IValue { return index_select(T(a[0]), a[1].toInt(), T(a[2])); }},
    {"aten::gather", "Tensor self, int dim, Tensor index, *, bool sparse_grad=False", [](Args a) -> IValue { return gather(T(a[0]), a[1].toInt(), T(a[2])); }},
    {"aten::split", "Tensor self, int split_size, int dim=0", [](Args a) -> IValue { return IValue(split(T(a[0]), a[1].toInt(), a[2].toInt())); }},
    // The unsafe_ forms differ from chunk and split only in autograd's view checks.
    {"aten::unsafe_split", "Tensor self, int split_size, int dim=0", [](Args a) -> IValue { return IValue(split(T(a[0]), a[1].toInt(), a[2].toInt())); }},
    {"aten::unsafe_chunk", "Tensor self, int chunks, int dim=0", [](Args a) -> IValue { return IValue(chunk(T(a[0]), a[1].toInt(), a[2].toInt())); }},
    {"aten::index", "Tensor self, Tensor?[] indices", [](Args a) -> IValue { return index(T(a[0]), optional_tensors(a[1])); }},
    {"aten::scatter", "Tensor self, int dim, Tensor index, Tensor src", [](Args a) -> IValue { return scatter(T(a[0]), a[1].toInt(), T(a[2]), T(a[3])); }},
    {"aten::scatter", "Tensor self, int dim, Tensor index, Scalar value", [](Args a) -> IValue { return scatter(T(a[0]), a[1].toInt(), T(a[2]), S(a[3])); }},
    {"aten::scatter_", "Tensor self, int dim, Tensor index, Tensor src", [](Args a) -> IValue {
       Tensor t = T(a[0]);
       t.scatter_(a[1].toInt(), T(a[2]), T(a[3]));
       return t;
     }},
    {"aten::scatter_", "Tensor self, int dim, Tensor index, Scalar value", [](Args a) -> IValue {
       Tensor t = T(a[0]);
       t.scatter_(a[1].toInt(), T(a[2]), S(a[3]));
       return t;
     }},
    {"aten::sort", "Tensor self, int dim=-1, bool descending=False", [](Args a) -> IValue { return tuple_of(sort(T(a[0]), a[1].toInt(), a[2].toBool())); }},
    {"aten::sort", "Tensor self, *, bool? stable, int dim=-1, bool descending=False", [](Args a) -> IValue {
       return tuple_of(sort(T(a[0]), a[1].isNone() ? std::nullopt : std::optional<bool>(a[1].toBool()), a[2].toInt(), a[3].toBool()));
     }},
    {"aten::unbind", "Tensor self, int dim=0", [](Args a) -> IValue { return IValue(unbind(T(a[0]), a[1].toInt())); }},
    {"aten::zeros_like", "Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None",
     [](Args a) -> IValue { return zeros_like(T(a[0]), TensorOptions().dtype(dtype(a[1]).value_or(T(a[0]).dtype()))); }},
    {"aten::ones_like", "Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None",
     [](Args a) -> IValue { return ones_like(T(a[0]), TensorOptions().dtype(dtype(a[1]).value_or(T(a[0]).dtype()))); }},
    // what traced losses call on their input and target
    {"aten::broadcast_tensors", "Tensor[] tensors", [](Args a) -> IValue { return IValue(broadcast_tensors(tensors(a[0]))); }},
    {"aten::cat", "Tensor[] tensors, int dim=0", [](Args a) -> IValue { return cat(tensors(a[0]), a[1].toInt()); }},
    {"aten::stack", "Tensor[] tensors, int dim=0", [](Args a) -> IValue { return stack(tensors(a[0]), a[1].toInt()); }},
    {"aten::chunk", "Tensor self, int chunks, int dim=0", [](Args a) -> IValue { return IValue(chunk(T(a[0]), a[1].toInt(), a[2].toInt())); }},
    {"aten::size", "Tensor self, int dim", [](Args a) -> IValue { return T(a[0]).size(a[1].toInt()); }},
    {"aten::size", "Tensor self", [](Args a) -> IValue {
       const auto s = T(a[0]).sizes();
       return IValue(std::vector<int64_t>(s.begin(), s.end()));
     }},
    {"aten::dim", "Tensor self", [](Args a) -> IValue { return T(a[0]).dim(); }},
    {"aten::numel", "Tensor self", [](Args a) -> IValue { return T(a[0]).numel(); }},
    {"aten::clone", "Tensor self, *, int? memory_format=None", [](Args a) -> IValue { return T(a[0]).clone(); }},
    {"aten::detach", "Tensor self", [](Args a) -> IValue { return T(a[0]).detach(); }},

    // ---- reductions ----
    {"aten::sum", "Tensor self, int[]? dim, bool keepdim=False, *, ScalarType? dtype=None", [](Args a) -> IValue {
       if (a[1].isNone()) return sum(T(a[0]), dtype(a[3]));
       return sum(T(a[0]), ints(a[1]), a[2].toBool(), dtype(a[3]));
     }},
    {"aten::sum", "Tensor self, *, ScalarType? dtype=None", [](Args a) -> IValue { return sum(T(a[0]), dtype(a[1])); }},
    {"aten::mean", "Tensor self, int[]? dim, bool keepdim=False, *, ScalarType? dtype=None", [](Args a) -> IValue {
       if (a[1].isNone()) return mean(T(a[0]), dtype(a[3]));
       return mean(T(a[0]), ints(a[1]), a[2].toBool(), dtype(a[3]));
     }},
    {"aten::mean", "Tensor self, *, ScalarType? dtype=None", [](Args a) -> IValue { return mean(T(a[0]), dtype(a[1])); }},
    {"aten::max", "Tensor self, int dim, bool keepdim=False", [](Args a) -> IValue { return tuple_of(max(T(a[0]), a[1].toInt(), a[2].toBool())); }},
    {"aten::max", "Tensor self", [](Args a) -> IValue { return max(T(a[0])); }},
    {"aten::argmax", "Tensor self, int? dim=None, bool keepdim=False", [](Args a) -> IValue {
       return argmax(T(a[0]), a[1].isNone() ? std::nullopt : std::optional<int64_t>(a[1].toInt()), a[2].toBool());
     }},

    {"aten::prod", "Tensor self, *, ScalarType? dtype=None", [](Args a) -> IValue { return prod(T(a[0]), dtype(a[1])); }},
    {"aten::prod", "Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None",
     [](Args a) -> IValue { return prod(T(a[0]), a[1].toInt(), a[2].toBool(), dtype(a[3])); }},
    {"aten::min", "Tensor self, Tensor other", [](Args a) -> IValue { return minimum(T(a[0]), T(a[1])); }},
    {"aten::min", "Tensor self", [](Args a) -> IValue { return min(T(a[0])); }},
    {"aten::min", "Tensor self, int dim, bool keepdim=False", [](Args a) -> IValue { return tuple_of(min(T(a[0]), a[1].toInt(), a[2].toBool())); }},
    {"aten::max", "Tensor self, Tensor other", [](Args a) -> IValue { return maximum(T(a[0]), T(a[1])); }},
    {"aten::minimum", "Tensor self, Tensor other", [](Args a) -> IValue { return minimum(T(a[0]), T(a[1])); }},
    {"aten::maximum", "Tensor self, Tensor other", [](Args a) -> IValue { return maximum(T(a[0]), T(a[1])); }},
    {"aten::amax", "Tensor self, int[1] dim=[], bool keepdim=False", [](Args a) -> IValue { return amax(T(a[0]), ints(a[1]), a[2].toBool()); }},
    {"aten::amin", "Tensor self, int[1] dim=[], bool keepdim=False", [](Args a) -> IValue { return amin(T(a[0]), ints(a[1]), a[2].toBool()); }},
    {"aten::argmin", "Tensor self, int? dim=None, bool keepdim=False",
     [](Args a) -> IValue { return argmin(T(a[0]), jit_row_opt_int(a[1]), a[2].toBool()); }},
    {"aten::all", "Tensor self", [](Args a) -> IValue { return all(T(a[0])); }},
    {"aten::all", "Tensor self, int dim, bool keepdim=False", [](Args a) -> IValue { return all(T(a[0]), a[1].toInt(), a[2].toBool()); }},
    {"aten::any", "Tensor self", [](Args a) -> IValue { return any(T(a[0])); }},
    {"aten::any", "Tensor self, int dim, bool keepdim=False", [](Args a) -> IValue { return any(T(a[0]), a[1].toInt(), a[2].toBool()); }},
    {"aten::norm", "Tensor self, Scalar p=2", [](Args a) -> IValue { return norm(T(a[0]), S(a[1])); }},
    {"aten::norm", "Tensor self, Scalar? p, int[1] dim, bool keepdim=False", [](Args a) -> IValue {
       return norm(T(a[0]), a[1].isNone() ? std::nullopt : std::optional<Scalar>(S(a[1])), ints(a[2]), a[3].toBool());
     }},
    {"aten::cumprod", "Tensor self, int dim, *, ScalarType? dtype=None",
     [](Args a) -> IValue { return cumprod(T(a[0]), a[1].toInt(), dtype(a[2])); }},
    // var, std and their _mean forms: unbiased (all dims), unbiased over dims, correction over dims.
#define EMBER_JIT_MOMENT(op, wrap)                                                                                  \
  Row{"aten::" #op, "Tensor self, bool unbiased=True", [](Args a) -> IValue { return wrap(ember::op(T(a[0]), a[1].toBool())); }}, \
      Row{"aten::" #op, "Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False", [](Args a) -> IValue {   \
            const std::vector<int64_t> d = a[1].isNone() ? std::vector<int64_t>{} : ints(a[1]);                     \
            return wrap(ember::op(T(a[0]), a[1].isNone() ? OptionalIntArrayRef() : OptionalIntArrayRef(d), a[2].toBool(),   \
                           a[3].toBool()));                                                                          \
          }},                                                                                                        \
      Row{"aten::" #op, "Tensor self, int[1]? dim, *, int? correction, bool keepdim=False", [](Args a) -> IValue {   \
            const std::vector<int64_t> d = a[1].isNone() ? std::vector<int64_t>{} : ints(a[1]);                     \
            return wrap(ember::op(T(a[0]), a[1].isNone() ? OptionalIntArrayRef() : OptionalIntArrayRef(d),                 \
                           jit_row_opt_int(a[2]), a[3].toBool()));                                                   \
          }}
#define EMBER_JIT_TENSOR(x) IValue(x)
#define EMBER_JIT_TUPLE(x) tuple_of(x)
    EMBER_JIT_MOMENT(var, EMBER_JIT_TENSOR), EMBER_JIT_MOMENT(std, EMBER_JIT_TENSOR),
    EMBER_JIT_MOMENT(var_mean, EMBER_JIT_TUPLE), EMBER_JIT_MOMENT(std_mean, EMBER_JIT_TUPLE),
#undef EMBER_JIT_MOMENT
#undef EMBER_JIT_TENSOR
#undef EMBER_JIT_TUPLE

    // ---- sorting and selection ----
    {"aten::topk", "Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True",
     [](Args a) -> IValue { return tuple_of(topk(T(a[0]), a[1].toInt(), a[2].toInt(), a[3].toBool(), a[4].toBool())); }},
    {"aten::argsort", "Tensor self, int dim=-1, bool descending=False",
     [](Args a) -> IValue { return argsort(T(a[0]), a[1].toInt(), a[2].toBool()); }},
    // Ember's sort is always stable, so both values of `stable` give an order PyTorch allows.
    {"aten::argsort", "Tensor self, *, bool stable, int dim=-1, bool descending=False",
     [](Args a) -> IValue { return argsort(T(a[0]), a[2].toInt(), a[3].toBool()); }},
    {"aten::kthvalue", "Tensor self, int k, int dim=-1, bool keepdim=False",
     [](Args a) -> IValue { return tuple_of(kthvalue(T(a[0]), a[1].toInt(), a[2].toInt(), a[3].toBool())); }},
    {"aten::nonzero", "Tensor self", [](Args a) -> IValue { return nonzero(T(a[0])); }},
    {"aten::masked_select", "Tensor self, Tensor mask", [](Args a) -> IValue { return masked_select(T(a[0]), T(a[1])); }},
    {"aten::one_hot", "Tensor self, int num_classes=-1", [](Args a) -> IValue { return one_hot(T(a[0]), a[1].toInt()); }},
    {"aten::scatter_add", "Tensor self, int dim, Tensor index, Tensor src",
     [](Args a) -> IValue { return scatter_add(T(a[0]), a[1].toInt(), T(a[2]), T(a[3])); }},
    {"aten::index_add", "Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1",
     [](Args a) -> IValue { return index_add(T(a[0]), a[1].toInt(), T(a[2]), T(a[3]), S(a[4])); }},
    {"aten::diagonal", "Tensor self, int offset=0, int dim1=0, int dim2=1",
     [](Args a) -> IValue { return T(a[0]).diagonal(a[1].toInt(), a[2].toInt(), a[3].toInt()); }},
    {"aten::unfold", "Tensor self, int dimension, int size, int step",
     [](Args a) -> IValue { return T(a[0]).unfold(a[1].toInt(), a[2].toInt(), a[3].toInt()); }},
    {"aten::bitwise_not", "Tensor self", [](Args a) -> IValue { return bitwise_not(T(a[0])); }},

    // ---- losses (F.nll_loss and F.cross_entropy call these) ----
    {"aten::nll_loss", "Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100",
     [](Args a) -> IValue { return nll_loss(T(a[0]), T(a[1]), opt(a[2]), a[3].toInt(), a[4].toInt()); }},
    {"aten::nll_loss_nd", "Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100",
     [](Args a) -> IValue { return nll_loss_nd(T(a[0]), T(a[1]), optional(a[2]), a[3].toInt(), a[4].toInt()); }},
    {"aten::nll_loss2d", "Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100",
     [](Args a) -> IValue { return nll_loss2d(T(a[0]), T(a[1]), optional(a[2]), a[3].toInt(), a[4].toInt()); }},
    {"aten::cross_entropy_loss", "Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100, "
     "float label_smoothing=0.",
     [](Args a) -> IValue {
       return cross_entropy_loss(T(a[0]), T(a[1]), opt(a[2]), a[3].toInt(), a[4].toInt(), a[5].toDouble());
     }},

    {"aten::mse_loss", "Tensor self, Tensor target, int reduction=1",
     [](Args a) -> IValue { return mse_loss(T(a[0]), T(a[1]), a[2].toInt()); }},
    {"aten::l1_loss", "Tensor self, Tensor target, int reduction=1",
     [](Args a) -> IValue { return l1_loss(T(a[0]), T(a[1]), a[2].toInt()); }},
    {"aten::smooth_l1_loss", "Tensor self, Tensor target, int reduction=1, float beta=1.",
     [](Args a) -> IValue { return smooth_l1_loss(T(a[0]), T(a[1]), a[2].toInt(), a[3].toDouble()); }},
    {"aten::huber_loss", "Tensor self, Tensor target, int reduction=1, float delta=1.",
     [](Args a) -> IValue { return huber_loss(T(a[0]), T(a[1]), a[2].toInt(), a[3].toDouble()); }},
    {"aten::binary_cross_entropy", "Tensor self, Tensor target, Tensor? weight=None, int reduction=1",
     [](Args a) -> IValue { return binary_cross_entropy(T(a[0]), T(a[1]), opt(a[2]), a[3].toInt()); }},
    {"aten::binary_cross_entropy_with_logits", "Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, int reduction=1",
     [](Args a) -> IValue { return binary_cross_entropy_with_logits(T(a[0]), T(a[1]), opt(a[2]), opt(a[3]), a[4].toInt()); }},
    {"aten::kl_div", "Tensor self, Tensor target, int reduction=1, *, bool log_target=False",
     [](Args a) -> IValue { return kl_div(T(a[0]), T(a[1]), a[2].toInt(), a[3].toBool()); }},
    {"aten::hinge_embedding_loss", "Tensor self, Tensor target, float margin=1., int reduction=1",
     [](Args a) -> IValue { return hinge_embedding_loss(T(a[0]), T(a[1]), a[2].toDouble(), a[3].toInt()); }},
    {"aten::multi_margin_loss", "Tensor self, Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None, int reduction=1",
     [](Args a) -> IValue { return multi_margin_loss(T(a[0]), T(a[1]), S(a[2]), S(a[3]), optional(a[4]), a[5].toInt()); }},
    {"aten::multilabel_margin_loss", "Tensor self, Tensor target, int reduction=1",
     [](Args a) -> IValue { return multilabel_margin_loss(T(a[0]), T(a[1]), a[2].toInt()); }},
    {"aten::soft_margin_loss", "Tensor self, Tensor target, int reduction=1",
     [](Args a) -> IValue { return soft_margin_loss(T(a[0]), T(a[1]), a[2].toInt()); }},
    {"aten::poisson_nll_loss", "Tensor input, Tensor target, bool log_input, bool full, float eps, int reduction",
     [](Args a) -> IValue { return poisson_nll_loss(T(a[0]), T(a[1]), a[2].toBool(), a[3].toBool(), a[4].toDouble(), a[5].toInt()); }},
    {"aten::frobenius_norm", "Tensor self", [](Args a) -> IValue { return frobenius_norm(T(a[0])); }},
    {"aten::frobenius_norm", "Tensor self, int[1] dim, bool keepdim=False",
     [](Args a) -> IValue { return frobenius_norm(T(a[0]), ints(a[1]), a[2].toBool()); }},

    // ---- more arithmetic, in-place forms, pools and norms that models call ----
    {"aten::div_", "Tensor self, Tensor other", [](Args a) -> IValue { Tensor t = T(a[0]); t.div_(T(a[1])); return t; }},
    {"aten::div_", "Tensor self, Scalar other", [](Args a) -> IValue { Tensor t = T(a[0]); t.div_(S(a[1])); return t; }},
    {"aten::div_", "Tensor self, Tensor other, *, str? rounding_mode",
     [](Args a) -> IValue { Tensor t = T(a[0]); t.div_(T(a[1]), jit_row_opt_str(a[2])); return t; }},
    {"aten::div_", "Tensor self, Scalar other, *, str? rounding_mode",
     [](Args a) -> IValue { Tensor t = T(a[0]); t.div_(S(a[1]), jit_row_opt_str(a[2])); return t; }},
    {"aten::fmod", "Tensor self, Tensor other", [](Args a) -> IValue { return fmod(T(a[0]), T(a[1])); }},
    {"aten::fmod", "Tensor self, Scalar other", [](Args a) -> IValue { return fmod(T(a[0]), S(a[1])); }},
    {"aten::fmod_", "Tensor self, Tensor other", [](Args a) -> IValue { Tensor t = T(a[0]); t.fmod_(T(a[1])); return t; }},
    {"aten::fmod_", "Tensor self, Scalar other", [](Args a) -> IValue { Tensor t = T(a[0]); t.fmod_(S(a[1])); return t; }},
    {"aten::floor_divide", "Tensor self, Tensor other", [](Args a) -> IValue { return floor_divide(T(a[0]), T(a[1])); }},
    {"aten::floor_divide", "Tensor self, Scalar other", [](Args a) -> IValue { return floor_divide(T(a[0]), S(a[1])); }},
    {"aten::floor_divide_", "Tensor self, Tensor other",
     [](Args a) -> IValue { Tensor t = T(a[0]); t.floor_divide_(T(a[1])); return t; }},
    {"aten::floor_divide_", "Tensor self, Scalar other",
     [](Args a) -> IValue { Tensor t = T(a[0]); t.floor_divide_(S(a[1])); return t; }},
    {"aten::atan2", "Tensor self, Tensor other", [](Args a) -> IValue { return atan2(T(a[0]), T(a[1])); }},
    {"aten::copysign", "Tensor self, Tensor other", [](Args a) -> IValue { return copysign(T(a[0]), T(a[1])); }},
    {"aten::copysign", "Tensor self, Scalar other", [](Args a) -> IValue { return copysign(T(a[0]), S(a[1])); }},
    {"aten::pow_", "Tensor self, Scalar exponent", [](Args a) -> IValue { Tensor t = T(a[0]); t.pow_(S(a[1])); return t; }},
    {"aten::pow_", "Tensor self, Tensor exponent", [](Args a) -> IValue { Tensor t = T(a[0]); t.pow_(T(a[1])); return t; }},
    {"aten::clamp_min_", "Tensor self, Scalar min", [](Args a) -> IValue { Tensor t = T(a[0]); t.clamp_min_(S(a[1])); return t; }},
    {"aten::clamp_min_", "Tensor self, Tensor min", [](Args a) -> IValue { Tensor t = T(a[0]); t.clamp_min_(T(a[1])); return t; }},
    {"aten::clamp_max_", "Tensor self, Scalar max", [](Args a) -> IValue { Tensor t = T(a[0]); t.clamp_max_(S(a[1])); return t; }},
    {"aten::clamp_max_", "Tensor self, Tensor max", [](Args a) -> IValue { Tensor t = T(a[0]); t.clamp_max_(T(a[1])); return t; }},
    {"aten::lerp_", "Tensor self, Tensor end, Scalar weight",
     [](Args a) -> IValue { Tensor t = T(a[0]); t.lerp_(T(a[1]), S(a[2])); return t; }},
    {"aten::lerp_", "Tensor self, Tensor end, Tensor weight",
     [](Args a) -> IValue { Tensor t = T(a[0]); t.lerp_(T(a[1]), T(a[2])); return t; }},
    {"aten::scatter_add_", "Tensor self, int dim, Tensor index, Tensor src",
     [](Args a) -> IValue { Tensor t = T(a[0]); t.scatter_add_(a[1].toInt(), T(a[2]), T(a[3])); return t; }},
    {"aten::index_add_", "Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1",
     [](Args a) -> IValue { Tensor t = T(a[0]); t.index_add_(a[1].toInt(), T(a[2]), T(a[3]), S(a[4])); return t; }},
    {"aten::index_put_", "Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False", [](Args a) -> IValue {
       Tensor t = T(a[0]);
       index_put_(t, optional_tensors(a[1]), T(a[2]), a[3].toBool());
       return t;
     }},
    {"aten::index_put", "Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False",
     [](Args a) -> IValue { return index_put(T(a[0]), optional_tensors(a[1]), T(a[2]), a[3].toBool()); }},
    {"aten::baddbmm", "Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1",
     [](Args a) -> IValue { return baddbmm(T(a[0]), T(a[1]), T(a[2]), S(a[3]), S(a[4])); }},
    {"aten::addmv", "Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1",
     [](Args a) -> IValue { return addmv(T(a[0]), T(a[1]), T(a[2]), S(a[3]), S(a[4])); }},
    {"aten::isclose", "Tensor self, Tensor other, float rtol=1.0000000000000001e-05, float atol=1e-08, bool equal_nan=False",
     [](Args a) -> IValue { return isclose(T(a[0]), T(a[1]), a[2].toDouble(), a[3].toDouble(), a[4].toBool()); }},
    {"aten::nan_to_num", "Tensor self, float? nan=None, float? posinf=None, float? neginf=None", [](Args a) -> IValue {
       return nan_to_num(T(a[0]), jit_row_opt_double(a[1]), jit_row_opt_double(a[2]), jit_row_opt_double(a[3]));
     }},
    {"aten::lgamma", "Tensor self", [](Args a) -> IValue { return lgamma(T(a[0])); }},
    {"aten::lgamma_", "Tensor self", [](Args a) -> IValue { Tensor t = T(a[0]); t.lgamma_(); return t; }},
    {"aten::digamma", "Tensor self", [](Args a) -> IValue { return digamma(T(a[0])); }},
    {"aten::digamma_", "Tensor self", [](Args a) -> IValue { Tensor t = T(a[0]); t.digamma_(); return t; }},
    {"aten::instance_norm", "Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
     "bool use_input_stats, float momentum, float eps, bool cudnn_enabled",
     [](Args a) -> IValue {
       return instance_norm(T(a[0]), opt(a[1]), opt(a[2]), opt(a[3]), opt(a[4]), a[5].toBool(), a[6].toDouble(),
                            a[7].toDouble(), a[8].toBool());
     }},
    {"aten::avg_pool1d", "Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], bool ceil_mode=False, "
     "bool count_include_pad=True",
     [](Args a) -> IValue {
       return avg_pool1d(T(a[0]), ints(a[1], 1), ints(a[2], 1), ints(a[3], 1), a[4].toBool(), a[5].toBool());
     }},
    {"aten::adaptive_avg_pool1d", "Tensor self, int[1] output_size",
     [](Args a) -> IValue { return adaptive_avg_pool1d(T(a[0]), ints(a[1], 1)); }},
    {"aten::_adaptive_avg_pool2d", "Tensor self, SymInt[2] output_size",
     [](Args a) -> IValue { return adaptive_avg_pool2d(T(a[0]), ints(a[1], 2)); }},
    {"aten::full", "SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None",
     [](Args a) -> IValue {
       const auto dt = dtype(a[2]);
       return dt ? full(ints(a[0]), S(a[1]), TensorOptions().dtype(*dt)) : full(ints(a[0]), S(a[1]));
     }},
    {"aten::linspace", "Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None",
     [](Args a) -> IValue { return linspace(S(a[0]), S(a[1]), a[2].toInt(), TensorOptions().dtype(dtype(a[3]).value_or(kFloat))); }},
    {"aten::eye", "int n, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None",
     [](Args a) -> IValue { return eye(a[0].toInt(), TensorOptions().dtype(dtype(a[1]).value_or(kFloat))); }},
    {"aten::eye", "int n, int m, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None",
     [](Args a) -> IValue { return eye(a[0].toInt(), a[1].toInt(), TensorOptions().dtype(dtype(a[2]).value_or(kFloat))); }},

    // ---- random numbers (Ember's global generator; a Generator argument can only be None) ----
    {"aten::rand", "int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None",
     [](Args a) -> IValue { return rand(ints(a[0]), TensorOptions().dtype(dtype(a[1]).value_or(kFloat))); }},
    {"aten::rand", "int[] size, *, Generator? generator, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None",
     [](Args a) -> IValue { return rand(ints(a[0]), TensorOptions().dtype(dtype(a[2]).value_or(kFloat))); }},
    {"aten::randn", "int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None",
     [](Args a) -> IValue { return randn(ints(a[0]), TensorOptions().dtype(dtype(a[1]).value_or(kFloat))); }},
    {"aten::randn", "int[] size, *, Generator? generator, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None",
     [](Args a) -> IValue { return randn(ints(a[0]), TensorOptions().dtype(dtype(a[2]).value_or(kFloat))); }},
    {"aten::randint", "int high, int[] size, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None",
     [](Args a) -> IValue { return randint(a[0].toInt(), ints(a[1]), TensorOptions().dtype(dtype(a[2]).value_or(kLong))); }},
    {"aten::randint", "int low, int high, int[] size, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None",
     [](Args a) -> IValue {
       return randint(a[0].toInt(), a[1].toInt(), ints(a[2]), TensorOptions().dtype(dtype(a[3]).value_or(kLong)));
     }},
    {"aten::randperm", "int n, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None",
     [](Args a) -> IValue { return randperm(a[0].toInt(), TensorOptions().dtype(dtype(a[1]).value_or(kLong))); }},
    {"aten::rand_like", "Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None",
     [](Args a) -> IValue { return rand_like(T(a[0]), TensorOptions().dtype(dtype(a[1]).value_or(T(a[0]).dtype()))); }},
    {"aten::randn_like", "Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None",
     [](Args a) -> IValue { return randn_like(T(a[0]), TensorOptions().dtype(dtype(a[1]).value_or(T(a[0]).dtype()))); }},
    {"aten::bernoulli", "Tensor self, *, Generator? generator=None", [](Args a) -> IValue { return bernoulli(T(a[0])); }},
    {"aten::bernoulli", "Tensor self, float p, *, Generator? generator=None",
     [](Args a) -> IValue { return bernoulli(T(a[0]), a[1].toDouble()); }},
    {"aten::normal", "Tensor mean, Tensor std, *, Generator? generator=None", [](Args a) -> IValue { return normal(T(a[0]), T(a[1])); }},
    {"aten::normal", "Tensor mean, float std=1., *, Generator? generator=None",
     [](Args a) -> IValue { return normal(T(a[0]), full_like(T(a[0]), a[1].toDouble())); }},
    {"aten::normal", "float mean, Tensor std, *, Generator? generator=None",
     [](Args a) -> IValue { return normal(full_like(T(a[1]), a[0].toDouble()), T(a[1])); }},
    {"aten::normal", "float mean, float std, int[] size, *, Generator? generator=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None",
     [](Args a) -> IValue {
       return normal(a[0].toDouble(), a[1].toDouble(), ints(a[2]), nullptr, TensorOptions().dtype(dtype(a[4]).value_or(kFloat)));
     }},
    {"aten::multinomial", "Tensor self, int num_samples, bool replacement=False, *, Generator? generator=None",
     [](Args a) -> IValue { return multinomial(T(a[0]), a[1].toInt(), a[2].toBool()); }},

    // ---- Python builtins and TorchScript's primitives ----
    {"aten::len", "t a", [](Args a) { return len(a); }},
    {"aten::__getitem__", "t container, t index", [](Args a) { return getitem(a); }},
    {"aten::append", "t[] self, t el", [](Args a) {
       a[0].list_data()->items.push_back(a[1]);
       return a[0];
     }},
    // ---- more tensor ops (also what traced fx graphs call) ----
    {"aten::narrow", "Tensor self, int dim, int start, int length",
     [](Args a) -> IValue { return narrow(T(a[0]), a[1].toInt(), a[2].toInt(), a[3].toInt()); }},
    {"aten::repeat", "Tensor self, int[] repeats", [](Args a) -> IValue { return repeat(T(a[0]), ints(a[1])); }},
    {"aten::flip", "Tensor self, int[] dims", [](Args a) -> IValue { return flip(T(a[0]), ints(a[1])); }},
    {"aten::roll", "Tensor self, int[] shifts, int[] dims=[]",
     [](Args a) -> IValue { return roll(T(a[0]), ints(a[1]), ints(a[2])); }},
    {"aten::cumsum", "Tensor self, int dim, *, ScalarType? dtype=None",
     [](Args a) -> IValue { return cumsum(T(a[0]), a[1].toInt(), dtype(a[2])); }},
    {"aten::logsumexp", "Tensor self, int[] dim, bool keepdim=False",
     [](Args a) -> IValue { return logsumexp(T(a[0]), ints(a[1]), a[2].toBool()); }},
    {"aten::clamp_min", "Tensor self, Scalar min", [](Args a) -> IValue { return clamp_min(T(a[0]), S(a[1])); }},
    {"aten::clamp_max", "Tensor self, Scalar max", [](Args a) -> IValue { return clamp_max(T(a[0]), S(a[1])); }},
    {"aten::lerp", "Tensor self, Tensor end, Scalar weight", [](Args a) -> IValue { return lerp(T(a[0]), T(a[1]), S(a[2])); }},
    {"aten::lerp", "Tensor self, Tensor end, Tensor weight", [](Args a) -> IValue { return lerp(T(a[0]), T(a[1]), T(a[2])); }},
    {"aten::softplus", "Tensor self, Scalar beta=1, Scalar threshold=20",
     [](Args a) -> IValue { return softplus(T(a[0]), S(a[1]), S(a[2])); }},
    {"aten::dot", "Tensor self, Tensor tensor", [](Args a) -> IValue { return dot(T(a[0]), T(a[1])); }},
    {"aten::mv", "Tensor self, Tensor vec", [](Args a) -> IValue { return mv(T(a[0]), T(a[1])); }},
    {"aten::outer", "Tensor self, Tensor vec2", [](Args a) -> IValue { return outer(T(a[0]), T(a[1])); }},
    {"aten::copy_", "Tensor self, Tensor src, bool non_blocking=False", [](Args a) -> IValue {
       Tensor t = T(a[0]);
       t.copy_(T(a[1]));
       return t;
     }},
    {"aten::fill_", "Tensor self, Scalar value", [](Args a) -> IValue { Tensor t = T(a[0]); t.fill_(S(a[1])); return t; }},
    {"aten::clamp_", "Tensor self, Scalar? min=None, Scalar? max=None", [](Args a) -> IValue {
       Tensor t = T(a[0]);
       t.clamp_(a[1].isNone() ? std::nullopt : std::optional<Scalar>(S(a[1])),
                a[2].isNone() ? std::nullopt : std::optional<Scalar>(S(a[2])));
       return t;
     }},
    {"aten::masked_fill_", "Tensor self, Tensor mask, Scalar value",
     [](Args a) -> IValue { Tensor t = T(a[0]); t.masked_fill_(T(a[1]), S(a[2])); return t; }},
    {"aten::masked_fill_", "Tensor self, Tensor mask, Tensor value",
     [](Args a) -> IValue { Tensor t = T(a[0]); t.masked_fill_(T(a[1]), T(a[2])); return t; }},
    {"aten::list", "t[] l", [](Args a) { return IValue(a[0].toListRef()); }},
    {"aten::range", "int stop", [](Args a) { return range(0, a[0].toInt(), 1); }},
    {"aten::range", "int start, int stop, int step=1", [](Args a) { return range(a[0].toInt(), a[1].toInt(), a[2].toInt()); }},
    // Scripted loops over range(start, stop, step) count 0..__range_length and derive each value.
    {"aten::__range_length", "int lo, int hi, int step", [](Args a) -> IValue {
       const __int128 n = range_length(a[0].toInt(), a[1].toInt(), a[2].toInt());
       if (n > INT64_MAX) throw Error("range length overflows int64");
       return static_cast<int64_t>(n);
     }},
    {"aten::__derive_index", "int index, int start, int step", [](Args a) -> IValue {
       return arith(a[1], arith(a[0], a[2], '*'), '+');
     }},
    {"aten::getattr", "t obj, str name", [](Args a) { return get_attr(a); }},
    {"aten::format", "str self, ...", [](Args a) { return format(a); }},
    // int(x) and float(x) of code: Python's on numbers, aten::Int/Float (item()) on tensors.
    {"aten::Int", "Tensor a", [](Args a) -> IValue { return T(a[0]).item().toLong(); }},
    {"aten::Int", "num a", [](Args a) -> IValue { return a[0].isDouble() ? static_cast<int64_t>(a[0].toDouble()) : a[0].toInt(); }},
    {"aten::int", "Tensor a", [](Args a) -> IValue { return T(a[0]).item().toLong(); }},
    {"aten::int", "num a", [](Args a) -> IValue { return a[0].isDouble() ? static_cast<int64_t>(a[0].toDouble()) : a[0].toInt(); }},
    {"aten::Float", "Tensor a", [](Args a) -> IValue { return T(a[0]).item().toDouble(); }},
    {"aten::Float", "num a", [](Args a) -> IValue { return a[0].toDouble(); }},
    {"aten::float", "Tensor a", [](Args a) -> IValue { return T(a[0]).item().toDouble(); }},
    {"aten::float", "num a", [](Args a) -> IValue { return a[0].toDouble(); }},
    // The conversions TorchScript makes where code gives a tensor for a number, printed as
    // annotate(number | int | float, x) (the parser calls these); numbers pass unchanged.
    {"aten::ScalarImplicit", "Tensor a", [](Args a) { return implicit_number(T(a[0]), SchemaArg::Type::Scalar); }},
    {"aten::ScalarImplicit", "Scalar a", [](Args a) { return a[0]; }},
    {"aten::IntImplicit", "Tensor a", [](Args a) { return implicit_number(T(a[0]), SchemaArg::Type::Int); }},
    {"aten::IntImplicit", "int a", [](Args a) { return a[0]; }},
    {"aten::FloatImplicit", "Tensor a", [](Args a) { return implicit_number(T(a[0]), SchemaArg::Type::Float); }},
    {"aten::FloatImplicit", "float a", [](Args a) -> IValue { return a[0].toDouble(); }},
    {"aten::Bool", "Tensor a", [](Args a) -> IValue { return T(a[0]).item().toBool(); }},
    {"aten::bool", "t a", [](Args a) -> IValue {
       if (a[0].isTensor()) return T(a[0]).item().toBool();
       return a[0].toDouble() != 0;
     }},
    // Devices are their names; Ember runs on the CPU.
    {"aten::device", "str type", [](Args a) -> IValue {
       if (a[0].toStringRef() != "cpu") throw Error("device '" + a[0].toStringRef() + "': Ember runs on the CPU only");
       return a[0];
     }},
    {"aten::to", "Tensor self, Device? device, ScalarType? dtype=None, bool non_blocking=False, bool copy=False, int? memory_format=None",
     [](Args a) -> IValue {
       const auto dt = dtype(a[2]);
       return dt ? T(a[0]).to(*dt, false, a[4].toBool()) : (a[4].toBool() ? T(a[0]).clone() : T(a[0]));
     }},
    {"aten::to", "Tensor self, ScalarType dtype, bool non_blocking=False, bool copy=False, int? memory_format=None",
     [](Args a) -> IValue {
       return T(a[0]).to(*dtype(a[1]), false, a[3].toBool(),
                         a[4].isNone() ? std::nullopt : std::optional<MemoryFormat>(memory_format(a[4])));
     }},
    {"aten::to", "Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, "
     "bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None",
     [](Args a) -> IValue {
       const auto dt = dtype(a[1]);
       return dt ? T(a[0]).to(*dt, false, a[6].toBool()) : (a[6].toBool() ? T(a[0]).clone() : T(a[0]));
     }},
    {"aten::to", "Tensor self, Tensor other, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None",
     [](Args a) -> IValue { return T(a[0]).to(T(a[1]).dtype(), false, a[3].toBool()); }},
    {"aten::cpu", "Tensor self", [](Args a) { return a[0]; }},
    // A tensor's dtype as its code, its device and the device's type as names ("cpu").
    {"prim::dtype", "Tensor a", [](Args a) -> IValue { return dtype_code(T(a[0]).dtype()); }},
    {"prim::device", "Tensor a", [](Args) -> IValue { return std::string("cpu"); }},
    {"prim::type", "Device self", [](Args a) { return a[0]; }},
    {"aten::as_tensor", "Tensor data, *, ScalarType? dtype=None, Device? device=None", [](Args a) -> IValue {
       const auto dt = dtype(a[1]);
       return dt ? T(a[0]).to(*dt) : T(a[0]);
     }},
    {"aten::empty_like", "Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None",
     [](Args a) -> IValue { return empty_like(T(a[0]), TensorOptions().dtype(dtype(a[1]))); }},
    {"aten::arange", "Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None",
     [](Args a) -> IValue { return arange(S(a[0]), TensorOptions().dtype(dtype(a[1]))); }},
    {"aten::arange", "Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None",
     [](Args a) -> IValue { return arange(S(a[0]), S(a[1]), TensorOptions().dtype(dtype(a[2]))); }},
    {"aten::arange", "Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None",
     [](Args a) -> IValue { return arange(S(a[0]), S(a[1]), S(a[2]), TensorOptions().dtype(dtype(a[3]))); }},
    {"aten::ones", "int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None",
     [](Args a) -> IValue { return ones(ints(a[0]), TensorOptions().dtype(dtype(a[1]).value_or(kFloat))); }},
    {"aten::zeros", "int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None",
     [](Args a) -> IValue { return zeros(ints(a[0]), TensorOptions().dtype(dtype(a[1]).value_or(kFloat))); }},
    {"aten::warn", "str message, int stacklevel=2", [](Args) { return IValue(); }},
    {"prim::NumToTensor", "Scalar a", [](Args a) -> IValue { return scalar_tensor(S(a[0]), TensorOptions().dtype(a[0].isDouble() ? kDouble : kLong)); }},
    {"prim::RaiseException", "str msg, str? cls=None", [](Args a) -> IValue {
       throw Error((a[1].isNone() ? std::string("Exception") : a[1].toStringRef()) + ": " + a[0].toStringRef());
     }},
};
#undef EMBER_JIT_UNARY
#undef EMBER_JIT_RNN

bool is_sequence_of(const IValue& v, bool (*elem)(const IValue&)) {
  if (v.isList()) {
    for (const IValue& e : v.list_data()->items)
      if (!elem(e)) return false;
    return true;
  }
  if (!v.isTuple()) return false;
  for (const IValue& e : v.toTuple()->elements())
    if (!elem(e)) return false;
  return true;
}

bool accepts(const SchemaArg& arg, const IValue& v) {
  using Type = SchemaArg::Type;
  if (arg.optional && v.isNone()) return true;
  switch (arg.type) {
    case Type::Tensor: return v.isTensor();
    case Type::Scalar: return v.isScalar();
    case Type::Num: return v.isInt() || v.isDouble();
    case Type::Int: return v.isInt() || v.isBool();
    case Type::Float: return v.isDouble() || v.isInt();
    case Type::Bool: return v.isBool();
    case Type::Str:
    case Type::Device: return v.isString();
    case Type::IntList: return v.isInt() || is_sequence_of(v, [](const IValue& e) { return e.isInt(); });
    case Type::FloatList: return is_sequence_of(v, [](const IValue& e) { return e.isDouble() || e.isInt(); });
    case Type::TensorList: return is_sequence_of(v, [](const IValue& e) { return e.isTensor(); });
    case Type::OptionalTensorList: return is_sequence_of(v, [](const IValue& e) { return e.isTensor() || e.isNone(); });
    case Type::List: return v.isList();
    case Type::Any: return true;
    case Type::None: return v.isNone();
  }
  return false;
}

SchemaArg::Type parse_type(const std::string& name, const std::string& schema) {
  using Type = SchemaArg::Type;
  static const std::pair<const char*, Type> kTypes[] = {
      {"Tensor", Type::Tensor}, {"Scalar", Type::Scalar},   {"num", Type::Num},        {"int", Type::Int},
      {"ScalarType", Type::Int}, {"Layout", Type::Int},     {"MemoryFormat", Type::Int}, {"float[]", Type::FloatList},     {"float", Type::Float},    {"bool", Type::Bool},
      {"str", Type::Str},       {"Device", Type::Device},   {"int[]", Type::IntList},  {"Tensor[]", Type::TensorList}, {"Tensor?[]", Type::OptionalTensorList},
      {"t[]", Type::List},      {"t", Type::Any}};
  for (const auto& [n, t] : kTypes)
    if (name == n) return t;
  // PyTorch's sized lists (int[2], SymInt[1]) bind as int[]; SymInt is an int; a Generator (of
  // the random ops) can only be None here: Ember's ops draw from the global one.
  if (name.rfind("int[", 0) == 0 || name.rfind("SymInt[", 0) == 0) return Type::IntList;
  if (name == "SymInt") return Type::Int;
  if (name == "Generator") return Type::None;
  throw Error("jit builtin table: unknown type '" + name + "' in schema '" + schema + "'");
}

// ---- the schema language: "Tensor self, int[] stride=1, *, Scalar alpha=1" ----
IValue parse_default(const std::string& text, const std::string& schema) {
  if (text == "None") return IValue();
  if (text == "True" || text == "False") return IValue(text == "True");
  if (text.size() >= 2 && (text[0] == '\'' || text[0] == '"')) return IValue(text.substr(1, text.size() - 2));
  if (text.size() >= 2 && text[0] == '[') {
    std::vector<int64_t> out;
    std::istringstream is(text.substr(1, text.size() - 2));
    for (std::string item; std::getline(is, item, ',');) out.push_back(std::stoll(item));
    return IValue(out);
  }
  if (text.find_first_of(".e") != std::string::npos) return IValue(std::stod(text));
  try {
    return IValue(static_cast<int64_t>(std::stoll(text)));
  } catch (const std::exception&) {
    throw Error("jit builtin table: bad default '" + text + "' in schema '" + schema + "'");
  }
}

Builtin parse_row(const Row& row) {
  Builtin b;
  b.name = row.name;
  b.schema = row.schema;
  b.fn = row.fn;
  bool kwarg_only = false;
  std::string s = row.schema;
  int depth = 0;
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0)
      parts.emplace_back();
    else
      parts.back() += c;
  }
  for (std::string p : parts) {
    p.erase(0, p.find_first_not_of(' '));
    p.erase(p.find_last_not_of(' ') + 1);
    if (p == "*") {
      kwarg_only = true;
      continue;
    }
    if (p == "...") {
      b.varargs = true;
      continue;
    }
    SchemaArg arg;
    const size_t sp = p.find(' ');
    std::string type = p.substr(0, sp);
    arg.type_name = type;
    arg.optional = type.back() == '?';
    if (arg.optional) type.pop_back();
    arg.type = parse_type(type, b.schema);
    std::string rest = p.substr(sp + 1);
    if (const size_t eq = rest.find('='); eq != std::string::npos) {
      arg.has_default = true;
      arg.default_value = parse_default(rest.substr(eq + 1), b.schema);
      rest = rest.substr(0, eq);
    }
    arg.name = rest;
    arg.kwarg_only = kwarg_only;
    b.positional += !kwarg_only;
    b.args.push_back(std::move(arg));
  }
  if (b.args.size() > kMaxBuiltinArgs)
    throw Error("jit builtin table: schema of " + b.name + " has more than " + std::to_string(kMaxBuiltinArgs) +
                " arguments");
  return b;
}

struct Table {
  std::vector<Builtin> builtins;
  std::unordered_map<std::string, std::vector<const Builtin*>> by_name;
  Table() {
    builtins.reserve(std::size(kRows));
    for (const Row& r : kRows) builtins.push_back(parse_row(r));
    for (const Builtin& b : builtins) by_name[b.name].push_back(&b);
  }
};
const Table& table() {
  static const Table t;
  return t;
}

// The table's name for a name as code spells it.
std::string canonical(const std::string& name) {
  static const std::pair<const char*, const char*> kPrefixes[] = {
      {"torch.nn.functional.", "aten::"}, {"torch._C._nn.", "aten::"}, {"ops.aten.", "aten::"},
      {"ops.prim.", "prim::"},            {"torch.", "aten::"}};
  for (const auto& [from, to] : kPrefixes)
    if (name.compare(0, std::strlen(from), from) == 0) return to + name.substr(std::strlen(from));
  if (name.find(':') != std::string::npos) return name;
  if (name.find('.') == std::string::npos) return "aten::" + name;  // len, range, getattr, int, float
  return name;
}

// Fills `out` with `b`'s arguments in schema order (the given ones, then defaults; varargs
// last) and returns their count, or 0 with `ok` false if `b` does not accept them.
size_t bind(const Builtin& b, const IValue* const* refs, size_t given, const std::vector<std::string>& kwnames,
            const IValue** out, bool& ok) {
  ok = false;
  const size_t npos = given - kwnames.size();
  if (npos > b.positional && (!b.varargs || !kwnames.empty())) return 0;
  const size_t n = std::min(npos, b.positional);
  uint64_t set = 0;
  for (size_t i = 0; i < n; ++i) {
    out[i] = refs[i];
    set |= uint64_t{1} << i;
  }
  for (size_t k = 0; k < kwnames.size(); ++k) {
    size_t i = 0;
    while (i < b.args.size() && b.args[i].name != kwnames[k]) ++i;
    if (i == b.args.size() || (set >> i & 1)) return 0;
    out[i] = refs[npos + k];
    set |= uint64_t{1} << i;
  }
  for (size_t i = 0; i < b.args.size(); ++i) {
    if (!(set >> i & 1)) {
      if (!b.args[i].has_default) return 0;
      out[i] = &b.args[i].default_value;
    } else if (!accepts(b.args[i], *out[i])) {
      return 0;
    }
  }
  size_t count = b.args.size();
  for (size_t i = n; i < npos; ++i) out[count++] = refs[i];  // varargs
  ok = true;
  return count;
}

}  // namespace

const std::vector<const Builtin*>* find_builtin(const std::string& name) {
  const Table& t = table();
  auto it = t.by_name.find(canonical(name));
  return it == t.by_name.end() ? nullptr : &it->second;
}

// ---- torch::jit::getAllOperators: the table as libtorch's operator registry ----

Argument::Argument(std::string name, TypePtr type, std::optional<IValue> default_value, bool kwarg_only)
    : name_(std::move(name)), type_(std::move(type)), default_value_(std::move(default_value)), kwarg_only_(kwarg_only) {}

FunctionSchema::FunctionSchema(std::string name, std::vector<Argument> arguments, bool vararg, std::string text)
    : name_(std::move(name)), arguments_(std::move(arguments)), vararg_(vararg), text_(std::move(text)) {}

std::optional<std::string> FunctionSchema::getNamespace() const {
  const size_t sep = name_.find("::");
  if (sep == std::string::npos) return std::nullopt;
  return name_.substr(0, sep);
}

std::ostream& operator<<(std::ostream& os, const FunctionSchema& schema) {
  return os << schema.name_ << "(" << schema.text_ << ")";
}

Symbol Symbol::fromQualString(const std::string& qual) {
  const size_t sep = qual.find("::");
  EMBER_CHECK(sep != std::string::npos && sep > 0 && sep + 2 < qual.size(), "Symbol::fromQualString",
              "Expected a qualified name such as 'aten::relu', got '", qual, "'");
  return Symbol(qual);
}

namespace {
const std::vector<std::shared_ptr<Operator>>& all_operators() {
  static const std::vector<std::shared_ptr<Operator>> ops = [] {
    std::vector<std::shared_ptr<Operator>> v;
    for (const Builtin& b : table().builtins) {
      std::vector<Argument> args;
      for (const SchemaArg& a : b.args) {
        args.emplace_back(a.name, std::make_shared<const SchemaType>(a.type_name),
                          a.has_default ? std::optional<IValue>(a.default_value) : std::nullopt, a.kwarg_only);
      }
      v.push_back(std::make_shared<Operator>(FunctionSchema(b.name, std::move(args), b.varargs, b.schema)));
    }
    return v;
  }();
  return ops;
}
}  // namespace

std::vector<std::shared_ptr<Operator>> getAllOperators() { return all_operators(); }

std::vector<std::shared_ptr<Operator>> getAllOperatorsFor(Symbol name) {
  std::vector<std::shared_ptr<Operator>> out;
  for (const auto& op : all_operators())
    if (op->schema().name() == name.toQualString()) out.push_back(op);
  return out;
}

int64_t scalar_type_code(ScalarType t) { return dtype_code(t); }
ScalarType scalar_type_of_code(int64_t code) { return *dtype(IValue(code)); }

const Builtin* match_positional(const std::vector<const Builtin*>& overloads, const IValue* values, size_t n) {
  for (const Builtin* b : overloads) {
    if (n > b->args.size()) continue;
    bool ok = true;
    for (size_t i = 0; i < b->args.size() && ok; ++i)
      ok = i < n ? accepts(b->args[i], values[i]) : b->args[i].has_default;
    if (ok) return b;
  }
  return nullptr;
}

IValue call_builtin(const std::vector<const Builtin*>& overloads, const IValue* const* refs, size_t n,
                    const std::vector<std::string>& kwnames, const std::string& name, const SourceLoc& loc) {
  const IValue* bound[kMaxBuiltinArgs];
  for (const Builtin* b : overloads) {
    bool ok;
    const size_t count = bind(*b, refs, n, kwnames, bound, ok);
    if (!ok) continue;
    try {
      return b->fn(Args{bound, count});
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + "\n  in " + name + " at " + to_string(loc));
    }
  }
  std::ostringstream os;
  os << "torch::jit: " << to_string(loc) << ": no overload of " << name << " accepts (";
  const Args args{refs, n};
  for (size_t i = 0; i < args.size(); ++i) {
    os << (i ? ", " : "");
    if (i + kwnames.size() >= args.size()) os << kwnames[i + kwnames.size() - args.size()] << "=";
    os << args[i].tag_name();
  }
  os << "); its schemas:";
  for (const Builtin* b : overloads) os << "\n  " << name << "(" << b->schema << ")";
  throw Error(os.str());
}

}  // namespace ember::jit
