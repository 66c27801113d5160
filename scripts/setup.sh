#!/usr/bin/env bash
# Installs what building and testing libcucore needs on a Debian machine that has the CUDA toolkit, after
# printing what it will install and why:
#   - missing Debian packages, with apt-get (as root; otherwise it prints the command and stops);
#   - the project's Python tools (scripts/python-requirements.txt) into the project's own virtual
#     environment build/venv, never into another Python, and the wheels of the binding's build backend into
#     build/wheelhouse (offline installs of bindings/python). CTest's Python tests run with build/venv.
# Usage: scripts/setup.sh [--minimal] [--no-install]
#   --minimal     only what the demo needs (no test tools, no venv)
#   --no-install  install nothing: print the commands that would run, and stop with an error if something
#                 required is missing
set -euo pipefail
cd "$(dirname "$0")/.."

minimal=0 install=1
for arg in "$@"; do
    case $arg in
        --minimal) minimal=1 ;;
        --no-install) install=0 ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "setup: unknown argument $arg (usage: scripts/setup.sh [--minimal] [--no-install])" >&2; exit 2 ;;
    esac
done

venv=build/venv
requirements=scripts/python-requirements.txt
wheelhouse=build/wheelhouse

# ---- Debian packages ------------------------------------------------------------------------------------
required=() optional=() reasons=()
need() {  # need CHECK PACKAGE WHY [optional]
    if ! eval "$1" >/dev/null 2>&1; then
        if [[ ${4:-} == optional ]]; then optional+=("$2"); else required+=("$2"); fi
        reasons+=("$2: $3${4:+ (optional)}")
    fi
}
need "command -v cmake" cmake "configures the build"
need "command -v ninja" ninja-build "runs the build (the CMake presets use Ninja)"
need "command -v g++" g++ "compiles libcucore (C++17)"
if [[ $minimal == 0 ]]; then
    need "command -v python3" python3 "the Python binding, its tests and scripts/gen_bindings.py"
    if [[ ! -x $venv/bin/python ]]; then
        need "python3 -c 'import ensurepip, venv'" python3-venv "creates the project's virtual environment ($venv)"
    fi
    need "test -e /usr/include/gtest/gtest.h" libgtest-dev "the C/C++ unit, GPU and GL tests (GoogleTest)"
    need "test -e /usr/include/benchmark/benchmark.h" libbenchmark-dev "the benchmarks (Google Benchmark)"
    need "command -v cargo" cargo "the Rust binding and its tests"
    need "command -v nm" binutils "checks the library's exported symbols (CTest: abi_exports)"
    need "command -v pkg-config" pkgconf "checks the installed pkg-config file"
    need "command -v doxygen" doxygen "the C/C++ API reference (scripts/docs.sh, which CI runs)"
    # clang builds the ThreadSanitizer unit tests and the libFuzzer targets (tests/fuzz); libFuzzer's
    # runtime (libclang_rt.fuzzer) is in libclang-rt-<version>-dev on Debian bookworm, which clang only
    # recommends.
    need "command -v clang && command -v clang++" clang "builds the ThreadSanitizer tests and the fuzzers"
    if command -v clang >/dev/null 2>&1; then
        need "test -e \"\$(clang --print-runtime-dir)/libclang_rt.fuzzer-$(uname -m).a\"" \
            "libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev" "libFuzzer's runtime (the fuzz targets)"
    else
        required+=(libclang-rt-dev)
        reasons+=("libclang-rt-dev: libFuzzer's runtime (the fuzz targets)")
    fi
fi
# examples/gl_interop (SDL2 + GLEW), part of the demo; the build skips it without them.
need "test -e /usr/include/SDL2/SDL.h" libsdl2-dev "the OpenGL interop demo (examples/gl_interop)" optional
need "test -e /usr/include/GL/glew.h" libglew-dev "the OpenGL interop demo (examples/gl_interop)" optional

missing=("${required[@]}" "${optional[@]}")
stop=""
if ((${#missing[@]})); then
    echo "setup: Debian packages to install, and why:"
    printf '  %s\n' "${reasons[@]}"
    apt_cmd=(apt-get install -y -qq "${missing[@]}")
    if [[ $install == 0 ]]; then
        echo "setup: --no-install; the commands would be: apt-get update && ${apt_cmd[*]}"
        ((${#required[@]})) && stop="required Debian packages are missing: ${required[*]}"
    elif [[ $(id -u) == 0 ]]; then
        echo "setup: installing with apt-get: ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive "${apt_cmd[@]}" >/dev/null
    else
        echo "setup: not root, so not installing them; run: sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
fi

# ---- the project's Python (build/venv) --------------------------------------------------------------------
# Ready when the venv was made from this very requirements file (a copy is kept in it) and the wheelhouse
# holds the build backend.
python_ready() {
    [[ -x $venv/bin/python ]] && cmp -s "$requirements" "$venv/cucore-requirements.txt" &&
        compgen -G "$wheelhouse/scikit_build_core-*.whl" >/dev/null
}
if [[ $minimal == 0 ]] && ! python_ready; then
    backend=$(grep -Eo '^scikit-build-core==[^ ]+' "$requirements")
    echo "setup: the project's Python tools go into $venv (a virtual environment of $(command -v python3 || echo python3)), and why:"
    sed -nE 's/^([^# ]+) *# *(.*)$/  \1: \2/p' "$requirements"
    echo "  $wheelhouse: the wheels of $backend and its dependencies (offline installs of bindings/python)"
    py_cmds=("python3 -m venv $venv"
             "$venv/bin/python -m pip install --quiet --disable-pip-version-check -r $requirements"
             "$venv/bin/python -m pip download --quiet --disable-pip-version-check --dest $wheelhouse $backend")
    if [[ $install == 0 || -n $stop ]]; then
        echo "setup: ${stop:+(after the packages above) }the commands would be:"
        printf '  %s\n' "${py_cmds[@]}"
        stop=${stop:-"the project's Python tools are not installed in $venv"}
    else
        for cmd in "${py_cmds[@]}"; do
            echo "setup: $cmd"
            $cmd
        done
        cp "$requirements" "$venv/cucore-requirements.txt"
    fi
fi

# The CUDA toolkit's headers are needed to build (never its libraries).
cuda_h=""
for dir in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda /usr; do
    [[ -n "$dir" && -e "$dir/include/cuda.h" ]] && { cuda_h="$dir/include/cuda.h"; break; }
done
if [[ -z "$cuda_h" ]]; then
    echo "setup: cuda.h not found: install the CUDA toolkit (or set CUDA_HOME)." >&2
    exit 1
fi
if [[ -n $stop ]]; then
    echo "setup: not ready: $stop. Run the commands above, or scripts/setup.sh without --no-install." >&2
    exit 1
fi
if [[ $minimal == 0 ]]; then
    echo "setup: ready (cuda.h: $cuda_h; the project's Python: $venv/bin/python)"
else
    echo "setup: ready (cuda.h: $cuda_h)"
fi
