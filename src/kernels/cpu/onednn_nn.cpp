#include "kernels/cpu/onednn_nn.h"

#include <cstdlib>
#include <memory>
#include <new>
#include <string>

namespace ember::onednn {
namespace {

thread_local size_t t_weight_reorders = 0;

// None when the storage's version does not follow its writes (inference tensors, from_blob).
std::optional<Plan::Source> source_of(const Tensor& t) {
  const StorageImpl& s = *t.unsafeGetTensorImpl()->storage();
  if (!s.version_tracks_writes()) return std::nullopt;
  return Plan::Source{s.id(), t.data_ptr(), s.version()};
}

// The tensor given for `arg`.
const Tensor& operand(std::initializer_list<std::pair<int, const Tensor&>> operands, int arg) {
  for (const auto& [a, t] : operands)
    if (a == arg) return t;
  detail::fail("onednn", "no operand for argument ", arg);
}

}  // namespace

dnnl::memory Plan::bind(int arg, const dnnl::memory::desc& user_md, const dnnl::memory::desc& want, Use use,
                        std::vector<Step>* pending) {
  dnnl::memory u(user_md, engine(), DNNL_MEMORY_NONE);
  user.emplace(arg, u);
  if (want == user_md) return u;
  if (use == Use::kWeight) {  // its data lives in the kept copies, pointed to before each run
    dnnl::memory internal(want, engine(), DNNL_MEMORY_NONE);
    steps.push_back({dnnl::reorder(u, internal), {{DNNL_ARG_FROM, u}, {DNNL_ARG_TO, internal}}, arg, want.get_size()});
    return internal;
  }
  dnnl::memory internal(want, engine());
  if (use == Use::kOutput) {
    pending->push_back({dnnl::reorder(internal, u), {{DNNL_ARG_FROM, internal}, {DNNL_ARG_TO, u}}});
  } else {
    steps.push_back({dnnl::reorder(u, internal), {{DNNL_ARG_FROM, u}, {DNNL_ARG_TO, internal}}});
  }
  return internal;
}

namespace {

// The kept copy for the weight `now` (none: one that is never found again): the one holding this
// weight's data, else one holding nothing, a new one while the plan keeps fewer than kKeptWeights
// copies and kKeptBytes, or the least recently used.
Plan::Kept& kept_for(Plan::Step& step, const std::optional<Plan::Source>& now) {
  Plan::Kept *empty = nullptr, *oldest = nullptr;
  for (Plan::Kept& k : step.kept) {
    if (now && k.valid && k.source.storage == now->storage && k.source.data == now->data) return k;
    if (!k.valid) empty = &k;
    if (!oldest || k.used < oldest->used) oldest = &k;
  }
  if (empty) return *empty;
  const size_t align = 64, bytes = (step.bytes + align - 1) / align * align;
  if (step.kept.empty() || (step.kept.size() < Plan::kKeptWeights && (step.kept.size() + 1) * bytes <= Plan::kKeptBytes)) {
    step.kept.push_back({.buffer = std::shared_ptr<void>(std::aligned_alloc(align, bytes), std::free)});
    if (!step.kept.back().buffer) throw std::bad_alloc();
    return step.kept.back();
  }
  oldest->valid = false;
  return *oldest;
}

}  // namespace

void Plan::execute(std::initializer_list<std::pair<int, const Tensor&>> operands) {
  for (const auto& [arg, t] : operands) user.at(arg).set_data_handle(t.data_ptr());
  dnnl::stream& s = stream();
  ++runs;
  for (Step& step : steps) {
    if (step.weight == 0) {
      step.primitive.execute(s, step.args);
      continue;
    }
    const std::optional<Source> now = source_of(operand(operands, step.weight));
    Kept& k = kept_for(step, now);
    k.used = runs;
    step.args.at(DNNL_ARG_TO).set_data_handle(k.buffer.get());
    if (now && k.valid && k.source == *now) continue;
    k.valid = false;  // the copy is stale until the reorder has run
    step.primitive.execute(s, step.args);
    if (now) k.source = *now;
    k.valid = now.has_value();
    ++t_weight_reorders;
  }
  s.wait();
}

Plan& cached_plan(const Key& key, const std::function<Plan()>& make) {
  Primitive& p = cached(key, [&] {
    Primitive entry;
    entry.extra = std::make_shared<Plan>(make());
    return entry;
  });
  return *static_cast<Plan*>(p.extra.get());
}

size_t weight_reorders() { return t_weight_reorders; }

bool is_optimized(const dnnl::primitive_desc_base& pd) {
  const std::string impl = pd.impl_info_str();
  return impl.rfind("ref", 0) != 0 && impl.find(":ref") == std::string::npos;
}

}  // namespace ember::onednn
