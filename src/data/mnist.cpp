// The IDX reader behind datasets::MNIST. IDX files: a big-endian header (magic number, then one
// 32-bit count per dimension) followed by the raw uint8 values.
#include <zlib.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ember/data/datasets/mnist.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/indexing.h"

namespace ember::data::datasets {
namespace {

constexpr const char* kOp = "MNIST";
constexpr uint32_t kImageMagic = 2051, kLabelMagic = 2049;
constexpr size_t kImageHeader = 16, kLabelHeader = 8;

struct IdxFile {
  std::string path;
  std::vector<uint8_t> bytes;  // decompressed
};

// `name` under root, or `name.gz` when the plain file is absent. gzread passes plain files
// through unchanged, so both are read the same way.
IdxFile read_idx(const std::string& root, const std::string& name) {
  IdxFile file{(std::filesystem::path(root) / name).string(), {}};
  if (!std::filesystem::exists(file.path)) {
    const std::string gz = file.path + ".gz";
    EMBER_CHECK(std::filesystem::exists(gz), kOp, "cannot find ", file.path, " (nor ", gz, ")");
    file.path = gz;
  }
  std::unique_ptr<gzFile_s, int (*)(gzFile)> in(gzopen(file.path.c_str(), "rb"), gzclose);
  EMBER_CHECK(in != nullptr, kOp, "cannot open ", file.path, ": ", std::strerror(errno));
  constexpr unsigned kChunk = 1u << 20;
  for (;;) {
    const size_t old = file.bytes.size();
    file.bytes.resize(old + kChunk);
    const int n = gzread(in.get(), file.bytes.data() + old, kChunk);
    if (n < 0) {
      int code = 0;
      const char* msg = gzerror(in.get(), &code);
      detail::fail(kOp, "cannot read ", file.path, " (truncated or corrupt gzip data): ", msg);
    }
    file.bytes.resize(old + static_cast<size_t>(n));
    if (static_cast<unsigned>(n) < kChunk) break;
  }
  // zlib reports a gzip stream cut short only as a Z_BUF_ERROR left after the last read.
  int code = 0;
  const char* msg = gzerror(in.get(), &code);
  EMBER_CHECK(code == Z_OK, kOp, "cannot read ", file.path, " (truncated or corrupt gzip data): ", msg);
  return file;
}

uint32_t read_u32(const IdxFile& file, size_t offset) {
  const uint8_t* p = file.bytes.data() + offset;
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

// Checks the magic number and that the file holds exactly what its header announces; returns
// the dimensions the header gives after the magic number.
std::vector<int64_t> check_idx(const IdxFile& file, uint32_t magic, size_t header, const char* what) {
  EMBER_CHECK(file.bytes.size() >= header, kOp, file.path, " is truncated: ", file.bytes.size(),
              " bytes, shorter than the ", header, "-byte header of an IDX ", what, " file");
  const uint32_t found = read_u32(file, 0);
  EMBER_CHECK(found == magic, kOp, file.path, " is not an IDX ", what, " file: bad magic number ", found,
              " (expected ", magic, ")");
  std::vector<int64_t> dims;
  uint64_t payload = 1;
  for (size_t offset = 4; offset < header; offset += 4) {
    dims.push_back(read_u32(file, offset));
    // a header announcing more than 2^64 bytes is as wrong as one announcing too many
    if (__builtin_mul_overflow(payload, static_cast<uint64_t>(dims.back()), &payload)) payload = UINT64_MAX - header;
  }
  const uint64_t expected = header + payload;
  EMBER_CHECK(file.bytes.size() == expected, kOp, file.path, " is ",
              file.bytes.size() < expected ? "truncated" : "corrupt", ": its header announces ", dims[0], " ",
              what, "s (", expected, " bytes) but the file holds ", file.bytes.size(), " bytes");
  return dims;
}

Tensor from_idx(const IdxFile& file, size_t header, IntArrayRef sizes) {
  return from_blob(const_cast<uint8_t*>(file.bytes.data()) + header, sizes, kByte);
}

void check_index(size_t index, int64_t size) {
  EMBER_CHECK(index < static_cast<size_t>(size), kOp, "index ", index, " is out of range for a dataset of ", size,
              " examples");
}

}  // namespace

MNIST::MNIST(const std::string& root, Mode mode) : is_train_(mode == Mode::kTrain) {
  const std::string prefix = is_train_ ? "train" : "t10k";
  const IdxFile images = read_idx(root, prefix + "-images-idx3-ubyte");
  const IdxFile labels = read_idx(root, prefix + "-labels-idx1-ubyte");
  const std::vector<int64_t> image_dims = check_idx(images, kImageMagic, kImageHeader, "image");
  const std::vector<int64_t> label_dims = check_idx(labels, kLabelMagic, kLabelHeader, "label");
  EMBER_CHECK(image_dims[0] == label_dims[0], kOp, images.path, " holds ", image_dims[0], " images but ",
              labels.path, " holds ", label_dims[0], " labels");
  // As libtorch: float32 in [0, 1] (a division by 255, rounded as libtorch rounds it).
  images_ = from_idx(images, kImageHeader, {image_dims[0], 1, image_dims[1], image_dims[2]}).to(kFloat32).div_(255);
  targets_ = from_idx(labels, kLabelHeader, {label_dims[0]}).to(kInt64);
}

Example<> MNIST::get(size_t index) {
  check_index(index, images_.size(0));
  const auto i = static_cast<int64_t>(index);
  return {images_[i], targets_[i]};
}

std::vector<Example<>> MNIST::get_batch(ArrayRef<size_t> indices) {
  std::vector<int64_t> rows(indices.size());
  for (size_t k = 0; k < indices.size(); ++k) {
    check_index(indices[k], images_.size(0));
    rows[k] = static_cast<int64_t>(indices[k]);
  }
  const Tensor index = tensor(rows);
  const Tensor images = images_.index_select(0, index), targets = targets_.index_select(0, index);
  std::vector<Example<>> batch;
  batch.reserve(indices.size());
  for (size_t k = 0; k < indices.size(); ++k) {
    const auto i = static_cast<int64_t>(k);
    batch.emplace_back(images[i], targets[i]);
  }
  return batch;
}

std::optional<size_t> MNIST::size() const { return static_cast<size_t>(images_.size(0)); }

}  // namespace ember::data::datasets
