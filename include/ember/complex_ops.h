// Complex tensors (docs/complex.md): the parts as views, conjugate views, and building complex
// tensors from real ones. The element type is ember::complex<T> (ember/complex.h).
#pragma once
#include "ember/tensor.h"

namespace ember {

// A real view of a complex tensor: shape + [2], strides doubled (PyTorch's view_as_real).
Tensor view_as_real(const Tensor& self);
// A complex view of a real float32/float64 tensor whose last dim has size 2 and stride 1.
Tensor view_as_complex(const Tensor& self);
// Views of the real and imaginary parts (real of a real tensor is itself; imag raises).
Tensor real(const Tensor& self);
Tensor imag(const Tensor& self);
// conj: an O(1) view with the conjugate bit (self for real tensors); resolve_conj materializes
// it (self when the bit is clear; declared in aten_tail2.h); conj_physical computes.
Tensor conj(const Tensor& self);
Tensor conj_physical(const Tensor& self);
Tensor& conj_physical_(Tensor& self);
// The argument: atan2(imag, real) for complex, 0 or pi by sign for real (PyTorch's angle).
Tensor angle(const Tensor& self);
// abs * (cos(angle) + i sin(angle)); both float32 or both float64.
Tensor polar(const Tensor& abs, const Tensor& angle);
// real + i imag (torch::complex; ember::complex is the element type).
Tensor make_complex(const Tensor& real, const Tensor& imag);

}  // namespace ember
