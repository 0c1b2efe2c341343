// oneDNN glue of the nn ops, on top of onednn.h: a cached plan of several primitives run in
// sequence (reorders into and out of the layout a primitive prefers, then the primitive), and a
// check that a primitive descriptor is a real implementation rather than the reference one.
#pragma once
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "kernels/cpu/onednn.h"

namespace ember::onednn {

// Primitives run in order. `user` holds the memories whose data the caller supplies on each run
// (tagged by DNNL_ARG_* of the main primitive); steps may share them and own scratch memories
// (a reordered source or weight, a blocked destination) allocated once with the plan.
// A weight's reorder runs into a copy kept per weight (up to kKeptWeights copies and kKeptBytes
// per plan, the least recently used one replaced beyond), skipped while the weight holds the data it read last time,
// unchanged: an inference loop reorders each weight once per plan (and so per thread), also when
// several weights share a shape and so a plan (a ResNet's repeated blocks). Storage whose version
// does not follow its writes (inference tensors', from_blob's) is reordered on every run.
struct Plan {
  // The data a tensor holds: its storage (an id, never reused as addresses are), where in it, and
  // the storage's version, which every write through Ember bumps.
  struct Source {
    uint64_t storage = 0;
    const void* data = nullptr;
    uint32_t version = 0;
    bool operator==(const Source&) const = default;
  };
  // A reordered copy of one weight: which data it holds and when it was last used.
  struct Kept {
    Source source{};
    bool valid = false;
    std::shared_ptr<void> buffer;
    uint64_t used = 0;
  };
  static constexpr size_t kKeptWeights = 64, kKeptBytes = size_t{256} << 20;
  struct Step {
    dnnl::primitive primitive;
    std::unordered_map<int, dnnl::memory> args;
    // A weight's reorder: the user argument it reads (DNNL_ARG_* are positive), the bytes of its
    // reordered layout and the copies kept.
    int weight = 0;
    size_t bytes = 0;
    std::vector<Kept> kept = {};
  };
  enum class Use { kInput, kWeight, kOutput };
  std::vector<Step> steps;
  std::unordered_map<int, dnnl::memory> user;
  uint64_t runs = 0;
  // The memory for `arg` in layout `want`: the user's memory when it has it already; otherwise a
  // new memory in `want` and a reorder step from the user's one appended now (an input or a
  // weight), or returned in `pending` to run after the main primitive (an output).
  dnnl::memory bind(int arg, const dnnl::memory::desc& user_md, const dnnl::memory::desc& want, Use use,
                    std::vector<Step>* pending = nullptr);
  // Runs the steps on the operands' data (each tensor's data_ptr(), tagged as in `user`).
  void execute(std::initializer_list<std::pair<int, const Tensor&>> operands);
};

Plan& cached_plan(const Key& key, const std::function<Plan()>& make);
size_t weight_reorders();  // weight reorders run by plans on this thread (for tests)

// True when the implementation oneDNN picked is one of its optimized ones (not "ref").
bool is_optimized(const dnnl::primitive_desc_base& pd);

}  // namespace ember::onednn
