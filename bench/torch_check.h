// What cases use from libtorch: the parity tests' conversions, seeded inputs and comparison
// (tests/parity/parity.h), turned into a CheckFailure that names the case.
#pragma once
#include <ATen/autocast_mode.h>

#include <optional>

#include "parity/parity.h"
#include "registry.h"

namespace bench {

// Ember's result must be allclose to libtorch's (the parity tests' tolerances for its dtype
// unless given); otherwise the case fails with the worst mismatch.
inline void check_close(const Context& ctx, const ember::Tensor& ember_result, const torch::Tensor& torch_result,
                        std::optional<parity::Tol> tol = std::nullopt) {
  const ::testing::AssertionResult r =
      tol ? parity::Close(ember_result, torch_result, *tol) : parity::Close(ember_result, torch_result);
  if (!r) throw CheckFailure(ctx.current.name + ": Ember's result differs from libtorch's: " + r.message());
}

// libtorch's CPU autocast region (what torch.autocast("cpu") does), to compare with
// ember::AutocastGuard.
struct TorchAutocast {
  TorchAutocast() {
    at::autocast::set_autocast_cpu_dtype(torch::kBFloat16);
    at::autocast::set_cpu_enabled(true);
    at::autocast::increment_nesting();
  }
  ~TorchAutocast() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_cpu_enabled(false);
  }
  TorchAutocast(const TorchAutocast&) = delete;
  TorchAutocast& operator=(const TorchAutocast&) = delete;
};

}  // namespace bench
