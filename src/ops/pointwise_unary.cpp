// Unary pointwise ops: math functions, rounding, activations and nan_to_num. Each has the
// functional form, the in-place `op_` and `op_out`; which input dtypes it takes and what it
// computes them in follows PyTorch (see Kind).
#include <cmath>

#include "dispatch/dispatch.h"
#include "ember/aten_tail2.h"
#include "ember/factory.h"
#include "ember/pointwise.h"
#include "kernels/cpu/complex_kernels.h"
#include "ops/pointwise_util.h"
#include "ops/quantized_util.h"

namespace ember {
namespace {

using kernels::UnaryOp;
using kernels::UnaryParams;
using pointwise::not_implemented;

enum class Kind {
  FloatValued,  // integers and bool compute in the default float dtype (exp(int) is float)
  KeepInteger,  // integers keep their dtype, bool is refused (abs, floor, relu, ...)
  AnyDtype,     // every dtype keeps its own (sign, nan_to_num)
  FloatOnly,    // activations with no integer kernel in PyTorch (silu, gelu, ...)
  Square,       // pow(self, 2): bool becomes int64
};

// Complex inputs: the ops with a complex kernel, abs into the real part dtype.
Tensor complex_unary_op(const char* name, const Tensor& out, const Tensor& self, UnaryOp op, bool inplace) {
  switch (op) {  // PyTorch's messages for the ops without a complex meaning
    case UnaryOp::Floor: detail::fail(name, "floor is not supported for complex inputs");
    case UnaryOp::Ceil: detail::fail(name, "ceil is not supported for complex inputs");
    case UnaryOp::Round: detail::fail(name, "round is not supported for complex inputs");
    case UnaryOp::Trunc: detail::fail(name, "trunc is not supported for complex inputs");
    case UnaryOp::Relu: detail::fail(name, "clamp is not supported for complex types");
    case UnaryOp::Sign:
      detail::fail(name, "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn "
                   "instead.");
    default: break;
  }
  if (!kernels::complex_unary_supported(op)) not_implemented(name, self.dtype());
  if (op != UnaryOp::Abs) return pointwise::unary_into(name, out, self, op, {}, inplace);
  EMBER_CHECK(!inplace, name, "In-place abs is not supported for complex tensors.");
  TensorIteratorConfig config(name);
  config.add_output(out).add_input(self).output_dtype(to_real_value_type(self.dtype()));
  TensorIterator iter(config);
  kernels::unary_kernel(iter, op);
  pointwise::bump_version(out);
  return iter.take_output();
}

Tensor unary_op(const char* name, const Tensor& out, const Tensor& self, UnaryOp op, Kind kind, bool inplace,
                const UnaryParams& params = {}) {
  EMBER_CHECK(self.defined(), name, "expected a defined tensor");
  const ScalarType t = self.dtype();
  if (is_complex_type(t)) return complex_unary_op(name, out, self, op, inplace);
  pointwise::DtypeRule rule;
  switch (kind) {
    case Kind::FloatValued: rule.int_to_float = true; break;
    case Kind::KeepInteger:
      if (t != kBool) break;
      EMBER_CHECK(op != UnaryOp::Neg, name,
                  "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
                  "mask, use the `~` or `logical_not()` operator instead.");
      EMBER_CHECK(op != UnaryOp::Relu, name, "Boolean inputs not supported for relu");
      not_implemented(name, t);
    case Kind::AnyDtype: break;
    case Kind::FloatOnly:
      if (!is_floating_type(t)) not_implemented(name, t);
      break;
    case Kind::Square:
      if (t == kBool) rule.compute = kLong;
      break;
  }
  return pointwise::unary_into(name, out, self, op, params, inplace, rule);
}

// One pass of an activation's gradient kernel over (grad, self), floating dtypes only.
Tensor backward_pass(const char* name, const Tensor& grad, const Tensor& self, kernels::BinaryOp op) {
  const Tensor out;  // the config keeps references: no temporaries
  TensorIteratorConfig config(name);
  config.add_output(out).add_input(grad).add_input(self);
  TensorIterator iter(config);
  if (!is_floating_type(iter.common_dtype())) not_implemented(name, iter.common_dtype());
  kernels::binary_kernel(iter, op);
  return iter.take_output();
}

// sigmoid_backward(grad, output), tanh_backward(grad, output): the kernels of SigmoidBackward0 and
// TanhBackward0, from the forward result (not public here; real dtypes).
template <bool kTanh>
struct ResultGradOp {
  static constexpr const char* name = kTanh ? "tanh_backward" : "sigmoid_backward";
  static Tensor run(const Tensor& grad_output, const Tensor& output) {
    return backward_pass(name, grad_output, output,
                         kTanh ? kernels::BinaryOp::TanhBackward : kernels::BinaryOp::SigmoidBackward);
  }
  // TanhBackwardBackward0 -- grad_output: tanh_backward(grad, output); output: grad * (-2 output grad_output)
  // SigmoidBackwardBackward0 -- grad_output: sigmoid_backward(grad, output);
  //   output: grad * grad_output * (-2 output + 1)
  static void derivative(autograd::Derivative& d, const Tensor& grad_output, const Tensor& output) {
    d.name(kTanh ? "TanhBackwardBackward0" : "SigmoidBackwardBackward0");
    d.grad(grad_output, [y = d.save_for(grad_output, output)](const auto& c) {
      return dispatch::call<ResultGradOp>(c.grad(), c[y]);
    });
    d.grad(output, [g = d.save_for(output, grad_output), y = d.save_for(output, output)](const auto& c) {
      return kTanh ? c.grad() * (-2 * c[y] * c[g]) : c.grad() * c[g] * (-2 * c[y] + 1);
    });
  }
};

// Derivatives of the unary ops (PyTorch's derivatives.yaml), by kernel op; the struct of an op
// without one is empty, so that autograd reports it as not implemented.
template <UnaryOp K>
struct UnaryGrad {};
// Node name, what the formula reads as `x` (self or the result) and the formula of grad.
#define EMBER_UNARY_GRAD(K, node, saves, ...)                                                      \
  template <>                                                                                       \
  struct UnaryGrad<K> {                                                                             \
    static void derivative(autograd::Derivative& d, const Tensor& self) {                         \
      d.name(node);                                                                                 \
      d.grad(self, [v = saves](const auto& c) {                                                 \
        const Tensor& grad = c.grad();                                                              \
        const Tensor x = c[v];                                                                      \
        return __VA_ARGS__;                                                                         \
      });                                                                                           \
    }                                                                                               \
  };
EMBER_UNARY_GRAD(UnaryOp::Exp, "ExpBackward0", d.save_result(), grad * x.conj())          // result
EMBER_UNARY_GRAD(UnaryOp::Log, "LogBackward0", d.save(self), grad / x.conj())            // self
EMBER_UNARY_GRAD(UnaryOp::Sqrt, "SqrtBackward0", d.save_result(), grad / (2 * x.conj()))  // result
EMBER_UNARY_GRAD(UnaryOp::Sin, "SinBackward0", d.save(self), grad * x.cos().conj())      // self
EMBER_UNARY_GRAD(UnaryOp::Cos, "CosBackward0", d.save(self), grad * -x.sin().conj())     // self
// tanh and sigmoid: one kernel each (dispatched, so that graph capture records it); complex
// results take the composite.
EMBER_UNARY_GRAD(UnaryOp::Tanh, "TanhBackward0", d.save_result(),  // result
                 x.is_complex() ? grad * (1 - x * x).conj() : dispatch::call<ResultGradOp<true>>(grad, x))
EMBER_UNARY_GRAD(UnaryOp::Sigmoid, "SigmoidBackward0", d.save_result(),  // result
                 x.is_complex() ? grad * ((1 - x) * x).conj() : dispatch::call<ResultGradOp<false>>(grad, x))
EMBER_UNARY_GRAD(UnaryOp::Relu, "ReluBackward0", d.save_result(), threshold_backward(grad, x, 0))  // result
EMBER_UNARY_GRAD(UnaryOp::Abs, "AbsBackward0", d.save(self), grad * x.sgn())                       // self
EMBER_UNARY_GRAD(UnaryOp::Exp2, "Exp2Backward0", d.save_result(), grad * x.conj() * std::log(2.0))  // result
EMBER_UNARY_GRAD(UnaryOp::Expm1, "Expm1Backward0", d.save_result(), grad * (x.conj() + 1))          // result
EMBER_UNARY_GRAD(UnaryOp::Log2, "Log2Backward0", d.save(self), grad / (x.conj() * std::log(2.0)))   // self
EMBER_UNARY_GRAD(UnaryOp::Log10, "Log10Backward0", d.save(self), grad / (x.conj() * std::log(10.0))) // self
EMBER_UNARY_GRAD(UnaryOp::Log1p, "Log1PBackward0", d.save(self), grad / (x + 1).conj())             // self
EMBER_UNARY_GRAD(UnaryOp::Rsqrt, "RsqrtBackward0", d.save_result(), -0.5 * grad * x.pow(3).conj())  // result
EMBER_UNARY_GRAD(UnaryOp::Tan, "TanBackward0", d.save_result(), grad * (1 + x * x).conj())          // result
EMBER_UNARY_GRAD(UnaryOp::Asin, "AsinBackward0", d.save(self), grad * (-x * x + 1).rsqrt().conj())  // self
EMBER_UNARY_GRAD(UnaryOp::Acos, "AcosBackward0", d.save(self), grad * -((-x * x + 1).rsqrt().conj()))  // self
EMBER_UNARY_GRAD(UnaryOp::Atan, "AtanBackward0", d.save(self), grad / (x * x + 1).conj())        // self
EMBER_UNARY_GRAD(UnaryOp::Sinh, "SinhBackward0", d.save(self), grad * x.cosh().conj())            // self
EMBER_UNARY_GRAD(UnaryOp::Cosh, "CoshBackward0", d.save(self), grad * x.sinh().conj())            // self
EMBER_UNARY_GRAD(UnaryOp::Asinh, "AsinhBackward0", d.save(self), grad * (x * x + 1).rsqrt().conj())  // self
EMBER_UNARY_GRAD(UnaryOp::Acosh, "AcoshBackward0", d.save(self), grad * (x * x - 1).rsqrt().conj())  // self
EMBER_UNARY_GRAD(UnaryOp::Atanh, "AtanhBackward0", d.save(self), grad / (1 - x * x).conj())       // self
EMBER_UNARY_GRAD(UnaryOp::Reciprocal, "ReciprocalBackward0", d.save_result(), -grad * (x * x).conj())      // result
EMBER_UNARY_GRAD(UnaryOp::Square, "PowBackward0", d.save(self), grad * (x * 2).conj())  // square is pow(self, 2)
EMBER_UNARY_GRAD(UnaryOp::Erf, "ErfBackward0", d.save(self), (2 / std::sqrt(M_PI)) * (-x * x).exp() * grad)
EMBER_UNARY_GRAD(UnaryOp::Erfc, "ErfcBackward0", d.save(self), (-2 / std::sqrt(M_PI)) * (-x * x).exp() * grad)
EMBER_UNARY_GRAD(UnaryOp::Erfinv, "ErfinvBackward0", d.save_result(), (0.5 * std::sqrt(M_PI)) * (x * x).exp() * grad)
// One kernel (silu_backward); when the gradient is itself differentiated (create_graph), the
// composite PyTorch differentiates then: grad * sigmoid(x) * (1 + x * (1 - sigmoid(x))).
EMBER_UNARY_GRAD(UnaryOp::Silu, "SiluBackward0", d.save(self),
                 GradMode::is_enabled() ? grad * x.sigmoid() * (1 + x * (1 - x.sigmoid())) : silu_backward(grad, x))
EMBER_UNARY_GRAD(UnaryOp::Hardswish, "HardswishBackward0", d.save(self), hardswish_backward(grad, x))
EMBER_UNARY_GRAD(UnaryOp::Hardsigmoid, "HardsigmoidBackward0", d.save(self), hardsigmoid_backward(grad, x))
#undef EMBER_UNARY_GRAD
// Rounding and sign are piecewise constant: zero gradients.
#define EMBER_ZERO_GRAD(K, node)                                               \
  template <>                                                                   \
  struct UnaryGrad<K> {                                                         \
    static void derivative(autograd::Derivative& d, const Tensor& self) {       \
      d.name(node);                                                             \
      d.grad(self, [](const auto& c) { return zeros_like(c.grad()); });         \
    }                                                                           \
  };
EMBER_ZERO_GRAD(UnaryOp::Sign, "SignBackward0")
EMBER_ZERO_GRAD(UnaryOp::Floor, "FloorBackward0")
EMBER_ZERO_GRAD(UnaryOp::Ceil, "CeilBackward0")
EMBER_ZERO_GRAD(UnaryOp::Round, "RoundBackward0")
EMBER_ZERO_GRAD(UnaryOp::Trunc, "TruncBackward0")
#undef EMBER_ZERO_GRAD
template <>
struct UnaryGrad<UnaryOp::Frac> {
  // FracBackward0 -- self: grad
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    d.name("FracBackward0");
    d.grad(self, [](const auto& c) { return c.grad(); });
  }
};
template <>
struct UnaryGrad<UnaryOp::Neg> {
  // NegBackward0 -- self: grad.neg()
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    d.name("NegBackward0");
    d.grad(self, [](const auto& c) { return -c.grad(); });
  }
};

// The unary ops quantized tensors reach (dispatch.h's AcceptsQuantized), as PyTorch's
// QuantizedCPU kernels: relu (in place too), sigmoid and hardsigmoid (fixed output parameters).
constexpr bool takes_quantized(UnaryOp op) {
  return op == UnaryOp::Relu || op == UnaryOp::Sigmoid || op == UnaryOp::Hardsigmoid;
}
// (reached only for the ops above: the structs below call it under takes_quantized)
template <UnaryOp op>
Tensor quantized_unary(const Tensor& self) {
  if constexpr (op == UnaryOp::Sigmoid) {
    return ember::quantized::sigmoid(self);
  } else if constexpr (op == UnaryOp::Hardsigmoid) {
    return ember::quantized::hardsigmoid(self);
  } else {
    return ember::quantized::relu(self);
  }
}

// Defines, for one unary op, its three op structs and public functions: name(self),
// name_(self) and name_out(out, self).

#define EMBER_UNARY_OP(fn, kernel_op, kind)                                                          \
  struct fn##_op : UnaryGrad<kernel_op> {                                                           \
    static constexpr const char* name = #fn;                                                        \
    static constexpr bool conj_aware = true;                                                        \
    static constexpr bool quantized = takes_quantized(kernel_op);                                   \
    static Tensor run(const Tensor& self) {                                                         \
      if constexpr (quantized) {                                                                    \
        if (self.is_quantized()) return quantized_unary<kernel_op>(self);                             \
      }                                                                                             \
      return unary_op(name, Tensor(), self, kernel_op, kind, false);                                \
    }                                                                                               \
  };                                                                                                \
  struct fn##_inplace_op {                                                                          \
    static constexpr const char* name = #fn "_";                                                    \
    static constexpr bool conj_aware = true;                                                        \
    static constexpr bool quantized = kernel_op == UnaryOp::Relu;                                   \
    using out_of_place = fn##_op;                                                                   \
    static Tensor& run(Tensor& self) {                                                              \
      if constexpr (quantized) {                                                                    \
        if (self.is_quantized()) return ember::quantized::relu_(self);                                \
      }                                                                                             \
      unary_op(name, self, self, kernel_op, kind, true);                                            \
      return self;                                                                                  \
    }                                                                                               \
  };                                                                                                \
  struct fn##_out_op {                                                                              \
    static constexpr const char* name = #fn "_out";                                                 \
    static constexpr bool conj_aware = true;                                                        \
    static Tensor& run(Tensor& out, const Tensor& self) {                                           \
      unary_op(name, out, self, kernel_op, kind, false);                                            \
      return out;                                                                                   \
    }                                                                                               \
  };                                                                                                \
  }                                                                                                 \
  Tensor fn(const Tensor& self) { return dispatch::call<fn##_op>(self); }                           \
  Tensor& fn##_(Tensor& self) { return dispatch::call<fn##_inplace_op>(self); }                     \
  Tensor& fn##_out(Tensor& out, const Tensor& self) { return dispatch::call<fn##_out_op>(out, self); } \
  namespace {

EMBER_UNARY_OP(abs, UnaryOp::Abs, Kind::KeepInteger)
EMBER_UNARY_OP(neg, UnaryOp::Neg, Kind::KeepInteger)
EMBER_UNARY_OP(sign, UnaryOp::Sign, Kind::AnyDtype)
EMBER_UNARY_OP(exp, UnaryOp::Exp, Kind::FloatValued)
EMBER_UNARY_OP(exp2, UnaryOp::Exp2, Kind::FloatValued)
EMBER_UNARY_OP(expm1, UnaryOp::Expm1, Kind::FloatValued)
EMBER_UNARY_OP(log, UnaryOp::Log, Kind::FloatValued)
EMBER_UNARY_OP(log2, UnaryOp::Log2, Kind::FloatValued)
EMBER_UNARY_OP(log10, UnaryOp::Log10, Kind::FloatValued)
EMBER_UNARY_OP(log1p, UnaryOp::Log1p, Kind::FloatValued)
EMBER_UNARY_OP(sqrt, UnaryOp::Sqrt, Kind::FloatValued)
EMBER_UNARY_OP(rsqrt, UnaryOp::Rsqrt, Kind::FloatValued)
EMBER_UNARY_OP(sin, UnaryOp::Sin, Kind::FloatValued)
EMBER_UNARY_OP(cos, UnaryOp::Cos, Kind::FloatValued)
EMBER_UNARY_OP(tan, UnaryOp::Tan, Kind::FloatValued)
EMBER_UNARY_OP(asin, UnaryOp::Asin, Kind::FloatValued)
EMBER_UNARY_OP(acos, UnaryOp::Acos, Kind::FloatValued)
EMBER_UNARY_OP(atan, UnaryOp::Atan, Kind::FloatValued)
EMBER_UNARY_OP(tanh, UnaryOp::Tanh, Kind::FloatValued)
EMBER_UNARY_OP(sinh, UnaryOp::Sinh, Kind::FloatValued)
EMBER_UNARY_OP(cosh, UnaryOp::Cosh, Kind::FloatValued)
EMBER_UNARY_OP(asinh, UnaryOp::Asinh, Kind::FloatValued)
EMBER_UNARY_OP(acosh, UnaryOp::Acosh, Kind::FloatValued)
EMBER_UNARY_OP(atanh, UnaryOp::Atanh, Kind::FloatValued)
EMBER_UNARY_OP(sigmoid, UnaryOp::Sigmoid, Kind::FloatValued)
EMBER_UNARY_OP(relu, UnaryOp::Relu, Kind::KeepInteger)
EMBER_UNARY_OP(silu, UnaryOp::Silu, Kind::FloatOnly)
EMBER_UNARY_OP(hardswish, UnaryOp::Hardswish, Kind::FloatOnly)
EMBER_UNARY_OP(hardsigmoid, UnaryOp::Hardsigmoid, Kind::FloatOnly)
EMBER_UNARY_OP(erf, UnaryOp::Erf, Kind::FloatValued)
EMBER_UNARY_OP(erfc, UnaryOp::Erfc, Kind::FloatValued)
EMBER_UNARY_OP(erfinv, UnaryOp::Erfinv, Kind::FloatValued)
EMBER_UNARY_OP(floor, UnaryOp::Floor, Kind::KeepInteger)
EMBER_UNARY_OP(ceil, UnaryOp::Ceil, Kind::KeepInteger)
EMBER_UNARY_OP(round, UnaryOp::Round, Kind::KeepInteger)
EMBER_UNARY_OP(trunc, UnaryOp::Trunc, Kind::KeepInteger)
EMBER_UNARY_OP(frac, UnaryOp::Frac, Kind::FloatOnly)
EMBER_UNARY_OP(reciprocal, UnaryOp::Reciprocal, Kind::FloatValued)
EMBER_UNARY_OP(square, UnaryOp::Square, Kind::Square)
#undef EMBER_UNARY_OP

// ---- activations with parameters, nan_to_num ----------------------------------------------

// gelu_backward(grad, self, "none") as one kernel.
struct GeluBackwardOp {
  static constexpr const char* name = "gelu_backward";
  static Tensor run(const Tensor& grad, const Tensor& self) {
    if (!is_floating_type(self.dtype())) not_implemented(name, self.dtype());
    return backward_pass(name, grad, self, kernels::BinaryOp::GeluBackward);
  }
  // GeluBackwardBackward0 -- grad_output: gelu_backward(grad, self); self: grad * grad_output * phi(self) (2 - self^2)
  static void derivative(autograd::Derivative& d, const Tensor& grad, const Tensor& self) {
    d.name("GeluBackwardBackward0");
    d.grad(grad, [s = d.save_for(grad, self)](const auto& c) { return dispatch::call<GeluBackwardOp>(c.grad(), c[s]); });
    d.grad(self, [g = d.save_for(self, grad), s = d.save(self)](const auto& c) {
      const Tensor x = c[s];
      const Tensor pdf = (-0.5 * x * x).exp() * (M_2_SQRTPI * M_SQRT1_2 * 0.5);
      return c.grad() * c[g] * pdf * (2 - x * x);
    });
  }
};

// hardswish_backward(grad, self): 0 below -3, grad (self / 3 + 1/2) up to 3, grad above;
// hardsigmoid_backward(grad, self): grad / 6 strictly inside (-3, 3);
// silu_backward(grad, self): grad s (1 + self (1 - s)), s = sigmoid(self) (PyTorch's kernels);
// log_sigmoid_backward(grad, self): grad sigmoid(-self) (libtorch's takes a buffer the kernel
// recomputes here, so it has no public form).
template <kernels::BinaryOp K>
struct ActivationBackwardOp {
  static constexpr const char* name = K == kernels::BinaryOp::HardswishBackward     ? "hardswish_backward"
                                      : K == kernels::BinaryOp::HardsigmoidBackward ? "hardsigmoid_backward"
                                      : K == kernels::BinaryOp::LogSigmoidBackward  ? "log_sigmoid_backward"
                                                                                    : "silu_backward";
  static Tensor run(const Tensor& grad_output, const Tensor& self) { return backward_pass(name, grad_output, self, K); }
  // HardswishBackwardBackward0 -- grad_output: hardswish_backward(grad, self);
  //   self: where(-3 < self < 3, grad * grad_output / 3, 0)
  // HardsigmoidBackwardBackward0 -- grad_output: hardsigmoid_backward(grad, self); self: zeros_like(grad)
  // SiluBackwardBackward0 -- grad_output: silu_backward(grad, self);
  //   self: grad * grad_output * s (1 - s) (2 + self (1 - 2 s)), s = sigmoid(self)
  //   (libtorch 1.13 has none: its silu double backward differentiates a composite instead)
  // LogSigmoidBackwardBackward0 -- grad_output: log_sigmoid_backward(grad, self);
  //   self: grad * grad_output * (s - 1) s, s = sigmoid(self)
  static void derivative(autograd::Derivative& d, const Tensor& grad_output, const Tensor& self) {
    constexpr bool kSwish = K == kernels::BinaryOp::HardswishBackward;
    d.name(kSwish                                         ? "HardswishBackwardBackward0"
           : K == kernels::BinaryOp::HardsigmoidBackward ? "HardsigmoidBackwardBackward0"
           : K == kernels::BinaryOp::LogSigmoidBackward  ? "LogSigmoidBackwardBackward0"
                                                          : "SiluBackwardBackward0");
    d.grad(grad_output, [s = d.save_for(grad_output, self)](const auto& c) {
      return dispatch::call<ActivationBackwardOp>(c.grad(), c[s]);
    });
    if constexpr (K == kernels::BinaryOp::SiluBackward) {
      d.grad(self, [g = d.save_for(self, grad_output), s = d.save_for(self, self)](const auto& c) {
        const Tensor x = c[s], sig = x.sigmoid();
        return c.grad() * c[g] * sig * (1 - sig) * (2 + x * (1 - 2 * sig));
      });
    } else if constexpr (K == kernels::BinaryOp::LogSigmoidBackward) {
      d.grad(self, [g = d.save_for(self, grad_output), s = d.save_for(self, self)](const auto& c) {
        const Tensor sig = c[s].sigmoid();
        return c.grad() * c[g] * (sig - 1) * sig;
      });
    } else if constexpr (kSwish) {
      d.grad(self, [g = d.save_for(self, grad_output), s = d.save_for(self, self)](const auto& c) {
        const Tensor x = c[s];
        return where((x > -3).logical_and(x < 3), c.grad() * c[g] / 3, 0);
      });
    } else {
      d.grad(self, [](const auto& c) { return zeros_like(c.grad()); });
    }
  }
};

struct GeluOp {
  static constexpr const char* name = "gelu";
  static Tensor run(const Tensor& self, std::string_view approximate) {
    EMBER_CHECK(approximate == "none" || approximate == "tanh", name,
                "approximate argument must be either none or tanh.");
    const UnaryOp op = approximate == "tanh" ? UnaryOp::GeluTanh : UnaryOp::Gelu;
    return unary_op(name, Tensor(), self, op, Kind::FloatOnly, false);
  }
  // GeluBackward0 -- self: gelu_backward(grad, self, approximate). The tanh form's gradient is one
  // kernel pass when no graph is recorded (its formula in the compute type, rounded once), and the
  // composite formula for create_graph (it is differentiable).
  static void derivative(autograd::Derivative& d, const Tensor& self, std::string_view approximate) {
    d.name("GeluBackward0");
    d.grad(self, [s = d.save(self), tanh = approximate == "tanh"](const auto& c) {
      const Tensor x = c[s];
      if (!tanh) return dispatch::call<GeluBackwardOp>(c.grad(), x);
      if (!GradMode::is_enabled()) return backward_pass("gelu_backward", c.grad(), x, kernels::BinaryOp::GeluTanhBackward);
      const double beta = M_SQRT2 * M_2_SQRTPI * 0.5, kappa = 0.044715;
      const Tensor inner = (x + kappa * x.pow(3)) * beta;
      const Tensor t = inner.tanh();
      const Tensor left_derivative = 0.5 * (1 + t);
      const Tensor right_derivative = 0.5 * x * (1 - t * t) * (beta * (1 + 3 * kappa * x * x));
      return c.grad() * (left_derivative + right_derivative);
    });
  }
};
struct LeakyReluOp {
  static constexpr const char* name = "leaky_relu";
  static Tensor run(const Tensor& self, const Scalar& slope) {
    return unary_op(name, Tensor(), self, UnaryOp::LeakyRelu, Kind::FloatOnly, false, {slope, {}, {}});
  }
  // LeakyReluBackward0 -- self: leaky_relu_backward(grad, self, negative_slope, false)
  static void derivative(autograd::Derivative& d, const Tensor& self, const Scalar& slope) {
    d.name("LeakyReluBackward0");
    d.grad(self, [s = d.save(self), slope](const auto& c) { return leaky_relu_backward(c.grad(), c[s], slope, false); });
  }
};
struct EluOp {
  static constexpr const char* name = "elu";
  static Tensor run(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
    return unary_op(name, Tensor(), self, UnaryOp::Elu, Kind::FloatOnly, false, {alpha, scale, input_scale});
  }
  // EluBackward0 -- self: elu_backward(grad, alpha, scale, input_scale, false, self)
  static void derivative(autograd::Derivative& d, const Tensor& self, const Scalar& alpha, const Scalar& scale,
                         const Scalar& input_scale) {
    d.name("EluBackward0");
    d.grad(self, [s = d.save(self), alpha, scale, input_scale](const auto& c) {
      return elu_backward(c.grad(), alpha, scale, input_scale, false, c[s]);
    });
  }
};
// PyTorch's log_sigmoid kernel, in one pass each way.
struct LogSigmoidOp {
  static constexpr const char* name = "log_sigmoid";
  static Tensor run(const Tensor& self) { return unary_op(name, Tensor(), self, UnaryOp::LogSigmoid, Kind::FloatOnly, false); }
  // LogSigmoidBackward0 -- self: log_sigmoid_backward(grad, self, buffer)
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    d.name("LogSigmoidBackward0");
    d.grad(self, [s = d.save(self)](const auto& c) {
      return dispatch::call<ActivationBackwardOp<kernels::BinaryOp::LogSigmoidBackward>>(c.grad(), c[s]);
    });
  }
};
struct SoftplusOp {
  static constexpr const char* name = "softplus";
  static Tensor run(const Tensor& self, const Scalar& beta, const Scalar& threshold) {
    return unary_op(name, Tensor(), self, UnaryOp::Softplus, Kind::FloatOnly, false, {beta, threshold, {}});
  }
  // SoftplusBackward0 -- self: softplus_backward(grad, self, beta, threshold): grad * sigmoid(beta * x)
  // below the threshold, grad above it
  static void derivative(autograd::Derivative& d, const Tensor& self, const Scalar& beta, const Scalar& threshold) {
    d.name("SoftplusBackward0");
    d.grad(self, [s = d.save(self), beta, threshold](const auto& c) {
      const Tensor bx = c[s] * beta;
      const Tensor z = bx.exp();
      return where(bx > threshold, c.grad(), c.grad() * z / (z + 1));
    });
  }
};
struct NanToNumOp {
  static constexpr const char* name = "nan_to_num";
  static Tensor run(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                    std::optional<double> neginf) {
    auto opt = [](std::optional<double> v) { return v ? std::optional<Scalar>(*v) : std::nullopt; };
    return unary_op(name, Tensor(), self, UnaryOp::NanToNum, Kind::AnyDtype, false, {opt(nan), opt(posinf), opt(neginf)});
  }
  // NanToNumBackward0 -- self: grad * at::isfinite(self)
  static void derivative(autograd::Derivative& d, const Tensor& self, std::optional<double>, std::optional<double>,
                         std::optional<double>) {
    d.name("NanToNumBackward0");
    d.grad(self, [s = d.save(self)](const auto& c) { return c.grad() * c[s].isfinite(); });
  }
};

}  // namespace

Tensor gelu(const Tensor& self, std::string_view approximate) { return dispatch::call<GeluOp>(self, approximate); }
Tensor hardswish_backward(const Tensor& grad_output, const Tensor& self) {
  return dispatch::call<ActivationBackwardOp<kernels::BinaryOp::HardswishBackward>>(grad_output, self);
}
Tensor hardsigmoid_backward(const Tensor& grad_output, const Tensor& self) {
  return dispatch::call<ActivationBackwardOp<kernels::BinaryOp::HardsigmoidBackward>>(grad_output, self);
}
Tensor silu_backward(const Tensor& grad_output, const Tensor& self) {
  return dispatch::call<ActivationBackwardOp<kernels::BinaryOp::SiluBackward>>(grad_output, self);
}
Tensor leaky_relu(const Tensor& self, const Scalar& slope) { return dispatch::call<LeakyReluOp>(self, slope); }
Tensor log_sigmoid(const Tensor& self) { return dispatch::call<LogSigmoidOp>(self); }
Tensor elu(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return dispatch::call<EluOp>(self, alpha, scale, input_scale);
}
Tensor softplus(const Tensor& self, const Scalar& beta, const Scalar& threshold) {
  return dispatch::call<SoftplusOp>(self, beta, threshold);
}
Tensor nan_to_num(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  return dispatch::call<NanToNumOp>(self, nan, posinf, neginf);
}

// ---- Tensor methods -----------------------------------------------------------------------
#define EMBER_UNARY_METHODS(fn)                          \
  Tensor Tensor::fn() const { return ember::fn(*this); } \
  Tensor& Tensor::fn##_() const { return ember::fn##_(mutable_self()); }
EMBER_FOR_EACH_UNARY_METHOD(EMBER_UNARY_METHODS)
#undef EMBER_UNARY_METHODS
Tensor Tensor::nan_to_num(std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) const {
  return ember::nan_to_num(*this, nan, posinf, neginf);
}

// round.decimals, composed as PyTorch's kernel computes it in the tensor's dtype: scale by 10^d,
// round half to even, scale back (10^-d the other way round for negative d).
Tensor round(const Tensor& self, int64_t decimals) {
  if (decimals == 0) return round(self);
  EMBER_CHECK(is_floating_type(self.dtype()), "round", "round with decimals is not implemented for ", self.dtype());
  const double ten_pow = std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals));
  return decimals > 0 ? (self * ten_pow).round() / ten_pow : (self / ten_pow).round() * ten_pow;
}
Tensor& round_(Tensor& self, int64_t decimals) { return self.copy_(round(self, decimals)); }
Tensor Tensor::round(int64_t decimals) const { return ember::round(*this, decimals); }
Tensor& Tensor::round_(int64_t decimals) const { return ember::round_(mutable_self(), decimals); }

}  // namespace ember
