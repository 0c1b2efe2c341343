// Derivatives of the in-place ops that have no functional twin to borrow one from (see layer.h):
// an in-place struct names one with `using derivative_rule = autograd::XxxRule;`.
#pragma once
#include <optional>
#include <vector>

#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/pointwise.h"

namespace ember::autograd {

// CopyBackwards -- self: zeros; src: grad (the engine sums it to src's shape and casts it)
struct CopyRule {
  static void derivative(Derivative& d, const Tensor& self, const Tensor& src) {
    d.name("CopyBackwards");
    d.grad(self, [](const auto& c) { return zeros_like(c.grad()); });
    d.grad(src, [](const auto& c) { return c.grad(); });
  }
};

// FillBackward0 -- self: zeros
struct FillRule {
  static void derivative(Derivative& d, const Tensor& self, const Scalar&) {
    d.name("FillBackward0");
    d.grad(self, [](const auto& c) { return zeros_like(c.grad()); });
  }
};

// MaskedFillBackward0 / 1 -- self: grad.masked_fill(mask, 0); value: the sum of grad where mask
struct MaskedFillRule {
  template <class V>
  static void derivative(Derivative& d, const Tensor& self, const Tensor& mask, const V& value) {
    d.name(is_tensor<V> ? "MaskedFillBackward1" : "MaskedFillBackward0");
    d.grad(self, [mask](const auto& c) { return c.grad().masked_fill(mask, 0); });
    d.grad(value, [mask](const auto& c) { return (c.grad() - c.grad().masked_fill(mask, 0)).sum(); });
  }
};

// IndexPutBackward0 -- self: accumulate ? grad : grad with the written elements zeroed;
// values: grad at the indices (the engine sums it to values' shape)
struct IndexPutRule {
  static void derivative(Derivative& d, const Tensor& self, ArrayRef<std::optional<Tensor>> indices,
                         const Tensor& values, bool accumulate) {
    d.name("IndexPutBackward0");
    const std::vector<std::optional<Tensor>> idx(indices.begin(), indices.end());
    d.grad(self, [idx, accumulate](const auto& c) {
      if (accumulate) return c.grad();
      Tensor g = c.grad().clone();
      index_put_(g, idx, zeros({}, TensorOptions().dtype(g.dtype())), false);
      return g;
    });
    d.grad(values, [idx](const auto& c) { return index(c.grad(), idx); });
  }
};

}  // namespace ember::autograd
