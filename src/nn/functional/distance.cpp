// Distances as compositions of differentiable ops.
#include "ember/nn/functional/distance.h"

#include <algorithm>
#include <vector>

#include "ember/autograd.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"
#include "ember/shape.h"

namespace ember::nn::functional {

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& options) {
  EMBER_CHECK(x1.defined() && x2.defined(), "cosine_similarity", "x1 and x2 must be defined");
  EMBER_CHECK(is_floating_type(x1.dtype()) && is_floating_type(x2.dtype()), "cosine_similarity",
              "expected floating-point inputs, got ", x1.dtype(), " and ", x2.dtype());
  const DimVector shape = infer_size(x1.sizes(), x2.sizes(), "cosine_similarity");
  const int64_t dim = options.dim();
  const Tensor a = x1.expand(shape), b = x2.expand(shape);
  // PyTorch 1.13: each input divided by its norm clamped to eps; the clamp is applied without
  // recording, so the gradient flows as if through the unclamped norm.
  auto unit = [&](const Tensor& x) {
    const Tensor n = x.norm(2, {dim}, true);
    const Tensor nd = n.detach();
    return x / (n + (nd.clamp_min(options.eps()) - nd));
  };
  return (unit(a) * unit(b)).sum({dim});
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, const PairwiseDistanceFuncOptions& options) {
  EMBER_CHECK(x1.defined() && x2.defined(), "pairwise_distance", "x1 and x2 must be defined");
  const int64_t dim = std::max(x1.dim(), x2.dim());
  EMBER_CHECK(dim >= 1, "pairwise_distance", "expected inputs of at least 1 dim, got ", x1.sizes(), " and ",
              x2.sizes());
  return (x1 - x2 + options.eps()).norm(options.p(), {dim - 1}, options.keepdim());
}

Tensor pdist(const Tensor& input, double p) {
  EMBER_CHECK(input.defined() && input.dim() == 2, "pdist", "pdist only supports 2D tensors, got: ",
              input.defined() ? input.dim() : 0, "D");
  EMBER_CHECK(p >= 0, "pdist", "pdist only supports non-negative p values, got ", p);
  const int64_t n = input.size(0);
  std::vector<int64_t> rows, cols;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = i + 1; j < n; ++j) {
      rows.push_back(i);
      cols.push_back(j);
    }
  }
  if (rows.empty()) return empty({0}, TensorOptions().dtype(input.dtype()));
  const Tensor d = input.index_select(0, tensor(rows)) - input.index_select(0, tensor(cols));
  return d.norm(p, {1}, false);
}

}  // namespace ember::nn::functional
