#!/usr/bin/env bash
# CTest's `rust_dependent`: a crate that depends on `cucore` (this directory) is built into a
# temporary target directory and started WITHOUT LD_LIBRARY_PATH, with libcucore found
#   1. in a directory given by CUCORE_LIB_DIR (a build tree's lib/): `cargo run` (the library's
#      files linked into cucore-sys's OUT_DIR, on cargo's library path), and the binary
#      `standalone` run outside cargo (its RUNPATH, from DEP_CUCORE_LIB_DIR in build.rs);
#   2. installed (cmake --install into a temporary prefix), through its cucore.pc and the
#      pkg-config command, from a copy of the crates that has no build tree beside it (as a git
#      dependency would be): the same two runs. Skipped, saying so, without pkg-config.
# Each run must print the library's version and exit 0; no GPU is needed.
# Usage: check.sh LIB_DIR CMAKE_BUILD_DIR [CARGO]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
libdir=$1
build=$2
cargo=${3:-cargo}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset LD_LIBRARY_PATH CUCORE_LIB_DIR
export CARGO_TARGET_DIR="$work/target"

# run_checks LABEL MANIFEST [VAR=VALUE...]: cargo run, then `standalone` outside cargo.
run_checks() {
    local label=$1 manifest=$2 out
    shift 2
    echo "== $label: cargo run (no LD_LIBRARY_PATH)"
    out=$(env "$@" "$cargo" run --offline --locked --quiet --manifest-path "$manifest" --bin cucore-dependent)
    echo "$out"
    grep -Eq '^cucore-dependent: libcucore [0-9]+\.[0-9]+\.[0-9]+ ' <<<"$out" ||
        { echo "FAILED: no version printed"; return 1; }
    echo "== $label: the binary 'standalone' outside cargo (no LD_LIBRARY_PATH)"
    env "$@" "$cargo" build --offline --locked --quiet --manifest-path "$manifest" --bin standalone
    out=$("$CARGO_TARGET_DIR/debug/standalone")
    echo "$out"
    grep -Eq '^standalone: libcucore [0-9]+\.[0-9]+\.[0-9]+ ' <<<"$out" ||
        { echo "FAILED: no version printed"; return 1; }
    # The control: the binary without a RUNPATH finds no library outside cargo (unless the
    # system's loader knows one), so the cargo run above really used cargo's library path.
    if ! /sbin/ldconfig -p 2>/dev/null | grep -q 'libcucore\.so\.'; then
        if out=$("$CARGO_TARGET_DIR/debug/cucore-dependent" 2>&1); then
            echo "FAILED: cucore-dependent (no RUNPATH) ran outside cargo: the check proves nothing"
            return 1
        fi
        echo "(as expected, cucore-dependent alone, with no RUNPATH: ${out%%$'\n'*})"
    fi
}

run_checks "CUCORE_LIB_DIR=$libdir" "$here/Cargo.toml" CUCORE_LIB_DIR="$libdir"

if ! command -v pkg-config >/dev/null; then
    echo "== installed library through pkg-config: skipped (pkg-config not installed)"
    exit 0
fi
cmake --install "$build" --prefix "$work/prefix" >/dev/null
pcdir=$(dirname "$(find "$work/prefix" -name cucore.pc | head -1)")
# The crates as a git dependency sees them: no build/default/lib three levels up.
mkdir -p "$work/src/bindings/rust/examples"
cp -R "$here/../../cucore-sys" "$here/../../cucore" "$work/src/bindings/rust/"
cp -R "$here" "$work/src/bindings/rust/examples/dependent"
rm -rf "$work/src/bindings/rust/examples/dependent/target"
rm -rf "$CARGO_TARGET_DIR/debug/standalone" "$CARGO_TARGET_DIR/debug/cucore-dependent"
run_checks "pkg-config (PKG_CONFIG_PATH=$pcdir)" "$work/src/bindings/rust/examples/dependent/Cargo.toml" \
    PKG_CONFIG_PATH="$pcdir"
# The binary's RUNPATH is the install's, not the build tree's.
if command -v readelf >/dev/null; then
    runpath=$(readelf -d "$CARGO_TARGET_DIR/debug/standalone" | grep -E 'RUNPATH|RPATH' || true)
    echo "standalone: $runpath"
    grep -q "$work/prefix" <<<"$runpath" || { echo "FAILED: RUNPATH is not the install's lib directory"; exit 1; }
fi
echo "rust_dependent passed"
