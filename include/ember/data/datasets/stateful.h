// StatefulDataset, as libtorch's: a dataset that keeps its own place in the epoch. get_batch takes
// the number of examples wanted and answers nullopt once the epoch is over; reset() starts the
// next one (the data loader calls it at every begin()); save / load write and read that place.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

#include "ember/data/datasets/base.h"
#include "ember/data/example.h"

namespace ember::serialize {
class OutputArchive;
class InputArchive;
}  // namespace ember::serialize

namespace ember::data::datasets {

// The batch type given here is what one batch holds; the dataset's BatchType is its optional.
template <class Self, class Batch = std::vector<Example<>>, class BatchRequest = size_t>
class StatefulDataset : public BatchDataset<Self, std::optional<Batch>, BatchRequest> {
 public:
  virtual void reset() = 0;
  virtual void save(serialize::OutputArchive& archive) const = 0;
  virtual void load(serialize::InputArchive& archive) = 0;
};

template <class... Args>
serialize::OutputArchive& operator<<(serialize::OutputArchive& archive, const StatefulDataset<Args...>& dataset) {
  dataset.save(archive);
  return archive;
}

template <class... Args>
serialize::InputArchive& operator>>(serialize::InputArchive& archive, StatefulDataset<Args...>& dataset) {
  dataset.load(archive);
  return archive;
}

}  // namespace ember::data::datasets
