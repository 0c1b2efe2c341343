// ember::Error and the one checking macro every op uses.
#pragma once
#include <exception>
#include <sstream>
#include <string>

namespace ember {

class Error : public std::exception {
 public:
  explicit Error(std::string msg) : msg_(std::move(msg)) {}
  const char* what() const noexcept override { return msg_.c_str(); }

 private:
  std::string msg_;
};

namespace detail {
template <class... Args>
[[noreturn]] void fail(const char* op, const Args&... args) {
  std::ostringstream os;
  os << op << ": ";
  (os << ... << args);
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
