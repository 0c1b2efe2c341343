// Reductions along one dim that need positions (max/min with their index) and scans
// (cumsum/cumprod). Loops over ReduceGeometry: each output is a line along the dim. Lines are
// visited in groups of neighbours along the innermost kept dim; when that dim is the faster one
// in memory, a group walks the line positions in the outer loop and the neighbours in the inner
// loop, so memory is read in order whichever dim is reduced. max/min with indices run those two
// loops on SIMD vectors (Highway, chosen per CPU at run time) when the inner one is contiguous:
// lanes along a line (each lane keeps the first of its own best, and the lanes are merged by
// value, then lowest index) or lanes across neighbouring lines.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/reduce_index_kernels.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>

#include "core/parallel.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/hwy_util-inl.h"
#include "kernels/cpu/reduce.h"
#include "kernels/cpu/reduce_geometry.h"

#ifndef EMBER_REDUCE_INDEX_SCAN_ARGS_
#define EMBER_REDUCE_INDEX_SCAN_ARGS_
namespace ember::kernels::arg_scan_detail {
constexpr int64_t kGroup = 256;  // lines handled together

// One scan of ArgReduce: positions [rb, re) of n lines, writing each line's best value (in the
// compute type) and the position of its first occurrence.
struct ScanArgs {
  ScalarType dtype;
  bool is_max;
  bool neighbours;  // the n lines are contiguous neighbours (else each line is contiguous)
  const char* base;  // position 0 of line 0
  int64_t n;
  int64_t stride;  // bytes between lines (lines), or between positions (neighbours)
  int64_t rb, re;
  void* best;
  int64_t* idx;
};

// Whether value c replaces the best so far: strictly more extreme, or the first NaN.
template <class C>
bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(v);
  } else {
    return false;
  }
}
template <bool IsMax, class C>
bool replaces(C c, C best) {
  if (is_nan(best)) return false;
  if (is_nan(c)) return true;
  return IsMax ? c > best : c < best;
}
}  // namespace ember::kernels::arg_scan_detail
#endif

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace {

using arg_scan_detail::is_nan;
using arg_scan_detail::kGroup;
using arg_scan_detail::replaces;
using arg_scan_detail::ScanArgs;

// Lanes of v that replace those of best (as `replaces`), as a mask of d.
template <bool IsMax, class D, class V>
HWY_INLINE hn::Mask<D> replaces_v(D d, V v, V best) {
  const auto better = IsMax ? hn::Gt(v, best) : hn::Lt(v, best);
  if constexpr (hwy::IsFloat<hn::TFromD<D>>()) {
    return hn::Or(better, hn::AndNot(hn::IsNaN(best), hn::IsNaN(v)));
  } else {
    static_cast<void>(d);
    return better;
  }
}

// The first best of positions [rb, re) of a contiguous line p[0], p[1], ...
template <class T, bool IsMax>
void line_scan(const T* p, int64_t rb, int64_t re, compute_t<T>* best_out, int64_t* idx_out) {
  using C = compute_t<T>;
  const DC<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  using I = hn::TFromD<decltype(di)>;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  C best = static_cast<C>(p[rb]);
  int64_t idx = rb;
  int64_t r = rb + 1;
  if (re - rb >= 2 * N) {
    // two accumulators: the compare-select chain of one would bound the speed
    auto b0 = LoadAny(d, p + rb), b1 = LoadAny(d, p + rb + N);
    auto i0 = hn::Iota(di, static_cast<I>(rb)), i1 = hn::Iota(di, static_cast<I>(rb + N));
    auto pos = i1;
    const auto step = hn::Set(di, static_cast<I>(N));
    for (r = rb + 2 * N; r + 2 * N <= re; r += 2 * N) {
      const auto v0 = LoadAny(d, p + r), v1 = LoadAny(d, p + r + N);
      pos = hn::Add(pos, step);
      const auto m0 = replaces_v<IsMax>(d, v0, b0);
      b0 = hn::IfThenElse(m0, v0, b0);
      i0 = hn::IfThenElse(hn::RebindMask(di, m0), pos, i0);
      pos = hn::Add(pos, step);
      const auto m1 = replaces_v<IsMax>(d, v1, b1);
      b1 = hn::IfThenElse(m1, v1, b1);
      i1 = hn::IfThenElse(hn::RebindMask(di, m1), pos, i1);
    }
    // merge the accumulators: by value, then by the lower position (NaN equals NaN)
    auto same = [&](auto x, auto y) {
      if constexpr (hwy::IsFloat<C>()) {
        return hn::Or(hn::Eq(x, y), hn::And(hn::IsNaN(x), hn::IsNaN(y)));
      } else {
        return hn::Eq(x, y);
      }
    };
    const auto m = hn::Or(replaces_v<IsMax>(d, b1, b0),
                          hn::And(same(b1, b0), hn::RebindMask(d, hn::Lt(i1, i0))));
    b0 = hn::IfThenElse(m, b1, b0);
    i0 = hn::IfThenElse(hn::RebindMask(di, m), i1, i0);
    // across lanes: a NaN if any (the lowest position among them), else the extreme value
    auto target = IsMax ? hn::MaxOfLanes(d, b0) : hn::MinOfLanes(d, b0);
    auto hit = hn::Eq(b0, target);
    if constexpr (hwy::IsFloat<C>()) {
      const auto nan = hn::IsNaN(b0);
      if (!hn::AllFalse(d, nan)) {
        hit = nan;
        target = hn::Set(d, std::numeric_limits<C>::quiet_NaN());
      }
    }
    best = hn::GetLane(target);
    idx = hn::GetLane(hn::MinOfLanes(di, hn::IfThenElse(hn::RebindMask(di, hit), i0,
                                                          hn::Set(di, std::numeric_limits<I>::max()))));
  }
  for (; r < re; ++r) {
    const C v = static_cast<C>(p[r]);
    if (replaces<IsMax>(v, best)) {
      best = v;
      idx = r;
    }
  }
  *best_out = best;
  *idx_out = idx;
}

// The first best of positions [rb, re) of n (<= kGroup) lines that are contiguous neighbours:
// line i, position r at base + r * step + i * sizeof(T).
template <class T, bool IsMax>
void neighbour_scan(const char* base, int64_t n, int64_t step, int64_t rb, int64_t re, compute_t<T>* best_out,
                    int64_t* idx_out) {
  using C = compute_t<T>;
  const DC<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  using I = hn::TFromD<decltype(di)>;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  HWY_ALIGN C best[kGroup];
  HWY_ALIGN I idx[kGroup];
  const int64_t nv = n / N * N;
  {
    const T* row = reinterpret_cast<const T*>(base + rb * step);
    for (int64_t i = 0; i < nv; i += N) {
      hn::Store(LoadAny(d, row + i), d, best + i);
      hn::Store(hn::Set(di, static_cast<I>(rb)), di, idx + i);
    }
    for (int64_t i = nv; i < n; ++i) {
      best[i] = static_cast<C>(row[i]);
      idx[i] = static_cast<I>(rb);
    }
  }
  for (int64_t r = rb + 1; r < re; ++r) {
    const T* row = reinterpret_cast<const T*>(base + r * step);
    const auto pos = hn::Set(di, static_cast<I>(r));
    for (int64_t i = 0; i < nv; i += N) {
      const auto v = LoadAny(d, row + i);
      const auto b = hn::Load(d, best + i);
      const auto m = replaces_v<IsMax>(d, v, b);
      hn::Store(hn::IfThenElse(m, v, b), d, best + i);
      hn::Store(hn::IfThenElse(hn::RebindMask(di, m), pos, hn::Load(di, idx + i)), di, idx + i);
    }
    for (int64_t i = nv; i < n; ++i) {
      const C v = static_cast<C>(row[i]);
      if (replaces<IsMax>(v, best[i])) {
        best[i] = v;
        idx[i] = static_cast<I>(r);
      }
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    best_out[i] = best[i];
    idx_out[i] = idx[i];
  }
}

template <class T, bool IsMax>
void scan_typed(const ScanArgs& a) {
  using C = compute_t<T>;
  C* best = static_cast<C*>(a.best);
  if (a.neighbours) {
    neighbour_scan<T, IsMax>(a.base, a.n, a.stride, a.rb, a.re, best, a.idx);
  } else {
    for (int64_t i = 0; i < a.n; ++i) {
      line_scan<T, IsMax>(reinterpret_cast<const T*>(a.base + i * a.stride), a.rb, a.re, best + i, a.idx + i);
    }
  }
}

}  // namespace

// Runs the scan on vectors; false for a dtype without a vector form (or positions past int32's
// range for 32-bit lanes), which the caller then scans element by element.
bool arg_scan(const ScanArgs& a) {
  auto run = [&](auto t) {
    using T = decltype(t);
    if (sizeof(lane_t<T>) == 4 && a.re > std::numeric_limits<int32_t>::max()) return false;
    if (a.is_max) {
      scan_typed<T, true>(a);
    } else {
      scan_typed<T, false>(a);
    }
    return true;
  };
  switch (a.dtype) {
    case kFloat: return run(float{});
    case kDouble: return run(double{});
    case kHalf: return run(Half{});
    case kBFloat16: return run(BFloat16{});
    case kInt: return run(int32_t{});
    case kLong: return run(int64_t{});
    default: return false;
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(arg_scan);

namespace {

using arg_scan_detail::is_nan;
using arg_scan_detail::kGroup;
using arg_scan_detail::replaces;

template <class T>
T load(const char* p) {
  return *reinterpret_cast<const T*>(p);
}

template <class T, bool IsMax>
class ArgReduce {
  using C = compute_t<T>;

 public:
  ArgReduce(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim)
      : g_(in, in.dim() > 0 ? uint64_t{1} << dim : 0, values, indices),
        in_(static_cast<const char*>(in.data_ptr())),
        values_(values.defined() ? static_cast<char*>(values.data_ptr()) : nullptr),
        indices_(static_cast<char*>(indices.data_ptr())),
        step_(g_.nreduced() > 0 ? g_.reduced(0).stride[0] : 0),
        in_dtype_(in.dtype()) {}

  void run() const {
    const int64_t no = g_.num_outputs(), rs = g_.reduce_size();
    if (no == 0) return;
    const int nt = detail::region_threads();
    if (rs < kGrainSize || no >= 4 * nt || nt == 1 || in_parallel_region()) {
      parallel_for(0, no, std::max<int64_t>(1, kGrainSize / rs), [&](int64_t b, int64_t e) {
        C best[kGroup];
        int64_t idx[kGroup];
        for_each_group(g_, b, e, kGroup, [&](const int64_t* off, int64_t n, const LoopDim& col) {
          scan(off[0], n, col.stride[0], 0, rs, best, idx);
          for (int64_t i = 0; i < n; ++i) store(off[1] + i * col.stride[1], off[2] + i * col.stride[2], best[i], idx[i]);
        });
      });
      return;
    }
    // Few long lines: threads scan position ranges; later ranges win only when strictly better.
    std::unique_ptr<C[]> best(new C[static_cast<size_t>(nt * no)]);
    std::unique_ptr<int64_t[]> idx(new int64_t[static_cast<size_t>(nt * no)]);
    std::unique_ptr<bool[]> used(new bool[static_cast<size_t>(nt)]());
    parallel_for(0, rs, kGrainSize, [&](int64_t rb, int64_t re) {
      const int t = omp_get_thread_num();
      used[t] = true;
      int64_t o = 0;
      for_each_group(g_, 0, no, kGroup, [&](const int64_t* off, int64_t n, const LoopDim& col) {
        scan(off[0], n, col.stride[0], rb, re, best.get() + t * no + o, idx.get() + t * no + o);
        o += n;
      });
    });
    for (int t = 1; t < nt; ++t) {
      if (!used[t]) continue;
      for (int64_t o = 0; o < no; ++o) {
        if (replaces<IsMax>(best[t * no + o], best[o])) {
          best[o] = best[t * no + o];
          idx[o] = idx[t * no + o];
        }
      }
    }
    int64_t o = 0;
    for_each_group(g_, 0, no, kGroup, [&](const int64_t* off, int64_t n, const LoopDim& col) {
      for (int64_t i = 0; i < n; ++i, ++o) store(off[1] + i * col.stride[1], off[2] + i * col.stride[2], best[o], idx[o]);
    });
  }

 private:
  // Best value and index over positions [rb, re) (rb < re) of n neighbouring lines.
  void scan(int64_t in_off, int64_t n, int64_t col_stride, int64_t rb, int64_t re, C* best, int64_t* idx) const {
    const char* base = in_ + in_off;
    constexpr int64_t es = sizeof(T);
    const bool neighbours = n > 1 && col_stride < std::abs(step_);
    if ((neighbours && col_stride == es) || (!neighbours && step_ == es)) {
      const arg_scan_detail::ScanArgs a{in_dtype_, IsMax, neighbours, base, n, neighbours ? step_ : col_stride,
                                        rb, re, best, idx};
      if (HWY_DYNAMIC_DISPATCH(arg_scan)(a)) return;
    }
    for (int64_t i = 0; i < n; ++i) {
      best[i] = static_cast<C>(load<T>(base + i * col_stride + rb * step_));
      idx[i] = rb;
    }
    if (neighbours) {  // neighbours are closer in memory: they go inner
      for (int64_t r = rb + 1; r < re; ++r) {
        const char* row = base + r * step_;
        for (int64_t i = 0; i < n; ++i) {
          const C v = static_cast<C>(load<T>(row + i * col_stride));
          if (replaces<IsMax>(v, best[i])) {
            best[i] = v;
            idx[i] = r;
          }
        }
      }
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      const char* line = base + i * col_stride;
      for (int64_t r = rb + 1; r < re; ++r) {
        const C v = static_cast<C>(load<T>(line + r * step_));
        if (replaces<IsMax>(v, best[i])) {
          best[i] = v;
          idx[i] = r;
        }
      }
    }
  }

  void store(int64_t value_off, int64_t index_off, C best, int64_t idx) const {
    if (values_) *reinterpret_cast<T*>(values_ + value_off) = cast<T>(best);
    *reinterpret_cast<int64_t*>(indices_ + index_off) = idx;
  }

  const ReduceGeometry g_;
  const char* in_;
  char* values_;
  char* indices_;
  int64_t step_;  // bytes between positions of a line
  ScalarType in_dtype_;
};

// Accumulator of the scans: double for every float dtype (PyTorch's CPU scans use double for
// float; a running sum keeps cancelling, so the 16-bit floats get it too), int64 for int64.
template <class T>
using ScanAcc = std::conditional_t<is_float_like_v<T>, double, T>;

// A group of n lines of 16-bit floats (x, y: position 0 of line 0; is/os between positions, cs/ds
// between lines, in bytes), each side contiguous along its lines or across them: a tile of lines
// (whole lines where they are short, pieces of 128 positions of 16 lines where they are long, the
// running values carried from piece to piece) is widened to float32 into a buffer in line order
// (through a transpose of the 16-bit words where the neighbours lie side by side), scanned there
// four lines at a time and rounded back the same way. One conversion call for a tile instead of
// two per line, and no element converted alone (bfloat16 cumsum along the rows of 32 x 32: 1.2 ->
// 0.63 us; along dim 0 of its transpose 1.3-2.1 -> 0.67 us, of 256 x 256's 75 -> 36 us). The values
// are those of the scan element by element (a sum is rounded to float32 and then to T either way).
// False (nothing written) where a side is neither, or where the neighbours lie side by side on
// both sides (the plain loops vectorize that).
template <class A, class Op>
bool scan_staged(ScalarType dt, const char* x, char* y, int64_t n, int64_t rs, int64_t is, int64_t cs, int64_t os,
                 int64_t ds, A init, const Op& op) {
  constexpr int64_t es = 2, kStage = 2048;
  const auto along = [](int64_t step) { return step == es; };
  if (!(along(is) || cs == es) || !(along(os) || ds == es)) return false;
  if (cs == es && ds == es) return false;
  alignas(64) uint16_t words[kStage];
  alignas(64) float buf[kStage];
  A acc[kStage];
  const int64_t p = rs <= kStage / 4 ? rs : kStage / 16;  // positions of a line per tile
  const int64_t per_stage = kStage / p;
  for (int64_t i0 = 0; i0 < n; i0 += per_stage) {
    const int64_t m = std::min(per_stage, n - i0);
    std::fill(acc, acc + m, init);
    for (int64_t r0 = 0; r0 < rs; r0 += p) {
      const int64_t pm = std::min(p, rs - r0);
      const char* xs = x + i0 * cs + r0 * is;
      char* ys = y + i0 * ds + r0 * os;
      if (!along(is)) {  // words[i * pm + r] = line i's element r, from neighbours side by side
        char* data[2] = {reinterpret_cast<char*>(words), const_cast<char*>(xs)};
        const int64_t strides[2] = {es, is}, outer[2] = {pm * es, es};
        transposed_copy(es, data, strides, pm, m, outer);
        widen_to_float(dt, buf, words, m * pm);
      } else if (cs == pm * es) {
        widen_to_float(dt, buf, xs, m * pm);
      } else {
        for (int64_t i = 0; i < m; ++i) widen_to_float(dt, buf + i * pm, xs + i * cs, pm);
      }
      int64_t i = 0;
      for (; i + 4 <= m; i += 4) {  // four chains hide each other's latency
        A a[4] = {acc[i], acc[i + 1], acc[i + 2], acc[i + 3]};
        for (int64_t r = 0; r < pm; ++r) {
          for (int k = 0; k < 4; ++k) {
            float& v = buf[(i + k) * pm + r];
            a[k] = op(a[k], v);
            v = static_cast<float>(a[k]);
          }
        }
        for (int k = 0; k < 4; ++k) acc[i + k] = a[k];
      }
      for (; i < m; ++i) {
        A a = acc[i];
        for (int64_t r = 0; r < pm; ++r) {
          float& v = buf[i * pm + r];
          a = op(a, v);
          v = static_cast<float>(a);
        }
        acc[i] = a;
      }
      if (!along(os)) {
        narrow_from_float(dt, words, buf, m * pm);
        char* data[2] = {ys, reinterpret_cast<char*>(words)};
        const int64_t strides[2] = {os, es}, outer[2] = {es, pm * es};
        transposed_copy(es, data, strides, pm, m, outer);
      } else if (ds == pm * es) {
        narrow_from_float(dt, ys, buf, m * pm);
      } else {
        for (int64_t k = 0; k < m; ++k) narrow_from_float(dt, ys + k * ds, buf + k * pm, pm);
      }
    }
  }
  return true;
}

// A group of n integer lines whose neighbours lie side by side on one side, the other side
// contiguous along its lines (x, y: position 0 of line 0; is/os between positions, cs/ds between
// lines, in bytes): a stage of whole lines is scanned across the lines, neighbours side by side
// (integer additions vectorize across lines; along one line they are a serial chain), in a buffer
// in position order that is transposed in from, or out to, the side contiguous along its lines.
// int64 cumsum of a transposed 32 x 32 along dim 1: 0.70 -> 0.38-0.43 us, along dim 0: 0.50 ->
// 0.37-0.45 us. False (nothing written) otherwise: neighbours side by side on both sides (the
// plain loops vectorize that), on neither (two transposes cost what the serial chains do: 32 x 32
// along its rows 0.50 us either way), or lines too long for a stage of 8.
template <class T, class Op>
bool scan_across(const char* x, char* y, int64_t n, int64_t rs, int64_t is, int64_t cs, int64_t os, int64_t ds,
                 T init, const Op& op) {
  constexpr int64_t es = sizeof(T), kStage = 2048;
  const bool x_across = cs == es, y_across = ds == es;
  if (rs > kStage / 8 || x_across == y_across || !(x_across || is == es) || !(y_across || os == es)) return false;
  alignas(64) T stage[kStage];
  T acc[kStage / 8];
  const int64_t per_stage = std::min<int64_t>(kStage / rs, kStage / 8);
  for (int64_t i0 = 0; i0 < n; i0 += per_stage) {
    const int64_t m = std::min(per_stage, n - i0);
    const char* xs = x + i0 * cs;
    char* ys = y + i0 * ds;
    if (!x_across) {  // stage[r * m + i] = line i's element r
      char* data[2] = {reinterpret_cast<char*>(stage), const_cast<char*>(xs)};
      const int64_t strides[2] = {es, cs}, outer[2] = {m * es, es};
      transposed_copy(es, data, strides, m, rs, outer);
    }
    std::fill(acc, acc + m, init);
    for (int64_t r = 0; r < rs; ++r) {
      const T* xr = x_across ? reinterpret_cast<const T*>(xs + r * is) : stage + r * m;
      T* sr = y_across ? reinterpret_cast<T*>(ys + r * os) : stage + r * m;
      for (int64_t i = 0; i < m; ++i) {
        acc[i] = op(acc[i], xr[i]);
        sr[i] = acc[i];
      }
    }
    if (!y_across) {  // line i's element r = stage[r * m + i]
      char* data[2] = {ys, reinterpret_cast<char*>(stage)};
      const int64_t strides[2] = {ds, es}, outer[2] = {es, m * es};
      transposed_copy(es, data, strides, m, rs, outer);
    }
  }
  return true;
}

// log(e^a + e^x), as PyTorch's logcumsumexp takes it: NaN propagates, and two equal infinities
// (where e^a + e^x has no finite log-difference) give themselves.
template <class A>
A log_add_exp(A a, A x) {
  const A lo = std::isnan(x) ? x : std::min(a, x), hi = std::isnan(x) ? x : std::max(a, x);
  if (lo != hi || std::isfinite(lo)) return std::log1p(std::exp(lo - hi)) + hi;
  return a;
}

template <class T, ScanOp Op>
void cumulative_typed(const Tensor& out, const Tensor& in, int64_t dim) {
  using A = ScanAcc<T>;
  const ReduceGeometry g(in, in.dim() > 0 ? uint64_t{1} << dim : 0, out, Tensor());
  const int64_t no = g.num_outputs(), rs = g.reduce_size();
  if (no == 0 || rs == 0) return;
  const char* src = static_cast<const char*>(in.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  const int64_t in_step = g.nreduced() > 0 ? g.reduced(0).stride[0] : 0;
  const int64_t out_step = in.dim() > 0 ? out.stride(dim) * int64_t{sizeof(T)} : 0;
  const A init = Op == ScanOp::Prod ? A(1) : Op == ScanOp::Sum ? A(0) : -std::numeric_limits<A>::infinity();
  // (x: an element, or its float32 value for the 16-bit floats)
  auto op = [](A a, auto x) {
    if constexpr (Op == ScanOp::Prod) return wrap_mul(a, static_cast<A>(x));
    if constexpr (Op == ScanOp::Sum) return wrap_add(a, static_cast<A>(x));
    if constexpr (Op == ScanOp::LogAddExp) return log_add_exp(a, static_cast<A>(x));
  };
  parallel_for(0, no, std::max<int64_t>(1, kGrainSize / rs), [&](int64_t b, int64_t e) {
    A acc[kGroup];
    for_each_group(g, b, e, kGroup, [&](const int64_t* off, int64_t n, const LoopDim& col) {
      const char* x = src + off[0];
      char* y = dst + off[1];
      // strides as locals: the stores through y could otherwise change them, and each was
      // reloaded per element (int64 cumsum 1.9x libtorch's time)
      const int64_t is = in_step, os = out_step, cs = col.stride[0], ds = col.stride[1];
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        if (scan_staged(CppTypeToScalarType<T>::value, x, y, n, rs, is, cs, os, ds, init, op)) return;
      } else if constexpr (std::is_integral_v<T>) {
        if (scan_across<T>(x, y, n, rs, is, cs, os, ds, init, op)) return;
      }
      std::fill(acc, acc + n, init);
      if (n > 1 && cs < std::abs(is)) {  // neighbours inner, as in ArgReduce::scan
        // When the output runs along the dim instead (a transposed input, a contiguous
        // output), each neighbour writes its own cache lines: take a cache line's worth of
        // neighbours at a time, or the lines written at once evict each other.
        if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, BFloat16>) {
          if (cs == int64_t{sizeof(T)} && ds == int64_t{sizeof(T)}) {
            // both contiguous (a scan along an outer dim): plain loops over the row, which GCC
            // vectorizes (the generic form below ran an element at a time: 32x32 0.96 us)
            for (int64_t r = 0; r < rs; ++r) {
              const T* xr = reinterpret_cast<const T*>(x + r * is);
              T* yr = reinterpret_cast<T*>(y + r * os);
              for (int64_t i = 0; i < n; ++i) {
                acc[i] = op(acc[i], xr[i]);
                yr[i] = cast<T>(acc[i]);
              }
            }
            return;
          }
        }
        const int64_t block = ds == int64_t{sizeof(T)} ? n : 64 / int64_t{sizeof(T)};
        if constexpr (std::is_arithmetic_v<T>) {
          if (cs == int64_t{sizeof(T)}) {
            // neighbours contiguous in the input, the output strided: typed rows, the strides in
            // elements (the generic loop below reloaded them and converted per element:
            // int64 cumsum of a transposed 32x32 0.83 us)
            const int64_t dse = ds / int64_t{sizeof(T)};
            for (int64_t i0 = 0; i0 < n; i0 += block) {
              const int64_t i1 = std::min(n, i0 + block);
              for (int64_t r = 0; r < rs; ++r) {
                const T* xr = reinterpret_cast<const T*>(x + r * is);
                T* yr = reinterpret_cast<T*>(y + r * os);
                for (int64_t i = i0; i < i1; ++i) {
                  acc[i] = op(acc[i], xr[i]);
                  yr[i * dse] = cast<T>(acc[i]);
                }
              }
            }
            return;
          }
        }
        for (int64_t i0 = 0; i0 < n; i0 += block) {
          const int64_t i1 = std::min(n, i0 + block);
          for (int64_t r = 0; r < rs; ++r) {
            for (int64_t i = i0; i < i1; ++i) {
              acc[i] = op(acc[i], load<T>(x + r * is + i * cs));
              *reinterpret_cast<T*>(y + r * os + i * ds) = cast<T>(acc[i]);
            }
          }
        }
        return;
      }
      // Lines one after another, four at a time: one line's running value is a serial chain
      // of additions, four chains hide each other's latency. An integer addition takes a
      // cycle: integers run one line at a time.
      int64_t i = 0;
      if constexpr (std::is_integral_v<T>) {
        if (is == int64_t{sizeof(T)} && os == int64_t{sizeof(T)}) {
          // contiguous lines of integers: typed rows and the running value in a register (the
          // loop below kept it in acc[i] and read through byte pointers: int64 cumsum along
          // rows of 256 1.16x libtorch's time)
          for (; i < n; ++i) {
            const T* __restrict xr = reinterpret_cast<const T*>(x + i * cs);
            T* __restrict yr = reinterpret_cast<T*>(y + i * ds);
            A a = init;
            for (int64_t r = 0; r < rs; ++r) yr[r] = a = op(a, xr[r]);
          }
          return;
        }
      }
      for (; std::is_floating_point_v<A> && i + 4 <= n; i += 4) {
        A a[4] = {init, init, init, init};
        for (int64_t r = 0; r < rs; ++r) {
          for (int k = 0; k < 4; ++k) {
            a[k] = op(a[k], load<T>(x + r * is + (i + k) * cs));
            *reinterpret_cast<T*>(y + r * os + (i + k) * ds) = cast<T>(a[k]);
          }
        }
      }
      for (; i < n; ++i) {
        for (int64_t r = 0; r < rs; ++r) {
          acc[i] = op(acc[i], load<T>(x + r * is + i * cs));
          *reinterpret_cast<T*>(y + r * os + i * ds) = cast<T>(acc[i]);
        }
      }
    });
  });
}

}  // namespace

void arg_reduce_kernel(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim, bool is_max) {
  visit_dtype(in.dtype(), [&](auto v) {
    using T = decltype(v);
    if (is_max) {
      ArgReduce<T, true>(values, indices, in, dim).run();
    } else {
      ArgReduce<T, false>(values, indices, in, dim).run();
    }
  });
}

void cumulative_kernel(const Tensor& out, const Tensor& in, int64_t dim, ScanOp op) {
  auto typed = [&](auto v) {
    using T = decltype(v);
    // (log-sum-exp in float64 only: the op converts other dtypes, whose scan would be the same
    // double-precision code compiled again)
    if constexpr (std::is_same_v<T, double>) {
      if (op == ScanOp::LogAddExp) return cumulative_typed<T, ScanOp::LogAddExp>(out, in, dim);
    } else {
      EMBER_CHECK(op != ScanOp::LogAddExp, "cumulative_kernel", "logcumsumexp's scan takes float64, not ", in.dtype());
    }
    return op == ScanOp::Prod ? cumulative_typed<T, ScanOp::Prod>(out, in, dim)
                              : cumulative_typed<T, ScanOp::Sum>(out, in, dim);
  };
  switch (in.dtype()) {
    case kFloat: return typed(float{});
    case kDouble: return typed(double{});
    case kHalf: return typed(Half{});
    case kBFloat16: return typed(BFloat16{});
    case kLong: return typed(int64_t{});
    default: EMBER_CHECK(false, "cumulative_kernel", "unsupported dtype ", in.dtype());
  }
}

}  // namespace ember::kernels
#endif  // HWY_ONCE
