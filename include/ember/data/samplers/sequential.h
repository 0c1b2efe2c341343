// SequentialSampler: 0, 1, ..., size - 1 in order.
#pragma once
#include "ember/data/samplers/base.h"

namespace ember::serialize {
class OutputArchive;
class InputArchive;
}  // namespace ember::serialize

namespace ember::data::samplers {

class SequentialSampler : public Sampler<> {
 public:
  explicit SequentialSampler(size_t size) : size_(size) {}

  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return index_; }
  // The sampler's place in its epoch, as libtorch's (defined in ember/data/samplers/serialize.h).
  inline void save(serialize::OutputArchive& archive) const;
  inline void load(serialize::InputArchive& archive);

 private:
  size_t size_;
  size_t index_ = 0;
};

}  // namespace ember::data::samplers
