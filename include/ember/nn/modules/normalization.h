// BatchNorm1d/2d/3d (running statistics), InstanceNorm1d/2d/3d, LayerNorm, GroupNorm, LocalResponseNorm,
// CrossMapLRN2d.
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "ember/nn/functional/normalization.h"
#include "ember/nn/options.h"
#include "ember/nn/options/normalization.h"
#include "ember/nn/pimpl.h"

namespace ember::quantization {
class ObserverOrFakeQuantize;
}
namespace ember::nn {
namespace quantized {
class BatchNorm2dImpl;
}

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  EMBER_ARG(int64_t, num_features);
  EMBER_ARG(double, eps) = 1e-5;
  // Weight of the new batch in the running averages; nullopt: the cumulative average.
  EMBER_ARG(std::optional<double>, momentum) = 0.1;
  EMBER_ARG(bool, affine) = true;
  EMBER_ARG(bool, track_running_stats) = true;
};
using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;
using BatchNorm3dOptions = BatchNormOptions;

// Parameters weight (ones) and bias (zeros) when affine; buffers running_mean (zeros),
// running_var (ones) and num_batches_tracked (int64 0) when tracking running stats. Training
// normalizes with the batch's statistics and updates the running ones; eval uses the running ones.
template <size_t D>
class BatchNormImpl : public Module {
 public:
  explicit BatchNormImpl(int64_t num_features) : BatchNormImpl(BatchNormOptions(num_features)) {}
  explicit BatchNormImpl(const BatchNormOptions& options);
  void reset();
  void reset_running_stats();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  BatchNormOptions options;
  Tensor weight;
  Tensor bias;
  Tensor running_mean;
  Tensor running_var;
  Tensor num_batches_tracked;
  // Eager static quantization (BatchNorm2d, as PyTorch's): prepare sets the observer of the
  // output, which forward then runs; convert the int8 batch norm forward then runs instead.
  std::shared_ptr<quantization::ObserverOrFakeQuantize> activation_post_process;
  std::shared_ptr<quantized::BatchNorm2dImpl> static_quantized;

 private:
  Tensor float_forward(const Tensor& input);
};
class BatchNorm1dImpl : public BatchNormImpl<1> {
 public:
  using BatchNormImpl<1>::BatchNormImpl;
};
class BatchNorm2dImpl : public BatchNormImpl<2> {
 public:
  using BatchNormImpl<2>::BatchNormImpl;
};
class BatchNorm3dImpl : public BatchNormImpl<3> {
 public:
  using BatchNormImpl<3>::BatchNormImpl;
};
EMBER_MODULE(BatchNorm1d);
EMBER_MODULE(BatchNorm2d);
EMBER_MODULE(BatchNorm3d);

// Normalizes each (sample, channel) over its spatial dims. Parameters weight/bias when affine,
// buffers running_mean/var and num_batches_tracked when tracking running stats (used in eval).
// A (C, *spatial) input is a batch of one.
template <size_t D>
class InstanceNormImpl : public Module {
 public:
  explicit InstanceNormImpl(int64_t num_features) : InstanceNormImpl(InstanceNormOptions(num_features)) {}
  explicit InstanceNormImpl(const InstanceNormOptions& options);
  void reset();
  void reset_running_stats();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  InstanceNormOptions options;
  Tensor weight;
  Tensor bias;
  Tensor running_mean;
  Tensor running_var;
  Tensor num_batches_tracked;
};
class InstanceNorm1dImpl : public InstanceNormImpl<1> {
 public:
  using InstanceNormImpl<1>::InstanceNormImpl;
};
class InstanceNorm2dImpl : public InstanceNormImpl<2> {
 public:
  using InstanceNormImpl<2>::InstanceNormImpl;
};
class InstanceNorm3dImpl : public InstanceNormImpl<3> {
 public:
  using InstanceNormImpl<3>::InstanceNormImpl;
};
EMBER_MODULE(InstanceNorm1d);
EMBER_MODULE(InstanceNorm2d);
EMBER_MODULE(InstanceNorm3d);

class LocalResponseNormImpl : public Module {
 public:
  explicit LocalResponseNormImpl(const LocalResponseNormOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  LocalResponseNormOptions options;
};
EMBER_MODULE(LocalResponseNorm);

class CrossMapLRN2dImpl : public Module {
 public:
  explicit CrossMapLRN2dImpl(int64_t size) : options(size) {}
  explicit CrossMapLRN2dImpl(const CrossMapLRN2dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  CrossMapLRN2dOptions options;
};
EMBER_MODULE(CrossMapLRN2d);

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  EMBER_ARG(std::vector<int64_t>, normalized_shape);
  EMBER_ARG(double, eps) = 1e-5;
  EMBER_ARG(bool, elementwise_affine) = true;
};
class LayerNormImpl : public Module {
 public:
  LayerNormImpl(std::vector<int64_t> normalized_shape) : LayerNormImpl(LayerNormOptions(std::move(normalized_shape))) {}  // NOLINT
  explicit LayerNormImpl(LayerNormOptions options);
  void reset();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  LayerNormOptions options;
  Tensor weight;
  Tensor bias;
};
EMBER_MODULE(LayerNorm);

struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  EMBER_ARG(int64_t, num_groups);
  EMBER_ARG(int64_t, num_channels);
  EMBER_ARG(double, eps) = 1e-5;
  EMBER_ARG(bool, affine) = true;
};
class GroupNormImpl : public Module {
 public:
  GroupNormImpl(int64_t num_groups, int64_t num_channels) : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  explicit GroupNormImpl(const GroupNormOptions& options);
  void reset();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  GroupNormOptions options;
  Tensor weight;
  Tensor bias;
};
EMBER_MODULE(GroupNorm);

}  // namespace ember::nn
