// The options classes' members, as libtorch's TORCH_ARG: a setter `name(value)` returning *this,
// and getters `name()`.
#pragma once

#define EMBER_DATA_ARG(T, name)                       \
 public:                                              \
  auto& name(const T& new_##name) {                   \
    name##_ = new_##name;                             \
    return *this;                                     \
  }                                                   \
  const T& name() const noexcept { return name##_; }  \
  T& name() noexcept { return name##_; }              \
                                                      \
 private:                                             \
  T name##_
