// Copy with dtype conversion (iterator: one output, one input of any dtypes) and fill.
#pragma once
#include "core/tensor_iterator.h"

namespace ember::kernels {
void copy_kernel(TensorIterator& iter);
void fill_kernel(TensorIterator& iter, const Scalar& value);
// n dense float16 or bfloat16 values (`from`) widened to float32, vectorized (F16C for float16).
void widen_to_float(ScalarType from, float* out, const void* in, int64_t n);
// n float32 values rounded to float16 or bfloat16 (`to`), vectorized.
void narrow_from_float(ScalarType to, void* out, const float* in, int64_t n);
// `rows` rows of n words of es bytes (1, 2, 4 or 8) where one side is contiguous along the rows
// and the other across them (iterator row-loop arguments, data[0] the output): a transpose, in
// tiles, 8 x 8 (4 x 4) blocks of words in registers.
void transposed_copy(int64_t es, char** data, const int64_t* strides, int64_t n, int64_t rows, const int64_t* outer);
}  // namespace ember::kernels
