// The data loader, as libtorch's: make_data_loader(dataset, options) returns a unique_ptr to a
// loader whose range-for yields the batches of one epoch. With workers(n > 0), n threads build
// up to max_jobs batches ahead of the consumer, each with its own copy of the dataset; batches
// still arrive in the sampler's order, and an exception thrown while building a batch is
// rethrown to the consumer when that batch is due.
#pragma once
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "ember/data/dataloader_options.h"
#include "ember/data/detail/work_queue.h"
#include "ember/data/samplers/random.h"
#include "ember/data/samplers/sequential.h"
#include "ember/error.h"

namespace ember::data {

// An input iterator over an epoch; the default-constructed one is the end.
template <class Batch>
class Iterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = Batch;
  using difference_type = std::ptrdiff_t;
  using pointer = Batch*;
  using reference = Batch&;

  Iterator() = default;
  explicit Iterator(std::function<std::optional<Batch>()> next) : next_(std::move(next)), batch_(next_()) {}

  Batch& operator*() {
    EMBER_CHECK(batch_.has_value(), "DataLoader", "dereferencing an iterator past the end of the epoch");
    return *batch_;
  }
  Batch* operator->() { return &**this; }
  Iterator& operator++() {
    EMBER_CHECK(batch_.has_value(), "DataLoader", "incrementing an iterator past the end of the epoch");
    batch_.reset();  // the batch's memory is free before the next one is built
    batch_ = next_();
    return *this;
  }
  void operator++(int) { ++*this; }
  // Only "has this epoch ended" is meaningful: all exhausted iterators are equal.
  friend bool operator==(const Iterator& a, const Iterator& b) { return !a.batch_ && !b.batch_; }

 private:
  std::function<std::optional<Batch>()> next_;
  std::optional<Batch> batch_;
};

template <class Dataset, class Sampler>
class StatelessDataLoader {
 public:
  using BatchType = typename Dataset::BatchType;
  using BatchRequestType = typename Sampler::BatchRequestType;

  StatelessDataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : options_(options), sampler_(std::move(sampler)) {
    EMBER_CHECK(options_.batch_size > 0, "DataLoader", "batch_size must be positive");
    EMBER_CHECK(options_.workers == 0 || options_.max_jobs > 0, "DataLoader",
                "max_jobs must be positive when there are workers");
    for (size_t w = 0; w < options_.workers; ++w) {
      workers_.emplace_back([this, dataset]() mutable { worker_thread(dataset); });
    }
    if (options_.workers == 0) main_thread_dataset_.emplace(std::move(dataset));
  }
  ~StatelessDataLoader() { join(); }
  StatelessDataLoader(const StatelessDataLoader&) = delete;
  StatelessDataLoader& operator=(const StatelessDataLoader&) = delete;

  // Starts an epoch: a new pass of the sampler; batches of an unfinished epoch are dropped.
  Iterator<BatchType> begin() {
    EMBER_CHECK(!joined_, "DataLoader", "begin() called after join()");
    if (options_.workers > 0) queue_.drain();
    sampler_.reset(std::nullopt);
    next_sequence_ = 0;
    next_result_ = 0;
    pending_ = 0;
    prefetch(options_.max_jobs);
    return Iterator<BatchType>([this] { return next(); });
  }
  Iterator<BatchType> end() { return Iterator<BatchType>(); }

  // Stops the workers (pending batches are dropped); the loader yields nothing afterwards.
  void join() {
    if (joined_) return;
    joined_ = true;
    queue_.quit();
    for (auto& worker : workers_) worker.join();
  }

  const FullDataLoaderOptions& options() const noexcept { return options_; }

 private:
  using Queue = detail::WorkQueue<BatchRequestType, BatchType>;

  void worker_thread(Dataset& dataset) {
    while (auto job = queue_.pop_job()) {
      typename Queue::Result result;
      try {
        result.batch.emplace(dataset.get_batch(std::move(job->request)));
      } catch (...) {
        result.error = std::current_exception();
      }
      queue_.push_result(job->sequence, std::move(result));
    }
  }

  std::optional<BatchRequestType> next_request() {
    auto request = sampler_.next(options_.batch_size);
    if (request && options_.drop_last && request->size() < options_.batch_size) return std::nullopt;
    return request;
  }

  void prefetch(size_t jobs) {
    for (size_t i = 0; i < jobs; ++i) {
      auto request = next_request();
      if (!request) return;
      queue_.push_job(next_sequence_++, std::move(*request));
      ++pending_;
    }
  }

  std::optional<BatchType> next() {
    if (options_.workers == 0) {
      auto request = next_request();
      if (!request) return std::nullopt;
      return main_thread_dataset_->get_batch(std::move(*request));
    }
    if (pending_ == 0) return std::nullopt;
    std::optional<uint64_t> wanted;
    if (options_.enforce_ordering) wanted = next_result_;
    auto result = queue_.pop_result(wanted, options_.timeout);
    ++next_result_;
    --pending_;
    prefetch(1);
    if (result.error) std::rethrow_exception(result.error);
    return std::move(result.batch);
  }

  FullDataLoaderOptions options_;
  Sampler sampler_;
  Queue queue_;
  std::vector<std::thread> workers_;
  std::optional<Dataset> main_thread_dataset_;
  uint64_t next_sequence_ = 0;  // of the next job sent out
  uint64_t next_result_ = 0;    // of the next batch due
  size_t pending_ = 0;          // jobs sent out and not yet handed to the consumer
  bool joined_ = false;
};

// libtorch's template order: make_data_loader<SequentialSampler>(dataset, 64) names the sampler of
// the form below, never this one (whose first parameter is the dataset's type).
template <class Dataset, class Sampler>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset, Sampler sampler,
                                                                        DataLoaderOptions options) {
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset), std::move(sampler),
                                                                 std::move(options));
}

// The sampler is built over the dataset's size; as libtorch's, the default one shuffles.
template <class Sampler = samplers::RandomSampler, class Dataset>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset,
                                                                        DataLoaderOptions options = DataLoaderOptions()) {
  const std::optional<size_t> size = dataset.size();
  EMBER_CHECK(size.has_value(), "make_data_loader", "the dataset has no size, so no sampler can be built for it");
  return make_data_loader(std::move(dataset), Sampler(*size), std::move(options));
}

}  // namespace ember::data
