// TensorOptions: the dtype, device, layout, memory format and requires_grad of a new tensor.
#pragma once
#include <optional>
#include <type_traits>
#include <utility>

#include "ember/device.h"
#include "ember/dtype.h"

namespace ember {

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType d) : dtype_(d) {}  // NOLINT
  TensorOptions(TypeMeta d) : dtype_(d.toScalarType()) {}  // NOLINT
  TensorOptions(Device d) : device_(d) {}  // NOLINT
  TensorOptions(DeviceType d) : device_(Device(d)) {}  // NOLINT
  TensorOptions(MemoryFormat f) : memory_format_(f) {}  // NOLINT
  TensorOptions(Layout l) : layout_(l) {}               // NOLINT

  TensorOptions dtype(std::optional<ScalarType> d) const {
    TensorOptions o = *this;
    o.dtype_ = d;
    return o;
  }
  template <class T>
  TensorOptions dtype() const {
    return dtype(CppTypeToScalarType<T>::value);
  }
  TensorOptions device(std::optional<Device> d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }
  // libtorch's variadic form: the arguments of a Device (`device(torch::kCUDA, 1)`, `device("cpu")`).
  template <class... Args>
  requires(sizeof...(Args) >= 2 ||
           (sizeof...(Args) == 1 && !(std::is_convertible_v<Args, std::optional<Device>> && ...))) TensorOptions
      device(Args&&... args)
  const { return device(std::optional<Device>(Device(std::forward<Args>(args)...))); }
  TensorOptions layout(std::optional<Layout> l) const {
    TensorOptions o = *this;
    o.layout_ = l;
    return o;
  }
  // Accepted as libtorch's (without a GPU, pinned memory is ordinary memory); printed back.
  TensorOptions pinned_memory(std::optional<bool> p) const {
    TensorOptions o = *this;
    o.pinned_memory_ = p;
    return o;
  }
  TensorOptions requires_grad(std::optional<bool> r) const {
    TensorOptions o = *this;
    o.requires_grad_ = r;
    return o;
  }
  TensorOptions memory_format(std::optional<MemoryFormat> f) const {
    TensorOptions o = *this;
    o.memory_format_ = f;
    return o;
  }

  TypeMeta dtype() const { return TypeMeta::fromScalarType(dtype_.value_or(get_default_dtype())); }
  bool has_dtype() const { return dtype_.has_value(); }
  std::optional<ScalarType> dtype_opt() const { return dtype_; }
  Device device() const { return device_.value_or(Device(kCPU)); }
  bool has_device() const { return device_.has_value(); }
  Layout layout() const { return kStrided; }
  bool has_layout() const { return layout_.has_value(); }
  bool pinned_memory() const { return pinned_memory_.value_or(false); }
  bool has_pinned_memory() const { return pinned_memory_.has_value(); }
  bool requires_grad() const { return requires_grad_.value_or(false); }
  bool has_requires_grad() const { return requires_grad_.has_value(); }
  std::optional<MemoryFormat> memory_format_opt() const { return memory_format_; }
  bool has_memory_format() const { return memory_format_.has_value(); }

  // Fill unset fields from `other` (how *_like factories merge their options).
  TensorOptions merge_in(const TensorOptions& other) const {
    TensorOptions o = *this;
    if (!o.dtype_) o.dtype_ = other.dtype_;
    if (!o.device_) o.device_ = other.device_;
    if (!o.requires_grad_) o.requires_grad_ = other.requires_grad_;
    if (!o.memory_format_) o.memory_format_ = other.memory_format_;
    if (!o.layout_) o.layout_ = other.layout_;
    if (!o.pinned_memory_) o.pinned_memory_ = other.pinned_memory_;
    return o;
  }

 private:
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  std::optional<bool> requires_grad_;
  std::optional<MemoryFormat> memory_format_;
  std::optional<Layout> layout_;
  std::optional<bool> pinned_memory_;
};

// "TensorOptions(dtype=float, device=cpu, layout=Strided, requires_grad=false (default), ...)",
// as libtorch prints them.
std::ostream& operator<<(std::ostream& os, const TensorOptions& options);

inline TensorOptions dtype(ScalarType d) { return TensorOptions().dtype(d); }
template <class T>
TensorOptions dtype() {
  return TensorOptions().dtype<T>();
}
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }
inline TensorOptions memory_format(MemoryFormat f) { return TensorOptions().memory_format(f); }
inline TensorOptions layout(Layout) { return TensorOptions(); }

}  // namespace ember
