// Complex tensors and torch.fft without libtorch: gradcheck of the complex derivatives and of
// every FFT primitive, the statistics of complex random factories, the FFT engine against a
// direct DFT, and conjugate views under autograd.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ember/ember.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;
using autograd::variable_list;

namespace {

Tensor crandn(IntArrayRef sizes, uint64_t seed) {
  Generator g(seed);
  return randn(sizes, &g, TensorOptions().dtype(kComplexDouble));
}

TEST(Complex, RandomFactories) {
  Generator g(1);
  const Tensor z = randn({200000}, &g, TensorOptions().dtype(kComplexFloat));
  EXPECT_EQ(z.dtype(), kComplexFloat);
  // each part has variance 1/2, so |z|^2 has mean 1
  EXPECT_NEAR(real(z).to(kDouble).var().item<double>(), 0.5, 0.01);
  EXPECT_NEAR(imag(z).to(kDouble).var().item<double>(), 0.5, 0.01);
  EXPECT_NEAR(z.abs().square().mean().item<double>(), 1.0, 0.02);
  const Tensor u = rand({100000}, &g, TensorOptions().dtype(kComplexDouble));
  EXPECT_GE(real(u).min().item<double>(), 0.0);
  EXPECT_LT(imag(u).max().item<double>(), 1.0);
  EXPECT_NEAR(imag(u).mean().item<double>(), 0.5, 0.01);
}

TEST(Complex, GradcheckPointwise) {
  const Tensor a = crandn({3}, 2).requires_grad_(), b = crandn({3}, 3).requires_grad_();
  const Tensor r = randn({3}, TensorOptions().dtype(kDouble)).requires_grad_();
  using L = variable_list;
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0] * x[1]; }, {a, b}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0] / x[1]; }, {a, b}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0] + x[1] * 2 - x[0].conj(); }, {a, b}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0] * x[1]; }, {a, r}));  // real times complex
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0] * complex<double>(0.5, -2); }, {a}));
  for (auto f : {+[](const Tensor& x) { return x.exp(); }, +[](const Tensor& x) { return x.log(); },
                 +[](const Tensor& x) { return x.sqrt(); }, +[](const Tensor& x) { return x.sin(); },
                 +[](const Tensor& x) { return x.cos(); }, +[](const Tensor& x) { return x.tanh(); },
                 +[](const Tensor& x) { return x.abs(); }, +[](const Tensor& x) { return x.angle(); },
                 +[](const Tensor& x) { return -x; }, +[](const Tensor& x) { return x.reciprocal(); },
                 +[](const Tensor& x) { return x.square(); }, +[](const Tensor& x) { return real(x) * 2; },
                 +[](const Tensor& x) { return imag(x) * 3; }, +[](const Tensor& x) { return view_as_real(x); },
                 +[](const Tensor& x) { return x.conj_physical(); }, +[](const Tensor& x) { return x.sum(); },
                 +[](const Tensor& x) { return x.mean(); }, +[](const Tensor& x) { return x.prod(); }}) {
    EXPECT_TRUE(autograd::gradcheck([f](const L& x) { return f(x[0]); }, {a}));
  }
  const Tensor p = randn({4}, TensorOptions().dtype(kDouble)).requires_grad_(), q = randn({4}, TensorOptions().dtype(kDouble)).requires_grad_();
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return make_complex(x[0], x[1]); }, {p, q}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return polar(x[0], x[1]); }, {p.abs().detach().requires_grad_(), q}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return view_as_complex(x[0].view({2, 2})); }, {p}));
}

TEST(Complex, GradcheckProducts) {
  const Tensor a = crandn({3, 4}, 4).requires_grad_(), b = crandn({4, 2}, 5).requires_grad_();
  const Tensor u = crandn({4}, 6).requires_grad_(), v = crandn({4}, 7).requires_grad_();
  using L = variable_list;
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0].mm(x[1]); }, {a, b}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0].conj().matmul(x[1]); }, {a, b}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0].mv(x[1]); }, {a, u}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0].dot(x[1]); }, {u, v}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0].vdot(x[1]); }, {u, v}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0].unsqueeze(0).bmm(x[1].unsqueeze(0)); }, {a, b}));
}

TEST(Complex, GradcheckFft) {
  using L = variable_list;
  for (int64_t n : {2, 4, 5, 6, 17}) {
    const Tensor z = crandn({2, n}, static_cast<uint64_t>(n)).requires_grad_();
    const Tensor r = randn({2, n}, TensorOptions().dtype(kDouble)).requires_grad_();
    for (const char* norm : {"backward", "forward", "ortho"}) {
      EXPECT_TRUE(autograd::gradcheck([norm](const L& x) { return fft::fft(x[0], std::nullopt, -1, norm); }, {z}));
      EXPECT_TRUE(autograd::gradcheck([norm](const L& x) { return fft::ifft(x[0], std::nullopt, 0, norm); }, {z}));
      EXPECT_TRUE(autograd::gradcheck([norm](const L& x) { return fft::rfft(x[0], std::nullopt, -1, norm); }, {r}));
      EXPECT_TRUE(autograd::gradcheck([norm](const L& x) { return fft::irfft(x[0], std::nullopt, -1, norm); }, {z}));
      EXPECT_TRUE(autograd::gradcheck([norm, n](const L& x) { return fft::hfft(x[0], n + 1, -1, norm); }, {z}));
      EXPECT_TRUE(autograd::gradcheck([norm](const L& x) { return fft::ihfft(x[0], std::nullopt, -1, norm); }, {r}));
    }
    EXPECT_TRUE(autograd::gradcheck([](const L& x) { return fft::fft(x[0]); }, {r}));
    EXPECT_TRUE(autograd::gradcheck([n](const L& x) { return fft::rfft(x[0], n + 2); }, {r}));
    EXPECT_TRUE(autograd::gradcheck([](const L& x) { return fft::fft2(x[0]); }, {z}));
    EXPECT_TRUE(autograd::gradcheck([](const L& x) { return fft::rfft2(x[0]); }, {r}));
    EXPECT_TRUE(autograd::gradcheck([](const L& x) { return fft::irfftn(x[0], std::nullopt, std::nullopt, "ortho"); }, {z}));
  }
}

// The engine against a direct O(n^2) DFT in long double, for lengths of every kind.
TEST(Complex, FftAgainstDirectDft) {
  for (int64_t n : {2, 3, 4, 5, 7, 8, 11, 13, 15, 16, 23, 27, 31, 60, 61, 125, 127, 256, 389, 1000, 1021}) {
    const Tensor z = crandn({n}, static_cast<uint64_t>(n) + 100);
    const Tensor got = fft::fft(z);
    const auto* x = static_cast<const complex<double>*>(z.data_ptr());
    const auto* y = static_cast<const complex<double>*>(got.contiguous().data_ptr());
    double worst = 0;
    for (int64_t k = 0; k < n; ++k) {
      long double re = 0, im = 0;
      for (int64_t j = 0; j < n; ++j) {
        const long double a = -2 * 3.14159265358979323846264338327950288L * static_cast<long double>((j * k) % n) / n;
        re += x[j].real() * std::cos(a) - x[j].imag() * std::sin(a);
        im += x[j].real() * std::sin(a) + x[j].imag() * std::cos(a);
      }
      worst = std::max({worst, std::abs(static_cast<double>(re) - y[k].real()), std::abs(static_cast<double>(im) - y[k].imag())});
    }
    EXPECT_LT(worst, 1e-12 * std::sqrt(static_cast<double>(n)) * 10) << "n=" << n;
  }
}

TEST(Complex, ConjViewsUnderAutograd) {
  // an in-place op on a conjugate view of a leaf's clone reaches the leaf's gradient
  const Tensor a = crandn({3}, 8).requires_grad_();
  Tensor b = a.clone();
  b.conj().mul_(2);
  const Tensor g = autograd::grad({view_as_real(b).sum()}, {a})[0];
  EXPECT_TRUE(g.allclose(full({3}, complex<double>(2, 2), TensorOptions().dtype(kComplexDouble))));
}

TEST(Complex, Errors) {
  const Tensor z = crandn({3}, 9);
  expect_error([&] { z.max(); }, "\"max_all\" not implemented for 'ComplexDouble'");
  expect_error([&] { z.floor(); }, "floor is not supported for complex inputs");
  expect_error([&] { z.lt(z); }, "\"lt_cpu\" not implemented for 'ComplexDouble'");
  expect_error([&] { view_as_complex(ones({3, 3})); }, "Tensor must have a last dimension of size 2");
  expect_error([&] { fft::fft(z, 0); }, "Invalid number of data points (0) specified");
  expect_error([&] { fft::fftn(ones({2, 2}), std::nullopt, {{1, -1}}); }, "FFT dims must be unique");
  expect_error([&] { fft::fft(z, std::nullopt, 3); }, "Dimension out of range");
  expect_error([&] { Tensor w = z.clone(); w.abs_(); }, "In-place abs is not supported for complex tensors.");
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
