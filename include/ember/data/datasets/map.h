// MapDataset: a dataset whose batches go through a transform (dataset.map(Stack<>())).
#pragma once
#include <optional>
#include <utility>

#include "ember/data/datasets/base.h"

namespace ember::data::datasets {

template <class SourceDataset, class AppliedTransform>
class MapDataset : public BatchDataset<MapDataset<SourceDataset, AppliedTransform>,
                                       typename AppliedTransform::OutputBatchType,
                                       typename SourceDataset::BatchRequestType> {
 public:
  using DatasetType = SourceDataset;
  using TransformType = AppliedTransform;
  using BatchRequestType = typename SourceDataset::BatchRequestType;
  using OutputBatchType = typename AppliedTransform::OutputBatchType;

  MapDataset(SourceDataset dataset, AppliedTransform transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}

  OutputBatchType get_batch(BatchRequestType request) override {
    return transform_.apply_batch(dataset_.get_batch(std::move(request)));
  }
  std::optional<size_t> size() const override { return dataset_.size(); }

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
