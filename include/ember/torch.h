// libtorch compatibility: a program written against libtorch's C++ frontend builds against
// Ember by replacing `#include <torch/torch.h>` with `#include <ember/torch.h>`. The names of
// namespaces torch, at and c10 resolve to Ember's.
#pragma once
// libtorch's torch.h brings <cassert> and <fstream> in; programs rely on them
// The standard headers libtorch's <torch/torch.h> brings with it, which programs rely on.
#include <bitset>
#include <cassert>
#include <cfloat>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <forward_list>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <list>
#include <locale>
#include <map>
#include <numeric>
#include <optional>
#include <queue>
#include <set>
#include <shared_mutex>
#include <sstream>
#include <stack>
#include <string>
#include <type_traits>
#include <typeindex>
#include <unordered_set>
#include <vector>

#include "ember/ember.h"
#include "ember/tensor_checks.h"

namespace torch {
using namespace ::ember;  // NOLINT
}  // namespace torch
namespace at {
using namespace ::ember;  // NOLINT
}  // namespace at
namespace c10 {
using namespace ::ember;  // NOLINT
using Half = ::ember::Half;
using BFloat16 = ::ember::BFloat16;
template <class T>
using complex = ::ember::complex<T>;
// c10's optional is std::optional (as it became in libtorch 2.x).
template <class T>
using optional = std::optional<T>;
using std::make_optional;
using std::nullopt;
using std::nullopt_t;
using OptionalIntArrayRef = ::ember::OptionalIntArrayRef;
using Argument = ::ember::jit::Argument;  // an operator schema's parts (torch::jit::getAllOperators)
using FunctionSchema = ::ember::jit::FunctionSchema;
using Symbol = ::ember::jit::Symbol;
using TypePtr = ::ember::jit::TypePtr;
using AnyType = ::ember::jit::AnyType;
using TensorType = ::ember::jit::TensorType;
using IntType = ::ember::jit::IntType;
using FloatType = ::ember::jit::FloatType;
using BoolType = ::ember::jit::BoolType;
using StringType = ::ember::jit::StringType;
using NoneType = ::ember::jit::NoneType;
// TorchScript's containers (shared by their copies) and tuples
template <class T>
using List = ::ember::jit::List<T>;
template <class K, class V>
using Dict = ::ember::jit::Dict<K, V>;
namespace ivalue = ::ember::jit::ivalue;
// c10's OptionalArrayRef<int64_t> (what OptionalIntArrayRef names); of other types, not provided.
template <class T>
  requires std::is_same_v<T, int64_t>
using OptionalArrayRef = ::ember::OptionalIntArrayRef;

// c10::irange(end) and irange(begin, end): the integers of [begin, end) for a range-for loop (an
// empty range when end < begin).
template <class I>
class integer_range {
 public:
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = I;
    using difference_type = std::ptrdiff_t;
    using pointer = const I*;
    using reference = I;
    explicit iterator(I v) : v_(v) {}
    I operator*() const { return v_; }
    iterator& operator++() {
      ++v_;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++v_;
      return old;
    }
    bool operator==(const iterator& o) const { return v_ == o.v_; }
    bool operator!=(const iterator& o) const { return v_ != o.v_; }

   private:
    I v_;
  };
  integer_range(I begin, I end) : begin_(begin), end_(end < begin ? begin : end) {}
  iterator begin() const { return iterator(begin_); }
  iterator end() const { return iterator(end_); }

 private:
  I begin_, end_;
};
template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
integer_range<I> irange(I end) {
  return integer_range<I>(I{0}, end);
}
template <class I1, class I2, std::enable_if_t<std::is_integral_v<I1> && std::is_integral_v<I2>, int> = 0>
integer_range<I2> irange(I1 begin, I2 end) {
  return integer_range<I2>(static_cast<I2>(begin), end);
}
namespace guts {
// c10::guts::to_string: a value as operator<< writes it (libtorch's optimizers key their state by
// a parameter's TensorImpl* printed so).
template <class T>
std::string to_string(T value) {
  std::ostringstream os;
  os << value;
  return os.str();
}
}  // namespace guts
// c10::str(args...): the arguments written to one string as operator<< writes them.
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace c10
namespace torch {
namespace ivalue = ::ember::jit::ivalue;  // torch::ivalue::Tuple
// torch/types.h's short dtype names
constexpr auto kU8 = kUInt8;
constexpr auto kI8 = kInt8;
constexpr auto kI16 = kInt16;
constexpr auto kI32 = kInt32;
constexpr auto kI64 = kInt64;
constexpr auto kF16 = kFloat16;
constexpr auto kF32 = kFloat32;
constexpr auto kF64 = kFloat64;
using ::c10::nullopt;
using ::c10::optional;
using ::c10::str;
// torch::complex(real, imag): a function in namespace torch, where ember::complex is the
// element type (c10::complex<T>, above).
inline Tensor complex(const Tensor& real, const Tensor& imag) { return ::ember::make_complex(real, imag); }
}  // namespace torch
namespace c10::impl {
using GenericDict = ::ember::jit::GenericDict;  // c10::Dict<IValue, IValue>
using GenericList = ::ember::jit::List<::ember::jit::IValue>;
template <class K, class V>
::ember::jit::Dict<K, V> toTypedDict(GenericDict dict) {
  return ::ember::jit::Dict<K, V>(std::move(dict));
}
template <class K, class V>
GenericDict toGenericDict(const ::ember::jit::Dict<K, V>& dict) {
  return dict.generic();
}
}  // namespace c10::impl
namespace at::detail {
// A CPU generator of its own (libtorch's at::detail::createCPUGenerator): `auto gen =
// at::detail::createCPUGenerator(42); torch::randn({3}, gen);`. Ember's Generator is the state
// itself, not a handle: it is passed by reference and not copied.
inline ::ember::Generator createCPUGenerator(uint64_t seed = 67280421310721ull) { return ::ember::Generator(seed); }
}  // namespace at::detail
namespace caffe2 {
using TypeMeta = ::ember::TypeMeta;  // what Tensor::dtype() returns
}  // namespace caffe2
namespace at {
// The real type of a scalar type (float for c10::complex<float>), as ATen's.
template <class T>
struct scalar_value_type {
  using type = T;
};
template <class T>
struct scalar_value_type<::ember::complex<T>> {
  using type = T;
};
using ::c10::irange;
using ::c10::nullopt;
using ::c10::optional;
using ::c10::str;
}  // namespace at
// ---- c10's export macros (c10/macros/Export.h), which programs put on their own classes ----
#ifndef C10_EXPORT
#define C10_EXPORT __attribute__((__visibility__("default")))
#define C10_IMPORT C10_EXPORT
#endif
#ifndef C10_API
#define C10_API C10_EXPORT
#endif
#ifndef TORCH_API
#define TORCH_API C10_EXPORT
#endif
// ---- libtorch's version macros (torch/version.h): the release whose API Ember follows ----
#define TORCH_VERSION_MAJOR 1
#define TORCH_VERSION_MINOR 13
#define TORCH_VERSION_PATCH 1
#define TORCH_VERSION "1.13.1"
// ---- nn: libtorch's module macro ----
#define TORCH_MODULE(Name) EMBER_MODULE(Name)
#define TORCH_MODULE_IMPL(Name, ImplType) EMBER_MODULE_IMPL(Name, ImplType)
#define TORCH_ARG(T, name) EMBER_ARG(T, name)
// ---- optim: the macros an optimizer written for libtorch serializes its options and state with
// (torch/optim/serialize.h), inside serialize(archive) methods ----
#define _TORCH_OPTIM_SERIALIZE_TORCH_ARG(name)                                              \
  {                                                                                         \
    const ::ember::jit::IValue ivalue(name());                                              \
    if (!(ivalue.isTensor() && !ivalue.toTensor().defined())) archive.write(#name, ivalue); \
  }
#define _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(T, name)                                          \
  {                                                                                          \
    ::ember::jit::IValue ivalue;                                                             \
    if (archive.try_read(#name, ivalue)) {                                                   \
      name(ivalue.to<T>());                                                                  \
    } else {                                                                                 \
      TORCH_INTERNAL_ASSERT((std::is_base_of_v<::ember::Tensor, T>), "missing '" #name "'"); \
    }                                                                                        \
  }
#define _TORCH_OPTIM_DESERIALIZE_TORCH_ARG_OPTIONAL(T, name) \
  {                                                          \
    ::ember::jit::IValue ivalue;                             \
    if (archive.try_read(#name, ivalue)) {                   \
      name(ivalue.toOptional<T>());                          \
    }                                                        \
  }

// ---- printing of std containers, which c10's logging header gives every libtorch program ----
// `std::cout << sizes_vector`: the elements separated by spaces, at most 100 then " ...", pairs as
// (a, b). c10 declares these in namespace std, where argument lookup finds them; so does Ember.
namespace std {  // NOLINT(cert-dcl58-cpp): c10's own extension, reproduced for its programs
template <class First, class Second>
ostream& operator<<(ostream& out, const pair<First, Second>& p);
}  // namespace std
namespace ember::detail {
template <class Iter>
void print_sequence(std::ostream& out, Iter begin, Iter end) {
  for (int i = 0; begin != end && i < 100; ++i, ++begin) {
    if (i > 0) out << ' ';
    out << *begin;
  }
  if (begin != end) out << " ...";
}
}  // namespace ember::detail
namespace std {  // NOLINT(cert-dcl58-cpp)
template <class... Types>
ostream& operator<<(ostream& out, const vector<Types...>& seq) {
  ::ember::detail::print_sequence(out, seq.begin(), seq.end());
  return out;
}
template <class... Types>
ostream& operator<<(ostream& out, const map<Types...>& seq) {
  ::ember::detail::print_sequence(out, seq.begin(), seq.end());
  return out;
}
template <class... Types>
ostream& operator<<(ostream& out, const set<Types...>& seq) {
  ::ember::detail::print_sequence(out, seq.begin(), seq.end());
  return out;
}
template <class First, class Second>
ostream& operator<<(ostream& out, const pair<First, Second>& p) {
  return out << '(' << p.first << ", " << p.second << ')';
}
}  // namespace std

// ---- c10's checking macros: failures raise ember::Error, whose what() carries the message ----
namespace ember::detail {
template <class... Args>
std::string check_message(const char* fallback, const Args&... args) {
  if constexpr (sizeof...(Args) == 0) {
    return fallback;
  } else {
    std::ostringstream os;
    (os << ... << args);
    return os.str();
  }
}
}  // namespace ember::detail
// As c10's, an `if` statement rather than a `do {} while (0)`: programs end them with or without
// a semicolon (`TORCH_CHECK(a == b)` on its own line compiles with libtorch).
#define TORCH_CHECK(cond, ...)                                                                                       \
  if (!(cond)) {                                                                                                     \
    throw ::ember::Error(                                                                                            \
        ::ember::detail::check_message("Expected " #cond " to be true, but got false." __VA_OPT__(, ) __VA_ARGS__)); \
  }
#define TORCH_INTERNAL_ASSERT(cond, ...)                                                  \
  if (!(cond)) {                                                                          \
    throw ::ember::Error(std::string(#cond " INTERNAL ASSERT FAILED at " __FILE__ ": ") + \
                         ::ember::detail::check_message("" __VA_OPT__(, ) __VA_ARGS__));  \
  }
#ifdef NDEBUG
#define TORCH_INTERNAL_ASSERT_DEBUG_ONLY(...) \
  while (false) TORCH_INTERNAL_ASSERT(__VA_ARGS__)
#else
#define TORCH_INTERNAL_ASSERT_DEBUG_ONLY(...) TORCH_INTERNAL_ASSERT(__VA_ARGS__)
#endif
// c10's typed checks: the error classes PyTorch turns into IndexError, ValueError, ...; each is a
// c10::Error, so `catch (const c10::Error&)` still catches them.
namespace c10 {
#define EMBER_C10_ERROR_CLASS(Name)                            \
  class Name : public ::ember::Error {                         \
   public:                                                     \
    explicit Name(std::string msg) : Error(std::move(msg)) {} \
  };
EMBER_C10_ERROR_CLASS(IndexError)
EMBER_C10_ERROR_CLASS(ValueError)
EMBER_C10_ERROR_CLASS(TypeError)
EMBER_C10_ERROR_CLASS(NotImplementedError)
EMBER_C10_ERROR_CLASS(LinAlgError)
EMBER_C10_ERROR_CLASS(OutOfMemoryError)
EMBER_C10_ERROR_CLASS(EnforceFiniteError)
#undef EMBER_C10_ERROR_CLASS
}  // namespace c10
#define EMBER_TYPED_CHECK(Type, cond, ...)                                                                           \
  if (!(cond)) {                                                                                                     \
    throw ::c10::Type(                                                                                               \
        ::ember::detail::check_message("Expected " #cond " to be true, but got false." __VA_OPT__(, ) __VA_ARGS__)); \
  }
#define TORCH_CHECK_INDEX(cond, ...) EMBER_TYPED_CHECK(IndexError, cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_VALUE(cond, ...) EMBER_TYPED_CHECK(ValueError, cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_TYPE(cond, ...) EMBER_TYPED_CHECK(TypeError, cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_NOT_IMPLEMENTED(cond, ...) EMBER_TYPED_CHECK(NotImplementedError, cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_LINALG(cond, ...) EMBER_TYPED_CHECK(LinAlgError, cond __VA_OPT__(, ) __VA_ARGS__)
#define TORCH_CHECK_ARG(cond, argN, ...) \
  TORCH_CHECK(cond, "invalid argument ", argN, ": " __VA_OPT__(, ) __VA_ARGS__)
#define C10_THROW_ERROR(Type, msg) throw ::c10::Type(msg)
#define C10_LIKELY(expr) (__builtin_expect(static_cast<bool>(expr), 1))
#define C10_UNLIKELY(expr) (__builtin_expect(static_cast<bool>(expr), 0))
// once per call site, as c10's
#define TORCH_WARN_ONCE(...)                                                        \
  if (static const bool ember_warned_once_ = [&] {                                  \
        TORCH_WARN(__VA_ARGS__);                                                    \
        return true;                                                                \
      }();                                                                          \
      !ember_warned_once_) {                                                        \
  }
// c10's glog-style checks: a failure prints the values and aborts the process, as c10's fatal
// log does (they are not exceptions); more text can be streamed in: TORCH_CHECK_EQ(a, b) << "..."
namespace ember::detail {
class FatalCheckLog {
 public:
  FatalCheckLog(const char* file, int line) { os_ << "[F " << file << ':' << line << "] "; }
  ~FatalCheckLog() {
    std::cerr << os_.str() << std::endl;
    std::abort();
  }
  FatalCheckLog(const FatalCheckLog&) = delete;
  FatalCheckLog& operator=(const FatalCheckLog&) = delete;
  std::ostream& stream() { return os_; }

 private:
  std::ostringstream os_;
};
struct FatalCheckVoidify {
  void operator&(std::ostream&) {}
};
}  // namespace ember::detail
#define TORCH_CHECK_OP(a, b, op)                                                                                \
  ((a)op(b)) ? static_cast<void>(0)                                                                            \
             : ::ember::detail::FatalCheckVoidify() & ::ember::detail::FatalCheckLog(__FILE__, __LINE__).stream() \
                                                          << "Check failed: " #a " " #op " " #b " (" << (a)    \
                                                          << " vs. " << (b) << ") "
#define TORCH_CHECK_EQ(a, b) TORCH_CHECK_OP(a, b, ==)
#define TORCH_CHECK_NE(a, b) TORCH_CHECK_OP(a, b, !=)
#define TORCH_CHECK_LE(a, b) TORCH_CHECK_OP(a, b, <=)
#define TORCH_CHECK_LT(a, b) TORCH_CHECK_OP(a, b, <)
#define TORCH_CHECK_GE(a, b) TORCH_CHECK_OP(a, b, >=)
#define TORCH_CHECK_GT(a, b) TORCH_CHECK_OP(a, b, >)
// c10's usage logging (an API-usage hook for PyTorch's telemetry): nothing to log here
#define C10_LOG_API_USAGE_ONCE(...) static_cast<void>(0)
#define AT_ASSERT(cond, ...) TORCH_INTERNAL_ASSERT(cond __VA_OPT__(, ) __VA_ARGS__)
#define AT_ASSERTM(cond, ...) TORCH_INTERNAL_ASSERT(cond __VA_OPT__(, ) __VA_ARGS__)
// (pimpl.h's: a `using Impl TORCH_UNUSED_EXCEPT_CUDA = ...` in a hand-written module holder)
#define TORCH_UNUSED_EXCEPT_CUDA C10_UNUSED

// ATen's AT_DISPATCH_*(TYPE, NAME, lambda): the lambda run with `scalar_t` the C++ type of TYPE (a
// ScalarType, a dtype() or a type()), its result returned; another dtype raises as ATen's does
// ("\"NAME\" not implemented for 'Int'").
namespace ember::detail {
inline ScalarType dispatch_type(ScalarType t) { return t; }
inline ScalarType dispatch_type(const DeprecatedTypeProperties& t) { return t.scalarType(); }
[[noreturn]] inline void dispatch_failed(const char* name, ScalarType t) {
  throw Error(std::string("\"") + name + "\" not implemented for '" + to_string(t) + "'");
}
}  // namespace ember::detail
#define EMBER_DISPATCH_CASE(ENUM, TYPE, ...) \
  case ::ember::ScalarType::ENUM: {          \
    using scalar_t [[maybe_unused]] = TYPE;  \
    return __VA_ARGS__();                    \
  }
#define EMBER_DISPATCH(TYPE, NAME, CASES)                              \
  [&] {                                                                \
    const ::ember::ScalarType _st = ::ember::detail::dispatch_type(TYPE); \
    switch (_st) {                                                     \
      CASES                                                            \
      default: ::ember::detail::dispatch_failed(NAME, _st);            \
    }                                                                  \
  }()
#define EMBER_DISPATCH_FLOATING(...) \
  EMBER_DISPATCH_CASE(Double, double, __VA_ARGS__) EMBER_DISPATCH_CASE(Float, float, __VA_ARGS__)
#define EMBER_DISPATCH_INTEGRAL(...)                                                                  \
  EMBER_DISPATCH_CASE(Byte, uint8_t, __VA_ARGS__) EMBER_DISPATCH_CASE(Char, int8_t, __VA_ARGS__)      \
  EMBER_DISPATCH_CASE(Int, int32_t, __VA_ARGS__) EMBER_DISPATCH_CASE(Long, int64_t, __VA_ARGS__)      \
  EMBER_DISPATCH_CASE(Short, int16_t, __VA_ARGS__)
#define AT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) EMBER_DISPATCH(TYPE, NAME, EMBER_DISPATCH_FLOATING(__VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND_HALF(TYPE, NAME, ...) \
  EMBER_DISPATCH(TYPE, NAME, EMBER_DISPATCH_FLOATING(__VA_ARGS__) EMBER_DISPATCH_CASE(Half, ::ember::Half, __VA_ARGS__))
#define AT_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...) EMBER_DISPATCH(TYPE, NAME, EMBER_DISPATCH_INTEGRAL(__VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES(TYPE, NAME, ...) \
  EMBER_DISPATCH(TYPE, NAME, EMBER_DISPATCH_INTEGRAL(__VA_ARGS__) EMBER_DISPATCH_FLOATING(__VA_ARGS__))
#define AT_ERROR(...) throw ::ember::Error(::ember::detail::check_message("" __VA_OPT__(, ) __VA_ARGS__))
#define TORCH_WARN(...) (std::cerr << "Warning: " << ::ember::detail::check_message("" __VA_OPT__(, ) __VA_ARGS__) << '\n')
#define C10_UNUSED __attribute__((__unused__))
