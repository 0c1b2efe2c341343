#include "ember/nn/modules/embedding.h"

#include <cmath>
#include <set>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/nn/init.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"

namespace ember::nn {
namespace {

// padding_idx in [-num, num) made non-negative; -1 when absent (what ember::embedding takes).
int64_t wrap_padding_idx(std::optional<int64_t> idx, int64_t num) {
  if (!idx) return -1;
  EMBER_CHECK(*idx < num && *idx >= -num, "Embedding", "Padding_idx must be within num_embeddings (got ", *idx,
              " for num_embeddings=", num, ")");
  return *idx < 0 ? *idx + num : *idx;
}

}  // namespace

EmbeddingImpl::EmbeddingImpl(EmbeddingOptions options) : options(std::move(options)) { reset(); }

void EmbeddingImpl::reset() {
  const int64_t num = options.num_embeddings(), dim = options.embedding_dim();
  EMBER_CHECK(num >= 0 && dim >= 0, "Embedding", "num_embeddings and embedding_dim must be non-negative, got ", num,
              " and ", dim);
  if (options.padding_idx()) options.padding_idx(wrap_padding_idx(options.padding_idx(), num));
  if (options._weight().defined()) {
    EMBER_CHECK(options._weight().sizes() == IntArrayRef({num, dim}), "Embedding",
                "Shape of _weight does not match num_embeddings and embedding_dim (", options._weight().sizes(),
                " vs [", num, ", ", dim, "])");
    weight = register_parameter("weight", options._weight());
  } else {
    weight = register_parameter("weight", empty({num, dim}));
    reset_parameters();
  }
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {
    NoGradGuard no_grad;
    weight[*options.padding_idx()].fill_(0);
  }
}

Tensor EmbeddingImpl::forward(const Tensor& indices) {
  return functional::embedding(indices, weight,
                               functional::EmbeddingFuncOptions()
                                   .padding_idx(options.padding_idx())
                                   .max_norm(options.max_norm())
                                   .norm_type(options.norm_type())
                                   .scale_grad_by_freq(options.scale_grad_by_freq())
                                   .sparse(options.sparse()));
}

void EmbeddingImpl::pretty_print(std::ostream& stream) const {
  stream << "torch::nn::Embedding(num_embeddings=" << options.num_embeddings()
         << ", embedding_dim=" << options.embedding_dim();
  if (options.padding_idx()) stream << ", padding_idx=" << *options.padding_idx();
  if (options.max_norm()) stream << ", max_norm=" << *options.max_norm();
  if (options.norm_type() != 2) stream << ", norm_type=" << options.norm_type();
  if (options.scale_grad_by_freq()) stream << ", scale_grad_by_freq=true";
  if (options.sparse()) stream << ", sparse=true";
  stream << ")";
}

Embedding Embedding::from_pretrained(const Tensor& embeddings, const EmbeddingFromPretrainedOptions& options) {
  EMBER_CHECK(embeddings.defined() && embeddings.dim() == 2, "Embedding::from_pretrained",
              "Embeddings parameter is expected to be 2-dimensional");
  Embedding e(EmbeddingOptions(embeddings.size(0), embeddings.size(1))
                  ._weight(embeddings)
                  .padding_idx(options.padding_idx())
                  .max_norm(options.max_norm())
                  .norm_type(options.norm_type())
                  .scale_grad_by_freq(options.scale_grad_by_freq())
                  .sparse(options.sparse()));
  e->weight.requires_grad_(!options.freeze());
  return e;
}

namespace functional {

Tensor& embedding_renorm_(Tensor& weight, const Tensor& indices, double max_norm, double norm_type) {
  NoGradGuard no_grad;
  const Tensor idx = indices.to(kLong).contiguous();
  const int64_t* p = idx.data_ptr<int64_t>();
  const std::set<int64_t> rows(p, p + idx.numel());
  for (int64_t r : rows) {
    EMBER_CHECK(r >= 0 && r < weight.size(0), "embedding_renorm_", "index ", r, " is out of range for ",
                weight.size(0), " rows");
    Tensor row = weight[r];
    const double norm = row.norm(norm_type).item<double>();
    if (norm > max_norm) row.mul_(max_norm / (norm + 1e-7));
  }
  return weight;
}

Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& options) {
  EMBER_CHECK(weight.defined() && weight.dim() == 2, "embedding", "'weight' must be 2-D");
  const int64_t padding_idx = wrap_padding_idx(options.padding_idx(), weight.size(0));
  if (options.max_norm()) {
    Tensor w = weight;
    embedding_renorm_(w, input, *options.max_norm(), options.norm_type());
  }
  return ember::embedding(weight, input, padding_idx, options.scale_grad_by_freq(), options.sparse());
}

}  // namespace functional
}  // namespace ember::nn
