// ATen's argument checks (ATen/TensorUtils.h), which custom ops and extensions written for libtorch
// call on their inputs: TensorArg names a tensor argument and its 1-based position, and each
// check raises ember::Error with ATen's message, ending "(while checking arguments for NAME)".
// As ATen's, the checks over a list skip undefined tensors (checkAllDefined excepted).
// Header-only: only programs that call them pay for them.
#pragma once
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "ember/tensor.h"

namespace ember {

// A tensor's geometry captured by value (ATen's TensorGeometry).
class TensorGeometry {
 public:
  TensorGeometry() = default;
  explicit TensorGeometry(const Tensor& t)
      : sizes_(t.sizes().vec()), strides_(t.strides().vec()), storage_offset_(t.storage_offset()), numel_(t.numel()),
        contiguous_(t.is_contiguous()) {}
  TensorGeometry(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset)
      : sizes_(sizes.vec()), strides_(strides.vec()), storage_offset_(storage_offset), numel_(1) {
    for (int64_t s : sizes_) numel_ *= s;
    contiguous_ = dense_row_major();
  }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t size(int64_t d) const { return sizes_.at(static_cast<size_t>(wrap(d))); }
  IntArrayRef sizes() const { return sizes_; }
  int64_t stride(int64_t d) const { return strides_.at(static_cast<size_t>(wrap(d))); }
  IntArrayRef strides() const { return strides_; }
  int64_t storage_offset() const { return storage_offset_; }
  int64_t numel() const { return numel_; }
  bool is_contiguous() const { return contiguous_; }
  TensorGeometry transpose(int64_t d0, int64_t d1) const {
    TensorGeometry r = *this;
    std::swap(r.sizes_.at(static_cast<size_t>(wrap(d0))), r.sizes_.at(static_cast<size_t>(wrap(d1))));
    std::swap(r.strides_.at(static_cast<size_t>(wrap(d0))), r.strides_.at(static_cast<size_t>(wrap(d1))));
    r.contiguous_ = r.dense_row_major();
    return r;
  }

 private:
  // Row-major without gaps, sizes of 1 and empty tensors being contiguous whatever their strides.
  bool dense_row_major() const {
    if (numel_ == 0) return true;
    int64_t expected = 1;
    for (size_t i = sizes_.size(); i-- > 0;) {
      if (sizes_[i] == 1) continue;
      if (strides_[i] != expected) return false;
      expected *= sizes_[i];
    }
    return true;
  }
  int64_t wrap(int64_t d) const {
    if (d < -dim() || d >= std::max<int64_t>(dim(), 1))
      throw Error("TensorGeometry: dimension " + std::to_string(d) + " out of range for a " + std::to_string(dim()) +
                  "-dimensional tensor");
    return d < 0 ? d + dim() : d;
  }
  std::vector<int64_t> sizes_, strides_;
  int64_t storage_offset_ = 0, numel_ = 0;
  bool contiguous_ = true;
};

// A tensor argument of the function named in a check: its name and 1-based position (0 for self).
struct TensorArg {
  const Tensor& tensor;
  const char* name;
  int pos;
  TensorArg(const Tensor& tensor, const char* name, int pos) : tensor(tensor), name(name), pos(pos) {}
  TensorArg(Tensor&& tensor, const char* name, int pos) = delete;  // would dangle
  const Tensor* operator->() const { return &tensor; }
  const Tensor& operator*() const { return tensor; }
};

struct TensorGeometryArg {
  TensorGeometry tensor;
  const char* name;
  int pos;
  TensorGeometryArg(TensorArg arg) : tensor(*arg), name(arg.name), pos(arg.pos) {}  // NOLINT
  TensorGeometryArg(TensorGeometry tensor, const char* name, int pos) : tensor(std::move(tensor)), name(name), pos(pos) {}
  const TensorGeometry* operator->() const { return &tensor; }
  const TensorGeometry& operator*() const { return tensor; }
};

using CheckedFrom = const char*;

namespace detail {
inline void describe_arg(std::ostream& os, const char* name, int pos) {
  if (pos == 0)
    os << "'" << name << "'";
  else
    os << "argument #" << pos << " '" << name << "'";
}
// Raises the message built by write(os), followed by the checking function's name.
template <class Write>
[[noreturn]] void arg_check_failed(CheckedFrom c, const Write& write) {
  std::ostringstream os;
  write(os);
  os << " (while checking arguments for " << c << ")";
  throw Error(os.str());
}
}  // namespace detail

inline std::ostream& operator<<(std::ostream& os, const TensorGeometryArg& t) {
  detail::describe_arg(os, t.name, t.pos);
  return os;
}
inline std::ostream& operator<<(std::ostream& os, const TensorArg& t) {
  detail::describe_arg(os, t.name, t.pos);
  return os;
}

inline void checkDim(CheckedFrom c, const TensorGeometryArg& t, int64_t dim) {
  if (t->dim() != dim)
    detail::arg_check_failed(c, [&](std::ostream& os) {
      os << "Expected " << dim << "-dimensional tensor, but got " << t->dim() << "-dimensional tensor for " << t;
    });
}
inline void checkDim(CheckedFrom c, const Tensor& tensor, const char* name, int pos, int64_t dim) {
  checkDim(c, TensorGeometryArg(TensorArg(tensor, name, pos)), dim);
}
// dim_start <= dim() < dim_end
inline void checkDimRange(CheckedFrom c, const TensorGeometryArg& t, int64_t dim_start, int64_t dim_end) {
  if (t->dim() < dim_start || t->dim() >= dim_end)
    detail::arg_check_failed(c, [&](std::ostream& os) {
      os << "Expected " << dim_start << " to " << dim_end - 1 << " dimensions, but got " << t->dim()
         << "-dimensional tensor for " << t;
    });
}
inline void checkSameDim(CheckedFrom c, const TensorGeometryArg& t1, const TensorGeometryArg& t2) {
  if (t1->dim() != t2->dim())
    detail::arg_check_failed(c, [&](std::ostream& os) {
      os << "Expected tensor for " << t1 << " to have the same dimension as tensor for " << t2 << "; but "
         << t1->dim() << " does not equal " << t2->dim();
    });
}
inline void checkContiguous(CheckedFrom c, const TensorGeometryArg& t) {
  if (!t->is_contiguous())
    detail::arg_check_failed(
        c, [&](std::ostream& os) { os << "Expected contiguous tensor, but got non-contiguous tensor for " << t; });
}
inline void checkSize(CheckedFrom c, const TensorGeometryArg& t, IntArrayRef sizes) {
  checkDim(c, t, static_cast<int64_t>(sizes.size()));
  if (t->sizes() != sizes)
    detail::arg_check_failed(c, [&](std::ostream& os) {
      os << "Expected tensor of size " << sizes << ", but got tensor of size " << t->sizes() << " for " << t;
    });
}
inline void checkSize(CheckedFrom c, const TensorGeometryArg& t, int64_t dim, int64_t size) {
  if (t->size(dim) != size)
    detail::arg_check_failed(c, [&](std::ostream& os) {
      os << "Expected tensor to have size " << size << " at dimension " << dim << ", but got size " << t->size(dim)
         << " for " << t;
    });
}
inline void checkNumel(CheckedFrom c, const TensorGeometryArg& t, int64_t numel) {
  if (t->numel() != numel)
    detail::arg_check_failed(c, [&](std::ostream& os) {
      os << "Expected tensor for " << t << " to have " << numel << " elements; but it actually has " << t->numel()
         << " elements";
    });
}
inline void checkSameNumel(CheckedFrom c, const TensorArg& t1, const TensorArg& t2) {
  if (t1->numel() != t2->numel())
    detail::arg_check_failed(c, [&](std::ostream& os) {
      os << "Expected tensor for " << t1 << " to have same number of elements as tensor for " << t2 << "; but "
         << t1->numel() << " does not equal " << t2->numel();
    });
}
inline void checkSameSize(CheckedFrom c, const TensorArg& t1, const TensorArg& t2) {
  if (t1->sizes() != t2->sizes())
    detail::arg_check_failed(c, [&](std::ostream& os) {
      os << "Expected tensor for " << t1 << " to have same size as tensor for " << t2 << "; but " << t1->sizes()
         << " does not equal " << t2->sizes();
    });
}
// The same dtype, layout and device type (the type toString() names, "CPUFloatType").
inline void checkSameType(CheckedFrom c, const TensorArg& t1, const TensorArg& t2) {
  if (t1->toString() != t2->toString())
    detail::arg_check_failed(c, [&](std::ostream& os) {
      os << "Expected tensor for " << t1 << " to have the same type as tensor for " << t2 << "; but type "
         << t1->toString() << " does not equal " << t2->toString();
    });
}
inline void checkScalarType(CheckedFrom c, const TensorArg& t, ScalarType s) {
  if (t->scalar_type() != s)
    detail::arg_check_failed(c, [&](std::ostream& os) {
      os << "Expected tensor for " << t << " to have scalar type " << to_string(s) << "; but got " << t->toString()
         << " instead";
    });
}
inline void checkScalarTypes(CheckedFrom c, const TensorArg& t, ArrayRef<ScalarType> types) {
  if (std::find(types.begin(), types.end(), t->scalar_type()) == types.end())
    detail::arg_check_failed(c, [&](std::ostream& os) {
      os << "Expected tensor for " << t << " to have one of the following scalar types: ";
      for (size_t i = 0; i < types.size(); ++i) os << (i ? ", " : "") << to_string(types[i]);
      os << "; but got " << t->toString() << " instead";
    });
}
inline void checkDefined(CheckedFrom c, const TensorArg& t) {
  if (!t->defined())
    detail::arg_check_failed(
        c, [&](std::ostream& os) { os << "Expected tensor for " << t << " to be non-null, but it was undefined "; });
}
inline void checkAllDefined(CheckedFrom c, ArrayRef<TensorArg> ts) {
  for (const TensorArg& t : ts) checkDefined(c, t);
}
inline void checkAllContiguous(CheckedFrom c, ArrayRef<TensorArg> ts) {
  for (const TensorArg& t : ts)
    if (t->defined()) checkContiguous(c, t);
}
namespace detail {
// check(c, first, t) for each defined tensor after the first defined one.
template <class Check>
void check_all_against_first(CheckedFrom c, ArrayRef<TensorArg> ts, const Check& check) {
  const TensorArg* first = nullptr;
  for (const TensorArg& t : ts) {
    if (!t->defined()) continue;
    if (first)
      check(c, *first, t);
    else
      first = &t;
  }
}
}  // namespace detail
inline void checkAllSameType(CheckedFrom c, ArrayRef<TensorArg> ts) {
  detail::check_all_against_first(c, ts, [](CheckedFrom f, const TensorArg& a, const TensorArg& b) { checkSameType(f, a, b); });
}
inline void checkAllSameNumel(CheckedFrom c, ArrayRef<TensorArg> ts) {
  detail::check_all_against_first(c, ts, [](CheckedFrom f, const TensorArg& a, const TensorArg& b) { checkSameNumel(f, a, b); });
}
inline void checkAllSameSize(CheckedFrom c, ArrayRef<TensorArg> ts) {
  detail::check_all_against_first(c, ts, [](CheckedFrom f, const TensorArg& a, const TensorArg& b) { checkSameSize(f, a, b); });
}
inline void checkDeviceType(CheckedFrom c, ArrayRef<Tensor> ts, DeviceType type) {
  for (const Tensor& t : ts)
    if (t.defined() && t.device().type() != type)
      detail::arg_check_failed(c, [&](std::ostream& os) {
        os << "Expected tensor to have " << type << " DeviceType, but got tensor with " << t.device().type()
           << " DeviceType";
      });
}
inline void checkLayout(CheckedFrom c, const Tensor& t, Layout layout) {
  if (t.defined() && t.layout() != layout)
    detail::arg_check_failed(c, [&](std::ostream& os) {
      os << "Expected tensor to have " << layout << " Layout, but got tensor with " << t.layout() << " Layout";
    });
}
inline void checkLayout(CheckedFrom c, ArrayRef<Tensor> ts, Layout layout) {
  for (const Tensor& t : ts) checkLayout(c, t, layout);
}
inline void* maybe_data_ptr(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }
inline void* maybe_data_ptr(const TensorArg& t) { return maybe_data_ptr(*t); }
// tensor.dim() == dim and tensor.size(dim_size) == size
inline void check_dim_size(const Tensor& tensor, int64_t dim, int64_t dim_size, int64_t size) {
  if (tensor.dim() != dim || tensor.size(dim_size) != size) {
    std::ostringstream os;
    os << "Expected a tensor of dimension " << dim << " and tensor.size[" << dim_size << "] == " << size
       << " but got: dimension " << tensor.dim() << " and tensor.size[" << dim_size << "] = " << tensor.size(dim_size);
    throw Error(os.str());
  }
}

}  // namespace ember
