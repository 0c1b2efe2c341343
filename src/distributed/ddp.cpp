// DistributedDataParallel's reducer. Each parameter's .grad, once the backward engine has
// accumulated into it (a post-accumulate hook on the leaf, PyTorch's AccumulateGrad post hook),
// is copied into its bucket (with gradient_as_bucket_view, .grad becomes its view in the bucket,
// where later accumulations then land without a copy); a bucket whose gradients are all in
// starts its all-reduce (or comm hook) asynchronously, buckets in a fixed order so every rank
// issues the same collectives in the same order. A callback queued with the engine runs when
// backward has written the leaves' .grad: it waits for the buckets and writes the averaged
// gradients over .grad (with gradient_as_bucket_view they are there already).
#include <optional>
#include <sstream>
#include <unordered_set>

#include "autograd/engine.h"
#include "ember/autograd.h"
#include "ember/distributed/join.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/indexing.h"
#include "ember/nn/parallel/distributed.h"
#include "ember/pointwise.h"
#include "ember/reduce.h"

namespace ember {

namespace distributed {

namespace {

class WorkFuture final : public Future {
 public:
  explicit WorkFuture(WorkPtr work) : work_(std::move(work)) {}
  Tensor wait() override {
    work_->wait();
    return work_->result().at(0);
  }
  bool completed() override { return work_->is_completed(); }

 private:
  WorkPtr work_;
};

class ValueFuture final : public Future {
 public:
  explicit ValueFuture(Tensor value) : value_(std::move(value)) {}
  Tensor wait() override { return value_; }
  bool completed() override { return true; }

 private:
  Tensor value_;
};

class ThenFuture final : public Future {
 public:
  ThenFuture(FuturePtr parent, std::function<Tensor(Tensor)> fn) : parent_(std::move(parent)), fn_(std::move(fn)) {}
  Tensor wait() override {
    if (fn_) {
      value_ = fn_(parent_->wait());
      fn_ = nullptr;
    }
    return value_;
  }
  bool completed() override { return parent_->completed(); }

 private:
  FuturePtr parent_;
  std::function<Tensor(Tensor)> fn_;
  Tensor value_;
};

ProcessGroupPtr group_or_world(const ProcessGroupPtr& group, const char* name) {
  ProcessGroupPtr g = group ? group : group_world();
  EMBER_CHECK(g, name, "the default process group has not been initialized; call init_process_group first");
  return g;
}

// Compress to `dtype`, average and all-reduce; the future writes the result back into the buffer.
FuturePtr compressed_allreduce(const ProcessGroupPtr& group, GradBucket& bucket, ScalarType dtype, const char* name) {
  const ProcessGroupPtr g = group_or_world(group, name);
  std::vector<Tensor> compressed{bucket.buffer().to(dtype).div_(g->size())};
  return make_future(g->allreduce(compressed, {.reduce_op = ReduceOp::SUM, .shapes_verified = true}))->then([buffer = bucket.buffer()](Tensor reduced) {
    Tensor out = buffer;
    out.copy_(reduced);
    return out;
  });
}

}  // namespace

FuturePtr Future::then(std::function<Tensor(Tensor)> fn) {
  return std::make_shared<ThenFuture>(shared_from_this(), std::move(fn));
}
FuturePtr make_future(WorkPtr work) { return std::make_shared<WorkFuture>(std::move(work)); }
FuturePtr make_completed_future(Tensor value) { return std::make_shared<ValueFuture>(std::move(value)); }

namespace ddp_comm_hooks {
FuturePtr allreduce_hook(const ProcessGroupPtr& process_group, GradBucket& bucket) {
  const ProcessGroupPtr g = group_or_world(process_group, "allreduce_hook");
  std::vector<Tensor> buffer{bucket.buffer()};
  buffer[0].div_(g->size());
  // every rank's buckets were compared when DistributedDataParallel built them
  return make_future(g->allreduce(buffer, {.reduce_op = ReduceOp::SUM, .shapes_verified = true}));
}
FuturePtr fp16_compress_hook(const ProcessGroupPtr& process_group, GradBucket& bucket) {
  return compressed_allreduce(process_group, bucket, kHalf, "fp16_compress_hook");
}
FuturePtr bf16_compress_hook(const ProcessGroupPtr& process_group, GradBucket& bucket) {
  return compressed_allreduce(process_group, bucket, kBFloat16, "bf16_compress_hook");
}
}  // namespace ddp_comm_hooks

}  // namespace distributed

namespace nn::parallel {

using distributed::FuturePtr;
using distributed::GradBucket;
using distributed::ProcessGroupPtr;

struct DistributedDataParallelImpl::Reducer : std::enable_shared_from_this<Reducer> {
  struct Bucket {
    Tensor buffer;
    std::vector<size_t> params;  // indices into Reducer::params
    std::vector<Tensor> views;   // the parameters' gradients inside buffer
    size_t pending = 0;          // parameters whose gradient has not arrived in this backward
    FuturePtr future;
  };

  ProcessGroupPtr group;
  bool find_unused = false;
  bool static_graph = false;
  bool as_view = false;  // gradient_as_bucket_view
  // static_graph, after the first synchronized backward: the parameters its graph did not reach
  // on this rank (ready at each forward without a walk) and the flags of those used on some rank.
  std::optional<std::vector<char>> static_unused_here;
  Tensor static_globally_used;
  std::vector<Tensor> params;
  std::vector<std::string> names;
  // Each parameter's AccumulateGrad node, kept alive so that the forward's graph can be
  // searched for it.
  std::vector<std::shared_ptr<autograd::Node>> accumulators;
  std::vector<unsigned> hook_ids;
  std::vector<Bucket> buckets;
  std::vector<size_t> bucket_of, slot_of;  // per parameter: its bucket and its view there
  std::vector<char> ready, used;           // per parameter, this backward
  size_t next_bucket = 0;                  // the next bucket to launch (in order)
  bool expect_sync = false;                // the last forward asked for a synchronizing backward
  bool callback_queued = false;
  bool require_sync = true;                // false inside no_sync()
  bool ran_backward = false;
  distributed::CommHook hook;

  void build_buckets(double cap_mb) {
    // As PyTorch: parameters in reverse registration order (the order backward produces their
    // gradients), a bucket per dtype, the first capped at 1 MB so that communication starts
    // early, the others at cap_mb.
    const size_t cap = static_cast<size_t>(cap_mb * 1024 * 1024);
    const size_t first_cap = std::min<size_t>(cap, 1024 * 1024);
    struct Open {
      ScalarType dtype;
      std::vector<size_t> params;
      size_t bytes = 0;
    };
    std::vector<Open> open;
    std::vector<std::vector<size_t>> closed;
    for (size_t k = params.size(); k-- > 0;) {
      const Tensor& p = params[k];
      auto it = std::find_if(open.begin(), open.end(), [&](const Open& o) { return o.dtype == p.dtype(); });
      if (it == open.end()) it = open.insert(open.end(), Open{p.dtype(), {}, 0});
      it->params.push_back(k);
      it->bytes += p.nbytes();
      if (it->bytes >= (closed.empty() ? first_cap : cap)) {
        closed.push_back(std::move(it->params));
        open.erase(it);
      }
    }
    for (Open& o : open) closed.push_back(std::move(o.params));
    bucket_of.assign(params.size(), 0);
    slot_of.assign(params.size(), 0);
    for (size_t b = 0; b < closed.size(); ++b) {
      Bucket bucket;
      bucket.params = closed[b];
      int64_t total = 0;
      for (size_t k : bucket.params) total += params[k].numel();
      bucket.buffer = zeros({total}, params[bucket.params[0]].options());
      int64_t offset = 0;
      for (size_t s = 0; s < bucket.params.size(); ++s) {
        const Tensor& p = params[bucket.params[s]];
        bucket.views.push_back(bucket.buffer.narrow(0, offset, p.numel()).view(p.sizes()));
        offset += p.numel();
        bucket_of[bucket.params[s]] = b;
        slot_of[bucket.params[s]] = s;
      }
      buckets.push_back(std::move(bucket));
    }
  }

  // At each forward: the backward of `output` synchronizes unless inside no_sync().
  void prepare_for_backward(const Tensor& output) {
    expect_sync = require_sync && GradMode::is_enabled() && output.requires_grad();
    if (!expect_sync) return;
    callback_queued = false;
    next_bucket = 0;
    ready.assign(params.size(), 0);
    used.assign(params.size(), 0);
    for (Bucket& b : buckets) {
      b.pending = b.params.size();
      b.future = nullptr;
    }
    if (static_unused_here) {
      for (size_t k = 0; k < params.size(); ++k)
        if ((*static_unused_here)[k]) {
          ready[k] = 1;
          --buckets[bucket_of[k]].pending;
        }
      return;
    }
    if (!detects_unused()) return;
    // The parameters the output depends on: the AccumulateGrad nodes its graph reaches.
    std::unordered_set<const autograd::Node*> seen;
    std::vector<const autograd::Node*> stack;
    if (output.grad_fn()) stack.push_back(output.grad_fn().get());
    while (!stack.empty()) {
      const autograd::Node* n = stack.back();
      stack.pop_back();
      if (!seen.insert(n).second) continue;
      for (const autograd::Edge& e : n->next_edges())
        if (e.is_valid()) stack.push_back(e.function.get());
    }
    for (size_t k = 0; k < params.size(); ++k)
      if (!seen.count(accumulators[k].get())) {
        ready[k] = 1;
        --buckets[bucket_of[k]].pending;
      }
  }

  // The post-accumulate hook of parameter k: backward has accumulated its .grad.
  void on_accumulated(size_t k) {
    if (!expect_sync) return;
    EMBER_CHECK(!ready[k], "DistributedDataParallel", "parameter '", names[k],
                "' received a gradient twice in one backward: run forward before each backward");
    if (!callback_queued) {
      callback_queued = true;
      autograd::queue_callback([weak = weak_from_this()] {
        if (auto self = weak.lock()) self->finalize();
      });
    }
    // after no_sync() iterations .grad holds their gradients too: they are averaged with it
    to_bucket(k);
    ready[k] = used[k] = 1;
    --buckets[bucket_of[k]].pending;
    launch_ready_buckets();
  }

  // Parameter k's .grad (zeros when it has none) into its bucket view; with gradient_as_bucket_view
  // a defined .grad becomes that view (it is one already after a first synchronized backward,
  // unless zero_grad set it to none).
  void to_bucket(size_t k) {
    NoGradGuard no_grad;
    Tensor& view = buckets[bucket_of[k]].views[slot_of[k]];
    Tensor& g = params[k].mutable_grad();
    if (!g.defined()) {
      view.zero_();
    } else if (!g.is_alias_of(view)) {
      view.copy_(g);
      if (as_view) g = view;
    }
  }

  void launch_ready_buckets() {
    for (; next_bucket < buckets.size() && buckets[next_bucket].pending == 0; ++next_bucket) {
      Bucket& b = buckets[next_bucket];
      for (size_t k : b.params)
        if (!used[k]) to_bucket(k);  // unused here: reduce what .grad holds, or zeros
      b.future = communicate(next_bucket);
    }
  }

  // Starts bucket bi's communication: the comm hook, or the average by all-reduce.
  FuturePtr communicate(size_t bi) {
    Bucket& b = buckets[bi];
    std::vector<Tensor> bucket_params;
    for (size_t k : b.params) bucket_params.push_back(params[k]);
    GradBucket gb(bi, buckets.size(), b.buffer, b.views, bucket_params);
    FuturePtr future = hook ? hook(gb) : distributed::ddp_comm_hooks::allreduce_hook(group, gb);
    EMBER_CHECK(future, "DistributedDataParallel", "the communication hook returned no future");
    return future;
  }

  // A joined rank's part in the others' backward: zeros into every bucket's communication, and
  // into the all-reduce of the used flags.
  void shadow_backward() {
    NoGradGuard no_grad;
    std::vector<FuturePtr> futures;
    std::vector<Tensor> kept;  // gradient_as_bucket_view: the buffers hold this rank's .grad, which it keeps
    for (size_t bi = 0; bi < buckets.size(); ++bi) {
      if (as_view) kept.push_back(buckets[bi].buffer.clone());
      buckets[bi].buffer.zero_();
      futures.push_back(communicate(bi));
    }
    for (const FuturePtr& f : futures) f->wait();
    for (size_t bi = 0; bi < kept.size(); ++bi) buckets[bi].buffer.copy_(kept[bi]);
    if (detects_unused()) {
      std::vector<Tensor> u{zeros({static_cast<int64_t>(params.size())}, kInt)};
      group->allreduce(u)->wait();
      // a rank that joined before its first backward follows the others' recorded graph
      if (static_graph) static_unused_here.emplace(params.size(), 0);
    }
  }

  // Whether this backward finds the unused parameters (walk, then all-reduce of the used flags).
  bool detects_unused() const { return find_unused || (static_graph && !static_unused_here); }

  // After backward wrote .grad: wait for every bucket and write the averages over .grad (with
  // gradient_as_bucket_view .grad is the bucket's view: only an undefined one is set).
  void finalize() {
    expect_sync = false;
    ran_backward = true;
    if (next_bucket < buckets.size()) {
      std::ostringstream missing;
      size_t count = 0;
      for (size_t k = 0; k < params.size(); ++k)
        if (!ready[k]) missing << (count++ ? ", " : "") << names[k];
      ember::detail::fail("DistributedDataParallel", "rank ", group->rank(), ": ", count,
                   " parameter(s) did not receive a gradient in this backward: ", missing.str(),
                   ". When the forward does not use every parameter, construct DistributedDataParallel with "
                   "find_unused_parameters(true).");
    }
    std::vector<Tensor> results;
    for (Bucket& b : buckets) results.push_back(b.future->wait());
    Tensor globally_used = static_globally_used;
    if (detects_unused()) {
      std::vector<Tensor> u{from_blob_copy(used)};
      group->allreduce(u)->wait();
      globally_used = u[0];
      if (static_graph) {
        std::vector<char> unused_here(params.size());
        for (size_t k = 0; k < params.size(); ++k) unused_here[k] = !used[k];
        static_unused_here = std::move(unused_here);
        static_globally_used = globally_used;
      }
    }
    NoGradGuard no_grad;
    for (size_t bi = 0; bi < buckets.size(); ++bi) {
      Bucket& b = buckets[bi];
      if (results[bi].data_ptr() != b.buffer.data_ptr()) b.buffer.copy_(results[bi].view({-1}));
      b.future = nullptr;
      for (size_t s = 0; s < b.params.size(); ++s) {
        const size_t k = b.params[s];
        if (globally_used.defined() && globally_used.data_ptr<int32_t>()[k] == 0) continue;
        Tensor& g = params[k].mutable_grad();
        if (as_view) {
          if (!g.defined()) g = b.views[s];  // unused here, used elsewhere
        } else if (g.defined()) {
          g.copy_(b.views[s]);
        } else {
          g = b.views[s].clone();
        }
      }
    }
  }

  static Tensor from_blob_copy(const std::vector<char>& flags) {
    Tensor t = zeros({static_cast<int64_t>(flags.size())}, kInt);
    for (size_t i = 0; i < flags.size(); ++i) t.data_ptr<int32_t>()[i] = flags[i];
    return t;
  }
};

namespace {

// PyTorch's _verify_param_shape_across_processes: every rank's parameter shapes, gathered; with
// them the sizes of the buckets, so that their all-reduces need no check of their own.
void verify_shapes(const ProcessGroupPtr& group, const std::vector<Tensor>& params,
                   const std::vector<std::string>& names, const std::vector<int64_t>& bucket_numels,
                   double bucket_cap_mb) {
  std::vector<int64_t> mine{static_cast<int64_t>(params.size())};
  for (const Tensor& p : params) {
    mine.push_back(static_cast<int64_t>(p.scalar_type()));
    mine.push_back(p.dim());
    for (int64_t s : p.sizes()) mine.push_back(s);
  }
  const size_t buckets_at = mine.size();
  mine.push_back(static_cast<int64_t>(bucket_numels.size()));
  mine.insert(mine.end(), bucket_numels.begin(), bucket_numels.end());
  std::vector<Tensor> len{full({1}, static_cast<int64_t>(mine.size()), kLong)};
  group->allreduce(len, {distributed::ReduceOp::MAX})->wait();
  const int64_t n = len[0].item<int64_t>();
  Tensor local = full({n}, -1, kLong);
  std::copy(mine.begin(), mine.end(), local.data_ptr<int64_t>());
  std::vector<Tensor> all{empty({n * group->size()}, kLong)};
  std::vector<Tensor> in{local};
  group->allgather_into_tensor_coalesced(all, in)->wait();
  const int64_t* data = all[0].data_ptr<int64_t>();
  auto describe = [](const int64_t* v, size_t& at) {
    std::ostringstream os;
    const auto dtype = static_cast<ScalarType>(v[at]);
    const int64_t dim = v[at + 1];
    at += 2;
    os << "[";
    for (int64_t d = 0; d < dim; ++d) os << (d ? ", " : "") << v[at++];
    os << "] (" << dtype << ")";
    return os.str();
  };
  for (int r = 0; r < group->size(); ++r) {
    const int64_t* theirs = data + r * n;
    if (std::equal(mine.begin(), mine.end(), theirs)) continue;
    EMBER_CHECK(theirs[0] == mine[0], "DistributedDataParallel", "rank ", group->rank(), " has ", mine[0],
                " parameters but rank ", r, " has ", theirs[0], ": every rank must wrap the same model");
    size_t a = 1, b = 1;
    for (size_t k = 0; k < params.size(); ++k) {
      const std::string m = describe(mine.data(), a), t = describe(theirs, b);
      EMBER_CHECK(m == t, "DistributedDataParallel", "parameter '", names[k], "' has shape ", m, " on rank ",
                  group->rank(), " but ", t, " on rank ", r, ": every rank must wrap the same model");
    }
    auto sizes = [&](const int64_t* v) {
      std::ostringstream os;
      os << "[";
      for (int64_t b = 0; b < v[buckets_at]; ++b) os << (b ? ", " : "") << v[buckets_at + 1 + b];
      return os.str() + "]";
    };
    ember::detail::fail("DistributedDataParallel", "rank ", group->rank(), " builds buckets of ", sizes(mine.data()),
                        " elements but rank ", r, " of ", sizes(theirs),
                        ": bucket_cap_mb must be the same on every rank (this rank's is ", bucket_cap_mb, ")");
  }
}

}  // namespace

DistributedDataParallelImpl::DistributedDataParallelImpl(AnyModule module, DistributedDataParallelOptions options)
    : module_(std::move(module)), options_(std::move(options)), reducer_(std::make_shared<Reducer>()) {
  EMBER_CHECK(!module_.is_empty(), "DistributedDataParallel", "needs a module");
  EMBER_CHECK(options_.bucket_cap_mb() > 0, "DistributedDataParallel", "bucket_cap_mb must be positive, got ",
              options_.bucket_cap_mb());
  register_module("module", module_.ptr());
  Reducer& r = *reducer_;
  r.group = distributed::group_or_world(options_.process_group(), "DistributedDataParallel");
  r.find_unused = options_.find_unused_parameters();
  r.static_graph = options_.static_graph();
  r.as_view = options_.gradient_as_bucket_view();
  for (const auto& item : module_.ptr()->named_parameters()) {
    if (!item.value().requires_grad()) continue;
    EMBER_CHECK(item.value().is_contiguous(), "DistributedDataParallel", "parameter '", item.key(),
                "' must be contiguous");
    r.params.push_back(item.value());
    r.names.push_back(item.key());
  }
  EMBER_CHECK(!r.params.empty(), "DistributedDataParallel",
              "the module has no parameter that requires a gradient: nothing to synchronize");
  r.build_buckets(options_.bucket_cap_mb());
  std::vector<int64_t> bucket_numels;
  for (const Reducer::Bucket& b : r.buckets) bucket_numels.push_back(b.buffer.numel());
  verify_shapes(r.group, r.params, r.names, bucket_numels, options_.bucket_cap_mb());
  {
    NoGradGuard no_grad;
    std::vector<Tensor> state = r.params;
    for (const Tensor& b : module_.ptr()->buffers()) state.push_back(b);
    for (Tensor& t : state) {
      std::vector<Tensor> one{t};
      r.group->broadcast(one, 0)->wait();
    }
  }
  AutoGradMode grad_on(true);
  for (size_t k = 0; k < r.params.size(); ++k) {
    const Tensor& p = r.params[k];
    r.accumulators.push_back(p.expand_as(p).grad_fn()->next_edge(0).function);
    r.hook_ids.push_back(autograd::register_post_accumulate_grad_hook(
        p, [weak = std::weak_ptr<Reducer>(reducer_), k](const Tensor&) {
          if (auto self = weak.lock()) self->on_accumulated(k);
        }));
  }
}

DistributedDataParallelImpl::~DistributedDataParallelImpl() {
  for (size_t k = 0; k < reducer_->hook_ids.size(); ++k)
    autograd::remove_post_accumulate_grad_hook(reducer_->params[k], reducer_->hook_ids[k]);
}

namespace {
int64_t sum_over_ranks(const ProcessGroupPtr& group, int64_t mine,
                       distributed::ReduceOp op = distributed::ReduceOp::SUM) {
  std::vector<Tensor> t{full({1}, mine, kLong)};
  group->allreduce(t, {op})->wait();
  return t[0].item<int64_t>();
}
}  // namespace

void DistributedDataParallelImpl::sync_buffers() {
  NoGradGuard no_grad;
  for (const Tensor& b : module_.ptr()->buffers()) {
    std::vector<Tensor> one{b};
    reducer_->group->broadcast(one, 0)->wait();
  }
}

Tensor DistributedDataParallelImpl::forward(const Tensor& input) {
  Reducer& r = *reducer_;
  bool sync = r.require_sync;
  if (join_enabled_) {
    distributed::algorithms::Join::notify_join_context(*this);
    // joined ranks learn whether this iteration's backward synchronizes (then it must run)
    sync = sum_over_ranks(r.group, r.require_sync && GradMode::is_enabled() ? 1 : 0) > 0;
  }
  if (options_.broadcast_buffers() && r.group->size() > 1 && sync) sync_buffers();
  Tensor output = module_.forward(input);
  r.prepare_for_backward(output);
  return output;
}

// What a joined rank runs for DDP: each iteration of the others, their forward's all-reduce of
// the sync flag and buffer broadcast, then their backward's all-reduces with zeros (so the
// averages divide by the whole world, as PyTorch's default); at the end, every rank takes the
// model of the rank that joined last.
class DistributedDataParallelImpl::DdpJoinHook : public distributed::algorithms::JoinHook {
 public:
  explicit DdpJoinHook(DistributedDataParallelImpl& ddp) : ddp_(ddp) {}
  void main_hook() override {
    Reducer& r = *ddp_.reducer_;
    const bool sync = sum_over_ranks(r.group, 0) > 0;
    if (ddp_.options_.broadcast_buffers() && r.group->size() > 1 && sync) ddp_.sync_buffers();
    if (sync) r.shadow_backward();
  }
  void post_hook(bool is_last_joiner) override {
    Reducer& r = *ddp_.reducer_;
    const int64_t source = sum_over_ranks(r.group, is_last_joiner ? r.group->rank() : -1, distributed::ReduceOp::MAX);
    NoGradGuard no_grad;
    std::vector<Tensor> state = r.params;
    for (const Tensor& b : ddp_.module_.ptr()->buffers()) state.push_back(b);
    for (Tensor& t : state) {
      std::vector<Tensor> one{t};
      r.group->broadcast(one, static_cast<int>(source))->wait();
    }
  }

 private:
  DistributedDataParallelImpl& ddp_;
};

std::unique_ptr<distributed::algorithms::JoinHook> DistributedDataParallelImpl::join_hook() {
  return std::make_unique<DdpJoinHook>(*this);
}
ProcessGroupPtr DistributedDataParallelImpl::join_process_group() { return reducer_->group; }

DistributedDataParallelImpl::NoSync::NoSync(DistributedDataParallelImpl& ddp)
    : ddp_(ddp), saved_(ddp.reducer_->require_sync) {
  ddp_.reducer_->require_sync = false;
}
DistributedDataParallelImpl::NoSync::~NoSync() { ddp_.reducer_->require_sync = saved_; }

void DistributedDataParallelImpl::register_comm_hook_impl(distributed::CommHook hook) {
  EMBER_CHECK(!reducer_->hook, "register_comm_hook", "register_comm_hook can only be called once.");
  EMBER_CHECK(!reducer_->ran_backward, "register_comm_hook",
              "register_comm_hook must be called before the first backward.");
  reducer_->hook = std::move(hook);
}

std::vector<std::vector<size_t>> DistributedDataParallelImpl::bucket_indices() const {
  std::vector<std::vector<size_t>> out;
  for (const Reducer::Bucket& b : reducer_->buckets) out.push_back(b.params);
  return out;
}

}  // namespace nn::parallel
}  // namespace ember
