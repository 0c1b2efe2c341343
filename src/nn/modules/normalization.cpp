#include "ember/nn/modules/normalization.h"

#include <algorithm>
#include <vector>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/nn/init.h"
#include "ember/indexing.h"
#include "ember/nn_ops.h"
#include "ember/nn/quantized.h"
#include "ember/quantization.h"
#include "ember/pointwise.h"
#include "ops/norm.h"

namespace ember::nn {

template <size_t D>
BatchNormImpl<D>::BatchNormImpl(const BatchNormOptions& options) : options(options) {
  reset();
}

template <size_t D>
void BatchNormImpl<D>::reset() {
  static constexpr const char* kName[] = {"", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d"};
  EMBER_CHECK(options.num_features() > 0, kName[D],
              "num_features must be positive, got ", options.num_features());
  const int64_t c = options.num_features();
  weight = register_parameter("weight", options.affine() ? empty({c}) : Tensor(), options.affine());
  bias = register_parameter("bias", options.affine() ? empty({c}) : Tensor(), options.affine());
  const bool track = options.track_running_stats();
  running_mean = register_buffer("running_mean", track ? zeros({c}) : Tensor());
  running_var = register_buffer("running_var", track ? ones({c}) : Tensor());
  num_batches_tracked =
      register_buffer("num_batches_tracked", track ? zeros({}, TensorOptions().dtype(kLong)) : Tensor());
  reset_parameters();
}

template <size_t D>
void BatchNormImpl<D>::reset_running_stats() {
  if (!options.track_running_stats()) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  init::zeros_(num_batches_tracked);
}

template <size_t D>
void BatchNormImpl<D>::reset_parameters() {
  reset_running_stats();
  if (options.affine()) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

template <size_t D>
Tensor BatchNormImpl<D>::forward(const Tensor& input) {
  if (static_quantized) return static_quantized->forward(input);
  Tensor y = float_forward(input);
  return activation_post_process ? activation_post_process->forward(y) : y;
}

template <size_t D>
Tensor BatchNormImpl<D>::float_forward(const Tensor& input) {
  if constexpr (D == 1) {
    EMBER_CHECK(input.dim() == 2 || input.dim() == 3, "BatchNorm1d", "expected 2D or 3D input (got ", input.dim(),
                "D input)");
  } else {
    EMBER_CHECK(input.dim() == static_cast<int64_t>(D) + 2, D == 2 ? "BatchNorm2d" : "BatchNorm3d", "expected ",
                D + 2, "D input (got ", input.dim(), "D input)");
  }
  if (is_training() && options.track_running_stats()) {
    {
      NoGradGuard no_grad;
      num_batches_tracked.add_(1);
    }
    // a cumulative average: the op reads the count (no host read, so a graph can capture it)
    if (!options.momentum())
      return batch_norm_cumulative(input, weight, bias, running_mean, running_var, num_batches_tracked,
                                   options.eps());
  }
  // Batch statistics in training, and in eval when there are no running ones.
  const bool use_batch_stats = is_training() || !running_mean.defined();
  const bool update = !is_training() || options.track_running_stats();
  return ember::batch_norm(input, weight, bias, update ? running_mean : Tensor(),
                                update ? running_var : Tensor(), use_batch_stats, options.momentum().value_or(0.0),
                                options.eps());
}

template <size_t D>
void BatchNormImpl<D>::pretty_print(std::ostream& stream) const {
  if (static_quantized) return static_quantized->pretty_print(stream);
  stream << std::boolalpha << "torch::nn::BatchNorm" << D << "d(" << options.num_features()
         << ", eps=" << options.eps() << ", momentum=";
  if (options.momentum()) {
    stream << *options.momentum();
  } else {
    stream << "None";
  }
  stream << ", affine=" << options.affine() << ", track_running_stats=" << options.track_running_stats() << ")";
}

template class BatchNormImpl<1>;
template class BatchNormImpl<2>;
template class BatchNormImpl<3>;

template <size_t D>
InstanceNormImpl<D>::InstanceNormImpl(const InstanceNormOptions& options) : options(options) {
  reset();
}

template <size_t D>
void InstanceNormImpl<D>::reset() {
  static constexpr const char* kName[] = {"", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"};
  EMBER_CHECK(options.num_features() > 0, kName[D], "num_features must be positive, got ", options.num_features());
  const int64_t c = options.num_features();
  weight = register_parameter("weight", options.affine() ? empty({c}) : Tensor(), options.affine());
  bias = register_parameter("bias", options.affine() ? empty({c}) : Tensor(), options.affine());
  const bool track = options.track_running_stats();
  running_mean = register_buffer("running_mean", track ? zeros({c}) : Tensor());
  running_var = register_buffer("running_var", track ? ones({c}) : Tensor());
  num_batches_tracked =
      register_buffer("num_batches_tracked", track ? zeros({}, TensorOptions().dtype(kLong)) : Tensor());
  reset_parameters();
}

template <size_t D>
void InstanceNormImpl<D>::reset_running_stats() {
  if (!options.track_running_stats()) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  init::zeros_(num_batches_tracked);
}

template <size_t D>
void InstanceNormImpl<D>::reset_parameters() {
  reset_running_stats();
  if (options.affine()) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

template <size_t D>
Tensor InstanceNormImpl<D>::forward(const Tensor& input) {
  static constexpr const char* kName[] = {"", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"};
  const auto d = static_cast<int64_t>(D);
  EMBER_CHECK(input.dim() == d + 1 || input.dim() == d + 2, kName[D], "expected ", d + 1, "D or ", d + 2,
              "D input (got ", input.dim(), "D input)");
  // An unbatched input is a batch of one.
  if (input.dim() == d + 1) return forward(input.unsqueeze(0)).squeeze(0);
  return ember::instance_norm(input, weight, bias, running_mean, running_var,
                              is_training() || !options.track_running_stats(), options.momentum(), options.eps());
}

template <size_t D>
void InstanceNormImpl<D>::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "torch::nn::InstanceNorm" << D << "d(" << options.num_features()
         << ", eps=" << options.eps() << ", momentum=" << options.momentum() << ", affine=" << options.affine()
         << ", track_running_stats=" << options.track_running_stats() << ")";
}

template class InstanceNormImpl<1>;
template class InstanceNormImpl<2>;
template class InstanceNormImpl<3>;

Tensor LocalResponseNormImpl::forward(const Tensor& input) { return functional::local_response_norm(input, options); }

void LocalResponseNormImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::LocalResponseNorm(" << options.size() << ", alpha=" << options.alpha()
         << ", beta=" << options.beta() << ", k=" << options.k() << ")";
}

LayerNormImpl::LayerNormImpl(LayerNormOptions options) : options(std::move(options)) { reset(); }

void LayerNormImpl::reset() {
  const bool affine = options.elementwise_affine();
  weight = register_parameter("weight", affine ? ember::empty(options.normalized_shape()) : Tensor(), affine);
  bias = register_parameter("bias", affine ? ember::empty(options.normalized_shape()) : Tensor(), affine);
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (!options.elementwise_affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return ember::layer_norm(input, options.normalized_shape(), weight, bias, options.eps());
}

void LayerNormImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "torch::nn::LayerNorm(" << IntArrayRef(options.normalized_shape())
         << ", eps=" << options.eps() << ", elementwise_affine=" << options.elementwise_affine() << ")";
}

GroupNormImpl::GroupNormImpl(const GroupNormOptions& options) : options(options) { reset(); }

void GroupNormImpl::reset() {
  EMBER_CHECK(options.num_groups() > 0 && options.num_channels() % options.num_groups() == 0, "GroupNorm",
              "num_channels must be divisible by num_groups (got num_channels=", options.num_channels(),
              ", num_groups=", options.num_groups(), ")");
  const bool affine = options.affine();
  weight = register_parameter("weight", affine ? empty({options.num_channels()}) : Tensor(), affine);
  bias = register_parameter("bias", affine ? empty({options.num_channels()}) : Tensor(), affine);
  reset_parameters();
}

void GroupNormImpl::reset_parameters() {
  if (!options.affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor GroupNormImpl::forward(const Tensor& input) {
  return ember::group_norm(input, options.num_groups(), weight, bias, options.eps());
}

void GroupNormImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "torch::nn::GroupNorm(" << options.num_groups() << ", " << options.num_channels()
         << ", eps=" << options.eps() << ", affine=" << options.affine() << ")";
}

// Lua Torch's running window over channels, as libtorch computes it: channel c sums the squares
// of channels up to c + pre_pad - 1 and drops those from 1 to c - pre_pad (channel 0 is never
// dropped), pre_pad = (size - 1) / 2 + 1. With P the cumulative sum of squares over channels:
// P[min(c + pre_pad - 1, C - 1)] - (P[c - pre_pad] - P[0]) where c > pre_pad.
Tensor CrossMapLRN2dImpl::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() == 4, "CrossMapLRN2d", "CrossMapLRN2d: Expected input to be 4D, got ", input.dim(), "D instead.");
  const int64_t c = input.size(1), pre_pad = (options.size() - 1) / 2 + 1;
  if (input.numel() == 0) return input;
  const Tensor prefix = (input * input).cumsum(1);
  std::vector<int64_t> upper, lower;
  std::vector<float> dropped;
  for (int64_t i = 0; i < c; ++i) {
    upper.push_back(std::min(i + pre_pad - 1, c - 1));
    lower.push_back(i > pre_pad ? i - pre_pad : 0);
    dropped.push_back(i > pre_pad ? 1.f : 0.f);
  }
  const Tensor drop = tensor(dropped).to(input.dtype()).view({1, c, 1, 1});
  const Tensor window = prefix.index_select(1, tensor(upper)) -
                        (prefix.index_select(1, tensor(lower)) - prefix.narrow(1, 0, 1)) * drop;
  const Tensor scale = window * (options.alpha() / static_cast<double>(options.size())) + static_cast<double>(options.k());
  return input * scale.pow(-options.beta());
}

void CrossMapLRN2dImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::CrossMapLRN2d(" << options.size() << ", alpha=" << options.alpha() << ", beta=" << options.beta()
         << ", k=" << options.k() << ")";
}

}  // namespace ember::nn
