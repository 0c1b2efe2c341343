// Intrusive reference counting: one allocation per object, the count lives inside it.
#pragma once
#include <atomic>
#include <cstdint>
#include <utility>

namespace ember {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  int32_t use_count() const { return refcount_.load(std::memory_order_relaxed); }

 protected:
  ~RefCounted() = default;

 private:
  template <class T> friend class IntrusivePtr;
  mutable std::atomic<int32_t> refcount_{0};
};

template <class T>
class IntrusivePtr {
 public:
  IntrusivePtr() = default;
  IntrusivePtr(std::nullptr_t) {}  // NOLINT
  // Takes a new reference to p.
  explicit IntrusivePtr(T* p) : p_(p) { retain(); }
  IntrusivePtr(const IntrusivePtr& o) : p_(o.p_) { retain(); }
  IntrusivePtr(IntrusivePtr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  IntrusivePtr& operator=(const IntrusivePtr& o) {
    IntrusivePtr(o).swap(*this);
    return *this;
  }
  IntrusivePtr& operator=(IntrusivePtr&& o) noexcept {
    IntrusivePtr(std::move(o)).swap(*this);
    return *this;
  }
  ~IntrusivePtr() { release(); }

  template <class... Args>
  static IntrusivePtr make(Args&&... args) {
    IntrusivePtr r;
    r.p_ = new T(std::forward<Args>(args)...);
    r.p_->refcount_.store(1, std::memory_order_relaxed);  // nobody else sees it yet: no locked add
    return r;
  }

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  void reset() { IntrusivePtr().swap(*this); }
  void swap(IntrusivePtr& o) noexcept { std::swap(p_, o.p_); }
  int32_t use_count() const { return p_ ? p_->use_count() : 0; }
  bool operator==(const IntrusivePtr& o) const { return p_ == o.p_; }
  bool operator!=(const IntrusivePtr& o) const { return p_ != o.p_; }

 private:
  void retain() {
    if (p_) p_->refcount_.fetch_add(1, std::memory_order_relaxed);
  }
  void release() {
    // The sole owner frees without a locked instruction: no other thread holds a reference to
    // take a new one from (there are no weak references). Acquire pairs with the release of the
    // other owners' decrements, as the fetch_sub's does.
    if (p_ && (p_->refcount_.load(std::memory_order_acquire) == 1 ||
               p_->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1))
      delete p_;
    p_ = nullptr;
  }
  T* p_ = nullptr;
};

}  // namespace ember
