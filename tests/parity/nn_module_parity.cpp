// nn modules against libtorch's: each layer's forward with the same parameters copied in (and,
// where derivatives exist, the parameter gradients), the losses with every option and
// reduction, and the printed module trees.
#include <functional>
#include <sstream>
#include <vector>

#include "parity/parity.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using parity::Close;
using parity::Tol;
namespace enn = ember::nn;
namespace eF = ember::nn::functional;
namespace tnn = torch::nn;
namespace tF = torch::nn::functional;

namespace {

torch::Tensor T(const ember::Tensor& e) { return parity::to_torch(e); }
ember::Tensor E(const torch::Tensor& t) { return parity::to_ember(t); }
ember::Tensor rnd(ember::IntArrayRef sizes, uint64_t seed, ember::ScalarType dt = ember::kFloat) {
  return parity::random(sizes, dt, seed);
}

template <class EM, class TM>
void expect_forward(EM& e, TM& t, const ember::Tensor& x, Tol tol = {1e-5, 1e-5}) {
  parity::copy_module_state(*e, *t);
  ember::Tensor ey = e(x);
  torch::Tensor ty = t(T(x));
  EXPECT_TRUE(Close(ey, ty, tol)) << e->name();
}

template <class M>
std::string str(const M& m) {
  std::ostringstream os;
  os << *m;
  return os.str();
}

}  // namespace

TEST(NnParity, LinearBilinearFlatten) {
  ember::NoGradGuard no_grad;  // forwards only: gradients are checked in nn_grad_modules_test
  torch::NoGradGuard torch_no_grad;
  enn::Linear e(7, 5);
  tnn::Linear t(7, 5);
  expect_forward(e, t, rnd({3, 7}, 1));
  expect_forward(e, t, rnd({2, 4, 7}, 2));
  enn::Linear e2(enn::LinearOptions(7, 5).bias(false));
  tnn::Linear t2(tnn::LinearOptions(7, 5).bias(false));
  expect_forward(e2, t2, rnd({3, 7}, 3));
  // libtorch's own init statistics are the reference for the default init's bounds.
  EXPECT_LE(e->weight.abs().max().item<double>(), 1 / std::sqrt(7.0));

  enn::Bilinear eb(3, 4, 2);
  tnn::Bilinear tb(3, 4, 2);
  parity::copy_module_state(*eb, *tb);
  ember::Tensor x1 = rnd({5, 3}, 4), x2 = rnd({5, 4}, 5);
  EXPECT_TRUE(Close(eb(x1, x2), tb(T(x1), T(x2)), {1e-5, 1e-5}));

  enn::Flatten ef(enn::FlattenOptions().start_dim(1).end_dim(2));
  tnn::Flatten tf(tnn::FlattenOptions().start_dim(1).end_dim(2));
  expect_forward(ef, tf, rnd({2, 3, 4, 5}, 6));
  enn::Unflatten eu(1, std::vector<int64_t>{2, 3});
  tnn::Unflatten tu(1, std::vector<int64_t>{2, 3});
  expect_forward(eu, tu, rnd({4, 6}, 7));
}

TEST(NnParity, Convolutions) {
  ember::NoGradGuard no_grad;  // forwards only: gradients are checked in nn_grad_modules_test
  torch::NoGradGuard torch_no_grad;
  enn::Conv2d e(enn::Conv2dOptions(4, 6, {3, 2}).stride({2, 1}).padding(1).dilation({1, 2}).groups(2));
  tnn::Conv2d t(tnn::Conv2dOptions(4, 6, {3, 2}).stride({2, 1}).padding(1).dilation({1, 2}).groups(2));
  expect_forward(e, t, rnd({2, 4, 7, 6}, 8), {1e-4, 1e-5});
  expect_forward(e, t, rnd({1, 4, 5, 5}, 9).contiguous(ember::MemoryFormat::ChannelsLast), {1e-4, 1e-5});
  enn::Conv1d e1(enn::Conv1dOptions(3, 2, 3).padding(1).bias(false));
  tnn::Conv1d t1(tnn::Conv1dOptions(3, 2, 3).padding(1).bias(false));
  expect_forward(e1, t1, rnd({2, 3, 9}, 10), {1e-4, 1e-5});
  enn::ConvTranspose2d et(enn::ConvTranspose2dOptions(4, 2, 3).stride(2).padding(1).output_padding(1));
  tnn::ConvTranspose2d tt(tnn::ConvTranspose2dOptions(4, 2, 3).stride(2).padding(1).output_padding(1));
  expect_forward(et, tt, rnd({2, 4, 4, 5}, 11), {1e-4, 1e-5});

  // padding 'same' and 'valid', and the padding modes other than zeros (the input padded
  // first, then convolved without padding)
  using EPad = enn::Conv2dOptions::padding_mode_t;
  using TPad = tnn::Conv2dOptions::padding_mode_t;
  const std::vector<std::pair<EPad, TPad>> modes{{ember::kZeros, torch::kZeros},
                                                 {ember::kReflect, torch::kReflect},
                                                 {ember::kReplicate, torch::kReplicate},
                                                 {ember::kCircular, torch::kCircular}};
  for (const auto& [em, tm] : modes) {
    enn::Conv2d ep(enn::Conv2dOptions(3, 4, {3, 2}).padding({1, 2}).padding_mode(em));
    tnn::Conv2d tp(tnn::Conv2dOptions(3, 4, {3, 2}).padding({1, 2}).padding_mode(tm));
    expect_forward(ep, tp, rnd({2, 3, 5, 6}, 12), {1e-4, 1e-5});
    EXPECT_EQ(str(ep), str(tp));
    enn::Conv2d es(enn::Conv2dOptions(3, 4, 3).padding(ember::kSame).dilation(2).padding_mode(em));
    tnn::Conv2d ts(tnn::Conv2dOptions(3, 4, 3).padding(torch::kSame).dilation(2).padding_mode(tm));
    expect_forward(es, ts, rnd({2, 3, 6, 5}, 13), {1e-4, 1e-5});
    EXPECT_EQ(str(es), str(ts));
    enn::Conv1d ev(enn::Conv1dOptions(3, 2, 4).padding(ember::kValid).padding_mode(em));
    tnn::Conv1d tv(tnn::Conv1dOptions(3, 2, 4).padding(torch::kValid).padding_mode(tm));
    expect_forward(ev, tv, rnd({2, 3, 9}, 14), {1e-4, 1e-5});
  }
  EXPECT_THROW(enn::Conv2d(enn::Conv2dOptions(3, 4, 3).padding(ember::kSame).stride(2)), ember::Error);
  enn::Conv2d wraps_twice(enn::Conv2dOptions(1, 1, 3).padding(3).padding_mode(ember::kCircular));
  EXPECT_THROW(wraps_twice(rnd({1, 1, 2, 2}, 15)), ember::Error);
}

// Options both libraries take and then refuse in forward, with libtorch's message: a transposed
// conv's padding_mode other than zeros, and Unflatten's named form (Ember's tensors have no dim
// names; libtorch finds none on an unnamed input either).
TEST(NnParity, OptionsRefusedInForwardAsLibtorch) {
  auto expect_same_error = [](auto&& ember_call, auto&& torch_call) {
    std::string torch_msg;
    try {
      torch_call();
    } catch (const c10::Error& e) {
      torch_msg = e.what_without_backtrace();
    }
    ASSERT_FALSE(torch_msg.empty()) << "libtorch did not throw";
    try {
      ember_call();
      ADD_FAILURE() << "Ember did not throw; libtorch: " << torch_msg;
    } catch (const ember::Error& e) {
      EXPECT_NE(std::string(e.what()).find(torch_msg), std::string::npos) << e.what() << " vs " << torch_msg;
    }
  };
  enn::ConvTranspose2d ect(enn::ConvTranspose2dOptions(2, 2, 3).padding_mode(ember::kReflect));
  tnn::ConvTranspose2d tct(tnn::ConvTranspose2dOptions(2, 2, 3).padding_mode(torch::kReflect));
  EXPECT_EQ(str(ect), str(tct));
  expect_same_error([&] { ect(rnd({1, 2, 5, 5}, 16)); }, [&] { tct(torch::zeros({1, 2, 5, 5})); });
  enn::Unflatten eu(enn::UnflattenOptions("B", {{"B1", 2}, {"B2", 3}}));
  tnn::Unflatten tu(tnn::UnflattenOptions("B", {{"B1", 2}, {"B2", 3}}));
  EXPECT_EQ(str(eu), str(tu));
  expect_same_error([&] { eu(rnd({6, 4}, 17)); }, [&] { tu(torch::zeros({6, 4})); });
  enn::Unflatten eu2(std::string("C"), enn::UnflattenOptions::namedshape_t{{"C1", 3}});
  tnn::Unflatten tu2(std::string("C"), tnn::UnflattenOptions::namedshape_t{{"C1", 3}});
  EXPECT_EQ(str(eu2), str(tu2));
}

TEST(NnParity, BatchNormTrainsRunningStatsAsLibtorch) {
  ember::NoGradGuard no_grad;  // forwards only: gradients are checked in nn_grad_modules_test
  torch::NoGradGuard torch_no_grad;
  for (bool track : {true, false}) {
    for (std::optional<double> momentum : {std::optional<double>(0.3), std::optional<double>()}) {
      enn::BatchNorm2d e(enn::BatchNormOptions(3).momentum(momentum).track_running_stats(track).eps(1e-3));
      const c10::optional<double> tmomentum = momentum ? c10::optional<double>(*momentum) : c10::nullopt;
      tnn::BatchNorm2d t(tnn::BatchNormOptions(3).momentum(tmomentum).track_running_stats(track).eps(1e-3));
      parity::copy_module_state(*e, *t);
      for (uint64_t step = 0; step < 3; ++step) {
        ember::Tensor x = rnd({4, 3, 2, 5}, 20 + step);
        EXPECT_TRUE(Close(e(x), t(T(x)), {1e-5, 1e-5}));
      }
      auto eb = e->named_buffers();
      for (const auto& item : t->named_buffers()) EXPECT_TRUE(Close(eb[item.key()], item.value(), {1e-5, 1e-6}));
      e->eval();
      t->eval();
      ember::Tensor x = rnd({2, 3, 2, 2}, 30);
      EXPECT_TRUE(Close(e(x), t(T(x)), {1e-5, 1e-5}));
    }
  }
  enn::BatchNorm1d e1(enn::BatchNormOptions(4).affine(false));
  tnn::BatchNorm1d t1(tnn::BatchNormOptions(4).affine(false));
  expect_forward(e1, t1, rnd({5, 4}, 31));
  expect_forward(e1, t1, rnd({5, 4, 3}, 32));
}

TEST(NnParity, LayerAndGroupNorm) {
  ember::NoGradGuard no_grad;  // forwards only: gradients are checked in nn_grad_modules_test
  torch::NoGradGuard torch_no_grad;
  enn::LayerNorm e(enn::LayerNormOptions({3, 4}).eps(1e-4));
  tnn::LayerNorm t(tnn::LayerNormOptions({3, 4}).eps(1e-4));
  {
    ember::manual_seed(3);
    enn::init::normal_(e->weight);
    enn::init::normal_(e->bias);
  }
  expect_forward(e, t, rnd({2, 3, 4}, 33));
  enn::GroupNorm eg(enn::GroupNormOptions(2, 6).eps(1e-4));
  tnn::GroupNorm tg(tnn::GroupNormOptions(2, 6).eps(1e-4));
  enn::init::normal_(eg->weight);
  expect_forward(eg, tg, rnd({3, 6, 2, 2}, 34));
}

TEST(NnParity, ActivationsPoolingEmbeddingEval) {
  ember::NoGradGuard no_grad;  // forwards only: gradients are checked in nn_grad_modules_test
  torch::NoGradGuard torch_no_grad;
  ember::Tensor x = rnd({2, 3, 6, 5}, 40);
  auto check = [&](auto e, auto t) { expect_forward(e, t, x); };
  check(enn::ReLU(), tnn::ReLU());
  check(enn::ReLU6(), tnn::ReLU6());
  check(enn::LeakyReLU(enn::LeakyReLUOptions().negative_slope(0.2)), tnn::LeakyReLU(tnn::LeakyReLUOptions().negative_slope(0.2)));
  check(enn::GELU(), tnn::GELU());
  check(enn::GELU(enn::GELUOptions().approximate("tanh")), tnn::GELU(tnn::GELUOptions().approximate("tanh")));
  check(enn::SiLU(), tnn::SiLU());
  check(enn::ELU(enn::ELUOptions().alpha(0.5)), tnn::ELU(tnn::ELUOptions().alpha(0.5)));
  check(enn::Softplus(enn::SoftplusOptions().beta(2).threshold(1)), tnn::Softplus(tnn::SoftplusOptions().beta(2).threshold(1)));
  check(enn::Sigmoid(), tnn::Sigmoid());
  check(enn::Tanh(), tnn::Tanh());
  check(enn::Softmax(1), tnn::Softmax(1));
  check(enn::LogSoftmax(-1), tnn::LogSoftmax(-1));
  check(enn::Identity(), tnn::Identity());
  EXPECT_TRUE(Close(enn::Hardswish()(x), torch::hardswish(T(x))));
  EXPECT_TRUE(Close(enn::Hardsigmoid()(x), torch::hardsigmoid(T(x))));
  check(enn::MaxPool2d(enn::MaxPool2dOptions(3).stride(2).padding(1).ceil_mode(true)),
        tnn::MaxPool2d(tnn::MaxPool2dOptions(3).stride(2).padding(1).ceil_mode(true)));
  check(enn::AvgPool2d(enn::AvgPool2dOptions({2, 3}).count_include_pad(false).padding(1)),
        tnn::AvgPool2d(tnn::AvgPool2dOptions({2, 3}).count_include_pad(false).padding(1)));
  check(enn::AdaptiveAvgPool2d(enn::AdaptiveAvgPool2dOptions({2, std::nullopt})),
        tnn::AdaptiveAvgPool2d(tnn::AdaptiveAvgPool2dOptions({2, c10::nullopt})));
  check(enn::AdaptiveAvgPool2d(enn::AdaptiveAvgPool2dOptions(1)), tnn::AdaptiveAvgPool2d(tnn::AdaptiveAvgPool2dOptions(1)));
  // Dropout in eval mode is the identity in both.
  enn::Dropout ed(0.4);
  tnn::Dropout td(0.4);
  ed->eval();
  td->eval();
  check(ed, td);

  enn::Embedding ee(enn::EmbeddingOptions(10, 4).padding_idx(2));
  tnn::Embedding te(tnn::EmbeddingOptions(10, 4).padding_idx(2));
  ember::Tensor idx = ember::tensor({{1, 2, 9}, {0, 2, 4}});
  expect_forward(ee, te, idx);
  // max_norm renormalizes the looked-up rows in place, in both.
  enn::Embedding em(enn::EmbeddingOptions(10, 4).max_norm(0.5));
  tnn::Embedding tm(tnn::EmbeddingOptions(10, 4).max_norm(0.5));
  expect_forward(em, tm, idx);
  EXPECT_TRUE(Close(em->weight, tm->weight));
  ember::Tensor pre = rnd({3, 2}, 41);
  auto efp = enn::Embedding::from_pretrained(pre);
  auto tfp = tnn::Embedding::from_pretrained(T(pre));
  EXPECT_FALSE(efp->weight.requires_grad());
  EXPECT_TRUE(Close(efp(ember::tensor({2, 0})), tfp(torch::tensor({2, 0}))));
}

TEST(NnParity, MultiheadAttentionAndTransformerEncoderLayer) {
  ember::NoGradGuard no_grad;  // forwards only: gradients are checked in nn_grad_modules_test
  torch::NoGradGuard torch_no_grad;
  enn::MultiheadAttention e(8, 2);
  tnn::MultiheadAttention t(8, 2);
  parity::copy_module_state(*e, *t);
  ember::Tensor q = rnd({3, 2, 8}, 50), kv = rnd({4, 2, 8}, 51);
  ember::Tensor mask = ember::tensor({{false, true, false, false}, {false, false, false, true},
                                      {true, false, false, false}});
  ember::Tensor kpm = ember::tensor({{false, false, true, false}, {false, false, false, false}});
  auto [eo, ew] = e(q, kv, kv, kpm, true, mask);
  // libtorch 1.13's C++ attention adds a bool attn_mask as 0/1; PyTorch (the spec) masks the
  // true entries out, which is the additive -inf mask given here to libtorch.
  const torch::Tensor additive = torch::zeros({3, 4}).masked_fill(T(mask), -INFINITY);
  auto [to, tw] = t(T(q), T(kv), T(kv), T(kpm), true, additive);
  EXPECT_TRUE(Close(eo, to, {1e-5, 1e-5}));
  EXPECT_TRUE(Close(ew, tw, {1e-5, 1e-5}));
  ember::Tensor float_mask = rnd({3, 4}, 52);
  auto [eo2, ew2] = e(q, kv, kv, ember::Tensor(), true, float_mask);
  auto [to2, tw2] = t(T(q), T(kv), T(kv), torch::Tensor(), true, T(float_mask));
  EXPECT_TRUE(Close(eo2, to2, {1e-5, 1e-5}));
  EXPECT_TRUE(Close(ew2, tw2, {1e-5, 1e-5}));

  // The other options: learned key/value biases, a zero key, and key/value of another width
  // (separate q/k/v projection weights); the same parameters, by name and shape, as libtorch's.
  for (int variant = 0; variant < 3; ++variant) {
    const int64_t kdim = variant == 2 ? 6 : 8;
    auto eopt = enn::MultiheadAttentionOptions(8, 2).add_bias_kv(variant != 1).add_zero_attn(variant >= 1);
    auto topt = tnn::MultiheadAttentionOptions(8, 2).add_bias_kv(variant != 1).add_zero_attn(variant >= 1);
    enn::MultiheadAttention ev(eopt.kdim(kdim).vdim(kdim));
    tnn::MultiheadAttention tv(topt.kdim(kdim).vdim(kdim));
    const auto ep = ev->named_parameters();
    const auto tp = tv->named_parameters();
    ASSERT_EQ(ep.size(), tp.size()) << variant;
    for (size_t i = 0; i < ep.size(); ++i) {
      EXPECT_EQ(ep[i].key(), tp[i].key()) << variant;
      EXPECT_EQ(ep[i].value().sizes().vec(), tp[i].value().sizes().vec()) << ep[i].key();
    }
    parity::copy_module_state(*ev, *tv);
    ember::Tensor kv2 = rnd({4, 2, kdim}, 55 + variant);
    auto [eo3, ew3] = ev(q, kv2, kv2, ember::Tensor(), true, float_mask);
    auto [to3, tw3] = tv(T(q), T(kv2), T(kv2), torch::Tensor(), true, T(float_mask));
    EXPECT_TRUE(Close(eo3, to3, {1e-5, 1e-5})) << variant;
    EXPECT_TRUE(Close(ew3, tw3, {1e-5, 1e-5})) << variant;
  }
  EXPECT_THROW(enn::MultiheadAttention(enn::MultiheadAttentionOptions(8, 2).kdim(0)), ember::Error);

  enn::TransformerEncoderLayer el(enn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16));
  tnn::TransformerEncoderLayer tl(tnn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16));
  el->eval();
  tl->eval();
  expect_forward(el, tl, rnd({5, 3, 8}, 53));
  enn::TransformerEncoderLayer eg(enn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).activation(ember::kGELU));
  tnn::TransformerEncoderLayer tg(tnn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).activation(torch::kGELU));
  eg->eval();
  tg->eval();
  expect_forward(eg, tg, rnd({5, 3, 8}, 54));
}

TEST(NnParity, Losses) {
  const ember::Tensor x = rnd({5, 4}, 60), y = rnd({5, 4}, 61);
  const std::vector<std::pair<enn::reduction_t, torch::nn::MSELossOptions::reduction_t>> reductions{
      {ember::kNone, torch::kNone}, {ember::kMean, torch::kMean}, {ember::kSum, torch::kSum}};
  const Tol tol{1e-5, 1e-6};
  for (const auto& [er, tr] : reductions) {
    EXPECT_TRUE(Close(eF::mse_loss(x, y, er), tF::mse_loss(T(x), T(y), tF::MSELossFuncOptions().reduction(tr)), tol));
    EXPECT_TRUE(Close(eF::l1_loss(x, y, er), tF::l1_loss(T(x), T(y), tF::L1LossFuncOptions().reduction(tr)), tol));
    for (double beta : {0.0, 0.5, 1.0}) {
      EXPECT_TRUE(Close(eF::smooth_l1_loss(x, y, eF::SmoothL1LossFuncOptions(er).beta(beta)),
                        tF::smooth_l1_loss(T(x), T(y), tF::SmoothL1LossFuncOptions().reduction(tr), beta), tol));
    }
    EXPECT_TRUE(Close(eF::huber_loss(x, y, eF::HuberLossFuncOptions(er).delta(0.7)),
                      tF::huber_loss(T(x), T(y), tF::HuberLossFuncOptions().reduction(tr).delta(0.7)), tol));

    // Class indices, with weights, ignore_index and label smoothing; 2-D and 4-D inputs.
    const ember::Tensor w = rnd({4}, 62).abs() + 0.1;
    const ember::Tensor labels = ember::tensor({0, 3, 1, 3, 2});
    const ember::Tensor ignored = ember::tensor({0, 3, -1, 3, 2});
    for (double smoothing : {0.0, 0.25}) {
      for (const ember::Tensor& weight : {ember::Tensor(), w}) {
        for (const ember::Tensor& target : {labels, ignored}) {
          auto eo = eF::CrossEntropyFuncOptions(er).label_smoothing(smoothing).ignore_index(-1).weight(weight);
          auto to = tF::CrossEntropyFuncOptions().reduction(tr).label_smoothing(smoothing).ignore_index(-1);
          if (weight.defined()) to.weight(T(weight));
          EXPECT_TRUE(Close(eF::cross_entropy(x, target, eo), tF::cross_entropy(T(x), T(target), to), tol))
              << "smoothing " << smoothing << " weight " << weight.defined();
          auto en = eF::NLLLossFuncOptions(er).ignore_index(-1).weight(weight);
          auto tn = tF::NLLLossFuncOptions().reduction(tr).ignore_index(-1);
          if (weight.defined()) tn.weight(T(weight));
          EXPECT_TRUE(Close(eF::nll_loss(x, target, en), tF::nll_loss(T(x), T(target), tn), tol));
        }
        // Probabilities as targets.
        const ember::Tensor probs = ember::softmax(y, 1);
        auto eo = eF::CrossEntropyFuncOptions(er).label_smoothing(smoothing).weight(weight);
        auto to = tF::CrossEntropyFuncOptions().reduction(tr).label_smoothing(smoothing);
        if (weight.defined()) to.weight(T(weight));
        EXPECT_TRUE(Close(eF::cross_entropy(x, probs, eo), tF::cross_entropy(T(x), T(probs), to), tol));
      }
    }
    const ember::Tensor x4 = rnd({2, 3, 2, 3}, 63);
    const ember::Tensor t4 = ember::randint(0, 3, {2, 2, 3}, ember::TensorOptions().dtype(ember::kLong));
    EXPECT_TRUE(Close(eF::cross_entropy(x4, t4, eF::CrossEntropyFuncOptions(er).label_smoothing(0.1)),
                      tF::cross_entropy(T(x4), T(t4), tF::CrossEntropyFuncOptions().reduction(tr).label_smoothing(0.1)), tol));

    const ember::Tensor p = ember::sigmoid(x), t01 = ember::rand({5, 4});
    const ember::Tensor bw = ember::rand({4});
    EXPECT_TRUE(Close(eF::binary_cross_entropy(p, t01, eF::BinaryCrossEntropyFuncOptions(er).weight(bw)),
                      tF::binary_cross_entropy(T(p), T(t01), tF::BinaryCrossEntropyFuncOptions().reduction(tr).weight(T(bw))),
                      tol));
    const ember::Tensor pw = ember::rand({4}) * 3;
    EXPECT_TRUE(Close(
        eF::binary_cross_entropy_with_logits(x * 10, t01,
                                             eF::BinaryCrossEntropyWithLogitsFuncOptions(er).pos_weight(pw).weight(bw)),
        tF::binary_cross_entropy_with_logits(
            T(x * 10), T(t01), tF::BinaryCrossEntropyWithLogitsFuncOptions().reduction(tr).pos_weight(T(pw)).weight(T(bw))),
        tol));
  }
  const ember::Tensor logq = ember::log_softmax(x, 1), pt = ember::softmax(y, 1);
  const ember::Tensor pt0 = pt * (pt > 0.3);  // zeros in the target
  const std::vector<std::pair<enn::kldiv_reduction_t, tF::KLDivFuncOptions::reduction_t>> kl{
      {ember::kNone, torch::kNone}, {ember::kBatchMean, torch::kBatchMean}, {ember::kSum, torch::kSum},
      {ember::kMean, torch::kMean}};
  for (const auto& [er, tr] : kl) {
    EXPECT_TRUE(Close(eF::kl_div(logq, pt0, eF::KLDivFuncOptions(er)), tF::kl_div(T(logq), T(pt0), tF::KLDivFuncOptions().reduction(tr)), tol));
    EXPECT_TRUE(Close(eF::kl_div(logq, pt.log(), eF::KLDivFuncOptions(er).log_target(true)),
                      tF::kl_div(T(logq), T(pt.log()), tF::KLDivFuncOptions().reduction(tr).log_target(true)), tol));
  }
}

// The at:: forms (torch::mse_loss(x, y, at::Reduction::Sum), ...), which libtorch programs call
// beside the functional ones, with libtorch's argument order and defaults; and their bad input.
TEST(NnParity, AtLossesTakeLibtorchsIntegerReduction) {
  const ember::Tensor x = rnd({5, 4}, 70), y = rnd({5, 4}, 71);
  const ember::Tensor p = ember::sigmoid(x), t01 = ember::rand({5, 4}), bw = ember::rand({4}), pw = ember::rand({4}) * 3;
  const ember::Tensor labels = ember::tensor({0, 3, 1, 3, 2}), w = rnd({4}, 72).abs() + 0.1;
  const ember::Tensor logq = ember::log_softmax(x, 1), pt = ember::softmax(y, 1);
  const Tol tol{1e-5, 1e-6};
  for (int64_t r : {0, 1, 2}) {
    SCOPED_TRACE("reduction " + std::to_string(r));
    EXPECT_TRUE(Close(ember::mse_loss(x, y, r), torch::mse_loss(T(x), T(y), r), tol));
    EXPECT_TRUE(Close(ember::l1_loss(x, y, r), torch::l1_loss(T(x), T(y), r), tol));
    EXPECT_TRUE(Close(ember::smooth_l1_loss(x, y, r, 0.5), torch::smooth_l1_loss(T(x), T(y), r, 0.5), tol));
    EXPECT_TRUE(Close(ember::huber_loss(x, y, r, 0.7), torch::huber_loss(T(x), T(y), r, 0.7), tol));
    EXPECT_TRUE(Close(ember::binary_cross_entropy(p, t01, bw, r), torch::binary_cross_entropy(T(p), T(t01), T(bw), r), tol));
    EXPECT_TRUE(Close(ember::binary_cross_entropy_with_logits(x, t01, bw, pw, r),
                      torch::binary_cross_entropy_with_logits(T(x), T(t01), T(bw), T(pw), r), tol));
    EXPECT_TRUE(Close(ember::cross_entropy_loss(x, labels, w, r, 3, 0.2),
                      torch::cross_entropy_loss(T(x), T(labels), T(w), r, 3, 0.2), tol));
    EXPECT_TRUE(Close(ember::kl_div(logq, pt, r), torch::kl_div(T(logq), T(pt), r), tol));
    EXPECT_TRUE(Close(ember::kl_div(logq, pt.log(), r, true), torch::kl_div(T(logq), T(pt.log()), r, true), tol));
  }
  // the defaults: Mean, no weight
  EXPECT_TRUE(Close(ember::mse_loss(x, y), torch::mse_loss(T(x), T(y)), tol));
  EXPECT_TRUE(Close(ember::cross_entropy_loss(x, labels), torch::cross_entropy_loss(T(x), T(labels)), tol));
  EXPECT_TRUE(Close(ember::binary_cross_entropy(p, t01), torch::binary_cross_entropy(T(p), T(t01)), tol));
  // gradients flow as through the functional forms
  const ember::Tensor xg = x.detach().requires_grad_();
  ember::mse_loss(xg, y, ember::Reduction::Sum).backward();
  EXPECT_TRUE(Close(xg.grad(), T(2 * (x - y)), tol));
  EXPECT_THROW(ember::mse_loss(x, y, 3), ember::Error);
  EXPECT_THROW(ember::mse_loss(x, rnd({4, 5}, 73)), ember::Error);
}

TEST(NnParity, NllLossGradient) {
  ember::Tensor x = rnd({6, 5}, 70).requires_grad_();
  torch::Tensor tx = T(x.detach()).requires_grad_();
  ember::Tensor target = ember::tensor({0, 4, 4, -100, 2, 1});
  ember::Tensor w = rnd({5}, 71).abs();
  for (int64_t r : {0, 1, 2}) {
    ember::Tensor loss = ember::nll_loss(x, target, w, r);
    torch::Tensor tloss = torch::nll_loss(tx, T(target), T(w), r);
    ember::Tensor g = r == 0 ? ember::ones({6}) : ember::Tensor();
    loss.backward(g);
    tloss.backward(r == 0 ? torch::ones({6}) : torch::Tensor());
    EXPECT_TRUE(Close(x.grad(), tx.grad()));
    x.mutable_grad().reset();
    tx.mutable_grad().reset();
  }
}

TEST(NnParity, PrettyPrintMatchesLibtorch) {
  auto compare = [](auto e, auto t) { EXPECT_EQ(str(e), str(t)); };
  compare(enn::Linear(enn::LinearOptions(3, 4).bias(false)), tnn::Linear(tnn::LinearOptions(3, 4).bias(false)));
  compare(enn::Bilinear(2, 3, 4), tnn::Bilinear(2, 3, 4));
  compare(enn::Conv2d(enn::Conv2dOptions(1, 10, 5).stride(1).padding(2)),
          tnn::Conv2d(tnn::Conv2dOptions(1, 10, 5).stride(1).padding(2)));
  compare(enn::Conv2d(enn::Conv2dOptions(4, 8, {3, 1}).stride(2).dilation(2).groups(2).bias(false)),
          tnn::Conv2d(tnn::Conv2dOptions(4, 8, {3, 1}).stride(2).dilation(2).groups(2).bias(false)));
  compare(enn::Conv1d(3, 4, 2), tnn::Conv1d(3, 4, 2));
  compare(enn::ConvTranspose2d(enn::ConvTranspose2dOptions(4, 2, 3).stride(2).output_padding(1)),
          tnn::ConvTranspose2d(tnn::ConvTranspose2dOptions(4, 2, 3).stride(2).output_padding(1)));
  compare(enn::BatchNorm2d(enn::BatchNormOptions(5).momentum(std::nullopt).affine(false)),
          tnn::BatchNorm2d(tnn::BatchNormOptions(5).momentum(c10::nullopt).affine(false)));
  compare(enn::BatchNorm1d(3), tnn::BatchNorm1d(3));
  compare(enn::LayerNorm(enn::LayerNormOptions({2, 3}).eps(1e-3)), tnn::LayerNorm(tnn::LayerNormOptions({2, 3}).eps(1e-3)));
  compare(enn::GroupNorm(2, 4), tnn::GroupNorm(2, 4));
  compare(enn::Dropout(0.25), tnn::Dropout(0.25));
  compare(enn::Dropout2d(0.1), tnn::Dropout2d(0.1));
  compare(enn::Embedding(enn::EmbeddingOptions(10, 3).padding_idx(1).max_norm(2)),
          tnn::Embedding(tnn::EmbeddingOptions(10, 3).padding_idx(1).max_norm(2)));
  compare(enn::MaxPool2d(enn::MaxPool2dOptions(2).stride(1)), tnn::MaxPool2d(tnn::MaxPool2dOptions(2).stride(1)));
  compare(enn::AvgPool2d(3), tnn::AvgPool2d(3));
  compare(enn::AdaptiveAvgPool2d(enn::AdaptiveAvgPool2dOptions({3, std::nullopt})),
          tnn::AdaptiveAvgPool2d(tnn::AdaptiveAvgPool2dOptions({3, c10::nullopt})));
  compare(enn::ReLU(), tnn::ReLU());
  compare(enn::ReLU(true), tnn::ReLU(true));
  compare(enn::ReLU6(), tnn::ReLU6());
  compare(enn::LeakyReLU(enn::LeakyReLUOptions().negative_slope(0.2)), tnn::LeakyReLU(tnn::LeakyReLUOptions().negative_slope(0.2)));
  compare(enn::GELU(), tnn::GELU());
  compare(enn::SiLU(), tnn::SiLU());
  compare(enn::ELU(), tnn::ELU());
  compare(enn::Softplus(), tnn::Softplus());
  compare(enn::Sigmoid(), tnn::Sigmoid());
  compare(enn::Tanh(), tnn::Tanh());
  compare(enn::Softmax(1), tnn::Softmax(1));
  compare(enn::LogSoftmax(1), tnn::LogSoftmax(1));
  compare(enn::Identity(), tnn::Identity());
  compare(enn::Flatten(), tnn::Flatten());
  compare(enn::Unflatten(1, std::vector<int64_t>{2, 2}), tnn::Unflatten(1, std::vector<int64_t>{2, 2}));
  compare(enn::MultiheadAttention(4, 2), tnn::MultiheadAttention(4, 2));
  compare(enn::TransformerEncoderLayer(8, 2), tnn::TransformerEncoderLayer(8, 2));
  compare(enn::MSELoss(), tnn::MSELoss());
  compare(enn::CrossEntropyLoss(), tnn::CrossEntropyLoss());
  compare(enn::Sequential(enn::Linear(2, 3), enn::ReLU(), enn::Dropout(), enn::Linear(3, 1)),
          tnn::Sequential(tnn::Linear(2, 3), tnn::ReLU(), tnn::Dropout(), tnn::Linear(3, 1)));
  enn::ModuleList el(enn::Linear(1, 2), enn::Tanh());
  tnn::ModuleList tl(tnn::Linear(1, 2), tnn::Tanh());
  compare(el, tl);
}

namespace {

// One row of the table below: the same module in both libraries (parameters copied from Ember's
// into libtorch's by name, which also checks names and order), its printed form, its output on a
// random input, and the gradients of the input and of every parameter.
template <class EM, class TM>
std::function<void()> module_row(EM e, TM t, std::vector<int64_t> shape, bool positive = false) {
  return [e, t, shape, positive]() mutable {
    SCOPED_TRACE(str(t));
    EXPECT_EQ(str(e), str(t));
    parity::copy_module_state(*e, *t);
    ember::Tensor v = rnd(shape, 900 + shape.size());
    if (positive) v = v.abs() + 0.5;
    ember::Tensor x = v.detach().requires_grad_(true);
    torch::Tensor tx = T(v).detach().requires_grad_(true);
    // Through a clone: libtorch's inplace=true modules write into their input.
    ember::Tensor y = e(x.clone());
    torch::Tensor ty = t(tx.clone());
    ASSERT_TRUE(Close(y, ty, {1e-5, 1e-5}));
    ember::Tensor g = rnd(y.sizes(), 77);
    (y * g).sum().backward();
    (ty * T(g)).sum().backward();
    EXPECT_TRUE(Close(x.grad(), tx.grad(), {1e-4, 1e-5}));
    auto tp = t->named_parameters();
    for (const auto& p : e->named_parameters()) {
      EXPECT_TRUE(Close(p.value().grad(), tp[p.key()].grad(), {1e-4, 1e-5})) << p.key();
    }
  };
}

}  // namespace

// The modules added for libtorch's full list, one row each, in training mode (where it matters
// the row's module is deterministic) and then eval.
TEST(NnParity, ModuleTable) {
  using Row = std::function<void()>;
  std::vector<Row> rows = {
      module_row(enn::Conv3d(enn::Conv3dOptions(2, 4, 3).stride(2).padding(1)),
                 tnn::Conv3d(tnn::Conv3dOptions(2, 4, 3).stride(2).padding(1)), {2, 2, 5, 5, 5}),
      module_row(enn::ConvTranspose1d(enn::ConvTranspose1dOptions(2, 4, 3).stride(2).output_padding(1)),
                 tnn::ConvTranspose1d(tnn::ConvTranspose1dOptions(2, 4, 3).stride(2).output_padding(1)), {2, 2, 6}),
      module_row(enn::ConvTranspose3d(enn::ConvTranspose3dOptions(2, 4, 2).bias(false)),
                 tnn::ConvTranspose3d(tnn::ConvTranspose3dOptions(2, 4, 2).bias(false)), {1, 2, 3, 3, 3}),
      module_row(enn::MaxPool1d(enn::MaxPool1dOptions(3).stride(2)), tnn::MaxPool1d(tnn::MaxPool1dOptions(3).stride(2)),
                 {2, 3, 11}),
      module_row(enn::AvgPool1d(3), tnn::AvgPool1d(3), {2, 3, 9}),
      module_row(enn::AdaptiveAvgPool1d(4), tnn::AdaptiveAvgPool1d(4), {2, 3, 10}),
      module_row(enn::AdaptiveMaxPool1d(4), tnn::AdaptiveMaxPool1d(4), {2, 3, 10}),
      module_row(enn::AdaptiveMaxPool2d(enn::AdaptiveMaxPool2dOptions({3, std::nullopt})),
                 tnn::AdaptiveMaxPool2d(tnn::AdaptiveMaxPool2dOptions({3, c10::nullopt})), {2, 3, 7, 5}),
      module_row(enn::LPPool1d(2, 3), tnn::LPPool1d(2, 3), {2, 3, 9}),
      module_row(enn::MaxPool3d(enn::MaxPool3dOptions(2).stride(1)), tnn::MaxPool3d(tnn::MaxPool3dOptions(2).stride(1)),
                 {1, 2, 4, 4, 4}),
      module_row(enn::AvgPool3d(2), tnn::AvgPool3d(2), {1, 2, 4, 4, 4}),
      module_row(enn::AdaptiveAvgPool3d(enn::AdaptiveAvgPool3dOptions({2, 3, 1})),
                 tnn::AdaptiveAvgPool3d(tnn::AdaptiveAvgPool3dOptions({2, 3, 1})), {1, 2, 5, 5, 5}),
      module_row(enn::AdaptiveMaxPool3d(enn::AdaptiveMaxPool3dOptions({2, 3, 1})),
                 tnn::AdaptiveMaxPool3d(tnn::AdaptiveMaxPool3dOptions({2, 3, 1})), {1, 2, 5, 5, 5}),
      module_row(enn::LPPool2d(enn::LPPool2dOptions(1.5, {2, 3}).stride(1).ceil_mode(true)),
                 tnn::LPPool2d(tnn::LPPool2dOptions(1.5, {2, 3}).stride(1).ceil_mode(true)), {2, 3, 6, 6}, true),
      module_row(enn::ReflectionPad1d(2), tnn::ReflectionPad1d(2), {2, 3, 5}),
      module_row(enn::ReflectionPad2d(enn::ReflectionPad2dOptions({1, 2, 0, 1})),
                 tnn::ReflectionPad2d(tnn::ReflectionPad2dOptions({1, 2, 0, 1})), {2, 3, 4, 4}),
      module_row(enn::ReflectionPad3d(1), tnn::ReflectionPad3d(1), {1, 2, 3, 3, 3}),
      module_row(enn::ReplicationPad1d(enn::ReplicationPad1dOptions({0, 3})),
                 tnn::ReplicationPad1d(tnn::ReplicationPad1dOptions({0, 3})), {2, 3, 4}),
      module_row(enn::ReplicationPad2d(1), tnn::ReplicationPad2d(1), {2, 3, 4, 4}),
      module_row(enn::ReplicationPad3d(1), tnn::ReplicationPad3d(1), {1, 2, 3, 3, 3}),
      module_row(enn::ZeroPad2d(enn::ZeroPad2dOptions({1, 0, 2, 1})), tnn::ZeroPad2d(tnn::ZeroPad2dOptions({1, 0, 2, 1})),
                 {2, 3, 4, 4}),
      module_row(enn::ConstantPad1d(2, 3.5), tnn::ConstantPad1d(2, 3.5), {2, 3, 4}),
      module_row(enn::ConstantPad2d(enn::ConstantPad2dOptions({1, 2, 3, 4}, -1)),
                 tnn::ConstantPad2d(tnn::ConstantPad2dOptions({1, 2, 3, 4}, -1)), {2, 3, 4, 4}),
      module_row(enn::ConstantPad3d(1, 0.5), tnn::ConstantPad3d(1, 0.5), {1, 2, 3, 3, 3}),
      module_row(enn::PixelShuffle(2), tnn::PixelShuffle(2), {2, 8, 3, 3}),
      module_row(enn::PixelUnshuffle(2), tnn::PixelUnshuffle(2), {2, 2, 6, 6}),
      module_row(enn::Upsample(enn::UpsampleOptions().scale_factor(std::vector<double>{2, 2}).mode(ember::kBilinear).align_corners(false)),
                 tnn::Upsample(tnn::UpsampleOptions().scale_factor(std::vector<double>{2, 2}).mode(torch::kBilinear).align_corners(false)),
                 {2, 3, 4, 5}),
      module_row(enn::Upsample(enn::UpsampleOptions().size(std::vector<int64_t>{7, 9})),
                 tnn::Upsample(tnn::UpsampleOptions().size(std::vector<int64_t>{7, 9})), {2, 3, 4, 5}),
      module_row(enn::BatchNorm3d(3), tnn::BatchNorm3d(3), {2, 3, 2, 3, 3}),
      module_row(enn::InstanceNorm1d(4), tnn::InstanceNorm1d(4), {2, 4, 6}),
      module_row(enn::InstanceNorm2d(enn::InstanceNormOptions(4).affine(true).track_running_stats(true)),
                 tnn::InstanceNorm2d(tnn::InstanceNormOptions(4).affine(true).track_running_stats(true)), {2, 4, 3, 5}),
      module_row(enn::InstanceNorm3d(enn::InstanceNormOptions(2).affine(true)),
                 tnn::InstanceNorm3d(tnn::InstanceNormOptions(2).affine(true)), {2, 3, 3, 3}),
      module_row(enn::LocalResponseNorm(3), tnn::LocalResponseNorm(3), {2, 5, 4, 4}),
      module_row(enn::Unfold(enn::UnfoldOptions({2, 3}).stride(2)), tnn::Unfold(tnn::UnfoldOptions({2, 3}).stride(2)),
                 {2, 3, 6, 7}),
      module_row(enn::Fold(enn::FoldOptions({4, 5}, {2, 2})), tnn::Fold(tnn::FoldOptions({4, 5}, {2, 2})), {2, 8, 12}),
      module_row(enn::SELU(), tnn::SELU(), {3, 7}),
      module_row(enn::SELU(true), tnn::SELU(true), {3, 7}),
      module_row(enn::GLU(), tnn::GLU(), {3, 8}),
      module_row(enn::GLU(0), tnn::GLU(0), {4, 3}),
      module_row(enn::Hardshrink(), tnn::Hardshrink(), {3, 7}),
      module_row(enn::Softshrink(0.3), tnn::Softshrink(0.3), {3, 7}),
      module_row(enn::Hardtanh(), tnn::Hardtanh(), {3, 7}),
      module_row(enn::Hardtanh(enn::HardtanhOptions().min_val(-2).inplace(true)),
                 tnn::Hardtanh(tnn::HardtanhOptions().min_val(-2).inplace(true)), {3, 7}),
      module_row(enn::CELU(), tnn::CELU(), {3, 7}),
      module_row(enn::CELU(enn::CELUOptions().alpha(2).inplace(true)), tnn::CELU(tnn::CELUOptions().alpha(2).inplace(true)),
                 {3, 7}),
      module_row(enn::Threshold(0.1, 20), tnn::Threshold(0.1, 20), {3, 7}),
      module_row(enn::Threshold(enn::ThresholdOptions(0.1, 20).inplace(true)),
                 tnn::Threshold(tnn::ThresholdOptions(0.1, 20).inplace(true)), {3, 7}),
      module_row(enn::Softmin(1), tnn::Softmin(1), {3, 7}),
      module_row(enn::Softmax2d(), tnn::Softmax2d(), {2, 3, 4, 4}),
      module_row(enn::LogSigmoid(), tnn::LogSigmoid(), {3, 7}),
      module_row(enn::Softsign(), tnn::Softsign(), {3, 7}),
      module_row(enn::Tanhshrink(), tnn::Tanhshrink(), {3, 7}),
      module_row(enn::Mish(), tnn::Mish(), {3, 7}),
      module_row(enn::PReLU(), tnn::PReLU(), {2, 3, 4}),
      module_row(enn::PReLU(enn::PReLUOptions().num_parameters(3).init(0.1)),
                 tnn::PReLU(tnn::PReLUOptions().num_parameters(3).init(0.1)), {2, 3, 4}),
  };
  for (auto& row : rows) row();
  // CrossMapLRN2d: the forward and printed form. Ember's gradient is the exact derivative of the
  // forward; libtorch's hand-written backward (from Lua Torch) is not, so gradients differ.
  {
    ember::NoGradGuard no_grad;
    enn::CrossMapLRN2d e(enn::CrossMapLRN2dOptions(3).alpha(0.01).k(2));
    tnn::CrossMapLRN2d t(tnn::CrossMapLRN2dOptions(3).alpha(0.01).k(2));
    EXPECT_EQ(str(e), str(t));
    for (int64_t c : {1, 2, 5, 7}) expect_forward(e, t, rnd({2, c, 3, 3}, 90 + c));
  }
  // Random in training: eval rows only.
  auto eval_row = [](auto e, auto t, std::vector<int64_t> shape) {
    e->eval();
    t->eval();
    return module_row(e, t, std::move(shape));
  };
  eval_row(enn::RReLU(), tnn::RReLU(), {3, 7})();
  eval_row(enn::RReLU(enn::RReLUOptions().lower(0.1).upper(0.2).inplace(true)),
           tnn::RReLU(tnn::RReLUOptions().lower(0.1).upper(0.2).inplace(true)), {3, 7})();
  eval_row(enn::Dropout3d(), tnn::Dropout3d(), {2, 3, 2, 2, 2})();
  eval_row(enn::AlphaDropout(0.2), tnn::AlphaDropout(0.2), {3, 7})();
  eval_row(enn::FeatureAlphaDropout(), tnn::FeatureAlphaDropout(), {2, 3, 4})();
}

// The printed forms of the modules that take two or three inputs.
TEST(NnParity, PrettyPrintOfLossesAndDistances) {
  auto compare = [](auto e, auto t) { EXPECT_EQ(str(e), str(t)); };
  compare(enn::MarginRankingLoss(), tnn::MarginRankingLoss());
  compare(enn::HingeEmbeddingLoss(), tnn::HingeEmbeddingLoss());
  compare(enn::MultiMarginLoss(), tnn::MultiMarginLoss());
  compare(enn::MultiMarginLoss(enn::MultiMarginLossOptions().p(2).margin(0.5).reduction(ember::kSum)),
          tnn::MultiMarginLoss(tnn::MultiMarginLossOptions().p(2).margin(0.5).reduction(torch::kSum)));
  compare(enn::CosineEmbeddingLoss(), tnn::CosineEmbeddingLoss());
  compare(enn::MultiLabelMarginLoss(), tnn::MultiLabelMarginLoss());
  compare(enn::SoftMarginLoss(), tnn::SoftMarginLoss());
  compare(enn::MultiLabelSoftMarginLoss(), tnn::MultiLabelSoftMarginLoss());
  compare(enn::TripletMarginLoss(), tnn::TripletMarginLoss());
  compare(enn::TripletMarginWithDistanceLoss(), tnn::TripletMarginWithDistanceLoss());
  compare(enn::PoissonNLLLoss(), tnn::PoissonNLLLoss());
  compare(enn::CTCLoss(), tnn::CTCLoss());
  compare(enn::CosineSimilarity(), tnn::CosineSimilarity());
  compare(enn::PairwiseDistance(), tnn::PairwiseDistance());
  compare(enn::MaxUnpool1d(3), tnn::MaxUnpool1d(3));
  compare(enn::MaxUnpool2d(enn::MaxUnpool2dOptions(2).stride(1).padding(1)),
          tnn::MaxUnpool2d(tnn::MaxUnpool2dOptions(2).stride(1).padding(1)));
  compare(enn::MaxUnpool3d(2), tnn::MaxUnpool3d(2));
  compare(enn::Functional(ember::relu), tnn::Functional(torch::relu));
}

TEST(NnParity, EmbeddingBagModule) {
  ember::NoGradGuard no_grad;
  torch::NoGradGuard torch_no_grad;
  ember::Tensor idx = ember::tensor({{1, 4, 0}, {2, 2, 9}});
  enn::EmbeddingBag e(10, 3);
  tnn::EmbeddingBag t(10, 3);
  EXPECT_EQ(str(e), str(t));
  parity::copy_module_state(*e, *t);
  EXPECT_TRUE(Close(e(idx), t(T(idx))));
  enn::EmbeddingBag e2(enn::EmbeddingBagOptions(10, 3).mode(ember::kSum).max_norm(1.5).padding_idx(2).include_last_offset(true));
  tnn::EmbeddingBag t2(tnn::EmbeddingBagOptions(10, 3).mode(torch::kSum).max_norm(1.5).padding_idx(2).include_last_offset(true));
  EXPECT_EQ(str(e2), str(t2));
  parity::copy_module_state(*e2, *t2);
  ember::Tensor flat = idx.reshape({-1}), offsets = ember::tensor({0, 2, 6});
  EXPECT_TRUE(Close(e2(flat, offsets), t2(T(flat), T(offsets))));
  EXPECT_TRUE(Close(e2->weight, t2->weight));  // max_norm renormalized the same rows
  enn::EmbeddingBag e3 = enn::EmbeddingBag::from_pretrained(rnd({4, 2}, 70), enn::EmbeddingBagFromPretrainedOptions().mode(ember::kMax));
  EXPECT_FALSE(e3->weight.requires_grad());
  EXPECT_EQ(str(e3), "torch::nn::EmbeddingBag(num_embeddings=4, embedding_dim=2, mode=kMax)");
}

TEST(NnParity, ParameterContainers) {
  ember::Tensor a = rnd({2, 3}, 61), b = rnd({4}, 62);
  enn::ParameterList el(a, b.to(ember::kDouble));
  tnn::ParameterList tl(T(a), T(b).to(torch::kDouble));
  EXPECT_EQ(str(el), str(tl));
  EXPECT_EQ(el->named_parameters().keys(), tl->named_parameters().keys());
  EXPECT_EQ(el->size(), tl->size());
  EXPECT_TRUE(Close(el[1], tl[1]));
  enn::ParameterDict ed;
  tnn::ParameterDict td;
  ed->insert("w", a);
  td->insert("w", T(a));
  ed->insert("bias", b);
  td->insert("bias", T(b));
  EXPECT_EQ(str(ed), str(td));
  EXPECT_EQ(ed->keys(), td->keys());
  EXPECT_TRUE(Close(ed->pop("w"), td->pop("w")));
  EXPECT_EQ(ed->keys(), td->keys());
  // A module holding them lists their parameters under the container's name.
  struct Net : enn::Module {
    Net() { list = register_module("list", enn::ParameterList(ember::zeros({2}), ember::ones({1}))); }
    enn::ParameterList list{nullptr};
  };
  Net net;
  EXPECT_EQ(net.named_parameters().keys(), (std::vector<std::string>{"list.0", "list.1"}));
  enn::Functional f(ember::leaky_relu, 0.2);
  tnn::Functional tf(torch::leaky_relu, 0.2);
  ember::Tensor x = rnd({5}, 63);
  EXPECT_TRUE(Close(f(x), tf(T(x))));
}

// The loss modules call their functional forms (checked against libtorch's in
// nn_functional_parity); here the modules with their options.
TEST(NnParity, NewLossModules) {
  ember::Tensor x = rnd({4, 5}, 51), x2 = rnd({4, 5}, 52), x3 = rnd({4, 5}, 53);
  ember::Tensor sign = ember::tensor(std::vector<float>{1, -1, -1, 1});
  ember::Tensor cls = ember::tensor({0, 4, 2, 2});
  ember::Tensor bits = (rnd({4, 5}, 54) > 0).to(ember::kFloat);
  ember::Tensor multi = ember::tensor({{3, 0, -1, 1, 1}, {4, 2, -1, 0, 0}, {0, 1, 2, 3, 4}, {-1, 0, 0, 0, 0}});
  EXPECT_TRUE(Close(enn::MarginRankingLoss(enn::MarginRankingLossOptions().margin(0.1))(x.select(1, 0), x2.select(1, 0), sign),
                    tnn::MarginRankingLoss(tnn::MarginRankingLossOptions().margin(0.1))(T(x.select(1, 0)), T(x2.select(1, 0)), T(sign))));
  EXPECT_TRUE(Close(enn::HingeEmbeddingLoss()(x.select(1, 0), sign), tnn::HingeEmbeddingLoss()(T(x.select(1, 0)), T(sign))));
  EXPECT_TRUE(Close(enn::MultiMarginLoss()(x, cls), tnn::MultiMarginLoss()(T(x), T(cls))));
  EXPECT_TRUE(Close(enn::CosineEmbeddingLoss(enn::CosineEmbeddingLossOptions().margin(0.3))(x, x2, sign),
                    tnn::CosineEmbeddingLoss(tnn::CosineEmbeddingLossOptions().margin(0.3))(T(x), T(x2), T(sign))));
  EXPECT_TRUE(Close(enn::MultiLabelMarginLoss(ember::kSum)(x, multi), tnn::MultiLabelMarginLoss(torch::kSum)(T(x), T(multi))));
  EXPECT_TRUE(Close(enn::SoftMarginLoss()(x, bits * 2 - 1), tnn::SoftMarginLoss()(T(x), T(bits * 2 - 1))));
  EXPECT_TRUE(Close(enn::MultiLabelSoftMarginLoss(enn::MultiLabelSoftMarginLossOptions().reduction(ember::kNone))(x, bits),
                    tnn::MultiLabelSoftMarginLoss(tnn::MultiLabelSoftMarginLossOptions().reduction(torch::kNone))(T(x), T(bits))));
  EXPECT_TRUE(Close(enn::TripletMarginLoss()(x, x2, x3), tnn::TripletMarginLoss()(T(x), T(x2), T(x3))));
  EXPECT_TRUE(Close(enn::TripletMarginWithDistanceLoss()(x, x2, x3), tnn::TripletMarginWithDistanceLoss()(T(x), T(x2), T(x3))));
  EXPECT_TRUE(Close(enn::PoissonNLLLoss()(x, bits), tnn::PoissonNLLLoss()(T(x), T(bits))));
  EXPECT_TRUE(Close(enn::CosineSimilarity()(x, x2), tnn::CosineSimilarity()(T(x), T(x2))));
  // CTC: an input too short for its target has an infinite loss, or zero with zero_infinity.
  ember::Tensor lp = rnd({3, 2, 4}, 55).log_softmax(2);
  ember::Tensor tg = ember::tensor({{1, 1, 1}, {3, 0, 0}}), il = ember::tensor({3, 3}), tl = ember::tensor({3, 1});
  EXPECT_TRUE(Close(enn::CTCLoss(enn::CTCLossOptions().reduction(ember::kNone))(lp, tg, il, tl),
                    tnn::CTCLoss(tnn::CTCLossOptions().reduction(torch::kNone))(T(lp), T(tg), T(il), T(tl))));
  EXPECT_TRUE(Close(enn::CTCLoss(enn::CTCLossOptions().zero_infinity(true))(lp, tg, il, tl),
                    tnn::CTCLoss(tnn::CTCLossOptions().zero_infinity(true))(T(lp), T(tg), T(il), T(tl))));
  EXPECT_TRUE(Close(enn::PairwiseDistance()(x, x2), tnn::PairwiseDistance()(T(x), T(x2))));
}

TEST(NnParity, DiracInit) {
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{4, 3, 3, 3}, {2, 5, 3}, {3, 3, 2, 3, 4}}) {
    ember::Tensor e = enn::init::dirac_(ember::empty(shape));
    torch::Tensor t = tnn::init::dirac_(torch::empty(shape));
    EXPECT_TRUE(Close(e, t)) << ember::IntArrayRef(shape);
  }
}

// The decoder layer, the stacks and the whole Transformer on shared weights (parameter names and
// order as libtorch's), with masks; the stacks' layers start as copies of the layer given.
TEST(NnParity, TransformerDecoderStacksAndTransformer) {
  ember::NoGradGuard no_grad;
  torch::NoGradGuard torch_no_grad;
  const ember::Tensor src = rnd({5, 2, 8}, 70), tgt = rnd({4, 2, 8}, 71);
  const ember::Tensor tgt_mask = enn::TransformerImpl::generate_square_subsequent_mask(4);
  EXPECT_TRUE(Close(tgt_mask, tnn::TransformerImpl::generate_square_subsequent_mask(4)));
  const ember::Tensor kpm = ember::tensor({{false, false, false, true, true}, {false, false, false, false, false}});

  enn::TransformerDecoderLayer ed(enn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(16));
  tnn::TransformerDecoderLayer td(tnn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(16));
  ed->eval();
  td->eval();
  parity::copy_module_state(*ed, *td);
  EXPECT_TRUE(Close(ed(tgt, src, tgt_mask), td(T(tgt), T(src), T(tgt_mask)), {1e-5, 1e-5}));
  EXPECT_EQ(str(ed), str(td));

  enn::TransformerEncoder ee(enn::TransformerEncoderOptions(enn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16), 2)
                                 .norm(enn::AnyModule(enn::LayerNorm(enn::LayerNormOptions({8})))));
  tnn::TransformerEncoder te(tnn::TransformerEncoderOptions(tnn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16), 2)
                                 .norm(tnn::AnyModule(tnn::LayerNorm(tnn::LayerNormOptions({8})))));
  const auto layers = ee->named_parameters();
  EXPECT_TRUE(layers["layers.0.linear1.weight"].equal(layers["layers.1.linear1.weight"]));  // copies of one layer
  EXPECT_FALSE(layers["layers.0.linear1.weight"].is_same(layers["layers.1.linear1.weight"]));
  ee->eval();
  te->eval();
  parity::copy_module_state(*ee, *te);
  const ember::Tensor none;
  const torch::Tensor tnone;
  EXPECT_TRUE(Close(ee(src, none, kpm), te(T(src), tnone, T(kpm)), {1e-5, 1e-5}));

  enn::TransformerDecoder edd(enn::TransformerDecoderOptions(enn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(16), 3));
  tnn::TransformerDecoder tdd(tnn::TransformerDecoderOptions(tnn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(16), 3));
  edd->eval();
  tdd->eval();
  parity::copy_module_state(*edd, *tdd);
  EXPECT_TRUE(Close(edd(tgt, src, tgt_mask, none, none, kpm), tdd(T(tgt), T(src), T(tgt_mask), tnone, tnone, T(kpm)),
                    {1e-5, 1e-5}));

  enn::Transformer et(enn::TransformerOptions(8, 2, 2, 2).dim_feedforward(16).activation(ember::kGELU));
  tnn::Transformer tt(tnn::TransformerOptions(8, 2, 2, 2).dim_feedforward(16).activation(torch::kGELU));
  et->eval();
  tt->eval();
  parity::copy_module_state(*et, *tt);
  EXPECT_TRUE(Close(et(src, tgt, none, tgt_mask, none, kpm, none, kpm),
                    tt(T(src), T(tgt), tnone, T(tgt_mask), tnone, T(kpm), tnone, T(kpm)), {1e-5, 1e-5}));
  EXPECT_EQ(str(et), str(tt));
  // every matrix is xavier-initialized: bounded by sqrt(6 / (fan_in + fan_out))
  enn::Transformer fresh(enn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16));
  for (const auto& p : fresh->named_parameters())
    if (p.value().dim() == 2)
      EXPECT_LE(p.value().abs().max().item<double>(), std::sqrt(6.0 / (p.value().size(0) + p.value().size(1))) + 1e-6)
          << p.key();
  try {
    et(src, rnd({4, 3, 8}, 72));
    ADD_FAILURE() << "a batch mismatch was accepted";
  } catch (const ember::Error& e) {
    EXPECT_NE(std::string(e.what()).find("src and tgt should have equal batch size"), std::string::npos) << e.what();
  }
}

// AdaptiveLogSoftmaxWithLoss on shared weights: parameter names, printed form, forward (output
// and loss), log_prob, predict and the parameters' gradients; batched and unbatched.
TEST(NnParity, AdaptiveLogSoftmaxWithLoss) {
  enn::AdaptiveLogSoftmaxWithLoss e(enn::AdaptiveLogSoftmaxWithLossOptions(8, 10, {4, 8}).div_value(2.).head_bias(true));
  tnn::AdaptiveLogSoftmaxWithLoss t(tnn::AdaptiveLogSoftmaxWithLossOptions(8, 10, {4, 8}).div_value(2.).head_bias(true));
  parity::copy_module_state(*e, *t);
  EXPECT_EQ(str(e), str(t));
  EXPECT_EQ(e->shortlist_size, t->shortlist_size);
  EXPECT_EQ(e->n_clusters, t->n_clusters);
  EXPECT_EQ(e->head_size, t->head_size);
  const ember::Tensor x = rnd({6, 8}, 60);
  const ember::Tensor target = ember::tensor({0, 9, 4, 7, 3, 8}, ember::kLong);
  const enn::ASMoutput eo = e(x, target);
  const tnn::ASMoutput to = t(T(x), T(target));
  EXPECT_TRUE(Close(eo.output, to.output, {1e-5, 1e-5}));
  EXPECT_NEAR(eo.loss, to.loss, 1e-5);
  eo.output.sum().backward();
  to.output.sum().backward();
  for (const auto& item : e->named_parameters())
    EXPECT_TRUE(Close(item.value().grad(), t->named_parameters()[item.key()].grad(), {1e-5, 1e-5})) << item.key();
  EXPECT_TRUE(Close(e->log_prob(x), t->log_prob(T(x)), {1e-5, 1e-5}));
  const ember::Tensor many = rnd({40, 8}, 61) * 3;
  EXPECT_TRUE(Close(e->predict(many), t->predict(T(many))));
  const enn::ASMoutput single = e(x[1], target[1]);
  EXPECT_EQ(single.output.dim(), 0);
  EXPECT_NEAR(single.output.item<double>(), eo.output[1].item<double>(), 1e-6);
  // bad input: a target out of range, cutoffs out of order
  EXPECT_THROW(e(x, ember::tensor({0, 10, 4, 7, 3, 8}, ember::kLong)), ember::Error);
  EXPECT_THROW(enn::AdaptiveLogSoftmaxWithLoss(enn::AdaptiveLogSoftmaxWithLossOptions(8, 10, {8, 4})), ember::Error);
  EXPECT_THROW(e(x, target.narrow(0, 0, 5)), ember::Error);
}

}  // namespace EMBER_UNITY_FILE
