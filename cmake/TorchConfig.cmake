# find_package(Torch) answered by Ember: a libtorch program's CMakeLists builds against Ember
# unchanged when configured with -DTorch_DIR=<Ember's prefix>/lib/cmake/Ember/torch. It sets the
# variables libtorch's TorchConfig.cmake sets; TORCH_LIBRARIES is Ember::torch_compat, which puts
# libtorch's header paths (forwarding to ember/torch.h) on the include path and links Ember.
include(CMakeFindDependencyMacro)
find_dependency(Ember CONFIG PATHS ${CMAKE_CURRENT_LIST_DIR}/.. NO_DEFAULT_PATH)
set(TORCH_FOUND TRUE)
set(TORCH_LIBRARIES Ember::torch_compat)
get_target_property(TORCH_INCLUDE_DIRS Ember::torch_compat INTERFACE_INCLUDE_DIRECTORIES)
set(TORCH_CXX_FLAGS "")
set(TORCH_LIBRARY Ember::torch_compat)
set(Torch_VERSION 1.13.1)
