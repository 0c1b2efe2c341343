#include "ember/nn/modules/transformer.h"

#include <cmath>
#include <limits>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/nn/init.h"
#include "ember/pointwise.h"
#include "ember/shape.h"

namespace ember::nn {

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(TransformerEncoderLayerOptions options)
    : options(std::move(options)) {
  reset();
}

void TransformerEncoderLayerImpl::reset() {
  const int64_t d = options.d_model();
  // Registration order is libtorch's, so named_parameters() lists the same keys in the same order.
  self_attn = register_module(
      "self_attn", MultiheadAttention(MultiheadAttentionOptions(d, options.nhead()).dropout(options.dropout())));
  linear1 = register_module("linear1", Linear(d, options.dim_feedforward()));
  dropout = register_module("dropout", Dropout(options.dropout()));
  linear2 = register_module("linear2", Linear(options.dim_feedforward(), d));
  norm1 = register_module("norm1", LayerNorm(LayerNormOptions({d})));
  norm2 = register_module("norm2", LayerNorm(LayerNormOptions({d})));
  dropout1 = register_module("dropout1", Dropout(options.dropout()));
  dropout2 = register_module("dropout2", Dropout(options.dropout()));
}

void TransformerEncoderLayerImpl::reset_parameters() {
  self_attn->reset_parameters();
  linear1->reset_parameters();
  linear2->reset_parameters();
  norm1->reset_parameters();
  norm2->reset_parameters();
}

namespace {
Tensor activate(const activation_t& activation, const Tensor& x) {
  return std::visit(
      [&](const auto& act) -> Tensor {
        using A = std::decay_t<decltype(act)>;
        if constexpr (std::is_same_v<A, enumtype::kReLU>) {
          return ember::relu(x);
        } else if constexpr (std::is_same_v<A, enumtype::kGELU>) {
          return ember::gelu(x);
        } else {
          return act(x);
        }
      },
      activation);
}

// A copy of `source` with its own tensors holding the same values (libtorch's clone()).
template <class Holder, class Options>
Holder copy_of(const Holder& source, const Options& options) {
  Holder copy(options);
  NoGradGuard no_grad;
  const auto from = source->named_parameters();
  for (const auto& p : copy->named_parameters()) Tensor(p.value()).copy_(from[p.key()]);
  const auto from_buffers = source->named_buffers();
  for (const auto& b : copy->named_buffers()) Tensor(b.value()).copy_(from_buffers[b.key()]);
  return copy;
}
}  // namespace

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask) {
  Tensor attended =
      std::get<0>(self_attn->forward(src, src, src, src_key_padding_mask, /*need_weights=*/false, src_mask));
  Tensor x = norm1->forward(src + dropout1->forward(attended));
  Tensor ff = linear2->forward(dropout->forward(activate(options.activation(), linear1->forward(x))));
  return norm2->forward(x + dropout2->forward(ff));
}

void TransformerEncoderLayerImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::TransformerEncoderLayerImpl";  // libtorch prints its class name
}

}  // namespace ember::nn

namespace ember::nn {

// ---- TransformerDecoderLayer ------------------------------------------------------------------------
TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(TransformerDecoderLayerOptions options)
    : options(std::move(options)) {
  reset();
}

void TransformerDecoderLayerImpl::reset() {
  const int64_t d = options.d_model();
  auto attention = [&] {
    return MultiheadAttention(MultiheadAttentionOptions(d, options.nhead()).dropout(options.dropout()));
  };
  // libtorch's registration order (named_parameters and printing follow it)
  self_attn = register_module("self_attn", attention());
  multihead_attn = register_module("multihead_attn", attention());
  linear1 = register_module("linear1", Linear(d, options.dim_feedforward()));
  dropout = register_module("dropout", Dropout(options.dropout()));
  linear2 = register_module("linear2", Linear(options.dim_feedforward(), d));
  norm1 = register_module("norm1", LayerNorm(LayerNormOptions({d})));
  norm2 = register_module("norm2", LayerNorm(LayerNormOptions({d})));
  norm3 = register_module("norm3", LayerNorm(LayerNormOptions({d})));
  dropout1 = register_module("dropout1", Dropout(options.dropout()));
  dropout2 = register_module("dropout2", Dropout(options.dropout()));
  dropout3 = register_module("dropout3", Dropout(options.dropout()));
}

void TransformerDecoderLayerImpl::reset_parameters() {
  self_attn->reset_parameters();
  norm1->reset_parameters();
  multihead_attn->reset_parameters();
  norm2->reset_parameters();
  linear1->reset_parameters();
  linear2->reset_parameters();
  norm3->reset_parameters();
}

Tensor TransformerDecoderLayerImpl::forward(Tensor tgt, const Tensor& memory, const Tensor& tgt_mask,
                                            const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                            const Tensor& memory_key_padding_mask) {
  Tensor t = std::get<0>(self_attn->forward(tgt, tgt, tgt, tgt_key_padding_mask, /*need_weights=*/false, tgt_mask));
  tgt = norm1->forward(tgt + dropout1->forward(t));
  t = std::get<0>(
      multihead_attn->forward(tgt, memory, memory, memory_key_padding_mask, /*need_weights=*/false, memory_mask));
  tgt = norm2->forward(tgt + dropout2->forward(t));
  t = linear2->forward(dropout->forward(activate(options.activation(), linear1->forward(tgt))));
  return norm3->forward(tgt + dropout3->forward(t));
}

void TransformerDecoderLayerImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::TransformerDecoderLayerImpl";
}

// ---- TransformerEncoder / TransformerDecoder --------------------------------------------------------
TransformerEncoderImpl::TransformerEncoderImpl(TransformerEncoderOptions options) : options(std::move(options)) {
  reset();
}

void TransformerEncoderImpl::reset() {
  EMBER_CHECK(!options.encoder_layer().is_empty(), "TransformerEncoder", "encoder_layer is not set");
  layers = register_module("layers", ModuleList());
  for (int64_t i = 0; i < options.num_layers(); ++i)
    layers->push_back(copy_of(options.encoder_layer(), options.encoder_layer()->options));
  norm = options.norm();
  if (!norm.is_empty()) register_module("norm", norm.ptr());
}

void TransformerEncoderImpl::reset_parameters() {
  for (const auto& layer : *layers) std::static_pointer_cast<TransformerEncoderLayerImpl>(layer)->reset_parameters();
  if (!norm.is_empty()) norm.ptr<LayerNormImpl>()->reset_parameters();
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask) {
  Tensor x = src;
  for (size_t i = 0; i < layers->size(); ++i)
    x = layers->at<TransformerEncoderLayerImpl>(i).forward(x, src_mask, src_key_padding_mask);
  return norm.is_empty() ? x : norm.forward(x);
}

void TransformerEncoderImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::TransformerEncoderImpl";
}

TransformerDecoderImpl::TransformerDecoderImpl(TransformerDecoderOptions options) : options(std::move(options)) {
  reset();
}

void TransformerDecoderImpl::reset() {
  EMBER_CHECK(!options.decoder_layer().is_empty(), "TransformerDecoder", "decoder_layer is not set");
  layers = register_module("layers", ModuleList());
  for (int64_t i = 0; i < options.num_layers(); ++i)
    layers->push_back(copy_of(options.decoder_layer(), options.decoder_layer()->options));
  norm = options.norm();
  if (!norm.is_empty()) register_module("norm", norm.ptr());
}

void TransformerDecoderImpl::reset_parameters() {
  for (const auto& layer : *layers) std::static_pointer_cast<TransformerDecoderLayerImpl>(layer)->reset_parameters();
  if (!norm.is_empty()) norm.ptr<LayerNormImpl>()->reset_parameters();
}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                       const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                       const Tensor& memory_key_padding_mask) {
  Tensor x = tgt;
  for (size_t i = 0; i < layers->size(); ++i)
    x = layers->at<TransformerDecoderLayerImpl>(i).forward(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                                                           memory_key_padding_mask);
  return norm.is_empty() ? x : norm.forward(x);
}

void TransformerDecoderImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::TransformerDecoderImpl";
}

// ---- Transformer ------------------------------------------------------------------------------------
TransformerImpl::TransformerImpl(TransformerOptions options) : options(std::move(options)) { reset(); }

void TransformerImpl::reset() {
  const TransformerOptions& o = options;
  if (o.custom_encoder().is_empty()) {
    encoder = AnyModule(TransformerEncoder(
        TransformerEncoderOptions(TransformerEncoderLayerOptions(o.d_model(), o.nhead())
                                      .dim_feedforward(o.dim_feedforward())
                                      .dropout(o.dropout())
                                      .activation(o.activation()),
                                  o.num_encoder_layers())
            .norm(AnyModule(LayerNorm(LayerNormOptions({o.d_model()}))))));
  } else {
    encoder = o.custom_encoder();
    encoder.ptr<TransformerEncoderImpl>();  // Ember runs a TransformerEncoder here (checked now)
  }
  if (o.custom_decoder().is_empty()) {
    decoder = AnyModule(TransformerDecoder(
        TransformerDecoderOptions(TransformerDecoderLayerOptions(o.d_model(), o.nhead())
                                      .dim_feedforward(o.dim_feedforward())
                                      .dropout(o.dropout())
                                      .activation(o.activation()),
                                  o.num_decoder_layers())
            .norm(AnyModule(LayerNorm(LayerNormOptions({o.d_model()}))))));
  } else {
    decoder = o.custom_decoder();
    decoder.ptr<TransformerDecoderImpl>();
  }
  register_module("encoder", encoder.ptr());
  register_module("decoder", decoder.ptr());
  reset_parameters();
}

void TransformerImpl::reset_parameters() {
  for (Tensor& p : parameters())
    if (p.dim() > 1) init::xavier_uniform_(p);
}

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask, const Tensor& tgt_mask,
                                const Tensor& memory_mask, const Tensor& src_key_padding_mask,
                                const Tensor& tgt_key_padding_mask, const Tensor& memory_key_padding_mask) {
  constexpr const char* op = "Transformer";
  EMBER_CHECK(src.dim() == 3 && tgt.dim() == 3, op, "src and tgt should have 3 dimensions, but got ", src.sizes(),
              " and ", tgt.sizes());
  EMBER_CHECK(src.size(1) == tgt.size(1), op, "src and tgt should have equal batch size (at dim 1), but got ",
              src.size(1), " and ", tgt.size(1));
  EMBER_CHECK(src.size(2) == options.d_model() && tgt.size(2) == options.d_model(), op,
              "src and tgt should have same feature size as d_model (at dim 2), but got ", src.size(2), " and ",
              tgt.size(2), " while d_model is ", options.d_model());
  const Tensor memory = encoder.ptr<TransformerEncoderImpl>()->forward(src, src_mask, src_key_padding_mask);
  return decoder.ptr<TransformerDecoderImpl>()->forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                                                         memory_key_padding_mask);
}

Tensor TransformerImpl::generate_square_subsequent_mask(int64_t sz) {
  EMBER_CHECK(sz >= 0, "Transformer::generate_square_subsequent_mask", "Input size must be non-negative, got ", sz);
  return triu(full({sz, sz}, -std::numeric_limits<float>::infinity()), 1);
}

void TransformerImpl::pretty_print(std::ostream& stream) const { stream << "torch::nn::TransformerImpl"; }

}  // namespace ember::nn
