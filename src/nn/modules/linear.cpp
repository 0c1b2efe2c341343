#include "ember/nn/modules/linear.h"

#include "nn/common.h"

#include <cmath>
#include <sstream>

#include "ember/factory.h"
#include "ember/linalg.h"
#include "ember/nn/functional/linear.h"
#include "ember/nn/init.h"
#include "ember/nn/quantized.h"
#include "ember/quantization.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"

namespace ember::nn {

// Shared by Linear and Conv: PyTorch's default init of a weight and its bias.
void reset_weight_and_bias(Tensor& weight, Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (!bias.defined()) return;
  auto [fan_in, fan_out] = init::_calculate_fan_in_and_fan_out(weight);
  const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  init::uniform_(bias, -bound, bound);
}

LinearImpl::LinearImpl(const LinearOptions& options) : options(options) { reset(); }

void LinearImpl::reset() {
  EMBER_CHECK(options.in_features() >= 0 && options.out_features() >= 0, "Linear",
              "in_features and out_features must be non-negative, got ", options.in_features(), " and ",
              options.out_features());
  weight = register_parameter("weight", empty({options.out_features(), options.in_features()}));
  bias = register_parameter("bias", options.bias() ? empty({options.out_features()}) : Tensor(), options.bias());
  reset_parameters();
}

void LinearImpl::reset_parameters() { reset_weight_and_bias(weight, bias); }

Tensor LinearImpl::forward(const Tensor& input) {
  if (dynamic_quantized) return dynamic_quantized->forward(input);
  if (static_quantized) return static_quantized->forward(input);
  Tensor y = functional::linear(input, weight_fake_quant ? weight_fake_quant->forward(weight) : weight, bias);
  if (activation_post_process) y = activation_post_process->forward(y);
  return y;
}

void LinearImpl::pretty_print(std::ostream& stream) const {
  if (dynamic_quantized) return dynamic_quantized->pretty_print(stream);
  if (static_quantized) return static_quantized->pretty_print(stream);
  stream << std::boolalpha << "torch::nn::Linear(in_features=" << options.in_features()
         << ", out_features=" << options.out_features() << ", bias=" << options.bias() << ")";
}

BilinearImpl::BilinearImpl(const BilinearOptions& options) : options(options) { reset(); }

void BilinearImpl::reset() {
  weight = register_parameter(
      "weight", empty({options.out_features(), options.in1_features(), options.in2_features()}));
  bias = register_parameter("bias", options.bias() ? empty({options.out_features()}) : Tensor(), options.bias());
  reset_parameters();
}

void BilinearImpl::reset_parameters() {
  const double bound = 1.0 / std::sqrt(static_cast<double>(weight.size(1)));
  init::uniform_(weight, -bound, bound);
  if (bias.defined()) init::uniform_(bias, -bound, bound);
}

Tensor BilinearImpl::forward(const Tensor& input1, const Tensor& input2) {
  return functional::bilinear(input1, input2, weight, bias);
}

namespace functional {
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const Tensor& bias) {
  EMBER_CHECK(input1.defined() && input2.defined() && weight.defined() && weight.dim() == 3, "bilinear",
              "expected defined inputs and a 3-D weight, got weight ", weight.defined() ? weight.sizes() : IntArrayRef());
  const int64_t out = weight.size(0), in1 = weight.size(1), in2 = weight.size(2);
  EMBER_CHECK(input1.dim() >= 1 && input1.dim() == input2.dim(), "bilinear",
              "input1 and input2 must have the same number of dimensions, got ", input1.sizes(), " and ",
              input2.sizes());
  EMBER_CHECK(input1.size(-1) == in1, "bilinear", "input1 size does not match weight size: got ", input1.size(-1),
              " but expected ", in1);
  EMBER_CHECK(input2.size(-1) == in2, "bilinear", "input2 size does not match weight size: got ", input2.size(-1),
              " but expected ", in2);
  DimVector lead(IntArrayRef(input1.sizes().data(), static_cast<size_t>(input1.dim() - 1)));
  const Tensor x1 = input1.reshape({-1, in1}), x2 = input2.reshape({-1, in2});
  EMBER_CHECK(x1.size(0) == x2.size(0), "bilinear", "input1 and input2 must have the same batch size, got ",
              input1.sizes(), " and ", input2.sizes());
  // (x1 @ W viewed as (in1, out * in2)) pairs every output's matrix with x1; then dot with x2.
  const Tensor w = weight.permute({1, 0, 2}).reshape({in1, out * in2});
  Tensor y = (matmul(x1, w).view({-1, out, in2}) * x2.unsqueeze(1)).sum({2});
  if (bias.defined()) y = y + bias;
  lead.push_back(out);
  return y.view(lead);
}
}  // namespace functional

void BilinearImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "torch::nn::Bilinear(in1_features=" << options.in1_features()
         << ", in2_features=" << options.in2_features() << ", out_features=" << options.out_features()
         << ", bias=" << options.bias() << ")";
}

void IdentityImpl::pretty_print(std::ostream& stream) const { stream << "torch::nn::Identity()"; }

Tensor FlattenImpl::forward(const Tensor& input) { return input.flatten(options.start_dim(), options.end_dim()); }
void FlattenImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::Flatten(start_dim=" << options.start_dim() << ", end_dim=" << options.end_dim() << ")";
}

Tensor UnflattenImpl::forward(const Tensor& input) {
  if (!options.namedshape().empty()) {
    // libtorch looks the name up among the input's dim names, which Ember's tensors never have
    std::ostringstream dims;
    for (int64_t i = 0; i < input.dim(); ++i) dims << (i ? ", " : "") << "None";
    EMBER_CHECK(false, "Unflatten", "Name '", options.dimname(), "' not found in Tensor[", dims.str(), "].");
  }
  return input.unflatten(options.dim(), options.sizes());
}
void UnflattenImpl::pretty_print(std::ostream& stream) const {
  if (const auto& named = options.namedshape(); !named.empty()) {
    stream << "torch::nn::Unflatten(dim=\"" << options.dimname() << "\", unflattened_size={";
    for (size_t i = 0; i < named.size(); ++i) {
      stream << (i ? ", " : "") << "{\"" << named[i].first << "\", " << named[i].second << "}";
    }
    stream << "})";
    return;
  }
  stream << "torch::nn::Unflatten(dim=" << options.dim() << ", unflattened_size={";
  const auto& s = options.sizes();
  for (size_t i = 0; i < s.size(); ++i) stream << (i ? ", " : "") << s[i];
  stream << "})";
}

}  // namespace ember::nn
