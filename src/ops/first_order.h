// Derivatives computed by fused backward kernels are not differentiable themselves. Under
// create_graph, a gradient that would need its own gradient is refused rather than returned
// without a graph (its second derivative would silently be zero).
#pragma once
#include <initializer_list>

#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/tensor.h"

namespace ember {

// `used`: the tensors the gradient is a function of (the incoming gradient, saved inputs).
inline void check_first_order(const char* node, std::initializer_list<Tensor> used) {
  if (!GradMode::is_enabled()) return;
  for (const Tensor& t : used)
    EMBER_CHECK(!(t.defined() && t.requires_grad()), node, "double backward of ", node, " is not implemented");
}

}  // namespace ember
