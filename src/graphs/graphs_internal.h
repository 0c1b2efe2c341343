// ember::graphs internals: the pool, the recorded steps and the capture (graph.cpp), the lowering
// of op calls to direct kernel calls (lower.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dispatch/dispatch.h"
#include "ember/graphs.h"

namespace ember::graphs {

// ---- the pool ---------------------------------------------------------------------------------

// A block of the pool. While a capture runs, a block freed by its tensor serves a later
// allocation of its size class in the same capture (so the capture's timeline is the reuse plan:
// each replay writes and reads the blocks in the order the capture did). A block still live when
// its capture ends stays reserved for the pool's life.
struct Block {
  void* ptr = nullptr;
  size_t capacity = 0;       // bytes (a size class)
  uint64_t capture = 0;      // the capture that allocated it last
  bool live = false;         // a storage of the capture owns it
  bool written = false;      // an op or kernel of the capture wrote it (else its contents came from the host)
  size_t requested = 0;      // bytes of its current storage
  int64_t born = -1, died = -1;  // step indices of its current allocation (for the reuse report)
  IntrusivePtr<StorageImpl> shadow;  // the recorded calls' view of its current allocation
};

class MemoryPool : public std::enable_shared_from_this<MemoryPool> {
 public:
  MemoryPool() = default;
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  // A block for nbytes in capture `capture` (a freed block of the class, or a new one).
  Block* take(size_t nbytes, uint64_t capture, bool* reused);
  // A storage of the pool died (any thread, any time).
  void release(void* p);
  // The live block at p, if any (the caller holds the lock).
  Block* find(const void* p);
  // The capture using the pool now (0: none); only its blocks are freed for reuse.
  void set_capture(uint64_t id);
  size_t bytes() const;
  size_t blocks() const;
  std::mutex& mutex() { return mutex_; }

 private:
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Block>> blocks_;
  std::unordered_map<const void*, Block*> by_ptr_;
  std::multimap<size_t, Block*> free_;  // reusable blocks by capacity
  uint64_t capture_ = 0;
  size_t bytes_ = 0;
};
size_t size_class(size_t nbytes);

// ---- steps ------------------------------------------------------------------------------------

// One allocation a recorded op makes when it runs (its outputs and temporaries), in order.
struct Alloc {
  void* ptr;
  size_t nbytes;
};

struct Step {
  enum class Kind : uint8_t { Call, Kernel, Skip };
  Kind kind = Kind::Call;
  const char* name = "";
  // Call: the op's run on the kept arguments, the memory it is handed, the layer bits it ran
  // under (autocast, inference) and the autocast dtype.
  std::unique_ptr<dispatch::CapturedCall> call;
  std::vector<Alloc> allocs;
  uint32_t mask = 0;
  ScalarType autocast_dtype = ScalarType::Undefined;
  std::vector<Tensor> results;  // aliases of its results (what lowering reads)
  // Kernel: a direct call; the storages whose version each replay bumps.
  std::function<void()> kernel;
  std::vector<IntrusivePtr<StorageImpl>> bumps;
  bool lowered = false;  // a Call turned into a Kernel (lower.cpp)
};

// Turns an op call into a direct kernel call when the op and its arguments are of a form known to
// compute exactly what the op's run computes; returns false to keep the call.
bool lower(Step& step);

// A tensor made before the capture (a parameter, an input, optimizer state) that the graph uses:
// a replay checks it still is what the capture saw.
struct StaticInput {
  Tensor real;
  const StorageImpl* storage;
  const void* data;
  DimVector sizes, strides;
  int64_t offset;
  ScalarType dtype;
  bool held_elsewhere = false;  // at capture end: someone besides the graph holds it
};

}  // namespace ember::graphs
