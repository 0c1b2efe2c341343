// Tensor core cases on float32: elementwise arithmetic on small tensors (dispatch overhead) and
// 16M-element arithmetic, unary math and reductions (memory bandwidth).
#include "torch_check.h"

namespace {

using bench::k16M;
constexpr const char* kSmallTensors = "tensor_core: small tensors";
constexpr const char* k16MLabel = "tensor_core: 16M float32";
constexpr const char* kRandomLabel = "tensor_core: random draws, 1M float32";

// Two seeded float32 inputs of n elements, in Ember and (copied) in libtorch.
struct TwoInputs {
  ember::Tensor a, b;
  torch::Tensor ta, tb;
  explicit TwoInputs(int64_t n)
      : a(parity::random({n}, ember::kFloat, 1)),
        b(parity::random({n}, ember::kFloat, 2)),
        ta(parity::to_torch(a)),
        tb(parity::to_torch(b)) {}
};

bench::Register add_small_f32{{
    .name = "add_small_f32",
    .label = kSmallTensors,
    .target = 0.25,
    .run =
        [](const bench::Context& ctx) {
          const TwoInputs in(8);
          bench::check_close(ctx, in.a + in.b, in.ta + in.tb);
          return bench::time_pair(ctx, {.ember = [&] { (void)(in.a + in.b); },
                                        .baseline = [&] { (void)(in.ta + in.tb); }});
        },
}};

bench::Register add_16m_f32{{
    .name = "add_16m_f32",
    .label = k16MLabel,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          const TwoInputs in(k16M);
          bench::check_close(ctx, in.a + in.b, in.ta + in.tb);
          // Reads a and b, writes the result: the same traffic as the triad.
          return bench::time_pair(ctx, {.ember = [&] { (void)(in.a + in.b); },
                                        .baseline = [&] { (void)(in.ta + in.tb); },
                                        .min_run_time = 2.0,
                                        .bytes = 3.0 * sizeof(float) * k16M});
        },
}};

bench::Register exp_16m_f32{{
    .name = "exp_16m_f32",
    .label = k16MLabel,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          const TwoInputs in(k16M);
          bench::check_close(ctx, ember::exp(in.a), torch::exp(in.ta));
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::exp(in.a); },
                                        .baseline = [&] { (void)torch::exp(in.ta); },
                                        .min_run_time = 2.0,
                                        .bytes = 2.0 * sizeof(float) * k16M});
        },
}};

bench::Register sum_16m_f32{{
    .name = "sum_16m_f32",
    .label = k16MLabel,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          // Values in [0, 1): a sum of about 8M, so float32 rounding differences between
          // summation orders stay well inside the relative tolerance.
          ember::Generator g(3);
          const ember::Tensor x = ember::rand({k16M}, &g);
          const torch::Tensor tx = parity::to_torch(x);
          bench::check_close(ctx, ember::sum(x), torch::sum(tx));
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::sum(x); },
                                        .baseline = [&] { (void)torch::sum(tx); },
                                        .min_run_time = 2.0,
                                        .bytes = 1.0 * sizeof(float) * k16M});
        },
}};

// The random factories after the same seed draw the same numbers (libtorch's generator and
// kernels); one thread draws them, as libtorch's serial kernels do.
template <class E, class T>
bench::Outcome time_draw(const bench::Context& ctx, E&& ember_draw, T&& torch_draw) {
  ember::manual_seed(11);
  torch::manual_seed(11);
  bench::check_close(ctx, ember_draw(), torch_draw());
  return bench::time_pair(ctx, {.ember = [&] { (void)ember_draw(); },
                                .baseline = [&] { (void)torch_draw(); },
                                .bytes = 1.0 * sizeof(float) * (1 << 20)});
}

bench::Register rand_1m_f32{{
    .name = "rand_1m_f32",
    .label = kRandomLabel,
    .target = 1.0,
    .run = [](const bench::Context& ctx) {
      return time_draw(ctx, [] { return ember::rand({1 << 20}); }, [] { return torch::rand({1 << 20}); });
    },
}};

bench::Register randn_1m_f32{{
    .name = "randn_1m_f32",
    .label = kRandomLabel,
    .target = 1.0,
    .run = [](const bench::Context& ctx) {
      return time_draw(ctx, [] { return ember::randn({1 << 20}); }, [] { return torch::randn({1 << 20}); });
    },
}};

}  // namespace
