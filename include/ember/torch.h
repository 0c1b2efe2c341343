// libtorch compatibility: a program written against libtorch's C++ frontend builds against
// Ember by replacing `#include <torch/torch.h>` with `#include <ember/torch.h>`. The names of
// namespaces torch, at and c10 resolve to Ember's.
#pragma once
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
