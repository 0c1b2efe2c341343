// Threads: the adaptive policy that runs a thread's parallel regions serially while their closing
// barriers keep waiting for workers (core/contention.h), fed by hand and through parallel_for.
#include <gtest/gtest.h>
#include <omp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/contention.h"
#include "core/parallel.h"
#include "ember/ember.h"

using namespace ember;  // NOLINT
using detail::ContentionPolicy;

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

constexpr int64_t kMs = 1'000'000;

// Regions of 1 ms each at a steady clock, with the given share of it spent stalled.
struct Feed {
  ContentionPolicy policy;
  int64_t now = 1000 * kMs;
  bool region(double stall_share) {  // returns whether the next region runs serially
    if (!policy.serial(now)) policy.record(now + kMs, kMs, static_cast<int64_t>(stall_share * kMs));
    now += kMs;
    return policy.serial(now);
  }
  // Regions until the policy goes parallel again; returns how long it stayed serial.
  int64_t serial_for(double stall_share = 0) {
    const int64_t from = now;
    while (region(stall_share)) {
    }
    return now - from;
  }
};

TEST(ContentionPolicy, RegionsThatMostlyWorkStayParallel) {
  Feed f;
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(f.region(0.3));
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(f.region(0.85));  // slow workers, but still working
}

// The stall is all of a region outside the starting thread's own part: the wait before it (the
// thread itself run late) as well as after it.
TEST(ContentionPolicy, StallIsTheRegionOutsideTheStartingThreadsPart) {
  EXPECT_EQ(ContentionPolicy::region_stall(0, 100, 1100, 1500), 500);  // 100 before, 400 after
  EXPECT_EQ(ContentionPolicy::region_stall(0, 8 * kMs - 2000, 8 * kMs, 8 * kMs), 8 * kMs - 2000);
  EXPECT_EQ(ContentionPolicy::region_stall(0, 10, 10, 50), 50);  // no part of its own
  // two such regions of 1 ms whose part began at 0.97 ms make a stalled window
  ContentionPolicy p;
  for (int64_t t = kMs; t <= 2 * kMs; t += kMs) {
    EXPECT_FALSE(p.serial(t - kMs));
    p.record(t, kMs, ContentionPolicy::region_stall(t - kMs, t - 30'000, t, t));
  }
  EXPECT_TRUE(p.serial(2 * kMs));
}

TEST(ContentionPolicy, JudgesWholeWindowsOnly) {
  ContentionPolicy p;
  p.record(kMs, ContentionPolicy::kWindowNs / 2, ContentionPolicy::kWindowNs / 2);  // half a window
  EXPECT_FALSE(p.serial(kMs));
  p.record(2 * kMs, ContentionPolicy::kWindowNs / 2, ContentionPolicy::kWindowNs / 2);
  EXPECT_TRUE(p.serial(2 * kMs));
}

TEST(ContentionPolicy, StalledWindowHoldsSerialThenBacksOff) {
  Feed f;
  EXPECT_FALSE(f.region(0.95));
  EXPECT_TRUE(f.region(0.95));  // the second stalled millisecond completes a window
  EXPECT_EQ(f.serial_for(), ContentionPolicy::kFirstHoldNs);
  // stalled again as soon as it tries: twice as long
  f.region(0.95);
  f.region(0.95);
  EXPECT_EQ(f.serial_for(), 2 * ContentionPolicy::kFirstHoldNs);
  // a clean window of parallel regions resets the hold
  f.region(0.0);
  f.region(0.0);
  f.region(0.95);
  f.region(0.95);
  EXPECT_EQ(f.serial_for(), ContentionPolicy::kFirstHoldNs);
}

TEST(ContentionPolicy, HoldIsBounded) {
  Feed f;
  int64_t longest = 0;
  for (int round = 0; round < 20; ++round) {
    f.region(0.95);
    f.region(0.95);
    longest = std::max(longest, f.serial_for());
  }
  EXPECT_EQ(longest, ContentionPolicy::kMaxHoldNs);
}

// parallel_for measures the starting thread's wait: a worker that starts its part late (as a
// descheduled one does) turns the thread's regions serial, which then run on it alone.
TEST(AdaptiveThreads, StalledRegionsRunSerially) {
  const int saved = get_num_threads();
  set_num_threads(2);
  ASSERT_TRUE(adaptive_threads());
  std::atomic<int> max_team{0};
  for (int i = 0; i < 20 && detail::region_threads() > 1; ++i) {
    parallel_for(0, 2, 1, [&](int64_t, int64_t) {
      max_team = std::max(max_team.load(), omp_get_num_threads());
      if (omp_get_thread_num() != 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
  }
  EXPECT_EQ(max_team.load(), 2);
  EXPECT_EQ(detail::region_threads(), 1);
  // serial regions: one call covering the whole range, on this thread
  int calls = 0;
  parallel_for(0, 1 << 20, 1, [&](int64_t b, int64_t e) {
    ++calls;
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 1 << 20);
    EXPECT_FALSE(omp_in_parallel());
  });
  EXPECT_EQ(calls, 1);
  const Tensor x = arange(1 << 20, TensorOptions().dtype(kDouble));
  EXPECT_EQ(x.sum().item<double>(), double(1 << 20) * ((1 << 20) - 1) / 2);
  // another thread has its own judgement
  int other = 0;
  std::thread([&] { other = detail::region_threads(); }).join();
  EXPECT_EQ(other, 2);
  // turned off, regions get the configured count
  set_adaptive_threads(false);
  EXPECT_EQ(detail::region_threads(), 2);
  set_adaptive_threads(true);
  set_num_threads(saved);
}

TEST(AdaptiveThreads, OneThreadConfiguredIsOne) {
  const int saved = get_num_threads();
  set_num_threads(1);
  EXPECT_EQ(detail::region_threads(), 1);
  set_num_threads(saved);
}

// Processes spinning on every CPU and one more: results stay right whichever way regions run.
TEST(AdaptiveThreads, OversubscribedMachineComputesTheSame) {
  std::vector<pid_t> spinners;
  for (int i = 0; i <= omp_get_num_procs(); ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test, however it ends
      if (getppid() == 1) _exit(0);
      volatile unsigned long spin = 0;
      for (;;) spin = spin + 1;
    }
    ASSERT_GT(pid, 0);
    spinners.push_back(pid);
  }
  const Tensor x = arange(1 << 20, TensorOptions().dtype(kDouble));
  const Tensor w = randn({256, 256});
  const Tensor expected = w.matmul(w);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(x.sum().item<double>(), double(1 << 20) * ((1 << 20) - 1) / 2);
    EXPECT_TRUE(w.matmul(w).allclose(expected));
  }
  for (pid_t pid : spinners) kill(pid, SIGKILL);
  for (pid_t pid : spinners) waitpid(pid, nullptr, 0);
}

// A child forked after the parent's regions started OpenMP's workers has none of them (fork copies
// the calling thread only): its regions run on its own thread, where libgomp's next region waited
// for the missing workers forever. (As PyTorch, whose DataLoader workers are such children.)
TEST(ParallelRegions, ForkedChildRunsThemOnItsOwnThread) {
  using namespace std::chrono_literals;
  const int saved = get_num_threads();
  set_num_threads(2);
  set_adaptive_threads(false);  // the parent's regions take both threads, so the workers exist
  const Tensor x = arange(1 << 20, TensorOptions().dtype(kDouble));
  const double want = x.sum().item<double>();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    const bool ok =
        x.sum().item<double>() == want && (x * 2).sum().item<double>() == 2 * want && get_num_threads() == 1;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  bool done = false;
  for (const auto end = std::chrono::steady_clock::now() + 20s; !done && std::chrono::steady_clock::now() < end;) {
    done = waitpid(pid, &status, WNOHANG) == pid;
    if (!done) std::this_thread::sleep_for(2ms);
  }
  if (!done) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  EXPECT_TRUE(done) << "the forked child hung in a parallel region";
  EXPECT_TRUE(done && WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_EQ(get_num_threads(), 2);  // the parent keeps its threads
  set_adaptive_threads(true);
  set_num_threads(saved);
}

// One module, inference from several threads at once: each thread gets what one thread alone gets.
TEST(Threads, InferenceFromSeveralThreadsOnOneModule) {
  manual_seed(3);
  nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(3, 8, 3).padding(1)), nn::BatchNorm2d(8), nn::ReLU(),
                     nn::Flatten(), nn::Linear(8 * 8 * 8, 10), nn::LogSoftmax(1));
  net->eval();
  constexpr int kThreads = 4;
  std::vector<Tensor> inputs, expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(randn({2, 3, 8, 8}));
    InferenceMode guard;
    expected.push_back(net->forward(inputs.back()));
  }
  std::vector<int> matches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      InferenceMode guard;
      for (int r = 0; r < 10; ++r) matches[t] += net->forward(inputs[t]).allclose(expected[t], 1e-5, 1e-6);
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(matches[t], 10) << "thread " << t;
}

// The caching allocator: blocks made in one thread and freed in another go back to a cache and
// serve later tensors, while other threads allocate and free at the same time.
TEST(Threads, TensorsMadeInOneThreadFreedInAnother) {
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<int> errors(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        std::vector<Tensor> made;
        std::thread([&] {
          for (int i = 0; i < 8; ++i) made.push_back(full({(i + 1) * 3000 + t}, double(t * 100 + i)));
        }).join();
        std::thread([&] {
          for (int i = 0; i < 8; ++i) errors[t] += !made[i].eq(double(t * 100 + i)).all().item<bool>();
          made.clear();
        }).join();
        const Tensor again = ones({5000 + t}).mul_(t);  // reuses what the other thread freed
        errors[t] += again.sum().item<double>() != double(t) * (5000 + t);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], 0) << "thread " << t;
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
