// oneDNN glue of the nn ops, on top of onednn.h: a cached plan of several primitives run in
// sequence (reorders into and out of the layout a primitive prefers, then the primitive), and a
// check that a primitive descriptor is a real implementation rather than the reference one.
#pragma once
#include <oneapi/dnnl/dnnl.hpp>

#include <functional>
#include <initializer_list>
#include <utility>
#include <vector>

#include "kernels/cpu/onednn.h"

namespace ember::onednn {

// Primitives run in order. `user` holds the memories whose data the caller supplies on each run
// (tagged by DNNL_ARG_* of the main primitive); steps may share them and own scratch memories
// (a reordered source or weight, a blocked destination) allocated once with the plan.
struct Plan {
  struct Step {
    dnnl::primitive primitive;
    std::unordered_map<int, dnnl::memory> args;
  };
  std::vector<Step> steps;
  std::unordered_map<int, dnnl::memory> user;
  // The memory for `arg` in layout `want`: the user's memory when it has it already; otherwise a
  // new memory in `want` and a reorder step from the user's one (input == true) appended now, or
  // returned in `pending` to run after the main primitive (an output).
  dnnl::memory bind(int arg, const dnnl::memory::desc& user_md, const dnnl::memory::desc& want, bool input,
                    std::vector<Step>* pending = nullptr);
  void execute(std::initializer_list<std::pair<int, const void*>> handles);
};

Plan& cached_plan(const Key& key, const std::function<Plan()>& make);

// True when the implementation oneDNN picked is one of its optimized ones (not "ref").
bool is_optimized(const dnnl::primitive_desc_base& pd);

}  // namespace ember::onednn
