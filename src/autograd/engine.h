// The backward engine's internals shared within src/autograd.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

#include "ember/autograd.h"

namespace ember::autograd {

// The node that accumulates into a leaf's .grad (kept alive by the edges that point to it).
std::shared_ptr<Node> make_accumulate_grad(const Tensor& leaf);

// PyTorch's Tensor.register_post_accumulate_grad_hook (the AccumulateGrad post hook that
// DistributedDataParallel's reducer is built on): fn(leaf) runs each time a backward has
// accumulated into leaf.grad. Such a leaf is accumulated as soon as its gradient is complete,
// not after the whole graph, so fn can act on it while backward goes on (an error later in that
// backward leaves its .grad updated, as PyTorch's). Returns the handle remove_... takes; a
// removed hook leaves an empty slot. Public through src/ only: a method on Tensor would change
// ember/tensor.h, which the whole tree includes.
unsigned register_post_accumulate_grad_hook(const Tensor& leaf, std::function<void(const Tensor&)> fn);
void remove_post_accumulate_grad_hook(const Tensor& leaf, unsigned handle);

// The sequence number the next node made on this thread gets (PyTorch's
// at::sequence_number::peek): an op that records a node between two peeks recorded this one.
uint64_t peek_sequence_nr();

}  // namespace ember::autograd
