// Storage: a ref-counted block of bytes shared by a tensor and its views, and the CPU allocator.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "ember/device.h"
#include "ember/intrusive_ptr.h"

namespace ember {

// The CPU allocator: 64-byte aligned blocks, cached by size class so that a training loop that
// allocates the same shapes every step reuses memory instead of asking the OS (and page-faulting)
// again. The cache is bounded; empty_cache() returns everything cached to the system.
namespace cpu_allocator {
void* allocate(size_t nbytes);
void deallocate(void* p, size_t nbytes);
void empty_cache();
bool caching_enabled();  // false in AddressSanitizer builds, so it sees every use after free
// Whether every block handed out is first filled with 0xFF bytes: NaN in each floating dtype,
// -1 (255) in integers, so a kernel that reads memory nobody wrote shows NaN on every machine
// instead of whatever an earlier tensor left there (PyTorch's fill_uninitialized_memory, with
// a byte pattern). On in debug and sanitizer builds, off in release builds; the environment
// variable EMBER_FILL_UNINITIALIZED_MEMORY=1 or 0 overrides the default at start-up.
void set_fill_uninitialized_memory(bool on);
bool fill_uninitialized_memory();
// Small fixed-size objects (TensorImpl, StorageImpl, autograd nodes) from the same per-thread
// cache, outside the byte statistics: a new tensor or graph node costs no malloc once a thread has
// warmed up. Objects above the small-block limit go to the system.
void* allocate_object(size_t nbytes);
void deallocate_object(void* p, size_t nbytes);
// A standard allocator over allocate_object, for std::allocate_shared and containers of small
// objects made per op (a node and its edge list).
template <class T>
struct ObjectAllocator {
  using value_type = T;
  ObjectAllocator() = default;
  template <class U>
  ObjectAllocator(const ObjectAllocator<U>&) noexcept {}  // NOLINT: rebinding, as std::allocator
  T* allocate(size_t n) { return static_cast<T*>(allocate_object(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { deallocate_object(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const ObjectAllocator<U>&) const noexcept {
    return true;
  }
};
struct Stats {
  size_t allocated_bytes;   // live bytes handed out (by size class)
  size_t cached_bytes;      // free bytes held in the cache
  size_t peak_allocated_bytes;
};
Stats stats();
void reset_peak_stats();
// Told of every block allocate() hands out (bytes > 0) and deallocate() takes back (bytes < 0),
// in bytes of its size class as Stats counts them, on the calling thread: the profiler's memory
// view. One observer at a time; nullptr removes it.
using MemoryObserver = void (*)(const void* ptr, int64_t bytes);
void set_memory_observer(MemoryObserver observer);
// Where a thread's tensor storage comes from instead of this allocator while one is installed:
// a graph's private pool (ember::graphs) during capture and replay. Only new StorageImpls ask
// it (scratch memory of kernels stays here). `release` is set to what the storage calls with
// the pointer when it dies.
class StorageSource {
 public:
  virtual void* allocate(size_t nbytes, std::function<void(void*)>& release) = 0;

 protected:
  ~StorageSource() = default;
};
// Installs `s` for this thread (nullptr: none); returns the one installed before.
StorageSource* set_storage_source(StorageSource* s);
}  // namespace cpu_allocator

class StorageImpl : public RefCounted {
 public:
  // Allocates nbytes from the CPU allocator (or from the thread's StorageSource, see above).
  explicit StorageImpl(size_t nbytes);
  // Wraps memory owned elsewhere (from_blob); deleter may be empty.
  StorageImpl(void* data, size_t nbytes, std::function<void(void*)> deleter);
  ~StorageImpl();
  static void* operator new(size_t n) { return cpu_allocator::allocate_object(n); }
  static void operator delete(void* p, size_t n) { cpu_allocator::deallocate_object(p, n); }

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  // The version counter shared by every view of this storage; in-place ops bump it.
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  // Storage made in inference mode (by inference tensors) keeps no version: it is never saved for
  // backward, and an in-place op on it skips the atomic increment, as PyTorch's inference tensors.
  void bump_version() {
    if (!inference_) version_.fetch_add(1, std::memory_order_relaxed);
  }
  // A storage an op has just made and filled starts counting at 0 (PyTorch counts the in-place
  // writes after a tensor is made, not the fills and copies that made it). Only for storage no
  // one else has seen yet.
  void reset_version_of_new_storage() { version_.store(0, std::memory_order_relaxed); }
  void mark_inference() { inference_ = true; }
  // Whether every write changes version(): not for storage made in inference mode, nor for memory
  // owned elsewhere (from_blob), which its owner may write behind Ember's back.
  bool version_tracks_writes() const { return owns_ && !inference_; }
  // Whether the memory came from Ember's allocator (not from_blob): what c10 calls resizable.
  bool owns_memory() const { return owns_; }
  // Unique in the process, unlike data(): the caching allocator hands a freed block to the next
  // storage of its size. With version() it tells that data seen before is still the same. Drawn on
  // first use, so that making a storage (every op's result) costs no shared atomic.
  uint64_t id() const {
    const uint64_t id = id_.load(std::memory_order_acquire);
    return id != 0 ? id : assign_id();
  }

 private:
  uint64_t assign_id() const;

  void* data_;
  size_t nbytes_;
  std::function<void(void*)> deleter_;  // empty: memory came from cpu_allocator
  bool owns_ = true;
  bool inference_ = false;
  std::atomic<uint32_t> version_{0};
  mutable std::atomic<uint64_t> id_{0};  // 0: not drawn yet
};

// A storage's memory as libtorch's c10::DataPtr shows it: the pointer and its device.
class DataPtr {
 public:
  explicit DataPtr(void* data) : data_(data) {}
  void* get() const { return data_; }
  Device device() const { return Device(kCPU); }
  explicit operator bool() const { return data_ != nullptr; }
  friend bool operator==(const DataPtr& a, const DataPtr& b) { return a.data_ == b.data_; }

 private:
  void* data_;
};

// What Tensor::storage() returns, as libtorch's c10::Storage: a handle on the memory that a
// tensor and all its views share.
class Storage {
 public:
  Storage() = default;
  explicit Storage(IntrusivePtr<StorageImpl> impl) : impl_(std::move(impl)) {}
  void* data() const { return impl_ ? impl_->data() : nullptr; }
  template <class T>
  T* data() const {
    return static_cast<T*>(data());
  }
  DataPtr data_ptr() const { return DataPtr(data()); }
  size_t nbytes() const { return impl_ ? impl_->nbytes() : 0; }
  Device device() const { return Device(kCPU); }
  size_t use_count() const { return static_cast<size_t>(impl_.use_count()); }
  bool unique() const { return use_count() == 1; }
  bool resizable() const { return impl_ && impl_->owns_memory(); }
  // The same storage, or another one over the same memory (c10's definition).
  bool is_alias_of(const Storage& other) const {
    return impl_ == other.impl_ || (nbytes() > 0 && data() == other.data());
  }
  StorageImpl* unsafeGetStorageImpl() const { return impl_.get(); }
  // Implicit as c10's, so `std::cout << t.storage()` prints 1 there and here.
  operator bool() const { return static_cast<bool>(impl_); }  // NOLINT

 private:
  IntrusivePtr<StorageImpl> impl_;
};

}  // namespace ember
