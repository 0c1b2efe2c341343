// Value reductions (sum, prod, max, min, all, any and the transformed sums behind mean, norm,
// var and logsumexp), compiled for each SIMD target Highway selects at run time.
//
// Design. ReduceGeometry (reduce_geometry.h) numbers the outputs and the reduced positions of
// each output. Everything is built on one primitive,
//
//   accumulate(ob, oe, rb, re, acc):  acc[o - ob] = combination of element(x[o, r]), r in [rb, re)
//
// implemented three ways, picked from the geometry:
//   inner   - the innermost reduced dim is contiguous: each output reads its rows with four
//             vector accumulators and one horizontal reduce per row piece (an output whose
//             positions are one row within one leaf goes straight to it);
//   outer   - the innermost kept dim is contiguous in input and output: vectors span
//             neighbouring outputs and walk the reduced positions;
//   strided - a scalar walk for everything else (and for integer dtypes' odd layouts).
// Integer max/min and int64 sums use the vector rows too, and integer max/min the vector
// blocks across outputs.
// Position ranges are combined pairwise (a balanced tree whose leaves make about 64 serial
// additions per accumulator), so the error of a float32 sum grows like log(n), as with
// PyTorch's cascade sum; integer accumulation is exact and skips the tree.
//
// Threads: many outputs are split across threads; few outputs with long reductions (a full
// sum) split the positions instead, each thread keeping partial accumulators that are combined
// in thread order at the end. A Finish step turns accumulators into stored values (mean's
// division, norm's root, var's correction, logsumexp's log).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/reduce_kernels.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "core/parallel.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/hwy_util-inl.h"
#include "kernels/cpu/reduce.h"
#include "kernels/cpu/reduce_geometry.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace {

using K = ReduceKind;
using X = Transform;

// Leaves of the pairwise tree. Each keeps about 64 serial additions per accumulator: a vector
// leaf of 2048 elements spreads them over 4 vectors of 8 or 16 lanes.
constexpr int64_t kVectorLeaf = 2048;  // elements per leaf of a contiguous row
constexpr int64_t kScalarLeaf = 64;    // elements per leaf of a scalar walk
constexpr int64_t kOuterLeaf = 64;     // reduced positions per leaf when vectors span outputs
constexpr int64_t kChunk = 256;        // outputs accumulated at once (stack buffers)
// max/min over at most kFewPositions positions spanning kFewPositionsSpan bytes or more: read
// row by row (outer_rows)
constexpr int64_t kFewPositions = 16;
constexpr int64_t kFewPositionsSpan = int64_t{1} << 20;

// all/any test x != 0 on the bits, the sign bit of floats masked off (NaN is nonzero): an
// integer test that vectorizes, with no conversion of the 16-bit floats (all over a transposed
// float16 tensor ran 2x slower than libtorch converting them one at a time). They reduce the
// elements as their unsigned words (Bits<T>) with the dtype's mask as a run-time value, so one
// set of loops per width serves every dtype (a set per dtype was 88 KB more library), and take
// All as a flip: all is "no element is zero", so both combine "(x != 0) ^ flip" by or, and flip
// the result back.
template <class T>
using Bits = std::conditional_t<sizeof(T) == 1, uint8_t,
                                std::conditional_t<sizeof(T) == 2, uint16_t,
                                                   std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
template <class T>
constexpr Bits<T> magnitude_bits() {
  constexpr auto ones = static_cast<Bits<T>>(~Bits<T>(0));  // cast back: 16-bit ~ promotes to int
  return is_float_like_v<T> ? static_cast<Bits<T>>(ones >> 1) : ones;
}

// acc[i] = acc[i] && x[i] != 0 (flip 1) or acc[i] || x[i] != 0 (flip 0), as one vectorized loop:
// the pointers do not overlap, and the bools are read as their bytes (GCC vectorizes neither a
// bool loop nor one whose pointers may alias). Not inlined: one copy per width serves every dtype
// and both reductions (inlined into each, they were 27 KB of library).
template <class U>
HWY_NOINLINE void combine_nonzero(bool* acc_bools, const U* __restrict x, int64_t n, U magnitude, uint8_t flip) {
  uint8_t* __restrict acc = reinterpret_cast<uint8_t*>(acc_bools);
  for (int64_t i = 0; i < n; ++i)
    acc[i] = static_cast<uint8_t>(((acc[i] ^ flip) | (static_cast<uint8_t>((x[i] & magnitude) != 0) ^ flip)) ^ flip);
}
template <class U>
HWY_NOINLINE bool reduce_nonzero(const U* x, int64_t n, U magnitude, uint8_t flip) {
  uint8_t acc = 0;
  for (int64_t i = 0; i < n; ++i) acc |= static_cast<uint8_t>(static_cast<uint8_t>((x[i] & magnitude) != 0) ^ flip);
  return acc ^ flip;
}

// How elements of storage type T become accumulators of type A and how those combine. The
// vector interface (float dtypes) works on compute vectors, whose lanes are A.
template <class T, class A, ReduceKind Kind, Transform Xf>
struct Reducer {
  using Acc = A;
  static constexpr ReduceKind kKind = Kind;
  static constexpr Transform kTransform = Xf;
  // Integer max/min, and int64 sums, combine lanes of the element's own type, so their rows run
  // on vectors too: GCC vectorized the scalar loop with one accumulator, a chain of dependent
  // instructions (amax of int32 rows 1.6x libtorch's time, int64 sums 1.35x). 8-bit lanes have
  // no MaxOfLanes.
  static constexpr bool kIntVector = std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) >= 2 &&
                                     std::is_same_v<T, A> && Xf == X::None &&
                                     (Kind == K::Max || Kind == K::Min || Kind == K::Sum);
  static constexpr bool kVector =
      (is_float_like_v<T> && Kind != K::All && Kind != K::Any && Xf != X::AbsPow) || kIntVector;
  static constexpr bool kParam = Xf == X::SquaredDeviation || Xf == X::ExpShifted;
  double p = 2;
  T magnitude = T();  // all/any (T is then a Bits word): the bits that make an element nonzero

  static Acc identity() {
    using Lim = std::numeric_limits<Acc>;
    if constexpr (Kind == K::Sum) return Acc(0);
    else if constexpr (Kind == K::Prod) return Acc(1);
    else if constexpr (Kind == K::All) return true;
    else if constexpr (Kind == K::Any) return false;
    else if constexpr (Lim::has_infinity) return Kind == K::Max ? -Lim::infinity() : Lim::infinity();
    else return Kind == K::Max ? Lim::lowest() : Lim::max();
  }

  static Acc combine(Acc a, Acc b) {
    if constexpr (Kind == K::Sum) {
      return wrap_add(a, b);
    } else if constexpr (Kind == K::Prod) {
      return wrap_mul(a, b);
    } else if constexpr (Kind == K::All) {
      return a && b;
    } else if constexpr (Kind == K::Any) {
      return a || b;
    } else {
      if constexpr (std::is_floating_point_v<Acc>) {  // NaN propagates
        if (std::isnan(a)) return a;
        if (std::isnan(b)) return b;
      }
      if constexpr (Kind == K::Max) return b > a ? b : a;
      else return b < a ? b : a;
    }
  }

  Acc element(T x, Acc param) const {
    if constexpr (Kind == K::All || Kind == K::Any) {
      return (x & magnitude) != 0;
    } else {
      const Acc v = static_cast<Acc>(x);
      if constexpr (Xf == X::None) return v;
      else if constexpr (Xf == X::Abs) return std::abs(v);
      else if constexpr (Xf == X::Square) return v * v;
      else if constexpr (Xf == X::AbsPow) return std::pow(std::abs(v), static_cast<Acc>(p));
      else if constexpr (Xf == X::NonZero) return v != 0 ? Acc(1) : Acc(0);
      else if constexpr (Xf == X::SquaredDeviation) return (v - param) * (v - param);
      else return std::exp(v - param);
    }
  }

  template <class D>
  static hn::Vec<D> videntity(D d) {
    return hn::Set(d, identity());
  }
  template <class V>
  static V vcombine(V a, V b) {
    if constexpr (Kind == K::Sum) {
      return hn::Add(a, b);
    } else if constexpr (Kind == K::Prod) {
      return hn::Mul(a, b);
    } else if constexpr (!std::is_floating_point_v<Acc>) {
      return Kind == K::Max ? hn::Max(a, b) : hn::Min(a, b);
    } else {
      const V m = Kind == K::Max ? hn::Max(a, b) : hn::Min(a, b);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
      // x86's max and min return their second operand when either is NaN: b's NaN comes
      // through m, and a's (the accumulator's) is kept by the blend. One compare instead of two.
      return hn::IfThenElse(hn::IsNaN(a), a, m);
#else
      return hn::IfThenElse(hn::IsNaN(a), a, hn::IfThenElse(hn::IsNaN(b), b, m));
#endif
    }
  }
  template <class D, class V>
  static V velement(D d, V x, V param) {
    if constexpr (Xf == X::None) {
      return x;
    } else if constexpr (Xf == X::Abs) {
      return hn::Abs(x);
    } else if constexpr (Xf == X::Square) {
      return hn::Mul(x, x);
    } else if constexpr (Xf == X::NonZero) {
      return hn::IfThenElseZero(hn::Ne(x, hn::Zero(d)), hn::Set(d, Acc(1)));
    } else if constexpr (Xf == X::SquaredDeviation) {
      const V dev = hn::Sub(x, param);
      return hn::Mul(dev, dev);
    } else {  // ExpShifted: Highway's Exp is only valid up to its overflow bound, and drops NaN
      const V y = hn::Sub(x, param);
      const Acc max_log = sizeof(Acc) == 4 ? Acc(88.72283f) : Acc(709.782712893384);
      V e = hn::Exp(d, y);
      e = hn::IfThenElse(hn::Gt(y, hn::Set(d, max_log)), hn::Set(d, std::numeric_limits<Acc>::infinity()), e);
      return hn::IfThenElse(hn::IsNaN(y), y, e);
    }
  }
  // The combination of v's lanes; with a NaN lane, max and min return the first.
  template <class D>
  static Acc vreduce(D d, hn::Vec<D> v) {
    if constexpr (Kind == K::Sum) {
      return hn::GetLane(hn::SumOfLanes(d, v));
    } else if constexpr ((Kind == K::Max || Kind == K::Min) && !std::is_floating_point_v<Acc>) {
      return hn::GetLane(Kind == K::Max ? hn::MaxOfLanes(d, v) : hn::MinOfLanes(d, v));
    } else if constexpr (Kind == K::Max || Kind == K::Min) {
      const auto nan = hn::IsNaN(v);
      if (HWY_LIKELY(hn::AllFalse(d, nan))) return hn::GetLane(Kind == K::Max ? hn::MaxOfLanes(d, v) : hn::MinOfLanes(d, v));
      HWY_ALIGN Acc lanes[hn::MaxLanes(d)];
      hn::Store(v, d, lanes);
      return lanes[hn::FindFirstTrue(d, nan)];
    } else {  // a product, halving the vector: a few vector multiplies, not a serial chain
      if constexpr (hn::MaxLanes(d) * sizeof(Acc) > 16) {
        const hn::Half<D> dh;
        return vreduce(dh, hn::Mul(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
      } else if constexpr (sizeof(Acc) == 4) {
        v = hn::Mul(v, hn::Shuffle1032(v));
        return hn::GetLane(hn::Mul(v, hn::Shuffle0321(v)));
      } else {
        return hn::GetLane(hn::Mul(v, hn::Shuffle01(v)));
      }
    }
  }
};

// Combines the contiguous elements x[0, n): four vector accumulators, one horizontal reduction.
template <class R, class T>
typename R::Acc reduce_row(const R& r, const T* x, int64_t n, typename R::Acc param) {
  int64_t i = 0;
  typename R::Acc acc = R::identity();
  if constexpr (R::kKind == K::All || R::kKind == K::Any) {
    return reduce_nonzero(x, n, r.magnitude, R::kKind == K::All);
  } else if constexpr (R::kVector) {
    const DC<T> d;
    const int64_t N = static_cast<int64_t>(hn::Lanes(d));
    if (n >= N) {
      const auto vp = hn::Set(d, param);
      auto a0 = R::videntity(d), a1 = a0, a2 = a0, a3 = a0;
      for (; i + 4 * N <= n; i += 4 * N) {
        a0 = R::vcombine(a0, R::velement(d, LoadAny(d, x + i), vp));
        a1 = R::vcombine(a1, R::velement(d, LoadAny(d, x + i + N), vp));
        a2 = R::vcombine(a2, R::velement(d, LoadAny(d, x + i + 2 * N), vp));
        a3 = R::vcombine(a3, R::velement(d, LoadAny(d, x + i + 3 * N), vp));
      }
      for (; i + N <= n; i += N) a0 = R::vcombine(a0, R::velement(d, LoadAny(d, x + i), vp));
      acc = R::vreduce(d, R::vcombine(R::vcombine(a0, a1), R::vcombine(a2, a3)));
    }
  }
  for (; i < n; ++i) acc = R::combine(acc, r.element(x[i], param));
  return acc;
}

// Splits [b, e) in a balanced tree whose leaves (at most `leaf` long, left parts a multiple of
// it) are computed by f and combined pairwise.
template <class R, class F>
typename R::Acc pairwise(int64_t b, int64_t e, int64_t leaf, const F& f) {
  if (e - b <= leaf) return f(b, e);
  const int64_t half = ((e - b) / 2 + leaf - 1) / leaf * leaf;
  const typename R::Acc left = pairwise<R>(b, b + half, leaf, f);
  return R::combine(left, pairwise<R>(b + half, e, leaf, f));
}

// acc[i] = finish(acc[i], param[i * param_stride]) for i < n (param_stride in bytes): one loop
// per finish step and accumulator type, whatever the reduction.
template <class Acc>
void finish_in_place(Acc* acc, int64_t n, const ReduceSpec& spec, const char* param, int64_t param_stride) {
  if constexpr (std::is_floating_point_v<Acc>) {
    const Acc divisor = static_cast<Acc>(spec.divisor);
    switch (spec.finish) {
      case Finish::None:
        break;
      case Finish::Divide:
        for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] / divisor;
        break;
      case Finish::Sqrt:
        for (int64_t i = 0; i < n; ++i) acc[i] = std::sqrt(acc[i]);
        break;
      case Finish::DivideSqrt:
        for (int64_t i = 0; i < n; ++i) acc[i] = std::sqrt(acc[i] / divisor);
        break;
      case Finish::Root: {
        const Acc root = static_cast<Acc>(1.0 / spec.p);
        for (int64_t i = 0; i < n; ++i) acc[i] = std::pow(acc[i], root);
        break;
      }
      case Finish::LogAddParam:
        for (int64_t i = 0; i < n; ++i)
          acc[i] = std::log(acc[i]) + *reinterpret_cast<const Acc*>(param + i * param_stride);
        break;
    }
  }
}

// out[i * stride] = acc[i] for i < n (stride in bytes), converted.
template <class Out, class Acc>
void store_run(const Acc* acc, int64_t n, char* out, int64_t stride) {
  if (stride == int64_t{sizeof(Out)}) {
    Out* o = reinterpret_cast<Out*>(out);  // contiguous: a loop the compiler vectorizes
    for (int64_t i = 0; i < n; ++i) o[i] = cast<Out>(acc[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) *reinterpret_cast<Out*>(out + i * stride) = cast<Out>(acc[i]);
  }
}

template <class R, class T, class Out>
class ReduceLoop {
  using Acc = typename R::Acc;
  // Integer and bool accumulation is exact: no tree needed.
  static constexpr int64_t kExactLeaf = int64_t{1} << 62;
  static constexpr bool kExact = !std::is_floating_point_v<Acc>;
  static constexpr int64_t kRowLeaf = kExact ? kExactLeaf : R::kVector ? kVectorLeaf : kScalarLeaf;
  static constexpr int64_t kWalkLeaf = kExact ? kExactLeaf : kScalarLeaf;
  static constexpr int64_t kColumnLeaf = kExact ? kExactLeaf : kOuterLeaf;
  // Integer sums without a transform (exact in any order)
  static constexpr bool kIntSum = kExact && R::kKind == K::Sum && R::kTransform == X::None;
  // ... into outputs of the accumulator's type: summed straight into them on the outer path
  static constexpr bool kIntoOut = kIntSum && std::is_same_v<Out, Acc>;
  // max/min of elements that are their own accumulators (integers, float32, float64): vector
  // reducers with no transform and no parameter, whose rows outer_rows combines as they are
  static constexpr bool kRowRuns = R::kVector && std::is_same_v<T, Acc> && R::kTransform == X::None &&
                                   (R::kKind == K::Max || R::kKind == K::Min);

 public:
  ReduceLoop(const R& r, const ReduceGeometry& g, const Tensor& out, const Tensor& in, const ReduceSpec& spec)
      : r_(r), g_(g), spec_(spec), in_(static_cast<const char*>(in.data_ptr())),
        out_(static_cast<char*>(out.data_ptr())),
        param_(spec.param.defined() ? static_cast<const char*>(spec.param.data_ptr()) : nullptr) {
    const int64_t es = sizeof(T);
    if (g.nreduced() > 0 && g.reduced(0).stride[0] == es) {
      path_ = Path::Inner;
    } else if (g.nkept() > 0 && g.kept(0).stride[0] == es && g.kept(0).stride[1] == int64_t{sizeof(Out)} &&
               (!R::kParam || g.kept(0).stride[2] == int64_t{sizeof(Acc)})) {
      path_ = Path::Outer;
    }
  }

  void run() const {
    const int64_t no = g_.num_outputs(), rs = g_.reduce_size();
    if (no == 0) return;
    const int nt = detail::region_threads();
    // Split the outputs when there are many; split the positions when there are few, or when
    // a thread's share of neighbouring outputs would be narrower than a few cache lines.
    const bool few_outputs = no < 4 * nt || (path_ == Path::Outer && no <= kChunk);
    if (rs == 0 || rs < kGrainSize || !few_outputs || nt == 1 || in_parallel_region()) {
      const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(rs, 1));
      // Integer sums along the outer dims into an output of their own type are summed straight
      // into it: through the stack chunk and the copy out, 8 rows of 512K int64 took 1.2-1.8x the
      // time (the same loop on the same data, in a standalone test).
      const bool into_out = kIntoOut && path_ == Path::Outer && spec_.finish == Finish::None;
      parallel_for(0, no, grain, [&](int64_t b, int64_t e) {
        Acc acc[kChunk];
        for (int64_t o = b; o < e; o += kChunk) {
          const int64_t oe = std::min(e, o + kChunk);
          if (into_out && rs > 0) {
            accumulate(o, oe, 0, rs, nullptr);
            continue;
          }
          if (rs == 0) {
            std::fill(acc, acc + (oe - o), R::identity());
          } else {
            accumulate(o, oe, 0, rs, acc);
          }
          store(o, oe, acc);
        }
      });
      return;
    }
    // Few outputs, long reductions: each thread reduces a range of positions for every output.
    std::unique_ptr<Acc[]> partial(new Acc[static_cast<size_t>(nt * no)]);
    std::fill(partial.get(), partial.get() + nt * no, R::identity());
    parallel_for(0, rs, kGrainSize, [&](int64_t rb, int64_t re) {
      Acc* mine = partial.get() + omp_get_thread_num() * no;
      for (int64_t o = 0; o < no; o += kChunk) accumulate(o, std::min(no, o + kChunk), rb, re, mine + o);
    });
    for (int t = 1; t < nt; ++t)
      for (int64_t o = 0; o < no; ++o) partial[o] = R::combine(partial[o], partial[t * no + o]);
    store(0, no, partial.get());
  }

 private:
  enum class Path { Inner, Outer, Strided };

  Acc param_at(int64_t offset) const {
    if constexpr (R::kParam) return *reinterpret_cast<const Acc*>(param_ + offset);
    return Acc();
  }

  // acc null (the outer path only): into the outputs themselves, which have the type Acc.
  void accumulate(int64_t ob, int64_t oe, int64_t rb, int64_t re, Acc* acc) const {
    if (path_ == Path::Outer) {
      const LoopDim& col = g_.kept(0);
      for (int64_t o = ob; o < oe;) {
        const int64_t c0 = o % col.size, n = std::min(col.size - c0, oe - o);
        DimCursor row(g_.kept() + 1, g_.nkept() - 1, o / col.size);
        const Acc* param = nullptr;
        if constexpr (R::kParam) param = reinterpret_cast<const Acc*>(param_ + row.offset(2)) + c0;
        Acc* dst = acc + (o - ob);
        if constexpr (kIntoOut) {
          if (!acc) dst = reinterpret_cast<Acc*>(out_ + row.offset(1)) + c0;
        }
        outer_columns(in_ + row.offset(0) + c0 * col.stride[0], param, n, rb, re, dst);
        o += n;
      }
      return;
    }
    DimCursor cur(g_.kept(), g_.nkept(), ob);
    for (int64_t o = ob; o < oe; ++o, cur.next()) {
      const char* in = in_ + cur.offset(0);
      const Acc param = param_at(cur.offset(2));
      acc[o - ob] = path_ == Path::Inner ? inner_one(in, param, rb, re) : strided_one(in, param, rb, re);
    }
  }

  // Calls f(x, n, stride) for the positions [rb, re) in runs along the innermost reduced dim:
  // run element j is at byte x + j * stride. Only dims past the first need a cursor; one call
  // site, so f's body is compiled once.
  template <class F>
  void for_each_run(const char* in, int64_t rb, int64_t re, const F& f) const {
    const int nr = g_.nreduced();
    const int64_t len = nr > 0 ? g_.reduced(0).size : 1, stride = nr > 0 ? g_.reduced(0).stride[0] : 0;
    const bool nested = nr > 1;  // else one run, found without a division
    DimCursor rows(g_.reduced() + 1, nested ? nr - 1 : 0, nested ? rb / len : 0);
    for (int64_t col = nested ? rb % len : rb; rb < re; col = 0, rows.next()) {
      const int64_t n = std::min(len - col, re - rb);
      f(in + rows.offset(0) + col * stride, n, stride);
      rb += n;
    }
  }

  // One output whose innermost reduced dim is contiguous: row pieces through reduce_row.
  Acc inner_one(const char* in, Acc param, int64_t rb, int64_t re) const {
    // one run within one leaf (rows of a few hundred elements): no tree and no run walk, whose
    // set-up per output made float32 amax and int64 sums over rows of 256 1.2-1.4x libtorch's time
    if (g_.nreduced() == 1 && re - rb <= kRowLeaf)
      return reduce_row(r_, reinterpret_cast<const T*>(in + rb * int64_t{sizeof(T)}), re - rb, param);
    return pairwise<R>(rb, re, kRowLeaf, [&](int64_t b, int64_t e) {
      Acc acc = R::identity();
      for_each_run(in, b, e, [&](const char* x, int64_t n, int64_t) {
        acc = R::combine(acc, reduce_row(r_, reinterpret_cast<const T*>(x), n, param));
      });
      return acc;
    });
  }

  Acc strided_one(const char* in, Acc param, int64_t rb, int64_t re) const {
    return pairwise<R>(rb, re, kWalkLeaf, [&](int64_t b, int64_t e) {
      Acc acc = R::identity();
      for_each_run(in, b, e, [&](const char* x, int64_t n, int64_t stride) {
        for (int64_t j = 0; j < n; ++j, x += stride) acc = R::combine(acc, r_.element(*reinterpret_cast<const T*>(x), param));
      });
      return acc;
    });
  }

  // ncols neighbouring outputs whose inputs are contiguous: blocks of 4 vectors, then single
  // vectors, then a scalar remainder. Integer sums take the scalar loop, which GCC vectorizes
  // across the outputs (int64 sums over a dim of 256 ran 1.2x slower on vector blocks walking
  // it); integer max/min ran 1.4x libtorch's time on that loop, 0.8x on the blocks.
  void outer_columns(const char* in, const Acc* param, int64_t ncols, int64_t rb, int64_t re, Acc* acc) const {
    int64_t c = 0;
    if constexpr (R::kVector && (is_float_like_v<T> || R::kKind != K::Sum)) {
      const int64_t N = static_cast<int64_t>(hn::Lanes(DC<T>()));
      if constexpr (kRowRuns) {
        if (g_.nreduced() > 0 && re - rb <= kFewPositions &&
            (re - rb) * g_.reduced(0).stride[0] >= kFewPositionsSpan) {
          outer_rows(in, ncols / N * N, rb, re, acc);
          c = ncols / N * N;
        }
      }
      for (; c + 4 * N <= ncols; c += 4 * N) outer_block<4>(in + c * int64_t{sizeof(T)}, param, c, rb, re, acc + c);
      for (; c + N <= ncols; c += N) outer_block<1>(in + c * int64_t{sizeof(T)}, param, c, rb, re, acc + c);
    }
    if (c < ncols) outer_scalar(in + c * int64_t{sizeof(T)}, param, c, ncols - c, rb, re, acc + c);
  }

  // Max/min over a few positions far apart (amax over dim 0 of 8 rows of 2 MB): w columns (whole
  // vectors) of each position in turn, one contiguous run, combined into acc. Vector blocks read
  // the positions in pieces of 128 or 256 bytes, one from each row in turn: amax over dim 0 of
  // 8 x 512K took 1.1-1.5x libtorch's time in int32 and float32 (now 0.6 and 0.7). Where the rows
  // are in cache (8 x 8K) the blocks, whose accumulators stay in registers, are faster.
  void outer_rows(const char* in, int64_t w, int64_t rb, int64_t re, Acc* acc) const {
    const DC<T> d;
    const int64_t N = static_cast<int64_t>(hn::Lanes(d));
    for (int64_t v = 0; v < w; v += N) hn::StoreU(R::videntity(d), d, acc + v);
    for_each_run(in, rb, re, [&](const char* row, int64_t n, int64_t stride) {
      for (int64_t j = 0; j < n; ++j, row += stride) {
        const T* x = reinterpret_cast<const T*>(row);
        for (int64_t v = 0; v < w; v += N) hn::StoreU(R::vcombine(hn::LoadU(d, acc + v), LoadAny(d, x + v)), d, acc + v);
      }
    });
  }

  template <int NV>
  void outer_block(const char* in, const Acc* param, int64_t c, int64_t rb, int64_t re, Acc* acc) const {
    const DC<T> d;
    const size_t N = hn::Lanes(d);
    if (re - rb > kColumnLeaf) {
      const int64_t half = ((re - rb) / 2 + kColumnLeaf - 1) / kColumnLeaf * kColumnLeaf;
      outer_block<NV>(in, param, c, rb, rb + half, acc);
      HWY_ALIGN Acc right[NV * hn::MaxLanes(d)];
      outer_block<NV>(in, param, c, rb + half, re, right);
      for (int v = 0; v < NV; ++v)
        hn::StoreU(R::vcombine(hn::LoadU(d, acc + v * N), hn::Load(d, right + v * N)), d, acc + v * N);
      return;
    }
    hn::Vec<DC<T>> a[NV], p[NV];
    for (int v = 0; v < NV; ++v) {
      a[v] = R::videntity(d);
      p[v] = hn::Zero(d);
      if constexpr (R::kParam) p[v] = hn::LoadU(d, param + c + v * N);
    }
    for_each_run(in, rb, re, [&](const char* row, int64_t n, int64_t stride) {
      for (int64_t j = 0; j < n; ++j, row += stride) {
        const T* x = reinterpret_cast<const T*>(row);
        for (int v = 0; v < NV; ++v) a[v] = R::vcombine(a[v], R::velement(d, LoadAny(d, x + v * N), p[v]));
      }
    });
    for (int v = 0; v < NV; ++v) hn::StoreU(a[v], d, acc + v * N);
  }

  void outer_scalar(const char* in, const Acc* param, int64_t c, int64_t ncols, int64_t rb, int64_t re,
                    Acc* acc) const {
    if (re - rb > kColumnLeaf) {
      const int64_t half = ((re - rb) / 2 + kColumnLeaf - 1) / kColumnLeaf * kColumnLeaf;
      outer_scalar(in, param, c, ncols, rb, rb + half, acc);
      Acc right[kChunk];
      outer_scalar(in, param, c, ncols, rb + half, re, right);
      for (int64_t i = 0; i < ncols; ++i) acc[i] = R::combine(acc[i], right[i]);
      return;
    }
    // integer sums of 32- and 64-bit elements: the first eight positions are stored, not added
    // to a zeroed accumulator
    constexpr bool kBy8 = kIntSum && sizeof(T) >= 4;
    bool filled = !kBy8 || re - rb < 8;
    if (filled) std::fill(acc, acc + ncols, R::identity());
    for_each_run(in, rb, re, [&](const char* row, int64_t n, int64_t stride) {
      int64_t j = 0;
      if constexpr (kIntSum) {
        // integer sums eight (32- and 64-bit elements), then four positions at a time (exact in
        // any order): the accumulators loaded and stored once per eight or four rows read (int64
        // sum over dim 0 of 256 x 256: 1.5x libtorch's time a row at a time)
        Acc* HWY_RESTRICT a = acc;
        if constexpr (kBy8) {
          for (; j + 8 <= n; j += 8, row += 8 * stride) {
            const T* HWY_RESTRICT x[8];
            for (int k = 0; k < 8; ++k) x[k] = reinterpret_cast<const T*>(row + k * stride);
            auto sum8 = [&](int64_t i) {
              return ((static_cast<Acc>(x[0][i]) + static_cast<Acc>(x[1][i])) +
                      (static_cast<Acc>(x[2][i]) + static_cast<Acc>(x[3][i]))) +
                     ((static_cast<Acc>(x[4][i]) + static_cast<Acc>(x[5][i])) +
                      (static_cast<Acc>(x[6][i]) + static_cast<Acc>(x[7][i])));
            };
            if (filled) {
              for (int64_t i = 0; i < ncols; ++i) a[i] += sum8(i);
            } else {
              for (int64_t i = 0; i < ncols; ++i) a[i] = sum8(i);
              filled = true;
            }
          }
          if (!filled) {  // a run of fewer than 8 positions came first
            std::fill(acc, acc + ncols, R::identity());
            filled = true;
          }
        }
        for (; j + 4 <= n; j += 4, row += 4 * stride) {
          const T* HWY_RESTRICT x0 = reinterpret_cast<const T*>(row);
          const T* HWY_RESTRICT x1 = reinterpret_cast<const T*>(row + stride);
          const T* HWY_RESTRICT x2 = reinterpret_cast<const T*>(row + 2 * stride);
          const T* HWY_RESTRICT x3 = reinterpret_cast<const T*>(row + 3 * stride);
          for (int64_t i = 0; i < ncols; ++i) {
            const Acc pair0 = R::combine(static_cast<Acc>(x0[i]), static_cast<Acc>(x1[i]));
            const Acc pair1 = R::combine(static_cast<Acc>(x2[i]), static_cast<Acc>(x3[i]));
            a[i] = R::combine(a[i], R::combine(pair0, pair1));
          }
        }
      }
      for (; j < n; ++j, row += stride) {
        const T* x = reinterpret_cast<const T*>(row);
        if constexpr (R::kKind == K::All || R::kKind == K::Any) {
          combine_nonzero(acc, x, ncols, r_.magnitude, R::kKind == K::All);
          continue;
        }
        for (int64_t i = 0; i < ncols; ++i) {
          Acc pi = Acc();
          if constexpr (R::kParam) pi = param[c + i];
          acc[i] = R::combine(acc[i], r_.element(x[i], pi));
        }
      }
    });
  }

  // Stores in runs along the innermost kept dim: a cursor step and a switch per output made
  // storing 3-4x the accumulation's time when each output reduces a few positions (sum over dim
  // 1 of 8x8x65536 took 4.2x libtorch's time). The finish step runs in place on the accumulators.
  void store(int64_t ob, int64_t oe, Acc* acc) const {
    if (g_.nkept() == 0) {
      finish_in_place(acc, 1, spec_, param_, 0);
      return store_run<Out>(acc, 1, out_, 0);
    }
    const LoopDim& col = g_.kept(0);
    for (int64_t o = ob; o < oe;) {
      const int64_t c0 = o % col.size, n = std::min(col.size - c0, oe - o);
      const DimCursor row(g_.kept() + 1, g_.nkept() - 1, o / col.size);
      finish_in_place(acc + (o - ob), n, spec_, param_ + row.offset(2) + c0 * col.stride[2], col.stride[2]);
      store_run<Out>(acc + (o - ob), n, out_ + row.offset(1) + c0 * col.stride[1], col.stride[1]);
      o += n;
    }
  }

  const R& r_;
  const ReduceGeometry& g_;
  const ReduceSpec& spec_;
  const char* in_;
  char* out_;
  const char* param_;
  Path path_ = Path::Strided;
};

template <class T, class A, ReduceKind Kind, Transform Xf, class Out>
void launch(const Tensor& out, const Tensor& in, const ReduceGeometry& g, const ReduceSpec& spec, T magnitude = T()) {
  constexpr bool kWide = std::is_same_v<T, float> || std::is_same_v<T, double>;
  if constexpr (HWY_TARGET == HWY_STATIC_TARGET || (is_float_like_v<T> && reduce_per_target(kWide, Kind, Xf))) {
    const Reducer<T, A, Kind, Xf> r{spec.p, magnitude};
    ReduceLoop<Reducer<T, A, Kind, Xf>, T, Out>(r, g, out, in, spec).run();
  } else {
    EMBER_CHECK(false, "reduce_kernel", "internal: reduction not compiled for this SIMD target");
  }
}

template <class T>
void reduce_typed(const Tensor& out, const Tensor& in, const ReduceGeometry& g, const ReduceSpec& s) {
  if (s.kind == K::All || s.kind == K::Any) {
    using U = Bits<T>;
    if (s.kind == K::All) return launch<U, bool, K::All, X::None, bool>(out, in, g, s, magnitude_bits<T>());
    return launch<U, bool, K::Any, X::None, bool>(out, in, g, s, magnitude_bits<T>());
  }
  if constexpr (is_float_like_v<T>) {
    using L = lane_t<T>;
    constexpr bool kWide = std::is_same_v<T, L>;  // parameters are only passed at full precision
    switch (s.kind) {
      case K::Sum:
        switch (s.transform) {
          case X::None: return launch<T, L, K::Sum, X::None, T>(out, in, g, s);
          case X::Abs: return launch<T, L, K::Sum, X::Abs, T>(out, in, g, s);
          case X::Square: return launch<T, L, K::Sum, X::Square, T>(out, in, g, s);
          case X::AbsPow: return launch<T, L, K::Sum, X::AbsPow, T>(out, in, g, s);
          case X::NonZero: return launch<T, L, K::Sum, X::NonZero, T>(out, in, g, s);
          case X::SquaredDeviation:
            if constexpr (kWide) return launch<T, L, K::Sum, X::SquaredDeviation, T>(out, in, g, s);
            break;
          case X::ExpShifted:
            if constexpr (kWide) return launch<T, L, K::Sum, X::ExpShifted, T>(out, in, g, s);
            break;
        }
        break;
      case K::Prod: return launch<T, L, K::Prod, X::None, T>(out, in, g, s);
      case K::Max:
        if (s.transform == X::Abs) return launch<T, L, K::Max, X::Abs, T>(out, in, g, s);
        return launch<T, L, K::Max, X::None, T>(out, in, g, s);
      case K::Min:
        if (s.transform == X::Abs) return launch<T, L, K::Min, X::Abs, T>(out, in, g, s);
        return launch<T, L, K::Min, X::None, T>(out, in, g, s);
      case K::All:
      case K::Any: break;  // (above)
    }
  } else {
    switch (s.kind) {
      case K::Sum: return launch<T, int64_t, K::Sum, X::None, int64_t>(out, in, g, s);
      case K::Prod: return launch<T, int64_t, K::Prod, X::None, int64_t>(out, in, g, s);
      case K::Max: return launch<T, T, K::Max, X::None, T>(out, in, g, s);
      case K::Min: return launch<T, T, K::Min, X::None, T>(out, in, g, s);
      case K::All:
      case K::Any: break;  // (above)
    }
  }
  EMBER_CHECK(false, "reduce_kernel", "unsupported reduction for dtype ", CppTypeToScalarType<T>::value);
}

}  // namespace

void reduce_kernel_impl(const Tensor& out, const Tensor& in, uint64_t reduce_mask, const ReduceSpec& spec) {
  const ReduceGeometry g(in, reduce_mask, out, spec.param);
  visit_dtype(in.dtype(), [&](auto v) {
    using T = decltype(v);
    // Integer and bool reductions, and the floating ones reduce_per_target leaves out, are
    // compiled for the static target alone (reduce_kernel sends them there): the integer loops
    // are scalar, and a copy per target was 280 KB of library.
    if constexpr (is_float_like_v<T> || HWY_TARGET == HWY_STATIC_TARGET) reduce_typed<T>(out, in, g, spec);
  });
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(reduce_kernel_impl);
void reduce_kernel(const Tensor& out, const Tensor& in, uint64_t reduce_mask, const ReduceSpec& spec) {
  const bool wide = in.dtype() == ScalarType::Float || in.dtype() == ScalarType::Double;
  if (is_floating_type(in.dtype()) && reduce_per_target(wide, spec.kind, spec.transform)) {
    HWY_DYNAMIC_DISPATCH(reduce_kernel_impl)(out, in, reduce_mask, spec);
  } else {
    HWY_STATIC_DISPATCH(reduce_kernel_impl)(out, in, reduce_mask, spec);
  }
}
}  // namespace ember::kernels
#endif
