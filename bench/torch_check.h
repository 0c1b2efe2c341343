// What cases use from libtorch: the parity tests' conversions, seeded inputs and comparison
// (tests/parity/parity.h), turned into a CheckFailure that names the case.
#pragma once
#include <optional>
#include <utility>

#include "parity/parity.h"
#include "registry.h"

namespace bench {

// A seeded Ember tensor and its libtorch copy (same strides, so channels_last carries over).
struct Input {
  ember::Tensor e;
  torch::Tensor t;
  Input(ember::Tensor tensor) : e(std::move(tensor)), t(parity::to_torch(e)) {}  // NOLINT: implicit
};

// Ember's result must be allclose to libtorch's (the parity tests' tolerances for its dtype
// unless given); otherwise the case fails with the worst mismatch.
inline void check_close(const Context& ctx, const ember::Tensor& ember_result, const torch::Tensor& torch_result,
                        std::optional<parity::Tol> tol = std::nullopt) {
  const ::testing::AssertionResult r =
      tol ? parity::Close(ember_result, torch_result, *tol) : parity::Close(ember_result, torch_result);
  if (!r) throw CheckFailure(ctx.current.name + ": Ember's result differs from libtorch's: " + r.message());
}

}  // namespace bench
