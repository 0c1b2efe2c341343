// Reductions and scans: sum, mean, prod, max/min, amax/amin, argmax/argmin, var/std and their
// _mean forms, norm, logsumexp, all/any, cumsum/cumprod. Each op struct checks its arguments,
// picks the result dtype as PyTorch does, allocates a contiguous result and runs a kernel of
// kernels/cpu/reduce.h through a keepdim view of it (size 1 at the reduced dims).
#include "ember/reduce.h"

#include <cmath>
#include <string_view>

#include "autograd/variable.h"
#include "dispatch/dispatch.h"
#include "ember/complex_ops.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/pointwise.h"
#include "kernels/cpu/complex_kernels.h"
#include "kernels/cpu/reduce.h"
#include "ops/indexing_util.h"

namespace ember {
namespace {

using kernels::Finish;
using kernels::ReduceKind;
using kernels::ReduceSpec;
using kernels::Transform;

// ---- shapes -------------------------------------------------------------------------------

// Bit d set when dim d is reduced. An absent or empty list reduces every dim.
uint64_t dim_mask(const char* op, const Tensor& self, OptionalIntArrayRef dims) {
  const int64_t nd = self.dim();
  EMBER_CHECK(nd <= 64, op, "tensors with more than 64 dims are not supported");
  if (!dims || dims->empty()) return nd == 64 ? ~uint64_t{0} : (uint64_t{1} << nd) - 1;
  uint64_t mask = 0;
  for (int64_t d : *dims) {
    const int64_t w = maybe_wrap_dim(d, nd, op);
    EMBER_CHECK(!((mask >> w) & 1), op, "dim ", w, " appears multiple times in the list of dims");
    mask |= uint64_t{1} << w;
  }
  return nd == 0 ? 0 : mask;
}

uint64_t single_dim_mask(const Tensor& self, int64_t dim) { return self.dim() == 0 ? 0 : uint64_t{1} << dim; }

bool is_reduced(uint64_t mask, int64_t d) { return (mask >> d) & 1; }

DimVector result_shape(const Tensor& self, uint64_t mask, bool keepdim) {
  DimVector shape;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!is_reduced(mask, d)) {
      shape.push_back(self.size(d));
    } else if (keepdim) {
      shape.push_back(1);
    }
  }
  return shape;
}

int64_t reduced_count(const Tensor& self, uint64_t mask) {
  int64_t n = 1;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (is_reduced(mask, d)) n *= self.size(d);
  return n;
}

// A contiguous result in the caller's shape, and the same memory in keepdim shape for the kernels
// (an alias made directly: the result is a fresh tensor, not a view, as PyTorch's; through
// view() it was one, and a view cost a tenth of max()'s time on 1K elements).
struct Result {
  Tensor keep;  // what kernels write
  Tensor user;  // what the op returns
};
Result make_result(const Tensor& self, uint64_t mask, bool keepdim, ScalarType dtype) {
  Tensor user = make_empty(result_shape(self, mask, keepdim), dtype);
  if (keepdim) return {user, user};
  return {contiguous_alias(user, result_shape(self, mask, true)), user};
}

// max(), argmax() and friends have no identity: an empty input or an empty reduced dim is an error.
void check_nonempty_reduction(const char* op, const Tensor& self, uint64_t mask, bool dims_given) {
  if (self.numel() != 0) return;
  EMBER_CHECK(dims_given, op, "Expected reduction dim to be specified for input.numel() == 0. Specify the "
              "reduction dim with the 'dim' argument.");
  for (int64_t d = 0; d < self.dim(); ++d)
    EMBER_CHECK(!is_reduced(mask, d) || self.size(d) != 0, op, "Expected reduction dim ", d,
                " to have non-zero size.");
}

// ---- dtypes -------------------------------------------------------------------------------

// sum and prod (and the scans): integers and bool give int64 unless a dtype is asked for.
ScalarType accumulate_dtype(const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral_type(self.dtype(), true) ? kLong : self.dtype();
}

// The input as the kernels read it for a result of dtype rt. PyTorch casts the input to rt
// first; between integer dtypes that cast is skipped, because int64 accumulation that wraps
// gives the same result modulo the narrower type.
Tensor input_for(const Tensor& self, ScalarType rt) {
  if (self.dtype() == rt) return self;
  if (is_integral_type(self.dtype(), true) && is_integral_type(rt, false)) return self;
  return self.to(rt);
}

// The kernels' value dtype for an input (integers accumulate in int64).
ScalarType kernel_dtype(const Tensor& in) { return is_floating_type(in.dtype()) ? in.dtype() : kLong; }

Tensor as_dtype(const Tensor& t, ScalarType dtype) { return t.dtype() == dtype ? t : t.to(dtype); }

// ---- sum, mean, prod ------------------------------------------------------------------------

// Complex sum and mean: the real kernels over the real view (shape + [2]), whose last dim is kept.
Tensor complex_sum_like(const Tensor& self, uint64_t mask, bool keepdim, ScalarType rt, ReduceSpec spec) {
  const Tensor rv = view_as_real(input_for(self, rt).resolve_conj());
  Result r = make_result(rv, mask, keepdim, rv.dtype());
  kernels::reduce_kernel(r.keep, rv, mask, spec);
  return view_as_complex(r.user);
}
// Complex prod: the reduced dims moved last, one product per row.
Tensor complex_prod(const Tensor& self, uint64_t mask, bool keepdim, ScalarType rt) {
  DimVector perm, kept;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (!is_reduced(mask, d)) perm.push_back(d);
  for (int64_t d = 0; d < self.dim(); ++d)
    if (is_reduced(mask, d)) perm.push_back(d);
  const Tensor in = input_for(self, rt).permute(perm).contiguous().resolve_conj();
  Result r = make_result(self, mask, keepdim, rt);
  const int64_t rows = r.keep.numel(), n = rows == 0 ? 0 : in.numel() / rows;
  kernels::complex_prod_rows(r.keep, in, rows, n, false);
  return r.user;
}

Tensor sum_like(const char* op, const Tensor& self, uint64_t mask, bool keepdim, ScalarType rt, ReduceSpec spec) {
  if (is_complex_type(rt)) {
    if (spec.kind == ReduceKind::Prod) return complex_prod(self, mask, keepdim, rt);
    return complex_sum_like(self, mask, keepdim, rt, spec);
  }
  const Tensor in = input_for(self, rt);
  Result r = make_result(self, mask, keepdim, kernel_dtype(in));
  kernels::reduce_kernel(r.keep, in, mask, spec);
  return as_dtype(r.user, rt);
}

ReduceSpec spec_of(ReduceKind kind, Transform t = Transform::None, Finish f = Finish::None) {
  ReduceSpec s;
  s.kind = kind;
  s.transform = t;
  s.finish = f;
  return s;
}

// A reduction's result (or gradient) with its reduced dims back as size 1 (restore_reduced_dims).
Tensor restore_reduced_dims(const Tensor& t, IntArrayRef sizes, uint64_t mask, bool keepdim) {
  if (keepdim) return t;
  DimVector kept(sizes);
  for (size_t d = 0; d < kept.size(); ++d)
    if (is_reduced(mask, static_cast<int64_t>(d))) kept[d] = 1;
  return t.reshape(kept);
}

// The reduced dims as a list, for the ops the backward formulas call.
DimVector reduced_dims(uint64_t mask, int64_t nd) {
  DimVector dims;
  for (int64_t d = 0; d < nd; ++d)
    if (is_reduced(mask, d)) dims.push_back(d);
  return dims;
}

// The gradient of a sum over the dims in `mask`: grad spread back over them (sum_backward).
Tensor sum_backward(const Tensor& grad, IntArrayRef sizes, uint64_t mask, bool keepdim) {
  return restore_reduced_dims(grad, sizes, mask, keepdim).expand(sizes);
}

// Everything a reduction's backward formula needs to know about its dims.
struct Reduced {
  DimVector sizes;  // the input's
  uint64_t mask;
  bool keepdim;
  Tensor restore(const Tensor& t) const { return restore_reduced_dims(t, sizes, mask, keepdim); }
  DimVector dims() const { return reduced_dims(mask, static_cast<int64_t>(sizes.size())); }
};

// mean's backward: the gradient spread over the n reduced positions.
Tensor mean_backward(const Tensor& grad, const Reduced& red, int64_t n) {
  return sum_backward(grad, red.sizes, red.mask, red.keepdim) / n;
}

struct SumOp {
  static constexpr const char* name = "sum";
  static constexpr bool conj_aware = true;  // resolves the bit itself
  static Tensor run(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
    const uint64_t mask = dim_mask(name, self, dim);
    return sum_like(name, self, mask, keepdim, accumulate_dtype(self, dtype), spec_of(ReduceKind::Sum));
  }
  // SumBackward0 (all) / SumBackward1 (dims) -- self: sum_backward(grad, self.sizes(), dim, keepdim)
  static void derivative(autograd::Derivative& d, const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                         std::optional<ScalarType>) {
    d.name(dim ? "SumBackward1" : "SumBackward0");
    d.grad(self, [sizes = DimVector(self.sizes()), mask = dim_mask(name, self, dim), keepdim](const auto& c) {
      return sum_backward(c.grad(), sizes, mask, keepdim);
    });
  }
};

struct SumOutOp {
  static constexpr const char* name = "sum_out";
  static Tensor& run(Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                     std::optional<ScalarType> dtype) {
    EMBER_CHECK(out.defined(), name, "the out tensor is undefined");
    EMBER_CHECK(!dtype || *dtype == out.dtype(), name, "Expected out tensor to have dtype ", *dtype, ", but got ",
                out.dtype(), " instead");
    // As PyTorch: the out tensor's dtype is the dtype of the sum. Computing into a fresh tensor
    // first keeps `out` untouched on error and lets it alias the input.
    const Tensor result = SumOp::run(self, dim, keepdim, out.dtype());
    if (!out.sizes().equals(result.sizes())) out.resize_(result.sizes());
    out.copy_(result);
    return out;
  }
};

struct MeanOp {
  static constexpr const char* name = "mean";
  static constexpr bool conj_aware = true;  // resolves the bit itself
  static Tensor run(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
    if (dtype) {
      EMBER_CHECK(is_floating_type(*dtype) || is_complex_type(*dtype), name, "could not infer output dtype. Optional dtype must be either a "
                  "floating point or complex dtype. Got: ", *dtype);
    } else {
      EMBER_CHECK(self.is_floating_point() || self.is_complex(), name, "could not infer output dtype. Input dtype must be either a "
                  "floating point or complex dtype. Got: ", self.dtype());
    }
    const uint64_t mask = dim_mask(name, self, dim);
    ReduceSpec spec = spec_of(ReduceKind::Sum, Transform::None, Finish::Divide);
    spec.divisor = static_cast<double>(reduced_count(self, mask));
    return sum_like(name, self, mask, keepdim, dtype.value_or(self.dtype()), spec);
  }
  // MeanBackward0 (all) / MeanBackward1 (dims) -- self: sum_backward(grad, ...) / count
  static void derivative(autograd::Derivative& d, const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                         std::optional<ScalarType>) {
    d.name(dim ? "MeanBackward1" : "MeanBackward0");
    const Reduced red{DimVector(self.sizes()), dim_mask(name, self, dim), keepdim};
    d.grad(self, [red, n = reduced_count(self, red.mask)](const auto& c) { return mean_backward(c.grad(), red, n); });
  }
};

struct ProdOp {
  static constexpr const char* name = "prod";
  static constexpr bool conj_aware = true;  // resolves the bit itself
  static constexpr dispatch::Autocast autocast = dispatch::Autocast::kFloat32;
  static Tensor run(const Tensor& self, std::optional<int64_t> dim, bool keepdim, std::optional<ScalarType> dtype) {
    const uint64_t mask = dim ? single_dim_mask(self, maybe_wrap_dim(*dim, self.dim(), name)) : dim_mask(name, self, {});
    return sum_like(name, self, mask, keepdim, accumulate_dtype(self, dtype), spec_of(ReduceKind::Prod));
  }
  // ProdBackward0 (all) / ProdBackward1 (dim) -- self: prod_backward(grad, self, result[, dim, keepdim])
  static void derivative(autograd::Derivative& d, const Tensor& self, std::optional<int64_t> dim, bool keepdim,
                         std::optional<ScalarType>) {
    d.name(dim ? "ProdBackward1" : "ProdBackward0");
    const std::optional<int64_t> wrapped = dim ? std::optional(maybe_wrap_dim(*dim, self.dim(), name)) : std::nullopt;
    d.grad(self, [s = d.save(self), r = d.save_result(), wrapped, keepdim](const auto& c) {
      const Tensor x = c[s];
      if (x.dim() == 0) return c.grad();
      if (!wrapped) {
        return prod_backward(c.grad().reshape({1}), x.reshape({-1}), c[r].reshape({1}), 0).view(x.sizes());
      }
      const int64_t d = *wrapped;
      if (keepdim) return prod_backward(c.grad(), x, c[r], d);
      return prod_backward(c.grad().unsqueeze(d), x, c[r].unsqueeze(d), d);
    });
  }
  // grad * result / x along dim d (grad and result keep d as size 1), or, when x has zeros, the
  // product of the other elements as exclusive cumulative products from both ends.
  static Tensor prod_backward(const Tensor& grad, const Tensor& x, const Tensor& result, int64_t d) {
    if (!(x == 0).any().template item<bool>()) return grad * (result / x).conj();
    const int64_t n = x.size(d);
    if (n == 1) return grad.expand(x.sizes()).clone();
    DimVector ones_size(x.sizes());
    ones_size[d] = 1;
    const Tensor one = ones(ones_size, TensorOptions().dtype(x.dtype()));
    const Tensor before = cat({one, x.narrow(d, 0, n - 1)}, d).cumprod(d);
    const Tensor after = cat({one, x.narrow(d, 1, n - 1).flip({d})}, d).cumprod(d).flip({d});
    return grad * (before * after).conj();
  }
};

// ---- max, min, amax, amin, argmax, argmin --------------------------------------------------

// Complex numbers have no order: max, min, amax, argmax, ... raise PyTorch's error, which names
// its kernel ("max_all" for max(), "max_values_cpu" for amax, ...).
void check_not_complex(const char* op, const Tensor& self, const char* kernel) {
  EMBER_CHECK(!self.is_complex(), op, "\"", kernel, "\" not implemented for '", self.dtype(), "'");
}

Tensor extreme_values(const char* op, const Tensor& self, uint64_t mask, bool keepdim, bool dims_given, bool is_max) {
  const bool amax_like = std::string_view(op).starts_with("am");  // amax, amin
  check_not_complex(op, self, amax_like ? (is_max ? "max_values_cpu" : "min_values_cpu") : (is_max ? "max_all" : "min_all"));
  check_nonempty_reduction(op, self, mask, dims_given);
  Result r = make_result(self, mask, keepdim, self.dtype());
  kernels::reduce_kernel(r.keep, self, mask, spec_of(is_max ? ReduceKind::Max : ReduceKind::Min));
  return r.user;
}

// MaxBackward1 / MinBackward1 -- self: evenly_distribute_backward(grad, self, result)
template <bool Max>
struct ExtremeAllGrad {
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    evenly_distributed_derivative(d, self, Max ? "MaxBackward1" : "MinBackward1");
  }
};
struct MaxOp : ExtremeAllGrad<true> {
  static constexpr const char* name = "max";
  static Tensor run(const Tensor& self) { return extreme_values(name, self, dim_mask(name, self, {}), false, false, true); }
};
struct MinOp : ExtremeAllGrad<false> {
  static constexpr const char* name = "min";
  static Tensor run(const Tensor& self) { return extreme_values(name, self, dim_mask(name, self, {}), false, false, false); }
};
// AmaxBackward0 / AminBackward0 -- self: scale_grad_by_count(restore_reduced_dims(grad), restore_reduced_dims(result)
// == self, dim): ties share the gradient evenly.
template <bool Max>
struct AextremeGrad {
  static void derivative(autograd::Derivative& d, const Tensor& self, IntArrayRef dim, bool keepdim) {
    d.name(Max ? "AmaxBackward0" : "AminBackward0");
    const Reduced red{DimVector(self.sizes()), dim_mask("amax", self, dim), keepdim};
    d.grad(self, [s = d.save(self), r = d.save_result(), red](const auto& c) {
      const Tensor mask = red.restore(c[r]) == c[s];
      return red.restore(c.grad()) / mask.sum(red.dims(), true) * mask;
    });
  }
};
struct AmaxOp : AextremeGrad<true> {
  static constexpr const char* name = "amax";
  static Tensor run(const Tensor& self, IntArrayRef dim, bool keepdim) {
    return extreme_values(name, self, dim_mask(name, self, dim), keepdim, !dim.empty(), true);
  }
};
struct AminOp : AextremeGrad<false> {
  static constexpr const char* name = "amin";
  static Tensor run(const Tensor& self, IntArrayRef dim, bool keepdim) {
    return extreme_values(name, self, dim_mask(name, self, dim), keepdim, !dim.empty(), false);
  }
};

// Values (optional) and first indices of the extreme along one dim.
std::tuple<Tensor, Tensor> extreme_with_index(const char* op, const Tensor& self, int64_t dim, bool keepdim,
                                              bool want_values, bool is_max) {
  check_not_complex(op, self, want_values ? (is_max ? "max_cpu" : "min_cpu") : (is_max ? "argmax_cpu" : "argmin_cpu"));
  const int64_t d = maybe_wrap_dim(dim, self.dim(), op);
  const uint64_t mask = single_dim_mask(self, d);
  check_nonempty_reduction(op, self, mask, true);
  Result idx = make_result(self, mask, keepdim, kLong);
  Result val = want_values ? make_result(self, mask, keepdim, self.dtype()) : Result{};
  kernels::arg_reduce_kernel(val.keep, idx.keep, self, d, is_max);
  return {val.user, idx.user};
}

template <bool Max>
struct ExtremeDimOp {
  static constexpr const char* name = Max ? "max" : "min";
  static std::tuple<Tensor, Tensor> run(const Tensor& self, int64_t dim, bool keepdim) {
    return extreme_with_index(name, self, dim, keepdim, true, Max);
  }
  // MaxBackward0 / MinBackward0 -- self: value_selecting_reduction_backward(grad, dim, indices, self.sizes(), keepdim)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t dim, bool keepdim) {
    value_selecting_derivative(d, self, dim, keepdim, Max ? "MaxBackward0" : "MinBackward0");
  }
};
using MaxDimOp = ExtremeDimOp<true>;
using MinDimOp = ExtremeDimOp<false>;

// Without a dim the index is into the flattened input.
Tensor arg_extreme(const char* op, const Tensor& self, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  if (dim) return std::get<1>(extreme_with_index(op, self, *dim, keepdim, false, is_max));
  EMBER_CHECK(self.numel() != 0, op, "Expected reduction dim to be specified for input.numel() == 0.");
  Tensor flat = std::get<1>(extreme_with_index(op, self.reshape({-1}), 0, false, false, is_max));
  return keepdim ? flat.view(DimVector(self.dim(), 1)) : flat;
}

struct ArgmaxOp {
  static constexpr const char* name = "argmax";
  static constexpr bool differentiable = false;  // integer or bool results
  static Tensor run(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
    return arg_extreme(name, self, dim, keepdim, true);
  }
};
struct ArgminOp {
  static constexpr const char* name = "argmin";
  static constexpr bool differentiable = false;  // integer or bool results
  static Tensor run(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
    return arg_extreme(name, self, dim, keepdim, false);
  }
};

// ---- var, std, norm, logsumexp -----------------------------------------------------------------

// Two passes at float32 or better (half and bfloat16 are widened once): the mean, then the sum
// of squared deviations from it, divided by max(0, n - correction).
std::tuple<Tensor, Tensor> var_and_mean(const char* op, const Tensor& self, OptionalIntArrayRef dim,
                                        std::optional<int64_t> correction, bool keepdim, bool take_sqrt) {
  if (is_complex_type(self.dtype())) {
    // PyTorch's: the mean of |z - mean|^2 (real), which is the real part's variance plus the
    // imaginary part's; the mean is complex
    auto [vr, mr] = var_and_mean(op, real(self), dim, correction, keepdim, false);
    auto [vi, mi] = var_and_mean(op, imag(self), dim, correction, keepdim, false);
    const Tensor v = vr + vi;
    return {take_sqrt ? v.sqrt() : v, make_complex(mr, mi)};
  }
  EMBER_CHECK(self.is_floating_point(), op, "std and var only support floating point and complex dtypes");
  const uint64_t mask = dim_mask(op, self, dim);
  const Tensor x = is_reduced_floating_type(self.dtype()) ? self.to(kFloat) : self;
  const int64_t n = reduced_count(self, mask);

  Result mean = make_result(self, mask, keepdim, x.dtype());
  ReduceSpec mean_spec = spec_of(ReduceKind::Sum, Transform::None, Finish::Divide);
  mean_spec.divisor = static_cast<double>(n);
  kernels::reduce_kernel(mean.keep, x, mask, mean_spec);

  Result var = make_result(self, mask, keepdim, x.dtype());
  ReduceSpec spec =
      spec_of(ReduceKind::Sum, Transform::SquaredDeviation, take_sqrt ? Finish::DivideSqrt : Finish::Divide);
  spec.divisor = static_cast<double>(std::max<int64_t>(0, n - correction.value_or(1)));
  spec.param = mean.keep;
  kernels::reduce_kernel(var.keep, x, mask, spec);
  return {as_dtype(var.user, self.dtype()), as_dtype(mean.user, self.dtype())};
}

// var_backward: (2 / (n - correction)) * grad * (self - self.mean(dim, true)), grad with the
// reduced dims restored.
Tensor var_backward(const Tensor& grad, const Tensor& self, const Reduced& red, int64_t correction) {
  const int64_t n = reduced_count(self, red.mask);
  return (2.0 / static_cast<double>(n - correction)) * red.restore(grad) * (self - self.mean(red.dims(), true));
}

// std_backward: var_backward of grad / (2 * result), zero where the result is zero.
Tensor std_backward(const Tensor& grad, const Tensor& result, const Tensor& self, const Reduced& red,
                    int64_t correction) {
  return var_backward((grad / (result * 2)).masked_fill(result == 0, 0), self, red, correction);
}

// VarBackward0 -- self: var_backward(grad, self, dim, correction, keepdim)
// StdBackward0 -- self: std_backward(result, grad, self, dim, correction, keepdim)
template <bool Std>
struct VarGrad {
  static void derivative(autograd::Derivative& d, const Tensor& self, OptionalIntArrayRef dim,
                         std::optional<int64_t> correction, bool keepdim) {
    d.name(Std ? "StdBackward0" : "VarBackward0");
    const Reduced red{DimVector(self.sizes()), dim_mask("var", self, dim), keepdim};
    const autograd::Saved r = Std ? d.save_result() : autograd::Saved{SIZE_MAX};
    d.grad(self, [s = d.save(self), r, red, corr = correction.value_or(1)](const auto& c) {
      if constexpr (!Std) return var_backward(c.grad(), c[s], red, corr);
      return std_backward(c.grad(), c[r], c[s], red, corr);
    });
  }
};
struct VarOp : VarGrad<false> {
  static constexpr const char* name = "var";
  static Tensor run(const Tensor& self, OptionalIntArrayRef dim, std::optional<int64_t> correction, bool keepdim) {
    return std::get<0>(var_and_mean(name, self, dim, correction, keepdim, false));
  }
};
struct StdOp : VarGrad<true> {
  static constexpr const char* name = "std";
  static Tensor run(const Tensor& self, OptionalIntArrayRef dim, std::optional<int64_t> correction, bool keepdim) {
    return std::get<0>(var_and_mean(name, self, dim, correction, keepdim, true));
  }
};
// var_mean and std_mean: one node (VarMeanBackward0 / StdMeanBackward0, as PyTorch) joins both
// results to self, with one formula over both gradients (one node's closure, not two).
// VarMeanBackward0 -- self: var_mean_backward(grads[0], grads[1], self, dim, correction, keepdim)
// StdMeanBackward0 -- self: std_mean_backward(grads[0], grads[1], self, result0, dim, correction, keepdim)
// var's (std's) gradient of the first result's plus mean's of the second's, each when that result was used.
template <bool Std>
struct VarMeanOf {
  static constexpr const char* name = Std ? "std_mean" : "var_mean";
  static std::tuple<Tensor, Tensor> run(const Tensor& self, OptionalIntArrayRef dim,
                                        std::optional<int64_t> correction, bool keepdim) {
    return var_and_mean(name, self, dim, correction, keepdim, Std);
  }
  static void derivative(autograd::Derivative& d, const Tensor& self, OptionalIntArrayRef dim,
                         std::optional<int64_t> correction, bool keepdim) {
    d.name(Std ? "StdMeanBackward0" : "VarMeanBackward0");
    const Reduced red{DimVector(self.sizes()), dim_mask(name, self, dim), keepdim};
    const autograd::Saved r = Std ? d.save_result(0) : autograd::Saved{SIZE_MAX};
    d.grad(self, [s = d.save(self), r, red, corr = correction.value_or(1)](const auto& c) {
      const Tensor x = c[s];
      Tensor g;
      if (c.grad(0).defined()) {
        g = Std ? std_backward(c.grad(0), c[r], x, red, corr) : var_backward(c.grad(0), x, red, corr);
      }
      if (c.grad(1).defined()) {
        const Tensor m = mean_backward(c.grad(1), red, reduced_count(x, red.mask));
        g = g.defined() ? g + m : m;
      }
      return g;
    });
  }
};

struct NormOp {
  static constexpr const char* name = "norm";
  static Tensor run(const Tensor& self, const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim) {
    if (is_complex_type(self.dtype())) return run(self.abs(), p, dim, keepdim);  // a real result, as PyTorch's
    EMBER_CHECK(self.is_floating_point(), name, "input dtype should be either floating point or complex. Got ",
                self.dtype(), " instead.");
    const uint64_t mask = dim_mask(name, self, dim);
    Result r = make_result(self, mask, keepdim, self.dtype());
    if (self.numel() == 0) return r.user.zero_();  // every p, as torch.norm
    const double pv = p ? p->toDouble() : 2.0;
    ReduceSpec spec;
    if (pv == 0) {
      spec = spec_of(ReduceKind::Sum, Transform::NonZero);
    } else if (pv == 1) {
      spec = spec_of(ReduceKind::Sum, Transform::Abs);
    } else if (pv == 2) {
      spec = spec_of(ReduceKind::Sum, Transform::Square, Finish::Sqrt);
    } else if (std::isinf(pv)) {
      spec = spec_of(pv > 0 ? ReduceKind::Max : ReduceKind::Min, Transform::Abs);
    } else {
      spec = spec_of(ReduceKind::Sum, Transform::AbsPow, Finish::Root);
      spec.p = pv;
    }
    kernels::reduce_kernel(r.keep, self, mask, spec);
    return r.user;
  }
  // NormBackward0 (no dims) / NormBackward1 -- self: norm_backward(grad, self, p, result, dim, keepdim);
  // p = 0 gives no gradient at all (undefined, as PyTorch)
  static void derivative(autograd::Derivative& d, const Tensor& self, const std::optional<Scalar>& p, IntArrayRef dim,
                         bool keepdim) {
    d.name(dim.empty() ? "NormBackward0" : "NormBackward1");
    const Reduced red{DimVector(self.sizes()), dim_mask(name, self, dim), keepdim};
    d.grad(self, [s = d.save(self), r = d.save_result(), red, pv = p ? p->toDouble() : 2.0](const auto& c) {
      return norm_backward(red.restore(c.grad()), c[s], pv, red.restore(c[r]), red);
    });
  }
  static Tensor norm_backward(const Tensor& grad, const Tensor& x, double p, const Tensor& norm, const Reduced& red) {
    if (p == 0) return Tensor();
    // sign(x), or for complex x its sgn, x / |x| (PyTorch's)
    const auto sign = [&x] { return is_complex_type(x.dtype()) ? x.sgn() : x.sign(); };
    if (p == 1) return sign() * grad;
    if (p == 2) return x * (grad / norm).masked_fill(norm == 0, 0);  // PyTorch's order of rounding
    if (std::isinf(p)) {  // the elements whose |x| is the norm share the gradient (NaNs to a NaN norm)
      const Tensor is_max = (x.abs() == norm).logical_or(x.isnan().logical_and(norm.isnan())).to(norm.dtype());
      return sign() * is_max * (grad / is_max.sum(red.dims(), true));
    }
    if (p < 1) return sign() * x.abs().pow(p - 1).masked_fill(x == 0, 0) * grad * norm.pow(1 - p);
    const Tensor scaled = p < 2 ? sign() * x.abs().pow(p - 1) : x * x.abs().pow(p - 2);
    return scaled * (grad / norm.pow(p - 1)).masked_fill(norm == 0, 0);
  }
};

// log(sum(exp(x - m))) + m with m the max, or 0 where the max is infinite (so that all -inf
// gives -inf and +inf gives +inf). Integers give the default float dtype.
struct LogsumexpOp {
  static constexpr const char* name = "logsumexp";
  static Tensor run(const Tensor& self, IntArrayRef dim, bool keepdim) {
    EMBER_CHECK(!is_complex_type(self.dtype()), name,
                "logsumexp(): Expected floating point type for result tensor, but got: ", self.dtype());
    const uint64_t mask = dim_mask(name, self, dim);
    const ScalarType rt = self.is_floating_point() ? self.dtype() : get_default_dtype();
    const Tensor x = as_dtype(self, is_reduced_floating_type(rt) ? kFloat : rt);
    Result shift = make_result(self, mask, true, x.dtype());
    if (x.numel() == 0) {
      shift.keep.zero_();
    } else {
      kernels::reduce_kernel(shift.keep, x, mask, spec_of(ReduceKind::Max));
      visit_dtype(x.dtype(), [&](auto v) {
        using T = decltype(v);
        if constexpr (std::is_floating_point_v<T>) {
          T* m = shift.keep.data_ptr<T>();
          for (int64_t i = 0; i < shift.keep.numel(); ++i)
            if (std::isinf(m[i])) m[i] = 0;
        }
      });
    }
    Result r = make_result(self, mask, keepdim, x.dtype());
    ReduceSpec spec = spec_of(ReduceKind::Sum, Transform::ExpShifted, Finish::LogAddParam);
    spec.param = shift.keep;
    kernels::reduce_kernel(r.keep, x, mask, spec);
    return as_dtype(r.user, rt);
  }
  // LogsumexpBackward0 -- self: logsumexp_backward(grad, self, result, dim, keepdim): grad * exp(self - result)
  static void derivative(autograd::Derivative& d, const Tensor& self, IntArrayRef dim, bool keepdim) {
    d.name("LogsumexpBackward0");
    const Reduced red{DimVector(self.sizes()), dim_mask(name, self, dim), keepdim};
    d.grad(self, [s = d.save(self), r = d.save_result(), red](const auto& c) {
      return red.restore(c.grad()) * (c[s] - red.restore(c[r])).exp();
    });
  }
};

// ---- all, any ----------------------------------------------------------------------------------

// Bool results, except uint8 for uint8 inputs (as PyTorch).
Tensor all_any(const char* op, const Tensor& self, uint64_t mask, bool keepdim, ReduceKind kind) {
  // a complex element is true where either part is nonzero
  if (is_complex_type(self.dtype())) return all_any(op, ne(self, 0), mask, keepdim, kind);
  Result r = make_result(self, mask, keepdim, kBool);
  kernels::reduce_kernel(r.keep, self, mask, spec_of(kind));
  return self.dtype() == kByte ? r.user.to(kByte) : r.user;
}

struct AllOp {
  static constexpr const char* name = "all";
  static constexpr bool differentiable = false;  // integer or bool results
  static Tensor run(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
    const uint64_t mask = dim ? single_dim_mask(self, maybe_wrap_dim(*dim, self.dim(), name)) : dim_mask(name, self, {});
    return all_any(name, self, mask, keepdim, ReduceKind::All);
  }
};
struct AnyOp {
  static constexpr const char* name = "any";
  static constexpr bool differentiable = false;  // integer or bool results
  static Tensor run(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
    const uint64_t mask = dim ? single_dim_mask(self, maybe_wrap_dim(*dim, self.dim(), name)) : dim_mask(name, self, {});
    return all_any(name, self, mask, keepdim, ReduceKind::Any);
  }
};

// ---- cumsum, cumprod ---------------------------------------------------------------------------

Tensor cumulative(const char* op, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, bool is_prod) {
  const int64_t d = maybe_wrap_dim(dim, self.dim(), op);
  const ScalarType rt = accumulate_dtype(self, dtype);
  if (is_complex_type(rt)) {
    // cumsum: the real kernel over the real view (the parts sum apart); cumprod: the complex
    // product along rows, d moved last
    if (self.dim() == 0) return cumulative(op, self.reshape({1}), 0, dtype, is_prod).reshape({});
    const Tensor in = input_for(self, rt).resolve_conj();
    if (!is_prod) {
      Tensor out = make_empty(self.sizes(), rt);
      kernels::cumulative_kernel(view_as_real(out), view_as_real(in), d, kernels::ScanOp::Sum);
      return out;
    }
    const Tensor rows = in.movedim({d}, {-1}).contiguous();
    Tensor out = make_empty(rows.sizes(), rt);
    const int64_t n = self.size(d);
    kernels::complex_prod_rows(out, rows, n == 0 ? 0 : rows.numel() / n, n, true);
    return out.movedim({-1}, {d}).contiguous();
  }
  const Tensor in = as_dtype(input_for(self, rt), is_floating_type(rt) ? rt : kLong);
  Tensor out = make_empty(self.sizes(), in.dtype());
  kernels::cumulative_kernel(out, in, d, is_prod ? kernels::ScanOp::Prod : kernels::ScanOp::Sum);
  return as_dtype(out, rt);
}

// The sums from each position to the end along d.
Tensor reversed_cumsum(const Tensor& t, int64_t d) { return t.flip({d}).cumsum(d).flip({d}); }

struct CumsumOp {
  static constexpr const char* name = "cumsum";
  static Tensor run(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
    return cumulative(name, self, dim, dtype, false);
  }
  // CumsumBackward0 -- self: cumsum_backward(grad.to(self.scalar_type()), dim)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t dim, std::optional<ScalarType>) {
    d.name("CumsumBackward0");
    d.grad(self, [dim = maybe_wrap_dim(dim, self.dim(), name)](const auto& c) {
      if (c.grad().dim() == 0) return c.grad();
      return reversed_cumsum(c.grad(), dim);
    });
  }
};
struct CumprodOp {
  static constexpr const char* name = "cumprod";
  static Tensor run(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
    return cumulative(name, self, dim, dtype, true);
  }
  // CumprodBackward0 -- self: cumprod_backward(grad.to(self.scalar_type()), self, dim, result)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t dim, std::optional<ScalarType>) {
    d.name("CumprodBackward0");
    d.grad(self, [s = d.save(self), r = d.save_result(), dim = maybe_wrap_dim(dim, self.dim(), name)](const auto& c) {
      const Tensor x = c[s];
      if (x.numel() <= 1) return c.grad();
      // conj() for complex inputs (PyTorch's cumprod_backward); a no-op on real ones
      if (!(x == 0).any().template item<bool>()) return reversed_cumsum(c.grad() * c[r].conj(), dim) / x.conj();
      return cumprod_backward_with_zeros(c.grad(), x.conj(), dim);
    });
  }
  // Element k gets sum over j >= k of grad_j times the product of x_0..x_j without x_k: the
  // product before k times the cumulative products after it (no division, so zeros are fine).
  static Tensor cumprod_backward_with_zeros(const Tensor& grad, const Tensor& x, int64_t d) {
    const int64_t n = x.size(d);
    DimVector ones_size(x.sizes());
    ones_size[d] = 1;
    const Tensor one = ones(ones_size, TensorOptions().dtype(x.dtype()));
    std::vector<Tensor> parts;
    for (int64_t k = 0; k < n; ++k) {
      const Tensor before = k == 0 ? one : x.narrow(d, 0, k).prod(d, true);
      const Tensor omitted =
          k == n - 1 ? before : cat({before, before * x.narrow(d, k + 1, n - k - 1).cumprod(d)}, d);
      parts.push_back((grad.narrow(d, k, n - k) * omitted).sum({d}));
    }
    return stack(parts, d);
  }
};

}  // namespace

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) { return dispatch::call<SumOp>(self, std::nullopt, false, dtype); }
Tensor sum(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  return dispatch::call<SumOp>(self, dim, keepdim, dtype);
}
Tensor& sum_out(Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  return dispatch::call<SumOutOp>(out, self, dim, keepdim, dtype);
}
Tensor mean(const Tensor& self, std::optional<ScalarType> dtype) { return dispatch::call<MeanOp>(self, std::nullopt, false, dtype); }
Tensor mean(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  return dispatch::call<MeanOp>(self, dim, keepdim, dtype);
}
Tensor prod(const Tensor& self, std::optional<ScalarType> dtype) { return dispatch::call<ProdOp>(self, std::nullopt, false, dtype); }
Tensor prod(const Tensor& self, int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  return dispatch::call<ProdOp>(self, dim, keepdim, dtype);
}
Tensor max(const Tensor& self) { return dispatch::call<MaxOp>(self); }
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim) { return dispatch::call<MaxDimOp>(self, dim, keepdim); }
Tensor min(const Tensor& self) { return dispatch::call<MinOp>(self); }
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim) { return dispatch::call<MinDimOp>(self, dim, keepdim); }
Tensor amax(const Tensor& self, IntArrayRef dim, bool keepdim) { return dispatch::call<AmaxOp>(self, dim, keepdim); }
Tensor amin(const Tensor& self, IntArrayRef dim, bool keepdim) { return dispatch::call<AminOp>(self, dim, keepdim); }
Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) { return dispatch::call<ArgmaxOp>(self, dim, keepdim); }
Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim) { return dispatch::call<ArgminOp>(self, dim, keepdim); }
// The overloads of each: (unbiased), (dims, unbiased, keepdim), (dims, correction, keepdim), (dim).
#define EMBER_VAR_FAMILY(R, name, Op)                                                                 \
  R name(const Tensor& self, OptionalIntArrayRef dim, std::optional<int64_t> correction, bool keepdim) { \
    return dispatch::call<Op>(self, dim, correction, keepdim);                                         \
  }                                                                                                    \
  R name(const Tensor& self, OptionalIntArrayRef dim, bool unbiased, bool keepdim) {                   \
    return dispatch::call<Op>(self, dim, std::optional<int64_t>(unbiased ? 1 : 0), keepdim);           \
  }                                                                                                    \
  R name(const Tensor& self, bool unbiased) { return name(self, std::nullopt, unbiased); }             \
  R name(const Tensor& self, int dim) { return name(self, IntArrayRef{dim}); }
EMBER_VAR_FAMILY(Tensor, var, VarOp)
EMBER_VAR_FAMILY(Tensor, std, StdOp)
using TensorPair = std::tuple<Tensor, Tensor>;
using VarMeanOp = VarMeanOf<false>;
using StdMeanOp = VarMeanOf<true>;
EMBER_VAR_FAMILY(TensorPair, var_mean, VarMeanOp)
EMBER_VAR_FAMILY(TensorPair, std_mean, StdMeanOp)
#undef EMBER_VAR_FAMILY
Tensor norm(const Tensor& self, const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim) {
  return dispatch::call<NormOp>(self, p, dim, keepdim);
}
Tensor logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim) { return dispatch::call<LogsumexpOp>(self, dim, keepdim); }
Tensor all(const Tensor& self) { return dispatch::call<AllOp>(self, std::nullopt, false); }
Tensor all(const Tensor& self, int64_t dim, bool keepdim) { return dispatch::call<AllOp>(self, dim, keepdim); }
Tensor any(const Tensor& self) { return dispatch::call<AnyOp>(self, std::nullopt, false); }
Tensor any(const Tensor& self, int64_t dim, bool keepdim) { return dispatch::call<AnyOp>(self, dim, keepdim); }
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) { return dispatch::call<CumsumOp>(self, dim, dtype); }
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) { return dispatch::call<CumprodOp>(self, dim, dtype); }

Tensor Tensor::sum(std::optional<ScalarType> dtype) const { return ember::sum(*this, dtype); }
Tensor Tensor::sum(OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return ember::sum(*this, dim, keepdim, dtype);
}
Tensor Tensor::mean(std::optional<ScalarType> dtype) const { return ember::mean(*this, dtype); }
Tensor Tensor::mean(OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return ember::mean(*this, dim, keepdim, dtype);
}
Tensor Tensor::prod(std::optional<ScalarType> dtype) const { return ember::prod(*this, dtype); }
Tensor Tensor::prod(int64_t dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return ember::prod(*this, dim, keepdim, dtype);
}
Tensor Tensor::max() const { return ember::max(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const { return ember::max(*this, dim, keepdim); }
Tensor Tensor::min() const { return ember::min(*this); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const { return ember::min(*this, dim, keepdim); }
Tensor Tensor::amax(IntArrayRef dim, bool keepdim) const { return ember::amax(*this, dim, keepdim); }
Tensor Tensor::amin(IntArrayRef dim, bool keepdim) const { return ember::amin(*this, dim, keepdim); }
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const { return ember::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const { return ember::argmin(*this, dim, keepdim); }
Tensor Tensor::var(bool unbiased) const { return ember::var(*this, unbiased); }
Tensor Tensor::var(OptionalIntArrayRef dim, bool unbiased, bool keepdim) const {
  return ember::var(*this, dim, unbiased, keepdim);
}
Tensor Tensor::var(OptionalIntArrayRef dim, std::optional<int64_t> correction, bool keepdim) const {
  return ember::var(*this, dim, correction, keepdim);
}
Tensor Tensor::var(int dim) const { return ember::var(*this, dim); }
Tensor Tensor::std(bool unbiased) const { return ember::std(*this, unbiased); }
Tensor Tensor::std(OptionalIntArrayRef dim, bool unbiased, bool keepdim) const {
  return ember::std(*this, dim, unbiased, keepdim);
}
Tensor Tensor::std(OptionalIntArrayRef dim, std::optional<int64_t> correction, bool keepdim) const {
  return ember::std(*this, dim, correction, keepdim);
}
Tensor Tensor::std(int dim) const { return ember::std(*this, dim); }
Tensor Tensor::norm(const Scalar& p) const { return ember::norm(*this, p); }
Tensor Tensor::norm(const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim) const {
  return ember::norm(*this, p, dim, keepdim);
}
Tensor Tensor::logsumexp(IntArrayRef dim, bool keepdim) const { return ember::logsumexp(*this, dim, keepdim); }
Tensor Tensor::all() const { return ember::all(*this); }
Tensor Tensor::all(int64_t dim, bool keepdim) const { return ember::all(*this, dim, keepdim); }
Tensor Tensor::any() const { return ember::any(*this); }
Tensor Tensor::any(int64_t dim, bool keepdim) const { return ember::any(*this, dim, keepdim); }
Tensor Tensor::cumsum(int64_t dim, std::optional<ScalarType> dtype) const { return ember::cumsum(*this, dim, dtype); }
Tensor Tensor::cumprod(int64_t dim, std::optional<ScalarType> dtype) const { return ember::cumprod(*this, dim, dtype); }

}  // namespace ember
