// The FFT engine (see fft.h). A Stockham transform keeps the data in natural order between
// stages (no bit reversal): stage s with radix p reads p elements m apart and writes them p-apart
// interleaved, alternating between two buffers. Twiddles are computed in double and stored in the
// transform's precision. The butterflies are compiled for each SIMD target Highway selects.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/fft_kernels.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#ifndef EMBER_KERNELS_FFT_PLAN_
#define EMBER_KERNELS_FFT_PLAN_
#include <hwy/aligned_allocator.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/fft.h"

namespace ember::kernels::fft_plan {

template <class T>
struct Plan {
  int64_t n = 0;
  int sign = -1;  // -1 forward, +1 inverse
  // Stockham stages: radix p, sub-length m (= len / p), stride s; twiddles w^(j r) for j < m,
  // 1 <= r < p at [j * (p - 1) + r - 1]; a generic radix's roots exp(sign 2 pi i q / p)
  struct Stage {
    int64_t p, m, s;
    std::vector<T> tw_re, tw_im, root_re, root_im;
  };
  std::vector<Stage> stages;
  // Bluestein: chirp c[k] = exp(sign pi i k^2 / n), the transform of the filter (in natural
  // order, and in the digit-reversed order the in-place forward transform leaves), the inner plans.
  bool bluestein = false;
  int64_t big = 0;
  std::vector<T> chirp_re, chirp_im, filter_re, filter_im, filter_dif_re, filter_dif_im;
  std::shared_ptr<const Plan> inner_fwd, inner_inv;
  // elements per signal of each work plane the transform needs besides its data
  int64_t scratch() const { return bluestein ? 2 * big : n; }
};

// Planes of a batch of `lanes` signals: signal b's element j at [j * lanes + b].
template <class T>
struct Planes {
  T* re;
  T* im;
  Planes offset(int64_t k) const { return {re + k, im + k}; }
};

// A group of signals in a complex tensor: signal b's element j at base[j * elem + b * lane].
template <class T>
struct Group {
  complex<T>* base;
  int64_t count, elem, lane;
};

}  // namespace ember::kernels::fft_plan
#endif  // EMBER_KERNELS_FFT_PLAN_

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace {
namespace hn = hwy::HWY_NAMESPACE;
using fft_plan::Group;
using fft_plan::Plan;
using fft_plan::Planes;

// body(d, t) over t in [0, len): full vectors, then single lanes.
template <class T, class Body>
HWY_INLINE void over(int64_t len, const Body& body) {
  const hn::ScalableTag<T> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t t = 0;
  for (; t + N <= len; t += N) body(d, t);
  const hn::CappedTag<T, 1> d1;
  for (; t < len; ++t) body(d1, t);
}

// Element t of planes p, as a vector from t on.
template <class D, class T>
HWY_INLINE void load(D d, Planes<T> p, int64_t t, hn::Vec<D>& re, hn::Vec<D>& im) {
  re = hn::LoadU(d, p.re + t);
  im = hn::LoadU(d, p.im + t);
}
template <class D, class T>
HWY_INLINE void store(D d, hn::Vec<D> re, hn::Vec<D> im, Planes<T> p, int64_t t) {
  hn::StoreU(re, d, p.re + t);
  hn::StoreU(im, d, p.im + t);
}

// (re, im) *= (wr + i wi)
template <class V>
HWY_INLINE void cmul(V& re, V& im, V wr, V wi) {
  const V r = hn::MulSub(re, wr, hn::Mul(im, wi));
  im = hn::MulAdd(re, wi, hn::Mul(im, wr));
  re = r;
}

// The P-point DFT (P = 2, 3, 4) of re[0..P), im[0..P) in place, with roots exp(sign 2 pi i / P).
template <int P, class D, class V>
HWY_INLINE void dft(D d, int sign, V* re, V* im) {
  using T = hn::TFromD<D>;
  if constexpr (P == 2) {
    const V ar = re[0], ai = im[0];
    re[0] = hn::Add(ar, re[1]);
    im[0] = hn::Add(ai, im[1]);
    re[1] = hn::Sub(ar, re[1]);
    im[1] = hn::Sub(ai, im[1]);
  } else if constexpr (P == 3) {
    const V tr = hn::Add(re[1], re[2]), ti = hn::Add(im[1], im[2]);
    const V half = hn::Set(d, T(-0.5)), sv = hn::Set(d, static_cast<T>(sign * 0.86602540378443864676));
    const V ur = hn::MulAdd(half, tr, re[0]), ui = hn::MulAdd(half, ti, im[0]);
    // v = i s1 (b - c)
    const V vr = hn::Mul(sv, hn::Sub(im[2], im[1])), vi = hn::Mul(sv, hn::Sub(re[1], re[2]));
    re[0] = hn::Add(re[0], tr);
    im[0] = hn::Add(im[0], ti);
    re[1] = hn::Add(ur, vr);
    im[1] = hn::Add(ui, vi);
    re[2] = hn::Sub(ur, vr);
    im[2] = hn::Sub(ui, vi);
  } else {
    static_assert(P == 4);
    const V apcr = hn::Add(re[0], re[2]), apci = hn::Add(im[0], im[2]);
    const V amcr = hn::Sub(re[0], re[2]), amci = hn::Sub(im[0], im[2]);
    const V bper = hn::Add(re[1], re[3]), bpei = hn::Add(im[1], im[3]);
    // (b - e) times sign * i
    const V dr = hn::Sub(re[1], re[3]), di = hn::Sub(im[1], im[3]);
    const V rr = sign < 0 ? di : hn::Neg(di), ri = sign < 0 ? hn::Neg(dr) : dr;
    re[0] = hn::Add(apcr, bper);
    im[0] = hn::Add(apci, bpei);
    re[1] = hn::Add(amcr, rr);
    im[1] = hn::Add(amci, ri);
    re[2] = hn::Sub(apcr, bper);
    im[2] = hn::Sub(apci, bpei);
    re[3] = hn::Sub(amcr, rr);
    im[3] = hn::Sub(amci, ri);
  }
}

// Where a stage's butterflies read and write: butterfly j of block b takes input q at
// in[b * block + j * j_in + q * q_in] and puts output r at out[b * block + j * j_out + r * r_out],
// each a run of `run` elements that share the twiddles of j.
struct Layout {
  int64_t blocks, block, j_in, q_in, j_out, r_out, run;
};

// The radix-P butterflies of stage st. The twiddles w^(j r) multiply output r (decimation in
// frequency, as the Stockham stages and the forward in-place transform run) or, kTwiddleInputs,
// input r (decimation in time: the transpose, which the inverse in-place transform runs).
template <int P, bool kTwiddleInputs, class T>
void butterflies(const typename Plan<T>::Stage& st, int sign, Planes<T> in, Planes<T> out, const Layout& at) {
  for (int64_t b = 0; b < at.blocks; ++b) {
    for (int64_t j = 0; j < st.m; ++j) {
      const T* twr = st.tw_re.data() + j * (P - 1);
      const T* twi = st.tw_im.data() + j * (P - 1);
      const Planes<T> x = in.offset(b * at.block + j * at.j_in), y = out.offset(b * at.block + j * at.j_out);
      const auto run = [&](auto d, int64_t t) {
        hn::Vec<decltype(d)> re[P], im[P];  // in registers once the loops are unrolled
#pragma GCC unroll 4
        for (int q = 0; q < P; ++q) {
          load(d, x.offset(q * at.q_in), t, re[q], im[q]);
          if (kTwiddleInputs && q > 0) cmul(re[q], im[q], hn::Set(d, twr[q - 1]), hn::Set(d, twi[q - 1]));
        }
        dft<P>(d, sign, re, im);
#pragma GCC unroll 4
        for (int r = 0; r < P; ++r) {
          if (!kTwiddleInputs && r > 0) cmul(re[r], im[r], hn::Set(d, twr[r - 1]), hn::Set(d, twi[r - 1]));
          store(d, re[r], im[r], y.offset(r * at.r_out), t);
        }
      };
      if constexpr (kTwiddleInputs) {
        run(hn::ScalableTag<T>(), 0);  // the transposed stages run in place only: one full vector
      } else {
        over<T>(at.run, run);
      }
    }
  }
}

// body(radix) with the stage's radix as a compile-time constant (2, 3 or 4); false for others.
template <class Body>
HWY_INLINE bool with_radix(int64_t p, const Body& body) {
  switch (p) {
    case 2: return body(std::integral_constant<int, 2>()), true;
    case 3: return body(std::integral_constant<int, 3>()), true;
    case 4: return body(std::integral_constant<int, 4>()), true;
    default: return false;
  }
}

// One Stockham stage from x into y; `lanes` signals side by side, so a butterfly's p inputs are
// runs of L = s * lanes elements that share their twiddles.
template <class T>
void stage(const typename Plan<T>::Stage& st, int sign, Planes<T> x, Planes<T> y, int64_t lanes) {
  const int64_t p = st.p, m = st.m, L = st.s * lanes;
  const Layout at{1, 0, L, m * L, p * L, L, L};
  if (with_radix(p, [&](auto radix) { butterflies<decltype(radix)::value, false>(st, sign, x, y, at); })) return;
  // a generic radix p: output r = sum_q x_q root^(q r), accumulated in place
  const T* twr = st.tw_re.data();
  const T* twi = st.tw_im.data();
  for (int64_t j = 0; j < m; ++j) {
    for (int64_t r = 0; r < p; ++r) {
      const Planes<T> out = y.offset((p * j + r) * L);
      over<T>(L, [&](auto d, int64_t t) {
        auto accr = hn::LoadU(d, x.re + j * L + t), acci = hn::LoadU(d, x.im + j * L + t);
        for (int64_t q = 1; q < p; ++q) {
          const size_t k = static_cast<size_t>((q * r) % p);
          const auto wr = hn::Set(d, st.root_re[k]), wi = hn::Set(d, st.root_im[k]);
          const auto vr = hn::LoadU(d, x.re + (j + q * m) * L + t), vi = hn::LoadU(d, x.im + (j + q * m) * L + t);
          accr = hn::Add(accr, hn::MulSub(vr, wr, hn::Mul(vi, wi)));
          acci = hn::Add(acci, hn::MulAdd(vr, wi, hn::Mul(vi, wr)));
        }
        if (r > 0) {
          const int64_t k = j * (p - 1) + r - 1;
          cmul(accr, acci, hn::Set(d, twr[k]), hn::Set(d, twi[k]));
        }
        store(d, accr, acci, out, t);
      });
    }
  }
}

// out[j] = in[j] * (cr[j] + i ci[j]) for j < count, in every lane.
template <class T>
void scale_rows(const T* cr, const T* ci, Planes<T> in, Planes<T> out, int64_t count, int64_t lanes) {
  if (lanes == 1) {  // one signal: vectorized along it
    over<T>(count, [&](auto d, int64_t j) {
      auto vr = hn::LoadU(d, in.re + j), vi = hn::LoadU(d, in.im + j);
      cmul(vr, vi, hn::LoadU(d, cr + j), hn::LoadU(d, ci + j));
      hn::StoreU(vr, d, out.re + j);
      hn::StoreU(vi, d, out.im + j);
    });
    return;
  }
  for (int64_t j = 0; j < count; ++j) {
    over<T>(lanes, [&](auto d, int64_t b) {
      auto vr = hn::LoadU(d, in.re + j * lanes + b), vi = hn::LoadU(d, in.im + j * lanes + b);
      cmul(vr, vi, hn::Set(d, cr[j]), hn::Set(d, ci[j]));
      hn::StoreU(vr, d, out.re + j * lanes + b);
      hn::StoreU(vi, d, out.im + j * lanes + b);
    });
  }
}

// Bluestein's convolution in place for a full vector of signals. The Stockham stages stream
// the whole work buffer (2.65 MB for 16 float signals of 20736 points) through L3 once per stage;
// instead, the forward transform runs in place decimated in frequency, which leaves each block of
// a stage an independent sub-transform and the spectrum in digit-reversed order. The filter is
// stored in that order, and the inverse runs the transposed stages (decimated in time) in reverse,
// which takes that order back to the natural one. So the two transforms go depth first: a block
// of up to kCacheBlock bytes runs all its remaining stages, its filter product and its inverse
// stages while it stays in L1; each larger block one stage before and one after its sub-blocks.
constexpr int64_t kCacheBlock = 16 << 10;

// Stage st on each of its blocks in the `len` elements (of N lanes) at w, in place: decimated in
// frequency, or for the inverse its transpose.
template <class T>
void inplace_stage(const typename Plan<T>::Stage& st, bool inverse, Planes<T> w, int64_t len) {
  const int64_t N = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>())), span = st.p * st.m;
  const Layout at{len / span, span * N, N, st.m * N, N, st.m * N, N};
  with_radix(st.p, [&](auto radix) {
    constexpr int P = decltype(radix)::value;
    if (inverse) {
      butterflies<P, true>(st, +1, w, w, at);
    } else {
      butterflies<P, false>(st, -1, w, w, at);
    }
  });
}

// The convolution on the block of stage i at element `at` of w, from its forward stage i on.
template <class T>
void convolve_block(const Plan<T>& plan, Planes<T> w, int64_t at, size_t i) {
  const auto& fwd = plan.inner_fwd->stages;
  const auto& inv = plan.inner_inv->stages;
  const int64_t N = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>())), len = fwd[i].p * fwd[i].m;
  const Planes<T> block = w.offset(at * N);
  if (len * N * 2 * static_cast<int64_t>(sizeof(T)) > kCacheBlock) {
    inplace_stage(fwd[i], false, block, len);
    for (int64_t r = 0; r < fwd[i].p; ++r) convolve_block(plan, w, at + r * fwd[i].m, i + 1);
    inplace_stage(inv[i], true, block, len);
    return;
  }
  for (size_t s = i; s < fwd.size(); ++s) inplace_stage(fwd[s], false, block, len);
  scale_rows(plan.filter_dif_re.data() + at, plan.filter_dif_im.data() + at, block, block, len, N);
  for (size_t s = fwd.size(); s-- > i;) inplace_stage(inv[s], true, block, len);
}

// Transforms x in place or into w (plan.scratch() elements per lane); returns the planes that
// hold the result.
template <class T>
Planes<T> execute(const Plan<T>& plan, Planes<T> x, Planes<T> w, int64_t lanes) {
  if (plan.bluestein) {
    const int64_t n = plan.n, big = plan.big;
    const Planes<T> a = w, a_work = w.offset(big * lanes);
    scale_rows(plan.chirp_re.data(), plan.chirp_im.data(), x, a, n, lanes);
    std::fill(a.re + n * lanes, a.re + big * lanes, T(0));
    std::fill(a.im + n * lanes, a.im + big * lanes, T(0));
    Planes<T> g = a;
    if (lanes == static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>()))) {
      convolve_block(plan, a, 0, 0);
    } else {  // fewer signals: the Stockham stages, whose later ones vectorize along the signal
      const Planes<T> f = execute(*plan.inner_fwd, a, a_work, lanes);
      scale_rows(plan.filter_re.data(), plan.filter_im.data(), f, f, big, lanes);
      g = execute(*plan.inner_inv, f, f.re == a.re ? a_work : a, lanes);
    }
    scale_rows(plan.chirp_re.data(), plan.chirp_im.data(), g, x, n, lanes);
    return x;
  }
  Planes<T> src = x, dst = w;
  for (const auto& st : plan.stages) {
    stage<T>(st, plan.sign, src, dst, lanes);
    std::swap(src, dst);
  }
  return src;
}

constexpr int64_t kBlock = 64;

// Copies a group's signals into planes of `lanes` lanes (lanes past the group's count are zero),
// and back.
template <class T>
void gather(const Group<T>& g, int64_t n, Planes<T> p, int64_t lanes) {
  const hn::ScalableTag<T> d;
  if (g.lane == 1 && g.count == lanes && lanes == static_cast<int64_t>(hn::Lanes(d))) {
    for (int64_t j = 0; j < n; ++j) {  // the signals are adjacent: one vector of pairs per element
      hn::Vec<decltype(d)> re, im;
      hn::LoadInterleaved2(d, reinterpret_cast<const T*>(g.base + j * g.elem), re, im);
      hn::StoreU(re, d, p.re + j * lanes);
      hn::StoreU(im, d, p.im + j * lanes);
    }
    return;
  }
  if (lanes == 1 && g.elem == 1) {  // one contiguous signal
    const T* src = reinterpret_cast<const T*>(g.base);
    int64_t j = 0;
    for (const int64_t N = static_cast<int64_t>(hn::Lanes(d)); j + N <= n; j += N) {
      hn::Vec<decltype(d)> re, im;
      hn::LoadInterleaved2(d, src + 2 * j, re, im);
      hn::StoreU(re, d, p.re + j);
      hn::StoreU(im, d, p.im + j);
    }
    for (; j < n; ++j) {
      p.re[j] = src[2 * j];
      p.im[j] = src[2 * j + 1];
    }
    return;
  }
  // Signals far apart (rows): a block of each in turn, so that reading rows 2^k bytes apart
  // does not thrash one cache set.
  for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
    const int64_t j1 = std::min(n, j0 + kBlock);
    for (int64_t b = 0; b < lanes; ++b) {
      for (int64_t j = j0; j < j1; ++j) {
        const complex<T> v = b < g.count ? g.base[j * g.elem + b * g.lane] : complex<T>(0);
        p.re[j * lanes + b] = v.real();
        p.im[j * lanes + b] = v.imag();
      }
    }
  }
}

template <class T>
void scatter(Planes<T> p, int64_t n, const Group<T>& g, int64_t lanes) {
  const hn::ScalableTag<T> d;
  if (g.lane == 1 && g.count == lanes && lanes == static_cast<int64_t>(hn::Lanes(d))) {
    for (int64_t j = 0; j < n; ++j)
      hn::StoreInterleaved2(hn::LoadU(d, p.re + j * lanes), hn::LoadU(d, p.im + j * lanes), d,
                            reinterpret_cast<T*>(g.base + j * g.elem));
    return;
  }
  if (lanes == 1 && g.elem == 1) {
    T* dst = reinterpret_cast<T*>(g.base);
    int64_t j = 0;
    for (const int64_t N = static_cast<int64_t>(hn::Lanes(d)); j + N <= n; j += N)
      hn::StoreInterleaved2(hn::LoadU(d, p.re + j), hn::LoadU(d, p.im + j), d, dst + 2 * j);
    for (; j < n; ++j) {
      dst[2 * j] = p.re[j];
      dst[2 * j + 1] = p.im[j];
    }
    return;
  }
  for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
    const int64_t j1 = std::min(n, j0 + kBlock);
    for (int64_t b = 0; b < g.count; ++b)
      for (int64_t j = j0; j < j1; ++j)
        g.base[j * g.elem + b * g.lane] = complex<T>(p.re[j * lanes + b], p.im[j * lanes + b]);
  }
}

// Signals side by side in a batch: one vector's worth, or all of them if fewer.
template <class T>
int64_t batch_lanes(int64_t signals) {
  return std::min<int64_t>(static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>())), signals);
}

// The transform along the middle dim of a contiguous complex [outer, n, inner] buffer: signals
// along the inner dim are gathered from runs of adjacent ones, rows (inner == 1) across rows.
template <class T>
void c2c_typed(const Plan<T>& plan, complex<T>* base, int64_t outer, int64_t inner) {
  const int64_t n = plan.n;
  const int64_t lanes = batch_lanes<T>(inner == 1 ? outer : inner);
  const int64_t per_outer = inner == 1 ? 1 : (inner + lanes - 1) / lanes;
  const int64_t groups = inner == 1 ? (outer + lanes - 1) / lanes : outer * per_outer;
  const auto group = [&](int64_t g) -> Group<T> {
    if (inner == 1) return {base + g * lanes * n, std::min(lanes, outer - g * lanes), 1, n};
    const int64_t o = g / per_outer, c = g % per_outer * lanes;
    return {base + o * n * inner + c, std::min(lanes, inner - c), inner, 1};
  };
  const int64_t grain = std::max<int64_t>(1, kGrainSize / (4 * n * lanes));
  parallel_for(0, groups, grain, [&](int64_t begin, int64_t end) {
    const int64_t data = n * lanes, work = plan.scratch() * lanes;
    auto buf = hwy::AllocateAligned<T>(static_cast<size_t>(2 * (data + work)));
    const Planes<T> x{buf.get(), buf.get() + data}, w{buf.get() + 2 * data, buf.get() + 2 * data + work};
    for (int64_t gi = begin; gi < end; ++gi) {
      const Group<T> g = group(gi);
      gather(g, n, x, lanes);
      scatter(execute(plan, x, w, lanes), n, g, lanes);
    }
  });
}

// The one-sided transform of real rows [rows, n] into [rows, n / 2 + 1]. `plan` is the complex
// transform of length n / 2 for an even n (tw: exp(-2 pi i k / n), k <= n / 2), of n for an odd n.
template <class T>
void r2c_typed(const Plan<T>& plan, const T* tw_re, const T* tw_im, const T* x, complex<T>* y, int64_t rows,
               int64_t n) {
  const int64_t h = n / 2, lanes = batch_lanes<T>(rows), groups = (rows + lanes - 1) / lanes;
  const bool even = n % 2 == 0;
  const int64_t len = plan.n;  // h or n
  const int64_t grain = std::max<int64_t>(1, kGrainSize / (4 * n * lanes));
  parallel_for(0, groups, grain, [&](int64_t begin, int64_t end) {
    // the untangled spectrum (h + 1 elements per lane) goes to whichever buffer the transform left
    const int64_t data = (len + 1) * lanes, work = std::max(plan.scratch(), len + 1) * lanes;
    auto buf = hwy::AllocateAligned<T>(static_cast<size_t>(2 * (data + work)));
    const Planes<T> z{buf.get(), buf.get() + data}, w{buf.get() + 2 * data, buf.get() + 2 * data + work};
    for (int64_t gi = begin; gi < end; ++gi) {
      const int64_t r0 = gi * lanes, count = std::min(lanes, rows - r0);
      // even: z[j] = x[2j] + i x[2j+1]; odd: z[j] = x[j]
      for (int64_t b = 0; b < lanes; ++b) {
        if (b >= count) {
          for (int64_t j = 0; j < len; ++j) z.re[j * lanes + b] = z.im[j * lanes + b] = T(0);
          continue;
        }
        const T* row = x + (r0 + b) * n;
        if (lanes == 1 && even) {
          over<T>(len, [&](auto d, int64_t j) {
            hn::Vec<decltype(d)> re, im;
            hn::LoadInterleaved2(d, row + 2 * j, re, im);
            hn::StoreU(re, d, z.re + j);
            hn::StoreU(im, d, z.im + j);
          });
          continue;
        }
        for (int64_t j = 0; j < len; ++j) {
          z.re[j * lanes + b] = even ? row[2 * j] : row[j];
          z.im[j * lanes + b] = even ? row[2 * j + 1] : T(0);
        }
      }
      const Planes<T> f = execute(plan, z, w, lanes);
      if (!even) {
        scatter(f, h + 1, Group<T>{y + r0 * (h + 1), count, 1, h + 1}, lanes);
        continue;
      }
      // X[k] = E + w^k O with E = (Z[k] + conj Z[h-k]) / 2, O = -i (Z[k] - conj Z[h-k]) / 2, Z[h] = Z[0]
      const auto untangle = [](auto d, auto pr, auto pi, auto qr, auto qi, auto wr, auto wi, T* re, T* im) {
        const auto half = hn::Set(d, T(0.5));
        const auto er = hn::Mul(half, hn::Add(pr, qr)), ei = hn::Mul(half, hn::Sub(pi, qi));
        auto odr = hn::Mul(half, hn::Add(pi, qi)), odi = hn::Mul(half, hn::Sub(qr, pr));
        cmul(odr, odi, wr, wi);
        hn::StoreU(hn::Add(er, odr), d, re);
        hn::StoreU(hn::Add(ei, odi), d, im);
      };
      const Planes<T> out = f.re == z.re ? w : z;
      if (lanes == 1) {  // one row: vectorized along it, Z[h - k] read backwards
        const hn::ScalableTag<T> d;
        const int64_t N = static_cast<int64_t>(hn::Lanes(d));
        int64_t k = 1;
        for (; k + N <= h; k += N) {
          const auto qr = hn::Reverse(d, hn::LoadU(d, f.re + h - k - N + 1));
          const auto qi = hn::Reverse(d, hn::LoadU(d, f.im + h - k - N + 1));
          untangle(d, hn::LoadU(d, f.re + k), hn::LoadU(d, f.im + k), qr, qi, hn::LoadU(d, tw_re + k),
                   hn::LoadU(d, tw_im + k), out.re + k, out.im + k);
        }
        const hn::CappedTag<T, 1> d1;
        for (; k < h; ++k)
          untangle(d1, hn::Set(d1, f.re[k]), hn::Set(d1, f.im[k]), hn::Set(d1, f.re[h - k]), hn::Set(d1, f.im[h - k]),
                   hn::Set(d1, tw_re[k]), hn::Set(d1, tw_im[k]), out.re + k, out.im + k);
        out.re[0] = f.re[0] + f.im[0];
        out.im[0] = T(0);
        out.re[h] = f.re[0] - f.im[0];
        out.im[h] = T(0);
      } else {
        for (int64_t k = 0; k <= h; ++k) {
          const int64_t kk = k % h, mk = (h - k) % h;
          over<T>(lanes, [&](auto d, int64_t b) {
            untangle(d, hn::LoadU(d, f.re + kk * lanes + b), hn::LoadU(d, f.im + kk * lanes + b),
                     hn::LoadU(d, f.re + mk * lanes + b), hn::LoadU(d, f.im + mk * lanes + b), hn::Set(d, tw_re[k]),
                     hn::Set(d, tw_im[k]), out.re + k * lanes + b, out.im + k * lanes + b);
          });
        }
      }
      scatter(out, h + 1, Group<T>{y + r0 * (h + 1), count, 1, h + 1}, lanes);
    }
  });
}

}  // namespace

void fft_c2c_f32(const Plan<float>& plan, complex<float>* base, int64_t outer, int64_t inner) {
  c2c_typed(plan, base, outer, inner);
}
void fft_c2c_f64(const Plan<double>& plan, complex<double>* base, int64_t outer, int64_t inner) {
  c2c_typed(plan, base, outer, inner);
}
void fft_r2c_f32(const Plan<float>& plan, const float* twr, const float* twi, const float* x, complex<float>* y,
                 int64_t rows, int64_t n) {
  r2c_typed(plan, twr, twi, x, y, rows, n);
}
void fft_r2c_f64(const Plan<double>& plan, const double* twr, const double* twi, const double* x,
                 complex<double>* y, int64_t rows, int64_t n) {
  r2c_typed(plan, twr, twi, x, y, rows, n);
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(fft_c2c_f32);
HWY_EXPORT(fft_c2c_f64);
HWY_EXPORT(fft_r2c_f32);
HWY_EXPORT(fft_r2c_f64);

namespace {
using fft_plan::Plan;

constexpr double kPi = 3.14159265358979323846;
// Factors above this run Bluestein's algorithm (a generic radix-p butterfly costs p^2).
constexpr int64_t kMaxDirectFactor = 13;

// exp(sign * 2 pi i num / den), accurate for large num (reduced in integers first) and exact at
// quarter turns: the angle is reduced to its first octant, where cos and sin are computed, and the
// quadrant applied by swapping and negating (so the real transform's Nyquist bin, whose twiddle
// is -1, has an imaginary part of exactly 0, as libtorch's).
complex<double> root(int64_t num, int64_t den, int sign) {
  const int64_t quarter = 4 * (num % den), q = quarter / den, rem = quarter % den;  // rem / den of a quarter turn
  const bool upper = 2 * rem > den;  // past the octant: the complementary angle, cos and sin swapped
  const double a = kPi / 2 * static_cast<double>(upper ? den - rem : rem) / static_cast<double>(den);
  const double c = upper ? std::sin(a) : std::cos(a), s = upper ? std::cos(a) : std::sin(a);
  const double re[] = {c, -s, -c, s}, im[] = {s, c, -s, -c};
  return {re[q], sign * im[q]};
}

template <class T>
void push(std::vector<T>& re, std::vector<T>& im, complex<double> v) {
  re.push_back(static_cast<T>(v.real()));
  im.push_back(static_cast<T>(v.imag()));
}

void c2c(const Plan<float>& plan, complex<float>* base, int64_t outer, int64_t inner) {
  HWY_DYNAMIC_DISPATCH(fft_c2c_f32)(plan, base, outer, inner);
}
void c2c(const Plan<double>& plan, complex<double>* base, int64_t outer, int64_t inner) {
  HWY_DYNAMIC_DISPATCH(fft_c2c_f64)(plan, base, outer, inner);
}

std::vector<int64_t> factorize(int64_t n) {
  std::vector<int64_t> f;
  while (n % 4 == 0) {
    f.push_back(4);
    n /= 4;
  }
  if (n % 2 == 0) {
    f.push_back(2);
    n /= 2;
  }
  for (int64_t p = 3; p * p <= n; p += 2) {
    while (n % p == 0) {
      f.push_back(p);
      n /= p;
    }
  }
  if (n > 1) f.push_back(n);
  return f;
}

// The smallest length >= n whose factors are 2 and 3 (Bluestein's inner transform: the radices
// with butterflies of their own).
int64_t good_size(int64_t n) {
  int64_t best = 1;
  while (best < n) best *= 2;
  for (int64_t f3 = 1; f3 < best; f3 *= 3) {
    int64_t v = f3;
    while (v < n) v *= 2;
    best = std::min(best, v);
  }
  return best;
}

template <class T>
std::shared_ptr<const Plan<T>> get_plan(int64_t n, int sign);

template <class T>
std::shared_ptr<const Plan<T>> make_plan(int64_t n, int sign) {
  auto plan = std::make_shared<Plan<T>>();
  plan->n = n;
  plan->sign = sign;
  const std::vector<int64_t> f = factorize(n);
  if (!f.empty() && *std::max_element(f.begin(), f.end()) > kMaxDirectFactor) {
    plan->bluestein = true;
    const int64_t big = good_size(2 * n - 1);
    plan->big = big;
    plan->inner_fwd = get_plan<T>(big, -1);
    plan->inner_inv = get_plan<T>(big, +1);
    for (int64_t k = 0; k < n; ++k) {  // exp(sign pi i k^2 / n) = root(k^2 mod 2n, 2n)
      const int64_t k2 = static_cast<int64_t>((static_cast<unsigned __int128>(k) * k) % (2 * n));
      push(plan->chirp_re, plan->chirp_im, root(k2, 2 * n, sign));
    }
    // filter b[k] = conj(chirp[|k|]) on the circle of length big, scaled by 1 / big for the
    // inverse, transformed once
    std::vector<complex<T>> b(static_cast<size_t>(big), complex<T>(0));
    const T scale = T(1) / static_cast<T>(big);
    for (int64_t k = 0; k < n; ++k) {
      const size_t i = static_cast<size_t>(k);
      const complex<T> v(plan->chirp_re[i] * scale, -plan->chirp_im[i] * scale);
      b[static_cast<size_t>(k)] = v;
      if (k > 0) b[static_cast<size_t>(big - k)] = v;
    }
    c2c(*plan->inner_fwd, b.data(), 1, 1);
    for (const complex<T>& v : b) {
      plan->filter_re.push_back(v.real());
      plan->filter_im.push_back(v.imag());
    }
    // Position `pos` of the in-place forward transform holds frequency k: block r of a stage of
    // radix p holds the frequencies r + p k' of its sub-transform.
    for (int64_t pos = 0; pos < big; ++pos) {
      int64_t k = 0, radices = 1, rest = pos;
      for (const auto& st : plan->inner_fwd->stages) {
        k += rest / st.m * radices;
        rest %= st.m;
        radices *= st.p;
      }
      plan->filter_dif_re.push_back(plan->filter_re[static_cast<size_t>(k)]);
      plan->filter_dif_im.push_back(plan->filter_im[static_cast<size_t>(k)]);
    }
    return plan;
  }
  int64_t len = n, s = 1;
  for (int64_t p : f) {
    typename Plan<T>::Stage st{p, len / p, s, {}, {}, {}, {}};
    for (int64_t j = 0; j < st.m; ++j)
      for (int64_t r = 1; r < p; ++r) push(st.tw_re, st.tw_im, root(j * r, len, sign));
    if (p > 4)
      for (int64_t q = 0; q < p; ++q) push(st.root_re, st.root_im, root(q, p, sign));
    plan->stages.push_back(std::move(st));
    len /= p;
    s *= p;
  }
  return plan;
}

template <class T>
std::shared_ptr<const Plan<T>> get_plan(int64_t n, int sign) {
  static std::mutex mu;
  static std::map<std::pair<int64_t, int>, std::shared_ptr<const Plan<T>>> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find({n, sign});
    if (it != cache.end()) return it->second;
  }
  auto plan = make_plan<T>(n, sign);  // outside the lock: Bluestein plans ask for inner plans
  std::lock_guard<std::mutex> lock(mu);
  return cache.emplace(std::make_pair(n, sign), plan).first->second;
}

template <class T>
void c2c_dim_typed(const Tensor& data, int64_t dim, bool forward) {
  const int64_t n = data.size(dim);
  if (n <= 1 || data.numel() == 0) return;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < dim; ++i) outer *= data.size(i);
  for (int64_t i = dim + 1; i < data.dim(); ++i) inner *= data.size(i);
  c2c(*get_plan<T>(n, forward ? -1 : 1), static_cast<complex<T>*>(data.data_ptr()), outer, inner);
}

// exp(-2 pi i k / n) for k <= n / 2, cached per n: the untangling step of the real transform.
template <class T>
struct R2CTwiddles {
  std::vector<T> re, im;
};
template <class T>
std::shared_ptr<const R2CTwiddles<T>> r2c_twiddles(int64_t n) {
  static std::mutex mu;
  static std::map<int64_t, std::shared_ptr<const R2CTwiddles<T>>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[n];
  if (!slot) {
    auto tw = std::make_shared<R2CTwiddles<T>>();
    for (int64_t k = 0; k <= n / 2; ++k) push(tw->re, tw->im, root(k, n, -1));
    slot = std::move(tw);
  }
  return slot;
}

template <class T, class Kernel>
void r2c_rows_typed(const Tensor& out, const Tensor& in, int64_t n, Kernel kernel) {
  const int64_t rows = n == 0 ? 0 : in.numel() / n;
  if (rows == 0) return;
  const auto plan = get_plan<T>(n % 2 == 0 ? n / 2 : n, -1);
  const auto tw = r2c_twiddles<T>(n);
  kernel(*plan, tw->re.data(), tw->im.data(), static_cast<const T*>(in.data_ptr()),
         static_cast<complex<T>*>(out.data_ptr()), rows, n);
}

}  // namespace

void fft_r2c_rows(const Tensor& out, const Tensor& in, int64_t n) {
  if (in.dtype() == kDouble) return r2c_rows_typed<double>(out, in, n, HWY_DYNAMIC_DISPATCH(fft_r2c_f64));
  r2c_rows_typed<float>(out, in, n, HWY_DYNAMIC_DISPATCH(fft_r2c_f32));
}

void fft_c2c_dim(const Tensor& data, int64_t dim, bool forward) {
  if (data.dtype() == kComplexDouble) return c2c_dim_typed<double>(data, dim, forward);
  c2c_dim_typed<float>(data, dim, forward);
}

}  // namespace ember::kernels
#endif  // HWY_ONCE
