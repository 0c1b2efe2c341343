// Autocast's thread-local state (region dtype, cache, nesting) and the guard that enters a region.
#include "ember/autocast.h"

#include <unordered_map>

#include "dispatch/dispatch.h"
#include "ember/autograd.h"
#include "ember/error.h"

namespace ember {
namespace {

struct CachedCast {
  Tensor source;  // keeps the key alive
  Tensor cast;
  int64_t version;
};

struct AutocastState {
  ScalarType dtype = kBFloat16;
  bool cache_enabled = true;
  int nesting = 0;
  // libtorch's CUDA autocast state (at::autocast::set_enabled): kept and read back; Ember has no
  // GPU, so no op looks at it, as none does in a CPU build of libtorch.
  bool gpu_enabled = false;
  ScalarType gpu_dtype = kHalf;
  std::unordered_map<const TensorImpl*, CachedCast> cache;
};
thread_local AutocastState tls;

uint32_t& active() { return dispatch::thread_state().active; }

void check_dtype(ScalarType dtype) {
  EMBER_CHECK(dtype == kBFloat16 || dtype == kHalf, "autocast",
              "CPU autocast supports the dtypes bfloat16 and float16, got ", dtype);
}

DeviceType checked_device(std::string_view device_type) {
  EMBER_CHECK(device_type == "cpu", "autocast", "unsupported device type '", device_type,
              "': Ember's autocast supports 'cpu'");
  return kCPU;
}

// A parameter: a float32 leaf that requires grad (PyTorch caches exactly these).
bool cacheable(const Tensor& t, ScalarType to) {
  return tls.cache_enabled && to == tls.dtype && t.scalar_type() == kFloat && t.requires_grad() && t.is_leaf() &&
         !t.is_view() && !InferenceMode::is_enabled();
}

}  // namespace

namespace dispatch::autocast_impl {

ScalarType region_dtype() { return tls.dtype; }

Tensor cast(const Tensor& t, ScalarType to) {
  if (!eligible(t) || t.scalar_type() == to) return t;
  if (!cacheable(t, to)) return t.to(to);
  auto it = tls.cache.find(t.unsafeGetTensorImpl());
  // A hit made under no_grad has no history; in grad mode it is made again, with one.
  if (it != tls.cache.end() && it->second.version == t._version() &&
      (it->second.cast.requires_grad() || !GradMode::is_enabled())) {
    return it->second.cast;
  }
  Tensor r = t.to(to);
  tls.cache.insert_or_assign(t.unsafeGetTensorImpl(), CachedCast{t, r, t._version()});
  return r;
}

Suspend::Suspend() : was_on_((active() & kAutocastLayer) != 0) { active() &= ~static_cast<uint32_t>(kAutocastLayer); }
Suspend::~Suspend() {
  if (was_on_) active() |= kAutocastLayer;
}

}  // namespace dispatch::autocast_impl

namespace autocast {
bool is_cpu_enabled() { return (active() & dispatch::kAutocastLayer) != 0; }
void set_cpu_enabled(bool enabled) {
  if (enabled) {
    active() |= dispatch::kAutocastLayer;
  } else {
    active() &= ~static_cast<uint32_t>(dispatch::kAutocastLayer);
  }
}
ScalarType get_autocast_cpu_dtype() { return tls.dtype; }
void set_autocast_cpu_dtype(ScalarType dtype) {
  check_dtype(dtype);
  tls.dtype = dtype;
}
bool is_autocast_cache_enabled() { return tls.cache_enabled; }
void set_autocast_cache_enabled(bool enabled) { tls.cache_enabled = enabled; }
void clear_cache() { tls.cache.clear(); }
bool is_enabled() { return tls.gpu_enabled; }
void set_enabled(bool enabled) { tls.gpu_enabled = enabled; }
ScalarType get_autocast_gpu_dtype() { return tls.gpu_dtype; }
void set_autocast_gpu_dtype(ScalarType dtype) { tls.gpu_dtype = dtype; }
int increment_nesting() { return ++tls.nesting; }
int decrement_nesting() { return --tls.nesting; }
}  // namespace autocast

AutocastGuard::AutocastGuard(DeviceType, std::optional<ScalarType> dtype, bool enabled,
                             std::optional<bool> cache_enabled)
    : prev_enabled_(autocast::is_cpu_enabled()), prev_dtype_(tls.dtype), prev_cache_enabled_(tls.cache_enabled) {
  if (dtype) check_dtype(*dtype);  // before changing anything
  if (dtype) tls.dtype = *dtype;
  if (cache_enabled) tls.cache_enabled = *cache_enabled;
  autocast::set_cpu_enabled(enabled);
  autocast::increment_nesting();
}

AutocastGuard::AutocastGuard(std::string_view device_type, std::optional<ScalarType> dtype, bool enabled,
                             std::optional<bool> cache_enabled)
    : AutocastGuard(checked_device(device_type), dtype, enabled, cache_enabled) {}

AutocastGuard::~AutocastGuard() {
  if (autocast::decrement_nesting() == 0) autocast::clear_cache();
  autocast::set_cpu_enabled(prev_enabled_);
  tls.dtype = prev_dtype_;
  tls.cache_enabled = prev_cache_enabled_;
}

bool is_autocast_enabled(DeviceType) { return autocast::is_cpu_enabled(); }
ScalarType get_autocast_dtype(DeviceType) { return tls.dtype; }
bool is_autocast_cache_enabled() { return tls.cache_enabled; }

}  // namespace ember
