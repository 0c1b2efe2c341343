// The safetensors container without tensors: header parsing, validation against the file size,
// and header writing. Kept free of Tensor so the fuzz target compiles it alone.
//
// Layout: u64 little-endian N, N bytes of JSON {name: {dtype, shape, data_offsets: [begin, end]},
// "__metadata__": {string: string}} (space-padded), then the data buffer that the offsets index.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ember/dtype.h"

namespace ember::serialize {

// safetensors' own limit; a longer header is treated as corrupt rather than allocated.
constexpr uint64_t kMaxSafetensorsHeader = uint64_t{100} << 20;

struct SafetensorsEntry {
  std::string name;
  ScalarType dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte range within the data buffer
};

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;  // in data order
  std::vector<std::pair<std::string, std::string>> metadata;
};

// The header length N from the 8-byte prefix, checked against the file size. `what` names the file.
uint64_t safetensors_header_length(const unsigned char* prefix, uint64_t file_size, const std::string& what);

// Parses the header and checks every entry: known dtype, sizes that multiply without overflow to
// exactly the byte range, ranges inside the data buffer that cover it without holes or overlaps.
SafetensorsHeader parse_safetensors_header(std::string_view header, uint64_t data_size, const std::string& what);

// Throws unless every byte is 0 or 1 (any other byte is not a bool and reading it is undefined).
void check_bool_bytes(const unsigned char* data, uint64_t n, const std::string& what, const std::string& name);

const char* safetensors_dtype_name(ScalarType t);  // "F32", ...

// The 8-byte prefix and the JSON header, padded with spaces so the data starts 8-byte aligned.
// Entries give their byte ranges; metadata may be empty.
std::string safetensors_header(const std::vector<SafetensorsEntry>& entries,
                               const std::vector<std::pair<std::string, std::string>>& metadata);

}  // namespace ember::serialize
