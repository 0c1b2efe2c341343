// MapDataset: a dataset whose batches go through a transform (dataset.map(Stack<>())). Over a
// stateful dataset the batches are optional: nullopt (the end of the epoch) passes through, and
// reset() reaches the source, as libtorch's.
#pragma once
#include <optional>
#include <type_traits>
#include <utility>

#include "ember/data/datasets/base.h"

namespace ember::data::datasets {

namespace detail {
template <bool Optional, class T>
using optional_if_t = std::conditional_t<Optional, std::optional<T>, T>;

template <class SourceDataset, class AppliedTransform>
using MapOutputBatch = optional_if_t<is_stateful_v<SourceDataset>, typename AppliedTransform::OutputBatchType>;
}  // namespace detail

template <class SourceDataset, class AppliedTransform>
class MapDataset : public BatchDataset<MapDataset<SourceDataset, AppliedTransform>,
                                       detail::MapOutputBatch<SourceDataset, AppliedTransform>,
                                       typename SourceDataset::BatchRequestType> {
 public:
  using DatasetType = SourceDataset;
  using TransformType = AppliedTransform;
  using BatchRequestType = typename SourceDataset::BatchRequestType;
  using OutputBatchType = detail::MapOutputBatch<SourceDataset, AppliedTransform>;

  MapDataset(SourceDataset dataset, AppliedTransform transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}

  OutputBatchType get_batch(BatchRequestType request) override {
    if constexpr (detail::is_stateful_v<SourceDataset>) {
      auto batch = dataset_.get_batch(std::move(request));
      if (!batch) return std::nullopt;
      return transform_.apply_batch(std::move(*batch));
    } else {
      return transform_.apply_batch(dataset_.get_batch(std::move(request)));
    }
  }
  std::optional<size_t> size() const override { return dataset_.size(); }

  void reset() { dataset_.reset(); }

  const SourceDataset& dataset() { return dataset_; }
  const AppliedTransform& transform() { return transform_; }

 private:
  SourceDataset dataset_;
  AppliedTransform transform_;
};

template <class D, class T>
MapDataset<D, T> map(D dataset, T transform) {
  return MapDataset<D, T>(std::move(dataset), std::move(transform));
}

}  // namespace ember::data::datasets
