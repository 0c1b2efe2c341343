// Which SIMD paths run: Highway picks among the targets Ember compiles its kernels for (AVX-512
// and AVX2) from what the CPU has, oneDNN picks its own; EMBER_CPU_CAPABILITY lowers Highway's
// choice before the first kernel runs. A CPU without AVX2 has no kernels to run: the first
// tensor allocated there raises an ember::Error saying so.
#include <hwy/highway.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ember/error.h"
#include "ember/parallel.h"
#include "kernels/cpu/pointwise.h"

namespace ember {
namespace {

constexpr int64_t kAvx512Targets = HWY_AVX3 | HWY_AVX3_DL;
// The targets the kernel files are compiled for: this file has the x86-64 baseline, they have
// AVX2 (CMakeLists.txt), so Highway's targets here include the baseline theirs lack.
constexpr int64_t kKernelTargets = HWY_TARGETS & (kAvx512Targets | HWY_AVX2);

int64_t compiled_targets();

void apply_environment() {
  const char* env = std::getenv("EMBER_CPU_CAPABILITY");
  if (!env || !*env) return;
  const std::string_view want(env);
  if (want == "avx2" || want == "AVX2") {
    hwy::DisableTargets(kAvx512Targets);
    compiled_targets();
  } else if (want != "avx512" && want != "AVX512") {
    // Read before main: an exception here could not be caught, so a bad value is reported and
    // ignored. ("default", PyTorch's scalar path, is not compiled: Ember's kernels need AVX2.)
    std::fprintf(stderr, "ember: EMBER_CPU_CAPABILITY: expected avx512 or avx2 but got \"%s\"; ignored\n", env);
  }
}

// Every program that makes a tensor links this file's caller (the allocator), so the limit holds
// from the first kernel on.
const bool g_applied = (apply_environment(), true);

bool has_isa(dnnl::cpu_isa isa) {
  const auto have = static_cast<unsigned>(dnnl::get_effective_cpu_isa()), want = static_cast<unsigned>(isa);
  return (have & want) == want;
}

// The targets this CPU supports among those Ember's kernels are compiled for. Highway 1.0's
// SupportedTargets() re-arms the dispatch with every target the CPU has before it applies
// DisableTargets' mask, so each call is followed by arming it with the masked set: without this,
// the first call (at the first tensor) put the kernels back on AVX-512 under EMBER_CPU_CAPABILITY=avx2.
int64_t compiled_targets() {
  const int64_t supported = hwy::SupportedTargets();
  hwy::GetChosenTarget().Update(supported);
  return supported & kKernelTargets;
}

}  // namespace

namespace detail {
bool cpu_capability_applied() { return g_applied; }

void check_cpu_supported() {
  static const bool supported = compiled_targets() != 0;
  if (!supported) {
    throw Error(
        "Ember: this CPU has no AVX2 (with FMA and F16C, x86-64-v3), which Ember's kernels are compiled for; "
        "it cannot run them");
  }
}
}  // namespace detail

std::string get_cpu_capability() {
  const int64_t targets = compiled_targets();
  if (targets & kAvx512Targets) return "AVX512";
  if (targets & HWY_AVX2) return "AVX2";
  return "NONE";
}

bool has_bfloat16_instructions() { return has_isa(dnnl::cpu_isa::avx512_core_bf16); }
bool has_amx_instructions() { return has_isa(dnnl::cpu_isa::avx512_core_amx); }

namespace kernels {
extern const bool g_native_bfloat16_store;  // (declared for the kernels in hwy_util-inl.h)
const bool g_native_bfloat16_store = has_bfloat16_instructions();
}  // namespace kernels

std::string cpu_kernel_paths() {
  std::string isa;
  if (has_amx_instructions()) {
    isa = "avx512_core_amx";
  } else if (has_bfloat16_instructions()) {
    isa = "avx512_core_bf16";
  } else if (has_isa(dnnl::cpu_isa::avx512_core_vnni)) {
    isa = "avx512_core_vnni";
  } else if (has_isa(dnnl::cpu_isa::avx512_core)) {
    isa = "avx512_core";
  } else if (has_isa(dnnl::cpu_isa::avx2)) {
    isa = "avx2";
  } else {
    isa = "below avx2";
  }
  // the target the kernels' dispatch runs (its first call arms it with the masked targets)
  return std::string("Highway ") + hwy::TargetName(kernels::dispatched_target()) + ", oneDNN " + isa + ", bfloat16 " +
         (has_bfloat16_instructions() ? "native" : "emulated");
}

}  // namespace ember
