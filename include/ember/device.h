// Devices and memory formats. Ember computes on the CPU only; CUDA is named so that libtorch code
// which asks about it (torch::cuda::is_available(), Device("cuda:0"), torch::kCUDA) builds and takes
// its CPU path, and making or moving a tensor there raises ember::Error.
#pragma once
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace ember {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;

class Device {
 public:
  Device(DeviceType type = kCPU, int8_t index = -1) : type_(type), index_(index) {}  // NOLINT
  Device(const std::string& spec);  // NOLINT: implicit, as libtorch's ("cpu", "cpu:0", "cuda", "cuda:1")
  DeviceType type() const { return type_; }
  int8_t index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  bool is_cpu() const { return type_ == kCPU; }
  bool is_cuda() const { return type_ == kCUDA; }
  void set_index(int8_t index) { index_ = index; }
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;

 private:
  DeviceType type_;
  int8_t index_;
};
std::ostream& operator<<(std::ostream& os, const Device& d);
// "CPU" / "CUDA" (lower case: "cpu", "cuda", which is how a DeviceType prints), as c10's.
std::string DeviceTypeName(DeviceType type, bool lower_case = false);
std::ostream& operator<<(std::ostream& os, DeviceType type);
// Raises ember::Error naming `op` unless `device` is the CPU.
void check_cpu_device(const char* op, const Device& device);

// libtorch's torch::cuda queries, answered for a machine without CUDA.
namespace cuda {
inline bool is_available() { return false; }
inline size_t device_count() { return 0; }
inline bool cudnn_is_available() { return false; }
inline void manual_seed(uint64_t) {}  // as libtorch's without a CUDA device: nothing to seed
inline void manual_seed_all(uint64_t) {}
// As libtorch's without a CUDA device: raises ember::Error ("No CUDA GPUs are available").
void synchronize(int64_t device_index = -1);
}  // namespace cuda

enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };
std::ostream& operator<<(std::ostream& os, MemoryFormat f);

enum class Layout : int8_t { Strided };
constexpr Layout kStrided = Layout::Strided;
std::ostream& operator<<(std::ostream& os, Layout layout);

}  // namespace ember

// Devices as keys of unordered containers, as c10's.
template <>
struct std::hash<ember::Device> {
  size_t operator()(const ember::Device& d) const noexcept {
    return (static_cast<size_t>(static_cast<uint8_t>(d.type())) << 8) | static_cast<uint8_t>(d.index());
  }
};
