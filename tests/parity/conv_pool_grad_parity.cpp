// Gradients of convolution and pooling against libtorch's .grad: the same random inputs and output
// gradient, float32, bfloat16 and float64, contiguous and channels_last, with stride, padding,
// dilation, groups and transposed convolutions. Layouts of the gradients are compared too.
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "parity/parity.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using parity::Close;
using parity::random;
using parity::Tol;
namespace F = ember::nn::functional;

namespace {

const ember::ScalarType kGradTypes[] = {ember::kFloat, ember::kBFloat16, ember::kDouble};

using EFn = std::function<ember::Tensor(const std::vector<ember::Tensor>&)>;
using TFn = std::function<torch::Tensor(const std::vector<torch::Tensor>&)>;

// Tolerance for gradients that sum `terms` products of O(1) values (as the forward parity tests).
Tol sum_tol(ember::ScalarType dt, double terms) {
  switch (dt) {
    case ember::kFloat: return {1e-4, 2e-5 * terms};
    case ember::kDouble: return {1e-9, 1e-9 * terms};
    default: return {1.6e-2, 1.6e-2 * std::sqrt(terms)};
  }
}

bool channels_last(const ember::Tensor& t) {
  return t.dim() == 4 && t.is_contiguous(ember::MemoryFormat::ChannelsLast) && !t.is_contiguous();
}
bool channels_last(const torch::Tensor& t) {
  return t.dim() == 4 && t.is_contiguous(torch::MemoryFormat::ChannelsLast) && !t.is_contiguous();
}

// Runs both functions on copies of `inputs` (each requiring grad unless undefined), backpropagates
// the same random output gradient and compares the outputs and every input's gradient. With
// `torch_in_float32`, libtorch computes in float32 on the same values and its results are rounded
// to the inputs' dtype (where libtorch has no working kernel for it).
void expect_grads(const std::string& what, const std::vector<ember::Tensor>& inputs, const EFn& ef, const TFn& tf,
                  Tol tol, uint64_t seed, bool torch_in_float32 = false) {
  SCOPED_TRACE(what);
  std::vector<ember::Tensor> e;
  std::vector<torch::Tensor> t;
  for (const ember::Tensor& x : inputs) {
    e.push_back(x.defined() ? x.detach().requires_grad_() : x);
    torch::Tensor tx = x.defined() ? parity::to_torch(x) : torch::Tensor();
    if (tx.defined() && torch_in_float32) tx = tx.to(torch::kFloat);
    t.push_back(tx.defined() ? tx.requires_grad_() : tx);
  }
  const ember::Tensor ey = ef(e);
  const torch::Tensor ty = tf(t);
  const torch::ScalarType rounded = parity::to_torch(ey.dtype());
  ASSERT_TRUE(Close(ey, ty.to(rounded), tol));
  const ember::Tensor g = random(ey.sizes(), ey.dtype(), seed).contiguous(ey.suggest_memory_format());
  ey.backward(g);
  ty.backward(parity::to_torch(g).to(ty.scalar_type()));
  for (size_t i = 0; i < e.size(); ++i) {
    if (!e[i].defined()) continue;
    ASSERT_TRUE(e[i].grad().defined()) << "input " << i;
    EXPECT_TRUE(Close(e[i].grad(), t[i].grad().to(rounded), tol)) << "input " << i;
    EXPECT_EQ(channels_last(e[i].grad()), channels_last(t[i].grad())) << "layout of input " << i << "'s gradient";
  }
}

std::string shape(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << ember::IntArrayRef(v);
  return os.str();
}

std::string name_of(ember::ScalarType dt, bool cl) {
  std::ostringstream os;
  os << dt << (cl ? " channels_last" : " contiguous");
  return os.str();
}

// ---- convolution -------------------------------------------------------------------------------

TEST(ConvGradParity, Conv2d) {
  struct Case {
    std::vector<int64_t> x, w;
    int64_t stride, padding, dilation, groups;
    bool bias;
  };
  const Case cases[] = {
      {{3, 8, 9, 10}, {8, 8, 3, 3}, 1, 1, 1, 1, true},  {{2, 8, 9, 10}, {6, 8, 3, 3}, 2, 0, 1, 1, false},
      {{2, 4, 9, 8}, {4, 4, 3, 2}, 1, 2, 2, 1, true},   {{2, 8, 7, 7}, {8, 4, 3, 3}, 2, 1, 1, 2, true},
      {{2, 8, 6, 6}, {8, 1, 3, 3}, 1, 1, 1, 8, true},   {{1, 3, 5, 5}, {2, 3, 5, 5}, 1, 0, 1, 1, true},
      // the Fashion-MNIST network's shapes (batch 2 here)
      {{2, 1, 28, 28}, {32, 1, 5, 5}, 1, 0, 1, 1, true}, {{2, 32, 12, 12}, {64, 32, 3, 3}, 1, 1, 1, 1, true},
      // float32 runs oneDNN's Winograd kernel from 512 output positions (batch x height x width) on
      {{4, 16, 16, 16}, {16, 16, 3, 3}, 1, 1, 1, 1, true}, {{2, 32, 18, 18}, {16, 32, 3, 3}, 1, 0, 1, 1, false},
  };
  uint64_t seed = 1;
  for (ember::ScalarType dt : kGradTypes) {
    for (const Case& c : cases) {
      for (bool cl : {false, true}) {
        ember::Tensor x = random(c.x, dt, seed++), w = random(c.w, dt, seed++);
        if (cl) x = x.contiguous(ember::MemoryFormat::ChannelsLast);
        const ember::Tensor b = c.bias ? random({c.w[0]}, dt, seed++) : ember::Tensor();
        const double terms = static_cast<double>(c.x[0] * c.x[2] * c.x[3]);
        expect_grads(
            name_of(dt, cl) + " x" + shape(c.x), {x, w, b},
            [&](const auto& v) { return ember::conv2d(v[0], v[1], v[2], c.stride, c.padding, c.dilation, c.groups); },
            [&](const auto& v) { return torch::conv2d(v[0], v[1], v[2], c.stride, c.padding, c.dilation, c.groups); },
            sum_tol(dt, terms), seed++, dt == ember::kBFloat16 && !parity::libtorch_bfloat16_on_onednn());
      }
    }
  }
}

TEST(ConvGradParity, Conv1d3dAndPaddingModes) {
  uint64_t seed = 100;
  for (ember::ScalarType dt : kGradTypes) {
    const ember::Tensor x1 = random({2, 4, 11}, dt, seed++), w1 = random({6, 2, 3}, dt, seed++);
    const ember::Tensor b1 = random({6}, dt, seed++);
    std::ostringstream os;
    os << dt;
    // libtorch's bfloat16 convolutions off oneDNN round as they accumulate: compare with its float32
    const bool widen = dt == ember::kBFloat16 && !parity::libtorch_bfloat16_on_onednn();
    expect_grads(
        os.str() + " conv1d", {x1, w1, b1}, [](const auto& v) { return ember::conv1d(v[0], v[1], v[2], 2, 1, 2, 2); },
        [](const auto& v) { return torch::conv1d(v[0], v[1], v[2], 2, 1, 2, 2); }, sum_tol(dt, 24), seed++, widen);
    const ember::Tensor w1s = random({3, 4, 4}, dt, seed++);
    expect_grads(
        os.str() + " conv1d same", {x1, w1s}, [](const auto& v) { return ember::conv1d(v[0], v[1], {}, 1, "same", 2); },
        [](const auto& v) { return torch::conv1d(v[0], v[1], {}, 1, "same", 2); }, sum_tol(dt, 24), seed++, widen);
    const ember::Tensor x3 = random({2, 4, 5, 6, 4}, dt, seed++), w3 = random({4, 2, 3, 2, 3}, dt, seed++);
    expect_grads(
        os.str() + " conv3d", {x3, w3, ember::Tensor()},
        [](const auto& v) { return ember::conv3d(v[0], v[1], {}, {1, 2, 1}, 1, 1, 2); },
        [](const auto& v) { return torch::conv3d(v[0], v[1], {}, {1, 2, 1}, 1, 1, 2); }, sum_tol(dt, 60), seed++, widen);
    const ember::Tensor xu = random({4, 7, 7}, dt, seed++), wu = random({3, 4, 3, 3}, dt, seed++);
    expect_grads(
        os.str() + " conv2d unbatched valid", {xu, wu}, [](const auto& v) { return ember::conv2d(v[0], v[1], {}, 1, "valid"); },
        [](const auto& v) { return torch::conv2d(v[0], v[1], {}, 1, "valid"); }, sum_tol(dt, 49), seed++, widen);
  }
}

TEST(ConvGradParity, ConvTranspose) {
  struct Case {
    std::vector<int64_t> x, w, stride, padding, output_padding, dilation;
    int64_t groups;
  };
  const Case cases[] = {
      {{2, 4, 5, 6}, {4, 3, 3, 3}, {2}, {1}, {1}, {1}, 1},
      {{1, 4, 5, 5}, {4, 2, 3, 2}, {1, 2}, {0}, {0, 1}, {2, 1}, 2},
      {{2, 6, 4, 4}, {6, 2, 2, 2}, {2}, {0}, {0}, {1}, 3},
      {{4, 16, 16, 16}, {16, 16, 3, 3}, {1}, {1}, {0}, {1}, 1},  // Winograd in float32, as in Conv2d
  };
  uint64_t seed = 200;
  for (ember::ScalarType dt : kGradTypes) {
    // libtorch 1.13's bfloat16 transposed convolution fails its own channel check
    const bool torch_bug = dt == ember::kBFloat16;
    for (const Case& c : cases) {
      for (bool cl : {false, true}) {
        ember::Tensor x = random(c.x, dt, seed++);
        if (cl) x = x.contiguous(ember::MemoryFormat::ChannelsLast);
        const ember::Tensor w = random(c.w, dt, seed++), b = random({c.w[1] * c.groups}, dt, seed++);
        expect_grads(
            name_of(dt, cl) + " conv_transpose2d x" + shape(c.x), {x, w, b},
            [&](const auto& v) {
              return ember::conv_transpose2d(v[0], v[1], v[2], c.stride, c.padding, c.output_padding, c.groups, c.dilation);
            },
            [&](const auto& v) {
              return torch::conv_transpose2d(v[0], v[1], v[2], c.stride, c.padding, c.output_padding, c.groups,
                                             c.dilation);
            },
            sum_tol(dt, 2.0 * 36), seed++, torch_bug);
      }
    }
    const ember::Tensor x = random({2, 4, 7}, dt, seed++), w = random({4, 3, 3}, dt, seed++);
    std::ostringstream os;
    os << dt << " conv_transpose1d";
    expect_grads(
        os.str(), {x, w}, [](const auto& v) { return ember::conv_transpose1d(v[0], v[1], {}, 3, 0, 2); },
        [](const auto& v) { return torch::conv_transpose1d(v[0], v[1], {}, 3, 0, 2); }, sum_tol(dt, 28), seed++,
        dt == ember::kBFloat16);
  }
}

// ---- pooling -----------------------------------------------------------------------------------

TEST(PoolGradParity, Pool2d) {
  namespace tF = torch::nn::functional;
  uint64_t seed = 300;
  for (ember::ScalarType dt : kGradTypes) {
    for (bool cl : {false, true}) {
      ember::Tensor x = random({2, 5, 9, 8}, dt, seed++);
      if (cl) x = x.contiguous(ember::MemoryFormat::ChannelsLast);
      const std::string n = name_of(dt, cl);
      const Tol exact = parity::default_tol(dt), avg = sum_tol(dt, 9);
      expect_grads(
          n + " max_pool2d 2", {x}, [](const auto& v) { return ember::max_pool2d(v[0], 2); },
          [](const auto& v) { return torch::max_pool2d(v[0], 2); }, exact, seed++);
      expect_grads(
          n + " max_pool2d padding dilation ceil", {x},
          [](const auto& v) { return ember::max_pool2d(v[0], {3, 2}, {2, 1}, {1, 1}, {1, 2}, true); },
          [](const auto& v) { return torch::max_pool2d(v[0], {3, 2}, {2, 1}, {1, 1}, {1, 2}, true); }, exact, seed++);
      expect_grads(
          n + " max_pool2d overlapping", {x}, [](const auto& v) { return ember::max_pool2d(v[0], 3, 1, 1); },
          [](const auto& v) { return torch::max_pool2d(v[0], 3, 1, 1); }, exact, seed++);
      for (bool ceil : {false, true})
        for (bool count_pad : {false, true})
          expect_grads(
              n + " avg_pool2d", {x}, [&](const auto& v) { return ember::avg_pool2d(v[0], 3, 2, 1, ceil, count_pad); },
              [&](const auto& v) { return torch::avg_pool2d(v[0], 3, 2, 1, ceil, count_pad); }, avg, seed++);
      expect_grads(
          n + " avg_pool2d divisor_override", {x},
          [](const auto& v) { return ember::avg_pool2d(v[0], 2, 1, 0, false, true, 3); },
          [](const auto& v) { return torch::avg_pool2d(v[0], 2, 1, 0, false, true, 3); }, avg, seed++);
      expect_grads(
          n + " adaptive_avg_pool2d", {x}, [](const auto& v) { return ember::adaptive_avg_pool2d(v[0], {4, 3}); },
          [](const auto& v) { return torch::adaptive_avg_pool2d(v[0], {4, 3}); }, avg, seed++);
      expect_grads(
          n + " adaptive_max_pool2d", {x}, [](const auto& v) { return std::get<0>(ember::adaptive_max_pool2d(v[0], {4, 3})); },
          [](const auto& v) { return std::get<0>(torch::adaptive_max_pool2d(v[0], {4, 3})); }, exact, seed++);
    }
    // the network's pooling: [batch, 32, 24, 24] -> 2x2
    const ember::Tensor big = random({4, 32, 24, 24}, dt, seed++);
    expect_grads(
        name_of(dt, false) + " max_pool2d network", {big}, [](const auto& v) { return ember::max_pool2d(v[0], 2); },
        [](const auto& v) { return torch::max_pool2d(v[0], 2); }, parity::default_tol(dt), seed++);
  }
}

// Max pooling of rows wider than several vectors (the kernel runs a vector of output columns at
// a time, the clipped edge windows one by one): values, indices (ties and NaNs pick PyTorch's) and
// gradients, for strides 1, 2 and 3, padding, dilation and ceil mode.
TEST(PoolGradParity, MaxPool2dWideRows) {
  struct Config {
    std::vector<int64_t> k, s, p, d;
    bool ceil;
  };
  const Config configs[] = {{{3, 3}, {2, 2}, {1, 1}, {1, 1}, false}, {{3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
                            {{3, 3}, {3, 3}, {0, 0}, {1, 1}, true},  {{2, 3}, {2, 2}, {1, 1}, {2, 2}, false},
                            {{5, 5}, {2, 3}, {2, 2}, {1, 1}, true},  {{1, 4}, {1, 4}, {0, 2}, {1, 1}, true}};
  uint64_t seed = 500;
  for (ember::ScalarType dt : kGradTypes) {
    for (const Config& c : configs) {
      std::ostringstream name;
      name << dt << " max_pool2d k" << c.k[1] << " s" << c.s[1] << " p" << c.p[1] << " d" << c.d[1] << (c.ceil ? " ceil" : "");
      const ember::Tensor x = random({2, 3, 11, 83}, dt, seed++);
      expect_grads(
          name.str(), {x}, [&](const auto& v) { return ember::max_pool2d(v[0], c.k, c.s, c.p, c.d, c.ceil); },
          [&](const auto& v) { return torch::max_pool2d(v[0], c.k, c.s, c.p, c.d, c.ceil); }, parity::default_tol(dt),
          seed++);
      // ties (values rounded to a few levels) and NaNs: the same index as libtorch, exactly
      ember::Tensor tied = (random({2, 3, 11, 83}, dt, seed++) * 2).round();
      tied.view({-1}).index_fill_(0, ember::arange(0, tied.numel(), 37), std::nan(""));
      const auto [ev, ei] = ember::max_pool2d_with_indices(tied, c.k, c.s, c.p, c.d, c.ceil);
      const auto [tv, ti] = torch::max_pool2d_with_indices(parity::to_torch(tied), c.k, c.s, c.p, c.d, c.ceil);
      SCOPED_TRACE(name.str() + " ties and NaN");
      EXPECT_TRUE(torch::equal(parity::to_torch(ei), ti));
      EXPECT_TRUE(torch::allclose(parity::to_torch(ev), tv, 0, 0, /*equal_nan=*/true));
    }
  }
}

TEST(PoolGradParity, Pool1d) {
  uint64_t seed = 400;
  for (ember::ScalarType dt : kGradTypes) {
    const ember::Tensor x = random({2, 3, 11}, dt, seed++);
    std::ostringstream os;
    os << dt;
    const Tol exact = parity::default_tol(dt), avg = sum_tol(dt, 3);
    expect_grads(
        os.str() + " max_pool1d", {x}, [](const auto& v) { return ember::max_pool1d(v[0], 3, 2, 1, 2, true); },
        [](const auto& v) { return torch::max_pool1d(v[0], 3, 2, 1, 2, true); }, exact, seed++);
    expect_grads(
        os.str() + " avg_pool1d", {x}, [](const auto& v) { return ember::avg_pool1d(v[0], 3, 2, 1, true, false); },
        [](const auto& v) { return torch::avg_pool1d(v[0], 3, 2, 1, true, false); }, avg, seed++);
    expect_grads(
        os.str() + " adaptive_avg_pool1d", {x}, [](const auto& v) { return ember::adaptive_avg_pool1d(v[0], {4}); },
        [](const auto& v) { return torch::adaptive_avg_pool1d(v[0], 4); }, avg, seed++);
  }
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
