// MapDataset: a dataset whose batches go through a transform (dataset.map(Stack<>())). Over a
// stateful dataset the batches are optional: nullopt (the end of the epoch) passes through, and
// reset() reaches the source, as libtorch's.
#pragma once
#include <optional>
#include <type_traits>
#include <utility>

#include "ember/data/datasets/base.h"

namespace ember::detail {
// The transform's batch, optional when the source dataset is stateful.
template <class SourceDataset, class AppliedTransform>
using MapOutputBatch = std::conditional_t<is_stateful_dataset_v<SourceDataset>,
                                          std::optional<typename AppliedTransform::OutputBatchType>,
                                          typename AppliedTransform::OutputBatchType>;
}  // namespace ember::detail

namespace ember::data::datasets {

template <class SourceDataset, class AppliedTransform>
class MapDataset : public BatchDataset<MapDataset<SourceDataset, AppliedTransform>,
                                       ::ember::detail::MapOutputBatch<SourceDataset, AppliedTransform>,
                                       typename SourceDataset::BatchRequestType> {
 public:
  using DatasetType = SourceDataset;
  using TransformType = AppliedTransform;
  using BatchRequestType = typename SourceDataset::BatchRequestType;
  using OutputBatchType = ::ember::detail::MapOutputBatch<SourceDataset, AppliedTransform>;

  MapDataset(SourceDataset dataset, AppliedTransform transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}

  OutputBatchType get_batch(BatchRequestType request) override {
    if constexpr (::ember::detail::is_stateful_dataset_v<SourceDataset>) {
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
