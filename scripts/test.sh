#!/usr/bin/env bash
# Installs dependencies, builds Ember three times (Release as a shared library, ASan+UBSan, and
# ThreadSanitizer for the tests labelled threads) and runs every test against the Release library
# on this CPU's kernel paths and against the ASan+UBSan library on other CPUs' paths; a user's
# project is built against the installed libraries and the Debian package.
# Prints the time each stage took.
set -euo pipefail
if [ $# -ne 0 ]; then
  echo "usage: scripts/test.sh   (no arguments: it runs every stage; ctest --preset release|asan runs a built tree again)" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
start=$SECONDS
stage() {
  local name=$1 t0=$SECONDS
  shift
  "$@"
  echo "[test.sh] $name: $((SECONDS - t0)) s (total $((SECONDS - start)) s)"
}
jobs=$(nproc)
# CI builds each tree once from a clean clone: a compiler cache would only take disk there.
if [ -n "${CI:-}" ]; then export CCACHE_DISABLE=1; fi
# The precompiled headers (0.2 to 0.75 GB each: the parity tests' and the benchmark's parse
# libtorch's headers) serve only the compiler. Each tree drops them once built, so the three trees
# fit on a small disk (CI once ran out of it); the next build of that tree makes them again.
drop_pch() { find "build/$1" -name 'cmake_pch.hxx.gch' -delete; }
stage "install dependencies" scripts/install-deps.sh test
# The Release and ASan trees build the shared library (what a package ships; each test links it
# instead of a copy: static, the ASan tests took 130-150 MB each, 6 GB in all); the TSan tree the
# static one. The Release and TSan libraries are installed and a user's project (tests/consumer)
# is built against each.
# The test programs (unit and parity) are built once, in the ASan tree, and run against both
# libraries (LD_LIBRARY_PATH comes before their RUNPATH): the ASan+UBSan runtime they carry checks
# their own code (the parity tests' is not instrumented: tests/CMakeLists.txt), and the library
# they load decides which build is tested. That halves the Release build. The Release tree keeps
# what it alone has: the fuzz run, the benchmark's op sweep, the examples.
# (The benchmark runs here only as the sweep's smoke check, nothing timed: its own code is compiled
# at -O1, bench/CMakeLists.txt.)
stage "configure release" cmake --preset release -DEMBER_BUILD_TESTS=ON -DEMBER_SHARED=ON \
  -DEMBER_UNIT_TESTS=OFF -DEMBER_PARITY_TESTS=OFF -DEMBER_BENCH_OPTIMIZATION=-O1 >/dev/null
stage "build release" cmake --build --preset release -j "$jobs"
drop_pch release
lib=$(readlink -f build/release/libember.so)
strip -o build/libember-stripped.so "$lib"
echo "[test.sh] $(basename "$lib"): $(du -k "$lib" | cut -f1) KiB, stripped $(du -k build/libember-stripped.so | cut -f1) KiB"
# consumer NAME PREFIX [cmake args]: builds and runs tests/consumer against the Ember under PREFIX
consumer() {
  local name=$1 prefix=$2
  shift 2
  rm -rf "build/consumer-$name"
  cmake -S tests/consumer -B "build/consumer-$name" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" "$@" >/dev/null
  cmake --build "build/consumer-$name" >/dev/null
  "build/consumer-$name/consumer"
}
install_tree() {  # install_tree BUILD_DIR PREFIX
  rm -rf "$2"
  cmake --install "$1" --prefix "$2" >/dev/null
}
# A libtorch program's own project (find_package(Torch), ${TORCH_LIBRARIES}, libtorch's header
# paths), unchanged: built against libtorch, then against the installed Ember, whose
# TorchConfig.cmake answers find_package(Torch) with Ember::torch_compat.
libtorch_program() {  # libtorch_program NAME [cmake args]
  local name=$1
  shift
  rm -rf "build/libtorch-program-$name"
  cmake -S tests/consumer/libtorch_program -B "build/libtorch-program-$name" -G Ninja "$@" >/dev/null
  cmake --build "build/libtorch-program-$name" >/dev/null
  "build/libtorch-program-$name/libtorch_program"
}
# How much of libtorch's public API Ember has, by group (docs/compat.md): a report, not a gate.
# Its probes also give the overload audit's listing, which the ASan tree then reads instead of
# probing again (~25 CPU-s); if the report fails, that tree makes its own.
overloaded="$PWD/build/overloaded_names.txt"
coverage_report() {
  rm -f "$overloaded"
  /usr/bin/python3 scripts/compat_coverage.py --write-overloaded "$overloaded" ||
    { rm -f "$overloaded"; echo "(the coverage report failed; it is not a gate)"; }
}
# the Debian package, unpacked (CI does not install it into the system it runs on)
package() {
  rm -rf build/package && mkdir -p build/package
  (cd build/package && cpack -G DEB --config ../release/CPackConfig.cmake >/dev/null)
  dpkg-deb -x build/package/libember-dev_*.deb build/package/root
  dpkg-deb -f build/package/libember-dev_*.deb Package Version Depends
}
# The stages up to the ASan build run one process each (a compile, a program, a script): those
# that need nothing the others make run beside the rest on the second core, their output printed
# when they end (in sequence these stages took 65 s; in two lanes 34 and 37 s).
side_stages() {
  stage "libtorch program against libtorch" libtorch_program libtorch
  stage "package libember-dev" package
  stage "consumer of the unpacked package" consumer package "$PWD/build/package/root/usr"
}
side_stages > build/side-stages.log 2>&1 &
side=$!
stage "install the shared library" install_tree build/release "$PWD/build/install-shared"
stage "consumer of the installed shared library" consumer shared "$PWD/build/install-shared"
stage "libtorch program against Ember, unchanged" libtorch_program ember \
  -DTorch_DIR="$PWD/build/install-shared/lib/cmake/Ember/torch"
stage "libtorch API coverage report" coverage_report
side_status=0
wait "$side" || side_status=$?
cat build/side-stages.log
if [ "$side_status" -ne 0 ]; then exit "$side_status"; fi
[ -s "$overloaded" ] || overloaded=""
stage "configure asan" cmake --preset asan -DEMBER_OVERLOADED_NAMES="$overloaded" >/dev/null
stage "build asan" cmake --build --preset asan -j "$jobs"
drop_pch asan
release_lib="$PWD/build/release"
# The test stages run two test programs at a time (-j2), each with two OpenMP threads, on two
# cores. libgomp's idle workers spin by default, so each program's spinning workers took the core
# the other program's main thread needed (a quarter of the ASan stage's CPU time went to
# libgomp's spin loop). Passive waiting runs the same code, the same threads and the same parallel
# regions; their workers sleep instead: the ASan stage took 191 s instead of 250 s on Zen 3.
export OMP_WAIT_POLICY=passive
# The tests that compare with real PyTorch run Debian's python on the same scripts and inputs in
# both test stages below; the second takes the files the first wrote (keyed by the script, its
# arguments and its input files: tests/unit/temp_dir.h) instead of running PyTorch again.
export EMBER_TEST_PYTHON_CACHE="$PWD/build/python-cache"
rm -rf "$EMBER_TEST_PYTHON_CACHE"
# (ASan's checks of the stack and globals stay on for the programs' own code; the costly extras,
# leak detection, the quarantine of freed memory and the poisoning of the heap's redzones, are left
# to the sanitizer stage, which runs the same programs against the instrumented library. Every
# allocation, libtorch's too, goes through ASan's allocator, which maps blocks above 128 KiB
# afresh each time: the poisoning of their shadow was a tenth of a large parity test's time.)
against_release() {
  LD_LIBRARY_PATH="$release_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    ASAN_OPTIONS=detect_leaks=0:malloc_context_size=0:quarantine_size_mb=0:thread_local_quarantine_size_kb=0:poison_heap=0 \
    ctest --preset asan "$@"
}
echo "[test.sh] against the Release library the test programs load" \
  "$(LD_LIBRARY_PATH="$release_lib" ldd build/asan/tests/parity_tests | grep -o 'libember[^ ]* => [^ ]*')"
# The Release tree's own tests (the fuzz run, label fuzz, keeps one core for a minute) run beside
# the test programs; their output follows.
release_tests() {
  local status=0
  ctest --preset release > build/release-tests.log 2>&1 &
  local pid=$!
  against_release -j "$jobs" || status=$?
  wait "$pid" || status=1
  cat build/release-tests.log
  return "$status"
}
stage "test release" release_tests
# The ASan+UBSan run also takes the paths this CPU would not: Ember's Highway kernels on AVX2
# (the sanitizer library has no other), oneDNN without bfloat16 or AMX instructions (its emulated
# bfloat16 kernels), and every fresh block filled with NaN, so a kernel that reads memory it never
# wrote fails here rather than on one CPU kind only. The Release run above keeps this CPU's own
# paths (AVX-512, native bfloat16 and AMX where present). The test cpu_capability_avx2 (unit tests
# run again under EMBER_CPU_CAPABILITY=avx2) would repeat here what the unit tests already ran.
stage "test asan, other CPUs' paths" env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI EMBER_CPU_CAPABILITY=avx2 EMBER_FILL_UNINITIALIZED_MEMORY=1 \
  ctest --preset asan -j "$jobs" -E '^cpu_capability_avx2$'
rm -rf "$EMBER_TEST_PYTHON_CACHE"  # (0.5 GB: the traced models of jit_parity)
# ThreadSanitizer on the tests labelled threads (concurrent backward, the loader's workers, one
# module from several threads, the allocator across threads). OpenMP runs one thread there:
# libgomp is not instrumented, so TSan cannot see its fork and join and reports their hand-offs;
# the tests of parallel regions themselves (AdaptiveThreads.*) are left to the other builds.
stage "configure tsan" cmake --preset tsan >/dev/null
stage "build tsan" cmake --build --preset tsan -j "$jobs"
drop_pch tsan
stage "test tsan" ctest --preset tsan -j "$jobs"
stage "install the static library" install_tree build/tsan "$PWD/build/install-static"
# built with the TSan tree's flags, and run as its tests are (one OpenMP thread: see above)
static_consumer() {
  OMP_NUM_THREADS=1 TSAN_OPTIONS=halt_on_error=1 consumer static "$PWD/build/install-static" \
    -DCMAKE_CXX_FLAGS="-fsanitize=thread" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread"
}
stage "consumer of the installed static library" static_consumer
echo "[test.sh] disk used by the build trees: $(du -sh build | cut -f1)"
