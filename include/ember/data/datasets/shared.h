// SharedBatchDataset, as libtorch's: a dataset that is a shared_ptr to another one, so copies of it
// (the loader's, its workers') all use the one underlying dataset, which must then be safe to call
// from several threads. make_shared_dataset<D>(args...) builds D in place, as make_shared does.
// This is how a dataset that cannot be copied or moved (a ChunkDataset) reaches make_data_loader.
#pragma once
#include <memory>
#include <optional>
#include <utility>

#include "ember/data/datasets/base.h"

namespace ember::serialize {
class OutputArchive;
class InputArchive;
}  // namespace ember::serialize

namespace ember::data::datasets {

template <class UnderlyingDataset>
class SharedBatchDataset
    : public BatchDataset<SharedBatchDataset<UnderlyingDataset>, typename UnderlyingDataset::BatchType,
                          typename UnderlyingDataset::BatchRequestType> {
 public:
  using BatchType = typename UnderlyingDataset::BatchType;
  using BatchRequestType = typename UnderlyingDataset::BatchRequestType;

  SharedBatchDataset(std::shared_ptr<UnderlyingDataset> shared_dataset)  // NOLINT: implicit, as libtorch
      : dataset_(std::move(shared_dataset)) {}

  BatchType get_batch(BatchRequestType request) override { return dataset_->get_batch(std::move(request)); }
  std::optional<size_t> size() const override { return dataset_->size(); }

  UnderlyingDataset& operator*() { return *dataset_; }
  const UnderlyingDataset& operator*() const { return *dataset_; }
  UnderlyingDataset* operator->() { return dataset_.get(); }
  const UnderlyingDataset* operator->() const { return dataset_.get(); }

  // Forwarded to the underlying dataset; each exists only when it has it. libtorch forwards reset;
  // save and load are Ember's addition.
  void reset() { dataset_->reset(); }
  void save(serialize::OutputArchive& archive) const { dataset_->save(archive); }
  void load(serialize::InputArchive& archive) { dataset_->load(archive); }

 private:
  std::shared_ptr<UnderlyingDataset> dataset_;
};

template <class UnderlyingDataset, class... Args>
SharedBatchDataset<UnderlyingDataset> make_shared_dataset(Args&&... args) {
  return std::make_shared<UnderlyingDataset>(std::forward<Args>(args)...);
}

}  // namespace ember::data::datasets
