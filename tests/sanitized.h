// Whether the test program is built with a sanitizer (GCC defines these macros under -fsanitize).
// Long loops whose breadth the Release build already covers run shorter there: the sanitizers
// look for memory and threading errors, which a sample of the same cases reaches.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
