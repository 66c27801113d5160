#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz (built with the 'fuzz' preset: clang,
# ASan + UBSan), each from a copy of its corpus in tests/fuzz/corpus/<target>/,
# so nothing is ever written into the repository.
#
#   scripts/fuzz.sh --ci                 every target, a fixed seed and a fixed number of
#                                        runs (deterministic: same inputs on every machine;
#                                        about 10 s each on 2 cores), as CI does
#   scripts/fuzz.sh TARGET [SECONDS]     one target (or 'all') for SECONDS (default 300);
#                                        its corpus grows in build/fuzz/corpus/TARGET, crashes
#                                        land in build/fuzz/artifacts/
#   scripts/fuzz.sh --list
# Every run is bounded in time (-max_total_time, -timeout) and memory (-rss_limit_mb,
# -malloc_limit_mb). Extra libFuzzer flags: FUZZ_FLAGS="...".
set -euo pipefail
cd "$(dirname "$0")/.."

# target:runs for --ci (calibrated to ~10 s each on one core of the CI machine).
ci_runs=(ipc_descriptor:150000 dlpack:200000 program_cache:2500 options:25000 api_sequence:25000)
targets=(); for t in "${ci_runs[@]}"; do targets+=("${t%%:*}"); done
bin=build/fuzz/bin
limits=(-rss_limit_mb=1536 -malloc_limit_mb=1024 -timeout=20 -max_len=4096)

build() {
    if [[ "${FUZZ_NO_BUILD:-0}" != 1 ]]; then
        cmake --preset fuzz >/dev/null
        cmake --build --preset fuzz -j "$(nproc)" --target cucore_fuzzers
    fi
}

case "${1:-}" in
--list)
    printf '%s\n' "${targets[@]}"
    ;;
--ci)
    build
    work=$(mktemp -d "${TMPDIR:-/tmp}/cucore-fuzz-ci.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    for entry in "${ci_runs[@]}"; do
        t=${entry%%:*} runs=${entry##*:}
        mkdir -p "$work/$t/corpus" "$work/$t/tmp"
        cp tests/fuzz/corpus/"$t"/* "$work/$t/corpus/" 2>/dev/null || true
        echo "fuzz: $t: $runs runs, seed 1, from $(ls "$work/$t/corpus" | wc -l) corpus inputs"
        start=$(date +%s)
        if ! TMPDIR="$work/$t/tmp" "$bin/${t}_fuzzer" -seed=1 -runs="$runs" -max_total_time=120 "${limits[@]}" \
            -artifact_prefix="$work/$t/" -print_final_stats=1 ${FUZZ_FLAGS:-} "$work/$t/corpus" \
            >"$work/$t/log" 2>&1; then
            tail -60 "$work/$t/log"
            for crash in "$work/$t"/crash-* "$work/$t"/leak-* "$work/$t"/timeout-* "$work/$t"/oom-*; do
                [[ -e "$crash" ]] && echo "fuzz: $t: failing input (base64): $(base64 -w0 "$crash")"
            done
            echo "fuzz: $t FAILED (reproduce: save the input above and run $bin/${t}_fuzzer FILE)" >&2
            exit 1
        fi
        echo "fuzz: $t: ok, $(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/$t/log" | grep -o '[0-9]*$') inputs in $(($(date +%s) - start))s"
    done
    ;;
"")
    sed -n '2,18p' "$0"
    exit 2
    ;;
*)
    target=$1 seconds=${2:-300}
    [[ $target == all ]] && run=("${targets[@]}") || run=("$target")
    build
    mkdir -p build/fuzz/artifacts
    for t in "${run[@]}"; do
        [[ -x "$bin/${t}_fuzzer" ]] || { echo "fuzz: no target '$t' (see --list)" >&2; exit 2; }
        corpus=build/fuzz/corpus/$t
        mkdir -p "$corpus" build/fuzz/tmp/"$t"
        cp -n tests/fuzz/corpus/"$t"/* "$corpus/" 2>/dev/null || true
        echo "fuzz: $t for ${seconds}s (corpus $corpus, crashes in build/fuzz/artifacts/)"
        TMPDIR=build/fuzz/tmp/$t "$bin/${t}_fuzzer" -max_total_time="$seconds" "${limits[@]}" \
            -artifact_prefix=build/fuzz/artifacts/"$t"- -print_final_stats=1 ${FUZZ_FLAGS:-} "$corpus"
    done
    ;;
esac
