// Element access without per-element checks, as libtorch's: `t.accessor<float, 2>()` gives a
// TensorAccessor whose operator[] chains down to a reference to the element (a view of the
// tensor's sizes and strides, valid while the tensor lives); the packed accessors
// (`packed_accessor64<float, 2>()`, `packed_accessor32`, `generic_packed_accessor`) copy the sizes
// and strides in, so they stand alone. PtrTraits picks the pointer type (RestrictPtrTraits: a
// __restrict__ pointer).
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>

#include "ember/array_ref.h"

namespace ember {

template <class T>
struct DefaultPtrTraits {
  using PtrType = T*;
};
template <class T>
struct RestrictPtrTraits {
  using PtrType = T* __restrict__;
};

template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
class TensorAccessorBase {
 public:
  using PtrType = typename PtrTraits<T>::PtrType;

  TensorAccessorBase(PtrType data, const index_t* sizes, const index_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  ArrayRef<index_t> sizes() const { return ArrayRef<index_t>(sizes_, N); }
  ArrayRef<index_t> strides() const { return ArrayRef<index_t>(strides_, N); }
  index_t size(index_t i) const { return sizes_[i]; }
  index_t stride(index_t i) const { return strides_[i]; }
  PtrType data() { return data_; }
  const PtrType data() const { return data_; }

 protected:
  PtrType data_;
  const index_t* sizes_;
  const index_t* strides_;
};

template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
class TensorAccessor;

namespace detail {
// operator[] over an accessor base (which holds data_, sizes_ and strides_, as pointers or as
// arrays): [i] drops the first dimension, and with one left gives the element.
template <class Base, class T, size_t N, template <class> class PtrTraits, class index_t>
class AccessorIndexing : public Base {
 public:
  using Base::Base;
  TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](index_t i) {
    return {this->data_ + this->strides_[0] * i, this->sizes_ + 1, this->strides_ + 1};
  }
  const TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](index_t i) const {
    return {this->data_ + this->strides_[0] * i, this->sizes_ + 1, this->strides_ + 1};
  }
};
template <class Base, class T, template <class> class PtrTraits, class index_t>
class AccessorIndexing<Base, T, 1, PtrTraits, index_t> : public Base {
 public:
  using Base::Base;
  T& operator[](index_t i) { return this->data_[this->strides_[0] * i]; }
  const T& operator[](index_t i) const { return this->data_[this->strides_[0] * i]; }
};
}  // namespace detail

template <class T, size_t N, template <class> class PtrTraits, class index_t>
class TensorAccessor
    : public detail::AccessorIndexing<TensorAccessorBase<T, N, PtrTraits, index_t>, T, N, PtrTraits, index_t> {
 public:
  using detail::AccessorIndexing<TensorAccessorBase<T, N, PtrTraits, index_t>, T, N, PtrTraits, index_t>::AccessorIndexing;
};

// Holds its own copies of the sizes and strides.
template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
class GenericPackedTensorAccessorBase {
 public:
  using PtrType = typename PtrTraits<T>::PtrType;

  template <class source_index_t>
  GenericPackedTensorAccessorBase(PtrType data, const source_index_t* sizes, const source_index_t* strides)
      : data_(data) {
    for (size_t i = 0; i < N; ++i) {
      sizes_[i] = static_cast<index_t>(sizes[i]);
      strides_[i] = static_cast<index_t>(strides[i]);
    }
  }
  index_t size(index_t i) const { return sizes_[i]; }
  index_t stride(index_t i) const { return strides_[i]; }
  PtrType data() { return data_; }
  const PtrType data() const { return data_; }

 protected:
  PtrType data_;
  index_t sizes_[N];
  index_t strides_[N];
};

template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
class GenericPackedTensorAccessor
    : public detail::AccessorIndexing<GenericPackedTensorAccessorBase<T, N, PtrTraits, index_t>, T, N, PtrTraits,
                                      index_t> {
 public:
  using detail::AccessorIndexing<GenericPackedTensorAccessorBase<T, N, PtrTraits, index_t>, T, N, PtrTraits,
                                 index_t>::AccessorIndexing;
  // The same elements with two dimensions swapped.
  GenericPackedTensorAccessor transpose(index_t dim1, index_t dim2) const {
    GenericPackedTensorAccessor result(*this);
    std::swap(result.sizes_[dim1], result.sizes_[dim2]);
    std::swap(result.strides_[dim1], result.strides_[dim2]);
    return result;
  }
};

template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor32 = GenericPackedTensorAccessor<T, N, PtrTraits, int32_t>;
template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor64 = GenericPackedTensorAccessor<T, N, PtrTraits, int64_t>;
// libtorch's deprecated name: 64-bit indices by default.
template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
using PackedTensorAccessor = GenericPackedTensorAccessor<T, N, PtrTraits, index_t>;

}  // namespace ember
