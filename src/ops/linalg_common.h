// What the torch.linalg files share: argument checks worded as PyTorch's, LAPACK's info turned
// into PyTorch's errors, batches of matrices copied to column-major buffers, and one autograd
// node joining a decomposition's several outputs to its inputs (backward written with Ember ops,
// so it records when create_graph asks and double backward works).
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "autograd/variable.h"
#include "ember/complex.h"
#include "ember/autograd.h"
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
bool any_requires_grad(const std::vector<Tensor>& inputs);

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

// A multi-output linalg node: one per op call, backward(grads, saved) -> one gradient per input
// (grads of outputs that got none are undefined).
using BackwardFn = std::function<variable_list(const variable_list& grads, const variable_list& saved)>;
struct SavedSpec {
  Tensor tensor;
  bool is_output;
};
// Joins the differentiable `outputs` (undefined entries and integer ones are skipped, keeping
// their position as output numbers) to `inputs` when an input requires grad under grad mode.
void record(const char* node_name, const char* op, const std::vector<Tensor>& inputs,
            const std::vector<Tensor>& outputs, const std::vector<SavedSpec>& saved, BackwardFn backward);

// Zeros of `like`'s shape when g is undefined.
Tensor or_zeros(const Tensor& g, const Tensor& like);
// Sums a broadcast gradient back to `sizes`.
Tensor reduce_to(const Tensor& g, IntArrayRef sizes);
// Batch-broadcast A (..., m, k) and B (..., k2, n) to common batch dims.
std::pair<Tensor, Tensor> broadcast_batch(const char* op, const Tensor& A, const Tensor& B);

}  // namespace ember::linalg_detail
