// Helpers shared by the view, indexing and joining ops.
#pragma once
#include "ember/tensor.h"

namespace ember {

// A view of base's storage with the given geometry (no checks: callers keep it in bounds).
inline Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  return Tensor(IntrusivePtr<TensorImpl>::make(base.impl()->storage(), base.dtype(), sizes, strides, offset));
}

// PyTorch's assert_no_internal_overlap: a written tensor whose elements share memory (a stride 0
// over more than one element) is refused.
void assert_no_internal_overlap(const Tensor& t, const char* op);
// PyTorch's assert_no_overlap: a written tensor and an input that are both dense and share
// memory are refused (the op would read what it already overwrote).
void assert_no_overlap(const Tensor& written, const Tensor& input, const char* op);

}  // namespace ember
