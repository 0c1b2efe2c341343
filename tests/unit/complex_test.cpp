// Complex tensors and torch.fft without libtorch: gradcheck of the complex derivatives and of
// every FFT primitive, the statistics of complex random factories, the FFT engine against a
// direct DFT, and conjugate views under autograd.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

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
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0].pow(x[1]); }, {a, b}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0].pow(x[1]); }, {r.abs().detach().requires_grad_(), a}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0].pow(x[1]); }, {a, r}));
  // cumprod through a zero (the division-free formula)
  const Tensor z0 = crandn({4}, 10).index_put_({1}, complex<double>(0, 0)).requires_grad_();
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0].cumprod(0); }, {z0}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0] * complex<double>(0.5, -2); }, {a}));
  // lerp (weights near either end), addcmul, addcdiv: their derivatives conjugate the factors
  const Tensor c = crandn({3}, 11).requires_grad_(), w = (crandn({3}, 12) * 0.3).requires_grad_();
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return lerp(x[0], x[1], x[2]); }, {a, b, w}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return lerp(x[0], x[1], x[2] + 0.9); }, {a, b, w}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return lerp(x[0], x[1], complex<double>(0.25, 0.5)); }, {a, b}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return lerp(x[0], x[1], 0.75); }, {a, b}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return addcmul(x[0], x[1], x[2], complex<double>(2, -1)); }, {a, b, c}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return addcdiv(x[0], x[1], x[2], 0.5); }, {a, b, c}));
  // accumulating scatters into repeated positions
  const Tensor at = tensor(std::vector<int64_t>{2, 0, 2});
  EXPECT_TRUE(autograd::gradcheck([at](const L& x) { return x[0].scatter_add(0, at, x[1]); }, {a, b}));
  EXPECT_TRUE(autograd::gradcheck([at](const L& x) { return x[0].index_put({at}, x[1], true); }, {a, b}));
  // var, std and the norms of complex input (real results)
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0].var(); }, {a}));
  EXPECT_TRUE(autograd::gradcheck([](const L& x) { return x[0].std(); }, {b}));
  for (double p : {0.5, 1.0, 2.0, 3.0, double(INFINITY)})
    EXPECT_TRUE(autograd::gradcheck([p](const L& x) { return x[0].norm(p); }, {a})) << p;
  for (auto f : {+[](const Tensor& x) { return x.exp(); }, +[](const Tensor& x) { return x.log(); },
                 +[](const Tensor& x) { return x.sqrt(); }, +[](const Tensor& x) { return x.sin(); },
                 +[](const Tensor& x) { return x.cos(); }, +[](const Tensor& x) { return x.tanh(); },
                 +[](const Tensor& x) { return x.abs(); }, +[](const Tensor& x) { return x.angle(); },
                 +[](const Tensor& x) { return -x; }, +[](const Tensor& x) { return x.reciprocal(); },
                 +[](const Tensor& x) { return x.square(); }, +[](const Tensor& x) { return real(x) * 2; },
                 +[](const Tensor& x) { return imag(x) * 3; }, +[](const Tensor& x) { return view_as_real(x); },
                 +[](const Tensor& x) { return x.conj_physical(); }, +[](const Tensor& x) { return x.sum(); },
                 +[](const Tensor& x) { return x.mean(); }, +[](const Tensor& x) { return x.prod(); },
                 +[](const Tensor& x) { return x.expm1(); }, +[](const Tensor& x) { return x.log1p(); },
                 +[](const Tensor& x) { return x.exp2(); },
                 +[](const Tensor& x) { return x.sigmoid(); }, +[](const Tensor& x) { return x.tan(); },
                 +[](const Tensor& x) { return x.asin(); }, +[](const Tensor& x) { return x.acos(); },
                 +[](const Tensor& x) { return x.atan(); }, +[](const Tensor& x) { return x.rsqrt(); },
                 +[](const Tensor& x) { return x.log2(); }, +[](const Tensor& x) { return x.log10(); },
                 +[](const Tensor& x) { return x.pow(2.5); }, +[](const Tensor& x) { return x.pow(3); },
                 +[](const Tensor& x) { return x.pow(-1); }, +[](const Tensor& x) { return x.pow(0.5); },
                 +[](const Tensor& x) { return x.pow(complex<double>(1.5, -0.5)); },
                 +[](const Tensor& x) { return pow(2.0, x); },
                 +[](const Tensor& x) { return pow(complex<double>(0.5, 2), x); },
                 +[](const Tensor& x) { return x.cumsum(0); }, +[](const Tensor& x) { return x.cumprod(0); }}) {
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
    EXPECT_TRUE(autograd::gradcheck([](const L& x) { return fft::hfft2(x[0]); }, {z}));
    EXPECT_TRUE(autograd::gradcheck([n](const L& x) { return fft::hfftn(x[0], {{3, n + 1}}, {0, 1}, "forward"); }, {z}));
    EXPECT_TRUE(autograd::gradcheck([](const L& x) { return fft::ihfft2(x[0]); }, {r}));
    EXPECT_TRUE(autograd::gradcheck([](const L& x) { return fft::ihfftn(x[0], std::nullopt, {0, 1}, "ortho"); }, {r}));
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

// Complex expm1 and log1p (libtorch 1.13 has neither) against mpmath at 50 digits, in both
// dtypes, near 0 where the naive forms cancel, on the branch cut of log1p and at special values.
TEST(Complex, Expm1Log1pAgainstMpmath) {
  struct Ref {
    double x, y, expm1_re, expm1_im, log1p_re, log1p_im;
  };
  const Ref refs[] = {
      {1e-10, 1e-10, 1.0000000000000000364e-10, 1.0000000001000000364e-10, 1.0000000000000000364e-10,
       9.9999999990000003644e-11},
      {1e-05, 2.0, -1.4161509980363152696, 0.9093065198454149751, 0.80472095622305015797, 1.1071447178020905083},
      {-1e-08, 0.0001, -1.4999999895833334481e-8, 0.000099999998833333344876, -4.9999999749999993967e-9,
       0.00010000000066666667346},
      {3.0, -4.0, -14.12878308146215808, 15.200784463067954562, 1.7328679513998632735, -0.78539816339744830962},
      {-0.3, 0.2, -0.27394882165403102976, 0.14717786014362487637, -0.31743913621798474809, 0.2782996590051113618},
      {0.5, -0.5, 0.44688903658416915805, -0.79043908321361491184, 0.45814536593707753259, -0.3217505543966421934},
      {-2.0, 1e-300, -0.86466471676338730811, 1.3533528323661269529e-301,
       0.0 /* mpmath: 5.0e-601, below double range */, 3.1415926535897932385},
      {20.0, 1.0, 262135872.80687628239, 408252434.77599177496, 3.0456549410388490629, 0.047583103276983395802},
      {-1.0, 1e-20, -0.6321205588285576784, 3.6787944117144230142e-21, -46.051701859880913735, 1.5707963267948966192},
      {-0.9, 3.0, -1.4025009124885893236, 0.057375113659490819439, 1.0991675358101232729, 1.5374753309166494295},
      {0.25, 0.1, 0.27761063792715543055, 0.12818864440930443256, 0.22633335479622926923, 0.079829985712237320306},
  };
  for (ScalarType t : {kComplexFloat, kComplexDouble}) {
    const bool single = t == kComplexFloat;
    for (const Ref& r : refs) {
      if (single && (std::abs(r.y) < 1e-30 || r.x > 1e30)) continue;  // outside float's range
      const Tensor z = full({1}, complex<double>(r.x, r.y), TensorOptions().dtype(t));
      const auto e = z.expm1().to(kComplexDouble).item<complex<double>>();
      const auto l = z.log1p().to(kComplexDouble).item<complex<double>>();
      // relative to each part, and to the modulus for a part much smaller than it
      const double rel = single ? 2e-6 : 4e-16;
      const auto near = [rel](double got, double want, double scale) {
        return std::abs(got - want) <= rel * std::max(std::abs(want), 1e-6 * scale) + 1e-300;
      };
      const double es = std::hypot(r.expm1_re, r.expm1_im), ls = std::hypot(r.log1p_re, r.log1p_im);
      EXPECT_TRUE(near(e.real(), r.expm1_re, es)) << r.x << " " << r.y << ": " << e.real();
      EXPECT_TRUE(near(e.imag(), r.expm1_im, es)) << r.x << " " << r.y << ": " << e.imag();
      EXPECT_TRUE(near(l.real(), r.log1p_re, ls)) << r.x << " " << r.y << ": " << l.real();
      EXPECT_TRUE(near(l.imag(), r.log1p_im, ls)) << r.x << " " << r.y << ": " << l.imag();
    }
  }
  // the branch cut of log1p (real part < -1): the sign of a zero imaginary part picks the side
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const auto log1p_at = [](double x, double y) {
    return full({1}, complex<double>(x, y), TensorOptions().dtype(kComplexDouble)).log1p().item<complex<double>>();
  };
  EXPECT_DOUBLE_EQ(log1p_at(-3, 0.0).imag(), M_PI);
  EXPECT_DOUBLE_EQ(log1p_at(-3, -0.0).imag(), -M_PI);
  EXPECT_DOUBLE_EQ(log1p_at(-3, 0.0).real(), std::log(2.0));
  EXPECT_EQ(log1p_at(-1, 0.0).real(), -inf);
  EXPECT_EQ(log1p_at(inf, 1).real(), inf);
  EXPECT_EQ(log1p_at(inf, 1).imag(), 0.0);
  EXPECT_TRUE(std::isnan(log1p_at(nan, 1).real()));
  const auto expm1_at = [](double x, double y) {
    return full({1}, complex<double>(x, y), TensorOptions().dtype(kComplexDouble)).expm1().item<complex<double>>();
  };
  EXPECT_NEAR(expm1_at(-inf, 1).real(), -1.0, 1e-15);
  EXPECT_EQ(expm1_at(-inf, 1).imag(), 0.0);
  EXPECT_EQ(expm1_at(inf, 0).real(), inf);
  EXPECT_EQ(expm1_at(0, 0).real(), 0.0);
  EXPECT_TRUE(std::isnan(expm1_at(nan, 0).real()));
}

TEST(Complex, ConjViewsUnderAutograd) {
  // an in-place op on a conjugate view of a leaf's clone reaches the leaf's gradient
  const Tensor a = crandn({3}, 8).requires_grad_();
  Tensor b = a.clone();
  b.conj().mul_(2);
  const Tensor g = autograd::grad({view_as_real(b).sum()}, {a})[0];
  EXPECT_TRUE(g.allclose(full({3}, complex<double>(2, 2), TensorOptions().dtype(kComplexDouble))));
}

TEST(Complex, ConjFallback) {
  // An op that does not read the conjugate bit gets its conjugated arguments resolved (in a list
  // too), and one writing into a conjugate view writes through the bit (dispatch's fallback).
  const Tensor a = crandn({3}, 10), b = crandn({3}, 11);
  const Tensor ac = a.conj();
  ASSERT_TRUE(ac.is_conj());
  const Tensor joined = cat({b, ac});
  EXPECT_FALSE(joined.is_conj());
  EXPECT_TRUE(joined.equal(cat({b, ac.resolve_conj()})));
  EXPECT_TRUE(cumsum(ac, 0).equal(cumsum(ac.resolve_conj(), 0)));
  Tensor x = a.clone();
  Tensor xc = x.conj();
  const Tensor index = tensor({0, 2}), source = b.narrow(0, 0, 2);
  Tensor& r = xc.index_add_(0, index, source);
  EXPECT_EQ(&r, &xc);
  EXPECT_TRUE(xc.is_conj());
  EXPECT_TRUE(xc.resolve_conj().allclose(ac.resolve_conj().index_add(0, index, source)));
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
