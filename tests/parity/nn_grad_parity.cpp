// Gradients of the nn ops against libtorch's: norms (batch norm in training and eval, with its
// running statistics), softmax, embedding, interpolate and pad, on random inputs and a random
// grad_output, in float32 and bfloat16, contiguous and channels_last. Where libtorch 1.13 has no
// bfloat16 kernel, the reference is its float32 gradient rounded to bfloat16.
//
// Tolerance: gradients sum up to `terms` products of O(1) values in another order than libtorch,
// rounding each in the compute type (float32 for both dtypes); bfloat16 adds the rounding of the
// inputs' gradients to 8 bits.
#include <functional>
#include <sstream>

#include "parity/parity.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using parity::Close;
using parity::to_torch;
using parity::Tol;
namespace F = ember::nn::functional;
namespace tF = torch::nn::functional;

namespace {

using ELeaves = std::vector<ember::Tensor>;
using TLeaves = std::vector<torch::Tensor>;

struct Case {
  std::string name;
  std::vector<std::vector<int64_t>> shapes;  // the leaves, all requiring grad
  std::function<ember::Tensor(const ELeaves&)> ember_fn;
  std::function<torch::Tensor(const TLeaves&)> torch_fn;
  double terms = 1;
  // libtorch 1.13's bfloat16 kernel is wrong (bilinear mixes in the wrong row at the bottom
  // border): the reference is its float32 gradient, rounded.
  bool bfloat16_via_float = false;
};

Tol grad_tol(ember::ScalarType dt, double terms) {
  if (dt == ember::kBFloat16) return {1.6e-2, 1.6e-2 * std::sqrt(terms)};
  return {1e-4, 2e-5 * std::sqrt(terms)};
}

// libtorch's output and leaf gradients in dtype t.
std::pair<torch::Tensor, TLeaves> torch_grads(const Case& c, const ELeaves& ex, const ember::Tensor& grad,
                                              torch::ScalarType t) {
  TLeaves tx;
  for (const ember::Tensor& e : ex) tx.push_back(to_torch(e.detach()).to(t).requires_grad_());
  const torch::Tensor y = c.torch_fn(tx);
  y.backward(to_torch(grad).to(t));
  TLeaves g;
  for (const torch::Tensor& x : tx) g.push_back(x.grad());
  return {y.detach(), g};
}

void run_case(const Case& c, ember::ScalarType dt, bool channels_last, uint64_t seed) {
  std::ostringstream what;
  what << c.name << " " << dt << (channels_last ? " channels_last" : "");
  SCOPED_TRACE(what.str());
  ELeaves ex;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    ember::Tensor t = parity::random(c.shapes[i], dt, seed + i);
    if (channels_last && t.dim() == 4) t = t.contiguous(ember::MemoryFormat::ChannelsLast);
    ex.push_back(t.requires_grad_());
  }
  const ember::Tensor ey = c.ember_fn(ex);
  const ember::Tensor grad = parity::random(ey.sizes(), dt, seed + 100);
  ey.backward(grad);
  auto via_float = [&] {
    std::pair<torch::Tensor, TLeaves> r = torch_grads(c, ex, grad, torch::kFloat);
    r.first = r.first.to(parity::to_torch(dt));
    for (torch::Tensor& g : r.second) g = g.to(parity::to_torch(dt));
    return r;
  };
  std::pair<torch::Tensor, TLeaves> ref;
  if (dt == ember::kBFloat16 && c.bfloat16_via_float) {
    ref = via_float();
  } else {
    try {
      ref = torch_grads(c, ex, grad, parity::to_torch(dt));
    } catch (const c10::Error&) {  // no bfloat16 kernel
      ref = via_float();
    }
  }
  EXPECT_TRUE(Close(ey.detach(), ref.first, grad_tol(dt, c.terms)));
  for (size_t i = 0; i < ex.size(); ++i) {
    SCOPED_TRACE("gradient of leaf " + std::to_string(i));
    ASSERT_TRUE(ex[i].grad().defined());
    EXPECT_TRUE(Close(ex[i].grad(), ref.second[i], grad_tol(dt, c.terms)));
    if (channels_last && ex[i].dim() == 4) {  // the gradient takes libtorch's layout
      EXPECT_EQ(ex[i].grad().is_contiguous(ember::MemoryFormat::ChannelsLast),
                ref.second[i].is_contiguous(at::MemoryFormat::ChannelsLast));
    }
  }
}

void run_all(const std::vector<Case>& cases) {
  uint64_t seed = 1;
  for (const Case& c : cases)
    for (ember::ScalarType dt : {ember::kFloat, ember::kBFloat16})
      for (bool cl : {false, true}) {
        const bool has_4d = std::any_of(c.shapes.begin(), c.shapes.end(), [](const auto& s) { return s.size() == 4; });
        if (!cl || has_4d) run_case(c, dt, cl, seed += 10);
      }
}

TEST(NnGradParity, BatchNorm) {
  std::vector<Case> cases;
  for (const std::vector<int64_t>& s :
       std::vector<std::vector<int64_t>>{{4, 5, 6, 7}, {16, 32, 14, 14}, {3, 70, 5, 4}, {7, 3}}) {
    const double terms = static_cast<double>(s[0] * (s.size() == 4 ? s[2] * s[3] : 1));
    const int64_t C = s[1];
    cases.push_back({"batch_norm train", {s, {C}, {C}},
                     [](const ELeaves& v) {
                       return ember::batch_norm(v[0], v[1], v[2], ember::Tensor(), ember::Tensor(), true, 0.1, 1e-5);
                     },
                     [](const TLeaves& v) {
                       return torch::batch_norm(v[0], v[1], v[2], {}, {}, true, 0.1, 1e-5, false);
                     },
                     terms});
    cases.push_back({"batch_norm eval", {s, {C}, {C}},
                     [C](const ELeaves& v) {
                       const ember::Tensor rm = parity::random({C}, ember::kFloat, 5);
                       const ember::Tensor rv = parity::random({C}, ember::kFloat, 6).abs() + 0.5;
                       return ember::batch_norm(v[0], v[1], v[2], rm, rv, false, 0.1, 1e-5);
                     },
                     [C](const TLeaves& v) {
                       const torch::Tensor rm = to_torch(parity::random({C}, ember::kFloat, 5));
                       const torch::Tensor rv = to_torch(parity::random({C}, ember::kFloat, 6).abs() + 0.5);
                       return torch::batch_norm(v[0], v[1], v[2], rm, rv, false, 0.1, 1e-5, false);
                     },
                     terms});
  }
  run_all(cases);
}

TEST(NnGradParity, BatchNormRunningStatsWithGradients) {
  const ember::Tensor x = parity::random({8, 3, 5, 5}, ember::kFloat, 3).requires_grad_();
  ember::Tensor rm = ember::zeros({3}), rv = ember::ones({3});
  torch::Tensor trm = torch::zeros({3}), trv = torch::ones({3});
  const torch::Tensor tx = to_torch(x.detach()).requires_grad_();
  ember::batch_norm(x, ember::Tensor(), ember::Tensor(), rm, rv, true, 0.2, 1e-5).sum().backward();
  torch::batch_norm(tx, {}, {}, trm, trv, true, 0.2, 1e-5, false).sum().backward();
  EXPECT_TRUE(Close(rm, trm));
  EXPECT_TRUE(Close(rv, trv));
  EXPECT_FALSE(rm.requires_grad());
  EXPECT_TRUE(Close(x.grad(), tx.grad(), grad_tol(ember::kFloat, 200)));
}

TEST(NnGradParity, LayerGroupInstanceNorm) {
  run_all({
      {"layer_norm",
       {{6, 33}, {33}, {33}},
       [](const ELeaves& v) { return ember::layer_norm(v[0], {33}, v[1], v[2], 1e-5); },
       [](const TLeaves& v) { return torch::layer_norm(v[0], {33}, v[1], v[2], 1e-5); },
       33 * 6},
      {"layer_norm 2-D shape",
       {{4, 3, 10}, {3, 10}, {3, 10}},
       [](const ELeaves& v) {
         return ember::layer_norm(v[0], {3, 10}, v[1], v[2], 1e-5);
       },
       [](const TLeaves& v) {
         return torch::layer_norm(v[0], {3, 10}, v[1], v[2], 1e-5);
       },
       120},
      {"layer_norm threaded",
       {{300, 257}, {257}, {257}},
       [](const ELeaves& v) { return ember::layer_norm(v[0], {257}, v[1], v[2], 1e-5); },
       [](const TLeaves& v) { return torch::layer_norm(v[0], {257}, v[1], v[2], 1e-5); },
       300 * 257},
      // libtorch 1.13's bfloat16 group_norm backward loses accuracy (against float64 on the same
      // bfloat16 inputs, channels_last: max errors of the weight's gradient 0.06-0.18 where
      // Ember's are 0.005-0.05): the reference is its float32 gradient, rounded.
      {"group_norm",
       {{4, 6, 5, 5}, {6}, {6}},
       [](const ELeaves& v) { return ember::group_norm(v[0], 3, v[1], v[2], 1e-5); },
       [](const TLeaves& v) { return torch::group_norm(v[0], 3, v[1], v[2], 1e-5); },
       100,
       true},
      {"instance_norm",
       {{3, 4, 5, 6}, {4}, {4}},
       [](const ELeaves& v) {
         return ember::instance_norm(v[0], v[1], v[2], ember::Tensor(), ember::Tensor(), true, 0.1, 1e-5);
       },
       [](const TLeaves& v) { return torch::instance_norm(v[0], v[1], v[2], {}, {}, true, 0.1, 1e-5, false); },
       90},
  });
}

TEST(NnGradParity, Softmax) {
  std::vector<Case> cases;
  for (int64_t dim : {-1, 1}) {
    for (const std::vector<int64_t>& s : std::vector<std::vector<int64_t>>{{7, 130}, {3, 5, 7}, {64, 10}}) {
      cases.push_back({"softmax", {s}, [dim](const ELeaves& v) { return ember::softmax(v[0], dim); },
                       [dim](const TLeaves& v) { return torch::softmax(v[0], dim); }, 130});
      cases.push_back({"log_softmax", {s}, [dim](const ELeaves& v) { return ember::log_softmax(v[0], dim); },
                       [dim](const TLeaves& v) { return torch::log_softmax(v[0], dim); }, 130});
    }
  }
  // along an outer dim: the gradient's vector blocks of inner positions (4 vectors, 1 vector)
  // and the positions left over
  for (const auto& [s, dim] : std::vector<std::pair<std::vector<int64_t>, int64_t>>{{{130, 70}, 0}, {{5, 37, 20}, 1}}) {
    cases.push_back({"softmax outer", {s}, [dim](const ELeaves& v) { return ember::softmax(v[0], dim); },
                     [dim](const TLeaves& v) { return torch::softmax(v[0], dim); }, 130});
    cases.push_back({"log_softmax outer", {s}, [dim](const ELeaves& v) { return ember::log_softmax(v[0], dim); },
                     [dim](const TLeaves& v) { return torch::log_softmax(v[0], dim); }, 130});
  }
  run_all(cases);
}

TEST(NnGradParity, Embedding) {
  const ember::Tensor idx = parity::random({4, 9}, ember::kLong, 2).abs();
  const torch::Tensor tidx = to_torch(idx);
  run_all({
      {"embedding", {{9, 5}},
       [&](const ELeaves& v) { return ember::embedding(v[0], idx); },
       [&](const TLeaves& v) { return torch::embedding(v[0], tidx); }, 36},
      {"embedding padding_idx", {{9, 5}},
       [&](const ELeaves& v) { return ember::embedding(v[0], idx, 3); },
       [&](const TLeaves& v) { return torch::embedding(v[0], tidx, 3); }, 36},
      {"embedding padding_idx scale_grad_by_freq", {{9, 5}},
       [&](const ELeaves& v) { return ember::embedding(v[0], idx, 3, true); },
       [&](const TLeaves& v) { return torch::embedding(v[0], tidx, 3, true); }, 36},
  });
}

TEST(NnGradParity, InterpolateAndPad) {
  using Opts = tF::InterpolateFuncOptions;
  run_all({
      {"nearest", {{2, 3, 5, 7}},
       [](const ELeaves& v) { return ember::interpolate(v[0], std::vector<int64_t>{8, 9}); },
       [](const TLeaves& v) {
         return tF::interpolate(v[0], Opts().size(std::vector<int64_t>{8, 9}).mode(torch::kNearest));
       }},
      {"nearest downscale", {{2, 3, 9, 8}},
       [](const ELeaves& v) { return ember::interpolate(v[0], std::vector<int64_t>{4, 3}); },
       [](const TLeaves& v) {
         return tF::interpolate(v[0], Opts().size(std::vector<int64_t>{4, 3}).mode(torch::kNearest));
       }, 9},
      {"nearest 1-D", {{2, 3, 5}},
       [](const ELeaves& v) { return ember::interpolate(v[0], std::nullopt, std::vector<double>{2.5}); },
       [](const TLeaves& v) {
         return tF::interpolate(
             v[0], Opts().scale_factor(std::vector<double>{2.5}).mode(torch::kNearest).recompute_scale_factor(false));
       }},
      {"bilinear", {{2, 3, 5, 7}},
       [](const ELeaves& v) {
         return ember::interpolate(v[0], std::vector<int64_t>{8, 12}, std::nullopt, "bilinear", false);
       },
       [](const TLeaves& v) {
         return tF::interpolate(
             v[0], Opts().size(std::vector<int64_t>{8, 12}).mode(torch::kBilinear).align_corners(false));
       }, 4, true},
      {"bilinear align_corners", {{2, 3, 5, 7}},
       [](const ELeaves& v) {
         return ember::interpolate(v[0], std::vector<int64_t>{3, 12}, std::nullopt, "bilinear", true);
       },
       [](const TLeaves& v) {
         return tF::interpolate(v[0],
                                Opts().size(std::vector<int64_t>{3, 12}).mode(torch::kBilinear).align_corners(true));
       }, 4, true},
      {"pad constant", {{2, 3, 4, 5}},
       [](const ELeaves& v) { return ember::pad(v[0], {1, 2, -1, 1}, "constant", 0.5); },
       [](const TLeaves& v) { return torch::constant_pad_nd(v[0], {1, 2, -1, 1}, 0.5); }},
      {"pad reflect", {{2, 3, 4, 5}},
       [](const ELeaves& v) { return ember::pad(v[0], {2, 3, 1, 3}, "reflect"); },
       [](const TLeaves& v) { return tF::pad(v[0], tF::PadFuncOptions({2, 3, 1, 3}).mode(torch::kReflect)); }, 4},
      {"pad replicate", {{2, 3, 4, 5}},
       [](const ELeaves& v) { return ember::pad(v[0], {2, 3, 1, 3}, "replicate"); },
       [](const TLeaves& v) { return tF::pad(v[0], tF::PadFuncOptions({2, 3, 1, 3}).mode(torch::kReplicate)); }, 16},
      {"pad reflect 1-D", {{2, 3, 6}},
       [](const ELeaves& v) { return ember::pad(v[0], {4, 5}, "reflect"); },
       [](const TLeaves& v) { return tF::pad(v[0], tF::PadFuncOptions({4, 5}).mode(torch::kReflect)); }, 4},
      // circular: up to the whole size each side, and a negative pad that crops
      {"pad circular", {{2, 3, 4, 5}},
       [](const ELeaves& v) { return F::pad(v[0], F::PadFuncOptions({5, 2, -1, 3}).mode(ember::kCircular)); },
       [](const TLeaves& v) { return tF::pad(v[0], tF::PadFuncOptions({5, 2, -1, 3}).mode(torch::kCircular)); }, 4},
      {"pad circular 3-D", {{1, 2, 3, 2, 4}},
       [](const ELeaves& v) { return ember::pad(v[0], {1, 3, 2, 0, 1, 1}, "circular"); },
       [](const TLeaves& v) { return tF::pad(v[0], tF::PadFuncOptions({1, 3, 2, 0, 1, 1}).mode(torch::kCircular)); }, 4},
  });
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
