// The hand-over between a data loader and its worker threads: batch requests go out numbered,
// batches (or the exception that building one threw) come back under the same number.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "ember/error.h"

namespace ember::data::detail {

template <class Request, class Batch>
class WorkQueue {
 public:
  struct Job {
    uint64_t sequence;
    Request request;
  };
  struct Result {
    std::optional<Batch> batch;  // empty when `error` is set
    std::exception_ptr error;
  };

  void push_job(uint64_t sequence, Request request) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back({sequence, std::move(request)});
    }
    job_ready_.notify_one();
  }

  // Blocks until a job is available; nullopt once quit() was called.
  std::optional<Job> pop_job() {
    std::unique_lock<std::mutex> lock(mutex_);
    job_ready_.wait(lock, [&] { return quit_ || !jobs_.empty(); });
    if (quit_) return std::nullopt;
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    ++running_;
    return job;
  }

  void push_result(uint64_t sequence, Result result) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      results_.emplace(sequence, std::move(result));
      --running_;
    }
    result_ready_.notify_all();
  }

  // The result numbered `sequence`, or the lowest-numbered one available when nullopt. Throws
  // ember::Error when none arrives within `timeout`.
  Result pop_result(std::optional<uint64_t> sequence, std::optional<std::chrono::milliseconds> timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto ready = [&] { return sequence ? results_.count(*sequence) > 0 : !results_.empty(); };
    if (timeout) {
      EMBER_CHECK(result_ready_.wait_for(lock, *timeout, ready), "DataLoader",
                  "timeout: no batch from the workers within ", timeout->count(), " ms");
    } else {
      result_ready_.wait(lock, ready);
    }
    auto it = sequence ? results_.find(*sequence) : results_.begin();
    Result result = std::move(it->second);
    results_.erase(it);
    return result;
  }

  // Forgets every job of the epoch: queued ones are dropped, running ones finish and their
  // results are discarded with the others.
  void drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    jobs_.clear();
    result_ready_.wait(lock, [&] { return running_ == 0; });
    results_.clear();
  }

  void quit() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      quit_ = true;
    }
    job_ready_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable job_ready_, result_ready_;
  std::deque<Job> jobs_;
  std::map<uint64_t, Result> results_;
  size_t running_ = 0;
  bool quit_ = false;
};

}  // namespace ember::data::detail
