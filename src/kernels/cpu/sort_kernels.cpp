// Sorting and selection along one dim: each line along `dim` is copied into a buffer of
// compute-type values with an index array, the indices are ordered under a NaN-largest order (sort
// by Highway's vectorized quicksort on keys that carry the position, topk and kthvalue by the
// standard algorithms), and the chosen indices and their original elements are written out. Lines
// are split across threads.
#include <hwy/contrib/sort/vqsort.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>

#include "core/parallel.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/reduce_geometry.h"
#include "kernels/cpu/sort.h"

namespace ember::kernels {
namespace {

// x < y with NaN above every number (NaNs are equal to each other).
template <class C>
bool nan_last_less(C x, C y) {
  if constexpr (std::is_floating_point_v<C>) {
    return x < y || (std::isnan(y) && !std::isnan(x));
  } else {
    return x < y;
  }
}

// Runs select(values, indices, n) on every line along `dim`; it writes the positions of the
// `count` chosen values first in indices (n of them long), and those values and positions are
// written to `values` and `indices`. With group_lines > 1, neighbouring lines go to
// select_group(first_line, line_stride, element_stride, lines, indices) up to group_lines at a
// time first; it writes each line's count positions after the last's, or returns false for the
// lines to go one by one to select.
struct NoGroups {
  bool operator()(const char*, int64_t, int64_t, int64_t, int64_t*) const { return false; }
};
template <class T, class Select, class SelectGroup = NoGroups>
void for_each_line(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim, int64_t count,
                   const Select& select, int64_t group_lines = 0, const SelectGroup& select_group = {}) {
  using C = compute_t<T>;
  constexpr bool kWidened = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;  // to float32
  const ReduceGeometry g(in, in.dim() > 0 ? uint64_t{1} << dim : 0, values, indices);
  const int64_t n = g.reduce_size(), no = g.num_outputs();
  if (no == 0 || count == 0) return;
  const int64_t in_step = g.nreduced() > 0 ? g.reduced(0).stride[0] : 0;
  const int64_t v_step = in.dim() > 0 ? values.stride(dim) * int64_t{sizeof(T)} : 0;
  const int64_t i_step = in.dim() > 0 ? indices.stride(dim) * int64_t{sizeof(int64_t)} : 0;
  const char* src = static_cast<const char*>(in.data_ptr());
  char* vdst = static_cast<char*>(values.data_ptr());
  char* idst = static_cast<char*>(indices.data_ptr());
  // Lines whose neighbours lie next to each other (a transposed input) are copied kLines at a
  // time, so that each cache line is read once (one line at a time read a cache line per element
  // and came back to it for each neighbour: topk of 8 along dim 1 of a transposed 2048 x 2048
  // int32 tensor took 1.14x libtorch's time).
  // (Lines of up to 64K elements: the tile's buffer stays within a few MB per thread.)
  constexpr int64_t kLines = 16;
  const bool tiles = in_step != int64_t{sizeof(T)} && g.nkept() > 0 && g.kept(0).stride[0] == int64_t{sizeof(T)} &&
                     n <= (int64_t{1} << 16);
  const int64_t group = group_lines > 1 ? group_lines : tiles ? kLines : 1;
  parallel_for(0, no, std::max<int64_t>(1, kGrainSize / n), [&](int64_t b, int64_t e) {
    // not std::vector: C may be bool
    std::unique_ptr<C[]> vals(new C[static_cast<size_t>(n * group)]);
    std::unique_ptr<int64_t[]> idx(new int64_t[static_cast<size_t>(std::max(n, group_lines * count))]);
    for_each_group(g, b, e, group, [&](const int64_t* off, int64_t lines, const LoopDim& col) {
      const auto write = [&](int64_t c, const int64_t* chosen) {
        const char* line = src + off[0] + c * col.stride[0];
        char* vo = vdst + off[1] + c * col.stride[1];
        char* io = idst + off[2] + c * col.stride[2];
        // typed, the steps in registers: through char pointers every store could alias the
        // captured steps and `chosen` (sort of 32 x 32 int64 spent 28% of its time here)
        T* v = reinterpret_cast<T*>(vo);
        const T* x = reinterpret_cast<const T*>(line);
        const int64_t vs = v_step / int64_t{sizeof(T)}, xs = in_step / int64_t{sizeof(T)}, is = i_step / 8;
        if (vs == 1 && xs == 1 && is == 1) {  // dense lines: the positions copied whole
          for (int64_t j = 0; j < count; ++j) v[j] = x[chosen[j]];
          std::memcpy(io, chosen, static_cast<size_t>(count) * 8);
          return;
        }
        int64_t* ix = reinterpret_cast<int64_t*>(io);
        for (int64_t j = 0; j < count; ++j) {
          const int64_t at = chosen[j];
          v[j * vs] = x[at * xs];
          ix[j * is] = at;
        }
      };
      if (group_lines > 1 && select_group(src + off[0], col.stride[0], in_step, lines, idx.get())) {
        for (int64_t c = 0; c < lines; ++c) write(c, idx.get() + c * count);
        return;
      }
      const bool tiled = tiles && lines > 1;
      if (tiled) {
        for (int64_t r = 0; r < n; ++r) {
          const T* p = reinterpret_cast<const T*>(src + off[0] + r * in_step);
          for (int64_t c = 0; c < lines; ++c) vals[c * n + r] = static_cast<C>(p[c]);
        }
      }
      for (int64_t c = 0; c < lines; ++c) {
        const char* line = src + off[0] + c * col.stride[0];
        const C* x = vals.get() + (tiled ? c * n : 0);  // a tile's line was copied above
        if (!tiled) {
          if (std::is_same_v<T, C> && in_step == int64_t{sizeof(T)}) {
            x = reinterpret_cast<const C*>(line);  // read in place
          } else if (kWidened && in_step == int64_t{sizeof(T)}) {
            widen_to_float(CppTypeToScalarType<T>::value, reinterpret_cast<float*>(vals.get()), line, n);
          } else {
            for (int64_t r = 0; r < n; ++r) vals[r] = static_cast<C>(*reinterpret_cast<const T*>(line + r * in_step));
          }
        }
        select(x, idx.get(), n);
        write(c, idx.get());
      }
    });
  });
}

constexpr int64_t kShortLine = 128;

// An unsigned integer in the order of nan_last_less: NaN above every number, -0 equal to 0.
template <class C>
auto order_key(C x) {
  if constexpr (std::is_floating_point_v<C>) {
    using U = std::conditional_t<sizeof(C) == 4, uint32_t, uint64_t>;
    constexpr U top = U{1} << (8 * sizeof(U) - 1);
    if (std::isnan(x)) return ~U{0};
    const C y = x + C(0);  // -0 becomes 0
    U b;
    std::memcpy(&b, &y, sizeof b);
    return (b & top) ? U(~b) : U(b | top);
  } else if constexpr (sizeof(C) == 8) {
    return static_cast<uint64_t>(x) ^ (uint64_t{1} << 63);
  } else {
    return static_cast<uint32_t>(static_cast<int64_t>(x) - std::numeric_limits<C>::min());
  }
}

// Sorts keys[0, n): Highway's vectorized quicksort, or for short lines std::sort (a vqsort call
// costs about 0.4 us before it sorts: 32 keys took 0.49 us against std::sort's 0.08, 256 keys 1.0
// against 1.3, 16384 keys 96 us against 606).
// With count < n only the first count keys are ordered (topk).
template <class K>
void sort_keys(K* keys, int64_t n, int64_t count) {
  if (count < n) return std::partial_sort(keys, keys + count, keys + n);
  if (n <= kShortLine) return std::sort(keys, keys + n);
  thread_local const hwy::Sorter sorter;  // its scratch is not shared between threads
  sorter(keys, static_cast<size_t>(n), hwy::SortAscending());
}

// Orders idx (0..n-1 on entry) as a stable sort of x, its first `count` at least: each key holds a
// value's order key above its position, so one integer sort orders by value, then by position.
// Where the line's order keys span few enough values (every 32-bit type; 64-bit values within
// 2^(64 - log2 n) of each other) they go, less the line's least, with the position in one 64-bit
// word written over idx; others in 128 bits, whose comparisons made sort and topk of short int64
// lines 1.2-1.7x slower than libtorch.
// (Short lines of the usual types: rank_sort, 1.5-2x faster on lines of 32.)
template <class C>
void stable_sort_line(const C* x, int64_t* idx, int64_t n, bool descending, int64_t count) {
  if constexpr (std::is_same_v<C, float> || std::is_same_v<C, double> || std::is_same_v<C, int32_t> ||
                std::is_same_v<C, int64_t>) {
    if (n <= kRankSortMax) return rank_sort(x, n, descending, idx);
  }
  uint64_t* keys = reinterpret_cast<uint64_t*>(idx);  // signed and unsigned forms may alias
  uint64_t lo = 0, hi = 0xffffffffu;  // 32-bit keys: their whole range
  if constexpr (sizeof(order_key(C{})) == 8) {
    lo = ~uint64_t{0}, hi = 0;
    for (int64_t r = 0; r < n; ++r) {
      lo = std::min<uint64_t>(lo, order_key(x[r]));
      hi = std::max<uint64_t>(hi, order_key(x[r]));
    }
  }
  const int pos_bits = std::bit_width(static_cast<uint64_t>(n - 1));
  if (pos_bits == 0 || (hi - lo) >> (64 - pos_bits) == 0) {
    for (int64_t r = 0; r < n; ++r) {
      const uint64_t k = order_key(x[r]);
      keys[r] = ((descending ? hi - k : k - lo) << pos_bits) | static_cast<uint64_t>(r);
    }
    sort_keys(keys, n, count);
    const uint64_t pos_mask = (uint64_t{1} << pos_bits) - 1;
    for (int64_t r = 0; r < count; ++r) idx[r] = static_cast<int64_t>(keys[r] & pos_mask);
    return;
  }
  hwy::uint128_t local[kShortLine];  // short lines: no allocation per line
  std::unique_ptr<hwy::uint128_t[]> heap(n > kShortLine ? new hwy::uint128_t[static_cast<size_t>(n)] : nullptr);
  hwy::uint128_t* wide = heap ? heap.get() : local;
  for (int64_t r = 0; r < n; ++r) {
    const uint64_t k = order_key(x[r]);
    wide[r] = {static_cast<uint64_t>(r), descending ? ~k : k};
  }
  sort_keys(wide, n, count);
  for (int64_t r = 0; r < count; ++r) idx[r] = static_cast<int64_t>(wide[r].lo);
}

// A few (count <= kFewMax) of a long or a short line, in the order stable_sort_line gives them:
// one pass keeps the best count so far in order, an element entering only when it beats the last
// of them (a later element equal to it comes after it; in random data about count * ln(n / count)
// elements enter). Building a key for every element and a partial sort of them all made topk of
// 8 along rows of 2048 1.8x (float32) to 2.9x (int64) libtorch's time, and along rows of 32
// 1.4-1.5x this pass's (Zen 5: 32 rows 3.5-3.8 us against 2.3-2.4).
constexpr int64_t kFewMax = 16;
template <class C>
void select_few(const C* x, int64_t* idx, int64_t n, bool descending, int64_t count) {
  using U = decltype(order_key(C{}));
  struct Cand {
    U key;
    int64_t pos;
  };
  Cand best[kFewMax];
  const size_t want = static_cast<size_t>(count);
  size_t m = 0;
  for (int64_t r = 0; r < n; ++r) {
    const U k = descending ? U(~order_key(x[r])) : order_key(x[r]);
    if (HWY_LIKELY(m == want && k >= best[want - 1].key)) continue;
    size_t j = m < want ? m++ : want - 1;  // (full: the last one drops out)
    for (; j > 0 && k < best[j - 1].key; --j) best[j] = best[j - 1];
    best[j] = {k, r};
  }
  for (size_t j = 0; j < want; ++j) idx[j] = best[j].pos;
}

// A few (count <= kSelectLanesMax) of each of 2 to `width` (select_lanes_width()) short lines at
// once, in the order of select_few. The lanes read rows of words, element r of every line:
// float32, int32 and int64 lines laid out that way already are read in place, others are
// transposed into them (as float32 for the 16-bit floats, as keys for the small integers); false
// for float64 (its keys seldom fit 32 bits) and int64 lines spanning 2^32 or more. (A vector
// gather of a row from lines read in place made topk 8 of 32 x 32 float32 2.5x slower on Zen 5.)
template <class T>
bool select_in_lanes(const char* first, int64_t line_stride, int64_t step, int64_t lines, int64_t width, int64_t n,
                     int64_t count, bool descending, int64_t* idx) {
  using C = compute_t<T>;
  constexpr bool kWidened = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
  constexpr int64_t es = sizeof(T) == 8 ? 8 : 4;  // the rows' word size
  if (std::is_same_v<T, double> || lines < 2) return false;  // (one line: about as fast alone)
  alignas(64) uint64_t buffer[kShortLine * kSelectLanesWidthMax / (8 / es)];
  alignas(64) uint64_t best[kSelectLanesMax * kSelectLanesWidthMax];
  char* words = reinterpret_cast<char*>(buffer);
  const void* rows = words;
  int64_t row_stride = width * es;
  LaneKeys kind = std::is_same_v<T, float> || kWidened ? LaneKeys::kFloat
                  : std::is_same_v<T, int32_t>         ? LaneKeys::kInt
                  : std::is_same_v<T, int64_t>         ? LaneKeys::kInt64
                                                       : LaneKeys::kKey;
  if (lines < width) std::memset(words, 0, static_cast<size_t>(n * width * es));  // idle lanes
  // the lines' words (element r of line c at src + c * ls + r * st) into the rows
  const auto to_rows = [&](const char* src, int64_t ls, int64_t st) {
    if (st == es) {
      char* data[2] = {words, const_cast<char*>(src)};
      const int64_t strides[2] = {width * es, es}, outer[2] = {es, ls};
      return transposed_copy(es, data, strides, n, lines, outer);
    }
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < lines; ++c) std::memcpy(words + (r * width + c) * es, src + c * ls + r * st, es);
    }
  };
  const auto elem = [&](int64_t c, int64_t r) {
    return *reinterpret_cast<const T*>(first + c * line_stride + r * step);
  };
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
    if (line_stride == es && lines == width) {
      rows = first, row_stride = step;
    } else {
      to_rows(first, line_stride, step);
    }
  } else if constexpr (kWidened) {
    alignas(64) float wide[kShortLine * kSelectLanesWidthMax];
    for (int64_t c = 0; c < lines; ++c) {
      if (step == int64_t{sizeof(T)}) {
        widen_to_float(CppTypeToScalarType<T>::value, wide + c * n, first + c * line_stride, n);
      } else {
        for (int64_t r = 0; r < n; ++r) wide[c * n + r] = static_cast<float>(elem(c, r));
      }
    }
    to_rows(reinterpret_cast<const char*>(wide), n * 4, 4);
  } else if constexpr (sizeof(order_key(C{})) == 4) {
    uint32_t* keys = reinterpret_cast<uint32_t*>(words);
    for (int64_t c = 0; c < lines; ++c) {
      for (int64_t r = 0; r < n; ++r) keys[r * width + c] = order_key(static_cast<C>(elem(c, r)));
    }
  }
  if (!select_lanes(rows, row_stride, n, count, kind, descending, best)) return false;
  for (int64_t c = 0; c < lines; ++c) {
    for (int64_t j = 0; j < count; ++j) idx[c * count + j] = static_cast<int64_t>(best[j * width + c] & 0xffffffffu);
  }
  return true;
}

}  // namespace

void sort_kernel(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim, bool descending) {
  visit_dtype(in.dtype(), [&](auto v) {
    using T = decltype(v);
    const int64_t n = in.dim() > 0 ? in.size(dim) : 1;
    for_each_line<T>(values, indices, in, dim, n, [descending](const auto* x, int64_t* idx, int64_t len) {
      stable_sort_line(x, idx, len, descending, len);
    });
  });
}

void topk_kernel(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t k, int64_t dim, bool largest) {
  const int64_t n = in.dim() > 0 ? in.size(dim) : 1;
  const int64_t width = select_lanes_width();
  const int64_t group_lines = k <= kSelectLanesMax && n <= kShortLine ? width : 0;
  visit_dtype(in.dtype(), [&](auto v) {
    using T = decltype(v);
    // on the sort's keys, ties broken by index so the result does not depend on the algorithm
    // (comparing values through the indices, with NaN checks, made topk of 8 among 32 int64s
    // 1.7x slower than libtorch)
    for_each_line<T>(
        values, indices, in, dim, k,
        [k, largest](const auto* x, int64_t* idx, int64_t len) {
          if (k <= kFewMax && (len >= 16 * k || len <= kShortLine)) return select_few(x, idx, len, largest, k);
          stable_sort_line(x, idx, len, largest, k);
        },
        group_lines,
        [&](const char* first, int64_t line_stride, int64_t step, int64_t lines, int64_t* idx) {
          return select_in_lanes<T>(first, line_stride, step, lines, width, n, k, largest, idx);
        });
  });
}

void kthvalue_kernel(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t k, int64_t dim) {
  visit_dtype(in.dtype(), [&](auto v) {
    using T = decltype(v);
    for_each_line<T>(values, indices, in, dim, 1, [k](const auto* x, int64_t* idx, int64_t len) {
      std::iota(idx, idx + len, int64_t{0});
      auto before = [x](int64_t a, int64_t b) {
        return nan_last_less(x[a], x[b]) || (!nan_last_less(x[b], x[a]) && a < b);
      };
      std::nth_element(idx, idx + (k - 1), idx + len, before);
      idx[0] = idx[k - 1];
    });
  });
}

}  // namespace ember::kernels
