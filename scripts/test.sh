#!/usr/bin/env bash
# Installs dependencies, builds Ember twice (Release, and ASan+UBSan) and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)
cmake --preset release -DEMBER_BUILD_TESTS=ON >/dev/null
cmake --build --preset release -j "$jobs"
# serialize: the release run includes fuzz_readers (label fuzz), a short libFuzzer run of the file readers
ctest --preset release -j "$jobs"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset asan -j "$jobs"
