#include "ember/nn/modules/embedding.h"

#include <cmath>
#include <set>
#include <vector>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/nn/init.h"
#include "ember/nn_ops.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/shape.h"

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
    functional::embedding_renorm_(w, input, *options.max_norm(), options.norm_type());
  }
  return ember::embedding(weight, input, padding_idx, options.scale_grad_by_freq(), options.sparse());
}

Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& o) {
  EMBER_CHECK(weight.defined() && weight.dim() == 2, "embedding_bag", "weight has to be a 2D Tensor, but got Tensor of dimension ",
              weight.defined() ? weight.dim() : 0);
  EMBER_CHECK(input.defined() && (input.dim() == 1 || input.dim() == 2), "embedding_bag",
              "input has to be 1D or 2D Tensor, but got Tensor of dimension ", input.defined() ? input.dim() : 0);
  EMBER_CHECK(input.dtype() == kLong || input.dtype() == kInt, "embedding_bag",
              "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got ",
              input.dtype(), " instead");
  const bool is_sum = std::holds_alternative<enumtype::kSum>(o.mode());
  const bool is_max = std::holds_alternative<enumtype::kMax>(o.mode());
  const Tensor& psw = o.per_sample_weights();
  EMBER_CHECK(!psw.defined() || is_sum, "embedding_bag", "embedding_bag: per_sample_weights was not None. ",
              "per_sample_weights is only supported for mode='sum' (got mode='", enum_name(o.mode()), "')");
  EMBER_CHECK(!psw.defined() || psw.sizes() == input.sizes(), "embedding_bag",
              "embedding_bag: If per_sample_weights (", psw.defined() ? psw.sizes() : IntArrayRef(),
              ") is not None, then it must have the same shape as the input (", input.sizes(), ")");
  // Bag starts, from offsets (1-D input) or the rows (2-D input).
  const Tensor flat = input.reshape({-1}).to(kLong);
  const int64_t n = flat.numel();
  std::vector<int64_t> starts;
  if (input.dim() == 2) {
    EMBER_CHECK(!o.offsets().defined(), "embedding_bag", "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences. However, found offsets of type Tensor");
    for (int64_t b = 0; b < input.size(0); ++b) starts.push_back(b * input.size(1));
  } else {
    EMBER_CHECK(o.offsets().defined() && o.offsets().dim() == 1, "embedding_bag",
                "offsets has to be a 1D Tensor when input is 1D");
    const Tensor off = o.offsets().to(kLong).contiguous();
    starts.assign(off.data_ptr<int64_t>(), off.data_ptr<int64_t>() + off.numel());
    EMBER_CHECK(starts.empty() || starts[0] == 0, "embedding_bag", "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got ",
                starts.empty() ? 0 : starts[0]);
    for (size_t i = 0; i < starts.size(); ++i) {
      EMBER_CHECK(starts[i] <= n && (i == 0 || starts[i] >= starts[i - 1]), "embedding_bag",
                  "offsets must be non-decreasing and at most the number of indices (", n, "), got ", o.offsets().sizes(),
                  " with offsets[", i, "] = ", starts[i]);
    }
    if (o.include_last_offset()) {
      EMBER_CHECK(!starts.empty(), "embedding_bag", "include_last_offset: number of offsets should be at least 1");
      starts.pop_back();
    }
  }
  const int64_t bags = static_cast<int64_t>(starts.size());
  std::vector<int64_t> bag_of(static_cast<size_t>(n));
  for (int64_t b = 0; b < bags; ++b) {
    const int64_t end = b + 1 < bags ? starts[b + 1] : n;
    for (int64_t i = starts[b]; i < end; ++i) bag_of[i] = b;
  }
  const int64_t padding_idx = o.padding_idx() ? (*o.padding_idx() < 0 ? *o.padding_idx() + weight.size(0) : *o.padding_idx()) : -1;
  if (o.max_norm()) {
    Tensor w = weight;
    functional::embedding_renorm_(w, flat, *o.max_norm(), o.norm_type());
  }
  // Rows before the first bag's start belong to no bag (offsets[0] is 0, so there are none).
  const Tensor rows = ember::embedding(weight, flat, padding_idx, o.scale_grad_by_freq(), o.sparse());
  const Tensor kept = (flat != padding_idx).to(weight.dtype());
  const Tensor bag = tensor(bag_of);
  if (is_max) {
    // Per bag, the max over its non-padding rows (zeros for an empty bag), routed to that row.
    std::vector<Tensor> out;
    const Tensor masked = where(kept.unsqueeze(1) > 0, rows, Scalar(-INFINITY));
    for (int64_t b = 0; b < bags; ++b) {
      const int64_t end = b + 1 < bags ? starts[b + 1] : n;
      if (end == starts[b]) {
        out.push_back(zeros({weight.size(1)}, TensorOptions().dtype(weight.dtype())));
      } else {
        const Tensor m = std::get<0>(masked.narrow(0, starts[b], end - starts[b]).max(0));
        out.push_back(where(m == -INFINITY, Scalar(0.0), m));
      }
    }
    return out.empty() ? zeros({0, weight.size(1)}, TensorOptions().dtype(weight.dtype())) : stack(out);
  }
  Tensor weighted = rows * kept.unsqueeze(1);
  if (psw.defined()) weighted = weighted * psw.reshape({-1, 1});
  const Tensor sums = zeros({bags, weight.size(1)}, TensorOptions().dtype(weight.dtype())).index_add(0, bag, weighted);
  if (is_sum) return sums;
  const Tensor counts = zeros({bags}, TensorOptions().dtype(weight.dtype())).index_add(0, bag, kept);
  return sums / counts.clamp_min(1).unsqueeze(1);
}

}  // namespace functional

EmbeddingBagImpl::EmbeddingBagImpl(EmbeddingBagOptions options) : options(std::move(options)) { reset(); }

void EmbeddingBagImpl::reset() {
  const int64_t num = options.num_embeddings(), dim = options.embedding_dim();
  EMBER_CHECK(num >= 0 && dim >= 0, "EmbeddingBag", "num_embeddings and embedding_dim must be non-negative, got ", num,
              " and ", dim);
  if (options.padding_idx()) options.padding_idx(wrap_padding_idx(options.padding_idx(), num));
  if (options._weight().defined()) {
    EMBER_CHECK(options._weight().sizes() == IntArrayRef({num, dim}), "EmbeddingBag",
                "Shape of _weight does not match num_embeddings and embedding_dim (", options._weight().sizes(),
                " vs [", num, ", ", dim, "])");
    weight = register_parameter("weight", options._weight());
  } else {
    weight = register_parameter("weight", empty({num, dim}));
    reset_parameters();
  }
}

void EmbeddingBagImpl::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {
    NoGradGuard no_grad;
    weight[*options.padding_idx()].fill_(0);
  }
}

Tensor EmbeddingBagImpl::forward(const Tensor& input, const Tensor& offsets, const Tensor& per_sample_weights) {
  return functional::embedding_bag(input, weight,
                                   functional::EmbeddingBagFuncOptions()
                                       .offsets(offsets)
                                       .max_norm(options.max_norm())
                                       .norm_type(options.norm_type())
                                       .scale_grad_by_freq(options.scale_grad_by_freq())
                                       .mode(options.mode())
                                       .sparse(options.sparse())
                                       .per_sample_weights(per_sample_weights)
                                       .include_last_offset(options.include_last_offset())
                                       .padding_idx(options.padding_idx()));
}

void EmbeddingBagImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "torch::nn::EmbeddingBag(num_embeddings=" << options.num_embeddings()
         << ", embedding_dim=" << options.embedding_dim();
  if (options.max_norm()) stream << ", max_norm=" << *options.max_norm();
  if (options.norm_type() != 2) stream << ", norm_type=" << options.norm_type();
  if (options.scale_grad_by_freq()) stream << ", scale_grad_by_freq=true";
  if (options.sparse()) stream << ", sparse=true";
  if (!std::holds_alternative<enumtype::kMean>(options.mode())) stream << ", mode=k" << enum_name(options.mode());
  if (options.include_last_offset()) stream << ", include_last_offset=true";
  if (options.padding_idx()) stream << ", padding_idx=" << *options.padding_idx();
  stream << ")";
}

EmbeddingBag EmbeddingBag::from_pretrained(const Tensor& embeddings, const EmbeddingBagFromPretrainedOptions& options) {
  EMBER_CHECK(embeddings.defined() && embeddings.dim() == 2, "EmbeddingBag::from_pretrained",
              "Embeddings parameter is expected to be 2-dimensional");
  EmbeddingBag e(EmbeddingBagOptions(embeddings.size(0), embeddings.size(1))
                     ._weight(embeddings)
                     .max_norm(options.max_norm())
                     .norm_type(options.norm_type())
                     .scale_grad_by_freq(options.scale_grad_by_freq())
                     .mode(options.mode())
                     .sparse(options.sparse())
                     .include_last_offset(options.include_last_offset())
                     .padding_idx(options.padding_idx()));
  e->weight.requires_grad_(!options.freeze());
  return e;
}

}  // namespace ember::nn
