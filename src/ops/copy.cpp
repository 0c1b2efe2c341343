// Copies, casts, fills and resizes: the ops that move data between layouts and dtypes.
#include <cstring>

#include "core/parallel.h"
#include "dispatch/dispatch.h"
#include "ember/factory.h"
#include "ember/quantized.h"
#include "ember/shape.h"
#include "kernels/cpu/copy.h"
#include "ops/indexing_util.h"
#include "ops/quantized_util.h"

namespace ember {
namespace {

struct CopyOp {
  static constexpr const char* name = "copy_";
  static constexpr bool conj_aware = true;
  static constexpr bool quantized = true;  // see copy_quantized
  using derivative_rule = autograd::CopyRule;
  static Tensor& run(Tensor& self, const Tensor& src) {
    EMBER_CHECK(src.defined(), name, "the source tensor is undefined");
    if (self.is_same(src)) return self;
    if (self.is_quantized() || src.is_quantized()) return copy_quantized(self, src);
    if (self.numel() == 0) return self;
    if (self.is_conj()) {  // conj(src) into the storage as it is
      Tensor plain = with_conj_bit(self, false);
      copy_into(plain, src.is_complex() ? with_conj_bit(src, !src.is_conj()) : src);
    } else {
      copy_into(self, src);
    }
    self.impl()->storage()->bump_version();
    return self;
  }
  static void copy_into(const Tensor& self, const Tensor& src) {
    // The common small copy (clone, a contiguous slice made contiguous, copy_ between tensors of
    // one layout) is one memcpy: building the iterator cost as much as copying 32 x 32 floats.
    // Larger ones take the iterator, whose loop runs on every thread.
    if (src.dtype() == self.dtype() && !src.is_conj() && self.numel() < kGrainSize && self.is_contiguous() &&
        src.is_contiguous() && src.sizes().equals(self.sizes()) && self.impl()->storage() != src.impl()->storage()) {
      std::memcpy(self.data_ptr(), src.data_ptr(), static_cast<size_t>(self.numel()) * self.element_size());
      return;
    }
    Tensor s = src;
    if (!s.sizes().equals(self.sizes())) s = src.expand(self.sizes());
    TensorIterator iter(TensorIteratorConfig(name)
                            .add_output(self)
                            .add_input(s)
                            .no_input_cast()
                            .common_dtype(self.dtype())
                            .no_resize_outputs());
    kernels::copy_kernel(iter);
  }
  // PyTorch's copy_ into a quantized tensor: from a quantized source of the same dtype and scheme,
  // its integers and its quantizer (scale, zero point: what loading a quantized model's state
  // relies on); from a float32 source, its values quantized with self's parameters.
  static Tensor& copy_quantized(Tensor& self, const Tensor& src) {
    EMBER_CHECK(self.is_quantized(), name, "copying a quantized tensor into a ", self.dtype(),
                " one is not supported; dequantize() it first");
    if (src.is_quantized()) {
      EMBER_CHECK(self.dtype() == src.dtype() && self.qscheme() == src.qscheme(), name,
                  "Quantized Copy only works with the same dtype and qscheme, got ", self.dtype(), " ", self.qscheme(),
                  " and ", src.dtype(), " ", src.qscheme());
      EMBER_CHECK(self.qscheme() == kPerTensorAffine || src.sizes().equals(self.sizes()), name,
                  "a per-channel quantized source must have the destination's size ", self.sizes(), ", got ",
                  src.sizes());
      copy_into(quantized::raw_view(self), quantized::raw_view(src));
      self.unsafeGetTensorImpl()->set_quantizer(src.unsafeGetTensorImpl()->quantizer());
    } else {
      EMBER_CHECK(src.dtype() == kFloat, name, "Quantized copy only works with kFloat as source Tensor, got ",
                  src.dtype());
      const Tensor s = src.expand(self.sizes());
      const Tensor q = self.qscheme() == kPerTensorAffine
                           ? quantize_per_tensor(s, self.q_scale(), self.q_zero_point(), self.dtype())
                           : quantize_per_channel(s, self.q_per_channel_scales(), self.q_per_channel_zero_points(),
                                                  self.q_per_channel_axis(), self.dtype());
      copy_into(quantized::raw_view(self), quantized::raw_view(q));
    }
    self.impl()->storage()->bump_version();
    return self;
  }
};

struct FillOp {
  static constexpr const char* name = "fill_";
  static constexpr bool conj_aware = true;
  using derivative_rule = autograd::FillRule;
  static Tensor& run(Tensor& self, const Scalar& value) {
    TensorIterator iter(TensorIteratorConfig(name).add_output(self).common_dtype(self.dtype()).no_resize_outputs());
    kernels::fill_kernel(iter, value);
    self.impl()->storage()->bump_version();
    return self;
  }
};

// Cast and/or change layout; returns self when nothing changes and no copy is asked for.
struct ToOp {
  static constexpr const char* name = "to";
  static constexpr bool conj_aware = true;
  static constexpr bool quantized = true;  // clone and contiguous keep the quantizer
  static Tensor run(const Tensor& self, ScalarType dtype, bool copy, std::optional<MemoryFormat> format) {
    if (self.is_quantized()) return quantized::to(self, dtype, copy, format);
    MemoryFormat f = format.value_or(MemoryFormat::Preserve);
    // libtorch's aliasing rule: without copy, the same dtype returns self unless the format asked
    // for differs from the one self suggests (so a transposed tensor asked for Contiguous stays
    // as it is, while an NCHW tensor asked for ChannelsLast is copied).
    const bool layout_ok = f == MemoryFormat::Preserve || self.suggest_memory_format() == f;
    if (!copy && self.dtype() == dtype && layout_ok) return self;
    Tensor out;
    if (f == MemoryFormat::Preserve) {
      out = self.is_non_overlapping_and_dense() ? make_empty_strided(self.sizes(), self.strides(), dtype)
                                                : make_empty(self.sizes(), dtype, self.suggest_memory_format());
    } else {
      out = make_empty(self.sizes(), dtype, f);
    }
    out.copy_(self);
    out.impl()->storage()->reset_version_of_new_storage();  // a copy starts at version 0, as PyTorch's
    return out;
  }
  // ToCopyBackward0 / CloneBackward0 -- self: grad (the engine casts it back to self's dtype)
  static void derivative(autograd::Derivative& d, const Tensor& self, ScalarType dtype, bool,
                         std::optional<MemoryFormat>) {
    d.name(dtype == self.dtype() ? "CloneBackward0" : "ToCopyBackward0");
    d.grad(self, [](const auto& c) { return c.grad(); });
  }
};

struct ResizeOp {
  static constexpr const char* name = "resize_";
  static constexpr bool conj_aware = true;
  static Tensor& run(Tensor& self, IntArrayRef sizes, std::optional<MemoryFormat> format) {
    MemoryFormat f = format.value_or(MemoryFormat::Contiguous);
    EMBER_CHECK(f != MemoryFormat::Preserve, name, "Unsupported memory format Preserve");
    int64_t n = 1;
    for (int64_t s : sizes) {
      EMBER_CHECK(s >= 0, name, "Trying to create tensor with negative dimension ", s, ": ", sizes);
      n *= s;
    }
    DimVector strides = contiguous_strides(sizes, f);
    const size_t need = static_cast<size_t>(self.storage_offset() + n) * self.element_size();
    if (need > self.impl()->storage()->nbytes()) {
      auto storage = IntrusivePtr<StorageImpl>::make(need);
      const size_t keep = self.impl()->storage()->nbytes();
      if (keep) std::memcpy(storage->data(), self.impl()->storage()->data(), keep);
      self.impl()->set_storage(std::move(storage));
    }
    self.impl()->set_sizes_and_strides(sizes, strides);
    return self;
  }
};

}  // namespace

Tensor& Tensor::copy_(const Tensor& src, bool) const { return dispatch::call<CopyOp>(mutable_self(), src); }
Tensor& Tensor::fill_(const Scalar& value) const { return dispatch::call<FillOp>(mutable_self(), value); }
Tensor& Tensor::fill_(const Tensor& value) const {
  EMBER_CHECK(value.dim() == 0, "fill_", "fill_ only supports 0-dimension value tensor but got tensor with ",
              value.dim(), " dimensions.");
  return fill_(value.item());
}
Tensor& Tensor::zero_() const { return fill_(0); }
Tensor& Tensor::resize_(IntArrayRef sizes, std::optional<MemoryFormat> format) const {
  return dispatch::call<ResizeOp>(mutable_self(), sizes, format);
}

Tensor Tensor::to(ScalarType dtype, bool, bool copy, std::optional<MemoryFormat> format) const {
  return dispatch::call<ToOp>(*this, dtype, copy, format);
}
Tensor Tensor::to(TensorOptions options, bool, bool copy, std::optional<MemoryFormat> format) const {
  check_cpu_device("to", options.device());
  if (!format) format = options.memory_format_opt();
  return dispatch::call<ToOp>(*this, options.has_dtype() ? options.dtype() : dtype(), copy, format);
}
Tensor Tensor::to(Device device, ScalarType dtype, bool non_blocking, bool copy,
                  std::optional<MemoryFormat> format) const {
  check_cpu_device("to", device);
  return to(dtype, non_blocking, copy, format);
}
// (Strided is Ember's only layout; pin_memory has no meaning without a device.)
Tensor Tensor::to(std::optional<ScalarType> dtype, std::optional<Layout>, std::optional<Device> device,
                  std::optional<bool>, bool non_blocking, bool copy, std::optional<MemoryFormat> format) const {
  if (device) check_cpu_device("to", *device);
  return to(dtype.value_or(this->dtype()), non_blocking, copy, format);
}
Tensor Tensor::cuda() const {
  check_cpu_device("cuda", Device(kCUDA));
  return *this;
}
Tensor Tensor::to(MemoryFormat format) const { return dispatch::call<ToOp>(*this, dtype(), false, format); }
Tensor Tensor::to(const Tensor& other, bool non_blocking, bool copy, std::optional<MemoryFormat> format) const {
  return to(other.dtype(), non_blocking, copy, format);
}
Tensor Tensor::contiguous(MemoryFormat format) const {
  if (is_contiguous(format)) return *this;
  return dispatch::call<ToOp>(*this, dtype(), true, format);
}
Tensor Tensor::clone(std::optional<MemoryFormat> format) const {
  return dispatch::call<ToOp>(*this, dtype(), true, format.value_or(MemoryFormat::Preserve));
}

}  // namespace ember
