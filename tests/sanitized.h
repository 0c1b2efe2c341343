// Whether the test program is built with a sanitizer (GCC defines these macros under -fsanitize;
// the parity tests, whose own code is not instrumented there, get EMBER_SANITIZED from CMake).
// Long loops whose breadth the Release build already covers run shorter there: the sanitizers
// look for memory and threading errors, which a sample of the same cases reaches.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(EMBER_SANITIZED)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
