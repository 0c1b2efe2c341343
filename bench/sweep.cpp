// The op sweep (ember_bench --sweep): one table of ops, each written once as a generic body that
// is instantiated for Ember and for libtorch (the two APIs share names and signatures), crossed
// with sizes, dtypes and layouts. Each row checks Ember's result (and, for differentiable ops, its
// input gradients) against libtorch's, then times both sides in alternating rounds.
#include "sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <tuple>
#include <type_traits>

#include "torch_check.h"

namespace bench {
namespace {

using EV = std::vector<ember::Tensor>;
using TV = std::vector<torch::Tensor>;
using ember::ScalarType;

// A dtype constant in the spelling of the library the body is instantiated for.
template <class V>
auto dt(ScalarType t) {
  if constexpr (std::is_same_v<std::decay_t<V>, EV>) {
    return t;
  } else {
    return parity::to_torch(t);
  }
}

// Whatever an op returns (a tensor, a tuple of them, a list), as a list of tensors.
template <class T, class R>
void collect(std::vector<T>& out, const R& r) {
  if constexpr (std::is_same_v<R, T>) {
    out.push_back(r);
  } else if constexpr (std::is_same_v<R, std::vector<T>>) {
    out.insert(out.end(), r.begin(), r.end());
  } else {
    std::apply([&](const auto&... t) { (collect(out, t), ...); }, r);
  }
}

// What an operand holds. The first valued operand has the row's shape; under the broadcast
// layout the later valued ones are one row ([1, cols]) broadcast against it.
enum class Role : uint8_t {
  X,       // the row's dtype, values in [-2, 2) (integers in [-8, 8))
  Pos,     // the row's dtype, values in [0.5, 2.5) (integers in [1, 9))
  Unit,    // the row's dtype, values in [-0.9, 0.9) (integers in [-1, 1])
  Mask,    // bool, the row's shape
  ColIdx,  // int64, the row's shape, values in [0, cols): gather/scatter along dim 1
  RowIdx,  // int64 [rows], values in [0, rows): index_select/index_add/index_put along dim 0
};
bool valued(Role r) { return r == Role::X || r == Role::Pos || r == Role::Unit; }

enum Layout : unsigned { kContig = 1, kTransposed = 2, kBroadcast = 4, kChannelsLast = 8 };
const char* layout_name(unsigned l) {
  switch (l) {
    case kContig: return "contig";
    case kTransposed: return "transposed";
    case kBroadcast: return "broadcast";
    default: return "channels_last";
  }
}

using Dtypes = std::vector<ScalarType>;
const Dtypes kF = {ember::kFloat, ember::kBFloat16, ember::kHalf};
const Dtypes kFI = {ember::kFloat, ember::kBFloat16, ember::kHalf, ember::kInt, ember::kLong};
const Dtypes kFIB = {ember::kFloat, ember::kBFloat16, ember::kHalf, ember::kInt, ember::kLong, ember::kBool};
const Dtypes kIB = {ember::kInt, ember::kLong, ember::kBool};

struct Entry {
  std::string name;
  std::vector<Role> roles;
  Dtypes dtypes;
  unsigned layouts;
  bool grad;     // differentiable: floating rows also get a ".backward" row (forward + backward)
  bool four_d;   // takes (N, C, H, W) input
  int ties_dim;  // >= 0: an unstable order along this dim (sort, topk), so index outputs are
                 // compared through the values they gather; backward rows in float32 only, with
                 // gradients that are a function of the output values (ties get equal ones)
  std::function<EV(const EV&)> ember;
  std::function<TV(const TV&)> torch;
};

struct Spec {
  std::vector<Role> roles = {Role::X};
  Dtypes dtypes = kF;
  unsigned layouts = kContig | kTransposed;
  bool grad = true;
  bool four_d = false;
  int ties_dim = -1;
};

// One body for both libraries.
template <class F>
Entry op(std::string name, Spec s, F body) {
  return {std::move(name), s.roles, s.dtypes, s.layouts, s.grad, s.four_d, s.ties_dim,
          [body](const EV& x) {
            EV out;
            collect(out, body(x));
            return out;
          },
          [body](const TV& x) {
            TV out;
            collect(out, body(x));
            return out;
          }};
}
// Where the two libraries spell an argument differently (a list of optional index tensors).
template <class FE, class FT>
Entry op2(std::string name, Spec s, FE fe, FT ft) {
  return {std::move(name), s.roles, s.dtypes, s.layouts, s.grad, s.four_d, s.ties_dim, [fe](const EV& x) { return EV{fe(x)}; },
          [ft](const TV& x) { return TV{ft(x)}; }};
}

constexpr unsigned kElementwise = kContig | kTransposed | kBroadcast;
const Spec kUnaryF{};
const Spec kUnaryPos{.roles = {Role::Pos}};
const Spec kUnaryUnit{.roles = {Role::Unit}};
const Spec kBinaryF{.roles = {Role::X, Role::X}, .layouts = kElementwise};
const Spec kBinaryFI{.roles = {Role::X, Role::X}, .dtypes = kFI, .layouts = kElementwise};
const Spec kCompare{.roles = {Role::X, Role::X}, .dtypes = kFI, .layouts = kElementwise, .grad = false};
const Spec kReduceF{};
const Spec kReduceFI{.dtypes = kFI};
const Spec kPool{.dtypes = kF, .layouts = kContig | kChannelsLast, .four_d = true};

// The op list. Bodies take the operands in their roles' order.
std::vector<Entry> entries() {
  std::vector<Entry> e;
  // unary math and activations
  e.push_back(op("abs", {.dtypes = kFI}, [](const auto& x) { return x[0].abs(); }));
  e.push_back(op("neg", {.dtypes = kFI}, [](const auto& x) { return x[0].neg(); }));
  e.push_back(op("exp", kUnaryF, [](const auto& x) { return x[0].exp(); }));
  e.push_back(op("exp2", kUnaryF, [](const auto& x) { return x[0].exp2(); }));
  e.push_back(op("expm1", kUnaryF, [](const auto& x) { return x[0].expm1(); }));
  e.push_back(op("log", kUnaryPos, [](const auto& x) { return x[0].log(); }));
  e.push_back(op("log2", kUnaryPos, [](const auto& x) { return x[0].log2(); }));
  e.push_back(op("log10", kUnaryPos, [](const auto& x) { return x[0].log10(); }));
  e.push_back(op("log1p", kUnaryPos, [](const auto& x) { return x[0].log1p(); }));
  e.push_back(op("sqrt", kUnaryPos, [](const auto& x) { return x[0].sqrt(); }));
  e.push_back(op("rsqrt", kUnaryPos, [](const auto& x) { return x[0].rsqrt(); }));
  e.push_back(op("reciprocal", kUnaryPos, [](const auto& x) { return x[0].reciprocal(); }));
  e.push_back(op("sin", kUnaryF, [](const auto& x) { return x[0].sin(); }));
  e.push_back(op("cos", kUnaryF, [](const auto& x) { return x[0].cos(); }));
  e.push_back(op("tan", kUnaryF, [](const auto& x) { return x[0].tan(); }));
  e.push_back(op("asin", kUnaryUnit, [](const auto& x) { return x[0].asin(); }));
  e.push_back(op("acos", kUnaryUnit, [](const auto& x) { return x[0].acos(); }));
  e.push_back(op("atan", kUnaryF, [](const auto& x) { return x[0].atan(); }));
  e.push_back(op("sinh", kUnaryF, [](const auto& x) { return x[0].sinh(); }));
  e.push_back(op("cosh", kUnaryF, [](const auto& x) { return x[0].cosh(); }));
  e.push_back(op("tanh", kUnaryF, [](const auto& x) { return x[0].tanh(); }));
  e.push_back(op("asinh", kUnaryF, [](const auto& x) { return x[0].asinh(); }));
  e.push_back(op("atanh", kUnaryUnit, [](const auto& x) { return x[0].atanh(); }));
  e.push_back(op("sigmoid", kUnaryF, [](const auto& x) { return x[0].sigmoid(); }));
  e.push_back(op("erf", kUnaryF, [](const auto& x) { return x[0].erf(); }));
  e.push_back(op("erfc", kUnaryF, [](const auto& x) { return x[0].erfc(); }));
  e.push_back(op("erfinv", kUnaryUnit, [](const auto& x) { return x[0].erfinv(); }));
  e.push_back(op("lgamma", kUnaryPos, [](const auto& x) { return x[0].lgamma(); }));
  e.push_back(op("digamma", kUnaryPos, [](const auto& x) { return x[0].digamma(); }));
  e.push_back(op("ceil", {.grad = false}, [](const auto& x) { return x[0].ceil(); }));
  e.push_back(op("floor", {.grad = false}, [](const auto& x) { return x[0].floor(); }));
  e.push_back(op("round", {.grad = false}, [](const auto& x) { return x[0].round(); }));
  e.push_back(op("trunc", {.grad = false}, [](const auto& x) { return x[0].trunc(); }));
  e.push_back(op("frac", kUnaryF, [](const auto& x) { return x[0].frac(); }));
  e.push_back(op("sign", {.dtypes = kFI, .grad = false}, [](const auto& x) { return x[0].sign(); }));
  e.push_back(op("square", {.dtypes = kFI}, [](const auto& x) { return x[0].square(); }));
  e.push_back(op("relu", {.dtypes = kFI}, [](const auto& x) { return x[0].relu(); }));
  e.push_back(op("gelu", kUnaryF, [](const auto& x) { return gelu(x[0]); }));
  e.push_back(op("gelu.tanh", kUnaryF, [](const auto& x) { return gelu(x[0], "tanh"); }));
  e.push_back(op("silu", kUnaryF, [](const auto& x) { return silu(x[0]); }));
  e.push_back(op("mish", kUnaryF, [](const auto& x) { return mish(x[0]); }));
  e.push_back(op("hardswish", kUnaryF, [](const auto& x) { return hardswish(x[0]); }));
  e.push_back(op("hardsigmoid", kUnaryF, [](const auto& x) { return hardsigmoid(x[0]); }));
  e.push_back(op("hardtanh", kUnaryF, [](const auto& x) { return hardtanh(x[0]); }));
  e.push_back(op("elu", kUnaryF, [](const auto& x) { return elu(x[0]); }));
  e.push_back(op("selu", kUnaryF, [](const auto& x) { return selu(x[0]); }));
  e.push_back(op("leaky_relu", kUnaryF, [](const auto& x) { return leaky_relu(x[0], 0.01); }));
  e.push_back(op("softplus", kUnaryF, [](const auto& x) { return softplus(x[0]); }));
  e.push_back(op("log_sigmoid", kUnaryF, [](const auto& x) { return log_sigmoid(x[0]); }));
  e.push_back(op("pow.scalar", kUnaryF, [](const auto& x) { return x[0].pow(2); }));
  e.push_back(op("clamp", {.dtypes = kFI}, [](const auto& x) { return x[0].clamp(-1, 1); }));
  e.push_back(op("clamp_min", {.dtypes = kFI}, [](const auto& x) { return x[0].clamp_min(0); }));
  e.push_back(op("nan_to_num", kUnaryF, [](const auto& x) { return x[0].nan_to_num(); }));
  e.push_back(op("isnan", {.grad = false}, [](const auto& x) { return x[0].isnan(); }));
  e.push_back(op("bitwise_not", {.dtypes = kIB, .grad = false}, [](const auto& x) { return x[0].bitwise_not(); }));
  e.push_back(op("logical_not", {.dtypes = kFIB, .grad = false}, [](const auto& x) { return x[0].logical_not(); }));

  // binary, with a tensor or a Scalar
  e.push_back(op("add", kBinaryFI, [](const auto& x) { return x[0].add(x[1]); }));
  e.push_back(op("add.alpha", kBinaryFI, [](const auto& x) { return x[0].add(x[1], 2); }));
  e.push_back(op("sub", kBinaryFI, [](const auto& x) { return x[0].sub(x[1]); }));
  e.push_back(op("mul", kBinaryFI, [](const auto& x) { return x[0].mul(x[1]); }));
  e.push_back(op("div", {.roles = {Role::X, Role::Pos}, .layouts = kElementwise},
                 [](const auto& x) { return x[0].div(x[1]); }));
  e.push_back(op("div.floor", {.roles = {Role::X, Role::Pos}, .dtypes = kFI, .layouts = kElementwise, .grad = false},
                 [](const auto& x) { return x[0].div(x[1], "floor"); }));
  e.push_back(op("remainder", {.roles = {Role::X, Role::Pos}, .dtypes = kFI, .layouts = kElementwise, .grad = false},
                 [](const auto& x) { return x[0].remainder(x[1]); }));
  e.push_back(op("fmod", {.roles = {Role::X, Role::Pos}, .dtypes = kFI, .layouts = kElementwise, .grad = false},
                 [](const auto& x) { return x[0].fmod(x[1]); }));
  e.push_back(op("pow", {.roles = {Role::Pos, Role::X}, .layouts = kElementwise},
                 [](const auto& x) { return x[0].pow(x[1]); }));
  e.push_back(op("atan2", kBinaryF, [](const auto& x) { return x[0].atan2(x[1]); }));
  e.push_back(op("maximum", kBinaryFI, [](const auto& x) { return x[0].maximum(x[1]); }));
  e.push_back(op("minimum", kBinaryFI, [](const auto& x) { return x[0].minimum(x[1]); }));
  e.push_back(op("fmax", kBinaryF, [](const auto& x) { return x[0].fmax(x[1]); }));
  e.push_back(op("hypot", kBinaryF, [](const auto& x) { return x[0].hypot(x[1]); }));
  e.push_back(op("copysign", kBinaryF, [](const auto& x) { return x[0].copysign(x[1]); }));
  e.push_back(op("lerp.scalar", kBinaryF, [](const auto& x) { return x[0].lerp(x[1], 0.3); }));
  e.push_back(op("xlogy", {.roles = {Role::X, Role::Pos}, .layouts = kElementwise},
                 [](const auto& x) { return x[0].xlogy(x[1]); }));
  e.push_back(op("bitwise_and", {.roles = {Role::X, Role::X}, .dtypes = kIB, .layouts = kElementwise, .grad = false},
                 [](const auto& x) { return x[0].bitwise_and(x[1]); }));
  e.push_back(op("bitwise_xor", {.roles = {Role::X, Role::X}, .dtypes = kIB, .layouts = kElementwise, .grad = false},
                 [](const auto& x) { return x[0].bitwise_xor(x[1]); }));
  e.push_back(op("logical_and", {.roles = {Role::X, Role::X}, .dtypes = kFIB, .layouts = kElementwise, .grad = false},
                 [](const auto& x) { return x[0].logical_and(x[1]); }));
  e.push_back(op("add.scalar", {.dtypes = kFI}, [](const auto& x) { return x[0].add(2); }));
  e.push_back(op("mul.scalar", {.dtypes = kFI}, [](const auto& x) { return x[0].mul(3); }));
  e.push_back(op("div.scalar", kUnaryF, [](const auto& x) { return x[0].div(3); }));
  e.push_back(op("rsub.scalar", {.dtypes = kFI}, [](const auto& x) { return 2 - x[0]; }));

  // comparisons
  e.push_back(op("eq", kCompare, [](const auto& x) { return x[0].eq(x[1]); }));
  e.push_back(op("ne", kCompare, [](const auto& x) { return x[0].ne(x[1]); }));
  e.push_back(op("lt", kCompare, [](const auto& x) { return x[0].lt(x[1]); }));
  e.push_back(op("ge", kCompare, [](const auto& x) { return x[0].ge(x[1]); }));
  e.push_back(op("gt.scalar", {.dtypes = kFI, .grad = false}, [](const auto& x) { return x[0].gt(0); }));

  // three operands
  e.push_back(op("where", {.roles = {Role::Mask, Role::X, Role::X}, .dtypes = kFI},
                 [](const auto& x) { return where(x[0], x[1], x[2]); }));
  e.push_back(op("addcmul", {.roles = {Role::X, Role::X, Role::X}, .layouts = kElementwise},
                 [](const auto& x) { return x[0].addcmul(x[1], x[2], 0.5); }));
  e.push_back(op("addcdiv", {.roles = {Role::X, Role::X, Role::Pos}, .layouts = kElementwise},
                 [](const auto& x) { return x[0].addcdiv(x[1], x[2], 0.5); }));
  e.push_back(op("lerp.tensor", {.roles = {Role::X, Role::X, Role::Unit}, .layouts = kElementwise},
                 [](const auto& x) { return x[0].lerp(x[1], x[2]); }));

  // reductions, over everything, the inner dim (1) and the outer dim (0)
  e.push_back(op("sum", kReduceFI, [](const auto& x) { return x[0].sum(); }));
  e.push_back(op("sum.dim1", kReduceFI, [](const auto& x) { return x[0].sum(1); }));
  e.push_back(op("sum.dim0", kReduceFI, [](const auto& x) { return x[0].sum(0); }));
  e.push_back(op("sum.dim1.keepdim", kReduceFI, [](const auto& x) { return x[0].sum(1, true); }));
  e.push_back(op("mean", kReduceF, [](const auto& x) { return x[0].mean(); }));
  // few positions per output across long rows (eight maps summed element by element)
  const Spec rows8{.dtypes = kFI, .layouts = kContig};
  e.push_back(op("sum.dim0.rows8", rows8, [](const auto& x) { return x[0].reshape({8, -1}).sum(0); }));
  e.push_back(op("mean.dim0.rows8", {.layouts = kContig}, [](const auto& x) { return x[0].reshape({8, -1}).mean(0); }));
  e.push_back(op("amax.dim0.rows8", rows8, [](const auto& x) { return x[0].reshape({8, -1}).amax(0); }));
  e.push_back(op("mean.dim1", kReduceF, [](const auto& x) { return x[0].mean(1); }));
  e.push_back(op("mean.dim0", kReduceF, [](const auto& x) { return x[0].mean(0); }));
  e.push_back(op("prod.dim1", {.roles = {Role::Unit}}, [](const auto& x) { return x[0].prod(1); }));
  e.push_back(op("amax.dim1", kReduceFI, [](const auto& x) { return x[0].amax(1); }));
  e.push_back(op("amax.dim0", kReduceFI, [](const auto& x) { return x[0].amax(0); }));
  e.push_back(op("max", kReduceFI, [](const auto& x) { return x[0].max(); }));
  e.push_back(op("max.dim1", kReduceFI, [](const auto& x) { return x[0].max(1); }));
  e.push_back(op("max.dim0", kReduceFI, [](const auto& x) { return x[0].max(0); }));
  e.push_back(op("min.dim1", kReduceFI, [](const auto& x) { return x[0].min(1); }));
  e.push_back(op("argmax.dim1", {.dtypes = kFI, .grad = false}, [](const auto& x) { return x[0].argmax(1); }));
  e.push_back(op("argmax.dim0", {.dtypes = kFI, .grad = false}, [](const auto& x) { return x[0].argmax(0); }));
  e.push_back(op("argmin.dim1", {.dtypes = kFI, .grad = false}, [](const auto& x) { return x[0].argmin(1); }));
  e.push_back(op("var.dim1", kReduceF, [](const auto& x) { return x[0].var(1); }));
  e.push_back(op("std.dim0", kReduceF, [](const auto& x) { return x[0].std(0); }));
  e.push_back(op("var_mean.dim1", kReduceF, [](const auto& x) {
                   const std::vector<int64_t> dims = {1};
                   return var_mean(x[0], dims, true, false);
                 }));
  e.push_back(op("norm", kReduceF, [](const auto& x) { return x[0].norm(); }));
  e.push_back(op("logsumexp.dim1", kReduceF, [](const auto& x) { return x[0].logsumexp(1); }));
  e.push_back(op("all.dim1", {.dtypes = kFIB, .grad = false}, [](const auto& x) { return x[0].all(1); }));
  e.push_back(op("any.dim1", {.dtypes = kFIB, .grad = false}, [](const auto& x) { return x[0].any(1); }));
  e.push_back(op("count_nonzero.dim1", {.dtypes = kFIB, .grad = false},
                 [](const auto& x) {
                   const int64_t dims[] = {1};
                   return x[0].count_nonzero(dims);
                 }));
  e.push_back(op("cumsum.dim1", kReduceFI, [](const auto& x) { return x[0].cumsum(1); }));
  e.push_back(op("cumsum.dim0", kReduceFI, [](const auto& x) { return x[0].cumsum(0); }));
  e.push_back(op("cumprod.dim1", {.roles = {Role::Unit}}, [](const auto& x) { return x[0].cumprod(1); }));
  e.push_back(op("logcumsumexp.dim1", kReduceF, [](const auto& x) { return x[0].logcumsumexp(1); }));

  // sorting
  e.push_back(op("sort.dim1", {.dtypes = kFI, .ties_dim = 1}, [](const auto& x) { return x[0].sort(1); }));
  e.push_back(op("sort.dim0", {.dtypes = kFI, .ties_dim = 0}, [](const auto& x) { return x[0].sort(0); }));
  e.push_back(op("argsort.dim1", {.dtypes = kFI, .grad = false, .ties_dim = 1},
                 [](const auto& x) { return x[0].argsort(1, false); }));
  e.push_back(op("topk8.dim1", {.dtypes = kFI, .ties_dim = 1}, [](const auto& x) { return x[0].topk(8, 1); }));

  // indexing
  e.push_back(op("index_select.dim0", {.roles = {Role::X, Role::RowIdx}, .dtypes = kFI},
                 [](const auto& x) { return x[0].index_select(0, x[1]); }));
  e.push_back(op("gather.dim1", {.roles = {Role::X, Role::ColIdx}, .dtypes = kFI},
                 [](const auto& x) { return x[0].gather(1, x[1]); }));
  e.push_back(op("scatter.dim1", {.roles = {Role::X, Role::ColIdx, Role::X}, .dtypes = kFI, .grad = false},
                 [](const auto& x) { return x[0].scatter(1, x[1], x[2]); }));
  e.push_back(op("scatter_add.dim1", {.roles = {Role::X, Role::ColIdx, Role::X}, .dtypes = kFI},
                 [](const auto& x) { return x[0].scatter_add(1, x[1], x[2]); }));
  e.push_back(op("index_add.dim0", {.roles = {Role::X, Role::RowIdx, Role::X}, .dtypes = kFI},
                 [](const auto& x) { return x[0].index_add(0, x[1], x[2]); }));
  e.push_back(op2(
      "index_put.accumulate", {.roles = {Role::X, Role::RowIdx, Role::X}, .dtypes = kFI},
      [](const EV& x) { return x[0].index_put({std::optional<ember::Tensor>(x[1])}, x[2], true); },
      [](const TV& x) {
        return x[0].index_put(c10::List<c10::optional<at::Tensor>>({c10::optional<at::Tensor>(x[1])}), x[2], true);
      }));
  e.push_back(op("masked_fill", {.roles = {Role::X, Role::Mask}, .dtypes = kFI},
                 [](const auto& x) { return x[0].masked_fill(x[1], 1); }));
  e.push_back(op("masked_select", {.roles = {Role::X, Role::Mask}, .dtypes = kFI},
                 [](const auto& x) { return x[0].masked_select(x[1]); }));
  e.push_back(op("nonzero", {.dtypes = kFIB, .grad = false}, [](const auto& x) { return x[0].nonzero(); }));
  e.push_back(op("embedding", {.roles = {Role::X, Role::RowIdx}, .layouts = kContig},
                 [](const auto& x) { return embedding(x[0], x[1]); }));

  // joining and splitting
  e.push_back(op("cat.dim0", {.roles = {Role::X, Role::X}, .dtypes = kFIB},
                 [](const auto& x) { return cat(std::vector{x[0], x[1]}, 0); }));
  e.push_back(op("cat.dim1", {.roles = {Role::X, Role::X}, .dtypes = kFIB},
                 [](const auto& x) { return cat(std::vector{x[0], x[1]}, 1); }));
  e.push_back(op("stack", {.roles = {Role::X, Role::X}, .dtypes = kFIB},
                 [](const auto& x) { return stack(std::vector{x[0], x[1]}, 0); }));
  e.push_back(op("split.dim1", {.dtypes = kFIB}, [](const auto& x) { return x[0].split(8, 1); }));
  e.push_back(op("unbind.dim0", {.dtypes = kFIB}, [](const auto& x) { return x[0].unbind(0); }));

  // copies and casts
  e.push_back(op("clone", {.dtypes = kFIB}, [](const auto& x) { return x[0].clone(); }));
  e.push_back(op("contiguous", {.dtypes = kFIB, .layouts = kTransposed}, [](const auto& x) { return x[0].contiguous(); }));
  e.push_back(op("to.float32", {.dtypes = {ember::kBFloat16, ember::kHalf, ember::kInt, ember::kLong, ember::kBool, ember::kDouble}, .grad = false},
                 [](const auto& x) { return x[0].to(dt<decltype(x)>(ember::kFloat)); }));
  e.push_back(op("to.bfloat16", {.dtypes = {ember::kFloat, ember::kHalf, ember::kInt}, .grad = false},
                 [](const auto& x) { return x[0].to(dt<decltype(x)>(ember::kBFloat16)); }));
  e.push_back(op("to.float16", {.dtypes = {ember::kFloat, ember::kBFloat16}, .grad = false},
                 [](const auto& x) { return x[0].to(dt<decltype(x)>(ember::kHalf)); }));
  e.push_back(op("to.int64", {.dtypes = {ember::kFloat, ember::kInt, ember::kBool}, .grad = false},
                 [](const auto& x) { return x[0].to(dt<decltype(x)>(ember::kLong)); }));
  e.push_back(op("to.int32", {.dtypes = {ember::kFloat, ember::kLong}, .grad = false},
                 [](const auto& x) { return x[0].to(dt<decltype(x)>(ember::kInt)); }));
  e.push_back(op("to.bool", {.dtypes = {ember::kFloat, ember::kInt}, .grad = false},
                 [](const auto& x) { return x[0].to(dt<decltype(x)>(ember::kBool)); }));

  // softmax and normalization
  e.push_back(op("softmax.dim1", kReduceF, [](const auto& x) { return x[0].softmax(1); }));
  e.push_back(op("softmax.dim0", kReduceF, [](const auto& x) { return x[0].softmax(0); }));
  e.push_back(op("log_softmax.dim1", kReduceF, [](const auto& x) { return x[0].log_softmax(1); }));
  e.push_back(op("layer_norm", kReduceF, [](const auto& x) { return layer_norm(x[0], {x[0].size(1)}); }));

  // 4-D ops, also in channels_last
  e.push_back(op("max_pool2d.k2", kPool, [](const auto& x) { return max_pool2d(x[0], {2, 2}); }));
  e.push_back(op("max_pool2d.k3s2p1", kPool, [](const auto& x) { return max_pool2d(x[0], {3, 3}, {2, 2}, {1, 1}); }));
  e.push_back(op("avg_pool2d.k2", kPool, [](const auto& x) { return avg_pool2d(x[0], {2, 2}); }));
  e.push_back(op("adaptive_avg_pool2d.1", kPool, [](const auto& x) { return adaptive_avg_pool2d(x[0], {1, 1}); }));
  e.push_back(op("relu.4d", kPool, [](const auto& x) { return x[0].relu(); }));
  e.push_back(op("add.4d", {.roles = {Role::X, Role::X}, .dtypes = kF, .layouts = kContig | kChannelsLast, .four_d = true},
                 [](const auto& x) { return x[0].add(x[1]); }));
  return e;
}

// ---- inputs ----

const char* size_name(int64_t n) {
  static thread_local char buf[32];
  if (n % (int64_t{1} << 20) == 0) {
    std::snprintf(buf, sizeof buf, "%lldM", static_cast<long long>(n >> 20));
  } else if (n % 1024 == 0) {
    std::snprintf(buf, sizeof buf, "%lldK", static_cast<long long>(n >> 10));
  } else {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(n));
  }
  return buf;
}

// n elements as a square matrix (n a power of 4) or as (N, C, H, W) with H = W = 8 * 2^k.
std::vector<int64_t> row_shape(int64_t n, bool four_d) {
  if (four_d) {
    int64_t hw = 8;
    while (hw * hw * 64 * 4 <= n && hw < 128) hw *= 2;
    const int64_t c = std::min<int64_t>(64, std::max<int64_t>(1, n / (hw * hw)));
    return {std::max<int64_t>(1, n / (c * hw * hw)), c, hw, hw};
  }
  const auto side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(n))));
  return {side, std::max<int64_t>(1, n / side)};
}

ember::Tensor values(const std::vector<int64_t>& shape, ScalarType dtype, Role role, uint64_t seed) {
  ember::Generator g(seed);
  const ember::IntArrayRef sizes(shape);
  if (dtype == ember::kBool) return ember::randint(0, 2, sizes, &g, ember::TensorOptions().dtype(ember::kBool));
  if (!ember::is_floating_type(dtype)) {
    const auto o = ember::TensorOptions().dtype(dtype);
    if (role == Role::Pos) return ember::randint(1, 9, sizes, &g, o);
    if (role == Role::Unit) return ember::randint(-1, 2, sizes, &g, o);
    return ember::randint(-8, 8, sizes, &g, o);
  }
  const ember::Tensor u = ember::rand(sizes, &g, ember::TensorOptions().dtype(ember::kDouble));
  const ember::Tensor v = role == Role::Pos ? u * 2 + 0.5 : role == Role::Unit ? u * 1.8 - 0.9 : u * 4 - 2;
  return v.to(dtype);
}

// The operands of one row, in Ember.
EV make_inputs(const Entry& e, ScalarType dtype, unsigned layout, int64_t n) {
  const std::vector<int64_t> shape = row_shape(n, e.four_d);
  const int64_t rows = shape[0], cols = shape[1];
  EV in;
  bool first_valued = true;
  uint64_t seed = 1;
  for (Role r : e.roles) {
    ++seed;
    if (valued(r)) {
      const bool broadcast = layout == kBroadcast && !first_valued;
      first_valued = false;
      if (broadcast) {
        in.push_back(values({1, cols}, dtype, r, seed));
      } else if (layout == kTransposed) {
        in.push_back(values({cols, rows}, dtype, r, seed).t());
      } else if (layout == kChannelsLast) {
        in.push_back(values(shape, dtype, r, seed).contiguous(ember::MemoryFormat::ChannelsLast));
      } else {
        in.push_back(values(shape, dtype, r, seed));
      }
      continue;
    }
    ember::Generator g(seed);
    switch (r) {
      case Role::Mask:
        in.push_back(ember::randint(0, 2, shape, &g, ember::TensorOptions().dtype(ember::kBool)));
        break;
      case Role::ColIdx:
        in.push_back(ember::randint(0, cols, shape, &g, ember::TensorOptions().dtype(ember::kLong)));
        break;
      default:  // RowIdx
        in.push_back(ember::randint(0, rows, {rows}, &g, ember::TensorOptions().dtype(ember::kLong)));
        break;
    }
  }
  return in;
}

// ---- rows ----

struct Row {
  std::string name;
  std::optional<double> ember_us, torch_us;
  double target = 1.0;
  std::string status;  // "" when timed, else why not ("FAILED: ...", "n/a: ...", "checked")
  bool failed = false;
  std::string disputed;  // how it differs from libtorch's result while as close to float64's
  std::optional<double> ratio() const {
    if (!ember_us || !torch_us || *torch_us <= 0) return std::nullopt;
    return *ember_us / *torch_us;
  }
};

// The targets: per-op overhead at 1K, speed at the larger sizes.
double target_for(int64_t n, ScalarType dtype) {
  if (n <= 1024) return 0.5;
  return dtype == ember::kFloat ? 1.0 : 1.1;
}

TV to_torch_all(const EV& v) {
  TV t;
  for (const ember::Tensor& x : v) t.push_back(parity::to_torch(x));
  return t;
}

// The floating operands in float64 (and contiguous: libtorch's own kernels for other layouts are
// what a reference must not depend on): the reference a disputed row is judged by.
TV to_double(const TV& v) {
  TV d;
  for (const torch::Tensor& x : v) d.push_back((x.is_floating_point() ? x.to(torch::kDouble) : x).contiguous());
  return d;
}

template <class V>
V floating_outputs(const V& out) {
  V r;
  for (const auto& t : out)
    if (t.is_floating_point()) r.push_back(t);
  return r;
}

// The valued operands as leaves that require grad (same strides), and their gradients.
template <class V>
V grad_leaves(const std::vector<Role>& roles, const V& in) {
  V leaves = in;
  for (size_t i = 0; i < roles.size(); ++i)
    if (valued(roles[i])) leaves[i] = in[i].detach().requires_grad_(true);
  return leaves;
}
template <class V>
V leaf_grads(const std::vector<Role>& roles, const V& leaves) {
  V g;
  for (size_t i = 0; i < roles.size(); ++i)
    if (valued(roles[i])) g.push_back(leaves[i].grad());
  return g;
}
void run_backward(const EV& out, const EV& grads) { ember::autograd::backward(out, grads); }
void run_backward(const TV& out, const TV& grads) { torch::autograd::backward(out, grads); }

// Index outputs of an unstable order (sort, topk: the last output; argsort: the only one) as the
// values they pick from the input, which any valid order agrees on.
template <class V>
V resolve_ties(const Entry& e, const V& in, V out) {
  if (e.ties_dim >= 0 && !out.empty()) out.back() = in[0].gather(e.ties_dim, out.back());
  return out;
}

// Both sides' results must agree: ints and bools exactly, floats within the dtype's tolerance.
std::string compare(const EV& e, const TV& t) {
  if (e.size() != t.size()) {
    return "Ember returned " + std::to_string(e.size()) + " tensors, libtorch " + std::to_string(t.size());
  }
  for (size_t i = 0; i < e.size(); ++i) {
    const ::testing::AssertionResult r = parity::Close(e[i], t[i]);
    if (!r) return "output " + std::to_string(i) + ": " + r.message();
  }
  return "";
}

// Two correct implementations differ by where they round (most in float16/bfloat16), and libtorch
// has bugs of its own. A floating result that differs from libtorch's still passes when its error
// against the float64 result (relative, in the 2-norm over the finite elements) is no larger than
// libtorch's, or than one rounding of the dtype (a few in float32), and its NaNs and infinities are
// where libtorch's are.
std::string accuracy(const EV& e, const TV& t, const TV& ref, ScalarType dtype) {
  const double unit = dtype == ember::kBFloat16 ? 0x1p-8 : dtype == ember::kHalf ? 0x1p-11 : 0x1p-21;
  for (size_t i = 0; i < e.size(); ++i) {
    const torch::Tensor a = parity::to_torch(e[i]);
    if (a.scalar_type() != t[i].scalar_type() || !a.sizes().equals(t[i].sizes())) {
      return "output " + std::to_string(i) + ": dtype or shape differs from libtorch's";
    }
    if (!t[i].is_floating_point()) {
      if (!a.equal(t[i])) return "output " + std::to_string(i) + " differs from libtorch's";
      continue;
    }
    const torch::Tensor ad = a.to(torch::kDouble), td = t[i].to(torch::kDouble), r = ref[i].to(torch::kDouble);
    if (!ad.isfinite().equal(td.isfinite())) return "output " + std::to_string(i) + ": NaN/inf where libtorch has none";
    const torch::Tensor finite = r.isfinite() & ad.isfinite();
    const double scale = std::max(torch::where(finite, r, 0).norm().item<double>(), 1e-30);
    const double err_e = torch::where(finite, ad - r, 0).norm().item<double>() / scale;
    const double err_t = torch::where(finite, td - r, 0).norm().item<double>() / scale;
    if (err_e > std::max(err_t, unit)) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "output %zu: relative error against float64 %.3g, libtorch's %.3g", i, err_e,
                    err_t);
      return buf;
    }
  }
  return "";
}

bool floating(ScalarType t) { return ember::is_floating_type(t); }

class Sweep {
 public:
  Sweep(const SweepOptions& o, const MachineLimits& limits) : opt_(o), limits_(limits) {}

  void run(const Entry& e, ScalarType dtype, unsigned layout, int64_t n, bool backward, const std::regex& filter) {
    const std::string name = e.name + (backward ? ".backward" : "") + " " + std::string(c10::toString(parity::to_torch(dtype))) + " " +
           layout_name(layout) + " " + size_name(n) + " t" + std::to_string(opt_.threads);
    if (!std::regex_search(name, filter)) return;
    Row row{name, std::nullopt, std::nullopt, target_for(n, dtype), "", false, ""};
    try {
      measure(e, dtype, layout, n, backward, row);
    } catch (const std::exception& ex) {
      row.failed = true;
      row.status = std::string("FAILED: Ember raised: ") + ex.what();
    }
    if (row.failed) failures_++;
    std::printf("%-52s %s\n", row.name.c_str(), describe(row).c_str());
    std::fflush(stdout);
    rows_.push_back(std::move(row));
  }

  int finish() {
    std::vector<const Row*> timed;
    for (const Row& r : rows_)
      if (r.ratio()) timed.push_back(&r);
    std::sort(timed.begin(), timed.end(), [](const Row* a, const Row* b) { return *a->ratio() > *b->ratio(); });
    int misses = 0;
    for (const Row* r : timed) misses += *r->ratio() > r->target;
    std::printf("\nsweep: %zu rows, %zu timed, %d over target, %d failed\n", rows_.size(), timed.size(), misses,
                failures_);
    if (!timed.empty()) {
      std::printf("%-52s %10s %10s %7s %6s\n", "row (worst first)", "ember us", "torch us", "ratio", "target");
      // Every miss, worst first (targets differ by dtype and size, so a row under its own target
      // can sit between two misses), or the worst row when none misses.
      for (const Row* r : timed) {
        if (*r->ratio() <= r->target && (misses || r != timed.front())) continue;
        std::printf("%-52s %10.2f %10.2f %7.3f %6.2f\n", r->name.c_str(), *r->ember_us, *r->torch_us, *r->ratio(),
                    r->target);
      }
    }
    int disputed = 0;
    for (const Row& r : rows_) disputed += !r.failed && !r.disputed.empty();
    if (disputed) {
      std::printf("\n%d rows differ from libtorch but are as close to the float64 result as libtorch's:\n", disputed);
      for (const Row& r : rows_)
        if (!r.failed && !r.disputed.empty()) std::printf("  %s: %s\n", r.name.c_str(), r.disputed.c_str());
    }
    for (const Row& r : rows_)
      if (r.failed) std::printf("FAILED %s: %s\n", r.name.c_str(), r.status.c_str());
    if (!opt_.json.empty()) write_json();
    return failures_ ? 1 : 0;
  }

  size_t rows() const { return rows_.size(); }

 private:
  void measure(const Entry& e, ScalarType dtype, unsigned layout, int64_t n, bool backward, Row& row) {
    const EV in = make_inputs(e, dtype, layout, n);
    const TV tin = to_torch_all(in);
    if (!backward) {
      TV tout;
      try {
        tout = e.torch(tin);
      } catch (const std::exception& ex) {
        row.status = std::string("n/a: libtorch has no such kernel (") + first_line(ex.what()) + ")";
        return;
      }
      std::string diff = compare(resolve_ties(e, in, e.ember(in)), resolve_ties(e, tin, tout));
      if (!diff.empty() && floating(dtype)) {
        const TV din = to_double(tin);
        row.disputed = diff;
        diff = accuracy(resolve_ties(e, in, e.ember(in)), resolve_ties(e, tin, tout), resolve_ties(e, din, e.torch(din)),
                        dtype);
      }
      if (!diff.empty()) return fail(row, diff);
      if (opt_.check_only) {
        row.status = "checked";
        return;
      }
      time(row, [&] { (void)e.ember(in); }, [&] { (void)e.torch(tin); });
      return;
    }
    // forward + backward: the valued operands require grad, each floating output gets a seeded
    // gradient of its shape
    const EV leaves = grad_leaves(e.roles, in);
    const TV tleaves = grad_leaves(e.roles, tin);
    TV touts;
    try {
      touts = floating_outputs(e.torch(tleaves));
    } catch (const std::exception& ex) {
      row.status = std::string("n/a: libtorch has no such kernel (") + first_line(ex.what()) + ")";
      return;
    }
    EV grads;
    if (e.ties_dim >= 0) {
      // An unstable order: tied values may come out in either order, so each output's gradient is
      // a function of its value (tied elements get equal gradients, and the inputs' gradients
      // are the same whichever order the sort chose).
      for (const ember::Tensor& v : floating_outputs(e.ember(in))) grads.push_back(v.detach().sin() + 1);
    } else {
      for (size_t i = 0; i < touts.size(); ++i) {
        grads.push_back(values(std::vector<int64_t>(touts[i].sizes().begin(), touts[i].sizes().end()), dtype,
                               Role::X, 99 + i));
      }
    }
    const TV tgrads = to_torch_all(grads);
    auto ember_step = [&] { run_backward(floating_outputs(e.ember(leaves)), grads); };
    auto torch_step = [&] { run_backward(floating_outputs(e.torch(tleaves)), tgrads); };
    try {
      torch_step();
    } catch (const std::exception& ex) {
      row.status = std::string("n/a: libtorch has no such backward (") + first_line(ex.what()) + ")";
      return;
    }
    ember_step();
    std::string diff = compare(leaf_grads(e.roles, leaves), leaf_grads(e.roles, tleaves));
    if (!diff.empty() && floating(dtype)) {
      row.disputed = "input gradients: " + diff;
      const TV dleaves = grad_leaves(e.roles, to_double(tin));
      run_backward(floating_outputs(e.torch(dleaves)), to_double(tgrads));
      diff = accuracy(leaf_grads(e.roles, leaves), leaf_grads(e.roles, tleaves), leaf_grads(e.roles, dleaves), dtype);
    }
    if (!diff.empty()) return fail(row, "input gradients: " + diff);
    if (opt_.check_only) {
      row.status = "checked";
      return;
    }
    time(row, ember_step, torch_step);
  }

  static void fail(Row& row, const std::string& why) {
    row.failed = true;
    row.status = "FAILED: " + why;
  }

  void time(Row& row, const std::function<void()>& ember_fn, const std::function<void()>& torch_fn) {
    const Case c{.name = row.name, .label = "sweep", .target = row.target, .run = {}};
    const Outcome o = time_pair(Context{c, opt_.threads, limits_},
                                {.ember = ember_fn, .baseline = torch_fn, .min_run_time = opt_.seconds, .rounds = 3});
    row.ember_us = o.ember;
    row.torch_us = o.baseline;
  }

  static std::string first_line(const std::string& s) { return s.substr(0, std::min(s.find('\n'), size_t{120})); }

  static std::string describe(const Row& r) {
    if (!r.ratio()) return r.status;
    char buf[128];
    std::snprintf(buf, sizeof buf, "ember %9.2f us  libtorch %9.2f us  ratio %6.3f%s", *r.ember_us, *r.torch_us,
                  *r.ratio(), *r.ratio() > r.target ? "  (over target)" : "");
    return buf;
  }

  void write_json() const {
    std::ofstream f(opt_.json);
    f << "[\n";
    for (size_t i = 0; i < rows_.size(); ++i) {
      const Row& r = rows_[i];
      const auto ratio = r.ratio();
      f << "  {\"name\": " << json_string(r.name) << ", \"unit\": \"us\", \"ember\": " << json_number(r.ember_us)
        << ", \"libtorch\": " << json_number(r.torch_us) << ", \"ratio\": " << json_number(ratio)
        << ", \"target\": " << json_number(r.target)
        << ", \"met\": " << (ratio ? (*ratio <= r.target ? "true" : "false") : "null");
      if (!r.status.empty()) f << ", \"status\": " << json_string(r.status);
      f << "}" << (i + 1 < rows_.size() ? "," : "") << "\n";
    }
    f << "]\n";
    if (!f) std::fprintf(stderr, "ember_bench: could not write %s\n", opt_.json.c_str());
  }

  const SweepOptions& opt_;
  const MachineLimits& limits_;
  std::vector<Row> rows_;
  int failures_ = 0;
};

}  // namespace

int run_sweep(const SweepOptions& o, const MachineLimits& limits) {
  std::regex filter;
  try {
    filter = std::regex(o.filter);
  } catch (const std::regex_error& e) {
    std::fprintf(stderr, "ember_bench: bad --filter regex '%s': %s\n", o.filter.c_str(), e.what());
    return 2;
  }
  Sweep sweep(o, limits);
  for (const Entry& e : entries()) {
    for (int64_t n : o.sizes) {
      for (ScalarType dtype : e.dtypes) {
        for (unsigned layout = 1; layout <= kChannelsLast; layout <<= 1) {
          if (!(e.layouts & layout)) continue;
          sweep.run(e, dtype, layout, n, false, filter);
          if (e.grad && floating(dtype) && (e.ties_dim < 0 || dtype == ember::kFloat)) {
            sweep.run(e, dtype, layout, n, true, filter);
          }
        }
      }
    }
  }
  if (sweep.rows() == 0) {
    std::fprintf(stderr, "ember_bench: no sweep row matches '%s'\n", o.filter.c_str());
    return 2;
  }
  return sweep.finish();
}

}  // namespace bench
