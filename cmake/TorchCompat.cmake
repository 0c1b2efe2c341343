# Ember::torch_compat: libtorch's public header paths (cmake/torch_compat_headers.txt, listed by
# scripts/compat_coverage.py --headers), each a one-line header that includes ember/torch.h. A
# project that links Ember::torch_compat finds them ahead of the system's libtorch headers, so
# `#include <torch/nn/module.h>` or `<ATen/ATen.h>` in a libtorch program builds against Ember.
# A TorchConfig.cmake beside Ember's package answers find_package(Torch) with this target, so a
# libtorch program's own CMakeLists builds unchanged: cmake -DTorch_DIR=<prefix>/lib/cmake/Ember/torch.
file(STRINGS ${PROJECT_SOURCE_DIR}/cmake/torch_compat_headers.txt ember_torch_headers)
set(ember_torch_compat_dir ${PROJECT_BINARY_DIR}/torch_compat/include)
foreach(header ${ember_torch_headers})
  file(CONFIGURE OUTPUT ${ember_torch_compat_dir}/${header}
       CONTENT "// libtorch's <${header}> in a program built against Ember (Ember::torch_compat)\n#pragma once\n#include <ember/torch.h>\n")
endforeach()

add_library(ember_torch_compat INTERFACE)
add_library(Ember::torch_compat ALIAS ember_torch_compat)
set_target_properties(ember_torch_compat PROPERTIES EXPORT_NAME torch_compat)
target_include_directories(ember_torch_compat INTERFACE $<BUILD_INTERFACE:${ember_torch_compat_dir}>
                           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/ember/torch_compat>)
target_link_libraries(ember_torch_compat INTERFACE ember)
install(TARGETS ember_torch_compat EXPORT EmberTargets)
install(DIRECTORY ${ember_torch_compat_dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ember/torch_compat)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/TorchConfig.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Ember/torch)
