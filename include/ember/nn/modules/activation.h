// Activation modules (ReLU ... LogSoftmax) with their functional forms taking libtorch's
// FuncOptions, and MultiheadAttention.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "ember/nn/functional/activation.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/options.h"
#include "ember/nn/options/activation.h"
#include "ember/nn/pimpl.h"

namespace ember::nn {

// inplace(true): the op writes into its input and returns it, as libtorch's.
struct ReLUOptions {
  ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  EMBER_ARG(bool, inplace);
};
using ReLU6Options = ReLUOptions;
struct LeakyReLUOptions {
  EMBER_ARG(double, negative_slope) = 1e-2;
  EMBER_ARG(bool, inplace) = false;
};
struct GELUOptions {
  EMBER_ARG(std::string, approximate) = "none";  // or "tanh"
};
struct ELUOptions {
  EMBER_ARG(double, alpha) = 1.0;
  EMBER_ARG(bool, inplace) = false;
};
struct SoftplusOptions {
  EMBER_ARG(double, beta) = 1.0;
  EMBER_ARG(double, threshold) = 20.0;
};
struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  EMBER_ARG(int64_t, dim);
};
using LogSoftmaxOptions = SoftmaxOptions;

namespace functional {
using ReLUFuncOptions = ReLUOptions;
using ReLU6FuncOptions = ReLU6Options;
using LeakyReLUFuncOptions = LeakyReLUOptions;
using GELUFuncOptions = GELUOptions;
using ELUFuncOptions = ELUOptions;
using SoftplusFuncOptions = SoftplusOptions;
struct SoftmaxFuncOptions {
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  EMBER_ARG(int64_t, dim);
  EMBER_ARG(std::optional<ScalarType>, dtype) = std::nullopt;
};
using LogSoftmaxFuncOptions = SoftmaxFuncOptions;

Tensor relu(const Tensor& input, const ReLUFuncOptions& options = {});
Tensor relu6(const Tensor& input, const ReLU6FuncOptions& options = {});
Tensor leaky_relu(const Tensor& input, const LeakyReLUFuncOptions& options = {});
Tensor gelu(const Tensor& input, const GELUFuncOptions& options = {});
Tensor silu(const Tensor& input);
Tensor hardswish(const Tensor& input);
Tensor hardsigmoid(const Tensor& input);
Tensor elu(const Tensor& input, const ELUFuncOptions& options = {});
Tensor softplus(const Tensor& input, const SoftplusFuncOptions& options = {});
Tensor sigmoid(const Tensor& input);
Tensor tanh(const Tensor& input);
Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options);
Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options);
}  // namespace functional

// An activation module: Options (void: none), its functional form and its printed name.
#define EMBER_ACTIVATION_MODULE(Name)                                         \
  class Name##Impl : public Module {                                          \
   public:                                                                    \
    Tensor forward(const Tensor& input);                                      \
    void pretty_print(std::ostream& stream) const override;                   \
  };                                                                          \
  EMBER_MODULE(Name);
#define EMBER_ACTIVATION_MODULE_OPTIONS(Name, Options)                        \
  class Name##Impl : public Module {                                          \
   public:                                                                    \
    explicit Name##Impl(const Options& options = {}) : options(options) {}   \
    Tensor forward(const Tensor& input);                                      \
    void pretty_print(std::ostream& stream) const override;                   \
    Options options;                                                          \
  };                                                                          \
  EMBER_MODULE(Name);

EMBER_ACTIVATION_MODULE_OPTIONS(ReLU, ReLUOptions)
EMBER_ACTIVATION_MODULE_OPTIONS(ReLU6, ReLU6Options)
EMBER_ACTIVATION_MODULE_OPTIONS(LeakyReLU, LeakyReLUOptions)
EMBER_ACTIVATION_MODULE_OPTIONS(GELU, GELUOptions)
EMBER_ACTIVATION_MODULE(SiLU)
// Eager static quantization (quantization::prepare and convert, as PyTorch's mapping): prepare
// sets the observer of the output (a submodule, named as PyTorch's), which forward then runs;
// convert replaces it by nn::quantized::Hardswish with the observed qparams.
class HardswishImpl : public Module {
 public:
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  std::shared_ptr<quantization::ObserverOrFakeQuantize> activation_post_process;
  std::shared_ptr<quantized::HardswishImpl> static_quantized;
};
EMBER_MODULE(Hardswish);
// In training mode (quantization-aware training) prepare gives it PyTorch's fixed-qparams fake
// quantizer (scale 1/256, zero point 0: the quantized op's output parameters), so training sees
// what the int8 model computes; convert drops it (hardsigmoid takes quantized tensors).
class HardsigmoidImpl : public Module {
 public:
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  std::shared_ptr<quantization::ObserverOrFakeQuantize> activation_post_process;
};
EMBER_MODULE(Hardsigmoid);
EMBER_ACTIVATION_MODULE_OPTIONS(ELU, ELUOptions)
EMBER_ACTIVATION_MODULE_OPTIONS(Softplus, SoftplusOptions)
EMBER_ACTIVATION_MODULE(Sigmoid)
EMBER_ACTIVATION_MODULE(Tanh)
EMBER_ACTIVATION_MODULE_OPTIONS(SELU, SELUOptions)
EMBER_ACTIVATION_MODULE_OPTIONS(GLU, GLUOptions)
EMBER_ACTIVATION_MODULE_OPTIONS(Hardshrink, HardshrinkOptions)
EMBER_ACTIVATION_MODULE_OPTIONS(Softshrink, SoftshrinkOptions)
EMBER_ACTIVATION_MODULE_OPTIONS(Hardtanh, HardtanhOptions)
EMBER_ACTIVATION_MODULE_OPTIONS(CELU, CELUOptions)
EMBER_ACTIVATION_MODULE_OPTIONS(RReLU, RReLUOptions)
EMBER_ACTIVATION_MODULE(LogSigmoid)
EMBER_ACTIVATION_MODULE(Softsign)
EMBER_ACTIVATION_MODULE(Tanhshrink)
EMBER_ACTIVATION_MODULE(Mish)
// Softmax over the channels (dim -3) of a (C, H, W) or (N, C, H, W) input.
EMBER_ACTIVATION_MODULE(Softmax2d)
#undef EMBER_ACTIVATION_MODULE
#undef EMBER_ACTIVATION_MODULE_OPTIONS

class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(int64_t dim) : options(dim) {}
  explicit SoftmaxImpl(const SoftmaxOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  SoftmaxOptions options;
};
EMBER_MODULE(Softmax);
class LogSoftmaxImpl : public Module {
 public:
  explicit LogSoftmaxImpl(int64_t dim) : options(dim) {}
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  LogSoftmaxOptions options;
};
EMBER_MODULE(LogSoftmax);
class SoftminImpl : public Module {
 public:
  explicit SoftminImpl(int64_t dim) : options(dim) {}
  explicit SoftminImpl(const SoftminOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  SoftminOptions options;
};
EMBER_MODULE(Softmin);
class ThresholdImpl : public Module {
 public:
  ThresholdImpl(double threshold, double value) : options(threshold, value) {}
  explicit ThresholdImpl(const ThresholdOptions& options) : options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  ThresholdOptions options;
};
EMBER_MODULE(Threshold);

// Parameter weight (num_parameters), filled with init.
class PReLUImpl : public Module {
 public:
  explicit PReLUImpl(const PReLUOptions& options = {});
  void reset();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& stream) const override;
  PReLUOptions options;
  Tensor weight;
};
EMBER_MODULE(PReLU);

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}
  EMBER_ARG(int64_t, embed_dim);
  EMBER_ARG(int64_t, num_heads);
  EMBER_ARG(double, dropout) = 0.0;
  EMBER_ARG(bool, bias) = true;
  // learned (1, 1, E) biases appended to the key and value sequences
  EMBER_ARG(bool, add_bias_kv) = false;
  // a zero key and value appended to the sequences (after any bias_k/bias_v)
  EMBER_ARG(bool, add_zero_attn) = false;
  // features of key and value (embed_dim by default); other than embed_dim, the projections are
  // three weights q_proj_weight (E, E), k_proj_weight (E, kdim), v_proj_weight (E, vdim). As in
  // libtorch, forward wants key and value of the same shape, so kdim == vdim in practice.
  EMBER_ARG(int64_t, kdim);
  EMBER_ARG(int64_t, vdim);
};

// Attention over (L, N, E) query and (S, N, E) key/value (sequence first, as libtorch 1.13).
// Parameters in_proj_weight (3E, E) and in_proj_bias (3E) (xavier_uniform_ / zeros), out_proj a
// Linear(E, E) with zero bias. forward returns (output (L, N, E), attention weights (N, L, S),
// averaged over heads, or (N, H, L, S) when !average_attn_weights; undefined when !need_weights).
// attn_mask (L, S) or (N * H, L, S): bool (true = masked out) or added to the scores;
// key_padding_mask (N, S) bool, true = ignore that key.
class MultiheadAttentionImpl : public Module {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  void reset();
  void reset_parameters();
  void _reset_parameters() { reset_parameters(); }  // libtorch's name
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true);
  void pretty_print(std::ostream& stream) const override;

  MultiheadAttentionOptions options;
  bool _qkv_same_embed_dim = true;  // kdim == vdim == embed_dim: one in_proj_weight (3E, E)
  Tensor in_proj_weight;
  Tensor in_proj_bias;
  Tensor bias_k;
  Tensor bias_v;
  Linear out_proj{nullptr};
  Tensor q_proj_weight;
  Tensor k_proj_weight;
  Tensor v_proj_weight;
  int64_t head_dim = 0;
};
EMBER_MODULE(MultiheadAttention);

}  // namespace ember::nn
