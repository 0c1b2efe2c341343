// libFuzzer target: the safetensors header reader on arbitrary bytes. It does what
// ember::load_tensors does short of making tensors: validates, then allocates and copies each
// tensor's bytes, so -malloc_limit_mb catches any size taken from the file without a check.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ember/error.h"
#include "serialize/safetensors_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember::serialize;
  const std::string what = "fuzz";
  try {
    unsigned char prefix[8] = {};
    std::memcpy(prefix, data, size < 8 ? size : 8);
    const uint64_t n = safetensors_header_length(prefix, size, what);
    const std::string_view header(reinterpret_cast<const char*>(data) + 8, n);
    const SafetensorsHeader h = parse_safetensors_header(header, size - 8 - n, what);
    const unsigned char* buffer = data + 8 + n;
    for (const SafetensorsEntry& e : h.entries) {
      std::vector<unsigned char> bytes(buffer + e.begin, buffer + e.end);
      if (e.dtype == ember::kBool) check_bool_bytes(bytes.data(), bytes.size(), what, e.name);
    }
  } catch (const ember::Error&) {
    // Rejecting the input with ember::Error is the expected outcome for most inputs.
  }
  return 0;
}
