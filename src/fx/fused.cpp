// The fused pointwise engine (ember/fx/fused.h, docs/fx_fusion.md).
//
// Construction checks the chain against the op table below and compiles it into a skeleton
// program (kernels/cpu/fused_pointwise.h): which tile buffer each value lives in (buffers are
// reused once a value is dead), where inputs are loaded and outputs stored. Dtypes are settled
// per call signature (each input's dtype and whether it is 0-dim) by running the eager chain once
// on one-element tensors of those dtypes: each step's result dtype is then exactly the eager op's,
// with no promotion rule restated here, and a dtype the eager op refuses raises its own error
// (named by the step). The plan for that signature fills in the dtypes, the constants (Scalars
// converted as the eager op converts them) and the roundings that make a bfloat16/float16 chain
// compute what the unfused chain computes. Chains the kernel does not cover (integer results, mixed
// float64 and narrower floats, more than 8 operands, outputs smaller than the broadcast shape, an
// autocast region) run op by op through the eager ops.
#include "ember/fx/fused.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "core/tensor_iterator.h"
#include "dispatch/autocast.h"
#include "ember/autocast.h"
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/pointwise.h"
#include "ember/shape.h"
#include "kernels/cpu/fused_pointwise.h"

namespace ember::fx {
namespace {

using kernels::BinaryOp;
using kernels::FusedInstr;
using kernels::PredicateOp;
using kernels::UnaryOp;
using Kind = FusedInstr::Kind;

constexpr const char* kName = "fx::FusedPointwise";

// ---- the op table -------------------------------------------------------------------------------

// The arguments of a step, resolved against the values computed so far.
struct Args {
  const std::vector<FusedArg>& args;
  const std::vector<Tensor>& values;
  size_t size() const { return args.size(); }
  bool present(size_t k) const { return k < args.size() && !args[k].is_none(); }
  bool is_ref(size_t k) const { return k < args.size() && args[k].is_ref(); }
  const Tensor& t(size_t k) const { return values[static_cast<size_t>(std::get<FusedArg::Ref>(args[k].value).index)]; }
  Scalar s(size_t k, const Scalar& dflt = 0) const { return present(k) ? std::get<Scalar>(args[k].value) : dflt; }
  std::optional<Scalar> opt_s(size_t k) const { return present(k) ? std::optional<Scalar>(s(k)) : std::nullopt; }
  std::optional<Tensor> opt_t(size_t k) const { return is_ref(k) ? std::optional<Tensor>(t(k)) : std::nullopt; }
  std::optional<std::string_view> opt_str(size_t k) const {
    return present(k) ? std::optional<std::string_view>(std::get<std::string>(args[k].value)) : std::nullopt;
  }
  ScalarType dtype(size_t k) const { return std::get<ScalarType>(args[k].value); }
};

// How a step's args map onto the kernel: the instruction kind, its op code, which args are
// its operands (a Tensor reference or a Scalar each) and which are its parameters.
enum class Form : uint8_t {
  Unary,       // unary(arg 0), no parameters
  Gelu,        // approximate: "none" | "tanh"
  LeakyRelu,   // negative_slope
  Elu,         // alpha, scale, input_scale
  Softplus,    // beta, threshold
  Clamp,       // Scalar bounds: unary clamp; Tensor bounds: ternary clamp or maximum/minimum
  ClampMin,    // clamp_min(self, Scalar | Tensor)
  ClampMax,
  AddSub,      // (self, other, alpha)
  Binary,      // (self, other)
  Div,         // (self, other, rounding_mode)
  Pow,         // (self | Scalar, exponent | Scalar)
  Compare,     // (self, other) -> Bool
  Where,       // (condition, self, other)
  To,          // (self, dtype, non_blocking, copy, memory_format)
};

// The kinds of argument a signature character admits.
//   T: a Tensor reference      V: a Tensor reference or a Scalar    S: a Scalar
//   C: a Scalar, a Tensor reference or none (clamp's bounds)          R: a string or none
//   D: a ScalarType            B: a bool                             M: none (memory_format)
struct OpDef {
  const char* name;
  const char* signature;  // one character per argument, in libtorch's order
  int min_args;           // the rest have libtorch's defaults
  Form form;
  uint8_t code;           // UnaryOp, BinaryOp or PredicateOp, per form
  Tensor (*eager)(const Args&);
};

#define EMBER_FX_UNARY(name, op) \
  {#name, "T", 1, Form::Unary, static_cast<uint8_t>(UnaryOp::op), [](const Args& a) { return ember::name(a.t(0)); }},
#define EMBER_FX_COMPARE(name, op)                                                                        \
  {#name, "TV", 2, Form::Compare, static_cast<uint8_t>(PredicateOp::op), [](const Args& a) {              \
     return a.is_ref(1) ? ember::name(a.t(0), a.t(1)) : ember::name(a.t(0), a.s(1));                       \
   }},

// Sorted by name (looked up by binary search).
const OpDef kOps[] = {
    EMBER_FX_UNARY(abs, Abs)
    {"add", "TVS", 2, Form::AddSub, static_cast<uint8_t>(BinaryOp::Add),
     [](const Args& a) { return a.is_ref(1) ? add(a.t(0), a.t(1), a.s(2, 1)) : add(a.t(0), a.s(1), a.s(2, 1)); }},
    EMBER_FX_UNARY(ceil, Ceil)
    {"clamp", "TCC", 2, Form::Clamp, 0,
     [](const Args& a) {
       return a.is_ref(1) || a.is_ref(2) ? clamp(a.t(0), a.opt_t(1), a.opt_t(2)) : clamp(a.t(0), a.opt_s(1), a.opt_s(2));
     }},
    {"clamp_max", "TV", 2, Form::ClampMax, 0,
     [](const Args& a) { return a.is_ref(1) ? clamp_max(a.t(0), a.t(1)) : clamp_max(a.t(0), a.s(1)); }},
    {"clamp_min", "TV", 2, Form::ClampMin, 0,
     [](const Args& a) { return a.is_ref(1) ? clamp_min(a.t(0), a.t(1)) : clamp_min(a.t(0), a.s(1)); }},
    EMBER_FX_UNARY(cos, Cos)
    {"div", "TVR", 2, Form::Div, 0,
     [](const Args& a) { return a.is_ref(1) ? div(a.t(0), a.t(1), a.opt_str(2)) : div(a.t(0), a.s(1), a.opt_str(2)); }},
    {"elu", "TSSS", 1, Form::Elu, static_cast<uint8_t>(UnaryOp::Elu),
     [](const Args& a) { return elu(a.t(0), a.s(1, 1), a.s(2, 1), a.s(3, 1)); }},
    EMBER_FX_COMPARE(eq, Eq)
    EMBER_FX_UNARY(erf, Erf)
    EMBER_FX_UNARY(erfc, Erfc)
    EMBER_FX_UNARY(erfinv, Erfinv)
    EMBER_FX_UNARY(exp, Exp)
    EMBER_FX_UNARY(exp2, Exp2)
    EMBER_FX_UNARY(expm1, Expm1)
    EMBER_FX_UNARY(floor, Floor)
    EMBER_FX_COMPARE(ge, Ge)
    {"gelu", "TR", 1, Form::Gelu, 0,
     [](const Args& a) { return gelu(a.t(0), a.opt_str(1).value_or("none")); }},
    EMBER_FX_COMPARE(gt, Gt)
    EMBER_FX_UNARY(hardsigmoid, Hardsigmoid)
    EMBER_FX_UNARY(hardswish, Hardswish)
    EMBER_FX_COMPARE(le, Le)
    {"leaky_relu", "TS", 1, Form::LeakyRelu, static_cast<uint8_t>(UnaryOp::LeakyRelu),
     [](const Args& a) { return leaky_relu(a.t(0), a.s(1, 0.01)); }},
    EMBER_FX_UNARY(log, Log)
    EMBER_FX_UNARY(log10, Log10)
    EMBER_FX_UNARY(log1p, Log1p)
    EMBER_FX_UNARY(log2, Log2)
    EMBER_FX_COMPARE(lt, Lt)
    {"maximum", "TT", 2, Form::Binary, static_cast<uint8_t>(BinaryOp::Maximum),
     [](const Args& a) { return maximum(a.t(0), a.t(1)); }},
    {"minimum", "TT", 2, Form::Binary, static_cast<uint8_t>(BinaryOp::Minimum),
     [](const Args& a) { return minimum(a.t(0), a.t(1)); }},
    {"mul", "TV", 2, Form::Binary, static_cast<uint8_t>(BinaryOp::Mul),
     [](const Args& a) { return a.is_ref(1) ? mul(a.t(0), a.t(1)) : mul(a.t(0), a.s(1)); }},
    EMBER_FX_COMPARE(ne, Ne)
    EMBER_FX_UNARY(neg, Neg)
    {"pow", "VV", 2, Form::Pow, 0,
     [](const Args& a) {
       if (!a.is_ref(0)) return pow(a.s(0), a.t(1));
       return a.is_ref(1) ? pow(a.t(0), a.t(1)) : pow(a.t(0), a.s(1));
     }},
    EMBER_FX_UNARY(reciprocal, Reciprocal)
    EMBER_FX_UNARY(relu, Relu)
    EMBER_FX_UNARY(round, Round)
    EMBER_FX_UNARY(rsqrt, Rsqrt)
    EMBER_FX_UNARY(sigmoid, Sigmoid)
    EMBER_FX_UNARY(sign, Sign)
    EMBER_FX_UNARY(silu, Silu)
    EMBER_FX_UNARY(sin, Sin)
    {"softplus", "TSS", 1, Form::Softplus, static_cast<uint8_t>(UnaryOp::Softplus),
     [](const Args& a) { return softplus(a.t(0), a.s(1, 1), a.s(2, 20)); }},
    EMBER_FX_UNARY(sqrt, Sqrt)
    EMBER_FX_UNARY(square, Square)
    {"sub", "TVS", 2, Form::AddSub, static_cast<uint8_t>(BinaryOp::Sub),
     [](const Args& a) { return a.is_ref(1) ? sub(a.t(0), a.t(1), a.s(2, 1)) : sub(a.t(0), a.s(1), a.s(2, 1)); }},
    EMBER_FX_UNARY(tan, Tan)
    EMBER_FX_UNARY(tanh, Tanh)
    {"to", "TDBBM", 2, Form::To, 0,
     [](const Args& a) {
       const bool non_blocking = a.present(2) && std::get<bool>(a.args[2].value);
       const bool copy = a.present(3) && std::get<bool>(a.args[3].value);
       return a.t(0).to(a.dtype(1), non_blocking, copy);
     }},
    EMBER_FX_UNARY(trunc, Trunc)
    {"where", "TVV", 3, Form::Where, 0,
     [](const Args& a) {
       if (a.is_ref(1)) return a.is_ref(2) ? where(a.t(0), a.t(1), a.t(2)) : where(a.t(0), a.t(1), a.s(2));
       return a.is_ref(2) ? where(a.t(0), a.s(1), a.t(2)) : where(a.t(0), a.s(1), a.s(2));
     }},
};
#undef EMBER_FX_UNARY
#undef EMBER_FX_COMPARE

const OpDef* find_op(std::string_view name) {
  auto it = std::lower_bound(std::begin(kOps), std::end(kOps), name,
                             [](const OpDef& d, std::string_view n) { return std::string_view(d.name) < n; });
  return it != std::end(kOps) && it->name == name ? it : nullptr;
}

std::string kind_name(const FusedArg& a) {
  switch (a.value.index()) {
    case 0: return "none";
    case 1: return "a reference";
    case 2: return "a Scalar";
    case 3: return "a ScalarType";
    case 4: return "a bool";
    default: return "a string";
  }
}

bool admits(char sig, const FusedArg& a) {
  switch (sig) {
    case 'T': return a.is_ref();
    case 'V': return a.is_ref() || a.is_scalar();
    case 'S': return a.is_scalar();
    case 'C': return a.is_ref() || a.is_scalar() || a.is_none();
    case 'R': return a.is_none() || std::holds_alternative<std::string>(a.value);
    case 'D': return std::holds_alternative<ScalarType>(a.value);
    case 'B': return std::holds_alternative<bool>(a.value);
    default: return a.is_none();  // 'M'
  }
}
const char* expected(char sig) {
  switch (sig) {
    case 'T': return "a reference to a tensor";
    case 'V': return "a reference or a Scalar";
    case 'S': return "a Scalar";
    case 'C': return "a Scalar, a reference or none";
    case 'R': return "a string or none";
    case 'D': return "a ScalarType";
    case 'B': return "a bool";
    default: return "none";
  }
}

std::ostream& print_arg(std::ostream& os, const FusedArg& a) {
  switch (a.value.index()) {
    case 0: return os << "None";
    case 1: return os << '%' << std::get<FusedArg::Ref>(a.value).index;
    case 2: return os << std::get<Scalar>(a.value);
    case 3: return os << std::get<ScalarType>(a.value);
    case 4: return os << (std::get<bool>(a.value) ? "True" : "False");
    default: return os << '\'' << std::get<std::string>(a.value) << '\'';
  }
}

}  // namespace

// ---- the compiled chain -------------------------------------------------------------------------

struct FusedPointwise::Impl {
  int num_inputs = 0;
  std::vector<FusedStep> steps;
  std::vector<int> outputs;
  std::vector<const OpDef*> defs;  // per step
  std::vector<bool> live;          // steps some output depends on (the others are never run)
  // The program without dtypes: per live step its instruction, loads before first uses, stores
  // after the step that makes an output. Load/Store `arg` hold the value, fixed up per plan.
  std::vector<FusedInstr> skeleton;
  std::vector<int> skeleton_value;  // the value each instruction loads, computes or stores
  std::vector<int> value_slot;      // the tile buffer of each value in the program
  std::vector<int> stored_values;   // the step results the program stores, in program order
  int num_slots = 0;

  // A plan per call signature (dtype and 0-dim-ness of each input).
  struct Plan {
    std::vector<ScalarType> dtypes;  // of every value
    bool fused = false;
    kernels::FusedProgram program;
  };
  using Signature = std::vector<std::pair<ScalarType, bool>>;
  mutable std::mutex mutex;
  mutable std::map<Signature, std::shared_ptr<const Plan>> plans;

  std::string step_str(size_t k) const;
  [[noreturn]] void fail_step(size_t k, const std::string& msg) const {
    ember::detail::fail(kName, "step ", k, " (", step_str(k), "): ", msg);
  }
  void compile();
  std::vector<Tensor> eager(const std::vector<Tensor>& inputs) const;
  std::shared_ptr<const Plan> plan_for(const std::vector<Tensor>& inputs) const;
  std::shared_ptr<const Plan> make_plan(const Signature& sig) const;
  bool fits(const std::vector<Tensor>& inputs) const;
  bool uses_kernel(const std::vector<Tensor>& inputs) const;
  std::vector<Tensor> run_fused(const Plan& plan, const std::vector<Tensor>& inputs) const;
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs) const;
};

std::string FusedPointwise::Impl::step_str(size_t k) const {
  std::ostringstream os;
  os << '%' << num_inputs + static_cast<int>(k) << " = " << steps[k].op << '(';
  for (size_t j = 0; j < steps[k].args.size(); ++j) print_arg(j ? os << ", " : os, steps[k].args[j]);
  os << ')';
  return os.str();
}

FusedPointwise::FusedPointwise(int num_inputs, std::vector<FusedStep> steps, std::vector<int> outputs) {
  auto impl = std::make_shared<Impl>();
  impl->num_inputs = num_inputs;
  impl->steps = std::move(steps);
  impl->outputs = std::move(outputs);
  impl->compile();
  impl_ = std::move(impl);
}

void FusedPointwise::Impl::compile() {
  EMBER_CHECK(num_inputs >= 0, kName, "num_inputs must be non-negative, got ", num_inputs);
  const int nvalues = num_inputs + static_cast<int>(steps.size());
  for (size_t k = 0; k < steps.size(); ++k) {
    const FusedStep& st = steps[k];
    const OpDef* def = find_op(st.op);
    if (!def) fail_step(k, "unknown op '" + st.op + "' (fx::fusable_ops() lists the supported ones)");
    const size_t nsig = std::strlen(def->signature);
    if (st.args.size() < static_cast<size_t>(def->min_args) || st.args.size() > nsig) {
      std::ostringstream os;
      os << st.op << " takes " << def->min_args << " to " << nsig << " arguments, got " << st.args.size();
      fail_step(k, os.str());
    }
    bool any_ref = false;
    for (size_t j = 0; j < st.args.size(); ++j) {
      const FusedArg& a = st.args[j];
      if (!admits(def->signature[j], a)) {
        std::ostringstream os;
        os << "argument " << j << " of " << st.op << " must be " << expected(def->signature[j]) << ", got "
           << kind_name(a);
        fail_step(k, os.str());
      }
      if (a.is_ref()) {
        const int r = std::get<FusedArg::Ref>(a.value).index;
        if (r < 0 || r >= num_inputs + static_cast<int>(k)) {
          std::ostringstream os;
          os << "argument " << j << " references %" << r << ", which is neither an input (%0..%" << num_inputs - 1
             << ") nor an earlier step";
          fail_step(k, os.str());
        }
        any_ref = true;
      }
    }
    if (!any_ref) fail_step(k, "no argument is a tensor");
    if (def->form == Form::Clamp) {
      const bool scalar_bound = (st.args.size() > 1 && st.args[1].is_scalar()) || (st.args.size() > 2 && st.args[2].is_scalar());
      const bool tensor_bound = (st.args.size() > 1 && st.args[1].is_ref()) || (st.args.size() > 2 && st.args[2].is_ref());
      if (!scalar_bound && !tensor_bound) fail_step(k, "torch.clamp: At least one of 'min' or 'max' must not be None");
      if (scalar_bound && tensor_bound) fail_step(k, "clamp's min and max must both be Scalars or both tensors");
    }
    if (def->form == Form::Gelu && st.args.size() > 1 && !st.args[1].is_none()) {
      const std::string& approx = std::get<std::string>(st.args[1].value);
      if (approx != "none" && approx != "tanh") fail_step(k, "gelu's approximate must be 'none' or 'tanh', got '" + approx + "'");
    }
    if (def->form == Form::Div && st.args.size() > 2 && !st.args[2].is_none()) {
      const std::string& mode = std::get<std::string>(st.args[2].value);
      if (mode != "trunc" && mode != "floor")
        fail_step(k, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" + mode + "'");
    }
    defs.push_back(def);
  }
  EMBER_CHECK(!outputs.empty(), kName, "a chain needs at least one output");
  for (size_t j = 0; j < outputs.size(); ++j)
    EMBER_CHECK(outputs[j] >= 0 && outputs[j] < nvalues, kName, "output ", j, " references %", outputs[j],
                ", which is not a value of the chain (%0..%", nvalues - 1, ")");

  // Liveness: steps an output depends on, and each value's last use.
  live.assign(steps.size(), false);
  std::vector<bool> needed(static_cast<size_t>(nvalues), false);
  for (int o : outputs) needed[static_cast<size_t>(o)] = true;
  for (size_t k = steps.size(); k-- > 0;) {
    if (!needed[static_cast<size_t>(num_inputs) + k]) continue;
    live[k] = true;
    for (const FusedArg& a : steps[k].args)
      if (a.is_ref()) needed[static_cast<size_t>(std::get<FusedArg::Ref>(a.value).index)] = true;
  }
  std::vector<int> last_use(static_cast<size_t>(nvalues), -1);
  for (size_t k = 0; k < steps.size(); ++k)
    if (live[k])
      for (const FusedArg& a : steps[k].args)
        if (a.is_ref()) last_use[static_cast<size_t>(std::get<FusedArg::Ref>(a.value).index)] = static_cast<int>(k);

  // Tile buffers: a value takes a free one when made, gives it back after its last use (an op may
  // write the buffer it reads: each element is read before it is written).
  std::vector<int> slot(static_cast<size_t>(nvalues), -1);
  std::vector<int> free_slots;
  auto take = [&]() {
    if (!free_slots.empty()) {
      const int s = free_slots.back();
      free_slots.pop_back();
      return s;
    }
    return num_slots++;
  };
  std::vector<bool> stored(static_cast<size_t>(nvalues), false);
  for (size_t k = 0; k < steps.size(); ++k) {
    if (!live[k]) continue;
    const int v = num_inputs + static_cast<int>(k);
    for (const FusedArg& a : steps[k].args) {
      if (!a.is_ref()) continue;
      const int r = std::get<FusedArg::Ref>(a.value).index;
      if (slot[static_cast<size_t>(r)] >= 0) continue;
      FusedInstr load;  // only inputs are not in a buffer yet
      load.kind = Kind::Load;
      load.result = slot[static_cast<size_t>(r)] = take();
      skeleton.push_back(load);
      skeleton_value.push_back(r);
    }
    int made_last = -1;  // of the operands freed here, the one made by the latest step
    for (const FusedArg& a : steps[k].args) {
      if (!a.is_ref()) continue;
      const int r = std::get<FusedArg::Ref>(a.value).index;
      if (last_use[static_cast<size_t>(r)] == static_cast<int>(k) && slot[static_cast<size_t>(r)] >= 0) {
        free_slots.push_back(slot[static_cast<size_t>(r)]);
        last_use[static_cast<size_t>(r)] = -2;  // freed (a value may appear twice in one step)
        if (r >= num_inputs) made_last = std::max(made_last, r);
      }
    }
    // The step takes that operand's buffer: when the step that made it comes right before, the
    // kernel folds this step into that step's loop (fused_pointwise_kernels.cpp, Epilogue).
    if (made_last >= 0) {
      const auto it = std::find(free_slots.begin(), free_slots.end(), slot[static_cast<size_t>(made_last)]);
      std::rotate(it, it + 1, free_slots.end());
    }
    FusedInstr op;  // kind, codes and operands are set per plan
    op.result = slot[static_cast<size_t>(v)] = take();
    skeleton.push_back(op);
    skeleton_value.push_back(v);
    if (std::find(outputs.begin(), outputs.end(), v) != outputs.end() && !stored[static_cast<size_t>(v)]) {
      FusedInstr store;
      store.kind = Kind::Store;
      store.operands[0].slot = slot[static_cast<size_t>(v)];
      skeleton.push_back(store);
      skeleton_value.push_back(v);
      stored[static_cast<size_t>(v)] = true;
      stored_values.push_back(v);
    }
    if (last_use[static_cast<size_t>(v)] == -1) free_slots.push_back(slot[static_cast<size_t>(v)]);  // unused later
  }
  value_slot = std::move(slot);
}

// ---- eager execution ----------------------------------------------------------------------------

std::vector<Tensor> FusedPointwise::Impl::eager(const std::vector<Tensor>& inputs) const {
  std::vector<Tensor> values(inputs.begin(), inputs.end());
  values.resize(static_cast<size_t>(num_inputs) + steps.size());
  for (size_t k = 0; k < steps.size(); ++k) {
    if (!live[k]) continue;
    try {
      values[static_cast<size_t>(num_inputs) + k] = defs[k]->eager(Args{steps[k].args, values});
    } catch (const Error& e) {
      fail_step(k, e.what());
    }
  }
  std::vector<Tensor> out;
  for (int o : outputs) out.push_back(values[static_cast<size_t>(o)]);
  return out;
}

// ---- plans --------------------------------------------------------------------------------------

namespace {

// A Scalar as the eager op sees it in compute dtype t (written in t, read back as a compute value).
double scalar_in(const Scalar& s, ScalarType t) {
  switch (t) {
    case kHalf: return static_cast<float>(s.to<Half>());
    case kBFloat16: return static_cast<float>(s.to<BFloat16>());
    case kFloat: return s.to<float>();
    case kBool: return s.to<bool>() ? 1 : 0;
    default: return s.to<double>();
  }
}

bool is_narrow(ScalarType t) { return t == kHalf || t == kBFloat16; }

bool broadcastable(IntArrayRef a, IntArrayRef b) {
  for (size_t i = 1; i <= std::min(a.size(), b.size()); ++i) {
    const int64_t x = a[a.size() - i], y = b[b.size() - i];
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

}  // namespace

std::shared_ptr<const FusedPointwise::Impl::Plan> FusedPointwise::Impl::plan_for(const std::vector<Tensor>& inputs) const {
  Signature sig;
  sig.reserve(inputs.size());
  for (const Tensor& t : inputs) sig.emplace_back(t.dtype(), t.dim() == 0);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = plans.find(sig);
    if (it != plans.end()) return it->second;
  }
  auto plan = make_plan(sig);
  std::lock_guard<std::mutex> lock(mutex);
  return plans.emplace(std::move(sig), std::move(plan)).first->second;
}

std::shared_ptr<const FusedPointwise::Impl::Plan> FusedPointwise::Impl::make_plan(const Signature& sig) const {
  auto plan = std::make_shared<Plan>();
  // Each value's dtype, from the eager chain on one-element tensors (0-dim ones stay 0-dim, so
  // promotion sees the same categories).
  std::vector<Tensor> probe;
  for (const auto& [dtype, zero_dim] : sig) probe.push_back(ones(zero_dim ? IntArrayRef{} : IntArrayRef{1}, dtype));
  std::vector<Tensor> values(probe);
  values.resize(static_cast<size_t>(num_inputs) + steps.size());
  {
    // The ops' own dtypes: no recording, and no autocast casts (a plan is kept for later calls).
    NoGradGuard no_grad;
    dispatch::autocast_impl::Suspend no_autocast;
    for (size_t k = 0; k < steps.size(); ++k) {
      if (!live[k]) continue;
      try {
        values[static_cast<size_t>(num_inputs) + k] = defs[k]->eager(Args{steps[k].args, values});
      } catch (const Error& e) {
        fail_step(k, e.what());
      }
    }
  }
  plan->dtypes.resize(values.size(), ScalarType::Undefined);
  for (size_t v = 0; v < values.size(); ++v)
    if (values[v].defined()) plan->dtypes[v] = values[v].dtype();

  // The compute dtype of every live step decides float32 or float64 lanes; mixing them, or an
  // integer compute dtype, leaves the chain to the eager ops.
  bool any_double = false, any_single = false;
  std::vector<ScalarType> common(steps.size(), ScalarType::Undefined);
  for (size_t k = 0; k < steps.size(); ++k) {
    if (!live[k]) continue;
    const Args a{steps[k].args, values};
    const ScalarType result = plan->dtypes[static_cast<size_t>(num_inputs) + k];
    ScalarType c = result;
    const Form form = defs[k]->form;
    if (form == Form::Compare) {
      c = a.is_ref(1) ? result_type(a.t(0), a.t(1)) : result_type(a.t(0), a.s(1));
    } else if (form == Form::To) {
      c = a.t(0).dtype();
      if (!is_floating_type(c) && c != kBool) return plan;
    }
    // The eager op truncates a 16-bit quotient after rounding it: two ops, left to the eager path.
    if (form == Form::Div && is_narrow(c) && a.opt_str(2) == "trunc") return plan;
    if (result == kBool && form != Form::Compare && form != Form::To && form != Form::Where) return plan;
    if (!is_floating_type(result) && result != kBool) return plan;
    if (form != Form::To && form != Form::Where && !is_floating_type(c)) return plan;
    for (ScalarType t : {c, result}) {
      if (t == kDouble) any_double = true;
      else if (is_floating_type(t)) any_single = true;
    }
    common[k] = c;
  }
  if (any_double && any_single) return plan;

  // Fill in the skeleton.
  kernels::FusedProgram& prog = plan->program;
  prog.double_lanes = any_double;
  prog.num_slots = num_slots;
  // Iterator operands: output 0, the inputs, then the other outputs (fused_pointwise.h).
  std::vector<int> out_operand(values.size(), -1);
  for (size_t j = 0; j < stored_values.size(); ++j)
    out_operand[static_cast<size_t>(stored_values[j])] = j == 0 ? 0 : num_inputs + static_cast<int>(j);
  for (size_t i = 0; i < skeleton.size(); ++i) {
    FusedInstr in = skeleton[i];
    const int v = skeleton_value[i];
    if (in.kind == Kind::Load && v < num_inputs) {
      in.arg = 1 + v;  // inputs follow output 0 in the iterator
      prog.code.push_back(in);
      continue;
    }
    if (in.kind == Kind::Store) {
      in.arg = out_operand[static_cast<size_t>(v)];
      prog.code.push_back(in);
      continue;
    }
    const size_t k = static_cast<size_t>(v - num_inputs);
    const FusedStep& st = steps[k];
    const OpDef& def = *defs[k];
    const Args a{st.args, values};
    const ScalarType c = common[k];
    in.result_dtype = plan->dtypes[static_cast<size_t>(v)];
    // Operand j of the instruction from argument `arg` of the step.
    auto operand = [&](int j, size_t arg, bool convert = true) {
      kernels::FusedOperand& o = in.operands[j];
      if (a.is_ref(arg)) {
        const int r = std::get<FusedArg::Ref>(st.args[arg].value).index;
        o.slot = value_slot[static_cast<size_t>(r)];
        if (convert && is_narrow(c) && plan->dtypes[static_cast<size_t>(r)] != c) o.round_to = c;
      } else {
        o.constant = scalar_in(a.s(arg), convert ? c : in.result_dtype);
      }
    };
    switch (def.form) {
      case Form::Unary:
      case Form::LeakyRelu:
      case Form::Elu:
      case Form::Softplus:
        in.kind = Kind::Unary;
        in.unary = static_cast<UnaryOp>(def.code);
        in.params = {a.opt_s(1), a.opt_s(2), a.opt_s(3)};
        operand(0, 0);
        break;
      case Form::Gelu:
        in.kind = Kind::Unary;
        in.unary = a.opt_str(1).value_or("none") == "tanh" ? UnaryOp::GeluTanh : UnaryOp::Gelu;
        operand(0, 0);
        break;
      case Form::Clamp:
      case Form::ClampMin:
      case Form::ClampMax: {
        const bool min_only = def.form == Form::ClampMin, max_only = def.form == Form::ClampMax;
        const size_t lo = min_only ? 1 : max_only ? 0 : 1, hi = max_only ? 1 : min_only ? 0 : 2;
        const bool has_lo = !max_only && a.present(lo), has_hi = !min_only && a.present(hi);
        if (!(has_lo ? a.is_ref(lo) : a.is_ref(hi))) {  // Scalar bounds
          in.kind = Kind::Unary;
          in.unary = UnaryOp::Clamp;
          in.params = {has_lo ? a.opt_s(lo) : std::nullopt, has_hi ? a.opt_s(hi) : std::nullopt, std::nullopt};
          operand(0, 0);
        } else if (has_lo && has_hi) {
          in.kind = Kind::Clamp;
          operand(0, 0);
          operand(1, lo);
          operand(2, hi);
        } else {
          in.kind = Kind::Binary;
          in.binary = has_lo ? BinaryOp::Maximum : BinaryOp::Minimum;
          operand(0, 0);
          operand(1, has_lo ? lo : hi);
        }
        break;
      }
      case Form::AddSub:
        in.kind = Kind::Binary;
        in.binary = static_cast<BinaryOp>(def.code);
        in.alpha = a.s(2, 1);
        operand(0, 0);
        operand(1, 1);
        break;
      case Form::Binary:
        in.kind = Kind::Binary;
        in.binary = static_cast<BinaryOp>(def.code);
        operand(0, 0);
        operand(1, 1);
        break;
      case Form::Div: {
        const auto mode = a.opt_str(2);
        in.kind = Kind::Binary;
        in.binary = !mode ? BinaryOp::Div : *mode == "trunc" ? BinaryOp::DivTrunc : BinaryOp::DivFloor;
        operand(0, 0);
        operand(1, 1);
        break;
      }
      case Form::Pow:
        if (a.is_ref(0) && !a.is_ref(1)) {  // the eager op's unary form, with its exact shortcuts
          in.kind = Kind::Unary;
          in.unary = UnaryOp::PowScalar;
          in.params = {a.s(1), std::nullopt, std::nullopt};
          operand(0, 0);
        } else {
          in.kind = Kind::Binary;
          in.binary = BinaryOp::Pow;
          operand(0, 0);
          operand(1, 1);
        }
        break;
      case Form::Compare:
        in.kind = Kind::Compare;
        in.predicate = static_cast<PredicateOp>(def.code);
        operand(0, 0);
        operand(1, 1);
        break;
      case Form::Where:
        in.kind = Kind::Where;
        operand(0, 0, false);
        operand(1, 1);
        operand(2, 2);
        break;
      case Form::To:
        in.kind = Kind::Cast;
        operand(0, 0, false);
        break;
    }
    prog.code.push_back(in);
  }
  plan->fused = true;
  return plan;
}

// The fused run, or nothing when this call's shapes are not one the kernel takes.
// Whether the kernel takes this call's shapes: every stored output has the broadcast shape of all
// inputs, and the iterator has room for the operands.
bool FusedPointwise::Impl::fits(const std::vector<Tensor>& inputs) const {
  if (num_inputs + static_cast<int>(stored_values.size()) > TensorIterator::kMaxOperands) return false;
  // Shapes of the values, to find outputs smaller than the broadcast of all inputs; shapes that
  // do not broadcast go to the eager ops, whose error names the step.
  std::vector<DimVector> shapes(static_cast<size_t>(num_inputs) + steps.size());
  for (int i = 0; i < num_inputs; ++i) shapes[static_cast<size_t>(i)] = inputs[static_cast<size_t>(i)].sizes();
  DimVector all;
  for (int i = 0; i < num_inputs; ++i) {
    const IntArrayRef s = inputs[static_cast<size_t>(i)].sizes();
    if (i == 0) {
      all = s;
    } else if (!all.ref().equals(s)) {
      if (!broadcastable(all, s)) return false;
      all = infer_size(all, s);
    }
  }
  for (size_t k = 0; k < steps.size(); ++k) {
    if (!live[k]) continue;
    DimVector s;
    bool first = true;
    for (const FusedArg& a : steps[k].args) {
      if (!a.is_ref()) continue;
      const DimVector& r = shapes[static_cast<size_t>(std::get<FusedArg::Ref>(a.value).index)];
      if (first) {
        s = r;
        first = false;
      } else if (!s.ref().equals(r)) {
        if (!broadcastable(s, r)) return false;
        s = infer_size(s, r);
      }
    }
    shapes[static_cast<size_t>(num_inputs) + k] = s;
  }
  for (int v : stored_values)
    if (!shapes[static_cast<size_t>(v)].ref().equals(all)) return false;
  return true;
}

bool FusedPointwise::Impl::uses_kernel(const std::vector<Tensor>& inputs) const {
  // autocast casts per op: no fused form
  // (a chain whose outputs are all inputs computes nothing, and a chain with more values alive at once than the kernel has buffers runs op by op)
  return !stored_values.empty() && num_slots <= kernels::kFusedMaxSlots && !autocast::is_cpu_enabled() &&
         plan_for(inputs)->fused && fits(inputs);
}

std::vector<Tensor> FusedPointwise::Impl::run_fused(const Plan& plan, const std::vector<Tensor>& inputs) const {
  // Output 0 allocated by the iterator in the inputs' layout; any other output with its strides,
  // handed to a second iterator as extra operands after the inputs.
  auto config = [&](const Tensor& out0) {
    const ScalarType dt0 = plan.dtypes[static_cast<size_t>(stored_values[0])];
    TensorIteratorConfig c(kName);
    c.add_output(out0).output_dtype(dt0).common_dtype(dt0).no_input_cast();
    for (const Tensor& t : inputs) c.add_input(t);
    return c;
  };
  std::vector<Tensor> results(stored_values.size());
  {
    const Tensor none;
    TensorIteratorConfig c = config(none);
    if (stored_values.size() == 1) {
      TensorIterator iter(c);
      kernels::fused_pointwise_kernel(iter, plan.program);
      results[0] = iter.take_output();
    } else {
      results[0] = TensorIterator(c).take_output();
      TensorIteratorConfig c2 = config(results[0]);
      for (size_t j = 1; j < stored_values.size(); ++j) {
        results[j] = make_empty_strided(results[0].sizes(), results[0].strides(),
                                        plan.dtypes[static_cast<size_t>(stored_values[j])]);
        c2.add_input(results[j]);
      }
      TensorIterator iter(c2);
      kernels::fused_pointwise_kernel(iter, plan.program);
    }
  }
  std::vector<Tensor> out;
  for (int o : outputs) {
    if (o < num_inputs) {
      out.push_back(inputs[static_cast<size_t>(o)]);
      continue;
    }
    const size_t j = static_cast<size_t>(std::find(stored_values.begin(), stored_values.end(), o) - stored_values.begin());
    out.push_back(results[j]);
  }
  return out;
}

std::vector<Tensor> FusedPointwise::Impl::forward(const std::vector<Tensor>& inputs) const {
  if (!uses_kernel(inputs)) return eager(inputs);
  NoGradGuard no_grad;
  return run_fused(*plan_for(inputs), inputs);
}

// ---- autograd: the backward recomputes the chain with the eager ops ----------------------------

namespace {

struct FusedPointwiseBackward final : autograd::Node {
  std::shared_ptr<const FusedPointwise::Impl> impl;
  std::vector<Tensor> inputs;      // as given to the forward (their history included)
  std::vector<int64_t> versions;   // of the inputs' storages then

  std::string name() const override { return "FusedPointwiseBackward"; }
  void release_variables() override { inputs.clear(); }

  autograd::variable_list apply(autograd::variable_list&& grads) override {
    EMBER_CHECK(!inputs.empty() || impl->num_inputs == 0, "FusedPointwiseBackward",
                "Trying to backward through the graph a second time (or directly access saved tensors after they "
                "have already been freed). Specify retain_graph=True if you need to backward a second time.");
    for (size_t i = 0; i < inputs.size(); ++i)
      EMBER_CHECK(inputs[i].is_inference() || inputs[i]._version() == versions[i], "FusedPointwiseBackward",
                  "one of the variables needed for gradient computation has been modified by an inplace operation: "
                  "input ", i, " of the fused chain is at version ", inputs[i]._version(), "; expected version ",
                  versions[i], " instead.");
    const bool create_graph = GradMode::is_enabled();
    autograd::variable_list result(inputs.size());
    // Leaves: views of the inputs that need a gradient, so the recomputed graph ends at them (and,
    // with create_graph, still reaches the inputs for double backward).
    std::vector<Tensor> args(inputs);
    autograd::variable_list leaves;
    std::vector<size_t> leaf_of;
    AutoGradMode grad_on(true);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!should_compute_output(i)) continue;
      args[i] = inputs[i].view_as(inputs[i]);
      leaves.push_back(args[i]);
      leaf_of.push_back(i);
    }
    const std::vector<Tensor> outs = impl->eager(args);
    autograd::variable_list roots, root_grads;
    for (size_t j = 0; j < outs.size() && j < grads.size(); ++j) {
      if (!grads[j].defined() || !outs[j].requires_grad()) continue;
      roots.push_back(outs[j]);
      root_grads.push_back(grads[j]);
    }
    if (roots.empty() || leaves.empty()) return result;
    const auto g = autograd::grad(roots, leaves, root_grads, create_graph, create_graph, true);
    for (size_t l = 0; l < leaves.size(); ++l) result[leaf_of[l]] = g[l];
    return result;
  }
};

}  // namespace

std::vector<Tensor> FusedPointwise::operator()(const std::vector<Tensor>& inputs) const {
  const Impl& m = *impl_;
  EMBER_CHECK(static_cast<int>(inputs.size()) == m.num_inputs, kName, "expected ", m.num_inputs, " inputs, got ",
              inputs.size());
  bool needs_grad = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    EMBER_CHECK(inputs[i].defined(), kName, "input ", i, " is an undefined tensor");
    EMBER_CHECK(inputs[i].device() == inputs[0].device(), kName, "expected all inputs on one device, but input 0 is on ",
                inputs[0].device(), " and input ", i, " on ", inputs[i].device());
    needs_grad = needs_grad || inputs[i].requires_grad();
  }
  if (!needs_grad || !GradMode::is_enabled()) return m.forward(inputs);

  std::vector<Tensor> out;
  {
    NoGradGuard no_grad;
    out = m.forward(inputs);
  }
  // Which values carry a gradient: floating values that depend on an input requiring grad
  // (comparisons and casts to bool cut the path, as their eager ops' results do not require grad).
  auto plan = m.plan_for(inputs);
  std::vector<bool> grad_value(static_cast<size_t>(m.num_inputs) + m.steps.size(), false);
  for (size_t i = 0; i < inputs.size(); ++i) grad_value[i] = inputs[i].requires_grad();
  for (size_t k = 0; k < m.steps.size(); ++k) {
    if (!m.live[k]) continue;
    const size_t v = static_cast<size_t>(m.num_inputs) + k;
    if (!is_floating_type(plan->dtypes[v])) continue;
    for (const FusedArg& a : m.steps[k].args)
      if (a.is_ref() && grad_value[static_cast<size_t>(std::get<FusedArg::Ref>(a.value).index)]) grad_value[v] = true;
  }
  auto node = std::make_shared<FusedPointwiseBackward>();
  node->impl = impl_;
  node->inputs = inputs;
  node->reserve_edges(inputs.size());
  for (const Tensor& t : inputs) {
    node->add_input_edge(t);
    node->versions.push_back(t.is_inference() ? 0 : t._version());
  }
  for (size_t j = 0; j < out.size(); ++j) {
    const int o = m.outputs[j];
    if (o < m.num_inputs || !grad_value[static_cast<size_t>(o)]) continue;
    if (std::find(m.outputs.begin(), m.outputs.begin() + static_cast<std::ptrdiff_t>(j), o) !=
        m.outputs.begin() + static_cast<std::ptrdiff_t>(j))
      continue;  // the same tensor listed again: its history is set once
    autograd::detail::set_history(out[j], node, static_cast<uint32_t>(j));
  }
  return out;
}

bool FusedPointwise::fuses(const std::vector<Tensor>& inputs) const {
  return static_cast<int>(inputs.size()) == impl_->num_inputs && impl_->uses_kernel(inputs);
}

std::vector<Tensor> FusedPointwise::run_eager(const std::vector<Tensor>& inputs) const {
  EMBER_CHECK(static_cast<int>(inputs.size()) == impl_->num_inputs, kName, "expected ", impl_->num_inputs,
              " inputs, got ", inputs.size());
  return impl_->eager(inputs);
}

int FusedPointwise::num_inputs() const { return impl_->num_inputs; }
const std::vector<FusedStep>& FusedPointwise::steps() const { return impl_->steps; }
const std::vector<int>& FusedPointwise::outputs() const { return impl_->outputs; }

std::string FusedPointwise::str() const {
  std::ostringstream os;
  os << "fused_pointwise(";
  for (int i = 0; i < impl_->num_inputs; ++i) os << (i ? ", %" : "%") << i;
  os << "):\n";
  for (size_t k = 0; k < impl_->steps.size(); ++k) os << "    " << impl_->step_str(k) << '\n';
  os << "    return (";
  for (size_t j = 0; j < impl_->outputs.size(); ++j) os << (j ? ", %" : "%") << impl_->outputs[j];
  os << ")\n";
  return os.str();
}

bool fusable(std::string_view op) { return find_op(op) != nullptr; }

std::vector<std::string> fusable_ops() {
  std::vector<std::string> names;
  for (const OpDef& d : kOps) names.emplace_back(d.name);
  return names;
}

void FusedPointwiseModuleImpl::pretty_print(std::ostream& stream) const {
  stream << "fx::FusedPointwiseModule(inputs=" << chain.num_inputs() << ", steps=" << chain.steps().size()
         << ", outputs=" << chain.outputs().size() << ')';
}

}  // namespace ember::fx
