#!/usr/bin/env bash
# Installs what building and testing libcucore needs on a Debian machine that
# has the CUDA toolkit. As root it uses apt-get (and pip for pytest when the
# python3 on PATH is not Debian's); otherwise it prints the exact command.
# Usage: scripts/setup.sh [--minimal]   (--minimal: only what the demo needs)
set -euo pipefail

minimal=0
[[ "${1:-}" == "--minimal" ]] && minimal=1

missing_packages=()
need() {  # need COMMAND-OR-CHECK PACKAGE
    if ! eval "$1" >/dev/null 2>&1; then missing_packages+=("$2"); fi
}
need "command -v cmake" cmake
need "command -v ninja" ninja-build
need "command -v g++" g++
need "command -v python3" python3
if [[ $minimal == 0 ]]; then
    need "test -e /usr/include/gtest/gtest.h" libgtest-dev
    need "test -e /usr/include/benchmark/benchmark.h" libbenchmark-dev
    need "command -v cargo" cargo
    need "command -v nm" binutils
    need "command -v pkg-config" pkgconf
    # clang builds the ThreadSanitizer unit tests and the libFuzzer targets (tests/fuzz);
    # libFuzzer's runtime (libclang_rt.fuzzer) is in libclang-rt-<version>-dev on Debian
    # bookworm, which clang only recommends.
    need "command -v clang && command -v clang++" clang
    if command -v clang >/dev/null 2>&1; then
        need "test -e \"\$(clang --print-runtime-dir)/libclang_rt.fuzzer-$(uname -m).a\"" \
            "libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev"
    else
        missing_packages+=(libclang-rt-dev)
    fi
fi
# examples/gl_interop (SDL2 + GLEW), part of the demo; the build skips it without them.
need "test -e /usr/include/SDL2/SDL.h" libsdl2-dev
need "test -e /usr/include/GL/glew.h" libglew-dev

if ((${#missing_packages[@]})); then
    if [[ $(id -u) == 0 ]]; then
        echo "setup: installing ${missing_packages[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing_packages[@]}" >/dev/null
    else
        echo "setup: missing packages; run: sudo apt-get install -y ${missing_packages[*]}" >&2
        exit 1
    fi
fi

if [[ $minimal == 0 ]] && ! python3 -m pytest --version >/dev/null 2>&1; then
    echo "setup: installing pytest for $(command -v python3)"
    if ! python3 -m pip install --quiet pytest 2>/dev/null; then
        if [[ $(id -u) == 0 ]]; then
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pytest >/dev/null
        else
            echo "setup: run: python3 -m pip install pytest   (or: sudo apt-get install python3-pytest)" >&2
            exit 1
        fi
    fi
fi

# scripts/gen_bindings.py (the generated FFI layers and their CI staleness check) reads the C headers
# with libclang's Python module; the wheel carries its own libclang, so results do not depend on the system.
if [[ $minimal == 0 ]] && ! python3 -c "import clang.cindex" >/dev/null 2>&1; then
    echo "setup: installing libclang==18.1.1 (Python) for $(command -v python3)"
    if ! python3 -m pip install --quiet libclang==18.1.1; then
        echo "setup: run: python3 -m pip install libclang==18.1.1" >&2
        exit 1
    fi
fi

# ---- API reference (scripts/docs.sh, which scripts/test.sh runs): Doxygen from apt, Sphinx from pip. ----
if [[ $minimal == 0 ]]; then
    if ! command -v doxygen >/dev/null 2>&1; then
        if [[ $(id -u) == 0 ]]; then
            echo "setup: installing doxygen"
            apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq doxygen >/dev/null
        else
            echo "setup: run: sudo apt-get install -y doxygen" >&2
            exit 1
        fi
    fi
    if ! python3 -c "import sphinx" >/dev/null 2>&1; then
        echo "setup: installing sphinx for $(command -v python3)"
        python3 -m pip install --quiet sphinx || { echo "setup: run: python3 -m pip install sphinx" >&2; exit 1; }
    fi
fi
# ---- end of the API reference's block ----

# The CUDA toolkit's headers are needed to build (never its libraries).
cuda_h=""
for dir in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda /usr; do
    [[ -n "$dir" && -e "$dir/include/cuda.h" ]] && { cuda_h="$dir/include/cuda.h"; break; }
done
if [[ -z "$cuda_h" ]]; then
    echo "setup: cuda.h not found: install the CUDA toolkit (or set CUDA_HOME)." >&2
    exit 1
fi
echo "setup: ready (cuda.h: $cuda_h)"
