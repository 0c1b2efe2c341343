// Pointwise kernels, compiled for each SIMD target Highway selects at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/pointwise_kernels.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include "kernels/cpu/cast.h"
#include "kernels/cpu/hwy_util-inl.h"
#include "kernels/cpu/pointwise.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace {

// ---- binary functors: vec() on compute vectors, scalar() on compute scalars -----------------
template <class L>
struct AddF {
  L alpha;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b) const {
    return alpha == L(1) ? hn::Add(a, b) : hn::MulAdd(hn::Set(d, alpha), b, a);
  }
  HWY_INLINE L scalar(L a, L b) const { return wrap_add(a, wrap_mul(alpha, b)); }
};
template <class L>
struct SubF {
  L alpha;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b) const {
    return alpha == L(1) ? hn::Sub(a, b) : hn::NegMulAdd(hn::Set(d, alpha), b, a);
  }
  HWY_INLINE L scalar(L a, L b) const { return wrap_sub(a, wrap_mul(alpha, b)); }
};
template <class L>
struct MulF {
  template <class D, class V>
  HWY_INLINE V vec(D, V a, V b) const { return hn::Mul(a, b); }
  HWY_INLINE L scalar(L a, L b) const { return wrap_mul(a, b); }
};
template <class L>
struct DivF {
  template <class D, class V>
  HWY_INLINE V vec(D, V a, V b) const { return hn::Div(a, b); }
  HWY_INLINE L scalar(L a, L b) const { return a / b; }
};

// ---- loops ---------------------------------------------------------------------------------
// Contiguous output, each input contiguous (stride = element) or a broadcast scalar (stride 0).
template <bool SA, bool SB, class T, class F>
HWY_INLINE void binary_vec(const F& f, T* out, const T* a, const T* b, size_t n) {
  const DC<T> d;
  const size_t N = hn::Lanes(d);
  using V = hn::Vec<DC<T>>;
  V va0 = hn::Zero(d), vb0 = hn::Zero(d);
  if constexpr (SA) va0 = hn::Set(d, static_cast<lane_t<T>>(a[0]));
  if constexpr (SB) vb0 = hn::Set(d, static_cast<lane_t<T>>(b[0]));
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const V va = SA ? va0 : LoadC(d, a + i);
    const V vb = SB ? vb0 : LoadC(d, b + i);
    StoreC(d, f.vec(d, va, vb), out + i);
  }
  if (i < n) {
    const V va = SA ? va0 : LoadCN(d, a + i, n - i);
    const V vb = SB ? vb0 : LoadCN(d, b + i, n - i);
    StoreCN(d, f.vec(d, va, vb), out + i, n - i);
  }
}

template <class T, class F>
void binary_loop(const F& f, char** data, const int64_t* s, int64_t n) {
  constexpr int64_t es = sizeof(T);
  T* out = reinterpret_cast<T*>(data[0]);
  const T* a = reinterpret_cast<const T*>(data[1]);
  const T* b = reinterpret_cast<const T*>(data[2]);
  if constexpr (is_float_like_v<T>) {
    if (s[0] == es && (s[1] == es || s[1] == 0) && (s[2] == es || s[2] == 0)) {
      const size_t len = static_cast<size_t>(n);
      if (s[1] == 0 && s[2] == 0) {
        binary_vec<true, true>(f, out, a, b, len);
      } else if (s[1] == 0) {
        binary_vec<true, false>(f, out, a, b, len);
      } else if (s[2] == 0) {
        binary_vec<false, true>(f, out, a, b, len);
      } else {
        binary_vec<false, false>(f, out, a, b, len);
      }
      return;
    }
  } else if (s[0] == es && s[1] == es && s[2] == es) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(f.scalar(compute_t<T>(a[i]), compute_t<T>(b[i])));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    T x, y;
    std::memcpy(&x, data[1] + i * s[1], sizeof(T));
    std::memcpy(&y, data[2] + i * s[2], sizeof(T));
    const T r = static_cast<T>(f.scalar(static_cast<compute_t<T>>(x), static_cast<compute_t<T>>(y)));
    std::memcpy(data[0] + i * s[0], &r, sizeof(T));
  }
}

template <class T>
void binary_typed(TensorIterator& iter, BinaryOp op, const Scalar& alpha) {
  using L = compute_t<T>;
  auto run = [&](const auto& f) {
    iter.for_each([&f](char** data, const int64_t* strides, int64_t n) { binary_loop<T>(f, data, strides, n); });
  };
  switch (op) {
    case BinaryOp::Add: return run(AddF<L>{alpha.to<L>()});
    case BinaryOp::Sub: return run(SubF<L>{alpha.to<L>()});
    case BinaryOp::Mul: return run(MulF<L>{});
    case BinaryOp::Div: return run(DivF<L>{});
  }
}

}  // namespace

void binary_kernel_impl(TensorIterator& iter, BinaryOp op, const Scalar& alpha) {
  switch (iter.common_dtype()) {
    case kFloat: return binary_typed<float>(iter, op, alpha);
    case kDouble: return binary_typed<double>(iter, op, alpha);
    case kHalf: return binary_typed<Half>(iter, op, alpha);
    case kBFloat16: return binary_typed<BFloat16>(iter, op, alpha);
    case kByte: return binary_typed<uint8_t>(iter, op, alpha);
    case kChar: return binary_typed<int8_t>(iter, op, alpha);
    case kShort: return binary_typed<int16_t>(iter, op, alpha);
    case kInt: return binary_typed<int32_t>(iter, op, alpha);
    case kLong: return binary_typed<int64_t>(iter, op, alpha);
    case kBool: return binary_typed<bool>(iter, op, alpha);
    default: EMBER_CHECK(false, "binary_kernel", "unsupported dtype ", iter.common_dtype());
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(binary_kernel_impl);
void binary_kernel(TensorIterator& iter, BinaryOp op, const Scalar& alpha) {
  HWY_DYNAMIC_DISPATCH(binary_kernel_impl)(iter, op, alpha);
}
}  // namespace ember::kernels
#endif
