// A graph's private memory: blocks by size class, reused within a capture as tensors die (the
// capture's own order of allocations and frees is the plan each replay follows), reserved once
// their capture ends with a tensor still in them, and freed with the pool. A block free when its
// capture ends serves graphs captured later into the same pool (replayed after it, as PyTorch's
// shared pools: each graph's temporaries are written before they are read within its replay).
#include <sys/mman.h>

#include <cstdlib>
#include <new>

#include "graphs/graphs_internal.h"

namespace ember::graphs {

namespace {
constexpr size_t kAlignment = 64;
constexpr size_t kHugePage = size_t{2} << 20;  // as the caching allocator: big blocks on huge pages
}  // namespace

// The caching allocator's classes: 64-byte steps up to 4 KiB, then four per power of two.
size_t size_class(size_t n) {
  if (n == 0) n = 1;
  if (n <= 4096) return (n + kAlignment - 1) & ~(kAlignment - 1);
  const size_t p = size_t{1} << (63 - __builtin_clzll(n - 1));
  const size_t step = p / 4;
  return (n + step - 1) / step * step;
}

MemoryPool::~MemoryPool() {
  for (auto& b : blocks_) std::free(b->ptr);
}

Block* MemoryPool::take(size_t nbytes, uint64_t capture, bool* reused) {
  const size_t cls = size_class(nbytes);
  std::lock_guard<std::mutex> lock(mutex_);
  Block* b = nullptr;
  if (auto it = free_.find(cls); it != free_.end()) {
    b = it->second;
    free_.erase(it);
    *reused = true;
  } else {
    const size_t align = cls >= kHugePage ? kHugePage : kAlignment;
    void* p = nullptr;
    if (posix_memalign(&p, align, cls) != 0 || !p) throw std::bad_alloc();
    if (align == kHugePage) (void)madvise(p, cls & ~(kHugePage - 1), MADV_HUGEPAGE);
    auto owned = std::make_unique<Block>();
    b = owned.get();
    b->ptr = p;
    b->capacity = cls;
    blocks_.push_back(std::move(owned));
    by_ptr_[p] = b;
    bytes_ += cls;
    *reused = false;
  }
  b->capture = capture;
  b->live = true;
  b->written = false;
  b->requested = nbytes;
  b->shadow.reset();
  return b;
}

void MemoryPool::release(void* p) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_ptr_.find(p);
  if (it == by_ptr_.end()) return;
  Block* b = it->second;
  b->live = false;
  b->shadow.reset();
  // Reusable only by the rest of the capture that made it: a block of an ended capture is written
  // by its graph's replays.
  if (capture_ != 0 && b->capture == capture_) free_.emplace(b->capacity, b);
}

Block* MemoryPool::find(const void* p) {
  auto it = by_ptr_.find(p);
  return it == by_ptr_.end() ? nullptr : it->second;
}

void MemoryPool::set_capture(uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  capture_ = id;  // blocks free at a capture's end serve later captures sharing the pool
}

size_t MemoryPool::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}
size_t MemoryPool::blocks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return blocks_.size();
}

}  // namespace ember::graphs
