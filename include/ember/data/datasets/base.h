// Dataset interfaces, as libtorch's: a BatchDataset answers a batch request (by default a list of
// indices) with a batch; a Dataset answers get(index) with one example and builds batches from
// it. A dataset that can gather a whole batch at once overrides get_batch.
#pragma once
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "ember/array_ref.h"
#include "ember/data/example.h"

namespace ember::data::datasets {

template <class SourceDataset, class AppliedTransform>
class MapDataset;

template <class D, class T>
MapDataset<D, T> map(D dataset, T transform);

template <class Self, class Batch = std::vector<Example<>>, class BatchRequest = ArrayRef<size_t>>
class BatchDataset {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;

  virtual ~BatchDataset() = default;
  virtual Batch get_batch(BatchRequest request) = 0;
  virtual std::optional<size_t> size() const = 0;

  // A new dataset whose batches are this one's passed through `transform`.
  template <class TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) & {
    return datasets::map(static_cast<Self&>(*this), std::move(transform));
  }
  template <class TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) && {
    return datasets::map(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

template <class Self, class SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;

  virtual ExampleType get(size_t index) = 0;

  std::vector<ExampleType> get_batch(ArrayRef<size_t> indices) override {
    std::vector<ExampleType> batch;
    batch.reserve(indices.size());
    for (size_t i : indices) batch.push_back(get(i));
    return batch;
  }
};

}  // namespace ember::data::datasets
