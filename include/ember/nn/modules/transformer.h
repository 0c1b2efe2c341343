// The Transformer family as libtorch 1.13's (post-norm, sequence first): TransformerEncoderLayer
// (self-attention then a feed-forward block, each added to its input and layer-normalized),
// TransformerDecoderLayer (self-attention, attention over the encoder's memory, feed-forward),
// TransformerEncoder/Decoder (num_layers copies of a layer, then an optional norm) and
// Transformer (an encoder and a decoder).
#pragma once
#include <functional>
#include <variant>

#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/dropout.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/normalization.h"

namespace ember::nn {

using activation_t = std::variant<enumtype::kReLU, enumtype::kGELU, std::function<Tensor(const Tensor&)>>;

struct TransformerEncoderLayerOptions {
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  EMBER_ARG(int64_t, d_model);
  EMBER_ARG(int64_t, nhead);
  EMBER_ARG(int64_t, dim_feedforward) = 2048;
  EMBER_ARG(double, dropout) = 0.1;
  EMBER_ARG(activation_t, activation) = kReLU;
};

class TransformerEncoderLayerImpl : public Module {
 public:
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  explicit TransformerEncoderLayerImpl(TransformerEncoderLayerOptions options);
  void reset();
  void reset_parameters();
  // src (S, N, E); masks as MultiheadAttention's attn_mask and key_padding_mask.
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {});
  void pretty_print(std::ostream& stream) const override;

  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  Linear linear1{nullptr};
  Dropout dropout{nullptr};
  Linear linear2{nullptr};
  LayerNorm norm1{nullptr};
  LayerNorm norm2{nullptr};
  Dropout dropout1{nullptr};
  Dropout dropout2{nullptr};
};
EMBER_MODULE(TransformerEncoderLayer);

struct TransformerDecoderLayerOptions {
  TransformerDecoderLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  EMBER_ARG(int64_t, d_model);
  EMBER_ARG(int64_t, nhead);
  EMBER_ARG(int64_t, dim_feedforward) = 2048;
  EMBER_ARG(double, dropout) = 0.1;
  EMBER_ARG(activation_t, activation) = kReLU;
};

class TransformerDecoderLayerImpl : public Module {
 public:
  TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerDecoderLayerImpl(TransformerDecoderLayerOptions(d_model, nhead)) {}
  explicit TransformerDecoderLayerImpl(TransformerDecoderLayerOptions options);
  void reset();
  void reset_parameters();
  // tgt (T, N, E), memory (S, N, E); masks as MultiheadAttention's.
  Tensor forward(Tensor tgt, const Tensor& memory, const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {});
  void pretty_print(std::ostream& stream) const override;

  TransformerDecoderLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  Dropout dropout1{nullptr};
  LayerNorm norm1{nullptr};
  MultiheadAttention multihead_attn{nullptr};
  Dropout dropout2{nullptr};
  LayerNorm norm2{nullptr};
  Linear linear1{nullptr};
  Dropout dropout{nullptr};
  Linear linear2{nullptr};
  Dropout dropout3{nullptr};
  LayerNorm norm3{nullptr};
};
EMBER_MODULE(TransformerDecoderLayer);

struct TransformerEncoderOptions {
  TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}
  TransformerEncoderOptions(const TransformerEncoderLayerOptions& encoder_layer_options, int64_t num_layers)
      : encoder_layer_(TransformerEncoderLayer(encoder_layer_options)), num_layers_(num_layers) {}
  EMBER_ARG(TransformerEncoderLayer, encoder_layer) = nullptr;
  EMBER_ARG(int64_t, num_layers);
  EMBER_ARG(AnyModule, norm);
};

// num_layers copies of encoder_layer (same initial weights, as libtorch's clones), then norm.
// The norm is the module given (libtorch clones it too).
class TransformerEncoderImpl : public Module {
 public:
  TransformerEncoderImpl(TransformerEncoderLayerOptions encoder_layer_options, int64_t num_layers)
      : TransformerEncoderImpl(TransformerEncoderOptions(encoder_layer_options, num_layers)) {}
  explicit TransformerEncoderImpl(TransformerEncoderOptions options);
  void reset();
  void reset_parameters();
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {});
  void pretty_print(std::ostream& stream) const override;

  TransformerEncoderOptions options;
  ModuleList layers{nullptr};
  AnyModule norm;
};
EMBER_MODULE(TransformerEncoder);

struct TransformerDecoderOptions {
  TransformerDecoderOptions(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : decoder_layer_(std::move(decoder_layer)), num_layers_(num_layers) {}
  TransformerDecoderOptions(const TransformerDecoderLayerOptions& decoder_layer_options, int64_t num_layers)
      : decoder_layer_(TransformerDecoderLayer(decoder_layer_options)), num_layers_(num_layers) {}
  EMBER_ARG(TransformerDecoderLayer, decoder_layer) = nullptr;
  EMBER_ARG(int64_t, num_layers);
  EMBER_ARG(AnyModule, norm);
};

class TransformerDecoderImpl : public Module {
 public:
  TransformerDecoderImpl(TransformerDecoderLayerOptions decoder_layer_options, int64_t num_layers)
      : TransformerDecoderImpl(TransformerDecoderOptions(decoder_layer_options, num_layers)) {}
  explicit TransformerDecoderImpl(TransformerDecoderOptions options);
  void reset();
  void reset_parameters();
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {});
  void pretty_print(std::ostream& stream) const override;

  TransformerDecoderOptions options;
  ModuleList layers{nullptr};
  AnyModule norm;
};
EMBER_MODULE(TransformerDecoder);

struct TransformerOptions {
  TransformerOptions() = default;
  TransformerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  TransformerOptions(int64_t d_model, int64_t nhead, int64_t num_encoder_layers, int64_t num_decoder_layers)
      : d_model_(d_model),
        nhead_(nhead),
        num_encoder_layers_(num_encoder_layers),
        num_decoder_layers_(num_decoder_layers) {}
  EMBER_ARG(int64_t, d_model) = 512;
  EMBER_ARG(int64_t, nhead) = 8;
  EMBER_ARG(int64_t, num_encoder_layers) = 6;
  EMBER_ARG(int64_t, num_decoder_layers) = 6;
  EMBER_ARG(int64_t, dim_feedforward) = 2048;
  EMBER_ARG(double, dropout) = 0.1;
  EMBER_ARG(activation_t, activation) = kReLU;
  // A TransformerEncoder / TransformerDecoder to use instead of the default ones.
  EMBER_ARG(AnyModule, custom_encoder);
  EMBER_ARG(AnyModule, custom_decoder);
};

class TransformerImpl : public Module {
 public:
  explicit TransformerImpl(TransformerOptions options);
  void reset();
  // xavier_uniform_ on every parameter of more than one dimension.
  void reset_parameters();
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = {}, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& src_key_padding_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {});
  // (sz, sz) float: 0 on and below the diagonal, -inf above (a position sees only earlier ones).
  static Tensor generate_square_subsequent_mask(int64_t sz);
  void pretty_print(std::ostream& stream) const override;

  TransformerOptions options;
  AnyModule encoder;
  AnyModule decoder;
};
EMBER_MODULE(Transformer);

}  // namespace ember::nn
