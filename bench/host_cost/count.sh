#!/usr/bin/env bash
# Instructions per call in libcucore for each hot call of host_cost.c, for one or two builds of the library
# (e.g. this tree and an older one): callgrind over the substitute driver, N and 3N calls, the difference
# over 2N. Needs valgrind. No GPU.
# Usage: bench/host_cost/count.sh BUILD_DIR [OTHER_BUILD_DIR]
#   BUILD_DIR: this tree's CMake build (bin/cucore_host_cost, lib/libcucore_fake_cuda.so, lib/libcucore.so.0);
#   OTHER_BUILD_DIR: any build of libcucore (lib/libcucore.so.0), e.g. an older commit's: the same program and
#   the same substitute driver run over it (the calls it makes are in every version of the C ABI since 0.1, but
#   for the graph launch, issue 15's: a build without it reads "n/a" on that row; the program binds lazily).
set -euo pipefail
builds=()
for b in "$@"; do builds+=("$(realpath "$b")"); done
set -- "${builds[@]}"
program="$1/bin/cucore_host_cost"
fake="$1/lib/libcucore_fake_cuda.so"
n=1000
per_call() {  # per_call BUILD CALL; "n/a" where that build cannot make the call (e.g. graphs before 15)
    local totals=()
    for calls in $n $((3 * n)); do
        local out; out=$(mktemp)
        # LD_LIBRARY_PATH picks the build's libcucore over the program's RUNPATH.
        if ! LD_LIBRARY_PATH="$1/lib" CUCORE_CUDA_DRIVER_PATH=$fake valgrind --tool=callgrind \
            --callgrind-out-file="$out" "$program" "$2" "$calls" >/dev/null 2>&1; then
            rm -f "$out"
            echo n/a
            return
        fi
        totals+=("$(callgrind_annotate --inclusive=no --threshold=100 "$out" | grep 'libcucore\.so' |
                    awk '{gsub(",", "", $1); s += $1} END {print s + 0}')")
        rm -f "$out"
    done
    echo $(((totals[1] - totals[0]) / (2 * n)))
}
for b in "$@"; do echo "$b: $(LD_LIBRARY_PATH="$b/lib" ldd "$program" | grep 'libcucore\.so' | grep -o '=> [^ ]*' | cut -c4-)"; done
printf "%-8s" call; for i in $(seq $#); do printf " %14s" "build $i"; done; echo
for call in event record stream pool launch glmap texture graph; do
    printf "%-8s" "$call"
    for b in "$@"; do printf " %14s" "$(per_call "$b" "$call")"; done
    echo
done
