#include "ember/dtype.h"

#include <atomic>

#include "ember/device.h"
#include "ember/error.h"
#include "ember/scalar.h"

namespace ember {

const char* to_string(ScalarType t) {
  constexpr const char* names[] = {"Byte", "Char", "Short", "Int", "Long", "Half",
                                   "Float", "Double", "Bool", "BFloat16", "Undefined"};
  return names[static_cast<int>(t)];
}

std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << to_string(t); }

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  EMBER_CHECK(a != ScalarType::Undefined && b != ScalarType::Undefined, "promote_types",
              "cannot promote an undefined dtype");
  if (a == kBool) return b;
  if (b == kBool) return a;
  const bool fa = is_floating_type(a), fb = is_floating_type(b);
  if (fa && fb) {
    if (is_reduced_floating_type(a) && is_reduced_floating_type(b)) return kFloat;  // half + bfloat16
    return element_size(a) >= element_size(b) ? a : b;
  }
  if (fa) return a;
  if (fb) return b;
  // both integral
  if (a == kByte || b == kByte) {
    ScalarType other = a == kByte ? b : a;
    return other == kChar ? kShort : other;  // uint8 with a signed type: the next signed type that holds both
  }
  return element_size(a) >= element_size(b) ? a : b;
}

namespace {
std::atomic<ScalarType> g_default_dtype{kFloat};
}
ScalarType get_default_dtype() { return g_default_dtype.load(std::memory_order_relaxed); }
void set_default_dtype(ScalarType t) {
  EMBER_CHECK(t == kFloat || t == kDouble, "set_default_dtype",
              "only floating-point types are supported as the default type, got ", t);
  g_default_dtype.store(t);
}

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool: return os << (s.toBool() ? "true" : "false");
    case Scalar::Kind::Int: return os << s.toLong();
    case Scalar::Kind::Double: return os << s.toDouble();
  }
  return os;
}

Device::Device(const std::string& spec) : type_(kCPU), index_(-1) {
  if (spec == "cpu") return;
  EMBER_CHECK(spec.rfind("cpu:", 0) == 0 && spec.size() > 4, "Device",
              "expected a device string like 'cpu' or 'cpu:0', got '", spec, "'");
  index_ = static_cast<int8_t>(std::stoi(spec.substr(4)));
}
std::string Device::str() const { return index_ < 0 ? "cpu" : "cpu:" + std::to_string(index_); }
std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

std::ostream& operator<<(std::ostream& os, MemoryFormat f) {
  switch (f) {
    case MemoryFormat::Contiguous: return os << "Contiguous";
    case MemoryFormat::Preserve: return os << "Preserve";
    case MemoryFormat::ChannelsLast: return os << "ChannelsLast";
    case MemoryFormat::ChannelsLast3d: return os << "ChannelsLast3d";
  }
  return os;
}

}  // namespace ember
