// Linear, Bilinear, Identity, Flatten, Unflatten.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "ember/nn/options.h"
#include "ember/nn/pimpl.h"

namespace ember::quantization {
class ObserverOrFakeQuantize;
}
namespace ember::nn {
namespace quantized {
class LinearImpl;
class HardswishImpl;
namespace dynamic {
class LinearImpl;
}
}  // namespace quantized

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  EMBER_ARG(int64_t, in_features);
  EMBER_ARG(int64_t, out_features);
  EMBER_ARG(bool, bias) = true;
};

// y = x W^T + b; W (out, in) and b start as PyTorch's: kaiming_uniform_(a = sqrt(5)) and
// uniform(-1/sqrt(in), 1/sqrt(in)).
class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features) : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options);
  void reset();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;

  LinearOptions options;
  Tensor weight;
  Tensor bias;
  // Set by quantization::quantize_dynamic: forward then runs this int8 module, made from weight
  // and bias (ember/nn/quantized.h), so that every holder of this Linear gets the quantized one.
  std::shared_ptr<quantized::dynamic::LinearImpl> dynamic_quantized;
  // Static quantization (quantization::prepare and convert): prepare sets the observer of the
  // output (a submodule, named as PyTorch's), which forward then runs; convert replaces it by the
  // int8 module forward then runs instead (quint8 in and out).
  std::shared_ptr<quantization::ObserverOrFakeQuantize> activation_post_process;
  std::shared_ptr<quantized::LinearImpl> static_quantized;
  // Quantization-aware training (quantization::prepare_qat, fx::prepare_qat_fx): the fake quantizer
  // of the weight (a submodule, named as PyTorch's QAT Linear's), which forward applies to the
  // weight; convert quantizes the weight with the qparams it last chose.
  std::shared_ptr<quantization::ObserverOrFakeQuantize> weight_fake_quant;
};
EMBER_MODULE(Linear);

struct BilinearOptions {
  BilinearOptions(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : in1_features_(in1_features), in2_features_(in2_features), out_features_(out_features) {}
  EMBER_ARG(int64_t, in1_features);
  EMBER_ARG(int64_t, in2_features);
  EMBER_ARG(int64_t, out_features);
  EMBER_ARG(bool, bias) = true;
};

// y_k = x1^T W_k x2 + b_k; W (out, in1, in2).
class BilinearImpl : public Module {
 public:
  BilinearImpl(int64_t in1, int64_t in2, int64_t out) : BilinearImpl(BilinearOptions(in1, in2, out)) {}
  explicit BilinearImpl(const BilinearOptions& options);
  void reset();
  void reset_parameters();
  Tensor forward(const Tensor& input1, const Tensor& input2);
  void pretty_print(std::ostream& stream) const override;

  BilinearOptions options;
  Tensor weight;
  Tensor bias;
};
EMBER_MODULE(Bilinear);

class IdentityImpl : public Module {
 public:
  Tensor forward(const Tensor& input) { return input; }
  void pretty_print(std::ostream& stream) const override;
};
EMBER_MODULE(Identity);

struct FlattenOptions {
  EMBER_ARG(int64_t, start_dim) = 1;
  EMBER_ARG(int64_t, end_dim) = -1;
};
class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  FlattenOptions options;
};
EMBER_MODULE(Flatten);

// A dim split into sizes, or (libtorch's named form) a dim name split into named sizes. Ember's
// tensors carry no dim names, so the named form is refused by forward as libtorch refuses it on
// an unnamed tensor ("Name 'B' not found in Tensor[None, None].").
struct UnflattenOptions {
  using namedshape_t = std::vector<std::pair<std::string, int64_t>>;
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  UnflattenOptions(const char* dimname, namedshape_t namedshape)
      : UnflattenOptions(std::string(dimname), std::move(namedshape)) {}
  UnflattenOptions(std::string dimname, namedshape_t namedshape)
      : dim_(0), dimname_(std::move(dimname)), namedshape_(std::move(namedshape)) {}
  EMBER_ARG(int64_t, dim);
  EMBER_ARG(std::string, dimname);
  EMBER_ARG(std::vector<int64_t>, sizes);
  EMBER_ARG(namedshape_t, namedshape);
};
class UnflattenImpl : public Module {
 public:
  UnflattenImpl(int64_t dim, std::vector<int64_t> sizes) : UnflattenImpl(UnflattenOptions(dim, std::move(sizes))) {}
  UnflattenImpl(std::string dimname, UnflattenOptions::namedshape_t namedshape)
      : UnflattenImpl(UnflattenOptions(std::move(dimname), std::move(namedshape))) {}
  explicit UnflattenImpl(UnflattenOptions options) : options(std::move(options)) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  UnflattenOptions options;
};
EMBER_MODULE(Unflatten);

}  // namespace ember::nn
