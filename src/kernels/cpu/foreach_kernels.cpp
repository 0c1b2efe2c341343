// Multi-tensor kernels (see foreach_kernels.h), compiled for each SIMD target Highway selects at
// run time. Half/BFloat16 are computed in float32 through LoadC/StoreC.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/foreach_kernels.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/foreach_kernels.h"
#include "kernels/cpu/hwy_util-inl.h"
#include "kernels/cpu/pointwise_vec-inl.h"

#ifndef EMBER_FOREACH_SPLIT_ONCE
#define EMBER_FOREACH_SPLIT_ONCE
namespace ember::kernels {
namespace {
// Calls f(item, begin, end) over the elements of all items, spread across threads as one range:
// a thread's share may start inside one tensor and end inside another.
template <class F>
void for_each_segment(const ForeachItem* items, int64_t n, int64_t grain, const F& f) {
  std::vector<int64_t> start(static_cast<size_t>(n) + 1, 0);
  for (int64_t i = 0; i < n; ++i) start[i + 1] = start[i] + items[i].numel;
  parallel_for(0, start[n], grain, [&](int64_t b, int64_t e) {
    int64_t i = std::upper_bound(start.begin(), start.end(), b) - start.begin() - 1;
    for (; b < e && i < n; ++i) {
      const int64_t hi = std::min(e, start[i + 1]);
      if (hi > b) f(i, b - start[i], hi - start[i]);
      b = std::max(b, hi);
    }
  });
}
// Element-wise work is a few flops per element; the fused Adam update does about ten.
constexpr int64_t kForeachGrain = 16384;
constexpr int64_t kAdamGrain = 4096;
}  // namespace
}  // namespace ember::kernels
#endif

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace {

// ---- element-wise functors: vec(d, a, ...) on compute vectors; `s` is the item's scalar -------
template <class L>
struct AddF {
  L s;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b) const { return s == L(1) ? hn::Add(a, b) : hn::MulAdd(hn::Set(d, s), b, a); }
};
template <class L>
struct AddScalarF {
  L s;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a) const { return hn::Add(a, hn::Set(d, s)); }
};
struct MulF {
  template <class D, class V>
  HWY_INLINE V vec(D, V a, V b) const { return hn::Mul(a, b); }
};
template <class L>
struct MulScalarF {
  L s;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a) const { return hn::Mul(a, hn::Set(d, s)); }
};
struct DivF {
  template <class D, class V>
  HWY_INLINE V vec(D, V a, V b) const { return hn::Div(a, b); }
};
template <class L>
struct DivScalarF {
  L s;
  template <class D, class V>
  HWY_INLINE V vec(D d, V a) const { return hn::Div(a, hn::Set(d, s)); }
};
struct SqrtF {
  template <class D, class V>
  HWY_INLINE V vec(D, V a) const { return hn::Sqrt(a); }
};
struct NegF {
  template <class D, class V>
  HWY_INLINE V vec(D, V a) const { return hn::Neg(a); }
};
struct AbsF {
  template <class D, class V>
  HWY_INLINE V vec(D, V a) const { return hn::Abs(a); }
};
struct CopyF {
  template <class D, class V>
  HWY_INLINE V vec(D, V, V src) const { return src; }
};

template <class T, size_t K, class MakeF>
void run_items(const ForeachItem* items, int64_t n, const MakeF& make) {
  for_each_segment(items, n, kForeachGrain, [&](int64_t i, int64_t b, int64_t e) {
    const ForeachItem& it = items[i];
    const auto f = make(it);
    const T* in[K > 0 ? K : 1];
    bool bcast[K > 0 ? K : 1] = {};
    for (size_t k = 0; k < K; ++k) in[k] = reinterpret_cast<const T*>(it.data[k + 1]) + b;
    map_contiguous(f, reinterpret_cast<T*>(it.data[0]) + b, in, bcast, static_cast<size_t>(e - b),
                   std::make_index_sequence<K>{});
  });
}

template <class T>
void scalar_items(const ForeachItem* items, int64_t n, ForeachOp op) {
  using C = compute_t<T>;
  for_each_segment(items, n, kForeachGrain, [&](int64_t i, int64_t b, int64_t e) {
    const ForeachItem& it = items[i];
    T* out = reinterpret_cast<T*>(it.data[0]);
    const T* a = reinterpret_cast<const T*>(it.data[1]);
    const C s = static_cast<C>(it.s[0]);
    for (int64_t j = b; j < e; ++j) out[j] = static_cast<T>(op == ForeachOp::Exp ? std::exp(static_cast<C>(a[j])) : s);
  });
}

template <class T>
void foreach_typed(ForeachOp op, const ForeachItem* items, int64_t n) {
  using L = lane_t<T>;
  auto sc = [](const ForeachItem& it) { return static_cast<L>(it.s[0]); };
  switch (op) {
    case ForeachOp::Add: return run_items<T, 2>(items, n, [&](const ForeachItem& it) { return AddF<L>{sc(it)}; });
    case ForeachOp::AddScalar:
      return run_items<T, 1>(items, n, [&](const ForeachItem& it) { return AddScalarF<L>{sc(it)}; });
    case ForeachOp::Mul: return run_items<T, 2>(items, n, [](const ForeachItem&) { return MulF{}; });
    case ForeachOp::MulScalar:
      return run_items<T, 1>(items, n, [&](const ForeachItem& it) { return MulScalarF<L>{sc(it)}; });
    case ForeachOp::Div: return run_items<T, 2>(items, n, [](const ForeachItem&) { return DivF{}; });
    case ForeachOp::DivScalar:
      return run_items<T, 1>(items, n, [&](const ForeachItem& it) { return DivScalarF<L>{sc(it)}; });
    case ForeachOp::Addcmul:
      return run_items<T, 3>(items, n, [&](const ForeachItem& it) { return AddcmulF<L>{sc(it)}; });
    case ForeachOp::Addcdiv:
      return run_items<T, 3>(items, n, [&](const ForeachItem& it) { return AddcdivF<L>{sc(it)}; });
    case ForeachOp::Lerp: return run_items<T, 2>(items, n, [&](const ForeachItem& it) { return LerpScalarF<L>{sc(it)}; });
    case ForeachOp::LerpTensor: return run_items<T, 3>(items, n, [](const ForeachItem&) { return LerpF{}; });
    case ForeachOp::Maximum: return run_items<T, 2>(items, n, [](const ForeachItem&) { return MaximumF{}; });
    case ForeachOp::Sqrt: return run_items<T, 1>(items, n, [](const ForeachItem&) { return SqrtF{}; });
    case ForeachOp::Neg: return run_items<T, 1>(items, n, [](const ForeachItem&) { return NegF{}; });
    case ForeachOp::Abs: return run_items<T, 1>(items, n, [](const ForeachItem&) { return AbsF{}; });
    case ForeachOp::Copy: return run_items<T, 2>(items, n, [](const ForeachItem&) { return CopyF{}; });
    case ForeachOp::Exp:
    case ForeachOp::Fill: return scalar_items<T>(items, n, op);
  }
}

// ---- norms ------------------------------------------------------------------------------------
// Adds a segment's partial result into an item's total (threads may share an item).
void accumulate(std::atomic<double>& total, double part, bool is_max) {
  double cur = total.load(std::memory_order_relaxed);
  while (!total.compare_exchange_weak(cur, is_max ? std::max(cur, part) : cur + part, std::memory_order_relaxed)) {
  }
}

template <class T>
void norm_typed(const ForeachItem* items, int64_t n, double ord, double* out) {
  const DC<T> d;
  using V = hn::Vec<DC<T>>;
  const size_t N = hn::Lanes(d);
  const bool is_max = std::isinf(ord);
  std::vector<std::atomic<double>> totals(static_cast<size_t>(n));
  for (auto& t : totals) t.store(0.0, std::memory_order_relaxed);
  for_each_segment(items, n, kForeachGrain, [&](int64_t i, int64_t b, int64_t e) {
    const T* p = reinterpret_cast<const T*>(items[i].data[1]) + b;
    const size_t m = static_cast<size_t>(e - b);
    auto step = [&](V acc, V x) {
      if (ord == 2) return hn::MulAdd(x, x, acc);
      if (!is_max) return hn::Add(acc, hn::Abs(x));
      // x86's max drops a NaN operand; a NaN seen once must stay
      return hn::IfThenElse(hn::Or(hn::IsNaN(acc), hn::IsNaN(x)), hn::Add(acc, x), hn::Max(acc, hn::Abs(x)));
    };
    V acc = hn::Zero(d);
    size_t j = 0;
    for (; j + N <= m; j += N) acc = step(acc, LoadC(d, p + j));
    if (j < m) acc = step(acc, LoadCN(d, p + j, m - j));  // zero lanes change neither sum nor max
    const double part = !hn::AllFalse(d, hn::IsNaN(acc)) ? NAN
                        : is_max ? static_cast<double>(hn::GetLane(hn::MaxOfLanes(d, acc)))
                                 : static_cast<double>(hn::GetLane(hn::SumOfLanes(d, acc)));
    if (std::isnan(part)) {
      totals[i].store(part, std::memory_order_relaxed);
    } else {
      accumulate(totals[i], part, is_max);
    }
  });
  for (int64_t i = 0; i < n; ++i) {
    const double t = totals[i].load(std::memory_order_relaxed);
    out[i] = ord == 2 ? std::sqrt(t) : t;
  }
}

// ---- AMP unscale ------------------------------------------------------------------------------
template <class T>
bool unscale_typed(const ForeachItem* items, int64_t n, double inv_scale) {
  using L = lane_t<T>;
  const DC<T> d;
  using V = hn::Vec<DC<T>>;
  const size_t N = hn::Lanes(d);
  const V inv = hn::Set(d, L(inv_scale)), zero = hn::Zero(d);
  std::atomic<bool> found{false};
  for_each_segment(items, n, kForeachGrain, [&](int64_t i, int64_t b, int64_t e) {
    T* p = reinterpret_cast<T*>(items[i].data[0]) + b;
    const size_t m = static_cast<size_t>(e - b);
    // x * 0 is 0 for finite x and NaN for inf or NaN: the sum of those is NaN iff any was.
    V bad = zero;
    size_t j = 0;
    for (; j + N <= m; j += N) {
      const V x = LoadC(d, p + j);
      bad = hn::MulAdd(x, zero, bad);
      StoreC(d, hn::Mul(x, inv), p + j);
    }
    if (j < m) {  // the missing lanes load as zeros
      const V x = LoadCN(d, p + j, m - j);
      bad = hn::MulAdd(x, zero, bad);
      StoreCN(d, hn::Mul(x, inv), p + j, m - j);
    }
    if (!hn::AllFalse(d, hn::IsNaN(bad))) found.store(true, std::memory_order_relaxed);
  });
  return found.load(std::memory_order_relaxed);
}

// ---- fused Adam -------------------------------------------------------------------------------
template <class T>
void adam_typed(const ForeachItem* items, int64_t n, const AdamHyper& h) {
  using L = lane_t<T>;
  const DC<T> d;
  using V = hn::Vec<DC<T>>;
  const size_t N = hn::Lanes(d);
  const V beta1 = hn::Set(d, L(h.beta1)), beta2 = hn::Set(d, L(h.beta2));
  const V one_minus_beta1 = hn::Set(d, L(1 - h.beta1)), one_minus_beta2 = hn::Set(d, L(1 - h.beta2));
  const V eps = hn::Set(d, L(h.eps));
  const V decay = hn::Set(d, L(h.decoupled ? 1 - h.lr * h.weight_decay : h.weight_decay));
  const bool use_decay = h.weight_decay != 0;
  for_each_segment(items, n, kAdamGrain, [&](int64_t i, int64_t b, int64_t e) {
    const ForeachItem& it = items[i];
    T* param = reinterpret_cast<T*>(it.data[0]) + b;
    const T* grad = reinterpret_cast<const T*>(it.data[1]) + b;
    T* exp_avg = reinterpret_cast<T*>(it.data[2]) + b;
    T* exp_avg_sq = reinterpret_cast<T*>(it.data[3]) + b;
    T* max_sq = h.amsgrad ? reinterpret_cast<T*>(it.data[4]) + b : nullptr;
    const V neg_step = hn::Set(d, L(-it.s[0]));
    const V bias2_sqrt = hn::Set(d, L(it.s[1]));
    // The update of libtorch's Adam, operation for operation, on one vector.
    auto update = [&](size_t j, size_t m, auto load, auto store) {
      V p = load(param + j, m);
      V g = load(grad + j, m);
      if (h.maximize) g = hn::Neg(g);
      if (use_decay) {
        if (h.decoupled) {
          p = hn::Mul(p, decay);
        } else {
          g = hn::MulAdd(decay, p, g);
        }
      }
      const V m1 = hn::MulAdd(one_minus_beta1, g, hn::Mul(load(exp_avg + j, m), beta1));
      const V m2 = hn::MulAdd(hn::Mul(one_minus_beta2, g), g, hn::Mul(load(exp_avg_sq + j, m), beta2));
      store(m1, exp_avg + j, m);
      store(m2, exp_avg_sq + j, m);
      V second = m2;
      if (max_sq) {
        const V old = load(max_sq + j, m);
        second = hn::IfThenElse(hn::Or(hn::IsNaN(old), hn::IsNaN(m2)), hn::Add(old, m2), hn::Max(old, m2));
        store(second, max_sq + j, m);
      }
      const V denom = hn::Add(hn::Div(hn::Sqrt(second), bias2_sqrt), eps);
      store(hn::Add(p, hn::Div(hn::Mul(neg_step, m1), denom)), param + j, m);
    };
    const size_t m = static_cast<size_t>(e - b);
    size_t j = 0;
    auto full_load = [&](const T* p, size_t) { return LoadC(d, p); };
    auto full_store = [&](V v, T* p, size_t) { StoreC(d, v, p); };
    for (; j + N <= m; j += N) update(j, N, full_load, full_store);
    if (j < m) {
      update(j, m - j, [&](const T* p, size_t k) { return LoadCN(d, p, k); },
             [&](V v, T* p, size_t k) { StoreCN(d, v, p, k); });
    }
  });
}

}  // namespace

void foreach_float(ForeachOp op, ScalarType dtype, const ForeachItem* items, int64_t n) {
  visit_float(dtype, "foreach", [&](auto t) { foreach_typed<decltype(t)>(op, items, n); });
}
void foreach_norm_float(ScalarType dtype, const ForeachItem* items, int64_t n, double ord, double* out) {
  visit_float(dtype, "foreach_norm", [&](auto t) { norm_typed<decltype(t)>(items, n, ord, out); });
}
void fused_adam_float(ScalarType dtype, const ForeachItem* items, int64_t n, const AdamHyper& h) {
  visit_float(dtype, "adam", [&](auto t) { adam_typed<decltype(t)>(items, n, h); });
}
bool unscale_float(ScalarType dtype, const ForeachItem* items, int64_t n, double inv_scale) {
  bool found = false;
  visit_float(dtype, "_amp_foreach_non_finite_check_and_unscale_",
              [&](auto t) { found = unscale_typed<decltype(t)>(items, n, inv_scale); });
  return found;
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(foreach_float);
HWY_EXPORT(foreach_norm_float);
HWY_EXPORT(fused_adam_float);
HWY_EXPORT(unscale_float);

void foreach_kernel(ForeachOp op, ScalarType dtype, const ForeachItem* items, int64_t n) {
  HWY_DYNAMIC_DISPATCH(foreach_float)(op, dtype, items, n);
}
void foreach_norm_kernel(ScalarType dtype, const ForeachItem* items, int64_t n, double ord, double* out) {
  HWY_DYNAMIC_DISPATCH(foreach_norm_float)(dtype, items, n, ord, out);
}
void fused_adam_kernel(ScalarType dtype, const ForeachItem* items, int64_t n, const AdamHyper& h) {
  HWY_DYNAMIC_DISPATCH(fused_adam_float)(dtype, items, n, h);
}
bool foreach_unscale_kernel(ScalarType dtype, const ForeachItem* items, int64_t n, double inv_scale) {
  return HWY_DYNAMIC_DISPATCH(unscale_float)(dtype, items, n, inv_scale);
}
}  // namespace ember::kernels
#endif
