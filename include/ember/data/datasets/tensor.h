// TensorDataset: the rows of one tensor as examples without target, as libtorch's.
#pragma once
#include <optional>
#include <vector>

#include "ember/data/datasets/base.h"
#include "ember/indexing.h"

namespace ember::data::datasets {

struct TensorDataset : public Dataset<TensorDataset, TensorExample> {
  explicit TensorDataset(const std::vector<Tensor>& tensors) : TensorDataset(ember::stack(tensors)) {}
  explicit TensorDataset(Tensor tensor) : tensor(std::move(tensor)) {}

  TensorExample get(size_t index) override { return tensor[static_cast<int64_t>(index)]; }
  std::optional<size_t> size() const override { return static_cast<size_t>(tensor.size(0)); }

  Tensor tensor;
};

}  // namespace ember::data::datasets
