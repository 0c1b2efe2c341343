// ChunkDataset, as libtorch's: a stateful dataset over data stored in chunks (files, or parts of
// one), read whole by a ChunkDataReader. Sampling is hierarchical: the chunk sampler picks which
// chunks to read next (cross_chunk_shuffle_count of them are read together and mixed), the
// example sampler orders the examples of what was read. preloader_count threads read ahead of the
// consumer into a buffer of batches holding up to about cache_size examples; get_batch hands out
// the buffer's batches in order and nullopt once every chunk was read and handed out.
//
// Batches cross chunk boundaries: a chunk's first examples complete the last batch the buffer
// holds before new batches start, so only an epoch's last batch can be short (and one that a
// reader's exception follows). With several preloaders, chunks enter the buffer in the order their
// reads finish. An exception from the reader (or the preprocessing policy) takes the place of that
// chunk's examples in the buffer and is rethrown by get_batch when its turn comes; the epoch goes
// on after it.
//
// reset() ends the running epoch (its preloaders are stopped and joined, the buffer is dropped)
// and starts the next one. It must not run while another thread is inside get_batch; the
// StatefulDataLoader makes sure of that. The reader's read_chunk is called from the preloader
// threads, concurrently when preloader_count > 1.
#pragma once
#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "ember/data/datasets/stateful.h"
#include "ember/data/detail/arg.h"
#include "ember/data/samplers/random.h"
#include "ember/data/samplers/serialize.h"
#include "ember/error.h"
#include "ember/serialize/archive.h"

namespace ember::data::datasets {

template <class ExampleType_, class ChunkType_ = std::vector<ExampleType_>>
class ChunkDataReader {
 public:
  using ChunkType = ChunkType_;
  using ExampleType = ExampleType_;

  virtual ~ChunkDataReader() = default;
  // All examples of chunk `chunk_index` (in [0, chunk_count())).
  virtual ChunkType read_chunk(size_t chunk_index) = 0;
  virtual size_t chunk_count() = 0;
  // Forgets any state of the reader's own; called when an epoch starts (but not when it resumes
  // from a loaded checkpoint).
  virtual void reset() = 0;
};

struct ChunkDatasetOptions {
  ChunkDatasetOptions() = delete;
  ChunkDatasetOptions(size_t preloader_count, size_t batch_size, size_t cache_size = 2048,
                      size_t cross_chunk_shuffle_count = 1)
      : preloader_count_(preloader_count),
        batch_size_(batch_size),
        cache_size_(cache_size),
        cross_chunk_shuffle_count_(cross_chunk_shuffle_count) {
    // libtorch's messages
    EMBER_CHECK(preloader_count_ > 0, "ChunkDatasetOptions",
                "Preloader count is 0. At least one preloader needs to be specified.");
    EMBER_CHECK(batch_size_ > 0, "ChunkDatasetOptions",
                "Batch size is 0. A positive batch size needs to be specified.");
    EMBER_CHECK(cache_size_ > 0, "ChunkDatasetOptions",
                "Cache size is 0. A positive cache size needs to be specified.");
    EMBER_CHECK(cache_size_ >= batch_size_, "ChunkDatasetOptions",
                "Cache size is less than batch size. Cache needs to be large enough to hold at least one batch.");
    EMBER_CHECK(cross_chunk_shuffle_count_ > 0, "ChunkDatasetOptions",
                "cross_chunk_shuffle_count needs to be greater than 0.");
  }


  // Threads reading chunks ahead of the consumer.
  EMBER_DATA_ARG(size_t, preloader_count);
  EMBER_DATA_ARG(size_t, batch_size);
  // Examples the buffer holds before the preloaders wait (a chunk that arrives while there is
  // room enters whole, so the buffer can pass it by less than one read's worth).
  EMBER_DATA_ARG(size_t, cache_size) = 2048;
  // Chunks read together and shuffled as one by the example sampler; 1 shuffles within a chunk.
  EMBER_DATA_ARG(size_t, cross_chunk_shuffle_count) = 1;
};

}  // namespace ember::data::datasets

// Beside the loader's WorkQueue (see base.h on why not in ember::data::datasets::detail).
namespace ember::data::detail {

// One epoch's hand-over between the preloaders and the consumer: a queue of batches, each either
// examples or the exception that reading a chunk threw.
template <class Batch, class ExampleSampler>
class ChunkBatchBuffer {
 public:
  ChunkBatchBuffer(size_t batch_size, size_t capacity, size_t preloaders, ExampleSampler& example_sampler)
      : batch_size_(batch_size), capacity_(capacity), preloaders_(preloaders), example_sampler_(example_sampler) {}

  // Waits for room, then cuts `examples` into batches in the example sampler's order. False when
  // the buffer was stopped (the preloader should quit).
  bool push(Batch examples) {
    std::unique_lock<std::mutex> lock(mutex_);
    room_.wait(lock, [&] { return stopped_ || buffered_ < capacity_; });
    if (stopped_) return false;
    const size_t n = examples.size();
    if (n == 0) return true;
    const std::vector<size_t> order = draw_order(n);  // may throw: nothing changed yet
    size_t next = 0;
    if (!entries_.empty() && !entries_.back().error && entries_.back().batch.size() < batch_size_) {
      Batch& last = entries_.back().batch;
      while (next < n && last.size() < batch_size_) last.push_back(std::move(examples[order[next++]]));
    }
    while (next < n) {
      Entry entry;
      entry.batch.reserve(std::min(batch_size_, n - next));
      while (next < n && entry.batch.size() < batch_size_) entry.batch.push_back(std::move(examples[order[next++]]));
      entries_.push_back(std::move(entry));
    }
    buffered_ += n;
    lock.unlock();
    ready_.notify_all();
    return true;
  }

  // Queues an exception in place of a chunk. Not bounded by the cache: each read adds one at most.
  void push_error(std::exception_ptr error) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopped_) return;
      Entry entry;
      entry.error = std::move(error);
      entries_.push_back(std::move(entry));
    }
    ready_.notify_all();
  }

  // A preloader is done with the epoch; after the last one the buffer only empties.
  void preloader_done() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --preloaders_;
    }
    ready_.notify_all();
  }

  // The next batch: waits until the front one is complete (full, followed by another entry, or
  // the last of the epoch). nullopt once the epoch is exhausted, or the buffer stopped.
  std::optional<Batch> pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] {
      if (stopped_) return true;
      if (entries_.empty()) return preloaders_ == 0;
      const Entry& front = entries_.front();
      return front.error || front.batch.size() >= batch_size_ || entries_.size() > 1 || preloaders_ == 0;
    });
    if (stopped_ || entries_.empty()) return std::nullopt;
    Entry entry = std::move(entries_.front());
    entries_.pop_front();
    buffered_ -= entry.batch.size();
    lock.unlock();
    room_.notify_all();
    if (entry.error) std::rethrow_exception(entry.error);
    return std::move(entry.batch);
  }

  // Wakes everyone: preloaders waiting for room return, consumers get nullopt.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopped_ = true;
    }
    room_.notify_all();
    ready_.notify_all();
  }

  bool stopped() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stopped_;
  }

 private:
  struct Entry {
    Batch batch;
    std::exception_ptr error;
  };

  // The example sampler's order over n examples (called with the lock held: the sampler is shared
  // by the preloaders).
  std::vector<size_t> draw_order(size_t n) {
    example_sampler_.reset(n);
    std::vector<size_t> order;
    order.reserve(n);
    while (order.size() < n) {
      auto indices = example_sampler_.next(n - order.size());
      EMBER_CHECK(indices && !indices->empty(), "ChunkDataset", "the example sampler gave ", order.size(),
                  " indices for a chunk of ", n, " examples");
      for (size_t i : *indices) {
        EMBER_CHECK(i < n, "ChunkDataset", "the example sampler gave index ", i, " for a chunk of ", n,
                    " examples");
        order.push_back(i);
      }
    }
    return order;
  }

  const size_t batch_size_;
  const size_t capacity_;
  size_t preloaders_;  // still reading
  ExampleSampler& example_sampler_;
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<Entry> entries_;
  size_t buffered_ = 0;  // examples in entries_
  bool stopped_ = false;
};

}  // namespace ember::data::detail

namespace ember::data::datasets {

// ChunkReader: a ChunkDataReader (or any type with read_chunk, chunk_count, reset) that names its
// chunk type BatchType, as libtorch requires. The dataset is neither copyable nor movable: give it
// to make_data_loader through make_shared_dataset.
template <class ChunkReader, class ChunkSampler = samplers::RandomSampler,
          class ExampleSampler = samplers::RandomSampler>
class ChunkDataset final : public StatefulDataset<ChunkDataset<ChunkReader, ChunkSampler, ExampleSampler>,
                                                  typename ChunkReader::BatchType, size_t> {
 public:
  using BatchType = std::optional<typename ChunkReader::BatchType>;
  using UnwrappedBatchType = typename ChunkReader::BatchType;
  using BatchRequestType = size_t;
  using ChunkSamplerType = ChunkSampler;
  using ExampleSamplerType = ExampleSampler;

  // preprocessing_policy, when given, runs on everything read for one buffer fill (a chunk, or
  // cross_chunk_shuffle_count of them joined) before the example sampler orders it.
  ChunkDataset(ChunkReader chunk_reader, ChunkSampler chunk_sampler, ExampleSampler example_sampler,
               ChunkDatasetOptions options,
               std::function<void(UnwrappedBatchType&)> preprocessing_policy =
                   std::function<void(UnwrappedBatchType&)>())
      : chunk_reader_(std::move(chunk_reader)),
        chunk_sampler_(std::move(chunk_sampler)),
        example_sampler_(std::move(example_sampler)),
        options_(std::move(options)),
        preprocessing_policy_(std::move(preprocessing_policy)) {}

  ChunkDataset(const ChunkDataset&) = delete;
  ChunkDataset& operator=(const ChunkDataset&) = delete;

  ~ChunkDataset() override { stop_preloaders(); }

  // The next batch of the epoch (waiting for the preloaders when none is ready), nullopt after the
  // last. batch_size must be the options' (the loader asks for that).
  BatchType get_batch(size_t batch_size) override {
    EMBER_CHECK(buffer_ != nullptr, "ChunkDataset", "Dataset needs to call reset() before calling get_batch().");
    EMBER_CHECK(batch_size == options_.batch_size(), "ChunkDataset",
                "The requested batch size does not match with the initialized batch size. The requested batch "
                "size is ",
                batch_size, ", while the dataset is created with batch size equal to ", options_.batch_size());
    return buffer_->pop();
  }
  BatchType get_batch() { return get_batch(options_.batch_size()); }

  // Starts an epoch: whatever the previous one had not handed out is dropped; the chunk sampler
  // starts over on chunk_count() chunks, unless load() just restored its place (then the epoch
  // resumes there, once).
  void reset() override {
    stop_preloaders();
    {
      std::lock_guard<std::mutex> lock(chunk_sampler_mutex_);
      if (!resume_from_checkpoint_) {
        chunk_reader_.reset();
        chunk_sampler_.reset(chunk_reader_.chunk_count());
      }
      resume_from_checkpoint_ = false;
    }
    buffer_ = std::make_shared<Buffer>(options_.batch_size(), options_.cache_size(), options_.preloader_count(),
                                       example_sampler_);
    preloaders_.reserve(options_.preloader_count());
    for (size_t i = 0; i < options_.preloader_count(); ++i) {
      preloaders_.emplace_back([this, buffer = buffer_] { preload(*buffer); });
    }
  }

  std::optional<size_t> size() const override { return std::nullopt; }

  // The chunk sampler itself (a distributed one's set_epoch goes through here). Not to be used
  // while an epoch is being read.
  ChunkSamplerType& chunk_sampler() { return chunk_sampler_; }

  // The chunk sampler's place: the chunks handed to the preloaders so far, whether or not their
  // batches have reached the consumer yet.
  void save(serialize::OutputArchive& archive) const override {
    std::lock_guard<std::mutex> lock(chunk_sampler_mutex_);
    chunk_sampler_.save(archive);
  }
  // Restores the chunk sampler's place; the next reset() resumes from it.
  void load(serialize::InputArchive& archive) override {
    std::lock_guard<std::mutex> lock(chunk_sampler_mutex_);
    chunk_sampler_.load(archive);
    resume_from_checkpoint_ = true;
  }

 private:
  using Buffer = detail::ChunkBatchBuffer<UnwrappedBatchType, ExampleSampler>;

  // The chunk indices of the next buffer fill; nullopt when the epoch has no more chunks.
  std::optional<std::vector<size_t>> next_chunks() {
    std::lock_guard<std::mutex> lock(chunk_sampler_mutex_);
    auto chunks = chunk_sampler_.next(options_.cross_chunk_shuffle_count());
    if (chunks && chunks->empty()) return std::nullopt;
    return chunks;
  }

  void preload(Buffer& buffer) {
    while (!buffer.stopped()) {
      std::exception_ptr error;
      try {
        auto chunks = next_chunks();
        if (!chunks) break;
        UnwrappedBatchType examples = chunk_reader_.read_chunk((*chunks)[0]);
        for (size_t k = 1; k < chunks->size(); ++k) {
          UnwrappedBatchType more = chunk_reader_.read_chunk((*chunks)[k]);
          std::move(more.begin(), more.end(), std::back_inserter(examples));
        }
        if (preprocessing_policy_) preprocessing_policy_(examples);
        if (!buffer.push(std::move(examples))) break;
      } catch (...) {
        error = std::current_exception();
      }
      // Queued once the handler is over: the consumer may rethrow and free the exception as soon
      // as it is queued, and this thread must hold no reference to it by then.
      if (error) buffer.push_error(std::move(error));
    }
    buffer.preloader_done();
  }

  void stop_preloaders() {
    if (buffer_) buffer_->stop();
    for (auto& thread : preloaders_) thread.join();
    preloaders_.clear();
  }

  ChunkReader chunk_reader_;
  ChunkSamplerType chunk_sampler_;
  ExampleSamplerType example_sampler_;  // used by the buffer, under its lock
  const ChunkDatasetOptions options_;
  std::function<void(UnwrappedBatchType&)> preprocessing_policy_;
  mutable std::mutex chunk_sampler_mutex_;  // the preloaders share the chunk sampler
  bool resume_from_checkpoint_ = false;
  std::shared_ptr<Buffer> buffer_;  // the running epoch's; null before the first reset()
  std::vector<std::thread> preloaders_;
};

}  // namespace ember::data::datasets
