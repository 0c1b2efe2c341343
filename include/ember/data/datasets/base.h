// Dataset interfaces, as libtorch's: a BatchDataset answers a batch request (by default a list of
// indices) with a batch; a Dataset answers get(index) with one example and builds batches from
// it. A dataset that can gather a whole batch at once overrides get_batch.
#pragma once
#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/array_ref.h"
#include "ember/data/example.h"

// In ember::detail: a `detail` namespace nearer to the datasets would hide ember::detail from
// code written inside ember::data::datasets (src/data/mnist.cpp calls detail::fail).
namespace ember::detail {
template <class T>
inline constexpr bool is_optional_v = false;
template <class T>
inline constexpr bool is_optional_v<std::optional<T>> = true;

// D::is_stateful, and false for a dataset of a program's own that does not derive from BatchDataset.
template <class D>
inline constexpr bool is_stateful_dataset_v = false;
template <class D>
  requires requires { D::is_stateful; }
inline constexpr bool is_stateful_dataset_v<D> = D::is_stateful;
}  // namespace ember::detail

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
  // A dataset whose batches are optional keeps a position of its own and ends its epoch with
  // nullopt (a StatefulDataset): make_data_loader gives it a StatefulDataLoader.
  static constexpr bool is_stateful = ::ember::detail::is_optional_v<BatchType>;

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

// A dataset asked for a number of examples rather than for indices, as libtorch's.
template <class Self, class Batch = std::vector<Example<>>>
using StreamDataset = BatchDataset<Self, Batch, size_t>;

}  // namespace ember::data::datasets
