#include "ember/nn/modules/transformer.h"

#include "ember/pointwise.h"

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

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask) {
  Tensor attended =
      std::get<0>(self_attn->forward(src, src, src, src_key_padding_mask, /*need_weights=*/false, src_mask));
  Tensor x = norm1->forward(src + dropout1->forward(attended));
  Tensor hidden = linear1->forward(x);
  hidden = std::visit(
      [&](const auto& act) -> Tensor {
        using A = std::decay_t<decltype(act)>;
        if constexpr (std::is_same_v<A, enumtype::kReLU>) {
          return ember::relu(hidden);
        } else if constexpr (std::is_same_v<A, enumtype::kGELU>) {
          return ember::gelu(hidden);
        } else {
          return act(hidden);
        }
      },
      options.activation());
  Tensor ff = linear2->forward(dropout->forward(hidden));
  return norm2->forward(x + dropout2->forward(ff));
}

void TransformerEncoderLayerImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::TransformerEncoderLayerImpl";  // libtorch prints its class name
}

}  // namespace ember::nn
