// ProcessGroupGloo: c10d's process group on Gloo's collectives (TCP transport). Collectives run in
// issue order on one worker thread per group, so async ones overlap the caller's work; point-to-
// point sends and receives are posted from the caller's thread (as c10d does) so that a pair of
// isend/irecv on two ranks cannot deadlock behind one another.
#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include "ember/distributed.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/indexing.h"

namespace ember::distributed {

namespace {

using ms = std::chrono::milliseconds;

// Gloo's rendezvous reads and writes through this view of an Ember store.
class GlooStore : public gloo::rendezvous::Store {
 public:
  explicit GlooStore(std::shared_ptr<distributed::Store> store) : store_(std::move(store)) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    store_->set(key, std::vector<uint8_t>(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    const std::vector<uint8_t> v = store_->get(key);
    return std::vector<char>(v.begin(), v.end());
  }
  void wait(const std::vector<std::string>& keys) override { store_->wait(keys); }
  void wait(const std::vector<std::string>& keys, const ms& timeout) override { store_->wait(keys, timeout); }

 private:
  std::shared_ptr<distributed::Store> store_;
};

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM: return "SUM";
    case ReduceOp::AVG: return "AVG";
    case ReduceOp::PRODUCT: return "PRODUCT";
    case ReduceOp::MIN: return "MIN";
    case ReduceOp::MAX: return "MAX";
  }
  return "?";
}

// Element-wise reductions (c = a op b) for Gloo, per dtype; 16-bit floats compute in float.
template <class T, class F>
void reduce_loop(void* c, const void* a, const void* b, size_t n) {
  auto* cc = static_cast<T*>(c);
  const auto* aa = static_cast<const T*>(a);
  const auto* bb = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) cc[i] = static_cast<T>(F{}(aa[i], bb[i]));
}
struct Sum { template <class T> auto operator()(T a, T b) const { return a + b; } };
struct Prod { template <class T> auto operator()(T a, T b) const { return a * b; } };
struct Min { template <class T> T operator()(T a, T b) const { return b < a ? b : a; } };
struct Max { template <class T> T operator()(T a, T b) const { return a < b ? b : a; } };
// Half and BFloat16 through float.
template <class F, class H>
struct Wide {
  float operator()(H a, H b) const { return F{}(static_cast<float>(a), static_cast<float>(b)); }
};

template <class F>
gloo::AllreduceOptions::Func reduce_func_for(ScalarType t) {
  switch (t) {
    case kFloat: return &reduce_loop<float, F>;
    case kDouble: return &reduce_loop<double, F>;
    case kHalf: return &reduce_loop<Half, Wide<F, Half>>;
    case kBFloat16: return &reduce_loop<BFloat16, Wide<F, BFloat16>>;
    case kInt: return &reduce_loop<int32_t, F>;
    case kLong: return &reduce_loop<int64_t, F>;
    case kByte: return &reduce_loop<uint8_t, F>;
    case kChar: return &reduce_loop<int8_t, F>;
    case kShort: return &reduce_loop<int16_t, F>;
    default: return nullptr;
  }
}
gloo::AllreduceOptions::Func reduce_func(ReduceOp op, ScalarType t, const char* name) {
  gloo::AllreduceOptions::Func f;
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG: f = reduce_func_for<Sum>(t); break;
    case ReduceOp::PRODUCT: f = reduce_func_for<Prod>(t); break;
    case ReduceOp::MIN: f = reduce_func_for<Min>(t); break;
    case ReduceOp::MAX: f = reduce_func_for<Max>(t); break;
  }
  EMBER_CHECK(f, name, "reduction ", op_name(op), " is not supported for dtype ", t);
  EMBER_CHECK(op != ReduceOp::AVG || is_floating_type(t), name, "ReduceOp.AVG needs a floating-point tensor, got ", t);
  return f;
}

// The element-typed pointer Gloo's reductions want (only the element size matters to them).
template <class Fn>
void with_element(ScalarType t, Fn&& fn) {
  switch (element_size(t)) {
    case 1: fn(uint8_t{}); break;
    case 2: fn(uint16_t{}); break;
    case 4: fn(uint32_t{}); break;
    case 8: fn(uint64_t{}); break;
    default: detail::fail("distributed", "unsupported dtype ", t);
  }
}

std::string shape_str(const Tensor& t) {
  std::ostringstream os;
  os << t.sizes() << " (" << t.scalar_type() << ")";
  return os.str();
}

void check_dense(const Tensor& t, const char* name) {
  EMBER_CHECK(t.defined(), name, "expected a defined tensor");
  EMBER_CHECK(t.is_contiguous(), name, "expected a contiguous tensor, got shape ", t.sizes(), " strides ", t.strides());
}

// ---- work ---------------------------------------------------------------------------------------
// A failed work keeps its error's message, and wait() throws a fresh ember::Error on the waiting
// thread: no exception object is shared between the worker thread and the caller's.
class WorkImpl : public Work {
 public:
  WorkImpl(std::function<void()> run, std::vector<Tensor> outputs)
      : run_(std::move(run)), outputs_(std::move(outputs)) {}
  bool is_completed() override {
    const std::lock_guard<std::mutex> lock(mutex_);
    return done_;
  }
  bool is_success() override {
    const std::lock_guard<std::mutex> lock(mutex_);
    return done_ && !error_;
  }
  std::exception_ptr exception() override {
    const std::lock_guard<std::mutex> lock(mutex_);
    return error_ ? std::make_exception_ptr(Error(*error_)) : nullptr;
  }
  bool wait() override {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return done_; });
    if (error_) throw Error(*error_);
    return true;
  }
  std::vector<Tensor> result() override { return outputs_; }
  void run() {
    std::optional<std::string> error;
    try {
      run_();
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {
      error = "unknown error";
    }
    run_ = nullptr;
    const std::lock_guard<std::mutex> lock(mutex_);
    error_ = std::move(error);
    done_ = true;
    cv_.notify_all();
  }

 private:
  std::function<void()> run_;
  std::vector<Tensor> outputs_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::optional<std::string> error_;
};

// ---- the Gloo process group ---------------------------------------------------------------------
constexpr uint64_t kP2PSlotPrefix = uint64_t{0xEB} << 56;  // above the slots of Gloo's collectives
constexpr int kHeaderWords = 32;                          // op, dtype, argument, ndim, sizes

class ProcessGroupGloo final : public ProcessGroup {
 public:
  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, ms timeout, const std::string& hostname)
      : rank_(rank), size_(size), timeout_(timeout) {
    EMBER_CHECK(size > 0 && rank >= 0 && rank < size, "init_process_group", "rank ", rank,
                " is not in [0, world_size) with world_size ", size);
    // Gloo writes to its sockets without MSG_NOSIGNAL: a peer that died would kill this process
    // with SIGPIPE instead of failing the collective. Ignore it, as Python (hence PyTorch) does,
    // unless the program installed its own handler.
    struct sigaction old_action {};
    if (sigaction(SIGPIPE, nullptr, &old_action) == 0 && old_action.sa_handler == SIG_DFL) signal(SIGPIPE, SIG_IGN);
    gloo::transport::tcp::attr attr;
    attr.hostname = hostname;
    try {
      auto device = gloo::transport::tcp::CreateDevice(attr);
      auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
      context->setTimeout(timeout);
      GlooStore gloo_store(store);
      context->connectFullMesh(gloo_store, device);
      context_ = std::move(context);
    } catch (const ember::Error& e) {
      detail::fail("init_process_group", "rank ", rank, " of ", size, " could not meet the other ranks: ", e.what());
    } catch (const std::exception& e) {
      detail::fail("init_process_group", "rank ", rank, " of ", size, " could not connect (Gloo): ", e.what());
    }
    worker_ = std::thread([this] { work_loop(); });
  }
  ~ProcessGroupGloo() override {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend_name() const override { return "gloo"; }
  ms timeout() const override { return timeout_; }

  WorkPtr allreduce(std::vector<Tensor>& tensors, const AllreduceOptions& opts) override {
    for (const Tensor& t : tensors) check_dense(t, "all_reduce");
    const ReduceOp op = opts.reduce_op;
    std::vector<gloo::AllreduceOptions::Func> funcs;
    for (const Tensor& t : tensors) funcs.push_back(reduce_func(op, t.dtype(), "all_reduce"));
    return enqueue("all_reduce", tensors, static_cast<int64_t>(op), tensors, [this, tensors, funcs, op](uint32_t tag) {
      for (size_t i = 0; i < tensors.size(); ++i) {
        const Tensor& t = tensors[i];
        if (t.numel() == 0) continue;
        gloo::AllreduceOptions o(context_);
        with_element(t.dtype(), [&](auto e) {
          o.setOutput(static_cast<decltype(e)*>(t.data_ptr()), static_cast<size_t>(t.numel()));
        });
        o.setReduceFunction(funcs[i]);
        o.setTag(tag + static_cast<uint32_t>(i));
        o.setTimeout(timeout_);
        gloo::allreduce(o);
        if (op == ReduceOp::AVG) Tensor(t).div_(size_);
      }
    }, opts.shapes_verified);
  }

  WorkPtr broadcast(std::vector<Tensor>& tensors, int root) override {
    check_root(root, "broadcast");
    for (const Tensor& t : tensors) check_dense(t, "broadcast");
    return enqueue("broadcast", tensors, root, tensors, [this, tensors, root](uint32_t tag) {
      for (size_t i = 0; i < tensors.size(); ++i) {
        const Tensor& t = tensors[i];
        if (t.nbytes() == 0) continue;
        gloo::BroadcastOptions o(context_);
        o.setOutput(static_cast<uint8_t*>(t.data_ptr()), t.nbytes());
        o.setRoot(root);
        o.setTag(tag + static_cast<uint32_t>(i));
        o.setTimeout(timeout_);
        gloo::broadcast(o);
      }
    });
  }

  WorkPtr reduce(std::vector<Tensor>& tensors, int root, ReduceOp op) override {
    check_root(root, "reduce");
    std::vector<gloo::AllreduceOptions::Func> funcs;
    for (const Tensor& t : tensors) {
      check_dense(t, "reduce");
      funcs.push_back(reduce_func(op, t.dtype(), "reduce"));
    }
    return enqueue("reduce", tensors, root * 8 + static_cast<int64_t>(op), tensors,
                   [this, tensors, funcs, root, op](uint32_t tag) {
                     for (size_t i = 0; i < tensors.size(); ++i) {
                       const Tensor& t = tensors[i];
                       if (t.numel() == 0) continue;
                       // Gloo's reduce overwrites the buffers of other ranks: they reduce a copy
                       Tensor work = rank_ == root ? t : t.clone();
                       gloo::ReduceOptions o(context_);
                       with_element(t.dtype(), [&](auto e) {
                         o.setOutput(static_cast<decltype(e)*>(work.data_ptr()), static_cast<size_t>(t.numel()));
                       });
                       o.setRoot(root);
                       o.setReduceFunction(funcs[i]);
                       o.setTag(tag + static_cast<uint32_t>(i));
                       o.setTimeout(timeout_);
                       gloo::reduce(o);
                       if (rank_ == root && op == ReduceOp::AVG) Tensor(t).div_(size_);
                     }
                   });
  }

  WorkPtr allgather(std::vector<std::vector<Tensor>>& outputs, std::vector<Tensor>& inputs) override {
    EMBER_CHECK(outputs.size() == inputs.size(), "all_gather", "expected one output list per input, got ",
                outputs.size(), " lists for ", inputs.size(), " inputs");
    std::vector<Tensor> written;
    for (size_t i = 0; i < inputs.size(); ++i) {
      EMBER_CHECK(static_cast<int>(outputs[i].size()) == size_, "all_gather", "expected a list of ", size_,
                  " output tensors (the world size), got ", outputs[i].size());
      for (const Tensor& o : outputs[i]) {
        check_dense(o, "all_gather");
        EMBER_CHECK(o.sizes().equals(inputs[i].sizes()) && o.dtype() == inputs[i].dtype(), "all_gather",
                    "output tensors must have the input's shape and dtype ", shape_str(inputs[i]), ", got ",
                    shape_str(o));
        written.push_back(o);
      }
    }
    std::vector<Tensor> in;
    for (const Tensor& t : inputs) in.push_back(t.contiguous());
    return enqueue("all_gather", in, 0, written, [this, in, outputs](uint32_t tag) {
      for (size_t i = 0; i < in.size(); ++i) {
        Tensor flat = empty({static_cast<int64_t>(size_) * in[i].numel()}, in[i].options());
        gather_flat(in[i], flat, tag + static_cast<uint32_t>(i));
        for (int r = 0; r < size_; ++r)
          outputs[i][r].view({-1}).copy_(flat.narrow(0, r * in[i].numel(), in[i].numel()));
      }
    });
  }

  WorkPtr allgather_into_tensor_coalesced(std::vector<Tensor>& outputs, std::vector<Tensor>& inputs) override {
    EMBER_CHECK(outputs.size() == inputs.size(), "all_gather_into_tensor", "expected one output per input, got ",
                outputs.size(), " outputs for ", inputs.size(), " inputs");
    std::vector<Tensor> in;
    for (size_t i = 0; i < inputs.size(); ++i) {
      check_dense(outputs[i], "all_gather_into_tensor");
      EMBER_CHECK(outputs[i].numel() == inputs[i].numel() * size_ && outputs[i].dtype() == inputs[i].dtype(),
                  "all_gather_into_tensor", "the output must hold world_size (", size_, ") times the input ",
                  shape_str(inputs[i]), ", got ", shape_str(outputs[i]));
      in.push_back(inputs[i].contiguous());
    }
    return enqueue("all_gather_into_tensor", in, 0, outputs, [this, in, outputs](uint32_t tag) {
      for (size_t i = 0; i < in.size(); ++i) gather_flat(in[i], outputs[i], tag + static_cast<uint32_t>(i));
    });
  }

  // Gloo has no reduce-scatter on unbound buffers: an all-reduce of the concatenated inputs,
  // of which each rank keeps its slice (twice the traffic of a ring reduce-scatter).
  WorkPtr reduce_scatter(std::vector<Tensor>& outputs, std::vector<std::vector<Tensor>>& inputs,
                         ReduceOp op) override {
    EMBER_CHECK(outputs.size() == 1 && inputs.size() == 1, "reduce_scatter", "expected one output and one input list");
    Tensor out = outputs[0];
    check_dense(out, "reduce_scatter");
    EMBER_CHECK(static_cast<int>(inputs[0].size()) == size_, "reduce_scatter", "expected a list of ", size_,
                " input tensors (the world size), got ", inputs[0].size());
    std::vector<Tensor> flat_parts;
    for (const Tensor& t : inputs[0]) {
      EMBER_CHECK(t.sizes().equals(out.sizes()) && t.dtype() == out.dtype(), "reduce_scatter",
                  "input tensors must have the output's shape and dtype ", shape_str(out), ", got ", shape_str(t));
      flat_parts.push_back(t.reshape({-1}));
    }
    Tensor flat = cat(flat_parts);
    auto func = reduce_func(op, out.dtype(), "reduce_scatter");
    return enqueue("reduce_scatter", {out}, static_cast<int64_t>(op), {out}, [this, flat, out, func, op](uint32_t tag) {
      if (flat.numel() > 0) {
        gloo::AllreduceOptions o(context_);
        with_element(flat.dtype(), [&](auto e) {
          o.setOutput(static_cast<decltype(e)*>(flat.data_ptr()), static_cast<size_t>(flat.numel()));
        });
        o.setReduceFunction(func);
        o.setTag(tag);
        o.setTimeout(timeout_);
        gloo::allreduce(o);
      }
      Tensor o = out;
      o.view({-1}).copy_(flat.narrow(0, rank_ * out.numel(), out.numel()));
      if (op == ReduceOp::AVG) o.div_(size_);
    });
  }

  WorkPtr gather(std::vector<std::vector<Tensor>>& outputs, std::vector<Tensor>& inputs, int root) override {
    check_root(root, "gather");
    EMBER_CHECK(inputs.size() == 1, "gather", "expected one input tensor");
    const Tensor in = inputs[0].contiguous();
    std::vector<Tensor> out_list;
    if (rank_ == root) {
      EMBER_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_, "gather",
                  "the destination rank needs a gather_list of ", size_, " tensors (the world size)");
      for (const Tensor& o : outputs[0]) {
        EMBER_CHECK(o.defined() && o.sizes().equals(in.sizes()) && o.dtype() == in.dtype(), "gather",
                    "gather_list tensors must have the input's shape and dtype ", shape_str(in), ", got ",
                    o.defined() ? shape_str(o) : std::string("an undefined tensor"));
        out_list.push_back(o);
      }
    } else {
      EMBER_CHECK(outputs.empty() || outputs[0].empty(), "gather", "only the destination rank ", root,
                  " takes a gather_list (this is rank ", rank_, ")");
    }
    return enqueue("gather", {in}, root, out_list, [this, in, out_list, root](uint32_t tag) {
      Tensor flat;
      gloo::GatherOptions o(context_);
      o.setInput(static_cast<uint8_t*>(in.data_ptr()), in.nbytes());
      if (rank_ == root) {
        flat = empty({static_cast<int64_t>(size_) * in.numel()}, in.options());
        o.setOutput(static_cast<uint8_t*>(flat.data_ptr()), flat.nbytes());
      }
      o.setRoot(root);
      o.setTag(tag);
      o.setTimeout(timeout_);
      if (in.nbytes() > 0) gloo::gather(o);
      for (int r = 0; r < static_cast<int>(out_list.size()); ++r)
        Tensor(out_list[r]).copy_(flat.narrow(0, r * in.numel(), in.numel()).view(in.sizes()));
    });
  }

  WorkPtr scatter(std::vector<Tensor>& outputs, std::vector<std::vector<Tensor>>& inputs, int root) override {
    check_root(root, "scatter");
    EMBER_CHECK(outputs.size() == 1, "scatter", "expected one output tensor");
    const Tensor out = outputs[0];
    check_dense(out, "scatter");
    std::vector<Tensor> in_list;
    if (rank_ == root) {
      EMBER_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_, "scatter",
                  "the source rank needs a scatter_list of ", size_, " tensors (the world size)");
      for (const Tensor& t : inputs[0]) {
        EMBER_CHECK(t.defined() && t.sizes().equals(out.sizes()) && t.dtype() == out.dtype(), "scatter",
                    "scatter_list tensors must have the output's shape and dtype ", shape_str(out), ", got ",
                    t.defined() ? shape_str(t) : std::string("an undefined tensor"));
        in_list.push_back(t.contiguous());
      }
    } else {
      EMBER_CHECK(inputs.empty() || inputs[0].empty(), "scatter", "only the source rank ", root,
                  " takes a scatter_list (this is rank ", rank_, ")");
    }
    return enqueue("scatter", {out}, root, {out}, [this, in_list, out, root](uint32_t tag) {
      if (out.nbytes() == 0) return;
      gloo::ScatterOptions o(context_);
      std::vector<uint8_t*> ptrs;
      for (const Tensor& t : in_list) ptrs.push_back(static_cast<uint8_t*>(t.data_ptr()));
      if (rank_ == root) o.setInputs(ptrs, out.nbytes());
      o.setOutput(static_cast<uint8_t*>(out.data_ptr()), out.nbytes());
      o.setRoot(root);
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::scatter(o);
    });
  }

  WorkPtr alltoall_base(Tensor& output, Tensor& input, const std::vector<int64_t>& output_split_sizes,
                        const std::vector<int64_t>& input_split_sizes) override {
    check_dense(output, "all_to_all");
    EMBER_CHECK(input.defined() && output.dtype() == input.dtype(), "all_to_all",
                "output and input must have one dtype, got ", shape_str(output), " and ", shape_str(input));
    const bool even = output_split_sizes.empty() && input_split_sizes.empty();
    if (even) {
      EMBER_CHECK(output.sizes().equals(input.sizes()), "all_to_all",
                  "output and input must have the same shape, got ", shape_str(output), " and ", shape_str(input));
      EMBER_CHECK(input.dim() > 0 && input.size(0) % size_ == 0, "all_to_all", "dim 0 of the input ",
                  shape_str(input), " must split evenly among ", size_, " ranks");
    }
    // bytes per rank of each side
    auto bytes_per_rank = [&](const Tensor& t, const std::vector<int64_t>& splits, const char* which) {
      EMBER_CHECK(t.dim() > 0, "all_to_all", "the ", which, " needs a dim 0 to split, got ", shape_str(t));
      const int64_t row = t.size(0) ? t.nbytes() / t.size(0) : 0;
      if (splits.empty()) {
        EMBER_CHECK(t.size(0) % size_ == 0, "all_to_all", "dim 0 of the ", which, " ", shape_str(t),
                    " must split evenly among ", size_, " ranks when no split sizes are given");
        return std::vector<int64_t>(size_, t.size(0) / size_ * row);
      }
      EMBER_CHECK(static_cast<int>(splits.size()) == size_, "all_to_all", "expected ", size_, " ", which,
                  " split sizes (the group's size), got ", splits.size());
      int64_t sum = 0;
      std::vector<int64_t> bytes;
      for (int64_t s : splits) {
        EMBER_CHECK(s >= 0, "all_to_all", "split sizes must be non-negative, got ", s);
        sum += s;
        bytes.push_back(s * row);
      }
      EMBER_CHECK(sum == t.size(0), "all_to_all", "the ", which, " split sizes add up to ", sum, " but dim 0 of the ",
                  which, " ", shape_str(t), " is ", t.size(0));
      return bytes;
    };
    const Tensor in = input.contiguous();
    const Tensor out = output;
    std::vector<int64_t> in_bytes, out_bytes;
    if (!even) {
      in_bytes = bytes_per_rank(in, input_split_sizes, "input");
      out_bytes = bytes_per_rank(out, output_split_sizes, "output");
    }
    // Uneven slices may differ in shape across ranks: the check then compares the dtype only
    // (through an empty tensor of it).
    std::vector<Tensor> checked{even ? in : empty({0}, in.options())};
    return enqueue("all_to_all", checked, even ? 0 : 1, {out}, [this, in, out, in_bytes, out_bytes, even](uint32_t tag) {
      if (in.nbytes() == 0 && out.nbytes() == 0) return;
      if (even) {
        gloo::AlltoallOptions o(context_);
        o.setInput(static_cast<uint8_t*>(in.data_ptr()), in.nbytes());
        o.setOutput(static_cast<uint8_t*>(out.data_ptr()), out.nbytes());
        o.setTag(tag);
        o.setTimeout(timeout_);
        gloo::alltoall(o);
        return;
      }
      gloo::AlltoallvOptions o(context_);
      o.setInput(static_cast<uint8_t*>(in.data_ptr()), in_bytes);
      o.setOutput(static_cast<uint8_t*>(out.data_ptr()), out_bytes);
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::alltoallv(o);
    });
  }

  WorkPtr barrier() override {
    return enqueue("barrier", {}, 0, {}, [this](uint32_t tag) {
      gloo::BarrierOptions o(context_);
      o.setTag(tag);
      o.setTimeout(timeout_);
      gloo::barrier(o);
    });
  }

  WorkPtr send(std::vector<Tensor>& tensors, int dst, int tag) override {
    return p2p(tensors, dst, tag, true);
  }
  WorkPtr recv(std::vector<Tensor>& tensors, int src, int tag) override {
    return p2p(tensors, src, tag, false);
  }

 private:
  void check_root(int root, const char* name) const {
    EMBER_CHECK(root >= 0 && root < size_, name, "rank ", root, " is not in the group of size ", size_);
  }

  void gather_flat(const Tensor& in, const Tensor& out, uint32_t tag) {
    if (in.nbytes() == 0) return;
    gloo::AllgatherOptions o(context_);
    o.setInput(static_cast<uint8_t*>(in.data_ptr()), in.nbytes());
    o.setOutput(static_cast<uint8_t*>(out.data_ptr()), out.nbytes());
    o.setTag(tag);
    o.setTimeout(timeout_);
    gloo::allgather(o);
  }

  // Every rank shares what it passed (collective, dtype, argument, shape of its first tensor) so
  // that a mismatch raises an error naming both ranks instead of corrupting data or hanging.
  void check_peers(const char* name, int op_code, const std::vector<Tensor>& tensors, int64_t arg, uint32_t tag) {
    std::vector<int64_t> mine(kHeaderWords, -1), all(static_cast<size_t>(kHeaderWords) * size_);
    mine[0] = op_code;
    mine[2] = arg;
    mine[3] = static_cast<int64_t>(tensors.size());
    if (!tensors.empty()) {
      mine[1] = static_cast<int64_t>(tensors[0].scalar_type());
      mine[4] = tensors[0].dim();
      for (int64_t d = 0; d < tensors[0].dim() && d + 5 < kHeaderWords; ++d) mine[5 + d] = tensors[0].size(d);
    }
    gloo::AllgatherOptions o(context_);
    o.setInput(mine.data(), mine.size());
    o.setOutput(all.data(), all.size());
    o.setTag(tag);
    o.setTimeout(timeout_);
    gloo::allgather(o);
    for (int r = 0; r < size_; ++r) {
      const int64_t* theirs = all.data() + static_cast<size_t>(r) * kHeaderWords;
      if (std::equal(mine.begin(), mine.end(), theirs)) continue;
      auto describe = [](const int64_t* h) {
        std::ostringstream os;
        os << "collective #" << h[0] << " (argument " << h[2] << ") on " << h[3] << " tensor(s)";
        if (h[3] > 0) {
          os << " of shape [";
          for (int64_t d = 0; d < h[4] && d + 5 < kHeaderWords; ++d) os << (d ? ", " : "") << h[5 + d];
          os << "] dtype " << static_cast<ScalarType>(h[1]);
        }
        return os.str();
      };
      detail::fail(name, "rank ", rank_, " and rank ", r, " of ", size_, " disagree: rank ", rank_, " passed ",
                   describe(mine.data()), " but rank ", r, " passed ", describe(theirs),
                   " (every rank must call the same collectives with tensors of the same shapes)");
    }
  }

  // Runs body(its first tag) on the worker thread, after checking `checked` across the ranks
  // unless the caller verified the shapes beforehand.
  WorkPtr enqueue(const char* name, std::vector<Tensor> checked, int64_t arg, std::vector<Tensor> outputs,
                  std::function<void(uint32_t)> body, bool shapes_verified = false) {
    // a tag for the check (taken even when skipped, so the ranks' tags stay in step), then one
    // per tensor (ops on one pair of slots never mix)
    const uint32_t tag = next_tag_;
    next_tag_ += 1 + static_cast<uint32_t>(std::max<size_t>(1, checked.size()));
    const int op_code = static_cast<int>(std::hash<std::string>{}(name) & 0xffff);
    auto work = std::make_shared<WorkImpl>(
        [this, name, op_code, checked = std::move(checked), arg, body = std::move(body), tag, shapes_verified] {
          try {
            if (!shapes_verified) check_peers(name, op_code, checked, arg, tag);
            body(tag + 1);
          } catch (const gloo::Exception& e) {
            detail::fail(name, "failed on rank ", rank_, " of ", size_, " (timeout ", timeout_.count(),
                         " ms; a peer may have died or not called ", name, "): ", e.what());
          }
        },
        std::move(outputs));
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(work);
    }
    cv_.notify_one();
    return work;
  }

  void work_loop() {
    while (true) {
      std::shared_ptr<WorkImpl> work;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        work = std::move(queue_.front());
        queue_.pop_front();
      }
      work->run();
    }
  }

  // Posts the send or receive now; the Work waits for it to finish.
  WorkPtr p2p(std::vector<Tensor>& tensors, int peer, int tag, bool is_send) {
    const char* name = is_send ? "send" : "recv";
    EMBER_CHECK(tensors.size() == 1, name, "expected one tensor");
    check_root(peer, name);
    EMBER_CHECK(peer != rank_, name, "rank ", rank_, " cannot ", name, is_send ? " to" : " from", " itself");
    EMBER_CHECK(tag >= 0, name, "the tag must be non-negative, got ", tag);
    const Tensor t = is_send ? tensors[0].contiguous() : tensors[0];
    if (!is_send) check_dense(t, name);
    const uint64_t slot = kP2PSlotPrefix | static_cast<uint32_t>(tag);
    std::shared_ptr<gloo::transport::UnboundBuffer> buf;
    try {
      buf = context_->createUnboundBuffer(t.data_ptr(), t.nbytes());
      if (is_send) {
        buf->send(peer, slot);
      } else {
        buf->recv(peer, slot);
      }
    } catch (const gloo::Exception& e) {
      detail::fail(name, "failed on rank ", rank_, " with peer ", peer, ": ", e.what());
    }
    auto work = std::make_shared<WorkImpl>(
        [rank = rank_, timeout = timeout_, buf, t, peer, is_send, name] {
          try {
            const bool ok = is_send ? buf->waitSend(timeout) : buf->waitRecv(timeout);
            EMBER_CHECK(ok, name, "was aborted on rank ", rank, " (peer ", peer, ")");
          } catch (const gloo::Exception& e) {
            detail::fail(name, "failed on rank ", rank, " with peer ", peer, " shape ", shape_str(t), " (timeout ",
                         timeout.count(), " ms): ", e.what());
          }
        },
        std::vector<Tensor>{t});
    // the wait runs on the caller's thread when it calls wait()
    return std::make_shared<DeferredWork>(work);
  }

  // A Work whose body runs on the first wait() (point-to-point waits belong to the caller).
  class DeferredWork : public Work {
   public:
    explicit DeferredWork(std::shared_ptr<WorkImpl> work) : work_(std::move(work)) {}
    bool is_completed() override { return work_->is_completed(); }
    bool is_success() override { return work_->is_success(); }
    std::exception_ptr exception() override { return work_->exception(); }
    bool wait() override {
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (!started_) {
          started_ = true;
          work_->run();
        }
      }
      return work_->wait();
    }
    std::vector<Tensor> result() override { return work_->result(); }

   private:
    std::shared_ptr<WorkImpl> work_;
    std::mutex mutex_;
    bool started_ = false;
  };

  const int rank_, size_;
  const ms timeout_;
  std::shared_ptr<gloo::Context> context_;
  uint32_t next_tag_ = 0;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<WorkImpl>> queue_;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace

ProcessGroupPtr make_process_group_gloo(std::shared_ptr<Store> store, int rank, int size, ms timeout,
                                        const std::string& hostname) {
  EMBER_CHECK(store, "make_process_group_gloo", "needs a store");
  return std::make_shared<ProcessGroupGloo>(std::move(store), rank, size, timeout, hostname);
}

}  // namespace ember::distributed
