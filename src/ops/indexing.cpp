// Tensor.index / index_put_ with PyTorch's indexing: integers, slices, None, Ellipsis and bools
// make a view (basic indexing); index tensors then select elements (advanced indexing).
//
// Advanced indexing turns the index tensors into one int64 tensor of element offsets into the
// indexed tensor (bounds checked there, so nothing is written before every index is valid), then
// moves elements with the gather/scatter kernels over the result's shape.
#include <limits>

#include "dispatch/dispatch.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/shape.h"
#include "kernels/cpu/indexing.h"
#include "ops/indexing_util.h"

namespace ember {

void assert_no_internal_overlap(const Tensor& t, const char* op) {
  if (t.is_non_overlapping_and_dense()) return;
  for (int64_t d = 0; d < t.dim(); ++d) {
    EMBER_CHECK(!(t.stride(d) == 0 && t.size(d) > 1), op,
                "unsupported operation: more than one element of the written-to tensor refers to a single memory "
                "location. Please clone() the tensor before performing the operation.");
  }
}

void assert_no_overlap(const Tensor& written, const Tensor& input, const char* op) {
  if (written.numel() == 0 || input.numel() == 0) return;
  if (written.impl()->storage() != input.impl()->storage()) return;
  if (!written.is_non_overlapping_and_dense() || !input.is_non_overlapping_and_dense()) return;  // too hard to tell
  const char* a = static_cast<const char*>(written.data_ptr());
  const char* b = static_cast<const char*>(input.data_ptr());
  const char* a_end = a + written.nbytes();
  const char* b_end = b + input.nbytes();
  EMBER_CHECK(a_end <= b || b_end <= a, op,
              "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
              "memory location. Please clone() the tensor before performing the operation.");
}

namespace {

bool broadcastable(IntArrayRef a, IntArrayRef b) {
  for (size_t i = 1; i <= std::min(a.size(), b.size()); ++i) {
    const int64_t x = a[a.size() - i], y = b[b.size() - i];
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

bool expandable_to(IntArrayRef from, IntArrayRef to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 1; i <= from.size(); ++i) {
    const int64_t x = from[from.size() - i];
    if (x != 1 && x != to[to.size() - i]) return false;
  }
  return true;
}

// An advanced index resolved against the tensor it indexes: the result has shape
// src[:first] + index_shape + src[first + count:], and element offsets[i] of src is what the
// index tensors select at position i of index_shape.
struct AdvancedIndex {
  Tensor src;  // the indexed tensor, its indexed dims moved to the front when not adjacent
  int64_t first = 0, count = 0;
  DimVector index_shape;
  Tensor offsets;  // int64, contiguous, index_shape
  DimVector result_shape;

  int64_t after() const { return first + count; }
  // src over the result's shape: the indexed dims contribute through the offsets (stride 0 here)
  Tensor src_view() const {
    DimVector strides;
    for (int64_t d = 0; d < first; ++d) strides.push_back(src.stride(d));
    for (size_t i = 0; i < index_shape.size(); ++i) strides.push_back(0);
    for (int64_t d = after(); d < src.dim(); ++d) strides.push_back(src.stride(d));
    return make_view(src, result_shape, strides, src.storage_offset());
  }
  // the offsets with size-1 dims where the result has dims that are not indexed (broadcast by the
  // iterator; shaped as PyTorch reshapes its index tensors, so outputs get PyTorch's layout)
  Tensor offsets_view() const {
    DimVector shape(first, 1);
    for (int64_t s : index_shape) shape.push_back(s);
    for (int64_t d = after(); d < src.dim(); ++d) shape.push_back(1);
    return offsets.view(shape);
  }
};

AdvancedIndex make_advanced_index(const char* op, const Tensor& self, ArrayRef<std::optional<Tensor>> indices) {
  // bool/byte masks become one int64 index per dim they cover: the coordinates of their set elements
  std::vector<Tensor> expanded;
  for (const auto& opt : indices) {
    if (!opt || !opt->defined()) {
      expanded.emplace_back();
      continue;
    }
    const Tensor& idx = *opt;
    EMBER_CHECK(idx.dtype() == kLong || idx.dtype() == kByte || idx.dtype() == kBool, op,
                "tensors used as indices must be long, byte or bool tensors, got ", idx.dtype());
    if (idx.dtype() == kLong) {
      expanded.push_back(idx);
      continue;
    }
    const int64_t at = static_cast<int64_t>(expanded.size());
    EMBER_CHECK(at + idx.dim() <= self.dim(), op, "too many indices for tensor of dimension ", self.dim());
    for (int64_t j = 0; j < idx.dim(); ++j) {
      EMBER_CHECK(idx.size(j) == self.size(at + j), op, "The shape of the mask ", idx.sizes(), " at index ", j,
                  " does not match the shape of the indexed tensor ", self.sizes(), " at index ", at + j);
    }
    const Tensor nz = nonzero(idx);
    for (int64_t j = 0; j < idx.dim(); ++j) expanded.push_back(nz.select(1, j));
  }
  EMBER_CHECK(static_cast<int64_t>(expanded.size()) <= self.dim(), op, "too many indices for tensor of dimension ",
              self.dim());
  expanded.resize(self.dim());

  AdvancedIndex info;
  bool any = false, ok = true;
  for (const Tensor& t : expanded) {
    if (!t.defined()) continue;
    if (!any) {
      info.index_shape = t.sizes();
      any = true;
    } else if (broadcastable(info.index_shape, t.sizes())) {
      info.index_shape = infer_size(info.index_shape, t.sizes(), op);
    } else {
      ok = false;
    }
  }
  EMBER_CHECK(any, op, "expected at least one index tensor");
  if (!ok) {
    std::ostringstream shapes;
    bool sep = false;
    for (const Tensor& t : expanded) {
      if (!t.defined()) continue;
      shapes << (sep ? ", " : "") << t.sizes();
      sep = true;
    }
    detail::fail(op, "shape mismatch: indexing tensors could not be broadcast together with shapes ", shapes.str());
  }

  // Indexed dims that are not adjacent move to the front (NumPy's rule), adjacent ones stay.
  int64_t lo = -1, hi = -1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!expanded[d].defined()) continue;
    if (lo < 0) lo = d;
    hi = d;
  }
  bool adjacent = true;
  for (int64_t d = lo; d <= hi; ++d) adjacent = adjacent && expanded[d].defined();
  info.src = self;
  if (!adjacent) {
    DimVector perm;
    std::vector<Tensor> reordered;
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t d = 0; d < self.dim(); ++d) {
        if (expanded[d].defined() != (pass == 0)) continue;
        perm.push_back(d);
        reordered.push_back(expanded[d]);
      }
    }
    info.src = self.permute(perm);
    expanded = std::move(reordered);
    lo = 0;
    hi = 0;
    while (hi + 1 < self.dim() && expanded[hi + 1].defined()) ++hi;
  }
  info.first = lo;
  info.count = hi - lo + 1;
  for (int64_t d = 0; d < info.first; ++d) info.result_shape.push_back(info.src.size(d));
  for (int64_t s : info.index_shape) info.result_shape.push_back(s);
  for (int64_t d = info.after(); d < info.src.dim(); ++d) info.result_shape.push_back(info.src.size(d));

  info.offsets = make_empty(info.index_shape, kLong);
  int64_t result_numel = 1;
  for (int64_t s : info.result_shape) result_numel *= s;
  if (result_numel == 0) return info;  // as PyTorch, indices of an empty result are not looked at
  for (int64_t k = 0; k < info.count; ++k) {
    const int64_t d = info.first + k;
    TensorIterator iter(TensorIteratorConfig(op)
                            .add_output(info.offsets)
                            .add_owned_input(expanded[d].expand(info.index_shape))
                            .no_input_cast()
                            .common_dtype(kLong)
                            .no_resize_outputs());
    const int64_t size = info.src.size(d);
    if (auto bad = kernels::add_index_offsets(iter, size, info.src.stride(d), k == 0))
      detail::fail(op, "index ", *bad, " is out of bounds for dimension ", k, " with size ", size);
  }
  return info;
}

// The gradient of index: grad accumulated into zeros at the indexed positions. An op of its own
// so that double backward goes through it (PyTorch's index_put on zeros: IndexPutBackward0, whose
// gradient is grad indexed the same way).
struct IndexBackwardOp {
  static constexpr const char* name = "index_put";
  static Tensor run(const Tensor& grad, IntArrayRef sizes, ArrayRef<std::optional<Tensor>> indices) {
    Tensor out = zeros(sizes, TensorOptions().dtype(grad.dtype()));
    return index_put_(out, indices, grad, /*accumulate=*/true);
  }
  static void derivative(autograd::Derivative& d, const Tensor& grad, IntArrayRef,
                         ArrayRef<std::optional<Tensor>> indices) {
    d.name("IndexPutBackward0");
    d.grad(grad, [indices = std::vector<std::optional<Tensor>>(indices.begin(), indices.end())](const auto& c) {
      return index(c.grad(), indices);
    });
  }
};

struct IndexOp {
  static constexpr const char* name = "index";
  static Tensor run(const Tensor& self, ArrayRef<std::optional<Tensor>> indices) {
    const AdvancedIndex info = make_advanced_index(name, self, indices);
    const Tensor& src = info.src;
    const int64_t es = static_cast<int64_t>(self.element_size());
    if (src.is_contiguous()) {  // rows after the indexed dims are contiguous: memcpy them
      Tensor out = make_empty(info.result_shape, self.dtype());
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < info.first; ++d) outer *= src.size(d);
      for (int64_t d = info.after(); d < src.dim(); ++d) inner *= src.size(d);
      const int64_t outer_stride = src.numel() / std::max<int64_t>(outer, 1) * es;
      const Tensor flat = make_view(info.offsets, {info.offsets.numel()}, {1}, 0);
      kernels::index_select_rows_kernel(static_cast<char*>(out.data_ptr()), static_cast<const char*>(src.data_ptr()),
                                        outer, outer_stride, flat, es, inner * es);
      return out;
    }
    TensorIterator iter(TensorIteratorConfig(name)
                            .add_output(Tensor())
                            .add_owned_input(info.src_view())
                            .add_owned_input(info.offsets_view())
                            .no_input_cast()
                            .common_dtype(self.dtype()));
    // offsets were range-checked as they were made (add_index_offsets)
    kernels::index_gather_kernel(iter, es, std::numeric_limits<int64_t>::max());
    return iter.take_output();
  }
  // IndexBackward0 -- self: index_backward(zeros_like(self), indices, grad)
  static void derivative(autograd::Derivative& d, const Tensor& self, ArrayRef<std::optional<Tensor>> indices) {
    d.name("IndexBackward0");
    d.grad(self, [sizes = DimVector(self.sizes()),
                  indices = std::vector<std::optional<Tensor>>(indices.begin(), indices.end())](const auto& c) {
      return dispatch::call<IndexBackwardOp>(c.grad(), IntArrayRef(sizes), ArrayRef<std::optional<Tensor>>(indices));
    });
  }
};

struct IndexPutOp {
  static constexpr const char* name = "index_put_";
  using derivative_rule = autograd::IndexPutRule;
  static Tensor& run(Tensor& self, ArrayRef<std::optional<Tensor>> indices, const Tensor& values, bool accumulate) {
    EMBER_CHECK(values.defined(), name, "values is an undefined tensor");
    EMBER_CHECK(values.dtype() == self.dtype(), name, "Index put requires the source and destination dtypes match, got ",
                self.dtype(), " for the destination and ", values.dtype(), " for the source.");
    assert_no_overlap(self, values, name);
    for (const auto& idx : indices)
      if (idx && idx->defined()) assert_no_overlap(self, *idx, name);
    const AdvancedIndex info = make_advanced_index(name, self, indices);
    EMBER_CHECK(expandable_to(values.sizes(), info.result_shape), name, "shape mismatch: value tensor of shape ",
                values.sizes(), " cannot be broadcast to indexing result of shape ", info.result_shape.ref());
    if (info.src_view().numel() == 0) return self;
    TensorIterator iter(TensorIteratorConfig(name)
                            .add_owned_input(info.src_view())
                            .add_owned_input(values.expand(info.result_shape))
                            .add_owned_input(info.offsets_view())
                            .no_input_cast());
    kernels::IndexWalk walk;
    walk.indexed_stride = static_cast<int64_t>(self.element_size());
    // accumulating into duplicate offsets from several threads would race
    kernels::index_scatter_kernel(iter, walk, accumulate ? kernels::ScatterMode::Add : kernels::ScatterMode::Assign, 1,
                                  accumulate);
    self.impl()->storage()->bump_version();
    return self;
  }
};

// ---- basic indexing (libtorch's applySlicing) ------------------------------------------------

using indexing::TensorIndex;

Tensor select_checked(const Tensor& t, int64_t dim, int64_t index, int64_t real_dim) {
  EMBER_CHECK(t.dim() > 0, "index",
              "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert "
              "a 0-dim tensor to a number");
  const int64_t size = t.size(dim);
  EMBER_CHECK(index >= -size && index < size, "index", "index ", index, " is out of bounds for dimension ", real_dim,
              " with size ", size);
  return t.select(dim, index);
}

Tensor slice_checked(const Tensor& t, int64_t dim, const indexing::Slice& s) {
  EMBER_CHECK(s.step() != 0, "index", "slice step cannot be zero");
  EMBER_CHECK(s.step() > 0, "index", "step must be greater than zero");
  return t.slice(dim, s.start(), s.stop(), s.step());
}

// True and false index like a one-element and an empty index tensor over a new dim of size 1.
Tensor bool_index(bool value) { return value ? zeros({1}, TensorOptions().dtype(kLong)) : empty({0}, kLong); }

bool is_mask(const Tensor& t) { return t.dtype() == kBool || t.dtype() == kByte; }

// Applies integers, slices, None, Ellipsis and bools as views, collecting index tensors (one
// per dim of the returned view, empty where a dim is taken whole).
Tensor apply_slicing(const Tensor& self, ArrayRef<TensorIndex> indices, std::vector<std::optional<Tensor>>& out) {
  int64_t specified = 0, ellipses = 0;
  for (const TensorIndex& i : indices) {
    if (i.is_tensor()) {
      EMBER_CHECK(i.tensor().defined(), "index", "an index tensor is undefined");
      specified += is_mask(i.tensor()) ? i.tensor().dim() : 1;
    } else if (i.is_integer() || i.is_slice()) {
      ++specified;
    }
    ellipses += i.is_ellipsis();
  }
  EMBER_CHECK(specified <= self.dim(), "index", "too many indices for tensor of dimension ", self.dim());
  EMBER_CHECK(ellipses <= 1, "index", "an index can only have a single ellipsis ('...')");
  auto record = [&out](const Tensor& t, int64_t& dim) {
    out.resize(dim + 1);
    out[dim] = t;
    ++dim;
  };
  Tensor result = self;
  int64_t dim = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    const TensorIndex& idx = indices[i];
    if (idx.is_integer()) {
      result = select_checked(result, dim, idx.integer(), static_cast<int64_t>(i));
    } else if (idx.is_slice()) {
      result = slice_checked(result, dim++, idx.slice());
    } else if (idx.is_ellipsis()) {
      dim += self.dim() - specified;
    } else if (idx.is_none()) {
      result = result.unsqueeze(dim++);
    } else if (idx.is_boolean()) {
      result = result.unsqueeze(dim);
      record(bool_index(idx.boolean()), dim);
    } else {
      const Tensor& t = idx.tensor();
      if (t.dim() == 0 && is_integral_type(t.dtype(), true)) {
        if (!is_mask(t)) {
          result = select_checked(result, dim, t.item<int64_t>(), static_cast<int64_t>(i));
        } else {
          result = result.unsqueeze(dim);
          record(bool_index(t.item<bool>()), dim);
        }
      } else {
        record(t, dim);
      }
    }
  }
  return result;
}

// dst = src as libtorch's setitem copies: same shape, a 0-dim fill, or src without its
// leading size-1 dims broadcast to dst.
void copy_to(Tensor dst, const Tensor& src) {
  if (dst.sizes().equals(src.sizes())) {
    dst.copy_(src);
  } else if (src.dim() == 0) {
    dst.fill_(src);
  } else {
    IntArrayRef sizes = src.sizes();
    size_t lead = 0;
    while (lead < sizes.size() && sizes[lead] == 1) ++lead;
    dst.copy_(src.view(IntArrayRef(sizes.data() + lead, sizes.size() - lead)).expand(dst.sizes()));
  }
}

}  // namespace

namespace indexing {
TensorIndex::TensorIndex(const char* s) : v_(EllipsisIndexType{}) {
  EMBER_CHECK(std::string_view(s) == "...", "TensorIndex", "Expected \"...\" to represent an ellipsis index, but got \"",
              s, "\"");
}
}  // namespace indexing

Tensor index(const Tensor& self, ArrayRef<std::optional<Tensor>> indices) {
  return dispatch::call<IndexOp>(self, indices);
}
Tensor& index_put_(Tensor& self, ArrayRef<std::optional<Tensor>> indices, const Tensor& values, bool accumulate) {
  return dispatch::call<IndexPutOp>(self, indices, values, accumulate);
}

Tensor Tensor::index(ArrayRef<TensorIndex> indices) const {
  std::vector<std::optional<Tensor>> tensors;
  Tensor sliced = apply_slicing(*this, indices, tensors);
  if (tensors.empty()) {  // basic indexing only: a view, never self itself
    if (!sliced.is_same(*this)) return sliced;
    // a view op keeps the graph when self requires grad
    if (requires_grad()) return sliced.view(sliced.sizes());
    return make_view(sliced, sliced.sizes(), sliced.strides(), sliced.storage_offset());
  }
  return ember::index(sliced, tensors);
}
Tensor Tensor::index(std::initializer_list<TensorIndex> indices) const {
  return index(ArrayRef<TensorIndex>(indices.begin(), indices.size()));
}
Tensor Tensor::index(ArrayRef<std::optional<Tensor>> indices) const { return ember::index(*this, indices); }
Tensor& Tensor::index_put_(ArrayRef<std::optional<Tensor>> indices, const Tensor& values, bool accumulate) const {
  Tensor self = *this;
  ember::index_put_(self, indices, values, accumulate);
  return mutable_self();
}

Tensor& Tensor::index_put_(ArrayRef<TensorIndex> indices, const Tensor& value) const {
  EMBER_CHECK(value.defined(), "index_put_", "value is an undefined tensor");
  if (indices.size() == 1) {  // libtorch's shortcuts for a single basic index
    const TensorIndex& idx = indices[0];
    if (idx.is_boolean() && !idx.boolean()) return mutable_self();
    std::optional<Tensor> dst;
    if (idx.is_ellipsis()) dst = mutable_self();
    if (idx.is_none() || idx.is_boolean()) dst = unsqueeze(0);
    if (idx.is_integer()) dst = select_checked(mutable_self(), 0, idx.integer(), 0);
    if (idx.is_slice()) dst = slice_checked(mutable_self(), 0, idx.slice());
    if (dst) {
      copy_to(*dst, value);
      return mutable_self();
    }
  }
  std::vector<std::optional<Tensor>> tensors;
  Tensor sliced = apply_slicing(mutable_self(), indices, tensors);
  if (tensors.empty()) {
    copy_to(sliced, value);
    return mutable_self();
  }
  IntArrayRef sizes = value.sizes();
  size_t lead = 0;
  while (lead < sizes.size() && sizes[lead] == 1) ++lead;
  ember::index_put_(sliced, tensors, lead ? value.view(IntArrayRef(sizes.data() + lead, sizes.size() - lead)) : value);
  return mutable_self();
}
Tensor& Tensor::index_put_(ArrayRef<TensorIndex> indices, const Scalar& value) const {
  return index_put_(indices, full({}, value, TensorOptions().dtype(dtype())));
}
Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Tensor& value) const {
  return index_put_(ArrayRef<TensorIndex>(indices.begin(), indices.size()), value);
}
Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Scalar& value) const {
  return index_put_(ArrayRef<TensorIndex>(indices.begin(), indices.size()), value);
}

}  // namespace ember
