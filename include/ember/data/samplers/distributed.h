// Samplers for data-parallel training, as libtorch's: each of `num_replicas` processes takes the
// `rank`-th share of the indices. With allow_duplicates every share has ceil(size / replicas)
// indices (the first ones repeat to fill the last share); without, floor(size / replicas), and
// the remainder is never drawn. DistributedRandomSampler shuffles all indices with std::mt19937
// seeded by the epoch (set_epoch), so every replica draws the same permutation and the shares
// are disjoint; the order equals libtorch's.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

#include "ember/data/samplers/base.h"

namespace ember::serialize {
class OutputArchive;
class InputArchive;
}  // namespace ember::serialize

namespace ember::data::samplers {

template <class BatchRequest = std::vector<size_t>>
class DistributedSampler : public Sampler<BatchRequest> {
 public:
  DistributedSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true)
      : size_(size), num_replicas_(num_replicas), rank_(rank), allow_duplicates_(allow_duplicates) {}

  void set_epoch(size_t epoch) { epoch_ = epoch; }
  size_t epoch() const { return epoch_; }

 protected:
  size_t local_sample_count() const {
    return allow_duplicates_ ? (size_ + num_replicas_ - 1) / num_replicas_ : size_ / num_replicas_;
  }

  size_t size_;
  size_t num_replicas_;
  size_t rank_;
  size_t epoch_ = 0;
  bool allow_duplicates_;
};

class DistributedRandomSampler : public DistributedSampler<> {
 public:
  DistributedRandomSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);
  // Draws the permutation of the current epoch (over `new_size` indices when given).
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return sample_index_; }  // as libtorch: from the start of all indices
  // The sampler's place in its epoch, as libtorch's (defined in ember/data/samplers/serialize.h).
  inline void save(serialize::OutputArchive& archive) const;
  inline void load(serialize::InputArchive& archive);

 private:
  size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;
  std::vector<size_t> all_indices_;
};

class DistributedSequentialSampler : public DistributedSampler<> {
 public:
  DistributedSequentialSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return sample_index_; }  // as libtorch: from the start of all indices
  // The sampler's place in its epoch, as libtorch's (defined in ember/data/samplers/serialize.h).
  inline void save(serialize::OutputArchive& archive) const;
  inline void load(serialize::InputArchive& archive);

 private:
  void place();
  size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;
};

}  // namespace ember::data::samplers
