// The caching CPU allocator. Blocks are 64-byte aligned (from 2 MiB on, 2 MiB aligned on huge
// pages: see kHugePage) and grouped in size classes (four per power of two above 4 KiB, multiples
// of 64 below), so a freed block serves any later request of its class. Small blocks are cached
// per thread without a lock; larger ones in a shared cache. Freed blocks stay cached up to a cap;
// above it they go back to the system.
#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/allocator.h"
#include "core/parallel.h"
#include "ember/storage.h"

namespace ember::cpu_allocator {
namespace {

constexpr size_t kAlignment = 64;
// Blocks of 2 MiB and more start on a 2 MiB boundary and ask for transparent huge pages (Linux's
// THP in its "madvise" or "always" mode): a pass over them takes one TLB miss per 2 MiB instead
// of one per 4 KiB page. On the AMD EPYC bench machine: sum over 64 MiB 15-30 % faster, add and
// exp over 64 MiB 10-20 %.
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kSmallLimit = 4096;                       // blocks up to this size get a thread cache
constexpr size_t kSmallClasses = kSmallLimit / kAlignment;  // 64-byte steps
constexpr size_t kThreadCachePerClass = 64;
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCaching = false;  // let AddressSanitizer see every use after free
#else
constexpr bool kCaching = true;
#endif
constexpr size_t kMaxCachedBytes = size_t{2} << 30;  // 2 GiB of free blocks at most

#if !defined(NDEBUG) || defined(__SANITIZE_ADDRESS__)
constexpr bool kFillByDefault = true;
#else
constexpr bool kFillByDefault = false;
#endif
bool initial_fill() {
  const char* env = std::getenv("EMBER_FILL_UNINITIALIZED_MEMORY");
  if (env && *env) return std::strcmp(env, "0") != 0;
  return kFillByDefault;
}
std::atomic<bool> g_fill{initial_fill()};
[[maybe_unused]] const bool g_cpu_capability = detail::cpu_capability_applied();

size_t size_class(size_t n) {
  if (n <= kSmallLimit) return (n + kAlignment - 1) & ~(kAlignment - 1);
  // four classes per power of two: waste stays under 25 %
  size_t p = size_t{1} << (63 - __builtin_clzll(n - 1));  // largest power of two < n
  size_t step = p / 4;
  return (n + step - 1) / step * step;
}

// Byte counts. Small blocks are counted per thread and folded into the global figures once a
// thread's balance moves by kFlushBytes, so a small op pays no atomic instruction; the global
// figures are exact for large blocks and within kFlushBytes per thread for small ones.
constexpr int64_t kFlushBytes = 256 * 1024;
std::atomic<int64_t> g_allocated{0}, g_peak{0}, g_cached{0};

void add_allocated(int64_t delta) {
  const int64_t now = g_allocated.fetch_add(delta, std::memory_order_relaxed) + delta;
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

// Large blocks (and small ones a thread cache has no room for) live here.
struct GlobalCache {
  std::mutex mutex;
  std::unordered_map<size_t, std::vector<void*>> free_blocks;
};
GlobalCache& global_cache() {
  static GlobalCache* c = new GlobalCache();  // never destroyed: tensors may outlive static destructors
  return *c;
}

void* pop_global(size_t cls) {
  GlobalCache& c = global_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.free_blocks.find(cls);
  if (it == c.free_blocks.end() || it->second.empty()) return nullptr;
  void* p = it->second.back();
  it->second.pop_back();
  g_cached.fetch_sub(cls, std::memory_order_relaxed);
  return p;
}

void push_global(void* p, size_t cls) {
  if (kCaching && static_cast<size_t>(g_cached.load(std::memory_order_relaxed)) + cls <= kMaxCachedBytes) {
    GlobalCache& c = global_cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.free_blocks[cls].push_back(p);
    g_cached.fetch_add(cls, std::memory_order_relaxed);
    return;
  }
  std::free(p);
}

// Small blocks: a per-thread stack per class, no lock on the hot path of small ops. The cache is
// plain zero-initialized data, so reaching it is one thread-pointer-relative access with no
// initialization guard; a separate thread_local with a destructor (armed the first time the thread
// keeps a block) hands the blocks to the shared cache when the thread ends.
[[gnu::noinline, gnu::cold]] void arm_thread_cache();

struct ThreadCache {
  void* blocks[kSmallClasses][kThreadCachePerClass];
  uint32_t count[kSmallClasses];
  int64_t allocated_delta;  // small-block bytes not yet added to g_allocated
  int64_t cached_bytes;     // bytes held in this cache
  bool armed;               // the thread's ThreadCacheOwner is registered
  bool dead;                // the thread's destructors ran (static tensors may die later)
  void track(int64_t delta) {
    if (!armed) arm_thread_cache();  // so the thread's balance is folded in when it ends
    allocated_delta += delta;
    if (allocated_delta > kFlushBytes || allocated_delta < -kFlushBytes) flush();
  }
  void flush() {
    add_allocated(allocated_delta);
    allocated_delta = 0;
  }
  void* pop(size_t cls) {
    const size_t k = cls / kAlignment - 1;
    if (count[k] == 0) return nullptr;
    cached_bytes -= static_cast<int64_t>(cls);
    return blocks[k][--count[k]];
  }
  bool push(void* p, size_t cls);
};
constinit thread_local ThreadCache t_cache{};

struct ThreadCacheOwner {
  bool armed = false;
  ~ThreadCacheOwner() {
    t_cache.flush();
    for (size_t k = 0; k < kSmallClasses; ++k) {
      for (uint32_t i = 0; i < t_cache.count[k]; ++i) push_global(t_cache.blocks[k][i], (k + 1) * kAlignment);
      t_cache.count[k] = 0;
    }
    t_cache.cached_bytes = 0;
    t_cache.dead = true;
  }
};
thread_local ThreadCacheOwner t_owner;

void arm_thread_cache() {
  t_owner.armed = true;  // the first use constructs it and registers its destructor
  t_cache.armed = true;
}

bool ThreadCache::push(void* p, size_t cls) {
  const size_t k = cls / kAlignment - 1;
  if (count[k] == kThreadCachePerClass) return false;
  if (!armed) arm_thread_cache();
  blocks[k][count[k]++] = p;
  cached_bytes += static_cast<int64_t>(cls);
  return true;
}

// The block itself, from a cache or the system.
void* allocate_block(size_t nbytes) {
  const size_t cls = size_class(nbytes == 0 ? 1 : nbytes);
  if (cls <= kSmallLimit && !t_cache.dead) {
    t_cache.track(static_cast<int64_t>(cls));
    if (kCaching) {
      if (void* p = t_cache.pop(cls)) return p;
    }
  } else {
    add_allocated(static_cast<int64_t>(cls));
  }
  if (kCaching) {
    if (void* p = pop_global(cls)) return p;
  }
  // posix_memalign: aligned_alloc wants the size to be a multiple of the alignment, which a
  // huge block's size class is not (AddressSanitizer enforces it)
  const size_t align = cls >= kHugePage ? kHugePage : kAlignment;
  void* p = nullptr;
  if (posix_memalign(&p, align, cls) != 0) {
    empty_cache();
    if (posix_memalign(&p, align, cls) != 0) p = nullptr;
  }
  if (!p) {
    add_allocated(-static_cast<int64_t>(cls));
    throw std::bad_alloc();
  }
  if (align == kHugePage) (void)madvise(p, cls & ~(kHugePage - 1), MADV_HUGEPAGE);  // advice: may be refused
  return p;
}

std::atomic<MemoryObserver> g_memory_observer{nullptr};

}  // namespace

size_t block_bytes(size_t nbytes) { return size_class(nbytes == 0 ? 1 : nbytes); }

void set_memory_observer(MemoryObserver observer) { g_memory_observer.store(observer, std::memory_order_release); }

void* allocate(size_t nbytes) {
  detail::check_cpu_supported();
  void* p = allocate_block(nbytes);
  if (MemoryObserver f = g_memory_observer.load(std::memory_order_acquire))
    f(p, static_cast<int64_t>(size_class(nbytes == 0 ? 1 : nbytes)));
  if (g_fill.load(std::memory_order_relaxed)) std::memset(p, 0xFF, nbytes);
  return p;
}

void set_fill_uninitialized_memory(bool on) { g_fill.store(on, std::memory_order_relaxed); }
bool fill_uninitialized_memory() { return g_fill.load(std::memory_order_relaxed); }

void deallocate(void* p, size_t nbytes) {
  if (!p) return;
  const size_t cls = size_class(nbytes == 0 ? 1 : nbytes);
  if (MemoryObserver f = g_memory_observer.load(std::memory_order_acquire)) f(p, -static_cast<int64_t>(cls));
  if (cls <= kSmallLimit && !t_cache.dead) {
    t_cache.track(-static_cast<int64_t>(cls));
    if (kCaching && t_cache.push(p, cls)) return;
  } else {
    add_allocated(-static_cast<int64_t>(cls));
  }
  if (!kCaching) {
    std::free(p);
    return;
  }
  push_global(p, cls);
}

// Objects come from the same thread cache as small blocks but are not counted as tensor bytes.
void* allocate_object(size_t nbytes) {
  const size_t cls = size_class(nbytes);
  if (kCaching && cls <= kSmallLimit && !t_cache.dead) {
    if (void* p = t_cache.pop(cls)) return p;
  }
  void* p = std::aligned_alloc(kAlignment, cls);
  if (!p) throw std::bad_alloc();
  return p;
}

void deallocate_object(void* p, size_t nbytes) {
  const size_t cls = size_class(nbytes);
  if (kCaching && cls <= kSmallLimit && !t_cache.dead && t_cache.push(p, cls)) return;
  std::free(p);
}

void empty_cache() {
  // This thread's small blocks first, then every cached block of the process.
  for (size_t k = 0; k < kSmallClasses; ++k) {
    for (uint32_t i = 0; i < t_cache.count[k]; ++i) std::free(t_cache.blocks[k][i]);
    t_cache.count[k] = 0;
  }
  t_cache.cached_bytes = 0;
  GlobalCache& c = global_cache();
  std::unordered_map<size_t, std::vector<void*>> blocks;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    blocks.swap(c.free_blocks);
  }
  for (auto& [cls, v] : blocks) {
    for (void* p : v) std::free(p);
    g_cached.fetch_sub(cls * v.size(), std::memory_order_relaxed);
  }
}

// Figures of the whole process, with this thread's pending small-block balance folded in; the
// cached figure counts the shared cache and this thread's cache.
bool caching_enabled() { return kCaching; }

Stats stats() {
  if (!t_cache.dead) t_cache.flush();
  const int64_t local_cached = t_cache.dead ? 0 : t_cache.cached_bytes;
  return Stats{static_cast<size_t>(g_allocated.load(std::memory_order_relaxed)),
               static_cast<size_t>(g_cached.load(std::memory_order_relaxed) + local_cached),
               static_cast<size_t>(g_peak.load(std::memory_order_relaxed))};
}

void reset_peak_stats() {
  if (!t_cache.dead) t_cache.flush();
  g_peak.store(g_allocated.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

}  // namespace ember::cpu_allocator

namespace ember {

uint64_t StorageImpl::assign_id() const {
  static std::atomic<uint64_t> next{1};
  uint64_t expected = 0;
  const uint64_t drawn = next.fetch_add(1, std::memory_order_relaxed);
  // Two threads may ask at once: the first to store wins, the other's number goes unused.
  return id_.compare_exchange_strong(expected, drawn, std::memory_order_acq_rel) ? drawn : expected;
}

namespace {
constinit thread_local cpu_allocator::StorageSource* t_storage_source = nullptr;
}  // namespace

cpu_allocator::StorageSource* cpu_allocator::set_storage_source(StorageSource* s) {
  return std::exchange(t_storage_source, s);
}

StorageImpl::StorageImpl(size_t nbytes) : nbytes_(nbytes) {
  if (cpu_allocator::StorageSource* s = t_storage_source) [[unlikely]] {
    data_ = s->allocate(nbytes, deleter_);  // a graph's pool: the storage owns the block through deleter_
  } else {
    data_ = cpu_allocator::allocate(nbytes);
  }
}

StorageImpl::StorageImpl(void* data, size_t nbytes, std::function<void(void*)> deleter)
    : data_(data), nbytes_(nbytes), deleter_(std::move(deleter)), owns_(false) {}

StorageImpl::~StorageImpl() {
  if (deleter_) {
    deleter_(data_);  // memory owned elsewhere (from_blob), or a graph pool's block
  } else if (owns_) {
    cpu_allocator::deallocate(data_, nbytes_);
  }
}

}  // namespace ember
