// Views: new TensorImpls over the same storage. No data moves here (reshape copies only when
// no view is possible, as PyTorch).
#include <numeric>

#include "autograd/variable.h"
#include "dispatch/dispatch.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/shape.h"
#include "ops/indexing_util.h"
#include "ops/quantized_util.h"

namespace ember {
namespace {

// Sizes with one -1 inferred from numel ("shape '[2, -1]' is invalid for input of size 7").
DimVector infer_view_size(const char* op, IntArrayRef shape, int64_t numel) {
  DimVector out(shape);
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      EMBER_CHECK(!infer, op, "only one dimension can be inferred");
      infer = i;
    } else {
      EMBER_CHECK(shape[i] >= 0, op, "invalid shape dimension ", shape[i]);
      known *= shape[i];
    }
  }
  if (infer) {
    EMBER_CHECK(known != 0, op, "cannot reshape tensor of 0 elements into shape ", shape,
                " because the unspecified dimension size -1 can be any value and is ambiguous");
    EMBER_CHECK(numel % known == 0, op, "shape '", shape, "' is invalid for input of size ", numel);
    out[*infer] = numel / known;
  } else {
    EMBER_CHECK(known == numel, op, "shape '", shape, "' is invalid for input of size ", numel);
  }
  return out;
}

// Strides that let `newshape` view memory laid out as (oldshape, oldstride), or nullopt
// when some new dim would span two non-contiguous chunks.
std::optional<DimVector> compute_view_strides(IntArrayRef oldshape, IntArrayRef oldstride, IntArrayRef newshape) {
  DimVector newstride(newshape.size());
  int64_t numel = 1;
  for (int64_t s : oldshape) numel *= s;
  if (numel == 0 || oldshape.empty()) {
    if (numel == 0 && oldshape.equals(newshape)) return DimVector(oldstride);
    return contiguous_strides(newshape);
  }
  int64_t view_d = static_cast<int64_t>(newshape.size()) - 1;
  int64_t chunk_base_stride = oldstride.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(oldshape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= oldshape[tensor_d];
    if (tensor_d == 0 ||
        (oldshape[tensor_d - 1] != 1 && oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
        newstride[view_d] = view_numel * chunk_base_stride;
        view_numel *= newshape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = oldstride[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return newstride;
}

struct ViewOp {
  static constexpr const char* name = "view";
  static constexpr bool conj_aware = true;  // a view: keeps the conjugate bit
  static constexpr bool quantized = true;  // keeps the quantizer (make_view)
  static Tensor run(const Tensor& self, IntArrayRef sizes) {
    DimVector shape = infer_view_size(name, sizes, self.numel());
    auto strides = compute_view_strides(self.sizes(), self.strides(), shape);
    EMBER_CHECK(strides, name,
                "view size is not compatible with input tensor's size and stride (at least one dimension spans "
                "across two contiguous subspaces). Use .reshape(...) instead. Input size ",
                self.sizes(), ", strides ", self.strides(), ", requested ", sizes);
    return make_view(self, shape, *strides, self.storage_offset());
  }
  // ViewBackward0 -- self: grad.reshape(self.sizes())
  static void derivative(autograd::Derivative& d, const Tensor& self, IntArrayRef) {
    d.name("ViewBackward0");
    d.grad(self, [sizes = DimVector(self.sizes())](const auto& c) { return c.grad().reshape(sizes); });
  }
};

// Reinterprets the bytes as another dtype. With a different element size the last dim must be
// contiguous and it shrinks or grows by the size ratio (PyTorch's view_dtype).
struct ViewDtypeOp {
  static constexpr const char* name = "view";
  static Tensor run(const Tensor& self, ScalarType dtype) {
    if (dtype == self.dtype()) return self;
    const int64_t from = static_cast<int64_t>(self.element_size()), to = static_cast<int64_t>(element_size(dtype));
    DimVector sizes(self.sizes()), strides(self.strides());
    int64_t offset = self.storage_offset();
    if (from != to) {
      EMBER_CHECK(self.dim() > 0, name, "self.dim() cannot be 0 to view ", self.dtype(), " as ", dtype,
                  " (different element sizes)");
      const int64_t last = self.dim() - 1;
      if (from > to) {
        const int64_t ratio = from / to;
        EMBER_CHECK(strides[last] == 1, name, "self.stride(-1) must be 1 to view ", self.dtype(), " as ", dtype,
                    " (different element sizes), but got ", strides[last]);
        offset *= ratio;
        sizes[last] *= ratio;
        for (int64_t d = 0; d < last; ++d) strides[d] *= ratio;
      } else {
        const int64_t ratio = to / from;
        EMBER_CHECK(sizes[last] % ratio == 0, name, "self.size(-1) must be divisible by ", ratio, " to view ",
                    self.dtype(), " as ", dtype, " (different element sizes), but got ", sizes[last]);
        EMBER_CHECK(offset % ratio == 0, name, "self.storage_offset() must be divisible by ", ratio, " to view ",
                    self.dtype(), " as ", dtype, " (different element sizes), but got ", offset);
        EMBER_CHECK(strides[last] == 1, name, "self.stride(-1) must be 1 to view ", self.dtype(), " as ", dtype,
                    " (different element sizes), but got ", strides[last]);
        offset /= ratio;
        sizes[last] /= ratio;
        for (int64_t d = 0; d < last; ++d) {
          EMBER_CHECK(strides[d] % ratio == 0, name, "self.stride(", d, ") must be divisible by ", ratio, " to view ",
                      self.dtype(), " as ", dtype, " (different element sizes), but got ", strides[d]);
          strides[d] /= ratio;
        }
      }
    }
    return Tensor(IntrusivePtr<TensorImpl>::make(self.impl()->storage(), dtype, sizes, strides, offset));
  }
};

struct ReshapeOp {
  static constexpr const char* name = "reshape";
  static constexpr bool conj_aware = true;  // a view: keeps the conjugate bit
  static constexpr bool quantized = true;  // keeps the quantizer (make_view)
  static Tensor run(const Tensor& self, IntArrayRef sizes) {
    DimVector shape = infer_view_size(name, sizes, self.numel());
    if (auto strides = compute_view_strides(self.sizes(), self.strides(), shape))
      return make_view(self, shape, *strides, self.storage_offset());
    return contiguous_alias(self.clone(MemoryFormat::Contiguous), shape);  // a fresh tensor, not a view
  }
  // ReshapeAliasBackward0 -- self: grad.reshape(self.sizes())
  static void derivative(autograd::Derivative& d, const Tensor& self, IntArrayRef) {
    d.name("ReshapeAliasBackward0");
    d.grad(self, [sizes = DimVector(self.sizes())](const auto& c) { return c.grad().reshape(sizes); });
  }
};

// A view's geometry over its storage, kept by the backward of the strided views.
struct Geometry {
  DimVector sizes, strides;
  int64_t offset;
  explicit Geometry(const Tensor& t) : sizes(t.sizes()), strides(t.strides()), offset(t.storage_offset()) {}
  // The storage position of every element (int64, of the view's shape).
  Tensor positions() const {
    Tensor pos = scalar_tensor(offset, TensorOptions().dtype(kLong));
    const size_t nd = sizes.size();
    for (size_t d = 0; d < nd; ++d) {
      DimVector shape(nd, 1);
      shape[d] = sizes[d];
      pos = pos + arange(sizes[d], TensorOptions().dtype(kLong)).view(shape) * strides[d];
    }
    return pos;
  }
};

// The gradient of a view (as_strided, diagonal, unfold) made of ops: grad summed into the storage
// positions the view reads (overlapping windows add up), then read back at the input's positions.
// Input elements sharing a position (an expanded input) split it evenly, as PyTorch's
// as_strided_backward.
Tensor strided_view_backward(const Tensor& grad, const Geometry& input, const Geometry& view) {
  const TensorOptions options = TensorOptions().dtype(grad.dtype());
  const Tensor in_pos = input.positions().reshape({-1});
  if (in_pos.numel() == 0 || grad.numel() == 0) return zeros(input.sizes, options);
  const Tensor out_pos = view.positions().reshape({-1});
  const int64_t lo = std::min(in_pos.min().item<int64_t>(), out_pos.min().item<int64_t>());
  const int64_t hi = std::max(in_pos.max().item<int64_t>(), out_pos.max().item<int64_t>());
  const Tensor storage = zeros({hi - lo + 1}, options).index_add(0, out_pos - lo, grad.reshape({-1}));
  Tensor result = storage.index_select(0, in_pos - lo);
  // (counts in the real dtype: a complex gradient's too, whose max has no meaning)
  const TensorOptions real = TensorOptions().dtype(to_real_value_type(grad.dtype()));
  const Tensor count = zeros({hi - lo + 1}, real).index_add(0, in_pos - lo, ones({in_pos.numel()}, real));
  if (count.max().item<double>() > 1) result = result / count.index_select(0, in_pos - lo);
  return result.view(input.sizes);
}

struct AsStridedOp {
  static constexpr const char* name = "as_strided";
  static constexpr bool conj_aware = true;  // a view: keeps the conjugate bit
  static constexpr bool quantized = true;  // keeps the quantizer (make_view)
  static Tensor run(const Tensor& self, IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> offset) {
    const int64_t off = offset.value_or(self.storage_offset());
    EMBER_CHECK(sizes.size() == strides.size(), name, "mismatch in length of strides and shape: ", sizes, " vs ",
                strides);
    EMBER_CHECK(off >= 0, name, "Tensor: invalid storage offset ", off);
    int64_t extent = 1;
    bool empty = false;
    for (size_t i = 0; i < sizes.size(); ++i) {
      EMBER_CHECK(sizes[i] >= 0, name, "Trying to create tensor with negative dimension ", sizes[i], ": ", sizes);
      EMBER_CHECK(strides[i] >= 0, name, "Negative strides are not supported at the moment, got strides: ", strides);
      if (sizes[i] == 0) empty = true;
      extent += (sizes[i] - 1) * strides[i];
    }
    if (!empty) {
      const int64_t need = (off + extent) * static_cast<int64_t>(self.element_size());
      const int64_t have = static_cast<int64_t>(self.impl()->storage()->nbytes());
      EMBER_CHECK(need <= have, name, "sizes ", sizes, ", strides ", strides, ", storage offset ", off,
                  " and itemsize ", self.element_size(), " requiring a storage size of ", need,
                  " are out of bounds for storage of size ", have);
    }
    return make_view(self, sizes, strides, off);
  }
  // AsStridedBackward0 -- self: as_strided_backward(grad, self geometry, size, stride, storage_offset)
  static void derivative(autograd::Derivative& d, const Tensor& self, IntArrayRef, IntArrayRef,
                         std::optional<int64_t>) {
    d.name("AsStridedBackward0");
    d.grad(self, [in = Geometry(self), out = Geometry(d.result())](const auto& c) {
      return strided_view_backward(c.grad(), in, out);
    });
  }
};

struct PermuteOp {
  static constexpr const char* name = "permute";
  static constexpr bool conj_aware = true;  // a view: keeps the conjugate bit
  static constexpr bool quantized = true;  // keeps the quantizer (make_view)
  static Tensor run(const Tensor& self, IntArrayRef dims) {
    const int64_t nd = self.dim();
    EMBER_CHECK(static_cast<int64_t>(dims.size()) == nd, name,
                "number of dimensions in the tensor input does not match the length of the desired ordering of "
                "dimensions i.e. input.dim() = ", nd, " is not equal to len(dims) = ", dims.size());
    DimVector sizes(nd), strides(nd);
    SmallVector<bool, 8> seen(nd, false);
    for (int64_t i = 0; i < nd; ++i) {
      const int64_t d = maybe_wrap_dim(dims[i], nd, name);
      EMBER_CHECK(!seen[d], name, "duplicate dims are not allowed.");
      seen[d] = true;
      sizes[i] = self.sizes()[d];
      strides[i] = self.strides()[d];
    }
    return make_view(self, sizes, strides, self.storage_offset());
  }
  // PermuteBackward0 -- self: permute_backwards(grad, dims): the inverse permutation
  static void derivative(autograd::Derivative& d, const Tensor& self, IntArrayRef dims) {
    d.name("PermuteBackward0");
    DimVector inverse(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) inverse[maybe_wrap_dim(dims[i], self.dim(), name)] = static_cast<int64_t>(i);
    d.grad(self, [inverse](const auto& c) { return c.grad().permute(inverse); });
  }
};

struct TransposeOp {
  static constexpr const char* name = "transpose";
  static constexpr bool conj_aware = true;  // a view: keeps the conjugate bit
  static constexpr bool quantized = true;  // keeps the quantizer (make_view)
  static Tensor run(const Tensor& self, int64_t d0, int64_t d1) {
    const int64_t nd = self.dim();
    d0 = maybe_wrap_dim(d0, nd, name);
    d1 = maybe_wrap_dim(d1, nd, name);
    DimVector sizes(self.sizes()), strides(self.strides());
    if (nd == 0) return make_view(self, sizes, strides, self.storage_offset());
    std::swap(sizes[d0], sizes[d1]);
    std::swap(strides[d0], strides[d1]);
    return make_view(self, sizes, strides, self.storage_offset());
  }
  // TransposeBackward0 -- self: grad.transpose(dim0, dim1)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t d0, int64_t d1) {
    d.name("TransposeBackward0");
    d.grad(self, [d0, d1](const auto& c) { return c.grad().transpose(d0, d1); });
  }
};

// The gradients of select and slice: grad written into zeros of the input's shape. Ops of their
// own so that double backward goes through them (their gradient is the select/slice of grad).
struct SelectBackwardOp {
  static constexpr const char* name = "select_backward";
  static Tensor run(const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t index) {
    Tensor out = zeros(sizes, TensorOptions().dtype(grad.dtype()));
    out.select(dim, index).copy_(grad);
    return out;
  }
  // SelectBackwardBackward0 -- grad_output: grad.select(dim, index)
  static void derivative(autograd::Derivative& d, const Tensor& grad, IntArrayRef, int64_t dim, int64_t index) {
    d.name("SelectBackwardBackward0");
    d.grad(grad, [dim, index](const auto& c) { return c.grad().select(dim, index); });
  }
};
Tensor select_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t index) {
  return dispatch::call<SelectBackwardOp>(grad, sizes, dim, index);
}
struct SliceBackwardOp {
  static constexpr const char* name = "slice_backward";
  static Tensor run(const Tensor& grad, IntArrayRef sizes, int64_t dim, std::optional<int64_t> start,
                    std::optional<int64_t> end, int64_t step) {
    Tensor out = zeros(sizes, TensorOptions().dtype(grad.dtype()));
    out.slice(dim, start, end, step).copy_(grad);
    return out;
  }
  // SliceBackwardBackward0 -- grad_output: grad.slice(dim, start, end, step)
  static void derivative(autograd::Derivative& d, const Tensor& grad, IntArrayRef, int64_t dim,
                         std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
    d.name("SliceBackwardBackward0");
    d.grad(grad, [dim, start, end, step](const auto& c) { return c.grad().slice(dim, start, end, step); });
  }
};
Tensor slice_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, std::optional<int64_t> start,
                      std::optional<int64_t> end, int64_t step) {
  return dispatch::call<SliceBackwardOp>(grad, sizes, dim, start, end, step);
}

struct SelectOp {
  static constexpr const char* name = "select";
  static constexpr bool conj_aware = true;  // a view: keeps the conjugate bit
  static constexpr bool quantized = true;  // along a per-channel axis: the channels' parameters too
  static Tensor run(const Tensor& self, int64_t dim, int64_t index) {
    EMBER_CHECK(self.dim() > 0, name, "select() cannot be applied to a 0-dim tensor.");
    dim = maybe_wrap_dim(dim, self.dim(), name);
    const int64_t size = self.sizes()[dim];
    EMBER_CHECK(index >= -size && index < size, name, "select(): index ", index, " out of range for tensor of size ",
                self.sizes(), " at dimension ", dim);
    if (index < 0) index += size;
    DimVector sizes(self.sizes()), strides(self.strides());
    const int64_t offset = self.storage_offset() + index * strides[dim];
    sizes.erase(dim);
    strides.erase(dim);
    if (self.is_quantized())
      return quantized::wrap(make_view(quantized::raw_view(self), sizes, strides, offset),
                             quantized::subtensor_quantizer(self, dim, index, index + 1, 1, true));
    return make_view(self, sizes, strides, offset);
  }
  // SelectBackward0 -- self: select_backward(grad, self.sizes(), dim, index)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t dim, int64_t index) {
    d.name("SelectBackward0");
    d.grad(self, [sizes = DimVector(self.sizes()), dim, index](const auto& c) {
      return select_backward(c.grad(), sizes, dim, index);
    });
  }
};

struct SliceOp {
  static constexpr const char* name = "slice";
  static constexpr bool conj_aware = true;  // a view: keeps the conjugate bit
  static constexpr bool quantized = true;  // along a per-channel axis: the channels' parameters too
  static Tensor run(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                    int64_t step) {
    EMBER_CHECK(self.dim() > 0, name, "slice() cannot be applied to a 0-dim tensor.");
    EMBER_CHECK(step > 0, name, "slice step must be positive, got ", step);
    dim = maybe_wrap_dim(dim, self.dim(), name);
    const int64_t size = self.sizes()[dim];
    int64_t s = start.value_or(0), e = end.value_or(size);
    if (s < 0) s += size;
    if (e < 0) e += size;
    s = std::clamp<int64_t>(s, 0, size);
    e = std::clamp<int64_t>(e, s, size);
    DimVector sizes(self.sizes()), strides(self.strides());
    const int64_t offset = self.storage_offset() + s * strides[dim];
    sizes[dim] = (e - s + step - 1) / step;
    strides[dim] *= step;
    if (self.is_quantized())
      return quantized::wrap(make_view(quantized::raw_view(self), sizes, strides, offset),
                             quantized::subtensor_quantizer(self, dim, s, e, step, false));
    return make_view(self, sizes, strides, offset);
  }
  // SliceBackward0 -- self: slice_backward(grad, self.sizes(), dim, start, end, step)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t dim, std::optional<int64_t> start,
                         std::optional<int64_t> end, int64_t step) {
    d.name("SliceBackward0");
    d.grad(self, [sizes = DimVector(self.sizes()), dim, start, end, step](const auto& c) {
      return slice_backward(c.grad(), sizes, dim, start, end, step);
    });
  }
};

struct NarrowOp {
  static constexpr const char* name = "narrow";
  static constexpr bool quantized = true;  // keeps the quantizer (make_view)
  static Tensor run(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
    EMBER_CHECK(self.dim() > 0, name, "narrow() cannot be applied to a 0-dim tensor.");
    dim = maybe_wrap_dim(dim, self.dim(), name);
    const int64_t size = self.sizes()[dim];
    if (start != size) start = maybe_wrap_dim(start, size, name);  // the end itself is a valid start
    EMBER_CHECK(length >= 0 && start + length <= size, name, "start (", start, ") + length (", length,
                ") exceeds dimension size (", size, ").");
    return self.slice(dim, start, start + length);
  }
  static constexpr bool composite = true;  // records its slice
};

struct ExpandOp {
  static constexpr const char* name = "expand";
  static constexpr bool conj_aware = true;  // a view: keeps the conjugate bit
  static constexpr bool quantized = true;  // keeps the quantizer (make_view)
  static Tensor run(const Tensor& self, IntArrayRef sizes) {
    const int64_t nd = static_cast<int64_t>(sizes.size());
    EMBER_CHECK(nd >= self.dim(), name, "the number of sizes provided (", nd,
                ") must be greater or equal to the number of dimensions in the tensor (", self.dim(), ")");
    DimVector out_sizes(nd), out_strides(nd);
    const int64_t off = nd - self.dim();
    for (int64_t i = nd - 1; i >= 0; --i) {
      const int64_t d = i - off;
      const int64_t size = d >= 0 ? self.sizes()[d] : 1;
      const int64_t stride = d >= 0 ? self.strides()[d] : i + 1 < nd ? out_sizes[i + 1] * out_strides[i + 1] : 0;
      int64_t target = sizes[i];
      if (target == -1) {
        EMBER_CHECK(d >= 0, name, "The expanded size of the tensor (-1) isn't allowed in a leading, "
                    "non-existing dimension ", i);
        target = size;
      }
      EMBER_CHECK(target >= 0, name, "invalid size ", target, " in ", sizes);
      if (size == target) {
        out_sizes[i] = size;
        out_strides[i] = stride;
      } else {
        EMBER_CHECK(size == 1, name, "The expanded size of the tensor (", target,
                    ") must match the existing size (", size, ") at non-singleton dimension ", i,
                    ".  Target sizes: ", sizes, ".  Tensor sizes: ", self.sizes());
        out_sizes[i] = target;
        out_strides[i] = 0;
      }
    }
    return make_view(self, out_sizes, out_strides, self.storage_offset());
  }
  // ExpandBackward0 -- self: at::sum_to(grad, self.sizes())
  static void derivative(autograd::Derivative& d, const Tensor& self, IntArrayRef) {
    d.name("ExpandBackward0");
    d.grad(self, [sizes = DimVector(self.sizes())](const auto& c) { return autograd::sum_to(c.grad(), sizes); });
  }
};

struct SqueezeOp {
  static constexpr const char* name = "squeeze";
  static constexpr bool conj_aware = true;  // a view: keeps the conjugate bit
  static constexpr bool quantized = true;  // keeps the quantizer (make_view)
  static Tensor run(const Tensor& self, std::optional<int64_t> dim) {
    DimVector sizes, strides;
    const int64_t wrapped = dim ? maybe_wrap_dim(*dim, self.dim(), name) : -1;
    for (int64_t d = 0; d < self.dim(); ++d) {
      const bool drop = self.sizes()[d] == 1 && (!dim || d == wrapped);
      if (drop) continue;
      sizes.push_back(self.sizes()[d]);
      strides.push_back(self.strides()[d]);
    }
    return make_view(self, sizes, strides, self.storage_offset());
  }
  // SqueezeBackward0 (all) / SqueezeBackward1 (dim) -- self: unsqueeze_to(grad, self.sizes())
  static void derivative(autograd::Derivative& d, const Tensor& self, std::optional<int64_t> dim) {
    d.name(dim ? "SqueezeBackward1" : "SqueezeBackward0");
    d.grad(self, [sizes = DimVector(self.sizes())](const auto& c) { return c.grad().reshape(sizes); });
  }
};

struct UnsqueezeOp {
  static constexpr const char* name = "unsqueeze";
  static constexpr bool conj_aware = true;  // a view: keeps the conjugate bit
  static constexpr bool quantized = true;  // keeps the quantizer (make_view)
  static Tensor run(const Tensor& self, int64_t dim) {
    dim = maybe_wrap_dim(dim, self.dim() + 1, name);
    DimVector sizes(self.sizes()), strides(self.strides());
    const int64_t st = dim < self.dim() ? sizes[dim] * strides[dim] : 1;
    sizes.insert(dim, 1);
    strides.insert(dim, st);
    return make_view(self, sizes, strides, self.storage_offset());
  }
  // UnsqueezeBackward0 -- self: grad.squeeze(dim)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t dim) {
    d.name("UnsqueezeBackward0");
    d.grad(self, [dim = maybe_wrap_dim(dim, self.dim() + 1, name)](const auto& c) { return c.grad().squeeze(dim); });
  }
};

struct DiagonalOp {
  static constexpr const char* name = "diagonal";
  static constexpr bool conj_aware = true;  // a view: keeps the conjugate bit
  static Tensor run(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
    EMBER_CHECK(self.dim() >= 2, name, "diagonal dimensions requires a tensor with at least 2 dims, got ",
                self.dim());
    dim1 = maybe_wrap_dim(dim1, self.dim(), name);
    dim2 = maybe_wrap_dim(dim2, self.dim(), name);
    EMBER_CHECK(dim1 != dim2, name, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
    int64_t storage_offset = self.storage_offset();
    int64_t len;
    if (offset >= 0) {
      len = std::max<int64_t>(std::min(self.sizes()[dim1], self.sizes()[dim2] - offset), 0);
      if (len > 0) storage_offset += offset * self.strides()[dim2];
    } else {
      len = std::max<int64_t>(std::min(self.sizes()[dim1] + offset, self.sizes()[dim2]), 0);
      if (len > 0) storage_offset -= offset * self.strides()[dim1];
    }
    DimVector sizes, strides;
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (d == dim1 || d == dim2) continue;
      sizes.push_back(self.sizes()[d]);
      strides.push_back(self.strides()[d]);
    }
    sizes.push_back(len);
    strides.push_back(self.strides()[dim1] + self.strides()[dim2]);
    return make_view(self, sizes, strides, storage_offset);
  }
  // DiagonalBackward0 -- self: diagonal_backward(grad, self.sizes(), offset, dim1, dim2)
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t, int64_t, int64_t) {
    d.name("DiagonalBackward0");
    d.grad(self, [in = Geometry(self), out = Geometry(d.result())](const auto& c) {
      return strided_view_backward(c.grad(), in, out);
    });
  }
};

struct UnfoldOp {
  static constexpr const char* name = "unfold";
  static constexpr bool conj_aware = true;  // a view: keeps the conjugate bit
  static Tensor run(const Tensor& self, int64_t dim, int64_t size, int64_t step) {
    const int64_t nd = self.dim();
    dim = maybe_wrap_dim(dim, nd, name);
    const int64_t max_size = nd == 0 ? 1 : self.sizes()[dim];
    EMBER_CHECK(size <= max_size, name, "maximum size for tensor at dimension ", dim, " is ", max_size,
                " but size is ", size);
    EMBER_CHECK(size >= 0, name, "size is ", size, " but must be >= 0");
    EMBER_CHECK(step > 0, name, "step is ", step, " but must be > 0");
    DimVector sizes(self.sizes()), strides(self.strides());
    const int64_t st = nd == 0 ? 1 : strides[dim];
    if (nd > 0) {
      sizes[dim] = (max_size - size) / step + 1;
      strides[dim] = st * step;
    }
    sizes.push_back(size);
    strides.push_back(st);
    return make_view(self, sizes, strides, self.storage_offset());
  }
  // UnfoldBackward0 -- self: unfold_backward(grad, self.sizes(), dimension, size, step): overlapping
  // windows add up
  static void derivative(autograd::Derivative& d, const Tensor& self, int64_t, int64_t, int64_t) {
    d.name("UnfoldBackward0");
    d.grad(self, [in = Geometry(self), out = Geometry(d.result())](const auto& c) {
      return strided_view_backward(c.grad(), in, out);
    });
  }
};

// split, split_with_sizes, chunk and unbind: PyTorch's multi-output views. With a graph one node
// joins every output to self, the gradient of self being the outputs' gradients put back together
// (cat for split, stack for unbind; zeros for outputs that got none), so double backward records
// through cat/stack. In grad mode an in-place write recorded on an output raises PyTorch's error
// (ViewCreation::kMultiOutput); under no_grad and in inference mode the outputs are views as any.
// `n` views of self, the i-th made by ViewOp from self and the arguments args_of(i) gives, and
// `lengths` their sizes along dim (empty for unbind: one each, the dim removed); `op` names the
// public op (for anomaly mode's messages), `node_name` its node.
template <class ViewOp, class ArgsOf>
std::vector<Tensor> multi_output_views(const char* op, const Tensor& self, int64_t n, const char* node_name,
                                       int64_t dim, std::vector<int64_t> lengths, const ArgsOf& args_of) {
  std::vector<Tensor> out;
  out.reserve(n);
  // no_grad or inference mode (or an inference tensor): dispatched, recorded as such views
  if (!GradMode::is_enabled() || self.is_inference()) {
    for (int64_t i = 0; i < n; ++i)
      out.push_back(std::apply([&](auto... a) { return dispatch::call<ViewOp>(self, a...); }, args_of(i)));
    return out;
  }
  for (int64_t i = 0; i < n; ++i) {
    out.push_back(std::apply([&](auto... a) { return ViewOp::run(self, a...); }, args_of(i)));
    autograd::set_view_base(out.back(), self, autograd::ViewCreation::kMultiOutput);
  }
  if (!self.requires_grad() || out.empty()) return out;
  // SplitBackward0 / SplitWithSizesBackward0 -- self: split_backward(grads, split_size, dim, sizes, options)
  // UnbindBackward0 -- self: unbind_backward(grads, dim)
  autograd::Derivative d(out.data(), out.size(), op, /*inplace=*/false, 1);
  d.name(node_name);
  d.grad(self, [sizes = DimVector(self.sizes()), dim, lengths = std::move(lengths), n,
                dtype = self.dtype()](const autograd::BackwardContext& c) {
    std::vector<Tensor> parts;
    parts.reserve(n);
    for (int64_t i = 0; i < n; ++i) {
      if (c.grad(i).defined()) {
        parts.push_back(c.grad(i));
        continue;
      }
      DimVector shape(sizes);
      if (lengths.empty()) {
        shape.erase(dim);
      } else {
        shape[dim] = lengths[i];
      }
      parts.push_back(zeros(shape, TensorOptions().dtype(dtype)));
    }
    return lengths.empty() ? stack(parts, dim) : cat(parts, dim);
  });
  d.finish();
  return out;
}

// Views of self along dim, of the given lengths, as one multi-output op.
std::vector<Tensor> split_views(const char* op, const Tensor& self, int64_t dim, const std::vector<int64_t>& lengths,
                                const char* node_name) {
  std::vector<int64_t> starts(lengths.size() + 1, 0);
  std::partial_sum(lengths.begin(), lengths.end(), starts.begin() + 1);
  const auto args_of = [&](int64_t i) {
    return std::tuple{dim, std::optional<int64_t>(starts[i]), std::optional<int64_t>(starts[i + 1]), int64_t{1}};
  };
  return multi_output_views<SliceOp>(op, self, static_cast<int64_t>(lengths.size()), node_name, dim, lengths, args_of);
}

}  // namespace

DimVector infer_size(IntArrayRef a, IntArrayRef b, const char* op) {
  const size_t na = a.size(), nb = b.size(), n = std::max(na, nb);
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - na ? 1 : a[i - (n - na)];
    const int64_t db = i < n - nb ? 1 : b[i - (n - nb)];
    EMBER_CHECK(da == db || da == 1 || db == 1, op, "The size of tensor a (", da,
                ") must match the size of tensor b (", db, ") at non-singleton dimension ", i);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Tensor view(const Tensor& self, IntArrayRef sizes) { return dispatch::call<ViewOp>(self, sizes); }
Tensor reshape(const Tensor& self, IntArrayRef sizes) { return dispatch::call<ReshapeOp>(self, sizes); }
Tensor permute(const Tensor& self, IntArrayRef dims) { return dispatch::call<PermuteOp>(self, dims); }
Tensor transpose(const Tensor& self, int64_t d0, int64_t d1) { return dispatch::call<TransposeOp>(self, d0, d1); }
Tensor t(const Tensor& self) {
  EMBER_CHECK(self.dim() <= 2, "t", "t() expects a tensor with <= 2 dimensions, but self is ", self.dim(), "D");
  return transpose(self, 0, self.dim() < 2 ? 0 : 1);  // a view even when nothing moves, as PyTorch
}
Tensor movedim(const Tensor& self, IntArrayRef source, IntArrayRef destination) {
  const int64_t nd = self.dim();
  EMBER_CHECK(source.size() == destination.size(), "movedim", "Invalid source or destination dims: source (", source,
              " dims) should contain the same number of dims as destination (", destination, " dims)");
  const int64_t slots = std::max<int64_t>(nd, 1);  // a 0-dim tensor takes dim 0 / -1
  DimVector perm(slots, -1);
  SmallVector<bool, 8> used_src(slots, false), used_dst(slots, false);
  for (size_t i = 0; i < source.size(); ++i) {
    const int64_t s = maybe_wrap_dim(source[i], nd, "movedim"), d = maybe_wrap_dim(destination[i], nd, "movedim");
    EMBER_CHECK(!used_src[s], "movedim", "repeated dim in `source` (", source, ")");
    EMBER_CHECK(!used_dst[d], "movedim", "repeated dim in `destination` (", destination, ")");
    used_src[s] = used_dst[d] = true;
    perm[d] = s;
  }
  if (nd == 0) return transpose(self, 0, 0);
  int64_t next_src = 0;
  for (int64_t d = 0; d < nd; ++d) {
    if (perm[d] != -1) continue;
    while (used_src[next_src]) ++next_src;
    perm[d] = next_src++;
  }
  return permute(self, perm);
}
Tensor select(const Tensor& self, int64_t dim, int64_t index) { return dispatch::call<SelectOp>(self, dim, index); }
Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
             int64_t step) {
  return dispatch::call<SliceOp>(self, dim, start, end, step);
}
Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  return dispatch::call<NarrowOp>(self, dim, start, length);
}
Tensor expand(const Tensor& self, IntArrayRef sizes) { return dispatch::call<ExpandOp>(self, sizes); }
Tensor squeeze(const Tensor& self) { return dispatch::call<SqueezeOp>(self, std::nullopt); }
Tensor squeeze(const Tensor& self, int64_t dim) { return dispatch::call<SqueezeOp>(self, dim); }
Tensor unsqueeze(const Tensor& self, int64_t dim) { return dispatch::call<UnsqueezeOp>(self, dim); }
// flatten enters dispatch as itself (a composite of reshape), so that fx records flatten(x, 1)
// rather than reshape(x, [the example's batch size, -1]): a traced model keeps taking any batch.
struct FlattenOp {
  static constexpr const char* name = "flatten";
  static constexpr bool composite = true;
  static constexpr bool conj_aware = true;  // reshape passes the bit on
  static constexpr bool quantized = true;   // reshape keeps the quantizer
  static Tensor run(const Tensor& self, int64_t start_dim, int64_t end_dim) {
    start_dim = maybe_wrap_dim(start_dim, self.dim(), name);
    end_dim = maybe_wrap_dim(end_dim, self.dim(), name);
    EMBER_CHECK(start_dim <= end_dim, name, "flatten() has invalid args: start_dim cannot come after end_dim");
    if (self.dim() == 0) return self.reshape({1});
    if (start_dim == end_dim) return self;
    DimVector sizes;
    for (int64_t d = 0; d < start_dim; ++d) sizes.push_back(self.sizes()[d]);
    int64_t n = 1;
    for (int64_t d = start_dim; d <= end_dim; ++d) n *= self.sizes()[d];
    sizes.push_back(n);
    for (int64_t d = end_dim + 1; d < self.dim(); ++d) sizes.push_back(self.sizes()[d]);
    return self.reshape(sizes);
  }
};
Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  return dispatch::call<FlattenOp>(self, start_dim, end_dim);
}
Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes) {
  dim = maybe_wrap_dim(dim, self.dim(), "unflatten", false);
  EMBER_CHECK(!sizes.empty(), "unflatten", "sizes must be non-empty");
  const int64_t size = self.size(dim);
  DimVector inferred;
  try {
    inferred = infer_view_size("unflatten", sizes, size);
  } catch (const Error& e) {  // sizes that don't multiply up get unflatten's own words, as in PyTorch
    if (std::string_view(e.what()).find("is invalid for input of size") == std::string_view::npos) throw;
    detail::fail("unflatten", "Provided sizes ", sizes, " don't multiply up to the size of dim ", dim, " (", size,
                 ") in the input tensor");
  }
  DimVector shape(self.sizes());
  shape.erase(dim);
  for (size_t i = 0; i < inferred.size(); ++i) shape.insert(dim + i, inferred[i]);
  return self.view(shape);
}
Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  return dispatch::call<DiagonalOp>(self, offset, dim1, dim2);
}
Tensor as_strided(const Tensor& self, IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> offset) {
  return dispatch::call<AsStridedOp>(self, sizes, strides, offset);
}
Tensor unfold(const Tensor& self, int64_t dim, int64_t size, int64_t step) {
  return dispatch::call<UnfoldOp>(self, dim, size, step);
}
std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "split", "split expects at least a 1-dimensional tensor");
  EMBER_CHECK(split_size >= 0, "split", "split expects split_size be non-negative, but got split_size=", split_size);
  dim = maybe_wrap_dim(dim, self.dim(), "split");
  const int64_t size = self.sizes()[dim];
  EMBER_CHECK(split_size > 0 || size == 0, "split", "split_size can only be 0 if dimension size is 0, but got "
              "dimension size of ", size);
  std::vector<int64_t> lengths;
  if (size == 0) lengths.push_back(0);
  for (int64_t s = 0; s < size; s += split_size) lengths.push_back(std::min(split_size, size - s));
  return split_views("split", self, dim, lengths, "SplitBackward0");
}
std::vector<Tensor> split(const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  return split_with_sizes(self, split_sizes, dim);
}
std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "split_with_sizes", "split expects at least a 1-dimensional tensor");
  dim = maybe_wrap_dim(dim, self.dim(), "split_with_sizes");
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    EMBER_CHECK(s >= 0, "split_with_sizes", "split_with_sizes expects split_sizes have only non-negative entries, "
                "but got split_sizes=", split_sizes);
    total += s;
  }
  EMBER_CHECK(total == self.sizes()[dim], "split_with_sizes", "split_with_sizes expects split_sizes to sum exactly to ",
              self.sizes()[dim], " (input tensor's size at dimension ", dim, "), but got split_sizes=", split_sizes);
  return split_views("split_with_sizes", self, dim, std::vector<int64_t>(split_sizes.begin(), split_sizes.end()),
                     "SplitWithSizesBackward0");
}
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "chunk", "chunk expects at least a 1-dimensional tensor");
  EMBER_CHECK(chunks > 0, "chunk", "chunk expects `chunks` to be greater than 0, got: ", chunks);
  const int64_t size = self.size(dim);
  const int64_t split_size = (size + chunks - 1) / chunks;
  if (split_size == 0 && size == 0)  // PyTorch's chunk: SplitBackward0 for these too
    return split_views("chunk", self, maybe_wrap_dim(dim, self.dim(), "chunk"), std::vector<int64_t>(chunks, 0),
                       "SplitBackward0");
  return split(self, split_size, dim);
}
std::vector<Tensor> unbind(const Tensor& self, int64_t dim) {
  dim = maybe_wrap_dim(dim, self.dim(), "unbind", false);
  return multi_output_views<SelectOp>("unbind", self, self.sizes()[dim], "UnbindBackward0", dim, {},
                                      [dim](int64_t i) { return std::tuple{dim, i}; });
}
std::vector<Tensor> broadcast_tensors(TensorList tensors) {
  DimVector shape;
  for (const Tensor& t : tensors) shape = infer_size(shape, t.sizes(), "broadcast_tensors");
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(t.expand(shape));
  return out;
}
Tensor broadcast_to(const Tensor& self, IntArrayRef sizes) { return self.expand(sizes); }

// ---- Tensor methods -------------------------------------------------------------------------
Tensor Tensor::view(IntArrayRef sizes) const { return ember::view(*this, sizes); }
Tensor Tensor::view(ScalarType dtype) const { return dispatch::call<ViewDtypeOp>(*this, dtype); }
Tensor Tensor::reshape(IntArrayRef sizes) const { return ember::reshape(*this, sizes); }
Tensor Tensor::permute(IntArrayRef dims) const { return ember::permute(*this, dims); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return ember::transpose(*this, d0, d1); }
Tensor& Tensor::transpose_(int64_t d0, int64_t d1) const {
  Tensor v = ember::transpose(mutable_self(), d0, d1);
  checked_impl()->set_sizes_and_strides(v.sizes(), v.strides());
  return mutable_self();
}
Tensor Tensor::t() const { return ember::t(*this); }
Tensor& Tensor::t_() const {
  Tensor v = ember::t(mutable_self());
  checked_impl()->set_sizes_and_strides(v.sizes(), v.strides());
  return mutable_self();
}
Tensor Tensor::mT() const {
  EMBER_CHECK(dim() != 1, "mT", "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.");
  return dim() == 0 ? transpose(0, 0) : transpose(-2, -1);  // PyTorch 1.13 lets a 0-dim tensor through
}
Tensor Tensor::movedim(IntArrayRef s, IntArrayRef d) const { return ember::movedim(*this, s, d); }
Tensor Tensor::select(int64_t dim, int64_t index) const { return ember::select(*this, dim, index); }
Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) const {
  return ember::slice(*this, dim, start, end, step);
}
Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  return ember::narrow(*this, dim, start, length);
}
Tensor Tensor::expand(IntArrayRef sizes, bool) const { return ember::expand(*this, sizes); }
Tensor Tensor::squeeze() const { return ember::squeeze(*this); }
Tensor Tensor::squeeze(int64_t dim) const { return ember::squeeze(*this, dim); }
Tensor& Tensor::squeeze_() const {
  Tensor v = ember::squeeze(mutable_self());
  checked_impl()->set_sizes_and_strides(v.sizes(), v.strides());
  return mutable_self();
}
Tensor& Tensor::squeeze_(int64_t dim) const {
  Tensor v = ember::squeeze(mutable_self(), dim);
  checked_impl()->set_sizes_and_strides(v.sizes(), v.strides());
  return mutable_self();
}
Tensor Tensor::unsqueeze(int64_t dim) const { return ember::unsqueeze(*this, dim); }
Tensor& Tensor::unsqueeze_(int64_t dim) const {
  Tensor v = ember::unsqueeze(mutable_self(), dim);
  checked_impl()->set_sizes_and_strides(v.sizes(), v.strides());
  return mutable_self();
}
Tensor Tensor::flatten(int64_t s, int64_t e) const { return ember::flatten(*this, s, e); }
Tensor Tensor::unflatten(int64_t dim, IntArrayRef sizes) const { return ember::unflatten(*this, dim, sizes); }
Tensor Tensor::diagonal(int64_t o, int64_t d1, int64_t d2) const { return ember::diagonal(*this, o, d1, d2); }
Tensor Tensor::as_strided(IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> offset) const {
  return ember::as_strided(*this, sizes, strides, offset);
}
Tensor& Tensor::as_strided_(IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> offset) const {
  Tensor v = ember::as_strided(mutable_self(), sizes, strides, offset);
  checked_impl()->set_sizes_and_strides(v.sizes(), v.strides(), v.storage_offset());
  return mutable_self();
}
Tensor Tensor::unfold(int64_t dim, int64_t size, int64_t step) const { return ember::unfold(*this, dim, size, step); }
std::vector<Tensor> Tensor::split(int64_t s, int64_t dim) const { return ember::split(*this, s, dim); }
std::vector<Tensor> Tensor::split(IntArrayRef sizes, int64_t dim) const {
  return ember::split_with_sizes(*this, sizes, dim);
}
std::vector<Tensor> Tensor::split_with_sizes(IntArrayRef sizes, int64_t dim) const {
  return ember::split_with_sizes(*this, sizes, dim);
}
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const { return ember::chunk(*this, chunks, dim); }
std::vector<Tensor> Tensor::unbind(int64_t dim) const { return ember::unbind(*this, dim); }

}  // namespace ember
