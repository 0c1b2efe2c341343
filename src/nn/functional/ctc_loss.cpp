// CTC loss as a composition: the forward (alpha) recursion of Graves et al. in log space over
// the extended targets (blank, t1, blank, t2, ..., blank), all samples at once, a sample's alpha
// frozen past its input length. Impossible paths carry a large finite negative log-probability
// rather than -inf so that logsumexp's gradient stays finite (exp(x - max) is 0 for them, where
// -inf - -inf would be NaN); a loss at that level is infinite, as PyTorch reports it.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/nn/functional/loss.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/shape.h"

namespace ember::nn::functional {
namespace {

constexpr double kImpossible = -1e30;  // log-probability of no path
constexpr double kInfiniteLoss = 1e29;

std::vector<int64_t> longs(const char* what, const Tensor& t) {
  EMBER_CHECK(t.defined() && t.dim() <= 1, "ctc_loss", what, " must be a 1-D tensor, got ",
              t.defined() ? t.sizes() : IntArrayRef());
  const Tensor c = t.to(kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

}  // namespace

Tensor ctc_loss(const Tensor& log_probs_in, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossFuncOptions& o) {
  EMBER_CHECK(log_probs_in.defined() && (log_probs_in.dim() == 3 || log_probs_in.dim() == 2), "ctc_loss",
              "log_probs must be (T, N, C) or (T, C), got ", log_probs_in.defined() ? log_probs_in.sizes() : IntArrayRef());
  const bool unbatched = log_probs_in.dim() == 2;
  const Tensor log_probs = unbatched ? log_probs_in.unsqueeze(1) : log_probs_in;
  const int64_t t_max = log_probs.size(0), n = log_probs.size(1), c = log_probs.size(2);
  EMBER_CHECK(o.blank() >= 0 && o.blank() < c, "ctc_loss", "blank must be in label range (got ", o.blank(),
              " for ", c, " classes)");
  const std::vector<int64_t> in_len = longs("input_lengths", input_lengths);
  const std::vector<int64_t> tgt_len = longs("target_lengths", target_lengths);
  EMBER_CHECK(static_cast<int64_t>(in_len.size()) == n && static_cast<int64_t>(tgt_len.size()) == n, "ctc_loss",
              "input_lengths and target_lengths must have batch size ", n, " entries, got ", in_len.size(), " and ",
              tgt_len.size());
  // Each sample's labels, from a padded (N, S) tensor or the concatenation.
  const Tensor tg = targets.to(kLong).contiguous();
  const int64_t* tp = tg.data_ptr<int64_t>();
  std::vector<std::vector<int64_t>> labels(static_cast<size_t>(n));
  int64_t offset = 0, s_max = 0;
  for (int64_t b = 0; b < n; ++b) {
    EMBER_CHECK(in_len[b] >= 0 && in_len[b] <= t_max, "ctc_loss", "Expected input_lengths to have value at most ",
                t_max, ", but got value ", in_len[b], " (while checking arguments for ctc_loss_cpu)");
    EMBER_CHECK(tgt_len[b] >= 0, "ctc_loss", "target_lengths must be non-negative, got ", tgt_len[b]);
    const int64_t start = tg.dim() == 2 && !unbatched ? b * tg.size(1) : offset;
    EMBER_CHECK(tg.dim() != 2 || unbatched || tgt_len[b] <= tg.size(1), "ctc_loss", "Expected tensor to have size at least ",
                tgt_len[b], " at dimension 1, but got size ", tg.size(1), " for argument #2 'targets'");
    EMBER_CHECK(start + tgt_len[b] <= tg.numel(), "ctc_loss", "targets has ", tg.numel(),
                " entries, fewer than the target lengths need");
    labels[b].assign(tp + start, tp + start + tgt_len[b]);
    for (int64_t l : labels[b]) {
      EMBER_CHECK(l >= 0 && l < c, "ctc_loss", "target ", l, " is out of range for ", c, " classes");
    }
    offset += tgt_len[b];
    s_max = std::max(s_max, tgt_len[b]);
  }
  // Extended labels (N, 2S + 1), where a label may be reached from two back, and the final states.
  const int64_t l_ext = 2 * s_max + 1;
  std::vector<int64_t> ext(static_cast<size_t>(n * l_ext), o.blank()), last(static_cast<size_t>(n * 2));
  std::vector<float> skip(static_cast<size_t>(n * l_ext), 0.f);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < tgt_len[b]; ++i) {
      ext[b * l_ext + 2 * i + 1] = labels[b][i];
      if (i > 0 && labels[b][i] != labels[b][i - 1]) skip[b * l_ext + 2 * i + 1] = 1.f;
    }
    last[2 * b] = 2 * tgt_len[b];
    last[2 * b + 1] = tgt_len[b] > 0 ? 2 * tgt_len[b] - 1 : 2 * tgt_len[b];
  }
  const TensorOptions fo = TensorOptions().dtype(log_probs.dtype());
  const Tensor ext_t = tensor(ext).view({n, l_ext});
  const Tensor skip_ok = tensor(skip).view({n, l_ext}).to(log_probs.dtype()) > 0;
  const Tensor impossible = full({n, 1}, kImpossible, fo);
  auto emit = [&](int64_t t) { return log_probs.select(0, t).gather(1, ext_t); };  // (N, L')
  // alpha_0: the first blank or the first label.
  const Tensor start_mask = arange(l_ext).view({1, l_ext}) < 2;
  Tensor alpha = where(start_mask, emit(0), full({n, l_ext}, kImpossible, fo));
  for (int64_t t = 1; t < t_max; ++t) {
    const Tensor a1 = cat({impossible, alpha.narrow(1, 0, l_ext - 1)}, 1);
    const Tensor a2 = l_ext < 3 ? full({n, l_ext}, kImpossible, fo)
                                : where(skip_ok, cat({impossible, impossible, alpha.narrow(1, 0, l_ext - 2)}, 1),
                                        full({n, l_ext}, kImpossible, fo));
    const Tensor next = stack({alpha, a1, a2}, 0).logsumexp({0}) + emit(t);
    std::vector<float> live(static_cast<size_t>(n));
    for (int64_t b = 0; b < n; ++b) live[b] = t < in_len[b] ? 1.f : 0.f;
    alpha = where(tensor(live).view({n, 1}) > 0, next, alpha);
  }
  const Tensor ends = alpha.gather(1, tensor(last).view({n, 2}));
  // A target of length 0 ends in state 0 only (both entries of `last` name it): count it once.
  std::vector<float> single(static_cast<size_t>(n));
  for (int64_t b = 0; b < n; ++b) single[b] = tgt_len[b] == 0 ? 1.f : 0.f;
  const Tensor second = where(tensor(single).view({n}) > 0, full({n}, kImpossible, fo), ends.select(1, 1));
  Tensor loss = -stack({ends.select(1, 0), second}, 0).logsumexp({0});
  // No input of length 0 has a path (PyTorch: infinite loss).
  std::vector<float> empty_in(static_cast<size_t>(n));
  for (int64_t b = 0; b < n; ++b) empty_in[b] = in_len[b] == 0 ? 1.f : 0.f;
  const Tensor infinite = (loss.detach() > kInfiniteLoss) | (tensor(empty_in).view({n}) > 0);
  loss = where(infinite, o.zero_infinity() ? zeros({n}, fo) : full({n}, INFINITY, fo), loss);
  if (unbatched) loss = loss.squeeze(0);
  if (std::holds_alternative<enumtype::kNone>(o.reduction())) return loss;
  if (std::holds_alternative<enumtype::kSum>(o.reduction())) return loss.sum();
  std::vector<float> lengths(tgt_len.begin(), tgt_len.end());
  return (loss / tensor(lengths).to(log_probs.dtype()).clamp_min(1).view(loss.sizes())).mean();
}

}  // namespace ember::nn::functional
