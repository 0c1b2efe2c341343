#include "ember/version.h"

#include <dnnl.h>
#include <hwy/highway.h>

#include <sstream>

#include "ember/parallel.h"

// CMake defines these for this file (CMakeLists.txt).
#ifndef EMBER_BUILD_TYPE
#define EMBER_BUILD_TYPE ""
#endif
#ifndef EMBER_CXX_FLAGS
#define EMBER_CXX_FLAGS ""
#endif

namespace ember {

std::string get_cxx_flags() { return EMBER_CXX_FLAGS; }

std::string show_config() {
  std::ostringstream s;
  s << "Ember built with:\n";
  s << "  - GCC " << __GNUC__ << "." << __GNUC_MINOR__ << "\n";
  s << "  - C++ Version: " << __cplusplus << "\n";
  s << "  - OpenMP " << _OPENMP << "\n";
  const dnnl_version_t* dnnl = dnnl_version();
  s << "  - oneDNN v" << dnnl->major << "." << dnnl->minor << "." << dnnl->patch << "\n";
  s << "  - Highway " << HWY_MAJOR << "." << HWY_MINOR << "." << HWY_PATCH << "\n";
  s << "  - CPU capability usage: " << get_cpu_capability() << "\n";
  s << "  - Build settings: BUILD_TYPE=" << EMBER_BUILD_TYPE << ", CXX_FLAGS=" << EMBER_CXX_FLAGS
    << ", SANITIZERS=";
#if defined(__SANITIZE_ADDRESS__)
  s << "address";
#elif defined(__SANITIZE_THREAD__)
  s << "thread";
#else
  s << "none";
#endif
  s << "\n";
  return s.str();
}

}  // namespace ember
