// Recurrent modules, cells and packed sequences against libtorch's: the same parameters copied
// in by name, forward outputs and every gradient (input, initial states, parameters) over the
// options (layers, directions, batch_first, bias, projections, unbatched input, given or
// omitted states, packed input), and the packing helpers' round trips.
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "parity/parity.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using parity::Close;
using parity::Tol;
namespace enn = ember::nn;
namespace tnn = torch::nn;
namespace ernn = ember::nn::utils::rnn;
namespace trnn = torch::nn::utils::rnn;

namespace {

torch::Tensor T(const ember::Tensor& e) { return parity::to_torch(e); }
ember::Tensor rnd(ember::IntArrayRef sizes, uint64_t seed) { return parity::random(sizes, ember::kFloat, seed) * 0.5; }

// The parity tests' float tolerance, also for gradients summed over every time step.
constexpr Tol kTol{1.3e-6, 1e-5};

void copy_into(const enn::Module& e, tnn::Module& t) {
  auto ep = e.named_parameters();
  auto tp = t.named_parameters();
  ASSERT_EQ(ep.keys(), tp.keys());
  torch::NoGradGuard no_grad;
  for (const auto& item : ep) tp[item.key()].copy_(T(item.value()));
}

template <class M>
std::string str(const M& m) {
  std::ostringstream os;
  os << *m;
  return os.str();
}

using EForward = std::function<std::vector<ember::Tensor>(const ember::Tensor&, const std::vector<ember::Tensor>&)>;
using TForward = std::function<std::vector<torch::Tensor>(const torch::Tensor&, const std::vector<torch::Tensor>&)>;

// Runs both forwards on the same input and states (leaves), compares every output, then
// backpropagates the same random weighting of the outputs and compares the gradients of the
// input, the states and every parameter (by name).
void check(enn::Module& e, tnn::Module& t, const ember::Tensor& x, const std::vector<ember::Tensor>& states,
           const EForward& ef, const TForward& tf, const std::string& what) {
  SCOPED_TRACE(what);
  copy_into(e, t);
  const ember::Tensor ex = x.detach().requires_grad_();
  const torch::Tensor tx = T(x).requires_grad_();
  std::vector<ember::Tensor> es;
  std::vector<torch::Tensor> ts;
  for (const ember::Tensor& s : states) {
    es.push_back(s.defined() ? s.detach().requires_grad_() : ember::Tensor());
    ts.push_back(s.defined() ? T(s).requires_grad_() : torch::Tensor());
  }
  const std::vector<ember::Tensor> eo = ef(ex, es);
  const std::vector<torch::Tensor> to = tf(tx, ts);
  ASSERT_EQ(eo.size(), to.size());
  ember::Tensor eloss = ember::zeros({});
  torch::Tensor tloss = torch::zeros({});
  for (size_t i = 0; i < eo.size(); ++i) {
    EXPECT_TRUE(Close(eo[i], to[i], kTol)) << "output " << i;
    const ember::Tensor w = rnd(eo[i].sizes(), 100 + i);
    eloss = eloss + (eo[i] * w).sum();
    tloss = tloss + (to[i] * T(w)).sum();
  }
  eloss.backward();
  tloss.backward();
  EXPECT_TRUE(Close(ex.grad(), tx.grad(), kTol)) << "input gradient";
  for (size_t i = 0; i < es.size(); ++i)
    if (es[i].defined()) EXPECT_TRUE(Close(es[i].grad(), ts[i].grad(), kTol)) << "state " << i << " gradient";
  auto tp = t.named_parameters();
  for (const auto& p : e.named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_TRUE(Close(p.value().grad(), tp[p.key()].grad(), kTol)) << p.key() << " gradient";
  }
}

struct Config {
  int64_t layers = 1;
  bool bidirectional = false, batch_first = false, bias = true, give_states = false, unbatched = false;
  int64_t proj = 0;
  std::string name() const {
    std::ostringstream os;
    os << "layers=" << layers << " bidirectional=" << bidirectional << " batch_first=" << batch_first
       << " bias=" << bias << " states=" << give_states << " unbatched=" << unbatched << " proj=" << proj;
    return os.str();
  }
};

std::vector<Config> configs() {
  std::vector<Config> out;
  for (int64_t layers : {1, 2})
    for (bool bidirectional : {false, true})
      for (bool batch_first : {false, true})
        for (bool give_states : {false, true}) {
          Config c;
          c.layers = layers;
          c.bidirectional = bidirectional;
          c.batch_first = batch_first;
          c.give_states = give_states;
          out.push_back(c);
        }
  Config no_bias;
  no_bias.layers = 2;
  no_bias.bias = false;
  no_bias.give_states = true;
  out.push_back(no_bias);
  for (bool give_states : {false, true}) {
    Config unbatched;
    unbatched.layers = 2;
    unbatched.bidirectional = true;
    unbatched.unbatched = true;
    unbatched.give_states = give_states;
    out.push_back(unbatched);
  }
  return out;
}

constexpr int64_t kIn = 5, kHidden = 6, kSteps = 7, kBatch = 3;

// The input of a config: (T, B, in), (B, T, in) or unbatched (T, in).
ember::Tensor input_of(const Config& c, uint64_t seed) {
  if (c.unbatched) return rnd({kSteps, kIn}, seed);
  return c.batch_first ? rnd({kBatch, kSteps, kIn}, seed) : rnd({kSteps, kBatch, kIn}, seed);
}
ember::Tensor state_of(const Config& c, int64_t features, uint64_t seed) {
  const int64_t rows = c.layers * (c.bidirectional ? 2 : 1);
  return c.unbatched ? rnd({rows, features}, seed) : rnd({rows, kBatch, features}, seed);
}
// libtorch 1.13's C++ modules take batched input only: an unbatched input is given as a batch of one.
torch::Tensor batch(const Config& c, const torch::Tensor& x, int64_t dim) { return c.unbatched ? x.unsqueeze(dim) : x; }
torch::Tensor unbatch(const Config& c, const torch::Tensor& x, int64_t dim) { return c.unbatched ? x.squeeze(dim) : x; }

template <class O>
O with(O o, const Config& c) {
  return o.num_layers(c.layers).bidirectional(c.bidirectional).batch_first(c.batch_first).bias(c.bias);
}

}  // namespace

TEST(RnnParity, RNN) {
  for (bool relu : {false, true}) {
    for (const Config& c : configs()) {
      enn::RNN e(with(enn::RNNOptions(kIn, kHidden), c)
                     .nonlinearity(relu ? enn::RNNOptions::nonlinearity_t(ember::kReLU) : ember::kTanh));
      tnn::RNN t(with(tnn::RNNOptions(kIn, kHidden), c)
                     .nonlinearity(relu ? tnn::RNNOptions::nonlinearity_t(torch::kReLU) : torch::kTanh));
      EXPECT_EQ(str(e), str(t));
      const std::vector<ember::Tensor> states = {c.give_states ? state_of(c, kHidden, 2) : ember::Tensor()};
      check(
          *e, *t, input_of(c, 1), states,
          [&](const ember::Tensor& x, const std::vector<ember::Tensor>& s) {
            auto [out, h] = e->forward(x, s[0]);
            return std::vector<ember::Tensor>{out, h};
          },
          [&](const torch::Tensor& x, const std::vector<torch::Tensor>& s) {
            auto [out, h] = t->forward(batch(c, x, 1), s[0].defined() ? batch(c, s[0], 1) : s[0]);
            return std::vector<torch::Tensor>{unbatch(c, out, 1), unbatch(c, h, 1)};
          },
          c.name() + (relu ? " relu" : " tanh"));
    }
  }
}

TEST(RnnParity, LSTM) {
  std::vector<Config> all = configs();
  for (Config c : configs()) {  // the same with projections
    c.proj = 4;
    all.push_back(c);
  }
  for (const Config& c : all) {
    enn::LSTM e(with(enn::LSTMOptions(kIn, kHidden), c).proj_size(c.proj));
    tnn::LSTM t(with(tnn::LSTMOptions(kIn, kHidden), c).proj_size(c.proj));
    EXPECT_EQ(str(e), str(t));
    const int64_t out_features = c.proj > 0 ? c.proj : kHidden;
    const std::vector<ember::Tensor> states =
        c.give_states ? std::vector<ember::Tensor>{state_of(c, out_features, 2), state_of(c, kHidden, 3)}
                      : std::vector<ember::Tensor>{ember::Tensor(), ember::Tensor()};
    check(
        *e, *t, input_of(c, 1), states,
        [&](const ember::Tensor& x, const std::vector<ember::Tensor>& s) {
          auto [out, hc] = s[0].defined() ? e->forward(x, std::make_tuple(s[0], s[1])) : e->forward(x);
          return std::vector<ember::Tensor>{out, std::get<0>(hc), std::get<1>(hc)};
        },
        [&](const torch::Tensor& x, const std::vector<torch::Tensor>& s) {
          auto [out, hc] = s[0].defined() ? t->forward(batch(c, x, 1), std::make_tuple(batch(c, s[0], 1), batch(c, s[1], 1)))
                                          : t->forward(batch(c, x, 1));
          return std::vector<torch::Tensor>{unbatch(c, out, 1), unbatch(c, std::get<0>(hc), 1),
                                            unbatch(c, std::get<1>(hc), 1)};
        },
        c.name());
  }
}

TEST(RnnParity, GRU) {
  for (const Config& c : configs()) {
    enn::GRU e(with(enn::GRUOptions(kIn, kHidden), c));
    tnn::GRU t(with(tnn::GRUOptions(kIn, kHidden), c));
    EXPECT_EQ(str(e), str(t));
    const std::vector<ember::Tensor> states = {c.give_states ? state_of(c, kHidden, 2) : ember::Tensor()};
    check(
        *e, *t, input_of(c, 1), states,
        [&](const ember::Tensor& x, const std::vector<ember::Tensor>& s) {
          auto [out, h] = e->forward(x, s[0]);
          return std::vector<ember::Tensor>{out, h};
        },
        [&](const torch::Tensor& x, const std::vector<torch::Tensor>& s) {
          auto [out, h] = t->forward(batch(c, x, 1), s[0].defined() ? batch(c, s[0], 1) : s[0]);
          return std::vector<torch::Tensor>{unbatch(c, out, 1), unbatch(c, h, 1)};
        },
        c.name());
  }
}

TEST(RnnParity, ParameterNamesAndAllWeights) {
  enn::LSTM e(enn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).proj_size(2));
  tnn::LSTM t(tnn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).proj_size(2));
  EXPECT_EQ(e->named_parameters().keys(), t->named_parameters().keys());
  const auto ew = e->all_weights();
  const auto tw = t->all_weights();
  ASSERT_EQ(ew.size(), tw.size());
  for (size_t i = 0; i < ew.size(); ++i) {
    std::vector<int64_t> es(ew[i].sizes().begin(), ew[i].sizes().end());
    EXPECT_EQ(es, tw[i].sizes().vec()) << i;
  }
  e->flatten_parameters();
  EXPECT_EQ(e->all_weights().size(), ew.size());
}

// Modules over packed sequences of unsorted lengths: pack, run, pad back; outputs, final states
// (in the caller's batch order) and gradients.
TEST(RnnParity, PackedInput) {
  const ember::Tensor lengths = ember::tensor(std::vector<int64_t>{4, 7, 2, 5});
  for (bool batch_first : {false, true}) {
    for (bool bidirectional : {false, true}) {
      Config c;
      c.layers = 2;
      c.bidirectional = bidirectional;
      c.batch_first = batch_first;
      const ember::Tensor x = batch_first ? rnd({4, kSteps, kIn}, 5) : rnd({kSteps, 4, kIn}, 5);
      const torch::Tensor tl = T(lengths);
      auto pack_e = [&](const ember::Tensor& in) { return ernn::pack_padded_sequence(in, lengths, batch_first, false); };
      auto pack_t = [&](const torch::Tensor& in) { return trnn::pack_padded_sequence(in, tl, batch_first, false); };
      auto pad_e = [&](const ernn::PackedSequence& p) { return std::get<0>(ernn::pad_packed_sequence(p, batch_first)); };
      auto pad_t = [&](const trnn::PackedSequence& p) { return std::get<0>(trnn::pad_packed_sequence(p, batch_first)); };
      const int64_t rows = 2 * (bidirectional ? 2 : 1);
      {
        enn::LSTM e(with(enn::LSTMOptions(kIn, kHidden), c));
        tnn::LSTM t(with(tnn::LSTMOptions(kIn, kHidden), c));
        for (bool give : {false, true}) {
          const std::vector<ember::Tensor> states =
              give ? std::vector<ember::Tensor>{rnd({rows, 4, kHidden}, 6), rnd({rows, 4, kHidden}, 7)}
                   : std::vector<ember::Tensor>{ember::Tensor(), ember::Tensor()};
          check(
              *e, *t, x, states,
              [&](const ember::Tensor& in, const std::vector<ember::Tensor>& s) {
                auto [out, hc] = s[0].defined() ? e->forward_with_packed_input(pack_e(in), std::make_tuple(s[0], s[1]))
                                                : e->forward_with_packed_input(pack_e(in));
                return std::vector<ember::Tensor>{pad_e(out), std::get<0>(hc), std::get<1>(hc)};
              },
              [&](const torch::Tensor& in, const std::vector<torch::Tensor>& s) {
                auto [out, hc] = s[0].defined() ? t->forward_with_packed_input(pack_t(in), std::make_tuple(s[0], s[1]))
                                                : t->forward_with_packed_input(pack_t(in));
                return std::vector<torch::Tensor>{pad_t(out), std::get<0>(hc), std::get<1>(hc)};
              },
              "packed LSTM " + c.name() + (give ? " given states" : ""));
        }
      }
      {
        enn::GRU e(with(enn::GRUOptions(kIn, kHidden), c));
        tnn::GRU t(with(tnn::GRUOptions(kIn, kHidden), c));
        check(
            *e, *t, x, {rnd({rows, 4, kHidden}, 8)},
            [&](const ember::Tensor& in, const std::vector<ember::Tensor>& s) {
              auto [out, h] = e->forward_with_packed_input(pack_e(in), s[0]);
              return std::vector<ember::Tensor>{pad_e(out), h};
            },
            [&](const torch::Tensor& in, const std::vector<torch::Tensor>& s) {
              auto [out, h] = t->forward_with_packed_input(pack_t(in), s[0]);
              return std::vector<torch::Tensor>{pad_t(out), h};
            },
            "packed GRU " + c.name());
      }
      {
        enn::RNN e(with(enn::RNNOptions(kIn, kHidden), c));
        tnn::RNN t(with(tnn::RNNOptions(kIn, kHidden), c));
        check(
            *e, *t, x, {ember::Tensor()},
            [&](const ember::Tensor& in, const std::vector<ember::Tensor>& s) {
              auto [out, h] = e->forward_with_packed_input(pack_e(in), s[0]);
              return std::vector<ember::Tensor>{pad_e(out), h};
            },
            [&](const torch::Tensor& in, const std::vector<torch::Tensor>& s) {
              auto [out, h] = t->forward_with_packed_input(pack_t(in), s[0]);
              return std::vector<torch::Tensor>{pad_t(out), h};
            },
            "packed RNN " + c.name());
      }
    }
  }
}

TEST(RnnParity, Cells) {
  for (bool bias : {true, false}) {
    for (bool give : {false, true}) {
      const std::string what = std::string(bias ? "bias" : "no bias") + (give ? ", given states" : "");
      const ember::Tensor x = rnd({kBatch, kIn}, 11);
      for (bool relu : {false, true}) {
        enn::RNNCell e(enn::RNNCellOptions(kIn, kHidden).bias(bias).nonlinearity(
            relu ? enn::RNNCellOptions::nonlinearity_t(ember::kReLU) : ember::kTanh));
        tnn::RNNCell t(tnn::RNNCellOptions(kIn, kHidden).bias(bias).nonlinearity(
            relu ? tnn::RNNCellOptions::nonlinearity_t(torch::kReLU) : torch::kTanh));
        EXPECT_EQ(str(e), str(t));
        check(
            *e, *t, x, {give ? rnd({kBatch, kHidden}, 12) : ember::Tensor()},
            [&](const ember::Tensor& in, const std::vector<ember::Tensor>& s) {
              return std::vector<ember::Tensor>{e->forward(in, s[0])};
            },
            [&](const torch::Tensor& in, const std::vector<torch::Tensor>& s) {
              return std::vector<torch::Tensor>{t->forward(in, s[0])};
            },
            "RNNCell " + what + (relu ? " relu" : " tanh"));
      }
      {
        enn::LSTMCell e(enn::LSTMCellOptions(kIn, kHidden).bias(bias));
        tnn::LSTMCell t(tnn::LSTMCellOptions(kIn, kHidden).bias(bias));
        EXPECT_EQ(str(e), str(t));
        const std::vector<ember::Tensor> states =
            give ? std::vector<ember::Tensor>{rnd({kBatch, kHidden}, 12), rnd({kBatch, kHidden}, 13)}
                 : std::vector<ember::Tensor>{ember::Tensor(), ember::Tensor()};
        check(
            *e, *t, x, states,
            [&](const ember::Tensor& in, const std::vector<ember::Tensor>& s) {
              auto [h, cc] = s[0].defined() ? e->forward(in, std::make_tuple(s[0], s[1])) : e->forward(in);
              return std::vector<ember::Tensor>{h, cc};
            },
            [&](const torch::Tensor& in, const std::vector<torch::Tensor>& s) {
              auto [h, cc] = s[0].defined() ? t->forward(in, std::make_tuple(s[0], s[1])) : t->forward(in);
              return std::vector<torch::Tensor>{h, cc};
            },
            "LSTMCell " + what);
      }
      {
        enn::GRUCell e(enn::GRUCellOptions(kIn, kHidden).bias(bias));
        tnn::GRUCell t(tnn::GRUCellOptions(kIn, kHidden).bias(bias));
        EXPECT_EQ(str(e), str(t));
        check(
            *e, *t, x, {give ? rnd({kBatch, kHidden}, 12) : ember::Tensor()},
            [&](const ember::Tensor& in, const std::vector<ember::Tensor>& s) {
              return std::vector<ember::Tensor>{e->forward(in, s[0])};
            },
            [&](const torch::Tensor& in, const std::vector<torch::Tensor>& s) {
              return std::vector<torch::Tensor>{t->forward(in, s[0])};
            },
            "GRUCell " + what);
      }
    }
  }
  // An unbatched (1-D) input is a batch of one.
  enn::GRUCell e(kIn, kHidden);
  tnn::GRUCell t(kIn, kHidden);
  check(
      *e, *t, rnd({kIn}, 14), {rnd({kHidden}, 15)},
      [&](const ember::Tensor& in, const std::vector<ember::Tensor>& s) {
        return std::vector<ember::Tensor>{e->forward(in, s[0])};
      },
      [&](const torch::Tensor& in, const std::vector<torch::Tensor>& s) {
        return std::vector<torch::Tensor>{t->forward(in.unsqueeze(0), s[0].unsqueeze(0)).squeeze(0)};
      },
      "unbatched GRUCell");
}

// Without a graph (no_grad, inference mode) a float32 LSTM step of up to 8 rows runs as one fused
// kernel: libtorch's values over sizes with and without vector tails, batches either side of the
// limit, with and without bias, and an unbatched input; the fused steps run no product op inside
// lstm_cell (the profiler's events), the larger batch does.
TEST(RnnParity, LstmCellWithoutAGraph) {
  struct Shape {
    int64_t in, hidden;
  };
  uint64_t seed = 40;
  for (const Shape sh : {Shape{256, 256}, Shape{37, 19}, Shape{5, 33}}) {
    for (int64_t batch : {0, 1, 3, 8, 9}) {  // 0: the unbatched input
      for (bool bias : {true, false}) {
        for (bool inference : {false, true}) {
          const std::string what = "in " + std::to_string(sh.in) + ", hidden " + std::to_string(sh.hidden) +
                                   ", batch " + std::to_string(batch) + (bias ? "" : ", no bias") +
                                   (inference ? ", inference mode" : ", no_grad");
          SCOPED_TRACE(what);
          enn::LSTMCell e(enn::LSTMCellOptions(sh.in, sh.hidden).bias(bias));
          tnn::LSTMCell t(tnn::LSTMCellOptions(sh.in, sh.hidden).bias(bias));
          copy_into(*e, *t);
          const std::vector<int64_t> rows = batch ? std::vector<int64_t>{batch} : std::vector<int64_t>{};
          auto with_rows = [&](int64_t n) {
            std::vector<int64_t> s = rows;
            s.push_back(n);
            return s;
          };
          const ember::Tensor x = rnd(with_rows(sh.in), ++seed), h = rnd(with_rows(sh.hidden), ++seed),
                              c = rnd(with_rows(sh.hidden), ++seed) * 4;
          ember::Tensor eh, ec;
          ember::profiler::profile prof;
          {
            std::optional<ember::NoGradGuard> no_grad;
            std::optional<ember::InferenceMode> inference_mode;
            if (inference) inference_mode.emplace();
            else no_grad.emplace();
            std::tie(eh, ec) = e->forward(x, std::make_tuple(h, c));
          }
          prof.stop();
          torch::NoGradGuard torch_no_grad;
          auto batched = [&](const ember::Tensor& v) { return batch ? T(v) : T(v).unsqueeze(0); };  // (1.13)
          const auto [th, tc] = t->forward(batched(x), std::make_tuple(batched(h), batched(c)));
          EXPECT_TRUE(Close(eh, batch ? th : th.squeeze(0), kTol)) << "h";
          EXPECT_TRUE(Close(ec, batch ? tc : tc.squeeze(0), kTol)) << "c";
          int64_t cell = -1, products = 0;
          for (size_t i = 0; i < prof.events().size(); ++i) {
            const ember::profiler::FunctionEvent& ev = prof.events()[i];
            if (ev.name == "aten::lstm_cell") cell = static_cast<int64_t>(i);
            if (cell >= 0 && ev.parent == cell &&
                (ev.name.find("mv") != std::string::npos || ev.name.find("mm") != std::string::npos))
              ++products;
          }
          ASSERT_GE(cell, 0) << "one lstm_cell op";
          EXPECT_EQ(products > 0, batch > 8) << "the fused step runs no product op";
        }
      }
    }
  }
  // Sizes that do not fit raise an ember::Error naming the op, as with a graph (libtorch checks
  // them too): weights or a bias of the wrong length, a cell state of another shape.
  ember::NoGradGuard no_grad;
  const ember::Tensor x = rnd({2, 5}, 50), h = rnd({2, 6}, 51), c = rnd({2, 6}, 52);
  const ember::Tensor w_ih = rnd({24, 5}, 53), w_hh = rnd({24, 6}, 54), b = rnd({24}, 55);
  auto raises = [](const std::function<void()>& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << what << ": no error";
    } catch (const ember::Error& e) {
      EXPECT_NE(std::string(e.what()).find("lstm_cell"), std::string::npos) << what << ": " << e.what();
    }
  };
  raises([&] { ember::lstm_cell(x, {h, c}, w_ih.narrow(0, 0, 20), w_hh, b, b); }, "w_ih of 20 rows");
  raises([&] { ember::lstm_cell(x, {h, c}, w_ih, w_hh.narrow(0, 0, 20), b, b); }, "w_hh of 20 rows");
  raises([&] { ember::lstm_cell(x, {h, c}, w_ih, w_hh, b.narrow(0, 0, 20), b); }, "b_ih of 20");
  raises([&] { ember::lstm_cell(x, {h, c}, w_ih, w_hh, b, rnd({25}, 56)); }, "b_hh of 25");
  raises([&] { ember::lstm_cell(x, {h, c.narrow(0, 0, 1)}, w_ih, w_hh, b, b); }, "c of one row");
}

// pack/pad helpers: the same packed data, batch sizes and permutations as libtorch's, and the
// round trip back to the padded input (padding positions hold padding_value).
TEST(RnnParity, PackingRoundTrips) {
  for (bool batch_first : {false, true}) {
    for (bool sorted : {true, false}) {
      const std::vector<int64_t> lv = sorted ? std::vector<int64_t>{6, 4, 4, 1} : std::vector<int64_t>{3, 6, 1, 5};
      const ember::Tensor lengths = ember::tensor(lv);
      const ember::Tensor x = batch_first ? rnd({4, 6, 3}, 21) : rnd({6, 4, 3}, 21);
      const ernn::PackedSequence ep = ernn::pack_padded_sequence(x, lengths, batch_first, sorted);
      const trnn::PackedSequence tp = trnn::pack_padded_sequence(T(x), T(lengths), batch_first, sorted);
      EXPECT_TRUE(Close(ep.data(), tp.data()));
      EXPECT_TRUE(Close(ep.batch_sizes(), tp.batch_sizes()));
      EXPECT_EQ(ep.sorted_indices().defined(), tp.sorted_indices().defined());
      if (!sorted) {
        EXPECT_TRUE(Close(ep.sorted_indices(), tp.sorted_indices()));
        EXPECT_TRUE(Close(ep.unsorted_indices(), tp.unsorted_indices()));
      }
      for (std::optional<int64_t> total : {std::optional<int64_t>(), std::optional<int64_t>(8)}) {
        auto [epad, elen] = ernn::pad_packed_sequence(ep, batch_first, -1.5, total);
        auto [tpad, tlen] = trnn::pad_packed_sequence(tp, batch_first, -1.5, total ? c10::optional<int64_t>(*total) : c10::nullopt);
        EXPECT_TRUE(Close(epad, tpad));
        EXPECT_TRUE(Close(elen, tlen));
      }
    }
  }
  std::vector<ember::Tensor> seqs = {rnd({5, 2}, 31), rnd({3, 2}, 32), rnd({4, 2}, 33)};
  std::vector<torch::Tensor> tseqs;
  for (const auto& s : seqs) tseqs.push_back(T(s));
  for (bool batch_first : {false, true})
    EXPECT_TRUE(Close(ernn::pad_sequence(seqs, batch_first, 2.5), trnn::pad_sequence(tseqs, batch_first, 2.5)));
  const ernn::PackedSequence ep = ernn::pack_sequence(seqs, false);
  const trnn::PackedSequence tp = trnn::pack_sequence(tseqs, false);
  EXPECT_TRUE(Close(ep.data(), tp.data()));
  EXPECT_TRUE(Close(ep.batch_sizes(), tp.batch_sizes()));
  EXPECT_TRUE(Close(std::get<0>(ernn::pad_packed_sequence(ep)), std::get<0>(trnn::pad_packed_sequence(tp))));
  const ember::Tensor perm = ember::tensor(std::vector<int64_t>{2, 0, 3, 1});
  EXPECT_TRUE(Close(ernn::invert_permutation(perm), trnn::invert_permutation(T(perm))));
  EXPECT_FALSE(ernn::invert_permutation(ember::Tensor()).defined());
}

// Gradients through pack and pad (the data path is differentiable).
TEST(RnnParity, PackingGradients) {
  const ember::Tensor lengths = ember::tensor(std::vector<int64_t>{2, 5, 3});
  const ember::Tensor x = rnd({5, 3, 2}, 41);
  const ember::Tensor ex = x.detach().requires_grad_();
  const torch::Tensor tx = T(x).requires_grad_();
  const ember::Tensor ey = std::get<0>(ernn::pad_packed_sequence(ernn::pack_padded_sequence(ex, lengths, false, false)));
  const torch::Tensor ty = std::get<0>(trnn::pad_packed_sequence(trnn::pack_padded_sequence(tx, T(lengths), false, false)));
  const ember::Tensor w = rnd({5, 3, 2}, 42);
  (ey * w).sum().backward();
  (ty * T(w)).sum().backward();
  EXPECT_TRUE(Close(ey, ty));
  EXPECT_TRUE(Close(ex.grad(), tx.grad()));
}

// ATen's functional forms (at::lstm, at::gru, at::rnn_tanh, at::rnn_relu, packed and padded, and
// their cells) on weights given as tensors: outputs and the gradients of input, states and
// weights against libtorch's.
TEST(RnnParity, AtenFunctions) {
  constexpr int64_t I = 3, H = 4, L = 2, D = 2, B = 2, Tn = 3;
  uint64_t seed = 900;
  struct Leaves {
    std::vector<ember::Tensor> e;
    std::vector<torch::Tensor> t;
    void add(const ember::Tensor& x) {
      e.push_back(x.detach().requires_grad_());
      t.push_back(T(x).detach().requires_grad_());
    }
  };
  // the module's flat weights of `gates` gates, then h0 (and c0)
  const auto make = [&](int64_t gates, bool lstm) {
    Leaves v;
    for (int64_t layer = 0; layer < L; ++layer) {
      for (int64_t d = 0; d < D; ++d) {
        v.add(rnd({gates * H, layer == 0 ? I : H * D}, seed++));
        v.add(rnd({gates * H, H}, seed++));
        v.add(rnd({gates * H}, seed++));
        v.add(rnd({gates * H}, seed++));
      }
    }
    v.add(rnd({L * D, B, H}, seed++));
    if (lstm) v.add(rnd({L * D, B, H}, seed++));
    return v;
  };
  const auto check_grads = [](const std::vector<ember::Tensor>& eo, const std::vector<torch::Tensor>& to,
                              const Leaves& v) {
    ember::Tensor el = eo[0].sum() * 0;
    torch::Tensor tl = to[0].sum() * 0;
    for (size_t i = 0; i < eo.size(); ++i) {
      ASSERT_TRUE(Close(eo[i], to[i], kTol)) << "output " << i;
      const ember::Tensor g = rnd(eo[i].sizes(), 950 + i);
      el = el + (eo[i] * g).sum();
      tl = tl + (to[i] * T(g)).sum();
    }
    el.backward();
    tl.backward();
    for (size_t i = 0; i < v.e.size(); ++i) EXPECT_TRUE(Close(v.e[i].grad(), v.t[i].grad(), kTol)) << "leaf " << i;
  };
  for (bool batch_first : {false, true}) {
    SCOPED_TRACE(batch_first ? "batch_first" : "time-major");
    const ember::Tensor x0 = rnd(batch_first ? ember::IntArrayRef{B, Tn, I} : ember::IntArrayRef{Tn, B, I}, seed++);
    {
      Leaves v = make(4, true);
      v.add(x0);
      const std::vector<ember::Tensor> ew(v.e.begin(), v.e.begin() + 16);
      const std::vector<torch::Tensor> tw(v.t.begin(), v.t.begin() + 16);
      auto [ey, eh, ec] = ember::lstm(v.e[18], {v.e[16], v.e[17]}, ew, true, L, 0.0, false, true, batch_first);
      auto [ty, th, tc] = torch::lstm(v.t[18], {v.t[16], v.t[17]}, tw, true, L, 0.0, false, true, batch_first);
      check_grads({ey, eh, ec}, {ty, th, tc}, v);
    }
    for (int mode = 0; mode < 3; ++mode) {
      SCOPED_TRACE(mode == 0 ? "gru" : mode == 1 ? "rnn_tanh" : "rnn_relu");
      Leaves v = make(mode == 0 ? 3 : 1, false);
      v.add(x0);
      const std::vector<ember::Tensor> ew(v.e.begin(), v.e.begin() + 16);
      const std::vector<torch::Tensor> tw(v.t.begin(), v.t.begin() + 16);
      auto e = mode == 0 ? ember::gru(v.e[17], v.e[16], ew, true, L, 0.0, false, true, batch_first)
               : mode == 1 ? ember::rnn_tanh(v.e[17], v.e[16], ew, true, L, 0.0, false, true, batch_first)
                           : ember::rnn_relu(v.e[17], v.e[16], ew, true, L, 0.0, false, true, batch_first);
      auto t = mode == 0 ? torch::gru(v.t[17], v.t[16], tw, true, L, 0.0, false, true, batch_first)
               : mode == 1 ? torch::rnn_tanh(v.t[17], v.t[16], tw, true, L, 0.0, false, true, batch_first)
                           : torch::rnn_relu(v.t[17], v.t[16], tw, true, L, 0.0, false, true, batch_first);
      check_grads({std::get<0>(e), std::get<1>(e)}, {std::get<0>(t), std::get<1>(t)}, v);
    }
  }
  {
    SCOPED_TRACE("packed lstm");
    Leaves v = make(4, true);
    v.add(rnd({5, I}, seed++));  // batch sizes 2, 2, 1
    const ember::Tensor ebs = ember::tensor({2, 2, 1}, ember::kLong);
    const std::vector<ember::Tensor> ew(v.e.begin(), v.e.begin() + 16);
    const std::vector<torch::Tensor> tw(v.t.begin(), v.t.begin() + 16);
    auto [ey, eh, ec] = ember::lstm(v.e[18], ebs, {v.e[16], v.e[17]}, ew, true, L, 0.0, false, true);
    auto [ty, th, tc] = torch::lstm(v.t[18], T(ebs), {v.t[16], v.t[17]}, tw, true, L, 0.0, false, true);
    check_grads({ey, eh, ec}, {ty, th, tc}, v);
  }
  {
    SCOPED_TRACE("cells");
    Leaves v;
    for (int64_t gates : {4, 3, 1}) {
      v.add(rnd({gates * H, I}, seed++));
      v.add(rnd({gates * H, H}, seed++));
      v.add(rnd({gates * H}, seed++));
      v.add(rnd({gates * H}, seed++));
    }
    v.add(rnd({B, I}, seed++));  // 12: input
    v.add(rnd({B, H}, seed++));  // 13: h
    v.add(rnd({B, H}, seed++));  // 14: c
    const auto& e = v.e;
    const auto& t = v.t;
    auto [eh, ec] = ember::lstm_cell(e[12], {e[13], e[14]}, e[0], e[1], e[2], e[3]);
    auto [th, tc] = torch::lstm_cell(t[12], {t[13], t[14]}, t[0], t[1], t[2], t[3]);
    check_grads({eh, ec, ember::gru_cell(e[12], e[13], e[4], e[5], e[6], e[7]),
                 ember::rnn_tanh_cell(e[12], e[13], e[8], e[9], e[10]), ember::rnn_relu_cell(e[12], e[13], e[8], e[9], std::nullopt, e[11]),
                 std::get<0>(ember::lstm_cell(e[12], {e[13], e[14]}, e[0], e[1]))},
                {th, tc, torch::gru_cell(t[12], t[13], t[4], t[5], t[6], t[7]),
                 torch::rnn_tanh_cell(t[12], t[13], t[8], t[9], t[10]), torch::rnn_relu_cell(t[12], t[13], t[8], t[9], c10::nullopt, t[11]),
                 std::get<0>(torch::lstm_cell(t[12], {t[13], t[14]}, t[0], t[1]))},
                v);
  }
  // bad input: a wrong number of weights, states or dimensions
  const ember::Tensor x = rnd({Tn, B, I}, 990), h = rnd({L, B, H}, 991);
  EXPECT_THROW(ember::gru(x, h, {rnd({3 * H, I}, 992)}, true, L, 0.0, false, false, false), ember::Error);
  EXPECT_THROW(ember::lstm(x, {h}, {}, true, 1, 0.0, false, false, false), ember::Error);
  EXPECT_THROW(ember::rnn_tanh_cell(rnd({B, I + 1}, 993), rnd({B, H}, 994), rnd({H, I}, 995), rnd({H, H}, 996)),
               ember::Error);
}

}  // namespace EMBER_UNITY_FILE
