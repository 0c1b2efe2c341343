// ember::Error and the one checking macro every op uses.
#pragma once
#include <exception>
#include <sstream>
#include <string>
#include <type_traits>

namespace ember {

class Error : public std::exception {
 public:
  explicit Error(std::string msg) : msg_(std::move(msg)) {}
  const char* what() const noexcept override { return msg_.c_str(); }
  // c10::Error's accessors: the message, and no backtrace (Ember's messages carry none).
  const std::string& msg() const { return msg_; }
  const char* what_without_backtrace() const noexcept { return msg_.c_str(); }
  const std::string& backtrace() const {
    static const std::string none;
    return none;
  }

 private:
  std::string msg_;
};

class TypeMeta;

namespace detail {
template <class T>
void append_message(std::ostream& os, const T& part) {
  // A Tensor::dtype() is named as c10's ScalarType ("Float"), as PyTorch's messages do, not as
  // the C++ type its operator<< prints ("float").
  if constexpr (std::is_same_v<T, TypeMeta>) {
    os << part.toScalarType();
  } else {
    os << part;
  }
}

template <class... Args>
[[noreturn]] void fail(const char* op, const Args&... args) {
  std::ostringstream os;
  os << op << ": ";
  (append_message(os, args), ...);
  throw Error(os.str());
}
}  // namespace detail
}  // namespace ember

// EMBER_CHECK(cond, "op_name", "message parts ", value, ...): throws ember::Error
// "op_name: message parts value..." when cond is false. Arguments are only evaluated on failure.
#define EMBER_CHECK(cond, op, ...)                        \
  do {                                                    \
    if (__builtin_expect(!(cond), 0)) {                   \
      ::ember::detail::fail(op, __VA_ARGS__);             \
    }                                                     \
  } while (0)
