// Multi-tensor ops (include/ember/foreach.h). Each public function checks its lists, sorts the
// indices into the fast path (every operand contiguous, of one floating dtype and of one shape:
// one kernel pass over all of them, per dtype) and the per-tensor path (everything else: the
// tensor ops themselves, with their broadcasting and promotion), checks the per-tensor indices
// before anything is written, then runs both.
#include "ember/foreach.h"

#include <array>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <optional>

#include "core/tensor_iterator.h"
#include "dispatch/dispatch.h"
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/shape.h"
#include "kernels/cpu/foreach_kernels.h"
#include "ops/foreach.h"
#include "ops/pointwise_util.h"

namespace ember {
namespace {

using kernels::ForeachItem;
using kernels::ForeachOp;

constexpr std::array<ScalarType, 4> kFloatTypes = {kFloat, kDouble, kHalf, kBFloat16};

void check_lists(const char* op, std::initializer_list<TensorList> lists) {
  const TensorList self = *lists.begin();
  EMBER_CHECK(!self.empty(), op, "Tensor list must have at least one tensor.");
  for (const TensorList& l : lists) {
    EMBER_CHECK(l.size() == self.size(), op, "Tensor lists must have the same number of tensors, got ", self.size(),
                " and ", l.size());
    for (size_t i = 0; i < l.size(); ++i) EMBER_CHECK(l[i].defined(), op, "the tensor at index ", i, " is undefined");
  }
}
void check_floating(const char* op, const Tensor& t, size_t i) {
  EMBER_CHECK(is_floating_type(t.dtype()), op, "expected a floating point tensor at index ", i, ", got ", t.dtype(),
              " of shape ", t.sizes());
}
// PyTorch's AMP ops keep their scale, found_inf and inv_scale in 1-element float32 tensors.
void check_one_float(const char* op, const char* name, const Tensor& t) {
  EMBER_CHECK(t.defined(), op, name, " must be a 1-element float tensor, got an undefined tensor");
  EMBER_CHECK(t.numel() == 1 && t.dtype() == kFloat, op, name, " must be a 1-element float tensor, got ", t.dtype(),
              " of shape ", t.sizes());
}
void check_scalars(const char* op, TensorList self, ScalarList scalars) {
  EMBER_CHECK(scalars.size() == self.size(), op, "Tensor list must have same number of elements as scalar list, got ",
              self.size(), " tensors and ", scalars.size(), " scalars");
}

// The kernel item of one tensor, given as data[slot] (0: written, 1: read).
ForeachItem item_of(const Tensor& t, int slot) {
  ForeachItem it{};
  it.data[slot] = static_cast<char*>(t.data_ptr());
  it.numel = t.numel();
  return it;
}

// Calls f(dtype, the items of that dtype, their positions in `items`) once per float dtype
// present: a list mixing float dtypes runs one kernel pass per dtype.
template <class F>
void by_dtype(const std::vector<ForeachItem>& items, const std::vector<ScalarType>& dtypes, const F& f) {
  for (ScalarType t : kFloatTypes) {
    std::vector<ForeachItem> group;
    std::vector<size_t> positions;
    for (size_t k = 0; k < items.size(); ++k) {
      if (dtypes[k] != t) continue;
      group.push_back(items[k]);
      positions.push_back(k);
    }
    if (!group.empty()) f(t, group, positions);
  }
}

// The multi-tensor kernel over `items`: one pass, or one per dtype when they mix float dtypes.
void launch(ForeachOp kernel, ScalarType dtype, bool one_dtype, const std::vector<ForeachItem>& items,
            const std::vector<ScalarType>& item_dtypes) {
  if (one_dtype) {
    kernels::foreach_kernel(kernel, dtype, items.data(), static_cast<int64_t>(items.size()));
  } else {  // rare
    by_dtype(items, item_dtypes, [&](ScalarType t, const std::vector<ForeachItem>& group, const auto&) {
      kernels::foreach_kernel(kernel, t, group.data(), static_cast<int64_t>(group.size()));
    });
  }
}

// How an op treats index i.
struct Spec {
  const char* op;
  ForeachOp kernel;
  bool inplace;
  bool int_to_float = false;  // sqrt, exp, div: integer inputs give float results
  bool cast_check = true;     // copy_ casts to any dtype
};

// Whether index i runs in the multi-tensor kernel.
bool is_fast(std::initializer_list<TensorList> lists, size_t i) {
  const Tensor& s = lists.begin()[0][i];
  if (!is_floating_type(s.dtype()) || !s.is_contiguous()) return false;
  for (const TensorList& l : lists) {
    const Tensor& t = l[i];
    if (t.dtype() != s.dtype() || !t.is_contiguous() || t.sizes() != s.sizes()) return false;
  }
  return true;
}

// The checks of the per-tensor op at index i, made up front so a bad index leaves every tensor
// untouched: shapes broadcast (into self's shape for in-place forms) and the result type casts.
void check_slow(const Spec& spec, std::initializer_list<TensorList> lists, size_t i, const std::optional<Scalar>& s) {
  const Tensor& self = lists.begin()[0][i];
  ResultTypeState rt;
  DimVector shape(self.sizes());
  for (const TensorList& l : lists) {
    const Tensor& t = l[i];
    rt.update(t);
    bool ok = true;
    try {
      shape = infer_size(shape, t.sizes());
    } catch (const Error&) {
      ok = false;
    }
    ok = ok && (!spec.inplace || IntArrayRef(shape) == self.sizes());
    EMBER_CHECK(ok, spec.op, "the tensors at index ", i, " have shapes ", self.sizes(), " and ", t.sizes(),
                spec.inplace ? ", which do not broadcast to the first" : ", which do not broadcast");
  }
  if (s) rt.update(*s);
  ScalarType result = rt.result();
  if (spec.int_to_float && !is_floating_type(result)) result = kFloat;
  EMBER_CHECK(!spec.inplace || !spec.cast_check || can_cast(result, self.dtype()), spec.op, "at index ", i,
              ": result type ", result, " can't be cast to the desired output type ", self.dtype());
}

thread_local const Tensor* tls_found_inf = nullptr;  // detail::SkipStepOnInf's

// launch, unless *skip (a step GradScaler skips: ops/foreach.h).
void launch_unless(const float* skip, ForeachOp kernel, ScalarType dtype, bool one_dtype,
                   const std::vector<ForeachItem>& items, const std::vector<ScalarType>& item_dtypes) {
  if (!skip || *skip == 0) launch(kernel, dtype, one_dtype, items, item_dtypes);
}

// Tells a capturing graph about a kernel pass of run(): what it reads and writes, and how to run
// it again (the items hold the tensors' addresses and the scalars).
void record_launch(const Spec& spec, std::initializer_list<TensorList> lists, const std::vector<Tensor>& outs,
                   ScalarType dtype, bool one_dtype, const std::vector<ForeachItem>& items,
                   const std::vector<ScalarType>& item_dtypes) {
  const TensorList self = *lists.begin();
  std::vector<Tensor> reads, writes;
  for (size_t i = 0; i < self.size(); ++i) {
    if (!is_fast(lists, i)) continue;
    for (const TensorList& l : lists) reads.push_back(l[i]);
    writes.push_back(spec.inplace ? self[i] : outs[i]);
  }
  const float* skip = tls_found_inf ? tls_found_inf->data_ptr<float>() : nullptr;
  if (skip) reads.push_back(*tls_found_inf);
  dispatch::record_kernel(
      spec.op,
      [kernel = spec.kernel, dtype, one_dtype, items, item_dtypes, skip] {
        launch_unless(skip, kernel, dtype, one_dtype, items, item_dtypes);
      },
      reads, writes);
}

// Runs `spec` over the lists (self first). `scalar_at(i)` gives the kernel's scalar for index i,
// `slow(i)` the per-tensor op's result. Returns the outputs (the self tensors when in-place).
template <class ScalarAt, class Slow>
std::vector<Tensor> run(const Spec& spec, std::initializer_list<TensorList> lists, const ScalarAt& scalar_at,
                        const Slow& slow) {
  check_lists(spec.op, lists);
  NoGradGuard no_grad;
  const TensorList self = *lists.begin();
  const size_t n = self.size();
  std::vector<ForeachItem> items;
  std::vector<ScalarType> item_dtypes;
  items.reserve(n);
  std::vector<uint32_t> slow_idx;
  std::vector<Tensor> outs(spec.inplace ? 0 : n);
  bool one_dtype = true;
  for (size_t i = 0; i < n; ++i) {
    if (!is_fast(lists, i)) {
      check_slow(spec, lists, i, scalar_at(i));
      slow_idx.push_back(static_cast<uint32_t>(i));
      continue;
    }
    ForeachItem it{};
    const Tensor& s = self[i];
    if (spec.inplace) {
      it.data[0] = static_cast<char*>(s.data_ptr());
    } else {
      outs[i] = make_empty(s.sizes(), s.dtype());
      it.data[0] = static_cast<char*>(outs[i].data_ptr());
    }
    int k = 1;
    for (const TensorList& l : lists) it.data[k++] = static_cast<char*>(l[i].data_ptr());
    it.numel = s.numel();
    if (const std::optional<Scalar> sc = scalar_at(i)) it.s[0] = sc->toDouble();
    one_dtype = one_dtype && s.dtype() == self[0].dtype();
    items.push_back(it);
    item_dtypes.push_back(s.dtype());
  }
  EMBER_CHECK(!tls_found_inf || slow_idx.empty(), spec.op, "the tensors at index ", slow_idx.empty() ? 0 : slow_idx[0],
              " are not contiguous floating tensors of one dtype and shape: a step GradScaler may skip in a "
              "captured graph runs on the multi-tensor kernel only");
  if (!items.empty()) {
    launch_unless(tls_found_inf ? tls_found_inf->data_ptr<float>() : nullptr, spec.kernel, self[0].dtype(), one_dtype,
                  items, item_dtypes);
    // A capturing graph (ember::graphs) replays the same pass over the same memory.
    if (dispatch::capturing()) [[unlikely]] record_launch(spec, lists, outs, self[0].dtype(), one_dtype, items, item_dtypes);
  }
  for (uint32_t i : slow_idx) {
    try {
      Tensor r = slow(i);
      if (!spec.inplace) outs[i] = std::move(r);
    } catch (const Error& e) {
      detail::fail(spec.op, "at index ", i, " (shape ", self[i].sizes(), "): ", e.what());
    }
  }
  if (spec.inplace)
    for (size_t i = 0; i < n; ++i) pointwise::bump_version(self[i]);
  return outs;
}

std::optional<Scalar> no_scalar(size_t) { return std::nullopt; }

// ---- binary ops: self op scalar / scalar list / tensor list -----------------------------------
enum class Arith { Add, Sub, Mul, Div };
constexpr const char* kArithNames[4][2] = {{"foreach_add", "foreach_add_"},
                                           {"foreach_sub", "foreach_sub_"},
                                           {"foreach_mul", "foreach_mul_"},
                                           {"foreach_div", "foreach_div_"}};

Spec arith_spec(Arith a, bool inplace, bool scalar) {
  static constexpr ForeachOp kScalar[] = {ForeachOp::AddScalar, ForeachOp::AddScalar, ForeachOp::MulScalar,
                                          ForeachOp::DivScalar};
  static constexpr ForeachOp kTensor[] = {ForeachOp::Add, ForeachOp::Add, ForeachOp::Mul, ForeachOp::Div};
  const int ai = static_cast<int>(a);
  return {kArithNames[ai][inplace], scalar ? kScalar[ai] : kTensor[ai], inplace, a == Arith::Div};
}

Tensor arith_one(Arith a, bool inplace, const Tensor& self, const Tensor& other, const Scalar& alpha) {
  Tensor t = self;
  switch (a) {
    case Arith::Add:
      return inplace ? t.add_(other, alpha) : t.add(other, alpha);
    case Arith::Sub:
      return inplace ? t.sub_(other, alpha) : t.sub(other, alpha);
    case Arith::Mul:
      return inplace ? t.mul_(other) : t.mul(other);
    case Arith::Div:
      return inplace ? t.div_(other) : t.div(other);
  }
  return t;
}
Tensor arith_one(Arith a, bool inplace, const Tensor& self, const Scalar& s) {
  Tensor t = self;
  switch (a) {
    case Arith::Add:
      return inplace ? t.add_(s) : t.add(s);
    case Arith::Sub:
      return inplace ? t.sub_(s) : t.sub(s);
    case Arith::Mul:
      return inplace ? t.mul_(s) : t.mul(s);
    case Arith::Div:
      return inplace ? t.div_(s) : t.div(s);
  }
  return t;
}

// The kernel adds; subtraction negates the scalar (a - s == a + (-s) exactly).
Scalar kernel_scalar(Arith a, const Scalar& s) { return a == Arith::Sub ? -s : s; }

std::vector<Tensor> arith_scalars(Arith a, bool inplace, TensorList self, ScalarList scalars) {
  const Spec spec = arith_spec(a, inplace, true);
  check_scalars(spec.op, self, scalars);
  return run(
      spec, {self}, [&](size_t i) { return std::optional<Scalar>(kernel_scalar(a, scalars[i])); },
      [&](size_t i) { return arith_one(a, inplace, self[i], scalars[i]); });
}
std::vector<Tensor> arith_scalar(Arith a, bool inplace, TensorList self, const Scalar& s) {
  return run(
      arith_spec(a, inplace, true), {self}, [&](size_t) { return std::optional<Scalar>(kernel_scalar(a, s)); },
      [&](size_t i) { return arith_one(a, inplace, self[i], s); });
}
std::vector<Tensor> arith_tensors(Arith a, bool inplace, TensorList self, TensorList other, const Scalar& alpha) {
  return run(
      arith_spec(a, inplace, false), {self, other},
      [&](size_t) { return std::optional<Scalar>(a == Arith::Sub ? -alpha : alpha); },
      [&](size_t i) { return arith_one(a, inplace, self[i], other[i], alpha); });
}

// ---- pointwise ops of three lists ---------------------------------------------------------------
std::vector<Tensor> addc(bool mul, bool inplace, TensorList self, TensorList t1, TensorList t2,
                         const std::function<Scalar(size_t)>& value) {
  const Spec spec{
      mul ? (inplace ? "foreach_addcmul_" : "foreach_addcmul") : (inplace ? "foreach_addcdiv_" : "foreach_addcdiv"),
      mul ? ForeachOp::Addcmul : ForeachOp::Addcdiv, inplace, !mul};
  return run(
      spec, {self, t1, t2}, [&](size_t i) { return std::optional<Scalar>(value(i)); },
      [&](size_t i) {
        Tensor t = self[i];
        if (mul) return inplace ? t.addcmul_(t1[i], t2[i], value(i)) : t.addcmul(t1[i], t2[i], value(i));
        return inplace ? t.addcdiv_(t1[i], t2[i], value(i)) : t.addcdiv(t1[i], t2[i], value(i));
      });
}

// ---- unary ops ----------------------------------------------------------------------------------
std::vector<Tensor> unary(const char* op, ForeachOp k, bool inplace, TensorList self, Tensor (*slow)(const Tensor&),
                          Tensor& (Tensor::*slow_)() const) {
  return run({op, k, inplace, k == ForeachOp::Sqrt || k == ForeachOp::Exp}, {self}, no_scalar, [&](size_t i) {
    Tensor t = self[i];
    return inplace ? (t.*slow_)() : slow(t);
  });
}

// A 0-dim tensor holding `v` in dtype t (written directly: no op per tensor).
Tensor scalar_of(double v, ScalarType t) {
  Tensor r = make_empty({}, t);
  switch (t) {
    case kFloat:
      *r.data_ptr<float>() = static_cast<float>(v);
      break;
    case kDouble:
      *r.data_ptr<double>() = v;
      break;
    case kHalf:
      *r.data_ptr<Half>() = Half(static_cast<float>(v));
      break;
    default:
      *r.data_ptr<BFloat16>() = BFloat16(static_cast<float>(v));
      break;
  }
  return r;
}

}  // namespace

#define EMBER_FOREACH_ARITH(name, A)                                                                     \
  void name##_(TensorList self, const Scalar& s) { arith_scalar(A, true, self, s); }                     \
  void name##_(TensorList self, ScalarList s) { arith_scalars(A, true, self, s); }                       \
  std::vector<Tensor> name(TensorList self, const Scalar& s) { return arith_scalar(A, false, self, s); } \
  std::vector<Tensor> name(TensorList self, ScalarList s) { return arith_scalars(A, false, self, s); }
EMBER_FOREACH_ARITH(foreach_add, Arith::Add)
EMBER_FOREACH_ARITH(foreach_sub, Arith::Sub)
EMBER_FOREACH_ARITH(foreach_mul, Arith::Mul)
EMBER_FOREACH_ARITH(foreach_div, Arith::Div)
#undef EMBER_FOREACH_ARITH

void foreach_add_(TensorList self, TensorList other, const Scalar& alpha) {
  arith_tensors(Arith::Add, true, self, other, alpha);
}
std::vector<Tensor> foreach_add(TensorList self, TensorList other, const Scalar& alpha) {
  return arith_tensors(Arith::Add, false, self, other, alpha);
}
void foreach_sub_(TensorList self, TensorList other, const Scalar& alpha) {
  arith_tensors(Arith::Sub, true, self, other, alpha);
}
std::vector<Tensor> foreach_sub(TensorList self, TensorList other, const Scalar& alpha) {
  return arith_tensors(Arith::Sub, false, self, other, alpha);
}
void foreach_mul_(TensorList self, TensorList other) { arith_tensors(Arith::Mul, true, self, other, 1); }
std::vector<Tensor> foreach_mul(TensorList self, TensorList other) {
  return arith_tensors(Arith::Mul, false, self, other, 1);
}
void foreach_div_(TensorList self, TensorList other) { arith_tensors(Arith::Div, true, self, other, 1); }
std::vector<Tensor> foreach_div(TensorList self, TensorList other) {
  return arith_tensors(Arith::Div, false, self, other, 1);
}

namespace {
Scalar scalar_from_tensor(const char* op, const Tensor& scalar) {
  EMBER_CHECK(scalar.defined() && scalar.dim() == 0, op, "scalar tensor expected to be 0 dim but it has ",
              scalar.defined() ? scalar.dim() : 0, " dimensions and ", scalar.defined() ? scalar.numel() : 0,
              " elements.");
  return scalar.item();
}
}  // namespace
void foreach_mul_(TensorList self, const Tensor& scalar) {
  foreach_mul_(self, scalar_from_tensor("foreach_mul_", scalar));
}
std::vector<Tensor> foreach_mul(TensorList self, const Tensor& scalar) {
  return foreach_mul(self, scalar_from_tensor("foreach_mul", scalar));
}

void foreach_addcmul_(TensorList self, TensorList t1, TensorList t2, const Scalar& value) {
  addc(true, true, self, t1, t2, [&](size_t) { return value; });
}
void foreach_addcmul_(TensorList self, TensorList t1, TensorList t2, ScalarList values) {
  check_scalars("foreach_addcmul_", self, values);
  addc(true, true, self, t1, t2, [&](size_t i) { return values[i]; });
}
std::vector<Tensor> foreach_addcmul(TensorList self, TensorList t1, TensorList t2, const Scalar& value) {
  return addc(true, false, self, t1, t2, [&](size_t) { return value; });
}
std::vector<Tensor> foreach_addcmul(TensorList self, TensorList t1, TensorList t2, ScalarList values) {
  check_scalars("foreach_addcmul", self, values);
  return addc(true, false, self, t1, t2, [&](size_t i) { return values[i]; });
}
void foreach_addcdiv_(TensorList self, TensorList t1, TensorList t2, const Scalar& value) {
  addc(false, true, self, t1, t2, [&](size_t) { return value; });
}
void foreach_addcdiv_(TensorList self, TensorList t1, TensorList t2, ScalarList values) {
  check_scalars("foreach_addcdiv_", self, values);
  addc(false, true, self, t1, t2, [&](size_t i) { return values[i]; });
}
std::vector<Tensor> foreach_addcdiv(TensorList self, TensorList t1, TensorList t2, const Scalar& value) {
  return addc(false, false, self, t1, t2, [&](size_t) { return value; });
}
std::vector<Tensor> foreach_addcdiv(TensorList self, TensorList t1, TensorList t2, ScalarList values) {
  check_scalars("foreach_addcdiv", self, values);
  return addc(false, false, self, t1, t2, [&](size_t i) { return values[i]; });
}

namespace {
std::vector<Tensor> lerp_scalar(bool inplace, TensorList self, TensorList end, const Scalar& w) {
  return run(
      {inplace ? "foreach_lerp_" : "foreach_lerp", ForeachOp::Lerp, inplace}, {self, end},
      [&](size_t) { return std::optional<Scalar>(w); },
      [&](size_t i) {
        Tensor t = self[i];
        return inplace ? t.lerp_(end[i], w) : t.lerp(end[i], w);
      });
}
std::vector<Tensor> lerp_tensor(bool inplace, TensorList self, TensorList end, TensorList w) {
  return run({inplace ? "foreach_lerp_" : "foreach_lerp", ForeachOp::LerpTensor, inplace}, {self, end, w}, no_scalar,
             [&](size_t i) {
               Tensor t = self[i];
               return inplace ? t.lerp_(end[i], w[i]) : t.lerp(end[i], w[i]);
             });
}
std::vector<Tensor> maximum_impl(bool inplace, TensorList self, TensorList other) {
  return run({inplace ? "foreach_maximum_" : "foreach_maximum", ForeachOp::Maximum, inplace}, {self, other}, no_scalar,
             [&](size_t i) {
               Tensor r = maximum(self[i], other[i]);
               if (!inplace) return r;
               Tensor t = self[i];
               return t.copy_(r);
             });
}
}  // namespace

void foreach_lerp_(TensorList self, TensorList end, const Scalar& w) { lerp_scalar(true, self, end, w); }
void foreach_lerp_(TensorList self, TensorList end, TensorList w) { lerp_tensor(true, self, end, w); }
std::vector<Tensor> foreach_lerp(TensorList self, TensorList end, const Scalar& w) {
  return lerp_scalar(false, self, end, w);
}
std::vector<Tensor> foreach_lerp(TensorList self, TensorList end, TensorList w) {
  return lerp_tensor(false, self, end, w);
}
void foreach_maximum_(TensorList self, TensorList other) { maximum_impl(true, self, other); }
std::vector<Tensor> foreach_maximum(TensorList self, TensorList other) { return maximum_impl(false, self, other); }

#define EMBER_FOREACH_UNARY(name, K)                                                                      \
  void foreach_##name##_(TensorList self) {                                                               \
    unary(                                                                                                \
        "foreach_" #name "_", K, true, self, [](const Tensor& t) { return t.name(); }, &Tensor::name##_); \
  }                                                                                                       \
  std::vector<Tensor> foreach_##name(TensorList self) {                                                   \
    return unary(                                                                                         \
        "foreach_" #name, K, false, self, [](const Tensor& t) { return t.name(); }, &Tensor::name##_);    \
  }
EMBER_FOREACH_UNARY(sqrt, ForeachOp::Sqrt)
EMBER_FOREACH_UNARY(neg, ForeachOp::Neg)
EMBER_FOREACH_UNARY(abs, ForeachOp::Abs)
EMBER_FOREACH_UNARY(exp, ForeachOp::Exp)
#undef EMBER_FOREACH_UNARY

void foreach_zero_(TensorList self) {
  run(
      {"foreach_zero_", ForeachOp::Fill, true}, {self}, [](size_t) { return std::optional<Scalar>(0.0); },
      [&](size_t i) {
        Tensor t = self[i];
        return t.zero_();
      });
}

void foreach_copy_(TensorList self, TensorList src) {
  run({"foreach_copy_", ForeachOp::Copy, true, false, false}, {self, src}, no_scalar, [&](size_t i) {
    Tensor t = self[i];
    return t.copy_(src[i]);
  });
}

std::vector<Tensor> foreach_norm(TensorList self, const Scalar& ord) {
  constexpr const char* op = "foreach_norm";
  check_lists(op, {self});
  const double p = ord.toDouble();
  EMBER_CHECK(p == 1 || p == 2 || (std::isinf(p) && p > 0), op, "ord must be 1, 2 or inf, got ", ord);
  NoGradGuard no_grad;
  std::vector<Tensor> outs(self.size());
  std::vector<ForeachItem> items;
  std::vector<ScalarType> dtypes;
  std::vector<size_t> where;
  for (size_t i = 0; i < self.size(); ++i) {
    const Tensor& t = self[i];
    check_floating(op, t, i);
    if (!t.is_contiguous()) {
      outs[i] = norm(t, ord);
      continue;
    }
    items.push_back(item_of(t, 1));
    dtypes.push_back(t.dtype());
    where.push_back(i);
  }
  by_dtype(items, dtypes, [&](ScalarType t, const std::vector<ForeachItem>& group, const std::vector<size_t>& pos) {
    std::vector<double> result(group.size());
    kernels::foreach_norm_kernel(t, group.data(), static_cast<int64_t>(group.size()), p, result.data());
    for (size_t k = 0; k < pos.size(); ++k) outs[where[pos[k]]] = scalar_of(result[k], t);
  });
  return outs;
}

// ---- AMP --------------------------------------------------------------------------------------

namespace {
// The contiguous gradients' pass: multiplies them by *inv_scale and sets *found_inf to 1 if any
// element was inf or NaN. Both are read when the pass runs, so a captured graph's replay
// (ember::graphs) unscales by each step's scale without a host read.
void unscale_pass(const std::vector<ForeachItem>& items, const std::vector<ScalarType>& dtypes, const float* inv_scale,
                  float* found_inf) {
  const double inv = *inv_scale;
  bool found = false;
  by_dtype(items, dtypes, [&](ScalarType t, const std::vector<ForeachItem>& group, const auto&) {
    found = kernels::foreach_unscale_kernel(t, group.data(), static_cast<int64_t>(group.size()), inv) || found;
  });
  if (found) *found_inf = 1.0f;
}

// PyTorch's scale update: back off after inf/NaN, else grow after growth_interval clean steps.
// Reads and writes the tensors' memory when it runs, for the reason unscale_pass does.
void update_scale(float* scale, int32_t* growth_tracker, const float* found_inf, double growth_factor,
                  double backoff_factor, int64_t growth_interval) {
  const float current = *scale;
  if (*found_inf != 0) {
    *scale = static_cast<float>(current * backoff_factor);
    *growth_tracker = 0;
    return;
  }
  const int64_t successful = *growth_tracker + 1;
  if (successful == growth_interval) {
    const float grown = static_cast<float>(current * growth_factor);
    if (std::isfinite(grown)) *scale = grown;
    *growth_tracker = 0;
  } else {
    *growth_tracker = static_cast<int32_t>(successful);
  }
}
}  // namespace

void _amp_foreach_non_finite_check_and_unscale_(TensorList self, Tensor& found_inf, const Tensor& inv_scale) {
  constexpr const char* op = "_amp_foreach_non_finite_check_and_unscale_";
  check_one_float(op, "found_inf", found_inf);
  check_one_float(op, "inv_scale", inv_scale);
  if (self.empty()) return;
  check_lists(op, {self});
  for (size_t i = 0; i < self.size(); ++i) check_floating(op, self[i], i);
  NoGradGuard no_grad;
  // Contiguous gradients: one kernel pass per dtype that unscales and checks together. Others
  // (rare: gradients are made contiguous) check, then unscale.
  std::vector<ForeachItem> items;
  std::vector<ScalarType> dtypes;
  bool found = false;
  for (const Tensor& g : self) {
    if (!g.is_contiguous()) {
      EMBER_CHECK(!dispatch::capturing(), op, "a gradient of shape ", g.sizes(), " and strides ", g.strides(),
                  " is not contiguous: only contiguous gradients can be unscaled in a captured graph");
      found = found || !g.isfinite().all().item<bool>();
      Tensor(g).mul_(inv_scale.item<double>());
      continue;
    }
    items.push_back(item_of(g, 0));
    dtypes.push_back(g.dtype());
  }
  if (found) found_inf.fill_(1.0);
  if (items.empty()) return;
  float* found_ptr = found_inf.data_ptr<float>();
  const float* inv_ptr = inv_scale.data_ptr<float>();
  unscale_pass(items, dtypes, inv_ptr, found_ptr);
  pointwise::bump_version(found_inf);
  for (const Tensor& g : self)
    if (g.is_contiguous()) pointwise::bump_version(g);
  if (dispatch::capturing()) [[unlikely]] {
    std::vector<Tensor> reads(self.begin(), self.end()), writes(self.begin(), self.end());
    reads.insert(reads.end(), {inv_scale, found_inf});
    writes.push_back(found_inf);
    dispatch::record_kernel(
        op, [items, dtypes, inv_ptr, found_ptr] { unscale_pass(items, dtypes, inv_ptr, found_ptr); }, reads, writes);
  }
}

Tensor& _amp_update_scale_(Tensor& self, Tensor& growth_tracker, const Tensor& found_inf, double scale_growth_factor,
                           double scale_backoff_factor, int64_t growth_interval) {
  constexpr const char* op = "_amp_update_scale_";
  check_one_float(op, "current_scale", self);
  check_one_float(op, "found_inf", found_inf);
  EMBER_CHECK(growth_tracker.numel() == 1 && growth_tracker.dtype() == kInt, op,
              "growth_tracker must be a 1-element int tensor, got ", growth_tracker.dtype(), " of shape ",
              growth_tracker.sizes());
  float* scale = self.data_ptr<float>();
  int32_t* tracker = growth_tracker.data_ptr<int32_t>();
  const float* found = found_inf.data_ptr<float>();
  update_scale(scale, tracker, found, scale_growth_factor, scale_backoff_factor, growth_interval);
  pointwise::bump_version(self);
  pointwise::bump_version(growth_tracker);
  if (dispatch::capturing()) [[unlikely]] {
    dispatch::record_kernel(
        op,
        [=] { update_scale(scale, tracker, found, scale_growth_factor, scale_backoff_factor, growth_interval); },
        {self, growth_tracker, found_inf}, {self, growth_tracker});
  }
  return self;
}

namespace detail {
SkipStepOnInf::SkipStepOnInf(const Tensor& found_inf) : previous_(tls_found_inf) { tls_found_inf = &found_inf; }
SkipStepOnInf::~SkipStepOnInf() { tls_found_inf = previous_; }
const Tensor* SkipStepOnInf::found_inf() { return tls_found_inf; }
}  // namespace detail

}  // namespace ember
