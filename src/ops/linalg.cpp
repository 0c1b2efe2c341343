// Matrix-product ops. Each op checks its arguments (PyTorch's words, shapes named), describes the
// product as 2-D or batched 3-D operands plus an addend, and hands it to `product`, which runs
// the gemm kernel once into the result or the out= tensor.
#include <algorithm>
#include <atomic>

#include "dispatch/dispatch.h"
#include "ember/factory.h"
#include "ember/parallel.h"
#include "ember/pointwise.h"
#include "kernels/cpu/complex_kernels.h"
#include "kernels/cpu/gemm.h"
#include "ops/linalg_common.h"
#include "ops/linalg_internal.h"
#include "ops/op_util.h"

namespace ember {
namespace linalg {
namespace {

// PyTorch names dtypes by their C++ type in out= errors.
const char* cpp_type_name(ScalarType t) {
  switch (t) {
    case kByte: return "unsigned char";
    case kChar: return "signed char";
    case kShort: return "short int";
    case kInt: return "int";
    case kLong: return "long int";
    case kHalf: return "c10::Half";
    case kFloat: return "float";
    case kDouble: return "double";
    case kBool: return "bool";
    case kBFloat16: return "c10::BFloat16";
    default: return "unknown";
  }
}

bool shares_storage(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.impl()->storage() == b.impl()->storage();
}
bool same_view(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.data_ptr() == b.data_ptr() && a.sizes().equals(b.sizes()) &&
         a.strides().equals(b.strides());
}

// Whether `self`, broadcast to `sizes`, is one row of n values repeated: then it is the kernel's bias.
bool is_row_addend(const Tensor& self, IntArrayRef sizes, int64_t n) {
  if (self.dim() == 0 || sizes.empty() || sizes.back() != n || self.size(-1) != n) return false;
  for (int64_t d = 0; d + 1 < self.dim(); ++d)
    if (self.size(d) != 1) return false;
  return true;
}

// set_float32_matmul_precision's setting, process-wide as PyTorch's; "high" computes as "highest".
enum class Precision { kHighest, kHigh, kMedium };
constexpr const char* kPrecisionNames[] = {"highest", "high", "medium"};
std::atomic<Precision> g_precision{Precision::kHighest};

// "medium" computes in bfloat16 only where the CPU has bfloat16 instructions: oneDNN's emulated
// bfloat16 product is slower than the float32 one (2.9x at 1024 x 1024 on AVX-512 VNNI), and the
// setting asks for speed, as PyTorch's ("if fast matrix multiplication algorithms using it are
// available").
kernels::Float32Math float32_math() {
  if (g_precision.load(std::memory_order_relaxed) != Precision::kMedium) return kernels::Float32Math::kExact;
  static const bool fast_bfloat16 = has_bfloat16_instructions();
  return fast_bfloat16 ? kernels::Float32Math::kBFloat16 : kernels::Float32Math::kExact;
}

}  // namespace

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dtype() == b.dtype(), op, "expected scalar type ", a.dtype(), " but found ", b.dtype());
}

void check_supported(const char* op, const char* kernel, ScalarType t) {
  EMBER_CHECK(t != kBool, op, "\"", kernel, "\" not implemented for '", t, "'");
}

void check_expandable(const char* op, const Tensor& self, IntArrayRef sizes) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  EMBER_CHECK(self.dim() <= nd, op, "the number of sizes provided (", nd,
              ") must be greater or equal to the number of dimensions in the tensor (", self.dim(), ")");
  for (int64_t i = 1; i <= self.dim(); ++i) {
    const int64_t have = self.size(-i), want = sizes[nd - i];
    EMBER_CHECK(have == want || have == 1, op, "The expanded size of the tensor (", want,
                ") must match the existing size (", have, ") at non-singleton dimension ", nd - i,
                ".  Target sizes: ", sizes, ".  Tensor sizes: ", self.sizes());
  }
}

Tensor product(const char* op, const Product& p, Tensor* out) {
  const ScalarType dtype = p.a.dtype();
  if (out) {
    EMBER_CHECK(out->dtype() == dtype, op, "Expected out tensor to have dtype ", cpp_type_name(dtype), ", but got ",
                cpp_type_name(out->dtype()), " instead");
  }
  const kernels::Matrices ma = kernels::matrices(p.a);
  kernels::Matrices mb = kernels::matrices(p.b);
  if (p.transpose_b) {
    std::swap(mb.sizes[1], mb.sizes[2]);
    std::swap(mb.strides[1], mb.strides[2]);
  }
  const int64_t batch = ma.batch(), m = ma.rows(), n = mb.cols();
  // The kernel writes into out itself when out is contiguous and apart from the operands.
  Tensor buf;
  if (out) {
    if (!out->sizes().equals(p.sizes)) out->resize_(p.sizes);
    const bool self_in_place = same_view(p.self, *out);
    const bool apart = !shares_storage(*out, p.a) && !shares_storage(*out, p.b) &&
                       (self_in_place || !shares_storage(*out, p.self));
    buf = out->is_contiguous() && apart ? *out : make_empty(p.sizes, dtype);
  } else {
    buf = make_empty(p.sizes, dtype);
  }
  kernels::GemmEpilogue e;
  e.alpha = p.alpha;
  if (p.self.defined() && !p.beta.equal(0)) {
    // alpha * (a @ b + self) when self is a row and alpha == beta: one fused kernel call.
    if (p.alpha.equal(p.beta.toDouble()) && is_row_addend(p.self, p.sizes, n) && !shares_storage(p.self, buf)) {
      e.bias = p.self.data_ptr();
      e.bias_stride = p.self.stride(-1);
    } else {
      if (!same_view(p.self, buf)) buf.copy_(p.self.expand(p.sizes));
      e.beta = p.beta;
    }
  }
  const kernels::Matrices mo{buf.data_ptr(), {batch, m, n}, {m * n, n, 1}};
  if (is_complex_type(dtype)) {
    kernels::complex_gemm(dtype, mo, ma, p.a.is_conj(), mb, p.b.is_conj(), e);
  } else {
    kernels::gemm(dtype, mo, ma, mb, e, float32_math());
  }
  if (!out) return buf;
  if (buf.is_same(*out)) {
    out->impl()->storage()->bump_version();
  } else {
    out->copy_(buf);
  }
  return *out;
}

}  // namespace linalg

void set_float32_matmul_precision(const std::string& precision) {
  for (size_t i = 0; i < std::size(linalg::kPrecisionNames); ++i) {
    if (precision == linalg::kPrecisionNames[i]) {
      linalg::g_precision.store(static_cast<linalg::Precision>(i), std::memory_order_relaxed);
      return;
    }
  }
  EMBER_CHECK(false, "set_float32_matmul_precision", "expected \"highest\", \"high\" or \"medium\" but got \"",
              precision, "\"");
}

std::string get_float32_matmul_precision() {
  return linalg::kPrecisionNames[static_cast<int>(linalg::g_precision.load(std::memory_order_relaxed))];
}

namespace {

using linalg::check_expandable;
using linalg::check_same_dtype;
using linalg::check_supported;
using linalg::Product;

void check_mm_shapes(const char* op, const Tensor& m1, const Tensor& m2) {
  EMBER_CHECK(m1.size(1) == m2.size(0), op, "mat1 and mat2 shapes cannot be multiplied (", m1.size(0), "x",
              m1.size(1), " and ", m2.size(0), "x", m2.size(1), ")");
}

void check_mm(const char* op, const Tensor& self, const Tensor& mat2) {
  EMBER_CHECK(self.dim() == 2, op, "self must be a matrix");
  EMBER_CHECK(mat2.dim() == 2, op, "mat2 must be a matrix");
  check_mm_shapes(op, self, mat2);
  check_same_dtype(op, self, mat2);
  check_supported(op, "addmm_impl_cpu_", self.dtype());
}

void check_addmm(const char* op, const Tensor& self, const Tensor& m1, const Tensor& m2) {
  EMBER_CHECK(m1.dim() == 2, op, "mat1 must be a matrix, got ", m1.dim(), "-D tensor");
  EMBER_CHECK(m2.dim() == 2, op, "mat2 must be a matrix, got ", m2.dim(), "-D tensor");
  check_mm_shapes(op, m1, m2);
  EMBER_CHECK(self.dtype() == m2.dtype(), op, "self and mat2 must have the same dtype");
  EMBER_CHECK(m1.dtype() == m2.dtype(), op, "mat1 and mat2 must have the same dtype");
  check_supported(op, "addmm_impl_cpu_", m1.dtype());
  check_expandable(op, self, {m1.size(0), m2.size(1)});
}

void check_bmm(const char* op, const char* kernel, const Tensor& b1, const Tensor& b2) {
  EMBER_CHECK(b1.dim() == 3, op, "batch1 must be a 3D tensor");
  EMBER_CHECK(b2.dim() == 3, op, "batch2 must be a 3D tensor");
  EMBER_CHECK(b2.size(0) == b1.size(0) && b2.size(1) == b1.size(2), op,
              "Expected size for first two dimensions of batch2 tensor to be: [", b1.size(0), ", ", b1.size(2),
              "] but got: [", b2.size(0), ", ", b2.size(1), "].");
  check_same_dtype(op, b1, b2);
  check_supported(op, kernel, b1.dtype());
}

// mv's checks, with the sizes PyTorch reports (`rows` is the result's length).
void check_mv_sizes(const char* op, int64_t rows, const Tensor& mat, const Tensor& vec) {
  EMBER_CHECK(mat.size(1) == vec.size(0), op, "size mismatch, got ", rows, ", ", mat.size(0), "x", mat.size(1), ",",
              vec.size(0));
}

void check_dot(const char* op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() == 1 && b.dim() == 1, op, "1D tensors expected, but got ", a.dim(), "D and ", b.dim(),
              "D tensors");
  EMBER_CHECK(a.dtype() == b.dtype(), op, "dot : expected both vectors to have same dtype, but found ", a.dtype(),
              " and ", b.dtype());
  EMBER_CHECK(a.numel() == b.numel(), op, "inconsistent tensor size, expected tensor [", a.numel(), "] and src [",
              b.numel(), "] to have the same number of elements, but got ", a.numel(), " and ", b.numel(),
              " elements respectively");
  check_supported(op, op, a.dtype());
}

IntArrayRef leading(IntArrayRef sizes, int64_t n) { return IntArrayRef(sizes.data(), static_cast<size_t>(n)); }

using linalg_detail::concat;

// PyTorch's matmul: 1-D operands gain a dim of 1 (removed from the result), operands whose second
// factor has at most 2 dims fold all leading dims of the first into rows (one 2-D product),
// others broadcast their batch dims into one batched product. `addend` (linear's bias) is added
// to the result. Errors name the mm/mv/dot/bmm that PyTorch would call.
Tensor matmul_impl(const char* op, const Tensor& t1, const Tensor& t2_in, const Tensor& addend, Tensor* out,
                   bool transpose_2d_other = false) {
  // linear's weight: the second factor is weight.t() for a 2-D weight, which the product reads
  // by swapping the weight's strides rather than through a transposed view
  const Tensor& t2 = t2_in;
  const bool swap_b = transpose_2d_other && t2.dim() == 2;
  const int64_t d1 = t1.dim(), d2 = t2.dim();
  EMBER_CHECK(d1 > 0 && d2 > 0, op, "both arguments to matmul need to be at least 1D, but they are ", d1, "D and ",
              d2, "D");
  Product p;
  if (d1 == 1 && d2 == 1) {
    check_dot(op, t1, t2);
    p.a = t1.unsqueeze(0);
    p.b = t2.unsqueeze(1);
  } else if (d2 <= 2) {
    const int64_t k = t1.size(-1);
    int64_t rows = 1;
    for (int64_t d = 0; d + 1 < d1; ++d) rows *= t1.size(d);
    p.a = d1 == 2 ? t1 : t1.reshape({rows, k});
    if (d2 == 1) {
      check_mv_sizes(op, rows, p.a, t2);
      check_same_dtype(op, t1, t2);
      check_supported(op, "addmv_impl_cpu", t1.dtype());
      p.b = t2.unsqueeze(1);
      p.sizes = leading(t1.sizes(), d1 - 1);
    } else {
      const int64_t k2 = t2.size(swap_b ? 1 : 0), n = t2.size(swap_b ? 0 : 1);
      EMBER_CHECK(k == k2, op, "mat1 and mat2 shapes cannot be multiplied (", rows, "x", k, " and ", k2, "x", n, ")");
      check_same_dtype(op, t1, t2);
      check_supported(op, "addmm_impl_cpu_", t1.dtype());
      p.b = t2;
      p.transpose_b = swap_b;
      p.sizes = concat(leading(t1.sizes(), d1 - 1), {n});
    }
  } else {
    const Tensor a = d1 == 1 ? t1.unsqueeze(0) : t1;
    const int64_t m = a.size(-2), k = a.size(-1), k2 = t2.size(-2), n = t2.size(-1);
    if (d1 <= 2) {  // PyTorch folds t2's batch into rows of t2^T and reports that product
      int64_t rows = n;
      for (int64_t d = 0; d + 2 < d2; ++d) rows *= t2.size(d);
      if (d1 == 1) {
        EMBER_CHECK(k == k2, op, "size mismatch, got ", rows, ", ", rows, "x", k2, ",", k);
      } else {
        EMBER_CHECK(k == k2, op, "mat1 and mat2 shapes cannot be multiplied (", rows, "x", k2, " and ", k, "x", m, ")");
      }
    }
    DimVector batch;
    try {
      batch = infer_size(leading(a.sizes(), a.dim() - 2), leading(t2.sizes(), d2 - 2));
    } catch (const Error& e) {
      throw Error(std::string(op) + ": " + e.what());
    }
    int64_t nbatch = 1;
    for (int64_t s : batch) nbatch *= s;
    EMBER_CHECK(k == k2, op, "Expected size for first two dimensions of batch2 tensor to be: [", nbatch, ", ", k,
                "] but got: [", nbatch, ", ", k2, "].");
    check_same_dtype(op, t1, t2);
    check_supported(op, d1 <= 2 ? "addmm_impl_cpu_" : "bmm", t1.dtype());
    // Broadcast batch dims have stride 0 and fold into a batch stride of 0 without a copy.
    p.a = a.expand(concat(batch, {m, k})).reshape({nbatch, m, k});
    p.b = t2.expand(concat(batch, {k, n})).reshape({nbatch, k, n});
    p.sizes = batch;
    if (d1 > 1) p.sizes.push_back(m);
    p.sizes.push_back(n);
  }
  if (addend.defined()) {
    EMBER_CHECK(addend.dtype() == t1.dtype(), op, "self and mat2 must have the same dtype");
    check_expandable(op, addend, p.sizes);
    p.self = addend;
  }
  return linalg::product(op, p, out);
}

using op_util::maybe_multiply;

// The output's gradient as the formulas of a backward read it: when several run and products
// would each copy it (the strided rows of attention's heads, a sum's broadcast), it is made
// contiguous once (a bias's sum then also reads dense memory). Matrices that products read in
// place are kept: with unit stride along rows and a leading dimension (dense, or rows of a wider
// gradient, as cat's backward gives; for linear, leading dims that flatten into its rows),
// transposed 2-D ones, and batches that are dense or transposed dense.
Tensor shared_grad(const Tensor& grad, bool several, bool batched) {
  if (!several || grad.is_contiguous()) return grad;
  const int64_t d = grad.dim();
  if (batched) return grad.transpose(1, 2).is_contiguous() ? grad : grad.contiguous();
  if (d == 2 && grad.stride(0) == 1 && grad.stride(1) >= grad.size(0)) return grad;
  bool rows_in_place = d >= 2 && grad.stride(d - 1) == 1 && grad.stride(d - 2) >= grad.size(d - 1);
  for (int64_t i = d - 3, inner = d - 2; rows_in_place && i >= 0; --i) {
    if (grad.size(i) == 1) continue;
    rows_in_place = grad.stride(i) == grad.stride(inner) * grad.size(inner);
    inner = i;
  }
  return rows_in_place ? grad : grad.contiguous();
}

// Gradients of self @ other for any operand ranks: 1-D operands act as matrices (a row for self,
// a column for other) as matmul treats them, and broadcast batch dims are summed away. Each
// needs only the other operand and its own operand's shape.
Tensor as_matrix_grad(const Tensor& grad, size_t self_dim, size_t other_dim) {
  Tensor g = self_dim == 1 ? grad.unsqueeze(other_dim == 1 ? -1 : -2) : grad;
  return other_dim == 1 ? g.unsqueeze(-1) : g;
}
Tensor matmul_backward_self(const Tensor& grad, IntArrayRef self_sizes, const Tensor& other) {
  const Tensor g = as_matrix_grad(grad, self_sizes.size(), other.dim());
  Tensor r = g.matmul(other.dim() == 1 ? other.unsqueeze(0).conj() : other.mT().conj());
  if (self_sizes.size() == 1) r = r.squeeze(-2);
  return autograd::sum_to(r, self_sizes);
}
Tensor matmul_backward_other(const Tensor& grad, const Tensor& self, IntArrayRef other_sizes) {
  const Tensor g = as_matrix_grad(grad, self.dim(), other_sizes.size());
  Tensor r = (self.dim() == 1 ? self.unsqueeze(-1) : self.mT()).conj().matmul(g);
  if (other_sizes.size() == 1) r = r.squeeze(-1);
  return autograd::sum_to(r, other_sizes);
}

struct MmOp {
  static constexpr const char* name = "mm";
  static constexpr bool conj_aware = true;  // the product reads the bits
  static constexpr dispatch::Autocast autocast = dispatch::Autocast::kLowerPrecision;
  static Tensor run(const Tensor& self, const Tensor& mat2) {
    check_mm(name, self, mat2);
    return linalg::product(name, Product{self, mat2, {self.size(0), mat2.size(1)}});
  }
  // MmBackward0 -- self: grad.mm(mat2.t().conj()); mat2: self.t().conj().mm(grad)
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& mat2) {
    d.name("MmBackward0");
    d.grad(self, [m = d.save_for(self, mat2)](const auto& c) { return c.grad().mm(c[m].t().conj()); });
    d.grad(mat2, [s = d.save_for(mat2, self)](const auto& c) { return c[s].t().conj().mm(c.grad()); });
  }
};
struct MmOutOp {
  static constexpr const char* name = "mm_out";
  static Tensor& run(Tensor& out, const Tensor& self, const Tensor& mat2) {
    check_mm(name, self, mat2);
    linalg::product(name, Product{self, mat2, {self.size(0), mat2.size(1)}}, &out);
    return out;
  }
};

struct BmmOp {
  static constexpr const char* name = "bmm";
  static constexpr bool conj_aware = true;  // the product reads the bits
  static constexpr dispatch::Autocast autocast = dispatch::Autocast::kLowerPrecision;
  static Tensor run(const Tensor& self, const Tensor& mat2) {
    check_bmm(name, "bmm", self, mat2);
    return linalg::product(name, Product{self, mat2, {self.size(0), self.size(1), mat2.size(2)}});
  }
  // BmmBackward0 -- self: grad.bmm(mat2.transpose(1, 2).conj()); mat2: self.transpose(1, 2).conj().bmm(grad)
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& mat2) {
    d.name("BmmBackward0");
    auto self_grad = [](const Tensor& g, const Tensor& m) { return g.bmm(m.transpose(1, 2).conj()); };
    auto mat2_grad = [](const Tensor& g, const Tensor& s) { return s.transpose(1, 2).conj().bmm(g); };
    if (autograd::Derivative::needs(self) && autograd::Derivative::needs(mat2)) {
      d.grad({self, mat2}, [m = d.save(mat2), s = d.save(self), self_grad, mat2_grad](const auto& c) {
        const Tensor g = shared_grad(c.grad(), c.needs(0) && c.needs(1), true);
        return autograd::variable_list{c.needs(0) ? self_grad(g, c[m]) : Tensor(),
                                       c.needs(1) ? mat2_grad(g, c[s]) : Tensor()};
      });
      return;
    }
    d.grad(self, [m = d.save_for(self, mat2), self_grad](const auto& c) { return self_grad(c.grad(), c[m]); });
    d.grad(mat2, [s = d.save_for(mat2, self), mat2_grad](const auto& c) { return mat2_grad(c.grad(), c[s]); });
  }
};
struct BmmOutOp {
  static constexpr const char* name = "bmm_out";
  static Tensor& run(Tensor& out, const Tensor& self, const Tensor& mat2) {
    check_bmm(name, "bmm", self, mat2);
    linalg::product(name, Product{self, mat2, {self.size(0), self.size(1), mat2.size(2)}}, &out);
    return out;
  }
};

struct MatmulOp {
  static constexpr const char* name = "matmul";
  static constexpr bool conj_aware = true;  // the product reads the bits
  static constexpr dispatch::Autocast autocast = dispatch::Autocast::kLowerPrecision;
  static Tensor run(const Tensor& self, const Tensor& other) { return matmul_impl(name, self, other, {}, nullptr); }
  // MatmulBackward0 (PyTorch records the mm/bmm/view nodes matmul decomposes into)
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& other) {
    d.name("MatmulBackward0");
    d.grad(self, [sizes = DimVector(self.sizes()), o = d.save_for(self, other)](const auto& c) {
      return matmul_backward_self(c.grad(), sizes, c[o]);
    });
    d.grad(other, [sizes = DimVector(other.sizes()), s = d.save_for(other, self)](const auto& c) {
      return matmul_backward_other(c.grad(), c[s], sizes);
    });
  }
};
struct MatmulOutOp {
  static constexpr const char* name = "matmul_out";
  static Tensor& run(Tensor& out, const Tensor& self, const Tensor& other) {
    matmul_impl(name, self, other, {}, &out);
    return out;
  }
};

Product addmm_product(const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta,
                      const Scalar& alpha) {
  return Product(m1, m2, {m1.size(0), m2.size(1)}, self, beta, alpha);
}
struct AddmmOp {
  static constexpr const char* name = "addmm";
  static constexpr dispatch::Autocast autocast = dispatch::Autocast::kLowerPrecision;
  static Tensor run(const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta, const Scalar& alpha) {
    check_addmm(name, self, m1, m2);
    return linalg::product(name, addmm_product(self, m1, m2, beta, alpha));
  }
  // AddmmBackward0 -- self: maybe_multiply(grad, beta); mat1: grad.mm(mat2.t()) * alpha;
  // mat2: mat1.t().mm(grad) * alpha
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& m1, const Tensor& m2,
                         const Scalar& beta, const Scalar& alpha) {
    d.name("AddmmBackward0");
    d.grad(self, [beta](const auto& c) { return maybe_multiply(c.grad(), beta); });
    d.grad(m1, [m = d.save_for(m1, m2), alpha](const auto& c) { return maybe_multiply(c.grad().mm(c[m].t()), alpha); });
    d.grad(m2, [m = d.save_for(m2, m1), alpha](const auto& c) { return maybe_multiply(c[m].t().mm(c.grad()), alpha); });
  }
};
struct AddmmOutOp {
  static constexpr const char* name = "addmm_out";
  static Tensor& run(Tensor& out, const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta,
                     const Scalar& alpha) {
    check_addmm(name, self, m1, m2);
    linalg::product(name, addmm_product(self, m1, m2, beta, alpha), &out);
    return out;
  }
};
struct AddmmInplaceOp {
  static constexpr const char* name = "addmm_";
  static Tensor& run(Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta, const Scalar& alpha) {
    check_addmm(name, self, m1, m2);
    EMBER_CHECK(self.dim() == 2 && self.size(0) == m1.size(0) && self.size(1) == m2.size(1), name,
                "output with shape ", self.sizes(), " doesn't match the broadcast shape [", m1.size(0), ", ",
                m2.size(1), "]");
    linalg::product(name, addmm_product(self, m1, m2, beta, alpha), &self);
    return self;
  }
};

void check_addmv(const char* op, const Tensor& self, const Tensor& mat, const Tensor& vec) {
  EMBER_CHECK(mat.dim() == 2 && vec.dim() == 1 && self.dim() <= 1, op, "vector + matrix @ vector expected, got ",
              self.dim(), ", ", mat.dim(), ", ", vec.dim());
  EMBER_CHECK(mat.size(0) == self.numel() || self.numel() == 1, op, "size mismatch, got ",
              self.dim() == 1 ? self.size(0) : 1, ", ", mat.size(0), "x", mat.size(1), ",", vec.size(0));
  check_mv_sizes(op, self.dim() == 1 ? self.size(0) : 1, mat, vec);
  check_same_dtype(op, mat, vec);
  check_supported(op, "addmv_impl_cpu", mat.dtype());
}
struct AddmvOp {
  static constexpr const char* name = "addmv";
  static Tensor run(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
    check_addmv(name, self, mat, vec);
    return linalg::product(name, Product{mat, vec.unsqueeze(1), {mat.size(0)}, self.to(mat.dtype()), beta, alpha});
  }
  // AddmvBackward0 -- self: maybe_multiply(grad, beta); mat: grad.ger(vec) * alpha; vec: mat.t().mv(grad) * alpha
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& mat, const Tensor& vec,
                         const Scalar& beta, const Scalar& alpha) {
    d.name("AddmvBackward0");
    d.grad(self, [beta](const auto& c) { return maybe_multiply(c.grad(), beta); });
    d.grad(mat, [v = d.save_for(mat, vec), alpha](const auto& c) { return maybe_multiply(c.grad().outer(c[v]), alpha); });
    d.grad(vec, [m = d.save_for(vec, mat), alpha](const auto& c) { return maybe_multiply(c[m].t().mv(c.grad()), alpha); });
  }
};
struct AddmvInplaceOp {
  static constexpr const char* name = "addmv_";
  static Tensor& run(Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
    check_addmv(name, self, mat, vec);
    EMBER_CHECK(self.dim() == 1 && self.size(0) == mat.size(0), name, "output with shape ", self.sizes(),
                " doesn't match the broadcast shape [", mat.size(0), "]");
    check_same_dtype(name, mat, self);
    linalg::product(name, Product{mat, vec.unsqueeze(1), {mat.size(0)}, self, beta, alpha}, &self);
    return self;
  }
};
struct MvOp {
  static constexpr const char* name = "mv";
  static constexpr bool conj_aware = true;  // the product reads the bits
  static Tensor run(const Tensor& self, const Tensor& vec) {
    EMBER_CHECK(self.dim() == 2 && vec.dim() == 1, name, "vector + matrix @ vector expected, got 1, ", self.dim(),
                ", ", vec.dim());
    check_mv_sizes(name, self.size(0), self, vec);
    check_same_dtype(name, self, vec);
    check_supported(name, "addmv_impl_cpu", self.dtype());
    return linalg::product(name, Product{self, vec.unsqueeze(1), {self.size(0)}});
  }
  // MvBackward0 -- self: grad.ger(vec.conj()); vec: self.t().conj().mv(grad)
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& vec) {
    d.name("MvBackward0");
    d.grad(self, [v = d.save_for(self, vec)](const auto& c) { return c.grad().outer(c[v].conj()); });
    d.grad(vec, [m = d.save_for(vec, self)](const auto& c) { return c[m].t().conj().mv(c.grad()); });
  }
};

void check_baddbmm(const char* op, const Tensor& self, const Tensor& b1, const Tensor& b2) {
  check_bmm(op, "baddbmm", b1, b2);
  check_expandable(op, self, {b1.size(0), b1.size(1), b2.size(2)});
}
struct BaddbmmOp {
  static constexpr const char* name = "baddbmm";
  static constexpr dispatch::Autocast autocast = dispatch::Autocast::kLowerPrecision;
  static Tensor run(const Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta, const Scalar& alpha) {
    check_baddbmm(name, self, b1, b2);
    return linalg::product(name, Product{b1, b2, {b1.size(0), b1.size(1), b2.size(2)}, self.to(b1.dtype()), beta, alpha});
  }
  // BaddbmmBackward0 -- self: maybe_multiply(grad, beta); batch1: grad.bmm(batch2.transpose(1, 2)) * alpha;
  // batch2: batch1.transpose(1, 2).bmm(grad) * alpha
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& b1, const Tensor& b2,
                         const Scalar& beta, const Scalar& alpha) {
    d.name("BaddbmmBackward0");
    d.grad(self, [beta](const auto& c) { return maybe_multiply(c.grad(), beta); });
    d.grad(b1, [m = d.save_for(b1, b2), alpha](const auto& c) {
      return maybe_multiply(c.grad().bmm(c[m].transpose(1, 2)), alpha);
    });
    d.grad(b2, [m = d.save_for(b2, b1), alpha](const auto& c) {
      return maybe_multiply(c[m].transpose(1, 2).bmm(c.grad()), alpha);
    });
  }
};
struct BaddbmmInplaceOp {
  static constexpr const char* name = "baddbmm_";
  static Tensor& run(Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta, const Scalar& alpha) {
    check_baddbmm(name, self, b1, b2);
    const int64_t sizes[3] = {b1.size(0), b1.size(1), b2.size(2)};
    EMBER_CHECK(self.sizes().equals(sizes), name, "output with shape ", self.sizes(),
                " doesn't match the broadcast shape ", IntArrayRef(sizes));
    check_same_dtype(name, b1, self);
    linalg::product(name, Product{b1, b2, sizes, self, beta, alpha}, &self);
    return self;
  }
};

// DotBackward0 -- self: grad * tensor.conj(); tensor: grad * self.conj()
// VdotBackward0 -- self: grad.conj() * other; other: grad * self
template <bool V>
struct DotGrad {
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& other) {
    d.name(V ? "VdotBackward0" : "DotBackward0");
    d.grad(self, [o = d.save_for(self, other)](const auto& c) {
      return V ? c.grad().conj() * c[o] : c.grad() * c[o].conj();
    });
    d.grad(other, [s = d.save_for(other, self)](const auto& c) { return V ? c.grad() * c[s] : c.grad() * c[s].conj(); });
  }
};
struct DotOp : DotGrad<false> {
  static constexpr const char* name = "dot";
  static constexpr bool conj_aware = true;  // the product reads the bits
  static Tensor run(const Tensor& self, const Tensor& other) {
    check_dot(name, self, other);
    return linalg::product(name, Product{self.unsqueeze(0), other.unsqueeze(1), {}});
  }
};
struct VdotOp : DotGrad<true> {
  static constexpr const char* name = "vdot";
  static constexpr bool conj_aware = true;  // the product reads the bits
  static Tensor run(const Tensor& self, const Tensor& other) {
    check_dot(name, self, other);
    return linalg::product(name, Product{self.conj().unsqueeze(0), other.unsqueeze(1), {}});
  }
};

// An outer product is a broadcast multiplication (so dtypes promote, as in PyTorch).
struct OuterOp {
  static constexpr const char* name = "outer";
  static constexpr bool composite = true;  // MulBackward0, as PyTorch
  static Tensor run(const Tensor& self, const Tensor& vec2) {
    EMBER_CHECK(self.dim() == 1, name, "Expected 1-D argument self, but got ", self.dim(), "-D");
    EMBER_CHECK(vec2.dim() == 1, name, "Expected 1-D argument vec2, but got ", vec2.dim(), "-D");
    return mul(self.unsqueeze(1), vec2);
  }
};

struct LinearOp {
  static constexpr const char* name = "linear";
  static constexpr dispatch::Autocast autocast = dispatch::Autocast::kLowerPrecision;
  static Tensor run(const Tensor& input, const Tensor& weight, const Tensor& bias) {
    EMBER_CHECK(weight.dim() <= 2, name, "t() expects a tensor with <= 2 dimensions, but self is ", weight.dim(), "D");
    // PyTorch runs these inputs with a bias through addmm, which needs a 2-D weight
    if (bias.defined() && (input.dim() == 2 || (input.dim() == 3 && input.is_contiguous()))) {
      EMBER_CHECK(weight.dim() == 2, name, "mat2 must be a matrix, got ", weight.dim(), "-D tensor");
    }
    return matmul_impl(name, input, weight, bias, nullptr, /*transpose_2d_other=*/true);
  }
  // LinearBackward0 -- input @ weight.t() + bias: input and weight as matmul's operands; bias: grad
  // (the engine sums it to the bias's shape). Two or more of them read one shared_grad.
  static void derivative(autograd::Derivative& d, const Tensor& input, const Tensor& weight, const Tensor& bias) {
    d.name("LinearBackward0");
    auto input_grad = [sizes = DimVector(input.sizes())](const Tensor& g, const Tensor& w) {
      return matmul_backward_self(g, sizes, w.t());
    };
    auto weight_grad = [sizes = DimVector(weight.sizes())](const Tensor& g, const Tensor& in) {
      // grad^T @ input over the flattened batch: one mm whose result is already in the weight's
      // dense (out, in) layout, so AccumulateGrad need not copy it
      if (sizes.size() == 2 && in.dim() >= 2) return g.reshape({-1, sizes[0]}).t().mm(in.reshape({-1, sizes[1]}));
      DimVector transposed(sizes);
      std::reverse(transposed.begin(), transposed.end());
      return matmul_backward_other(g, in, transposed).t();
    };
    using autograd::Derivative;
    if (Derivative::needs(input) + Derivative::needs(weight) + Derivative::needs(bias) >= 2) {
      d.grad({input, weight, bias}, [w = d.save_for(input, weight), x = d.save_for(weight, input), input_grad,
                                     weight_grad](const auto& c) {
        const Tensor g = shared_grad(c.grad(), c.needs(0) + c.needs(1) + c.needs(2) >= 2, false);
        return autograd::variable_list{c.needs(0) ? input_grad(g, c[w]) : Tensor(),
                                       c.needs(1) ? weight_grad(g, c[x]) : Tensor(), g};
      });
      return;
    }
    d.grad(input, [w = d.save_for(input, weight), input_grad](const auto& c) { return input_grad(c.grad(), c[w]); });
    d.grad(weight, [x = d.save_for(weight, input), weight_grad](const auto& c) { return weight_grad(c.grad(), c[x]); });
    d.grad(bias, [](const auto& c) { return c.grad(); });
  }
};

}  // namespace

Tensor mm(const Tensor& self, const Tensor& mat2) { return dispatch::call<MmOp>(self, mat2); }
Tensor& mm_out(Tensor& out, const Tensor& self, const Tensor& mat2) { return dispatch::call<MmOutOp>(out, self, mat2); }
Tensor bmm(const Tensor& self, const Tensor& mat2) { return dispatch::call<BmmOp>(self, mat2); }
Tensor& bmm_out(Tensor& out, const Tensor& self, const Tensor& mat2) {
  return dispatch::call<BmmOutOp>(out, self, mat2);
}
Tensor matmul(const Tensor& self, const Tensor& other) { return dispatch::call<MatmulOp>(self, other); }
Tensor& matmul_out(Tensor& out, const Tensor& self, const Tensor& other) {
  return dispatch::call<MatmulOutOp>(out, self, other);
}
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  return dispatch::call<AddmmOp>(self, mat1, mat2, beta, alpha);
}
Tensor& addmm_out(Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                  const Scalar& alpha) {
  return dispatch::call<AddmmOutOp>(out, self, mat1, mat2, beta, alpha);
}
Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
  return dispatch::call<AddmvOp>(self, mat, vec, beta, alpha);
}
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha) {
  return dispatch::call<BaddbmmOp>(self, batch1, batch2, beta, alpha);
}
Tensor dot(const Tensor& self, const Tensor& tensor) { return dispatch::call<DotOp>(self, tensor); }
Tensor vdot(const Tensor& self, const Tensor& other) { return dispatch::call<VdotOp>(self, other); }
Tensor mv(const Tensor& self, const Tensor& vec) { return dispatch::call<MvOp>(self, vec); }
Tensor outer(const Tensor& self, const Tensor& vec2) { return dispatch::call<OuterOp>(self, vec2); }
Tensor ger(const Tensor& self, const Tensor& vec2) { return outer(self, vec2); }
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  return dispatch::call<LinearOp>(input, weight, bias.value_or(Tensor()));
}
namespace nn::functional {
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  return dispatch::call<LinearOp>(input, weight, bias);
}
}  // namespace nn::functional

Tensor Tensor::mm(const Tensor& mat2) const { return ember::mm(*this, mat2); }
Tensor Tensor::bmm(const Tensor& mat2) const { return ember::bmm(*this, mat2); }
Tensor Tensor::matmul(const Tensor& other) const { return ember::matmul(*this, other); }
Tensor Tensor::addmm(const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) const {
  return ember::addmm(*this, mat1, mat2, beta, alpha);
}
Tensor& Tensor::addmm_(const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) const {
  return dispatch::call<AddmmInplaceOp>(mutable_self(), mat1, mat2, beta, alpha);
}
Tensor Tensor::addmv(const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) const {
  return ember::addmv(*this, mat, vec, beta, alpha);
}
Tensor& Tensor::addmv_(const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) const {
  return dispatch::call<AddmvInplaceOp>(mutable_self(), mat, vec, beta, alpha);
}
Tensor Tensor::baddbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) const {
  return ember::baddbmm(*this, batch1, batch2, beta, alpha);
}
Tensor& Tensor::baddbmm_(const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) const {
  return dispatch::call<BaddbmmInplaceOp>(mutable_self(), batch1, batch2, beta, alpha);
}
Tensor Tensor::dot(const Tensor& tensor) const { return ember::dot(*this, tensor); }
Tensor Tensor::vdot(const Tensor& other) const { return ember::vdot(*this, other); }
Tensor Tensor::mv(const Tensor& vec) const { return ember::mv(*this, vec); }
Tensor Tensor::outer(const Tensor& vec2) const { return ember::outer(*this, vec2); }
Tensor Tensor::ger(const Tensor& vec2) const { return ember::outer(*this, vec2); }

}  // namespace ember
