// Intra-op thread count (libtorch's torch::set_num_threads / get_num_threads) and the CPU kernel
// paths in use.
#pragma once
#include <string>

#include "ember/error.h"

namespace ember {
int get_num_threads();
void set_num_threads(int n);
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
}  // namespace ember
