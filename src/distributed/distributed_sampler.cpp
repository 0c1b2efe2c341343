// DistributedSampler: PyTorch's partition of a dataset's indices among the ranks.
#include "ember/data/samplers/distributed_sampler.h"

#include <algorithm>
#include <numeric>

#include "ember/distributed.h"
#include "ember/error.h"
#include "ember/factory.h"

namespace ember::distributed {

DistributedSampler::DistributedSampler(size_t dataset_size, std::optional<size_t> num_replicas,
                                       std::optional<size_t> rank, bool shuffle, uint64_t seed, bool drop_last)
    : dataset_size_(dataset_size),
      num_replicas_(num_replicas ? *num_replicas : static_cast<size_t>(get_world_size())),
      rank_(rank ? *rank : static_cast<size_t>(get_rank())),
      shuffle_(shuffle),
      seed_(seed),
      drop_last_(drop_last) {
  EMBER_CHECK(num_replicas_ > 0, "DistributedSampler", "num_replicas must be positive");
  EMBER_CHECK(rank_ < num_replicas_, "DistributedSampler", "Invalid rank ", rank_,
              ", rank should be in the interval [0, ", num_replicas_ - 1, "]");
  reset();
}

void DistributedSampler::reset(std::optional<size_t> new_size) {
  if (new_size) dataset_size_ = *new_size;
  const size_t n = dataset_size_, r = num_replicas_;
  // PyTorch: with drop_last and a remainder, ceil((n - r) / r) each; otherwise ceil(n / r)
  num_samples_ = drop_last_ && n % r != 0 ? (n - std::min(n, r) + r - 1) / r : (n + r - 1) / r;
  const size_t total = num_samples_ * r;
  std::vector<size_t> all(n);
  std::iota(all.begin(), all.end(), size_t{0});
  if (shuffle_) {
    Generator g(seed_ + epoch_);  // PyTorch's torch.randperm(n, generator=g), the same numbers
    const Tensor perm = randperm(static_cast<int64_t>(n), &g);
    const int64_t* p = perm.data_ptr<int64_t>();
    for (size_t i = 0; i < n; ++i) all[i] = static_cast<size_t>(p[i]);
  }
  if (total > n && n > 0) {
    // pad with the first indices, repeated as often as needed
    for (size_t i = n; i < total; ++i) all.push_back(all[(i - n) % n]);
  }
  all.resize(std::min(all.size(), total));
  indices_.clear();
  for (size_t i = rank_; i < all.size(); i += r) indices_.push_back(all[i]);
  position_ = 0;
}

std::optional<std::vector<size_t>> DistributedSampler::next(size_t batch_size) {
  if (position_ >= indices_.size()) return std::nullopt;
  const size_t end = std::min(indices_.size(), position_ + batch_size);
  std::vector<size_t> batch(indices_.begin() + static_cast<std::ptrdiff_t>(position_),
                            indices_.begin() + static_cast<std::ptrdiff_t>(end));
  position_ = end;
  return batch;
}

}  // namespace ember::distributed
