// Complex matrix products on OpenBLAS (cblas_cgemm / cblas_zgemm), one call per batch.
#include <cblas.h>

#include <vector>

#include "kernels/cpu/complex_kernels.h"

namespace ember::kernels {
namespace {

// One operand as BLAS takes it (row-major order): its trans mode, leading dimension and data.
template <class C>
struct Operand {
  CBLAS_TRANSPOSE trans;
  int64_t ld;
  const C* data;
  std::vector<C> copy;  // when the strides suit neither mode
};

// Matrix i of m (rows x cols), conjugated when conj.
template <class C>
void prepare(Operand<C>& op, const Matrices& m, int64_t i, bool conj) {
  const int64_t rows = m.rows(), cols = m.cols();
  const C* base = static_cast<const C*>(m.data) + i * m.strides[0];
  const int64_t rs = rows == 1 ? std::max<int64_t>(cols, 1) : m.strides[1];
  const int64_t cs = cols == 1 ? std::max<int64_t>(rows, 1) : m.strides[2];
  if ((cols == 1 || m.strides[2] == 1) && rs >= std::max<int64_t>(cols, 1)) {
    op = {conj ? CblasConjNoTrans : CblasNoTrans, rs, base, {}};
  } else if ((rows == 1 || m.strides[1] == 1) && cs >= std::max<int64_t>(rows, 1)) {
    op = {conj ? CblasConjTrans : CblasTrans, cs, base, {}};
  } else {
    op.copy.resize(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        C v = base[r * m.strides[1] + c * m.strides[2]];
        if (conj) v.imag_ = -v.imag_;
        op.copy[static_cast<size_t>(r * cols + c)] = v;
      }
    }
    op.trans = CblasNoTrans;
    op.ld = std::max<int64_t>(cols, 1);
    op.data = op.copy.data();
  }
}

template <class C>
void gemm_typed(const Matrices& out, const Matrices& a, bool conj_a, const Matrices& b, bool conj_b,
                const GemmEpilogue& e) {
  const int64_t m = out.rows(), n = out.cols(), k = a.cols();
  const C alpha = e.alpha.to<C>();
  const C beta = e.beta.to<C>();
  Operand<C> oa, ob;
  for (int64_t i = 0; i < out.batch(); ++i) {
    C* o = static_cast<C*>(out.data) + i * out.strides[0];
    if (k == 0) {  // BLAS leaves C untouched: the product of empty operands is zero
      for (int64_t r = 0; r < m * n; ++r) o[r] = beta == C(0) ? C(0) : beta * o[r];
    } else {
      prepare(oa, a, i, conj_a);
      prepare(ob, b, i, conj_b);
      if constexpr (std::is_same_v<C, complex<float>>) {
        cblas_cgemm(CblasRowMajor, oa.trans, ob.trans, m, n, k, &alpha, oa.data, oa.ld, ob.data, ob.ld, &beta, o,
                    out.strides[1]);
      } else {
        cblas_zgemm(CblasRowMajor, oa.trans, ob.trans, m, n, k, &alpha, oa.data, oa.ld, ob.data, ob.ld, &beta, o,
                    out.strides[1]);
      }
    }
    if (e.bias) {  // alpha * bias added to each row
      const C* bias = static_cast<const C*>(e.bias);
      for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < n; ++c) o[r * out.strides[1] + c] += alpha * bias[c * e.bias_stride];
    }
  }
}

}  // namespace

void complex_gemm(ScalarType dtype, const Matrices& out, const Matrices& a, bool conj_a, const Matrices& b,
                  bool conj_b, const GemmEpilogue& epilogue) {
  if (out.batch() == 0 || out.rows() == 0 || out.cols() == 0) return;
  if (dtype == kComplexFloat) return gemm_typed<complex<float>>(out, a, conj_a, b, conj_b, epilogue);
  gemm_typed<complex<double>>(out, a, conj_a, b, conj_b, epilogue);
}

}  // namespace ember::kernels
