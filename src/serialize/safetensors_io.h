// safetensors files through any byte sink or source: files, streams, memory (the archives).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "ember/serialize.h"
#include "serialize/safetensors_format.h"

namespace ember::serialize {

// Writes the header, then each tensor's bytes, through `sink`. Every tensor is checked before
// the sink sees a byte.
void write_safetensors(const OrderedDict<std::string, Tensor>& tensors, const StringPairs& metadata,
                       const std::function<void(const void*, uint64_t)>& sink, const std::string& what);

// `size` bytes, read in order by `read` (which throws rather than return fewer).
struct ByteSource {
  uint64_t size;
  std::function<void(void*, uint64_t)> read;
};

// The header and, if `tensors` is given, every tensor. Sizes are validated against the source's
// size before anything is allocated, so no input makes Ember allocate more than it holds.
SafetensorsHeader read_safetensors(const ByteSource& source, OrderedDict<std::string, Tensor>* tensors,
                                   const std::string& what);

}  // namespace ember::serialize
