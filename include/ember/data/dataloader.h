// The data loader, as libtorch's: make_data_loader(dataset, options) returns a unique_ptr to a
// loader whose range-for yields the batches of one epoch. With workers(n > 0), n threads build
// up to max_jobs batches ahead of the consumer, each with its own copy of the dataset; batches
// still arrive in the sampler's order, and an exception thrown while building a batch is
// rethrown to the consumer when that batch is due. A stateful dataset gets a StatefulDataLoader
// instead, which has no sampler.
#pragma once
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/data/dataloader_options.h"
#include "ember/data/datasets/base.h"
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

// What both loaders share: the options' checks, the worker threads (each answers requests with
// Self::answer(worker, request), `worker` its index), the epoch's bookkeeping, the hand-back of
// answers in request order (with enforce_ordering) and join(). Self supplies answer(),
// start_epoch() (the sampler's or the dataset's reset), next_request() and next().
template <class Self, class Request, class Answer>
class DataLoaderBase {
 public:
  // Starts an epoch: requests of an unfinished one are dropped (the ones being answered finish
  // first), then Self's epoch starts.
  auto begin() {
    EMBER_CHECK(!joined_, "DataLoader", "begin() called after join()");
    if (options_.workers > 0) queue_.drain();
    self().start_epoch();
    next_sequence_ = 0;
    next_result_ = 0;
    pending_ = 0;
    prefetch(options_.max_jobs);
    return Iterator<typename Self::BatchType>([this] { return self().next(); });
  }
  auto end() { return Iterator<typename Self::BatchType>(); }

  // Stops the workers once the requests being answered return; the loader yields nothing afterwards.
  void join() {
    if (joined_) return;
    joined_ = true;
    queue_.quit();
    for (auto& worker : workers_) worker.join();
  }

  const FullDataLoaderOptions& options() const noexcept { return options_; }

 protected:
  using Queue = detail::WorkQueue<Request, Answer>;

  explicit DataLoaderBase(DataLoaderOptions options) : options_(options) {
    EMBER_CHECK(options_.batch_size > 0, "DataLoader", "batch_size must be positive");
    EMBER_CHECK(options_.workers == 0 || options_.max_jobs > 0, "DataLoader",
                "max_jobs must be positive when there are workers");
  }
  ~DataLoaderBase() = default;  // (Self joins first: its members outlive the workers)
  DataLoaderBase(const DataLoaderBase&) = delete;
  DataLoaderBase& operator=(const DataLoaderBase&) = delete;

  // Called by Self's constructor once the members the workers use are built.
  void start_workers() {
    for (size_t w = 0; w < options_.workers; ++w) workers_.emplace_back([this, w] { worker_thread(w); });
  }

  // Up to `jobs` more requests out to the workers (none without workers).
  void prefetch(size_t jobs) {
    if (options_.workers == 0) return;
    for (size_t i = 0; i < jobs; ++i) {
      auto request = self().next_request();
      if (!request) return;
      queue_.push_job(next_sequence_++, std::move(*request));
      ++pending_;
    }
  }

  // The next answer due (nullopt when none is out), with one more request sent in its place.
  std::optional<typename Queue::Result> next_answer() {
    if (pending_ == 0) return std::nullopt;
    std::optional<uint64_t> wanted;
    if (options_.enforce_ordering) wanted = next_result_;
    auto result = queue_.pop_result(wanted, options_.timeout);
    ++next_result_;
    --pending_;
    return result;
  }

  FullDataLoaderOptions options_;

 private:
  Self& self() { return static_cast<Self&>(*this); }

  void worker_thread(size_t worker) {
    while (auto job = queue_.pop_job()) {
      typename Queue::Result result;
      try {
        result.batch.emplace(self().answer(worker, std::move(job->request)));
      } catch (...) {
        result.error = std::current_exception();
      }
      queue_.push_result(job->sequence, std::move(result));
    }
  }

  Queue queue_;
  std::vector<std::thread> workers_;
  uint64_t next_sequence_ = 0;  // of the next request sent out
  uint64_t next_result_ = 0;    // of the next answer due
  size_t pending_ = 0;          // requests sent out and not yet answered to the consumer
  bool joined_ = false;
};

template <class Dataset, class Sampler>
class StatelessDataLoader
    : public DataLoaderBase<StatelessDataLoader<Dataset, Sampler>, typename Sampler::BatchRequestType,
                            typename Dataset::BatchType> {
  using Base = DataLoaderBase<StatelessDataLoader, typename Sampler::BatchRequestType, typename Dataset::BatchType>;
  friend Base;

 public:
  using BatchType = typename Dataset::BatchType;
  using BatchRequestType = typename Sampler::BatchRequestType;

  // Each worker has its own copy of the dataset.
  StatelessDataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : Base(options), sampler_(std::move(sampler)) {
    if (this->options_.workers == 0) {
      main_thread_dataset_.emplace(std::move(dataset));
    } else {
      worker_datasets_.reserve(this->options_.workers);
      for (size_t w = 0; w < this->options_.workers; ++w) worker_datasets_.push_back(dataset);
    }
    this->start_workers();
  }
  ~StatelessDataLoader() { this->join(); }

 private:
  BatchType answer(size_t worker, BatchRequestType request) {
    return worker_datasets_[worker].get_batch(std::move(request));
  }
  void start_epoch() { sampler_.reset(std::nullopt); }
  std::optional<BatchRequestType> next_request() {
    auto request = sampler_.next(this->options_.batch_size);
    if (request && this->options_.drop_last && request->size() < this->options_.batch_size) return std::nullopt;
    return request;
  }
  std::optional<BatchType> next() {
    if (this->options_.workers == 0) {
      auto request = next_request();
      if (!request) return std::nullopt;
      return main_thread_dataset_->get_batch(std::move(*request));
    }
    auto result = this->next_answer();
    if (!result) return std::nullopt;
    this->prefetch(1);
    if (result->error) std::rethrow_exception(result->error);
    return std::move(result->batch);
  }

  Sampler sampler_;
  std::vector<Dataset> worker_datasets_;
  std::optional<Dataset> main_thread_dataset_;
};

// A stateful dataset (a StatefulDataset, a ChunkDataset behind make_shared_dataset, either
// mapped) keeps its own place in the epoch: the loader asks it for batch_size examples until it
// answers nullopt, and begin() resets it. With workers(n > 0) all n threads call get_batch on
// the one dataset the loader holds (as libtorch's), up to max_jobs requests ahead; with
// enforce_ordering the batches come back in the order of the requests. An exception from
// get_batch is rethrown when its batch is due, and the epoch goes on after it.
template <class Dataset>
class StatefulDataLoader : public DataLoaderBase<StatefulDataLoader<Dataset>, typename Dataset::BatchRequestType,
                                                 typename Dataset::BatchType> {
  using Base = DataLoaderBase<StatefulDataLoader, typename Dataset::BatchRequestType, typename Dataset::BatchType>;
  friend Base;

 public:
  using BatchType = typename Dataset::BatchType::value_type;
  using BatchRequestType = typename Dataset::BatchRequestType;

  StatefulDataLoader(Dataset dataset, DataLoaderOptions options) : Base(options), dataset_(std::move(dataset)) {
    this->start_workers();
  }
  ~StatefulDataLoader() { this->join(); }

 private:
  typename Dataset::BatchType answer(size_t, BatchRequestType request) { return dataset_.get_batch(std::move(request)); }
  void start_epoch() { dataset_.reset(); }
  std::optional<BatchRequestType> next_request() { return BatchRequestType(this->options_.batch_size); }
  std::optional<BatchType> next() {
    if (this->options_.workers == 0) return dataset_.get_batch(BatchRequestType(this->options_.batch_size));
    // An answer of nullopt is the end of the dataset's epoch: no request replaces it, and once
    // every request sent out has been answered the loader's epoch ends too.
    while (auto result = this->next_answer()) {
      if (result->error) {
        this->prefetch(1);
        std::rethrow_exception(result->error);
      }
      if (*result->batch) {
        this->prefetch(1);
        return std::move(**result->batch);
      }
    }
    return std::nullopt;
  }

  Dataset dataset_;  // the workers' too
};

// libtorch's template order: make_data_loader<SequentialSampler>(dataset, 64) names the sampler of
// the form below, never this one (whose first parameter is the dataset's type).
template <class Dataset, class Sampler>
  requires(!::ember::detail::is_stateful_dataset_v<Dataset>)
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset, Sampler sampler,
                                                                        DataLoaderOptions options) {
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset), std::move(sampler),
                                                                 std::move(options));
}

// The sampler is built over the dataset's size; as libtorch's, the default one shuffles.
template <class Sampler = samplers::RandomSampler, class Dataset>
  requires(!::ember::detail::is_stateful_dataset_v<Dataset> && std::is_constructible_v<Sampler, size_t>)
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset,
                                                                        DataLoaderOptions options = DataLoaderOptions()) {
  const std::optional<size_t> size = dataset.size();
  EMBER_CHECK(size.has_value(), "make_data_loader", "the dataset has no size, so no sampler can be built for it");
  return make_data_loader(std::move(dataset), Sampler(*size), std::move(options));
}

// A stateful dataset needs no sampler: it hands out its own batches.
template <class Dataset>
  requires ::ember::detail::is_stateful_dataset_v<Dataset>
std::unique_ptr<StatefulDataLoader<Dataset>> make_data_loader(Dataset dataset,
                                                              DataLoaderOptions options = DataLoaderOptions()) {
  return std::make_unique<StatefulDataLoader<Dataset>>(std::move(dataset), std::move(options));
}

}  // namespace ember::data
