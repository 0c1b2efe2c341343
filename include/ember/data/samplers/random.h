// RandomSampler: a random permutation of 0 .. size - 1, a new one at every reset (each epoch).
// Permutations come from ember's global Generator (so manual_seed makes them reproducible), or
// from the sampler's own Generator when it is given a seed.
#pragma once
#include <cstdint>
#include <memory>

#include "ember/data/samplers/base.h"
#include "ember/dtype.h"

namespace ember {
class Generator;
}

namespace ember::serialize {
class OutputArchive;
class InputArchive;
}  // namespace ember::serialize

namespace ember::data::samplers {

class RandomSampler : public Sampler<> {
 public:
  // index_dtype is accepted for libtorch compatibility; indices are always size_t here.
  explicit RandomSampler(int64_t size, ScalarType index_dtype = kInt64);
  RandomSampler(int64_t size, uint64_t seed);
  ~RandomSampler() override;
  RandomSampler(RandomSampler&&) noexcept;
  RandomSampler& operator=(RandomSampler&&) noexcept;

  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return index_; }
  // The sampler's place in its epoch, as libtorch's (defined in ember/data/samplers/serialize.h).
  inline void save(serialize::OutputArchive& archive) const;
  inline void load(serialize::InputArchive& archive);

 private:
  std::unique_ptr<Generator> generator_;  // null: the global generator
  std::vector<size_t> indices_;
  size_t index_ = 0;
};

}  // namespace ember::data::samplers
