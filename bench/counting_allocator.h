// libtorch's CPU allocator wrapped to count bytes, for the cases comparing peak memory with
// Ember's allocator statistics (cpu_allocator::stats()): both sides then count the bytes their
// allocators hand out, not pages the system happens to keep.
#pragma once
#include <c10/core/CPUAllocator.h>

#include <atomic>

namespace bench {

// Counts libtorch's CPU allocations while installed (libtorch keeps no CPU statistics of its own).
class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}
  c10::DataPtr allocate(size_t n) const override {
    auto* b = new Block{inner_->allocate(n), n, this};
    const size_t now = live_.fetch_add(n) + n;
    size_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
    return {b->memory.get(), b, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  size_t live() const { return live_.load(); }
  size_t peak() const { return peak_.load(); }
  void reset_peak() { peak_ = live_.load(); }

 private:
  struct Block {
    c10::DataPtr memory;  // from the allocator wrapped, freed with the block
    size_t n;
    const CountingAllocator* owner;
  };
  static void release(void* ctx) {
    auto* b = static_cast<Block*>(ctx);
    b->owner->live_.fetch_sub(b->n);
    delete b;
  }
  c10::Allocator* inner_;
  mutable std::atomic<size_t> live_{0}, peak_{0};
};

}  // namespace bench
