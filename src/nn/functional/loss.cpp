// The losses besides nll_loss, as compositions of differentiable ops. Where PyTorch's gradient
// uses |x| or a mask, the composition multiplies by a detached sign or mask so the gradient is
// PyTorch's (sign(x), 0 at x = 0) while only ops with derivatives record.
#include <cmath>

#include "dispatch/dispatch.h"
#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/nn/functional/distance.h"
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
  const Tensor softplus_neg = ember::relu(-input) + (abs_of(input) * -1).exp().add(1).log();
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

void check_reduction_shape(const char* op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.defined() && b.defined(), op, "inputs must be defined");
  EMBER_CHECK(is_floating_type(a.dtype()), op, "\"", op, "\" not implemented for '", a.dtype(), "'");
}

Tensor hinge_embedding_loss_impl(const Tensor& input, const Tensor& target,
                                 const HingeEmbeddingLossFuncOptions& options) {
  check_reduction_shape("hinge_embedding_loss", input, target);
  const Tensor zeros = zeros_like(input);
  const Tensor margin_clamp = (options.margin() - input).clamp_min(0);
  const Tensor output_margin = where(target != 1, margin_clamp, zeros);
  const Tensor output_self = where(target != -1, input, zeros);
  return reduce(output_margin + output_self, options.reduction());
}

// sum over j != target of max(0, margin - x[target] + x[j])^p (times weight[target]), over C.
Tensor multi_margin_loss_impl(const Tensor& input, const Tensor& target, const MultiMarginLossFuncOptions& options) {
  check_reduction_shape("multi_margin_loss", input, target);
  EMBER_CHECK(options.p() == 1 || options.p() == 2, "multi_margin_loss", "only p == 1 and p == 2 supported, got ",
              options.p());
  EMBER_CHECK((input.dim() == 1 || input.dim() == 2) && input.size(-1) > 0, "multi_margin_loss",
              "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ", input.sizes());
  const Tensor x = input.dim() == 1 ? input.unsqueeze(0) : input;
  const int64_t n = x.size(0), c = x.size(1);
  EMBER_CHECK(target.numel() == n && (target.dim() <= 1), "multi_margin_loss", "inconsistent target size: ",
              target.sizes(), " for input of size: ", input.sizes());
  const Tensor t = target.reshape({n, 1}).to(kLong);
  {
    NoGradGuard no_grad;
    EMBER_CHECK(n == 0 || ((t >= 0).all().item<bool>() && (t < c).all().item<bool>()), "multi_margin_loss",
                "target out of range (expected values in [0, ", c, "))");
  }
  Tensor z = (x - x.gather(1, t) + options.margin()).clamp_min(0);
  if (options.p() == 2) z = z * z;
  if (options.weight().defined()) z = z * options.weight().index_select(0, t.flatten()).unsqueeze(1);
  const Tensor others = 1 - one_hot(t.flatten(), c).to(x.dtype());
  Tensor loss = (z * others).sum({1}) / static_cast<double>(c);
  if (input.dim() == 1) loss = loss.squeeze(0);
  return reduce(loss, options.reduction());
}

// Targets: class indices per row, ended by the first -1; each pair (target j, non-target k)
// adds max(0, 1 - (x[j] - x[k])), over C.
Tensor multilabel_margin_loss_impl(const Tensor& input, const Tensor& target,
                                   const MultilabelMarginLossFuncOptions& options) {
  check_reduction_shape("multilabel_margin_loss", input, target);
  EMBER_CHECK((input.dim() == 1 || input.dim() == 2) && target.sizes() == input.sizes(), "multilabel_margin_loss",
              "inconsistent target size: ", target.sizes(), " for input of size: ", input.sizes());
  const Tensor x = input.dim() == 1 ? input.unsqueeze(0) : input;
  const Tensor t = (input.dim() == 1 ? target.unsqueeze(0) : target).to(kLong);
  const int64_t c = x.size(1);
  Tensor valid, is_target;
  {
    NoGradGuard no_grad;
    EMBER_CHECK(t.numel() == 0 || ((t >= -1).all().item<bool>() && (t < c).all().item<bool>()),
                "multilabel_margin_loss", "target out of range (expected values in [-1, ", c, "))");
    valid = (t != -1).to(x.dtype()).cumprod(1);  // entries before the first -1
    const Tensor idx = t.clamp_min(0);
    is_target = zeros_like(x).scatter_add(1, idx, valid).clamp_max(1);
  }
  const Tensor xt = x.gather(1, t.clamp_min(0));  // (N, C): x at each listed target
  const Tensor hinge = (1 - xt.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0);  // (N, j, k)
  const Tensor mask = valid.unsqueeze(2) * (1 - is_target).unsqueeze(1);
  Tensor loss = (hinge * mask).sum({1, 2}) / static_cast<double>(c);
  if (input.dim() == 1) loss = loss.squeeze(0);
  return reduce(loss, options.reduction());
}

Tensor soft_margin_loss_impl(const Tensor& input, const Tensor& target, const SoftMarginLossFuncOptions& options) {
  check_same_size("soft_margin_loss", input, target);
  return reduce((-target * input).exp().log1p(), options.reduction());
}

Tensor multilabel_soft_margin_loss_impl(const Tensor& input, const Tensor& target,
                                        const MultilabelSoftMarginLossFuncOptions& options) {
  check_same_size("multilabel_soft_margin_loss", input, target);
  EMBER_CHECK(input.dim() >= 1, "multilabel_soft_margin_loss", "expected an input of at least 1 dim");
  auto logsigmoid = [](const Tensor& x) { return -ember::relu(-x) - (abs_of(x) * -1).exp().log1p(); };
  Tensor loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input));
  if (options.weight().defined()) loss = loss * options.weight();
  const int64_t class_dim = input.dim() - 1;
  loss = loss.sum({class_dim}) / static_cast<double>(input.size(class_dim));
  return reduce(loss, options.reduction());
}

Tensor poisson_nll_loss_impl(const Tensor& input, const Tensor& target, const PoissonNLLLossFuncOptions& options) {
  check_same_size("poisson_nll_loss", input, target);
  Tensor loss = options.log_input() ? input.exp() - target * input : input - target * (input + options.eps()).log();
  if (options.full()) {
    // Stirling's term target*log(target) - target + 0.5*log(2*pi*target), where target > 1.
    const Tensor t = target.detach();
    const Tensor safe = where(t > 1, t, Scalar(1.0));
    const Tensor stirling = safe * safe.log() - safe + (safe * (2 * M_PI)).log() * 0.5;
    loss = loss + where(t > 1, stirling, zeros_like(stirling));
  }
  return reduce(loss, options.reduction());
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

// The losses PyTorch has as aten ops are entered as those: the aten name and libtorch's arguments
// (reduction as at::Reduction's int, tensors for weights), so that fx records a call the op
// table (src/jit/builtins.cpp) can replay; the functional forms hand their options over.
struct Float32AtenLoss {
  static constexpr bool composite = true;
  static constexpr dispatch::Autocast autocast = dispatch::Autocast::kFloat32;
};

reduction_t aten_loss_reduction(const char* op, int64_t reduction) {
  EMBER_CHECK(reduction >= Reduction::None && reduction <= Reduction::Sum, op,
              "expected reduction None (0), Mean (1) or Sum (2), got ", reduction);
  if (reduction == Reduction::None) return enumtype::kNone();
  return reduction == Reduction::Sum ? reduction_t(enumtype::kSum()) : reduction_t(enumtype::kMean());
}

struct MseLossAtenOp : Float32AtenLoss {
  static constexpr const char* name = "mse_loss";
  static Tensor run(const Tensor& input, const Tensor& target, int64_t reduction) {
    return mse_loss_impl(input, target, MSELossFuncOptions().reduction(aten_loss_reduction(name, reduction)));
  }
};
struct L1LossAtenOp : Float32AtenLoss {
  static constexpr const char* name = "l1_loss";
  static Tensor run(const Tensor& input, const Tensor& target, int64_t reduction) {
    return l1_loss_impl(input, target, L1LossFuncOptions().reduction(aten_loss_reduction(name, reduction)));
  }
};
struct SmoothL1LossAtenOp : Float32AtenLoss {
  static constexpr const char* name = "smooth_l1_loss";
  static Tensor run(const Tensor& input, const Tensor& target, int64_t reduction, double beta) {
    return smooth_l1_loss_impl(input, target,
                               SmoothL1LossFuncOptions().reduction(aten_loss_reduction(name, reduction)).beta(beta));
  }
};
struct HuberLossAtenOp : Float32AtenLoss {
  static constexpr const char* name = "huber_loss";
  static Tensor run(const Tensor& input, const Tensor& target, int64_t reduction, double delta) {
    return huber_loss_impl(input, target, HuberLossFuncOptions().reduction(aten_loss_reduction(name, reduction)).delta(delta));
  }
};
struct BinaryCrossEntropyAtenOp : Float32AtenLoss {
  static constexpr const char* name = "binary_cross_entropy";
  static Tensor run(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t reduction) {
    return binary_cross_entropy_impl(
        input, target, BinaryCrossEntropyFuncOptions().reduction(aten_loss_reduction(name, reduction)).weight(weight));
  }
};
struct BinaryCrossEntropyWithLogitsAtenOp : Float32AtenLoss {
  static constexpr const char* name = "binary_cross_entropy_with_logits";
  static Tensor run(const Tensor& input, const Tensor& target, const Tensor& weight, const Tensor& pos_weight,
                    int64_t reduction) {
    return binary_cross_entropy_with_logits_impl(input, target,
                                                 BinaryCrossEntropyWithLogitsFuncOptions()
                                                     .reduction(aten_loss_reduction(name, reduction))
                                                     .weight(weight)
                                                     .pos_weight(pos_weight));
  }
};
struct CrossEntropyLossAtenOp : Float32AtenLoss {
  static constexpr const char* name = "cross_entropy_loss";
  static Tensor run(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t reduction,
                    int64_t ignore_index, double label_smoothing) {
    return cross_entropy_impl(input, target,
                              CrossEntropyFuncOptions()
                                  .reduction(aten_loss_reduction(name, reduction))
                                  .weight(weight)
                                  .ignore_index(ignore_index)
                                  .label_smoothing(label_smoothing));
  }
};
// kl_div's int reduction has no batchmean: F.kl_div computes it as the sum over the batch size.
struct KlDivAtenOp : Float32AtenLoss {
  static constexpr const char* name = "kl_div";
  static Tensor run(const Tensor& input, const Tensor& target, int64_t reduction, bool log_target) {
    const reduction_t r = aten_loss_reduction(name, reduction);
    kldiv_reduction_t kr = enumtype::kMean();
    if (std::holds_alternative<enumtype::kNone>(r)) kr = enumtype::kNone();
    if (std::holds_alternative<enumtype::kSum>(r)) kr = enumtype::kSum();
    return kl_div_impl(input, target, KLDivFuncOptions(kr).log_target(log_target));
  }
};
struct HingeEmbeddingLossAtenOp : Float32AtenLoss {
  static constexpr const char* name = "hinge_embedding_loss";
  static Tensor run(const Tensor& input, const Tensor& target, double margin, int64_t reduction) {
    return hinge_embedding_loss_impl(
        input, target, HingeEmbeddingLossFuncOptions().margin(margin).reduction(aten_loss_reduction(name, reduction)));
  }
};
struct MultiMarginLossAtenOp : Float32AtenLoss {
  static constexpr const char* name = "multi_margin_loss";
  static Tensor run(const Tensor& input, const Tensor& target, const Scalar& p, const Scalar& margin, const Tensor& weight,
                    int64_t reduction) {
    return multi_margin_loss_impl(input, target,
                                  MultiMarginLossFuncOptions()
                                      .p(p.toLong())
                                      .margin(margin.toDouble())
                                      .weight(weight)
                                      .reduction(aten_loss_reduction(name, reduction)));
  }
};
struct MultilabelMarginLossAtenOp : Float32AtenLoss {
  static constexpr const char* name = "multilabel_margin_loss";
  static Tensor run(const Tensor& input, const Tensor& target, int64_t reduction) {
    return multilabel_margin_loss_impl(
        input, target, MultilabelMarginLossFuncOptions().reduction(aten_loss_reduction(name, reduction)));
  }
};
struct SoftMarginLossAtenOp : Float32AtenLoss {
  static constexpr const char* name = "soft_margin_loss";
  static Tensor run(const Tensor& input, const Tensor& target, int64_t reduction) {
    return soft_margin_loss_impl(input, target, SoftMarginLossFuncOptions().reduction(aten_loss_reduction(name, reduction)));
  }
};
struct PoissonNllLossAtenOp : Float32AtenLoss {
  static constexpr const char* name = "poisson_nll_loss";
  static Tensor run(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps, int64_t reduction) {
    return poisson_nll_loss_impl(input, target,
                                 PoissonNLLLossFuncOptions()
                                     .log_input(log_input)
                                     .full(full)
                                     .eps(eps)
                                     .reduction(aten_loss_reduction(name, reduction)));
  }
};

}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options) {
  return dispatch::call<MseLossAtenOp>(input, target, reduction_enum(options.reduction()));
}
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options) {
  return dispatch::call<L1LossAtenOp>(input, target, reduction_enum(options.reduction()));
}
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options) {
  return dispatch::call<SmoothL1LossAtenOp>(input, target, reduction_enum(options.reduction()), options.beta());
}
Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options) {
  return dispatch::call<HuberLossAtenOp>(input, target, reduction_enum(options.reduction()), options.delta());
}
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options) {
  return dispatch::call<CrossEntropyLossAtenOp>(input, target, options.weight(), reduction_enum(options.reduction()),
                                                options.ignore_index(), options.label_smoothing());
}
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const BinaryCrossEntropyFuncOptions& options) {
  return dispatch::call<BinaryCrossEntropyAtenOp>(input, target, options.weight(), reduction_enum(options.reduction()));
}
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options) {
  return dispatch::call<BinaryCrossEntropyWithLogitsAtenOp>(input, target, options.weight(), options.pos_weight(),
                                                            reduction_enum(options.reduction()));
}
Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options) {
  const auto& r = options.reduction();
  if (std::holds_alternative<enumtype::kBatchMean>(r)) {
    const Tensor sum = dispatch::call<KlDivAtenOp>(input, target, int64_t{Reduction::Sum}, options.log_target());
    return input.defined() && input.dim() > 0 ? sum / static_cast<double>(input.size(0)) : sum;
  }
  int64_t reduction = Reduction::Mean;
  if (std::holds_alternative<enumtype::kNone>(r)) reduction = Reduction::None;
  if (std::holds_alternative<enumtype::kSum>(r)) reduction = Reduction::Sum;
  return dispatch::call<KlDivAtenOp>(input, target, reduction, options.log_target());
}
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, const HingeEmbeddingLossFuncOptions& options) {
  return dispatch::call<HingeEmbeddingLossAtenOp>(input, target, options.margin(), reduction_enum(options.reduction()));
}
Tensor multi_margin_loss(const Tensor& input, const Tensor& target, const MultiMarginLossFuncOptions& options) {
  return dispatch::call<MultiMarginLossAtenOp>(input, target, Scalar(options.p()), Scalar(options.margin()),
                                               options.weight(), reduction_enum(options.reduction()));
}
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target, const MultilabelMarginLossFuncOptions& options) {
  return dispatch::call<MultilabelMarginLossAtenOp>(input, target, reduction_enum(options.reduction()));
}
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, const SoftMarginLossFuncOptions& options) {
  return dispatch::call<SoftMarginLossAtenOp>(input, target, reduction_enum(options.reduction()));
}
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, const PoissonNLLLossFuncOptions& options) {
  return dispatch::call<PoissonNllLossAtenOp>(input, target, options.log_input(), options.full(), options.eps(),
                                              reduction_enum(options.reduction()));
}

// multilabel_soft_margin_loss has no aten op (PyTorch's is Python): one op with its options.
namespace {
struct multilabel_soft_margin_loss_op
    : Float32Loss<MultilabelSoftMarginLossFuncOptions, multilabel_soft_margin_loss_impl> {
  static constexpr const char* name = "multilabel_soft_margin_loss";
};
}  // namespace
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultilabelSoftMarginLossFuncOptions& options) {
  return dispatch::call<multilabel_soft_margin_loss_op>(input, target, options);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options,
                      double beta) {
  return smooth_l1_loss(input, target, SmoothL1LossFuncOptions(options).beta(beta));
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options) {
  return ember::nll_loss(input, target, options.weight(), reduction_enum(options.reduction()),
                         options.ignore_index());
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options) {
  check_reduction_shape("margin_ranking_loss", input1, input2);
  EMBER_CHECK(input1.dim() == input2.dim() && input1.dim() == target.dim(), "margin_ranking_loss",
              "All input tensors should have same dimension but got sizes: input1: ", input1.sizes(),
              ", input2: ", input2.sizes(), ", target: ", target.sizes());
  return reduce((-target * (input1 - input2) + options.margin()).clamp_min(0), options.reduction());
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options) {
  check_reduction_shape("cosine_embedding_loss", input1, input2);
  EMBER_CHECK(input1.dim() == input2.dim() && (input1.dim() == 1 || input1.dim() == 2) &&
                  target.dim() == input1.dim() - 1,
              "cosine_embedding_loss", "expected 1D or 2D inputs of equal dims and a target of one dim less, got ",
              input1.sizes(), ", ", input2.sizes(), " and ", target.sizes());
  constexpr double kEps = 1e-12;
  const int64_t d = input1.dim() - 1;
  const Tensor prod = (input1 * input2).sum({d});
  const Tensor mag1 = (input1 * input1).sum({d}) + kEps;
  const Tensor mag2 = (input2 * input2).sum({d}) + kEps;
  const Tensor cos = prod / (mag1 * mag2).sqrt();
  const Tensor zeros = zeros_like(cos);
  const Tensor pos = where(target == 1, 1 - cos, zeros);
  const Tensor neg = where(target == -1, (cos - options.margin()).clamp_min(0), zeros);
  return reduce(pos + neg, options.reduction());
}

Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                                         const TripletMarginWithDistanceLossFuncOptions& options) {
  EMBER_CHECK(anchor.defined() && positive.defined() && negative.defined(), "triplet_margin_with_distance_loss",
              "anchor, positive and negative must be defined");
  EMBER_CHECK(anchor.dim() == positive.dim() && anchor.dim() == negative.dim(), "triplet_margin_with_distance_loss",
              "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: anchor ",
              anchor.dim(), "D, positive ", positive.dim(), "D, and negative ", negative.dim(), "D inputs");
  EMBER_CHECK(options.margin() > 0, "triplet_margin_with_distance_loss", "margin must be greater than 0, got ",
              options.margin());
  auto dist = [&](const Tensor& a, const Tensor& b) {
    return options.distance_function() ? (*options.distance_function())(a, b) : nn::functional::pairwise_distance(a, b);
  };
  const Tensor d_pos = dist(anchor, positive);
  Tensor d_neg = dist(anchor, negative);
  if (options.swap()) d_neg = minimum(d_neg, dist(positive, negative));
  return reduce((d_pos - d_neg + options.margin()).clamp_min(0), options.reduction());
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossFuncOptions& options) {
  const auto dist = [p = options.p(), eps = options.eps()](const Tensor& a, const Tensor& b) {
    return pairwise_distance(a, b, PairwiseDistanceFuncOptions().p(p).eps(eps));
  };
  EMBER_CHECK(anchor.defined() && positive.defined() && negative.defined() && anchor.dim() == positive.dim() &&
                  anchor.dim() == negative.dim(),
              "triplet_margin_loss", "anchor, positive and negative must have the same number of dims, got ",
              anchor.defined() ? anchor.dim() : -1, ", ", positive.defined() ? positive.dim() : -1, " and ",
              negative.defined() ? negative.dim() : -1);
  const Tensor d_pos = dist(anchor, positive);
  Tensor d_neg = dist(anchor, negative);
  if (options.swap()) d_neg = minimum(d_neg, dist(positive, negative));
  return reduce((d_pos - d_neg + options.margin()).clamp_min(0), options.reduction());
}

}  // namespace ember::nn::functional

namespace ember {
namespace {
namespace F = nn::functional;
nn::reduction_t loss_reduction_of(const char* op, int64_t reduction) {
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
  return F::mse_loss(self, target, loss_reduction_of("mse_loss", reduction));
}
Tensor l1_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  return F::l1_loss(self, target, loss_reduction_of("l1_loss", reduction));
}
Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
  return F::smooth_l1_loss(self, target, F::SmoothL1LossFuncOptions(loss_reduction_of("smooth_l1_loss", reduction)).beta(beta));
}
Tensor huber_loss(const Tensor& self, const Tensor& target, int64_t reduction, double delta) {
  return F::huber_loss(self, target, F::HuberLossFuncOptions(loss_reduction_of("huber_loss", reduction)).delta(delta));
}
Tensor binary_cross_entropy(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction) {
  return F::binary_cross_entropy(
      self, target, F::BinaryCrossEntropyFuncOptions(loss_reduction_of("binary_cross_entropy", reduction)).weight(weight));
}
Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, int64_t reduction) {
  return F::binary_cross_entropy_with_logits(
      self, target,
      F::BinaryCrossEntropyWithLogitsFuncOptions(loss_reduction_of("binary_cross_entropy_with_logits", reduction))
          .weight(weight)
          .pos_weight(pos_weight));
}
Tensor cross_entropy_loss(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                          int64_t ignore_index, double label_smoothing) {
  return F::cross_entropy(self, target,
                          F::CrossEntropyFuncOptions(loss_reduction_of("cross_entropy_loss", reduction))
                              .weight(weight)
                              .ignore_index(ignore_index)
                              .label_smoothing(label_smoothing));
}
Tensor kl_div(const Tensor& self, const Tensor& target, int64_t reduction, bool log_target) {
  const nn::reduction_t r = loss_reduction_of("kl_div", reduction);
  nn::kldiv_reduction_t kr = enumtype::kMean();
  if (std::holds_alternative<enumtype::kNone>(r)) kr = enumtype::kNone();
  if (std::holds_alternative<enumtype::kSum>(r)) kr = enumtype::kSum();
  return F::kl_div(self, target, F::KLDivFuncOptions(kr).log_target(log_target));
}

}  // namespace ember

namespace ember::nn {
void HingeEmbeddingLossImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::HingeEmbeddingLoss(margin=" << options.margin() << ")";
}
void MultiMarginLossImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::MultiMarginLoss(p=" << options.p() << ", margin=" << options.margin()
         << ", weight=" << options.weight() << ", reduction=k" << enum_name(options.reduction()) << ")";
}
void MarginRankingLossImpl::pretty_print(std::ostream& stream) const { stream << "torch::nn::MarginRankingLoss()"; }
void CosineEmbeddingLossImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::CosineEmbeddingLoss(margin=" << options.margin() << ")";
}
void TripletMarginLossImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "torch::nn::TripletMarginLoss(margin=" << options.margin() << ", p=" << options.p()
         << ", eps=" << options.eps() << ", swap=" << options.swap() << ")";
}
void TripletMarginWithDistanceLossImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "torch::nn::TripletMarginWithDistanceLoss(margin=" << options.margin()
         << ", swap=" << options.swap() << ")";
}
}  // namespace ember::nn
