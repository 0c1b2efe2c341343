// The recurrent modules RNN (tanh/relu), LSTM (with projections) and GRU, and their cells, as
// libtorch's torch/nn/modules/rnn.h: options, parameter names and order, return types.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ember/nn/options/rnn.h"
#include "ember/nn/pimpl.h"
#include "ember/nn/utils/rnn.h"

namespace ember::nn {
namespace quantized::dynamic {
class LinearImpl;
}
namespace detail {

// What RNN, LSTM and GRU share: the parameters of every layer and direction (named as
// PyTorch's: weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, weight_hr_l0, then the
// _reverse ones, then layer 1, ...), their init, the checks and one recurrence for all three.
class RNNImplBase : public Module {
 public:
  explicit RNNImplBase(const RNNOptionsBase& options_);
  void reset();
  // Every parameter uniform in +-1/sqrt(hidden_size), as PyTorch.
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  // The weights are used where they are (no cuDNN flat buffer): nothing to do.
  void flatten_parameters() {}
  // The parameters in flat_weights_names_ order.
  std::vector<Tensor> all_weights() const;

  RNNOptionsBase options_base;
  // Set by quantization::quantize_dynamic (LSTM, GRU): per parameter in all_weights() order, the
  // weight matrix's dynamic int8 Linear (null for the biases), which forward then uses for the
  // input, hidden and projection products (inference only: no gradient reaches the weights).
  std::vector<std::shared_ptr<quantized::dynamic::LinearImpl>> dynamic_quantized;

 protected:
  void check_input(const Tensor& input, const Tensor& batch_sizes) const;
  std::tuple<int64_t, int64_t, int64_t> get_expected_hidden_size(const Tensor& input, const Tensor& batch_sizes) const;
  void check_hidden_size(const Tensor& hx, std::tuple<int64_t, int64_t, int64_t> expected_hidden_size,
                         std::string msg = "Expected hidden size {1}, got {2}") const;
  Tensor permute_hidden(Tensor hx, const Tensor& permutation) const;

  // The recurrence over padded (batch_sizes undefined: input (T, B, *) time-major) or packed
  // input (data (sum batch_sizes, *)). states: {h0} or {h0, c0}, undefined for zeros, in the
  // sorted batch order. Returns the output (same layout as input) and {h_n} or {h_n, c_n}.
  std::tuple<Tensor, std::vector<Tensor>> run(const Tensor& input, const Tensor& batch_sizes,
                                              std::vector<Tensor> states) const;
  // forward/forward_with_packed_input of the three modules: unbatched and batch_first inputs,
  // the checks, default states, and states permuted into and out of a packed batch's order.
  std::tuple<Tensor, std::vector<Tensor>> forward_padded(const Tensor& input, std::vector<Tensor> states);
  std::tuple<utils::rnn::PackedSequence, std::vector<Tensor>> forward_packed(
      const utils::rnn::PackedSequence& packed, std::vector<Tensor> states);

  std::vector<std::string> flat_weights_names_;
  std::vector<std::vector<std::string>> all_weights_;
  std::vector<Tensor> flat_weights_;

 private:
  int64_t gate_count() const;
  int64_t real_hidden_size() const;
  void check_states(const Tensor& input, const Tensor& batch_sizes, const std::vector<Tensor>& states) const;
  std::vector<Tensor> default_states(const Tensor& input, int64_t batch) const;
};

// What the cells share: weight_ih (chunks * hidden, input), weight_hh (chunks * hidden, hidden),
// bias_ih, bias_hh; init uniform in +-1/sqrt(hidden_size).
class RNNCellImplBase : public Module {
 public:
  explicit RNNCellImplBase(const RNNCellOptionsBase& options_);
  void reset();
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;

  RNNCellOptionsBase options_base;
  Tensor weight_ih;
  Tensor weight_hh;
  Tensor bias_ih;
  Tensor bias_hh;

 protected:
  void check_forward_input(const Tensor& input, const std::string& name) const;
  void check_forward_hidden(const Tensor& input, const Tensor& hx, const std::string& hidden_label) const;
  virtual std::string get_nonlinearity_str() const { return ""; }
  const char* cell_name() const;
  // input and states as 2-D (an unbatched 1-D input gains a batch of 1); checks and defaults.
  std::tuple<Tensor, std::vector<Tensor>, bool> prepare(const Tensor& input, std::vector<Tensor> states) const;
};

}  // namespace detail

class RNNImpl : public detail::RNNImplBase {
 public:
  RNNImpl(int64_t input_size, int64_t hidden_size) : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  explicit RNNImpl(const RNNOptions& options_);
  // input (T, B, input_size) ((B, T, *) with batch_first) or unbatched (T, input_size); hx
  // (num_layers * directions, B, hidden_size), zeros when undefined. Returns (output, h_n).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, Tensor hx = {});

  RNNOptions options;
};
EMBER_MODULE(RNN);

class LSTMImpl : public detail::RNNImplBase {
 public:
  LSTMImpl(int64_t input_size, int64_t hidden_size) : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  explicit LSTMImpl(const LSTMOptions& options_);
  // Returns (output, (h_n, c_n)); h has proj_size features when proj_size > 0.
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& input,
                                                         std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
  std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});

  LSTMOptions options;
};
EMBER_MODULE(LSTM);

class GRUImpl : public detail::RNNImplBase {
 public:
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  explicit GRUImpl(const GRUOptions& options_);
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, Tensor hx = {});

  GRUOptions options;
};
EMBER_MODULE(GRU);

class RNNCellImpl : public detail::RNNCellImplBase {
 public:
  RNNCellImpl(int64_t input_size, int64_t hidden_size) : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  explicit RNNCellImpl(const RNNCellOptions& options_);
  // input (B, input_size) or (input_size), hx (B, hidden_size) or zeros: h'.
  Tensor forward(const Tensor& input, Tensor hx = {});

  RNNCellOptions options;

 protected:
  std::string get_nonlinearity_str() const override;
};
EMBER_MODULE(RNNCell);

class LSTMCellImpl : public detail::RNNCellImplBase {
 public:
  LSTMCellImpl(int64_t input_size, int64_t hidden_size) : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  explicit LSTMCellImpl(const LSTMCellOptions& options_);
  // Returns (h', c').
  std::tuple<Tensor, Tensor> forward(const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});

  LSTMCellOptions options;
};
EMBER_MODULE(LSTMCell);

class GRUCellImpl : public detail::RNNCellImplBase {
 public:
  GRUCellImpl(int64_t input_size, int64_t hidden_size) : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  explicit GRUCellImpl(const GRUCellOptions& options_);
  Tensor forward(const Tensor& input, Tensor hx = {});

  GRUCellOptions options;
};
EMBER_MODULE(GRUCell);

}  // namespace ember::nn
