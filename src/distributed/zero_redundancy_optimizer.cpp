// ZeroRedundancyOptimizer: PyTorch's greedy partition, the wrapped optimizer over this rank's
// share, broadcasts of the updated parameters, and the state gathered on one rank.
#include "ember/distributed/zero_redundancy_optimizer.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/factory.h"

namespace ember::distributed::optim {

using ember::optim::OptimizerOptions;
using ember::optim::OptimizerParamGroup;
using ember::optim::OptimizerStateDict;

namespace {

// A state dict as bytes (keys, dtypes, shapes, data; the groups' numbers), to broadcast it.
void put(std::vector<uint8_t>& out, const void* p, size_t n) {
  out.insert(out.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
}
void put_string(std::vector<uint8_t>& out, const std::string& s) {
  const uint64_t n = s.size();
  put(out, &n, sizeof n);
  put(out, s.data(), n);
}
std::vector<uint8_t> encode(const OptimizerStateDict& dict) {
  std::vector<uint8_t> out;
  const uint64_t n = dict.state.size();
  put(out, &n, sizeof n);
  for (const auto& item : dict.state) {
    const Tensor t = item.value().contiguous();
    put_string(out, item.key());
    const int64_t dtype = static_cast<int64_t>(t.scalar_type()), dim = t.dim();
    put(out, &dtype, sizeof dtype);
    put(out, &dim, sizeof dim);
    for (int64_t s : t.sizes()) put(out, &s, sizeof s);
    put(out, t.data_ptr(), t.nbytes());
  }
  const uint64_t groups = dict.param_groups.size();
  put(out, &groups, sizeof groups);
  for (const auto& g : dict.param_groups) {
    const uint64_t m = g.size();
    put(out, &m, sizeof m);
    for (const auto& item : g) {
      put_string(out, item.key());
      put(out, &item.value(), sizeof(double));
    }
  }
  return out;
}
OptimizerStateDict decode(const std::vector<uint8_t>& in) {
  size_t at = 0;
  auto get = [&](void* p, size_t n) {
    EMBER_CHECK(at + n <= in.size(), "consolidate_state_dict", "truncated state from a peer");
    std::memcpy(p, in.data() + at, n);
    at += n;
  };
  auto get_string = [&] {
    uint64_t n = 0;
    get(&n, sizeof n);
    std::string s(n, '\0');
    get(s.data(), n);
    return s;
  };
  OptimizerStateDict dict;
  uint64_t n = 0;
  get(&n, sizeof n);
  for (uint64_t i = 0; i < n; ++i) {
    const std::string key = get_string();
    int64_t dtype = 0, dim = 0;
    get(&dtype, sizeof dtype);
    get(&dim, sizeof dim);
    std::vector<int64_t> sizes(static_cast<size_t>(dim));
    for (int64_t& s : sizes) get(&s, sizeof s);
    Tensor t = empty(sizes, static_cast<ScalarType>(dtype));
    get(t.data_ptr(), t.nbytes());
    dict.state.insert(key, t);
  }
  uint64_t groups = 0;
  get(&groups, sizeof groups);
  for (uint64_t g = 0; g < groups; ++g) {
    OrderedDict<std::string, double> hyper("hyperparameter");
    uint64_t m = 0;
    get(&m, sizeof m);
    for (uint64_t i = 0; i < m; ++i) {
      const std::string key = get_string();
      double v = 0;
      get(&v, sizeof v);
      hyper.insert(key, v);
    }
    dict.param_groups.push_back(std::move(hyper));
  }
  return dict;
}

ProcessGroupPtr group_or_world(const ProcessGroupPtr& group) {
  ProcessGroupPtr g = group ? group : group_world();
  EMBER_CHECK(g, "ZeroRedundancyOptimizer",
              "the default process group has not been initialized; call init_process_group first");
  return g;
}

}  // namespace

ZeroRedundancyOptimizer::ZeroRedundancyOptimizer(ParamGroups param_groups, std::unique_ptr<OptimizerOptions> defaults,
                                                 const Factory& factory, ProcessGroupPtr process_group)
    : Optimizer(std::move(param_groups), std::move(defaults)), group_(group_or_world(process_group)) {
  const int world = group_->size();
  std::vector<int64_t> sizes(static_cast<size_t>(world), 0);
  local_to_global_.assign(static_cast<size_t>(world), {});
  ParamGroups local;
  for (const OptimizerParamGroup& g : param_groups_) {
    const size_t first = all_params_.size();
    for (const Tensor& p : g.params()) {
      EMBER_CHECK(p.is_contiguous(), "ZeroRedundancyOptimizer", "parameter ", all_params_.size(),
                  " must be contiguous to be broadcast");
      all_params_.push_back(p);
      owner_.push_back(0);
    }
    // largest first (a stable sort, as Python's sorted), each to the least loaded rank so far
    std::vector<size_t> order(g.params().size());
    std::iota(order.begin(), order.end(), first);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return all_params_[a].numel() > all_params_[b].numel(); });
    std::vector<Tensor> mine;
    for (size_t i : order) {
      const int r = static_cast<int>(std::min_element(sizes.begin(), sizes.end()) - sizes.begin());
      owner_[i] = r;
      sizes[static_cast<size_t>(r)] += all_params_[i].numel();
      local_to_global_[static_cast<size_t>(r)].push_back(i);
      if (r == group_->rank()) mine.push_back(all_params_[i]);
    }
    local.emplace_back(std::move(mine), g.options().clone());
  }
  local_ = factory(std::move(local));
  EMBER_CHECK(local_, "ZeroRedundancyOptimizer", "the optimizer factory returned no optimizer");
}

std::unique_ptr<ember::optim::OptimizerParamState> ZeroRedundancyOptimizer::make_state(const Tensor&,
                                                                                   const OptimizerOptions&) const {
  ember::detail::fail("ZeroRedundancyOptimizer", "holds no state itself: the wrapped optimizer does");
}

Tensor ZeroRedundancyOptimizer::step(LossClosure closure) {
  if (join_enabled_) algorithms::Join::notify_join_context(*this);
  return step_and_broadcast(std::move(closure));
}

class ZeroRedundancyOptimizer::ZeroJoinHook : public algorithms::JoinHook {
 public:
  explicit ZeroJoinHook(ZeroRedundancyOptimizer& zero) : zero_(zero) {}
  void main_hook() override { zero_.step_and_broadcast(nullptr); }

 private:
  ZeroRedundancyOptimizer& zero_;
};

std::unique_ptr<algorithms::JoinHook> ZeroRedundancyOptimizer::join_hook() {
  return std::make_unique<ZeroJoinHook>(*this);
}

Tensor ZeroRedundancyOptimizer::step_and_broadcast(LossClosure closure) {
  for (size_t g = 0; g < param_groups_.size(); ++g)
    local_->param_groups()[g].set_options(param_groups_[g].options().clone());
  Tensor loss = local_->step(std::move(closure));
  NoGradGuard no_grad;
  std::vector<WorkPtr> works;
  for (size_t i = 0; i < all_params_.size(); ++i) {
    std::vector<Tensor> one{all_params_[i]};
    works.push_back(group_->broadcast(one, owner_[i]));
  }
  for (const WorkPtr& w : works) w->wait();
  return loss;
}

void ZeroRedundancyOptimizer::consolidate_state_dict(int to) {
  EMBER_CHECK(to >= 0 && to < group_->size(), "consolidate_state_dict", "rank ", to, " is not in the group of size ",
              group_->size());
  OptimizerStateDict global = Optimizer::state_dict();  // the groups' options and sizes; no state here
  std::vector<OptimizerStateDict> shares(static_cast<size_t>(group_->size()));
  for (int r = 0; r < group_->size(); ++r) {
    std::vector<uint8_t> bytes;
    if (r == group_->rank()) bytes = encode(local_->state_dict());
    std::vector<Tensor> length{full({1}, static_cast<int64_t>(bytes.size()), kLong)};
    group_->broadcast(length, r)->wait();
    std::vector<Tensor> data{empty({length[0].item<int64_t>()}, kByte)};
    if (r == group_->rank()) std::memcpy(data[0].data_ptr(), bytes.data(), bytes.size());
    group_->broadcast(data, r)->wait();
    if (group_->rank() == to) {
      shares[static_cast<size_t>(r)] =
          decode(std::vector<uint8_t>(data[0].data_ptr<uint8_t>(), data[0].data_ptr<uint8_t>() + data[0].numel()));
    }
  }
  if (group_->rank() != to) {
    consolidated_.reset();
    return;
  }
  // each rank's entries "<its index>.<field>" under the parameter's global index
  std::vector<std::pair<int, size_t>> where(all_params_.size());
  for (size_t r = 0; r < local_to_global_.size(); ++r)
    for (size_t l = 0; l < local_to_global_[r].size(); ++l) where[local_to_global_[r][l]] = {static_cast<int>(r), l};
  for (size_t i = 0; i < all_params_.size(); ++i) {
    const std::string prefix = std::to_string(where[i].second) + ".";
    for (const auto& item : shares[static_cast<size_t>(where[i].first)].state)
      if (item.key().rfind(prefix, 0) == 0)
        global.state.insert(std::to_string(i) + "." + item.key().substr(prefix.size()), item.value());
  }
  consolidated_ = std::move(global);
}

OptimizerStateDict ZeroRedundancyOptimizer::state_dict() const {
  EMBER_CHECK(consolidated_, "ZeroRedundancyOptimizer",
              "Optimizer state has not been consolidated on this rank. Please call `consolidate_state_dict(to=",
              group_->rank(), ")` on all ranks beforehand if you meant to save the global state.");
  return *consolidated_;
}

void ZeroRedundancyOptimizer::load_state_dict(const OptimizerStateDict& dict) {
  constexpr const char* op = "ZeroRedundancyOptimizer::load_state_dict";
  EMBER_CHECK(dict.param_groups.size() == param_groups_.size(), op, "the state dict has ", dict.param_groups.size(),
              " parameter groups but the optimizer has ", param_groups_.size());
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    const double* n = dict.param_groups[g].find("params");
    EMBER_CHECK(n && static_cast<size_t>(*n) == param_groups_[g].params().size(), op, "parameter group ", g, " holds ",
                n ? *n : -1.0, " parameters in the state dict but ", param_groups_[g].params().size(), " here");
  }
  // this rank's entries under the wrapped optimizer's numbering, its groups with their sizes
  OptimizerStateDict local;
  const std::vector<size_t>& mine = local_to_global_[static_cast<size_t>(group_->rank())];
  for (size_t l = 0; l < mine.size(); ++l) {
    const std::string prefix = std::to_string(mine[l]) + ".";
    for (const auto& item : dict.state)
      if (item.key().rfind(prefix, 0) == 0)
        local.state.insert(std::to_string(l) + "." + item.key().substr(prefix.size()), item.value());
  }
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    OrderedDict<std::string, double> hyper = dict.param_groups[g];
    hyper.insert_or_assign("params", static_cast<double>(local_->param_groups()[g].params().size()));
    local.param_groups.push_back(std::move(hyper));
  }
  local_->load_state_dict(local);  // checks the entries before changing anything
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    for (const ember::optim::OptimizerField& f : param_groups_[g].options().fields())
      if (const double* v = dict.param_groups[g].find(f.name)) f.set(*v);
    local_->param_groups()[g].set_options(param_groups_[g].options().clone());
  }
}

}  // namespace ember::distributed::optim
