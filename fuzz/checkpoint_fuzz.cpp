// libFuzzer target: the PyTorch checkpoint reader (zip, restricted unpickler, storage and view
// checks) on arbitrary bytes. Like ember::load_torch_checkpoint short of making tensors, it
// copies every storage and reads the first and last element of every view.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ember/error.h"
#include "serialize/checkpoint_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember::serialize;
  try {
    const TorchCheckpoint ck = read_torch_checkpoint(data, size, "fuzz");
    std::vector<std::vector<unsigned char>> storages;
    for (const auto& [s, bytes] : ck.storage_data)
      storages.emplace_back(bytes, bytes + s->numel * static_cast<int64_t>(ember::element_size(s->dtype)));
    volatile unsigned char sink = 0;
    for (const auto& [name, t] : ck.tensors) {
      int64_t numel = 1, last = t->storage_offset;
      for (size_t d = 0; d < t->sizes.size(); ++d) {
        numel *= t->sizes[d];
        if (t->sizes[d] > 0) last += (t->sizes[d] - 1) * t->strides[d];
      }
      if (numel == 0) continue;
      const unsigned char* base = ck.storage_data.at(t->items[0]);
      const int64_t size_of = static_cast<int64_t>(ember::element_size(t->items[0]->dtype));
      sink = sink + base[t->storage_offset * size_of] + base[last * size_of + size_of - 1];
    }
  } catch (const ember::Error&) {
    // Rejecting the input with ember::Error is the expected outcome for most inputs.
  }
  return 0;
}
