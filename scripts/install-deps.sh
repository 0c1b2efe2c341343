#!/usr/bin/env bash
# Installs Ember's build and test dependencies from Debian 12's archive (run as root).
set -euo pipefail
packages=(
  cmake ninja-build g++ git
  libdnnl-dev            # oneDNN: matmul and convolution primitives
  ocl-icd-opencl-dev     # only a Recommends of libdnnl-dev, but its CMake config requires OpenCL
  libhwy-dev             # Google Highway: portable SIMD with run-time target dispatch
  libgtest-dev libgmock-dev  # GoogleTest
  libtorch-dev           # PyTorch 1.13.1 C++ API: reference for parity tests and benchmarks only
  libopenblas0-openmp    # the BLAS libtorch calls for matmul (the default reference BLAS is unoptimized)
  zlib1g-dev dataset-fashion-mnist  # data: gzip-compressed IDX files, and Fashion-MNIST itself
  # serialize: checkpoints written by Python torch.save in tests; libFuzzer targets of the readers
  python3-torch clang-14 libclang-rt-14-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
