// Join: the count of ranks still iterating is an all-reduce that every iterating rank adds 1 to
// (notify_join_context) and every joined rank 0 to; joined ranks run their hooks while it is not 0.
// With throw_on_early_termination each iteration has a second all-reduce, of 0 from iterating
// ranks and 1 from a joined one, after which all raise (PyTorch's protocol).
#include "ember/distributed/join.h"

#include "ember/error.h"
#include "ember/factory.h"

namespace ember::distributed::algorithms {

namespace {
int64_t count(const ProcessGroupPtr& group, int64_t mine) {
  std::vector<Tensor> t{full({1}, mine, kLong)};
  group->allreduce(t)->wait();
  return t[0].item<int64_t>();
}
}  // namespace

Join::Join(std::vector<Joinable*> joinables, bool enable, bool throw_on_early_termination)
    : joinables_(std::move(joinables)), enable_(enable), throw_on_early_termination_(throw_on_early_termination) {
  EMBER_CHECK(!joinables_.empty(), "Join", "needs at least one joinable");
  for (Joinable* j : joinables_) {
    EMBER_CHECK(j, "Join", "a joinable is null");
    const ProcessGroupPtr g = j->join_process_group();
    EMBER_CHECK(!group_ || g == group_, "Join", "the joinables must share one process group");
    group_ = g;
  }
  for (size_t i = 0; i < joinables_.size(); ++i) {
    joinables_[i]->join_enabled_ = enable_;
    joinables_[i]->join_notifies_ = enable_ && i == 0;
    joinables_[i]->join_throws_ = throw_on_early_termination;
  }
}

Join::~Join() {
  for (Joinable* j : joinables_) j->join_enabled_ = j->join_notifies_ = j->join_throws_ = false;
}

void Join::notify_join_context(Joinable& joinable) {
  if (!joinable.join_notifies_) return;
  const ProcessGroupPtr group = joinable.join_process_group();
  count(group, 1);
  EMBER_CHECK(!joinable.join_throws_ || count(group, 0) == 0, "Join",
              "rank ", group->rank(), ": detected at least one rank that exhausted its inputs "
              "(throw_on_early_termination): throwing across all ranks");
}

void Join::join() {
  if (!enable_) return;
  std::vector<std::unique_ptr<JoinHook>> hooks;
  for (Joinable* j : joinables_) hooks.push_back(j->join_hook());
  bool last = true;
  for (int64_t iterating; (iterating = count(group_, 0)) > 0;) {
    if (throw_on_early_termination_) {
      count(group_, 1);
      ember::detail::fail("Join", "rank ", group_->rank(), " exhausted its inputs while ", iterating,
                          " other rank(s) still iterate (throw_on_early_termination): throwing across all ranks");
    }
    last = false;
    for (auto& h : hooks) h->main_hook();
  }
  for (auto& h : hooks) h->post_hook(last);
}

}  // namespace ember::distributed::algorithms
