// Samplers' save / load, as libtorch's: each writes its place in the epoch into an archive, under
// libtorch's keys, as int64 tensors ("index" of the next index to hand out; RandomSampler also its
// permutation, "indices"; the distributed samplers "sample_index_", and "epoch_" for the random
// one, whose permutation load draws again from the epoch). `archive << sampler` and
// `archive >> sampler` call them.
//
// Here save and load are members of each sampler, not virtual functions of Sampler<> (whose
// table lives in the library): a sampler of a program's own needs no save / load unless it is a
// ChunkDataset's chunk sampler, and must not mark them `override`.
#pragma once
#include <concepts>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/data/samplers/base.h"
#include "ember/data/samplers/distributed.h"
#include "ember/data/samplers/random.h"
#include "ember/data/samplers/sequential.h"
#include "ember/data/samplers/stream.h"
#include "ember/factory.h"
#include "ember/serialize/archive.h"

namespace ember::data::detail {
inline void write_count(serialize::OutputArchive& archive, const std::string& key, size_t value) {
  archive.write(key, scalar_tensor(static_cast<int64_t>(value), TensorOptions().dtype(kLong)), /*is_buffer=*/true);
}
inline size_t read_count(serialize::InputArchive& archive, const std::string& key) {
  Tensor value;
  archive.read(key, value, /*is_buffer=*/true);
  const int64_t count = value.item<int64_t>();
  EMBER_CHECK(count >= 0, "Sampler::load", "\"", key, "\" must be non-negative, got ", count);
  return static_cast<size_t>(count);
}
}  // namespace ember::data::detail

namespace ember::data::samplers {

inline void SequentialSampler::save(serialize::OutputArchive& archive) const {
  detail::write_count(archive, "index", index_);
}
inline void SequentialSampler::load(serialize::InputArchive& archive) {
  index_ = detail::read_count(archive, "index");
}

inline void RandomSampler::save(serialize::OutputArchive& archive) const {
  std::vector<int64_t> indices(indices_.begin(), indices_.end());
  archive.write("indices", tensor(indices, TensorOptions().dtype(kLong)), /*is_buffer=*/true);
  detail::write_count(archive, "index", index_);
}
inline void RandomSampler::load(serialize::InputArchive& archive) {
  Tensor stored;
  archive.read("indices", stored, /*is_buffer=*/true);
  const Tensor indices = stored.to(kLong).contiguous().view({-1});
  const int64_t* p = indices.data_ptr<int64_t>();
  const size_t index = detail::read_count(archive, "index");
  EMBER_CHECK(index <= static_cast<size_t>(indices.numel()), "RandomSampler::load", "index ", index,
              " is past the end of the ", indices.numel(), " stored indices");
  indices_.assign(p, p + indices.numel());
  index_ = index;
}

inline void StreamSampler::save(serialize::OutputArchive& archive) const {
  detail::write_count(archive, "examples_retrieved_so_far", examples_retrieved_so_far_);
}
inline void StreamSampler::load(serialize::InputArchive& archive) {
  examples_retrieved_so_far_ = detail::read_count(archive, "examples_retrieved_so_far");
}

inline void DistributedRandomSampler::save(serialize::OutputArchive& archive) const {
  detail::write_count(archive, "sample_index_", sample_index_);
  detail::write_count(archive, "epoch_", epoch_);
}
inline void DistributedRandomSampler::load(serialize::InputArchive& archive) {
  epoch_ = detail::read_count(archive, "epoch_");
  reset(size_);  // the epoch's permutation again
  sample_index_ = detail::read_count(archive, "sample_index_");
}

inline void DistributedSequentialSampler::save(serialize::OutputArchive& archive) const {
  detail::write_count(archive, "sample_index_", sample_index_);
}
inline void DistributedSequentialSampler::load(serialize::InputArchive& archive) {
  sample_index_ = detail::read_count(archive, "sample_index_");
}

template <class S>
  requires std::derived_from<S, Sampler<typename S::BatchRequestType>>
serialize::OutputArchive& operator<<(serialize::OutputArchive& archive, const S& sampler) {
  sampler.save(archive);
  return archive;
}

template <class S>
  requires std::derived_from<S, Sampler<typename S::BatchRequestType>>
serialize::InputArchive& operator>>(serialize::InputArchive& archive, S& sampler) {
  sampler.load(archive);
  return archive;
}

}  // namespace ember::data::samplers
