// Loops of the indexing and joining family: moving elements to or from positions that an index
// tensor names, compacting by a mask, copying rows. Nothing is written into an existing tensor
// before every index is known to be valid: the op checks the index first, or (writing a fresh
// result it drops on error) lets the gather and scatter kernels check values as they read them.
#pragma once
#include <optional>

#include "core/tensor_iterator.h"

namespace ember::kernels {

// out = src[index]: operand 0 written, operand 1 read at index * indexed_stride bytes from its
// position, operand 2 the index (int64 or int32). Serves gather, index_select and advanced-index
// reads; every position is independent, so the whole iteration space is split across threads.
// Index values are checked against [0, bound) as they are read (one pass over the index instead
// of two): the first one outside is returned and the output is left partly written, so a caller
// that has not checked the index beforehand must discard it.
std::optional<int64_t> index_gather_kernel(TensorIterator& iter, int64_t indexed_stride, int64_t bound);
// Where element [o][l][i] of an operand lies, in elements from its first: o * outer + l * along +
// i * inner (the dims before an indexed dim taken as one, the dim, the dims after it as one).
struct WalkStrides {
  int64_t outer, along, inner;
};
// The same for dense operands, without an iterator: out[o][l][i] = src[o][index[o][l][i]][i] for
// o < outer, l < len, i < inner, the source's indexed dim of `size` elements; out and the int64
// index contiguous, src where src_walk says. The same check and return.
std::optional<int64_t> index_gather_dense(ScalarType dt, void* out, const void* src, WalkStrides src_walk,
                                          const int64_t* index, int64_t outer, int64_t len, int64_t size,
                                          int64_t inner);

// How the scatter kernel walks one indexed dim. The iterator runs over every position but that
// dim (its size squashed to 1, so that writes to the same element stay on one thread, in order);
// at each position the kernel takes `len` steps along the dim, step k reading the index at
// k * index_step.
struct IndexWalk {
  int64_t len = 1;             // steps along the dim at each position
  int64_t index_step = 0;      // byte stride of the index operand between steps
  int64_t plain_step = 0;      // byte stride, between steps, of the operand walked in order
  int64_t indexed_stride = 0;  // byte stride that one unit of an index value moves the indexed operand
  uint64_t bound = UINT64_MAX;  // index values must lie in [0, bound): checked as they are read
};

// dst[index[k]] = src[k] (Assign) or += alpha * src[k] (Add): operand 0 indexed and written,
// operand 1 read in order (stride 0 for a broadcast value), operand 2 the index (int64 only: a
// copy of the loops per index type is not worth its size; index_add converts an int32 index). With `serial`
// the loop runs on one thread (duplicate indices across positions, as index_put_ accumulate).
// Returns the first index value found outside [0, walk.bound), the destination then partly written
// (a caller writing into an existing tensor checks the index beforehand).
enum class ScatterMode { Assign, Add, Multiply };
std::optional<int64_t> index_scatter_kernel(TensorIterator& iter, const IndexWalk& walk, ScatterMode mode,
                                            const Scalar& alpha, bool serial);

// The same for dense operands, without an iterator: dst[o][index[o][l][i]][i] combined with
// src[o][l][i] (or with the one element at src, src_fixed) for o < outer, l < len, i < inner,
// dst's indexed dim of `size` elements; dst and the index contiguous, src where src_walk says
// (unread if src_fixed), alpha 1.
std::optional<int64_t> index_scatter_dense(ScalarType dt, void* dst, const void* src, bool src_fixed,
                                           WalkStrides src_walk, const int64_t* index, int64_t outer, int64_t len,
                                           int64_t size, int64_t inner, ScatterMode mode);

// The first value of an integer tensor outside [lo, hi), if any (iterator: one input).
std::optional<int64_t> find_index_out_of_range(TensorIterator& iter, int64_t lo, int64_t hi);
// The largest value of an int64 tensor (iterator: one input, numel > 0).
int64_t max_index(TensorIterator& iter);

// Advanced indexing: offsets (operand 0, int64) = (first ? 0 : offsets) + wrap(index) * stride for
// index values (operand 1, int64) in [-size, size). Returns an out-of-range value instead of
// writing anything when there is one.
std::optional<int64_t> add_index_offsets(TensorIterator& iter, int64_t size, int64_t stride, bool first);

// cat's contiguous case: `rows` rows of dst, dst_stride bytes apart, each the blocks' rows side
// by side: dst + r * dst_stride + offset <- src + r * bytes, for each block.
struct RowBlock {
  const char* src;
  int64_t offset, bytes;
};
void cat_rows_kernel(char* dst, int64_t dst_stride, const RowBlock* blocks, size_t nblocks, int64_t rows);
// dst[i] += float32(src[i]) for i < n, `from` float16 or bfloat16 (sums of 16-bit rows in float32).
void add_row_to_float_kernel(ScalarType from, float* dst, const void* src, int64_t n);
// index_select on contiguous tensors: dst row (o, k), rows back to back, comes from
// src + o * src_outer_stride + index[k] * src_index_stride (index: 1-D int64 or int32).
void index_select_rows_kernel(char* dst, const char* src, int64_t outer, int64_t src_outer_stride,
                              const Tensor& index, int64_t src_index_stride, int64_t row_bytes);

// Coordinates of the nonzero elements of contiguous `self` in row-major order: int64
// [count, self.dim()] with strides [1, count], the layout PyTorch returns.
Tensor nonzero_kernel(const Tensor& self);
// Elements of contiguous `self` where contiguous `mask` (bool or uint8, same shape) is set, in order.
Tensor masked_select_kernel(const Tensor& self, const Tensor& mask);
// Its inverse (masked_select's gradient): contiguous `values`, one per set element of `mask`,
// written at the set positions of a result of mask's shape, zeros elsewhere.
Tensor masked_expand_kernel(const Tensor& values, const Tensor& mask);

// tril (lower) / triu on contiguous [batch, rows, cols] data of element size es: kept elements
// are copied from src (skipped when src == dst), the others zeroed.
void tril_kernel(char* dst, const char* src, int64_t batch, int64_t rows, int64_t cols, int64_t es, int64_t diagonal,
                 bool lower);

}  // namespace ember::kernels
