// The table-driven gradient comparison shared by the autograd and derivatives parity tests: a
// case names an op, its inputs (shape, value domain, leaf layout, whether it requires grad), the
// op in both frameworks, the node name both must give and how many terms a gradient element sums
// (for the tolerance). run_case makes the leaves, compares outputs, node names and, after a
// backward from a random grad_output, every .grad against libtorch's.
#pragma once
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "parity/parity.h"

namespace grad_cases {

using EFn = std::function<ember::Tensor(const std::vector<ember::Tensor>&)>;
using TFn = std::function<torch::Tensor(const std::vector<torch::Tensor>&)>;

enum class Domain { Any, Positive, Unit };  // [-2, 2), [0.25, 2.25), [-0.8, 0.8)
enum class Layout { Contiguous, Transposed, Strided };

struct Input {
  std::vector<int64_t> sizes;
  Domain domain = Domain::Any;
  Layout layout = Layout::Contiguous;
  bool requires_grad = true;
};

struct Case {
  const char* name;
  std::vector<Input> inputs;
  EFn ember_fn;
  TFn torch_fn;
  const char* node = nullptr;  // expected grad_fn name of both, when Ember's node is PyTorch's
  int64_t k = 1;               // terms summed into one gradient element (tolerance)
};

// A leaf of the given layout holding random values of its domain.
inline ember::Tensor make_leaf(const Input& in, ember::ScalarType dtype, uint64_t seed) {
  std::vector<int64_t> sizes = in.sizes;
  const bool transposed = in.layout == Layout::Transposed && sizes.size() >= 2;
  const bool strided = in.layout == Layout::Strided && !sizes.empty();
  if (transposed) std::swap(sizes[0], sizes[1]);
  if (strided) sizes.back() *= 2;
  ember::Tensor t = parity::random(sizes, ember::kDouble, seed);
  if (in.domain == Domain::Positive) t = t.abs() + 0.25;
  if (in.domain == Domain::Unit) t = t * 0.4;
  t = t.to(dtype);
  if (transposed) t = t.transpose(0, 1);
  if (strided) t = t.slice(-1, 0, std::nullopt, 2);
  if (in.requires_grad) t.requires_grad_();
  return t;
}

// float32: `float_rtol` relative plus K * 4 * 2^-24 absolute; float64: 1e-12 plus K * 4 * 2^-53.
inline parity::Tol grad_tol(ember::ScalarType dtype, int64_t k, double float_rtol) {
  return dtype == ember::kDouble ? parity::Tol{1e-12, static_cast<double>(k) * 4 * 0x1p-53 + 1e-14}
                                 : parity::Tol{float_rtol, static_cast<double>(k) * 4 * 0x1p-24 + 1e-6};
}

inline void run_case(const Case& c, ember::ScalarType dtype, uint64_t seed, double float_rtol) {
  std::ostringstream what;
  what << c.name << " " << dtype;
  SCOPED_TRACE(what.str());
  const parity::Tol tol = grad_tol(dtype, c.k, float_rtol);
  std::vector<ember::Tensor> ex;
  std::vector<torch::Tensor> tx;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    ex.push_back(make_leaf(c.inputs[i], dtype, seed + i));
    torch::Tensor t = parity::to_torch(ex.back().detach());
    if (c.inputs[i].requires_grad) t.requires_grad_();
    tx.push_back(t);
  }
  const ember::Tensor ey = c.ember_fn(ex);
  const torch::Tensor ty = c.torch_fn(tx);
  ASSERT_TRUE(parity::Close(ey.detach(), ty.detach(), tol));
  if (c.node) {
    ASSERT_TRUE(ey.grad_fn());
    EXPECT_EQ(ey.grad_fn()->name(), c.node);
    EXPECT_EQ(ty.grad_fn()->name(), c.node);  // keeps the expectation honest
  }
  // in the case's dtype, which for "to" differs from the output's: backward casts it first
  const ember::Tensor g = parity::random(ey.sizes(), dtype, seed + 100);
  ey.backward(g);
  ty.backward(parity::to_torch(g));
  for (size_t i = 0; i < ex.size(); ++i) {
    SCOPED_TRACE("input " + std::to_string(i));
    if (!c.inputs[i].requires_grad) {
      EXPECT_FALSE(ex[i].grad().defined());
      continue;
    }
    ASSERT_EQ(ex[i].grad().defined(), tx[i].grad().defined());
    if (ex[i].grad().defined()) EXPECT_TRUE(parity::Close(ex[i].grad(), tx[i].grad(), tol));
  }
}

}  // namespace grad_cases
