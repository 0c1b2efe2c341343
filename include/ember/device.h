// Devices and memory formats. CPU is the only device today; the types leave room for others.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>

namespace ember {

enum class DeviceType : int8_t { CPU = 0 };
constexpr DeviceType kCPU = DeviceType::CPU;

class Device {
 public:
  Device(DeviceType type = kCPU, int8_t index = -1) : type_(type), index_(index) {}  // NOLINT
  explicit Device(const std::string& spec);  // "cpu" or "cpu:0"
  DeviceType type() const { return type_; }
  int8_t index() const { return index_; }
  bool is_cpu() const { return type_ == kCPU; }
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;

 private:
  DeviceType type_;
  int8_t index_;
};
std::ostream& operator<<(std::ostream& os, const Device& d);

enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };
std::ostream& operator<<(std::ostream& os, MemoryFormat f);

enum class Layout : int8_t { Strided };
constexpr Layout kStrided = Layout::Strided;

}  // namespace ember
