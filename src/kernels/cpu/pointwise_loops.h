// Element-at-a-time loops shared by the pointwise kernels: integer and bool dtypes, and float
// functions that have no vector form. `f(x0, ..., xK-1)` is called on compute values (C) and its
// result stored as the output's type (T), in a plain indexed loop the compiler can vectorize.
#pragma once
#include <cstring>
#include <utility>

#include "core/tensor_iterator.h"
#include "kernels/cpu/cast.h"

namespace ember::kernels {

// Runs body(ctx, p, m) on `rows` rows of n elements (row r of operand k at data[k] + r * outer[k],
// outer read only when rows > 1, as TensorIterator's row loops), p[k] pointing at m contiguous
// elements of operand k (0 the output; k < nops <= 4, size[k] <= 16 bytes each): whole rows when
// every operand is contiguous, else chunks of m <= kChunkElements, a strided or broadcast input
// gathered into a buffer first, a strided output written through one. So each kernel has one contiguous loop, which the compiler vectorizes,
// whatever the layout; the driver (pointwise_bool.cpp) is compiled once and takes the rows itself
// (a call per row cost a fifth of a broadcast int32 mul of 256 x 256).
constexpr int64_t kChunkElements = 256;
using ChunkBody = void (*)(const void* ctx, char** p, int64_t m);
void contiguous_chunks(char** data, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer,
                       const size_t* size, size_t nops, ChunkBody body, const void* ctx);

template <class T, class G, size_t... I>
inline void chunk_map_impl(const G& g, char** data, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer,
                           std::index_sequence<I...>) {
  constexpr ChunkBody body = [](const void* fn, char** p, int64_t m) {
    (*static_cast<const G*>(fn))(m, reinterpret_cast<T*>(p[0]), reinterpret_cast<const T*>(p[I + 1])...);
  };
  // contiguous operands too, so each functor has one loop: strided, transposed and broadcast
  // operands (a Scalar is a broadcast 0-dim one) went element by element through memcpy, 2-8x
  // slower than libtorch's loops
  const size_t size[sizeof...(I) + 1] = {sizeof(T), ((void)I, sizeof(T))...};
  contiguous_chunks(data, s, n, rows, outer, size, sizeof...(I) + 1, body, &g);
}

// Runs g(m, out, in_0, ..., in_{K-1}) over the whole iterator, each call on m contiguous elements
// of every operand (for kernels that look at a chunk before choosing how to compute it).
template <class T, size_t K, class G>
inline void chunk_for_each(TensorIterator& iter, const G& g) {
  iter.for_each([&g](char** data, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer) {
    chunk_map_impl<T>(g, data, s, n, rows, outer, std::make_index_sequence<K>{});
  });
}

// Runs f with K inputs over the whole iterator: out[i] = f(in_0[i], ..., in_{K-1}[i]).
template <class T, size_t K, class F>
inline void scalar_for_each(TensorIterator& iter, const F& f) {
  chunk_for_each<T, K>(iter, [&f](int64_t m, T* out, const auto*... in) {
    for (int64_t i = 0; i < m; ++i) out[i] = static_cast<T>(f(static_cast<compute_t<T>>(in[i])...));
  });
}

}  // namespace ember::kernels
