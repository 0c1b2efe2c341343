// libtorch's remaining shape, indexing and window-factory functions (issue 26), composed from
// Ember's views, cat/gather/scatter and where, so autograd follows the composition.
#include <cmath>
#include <numbers>

#include "core/tensor_iterator.h"
#include "ember/aten_tail.h"
#include "ember/indexing.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/shape.h"

namespace ember {
namespace {

std::vector<int64_t> to_vec(IntArrayRef a) { return std::vector<int64_t>(a.begin(), a.end()); }

// A bool vector along `dim` of a `ndim`-dim tensor (size n there, 1 elsewhere), true at `index`.
Tensor dim_mask(const char* op, int64_t n, int64_t dim, int64_t ndim, const Tensor& index) {
  EMBER_CHECK(index.dim() <= 1, op, "Index is supposed to be a vector, got a ", index.dim(), "-D index");
  EMBER_CHECK(index.dtype() == kLong || index.dtype() == kInt, op, "Expected dtype int64 for index, got ",
              index.dtype());
  Tensor mask = zeros({n}, kBool);
  if (index.numel() > 0) mask.index_put_({index.reshape({-1}).to(kLong)}, true);
  std::vector<int64_t> shape(static_cast<size_t>(ndim), 1);
  if (ndim == 0) return mask.reshape({});
  shape[static_cast<size_t>(dim)] = n;
  return mask.view(shape);
}

}  // namespace

// ---- atleast_*, stacks and splits ----
Tensor atleast_1d(const Tensor& self) { return self.dim() == 0 ? self.reshape({1}) : self; }
Tensor atleast_2d(const Tensor& self) {
  if (self.dim() == 0) return self.reshape({1, 1});
  return self.dim() == 1 ? self.unsqueeze(0) : self;
}
Tensor atleast_3d(const Tensor& self) {
  if (self.dim() == 0) return self.reshape({1, 1, 1});
  if (self.dim() == 1) return self.unsqueeze(0).unsqueeze(-1);
  return self.dim() == 2 ? self.unsqueeze(-1) : self;
}
#define EMBER_DEFINE_ATLEAST_LIST(name)                   \
  std::vector<Tensor> name(TensorList tensors) {         \
    std::vector<Tensor> out;                              \
    out.reserve(tensors.size());                          \
    for (const Tensor& t : tensors) out.push_back(name(t)); \
    return out;                                           \
  }
EMBER_DEFINE_ATLEAST_LIST(atleast_1d)
EMBER_DEFINE_ATLEAST_LIST(atleast_2d)
EMBER_DEFINE_ATLEAST_LIST(atleast_3d)
#undef EMBER_DEFINE_ATLEAST_LIST

Tensor hstack(TensorList tensors) {
  EMBER_CHECK(!tensors.empty(), "hstack", "expects a non-empty TensorList");
  std::vector<Tensor> ts = atleast_1d(tensors);
  return cat(ts, ts[0].dim() == 1 ? 0 : 1);
}
Tensor vstack(TensorList tensors) {
  EMBER_CHECK(!tensors.empty(), "vstack", "expects a non-empty TensorList");
  return cat(atleast_2d(tensors), 0);
}
Tensor row_stack(TensorList tensors) { return vstack(tensors); }
Tensor dstack(TensorList tensors) {
  EMBER_CHECK(!tensors.empty(), "dstack", "expects a non-empty TensorList");
  return cat(atleast_3d(tensors), 2);
}
Tensor column_stack(TensorList tensors) {
  EMBER_CHECK(!tensors.empty(), "column_stack", "expects a non-empty TensorList");
  std::vector<Tensor> ts;
  for (const Tensor& t : tensors) ts.push_back(t.dim() <= 1 ? t.reshape({t.numel(), 1}) : t);
  return cat(ts, 1);
}

std::vector<Tensor> tensor_split(const Tensor& self, int64_t sections, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "tensor_split", "expected at least a 1-dimensional tensor");
  EMBER_CHECK(sections > 0, "tensor_split", "number of sections must be larger than 0, got ", sections);
  dim = maybe_wrap_dim(dim, self.dim(), "tensor_split");
  const int64_t n = self.size(dim), base = n / sections, extra = n % sections;
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    const int64_t len = base + (i < extra ? 1 : 0);
    out.push_back(self.slice(dim, start, start + len));
    start += len;
  }
  return out;
}
std::vector<Tensor> tensor_split(const Tensor& self, IntArrayRef indices, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "tensor_split", "expected at least a 1-dimensional tensor");
  dim = maybe_wrap_dim(dim, self.dim(), "tensor_split");
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t idx : indices) {
    out.push_back(self.slice(dim, start, idx));
    start = idx;
  }
  out.push_back(self.slice(dim, start, self.size(dim)));
  return out;
}
namespace {
std::vector<Tensor> split_sections(const char* op, const Tensor& self, int64_t sections, int64_t min_dim,
                                   int64_t dim) {
  EMBER_CHECK(self.dim() >= min_dim, op, "requires a tensor with at least ", min_dim, " dimension, but got a tensor with ",
              self.dim(), " dimensions!");
  EMBER_CHECK(sections != 0 && self.size(dim) % sections == 0, op, "attempted to split along dimension ", dim,
              ", but the size of the dimension ", self.size(dim), " is not divisible by the split_size ", sections, "!");
  return tensor_split(self, sections, dim);
}
std::vector<Tensor> split_indices(const char* op, const Tensor& self, IntArrayRef indices, int64_t min_dim,
                                  int64_t dim) {
  EMBER_CHECK(self.dim() >= min_dim, op, "requires a tensor with at least ", min_dim, " dimension, but got a tensor with ",
              self.dim(), " dimensions!");
  return tensor_split(self, indices, dim);
}
}  // namespace
std::vector<Tensor> hsplit(const Tensor& self, int64_t sections) {
  return split_sections("hsplit", self, sections, 1, self.dim() == 1 ? 0 : 1);
}
std::vector<Tensor> hsplit(const Tensor& self, IntArrayRef indices) {
  return split_indices("hsplit", self, indices, 1, self.dim() == 1 ? 0 : 1);
}
std::vector<Tensor> vsplit(const Tensor& self, int64_t sections) { return split_sections("vsplit", self, sections, 2, 0); }
std::vector<Tensor> vsplit(const Tensor& self, IntArrayRef indices) { return split_indices("vsplit", self, indices, 2, 0); }
std::vector<Tensor> dsplit(const Tensor& self, int64_t sections) { return split_sections("dsplit", self, sections, 3, 2); }
std::vector<Tensor> dsplit(const Tensor& self, IntArrayRef indices) { return split_indices("dsplit", self, indices, 3, 2); }
std::vector<Tensor> unsafe_chunk(const Tensor& self, int64_t chunks, int64_t dim) { return self.chunk(chunks, dim); }
std::vector<Tensor> unsafe_split(const Tensor& self, int64_t split_size, int64_t dim) {
  return self.split(split_size, dim);
}
std::vector<Tensor> Tensor::tensor_split(int64_t sections, int64_t dim) const {
  return ember::tensor_split(*this, sections, dim);
}
std::vector<Tensor> Tensor::tensor_split(IntArrayRef indices, int64_t dim) const {
  return ember::tensor_split(*this, indices, dim);
}
std::vector<Tensor> Tensor::hsplit(int64_t sections) const { return ember::hsplit(*this, sections); }
std::vector<Tensor> Tensor::hsplit(IntArrayRef indices) const { return ember::hsplit(*this, indices); }
std::vector<Tensor> Tensor::vsplit(int64_t sections) const { return ember::vsplit(*this, sections); }
std::vector<Tensor> Tensor::vsplit(IntArrayRef indices) const { return ember::vsplit(*this, indices); }
std::vector<Tensor> Tensor::dsplit(int64_t sections) const { return ember::dsplit(*this, sections); }
std::vector<Tensor> Tensor::dsplit(IntArrayRef indices) const { return ember::dsplit(*this, indices); }
std::vector<Tensor> Tensor::unsafe_chunk(int64_t chunks, int64_t dim) const { return chunk(chunks, dim); }
std::vector<Tensor> Tensor::unsafe_split(int64_t split_size, int64_t dim) const { return split(split_size, dim); }

// ---- tile, rot90, flips ----
Tensor tile(const Tensor& self, IntArrayRef dims) {
  std::vector<int64_t> reps = to_vec(dims);
  if (static_cast<int64_t>(reps.size()) < self.dim()) reps.insert(reps.begin(), self.dim() - reps.size(), 1);
  return self.repeat(reps);
}
Tensor rot90(const Tensor& self, int64_t k, IntArrayRef dims) {
  EMBER_CHECK(dims.size() == 2, "rot90", "expected total rotation dims == 2, but got dims = ", dims.size());
  EMBER_CHECK(self.dim() >= 2, "rot90", "expected total dims >= 2, but got total dims = ", self.dim());
  const int64_t d0 = maybe_wrap_dim(dims[0], self.dim(), "rot90"), d1 = maybe_wrap_dim(dims[1], self.dim(), "rot90");
  EMBER_CHECK(d0 != d1, "rot90", "expected rotation dims to be different, but got dim0 = ", d0, " and dim1 = ", d1);
  switch (((k % 4) + 4) % 4) {
    case 1: return self.flip({d1}).transpose(d0, d1);
    case 2: return self.flip({d0, d1});
    case 3: return self.flip({d0}).transpose(d0, d1);
    default: return self.clone();
  }
}
Tensor fliplr(const Tensor& self) {
  EMBER_CHECK(self.dim() >= 2, "fliplr", "Input must be >= 2-d, got ", self.dim(), "-d");
  return self.flip({1});
}
Tensor flipud(const Tensor& self) {
  EMBER_CHECK(self.dim() >= 1, "flipud", "Input must be >= 1-d, got ", self.dim(), "-d");
  return self.flip({0});
}
Tensor Tensor::tile(IntArrayRef dims) const { return ember::tile(*this, dims); }
Tensor Tensor::rot90(int64_t k, IntArrayRef dims) const { return ember::rot90(*this, k, dims); }
Tensor Tensor::fliplr() const { return ember::fliplr(*this); }
Tensor Tensor::flipud() const { return ember::flipud(*this); }

// ---- diagonals ----
// The last dim (n values) lands on diagonal `offset` of an m x m block, m = n + |offset|, by a
// scatter into the flattened block (differentiable in the values); the block's two dims then
// move to dim1 and dim2.
Tensor diag_embed(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t out_dim = self.dim() + 1;
  dim1 = maybe_wrap_dim(dim1, out_dim, "diag_embed");
  dim2 = maybe_wrap_dim(dim2, out_dim, "diag_embed");
  EMBER_CHECK(dim1 != dim2, "diag_embed", "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  Tensor x = self.dim() == 0 ? self.reshape({1}) : self;
  const int64_t n = x.size(-1), m = n + std::abs(offset);
  std::vector<int64_t> flat = to_vec(x.sizes());
  flat.back() = m * m;
  Tensor pos = arange(n, kLong) * (m + 1) + (offset >= 0 ? offset : -offset * m);
  Tensor block = zeros(flat, x.dtype()).scatter(-1, pos.expand(x.sizes()).contiguous(), x);
  std::vector<int64_t> shape = to_vec(x.sizes());
  shape.back() = m;
  shape.push_back(m);
  return block.view(shape).movedim({out_dim - 2, out_dim - 1}, {dim1, dim2});
}
Tensor diag(const Tensor& self, int64_t diagonal) {
  EMBER_CHECK(self.dim() == 1 || self.dim() == 2, "diag", "matrix or a vector expected, got a ", self.dim(), "-D tensor");
  if (self.dim() == 1) return diag_embed(self, diagonal, 0, 1);
  return self.diagonal(diagonal).clone();
}
Tensor diagflat(const Tensor& self, int64_t offset) { return diag_embed(self.reshape({-1}), offset, 0, 1); }
Tensor trace(const Tensor& self) {
  EMBER_CHECK(self.dim() == 2, "trace", "expected a matrix, but got tensor with dim ", self.dim());
  return self.diagonal().sum();
}
Tensor block_diag(TensorList tensors) {
  std::vector<Tensor> mats;
  int64_t rows = 0, cols = 0;
  ScalarType dtype = tensors.empty() ? get_default_dtype() : tensors[0].dtype();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    EMBER_CHECK(t.dim() <= 2, "block_diag", "Input tensors must have 2 or fewer dimensions. Input ", i, " has ",
                t.dim(), " dimensions");
    mats.push_back(t.dim() == 2 ? t : t.reshape({1, -1}));
    rows += mats.back().size(0);
    cols += mats.back().size(1);
    dtype = promote_types(dtype, t.dtype());
  }
  if (mats.empty()) return zeros({1, 0}, dtype);
  std::vector<Tensor> padded;
  int64_t col = 0;
  for (const Tensor& m : mats) {
    padded.push_back(constant_pad_nd(m.to(dtype), {col, cols - col - m.size(1), 0, 0}));
    col += m.size(1);
  }
  return cat(padded, 0);
}
Tensor Tensor::diag(int64_t diagonal) const { return ember::diag(*this, diagonal); }
Tensor Tensor::diagflat(int64_t offset) const { return ember::diagflat(*this, offset); }
Tensor Tensor::diag_embed(int64_t offset, int64_t dim1, int64_t dim2) const {
  return ember::diag_embed(*this, offset, dim1, dim2);
}
Tensor Tensor::trace() const { return ember::trace(*this); }

// ---- meshgrid, products ----
std::vector<Tensor> meshgrid(TensorList tensors, std::string_view indexing) {
  EMBER_CHECK(indexing == "ij" || indexing == "xy", "meshgrid",
              "indexing must be one of \"xy\" or \"ij\", but received: ", indexing);
  EMBER_CHECK(!tensors.empty(), "meshgrid", "expects a non-empty TensorList");
  const size_t k = tensors.size();
  std::vector<int64_t> shape;
  for (size_t i = 0; i < k; ++i) {
    EMBER_CHECK(tensors[i].dim() <= 1, "meshgrid", "Expected 0D or 1D tensor in the tensor list but got: ",
                tensors[i].dim(), "-D tensor at position ", i);
    EMBER_CHECK(tensors[i].dtype() == tensors[0].dtype(), "meshgrid",
                "expects all tensors to have the same dtype");
    shape.push_back(tensors[i].numel());
  }
  // "xy" swaps the roles of the first two inputs: input 0 varies along output dim 1.
  const bool xy = indexing == "xy" && k >= 2;
  if (xy) std::swap(shape[0], shape[1]);
  std::vector<Tensor> out;
  for (size_t i = 0; i < k; ++i) {
    size_t at = i;
    if (xy && i < 2) at = 1 - i;
    std::vector<int64_t> view(k, 1);
    view[at] = -1;
    out.push_back(tensors[i].reshape(view).expand(shape));
  }
  return out;
}
std::vector<Tensor> meshgrid(TensorList tensors) { return meshgrid(tensors, "ij"); }
Tensor cartesian_prod(TensorList tensors) {
  for (const Tensor& t : tensors) EMBER_CHECK(t.dim() == 1, "cartesian_prod", "Expect a 1D vector, but got shape ", t.sizes());
  if (tensors.size() == 1) return tensors[0];
  std::vector<Tensor> grids = meshgrid(tensors, "ij");
  for (Tensor& g : grids) g = g.reshape({-1});
  return stack(grids, 1);
}
// kron(a, b)[i*bs + j] = a[i] * b[j] in every dim: interleave a's and b's dims, multiply, merge.
Tensor kron(const Tensor& self, const Tensor& other) {
  const int64_t nd = std::max(self.dim(), other.dim());
  std::vector<int64_t> as(nd - self.dim(), 1), bs(nd - other.dim(), 1);
  for (int64_t s : self.sizes()) as.push_back(s);
  for (int64_t s : other.sizes()) bs.push_back(s);
  std::vector<int64_t> av, bv, out;
  for (int64_t d = 0; d < nd; ++d) {
    av.insert(av.end(), {as[d], 1});
    bv.insert(bv.end(), {1, bs[d]});
    out.push_back(as[d] * bs[d]);
  }
  return (self.reshape(av) * other.reshape(bv)).reshape(out);
}
Tensor Tensor::kron(const Tensor& other) const { return ember::kron(*this, other); }

namespace {
Tensor tri_indices(const char* op, int64_t row, int64_t col, int64_t offset, TensorOptions options, bool lower) {
  EMBER_CHECK(row >= 0, op, "row must be non-negative, got", row);
  EMBER_CHECK(col >= 0, op, "col must be non-negative, got", col);
  std::vector<int64_t> rs, cs;
  for (int64_t r = 0; r < row; ++r)
    for (int64_t c = 0; c < col; ++c)
      if (lower ? c - r <= offset : c - r >= offset) {
        rs.push_back(r);
        cs.push_back(c);
      }
  const int64_t n = static_cast<int64_t>(rs.size());
  rs.insert(rs.end(), cs.begin(), cs.end());
  return tensor(rs, kLong).reshape({2, n}).to(options.has_dtype() ? options.dtype() : kLong);
}
}  // namespace
Tensor tril_indices(int64_t row, int64_t col, int64_t offset, TensorOptions options) {
  return tri_indices("tril_indices", row, col, offset, options, true);
}
Tensor triu_indices(int64_t row, int64_t col, int64_t offset, TensorOptions options) {
  return tri_indices("triu_indices", row, col, offset, options, false);
}

// ---- take, index_fill/copy, scatters ----
Tensor take(const Tensor& self, const Tensor& index) {
  EMBER_CHECK(index.dtype() == kLong, "take", "take(): Expected a long tensor for index, but got ", index.dtype());
  const int64_t n = self.numel();
  Tensor idx = index.reshape({-1});
  if (idx.numel() > 0) {
    EMBER_CHECK(n > 0, "take", "take(): tried to take from an empty tensor");
    const int64_t lo = idx.min().item<int64_t>(), hi = idx.max().item<int64_t>();
    EMBER_CHECK(lo >= -n && hi < n, "take", "out of range: tried to access index ", lo < -n ? lo : hi,
                " on a tensor of ", n, " elements.");
  }
  idx = where(idx < 0, idx + n, idx);
  return self.reshape({-1}).index_select(0, idx).view(index.sizes());
}
Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim) {
  EMBER_CHECK(indices.dtype() == kLong, "take_along_dim",
              "torch.take_along_dim(): dtype of indices should be Long but got ", indices.dtype());
  if (!dim) return self.reshape({-1}).gather(0, indices.reshape({-1}));
  EMBER_CHECK(self.dim() == indices.dim(), "take_along_dim",
              "torch.take_along_dim(): input and indices should have the same number of dimensions, but got ",
              self.dim(), " dimensions for input, and ", indices.dim(), " dimensions for indices");
  const int64_t d = maybe_wrap_dim(*dim, self.dim(), "take_along_dim");
  // Broadcast every dim but `d`, where each side keeps its own size.
  std::vector<int64_t> ss = to_vec(self.sizes()), is = to_vec(indices.sizes());
  ss[d] = 1;
  is[d] = 1;
  std::vector<Tensor> b = broadcast_tensors({zeros(ss, kBool), zeros(is, kBool)});
  std::vector<int64_t> shape = to_vec(b[0].sizes());
  shape[d] = self.size(d);
  Tensor s = self.expand(shape);
  shape[d] = indices.size(d);
  return s.gather(d, indices.expand(shape));
}
Tensor Tensor::take(const Tensor& index) const { return ember::take(*this, index); }
Tensor Tensor::take_along_dim(const Tensor& indices, std::optional<int64_t> dim) const {
  return ember::take_along_dim(*this, indices, dim);
}

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  dim = maybe_wrap_dim(dim, self.dim(), "index_fill");
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  return self.masked_fill(dim_mask("index_fill", n, dim, self.dim(), index), value);
}
// Rows of self named by index are zeroed, then source is added there (exact: 0 + v == v).
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  dim = maybe_wrap_dim(dim, self.dim(), "index_copy");
  EMBER_CHECK(source.dim() == self.dim() || self.dim() == 0 || source.dim() == 0, "index_copy",
              "index_copy_(): When source and destination are not scalars, their dimensionality must match. Source "
              "dimensionality (", source.dim(), "), destination dimensionality (", self.dim(), ")");
  EMBER_CHECK(source.dtype() == self.dtype(), "index_copy", "index_copy_(): self and source expected to have the same dtype, but got (self) ",
              self.dtype(), " and (source) ", source.dtype());
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  Tensor cleared = self.masked_fill(dim_mask("index_copy", n, dim, self.dim(), index), 0);
  return cleared.index_add(dim, index.reshape({-1}), source);
}
Tensor Tensor::index_fill(int64_t dim, const Tensor& index, const Scalar& value) const {
  return ember::index_fill(*this, dim, index, value);
}
Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, const Scalar& value) const {
  return copy_(ember::index_fill(mutable_self(), dim, index, value));
}
Tensor Tensor::index_copy(int64_t dim, const Tensor& index, const Tensor& source) const {
  return ember::index_copy(*this, dim, index, source);
}
Tensor& Tensor::index_copy_(int64_t dim, const Tensor& index, const Tensor& source) const {
  return copy_(ember::index_copy(mutable_self(), dim, index, source));
}

// The k-th true element of mask (row-major) takes source's k-th element.
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  EMBER_CHECK(mask.dtype() == kBool, "masked_scatter", "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              mask.dtype());
  EMBER_CHECK(source.dtype() == self.dtype(), "masked_scatter",
              "masked_scatter: expected self and source to have same dtypes but got ", self.dtype(), " and ",
              source.dtype());
  std::vector<Tensor> b = broadcast_tensors({self, mask});
  Tensor m = b[1].contiguous();
  Tensor rank = cumsum(m.reshape({-1}).to(kLong), 0) - 1;
  const int64_t count = m.numel() == 0 ? 0 : rank[-1].item<int64_t>() + 1;
  EMBER_CHECK(count <= source.numel(), "masked_scatter", "Number of elements of source < number of ones in mask (",
              source.numel(), " < ", count, ")");
  if (count == 0) return b[0].clone();
  Tensor picked = source.reshape({-1}).index_select(0, rank.clamp_min(0)).view(m.sizes());
  return where(m, picked, b[0]);
}
Tensor Tensor::masked_scatter(const Tensor& mask, const Tensor& source) const {
  return ember::masked_scatter(*this, mask, source);
}
Tensor& Tensor::masked_scatter_(const Tensor& mask, const Tensor& source) const {
  return copy_(ember::masked_scatter(mutable_self(), mask, source));
}

Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index) {
  EMBER_CHECK(self.dim() > 0, "select_scatter", "select() cannot be applied to a 0-dim tensor.");
  dim = maybe_wrap_dim(dim, self.dim(), "select_scatter");
  const Tensor target = self.select(dim, index);  // checks the index
  EMBER_CHECK(src.sizes() == target.sizes(), "select_scatter", "expected src to have a size equal to the slice of self. src size = ",
              src.sizes(), ", slice size = ", target.sizes());
  const int64_t n = self.size(dim);
  Tensor mask = dim_mask("select_scatter", n, dim, self.dim(), scalar_tensor(index < 0 ? index + n : index, kLong));
  return where(mask, src.unsqueeze(dim), self);
}
Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step) {
  dim = maybe_wrap_dim(dim, self.dim(), "slice_scatter");
  const Tensor target = self.slice(dim, start, end, step);  // checks the slice
  EMBER_CHECK(src.sizes() == target.sizes(), "slice_scatter", "expected src to have a size equal to the slice of self. src size = ",
              src.sizes(), ", slice size = ", target.sizes());
  Tensor positions = arange(self.size(dim), kLong).slice(0, start, end, step);
  return index_copy(self, dim, positions, src.to(self.dtype()));
}
// With the two diagonal dims moved last, the diagonal's elements are the mask's true elements
// in row-major order, which is the order masked_scatter fills them from src.
Tensor diagonal_scatter(const Tensor& self, const Tensor& src, int64_t offset, int64_t dim1, int64_t dim2) {
  const Tensor target = self.diagonal(offset, dim1, dim2);  // checks the dims
  EMBER_CHECK(src.sizes() == target.sizes(), "diagonal_scatter",
              "expected src to have a size equal to the diagonal of self. src size = ", src.sizes(),
              ", diagonal size = ", target.sizes());
  dim1 = maybe_wrap_dim(dim1, self.dim(), "diagonal_scatter");
  dim2 = maybe_wrap_dim(dim2, self.dim(), "diagonal_scatter");
  Tensor x = self.movedim({dim1, dim2}, {-2, -1});
  Tensor mask = zeros_like(x, kBool);
  mask.diagonal(offset, -2, -1).fill_(true);
  return masked_scatter(x, mask, src.to(self.dtype())).movedim({-2, -1}, {dim1, dim2});
}
Tensor Tensor::select_scatter(const Tensor& src, int64_t dim, int64_t index) const {
  return ember::select_scatter(*this, src, dim, index);
}
Tensor Tensor::slice_scatter(const Tensor& src, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                             int64_t step) const {
  return ember::slice_scatter(*this, src, dim, start, end, step);
}
Tensor Tensor::diagonal_scatter(const Tensor& src, int64_t offset, int64_t dim1, int64_t dim2) const {
  return ember::diagonal_scatter(*this, src, offset, dim1, dim2);
}

Tensor repeat_interleave(const Tensor& self, int64_t repeats, std::optional<int64_t> dim) {
  EMBER_CHECK(repeats >= 0, "repeat_interleave", "repeats can not be negative");
  Tensor x = dim ? self : self.reshape({-1});
  const int64_t d = dim ? maybe_wrap_dim(*dim, x.dim(), "repeat_interleave") : 0;
  std::vector<int64_t> shape = to_vec(x.sizes());
  shape.insert(shape.begin() + d + 1, repeats);
  return x.unsqueeze(d + 1).expand(shape).flatten(d, d + 1);
}
Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int64_t> dim) const {
  return ember::repeat_interleave(*this, repeats, dim);
}

// ---- *_copy: the view op's result in fresh memory ----
Tensor diagonal_copy(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  return self.diagonal(offset, dim1, dim2).clone();
}
Tensor permute_copy(const Tensor& self, IntArrayRef dims) { return self.permute(dims).clone(); }
Tensor select_copy(const Tensor& self, int64_t dim, int64_t index) { return self.select(dim, index).clone(); }
Tensor squeeze_copy(const Tensor& self) { return self.squeeze().clone(); }
Tensor squeeze_copy(const Tensor& self, int64_t dim) { return self.squeeze(dim).clone(); }
Tensor unsqueeze_copy(const Tensor& self, int64_t dim) { return self.unsqueeze(dim).clone(); }
Tensor t_copy(const Tensor& self) { return self.t().clone(); }
Tensor transpose_copy(const Tensor& self, int64_t dim0, int64_t dim1) { return self.transpose(dim0, dim1).clone(); }
Tensor expand_copy(const Tensor& self, IntArrayRef size, bool implicit) { return self.expand(size, implicit).clone(); }
Tensor view_copy(const Tensor& self, IntArrayRef size) { return self.view(size).clone(); }
Tensor detach_copy(const Tensor& self) { return self.detach().clone(); }
Tensor alias_copy(const Tensor& self) { return self.clone(); }
Tensor narrow_copy(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  return self.narrow(dim, start, length).clone();
}
Tensor unfold_copy(const Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  return self.unfold(dimension, size, step).clone();
}
Tensor slice_copy(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                  int64_t step) {
  return self.slice(dim, start, end, step).clone();
}

// ---- factories ----
Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base, TensorOptions options) {
  EMBER_CHECK(steps >= 0, "logspace", "number of steps must be non-negative");
  const ScalarType dtype = options.dtype();
  return pow(base, linspace(start, end, steps, kDouble)).to(dtype);
}
Tensor range(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions options) {
  const double s = start.to<double>(), e = end.to<double>(), st = step.to<double>();
  EMBER_CHECK(st != 0, "range", "step must be nonzero");
  EMBER_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), "range", "upper bound and larger bound inconsistent with step sign");
  const auto n = static_cast<int64_t>(std::floor((e - s) / st)) + 1;
  return (arange(n, kDouble) * st + s).to(options.dtype());
}
Tensor range(const Scalar& start, const Scalar& end, TensorOptions options) { return range(start, end, 1, options); }

namespace {
// A symmetric window of `length` samples, or a periodic one (the symmetric window of length+1
// without its last sample); f receives 2*pi*n/(N-1).
template <class F>
Tensor window(const char* op, int64_t length, bool periodic, TensorOptions options, F f) {
  EMBER_CHECK(length >= 0, op, op, " requires non-negative window_length, got window_length=", length);
  EMBER_CHECK(is_floating_type(options.dtype()), op, op, " expects floating point dtypes, got: ", options.dtype());
  if (length == 0) return empty({0}, options);
  if (length == 1) return ones({1}, options);
  const int64_t n = periodic ? length + 1 : length;
  Tensor w = f(arange(length, kDouble) * (2 * std::numbers::pi / static_cast<double>(n - 1)));
  return w.to(options.dtype());
}
}  // namespace
Tensor hann_window(int64_t window_length, bool periodic, TensorOptions options) {
  return window("hann_window", window_length, periodic, options, [](const Tensor& t) { return 0.5 - 0.5 * cos(t); });
}
Tensor hann_window(int64_t window_length, TensorOptions options) { return hann_window(window_length, true, options); }
Tensor hamming_window(int64_t window_length, bool periodic, double alpha, double beta, TensorOptions options) {
  return window("hamming_window", window_length, periodic, options,
                [&](const Tensor& t) { return alpha - beta * cos(t); });
}
Tensor hamming_window(int64_t window_length, bool periodic, double alpha, TensorOptions options) {
  return hamming_window(window_length, periodic, alpha, 0.46, options);
}
Tensor hamming_window(int64_t window_length, bool periodic, TensorOptions options) {
  return hamming_window(window_length, periodic, 0.54, 0.46, options);
}
Tensor hamming_window(int64_t window_length, TensorOptions options) {
  return hamming_window(window_length, true, options);
}
Tensor bartlett_window(int64_t window_length, bool periodic, TensorOptions options) {
  return window("bartlett_window", window_length, periodic, options,
                [](const Tensor& t) { return 1 - abs(t / std::numbers::pi - 1); });
}
Tensor bartlett_window(int64_t window_length, TensorOptions options) {
  return bartlett_window(window_length, true, options);
}
Tensor blackman_window(int64_t window_length, bool periodic, TensorOptions options) {
  return window("blackman_window", window_length, periodic, options,
                [](const Tensor& t) { return 0.42 - 0.5 * cos(t) + 0.08 * cos(2 * t); });
}
Tensor blackman_window(int64_t window_length, TensorOptions options) {
  return blackman_window(window_length, true, options);
}

}  // namespace ember
