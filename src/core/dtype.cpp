#include "ember/dtype.h"

#include <atomic>

#include "ember/device.h"
#include "ember/error.h"
#include "ember/scalar.h"
#include "ember/tensor_options.h"

namespace ember {

const char* to_string(ScalarType t) {
  constexpr const char* names[] = {"Byte", "Char", "Short", "Int", "Long", "Half",
                                   "Float", "Double", "Bool", "BFloat16", "ComplexFloat",
                                   "ComplexDouble", "QInt8", "QUInt8", "QInt32", "Undefined"};
  return names[static_cast<int>(t)];
}

std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << to_string(t); }

const char* TypeMeta::name() const noexcept {
  constexpr const char* names[] = {"unsigned char",
                                   "signed char",
                                   "short int",
                                   "int",
                                   "long int",
                                   "c10::Half",
                                   "float",
                                   "double",
                                   "bool",
                                   "c10::BFloat16",
                                   "c10::complex<float>",
                                   "c10::complex<double>",
                                   "c10::qint8",
                                   "c10::quint8",
                                   "c10::qint32",
                                   "nullptr (uninitialized)"};
  return names[static_cast<int>(type_)];
}

std::ostream& operator<<(std::ostream& os, TypeMeta m) { return os << m.name(); }

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  EMBER_CHECK(a != ScalarType::Undefined && b != ScalarType::Undefined, "promote_types",
              "cannot promote an undefined dtype");
  EMBER_CHECK(!is_quantized_type(a) && !is_quantized_type(b), "promote_types", "quantized dtypes (", a, ", ", b,
              ") do not promote: dequantize() first");
  if (a == kBool) return b;
  if (b == kBool) return a;
  if (is_complex_type(a) || is_complex_type(b)) {  // complex wins; its parts as wide as the wider float
    const ScalarType ra = to_real_value_type(a), rb = to_real_value_type(b);
    return ra == kDouble || rb == kDouble ? kComplexDouble : kComplexFloat;
  }
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
    case Scalar::Kind::Complex: return os << s.toComplexDouble();
  }
  return os;
}

Device::Device(const std::string& spec) : type_(kCPU), index_(-1) {
  const size_t colon = spec.find(':');
  const std::string type = spec.substr(0, colon);
  EMBER_CHECK(type == "cpu" || type == "cuda", "Device",
              "Expected one of cpu, cuda device type at start of device string: ", spec);
  type_ = type == "cpu" ? kCPU : kCUDA;
  if (colon == std::string::npos) return;
  const std::string index = spec.substr(colon + 1);
  EMBER_CHECK(!index.empty() && index.size() <= 2 && index.find_first_not_of("0123456789") == std::string::npos,
              "Device", "Invalid device string: '", spec, "'");
  index_ = static_cast<int8_t>(std::stoi(index));
}
std::string Device::str() const {
  const std::string type = type_ == kCPU ? "cpu" : "cuda";
  return index_ < 0 ? type : type + ":" + std::to_string(index_);
}
void check_cpu_device(const char* op, const Device& device) {
  EMBER_CHECK(device.is_cpu(), op, "Ember computes on the CPU only and has no ", device,
              " device (torch::cuda::is_available() is false)");
}
std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }
std::string DeviceTypeName(DeviceType type, bool lower_case) {
  if (type == kCUDA) return lower_case ? "cuda" : "CUDA";
  return lower_case ? "cpu" : "CPU";
}
std::ostream& operator<<(std::ostream& os, DeviceType type) { return os << DeviceTypeName(type, true); }
std::ostream& operator<<(std::ostream& os, Layout) { return os << "Strided"; }

std::ostream& operator<<(std::ostream& os, const TensorOptions& options) {
  const auto field = [&](const char* label, const auto& value, bool set) {
    os << label << std::boolalpha << value << (set ? "" : " (default)");
  };
  field("TensorOptions(dtype=", options.dtype(), options.has_dtype());
  field(", device=", options.device(), options.has_device());
  field(", layout=", options.layout(), options.has_layout());
  field(", requires_grad=", options.requires_grad(), options.has_requires_grad());
  field(", pinned_memory=", options.pinned_memory(), options.has_pinned_memory());
  os << ", memory_format=";
  if (options.has_memory_format()) {
    os << *options.memory_format_opt();
  } else {
    os << "(nullopt)";
  }
  return os << ")";
}

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
