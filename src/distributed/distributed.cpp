// The default process group and torch.distributed's functions over it: init methods, groups of
// ranks (global ranks translated to group ranks), and the collectives' Python-style signatures.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <numeric>

#include "ember/distributed.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/indexing.h"

namespace ember::distributed {

namespace {

struct World {
  std::mutex mutex;
  std::shared_ptr<Store> store;
  ProcessGroupPtr group;
  std::string hostname;
  int groups_made = 0;
  // global ranks of each group (by group object)
  std::map<const ProcessGroup*, std::vector<int>> ranks;
};
World& world() {
  static World w;
  return w;
}

int env_int(const char* name, const char* what) {
  const char* v = std::getenv(name);
  EMBER_CHECK(v && *v, "init_process_group", "env:// needs the environment variable ", name, " (", what, ")");
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  EMBER_CHECK(*end == '\0', "init_process_group", name, " must be an integer, got '", v, "'");
  return static_cast<int>(x);
}

// The address Gloo's TCP transport binds: loopback when the master is local, the host's name otherwise.
std::string transport_host(const std::string& master) {
  if (const char* h = std::getenv("EMBER_GLOO_HOSTNAME")) return h;
  if (master == "127.0.0.1" || master == "localhost" || master == "::1") return "127.0.0.1";
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

const ProcessGroupPtr& resolve(const ProcessGroupPtr& group, const char* name) {
  World& w = world();
  EMBER_CHECK(w.group, name, "the default process group has not been initialized; call init_process_group first");
  return group ? group : w.group;
}

// A global rank's rank within `group`.
int group_rank(const ProcessGroupPtr& group, int global, const char* name) {
  World& w = world();
  const std::lock_guard<std::mutex> lock(w.mutex);
  auto it = w.ranks.find(group.get());
  if (it == w.ranks.end()) return global;  // the default group
  auto pos = std::find(it->second.begin(), it->second.end(), global);
  EMBER_CHECK(pos != it->second.end(), name, "global rank ", global, " is not part of the group");
  return static_cast<int>(pos - it->second.begin());
}

WorkPtr finish(WorkPtr work, bool async_op) {
  if (!async_op) work->wait();
  return work;
}

}  // namespace

bool is_available() { return true; }

void init_process_group(const std::string& backend, const std::string& init_method, int world_size, int rank,
                        std::chrono::milliseconds timeout, std::shared_ptr<Store> store) {
  World& w = world();
  EMBER_CHECK(!w.group, "init_process_group", "trying to initialize the default process group twice!");
  EMBER_CHECK(backend == "gloo", "init_process_group", "backend '", backend, "' is not available; Ember has 'gloo'");
  std::string master = "127.0.0.1";
  if (!store) {
    if (init_method.rfind("env://", 0) == 0) {
      const char* addr = std::getenv("MASTER_ADDR");
      EMBER_CHECK(addr && *addr, "init_process_group", "env:// needs the environment variable MASTER_ADDR");
      master = addr;
      const int port = env_int("MASTER_PORT", "the store's port on MASTER_ADDR");
      if (rank < 0) rank = env_int("RANK", "this process's rank");
      if (world_size < 0) world_size = env_int("WORLD_SIZE", "the number of processes");
      EMBER_CHECK(rank >= 0 && rank < world_size, "init_process_group", "RANK ", rank, " is not in [0, ", world_size,
                  ")");
      store = std::make_shared<TCPStore>(master, TCPStoreOptions{static_cast<uint16_t>(port), rank == 0,
                                                                 std::nullopt, false, timeout});
    } else if (init_method.rfind("tcp://", 0) == 0) {
      const std::string hp = init_method.substr(6);
      const size_t colon = hp.rfind(':');
      EMBER_CHECK(colon != std::string::npos, "init_process_group", "tcp:// needs host:port, got '", init_method, "'");
      master = hp.substr(0, colon);
      EMBER_CHECK(rank >= 0 && world_size > 0 && rank < world_size, "init_process_group",
                  "tcp:// needs world_size and rank, got world_size ", world_size, " rank ", rank);
      store = std::make_shared<TCPStore>(
          master, TCPStoreOptions{static_cast<uint16_t>(std::stoi(hp.substr(colon + 1))), rank == 0, std::nullopt,
                                  false, timeout});
    } else if (init_method.rfind("file://", 0) == 0) {
      EMBER_CHECK(rank >= 0 && world_size > 0 && rank < world_size, "init_process_group",
                  "file:// needs world_size and rank, got world_size ", world_size, " rank ", rank);
      store = std::make_shared<FileStore>(init_method.substr(7), timeout);
    } else {
      detail::fail("init_process_group", "unknown init_method '", init_method,
                   "' (expected env://, tcp://host:port or file:///path)");
    }
  } else {
    EMBER_CHECK(rank >= 0 && world_size > 0 && rank < world_size, "init_process_group",
                "a store needs world_size and rank, got world_size ", world_size, " rank ", rank);
  }
  store->set_timeout(timeout);
  const std::string host = transport_host(master);
  auto group = make_process_group_gloo(std::make_shared<PrefixStore>("default_pg", store), rank, world_size, timeout,
                                       host);
  const std::lock_guard<std::mutex> lock(w.mutex);
  w.store = std::move(store);
  w.group = std::move(group);
  w.hostname = host;
  w.groups_made = 0;
}

void destroy_process_group() {
  World& w = world();
  std::shared_ptr<Store> store;
  ProcessGroupPtr group;
  {
    const std::lock_guard<std::mutex> lock(w.mutex);
    store = std::move(w.store);
    group = std::move(w.group);
    w.ranks.clear();
  }
  // the group ends (its worker thread drains) before the store it met through
  group.reset();
  store.reset();
}

bool is_initialized() { return world().group != nullptr; }

ProcessGroupPtr group_world() { return world().group; }

int get_rank(const ProcessGroupPtr& group) {
  if (!group) return resolve(group, "get_rank")->rank();
  return group->rank();
}
int get_world_size(const ProcessGroupPtr& group) { return resolve(group, "get_world_size")->size(); }
std::string get_backend(const ProcessGroupPtr& group) { return resolve(group, "get_backend")->backend_name(); }

ProcessGroupPtr new_group(std::vector<int> ranks, std::optional<std::chrono::milliseconds> timeout) {
  World& w = world();
  const ProcessGroupPtr& base = resolve(nullptr, "new_group");
  const int size = base->size();
  if (ranks.empty())
    for (int r = 0; r < size; ++r) ranks.push_back(r);
  std::sort(ranks.begin(), ranks.end());
  EMBER_CHECK(std::adjacent_find(ranks.begin(), ranks.end()) == ranks.end(), "new_group", "ranks repeat");
  for (int r : ranks) EMBER_CHECK(r >= 0 && r < size, "new_group", "rank ", r, " is not in the world of size ", size);
  const int id = ++w.groups_made;
  auto me = std::find(ranks.begin(), ranks.end(), base->rank());
  if (me == ranks.end()) return nullptr;
  auto group = make_process_group_gloo(std::make_shared<PrefixStore>("group_" + std::to_string(id), w.store),
                                       static_cast<int>(me - ranks.begin()), static_cast<int>(ranks.size()),
                                       timeout.value_or(base->timeout()), w.hostname);
  const std::lock_guard<std::mutex> lock(w.mutex);
  w.ranks[group.get()] = ranks;
  return group;
}

WorkPtr all_reduce(Tensor& tensor, ReduceOp op, const ProcessGroupPtr& group, bool async_op) {
  std::vector<Tensor> ts{tensor};
  return finish(resolve(group, "all_reduce")->allreduce(ts, {op}), async_op);
}

WorkPtr broadcast(Tensor& tensor, int src, const ProcessGroupPtr& group, bool async_op) {
  const ProcessGroupPtr& g = resolve(group, "broadcast");
  std::vector<Tensor> ts{tensor};
  return finish(g->broadcast(ts, group_rank(g, src, "broadcast")), async_op);
}

WorkPtr reduce(Tensor& tensor, int dst, ReduceOp op, const ProcessGroupPtr& group, bool async_op) {
  const ProcessGroupPtr& g = resolve(group, "reduce");
  std::vector<Tensor> ts{tensor};
  return finish(g->reduce(ts, group_rank(g, dst, "reduce"), op), async_op);
}

WorkPtr all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor, const ProcessGroupPtr& group,
                   bool async_op) {
  std::vector<std::vector<Tensor>> outs{tensor_list};
  std::vector<Tensor> ins{tensor};
  return finish(resolve(group, "all_gather")->allgather(outs, ins), async_op);
}

WorkPtr all_gather_into_tensor(Tensor& output, const Tensor& input, const ProcessGroupPtr& group, bool async_op) {
  std::vector<Tensor> outs{output}, ins{input};
  return finish(resolve(group, "all_gather_into_tensor")->allgather_into_tensor_coalesced(outs, ins), async_op);
}

WorkPtr reduce_scatter(Tensor& output, const std::vector<Tensor>& input_list, ReduceOp op,
                       const ProcessGroupPtr& group, bool async_op) {
  std::vector<Tensor> outs{output};
  std::vector<std::vector<Tensor>> ins{input_list};
  return finish(resolve(group, "reduce_scatter")->reduce_scatter(outs, ins, op), async_op);
}

WorkPtr gather(const Tensor& tensor, std::vector<Tensor>* gather_list, int dst, const ProcessGroupPtr& group,
               bool async_op) {
  const ProcessGroupPtr& g = resolve(group, "gather");
  std::vector<std::vector<Tensor>> outs;
  if (gather_list) outs.push_back(*gather_list);
  std::vector<Tensor> ins{tensor};
  return finish(g->gather(outs, ins, group_rank(g, dst, "gather")), async_op);
}

WorkPtr scatter(Tensor& tensor, const std::vector<Tensor>* scatter_list, int src, const ProcessGroupPtr& group,
                bool async_op) {
  const ProcessGroupPtr& g = resolve(group, "scatter");
  std::vector<Tensor> outs{tensor};
  std::vector<std::vector<Tensor>> ins;
  if (scatter_list) ins.push_back(*scatter_list);
  return finish(g->scatter(outs, ins, group_rank(g, src, "scatter")), async_op);
}

WorkPtr all_to_all_single(Tensor& output, const Tensor& input, const ProcessGroupPtr& group, bool async_op) {
  return all_to_all_single(output, input, {}, {}, group, async_op);
}

WorkPtr all_to_all_single(Tensor& output, const Tensor& input, const std::vector<int64_t>& output_split_sizes,
                          const std::vector<int64_t>& input_split_sizes, const ProcessGroupPtr& group,
                          bool async_op) {
  Tensor in = input;
  return finish(resolve(group, "all_to_all_single")->alltoall_base(output, in, output_split_sizes, input_split_sizes),
                async_op);
}

// One all_to_all_single on the tensors flattened and concatenated, split by their sizes.
WorkPtr all_to_all(std::vector<Tensor>& output_tensor_list, const std::vector<Tensor>& input_tensor_list,
                   const ProcessGroupPtr& group, bool async_op) {
  const ProcessGroupPtr& g = resolve(group, "all_to_all");
  const size_t n = static_cast<size_t>(g->size());
  EMBER_CHECK(output_tensor_list.size() == n && input_tensor_list.size() == n, "all_to_all", "expected ", n,
              " input and output tensors (the group's size), got ", input_tensor_list.size(), " and ",
              output_tensor_list.size());
  std::vector<Tensor> ins;
  std::vector<int64_t> in_splits, out_splits;
  for (size_t i = 0; i < n; ++i) {
    const Tensor& a = input_tensor_list[i];
    const Tensor& b = output_tensor_list[i];
    EMBER_CHECK(a.defined() && b.defined() && a.dtype() == input_tensor_list[0].dtype() &&
                    b.dtype() == input_tensor_list[0].dtype(),
                "all_to_all", "expected defined tensors of one dtype ", input_tensor_list[0].dtype(), ", got ",
                a.defined() ? a.dtype() : input_tensor_list[0].dtype(), " and ",
                b.defined() ? b.dtype() : input_tensor_list[0].dtype(), " at index ", i);
    ins.push_back(a.reshape({-1}));
    in_splits.push_back(a.numel());
    out_splits.push_back(b.numel());
  }
  Tensor in = cat(ins);
  const int64_t total = std::accumulate(out_splits.begin(), out_splits.end(), int64_t{0});
  Tensor out = empty({total}, in.options());
  WorkPtr work = g->alltoall_base(out, in, out_splits, in_splits);
  work->wait();
  int64_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    output_tensor_list[i].copy_(out.narrow(0, at, out_splits[i]).view(output_tensor_list[i].sizes()));
    at += out_splits[i];
  }
  return finish(work, async_op);
}

WorkPtr barrier(const ProcessGroupPtr& group, bool async_op) {
  return finish(resolve(group, "barrier")->barrier(), async_op);
}

void send(const Tensor& tensor, int dst, const ProcessGroupPtr& group, int tag) {
  isend(tensor, dst, group, tag)->wait();
}

int recv(Tensor& tensor, int src, const ProcessGroupPtr& group, int tag) {
  irecv(tensor, src, group, tag)->wait();
  return src;
}

WorkPtr isend(const Tensor& tensor, int dst, const ProcessGroupPtr& group, int tag) {
  const ProcessGroupPtr& g = resolve(group, "isend");
  std::vector<Tensor> ts{tensor};
  return g->send(ts, group_rank(g, dst, "isend"), tag);
}

WorkPtr irecv(Tensor& tensor, int src, const ProcessGroupPtr& group, int tag) {
  const ProcessGroupPtr& g = resolve(group, "irecv");
  std::vector<Tensor> ts{tensor};
  return g->recv(ts, group_rank(g, src, "irecv"), tag);
}

}  // namespace ember::distributed
