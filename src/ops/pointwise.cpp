// Pointwise ops. Each op is a small struct: its name, its argument rules and the kernel it runs;
// the public functions and Tensor methods below route through dispatch::call.
#include "ember/pointwise.h"

#include "dispatch/dispatch.h"
#include "kernels/cpu/pointwise.h"

namespace ember {
namespace {

using kernels::BinaryOp;

// out = a (op) b with PyTorch's broadcasting and promotion. `out` may be undefined (allocate),
// an out= tensor (resized if needed) or self for in-place ops (must keep its shape).
template <class B>
Tensor binary_into(const char* name, Tensor out, const Tensor& a, const B& b, BinaryOp op, const Scalar& alpha,
                   bool inplace, bool int_to_float = false) {
  TensorIteratorConfig config(name);
  config.add_output(out).add_input(a).add_input(b);
  if (inplace) config.no_resize_outputs();
  if (int_to_float) config.promote_integer_inputs_to_float();
  TensorIterator iter(config);
  if (op == BinaryOp::Sub) {
    EMBER_CHECK(iter.common_dtype() != kBool, name,
                "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                "`logical_xor()` operator instead.");
  }
  if (!alpha.equal(1)) {
    EMBER_CHECK(is_floating_type(iter.common_dtype()) || !alpha.isFloatingPoint(), name,
                "For integral input tensors, argument alpha must not be a floating point number.");
    EMBER_CHECK(iter.common_dtype() != kBool || alpha.isBoolean(), name,
                "Boolean alpha only supported for Boolean results.");
  }
  kernels::binary_kernel(iter, op, alpha);
  if (out.defined()) out.impl()->storage()->bump_version();
  return iter.output();
}

struct AddOp {
  static constexpr const char* name = "add";
  static Tensor run(const Tensor& a, const Tensor& b, const Scalar& alpha) {
    return binary_into(name, Tensor(), a, b, BinaryOp::Add, alpha, false);
  }
  static Tensor run(const Tensor& a, const Scalar& b, const Scalar& alpha) {
    return binary_into(name, Tensor(), a, b, BinaryOp::Add, alpha, false);
  }
};
struct AddInplaceOp {
  static constexpr const char* name = "add_";
  template <class B>
  static Tensor& run(Tensor& self, const B& b, const Scalar& alpha) {
    binary_into(name, self, self, b, BinaryOp::Add, alpha, true);
    return self;
  }
};
struct AddOutOp {
  static constexpr const char* name = "add_out";
  static Tensor& run(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
    binary_into(name, out, a, b, BinaryOp::Add, alpha, false);
    return out;
  }
};

struct SubOp {
  static constexpr const char* name = "sub";
  template <class B>
  static Tensor run(const Tensor& a, const B& b, const Scalar& alpha) {
    return binary_into(name, Tensor(), a, b, BinaryOp::Sub, alpha, false);
  }
};
struct SubInplaceOp {
  static constexpr const char* name = "sub_";
  template <class B>
  static Tensor& run(Tensor& self, const B& b, const Scalar& alpha) {
    binary_into(name, self, self, b, BinaryOp::Sub, alpha, true);
    return self;
  }
};

struct MulOp {
  static constexpr const char* name = "mul";
  template <class B>
  static Tensor run(const Tensor& a, const B& b) {
    return binary_into(name, Tensor(), a, b, BinaryOp::Mul, 1, false);
  }
};
struct MulInplaceOp {
  static constexpr const char* name = "mul_";
  template <class B>
  static Tensor& run(Tensor& self, const B& b) {
    binary_into(name, self, self, b, BinaryOp::Mul, 1, true);
    return self;
  }
};

// True division: integer inputs divide as the default float dtype.
struct DivOp {
  static constexpr const char* name = "div";
  template <class B>
  static Tensor run(const Tensor& a, const B& b) {
    return binary_into(name, Tensor(), a, b, BinaryOp::Div, 1, false, true);
  }
};
struct DivInplaceOp {
  static constexpr const char* name = "div_";
  template <class B>
  static Tensor& run(Tensor& self, const B& b) {
    binary_into(name, self, self, b, BinaryOp::Div, 1, true, true);
    return self;
  }
};

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) { return dispatch::call<AddOp>(a, b, alpha); }
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) { return dispatch::call<AddOp>(a, b, alpha); }
Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return dispatch::call<AddOutOp>(out, a, b, alpha);
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) { return dispatch::call<SubOp>(a, b, alpha); }
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) { return dispatch::call<SubOp>(a, b, alpha); }
Tensor mul(const Tensor& a, const Tensor& b) { return dispatch::call<MulOp>(a, b); }
Tensor mul(const Tensor& a, const Scalar& b) { return dispatch::call<MulOp>(a, b); }

Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const { return ember::add(*this, o, alpha); }
Tensor Tensor::add(const Scalar& o, const Scalar& alpha) const { return ember::add(*this, o, alpha); }
Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) { return dispatch::call<AddInplaceOp>(*this, o, alpha); }
Tensor& Tensor::add_(const Scalar& o, const Scalar& alpha) { return dispatch::call<AddInplaceOp>(*this, o, alpha); }
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const { return ember::sub(*this, o, alpha); }
Tensor Tensor::sub(const Scalar& o, const Scalar& alpha) const { return ember::sub(*this, o, alpha); }
Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) { return dispatch::call<SubInplaceOp>(*this, o, alpha); }
Tensor& Tensor::sub_(const Scalar& o, const Scalar& alpha) { return dispatch::call<SubInplaceOp>(*this, o, alpha); }
Tensor Tensor::mul(const Tensor& o) const { return ember::mul(*this, o); }
Tensor Tensor::mul(const Scalar& o) const { return ember::mul(*this, o); }
Tensor& Tensor::mul_(const Tensor& o) { return dispatch::call<MulInplaceOp>(*this, o); }
Tensor& Tensor::mul_(const Scalar& o) { return dispatch::call<MulInplaceOp>(*this, o); }
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> mode) {
  EMBER_CHECK(!mode, "div", "rounding_mode is not implemented yet");
  return dispatch::call<DivOp>(a, b);
}
Tensor div(const Tensor& a, const Scalar& b, std::optional<std::string_view> mode) {
  EMBER_CHECK(!mode, "div", "rounding_mode is not implemented yet");
  return dispatch::call<DivOp>(a, b);
}
Tensor Tensor::div(const Tensor& o, std::optional<std::string_view> mode) const { return ember::div(*this, o, mode); }
Tensor Tensor::div(const Scalar& o, std::optional<std::string_view> mode) const { return ember::div(*this, o, mode); }
Tensor& Tensor::div_(const Tensor& o, std::optional<std::string_view> mode) {
  EMBER_CHECK(!mode, "div_", "rounding_mode is not implemented yet");
  return dispatch::call<DivInplaceOp>(*this, o);
}
Tensor& Tensor::div_(const Scalar& o, std::optional<std::string_view> mode) {
  EMBER_CHECK(!mode, "div_", "rounding_mode is not implemented yet");
  return dispatch::call<DivInplaceOp>(*this, o);
}

}  // namespace ember
