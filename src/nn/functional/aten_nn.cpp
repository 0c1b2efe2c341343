// The at:: forms of the nn activations, losses, distances, pools and pads (issue 26, round 2):
// libtorch's positional signatures over the F:: forms that Ember already composes, so each one
// has the derivative of that composition. It lives in src/nn because those forms do.
#include <cmath>

#include "ember/aten_tail.h"
#include "ember/aten_tail2.h"
#include "ember/autograd.h"
#include "ember/indexing.h"
#include "ember/nn/functional.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/shape.h"

namespace ember {
namespace {
namespace F = nn::functional;

nn::reduction_t reduction_of(const char* op, int64_t reduction) {
  switch (reduction) {
    case 0: return kNone;
    case 1: return kMean;
    case 2: return kSum;
    default: break;
  }
  EMBER_CHECK(false, op, reduction, " is not a valid value for reduction");
  return kMean;
}

// The in-place form of a composed activation: the value written back into self (a copy of the
// operand first when autograd records, so the composition's saved input stays valid).
Tensor& assign_to(Tensor& self, const Tensor& result) { return self.copy_(result); }
Tensor operand(const Tensor& self) { return self.requires_grad() ? self.clone() : self; }

}  // namespace

// ---- activations and dropouts ----
Tensor celu(const Tensor& self, const Scalar& alpha) { return F::celu(self, F::CELUFuncOptions().alpha(alpha.toDouble())); }
Tensor& celu_(Tensor& self, const Scalar& alpha) { return assign_to(self, celu(operand(self), alpha)); }
Tensor selu(const Tensor& self) { return F::selu(self); }
Tensor& selu_(Tensor& self) { return assign_to(self, selu(operand(self))); }
Tensor mish(const Tensor& self) { return F::mish(self); }
Tensor& mish_(Tensor& self) { return assign_to(self, mish(operand(self))); }
Tensor prelu(const Tensor& self, const Tensor& weight) { return F::prelu(self, weight); }
Tensor Tensor::prelu(const Tensor& weight) const { return ember::prelu(*this, weight); }
Tensor rrelu(const Tensor& self, const Scalar& lower, const Scalar& upper, bool training, Generator* generator) {
  EMBER_CHECK(generator == nullptr || !training, "rrelu", "a Generator is not supported; rrelu draws from the global one");
  return F::rrelu(self, F::RReLUFuncOptions().lower(lower.toDouble()).upper(upper.toDouble()).training(training));
}
Tensor& rrelu_(Tensor& self, const Scalar& lower, const Scalar& upper, bool training, Generator* generator) {
  return assign_to(self, rrelu(operand(self), lower, upper, training, generator));
}
Tensor hardshrink(const Tensor& self, const Scalar& lambd) {
  return F::hardshrink(self, F::HardshrinkFuncOptions().lambda(lambd.toDouble()));
}
Tensor Tensor::hardshrink(const Scalar& lambd) const { return ember::hardshrink(*this, lambd); }
Tensor softshrink(const Tensor& self, const Scalar& lambd) {
  return F::softshrink(self, F::SoftshrinkFuncOptions().lambda(lambd.toDouble()));
}
Tensor threshold(const Tensor& self, const Scalar& threshold, const Scalar& value) {
  return where(self.detach() > threshold, self, full({}, value, TensorOptions().dtype(self.dtype())));
}
Tensor& threshold_(Tensor& self, const Scalar& threshold, const Scalar& value) {
  return assign_to(self, ember::threshold(operand(self), threshold, value));
}
Tensor glu(const Tensor& self, int64_t dim) { return F::glu(self, F::GLUFuncOptions().dim(dim)); }
Tensor alpha_dropout(const Tensor& input, double p, bool train) {
  return F::alpha_dropout(input, F::AlphaDropoutFuncOptions().p(p).training(train));
}
Tensor& alpha_dropout_(Tensor& self, double p, bool train) {
  return assign_to(self, alpha_dropout(operand(self), p, train));
}
Tensor feature_alpha_dropout(const Tensor& input, double p, bool train) {
  return F::feature_alpha_dropout(input, F::FeatureAlphaDropoutFuncOptions().p(p).training(train));
}
Tensor& feature_alpha_dropout_(Tensor& self, double p, bool train) {
  return assign_to(self, feature_alpha_dropout(operand(self), p, train));
}
Tensor& feature_dropout_(Tensor& self, double p, bool train) {
  return assign_to(self, feature_dropout(operand(self), p, train));
}
std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train) {
  EMBER_CHECK(p >= 0 && p <= 1, "native_dropout", "dropout probability has to be between 0 and 1, but got ", p);
  if (train.has_value() && !*train) return {input.clone(), ones_like(input, kBool)};
  EMBER_CHECK(is_floating_type(input.dtype()), "native_dropout", "\"native_dropout\" not implemented for '",
              input.dtype(), "'");
  const Tensor mask = bernoulli(empty_like(input, kBool), 1 - p);  // libtorch's mask.bernoulli_(1 - p)
  const double scale = p == 1 ? 0.0 : 1.0 / (1.0 - p);
  return {input * mask * scale, mask};
}

// ---- losses ----
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                             int64_t reduction) {
  return F::cosine_embedding_loss(
      input1, input2, target,
      F::CosineEmbeddingLossFuncOptions(reduction_of("cosine_embedding_loss", reduction)).margin(margin));
}
Tensor hinge_embedding_loss(const Tensor& self, const Tensor& target, double margin, int64_t reduction) {
  return F::hinge_embedding_loss(
      self, target, F::HingeEmbeddingLossFuncOptions(reduction_of("hinge_embedding_loss", reduction)).margin(margin));
}
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           int64_t reduction) {
  return F::margin_ranking_loss(
      input1, input2, target,
      F::MarginRankingLossFuncOptions(reduction_of("margin_ranking_loss", reduction)).margin(margin));
}
Tensor multi_margin_loss(const Tensor& self, const Tensor& target, const Scalar& p, const Scalar& margin,
                         const std::optional<Tensor>& weight, int64_t reduction) {
  const int64_t pi = p.toLong();
  EMBER_CHECK(pi == 1 || pi == 2, "multi_margin_loss", "only p == 1 and p == 2 supported");
  return F::multi_margin_loss(self, target,
                              F::MultiMarginLossFuncOptions(reduction_of("multi_margin_loss", reduction))
                                  .p(pi)
                                  .margin(margin.toDouble())
                                  .weight(weight.value_or(Tensor())));
}
Tensor multilabel_margin_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  return F::multilabel_margin_loss(self, target,
                                   F::MultilabelMarginLossFuncOptions(reduction_of("multilabel_margin_loss", reduction)));
}
Tensor soft_margin_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  return F::soft_margin_loss(self, target, F::SoftMarginLossFuncOptions(reduction_of("soft_margin_loss", reduction)));
}
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
                           double p, double eps, bool swap, int64_t reduction) {
  return F::triplet_margin_loss(anchor, positive, negative,
                                F::TripletMarginLossFuncOptions(reduction_of("triplet_margin_loss", reduction))
                                    .margin(margin)
                                    .p(p)
                                    .eps(eps)
                                    .swap(swap));
}
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps,
                        int64_t reduction) {
  return F::poisson_nll_loss(
      input, target,
      F::PoissonNLLLossFuncOptions(reduction_of("poisson_nll_loss", reduction)).log_input(log_input).full(full).eps(eps));
}
Tensor nll_loss2d(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight, int64_t reduction,
                  int64_t ignore_index) {
  EMBER_CHECK(self.dim() == 4, "nll_loss2d", "only batches of spatial inputs supported (4D tensors), but got input of size: ",
              self.sizes());
  EMBER_CHECK(target.dim() == 3, "nll_loss2d", "only batches of spatial targets supported (3D tensors) but got targets of size: ",
              target.sizes());
  return nll_loss(self, target, weight.value_or(Tensor()), reduction, ignore_index);
}
Tensor nll_loss_nd(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight, int64_t reduction,
                   int64_t ignore_index) {
  return nll_loss(self, target, weight.value_or(Tensor()), reduction, ignore_index);
}
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths, IntArrayRef target_lengths,
                int64_t blank, int64_t reduction, bool zero_infinity) {
  return ctc_loss(log_probs, targets, tensor(std::vector<int64_t>(input_lengths.begin(), input_lengths.end())),
                  tensor(std::vector<int64_t>(target_lengths.begin(), target_lengths.end())), blank, reduction,
                  zero_infinity);
}
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank, int64_t reduction, bool zero_infinity) {
  return F::ctc_loss(log_probs, targets, input_lengths, target_lengths,
                     F::CTCLossFuncOptions(reduction_of("ctc_loss", reduction)).blank(blank).zero_infinity(zero_infinity));
}

// ---- distances, shuffles, bilinear, embedding bags ----
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  return F::cosine_similarity(x1, x2, F::CosineSimilarityFuncOptions().dim(dim).eps(eps));
}
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  return F::pairwise_distance(x1, x2, F::PairwiseDistanceFuncOptions().p(p).eps(eps).keepdim(keepdim));
}
Tensor pdist(const Tensor& self, double p) { return F::pdist(self, p); }
Tensor cdist(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  EMBER_CHECK(x1.dim() >= 2, "cdist", "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  EMBER_CHECK(x2.dim() >= 2, "cdist", "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  EMBER_CHECK(x1.size(-1) == x2.size(-1), "cdist", "X1 and X2 must have the same number of columns. X1: ",
              x1.size(-1), " X2: ", x2.size(-1));
  EMBER_CHECK(is_floating_type(x1.dtype()) && is_floating_type(x2.dtype()), "cdist",
              "cdist only supports floating-point dtypes, X1 got: ", x1.dtype());
  EMBER_CHECK(p >= 0, "cdist", "cdist only supports non-negative p values");
  EMBER_CHECK(!compute_mode || (*compute_mode >= 0 && *compute_mode <= 2), "cdist", *compute_mode,
              " is not a valid value for compute_mode");
  // (..., P, 1, M) - (..., 1, R, M), reduced over M.
  return (x1.unsqueeze(-2) - x2.unsqueeze(-3)).norm(p, {-1}, false);
}
Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor) {
  return F::pixel_shuffle(self, F::PixelShuffleFuncOptions(upscale_factor));
}
Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor) {
  return F::pixel_unshuffle(self, F::PixelUnshuffleFuncOptions(downscale_factor));
}
// (N, g * k, *) viewed as (N, g, k, *), the two group dims swapped, flattened back.
Tensor channel_shuffle(const Tensor& self, int64_t groups) {
  EMBER_CHECK(self.dim() > 2, "channel_shuffle", "channel_shuffle expects input to have at least 3 dimensions, but got input with sizes ",
              self.sizes());
  EMBER_CHECK(groups > 0, "channel_shuffle", "Number of groups to divide channels in must be positive.", " Value of groups:", groups);
  const int64_t c = self.size(1);
  EMBER_CHECK(c % groups == 0, "channel_shuffle", "Number of channels must be divisible by groups. Got ", c,
              " channels and ", groups, " groups.");
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  shape[1] = c / groups;
  shape.insert(shape.begin() + 1, groups);
  return self.reshape(shape).transpose(1, 2).reshape(self.sizes());
}
Tensor native_channel_shuffle(const Tensor& self, int64_t groups) { return channel_shuffle(self, groups); }
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const std::optional<Tensor>& bias) {
  return F::bilinear(input1, input2, weight, bias.value_or(Tensor()));
}

namespace {
// The bookkeeping outputs of at::embedding_bag on the CPU: offset2bag (the bag of each index, 0
// entries for the 2-D form's input), bag_size (indices per bag, padding excluded) and max_indices
// (mode max: the index that gave each output element; else bag_size's shape, zeros).
std::tuple<Tensor, Tensor, Tensor> embedding_bag_bookkeeping(const Tensor& indices, const Tensor& offsets,
                                                             int64_t mode, bool include_last_offset,
                                                             std::optional<int64_t> padding_idx, const Tensor& output,
                                                             const Tensor& weight) {
  const Tensor idx = indices.reshape({-1}).to(kLong).contiguous();
  const int64_t n = idx.numel();
  Tensor offs;
  if (indices.dim() == 2) {
    offs = arange(0, n, std::max<int64_t>(indices.size(1), 1), TensorOptions().dtype(kLong));
  } else {
    offs = offsets.to(kLong).contiguous();
  }
  int64_t bags = offs.numel() - (include_last_offset ? 1 : 0);
  if (indices.dim() == 2) bags = indices.size(0);
  std::vector<int64_t> bag_of(static_cast<size_t>(n), 0);
  std::vector<int64_t> size(static_cast<size_t>(std::max<int64_t>(bags, 0)), 0);
  const int64_t* o = offs.data_ptr<int64_t>();
  const int64_t* ix = idx.data_ptr<int64_t>();
  for (int64_t b = 0; b < bags; ++b) {
    const int64_t start = o[b];
    const int64_t end = b + 1 < offs.numel() ? std::min(o[b + 1], n) : n;
    for (int64_t i = start; i < end; ++i) {
      bag_of[static_cast<size_t>(i)] = b;
      if (!padding_idx || ix[i] != *padding_idx) ++size[static_cast<size_t>(b)];
    }
  }
  // libtorch's CPU fast path (sum or mean of float rows without padding_idx) skips offset2bag.
  const bool fast_path = mode != 2 && weight.dtype() == kFloat && !padding_idx;
  const Tensor offset2bag = fast_path ? zeros({0}, kLong) : tensor(bag_of, kLong);
  Tensor bag_size = tensor(size, kLong);
  Tensor max_indices;
  if (mode == 2) {
    // For each bag and column, the row of weight whose value is the output's.
    max_indices = full(output.sizes(), -1, TensorOptions().dtype(kLong));
    NoGradGuard guard;
    const Tensor w = weight.detach().to(kDouble).contiguous();
    const Tensor out = output.detach().to(kDouble).contiguous();
    const int64_t d = weight.size(1);
    const double* wp = w.data_ptr<double>();
    const double* op = out.data_ptr<double>();
    int64_t* mp = max_indices.data_ptr<int64_t>();
    for (int64_t b = 0; b < bags; ++b) {
      const int64_t start = o[b];
      const int64_t end = b + 1 < offs.numel() ? std::min(o[b + 1], n) : n;
      for (int64_t j = 0; j < d; ++j) {
        for (int64_t i = start; i < end; ++i) {
          if (padding_idx && ix[i] == *padding_idx) continue;
          if (wp[ix[i] * d + j] == op[b * d + j]) {
            mp[b * d + j] = ix[i];
            break;
          }
        }
      }
    }
  } else {
    max_indices = zeros(bag_size.sizes(), kLong);
  }
  return {offset2bag, bag_size, max_indices};
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(const Tensor& weight, const Tensor& indices,
                                                         const Tensor& offsets, bool scale_grad_by_freq, int64_t mode,
                                                         bool sparse, const std::optional<Tensor>& per_sample_weights,
                                                         bool include_last_offset, std::optional<int64_t> padding_idx) {
  EMBER_CHECK(mode >= 0 && mode <= 2, "embedding_bag", "mode has to be one of sum, mean or max, got ", mode);
  F::EmbeddingBagFuncOptions o;
  o.scale_grad_by_freq(scale_grad_by_freq).sparse(sparse).include_last_offset(include_last_offset).padding_idx(padding_idx);
  if (indices.dim() == 1) o.offsets(offsets);
  if (mode == 0) o.mode(kSum);
  if (mode == 1) o.mode(kMean);
  if (mode == 2) o.mode(kMax);
  if (per_sample_weights) o.per_sample_weights(*per_sample_weights);
  const Tensor output = F::embedding_bag(indices, weight, o);
  auto [offset2bag, bag_size, max_indices] =
      embedding_bag_bookkeeping(indices, offsets, mode, include_last_offset, padding_idx, output, weight);
  return {output, offset2bag, bag_size, max_indices};
}
std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(const Tensor& weight, const Tensor& indices,
                                                         const Tensor& offsets, bool scale_grad_by_freq, int64_t mode,
                                                         bool sparse, const std::optional<Tensor>& per_sample_weights,
                                                         bool include_last_offset) {
  return embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                       include_last_offset, std::nullopt);
}
// Rows of self named by indices whose norm exceeds max_norm are scaled to max_norm / (norm + 1e-7),
// without recording (PyTorch's renorm is not differentiable).
Tensor& embedding_renorm_(Tensor& self, const Tensor& indices, double max_norm, double norm_type) {
  EMBER_CHECK(self.dim() == 2, "embedding_renorm_", "Expected 2-dimensional tensor, but got ", self.dim(), "-D");
  EMBER_CHECK(indices.dtype() == kLong || indices.dtype() == kInt, "embedding_renorm_",
              "Expected tensor for argument #2 'indices' to have one of the following scalar types: Long, Int; but got ",
              indices.dtype(), " instead");
  NoGradGuard guard;
  if (indices.numel() == 0) return self;
  // each row once (index_copy_ with repeated indices would not write a row once)
  const Tensor idx = std::get<0>(unique_dim(indices.reshape({-1}).to(kLong), 0));
  const Tensor rows = self.index_select(0, idx);
  const Tensor norms = rows.norm(norm_type, {1}, true);
  const Tensor scale = where(norms > max_norm, max_norm / (norms + 1e-7), ones_like(norms));
  self.index_copy_(0, idx, rows * scale);
  return self;
}
Tensor embedding_renorm(const Tensor& self, const Tensor& indices, double max_norm, double norm_type) {
  Tensor out = self.clone();
  return embedding_renorm_(out, indices, max_norm, norm_type);
}

// ---- pools and pads ----
namespace {
// libtorch's IntArrayRef pool arguments: one value for every dim, or one per dim.
template <size_t D>
ExpandingArray<D> each(const char* op, const char* what, IntArrayRef a) {
  EMBER_CHECK(a.size() == 1 || a.size() == D, op, op, ": ", what, " must either be a single int, or a tuple of ", D, " ints");
  return a.size() == 1 ? ExpandingArray<D>(a[0]) : ExpandingArray<D>(a);
}
}  // namespace
Tensor adaptive_avg_pool3d(const Tensor& self, IntArrayRef output_size) {
  EMBER_CHECK(output_size.size() == 3, "adaptive_avg_pool3d", "adaptive_avg_pool3d: output_size must be 3");
  return F::adaptive_avg_pool3d(self, F::AdaptiveAvgPool3dFuncOptions({output_size[0], output_size[1], output_size[2]}));
}
std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& self, IntArrayRef output_size) {
  EMBER_CHECK(output_size.size() == 1, "adaptive_max_pool1d", "adaptive_max_pool1d: output_size must be 1");
  EMBER_CHECK(self.dim() == 2 || self.dim() == 3, "adaptive_max_pool1d",
              "adaptive_max_pool1d(): Expected 2D or 3D tensor, but got ", self.sizes());
  return F::adaptive_max_pool1d_with_indices(self, F::AdaptiveMaxPool1dFuncOptions(output_size[0]));
}
std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& self, IntArrayRef output_size) {
  EMBER_CHECK(output_size.size() == 3, "adaptive_max_pool3d", "adaptive_max_pool3d(): internal error: output_size.size() must be 3");
  return F::adaptive_max_pool3d_with_indices(
      self, F::AdaptiveMaxPool3dFuncOptions({output_size[0], output_size[1], output_size[2]}));
}
Tensor avg_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  F::AvgPool3dFuncOptions o(each<3>("avg_pool3d", "kernel_size", kernel_size));
  if (!stride.empty()) o.stride(each<3>("avg_pool3d", "stride", stride));
  o.padding(each<3>("avg_pool3d", "padding", padding)).ceil_mode(ceil_mode).count_include_pad(count_include_pad).divisor_override(divisor_override);
  return F::avg_pool3d(self, o);
}
namespace {
F::MaxPool3dFuncOptions max_pool3d_options(IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                                           IntArrayRef dilation, bool ceil_mode) {
  F::MaxPool3dFuncOptions o(each<3>("max_pool3d", "kernel_size", kernel_size));
  if (!stride.empty()) o.stride(each<3>("max_pool3d", "stride", stride));
  o.padding(each<3>("max_pool3d", "padding", padding))
      .dilation(each<3>("max_pool3d", "dilation", dilation))
      .ceil_mode(ceil_mode);
  return o;
}
}  // namespace
Tensor max_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return F::max_pool3d(self, max_pool3d_options(kernel_size, stride, padding, dilation, ceil_mode));
}
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return F::max_pool3d_with_indices(self, max_pool3d_options(kernel_size, stride, padding, dilation, ceil_mode));
}
// at::max_unpool2d/3d take the output's spatial size: the kernel only places values, so any
// kernel with that stride and padding gives the same result.
Tensor max_unpool2d(const Tensor& self, const Tensor& indices, IntArrayRef output_size) {
  EMBER_CHECK(output_size.size() == 2, "max_unpool2d", "There should be exactly two elements (height, width) in output_size, but got ",
              output_size.size(), " elements.");
  EMBER_CHECK(self.dim() == 3 || self.dim() == 4, "max_unpool2d",
              "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with ", self.dim(), " dimensions.");
  EMBER_CHECK(self.sizes() == indices.sizes(), "max_unpool2d", "Expected shape of indices to be same as that of the input tensor (",
              self.sizes(), ") but got indices tensor with shape: ", indices.sizes());
  // Flat indices over H * W: scatter each plane's values into a zero (N, C, H * W).
  const bool batched = self.dim() == 4;
  const Tensor x = batched ? self : self.unsqueeze(0);
  const Tensor ix = (batched ? indices : indices.unsqueeze(0)).to(kLong);
  const int64_t n = x.size(0), c = x.size(1), hw = output_size[0] * output_size[1];
  Tensor out = zeros({n, c, hw}, TensorOptions().dtype(self.dtype()));
  if (x.numel() > 0) {
    const Tensor flat_ix = ix.reshape({n, c, -1});
    EMBER_CHECK(flat_ix.numel() == 0 || (flat_ix.min().item<int64_t>() >= 0 && flat_ix.max().item<int64_t>() < hw),
                "max_unpool2d", "Found an invalid max index: ", flat_ix.max().item<int64_t>(), " (output volumes are of size ",
                output_size[0], "x", output_size[1], ")");
    out = out.scatter(2, flat_ix, x.reshape({n, c, -1}));
  }
  out = out.view({n, c, output_size[0], output_size[1]});
  return batched ? out : out.squeeze(0);
}
Tensor max_unpool3d(const Tensor& self, const Tensor& indices, IntArrayRef output_size, IntArrayRef stride,
                    IntArrayRef padding) {
  EMBER_CHECK(output_size.size() == 3, "max_unpool3d", "There should be exactly three elements (depth, height, width) in output_size, but got: ",
              output_size.size(), " elements.");
  EMBER_CHECK(stride.size() == 3, "max_unpool3d", "There should be exactly three elements (depth, height, width) in stride, but got: ",
              stride.size(), " elements.");
  EMBER_CHECK(padding.size() == 3, "max_unpool3d", "There should be exactly three elements (depth, height, width) in padding, but got: ",
              padding.size(), " elements.");
  EMBER_CHECK(self.dim() == 4 || self.dim() == 5, "max_unpool3d", "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with ",
              self.dim(), " dimensions.");
  EMBER_CHECK(self.sizes() == indices.sizes(), "max_unpool3d", "Expected shape of indices to be same as that of the input tensor (",
              self.sizes(), ") but got indices tensor with shape: ", indices.sizes());
  const bool batched = self.dim() == 5;
  const Tensor x = batched ? self : self.unsqueeze(0);
  const Tensor ix = (batched ? indices : indices.unsqueeze(0)).to(kLong);
  const int64_t n = x.size(0), c = x.size(1), dhw = output_size[0] * output_size[1] * output_size[2];
  Tensor out = zeros({n, c, dhw}, TensorOptions().dtype(self.dtype()));
  if (x.numel() > 0) {
    const Tensor flat_ix = ix.reshape({n, c, -1});
    EMBER_CHECK(flat_ix.numel() == 0 || (flat_ix.min().item<int64_t>() >= 0 && flat_ix.max().item<int64_t>() < dhw),
                "max_unpool3d", "Found an invalid max index: ", flat_ix.max().item<int64_t>());
    out = out.scatter(2, flat_ix, x.reshape({n, c, -1}));
  }
  out = out.view({n, c, output_size[0], output_size[1], output_size[2]});
  return batched ? out : out.squeeze(0);
}

namespace {
Tensor pad_nd(const char* op, const Tensor& self, IntArrayRef padding, int64_t spatial, std::string_view mode) {
  EMBER_CHECK(static_cast<int64_t>(padding.size()) == 2 * spatial, op, "padding size is expected to be ", 2 * spatial,
              ", but got: ", padding.size());
  EMBER_CHECK(self.dim() == spatial + 1 || self.dim() == spatial + 2, op, "Expected ", spatial + 1, "D or ", spatial + 2,
              "D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: ",
              self.sizes());
  return pad(self, padding, mode);
}
}  // namespace
Tensor reflection_pad1d(const Tensor& self, IntArrayRef padding) { return pad_nd("reflection_pad1d", self, padding, 1, "reflect"); }
Tensor reflection_pad2d(const Tensor& self, IntArrayRef padding) { return pad_nd("reflection_pad2d", self, padding, 2, "reflect"); }
Tensor reflection_pad3d(const Tensor& self, IntArrayRef padding) { return pad_nd("reflection_pad3d", self, padding, 3, "reflect"); }
Tensor replication_pad1d(const Tensor& self, IntArrayRef padding) {
  return pad_nd("replication_pad1d", self, padding, 1, "replicate");
}
Tensor replication_pad2d(const Tensor& self, IntArrayRef padding) {
  return pad_nd("replication_pad2d", self, padding, 2, "replicate");
}
Tensor replication_pad3d(const Tensor& self, IntArrayRef padding) {
  return pad_nd("replication_pad3d", self, padding, 3, "replicate");
}

}  // namespace ember
