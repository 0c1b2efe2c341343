#include "kernels/cpu/onednn_nn.h"

#include <memory>
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
  dnnl::memory internal(want, engine());
  if (use == Use::kOutput) {
    pending->push_back({dnnl::reorder(internal, u), {{DNNL_ARG_FROM, internal}, {DNNL_ARG_TO, u}}});
  } else {
    steps.push_back({dnnl::reorder(u, internal), {{DNNL_ARG_FROM, u}, {DNNL_ARG_TO, internal}},
                     use == Use::kWeight ? arg : 0});
  }
  return internal;
}

void Plan::execute(std::initializer_list<std::pair<int, const Tensor&>> operands) {
  for (const auto& [arg, t] : operands) user.at(arg).set_data_handle(t.data_ptr());
  dnnl::stream& s = stream();
  for (Step& step : steps) {
    if (step.weight == 0) {
      step.primitive.execute(s, step.args);
      continue;
    }
    const std::optional<Source> now = source_of(operand(operands, step.weight));
    if (now && step.done == now) continue;
    step.done.reset();  // the reordered copy is stale until the reorder has run
    step.primitive.execute(s, step.args);
    step.done = now;
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
