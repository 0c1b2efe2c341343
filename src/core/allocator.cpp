// The caching CPU allocator. Blocks are 64-byte aligned and grouped in size classes (four per
// power of two above 4 KiB, multiples of 64 below), so a freed block serves any later request
// of its class. Freed blocks stay cached up to a cap; above it they go back to the system.
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "ember/storage.h"

namespace ember::cpu_allocator {
namespace {

constexpr size_t kAlignment = 64;
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kMaxCachedBytes = 0;  // let AddressSanitizer see every use after free
#else
constexpr size_t kMaxCachedBytes = size_t{2} << 30;  // 2 GiB of free blocks at most
#endif

size_t size_class(size_t n) {
  if (n <= 4096) return (n + kAlignment - 1) & ~(kAlignment - 1);
  // four classes per power of two: waste stays under 25 %
  size_t p = size_t{1} << (63 - __builtin_clzll(n - 1));  // largest power of two < n
  size_t step = p / 4;
  return (n + step - 1) / step * step;
}

struct Cache {
  std::mutex mutex;
  std::unordered_map<size_t, std::vector<void*>> free_blocks;
  size_t cached = 0, allocated = 0, peak = 0;
};

Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: tensors may outlive static destructors
  return *c;
}

}  // namespace

void* allocate(size_t nbytes) {
  const size_t cls = size_class(nbytes == 0 ? 1 : nbytes);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.allocated += cls;
    if (c.allocated > c.peak) c.peak = c.allocated;
    auto it = c.free_blocks.find(cls);
    if (it != c.free_blocks.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      c.cached -= cls;
      return p;
    }
  }
  void* p = std::aligned_alloc(kAlignment, cls);
  if (!p) {
    empty_cache();
    p = std::aligned_alloc(kAlignment, cls);
  }
  if (!p) {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.allocated -= cls;
    throw std::bad_alloc();
  }
  return p;
}

void deallocate(void* p, size_t nbytes) {
  if (!p) return;
  const size_t cls = size_class(nbytes == 0 ? 1 : nbytes);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.allocated -= cls;
    if (c.cached + cls <= kMaxCachedBytes) {
      c.free_blocks[cls].push_back(p);
      c.cached += cls;
      return;
    }
  }
  std::free(p);
}

void empty_cache() {
  Cache& c = cache();
  std::unordered_map<size_t, std::vector<void*>> blocks;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    blocks.swap(c.free_blocks);
    c.cached = 0;
  }
  for (auto& [cls, v] : blocks)
    for (void* p : v) std::free(p);
}

Stats stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return Stats{c.allocated, c.cached, c.peak};
}

void reset_peak_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.peak = c.allocated;
}

}  // namespace ember::cpu_allocator

namespace ember {

StorageImpl::StorageImpl(size_t nbytes) : data_(cpu_allocator::allocate(nbytes)), nbytes_(nbytes) {}

StorageImpl::StorageImpl(void* data, size_t nbytes, std::function<void(void*)> deleter)
    : data_(data), nbytes_(nbytes), deleter_(std::move(deleter)), owns_(false) {}

StorageImpl::~StorageImpl() {
  if (owns_) {
    cpu_allocator::deallocate(data_, nbytes_);
  } else if (deleter_) {
    deleter_(data_);
  }
}

}  // namespace ember
