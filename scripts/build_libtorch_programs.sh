#!/usr/bin/env bash
# Builds libtorch programs that a developer has fetched (each a directory with its own
# CMakeLists.txt using find_package(Torch)) unchanged against an installed Ember, through the
# TorchConfig.cmake that Ember installs (docs/compat.md). Fetches nothing; prints per program
# whether it configured and built, and where the binary is.
#   scripts/build_libtorch_programs.sh [--prefix EMBER_PREFIX] [-DVAR=VALUE...] DIR...
# EMBER_PREFIX defaults to build/install-shared (scripts/test.sh installs there); -D arguments go
# to every configure (pytorch/examples' mnist and dcgan want -DDOWNLOAD_MNIST=OFF offline).
set -uo pipefail
cd "$(dirname "$0")/.."
prefix=$PWD/build/install-shared
if [ "${1:-}" = "--prefix" ]; then
  prefix=$(readlink -f "$2")
  shift 2
fi
defines=()
dirs=()
for arg in "$@"; do
  case $arg in
    -D*) defines+=("$arg") ;;
    *) dirs+=("$arg") ;;
  esac
done
if [ ${#dirs[@]} -eq 0 ]; then
  echo "usage: scripts/build_libtorch_programs.sh [--prefix EMBER_PREFIX] [-DVAR=VALUE...] DIR..." >&2
  exit 2
fi
torch_dir=$prefix/lib/cmake/Ember/torch
[ -f "$torch_dir/TorchConfig.cmake" ] || { echo "no Ember installed under $prefix (cmake --install build/release --prefix $prefix)" >&2; exit 2; }
status=0
for dir in "${dirs[@]}"; do
  src=$(readlink -f "$dir")
  out=$PWD/build/libtorch-programs/$(basename "$src")
  rm -rf "$out"
  mkdir -p "$(dirname "$out")"
  if ! cmake -S "$src" -B "$out" -G Ninja -DTorch_DIR="$torch_dir" "${defines[@]}" >"$out.configure.log" 2>&1; then
    echo "$(basename "$src"): configure FAILED (see $out.configure.log)"
    status=1
  elif ! cmake --build "$out" >"$out.build.log" 2>&1; then
    echo "$(basename "$src"): build FAILED, $(grep -c 'error:' "$out.build.log") errors (see $out.build.log)"
    status=1
  else
    echo "$(basename "$src"): built in $out"
  fi
done
exit $status
