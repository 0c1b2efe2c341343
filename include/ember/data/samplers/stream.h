// StreamSampler, as libtorch's: for datasets that produce batches rather than serve indices
// (stateful, streaming ones), it only counts how many examples the epoch still has and asks for
// batches of that many, as a BatchSize request.
#pragma once
#include <cstddef>
#include <optional>

#include "ember/data/samplers/base.h"

namespace ember::serialize {
class OutputArchive;
class InputArchive;
}  // namespace ember::serialize

namespace ember::data::samplers {

// libtorch's request of "this many examples" (a CustomBatchRequest there).
struct BatchSize {
  explicit BatchSize(size_t size) : size_(size) {}
  size_t size() const noexcept { return size_; }
  operator size_t() const noexcept { return size_; }  // NOLINT: libtorch converts implicitly
  size_t size_;
};

class StreamSampler : public Sampler<BatchSize> {
 public:
  explicit StreamSampler(size_t epoch_size) : epoch_size_(epoch_size) {}
  void reset(std::optional<size_t> new_size = std::nullopt) override {
    examples_retrieved_so_far_ = 0;
    if (new_size) epoch_size_ = *new_size;
  }
  // The next request: batch_size examples, fewer at the end of the epoch, nullopt after it.
  std::optional<BatchSize> next(size_t batch_size) override {
    if (examples_retrieved_so_far_ == epoch_size_) return std::nullopt;
    if (batch_size > epoch_size_ - examples_retrieved_so_far_) batch_size = epoch_size_ - examples_retrieved_so_far_;
    examples_retrieved_so_far_ += batch_size;
    return BatchSize(batch_size);
  }
  // The sampler's place in its epoch, as libtorch's (defined in ember/data/samplers/serialize.h).
  inline void save(serialize::OutputArchive& archive) const;
  inline void load(serialize::InputArchive& archive);

 private:
  size_t examples_retrieved_so_far_ = 0;
  size_t epoch_size_;
};

}  // namespace ember::data::samplers
