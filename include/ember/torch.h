// libtorch compatibility: a program written against libtorch's C++ frontend builds against
// Ember by replacing `#include <torch/torch.h>` with `#include <ember/torch.h>`. The names of
// namespaces torch, at and c10 resolve to Ember's.
#pragma once
#include <iostream>
#include <sstream>
#include <string>

#include "ember/ember.h"

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
}  // namespace c10
// ---- nn: libtorch's module macro ----
#define TORCH_MODULE(Name) EMBER_MODULE(Name)
#define TORCH_MODULE_IMPL(Name, ImplType) EMBER_MODULE_IMPL(Name, ImplType)
#define TORCH_ARG(T, name) EMBER_ARG(T, name)

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
#define TORCH_CHECK(cond, ...)                                                                       \
  do {                                                                                               \
    if (!(cond))                                                                                     \
      throw ::ember::Error(::ember::detail::check_message("Expected " #cond " to be true, but got false." \
                                                          __VA_OPT__(, ) __VA_ARGS__));              \
  } while (0)
#define TORCH_INTERNAL_ASSERT(cond, ...)                                                           \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      throw ::ember::Error(std::string(#cond " INTERNAL ASSERT FAILED at " __FILE__ ": ") +        \
                           ::ember::detail::check_message("" __VA_OPT__(, ) __VA_ARGS__));         \
  } while (0)
#define AT_ASSERT(cond, ...) TORCH_INTERNAL_ASSERT(cond __VA_OPT__(, ) __VA_ARGS__)
#define AT_ERROR(...) throw ::ember::Error(::ember::detail::check_message("" __VA_OPT__(, ) __VA_ARGS__))
#define TORCH_WARN(...) (std::cerr << "Warning: " << ::ember::detail::check_message("" __VA_OPT__(, ) __VA_ARGS__) << '\n')
#define C10_UNUSED __attribute__((__unused__))
