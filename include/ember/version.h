// How this Ember was built, as ATen/Version.h tells it for libtorch (at::show_config).
#pragma once
#include <string>

namespace ember {
// The build's configuration, one item per line: compiler, C++ standard, OpenMP, oneDNN, Highway,
// the CPU capability in use, and the build settings (build type, compiler flags, sanitizers).
std::string show_config();
// The compiler flags the library was built with (CMake's flags of its build type).
std::string get_cxx_flags();
}  // namespace ember
