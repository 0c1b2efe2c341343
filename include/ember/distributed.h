// torch.distributed for C++ (library ember_distributed, target Ember::distributed): process groups
// on Gloo's collectives, the key-value stores their rendezvous goes through, and the collective
// functions with c10d's names (all_reduce, broadcast, ...). docs/distributed.md describes it.
#pragma once
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ember/tensor.h"

namespace ember::distributed {

// PyTorch's default process-group timeout.
inline constexpr std::chrono::milliseconds kDefaultTimeout = std::chrono::minutes(30);

// ---- stores -------------------------------------------------------------------------------------
// A key-value store shared by all ranks (c10d::Store). Values are bytes; get() and wait() block
// until the keys exist or the store's timeout passes (then an ember::Error names the keys).
class Store {
 public:
  explicit Store(std::chrono::milliseconds timeout = kDefaultTimeout) : timeout_(timeout) {}
  virtual ~Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  virtual void set(const std::string& key, const std::vector<uint8_t>& value) = 0;
  void set(const std::string& key, const std::string& value) {
    set(key, std::vector<uint8_t>(value.begin(), value.end()));
  }
  virtual std::vector<uint8_t> get(const std::string& key) = 0;
  // Adds `amount` to the integer stored at key (0 when absent) and returns the new value.
  virtual int64_t add(const std::string& key, int64_t amount) = 0;
  // Sets key to desired if its value is expected (or it is absent and expected is empty); returns
  // the value the key holds afterwards.
  virtual std::vector<uint8_t> compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                           const std::vector<uint8_t>& desired) = 0;
  // True when all keys exist, without waiting.
  virtual bool check(const std::vector<std::string>& keys) = 0;
  // Removes key; true when it existed.
  virtual bool delete_key(const std::string& key) = 0;
  // The number of keys in the store (for a PrefixStore: in its underlying store, as c10d's).
  virtual int64_t num_keys() = 0;
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;

  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

 protected:
  std::chrono::milliseconds timeout_;
};

struct TCPStoreOptions {
  uint16_t port = 29500;           // 0 with is_server: the server picks a free port (see port())
  bool is_server = false;
  std::optional<size_t> num_workers;  // when set, the constructor waits for that many clients
  bool wait_for_workers = true;
  std::chrono::milliseconds timeout = kDefaultTimeout;
};

// The store of c10d: a server thread in the process that constructs it with is_server (rank 0),
// and a client connection in every process (the server's own included). Clients retry
// connecting until the timeout, then raise an ember::Error naming host:port.
class TCPStore : public Store {
 public:
  TCPStore(std::string host, const TCPStoreOptions& options = {});
  ~TCPStore() override;
  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  using Store::set;
  std::vector<uint8_t> get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t amount) override;
  std::vector<uint8_t> compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                   const std::vector<uint8_t>& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  const std::string& host() const { return host_; }
  uint16_t port() const { return port_; }

 private:
  struct Server;
  std::vector<uint8_t> request(uint8_t cmd, const std::vector<std::vector<uint8_t>>& args);
  std::string host_;
  uint16_t port_;
  std::unique_ptr<Server> server_;
  int fd_ = -1;
  std::unique_ptr<std::mutex> mutex_;
};

// A store in one file that all processes open (a shared file system), as c10d's FileStore: each
// operation locks the file (flock), reads its records and appends its own.
class FileStore : public Store {
 public:
  explicit FileStore(std::string path, std::chrono::milliseconds timeout = kDefaultTimeout);
  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  using Store::set;
  std::vector<uint8_t> get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t amount) override;
  std::vector<uint8_t> compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                   const std::vector<uint8_t>& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Every key of `store` under "prefix/": the process groups' rendezvous keys do not collide.
class PrefixStore : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> store);
  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  using Store::set;
  std::vector<uint8_t> get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t amount) override;
  std::vector<uint8_t> compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                   const std::vector<uint8_t>& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  const std::shared_ptr<Store>& underlying_store() const { return store_; }

 private:
  std::string key(const std::string& k) const { return prefix_ + "/" + k; }
  std::string prefix_;
  std::shared_ptr<Store> store_;
};

// ---- work and process groups --------------------------------------------------------------------
enum class ReduceOp { SUM, AVG, PRODUCT, MIN, MAX };

// An operation that runs asynchronously (c10d::Work). wait() blocks until it finished and raises
// its ember::Error if it failed.
class Work {
 public:
  virtual ~Work() = default;
  virtual bool is_completed() = 0;
  virtual bool is_success() = 0;
  virtual std::exception_ptr exception() = 0;
  virtual bool wait() = 0;
  // The tensors the operation wrote (all_reduce: its tensor; the hooks' futures read this).
  virtual std::vector<Tensor> result() = 0;
};
using WorkPtr = std::shared_ptr<Work>;

struct AllreduceOptions {
  ReduceOp reduce_op = ReduceOp::SUM;
  // Skips the check that every rank passed the same shapes, which costs a network round trip per
  // collective (as much as a small all-reduce itself): for callers that checked their shapes
  // once beforehand, as DistributedDataParallel does for its buckets at construction. A
  // mismatch then corrupts data or runs into the timeout instead of raising a clear error.
  bool shapes_verified = false;
};

// A group of processes that run collectives together (c10d::ProcessGroup, on Gloo). Ranks passed
// to its methods are ranks within the group. Each rank must call the same collectives in the
// same order; each collective first checks that all ranks passed the same collective, dtype and
// shapes, and raises an ember::Error naming them when not (all-reduces with shapes_verified
// excepted).
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backend_name() const = 0;
  virtual std::chrono::milliseconds timeout() const = 0;

  virtual WorkPtr allreduce(std::vector<Tensor>& tensors, const AllreduceOptions& opts = {}) = 0;
  virtual WorkPtr broadcast(std::vector<Tensor>& tensors, int root) = 0;
  virtual WorkPtr reduce(std::vector<Tensor>& tensors, int root, ReduceOp op) = 0;
  virtual WorkPtr allgather(std::vector<std::vector<Tensor>>& outputs, std::vector<Tensor>& inputs) = 0;
  virtual WorkPtr allgather_into_tensor_coalesced(std::vector<Tensor>& outputs, std::vector<Tensor>& inputs) = 0;
  virtual WorkPtr reduce_scatter(std::vector<Tensor>& outputs, std::vector<std::vector<Tensor>>& inputs,
                                 ReduceOp op) = 0;
  virtual WorkPtr gather(std::vector<std::vector<Tensor>>& outputs, std::vector<Tensor>& inputs, int root) = 0;
  virtual WorkPtr scatter(std::vector<Tensor>& outputs, std::vector<std::vector<Tensor>>& inputs, int root) = 0;
  // Slice j of input (along dim 0) goes to rank j; output's slice i comes from rank i. Split sizes
  // give each slice's rows (empty: equal slices); rank i's input_split_sizes[j] must equal rank
  // j's output_split_sizes[i].
  virtual WorkPtr alltoall_base(Tensor& output, Tensor& input, const std::vector<int64_t>& output_split_sizes,
                                const std::vector<int64_t>& input_split_sizes) = 0;
  virtual WorkPtr barrier() = 0;
  virtual WorkPtr send(std::vector<Tensor>& tensors, int dst, int tag) = 0;
  virtual WorkPtr recv(std::vector<Tensor>& tensors, int src, int tag) = 0;
};
using ProcessGroupPtr = std::shared_ptr<ProcessGroup>;

// A Gloo process group over `store` (TCP transport, on the address that `hostname` resolves to,
// loopback by default).
ProcessGroupPtr make_process_group_gloo(std::shared_ptr<Store> store, int rank, int size,
                                        std::chrono::milliseconds timeout = kDefaultTimeout,
                                        const std::string& hostname = "127.0.0.1");

// ---- the default group and the functions of torch.distributed ----------------------------------
// backend: "gloo". init_method: "env://" (MASTER_ADDR, MASTER_PORT, and RANK, WORLD_SIZE unless
// given), "tcp://host:port" or "file:///path"; or a store instead. A second call before
// destroy_process_group raises.
void init_process_group(const std::string& backend, const std::string& init_method = "env://",
                        int world_size = -1, int rank = -1, std::chrono::milliseconds timeout = kDefaultTimeout,
                        std::shared_ptr<Store> store = nullptr);
void destroy_process_group();
bool is_initialized();
bool is_available();
// Rank and size in `group` (the default group when null); -1 for a rank outside it.
int get_rank(const ProcessGroupPtr& group = nullptr);
int get_world_size(const ProcessGroupPtr& group = nullptr);
std::string get_backend(const ProcessGroupPtr& group = nullptr);
// A group of the given global ranks (all when empty); every process of the default group must
// call it, in the same order. Processes outside `ranks` get null.
ProcessGroupPtr new_group(std::vector<int> ranks = {}, std::optional<std::chrono::milliseconds> timeout = std::nullopt);
ProcessGroupPtr group_world();  // the default group

// Ranks given here (src, dst) are global ranks, as PyTorch's. With async_op the returned Work is
// running; without, it has finished. The tensors must be contiguous where written.
WorkPtr all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::SUM, const ProcessGroupPtr& group = nullptr,
                   bool async_op = false);
WorkPtr broadcast(Tensor& tensor, int src, const ProcessGroupPtr& group = nullptr, bool async_op = false);
WorkPtr reduce(Tensor& tensor, int dst, ReduceOp op = ReduceOp::SUM, const ProcessGroupPtr& group = nullptr,
               bool async_op = false);
WorkPtr all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor, const ProcessGroupPtr& group = nullptr,
                   bool async_op = false);
// output: the inputs of all ranks concatenated along dim 0 (size * input.size(0) rows).
WorkPtr all_gather_into_tensor(Tensor& output, const Tensor& input, const ProcessGroupPtr& group = nullptr,
                               bool async_op = false);
WorkPtr reduce_scatter(Tensor& output, const std::vector<Tensor>& input_list, ReduceOp op = ReduceOp::SUM,
                       const ProcessGroupPtr& group = nullptr, bool async_op = false);
// gather_list is read on dst only (one tensor per rank there).
WorkPtr gather(const Tensor& tensor, std::vector<Tensor>* gather_list, int dst = 0,
               const ProcessGroupPtr& group = nullptr, bool async_op = false);
WorkPtr scatter(Tensor& tensor, const std::vector<Tensor>* scatter_list, int src = 0,
                const ProcessGroupPtr& group = nullptr, bool async_op = false);
// Slice j of input (along dim 0) goes to rank j, slice j of output comes from rank j: equal
// slices, or as many rows as output_split_sizes[j] and input_split_sizes[j] say (an empty list:
// equal slices). Rank i's input_split_sizes[j] must equal rank j's output_split_sizes[i]
// (unchecked, as PyTorch: a mismatch fails or runs into the timeout).
WorkPtr all_to_all_single(Tensor& output, const Tensor& input, const ProcessGroupPtr& group = nullptr,
                          bool async_op = false);
WorkPtr all_to_all_single(Tensor& output, const Tensor& input, const std::vector<int64_t>& output_split_sizes,
                          const std::vector<int64_t>& input_split_sizes, const ProcessGroupPtr& group = nullptr,
                          bool async_op = false);
// input_tensor_list[j] goes to rank j, output_tensor_list[j] comes from rank j; the tensors may
// differ in size (one dtype).
WorkPtr all_to_all(std::vector<Tensor>& output_tensor_list, const std::vector<Tensor>& input_tensor_list,
                   const ProcessGroupPtr& group = nullptr, bool async_op = false);
WorkPtr barrier(const ProcessGroupPtr& group = nullptr, bool async_op = false);
void send(const Tensor& tensor, int dst, const ProcessGroupPtr& group = nullptr, int tag = 0);
// Returns the sender's rank.
int recv(Tensor& tensor, int src, const ProcessGroupPtr& group = nullptr, int tag = 0);
// The transfer is posted at once and waited for in the Work's wait() (is_completed() turns true
// there); a tag matches a send with its receive.
WorkPtr isend(const Tensor& tensor, int dst, const ProcessGroupPtr& group = nullptr, int tag = 0);
WorkPtr irecv(Tensor& tensor, int src, const ProcessGroupPtr& group = nullptr, int tag = 0);

}  // namespace ember::distributed
