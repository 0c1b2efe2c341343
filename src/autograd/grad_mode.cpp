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

AutoGradMode::AutoGradMode(bool enabled) {
  uint32_t& active = thread_state().active;
  saved_ = active & kGradModeLayer;
  active = enabled ? active | kGradModeLayer : active & ~static_cast<uint32_t>(kGradModeLayer);
}
AutoGradMode::~AutoGradMode() {
  uint32_t& active = thread_state().active;
  active = (active & ~static_cast<uint32_t>(kGradModeLayer)) | saved_;
}

namespace {
constexpr uint32_t kModeBits = kGradModeLayer | kInferenceLayer;
}

InferenceMode::InferenceMode(bool enabled) {
  uint32_t& active = thread_state().active;
  saved_ = active & kModeBits;
  const uint32_t mode = enabled ? kInferenceLayer : kGradModeLayer;
  active = (active & ~kModeBits) | mode;
}
InferenceMode::~InferenceMode() {
  uint32_t& active = thread_state().active;
  active = (active & ~kModeBits) | saved_;
}
bool InferenceMode::is_enabled() { return (thread_state().active & kInferenceLayer) != 0; }

}  // namespace ember
