// The backward engine's internals shared within src/autograd.
#pragma once
#include <cstdint>
#include <memory>

#include "ember/autograd.h"

namespace ember::autograd {

// The node that accumulates into a leaf's .grad (kept alive by the edges that point to it).
std::shared_ptr<Node> make_accumulate_grad(const Tensor& leaf);

// The sequence number the next node made on this thread gets (PyTorch's
// at::sequence_number::peek): an op that records a node between two peeks recorded this one.
uint64_t peek_sequence_nr();

}  // namespace ember::autograd
