// Pointwise kernels. Each takes a built TensorIterator (outputs first, then inputs, all in the
// common dtype unless noted) and the op to apply. Float dtypes run vectorized with Highway
// (Half/BFloat16 computed in float32); integer and bool dtypes run plain loops. Argument checks
// belong to the ops, including the one that depends on the data (check_no_zero_divisor).
#pragma once
#include <optional>

#include "core/tensor_iterator.h"

namespace ember::kernels {

// The Scalar parameters of an op, as named in its comment below (absent: the op's default).
struct UnaryParams {
  std::optional<Scalar> a, b, c;
};

// out = f(a, b); operands: out, a, b.
enum class BinaryOp : uint8_t {
  Add,  // a + alpha * b
  Sub,  // a - alpha * b
  Mul,
  Div,
  DivTrunc,   // trunc(a / b); integers: ZeroDivisionError
  DivFloor,   // floor(a / b) (Python's //); integers: ZeroDivisionError
  Remainder,  // Python's %: the sign of b
  Fmod,       // C's fmod: the sign of a
  Pow,
  Minimum,  // NaN-propagating
  Maximum,
  Atan2,
  Copysign,  // |a| with the sign bit of b
  Xlogy,     // a * log(b), 0 where a is 0 and b is not NaN (floats only)
  Fmax,      // the larger, a NaN losing to a number; a tie takes a
  Fmin,
  Hypot,     // sqrt(a^2 + b^2) without overflow (floats only)
  BitwiseAnd,  // integers and bool only
  BitwiseOr,
  BitwiseXor,
  Lerp,  // lerp(a, b, alpha) for a Scalar weight, kept in double until the compute type
  ThresholdBackward,  // b <= alpha ? 0 : a (a: the gradient, b: the forward input or result)
  GeluBackward,       // a (Phi(b) + b phi(b)): exact gelu's gradient (a: the gradient, b: the input; floats only)
  GeluTanhBackward,   // the gradient of gelu's tanh form, PyTorch's formula (floats only)
  HardswishBackward,    // 0 for b < -3, a (b / 3 + 1/2) up to 3, a above (floats only)
  HardsigmoidBackward,  // a / 6 strictly inside (-3, 3), else 0 (floats only)
  SiluBackward,         // a s (1 + b (1 - s)), s = sigmoid(b) (floats only)
  SigmoidBackward,      // a (1 - b) b: sigmoid's gradient from its result b (floats only)
  TanhBackward,         // a (1 - b b): tanh's gradient from its result b (floats only)
  LeakyReluBackward,    // b > 0 ? a : a * alpha (floats only)
  LogSigmoidBackward,   // a sigmoid(-b), from z = e^-|b| as PyTorch's kernel (floats only)
  // The ops below take params (absent: 1) instead of alpha; floats only.
  HardtanhBackward,     // lo < b < hi ? a : 0; lo, hi: params.a, params.b
  EluBackward,          // elu's gradient from its input b (params: alpha, scale, input_scale)
  EluBackwardOfResult,  // elu's gradient from its result b (alpha >= 0)
};
void binary_kernel(TensorIterator& iter, BinaryOp op, const Scalar& alpha = 1, const UnaryParams& params = {});

// Raises PyTorch's "ZeroDivisionError" (prefixed by `op`) if operand `arg` of an integer iterator
// holds a zero. Integer division ops call it before the kernel, so nothing is half-written.
void check_no_zero_divisor(const TensorIterator& iter, int arg, const char* op);

// out = f(x); operands: out, x. Parameters as named in the comments (`a`, `b`, `c` of UnaryParams).
enum class UnaryOp : uint8_t {
  Abs, Neg, Sign, Exp, Exp2, Expm1, Log, Log2, Log10, Log1p, Sqrt, Rsqrt, Sin, Cos, Tan, Asin, Acos, Atan, Tanh,
  Sinh, Cosh, Asinh, Acosh, Atanh,
  Sigmoid, Relu, Silu, Hardswish, Hardsigmoid, Erf, Erfc, Erfinv, Floor, Ceil, Round, Trunc, Frac,
  Reciprocal, Square, BitwiseNot, Digamma,
  Trigamma,    // polygamma(1, x)
  LogSigmoid,  // min(x, 0) - log1p(e^-|x|)
  Gelu,        // exact (erf)
  GeluTanh,    // tanh approximation
  LeakyRelu,   // a: negative_slope
  Elu,         // a: alpha, b: scale, c: input_scale
  Softplus,    // a: beta, b: threshold
  Clamp,       // a: min, b: max (either may be absent; a NaN bound makes every element NaN)
  PowScalar,   // a: exponent
  NanToNum,    // a: nan, b: posinf, c: neginf (absent: 0, the dtype's max, the dtype's lowest)
};
void unary_kernel(TensorIterator& iter, UnaryOp op, const UnaryParams& params = {});
// The Highway target (HWY_AVX2, HWY_AVX3, ...) the kernels' dynamic dispatch runs now.
int64_t dispatched_target();

// out = f(a, b, c); operands: out, a, b, c.
enum class TernaryOp : uint8_t {
  Lerp,     // a + c * (b - a), computed from the nearer end
  Addcmul,  // a + value * b * c
  Addcdiv,  // a + value * b / c (floats only)
  Clamp,    // min(max(a, b), c), NaN-propagating
  Atan2Backward,  // value * a * c / (b^2 + c^2): atan2(y, x)'s gradient for y (a: grad, b: y, c: x,
                  // value 1) and for x (b: x, c: y, value -1), in one pass (floats only)
};
void ternary_kernel(TensorIterator& iter, TernaryOp op, const Scalar& value = 1);

// Bool-valued ops; output Bool, inputs in the common dtype (binary) or their own (unary).
enum class PredicateOp : uint8_t {
  Eq, Ne, Lt, Le, Gt, Ge, LogicalAnd, LogicalOr, LogicalXor,  // binary
  LogicalNot, IsNan, IsInf, IsFinite,                         // unary
};
void predicate_kernel(TensorIterator& iter, PredicateOp op);

// out = cond ? a : b; operands: out, cond (Bool), a, b (both in out's dtype; either may be a
// broadcast 0-dim tensor). Values are copied as bits.
void where_kernel(TensorIterator& iter);

}  // namespace ember::kernels
