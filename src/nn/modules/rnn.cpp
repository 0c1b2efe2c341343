#include "ember/nn/modules/rnn.h"

#include <cmath>
#include <sstream>

#include "dispatch/dispatch.h"
#include "ember/autocast.h"
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/linalg.h"
#include "ember/nn/init.h"
#include "ember/nn/quantized.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/shape.h"
#include "kernels/cpu/rnn_kernels.h"

namespace ember::nn {
namespace {

// The recurrences: gates of num_chunks * hidden_size per step.
enum class Mode { kLSTM, kGRU, kTanh, kRelu };

Mode mode_of(const detail::RNNOptionsBase::rnn_options_base_mode_t& m) {
  return static_cast<Mode>(m.index());  // the variant lists kLSTM, kGRU, kRNN_TANH, kRNN_RELU
}
int64_t chunks_of(Mode m) { return m == Mode::kLSTM ? 4 : m == Mode::kGRU ? 3 : 1; }
const char* module_name(Mode m) { return m == Mode::kLSTM ? "LSTM" : m == Mode::kGRU ? "GRU" : "RNN"; }

// Whether the ops called now record an autograd graph (grad mode on, outside inference mode).
bool records_graph() { return GradMode::is_enabled() && !InferenceMode::is_enabled(); }

// One layer direction's parameters.
using QLinear = quantized::dynamic::LinearImpl;
struct Weights {
  Tensor w_ih, w_hh, b_ih, b_hh, w_hr;
  QLinear *q_ih = nullptr, *q_hh = nullptr, *q_hr = nullptr;  // after quantize_dynamic
};

// add + x W^T (add: undefined, a bias or the rows to add), by q (W's dynamic int8 Linear) when
// there is one. A single row goes through addmv: the matrix-vector product reads W's rows in
// place, where a one-row matmul with W^T takes a slow strided path. With a graph, linear (then
// add) records a backward about 3x faster than addmm's with a transposed operand; without one,
// addmm saves the separate add.
Tensor add_linear(const Tensor& add, const Tensor& x, const Tensor& w, QLinear* q) {
  if (q) {
    Tensor y = q->forward(x);
    return add.defined() ? y.add_(add) : y;
  }
  if (x.size(0) == 1) {
    const Tensor row = x.select(0, 0);
    return (add.defined() ? addmv(add.dim() == 2 ? add.select(0, 0) : add, w, row) : mv(w, row)).unsqueeze(0);
  }
  if (!add.defined()) return linear(x, w);
  if (records_graph())
    return add.dim() == 1 ? linear(x, w, add) : linear(x, w) + add;
  return addmm(add, x, w.t());
}
struct State {
  Tensor h, c;  // c only for LSTM
};

// x W_ih^T + b_ih for every row of x at once, with b_hh folded in where it adds straight to the
// gates (all but GRU, whose b_hn sits inside r * (h W_hn^T + b_hn)).
Tensor project_input(Mode m, const Tensor& x, const Weights& w) {
  const Tensor bias = !w.b_ih.defined() ? Tensor() : m == Mode::kGRU ? w.b_ih : w.b_ih + w.b_hh;
  return add_linear(bias, x, w.w_ih, w.q_ih);
}

// The same step without a graph (no_grad, inference mode): the gate math runs in place on the
// step's fresh gate rows, which nothing else reads, in fewer ops and without their temporaries.
State step_without_graph(Mode m, Tensor xg, const State& s, const Weights& w) {
  switch (m) {
    case Mode::kTanh: return {add_linear(xg, s.h, w.w_hh, w.q_hh).tanh_(), {}};
    case Mode::kRelu: return {add_linear(xg, s.h, w.w_hh, w.q_hh).relu_(), {}};
    case Mode::kLSTM: {
      Tensor g = add_linear(xg, s.h, w.w_hh, w.q_hh);
      const int64_t H = s.c.size(1);
      g.narrow(1, 0, 2 * H).sigmoid_();  // i, f
      g.narrow(1, 3 * H, H).sigmoid_();  // o
      g.narrow(1, 2 * H, H).tanh_();     // g
      Tensor c = g.narrow(1, H, H) * s.c;
      c.addcmul_(g.narrow(1, 0, H), g.narrow(1, 2 * H, H));
      Tensor h = tanh(c).mul_(g.narrow(1, 3 * H, H));
      if (w.w_hr.defined()) h = add_linear({}, h, w.w_hr, w.q_hr);
      return {h, c};
    }
    case Mode::kGRU: {
      const Tensor hg = add_linear(w.b_hh, s.h, w.w_hh, w.q_hh);
      const int64_t H = s.h.size(1);
      Tensor rz = xg.narrow(1, 0, 2 * H).add_(hg.narrow(1, 0, 2 * H)).sigmoid_();
      Tensor n = addcmul(xg.narrow(1, 2 * H, H), rz.narrow(1, 0, H), hg.narrow(1, 2 * H, H)).tanh_();
      return {n.lerp(s.h, rz.narrow(1, H, H)), {}};  // n + z * (h - n)
    }
  }
  return {};
}

// One time step from the projected input xg (rows of this step) and the state.
State step(Mode m, const Tensor& xg, const State& s, const Weights& w) {
  if (!records_graph()) return step_without_graph(m, xg, s, w);
  switch (m) {
    case Mode::kTanh: return {tanh(add_linear(xg, s.h, w.w_hh, w.q_hh)), {}};
    case Mode::kRelu: return {relu(add_linear(xg, s.h, w.w_hh, w.q_hh)), {}};
    case Mode::kLSTM: {
      const std::vector<Tensor> g = add_linear(xg, s.h, w.w_hh, w.q_hh).chunk(4, 1);  // i, f, g, o
      const Tensor c = sigmoid(g[1]) * s.c + sigmoid(g[0]) * tanh(g[2]);
      Tensor h = sigmoid(g[3]) * tanh(c);
      if (w.w_hr.defined()) h = add_linear({}, h, w.w_hr, w.q_hr);
      return {h, c};
    }
    case Mode::kGRU: {
      const Tensor hg = add_linear(w.b_hh, s.h, w.w_hh, w.q_hh);
      const std::vector<Tensor> xs = xg.chunk(3, 1), hs = hg.chunk(3, 1);  // r, z, n
      const Tensor r = sigmoid(xs[0] + hs[0]);
      const Tensor z = sigmoid(xs[1] + hs[1]);
      const Tensor n = tanh(xs[2] + r * hs[2]);
      return {n + z * (s.h - n), {}};
    }
  }
  return {};
}

State narrow_state(const State& s, int64_t start, int64_t length) {
  return {s.h.narrow(0, start, length), s.c.defined() ? s.c.narrow(0, start, length) : Tensor()};
}

// One direction over the whole sequence: x (sum(batch_sizes), features) time step after time
// step, the batch shrinking as sequences end (packed input; constant for padded input). The
// input projection is one matmul; each step is one matmul with W_hh plus the gate math.
// Returns the per-step h (rows as x) and the final state of every sequence.
std::pair<Tensor, State> run_direction(Mode m, const Tensor& x, const std::vector<int64_t>& batch_sizes,
                                       const State& s0, const Weights& w, bool reverse) {
  const Tensor xg = project_input(m, x, w);
  const std::vector<Tensor> steps = xg.split_with_sizes(batch_sizes, 0);
  const int64_t T = static_cast<int64_t>(batch_sizes.size());
  std::vector<Tensor> outs(static_cast<size_t>(T));
  State s;
  if (!reverse) {
    // Sequences end longest-last: the rows a shrinking batch drops are final states.
    std::vector<State> finished;
    s = s0;
    int64_t rows = s0.h.size(0);
    for (int64_t t = 0; t < T; ++t) {
      const int64_t b = batch_sizes[t];
      if (b < rows) {
        finished.push_back(narrow_state(s, b, rows - b));
        s = narrow_state(s, 0, b);
        rows = b;
      }
      s = step(m, steps[t], s, w);
      outs[t] = s.h;
    }
    if (!finished.empty()) {
      finished.push_back(s);
      std::vector<Tensor> hs, cs;
      for (auto it = finished.rbegin(); it != finished.rend(); ++it) {
        hs.push_back(it->h);
        if (it->c.defined()) cs.push_back(it->c);
      }
      s = {cat(hs, 0), cs.empty() ? Tensor() : cat(cs, 0)};
    }
  } else {
    // From the last step back: sequences join (with their initial state) as the batch grows.
    int64_t rows = T > 0 ? batch_sizes[T - 1] : s0.h.size(0);
    s = rows == s0.h.size(0) ? s0 : narrow_state(s0, 0, rows);
    for (int64_t t = T - 1; t >= 0; --t) {
      const int64_t b = batch_sizes[t];
      if (b > rows) {
        const State more = narrow_state(s0, rows, b - rows);
        s = {cat({s.h, more.h}, 0), s.c.defined() ? cat({s.c, more.c}, 0) : Tensor()};
        rows = b;
      }
      s = step(m, steps[t], s, w);
      outs[t] = s.h;
    }
  }
  return {T == 1 ? outs[0] : cat(outs, 0), s};
}

// The layers of a recurrence, shared by the modules and ATen's rnn functions. x: time-major rows
// (T * B, features), or a packed sequence's rows when `sizes` are its batch sizes; states: h0 (and
// c0 for LSTM) of (layers * directions, B, ...); params in PyTorch's flat order, per layer and
// direction w_ih, w_hh[, b_ih, b_hh][, w_hr]. Returns the last layer's rows and (h_n[, c_n]).
std::pair<Tensor, std::vector<Tensor>> run_layers(Mode m, Tensor x, const std::vector<int64_t>& sizes,
                                                  const std::vector<Tensor>& states, TensorList params,
                                                  bool has_biases, int64_t layers, bool bidirectional,
                                                  double dropout_p, bool train,
                                                  const std::vector<std::shared_ptr<QLinear>>* quantized = nullptr) {
  const int64_t directions = bidirectional ? 2 : 1;
  const size_t groups = static_cast<size_t>(layers * directions), plain = has_biases ? 4 : 2;
  EMBER_CHECK(layers > 0 && params.size() % groups == 0 &&
                  (params.size() / groups == plain || (m == Mode::kLSTM && params.size() / groups == plain + 1)),
              module_name(m), "expected ", groups * plain, " parameters (w_ih, w_hh", has_biases ? ", b_ih, b_hh" : "",
              " for each of ", layers, " layers and ", directions, " directions), got ", params.size());
  const size_t per = params.size() / groups;
  // h0 (layers * directions, batch, w_hh's columns: the hidden or projection size), c0 of the
  // hidden size (w_hh's rows per gate)
  const Tensor& w_hh = params[1];
  const int64_t batch = sizes.at(0), hidden = w_hh.size(0) / chunks_of(m);
  for (size_t i = 0; i < (m == Mode::kLSTM ? 2u : 1u); ++i) {
    const int64_t features = i == 0 ? w_hh.size(1) : hidden;
    EMBER_CHECK(states.at(i).dim() == 3 && states[i].size(0) == static_cast<int64_t>(groups) &&
                    states[i].size(1) == batch && states[i].size(2) == features,
                module_name(m), "Expected hidden", m == Mode::kLSTM ? (i == 0 ? "[0]" : "[1]") : "", " size (", groups,
                ", ", batch, ", ", features, "), got ", states[i].sizes());
  }
  const std::vector<Tensor> h0 = states[0].unbind(0);
  const std::vector<Tensor> c0 = m == Mode::kLSTM ? states[1].unbind(0) : std::vector<Tensor>();
  std::vector<Tensor> h_n, c_n;
  for (int64_t layer = 0; layer < layers; ++layer) {
    std::vector<Tensor> outs;
    for (int64_t direction = 0; direction < directions; ++direction) {
      const size_t idx = static_cast<size_t>(layer * directions + direction);
      const Tensor* p = &params[idx * per];
      Weights w{p[0], p[1], {}, {}, {}};
      if (has_biases) {
        w.b_ih = p[2];
        w.b_hh = p[3];
      }
      if (per > plain) w.w_hr = p[plain];
      if (quantized) {
        const std::shared_ptr<QLinear>* q = &(*quantized)[idx * per];
        w.q_ih = q[0].get();
        w.q_hh = q[1].get();
        if (per > plain) w.q_hr = q[plain].get();
      }
      auto [out, s] = run_direction(m, x, sizes, State{h0[idx], c0.empty() ? Tensor() : c0[idx]}, w, direction == 1);
      outs.push_back(std::move(out));
      h_n.push_back(s.h);
      if (s.c.defined()) c_n.push_back(s.c);
    }
    x = directions == 2 ? cat(outs, 1) : outs[0];
    if (dropout_p > 0 && train && layer + 1 < layers) x = dropout(x, dropout_p, true);
  }
  std::vector<Tensor> final_states = {stack(h_n, 0)};
  if (m == Mode::kLSTM) final_states.push_back(stack(c_n, 0));
  return {x, final_states};
}

std::string size_string(std::tuple<int64_t, int64_t, int64_t> s) {
  std::ostringstream os;
  os << '(' << std::get<0>(s) << ", " << std::get<1>(s) << ", " << std::get<2>(s) << ')';
  return os.str();
}

std::string replace_all(std::string msg, const std::string& what, const std::string& with) {
  for (size_t pos = msg.find(what); pos != std::string::npos; pos = msg.find(what, pos + with.size()))
    msg.replace(pos, what.size(), with);
  return msg;
}

// A packed sequence's batch sizes, checked: sequences only end, so each step has at least one
// and at most as many as the step before.
std::vector<int64_t> batch_sizes_vector(const Tensor& batch_sizes) {
  EMBER_CHECK(batch_sizes.dim() == 1 && batch_sizes.numel() > 0 && is_integral_type(batch_sizes.dtype(), false),
              "PackedSequence", "batch_sizes must be a 1-D integer tensor of at least one step, got ",
              to_string(batch_sizes.dtype()), " of size ", batch_sizes.sizes());
  const Tensor b = batch_sizes.to(kLong).contiguous();
  const int64_t* p = b.data_ptr<int64_t>();
  for (int64_t i = 0; i < b.numel(); ++i)
    EMBER_CHECK(p[i] >= 1 && (i == 0 || p[i] <= p[i - 1]), "PackedSequence",
                "batch_sizes must be positive and non-increasing, got ", p[i], " at step ", i,
                i > 0 ? " after " : "", i > 0 ? std::to_string(p[i - 1]) : std::string());
  return std::vector<int64_t>(p, p + b.numel());
}

detail::RNNOptionsBase base_options(detail::RNNOptionsBase::rnn_options_base_mode_t mode, int64_t input_size,
                                    int64_t hidden_size, int64_t num_layers, bool bias, bool batch_first,
                                    double dropout, bool bidirectional, int64_t proj_size) {
  return detail::RNNOptionsBase(mode, input_size, hidden_size)
      .num_layers(num_layers)
      .bias(bias)
      .batch_first(batch_first)
      .dropout(dropout)
      .bidirectional(bidirectional)
      .proj_size(proj_size);
}

}  // namespace

namespace detail {

// ---- RNN, LSTM, GRU ---------------------------------------------------------------------------

RNNImplBase::RNNImplBase(const RNNOptionsBase& options_) : options_base(options_) { reset(); }

int64_t RNNImplBase::gate_count() const { return chunks_of(mode_of(options_base.mode())); }
int64_t RNNImplBase::real_hidden_size() const {
  return options_base.proj_size() > 0 ? options_base.proj_size() : options_base.hidden_size();
}

void RNNImplBase::reset() {
  const RNNOptionsBase& o = options_base;
  const char* name = module_name(mode_of(o.mode()));
  EMBER_CHECK(o.dropout() >= 0 && o.dropout() <= 1, name,
              "dropout should be a number in range [0, 1] representing the probability of an element being zeroed");
  EMBER_CHECK(o.num_layers() >= 1, name, "num_layers must be at least 1, got ", o.num_layers());
  EMBER_CHECK(o.input_size() >= 0 && o.hidden_size() > 0, name,
              "hidden_size must be positive and input_size non-negative, got ", o.hidden_size(), " and ",
              o.input_size());
  EMBER_CHECK(o.proj_size() >= 0, name, "proj_size should be a positive integer or zero to disable projections");
  EMBER_CHECK(o.proj_size() < o.hidden_size(), name, "proj_size has to be smaller than hidden_size");
  EMBER_CHECK(o.proj_size() == 0 || mode_of(o.mode()) == Mode::kLSTM, name, "proj_size argument is only supported for LSTM, not RNN or GRU");
  flat_weights_names_.clear();
  all_weights_.clear();
  flat_weights_.clear();
  const int64_t gate = gate_count() * o.hidden_size(), real_hidden = real_hidden_size();
  const int64_t directions = o.bidirectional() ? 2 : 1;
  for (int64_t layer = 0; layer < o.num_layers(); ++layer) {
    for (int64_t direction = 0; direction < directions; ++direction) {
      const int64_t layer_input = layer == 0 ? o.input_size() : real_hidden * directions;
      const std::string suffix = "_l" + std::to_string(layer) + (direction == 1 ? "_reverse" : "");
      std::vector<std::pair<std::string, Tensor>> params = {{"weight_ih" + suffix, empty({gate, layer_input})},
                                                            {"weight_hh" + suffix, empty({gate, real_hidden})}};
      if (o.bias()) {
        params.emplace_back("bias_ih" + suffix, empty({gate}));
        params.emplace_back("bias_hh" + suffix, empty({gate}));
      }
      if (o.proj_size() > 0) params.emplace_back("weight_hr" + suffix, empty({o.proj_size(), o.hidden_size()}));
      std::vector<std::string> names;
      for (auto& [n, t] : params) {
        flat_weights_.push_back(register_parameter(n, t));
        flat_weights_names_.push_back(n);
        names.push_back(n);
      }
      all_weights_.push_back(std::move(names));
    }
  }
  reset_parameters();
}

void RNNImplBase::reset_parameters() {
  const double stdv = 1.0 / std::sqrt(static_cast<double>(options_base.hidden_size()));
  for (Tensor& w : flat_weights_) init::uniform_(w, -stdv, stdv);
}

std::vector<Tensor> RNNImplBase::all_weights() const { return flat_weights_; }

void RNNImplBase::pretty_print(std::ostream& stream) const {
  const RNNOptionsBase& o = options_base;
  stream << std::boolalpha << (dynamic_quantized.empty() ? "torch::nn::" : "DynamicQuantized")
         << module_name(mode_of(o.mode())) << "(input_size=" << o.input_size()
         << ", hidden_size=" << o.hidden_size() << ", num_layers=" << o.num_layers() << ", bias=" << o.bias()
         << ", batch_first=" << o.batch_first() << ", dropout=" << o.dropout()
         << ", bidirectional=" << o.bidirectional();
  if (o.proj_size() > 0) stream << ", proj_size=" << o.proj_size();
  stream << ")";
}

void RNNImplBase::check_input(const Tensor& input, const Tensor& batch_sizes) const {
  const char* name = module_name(mode_of(options_base.mode()));
  const int64_t expected_dim = batch_sizes.defined() ? 2 : 3;
  EMBER_CHECK(input.dim() == expected_dim, name, "input must have ", expected_dim, " dimensions, got ", input.dim());
  EMBER_CHECK(input.size(-1) == options_base.input_size(), name,
              "input.size(-1) must be equal to input_size. Expected ", options_base.input_size(), ", got ",
              input.size(-1));
}

std::tuple<int64_t, int64_t, int64_t> RNNImplBase::get_expected_hidden_size(const Tensor& input,
                                                                              const Tensor& batch_sizes) const {
  const int64_t mini_batch = batch_sizes.defined() ? batch_sizes_vector(batch_sizes).at(0) : input.size(1);
  const int64_t directions = options_base.bidirectional() ? 2 : 1;
  return {options_base.num_layers() * directions, mini_batch, real_hidden_size()};
}

void RNNImplBase::check_hidden_size(const Tensor& hx, std::tuple<int64_t, int64_t, int64_t> expected,
                                    std::string msg) const {
  const bool ok = hx.dim() == 3 && hx.size(0) == std::get<0>(expected) && hx.size(1) == std::get<1>(expected) &&
                  hx.size(2) == std::get<2>(expected);
  if (ok) return;
  std::ostringstream got;
  got << hx.sizes();
  msg = replace_all(replace_all(std::move(msg), "{1}", size_string(expected)), "{2}", got.str());
  ::ember::detail::fail(module_name(mode_of(options_base.mode())), msg);
}

Tensor RNNImplBase::permute_hidden(Tensor hx, const Tensor& permutation) const {
  if (!permutation.defined() || !hx.defined()) return hx;
  return hx.index_select(1, permutation);
}

void RNNImplBase::check_states(const Tensor& input, const Tensor& batch_sizes,
                               const std::vector<Tensor>& states) const {
  const auto expected = get_expected_hidden_size(input, batch_sizes);
  if (states.size() == 1) {
    if (states[0].defined()) check_hidden_size(states[0], expected);
    return;
  }
  if (states[0].defined()) check_hidden_size(states[0], expected, "Expected hidden[0] size {1}, got {2}");
  if (states[1].defined())
    check_hidden_size(states[1], {std::get<0>(expected), std::get<1>(expected), options_base.hidden_size()},
                      "Expected hidden[1] size {1}, got {2}");
}

std::vector<Tensor> RNNImplBase::default_states(const Tensor& input, int64_t batch) const {
  const int64_t layers = options_base.num_layers() * (options_base.bidirectional() ? 2 : 1);
  const TensorOptions opts = TensorOptions().dtype(input.dtype());
  std::vector<Tensor> states = {zeros({layers, batch, real_hidden_size()}, opts)};
  if (mode_of(options_base.mode()) == Mode::kLSTM)
    states.push_back(zeros({layers, batch, options_base.hidden_size()}, opts));
  return states;
}

std::tuple<Tensor, std::vector<Tensor>> RNNImplBase::run(const Tensor& input, const Tensor& batch_sizes,
                                                         std::vector<Tensor> states) const {
  const Mode m = mode_of(options_base.mode());
  const bool packed = batch_sizes.defined();
  const int64_t T = packed ? 0 : input.size(0);
  const int64_t B = packed ? batch_sizes_vector(batch_sizes).at(0) : input.size(1);
  const std::vector<int64_t> sizes = packed ? batch_sizes_vector(batch_sizes) : std::vector<int64_t>(T, B);
  EMBER_CHECK(!sizes.empty(), module_name(m), "expected a sequence of at least one time step, got input of size ",
              input.sizes());
  const std::vector<Tensor> defaults = default_states(input, B);
  for (size_t i = 0; i < states.size(); ++i)
    if (!states[i].defined()) states[i] = defaults[i];
  auto [x, final_states] =
      run_layers(m, packed ? input : input.reshape({T * B, input.size(2)}), sizes, states, flat_weights_,
                 options_base.bias(), options_base.num_layers(), options_base.bidirectional(), options_base.dropout(),
                 is_training(), dynamic_quantized.empty() ? nullptr : &dynamic_quantized);
  return {packed ? x : x.view({T, B, x.size(1)}), final_states};
}

std::tuple<Tensor, std::vector<Tensor>> RNNImplBase::forward_padded(const Tensor& input, std::vector<Tensor> states) {
  const char* name = module_name(mode_of(options_base.mode()));
  EMBER_CHECK(input.dim() == 2 || input.dim() == 3, name, "Expected input to be 2-D or 3-D but received ",
              input.dim(), "-D tensor");
  const bool batched = input.dim() == 3;
  // Time-major inside: an unbatched (T, features) input is a batch of one.
  Tensor x = batched ? (options_base.batch_first() ? input.transpose(0, 1) : input) : input.unsqueeze(1);
  for (Tensor& s : states) {
    if (!s.defined()) continue;
    if (batched) {
      EMBER_CHECK(s.dim() == 3, name, "For batched 3-D input, hx should also be 3-D but got ", s.dim(), "-D tensor");
    } else {
      EMBER_CHECK(s.dim() == 2, name, "For unbatched 2-D input, hx should also be 2-D but got ", s.dim(),
                  "-D tensor");
      s = s.unsqueeze(1);
    }
  }
  check_input(x, {});
  check_states(x, {}, states);
  auto [out, final_states] = run(x, {}, std::move(states));
  if (!batched) {
    out = out.squeeze(1);
    for (Tensor& s : final_states) s = s.squeeze(1);
  } else if (options_base.batch_first()) {
    out = out.transpose(0, 1);
  }
  return {out, final_states};
}

std::tuple<utils::rnn::PackedSequence, std::vector<Tensor>> RNNImplBase::forward_packed(
    const utils::rnn::PackedSequence& packed, std::vector<Tensor> states) {
  for (Tensor& s : states) s = permute_hidden(s, packed.sorted_indices());
  check_input(packed.data(), packed.batch_sizes());
  check_states(packed.data(), packed.batch_sizes(), states);
  auto [out, final_states] = run(packed.data(), packed.batch_sizes(), std::move(states));
  for (Tensor& s : final_states) s = permute_hidden(s, packed.unsorted_indices());
  return {utils::rnn::PackedSequence(out, packed.batch_sizes(), packed.sorted_indices(), packed.unsorted_indices()),
          final_states};
}

// ---- cells --------------------------------------------------------------------------------------

RNNCellImplBase::RNNCellImplBase(const RNNCellOptionsBase& options_) : options_base(options_) { reset(); }

void RNNCellImplBase::reset() {
  const RNNCellOptionsBase& o = options_base;
  const int64_t gate = o.num_chunks() * o.hidden_size();
  weight_ih = register_parameter("weight_ih", empty({gate, o.input_size()}));
  weight_hh = register_parameter("weight_hh", empty({gate, o.hidden_size()}));
  bias_ih = register_parameter("bias_ih", o.bias() ? empty({gate}) : Tensor(), o.bias());
  bias_hh = register_parameter("bias_hh", o.bias() ? empty({gate}) : Tensor(), o.bias());
  reset_parameters();
}

void RNNCellImplBase::reset_parameters() {
  const double stdv = 1.0 / std::sqrt(static_cast<double>(options_base.hidden_size()));
  for (Tensor* w : {&weight_ih, &weight_hh, &bias_ih, &bias_hh})
    if (w->defined()) init::uniform_(*w, -stdv, stdv);
}

void RNNCellImplBase::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::" << cell_name() << "("
         << options_base.input_size() << ", " << options_base.hidden_size();
  if (!options_base.bias()) stream << ", bias=false";
  const std::string nonlinearity = get_nonlinearity_str();
  if (!nonlinearity.empty() && nonlinearity != "kTanh") stream << ", nonlinearity=" << nonlinearity;
  stream << ")";
}

const char* RNNCellImplBase::cell_name() const {
  const int64_t chunks = options_base.num_chunks();
  return chunks == 4 ? "LSTMCell" : chunks == 3 ? "GRUCell" : "RNNCell";
}

void RNNCellImplBase::check_forward_input(const Tensor& input, const std::string& name) const {
  EMBER_CHECK(input.size(1) == options_base.input_size(), cell_name(), name, " has inconsistent input_size: got ",
              input.size(1), " expected ", options_base.input_size());
}

void RNNCellImplBase::check_forward_hidden(const Tensor& input, const Tensor& hx,
                                           const std::string& hidden_label) const {
  EMBER_CHECK(hx.dim() == 2, cell_name(), hidden_label, " must be 2-D (batch, hidden_size), got ", hx.sizes());
  EMBER_CHECK(input.size(0) == hx.size(0), cell_name(), "Input batch size ", input.size(0), " doesn't match ",
              hidden_label, " batch size ", hx.size(0));
  EMBER_CHECK(hx.size(1) == options_base.hidden_size(), cell_name(), hidden_label,
              " has inconsistent hidden_size: got ", hx.size(1), ", expected ", options_base.hidden_size());
}

std::tuple<Tensor, std::vector<Tensor>, bool> RNNCellImplBase::prepare(const Tensor& input,
                                                                       std::vector<Tensor> states) const {
  EMBER_CHECK(input.dim() == 1 || input.dim() == 2, cell_name(), "Expected input to be 1-D or 2-D but received ",
              input.dim(), "-D tensor");
  const bool batched = input.dim() == 2;
  const Tensor x = batched ? input : input.unsqueeze(0);
  check_forward_input(x, "input");
  for (size_t i = 0; i < states.size(); ++i) {
    Tensor& s = states[i];
    if (!s.defined()) {
      s = zeros({x.size(0), options_base.hidden_size()}, TensorOptions().dtype(x.dtype()));
      continue;
    }
    if (!batched) {
      EMBER_CHECK(s.dim() == 1, cell_name(), "For unbatched 1-D input, hidden", i, " should also be 1-D but got ",
                  s.dim(), "-D tensor");
      s = s.unsqueeze(0);
    }
    check_forward_hidden(x, s, "hidden" + std::to_string(i));
  }
  return {x, states, batched};
}

}  // namespace detail

namespace {
// A cell's one step through the recurrence shared with the sequence modules.
State cell_step(Mode m, const detail::RNNCellImplBase& cell, const Tensor& x, const State& s) {
  const Weights w{cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh, {}};
  return step(m, project_input(m, x, w), s, w);
}
}  // namespace

RNNImpl::RNNImpl(const RNNOptions& options_)
    : RNNImplBase(base_options(std::holds_alternative<enumtype::kTanh>(options_.nonlinearity())
                                   ? detail::RNNOptionsBase::rnn_options_base_mode_t(kRNN_TANH)
                                   : detail::RNNOptionsBase::rnn_options_base_mode_t(kRNN_RELU),
                               options_.input_size(), options_.hidden_size(), options_.num_layers(), options_.bias(),
                               options_.batch_first(), options_.dropout(), options_.bidirectional(), 0)),
      options(options_) {}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, Tensor hx) {
  auto [out, states] = forward_padded(input, {std::move(hx)});
  return {out, states[0]};
}

std::tuple<utils::rnn::PackedSequence, Tensor> RNNImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, Tensor hx) {
  auto [out, states] = forward_packed(packed_input, {std::move(hx)});
  return {out, states[0]};
}

LSTMImpl::LSTMImpl(const LSTMOptions& options_)
    : RNNImplBase(base_options(kLSTM, options_.input_size(), options_.hidden_size(), options_.num_layers(),
                               options_.bias(), options_.batch_first(), options_.dropout(), options_.bidirectional(),
                               options_.proj_size())),
      options(options_) {}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(const Tensor& input,
                                                                 std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  std::vector<Tensor> states(2);
  if (hx_opt) states = {std::get<0>(*hx_opt), std::get<1>(*hx_opt)};
  auto [out, final_states] = forward_padded(input, std::move(states));
  return {out, {final_states[0], final_states[1]}};
}

std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> LSTMImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  std::vector<Tensor> states(2);
  if (hx_opt) states = {std::get<0>(*hx_opt), std::get<1>(*hx_opt)};
  auto [out, final_states] = forward_packed(packed_input, std::move(states));
  return {out, {final_states[0], final_states[1]}};
}

GRUImpl::GRUImpl(const GRUOptions& options_)
    : RNNImplBase(base_options(kGRU, options_.input_size(), options_.hidden_size(), options_.num_layers(),
                               options_.bias(), options_.batch_first(), options_.dropout(), options_.bidirectional(),
                               0)),
      options(options_) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, Tensor hx) {
  auto [out, states] = forward_padded(input, {std::move(hx)});
  return {out, states[0]};
}

std::tuple<utils::rnn::PackedSequence, Tensor> GRUImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, Tensor hx) {
  auto [out, states] = forward_packed(packed_input, {std::move(hx)});
  return {out, states[0]};
}

RNNCellImpl::RNNCellImpl(const RNNCellOptions& options_)
    : RNNCellImplBase(detail::RNNCellOptionsBase(options_.input_size(), options_.hidden_size(), options_.bias(), 1)),
      options(options_) {}

std::string RNNCellImpl::get_nonlinearity_str() const { return enum_name(options.nonlinearity()) == std::string("Tanh") ? "kTanh" : "kReLU"; }

Tensor RNNCellImpl::forward(const Tensor& input, Tensor hx) {
  auto [x, states, batched] = prepare(input, {std::move(hx)});
  const Mode m = std::holds_alternative<enumtype::kTanh>(options.nonlinearity()) ? Mode::kTanh : Mode::kRelu;
  const Tensor h = cell_step(m, *this, x, {states[0], {}}).h;
  return batched ? h : h.squeeze(0);
}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& options_)
    : RNNCellImplBase(detail::RNNCellOptionsBase(options_.input_size(), options_.hidden_size(), options_.bias(), 4)),
      options(options_) {}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input,
                                                 std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  std::vector<Tensor> given(2);
  if (hx_opt) given = {std::get<0>(*hx_opt), std::get<1>(*hx_opt)};
  auto [x, states, batched] = prepare(input, std::move(given));
  auto [h, c] = lstm_cell(x, {states[0], states[1]}, weight_ih, weight_hh, bias_ih, bias_hh);
  if (batched) return {h, c};
  return {h.squeeze(0), c.squeeze(0)};
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& options_)
    : RNNCellImplBase(detail::RNNCellOptionsBase(options_.input_size(), options_.hidden_size(), options_.bias(), 3)),
      options(options_) {}

Tensor GRUCellImpl::forward(const Tensor& input, Tensor hx) {
  auto [x, states, batched] = prepare(input, {std::move(hx)});
  const Tensor h = cell_step(Mode::kGRU, *this, x, {states[0], {}}).h;
  return batched ? h : h.squeeze(0);
}

}  // namespace ember::nn

// ---- ATen's functional forms (at::lstm, at::gru_cell, ...): the modules' recurrence on weights
// given as tensors ------------------------------------------------------------------------------
namespace ember {
namespace {
using nn::Mode;

// A time-major or batch-first 3-D input through the layers.
std::pair<Tensor, std::vector<Tensor>> aten_rnn(Mode m, const Tensor& input, const std::vector<Tensor>& states,
                                                TensorList params, bool has_biases, int64_t num_layers, double dropout,
                                                bool train, bool bidirectional, bool batch_first) {
  EMBER_CHECK(input.dim() == 3, nn::module_name(m), "input must have 3 dimensions, got ", input.dim());
  const Tensor x = batch_first ? input.transpose(0, 1) : input;
  const int64_t T = x.size(0), B = x.size(1);
  EMBER_CHECK(T > 0, nn::module_name(m), "expected a sequence of at least one time step, got input of size ",
              input.sizes());
  auto [out, finals] = nn::run_layers(m, x.reshape({T * B, x.size(2)}), std::vector<int64_t>(T, B), states, params,
                                      has_biases, num_layers, bidirectional, dropout, train);
  const Tensor y = out.view({T, B, out.size(1)});
  return {batch_first ? y.transpose(0, 1) : y, finals};
}
// A packed sequence's rows (data, batch_sizes) through the layers.
std::pair<Tensor, std::vector<Tensor>> aten_rnn_packed(Mode m, const Tensor& data, const Tensor& batch_sizes,
                                                       const std::vector<Tensor>& states, TensorList params,
                                                       bool has_biases, int64_t num_layers, double dropout, bool train,
                                                       bool bidirectional) {
  const std::vector<int64_t> sizes = nn::batch_sizes_vector(batch_sizes);
  EMBER_CHECK(!sizes.empty() && data.dim() == 2, nn::module_name(m),
              "expected packed data of 2 dimensions and at least one time step, got data of size ", data.sizes());
  return nn::run_layers(m, data, sizes, states, params, has_biases, num_layers, bidirectional, dropout, train);
}

// The fused LSTM step (kernels/cpu/rnn_kernels.h) when it applies: no graph to record, no
// autocast, float32 and contiguous everywhere, a small batch (the sizes: checked by aten_cell).
// Otherwise nullopt.
std::optional<nn::State> fused_lstm_cell(const Tensor& input, const nn::State& s, const Tensor& w_ih,
                                         const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  if (nn::records_graph() || is_autocast_enabled(kCPU)) return std::nullopt;
  const int64_t B = input.size(0), H = s.h.size(1);
  if (B > kernels::kMaxLstmBatch) return std::nullopt;
  for (const Tensor* t : {&input, &s.h, &s.c, &w_ih, &w_hh, &b_ih, &b_hh})
    if (t->defined() && (t->dtype() != kFloat || !t->is_contiguous())) return std::nullopt;
  nn::State out{empty({B, H}, input.options()), empty({B, H}, input.options())};
  kernels::LstmStep k;
  k.batch = B;
  k.input_size = input.size(1);
  k.hidden = H;
  k.x = input.data_ptr<float>();
  k.w_ih = w_ih.data_ptr<float>();
  k.b_ih = b_ih.defined() ? b_ih.data_ptr<float>() : nullptr;
  k.b_hh = b_hh.defined() ? b_hh.data_ptr<float>() : nullptr;
  k.h = s.h.data_ptr<float>();
  k.w_hh = w_hh.data_ptr<float>();
  k.c = s.c.data_ptr<float>();
  k.h_out = out.h.data_ptr<float>();
  k.c_out = out.c.data_ptr<float>();
  kernels::lstm_step(k);
  return out;
}

// One step of a cell on weights given as tensors; a missing bias counts as zeros.
nn::State aten_cell(Mode m, const Tensor& input, const nn::State& s, const Tensor& w_ih, const Tensor& w_hh,
                    const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  const char* name = m == Mode::kLSTM ? "lstm_cell" : m == Mode::kGRU ? "gru_cell" : m == Mode::kTanh ? "rnn_tanh_cell" : "rnn_relu_cell";
  EMBER_CHECK(input.dim() == 2 && w_ih.dim() == 2 && input.size(1) == w_ih.size(1), name,
              "input has inconsistent input_size: got ", input.sizes(), " with w_ih of size ", w_ih.sizes());
  EMBER_CHECK(s.h.dim() == 2 && s.h.size(0) == input.size(0) && w_hh.dim() == 2 && s.h.size(1) == w_hh.size(1), name,
              "hidden state of size ", s.h.sizes(), " does not match input of size ", input.sizes(),
              " and w_hh of size ", w_hh.sizes());
  const int64_t gates = nn::chunks_of(m) * w_hh.size(1);
  EMBER_CHECK(w_ih.size(0) == gates && w_hh.size(0) == gates, name, "w_ih of size ", w_ih.sizes(), " and w_hh of size ",
              w_hh.sizes(), " must have ", nn::chunks_of(m), " * hidden_size = ", gates, " rows");
  for (const std::optional<Tensor>* b : {&b_ih, &b_hh})
    EMBER_CHECK(!*b || !(*b)->defined() || ((*b)->dim() == 1 && (*b)->size(0) == gates), name,
                b == &b_ih ? "b_ih" : "b_hh", " of size ", (*b)->sizes(), " must be a vector of ", gates, " gates");
  EMBER_CHECK(m != Mode::kLSTM || (s.c.defined() && s.c.sizes() == s.h.sizes()), name, "cell state of size ",
              s.c.defined() ? s.c.sizes() : IntArrayRef{}, " does not match hidden state of size ", s.h.sizes());
  Tensor bi = b_ih && b_ih->defined() ? *b_ih : Tensor(), bh = b_hh && b_hh->defined() ? *b_hh : Tensor();
  if (m == Mode::kLSTM && input.numel() > 0 && s.h.numel() > 0)
    if (auto fused = fused_lstm_cell(input, s, w_ih, w_hh, bi, bh)) return *fused;
  if (bi.defined() != bh.defined()) (bi.defined() ? bh : bi) = zeros({w_ih.size(0)}, w_ih.options());
  const nn::Weights w{w_ih, w_hh, bi, bh, {}};
  return nn::step(m, nn::project_input(m, input, w), s, w);
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, TensorList hx, TensorList params, bool has_biases,
                                        int64_t num_layers, double dropout, bool train, bool bidirectional,
                                        bool batch_first) {
  EMBER_CHECK(hx.size() == 2, "lstm", "lstm expects two hidden states (h0, c0), got ", hx.size());
  auto [y, s] = aten_rnn(Mode::kLSTM, input, {hx[0], hx[1]}, params, has_biases, num_layers, dropout, train,
                         bidirectional, batch_first);
  return {y, s[0], s[1]};
}
std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& data, const Tensor& batch_sizes, TensorList hx,
                                        TensorList params, bool has_biases, int64_t num_layers, double dropout,
                                        bool train, bool bidirectional) {
  EMBER_CHECK(hx.size() == 2, "lstm", "lstm expects two hidden states (h0, c0), got ", hx.size());
  auto [y, s] = aten_rnn_packed(Mode::kLSTM, data, batch_sizes, {hx[0], hx[1]}, params, has_biases, num_layers,
                                dropout, train, bidirectional);
  return {y, s[0], s[1]};
}
#define EMBER_ATEN_RNN(fn, mode)                                                                                  \
  std::tuple<Tensor, Tensor> fn(const Tensor& input, const Tensor& hx, TensorList params, bool has_biases,       \
                                int64_t num_layers, double dropout, bool train, bool bidirectional,              \
                                bool batch_first) {                                                              \
    auto [y, s] =                                                                                                \
        aten_rnn(mode, input, {hx}, params, has_biases, num_layers, dropout, train, bidirectional, batch_first); \
    return {y, s[0]};                                                                                            \
  }                                                                                                              \
  std::tuple<Tensor, Tensor> fn(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx, TensorList params, \
                                bool has_biases, int64_t num_layers, double dropout, bool train,                 \
                                bool bidirectional) {                                                            \
    auto [y, s] = aten_rnn_packed(mode, data, batch_sizes, {hx}, params, has_biases, num_layers, dropout, train,  \
                                  bidirectional);                                                                \
    return {y, s[0]};                                                                                            \
  }                                                                                                              \
  Tensor fn##_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,                \
                   const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {                       \
    return aten_cell(mode, input, {hx, {}}, w_ih, w_hh, b_ih, b_hh).h;                                           \
  }
EMBER_ATEN_RNN(gru, Mode::kGRU)
EMBER_ATEN_RNN(rnn_tanh, Mode::kTanh)
EMBER_ATEN_RNN(rnn_relu, Mode::kRelu)
#undef EMBER_ATEN_RNN

namespace {
// An op of its own (PyTorch's aten::lstm_cell), so that tracing, graph capture and the profiler
// see one step. Composite: under autograd its ops record themselves; without a graph it may run
// fused (fused_lstm_cell).
struct LstmCellOp {
  static constexpr const char* name = "lstm_cell";
  static constexpr bool composite = true;
  static std::tuple<Tensor, Tensor> run(const Tensor& input, TensorList hx, const Tensor& w_ih, const Tensor& w_hh,
                                        const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
    EMBER_CHECK(hx.size() == 2, name, "lstm_cell expects two hidden states (h, c), got ", hx.size());
    const nn::State s = aten_cell(Mode::kLSTM, input, {hx[0], hx[1]}, w_ih, w_hh, b_ih, b_hh);
    return {s.h, s.c};
  }
};
}  // namespace

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, TensorList hx, const Tensor& w_ih, const Tensor& w_hh,
                                     const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  return dispatch::call<LstmCellOp>(input, hx, w_ih, w_hh, b_ih, b_hh);
}

}  // namespace ember
