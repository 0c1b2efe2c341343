// nn ops: semantics on hand-checked values, PyTorch's errors for bad arguments, output layouts,
// dropout's randomness, and reuse of cached oneDNN primitives and reordered weights.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ember/ember.h"
#include "kernels/cpu/onednn_nn.h"
#include "unit/expect_error.h"
#include "unit/temp_dir.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;
namespace F = ember::nn::functional;

namespace {

std::vector<float> values(const Tensor& t) {
  Tensor c = t.to(kFloat).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

std::vector<int64_t> longs(const Tensor& t) {
  Tensor c = t.contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

// Element-wise comparisons (the reduction ops are not in this branch yet).
bool same(const Tensor& a, const Tensor& b) { return a.sizes() == b.sizes() && values(a) == values(b); }
bool close(const Tensor& a, const Tensor& b, float tol) {
  if (a.sizes() != b.sizes()) return false;
  std::vector<float> x = values(a), y = values(b);
  for (size_t i = 0; i < x.size(); ++i)
    if (std::fabs(x[i] - y[i]) > tol * (1 + std::fabs(y[i]))) return false;
  return true;
}

const ScalarType kFloatTypes[] = {kFloat, kDouble, kBFloat16, kHalf};

}  // namespace

// ---- convolution ---------------------------------------------------------------------------

TEST(NnConv, OnesGiveWindowCounts) {
  // a 3x3 kernel of ones over a zero-padded 4x4 plane of ones counts the in-bounds taps
  Tensor x = ones({1, 2, 4, 4}), w = ones({1, 2, 3, 3}), b = full({1}, 0.5);
  for (ScalarType dt : kFloatTypes) {
    Tensor y = conv2d(x.to(dt), w.to(dt), b.to(dt), 1, 1);
    EXPECT_EQ(y.sizes(), IntArrayRef({1, 1, 4, 4}));
    EXPECT_EQ(y.dtype(), dt);
    std::vector<float> v = values(y);
    EXPECT_EQ(v[0], 2 * 4 + 0.5f) << dt;  // corner
    EXPECT_EQ(v[1], 2 * 6 + 0.5f) << dt;  // edge
    EXPECT_EQ(v[5], 2 * 9 + 0.5f) << dt;  // interior
  }
}

TEST(NnConv, GroupsSeeOnlyTheirChannels) {
  // channel c holds the value c + 1; with groups=2 output 0 sums channels 0-1, output 1 channels 2-3
  Tensor x = arange(1, 5, TensorOptions().dtype(kFloat)).view({1, 4, 1, 1}).expand({1, 4, 3, 3}).contiguous();
  Tensor w = ones({2, 2, 1, 1});
  for (ScalarType dt : kFloatTypes) {
    std::vector<float> v = values(conv2d(x.to(dt), w.to(dt), {}, 1, 0, 1, 2));
    EXPECT_EQ(v[0], 3.0f) << dt;
    EXPECT_EQ(v[9], 7.0f) << dt;
  }
}

TEST(NnConv, TransposedScattersEachInput) {
  // stride 2, kernel 2 of ones: every input value fills its own 2x2 block
  Tensor x = arange(1, 5, TensorOptions().dtype(kFloat)).view({1, 1, 2, 2});
  for (ScalarType dt : kFloatTypes) {
    Tensor y = conv_transpose2d(x.to(dt), ones({1, 1, 2, 2}, TensorOptions().dtype(dt)), {}, 2);
    EXPECT_EQ(y.sizes(), IntArrayRef({1, 1, 4, 4}));
    EXPECT_EQ(values(y), std::vector<float>({1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4})) << dt;
    // output_padding adds a row and column that only the bias reaches
    Tensor yp = conv_transpose2d(x.to(dt), ones({1, 1, 2, 2}, TensorOptions().dtype(dt)),
                                 full({1}, 10, TensorOptions().dtype(dt)), 2, 0, 1);
    EXPECT_EQ(yp.sizes(), IntArrayRef({1, 1, 5, 5}));
    EXPECT_EQ(values(yp)[24], 10.0f) << dt;
  }
}

TEST(NnConv, LayoutFollowsInputOrWeight) {
  Tensor x = randn({2, 3, 6, 6}), w = randn({4, 3, 3, 3});
  EXPECT_TRUE(conv2d(x, w).is_contiguous());
  EXPECT_TRUE(conv2d(x.contiguous(MemoryFormat::ChannelsLast), w).is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_TRUE(conv2d(x, w.contiguous(MemoryFormat::ChannelsLast)).is_contiguous(MemoryFormat::ChannelsLast));
  Tensor y = conv2d(x, w), ycl = conv2d(x.contiguous(MemoryFormat::ChannelsLast), w);
  EXPECT_TRUE(close(ycl, y, 1e-5f));
  // unbatched in, unbatched out; empty batch in, empty batch out
  EXPECT_EQ(conv2d(x[0], w, {}, 1, 1).sizes(), IntArrayRef({4, 6, 6}));
  EXPECT_EQ(conv2d(empty({0, 3, 6, 6}), w).sizes(), IntArrayRef({0, 4, 4, 4}));
  EXPECT_EQ(conv1d(randn({3, 10}), randn({2, 3, 4}), {}, 1, "same").sizes(), IntArrayRef({2, 10}));
}

TEST(NnConv, RepeatedCallsReuseCachedPrimitives) {
  Tensor x = randn({2, 8, 10, 10}), w = randn({8, 8, 3, 3}), b = randn({8});
  Tensor first = conv2d(x, w, b, 1, 1);
  const size_t entries = onednn::cache_size();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(same(conv2d(x, w, b, 1, 1), first));
  EXPECT_EQ(onednn::cache_size(), entries);
  // new data of the same shape: same primitive, new result
  Tensor x2 = randn({2, 8, 10, 10});
  Tensor second = conv2d(x2, w, b, 1, 1);
  EXPECT_EQ(onednn::cache_size(), entries);
  EXPECT_FALSE(same(second, first));
  conv2d(x, w, b, 2, 1);  // another stride is another primitive
  EXPECT_EQ(onednn::cache_size(), entries + 1);
}

// ---- reordered weights kept while the weight is unchanged ------------------------------------
// The shapes below take a blocked weight layout (channels in blocks of 8 or 16) on AVX2 and
// AVX-512, so each call without a kept reorder reorders the weight once.

namespace {

// The weight reorders that f runs on this thread.
size_t reorders(const std::function<void()>& f) {
  const size_t before = onednn::weight_reorders();
  f();
  return onednn::weight_reorders() - before;
}

const MemoryFormat kWeightFormats[] = {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast};

}  // namespace

// oneDNN threads with the calling thread's OpenMP count: a convolution run from a thread of the
// user's own sets it to Ember's first, so that threads calling Ember do not multiply its threads.
TEST(NnConv, RunsWithEmbersThreadCountOnAnyThread) {
  const int threads = get_num_threads();
  set_num_threads(1);
  int seen = 0;
  std::thread([&] {
    omp_set_num_threads(2);  // a count of the thread's own, as OMP_NUM_THREADS would give it
    (void)conv2d(randn({2, 16, 12, 12}), randn({16, 16, 3, 3}), {}, 1, 1);
    seen = omp_get_max_threads();
  }).join();
  set_num_threads(threads);
  EXPECT_EQ(seen, 1);
}

TEST(NnConvWeightCache, RepeatedCallsReorderTheWeightOnce) {
  for (MemoryFormat f : kWeightFormats) {
    SCOPED_TRACE(f == MemoryFormat::Contiguous ? "contiguous" : "channels_last");
    const Tensor x = randn({1, 32, 10, 10}).contiguous(f), w = randn({16, 32, 3, 3}).contiguous(f);
    const Tensor wt = randn({32, 16, 3, 3}).contiguous(f);
    Tensor y, yt;
    EXPECT_EQ(reorders([&] { y = conv2d(x, w, {}, 1, 1); }), 1u);
    EXPECT_EQ(reorders([&] { yt = conv_transpose2d(x, wt, {}, 1, 1); }), 1u);
    EXPECT_EQ(reorders([&] {
                for (int i = 0; i < 3; ++i) {
                  EXPECT_TRUE(same(conv2d(x, w, {}, 1, 1), y));
                  EXPECT_TRUE(same(conv_transpose2d(x, wt, {}, 1, 1), yt));
                }
                EXPECT_FALSE(same(conv2d(randn(x.sizes()).contiguous(f), w, {}, 1, 1), y));  // a new input
              }),
              0u);
    // another weight of the same shape (so the same plan) gets a reordered copy of its own; both
    // are kept while the two alternate, as a ResNet's repeated blocks do
    const Tensor w2 = randn(w.sizes()).contiguous(f);
    Tensor y2;
    EXPECT_EQ(reorders([&] { y2 = conv2d(x, w2, {}, 1, 1); }), 1u);
    EXPECT_FALSE(same(y2, y));
    EXPECT_EQ(reorders([&] {
                for (int i = 0; i < 3; ++i) {
                  EXPECT_TRUE(same(conv2d(x, w, {}, 1, 1), y));
                  EXPECT_TRUE(same(conv2d(x, w2, {}, 1, 1), y2));
                }
              }),
              0u);
    // a write to one of them reorders that one only
    {
      NoGradGuard g;
      Tensor(w2).mul_(2);
    }
    EXPECT_EQ(reorders([&] {
                EXPECT_TRUE(same(conv2d(x, w, {}, 1, 1), y));
                EXPECT_TRUE(same(conv2d(x, w2, {}, 1, 1), conv2d(x, w2.clone(), {}, 1, 1)));
              }),
              2u);  // w2 and its clone
  }
}

// More weights of one shape than a plan keeps copies of: the least recently used copy is
// replaced, and every result stays that of its own weight.
TEST(NnConvWeightCache, BeyondTheKeptCopiesResultsStayRight) {
  const Tensor x = randn({1, 32, 10, 10});
  std::vector<Tensor> weights, expected;
  for (size_t i = 0; i < onednn::Plan::kKeptWeights + 6; ++i) {
    weights.push_back(randn({16, 32, 3, 3}));
    expected.push_back(conv2d(x, weights.back(), {}, 1, 1));
  }
  EXPECT_EQ(reorders([&] {
              for (size_t i = 0; i < weights.size(); ++i)
                EXPECT_TRUE(same(conv2d(x, weights[i], {}, 1, 1), expected[i])) << "weight " << i;
            }),
            weights.size());  // each was replaced before its turn came again
  EXPECT_EQ(reorders([&] { conv2d(x, weights.back(), {}, 1, 1); }), 0u);
}

// Each write between two calls is seen: the weight is reordered again and the result is that of a
// copy of the weight (new storage, so reordered afresh).
TEST(NnConvWeightCache, WritesBetweenCallsAreSeen) {
  for (MemoryFormat f : kWeightFormats) {
    SCOPED_TRACE(f == MemoryFormat::Contiguous ? "contiguous" : "channels_last");
    const Tensor x = randn({1, 32, 10, 10}).contiguous(f);
    const Tensor w = randn({16, 32, 3, 3}).contiguous(f).requires_grad_();
    const auto step = [&](auto&& optimizer) {
      w.mutable_grad() = randn(w.sizes());
      optimizer.step();
    };
    const std::vector<std::pair<const char*, std::function<void()>>> writes = {
        {"add_", [&] { NoGradGuard g; Tensor(w).add_(1); }},
        {"copy_", [&] { NoGradGuard g; Tensor(w).copy_(randn(w.sizes())); }},
        {"mul_ on a view", [&] { NoGradGuard g; w[3].mul_(-2); }},
        {"init::normal_", [&] { nn::init::normal_(w); }},
        {"SGD", [&] { step(optim::SGD({w}, optim::SGDOptions(0.5).momentum(0.9))); }},
        {"Adam", [&] { step(optim::Adam({w}, optim::AdamOptions(0.5))); }},
        {"fused Adam", [&] { step(optim::Adam({w}, optim::AdamOptions(0.5).fused(true))); }},
    };
    NoGradGuard no_grad;
    for (const auto& [name, write] : writes) {
      const Tensor before = conv2d(x, w, {}, 1, 1);
      EXPECT_EQ(reorders([&] { conv2d(x, w, {}, 1, 1); }), 0u) << name;
      write();
      Tensor after;
      EXPECT_EQ(reorders([&] { after = conv2d(x, w, {}, 1, 1); }), 1u) << name;
      EXPECT_TRUE(same(after, conv2d(x, w.clone(), {}, 1, 1))) << name;
      EXPECT_FALSE(same(after, before)) << name;
    }
  }
}

TEST(NnConvWeightCache, LoadingIntoAModuleIsSeen) {
  TempDir dir("conv_weight_cache");
  nn::Conv2d a(nn::Conv2dOptions(32, 16, 3).padding(1)), b(nn::Conv2dOptions(32, 16, 3).padding(1));
  const Tensor x = randn({1, 32, 10, 10});
  NoGradGuard no_grad;
  const Tensor ya = a->forward(x);
  EXPECT_FALSE(same(b->forward(x), ya));
  ember::save(a, dir.file("a.safetensors"));
  ember::load(b, dir.file("a.safetensors"));
  EXPECT_TRUE(same(b->forward(x), ya));
  nn::init::zeros_(b->weight);
  EXPECT_FALSE(same(b->forward(x), ya));
  ember::load_state_dict(b, a->named_parameters());
  EXPECT_TRUE(same(b->forward(x), ya));
}

// The caching allocator hands a freed weight's block to the next weight of its size, at the same
// version: only the storage's id tells the two apart.
TEST(NnConvWeightCache, ANewWeightAtAFreedWeightsAddressIsReordered) {
  const Tensor x = randn({1, 32, 10, 10}), a = randn({16, 32, 3, 3}), b = randn({16, 32, 3, 3});
  Tensor ya;
  const void* address = nullptr;
  int64_t version = 0;
  {
    Tensor w = empty({16, 32, 3, 3});
    w.copy_(a);
    address = w.data_ptr();
    version = w._version();
    ya = conv2d(x, w, {}, 1, 1);
  }
  Tensor w = empty({16, 32, 3, 3});
  w.copy_(b);
  EXPECT_EQ(w.data_ptr() == address, cpu_allocator::caching_enabled());
  EXPECT_EQ(w._version(), version);
  Tensor yb;
  EXPECT_EQ(reorders([&] { yb = conv2d(x, w, {}, 1, 1); }), 1u);
  EXPECT_TRUE(same(yb, conv2d(x, b, {}, 1, 1)));
  EXPECT_FALSE(same(yb, ya));
}

// Under InferenceMode a model's usual (normal) weights keep their reorder, and their in-place
// writes there bump the version as anywhere. Inference tensors keep no version counter (as
// PyTorch's): a weight that is one is reordered on every call.
TEST(NnConvWeightCache, InferenceModeKeepsNormalWeightsAndNeverInferenceTensors) {
  const Tensor x = randn({1, 32, 10, 10});
  Tensor w = randn({16, 32, 3, 3});
  InferenceMode inference;
  Tensor before, after;
  EXPECT_EQ(reorders([&] { before = conv2d(x, w, {}, 1, 1); }), 1u);
  EXPECT_EQ(reorders([&] { EXPECT_TRUE(same(conv2d(x, w, {}, 1, 1), before)); }), 0u);
  w.add_(1);
  EXPECT_EQ(reorders([&] { after = conv2d(x, w, {}, 1, 1); }), 1u);
  EXPECT_TRUE(same(after, conv2d(x, w.clone(), {}, 1, 1)));
  EXPECT_FALSE(same(after, before));

  Tensor wi = randn({16, 32, 3, 3});
  ASSERT_TRUE(wi.is_inference());
  EXPECT_EQ(reorders([&] { before = conv2d(x, wi, {}, 1, 1); }), 1u);
  EXPECT_EQ(reorders([&] { EXPECT_TRUE(same(conv2d(x, wi, {}, 1, 1), before)); }), 1u);
  wi.add_(1);
  EXPECT_EQ(reorders([&] { after = conv2d(x, wi, {}, 1, 1); }), 1u);
  EXPECT_TRUE(same(after, conv2d(x, wi.clone(), {}, 1, 1)));
  EXPECT_FALSE(same(after, before));
}

// Memory wrapped by from_blob can change without Ember seeing it: its reorders are never kept.
TEST(NnConvWeightCache, FromBlobWeightsAreReorderedOnEveryCall) {
  const Tensor x = randn({1, 32, 10, 10});
  std::vector<float> blob = values(randn({16, 32, 3, 3}));
  const Tensor w = from_blob(blob.data(), {16, 32, 3, 3});
  Tensor before;
  EXPECT_EQ(reorders([&] { before = conv2d(x, w, {}, 1, 1); }), 1u);
  for (float& v : blob) v = -v;
  Tensor after;
  EXPECT_EQ(reorders([&] { after = conv2d(x, w, {}, 1, 1); }), 1u);
  EXPECT_TRUE(same(after, conv2d(x, w.clone(), {}, 1, 1)));
  EXPECT_TRUE(same(after, before.neg()));
}

// Plans are per thread: another thread reorders into its own, and sees writes made elsewhere.
TEST(NnConvWeightCache, PlansArePerThreadAndSeeWritesFromOtherThreads) {
  const Tensor x = randn({1, 32, 10, 10});
  Tensor w = randn({16, 32, 3, 3});
  const Tensor before = conv2d(x, w, {}, 1, 1);
  std::thread([&] {
    EXPECT_EQ(reorders([&] { EXPECT_TRUE(same(conv2d(x, w, {}, 1, 1), before)); }), 1u);
    w.mul_(2);
  }).join();
  Tensor after;
  EXPECT_EQ(reorders([&] { after = conv2d(x, w, {}, 1, 1); }), 1u);
  EXPECT_TRUE(same(after, conv2d(x, w.clone(), {}, 1, 1)));
  EXPECT_FALSE(same(after, before));
}

// Training: forward, backward (the input's gradient is a transposed convolution of the same
// weight) and an optimizer step; every step's results are those of float64 copies, which take
// the fallback and so no plan.
TEST(NnConvWeightCache, TrainingStepsSeeEachUpdate) {
  const Tensor x = randn({2, 32, 10, 10}).requires_grad_(), w = randn({16, 32, 3, 3}).requires_grad_();
  optim::SGD opt({w}, optim::SGDOptions(0.1));
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE(step);
    opt.zero_grad();
    x.mutable_grad() = Tensor();
    const Tensor y = conv2d(x, w, {}, 1, 1);
    y.sum().backward();
    const Tensor x64 = x.detach().to(kDouble).requires_grad_(), w64 = w.detach().to(kDouble).requires_grad_();
    const Tensor y64 = conv2d(x64, w64, {}, 1, 1);
    y64.sum().backward();
    EXPECT_TRUE(close(y, y64, 1e-4f));
    EXPECT_TRUE(close(x.grad(), x64.grad(), 1e-4f));
    EXPECT_TRUE(close(w.grad(), w64.grad(), 1e-4f));
    opt.step();
  }
}

TEST(NnConv, BadArgumentsRaisePyTorchErrors) {
  Tensor x = randn({8, 4, 56, 56}), w = randn({64, 3, 3, 3});
  expect_error([&] { conv2d(x, w); },
               "Given groups=1, weight of size [64, 3, 3, 3], expected input[8, 4, 56, 56] to have 3 channels, but got "
               "4 channels instead");
  Tensor small = randn({1, 3, 2, 2});
  expect_error([&] { conv2d(small, w); },
               "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be greater "
               "than actual input size");
  Tensor xi = randn({1, 3, 8, 8});
  expect_error([&] { conv2d(xi, w, {}, 0); }, "non-positive stride is not supported");
  expect_error([&] { conv2d(xi, w, {}, 1, -1); }, "negative padding is not supported");
  expect_error([&] { conv2d(xi, w, {}, 1, 0, 0); }, "dilation should be greater than zero");
  expect_error([&] { conv2d(xi, w, {}, 1, 0, 1, 0); }, "non-positive groups is not supported");
  expect_error([&] { conv2d(randn({1, 6, 8, 8}), randn({5, 3, 3, 3}), {}, 1, 0, 1, 2); },
               "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size [5, 3, 3, 3] "
               "instead");
  expect_error([&] { conv2d(xi, w.to(kDouble)); }, "Input type (Float) and weight type (Double) should be the same");
  expect_error([&] { conv2d(xi, w, randn({3})); },
               "Given weight of size [64, 3, 3, 3], expected bias to be 1-dimensional with 64 elements, but got bias of "
               "size [3] instead");
  expect_error([&] { conv2d(randn({3, 8}), w); },
               "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [3, 8]");
  expect_error([&] { conv2d(xi, w, {}, 2, "same"); }, "padding='same' is not supported for strided convolutions");
  expect_error([&] { conv2d(xi, w, {}, 1, "full"); }, "Invalid padding string: 'full'");
  expect_error([&] { conv2d(xi, w, {}, {1, 1, 1}); }, "expected stride to be a single integer value or a list of 2");
  expect_error([&] { conv2d(xi.to(kLong), w.to(kLong)); }, "not implemented for 'Long'");
  expect_error([&] { conv_transpose2d(randn({1, 5, 4, 4}), randn({4, 2, 3, 3})); },
               "Given transposed=1, weight of size [4, 2, 3, 3], expected input[1, 5, 4, 4] to have 4 channels, but got "
               "5 channels instead");
  expect_error([&] { conv_transpose2d(randn({1, 4, 4, 4}), randn({4, 2, 3, 3}), {}, 2, 0, 2); },
               "output padding must be smaller than either stride or dilation");
  expect_error([&] { conv_transpose2d(randn({1, 4, 1, 1}), randn({4, 2, 1, 1}), {}, 1, 1); },
               "Output size is too small");
}

// ---- pooling ---------------------------------------------------------------------------------

TEST(NnPool, MaxPoolValuesAndFlatIndices) {
  Tensor x = tensor({{{{1., 5., 2., 0.}, {3., 4., 8., 7.}, {9., 0., 1., 2.}, {6., 6., 3., 4.}}}});
  for (ScalarType dt : kFloatTypes) {
    auto [v, i] = max_pool2d_with_indices(x.to(dt), 2);
    EXPECT_EQ(values(v), std::vector<float>({5, 8, 9, 4})) << dt;
    EXPECT_EQ(longs(i), std::vector<int64_t>({1, 6, 8, 15})) << dt;
  }
  // padding is never the maximum; ceil_mode adds a last window that starts inside the input
  auto [v, i] = max_pool2d_with_indices(x.mul(-1), 3, 2, 1, 1, true);
  EXPECT_EQ(v.sizes(), IntArrayRef({1, 1, 3, 3}));
  EXPECT_EQ(values(v)[0], -1.0f);
  EXPECT_EQ(longs(i)[0], 0);
  // NaN propagates
  Tensor n = x.clone();
  n.data_ptr<float>()[2] = NAN;
  EXPECT_TRUE(std::isnan(values(max_pool2d(n, 2))[1]));
  // channels_last stays channels_last, indices too
  auto [vc, ic] = max_pool2d_with_indices(randn({2, 3, 6, 6}).contiguous(MemoryFormat::ChannelsLast), 2);
  EXPECT_TRUE(vc.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_TRUE(ic.is_contiguous(MemoryFormat::ChannelsLast));
}

// Without indices, planes whose output rows are shorter than a vector take the separable
// kernel (rows of the window first, then its columns): the values must be those of the kernel
// that also finds the indices, NaN and -inf included, over kernels, strides, paddings,
// dilations, ceil mode and every float dtype.
TEST(NnPool, MaxPoolWithoutIndicesMatchesTheIndexedKernel) {
  Generator g(7);
  int checked = 0;
  for (ScalarType dt : kFloatTypes) {
    for (int64_t hw : {1, 3, 8, 13, 40}) {
      for (int64_t k : {1, 2, 3, 5}) {
        for (int64_t stride : {1, 2, 3}) {
          for (int64_t dil : {1, 2}) {
            for (int64_t pad = 0; pad <= k / 2; ++pad) {
              for (bool ceil : {false, true}) {
                if ((k - 1) * dil + 1 > hw + 2 * pad) continue;  // no output
                Tensor x = randn({2, 3, hw, hw + 1}, &g);
                float* p = x.data_ptr<float>();
                p[5 % x.numel()] = NAN;
                p[17 % x.numel()] = -INFINITY;
                x = x.to(dt);
                const Tensor plain = max_pool2d(x, k, stride, pad, dil, ceil);
                const Tensor indexed = std::get<0>(max_pool2d_with_indices(x, k, stride, pad, dil, ceil));
                ASSERT_EQ(plain.sizes(), indexed.sizes());
                const auto a = values(plain), b = values(indexed);
                for (size_t i = 0; i < a.size(); ++i) {
                  ASSERT_TRUE(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))
                      << dt << " hw=" << hw << " k=" << k << " stride=" << stride << " dilation=" << dil
                      << " pad=" << pad << " ceil=" << ceil << " at " << i << ": " << a[i] << " vs " << b[i];
                }
                ++checked;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 500);
}

TEST(NnPool, AvgPoolDivisors) {
  Tensor x = ones({1, 1, 3, 3});
  // corner window of a padded 2x2 kernel: one real element out of four
  EXPECT_EQ(values(avg_pool2d(x, 2, 2, 1, false, true))[0], 0.25f);
  EXPECT_EQ(values(avg_pool2d(x, 2, 2, 1, false, false))[0], 1.0f);
  EXPECT_EQ(values(avg_pool2d(x, 2, 2, 1, false, true, 1))[0], 1.0f);
  EXPECT_EQ(values(avg_pool1d(arange(6, TensorOptions().dtype(kFloat)).view({1, 1, 6}), 3)),
            std::vector<float>({1, 4}));
  // adaptive windows overlap when the sizes do not divide: [0, 2) and [1, 3)
  EXPECT_EQ(values(adaptive_avg_pool1d(tensor({{{1.f, 2.f, 4.f}}}), 2)), std::vector<float>({1.5f, 3.0f}));
  auto [m, mi] = ember::adaptive_max_pool2d(tensor({{{1.f, 7.f, 4.f}}}), {1, 2});
  EXPECT_EQ(values(m), std::vector<float>({7, 7}));
  EXPECT_EQ(longs(mi), std::vector<int64_t>({1, 1}));
}

TEST(NnPool, BadArgumentsRaisePyTorchErrors) {
  Tensor x = randn({1, 3, 4, 4});
  expect_error([&] { max_pool2d(x, 0); }, "kernel size should be greater than zero, but got kH: 0 kW: 0");
  expect_error([&] { max_pool2d(x, 2, 0); }, "stride should be greater than zero, but got dH: 0 dW: 0");
  expect_error([&] { max_pool2d(x, 2, 2, 0, 0); }, "dilation should be greater than zero");
  expect_error([&] { max_pool2d(x, 2, 2, 2); },
               "pad should be smaller than or equal to half of kernel size, but got padW = 2, padH = 2, kW = 2, kH = 2");
  expect_error([&] { max_pool2d(randn({1, 3, 2, 2}), 3); },
               "Given input size: (3x2x2). Calculated output size: (3x0x0). Output size is too small");
  expect_error([&] { max_pool2d(randn({3, 4}), 2); },
               "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:[3, 4]");
  expect_error([&] { max_pool2d(randn({1, 0, 4, 4}), 2); }, "optional 0 dim batch size");
  expect_error([&] { avg_pool2d(x, 2, 2, 0, false, true, 0); }, "divisor must be not zero");
  expect_error([&] { max_pool2d(x, {2, 2, 2}); }, "kernel_size must either be a single int, or a tuple of 2 ints");
  expect_error([&] { adaptive_avg_pool2d(x, {2}); }, "output_size must be 2");
  expect_error([&] { adaptive_avg_pool2d(randn({1, 3, 0, 4}), {2, 2}); },
               "Expected input to have non-zero size for non-batch dimensions, but input has sizes [1, 3, 0, 4] with "
               "dimension 2 being empty");
  expect_error([&] { max_pool2d(x.to(kLong), 2); }, "not implemented for 'Long'");
  // an empty batch is fine
  EXPECT_EQ(max_pool2d(randn({0, 3, 4, 4}), 2).sizes(), IntArrayRef({0, 3, 2, 2}));
}

// ---- normalization ---------------------------------------------------------------------------

TEST(NnNorm, BatchNormTrainingUpdatesRunningStats) {
  // channel 0 holds 1, 3 (mean 2, biased var 1, unbiased 2); channel 1 holds 2, 6 (mean 4, var 4, unbiased 8)
  Tensor x = tensor({{1.f, 2.f}, {3.f, 6.f}});
  for (ScalarType dt : kFloatTypes) {
    Tensor rm = zeros({2}, TensorOptions().dtype(dt)), rv = ones({2}, TensorOptions().dtype(dt));
    auto [y, mean, invstd] = native_batch_norm(x.to(dt), {}, {}, rm, rv, true, 0.5, 0.0);
    EXPECT_EQ(values(y), std::vector<float>({-1, -1, 1, 1})) << dt;
    EXPECT_EQ(values(mean), std::vector<float>({2, 4})) << dt;
    EXPECT_EQ(values(invstd), std::vector<float>({1, 0.5})) << dt;
    EXPECT_EQ(values(rm), std::vector<float>({1, 2})) << dt;
    EXPECT_EQ(values(rv), std::vector<float>({1.5, 4.5})) << dt;
    // eval: the running statistics, weight and bias
    Tensor ye = batch_norm(x.to(dt), full({2}, 2, TensorOptions().dtype(dt)), ones({2}, TensorOptions().dtype(dt)),
                           rm, rv, false, 0.5, 0.0);
    EXPECT_NEAR(values(ye)[0], (1 - 1) / std::sqrt(1.5) * 2 + 1, 1e-2) << dt;
    EXPECT_NEAR(values(ye)[3], (6 - 2) / std::sqrt(4.5) * 2 + 1, 2e-2) << dt;
  }
  Tensor xcl = randn({2, 3, 4, 5}).contiguous(MemoryFormat::ChannelsLast);
  EXPECT_TRUE(batch_norm(xcl, {}, {}, {}, {}, true, 0.1, 1e-5).is_contiguous(MemoryFormat::ChannelsLast));
}

TEST(NnNorm, LayerGroupRmsNormValues) {
  Tensor x = tensor({{1.f, 2.f, 3.f, 6.f}});
  // mean 3, biased var 3.5
  std::vector<float> v = values(layer_norm(x, {4}, {}, {}, 0.0));
  EXPECT_NEAR(v[0], -2 / std::sqrt(3.5), 1e-6);
  EXPECT_NEAR(v[3], 3 / std::sqrt(3.5), 1e-6);
  auto [y, mean, rstd] = native_layer_norm(x.view({1, 2, 2}), {2}, {}, {}, 0.0);
  EXPECT_EQ(mean.sizes(), IntArrayRef({1, 2, 1}));
  EXPECT_EQ(values(mean), std::vector<float>({1.5, 4.5}));
  EXPECT_EQ(values(rstd), std::vector<float>({2, 2.0f / 3}));
  // rms: mean of squares 12.5, weight 2
  std::vector<float> r = values(rms_norm(x, {4}, full({4}, 2.0)));
  EXPECT_NEAR(r[3], 6 / std::sqrt(12.5) * 2, 1e-5);
  // group norm with one group per channel is instance norm
  Tensor g = randn({2, 4, 3, 3});
  EXPECT_TRUE(close(group_norm(g, 4), instance_norm(g, {}, {}, {}, {}, true, 0.1, 1e-5), 1e-5f));
  auto [gy, gmean, grstd] = native_group_norm(g, {}, {}, 2, 1e-5);
  EXPECT_EQ(gmean.sizes(), IntArrayRef({2, 2}));
  EXPECT_TRUE(group_norm(g.contiguous(MemoryFormat::ChannelsLast), 2).is_contiguous(MemoryFormat::ChannelsLast));
}

TEST(NnNorm, BadArgumentsRaisePyTorchErrors) {
  Tensor x = randn({4, 3, 5});
  expect_error([&] { batch_norm(x, {}, {}, zeros({4}), ones({3}), true, 0.1, 1e-5); },
               "running_mean should contain 3 elements not 4");
  expect_error([&] { batch_norm(randn({1, 3}), {}, {}, {}, {}, true, 0.1, 1e-5); },
               "Expected more than 1 value per channel when training, got input size [1, 3]");
  expect_error([&] { batch_norm(x, {}, {}, {}, {}, false, 0.1, 1e-5); }, "must be defined in evaluation mode");
  expect_error([&] { layer_norm(x, {4}); },
               "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[4, 3, 5]");
  expect_error([&] { layer_norm(x, {5}, ones({4})); },
               "Expected weight to be of same shape as normalized_shape, but got weight of shape [4] and "
               "normalized_shape = [5]");
  expect_error([&] { layer_norm(x, {}); }, "Expected normalized_shape to be at least 1-dimensional");
  expect_error([&] { group_norm(x, 2); },
               "Expected number of channels in input to be divisible by num_groups, but got input of shape [4, 3, 5] "
               "and num_groups=2");
  expect_error([&] { group_norm(x, 3, ones({4})); },
               "Expected weight to be a vector of size equal to the number of channels in input");
  expect_error([&] { instance_norm(randn({2, 3, 1}), {}, {}, {}, {}, true, 0.1, 1e-5); },
               "Expected more than 1 spatial element when training, got input size [2, 3, 1]");
  expect_error([&] { rms_norm(x, {3}); }, "expected input with shape [*, 3]");
  expect_error([&] { layer_norm(x.to(kLong), {5}); }, "not implemented for 'Long'");
}

// ---- softmax -------------------------------------------------------------------------------

// log_softmax is (x - max) - log(sum), in PyTorch's order: with a large maximum, max + log(sum)
// first rounds log(sum) away (by up to half of 1000's float spacing, 3e-5). Rows along the last
// dim (4 rows at a time and alone), columns a vector at a time, and columns one at a time, each
// against the float64 value. Columns add their exponentials in dim order onto the maximum's 1, as
// libtorch's do, and are as far from it as libtorch's (1.6e-7; the rows' lane sums 4e-8).
TEST(NnSoftmax, LogSoftmaxKeepsTheLogSumUnderALargeMaximum) {
  for (double c : {0.0, 25.3, 1000.7}) {
    std::vector<float> line(37);
    for (size_t k = 0; k < line.size(); ++k) line[k] = static_cast<float>(k == 3 ? c : c - 14.0 - 0.1 * double(k));
    double sum = 0;
    for (float v : line) sum += std::exp(double(v) - double(line[3]));
    const double want = -std::log(sum);  // at the maximum
    const Tensor row = from_blob(line.data(), {1, 37}, kFloat).clone();
    for (int64_t cols : {1, 5, 16}) {
      const Tensor rows = row.expand({cols, 37}).contiguous();
      EXPECT_NEAR(log_softmax(rows, 1)[cols - 1][3].item<double>(), want, 1e-7) << c << " rows " << cols;
      EXPECT_NEAR(log_softmax(rows.t().contiguous(), 0)[3][cols - 1].item<double>(), want, 2e-7)
          << c << " columns " << cols;
    }
  }
}

TEST(NnSoftmax, RowsSumToOneAndLogMatches) {
  Tensor x = randn({5, 37}).mul(10);
  for (int64_t dim : {0, 1, -1}) {
    Tensor s = softmax(x, dim), l = log_softmax(x, dim);
    std::vector<float> ones_v(static_cast<size_t>(x.size(dim == 0 ? 1 : 0)), 0.f);
    std::vector<float> sv = values(s);
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 37; ++j) ones_v[dim == 0 ? j : i] += sv[i * 37 + j];
    for (float o : ones_v) EXPECT_NEAR(o, 1.0f, 1e-5);
    std::vector<float> lv = values(l);
    for (size_t i = 0; i < sv.size(); ++i) EXPECT_NEAR(std::exp(lv[i]), sv[i], 1e-6);
  }
  EXPECT_EQ(softmax(randn({2, 3}), 1, kDouble).dtype(), kDouble);
  EXPECT_EQ(values(softmax(tensor(3.0f), 0)), std::vector<float>({1}));
  expect_error([&] { softmax(x, 2); }, "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  expect_error([&] { softmax(tensor({1, 2}), 0); }, "\"softmax\" not implemented for 'Long'");
}

// Along a dim that is not innermost, the threads share the columns as well as the slices (one
// slice here: dim 0): pieces of whole vectors and a rest, forward and backward, equal to the same
// softmax along the last dim of the transposed copy, which takes the row kernel.
TEST(NnSoftmax, OuterDimInColumnPieces) {
  for (ScalarType dt : {kFloat, kBFloat16}) {
    const Tensor x = randn({300, 257}).mul(4).to(dt);
    const Tensor xt = x.t().contiguous();
    for (bool log : {false, true}) {
      const Tensor a = x.detach().requires_grad_(true), b = xt.detach().requires_grad_(true);
      const Tensor ya = log ? log_softmax(a, 0) : softmax(a, 0), yb = log ? log_softmax(b, 1) : softmax(b, 1);
      // (the two kernels round log-sum-exp apart: float32 log_softmax differs by ~1e-6 absolute)
      const double tol = dt == kFloat ? 1e-5 : 1e-2;
      EXPECT_TRUE(allclose(ya.to(kFloat), yb.t().to(kFloat), tol, 1e-5)) << dt << " log " << log;
      const Tensor g = randn({300, 257}).to(dt);
      ya.backward(g);
      yb.backward(g.t().contiguous());
      EXPECT_TRUE(allclose(a.grad().to(kFloat), b.grad().t().to(kFloat), tol, 1e-5)) << dt << " log " << log;
    }
  }
}

// Short rows run four at a time side by side: each row's result is the one it gets alone, bit
// for bit, for rows of whole and partial vectors, a count of rows that leaves a rest, and rows
// with NaN or an infinity (the scalar path) among the four.
TEST(NnSoftmax, ShortRowsInFoursEqualEachRowAlone) {
  for (ScalarType dt : {kFloat, kDouble, kBFloat16}) {
    for (int64_t n : {1, 7, 16, 32, 37, 64}) {
      Tensor x = randn({11, n}).mul(5);
      x[6][n / 2] = NAN;  // rows 0-3 take the vector path together, 4-7 the scalar one
      x[5][0] = INFINITY;
      x[9][n - 1] = -INFINITY;
      x = x.to(dt);
      for (bool log : {false, true}) {
        const Tensor all = log ? log_softmax(x, 1) : softmax(x, 1);
        for (int64_t r = 0; r < 11; ++r) {
          const Tensor alone = log ? log_softmax(x[r].clone(), 0) : softmax(x[r].clone(), 0);
          EXPECT_TRUE(all[r].equal(alone) ||
                      (all[r].isnan().equal(alone.isnan()) && all[r].nan_to_num(0).equal(alone.nan_to_num(0))))
              << dt << " n " << n << " row " << r << " log " << log;
        }
      }
    }
  }
}

// ---- embedding, dropout, interpolate, pad --------------------------------------------------

TEST(NnMisc, EmbeddingGathersRows) {
  Tensor w = arange(12, TensorOptions().dtype(kFloat)).view({4, 3});
  Tensor y = embedding(w, tensor({{3, 0}}), 0);
  EXPECT_EQ(y.sizes(), IntArrayRef({1, 2, 3}));
  EXPECT_EQ(values(y), std::vector<float>({9, 10, 11, 0, 1, 2}));
  expect_error([&] { embedding(w, tensor({4})); }, "index out of range in self");
  expect_error([&] { embedding(w, tensor({-1})); }, "index out of range in self");
  expect_error([&] { embedding(w, tensor({1.0})); }, "Expected tensor for argument #1 'indices' to have one of the");
  expect_error([&] { embedding(arange(3), tensor({1})); }, "'weight' must be 2-D");
}

TEST(NnMisc, DropoutStatisticsAndIdentities) {
  Tensor x = ones({200000});
  manual_seed(7);
  Tensor y = dropout(x, 0.3, true);
  std::vector<float> v = values(y);
  int64_t zeros_n = 0;
  for (float e : v) {
    if (e == 0) {
      ++zeros_n;
    } else {
      EXPECT_FLOAT_EQ(e, 1 / 0.7f);
    }
  }
  EXPECT_NEAR(static_cast<double>(zeros_n) / v.size(), 0.3, 0.01);
  manual_seed(7);
  EXPECT_TRUE(same(dropout(x, 0.3, true), y));  // the global generator seeds it
  EXPECT_TRUE(dropout(x, 0.3, false).is_same(x));
  EXPECT_TRUE(dropout(x, 0.0, true).is_same(x));
  EXPECT_EQ(values(dropout(x, 1.0, true)), std::vector<float>(x.numel(), 0.0f));
  // a dropped NaN stays NaN, as x * 0 in PyTorch
  EXPECT_TRUE(std::isnan(values(dropout(full({4}, NAN), 1.0, true))[0]));
  // feature dropout zeroes whole (sample, channel) planes
  Tensor f = ember::dropout2d(ones({8, 16, 3, 3}), 0.5, true);
  std::vector<float> fv = values(f);
  for (int64_t p = 0; p < 8 * 16; ++p)
    for (int64_t i = 1; i < 9; ++i) EXPECT_EQ(fv[p * 9 + i], fv[p * 9]);
  expect_error([&] { dropout(x, 1.5, true); }, "dropout probability has to be between 0 and 1, but got 1.5");
  expect_error([&] { feature_dropout(x, 0.5, true); }, "Feature dropout requires at least 2 dimensions in the input");
}

TEST(NnMisc, InterpolateAndPadValues) {
  Tensor x = tensor({{{{1.f, 2.f}, {3.f, 4.f}}}});
  EXPECT_EQ(values(ember::interpolate(x, std::vector<int64_t>{4, 4})),
            std::vector<float>({1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  std::vector<float> b = values(ember::interpolate(x, std::vector<int64_t>{3, 3}, std::nullopt, "bilinear", true));
  EXPECT_EQ(b, std::vector<float>({1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}));
  EXPECT_TRUE(ember::interpolate(randn({1, 3, 4, 4}).contiguous(MemoryFormat::ChannelsLast), std::nullopt,
                             std::vector<double>{2.0})
                  .is_contiguous(MemoryFormat::ChannelsLast));
  expect_error([&] { ember::interpolate(x, std::vector<int64_t>{4, 4}, std::vector<double>{2.0}); },
               "only one of size or scale_factor should be defined");
  expect_error([&] { ember::interpolate(x); }, "either size or scale_factor should be defined");
  expect_error([&] { ember::interpolate(randn({1, 2, 5}), std::vector<int64_t>{4}, std::nullopt, "bilinear"); },
               "Got 3D input, but bilinear mode needs 4D input");
  expect_error([&] { ember::interpolate(x, std::vector<int64_t>{4, 4}, std::nullopt, "nearest", true); },
               "align_corners option can only be set with the interpolating modes");

  Tensor r = arange(1, 4, TensorOptions().dtype(kFloat)).view({1, 1, 3});
  EXPECT_EQ(values(ember::pad(r, {2, 1}, "reflect")), std::vector<float>({3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(values(ember::pad(r, {2, 1}, "replicate")), std::vector<float>({1, 1, 1, 2, 3, 3}));
  EXPECT_EQ(values(ember::pad(r, {1, -1}, "constant", 9.0)), std::vector<float>({9, 1, 2}));
  EXPECT_EQ(values(constant_pad_nd(r, {0, 0, 1, 0})), std::vector<float>({0, 0, 0, 1, 2, 3}));
  expect_error([&] { ember::pad(r, {1}); }, "Length of pad must be even");
  expect_error([&] { ember::pad(r, {3, 0}, "reflect"); }, "Padding size should be less than the corresponding input dimension");
  expect_error([&] { ember::pad(r, {-2, -2}); }, "resulted in a negative output size");
  expect_error([&] { ember::pad(r, {1, 1}, "reflect", 1.0); }, "doesn't take in value argument");
  expect_error([&] { ember::pad(r, {1, 1}, "wrap"); }, "Unrecognised padding mode wrap");
  // circular: wraps around (a negative pad crops first), on batched inputs only, at most once
  const Tensor c = arange(4, kFloat).view({1, 1, 4});
  EXPECT_EQ(values(ember::pad(c, {2, 1}, "circular")), std::vector<float>({2, 3, 0, 1, 2, 3, 0}));
  EXPECT_EQ(values(ember::pad(c, {-1, 2}, "circular")), std::vector<float>({1, 2, 3, 1, 2}));
  expect_error([&] { ember::pad(c, {5, 0}, "circular"); }, "wrapping around more than once");
  expect_error([&] { ember::pad(c, {-2, 3}, "circular"); }, "wrapping around more than once");
  expect_error([&] { ember::pad(arange(4, kFloat).view({1, 4}), {1, 1}, "circular"); }, "Expected padding of length 0");
}

// libtorch's option and method forms give the positional forms' results.
TEST(NnOps, PadFuncOptionsAndSoftmaxMethods) {
  const Tensor x = randn({2, 3, 5});
  EXPECT_TRUE(F::pad(x, F::PadFuncOptions({1, 2})).equal(ember::pad(x, {1, 2})));
  EXPECT_TRUE(F::pad(x, F::PadFuncOptions({1, 2}).value(3)).equal(ember::pad(x, {1, 2}, "constant", 3.0)));
  EXPECT_TRUE(F::pad(x, F::PadFuncOptions({2, 1}).mode(kReflect)).equal(ember::pad(x, {2, 1}, "reflect")));
  EXPECT_TRUE(F::pad(x, F::PadFuncOptions({2, 1, 1, 0}).mode(kReplicate)).equal(ember::pad(x, {2, 1, 1, 0}, "replicate")));
  EXPECT_TRUE(x.softmax(1).equal(ember::softmax(x, 1)));
  EXPECT_TRUE(x.log_softmax(-1, kDouble).equal(ember::log_softmax(x, -1, kDouble)));
}

}  // namespace EMBER_UNITY_FILE
