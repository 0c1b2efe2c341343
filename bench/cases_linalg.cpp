// torch.linalg against libtorch: solvers and decompositions on LAPACK (both libraries call
// OpenBLAS's), and batches of small matrices where the per-matrix overhead decides. Targets are
// issue 22's.
#include "torch_check.h"

namespace {

constexpr const char* kLinalg = "linalg: factorizations and solvers";
constexpr const char* kSmallMatrices = "linalg: batches of small matrices";

using bench::Input;

// A + n I: well conditioned, so both libraries agree to the dtype's tolerance times n.
ember::Tensor wellcond(std::vector<int64_t> sizes, ember::ScalarType dt, uint64_t seed) {
  const int64_t n = sizes.back();
  return parity::random(sizes, dt, seed) + ember::eye(n, ember::TensorOptions().dtype(dt)) * static_cast<double>(2 * n);
}
parity::Tol loose(ember::ScalarType dt) { return dt == ember::kDouble ? parity::Tol{1e-9, 1e-9} : parity::Tol{1e-3, 1e-3}; }

bench::Outcome solve_case(const bench::Context& ctx, std::vector<int64_t> shape, ember::ScalarType dt, double t) {
  const Input A = wellcond(shape, dt, 1);
  shape.back() = 1;
  const Input B = parity::random(shape, dt, 2);
  bench::check_close(ctx, ember::linalg::solve(A.e, B.e), torch::linalg::solve(A.t, B.t, true), loose(dt));
  return bench::time_pair(ctx, {.ember = [&] { (void)ember::linalg::solve(A.e, B.e); },
                                .baseline = [&] { (void)torch::linalg::solve(A.t, B.t, true); },
                                .min_run_time = t});
}

bench::Register linalg_solve_512_f64{{
    .name = "linalg_solve_512_f64",
    .label = kLinalg,
    .target = 1.0,
    .run = [](const bench::Context& ctx) { return solve_case(ctx, {512, 512}, ember::kDouble, 1.0); },
}};

bench::Register linalg_solve_b64_n64{{
    .name = "linalg_solve_b64_n64",
    .label = kLinalg,
    .target = 1.0,
    .run = [](const bench::Context& ctx) { return solve_case(ctx, {64, 64, 64}, ember::kFloat, 1.0); },
}};

bench::Register linalg_svd_256_f32{{
    .name = "linalg_svd_256_f32",
    .label = kLinalg,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          const Input A = parity::random({256, 256}, ember::kFloat, 3);
          bench::check_close(ctx, ember::linalg::svdvals(A.e), torch::linalg::svdvals(A.t, c10::nullopt),
                             parity::Tol{1e-3, 1e-3});
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::linalg::svd(A.e, false); },
                                        .baseline = [&] { (void)torch::linalg::svd(A.t, false, c10::nullopt); },
                                        .min_run_time = 1.0});
        },
}};

bench::Register linalg_cholesky_1024_f32{{
    .name = "linalg_cholesky_1024_f32",
    .label = kLinalg,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          const ember::Tensor X = parity::random({1024, 1024}, ember::kFloat, 4);
          const Input A = X.matmul(X.mT()) + ember::eye(1024, ember::kFloat) * 1024.0;
          bench::check_close(ctx, ember::linalg::cholesky(A.e), torch::linalg::cholesky(A.t), parity::Tol{1e-3, 1e-3});
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::linalg::cholesky(A.e); },
                                        .baseline = [&] { (void)torch::linalg::cholesky(A.t); },
                                        .min_run_time = 1.0});
        },
}};

bench::Register linalg_inv_3x3_b4096_f32{{
    .name = "linalg_inv_3x3_b4096_f32",
    .label = kSmallMatrices,
    .target = 0.3,
    .run =
        [](const bench::Context& ctx) {
          const Input A = wellcond({4096, 3, 3}, ember::kFloat, 5);
          bench::check_close(ctx, ember::linalg::inv(A.e), torch::linalg::inv(A.t), parity::Tol{1e-4, 1e-4});
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::linalg::inv(A.e); },
                                        .baseline = [&] { (void)torch::linalg::inv(A.t); },
                                        .min_run_time = 0.5});
        },
}};

bench::Register linalg_det_4x4_b4096_f32{{
    .name = "linalg_det_4x4_b4096_f32",
    .label = kSmallMatrices,
    .target = 0.3,
    .run =
        [](const bench::Context& ctx) {
          const Input A = wellcond({4096, 4, 4}, ember::kFloat, 6);
          bench::check_close(ctx, ember::linalg::det(A.e), torch::linalg::det(A.t), parity::Tol{1e-4, 1e-3});
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::linalg::det(A.e); },
                                        .baseline = [&] { (void)torch::linalg::det(A.t); },
                                        .min_run_time = 0.5});
        },
}};

// The small-matrix rows of QR, eigh, SVD and triangular solves (Ember's direct path, one LAPACK
// call per matrix in libtorch); their targets are this suite's, not the issue's.
bench::Register linalg_qr_4x4_b4096_f32{{
    .name = "linalg_qr_4x4_b4096_f32",
    .label = kSmallMatrices,
    .target = 0.5,
    .run =
        [](const bench::Context& ctx) {
          const Input A = parity::random({4096, 4, 4}, ember::kFloat, 12);
          // the same reflectors as LAPACK's geqrf: Q and R themselves agree
          bench::check_close(ctx, std::get<0>(ember::linalg::qr(A.e)), std::get<0>(torch::linalg::qr(A.t, "reduced")),
                             parity::Tol{1e-4, 1e-4});
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::linalg::qr(A.e); },
                                        .baseline = [&] { (void)torch::linalg::qr(A.t, "reduced"); },
                                        .min_run_time = 0.5});
        },
}};

bench::Register linalg_eigh_3x3_b4096_f32{{
    .name = "linalg_eigh_3x3_b4096_f32",
    .label = kSmallMatrices,
    .target = 0.5,
    .run =
        [](const bench::Context& ctx) {
          const ember::Tensor X = parity::random({4096, 3, 3}, ember::kFloat, 13);
          const Input A = X + X.mT();
          bench::check_close(ctx, ember::linalg::eigvalsh(A.e), torch::linalg::eigvalsh(A.t, "L"), parity::Tol{1e-4, 1e-4});
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::linalg::eigh(A.e); },
                                        .baseline = [&] { (void)torch::linalg::eigh(A.t, "L"); },
                                        .min_run_time = 0.5});
        },
}};

bench::Register linalg_svd_3x3_b4096_f32{{
    .name = "linalg_svd_3x3_b4096_f32",
    .label = kSmallMatrices,
    .target = 0.5,
    .run =
        [](const bench::Context& ctx) {
          const Input A = parity::random({4096, 3, 3}, ember::kFloat, 14);
          bench::check_close(ctx, ember::linalg::svdvals(A.e), torch::linalg::svdvals(A.t, c10::nullopt),
                             parity::Tol{1e-4, 1e-4});
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::linalg::svd(A.e, false); },
                                        .baseline = [&] { (void)torch::linalg::svd(A.t, false, c10::nullopt); },
                                        .min_run_time = 0.5});
        },
}};

bench::Register linalg_solve_triangular_4x4_b4096_f32{{
    .name = "linalg_solve_triangular_4x4_b4096_f32",
    .label = kSmallMatrices,
    .target = 0.5,
    .run =
        [](const bench::Context& ctx) {
          const Input A = wellcond({4096, 4, 4}, ember::kFloat, 15);
          const Input B = parity::random({4096, 4, 4}, ember::kFloat, 16);
          bench::check_close(ctx, ember::linalg::solve_triangular(A.e, B.e, true),
                             torch::linalg::solve_triangular(A.t, B.t, true, true, false), parity::Tol{1e-4, 1e-4});
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::linalg::solve_triangular(A.e, B.e, true); },
                                        .baseline = [&] { (void)torch::linalg::solve_triangular(A.t, B.t, true, true, false); },
                                        .min_run_time = 0.5});
        },
}};

}  // namespace

namespace {

bench::Register linalg_eigh_256_f64{{
    .name = "linalg_eigh_256_f64",
    .label = kLinalg,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          const ember::Tensor X = parity::random({256, 256}, ember::kDouble, 7);
          const Input A = X + X.mT();
          bench::check_close(ctx, ember::linalg::eigvalsh(A.e), torch::linalg::eigvalsh(A.t, "L"), loose(ember::kDouble));
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::linalg::eigh(A.e); },
                                        .baseline = [&] { (void)torch::linalg::eigh(A.t, "L"); },
                                        .min_run_time = 1.0});
        },
}};

bench::Register linalg_eig_128_f64{{
    .name = "linalg_eig_128_f64",
    .label = kLinalg,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          const Input A = parity::random({128, 128}, ember::kDouble, 11);
          // both call dgeev: the same eigenvalues in the same order
          bench::check_close(ctx, std::get<0>(ember::linalg::eig(A.e)), std::get<0>(torch::linalg::eig(A.t)),
                             loose(ember::kDouble));
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::linalg::eig(A.e); },
                                        .baseline = [&] { (void)torch::linalg::eig(A.t); },
                                        .min_run_time = 1.0});
        },
}};

bench::Register linalg_qr_512_f32{{
    .name = "linalg_qr_512_f32",
    .label = kLinalg,
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          const Input A = parity::random({512, 512}, ember::kFloat, 8);
          // R is unique up to its rows' signs
          bench::check_close(ctx, std::get<1>(ember::linalg::qr(A.e)).abs(),
                             std::get<1>(torch::linalg::qr(A.t, "reduced")).abs(), parity::Tol{1e-3, 1e-3});
          return bench::time_pair(ctx, {.ember = [&] { (void)ember::linalg::qr(A.e); },
                                        .baseline = [&] { (void)torch::linalg::qr(A.t, "reduced"); },
                                        .min_run_time = 1.0});
        },
}};

// A train step of Linear(256, 256) with an orthogonal weight (the matrix exponential of a skew
// matrix, times the base: use_trivialization): Ember through nn::utils::parametrizations, libtorch
// written out by hand as PyTorch's parametrization computes it.
bench::Register parametrize_orthogonal_linear_256_step{{
    .name = "parametrize_orthogonal_linear_256_step",
    .label = "nn: parametrizations",
    .target = 1.0,
    .run =
        [](const bench::Context& ctx) {
          ember::manual_seed(0);
          ember::nn::Linear linear(256, 256);
          ember::nn::utils::parametrizations::orthogonal(linear);
          const auto list = linear->parametrizations["weight"];
          ember::optim::SGD eopt(linear->parameters(), ember::optim::SGDOptions(1e-3));
          const Input x = parity::random({64, 256}, ember::kFloat, 9);
          torch::Tensor original = parity::to_torch(list->original.detach()).requires_grad_();
          torch::Tensor bias = parity::to_torch(linear->bias.detach()).requires_grad_();
          const torch::Tensor base = parity::to_torch(linear->named_buffers()["parametrizations.weight.0.base"]);
          torch::optim::SGD topt({original, bias}, torch::optim::SGDOptions(1e-3));
          auto ember_step = [&] {
            eopt.zero_grad();
            linear(x.e).pow(2).mean().backward();
            eopt.step();
          };
          auto torch_step = [&] {
            topt.zero_grad();
            const torch::Tensor L = original.tril();
            const torch::Tensor W = base.mm(torch::matrix_exp(L - L.mT()));
            torch::nn::functional::linear(x.t, W, bias).pow(2).mean().backward();
            topt.step();
          };
          ember_step();
          torch_step();
          bench::check_close(ctx, list->original.detach(), original.detach(), parity::Tol{1e-5, 1e-5});
          return bench::time_pair(ctx, {.ember = ember_step, .baseline = torch_step, .min_run_time = 1.0});
        },
}};

}  // namespace
