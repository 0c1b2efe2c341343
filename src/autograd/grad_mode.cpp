// Grad modes: bits of dispatch's thread-local layer word, so that ops test them with one load.
#include "dispatch/dispatch.h"
#include "ember/autograd.h"

namespace ember {

using dispatch::kGradModeLayer;
using dispatch::kInferenceLayer;
using dispatch::thread_state;

bool GradMode::is_enabled() { return (thread_state().active & kGradModeLayer) != 0; }
void GradMode::set_enabled(bool enabled) {
  if (enabled) {
    thread_state().active |= kGradModeLayer;
  } else {
    thread_state().active &= ~static_cast<uint32_t>(kGradModeLayer);
  }
}
bool is_grad_enabled() { return GradMode::is_enabled(); }
void set_grad_enabled(bool enabled) { GradMode::set_enabled(enabled); }

AutoGradMode::AutoGradMode(bool enabled) : saved_(thread_state().active & kGradModeLayer) {
  GradMode::set_enabled(enabled);
}
AutoGradMode::~AutoGradMode() { GradMode::set_enabled(saved_ != 0); }

namespace {
constexpr uint32_t kModeBits = kGradModeLayer | kInferenceLayer;
}

InferenceMode::InferenceMode(bool enabled) : saved_(thread_state().active & kModeBits) {
  uint32_t& active = thread_state().active;
  active &= ~kModeBits;
  active |= enabled ? static_cast<uint32_t>(kInferenceLayer) : static_cast<uint32_t>(kGradModeLayer);
}
InferenceMode::~InferenceMode() {
  uint32_t& active = thread_state().active;
  active = (active & ~kModeBits) | saved_;
}
bool InferenceMode::is_enabled() { return (thread_state().active & kInferenceLayer) != 0; }

}  // namespace ember
