// Complex tensors, torch.fft and torch.special against libtorch (whose CPU FFT is pocketfft):
// the engine on a long real signal, a 2-D complex transform, a batch of prime-length transforms
// (Bluestein), a product with a conjugate view (OpenBLAS's conjugate modes, no copy), and four
// special functions on 16M floats. Targets are issue 21's.
#include "torch_check.h"

namespace {

constexpr const char* kFft = "fft: transforms";
constexpr const char* kConj = "complex: products with conjugate views";
constexpr const char* kSpecial = "special: 16M float32 elements";

using bench::Input;

bench::Register fft_rfft_1m_f32{{
    .name = "fft_rfft_1m_f32",
    .label = kFft,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          const Input x = parity::random({1 << 20}, ember::kFloat, 1);
          bench::check_close(ctx, ember::fft::rfft(x.e), torch::fft::rfft(x.t), parity::Tol{1e-3, 1e-2});
          bench::Outcome o = bench::time_pair(ctx, {.ember = [&] { (void)ember::fft::rfft(x.e); },
                                                    .baseline = [&] { (void)torch::fft::rfft(x.t); },
                                                    .min_run_time = 1.0});
          o.notes.push_back("path: Stockham radix-4/2 on one signal of 2^19 complex points, later stages vectorized, " +
                            ember::get_cpu_capability());
          return o;
        },
}};

bench::Register fft_fft2_512x512_c64{{
    .name = "fft_fft2_512x512_c64",
    .label = kFft,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          const Input x = parity::random({512, 512}, ember::kComplexFloat, 2);
          bench::check_close(ctx, ember::fft::fft2(x.e), torch::fft::fft2(x.t), parity::Tol{1e-3, 1e-2});
          bench::Outcome o = bench::time_pair(ctx, {.ember = [&] { (void)ember::fft::fft2(x.e); },
                                                    .baseline = [&] { (void)torch::fft::fft2(x.t); },
                                                    .min_run_time = 1.0});
          o.notes.push_back("path: Stockham radix-4/2 on batches of one vector's signals, columns then rows, " +
                            ember::get_cpu_capability());
          return o;
        },
}};

bench::Register fft_fft_prime_10007_c64_b64{{
    .name = "fft_fft_prime_10007_c64_b64",
    .label = kFft,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          const Input x = parity::random({64, 10007}, ember::kComplexFloat, 3);
          bench::check_close(ctx, ember::fft::fft(x.e), torch::fft::fft(x.t), parity::Tol{1e-3, 1e-2});
          bench::Outcome o = bench::time_pair(ctx, {.ember = [&] { (void)ember::fft::fft(x.e); },
                                                    .baseline = [&] { (void)torch::fft::fft(x.t); },
                                                    .min_run_time = 1.0});
          o.notes.push_back("path: Bluestein on a 20736-point (2^8 3^4) transform in place, depth first, one vector of signals at once, " +
                            ember::get_cpu_capability());
          return o;
        },
}};

bench::Register complex_matmul_conj_512_c64{{
    .name = "complex_matmul_conj_512_c64",
    .label = kConj,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          const Input a = parity::random({512, 512}, ember::kComplexFloat, 4);
          const Input b = parity::random({512, 512}, ember::kComplexFloat, 5);
          bench::check_close(ctx, a.e.conj().matmul(b.e), a.t.conj().matmul(b.t), parity::Tol{1e-3, 1e-2});
          bench::Outcome o = bench::time_pair(ctx, {.ember = [&] { (void)a.e.conj().matmul(b.e); },
                                                    .baseline = [&] { (void)a.t.conj().matmul(b.t); },
                                                    .min_run_time = 1.0});
          o.notes.push_back("path: cblas_cgemm with CblasConjNoTrans on the conjugate view");
          return o;
        },
}};

// The conjugate view against multiplying a conjugate materialized first (what a library
// without conjugate views does), both Ember.
bench::Register complex_matmul_conj_512_c64_vs_materialized{{
    .name = "complex_matmul_conj_512_c64_vs_materialized",
    .label = kConj,
    .target = 0.85,
    .baseline = bench::Baseline::Ember,
    .run =
        [](const bench::Context& ctx) {
          const ember::Tensor a = parity::random({512, 512}, ember::kComplexFloat, 4);
          const ember::Tensor b = parity::random({512, 512}, ember::kComplexFloat, 5);
          if (!a.conj().matmul(b).allclose(a.conj_physical().matmul(b), 1e-4, 1e-3))
            throw bench::CheckFailure("conj view and materialized conjugate disagree");
          return bench::time_pair(ctx, {.ember = [&] { (void)a.conj().matmul(b); },
                                        .baseline = [&] { (void)a.conj_physical().matmul(b); },
                                        .min_run_time = 1.0});
        },
}};

// A special function on 16M float32 values drawn uniformly from [lo, hi): its domain's usual range.
bench::Outcome special_16m(const bench::Context& ctx, double lo, double hi, ember::Tensor (*e)(const ember::Tensor&),
                           torch::Tensor (*t)(const torch::Tensor&)) {
  ember::Generator g(11);
  const ember::Tensor x = ember::rand({1 << 24}, &g, ember::TensorOptions().dtype(ember::kFloat)) * (hi - lo) + lo;
  const torch::Tensor tx = parity::to_torch(x);
  bench::check_close(ctx, e(x), t(tx), parity::Tol{1e-5, 1e-6});
  return bench::time_pair(ctx, {.ember = [&] { (void)e(x); },
                                .baseline = [&] { (void)t(tx); },
                                .min_run_time = 2.0,
                                .bytes = 2.0 * sizeof(float) * (1 << 24)});
}

#define EMBER_SPECIAL_CASE(fn, lo, hi)                                                                                 \
  bench::Register special_##fn##_16m_f32{{                                                                             \
      .name = "special_" #fn "_16m_f32",                                                                               \
      .label = kSpecial,                                                                                               \
      .target = 0.7,                                                                                                   \
      .run = [](const bench::Context& ctx) {                                                                           \
        return special_16m(ctx, lo, hi, [](const ember::Tensor& x) { return ember::special::fn(x); },                 \
                           [](const torch::Tensor& x) { return torch::special::fn(x); });                             \
      },                                                                                                               \
  }};
EMBER_SPECIAL_CASE(gammaln, 0.01, 20.0)
EMBER_SPECIAL_CASE(erfinv, -1.0, 1.0)
EMBER_SPECIAL_CASE(i0e, -20.0, 20.0)
EMBER_SPECIAL_CASE(digamma, 0.01, 20.0)
#undef EMBER_SPECIAL_CASE

}  // namespace
