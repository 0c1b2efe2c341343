// Data loading: datasets, transforms, samplers, the loader (batching, shuffling, workers) and the
// MNIST reader on IDX files written here, plain and gzip-compressed.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ember/ember.h"
#include "ember/torch.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

using namespace ember;  // NOLINT
namespace fs = std::filesystem;
using data::Example;
using data::datasets::MNIST;
using data::datasets::TensorDataset;
using data::samplers::RandomSampler;
using data::samplers::SequentialSampler;
using data::transforms::Normalize;
using data::transforms::Stack;

// Example i holds data {i} and target {10 * i}; get throws for indices listed in `bad`.
struct CountingDataset : data::datasets::Dataset<CountingDataset> {
  explicit CountingDataset(size_t n, std::set<size_t> bad = {}) : n(n), bad(std::move(bad)) {}
  Example<> get(size_t index) override {
    if (bad.count(index)) throw std::runtime_error("bad example " + std::to_string(index));
    return {tensor({static_cast<int64_t>(index)}), tensor({static_cast<int64_t>(10 * index)})};
  }
  std::optional<size_t> size() const override { return n; }
  size_t n;
  std::set<size_t> bad;
};

// The first data value of each batch, over one epoch.
template <class Loader>
std::vector<std::vector<int64_t>> epoch(Loader& loader) {
  std::vector<std::vector<int64_t>> batches;
  for (auto& batch : loader) {
    const Tensor d = batch.data.flatten();
    batches.emplace_back(d.template data_ptr<int64_t>(), d.template data_ptr<int64_t>() + d.numel());
  }
  return batches;
}

std::vector<int64_t> flat(const std::vector<std::vector<int64_t>>& batches) {
  std::vector<int64_t> all;
  for (const auto& b : batches) all.insert(all.end(), b.begin(), b.end());
  return all;
}

TEST(DataLoader, BatchSizesAndDropLast) {
  auto loader = data::make_data_loader<SequentialSampler>(CountingDataset(10).map(Stack<>()),
                                                          data::DataLoaderOptions().batch_size(4));
  auto batches = epoch(*loader);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0], (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(batches[2], (std::vector<int64_t>{8, 9}));

  auto dropping = data::make_data_loader<SequentialSampler>(
      CountingDataset(10).map(Stack<>()), data::DataLoaderOptions().batch_size(4).drop_last(true));
  batches = epoch(*dropping);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[1], (std::vector<int64_t>{4, 5, 6, 7}));

  // Without Stack a batch is the std::vector of examples.
  auto unstacked = data::make_data_loader<SequentialSampler>(CountingDataset(5), data::DataLoaderOptions(2));
  // a batch size alone (size_t or int64_t), as pytorch/examples' cpp/mnist passes it
  auto by_size = data::make_data_loader<SequentialSampler>(CountingDataset(5).map(Stack<>()), int64_t{2});
  batches = epoch(*by_size);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[2], (std::vector<int64_t>{4}));
  std::vector<size_t> sizes;
  for (std::vector<Example<>>& batch : *unstacked) sizes.push_back(batch.size());
  EXPECT_EQ(sizes, (std::vector<size_t>{2, 2, 1}));
}

TEST(DataLoader, StackedTargetsAndShapes) {
  auto loader = data::make_data_loader<SequentialSampler>(CountingDataset(6).map(Stack<>()),
                                                          data::DataLoaderOptions().batch_size(3));
  auto it = loader->begin();
  EXPECT_EQ(it->data.sizes().vec(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(it->target.sizes().vec(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(it->target[2].item<int64_t>(), 20);
  ++it;
  EXPECT_EQ(it->target[0].item<int64_t>(), 30);
  ++it;
  EXPECT_TRUE(it == loader->end());
  EXPECT_ERROR(*it, "DataLoader", "past the end");
}

TEST(DataLoader, EmptyDatasetYieldsNothing) {
  for (size_t workers : {0, 2}) {
    auto loader = data::make_data_loader(CountingDataset(0).map(Stack<>()),
                                         data::DataLoaderOptions().batch_size(4).workers(workers));
    EXPECT_TRUE(epoch(*loader).empty());
  }
}

TEST(DataLoader, BadOptions) {
  EXPECT_ERROR(data::make_data_loader(CountingDataset(3), data::DataLoaderOptions().batch_size(0)), "DataLoader",
               "batch_size must be positive");
  EXPECT_ERROR(data::make_data_loader(CountingDataset(3), data::DataLoaderOptions().workers(1).max_jobs(0)),
               "DataLoader", "max_jobs");
}

TEST(DataLoader, ShuffleIsAPermutationDeterministicPerSeedAndNewEachEpoch) {
  auto make = [](std::optional<uint64_t> seed) {
    auto dataset = CountingDataset(50).map(Stack<>());
    const auto options = data::DataLoaderOptions().batch_size(8);
    return seed ? data::make_data_loader(std::move(dataset), RandomSampler(50, *seed), options)
                : data::make_data_loader(std::move(dataset), options);
  };
  auto a = make(7), b = make(7), c = make(8);
  const auto a1 = flat(epoch(*a)), a2 = flat(epoch(*a));
  std::vector<int64_t> sorted = a1, expected(50);
  std::sort(sorted.begin(), sorted.end());
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(sorted, expected);
  EXPECT_NE(a1, expected);
  EXPECT_NE(a1, a2) << "the second epoch must be reshuffled";
  EXPECT_EQ(flat(epoch(*b)), a1);
  EXPECT_EQ(flat(epoch(*b)), a2);
  EXPECT_NE(flat(epoch(*c)), a1);

  // The default sampler draws from the global generator: manual_seed makes it reproducible.
  manual_seed(3);
  auto d = make(std::nullopt);
  const auto d1 = flat(epoch(*d));
  manual_seed(3);
  auto e = make(std::nullopt);
  EXPECT_EQ(flat(epoch(*e)), d1);
}

TEST(DataLoader, WorkersKeepTheSamplersOrder) {
  for (size_t workers : {1, 2, 3}) {
    for (size_t max_jobs : {1, 2, 7}) {
      auto loader = data::make_data_loader(CountingDataset(103).map(Stack<>()), RandomSampler(103, 5),
                                           data::DataLoaderOptions().batch_size(10).workers(workers).max_jobs(max_jobs));
      auto main_thread = data::make_data_loader(CountingDataset(103).map(Stack<>()), RandomSampler(103, 5),
                                                data::DataLoaderOptions().batch_size(10));
      for (int e = 0; e < 2; ++e) EXPECT_EQ(epoch(*loader), epoch(*main_thread)) << workers << " workers";
    }
  }
}

TEST(DataLoader, UnorderedWorkersYieldEveryBatch) {
  auto loader = data::make_data_loader<SequentialSampler>(
      CountingDataset(40).map(Stack<>()), data::DataLoaderOptions().batch_size(3).workers(3).enforce_ordering(false));
  auto all = flat(epoch(*loader));
  std::sort(all.begin(), all.end());
  std::vector<int64_t> expected(40);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(all, expected);
}

TEST(DataLoader, WorkerExceptionsReachTheConsumerInOrder) {
  for (size_t workers : {0, 2}) {
    auto loader = data::make_data_loader<SequentialSampler>(
        CountingDataset(20, {9}).map(Stack<>()), data::DataLoaderOptions().batch_size(4).workers(workers));
    std::vector<int64_t> firsts;
    try {
      for (auto& batch : *loader) firsts.push_back(batch.data[0].item<int64_t>());
      ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "bad example 9");
    }
    EXPECT_EQ(firsts, (std::vector<int64_t>{0, 4})) << workers << " workers";
    // the loader stays usable: a new epoch starts over
    auto it = loader->begin();
    EXPECT_EQ(it->data[0].item<int64_t>(), 0);
  }
}

// A dataset whose batches take a while, so the workers are busy when the loader goes away.
struct SlowDataset : data::datasets::Dataset<SlowDataset> {
  Example<> get(size_t index) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return {tensor({1.0}), tensor({2.0})};
  }
  std::optional<size_t> size() const override { return 1000; }
};

TEST(DataLoader, DestructionAndNewEpochWithBatchesPending) {
  {
    auto loader = data::make_data_loader(SlowDataset().map(Stack<>()),
                                         data::DataLoaderOptions().batch_size(4).workers(2).max_jobs(8));
    auto it = loader->begin();
    EXPECT_EQ(it->data.size(0), 4);
    auto again = loader->begin();  // drops the rest of the first epoch
    EXPECT_EQ(again->data.size(0), 4);
  }  // destroyed with jobs queued and running: must return
  auto loader = data::make_data_loader(SlowDataset(), data::DataLoaderOptions().batch_size(4).workers(2));
  loader->join();
  EXPECT_ERROR(loader->begin(), "DataLoader", "join");
}

TEST(DataLoader, Timeout) {
  auto loader = data::make_data_loader(
      SlowDataset(),
      data::DataLoaderOptions().batch_size(10).workers(1).timeout(std::chrono::milliseconds(1)));
  EXPECT_ERROR(loader->begin(), "DataLoader", "timeout");
}

TEST(Samplers, SequentialAndRandom) {
  SequentialSampler s(5);
  EXPECT_EQ(*s.next(2), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(*s.next(10), (std::vector<size_t>{2, 3, 4}));
  EXPECT_FALSE(s.next(1).has_value());
  s.reset(3);
  EXPECT_EQ(*s.next(10), (std::vector<size_t>{0, 1, 2}));

  RandomSampler r(6, uint64_t{1});
  auto all = *r.next(6);
  EXPECT_EQ(r.index(), 6u);
  EXPECT_FALSE(r.next(1).has_value());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<size_t>{0, 1, 2, 3, 4, 5}));
  r.reset(2);
  EXPECT_EQ(r.next(5)->size(), 2u);
  EXPECT_ERROR(RandomSampler(-1), "RandomSampler", "non-negative");
}

TEST(Transforms, NormalizeStackAndLambda) {
  const Tensor image = arange(12, kFloat32).view({3, 2, 2});
  Normalize<> per_channel({1.0, 2.0, 3.0}, {2.0, 4.0, 8.0});
  const Tensor got = per_channel(image);
  for (int64_t c = 0; c < 3; ++c) {
    const double mean = c + 1.0, stddev = 2.0 * (1 << c);
    EXPECT_TRUE(got[c].allclose((image[c] - mean) / stddev)) << c;
  }
  Normalize<> scalar(0.5, 0.25);
  EXPECT_TRUE(scalar(image).allclose((image - 0.5) / 0.25));
  // the target passes through untouched
  auto example = scalar.apply({image, tensor({7})});
  EXPECT_EQ(example.target.item<int64_t>(), 7);

  std::vector<Example<>> batch = {{ones({2, 2}), tensor(int64_t{1})}, {zeros({2, 2}), tensor(int64_t{0})}};
  const Example<> stacked = Stack<>().apply_batch(batch);
  EXPECT_EQ(stacked.data.sizes().vec(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_TRUE(stacked.target.equal(tensor({1, 0})));
  batch[1].data = zeros({3});
  EXPECT_ERROR(Stack<>().apply_batch(batch), "stack");

  data::transforms::Lambda<Example<>> twice([](Example<> e) { return Example<>(e.data * 2, e.target); });
  auto loader = data::make_data_loader<SequentialSampler>(CountingDataset(4).map(twice).map(Stack<>()),
                                                          data::DataLoaderOptions(4));
  EXPECT_EQ(flat(epoch(*loader)), (std::vector<int64_t>{0, 2, 4, 6}));
  data::transforms::TensorLambda<> plus_one([](Tensor t) { return t + 1; });
  EXPECT_TRUE(plus_one.apply({zeros({2}), tensor({3})}).data.equal(ones({2})));
}

TEST(Datasets, TensorDataset) {
  TensorDataset rows(arange(12).view({4, 3}));
  EXPECT_EQ(*rows.size(), 4u);
  EXPECT_TRUE(rows.get(1).data.equal(tensor({3, 4, 5})));
  TensorDataset stacked(std::vector<Tensor>{zeros({2}), ones({2})});
  EXPECT_TRUE(stacked.get(1).data.equal(ones({2})));
  auto loader = data::make_data_loader<SequentialSampler>(
      TensorDataset(arange(10)).map(Stack<data::TensorExample>()), data::DataLoaderOptions(4).workers(1));
  std::vector<Tensor> batches;
  for (data::TensorExample& b : *loader) batches.push_back(b.data);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_TRUE(batches[2].equal(tensor({8, 9})));
  EXPECT_ERROR(rows.get(4), "index");
}

// A libtorch program's spelling compiles unchanged against ember/torch.h.
TEST(DataLoader, LibtorchSpelling) {
  auto dataset = torch::data::datasets::TensorDataset(torch::arange(6).view({3, 2}))
                     .map(torch::data::transforms::Stack<torch::data::TensorExample>());
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      std::move(dataset), torch::data::DataLoaderOptions().batch_size(2).workers(1).drop_last(true));
  int batches = 0;
  for (auto& batch : *loader) {
    EXPECT_TRUE(batch.data.equal(torch::arange(4).view({2, 2})));
    ++batches;
  }
  EXPECT_EQ(batches, 1);
  // torch::data::Dataset is torch::data::datasets::Dataset, as libtorch's data.h names it
  struct Squares : torch::data::Dataset<Squares> {
    torch::data::Example<> get(size_t i) override {
      const auto v = static_cast<int64_t>(i);
      return {torch::tensor({v}), torch::tensor({v * v})};
    }
    std::optional<size_t> size() const override { return 3; }
  };
  static_assert(std::is_base_of_v<torch::data::datasets::BatchDataset<Squares, std::vector<torch::data::Example<>>>,
                                  torch::data::BatchDataset<Squares, std::vector<torch::data::Example<>>>>);
  EXPECT_TRUE(Squares().get(2).target.equal(torch::tensor({int64_t{4}})));
}

// ---- Stateful datasets: ChunkDataset, StatefulDataLoader ----------------------------------------

using data::datasets::ChunkDataset;
using data::datasets::ChunkDatasetOptions;

// What a reader saw, shared by its copies (ChunkDataset keeps its own copy of the reader).
struct ReaderLog {
  std::atomic<size_t> reads{0}, resets{0};
};

// Chunk c holds the ints 100 * c, 100 * c + 1, ..., sizes[c] of them; reading a chunk listed in
// `bad` throws.
struct IntChunkReader : data::datasets::ChunkDataReader<int> {
  using BatchType = std::vector<int>;  // libtorch's ChunkDataset asks the reader for it
  explicit IntChunkReader(std::vector<size_t> sizes, std::set<size_t> bad = {})
      : sizes(std::move(sizes)), bad(std::move(bad)) {}
  std::vector<int> read_chunk(size_t c) override {
    log->reads++;
    if (bad.count(c)) throw std::runtime_error("bad chunk " + std::to_string(c));
    std::vector<int> chunk(sizes.at(c));
    std::iota(chunk.begin(), chunk.end(), static_cast<int>(100 * c));
    return chunk;
  }
  size_t chunk_count() override { return sizes.size(); }
  void reset() override { log->resets++; }

  std::vector<size_t> sizes;
  std::set<size_t> bad;
  std::shared_ptr<ReaderLog> log = std::make_shared<ReaderLog>();
};

using SequentialChunks = ChunkDataset<IntChunkReader, SequentialSampler, SequentialSampler>;

// Every example of chunks `chunks`, in order.
std::vector<int> chunk_examples(const std::vector<size_t>& sizes, const std::vector<size_t>& chunks) {
  std::vector<int> all;
  for (size_t c : chunks)
    for (size_t i = 0; i < sizes[c]; ++i) all.push_back(static_cast<int>(100 * c + i));
  return all;
}

std::vector<std::vector<int>> cut(const std::vector<int>& all, size_t batch_size) {
  std::vector<std::vector<int>> batches;
  for (size_t i = 0; i < all.size(); i += batch_size)
    batches.emplace_back(all.begin() + i, all.begin() + std::min(all.size(), i + batch_size));
  return batches;
}

// The rest of the dataset's epoch, batch by batch.
template <class D>
std::vector<std::vector<int>> drain(D& dataset) {
  std::vector<std::vector<int>> batches;
  while (auto batch = dataset.get_batch()) batches.push_back(std::move(*batch));
  return batches;
}

std::vector<int> sorted_flat(const std::vector<std::vector<int>>& batches) {
  std::vector<int> all;
  for (const auto& b : batches) all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  return all;
}

template <class Pred>
bool wait_until(Pred pred, std::chrono::milliseconds limit = std::chrono::milliseconds(10000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(ChunkDataset, SequentialSamplersGiveTheChunksInOrder) {
  const std::vector<size_t> sizes = {3, 5, 0, 4, 1};  // an empty chunk is skipped
  const std::vector<int> all = chunk_examples(sizes, {0, 1, 2, 3, 4});
  for (size_t batch_size : {1, 2, 3, 4, 5, 7, 13, 20}) {
    SequentialChunks dataset(IntChunkReader(sizes), SequentialSampler(0), SequentialSampler(0),
                             ChunkDatasetOptions(1, batch_size, std::max<size_t>(batch_size, 4)));
    EXPECT_ERROR(dataset.get_batch(), "ChunkDataset", "reset()");
    dataset.reset();
    EXPECT_FALSE(dataset.size().has_value());
    EXPECT_ERROR(dataset.get_batch(batch_size + 1), "ChunkDataset", "requested batch size is ",
                 std::to_string(batch_size + 1));
    EXPECT_EQ(drain(dataset), cut(all, batch_size)) << "batch size " << batch_size;
    EXPECT_FALSE(dataset.get_batch().has_value()) << "the epoch stays over";
  }
}

TEST(ChunkDataset, RandomSamplersGiveEveryExampleOncePerEpoch) {
  const std::vector<size_t> sizes = {7, 3, 9, 1, 6, 8, 2, 5};
  const std::vector<int> all = chunk_examples(sizes, {0, 1, 2, 3, 4, 5, 6, 7});
  for (size_t preloaders : {1, 3}) {
    ChunkDataset<IntChunkReader> dataset(IntChunkReader(sizes), RandomSampler(0, uint64_t{1}),
                                         RandomSampler(0, uint64_t{2}), ChunkDatasetOptions(preloaders, 4, 8));
    std::vector<int> first;
    for (int epoch = 0; epoch < 3; ++epoch) {
      dataset.reset();
      const auto batches = drain(dataset);
      for (size_t b = 0; b + 1 < batches.size(); ++b) EXPECT_EQ(batches[b].size(), 4u);
      EXPECT_EQ(sorted_flat(batches), all) << preloaders << " preloaders, epoch " << epoch;
      std::vector<int> order;
      for (const auto& b : batches) order.insert(order.end(), b.begin(), b.end());
      EXPECT_NE(order, all) << "shuffled";
      if (epoch == 0) first = order;
      if (epoch == 1) EXPECT_NE(order, first) << "a new shuffle each epoch";
    }
  }
}

TEST(ChunkDataset, SeveralPreloadersKeepEachChunkWhole) {
  std::vector<size_t> sizes(30);
  for (size_t c = 0; c < sizes.size(); ++c) sizes[c] = 1 + (c * 7) % 11;
  std::vector<size_t> every(sizes.size());
  std::iota(every.begin(), every.end(), 0);
  SequentialChunks dataset(IntChunkReader(sizes), SequentialSampler(0), SequentialSampler(0),
                           ChunkDatasetOptions(4, 5, 16));
  for (int epoch = 0; epoch < 2; ++epoch) {
    dataset.reset();
    const auto batches = drain(dataset);
    EXPECT_EQ(sorted_flat(batches), chunk_examples(sizes, every));
    // chunks arrive in any order, but each one's examples in a row and in its own order
    std::vector<int> order;
    for (const auto& b : batches) order.insert(order.end(), b.begin(), b.end());
    for (size_t i = 0; i < order.size();) {
      const int chunk = order[i] / 100;
      for (size_t k = 0; k < sizes[static_cast<size_t>(chunk)]; ++k, ++i) {
        ASSERT_LT(i, order.size());
        ASSERT_EQ(order[i], chunk * 100 + static_cast<int>(k)) << "at " << i;
      }
    }
  }
}

TEST(ChunkDataset, CacheSizeBoundsThePreloading) {
  // 20 chunks of 10, a cache of 20: one preloader reads two chunks into the cache, reads a third
  // and waits for room.
  IntChunkReader reader(std::vector<size_t>(20, 10));
  auto log = reader.log;
  SequentialChunks dataset(reader, SequentialSampler(0), SequentialSampler(0), ChunkDatasetOptions(1, 5, 20));
  dataset.reset();
  ASSERT_TRUE(wait_until([&] { return log->reads >= 3; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(log->reads.load(), 3u);
  // a batch out (15 left) makes room for the waiting chunk (25), and the next read waits
  EXPECT_EQ(*dataset.get_batch(), (std::vector<int>{0, 1, 2, 3, 4}));
  ASSERT_TRUE(wait_until([&] { return log->reads >= 4; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(log->reads.load(), 4u);
  EXPECT_EQ(drain(dataset).size(), 39u);

  // with two preloaders, at most one read each beyond what the cache holds
  IntChunkReader second(std::vector<size_t>(20, 10));
  SequentialChunks two(second, SequentialSampler(0), SequentialSampler(0), ChunkDatasetOptions(2, 5, 20));
  two.reset();
  ASSERT_TRUE(wait_until([&] { return second.log->reads >= 4; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(second.log->reads.load(), 4u);
}

TEST(ChunkDataset, CrossChunkShuffleAndPreprocessing) {
  const std::vector<size_t> sizes(10, 4);
  // Sequential samplers: two chunks read together, one after the other, made into batches of 8;
  // the policy sees the two chunks joined.
  std::vector<size_t> seen_sizes;
  SequentialChunks joined(
      IntChunkReader(sizes), SequentialSampler(0), SequentialSampler(0), ChunkDatasetOptions(1, 8, 8, 2),
      [&](std::vector<int>& examples) {
        seen_sizes.push_back(examples.size());
        std::reverse(examples.begin(), examples.end());
      });
  joined.reset();
  auto batches = drain(joined);
  ASSERT_EQ(batches.size(), 5u);
  for (size_t k = 0; k < 5; ++k) {
    std::vector<int> expected = chunk_examples(sizes, {2 * k, 2 * k + 1});
    std::reverse(expected.begin(), expected.end());
    EXPECT_EQ(batches[k], expected) << k;
  }
  EXPECT_EQ(seen_sizes, std::vector<size_t>(5, 8));

  // A random example sampler mixes the two chunks of each batch.
  ChunkDataset<IntChunkReader, SequentialSampler, RandomSampler> mixed(
      IntChunkReader(sizes), SequentialSampler(0), RandomSampler(0, uint64_t{3}), ChunkDatasetOptions(1, 8, 8, 2));
  mixed.reset();
  batches = drain(mixed);
  ASSERT_EQ(batches.size(), 5u);
  int interleaved = 0;
  for (size_t k = 0; k < 5; ++k) {
    std::vector<int> got = batches[k];
    const bool first_chunk_first = std::is_partitioned(got.begin(), got.end(), [&](int v) {
      return v / 100 == static_cast<int>(2 * k);
    });
    interleaved += !first_chunk_first;
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, chunk_examples(sizes, {2 * k, 2 * k + 1})) << k;
  }
  EXPECT_GT(interleaved, 0);

  // The count may exceed what is left: the last read takes the remaining chunk alone.
  SequentialChunks odd(IntChunkReader({2, 2, 2}), SequentialSampler(0), SequentialSampler(0),
                       ChunkDatasetOptions(1, 3, 3, 2));
  odd.reset();
  EXPECT_EQ(drain(odd), (std::vector<std::vector<int>>{{0, 1, 100}, {101, 200, 201}}));
}

TEST(ChunkDataset, ResetStartsANewEpoch) {
  const std::vector<size_t> sizes = {4, 4, 4, 4, 4, 4};
  const auto all = cut(chunk_examples(sizes, {0, 1, 2, 3, 4, 5}), 4);
  IntChunkReader reader(sizes);
  auto log = reader.log;
  SequentialChunks dataset(reader, SequentialSampler(0), SequentialSampler(0), ChunkDatasetOptions(2, 4, 4));
  dataset.reset();
  EXPECT_EQ(log->resets.load(), 1u);
  ASSERT_TRUE(dataset.get_batch().has_value());  // the rest of the epoch is dropped
  dataset.reset();
  EXPECT_EQ(log->resets.load(), 2u);
  auto batches = drain(dataset);
  EXPECT_EQ(sorted_flat(batches), sorted_flat(all));
  dataset.reset();
  EXPECT_EQ(sorted_flat(drain(dataset)), sorted_flat(all));
  dataset.reset();  // reset twice in a row, and destroyed mid-epoch
  dataset.reset();
}

TEST(ChunkDataset, SaveAndLoadResumeAtTheChunkSamplersPlace) {
  const std::vector<size_t> sizes = {4, 4, 4, 4, 4};
  // Sequential chunks: the place is the index of the next chunk.
  SequentialChunks first(IntChunkReader(sizes), SequentialSampler(5), SequentialSampler(0),
                         ChunkDatasetOptions(1, 4, 4));
  first.chunk_sampler().reset(5);
  first.chunk_sampler().next(2);  // chunks 0 and 1 are done
  std::stringstream file;
  serialize::OutputArchive out;
  out << first;
  out.save_to(file);

  IntChunkReader reader(sizes);
  auto log = reader.log;
  SequentialChunks resumed(reader, SequentialSampler(5), SequentialSampler(0), ChunkDatasetOptions(1, 4, 4));
  serialize::InputArchive in;
  in.load_from(file);
  in >> resumed;
  resumed.reset();
  EXPECT_EQ(drain(resumed), cut(chunk_examples(sizes, {2, 3, 4}), 4));
  EXPECT_EQ(log->resets.load(), 0u) << "a resumed epoch keeps the reader's state";
  // the checkpoint serves one epoch; the next starts over
  resumed.reset();
  EXPECT_EQ(drain(resumed), cut(chunk_examples(sizes, {0, 1, 2, 3, 4}), 4));

  // At the end of an epoch the saved place is past the last chunk: a resumed epoch is empty.
  resumed.reset();
  drain(resumed);
  serialize::OutputArchive done;
  resumed.save(done);
  SequentialChunks after(IntChunkReader(sizes), SequentialSampler(5), SequentialSampler(0),
                         ChunkDatasetOptions(1, 4, 4));
  std::stringstream done_file;
  done.save_to(done_file);
  serialize::InputArchive done_in;
  done_in.load_from(done_file);
  after.load(done_in);
  after.reset();
  EXPECT_TRUE(drain(after).empty());

  // Random chunks: the permutation is saved with the place.
  ChunkDataset<IntChunkReader, RandomSampler, SequentialSampler> shuffled(
      IntChunkReader(sizes), RandomSampler(0, uint64_t{4}), SequentialSampler(0), ChunkDatasetOptions(1, 4, 4));
  shuffled.chunk_sampler().reset(5);
  shuffled.chunk_sampler().next(2);
  serialize::OutputArchive perm_out;
  shuffled.save(perm_out);
  const std::vector<size_t> rest = *shuffled.chunk_sampler().next(3);
  std::stringstream perm_file;
  perm_out.save_to(perm_file);
  ChunkDataset<IntChunkReader, RandomSampler, SequentialSampler> restored(
      IntChunkReader(sizes), RandomSampler(0, uint64_t{9}), SequentialSampler(0), ChunkDatasetOptions(1, 4, 4));
  serialize::InputArchive perm_in;
  perm_in.load_from(perm_file);
  restored.load(perm_in);
  restored.reset();
  EXPECT_EQ(drain(restored), cut(chunk_examples(sizes, rest), 4));
}

TEST(ChunkDataset, ReaderExceptionsReachTheConsumer) {
  const std::vector<size_t> sizes = {4, 4, 4, 4};
  SequentialChunks dataset(IntChunkReader(sizes, {1}), SequentialSampler(0), SequentialSampler(0),
                           ChunkDatasetOptions(1, 4, 8));
  dataset.reset();
  EXPECT_EQ(*dataset.get_batch(), chunk_examples(sizes, {0}));
  try {
    dataset.get_batch();
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "bad chunk 1");
  }
  // the epoch goes on with the chunks after it
  EXPECT_EQ(drain(dataset), cut(chunk_examples(sizes, {2, 3}), 4));

  // through the loader, with and without workers
  for (size_t workers : {0, 2}) {
    auto loader = data::make_data_loader(
        data::datasets::make_shared_dataset<SequentialChunks>(IntChunkReader(sizes, {2}), SequentialSampler(0),
                                                              SequentialSampler(0), ChunkDatasetOptions(1, 4, 8)),
        data::DataLoaderOptions(4).workers(workers));
    std::vector<int> got;
    int errors = 0;
    try {
      // with two workers the error may answer any request, the first (begin()'s) too
      for (auto& batch : *loader) got.insert(got.end(), batch.begin(), batch.end());
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "bad chunk 2");
      ++errors;
    }
    EXPECT_EQ(errors, 1) << workers << " workers";
    for (int v : got) EXPECT_NE(v / 100, 2);
  }
}

TEST(ChunkDataset, DestroyedWhilePreloadersWaitForRoom) {
  for (size_t preloaders : {1, 3}) {
    IntChunkReader reader(std::vector<size_t>(100, 4));
    auto log = reader.log;
    {
      SequentialChunks dataset(reader, SequentialSampler(0), SequentialSampler(0),
                               ChunkDatasetOptions(preloaders, 4, 4));
      dataset.reset();
      ASSERT_TRUE(dataset.get_batch().has_value());
      ASSERT_TRUE(wait_until([&] { return log->reads >= 1 + preloaders; }));  // every preloader waits
    }  // must return
    EXPECT_LT(log->reads.load(), 100u);
  }
  // a loader left mid-epoch, with its workers and the dataset's preloaders busy
  for (size_t workers : {0, 2}) {
    auto loader = data::make_data_loader(
        data::datasets::make_shared_dataset<SequentialChunks>(IntChunkReader(std::vector<size_t>(100, 4)),
                                                              SequentialSampler(0), SequentialSampler(0),
                                                              ChunkDatasetOptions(2, 4, 4)),
        data::DataLoaderOptions(4).workers(workers));
    for (auto& batch : *loader) {
      EXPECT_EQ(batch.size(), 4u);
      break;
    }
    auto again = loader->begin();  // a new epoch while the first is unfinished
    ASSERT_EQ(again->size(), 4u);
    const int chunk = (*again)[0] / 100;  // two preloaders: any chunk, whole
    EXPECT_EQ(*again, (std::vector<int>{100 * chunk, 100 * chunk + 1, 100 * chunk + 2, 100 * chunk + 3}));
  }
}

TEST(ChunkDataset, BadOptions) {
  EXPECT_ERROR(ChunkDatasetOptions(0, 4), "ChunkDatasetOptions",
               "Preloader count is 0. At least one preloader needs to be specified.");
  EXPECT_ERROR(ChunkDatasetOptions(1, 0), "ChunkDatasetOptions",
               "Batch size is 0. A positive batch size needs to be specified.");
  EXPECT_ERROR(ChunkDatasetOptions(1, 1, 0), "ChunkDatasetOptions",
               "Cache size is 0. A positive cache size needs to be specified.");
  EXPECT_ERROR(ChunkDatasetOptions(1, 8, 4), "ChunkDatasetOptions",
               "Cache size is less than batch size. Cache needs to be large enough to hold at least one batch.");
  EXPECT_ERROR(ChunkDatasetOptions(1, 8, 8, 0), "ChunkDatasetOptions",
               "cross_chunk_shuffle_count needs to be greater than 0.");
  ChunkDatasetOptions options(2, 8);
  EXPECT_EQ(options.preloader_count(), 2u);
  EXPECT_EQ(options.batch_size(), 8u);
  EXPECT_EQ(options.cache_size(), 2048u);
  EXPECT_EQ(options.cross_chunk_shuffle_count(), 1u);
  options.cache_size(64).cross_chunk_shuffle_count(3);
  EXPECT_EQ(options.cache_size(), 64u);
  EXPECT_EQ(options.cross_chunk_shuffle_count(), 3u);
}

TEST(StatefulDataLoader, ChunkDatasetWithAndWithoutWorkers) {
  std::vector<size_t> sizes(12);
  for (size_t c = 0; c < sizes.size(); ++c) sizes[c] = 3 + c % 5;
  std::vector<size_t> every(sizes.size());
  std::iota(every.begin(), every.end(), 0);
  const std::vector<int> all = chunk_examples(sizes, every);
  for (size_t workers : {0, 2}) {
    auto dataset = data::datasets::make_shared_dataset<ChunkDataset<IntChunkReader>>(
        IntChunkReader(sizes), RandomSampler(0, uint64_t{5}), RandomSampler(0, uint64_t{6}),
        ChunkDatasetOptions(2, 4, 16));
    auto loader = data::make_data_loader(dataset, data::DataLoaderOptions(4).workers(workers));
    static_assert(std::is_same_v<decltype(loader),
                                 std::unique_ptr<data::StatefulDataLoader<decltype(dataset)>>>);
    for (int epoch = 0; epoch < 2; ++epoch) {  // begin() resets the dataset
      std::vector<std::vector<int>> batches;
      for (std::vector<int>& batch : *loader) batches.push_back(batch);
      EXPECT_EQ(sorted_flat(batches), all) << workers << " workers, epoch " << epoch;
    }
  }
  // Sequential samplers and no workers: the batches in order; mapped, as libtorch's MapDataset
  // maps a stateful dataset's batches.
  auto sums = data::make_data_loader(
      data::datasets::make_shared_dataset<SequentialChunks>(IntChunkReader(sizes), SequentialSampler(0),
                                                            SequentialSampler(0), ChunkDatasetOptions(1, 5, 5))
          .map(data::transforms::BatchLambda<std::vector<int>, int>(
              [](std::vector<int> b) { return std::accumulate(b.begin(), b.end(), 0); })),
      data::DataLoaderOptions(5));
  std::vector<int> expected;
  for (const auto& b : cut(all, 5)) expected.push_back(std::accumulate(b.begin(), b.end(), 0));
  std::vector<int> got;
  for (int sum : *sums) got.push_back(sum);
  EXPECT_EQ(got, expected);
}

// A stateful dataset of a program's own: the numbers 0 .. n-1, handed out in order.
class Counter : public data::datasets::StatefulDataset<Counter, std::vector<int>> {
 public:
  explicit Counter(int n) : n_(n) {}
  std::optional<std::vector<int>> get_batch(size_t batch_size) override {
    std::lock_guard<std::mutex> lock(*mutex_);
    if (next_ >= n_) return std::nullopt;
    std::vector<int> batch;
    while (batch.size() < batch_size && next_ < n_) batch.push_back(next_++);
    return batch;
  }
  std::optional<size_t> size() const override { return static_cast<size_t>(n_); }
  void reset() override {
    std::lock_guard<std::mutex> lock(*mutex_);
    next_ = 0;
    ++resets;
  }
  void save(serialize::OutputArchive& archive) const override {
    archive.write("next", tensor(static_cast<int64_t>(next_)));
  }
  void load(serialize::InputArchive& archive) override {
    Tensor t;
    archive.read("next", t);
    next_ = static_cast<int>(t.item<int64_t>());
  }
  int resets = 0;

 private:
  int n_, next_ = 0;
  std::shared_ptr<std::mutex> mutex_ = std::make_shared<std::mutex>();  // a mutex, and the dataset movable
};

TEST(StatefulDataLoader, CustomStatefulDataset) {
  static_assert(Counter::is_stateful && !CountingDataset::is_stateful);
  static_assert(std::is_same_v<Counter::BatchType, std::optional<std::vector<int>>>);
  for (size_t workers : {0, 1, 3}) {
    auto loader = data::make_data_loader(Counter(23), data::DataLoaderOptions().batch_size(4).workers(workers));
    for (int epoch = 0; epoch < 2; ++epoch) {
      std::vector<std::vector<int>> batches;
      for (auto& batch : *loader) batches.push_back(batch);
      std::vector<int> expected(23);
      std::iota(expected.begin(), expected.end(), 0);
      EXPECT_EQ(sorted_flat(batches), expected) << workers << " workers";
      if (workers <= 1) {
        EXPECT_EQ(batches.size(), 6u);
        EXPECT_EQ(batches.back(), (std::vector<int>{20, 21, 22}));
      }
    }
  }
  // save / load through the archive operators
  Counter c(10);
  c.get_batch(3);
  serialize::OutputArchive out;
  out << c;
  std::stringstream file;
  out.save_to(file);
  Counter d(10);
  serialize::InputArchive in;
  in.load_from(file);
  in >> d;
  EXPECT_EQ(*d.get_batch(2), (std::vector<int>{3, 4}));
  // a shared dataset forwards all of it
  auto shared = data::datasets::make_shared_dataset<Counter>(5);
  static_assert(decltype(shared)::is_stateful);
  EXPECT_EQ(shared.get_batch(2), (std::vector<int>{0, 1}));
  shared.reset();
  EXPECT_EQ(shared->resets, 1);
  EXPECT_EQ((*shared).get_batch(1), (std::vector<int>{0}));
  serialize::OutputArchive shared_out;
  shared.save(shared_out);
  EXPECT_EQ(shared_out.tensors().size(), 1u);
  EXPECT_EQ(*shared.size(), 5u);
}

TEST(Samplers, SaveAndLoad) {
  auto round_trip = [](const auto& from, auto& to) {
    serialize::OutputArchive out;
    out << from;
    std::stringstream file;
    out.save_to(file);
    serialize::InputArchive in;
    in.load_from(file);
    in >> to;
  };
  SequentialSampler s(10), s2(10);
  s.next(4);
  round_trip(s, s2);
  EXPECT_EQ(*s2.next(3), (std::vector<size_t>{4, 5, 6}));

  RandomSampler r(10, uint64_t{1}), r2(3, uint64_t{2});
  r.next(4);
  round_trip(r, r2);
  EXPECT_EQ(r2.index(), 4u);
  EXPECT_EQ(*r2.next(6), *r.next(6));

  data::samplers::StreamSampler st(10), st2(10);
  st.next(7);
  round_trip(st, st2);
  EXPECT_EQ(st2.next(5)->size(), 3u);

  data::samplers::DistributedRandomSampler d(20, 2, 1), d2(20, 2, 1);
  d.set_epoch(3);
  d.reset();
  d.next(4);
  round_trip(d, d2);
  EXPECT_EQ(d2.epoch(), 3u);
  EXPECT_EQ(*d2.next(6), *d.next(6));

  data::samplers::DistributedSequentialSampler q(20, 2, 1), q2(20, 2, 1);
  q.next(3);
  round_trip(q, q2);
  EXPECT_EQ(*q2.next(2), (std::vector<size_t>{13, 14}));
}

// libtorch's spelling of all of it, through ember/torch.h.
struct TorchChunkReader : torch::data::datasets::ChunkDataReader<torch::data::Example<>> {
  using BatchType = torch::data::datasets::ChunkDataReader<torch::data::Example<>>::ChunkType;
  BatchType read_chunk(size_t chunk_index) override {
    BatchType chunk;
    for (int64_t i = 0; i < 3; ++i) {
      const int64_t v = static_cast<int64_t>(chunk_index) * 3 + i;
      chunk.emplace_back(torch::tensor({v}), torch::tensor({-v}));
    }
    return chunk;
  }
  size_t chunk_count() override { return 4; }
  void reset() override {}
};

TEST(StatefulDataLoader, LibtorchSpelling) {
  auto dataset = torch::data::datasets::make_shared_dataset<torch::data::datasets::ChunkDataset<
      TorchChunkReader, torch::data::samplers::SequentialSampler, torch::data::samplers::SequentialSampler>>(
      TorchChunkReader(), torch::data::samplers::SequentialSampler(0), torch::data::samplers::SequentialSampler(0),
      torch::data::datasets::ChunkDatasetOptions(/*preloader_count=*/1, /*batch_size=*/5));
  auto loader = torch::data::make_data_loader(dataset.map(torch::data::transforms::Stack<>()),
                                              torch::data::DataLoaderOptions().batch_size(5).workers(1));
  std::vector<int64_t> seen;
  for (torch::data::Example<>& batch : *loader) {
    EXPECT_TRUE(batch.target.equal(-batch.data));
    for (int64_t i = 0; i < batch.data.size(0); ++i) seen.push_back(batch.data[i][0].item<int64_t>());
  }
  std::vector<int64_t> expected(12);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(seen, expected);
  torch::serialize::OutputArchive archive;
  archive << *dataset;
  using Chunks = torch::data::datasets::ChunkDataset<TorchChunkReader>;
  static_assert(std::is_base_of_v<torch::data::datasets::StatefulDataset<Chunks, TorchChunkReader::BatchType>, Chunks>);
}

// ---- MNIST -------------------------------------------------------------------------------------

void put_u32(std::string& s, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s.push_back(static_cast<char>((v >> shift) & 0xff));
}

std::string idx_images(uint32_t n, uint32_t rows, uint32_t cols, uint32_t magic = 2051) {
  std::string s;
  put_u32(s, magic);
  put_u32(s, n);
  put_u32(s, rows);
  put_u32(s, cols);
  for (uint32_t i = 0; i < n * rows * cols; ++i) s.push_back(static_cast<char>((i * 37 + 11) % 256));
  return s;
}

std::string idx_labels(uint32_t n, uint32_t magic = 2049) {
  std::string s;
  put_u32(s, magic);
  put_u32(s, n);
  for (uint32_t i = 0; i < n; ++i) s.push_back(static_cast<char>(i % 10));
  return s;
}

class MnistFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    root = fs::temp_directory_path() /
           ("ember_mnist_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root);
  }
  void TearDown() override { fs::remove_all(root); }

  void write(const std::string& name, const std::string& bytes) {
    std::ofstream(root / name, std::ios::binary) << bytes;
  }
  void write_gz(const std::string& name, const std::string& bytes) {
    gzFile f = gzopen((root / (name + ".gz")).c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
    gzclose(f);
  }
  void write_set(const std::string& prefix, uint32_t n) {
    write(prefix + "-images-idx3-ubyte", idx_images(n, 28, 28));
    write(prefix + "-labels-idx1-ubyte", idx_labels(n));
  }
  std::string load_error(MNIST::Mode mode = MNIST::Mode::kTrain) {
    return error_of([&] { MNIST(root.string(), mode); });
  }

  fs::path root;
};

void expect_test_pattern(const MNIST& m, int64_t n, int64_t rows = 28, int64_t cols = 28) {
  EXPECT_EQ(m.images().sizes().vec(), (std::vector<int64_t>{n, 1, rows, cols}));
  EXPECT_EQ(m.images().dtype(), kFloat32);
  EXPECT_EQ(m.targets().dtype(), kInt64);
  const float* px = m.images().data_ptr<float>();
  for (int64_t i = 0; i < n * rows * cols; ++i) ASSERT_EQ(px[i], static_cast<float>((i * 37 + 11) % 256) / 255.0f) << i;
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(m.targets()[i].item<int64_t>(), i % 10);
}

TEST_F(MnistFiles, ReadsPlainFiles) {
  write_set("train", 5);
  write_set("t10k", 3);
  MNIST train(root.string());
  EXPECT_TRUE(train.is_train());
  expect_test_pattern(train, 5);
  MNIST test(root.string(), MNIST::Mode::kTest);
  EXPECT_FALSE(test.is_train());
  EXPECT_EQ(*test.size(), 3u);
  auto example = train.get(4);
  EXPECT_EQ(example.data.sizes().vec(), (std::vector<int64_t>{1, 28, 28}));
  EXPECT_EQ(example.target.item<int64_t>(), 4);
  EXPECT_ERROR(train.get(5), "MNIST", "index 5 is out of range");
}

TEST_F(MnistFiles, ReadsGzipFilesAndOtherImageSizes) {
  write_gz("train-images-idx3-ubyte", idx_images(7, 4, 3));
  write_gz("train-labels-idx1-ubyte", idx_labels(7));
  MNIST train(root.string());
  expect_test_pattern(train, 7, 4, 3);
}

TEST_F(MnistFiles, BatchGatherMatchesGet) {
  write_set("train", 9);
  MNIST m(root.string());
  const std::vector<size_t> indices = {8, 0, 3, 3};
  const auto batch = m.get_batch(indices);
  ASSERT_EQ(batch.size(), indices.size());
  for (size_t k = 0; k < indices.size(); ++k) {
    const auto one = m.get(indices[k]);
    EXPECT_TRUE(batch[k].data.equal(one.data)) << k;
    EXPECT_TRUE(batch[k].target.equal(one.target)) << k;
  }
  EXPECT_ERROR(m.get_batch(std::vector<size_t>{1, 9}), "MNIST", "index 9 is out of range");
  auto loader = data::make_data_loader(std::move(m).map(Normalize<>(0.5, 0.5)).map(Stack<>()),
                                       data::DataLoaderOptions(4).workers(2));
  int64_t seen = 0;
  for (auto& b : *loader) {
    EXPECT_EQ(b.data.size(1), 1);
    EXPECT_LE(b.data.max().item<float>(), 1.0f);
    EXPECT_GE(b.data.min().item<float>(), -1.0f);
    seen += b.target.size(0);
  }
  EXPECT_EQ(seen, 9);
}

TEST_F(MnistFiles, MissingFileIsNamed) {
  const std::string msg = load_error();
  EXPECT_NE(msg.find("MNIST: cannot find " + (root / "train-images-idx3-ubyte").string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("train-images-idx3-ubyte.gz"), std::string::npos) << msg;
  write_set("train", 2);
  fs::remove(root / "train-labels-idx1-ubyte");
  EXPECT_NE(load_error().find("train-labels-idx1-ubyte"), std::string::npos);
  EXPECT_NE(load_error(MNIST::Mode::kTest).find("t10k-images-idx3-ubyte"), std::string::npos);
}

TEST_F(MnistFiles, MalformedFilesAreNamed) {
  const std::string images = (root / "train-images-idx3-ubyte").string();
  const std::string labels = (root / "train-labels-idx1-ubyte").string();
  auto load = [&] { MNIST(root.string()); };
  write("train-labels-idx1-ubyte", idx_labels(3));

  write("train-images-idx3-ubyte", idx_images(3, 28, 28, 2049));
  expect_error(load, {"MNIST: " + images + " is not an IDX image file: bad magic number 2049 (expected 2051)"});
  write("train-images-idx3-ubyte", idx_images(3, 28, 28).substr(0, 10));
  expect_error(load, {"MNIST: " + images + " is truncated: 10 bytes, shorter than the 16-byte header"});
  write("train-images-idx3-ubyte", idx_images(3, 28, 28).substr(0, 2000));
  expect_error(load, {"MNIST: " + images + " is truncated: its header announces 3 images (2368 bytes)",
                      "holds 2000 bytes"});
  write("train-images-idx3-ubyte", idx_images(3, 28, 28) + "extra");
  expect_error(load, {"MNIST: " + images + " is corrupt: its header announces 3 images (2368 bytes)",
                      "holds 2373 bytes"});
  // a header announcing more than 2^64 bytes
  std::string huge = idx_images(0, 0, 0);
  huge.replace(4, 12, std::string(12, '\xff'));
  write("train-images-idx3-ubyte", huge);
  expect_error(load, {"MNIST: " + images + " is truncated: its header announces 4294967295 images"});

  write("train-images-idx3-ubyte", idx_images(4, 28, 28));
  expect_error(load, {"MNIST: " + images + " holds 4 images but " + labels + " holds 3 labels"});
  write("train-labels-idx1-ubyte", idx_labels(4, 2051));
  expect_error(load, {"MNIST: " + labels + " is not an IDX label file: bad magic number 2051 (expected 2049)"});
  write("train-labels-idx1-ubyte", idx_labels(4).substr(0, 9));
  expect_error(load, {"MNIST: " + labels + " is truncated: its header announces 4 labels (12 bytes)"});

  // gzip files cut short or damaged
  fs::remove(labels);
  const std::string gz = labels + ".gz";
  write_gz("train-labels-idx1-ubyte", idx_labels(4) + std::string(5000, '\1'));
  std::string packed;
  {
    std::ifstream in(gz, std::ios::binary);
    packed.assign(std::istreambuf_iterator<char>(in), {});
  }
  write("train-labels-idx1-ubyte.gz", packed.substr(0, packed.size() / 2));
  expect_error(load, {"MNIST: cannot read " + gz + " (truncated or corrupt gzip data)"});
  std::string damaged = packed;
  for (size_t i = 12; i < damaged.size() - 8; ++i) damaged[i] = static_cast<char>(damaged[i] ^ 0x5a);
  write("train-labels-idx1-ubyte.gz", damaged);
  expect_error(load, {"MNIST: cannot read " + gz + " (truncated or corrupt gzip data)"});
}

// Debian's dataset-fashion-mnist package (scripts/install-deps.sh installs it).
TEST(FashionMnist, ReadsTheRealDataset) {
  const std::string root = "/usr/share/datasets/fashion-mnist";
  ASSERT_TRUE(fs::exists(fs::path(root) / "train-images-idx3-ubyte.gz"))
      << "dataset-fashion-mnist is not installed: run scripts/install-deps.sh";
  for (auto [mode, n] : {std::pair{MNIST::Mode::kTrain, 60000}, std::pair{MNIST::Mode::kTest, 10000}}) {
    MNIST m(root, mode);
    EXPECT_EQ(m.images().sizes().vec(), (std::vector<int64_t>{n, 1, 28, 28}));
    EXPECT_EQ(m.targets().sizes().vec(), (std::vector<int64_t>{n}));
    EXPECT_EQ(m.targets().min().item<int64_t>(), 0);
    EXPECT_EQ(m.targets().max().item<int64_t>(), 9);
    // Fashion-MNIST is balanced: every class has n / 10 examples
    for (int64_t c = 0; c < 10; ++c) EXPECT_EQ(m.targets().eq(c).sum().item<int64_t>(), n / 10) << c;
    EXPECT_EQ(m.images().min().item<float>(), 0.0f);
    EXPECT_EQ(m.images().max().item<float>(), 1.0f);
  }
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
