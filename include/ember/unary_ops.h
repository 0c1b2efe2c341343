// The unary math ops that are also Tensor methods (`t.exp()`, `t.exp_()`), listed once: X(name)
// is applied to each by the free functions' declarations (pointwise.h) and the methods'
// declarations (tensor.h) and definitions (src/ops/pointwise_unary.cpp).
#pragma once

#define EMBER_FOR_EACH_UNARY_METHOD(X) \
  X(abs)                               \
  X(neg)                               \
  X(sign)                              \
  X(exp)                               \
  X(exp2)                              \
  X(expm1)                             \
  X(log)                               \
  X(log2)                              \
  X(log10)                             \
  X(log1p)                             \
  X(sqrt)                              \
  X(rsqrt)                             \
  X(sin)                               \
  X(cos)                               \
  X(tan)                               \
  X(asin)                              \
  X(acos)                              \
  X(atan)                              \
  X(tanh)                              \
  X(sinh)                              \
  X(cosh)                              \
  X(asinh)                             \
  X(acosh)                             \
  X(atanh)                             \
  X(sigmoid)                           \
  X(relu)                              \
  X(erf)                               \
  X(erfc)                              \
  X(erfinv)                            \
  X(floor)                             \
  X(ceil)                              \
  X(round)                             \
  X(trunc)                             \
  X(frac)                              \
  X(reciprocal)                        \
  X(square)

// libtorch's unary math that Ember composes from the ops above (src/ops/aten_tail.cpp), so each
// has autograd through its composition: X(name) gives name(t), name_(t) and the two methods.
#define EMBER_FOR_EACH_COMPOSITE_UNARY(X) \
  X(arccos)                               \
  X(arcsin)                               \
  X(arctan)                               \
  X(arccosh)                              \
  X(arcsinh)                              \
  X(arctanh)                              \
  X(sgn)                                  \
  X(deg2rad)                              \
  X(rad2deg)                              \
  X(sinc)                                 \
  X(fix)                                  \
  X(absolute)                             \
  X(negative)
