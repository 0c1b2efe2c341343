// Copy with dtype conversion (iterator: one output, one input of any dtypes) and fill.
#pragma once
#include "core/tensor_iterator.h"

namespace ember::kernels {
void copy_kernel(TensorIterator& iter);
void fill_kernel(TensorIterator& iter, const Scalar& value);
}  // namespace ember::kernels
