// Graph: the capture (a recorder of the dispatch point's capture layer and the thread's storage
// source) and the replay.
//
// During capture every op runs as usual and its run is recorded (dispatch/capture.h) with its
// tensor arguments kept as aliases: a tensor made before the capture is kept with its storage (a
// "static input", checked at each replay), a tensor of the pool as an alias of the pool's block
// that does not own it, so that the capture's tensors die when the program drops them (their
// blocks then serve later allocations of the capture, and the autograd engine still steals a
// gradient nobody else holds). Each op's own allocations are logged in order; a replay hands the
// op the same blocks in the same order, so its results land where the capture's did and the
// steps after it read them there.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <sstream>
#include <string_view>

#include "core/value_read.h"
#include "ember/autocast.h"
#include "ember/error.h"
#include "graphs/graphs_internal.h"

namespace ember::graphs {

namespace {

std::atomic<uint64_t> next_capture_id{1};
void keep_block(void*) {}  // a replay's storages leave their blocks to the pool

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// Ops whose output shape depends on the values of their input: a replay cannot keep it.
bool data_dependent_shape(std::string_view op) {
  static constexpr std::string_view kOps[] = {"nonzero", "argwhere", "masked_select", "unique", "_unique",
                                              "_unique2", "unique_consecutive", "unique_dim", "nonzero_numpy"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

// Factories of uninitialized tensors.
bool is_empty_factory(std::string_view op) {
  return op == "empty" || op == "empty_like" || op == "empty_strided" || op == "new_empty" ||
         op == "new_empty_strided";
}

// In-place and out= ops that write every element of their first argument without reading it.
bool overwrites_first(std::string_view op) {
  static constexpr std::string_view kOps[] = {"copy_", "fill_", "zero_", "normal_", "uniform_", "bernoulli_",
                                              "random_", "exponential_", "geometric_", "cauchy_", "log_normal_",
                                              "set_", "resize_", "resize_as_"};
  return ends_with(op, "_out") || std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

template <class F>
void for_each_tensor(const dispatch::TracedArg& a, F&& f) {
  using K = dispatch::TracedArg::Kind;
  if (a.kind == K::Tensor) f(*a.tensor);
  if (a.kind == K::TensorList)
    for (size_t k = 0; k < a.count; ++k) f(a.tensors[k]);
  if (a.kind == K::OptTensorList)
    for (size_t k = 0; k < a.count; ++k)
      if (a.optional_tensors[k]) f(*a.optional_tensors[k]);
}

}  // namespace

// ---- capture ----------------------------------------------------------------------------------

class Capture;
namespace {
thread_local Capture* tls_capture = nullptr;  // the capture under way on this thread
}

class Capture final : public dispatch::CaptureRecorder, public cpu_allocator::StorageSource {
 public:
  explicit Capture(std::shared_ptr<MemoryPool> pool) : pool_(std::move(pool)), id_(next_capture_id++) {}

  void install() {
    pool_->set_capture(id_);
    tls_capture = this;
    prev_source_ = cpu_allocator::set_storage_source(this);
    prev_hook_ = detail::value_read_hook();
    detail::value_read_hook() = &refuse_read;
    dispatch::set_capture_recorder(this);
  }
  void uninstall() noexcept {
    dispatch::set_capture_recorder(nullptr);
    detail::value_read_hook() = prev_hook_;
    cpu_allocator::set_storage_source(prev_source_);
    tls_capture = nullptr;
    pool_->set_capture(0);
  }

  // ---- StorageSource: every storage made on this thread while capturing ----
  void* allocate(size_t nbytes, std::function<void(void*)>& release) override {
    bool reused = false;
    Block* b = pool_->take(nbytes, id_, &reused);
    reused_ += reused;
    b->written = pending_ != nullptr;  // made by an op (its output or scratch), not by host code
    b->born = static_cast<int64_t>(steps_.size());
    if (pending_) pending_->allocs.push_back({b->ptr, nbytes});
    release = [pool = pool_](void* p) { pool->release(p); };
    if (cpu_allocator::fill_uninitialized_memory()) std::memset(b->ptr, 0xFF, nbytes);
    return b->ptr;
  }

  // ---- CaptureRecorder ----
  void begin(const char* op, const dispatch::TracedArg* args, size_t n, uint32_t writes,
             bool returns_tensors) override {
    EMBER_CHECK(returns_tensors, "graphs", "op '", op,
                "' returns a value computed from tensor data to the host (a host synchronization): a captured graph "
                "could not replay the decisions made with it. Keep it out of the captured region");
    EMBER_CHECK(!data_dependent_shape(op), "graphs", "op '", op,
                "' makes an output whose shape depends on the data (a host synchronization): a captured graph "
                "replays fixed shapes. Keep it out of the captured region");
    const std::string_view name(op);
    const bool inplace = name.size() > 1 && name.back() == '_' && !ends_with(name, "__");
    const bool out = ends_with(name, "_out");
    const bool overwrite = overwrites_first(name);
    pending_ = std::make_unique<Step>();
    pending_->name = op;
    pending_->mask = dispatch::thread_state().active & (dispatch::kAutocastLayer | dispatch::kInferenceLayer);
    if (pending_->mask & dispatch::kAutocastLayer) pending_->autocast_dtype = autocast::get_autocast_cpu_dtype();
    pending_writes_.clear();
    pending_data_.clear();
    pending_may_write_ = inplace || out || writes != 0;
    for (size_t i = 0; i < n; ++i) {
      // Which arguments the op writes: the first of an in-place op, the Tensor& ones of an out=
      // op, an out-parameter (Tensor*).
      const bool written = (i < 32 && (writes >> i) & 1) && (out || (inplace && i == 0) ||
                                                            args[i].kind == dispatch::TracedArg::Kind::Unsupported);
      const bool read = !written || (!(overwrite && i == 0) && !out);
      for_each_tensor(args[i], [&](const Tensor& t) {
        if (!t.defined()) return;
        pending_data_.push_back(t.unsafeGetTensorImpl()->storage()->data());
        if (read) check_not_host_made(t, op);
        if (written) pending_writes_.push_back(t.unsafeGetTensorImpl()->storage()->data());
      });
    }
  }

  Tensor keep(const Tensor& t) override {
    const TensorImpl* impl = t.unsafeGetTensorImpl();
    StorageImpl* storage = impl->storage().get();
    IntrusivePtr<StorageImpl> kept;
    {
      std::lock_guard<std::mutex> lock(pool_->mutex());
      if (Block* b = pool_->find(storage->data()); b && b->live) {
        if (!b->shadow) b->shadow = IntrusivePtr<StorageImpl>::make(b->ptr, storage->nbytes(), nullptr);
        kept = b->shadow;
      }
    }
    if (!kept) {
      note_static(t);
      kept = impl->storage();
    }
    return Tensor(IntrusivePtr<TensorImpl>::make(std::move(kept), impl->dtype(), impl->sizes(), impl->strides(),
                                                 impl->storage_offset()));
  }

  void end(std::unique_ptr<dispatch::CapturedCall> call, const Tensor* const* results, size_t n) override {
    Step& s = *pending_;
    s.call = std::move(call);
    mark_written(pending_writes_);
    bool views_only = n > 0 && s.allocs.empty() && !pending_may_write_;
    for (size_t i = 0; i < n; ++i) {
      const Tensor& r = *results[i];
      if (!r.defined()) {
        s.results.emplace_back();
        continue;
      }
      const void* data = r.unsafeGetTensorImpl()->storage()->data();
      views_only = views_only && std::find(pending_data_.begin(), pending_data_.end(), data) != pending_data_.end();
      s.results.push_back(keep(r));
    }
    if (views_only) s.kind = Step::Kind::Skip;
    // An uninitialized tensor: what it holds comes from whoever writes it next.
    if (is_empty_factory(s.name)) mark_unwritten(s.allocs);
    steps_.push_back(std::move(s));
    pending_.reset();
    ++ops_;
  }

  void abandon() noexcept override { pending_.reset(); }

  void kernel(const char* name, std::function<void()> replay, TensorList reads, TensorList writes) override {
    for (const Tensor& t : reads) check_not_host_made(t, name);
    Step s;
    s.kind = Step::Kind::Kernel;
    s.name = name;
    s.kernel = std::move(replay);
    std::vector<const void*> written;
    for (const Tensor& t : reads)
      if (!in_pool(t)) note_static(t);
    for (const Tensor& t : writes) {
      written.push_back(t.unsafeGetTensorImpl()->storage()->data());
      if (!in_pool(t)) {
        note_static(t);
        s.bumps.push_back(t.unsafeGetTensorImpl()->storage());
      }
    }
    mark_written(written);
    steps_.push_back(std::move(s));
    ++ops_;
  }

  // ---- the end of the capture ----
  bool recording_op() const { return pending_ != nullptr; }
  std::vector<Step> take_steps() { return std::move(steps_); }
  std::vector<StaticInput> take_statics() { return std::move(statics_); }
  size_t ops() const { return ops_; }
  size_t reused() const { return reused_; }
  const std::shared_ptr<MemoryPool>& pool() const { return pool_; }

 private:
  static void refuse_read(const Tensor& t, const char* what) {
    ::ember::detail::fail("graphs", what, "() reads the values of a tensor of shape ", t.sizes(),
                          " during capture (a host synchronization): a replay would not read them again. Keep "
                          "the read out of the captured region");
  }

  bool in_pool(const Tensor& t) {
    std::lock_guard<std::mutex> lock(pool_->mutex());
    const Block* b = pool_->find(t.unsafeGetTensorImpl()->storage()->data());
    return b && b->live;
  }

  // A block of this capture that no op wrote holds what host code put there (or nothing).
  void check_not_host_made(const Tensor& t, const char* op) {
    if (!t.defined()) return;
    bool host_made = false;
    {
      std::lock_guard<std::mutex> lock(pool_->mutex());
      const Block* b = pool_->find(t.unsafeGetTensorImpl()->storage()->data());
      host_made = b && b->live && b->capture == id_ && !b->written;
    }
    EMBER_CHECK(!host_made, "graphs", "op '", op, "' reads a tensor of shape ", t.sizes(),
                " whose values were written during capture by host code, not by an op (a tensor made from C++ "
                "values, or filled through data_ptr()): a replay would read the capture's values. Make it before "
                "capture_begin, or compute it with ops");
  }

  void mark_unwritten(const std::vector<Alloc>& allocs) {
    std::lock_guard<std::mutex> lock(pool_->mutex());
    for (const Alloc& a : allocs)
      if (Block* b = pool_->find(a.ptr)) b->written = false;
  }

  void mark_written(const std::vector<const void*>& data) {
    std::lock_guard<std::mutex> lock(pool_->mutex());
    for (const void* p : data)
      if (Block* b = pool_->find(p); b && b->live) b->written = true;
  }

  void note_static(const Tensor& t) {
    const TensorImpl* impl = t.unsafeGetTensorImpl();
    if (!static_index_.emplace(impl, statics_.size()).second) return;
    StaticInput s{t,
                  impl->storage().get(),
                  impl->storage()->data(),
                  DimVector(impl->sizes()),
                  DimVector(impl->strides()),
                  impl->storage_offset(),
                  impl->dtype()};
    statics_.push_back(std::move(s));
  }

  std::shared_ptr<MemoryPool> pool_;
  uint64_t id_;
  std::vector<Step> steps_;
  std::unique_ptr<Step> pending_;  // the op being recorded
  std::vector<const void*> pending_writes_, pending_data_;
  bool pending_may_write_ = false;
  std::vector<StaticInput> statics_;
  std::unordered_map<const TensorImpl*, size_t> static_index_;
  size_t ops_ = 0, reused_ = 0;
  cpu_allocator::StorageSource* prev_source_ = nullptr;
  detail::ValueReadHook prev_hook_ = nullptr;
};

// ---- the graph ------------------------------------------------------------------------------

struct Graph::Impl {
  std::shared_ptr<MemoryPool> pool;
  std::vector<Step> steps;
  std::vector<StaticInput> statics;
  std::unique_ptr<Capture> capture;
  bool captured = false;
  GraphStats stats;

  void clear() {
    steps.clear();
    statics.clear();
    captured = false;
    stats = GraphStats{};
  }
  void abandon_capture() noexcept {
    if (!capture) return;
    if (tls_capture == capture.get()) capture->uninstall();
    capture.reset();
  }
};

Graph::Graph() : impl_(std::make_unique<Impl>()) {}

Graph::~Graph() {
  // A capture still under way on this thread ends with the graph.
  impl_->abandon_capture();
}

void Graph::capture_begin(MempoolId pool) {
  EMBER_CHECK(!tls_capture, "capture_begin",
              "a graph is already capturing on this thread: nested capture is not supported (end or reset the "
              "other capture first)");
  EMBER_CHECK(!impl_->capture, "capture_begin", "this graph is capturing on another thread");
  EMBER_CHECK(!impl_->captured, "capture_begin",
              "this graph holds a capture already: reset() it first (or capture into a new Graph)");
  impl_->clear();
  impl_->pool = pool ? std::move(pool) : std::make_shared<MemoryPool>();
  impl_->capture = std::make_unique<Capture>(impl_->pool);
  impl_->capture->install();
}

void Graph::capture_end() {
  Capture* c = impl_->capture.get();
  EMBER_CHECK(c, "capture_end", "capture_begin was not called");
  EMBER_CHECK(tls_capture == c, "capture_end", "the capture must end on the thread that began it");
  c->uninstall();
  std::vector<Step> steps = c->take_steps();
  std::vector<StaticInput> statics = c->take_statics();
  GraphStats st;
  st.ops = c->ops();
  st.reused_allocations = c->reused();
  impl_->capture.reset();
  for (StaticInput& s : statics) s.held_elsewhere = s.real.use_count() > 1;
  // Views and no-ops need nothing at replay; op calls of a known form become kernel calls.
  std::vector<Step> kept;
  kept.reserve(steps.size());
  for (Step& s : steps) {
    if (s.kind == Step::Kind::Skip) {
      ++st.skipped;
      continue;
    }
    if (s.kind == Step::Kind::Call) lower(s);
    if (s.kind == Step::Kind::Kernel) {
      ++st.kernel_steps;
    } else {
      ++st.call_steps;
    }
    kept.push_back(std::move(s));
  }
  st.static_inputs = statics.size();
  impl_->steps = std::move(kept);
  impl_->statics = std::move(statics);
  impl_->stats = st;
  impl_->captured = true;
}

namespace {

// The thread's state while a replay runs: the storage source hands each op call its blocks.
class Replay final : public cpu_allocator::StorageSource {
 public:
  Replay() : active_(dispatch::thread_state().active), prev_(cpu_allocator::set_storage_source(this)) {}
  ~Replay() {
    cpu_allocator::set_storage_source(prev_);
    dispatch::thread_state().active = active_;
  }
  Replay(const Replay&) = delete;
  Replay& operator=(const Replay&) = delete;

  // An op call's step (its allocations get the capture's blocks), or nullptr for a direct kernel.
  void start(const Step* s) {
    step_ = s;
    next_ = 0;
  }
  void finish() {
    EMBER_CHECK(next_ == step_->allocs.size(), "replay", "op '", step_->name, "' allocated ", next_,
                " tensors where the capture's allocated ", step_->allocs.size(),
                ": its work depends on something besides shapes (the graph no longer matches it)");
  }
  void* allocate(size_t nbytes, std::function<void(void*)>& release) override {
    if (!step_) {
      // A direct kernel's own scratch (bfloat16 gemm's dense copy of a transposed weight, say)
      // comes from the caching allocator, as in an eager step: the pool's plan holds the op calls'
      // tensors, and a lowered step has none of its own.
      release = [nbytes](void* p) { cpu_allocator::deallocate(p, nbytes); };
      return cpu_allocator::allocate(nbytes);
    }
    EMBER_CHECK(next_ < step_->allocs.size(), "replay", "op '", step_->name,
                "' allocates more tensors than at capture: its work depends on something besides shapes");
    const Alloc& a = step_->allocs[next_++];
    EMBER_CHECK(a.nbytes == nbytes, "replay", "op '", step_->name, "' asks for ", nbytes, " bytes where the capture got ",
                a.nbytes, ": its output shape depends on the data, which a graph cannot replay");
    release = &keep_block;
    if (cpu_allocator::fill_uninitialized_memory()) std::memset(a.ptr, 0xFF, nbytes);
    return a.ptr;
  }

 private:
  uint32_t active_;
  cpu_allocator::StorageSource* prev_;
  const Step* step_ = nullptr;
  size_t next_ = 0;
};

void check_static(const StaticInput& s) {
  const TensorImpl* t = s.real.unsafeGetTensorImpl();
  EMBER_CHECK(!s.held_elsewhere || s.real.use_count() > 1, "replay", "a static input of shape ",
              IntArrayRef(s.sizes), " was freed after capture: the graph reads and writes the tensors it captured, "
              "keep them alive while replaying");
  const bool same = t->storage().get() == s.storage && t->storage()->data() == s.data && t->dtype() == s.dtype &&
                    t->sizes().equals(s.sizes) && t->strides().equals(s.strides) && t->storage_offset() == s.offset;
  EMBER_CHECK(same, "replay", "a static input captured with shape ", IntArrayRef(s.sizes), " and dtype ", s.dtype,
              " now has shape ", t->sizes(), " and dtype ", t->dtype(),
              t->storage().get() == s.storage ? "" : " in other memory",
              ": a graph replays on the memory and shapes it captured. Copy new values into it (copy_) instead of "
              "resizing or replacing it, or capture again");
}

}  // namespace

namespace {
template <class Each>
void run_steps(std::vector<Step>& steps, Each&& each) {
  Replay r;
  uint32_t& active = dispatch::thread_state().active;
  for (size_t i = 0; i < steps.size(); ++i) {
    Step& s = steps[i];
    each(i, [&] {
      active = s.mask;  // the step's layer bits (a direct kernel's scratch copies dispatch too)
      if (s.kind == Step::Kind::Kernel) {
        r.start(nullptr);
        s.kernel();
        for (const auto& st : s.bumps) st->bump_version();
        return;
      }
      r.start(&s);
      if (s.mask & dispatch::kAutocastLayer) {
        AutocastGuard autocast(kCPU, s.autocast_dtype, true, false);
        s.call->replay();
      } else {
        s.call->replay();
      }
      r.finish();
    });
  }
}
}  // namespace

void Graph::replay() {
  EMBER_CHECK(impl_->captured, "replay",
              impl_->capture ? "the graph is still capturing (capture_end first)"
                             : "the graph holds no capture (never captured, or reset): capture_begin ... capture_end "
                               "first");
  EMBER_CHECK(!tls_capture, "replay", "replaying a graph inside a capture is not supported");
  for (const StaticInput& s : impl_->statics) check_static(s);
  run_steps(impl_->steps, [](size_t, auto&& run) { run(); });
}

std::vector<double> Graph::step_times(int rounds) {
  replay();  // the checks, and warm caches
  // What reading the clock twice costs, taken off each step's time.
  std::vector<double> empty;
  for (int k = 0; k < 1000; ++k) {
    const auto start = std::chrono::steady_clock::now();
    empty.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(empty.begin(), empty.begin() + 500, empty.end());
  const double clock = empty[500];
  std::vector<std::vector<double>> times(impl_->steps.size());
  for (int k = 0; k < rounds; ++k) {
    run_steps(impl_->steps, [&](size_t i, auto&& run) {
      const auto start = std::chrono::steady_clock::now();
      run();
      times[i].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    });
  }
  std::vector<double> medians;
  for (auto& t : times) {
    std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end());
    medians.push_back(t.empty() ? 0.0 : std::max(0.0, t[t.size() / 2] - clock));
  }
  return medians;
}

void Graph::reset() {
  impl_->abandon_capture();
  impl_->clear();
  impl_->pool.reset();
}

MempoolId Graph::pool() const { return impl_->pool; }
bool Graph::captured() const { return impl_->captured; }

GraphStats Graph::stats() const {
  GraphStats s = impl_->stats;
  if (impl_->pool) {
    s.pool_bytes = impl_->pool->bytes();
    s.pool_blocks = impl_->pool->blocks();
  }
  return s;
}

std::string Graph::dump() const {
  std::ostringstream os;
  for (const Step& s : impl_->steps) {
    os << (s.kind == Step::Kind::Kernel ? (s.lowered ? "kernel " : "direct ") : "call   ") << s.name;
    if (s.kind == Step::Kind::Call) os << " (" << s.allocs.size() << " allocations)";
    os << '\n';
  }
  return os.str();
}

GraphCapture::GraphCapture(Graph& g, MempoolId pool) : g_(g), exceptions_(std::uncaught_exceptions()) {
  g_.capture_begin(std::move(pool));
}

GraphCapture::~GraphCapture() noexcept(false) {
  if (std::uncaught_exceptions() > exceptions_) {
    g_.reset();  // the region threw: nothing is kept, the exception goes on
    return;
  }
  g_.capture_end();
}

}  // namespace ember::graphs
