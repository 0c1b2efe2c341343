// Joining and rearranging: cat, stack, repeat, flip, roll, tril/triu. Most are copies between
// views: the copy kernel (TensorIterator) does casting, layouts and threads; contiguous cases
// take a memcpy of rows.
#include "dispatch/dispatch.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/shape.h"
#include "kernels/cpu/indexing.h"
#include "ops/indexing_util.h"
#include "ops/quantized_util.h"

namespace ember {
namespace {

// Legacy PyTorch let 1-D empty tensors join anything; cat still skips them.
bool cat_should_skip(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

// channels_last (3d) when every input suggests it, else contiguous (PyTorch's cat rule).
MemoryFormat cat_memory_format(TensorList tensors) {
  std::optional<MemoryFormat> format;
  for (const Tensor& t : tensors) {
    const MemoryFormat f = t.suggest_memory_format();
    if (f == MemoryFormat::Contiguous || (format && *format != f)) return MemoryFormat::Contiguous;
    format = f;
  }
  return *format;
}

// Copies the inputs into out, the k-th into the block that starts at offsets[k] along dim.
// Contiguous inputs of out's dtype into a contiguous out are one block of each of out's rows
// (the dims before dim); the others are copies into views.
void cat_copy(Tensor& out, TensorList tensors, const std::vector<int64_t>& offsets, int64_t dim) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= out.size(d);
  for (int64_t d = dim + 1; d < out.dim(); ++d) inner *= out.size(d);
  const int64_t es = static_cast<int64_t>(out.element_size());
  std::vector<kernels::RowBlock> blocks;
  for (size_t k = 0; k < tensors.size(); ++k) {
    const Tensor& src = tensors[k];
    if (offsets[k] < 0 || src.numel() == 0) continue;  // (skipped)
    const int64_t len = src.size(dim);
    if (out.is_contiguous() && src.is_contiguous() && src.dtype() == out.dtype()) {
      blocks.push_back({static_cast<const char*>(src.data_ptr()), offsets[k] * inner * es, len * inner * es});
    } else {
      out.narrow(dim, offsets[k], len).copy_(src);
    }
  }
  if (!blocks.empty())
    kernels::cat_rows_kernel(static_cast<char*>(out.data_ptr()), out.size(dim) * inner * es, blocks.data(),
                             blocks.size(), outer);
}

Tensor& cat_into(const char* op, Tensor& out, bool have_out, TensorList tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), op, "expected a non-empty list of Tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].defined(), op, "tensor at position ", i, " is undefined");
    EMBER_CHECK(tensors[i].dim() > 0, op, "zero-dimensional tensor (at position ", i, ") cannot be concatenated");
  }
  ResultTypeState types;
  for (const Tensor& t : tensors) types.update(t);
  const ScalarType dtype = types.result();

  std::optional<size_t> ref;
  for (size_t i = 0; i < tensors.size() && !ref; ++i)
    if (!cat_should_skip(tensors[i])) ref = i;
  DimVector shape(tensors[0].sizes());  // every input skipped: the result is empty like them
  if (ref) {
    const Tensor& r = tensors[*ref];
    dim = maybe_wrap_dim(dim, r.dim(), op);
    shape = r.sizes();
    shape[dim] = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const Tensor& t = tensors[i];
      if (cat_should_skip(t)) continue;
      EMBER_CHECK(t.dim() == r.dim(), op, "Tensors must have same number of dimensions: got ", r.dim(), " and ",
                  t.dim());
      for (int64_t d = 0; d < r.dim(); ++d) {
        EMBER_CHECK(d == dim || t.size(d) == r.size(d), op, "Sizes of tensors must match except in dimension ", dim,
                    ". Expected size ", r.size(d), " but got size ", t.size(d), " for tensor number ", i,
                    " in the list.");
      }
      shape[dim] += t.size(dim);
    }
  }
  const MemoryFormat format = cat_memory_format(tensors);

  if (have_out) {
    EMBER_CHECK(can_cast(dtype, out.dtype()), op, "input types can't be cast to the desired output type ",
                out.dtype());
    const bool resize = !out.sizes().equals(shape);
    if (!resize) assert_no_internal_overlap(out, op);
    for (const Tensor& t : tensors) assert_no_overlap(out, t, op);
    if (resize) out.resize_(shape, format);
  } else {
    out = make_empty(shape, dtype, format);
  }
  if (ref) {
    std::vector<int64_t> offsets(tensors.size(), -1);
    int64_t offset = 0;
    for (size_t k = 0; k < tensors.size(); ++k) {
      if (cat_should_skip(tensors[k])) continue;
      offsets[k] = offset;
      offset += tensors[k].size(dim);
    }
    cat_copy(out, tensors, offsets, dim);
  }
  out.impl()->storage()->bump_version();
  return out;
}

struct CatOp {
  static constexpr const char* name = "cat";
  static constexpr dispatch::Autocast autocast = dispatch::Autocast::kPromote;
  static constexpr bool quantized = true;  // per-tensor schemes, requantized to the first's parameters
  static Tensor run(TensorList tensors, int64_t dim) {
    for (const Tensor& t : tensors)
      if (t.defined() && t.is_quantized()) return quantized::cat(tensors, dim);
    Tensor out;
    return cat_into(name, out, false, tensors, dim);
  }
  // CatBackward0 -- tensors: cat_tensors_backward: each input's slice of grad (the skipped legacy
  // empty 1-D inputs get none)
  static void derivative(autograd::Derivative& d, TensorList tensors, int64_t dim) {
    d.name("CatBackward0");
    const int64_t wrapped = maybe_wrap_dim(dim, d.result().dim(), name);
    int64_t offset = 0;
    for (const Tensor& t : tensors) {
      const bool skipped = t.dim() == 1 && t.size(0) == 0 && d.result().dim() != 1;
      const int64_t size = skipped ? 0 : t.size(wrapped);
      d.grad(t, [wrapped, offset, size, skipped, sizes = DimVector(t.sizes())](const auto& c) {
        if (skipped) return zeros(sizes, TensorOptions().dtype(c.grad().dtype()));
        return c.grad().narrow(wrapped, offset, size);
      });
      offset += size;
    }
  }
};
struct CatOutOp {
  static constexpr const char* name = "cat_out";
  static Tensor& run(Tensor& out, TensorList tensors, int64_t dim) {
    EMBER_CHECK(out.defined(), name, "out is an undefined tensor");
    return cat_into(name, out, true, tensors, dim);
  }
};

struct StackOp {
  static constexpr const char* name = "stack";
  static constexpr dispatch::Autocast autocast = dispatch::Autocast::kPromote;
  static Tensor run(TensorList tensors, int64_t dim) {
    EMBER_CHECK(!tensors.empty(), name, "stack expects a non-empty TensorList");
    const Tensor& first = tensors[0];
    for (size_t i = 0; i < tensors.size(); ++i) {
      EMBER_CHECK(tensors[i].defined(), name, "tensor at position ", i, " is undefined");
      EMBER_CHECK(tensors[i].sizes().equals(first.sizes()), name, "stack expects each tensor to be equal size, but got ",
                  first.sizes(), " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
    }
    dim = maybe_wrap_dim(dim, first.dim() + 1, name);
    DimVector shape(first.sizes());
    shape.insert(dim, static_cast<int64_t>(tensors.size()));
    if (dim < first.dim()) return cat(tensors, dim).view(shape);  // splitting a dim is always a view
    std::vector<Tensor> columns;
    for (const Tensor& t : tensors) columns.push_back(t.unsqueeze(dim));
    return cat(columns, dim);
  }
  // StackBackward0 -- tensors: grad.unbind(dim)
  static void derivative(autograd::Derivative& d, TensorList tensors, int64_t dim) {
    d.name("StackBackward0");
    const int64_t wrapped = maybe_wrap_dim(dim, d.result().dim(), name);
    for (size_t i = 0; i < tensors.size(); ++i)
      d.grad(tensors[i], [wrapped, i = static_cast<int64_t>(i)](const auto& c) { return c.grad().select(wrapped, i); });
  }
};

struct RepeatOp {
  static constexpr const char* name = "repeat";
  static constexpr bool conj_aware = true;  // copies from a view of self: copy_ reads the bit
  static Tensor run(const Tensor& self, IntArrayRef repeats) {
    const int64_t nd = static_cast<int64_t>(repeats.size());
    EMBER_CHECK(nd >= self.dim(), name,
                "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
    const int64_t lead = nd - self.dim();
    DimVector shape(nd), pair_sizes, pair_strides;
    for (int64_t d = 0; d < nd; ++d) {
      const int64_t size = d < lead ? 1 : self.size(d - lead);
      shape[d] = size * repeats[d];
    }
    for (int64_t d = 0; d < nd; ++d)
      EMBER_CHECK(shape[d] >= 0, name, "Trying to create tensor with negative dimension ", shape[d], ": ", shape.ref());
    Tensor out = make_empty(shape, self.dtype());
    if (out.numel() == 0) return out;
    // out seen as [r0, s0, r1, s1, ...] takes self broadcast along every r_d
    for (int64_t d = 0; d < nd; ++d) {
      const int64_t size = d < lead ? 1 : self.size(d - lead);
      pair_sizes.push_back(repeats[d]);
      pair_sizes.push_back(size);
      pair_strides.push_back(0);
      pair_strides.push_back(d < lead ? 0 : self.stride(d - lead));
    }
    out.view(pair_sizes).copy_(make_view(self, pair_sizes, pair_strides, self.storage_offset()));
    return out;
  }
  // RepeatBackward0 -- self: repeat_backward(grad, repeats, self.sizes()): grad seen as
  // [r0, s0, r1, s1, ...] summed over the repeat dims (and the leading new dims)
  static void derivative(autograd::Derivative& d, const Tensor& self, IntArrayRef repeats) {
    d.name("RepeatBackward0");
    d.grad(self, [sizes = DimVector(self.sizes()), repeats = DimVector(repeats)](const auto& c) {
      const TensorOptions options = TensorOptions().dtype(c.grad().dtype());
      for (int64_t r : repeats)
        if (r == 0) return zeros(sizes, options);
      const int64_t lead = static_cast<int64_t>(repeats.size() - sizes.size());
      Tensor grad = c.grad();
      if (lead > 0) grad = grad.sum(leading_dims(lead));
      if (sizes.empty()) return grad;
      DimVector pairs, sum_dims;
      for (size_t i = 0; i < sizes.size(); ++i) {
        pairs.push_back(repeats[lead + i]);
        sum_dims.push_back(static_cast<int64_t>(pairs.size()) - 1);
        pairs.push_back(sizes[i]);
      }
      return grad.reshape(pairs).sum(sum_dims);
    });
  }
  static DimVector leading_dims(int64_t n) {
    DimVector dims;
    for (int64_t i = 0; i < n; ++i) dims.push_back(i);
    return dims;
  }
};

struct FlipOp {
  static constexpr const char* name = "flip";
  static constexpr bool conj_aware = true;  // copies from a view of self: copy_ reads the bit
  static Tensor run(const Tensor& self, IntArrayRef dims) {
    SmallVector<bool, 8> flipped(std::max<int64_t>(self.dim(), 1), false);
    for (int64_t d : dims) {
      const int64_t w = maybe_wrap_dim(d, self.dim(), name);
      EMBER_CHECK(!flipped[w], name, "dim ", w, " appears multiple times in the list of dims");
      flipped[w] = true;
    }
    Tensor out = empty_like(self);
    if (self.numel() == 0) return out;
    // read self backwards along the flipped dims: a negative-stride view, internal to this op
    DimVector strides(self.strides());
    int64_t offset = self.storage_offset();
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (!flipped[d]) continue;
      offset += (self.size(d) - 1) * strides[d];
      strides[d] = -strides[d];
    }
    out.copy_(make_view(self, self.sizes(), strides, offset));
    return out;
  }
  // FlipBackward0 -- self: grad.flip(dims)
  static void derivative(autograd::Derivative& d, const Tensor& self, IntArrayRef dims) {
    d.name("FlipBackward0");
    d.grad(self, [dims = DimVector(dims)](const auto& c) { return c.grad().flip(dims); });
  }
};

struct RollOp {
  static constexpr const char* name = "roll";
  static Tensor run(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
    EMBER_CHECK(!shifts.empty(), name, "`shifts` required");
    if (dims.empty()) {
      EMBER_CHECK(shifts.size() == 1, name, "shifts and dimensions must align. shifts: ", shifts.size(), ", dims:",
                  dims.size());
      return roll(self.flatten(), shifts, {0}).view(self.sizes());
    }
    EMBER_CHECK(shifts.size() == dims.size(), name, "shifts and dimensions must align. shifts: ", shifts.size(),
                ", dims:", dims.size());
    for (int64_t d : dims) maybe_wrap_dim(d, self.dim(), name);
    if (self.numel() == 0) return self.clone();
    // as PyTorch: one dim at a time, each the cat of the two pieces the shift cuts
    Tensor cur = self;
    for (size_t i = 0; i < dims.size(); ++i) {
      const int64_t dim = maybe_wrap_dim(dims[i], self.dim(), name);
      const int64_t size = cur.size(dim);
      int64_t start = (size - shifts[i]) % size;
      if (start < 0) start += size;
      cur = cat({cur.narrow(dim, start, size - start), cur.narrow(dim, 0, start)}, dim);
    }
    return cur;
  }
  // RollBackward0 -- self: grad.roll(negated shifts, dims)
  static void derivative(autograd::Derivative& d, const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
    d.name("RollBackward0");
    DimVector back;
    for (int64_t s : shifts) back.push_back(-s);
    d.grad(self, [back, dims = DimVector(dims)](const auto& c) { return c.grad().roll(back, dims); });
  }
};

void check_tri(const char* op, const Tensor& self) {
  EMBER_CHECK(self.dim() >= 2, op, "input tensor must have at least 2 dimensions, got ", self.dim());
}

// tril/triu of self into contiguous `out` (which may be self when self is contiguous).
void tri_into(Tensor& out, const Tensor& self, int64_t diagonal, bool lower) {
  const Tensor src = self.contiguous();
  const int64_t rows = self.size(-2), cols = self.size(-1);
  const int64_t batch = rows * cols == 0 ? 0 : self.numel() / (rows * cols);
  kernels::tril_kernel(static_cast<char*>(out.data_ptr()), static_cast<const char*>(src.data_ptr()), batch, rows,
                       cols, static_cast<int64_t>(self.element_size()), diagonal, lower);
}

template <bool Lower>
struct TriOp {
  static constexpr const char* name = Lower ? "tril" : "triu";
  static Tensor run(const Tensor& self, int64_t diagonal) {
    check_tri(name, self);
    Tensor out = make_empty(self.sizes(), self.dtype());
    tri_into(out, self, diagonal, Lower);
    return out;
  }
  // TrilBackward0 / TriuBackward0 -- self: grad.tril(diagonal) / grad.triu(diagonal)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t diagonal) {
    d.name(Lower ? "TrilBackward0" : "TriuBackward0");
    d.grad(self, [diagonal](const auto& c) { return Lower ? c.grad().tril(diagonal) : c.grad().triu(diagonal); });
  }
};
template <bool Lower>
struct TriInplaceOp {
  static constexpr const char* name = Lower ? "tril_" : "triu_";
  using out_of_place = TriOp<Lower>;
  static Tensor& run(Tensor& self, int64_t diagonal) {
    check_tri(name, self);
    if (self.is_contiguous()) {
      tri_into(self, self, diagonal, Lower);
    } else {
      Tensor tmp = make_empty(self.sizes(), self.dtype());
      tri_into(tmp, self, diagonal, Lower);
      self.copy_(tmp);
    }
    self.impl()->storage()->bump_version();
    return self;
  }
};

}  // namespace

Tensor cat(TensorList tensors, int64_t dim) { return dispatch::call<CatOp>(tensors, dim); }
Tensor& cat_out(Tensor& out, TensorList tensors, int64_t dim) { return dispatch::call<CatOutOp>(out, tensors, dim); }
Tensor stack(TensorList tensors, int64_t dim) { return dispatch::call<StackOp>(tensors, dim); }
Tensor repeat(const Tensor& self, IntArrayRef repeats) { return dispatch::call<RepeatOp>(self, repeats); }
Tensor flip(const Tensor& self, IntArrayRef dims) { return dispatch::call<FlipOp>(self, dims); }
Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  return dispatch::call<RollOp>(self, shifts, dims);
}
Tensor tril(const Tensor& self, int64_t diagonal) { return dispatch::call<TriOp<true>>(self, diagonal); }
Tensor triu(const Tensor& self, int64_t diagonal) { return dispatch::call<TriOp<false>>(self, diagonal); }

Tensor Tensor::repeat(IntArrayRef repeats) const { return ember::repeat(*this, repeats); }
Tensor Tensor::flip(IntArrayRef dims) const { return ember::flip(*this, dims); }
Tensor Tensor::roll(IntArrayRef shifts, IntArrayRef dims) const { return ember::roll(*this, shifts, dims); }
Tensor Tensor::tril(int64_t diagonal) const { return ember::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return ember::triu(*this, diagonal); }
Tensor& Tensor::tril_(int64_t diagonal) const { return dispatch::call<TriInplaceOp<true>>(mutable_self(), diagonal); }
Tensor& Tensor::triu_(int64_t diagonal) const { return dispatch::call<TriInplaceOp<false>>(mutable_self(), diagonal); }

}  // namespace ember
