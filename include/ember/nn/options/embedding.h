// Options of EmbeddingBag (bags of rows reduced by sum, mean or max) and F::embedding_bag.
#pragma once
#include <optional>
#include <variant>

#include "ember/nn/options.h"
#include "ember/tensor.h"

namespace ember::nn {

using EmbeddingBagMode = std::variant<enumtype::kSum, enumtype::kMean, enumtype::kMax>;

struct EmbeddingBagOptions {
  EmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  EMBER_ARG(int64_t, num_embeddings);
  EMBER_ARG(int64_t, embedding_dim);
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(EmbeddingBagMode, mode) = kMean;
  EMBER_ARG(bool, sparse) = false;
  // The weight to use instead of a normal(0, 1) one.
  EMBER_ARG(Tensor, _weight) = Tensor();
  // offsets has one entry more than there are bags: the end of the last one.
  EMBER_ARG(bool, include_last_offset) = false;
  // Entries equal to it count for nothing (not in the mean, not in the max).
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

struct EmbeddingBagFromPretrainedOptions {
  EMBER_ARG(bool, freeze) = true;
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(EmbeddingBagMode, mode) = kMean;
  EMBER_ARG(bool, sparse) = false;
  EMBER_ARG(bool, include_last_offset) = false;
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

namespace functional {
struct EmbeddingBagFuncOptions {
  // With a 1-D input: where each bag starts. A 2-D input is one bag per row.
  EMBER_ARG(Tensor, offsets) = Tensor();
  EMBER_ARG(std::optional<double>, max_norm) = std::nullopt;
  EMBER_ARG(double, norm_type) = 2.;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
  EMBER_ARG(EmbeddingBagMode, mode) = kMean;
  EMBER_ARG(bool, sparse) = false;
  // A weight per entry of input (mode kSum only).
  EMBER_ARG(Tensor, per_sample_weights) = Tensor();
  EMBER_ARG(bool, include_last_offset) = false;
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};
}  // namespace functional
}  // namespace ember::nn
