// Options of the recurrent modules (RNN, LSTM, GRU) and their cells, as libtorch's
// torch/nn/options/rnn.h.
#pragma once
#include <variant>

#include "ember/nn/options.h"

namespace ember::nn {
namespace detail {
// What RNN, LSTM and GRU share: the module's kind (and RNN's nonlinearity) as a mode tag.
struct RNNOptionsBase {
  using rnn_options_base_mode_t =
      std::variant<enumtype::kLSTM, enumtype::kGRU, enumtype::kRNN_TANH, enumtype::kRNN_RELU>;
  RNNOptionsBase(rnn_options_base_mode_t mode, int64_t input_size, int64_t hidden_size)
      : mode_(mode), input_size_(input_size), hidden_size_(hidden_size) {}
  EMBER_ARG(rnn_options_base_mode_t, mode);
  EMBER_ARG(int64_t, input_size);
  EMBER_ARG(int64_t, hidden_size);
  EMBER_ARG(int64_t, num_layers) = 1;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(bool, batch_first) = false;
  EMBER_ARG(double, dropout) = 0.0;
  EMBER_ARG(bool, bidirectional) = false;
  EMBER_ARG(int64_t, proj_size) = 0;
};
}  // namespace detail

struct RNNOptions {
  using nonlinearity_t = std::variant<enumtype::kTanh, enumtype::kReLU>;
  RNNOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  EMBER_ARG(int64_t, input_size);
  EMBER_ARG(int64_t, hidden_size);
  EMBER_ARG(int64_t, num_layers) = 1;
  EMBER_ARG(nonlinearity_t, nonlinearity) = kTanh;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(bool, batch_first) = false;
  EMBER_ARG(double, dropout) = 0.0;
  EMBER_ARG(bool, bidirectional) = false;
};

struct LSTMOptions {
  LSTMOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  EMBER_ARG(int64_t, input_size);
  EMBER_ARG(int64_t, hidden_size);
  EMBER_ARG(int64_t, num_layers) = 1;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(bool, batch_first) = false;
  EMBER_ARG(double, dropout) = 0.0;
  EMBER_ARG(bool, bidirectional) = false;
  // > 0: h_t is projected to proj_size by weight_hr (LSTM with projections).
  EMBER_ARG(int64_t, proj_size) = 0;
};

struct GRUOptions {
  GRUOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  EMBER_ARG(int64_t, input_size);
  EMBER_ARG(int64_t, hidden_size);
  EMBER_ARG(int64_t, num_layers) = 1;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(bool, batch_first) = false;
  EMBER_ARG(double, dropout) = 0.0;
  EMBER_ARG(bool, bidirectional) = false;
};

namespace detail {
// What the cells share: num_chunks gates of hidden_size each (1 RNN, 4 LSTM, 3 GRU).
struct RNNCellOptionsBase {
  RNNCellOptionsBase(int64_t input_size, int64_t hidden_size, bool bias, int64_t num_chunks)
      : input_size_(input_size), hidden_size_(hidden_size), bias_(bias), num_chunks_(num_chunks) {}
  virtual ~RNNCellOptionsBase() = default;
  EMBER_ARG(int64_t, input_size);
  EMBER_ARG(int64_t, hidden_size);
  EMBER_ARG(bool, bias);
  EMBER_ARG(int64_t, num_chunks);
};
}  // namespace detail

struct RNNCellOptions {
  using nonlinearity_t = std::variant<enumtype::kTanh, enumtype::kReLU>;
  RNNCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  EMBER_ARG(int64_t, input_size);
  EMBER_ARG(int64_t, hidden_size);
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(nonlinearity_t, nonlinearity) = kTanh;
};

struct LSTMCellOptions {
  LSTMCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  EMBER_ARG(int64_t, input_size);
  EMBER_ARG(int64_t, hidden_size);
  EMBER_ARG(bool, bias) = true;
};

struct GRUCellOptions {
  GRUCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  EMBER_ARG(int64_t, input_size);
  EMBER_ARG(int64_t, hidden_size);
  EMBER_ARG(bool, bias) = true;
};
}  // namespace ember::nn
