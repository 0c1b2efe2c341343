// In-place ops and views in the graph: rebasing a written tensor's history (internal to src/autograd).
#pragma once
#include <memory>

#include "autograd/variable.h"

namespace ember::autograd {

// Makes `fn` (the node of an in-place op, its edge `self_edge` being self's old history, SIZE_MAX
// when self gets no gradient) the history of `self`. For a view, the base's history becomes
// CopySlices(base's old history, fn) and the view's grad_fn an AsStridedBackward0 onto it.
void rebase_history(const Tensor& self, const std::shared_ptr<Node>& fn, size_t self_edge);

}  // namespace ember::autograd
