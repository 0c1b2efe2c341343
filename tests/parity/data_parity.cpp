// The MNIST reader and the Normalize / Stack transforms against libtorch's. libtorch reads only
// uncompressed IDX files, so the gzip-compressed ones are inflated into a temporary directory;
// Ember reads both the compressed originals and the inflated copies.
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "parity/parity.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

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

namespace {
// Every batch of one epoch, for both frameworks' sampler of the same kind.
template <class S>
std::vector<std::vector<size_t>> epoch_of(S& sampler, size_t batch_size) {
  std::vector<std::vector<size_t>> out;
  while (auto batch = sampler.next(batch_size)) out.push_back(std::vector<size_t>(batch->begin(), batch->end()));
  return out;
}
}  // namespace

// The distributed samplers hand each rank libtorch's share in libtorch's order (the random one's
// permutation comes from std::mt19937 seeded by the epoch, so it is the same on every replica).
TEST(DataParity, DistributedSamplers) {
  namespace es = ember::data::samplers;
  namespace ts = torch::data::samplers;
  for (size_t size : {0, 1, 7, 10, 33})
    for (size_t replicas : {1, 2, 3, 4})
      for (size_t rank = 0; rank < replicas; ++rank)
        for (bool duplicates : {true, false}) {
          SCOPED_TRACE(::testing::Message() << "size " << size << ", rank " << rank << " of " << replicas
                                            << (duplicates ? ", duplicates" : ""));
          es::DistributedRandomSampler er(size, replicas, rank, duplicates);
          ts::DistributedRandomSampler tr(size, replicas, rank, duplicates);
          es::DistributedSequentialSampler eq(size, replicas, rank, duplicates);
          ts::DistributedSequentialSampler tq(size, replicas, rank, duplicates);
          for (size_t epoch : {0, 3}) {
            er.set_epoch(epoch);
            tr.set_epoch(epoch);
            er.reset();
            tr.reset();
            EXPECT_EQ(epoch_of(er, 3), epoch_of(tr, 3)) << "epoch " << epoch;
            EXPECT_EQ(er.index(), tr.index());
            EXPECT_EQ(epoch_of(eq, 4), epoch_of(tq, 4));
            eq.reset();
            tq.reset();
          }
          er.reset(size + 5);
          tr.reset(size + 5);
          EXPECT_EQ(epoch_of(er, 2), epoch_of(tr, 2)) << "after reset to a new size";
          eq.reset(size + 5);
          tq.reset(size + 5);
          EXPECT_EQ(epoch_of(eq, 2), epoch_of(tq, 2)) << "after reset to a new size";
        }
  EXPECT_THROW(es::DistributedRandomSampler(5, 2, 2), ember::Error);  // libtorch reads out of bounds there
}

TEST(DataParity, StreamSampler) {
  ember::data::samplers::StreamSampler e(10);
  torch::data::samplers::StreamSampler t(10);
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (;;) {
      auto eb = e.next(4);
      auto tb = t.next(4);
      ASSERT_EQ(eb.has_value(), tb.has_value());
      if (!eb) break;
      EXPECT_EQ(eb->size(), tb->size());
    }
    e.reset(7);
    t.reset(7);
  }
}

// ---- ChunkDataset --------------------------------------------------------------------------------

namespace {

// One reader's logic for both libraries: chunk c holds sizes[c] ints from 1000 * c.
template <class Base>
struct IntChunks : Base {
  using BatchType = std::vector<int>;
  explicit IntChunks(std::vector<size_t> sizes) : sizes(std::move(sizes)) {}
  std::vector<int> read_chunk(size_t c) override {
    std::vector<int> chunk(sizes.at(c));
    for (size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<int>(1000 * c + i);
    return chunk;
  }
  size_t chunk_count() override { return sizes.size(); }
  void reset() override {}
  std::vector<size_t> sizes;
};
using EmberChunks = IntChunks<ember::data::datasets::ChunkDataReader<int>>;
using TorchChunks = IntChunks<torch::data::datasets::ChunkDataReader<int>>;

// Every batch of `epochs` epochs of a dataset (reset before each).
template <class D>
std::vector<std::vector<int>> batches_of(D& dataset, int epochs) {
  std::vector<std::vector<int>> batches;
  for (int e = 0; e < epochs; ++e) {
    dataset.reset();
    while (auto batch = dataset.get_batch()) batches.push_back(std::move(*batch));
    batches.push_back({-1});  // the epoch's end
  }
  return batches;
}

const std::vector<std::vector<size_t>> kChunkSizes = {
    {5}, {3, 5, 0, 4, 1}, {7, 7, 7, 7}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}};

}  // namespace

// With sequential chunk and example samplers and one preloader, the batches (made across chunk
// boundaries) and the end of each epoch are libtorch's, for every batch size, cache size and
// cross-chunk count.
TEST(DataParity, ChunkDatasetSequential) {
  namespace ed = ember::data::datasets;
  namespace td = torch::data::datasets;
  using ESeq = ember::data::samplers::SequentialSampler;
  using TSeq = torch::data::samplers::SequentialSampler;
  for (const auto& sizes : kChunkSizes)
    for (size_t batch_size : {1, 2, 3, 4, 7, 16})
      for (size_t cache_extra : {0, 5, 2048})
        for (size_t cross : {1, 2, 3}) {
          SCOPED_TRACE(::testing::Message() << sizes.size() << " chunks, batch " << batch_size << ", cache "
                                            << batch_size + cache_extra << ", cross " << cross);
          const size_t cache = batch_size + cache_extra;
          ed::ChunkDataset<EmberChunks, ESeq, ESeq> e(EmberChunks(sizes), ESeq(0), ESeq(0),
                                                      ed::ChunkDatasetOptions(1, batch_size, cache, cross));
          td::ChunkDataset<TorchChunks, TSeq, TSeq> t(TorchChunks(sizes), TSeq(0), TSeq(0),
                                                      td::ChunkDatasetOptions(1, batch_size, cache, cross));
          EXPECT_EQ(batches_of(e, 2), batches_of(t, 2));
        }
}

// The same through each library's make_data_loader (a StatefulDataLoader over a shared dataset).
TEST(DataParity, ChunkDatasetThroughTheLoader) {
  namespace ed = ember::data::datasets;
  namespace td = torch::data::datasets;
  using ESeq = ember::data::samplers::SequentialSampler;
  using TSeq = torch::data::samplers::SequentialSampler;
  for (size_t batch_size : {1, 3, 8}) {
    const std::vector<size_t>& sizes = kChunkSizes.back();
    auto e = ember::data::make_data_loader(
        ed::make_shared_dataset<ed::ChunkDataset<EmberChunks, ESeq, ESeq>>(EmberChunks(sizes), ESeq(0), ESeq(0),
                                                                            ed::ChunkDatasetOptions(1, batch_size)),
        ember::data::DataLoaderOptions(batch_size));
    auto t = torch::data::make_data_loader(
        td::make_shared_dataset<td::ChunkDataset<TorchChunks, TSeq, TSeq>>(TorchChunks(sizes), TSeq(0), TSeq(0),
                                                                            td::ChunkDatasetOptions(1, batch_size)),
        torch::data::DataLoaderOptions(batch_size));
    for (int epoch = 0; epoch < 2; ++epoch) {
      std::vector<std::vector<int>> eb, tb;
      for (auto& b : *e) eb.push_back(b);
      for (auto& b : *t) tb.push_back(b);
      EXPECT_EQ(eb.size(), (66 + batch_size - 1) / batch_size);
      EXPECT_EQ(eb, tb) << "batch " << batch_size << ", epoch " << epoch;
    }
  }
}

// Random chunk and example samplers draw from each library's global generator, in the same order
// (the chunk permutation at reset, then one permutation per read): after the same manual_seed the
// batches are libtorch's too.
TEST(DataParity, ChunkDatasetRandomAfterTheSameSeed) {
  namespace ed = ember::data::datasets;
  namespace td = torch::data::datasets;
  for (size_t cross : {1, 2}) {
    const std::vector<size_t>& sizes = kChunkSizes.back();
    ember::manual_seed(11);
    torch::manual_seed(11);
    ed::ChunkDataset<EmberChunks> e(EmberChunks(sizes), ember::data::samplers::RandomSampler(0),
                                    ember::data::samplers::RandomSampler(0), ed::ChunkDatasetOptions(1, 4, 8, cross));
    td::ChunkDataset<TorchChunks> t(TorchChunks(sizes), torch::data::samplers::RandomSampler(0),
                                    torch::data::samplers::RandomSampler(0), td::ChunkDatasetOptions(1, 4, 8, cross));
    EXPECT_EQ(batches_of(e, 2), batches_of(t, 2)) << "cross " << cross;
  }
}

}  // namespace EMBER_UNITY_FILE
