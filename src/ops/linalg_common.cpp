// Shared pieces of the torch.linalg files (see linalg_common.h).
#include "ops/linalg_common.h"

#include "core/parallel.h"

namespace ember::linalg_detail {

void check_floating_or_complex(const char* op, const Tensor& A, const char* what) {
  const ScalarType t = A.dtype();
  if (is_complex_type(t)) return;
  EMBER_CHECK(is_floating_type(t), op, "Expected a floating point or complex tensor as ", what, ". Got ", t);
  EMBER_CHECK(t == kFloat || t == kDouble, op, "Low precision dtypes not supported. Got ", t);
}

void check_matrix(const char* op, const Tensor& A, const char* name) {
  EMBER_CHECK(A.dim() >= 2, op, "The input tensor ", name, " must have at least 2 dimensions.");
}

void check_square(const char* op, const Tensor& A, const char* name) {
  check_matrix(op, A, name);
  EMBER_CHECK(A.size(-1) == A.size(-2), op, name, " must be batches of square matrices, but they are ", A.size(-2),
              " by ", A.size(-1), " matrices");
}

int64_t batch_count(const Tensor& A) {
  int64_t b = 1;
  for (int64_t d = 0; d + 2 < A.dim(); ++d) b *= A.size(d);
  return b;
}

DimVector batch_shape(const Tensor& A) {
  DimVector r;
  for (int64_t d = 0; d + 2 < A.dim(); ++d) r.push_back(A.size(d));
  return r;
}

DimVector concat(IntArrayRef a, IntArrayRef b) {
  DimVector r(a);
  for (int64_t v : b) r.push_back(v);
  return r;
}

Tensor colmajor_empty(IntArrayRef batch, int64_t rows, int64_t cols, ScalarType dtype) {
  const DimVector sizes = concat(batch, {rows, cols});
  DimVector strides(sizes.size(), 0);
  int64_t stride = 1;
  if (!sizes.empty()) {
    strides[sizes.size() - 2] = 1;
    strides[sizes.size() - 1] = std::max<int64_t>(rows, 1);
    stride = rows * cols;
  }
  for (int64_t d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
    strides[d] = std::max<int64_t>(stride, 1);
    stride *= batch[d];
  }
  return make_empty_strided(sizes, strides, dtype);
}

namespace {
// Row-major matrices transposed into column-major ones by a blocked loop: the generic strided
// copy costs more than a small factorization itself, and a good part of a large one.
template <class T>
void transpose_batch(const T* src, T* dst, int64_t batch, int64_t m, int64_t n) {
  constexpr int64_t kBlock = 32;
  const auto one = [&](int64_t b) {
    const T* s = src + b * m * n;
    T* d = dst + b * m * n;
    for (int64_t i0 = 0; i0 < m; i0 += kBlock)
      for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
        const int64_t i1 = std::min(m, i0 + kBlock), j1 = std::min(n, j0 + kBlock);
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t j = j0; j < j1; ++j) d[j * m + i] = s[i * n + j];
      }
  };
  if (batch == 1) return one(0);
  parallel_for(0, batch, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, m * n)), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) one(b);
  });
}
}  // namespace

Tensor colmajor_copy(const Tensor& A) {
  Tensor out = colmajor_empty(batch_shape(A), A.size(-2), A.size(-1), A.dtype());
  const int64_t m = A.size(-2), n = A.size(-1);
  const ScalarType t = A.dtype();
  if (A.is_contiguous() && !A.is_conj() && A.numel() > 0 &&
      (t == kFloat || t == kDouble || t == kComplexFloat || t == kComplexDouble)) {
    const int64_t batch = A.numel() / (m * n);
    on_field(t, [&](auto z) {
      using T = decltype(z);
      transpose_batch(A.data_ptr<T>(), out.data_ptr<T>(), batch, m, n);
    });
    return out;
  }
  out.copy_(A);
  return out;
}

void check_infos(const char* op, const Tensor& infos, bool batched, InfoKind kind) {
  const Tensor flat = infos.contiguous();
  const int32_t* p = flat.data_ptr<int32_t>();
  for (int64_t i = 0; i < flat.numel(); ++i) {
    const int32_t info = p[i];
    if (info == 0) continue;
    std::string where = batched ? "(Batch element " + std::to_string(i) + "): " : "";
    EMBER_CHECK(info > 0, op, where, "Argument ", -info, " has illegal value. Most certainly there is a bug in the "
                "implementation calling the backend library.");
    switch (kind) {
      case InfoKind::kSingularInverse:
        EMBER_CHECK(false, op, where, "The diagonal element ", info,
                    " is zero, the inversion could not be completed because the input matrix is singular.");
      case InfoKind::kSingularSolve:
        EMBER_CHECK(false, op, where, "The solver failed because the input matrix is singular.");
      case InfoKind::kNotPositiveDefinite:
        EMBER_CHECK(false, op, where,
                    "The factorization could not be completed because the input is not positive-definite (the "
                    "leading minor of order ", info, " is not positive-definite).");
      case InfoKind::kEigConverge:
        EMBER_CHECK(false, op, where,
                    "The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
                    "repeated eigenvalues (error code: ", info, ").");
      case InfoKind::kSvdConverge:
        EMBER_CHECK(false, op, where,
                    "The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
                    "repeated singular values (error code: ", info, ").");
      case InfoKind::kLuFactor:
        EMBER_CHECK(false, op, where, "U[", info, ",", info,
                    "] is zero and using it on lu_solve would result in a division by zero. If you still want to "
                    "perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, "
                    "pivot)");
      case InfoKind::kLstsqRank:
        EMBER_CHECK(false, op, where,
                    "The least squares solution could not be computed because the input matrix does not have full "
                    "rank (error code: ", info, ").");
    }
  }
}

void for_each_matrix(int64_t batch, int64_t work_per_matrix, const std::function<void(int64_t)>& f) {
  // LAPACK threads large matrices itself; small ones are spread over the batch.
  if (batch <= 1 || work_per_matrix > 64 * 64 * 64) {
    for (int64_t i = 0; i < batch; ++i) f(i);
    return;
  }
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, work_per_matrix));
  parallel_for(0, batch, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) f(i);
  });
}

bool any_requires_grad(std::initializer_list<Tensor> inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

Tensor or_zeros(const Tensor& g, const Tensor& like) { return g.defined() ? g : zeros_like(like); }

Tensor reduce_to(const Tensor& g, IntArrayRef sizes) {
  if (!g.defined() || g.sizes().equals(sizes)) return g;
  return autograd::sum_to(g, sizes);
}

std::pair<Tensor, Tensor> broadcast_batch(const char* op, const Tensor& A, const Tensor& B) {
  const DimVector ba = batch_shape(A), bb = batch_shape(B);
  if (ba.size() == bb.size() && IntArrayRef(ba).equals(bb)) return {A, B};
  DimVector batch;
  try {
    batch = infer_size(ba, bb);
  } catch (const Error& e) {
    throw Error(std::string(op) + ": " + e.what());
  }
  return {A.expand(concat(batch, {A.size(-2), A.size(-1)})), B.expand(concat(batch, {B.size(-2), B.size(-1)}))};
}

}  // namespace ember::linalg_detail
