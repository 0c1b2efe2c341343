#!/usr/bin/env bash
# Installs dependencies, builds Ember and runs the main example.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release -DEMBER_BUILD_TESTS=OFF >/dev/null
cmake --build --preset release -j "$(nproc)" --target tensor_basics
./build/release/examples/tensor_basics
