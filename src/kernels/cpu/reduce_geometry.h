// The loop structure shared by reductions, scans and sorts along dims.
//
// ReduceGeometry splits the dims of an input into kept dims (one output element per index) and
// reduced dims (walked for each output). Dims of size 1 are dropped, each group is sorted by
// input stride, innermost first, and neighbouring dims that are contiguous in every operand are
// coalesced, so a contiguous input reduced over a suffix of dims becomes one kept dim and one
// reduced dim. Kept dims carry byte strides of three operands: the input, the output and an
// auxiliary tensor (a per-output parameter, or the indices of max/sort); reduced dims carry
// only the input's stride (kernels that write along the reduced dim take that stride from the
// output tensor itself).
//
// Outputs are numbered 0..num_outputs in kept-dim order and reduced elements ("positions")
// 0..reduce_size in reduced-dim order; DimCursor turns such a number into byte offsets and
// steps to the next one without divisions, and for_each_group visits outputs in runs of
// neighbours along the innermost kept dim.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "ember/tensor.h"

namespace ember::kernels {

struct LoopDim {
  int64_t size;
  int64_t stride[3];  // bytes: input, output, auxiliary
};

class ReduceGeometry {
 public:
  static constexpr int kMaxDims = 16;

  // `out` and `aux` (either may be undefined) have the rank of `in`; their strides are read
  // only at kept dims. Bit d of reduce_mask marks dim d as reduced.
  ReduceGeometry(const Tensor& in, uint64_t reduce_mask, const Tensor& out, const Tensor& aux) {
    const Tensor* ops[3] = {&in, &out, &aux};
    for (int64_t d = 0; d < in.dim(); ++d) {
      const int64_t size = in.size(d);
      if (size == 1) continue;
      const bool reduced = (reduce_mask >> d) & 1;
      LoopDim ld{size, {0, 0, 0}};
      for (int k = 0; k < 3; ++k) {
        if (!ops[k]->defined() || (reduced && k > 0)) continue;
        ld.stride[k] = ops[k]->stride(d) * static_cast<int64_t>(ops[k]->element_size());
      }
      (reduced ? reduced_ : kept_)[reduced ? nreduced_++ : nkept_++] = ld;
      EMBER_CHECK(nkept_ <= kMaxDims && nreduced_ <= kMaxDims, "reduce", "tensors with more than ", kMaxDims,
                  " dims are not supported");
    }
    nkept_ = arrange(kept_, nkept_);
    nreduced_ = arrange(reduced_, nreduced_);
    for (int i = 0; i < nkept_; ++i) num_outputs_ *= kept_[i].size;
    for (int i = 0; i < nreduced_; ++i) reduce_size_ *= reduced_[i].size;
  }

  int nkept() const { return nkept_; }
  int nreduced() const { return nreduced_; }
  const LoopDim* kept() const { return kept_; }
  const LoopDim* reduced() const { return reduced_; }
  const LoopDim& kept(int i) const { return kept_[i]; }
  const LoopDim& reduced(int i) const { return reduced_[i]; }
  int64_t num_outputs() const { return num_outputs_; }
  int64_t reduce_size() const { return reduce_size_; }

 private:
  // Sort innermost first (by input stride), then merge neighbours contiguous in every operand.
  // (A stable insertion sort: std::stable_sort allocated a buffer for these few dims each call.)
  static int arrange(LoopDim* dims, int n) {
    for (int i = 1; i < n; ++i) {
      const LoopDim d = dims[i];
      int j = i;
      for (; j > 0 && std::abs(d.stride[0]) < std::abs(dims[j - 1].stride[0]); --j) dims[j] = dims[j - 1];
      dims[j] = d;
    }
    int out = 0;
    for (int i = 0; i < n; ++i) {
      if (out > 0) {
        LoopDim& prev = dims[out - 1];
        bool chained = true;
        for (int k = 0; k < 3; ++k) chained = chained && prev.stride[k] * prev.size == dims[i].stride[k];
        if (chained) {
          prev.size *= dims[i].size;
          continue;
        }
      }
      dims[out++] = dims[i];
    }
    return out;
  }

  LoopDim kept_[kMaxDims];
  LoopDim reduced_[kMaxDims];
  int nkept_ = 0, nreduced_ = 0;
  int64_t num_outputs_ = 1, reduce_size_ = 1;
};

// Byte offsets of the three operands at a linear index over a list of dims (first dim fastest).
class DimCursor {
 public:
  DimCursor(const LoopDim* dims, int n, int64_t linear) : dims_(dims), n_(n) {
    if (n == 1 && linear < dims[0].size) {  // the common case, without a division
      idx_[0] = linear;
      for (int k = 0; k < 3; ++k) off_[k] = linear * dims[0].stride[k];
      return;
    }
    for (int i = 0; i < n; ++i) {
      idx_[i] = linear % dims[i].size;
      linear /= dims[i].size;
      for (int k = 0; k < 3; ++k) off_[k] += idx_[i] * dims[i].stride[k];
    }
  }
  int64_t offset(int k) const { return off_[k]; }
  void next() {
    for (int i = 0; i < n_; ++i) {
      for (int k = 0; k < 3; ++k) off_[k] += dims_[i].stride[k];
      if (++idx_[i] < dims_[i].size) return;
      for (int k = 0; k < 3; ++k) off_[k] -= dims_[i].stride[k] * dims_[i].size;
      idx_[i] = 0;
    }
  }

 private:
  const LoopDim* dims_;
  int n_;
  int64_t idx_[ReduceGeometry::kMaxDims];  // only the first n_ are used
  int64_t off_[3] = {0, 0, 0};
};

// Calls f(offsets, n, col) for the outputs [ob, oe) in groups of n <= max_group neighbours
// along the innermost kept dim: output i of a group has byte offsets offsets[k] + i * col.stride[k].
template <class F>
void for_each_group(const ReduceGeometry& g, int64_t ob, int64_t oe, int64_t max_group, const F& f) {
  if (g.nkept() == 0) {
    const int64_t zero[3] = {0, 0, 0};
    if (ob < oe) f(zero, int64_t{1}, LoopDim{1, {0, 0, 0}});
    return;
  }
  const LoopDim& col = g.kept(0);
  for (int64_t o = ob; o < oe;) {
    const int64_t c0 = o % col.size, n = std::min({col.size - c0, oe - o, max_group});
    const DimCursor row(g.kept() + 1, g.nkept() - 1, o / col.size);
    const int64_t off[3] = {row.offset(0) + c0 * col.stride[0], row.offset(1) + c0 * col.stride[1],
                            row.offset(2) + c0 * col.stride[2]};
    f(off, n, col);
    o += n;
  }
}

}  // namespace ember::kernels
