// Helpers shared by the view, indexing and joining ops.
#pragma once
#include "ember/shape.h"
#include "ember/tensor.h"

namespace ember {
namespace autograd {
class Derivative;
}  // namespace autograd

// The quantizer of a view of a quantized tensor: base's, with a per-channel axis moved to the
// view's dim of the same size and stride (ember::Error when the view does not keep that dim).
IntrusivePtr<Quantizer> view_quantizer(const Tensor& base, IntArrayRef sizes, IntArrayRef strides);
// A view of base's storage with the given geometry (no checks: callers keep it in bounds). It
// keeps base's conjugate bit and quantization parameters.
inline Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  auto impl = IntrusivePtr<TensorImpl>::make(base.impl()->storage(), base.dtype(), sizes, strides, offset);
  if (base.impl()->is_conj()) impl->set_conj(true);
  if (base.impl()->is_quantized()) impl->set_quantizer(view_quantizer(base, sizes, strides));
  return Tensor(std::move(impl));
}
// A contiguous tensor's elements in another shape: an alias for a kernel to write, or a result
// that is a fresh tensor and not a view (a view made by dispatch costs autograd's bookkeeping, and
// PyTorch's reductions, kthvalue and copying reshapes return no views).
inline Tensor contiguous_alias(const Tensor& t, IntArrayRef sizes) {
  return make_view(t, sizes, contiguous_strides(sizes), t.storage_offset());
}
// A view of the same elements with the conjugate bit set to `conj`.
inline Tensor with_conj_bit(const Tensor& t, bool conj) {
  auto impl = IntrusivePtr<TensorImpl>::make(t.impl()->storage(), t.dtype(), t.sizes(), t.strides(), t.storage_offset());
  impl->set_conj(conj);
  return Tensor(std::move(impl));
}

// PyTorch's assert_no_internal_overlap: a written tensor whose elements share memory (a stride 0
// over more than one element) is refused.
void assert_no_internal_overlap(const Tensor& t, const char* op);
// PyTorch's assert_no_overlap: a written tensor and an input that are both dense and share
// memory are refused (the op would read what it already overwrote).
void assert_no_overlap(const Tensor& written, const Tensor& input, const char* op);

// The derivative of a (values, indices) op (max/min along a dim, sort, topk, kthvalue), its node
// named `node` (MaxBackward0, SortBackward0, ...) -- self: value_selecting_reduction_backward(grad,
// dim, indices, self.sizes(), keepdim): the values' gradient goes to the positions the indices name.
void value_selecting_derivative(autograd::Derivative& d, const Tensor& self, int64_t dim, bool keepdim,
                                const char* node);
// The derivative of a reduction of all elements to one of them (max(), min(), median(),
// nanmedian()), its node named `node` -- self: evenly_distribute_backward(grad, self, result): the
// elements equal to the result (NaN to a NaN result) share the gradient evenly.
void evenly_distributed_derivative(autograd::Derivative& d, const Tensor& self, const char* node);

}  // namespace ember
