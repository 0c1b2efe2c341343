// The sampler interface, as libtorch's: a sampler hands out batch requests (lists of indices)
// until the epoch is exhausted; reset starts a new epoch.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

namespace ember::data::samplers {

template <class BatchRequest = std::vector<size_t>>
class Sampler {
 public:
  using BatchRequestType = BatchRequest;

  virtual ~Sampler() = default;
  // Starts a new epoch, over `new_size` indices when given.
  virtual void reset(std::optional<size_t> new_size) = 0;
  // The next at most `batch_size` indices; nullopt once the epoch is exhausted.
  virtual std::optional<BatchRequest> next(size_t batch_size) = 0;
};

}  // namespace ember::data::samplers
