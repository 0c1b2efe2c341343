// The vector loop of the float pointwise kernels, compiled once per SIMD target (include after
// hwy_util-inl.h in a file using foreach_target.h).
//
// A functor gives `vec(d, v0, ..., vK-1)` on compute vectors (float for Half/BFloat16). Contiguous
// operands and broadcast scalars (stride 0) stream straight through it; any other layout is
// gathered in chunks into compute-type buffers, run through the same `vec`, and scattered back,
// so each function has a single vector definition. A functor deriving from ScalarOnly instead
// gives `scalar(c0, ..., cK-1)` on compute scalars (functions without a good vector form).

#if defined(EMBER_KERNELS_POINTWISE_VEC_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_POINTWISE_VEC_INL_H_
#undef EMBER_KERNELS_POINTWISE_VEC_INL_H_
#else
#define EMBER_KERNELS_POINTWISE_VEC_INL_H_
#endif

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

#include "core/tensor_iterator.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/pointwise_loops.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {

struct ScalarOnly {};

// out[i] = f(in_0[i], ...) for contiguous operands; bcast[k] marks a stride-0 input. The one place
// each functor's vector code is compiled: every layout, and the partial vector that ends a row,
// come through the single call of f.vec below (a copy per layout and for the remainder, per
// functor, dtype and target, made the library a megabyte larger for no measurable speed).
template <class T, class F, size_t... I>
HWY_NOINLINE void map_contiguous(const F& f, T* out, const T* const* in, const bool* bcast, size_t n,
                                 std::index_sequence<I...>) {
  const DC<T> d;
  using V = hn::Vec<DC<T>>;
  const size_t N = hn::Lanes(d);
  const V b[sizeof...(I)] = {(bcast[I] ? hn::Set(d, static_cast<lane_t<T>>(in[I][0])) : hn::Zero(d))...};
  for (size_t i = 0; i < n; i += N) {
    const bool whole = HWY_LIKELY(i + N <= n);
    const V r = f.vec(d, (bcast[I] ? b[I] : whole ? LoadC(d, in[I] + i) : LoadCN(d, in[I] + i, n - i))...);
    if (whole) {
      StoreC(d, r, out + i);
    } else {
      StoreCN(d, r, out + i, n - i);
    }
  }
}

// Strided operands of a K-input kernel, gathered to and scattered from compute-type buffers in
// chunks (the same for every functor of a dtype).
template <class T, size_t K>
struct Chunks {
  using L = lane_t<T>;
  static constexpr int64_t kChunk = 256;
  HWY_ALIGN L buf[K][kChunk];
  HWY_ALIGN L res[kChunk];

  static HWY_NOINLINE void gather(L* dst, const char* p, int64_t stride, int64_t m) {
    for (int64_t j = 0; j < m; ++j) {
      T v;
      std::memcpy(&v, p + j * stride, sizeof(T));
      dst[j] = static_cast<L>(v);
    }
  }
  static HWY_NOINLINE void scatter(char* o, int64_t stride, const L* src, int64_t m) {
    for (int64_t j = 0; j < m; ++j) {
      const T v = static_cast<T>(src[j]);
      std::memcpy(o + j * stride, &v, sizeof(T));
    }
  }
};

template <class T, size_t K, class F>
HWY_INLINE void vec_loop(const F& f, char** data, const int64_t* s, int64_t n) {
  constexpr int64_t es = sizeof(T);
  bool contiguous = s[0] == es;
  bool bcast[K];
  const T* in[K];
  for (size_t k = 0; k < K; ++k) {
    bcast[k] = s[k + 1] == 0;
    contiguous = contiguous && (s[k + 1] == es || bcast[k]);
    in[k] = reinterpret_cast<const T*>(data[k + 1]);
  }
  if (contiguous) {
    map_contiguous(f, reinterpret_cast<T*>(data[0]), in, bcast, static_cast<size_t>(n), std::make_index_sequence<K>{});
    return;
  }
  using C = Chunks<T, K>;
  using L = typename C::L;
  C c;
  const L* bin[K];
  for (size_t k = 0; k < K; ++k) {
    bin[k] = c.buf[k];
    if (bcast[k]) c.buf[k][0] = static_cast<L>(in[k][0]);
  }
  for (int64_t i0 = 0; i0 < n; i0 += C::kChunk) {
    const int64_t m = std::min(C::kChunk, n - i0);
    for (size_t k = 0; k < K; ++k)
      if (!bcast[k]) C::gather(c.buf[k], data[k + 1] + i0 * s[k + 1], s[k + 1], m);
    map_contiguous(f, c.res, bin, bcast, static_cast<size_t>(m), std::make_index_sequence<K>{});
    C::scatter(data[0] + i0 * s[0], s[0], c.res, m);
  }
}

// Runs a K-input functor over the iterator (float storage type T).
template <class T, size_t K, class F>
HWY_INLINE void run_float(TensorIterator& iter, const F& f) {
  if constexpr (std::is_base_of_v<ScalarOnly, F>) {
    scalar_for_each<T, K>(iter, [&f](auto... x) { return f.scalar(x...); });
  } else {
    iter.for_each([&f](char** data, const int64_t* s, int64_t n) { vec_loop<T, K>(f, data, s, n); });
  }
}



// ---- functors shared by the pointwise and multi-tensor kernels ----------------------------------
struct MaximumF {
  template <class D, class V>
  HWY_INLINE V vec(D, V a, V b) const {
    return hn::IfThenElse(hn::Or(hn::IsNaN(a), hn::IsNaN(b)), hn::Add(a, b), hn::Max(a, b));
  }
};
// Lerp from the nearer end keeps lerp(a, b, 1) == b exactly (PyTorch's formula).
template <class D, class V>
HWY_INLINE V lerp(D d, V a, V b, V w) {
  const V diff = hn::Sub(b, a);
  const auto small = hn::Lt(hn::Abs(w), hn::Set(d, 0.5));
  return hn::IfThenElse(small, hn::MulAdd(w, diff, a), hn::NegMulAdd(diff, hn::Sub(hn::Set(d, 1.0), w), b));
}
template <class L>
struct LerpScalarF {
  L weight;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b) const { return lerp(d, a, b, hn::Set(d, weight)); }
};
struct LerpF {
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b, V w) const { return lerp(d, a, b, w); }
};
template <class L>
struct AddcmulF {
  L value;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b, V c) const { return hn::MulAdd(hn::Mul(hn::Set(d, value), b), c, a); }
};
template <class L>
struct AddcdivF {
  L value;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b, V c) const { return hn::Add(a, hn::Div(hn::Mul(hn::Set(d, value), b), c)); }
};

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_POINTWISE_VEC_INL_H_
