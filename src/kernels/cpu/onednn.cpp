#include "kernels/cpu/onednn.h"

#include <string_view>

#include "core/parallel.h"

namespace ember::onednn {
namespace {

constexpr size_t kMaxEntries = 512;

struct KeyHash {
  size_t operator()(const Key& k) const { return k.hash(); }
};

}  // namespace

size_t Key::hash() const {
  size_t h = std::hash<const void*>()(op_);
  for (int64_t v : values_) h ^= std::hash<int64_t>()(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

dnnl::engine& engine() {
  static dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *e;
}

dnnl::stream& stream() {
  const int threads = in_parallel_region() ? 1 : get_num_threads();
  if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
  thread_local dnnl::stream s(engine());
  return s;
}

std::optional<dnnl::memory::data_type> data_type(ScalarType t) {
  using dt = dnnl::memory::data_type;
  switch (t) {
    case kFloat: return dt::f32;
    case kHalf: return dt::f16;
    case kBFloat16: return dt::bf16;
    case kInt: return dt::s32;
    case kChar: return dt::s8;
    case kByte: return dt::u8;
    default: return std::nullopt;
  }
}

dnnl::memory::desc desc_of(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype) {
  auto dt = data_type(dtype);
  EMBER_CHECK(dt, "onednn", "dtype ", dtype, " has no oneDNN equivalent");
  if (sizes.empty()) return dnnl::memory::desc({1}, *dt, dnnl::memory::dims{1});
  return dnnl::memory::desc(dnnl::memory::dims(sizes.begin(), sizes.end()), *dt,
                            dnnl::memory::dims(strides.begin(), strides.end()));
}

dnnl::memory::desc desc_of(const Tensor& t) { return desc_of(t.sizes(), t.strides(), t.dtype()); }

void skip_faulty(dnnl::primitive_desc& pd) {
  const auto faulty = [](std::string_view impl) {
    return impl == "jit_1x1:avx512_core_amx_int8" || impl == "jit_1x1:avx512_core_amx_bf16";
  };
  while (faulty(pd.impl_info_str()))
    if (!pd.next_impl()) throw dnnl::error(dnnl_unimplemented, "only faulty implementations");
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void Primitive::use_scratchpad(const dnnl::primitive_desc_base& pd) {
  const dnnl::memory::desc md = pd.scratchpad_desc();
  scratchpad_bytes = md.get_size();
  if (scratchpad_bytes > 0) args.insert_or_assign(DNNL_ARG_SCRATCHPAD, dnnl::memory(md, engine(), DNNL_MEMORY_NONE));
}

void Primitive::execute(std::initializer_list<std::pair<int, const void*>> handles) {
  for (const auto& [arg, ptr] : handles) args.at(arg).set_data_handle(const_cast<void*>(ptr));
  struct Scratch {  // returned to the cache however the run ends
    size_t n;
    void* p;
    explicit Scratch(size_t bytes) : n(bytes), p(n ? cpu_allocator::allocate(n) : nullptr) {}
    ~Scratch() { cpu_allocator::deallocate(p, n); }
  } scratch(scratchpad_bytes);
  if (scratch.p) args.at(DNNL_ARG_SCRATCHPAD).set_data_handle(scratch.p);
  dnnl::stream& s = stream();
  primitive.execute(s, args);
  s.wait();
}

namespace {
thread_local std::unordered_map<Key, Primitive, KeyHash> t_cache;
}

Primitive& cached(const Key& key, const std::function<Primitive()>& make) {
  auto it = t_cache.find(key);
  if (it != t_cache.end()) return it->second;
  if (t_cache.size() >= kMaxEntries) t_cache.clear();  // shapes churn: start over rather than grow
  return t_cache.emplace(key, make()).first->second;
}

size_t cache_size() { return t_cache.size(); }

}  // namespace ember::onednn
