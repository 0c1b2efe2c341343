// torch.distributed.algorithms.Join for uneven inputs (library ember_distributed): a rank that
// ran out of data calls join(), and until every rank has joined it shadows the collectives that
// the others' iterations run (DistributedDataParallel's: zero gradients to their all-reduces), so
// that ranks with different numbers of batches finish without a hang. With
// throw_on_early_termination, every rank raises instead as soon as one has run out.
//
//   dist::algorithms::Join join({ddp.get()});
//   for (auto& batch : my_batches) { ...forward, backward, step... }
//   join.join();  // every rank, after its last batch
#pragma once
#include <memory>
#include <vector>

#include "ember/distributed.h"

namespace ember::distributed::algorithms {

// What a joined rank runs for a joinable: main_hook once per iteration that other ranks still
// run, post_hook once every rank joined (is_last_joiner: this rank joined last).
class JoinHook {
 public:
  virtual ~JoinHook() = default;
  virtual void main_hook() {}
  virtual void post_hook(bool is_last_joiner) {}
};

class Joinable {
 public:
  virtual ~Joinable() = default;
  virtual std::unique_ptr<JoinHook> join_hook() = 0;
  virtual ProcessGroupPtr join_process_group() = 0;

 protected:
  // Set while a Join holds the joinable; the first joinable of a Join notifies it each iteration.
  bool join_enabled_ = false;
  bool join_notifies_ = false;
  bool join_throws_ = false;  // throw_on_early_termination
  friend class Join;
};

class Join {
 public:
  // The joinables must share one process group. throw_on_early_termination: instead of
  // shadowing, a rank that joins while others still iterate makes every rank raise an
  // ember::Error (the others at their next iteration), as PyTorch's.
  explicit Join(std::vector<Joinable*> joinables, bool enable = true, bool throw_on_early_termination = false);
  ~Join();  // releases the joinables (join() must have run on every rank before)
  Join(const Join&) = delete;
  Join& operator=(const Join&) = delete;

  // After this rank's last iteration: shadows the others' iterations until all joined.
  void join();
  // Called by a joinable at the start of each iteration (DDP: in forward): one all-reduce that
  // counts the ranks still iterating (with throw_on_early_termination, a second that tells
  // whether one has joined).
  static void notify_join_context(Joinable& joinable);

 private:
  std::vector<Joinable*> joinables_;
  bool enable_, throw_on_early_termination_;
  ProcessGroupPtr group_;
};

}  // namespace ember::distributed::algorithms
