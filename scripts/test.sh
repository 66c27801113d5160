#!/usr/bin/env bash
# Builds libcucore and runs every test: unit tests (also under AddressSanitizer
# and UndefinedBehaviorSanitizer, and under ThreadSanitizer built with clang),
# the libFuzzer targets briefly over their corpus (tests/fuzz), ABI and binding checks, the Python and Rust
# bindings' tests, the examples, the API reference (scripts/docs.sh, warning-free), and the GPU
# tests, which skip with the reason printed when no GPU is present. This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
jobs=$(nproc)

echo "== build (RelWithDebInfo) =="
cmake --preset default >/dev/null
cmake --build --preset default -j "$jobs"
echo "== tests =="
ctest --preset default -j "$jobs"
# CTest only says "Skipped": show why the GPU suites skipped, when they did.
gpu_log=$(build/default/bin/cucore_gpu_tests 2>&1 || true)
if grep -q "SKIPPED" <<<"$gpu_log"; then
    echo "GPU tests skipped: $(grep -A1 -m1 ': Skipped' <<<"$gpu_log" | tail -1)"
fi

echo "== API reference (scripts/docs.sh: Doxygen, Sphinx, rustdoc; any warning fails) =="
scripts/docs.sh

echo "== unit tests under ASan + UBSan =="
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs" --target cucore_unit_tests cucore_loader_tests \
    standin_cuda_too_old standin_cuda_partial cucore
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset asan -L unit -j "$jobs"

echo "== unit tests under ThreadSanitizer (clang) =="
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j "$jobs" --target cucore_unit_tests cucore_loader_tests \
    standin_cuda_too_old standin_cuda_partial cucore
# halt_on_error: the first race fails the test. No suppressions: none is needed; one
# would be for third-party or driver-stub internals only, with the reason beside it.
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --preset tsan -L unit -j "$jobs"

echo "== fuzz targets (libFuzzer, clang, ASan + UBSan): a fixed seed and run count each, from a copy of tests/fuzz/corpus =="
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$jobs" --target cucore_fuzzers
FUZZ_NO_BUILD=1 scripts/fuzz.sh --ci
