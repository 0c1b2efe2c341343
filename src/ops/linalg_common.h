// What the torch.linalg files share: argument checks worded as PyTorch's, LAPACK's info turned
// into PyTorch's errors, batches of matrices copied to column-major buffers, and the recording of
// a decomposition's derivative on the layer's node (backward written with Ember ops, so it
// records when create_graph asks and double backward works).
#pragma once
#include <array>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "autograd/layer.h"
#include "ember/autograd.h"
#include "ember/complex.h"
#include "ember/factory.h"
#include "ember/linalg.h"
#include "ember/linalg_functions.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/shape.h"

namespace ember::linalg_detail {

using autograd::variable_list;

// "linalg.inv: Expected a floating point or complex tensor as input. Got Long" (float32, float64,
// complex64 and complex128 pass)
void check_floating_or_complex(const char* op, const Tensor& A, const char* what = "input");
// "linalg.inv: The input tensor A must have at least 2 dimensions."
void check_matrix(const char* op, const Tensor& A, const char* name = "A");
// "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices"
void check_square(const char* op, const Tensor& A, const char* name = "A");

// Product of the leading (batch) dims of a (..., m, n) tensor.
int64_t batch_count(const Tensor& A);
// The batch dims of A.
DimVector batch_shape(const Tensor& A);
DimVector concat(IntArrayRef a, IntArrayRef b);

// A new (..., m, n) tensor holding A's values with each matrix stored column-major, one after
// another (Fortran strides, as PyTorch's LAPACK results): what LAPACK reads and writes in place.
Tensor colmajor_copy(const Tensor& A);
// An empty batch of column-major (..., rows, cols) matrices.
Tensor colmajor_empty(IntArrayRef batch, int64_t rows, int64_t cols, ScalarType dtype);

// LAPACK's info per batch element turned into PyTorch's error for `op` ("linalg.inv",
// "linalg.cholesky", ...), naming the batch element when the input is batched.
enum class InfoKind { kSingularInverse, kSingularSolve, kNotPositiveDefinite, kEigConverge, kSvdConverge, kLuFactor,
                      kLstsqRank };
void check_infos(const char* op, const Tensor& infos, bool batched, InfoKind kind);

// Runs f(i) for each batch element, across threads when matrices are small.
void for_each_matrix(int64_t batch, int64_t work_per_matrix, const std::function<void(int64_t)>& f);

// Whether grad mode is on and some input requires grad.
bool any_requires_grad(std::initializer_list<Tensor> inputs);

// Visits the element type of a float32/float64/complex64/complex128 dtype: f(T{}).
template <class F>
void on_field(ScalarType t, F&& f) {
  switch (t) {
    case kDouble: return f(double{});
    case kComplexFloat: return f(complex<float>{});
    case kComplexDouble: return f(complex<double>{});
    default: return f(float{});
  }
}

// When grad mode is on and one of `inputs` requires grad, joins the op's `results` (integer ones,
// such as info and pivots, get no history) to the inputs by one node of the derivative layer:
// `declare(d)` names it and gives its formulas, as an op struct's `derivative` does.
template <size_t N, class F>
void record(const char* op, std::initializer_list<Tensor> inputs, const std::array<Tensor, N>& results, F&& declare) {
  if (!any_requires_grad(inputs)) return;
  autograd::Derivative d(results.data(), N, op, /*inplace=*/false, inputs.size());
  declare(d);
  d.finish();
}

// Zeros of `like`'s shape when g is undefined.
Tensor or_zeros(const Tensor& g, const Tensor& like);
// Sums a broadcast gradient back to `sizes`.
Tensor reduce_to(const Tensor& g, IntArrayRef sizes);
// Batch-broadcast A (..., m, k) and B (..., k2, n) to common batch dims.
std::pair<Tensor, Tensor> broadcast_batch(const char* op, const Tensor& A, const Tensor& B);

}  // namespace ember::linalg_detail
