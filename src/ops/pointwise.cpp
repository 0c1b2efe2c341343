// Pointwise arithmetic: add/sub/mul/div and their relatives, pow, minimum/maximum, atan2, lerp,
// addcmul/addcdiv, clamp, where and masked_fill. Each op is a small struct (its name, argument
// rules and kernel); the public functions and Tensor methods below route through dispatch::call.
#include <cmath>
#include <limits>
#include <type_traits>

#include "dispatch/dispatch.h"
#include "ember/aten_tail.h"
#include "ember/aten_tail2.h"
#include "ember/complex_ops.h"
#include "ember/factory.h"
#include "ember/pointwise.h"
#include "ops/pointwise_util.h"
#include "ops/op_util.h"
#include "ops/quantized_util.h"
#include "ops/special_math.h"

namespace ember {
namespace {

using kernels::BinaryOp;
using kernels::TernaryOp;
using kernels::UnaryOp;
using pointwise::bump_version;
using pointwise::dtype_of;
using pointwise::not_implemented;
using op_util::maybe_multiply;
using autograd::Derivative;

// PyTorch's sub_check: bool - anything is refused (xor is what people mean).
template <class A, class B>
void check_sub(const char* name, const A& a, const B& b) {
  const bool ba = dtype_of(a) == kBool, bb = dtype_of(b) == kBool;
  EMBER_CHECK(!(ba && bb), name,
              "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
              "`logical_xor()` operator instead.");
  EMBER_CHECK(!(ba || bb), name,
              "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
              "mask, use the `~` or `logical_not()` operator instead.");
}

// out = a (op) b with PyTorch's broadcasting and promotion; either of a, b may be a Scalar.
// `out` may be undefined (allocate), an out= tensor (resized if needed) or self for in-place ops.
template <class A, class B>
Tensor binary_into(const char* name, const Tensor& out, const A& a, const B& b, BinaryOp op, const Scalar& alpha,
                   bool inplace, bool int_to_float = false, const kernels::UnaryParams& params = {}) {
  if (op == BinaryOp::Sub) check_sub(name, a, b);
  TensorIteratorConfig config(name);
  config.add_output(out).add_input(a).add_input(b);
  if (inplace) config.no_resize_outputs();
  if (int_to_float) config.promote_integer_inputs_to_float();
  TensorIterator iter(config);
  const ScalarType common = iter.common_dtype();
  if (is_complex_type(common) && op != BinaryOp::Add && op != BinaryOp::Sub && op != BinaryOp::Mul &&
      op != BinaryOp::Div && op != BinaryOp::Pow && op != BinaryOp::Lerp) {
    EMBER_CHECK(op != BinaryOp::Maximum && op != BinaryOp::Minimum, name, name, " not implemented for complex tensors.");
    const char* kernel = op == BinaryOp::DivFloor ? "div_floor" : op == BinaryOp::DivTrunc ? "div_trunc" : name;
    detail::fail(name, "\"", kernel, "_cpu\" not implemented for '", common, "'");
  }
  if ((op == BinaryOp::Add || op == BinaryOp::Sub) && !alpha.equal(1)) {
    EMBER_CHECK(is_floating_type(common) || is_complex_type(common) || !alpha.isFloatingPoint(), name,
                "For integral input tensors, argument alpha must not be a floating point number.");
    EMBER_CHECK(common != kBool || alpha.isBoolean(), name, "Boolean alpha only supported for Boolean results.");
    EMBER_CHECK(is_complex_type(common) || !alpha.isComplex(), name,
                "For non-complex input tensors, argument alpha must not be a complex number.");
  }
  switch (op) {
    case BinaryOp::DivTrunc:
    case BinaryOp::DivFloor:
    case BinaryOp::Remainder:
    case BinaryOp::Fmod:
      if (common == kBool) not_implemented(name, common);
      if (!is_floating_type(common)) kernels::check_no_zero_divisor(iter, 2, name);
      break;
    case BinaryOp::Pow:
    case BinaryOp::ThresholdBackward:
      if (common == kBool) not_implemented(name, common);
      break;
    case BinaryOp::LeakyReluBackward:
    case BinaryOp::LogSigmoidBackward:
    case BinaryOp::HardtanhBackward:
    case BinaryOp::EluBackward:
    case BinaryOp::EluBackwardOfResult:
      if (!is_floating_type(common)) not_implemented(name, common);
      break;
    case BinaryOp::BitwiseAnd:
    case BinaryOp::BitwiseOr:
    case BinaryOp::BitwiseXor:
      if (is_floating_type(common)) not_implemented(name, common);
      break;
    default: break;
  }
  kernels::binary_kernel(iter, op, alpha, params);
  bump_version(out);
  return iter.take_output();
}

// ---- add, sub, rsub, mul, div --------------------------------------------------------------

// The conjugate of a saved operand (complex autograd's formulas read conj(other)).
Tensor conj_of(const Tensor& t) { return t.conj(); }
Scalar conj_of(const Scalar& s) { return s.isComplex() ? Scalar(conj(s.toComplexDouble())) : s; }

struct AddOp {
  static constexpr const char* name = "add";
  static constexpr bool conj_aware = true;
  template <class B>
  static Tensor run(const Tensor& a, const B& b, const Scalar& alpha) {
    return binary_into(name, Tensor(), a, b, BinaryOp::Add, alpha, false);
  }
  // AddBackward0 (Tensor other) / AddBackward1 (Scalar) -- self: grad; other: grad * alpha
  template <class B>
  static void derivative(autograd::Derivative& d, const Tensor& self, const B& other, const Scalar& alpha) {
    d.name(autograd::is_tensor<B> ? "AddBackward0" : "AddBackward1");
    d.grad(self, [](const auto& c) { return c.grad(); });
    d.grad(other, [alpha](const auto& c) { return maybe_multiply(c.grad(), alpha); });
  }
};
struct AddInplaceOp {
  static constexpr const char* name = "add_";
  static constexpr bool conj_aware = true;
  using out_of_place = AddOp;
  template <class B>
  static Tensor& run(Tensor& self, const B& b, const Scalar& alpha) {
    binary_into(name, self, self, b, BinaryOp::Add, alpha, true);
    return self;
  }
};
struct AddOutOp {
  static constexpr const char* name = "add_out";
  static constexpr bool conj_aware = true;
  static Tensor& run(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
    binary_into(name, out, a, b, BinaryOp::Add, alpha, false);
    return out;
  }
};

struct SubOp {
  static constexpr const char* name = "sub";
  static constexpr bool conj_aware = true;
  template <class B>
  static Tensor run(const Tensor& a, const B& b, const Scalar& alpha) {
    return binary_into(name, Tensor(), a, b, BinaryOp::Sub, alpha, false);
  }
  // SubBackward0 / SubBackward1 -- self: grad; other: -grad * alpha
  template <class B>
  static void derivative(autograd::Derivative& d, const Tensor& self, const B& other, const Scalar& alpha) {
    d.name(autograd::is_tensor<B> ? "SubBackward0" : "SubBackward1");
    d.grad(self, [](const auto& c) { return c.grad(); });
    d.grad(other, [alpha](const auto& c) { return maybe_multiply(-c.grad(), alpha); });
  }
};
struct SubInplaceOp {
  static constexpr const char* name = "sub_";
  static constexpr bool conj_aware = true;
  using out_of_place = SubOp;
  template <class B>
  static Tensor& run(Tensor& self, const B& b, const Scalar& alpha) {
    binary_into(name, self, self, b, BinaryOp::Sub, alpha, true);
    return self;
  }
};
struct SubOutOp {
  static constexpr const char* name = "sub_out";
  static constexpr bool conj_aware = true;
  static Tensor& run(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
    binary_into(name, out, a, b, BinaryOp::Sub, alpha, false);
    return out;
  }
};

// rsub(self, other, alpha) = other - alpha * self
struct RsubOp {
  static constexpr const char* name = "rsub";
  static constexpr bool conj_aware = true;
  template <class B>
  static Tensor run(const Tensor& self, const B& other, const Scalar& alpha) {
    return binary_into(name, Tensor(), other, self, BinaryOp::Sub, alpha, false);
  }
  // RsubBackward0 / RsubBackward1 -- self: -grad * alpha; other: grad
  template <class B>
  static void derivative(autograd::Derivative& d, const Tensor& self, const B& other, const Scalar& alpha) {
    d.name(autograd::is_tensor<B> ? "RsubBackward0" : "RsubBackward1");
    d.grad(self, [alpha](const auto& c) { return maybe_multiply(-c.grad(), alpha); });
    d.grad(other, [](const auto& c) { return c.grad(); });
  }
};

// libtorch's MulBackward1 and DivBackward1 apply scalar_to_tensor(other), so their recorded backward
// (create_graph) is a MulBackward0 / DivBackward0; unrecorded, the Scalar gives the same values unallocated.
Tensor recorded_scalar(const Scalar& other) {
  return scalar_tensor(conj_of(other), TensorOptions().dtype(other.type()));
}

struct MulOp {
  static constexpr const char* name = "mul";
  static constexpr bool conj_aware = true;
  template <class B>
  static Tensor run(const Tensor& a, const B& b) {
    return binary_into(name, Tensor(), a, b, BinaryOp::Mul, 1, false);
  }
  // MulBackward0 / MulBackward1 -- self: grad * other.conj(); other: grad * self.conj()
  template <class B>
  static void derivative(autograd::Derivative& d, const Tensor& self, const B& other) {
    d.name(autograd::is_tensor<B> ? "MulBackward0" : "MulBackward1");
    d.grad(self, [o = d.save_for(self, other)](const auto& c) {
      if constexpr (!autograd::is_tensor<B>) {
        if (GradMode::is_enabled()) return c.grad() * recorded_scalar(o);
      }
      return c.grad() * conj_of(c[o]);
    });
    d.grad(other, [s = d.save_for(other, self)](const auto& c) { return c.grad() * conj_of(c[s]); });
  }
};
struct MulInplaceOp {
  static constexpr const char* name = "mul_";
  static constexpr bool conj_aware = true;
  using out_of_place = MulOp;
  template <class B>
  static Tensor& run(Tensor& self, const B& b) {
    binary_into(name, self, self, b, BinaryOp::Mul, 1, true);
    return self;
  }
};
struct MulOutOp {
  static constexpr const char* name = "mul_out";
  static constexpr bool conj_aware = true;
  static Tensor& run(Tensor& out, const Tensor& a, const Tensor& b) {
    binary_into(name, out, a, b, BinaryOp::Mul, 1, false);
    return out;
  }
};

// True division promotes integers to the default float dtype; "trunc" and "floor" keep the
// common dtype and raise ZeroDivisionError on integer zeros.
BinaryOp div_kind(const char* name, std::optional<std::string_view> mode) {
  if (!mode) return BinaryOp::Div;
  if (*mode == "trunc") return BinaryOp::DivTrunc;
  if (*mode == "floor") return BinaryOp::DivFloor;
  detail::fail(name, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *mode, "'");
}
template <class A, class B>
Tensor div_into(const char* name, const Tensor& out, const A& a, const B& b, std::optional<std::string_view> mode,
                bool inplace) {
  const BinaryOp op = div_kind(name, mode);
  if (op == BinaryOp::DivTrunc) {
    // PyTorch truncates the quotient after rounding it to the dtype (trunc(a / b) of the docs),
    // which for Half/BFloat16 differs from truncating the float32 quotient.
    ResultTypeState st;
    st.update(a);
    st.update(b);
    if (is_reduced_floating_type(st.result())) {
      const Tensor q = binary_into(name, Tensor(), a, b, BinaryOp::Div, 1, false);
      return pointwise::unary_into(name, out, q, UnaryOp::Trunc, {}, inplace);
    }
  }
  return binary_into(name, out, a, b, op, 1, inplace, op == BinaryOp::Div);
}
struct DivOp {
  static constexpr const char* name = "div";
  static constexpr bool conj_aware = true;
  template <class A, class B>
  static Tensor run(const A& a, const B& b, std::optional<std::string_view> mode) {
    return div_into(name, Tensor(), a, b, mode, false);
  }
  // DivBackward0 / DivBackward1 -- self: grad / other.conj(); other: -grad * (self / (other * other)).conj().
  // With a rounding mode (DivBackward2/3) the quotient is piecewise constant: zero gradients.
  template <class A, class B>
  static void derivative(autograd::Derivative& d, const A& self, const B& other, std::optional<std::string_view> mode) {
    if (mode) {
      d.name(autograd::is_tensor<B> ? "DivBackward2" : "DivBackward3");
      d.grad(self, [](const auto& c) { return zeros_like(c.grad()); });
      d.grad(other, [](const auto& c) { return zeros_like(c.grad()); });
      return;
    }
    d.name(autograd::is_tensor<B> ? "DivBackward0" : "DivBackward1");
    d.grad(self, [o = d.save_for(self, other)](const auto& c) {
      if constexpr (!autograd::is_tensor<B>) {
        if (GradMode::is_enabled()) return c.grad() / recorded_scalar(o);
      }
      return c.grad() / conj_of(c[o]);
    });
    // divided twice, not by other * other, as PyTorch: the square overflows float16 above 256
    // (a zero gradient) and rounds once more
    d.grad(other, [s = d.save_for(other, self), o = d.save_for(other, other)](const auto& c) {
      const Tensor den = c[o];
      return -c.grad() * conj_of(c[s] / den / den);
    });
  }
};
struct DivInplaceOp {
  static constexpr const char* name = "div_";
  static constexpr bool conj_aware = true;
  using out_of_place = DivOp;
  template <class B>
  static Tensor& run(Tensor& self, const B& b, std::optional<std::string_view> mode) {
    div_into(name, self, self, b, mode, true);
    return self;
  }
};
struct DivOutOp {
  static constexpr const char* name = "div_out";
  static constexpr bool conj_aware = true;
  static Tensor& run(Tensor& out, const Tensor& a, const Tensor& b, std::optional<std::string_view> mode) {
    div_into(name, out, a, b, mode, false);
    return out;
  }
};

// ---- remainder, fmod, floor_divide, minimum, maximum, atan2 ---------------------------------

// A Scalar operand as a 0-dim tensor of the other operand's dtype, for formulas that need it.
Tensor operand_tensor(const Tensor& t, const Tensor&) { return t; }
Tensor operand_tensor(const Scalar& s, const Tensor& like) { return scalar_tensor(s, TensorOptions().dtype(like.dtype())); }

// RemainderBackward0 (Scalar other) / RemainderBackward1 -- self: grad; other: -grad * self.div(other, "floor").
// FmodBackward0 / FmodBackward1 the same with rounding mode "trunc".
template <bool Floor>
struct ModuloGrad {
  template <class A, class B>
  static void derivative(autograd::Derivative& d, const A& self, const B& other) {
    if constexpr (Floor) {
      d.name(autograd::is_tensor<B> ? "RemainderBackward1" : "RemainderBackward0");
    } else {
      d.name(autograd::is_tensor<B> ? "FmodBackward1" : "FmodBackward0");
    }
    d.grad(self, [](const auto& c) { return c.grad(); });
    if constexpr (autograd::is_tensor<B>) {
      d.grad(other, [s = d.save_for(other, self), o = d.save(other)](const auto& c) {
        const Tensor den = c[o];
        return -c.grad() * div(operand_tensor(c[s], den), den, Floor ? "floor" : "trunc");
      });
    }
  }
};
// MaximumBackward0 / MinimumBackward0 -- ties split the gradient evenly; the smaller (larger) operand gets none.
// FmaxBackward0 / FminBackward0 (Fmax) -- self: grad where self wins (self >= other, or other is
// NaN), other: grad elsewhere.
template <bool Max, bool Fmax = false>
struct ExtremumGrad {
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& other) {
    d.name(Fmax ? (Max ? "FmaxBackward0" : "FminBackward0") : (Max ? "MaximumBackward0" : "MinimumBackward0"));
    const bool need = Derivative::needs(self) || Derivative::needs(other);
    const autograd::Saved s = need ? d.save(self) : autograd::Saved{SIZE_MAX};
    const autograd::Saved o = need ? d.save(other) : autograd::Saved{SIZE_MAX};
    auto formula = [s, o](bool for_self) {
      return [s, o, for_self](const auto& c) {
        const Tensor a = c[s], b = c[o];
        if constexpr (Fmax) {
          const Tensor self_wins = logical_or(Max ? a >= b : a <= b, isnan(b));
          return c.grad().masked_fill(for_self ? logical_not(self_wins) : self_wins, 0);
        }
        const Tensor loses = for_self == Max ? a < b : a > b;
        return where(a == b, c.grad() / 2, c.grad()).masked_fill(loses, 0);
      };
    };
    d.grad(self, formula(true));
    d.grad(other, formula(false));
  }
};
// Atan2Backward0 -- self: grad * other / (self^2 + other^2); other: grad * -self / (self^2 + other^2)
// Without a graph to record, each gradient is one pass of the Atan2Backward kernel, computed in
// float32 for 16-bit operands and rounded once.
// The composite formula serves create_graph (it is differentiable) and a 16-bit operand whose
// gradient the engine sums over broadcast dims: there the operands are widened to float32 first
// (PyTorch's opmath), so that the sum is of unrounded terms, rounded once when the engine casts it
// (in their own dtype the formula rounded five times and the sum drifted past libtorch's error).
Tensor atan2_backward_part(const Tensor& grad, const Tensor& y, const Tensor& x, double sign) {
  TensorIterator iter(
      TensorIteratorConfig("atan2_backward").add_output(Tensor()).add_input(grad).add_input(y).add_input(x));
  kernels::ternary_kernel(iter, TernaryOp::Atan2Backward, sign);
  return iter.take_output();
}
struct Atan2Grad {
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& other) {
    d.name("Atan2Backward0");
    d.grad({self, other}, [s = d.save(self), o = d.save(other)](const auto& c) {
      const Tensor& g = c.grad();
      const bool one_pass = !GradMode::is_enabled(), reduced = is_reduced_floating_type(g.scalar_type());
      Tensor gs, go;
      if (c.needs(0) && one_pass && (!reduced || c[s].sizes() == g.sizes())) gs = atan2_backward_part(g, c[s], c[o], 1);
      if (c.needs(1) && one_pass && (!reduced || c[o].sizes() == g.sizes())) go = atan2_backward_part(g, c[o], c[s], -1);
      if (c.needs(0) != gs.defined() || c.needs(1) != go.defined()) {
        const auto wide = [](const Tensor& t) { return is_reduced_floating_type(t.scalar_type()) ? t.to(kFloat) : t; };
        const Tensor a = wide(c[s]), b = wide(c[o]);
        const Tensor r = g / addcmul(a * a, b, b);
        if (c.needs(0) && !gs.defined()) gs = r * b;
        if (c.needs(1) && !go.defined()) go = (r * a).neg_();
      }
      return autograd::variable_list{gs, go};
    });
  }
};
// CopysignBackward0 -- self: grad * result / self (0 where self is 0); other: zeros
struct CopysignGrad {
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& other) {
    d.name("CopysignBackward0");
    d.grad(self, [s = d.save(self), o = d.save(other)](const auto& c) {
      const Tensor g = c.grad() * sign(c[s]);
      return where(signbit(c[o]), -g, g);
    });
    d.grad(other, [](const auto& c) { return zeros_like(c.grad()); });
  }
};
// XlogyBackward0 (two tensors), 1 (Scalar self), 2 (Scalar other) -- self: grad * xlogy(self != 0,
// other); other: grad * self / other
struct XlogyGrad {
  template <class A, class B>
  static void derivative(autograd::Derivative& d, const A& self, const B& other) {
    constexpr bool kSelf = autograd::is_tensor<A>, kOther = autograd::is_tensor<B>;
    d.name(!kSelf ? "XlogyBackward1" : kOther ? "XlogyBackward0" : "XlogyBackward2");
    if constexpr (kSelf) {
      if constexpr (kOther) {
        d.grad(self, [s = d.save_for(self, self), o = d.save_for(self, other)](const auto& c) {
          return c.grad() * xlogy(c[s] != 0, c[o]);
        });
      } else {
        d.grad(self, [s = d.save(self), other](const auto& c) { return c.grad() * xlogy(c[s] != 0, other); });
      }
    }
    if constexpr (kOther) {
      if constexpr (kSelf) {
        d.grad(other, [s = d.save_for(other, self), o = d.save_for(other, other)](const auto& c) {
          return c.grad() * c[s] / c[o];
        });
      } else {
        d.grad(other, [self, o = d.save(other)](const auto& c) { return c.grad() * self / c[o]; });
      }
    }
  }
};
using FmaxGrad = ExtremumGrad<true, true>;
using FminGrad = ExtremumGrad<false, true>;
// HypotBackward0 -- self: grad * self / result; other: grad * other / result
struct HypotGrad {
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& other) {
    d.name("HypotBackward0");
    const autograd::Saved r = d.save_result();
    d.grad(self, [s = d.save_for(self, self), r](const auto& c) { return c.grad() * c[s] / c[r]; });
    d.grad(other, [o = d.save_for(other, other), r](const auto& c) { return c.grad() * c[o] / c[r]; });
  }
};
// floor_divide has no derivative in PyTorch either.
struct NoGrad {};

// Each: the functional op (Tensor or Scalar operands, derivative from Grad) and the in-place op.
#define EMBER_BINARY_OP(Struct, op_name, kernel_op, int_to_float, Grad)                           \
  struct Struct##Op : Grad {                                                                      \
    static constexpr const char* name = op_name;                                                  \
    template <class A, class B>                                                                   \
    static Tensor run(const A& a, const B& b) {                                                   \
      return binary_into(name, Tensor(), a, b, kernel_op, 1, false, int_to_float);                \
    }                                                                                             \
  };                                                                                              \
  struct Struct##InplaceOp {                                                                      \
    static constexpr const char* name = op_name "_";                                              \
    using out_of_place = Struct##Op;                                                              \
    template <class B>                                                                            \
    static Tensor& run(Tensor& self, const B& b) {                                                \
      binary_into(name, self, self, b, kernel_op, 1, true, int_to_float);                         \
      return self;                                                                                \
    }                                                                                             \
  };
EMBER_BINARY_OP(Remainder, "remainder", BinaryOp::Remainder, false, ModuloGrad<true>)
EMBER_BINARY_OP(Fmod, "fmod", BinaryOp::Fmod, false, ModuloGrad<false>)
EMBER_BINARY_OP(FloorDivide, "floor_divide", BinaryOp::DivFloor, false, NoGrad)
EMBER_BINARY_OP(Minimum, "minimum", BinaryOp::Minimum, false, ExtremumGrad<false>)
EMBER_BINARY_OP(Maximum, "maximum", BinaryOp::Maximum, false, ExtremumGrad<true>)
EMBER_BINARY_OP(Atan2, "atan2", BinaryOp::Atan2, true, Atan2Grad)
EMBER_BINARY_OP(Copysign, "copysign", BinaryOp::Copysign, true, CopysignGrad)
EMBER_BINARY_OP(Fmax, "fmax", BinaryOp::Fmax, false, FmaxGrad)
EMBER_BINARY_OP(Fmin, "fmin", BinaryOp::Fmin, false, FminGrad)
EMBER_BINARY_OP(Hypot, "hypot", BinaryOp::Hypot, false, HypotGrad)
#undef EMBER_BINARY_OP

// libtorch's C++ xlogy takes a Scalar operand as a 0-dim float64 tensor, not as a wrapped number
// (xlogy(an int tensor, 2.5) is float64), in its gradients too.
Tensor xlogy_operand(const Tensor& t) { return t; }
Tensor xlogy_operand(const Scalar& s) { return scalar_tensor(s, kDouble); }
struct XlogyOp : XlogyGrad {
  static constexpr const char* name = "xlogy";
  template <class A, class B>
  static Tensor run(const A& a, const B& b) {
    return binary_into(name, Tensor(), xlogy_operand(a), xlogy_operand(b), BinaryOp::Xlogy, 1, false, true);
  }
};
struct XlogyInplaceOp {
  static constexpr const char* name = "xlogy_";
  using out_of_place = XlogyOp;
  template <class B>
  static Tensor& run(Tensor& self, const B& b) {
    binary_into(name, self, self, xlogy_operand(b), BinaryOp::Xlogy, 1, true, true);
    return self;
  }
};

struct ThresholdBackwardOp {
  static constexpr const char* name = "threshold_backward";
  static Tensor run(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
    return binary_into(name, Tensor(), grad_output, self, BinaryOp::ThresholdBackward, threshold, false);
  }
  // ThresholdBackwardBackward0 -- grad_output: threshold_backward(grad, self, threshold); self: zeros_like(grad)
  static void derivative(autograd::Derivative& d, const Tensor& grad_output, const Tensor& self,
                         const Scalar& threshold) {
    d.name("ThresholdBackwardBackward0");
    d.grad(grad_output, [s = d.save_for(grad_output, self), threshold](const auto& c) {
      return threshold_backward(c.grad(), c[s], threshold);
    });
    d.grad(self, [](const auto& c) { return zeros_like(c.grad()); });
  }
};

// grad_output where self > 0, else grad_output * negative_slope, in one pass.
struct LeakyReluBackwardOp {
  static constexpr const char* name = "leaky_relu_backward";
  static Tensor run(const Tensor& grad_output, const Tensor& self, const Scalar& negative_slope, bool self_is_result) {
    EMBER_CHECK(!self_is_result || negative_slope.toDouble() >= 0.0, name,
                "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
                "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
                "version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting "
                "in-place leakRelu backward calculation with negative slope");
    return binary_into(name, Tensor(), grad_output, self, BinaryOp::LeakyReluBackward, negative_slope, false);
  }
  // LeakyReluBackwardBackward0 -- grad_output: leaky_relu_backward(grad, self, negative_slope, false);
  //   self: zeros_like(grad)
  static void derivative(autograd::Derivative& d, const Tensor& grad_output, const Tensor& self,
                         const Scalar& negative_slope, bool) {
    d.name("LeakyReluBackwardBackward0");
    d.grad(grad_output, [s = d.save_for(grad_output, self), negative_slope](const auto& c) {
      return dispatch::call<LeakyReluBackwardOp>(c.grad(), c[s], negative_slope, false);
    });
    d.grad(self, [](const auto& c) { return zeros_like(c.grad()); });
  }
};

// PyTorch's elu_backward in one pass: from the input (is_result false) or from elu's result.
struct EluBackwardOp {
  static constexpr const char* name = "elu_backward";
  static Tensor run(const Tensor& grad_output, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale,
                    bool is_result, const Tensor& self_or_result) {
    EMBER_CHECK(!is_result || alpha.toDouble() >= 0.0, name,
                "In-place elu backward calculation is triggered with a negative slope which is not supported. This "
                "is caused by calling in-place forward function with a negative slope, please call out-of-place "
                "version instead.");
    const BinaryOp op = is_result ? BinaryOp::EluBackwardOfResult : BinaryOp::EluBackward;
    return binary_into(name, Tensor(), grad_output, self_or_result, op, 1, false, false, {alpha, scale, input_scale});
  }
  // EluBackwardBackward0 -- grad_output: elu_backward(grad, alpha, scale, input_scale, is_result, self_or_result);
  //   self_or_result: elu_double_backward: (self_or_result < 0) times, from the result,
  //   grad * grad_output * input_scale, from the input, elu_backward(grad * grad_output * input_scale, ...)
  static void derivative(autograd::Derivative& d, const Tensor& grad_output, const Scalar& alpha, const Scalar& scale,
                         const Scalar& input_scale, bool is_result, const Tensor& self_or_result) {
    d.name("EluBackwardBackward0");
    const autograd::Saved x = d.save(self_or_result);
    d.grad(grad_output, [x, alpha, scale, input_scale, is_result](const auto& c) {
      return dispatch::call<EluBackwardOp>(c.grad(), alpha, scale, input_scale, is_result, c[x]);
    });
    d.grad(self_or_result, [g = d.save_for(self_or_result, grad_output), x, alpha, scale, input_scale,
                            is_result](const auto& c) {
      const Tensor gg = c.grad() * c[g] * input_scale;
      const Tensor negative = (c[x] < 0).to(gg.dtype());
      if (is_result) return gg * negative;
      return dispatch::call<EluBackwardOp>(gg, alpha, scale, input_scale, false, c[x]) * negative;
    });
  }
};

// ---- pow ----------------------------------------------------------------------------------

// Tensor ** Scalar runs as a unary op in result_type(self, exponent); integer results refuse
// negative integer exponents as PyTorch does.
Tensor pow_scalar_into(const char* name, const Tensor& out, const Tensor& self, const Scalar& exponent,
                       bool inplace) {
  const ScalarType rt = result_type(self, exponent);
  if (rt == kBool) not_implemented(name, rt);
  EMBER_CHECK(is_floating_type(rt) || is_complex_type(rt) || !exponent.isIntegral(false) || exponent.toLong() >= 0, name,
              "Integers to negative integer powers are not allowed.");
  return pointwise::unary_into(name, out, self, UnaryOp::PowScalar, {exponent, {}, {}}, inplace, {false, rt});
}
struct PowOp {
  static constexpr const char* name = "pow";
  static Tensor run(const Tensor& self, const Tensor& exponent) {
    return binary_into(name, Tensor(), self, exponent, BinaryOp::Pow, 1, false);
  }
  static Tensor run(const Tensor& self, const Scalar& exponent) {
    return pow_scalar_into(name, Tensor(), self, exponent, false);
  }
  static Tensor run(const Scalar& self, const Tensor& exponent) {
    return binary_into(name, Tensor(), self, exponent, BinaryOp::Pow, 1, false);
  }
  // The formulas conjugate for complex operands (a no-op on real ones), as derivatives.yaml's.
  // PowBackward0 (Scalar exponent) -- self: pow_backward(grad, self, exponent)
  static void derivative(autograd::Derivative& d, const Tensor& self, const Scalar& exponent) {
    d.name("PowBackward0");
    d.grad(self, [s = d.save(self), exponent](const auto& c) {
      if (exponent.equal(0)) return zeros_like(c.grad());
      const Scalar e1 = exponent.isComplex()         ? Scalar(exponent.toComplexDouble() - complex<double>(1))
                        : exponent.isFloatingPoint() ? Scalar(exponent.toDouble() - 1)
                                                     : Scalar(exponent.toLong() - 1);
      return c.grad() * (c[s].pow(e1) * exponent).conj();
    });
  }
  // PowBackward1 -- self: pow_backward_self(grad, self, exponent); exponent: pow_backward_exponent(grad, self,
  // exponent, result). 0 ** e with e >= 0 (real) contributes nothing to the exponent's gradient (not 0 * log 0).
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& exponent) {
    d.name("PowBackward1");
    const autograd::Saved s = d.save(self), e = d.save(exponent);
    d.grad(self, [s, e](const auto& c) {
      const Tensor ex = c[e];
      return where(ex == 0, 0, c.grad() * (ex * c[s].pow(ex - 1)).conj());
    });
    d.grad(exponent, [s, e, r = d.save_result()](const auto& c) {
      const Tensor base = c[s].to(c[r].dtype());
      return c.grad() * where((base == 0).logical_and(nonnegative_real(c[e])), 0, (c[r] * base.log()).conj());
    });
  }
  // PowBackward2 -- exponent: pow_backward_exponent(grad, self, exponent, result) with a Scalar base
  static void derivative(autograd::Derivative& d, const Scalar& self, const Tensor& exponent) {
    d.name("PowBackward2");
    d.grad(exponent, [self, e = d.save(exponent), r = d.save_result()](const auto& c) {
      const Scalar log_base = self.isComplex() || c[r].is_complex() ? Scalar(std::log(std::complex<double>(self.toComplexDouble())))
                                                                    : Scalar(std::log(self.toDouble()));
      const Tensor g = (c[r] * log_base).conj();
      if (self.equal(0)) return c.grad() * where(nonnegative_real(c[e]), 0, g);
      return c.grad() * g;
    });
  }
  // e >= 0 with a zero imaginary part for complex e.
  static Tensor nonnegative_real(const Tensor& e) {
    if (!e.is_complex()) return e >= 0;
    return (real(e) >= 0).logical_and(imag(e) == 0);
  }
};
struct PowInplaceOp {
  static constexpr const char* name = "pow_";
  using out_of_place = PowOp;
  static Tensor& run(Tensor& self, const Tensor& exponent) {
    binary_into(name, self, self, exponent, BinaryOp::Pow, 1, true);
    return self;
  }
  static Tensor& run(Tensor& self, const Scalar& exponent) {
    pow_scalar_into(name, self, self, exponent, true);
    return self;
  }
};
struct PowOutOp {
  static constexpr const char* name = "pow_out";
  static Tensor& run(Tensor& out, const Tensor& self, const Tensor& exponent) {
    binary_into(name, out, self, exponent, BinaryOp::Pow, 1, false);
    return out;
  }
};

// ---- lerp, addcmul, addcdiv ---------------------------------------------------------------

template <class C>
Tensor ternary_into(const char* name, const Tensor& out, const Tensor& a, const Tensor& b, const C& c, TernaryOp op,
                    const Scalar& value, bool inplace) {
  TensorIteratorConfig config(name);
  config.add_output(out).add_input(a).add_input(b).add_input(c);
  if (inplace) config.no_resize_outputs();
  TensorIterator iter(config);
  EMBER_CHECK(op != TernaryOp::Clamp || !is_complex_type(iter.common_dtype()), name,
              "clamp is not supported for complex types");
  kernels::ternary_kernel(iter, op, value);
  bump_version(out);
  return iter.take_output();
}

// lerp computes in self's float dtype; end and a tensor weight must already have it.
template <class W>
void check_lerp(const char* name, const Tensor& self, const Tensor& end, const W& weight) {
  if (!is_floating_type(self.dtype()) && !is_complex_type(self.dtype())) not_implemented(name, self.dtype());
  EMBER_CHECK(end.dtype() == self.dtype(), name, "expected dtype ", self.dtype(), " for `end` but got dtype ",
              end.dtype());
  if constexpr (std::is_same_v<W, Tensor>) {
    EMBER_CHECK(weight.dtype() == self.dtype(), name, "expected dtype ", self.dtype(),
                " for `weight` but got dtype ", weight.dtype());
  }
}
// A Scalar weight is a kernel parameter (PyTorch keeps it in float32 for Half/BFloat16 rather
// than rounding it to the tensor's dtype); a tensor weight is a third operand.
Tensor lerp_into(const char* name, const Tensor& out, const Tensor& self, const Tensor& end, const Scalar& weight,
                 bool inplace) {
  check_lerp(name, self, end, weight);
  return binary_into(name, out, self, end, BinaryOp::Lerp, weight, inplace);
}
Tensor lerp_into(const char* name, const Tensor& out, const Tensor& self, const Tensor& end, const Tensor& weight,
                 bool inplace) {
  check_lerp(name, self, end, weight);
  return ternary_into(name, out, self, end, weight, TernaryOp::Lerp, 1, inplace);
}
Tensor one_minus(const Tensor& w) { return 1 - w; }
Scalar one_minus(const Scalar& w) {
  return w.isComplex() ? Scalar(complex<double>(1, 0) - w.toComplexDouble()) : Scalar(1 - w.toDouble());
}
struct LerpOp {
  static constexpr const char* name = "lerp";
  template <class W>
  static Tensor run(const Tensor& self, const Tensor& end, const W& weight) {
    return lerp_into(name, Tensor(), self, end, weight, false);
  }
  // LerpBackward0 (Scalar weight) / LerpBackward1 -- self: grad * (1 - weight).conj(); end: grad *
  // weight.conj(); weight: grad * (end - self).conj()
  template <class W>
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& end, const W& weight) {
    d.name(autograd::is_tensor<W> ? "LerpBackward1" : "LerpBackward0");
    const bool need_w = Derivative::needs(self) || Derivative::needs(end);
    auto w = [&] {
      if constexpr (autograd::is_tensor<W>) return need_w ? d.save(weight) : autograd::Saved{SIZE_MAX};
      else return weight;
    }();
    d.grad(self, [w](const auto& c) { return c.grad() * conj_of(one_minus(c[w])); });
    d.grad(end, [w](const auto& c) { return c.grad() * conj_of(c[w]); });
    d.grad(weight, [s = d.save_for(weight, self), e = d.save_for(weight, end)](const auto& c) {
      return c.grad() * conj_of(c[e] - c[s]);
    });
  }
};
struct LerpInplaceOp {
  static constexpr const char* name = "lerp_";
  using out_of_place = LerpOp;
  template <class W>
  static Tensor& run(Tensor& self, const Tensor& end, const W& weight) {
    lerp_into(name, self, self, end, weight, true);
    return self;
  }
};

void check_addc(const char* name, TernaryOp op, const Tensor& self, const Tensor& t1, const Tensor& t2) {
  if (op == TernaryOp::Addcdiv) {
    EMBER_CHECK(!(is_integral_type(t1.dtype(), true) && is_integral_type(t2.dtype(), true)), name,
                "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
                "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented "
                "as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
                "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the "
                "latter implementation: (input + value * tensor1 / tensor2), for all dtypes.");
  }
  ResultTypeState st;
  st.update(self);
  st.update(t1);
  st.update(t2);
  if (st.result() == kBool) not_implemented(name, kBool);
}
template <TernaryOp K>
struct AddcOp {
  static constexpr const char* name = K == TernaryOp::Addcmul ? "addcmul" : "addcdiv";
  static Tensor run(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
    check_addc(name, K, self, t1, t2);
    return ternary_into(name, Tensor(), self, t1, t2, K, value, false);
  }
  // AddcmulBackward0 -- self: grad; tensor1: grad * (tensor2 * value).conj(); tensor2: grad *
  //                     (tensor1 * value).conj()
  // AddcdivBackward0 -- self: grad; tensor1: grad * (value / tensor2).conj();
  //                     tensor2: -grad * (value * tensor1 / (tensor2 * tensor2)).conj()
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& t1, const Tensor& t2,
                         const Scalar& value) {
    d.name(K == TernaryOp::Addcmul ? "AddcmulBackward0" : "AddcdivBackward0");
    d.grad(self, [](const auto& c) { return c.grad(); });
    const bool need = Derivative::needs(t1) || Derivative::needs(t2);
    const autograd::Saved a = need ? d.save(t1) : autograd::Saved{SIZE_MAX};
    const autograd::Saved b = need ? d.save(t2) : autograd::Saved{SIZE_MAX};
    if constexpr (K == TernaryOp::Addcmul) {
      d.grad(t1, [b, value](const auto& c) { return c.grad() * conj_of(c[b] * value); });
      d.grad(t2, [a, value](const auto& c) { return c.grad() * conj_of(c[a] * value); });
    } else {
      d.grad(t1, [b, value](const auto& c) { return c.grad() * conj_of(value / c[b]); });
      d.grad(t2, [a, b, value](const auto& c) { return -c.grad() * conj_of(value * c[a] / (c[b] * c[b])); });
    }
  }
};
template <TernaryOp K>
struct AddcInplaceOp {
  static constexpr const char* name = K == TernaryOp::Addcmul ? "addcmul_" : "addcdiv_";
  using out_of_place = AddcOp<K>;
  static Tensor& run(Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
    check_addc(name, K, self, t1, t2);
    ternary_into(name, self, self, t1, t2, K, value, true);
    return self;
  }
};

// ---- clamp --------------------------------------------------------------------------------

// Scalar bounds: a unary op in result_type(self, min, max) (clamp(int_tensor, 0.5) is float).
Tensor clamp_into(const char* name, const Tensor& out, const Tensor& self, const std::optional<Scalar>& min,
                  const std::optional<Scalar>& max, bool inplace) {
  EMBER_CHECK(min || max, name, "torch.clamp: At least one of 'min' or 'max' must not be None");
  ResultTypeState st;
  st.update(self);
  if (min) st.update(*min);
  if (max) st.update(*max);
  if (st.result() == kBool) not_implemented(name, kBool);
  return pointwise::unary_into(name, out, self, UnaryOp::Clamp, {min, max, {}}, inplace, {false, st.result()});
}
struct ClampOp {
  static constexpr const char* name = "clamp";
  static constexpr bool quantized = true;  // scalar bounds: relu6 and hardtanh of quantized tensors
  static Tensor run(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
    if (self.is_quantized()) return ember::quantized::clamp(self, min, max);
    return clamp_into(name, Tensor(), self, min, max, false);
  }
  // Tensor bounds: NaN-propagating min/max, as minimum(maximum(self, min), max).
  static Tensor run(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
    EMBER_CHECK(!self.is_quantized() && !(min && min->is_quantized()) && !(max && max->is_quantized()), name,
                "quantized tensors take scalar bounds only (PyTorch's quantized clamp), got tensor bounds");
    EMBER_CHECK(min || max, name, "torch.clamp: At least one of 'min' or 'max' must not be None");
    if (min && max) {
      if (self.dtype() == kBool && min->dtype() == kBool && max->dtype() == kBool) not_implemented(name, kBool);
      return ternary_into(name, Tensor(), self, *min, *max, TernaryOp::Clamp, 1, false);
    }
    if (min) return binary_into(name, Tensor(), self, *min, BinaryOp::Maximum, 1, false);
    return binary_into(name, Tensor(), self, *max, BinaryOp::Minimum, 1, false);
  }
  // ClampBackward1 -- self: clamp_backward(grad, self, min, max): grad where min <= self <= max
  static void derivative(autograd::Derivative& d, const Tensor& self, const std::optional<Scalar>& min,
                         const std::optional<Scalar>& max) {
    d.name("ClampBackward1");
    d.grad(self, [s = d.save(self), min, max](const auto& c) {
      const Tensor x = c[s];
      if (min && max) return where((x >= *min).logical_and(x <= *max), c.grad(), 0);
      return where(min ? x >= *min : x <= *max, c.grad(), 0);
    });
  }
  // ClampBackward0 -- clamp_backward_min_max: self where min <= self <= max; min where self < min < max;
  // max where self > max or min > max (the result is max then)
  static void derivative(autograd::Derivative& d, const Tensor& self, const std::optional<Tensor>& min,
                         const std::optional<Tensor>& max) {
    d.name("ClampBackward0");
    const autograd::Saved s = d.save(self);
    const autograd::Saved lo = min ? d.save(*min) : autograd::Saved{SIZE_MAX};
    const autograd::Saved hi = max ? d.save(*max) : autograd::Saved{SIZE_MAX};
    const bool has_min = min.has_value(), has_max = max.has_value();
    d.grad(self, [s, lo, hi, has_min, has_max](const auto& c) {
      const Tensor x = c[s];
      if (has_min && has_max) return where((x >= c[lo]).logical_and(x <= c[hi]), c.grad(), 0);
      return where(has_min ? x >= c[lo] : x <= c[hi], c.grad(), 0);
    });
    d.grad(min, [s, lo, hi, has_max](const auto& c) {
      const Tensor below = c[s] < c[lo];
      return where(has_max ? below.logical_and(c[lo] < c[hi]) : below, c.grad(), 0);
    });
    d.grad(max, [s, lo, hi, has_min](const auto& c) {
      const Tensor above = c[s] > c[hi];
      return where(has_min ? above.logical_or(c[lo] > c[hi]) : above, c.grad(), 0);
    });
  }
};
struct ClampInplaceOp {
  static constexpr const char* name = "clamp_";
  using out_of_place = ClampOp;
  static Tensor& run(Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
    clamp_into(name, self, self, min, max, true);
    return self;
  }
  static Tensor& run(Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
    EMBER_CHECK(min || max, name, "torch.clamp: At least one of 'min' or 'max' must not be None");
    if (min && max) {
      ternary_into(name, self, self, *min, *max, TernaryOp::Clamp, 1, true);
    } else if (min) {
      binary_into(name, self, self, *min, BinaryOp::Maximum, 1, true);
    } else {
      binary_into(name, self, self, *max, BinaryOp::Minimum, 1, true);
    }
    return self;
  }
};
struct ClampOutOp {
  static constexpr const char* name = "clamp_out";
  static Tensor& run(Tensor& out, const Tensor& self, const std::optional<Scalar>& min,
                     const std::optional<Scalar>& max) {
    clamp_into(name, out, self, min, max, false);
    return out;
  }
};
struct ClampMinOp {
  static constexpr const char* name = "clamp_min";
  static Tensor run(const Tensor& self, const Scalar& min) { return clamp_into(name, Tensor(), self, min, {}, false); }
  // ClampMinBackward0 -- self: where(self >= min, grad, 0)
  static void derivative(autograd::Derivative& d, const Tensor& self, const Scalar& min) {
    d.name("ClampMinBackward0");
    d.grad(self, [s = d.save(self), min](const auto& c) { return where(c[s] >= min, c.grad(), 0); });
  }
};
struct ClampMaxOp {
  static constexpr const char* name = "clamp_max";
  static Tensor run(const Tensor& self, const Scalar& max) { return clamp_into(name, Tensor(), self, {}, max, false); }
  // ClampMaxBackward0 -- self: where(self <= max, grad, 0)
  static void derivative(autograd::Derivative& d, const Tensor& self, const Scalar& max) {
    d.name("ClampMaxBackward0");
    d.grad(self, [s = d.save(self), max](const auto& c) { return where(c[s] <= max, c.grad(), 0); });
  }
};
struct ClampMinInplaceOp {
  static constexpr const char* name = "clamp_min_";
  using out_of_place = ClampMinOp;
  static Tensor& run(Tensor& self, const Scalar& min) {
    clamp_into(name, self, self, min, {}, true);
    return self;
  }
};
struct ClampMaxInplaceOp {
  static constexpr const char* name = "clamp_max_";
  using out_of_place = ClampMaxOp;
  static Tensor& run(Tensor& self, const Scalar& max) {
    clamp_into(name, self, self, {}, max, true);
    return self;
  }
};

// ---- hardtanh -----------------------------------------------------------------------------

// clamp with scalar bounds, under its own derivative as PyTorch's: the gradient strictly inside
// the bounds, in one pass (hardtanh_backward).
struct HardtanhOp {
  static constexpr const char* name = "hardtanh";
  static constexpr bool quantized = true;  // relu6 and hardtanh of quantized tensors: the quantized clamp
  static Tensor run(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
    EMBER_CHECK(self.dtype() != kBool, name, "\"hardtanh\" not implemented for 'Bool'");
    if (self.is_quantized()) return ember::quantized::clamp(self, min_val, max_val);
    return clamp_into(name, Tensor(), self, min_val, max_val, false);
  }
  // HardtanhBackward0 -- self: hardtanh_backward(grad, self, min_val, max_val)
  static void derivative(autograd::Derivative& d, const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
    d.name("HardtanhBackward0");
    d.grad(self, [s = d.save(self), min_val, max_val](const auto& c) {
      return hardtanh_backward(c.grad(), c[s], min_val, max_val);
    });
  }
};
struct HardtanhInplaceOp {
  static constexpr const char* name = "hardtanh_";
  using out_of_place = HardtanhOp;
  static Tensor& run(Tensor& self, const Scalar& min_val, const Scalar& max_val) {
    EMBER_CHECK(self.dtype() != kBool, name, "\"hardtanh\" not implemented for 'Bool'");
    clamp_into(name, self, self, min_val, max_val, true);
    return self;
  }
};
struct HardtanhBackwardOp {
  static constexpr const char* name = "hardtanh_backward";
  static Tensor run(const Tensor& grad_output, const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
    return binary_into(name, Tensor(), grad_output, self, BinaryOp::HardtanhBackward, 1, false, false,
                       {min_val, max_val, {}});
  }
  // HardtanhBackwardBackward0 -- grad_output: hardtanh_backward(grad, self, min_val, max_val); self: zeros_like(grad)
  static void derivative(autograd::Derivative& d, const Tensor& grad_output, const Tensor& self, const Scalar& min_val,
                         const Scalar& max_val) {
    d.name("HardtanhBackwardBackward0");
    d.grad(grad_output, [s = d.save_for(grad_output, self), min_val, max_val](const auto& c) {
      return dispatch::call<HardtanhBackwardOp>(c.grad(), c[s], min_val, max_val);
    });
    d.grad(self, [](const auto& c) { return zeros_like(c.grad()); });
  }
};

// ---- where, masked_fill -------------------------------------------------------------------

// A value operand of where in dtype `dt`: tensors are cast, Scalars become broadcast 0-dim tensors.
Tensor as_operand(const Tensor& t, ScalarType dt) { return t.to(dt); }
Tensor as_operand(const Scalar& s, ScalarType dt) { return scalar_tensor(s, TensorOptions().dtype(dt)); }

template <class A, class B>
Tensor where_into(const char* name, const Tensor& out, const Tensor& condition, const A& a, const B& b) {
  EMBER_CHECK(condition.dtype() == kBool, name,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ", condition.dtype());
  ResultTypeState st;
  st.update(a);
  st.update(b);
  const ScalarType dt = st.result();
  TensorIterator iter(TensorIteratorConfig(name)
                          .add_output(out)
                          .add_input(condition)
                          .add_owned_input(as_operand(a, dt))
                          .add_owned_input(as_operand(b, dt))
                          .no_input_cast()
                          .common_dtype(dt));
  kernels::where_kernel(iter);
  return iter.take_output();
}

struct WhereOp {
  static constexpr const char* name = "where";
  template <class A, class B>
  static Tensor run(const Tensor& condition, const A& a, const B& b) {
    return where_into(name, Tensor(), condition, a, b);
  }
  // WhereBackward0 -- self: where(condition, grad, 0); other: where(condition, 0, grad)
  template <class A, class B>
  static void derivative(autograd::Derivative& d, const Tensor& condition, const A& self, const B& other) {
    d.name("WhereBackward0");
    d.grad(self, [cond = d.save_for(self, condition)](const auto& c) { return where(c[cond], c.grad(), 0); });
    d.grad(other, [cond = d.save_for(other, condition)](const auto& c) { return where(c[cond], 0, c.grad()); });
  }
};
struct WhereOutOp {
  static constexpr const char* name = "where_out";
  static Tensor& run(Tensor& out, const Tensor& condition, const Tensor& a, const Tensor& b) {
    where_into(name, out, condition, a, b);
    bump_version(out);
    return out;
  }
};

// PyTorch converts the fill value with an overflow check (c10's checked_convert): integers must
// fit (unsigned types also take negatives down to -max, which wrap), finite floats must lie in
// the dtype's range; bool takes anything, and infinities and NaN go to float dtypes.
void check_fill_value(const char* name, const Scalar& v, ScalarType dt) {
  if (dt == kBool || v.isBoolean() || is_complex_type(dt)) return;  // (complex dtypes take any number)
  const double x = v.toDouble();
  bool overflow = false;
  visit_dtype(dt, [&](auto t) {
    using T = decltype(t);
    const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    const double hi = static_cast<double>(std::numeric_limits<T>::max());
    if constexpr (std::is_integral_v<T>) {
      if (v.isIntegral(false)) {
        // compared as integers: int64's max as a double is 2^63, outside int64 (converting it back
        // is undefined)
        const int64_t i = v.toLong();
        const auto max = static_cast<int64_t>(std::numeric_limits<T>::max());
        const auto min = static_cast<int64_t>(std::numeric_limits<T>::lowest());
        overflow = std::is_unsigned_v<T> ? (i > max || i < -max) : (i < min || i > max);
      } else {
        overflow = x < lo || x > hi || std::isnan(x);
      }
    } else {
      overflow = std::isfinite(x) && (x < lo || x > hi);
    }
  });
  EMBER_CHECK(!overflow, name, "value cannot be converted to type ", dt, " without overflow");
}

// self where !mask, value where mask; in-place the mask must broadcast to self's shape.
Tensor masked_fill_into(const char* name, const Tensor& out, const Tensor& self, const Tensor& mask,
                        const Scalar& value, bool inplace) {
  EMBER_CHECK(mask.dtype() == kBool, name, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.dtype());
  check_fill_value(name, value, self.dtype());
  TensorIteratorConfig config(name);
  config.add_output(out)
      .add_input(mask)
      .add_owned_input(scalar_tensor(value, TensorOptions().dtype(self.dtype())))
      .add_input(self)
      .no_input_cast()
      .common_dtype(self.dtype());
  if (inplace) config.no_resize_outputs();
  TensorIterator iter(config);
  kernels::where_kernel(iter);
  bump_version(out);
  return iter.take_output();
}
const Scalar& fill_value(const Scalar& v) { return v; }
Scalar fill_value(const Tensor& v) {
  EMBER_CHECK(v.dim() == 0, "masked_fill_", "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              v.dim(), " dimension(s).");
  return v.item();
}
struct MaskedFillOp {
  static constexpr const char* name = "masked_fill";
  template <class V>
  static Tensor run(const Tensor& self, const Tensor& mask, const V& value) {
    return masked_fill_into(name, Tensor(), self, mask, fill_value(value), false);
  }
  // MaskedFillBackward0 (Scalar value) / MaskedFillBackward1 -- self: grad.masked_fill(mask, 0);
  // value: masked_fill_backward(grad, mask), the sum of grad where mask
  template <class V>
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& mask, const V& value) {
    d.name(autograd::is_tensor<V> ? "MaskedFillBackward1" : "MaskedFillBackward0");
    const autograd::Saved m = d.save(mask);
    d.grad(self, [m](const auto& c) { return c.grad().masked_fill(c[m], 0); });
    d.grad(value, [m](const auto& c) { return where(c[m], c.grad(), 0).sum(); });
  }
};
struct MaskedFillInplaceOp {
  static constexpr const char* name = "masked_fill_";
  using derivative_rule = autograd::MaskedFillRule;
  template <class V>
  static Tensor& run(Tensor& self, const Tensor& mask, const V& value) {
    masked_fill_into(name, self, self, mask, fill_value(value), true);
    return self;
  }
};

}  // namespace

// ---- public functions ---------------------------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) { return dispatch::call<AddOp>(a, b, alpha); }
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) { return dispatch::call<AddOp>(a, b, alpha); }
Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return dispatch::call<AddOutOp>(out, a, b, alpha);
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) { return dispatch::call<SubOp>(a, b, alpha); }
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) { return dispatch::call<SubOp>(a, b, alpha); }
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return dispatch::call<SubOutOp>(out, a, b, alpha);
}
Tensor rsub(const Tensor& a, const Tensor& b, const Scalar& alpha) { return dispatch::call<RsubOp>(a, b, alpha); }
Tensor rsub(const Tensor& a, const Scalar& b, const Scalar& alpha) { return dispatch::call<RsubOp>(a, b, alpha); }
Tensor mul(const Tensor& a, const Tensor& b) { return dispatch::call<MulOp>(a, b); }
Tensor mul(const Tensor& a, const Scalar& b) { return dispatch::call<MulOp>(a, b); }
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b) { return dispatch::call<MulOutOp>(out, a, b); }
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> mode) {
  return dispatch::call<DivOp>(a, b, mode);
}
Tensor div(const Tensor& a, const Scalar& b, std::optional<std::string_view> mode) {
  return dispatch::call<DivOp>(a, b, mode);
}
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b, std::optional<std::string_view> mode) {
  return dispatch::call<DivOutOp>(out, a, b, mode);
}
Tensor operator/(const Scalar& a, const Tensor& b) { return dispatch::call<DivOp>(a, b, std::nullopt); }
Tensor remainder(const Tensor& a, const Tensor& b) { return dispatch::call<RemainderOp>(a, b); }
Tensor remainder(const Tensor& a, const Scalar& b) { return dispatch::call<RemainderOp>(a, b); }
Tensor remainder(const Scalar& a, const Tensor& b) { return dispatch::call<RemainderOp>(a, b); }
Tensor fmod(const Tensor& a, const Tensor& b) { return dispatch::call<FmodOp>(a, b); }
Tensor fmod(const Tensor& a, const Scalar& b) { return dispatch::call<FmodOp>(a, b); }
Tensor floor_divide(const Tensor& a, const Tensor& b) { return dispatch::call<FloorDivideOp>(a, b); }
Tensor floor_divide(const Tensor& a, const Scalar& b) { return dispatch::call<FloorDivideOp>(a, b); }
Tensor pow(const Tensor& a, const Tensor& e) { return dispatch::call<PowOp>(a, e); }
Tensor pow(const Tensor& a, const Scalar& e) { return dispatch::call<PowOp>(a, e); }
Tensor pow(const Scalar& a, const Tensor& e) { return dispatch::call<PowOp>(a, e); }
Tensor& pow_out(Tensor& out, const Tensor& a, const Tensor& e) { return dispatch::call<PowOutOp>(out, a, e); }
Tensor minimum(const Tensor& a, const Tensor& b) { return dispatch::call<MinimumOp>(a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return dispatch::call<MaximumOp>(a, b); }
Tensor atan2(const Tensor& a, const Tensor& b) { return dispatch::call<Atan2Op>(a, b); }
Tensor copysign(const Tensor& a, const Tensor& b) { return dispatch::call<CopysignOp>(a, b); }
Tensor fmax(const Tensor& self, const Tensor& other) { return dispatch::call<FmaxOp>(self, other); }
Tensor fmin(const Tensor& self, const Tensor& other) { return dispatch::call<FminOp>(self, other); }
Tensor hypot(const Tensor& self, const Tensor& other) {
  EMBER_CHECK(is_floating_type(result_type(self, other)), "hypot", "\"hypot\" not implemented for '",
              result_type(self, other), "'");
  return dispatch::call<HypotOp>(self, other);
}
Tensor xlogy(const Tensor& self, const Tensor& other) {
  special_math::check_real("xlogy", "xlogy_cpu", self);
  special_math::check_real("xlogy", "xlogy_cpu", other);
  return dispatch::call<XlogyOp>(self, other);
}
Tensor xlogy(const Scalar& self, const Tensor& other) {
  special_math::check_real("xlogy", "xlogy_cpu", other);
  return dispatch::call<XlogyOp>(self, other);
}
Tensor xlogy(const Tensor& self, const Scalar& other) {
  special_math::check_real("xlogy", "xlogy_cpu", self);
  return dispatch::call<XlogyOp>(self, other);
}
Tensor& xlogy_(Tensor& self, const Tensor& other) { return dispatch::call<XlogyInplaceOp>(self, other); }
Tensor& xlogy_(Tensor& self, const Scalar& other) { return dispatch::call<XlogyInplaceOp>(self, other); }
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  return dispatch::call<ThresholdBackwardOp>(grad_output, self, threshold);
}
Tensor leaky_relu_backward(const Tensor& grad_output, const Tensor& self, const Scalar& negative_slope,
                           bool self_is_result) {
  return dispatch::call<LeakyReluBackwardOp>(grad_output, self, negative_slope, self_is_result);
}
Tensor elu_backward(const Tensor& grad_output, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale,
                    bool is_result, const Tensor& self_or_result) {
  return dispatch::call<EluBackwardOp>(grad_output, alpha, scale, input_scale, is_result, self_or_result);
}
Tensor hardtanh(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  return dispatch::call<HardtanhOp>(self, min_val, max_val);
}
Tensor& hardtanh_(Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  return dispatch::call<HardtanhInplaceOp>(self, min_val, max_val);
}
Tensor hardtanh_backward(const Tensor& grad_output, const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  return dispatch::call<HardtanhBackwardOp>(grad_output, self, min_val, max_val);
}
Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& w) { return dispatch::call<LerpOp>(self, end, w); }
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& w) { return dispatch::call<LerpOp>(self, end, w); }
Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return dispatch::call<AddcOp<TernaryOp::Addcmul>>(self, t1, t2, value);
}
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return dispatch::call<AddcOp<TernaryOp::Addcdiv>>(self, t1, t2, value);
}
Tensor clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return dispatch::call<ClampOp>(self, min, max);
}
Tensor clamp(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return dispatch::call<ClampOp>(self, min, max);
}
Tensor& clamp_out(Tensor& out, const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return dispatch::call<ClampOutOp>(out, self, min, max);
}
Tensor clamp_min(const Tensor& self, const Scalar& min) { return dispatch::call<ClampMinOp>(self, min); }
Tensor clamp_max(const Tensor& self, const Scalar& max) { return dispatch::call<ClampMaxOp>(self, max); }
Tensor clamp_min(const Tensor& self, const Tensor& min) { return clamp(self, min, std::nullopt); }
Tensor clamp_max(const Tensor& self, const Tensor& max) { return clamp(self, std::nullopt, max); }
Tensor max(const Tensor& self, const Tensor& other) { return maximum(self, other); }
Tensor min(const Tensor& self, const Tensor& other) { return minimum(self, other); }
Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) { return dispatch::call<WhereOp>(c, a, b); }
Tensor where(const Tensor& c, const Scalar& a, const Tensor& b) { return dispatch::call<WhereOp>(c, a, b); }
Tensor where(const Tensor& c, const Tensor& a, const Scalar& b) { return dispatch::call<WhereOp>(c, a, b); }
Tensor where(const Tensor& c, const Scalar& a, const Scalar& b) { return dispatch::call<WhereOp>(c, a, b); }
Tensor& where_out(Tensor& out, const Tensor& c, const Tensor& a, const Tensor& b) {
  return dispatch::call<WhereOutOp>(out, c, a, b);
}
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  return dispatch::call<MaskedFillOp>(self, mask, value);
}
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value) {
  return dispatch::call<MaskedFillOp>(self, mask, value);
}

// ---- Tensor methods -----------------------------------------------------------------------
Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const { return ember::add(*this, o, alpha); }
Tensor Tensor::add(const Scalar& o, const Scalar& alpha) const { return ember::add(*this, o, alpha); }
Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) const {
  return dispatch::call<AddInplaceOp>(mutable_self(), o, alpha);
}
Tensor& Tensor::add_(const Scalar& o, const Scalar& alpha) const {
  return dispatch::call<AddInplaceOp>(mutable_self(), o, alpha);
}
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const { return ember::sub(*this, o, alpha); }
Tensor Tensor::sub(const Scalar& o, const Scalar& alpha) const { return ember::sub(*this, o, alpha); }
Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) const {
  return dispatch::call<SubInplaceOp>(mutable_self(), o, alpha);
}
Tensor& Tensor::sub_(const Scalar& o, const Scalar& alpha) const {
  return dispatch::call<SubInplaceOp>(mutable_self(), o, alpha);
}
Tensor Tensor::mul(const Tensor& o) const { return ember::mul(*this, o); }
Tensor Tensor::mul(const Scalar& o) const { return ember::mul(*this, o); }
Tensor& Tensor::mul_(const Tensor& o) const { return dispatch::call<MulInplaceOp>(mutable_self(), o); }
Tensor& Tensor::mul_(const Scalar& o) const { return dispatch::call<MulInplaceOp>(mutable_self(), o); }
Tensor Tensor::div(const Tensor& o, std::optional<std::string_view> mode) const { return ember::div(*this, o, mode); }
Tensor Tensor::div(const Scalar& o, std::optional<std::string_view> mode) const { return ember::div(*this, o, mode); }
Tensor& Tensor::div_(const Tensor& o, std::optional<std::string_view> mode) const {
  return dispatch::call<DivInplaceOp>(mutable_self(), o, mode);
}
Tensor& Tensor::div_(const Scalar& o, std::optional<std::string_view> mode) const {
  return dispatch::call<DivInplaceOp>(mutable_self(), o, mode);
}
Tensor Tensor::remainder(const Tensor& o) const { return ember::remainder(*this, o); }
Tensor Tensor::remainder(const Scalar& o) const { return ember::remainder(*this, o); }
Tensor& Tensor::remainder_(const Tensor& o) const { return dispatch::call<RemainderInplaceOp>(mutable_self(), o); }
Tensor& Tensor::remainder_(const Scalar& o) const { return dispatch::call<RemainderInplaceOp>(mutable_self(), o); }
Tensor Tensor::fmod(const Tensor& o) const { return ember::fmod(*this, o); }
Tensor Tensor::fmod(const Scalar& o) const { return ember::fmod(*this, o); }
Tensor& Tensor::fmod_(const Tensor& o) const { return dispatch::call<FmodInplaceOp>(mutable_self(), o); }
Tensor& Tensor::fmod_(const Scalar& o) const { return dispatch::call<FmodInplaceOp>(mutable_self(), o); }
Tensor Tensor::floor_divide(const Tensor& o) const { return ember::floor_divide(*this, o); }
Tensor Tensor::floor_divide(const Scalar& o) const { return ember::floor_divide(*this, o); }
Tensor& Tensor::floor_divide_(const Tensor& o) const { return dispatch::call<FloorDivideInplaceOp>(mutable_self(), o); }
Tensor& Tensor::floor_divide_(const Scalar& o) const { return dispatch::call<FloorDivideInplaceOp>(mutable_self(), o); }
Tensor Tensor::pow(const Tensor& e) const { return ember::pow(*this, e); }
Tensor Tensor::pow(const Scalar& e) const { return ember::pow(*this, e); }
Tensor& Tensor::pow_(const Tensor& e) const { return dispatch::call<PowInplaceOp>(mutable_self(), e); }
Tensor& Tensor::pow_(const Scalar& e) const { return dispatch::call<PowInplaceOp>(mutable_self(), e); }
Tensor Tensor::minimum(const Tensor& o) const { return ember::minimum(*this, o); }
Tensor Tensor::maximum(const Tensor& o) const { return ember::maximum(*this, o); }
Tensor Tensor::atan2(const Tensor& o) const { return ember::atan2(*this, o); }
Tensor Tensor::lerp(const Tensor& end, const Scalar& w) const { return ember::lerp(*this, end, w); }
Tensor Tensor::lerp(const Tensor& end, const Tensor& w) const { return ember::lerp(*this, end, w); }
Tensor& Tensor::lerp_(const Tensor& end, const Scalar& w) const {
  return dispatch::call<LerpInplaceOp>(mutable_self(), end, w);
}
Tensor& Tensor::lerp_(const Tensor& end, const Tensor& w) const {
  return dispatch::call<LerpInplaceOp>(mutable_self(), end, w);
}
Tensor Tensor::clamp(const std::optional<Scalar>& min, const std::optional<Scalar>& max) const {
  return ember::clamp(*this, min, max);
}
Tensor Tensor::clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return ember::clamp(*this, min, max);
}
Tensor& Tensor::clamp_(const std::optional<Scalar>& min, const std::optional<Scalar>& max) const {
  return dispatch::call<ClampInplaceOp>(mutable_self(), min, max);
}
Tensor Tensor::clamp_min(const Scalar& min) const { return ember::clamp_min(*this, min); }
Tensor Tensor::clamp_max(const Scalar& max) const { return ember::clamp_max(*this, max); }
Tensor& Tensor::clamp_min_(const Scalar& min) const { return dispatch::call<ClampMinInplaceOp>(mutable_self(), min); }
Tensor& Tensor::clamp_max_(const Scalar& max) const { return dispatch::call<ClampMaxInplaceOp>(mutable_self(), max); }
Tensor& Tensor::clamp_(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return dispatch::call<ClampInplaceOp>(mutable_self(), min, max);
}
Tensor Tensor::clamp_min(const Tensor& min) const { return ember::clamp_min(*this, min); }
Tensor Tensor::clamp_max(const Tensor& max) const { return ember::clamp_max(*this, max); }
Tensor& Tensor::clamp_min_(const Tensor& min) const { return clamp_(min, std::nullopt); }
Tensor& Tensor::clamp_max_(const Tensor& max) const { return clamp_(std::nullopt, max); }
Tensor Tensor::max(const Tensor& other) const { return ember::maximum(*this, other); }
Tensor Tensor::min(const Tensor& other) const { return ember::minimum(*this, other); }
Tensor Tensor::where(const Tensor& condition, const Tensor& other) const {
  return ember::where(condition, *this, other);
}
Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const {
  return ember::masked_fill(*this, mask, value);
}
Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value) const {
  return ember::masked_fill(*this, mask, value);
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) const {
  return dispatch::call<MaskedFillInplaceOp>(mutable_self(), mask, value);
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& value) const {
  return dispatch::call<MaskedFillInplaceOp>(mutable_self(), mask, value);
}
Tensor Tensor::addcmul(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return ember::addcmul(*this, t1, t2, value);
}
Tensor Tensor::addcdiv(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return ember::addcdiv(*this, t1, t2, value);
}
Tensor& Tensor::addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return dispatch::call<AddcInplaceOp<TernaryOp::Addcmul>>(mutable_self(), t1, t2, value);
}
Tensor& Tensor::addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return dispatch::call<AddcInplaceOp<TernaryOp::Addcdiv>>(mutable_self(), t1, t2, value);
}

}  // namespace ember
