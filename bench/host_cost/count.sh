#!/usr/bin/env bash
# Instructions per call in libcucore for each hot call of host_cost.c, for one or two builds of the library
# (e.g. this tree and an older one): callgrind over the substitute driver, N and 3N calls, the difference
# over 2N. Needs valgrind. No GPU.
# Usage: bench/host_cost/count.sh BUILD_DIR [OTHER_BUILD_DIR]   (a CMake build dir: bin/cucore_host_cost, lib/)
set -euo pipefail
fake="$1/lib/libcucore_fake_cuda.so"   # the same substitute driver under every library
n=1000
per_call() {  # per_call BUILD CALL
    local totals=()
    for calls in $n $((3 * n)); do
        local out; out=$(mktemp)
        CUCORE_CUDA_DRIVER_PATH=$fake valgrind --tool=callgrind --callgrind-out-file="$out" \
            "$1/bin/cucore_host_cost" "$2" "$calls" >/dev/null 2>&1
        totals+=("$(callgrind_annotate --inclusive=no --threshold=100 "$out" | grep 'libcucore\.so' |
                    awk '{gsub(",", "", $1); s += $1} END {print s + 0}')")
        rm -f "$out"
    done
    echo $(((totals[1] - totals[0]) / (2 * n)))
}
printf "%-8s" call; for b in "$@"; do printf " %14s" "$(basename "$(dirname "$(realpath "$b")")")"; done; echo
for call in event record stream pool launch glmap; do
    printf "%-8s" "$call"
    for b in "$@"; do printf " %14s" "$(per_call "$b" "$call")"; done
    echo
done
