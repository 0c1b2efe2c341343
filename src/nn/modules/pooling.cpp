#include "ember/nn/modules/pooling.h"

#include "ember/nn_ops.h"

namespace ember::nn {
namespace functional {

Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return max_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& o) {
  return avg_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad(),
                    o.divisor_override());
}
Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& o) {
  EMBER_CHECK(input.dim() >= 2, "adaptive_avg_pool2d", "expected 3D or 4D input, got ", input.sizes());
  int64_t size[2];
  for (int i = 0; i < 2; ++i) size[i] = o.output_size()[i].value_or(input.size(input.dim() - 2 + i));
  return adaptive_avg_pool2d(input, IntArrayRef(size, 2));
}

}  // namespace functional

Tensor MaxPool2dImpl::forward(const Tensor& input) { return functional::max_pool2d(input, options); }
std::tuple<Tensor, Tensor> MaxPool2dImpl::forward_with_indices(const Tensor& input) {
  return functional::max_pool2d_with_indices(input, options.kernel_size(), options.stride(), options.padding(),
                                             options.dilation(), options.ceil_mode());
}
void MaxPool2dImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "torch::nn::MaxPool2d(kernel_size=" << options.kernel_size()
         << ", stride=" << options.stride() << ", padding=" << options.padding()
         << ", dilation=" << options.dilation() << ", ceil_mode=" << options.ceil_mode() << ")";
}

Tensor AvgPool2dImpl::forward(const Tensor& input) { return functional::avg_pool2d(input, options); }
void AvgPool2dImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::AvgPool2d(kernel_size=" << options.kernel_size() << ", stride=" << options.stride()
         << ", padding=" << options.padding() << ")";
}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& input) { return functional::adaptive_avg_pool2d(input, options); }
void AdaptiveAvgPool2dImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::AdaptiveAvgPool2d(output_size=" << options.output_size() << ")";
}

}  // namespace ember::nn
