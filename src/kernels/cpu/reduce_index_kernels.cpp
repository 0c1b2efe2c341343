// Reductions along one dim that need positions (max/min with their index) and scans
// (cumsum/cumprod). Plain loops over ReduceGeometry: each output is a line along the dim. Lines
// are visited in groups of neighbours along the innermost kept dim; when that dim is the faster
// one in memory, a group walks the line positions in the outer loop and the neighbours in the
// inner loop, so memory is read in order whichever dim is reduced.
#include <cmath>
#include <memory>

#include "core/parallel.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/reduce.h"
#include "kernels/cpu/reduce_geometry.h"

namespace ember::kernels {
namespace {

constexpr int64_t kGroup = 256;  // lines handled together

template <class T>
T load(const char* p) {
  return *reinterpret_cast<const T*>(p);
}

template <class C>
bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// Whether value c replaces the best so far: strictly more extreme, or the first NaN.
template <bool IsMax, class C>
bool replaces(C c, C best) {
  if (is_nan(best)) return false;
  if (is_nan(c)) return true;
  return IsMax ? c > best : c < best;
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
        step_(g_.nreduced() > 0 ? g_.reduced(0).stride[0] : 0) {}

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
    for (int64_t i = 0; i < n; ++i) {
      best[i] = static_cast<C>(load<T>(base + i * col_stride + rb * step_));
      idx[i] = rb;
    }
    if (n > 1 && col_stride < std::abs(step_)) {  // neighbours are closer in memory: they go inner
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
};

// Accumulator of the scans: double for every float dtype (PyTorch's CPU scans use double for
// float; a running sum keeps cancelling, so the 16-bit floats get it too), int64 for int64.
template <class T>
using ScanAcc = std::conditional_t<is_float_like_v<T>, double, T>;

template <class T>
void cumulative_typed(const Tensor& out, const Tensor& in, int64_t dim, bool is_prod) {
  using A = ScanAcc<T>;
  const ReduceGeometry g(in, in.dim() > 0 ? uint64_t{1} << dim : 0, out, Tensor());
  const int64_t no = g.num_outputs(), rs = g.reduce_size();
  if (no == 0 || rs == 0) return;
  const char* src = static_cast<const char*>(in.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  const int64_t in_step = g.nreduced() > 0 ? g.reduced(0).stride[0] : 0;
  const int64_t out_step = in.dim() > 0 ? out.stride(dim) * int64_t{sizeof(T)} : 0;
  const A init = is_prod ? A(1) : A(0);
  auto op = [is_prod](A a, T x) { return is_prod ? wrap_mul(a, static_cast<A>(x)) : wrap_add(a, static_cast<A>(x)); };
  parallel_for(0, no, std::max<int64_t>(1, kGrainSize / rs), [&](int64_t b, int64_t e) {
    A acc[kGroup];
    for_each_group(g, b, e, kGroup, [&](const int64_t* off, int64_t n, const LoopDim& col) {
      const char* x = src + off[0];
      char* y = dst + off[1];
      std::fill(acc, acc + n, init);
      if (n > 1 && col.stride[0] < std::abs(in_step)) {  // neighbours inner, as in ArgReduce::scan
        for (int64_t r = 0; r < rs; ++r) {
          for (int64_t i = 0; i < n; ++i) {
            acc[i] = op(acc[i], load<T>(x + r * in_step + i * col.stride[0]));
            *reinterpret_cast<T*>(y + r * out_step + i * col.stride[1]) = cast<T>(acc[i]);
          }
        }
        return;
      }
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t r = 0; r < rs; ++r) {
          acc[i] = op(acc[i], load<T>(x + r * in_step + i * col.stride[0]));
          *reinterpret_cast<T*>(y + r * out_step + i * col.stride[1]) = cast<T>(acc[i]);
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

void cumulative_kernel(const Tensor& out, const Tensor& in, int64_t dim, bool is_prod) {
  switch (in.dtype()) {
    case kFloat: return cumulative_typed<float>(out, in, dim, is_prod);
    case kDouble: return cumulative_typed<double>(out, in, dim, is_prod);
    case kHalf: return cumulative_typed<Half>(out, in, dim, is_prod);
    case kBFloat16: return cumulative_typed<BFloat16>(out, in, dim, is_prod);
    case kLong: return cumulative_typed<int64_t>(out, in, dim, is_prod);
    default: EMBER_CHECK(false, "cumulative_kernel", "unsupported dtype ", in.dtype());
  }
}

}  // namespace ember::kernels
