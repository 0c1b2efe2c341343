// PyTorch's zip checkpoint (torch.save since 1.6) without Ember tensors, so the fuzz target
// compiles it alone: <prefix>/data.pkl is the pickled object, <prefix>/data/<key> the raw bytes
// of storage <key>, <prefix>/byteorder "little" or absent.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "serialize/pickle.h"
#include "serialize/zip.h"

namespace ember::serialize {

struct TorchCheckpoint {
  Unpickled pickle;
  // Tensors by flattened name ("fc.weight"; nested dicts and lists join their keys with '.').
  std::vector<std::pair<std::string, const PickleObject*>> tensors;
  // The bytes of each storage the tensors use, checked to hold its numel elements.
  std::unordered_map<const PickleObject*, const unsigned char*> storage_data;
};

// Reads and validates everything: archive structure, pickle, storage sizes, each tensor's
// extent inside its storage, bool bytes. Pointers refer into `data`.
TorchCheckpoint read_torch_checkpoint(const unsigned char* data, uint64_t size, const std::string& what);

// For tensor `t` (named `name` in messages): records in `storage_data` the bytes of its storage,
// the entry <dir><key> of `entries`, once checked to hold the storage's elements (CRC,
// bool bytes), and checks that t's elements lie inside the storage.
void check_tensor_storage(const PickleObject* t, const std::string& name,
                          const std::unordered_map<std::string, const ZipEntry*>& entries, const std::string& dir,
                          std::unordered_map<const PickleObject*, const unsigned char*>& storage_data,
                          const std::string& what);

}  // namespace ember::serialize
