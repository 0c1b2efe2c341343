#include "ember/nn/modules/activation.h"

#include <cmath>

#include "ember/aten_tail.h"
#include "ember/aten_tail2.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/linalg.h"
#include "ember/nn/init.h"
#include "ember/nn_ops.h"
#include "ember/nn/quantized.h"
#include "ember/pointwise.h"
#include "ember/quantization.h"
#include "ember/reduce.h"

namespace ember::nn {
namespace functional {

// With inplace(true) the op runs in place on the input, which is returned, as libtorch's.
Tensor relu(const Tensor& input, const ReLUFuncOptions& o) {
  Tensor self = input;
  return o.inplace() ? ember::relu_(self) : ember::relu(input);
}
Tensor relu6(const Tensor& input, const ReLU6FuncOptions& o) {
  Tensor self = input;
  return o.inplace() ? ember::hardtanh_(self, 0, 6) : ember::hardtanh(input, 0, 6);
}
Tensor leaky_relu(const Tensor& input, const LeakyReLUFuncOptions& o) {
  Tensor self = input;
  return o.inplace() ? ember::leaky_relu_(self, o.negative_slope()) : ember::leaky_relu(input, o.negative_slope());
}
Tensor gelu(const Tensor& input, const GELUFuncOptions& o) { return ember::gelu(input, o.approximate()); }
Tensor silu(const Tensor& input) { return ember::silu(input); }
Tensor hardswish(const Tensor& input) { return ember::hardswish(input); }
Tensor hardsigmoid(const Tensor& input) { return ember::hardsigmoid(input); }
Tensor elu(const Tensor& input, const ELUFuncOptions& o) {
  Tensor self = input;
  return o.inplace() ? ember::elu_(self, o.alpha()) : ember::elu(input, o.alpha());
}
Tensor softplus(const Tensor& input, const SoftplusFuncOptions& o) {
  return ember::softplus(input, o.beta(), o.threshold());
}
Tensor sigmoid(const Tensor& input) { return ember::sigmoid(input); }
Tensor tanh(const Tensor& input) { return ember::tanh(input); }
Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& o) { return ember::softmax(input, o.dim(), o.dtype()); }
Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& o) {
  return ember::log_softmax(input, o.dim(), o.dtype());
}

Tensor selu(const Tensor& input, const SELUFuncOptions& o) {
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  Tensor self = input;
  return o.inplace() ? ember::elu_(self, kAlpha, kScale) : ember::elu(input, kAlpha, kScale);
}
Tensor glu(const Tensor& input, const GLUFuncOptions& o) {
  EMBER_CHECK(input.dim() > 0, "glu", "glu does not support scalars because halving size must be even");
  const int64_t dim = o.dim() < 0 ? o.dim() + input.dim() : o.dim();
  EMBER_CHECK(dim >= 0 && dim < input.dim(), "glu", "dim ", o.dim(), " is out of range for an input of shape ",
              input.sizes());
  const int64_t n = input.size(dim);
  EMBER_CHECK(n % 2 == 0, "glu", "Halving dimension must be even, but dimension ", dim, " is size ", n);
  return input.narrow(dim, 0, n / 2) * input.narrow(dim, n / 2, n / 2).sigmoid();
}
// Masks are detached: the gradient is 1 where the value passes through, 0 elsewhere.
Tensor hardshrink(const Tensor& input, const HardshrinkFuncOptions& o) {
  return input * (input.detach().abs() > o.lambda()).to(input.dtype());
}
Tensor softshrink(const Tensor& input, const SoftshrinkFuncOptions& o) {
  EMBER_CHECK(o.lambda() >= 0, "softshrink", "lambda must be greater or equal to 0, but found to be ", o.lambda(), ".");
  const Tensor pass = (input.detach().abs() > o.lambda()).to(input.dtype());
  return (input - input.detach().sign() * o.lambda()) * pass;
}
Tensor hardtanh(const Tensor& input, const HardtanhFuncOptions& o) {
  EMBER_CHECK(o.max_val() > o.min_val(), "hardtanh", "max_val must be greater than min_val (got ", o.min_val(),
              " and ", o.max_val(), ")");
  Tensor self = input;
  return o.inplace() ? ember::hardtanh_(self, o.min_val(), o.max_val()) : ember::hardtanh(input, o.min_val(), o.max_val());
}
Tensor celu(const Tensor& input, const CELUFuncOptions& o) {
  EMBER_CHECK(o.alpha() != 0, "celu", "ZeroDivisionError: alpha must not be 0");
  Tensor self = input;
  return o.inplace() ? ember::celu_(self, o.alpha()) : ember::elu(input / o.alpha(), 1.0) * o.alpha();
}
Tensor threshold(const Tensor& input, const ThresholdFuncOptions& o) {
  Tensor self = input;
  if (o.inplace()) return ember::threshold_(self, o.threshold(), o.value());
  return where(input.detach() > o.threshold(), input, Scalar(o.value()));
}
Tensor softmin(const Tensor& input, const SoftminFuncOptions& o) { return ember::softmax(-input, o.dim(), o.dtype()); }
Tensor mish(const Tensor& input) { return input * ember::softplus(input, 1.0, 20.0).tanh(); }
Tensor softsign(const Tensor& input) { return input / (input.abs() + 1); }
Tensor tanhshrink(const Tensor& input) { return input - input.tanh(); }
Tensor logsigmoid(const Tensor& input) { return ember::log_sigmoid(input); }
Tensor prelu(const Tensor& input, const Tensor& weight) {
  EMBER_CHECK(input.defined() && weight.defined() && weight.dim() <= 1, "prelu",
              "expected a defined input and a weight of at most 1 dim");
  const int64_t n = weight.numel();
  Tensor w = weight.reshape({-1});
  if (n != 1) {
    EMBER_CHECK(input.dim() >= 1, "prelu", "Not allow zero-dim input tensor when weight has ", n, " parameters");
    const int64_t channel_dim = input.dim() == 1 ? 0 : 1;
    EMBER_CHECK(input.size(channel_dim) == n, "prelu", "Mismatch of parameter numbers and input channel size. Found parameter numbers = ",
                n, " and channel size = ", input.size(channel_dim), ".");
    DimVector shape(static_cast<size_t>(input.dim()), 1);
    shape[channel_dim] = n;
    w = w.view(shape);
  }
  return ember::relu(input) - w * ember::relu(-input);
}
Tensor rrelu(const Tensor& input, const RReLUFuncOptions& o) {
  EMBER_CHECK(o.lower() <= o.upper(), "rrelu", "lower bound should be less than or equal to the upper bound (got ",
              o.lower(), " and ", o.upper(), ")");
  Tensor self = input;
  if (o.inplace()) return ember::rrelu_(self, o.lower(), o.upper(), o.training());
  if (!o.training()) return ember::leaky_relu(input, (o.lower() + o.upper()) / 2);
  // One slope drawn per element, used where the input is negative.
  const Tensor slope = ember::rand_like(input.detach()) * (o.upper() - o.lower()) + o.lower();
  return where(input.detach() >= 0, input, input * slope);
}
Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& o) {
  // Gumbel(0, 1) noise -log(E), E ~ Exponential(1), drawn as libtorch's gumbel_softmax draws it
  const Tensor gumbels = -ember::empty_like(logits.detach()).exponential_().log();
  const Tensor y_soft = ember::softmax((logits + gumbels) / o.tau(), o.dim());
  if (!o.hard()) return y_soft;
  const Tensor index = std::get<1>(y_soft.detach().max(o.dim(), true));
  const Tensor y_hard = zeros_like(logits).scatter(o.dim(), index, Scalar(1.0));
  return y_hard - y_soft.detach() + y_soft;
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
Tensor HardswishImpl::forward(const Tensor& x) {
  if (static_quantized) return static_quantized->forward(x);
  const Tensor y = functional::hardswish(x);
  return activation_post_process ? activation_post_process->forward(y) : y;
}
void HardswishImpl::pretty_print(std::ostream& s) const {
  if (static_quantized) return static_quantized->pretty_print(s);
  s << "torch::nn::Hardswish()";
}
Tensor HardsigmoidImpl::forward(const Tensor& x) {
  const Tensor y = functional::hardsigmoid(x);
  return activation_post_process ? activation_post_process->forward(y) : y;
}
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

Tensor SELUImpl::forward(const Tensor& x) { return functional::selu(x, options); }
void SELUImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::SELU(";
  print_inplace(s, options.inplace(), true);
  s << ")";
}
Tensor GLUImpl::forward(const Tensor& x) { return functional::glu(x, options); }
void GLUImpl::pretty_print(std::ostream& s) const { s << "torch::nn::GLU(dim=" << options.dim() << ")"; }
Tensor HardshrinkImpl::forward(const Tensor& x) { return functional::hardshrink(x, options); }
void HardshrinkImpl::pretty_print(std::ostream& s) const { s << "torch::nn::Hardshrink(" << options.lambda() << ")"; }
Tensor SoftshrinkImpl::forward(const Tensor& x) { return functional::softshrink(x, options); }
void SoftshrinkImpl::pretty_print(std::ostream& s) const { s << "torch::nn::Softshrink(" << options.lambda() << ")"; }
Tensor HardtanhImpl::forward(const Tensor& x) { return functional::hardtanh(x, options); }
void HardtanhImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::Hardtanh(min_val=" << options.min_val() << ", max_val=" << options.max_val();
  print_inplace(s, options.inplace(), false);
  s << ")";
}
Tensor CELUImpl::forward(const Tensor& x) { return functional::celu(x, options); }
void CELUImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::CELU(alpha=" << options.alpha();
  print_inplace(s, options.inplace(), false);
  s << ")";
}
Tensor RReLUImpl::forward(const Tensor& x) {
  return functional::rrelu(x, functional::RReLUFuncOptions().lower(options.lower()).upper(options.upper()).training(
                                  is_training()));
}
void RReLUImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::RReLU(lower=" << options.lower() << ", upper=" << options.upper();
  print_inplace(s, options.inplace(), false);
  s << ")";
}
Tensor LogSigmoidImpl::forward(const Tensor& x) { return functional::logsigmoid(x); }
void LogSigmoidImpl::pretty_print(std::ostream& s) const { s << "torch::nn::LogSigmoid()"; }
Tensor SoftsignImpl::forward(const Tensor& x) { return functional::softsign(x); }
void SoftsignImpl::pretty_print(std::ostream& s) const { s << "torch::nn::Softsign()"; }
Tensor TanhshrinkImpl::forward(const Tensor& x) { return functional::tanhshrink(x); }
void TanhshrinkImpl::pretty_print(std::ostream& s) const { s << "torch::nn::Tanhshrink()"; }
Tensor MishImpl::forward(const Tensor& x) { return functional::mish(x); }
void MishImpl::pretty_print(std::ostream& s) const { s << "torch::nn::Mish()"; }
Tensor Softmax2dImpl::forward(const Tensor& x) {
  EMBER_CHECK(x.dim() == 3 || x.dim() == 4, "Softmax2d", "Softmax2d requires a 3D or 4D tensor as input, got ",
              x.sizes());
  return functional::softmax(x, -3);
}
void Softmax2dImpl::pretty_print(std::ostream& s) const { s << "torch::nn::Softmax2d()"; }
Tensor SoftminImpl::forward(const Tensor& x) { return functional::softmin(x, options.dim()); }
void SoftminImpl::pretty_print(std::ostream& s) const { s << "torch::nn::Softmin(dim=" << options.dim() << ")"; }
Tensor ThresholdImpl::forward(const Tensor& x) { return functional::threshold(x, options); }
void ThresholdImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::Threshold(threshold=" << options.threshold() << ", value=" << options.value();
  print_inplace(s, options.inplace(), false);
  s << ")";
}

PReLUImpl::PReLUImpl(const PReLUOptions& options) : options(options) { reset(); }
void PReLUImpl::reset() {
  EMBER_CHECK(options.num_parameters() > 0, "PReLU", "num_parameters must be positive, got ",
              options.num_parameters());
  weight = register_parameter("weight", empty({options.num_parameters()}));
  reset_parameters();
}
void PReLUImpl::reset_parameters() { init::constant_(weight, options.init()); }
Tensor PReLUImpl::forward(const Tensor& x) { return functional::prelu(x, weight); }
void PReLUImpl::pretty_print(std::ostream& s) const {
  s << "torch::nn::PReLU(num_parameters=" << options.num_parameters() << ")";
}

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options) : options(options) {
  reset();
}

void MultiheadAttentionImpl::reset() {
  const int64_t e = options.embed_dim(), h = options.num_heads();
  EMBER_CHECK(e > 0 && h > 0 && e % h == 0, "MultiheadAttention", "embed_dim must be divisible by num_heads (got ",
              e, " and ", h, ")");
  EMBER_CHECK(options.kdim() > 0 && options.vdim() > 0, "MultiheadAttention", "kdim and vdim must be positive (got ",
              options.kdim(), " and ", options.vdim(), ")");
  head_dim = e / h;
  // parameters in libtorch's order (named_parameters lists the defined ones)
  _qkv_same_embed_dim = options.kdim() == e && options.vdim() == e;
  const bool same = _qkv_same_embed_dim;
  in_proj_weight = register_parameter("in_proj_weight", same ? empty({3 * e, e}) : Tensor(), same);
  q_proj_weight = register_parameter("q_proj_weight", same ? Tensor() : empty({e, e}), !same);
  k_proj_weight = register_parameter("k_proj_weight", same ? Tensor() : empty({e, options.kdim()}), !same);
  v_proj_weight = register_parameter("v_proj_weight", same ? Tensor() : empty({e, options.vdim()}), !same);
  in_proj_bias = register_parameter("in_proj_bias", options.bias() ? empty({3 * e}) : Tensor(), options.bias());
  out_proj = register_module("out_proj", Linear(LinearOptions(e, e).bias(options.bias())));
  if (options.add_bias_kv()) {
    bias_k = register_parameter("bias_k", empty({1, 1, e}));
    bias_v = register_parameter("bias_v", empty({1, 1, e}));
  } else {
    bias_k = bias_v = Tensor();
  }
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  if (_qkv_same_embed_dim) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    init::constant_(in_proj_bias, 0.);
    init::constant_(out_proj->bias, 0.);
  }
  if (bias_k.defined()) init::xavier_normal_(bias_k);
  if (bias_v.defined()) init::xavier_normal_(bias_v);
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key,
                                                           const Tensor& value, const Tensor& key_padding_mask,
                                                           bool need_weights, const Tensor& attn_mask,
                                                           bool average_attn_weights) {
  return functional::multi_head_attention_forward(
      query, key, value,
      functional::MultiheadAttentionForwardFuncOptions(options.embed_dim(), options.num_heads(), in_proj_weight,
                                                       in_proj_bias, bias_k, bias_v, options.add_zero_attn(),
                                                       options.dropout(), out_proj->weight, out_proj->bias)
          .training(is_training())
          .key_padding_mask(key_padding_mask)
          .need_weights(need_weights)
          .attn_mask(attn_mask)
          .use_separate_proj_weight(!_qkv_same_embed_dim)
          .q_proj_weight(q_proj_weight)
          .k_proj_weight(k_proj_weight)
          .v_proj_weight(v_proj_weight)
          .average_attn_weights(average_attn_weights));
}

namespace functional {
std::tuple<Tensor, Tensor> multi_head_attention_forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                        const MultiheadAttentionForwardFuncOptions& o) {
  const char* name = "multi_head_attention_forward";
  EMBER_CHECK(query.dim() == 3 && key.dim() == 3 && value.dim() == 3, name,
              "expected 3-D (L, N, E) query, key and value, got ", query.sizes(), ", ", key.sizes(), ", ",
              value.sizes());
  const int64_t l = query.size(0), n = query.size(1), e = query.size(2), h = o.num_heads();
  EMBER_CHECK(e == o.embed_dim_to_check(), name, "was expecting embedding dimension of ", o.embed_dim_to_check(),
              ", but got ", e);
  EMBER_CHECK(key.sizes() == value.sizes(), name, "key shape ", key.sizes(), " does not match value shape ",
              value.sizes());
  EMBER_CHECK(key.size(1) == n, name, "batch sizes of query ", query.sizes(), " and key ", key.sizes(), " differ");
  EMBER_CHECK(h > 0 && e % h == 0, name, "embed_dim must be divisible by num_heads, got ", e, " and ", h);
  const int64_t head_dim = e / h;
  // The projections: thirds of in_proj_weight (and in_proj_bias), or three separate weights. The
  // thirds are chunks, so their gradients meet in one SplitBackward0 (one concatenation) rather
  // than three zero-filled gradients of the whole weight summed.
  std::vector<Tensor> thirds, biases;
  if (!o.use_separate_proj_weight()) {
    EMBER_CHECK(o.in_proj_weight().defined() && o.in_proj_weight().dim() == 2 && o.in_proj_weight().size(0) == 3 * e,
                name, "expected in_proj_weight of (", 3 * e, ", E), got ",
                o.in_proj_weight().defined() ? o.in_proj_weight().sizes() : IntArrayRef{});
    thirds = o.in_proj_weight().chunk(3);
  }
  if (o.in_proj_bias().defined()) {
    EMBER_CHECK(o.in_proj_bias().dim() == 1 && o.in_proj_bias().size(0) == 3 * e, name, "expected in_proj_bias of (",
                3 * e, "), got ", o.in_proj_bias().sizes());
    biases = o.in_proj_bias().chunk(3);
  }
  auto proj = [&](const Tensor& x, const Tensor& separate, int64_t i, double scale) {
    const Tensor& w = o.use_separate_proj_weight() ? separate : thirds[static_cast<size_t>(i)];
    EMBER_CHECK(w.defined() && w.dim() == 2 && w.size(0) == e && w.size(1) == x.size(2), name,
                "expected a projection weight of (", e, ", ", x.size(2), "), got ",
                w.defined() ? w.sizes() : IntArrayRef{});
    const Tensor b = biases.empty() ? Tensor() : biases[static_cast<size_t>(i)];
    if (scale == 1) return linear(x, w, b);
    return linear(x, w * scale, b.defined() ? b * scale : b);
  };
  // With weights the scores are computed here, and their 1/sqrt(head_dim) is folded into the
  // query's projection: a product with the (E, E) weight and the bias rather than with the
  // (L, N, E) queries, forward and backward. Without, scaled_dot_product_attention scales.
  const double scale = o.need_weights() ? 1 / std::sqrt(static_cast<double>(head_dim)) : 1.0;
  const Tensor q = proj(query, o.q_proj_weight(), 0, scale);
  Tensor k = proj(key, o.k_proj_weight(), 1, 1.0), v = proj(value, o.v_proj_weight(), 2, 1.0);
  Tensor attn_mask = o.attn_mask(), key_padding_mask = o.key_padding_mask();
  // one more key: a zero mask column (nothing masked) where masks are given
  auto extend_masks = [&] {
    if (attn_mask.defined()) {
      const int64_t d = attn_mask.dim() - 1;
      std::vector<int64_t> sizes = attn_mask.sizes().vec();
      sizes[d] = 1;
      attn_mask = cat({attn_mask, zeros(sizes, attn_mask.options())}, d);
    }
    if (key_padding_mask.defined())
      key_padding_mask = cat({key_padding_mask, zeros({key_padding_mask.size(0), 1}, key_padding_mask.options())}, 1);
  };
  EMBER_CHECK(o.bias_k().defined() == o.bias_v().defined(), name, "bias_k and bias_v must be given together");
  if (o.bias_k().defined()) {
    EMBER_CHECK(!o.static_k().defined(), name, "bias cannot be added to static key.");
    EMBER_CHECK(!o.static_v().defined(), name, "bias cannot be added to static value.");
    k = cat({k, o.bias_k().repeat({1, n, 1})});
    v = cat({v, o.bias_v().repeat({1, n, 1})});
    extend_masks();
  }
  // (len, N, E) -> (N * H, len, head_dim), copied to that layout: oneDNN runs the batched products
  // on dense heads with its brgemm kernels, on the strided view with a slower gemm (one thread,
  // seq 256, head_dim 64: the four products of q, k and v 1.4 ms faster than the copies cost)
  auto heads = [&](const Tensor& x) { return x.reshape({x.size(0), n * h, head_dim}).transpose(0, 1).contiguous(); };
  Tensor qh = heads(q), kh = heads(k), vh = heads(v);
  for (auto [given, target, what] : {std::tuple{o.static_k(), &kh, "static_k"}, std::tuple{o.static_v(), &vh, "static_v"}}) {
    if (!given.defined()) continue;
    EMBER_CHECK(given.dim() == 3 && given.size(0) == n * h && given.size(2) == head_dim, name, "expected ", what,
                " of (", n * h, ", S, ", head_dim, "), got ", given.sizes());
    *target = given;
  }
  if (o.add_zero_attn()) {
    kh = cat({kh, zeros({n * h, 1, head_dim}, kh.options())}, 1);
    vh = cat({vh, zeros({n * h, 1, head_dim}, vh.options())}, 1);
    extend_masks();
  }
  const int64_t s = kh.size(1);
  if (attn_mask.defined()) {
    EMBER_CHECK((attn_mask.dim() == 2 && attn_mask.size(0) == l && attn_mask.size(1) == s) ||
                    (attn_mask.dim() == 3 && attn_mask.size(0) == n * h && attn_mask.size(1) == l &&
                     attn_mask.size(2) == s),
                name, "The shape of attn_mask ", attn_mask.sizes(), " should be (L, S) or (N * num_heads, L, S) = (",
                l, ", ", s, ") or (", n * h, ", ", l, ", ", s, ")");
  }
  if (key_padding_mask.defined()) {
    EMBER_CHECK(key_padding_mask.dim() == 2 && key_padding_mask.size(0) == n && key_padding_mask.size(1) == s, name,
                "expecting key_padding_mask shape of (", n, ", ", s, "), but got ", key_padding_mask.sizes());
  }
  const double dropout_p = o.training() ? o.dropout_p() : 0.0;
  if (!o.need_weights()) {
    // As PyTorch 2: scaled_dot_product_attention over (N, H, len, head_dim), which for long
    // sequences never holds the (N * H, L, S) scores; the masks merge into one it broadcasts
    // (bool: true = attend, or added).
    auto split = [&](const Tensor& x) { return x.reshape({n, h, x.size(1), head_dim}); };
    Tensor mask;
    if (attn_mask.defined()) {
      mask = attn_mask.dim() == 3 ? attn_mask.reshape({n, h, l, s}) : attn_mask;
      mask = mask.dtype() == kBool ? mask.logical_not() : mask.to(qh.dtype());
    }
    if (key_padding_mask.defined()) {
      const Tensor padded = key_padding_mask.to(kBool).view({n, 1, 1, s});
      mask = !mask.defined() ? padded.logical_not()
             : mask.dtype() == kBool ? mask.logical_and(padded.logical_not())
                                     : mask.masked_fill(padded, -INFINITY);
    }
    const Tensor heads_out = scaled_dot_product_attention(split(qh), split(kh), split(vh), mask, dropout_p);
    return {linear(heads_out.permute({2, 0, 1, 3}).reshape({l, n, e}), o.out_proj_weight(), o.out_proj_bias()),
            Tensor()};
  }
  Tensor scores = bmm(qh, kh.transpose(1, 2));  // (N * H, L, S), qh scaled by its projection
  if (attn_mask.defined()) {
    scores = attn_mask.dtype() == kBool ? scores.masked_fill(attn_mask, -INFINITY) : scores + attn_mask;
  }
  if (key_padding_mask.defined()) {
    const Tensor mask = key_padding_mask.to(kBool).view({n, 1, 1, s});
    scores = scores.view({n, h, l, s}).masked_fill(mask, -INFINITY).view({n * h, l, s});
  }
  Tensor attn = softmax(scores, -1);
  if (dropout_p > 0) attn = ember::dropout(attn, dropout_p, true);
  Tensor out = bmm(attn, vh).transpose(0, 1).reshape({l, n, e});
  out = linear(out, o.out_proj_weight(), o.out_proj_bias());
  Tensor weights = attn.view({n, h, l, s});
  if (o.average_attn_weights()) weights = weights.mean({1});
  return {out, weights};
}
}  // namespace functional

void MultiheadAttentionImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::MultiheadAttention";
}

}  // namespace ember::nn
