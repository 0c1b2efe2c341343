// Intra-op thread count (libtorch's torch::set_num_threads / get_num_threads) and the CPU kernel
// paths in use.
#pragma once
#include <algorithm>
#include <atomic>
#include <string>
#include <thread>

#include "ember/error.h"

namespace ember {
int get_num_threads();
void set_num_threads(int n);

// libtorch's inter-op pool (at::launch, torch::jit::fork) has no counterpart in Ember: ops run on
// the calling thread and its OpenMP team. The count is kept for programs that set and read it,
// with libtorch's rules: positive, set at most once (the default: the machine's threads).
namespace detail {
inline std::atomic<int>& interop_threads() {
  static std::atomic<int> n{0};
  return n;
}
}  // namespace detail
inline void set_num_interop_threads(int n) {
  EMBER_CHECK(n > 0, "set_num_interop_threads", "Expected positive number of threads, got ", n);
  int unset = 0;
  EMBER_CHECK(detail::interop_threads().compare_exchange_strong(unset, n), "set_num_interop_threads",
              "Error: cannot set number of interop threads after parallel work has started or "
              "set_num_interop_threads called");
}
inline int get_num_interop_threads() {
  const int n = detail::interop_threads().load();
  return n > 0 ? n : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}
// Ember's thread count is the process's, so a new thread has nothing to set up (libtorch's
// at::init_num_threads applies its count to the calling thread's OpenMP).
inline void init_num_threads() {}
// Ember's addition: while the parallel regions a thread starts keep stalling at their closing
// barrier (their workers hardly run: other processes, or more of the program's own threads than
// cores), that thread runs its regions alone for a while (docs/threads.md). On by default;
// EMBER_ADAPTIVE_THREADS=0 in the environment or set_adaptive_threads(false) turns it off.
void set_adaptive_threads(bool enabled);
bool adaptive_threads();

// The widest SIMD level Ember's own kernels run: "AVX512" or "AVX2", as PyTorch's
// torch.backends.cpu.get_cpu_capability() ("NONE" on a CPU below AVX2, where Ember refuses to
// make tensors: its kernels are compiled for AVX2 and AVX-512 only). The environment variable
// EMBER_CPU_CAPABILITY=avx2 (as PyTorch's ATEN_CPU_CAPABILITY) lowers it at start-up, so the
// kernels another CPU would run are tested on this one; oneDNN's follow its ONEDNN_MAX_CPU_ISA.
std::string get_cpu_capability();
// Whether oneDNN's bfloat16 matmul and convolution run on bfloat16 instructions (AVX512-BF16 or
// AMX) rather than its emulation on plain AVX-512.
bool has_bfloat16_instructions();
bool has_amx_instructions();  // AMX tiles (bfloat16 and int8), as oneDNN uses them
// One line naming the paths taken, for logs and benchmark output: Highway's target, oneDNN's
// instruction set, bfloat16 native or emulated, whether large fused chains prefetch in software.
std::string cpu_kernel_paths();
// at::get_parallel_info(): the thread counts and the kernel paths, a line each.
inline std::string get_parallel_info() {
  return "ATen/Parallel:\n\tat::get_num_threads() : " + std::to_string(get_num_threads()) +
         "\n\tat::get_num_interop_threads() : " + std::to_string(get_num_interop_threads()) +
         "\nEmber: OpenMP intra-op parallelism, no inter-op pool\n\t" + cpu_kernel_paths() + "\n";
}
}  // namespace ember
