#include "ember/nn/modules/activation.h"

#include <cmath>

#include "ember/factory.h"
#include "ember/linalg.h"
#include "ember/nn/init.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"

namespace ember::nn {
namespace functional {

Tensor relu(const Tensor& input, const ReLUFuncOptions&) { return ember::relu(input); }
Tensor relu6(const Tensor& input, const ReLU6FuncOptions&) {
  return ember::clamp(input, std::optional<Scalar>(0), std::optional<Scalar>(6));
}
Tensor leaky_relu(const Tensor& input, const LeakyReLUFuncOptions& o) {
  return ember::leaky_relu(input, o.negative_slope());
}
Tensor gelu(const Tensor& input, const GELUFuncOptions& o) { return ember::gelu(input, o.approximate()); }
Tensor silu(const Tensor& input) { return ember::silu(input); }
Tensor hardswish(const Tensor& input) { return ember::hardswish(input); }
Tensor hardsigmoid(const Tensor& input) { return ember::hardsigmoid(input); }
Tensor elu(const Tensor& input, const ELUFuncOptions& o) { return ember::elu(input, o.alpha()); }
Tensor softplus(const Tensor& input, const SoftplusFuncOptions& o) {
  return ember::softplus(input, o.beta(), o.threshold());
}
Tensor sigmoid(const Tensor& input) { return ember::sigmoid(input); }
Tensor tanh(const Tensor& input) { return ember::tanh(input); }
Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& o) { return softmax(input, o.dim(), o.dtype()); }
Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& o) {
  return log_softmax(input, o.dim(), o.dtype());
}

}  // namespace functional

namespace {
void print_inplace(std::ostream& s, bool inplace, bool first) {
  if (inplace) s << (first ? "" : ", ") << "inplace=true";
}
}  // namespace

Tensor ReLUImpl::forward(const Tensor& x) { return functional::relu(x, options); }
void ReLUImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::ReLU(";
  print_inplace(s, options.inplace(), true);
  s << ")";
}
Tensor ReLU6Impl::forward(const Tensor& x) { return functional::relu6(x, options); }
void ReLU6Impl::pretty_print(std::ostream& s) const {
  s << "torch::nn::ReLU6(";
  print_inplace(s, options.inplace(), true);
  s << ")";
}
Tensor LeakyReLUImpl::forward(const Tensor& x) { return functional::leaky_relu(x, options); }
void LeakyReLUImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::LeakyReLU(negative_slope=" << options.negative_slope();
  print_inplace(s, options.inplace(), false);
  s << ")";
}
Tensor GELUImpl::forward(const Tensor& x) { return functional::gelu(x, options); }
void GELUImpl::pretty_print(std::ostream& s) const { s << "torch::nn::GELU()"; }
Tensor SiLUImpl::forward(const Tensor& x) { return functional::silu(x); }
void SiLUImpl::pretty_print(std::ostream& s) const { s << "torch::nn::SiLU()"; }
Tensor HardswishImpl::forward(const Tensor& x) { return functional::hardswish(x); }
void HardswishImpl::pretty_print(std::ostream& s) const { s << "torch::nn::Hardswish()"; }
Tensor HardsigmoidImpl::forward(const Tensor& x) { return functional::hardsigmoid(x); }
void HardsigmoidImpl::pretty_print(std::ostream& s) const { s << "torch::nn::Hardsigmoid()"; }
Tensor ELUImpl::forward(const Tensor& x) { return functional::elu(x, options); }
void ELUImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::ELU(alpha=" << options.alpha();
  print_inplace(s, options.inplace(), false);
  s << ")";
}
Tensor SoftplusImpl::forward(const Tensor& x) { return functional::softplus(x, options); }
void SoftplusImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::Softplus(beta=" << options.beta() << ", threshold=" << options.threshold() << ")";
}
Tensor SigmoidImpl::forward(const Tensor& x) { return functional::sigmoid(x); }
void SigmoidImpl::pretty_print(std::ostream& s) const { s << "torch::nn::Sigmoid()"; }
Tensor TanhImpl::forward(const Tensor& x) { return functional::tanh(x); }
void TanhImpl::pretty_print(std::ostream& s) const { s << "torch::nn::Tanh()"; }
Tensor SoftmaxImpl::forward(const Tensor& x) { return functional::softmax(x, options.dim()); }
void SoftmaxImpl::pretty_print(std::ostream& s) const { s << "torch::nn::Softmax(dim=" << options.dim() << ")"; }
Tensor LogSoftmaxImpl::forward(const Tensor& x) { return functional::log_softmax(x, options.dim()); }
void LogSoftmaxImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::LogSoftmax(dim=" << options.dim() << ")";
}

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options) : options(options) {
  reset();
}

void MultiheadAttentionImpl::reset() {
  const int64_t e = options.embed_dim(), h = options.num_heads();
  EMBER_CHECK(e > 0 && h > 0 && e % h == 0, "MultiheadAttention", "embed_dim must be divisible by num_heads (got ",
              e, " and ", h, ")");
  head_dim = e / h;
  in_proj_weight = register_parameter("in_proj_weight", empty({3 * e, e}));
  in_proj_bias = register_parameter("in_proj_bias", options.bias() ? empty({3 * e}) : Tensor(), options.bias());
  out_proj = register_module("out_proj", Linear(LinearOptions(e, e).bias(options.bias())));
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  init::xavier_uniform_(in_proj_weight);
  if (in_proj_bias.defined()) {
    init::constant_(in_proj_bias, 0.);
    init::constant_(out_proj->bias, 0.);
  }
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key,
                                                           const Tensor& value, const Tensor& key_padding_mask,
                                                           bool need_weights, const Tensor& attn_mask,
                                                           bool average_attn_weights) {
  const int64_t e = options.embed_dim(), h = options.num_heads();
  EMBER_CHECK(query.dim() == 3 && key.dim() == 3 && value.dim() == 3, "multi_head_attention_forward",
              "expected 3-D (L, N, E) query, key and value, got ", query.sizes(), ", ", key.sizes(), ", ",
              value.sizes());
  EMBER_CHECK(query.size(2) == e && key.size(2) == e && value.size(2) == e, "multi_head_attention_forward",
              "was expecting embedding dimension of ", e, ", but got ", query.sizes(), ", ", key.sizes(), ", ",
              value.sizes());
  EMBER_CHECK(key.sizes() == value.sizes(), "multi_head_attention_forward", "key shape ", key.sizes(),
              " does not match value shape ", value.sizes());
  EMBER_CHECK(query.size(1) == key.size(1), "multi_head_attention_forward", "batch sizes of query ", query.sizes(),
              " and key ", key.sizes(), " differ");
  const int64_t l = query.size(0), n = query.size(1), s = key.size(0);
  auto proj = [&](const Tensor& x, int64_t i) {
    const Tensor w = in_proj_weight.narrow(0, i * e, e);
    const Tensor b = in_proj_bias.defined() ? in_proj_bias.narrow(0, i * e, e) : Tensor();
    return functional::linear(x, w, b);
  };
  // (len, N, E) -> (N * H, len, head_dim)
  auto heads = [&](const Tensor& x, int64_t len) { return x.reshape({len, n * h, head_dim}).transpose(0, 1); };
  const Tensor q = heads(proj(query, 0), l), k = heads(proj(key, 1), s), v = heads(proj(value, 2), s);
  Tensor scores = matmul(q / std::sqrt(static_cast<double>(head_dim)), k.transpose(1, 2));  // (N*H, L, S)
  if (attn_mask.defined()) {
    EMBER_CHECK((attn_mask.dim() == 2 && attn_mask.size(0) == l && attn_mask.size(1) == s) ||
                    (attn_mask.dim() == 3 && attn_mask.size(0) == n * h && attn_mask.size(1) == l &&
                     attn_mask.size(2) == s),
                "multi_head_attention_forward", "The shape of attn_mask ", attn_mask.sizes(),
                " should be (L, S) or (N * num_heads, L, S) = (", l, ", ", s, ") or (", n * h, ", ", l, ", ", s,
                ")");
    scores = attn_mask.dtype() == kBool ? scores.masked_fill(attn_mask, -INFINITY) : scores + attn_mask;
  }
  if (key_padding_mask.defined()) {
    EMBER_CHECK(key_padding_mask.dim() == 2 && key_padding_mask.size(0) == n && key_padding_mask.size(1) == s,
                "multi_head_attention_forward", "expecting key_padding_mask shape of (", n, ", ", s, "), but got ",
                key_padding_mask.sizes());
    const Tensor mask = key_padding_mask.to(kBool).view({n, 1, 1, s});
    scores = scores.view({n, h, l, s}).masked_fill(mask, -INFINITY).view({n * h, l, s});
  }
  Tensor attn = functional::softmax(scores, -1);
  if (options.dropout() > 0) attn = functional::dropout(attn, options.dropout(), is_training());
  Tensor out = matmul(attn, v).transpose(0, 1).reshape({l * n, e});
  out = out_proj->forward(out).view({l, n, e});
  if (!need_weights) return {out, Tensor()};
  Tensor weights = attn.view({n, h, l, s});
  if (average_attn_weights) weights = weights.mean({1});
  return {out, weights};
}

void MultiheadAttentionImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::MultiheadAttention";
}

}  // namespace ember::nn
