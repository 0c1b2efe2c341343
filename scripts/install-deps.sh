#!/usr/bin/env bash
# Installs what one of Ember's jobs needs from Debian 12's archive (as root, or through sudo):
#   scripts/install-deps.sh main    build the library and the examples, train on Fashion-MNIST
#   scripts/install-deps.sh bench   main, plus libtorch and GoogleTest for ember_bench
#   scripts/install-deps.sh test    bench, plus what the tests alone use
# Without root or sudo, or without the archive, it names the missing packages and stops before
# installing any of them.
set -euo pipefail
usage() {
  echo "usage: $0 main|bench|test" >&2
  exit 2
}
[ $# -eq 1 ] || usage
main=(
  cmake ninja-build g++
  libdnnl-dev            # oneDNN: matmul and convolution primitives
  ocl-icd-opencl-dev     # only a Recommends of libdnnl-dev, but its CMake config requires OpenCL
  libhwy-dev             # Google Highway: portable SIMD with run-time target dispatch
  libopenblas-openmp-dev # LAPACK for torch::linalg (the OpenMP build: libopenblas-dev would pull the pthread one and make it libtorch's BLAS too)
  zlib1g-dev dataset-fashion-mnist  # data: gzip-compressed IDX files, and Fashion-MNIST itself
)
bench=(
  libtorch-dev           # PyTorch 1.13.1 C++ API: the reference in benchmarks and parity tests only
  libopenblas0-openmp    # the BLAS libtorch calls for matmul (the default reference BLAS is unoptimized)
  libgtest-dev libgmock-dev  # GoogleTest (the bench cases share the parity tests' comparison)
  python3-torch python3-torchvision  # jit: models exported with torch.jit by the cases and tests
)
test=(
  # distributed: Gloo's collectives and TCP transport (the library ember_distributed, built when
  # CMake finds Gloo; the main job's example does not link it)
  libgloo-dev
  # serialize: checkpoints written by Python torch.save in tests (python3-torch, above); libFuzzer
  # targets of the readers
  clang-14 libclang-rt-14-dev
  chromium               # profiler: its HTML report is rendered headless (about 15 s to install)
)
job=$1
case "$job" in
  main) packages=("${main[@]}") ;;
  bench) packages=("${main[@]}" "${bench[@]}") ;;
  test) packages=("${main[@]}" "${bench[@]}" "${test[@]}") ;;
  *) usage ;;
esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

stop() {
  echo "install-deps: $1" >&2
  echo "install-deps: the $job job needs these Debian 12 packages, not installed yet:" >&2
  echo "  apt-get install --no-install-recommends ${missing[*]}" >&2
  exit 1
}
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null && sudo -n true 2>/dev/null || stop "needs root or password-less sudo to install packages"
  SUDO=(sudo -n)
fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq || stop "cannot reach Debian's package archive (apt-get update failed)"
# download everything first, so a lost connection leaves nothing half-installed
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends --download-only "${missing[@]}" >/dev/null ||
  stop "cannot download the packages from Debian's archive"
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
