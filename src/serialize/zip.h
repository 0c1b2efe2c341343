// Reading a zip archive held in memory, as much as PyTorch's checkpoints and TorchScript archives
// need, and writing one as PyTorch does: stored entries (and, when asked, deflated ones, which TorchScript uses for its
// code files), ZIP64 sizes and offsets, CRC-32 checks. Every size and offset read from the archive is checked against
// the archive's length before use.
#pragma once
#include <cstdint>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace ember::serialize {

struct ZipEntry {
  std::string name;
  const unsigned char* data = nullptr;  // inside the archive buffer
  uint64_t size = 0;  // of the entry's contents (uncompressed)
  uint32_t crc32 = 0;  // as recorded in the directory
  // Deflated entries (only with allow_deflate): `data` holds compressed_size bytes of raw deflate
  // stream that the caller inflates to `size` bytes.
  bool deflated = false;
  uint64_t compressed_size = 0;
};

// The entries of the archive in directory order. Throws ember::Error (naming `what`) on anything
// malformed: truncation, bad signatures, compressed or encrypted entries, ranges out of bounds,
// duplicate names, entries overlapping each other (so the entries' sizes sum to at most the
// archive's, and nothing built from them can exceed it).
std::vector<ZipEntry> read_zip(const unsigned char* data, uint64_t size, const std::string& what,
                               bool allow_deflate = false);

// Throws unless the entry's bytes match its CRC-32. Checked on use, so each byte is hashed once.
void check_crc(const ZipEntry& e, const std::string& what);
// The same for a deflated entry's inflated bytes.
void check_crc(const ZipEntry& e, const unsigned char* inflated, uint64_t n, const std::string& what);

// One entry to write: its name and bytes (not owned).
struct ZipRecord {
  std::string name;
  const void* data = nullptr;
  uint64_t size = 0;
};

// Writes the records as a zip of stored entries with their CRC-32s, each entry's bytes at a multiple
// of 64 in the file (the local header's extra field padded, as PyTorch's writer does, so a reader
// can map tensors in place). No ZIP64: an archive past 4 GiB is an ember::Error naming `what`, as
// is a failed write.
void write_zip(std::ostream& out, const std::vector<ZipRecord>& records, const std::string& what);

// The rest of a stream's bytes, read from its buffer in blocks (an istreambuf_iterator's character
// at a time spent most of a loaded model's time copying it), leaving the stream's state as it was.
std::string read_rest(std::istream& in);

}  // namespace ember::serialize
