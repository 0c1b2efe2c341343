// The backward engine's internals shared within src/autograd.
#pragma once
#include <memory>

#include "ember/autograd.h"

namespace ember::autograd {

// The node that accumulates into a leaf's .grad (kept alive by the edges that point to it).
std::shared_ptr<Node> make_accumulate_grad(const Tensor& leaf);

}  // namespace ember::autograd
