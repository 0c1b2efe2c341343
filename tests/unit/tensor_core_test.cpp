// Tensor metadata, dtypes, promotion, allocation, copies and casts.
#include <gtest/gtest.h>

#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <cstdlib>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "ember/ember.h"
#include "ember/torch.h"
#include "expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;

TEST(Dtype, HalfRoundTripAndRounding) {
  EXPECT_EQ(Half(1.0f).x, 0x3c00);
  EXPECT_EQ(Half(65504.0f).x, 0x7bff);
  EXPECT_EQ(Half(65520.0f).x, 0x7c00);  // ties to even overflows to inf
  EXPECT_EQ(Half(1.0f + 1.0f / 2048).x, 0x3c00);  // tie: even mantissa kept
  EXPECT_EQ(Half(1.0f + 3.0f / 2048).x, 0x3c02);  // tie: rounds up to even
  EXPECT_EQ(Half(5.9604644775390625e-08f).x, 0x0001);  // smallest subnormal
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(NAN))));
  for (uint32_t b = 0; b < 0x7c00; ++b) {  // every finite positive half survives a round trip
    float f = Half::to_float(static_cast<uint16_t>(b));
    ASSERT_EQ(Half(f).x, b) << b;
  }
}

namespace {
// The F16C instructions (on every CPU Ember's CI runs on) as a reference independent of Ember's code.
__attribute__((target("f16c"))) float f16c_widen(uint16_t h) { return _cvtsh_ss(h); }
__attribute__((target("f16c"))) uint16_t f16c_narrow(float f) { return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT); }
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
}  // namespace

// The SIMD casts on whichever path runs (AVX-512, or AVX2 under cpu_capability_avx2): every half
// widens exactly; narrowing rounds to nearest even,
// overflows to inf and keeps inf and NaN.
TEST(Dtype, HalfCastsMatchTheHardwareOnEveryValue) {
  Tensor h = empty({65536}, kHalf);
  for (uint32_t b = 0; b < 65536; ++b) h.data_ptr<Half>()[b] = Half::from_bits(static_cast<uint16_t>(b));
  const Tensor f = h.to(kFloat);
  for (uint32_t b = 0; b < 65536; ++b) {
    const float want = f16c_widen(static_cast<uint16_t>(b)), got = f.data_ptr<float>()[b];
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << b;
    } else {
      ASSERT_EQ(bits_of(got), bits_of(want)) << b;
    }
  }
  // every half, the midpoints between neighbours (ties), values just off them, overflow and NaN
  std::vector<float> values;
  for (uint32_t b = 0; b < 0x7c00; ++b) {
    const float lo = f16c_widen(static_cast<uint16_t>(b)), hi = f16c_widen(static_cast<uint16_t>(b + 1));
    const float mid = lo + (hi - lo) / 2;
    for (float v : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, hi)}) {
      values.push_back(v);
      values.push_back(-v);
    }
  }
  for (float v : {65519.0f, 65520.0f, 65536.0f, 1e6f, 3e38f, INFINITY, -INFINITY, NAN, -NAN, 1e-10f, -1e-30f})
    values.push_back(v);
  const Tensor narrowed = from_blob(values.data(), {static_cast<int64_t>(values.size())}, kFloat).to(kHalf);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t want = f16c_narrow(values[i]), got = narrowed.data_ptr<Half>()[i].x;
    if (std::isnan(values[i])) {
      ASSERT_EQ(got & 0x7c00, 0x7c00) << i;
      ASSERT_NE(got & 0x3ff, 0) << i;
    } else {
      ASSERT_EQ(got, want) << values[i];
    }
  }
}

TEST(Dtype, BFloat16Rounding) {
  EXPECT_EQ(BFloat16(1.0f).x, 0x3f80);
  uint32_t u = 0x3f808000;  // exactly half way between 0x3f80 and 0x3f81: even wins
  float f;
  std::memcpy(&f, &u, 4);
  EXPECT_EQ(BFloat16(f).x, 0x3f80);
  u = 0x3f818000;
  std::memcpy(&f, &u, 4);
  EXPECT_EQ(BFloat16(f).x, 0x3f82);
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(NAN))));
}

TEST(Dtype, PromoteTypes) {
  EXPECT_EQ(promote_types(kByte, kChar), kShort);
  EXPECT_EQ(promote_types(kByte, kLong), kLong);
  EXPECT_EQ(promote_types(kHalf, kBFloat16), kFloat);
  EXPECT_EQ(promote_types(kInt, kHalf), kHalf);
  EXPECT_EQ(promote_types(kBool, kChar), kChar);
  EXPECT_EQ(promote_types(kFloat, kDouble), kDouble);
}

TEST(TensorCore, EmptyHasShapeStridesAndDtype) {
  Tensor t = empty({2, 3, 4});
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.strides(), IntArrayRef({12, 4, 1}));
  EXPECT_EQ(t.dtype(), kFloat);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, 0u);
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_THROW(t.size(3), Error);
}

TEST(TensorCore, ChannelsLast) {
  Tensor t = empty({2, 3, 4, 5}, TensorOptions().memory_format(MemoryFormat::ChannelsLast));
  EXPECT_EQ(t.strides(), IntArrayRef({60, 1, 15, 3}));
  EXPECT_TRUE(t.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.suggest_memory_format(), MemoryFormat::ChannelsLast);
  Tensor c = t.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_THROW(empty({2, 3}).contiguous(MemoryFormat::ChannelsLast), Error);
}

TEST(TensorCore, NegativeAndOverflowingSizesThrow) {
  EXPECT_THROW(empty({2, -1}), Error);
  EXPECT_THROW(empty({int64_t{1} << 40, int64_t{1} << 40}), Error);
}

TEST(TensorCore, FactoriesAndItem) {
  Tensor z = zeros({3});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(z.data_ptr<float>()[i], 0.0f);
  Tensor f = full({2, 2}, 7);
  EXPECT_EQ(f.dtype(), kLong);
  EXPECT_EQ(f[1][1].item<int64_t>(), 7);
  EXPECT_THROW(f.item(), Error);
  EXPECT_THROW(f.data_ptr<float>(), Error);
  EXPECT_EQ(full({}, 2.5).dtype(), kFloat);
  EXPECT_EQ(tensor({1, 2, 3}).dtype(), kLong);
  EXPECT_EQ(tensor({{1.0, 2.0}, {3.0, 4.0}}).sizes(), IntArrayRef({2, 2}));
  EXPECT_THROW(tensor({{1.0, 2.0}, {3.0}}), Error);
  // A std::vector keeps its element type unless options name another, which converts.
  const std::vector<double> values{0.5, 1.25, -2.0};
  EXPECT_EQ(tensor(values).dtype(), kDouble);
  Tensor as_float = tensor(values, kFloat);
  EXPECT_EQ(as_float.dtype(), kFloat);
  EXPECT_EQ(as_float[2].item<float>(), -2.0f);
  EXPECT_EQ(tensor(std::vector<int64_t>{3, 4}, kFloat)[1].item<float>(), 4.0f);
}

// randn below the vectorized threshold (one Box-Muller pair at a time) and above it (whole
// tensors): standard normal moments and tail fractions, both halves of the vectorized output
// uncorrelated, every dtype and layout, reproducible under one seed.
TEST(TensorCore, RandnIsStandardNormalInEveryPathDtypeAndLayout) {
  auto check = [](const Tensor& t, double tol) {
    Tensor x = t.to(kDouble).contiguous().view({-1});
    const int64_t n = x.numel();
    EXPECT_NEAR(x.mean().item<double>(), 0.0, tol) << t.sizes() << " " << t.dtype();
    EXPECT_NEAR(x.std().item<double>(), 1.0, tol) << t.sizes() << " " << t.dtype();
    EXPECT_NEAR(x.abs().lt(1.0).to(kDouble).mean().item<double>(), 0.6827, tol);
    EXPECT_NEAR(x.abs().lt(2.0).to(kDouble).mean().item<double>(), 0.9545, tol / 2);
    EXPECT_TRUE(x.isfinite().all().item<bool>());
    const int64_t half = n / 2;
    const double corr = (x.narrow(0, 0, half) * x.narrow(0, n - half, half)).mean().item<double>();
    EXPECT_NEAR(corr, 0.0, tol);
  };
  manual_seed(7);
  for (ScalarType dt : {kFloat, kDouble, kHalf, kBFloat16}) {
    check(randn({200001}, TensorOptions().dtype(dt)), 0.01);
    check(randn({4, 3, 50, 51}, TensorOptions().dtype(dt).memory_format(MemoryFormat::ChannelsLast)), 0.02);
  }
  Tensor small = stack([] {
    std::vector<Tensor> v;
    for (int i = 0; i < 20000; ++i) v.push_back(randn({5}));
    return v;
  }());
  check(small, 0.01);
  Tensor nonstandard = normal(3.0, 0.25, {100001});
  EXPECT_NEAR(nonstandard.mean().item<double>(), 3.0, 0.005);
  EXPECT_NEAR(nonstandard.std().item<double>(), 0.25, 0.005);
  manual_seed(11);
  Tensor a = randn({1001});
  manual_seed(11);
  EXPECT_TRUE(equal(a, randn({1001})));
  EXPECT_EQ(randn({0}).numel(), 0);
}

TEST(TensorCore, FromBlobSharesMemoryAndCallsDeleter) {
  float data[6] = {0, 1, 2, 3, 4, 5};
  Tensor t = from_blob(data, {2, 3});
  EXPECT_EQ(t.data_ptr<float>(), data);
  t[1][2].fill_(9);
  EXPECT_EQ(data[5], 9.0f);
  int deleted = 0;
  {
    Tensor owned = from_blob(data, {6}, [&](void* p) { deleted += (p == data); });
    Tensor view = owned.view({3, 2});
    owned.reset();
    EXPECT_EQ(deleted, 0);  // the view still holds the storage
  }
  EXPECT_EQ(deleted, 1);
}

TEST(TensorCore, CopyCastsAndBroadcastsIntoDestination) {
  Tensor dst = zeros({2, 3}, kInt);
  dst.copy_(tensor({1.7, -2.2, 3.9}));
  EXPECT_EQ(dst[1][0].item<int>(), 1);
  EXPECT_EQ(dst[1][1].item<int>(), -2);
  EXPECT_THROW(dst.copy_(ones({4})), Error);
  Tensor expanded = zeros({3}).expand({2, 3});
  EXPECT_THROW(expanded.copy_(ones({2, 3})), Error);  // several elements share one location
}

TEST(TensorCore, OutputsAreCheckedBeforeWriting) {
  Tensor a = ones({2, 3}), b = ones({3});
  Tensor out = full({5}, 7.0);
  add_out(out, a, b);  // a non-matching out= tensor is resized, as PyTorch
  EXPECT_EQ(out.sizes(), IntArrayRef({2, 3}));
  Tensor small = full({3}, 7.0);
  EXPECT_THROW(small.add_(ones({2, 3})), Error);  // in-place cannot change the shape
  EXPECT_EQ(small[0].item<float>(), 7.0f);
  Tensor ints = zeros({3}, kLong);
  EXPECT_THROW(add_out(ints, ones({3}), ones({3})), Error);  // Float can't be cast to Long
  EXPECT_EQ(ints[0].item<int64_t>(), 0);
  Tensor base = arange(6.0);
  Tensor lo = base.slice(0, 0, 4), hi = base.slice(0, 2, 6);
  EXPECT_THROW(add_out(lo, hi, hi), Error);  // partial overlap between input and output
}

TEST(TensorCore, InplaceOpsBumpTheVersionSharedByViews) {
  Tensor t = zeros({4});
  Tensor v = t.view({2, 2});
  const uint32_t before = t.impl()->storage()->version();
  v.add_(1);
  EXPECT_GT(t.impl()->storage()->version(), before);
  EXPECT_EQ(t[3].item<float>(), 1.0f);
}

// libtorch declares in-place methods const: they write the tensor, never the handle, so code
// that receives `const Tensor&` (a weight to initialise, `leaf.grad()`) writes through it.
TEST(TensorCore, InplaceMethodsWriteThroughConstReferences) {
  static_assert(std::is_invocable_v<decltype(&Tensor::zero_), const Tensor&>);
  static_assert(std::is_invocable_v<decltype(&Tensor::transpose_), const Tensor&, int64_t, int64_t>);
  const Tensor weight = zeros({2, 3});
  const Tensor view = weight.view({3, 2});
  view.add_(1).mul_(3);
  weight.index_put_({0, 0}, 7);
  weight.t_();
  EXPECT_EQ(weight.sizes().vec(), std::vector<int64_t>({3, 2}));
  EXPECT_TRUE(weight.equal(tensor({7.0f, 3, 3, 3, 3, 3}).view({2, 3}).t()));
  weight.resize_({6}).fill_(2).sqrt_();
  EXPECT_TRUE(weight.allclose(full({6}, std::sqrt(2.0))));

  const Tensor leaf = ones({2}, TensorOptions().requires_grad(true));
  (leaf * 3).sum().backward();
  EXPECT_TRUE(leaf.grad().equal(full({2}, 3.0)));
  leaf.grad().zero_();
  EXPECT_TRUE(leaf.grad().equal(zeros({2})));
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(TensorCore, DeprecatedDataOfTIsDataPtr) {
  const Tensor t = arange(3, kFloat);
  EXPECT_EQ(t.data<float>(), t.data_ptr<float>());
  EXPECT_TRUE(t.data().equal(t));  // the untemplated data() is still the detached tensor
  expect_error([&] { (void)t.data<int64_t>(); }, {"data_ptr", "dtype"});
}
#pragma GCC diagnostic pop

TEST(TensorCore, StorageIdsAreNeverReusedWhenAddressesAre) {
  Tensor a = empty({1 << 10});
  const void* data = a.data_ptr();
  const uint64_t id = a.impl()->storage()->id();
  EXPECT_EQ(a.view({32, 32}).impl()->storage()->id(), id);  // views share the storage
  a = Tensor();
  Tensor b = empty({1 << 10});
  EXPECT_EQ(b.data_ptr() == data, cpu_allocator::caching_enabled());  // the freed block is reused when caching
  EXPECT_NE(b.impl()->storage()->id(), id);
  float blob[2] = {};
  EXPECT_NE(from_blob(blob, {2}).impl()->storage()->id(), from_blob(blob, {2}).impl()->storage()->id());
}

TEST(TensorCore, ErrorsNameTheOpAndShapes) {
  try {
    add(ones({2, 3}), ones({2, 4}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("The size of tensor a (3) must match the size of tensor b (4) at "
                                         "non-singleton dimension 1"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("add", 0), 0u) << e.what();
  }
  EXPECT_THROW(Device("gpu:0"), Error);
  EXPECT_THROW(empty({1}, Device("cuda:0")), Error);  // named as libtorch names it, but absent
  EXPECT_THROW(Tensor().dim(), Error);
  EXPECT_THROW(arange(0, 10, 0), Error);
  EXPECT_THROW(randint(5, 5, {2}), Error);
  EXPECT_THROW(set_num_threads(0), Error);
}

namespace {
struct Counter : OpObserver {
  std::vector<std::string> ops;
  int depth = 0, max_depth = 0;
  void on_enter(const char* name) override {
    ops.emplace_back(name);
    max_depth = std::max(max_depth, ++depth);
  }
  void on_exit(const char*) override { --depth; }
};
}  // namespace

TEST(Dispatch, ObserversSeeEveryOpOnTheirThreadOnly) {
  Tensor a = ones({3}), b = ones({3});
  {
    Counter c;
    Tensor r = a + b;
    r.mul_(2);
    EXPECT_EQ(c.ops, (std::vector<std::string>{"add", "mul_"}));
    std::thread other([&] { Tensor x = a + b; });  // another thread is not observed
    other.join();
    EXPECT_EQ(c.ops.size(), 2u);
    Tensor mixed = a + ones({3}, kLong);  // add casts its int64 input: a nested op
    EXPECT_EQ(c.ops.back(), "copy_");
    EXPECT_GE(c.max_depth, 2);
    EXPECT_EQ(c.depth, 0);
  }
  Counter after;
  EXPECT_TRUE(after.ops.empty());
}

TEST(Allocator, CachesBlocksAndCountsBytes) {
  cpu_allocator::reset_peak_stats();
  const auto before = cpu_allocator::stats();
  {
    Tensor big = empty({1 << 20});  // 4 MiB
    const auto during = cpu_allocator::stats();
    EXPECT_GE(during.allocated_bytes, before.allocated_bytes + (4u << 20));
    EXPECT_GE(during.peak_allocated_bytes, during.allocated_bytes);
  }
  const auto after = cpu_allocator::stats();
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_GE(after.peak_allocated_bytes, before.allocated_bytes + (4u << 20));
  void* p1 = empty({1 << 20}).data_ptr();
  void* p2 = empty({1 << 20}).data_ptr();
  EXPECT_EQ(p1 == p2, cpu_allocator::caching_enabled());  // the freed block is reused when caching
  cpu_allocator::empty_cache();
  EXPECT_EQ(cpu_allocator::stats().cached_bytes, 0u);
}

// Uninitialized memory reads as NaN (each float dtype) or all-ones bits (integers) while the fill
// is on, whether the block is new or reused from the cache, small or large.
TEST(Allocator, FillsUninitializedMemoryWhenAsked) {
  const bool saved = cpu_allocator::fill_uninitialized_memory();
  cpu_allocator::set_fill_uninitialized_memory(true);
  for (int64_t n : {int64_t{3}, int64_t{1000}, int64_t{1} << 20}) {
    { Tensor warm = zeros({n}); }  // a block of this size class, zeroed and returned to the cache
    for (ScalarType t : {kFloat, kDouble, kHalf, kBFloat16}) {
      EXPECT_TRUE(empty({n}, t).isnan().all().item<bool>()) << t << " " << n;
    }
    EXPECT_TRUE(empty({n}, kLong).eq(-1).all().item<bool>()) << n;
    EXPECT_TRUE(empty({n}, kByte).eq(255).all().item<bool>()) << n;
  }
  cpu_allocator::set_fill_uninitialized_memory(false);
  EXPECT_FALSE(cpu_allocator::fill_uninitialized_memory());
  cpu_allocator::set_fill_uninitialized_memory(saved);
}

// What the kernels run on (get_cpu_capability follows EMBER_CPU_CAPABILITY, which the ctest entry
// cpu_capability_avx2 sets).
TEST(CpuCapability, NamesThePathsTaken) {
  const std::string cap = get_cpu_capability();
  const char* env = std::getenv("EMBER_CPU_CAPABILITY");
  if (env && std::string(env) == "avx2") {
    EXPECT_EQ(cap, "AVX2");
  } else {
    EXPECT_TRUE(cap == "AVX512" || cap == "AVX2") << cap;
  }
  const std::string paths = cpu_kernel_paths();
  // the kernels really run the capability's path (Highway names AVX-512 AVX3...)
  Tensor x = arange(100, kFloat);
  (void)x.exp();
  EXPECT_NE(cpu_kernel_paths().find(cap == "AVX2" ? "Highway AVX2," : "Highway AVX3"), std::string::npos) << paths;
  EXPECT_NE(paths.find(has_bfloat16_instructions() ? "bfloat16 native" : "bfloat16 emulated"), std::string::npos)
      << paths;
  if (has_amx_instructions()) EXPECT_TRUE(has_bfloat16_instructions());
  // the kernels still compute the same on the lowered path
  EXPECT_EQ(x.mul(2).sum().item<double>(), 9900.0);
}

// at::show_config's report: the capability in use and the flags this library was built with,
// sanitizers included (asked of the library: CI runs these tests against more than one build).
TEST(CpuCapability, ShowConfig) {
  const std::string config = show_config(), flags = get_cxx_flags();
  EXPECT_EQ(config.rfind("Ember built with:\n", 0), 0u) << config;
  EXPECT_NE(config.find("  - CPU capability usage: " + get_cpu_capability() + "\n"), std::string::npos) << config;
  EXPECT_NE(config.find("  - oneDNN v"), std::string::npos) << config;
  EXPECT_NE(config.find(", CXX_FLAGS=" + flags + ", "), std::string::npos) << config;
  const char* sanitizers = flags.find("-fsanitize=address") != std::string::npos  ? "address"
                           : flags.find("-fsanitize=thread") != std::string::npos ? "thread"
                                                                                  : "none";
  EXPECT_NE(config.find(std::string("SANITIZERS=") + sanitizers + "\n"), std::string::npos) << config;
}

TEST(Scalar, KindsAndConversions) {
  EXPECT_EQ(Scalar(1).type(), kLong);
  EXPECT_EQ(Scalar(1.5).type(), kDouble);
  EXPECT_EQ(Scalar(true).type(), kBool);
  EXPECT_EQ(Scalar(2.75).to<int64_t>(), 2);
  EXPECT_EQ(static_cast<float>(Scalar(3).to<Half>()), 3.0f);
  EXPECT_EQ((-Scalar(4)).toLong(), -4);
}

// libtorch programs ask about CUDA and pick the CPU when it is absent; making or moving anything
// there raises a clear error.
TEST(Devices, CudaIsNamedButAbsent) {
  EXPECT_FALSE(cuda::is_available());
  EXPECT_EQ(cuda::device_count(), 0u);
  EXPECT_FALSE(cuda::cudnn_is_available());
  const DeviceType type = cuda::is_available() ? kCUDA : kCPU;
  const Device device(type);
  EXPECT_TRUE(device.is_cpu());
  EXPECT_EQ(Device("cpu"), Device(kCPU));
  EXPECT_EQ(Device("cuda:1"), Device(kCUDA, 1));
  EXPECT_EQ(Device("cuda").str(), "cuda");
  EXPECT_EQ(Device("cpu:0").index(), 0);
  EXPECT_TRUE(Device("cuda:0").is_cuda());
  EXPECT_NE(Device("cuda:0"), Device("cuda:1"));
  for (const char* bad : {"gpu", "cuda:", "cuda:x", "cpu:-1", ""}) {
    EXPECT_THROW(Device{std::string(bad)}, Error) << bad;
  }
  const Tensor x = ones({2});
  EXPECT_TRUE(x.to(device).equal(x));
  EXPECT_TRUE(x.to(Device(kCPU), kDouble).equal(ones({2}, kDouble)));
  EXPECT_FALSE(x.is_cuda());
  for (auto make : std::vector<std::function<Tensor()>>{
           [&] { return x.to(kCUDA); }, [&] { return x.to(Device("cuda:0"), kFloat); }, [&] { return x.cuda(); },
           [] { return zeros({2}, TensorOptions().device(kCUDA)); }, [] { return ones({2}, Device("cuda")); }}) {
    try {
      make();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("CPU only"), std::string::npos) << e.what();
    }
  }
  nn::Linear model(3, 2);
  model->to(device);
  model->to(Device(kCPU), kDouble);
  EXPECT_EQ(model->weight.dtype(), kDouble);
  EXPECT_THROW(model->to(Device(kCUDA)), Error);
  EXPECT_EQ(model->weight.dtype(), kDouble);
}

// at::globalContext() as libtorch programs set it up: the CUDA switches read back what was set,
// allowTF32CuBLAS is the float32 matmul precision seen as a flag (libtorch 1.13's Context).
TEST(Devices, GlobalContextAsLibtorch) {
  at::Context& ctx = at::globalContext();
  EXPECT_EQ(&ctx, &globalContext());
  EXPECT_FALSE(ctx.deterministicAlgorithms());
  ctx.setDeterministicAlgorithms(true, true);
  EXPECT_TRUE(ctx.deterministicAlgorithms());
  EXPECT_TRUE(ctx.deterministicAlgorithmsWarnOnly());
  ctx.setDeterministicAlgorithms(false, false);
  EXPECT_FALSE(ctx.deterministicAlgorithms());
  for (bool b : {true, false}) {
    ctx.setBenchmarkCuDNN(b);
    ctx.setDeterministicCuDNN(b);
    ctx.setAllowTF32CuDNN(b);
    ctx.setAllowFP16ReductionCuBLAS(b);
    EXPECT_EQ(ctx.benchmarkCuDNN(), b);
    EXPECT_EQ(ctx.deterministicCuDNN(), b);
    EXPECT_EQ(ctx.allowTF32CuDNN(), b);
    EXPECT_EQ(ctx.allowFP16ReductionCuBLAS(), b);
  }
  ctx.setAllowTF32CuDNN(true);
  ctx.setAllowFP16ReductionCuBLAS(true);
  EXPECT_FALSE(ctx.allowTF32CuBLAS());
  EXPECT_EQ(ctx.float32MatmulPrecision(), at::Float32MatmulPrecision::HIGHEST);
  ctx.setAllowTF32CuBLAS(true);
  EXPECT_EQ(get_float32_matmul_precision(), "high");
  EXPECT_TRUE(ctx.allowTF32CuBLAS());
  ctx.setFloat32MatmulPrecision("medium");
  EXPECT_EQ(ctx.float32MatmulPrecision(), at::Float32MatmulPrecision::MEDIUM);
  EXPECT_THROW(ctx.setFloat32MatmulPrecision("low"), Error);
  ctx.setAllowTF32CuBLAS(false);
  EXPECT_EQ(get_float32_matmul_precision(), "highest");
  EXPECT_TRUE(at::hasMKLDNN() && at::hasOpenMP() && at::hasLAPACK());
  EXPECT_FALSE(at::hasCUDA() || at::hasMKL() || at::Context::hasMPS());
  torch::manual_seed(7);
  const Tensor a = torch::rand({3});
  ctx.defaultGenerator(Device(kCPU)).set_current_seed(7);
  EXPECT_TRUE(torch::rand({3}).equal(a));
  EXPECT_ERROR(ctx.defaultGenerator(Device(kCUDA)), "CPU only");
  EXPECT_ERROR(torch::cuda::synchronize(), "No CUDA GPUs are available");
  EXPECT_EQ(std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
                std::to_string(TORCH_VERSION_PATCH),
            TORCH_VERSION);
  static_assert(std::is_same_v<at::scalar_value_type<c10::complex<double>>::type, double>);
  static_assert(std::is_same_v<at::scalar_value_type<at::Half>::type, at::Half>);
}

// c10's checking macros, as libtorch programs use them: a failure is an ember::Error carrying the
// message (or libtorch's default one).
TEST(Devices, LibtorchCheckingMacros) {
  const int n = 3;
  TORCH_CHECK(n == 3, "never raised");
  AT_ASSERT(n > 0);
  TORCH_INTERNAL_ASSERT(n > 0, "never raised");
  auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { TORCH_CHECK(n == 4, "n must be 4, got ", n); }), "n must be 4, got 3");
  EXPECT_EQ(message([&] { TORCH_CHECK(n == 4); }), "Expected n == 4 to be true, but got false.");
  EXPECT_NE(message([&] { AT_ASSERT(n == 4); }).find("n == 4 INTERNAL ASSERT FAILED"), std::string::npos);
  EXPECT_EQ(message([&] { AT_ERROR("bad value ", n); }), "bad value 3");
  C10_UNUSED const int unused = 0;
  TORCH_CHECK(n == 3)  // no semicolon: c10's macro is an if statement, and programs rely on it
  // std containers print as c10's logging header prints them.
  std::ostringstream os;
  os << std::vector<int64_t>{1, 2, 3} << '|' << std::make_pair(1, 2.5) << '|' << std::vector<int>(101, 7);
  EXPECT_EQ(os.str().substr(0, 16), "1 2 3|(1, 2.5)|7");
  EXPECT_EQ(os.str().substr(os.str().size() - 7), "7 7 ...");
}

template <class X>
concept HasAccessor = requires(X x) { std::forward<X>(x).template accessor<float, 1>(); };

// accessor<T, N>() and the packed accessors read and write through the strides; a wrong dtype or
// dimension count raises; an rvalue tensor has no (dangling) TensorAccessor.
TEST(Accessor, ReadsAndWritesThroughStrides) {
  ember::Tensor t = ember::arange(12, ember::kFloat).view({3, 4});
  auto a = t.accessor<float, 2>();
  EXPECT_EQ(a.size(0), 3);
  EXPECT_EQ(a.stride(0), 4);
  EXPECT_EQ(a.sizes().vec(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(a[2][1], 9.0f);
  a[1][3] = -1;
  EXPECT_EQ(t[1][3].item<float>(), -1.0f);
  const ember::Tensor tt = t.t();
  auto b = tt.accessor<float, 2>();
  EXPECT_EQ(b[3][1], -1.0f);
  EXPECT_EQ(b.data(), t.data_ptr<float>());
  auto p = t.packed_accessor64<float, 2>();
  EXPECT_EQ(p[2][3], 11.0f);
  auto p32 = t.packed_accessor32<float, 2, ember::RestrictPtrTraits>();
  EXPECT_EQ(p32.transpose(0, 1)[3][2], 11.0f);
  const ember::Tensor v = ember::arange(5, ember::kLong).slice(0, 0, 5, 2);
  auto c = v.generic_packed_accessor<int64_t, 1>();
  EXPECT_EQ(c.size(0), 3);
  EXPECT_EQ(c[2], 4);
  EXPECT_THROW((t.accessor<float, 3>()), ember::Error);
  EXPECT_THROW((t.accessor<double, 2>()), ember::Error);
  EXPECT_THROW((t.packed_accessor64<float, 1>()), ember::Error);
  static_assert(!HasAccessor<ember::Tensor&&>);
  static_assert(HasAccessor<const ember::Tensor&>);
}

// libtorch's deprecated detach spellings and the real-tensor forms of the complex-aware methods.
TEST(TensorMethods, DetachSpellingsAndRealForms) {
  const ember::Tensor x = ember::rand({2, 3}).requires_grad_();
  for (const ember::Tensor& d : {x.data(), x.variable_data(), x.tensor_data()}) {
    EXPECT_FALSE(d.requires_grad());
    EXPECT_EQ(d.data_ptr(), x.data_ptr());
  }
  EXPECT_TRUE(ember::equal(x.adjoint(), x.mT()));
  const ember::Tensor a = x.alias();
  EXPECT_EQ(a.data_ptr(), x.data_ptr());
  EXPECT_TRUE(a.requires_grad());
  EXPECT_TRUE(x.resolve_conj().is_same(x));
  EXPECT_TRUE(x.resolve_neg().is_same(x));
}

// Calls a fifth survey of public libtorch programs found missing (docs/compat.md).
TEST(TensorMethods, FifthSurveyCalls) {
  // set_data: the tensor keeps its identity and autograd state, takes the new data, dtype included
  const torch::Tensor w = torch::ones({2, 3}).requires_grad_();
  const torch::Tensor handle = w;
  w.set_data(torch::arange(4, torch::kDouble));
  EXPECT_TRUE(handle.is_same(w));
  EXPECT_TRUE(w.requires_grad());
  EXPECT_EQ(w.sizes(), IntArrayRef({4}));
  EXPECT_EQ(w.scalar_type(), kDouble);
  EXPECT_TRUE(w.detach().equal(torch::arange(4, torch::kDouble)));
  // ATen's _cast_<Type>
  const torch::Tensor f = torch::tensor({1.7, -2.2});
  EXPECT_EQ(torch::_cast_Float(f).scalar_type(), kFloat);
  EXPECT_TRUE(torch::_cast_Long(f).equal(torch::tensor({1, -2}, torch::kLong)));
  EXPECT_EQ(torch::_cast_Byte(f.abs()).scalar_type(), kByte);
  // TensorOptions::device with a Device's arguments
  EXPECT_EQ(torch::TensorOptions().device(torch::kCPU, 0).device(), torch::Device(torch::kCPU, 0));
  EXPECT_EQ(torch::TensorOptions().device("cpu").device(), torch::Device(torch::kCPU));
  // a list of tensors through a stream, as an RWKV server caches its states
  std::stringstream stream;
  const std::vector<torch::Tensor> states = {torch::rand({2, 3}), torch::arange(5), torch::ones({0})};
  torch::save(states, stream);
  std::vector<torch::Tensor> back;
  torch::load(back, stream);
  ASSERT_EQ(back.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(back[i].equal(states[i]));
  EXPECT_FALSE(w.is_sparse() || w.is_mkldnn() || w.is_nested());  // optimizers written for libtorch ask
  // the <cfloat> and <climits> constants libtorch's header brings
  EXPECT_GT(FLT_MIN, 0.0f);
  EXPECT_EQ(INT_MAX, std::numeric_limits<int>::max());
}

// Calls a sixth survey of public libtorch programs found missing (docs/compat.md).
TEST(TensorMethods, SixthSurveyCalls) {
  const torch::Tensor t = torch::arange(6, torch::kFloat).reshape({2, 3});
  // the deprecated type(): compared, printed, asked
  std::ostringstream os;
  os << t.type() << ' ' << t.type().is_cuda() << ' ' << t.type().scalarType() << ' ' << torch::kCPU << ' '
     << c10::DeviceTypeName(torch::kCPU) << ' ' << t.names() << ' ' << t.name().empty();
  EXPECT_EQ(os.str(), "CPUFloatType 0 Float cpu CPU [None, None] 1");
  EXPECT_TRUE(t.type() == torch::ones({1}).type() && t.type() != torch::ones({1}, torch::kLong).type());
  EXPECT_TRUE(t.toBackend(c10::Backend::CPU).is_same(t));
  // a type converts to the options it names
  const torch::Tensor z = torch::zeros({2}, torch::ones({1}, torch::kDouble).type());
  EXPECT_EQ(z.scalar_type(), torch::kDouble);
  EXPECT_EQ(torch::empty({3}, t.type()).scalar_type(), torch::kFloat);
  const torch::TensorOptions from_type = t.type();
  EXPECT_EQ(from_type.dtype(), torch::kFloat);
  EXPECT_ERROR(t.toBackend(c10::Backend::CUDA), "toBackend", "CUDA");
  // AT_DISPATCH with scalar_t, and its error for another dtype
  const double sum = AT_DISPATCH_FLOATING_TYPES(t.scalar_type(), "sum_all", [&] {
    double acc = 0;
    for (int64_t i = 0; i < t.numel(); ++i) acc += t.data_ptr<scalar_t>()[i];
    return acc;
  });
  EXPECT_EQ(sum, 15.0);
  EXPECT_EQ(AT_DISPATCH_ALL_TYPES(torch::kInt, "size", [] { return sizeof(scalar_t); }), 4u);
  EXPECT_ERROR(AT_DISPATCH_FLOATING_TYPES(torch::kInt, "sum_all", [] { return 0; }), "\"sum_all\" not implemented for 'Int'");
  // a Scalar on the left of comparisons and bitwise operators
  EXPECT_TRUE((2.5 < t).equal(t > 2.5));
  EXPECT_TRUE((2 == t).equal(t == 2));
  EXPECT_TRUE((1 >= t).equal(t <= 1));
  const torch::Tensor m = torch::tensor({6, 3}, torch::kInt);
  EXPECT_TRUE((5 & m).equal(torch::tensor({4, 1}, torch::kInt)) && (m | 1).equal(torch::tensor({7, 3}, torch::kInt)));
  // indexing with a Scalar or a zero-dim tensor, mH, free numel
  EXPECT_TRUE(t[torch::tensor(1)].equal(t[1]) && t[c10::Scalar(0)].equal(t[0]));
  EXPECT_ERROR(t[torch::tensor({0, 1})], "operator[]", "zero-dim");
  EXPECT_TRUE(t.mH().equal(t.t()));
  EXPECT_EQ(torch::numel(t), 6);
  // devices: set_index, hashed
  torch::Device d(torch::kCPU);
  d.set_index(0);
  std::unordered_map<c10::Device, int> by_device{{d, 1}};
  EXPECT_EQ(by_device.at(torch::Device(torch::kCPU, 0)), 1);
  // IValue of sizes, c10::OptionalArrayRef, c10::Error's accessors, load with a device
  torch::jit::IValue sizes = t.sizes();
  EXPECT_EQ(sizes.toIntList().vec(), std::vector<int64_t>({2, 3}));
  const std::vector<int64_t> dims = {1};  // (a braced list would dangle, as with libtorch's)
  c10::OptionalArrayRef<long int> dim = c10::IntArrayRef(dims);
  EXPECT_TRUE(torch::sum(t, dim, true).equal(t.sum(1, true)));
  try {
    TORCH_CHECK(false, "boom");
  } catch (const c10::Error& e) {
    EXPECT_EQ(e.msg(), "boom");
    EXPECT_TRUE(e.backtrace().empty());
    EXPECT_STREQ(e.what_without_backtrace(), "boom");
  }
  std::stringstream stream;
  torch::save(t, stream);
  torch::Tensor back;
  torch::load(back, stream, torch::kCPU);
  EXPECT_TRUE(back.equal(t));
  EXPECT_ERROR(torch::load(back, stream, torch::kCUDA), "load");
}

// A seventh survey (programs that load a TorchScript model and run it, and custom ops): c10's typed
// checks and their error classes, glog-style checks, warn-once, the guards of older inference
// code, the inter-op thread count, flushing denormals, the parallel-info report.
TEST(TensorMethods, SeventhSurveyCalls) {
  const auto throws = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const c10::Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_THROW([] { TORCH_CHECK_INDEX(1 < 0, "index ", 7, " out of range"); }(), c10::IndexError);
  EXPECT_THROW([] { TORCH_CHECK_VALUE(false, "bad value"); }(), c10::ValueError);
  EXPECT_THROW([] { TORCH_CHECK_TYPE(false); }(), c10::TypeError);
  EXPECT_THROW([] { TORCH_CHECK_NOT_IMPLEMENTED(false, "later"); }(), c10::NotImplementedError);
  EXPECT_THROW([] { C10_THROW_ERROR(ValueError, "thrown"); }(), c10::ValueError);
  EXPECT_EQ(throws([] { TORCH_CHECK_INDEX(1 < 0, "index ", 7, " out of range"); }), "index 7 out of range");
  EXPECT_EQ(throws([] { TORCH_CHECK_TYPE(2 < 1); }), "Expected 2 < 1 to be true, but got false.");
  EXPECT_EQ(throws([] { TORCH_CHECK_ARG(false, 2, "must be positive"); }), "invalid argument 2: must be positive");
  EXPECT_EQ(throws([] { TORCH_CHECK_VALUE(true, "fine"); }), "no error");
  int calls = 0;
  if (C10_LIKELY(calls == 0)) ++calls;
  if (C10_UNLIKELY(calls == 0)) ++calls;
  EXPECT_EQ(calls, 1);
  TORCH_INTERNAL_ASSERT_DEBUG_ONLY(calls == 1, "debug only");
  C10_LOG_API_USAGE_ONCE("ember.test");
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i) TORCH_WARN_ONCE("said once, ", i);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "Warning: said once, 0\n");
  TORCH_CHECK_EQ(calls, 1);
  TORCH_CHECK_LT(calls, 2) << "streamed text is only printed on failure";
  EXPECT_DEATH(TORCH_CHECK_GE(calls, 5) << " (more)", "Check failed: calls >= 5 \\(1 vs. 5\\)  \\(more\\)");

  // the guards that keep older inference code from recording
  const torch::Tensor w = torch::ones({2}, torch::requires_grad());
  {
    at::AutoNonVariableTypeMode guard(true);
    EXPECT_FALSE((w * 2).requires_grad());
  }
  {
    at::AutoNonVariableTypeMode guard(false);
    EXPECT_TRUE((w * 2).requires_grad());
  }
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    EXPECT_FALSE((w * 2).requires_grad());
  }
  EXPECT_TRUE((w * 2).requires_grad());

  // inter-op threads: a positive count, set once (Ember has no inter-op pool to size)
  EXPECT_GE(at::get_num_interop_threads(), 1);
  EXPECT_ERROR(at::set_num_interop_threads(0), "Expected positive number of threads");
  at::set_num_interop_threads(3);
  EXPECT_EQ(torch::get_num_interop_threads(), 3);
  EXPECT_ERROR(at::set_num_interop_threads(2), "cannot set number of interop threads");
  at::init_num_threads();
  const std::string info = at::get_parallel_info();
  EXPECT_NE(info.find("at::get_num_threads() : " + std::to_string(at::get_num_threads())), std::string::npos) << info;
  EXPECT_NE(info.find("at::get_num_interop_threads() : 3"), std::string::npos) << info;

  // denormals flushed to zero on this thread while the flag is on
  volatile float tiny = 1e-39f;  // a float32 denormal
  EXPECT_TRUE(at::globalContext().setFlushDenormal(true));
  EXPECT_EQ(tiny * 1.0f, 0.0f);
  EXPECT_EQ(torch::full({4}, 1e-39).mul(1.0).sum().item<float>(), 0.0f);
  EXPECT_TRUE(at::globalContext().setFlushDenormal(false));
  EXPECT_NE(tiny * 1.0f, 0.0f);
}

// torch/types.h's short dtype names.
TEST(Dtype, LibtorchShortNames) {
  EXPECT_EQ(std::vector<ScalarType>({torch::kU8, torch::kI8, torch::kI16, torch::kI32, torch::kI64}),
            std::vector<ScalarType>({kByte, kChar, kShort, kInt, kLong}));
  EXPECT_EQ(std::vector<ScalarType>({torch::kF16, torch::kF32, torch::kF64}),
            std::vector<ScalarType>({kHalf, kFloat, kDouble}));
}

}  // namespace EMBER_UNITY_FILE
