// Normalization: batch_norm (training statistics and running-stat updates, or eval with running
// stats), instance_norm, layer_norm, group_norm and rms_norm. Statistics are computed in double
// per channel (batch/instance) or per row (layer/group/rms, vectorized); the normalization itself
// is one affine map per (sample, channel) or per row, written in the input's dtype.
// Derivatives: the public ops are composite; they compute the statistics (updating running ones
// outside autograd) and call a recorded op that takes the statistics as arguments (channel norms)
// or fills them in (row norms), so the backward reuses them. The channel norms' statistics and
// backward are ops of their own (_batch_norm_stats, _group_norm_stats, native_*_norm_backward), so
// that a captured graph (ember::graphs) replays all of a training step's normalization. Backward
// kernels are two passes: per row sums of dy and dy * (x - mean), then dx as one affine map of dy
// and x per row.
// Under create_graph the row norms' gradients come from recorded ops (twice differentiable); the
// channel norms' fused backward refuses (see ops/first_order.h).
#include <cfloat>
#include <cmath>
#include <memory>
#include <sstream>
#include <utility>
#include <vector>

#include "dispatch/dispatch.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "kernels/cpu/norm_kernels.h"
#include "ops/first_order.h"
#include "ops/norm.h"
#include "ops/op_util.h"

namespace ember {
namespace {

// A parameter (weight, bias, running stat: 1-D) into doubles at `out`: float32 and float64 read in
// place (eval-mode batch norm reads four per call; converting them through ops cost ~5 us a call).
void read_doubles(const Tensor& t, double* out) {
  const int64_t n = t.numel(), st = t.dim() == 1 ? t.stride(0) : 1;
  if (t.dim() <= 1 && t.dtype() == kFloat) {
    const float* p = t.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i) out[i] = p[i * st];
  } else if (t.dim() <= 1 && t.dtype() == kDouble) {
    const double* p = t.data_ptr<double>();
    for (int64_t i = 0; i < n; ++i) out[i] = p[i * st];
  } else {
    const Tensor d = t.to(kDouble).contiguous();
    std::copy(d.data_ptr<double>(), d.data_ptr<double>() + n, out);
  }
}

// A parameter as C doubles, or empty when undefined.
std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> v;
  if (!t.defined()) return v;
  v.resize(static_cast<size_t>(t.numel()));
  read_doubles(t, v.data());
  return v;
}

Tensor from_doubles(const std::vector<double>& v, IntArrayRef sizes, ScalarType dtype) {
  Tensor t = make_empty({static_cast<int64_t>(v.size())}, kDouble);
  std::copy(v.begin(), v.end(), t.data_ptr<double>());
  return t.to(dtype).view(sizes);
}

void check_float(const char* op, const Tensor& input) {
  EMBER_CHECK(is_floating_type(input.dtype()), op, "\"", op, "\" not implemented for '", input.dtype(), "'");
}

using op_util::layout_of;

void check_param(const char* op, const char* what, const Tensor& t, int64_t C) {
  EMBER_CHECK(!t.defined() || t.numel() == C, op, what, " should contain ", C, " elements not ",
              t.defined() ? t.numel() : 0);
}

// The checks batch_norm and instance_norm share: a float input of at least 2 dims and per-channel
// parameters of size C. Returns C.
int64_t check_channel_norm_args(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias,
                                const Tensor& running_mean, const Tensor& running_var) {
  check_float(op, input);
  EMBER_CHECK(input.dim() >= 2, op, "Expected at least 2 dimensions for input tensor but received ", input.dim());
  const int64_t C = input.size(1);
  check_param(op, "weight", weight, C);
  check_param(op, "bias", bias, C);
  check_param(op, "running_mean", running_mean, C);
  check_param(op, "running_var", running_var, C);
  return C;
}

// ---- channel norms (batch, instance, group) -----------------------------------------------------
// Statistics per group of channels, per sample or over the batch: stat s(n, c) = n * G + c / (C / G)
// per sample, c / (C / G) over the batch (batch norm has G = C).
struct StatLayout {
  int64_t N, C, L, G;
  bool per_sample;
  int64_t stat(int64_t n, int64_t c) const { return (per_sample ? n * G : 0) + c / (C / G); }
  // Elements each statistic is taken over.
  double count() const { return static_cast<double>((per_sample ? 1 : N) * (C / G) * L); }
};

StatLayout stat_layout(const Tensor& input, int64_t G, bool per_sample) {
  const int64_t N = input.size(0), C = input.size(1);
  return {N, C, N * C > 0 ? input.numel() / (N * C) : 0, G, per_sample};
}

// The channel kernels run on 4-D channels_last tensors in place, seen as (N, L, C); other
// layouts as contiguous (N, C, L).
bool runs_channels_last(const Tensor& x) {
  return x.dim() == 4 && x.suggest_memory_format() == MemoryFormat::ChannelsLast;
}
Tensor kernel_view(const Tensor& t, bool channels_last, const StatLayout& l) {
  if (!channels_last) return t.contiguous().view({l.N, l.C, l.L});
  return t.contiguous(MemoryFormat::ChannelsLast).permute({0, 2, 3, 1}).view({l.N, l.L, l.C});
}

// y = x * scale[n, c] + shift[n, c] over x viewed as (N, C, rest), in x's layout (channels_last
// in place, 5-D channels_last through a copy).
Tensor channel_affine(const Tensor& input, const std::vector<double>& scale, const std::vector<double>& shift) {
  const bool cl = runs_channels_last(input);
  Tensor y = make_empty(input.sizes(), input.dtype(), cl ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous);
  if (input.numel() > 0) {
    const StatLayout l = stat_layout(input, input.size(1), false);
    kernels::channel_affine_kernel(kernel_view(input, cl, l), kernel_view(y, cl, l), scale.data(), shift.data(), cl);
  }
  const MemoryFormat f = layout_of(input);
  return f == MemoryFormat::Contiguous || cl ? y : y.contiguous(f);
}

// Results the formulas of a node share, computed by the first of them to run for an incoming
// gradient (formulas run one after another). The gradient, whose identity keys the results, is
// held only until every formula that reads them has run.
class SharedResults {
 public:
  explicit SharedResults(int readers) : readers_(readers) {}
  // Whether the results belong to `grad`; counts the read.
  bool reuse(const Tensor& grad) {
    if (left_ == 0 || !seen_.is_same(grad)) return false;
    if (--left_ == 0) seen_ = Tensor();
    return true;
  }
  // The results were just computed for `grad`, by one of the readers (`by_reader`) or not.
  void computed(const Tensor& grad, bool by_reader) {
    left_ = readers_ - (by_reader ? 1 : 0);
    seen_ = left_ > 0 ? grad : Tensor();
  }

 private:
  int readers_, left_ = 0;
  Tensor seen_;
};

// The gradients of a channel norm (dx, dw, db: each when its bit of `mask` is set, 1, 2, 4) from
// the forward's input, weight and statistics (double tensors, see StatLayout). The per-row sums
// of dy and dy * (x - mean) serve all three. An op of its own, so that a captured graph replays it
// on the statistics each replay's forward wrote (ember::graphs). The weight and bias gradients
// are double tensors (the engine casts them to the parameters' dtype).
template <class Names>
struct ChannelNormBackwardOp {
  static constexpr const char* name = Names::backward_op;
  static constexpr bool differentiable = false;
  static std::tuple<Tensor, Tensor, Tensor> run(const Tensor& grad, const Tensor& x, const Tensor& weight,
                                                const Tensor& mean_t, const Tensor& rstd_t, int64_t G,
                                                bool per_sample, bool batch_stats, int64_t mask) {
    const StatLayout l = stat_layout(x, G, per_sample);
    const bool want_x = mask & 1, want_w = mask & 2, want_b = mask & 4;
    const double* mean = mean_t.data_ptr<double>();
    const double* rstd = rstd_t.data_ptr<double>();
    const bool cl = runs_channels_last(x);
    const int64_t rows = l.N * l.C;
    const Tensor dy = grad.to(x.dtype());
    // sum_dy[p] = sum(dy), sum_dyx[p] = sum(dy * (x - mean)) over row p = n * C + c
    std::vector<double> sum_dy, sum_dyx;
    if (want_w || want_b || (want_x && batch_stats)) {
      sum_dy.assign(rows, 0.0);
      sum_dyx.assign(rows, 0.0);
      if (x.numel() > 0) {
        std::vector<double> row_mean(rows);
        for (int64_t n = 0; n < l.N; ++n)
          for (int64_t ch = 0; ch < l.C; ++ch) row_mean[n * l.C + ch] = mean[l.stat(n, ch)];
        kernels::channel_grad_sums_kernel(kernel_view(dy, cl, l), kernel_view(x, cl, l), row_mean.data(),
                                          sum_dy.data(), sum_dyx.data(), cl);
      }
    }
    Tensor dx, dw, db;
    if (want_x) dx = grad_input(dy, x, weight, l, mean, rstd, batch_stats, sum_dy, sum_dyx);
    if (want_w) {
      dw = make_empty({l.C}, kDouble);
      double* gw = dw.data_ptr<double>();
      std::fill(gw, gw + l.C, 0.0);
      for (int64_t n = 0; n < l.N; ++n)
        for (int64_t ch = 0; ch < l.C; ++ch) gw[ch] += sum_dyx[n * l.C + ch] * rstd[l.stat(n, ch)];
    }
    if (want_b) {
      db = make_empty({l.C}, kDouble);
      double* gb = db.data_ptr<double>();
      std::fill(gb, gb + l.C, 0.0);
      for (int64_t n = 0; n < l.N; ++n)
        for (int64_t ch = 0; ch < l.C; ++ch) gb[ch] += sum_dy[n * l.C + ch];
    }
    return {dx, dw, db};
  }

 private:
  static Tensor grad_input(const Tensor& dy, const Tensor& x, const Tensor& weight, const StatLayout& l,
                           const double* mean, const double* rstd, bool batch_stats,
                           const std::vector<double>& sum_dy, const std::vector<double>& sum_dyx) {
    const bool cl = runs_channels_last(x);
    Tensor dx = make_empty(x.sizes(), x.dtype(), cl ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous);
    if (x.numel() == 0) return dx;
    const std::vector<double> w = as_doubles(weight);
    const int64_t rows = l.N * l.C, stats = l.per_sample ? l.N * l.G : l.G;
    std::vector<double> a(rows), b(rows, 0.0), k(rows, 0.0);
    std::vector<double> m1, m2;
    if (batch_stats) {
      // mean over each statistic's elements of g = dy * w and of g * xhat
      m1.assign(stats, 0.0);
      m2.assign(stats, 0.0);
      for (int64_t n = 0; n < l.N; ++n)
        for (int64_t ch = 0; ch < l.C; ++ch) {
          const int64_t s = l.stat(n, ch), p = n * l.C + ch;
          const double wc = w.empty() ? 1.0 : w[ch];
          m1[s] += wc * sum_dy[p] / l.count();
          m2[s] += wc * rstd[s] * sum_dyx[p] / l.count();
        }
    }
    for (int64_t n = 0; n < l.N; ++n)
      for (int64_t ch = 0; ch < l.C; ++ch) {
        const int64_t s = l.stat(n, ch), p = n * l.C + ch;
        const double r = rstd[s];
        a[p] = r * (w.empty() ? 1.0 : w[ch]);
        if (!batch_stats) continue;
        // dx = r * (w * dy - m1 - xhat * m2), xhat = (x - mean) * r
        b[p] = -r * r * m2[s];
        k[p] = r * r * m2[s] * mean[s] - r * m1[s];
      }
    kernels::channel_grad_input_kernel(kernel_view(dy, cl, l), kernel_view(x, cl, l), kernel_view(dx, cl, l),
                                       a.data(), b.data(), k.data(), cl);
    const MemoryFormat f = layout_of(x);
    return f == MemoryFormat::Contiguous || cl ? dx : dx.contiguous(f);
  }
};

// The formulas of a channel norm's node: the first to run for an incoming gradient calls the
// backward op for every gradient the node's formulas return (those of the inputs needing one:
// the engine runs the formula of each valid edge); each formula then takes its own.
template <class Names>
class ChannelNormGrads {
 public:
  ChannelNormGrads(autograd::Saved x, autograd::Saved w, autograd::Saved mean, autograd::Saved rstd, int64_t G,
                   bool per_sample, bool batch_stats, int64_t mask)
      : x_(x), w_(w), mean_(mean), rstd_(rstd), G_(G), per_sample_(per_sample), batch_stats_(batch_stats),
        mask_(mask) {}

  // which: 0 input, 1 weight, 2 bias
  Tensor take(const autograd::BackwardContext& c, int which) {
    if (left_ == 0 || !seen_.is_same(c.grad())) {
      const Tensor x = c[x_], w = w_.index == SIZE_MAX ? Tensor() : c[w_];
      // (only the input's gradient is a function of the weight)
      check_first_order(Names::node, {c.grad(), x, mask_ & 1 ? w : Tensor()});
      auto [dx, dw, db] = dispatch::call<ChannelNormBackwardOp<Names>>(c.grad(), x, w, c[mean_], c[rstd_], G_,
                                                                        per_sample_, batch_stats_, mask_);
      results_[0] = std::move(dx);
      results_[1] = std::move(dw);
      results_[2] = std::move(db);
      left_ = ((mask_ & 1) != 0) + ((mask_ & 2) != 0) + ((mask_ & 4) != 0);
      seen_ = c.grad();
    }
    Tensor r = std::exchange(results_[which], Tensor());
    if (--left_ == 0) seen_ = Tensor();  // the gradient is held only until every formula ran
    return r;
  }

 private:
  autograd::Saved x_, w_, mean_, rstd_;
  int64_t G_;
  bool per_sample_, batch_stats_;
  int64_t mask_;
  int left_ = 0;
  Tensor seen_;
  Tensor results_[3];
};

// y = (x - mean[s]) * rstd[s] * w[c] + b[c] with given statistics (double tensors, see
// StatLayout): the recorded op of batch, instance and group norm. `batch_stats`: the statistics
// come from the input, so its gradient flows through them too.
template <class Names>
struct ChannelNormOp {
  static constexpr const char* name = Names::op;
  static Tensor run(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& mean,
                    const Tensor& rstd, int64_t G, bool per_sample, bool) {
    if (input.numel() == 0) return make_empty(input.sizes(), input.dtype(), layout_of(input));
    const StatLayout l = stat_layout(input, G, per_sample);
    const std::vector<double> w = as_doubles(weight), b = as_doubles(bias);
    const double* m = mean.data_ptr<double>();
    const double* r = rstd.data_ptr<double>();
    std::vector<double> scale(l.N * l.C), shift(l.N * l.C);
    for (int64_t n = 0; n < l.N; ++n)
      for (int64_t c = 0; c < l.C; ++c) {
        const int64_t s = l.stat(n, c), p = n * l.C + c;
        scale[p] = r[s] * (w.empty() ? 1.0 : w[c]);
        shift[p] = (b.empty() ? 0.0 : b[c]) - m[s] * scale[p];
      }
    return channel_affine(input, scale, shift);
  }
  static void derivative(autograd::Derivative& d, const Tensor& input, const Tensor& weight, const Tensor& bias,
                         const Tensor& mean, const Tensor& rstd, int64_t G, bool per_sample, bool batch_stats) {
    d.name(Names::node);
    // The engine runs the formula of each input needing a gradient, and only those.
    const int64_t mask = int64_t{d.needs(input)} | int64_t{d.needs(weight)} << 1 | int64_t{d.needs(bias)} << 2;
    auto st = std::make_shared<ChannelNormGrads<Names>>(
        d.save(input), weight.defined() ? d.save(weight) : autograd::Saved{SIZE_MAX}, d.save(mean), d.save(rstd), G,
        per_sample, batch_stats, mask);
    d.grad(input, [st](const auto& c) { return st->take(c, 0); });
    d.grad(weight, [st](const auto& c) { return st->take(c, 1); });
    d.grad(bias, [st](const auto& c) { return st->take(c, 2); });
  }
};
struct BatchNormNames {
  static constexpr const char* op = "native_batch_norm";
  static constexpr const char* node = "NativeBatchNormBackward0";
  static constexpr const char* backward_op = "native_batch_norm_backward";
};
struct GroupNormNames {
  static constexpr const char* op = "native_group_norm";
  static constexpr const char* node = "NativeGroupNormBackward0";
  static constexpr const char* backward_op = "native_group_norm_backward";
};

// Moves a running statistic towards `batch` (of C values); outside autograd, as PyTorch.
void update_running(const Tensor& running, const double* batch, double momentum) {
  if (!running.defined()) return;
  NoGradGuard no_grad;
  // float and double in place (what the general path below computes: the update in double,
  // rounded once to the statistic's dtype)
  auto in_place = [&](auto* r) {
    for (int64_t c = 0; c < running.numel(); ++c)
      r[c] = static_cast<std::remove_pointer_t<decltype(r)>>((1 - momentum) * static_cast<double>(r[c]) +
                                                              momentum * batch[c]);
    running.impl()->storage()->bump_version();
  };
  if (running.is_contiguous() && running.dtype() == kFloat) return in_place(running.data_ptr<float>());
  if (running.is_contiguous() && running.dtype() == kDouble) return in_place(running.data_ptr<double>());
  std::vector<double> r = as_doubles(running);
  for (size_t c = 0; c < r.size(); ++c) r[c] = (1 - momentum) * r[c] + momentum * batch[c];
  Tensor(running).copy_(from_doubles(r, running.sizes(), running.dtype()));
}

// The (mean, rstd) results of the statistics ops: two double tensors of n values, `moments`
// writing the means and biased variances into them (returning false when it has none: they are
// NaN then), the variances then turned into 1 / sqrt(var + eps).
template <class Moments>
std::tuple<Tensor, Tensor> mean_and_rstd(int64_t n, double eps, Moments&& moments) {
  Tensor mean_t = make_empty({n}, kDouble), rstd_t = make_empty({n}, kDouble);
  double* mean = mean_t.data_ptr<double>();
  double* var = rstd_t.data_ptr<double>();
  if (!moments(mean, var)) {
    std::fill(mean, mean + n, NAN);
    std::fill(var, var + n, NAN);
  }
  for (int64_t i = 0; i < n; ++i) var[i] = 1.0 / std::sqrt(var[i] + eps);
  return {mean_t, rstd_t};
}

// The statistics batch norm normalizes with, as double tensors of C values: (mean, rstd) of the
// batch in training, moving the running statistics towards the batch's (in place), else of the
// running ones. An op of its own rather than host code in batch_norm, so that a captured graph
// replays it (ember::graphs); its results are what the forward and backward ops read.
// `num_batches_tracked`, when defined, replaces the momentum by 1 / its value, read here so that a
// replay reads each step's count (BatchNorm's cumulative average, momentum(nullopt)).
struct BatchNormStatsOp {
  static constexpr const char* name = "_batch_norm_stats";
  static constexpr bool differentiable = false;
  static std::tuple<Tensor, Tensor> run(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                                        bool training, double momentum, double eps, const Tensor& num_batches_tracked) {
    const int64_t C = input.size(1);
    if (num_batches_tracked.defined()) {
      EMBER_CHECK(num_batches_tracked.numel() == 1 && num_batches_tracked.dtype() == kLong, name,
                  "num_batches_tracked must be a 1-element int64 tensor, got ", num_batches_tracked.dtype(),
                  " of shape ", num_batches_tracked.sizes());
      momentum = 1.0 / static_cast<double>(*num_batches_tracked.data_ptr<int64_t>());
    }
    return mean_and_rstd(C, eps, [&](double* mean, double* var) {
      if (!training) {
        read_doubles(running_mean, mean);
        read_doubles(running_var, var);
        return true;
      }
      if (input.numel() == 0) return false;  // an empty batch has no statistics to learn from
      const StatLayout l = stat_layout(input, C, false);
      const bool cl = runs_channels_last(input);
      kernels::channel_moments_kernel(kernel_view(input, cl, l), mean, var, cl);
      const double n = l.count();
      std::vector<double> unbiased(var, var + C);
      for (double& v : unbiased) v *= n / (n - 1);
      update_running(running_mean, mean, momentum);
      update_running(running_var, unbiased.data(), momentum);
      return true;
    });
  }
};

// Batch statistics of (N, C, L) per channel (updating the running ones), or the running ones;
// returns the output, the mean and the rstd (per channel, as double tensors).
std::tuple<Tensor, Tensor, Tensor> batch_norm_impl(const char* op, const Tensor& input, const Tensor& weight,
                                                   const Tensor& bias, const Tensor& running_mean,
                                                   const Tensor& running_var, bool training, double momentum,
                                                   double eps, const Tensor& num_batches_tracked = Tensor()) {
  const int64_t C = check_channel_norm_args(op, input, weight, bias, running_mean, running_var);
  EMBER_CHECK(training || (running_mean.defined() && running_var.defined()), op,
              "running_mean and running_var must be defined in evaluation mode");
  auto [m, r] =
      dispatch::call<BatchNormStatsOp>(input, running_mean, running_var, training, momentum, eps, num_batches_tracked);
  return {dispatch::call<ChannelNormOp<BatchNormNames>>(input, weight, bias, m, r, C, false, training), m, r};
}

struct NativeBatchNormOp {
  static constexpr const char* name = "native_batch_norm";
  static constexpr bool composite = true;
  static std::tuple<Tensor, Tensor, Tensor> run(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                const Tensor& rm, const Tensor& rv, bool training, double momentum,
                                                double eps) {
    auto [out, mean, rstd] = batch_norm_impl(name, input, weight, bias, rm, rv, training, momentum, eps);
    const ScalarType stat_dtype = weight.defined() ? weight.dtype() : input.dtype();
    if (!training || input.numel() == 0) return {out, make_empty({0}, stat_dtype), make_empty({0}, stat_dtype)};
    return {out, mean.to(stat_dtype), rstd.to(stat_dtype)};
  }
};

// PyTorch's check of batch_norm in training: a variance needs more than one value per channel.
void check_training_batch(const char* op, const Tensor& input) {
  if (input.dim() < 2) return;
  const int64_t per_channel = input.numel() / std::max<int64_t>(input.size(1), 1);
  EMBER_CHECK(per_channel != 1, op, "Expected more than 1 value per channel when training, got input size ",
              input.sizes());
}

struct BatchNormOp {
  static constexpr const char* name = "batch_norm";
  static constexpr bool composite = true;
  static Tensor run(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& rm,
                    const Tensor& rv, bool training, double momentum, double eps) {
    if (training) check_training_batch(name, input);
    return std::get<0>(batch_norm_impl(name, input, weight, bias, rm, rv, training, momentum, eps));
  }
};

// The statistics of group norm (and of instance norm, G = C): (mean, rstd) per (sample, group),
// N * G doubles each. Running statistics (instance norm's, G = C), when given, move towards the
// mean over the samples. An op for the reason BatchNormStatsOp is one.
struct GroupStatsOp {
  static constexpr const char* name = "_group_norm_stats";
  static constexpr bool differentiable = false;
  static std::tuple<Tensor, Tensor> run(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                                        int64_t G, double momentum, double eps) {
    const int64_t N = input.size(0), rows = N * G;
    return mean_and_rstd(rows, eps, [&](double* mean, double* var) {
      if (input.numel() == 0) return false;
      const int64_t L = input.numel() / rows;
      kernels::row_norm_kernel(input.contiguous().view({rows, L}), Tensor(), Tensor(), Tensor(), eps, false, mean,
                               var);
      if (running_mean.defined() || running_var.defined()) {
        std::vector<double> avg_mean(G, 0.0), avg_var(G, 0.0);
        for (int64_t i = 0; i < rows; ++i) {
          avg_mean[i % G] += mean[i] / N;
          avg_var[i % G] += var[i] * L / (L - 1) / N;
        }
        update_running(running_mean, avg_mean.data(), momentum);
        update_running(running_var, avg_var.data(), momentum);
      }
      return true;
    });
  }
};

// Per (sample, channel) statistics; running stats (if any) move towards the mean over samples.
// Its node is batch norm's over per-sample statistics (PyTorch records a view around it).
struct InstanceNormOp {
  static constexpr const char* name = "instance_norm";
  static constexpr bool composite = true;
  static Tensor run(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                    const Tensor& running_var, bool use_input_stats, double momentum, double eps) {
    const int64_t C = check_channel_norm_args(name, input, weight, bias, running_mean, running_var);
    if (!use_input_stats) {
      return std::get<0>(batch_norm_impl(name, input, weight, bias, running_mean, running_var, false, momentum, eps));
    }
    const StatLayout l = stat_layout(input, C, true);
    EMBER_CHECK(l.L != 1, name, "Expected more than 1 spatial element when training, got input size ", input.sizes());
    auto [m, r] = dispatch::call<GroupStatsOp>(input, running_mean, running_var, C, momentum, eps);
    return dispatch::call<ChannelNormOp<BatchNormNames>>(input, weight, bias, m, r, C, true, true);
  }
};

// ---- row norms (layer, rms) ------------------------------------------------------------------------
// Checks of layer_norm and rms_norm; returns (rows, cols) of the input seen as a matrix.
std::pair<int64_t, int64_t> check_normalized(const char* op, const Tensor& input, IntArrayRef shape,
                                             const Tensor& weight, const Tensor& bias) {
  check_float(op, input);
  EMBER_CHECK(!shape.empty(), op,
              "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but "
              "got normalized_shape = ",
              shape);
  EMBER_CHECK(!weight.defined() || weight.sizes() == shape, op,
              "Expected weight to be of same shape as normalized_shape, but got weight of shape ",
              weight.defined() ? weight.sizes() : IntArrayRef(), " and normalized_shape = ", shape);
  EMBER_CHECK(!bias.defined() || bias.sizes() == shape, op,
              "Expected bias to be of same shape as normalized_shape, but got bias of shape ",
              bias.defined() ? bias.sizes() : IntArrayRef(), " and normalized_shape = ", shape);
  const int64_t nd = input.dim(), ns = static_cast<int64_t>(shape.size());
  bool ok = nd >= ns;
  for (int64_t i = 0; ok && i < ns; ++i) ok = input.size(nd - ns + i) == shape[i];
  if (!ok) {
    std::ostringstream os;
    os << "Given normalized_shape=" << shape << ", expected input with shape [*";
    for (int64_t s : shape) os << ", " << s;
    os << "], but got input of size" << input.sizes();
    detail::fail(op, os.str());
  }
  int64_t cols = 1;
  for (int64_t s : shape) cols *= s;
  return {cols == 0 ? 0 : input.numel() / cols, cols};
}

// The gradients of a row norm (dx, dw, db: each when its bit of `mask` is set, 1, 2, 4) from the
// forward's input, weight and statistics (double tensors of `rows` values), in one pass; dw and db
// in double (the engine casts them to the parameters' dtype). An op of its own, so that a captured
// graph replays it on the statistics each replay's forward wrote (ember::graphs).
template <class Names>
struct RowNormBackwardOp {
  static constexpr const char* name = Names::backward_op;
  static constexpr bool differentiable = false;
  static std::tuple<Tensor, Tensor, Tensor> run(const Tensor& grad, const Tensor& x, const Tensor& w,
                                                const Tensor& mean, const Tensor& rstd, IntArrayRef shape, bool rms,
                                                int64_t mask) {
    const int64_t rows = mean.numel();
    int64_t cols = 1;
    for (int64_t s : shape) cols *= s;
    Tensor dx = mask & 1 ? make_empty(x.sizes(), x.dtype()) : Tensor();
    Tensor dw = mask & 2 ? make_empty({cols}, kDouble) : Tensor();
    Tensor db = mask & 4 ? make_empty({cols}, kDouble) : Tensor();
    for (const Tensor& g : {dw, db}) {
      if (g.defined()) std::fill(g.data_ptr<double>(), g.data_ptr<double>() + cols, 0.0);
    }
    if (x.numel() > 0) {
      const Tensor dy = grad.to(x.dtype()).contiguous();
      kernels::row_norm_backward_kernel(dy.view({rows, cols}), x.contiguous().view({rows, cols}),
                                        w.defined() ? w.to(x.dtype()).contiguous() : w, mean.data_ptr<double>(),
                                        rstd.data_ptr<double>(), rms, dx.defined() ? dx.view({rows, cols}) : dx,
                                        dw.defined() ? dw.data_ptr<double>() : nullptr,
                                        db.defined() ? db.data_ptr<double>() : nullptr);
    }
    return {dx, dw.defined() ? dw.view(shape) : dw, db.defined() ? db.view(shape) : db};
  }
};

// The gradients of a row norm; weight and bias gradients come with the input's in one pass and
// are kept for their formulas (which run after the input's, on the same incoming gradient).
template <class Names>
class RowNormBackward {
 public:
  RowNormBackward(autograd::Saved x, autograd::Saved w, autograd::Saved mean, autograd::Saved rstd, IntArrayRef shape,
                  double eps, bool rms, bool want_w, bool want_b)
      : x_(x), w_(w), mean_(mean), rstd_(rstd), shape_(shape), eps_(eps), rms_(rms), want_w_(want_w),
        want_b_(want_b), shared_(want_w + want_b) {}

  Tensor grad_input(const autograd::BackwardContext& c) {
    run(c, true);
    return std::exchange(dx_, Tensor());
  }
  Tensor grad_weight(const autograd::BackwardContext& c) { return run(c, false), gw_; }
  Tensor grad_bias(const autograd::BackwardContext& c) { return run(c, false), gb_; }

 private:
  void run(const autograd::BackwardContext& c, bool input) {
    if (!input && shared_.reuse(c.grad())) return;
    shared_.computed(c.grad(), !input);
    const Tensor x = c[x_], w = w_.index == SIZE_MAX ? Tensor() : c[w_];
    if (GradMode::is_enabled() && (c.grad().requires_grad() || x.requires_grad() || (w.defined() && w.requires_grad()))) {
      return run_recorded(c.grad().to(x.dtype()), x, w, input);
    }
    const int64_t mask = int64_t{input} | int64_t{want_w_} << 1 | int64_t{want_b_} << 2;
    std::tie(dx_, gw_, gb_) =
        dispatch::call<RowNormBackwardOp<Names>>(c.grad(), x, w, c[mean_], c[rstd_], shape_.ref(), rms_, mask);
  }

  // create_graph: the same gradients from recorded ops, the statistics recomputed from x, so
  // that they have gradients of their own.
  void run_recorded(const Tensor& dy, const Tensor& x, const Tensor& w, bool input) {
    const int64_t lead = x.dim() - static_cast<int64_t>(shape_.size());
    DimVector lead_dims, norm_dims;
    for (int64_t i = 0; i < x.dim(); ++i) (i < lead ? lead_dims : norm_dims).push_back(i);
    const Tensor xc = rms_ ? x : x - x.mean(norm_dims, true);
    const Tensor std = ((xc * xc).mean(norm_dims, true) + eps_).sqrt();
    const Tensor xhat = xc / std;
    const Tensor g = w.defined() ? dy * w.to(x.dtype()) : dy;
    Tensor inner = g - xhat * (g * xhat).mean(norm_dims, true);
    if (!rms_) inner = inner - g.mean(norm_dims, true);
    if (input) dx_ = inner / std;
    // summed over the leading dims (none: the input is one row)
    auto over_rows = [&](const Tensor& t) { return lead_dims.empty() ? t : t.sum(lead_dims); };
    if (want_w_) gw_ = over_rows(dy * xhat);
    if (want_b_) gb_ = over_rows(dy);
  }

  autograd::Saved x_, w_, mean_, rstd_;
  DimVector shape_;
  double eps_;
  bool rms_, want_w_, want_b_;
  SharedResults shared_;  // of gw_ and gb_
  Tensor dx_, gw_, gb_;
};

// The row kernel over the input as (rows, cols), affine parameters in the input's dtype: the
// recorded op of layer_norm and rms_norm. The statistics (double tensors of `rows` values, made
// by the op so that a captured graph sees them written by it) go to `mean` and `rstd`; the
// derivative keeps them.
template <class Names>
struct RowNormOp {
  static constexpr const char* name = Names::op;
  static Tensor run(const Tensor& input, IntArrayRef shape, const Tensor& weight, const Tensor& bias, double eps,
                    bool rms, Tensor* mean, Tensor* rstd) {
    const auto [rows, cols] = check_normalized(name, input, shape, weight, bias);
    Tensor out = make_empty(input.sizes(), input.dtype());
    *mean = make_empty({rows}, kDouble);
    *rstd = make_empty({rows}, kDouble);
    if (input.numel() == 0) return out;
    const Tensor w = weight.defined() ? weight.to(input.dtype()).contiguous() : weight;
    const Tensor b = bias.defined() ? bias.to(input.dtype()).contiguous() : bias;
    double* r = rstd->data_ptr<double>();
    kernels::row_norm_kernel(input.contiguous().view({rows, cols}), out.view({rows, cols}), w, b, eps, rms,
                             mean->data_ptr<double>(), r);
    for (int64_t i = 0; i < rows; ++i) r[i] = 1.0 / std::sqrt(r[i] + eps);
    return out;
  }
  static void derivative(autograd::Derivative& d, const Tensor& input, IntArrayRef shape, const Tensor& weight,
                         const Tensor& bias, double eps, bool rms, Tensor* mean, Tensor* rstd) {
    d.name(Names::node);
    auto st = std::make_shared<RowNormBackward<Names>>(
        d.save(input), weight.defined() ? d.save(weight) : autograd::Saved{SIZE_MAX}, d.save(*mean), d.save(*rstd),
        shape, eps, rms, d.needs(weight), d.needs(bias));
    d.grad(input, [st](const auto& c) { return st->grad_input(c); });
    d.grad(weight, [st](const auto& c) { return st->grad_weight(c); });
    d.grad(bias, [st](const auto& c) { return st->grad_bias(c); });
  }
};
struct LayerNormNames {
  static constexpr const char* op = "native_layer_norm";
  static constexpr const char* node = "NativeLayerNormBackward0";
  static constexpr const char* backward_op = "native_layer_norm_backward";
};
// libtorch 1.13 has no rms_norm; the node's name is ours.
struct RmsNormNames {
  static constexpr const char* op = "rms_norm";
  static constexpr const char* node = "RmsNormBackward0";
  static constexpr const char* backward_op = "rms_norm_backward";
};

// Returns the output and the statistics of a row norm, as (rows) double tensors.
template <class Names>
std::tuple<Tensor, Tensor, Tensor> row_norm(const char* op, const Tensor& input, IntArrayRef shape,
                                            const Tensor& weight, const Tensor& bias, double eps, bool rms) {
  check_normalized(op, input, shape, weight, bias);
  Tensor mean, rstd;
  Tensor out = dispatch::call<RowNormOp<Names>>(input, shape, weight, bias, eps, rms, &mean, &rstd);
  return {out, mean, rstd};
}

struct NativeLayerNormOp {
  static constexpr const char* name = "native_layer_norm";
  static constexpr bool composite = true;
  static std::tuple<Tensor, Tensor, Tensor> run(const Tensor& input, IntArrayRef shape, const Tensor& weight,
                                                const Tensor& bias, double eps) {
    auto [out, mean, rstd] = row_norm<LayerNormNames>(name, input, shape, weight, bias, eps, false);
    DimVector stat_shape(input.sizes());
    for (size_t i = input.sizes().size() - shape.size(); i < stat_shape.size(); ++i) stat_shape[i] = 1;
    return {out, mean.to(input.dtype()).view(stat_shape), rstd.to(input.dtype()).view(stat_shape)};
  }
};

struct LayerNormOp {
  static constexpr const char* name = "layer_norm";
  static constexpr bool composite = true;
  static Tensor run(const Tensor& input, IntArrayRef shape, const Tensor& weight, const Tensor& bias, double eps) {
    return std::get<0>(row_norm<LayerNormNames>(name, input, shape, weight, bias, eps, false));
  }
};

// As PyTorch 2.4's rms_norm, the default eps is the epsilon of the type computed in (float for
// the 16-bit floats).
struct RmsNormOp {
  static constexpr const char* name = "rms_norm";
  static constexpr bool composite = true;
  static Tensor run(const Tensor& input, IntArrayRef shape, const Tensor& weight, std::optional<double> eps) {
    const double e = eps.value_or(input.dtype() == kDouble ? DBL_EPSILON : FLT_EPSILON);
    return std::get<0>(row_norm<RmsNormNames>(name, input, shape, weight, Tensor(), e, true));
  }
};

// Statistics per (sample, group) over the group's channels and positions, affine per channel.
struct NativeGroupNormOp {
  static constexpr const char* name = "native_group_norm";
  static constexpr bool composite = true;
  static std::tuple<Tensor, Tensor, Tensor> run(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                int64_t G, double eps) {
    check_float(name, input);
    EMBER_CHECK(input.dim() >= 2, name, "Expected at least 2 dimensions for input tensor but received ", input.dim());
    const int64_t N = input.size(0), C = input.size(1);
    EMBER_CHECK(G > 0 && C % G == 0, name,
                "Expected number of channels in input to be divisible by num_groups, but got input of shape ",
                input.sizes(), " and num_groups=", G);
    EMBER_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == C), name,
                "Expected weight to be a vector of size equal to the number of channels in input, but got weight of "
                "shape ",
                weight.sizes(), " and input of shape ", input.sizes());
    EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.numel() == C), name,
                "Expected bias to be a vector of size equal to the number of channels in input, but got bias of "
                "shape ",
                bias.sizes(), " and input of shape ", input.sizes());
    auto [m, r] = dispatch::call<GroupStatsOp>(input, Tensor(), Tensor(), G, 0.0, eps);
    Tensor out = dispatch::call<ChannelNormOp<GroupNormNames>>(input, weight, bias, m, r, G, true, true);
    return {out, m.to(input.dtype()).view({N, G}), r.to(input.dtype()).view({N, G})};
  }
};

}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps, bool) {
  return dispatch::call<BatchNormOp>(input, weight, bias, running_mean, running_var, training, momentum, eps);
}
Tensor batch_norm_cumulative(const Tensor& input, const Tensor& weight, const Tensor& bias,
                             const Tensor& running_mean, const Tensor& running_var, const Tensor& num_batches_tracked,
                             double eps) {
  // batch_norm's ops without its composite op around them (one op fewer in the library: the
  // profiler shows the statistics and normalization ops only)
  check_training_batch("batch_norm", input);
  return std::get<0>(
      batch_norm_impl("batch_norm", input, weight, bias, running_mean, running_var, true, 0.0, eps, num_batches_tracked));
}
std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                     const Tensor& running_mean, const Tensor& running_var,
                                                     bool training, double momentum, double eps) {
  return dispatch::call<NativeBatchNormOp>(input, weight, bias, running_mean, running_var, training, momentum, eps);
}
Tensor instance_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                     const Tensor& running_var, bool use_input_stats, double momentum, double eps, bool) {
  return dispatch::call<InstanceNormOp>(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps);
}
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps, bool) {
  return dispatch::call<LayerNormOp>(input, normalized_shape, weight, bias, eps);
}
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                                                     const Tensor& weight, const Tensor& bias, double eps) {
  return dispatch::call<NativeLayerNormOp>(input, normalized_shape, weight, bias, eps);
}
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps, bool) {
  return std::get<0>(dispatch::call<NativeGroupNormOp>(input, weight, bias, num_groups, eps));
}
std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                     int64_t num_groups, double eps) {
  return dispatch::call<NativeGroupNormOp>(input, weight, bias, num_groups, eps);
}
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, std::optional<double> eps) {
  return dispatch::call<RmsNormOp>(input, normalized_shape, weight, eps);
}

}  // namespace ember
