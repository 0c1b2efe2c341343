// Helpers shared by the pointwise op files (pointwise.cpp, pointwise_unary.cpp,
// pointwise_compare.cpp): building the iterator of an op, PyTorch's dtype errors, and the
// version bump of written-to tensors.
#pragma once
#include <optional>

#include "core/tensor_iterator.h"
#include "kernels/cpu/pointwise.h"

namespace ember::pointwise {

inline ScalarType dtype_of(const Tensor& t) { return t.dtype(); }
inline ScalarType dtype_of(const Scalar& s) { return s.type(); }

// PyTorch's message for a dtype an op has no kernel for: "abs: \"abs\" not implemented for 'Bool'".
[[noreturn]] inline void not_implemented(const char* op, ScalarType t) {
  detail::fail(op, "\"", op, "\" not implemented for '", t, "'");
}

// In-place and out= ops bump the version counter of the tensor they write.
inline void bump_version(const Tensor& written) {
  if (written.defined()) written.impl()->storage()->bump_version();
}

// How an op turns its inputs' dtypes into the dtype it computes in.
struct DtypeRule {
  bool int_to_float = false;              // integer and bool inputs compute in the default float dtype
  std::optional<ScalarType> compute = {};  // fixed compute dtype (inputs are cast to it)
};

// out = op(self). `out` is undefined (allocate), an out= tensor (resized if needed) or self
// (in-place: keeps its shape, and the result must be castable to its dtype).
inline Tensor unary_into(const char* name, const Tensor& out, const Tensor& self, kernels::UnaryOp op,
                         const kernels::UnaryParams& params, bool inplace, DtypeRule rule = {}) {
  TensorIteratorConfig config(name);
  config.add_output(out).add_input(self);
  if (inplace) config.no_resize_outputs();
  if (rule.int_to_float) config.promote_integer_inputs_to_float();
  if (rule.compute) config.common_dtype(*rule.compute);
  TensorIterator iter(config);
  kernels::unary_kernel(iter, op, params);
  bump_version(out);
  return iter.take_output();
}

}  // namespace ember::pointwise
