// Bool-valued kernels (comparisons, logical ops, float predicates) and where. Plain loops: the
// compiler vectorizes the contiguous ones, and Half/BFloat16 compare as float.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/cpu/cast.h"
#include "kernels/cpu/complex_kernels.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/pointwise.h"
#include "kernels/cpu/pointwise_loops.h"

namespace ember::kernels {
namespace {

// Copies m elements of `size` bytes, src read every `stride` bytes (0: one value repeated).
void gather(char* dst, const char* src, int64_t stride, int64_t m, size_t size) {
  auto typed = [&](auto t) {
    using W = decltype(t);
    W* d = reinterpret_cast<W*>(dst);
    for (int64_t i = 0; i < m; ++i) std::memcpy(d + i, src + i * stride, sizeof(W));
  };
  switch (size) {
    case 1: return typed(uint8_t());
    case 2: return typed(uint16_t());
    case 4: return typed(uint32_t());
    case 8: return typed(uint64_t());
    default:
      for (int64_t i = 0; i < m; ++i) std::memcpy(dst + i * size, src + i * stride, size);
  }
}
void scatter(char* dst, int64_t stride, const char* src, int64_t m, size_t size) {
  for (int64_t i = 0; i < m; ++i) std::memcpy(dst + i * stride, src + i * size, size);
}
// Copies an operand whose rows are adjacent in memory (a transposed one) into nr rows of m
// elements: row r of dst = src[r * size + i * stride], i < m. Words of 2, 4 and 8 bytes in the
// copy's register-block transposes (where(mask, x.t(), y.t()), float32, 1 thread: 32 x 32
// 1.1-1.8 -> 0.7 us, 256 x 256 51-65 -> 24-27 us); the others a column at a time, whose rows'
// elements share a cache line.
void gather_tile(char* dst, const char* src, int64_t stride, int64_t m, int64_t nr, size_t size) {
  if (size == 2 || size == 4 || size == 8) {
    const auto es = static_cast<int64_t>(size);
    char* data[2] = {dst, const_cast<char*>(src)};
    const int64_t strides[2] = {es, stride}, outer[2] = {m * es, es};
    return transposed_copy(es, data, strides, m, nr, outer);
  }
  if (size == 1) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t r = 0; r < nr; ++r) dst[r * m + i] = src[i * stride + r];
    return;
  }
  for (int64_t r = 0; r < nr; ++r) gather(dst + r * m * size, src + r * size, stride, m, size);
}

// out[i] (bool) = f(in_0[i], ...) with inputs of storage type T read as compute_t<T>.
template <class T, size_t K, class F, size_t... I>
void predicate_loop(const F& f, char** data, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer,
                    std::index_sequence<I...>) {
  using C = compute_t<T>;
  const size_t size[K + 1] = {sizeof(bool), ((void)I, sizeof(T))...};
  contiguous_chunks(data, s, n, rows, outer, size, K + 1, [](const void* fn, char** p, int64_t m) {
    const F& g = *static_cast<const F*>(fn);
    bool* out = reinterpret_cast<bool*>(p[0]);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      // widened a chunk at a time by the vectorized cast: converting element by element made
      // float16 comparisons 3.5x slower than libtorch's
      alignas(64) float wide[K][kChunkElements];
      for (int64_t i0 = 0; i0 < m; i0 += kChunkElements) {
        const int64_t c = std::min(kChunkElements, m - i0);
        (widen_to_float(CppTypeToScalarType<T>::value, wide[I], p[I + 1] + i0 * int64_t{sizeof(T)}, c), ...);
        for (int64_t i = 0; i < c; ++i) out[i0 + i] = g(wide[I][i]...);
      }
    } else {
      const T* in[K] = {reinterpret_cast<const T*>(p[I + 1])...};
      for (int64_t i = 0; i < m; ++i) out[i] = g(static_cast<C>(in[I][i])...);
    }
  }, &f);
}

template <class T, size_t K, class F>
void run_predicate(TensorIterator& iter, const F& f) {
  iter.for_each([&f](char** data, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer) {
    predicate_loop<T, K>(f, data, s, n, rows, outer, std::make_index_sequence<K>{});
  });
}

template <class T>
void predicate_typed(TensorIterator& iter, PredicateOp op) {
  using C = compute_t<T>;
  auto bin = [&](auto f) { run_predicate<T, 2>(iter, f); };
  auto un = [&](auto f) { run_predicate<T, 1>(iter, f); };
  switch (op) {
    case PredicateOp::Eq: return bin([](C a, C b) { return a == b; });
    case PredicateOp::Ne: return bin([](C a, C b) { return a != b; });
    case PredicateOp::Lt: return bin([](C a, C b) { return a < b; });
    case PredicateOp::Le: return bin([](C a, C b) { return a <= b; });
    case PredicateOp::Gt: return bin([](C a, C b) { return a > b; });
    case PredicateOp::Ge: return bin([](C a, C b) { return a >= b; });
    case PredicateOp::LogicalAnd: return bin([](C a, C b) { return (a != C(0)) & (b != C(0)); });  // no branch
    case PredicateOp::LogicalOr: return bin([](C a, C b) { return (a != C(0)) | (b != C(0)); });
    case PredicateOp::LogicalXor: return bin([](C a, C b) { return (a != C(0)) != (b != C(0)); });
    case PredicateOp::LogicalNot: return un([](C a) { return a == C(0); });
    case PredicateOp::IsNan:
      if constexpr (is_float_like_v<T>) return un([](C a) { return std::isnan(a); });
      return un([](C) { return false; });
    case PredicateOp::IsInf:
      if constexpr (is_float_like_v<T>) return un([](C a) { return std::isinf(a); });
      return un([](C) { return false; });
    case PredicateOp::IsFinite:
      if constexpr (is_float_like_v<T>) return un([](C a) { return std::isfinite(a); });
      return un([](C) { return true; });
  }
}

template <class T>
void where_typed(TensorIterator& iter) {
  iter.for_each([](char** data, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer) {
    const size_t size[4] = {sizeof(T), sizeof(bool), sizeof(T), sizeof(T)};
    contiguous_chunks(data, s, n, rows, outer, size, 4, [](const void*, char** p, int64_t m) {
      T* out = reinterpret_cast<T*>(p[0]);
      const bool* c = reinterpret_cast<const bool*>(p[1]);
      const T* a = reinterpret_cast<const T*>(p[2]);
      const T* b = reinterpret_cast<const T*>(p[3]);
      if constexpr (std::is_unsigned_v<T>) {  // a select by mask, which the compiler vectorizes
        const uint8_t* cb = reinterpret_cast<const uint8_t*>(c);  // a bool's byte is 0 or 1
        for (int64_t i = 0; i < m; ++i) {
          const T mask = T(0) - static_cast<T>(cb[i]);
          out[i] = static_cast<T>((a[i] & mask) | (b[i] & ~mask));
        }
      } else {
        for (int64_t i = 0; i < m; ++i) out[i] = c[i] ? a[i] : b[i];
      }
    }, nullptr);
  });
}

}  // namespace

void contiguous_chunks(char** data, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer,
                       const size_t* size, size_t nops, ChunkBody body, const void* ctx) {
  constexpr size_t kMaxOps = 4;
  alignas(64) char buf[kMaxOps][kChunkElements * 16];
  bool direct[kMaxOps];
  char* row[kMaxOps];
  bool all_direct = true;
  for (size_t k = 0; k < nops; ++k) {
    direct[k] = s[k] == static_cast<int64_t>(size[k]), row[k] = data[k];
    all_direct &= direct[k];
  }
  if (all_direct) {  // whole rows: a call per 256 bytes made logical_not of 4M bools 1.5x libtorch
    // Short rows beside a broadcast one (a [1, n] operand, outer stride 0), the others' rows
    // adjacent: rows taken together, up to kChunkElements elements a call, the broadcast row
    // repeated in a buffer (int64 floor division of 32 x 32 by a [1, 32] row: a call per row of
    // 32 cost 0.6 us of 1.9).
    const int64_t group = n > 0 ? kChunkElements / n : 0;
    bool merge = rows > 1 && group >= 2, broadcast_row = false;
    for (size_t k = 0; k < nops && merge; ++k) {
      if (k > 0 && outer[k] == 0) {
        broadcast_row = true;
      } else {
        merge = outer[k] == n * static_cast<int64_t>(size[k]);
      }
    }
    if (merge && broadcast_row) {
      for (size_t k = 0; k < nops; ++k) {
        if (outer[k] != 0) continue;
        const size_t bytes = static_cast<size_t>(n) * size[k];
        for (int64_t g = 0; g < group; ++g) std::memcpy(buf[k] + g * static_cast<int64_t>(bytes), row[k], bytes);
      }
      for (int64_t r = 0; r < rows; r += group) {
        char* p[kMaxOps];
        for (size_t k = 0; k < nops; ++k) p[k] = outer[k] == 0 ? buf[k] : row[k] + r * outer[k];
        body(ctx, p, std::min(group, rows - r) * n);
      }
      return;
    }
    for (int64_t r = 0;;) {
      body(ctx, row, n);
      if (++r == rows) break;
      for (size_t k = 0; k < nops; ++k) row[k] += outer[k];
    }
    return;
  }
  // An input whose rows are adjacent in memory (a transposed one beside contiguous operands:
  // where(mask, x.t(), y.t())) read a row at a time touches a new cache line per element, and
  // the next rows find those lines again only while they stay cached (at a power-of-two stride
  // they fall into few sets and do not: where of 256 x 256 int64 ran 2.4x slower than libtorch).
  // Such inputs are gathered a tile of rows at a time instead, a column's cache line per read.
  size_t across_size = 0, buffered_size = 1;
  for (size_t k = 1; k < nops; ++k) {
    if (direct[k]) continue;
    buffered_size = std::max(buffered_size, size[k]);
    if (rows > 1 && s[k] != 0 && outer[k] == static_cast<int64_t>(size[k]))
      across_size = across_size ? std::min(across_size, size[k]) : size[k];
  }
  if (across_size) {
    buffered_size = std::max(buffered_size, size[0]);
    const int64_t tile_rows = std::min<int64_t>(16, 64 / static_cast<int64_t>(across_size));
    const int64_t tile_cols = kChunkElements * 16 / (tile_rows * static_cast<int64_t>(buffered_size));
    // a scalar input (stride 0 both ways: masked_fill's value) copied out once for every tile
    bool fixed[kMaxOps] = {};
    // rows whole in a tile, the direct operands' rows adjacent (the output among them) and no
    // scalar input: a tile is one call of its rows together (where(mask, x.t(), y.t()) of 32 x 32
    // int64: 4 calls of 256 elements, not 32 of 32)
    bool whole_tiles = n <= tile_cols && direct[0];
    for (size_t k = 1; k < nops; ++k) {
      fixed[k] = !direct[k] && s[k] == 0 && outer[k] == 0;
      if (fixed[k]) gather(buf[k], row[k], 0, std::min(tile_cols, n), size[k]);
      whole_tiles &= !fixed[k];
    }
    for (size_t k = 0; k < nops; ++k) whole_tiles &= !direct[k] || outer[k] == n * static_cast<int64_t>(size[k]);
    for (int64_t r0 = 0; r0 < rows; r0 += tile_rows) {
      const int64_t nr = std::min(tile_rows, rows - r0);
      for (int64_t i0 = 0; i0 < n; i0 += tile_cols) {
        const int64_t m = std::min(tile_cols, n - i0);
        for (size_t k = 1; k < nops; ++k) {
          if (direct[k] || fixed[k]) continue;
          const char* src = row[k] + i0 * s[k];
          if (s[k] != 0 && outer[k] == static_cast<int64_t>(size[k])) {
            gather_tile(buf[k], src, s[k], m, nr, size[k]);
          } else {
            for (int64_t r = 0; r < nr; ++r) gather(buf[k] + r * m * size[k], src + r * outer[k], s[k], m, size[k]);
          }
        }
        if (whole_tiles) {
          char* p[kMaxOps];
          for (size_t k = 0; k < nops; ++k) p[k] = direct[k] ? row[k] : buf[k];
          body(ctx, p, nr * n);
          continue;
        }
        for (int64_t r = 0; r < nr; ++r) {
          char* p[kMaxOps];
          for (size_t k = 0; k < nops; ++k) {
            p[k] = direct[k] ? row[k] + r * outer[k] + i0 * s[k]
                   : fixed[k] ? buf[k]
                              : buf[k] + r * m * static_cast<int64_t>(size[k]);
          }
          body(ctx, p, m);
          if (!direct[0]) scatter(row[0] + r * outer[0] + i0 * s[0], s[0], p[0], m, size[0]);
        }
      }
      for (size_t k = 0; k < nops; ++k) row[k] += nr * outer[k];
    }
    return;
  }
  for (int64_t r = 0;;) {
    for (size_t k = 1; k < nops; ++k)  // a broadcast input: one chunk of copies serves the whole row
      if (s[k] == 0 && (r == 0 || outer[k] != 0)) gather(buf[k], row[k], 0, std::min(kChunkElements, n), size[k]);
    char* p[kMaxOps];
    for (int64_t i0 = 0; i0 < n; i0 += kChunkElements) {
      const int64_t m = std::min(kChunkElements, n - i0);
      for (size_t k = 0; k < nops; ++k) {
        if (direct[k]) {
          p[k] = row[k] + i0 * s[k];
        } else {
          p[k] = buf[k];
          if (k > 0 && s[k] != 0) gather(buf[k], row[k] + i0 * s[k], s[k], m, size[k]);
        }
      }
      body(ctx, p, m);
      if (!direct[0]) scatter(row[0] + i0 * s[0], s[0], buf[0], m, size[0]);
    }
    if (++r == rows) break;
    for (size_t k = 0; k < nops; ++k) row[k] += outer[k];
  }
}

void predicate_kernel(TensorIterator& iter, PredicateOp op) {
  if (is_complex_type(iter.dtype(1))) return complex_predicate_kernel(iter, op);
  // bool inputs as their bytes (0 or 1, ordered as false < true): GCC vectorizes the loops on
  // uint8_t, not on bool (logical_not of 4M bools 10x slower)
  if (iter.dtype(1) == kBool) return predicate_typed<uint8_t>(iter, op);
  visit_dtype(iter.dtype(1), [&](auto t) { predicate_typed<decltype(t)>(iter, op); });
}

void where_kernel(TensorIterator& iter) {
  switch (element_size(iter.dtype(0))) {
    case 1: return where_typed<uint8_t>(iter);
    case 2: return where_typed<uint16_t>(iter);
    case 4: return where_typed<uint32_t>(iter);
    case 8: return where_typed<uint64_t>(iter);
    default: return where_typed<complex<double>>(iter);
  }
}

}  // namespace ember::kernels
