// Lowering: an op call of a known form becomes a direct kernel call on fixed pointers, built once
// at capture end. A replay then skips the op's argument checks, its TensorIterator set-up and its
// allocation: what remains is the kernel's own dispatch and loop.
//
// Each form below makes exactly the kernel call the op's run makes for these arguments (the same
// kernel, operation, scalars, dtypes and operand layout), so the replay computes bit for bit what
// the op computes; anything else (other dtypes, casts, temporaries, other argument forms) stays an
// op call. The forms cover the ops of small models' training steps: the unary and binary
// pointwise ops and their in-place forms, copy_ and fill_, sum and mean, and the matmul family's
// 2-D products with an optional bias row.
#include <string_view>
#include <unordered_map>

#include "core/tensor_iterator.h"
#include "ember/linalg.h"
#include "ember/parallel.h"
#include "ember/shape.h"
#include "graphs/graphs_internal.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/pointwise.h"
#include "kernels/cpu/reduce.h"

namespace ember::graphs {

namespace {

using dispatch::TracedArg;
using K = TracedArg::Kind;
using kernels::BinaryOp;
using kernels::UnaryOp;

// The ops of src/ops/pointwise_unary.cpp's EMBER_UNARY_OP list: unary_into on the kernel op, no
// parameters (floating inputs compute in their own dtype).
const std::unordered_map<std::string_view, UnaryOp>& unary_ops() {
  static const std::unordered_map<std::string_view, UnaryOp> ops = {
      {"abs", UnaryOp::Abs},       {"neg", UnaryOp::Neg},         {"sign", UnaryOp::Sign},
      {"exp", UnaryOp::Exp},       {"exp2", UnaryOp::Exp2},       {"expm1", UnaryOp::Expm1},
      {"log", UnaryOp::Log},       {"log2", UnaryOp::Log2},       {"log10", UnaryOp::Log10},
      {"log1p", UnaryOp::Log1p},   {"sqrt", UnaryOp::Sqrt},       {"rsqrt", UnaryOp::Rsqrt},
      {"sin", UnaryOp::Sin},       {"cos", UnaryOp::Cos},         {"tan", UnaryOp::Tan},
      {"tanh", UnaryOp::Tanh},     {"sigmoid", UnaryOp::Sigmoid}, {"relu", UnaryOp::Relu},
      {"silu", UnaryOp::Silu},     {"hardswish", UnaryOp::Hardswish}, {"hardsigmoid", UnaryOp::Hardsigmoid},
      {"erf", UnaryOp::Erf},       {"erfc", UnaryOp::Erfc},       {"erfinv", UnaryOp::Erfinv},
      {"floor", UnaryOp::Floor},   {"ceil", UnaryOp::Ceil},       {"round", UnaryOp::Round},
      {"trunc", UnaryOp::Trunc},   {"reciprocal", UnaryOp::Reciprocal}, {"square", UnaryOp::Square},
      {"frac", UnaryOp::Frac},
  };
  return ops;
}

bool is_float_tensor(const TracedArg& a) { return a.kind == K::Tensor && is_floating_type(a.tensor->dtype()); }

// The iterator an op built for these operands, if it reads and writes them in place (no cast
// copy, no temporary): then running its kernel again on it is the op again.
std::shared_ptr<TensorIterator> direct_iterator(const TensorIteratorConfig& config, const Tensor& out,
                                                std::initializer_list<const Tensor*> inputs) {
  auto iter = std::make_shared<TensorIterator>(config);
  if (iter->data(0) != out.data_ptr() || iter->dtype(0) != out.dtype() || iter->noutputs() != 1) return nullptr;
  int k = 1;
  for (const Tensor* t : inputs) {
    if (k >= iter->ntensors()) return nullptr;
    if (t && (iter->data(k) != t->data_ptr() || iter->dtype(k) != t->dtype())) return nullptr;
    ++k;
  }
  return iter;
}

void as_kernel(Step& s, std::function<void()> run, const Tensor* written) {
  s.kind = Step::Kind::Kernel;
  s.kernel = std::move(run);
  s.lowered = true;
  s.allocs.clear();
  if (written && written->defined()) s.bumps.push_back(written->impl()->storage());
  s.call.reset();
}

// out = op(self), or self = op(self).
bool lower_unary(Step& s, std::string_view name, const TracedArg* args, size_t n) {
  const bool inplace = name.back() == '_';
  const auto& ops = unary_ops();
  const auto it = ops.find(inplace ? name.substr(0, name.size() - 1) : name);
  if (it == ops.end() || n != 1 || !is_float_tensor(args[0]) || s.results.size() != 1) return false;
  const Tensor& self = *args[0].tensor;
  const Tensor& out = s.results[0];
  if (out.dtype() != self.dtype()) return false;
  TensorIteratorConfig config(s.name);
  config.add_output(inplace ? self : out).add_input(self);
  if (inplace) config.no_resize_outputs();
  auto iter = direct_iterator(config, inplace ? self : out, {&self});
  if (!iter) return false;
  const UnaryOp op = it->second;
  as_kernel(s, [iter, op, keep = std::vector<Tensor>{self, out}] { kernels::unary_kernel(*iter, op); },
            inplace ? &self : nullptr);
  return true;
}

// The binary ops: which kernel op, where a, b and alpha are among the arguments.
struct BinaryForm {
  BinaryOp op;
  int a, b;       // argument indices (rsub swaps them)
  int alpha;      // argument index of alpha, or -1 (then 1)
  size_t nargs;   // the call's argument count
  bool inplace;
};
bool binary_form(std::string_view name, size_t n, BinaryForm& f) {
  const bool inplace = name.back() == '_';
  const std::string_view base = inplace ? name.substr(0, name.size() - 1) : name;
  if (base == "add" || base == "sub") {
    f = {base == "add" ? BinaryOp::Add : BinaryOp::Sub, 0, 1, 2, 3, inplace};
  } else if (base == "rsub" && !inplace) {
    f = {BinaryOp::Sub, 1, 0, 2, 3, false};
  } else if (base == "mul") {
    f = {BinaryOp::Mul, 0, 1, -1, 2, inplace};
  } else if (base == "div") {
    f = {BinaryOp::Div, 0, 1, -1, 3, inplace};  // with no rounding mode (checked below)
  } else if (base == "threshold_backward" && !inplace) {
    f = {BinaryOp::ThresholdBackward, 0, 1, 2, 3, false};
  } else {
    return false;
  }
  return n == f.nargs;
}

bool lower_binary(Step& s, std::string_view name, const TracedArg* args, size_t n) {
  BinaryForm f;
  if (!binary_form(name, n, f) || s.results.size() != 1) return false;
  if (f.op == BinaryOp::Div && args[2].kind != K::None) return false;  // a rounding mode
  const TracedArg& a = args[f.a];
  const TracedArg& b = args[f.b];
  if (f.alpha >= 0 && args[f.alpha].kind != K::Scalar) return false;
  const Scalar alpha = f.alpha >= 0 ? *args[f.alpha].scalar : Scalar(1);
  // Tensors of one floating dtype, or one such tensor and a Scalar.
  const Tensor& out = s.results[0];
  ScalarType dtype = out.dtype();
  if (!is_floating_type(dtype)) return false;
  for (const TracedArg* x : {&a, &b}) {
    if (x->kind == K::Tensor) {
      if (x->tensor->dtype() != dtype) return false;
    } else if (x->kind != K::Scalar) {
      return false;
    }
  }
  if (a.kind != K::Tensor && b.kind != K::Tensor) return false;
  const Tensor& target = f.inplace ? *args[0].tensor : out;
  if (f.inplace && args[0].kind != K::Tensor) return false;
  TensorIteratorConfig config(s.name);
  config.add_output(target);
  if (a.kind == K::Tensor) {
    config.add_input(*a.tensor);
  } else {
    config.add_input(*a.scalar);
  }
  if (b.kind == K::Tensor) {
    config.add_input(*b.tensor);
  } else {
    config.add_input(*b.scalar);
  }
  if (f.inplace) config.no_resize_outputs();
  auto iter = direct_iterator(config, target, {a.kind == K::Tensor ? a.tensor : nullptr,
                                               b.kind == K::Tensor ? b.tensor : nullptr});
  if (!iter) return false;
  std::vector<Tensor> keep{out};
  if (a.kind == K::Tensor) keep.push_back(*a.tensor);
  if (b.kind == K::Tensor) keep.push_back(*b.tensor);
  as_kernel(s, [iter, op = f.op, alpha, keep] { kernels::binary_kernel(*iter, op, alpha); },
            f.inplace ? &target : nullptr);
  return true;
}

// copy_(self, src) and fill_(self, value): the iterators of src/ops/copy.cpp.
bool lower_copy_fill(Step& s, std::string_view name, const TracedArg* args, size_t n) {
  if (n < 2 || args[0].kind != K::Tensor) return false;
  const Tensor& self = *args[0].tensor;
  if (self.numel() == 0) return false;
  if (name == "copy_") {
    if (args[1].kind != K::Tensor || (n == 3 && args[2].kind != K::Bool) || n > 3) return false;
    const Tensor& src0 = *args[1].tensor;
    if (src0.unsafeGetTensorImpl()->storage()->data() == self.unsafeGetTensorImpl()->storage()->data()) return false;
    const Tensor src = src0.sizes().equals(self.sizes()) ? src0 : src0.expand(self.sizes());
    TensorIteratorConfig config("copy_");
    config.add_output(self).add_input(src).no_input_cast().common_dtype(self.dtype()).no_resize_outputs();
    auto iter = direct_iterator(config, self, {&src});
    if (!iter) return false;
    as_kernel(s, [iter, keep = std::vector<Tensor>{self, src}] { kernels::copy_kernel(*iter); }, &self);
    return true;
  }
  if (name == "fill_" && n == 2 && args[1].kind == K::Scalar) {
    TensorIteratorConfig config("fill_");
    config.add_output(self).common_dtype(self.dtype()).no_resize_outputs();
    auto iter = direct_iterator(config, self, {});
    if (!iter) return false;
    as_kernel(s, [iter, value = *args[1].scalar, keep = self] { kernels::fill_kernel(*iter, value); }, &self);
    return true;
  }
  return false;
}

// sum and mean of a floating tensor in its own dtype: reduce_kernel into the keepdim view of the
// contiguous result (src/ops/reduce.cpp's sum_like).
bool lower_reduction(Step& s, std::string_view name, const TracedArg* args, size_t n) {
  if ((name != "sum" && name != "mean") || n != 4 || s.results.size() != 1) return false;
  if (!is_float_tensor(args[0]) || (args[1].kind != K::IntList && args[1].kind != K::None) ||
      args[2].kind != K::Bool || args[3].kind != K::None)
    return false;
  const Tensor& self = *args[0].tensor;
  const Tensor& out = s.results[0];
  const int64_t nd = self.dim();
  if (out.dtype() != self.dtype() || !out.is_contiguous() || nd > 63) return false;
  uint64_t mask = 0;
  if (args[1].kind == K::None || args[1].count == 0) {
    mask = (uint64_t{1} << nd) - 1;
  } else {
    for (size_t i = 0; i < args[1].count; ++i) {
      int64_t d = args[1].ints[i];
      if (d < -nd || d >= nd) return false;
      if (d < 0) d += nd;
      if ((mask >> d) & 1) return false;
      mask |= uint64_t{1} << d;
    }
  }
  DimVector keep_sizes;
  int64_t count = 1;
  for (int64_t d = 0; d < nd; ++d) {
    const bool reduced = (mask >> d) & 1;
    keep_sizes.push_back(reduced ? 1 : self.size(d));
    if (reduced) count *= self.size(d);
  }
  if (out.numel() != [&] {
        int64_t m = 1;
        for (int64_t v : keep_sizes) m *= v;
        return m;
      }())
    return false;
  const TensorImpl* o = out.unsafeGetTensorImpl();
  const Tensor keep(IntrusivePtr<TensorImpl>::make(o->storage(), o->dtype(), IntArrayRef(keep_sizes),
                                                   contiguous_strides(IntArrayRef(keep_sizes)).ref(),
                                                   o->storage_offset()));
  kernels::ReduceSpec spec;
  spec.kind = kernels::ReduceKind::Sum;
  if (name == "mean") {
    spec.finish = kernels::Finish::Divide;
    spec.divisor = static_cast<double>(count);
  }
  as_kernel(s, [keep, self, mask, spec] { kernels::reduce_kernel(keep, self, mask, spec); }, nullptr);
  return true;
}

// The float32 math of the matmul family (linalg.cpp's float32_math), read at capture end.
kernels::Float32Math float32_math() {
  if (get_float32_matmul_precision() != "medium") return kernels::Float32Math::kExact;
  return has_bfloat16_instructions() ? kernels::Float32Math::kBFloat16 : kernels::Float32Math::kExact;
}

// out = a @ b (+ bias row): linalg::product's direct case (a contiguous result apart from its
// operands, the bias as the kernel's epilogue when alpha == beta).
bool gemm_step(Step& s, const Tensor& a, const Tensor& b, bool transpose_b, const Tensor* bias, const Scalar& beta,
               const Scalar& alpha) {
  const Tensor& out = s.results[0];
  const ScalarType dtype = a.dtype();
  if (b.dtype() != dtype || out.dtype() != dtype || !out.is_contiguous() || out.storage_offset() != 0) return false;
  if (a.dim() != 2 || b.dim() != 2 || out.dim() != 2) return false;
  kernels::Matrices ma = kernels::matrices(a);
  kernels::Matrices mb = kernels::matrices(b);
  if (transpose_b) {
    std::swap(mb.sizes[1], mb.sizes[2]);
    std::swap(mb.strides[1], mb.strides[2]);
  }
  const int64_t m = ma.rows(), n = mb.cols();
  if (out.size(0) != m || out.size(1) != n || ma.cols() != mb.rows()) return false;
  const void* od = out.unsafeGetTensorImpl()->storage()->data();
  auto shares = [&](const Tensor& t) { return t.unsafeGetTensorImpl()->storage()->data() == od; };
  if (shares(a) || shares(b)) return false;
  kernels::GemmEpilogue e;
  e.alpha = alpha;
  if (bias && bias->defined() && !beta.equal(0)) {
    // the fused row: alpha == beta and self one row of n values
    if (!alpha.equal(beta.toDouble()) || bias->dtype() != dtype || shares(*bias) || bias->dim() == 0 ||
        bias->size(-1) != n)
      return false;
    for (int64_t d = 0; d + 1 < bias->dim(); ++d)
      if (bias->size(d) != 1) return false;
    e.bias = bias->data_ptr();
    e.bias_stride = bias->stride(-1);
  }
  const kernels::Matrices mo{out.data_ptr(), {1, m, n}, {m * n, n, 1}};
  const kernels::Float32Math math = float32_math();
  as_kernel(
      s,
      [dtype, mo, ma, mb, e, math, keep = std::vector<Tensor>{a, b, out, bias ? *bias : Tensor()}] {
        kernels::gemm(dtype, mo, ma, mb, e, math);
      },
      nullptr);
  return true;
}

bool lower_matmul(Step& s, std::string_view name, const TracedArg* args, size_t n) {
  if (s.results.size() != 1 || !s.results[0].defined()) return false;
  if ((name == "mm" || name == "matmul") && n == 2 && args[0].kind == K::Tensor && args[1].kind == K::Tensor) {
    return gemm_step(s, *args[0].tensor, *args[1].tensor, false, nullptr, 1, 1);
  }
  if (name == "linear" && n == 3 && args[0].kind == K::Tensor && args[1].kind == K::Tensor) {
    const Tensor* bias = args[2].kind == K::Tensor ? args[2].tensor : nullptr;
    if (args[2].kind != K::Tensor && args[2].kind != K::None) return false;
    return gemm_step(s, *args[0].tensor, *args[1].tensor, true, bias, 1, 1);
  }
  if (name == "addmm" && n == 5 && args[0].kind == K::Tensor && args[1].kind == K::Tensor &&
      args[2].kind == K::Tensor && args[3].kind == K::Scalar && args[4].kind == K::Scalar) {
    return gemm_step(s, *args[1].tensor, *args[2].tensor, false, args[0].tensor, *args[3].scalar, *args[4].scalar);
  }
  return false;
}

}  // namespace

bool lower(Step& s) {
  if (!s.call || (s.mask & dispatch::kAutocastLayer)) return false;
  TracedArg args[16];
  const size_t n = s.call->args(args);
  const std::string_view name(s.name);
  if (name.empty()) return false;
  return lower_unary(s, name, args, n) || lower_binary(s, name, args, n) || lower_copy_fill(s, name, args, n) ||
         lower_reduction(s, name, args, n) || lower_matmul(s, name, args, n);
}

}  // namespace ember::graphs
