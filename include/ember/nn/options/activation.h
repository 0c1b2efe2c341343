// Options of the activations added beside ReLU ... Softmax (ember/nn/modules/activation.h holds
// those of the first ones). inplace(true): the op writes into its input and returns it, as libtorch's.
#pragma once
#include <optional>
#include <utility>

#include "ember/nn/options.h"
#include "ember/dtype.h"
#include "ember/tensor.h"

namespace ember::nn {

struct SELUOptions {
  SELUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  EMBER_ARG(bool, inplace);
};
struct GLUOptions {
  GLUOptions(int64_t dim = -1) : dim_(dim) {}  // NOLINT
  EMBER_ARG(int64_t, dim);
};
struct HardshrinkOptions {
  HardshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT
  EMBER_ARG(double, lambda);
};
struct SoftshrinkOptions {
  SoftshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT
  EMBER_ARG(double, lambda);
};
struct HardtanhOptions {
  EMBER_ARG(double, min_val) = -1.0;
  EMBER_ARG(double, max_val) = 1.0;
  EMBER_ARG(bool, inplace) = false;
};
struct CELUOptions {
  EMBER_ARG(double, alpha) = 1.0;
  EMBER_ARG(bool, inplace) = false;
};
struct ThresholdOptions {
  ThresholdOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  EMBER_ARG(double, threshold);
  EMBER_ARG(double, value);
  EMBER_ARG(bool, inplace) = false;
};
struct SoftminOptions {
  SoftminOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  EMBER_ARG(int64_t, dim);
};
struct PReLUOptions {
  // 1 (one slope shared) or the number of channels (dim 1 of the input).
  EMBER_ARG(int64_t, num_parameters) = 1;
  EMBER_ARG(double, init) = 0.25;
};
struct RReLUOptions {
  EMBER_ARG(double, lower) = 1.0 / 8.0;
  EMBER_ARG(double, upper) = 1.0 / 3.0;
  EMBER_ARG(bool, inplace) = false;
};

namespace functional {
using SELUFuncOptions = SELUOptions;
using GLUFuncOptions = GLUOptions;
using HardshrinkFuncOptions = HardshrinkOptions;
using SoftshrinkFuncOptions = SoftshrinkOptions;
using HardtanhFuncOptions = HardtanhOptions;
using CELUFuncOptions = CELUOptions;
using ThresholdFuncOptions = ThresholdOptions;
struct SoftminFuncOptions {
  SoftminFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  EMBER_ARG(int64_t, dim);
  EMBER_ARG(std::optional<ScalarType>, dtype) = std::nullopt;
};
struct RReLUFuncOptions {
  EMBER_ARG(double, lower) = 1.0 / 8.0;
  EMBER_ARG(double, upper) = 1.0 / 3.0;
  EMBER_ARG(bool, training) = false;
  EMBER_ARG(bool, inplace) = false;
};
struct GumbelSoftmaxFuncOptions {
  EMBER_ARG(double, tau) = 1.0;
  // One-hot samples whose gradient is the soft sample's (straight-through).
  EMBER_ARG(bool, hard) = false;
  EMBER_ARG(int, dim) = -1;
};
// The arguments of multi_head_attention_forward, as libtorch's: the projections' weights given as
// tensors (in_proj_weight (3E, E) with in_proj_bias (3E), or q/k/v_proj_weight when
// use_separate_proj_weight), optional bias_k/bias_v (1, 1, E) appended to the keys and values,
// add_zero_attn (a zero key and value appended), static_k/static_v (N * H, S, E / H) used as the
// projected keys and values.
struct MultiheadAttentionForwardFuncOptions {
  MultiheadAttentionForwardFuncOptions(int64_t embed_dim_to_check, int64_t num_heads, Tensor in_proj_weight,
                                       Tensor in_proj_bias, Tensor bias_k, Tensor bias_v, bool add_zero_attn,
                                       double dropout_p, Tensor out_proj_weight, Tensor out_proj_bias)
      : embed_dim_to_check_(embed_dim_to_check),
        num_heads_(num_heads),
        in_proj_weight_(std::move(in_proj_weight)),
        in_proj_bias_(std::move(in_proj_bias)),
        bias_k_(std::move(bias_k)),
        bias_v_(std::move(bias_v)),
        add_zero_attn_(add_zero_attn),
        dropout_p_(dropout_p),
        out_proj_weight_(std::move(out_proj_weight)),
        out_proj_bias_(std::move(out_proj_bias)) {}
  EMBER_ARG(int64_t, embed_dim_to_check);
  EMBER_ARG(int64_t, num_heads);
  EMBER_ARG(Tensor, in_proj_weight);
  EMBER_ARG(Tensor, in_proj_bias);
  EMBER_ARG(Tensor, bias_k);
  EMBER_ARG(Tensor, bias_v);
  EMBER_ARG(bool, add_zero_attn);
  EMBER_ARG(double, dropout_p);
  EMBER_ARG(Tensor, out_proj_weight);
  EMBER_ARG(Tensor, out_proj_bias);
  EMBER_ARG(bool, training) = true;
  EMBER_ARG(Tensor, key_padding_mask) = {};
  EMBER_ARG(bool, need_weights) = true;
  EMBER_ARG(Tensor, attn_mask) = {};
  EMBER_ARG(bool, use_separate_proj_weight) = false;
  EMBER_ARG(Tensor, q_proj_weight) = {};
  EMBER_ARG(Tensor, k_proj_weight) = {};
  EMBER_ARG(Tensor, v_proj_weight) = {};
  EMBER_ARG(Tensor, static_k) = {};
  EMBER_ARG(Tensor, static_v) = {};
  EMBER_ARG(bool, average_attn_weights) = true;
};
}  // namespace functional
}  // namespace ember::nn
