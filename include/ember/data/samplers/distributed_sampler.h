// PyTorch's torch.utils.data.distributed.DistributedSampler (library ember_distributed): each of
// num_replicas processes draws the rank-th of num_replicas strided shares of the dataset's
// indices. With shuffle, the indices are permuted by a generator seeded with seed + epoch (the
// same permutation on every rank; call set_epoch each epoch). Without drop_last the indices are
// padded with their first ones up to a multiple of num_replicas; with it the tail is dropped.
// (libtorch's samplers::DistributedRandomSampler shares contiguous chunks instead.)
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ember/data/samplers/base.h"

namespace ember::distributed {

class DistributedSampler : public data::samplers::Sampler<> {
 public:
  // num_replicas and rank default to the default process group's size and rank.
  explicit DistributedSampler(size_t dataset_size, std::optional<size_t> num_replicas = std::nullopt,
                              std::optional<size_t> rank = std::nullopt, bool shuffle = true, uint64_t seed = 0,
                              bool drop_last = false);
  void set_epoch(size_t epoch) { epoch_ = epoch; }
  size_t epoch() const { return epoch_; }
  // The number of indices this rank draws per epoch (PyTorch's len(sampler)).
  size_t size() const { return num_samples_; }
  // Starts the epoch set by set_epoch (over `new_size` indices when given).
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  // This rank's indices of the current epoch, in order.
  const std::vector<size_t>& indices() const { return indices_; }

 private:
  size_t dataset_size_, num_replicas_, rank_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  size_t epoch_ = 0, num_samples_ = 0, position_ = 0;
  std::vector<size_t> indices_;
};

}  // namespace ember::distributed
