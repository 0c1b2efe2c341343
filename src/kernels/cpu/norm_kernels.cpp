// Normalization kernels, compiled for each SIMD target Highway selects at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/norm_kernels.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/hwy_util-inl.h"
#include "kernels/cpu/norm_kernels.h"

// The running count, per-channel means and sums of squared deviations of a range of samples
// (channel_moments_cl_typed below), compiled once for all targets.
#ifndef EMBER_NORM_KERNELS_MOMENTS
#define EMBER_NORM_KERNELS_MOMENTS
namespace ember::kernels {
namespace {
struct Moments {
  int64_t begin;  // the range's first sample
  double count = 0;
  std::vector<double> mean, m2;
  std::vector<double> sample_mean, sample_m2;  // the current sample's
  Moments(int64_t first, size_t C) : begin(first), mean(C, 0.0), m2(C, 0.0), sample_mean(C), sample_m2(C) {}
  // merges count_b values of per-channel means mb and sums of squared deviations m2b (Chan,
  // Golub and LeVeque's pairwise update)
  void merge(double count_b, const double* mb, const double* m2b) {
    const double total = count + count_b, f_mean = count_b / total, f_m2 = count * count_b / total;
    for (size_t c = 0; c < mean.size(); ++c) {
      const double delta = mb[c] - mean[c];
      mean[c] += delta * f_mean;
      m2[c] += m2b[c] + delta * delta * f_m2;
    }
    count = total;
  }
  // A sample of `len` positions: the sums s of its first pass give its means, rounded into m for
  // its second pass; the sums of squared deviations q of that pass merge it in. Out of line: one
  // copy per lane type instead of one per dtype and target.
  template <class L>
  HWY_NOINLINE void sample_sums(double len, const L* s, L* m) {
    for (size_t c = 0; c < mean.size(); ++c) {
      sample_mean[c] = static_cast<double>(s[c]) / len;
      m[c] = static_cast<L>(sample_mean[c]);
    }
  }
  template <class L>
  HWY_NOINLINE void sample_squares(double len, const L* q) {
    for (size_t c = 0; c < mean.size(); ++c) sample_m2[c] = static_cast<double>(q[c]);
    merge(len, sample_mean.data(), sample_m2.data());
  }
};
// The ranges merged in the order of their samples into the means and biased variances.
void merge_ranges(std::vector<Moments>& ranges, size_t C, double* mean, double* var) {
  std::sort(ranges.begin(), ranges.end(), [](const Moments& a, const Moments& b) { return a.begin < b.begin; });
  Moments all(0, C);
  for (const Moments& r : ranges) all.merge(r.count, r.mean.data(), r.m2.data());
  for (size_t c = 0; c < C; ++c) {
    mean[c] = all.mean[c];
    var[c] = all.m2[c] / all.count;
  }
}
}  // namespace
}  // namespace ember::kernels
#endif

HWY_BEFORE_NAMESPACE();

namespace ember::kernels::HWY_NAMESPACE {
namespace {

// Sum over a row of f(v) for compute vectors v of x; lanes past the end count as zero.
template <class T, class F>
HWY_INLINE double row_sum(const T* x, size_t n, const F& f) {
  const DC<T> d;
  const size_t N = hn::Lanes(d);
  auto acc0 = hn::Zero(d), acc1 = hn::Zero(d);
  size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    acc0 = hn::Add(acc0, f(LoadC(d, x + i)));
    acc1 = hn::Add(acc1, f(LoadC(d, x + i + N)));
  }
  for (; i + N <= n; i += N) acc0 = hn::Add(acc0, f(LoadC(d, x + i)));
  if (i < n) acc1 = hn::Add(acc1, hn::IfThenElseZero(hn::FirstN(d, n - i), f(LoadCN(d, x + i, n - i))));
  return static_cast<double>(hn::GetLane(hn::SumOfLanes(d, hn::Add(acc0, acc1))));
}

template <class T>
void row_norm_typed(const Tensor& x, const Tensor& y, const Tensor& w, const Tensor& b, double eps, bool rms,
                    double* mean_out, double* var_out) {
  using L = lane_t<T>;
  const int64_t rows = x.size(0);
  const size_t cols = static_cast<size_t>(x.size(1));
  const T* xp = static_cast<const T*>(x.data_ptr());
  T* yp = y.defined() ? static_cast<T*>(y.data_ptr()) : nullptr;
  const T* wp = w.defined() ? static_cast<const T*>(w.data_ptr()) : nullptr;
  const T* bp = b.defined() ? static_cast<const T*>(b.data_ptr()) : nullptr;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(static_cast<int64_t>(cols), 1));
  parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    const DC<T> d;
    const size_t N = hn::Lanes(d);
    for (int64_t r = begin; r < end; ++r) {
      const T* xr = xp + r * static_cast<int64_t>(cols);
      double mean = 0, var;
      if (rms) {
        var = cols ? row_sum(xr, cols, [](auto v) { return hn::Mul(v, v); }) / static_cast<double>(cols) : NAN;
      } else {
        mean = cols ? row_sum(xr, cols, [](auto v) { return v; }) / static_cast<double>(cols) : NAN;
        const auto vm = hn::Set(d, static_cast<L>(mean));
        var = cols ? row_sum(xr, cols,
                             [&](auto v) {
                               const auto dv = hn::Sub(v, vm);
                               return hn::Mul(dv, dv);
                             }) /
                         static_cast<double>(cols)
                   : NAN;
      }
      const double rstd = 1.0 / std::sqrt(var + eps);
      mean_out[r] = mean;
      var_out[r] = var;
      if (!yp) continue;
      T* yr = yp + r * static_cast<int64_t>(cols);
      const auto vm = hn::Set(d, static_cast<L>(mean)), vr = hn::Set(d, static_cast<L>(rstd));
      auto apply = [&](auto v, size_t i, size_t n) {
        v = hn::Mul(hn::Sub(v, vm), vr);
        if (wp) v = hn::Mul(v, n == N ? LoadC(d, wp + i) : LoadCN(d, wp + i, n));
        if (bp) v = hn::Add(v, n == N ? LoadC(d, bp + i) : LoadCN(d, bp + i, n));
        return v;
      };
      size_t i = 0;
      for (; i + N <= cols; i += N) StoreC(d, apply(LoadC(d, xr + i), i, N), yr + i);
      if (i < cols) StoreCN(d, apply(LoadCN(d, xr + i, cols - i), i, cols - i), yr + i, cols - i);
    }
  });
}

template <class T>
void channel_moments_typed(const Tensor& x, double* mean, double* var) {
  const int64_t N = x.size(0), C = x.size(1), L = x.size(2);
  const T* xp = static_cast<const T*>(x.data_ptr());
  const double count = static_cast<double>(N * L);
  parallel_for(0, C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(N * L, 1)), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      double s = 0;
      for (int64_t n = 0; n < N; ++n) s += row_sum(xp + (n * C + c) * L, static_cast<size_t>(L), [](auto v) { return v; });
      const double m = s / count;
      // sums of squared deviations from the exact mean, per row in the compute type (rows are
      // short) and over rows in double
      const auto vm = hn::Set(DC<T>(), static_cast<lane_t<T>>(m));
      double ss = 0;
      for (int64_t n = 0; n < N; ++n) {
        ss += row_sum(xp + (n * C + c) * L, static_cast<size_t>(L), [&](auto v) {
          const auto dv = hn::Sub(v, vm);
          return hn::Mul(dv, dv);
        });
      }
      mean[c] = m;
      var[c] = ss / count;
    }
  });
}

template <class T>
void channel_affine_typed(const Tensor& x, const Tensor& y, const double* scale, const double* shift) {
  using L = lane_t<T>;
  const int64_t NC = x.size(0) * x.size(1);
  const size_t len = static_cast<size_t>(x.size(2));
  const T* xp = static_cast<const T*>(x.data_ptr());
  T* yp = static_cast<T*>(y.data_ptr());
  parallel_for(0, NC, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(static_cast<int64_t>(len), 1)),
               [&](int64_t b, int64_t e) {
                 const DC<T> d;
                 const size_t N = hn::Lanes(d);
                 for (int64_t p = b; p < e; ++p) {
                   const T* xr = xp + p * static_cast<int64_t>(len);
                   T* yr = yp + p * static_cast<int64_t>(len);
                   const auto vs = hn::Set(d, static_cast<L>(scale[p])), vt = hn::Set(d, static_cast<L>(shift[p]));
                   size_t i = 0;
                   for (; i + N <= len; i += N) StoreC(d, hn::MulAdd(LoadC(d, xr + i), vs, vt), yr + i);
                   if (i < len) StoreCN(d, hn::MulAdd(LoadCN(d, xr + i, len - i), vs, vt), yr + i, len - i);
                 }
               });
}

// Channels-last sums keep their accumulators in registers: channels go in blocks of up to
// kClBlock compute vectors, each block running down a sample's positions.
constexpr size_t kClBlock = 4;
// Room for C channels in whole blocks (the lanes past C stay zero).
constexpr size_t cl_padded(size_t C, size_t V) { return (C + kClBlock * V - 1) / (kClBlock * V) * (kClBlock * V); }

// Loads the compute vector of channels [c, c + V) of a channels-last row, lanes past C as zero.
template <class T, class D>
HWY_INLINE hn::Vec<D> load_channels(D d, const T* row, size_t c, size_t C) {
  const size_t V = hn::Lanes(d);
  return c + V <= C ? LoadC(d, row + c) : LoadCN(d, row + c, C - c);
}

// s and t [c0, c0 + K V) = per channel, the sums over the `len` rows of two channels-last samples
// a and b of a - ma and of (a - ma) (b - mb): K whole compute vectors of channels with their sums
// in registers, or one vector that may run past C (K = 1; lanes past C add zeros). The moments
// take a = b = x (the sums of deviations and of their squares), the gradient a = dy, b = x.
// Out of line: both passes of a sample and both kernels call it.
template <size_t K, class T>
HWY_NOINLINE void cl_block_sums(const T* a, const T* b, int64_t len, size_t C, size_t c0, const lane_t<T>* ma,
                                const lane_t<T>* mb, lane_t<T>* s, lane_t<T>* t) {
  const DC<T> d;
  const size_t V = hn::Lanes(d);
  hn::Vec<DC<T>> vs[K], vt[K], vma[K], vmb[K];
  for (size_t j = 0; j < K; ++j) {
    vs[j] = vt[j] = hn::Zero(d);
    vma[j] = hn::LoadU(d, ma + c0 + j * V);
    vmb[j] = hn::LoadU(d, mb + c0 + j * V);
  }
  for (int64_t l = 0; l < len; ++l) {
    const int64_t row = l * static_cast<int64_t>(C);
#pragma GCC unroll 8  // the sums stay in registers only when unrolled (-O2 leaves the loop)
    for (size_t j = 0; j < K; ++j) {
      const auto va = hn::Sub(K == 1 ? load_channels(d, a + row, c0, C) : LoadC(d, a + row + c0 + j * V), vma[j]);
      const auto vb = hn::Sub(K == 1 ? load_channels(d, b + row, c0, C) : LoadC(d, b + row + c0 + j * V), vmb[j]);
      vs[j] = hn::Add(vs[j], va);
      vt[j] = hn::MulAdd(va, vb, vt[j]);
    }
  }
  for (size_t j = 0; j < K; ++j) {
    hn::StoreU(vs[j], d, s + c0 + j * V);
    hn::StoreU(vt[j], d, t + c0 + j * V);
  }
}

// channels_last x (N, L, C): per channel, the mean and biased variance over N and L. A sample's
// sums go across c in compute vectors, over its L positions in the compute type (as the
// contiguous kernel sums a row): first of x, then of (x - the sample's mean)^2 while the sample is
// still in cache, so that the tensor is read from memory once, not twice. The samples' means and
// sums of squares merge in double (Chan, Golub and LeVeque's pairwise update), in sample order
// within a thread's range and in range order across ranges.
template <class T>
void channel_moments_cl_typed(const Tensor& x, double* mean, double* var) {
  using L = lane_t<T>;
  const int64_t N = x.size(0), len = x.size(1);
  const size_t C = static_cast<size_t>(x.size(2));
  const T* xp = static_cast<const T*>(x.data_ptr());
  const DC<T> d;
  const size_t V = hn::Lanes(d);
  const size_t padded = cl_padded(C, V);
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(len * x.size(2), 1));
  std::mutex lock;
  std::vector<Moments> ranges;
  parallel_for(0, N, grain, [&](int64_t b, int64_t e) {
    Moments own(b, C);
    std::vector<L> m(padded), s(padded), q(padded);
    // s and q = per channel, the sums over the sample's positions of x - m and (x - m)^2
    const auto sums = [&](const T* sample) {
      size_t c0 = 0;
      for (; c0 + kClBlock * V <= C; c0 += kClBlock * V)
        cl_block_sums<kClBlock>(sample, sample, len, C, c0, m.data(), m.data(), s.data(), q.data());
      for (; c0 < C; c0 += V) cl_block_sums<1>(sample, sample, len, C, c0, m.data(), m.data(), s.data(), q.data());
    };
    for (int64_t n = b; n < e; ++n) {
      const T* sample = xp + n * len * static_cast<int64_t>(C);
      std::fill(m.begin(), m.end(), L(0));
      sums(sample);  // m = 0: s sums x
      own.sample_sums(static_cast<double>(len), s.data(), m.data());
      sums(sample);  // m = the sample's means: q sums the squared deviations
      own.sample_squares(static_cast<double>(len), q.data());
    }
    const std::lock_guard<std::mutex> guard(lock);
    ranges.push_back(std::move(own));
  });
  merge_ranges(ranges, C, mean, var);
}

// Over the (n, l) positions of an (N, L, C) tensor, in parallel: f(offset of the position's first
// element, rows), `rows` holding K per-(n, c) coefficient arrays (N * C doubles each) for the
// position's sample as compute-type vectors across c, reloaded when the sample changes.
template <class T, size_t K, class F>
void for_cl_positions(int64_t N, int64_t len, size_t C, const std::array<const double*, K>& coef, const F& f) {
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(static_cast<int64_t>(C), 1));
  parallel_for(0, N * len, grain, [&](int64_t begin, int64_t end) {
    const size_t V = hn::Lanes(DC<T>());
    std::array<std::vector<lane_t<T>>, K> rows;
    for (auto& row : rows) row.resize((C + V - 1) / V * V);
    int64_t loaded = -1;  // the sample whose coefficients `rows` hold
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / len;
      if (n != loaded) {
        for (size_t k = 0; k < K; ++k)
          for (size_t c = 0; c < C; ++c) rows[k][c] = static_cast<lane_t<T>>(coef[k][n * static_cast<int64_t>(C) + c]);
        loaded = n;
      }
      f(r * static_cast<int64_t>(C), rows);
    }
  });
}

// channels_last y (N, L, C) = x * scale[n * C + c] + shift[n * C + c].
template <class T>
void channel_affine_cl_typed(const Tensor& x, const Tensor& y, const double* scale, const double* shift) {
  const size_t C = static_cast<size_t>(x.size(2));
  const T* xp = static_cast<const T*>(x.data_ptr());
  T* yp = static_cast<T*>(y.data_ptr());
  for_cl_positions<T, 2>(x.size(0), x.size(1), C, {scale, shift}, [&](int64_t off, const auto& v) {
    const DC<T> d;
    const size_t V = hn::Lanes(d);
    auto f = [&](auto xv, size_t c) { return hn::MulAdd(xv, hn::LoadU(d, v[0].data() + c), hn::LoadU(d, v[1].data() + c)); };
    size_t c = 0;
    for (; c + V <= C; c += V) StoreC(d, f(LoadC(d, xp + off + c), c), yp + off + c);
    if (c < C) StoreCN(d, f(LoadCN(d, xp + off + c, C - c), c), yp + off + c, C - c);
  });
}

// Per (n, c) row of dy and x (N, C, L): sum(dy) and sum(dy * (x - mean[row])).
template <class T>
void channel_grad_sums_typed(const Tensor& dy, const Tensor& x, const double* mean, double* sum_dy,
                             double* sum_dyx) {
  using L = lane_t<T>;
  const int64_t rows = x.size(0) * x.size(1);
  const size_t len = static_cast<size_t>(x.size(2));
  const T* gp = static_cast<const T*>(dy.data_ptr());
  const T* xp = static_cast<const T*>(x.data_ptr());
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(static_cast<int64_t>(len), 1)),
               [&](int64_t b, int64_t e) {
                 const DC<T> d;
                 const size_t N = hn::Lanes(d);
                 for (int64_t p = b; p < e; ++p) {
                   const T* g = gp + p * static_cast<int64_t>(len);
                   const T* xr = xp + p * static_cast<int64_t>(len);
                   const auto vm = hn::Set(d, static_cast<L>(mean[p]));
                   auto s0 = hn::Zero(d), s1 = hn::Zero(d), t0 = hn::Zero(d), t1 = hn::Zero(d);
                   size_t i = 0;
                   for (; i + 2 * N <= len; i += 2 * N) {
                     const auto g0 = LoadC(d, g + i), g1 = LoadC(d, g + i + N);
                     s0 = hn::Add(s0, g0);
                     s1 = hn::Add(s1, g1);
                     t0 = hn::MulAdd(g0, hn::Sub(LoadC(d, xr + i), vm), t0);
                     t1 = hn::MulAdd(g1, hn::Sub(LoadC(d, xr + i + N), vm), t1);
                   }
                   for (; i < len; i += N) {  // lanes past the end load as zero: dy = 0 adds nothing
                     const size_t n = std::min(N, len - i);
                     const auto gv = LoadCN(d, g + i, n);
                     s0 = hn::Add(s0, gv);
                     t0 = hn::MulAdd(gv, hn::Sub(LoadCN(d, xr + i, n), vm), t0);
                   }
                   sum_dy[p] = static_cast<double>(hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1))));
                   sum_dyx[p] = static_cast<double>(hn::GetLane(hn::SumOfLanes(d, hn::Add(t0, t1))));
                 }
               });
}

// dx = a[p] * dy + b[p] * x + k[p] per (n, c) row p.
template <class T>
void channel_grad_input_typed(const Tensor& dy, const Tensor& x, const Tensor& dx, const double* a,
                              const double* b, const double* k) {
  using L = lane_t<T>;
  const int64_t rows = x.size(0) * x.size(1);
  const size_t len = static_cast<size_t>(x.size(2));
  const T* gp = static_cast<const T*>(dy.data_ptr());
  const T* xp = static_cast<const T*>(x.data_ptr());
  T* op = static_cast<T*>(dx.data_ptr());
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(static_cast<int64_t>(len), 1)),
               [&](int64_t begin, int64_t end) {
                 const DC<T> d;
                 const size_t N = hn::Lanes(d);
                 for (int64_t p = begin; p < end; ++p) {
                   const int64_t off = p * static_cast<int64_t>(len);
                   const auto va = hn::Set(d, static_cast<L>(a[p])), vb = hn::Set(d, static_cast<L>(b[p])),
                              vk = hn::Set(d, static_cast<L>(k[p]));
                   auto f = [&](auto g, auto xv) { return hn::MulAdd(va, g, hn::MulAdd(vb, xv, vk)); };
                   size_t i = 0;
                   for (; i + N <= len; i += N) StoreC(d, f(LoadC(d, gp + off + i), LoadC(d, xp + off + i)), op + off + i);
                   if (i < len)
                     StoreCN(d, f(LoadCN(d, gp + off + i, len - i), LoadCN(d, xp + off + i, len - i)), op + off + i,
                             len - i);
                 }
               });
}

// Channels-last layout (N, L, C): per sample, sums over positions of vectors across channels,
// in the compute type (a sample's positions are few), then in double per (n, c).
template <class T>
void channel_grad_sums_cl_typed(const Tensor& dy, const Tensor& x, const double* mean, double* sum_dy,
                                double* sum_dyx) {
  using L = lane_t<T>;
  const int64_t N = x.size(0), len = x.size(1);
  const size_t C = static_cast<size_t>(x.size(2));
  const T* gp = static_cast<const T*>(dy.data_ptr());
  const T* xp = static_cast<const T*>(x.data_ptr());
  parallel_for(0, N, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(len * x.size(2), 1)), [&](int64_t b, int64_t e) {
    const size_t V = hn::Lanes(DC<T>());
    const size_t padded = cl_padded(C, V);
    std::vector<L> zero(padded, L(0)), m(padded, L(0)), s(padded), t(padded);
    for (int64_t n = b; n < e; ++n) {
      const int64_t first = n * len * static_cast<int64_t>(C);
      for (size_t c = 0; c < C; ++c) m[c] = static_cast<L>(mean[n * static_cast<int64_t>(C) + c]);
      size_t c0 = 0;
      for (; c0 + kClBlock * V <= C; c0 += kClBlock * V)
        cl_block_sums<kClBlock>(gp + first, xp + first, len, C, c0, zero.data(), m.data(), s.data(), t.data());
      for (; c0 < C; c0 += V)
        cl_block_sums<1>(gp + first, xp + first, len, C, c0, zero.data(), m.data(), s.data(), t.data());
      for (size_t c = 0; c < C; ++c) {
        sum_dy[n * static_cast<int64_t>(C) + c] = static_cast<double>(s[c]);
        sum_dyx[n * static_cast<int64_t>(C) + c] = static_cast<double>(t[c]);
      }
    }
  });
}

// dx = a[p] * dy + b[p] * x + k[p] over (N, L, C), the coefficients of (n, c) as vectors across c.
template <class T>
void channel_grad_input_cl_typed(const Tensor& dy, const Tensor& x, const Tensor& dx, const double* a,
                                 const double* b, const double* k) {
  const size_t C = static_cast<size_t>(x.size(2));
  const T* gp = static_cast<const T*>(dy.data_ptr());
  const T* xp = static_cast<const T*>(x.data_ptr());
  T* op = static_cast<T*>(dx.data_ptr());
  for_cl_positions<T, 3>(x.size(0), x.size(1), C, {a, b, k}, [&](int64_t off, const auto& v) {
    const DC<T> d;
    const size_t V = hn::Lanes(d);
    auto f = [&](auto g, auto xv, size_t c) {
      return hn::MulAdd(hn::LoadU(d, v[0].data() + c), g,
                        hn::MulAdd(hn::LoadU(d, v[1].data() + c), xv, hn::LoadU(d, v[2].data() + c)));
    };
    size_t c = 0;
    for (; c + V <= C; c += V) StoreC(d, f(LoadC(d, gp + off + c), LoadC(d, xp + off + c), c), op + off + c);
    if (c < C) StoreCN(d, f(LoadCN(d, gp + off + c, C - c), LoadCN(d, xp + off + c, C - c), c), op + off + c, C - c);
  });
}

// Rows of layer/rms norm: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * w and
// xhat = (x - mean) * rstd (rms: no mean terms). Weight and bias gradients are column sums,
// accumulated per thread and added up under a lock.
template <class T>
void row_norm_backward_typed(const Tensor& dy, const Tensor& x, const Tensor& w, const double* mean,
                             const double* rstd, bool rms, const Tensor& dx, double* gw, double* gb) {
  using L = lane_t<T>;
  const int64_t rows = x.size(0);
  const size_t cols = static_cast<size_t>(x.size(1));
  const T* gp = static_cast<const T*>(dy.data_ptr());
  const T* xp = static_cast<const T*>(x.data_ptr());
  const T* wp = w.defined() ? static_cast<const T*>(w.data_ptr()) : nullptr;
  T* op = dx.defined() ? static_cast<T*>(dx.data_ptr()) : nullptr;
  std::mutex lock;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(static_cast<int64_t>(cols), 1));
  parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    const DC<T> d;
    const size_t N = hn::Lanes(d);
    const size_t padded = (cols + N - 1) / N * N;
    std::vector<L> pw(gw ? padded : 0), pb(gb ? padded : 0);
    for (int64_t r = begin; r < end; ++r) {
      const T* g = gp + r * static_cast<int64_t>(cols);
      const T* xr = xp + r * static_cast<int64_t>(cols);
      const auto vm = hn::Set(d, static_cast<L>(rms ? 0.0 : mean[r])), vr = hn::Set(d, static_cast<L>(rstd[r]));
      auto s1 = hn::Zero(d), s2 = hn::Zero(d);
      for (size_t i = 0; i < cols; i += N) {
        const size_t n = std::min(N, cols - i);
        const auto gv = n == N ? LoadC(d, g + i) : LoadCN(d, g + i, n);
        const auto xh = hn::Mul(hn::Sub(n == N ? LoadC(d, xr + i) : LoadCN(d, xr + i, n), vm), vr);
        if (gb) hn::StoreU(hn::Add(hn::LoadU(d, pb.data() + i), gv), d, pb.data() + i);
        if (gw) hn::StoreU(hn::MulAdd(gv, xh, hn::LoadU(d, pw.data() + i)), d, pw.data() + i);
        if (!op) continue;
        const auto gg = wp ? hn::Mul(gv, n == N ? LoadC(d, wp + i) : LoadCN(d, wp + i, n)) : gv;
        s1 = hn::Add(s1, gg);
        s2 = hn::MulAdd(gg, xh, s2);
      }
      if (!op) continue;
      const double inv_n = 1.0 / static_cast<double>(cols);
      const double m1 = rms ? 0.0 : static_cast<double>(hn::GetLane(hn::SumOfLanes(d, s1))) * inv_n;
      const double m2 = static_cast<double>(hn::GetLane(hn::SumOfLanes(d, s2))) * inv_n;
      // dx = rstd * g - (rstd * m2) * xhat - rstd * m1
      const auto c2 = hn::Set(d, static_cast<L>(rstd[r] * m2)), c1 = hn::Set(d, static_cast<L>(rstd[r] * m1));
      T* o = op + r * static_cast<int64_t>(cols);
      auto f = [&](auto gv, auto xv, auto wv) {
        const auto xh = hn::Mul(hn::Sub(xv, vm), vr);
        return hn::Sub(hn::NegMulAdd(c2, xh, hn::Mul(vr, wp ? hn::Mul(gv, wv) : gv)), c1);
      };
      size_t i = 0;
      for (; i + N <= cols; i += N)
        StoreC(d, f(LoadC(d, g + i), LoadC(d, xr + i), wp ? LoadC(d, wp + i) : vr), o + i);
      if (i < cols) {
        const size_t n = cols - i;
        StoreCN(d, f(LoadCN(d, g + i, n), LoadCN(d, xr + i, n), wp ? LoadCN(d, wp + i, n) : vr), o + i, n);
      }
    }
    std::lock_guard<std::mutex> guard(lock);
    for (size_t j = 0; j < cols; ++j) {
      if (gw) gw[j] += static_cast<double>(pw[j]);
      if (gb) gb[j] += static_cast<double>(pb[j]);
    }
  });
}


}  // namespace

void row_norm_impl(const Tensor& x, const Tensor& y, const Tensor& w, const Tensor& b, double eps, bool rms,
                   double* mean, double* var) {
  visit_float(x.dtype(), "norm", [&](auto t) { row_norm_typed<decltype(t)>(x, y, w, b, eps, rms, mean, var); });
}
void channel_moments_impl(const Tensor& x, double* mean, double* var, bool channels_last) {
  visit_float(x.dtype(), "norm", [&](auto t) {
    using T = decltype(t);
    channels_last ? channel_moments_cl_typed<T>(x, mean, var) : channel_moments_typed<T>(x, mean, var);
  });
}
void channel_affine_impl(const Tensor& x, const Tensor& y, const double* scale, const double* shift,
                         bool channels_last) {
  visit_float(x.dtype(), "norm", [&](auto t) {
    using T = decltype(t);
    channels_last ? channel_affine_cl_typed<T>(x, y, scale, shift) : channel_affine_typed<T>(x, y, scale, shift);
  });
}
void channel_grad_sums_impl(const Tensor& dy, const Tensor& x, const double* mean, double* sum_dy, double* sum_dyx,
                            bool channels_last) {
  visit_float(x.dtype(), "norm", [&](auto t) {
    using T = decltype(t);
    channels_last ? channel_grad_sums_cl_typed<T>(dy, x, mean, sum_dy, sum_dyx)
                  : channel_grad_sums_typed<T>(dy, x, mean, sum_dy, sum_dyx);
  });
}
void channel_grad_input_impl(const Tensor& dy, const Tensor& x, const Tensor& dx, const double* a, const double* b,
                             const double* k, bool channels_last) {
  visit_float(x.dtype(), "norm", [&](auto t) {
    using T = decltype(t);
    channels_last ? channel_grad_input_cl_typed<T>(dy, x, dx, a, b, k) : channel_grad_input_typed<T>(dy, x, dx, a, b, k);
  });
}
void row_norm_backward_impl(const Tensor& dy, const Tensor& x, const Tensor& w, const double* mean,
                            const double* rstd, bool rms, const Tensor& dx, double* gw, double* gb) {
  visit_float(x.dtype(), "norm",
              [&](auto t) { row_norm_backward_typed<decltype(t)>(dy, x, w, mean, rstd, rms, dx, gw, gb); });
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(row_norm_impl);
HWY_EXPORT(channel_moments_impl);
HWY_EXPORT(channel_affine_impl);
void row_norm_kernel(const Tensor& x, const Tensor& y, const Tensor& w, const Tensor& b, double eps, bool rms,
                     double* mean, double* var) {
  HWY_DYNAMIC_DISPATCH(row_norm_impl)(x, y, w, b, eps, rms, mean, var);
}
void channel_moments_kernel(const Tensor& x, double* mean, double* var, bool channels_last) {
  HWY_DYNAMIC_DISPATCH(channel_moments_impl)(x, mean, var, channels_last);
}
void channel_affine_kernel(const Tensor& x, const Tensor& y, const double* scale, const double* shift,
                           bool channels_last) {
  HWY_DYNAMIC_DISPATCH(channel_affine_impl)(x, y, scale, shift, channels_last);
}
HWY_EXPORT(channel_grad_sums_impl);
HWY_EXPORT(channel_grad_input_impl);
HWY_EXPORT(row_norm_backward_impl);
void channel_grad_sums_kernel(const Tensor& dy, const Tensor& x, const double* mean, double* sum_dy,
                              double* sum_dyx, bool channels_last) {
  HWY_DYNAMIC_DISPATCH(channel_grad_sums_impl)(dy, x, mean, sum_dy, sum_dyx, channels_last);
}
void channel_grad_input_kernel(const Tensor& dy, const Tensor& x, const Tensor& dx, const double* a,
                               const double* b, const double* k, bool channels_last) {
  HWY_DYNAMIC_DISPATCH(channel_grad_input_impl)(dy, x, dx, a, b, k, channels_last);
}
void row_norm_backward_kernel(const Tensor& dy, const Tensor& x, const Tensor& w, const double* mean,
                              const double* rstd, bool rms, const Tensor& dx, double* gw, double* gb) {
  HWY_DYNAMIC_DISPATCH(row_norm_backward_impl)(dy, x, w, mean, rstd, rms, dx, gw, gb);
}
}  // namespace ember::kernels
#endif
