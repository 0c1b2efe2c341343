#!/usr/bin/env bash
# Installs dependencies, builds ember_bench (Release) and runs it; arguments go to ember_bench,
# e.g. scripts/bench.sh --threads 2 --filter 'add_' --json bench.json (see docs/benchmark.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
(
  cd "$root"
  scripts/install-deps.sh bench
  cmake --preset release -DEMBER_BUILD_BENCH=ON -DEMBER_SHARED=OFF >/dev/null
  cmake --build --preset release -j "$(nproc)" --target ember_bench
)
# Run from the caller's directory so relative --json paths land where expected.
exec "$root/build/release/bench/ember_bench" "$@"
