// DistributedDataParallel (torch.nn.parallel.DistributedDataParallel) and its communication hooks
// (torch.distributed.algorithms.ddp_comm_hooks.default_hooks), in library ember_distributed.
// Gradients are averaged across the process group while backward runs: they fill buckets (in
// reverse registration order, about bucket_cap_mb each), and a bucket's all-reduce starts as soon
// as its last gradient is ready. docs/distributed.md describes the design.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ember/distributed.h"
#include "ember/distributed/join.h"
#include "ember/factory.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/options.h"
#include "ember/nn/pimpl.h"

namespace ember::distributed {

// A value that a communication hook delivers later (c10::ivalue::Future, holding a tensor).
class Future : public std::enable_shared_from_this<Future> {
 public:
  virtual ~Future() = default;
  virtual Tensor wait() = 0;
  virtual bool completed() = 0;
  // A future of fn(this future's value), computed when waited for.
  std::shared_ptr<Future> then(std::function<Tensor(Tensor)> fn);
};
using FuturePtr = std::shared_ptr<Future>;
// The future of an asynchronous collective: its first result tensor.
FuturePtr make_future(WorkPtr work);
// A future that already holds value.
FuturePtr make_completed_future(Tensor value);

// One bucket of gradients, as a communication hook sees it (c10d::GradBucket): buffer() is the
// flat tensor of the gradients; the hook returns a future of the tensor that replaces it (the
// averaged gradients).
class GradBucket {
 public:
  GradBucket(size_t index, size_t num_buckets, Tensor buffer, std::vector<Tensor> gradients,
             std::vector<Tensor> parameters)
      : index_(index), num_buckets_(num_buckets), buffer_(std::move(buffer)), gradients_(std::move(gradients)),
        parameters_(std::move(parameters)) {}
  size_t index() const { return index_; }
  const Tensor& buffer() const { return buffer_; }
  void set_buffer(const Tensor& buffer) { buffer_.copy_(buffer); }
  // Views of buffer() shaped as the parameters.
  const std::vector<Tensor>& gradients() const { return gradients_; }
  const std::vector<Tensor>& parameters() const { return parameters_; }
  // The last bucket to be reduced in an iteration (it holds the first layers' gradients).
  bool is_last() const { return index_ + 1 == num_buckets_; }
  size_t num_buckets() const { return num_buckets_; }

 private:
  size_t index_, num_buckets_;
  Tensor buffer_;
  std::vector<Tensor> gradients_, parameters_;
};

using CommHook = std::function<FuturePtr(GradBucket&)>;

namespace ddp_comm_hooks {
// The default: buffer / world size, all-reduced (SUM) on `process_group` (the default group when null).
FuturePtr allreduce_hook(const ProcessGroupPtr& process_group, GradBucket& bucket);
// The buffer is sent as float16 (half the bytes), divided by the world size before the sum so it
// cannot overflow, and cast back to the gradients' dtype.
FuturePtr fp16_compress_hook(const ProcessGroupPtr& process_group, GradBucket& bucket);
// As fp16_compress_hook with bfloat16 (float32's range, 8 bits of mantissa).
FuturePtr bf16_compress_hook(const ProcessGroupPtr& process_group, GradBucket& bucket);

// PowerSGD (torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook): each gradient matrix M
// (n x m, the tensor viewed as shape[0] rows) is sent as two rank-r factors, P = M Q (all-reduced,
// then orthogonalized) and Q = M^T P (all-reduced and averaged); M becomes P Q^T. Tensors for
// which (n + m) r * min_compression_rate is not below n m (vectors, small matrices) are
// all-reduced whole. With error feedback the difference between the gradient and its
// approximation is added to the next iteration's; with warm start Q carries over. Before
// start_powerSGD_iter iterations it is allreduce_hook. The all-reduces of P (and of the whole
// tensors) start in the hook, overlapping backward; Q's runs when DDP waits for the bucket.
struct PowerSGDState {
  explicit PowerSGDState(ProcessGroupPtr process_group, int64_t matrix_approximation_rank = 1,
                         int64_t start_powerSGD_iter = 1000, double min_compression_rate = 2,
                         bool use_error_feedback = true, bool warm_start = true, double orthogonalization_epsilon = 0,
                         uint64_t random_seed = 0);
  ProcessGroupPtr process_group;
  int64_t matrix_approximation_rank, start_powerSGD_iter;
  double min_compression_rate;
  bool use_error_feedback, warm_start;
  double orthogonalization_epsilon;
  Generator rng;      // seeds each fresh Q: the same on every rank
  int64_t iter = 0;   // iterations done (counted at each iteration's last bucket)
  std::map<size_t, Tensor> error_dict, p_memory_dict, q_memory_dict;  // by bucket index
};
FuturePtr powerSGD_hook(const std::shared_ptr<PowerSGDState>& state, GradBucket& bucket);
}  // namespace ddp_comm_hooks

}  // namespace ember::distributed

namespace ember::nn {

struct DistributedDataParallelOptions {
  // The group gradients are averaged over (the default group when null).
  EMBER_ARG(distributed::ProcessGroupPtr, process_group) = nullptr;
  // The size a bucket grows to before the next starts (PyTorch: 25 MB; its first bucket is 1 MB).
  EMBER_ARG(double, bucket_cap_mb) = 25.0;
  // Detect, at each forward, the parameters that its output does not depend on and count them
  // as ready (their gradients are reduced as zeros; ones unused on every rank keep their .grad).
  EMBER_ARG(bool, find_unused_parameters) = false;
  // The forward uses the same parameters at every iteration (PyTorch's static_graph): the first
  // synchronized backward finds the unused ones as find_unused_parameters does, later ones take
  // that set without walking the graph or all-reducing the used flags.
  EMBER_ARG(bool, static_graph) = false;
  // Broadcast the module's buffers (batch norm statistics) from rank 0 at each forward.
  EMBER_ARG(bool, broadcast_buffers) = true;
  // The parameters' .grad become views into the buckets at the first synchronized backward (each
  // later accumulation writes into the bucket; no copy back and one copy of the gradients in
  // memory instead of two), as PyTorch's; zero_grad(true) makes the next backward copy once.
  EMBER_ARG(bool, gradient_as_bucket_view) = false;
};

namespace parallel {

// Joinable: under a distributed::algorithms::Join, ranks with fewer batches shadow the others'
// gradient all-reduces with zeros (averages still divide by the world size, as PyTorch's default).
class DistributedDataParallelImpl : public Module, public distributed::algorithms::Joinable {
 public:
  // Checks that every rank's module has parameters of the same shapes (an ember::Error naming
  // the first that differs), then broadcasts rank 0's parameters and buffers.
  explicit DistributedDataParallelImpl(AnyModule module, DistributedDataParallelOptions options = {});
  ~DistributedDataParallelImpl() override;

  Tensor forward(const Tensor& input);

  // While a NoSync lives, backward accumulates gradients locally; the first backward after it
  // averages the accumulated gradients (torch's `with ddp.no_sync():`).
  class NoSync {
   public:
    explicit NoSync(DistributedDataParallelImpl& ddp);
    ~NoSync();
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;

   private:
    DistributedDataParallelImpl& ddp_;
    bool saved_;
  };
  [[nodiscard]] NoSync no_sync() { return NoSync(*this); }

  // Replaces the all-reduce of each bucket by hook(state, bucket), once, before the first
  // backward: e.g. register_comm_hook(nullptr, ddp_comm_hooks::fp16_compress_hook).
  template <class State, class Hook>
  void register_comm_hook(State state, Hook hook) {
    register_comm_hook_impl(
        [state = std::move(state), hook = std::move(hook)](distributed::GradBucket& bucket) mutable {
          return hook(state, bucket);
        });
  }

  std::unique_ptr<distributed::algorithms::JoinHook> join_hook() override;
  distributed::ProcessGroupPtr join_process_group() override;

  const AnyModule& module() const { return module_; }
  // Each bucket's parameters, in reduction order, as indices into the module's parameters that
  // require a gradient.
  std::vector<std::vector<size_t>> bucket_indices() const;

 private:
  struct Reducer;
  class DdpJoinHook;
  void register_comm_hook_impl(distributed::CommHook hook);
  void sync_buffers();  // rank 0's buffers to every rank
  AnyModule module_;
  DistributedDataParallelOptions options_;
  std::shared_ptr<Reducer> reducer_;
};
EMBER_MODULE(DistributedDataParallel);

}  // namespace parallel
}  // namespace ember::nn
