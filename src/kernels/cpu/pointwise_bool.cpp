// Bool-valued kernels (comparisons, logical ops, float predicates) and where. Plain loops: the
// compiler vectorizes the contiguous ones, and Half/BFloat16 compare as float.
#include <cmath>
#include <cstring>
#include <utility>

#include "kernels/cpu/complex_kernels.h"
#include "kernels/cpu/cast.h"
#include "kernels/cpu/pointwise.h"

namespace ember::kernels {
namespace {

// out[i] (bool) = f(in_0[i], ...) with inputs of storage type T read as compute_t<T>.
template <class T, size_t K, class F, size_t... I>
void predicate_loop(const F& f, char** data, const int64_t* s, int64_t n, std::index_sequence<I...>) {
  using C = compute_t<T>;
  if (s[0] == 1 && ((s[I + 1] == sizeof(T)) && ...)) {
    bool* out = reinterpret_cast<bool*>(data[0]);
    const T* in[K] = {reinterpret_cast<const T*>(data[I + 1])...};
    for (int64_t i = 0; i < n; ++i) out[i] = f(static_cast<C>(in[I][i])...);
    return;
  }
  auto load = [&](size_t k, int64_t i) {
    T v;
    std::memcpy(&v, data[k + 1] + i * s[k + 1], sizeof(T));
    return static_cast<C>(v);
  };
  for (int64_t i = 0; i < n; ++i) data[0][i * s[0]] = f(load(I, i)...);
}

template <class T, size_t K, class F>
void run_predicate(TensorIterator& iter, const F& f) {
  iter.for_each([&f](char** data, const int64_t* s, int64_t n) {
    predicate_loop<T, K>(f, data, s, n, std::make_index_sequence<K>{});
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
    case PredicateOp::LogicalAnd: return bin([](C a, C b) { return a != C(0) && b != C(0); });
    case PredicateOp::LogicalOr: return bin([](C a, C b) { return a != C(0) || b != C(0); });
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
  iter.for_each([](char** data, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(T) && s[1] == 1 && (s[2] == sizeof(T) || s[2] == 0) && (s[3] == sizeof(T) || s[3] == 0)) {
      T* out = reinterpret_cast<T*>(data[0]);
      const bool* c = reinterpret_cast<const bool*>(data[1]);
      const T* a = reinterpret_cast<const T*>(data[2]);
      const T* b = reinterpret_cast<const T*>(data[3]);
      const int64_t sa = s[2] / static_cast<int64_t>(sizeof(T)), sb = s[3] / static_cast<int64_t>(sizeof(T));
      for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? a[i * sa] : b[i * sb];
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      const char* src = data[1][i * s[1]] ? data[2] + i * s[2] : data[3] + i * s[3];
      std::memcpy(data[0] + i * s[0], src, sizeof(T));
    }
  });
}

}  // namespace

void predicate_kernel(TensorIterator& iter, PredicateOp op) {
  if (is_complex_type(iter.dtype(1))) return complex_predicate_kernel(iter, op);
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
