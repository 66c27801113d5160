#!/usr/bin/env bash
# CTest's `rust`: `cargo test` (arguments passed on), then one line that totals what its test
# binaries reported: passed, failed, and how many of the passed tests skipped. libtest counts a
# skipping test as passed; each binary prints why its tests skipped after its own result
# ("skipped: N of the tests above ...", cucore/tests/common/skips.rs), and this line sums them,
# as pytest's "N passed, M skipped" and GoogleTest's "[  SKIPPED ] N tests" do.
# Usage: cargo_test.sh CARGO [cargo test arguments...]
set -uo pipefail
cargo=$1
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$cargo" test "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
passed=$(grep -E '^test result:' "$log" | grep -Eo '[0-9]+ passed' | awk '{s+=$1} END {print s+0}')
failed=$(grep -E '^test result:' "$log" | grep -Eo '[0-9]+ failed' | awk '{s+=$1} END {print s+0}')
ignored=$(grep -E '^test result:' "$log" | grep -Eo '[0-9]+ ignored' | awk '{s+=$1} END {print s+0}')
skipped=$(grep -Eo '^skipped: [0-9]+ of the tests' "$log" | awk '{s+=$2} END {print s+0}')
echo
echo "rust: $((passed - skipped)) passed, $skipped skipped (reasons above, after each binary's result), $ignored ignored, $failed failed"
exit "$rc"
