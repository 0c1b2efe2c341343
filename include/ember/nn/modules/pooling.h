// MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d, LPPool1d/2d,
// FractionalMaxPool2d/3d, MaxUnpool1d/2d/3d and the
// functional forms taking their FuncOptions.
#pragma once
#include <optional>
#include <tuple>
#include <vector>

#include "ember/nn/options/pooling.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

namespace functional {
Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& options);
Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& options);
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const MaxPool1dFuncOptions& options);
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const MaxPool2dFuncOptions& options);
Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& options);
Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& options);
Tensor adaptive_avg_pool1d(const Tensor& input, const AdaptiveAvgPool1dFuncOptions& options);
Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& options);
Tensor adaptive_max_pool1d(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& options);
Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& options);
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool1dFuncOptions& options);
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool2dFuncOptions& options);
Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& options);
Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& options);
// 3-D pooling as compositions (windows by Tensor::unfold, adaptive pooling separable by dim).
Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& options);
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, const MaxPool3dFuncOptions& options);
Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& options);
Tensor adaptive_avg_pool3d(const Tensor& input, const AdaptiveAvgPool3dFuncOptions& options);
Tensor adaptive_max_pool3d(const Tensor& input, const AdaptiveMaxPool3dFuncOptions& options);
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool3dFuncOptions& options);
Tensor fractional_max_pool2d(const Tensor& input, const FractionalMaxPool2dFuncOptions& options);
std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool2dFuncOptions& options);
Tensor fractional_max_pool3d(const Tensor& input, const FractionalMaxPool3dFuncOptions& options);
std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool3dFuncOptions& options);
// indices: flat positions in each output plane, as max_pool*_with_indices return them.
Tensor max_unpool1d(const Tensor& input, const Tensor& indices, const MaxUnpool1dFuncOptions& options);
Tensor max_unpool2d(const Tensor& input, const Tensor& indices, const MaxUnpool2dFuncOptions& options);
Tensor max_unpool3d(const Tensor& input, const Tensor& indices, const MaxUnpool3dFuncOptions& options);
}  // namespace functional

template <size_t D>
class MaxPoolImpl : public Module {
 public:
  explicit MaxPoolImpl(ExpandingArray<D> kernel_size) : MaxPoolImpl(MaxPoolOptions<D>(kernel_size)) {}
  explicit MaxPoolImpl(const MaxPoolOptions<D>& options) : options(options) {}
  Tensor forward(const Tensor& input);
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  MaxPoolOptions<D> options;
};

template <size_t D>
class AvgPoolImpl : public Module {
 public:
  explicit AvgPoolImpl(ExpandingArray<D> kernel_size) : AvgPoolImpl(AvgPoolOptions<D>(kernel_size)) {}
  explicit AvgPoolImpl(const AvgPoolOptions<D>& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  AvgPoolOptions<D> options;
};

template <size_t D, class output_size_t>
class AdaptiveAvgPoolImpl : public Module {
 public:
  explicit AdaptiveAvgPoolImpl(output_size_t output_size) : options(output_size) {}
  explicit AdaptiveAvgPoolImpl(const AdaptiveAvgPoolOptions<output_size_t>& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  AdaptiveAvgPoolOptions<output_size_t> options;
};

template <size_t D, class output_size_t>
class AdaptiveMaxPoolImpl : public Module {
 public:
  explicit AdaptiveMaxPoolImpl(output_size_t output_size) : options(output_size) {}
  explicit AdaptiveMaxPoolImpl(const AdaptiveMaxPoolOptions<output_size_t>& options) : options(options) {}
  Tensor forward(const Tensor& input);
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  AdaptiveMaxPoolOptions<output_size_t> options;
};

template <size_t D>
class LPPoolImpl : public Module {
 public:
  LPPoolImpl(double norm_type, ExpandingArray<D> kernel_size) : LPPoolImpl(LPPoolOptions<D>(norm_type, kernel_size)) {}
  explicit LPPoolImpl(const LPPoolOptions<D>& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  LPPoolOptions<D> options;
};

template <size_t D>
class FractionalMaxPoolImpl : public Module {
 public:
  FractionalMaxPoolImpl(ExpandingArray<D> kernel_size)  // NOLINT
      : FractionalMaxPoolImpl(FractionalMaxPoolOptions<D>(kernel_size)) {}
  explicit FractionalMaxPoolImpl(FractionalMaxPoolOptions<D> options);
  // Checks the options and registers _random_samples as a buffer (as libtorch's).
  void reset();
  Tensor forward(const Tensor& input);
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  FractionalMaxPoolOptions<D> options;
  Tensor _random_samples;
};
class FractionalMaxPool2dImpl : public FractionalMaxPoolImpl<2> {
 public:
  using FractionalMaxPoolImpl<2>::FractionalMaxPoolImpl;
};
class FractionalMaxPool3dImpl : public FractionalMaxPoolImpl<3> {
 public:
  using FractionalMaxPoolImpl<3>::FractionalMaxPoolImpl;
};
EMBER_MODULE(FractionalMaxPool2d);
EMBER_MODULE(FractionalMaxPool3d);

template <size_t D>
class MaxUnpoolImpl : public Module {
 public:
  explicit MaxUnpoolImpl(ExpandingArray<D> kernel_size) : MaxUnpoolImpl(MaxUnpoolOptions<D>(kernel_size)) {}
  explicit MaxUnpoolImpl(const MaxUnpoolOptions<D>& options) : options(options) {}
  Tensor forward(const Tensor& input, const Tensor& indices,
                 const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
  void pretty_print(std::ostream& stream) const override;
  MaxUnpoolOptions<D> options;
};
class MaxUnpool1dImpl : public MaxUnpoolImpl<1> {
 public:
  using MaxUnpoolImpl<1>::MaxUnpoolImpl;
};
class MaxUnpool2dImpl : public MaxUnpoolImpl<2> {
 public:
  using MaxUnpoolImpl<2>::MaxUnpoolImpl;
};
class MaxUnpool3dImpl : public MaxUnpoolImpl<3> {
 public:
  using MaxUnpoolImpl<3>::MaxUnpoolImpl;
};
EMBER_MODULE(MaxUnpool1d);
EMBER_MODULE(MaxUnpool2d);
EMBER_MODULE(MaxUnpool3d);

class MaxPool1dImpl : public MaxPoolImpl<1> {
 public:
  using MaxPoolImpl<1>::MaxPoolImpl;
};
class MaxPool2dImpl : public MaxPoolImpl<2> {
 public:
  using MaxPoolImpl<2>::MaxPoolImpl;
};
class AvgPool1dImpl : public AvgPoolImpl<1> {
 public:
  using AvgPoolImpl<1>::AvgPoolImpl;
};
class AvgPool2dImpl : public AvgPoolImpl<2> {
 public:
  using AvgPoolImpl<2>::AvgPoolImpl;
};
class AdaptiveAvgPool1dImpl : public AdaptiveAvgPoolImpl<1, ExpandingArray<1>> {
 public:
  using AdaptiveAvgPoolImpl<1, ExpandingArray<1>>::AdaptiveAvgPoolImpl;
};
class AdaptiveAvgPool2dImpl : public AdaptiveAvgPoolImpl<2, ExpandingArrayWithOptionalElem<2>> {
 public:
  using AdaptiveAvgPoolImpl<2, ExpandingArrayWithOptionalElem<2>>::AdaptiveAvgPoolImpl;
};
class AdaptiveMaxPool1dImpl : public AdaptiveMaxPoolImpl<1, ExpandingArray<1>> {
 public:
  using AdaptiveMaxPoolImpl<1, ExpandingArray<1>>::AdaptiveMaxPoolImpl;
};
class AdaptiveMaxPool2dImpl : public AdaptiveMaxPoolImpl<2, ExpandingArrayWithOptionalElem<2>> {
 public:
  using AdaptiveMaxPoolImpl<2, ExpandingArrayWithOptionalElem<2>>::AdaptiveMaxPoolImpl;
};
class MaxPool3dImpl : public MaxPoolImpl<3> {
 public:
  using MaxPoolImpl<3>::MaxPoolImpl;
};
class AvgPool3dImpl : public AvgPoolImpl<3> {
 public:
  using AvgPoolImpl<3>::AvgPoolImpl;
};
class AdaptiveAvgPool3dImpl : public AdaptiveAvgPoolImpl<3, ExpandingArrayWithOptionalElem<3>> {
 public:
  using AdaptiveAvgPoolImpl<3, ExpandingArrayWithOptionalElem<3>>::AdaptiveAvgPoolImpl;
};
class AdaptiveMaxPool3dImpl : public AdaptiveMaxPoolImpl<3, ExpandingArrayWithOptionalElem<3>> {
 public:
  using AdaptiveMaxPoolImpl<3, ExpandingArrayWithOptionalElem<3>>::AdaptiveMaxPoolImpl;
};
EMBER_MODULE(MaxPool3d);
EMBER_MODULE(AvgPool3d);
EMBER_MODULE(AdaptiveAvgPool3d);
EMBER_MODULE(AdaptiveMaxPool3d);
class LPPool1dImpl : public LPPoolImpl<1> {
 public:
  using LPPoolImpl<1>::LPPoolImpl;
};
class LPPool2dImpl : public LPPoolImpl<2> {
 public:
  using LPPoolImpl<2>::LPPoolImpl;
};
EMBER_MODULE(MaxPool1d);
EMBER_MODULE(MaxPool2d);
EMBER_MODULE(AvgPool1d);
EMBER_MODULE(AvgPool2d);
EMBER_MODULE(AdaptiveAvgPool1d);
EMBER_MODULE(AdaptiveAvgPool2d);
EMBER_MODULE(AdaptiveMaxPool1d);
EMBER_MODULE(AdaptiveMaxPool2d);
EMBER_MODULE(LPPool1d);
EMBER_MODULE(LPPool2d);

}  // namespace ember::nn
