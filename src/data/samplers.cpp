#include <algorithm>
#include <mutex>
#include <numeric>

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

// Fisher-Yates over a fresh 0 .. size - 1, so a permutation depends only on the generator's state.
void RandomSampler::reset(std::optional<size_t> new_size) {
  if (new_size) indices_.resize(*new_size);
  std::iota(indices_.begin(), indices_.end(), size_t{0});
  Generator& gen = generator_ ? *generator_ : default_generator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  for (size_t i = indices_.size(); i > 1; --i) {
    std::swap(indices_[i - 1], indices_[gen.next_u64() % i]);
  }
  index_ = 0;
}

std::optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) {
  return take(&indices_, indices_.size(), index_, batch_size);
}

}  // namespace ember::data::samplers
