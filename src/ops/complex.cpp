// Complex tensors: conjugate views (conj, resolve_conj, conj_physical), the parts as views
// (real, imag, view_as_real, view_as_complex), angle, polar and complex(real, imag), and the
// conjugate fallback's two calls (dispatch.h). Derivatives follow PyTorch's convention for
// complex autograd: the gradient of a real loss L w.r.t. z is dL/d(re z) + i dL/d(im z).
#include <cmath>

#include "dispatch/dispatch.h"
#include "ember/complex_ops.h"
#include "ember/factory.h"
#include "ember/pointwise.h"
#include "kernels/cpu/complex_kernels.h"
#include "ops/indexing_util.h"
#include "ops/pointwise_util.h"

namespace ember {

namespace dispatch {
Tensor resolve_conj_for_fallback(const Tensor& t) { return t.resolve_conj(); }
void copy_for_fallback(Tensor& dst, const Tensor& src) { dst.copy_(src); }
}  // namespace dispatch

namespace {

// The real tensor over a complex tensor's storage: shape + [2], strides doubled (no conj bit).
Tensor real_view_of_storage(const Tensor& self) {
  DimVector sizes(self.sizes()), strides;
  for (int64_t s : self.strides()) strides.push_back(2 * s);
  sizes.push_back(2);
  strides.push_back(1);
  return Tensor(IntrusivePtr<TensorImpl>::make(self.impl()->storage(), to_real_value_type(self.dtype()), sizes, strides,
                                               2 * self.storage_offset()));
}
// Part k (0 real, 1 imaginary) of a complex tensor's storage as a real view.
Tensor part_view(const Tensor& self, int64_t k) {
  DimVector strides;
  for (int64_t s : self.strides()) strides.push_back(2 * s);
  return Tensor(IntrusivePtr<TensorImpl>::make(self.impl()->storage(), to_real_value_type(self.dtype()), self.sizes(),
                                               strides, 2 * self.storage_offset() + k));
}

struct ConjOp {
  static constexpr const char* name = "conj";
  static constexpr bool conj_aware = true;
  static Tensor run(const Tensor& self) { return self.is_complex() ? with_conj_bit(self, !self.is_conj()) : self; }
  // ConjBackward0 -- self: grad.conj()
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    d.name("ConjBackward0");
    d.grad(self, [](const auto& c) { return c.grad().conj(); });
  }
};

struct ResolveConjOp {
  static constexpr const char* name = "resolve_conj";
  static constexpr bool conj_aware = true;
  static Tensor run(const Tensor& self) {
    if (!self.is_conj()) return self;
    Tensor out = self.is_non_overlapping_and_dense() ? make_empty_strided(self.sizes(), self.strides(), self.dtype())
                                                     : make_empty(self.sizes(), self.dtype());
    return out.copy_(self);
  }
  // ResolveConjBackward0 -- self: grad
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    d.name("ResolveConjBackward0");
    d.grad(self, [](const auto& c) { return c.grad(); });
  }
};

Tensor conj_physical_into(const char* name, const Tensor& out, const Tensor& self, bool inplace) {
  TensorIteratorConfig config(name);
  config.add_output(out).add_input(self);
  if (inplace) config.no_resize_outputs();
  TensorIterator iter(config);
  kernels::complex_conj_kernel(iter);
  pointwise::bump_version(out);
  return iter.take_output();
}
struct ConjPhysicalOp {
  static constexpr const char* name = "conj_physical";
  static constexpr bool conj_aware = true;
  static Tensor run(const Tensor& self) {
    if (!self.is_complex()) return self;
    return conj_physical_into(name, Tensor(), self, false);
  }
  // ConjPhysicalBackward0 -- self: grad.conj_physical()
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    d.name("ConjPhysicalBackward0");
    d.grad(self, [](const auto& c) { return c.grad().conj_physical(); });
  }
};
struct ConjPhysicalInplaceOp {
  static constexpr const char* name = "conj_physical_";
  static constexpr bool conj_aware = true;
  using out_of_place = ConjPhysicalOp;
  static Tensor& run(Tensor& self) {
    if (self.is_complex()) conj_physical_into(name, self, self, true);
    return self;
  }
};

struct ViewAsRealOp {
  static constexpr const char* name = "view_as_real";
  static constexpr bool conj_aware = true;
  static Tensor run(const Tensor& self) {
    EMBER_CHECK(!self.is_conj(), name,
                "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate tensor so you "
                "can view it as real, use self.resolve_conj(); however, be warned that the resulting tensor will NOT "
                "alias the original.");
    EMBER_CHECK(self.is_complex(), name, "view_as_real is only supported for complex tensors");
    return real_view_of_storage(self);
  }
  // ViewAsRealBackward0 -- self: at::view_as_complex(grad.contiguous())
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    d.name("ViewAsRealBackward0");
    d.grad(self, [](const auto& c) { return view_as_complex(c.grad().contiguous()); });
  }
};

struct ViewAsComplexOp {
  static constexpr const char* name = "view_as_complex";
  static constexpr bool conj_aware = true;
  static Tensor run(const Tensor& self) {
    const ScalarType t = self.dtype();
    EMBER_CHECK(t == kFloat || t == kDouble || t == kHalf, name,
                "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: ",
                t);
    EMBER_CHECK(t != kHalf, name, "view_as_complex: Ember has no ComplexHalf dtype");
    EMBER_CHECK(self.dim() != 0, name, "Input tensor must have one or more dimensions");
    EMBER_CHECK(self.size(-1) == 2, name, "Tensor must have a last dimension of size 2");
    EMBER_CHECK(self.stride(-1) == 1, name, "Tensor must have a last dimension with stride 1");
    DimVector sizes(IntArrayRef(self.sizes().data(), static_cast<size_t>(self.dim() - 1))), strides;
    for (int64_t d = 0; d + 1 < self.dim(); ++d) {
      EMBER_CHECK(self.stride(d) % 2 == 0, name, "Tensor must have a stride divisible by 2 for all but last dimension");
      strides.push_back(self.stride(d) / 2);
    }
    EMBER_CHECK(self.storage_offset() % 2 == 0, name, "Tensor must have a storage_offset divisible by 2");
    return Tensor(IntrusivePtr<TensorImpl>::make(self.impl()->storage(), to_complex_type(t), sizes, strides,
                                                 self.storage_offset() / 2));
  }
  // ViewAsComplexBackward0 -- self: at::view_as_real(grad.contiguous().resolve_conj())
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    d.name("ViewAsComplexBackward0");
    d.grad(self, [](const auto& c) { return view_as_real(c.grad().contiguous().resolve_conj()); });
  }
};

struct RealOp {
  static constexpr const char* name = "real";
  static constexpr bool conj_aware = true;
  // the real part of a conjugate view is the stored real part
  static Tensor run(const Tensor& self) { return self.is_complex() ? part_view(self, 0) : self; }
  // RealBackward0 -- self: at::real(grad) (the engine casts it to self's complex dtype)
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    d.name("RealBackward0");
    d.grad(self, [](const auto& c) { return c.grad(); });
  }
};

struct ImagOp {
  static constexpr const char* name = "imag";
  static constexpr bool conj_aware = true;
  // Ember has no negative bit: the imaginary part of a conjugate view is computed, not viewed.
  static Tensor run(const Tensor& self) {
    EMBER_CHECK(self.is_complex(), name, "imag is not implemented for tensors with non-complex dtypes.");
    if (self.is_conj()) return -part_view(self, 1);
    return part_view(self, 1);
  }
  // ImagBackward0 -- self: i * grad
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    d.name("ImagBackward0");
    d.grad(self, [](const auto& c) { return make_complex(zeros_like(c.grad()), c.grad()); });
  }
};

// PyTorch's angle_backward: complex: grad * i z / |z|^2 (0 at 0); real: zeros.
Tensor angle_backward(const Tensor& grad, const Tensor& self) {
  if (!self.is_complex()) return zeros_like(grad);
  const Tensor abs2 = self.abs().square();
  const Tensor g = grad * self * Scalar(complex<double>(0, 1)) / abs2;
  return where(self.eq(0), zeros_like(g), g);
}

struct AngleOp {
  static constexpr const char* name = "angle";
  static constexpr bool conj_aware = true;
  static Tensor run(const Tensor& self) {
    if (!self.is_complex()) {  // 0 or pi by sign, NaN kept; integers compute in the default float dtype
      const Tensor x = is_floating_type(self.dtype()) ? self : self.to(get_default_dtype());
      return where(x.isnan(), x, where(x < 0, M_PI, 0.0).to(x.dtype()));
    }
    TensorIterator iter(TensorIteratorConfig(name).add_output(Tensor()).add_input(self).output_dtype(
        to_real_value_type(self.dtype())));
    kernels::complex_angle_kernel(iter);
    return iter.take_output();
  }
  // AngleBackward0 -- self: angle_backward(grad, self)
  static void derivative(autograd::Derivative& d, const Tensor& self) {
    d.name("AngleBackward0");
    d.grad(self, [s = d.save(self)](const auto& c) { return angle_backward(c.grad(), c[s]); });
  }
};

// The checks of complex(real, imag) and polar(abs, angle): one float dtype for both.
void check_parts(const char* op, const Tensor& x, const Tensor& y) {
  EMBER_CHECK(x.dtype() == y.dtype(), op, "Expected object of scalar type ", x.dtype(),
              " but got scalar type ", y.dtype(), " for second argument");
  EMBER_CHECK(x.dtype() == kFloat || x.dtype() == kDouble, op, "Expected both inputs to be Half, Float or Double tensors but got ",
              x.dtype(), " and ", y.dtype());
}
Tensor from_parts(const char* op, const Tensor& x, const Tensor& y, bool polar) {
  TensorIterator iter(TensorIteratorConfig(op)
                          .add_output(Tensor())
                          .add_input(x)
                          .add_input(y)
                          .no_input_cast()
                          .common_dtype(x.dtype())
                          .output_dtype(to_complex_type(x.dtype())));
  kernels::complex_from_parts_kernel(iter, polar);
  return iter.take_output();
}

struct ComplexOp {
  static constexpr const char* name = "complex";
  static Tensor run(const Tensor& real, const Tensor& imag) {
    check_parts(name, real, imag);
    return from_parts(name, real, imag, false);
  }
  // ComplexBackward0 -- real: at::real(grad); imag: at::imag(grad)
  static void derivative(autograd::Derivative& d, const Tensor& real, const Tensor& imag) {
    d.name("ComplexBackward0");
    d.grad(real, [](const auto& c) { return ember::real(c.grad()).contiguous(); });
    d.grad(imag, [](const auto& c) { return ember::imag(c.grad()).contiguous(); });
  }
};

struct PolarOp {
  static constexpr const char* name = "polar";
  static Tensor run(const Tensor& abs, const Tensor& angle) {
    check_parts(name, abs, angle);
    return from_parts(name, abs, angle, true);
  }
  // PolarBackward0 -- abs: real(conj(grad) e^(i angle)); angle: real(conj(grad) i result)
  static void derivative(autograd::Derivative& d, const Tensor& abs, const Tensor& angle) {
    d.name("PolarBackward0");
    d.grad(abs, [t = d.save_for(abs, angle)](const auto& c) {
      return ember::real(c.grad().conj() * polar(ones_like(c[t]), c[t])).contiguous();
    });
    d.grad(angle, [r = d.save_result()](const auto& c) {
      return ember::real(c.grad().conj() * c[r] * Scalar(complex<double>(0, 1))).contiguous();
    });
  }
};

}  // namespace

Tensor conj(const Tensor& self) { return dispatch::call<ConjOp>(self); }
Tensor resolve_conj(const Tensor& self) { return dispatch::call<ResolveConjOp>(self); }
Tensor conj_physical(const Tensor& self) { return dispatch::call<ConjPhysicalOp>(self); }
Tensor& conj_physical_(Tensor& self) { return dispatch::call<ConjPhysicalInplaceOp>(self); }
Tensor view_as_real(const Tensor& self) { return dispatch::call<ViewAsRealOp>(self); }
Tensor view_as_complex(const Tensor& self) { return dispatch::call<ViewAsComplexOp>(self); }
Tensor real(const Tensor& self) { return dispatch::call<RealOp>(self); }
Tensor imag(const Tensor& self) { return dispatch::call<ImagOp>(self); }
Tensor angle(const Tensor& self) { return dispatch::call<AngleOp>(self); }
Tensor polar(const Tensor& abs, const Tensor& angle) { return dispatch::call<PolarOp>(abs, angle); }
Tensor make_complex(const Tensor& real, const Tensor& imag) { return dispatch::call<ComplexOp>(real, imag); }

Tensor Tensor::conj() const { return ember::conj(*this); }
Tensor Tensor::resolve_conj() const { return ember::resolve_conj(*this); }
Tensor Tensor::conj_physical() const { return ember::conj_physical(*this); }
Tensor& Tensor::conj_physical_() const { return ember::conj_physical_(mutable_self()); }
Tensor Tensor::real() const { return ember::real(*this); }
Tensor Tensor::imag() const { return ember::imag(*this); }
Tensor Tensor::angle() const { return ember::angle(*this); }

}  // namespace ember
