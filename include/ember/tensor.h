// ember::Tensor: a handle to a ref-counted TensorImpl (sizes, strides, offset, dtype, device)
// over a shared Storage. Methods mirror libtorch's; most forward to the free functions of the
// op headers (pointwise.h, reduce.h, shape.h, indexing.h, factory.h).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ember/accessor.h"
#include "ember/array_ref.h"
#include "ember/device.h"
#include "ember/dtype.h"
#include "ember/error.h"
#include "ember/intrusive_ptr.h"
#include "ember/quantizer.h"
#include "ember/scalar.h"
#include "ember/storage.h"
#include "ember/tensor_options.h"
#include "ember/unary_ops.h"

namespace ember {

namespace indexing {
class TensorIndex;
}
namespace autograd {
struct Node;
}

// The slot TensorImpl keeps for autograd. Core knows nothing more of it: src/autograd derives
// its AutogradMeta (grad, grad_fn, ...) from this.
struct AutogradMetaInterface {
  virtual ~AutogradMetaInterface() = default;
};

class TensorImpl : public RefCounted {
 public:
  TensorImpl(IntrusivePtr<StorageImpl> storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
             int64_t storage_offset);
  // A new contiguous tensor (sizes, their contiguous strides and numel already known).
  struct Contiguous {};
  TensorImpl(Contiguous, IntrusivePtr<StorageImpl> storage, ScalarType dtype, IntArrayRef sizes,
             DimVector&& strides, int64_t numel);
  static void* operator new(size_t n) { return cpu_allocator::allocate_object(n); }
  static void operator delete(void* p, size_t n) { cpu_allocator::deallocate_object(p, n); }

  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return Device(kCPU); }
  const IntrusivePtr<StorageImpl>& storage() const { return storage_; }
  bool is_contiguous() const { return is_contiguous_; }
  bool is_non_overlapping_and_dense() const { return is_non_overlapping_and_dense_; }
  char* data() const {
    return static_cast<char*>(storage_->data()) + storage_offset_ * static_cast<int64_t>(element_size(dtype_));
  }

  // Metadata changes (views made in place: squeeze_, t_, as_strided_, resize_).
  void set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> offset = {});
  void set_storage(IntrusivePtr<StorageImpl> s) { storage_ = std::move(s); }
  // ---- nn: nn::set_data (Module::to) swaps a parameter's data, dtype included ----
  void set_dtype(ScalarType t) { dtype_ = t; }

  // Autograd state. requires_grad() (a leaf asking for gradients, or a result with a grad_fn)
  // and the conjugate and quantized bits share one byte, so that dispatch's fast path tests them
  // all with one load per tensor.
  enum Flag : uint8_t { kRequiresGradFlag = 1, kConjFlag = 2, kQuantizedFlag = 4 };
  uint8_t dispatch_flags() const { return flags_; }
  bool requires_grad() const { return flags_ & kRequiresGradFlag; }
  void set_requires_grad_flag(bool v) { set_flag(kRequiresGradFlag, v); }
  // A complex tensor whose elements read as the conjugates of what its storage holds (conj()).
  bool is_conj() const { return flags_ & kConjFlag; }
  void set_conj(bool v) { set_flag(kConjFlag, v); }
  // Quantized tensors (ember/quantized.h): the scheme and parameters, null for other dtypes.
  bool is_quantized() const { return flags_ & kQuantizedFlag; }
  const IntrusivePtr<Quantizer>& quantizer() const { return quantizer_; }
  void set_quantizer(IntrusivePtr<Quantizer> q) {
    set_flag(kQuantizedFlag, static_cast<bool>(q));
    quantizer_ = std::move(q);
  }
  bool is_inference() const { return is_inference_; }
  void set_inference(bool v) { is_inference_ = v; }
  AutogradMetaInterface* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaInterface> m) { autograd_meta_ = std::move(m); }

 private:
  void refresh();
  std::unique_ptr<AutogradMetaInterface> autograd_meta_;
  IntrusivePtr<StorageImpl> storage_;
  IntrusivePtr<Quantizer> quantizer_;
  DimVector sizes_;
  DimVector strides_;
  int64_t storage_offset_ = 0;
  int64_t numel_ = 1;
  ScalarType dtype_;
  bool is_contiguous_ = true;
  bool is_non_overlapping_and_dense_ = true;
  uint8_t flags_ = 0;
  bool is_inference_ = false;
  void set_flag(Flag f, bool v) { flags_ = v ? static_cast<uint8_t>(flags_ | f) : static_cast<uint8_t>(flags_ & ~f); }
};

class Generator;
class Tensor;
using TensorList = ArrayRef<Tensor>;

// libtorch's c10::Backend, which Ember's tensors answer with CPU (or QuantizedCPU).
enum class Backend : int8_t { CPU, CUDA, SparseCPU, SparseCUDA, QuantizedCPU, Undefined };
std::ostream& operator<<(std::ostream& os, Backend backend);

// What libtorch's deprecated Tensor::type() returns: a backend and a dtype, compared and printed
// as one ("CPUFloatType").
class DeprecatedTypeProperties {
 public:
  DeprecatedTypeProperties(Backend backend, ScalarType dtype) : backend_(backend), dtype_(dtype) {}
  Backend backend() const { return backend_; }
  Layout layout() const { return kStrided; }
  bool is_sparse() const { return false; }
  bool is_sparse_csr() const { return false; }
  DeviceType device_type() const { return kCPU; }
  bool is_cuda() const { return false; }
  ScalarType scalarType() const { return dtype_; }
  TypeMeta typeMeta() const { return TypeMeta::fromScalarType(dtype_); }
  bool operator==(const DeprecatedTypeProperties& o) const { return backend_ == o.backend_ && dtype_ == o.dtype_; }
  bool operator!=(const DeprecatedTypeProperties& o) const { return !(*this == o); }
  std::string toString() const;
  DeprecatedTypeProperties toBackend(Backend backend) const;  // CPU ones only
  DeprecatedTypeProperties toScalarType(ScalarType dtype) const { return {backend_, dtype}; }
  DeprecatedTypeProperties cpu() const { return *this; }
  TensorOptions options() const { return TensorOptions(dtype_); }
  // As libtorch's, a type stands for its options: torch::zeros(sizes, x.type()). Out of line: inlined,
  // GCC 12 warns that TensorOptions' optional fields may be used uninitialized (a false positive).
  operator TensorOptions() const;  // NOLINT

 private:
  Backend backend_;
  ScalarType dtype_;
};
std::ostream& operator<<(std::ostream& os, const DeprecatedTypeProperties& type);

// A dim's name; Ember's tensors have none, so every one is the wildcard, printed "None".
class Dimname {
 public:
  static Dimname wildcard() { return Dimname(); }
  bool is_wildcard() const { return true; }
  std::string symbol() const { return "*"; }
};
std::ostream& operator<<(std::ostream& os, const Dimname& name);
struct DimnameList : std::vector<Dimname> {
  using std::vector<Dimname>::vector;
};
std::ostream& operator<<(std::ostream& os, const DimnameList& names);  // "[None, None]"


class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  ~Tensor() = default;
  // Assigning to a named tensor rebinds it; assigning to a temporary writes into the elements it
  // views, as in libtorch: x[0] = 5, x.select(1, 2) = y, x.index({0}) = y.
  Tensor& operator=(const Tensor&) & = default;
  Tensor& operator=(Tensor&&) & noexcept = default;
  Tensor& operator=(const Tensor& src) && { return copy_(src); }
  Tensor& operator=(Tensor&& src) && { return copy_(src); }
  Tensor& operator=(const Scalar& value) && { return fill_(value); }

  // ---- metadata -------------------------------------------------------------------------
  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }
  const IntrusivePtr<TensorImpl>& impl() const { return impl_; }
  void reset() { impl_.reset(); }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  int32_t use_count() const { return impl_.use_count(); }

  IntArrayRef sizes() const { return checked_impl()->sizes(); }
  IntArrayRef strides() const { return checked_impl()->strides(); }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return checked_impl()->dim(); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return checked_impl()->numel(); }
  int64_t storage_offset() const { return checked_impl()->storage_offset(); }
  ScalarType scalar_type() const { return checked_impl()->dtype(); }
  TypeMeta dtype() const { return TypeMeta::fromScalarType(checked_impl()->dtype()); }
  Device device() const { return checked_impl()->device(); }
  Layout layout() const { return kStrided; }
  bool is_cpu() const { return true; }
  bool is_cuda() const { return false; }
  TensorOptions options() const;
  size_t element_size() const { return ember::element_size(dtype()); }
  size_t itemsize() const { return element_size(); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  bool is_floating_point() const { return is_floating_type(dtype()); }
  bool is_complex() const { return is_complex_type(dtype()); }
  bool is_conj() const { return checked_impl()->is_conj(); }
  bool is_signed() const { return is_signed_type(dtype()); }
  bool is_contiguous(MemoryFormat format = MemoryFormat::Contiguous) const;
  bool is_non_overlapping_and_dense() const { return checked_impl()->is_non_overlapping_and_dense(); }
  MemoryFormat suggest_memory_format(bool channels_last_strides_exact_match = false) const;
  std::string toString() const;  // "CPUFloatType"
  // libtorch's deprecated type(): the backend and dtype as one value, printed as toString().
  DeprecatedTypeProperties type() const;
  Tensor toBackend(Backend backend) const;  // the CPU's: this tensor; another raises
  // Named tensors, as libtorch's without names: every dim's name is None; the autograd name is empty.
  DimnameList names() const;
  const std::string& name() const;

  // ---- quantized tensors (ember/quantized.h) ------------------------------------------------
  bool is_quantized() const { return checked_impl()->is_quantized(); }
  QScheme qscheme() const;
  double q_scale() const;  // per-tensor schemes
  int64_t q_zero_point() const;
  Tensor q_per_channel_scales() const;  // per-channel schemes: float64 [channels]
  Tensor q_per_channel_zero_points() const;  // int64 [channels]
  int64_t q_per_channel_axis() const;
  Tensor int_repr() const;  // the stored integers (int8, uint8, int32), a new tensor
  Tensor dequantize() const;

  void* data_ptr() const { return checked_impl()->data(); }
  template <class T>
  T* data_ptr() const;
  template <class T>
  const T* const_data_ptr() const { return data_ptr<T>(); }
  template <class T>  // libtorch's deprecated spelling, still in public programs (transfer-learning)
  [[deprecated("Tensor.data<T>() is deprecated. Please use Tensor.data_ptr<T>() instead.")]] T* data() const {
    return data_ptr<T>();
  }
  // Unchecked element access (ember/accessor.h): the tensor must have dtype T and N dims, and
  // outlive a TensorAccessor (so an rvalue has none); packed accessors copy sizes and strides.
  template <class T, size_t N>
  TensorAccessor<T, N> accessor() const&;
  template <class T, size_t N>
  TensorAccessor<T, N> accessor() && = delete;
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
  GenericPackedTensorAccessor<T, N, PtrTraits, index_t> generic_packed_accessor() const&;
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
  GenericPackedTensorAccessor<T, N, PtrTraits, index_t> generic_packed_accessor() && = delete;
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor32<T, N, PtrTraits> packed_accessor32() const&;
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor32<T, N, PtrTraits> packed_accessor32() && = delete;
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor64<T, N, PtrTraits> packed_accessor64() const& {
    return generic_packed_accessor<T, N, PtrTraits, int64_t>();
  }
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor64<T, N, PtrTraits> packed_accessor64() && = delete;
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
  PackedTensorAccessor<T, N, PtrTraits, index_t> packed_accessor() const& {
    return generic_packed_accessor<T, N, PtrTraits, index_t>();
  }
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits, class index_t = int64_t>
  PackedTensorAccessor<T, N, PtrTraits, index_t> packed_accessor() && = delete;
  Scalar item() const;
  template <class T>
  T item() const { return item().to<T>(); }

  // ---- copies, casts, layout ----------------------------------------------------------------
  Tensor contiguous(MemoryFormat format = MemoryFormat::Contiguous) const;
  Tensor clone(std::optional<MemoryFormat> format = std::nullopt) const;
  Tensor& copy_(const Tensor& src, bool non_blocking = false) const;
  Tensor to(ScalarType dtype, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> format = std::nullopt) const;
  Tensor to(TensorOptions options, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> format = std::nullopt) const;
  Tensor to(TypeMeta dtype, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> format = std::nullopt) const {
    return to(dtype.toScalarType(), non_blocking, copy, format);
  }
  Tensor to(Device device, ScalarType dtype, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> format = std::nullopt) const;
  Tensor to(std::optional<ScalarType> dtype, std::optional<Layout> layout, std::optional<Device> device,
            std::optional<bool> pin_memory, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> format = std::nullopt) const;
  Tensor to(MemoryFormat format) const;
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false,
            std::optional<MemoryFormat> format = std::nullopt) const;
  Tensor cpu() const { return *this; }
  Tensor cuda() const;  // raises ember::Error: Ember has no CUDA device
  Tensor toType(ScalarType t) const { return to(t); }
  Tensor type_as(const Tensor& other) const { return to(other.dtype()); }
  Tensor& fill_(const Scalar& value) const;
  Tensor& fill_(const Tensor& value) const;
  Tensor& zero_() const;
  Tensor& resize_(IntArrayRef sizes, std::optional<MemoryFormat> format = std::nullopt) const;
  bool equal(const Tensor& other) const;
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  Tensor isclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  void print() const;  // "[CPUFloatType [2, 3]]" on std::cerr, as libtorch's

  // ---- views (shape.h) ----------------------------------------------------------------------
  Tensor view(IntArrayRef sizes) const;
  Tensor view(ScalarType dtype) const;
  Tensor view_as(const Tensor& other) const { return view(other.sizes()); }
  Tensor reshape(IntArrayRef sizes) const;
  Tensor reshape_as(const Tensor& other) const { return reshape(other.sizes()); }
  Tensor permute(IntArrayRef dims) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor& transpose_(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor& t_() const;
  Tensor mT() const;
  Tensor mH() const { return adjoint(); }
  // adjoint is mT conjugated; alias a view of the same elements; resolve_neg self (no negative bit)
  Tensor adjoint() const;
  Tensor alias() const;
  // Complex (src/ops/complex.cpp, docs/complex.md): conj() is a view with the conjugate bit
  // (real tensors: self); resolve_conj() materializes it; conj_physical() computes a new tensor.
  Tensor conj() const;
  Tensor resolve_conj() const;
  Tensor conj_physical() const;
  Tensor& conj_physical_() const;
  Tensor real() const;  // views of the parts (real tensors: real() is self, imag() raises)
  Tensor imag() const;
  Tensor angle() const;
  Tensor resolve_neg() const;
  Tensor movedim(IntArrayRef source, IntArrayRef destination) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor expand(IntArrayRef sizes, bool implicit = false) const;
  Tensor expand_as(const Tensor& other) const { return expand(other.sizes()); }
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor& squeeze_() const;
  Tensor& squeeze_(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor& unsqueeze_(int64_t dim) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t dim, IntArrayRef sizes) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> storage_offset = std::nullopt) const;
  Tensor& as_strided_(IntArrayRef sizes, IntArrayRef strides,
                      std::optional<int64_t> storage_offset = std::nullopt) const;
  Tensor unfold(int64_t dim, int64_t size, int64_t step) const;
  // ember::stft / istft (fft.h)
  Tensor stft(int64_t n_fft, std::optional<int64_t> hop_length, std::optional<int64_t> win_length,
              const std::optional<Tensor>& window, bool normalized, std::optional<bool> onesided = std::nullopt,
              std::optional<bool> return_complex = std::nullopt) const;
  Tensor stft(int64_t n_fft, std::optional<int64_t> hop_length = std::nullopt,
              std::optional<int64_t> win_length = std::nullopt, const std::optional<Tensor>& window = {},
              bool center = true, std::string_view pad_mode = "reflect", bool normalized = false,
              std::optional<bool> onesided = std::nullopt, std::optional<bool> return_complex = std::nullopt) const;
  Tensor istft(int64_t n_fft, std::optional<int64_t> hop_length = std::nullopt,
               std::optional<int64_t> win_length = std::nullopt, const std::optional<Tensor>& window = {},
               bool center = true, bool normalized = false, std::optional<bool> onesided = std::nullopt,
               std::optional<int64_t> length = std::nullopt, bool return_complex = false) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split(IntArrayRef split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> split_with_sizes(IntArrayRef split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor index(ArrayRef<indexing::TensorIndex> indices) const;
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& value) const;
  Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Scalar& value) const;
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value) const;
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Scalar& value) const;
  // ATen's list form (c10::List<optional<Tensor>> in libtorch): one index tensor, or nullopt for a
  // whole dim, per leading dim: advanced indexing only.
  Tensor index(ArrayRef<std::optional<Tensor>> indices) const;
  Tensor& index_put_(ArrayRef<std::optional<Tensor>> indices, const Tensor& values, bool accumulate = false) const;
  Tensor operator[](int64_t index) const { return select(0, index); }
  // libtorch's: an integral Scalar, or a zero-dim tensor holding one, selects along dim 0.
  Tensor operator[](const Scalar& index) const;
  Tensor operator[](const Tensor& index) const;

  // ---- pointwise (pointwise.h) ------------------------------------------------------------
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor& add_(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor& add_(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor& sub_(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor& sub_(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(const Scalar& other) const;
  Tensor& mul_(const Tensor& other) const;
  Tensor& mul_(const Scalar& other) const;
  Tensor div(const Tensor& other, std::optional<std::string_view> rounding_mode = std::nullopt) const;
  Tensor div(const Scalar& other, std::optional<std::string_view> rounding_mode = std::nullopt) const;
  Tensor& div_(const Tensor& other, std::optional<std::string_view> rounding_mode = std::nullopt) const;
  Tensor& div_(const Scalar& other, std::optional<std::string_view> rounding_mode = std::nullopt) const;
  Tensor remainder(const Tensor& other) const;
  Tensor remainder(const Scalar& other) const;
  Tensor& remainder_(const Tensor& other) const;
  Tensor& remainder_(const Scalar& other) const;
  Tensor fmod(const Tensor& other) const;
  Tensor fmod(const Scalar& other) const;
  Tensor& fmod_(const Tensor& other) const;
  Tensor& fmod_(const Scalar& other) const;
  Tensor floor_divide(const Tensor& other) const;
  Tensor floor_divide(const Scalar& other) const;
  Tensor& floor_divide_(const Tensor& other) const;
  Tensor& floor_divide_(const Scalar& other) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(const Scalar& exponent) const;
  Tensor& pow_(const Tensor& exponent) const;
  Tensor& pow_(const Scalar& exponent) const;
  Tensor minimum(const Tensor& other) const;
  Tensor maximum(const Tensor& other) const;
  Tensor atan2(const Tensor& other) const;
  Tensor lerp(const Tensor& end, const Scalar& weight) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor& lerp_(const Tensor& end, const Scalar& weight) const;
  Tensor& lerp_(const Tensor& end, const Tensor& weight) const;
  Tensor clamp(const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt) const;
  Tensor clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt) const;
  Tensor& clamp_(const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt) const;
  Tensor clamp_min(const Scalar& min) const;
  Tensor clamp_max(const Scalar& max) const;
  Tensor& clamp_min_(const Scalar& min) const;
  Tensor& clamp_max_(const Scalar& max) const;
  Tensor& clamp_(const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt) const;
  Tensor clamp_min(const Tensor& min) const;
  Tensor clamp_max(const Tensor& max) const;
  Tensor& clamp_min_(const Tensor& min) const;
  Tensor& clamp_max_(const Tensor& max) const;
  Tensor max(const Tensor& other) const;  // maximum
  Tensor min(const Tensor& other) const;  // minimum
  Tensor round(int64_t decimals) const;
  Tensor& round_(int64_t decimals) const;
  Tensor where(const Tensor& condition, const Tensor& other) const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;
  Tensor& masked_fill_(const Tensor& mask, const Scalar& value) const;
  Tensor& masked_fill_(const Tensor& mask, const Tensor& value) const;
  Tensor addcmul(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;
  Tensor addcdiv(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;
  Tensor& addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;
  Tensor& addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1) const;

  Tensor eq(const Tensor& other) const;
  Tensor eq(const Scalar& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor ne(const Scalar& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor lt(const Scalar& other) const;
  Tensor le(const Tensor& other) const;
  Tensor le(const Scalar& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor gt(const Scalar& other) const;
  Tensor ge(const Tensor& other) const;
  Tensor ge(const Scalar& other) const;
  Tensor logical_and(const Tensor& other) const;
  Tensor logical_or(const Tensor& other) const;
  Tensor logical_xor(const Tensor& other) const;
  Tensor logical_not() const;
  Tensor bitwise_and(const Tensor& other) const;
  Tensor bitwise_and(const Scalar& other) const;
  Tensor bitwise_or(const Tensor& other) const;
  Tensor bitwise_or(const Scalar& other) const;
  Tensor bitwise_xor(const Tensor& other) const;
  Tensor bitwise_xor(const Scalar& other) const;
  Tensor bitwise_not() const;

#define EMBER_UNARY_METHODS(name) \
  Tensor name() const;            \
  Tensor& name##_() const;
  EMBER_FOR_EACH_UNARY_METHOD(EMBER_UNARY_METHODS)
#undef EMBER_UNARY_METHODS
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  Tensor nan_to_num(std::optional<double> nan = std::nullopt, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt) const;

  // ---- reductions (reduce.h) ----------------------------------------------------------------
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(OptionalIntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(OptionalIntArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(int64_t dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor amax(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor var(bool unbiased = true) const;
  Tensor var(OptionalIntArrayRef dim, bool unbiased = true, bool keepdim = false) const;
  Tensor var(OptionalIntArrayRef dim, std::optional<int64_t> correction, bool keepdim = false) const;
  // x.var(2) reduces dim 2, as libtorch's (without it the 2 would convert to `unbiased`).
  Tensor var(int dim) const;
  Tensor std(bool unbiased = true) const;
  Tensor std(OptionalIntArrayRef dim, bool unbiased = true, bool keepdim = false) const;
  Tensor std(OptionalIntArrayRef dim, std::optional<int64_t> correction, bool keepdim = false) const;
  Tensor std(int dim) const;
  Tensor norm(const Scalar& p = 2) const;
  Tensor norm(const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim = false) const;
  Tensor logsumexp(IntArrayRef dim, bool keepdim = false) const;
  Tensor all() const;
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;
  Tensor cumsum(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor cumprod(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> sort(std::optional<bool> stable, int64_t dim = -1, bool descending = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  std::tuple<Tensor, Tensor> kthvalue(int64_t k, int64_t dim = -1, bool keepdim = false) const;

  // ---- indexing and joining (indexing.h) ---------------------------------------------------
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index, bool sparse_grad = false) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Scalar& value) const;
  // reduce "add" or "multiply" (not differentiable, as PyTorch's)
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1) const;
  Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1) const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor nonzero() const;
  Tensor repeat(IntArrayRef repeats) const;
  Tensor flip(IntArrayRef dims) const;
  Tensor roll(IntArrayRef shifts, IntArrayRef dims = {}) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor& tril_(int64_t diagonal = 0) const;
  Tensor& triu_(int64_t diagonal = 0) const;

  // ---- linear algebra (linalg.h) ------------------------------------------------------------
  Tensor mm(const Tensor& mat2) const;
  Tensor bmm(const Tensor& mat2) const;
  Tensor matmul(const Tensor& other) const;
  Tensor addmm(const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor& addmm_(const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor addmv(const Tensor& mat, const Tensor& vec, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor& addmv_(const Tensor& mat, const Tensor& vec, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor baddbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor& baddbmm_(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor dot(const Tensor& tensor) const;
  Tensor vdot(const Tensor& other) const;
  Tensor mv(const Tensor& vec) const;
  Tensor outer(const Tensor& vec2) const;
  Tensor ger(const Tensor& vec2) const;

  // ---- torch.linalg's older method spellings (linalg_functions.h) ------------------------------
  Tensor det() const;
  Tensor logdet() const;
  std::tuple<Tensor, Tensor> slogdet() const;
  Tensor inverse() const;
  Tensor cholesky(bool upper = false) const;
  Tensor cholesky_solve(const Tensor& input2, bool upper = false) const;
  Tensor cholesky_inverse(bool upper = false) const;
  std::tuple<Tensor, Tensor> qr(bool some = true) const;
  std::tuple<Tensor, Tensor, Tensor> svd(bool some = true, bool compute_uv = true) const;
  std::tuple<Tensor, Tensor> symeig(bool eigenvectors = false, bool upper = true) const;
  std::tuple<Tensor, Tensor> triangular_solve(const Tensor& A, bool upper = true, bool transpose = false,
                                              bool unitriangular = false) const;
  Tensor lu_solve(const Tensor& LU_data, const Tensor& LU_pivots) const;
  Tensor matrix_power(int64_t n) const;
  Tensor matrix_exp() const;
  Tensor pinverse(double rcond = 1e-15) const;
  std::tuple<Tensor, Tensor> geqrf() const;
  Tensor orgqr(const Tensor& input2) const;
  Tensor ormqr(const Tensor& input2, const Tensor& input3, bool left = true, bool transpose = false) const;

  // ---- autograd (autograd.h) --------------------------------------------------------------
  const Tensor& requires_grad_(bool requires_grad = true) const;
  const Tensor& set_requires_grad(bool requires_grad) const { return requires_grad_(requires_grad); }
  bool requires_grad() const { return impl_ && impl_->requires_grad(); }
  const Tensor& grad() const;  // undefined until a backward reaches this tensor
  Tensor& mutable_grad() const;
  const std::shared_ptr<autograd::Node>& grad_fn() const;  // null for leaves
  bool is_leaf() const;
  uint32_t output_nr() const;
  int64_t _version() const {
    EMBER_CHECK(!is_inference(), "_version", "Inference tensors do not track version counter.");
    return checked_impl()->storage()->version();
  }
  bool is_inference() const { return checked_impl()->is_inference(); }
  Tensor detach() const;
  // libtorch's deprecated forms of detach (the same elements, outside the graph)
  Tensor data() const { return detach(); }
  Tensor variable_data() const { return detach(); }
  Tensor tensor_data() const { return detach(); }
  Tensor& detach_() const;
  // libtorch's set_data: this tensor takes new_data's storage, sizes, strides and dtype, keeping its
  // identity (autograd state, gradient, every handle to it).
  void set_data(const Tensor& new_data) const;
  void retain_grad() const;
  bool retains_grad() const;
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  // A hook on this tensor's gradient, run when it is computed: fn(grad) returns void, or a
  // Tensor of grad's shape that replaces it (an undefined one keeps it). Returns the handle
  // remove_hook takes. Hooks run in registration order, before retain_grad() stores the gradient.
  template <class F>
  unsigned register_hook(F&& fn) const {
    if constexpr (std::is_void_v<std::invoke_result_t<F&, Tensor>>) {
      return _register_hook([f = std::forward<F>(fn)](const Tensor& g) mutable {
        f(g);
        return Tensor();
      });
    } else {
      return _register_hook(std::function<Tensor(const Tensor&)>(std::forward<F>(fn)));
    }
  }
  unsigned _register_hook(std::function<Tensor(const Tensor&)> hook) const;
  void remove_hook(unsigned pos) const;
  bool is_view() const;
  const Tensor& _base() const;  // the tensor a view aliases (undefined for non-views)

  // ---- in-place operators ----------------------------------------------------------------
  // libtorch's remaining ATen methods (issue 26), defined in src/ops/aten_tail.cpp.
#define EMBER_COMPOSITE_UNARY_METHODS(name) \
  Tensor name() const;                      \
  Tensor& name##_() const;
  EMBER_FOR_EACH_COMPOSITE_UNARY(EMBER_COMPOSITE_UNARY_METHODS)
#undef EMBER_COMPOSITE_UNARY_METHODS
  Tensor positive() const { return *this; }
  Tensor signbit() const;
  Tensor logit(std::optional<double> eps = std::nullopt) const;
  Tensor& logit_(std::optional<double> eps = std::nullopt) const;
  Tensor clip(const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt) const;
  Tensor clip(const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt) const;
  Tensor& clip_(const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt) const;
  Tensor& clip_(const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt) const;
  Tensor multiply(const Tensor& other) const;
  Tensor multiply(const Scalar& other) const;
  Tensor& multiply_(const Tensor& other) const;
  Tensor& multiply_(const Scalar& other) const;
  Tensor divide(const Tensor& other, std::optional<std::string_view> rounding_mode = std::nullopt) const;
  Tensor divide(const Scalar& other, std::optional<std::string_view> rounding_mode = std::nullopt) const;
  Tensor& divide_(const Tensor& other, std::optional<std::string_view> rounding_mode = std::nullopt) const;
  Tensor& divide_(const Scalar& other, std::optional<std::string_view> rounding_mode = std::nullopt) const;
  Tensor true_divide(const Tensor& other) const;
  Tensor true_divide(const Scalar& other) const;
  Tensor& true_divide_(const Tensor& other) const;
  Tensor& true_divide_(const Scalar& other) const;
  Tensor subtract(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor subtract(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor& subtract_(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor& subtract_(const Scalar& other, const Scalar& alpha = 1) const;
#define EMBER_COMPARISON_ALIAS_METHODS(name)  \
  Tensor name(const Tensor& other) const;     \
  Tensor name(const Scalar& other) const;     \
  Tensor& name##_(const Tensor& other) const; \
  Tensor& name##_(const Scalar& other) const;
  EMBER_COMPARISON_ALIAS_METHODS(greater)
  EMBER_COMPARISON_ALIAS_METHODS(greater_equal)
  EMBER_COMPARISON_ALIAS_METHODS(less)
  EMBER_COMPARISON_ALIAS_METHODS(less_equal)
  EMBER_COMPARISON_ALIAS_METHODS(not_equal)
#undef EMBER_COMPARISON_ALIAS_METHODS
#define EMBER_COMPARISON_INPLACE_METHODS(name) \
  Tensor& name##_(const Tensor& other) const;  \
  Tensor& name##_(const Scalar& other) const;
  EMBER_COMPARISON_INPLACE_METHODS(eq)
  EMBER_COMPARISON_INPLACE_METHODS(ne)
  EMBER_COMPARISON_INPLACE_METHODS(lt)
  EMBER_COMPARISON_INPLACE_METHODS(le)
  EMBER_COMPARISON_INPLACE_METHODS(gt)
  EMBER_COMPARISON_INPLACE_METHODS(ge)
#undef EMBER_COMPARISON_INPLACE_METHODS
  Tensor& logical_and_(const Tensor& other) const;
  Tensor& logical_or_(const Tensor& other) const;
  Tensor& logical_xor_(const Tensor& other) const;
  Tensor& logical_not_() const;
  Tensor& bitwise_and_(const Tensor& other) const;
  Tensor& bitwise_and_(const Scalar& other) const;
  Tensor& bitwise_or_(const Tensor& other) const;
  Tensor& bitwise_or_(const Scalar& other) const;
  Tensor& bitwise_xor_(const Tensor& other) const;
  Tensor& bitwise_xor_(const Scalar& other) const;
  Tensor& bitwise_not_() const;
  Tensor& cumsum_(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor& cumprod_(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor& nan_to_num_(std::optional<double> nan = std::nullopt, std::optional<double> posinf = std::nullopt,
                      std::optional<double> neginf = std::nullopt) const;
#define EMBER_BINARY_MATH_METHODS(name)   \
  Tensor name(const Tensor& other) const; \
  Tensor& name##_(const Tensor& other) const;
  EMBER_BINARY_MATH_METHODS(arctan2)
  EMBER_BINARY_MATH_METHODS(hypot)
  EMBER_BINARY_MATH_METHODS(copysign)
  EMBER_BINARY_MATH_METHODS(heaviside)
  EMBER_BINARY_MATH_METHODS(xlogy)
  EMBER_BINARY_MATH_METHODS(ldexp)
#undef EMBER_BINARY_MATH_METHODS
  Tensor& atan2_(const Tensor& other) const;
  Tensor logaddexp(const Tensor& other) const;
  Tensor logaddexp2(const Tensor& other) const;
  Tensor fmax(const Tensor& other) const;
  Tensor fmin(const Tensor& other) const;
  Tensor float_power(const Tensor& exponent) const;
  Tensor float_power(const Scalar& exponent) const;
  Tensor new_empty(IntArrayRef size, TensorOptions options = {}) const;
  Tensor new_zeros(IntArrayRef size, TensorOptions options = {}) const;
  Tensor new_ones(IntArrayRef size, TensorOptions options = {}) const;
  Tensor new_full(IntArrayRef size, const Scalar& fill_value, TensorOptions options = {}) const;
  bool is_same_size(const Tensor& other) const;
  bool is_nonzero() const;
  bool is_neg() const { return false; }
  Tensor swapaxes(int64_t axis0, int64_t axis1) const;
  Tensor& swapaxes_(int64_t axis0, int64_t axis1) const;
  Tensor swapdims(int64_t dim0, int64_t dim1) const;
  Tensor& swapdims_(int64_t dim0, int64_t dim1) const;
  Tensor moveaxis(IntArrayRef source, IntArrayRef destination) const;
  Tensor ravel() const;
  Tensor msort() const;
  Tensor fliplr() const;
  Tensor flipud() const;
  Tensor rot90(int64_t k = 1, IntArrayRef dims = {0, 1}) const;
  Tensor tile(IntArrayRef dims) const;
  Tensor diag(int64_t diagonal = 0) const;
  Tensor diagflat(int64_t offset = 0) const;
  Tensor diag_embed(int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1) const;
  Tensor trace() const;
  Tensor kron(const Tensor& other) const;
  Tensor take(const Tensor& index) const;
  Tensor take_along_dim(const Tensor& indices, std::optional<int64_t> dim = std::nullopt) const;
  std::vector<Tensor> tensor_split(int64_t sections, int64_t dim = 0) const;
  std::vector<Tensor> tensor_split(IntArrayRef indices, int64_t dim = 0) const;
  std::vector<Tensor> hsplit(int64_t sections) const;
  std::vector<Tensor> hsplit(IntArrayRef indices) const;
  std::vector<Tensor> vsplit(int64_t sections) const;
  std::vector<Tensor> vsplit(IntArrayRef indices) const;
  std::vector<Tensor> dsplit(int64_t sections) const;
  std::vector<Tensor> dsplit(IntArrayRef indices) const;
  std::vector<Tensor> unsafe_chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> unsafe_split(int64_t split_size, int64_t dim = 0) const;
  Tensor index_fill(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor& index_fill_(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor index_copy(int64_t dim, const Tensor& index, const Tensor& source) const;
  Tensor& index_copy_(int64_t dim, const Tensor& index, const Tensor& source) const;
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;
  Tensor& masked_scatter_(const Tensor& mask, const Tensor& source) const;
  Tensor select_scatter(const Tensor& src, int64_t dim, int64_t index) const;
  Tensor slice_scatter(const Tensor& src, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
                       std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor diagonal_scatter(const Tensor& src, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt) const;
  Tensor nansum(OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
                std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor nanmean(OptionalIntArrayRef dim = std::nullopt, bool keepdim = false,
                 std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor count_nonzero(std::optional<int64_t> dim = std::nullopt) const;
  Tensor count_nonzero(IntArrayRef dim) const;
  std::tuple<Tensor, Tensor> aminmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor median() const;
  std::tuple<Tensor, Tensor> median(int64_t dim, bool keepdim = false) const;
  Tensor logcumsumexp(int64_t dim) const;
  Tensor diff(int64_t n = 1, int64_t dim = -1, const std::optional<Tensor>& prepend = std::nullopt,
              const std::optional<Tensor>& append = std::nullopt) const;
  Tensor dist(const Tensor& other, const Scalar& p = 2) const;
  Tensor renorm(const Scalar& p, int64_t dim, const Scalar& maxnorm) const;
  Tensor& renorm_(const Scalar& p, int64_t dim, const Scalar& maxnorm) const;
  Tensor quantile(double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                  std::string_view interpolation = "linear") const;
  Tensor& uniform_(double from = 0, double to = 1, Generator* generator = nullptr) const;
  Tensor& normal_(double mean = 0, double std = 1, Generator* generator = nullptr) const;
  Tensor& exponential_(double lambd = 1, Generator* generator = nullptr) const;
  Tensor& cauchy_(double median = 0, double sigma = 1, Generator* generator = nullptr) const;
  Tensor& log_normal_(double mean = 1, double std = 2, Generator* generator = nullptr) const;
  Tensor& geometric_(double p, Generator* generator = nullptr) const;

  // libtorch's ATen methods, round 2 (issue 26): defined in src/ops/aten_tail2*.cpp; the device
  // queries give libtorch's answers for a dense CPU tensor.
  int64_t get_device() const { return -1; }
  bool has_names() const { return false; }
  bool has_storage() const { return defined(); }
  Storage storage() const { return Storage(checked_impl()->storage()); }
  bool is_alias_of(const Tensor& other) const;
  bool is_meta() const { return false; }
  bool is_pinned(std::optional<Device> device = std::nullopt) const { return static_cast<void>(device), false; }
  bool is_distributed() const { return false; }
  bool is_variable() const noexcept { return true; }
  bool is_hip() const { return false; }
  bool is_hpu() const { return false; }
  bool is_ipu() const { return false; }
  bool is_lazy() const { return false; }
  bool is_metal() const { return false; }
  bool is_ort() const { return false; }
  bool is_ve() const { return false; }
  bool is_xla() const { return false; }
  bool is_xpu() const { return false; }
  // Ember's tensors are strided (dense) only: no sparse, mkldnn, Vulkan, MPS or nested layouts.
  bool is_sparse() const { return false; }
  bool is_sparse_csr() const { return false; }
  bool is_mkldnn() const { return false; }
  bool is_vulkan() const { return false; }
  bool is_mps() const { return false; }
  bool is_nested() const { return false; }
  Tensor hardshrink(const Scalar& lambd = 0.5) const;
  Tensor prelu(const Tensor& weight) const;
  Tensor isposinf() const;
  Tensor isneginf() const;
  Tensor isreal() const;
  Tensor broadcast_to(IntArrayRef size) const;
  Tensor narrow_copy(int64_t dim, int64_t start, int64_t length) const;
  Tensor sum_to_size(IntArrayRef size) const;
  Tensor new_empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions options = {}) const;
  Tensor argwhere() const;
  std::vector<Tensor> nonzero_numpy() const;
  std::vector<Tensor> unsafe_split_with_sizes(IntArrayRef split_sizes, int64_t dim = 0) const;
  const Tensor& resize_as_(const Tensor& the_template, std::optional<MemoryFormat> memory_format = std::nullopt) const;
  Tensor& fill_diagonal_(const Scalar& fill_value, bool wrap = false) const;
  Tensor& float_power_(const Scalar& exponent) const;
  Tensor& float_power_(const Tensor& exponent) const;
  Tensor bitwise_left_shift(const Tensor& other) const;
  Tensor bitwise_left_shift(const Scalar& other) const;
  Tensor& bitwise_left_shift_(const Tensor& other) const;
  Tensor& bitwise_left_shift_(const Scalar& other) const;
  Tensor bitwise_right_shift(const Tensor& other) const;
  Tensor bitwise_right_shift(const Scalar& other) const;
  Tensor& bitwise_right_shift_(const Tensor& other) const;
  Tensor& bitwise_right_shift_(const Scalar& other) const;
  Tensor gcd(const Tensor& other) const;
  Tensor& gcd_(const Tensor& other) const;
  Tensor lcm(const Tensor& other) const;
  Tensor& lcm_(const Tensor& other) const;
  Tensor nextafter(const Tensor& other) const;
  Tensor& nextafter_(const Tensor& other) const;
  std::tuple<Tensor, Tensor> frexp() const;
  Tensor lgamma() const;
  Tensor& lgamma_() const;
  Tensor digamma() const;
  Tensor& digamma_() const;
  Tensor polygamma(int64_t n) const;
  Tensor& polygamma_(int64_t n) const;
  Tensor mvlgamma(int64_t p) const;
  Tensor& mvlgamma_(int64_t p) const;
  Tensor i0() const;
  Tensor& i0_() const;
  Tensor igamma(const Tensor& other) const;
  Tensor& igamma_(const Tensor& other) const;
  Tensor igammac(const Tensor& other) const;
  Tensor& igammac_(const Tensor& other) const;
  Tensor cross(const Tensor& other, std::optional<int64_t> dim = std::nullopt) const;
  Tensor inner(const Tensor& other) const;
  Tensor addr(const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor& addr_(const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor addbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor& addbmm_(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor smm(const Tensor& mat2) const;
  Tensor cov(int64_t correction = 1, const std::optional<Tensor>& fweights = std::nullopt,
             const std::optional<Tensor>& aweights = std::nullopt) const;
  Tensor corrcoef() const;
  Tensor histc(int64_t bins = 100, const Scalar& min = 0, const Scalar& max = 0) const;
  std::tuple<Tensor, Tensor> histogram(const Tensor& bins, const std::optional<Tensor>& weight = std::nullopt,
                                       bool density = false) const;
  std::tuple<Tensor, Tensor> histogram(int64_t bins = 100, std::optional<ArrayRef<double>> range = std::nullopt,
                                       const std::optional<Tensor>& weight = std::nullopt, bool density = false) const;
  Tensor bincount(const std::optional<Tensor>& weights = std::nullopt, int64_t minlength = 0) const;
  std::tuple<Tensor, Tensor> cummax(int64_t dim) const;
  std::tuple<Tensor, Tensor> cummin(int64_t dim) const;
  std::tuple<Tensor, Tensor> mode(int64_t dim = -1, bool keepdim = false) const;
  Tensor nanmedian() const;
  std::tuple<Tensor, Tensor> nanmedian(int64_t dim, bool keepdim = false) const;
  Tensor nanquantile(double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                     std::string_view interpolation = "linear") const;
  Tensor nanquantile(const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                     std::string_view interpolation = "linear") const;
  Tensor index_put(ArrayRef<std::optional<Tensor>> indices, const Tensor& values, bool accumulate = false) const;
  Tensor index_reduce(int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                      bool include_self = true) const;
  Tensor& index_reduce_(int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                        bool include_self = true) const;
  Tensor put(const Tensor& index, const Tensor& source, bool accumulate = false) const;
  Tensor& put_(const Tensor& index, const Tensor& source, bool accumulate = false) const;
  Tensor scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                        bool include_self = true) const;
  Tensor& scatter_reduce_(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                          bool include_self = true) const;
  Tensor as_strided_scatter(const Tensor& src, IntArrayRef size, IntArrayRef stride,
                            std::optional<int64_t> storage_offset = std::nullopt) const;
  Tensor bernoulli(Generator* generator = nullptr) const;
  Tensor bernoulli(double p, Generator* generator = nullptr) const;
  Tensor& bernoulli_(const Tensor& p, Generator* generator = nullptr) const;
  Tensor& bernoulli_(double p = 0.5, Generator* generator = nullptr) const;
  Tensor multinomial(int64_t num_samples, bool replacement = false, Generator* generator = nullptr) const;
  Tensor& random_(Generator* generator = nullptr) const;
  Tensor& random_(int64_t from, std::optional<int64_t> to, Generator* generator = nullptr) const;
  Tensor& random_(int64_t to, Generator* generator = nullptr) const;

  Tensor& operator+=(const Tensor& o) { return add_(o); }
  Tensor& operator+=(const Scalar& o) { return add_(o); }
  Tensor& operator-=(const Tensor& o) { return sub_(o); }
  Tensor& operator-=(const Scalar& o) { return sub_(o); }
  Tensor& operator*=(const Tensor& o) { return mul_(o); }
  Tensor& operator*=(const Scalar& o) { return mul_(o); }
  Tensor& operator/=(const Tensor& o) { return div_(o); }
  Tensor& operator/=(const Scalar& o) { return div_(o); }
  Tensor operator-() const { return neg(); }
  Tensor operator~() const { return bitwise_not(); }

 private:
  // In-place methods are const, as libtorch's: they change the tensor's data or metadata, which
  // live in the shared TensorImpl, never the handle, so `const Tensor& w; w.zero_()` works.
  Tensor& mutable_self() const { return const_cast<Tensor&>(*this); }
  TensorImpl* checked_impl() const {
    EMBER_CHECK(impl_, "Tensor", "the tensor is undefined (default-constructed)");
    return impl_.get();
  }
  IntrusivePtr<TensorImpl> impl_;
};

template <class T>
T* Tensor::data_ptr() const {
  constexpr ScalarType want = CppTypeToScalarType<std::remove_const_t<T>>::value;
  EMBER_CHECK(dtype() == want, "data_ptr", "expected a tensor of dtype ", want, " but got ", dtype());
  return reinterpret_cast<T*>(data_ptr());
}

template <class T, size_t N>
TensorAccessor<T, N> Tensor::accessor() const& {
  static_assert(N > 0, "accessor is used for indexing tensor, for scalars use *data_ptr<T>()");
  EMBER_CHECK(dim() == static_cast<int64_t>(N), "accessor", "TensorAccessor expected ", N, " dims but tensor has ",
              dim());
  return TensorAccessor<T, N>(data_ptr<T>(), sizes().data(), strides().data());
}
template <class T, size_t N, template <class> class PtrTraits, class index_t>
GenericPackedTensorAccessor<T, N, PtrTraits, index_t> Tensor::generic_packed_accessor() const& {
  static_assert(N > 0, "accessor is used for indexing tensor, for scalars use *data_ptr<T>()");
  EMBER_CHECK(dim() == static_cast<int64_t>(N), "packed_accessor", "TensorAccessor expected ", N,
              " dims but tensor has ", dim());
  return GenericPackedTensorAccessor<T, N, PtrTraits, index_t>(static_cast<typename PtrTraits<T>::PtrType>(data_ptr<T>()),
                                                               sizes().data(), strides().data());
}
template <class T, size_t N, template <class> class PtrTraits>
PackedTensorAccessor32<T, N, PtrTraits> Tensor::packed_accessor32() const& {
  EMBER_CHECK(numel() <= static_cast<int64_t>(INT32_MAX), "packed_accessor32",
              "numel needs to be smaller than int32_t max; otherwise, please use packed_accessor64");
  return generic_packed_accessor<T, N, PtrTraits, int32_t>();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t);
// libtorch's at::print: the tensor as operator<< shows it, its matrices wrapped at `linesize`
// characters (operator<< uses 80).
std::ostream& print(std::ostream& os, const Tensor& t, int64_t linesize);
void print(const Tensor& t, int64_t linesize = 80);

// Wraps a dim into [0, ndim) ("Dimension out of range (expected to be in range of [-2, 1], but got 2)").
int64_t maybe_wrap_dim(int64_t dim, int64_t ndim, const char* op = "dim", bool wrap_scalar = true);

// A new tensor over fresh storage (the one allocation an op makes besides its TensorImpl).
Tensor make_empty(IntArrayRef sizes, ScalarType dtype, MemoryFormat format = MemoryFormat::Contiguous);
Tensor make_empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype);

// libtorch's free numel(t).
inline int64_t numel(const Tensor& t) { return t.numel(); }

}  // namespace ember
