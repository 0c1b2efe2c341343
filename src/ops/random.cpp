// The Generator (libtorch's mt19937 stream) and libtorch 1.13's CPU random kernels, reproduced
// number for number: the same seed gives the same tensors as libtorch (tests/parity/random_parity.cpp).
//
// This file is compiled for AVX2 + FMA with -ffp-contract=off (CMakeLists.txt): libtorch's kernels
// are compiled for AVX2 with GCC's default contraction, which turns its a * b + c into one rounding
// (an FMA); here every such FMA is written out as std::fma where libtorch's build makes one, and no
// other, so the results are bitwise libtorch's.
#include "ops/random.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "ember/shape.h"
#include "kernels/cpu/cast.h"

namespace ember {

// ---- Generator: the standard 32-bit Mersenne twister, as libtorch's at::mt19937 ----------------
void Generator::set_current_seed(uint64_t seed) {
  seed_ = seed;
  state_[0] = static_cast<uint32_t>(seed);
  for (int i = 1; i < kStateSize; ++i)
    state_[i] = 1812433253u * (state_[i - 1] ^ (state_[i - 1] >> 30)) + static_cast<uint32_t>(i);
  next_ = kStateSize;
  next_normal_.reset();
}
uint32_t Generator::random() {
  if (__builtin_expect(next_ == kStateSize, 0)) {
    // the next 624 words at once, out of line: random() is inlined into every kernel's loop
    [this]() __attribute__((noinline)) {
      constexpr int kShift = 397;
      auto twist = [](uint32_t u, uint32_t v, uint32_t far) {
        const uint32_t y = (u & 0x80000000u) | (v & 0x7fffffffu);
        return far ^ (y >> 1) ^ ((v & 1u) ? 0x9908b0dfu : 0u);
      };
      int i = 0;
      for (; i < kStateSize - kShift; ++i) state_[i] = twist(state_[i], state_[i + 1], state_[i + kShift]);
      for (; i < kStateSize - 1; ++i) state_[i] = twist(state_[i], state_[i + 1], state_[i + kShift - kStateSize]);
      state_[i] = twist(state_[i], state_[0], state_[kShift - 1]);
      next_ = 0;
    }();
  }
  uint32_t y = state_[next_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  return y ^ (y >> 18);
}
uint64_t Generator::random64() {
  const uint64_t hi = random();
  return (hi << 32) | random();
}
double Generator::next_double() { return static_cast<double>(random64() & ((uint64_t{1} << 53) - 1)) * 0x1.0p-53; }
float Generator::next_float() { return static_cast<float>(random() & ((1u << 24) - 1)) * 0x1.0p-24f; }
double Generator::next_normal() {  // libtorch's normal_distribution<double>: u1 the angle, u2 the radius
  if (next_normal_) {
    const double v = *next_normal_;
    next_normal_.reset();
    return v;
  }
  const double u1 = next_double(), u2 = next_double();
  const double r = std::sqrt(-2.0 * std::log(1.0 - u2)), theta = 2.0 * std::numbers::pi * u1;
  next_normal_ = r * std::sin(theta);
  return r * std::cos(theta);
}
Generator& default_generator() {
  static Generator* g = new Generator();
  return *g;
}
void manual_seed(uint64_t seed) {
  Generator& g = default_generator();
  std::lock_guard<std::mutex> lock(g.mutex());
  g.set_current_seed(seed);
}

namespace rng {
namespace {

// The generator an op draws from, locked for the whole fill as libtorch's kernels lock theirs.
struct Locked {
  explicit Locked(Generator* g) : gen(g ? *g : default_generator()), lock(gen.mutex()) {}
  Generator& gen;
  std::lock_guard<std::mutex> lock;
};

// self's dims from the largest stride to the smallest: the order in which TensorIterator's serial
// loop visits an output (memory order for dense tensors, whatever their layout).
DimVector memory_order(const Tensor& self) {
  DimVector order;
  for (int64_t d = 0; d < self.dim(); ++d)  // size-1 dims first: they do not move the order
    if (self.size(d) == 1) order.push_back(d);
  const size_t ones = order.size();
  for (int64_t d = 0; d < self.dim(); ++d) {  // then by insertion, equal strides keeping their place
    if (self.size(d) == 1) continue;
    size_t k = order.size();
    order.push_back(d);
    for (; k > ones && self.stride(d) > self.stride(order[k - 1]); --k) order[k] = order[k - 1];
    order[k] = d;
  }
  return order;
}

// Writes next(i) for i = 0, 1, ... into self's elements in memory order: straight into self when
// it is contiguous of the values' type T, else into a buffer then copied into self's memory-order
// view. The copy casts as libtorch's static_cast to the output's type does: the kernels draw in a
// few value types (int64 for integers, double for the float64 distributions), not one per dtype.
template <class T, class F>
void fill_serial(const Tensor& self, F&& next) {
  const ScalarType type = CppTypeToScalarType<T>::value;
  const bool direct = self.is_contiguous() && self.dtype() == type;
  const Tensor view = direct ? self : self.permute(memory_order(self));
  const Tensor buffer = direct ? self : make_empty(view.sizes(), type);
  T* p = static_cast<T*>(buffer.data_ptr());
  for (int64_t i = 0, n = self.numel(); i < n; ++i) p[i] = next(i);
  if (!direct) Tensor(view).copy_(buffer);
}

// Calls f(T{}) for self's floating dtype.
template <class F>
void visit_floating(const char* op, const Tensor& self, F&& f) {
  switch (self.dtype()) {
    case kFloat: return f(float{});
    case kDouble: return f(double{});
    case kHalf: return f(Half{});
    case kBFloat16: return f(BFloat16{});
    default: EMBER_CHECK(false, op, "\"", op, "_cpu\" not implemented for '", self.dtype(), "'");
  }
}

// libtorch's dist_acctype: float32 arithmetic for float, half and bfloat16, float64 for double.
template <class T>
using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
template <class T>
constexpr int mantissa_digits() {
  if constexpr (std::is_same_v<T, Half>) return 11;
  else if constexpr (std::is_same_v<T, BFloat16>) return 8;
  else return std::numeric_limits<T>::digits;
}

// uniform_real_distribution<T>: the mantissa's bits of one draw (two for double), scaled to
// [0, 1), then x * (to - from) + from in one rounding.
template <class T>
Acc<T> uniform_real(Generator& g, T from, T to) {
  constexpr int digits = mantissa_digits<T>();
  const uint64_t bits = std::is_same_v<T, double> ? g.random64() : g.random();
  const Acc<T> x = static_cast<Acc<T>>(bits & ((uint64_t{1} << digits) - 1)) *
                   (Acc<T>{1} / static_cast<Acc<T>>(uint64_t{1} << digits));
  // to - from in T: c10's half and bfloat16 round each operation's result to their type
  const auto range = static_cast<Acc<T>>(static_cast<T>(static_cast<Acc<T>>(to) - static_cast<Acc<T>>(from)));
  return std::fma(x, range, static_cast<Acc<T>>(from));
}

// Box-Muller on 16 uniforms in place, libtorch's normal_fill_16 (float64, half): the first 8 give
// the radii, the last 8 the angles.
template <class T>
void normal_fill_16(T* data, T mean, T std) {
  for (int j = 0; j < 8; ++j) {
    const T u1 = 1 - data[j];
    const T u2 = data[j + 8];
    const T radius = std::sqrt(-2 * std::log(u1));
    const T theta = 2.0f * std::numbers::pi * u2;
    data[j] = std::fma(radius * std::cos(theta), std, mean);
    data[j + 8] = std::fma(radius * std::sin(theta), std, mean);
  }
}

// bfloat16: c10 rounds the result of each of its math functions and of each product to bfloat16.
void normal_fill_16(BFloat16* data, BFloat16 mean, BFloat16 std) {
  auto r = [](double v) { return static_cast<float>(BFloat16(static_cast<float>(v))); };
  for (int j = 0; j < 8; ++j) {
    const float u1 = r(1.0f - data[j]), u2 = data[j + 8];
    const float radius = r(std::sqrt(r(-2.0f * r(std::log(u1)))));
    const float theta = r(2.0f * std::numbers::pi * u2);
    data[j] = BFloat16(r(r(r(radius * r(std::cos(theta))) * std) + mean));
    data[j + 8] = BFloat16(r(r(r(radius * r(std::sin(theta))) * std) + mean));
  }
}

// libtorch's AVX2 normal_fill_16 for float32: its log and sincos are Cephes' single-precision
// algorithms on 8 lanes (ATen's avx_mathfun.h), with the FMAs GCC makes of them. The constants
// and the order of operations are those algorithms', so every lane rounds as libtorch's does.
__m256 splat(float v) { return _mm256_set1_ps(v); }
__m256 log8(__m256 x) {
  const __m256 invalid = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LE_OS);
  x = _mm256_max_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x00800000)));  // no subnormals
  const __m256i exponent = _mm256_sub_epi32(_mm256_srli_epi32(_mm256_castps_si256(x), 23), _mm256_set1_epi32(0x7f));
  x = _mm256_or_ps(_mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(~0x7f800000))), splat(0.5f));
  __m256 e = _mm256_add_ps(_mm256_cvtepi32_ps(exponent), splat(1.0f));
  // mantissa m in [0.5, 1): below sqrt(1/2) take 2m - 1 and one less exponent, else m - 1
  const __m256 small = _mm256_cmp_ps(x, splat(0.707106781186547524f), _CMP_LT_OS);
  const __m256 extra = _mm256_and_ps(x, small);
  x = _mm256_sub_ps(x, splat(1.0f));
  e = _mm256_sub_ps(e, _mm256_and_ps(splat(1.0f), small));
  x = _mm256_add_ps(x, extra);
  const __m256 z = _mm256_mul_ps(x, x);
  static constexpr float kLog[] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                                   -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                                   2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
  __m256 y = splat(kLog[0]);
  for (int i = 1; i < 9; ++i) y = _mm256_fmadd_ps(y, x, splat(kLog[i]));
  y = _mm256_mul_ps(y, x);
  y = _mm256_fmadd_ps(y, z, _mm256_mul_ps(e, splat(-2.12194440e-4f)));
  y = _mm256_fnmadd_ps(z, splat(0.5f), y);
  x = _mm256_fmadd_ps(e, splat(0.693359375f), _mm256_add_ps(x, y));
  return _mm256_or_ps(x, invalid);  // NaN for x <= 0
}
void sincos8(__m256 x, __m256* sin, __m256* cos) {
  __m256 sign_sin = _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(0x80000000u))));
  x = _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
  // the octant j (rounded up to even) of |x| and x reduced by j pi/4 in three parts
  __m256i j = _mm256_cvttps_epi32(_mm256_mul_ps(x, splat(1.27323954473516f)));
  j = _mm256_and_si256(_mm256_add_epi32(j, _mm256_set1_epi32(1)), _mm256_set1_epi32(~1));
  const __m256 y = _mm256_cvtepi32_ps(j);
  const __m256 swap_sin = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(j, _mm256_set1_epi32(4)), 29));
  const __m256 use_sin_poly =
      _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(j, _mm256_set1_epi32(2)), _mm256_setzero_si256()));
  x = _mm256_fmadd_ps(y, splat(-0.78515625f), x);
  x = _mm256_fmadd_ps(y, splat(-2.4187564849853515625e-4f), x);
  x = _mm256_fmadd_ps(y, splat(-3.77489497744594108e-8f), x);
  const __m256 sign_cos = _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_andnot_si256(_mm256_sub_epi32(j, _mm256_set1_epi32(2)), _mm256_set1_epi32(4)), 29));
  sign_sin = _mm256_xor_ps(sign_sin, swap_sin);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 c = _mm256_fmadd_ps(splat(2.443315711809948E-005f), z, splat(-1.388731625493765E-003f));
  c = _mm256_fmadd_ps(c, z, splat(4.166664568298827E-002f));
  c = _mm256_mul_ps(c, z);
  c = _mm256_fmsub_ps(c, z, _mm256_mul_ps(z, splat(0.5f)));
  c = _mm256_add_ps(c, splat(1.0f));
  __m256 s = _mm256_fmadd_ps(splat(-1.9515295891E-4f), z, splat(8.3321608736E-3f));
  s = _mm256_fmadd_ps(s, z, splat(-1.6666654611E-1f));
  s = _mm256_mul_ps(s, z);
  s = _mm256_fmadd_ps(s, x, x);
  const __m256 s_part = _mm256_and_ps(use_sin_poly, s), c_part = _mm256_andnot_ps(use_sin_poly, c);
  *sin = _mm256_xor_ps(_mm256_add_ps(c_part, s_part), sign_sin);
  *cos = _mm256_xor_ps(_mm256_add_ps(_mm256_sub_ps(c, c_part), _mm256_sub_ps(s, s_part)), sign_cos);
}
void normal_fill_16(float* data, float mean, float std) {
  const __m256 u1 = _mm256_sub_ps(splat(1.0f), _mm256_loadu_ps(data));
  const __m256 u2 = _mm256_loadu_ps(data + 8);
  const __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(splat(-2.0f), log8(u1)));
  __m256 sin, cos;
  sincos8(_mm256_mul_ps(splat(static_cast<float>(2.0f * std::numbers::pi)), u2), &sin, &cos);
  _mm256_storeu_ps(data, _mm256_fmadd_ps(_mm256_mul_ps(radius, cos), splat(std), splat(mean)));
  _mm256_storeu_ps(data + 8, _mm256_fmadd_ps(_mm256_mul_ps(radius, sin), splat(std), splat(mean)));
}

// data[0, n) = uniforms in [0, 1) (uniform_real_distribution<T>(0, 1)), the generator's draws
// inlined into the loop (flatten, which GCC honours for Generator::random() under this file's
// -fno-semantic-interposition; kept out of its callers, where flatten would not apply): a call of
// random() per element made randn of 1M float32 1.17-1.20x libtorch's time on Zen 3, 0.80-0.85x
// inlined.
template <class T>
__attribute__((flatten, noinline)) void fill_uniform01(Generator& g, T* data, int64_t n) {
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<T>(uniform_real<T>(g, T(0), T(1)));
}

// One float64 draw per element, cast to self's dtype.
template <class F>
void fill_from_double(const Tensor& self, Generator* g, F&& draw) {
  Locked l(g);
  fill_serial<double>(self, [&](int64_t) { return draw(l.gen); });
}

// uniform_int_from_to_distribution: one 32-bit draw, or a 64-bit one for a range of 2^32 or more
// into the types that hold it (`wide`), modulo the range.
void random_from_to(const Tensor& self, uint64_t range, int64_t base, Generator* g) {
  const ScalarType t = self.dtype();
  const bool wide = t == kLong || t == kDouble || t == kFloat || t == kBFloat16;
  const bool draw64 = wide && range >= (uint64_t{1} << 32);
  Locked l(g);
  fill_serial<int64_t>(self, [&](int64_t) {
    const uint64_t v = draw64 ? l.gen.random64() : l.gen.random();
    return static_cast<int64_t>(v % range + static_cast<uint64_t>(base));
  });
}

void random_full_range(const Tensor& self, Generator* g) {
  Locked l(g);
  fill_serial<int64_t>(self, [&](int64_t) { return static_cast<int64_t>(l.gen.random64()); });
}

// What random_ needs of a dtype: its range, and for floating types their mantissa digits.
struct IntRange {
  double lowest, max;
  int digits;  // 0 for integer types
  int64_t int_max() const { return max >= 9.2e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(max); }
};
IntRange int_range(ScalarType t) {
  switch (t) {
    case kFloat: return {-3.4028234663852886e38, 3.4028234663852886e38, 24};
    case kDouble: return {-1.7976931348623157e308, 1.7976931348623157e308, 53};
    case kHalf: return {-65504, 65504, 11};
    case kBFloat16: return {-3.3895313892515355e38, 3.3895313892515355e38, 8};
    case kBool: return {0, 1, 0};
    case kByte: return {0, 255, 0};
    case kChar: return {-128, 127, 0};
    case kShort: return {-32768, 32767, 0};
    case kInt: return {-2147483648.0, 2147483647, 0};
    default: return {-9223372036854775808.0, 9223372036854775807.0, 0};
  }
}
// v as the floating dtype t holds it, back as an integer.
int64_t rounded_to(ScalarType t, int64_t v) {
  switch (t) {
    case kDouble: return static_cast<int64_t>(static_cast<double>(v));
    case kHalf: return static_cast<int64_t>(static_cast<float>(Half(static_cast<float>(v))));
    case kBFloat16: return static_cast<int64_t>(static_cast<float>(BFloat16(static_cast<float>(v))));
    default: return static_cast<int64_t>(static_cast<float>(v));
  }
}
// libtorch's update_from (step 1) and update_to (step -1): a bound that the floating dtype rounds
// past is moved to the nearest integer it holds inside the range.
int64_t update_bound(ScalarType t, int digits, int64_t bound, int64_t step) {
  const int64_t rounded = rounded_to(t, bound + step);
  if (step > 0 ? rounded >= bound : rounded < bound) return bound;
  int n = 0;
  for (int64_t b = std::abs(bound + step); b >>= 1;) ++n;
  return rounded + step * (int64_t{1} << (n - digits + 1));
}
}  // namespace

void uniform_(const Tensor& self, double from, double to, Generator* g) {
  visit_floating("uniform", self, [&](auto tag) {
    using T = decltype(tag);
    const double lo = static_cast<double>(std::numeric_limits<T>::lowest()), hi = static_cast<double>(std::numeric_limits<T>::max());
    const T f = kernels::cast<T>(std::clamp(from, lo, hi)), t = kernels::cast<T>(std::clamp(to, lo, hi));
    Locked l(g);
    fill_serial<T>(self, [&](int64_t) { return static_cast<T>(uniform_real<T>(l.gen, f, t)); });
  });
}

void normal_(const Tensor& self, double mean, double std, Generator* g) {
  const int64_t n = self.numel();
  if (n < 16 || !self.is_contiguous()) {
    visit_floating("normal", self, [](auto) {});  // the dtype check
    fill_from_double(self, g, [&](Generator& gen) { return std::fma(gen.next_normal(), std, mean); });
    return;
  }
  // uniforms in [0, 1) for every element, Box-Muller on each block of 16, and when n is no
  // multiple of 16, 16 new uniforms for the last 16 elements, transformed again
  visit_floating("normal", self, [&](auto tag) {
    using T = decltype(tag);
    T* data = static_cast<T*>(self.data_ptr());
    const T m = kernels::cast<T>(mean), s = kernels::cast<T>(std);
    Locked l(g);
    fill_uniform01(l.gen, data, n);
    for (int64_t i = 0; i + 16 <= n; i += 16) normal_fill_16(data + i, m, s);
    if (n % 16 != 0) {
      T* last = data + n - 16;
      fill_uniform01(l.gen, last, 16);
      normal_fill_16(last, m, s);
    }
  });
}

// random_from_to_impl: the range and its checks, then one of the two kernels above.
void random_(const Tensor& self, int64_t from, std::optional<int64_t> to, Generator* g) {
  const ScalarType t = self.dtype();
  EMBER_CHECK(!is_complex_type(t), "random_", "random_ is not implemented for ", t);
  if (!to && from == std::numeric_limits<int64_t>::lowest()) {
    EMBER_CHECK(t == kLong || t == kDouble || t == kFloat || t == kBFloat16, "random_",
                "random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16");
    random_full_range(self, g);
    return;
  }
  const IntRange r = int_range(t);
  int64_t hi = 0;  // the largest value drawn
  if (to) {
    EMBER_CHECK(from < *to, "random_", "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", *to);
    if (r.digits) {
      from = update_bound(t, r.digits, from, 1);
      to = update_bound(t, r.digits, *to, -1);
      EMBER_CHECK(from < *to, "random_", "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got from=",
                  from, " >= to=", *to);
    }
    hi = *to - 1;
  } else if (r.digits) {
    hi = r.digits >= 63 ? std::numeric_limits<int64_t>::max() : int64_t{1} << r.digits;
    from = update_bound(t, r.digits, from, 1);
    EMBER_CHECK(from < hi, "random_", "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to dtype, but got from=",
                from, " > to_inc=", hi);
  } else {
    hi = r.int_max();
  }
  EMBER_CHECK(static_cast<double>(from) >= r.lowest && static_cast<double>(from) <= r.max, "random_", "from is out of bounds for ", t);
  EMBER_CHECK(static_cast<double>(hi) >= r.lowest && static_cast<double>(hi) <= r.max, "random_", "to - 1 is out of bounds for ", t);
  random_from_to(self, static_cast<uint64_t>(hi) - static_cast<uint64_t>(from) + 1, from, g);
}

// uniform_int_distribution: modulo 2^digits + 1 for floating types, max + 1 for integers (bool:
// the low bit); 64-bit draws for float64 and int64.
void random_(const Tensor& self, Generator* g) {
  const IntRange r = int_range(self.dtype());
  const uint64_t modulus = r.digits ? (uint64_t{1} << r.digits) + 1 : static_cast<uint64_t>(r.int_max()) + 1;
  const bool draw64 = self.dtype() == kDouble || self.dtype() == kLong;
  Locked l(g);
  fill_serial<int64_t>(self, [&](int64_t) {
    const uint64_t v = draw64 ? l.gen.random64() : l.gen.random();
    return static_cast<int64_t>(v % modulus);
  });
}

// bernoulli_distribution<double>(p): a double uniform below p.
void bernoulli_(const Tensor& self, double p, Generator* g) {
  Locked l(g);
  fill_serial<uint8_t>(self, [&](int64_t) { return static_cast<uint8_t>(l.gen.next_double() < p); });
}

// A double p compares with a double uniform; any other dtype's with a float one
// (bernoulli_distribution<float>).
void bernoulli_(const Tensor& self, const Tensor& p, Generator* g) {
  const bool dbl = p.dtype() == kDouble;
  const Tensor probs = p.expand(self.sizes()).permute(memory_order(self)).to(dbl ? kDouble : kFloat).contiguous();
  Locked l(g);
  if (dbl) {
    const double* pp = probs.data_ptr<double>();
    fill_serial<uint8_t>(self, [&](int64_t i) { return static_cast<uint8_t>(l.gen.next_double() < pp[i]); });
  } else {
    const float* pp = probs.data_ptr<float>();
    fill_serial<uint8_t>(self, [&](int64_t i) { return static_cast<uint8_t>(uniform_real<float>(l.gen, 0.0f, 1.0f) < pp[i]); });
  }
}

void exponential_(const Tensor& self, double lambda, Generator* g) {
  visit_floating("exponential", self, [](auto) {});
  fill_from_double(self, g, [&](Generator& gen) { return -1.0 / lambda * std::log(1.0 - gen.next_double()); });
}
void geometric_(const Tensor& self, double p, Generator* g) {  // any real dtype, as libtorch's
  const double denom = std::log(1.0 - p);
  fill_from_double(self, g, [&](Generator& gen) { return std::ceil(std::log(gen.next_double()) / denom); });
}
void cauchy_(const Tensor& self, double median, double sigma, Generator* g) {
  visit_floating("cauchy", self, [](auto) {});
  fill_from_double(self, g, [&](Generator& gen) {
    return std::fma(sigma, std::tan(std::numbers::pi * (gen.next_double() - 0.5)), median);
  });
}
void log_normal_(const Tensor& self, double mean, double std, Generator* g) {
  visit_floating("log_normal", self, [](auto) {});
  fill_from_double(self, g, [&](Generator& gen) { return std::exp(std::fma(gen.next_normal(), std, mean)); });
}

// randperm_cpu: 0 .. n-1, then a Fisher-Yates pass from the front with 32-bit draws; from
// 2^32 / 20 elements the inside-out variant with 64-bit draws.
void randperm_(const Tensor& self, Generator* g) {
  const int64_t n = self.numel();
  std::vector<int64_t> r(static_cast<size_t>(n));
  {
    Locked l(g);
    if (n < static_cast<int64_t>(std::numeric_limits<uint32_t>::max() / 20)) {
      for (int64_t i = 0; i < n; ++i) r[i] = i;
      for (int64_t i = 0; i < n - 1; ++i) std::swap(r[i], r[i + static_cast<int64_t>(l.gen.random() % static_cast<uint64_t>(n - i))]);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const auto z = static_cast<int64_t>(l.gen.random64() % static_cast<uint64_t>(i + 1));
        r[i] = r[z];
        r[z] = i;
      }
    }
  }
  fill_serial<int64_t>(self, [&](int64_t i) { return r[i]; });
}

void multinomial_with_replacement(const Tensor& probs, const Tensor& out, Generator* g) {
  const int64_t rows = probs.size(0), n = probs.size(1), samples = out.size(1);
  int64_t* result = out.data_ptr<int64_t>();
  const Tensor pr = probs.dtype() == kDouble ? probs : probs.to(kFloat);  // half and bfloat16 sum in float
  auto sample = [&](auto tag) {
    using A = decltype(tag);
    const A* p = pr.data_ptr<A>();
    std::vector<A> cdf(static_cast<size_t>(n));
    Locked l(g);
    for (int64_t r = 0; r < rows; ++r) {
      A sum = 0;
      for (int64_t j = 0; j < n; ++j) {
        const A v = static_cast<A>(p[r * n + j]);
        EMBER_CHECK(v >= 0 && std::isfinite(v), "multinomial", "invalid multinomial distribution (encountering probability entry < 0 or inf or nan)");
        sum += v;
        cdf[static_cast<size_t>(j)] = sum;
      }
      EMBER_CHECK(sum > 0, "multinomial", "invalid multinomial distribution (sum of probabilities <= 0)");
      for (A& c : cdf) c /= sum;
      cdf.back() = 1;
      for (int64_t k = 0; k < samples; ++k) {
        const double u = l.gen.next_double();
        int64_t left = 0, right = n;  // the first slot whose cumulative probability reaches u
        while (right > left) {
          const int64_t mid = left + (right - left) / 2;
          if (cdf[static_cast<size_t>(mid)] < u) left = mid + 1;
          else right = mid;
        }
        result[r * samples + k] = left;
      }
    }
  };
  if (pr.dtype() == kDouble) sample(double{});
  else sample(float{});
}

namespace {
// Marsaglia and Tsang's acceptance-rejection sampler of Gamma(alpha, 1) as libtorch 1.13's CPU
// kernels run it (T: the type alpha is held in, the tensor's for _standard_gamma, double for
// _sample_dirichlet): alpha below 1 boosted by one and the result scaled by u^(1/alpha), standard
// normals and uniforms drawn as doubles, and libtorch's single-precision literals (1/3, 0.0331)
// with their rounding, so that one seed draws the same samples.
template <class T>
double sample_gamma(T alpha, Generator& g) {
  double scale = 1.0;
  if (alpha < T(1)) {
    if (alpha == T(0)) return 0;
    scale *= std::pow(1 - g.next_double(), static_cast<double>(T(1) / alpha));
    alpha += T(1);
  }
  const double d = static_cast<double>(alpha - static_cast<T>(1.0f / 3.0f));
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0, y = 0;
    do {
      x = g.next_normal();
      y = 1.0 + c * x;
    } while (y <= 0);
    const double v = y * y * y;
    const double u = 1 - g.next_double();
    const double xx = x * x;
    if (u < 1.0 - static_cast<double>(0.0331f) * xx * xx) return scale * d * v;
    if (std::log(u) < 0.5 * xx + d * (1.0 - v + std::log(v))) return scale * d * v;
  }
}
}  // namespace

void standard_gamma(const Tensor& alpha, const Tensor& out, Generator* g) {
  const Tensor a = alpha.contiguous();
  const int64_t n = a.numel();
  Locked l(g);
  if (a.dtype() == kDouble) {
    const double* in = a.data_ptr<double>();
    double* o = out.data_ptr<double>();
    for (int64_t i = 0; i < n; ++i) o[i] = std::max(std::numeric_limits<double>::min(), sample_gamma(in[i], l.gen));
  } else {
    const float* in = a.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i) {
      // rounded to float inside libtorch's sampler, then kept above the smallest normal float
      o[i] = std::max(std::numeric_limits<float>::min(), static_cast<float>(sample_gamma(in[i], l.gen)));
    }
  }
}

}  // namespace rng
}  // namespace ember
