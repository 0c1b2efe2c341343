// Tensor metadata: sizes, strides, memory formats, element access, new allocations.
#include "ember/tensor.h"

#include <limits>

#include "core/value_read.h"
#include "ember/shape.h"

namespace ember {

int64_t maybe_wrap_dim(int64_t dim, int64_t ndim, const char* op, bool wrap_scalar) {
  if (ndim <= 0) {
    EMBER_CHECK(wrap_scalar, op, "dimension specified as ", dim, " but tensor has no dimensions");
    ndim = 1;
  }
  const int64_t lo = -ndim, hi = ndim - 1;
  EMBER_CHECK(dim >= lo && dim <= hi, op, "Dimension out of range (expected to be in range of [", lo, ", ", hi,
              "], but got ", dim, ")");
  return dim < 0 ? dim + ndim : dim;
}

// (a dim in range taken as it is without the call: kernels ask for sizes in their set-up, and
// the call was 6% of a small avg_pool2d's time)
int64_t Tensor::size(int64_t d) const {
  const IntArrayRef s = sizes();
  if (static_cast<uint64_t>(d) < s.size()) [[likely]] return s[static_cast<size_t>(d)];
  return s[static_cast<size_t>(maybe_wrap_dim(d, dim(), "size", false))];
}
int64_t Tensor::stride(int64_t d) const {
  const IntArrayRef s = strides();
  if (static_cast<uint64_t>(d) < s.size()) [[likely]] return s[static_cast<size_t>(d)];
  return s[static_cast<size_t>(maybe_wrap_dim(d, dim(), "stride", false))];
}

DimVector contiguous_strides(IntArrayRef sizes, MemoryFormat format) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  DimVector strides(nd);
  auto fill = [&](std::initializer_list<int64_t> order) {  // innermost first
    int64_t s = 1;
    for (int64_t d : order) {
      strides[d] = s;
      s *= std::max<int64_t>(sizes[d], 1);
    }
  };
  if (format == MemoryFormat::ChannelsLast) {
    EMBER_CHECK(nd == 4, "contiguous", "required rank 4 tensor to use channels_last format, got rank ", nd);
    fill({1, 3, 2, 0});
  } else if (format == MemoryFormat::ChannelsLast3d) {
    EMBER_CHECK(nd == 5, "contiguous", "required rank 5 tensor to use channels_last_3d format, got rank ", nd);
    fill({1, 4, 3, 2, 0});
  } else {
    int64_t s = 1;
    for (int64_t d = nd - 1; d >= 0; --d) {
      strides[d] = s;
      s *= std::max<int64_t>(sizes[d], 1);
    }
  }
  return strides;
}

namespace {
// Strides match the format exactly, ignoring dims of size 1 (PyTorch's is_channels_last_strides).
bool has_format_strides(IntArrayRef sizes, IntArrayRef strides, std::initializer_list<int64_t> order) {
  int64_t expected = 1;
  for (int64_t d : order) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}
}  // namespace

bool Tensor::is_contiguous(MemoryFormat format) const {
  switch (format) {
    case MemoryFormat::Contiguous:
    case MemoryFormat::Preserve:
      return checked_impl()->is_contiguous();
    case MemoryFormat::ChannelsLast:
      return dim() == 4 && (numel() == 0 || has_format_strides(sizes(), strides(), {1, 3, 2, 0}));
    case MemoryFormat::ChannelsLast3d:
      return dim() == 5 && (numel() == 0 || has_format_strides(sizes(), strides(), {1, 4, 3, 2, 0}));
  }
  return false;
}

namespace {
// c10's is_channels_last_strides_{2d,3d}: visited innermost first (`order`), strides never
// decrease, and a size-1 dim's stride counts too, so an N1HW contiguous tensor stays contiguous
// while an N1HW channels_last one is channels_last.
bool strides_like_format(IntArrayRef sizes, IntArrayRef strides, std::initializer_list<int64_t> order) {
  if (strides[1] == 0) return false;
  int64_t min = 0;
  for (int64_t d : order) {
    if (sizes[d] == 0 || strides[d] < min) return false;
    if (d == 0 && min == strides[1]) return false;  // ambiguous N111: contiguous
    min = strides[d];
    if (sizes[d] > 1) min *= sizes[d];
  }
  return true;
}
}  // namespace

// As PyTorch's suggest_memory_format: the format the strides are ordered like.
MemoryFormat Tensor::suggest_memory_format(bool exact_match) const {
  if (dim() == 4 && strides_like_format(sizes(), strides(), {1, 3, 2, 0})) {
    if (!exact_match || strides().equals(contiguous_strides(sizes(), MemoryFormat::ChannelsLast)))
      return MemoryFormat::ChannelsLast;
  } else if (dim() == 5 && strides_like_format(sizes(), strides(), {1, 4, 3, 2, 0})) {
    if (!exact_match || strides().equals(contiguous_strides(sizes(), MemoryFormat::ChannelsLast3d)))
      return MemoryFormat::ChannelsLast3d;
  }
  return MemoryFormat::Contiguous;
}

std::string Tensor::toString() const { return type().toString(); }

// (out of line: inlined into callers, GCC 12 took TensorOptions' optional fields for uninitialized)
TensorOptions Tensor::options() const { return TensorOptions().dtype(dtype()).device(device()).layout(kStrided); }

DeprecatedTypeProperties Tensor::type() const {
  return {is_quantized() ? Backend::QuantizedCPU : Backend::CPU, scalar_type()};
}

Tensor Tensor::toBackend(Backend backend) const {
  (void)type().toBackend(backend);  // checks it
  return *this;
}

DimnameList Tensor::names() const { return DimnameList(static_cast<size_t>(dim())); }

std::ostream& operator<<(std::ostream& os, const DimnameList& names) {
  os << '[';
  for (size_t i = 0; i < names.size(); ++i) os << (i ? ", " : "") << names[i];
  return os << ']';
}

const std::string& Tensor::name() const {
  static const std::string none;
  return none;
}

Tensor Tensor::operator[](const Scalar& index) const {
  EMBER_CHECK(index.isIntegral(false), "operator[]", "Can only index tensors with integral scalars");
  return select(0, index.toLong());
}

Tensor Tensor::operator[](const Tensor& index) const {
  EMBER_CHECK(index.defined(), "operator[]", "Can only index with tensors that are defined");
  EMBER_CHECK(index.dim() == 0, "operator[]", "Can only index with tensors that are scalars (zero-dim), got shape ",
              index.sizes());
  return (*this)[index.item()];
}

std::ostream& operator<<(std::ostream& os, Backend backend) {
  static const char* const kNames[] = {"CPU", "CUDA", "SparseCPU", "SparseCUDA", "QuantizedCPU", "Undefined"};
  return os << kNames[static_cast<int>(backend)];
}

std::string DeprecatedTypeProperties::toString() const {
  std::ostringstream os;
  os << backend_ << dtype_ << "Type";
  return os.str();
}

DeprecatedTypeProperties DeprecatedTypeProperties::toBackend(Backend backend) const {
  EMBER_CHECK(backend == Backend::CPU || backend == Backend::QuantizedCPU, "toBackend",
              "Ember computes on the CPU only, got backend ", backend);
  return {backend, dtype_};
}

DeprecatedTypeProperties::operator TensorOptions() const { return options(); }

std::ostream& operator<<(std::ostream& os, const DeprecatedTypeProperties& type) { return os << type.toString(); }

std::ostream& operator<<(std::ostream& os, const Dimname&) { return os << "None"; }

namespace detail {
ValueReadHook& value_read_hook() {
  thread_local ValueReadHook hook = nullptr;
  return hook;
}
}  // namespace detail

Scalar Tensor::item() const {
  if (detail::ValueReadHook hook = detail::value_read_hook()) hook(*this, "item");
  EMBER_CHECK(numel() == 1, "item", "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  if (is_complex()) {
    return visit_complex(dtype(), [&](auto v) -> Scalar {
      using T = decltype(v);
      T z = *static_cast<const T*>(data_ptr());
      if (is_conj()) z.imag_ = -z.imag_;
      return Scalar(z);
    });
  }
  return visit_dtype(dtype(), [&](auto v) -> Scalar {
    using T = decltype(v);
    return Scalar(*static_cast<const T*>(data_ptr()));
  });
}

namespace {
int64_t checked_numel(IntArrayRef sizes, const char* op) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    EMBER_CHECK(s >= 0, op, "Trying to create tensor with negative dimension ", s, ": ", sizes);
    EMBER_CHECK(!__builtin_mul_overflow(n, s, &n), op, "the number of elements of a tensor of size ", sizes,
                " overflows int64");
  }
  return n;
}
}  // namespace

Tensor make_empty(IntArrayRef sizes, ScalarType dtype, MemoryFormat format) {
  const int64_t n = checked_numel(sizes, "empty");
  size_t nbytes;
  EMBER_CHECK(!__builtin_mul_overflow(static_cast<size_t>(n), element_size(dtype), &nbytes), "empty",
              "the storage size of a tensor of size ", sizes, " overflows");
  auto storage = IntrusivePtr<StorageImpl>::make(nbytes);
  if (format == MemoryFormat::Preserve || format == MemoryFormat::Contiguous) {
    return Tensor(IntrusivePtr<TensorImpl>::make(TensorImpl::Contiguous{}, std::move(storage), dtype, sizes,
                                                 contiguous_strides(sizes), n));
  }
  DimVector strides = contiguous_strides(sizes, format);
  return Tensor(IntrusivePtr<TensorImpl>::make(std::move(storage), dtype, sizes, strides, 0));
}

Tensor make_empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype) {
  EMBER_CHECK(sizes.size() == strides.size(), "empty_strided", "mismatch in length of strides and shape: ",
              sizes, " vs ", strides);
  checked_numel(sizes, "empty_strided");
  int64_t extent = 1;  // elements needed: 1 + sum((size-1)*stride)
  bool empty = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    EMBER_CHECK(strides[i] >= 0, "empty_strided", "negative strides are not supported, got ", strides);
    if (sizes[i] == 0) empty = true;
    extent += (sizes[i] - 1) * strides[i];
  }
  if (empty) extent = 0;
  auto storage = IntrusivePtr<StorageImpl>::make(static_cast<size_t>(extent) * element_size(dtype));
  return Tensor(IntrusivePtr<TensorImpl>::make(std::move(storage), dtype, sizes, strides, 0));
}

}  // namespace ember
