// Calling oneDNN well: one engine, a stream per thread, Ember tensors described as oneDNN
// strided memory (no layout conversion at the boundary), and a per-thread cache of primitives
// keyed by everything that shapes them, so a repeated call creates nothing: it swaps the data
// pointers of the cached memory objects and executes.
#pragma once
#include <oneapi/dnnl/dnnl.hpp>

#include <functional>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/tensor.h"

namespace ember::onednn {

dnnl::engine& engine();
// This thread's stream, for a primitive about to run: oneDNN threads with the calling thread's
// OpenMP count, which this sets to Ember's (1 inside a parallel region) first.
dnnl::stream& stream();

// oneDNN's data type for a dtype, or nullopt (float64 and 16-bit integers have none).
std::optional<dnnl::memory::data_type> data_type(ScalarType t);
// The strided memory descriptor of a tensor (a 0-dim tensor is described as {1}).
dnnl::memory::desc desc_of(const Tensor& t);
dnnl::memory::desc desc_of(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype);

// Whether oneDNN implements a primitive on this CPU: `make` creates its primitive descriptor,
// which throws where there is no implementation (callers ask once, with a small problem).
template <class Make>
bool implements(const Make& make) {
  try {
    make();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

// What identifies a primitive: an op tag and integers (shapes, strides, dtypes, attributes).
class Key {
 public:
  explicit Key(const char* op) : op_(op) {}
  Key& add(int64_t v) {
    values_.push_back(v);
    return *this;
  }
  Key& add(IntArrayRef v) {
    values_.push_back(static_cast<int64_t>(v.size()));
    values_.insert(values_.end(), v.begin(), v.end());
    return *this;
  }
  Key& add(const Tensor& t) {  // shape, strides and dtype; an undefined tensor adds a marker
    if (!t.defined()) return add(-1);
    return add(t.sizes()).add(t.strides()).add(static_cast<int64_t>(t.scalar_type()));
  }
  bool operator==(const Key& o) const { return op_ == o.op_ && values_ == o.values_; }
  size_t hash() const;

 private:
  const char* op_;
  std::vector<int64_t> values_;
};

// A primitive ready to run, with one memory object per argument (DNNL_ARG_*).
struct Primitive {
  dnnl::primitive primitive;
  std::unordered_map<int, dnnl::memory> args;
  std::shared_ptr<void> extra;  // op-specific state kept with the primitive (e.g. a reordered weight)
  size_t scratchpad_bytes = 0;  // see use_scratchpad
  // For a primitive made with scratchpad_mode::user (see user_scratchpad()): each run takes its
  // scratch memory from Ember's caching allocator, so it is counted there and, when uninitialized
  // memory is filled with NaN, a kernel that reads scratch it never wrote shows it.
  void use_scratchpad(const dnnl::primitive_desc_base& pd);
  // Sets each argument's data pointer and runs on this thread's stream.
  void execute(std::initializer_list<std::pair<int, const void*>> handles);
};

// Steps `pd` past the implementations Ember must not run, or throws dnnl::error when none is
// left. oneDNN 2.6.3's AMX 1x1 convolutions ("jit_1x1:avx512_core_amx_int8" and "_bf16") write
// past the end of a channels-last output of 36 positions per image (a 2x24x6x6 uint8 output gets
// 288 bytes more), corrupting the heap; the implementations after them are correct there.
void skip_faulty(dnnl::primitive_desc& pd);

// Attributes with the scratchpad left to the caller (Primitive::use_scratchpad).
dnnl::primitive_attr user_scratchpad();

// The cached primitive for `key`, built by `make()` on first use on this thread.
Primitive& cached(const Key& key, const std::function<Primitive()>& make);
size_t cache_size();  // entries on this thread (for tests)

}  // namespace ember::onednn
