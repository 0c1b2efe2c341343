// Multi-tensor updates run over slices of a parameter list: each optimizer makes several passes
// (multi-tensor ops) over its tensors, and a slice of about 64K elements per tensor list keeps
// a slice's parameter, gradient and state in the core's L2 cache from one pass to the next,
// rather than streaming the whole list from memory once per pass.
#pragma once
#include <cstdint>
#include <vector>

#include "ember/tensor.h"

namespace ember::optim::detail {

constexpr int64_t kSliceElements = 65536;

// f(begin, end) over consecutive index ranges of `params`, each of at most kSliceElements
// elements (or a single larger tensor).
template <class F>
void for_each_slice(const std::vector<Tensor>& params, const F& f) {
  const size_t n = params.size();
  for (size_t begin = 0; begin < n;) {
    size_t end = begin;
    int64_t elements = 0;
    while (end < n && (end == begin || elements + params[end].numel() <= kSliceElements))
      elements += params[end++].numel();
    f(begin, end);
    begin = end;
  }
}

// v[begin, end) as its own vector.
template <class T>
std::vector<T> slice(const std::vector<T>& v, size_t begin, size_t end) {
  return std::vector<T>(v.begin() + static_cast<std::ptrdiff_t>(begin), v.begin() + static_cast<std::ptrdiff_t>(end));
}

}  // namespace ember::optim::detail
