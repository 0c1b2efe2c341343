#include "kernels/cpu/onednn_nn.h"

#include <memory>
#include <string>

namespace ember::onednn {

dnnl::memory Plan::bind(int arg, const dnnl::memory::desc& user_md, const dnnl::memory::desc& want, bool input,
                        std::vector<Step>* pending) {
  dnnl::memory u(user_md, engine(), DNNL_MEMORY_NONE);
  user.emplace(arg, u);
  if (want == user_md) return u;
  dnnl::memory internal(want, engine());
  if (input) {
    steps.push_back({dnnl::reorder(u, internal), {{DNNL_ARG_FROM, u}, {DNNL_ARG_TO, internal}}});
  } else {
    pending->push_back({dnnl::reorder(internal, u), {{DNNL_ARG_FROM, internal}, {DNNL_ARG_TO, u}}});
  }
  return internal;
}

void Plan::execute(std::initializer_list<std::pair<int, const void*>> handles) {
  for (const auto& [arg, ptr] : handles) user.at(arg).set_data_handle(const_cast<void*>(ptr));
  dnnl::stream& s = stream();
  for (Step& step : steps) step.primitive.execute(s, step.args);
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

bool is_optimized(const dnnl::primitive_desc_base& pd) {
  const std::string impl = pd.impl_info_str();
  return impl.rfind("ref", 0) != 0 && impl.find(":ref") == std::string::npos;
}

}  // namespace ember::onednn
