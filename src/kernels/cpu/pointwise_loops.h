// Element-at-a-time loops shared by the pointwise kernels: integer and bool dtypes, and float
// functions that have no vector form. `f(x0, ..., xK-1)` is called on compute values (C) and its
// result stored as the output's type (T). Contiguous operands get a plain indexed loop the
// compiler can vectorize; anything else goes through memcpy so unaligned views stay defined.
#pragma once
#include <cstring>
#include <utility>

#include "core/tensor_iterator.h"
#include "kernels/cpu/cast.h"

namespace ember::kernels {

template <class T, class C, size_t K, class F, size_t... I>
inline void scalar_map_impl(const F& f, char** data, const int64_t* s, int64_t n, std::index_sequence<I...>) {
  constexpr int64_t es = sizeof(T);
  if (((s[0] == es) && ... && (s[I + 1] == es))) {
    T* out = reinterpret_cast<T*>(data[0]);
    const T* in[K] = {reinterpret_cast<const T*>(data[I + 1])...};
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(f(static_cast<C>(in[I][i])...));
    return;
  }
  auto load = [&](size_t k, int64_t i) {
    T v;
    std::memcpy(&v, data[k + 1] + i * s[k + 1], sizeof(T));
    return static_cast<C>(v);
  };
  for (int64_t i = 0; i < n; ++i) {
    const T r = static_cast<T>(f(load(I, i)...));
    std::memcpy(data[0] + i * s[0], &r, sizeof(T));
  }
}

// out[i] = f(in_0[i], ..., in_{K-1}[i]) over one inner-loop call of TensorIterator::for_each.
template <class T, class C, size_t K, class F>
inline void scalar_map(const F& f, char** data, const int64_t* s, int64_t n) {
  scalar_map_impl<T, C, K>(f, data, s, n, std::make_index_sequence<K>{});
}

// Runs f with K inputs over the whole iterator.
template <class T, size_t K, class F>
inline void scalar_for_each(TensorIterator& iter, const F& f) {
  iter.for_each([&f](char** data, const int64_t* s, int64_t n) { scalar_map<T, compute_t<T>, K>(f, data, s, n); });
}

}  // namespace ember::kernels
