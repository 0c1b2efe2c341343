// The MNIST reader and the Normalize / Stack transforms against libtorch's. libtorch reads only
// uncompressed IDX files, so the gzip-compressed ones are inflated into a temporary directory;
// Ember reads both the compressed originals and the inflated copies.
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "parity/parity.h"

namespace {

namespace fs = std::filesystem;
constexpr parity::Tol kExact{0, 0};
const char* const kFiles[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                              "t10k-labels-idx1-ubyte"};

class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void gunzip(const fs::path& from, const fs::path& to) {
  gzFile in = gzopen(from.c_str(), "rb");
  ASSERT_NE(in, nullptr) << from;
  std::ofstream out(to, std::ios::binary);
  char buf[1 << 16];
  int n;
  while ((n = gzread(in, buf, sizeof buf)) > 0) out.write(buf, n);
  gzclose(in);
  ASSERT_EQ(n, 0) << from;
}

void expect_same(const std::string& ember_root, const std::string& torch_root) {
  using EMode = ember::data::datasets::MNIST::Mode;
  using TMode = torch::data::datasets::MNIST::Mode;
  for (bool train : {true, false}) {
    ember::data::datasets::MNIST e(ember_root, train ? EMode::kTrain : EMode::kTest);
    torch::data::datasets::MNIST t(torch_root, train ? TMode::kTrain : TMode::kTest);
    EXPECT_TRUE(parity::Close(e.images(), t.images(), kExact)) << (train ? "train" : "test");
    EXPECT_TRUE(parity::Close(e.targets(), t.targets(), kExact)) << (train ? "train" : "test");
    ASSERT_EQ(*e.size(), *t.size());

    // A normalized, stacked batch of a few examples.
    const std::vector<size_t> indices = {3, 0, *e.size() - 1};
    const auto eb = ember::data::transforms::Stack<>().apply_batch(
        ember::data::transforms::Normalize<>(0.2860, 0.3530).apply_batch(e.get_batch(indices)));
    const auto tb = torch::data::transforms::Stack<>().apply_batch(
        torch::data::transforms::Normalize<>(0.2860, 0.3530).apply_batch(t.get_batch(indices)));
    EXPECT_TRUE(parity::Close(eb.data, tb.data, kExact));
    EXPECT_TRUE(parity::Close(eb.target, tb.target, kExact));
  }
}

// Random IDX files; libtorch insists on MNIST's counts (60000 and 10000 images of 28x28).
TEST(DataParity, MnistOnRandomFiles) {
  TempDir dir("ember_data_parity_random");
  ember::Generator g(5);
  for (const char* name : kFiles) {
    const bool images = std::string(name).find("images") != std::string::npos;
    const uint32_t n = std::string(name).starts_with("train") ? 60000 : 10000;
    const uint32_t header[] = {images ? 2051u : 2049u, n, 28, 28};
    std::string bytes;
    for (size_t k = 0; k < (images ? 4u : 2u); ++k) {
      for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>(header[k] >> shift));
    }
    const size_t count = n * (images ? 28 * 28 : 1);
    bytes.resize(bytes.size() + count);
    char* values = bytes.data() + bytes.size() - count;
    for (size_t i = 0; i < count; ++i) {
      values[i] = static_cast<char>(images ? g.next_u64() : g.next_u64() % 10);
    }
    std::ofstream(dir.path() / name, std::ios::binary) << bytes;
  }
  expect_same(dir.path().string(), dir.path().string());
}

// Debian's dataset-fashion-mnist package (scripts/install-deps.sh installs it).
TEST(DataParity, FashionMnist) {
  const fs::path root = "/usr/share/datasets/fashion-mnist";
  ASSERT_TRUE(fs::exists(root / "train-images-idx3-ubyte.gz"))
      << "dataset-fashion-mnist is not installed: run scripts/install-deps.sh";
  TempDir dir("ember_data_parity_fashion");
  for (const char* name : kFiles) gunzip(root / (std::string(name) + ".gz"), dir.path() / name);
  expect_same(root.string(), dir.path().string());
  expect_same(dir.path().string(), dir.path().string());
}

}  // namespace
