#!/usr/bin/env bash
# Installs dependencies, builds Ember twice (Release, and ASan+UBSan) and runs every test; the
# parity tests run a second time on the kernel paths of CPUs other than this one. Prints the time
# each stage took.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
stage() {
  local name=$1 t0=$SECONDS
  shift
  "$@"
  echo "[test.sh] $name: $((SECONDS - t0)) s (total $((SECONDS - start)) s)"
}
jobs=$(nproc)
stage "install dependencies" scripts/install-deps.sh test
stage "configure release" cmake --preset release -DEMBER_BUILD_TESTS=ON >/dev/null
stage "build release" cmake --build --preset release -j "$jobs"
# the release run includes fuzz_readers (label fuzz), a short libFuzzer run of the file readers
stage "test release" ctest --preset release -j "$jobs"
# Paths this CPU would not take: oneDNN without bfloat16 or AMX instructions (its emulated
# bfloat16 kernels), Ember's Highway kernels on AVX2, and every fresh block filled with NaN so a
# kernel that reads memory it never wrote fails here rather than on one CPU kind only.
stage "test release, other CPUs' paths" env ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI EMBER_CPU_CAPABILITY=avx2 \
  EMBER_FILL_UNINITIALIZED_MEMORY=1 ctest --preset release -L "unit|parity" -j "$jobs"
stage "configure asan" cmake --preset asan >/dev/null
stage "build asan" cmake --build --preset asan -j "$jobs"
stage "test asan" env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset asan -j "$jobs"
