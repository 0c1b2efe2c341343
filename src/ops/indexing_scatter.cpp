// Ops that read or write along one dim at positions an index tensor names: index_select,
// gather, scatter, scatter_add, index_add; and the mask ops masked_select, nonzero, one_hot.
//
// Reads run the iterator over the result, the indexed operand given stride 0 along the indexed
// dim and the index adding the offset. Writes run it over every position but the indexed dim
// (squashed to size 1) and walk that dim at each position (kernels::IndexWalk), so repeated
// indices are applied in order on one thread. Every index is range-checked before anything is
// written into an existing tensor; gather, and scatter/scatter_add into their copy of self, check
// as they read (one pass over the index), their fresh result dropped on error.
#include <limits>

#include "dispatch/dispatch.h"
#include "ember/factory.h"
#include "ember/autograd.h"
#include "ember/complex_ops.h"
#include "ember/indexing.h"
#include "ember/pointwise.h"
#include "ember/shape.h"
#include "kernels/cpu/indexing.h"
#include "ops/indexing_util.h"

namespace ember {
namespace {

using kernels::IndexWalk;
using kernels::ScatterMode;

int64_t byte_stride(const Tensor& t, int64_t dim) {
  return t.dim() == 0 ? 0 : t.stride(dim) * static_cast<int64_t>(t.element_size());
}

// 0-dim tensors take part as one-element vectors (PyTorch's ensure_nonempty_dim).
Tensor as_1d(const Tensor& t) { return t.dim() == 0 ? make_view(t, {1}, {1}, t.storage_offset()) : t; }

// `t` over `shape` with its own strides and `dim` squashed to one element.
Tensor walk_view(const Tensor& t, IntArrayRef shape, int64_t dim) {
  DimVector sizes(shape);
  sizes[dim] = 1;
  return make_view(t, sizes, t.strides(), t.storage_offset());
}

// Whether a and b have the same sizes but along dim (and the same rank).
bool same_sizes_but(const Tensor& a, const Tensor& b, int64_t dim) {
  if (a.dim() != b.dim()) return false;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (d != dim && a.size(d) != b.size(d)) return false;
  }
  return true;
}

// Where t's element [o][l][i] lies over (the dims before dim, dim, the dims after it); nullopt
// where the dims before or after dim do not collapse into one (a slice in their middle).
std::optional<kernels::WalkStrides> walk_strides(const Tensor& t, int64_t dim) {
  const auto collapsed = [&](int64_t b, int64_t e) -> std::optional<int64_t> {  // dims [b, e) as one
    bool first = true;
    int64_t stride = 0, next = 0;  // next: the stride the dim before must have
    for (int64_t d = e - 1; d >= b; --d) {
      if (t.size(d) == 1) continue;
      if (first) {
        stride = t.stride(d);
        first = false;
      } else if (t.stride(d) != next) {
        return std::nullopt;
      }
      next = t.stride(d) * t.size(d);
    }
    return stride;
  };
  const std::optional<int64_t> outer = collapsed(0, dim), inner = collapsed(dim + 1, t.dim());
  if (!outer || !inner) return std::nullopt;
  return kernels::WalkStrides{*outer, t.stride(dim), *inner};
}

// The same element at every position of `shape` (an index or value read only along the walk).
Tensor fixed_view(const Tensor& t, IntArrayRef shape) {
  return make_view(t, shape, DimVector(shape.size(), 0), t.storage_offset());
}

// "index 5 is out of bounds for dimension 0 with size 3", before anything is written.
void check_index_range(const char* op, const Tensor& index, int64_t dim, int64_t size) {
  if (index.numel() == 0) return;
  TensorIterator iter(TensorIteratorConfig(op).add_input(index).no_input_cast());
  if (auto bad = kernels::find_index_out_of_range(iter, 0, size))
    detail::fail(op, "index ", *bad, " is out of bounds for dimension ", dim, " with size ", size);
}

// Writes along `dim` of `dst` (1-D or more) at index[p], from src walked in index's shape; raises
// on an index value out of range (after writing the ones before it).
void scatter_walk(const char* op, Tensor& dst, int64_t dim, const Tensor& index, const Tensor& src, bool src_fixed,
                  ScatterMode mode) {
  const auto fail = [&](int64_t bad) {
    detail::fail(op, "index ", bad, " is out of bounds for dimension ", dim, " with size ", dst.size(dim));
  };
  const std::optional<kernels::WalkStrides> src_walk =
      src_fixed ? kernels::WalkStrides{0, 0, 0} : src.sizes() == index.sizes() ? walk_strides(src, dim) : std::nullopt;
  if (dst.is_contiguous() && index.is_contiguous() && same_sizes_but(index, dst, dim) && src_walk) {
    // no iterator to set up
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= dst.size(d);
    for (int64_t d = dim + 1; d < dst.dim(); ++d) inner *= dst.size(d);
    if (auto bad = kernels::index_scatter_dense(dst.dtype(), dst.data_ptr(), src.data_ptr(), src_fixed, *src_walk,
                                                index.data_ptr<int64_t>(), outer, index.size(dim), dst.size(dim),
                                                inner, mode))
      fail(*bad);
    return;
  }
  DimVector squashed(index.sizes());
  squashed[dim] = 1;
  TensorIterator iter(TensorIteratorConfig(op)
                          .add_owned_input(walk_view(dst, index.sizes(), dim))
                          .add_owned_input(src_fixed ? fixed_view(src, squashed) : walk_view(src, index.sizes(), dim))
                          .add_owned_input(walk_view(index, index.sizes(), dim))
                          .no_input_cast());
  IndexWalk walk;
  walk.len = index.size(dim);
  walk.index_step = byte_stride(index, dim);
  walk.plain_step = src_fixed ? 0 : byte_stride(src, dim);
  walk.indexed_stride = byte_stride(dst, dim);
  walk.bound = static_cast<uint64_t>(dst.size(dim));
  if (auto bad = kernels::index_scatter_kernel(iter, walk, mode, 1, false)) fail(*bad);
}

struct IndexSelectOp {
  static constexpr const char* name = "index_select";
  static Tensor run(const Tensor& self, int64_t dim, const Tensor& index) {
    EMBER_CHECK(index.dim() <= 1, name, "Index is supposed to be a vector, got index of size ", index.sizes());
    EMBER_CHECK(index.dtype() == kLong || index.dtype() == kInt, name, "Expected dtype int32 or int64 for index, got ",
                index.dtype());
    dim = maybe_wrap_dim(dim, self.dim(), name);
    check_index_range(name, index, dim, self.dim() == 0 ? 1 : self.size(dim));
    if (self.dim() == 0) return self.clone();  // PyTorch: a 0-dim input gives a copy of itself
    DimVector shape(self.sizes());
    shape[dim] = index.numel();
    Tensor out = make_empty(shape, self.dtype());
    if (out.numel() == 0) return out;
    const int64_t es = static_cast<int64_t>(self.element_size());
    if (self.is_contiguous()) {  // whole rows after `dim` are contiguous: memcpy them
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < dim; ++d) outer *= shape[d];
      for (int64_t d = dim + 1; d < self.dim(); ++d) inner *= shape[d];
      kernels::index_select_rows_kernel(static_cast<char*>(out.data_ptr()), static_cast<const char*>(self.data_ptr()),
                                        outer, self.size(dim) * inner * es, index, inner * es, inner * es);
      return out;
    }
    // out[..., k, ...] = self[..., index[k], ...]: self with stride 0 along dim, offset by the index
    DimVector self_strides(self.strides()), index_strides(shape.size(), 0);
    self_strides[dim] = 0;
    index_strides[dim] = index.dim() == 0 ? 0 : index.stride(0);
    TensorIterator iter(TensorIteratorConfig(name)
                            .add_output(out)
                            .add_owned_input(make_view(self, shape, self_strides, self.storage_offset()))
                            .add_owned_input(make_view(index, shape, index_strides, index.storage_offset()))
                            .no_input_cast()
                            .common_dtype(self.dtype())
                            .no_resize_outputs());
    kernels::index_gather_kernel(iter, byte_stride(self, dim), self.size(dim));  // checked above
    return out;
  }
  // IndexSelectBackward0 -- self: index_select_backward(grad, self.sizes(), dim, index)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t dim, const Tensor& index) {
    d.name("IndexSelectBackward0");
    d.grad(self, [sizes = DimVector(self.sizes()), dim, i = d.save(index)](const auto& c) {
      if (sizes.empty()) return c.grad().clone();
      return zeros(sizes, TensorOptions().dtype(c.grad().dtype())).index_add_(dim, c[i], c.grad());
    });
  }
};

struct GatherOp {
  static constexpr const char* name = "gather";
  // GatherBackward0 -- self: gather_backward(grad, self, dim, index, sparse_grad): grad added into
  // zeros at the gathered positions
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t dim, const Tensor& index) {
    d.name("GatherBackward0");
    d.grad(self, [sizes = DimVector(self.sizes()), dim, i = d.save(index)](const auto& c) {
      return zeros(sizes, TensorOptions().dtype(c.grad().dtype())).scatter_add_(dim, c[i], c.grad());
    });
  }
  static Tensor run(const Tensor& self, int64_t dim, const Tensor& index) {
    EMBER_CHECK(index.dtype() == kLong, name, "Expected dtype int64 for index, got ", index.dtype());
    dim = maybe_wrap_dim(dim, self.dim(), name);
    Tensor out = make_empty(index.sizes(), self.dtype());
    if (index.numel() == 0) return out;
    const Tensor s = as_1d(self), ix = as_1d(index), o = as_1d(out);
    EMBER_CHECK(ix.dim() == s.dim(), name, "Index tensor must have the same number of dimensions as input tensor");
    for (int64_t d = 0; d < s.dim(); ++d) {
      EMBER_CHECK(d == dim || ix.size(d) <= s.size(d), name, "Size does not match at dimension ", d,
                  " expected index ", index.sizes(), " to be smaller than self ", self.sizes(),
                  " apart from dimension ", dim);
    }
    const std::optional<kernels::WalkStrides> walk = walk_strides(s, dim);
    if (walk && ix.is_contiguous() && same_sizes_but(ix, s, dim)) {  // no iterator to set up
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < dim; ++d) outer *= s.size(d);
      for (int64_t d = dim + 1; d < s.dim(); ++d) inner *= s.size(d);
      if (auto bad = kernels::index_gather_dense(self.dtype(), o.data_ptr(), s.data_ptr(), *walk,
                                                 ix.data_ptr<int64_t>(), outer, ix.size(dim), s.size(dim), inner))
        detail::fail(name, "index ", *bad, " is out of bounds for dimension ", dim, " with size ", s.size(dim));
      return out;
    }
    DimVector self_strides(s.strides());
    self_strides[dim] = 0;  // the index supplies the position along dim
    TensorIterator iter(TensorIteratorConfig(name)
                            .add_output(o)
                            .add_owned_input(make_view(s, ix.sizes(), self_strides, s.storage_offset()))
                            .add_input(ix)
                            .no_input_cast()
                            .common_dtype(self.dtype())
                            .no_resize_outputs());
    // the kernel checks the index as it reads it: `out` is discarded if a value is out of range
    if (auto bad = kernels::index_gather_kernel(iter, byte_stride(s, dim), s.size(dim)))
      detail::fail(name, "index ", *bad, " is out of bounds for dimension ", dim, " with size ", s.size(dim));
    return out;
  }
};

// scatter_ / scatter_add_ in place; `src` undefined means the scalar `value`. Into a `fresh` tensor
// (the out-of-place ops' copy of self, dropped on error) the kernel checks the index as it reads it;
// into an existing one the whole index is checked before anything is written.
Tensor& scatter_inplace(const char* op, Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        const Scalar& value, ScatterMode mode, bool fresh = false) {
  EMBER_CHECK(index.dtype() == kLong, op, "Expected dtype int64 for index, got ", index.dtype());
  EMBER_CHECK(!src.defined() || src.dtype() == self.dtype(), op, "Expected self.dtype to be equal to src.dtype (got ",
              self.dtype(), " and ", src.dtype(), ")");
  dim = maybe_wrap_dim(dim, self.dim(), op);
  assert_no_internal_overlap(self, op);
  assert_no_overlap(self, index, op);
  if (src.defined()) assert_no_overlap(self, src, op);
  if (index.numel() == 0) return self;
  Tensor s = as_1d(self);
  const Tensor ix = as_1d(index);
  EMBER_CHECK(ix.dim() == s.dim(), op, "Index tensor must have the same number of dimensions as self tensor");
  EMBER_CHECK(!src.defined() || as_1d(src).dim() == s.dim(), op,
              "Index tensor must have the same number of dimensions as src tensor");
  bool wrong = false;
  for (int64_t d = 0; d < s.dim(); ++d) {
    if (d != dim && ix.size(d) > s.size(d)) wrong = true;
    if (src.defined() && ix.size(d) > as_1d(src).size(d)) wrong = true;
  }
  if (src.defined()) {
    EMBER_CHECK(!wrong, op, "Expected index ", index.sizes(), " to be smaller than self ", self.sizes(),
                " apart from dimension ", dim, " and to be smaller size than src ", src.sizes());
  } else {
    EMBER_CHECK(!wrong, op, "Expected index ", index.sizes(), " to be smaller than self ", self.sizes(),
                " apart from dimension ", dim);
  }
  if (!fresh) check_index_range(op, ix, dim, s.size(dim));
  if (src.defined()) {
    scatter_walk(op, s, dim, ix, as_1d(src), false, mode);
  } else {
    scatter_walk(op, s, dim, ix, full({}, value, TensorOptions().dtype(self.dtype())), true, mode);
  }
  self.impl()->storage()->bump_version();
  return self;
}

struct ScatterOp {
  static constexpr const char* name = "scatter";
  static Tensor run(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const Scalar& value) {
    Tensor out = self.clone(MemoryFormat::Contiguous);
    return scatter_inplace(name, out, dim, index, src, value, ScatterMode::Assign, /*fresh=*/true);
  }
  // ScatterBackward0 (src) / ScatterBackward1 (value) -- self: grad.scatter(dim, index, 0);
  // src: grad.gather(dim, index)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t dim, const Tensor& index,
                         const Tensor& src, const Scalar&) {
    d.name(src.defined() ? "ScatterBackward0" : "ScatterBackward1");
    const autograd::Saved i = d.save(index);
    d.grad(self, [dim, i](const auto& c) { return c.grad().scatter(dim, c[i], 0); });
    if (src.defined()) d.grad(src, [dim, i](const auto& c) { return c.grad().gather(dim, c[i]); });
  }
};
struct ScatterInplaceOp {
  static constexpr const char* name = "scatter_";
  using out_of_place = ScatterOp;
  static Tensor& run(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const Scalar& value) {
    return scatter_inplace(name, self, dim, index, src, value, ScatterMode::Assign);
  }
};
// scatter with reduce "add" / "multiply": not differentiable in PyTorch 1.13 either.
ScatterMode scatter_reduce_mode(const char* op, std::string_view reduce) {
  EMBER_CHECK(reduce == "add" || reduce == "multiply", op, "reduce argument must be either add or multiply, got ",
              reduce);
  return reduce == "add" ? ScatterMode::Add : ScatterMode::Multiply;
}
struct ScatterReduceInplaceOp {
  static constexpr const char* name = "scatter_";
  static Tensor& run(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const Scalar& value,
                     std::string_view reduce) {
    return scatter_inplace(name, self, dim, index, src, value, scatter_reduce_mode(name, reduce));
  }
};
struct ScatterReduceOp {
  static constexpr const char* name = "scatter";
  static Tensor run(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const Scalar& value,
                    std::string_view reduce) {
    const ScatterMode mode = scatter_reduce_mode(name, reduce);
    Tensor out = self.clone(MemoryFormat::Contiguous);
    return scatter_inplace(name, out, dim, index, src, value, mode, /*fresh=*/true);
  }
};
struct ScatterAddOp {
  static constexpr const char* name = "scatter_add";
  static Tensor run(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
    Tensor out = self.clone(MemoryFormat::Contiguous);
    return scatter_inplace(name, out, dim, index, src, 0, ScatterMode::Add, /*fresh=*/true);
  }
  // ScatterAddBackward0 -- self: grad; src: grad.gather(dim, index)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t dim, const Tensor& index,
                         const Tensor& src) {
    d.name("ScatterAddBackward0");
    d.grad(self, [](const auto& c) { return c.grad(); });
    d.grad(src, [dim, i = d.save_for(src, index)](const auto& c) { return c.grad().gather(dim, c[i]); });
  }
};
struct ScatterAddInplaceOp {
  static constexpr const char* name = "scatter_add_";
  using out_of_place = ScatterAddOp;
  static Tensor& run(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
    return scatter_inplace(name, self, dim, index, src, 0, ScatterMode::Add);
  }
};

// self[..., index[k], ...] += alpha * source[..., k, ...]. As in PyTorch 1.13, a source slice
// broadcasts to self's slice.
Tensor& index_add_inplace(const char* op, Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                          const Scalar& alpha) {
  EMBER_CHECK(index.dim() <= 1, op, "Index is supposed to be a vector, but got dim: ", index.dim(),
              " with type: ", index.dtype(), " and size: ", index.sizes());
  EMBER_CHECK(index.dtype() == kLong || index.dtype() == kInt, op,
              "Expected dtype int32/int64 for index but got: ", index.dtype());
  EMBER_CHECK(self.dtype() == source.dtype(), op, "self (", self.dtype(), ") and source (", source.dtype(),
              ") must have the same scalar type");
  dim = maybe_wrap_dim(dim, self.dim(), op);
  EMBER_CHECK(dim == 0 || dim < source.dim(), op, "Indexing dim ", dim,
              " is out of bounds of the source tensor with dim ", source.dim());
  if (is_complex_type(self.dtype()) && self.dim() > 0 && source.dim() > 0 && !alpha.isComplex()) {
    // a complex sum adds real and imaginary parts apart: the real views' kernel, at the same dim
    Tensor real_self = view_as_real(self);
    index_add_inplace(op, real_self, dim, index, view_as_real(source), alpha);
    return self;
  }
  const int64_t n = index.numel();
  const int64_t src_len = source.dim() == 0 ? 1 : source.size(dim);
  EMBER_CHECK(n == src_len, op, "Number of indices (", n, ") should be equal to source.size(dim): (", src_len,
              "), for dim: ", dim);
  assert_no_internal_overlap(self, op);
  assert_no_overlap(self, index, op);
  assert_no_overlap(self, source, op);
  Tensor s = as_1d(self);
  DimVector self_slice(s.sizes());
  self_slice.erase(dim);
  DimVector src_slice_sizes(source.sizes()), src_slice_strides(source.strides());
  if (source.dim() > 0) {
    src_slice_sizes.erase(dim);
    src_slice_strides.erase(dim);
  }
  EMBER_CHECK(infer_size(self_slice, src_slice_sizes, op) == self_slice.ref(), op, "source slice of shape ",
              src_slice_sizes.ref(), " cannot be broadcast to self slice of shape ", self_slice.ref());
  check_index_range(op, index, dim, s.size(dim));
  if (n == 0 || s.numel() == 0) return self;
  // source seen over self's positions: broadcast dims get stride 0, `dim` squashed
  Tensor slice_view =
      make_view(source, src_slice_sizes, src_slice_strides, source.storage_offset()).expand(self_slice);
  DimVector sizes(slice_view.sizes()), strides(slice_view.strides());
  sizes.insert(dim, 1);
  strides.insert(dim, 0);
  DimVector squashed(s.sizes());
  squashed[dim] = 1;
  // the scatter kernel reads int64 indices only (one copy of its loops)
  const Tensor index64 = index.dtype() == kLong ? index : index.to(kLong);
  TensorIterator iter(TensorIteratorConfig(op)
                          .add_owned_input(walk_view(s, squashed, dim))
                          .add_owned_input(make_view(source, sizes, strides, source.storage_offset()))
                          .add_owned_input(fixed_view(index64, squashed))
                          .no_input_cast());
  IndexWalk walk;
  walk.len = n;
  walk.index_step = byte_stride(index64, 0);
  walk.plain_step = byte_stride(source, dim);
  walk.indexed_stride = byte_stride(s, dim);
  kernels::index_scatter_kernel(iter, walk, ScatterMode::Add, alpha, false);
  self.impl()->storage()->bump_version();
  return self;
}

struct IndexAddOp {
  static constexpr const char* name = "index_add";
  static Tensor run(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
    Tensor out = self.clone(MemoryFormat::Contiguous);
    return index_add_inplace(name, out, dim, index, source, alpha);
  }
  // IndexAddBackward0 -- self: grad; source: maybe_multiply(grad.index_select(dim, index).expand_as(source), alpha)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t dim, const Tensor& index,
                         const Tensor& source, const Scalar& alpha) {
    d.name("IndexAddBackward0");
    d.grad(self, [](const auto& c) { return c.grad(); });
    d.grad(source, [dim, i = d.save_for(source, index), sizes = DimVector(source.sizes()), alpha](const auto& c) {
      const Tensor index = c[i];
      Tensor g = sizes.empty() ? c.grad().index_select(dim, index.reshape({-1})).reshape({})
                               : c.grad().index_select(dim, index).expand(sizes);
      return alpha.equal(1) ? g : g * alpha;
    });
  }
};
struct IndexAddInplaceOp {
  static constexpr const char* name = "index_add_";
  using out_of_place = IndexAddOp;
  static Tensor& run(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
    return index_add_inplace(name, self, dim, index, source, alpha);
  }
};

struct MaskedSelectOp {
  static constexpr const char* name = "masked_select";
  static Tensor run(const Tensor& self, const Tensor& mask) {
    EMBER_CHECK(mask.dtype() == kBool || mask.dtype() == kByte, name,
                "expected BoolTensor or ByteTensor for mask, got ", mask.dtype());
    const DimVector shape = infer_size(self.sizes(), mask.sizes(), name);
    return kernels::masked_select_kernel(self.expand(shape).contiguous(), mask.expand(shape).contiguous());
  }
  // MaskedSelectBackward0 -- self: masked_select_backward(grad, self, mask): grad written at the mask's
  // true positions of the broadcast shape (the engine sums the broadcast away). One kernel, or,
  // when the gradient is itself differentiated (create_graph), ops with derivatives.
  static void derivative(autograd::Derivative& d, const Tensor& self, const Tensor& mask) {
    d.name("MaskedSelectBackward0");
    d.grad(self, [m = d.save(mask), sizes = DimVector(self.sizes())](const auto& c) {
      const Tensor mask = c[m];
      const DimVector shape = infer_size(sizes, mask.sizes(), name);
      if (!GradMode::is_enabled()) return kernels::masked_expand_kernel(c.grad().contiguous(), mask.expand(shape).contiguous());
      const Tensor positions = mask.expand(shape).reshape({-1}).nonzero().squeeze(1);
      int64_t n = 1;
      for (int64_t s : shape) n *= s;
      return zeros({n}, TensorOptions().dtype(c.grad().dtype())).index_add_(0, positions, c.grad()).view(shape);
    });
  }
};

struct NonzeroOp {
  static constexpr const char* name = "nonzero";
  static constexpr bool differentiable = false;  // integer results
  static Tensor run(const Tensor& self) {
    // a complex element counts where either part does (-0 + 0i does not)
    if (is_complex_type(self.dtype())) return kernels::nonzero_kernel(ne(self, 0).contiguous());
    return kernels::nonzero_kernel(self.contiguous());
  }
};

struct OneHotOp {
  static constexpr const char* name = "one_hot";
  static Tensor run(const Tensor& self, int64_t num_classes) {
    EMBER_CHECK(self.dtype() == kLong, name, "one_hot is only applicable to index tensor.");
    if (self.numel() == 0) {
      EMBER_CHECK(num_classes > 0, name, "Can not infer total number of classes from empty tensor.");
    } else {
      TensorIterator check(TensorIteratorConfig(name).add_input(self).no_input_cast());
      auto bad = kernels::find_index_out_of_range(check, 0, std::numeric_limits<int64_t>::max());
      EMBER_CHECK(!bad || *bad >= 0, name, "Class values must be non-negative.");
      TensorIterator iter(TensorIteratorConfig(name).add_input(self).no_input_cast());
      const int64_t max = kernels::max_index(iter);
      if (num_classes == -1) {
        num_classes = max + 1;
      } else {
        EMBER_CHECK(max < num_classes, name, "Class values must be smaller than num_classes.");
      }
    }
    DimVector shape(self.sizes());
    shape.push_back(num_classes);
    Tensor out = zeros(shape, TensorOptions().dtype(kLong));
    if (out.numel() > 0) out.scatter_(-1, self.unsqueeze(-1), 1);
    return out;
  }
};

}  // namespace

void value_selecting_derivative(autograd::Derivative& d, const Tensor& self, int64_t dim, bool keepdim,
                                const char* node) {
  d.name(node);
  d.grad(self, 0, [sizes = DimVector(self.sizes()), i = d.save_result(1), dim = maybe_wrap_dim(dim, self.dim(), node),
                   keepdim](const auto& c) {
    if (sizes.empty()) return c.grad();
    Tensor grad = c.grad(), index = c[i];
    if (!keepdim) {
      grad = grad.unsqueeze(dim);
      index = index.unsqueeze(dim);
    }
    return zeros(sizes, TensorOptions().dtype(grad.dtype())).scatter_(dim, index, grad);
  });
}

void evenly_distributed_derivative(autograd::Derivative& d, const Tensor& self, const char* node) {
  d.name(node);
  d.grad(self, [s = d.save(self), r = d.save_result()](const auto& c) {
    const Tensor x = c[s], result = c[r];
    // PyTorch's CPU form, a fill of zeros: its recorded backward is a MaskedFillBackward1 as theirs
    const Tensor mask = result.isnan().item<bool>() ? x.isnan() : x == result;
    Tensor g = zeros_like(x);
    g.masked_fill_(mask, c.grad() / mask.sum());
    return g;
  });
}

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  return dispatch::call<IndexSelectOp>(self, dim, index);
}
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, bool) {
  return dispatch::call<GatherOp>(self, dim, index);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  EMBER_CHECK(src.defined(), "scatter", "src is an undefined tensor");
  return dispatch::call<ScatterOp>(self, dim, index, src, Scalar(0));
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return dispatch::call<ScatterOp>(self, dim, index, Tensor(), value);
}
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return dispatch::call<ScatterAddOp>(self, dim, index, src);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce) {
  EMBER_CHECK(src.defined(), "scatter", "src is an undefined tensor");
  return dispatch::call<ScatterReduceOp>(self, dim, index, src, Scalar(0), reduce);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce) {
  return dispatch::call<ScatterReduceOp>(self, dim, index, Tensor(), value, reduce);
}
std::vector<Tensor> where(const Tensor& condition) { return condition.nonzero().unbind(1); }
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  return dispatch::call<IndexAddOp>(self, dim, index, source, alpha);
}
Tensor masked_select(const Tensor& self, const Tensor& mask) { return dispatch::call<MaskedSelectOp>(self, mask); }
Tensor nonzero(const Tensor& self) { return dispatch::call<NonzeroOp>(self); }
namespace nn::functional {
Tensor one_hot(const Tensor& self, int64_t num_classes) { return dispatch::call<OneHotOp>(self, num_classes); }
}  // namespace nn::functional

Tensor Tensor::index_select(int64_t dim, const Tensor& index) const { return ember::index_select(*this, dim, index); }
Tensor Tensor::gather(int64_t dim, const Tensor& index, bool sparse_grad) const {
  return ember::gather(*this, dim, index, sparse_grad);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter(*this, dim, index, src);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Scalar& value) const {
  return ember::scatter(*this, dim, index, value);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) const {
  EMBER_CHECK(src.defined(), "scatter_", "src is an undefined tensor");
  return dispatch::call<ScatterInplaceOp>(mutable_self(), dim, index, src, Scalar(0));
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Scalar& value) const {
  return dispatch::call<ScatterInplaceOp>(mutable_self(), dim, index, Tensor(), value);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce) const {
  return ember::scatter(*this, dim, index, src, reduce);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce) const {
  return ember::scatter(*this, dim, index, value, reduce);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce) const {
  EMBER_CHECK(src.defined(), "scatter_", "src is an undefined tensor");
  return dispatch::call<ScatterReduceInplaceOp>(mutable_self(), dim, index, src, Scalar(0), reduce);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce) const {
  return dispatch::call<ScatterReduceInplaceOp>(mutable_self(), dim, index, Tensor(), value, reduce);
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter_add(*this, dim, index, src);
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) const {
  return dispatch::call<ScatterAddInplaceOp>(mutable_self(), dim, index, src);
}
Tensor Tensor::index_add(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) const {
  return ember::index_add(*this, dim, index, source, alpha);
}
Tensor& Tensor::index_add_(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) const {
  return dispatch::call<IndexAddInplaceOp>(mutable_self(), dim, index, source, alpha);
}
Tensor Tensor::masked_select(const Tensor& mask) const { return ember::masked_select(*this, mask); }
Tensor Tensor::nonzero() const { return ember::nonzero(*this); }

}  // namespace ember
