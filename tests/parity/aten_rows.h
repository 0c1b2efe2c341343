// What the ATen parity tables share (aten_tail_parity, aten_tail2_parity): rows whose expression is
// written once and compiled against both libraries, `v` holding the inputs and `ns` naming the
// library (free functions found by argument-dependent lookup), and the loops that run them.
#pragma once
#include <functional>
#include <vector>

#include "parity/grad_cases.h"

namespace aten_rows {

using E = std::vector<ember::Tensor>;
using T = std::vector<torch::Tensor>;
constexpr double kFloatRtol = 1e-4;

// An lvalue for the free in-place functions (`acos_(Tensor&)`), alive to the end of the row's expression.
template <class X>
X& lv(X&& x) {
  return x;
}

// Differentiable rows: values and gradients in float32 and float64.
inline void run_all(const std::vector<grad_cases::Case>& cases, uint64_t seed, double float_rtol = kFloatRtol) {
  for (const grad_cases::Case& c : cases)
    for (ember::ScalarType dtype : {ember::kFloat, ember::kDouble}) grad_cases::run_case(c, dtype, seed++, float_rtol);
}

// Forward-only rows: integer-valued, boolean, empty and non-differentiable results, on random
// inputs of the given sizes and dtype.
struct FwdCase {
  const char* name;
  std::vector<std::vector<int64_t>> sizes;
  ember::ScalarType dtype;
  std::function<ember::Tensor(const E&)> ember_fn;
  std::function<torch::Tensor(const T&)> torch_fn;
};
// Float results within 1e-5; double ones within double_rtol (compositions round a few times where
// libtorch rounds once).
inline void run_forward(const FwdCase& c, uint64_t seed, double double_rtol) {
  SCOPED_TRACE(c.name);
  E ex;
  T tx;
  for (const auto& s : c.sizes) {
    ex.push_back(parity::random(s, c.dtype, seed++));
    tx.push_back(parity::to_torch(ex.back()));
  }
  const ember::Tensor ey = c.ember_fn(ex);
  const torch::Tensor ty = c.torch_fn(tx);
  const parity::Tol tol = ey.dtype() == ember::kFloat    ? parity::Tol{1e-5, 1e-5}
                          : ey.dtype() == ember::kDouble ? parity::Tol{double_rtol, 1e-12}
                                                         : parity::default_tol(ey.dtype());
  EXPECT_TRUE(parity::Close(ey, ty, tol));
}

}  // namespace aten_rows

#define ROW(name, inputs, k, ...) \
  grad_cases::Case { name, inputs, [](const aten_rows::E& v) { namespace ns = ember; return ember::Tensor(__VA_ARGS__); }, [](const aten_rows::T& v) { namespace ns = torch; return torch::Tensor(__VA_ARGS__); }, nullptr, k }
#define IN(...) std::vector<grad_cases::Input>{__VA_ARGS__}
#define FWD(name, sizes, dtype, ...) \
  aten_rows::FwdCase { name, sizes, dtype, [](const aten_rows::E& v) { namespace ns = ember; return ember::Tensor(__VA_ARGS__); }, [](const aten_rows::T& v) { namespace ns = torch; return torch::Tensor(__VA_ARGS__); } }
