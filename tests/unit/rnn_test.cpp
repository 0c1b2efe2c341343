// Recurrent modules, cells and packed sequences: bad input raises ember::Error with PyTorch's
// messages, gradcheck of the cells in float64 (input, states and every parameter), init, dropout
// between layers, grad-free runs, and libtorch's spellings through <ember/torch.h>.
#include <gtest/gtest.h>

#include <cmath>

#include "ember/torch.h"
#include "expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace nn = ember::nn;
namespace rnn = ember::nn::utils::rnn;
using ember::Tensor;
using ember::autograd::gradcheck;
using ember::autograd::variable_list;

namespace {
Tensor randn(ember::IntArrayRef sizes, uint64_t seed, ember::ScalarType dtype = ember::kFloat) {
  ember::Generator g(seed);
  return ember::randn(sizes, &g, ember::TensorOptions().dtype(dtype));
}
}  // namespace

TEST(RnnErrors, InputFeatureSize) {
  nn::LSTM lstm(10, 20);
  EXPECT_ERROR(lstm(randn({5, 3, 7}, 1)), "LSTM", "input.size(-1) must be equal to input_size. Expected 10, got 7");
  nn::GRU gru(10, 20);
  EXPECT_ERROR(gru(randn({5, 7}, 1)), "GRU", "input.size(-1) must be equal to input_size. Expected 10, got 7");
  nn::RNN rnn_(nn::RNNOptions(10, 20).batch_first(true));
  EXPECT_ERROR(rnn_(randn({3, 5, 7}, 1)), "input.size(-1) must be equal to input_size. Expected 10, got 7");
  EXPECT_ERROR(lstm(randn({5, 3, 3, 10}, 1)), "Expected input to be 2-D or 3-D but received 4-D tensor");
}

TEST(RnnErrors, HiddenStateShape) {
  nn::GRU gru(10, 20);
  const Tensor x = randn({5, 3, 10}, 1);
  EXPECT_ERROR(gru(x, randn({2, 3, 20}, 2)), "GRU", "Expected hidden size (1, 3, 20), got [2, 3, 20]");
  EXPECT_ERROR(gru(x, randn({1, 4, 20}, 2)), "Expected hidden size (1, 3, 20), got [1, 4, 20]");
  nn::RNN rnn_(nn::RNNOptions(10, 20).num_layers(2).bidirectional(true));
  EXPECT_ERROR(rnn_(x, randn({2, 3, 20}, 2)), "RNN", "Expected hidden size (4, 3, 20), got [2, 3, 20]");
  nn::LSTM lstm(nn::LSTMOptions(10, 20).proj_size(5));
  EXPECT_ERROR(lstm(x, std::make_tuple(randn({1, 3, 20}, 2), randn({1, 3, 20}, 3))),
               "Expected hidden[0] size (1, 3, 5), got [1, 3, 20]");
  EXPECT_ERROR(lstm(x, std::make_tuple(randn({1, 3, 5}, 2), randn({1, 2, 20}, 3))),
               "Expected hidden[1] size (1, 3, 20), got [1, 2, 20]");
  EXPECT_ERROR(gru(randn({5, 10}, 1), randn({1, 3, 20}, 2)),
               "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor");
  EXPECT_ERROR(gru(x, randn({3, 20}, 2)), "For batched 3-D input, hx should also be 3-D but got 2-D tensor");
  // A packed batch: the hidden state's batch is the packed batch's.
  const auto packed = rnn::pack_sequence({randn({4, 10}, 4), randn({2, 10}, 5)});
  EXPECT_ERROR(gru->forward_with_packed_input(packed, randn({1, 3, 20}, 6)),
               "Expected hidden size (1, 2, 20), got [1, 3, 20]");
}

TEST(RnnErrors, CellInputs) {
  nn::LSTMCell lstm(10, 20);
  EXPECT_ERROR(lstm(randn({3, 7}, 1)), "LSTMCell", "input has inconsistent input_size: got 7 expected 10");
  EXPECT_ERROR(lstm(randn({3, 10}, 1), std::make_tuple(randn({2, 20}, 2), randn({3, 20}, 3))),
               "Input batch size 3 doesn't match hidden0 batch size 2");
  EXPECT_ERROR(lstm(randn({3, 10}, 1), std::make_tuple(randn({3, 20}, 2), randn({3, 21}, 3))),
               "hidden1 has inconsistent hidden_size: got 21, expected 20");
  EXPECT_ERROR(lstm(randn({3, 3, 10}, 1)), "LSTMCell", "Expected input to be 1-D or 2-D but received 3-D tensor");
  nn::GRUCell gru(10, 20);
  EXPECT_ERROR(gru(randn({3, 10}, 1), randn({3, 21}, 2)), "GRUCell",
               "hidden0 has inconsistent hidden_size: got 21, expected 20");
  nn::RNNCell cell(10, 20);
  EXPECT_ERROR(cell(randn({3, 10}, 1), randn({2, 20}, 2)), "RNNCell",
               "Input batch size 3 doesn't match hidden0 batch size 2");
}

TEST(RnnErrors, Options) {
  EXPECT_ERROR(nn::LSTM(nn::LSTMOptions(4, 5).dropout(1.5)),
               "dropout should be a number in range [0, 1] representing the probability of an element being zeroed");
  EXPECT_ERROR(nn::LSTM(nn::LSTMOptions(4, 5).proj_size(5)), "proj_size has to be smaller than hidden_size");
  EXPECT_ERROR(nn::LSTM(nn::LSTMOptions(4, 5).proj_size(-1)),
               "proj_size should be a positive integer or zero to disable projections");
}

TEST(RnnErrors, Packing) {
  const Tensor x = randn({5, 3, 4}, 1);
  EXPECT_ERROR(rnn::pack_padded_sequence(x, ember::tensor(std::vector<int64_t>{3, 5, 2})),
               "pack_padded_sequence", "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True");
  EXPECT_ERROR(rnn::pack_sequence({randn({2, 4}, 1), randn({3, 4}, 2)}),
               "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True");
  // Lengths longer than the padded sequence, sorted or not.
  EXPECT_ERROR(rnn::pack_padded_sequence(x, ember::tensor(std::vector<int64_t>{6, 5, 2})),
               "Expected every length to be at most the padded sequence length 5, but got a length of 6");
  EXPECT_ERROR(rnn::pack_padded_sequence(x, ember::tensor(std::vector<int64_t>{2, 6, 5}), false, false),
               "at most the padded sequence length 5");
  EXPECT_ERROR(rnn::pack_padded_sequence(x, ember::tensor(std::vector<int64_t>{3, 2, 6}), true, false),
               "at most the padded sequence length 3");
  EXPECT_ERROR(rnn::pack_padded_sequence(x, ember::tensor(std::vector<int64_t>{5, 3, 0})),
               "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0");
  EXPECT_ERROR(rnn::pack_padded_sequence(x, ember::tensor(std::vector<int64_t>{5, 3})),
               "Expected `len(lengths)` to be equal to batch_size, but got 2 (batch_size=3)");
  const auto packed = rnn::pack_sequence({randn({3, 2}, 1)});
  EXPECT_ERROR(rnn::pad_packed_sequence(packed, false, 0.0, 2),
               "Expected total_length to be at least the length of the longest sequence in input, but got "
               "total_length=2 and max sequence length being 3");
  // A packed sequence made by hand (or by TorchScript code) whose batch sizes grow or vanish.
  nn::LSTM lstm(2, 3);
  const auto grows = rnn::PackedSequence(randn({4, 2}, 3), ember::tensor(std::vector<int64_t>{1, 3}));
  EXPECT_ERROR(lstm->forward_with_packed_input(grows), "batch_sizes must be positive and non-increasing, got 3 at step 1 after 1");
  const Tensor h0 = ember::zeros({1, 2, 3});
  EXPECT_ERROR(ember::lstm(randn({2, 2}, 4), ember::tensor(std::vector<int64_t>{2, 0}), {h0, h0}, lstm->all_weights(), true,
                           1, 0.0, false, false),
               "batch_sizes must be positive and non-increasing, got 0 at step 1");
  EXPECT_ERROR(ember::gru(randn({2, 2}, 4), ember::ones({2}), h0, lstm->all_weights(), true, 1, 0.0, false, false),
               "batch_sizes must be a 1-D integer tensor");
}

// Each cell's gradient with respect to its input, states and parameters, by finite differences
// in float64. The cells read their weight members, so the checked tensors are swapped in.
TEST(RnnGrad, Cells) {
  for (bool bias : {true, false}) {
    nn::RNNCell rnn_cell(nn::RNNCellOptions(3, 4).bias(bias));
    nn::GRUCell gru_cell(nn::GRUCellOptions(3, 4).bias(bias));
    nn::LSTMCell lstm_cell(nn::LSTMCellOptions(3, 4).bias(bias));
    auto leaves = [&](nn::detail::RNNCellImplBase& cell, int states) {
      cell.to(ember::kDouble);
      variable_list v = {randn({2, 3}, 1, ember::kDouble).requires_grad_()};
      for (int i = 0; i < states; ++i) v.push_back(randn({2, 4}, 2 + i, ember::kDouble).requires_grad_());
      for (Tensor* p : {&cell.weight_ih, &cell.weight_hh, &cell.bias_ih, &cell.bias_hh})
        if (p->defined()) v.push_back(p->detach().clone().requires_grad_());
      return v;
    };
    auto use = [](nn::detail::RNNCellImplBase& cell, const variable_list& v, size_t first) {
      cell.weight_ih = v[first];
      cell.weight_hh = v[first + 1];
      if (v.size() > first + 2) {
        cell.bias_ih = v[first + 2];
        cell.bias_hh = v[first + 3];
      }
    };
    const variable_list rv = leaves(*rnn_cell, 1);
    EXPECT_TRUE(gradcheck([&](const variable_list& v) { use(*rnn_cell, v, 2); return rnn_cell(v[0], v[1]); }, rv));
    const variable_list gv = leaves(*gru_cell, 1);
    EXPECT_TRUE(gradcheck([&](const variable_list& v) { use(*gru_cell, v, 2); return gru_cell(v[0], v[1]); }, gv));
    const variable_list lv = leaves(*lstm_cell, 2);
    EXPECT_TRUE(gradcheck(
        [&](const variable_list& v) {
          use(*lstm_cell, v, 3);
          auto [h, c] = lstm_cell(v[0], std::make_tuple(v[1], v[2]));
          return variable_list{h, c};
        },
        lv));
  }
}

// A two-layer bidirectional LSTM with projections, in float64, with respect to input and states.
TEST(RnnGrad, LSTMModule) {
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).proj_size(2));
  lstm->to(ember::kDouble);
  const variable_list v = {randn({4, 2, 3}, 1, ember::kDouble).requires_grad_(),
                           randn({4, 2, 2}, 2, ember::kDouble).requires_grad_(),
                           randn({4, 2, 4}, 3, ember::kDouble).requires_grad_()};
  EXPECT_TRUE(gradcheck(
      [&](const variable_list& in) {
        auto [out, hc] = lstm(in[0], std::make_tuple(in[1], in[2]));
        return variable_list{out, std::get<0>(hc), std::get<1>(hc)};
      },
      v));
}

TEST(RnnModules, InitAndNames) {
  nn::GRU gru(nn::GRUOptions(3, 16).num_layers(2).bidirectional(true));
  const double bound = 1.0 / std::sqrt(16.0);
  std::vector<std::string> names;
  for (const auto& p : gru->named_parameters()) {
    names.push_back(p.key());
    EXPECT_LE(p.value().abs().max().item<float>(), bound) << p.key();
    EXPECT_GT(p.value().abs().max().item<float>(), bound * 0.5) << p.key();  // spread over the range
  }
  const std::vector<std::string> expected = {
      "weight_ih_l0",         "weight_hh_l0",         "bias_ih_l0",         "bias_hh_l0",
      "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse",
      "weight_ih_l1",         "weight_hh_l1",         "bias_ih_l1",         "bias_hh_l1",
      "weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse"};
  EXPECT_EQ(names, expected);
  EXPECT_EQ(gru->named_parameters()["weight_ih_l1"].sizes(), ember::IntArrayRef({48, 32}));
  nn::LSTM lstm(nn::LSTMOptions(3, 8).proj_size(2).bias(false));
  EXPECT_EQ(lstm->named_parameters().keys(), (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "weight_hr_l0"}));
  EXPECT_EQ(lstm->named_parameters()["weight_hh_l0"].sizes(), ember::IntArrayRef({32, 2}));
  EXPECT_EQ(lstm->named_parameters()["weight_hr_l0"].sizes(), ember::IntArrayRef({2, 8}));
}

TEST(RnnModules, DropoutBetweenLayersOnlyInTraining) {
  nn::LSTM lstm(nn::LSTMOptions(3, 8).num_layers(2).dropout(0.5));
  const Tensor x = randn({6, 2, 3}, 1);
  lstm->eval();
  const Tensor a = std::get<0>(lstm(x)), b = std::get<0>(lstm(x));
  EXPECT_TRUE(a.equal(b));
  lstm->train();
  ember::manual_seed(3);
  const Tensor c = std::get<0>(lstm(x));
  EXPECT_FALSE(c.allclose(a));
  ember::manual_seed(3);
  EXPECT_TRUE(std::get<0>(lstm(x)).equal(c));  // the dropout draws from the global generator
}

// Without a graph (no_grad, inference mode) the steps take their in-place path: same results.
template <class M, class... Args>
void expect_grad_free_match(M& m, const Tensor& x, const Args&... states) {
  auto outputs = [](const auto& r) {
    if constexpr (std::is_same_v<std::decay_t<decltype(r)>, Tensor>) {
      return std::vector<Tensor>{r};
    } else if constexpr (std::is_same_v<std::decay_t<decltype(std::get<1>(r))>, Tensor>) {
      return std::vector<Tensor>{std::get<0>(r), std::get<1>(r)};
    } else {
      return std::vector<Tensor>{std::get<0>(r), std::get<0>(std::get<1>(r)), std::get<1>(std::get<1>(r))};
    }
  };
  const std::vector<Tensor> with_graph = outputs(m(x, states...));
  EXPECT_TRUE(with_graph[0].requires_grad());
  for (int mode = 0; mode < 2; ++mode) {
    std::vector<Tensor> without;
    if (mode == 0) {
      ember::NoGradGuard no_grad;
      without = outputs(m(x, states...));
    } else {
      ember::InferenceMode inference;
      without = outputs(m(x, states...));
    }
    ASSERT_EQ(without.size(), with_graph.size());
    for (size_t i = 0; i < without.size(); ++i) {
      EXPECT_FALSE(without[i].requires_grad());
      EXPECT_EQ(without[i].sizes(), with_graph[i].sizes());
      EXPECT_TRUE(without[i].allclose(with_graph[i].detach(), 1e-6, 1e-6)) << m->name() << " output " << i;
    }
  }
}

TEST(RnnModules, GradFreeRunsMatch) {
  nn::GRU gru(nn::GRUOptions(3, 8).num_layers(2).bidirectional(true).batch_first(true));
  expect_grad_free_match(gru, randn({2, 6, 3}, 1));
  expect_grad_free_match(gru, randn({2, 6, 3}, 1), randn({4, 2, 8}, 2));
  nn::LSTM lstm(nn::LSTMOptions(3, 8).num_layers(2).bidirectional(true).proj_size(4));
  expect_grad_free_match(lstm, randn({6, 2, 3}, 1));
  expect_grad_free_match(lstm, randn({6, 1, 3}, 1), std::make_tuple(randn({4, 1, 4}, 2), randn({4, 1, 8}, 3)));
  nn::RNN tanh_rnn(nn::RNNOptions(3, 8).num_layers(2));
  expect_grad_free_match(tanh_rnn, randn({6, 2, 3}, 1));
  nn::RNN relu_rnn(nn::RNNOptions(3, 8).nonlinearity(ember::kReLU));
  expect_grad_free_match(relu_rnn, randn({6, 2, 3}, 1));
  nn::LSTMCell lstm_cell(3, 8);
  expect_grad_free_match(lstm_cell, randn({2, 3}, 1), std::make_tuple(randn({2, 8}, 2), randn({2, 8}, 3)));
  nn::GRUCell gru_cell(3, 8);
  expect_grad_free_match(gru_cell, randn({1, 3}, 1), randn({1, 8}, 2));
  nn::RNNCell rnn_cell(3, 8);
  expect_grad_free_match(rnn_cell, randn({2, 3}, 1));
  // Packed input: batches that shrink, down to one row.
  const auto packed = rnn::pack_sequence({randn({5, 3}, 4), randn({2, 3}, 5)});
  auto [with_graph, h] = gru->forward_with_packed_input(packed);
  ember::NoGradGuard no_grad;
  auto [without, h2] = gru->forward_with_packed_input(packed);
  EXPECT_TRUE(without.data().allclose(with_graph.data().detach(), 1e-6, 1e-6));
  EXPECT_TRUE(h2.allclose(h.detach(), 1e-6, 1e-6));
}

// An unbatched sequence gives what a batch of one gives, squeezed.
TEST(RnnModules, UnbatchedIsBatchOfOne) {
  nn::LSTM lstm(nn::LSTMOptions(3, 5).num_layers(2).batch_first(true));
  const Tensor x = randn({4, 3}, 1);
  auto [out, hc] = lstm(x);
  auto [out1, hc1] = lstm(x.unsqueeze(0));
  EXPECT_EQ(out.sizes(), ember::IntArrayRef({4, 5}));
  EXPECT_EQ(std::get<0>(hc).sizes(), ember::IntArrayRef({2, 5}));
  EXPECT_TRUE(out.allclose(out1.squeeze(0)));
  EXPECT_TRUE(std::get<1>(hc).allclose(std::get<1>(hc1).squeeze(1)));
}

// libtorch's spellings resolve through <ember/torch.h>.
TEST(RnnModules, TorchSpellings) {
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(2, 3).num_layers(1));
  std::vector<torch::Tensor> seqs = {torch::ones({3, 2}), torch::ones({1, 2})};
  torch::nn::utils::rnn::PackedSequence packed = torch::nn::utils::rnn::pack_sequence(seqs);
  auto [out, hc] = lstm->forward_with_packed_input(packed);
  auto [padded, lengths] = torch::nn::utils::rnn::pad_packed_sequence(out, /*batch_first=*/true);
  EXPECT_EQ(padded.sizes(), torch::IntArrayRef({2, 3, 3}));
  EXPECT_EQ(lengths[1].item<int64_t>(), 1);
  // Steps beyond a sequence's end are padding.
  EXPECT_EQ(padded[1].narrow(0, 1, 2).abs().sum().item<float>(), 0.0f);
  torch::Tensor p = torch::nn::utils::rnn::pad_sequence(seqs, true, -1.0);
  EXPECT_EQ(p[1][2][0].item<float>(), -1.0f);
  EXPECT_TRUE(torch::nn::utils::rnn::invert_permutation(torch::tensor(std::vector<int64_t>{1, 2, 0}))
                  .equal(torch::tensor(std::vector<int64_t>{2, 0, 1})));
  std::ostringstream os;
  os << *lstm;
  EXPECT_EQ(os.str(),
            "torch::nn::LSTM(input_size=2, hidden_size=3, num_layers=1, bias=true, batch_first=false, dropout=0, "
            "bidirectional=false)");
}

}  // namespace EMBER_UNITY_FILE
