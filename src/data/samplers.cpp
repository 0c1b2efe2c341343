#include <algorithm>
#include <mutex>
#include <numeric>
#include <random>

#include "ember/data/samplers/distributed.h"
#include "ember/data/samplers/random.h"
#include "ember/data/samplers/sequential.h"
#include "ember/error.h"
#include "ember/factory.h"

namespace ember::data::samplers {

namespace {
std::optional<std::vector<size_t>> take(const std::vector<size_t>* indices, size_t size, size_t& index,
                                        size_t batch_size) {
  if (index >= size) return std::nullopt;
  const size_t end = std::min(size, index + batch_size);
  std::vector<size_t> batch(end - index);
  if (indices) {
    std::copy(indices->begin() + static_cast<std::ptrdiff_t>(index),
              indices->begin() + static_cast<std::ptrdiff_t>(end), batch.begin());
  } else {
    std::iota(batch.begin(), batch.end(), index);
  }
  index = end;
  return batch;
}
}  // namespace

void SequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  index_ = 0;
}

std::optional<std::vector<size_t>> SequentialSampler::next(size_t batch_size) {
  return take(nullptr, size_, index_, batch_size);
}

RandomSampler::RandomSampler(int64_t size, ScalarType index_dtype) {
  EMBER_CHECK(size >= 0, "RandomSampler", "size must be non-negative, got ", size);
  indices_.resize(static_cast<size_t>(size));
  reset();
}

RandomSampler::RandomSampler(int64_t size, uint64_t seed) : generator_(std::make_unique<Generator>(seed)) {
  EMBER_CHECK(size >= 0, "RandomSampler", "size must be non-negative, got ", size);
  indices_.resize(static_cast<size_t>(size));
  reset();
}

RandomSampler::~RandomSampler() = default;
RandomSampler::RandomSampler(RandomSampler&&) noexcept = default;
RandomSampler& RandomSampler::operator=(RandomSampler&&) noexcept = default;

// libtorch's RandomSampler: torch::randperm(size) at each reset, so a seed gives libtorch's order.
void RandomSampler::reset(std::optional<size_t> new_size) {
  if (new_size) indices_.resize(*new_size);
  const Tensor perm = randperm(static_cast<int64_t>(indices_.size()), generator_.get(), TensorOptions().dtype(kLong));
  const int64_t* p = perm.data_ptr<int64_t>();
  for (size_t i = 0; i < indices_.size(); ++i) indices_[i] = static_cast<size_t>(p[i]);
  index_ = 0;
}

std::optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) {
  return take(&indices_, indices_.size(), index_, batch_size);
}

}  // namespace ember::data::samplers

namespace ember::data::samplers {

namespace {
void check_replicas(const char* op, size_t num_replicas, size_t rank) {
  EMBER_CHECK(num_replicas > 0, op, "num_replicas must be positive");
  EMBER_CHECK(rank < num_replicas, op, "rank ", rank, " is not below num_replicas ", num_replicas);
}
}  // namespace

DistributedRandomSampler::DistributedRandomSampler(size_t size, size_t num_replicas, size_t rank,
                                                   bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  check_replicas("DistributedRandomSampler", num_replicas, rank);
  reset();
}

void DistributedRandomSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  // every index once, then (with duplicates) the first ones again until the shares are equal
  const size_t local = local_sample_count();
  const size_t count = num_replicas_ == 1 ? size_ : local * num_replicas_;
  all_indices_.resize(count);
  for (size_t i = 0; i < count; ++i) all_indices_[i] = i < size_ ? i : i - size_;
  std::mt19937 engine(static_cast<std::mt19937::result_type>(epoch_));
  std::shuffle(all_indices_.begin(), all_indices_.end(), engine);
  begin_index_ = rank_ * local;
  end_index_ = begin_index_ + local;
  sample_index_ = begin_index_;
}

std::optional<std::vector<size_t>> DistributedRandomSampler::next(size_t batch_size) {
  if (sample_index_ == end_index_) return std::nullopt;
  const size_t end = std::min(end_index_, sample_index_ + batch_size);
  std::vector<size_t> batch(all_indices_.begin() + static_cast<std::ptrdiff_t>(sample_index_),
                            all_indices_.begin() + static_cast<std::ptrdiff_t>(end));
  sample_index_ = end;
  return batch;
}

DistributedSequentialSampler::DistributedSequentialSampler(size_t size, size_t num_replicas, size_t rank,
                                                           bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  check_replicas("DistributedSequentialSampler", num_replicas, rank);
  place();
}

void DistributedSequentialSampler::place() {
  begin_index_ = rank_ * local_sample_count();
  end_index_ = begin_index_ + local_sample_count();
  sample_index_ = begin_index_;
}

void DistributedSequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  place();
}

std::optional<std::vector<size_t>> DistributedSequentialSampler::next(size_t batch_size) {
  if (sample_index_ == end_index_) return std::nullopt;
  const size_t end = std::min(end_index_, sample_index_ + batch_size);
  std::vector<size_t> batch(end - sample_index_);
  std::iota(batch.begin(), batch.end(), sample_index_);
  for (size_t& i : batch) i %= size_;  // the last share wraps around to the first indices
  sample_index_ = end;
  return batch;
}

}  // namespace ember::data::samplers
