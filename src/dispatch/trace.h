// The tracing layer's view of an op call (see dispatch.h and docs/fx.md): each argument as a tag
// and a pointer, so that the recorder (fx::Tracer, out of line) converts them once for every op
// instead of each op's instantiation doing it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ember/tensor.h"

namespace ember::dispatch {

struct TracedArg {
  enum class Kind : uint8_t {
    None,         // std::nullopt, an undefined Tensor
    Tensor,       // tensor
    TensorList,   // tensors, count
    OptTensorList,  // optional_tensors, count
    Scalar,       // scalar
    Int,          // i
    Double,       // d
    Bool,         // i
    IntList,      // ints, count
    DoubleList,   // doubles, count
    String,       // str
    Dtype,        // i (the ScalarType)
    MemoryFormat, // i
    Layout,       // i
    Unsupported,  // a type the graph cannot hold (a Generator, an op's internal struct)
  };
  Kind kind = Kind::None;
  union {
    const Tensor* tensor;
    const Tensor* tensors;
    const std::optional<Tensor>* optional_tensors;
    const Scalar* scalar;
    const int64_t* ints;
    const double* doubles;
    int64_t i;
    double d;
  };
  size_t count = 0;
  std::string_view str;
  TracedArg() : i(0) {}
};

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

// One argument of an op's run(), tagged.
template <class T>
TracedArg traced_arg(const T& a) {
  using D = std::decay_t<T>;
  TracedArg r;
  using K = TracedArg::Kind;
  if constexpr (std::is_same_v<D, std::nullopt_t>) {
    return r;
  } else if constexpr (std::is_same_v<D, Tensor>) {
    if (a.defined()) {
      r.kind = K::Tensor;
      r.tensor = &a;
    }
  } else if constexpr (std::is_same_v<D, TensorList> || std::is_same_v<D, std::vector<Tensor>>) {
    r.kind = K::TensorList;
    r.tensors = a.data();
    r.count = a.size();
  } else if constexpr (std::is_same_v<D, ArrayRef<std::optional<Tensor>>> ||
                       std::is_same_v<D, std::vector<std::optional<Tensor>>>) {
    r.kind = K::OptTensorList;
    r.optional_tensors = a.data();
    r.count = a.size();
  } else if constexpr (std::is_same_v<D, Scalar>) {
    r.kind = K::Scalar;
    r.scalar = &a;
  } else if constexpr (std::is_same_v<D, bool>) {
    r.kind = K::Bool;
    r.i = a;
  } else if constexpr (std::is_integral_v<D>) {
    r.kind = K::Int;
    r.i = static_cast<int64_t>(a);
  } else if constexpr (std::is_floating_point_v<D>) {
    r.kind = K::Double;
    r.d = static_cast<double>(a);
  } else if constexpr (std::is_same_v<D, ScalarType>) {
    r.kind = K::Dtype;
    r.i = static_cast<int64_t>(a);
  } else if constexpr (std::is_same_v<D, MemoryFormat>) {
    r.kind = K::MemoryFormat;
    r.i = static_cast<int64_t>(a);
  } else if constexpr (std::is_same_v<D, Layout>) {
    r.kind = K::Layout;
    r.i = static_cast<int64_t>(a);
  } else if constexpr (std::is_same_v<D, IntArrayRef> || std::is_same_v<D, std::vector<int64_t>>) {
    r.kind = K::IntList;
    r.ints = a.data();
    r.count = a.size();
  } else if constexpr (std::is_same_v<D, ArrayRef<double>> || std::is_same_v<D, std::vector<double>>) {
    r.kind = K::DoubleList;
    r.doubles = a.data();
    r.count = a.size();
  } else if constexpr (std::is_same_v<D, OptionalIntArrayRef>) {
    if (a) r = traced_arg(*a);
  } else if constexpr (is_optional<D>::value) {
    if (a) r = traced_arg(*a);
  } else if constexpr (std::is_convertible_v<const D&, IntArrayRef>) {  // DimVector, SmallVector...
    return traced_arg(IntArrayRef(a));
  } else if constexpr (std::is_convertible_v<const D&, TensorList>) {
    return traced_arg(TensorList(a));
  } else if constexpr (std::is_convertible_v<const D&, std::string_view>) {
    r.kind = K::String;
    r.str = std::string_view(a);
  } else {
    r.kind = K::Unsupported;
  }
  return r;
}

// What an op returns, for the recorder: its tensors, and whether they come as several outputs.
template <class R>
inline constexpr bool is_tensor_tuple = false;
template <class... T>
inline constexpr bool is_tensor_tuple<std::tuple<T...>> = (std::is_same_v<std::decay_t<T>, Tensor> && ...);
template <class R>
inline constexpr bool returns_tensors =
    std::is_same_v<std::decay_t<R>, Tensor> || std::is_same_v<std::decay_t<R>, std::vector<Tensor>> ||
    is_tensor_tuple<std::decay_t<R>> || std::is_void_v<R>;

// Implemented by fx::Tracer. begin() sees the arguments before the op runs (and throws if the
// call cannot be recorded); it returns whether the call is recorded (some argument is traced).
// end() then gets the results (n tensors; `multiple`: a tuple or list of outputs).
class TraceRecorder {
 public:
  virtual bool begin(const char* op, const TracedArg* args, size_t n, bool returns_tensors) = 0;
  virtual void end(const Tensor* const* results, size_t n, bool multiple) = 0;

 protected:
  ~TraceRecorder() = default;
};
TraceRecorder* trace_recorder();            // this thread's, while kTracingLayer is set
void set_trace_recorder(TraceRecorder* r);  // also sets or clears kTracingLayer

}  // namespace ember::dispatch
