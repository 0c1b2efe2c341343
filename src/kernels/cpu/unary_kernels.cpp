// Float unary kernels, compiled for each SIMD target Highway selects at run time, and the dtype
// dispatch of unary_kernel (integers: pointwise_int.cpp). The functors: pointwise_functors-inl.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/unary_kernels.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include "kernels/cpu/hwy_util-inl.h"
#include "kernels/cpu/pointwise_int.h"
#include "kernels/cpu/pointwise_vec-inl.h"
#include "kernels/cpu/pointwise_functors-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace {

template <class T>
void unary_typed(TensorIterator& iter, UnaryOp op, const UnaryParams& p) {
  const bool done = visit_unary<T>(op, p, [&](const auto& f) { run_float<T, 1>(iter, f); });
  EMBER_CHECK(done, "unary_kernel", "op ", static_cast<int>(op), " has no float form");
}

}  // namespace

void unary_float(TensorIterator& iter, UnaryOp op, const UnaryParams& params) {
  visit_float(iter.common_dtype(), "pointwise", [&](auto t) { unary_typed<decltype(t)>(iter, op, params); });
}

int64_t dispatched_target() { return HWY_TARGET; }

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <numeric>
#include <vector>

#include "kernels/cpu/complex_kernels.h"
namespace ember::kernels {
HWY_EXPORT(unary_float);
HWY_EXPORT(dispatched_target);

int64_t dispatched_target() { return HWY_DYNAMIC_DISPATCH(dispatched_target)(); }

namespace {

// Float16 and bfloat16 have 65536 values each. For the costly functions without parameters, an
// op's results in such a dtype are tabulated once, by the float32 kernel itself over every bit
// pattern (so a lookup gives the bits the kernel gives), and looked up from then on: a load and a
// store an element instead of the function's arithmetic and two conversions. An op's table is
// built once the op has computed 65536 elements of that dtype, so building it (one call over as
// many elements) never costs more than the op has already spent; the hot part of a table for
// data of a few binades is a few KiB, in L1.
constexpr bool tabulated(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp2: case UnaryOp::Log: case UnaryOp::Log2: case UnaryOp::Log10: case UnaryOp::Log1p:
    case UnaryOp::Sin: case UnaryOp::Cos:
    case UnaryOp::Tan: case UnaryOp::Asin: case UnaryOp::Acos: case UnaryOp::Atan: case UnaryOp::Tanh:
    case UnaryOp::Sinh: case UnaryOp::Cosh: case UnaryOp::Asinh: case UnaryOp::Acosh: case UnaryOp::Atanh:
    case UnaryOp::Sigmoid: case UnaryOp::Silu: case UnaryOp::Erf: case UnaryOp::Erfc: case UnaryOp::Erfinv:
    case UnaryOp::Digamma: case UnaryOp::Trigamma: case UnaryOp::LogSigmoid: case UnaryOp::Gelu:
    case UnaryOp::GeluTanh: return true;
    default: return false;
  }
}

constexpr int64_t kTableSize = 65536;
constexpr int kOps = static_cast<int>(UnaryOp::NanToNum) + 1;

// The table of op in 16-bit dtype t, or null while the op has computed fewer than kTableSize
// elements of t (this call's n counted).
const uint16_t* table_for(UnaryOp op, ScalarType t, int64_t n) {
  static std::atomic<const uint16_t*> tables[2][kOps];
  static std::atomic<int64_t> computed[2][kOps];
  static std::mutex building;
  const int k = t == kHalf, i = static_cast<int>(op);
  if (const uint16_t* p = tables[k][i].load(std::memory_order_acquire)) return p;
  if (computed[k][i].fetch_add(n, std::memory_order_relaxed) + n < kTableSize) return nullptr;
  const std::lock_guard<std::mutex> lock(building);
  if (const uint16_t* p = tables[k][i].load(std::memory_order_acquire)) return p;
  // Over this file's own memory and made without an op, so that building a table inside a
  // profiled or captured region records nothing there.
  auto over = [t](uint16_t* p) {
    const int64_t size = kTableSize, stride = 1;
    auto storage = IntrusivePtr<StorageImpl>::make(p, sizeof(uint16_t) * kTableSize, std::function<void(void*)>{});
    return Tensor(IntrusivePtr<TensorImpl>::make(std::move(storage), t, IntArrayRef(&size, 1), IntArrayRef(&stride, 1),
                                                 int64_t{0}));
  };
  std::vector<uint16_t> bits(kTableSize);
  std::iota(bits.begin(), bits.end(), uint16_t{0});
  auto* table = new uint16_t[kTableSize];  // kept for the process's life, reachable from `tables`
  TensorIteratorConfig config("unary_kernel");
  const Tensor in = over(bits.data()), out = over(table);
  config.add_output(out).add_input(in);
  TensorIterator iter(config);
  HWY_DYNAMIC_DISPATCH(unary_float)(iter, op, UnaryParams{});
  tables[k][i].store(table, std::memory_order_release);
  return table;
}

void lookup(TensorIterator& iter, const uint16_t* table) {
  iter.for_each([table](char** data, const int64_t* strides, int64_t n) {
    if (strides[0] == 2 && strides[1] == 2) {
      auto* out = reinterpret_cast<uint16_t*>(data[0]);
      const auto* in = reinterpret_cast<const uint16_t*>(data[1]);
#pragma GCC unroll 8
      for (int64_t j = 0; j < n; ++j) out[j] = table[in[j]];
      return;
    }
    for (int64_t j = 0; j < n; ++j) {
      uint16_t v;
      std::memcpy(&v, data[1] + j * strides[1], 2);
      std::memcpy(data[0] + j * strides[0], &table[v], 2);
    }
  });
}

}  // namespace

void unary_kernel(TensorIterator& iter, UnaryOp op, const UnaryParams& params) {
  const ScalarType t = iter.common_dtype();
  if (tabulated(op) && (t == kHalf || t == kBFloat16) && iter.dtype(0) == t && iter.dtype(1) == t) {
    if (const uint16_t* table = table_for(op, t, iter.numel())) return lookup(iter, table);
  }
  if (is_complex_type(iter.dtype(1))) {
    complex_unary_kernel(iter, op, params);
  } else if (is_floating_type(t)) {
    HWY_DYNAMIC_DISPATCH(unary_float)(iter, op, params);
  } else {
    unary_int_kernel(iter, op, params);
  }
}
}  // namespace ember::kernels
#endif
