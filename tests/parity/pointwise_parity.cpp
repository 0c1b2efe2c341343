// Pointwise ops against libtorch: random inputs of many shapes, layouts and dtypes.
#include <random>

#include "parity/parity.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using parity::kAllTypes;

using parity::Close;
using parity::random;
using parity::to_torch;

namespace {


struct ShapePair {
  std::vector<int64_t> a, b;
};
const ShapePair kShapes[] = {
    {{}, {}},           {{7}, {7}},          {{1000}, {1000}}, {{3, 4}, {4}},     {{3, 1}, {1, 5}},
    {{2, 3, 4}, {}},    {{0, 3}, {3}},       {{70000}, {1}},   {{5, 6, 7}, {6, 1}}, {{2, 1, 4, 3}, {5, 1, 1}},
    {{37, 20}, {20}},  // short rows against one broadcast row: rows taken 12 at a time, the last group short
};

}  // namespace

TEST(PointwiseParity, AddSubMulDivBroadcastAllDtypes) {
  uint64_t seed = 1;
  for (ember::ScalarType dt : kAllTypes) {
    for (const auto& s : kShapes) {
      ember::Tensor a = random(s.a, dt, seed++), b = random(s.b, dt, seed++);
      torch::Tensor ta = to_torch(a), tb = to_torch(b);
      EXPECT_TRUE(Close(ember::add(a, b), torch::add(ta, tb))) << "add " << dt;
      EXPECT_TRUE(Close(ember::mul(a, b), torch::mul(ta, tb))) << "mul " << dt;
      if (dt != ember::kBool) {
        EXPECT_TRUE(Close(ember::sub(a, b, 2), torch::sub(ta, tb, 2))) << "sub " << dt;
      }
      if (ember::is_floating_type(dt)) {
        EXPECT_TRUE(Close(ember::div(a, b), torch::div(ta, tb))) << "div " << dt;
        EXPECT_TRUE(Close(ember::add(a, b, 0.5), torch::add(ta, tb, 0.5))) << "add alpha " << dt;
      }
    }
  }
}

TEST(PointwiseParity, MixedDtypesScalarsAndZeroDim) {
  uint64_t seed = 100;
  for (ember::ScalarType da : kAllTypes) {
    for (ember::ScalarType db : kAllTypes) {
      ember::Tensor a = random({3, 4}, da, seed++), b = random({4}, db, seed++), z = random({}, db, seed++);
      torch::Tensor ta = to_torch(a), tb = to_torch(b), tz = to_torch(z);
      EXPECT_TRUE(Close(ember::add(a, b), torch::add(ta, tb))) << da << " + " << db;
      EXPECT_TRUE(Close(ember::mul(a, z), torch::mul(ta, tz))) << da << " * 0-dim " << db;
    }
    ember::Tensor a = random({5}, da, seed++);
    torch::Tensor ta = to_torch(a);
    EXPECT_TRUE(Close(ember::add(a, 3), torch::add(ta, 3))) << da << " + int";
    EXPECT_TRUE(Close(ember::mul(a, 2.5), torch::mul(ta, 2.5))) << da << " * double";
    EXPECT_TRUE(Close(ember::add(a, true), torch::add(ta, true))) << da << " + bool";
  }
}

TEST(PointwiseParity, LayoutsArePreserved) {
  ember::Tensor a = random({2, 3, 5, 4}, ember::kFloat, 7).contiguous(ember::MemoryFormat::ChannelsLast);
  ember::Tensor b = random({2, 3, 5, 4}, ember::kFloat, 8);
  torch::Tensor ta = to_torch(a), tb = to_torch(b);
  ember::Tensor r = ember::add(a, a);
  EXPECT_TRUE(r.is_contiguous(ember::MemoryFormat::ChannelsLast));
  EXPECT_TRUE(Close(r, torch::add(ta, ta)));
  EXPECT_TRUE(Close(ember::mul(a, b), torch::mul(ta, tb)));
  ember::Tensor t = random({6, 9}, ember::kFloat, 9).t();
  ember::Tensor rt = ember::mul(t, 3);
  EXPECT_EQ(rt.strides(), t.strides());
  EXPECT_TRUE(Close(rt, torch::mul(to_torch(t), 3)));
  ember::Tensor sliced = random({10, 12}, ember::kDouble, 10).slice(1, 1, 12, 3);
  EXPECT_TRUE(Close(ember::add(sliced, sliced), torch::add(to_torch(sliced), to_torch(sliced))));
}

// ---- the rest of the family ------------------------------------------------------------------

namespace {

using ember::Tensor;

std::string describe(const Tensor& t) {
  std::ostringstream os;
  os << " " << t.dtype() << t.sizes() << (t.is_contiguous() ? "" : " (strided)");
  return os.str();
}

// libtorch's result computed in float32 for Half/BFloat16 operands: the inputs are cast to
// their common dtype (so 0-dim operands round as they would), widened to float32, and the
// result rounded back to the common dtype.
template <class TF>
torch::Tensor float32_reference(const std::vector<torch::Tensor>& tin, TF tf) {
  torch::Tensor acc;
  for (const auto& t : tin) {
    if (t.scalar_type() == torch::kBool) continue;  // where's condition keeps its dtype
    if (!acc.defined()) {
      acc = torch::empty(t.dim() > 0 ? std::vector<int64_t>{1} : std::vector<int64_t>{}, t.options());
    } else {
      const auto dt = torch::result_type(acc, t);
      acc = torch::empty(acc.dim() > 0 || t.dim() > 0 ? std::vector<int64_t>{1} : std::vector<int64_t>{},
                         acc.options().dtype(dt));
    }
  }
  const auto common = acc.scalar_type();
  const bool reduced = common == torch::kHalf || common == torch::kBFloat16;
  std::vector<torch::Tensor> t32;
  for (const auto& t : tin) {
    if (t.scalar_type() == torch::kBool) {
      t32.push_back(t);
    } else {
      t32.push_back(reduced ? t.to(common).to(torch::kFloat) : t);
    }
  }
  torch::Tensor r = tf(t32);
  return reduced && r.scalar_type() == torch::kFloat ? r.to(common) : r;
}

// Runs an op on both sides; Ember must refuse exactly what libtorch refuses. libtorch 1.13
// lacks many Half CPU kernels, which Ember has (computing in float32 like BFloat16): there the
// reference is float32_reference. `float32_ref` asks for it also where libtorch's own Half /
// BFloat16 kernel rounds intermediate values (Ember rounds once).
template <class EF, class TF>
void check(const std::string& what, const std::vector<Tensor>& in, EF ef, TF tf, bool float32_ref = false) {
  std::vector<torch::Tensor> tin;
  bool reduced = false;
  for (const auto& t : in) {
    tin.push_back(to_torch(t));
    reduced = reduced || ember::is_reduced_floating_type(t.dtype());
  }
  torch::Tensor ref;
  bool refused = false;
  try {
    ref = tf(tin);
  } catch (const std::exception&) {  // c10::Error, or libtorch's checked Scalar conversions
    refused = true;
  }
  if (reduced && (refused || float32_ref)) {
    try {
      ref = float32_reference(tin, tf);
      refused = false;
    } catch (const std::exception&) {
      refused = true;
    }
  }
  std::string where = what;
  for (const auto& t : in) where += describe(t);
  if (refused) {
    EXPECT_THROW(ef(in), ember::Error) << where << ": libtorch refuses, Ember must too";
    return;
  }
  try {
    EXPECT_TRUE(Close(ef(in), ref)) << where;
  } catch (const ember::Error& e) {
    ADD_FAILURE() << where << ": Ember raised " << e.what();
  }
}

const std::vector<std::vector<int64_t>> kUnaryShapes = {{}, {0}, {7}, {3, 5}, {70001}, {4, 0, 3}};

// The same values in other layouts: transposed, sliced with a step, channels_last.
std::vector<Tensor> layouts(ember::ScalarType dt, uint64_t seed) {
  return {random({9, 6}, dt, seed).t(), random({5, 20}, dt, seed + 1).slice(1, 1, 20, 3),
          random({2, 3, 5, 4}, dt, seed + 2).contiguous(ember::MemoryFormat::ChannelsLast)};
}

// Values that exercise the edges of the vector formulas (specials, overflow, subnormal results,
// large trigonometric arguments), in float32 and float64.
Tensor special_values(ember::ScalarType dt) {
  std::vector<double> v = {0.0,  -0.0,  INFINITY, -INFINITY, NAN,     1e-40,  -1e-40, 1e-30, 1e30,  -1e30,
                           88.5, 89.0,  -87.5,    -100.0,    -104.5,  700.5,  -745.0, 1e5,   -4e4,  3.14159265,
                           0.5,  -1.0,  1.0,      -0.99,     -0.9999, 2.5,    -2.5,   20.0,  -20.0, 127.5,
                           -126.5, -149.5, 1023.5, -1074.0, 0.999999, -0.999999, 8.0, 1e-8, -1e-8, 50.0};
  return ember::tensor(v).to(dt);
}

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> ember_fn;
  std::function<torch::Tensor(const torch::Tensor&)> torch_fn;
  bool float32_ref = false;
};

const std::vector<UnaryCase>& unary_cases() {
  static const std::vector<UnaryCase> cases = {
#define EMBER_CASE(fn) {#fn, [](const Tensor& x) { return ember::fn(x); }, [](const torch::Tensor& x) { return torch::fn(x); }}
      EMBER_CASE(abs), EMBER_CASE(neg), EMBER_CASE(sign), EMBER_CASE(exp), EMBER_CASE(exp2), EMBER_CASE(expm1),
      EMBER_CASE(log), EMBER_CASE(log2), EMBER_CASE(log10), EMBER_CASE(log1p), EMBER_CASE(sqrt), EMBER_CASE(rsqrt),
      EMBER_CASE(sin), EMBER_CASE(cos), EMBER_CASE(tan), EMBER_CASE(asin), EMBER_CASE(acos), EMBER_CASE(atan),
      EMBER_CASE(tanh), EMBER_CASE(sigmoid), EMBER_CASE(relu),
      EMBER_CASE(silu), EMBER_CASE(hardswish), EMBER_CASE(hardsigmoid), EMBER_CASE(erf), EMBER_CASE(erfc),
      EMBER_CASE(erfinv), EMBER_CASE(floor), EMBER_CASE(ceil), EMBER_CASE(round), EMBER_CASE(trunc),
      EMBER_CASE(reciprocal), EMBER_CASE(square), EMBER_CASE(isnan), EMBER_CASE(isinf), EMBER_CASE(isfinite),
      EMBER_CASE(logical_not), EMBER_CASE(bitwise_not), EMBER_CASE(nan_to_num),
#undef EMBER_CASE
      {"gelu", [](const Tensor& x) { return ember::gelu(x); }, [](const torch::Tensor& x) { return torch::gelu(x); },
       true},
      {"gelu_tanh", [](const Tensor& x) { return ember::gelu(x, "tanh"); },
       [](const torch::Tensor& x) { return torch::gelu(x, "tanh"); }, true},
      {"leaky_relu", [](const Tensor& x) { return ember::leaky_relu(x, 0.2); },
       [](const torch::Tensor& x) { return torch::leaky_relu(x, 0.2); }},
      {"elu", [](const Tensor& x) { return ember::elu(x, 1.5, 0.7, 1.3); },
       [](const torch::Tensor& x) { return torch::elu(x, 1.5, 0.7, 1.3); }},
      {"softplus", [](const Tensor& x) { return ember::softplus(x, 2, 3); },
       [](const torch::Tensor& x) { return torch::softplus(x, 2, 3); }},
      {"nan_to_num_args", [](const Tensor& x) { return ember::nan_to_num(x, 1.5, 100.0, -7.0); },
       [](const torch::Tensor& x) { return torch::nan_to_num(x, 1.5, 100.0, -7.0); }},
      {"clamp", [](const Tensor& x) { return ember::clamp(x, -0.5, 1); },
       [](const torch::Tensor& x) { return torch::clamp(x, -0.5, 1); }},
      {"clamp_int", [](const Tensor& x) { return ember::clamp(x, -3, 4); },
       [](const torch::Tensor& x) { return torch::clamp(x, -3, 4); }},
      {"clamp_min", [](const Tensor& x) { return ember::clamp_min(x, 0.25); },
       [](const torch::Tensor& x) { return torch::clamp_min(x, 0.25); }},
      {"clamp_max", [](const Tensor& x) { return ember::clamp_max(x, 1); },
       [](const torch::Tensor& x) { return torch::clamp_max(x, 1); }},
  };
  return cases;
}

void check_unary(const UnaryCase& c, const Tensor& x) {
  check(c.name, {x}, [&](const std::vector<Tensor>& v) { return c.ember_fn(v[0]); },
        [&](const std::vector<torch::Tensor>& v) { return c.torch_fn(v[0]); }, c.float32_ref);
}

}  // namespace

TEST(PointwiseParity, UnaryAllDtypesShapesAndLayouts) {
  uint64_t seed = 1000;
  for (ember::ScalarType dt : kAllTypes) {
    for (const auto& shape : kUnaryShapes) {
      Tensor x = random(shape, dt, seed++);
      for (const auto& c : unary_cases()) check_unary(c, x);
    }
    for (const Tensor& x : layouts(dt, seed += 3))
      for (const auto& c : unary_cases()) check_unary(c, x);
  }
}

TEST(PointwiseParity, UnaryWideRangeAndSpecialValues) {
  uint64_t seed = 2000;
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble, ember::kBFloat16, ember::kHalf}) {
    const Tensor wide = ember::mul(random({4099}, ember::kDouble, seed++), 30).to(dt);
    const Tensor unit = ember::mul(random({4099}, ember::kDouble, seed++), 0.4999).to(dt);  // (-1, 1) for erfinv
    for (const auto& c : unary_cases()) {
      check_unary(c, wide);
      check_unary(c, unit);
      if (!ember::is_reduced_floating_type(dt)) check_unary(c, special_values(dt));
    }
  }
}

// float32 results within a few ulp of libtorch's (Sleef, <= 1 ulp), not just the parity tolerance.
TEST(PointwiseParity, Float32TranscendentalsWithinUlps) {
  const Tensor x = ember::mul(random({200003}, ember::kDouble, 77), 40).to(ember::kFloat);
  const Tensor pos = ember::abs(x);
  auto ulps = [](const Tensor& e, const torch::Tensor& t) {
    Tensor ec = e.contiguous();
    torch::Tensor tc = t.contiguous();
    const float* a = ec.data_ptr<float>();
    const float* b = tc.data_ptr<float>();
    double worst = 0;
    for (int64_t i = 0; i < ec.numel(); ++i) {
      if (std::isnan(a[i]) && std::isnan(b[i])) continue;
      if (a[i] == b[i]) continue;
      const double ulp = std::max(std::fabs(std::nextafter(b[i], INFINITY) - b[i]), 1.4e-45f);
      worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]) / ulp);
    }
    return worst;
  };
  EXPECT_LE(ulps(ember::exp(x), torch::exp(to_torch(x))), 2);
  EXPECT_LE(ulps(ember::exp2(x), torch::exp2(to_torch(x))), 2);
  EXPECT_LE(ulps(ember::expm1(x), torch::expm1(to_torch(x))), 4);
  EXPECT_LE(ulps(ember::log(pos), torch::log(to_torch(pos))), 4);
  EXPECT_LE(ulps(ember::log1p(pos), torch::log1p(to_torch(pos))), 3);
  EXPECT_LE(ulps(ember::log2(pos), torch::log2(to_torch(pos))), 4);
  EXPECT_LE(ulps(ember::sin(x), torch::sin(to_torch(x))), 4);
  EXPECT_LE(ulps(ember::cos(x), torch::cos(to_torch(x))), 4);
  EXPECT_LE(ulps(ember::tanh(x), torch::tanh(to_torch(x))), 5);
  EXPECT_LE(ulps(ember::sigmoid(x), torch::sigmoid(to_torch(x))), 3);
  EXPECT_LE(ulps(ember::sqrt(pos), torch::sqrt(to_torch(pos))), 0);
}

// The functions vectorized through float64 or with their own polynomials (tan, asin, acos, atan,
// atan2, erf, erfc, erfinv, gelu, digamma, fmod, remainder) against libtorch's float64 results rounded to float32:
// within an ulp or two of the correctly rounded value (fmod and remainder exact), over the whole
// range their formulas switch between.
TEST(PointwiseParity, Float32VectorFormsWithinUlpsOfFloat64) {
  const Tensor wide = ember::mul(random({200003}, ember::kDouble, 78), 40).to(ember::kFloat);
  const Tensor narrow = ember::mul(random({200003}, ember::kDouble, 79), 4).to(ember::kFloat);
  const Tensor unit = ember::mul(random({200003}, ember::kDouble, 80), 0.4999).to(ember::kFloat);
  const Tensor den = ember::mul(random({200003}, ember::kDouble, 81), 3).to(ember::kFloat);
  // worst |ember - round(float64 reference)| in ulps of the reference (NaNs must agree)
  auto ulps = [](const Tensor& e, const torch::Tensor& t64) {
    Tensor ec = e.contiguous();
    torch::Tensor tc = t64.to(torch::kFloat).contiguous();
    const float* a = ec.data_ptr<float>();
    const float* b = tc.data_ptr<float>();
    double worst = 0;
    for (int64_t i = 0; i < ec.numel(); ++i) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return double{INFINITY};
      if (std::isnan(a[i]) || a[i] == b[i]) continue;
      const double ulp = std::max(std::fabs(std::nextafter(b[i], INFINITY) - b[i]), 1.4e-45f);
      worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]) / ulp);
    }
    return worst;
  };
  auto t64 = [](const Tensor& x) { return to_torch(x).to(torch::kDouble); };
  for (const Tensor& x : {wide, narrow}) {
    EXPECT_LE(ulps(ember::tan(x), torch::tan(t64(x))), 1);
    EXPECT_LE(ulps(ember::atan(x), torch::atan(t64(x))), 1);
    EXPECT_LE(ulps(ember::erf(x), torch::erf(t64(x))), 2);
    EXPECT_LE(ulps(ember::erfc(x), torch::erfc(t64(x))), 3);
    // x Phi(x) through erfc: libtorch's float64 gelu loses the small negative results to cancellation
    EXPECT_LE(ulps(ember::gelu(x), t64(x) * 0.5 * torch::erfc(t64(x) * -M_SQRT1_2)), 3);
    EXPECT_LE(ulps(ember::atan2(x, den), torch::atan2(t64(x), t64(den))), 1);
    EXPECT_EQ(ulps(ember::fmod(x, den), torch::fmod(t64(x), t64(den))), 0);
    EXPECT_EQ(ulps(ember::remainder(x, den), torch::remainder(t64(x), t64(den))), 0);
    EXPECT_LE(ulps(ember::digamma(x), torch::digamma(t64(x))), 2);
  }
  // tan next to its poles (the floats nearest k pi/2 and their neighbours), at the bound of its
  // vector form, beyond it, and at special values; the sign of a zero result kept
  std::vector<float> poles = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 29999.99f, 30000.0f, -30000.0f, 30001.0f,
                              1e6f, -1e30f, 1e-30f, -1e-40f};
  for (int k = 1; k < 19100; k += 7) {
    const float p = static_cast<float>(k * M_PI_2);
    for (float v : {std::nextafter(p, 0.0f), p, std::nextafter(p, INFINITY)}) poles.insert(poles.end(), {v, -v});
  }
  const Tensor pt = ember::from_blob(poles.data(), {static_cast<int64_t>(poles.size())}, ember::kFloat).clone();
  EXPECT_LE(ulps(ember::tan(pt), torch::tan(t64(pt))), 1);
  EXPECT_TRUE(std::signbit(ember::tan(pt).data_ptr<float>()[1]));
  EXPECT_LE(ulps(ember::erfinv(unit), torch::erfinv(t64(unit))), 1);
  EXPECT_LE(ulps(ember::asin(unit), torch::asin(t64(unit))), 1);
  EXPECT_LE(ulps(ember::acos(unit), torch::acos(t64(unit))), 1);
}

// Exact gelu and its gradient in float32: the table form (every lane of a vector at or above -5.6
// or -11.6, by the SIMD width), the float64 form for vectors with a lane below it, and libm for
// NaN and infinities, all mixed in one tensor; against libtorch's float64 results.
TEST(PointwiseParity, GeluFloat32AllRangesAgainstFloat64) {
  std::vector<double> v;
  for (int i = 0; i <= 200000; ++i) v.push_back(-13.0 + 26.0 * i / 200000);  // every form's range
  for (double e : {1e-30, 1e-8, 1e-3, 0.37, 0.375, 0.75, 5.6, 5.625, 11.6, 11.625, 12.5, 13.0, 20.0, 1e5, 3e38}) {
    v.push_back(e);
    v.push_back(-e);
  }
  for (int i = 0; i < 2000; ++i) v.push_back(i % 16 == 5 ? -12.0 : -1.0 + i * 1e-3);  // vectors that fall back
  v.insert(v.end(), {0.0, -0.0, INFINITY, -INFINITY, NAN, -1e-40, 1e-40});
  const Tensor x = ember::tensor(v).to(ember::kFloat);
  const torch::Tensor x64 = to_torch(x).to(torch::kDouble);
  auto ulps = [](const Tensor& e, const torch::Tensor& t64, double abs_floor) {
    Tensor ec = e.contiguous();
    torch::Tensor tc = t64.to(torch::kFloat).contiguous();
    const float* a = ec.data_ptr<float>();
    const float* b = tc.data_ptr<float>();
    double worst = 0;
    for (int64_t i = 0; i < ec.numel(); ++i) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return double{INFINITY};
      if (std::isnan(a[i]) || a[i] == b[i]) continue;
      if (std::isinf(a[i]) || std::isinf(b[i])) return double{INFINITY};
      const double ulp = std::max(static_cast<double>(std::nextafter(std::fabs(b[i]), INFINITY) - std::fabs(b[i])), abs_floor);
      worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]) / ulp);
    }
    return worst;
  };
  // x Phi(x) through erfc (libtorch's float64 gelu cancels for negative x)
  const torch::Tensor want = x64 * 0.5 * torch::erfc(x64 * -M_SQRT1_2);
  EXPECT_LE(ulps(ember::gelu(x), want, 1.4e-45), 2);
  // strided, broadcast (a stride of 0) and reversed
  for (const Tensor& xt : {x.slice(0, 0, x.numel(), 3), x.view({-1, 1}).expand({-1, 2}), x.flip({0})}) {
    const torch::Tensor t64 = to_torch(xt).to(torch::kDouble);
    EXPECT_LE(ulps(ember::gelu(xt), t64 * 0.5 * torch::erfc(t64 * -M_SQRT1_2), 1.4e-45), 2);
  }
  // The gradient: Phi(x) + x phi(x) times a random grad, within a few ulp (or 2^-24 of the grad
  // where the derivative crosses zero, near x = -0.75, and cancels as libtorch's does).
  const Tensor g = ember::add(ember::mul(random({x.numel()}, ember::kDouble, 90), 2.0), 0.5).to(ember::kFloat);
  const Tensor xg = x.detach().requires_grad_();
  ember::gelu(xg).backward(g);
  const torch::Tensor g64 = to_torch(g).to(torch::kDouble);
  const torch::Tensor dwant =
      g64 * (0.5 * torch::erfc(x64 * -M_SQRT1_2) + x64 * torch::exp(x64 * x64 * -0.5) * 0.398942280401432677939946);
  EXPECT_LE(ulps(xg.grad(), dwant, 1.5e-7), 4);  // NaN for infinities (inf * 0), as libtorch's
  // +inf among finite lanes (the table form takes it): gelu inf, gradient NaN as libtorch's
  std::vector<double> w(32, 0.5);
  w[3] = INFINITY;
  w[20] = -2.0;
  const Tensor xi = ember::tensor(w).to(ember::kFloat).requires_grad_();
  const torch::Tensor ti = to_torch(xi.detach()).requires_grad_();
  const Tensor yi = ember::gelu(xi);
  const torch::Tensor tyi = torch::gelu(ti);
  EXPECT_TRUE(Close(yi.detach(), tyi.detach()));
  yi.backward(ember::ones_like(yi));
  tyi.backward(torch::ones_like(tyi));
  EXPECT_TRUE(Close(xi.grad(), ti.grad()));
  // bfloat16 and float16 compute in float32 lanes: within one rounding of the float32 result
  for (ember::ScalarType dt : {ember::kBFloat16, ember::kHalf}) {
    const Tensor xr = x.to(dt);
    const Tensor want_r = ember::gelu(xr.to(ember::kFloat)).to(dt);
    EXPECT_TRUE(Close(ember::gelu(xr), to_torch(want_r), {0, 0})) << dt;
  }
}

TEST(PointwiseParity, InPlaceAndOutForms) {
  uint64_t seed = 3000;
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble, ember::kBFloat16}) {
    for (Tensor x : layouts(dt, seed += 3)) {
      torch::Tensor tx = to_torch(x);
      Tensor e = x.clone();
      e.exp_();
      EXPECT_TRUE(Close(e, tx.exp())) << "exp_ " << dt;
      Tensor s = x.clone();
      s.sigmoid_();
      EXPECT_TRUE(Close(s, tx.sigmoid())) << "sigmoid_ " << dt;
      Tensor r = x.clone();
      r.clamp_(-0.5, 0.5);
      EXPECT_TRUE(Close(r, tx.clamp(-0.5, 0.5))) << "clamp_ " << dt;
      Tensor out = ember::empty({0}, ember::TensorOptions().dtype(ember::kDouble));
      ember::tanh_out(out, x);
      EXPECT_TRUE(Close(out, tx.tanh().to(torch::kDouble))) << "tanh_out " << dt;
    }
  }
}

namespace {

struct BinaryCase {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&)> ember_fn;
  std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&)> torch_fn;
  bool divides;  // the second operand must not hold integer zeros
};

const std::vector<BinaryCase>& binary_cases() {
  using T = const Tensor&;
  using TT = const torch::Tensor&;
  static const std::vector<BinaryCase> cases = {
      {"div_trunc", [](T a, T b) { return ember::div(a, b, "trunc"); }, [](TT a, TT b) { return torch::div(a, b, "trunc"); }, true},
      {"div_floor", [](T a, T b) { return ember::div(a, b, "floor"); }, [](TT a, TT b) { return torch::div(a, b, "floor"); }, true},
      {"remainder", [](T a, T b) { return ember::remainder(a, b); }, [](TT a, TT b) { return torch::remainder(a, b); }, true},
      {"fmod", [](T a, T b) { return ember::fmod(a, b); }, [](TT a, TT b) { return torch::fmod(a, b); }, true},
      {"floor_divide", [](T a, T b) { return ember::floor_divide(a, b); }, [](TT a, TT b) { return torch::floor_divide(a, b); }, true},
      {"pow", [](T a, T b) { return ember::pow(a, b); }, [](TT a, TT b) { return torch::pow(a, b); }, false},
      {"minimum", [](T a, T b) { return ember::minimum(a, b); }, [](TT a, TT b) { return torch::minimum(a, b); }, false},
      {"maximum", [](T a, T b) { return ember::maximum(a, b); }, [](TT a, TT b) { return torch::maximum(a, b); }, false},
      {"atan2", [](T a, T b) { return ember::atan2(a, b); }, [](TT a, TT b) { return torch::atan2(a, b); }, false},
      {"copysign", [](T a, T b) { return ember::copysign(a, b); }, [](TT a, TT b) { return torch::copysign(a, b); }, false},
      {"threshold_backward", [](T a, T b) { return ember::threshold_backward(a, b, 0.25); },
       [](TT a, TT b) { return torch::threshold_backward(a, b, 0.25); }, false},
      {"bitwise_and", [](T a, T b) { return ember::bitwise_and(a, b); }, [](TT a, TT b) { return torch::bitwise_and(a, b); }, false},
      {"bitwise_or", [](T a, T b) { return ember::bitwise_or(a, b); }, [](TT a, TT b) { return torch::bitwise_or(a, b); }, false},
      {"bitwise_xor", [](T a, T b) { return ember::bitwise_xor(a, b); }, [](TT a, TT b) { return torch::bitwise_xor(a, b); }, false},
      {"eq", [](T a, T b) { return ember::eq(a, b); }, [](TT a, TT b) { return torch::eq(a, b); }, false},
      {"ne", [](T a, T b) { return ember::ne(a, b); }, [](TT a, TT b) { return torch::ne(a, b); }, false},
      {"lt", [](T a, T b) { return ember::lt(a, b); }, [](TT a, TT b) { return torch::lt(a, b); }, false},
      {"le", [](T a, T b) { return ember::le(a, b); }, [](TT a, TT b) { return torch::le(a, b); }, false},
      {"gt", [](T a, T b) { return ember::gt(a, b); }, [](TT a, TT b) { return torch::gt(a, b); }, false},
      {"ge", [](T a, T b) { return ember::ge(a, b); }, [](TT a, TT b) { return torch::ge(a, b); }, false},
      {"logical_and", [](T a, T b) { return ember::logical_and(a, b); }, [](TT a, TT b) { return torch::logical_and(a, b); }, false},
      {"logical_or", [](T a, T b) { return ember::logical_or(a, b); }, [](TT a, TT b) { return torch::logical_or(a, b); }, false},
      {"logical_xor", [](T a, T b) { return ember::logical_xor(a, b); }, [](TT a, TT b) { return torch::logical_xor(a, b); }, false},
      {"rsub", [](T a, T b) { return ember::rsub(a, b, 2); }, [](TT a, TT b) { return torch::rsub(a, b, 2); }, false},
  };
  return cases;
}

// Integer divisors get their zeros replaced (integer division by zero is an error, tested in
// the unit tests); float divisors keep them.
Tensor divisor(const Tensor& b) {
  if (ember::is_floating_type(b.dtype()) || b.dtype() == ember::kBool) return b;
  return b.masked_fill(ember::eq(b, 0), 3);
}

void check_binary(const BinaryCase& c, const Tensor& a, const Tensor& b0) {
  const Tensor b = c.divides ? divisor(b0) : b0;
  check(c.name, {a, b}, [&](const std::vector<Tensor>& v) { return c.ember_fn(v[0], v[1]); },
        [&](const std::vector<torch::Tensor>& v) { return c.torch_fn(v[0], v[1]); });
}

}  // namespace

TEST(PointwiseParity, BinaryAllDtypesAndBroadcasts) {
  uint64_t seed = 4000;
  for (ember::ScalarType dt : kAllTypes) {
    for (const auto& s : kShapes) {
      Tensor a = random(s.a, dt, seed++), b = random(s.b, dt, seed++);
      for (const auto& c : binary_cases()) check_binary(c, a, b);
    }
    const auto la = layouts(dt, seed += 3), lb = layouts(dt, seed += 3);
    for (size_t i = 0; i < la.size(); ++i)
      for (const auto& c : binary_cases()) check_binary(c, la[i], lb[i]);
  }
}

// The integer division ops on every pair of extreme and ordinary values of each integer dtype
// (int32 and narrower divide in double: exact for all of them), but the dtype's minimum by -1,
// which traps in libtorch's integer division.
TEST(PointwiseParity, IntegerDivisionExtremes) {
  for (ember::ScalarType dt : {ember::kByte, ember::kChar, ember::kShort, ember::kInt, ember::kLong}) {
    const torch::ScalarType tdt = to_torch(dt);
    const int64_t min = dt == ember::kByte ? 0
                        : dt == ember::kChar ? INT8_MIN
                        : dt == ember::kShort ? INT16_MIN
                        : dt == ember::kInt ? INT32_MIN
                                            : INT64_MIN;
    const torch::Tensor lo = torch::full({1}, min, tdt), hi = lo.bitwise_not();
    const torch::Tensor v = torch::cat({lo, lo + 1, hi, hi - 1,
                                        torch::tensor({-1000003, -77, -7, -2, -1, 1, 2, 3, 7, 77, 1000003}).to(tdt)});
    const torch::Tensor a = v.unsqueeze(1).expand({v.size(0), v.size(0)}).contiguous();
    const torch::Tensor b0 = v.unsqueeze(0).expand({v.size(0), v.size(0)}).contiguous();
    const torch::Tensor b = b0.masked_fill(b0.eq(0) | (a.eq(min) & b0.eq(-1)), 3);
    for (const char* name : {"div_trunc", "div_floor", "remainder", "fmod", "floor_divide"}) {
      for (const auto& c : binary_cases()) {
        if (std::string_view(c.name) != name) continue;
        EXPECT_TRUE(Close(c.ember_fn(parity::to_ember(a), parity::to_ember(b)), c.torch_fn(a, b))) << name << " " << dt;
      }
    }
  }
}

// int64 division runs in double on blocks whose operands all lie in [-2^50, 2^50) and as integers
// elsewhere (pointwise_int.cpp): rows of values at and either side of those bounds, of small and
// of full-range values, both signs, mixed per block or not, contiguous, transposed and broadcast,
// against libtorch exactly.
TEST(PointwiseParity, Int64DivisionBothPathsExact) {
  const int64_t lim = int64_t{1} << 50;
  const std::vector<int64_t> edges = {lim - 1, -lim, lim - 3, -lim + 1, lim, -lim - 1, (lim << 3) + 1, INT64_MIN,
                                      INT64_MAX, 1, -1, 2, -2, 3, 1000003, -1000003};
  std::mt19937_64 rng(2501);
  const int64_t n = 2048;  // 64 x 32; the first half from the double path's range only (two blocks)
  std::vector<int64_t> a(n), b(n);
  for (int64_t i = 0; i < n; ++i) {
    const bool wide = i >= n / 2 && i % 5 == 0;
    const int64_t bits = i % 3 == 0 ? 12 : i % 3 == 1 ? 40 : 50;
    auto draw = [&](int64_t k) {
      if (wide) return static_cast<int64_t>(rng());
      if (i % 7 == k) return edges[rng() % (i < n / 2 ? 4 : 6)];  // the bounds: inside the range, then either side
      return static_cast<int64_t>(rng() % (uint64_t{1} << bits)) - (int64_t{1} << (bits - 1));
    };
    a[i] = i >= n / 2 && i % 11 == 0 ? edges[rng() % edges.size()] : draw(0);
    b[i] = draw(1);
    if (a[i] == INT64_MIN) a[i] = INT64_MIN + 1;  // (INT64_MIN / -1 traps in libtorch; the unit tests check it)
    if (b[i] == 0) b[i] = 7;
  }
  const torch::Tensor ta = torch::tensor(a).view({64, 32}), tb = torch::tensor(b).view({64, 32});
  const std::vector<std::pair<torch::Tensor, torch::Tensor>> layouts = {
      {ta, tb}, {ta.t(), tb.t()}, {ta.view({32, 64}), tb.view({32, 64})[5]}, {ta.t(), tb.view({32, 64})}};
  for (const auto& [x, y] : layouts) {
    for (const char* name : {"div_trunc", "div_floor", "remainder", "fmod"}) {
      for (const auto& c : binary_cases()) {
        if (std::string_view(c.name) != name) continue;
        const torch::Tensor want = c.torch_fn(x, y);
        EXPECT_TRUE(torch::equal(to_torch(c.ember_fn(parity::to_ember(x), parity::to_ember(y))), want)) << name;
      }
    }
  }
}

// Every pair of special values (zeros of both signs, infinities, NaN, subnormal, tiny and huge
// numbers) through the binary functions with vector forms, in float32 and float64, against
// libtorch in float64 (libtorch's float32 fmod gives NaN for a subnormal divisor; C's fmod, and
// Ember, the exact remainder).
TEST(PointwiseParity, BinarySpecialValues) {
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble}) {
    const Tensor v = special_values(dt);
    const Tensor a = v.unsqueeze(1).expand({v.size(0), v.size(0)}).contiguous();
    const Tensor b = v.unsqueeze(0).expand({v.size(0), v.size(0)}).contiguous();
    for (const char* name : {"atan2", "copysign", "fmod", "remainder", "div_floor"}) {
      for (const auto& c : binary_cases()) {
        if (std::string_view(c.name) != name) continue;
        const torch::Tensor ref =
            c.torch_fn(to_torch(a).to(torch::kDouble), to_torch(b).to(torch::kDouble)).to(to_torch(a).scalar_type());
        EXPECT_TRUE(Close(c.ember_fn(a, b), ref)) << name << " " << dt;
      }
    }
  }
}

TEST(PointwiseParity, BinaryMixedDtypes) {
  uint64_t seed = 5000;
  for (ember::ScalarType da : kAllTypes) {
    for (ember::ScalarType db : kAllTypes) {
      Tensor a = random({3, 4}, da, seed++), b = random({4}, db, seed++), z = random({}, db, seed++);
      for (const auto& c : binary_cases()) {
        check_binary(c, a, b);
        check_binary(c, a, z);
      }
    }
  }
}

TEST(PointwiseParity, ScalarOperands) {
  uint64_t seed = 6000;
  const std::vector<ember::Scalar> scalars = {3, -2, 2.5, -0.5, true};
  for (ember::ScalarType dt : kAllTypes) {
    Tensor x = random({5, 7}, dt, seed++);
    torch::Tensor tx = to_torch(x);
    for (const ember::Scalar& s : scalars) {
      const torch::Scalar ts = s.isBoolean() ? torch::Scalar(s.toBool())
                               : s.isIntegral(false) ? torch::Scalar(s.toLong())
                                                     : torch::Scalar(s.toDouble());
      auto both = [&](const char* what, auto ef, auto tf) {
        check(what + std::string(" scalar ") + (s.isBoolean() ? "bool" : s.isIntegral(false) ? "int" : "double"), {x},
              [&](const std::vector<Tensor>& v) { return ef(v[0]); },
              [&](const std::vector<torch::Tensor>& v) { return tf(v[0]); });
      };
      both("add", [&](const Tensor& t) { return ember::add(t, s); }, [&](const torch::Tensor& t) { return torch::add(t, ts); });
      both("sub", [&](const Tensor& t) { return ember::sub(t, s); }, [&](const torch::Tensor& t) { return torch::sub(t, ts); });
      both("rsub", [&](const Tensor& t) { return ember::rsub(t, s); }, [&](const torch::Tensor& t) { return torch::rsub(t, ts); });
      both("mul", [&](const Tensor& t) { return ember::mul(t, s); }, [&](const torch::Tensor& t) { return torch::mul(t, ts); });
      both("div", [&](const Tensor& t) { return ember::div(t, s); }, [&](const torch::Tensor& t) { return torch::div(t, ts); });
      both("scalar/tensor", [&](const Tensor& t) { return s / t; },
           [&](const torch::Tensor& t) { return torch::reciprocal(t) * ts; });
      both("pow", [&](const Tensor& t) { return ember::pow(t, s); }, [&](const torch::Tensor& t) { return torch::pow(t, ts); });
      both("rpow", [&](const Tensor& t) { return ember::pow(s, t); }, [&](const torch::Tensor& t) { return torch::pow(ts, t); });
      both("minimum-free clamp", [&](const Tensor& t) { return ember::clamp(t, s, std::nullopt); },
           [&](const torch::Tensor& t) { return torch::clamp(t, ts, c10::nullopt); });
      both("eq", [&](const Tensor& t) { return ember::eq(t, s); }, [&](const torch::Tensor& t) { return torch::eq(t, ts); });
      both("lt", [&](const Tensor& t) { return ember::lt(t, s); }, [&](const torch::Tensor& t) { return torch::lt(t, ts); });
      both("ge", [&](const Tensor& t) { return ember::ge(t, s); }, [&](const torch::Tensor& t) { return torch::ge(t, ts); });
      both("bitwise_or", [&](const Tensor& t) { return ember::bitwise_or(t, s); },
           [&](const torch::Tensor& t) { return torch::bitwise_or(t, ts); });
      both("where_scalar", [&](const Tensor& t) { return ember::where(ember::gt(t, 0), s, t); },
           [&](const torch::Tensor& t) { return torch::where(t > 0, ts, t); });
      both("masked_fill", [&](const Tensor& t) { return t.masked_fill(ember::lt(t, 0), s); },
           [&](const torch::Tensor& t) { return t.masked_fill(t < 0, ts); });
      if (!(s.isIntegral(false) && s.toLong() == 0)) {
        both("remainder", [&](const Tensor& t) { return ember::remainder(t, s); },
             [&](const torch::Tensor& t) { return torch::remainder(t, ts); });
        both("fmod", [&](const Tensor& t) { return ember::fmod(t, s); }, [&](const torch::Tensor& t) { return torch::fmod(t, ts); });
      }
    }
  }
}

// How a float16/bfloat16 op meets a Scalar that its dtype cannot hold (the scalars above are exact
// in every dtype, so they do not tell the ways apart), bit for bit:
// - a Scalar operand of a binary op (add, sub, mul, div, fmod, remainder, comparisons, where,
//   masked_fill; a 0-dim tensor alike) is converted to the tensor's dtype first, as libtorch 1.13
//   does (its kernels read the wrapped number in the common dtype): libtorch's bits;
// - a Scalar that is a parameter of the kernel (alpha, pow's exponent, lerp's weight, addcmul's
//   value, clamp's and the activations' bounds and slopes) stays in float32 (PyTorch's opmath), and
//   each op rounds once. Where libtorch 1.13 does that too: libtorch's bits. Where it rounds the
//   parameter to the dtype (alpha, pow's exponent) or rounds within the op (div's floor mode,
//   Half's alpha product): libtorch's float32 op on the widened operands, rounded once (div's
//   scalar operand rounded first, as above). elu, whose float32 libtorch computes exp(x) - 1
//   where Ember has expm1 (closer), is held to Ember's own float32 elu, rounded once.
TEST(PointwiseParity, SixteenBitOpsRoundOrKeepAScalarAsLibtorch) {
  uint64_t seed = 6400;
  for (ember::ScalarType dt : {ember::kBFloat16, ember::kHalf}) {
    // magnitudes from 1e-3 to 1e3, both signs: products and quotients land between representable values
    const Tensor x = (ember::exp(random({4099}, ember::kDouble, seed++) * 3.4) *
                      ember::sign(random({4099}, ember::kDouble, seed++)))
                         .to(dt);
    const Tensor y = (random({4099}, ember::kDouble, seed++) * 50).to(dt);
    for (const double sd : {0.1, 1.0 / 3, -2.718281828459045, 1.2345e-3, 777.7}) {
      const ember::Scalar s(sd);
      const torch::Scalar ts(sd);
      int compared = 0;
      auto check_bits = [&](const char* what, auto ef, auto tf, bool rounded_once) {
        torch::Tensor ref;
        try {
          ref = rounded_once ? tf(to_torch(x).to(torch::kFloat), to_torch(y).to(torch::kFloat)).to(to_torch(dt))
                             : tf(to_torch(x), to_torch(y));
        } catch (const c10::Error&) {
          return;  // libtorch 1.13 has no kernel of this dtype (Half): ScalarOperands covers Ember's
        }
        ++compared;
        EXPECT_TRUE(Close(ef(x, y), ref, parity::Tol{0, 0})) << what << " " << dt << " scalar " << sd;
      };
      auto both = [&](const char* what, auto ef, auto tf) { check_bits(what, ef, tf, false); };
      auto once = [&](const char* what, auto ef, auto tf) { check_bits(what, ef, tf, true); };
      const torch::Scalar ts_rounded(torch::scalar_tensor(ts, torch::TensorOptions().dtype(to_torch(dt))).item<double>());
      using T = const Tensor&;
      using TT = const torch::Tensor&;
      both("add", [&](T a, T) { return ember::add(a, s); }, [&](TT a, TT) { return torch::add(a, ts); });
      both("sub", [&](T a, T) { return ember::sub(a, s); }, [&](TT a, TT) { return torch::sub(a, ts); });
      both("rsub", [&](T a, T) { return ember::rsub(a, s); }, [&](TT a, TT) { return torch::rsub(a, ts); });
      both("mul", [&](T a, T) { return ember::mul(a, s); }, [&](TT a, TT) { return torch::mul(a, ts); });
      both("div", [&](T a, T) { return ember::div(a, s); }, [&](TT a, TT) { return torch::div(a, ts); });
      both("mul_", [&](T a, T) { return a.clone().mul_(s); }, [&](TT a, TT) { return a.clone().mul_(ts); });
      both("div_", [&](T a, T) { return a.clone().div_(s); }, [&](TT a, TT) { return a.clone().div_(ts); });
      both("mul 0-dim float32", [&](T a, T) { return a * ember::scalar_tensor(s); },
           [&](TT a, TT) { return a * torch::scalar_tensor(ts); });
      once("div floor", [&](T a, T) { return ember::div(a, s, "floor"); },
           [&](TT a, TT) { return torch::div(a, ts_rounded, "floor"); });
      both("div trunc", [&](T a, T) { return ember::div(a, s, "trunc"); },
           [&](TT a, TT) { return torch::div(a, ts, "trunc"); });
      once("pow", [&](T a, T) { return ember::pow(ember::abs(a), s); }, [&](TT a, TT) { return torch::pow(a.abs(), ts); });
      both("fmod", [&](T a, T) { return ember::fmod(a, s); }, [&](TT a, TT) { return torch::fmod(a, ts); });
      both("remainder", [&](T a, T) { return ember::remainder(a, s); }, [&](TT a, TT) { return torch::remainder(a, ts); });
      both("lt", [&](T a, T) { return ember::lt(a, s); }, [&](TT a, TT) { return torch::lt(a, ts); });
      both("where", [&](T a, T) { return ember::where(ember::gt(a, 0), s, a); },
           [&](TT a, TT) { return torch::where(a > 0, ts, a); });
      both("masked_fill", [&](T a, T) { return a.masked_fill(ember::lt(a, 0), s); },
           [&](TT a, TT) { return a.masked_fill(a < 0, ts); });
      once("add alpha", [&](T a, T b) { return ember::add(a, b, s); }, [&](TT a, TT b) { return torch::add(a, b, ts); });
      once("sub alpha", [&](T a, T b) { return ember::sub(a, b, s); }, [&](TT a, TT b) { return torch::sub(a, b, ts); });
      both("lerp", [&](T a, T b) { return ember::lerp(a, b, s); }, [&](TT a, TT b) { return torch::lerp(a, b, ts); });
      both("addcmul", [&](T a, T b) { return ember::addcmul(a, a, b, s); },
           [&](TT a, TT b) { return torch::addcmul(a, a, b, ts); });
      both("addcdiv", [&](T a, T b) { return ember::addcdiv(a, a, b, s); },
           [&](TT a, TT b) { return torch::addcdiv(a, a, b, ts); });
      both("clamp", [&](T a, T) { return ember::clamp(a, -std::abs(sd), std::abs(sd)); },
           [&](TT a, TT) { return torch::clamp(a, -std::abs(sd), std::abs(sd)); });
      both("leaky_relu", [&](T a, T) { return ember::leaky_relu(a, s); },
           [&](TT a, TT) { return torch::leaky_relu(a, ts); });
      once("elu", [&](T a, T) { return ember::elu(a, s); },
           [&](TT a, TT) { return to_torch(ember::elu(parity::to_ember(a), s)); });
      both("hardtanh", [&](T a, T) { return ember::hardtanh(a, -std::abs(sd), std::abs(sd)); },
           [&](TT a, TT) { return torch::hardtanh(a, -std::abs(sd), std::abs(sd)); });
      both("threshold", [&](T a, T) { return ember::threshold(a, s, -sd * 3); },
           [&](TT a, TT) { return torch::threshold(a, ts, -sd * 3); });
      both("hardshrink", [&](T a, T) { return ember::hardshrink(a, std::abs(sd)); },
           [&](TT a, TT) { return torch::hardshrink(a, std::abs(sd)); });
      // bfloat16 has a kernel for every one of them in libtorch 1.13
      if (dt == ember::kBFloat16) EXPECT_EQ(compared, 27) << sd;
    }
  }
}

TEST(PointwiseParity, PowScalarExponents) {
  uint64_t seed = 6500;
  for (ember::ScalarType dt : kAllTypes) {
    Tensor x = random({70001}, dt, seed++);
    torch::Tensor tx = to_torch(x);
    for (double e : {2.0, 3.0, 0.5, -0.5, -1.0, -2.0, 1.5, 0.0, 1.0, 2.5, -1.5, 4.0, 5.0, -3.0, 7.0, 1e-3}) {
      check("pow " + std::to_string(e), {x}, [&](const std::vector<Tensor>& v) { return ember::pow(v[0], e); },
            [&](const std::vector<torch::Tensor>& v) { return torch::pow(v[0], e); });
    }
    for (int64_t e : {0, 1, 2, 3, 5}) {
      check("pow int " + std::to_string(e), {x}, [&](const std::vector<Tensor>& v) { return ember::pow(v[0], e); },
            [&](const std::vector<torch::Tensor>& v) { return torch::pow(v[0], e); });
    }
  }
}

// Negative bases with tensor exponents: whole vectors of integer exponents (odd ones negate),
// vectors mixing integers and fractions (NaN there), and vectors holding a zero base (C's pow).
TEST(PointwiseParity, PowNegativeBasesWithTensorExponents) {
  uint64_t seed = 6600;
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble, ember::kBFloat16, ember::kHalf}) {
    ember::manual_seed(seed++);
    Tensor base = -(ember::rand({4096}) * 3 + 0.25);
    base[4000] = 0.0;
    Tensor frac = ember::rand({4096}) * 6 - 3;
    Tensor ints = ember::randint(-6, 7, {4096}).to(ember::kFloat);
    Tensor whole_vectors = (ember::arange(4096) / 64).remainder(2).eq(0);  // 64 integers, then 64 mixed
    Tensor mixed = ember::arange(4096).remainder(3).eq(0);
    Tensor e = ember::where(whole_vectors.logical_or(mixed), ints, frac);
    check(
        "pow negative base", {base.to(dt), e.to(dt)},
        [](const std::vector<Tensor>& v) { return ember::pow(v[0], v[1]); },
        [](const std::vector<torch::Tensor>& v) { return torch::pow(v[0], v[1]); });
  }
}

TEST(PointwiseParity, TernaryOps) {
  uint64_t seed = 7000;
  // (the last: short rows beside two broadcast rows, taken 12 rows at a time)
  const std::vector<std::vector<int64_t>> sa = {{}, {5}, {3, 4}, {70001}, {2, 1, 4}, {0, 2}, {37, 20}};
  const std::vector<std::vector<int64_t>> sb = {{}, {5}, {4}, {70001}, {3, 1}, {2}, {20}};
  const std::vector<std::vector<int64_t>> sc = {{}, {1}, {3, 1}, {}, {1, 4}, {0, 1}, {1, 20}};
  for (ember::ScalarType dt : kAllTypes) {
    for (size_t k = 0; k < sa.size(); ++k) {
      Tensor a = random(sa[k], dt, seed++), b = random(sb[k], dt, seed++), c = random(sc[k], dt, seed++);
      using V = const std::vector<Tensor>&;
      using TV = const std::vector<torch::Tensor>&;
      check("lerp_scalar", {a, b}, [](V v) { return ember::lerp(v[0], v[1], 0.3); },
            [](TV v) { return torch::lerp(v[0], v[1], 0.3); });
      check("lerp_scalar_far", {a, b}, [](V v) { return ember::lerp(v[0], v[1], 0.8); },
            [](TV v) { return torch::lerp(v[0], v[1], 0.8); });
      if (a.dim() >= c.dim()) {  // lerp's result must have self's shape
        check("lerp_tensor", {a, b, c}, [](V v) { return ember::lerp(v[0], v[1], v[2]); },
              [](TV v) { return torch::lerp(v[0], v[1], v[2]); });
      }
      check("addcmul", {a, b, c}, [](V v) { return ember::addcmul(v[0], v[1], v[2], 2); },
            [](TV v) { return torch::addcmul(v[0], v[1], v[2], 2); });
      check("addcdiv", {a, b, c}, [](V v) { return ember::addcdiv(v[0], v[1], v[2], 0.5); },
            [](TV v) { return torch::addcdiv(v[0], v[1], v[2], 0.5); });
      check("clamp_tensor", {a, b, c}, [](V v) { return ember::clamp(v[0], v[1], v[2]); },
            [](TV v) { return torch::clamp(v[0], v[1], v[2]); });
      check("clamp_tensor_min", {a, b}, [](V v) { return ember::clamp(v[0], std::optional<Tensor>(v[1]), std::nullopt); },
            [](TV v) { return torch::clamp(v[0], v[1], c10::nullopt); });
      check("clamp_tensor_max", {a, c}, [](V v) { return ember::clamp(v[0], std::nullopt, std::optional<Tensor>(v[1])); },
            [](TV v) { return torch::clamp(v[0], c10::nullopt, v[1]); });
      const Tensor cond = ember::gt(random(sc[k], ember::kFloat, seed++), 0);
      check("where", {cond, a, b}, [](V v) { return ember::where(v[0], v[1], v[2]); },
            [](TV v) { return torch::where(v[0], v[1], v[2]); });
      check("where_mixed", {cond, a, b.to(ember::kDouble)}, [](V v) { return ember::where(v[0], v[1], v[2]); },
            [](TV v) { return torch::where(v[0], v[1], v[2]); });
      check("masked_fill", {a, cond}, [](V v) { return v[0].masked_fill(v[1], 7); },
            [](TV v) { return v[0].masked_fill(v[1], 7); });
    }
    for (const Tensor& x : layouts(dt, seed += 3)) {
      const Tensor m = ember::gt(x.to(ember::kFloat), 0);
      Tensor e = x.clone();
      e.masked_fill_(m, 1);
      torch::Tensor t = to_torch(x).clone();
      t.masked_fill_(to_torch(m), 1);
      EXPECT_TRUE(Close(e, t)) << "masked_fill_ " << dt;
      check("where_layout", {m, x},
            [](const std::vector<Tensor>& v) {
              return ember::where(v[0], v[1], ember::zeros({}, ember::TensorOptions().dtype(v[1].dtype())));
            },
            [](const std::vector<torch::Tensor>& v) { return torch::where(v[0], v[1], torch::zeros({}, v[1].options())); });
    }
  }
}

TEST(PointwiseParity, IscloseAllcloseEqual) {
  uint64_t seed = 8000;
  for (ember::ScalarType dt : kAllTypes) {
    Tensor a = random({6, 7}, dt, seed++);
    Tensor b = ember::where(ember::gt(random({6, 7}, ember::kFloat, seed++), 1), random({6, 7}, dt, seed++), a);
    torch::Tensor ta = to_torch(a), tb = to_torch(b);
    for (double rtol : {0.0, 1e-5, 0.3}) {
      for (double atol : {0.0, 1e-8, 0.5}) {
        EXPECT_TRUE(Close(ember::isclose(a, b, rtol, atol), torch::isclose(ta, tb, rtol, atol))) << dt;
        EXPECT_EQ(ember::allclose(a, b, rtol, atol), torch::allclose(ta, tb, rtol, atol)) << dt;
      }
    }
    EXPECT_EQ(ember::equal(a, b), torch::equal(ta, tb)) << dt;
    EXPECT_EQ(ember::equal(a, a), torch::equal(ta, ta)) << dt;
  }
  Tensor n = ember::tensor({1.0, NAN});
  EXPECT_TRUE(Close(ember::isclose(n, n, 1e-5, 1e-8, true), torch::isclose(to_torch(n), to_torch(n), 1e-5, 1e-8, true)));
}

}  // namespace EMBER_UNITY_FILE
