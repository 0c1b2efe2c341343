#include <limits>

#include "ember/shape.h"
#include "ember/tensor.h"

namespace ember {

TensorImpl::TensorImpl(IntrusivePtr<StorageImpl> storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset)
    : storage_(std::move(storage)), sizes_(sizes), strides_(strides), storage_offset_(storage_offset), dtype_(dtype) {
  refresh();
}

TensorImpl::TensorImpl(Contiguous, IntrusivePtr<StorageImpl> storage, ScalarType dtype, IntArrayRef sizes,
                       DimVector&& strides, int64_t numel)
    : storage_(std::move(storage)), sizes_(sizes), strides_(std::move(strides)), numel_(numel), dtype_(dtype) {}

void TensorImpl::set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> offset) {
  sizes_ = sizes;
  strides_ = strides;
  if (offset) storage_offset_ = *offset;
  refresh();
}

// Caches numel, contiguity and density, the facts every op asks about.
void TensorImpl::refresh() {
  int64_t n = 1;
  for (int64_t s : sizes_) n *= s;
  numel_ = n;
  bool contig = true;
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (sizes_[d] == 1) continue;
    if (strides_[d] != expected) {
      contig = false;
      break;
    }
    expected *= sizes_[d];
  }
  is_contiguous_ = contig || n == 0;
  if (is_contiguous_) {
    is_non_overlapping_and_dense_ = true;
    return;
  }
  // Dense in some dim order: sort dims by stride and check they tile memory exactly. (An insertion
  // sort, stable as std::stable_sort, whose scratch buffer cost a malloc and a free per view.)
  DimVector perm;
  for (int64_t d = 0; d < dim(); ++d) {
    size_t j = perm.size();
    perm.push_back(d);
    for (; j > 0 && strides_[d] < strides_[perm[j - 1]]; --j) perm[j] = perm[j - 1];
    perm[j] = d;
  }
  expected = 1;
  bool dense = true;
  for (int64_t d : perm) {
    if (sizes_[d] == 1) continue;
    if (strides_[d] != expected) {
      dense = false;
      break;
    }
    expected *= sizes_[d];
  }
  is_non_overlapping_and_dense_ = dense;
}

}  // namespace ember
