// Reading a zip archive held in memory, as much as PyTorch's checkpoints need: stored (not
// compressed) entries, ZIP64 sizes and offsets, CRC-32 checks. Every size and offset read from
// the archive is checked against the archive's length before use.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ember::serialize {

struct ZipEntry {
  std::string name;
  const unsigned char* data = nullptr;  // inside the archive buffer
  uint64_t size = 0;
};

// The entries of the archive in directory order. Throws ember::Error (naming `what`) on anything
// malformed: truncation, bad signatures, compressed or encrypted entries, ranges out of bounds,
// duplicate names, CRC mismatches.
std::vector<ZipEntry> read_zip(const unsigned char* data, uint64_t size, const std::string& what);

uint32_t crc32(const unsigned char* data, uint64_t n);

}  // namespace ember::serialize
