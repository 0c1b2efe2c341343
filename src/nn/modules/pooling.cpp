#include "ember/nn/modules/pooling.h"

#include <cmath>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"

namespace ember::nn {
namespace functional {
namespace {

// The output size with open entries filled from the input's trailing dims.
template <size_t D>
DimVector filled_size(const char* op, const Tensor& input, const ExpandingArrayWithOptionalElem<D>& size) {
  EMBER_CHECK(input.dim() >= static_cast<int64_t>(D) + 1, op, "expected ", D + 1, "D or ", D + 2,
              "D input, got ", input.sizes());
  DimVector out;
  for (size_t i = 0; i < D; ++i) out.push_back(size[i].value_or(input.size(input.dim() - static_cast<int64_t>(D) + i)));
  return out;
}

// PyTorch's lp_pool: (sign(s) * relu(|s|) * window size)^(1/p) of s = avg_pool(x^p), which is the
// p-norm of each window for positive sums.
Tensor lp_pool(const Tensor& pooled, int64_t window, double p) {
  return (pooled.sign() * ember::relu(pooled.abs())).mul(static_cast<double>(window)).pow(1.0 / p);
}

}  // namespace

Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& o) {
  return ember::max_pool1d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return ember::max_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const MaxPool1dFuncOptions& o) {
  return ember::max_pool1d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return ember::max_pool2d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& o) {
  EMBER_CHECK(!o.divisor_override(), "avg_pool1d", "avg_pool1d has no divisor_override");
  return ember::avg_pool1d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad());
}
Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& o) {
  return ember::avg_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                    o.divisor_override());
}
Tensor adaptive_avg_pool1d(const Tensor& input, const AdaptiveAvgPool1dFuncOptions& o) {
  return ember::adaptive_avg_pool1d(input, *o.output_size());
}
Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& o) {
  return ember::adaptive_avg_pool2d(input, filled_size<2>("adaptive_avg_pool2d", input, o.output_size()));
}
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool1dFuncOptions& o) {
  EMBER_CHECK(input.dim() == 2 || input.dim() == 3, "adaptive_max_pool1d", "expected 2D or 3D input, got ",
              input.sizes());
  // A 2-D pool over (1, L): the flat indices of a one-row plane are the positions along L.
  auto [values, indices] = ember::adaptive_max_pool2d(input.unsqueeze(-2), {1, o.output_size()[0]});
  return {values.squeeze(-2), indices.squeeze(-2)};
}
Tensor adaptive_max_pool1d(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool1d_with_indices(input, o));
}
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool2dFuncOptions& o) {
  return ember::adaptive_max_pool2d(input, filled_size<2>("adaptive_max_pool2d", input, o.output_size()));
}
Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool2d_with_indices(input, o));
}
Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& o) {
  EMBER_CHECK(o.norm_type() != 0, "lp_pool1d", "norm_type must be non-zero");
  const Tensor pooled = ember::avg_pool1d(input.pow(o.norm_type()), o.kernel_size(), o.stride(), 0, o.ceil_mode());
  return lp_pool(pooled, o.kernel_size()[0], o.norm_type());
}
Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& o) {
  EMBER_CHECK(o.norm_type() != 0, "lp_pool2d", "norm_type must be non-zero");
  const Tensor pooled = ember::avg_pool2d(input.pow(o.norm_type()), o.kernel_size(), o.stride(), 0, o.ceil_mode());
  return lp_pool(pooled, o.kernel_size()[0] * o.kernel_size()[1], o.norm_type());
}

template <size_t D>
Tensor max_unpool(const char* op, const Tensor& input, const Tensor& indices, const MaxUnpoolFuncOptions<D>& o) {
  const auto d = static_cast<int64_t>(D);
  EMBER_CHECK(input.defined() && indices.defined() && (input.dim() == d + 1 || input.dim() == d + 2), op,
              "expected a ", d + 1, "D or ", d + 2, "D input, got ", input.defined() ? input.sizes() : IntArrayRef());
  EMBER_CHECK(indices.sizes() == input.sizes(), op, "Expected shape of indices to be same as that of the input tensor (",
              input.sizes(), ") but got indices tensor with shape: ", indices.sizes());
  EMBER_CHECK(indices.dtype() == kLong, op, "Expected indices of dtype int64, got ", indices.dtype());
  DimVector out(IntArrayRef(input.sizes().data(), static_cast<size_t>(input.dim() - d)));
  int64_t plane = 1;
  for (int64_t i = 0; i < d; ++i) {
    int64_t size = (input.size(input.dim() - d + i) - 1) * o.stride()[i] - 2 * o.padding()[i] + o.kernel_size()[i];
    if (o.output_size()) {
      const auto& given = *o.output_size();
      EMBER_CHECK(static_cast<int64_t>(given.size()) == d || static_cast<int64_t>(given.size()) == d + 2, op,
                  "output_size should have ", d, " or ", d + 2, " elements, got ", given.size());
      size = given[given.size() - D + i];
    }
    out.push_back(size);
    plane *= size;
  }
  Tensor flat_idx = indices.flatten(input.dim() - d);
  {
    NoGradGuard no_grad;
    EMBER_CHECK(flat_idx.numel() == 0 || ((flat_idx >= 0).all().item<bool>() && (flat_idx < plane).all().item<bool>()),
                op, "Found an invalid max index (expected values in [0, ", plane, "), output sizes ", IntArrayRef(out), ")");
  }
  DimVector flat(IntArrayRef(out.data(), static_cast<size_t>(input.dim() - d)));
  flat.push_back(plane);
  return zeros(flat, TensorOptions().dtype(input.dtype()))
      .scatter(-1, flat_idx, input.flatten(input.dim() - d))
      .view(out);
}

Tensor max_unpool1d(const Tensor& input, const Tensor& indices, const MaxUnpool1dFuncOptions& o) {
  return max_unpool<1>("max_unpool1d", input, indices, o);
}
Tensor max_unpool2d(const Tensor& input, const Tensor& indices, const MaxUnpool2dFuncOptions& o) {
  return max_unpool<2>("max_unpool2d", input, indices, o);
}
Tensor max_unpool3d(const Tensor& input, const Tensor& indices, const MaxUnpool3dFuncOptions& o) {
  return max_unpool<3>("max_unpool3d", input, indices, o);
}

}  // namespace functional

template <size_t D>
Tensor MaxUnpoolImpl<D>::forward(const Tensor& input, const Tensor& indices,
                                 const std::optional<std::vector<int64_t>>& output_size) {
  auto o = functional::MaxUnpoolFuncOptions<D>(options.kernel_size())
               .stride(options.stride())
               .padding(options.padding())
               .output_size(output_size);
  if constexpr (D == 1) return functional::max_unpool1d(input, indices, o);
  if constexpr (D == 2) return functional::max_unpool2d(input, indices, o);
  if constexpr (D == 3) return functional::max_unpool3d(input, indices, o);
}
template <size_t D>
void MaxUnpoolImpl<D>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::MaxUnpool" << D << "d(kernel_size=" << options.kernel_size() << ", stride=" << options.stride()
         << ", padding=" << options.padding() << ")";
}
template class MaxUnpoolImpl<1>;
template class MaxUnpoolImpl<2>;
template class MaxUnpoolImpl<3>;

template <size_t D>
Tensor MaxPoolImpl<D>::forward(const Tensor& input) {
  if constexpr (D == 1) return functional::max_pool1d(input, options);
  if constexpr (D == 2) return functional::max_pool2d(input, options);
  if constexpr (D == 3) return functional::max_pool3d(input, options);
}
template <size_t D>
std::tuple<Tensor, Tensor> MaxPoolImpl<D>::forward_with_indices(const Tensor& input) {
  if constexpr (D == 1) return functional::max_pool1d_with_indices(input, options);
  if constexpr (D == 2) return functional::max_pool2d_with_indices(input, options);
  if constexpr (D == 3) return functional::max_pool3d_with_indices(input, options);
}
template <size_t D>
void MaxPoolImpl<D>::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "torch::nn::MaxPool" << D << "d(kernel_size=" << options.kernel_size()
         << ", stride=" << options.stride() << ", padding=" << options.padding()
         << ", dilation=" << options.dilation() << ", ceil_mode=" << options.ceil_mode() << ")";
}

template <size_t D>
Tensor AvgPoolImpl<D>::forward(const Tensor& input) {
  if constexpr (D == 1) return functional::avg_pool1d(input, options);
  if constexpr (D == 2) return functional::avg_pool2d(input, options);
  if constexpr (D == 3) return functional::avg_pool3d(input, options);
}
template <size_t D>
void AvgPoolImpl<D>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::AvgPool" << D << "d(kernel_size=" << options.kernel_size() << ", stride=" << options.stride()
         << ", padding=" << options.padding() << ")";
}

template <size_t D, class S>
Tensor AdaptiveAvgPoolImpl<D, S>::forward(const Tensor& input) {
  if constexpr (D == 1) return functional::adaptive_avg_pool1d(input, options);
  if constexpr (D == 2) return functional::adaptive_avg_pool2d(input, options);
  if constexpr (D == 3) return functional::adaptive_avg_pool3d(input, options);
}
template <size_t D, class S>
void AdaptiveAvgPoolImpl<D, S>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::AdaptiveAvgPool" << D << "d(output_size=" << options.output_size() << ")";
}

template <size_t D, class S>
Tensor AdaptiveMaxPoolImpl<D, S>::forward(const Tensor& input) {
  if constexpr (D == 1) return functional::adaptive_max_pool1d(input, options);
  if constexpr (D == 2) return functional::adaptive_max_pool2d(input, options);
  if constexpr (D == 3) return functional::adaptive_max_pool3d(input, options);
}
template <size_t D, class S>
std::tuple<Tensor, Tensor> AdaptiveMaxPoolImpl<D, S>::forward_with_indices(const Tensor& input) {
  if constexpr (D == 1) return functional::adaptive_max_pool1d_with_indices(input, options);
  if constexpr (D == 2) return functional::adaptive_max_pool2d_with_indices(input, options);
  if constexpr (D == 3) return functional::adaptive_max_pool3d_with_indices(input, options);
}
template <size_t D, class S>
void AdaptiveMaxPoolImpl<D, S>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::AdaptiveMaxPool" << D << "d(output_size=" << options.output_size() << ")";
}

template <size_t D>
Tensor LPPoolImpl<D>::forward(const Tensor& input) {
  if constexpr (D == 1) return functional::lp_pool1d(input, options);
  else return functional::lp_pool2d(input, options);
}
template <size_t D>
void LPPoolImpl<D>::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "torch::nn::LPPool" << D << "d(norm_type=" << options.norm_type()
         << ", kernel_size=" << options.kernel_size() << ", stride=" << options.stride()
         << ", ceil_mode=" << options.ceil_mode() << ")";
}

namespace functional {
namespace {
template <size_t D>
std::tuple<Tensor, Tensor> fractional_max_pool(const Tensor& input, const FractionalMaxPoolOptions<D>& o) {
  const char* op = D == 2 ? "fractional_max_pool2d" : "fractional_max_pool3d";
  EMBER_CHECK(o.output_size() || o.output_ratio(), op, op, " requires specifying either an output_size or an output_ratio");
  EMBER_CHECK(input.defined() && input.dim() >= static_cast<int64_t>(D) + 1, op, "Expected ", D + 1, "D or ", D + 2,
              "D tensor, but got: ", input.defined() ? input.sizes() : IntArrayRef{});
  std::vector<int64_t> size(D);
  for (size_t k = 0; k < D; ++k) {
    const int64_t in = input.size(static_cast<int64_t>(k) - static_cast<int64_t>(D));
    size[k] = o.output_size() ? (*o.output_size())[k]
                              : static_cast<int64_t>(static_cast<double>(in) * (*o.output_ratio())[k]);
  }
  Tensor samples = o._random_samples();
  if (!samples.defined()) {
    const int64_t n = input.dim() == static_cast<int64_t>(D) + 1 ? 1 : input.size(0);
    samples = rand({n, input.size(-static_cast<int64_t>(D) - 1), static_cast<int64_t>(D)},
                   TensorOptions().dtype(input.dtype()));
  }
  if constexpr (D == 2) return ember::fractional_max_pool2d(input, *o.kernel_size(), size, samples);
  else return ember::fractional_max_pool3d(input, *o.kernel_size(), size, samples);
}
}  // namespace

Tensor fractional_max_pool2d(const Tensor& input, const FractionalMaxPool2dFuncOptions& options) {
  return std::get<0>(fractional_max_pool<2>(input, options));
}
std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool2dFuncOptions& options) {
  return fractional_max_pool<2>(input, options);
}
Tensor fractional_max_pool3d(const Tensor& input, const FractionalMaxPool3dFuncOptions& options) {
  return std::get<0>(fractional_max_pool<3>(input, options));
}
std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool3dFuncOptions& options) {
  return fractional_max_pool<3>(input, options);
}
}  // namespace functional

template <size_t D>
FractionalMaxPoolImpl<D>::FractionalMaxPoolImpl(FractionalMaxPoolOptions<D> options) : options(std::move(options)) {
  reset();
}
template <size_t D>
void FractionalMaxPoolImpl<D>::reset() {
  const std::string name = "FractionalMaxPool" + std::to_string(D) + "d";
  _random_samples = options._random_samples();
  if (_random_samples.defined()) register_buffer("_random_samples", _random_samples);
  EMBER_CHECK(options.output_size() || options.output_ratio(), name.c_str(), name,
              " requires specifying either an output size, or a pooling ratio");
  EMBER_CHECK(!(options.output_size() && options.output_ratio()), name.c_str(),
              "only one of output_size and output_ratio may be specified");
  if (options.output_ratio())
    for (size_t k = 0; k < D; ++k)
      EMBER_CHECK(0 < (*options.output_ratio())[k] && (*options.output_ratio())[k] < 1, name.c_str(),
                  "output_ratio must be between 0 and 1 (got ", *(*options.output_ratio()), ")");
}
template <size_t D>
Tensor FractionalMaxPoolImpl<D>::forward(const Tensor& input) {
  return std::get<0>(forward_with_indices(input));
}
template <size_t D>
std::tuple<Tensor, Tensor> FractionalMaxPoolImpl<D>::forward_with_indices(const Tensor& input) {
  FractionalMaxPoolOptions<D> o = options;
  o._random_samples(_random_samples);
  if constexpr (D == 2) return functional::fractional_max_pool2d_with_indices(input, o);
  else return functional::fractional_max_pool3d_with_indices(input, o);
}
template <size_t D>
void FractionalMaxPoolImpl<D>::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::FractionalMaxPool" << D << "d()";
}
template class FractionalMaxPoolImpl<2>;
template class FractionalMaxPoolImpl<3>;

template class MaxPoolImpl<1>;
template class MaxPoolImpl<2>;
template class MaxPoolImpl<3>;
template class AvgPoolImpl<1>;
template class AvgPoolImpl<2>;
template class AvgPoolImpl<3>;
template class AdaptiveAvgPoolImpl<1, ExpandingArray<1>>;
template class AdaptiveAvgPoolImpl<2, ExpandingArrayWithOptionalElem<2>>;
template class AdaptiveAvgPoolImpl<3, ExpandingArrayWithOptionalElem<3>>;
template class AdaptiveMaxPoolImpl<1, ExpandingArray<1>>;
template class AdaptiveMaxPoolImpl<2, ExpandingArrayWithOptionalElem<2>>;
template class AdaptiveMaxPoolImpl<3, ExpandingArrayWithOptionalElem<3>>;
template class LPPoolImpl<1>;
template class LPPoolImpl<2>;

}  // namespace ember::nn
