// torch.distributed.optim.ZeroRedundancyOptimizer (library ember_distributed): each rank keeps
// the optimizer state of a share of the parameters only (ZeRO stage 1). The parameters are
// partitioned as PyTorch does: per group, largest first, each to the rank whose share is the
// smallest so far. step() runs the wrapped optimizer on this rank's share, then every rank
// broadcasts the parameters it updated.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "ember/distributed.h"
#include "ember/distributed/join.h"
#include "ember/optim/optimizer.h"

namespace ember::distributed::optim {

// Names the optimizer type to shard: ZeroRedundancyOptimizer(params, optimizer_class<Adam>, ...).
template <class T>
struct OptimizerClass {};
template <class T>
inline constexpr OptimizerClass<T> optimizer_class{};

// Joinable, as PyTorch's: under a distributed::algorithms::Join a rank that ran out of data steps
// with its last gradients for as long as the others step, so that every rank still broadcasts the
// parameters it owns (they update their shares; its share moves with its last gradients).
class ZeroRedundancyOptimizer : public ember::optim::Optimizer, public algorithms::Joinable {
 public:
  using ParamGroups = std::vector<ember::optim::OptimizerParamGroup>;
  // Builds the wrapped optimizer over this rank's share (one group per group given, maybe empty).
  using Factory = std::function<std::unique_ptr<ember::optim::Optimizer>(ParamGroups)>;

  template <class OptimizerType, class Options>
  ZeroRedundancyOptimizer(std::vector<Tensor> params, OptimizerClass<OptimizerType>, const Options& defaults,
                          ProcessGroupPtr process_group = nullptr)
      : ZeroRedundancyOptimizer(
            ParamGroups{ember::optim::OptimizerParamGroup(std::move(params))}, defaults.clone(),
            [defaults](ParamGroups groups) { return std::make_unique<OptimizerType>(std::move(groups), defaults); },
            std::move(process_group)) {}
  ZeroRedundancyOptimizer(ParamGroups param_groups, std::unique_ptr<ember::optim::OptimizerOptions> defaults,
                          const Factory& factory, ProcessGroupPtr process_group = nullptr);

  // The groups' current options (an LR scheduler's changes) reach the wrapped optimizer first.
  Tensor step(LossClosure closure = nullptr) override;

  std::unique_ptr<algorithms::JoinHook> join_hook() override;
  ProcessGroupPtr join_process_group() override { return group_; }

  // Gathers every rank's optimizer state on rank `to` (all ranks must call it); state_dict()
  // there then returns the state of all parameters, numbered as an unsharded optimizer would.
  void consolidate_state_dict(int to = 0);
  ember::optim::OptimizerStateDict state_dict() const;
  // Loads a global state (an unsharded optimizer's, or a consolidated one): the groups' options,
  // and into the wrapped optimizer the state of this rank's share.
  void load_state_dict(const ember::optim::OptimizerStateDict& dict);

  // The wrapped optimizer of this rank's share (PyTorch's `optim` attribute).
  const ember::optim::Optimizer& optim() const { return *local_; }
  // The rank owning each parameter, numbered across groups.
  const std::vector<int>& param_ranks() const { return owner_; }

 protected:
  std::unique_ptr<ember::optim::OptimizerParamState> make_state(
      const Tensor& p, const ember::optim::OptimizerOptions& group) const override;

 private:
  class ZeroJoinHook;
  // step() without telling a Join: what a joined rank runs for the others' steps.
  Tensor step_and_broadcast(LossClosure closure);
  ProcessGroupPtr group_;
  std::unique_ptr<ember::optim::Optimizer> local_;
  std::vector<int> owner_;                         // per global parameter index
  std::vector<std::vector<size_t>> local_to_global_;  // per rank: its wrapped optimizer's numbering
  std::vector<Tensor> all_params_;
  std::optional<ember::optim::OptimizerStateDict> consolidated_;
};

}  // namespace ember::distributed::optim
