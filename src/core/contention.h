// When a thread's parallel regions run serially: the policy behind detail::region_threads(), kept
// apart from the clock so tests can feed it. See docs/threads.md.
#pragma once
#include <cstdint>

namespace ember::detail {

class ContentionPolicy {
 public:
  // Region time a judgement needs: shorter windows are mostly noise.
  static constexpr int64_t kWindowNs = 2'000'000;
  // A window is stalled when this share of its regions' time lay outside the starting thread's
  // own part (waiting for the other threads, or to be run itself): threads that the scheduler
  // hardly runs. Milder stalls are common on a busy machine, and there two threads
  // still beat one (measured: docs/threads.md).
  static constexpr double kStalledShare = 0.9;
  // Serial for this long after a stalled window, doubling while every return to parallel regions
  // stalls again, up to the maximum; a clean window of parallel regions resets it.
  static constexpr int64_t kFirstHoldNs = 100'000'000, kMaxHoldNs = 2'000'000'000;

  // Whether regions started at `now_ns` run on the starting thread alone.
  bool serial(int64_t now_ns);
  // A parallel region that took `wall_ns`, `stall_ns` of it outside the starting thread's own part,
  // ending at `now_ns`.
  void record(int64_t now_ns, int64_t wall_ns, int64_t stall_ns);
  // The stall of a region from its start and end and those of the starting thread's own part: the
  // time spent waiting for the workers to start or finish, or for the scheduler to run the starting
  // thread itself. (A woken worker queued on the starting thread's CPU, niced processes on both,
  // made regions of two threads wait 4-8 ms before the starting thread's part began, the workers
  // done by then: counting only the wait after its part, the policy saw no stall.)
  static int64_t region_stall(int64_t start_ns, int64_t own_start_ns, int64_t own_end_ns, int64_t end_ns) {
    return (end_ns - start_ns) - (own_end_ns > own_start_ns ? own_end_ns - own_start_ns : 0);
  }

 private:
  int64_t window_wall_ns_ = 0, window_stall_ns_ = 0;
  bool serial_ = false;
  int64_t hold_ns_ = kFirstHoldNs;
  int64_t serial_until_ns_ = 0;
};

}  // namespace ember::detail
