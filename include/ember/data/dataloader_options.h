// DataLoaderOptions: libtorch's builder of a data loader's settings.
#pragma once
#include <chrono>
#include <cstddef>
#include <optional>

#include "ember/data/detail/arg.h"

namespace ember::data {

struct DataLoaderOptions {
  DataLoaderOptions() = default;
  DataLoaderOptions(size_t batch_size) : batch_size_(batch_size) {}  // NOLINT: implicit, as libtorch

  EMBER_DATA_ARG(size_t, batch_size) = 1;
  // Threads that build batches ahead of the consumer; 0 builds them in the calling thread.
  EMBER_DATA_ARG(size_t, workers) = 0;
  // Batches requested ahead at most (default 2 * workers).
  EMBER_DATA_ARG(std::optional<size_t>, max_jobs);
  // How long to wait for a batch before throwing.
  EMBER_DATA_ARG(std::optional<std::chrono::milliseconds>, timeout);
  // Batches come in the sampler's order; false yields each as soon as a worker finishes it.
  EMBER_DATA_ARG(bool, enforce_ordering) = true;
  // Drops the last batch of an epoch when it is smaller than batch_size.
  EMBER_DATA_ARG(bool, drop_last) = false;
};

// The options with defaults resolved.
struct FullDataLoaderOptions {
  explicit FullDataLoaderOptions(const DataLoaderOptions& options)
      : batch_size(options.batch_size()),
        workers(options.workers()),
        max_jobs(options.max_jobs().value_or(2 * workers)),
        timeout(options.timeout()),
        enforce_ordering(options.enforce_ordering()),
        drop_last(options.drop_last()) {}

  size_t batch_size;
  size_t workers;
  size_t max_jobs;
  std::optional<std::chrono::milliseconds> timeout;
  bool enforce_ordering;
  bool drop_last;
};

}  // namespace ember::data
