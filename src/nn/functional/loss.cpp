// The losses besides nll_loss, as compositions of differentiable ops. Where PyTorch's gradient
// uses |x| or a mask, the composition multiplies by a detached sign or mask so the gradient is
// PyTorch's (sign(x), 0 at x = 0) while only ops with derivatives record.
#include <cmath>

#include "dispatch/dispatch.h"
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/nn/modules/loss.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"

namespace ember::nn::functional {
namespace {

int64_t reduction_enum(const reduction_t& r) {
  if (std::holds_alternative<enumtype::kNone>(r)) return Reduction::None;
  return std::holds_alternative<enumtype::kSum>(r) ? Reduction::Sum : Reduction::Mean;
}

Tensor reduce(const Tensor& loss, const reduction_t& r) {
  switch (reduction_enum(r)) {
    case Reduction::None: return loss;
    case Reduction::Sum: return loss.sum();
    default: return loss.mean();
  }
}

void check_same_size(const char* op, const Tensor& input, const Tensor& target) {
  EMBER_CHECK(input.defined() && target.defined(), op, "input and target must be defined");
  EMBER_CHECK(input.sizes() == target.sizes(), op, "Using a target size (", target.sizes(),
              ") that is different to the input size (", input.sizes(),
              ") is not supported. Please ensure they have the same size.");
  EMBER_CHECK(is_floating_type(input.dtype()), op, "\"", op, "\" not implemented for '", input.dtype(), "'");
}

// |x| with the gradient sign(x).
Tensor abs_of(const Tensor& x) { return x * x.detach().sign(); }

// The weight of dim `class_dim` viewed to broadcast over an input of `dim` dims.
Tensor class_weight_view(const Tensor& weight, int64_t dim, int64_t class_dim) {
  DimVector shape(static_cast<size_t>(dim), 1);
  shape[class_dim] = weight.numel();
  return weight.view(shape);
}

Tensor mse_loss_impl(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options) {
  check_same_size("mse_loss", input, target);
  const Tensor d = input - target;
  return reduce(d * d, options.reduction());
}

Tensor l1_loss_impl(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options) {
  check_same_size("l1_loss", input, target);
  return reduce(abs_of(input - target), options.reduction());
}

Tensor smooth_l1_loss_impl(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options) {
  check_same_size("smooth_l1_loss", input, target);
  const double beta = options.beta();
  EMBER_CHECK(beta >= 0, "smooth_l1_loss", "smooth_l1_loss does not support negative values for beta.");
  const Tensor d = input - target;
  const Tensor a = abs_of(d);
  if (beta == 0) return reduce(a, options.reduction());
  const Tensor quadratic = (a.detach() < beta).to(d.dtype());
  const Tensor loss = quadratic * (d * d * (0.5 / beta)) + (1 - quadratic) * (a - 0.5 * beta);
  return reduce(loss, options.reduction());
}

Tensor huber_loss_impl(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options) {
  check_same_size("huber_loss", input, target);
  const double delta = options.delta();
  EMBER_CHECK(delta > 0, "huber_loss", "huber_loss does not support non-positive values for delta.");
  const Tensor d = input - target;
  const Tensor a = abs_of(d);
  const Tensor quadratic = (a.detach() < delta).to(d.dtype());
  const Tensor loss = quadratic * (d * d * 0.5) + (1 - quadratic) * ((a - 0.5 * delta) * delta);
  return reduce(loss, options.reduction());
}

Tensor cross_entropy_impl(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options) {
  EMBER_CHECK(input.defined() && target.defined(), "cross_entropy", "input and target must be defined");
  EMBER_CHECK(input.dim() >= 1, "cross_entropy", "input tensor should be 1D or more, but got a 0-D input");
  const double smoothing = options.label_smoothing();
  EMBER_CHECK(smoothing >= 0 && smoothing <= 1, "cross_entropy", "label_smoothing must be between 0.0 and 1.0. Got: ",
              smoothing);
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  const int64_t n_classes = input.size(class_dim);
  const Tensor& weight = options.weight();
  const int64_t reduction = reduction_enum(options.reduction());
  const Tensor logp = log_softmax(input, class_dim);

  if (is_floating_type(target.dtype())) {  // class probabilities
    EMBER_CHECK(target.sizes() == input.sizes(), "cross_entropy", "Expected target size ", input.sizes(),
                " (probabilities), got ", target.sizes());
    const Tensor t = smoothing > 0 ? target * (1 - smoothing) + smoothing / static_cast<double>(n_classes) : target;
    Tensor prod = logp * t;
    if (weight.defined()) prod = prod * class_weight_view(weight, input.dim(), class_dim);
    switch (reduction) {
      case Reduction::None: return -prod.sum({class_dim});
      case Reduction::Sum: return -prod.sum();
      default: return -prod.sum() / (static_cast<double>(input.numel()) / static_cast<double>(n_classes));
    }
  }

  const Tensor nll = ember::nll_loss(logp, target, weight, reduction, options.ignore_index());
  if (smoothing == 0) return nll;
  // Label smoothing adds the mean over classes of -log p (weighted), for entries not ignored.
  const Tensor kept = (target != options.ignore_index()).to(logp.dtype());
  const Tensor weighted = weight.defined() ? logp * class_weight_view(weight, input.dim(), class_dim) : logp;
  const Tensor smooth = -weighted.sum({class_dim}) * kept;
  Tensor smooth_reduced;
  switch (reduction) {
    case Reduction::None: smooth_reduced = smooth; break;
    case Reduction::Sum: smooth_reduced = smooth.sum(); break;
    default:
      if (weight.defined()) {
        // Normalized by the weights of the counted entries, as nll_loss's mean.
        const Tensor idx = target.to(kLong).clamp_min(0).clamp_max(n_classes - 1);
        const Tensor w = weight.index_select(0, idx.flatten()).view(target.sizes()) * kept;
        smooth_reduced = smooth.sum() / w.sum();
      } else {
        smooth_reduced = smooth.sum() / kept.sum();  // over the entries not ignored
      }
  }
  return nll * (1 - smoothing) + smooth_reduced * (smoothing / static_cast<double>(n_classes));
}

Tensor binary_cross_entropy_impl(const Tensor& input, const Tensor& target, const BinaryCrossEntropyFuncOptions& options) {
  check_same_size("binary_cross_entropy", input, target);
  {
    NoGradGuard no_grad;
    EMBER_CHECK(input.numel() == 0 || ((input >= 0).all().item<bool>() && (input <= 1).all().item<bool>()),
                "binary_cross_entropy", "all elements of input should be between 0 and 1");
  }
  // log clamped to >= -100 as PyTorch (so 0 * log(0) stays finite); the clamp shifts the value
  // by a detached amount, keeping log's gradient.
  auto clamped_log = [](const Tensor& x) {
    const Tensor l = x.log();
    const Tensor ld = l.detach();
    return l + (ld.clamp_min(-100) - ld);
  };
  Tensor loss = -(target * clamped_log(input) + (1 - target) * clamped_log(1 - input));
  if (options.weight().defined()) loss = loss * options.weight();
  return reduce(loss, options.reduction());
}

Tensor binary_cross_entropy_with_logits_impl(const Tensor& input, const Tensor& target, const BinaryCrossEntropyWithLogitsFuncOptions& options) {
  check_same_size("binary_cross_entropy_with_logits", input, target);
  // softplus(-x) = max(-x, 0) + log(1 + exp(-|x|)), stable for large |x|.
  const Tensor softplus_neg = relu(-input) + (abs_of(input) * -1).exp().add(1).log();
  Tensor loss;
  if (options.pos_weight().defined()) {
    const Tensor log_weight = (options.pos_weight() - 1) * target + 1;
    loss = (1 - target) * input + log_weight * softplus_neg;
  } else {
    loss = (1 - target) * input + softplus_neg;
  }
  if (options.weight().defined()) loss = loss * options.weight();
  return reduce(loss, options.reduction());
}

Tensor kl_div_impl(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options) {
  EMBER_CHECK(input.defined() && target.defined(), "kl_div", "input and target must be defined");
  Tensor loss;
  if (options.log_target()) {
    loss = target.exp() * (target - input);
  } else {
    // target * (log(target) - input), 0 where target is 0 (log(1) stands in for log(0)).
    const Tensor safe = where(target > 0, target, Scalar(1.0));
    loss = target * (safe.log() - input);
  }
  const auto& r = options.reduction();
  if (std::holds_alternative<enumtype::kBatchMean>(r)) {
    return input.dim() == 0 ? loss.sum() : loss.sum() / static_cast<double>(input.size(0));
  }
  if (std::holds_alternative<enumtype::kNone>(r)) return loss;
  if (std::holds_alternative<enumtype::kSum>(r)) return loss.sum();
  return loss.mean();
}

// A loss composed of differentiable ops, entered through dispatch: observers see it as one op,
// and autocast runs it in float32 (the losses are on PyTorch's CPU autocast float32 list).
template <class Options, Tensor (*Impl)(const Tensor&, const Tensor&, const Options&)>
struct Float32Loss {
  static constexpr bool composite = true;
  static constexpr dispatch::Autocast autocast = dispatch::Autocast::kFloat32;
  static Tensor run(const Tensor& input, const Tensor& target, const Options& options) {
    return Impl(input, target, options);
  }
};

}  // namespace

// Each loss: its op description (named as PyTorch's op) and its public function.
#define EMBER_FLOAT32_LOSS(fn, Options)                                                 \
  namespace {                                                                           \
  struct fn##_op : Float32Loss<Options, fn##_impl> {                                    \
    static constexpr const char* name = #fn;                                            \
  };                                                                                    \
  }                                                                                     \
  Tensor fn(const Tensor& input, const Tensor& target, const Options& options) {        \
    return dispatch::call<fn##_op>(input, target, options);                             \
  }
EMBER_FLOAT32_LOSS(mse_loss, MSELossFuncOptions)
EMBER_FLOAT32_LOSS(l1_loss, L1LossFuncOptions)
EMBER_FLOAT32_LOSS(smooth_l1_loss, SmoothL1LossFuncOptions)
EMBER_FLOAT32_LOSS(huber_loss, HuberLossFuncOptions)
EMBER_FLOAT32_LOSS(cross_entropy, CrossEntropyFuncOptions)
EMBER_FLOAT32_LOSS(binary_cross_entropy, BinaryCrossEntropyFuncOptions)
EMBER_FLOAT32_LOSS(binary_cross_entropy_with_logits, BinaryCrossEntropyWithLogitsFuncOptions)
EMBER_FLOAT32_LOSS(kl_div, KLDivFuncOptions)
#undef EMBER_FLOAT32_LOSS

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options,
                      double beta) {
  return smooth_l1_loss(input, target, SmoothL1LossFuncOptions(options).beta(beta));
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options) {
  return ember::nll_loss(input, target, options.weight(), reduction_enum(options.reduction()),
                         options.ignore_index());
}

}  // namespace ember::nn::functional

namespace ember {
namespace {
namespace F = nn::functional;
nn::reduction_t reduction_of(const char* op, int64_t reduction) {
  switch (reduction) {
    case Reduction::None: return enumtype::kNone();
    case Reduction::Mean: return enumtype::kMean();
    case Reduction::Sum: return enumtype::kSum();
    default:
      EMBER_CHECK(false, op, "expected reduction None (0), Mean (1) or Sum (2), got ", reduction);
      return {};
  }
}
}  // namespace

Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  return F::mse_loss(self, target, reduction_of("mse_loss", reduction));
}
Tensor l1_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  return F::l1_loss(self, target, reduction_of("l1_loss", reduction));
}
Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
  return F::smooth_l1_loss(self, target, F::SmoothL1LossFuncOptions(reduction_of("smooth_l1_loss", reduction)).beta(beta));
}
Tensor huber_loss(const Tensor& self, const Tensor& target, int64_t reduction, double delta) {
  return F::huber_loss(self, target, F::HuberLossFuncOptions(reduction_of("huber_loss", reduction)).delta(delta));
}
Tensor binary_cross_entropy(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction) {
  return F::binary_cross_entropy(
      self, target, F::BinaryCrossEntropyFuncOptions(reduction_of("binary_cross_entropy", reduction)).weight(weight));
}
Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, int64_t reduction) {
  return F::binary_cross_entropy_with_logits(
      self, target,
      F::BinaryCrossEntropyWithLogitsFuncOptions(reduction_of("binary_cross_entropy_with_logits", reduction))
          .weight(weight)
          .pos_weight(pos_weight));
}
Tensor cross_entropy_loss(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                          int64_t ignore_index, double label_smoothing) {
  return F::cross_entropy(self, target,
                          F::CrossEntropyFuncOptions(reduction_of("cross_entropy_loss", reduction))
                              .weight(weight)
                              .ignore_index(ignore_index)
                              .label_smoothing(label_smoothing));
}
Tensor kl_div(const Tensor& self, const Tensor& target, int64_t reduction, bool log_target) {
  const nn::reduction_t r = reduction_of("kl_div", reduction);
  nn::kldiv_reduction_t kr = enumtype::kMean();
  if (std::holds_alternative<enumtype::kNone>(r)) kr = enumtype::kNone();
  if (std::holds_alternative<enumtype::kSum>(r)) kr = enumtype::kSum();
  return F::kl_div(self, target, F::KLDivFuncOptions(kr).log_target(log_target));
}

}  // namespace ember
