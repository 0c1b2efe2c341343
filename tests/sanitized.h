// Whether the library under test is built with a sanitizer. Long loops whose breadth the Release
// build already covers run shorter there: the sanitizers look for memory and threading errors,
// which a sample of the same cases reaches. Asked of the library at run time (its flags), not
// of the test's own flags: the parity tests' code is never instrumented, and CI runs the same
// parity programs against the Release library and then against the sanitized one
// (scripts/test.sh).
#pragma once
#include <string>

#include "ember/version.h"

inline bool sanitized() {
  static const bool library_sanitized = ember::get_cxx_flags().find("-fsanitize=") != std::string::npos;
  return library_sanitized;
}
