// F::cosine_similarity, pairwise_distance, pdist.
#pragma once
#include "ember/nn/options/distance.h"
#include "ember/tensor.h"

namespace ember::nn::functional {
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& options = {});
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, const PairwiseDistanceFuncOptions& options = {});
// The p-norm distances between the rows of a 2-D input, pairs (i < j) in row-major order.
Tensor pdist(const Tensor& input, double p = 2.0);
}  // namespace ember::nn::functional
