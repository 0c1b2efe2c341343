#!/usr/bin/env bash
# The main job: installs dependencies (Fashion-MNIST comes from Debian's dataset-fashion-mnist),
# builds Ember and trains the example CNN; extra arguments go to the example (see --help).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh main
cmake --preset release -DEMBER_BUILD_TESTS=OFF -DEMBER_BUILD_BENCH=OFF -DEMBER_SHARED=OFF >/dev/null
cmake --build --preset release -j "$(nproc)" --target fashion_mnist
./build/release/examples/fashion_mnist --output build/fashion_mnist.safetensors "$@"
