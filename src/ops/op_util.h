// Small rules several op files share.
#pragma once
#include <limits>
#include <numbers>

#include "ember/aten_tail.h"
#include "ember/error.h"
#include "ember/tensor.h"

namespace ember::op_util {

inline constexpr double kPi = std::numbers::pi;
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Float-valued ops compute integer and bool inputs in the default float dtype, as PyTorch does.
inline Tensor to_float(const Tensor& t) { return is_floating_type(t.dtype()) ? t : t.to(get_default_dtype()); }

// The layout an op's output (or an input's gradient) takes: channels_last when the 4-D or 5-D
// tensor is, contiguous otherwise.
inline MemoryFormat layout_of(const Tensor& t) {
  return t.dim() == 4 || t.dim() == 5 ? t.suggest_memory_format() : MemoryFormat::Contiguous;
}

// grad * s, skipping the product when s is 1 (PyTorch's maybe_multiply, in derivative formulas).
inline Tensor maybe_multiply(const Tensor& grad, const Scalar& s) { return s.equal(1) ? grad : grad * s; }

// The in-place form of a composed op: the result is written back into self, whose dtype must
// be able to hold it (PyTorch: "result type Float can't be cast to the desired output type Long").
inline Tensor& write_back(const char* op, Tensor& self, const Tensor& result) {
  EMBER_CHECK(can_cast(result.dtype(), self.dtype()), op, "result type ", result.dtype(),
              " can't be cast to the desired output type ", self.dtype());
  return self.copy_(result);
}

// The operand of a composed in-place op: a copy when autograd records, because the composition
// may save its input for backward and the copy_ into self would then invalidate it.
inline Tensor operand(const Tensor& self) { return self.requires_grad() ? self.clone() : self; }

}  // namespace ember::op_util
