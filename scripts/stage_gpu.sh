#!/usr/bin/env bash
# Builds everything that must run on a GPU server into .device/ (git-ignored),
# because that server has no GoogleTest, Google Benchmark or Rust:
#   .device/bin   test, benchmark and example binaries (+ libbenchmark beside them)
#   .device/lib   libcucore.so*
#   .device/rust  the Rust test binaries
# Then carry .device to the server and run scripts/gpu_suite.sh there. For the
# GL part, carry .gl too (scripts/fetch_gl_libs.sh makes it once: the GL
# loader, SDL2 and GLEW, which the server lacks).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)"
rm -rf .device && mkdir -p .device/bin .device/lib .device/rust
cp -a build/default/bin/. .device/bin/
cp -a build/default/lib/libcucore.so* .device/lib/
# The loader tests' stand-in drivers live beside the library in the build tree.
cp -a build/default/lib/libstandin_cuda_*.so build/default/lib/libcucore_fake_cuda.so .device/lib/
CUCORE_LIB_DIR="$PWD/build/default/lib" python3 bindings/rust/test_binaries.py --copy .device/rust >/dev/null
# Symbols and debug info stay in the build tree; the staged copies travel (64 MiB limit with the tree).
find .device -type f \( -perm -u+x -o -name '*.so*' \) -exec strip --strip-unneeded {} + 2>/dev/null || true
du -sh .device
if [[ -e .gl/root/usr/lib/x86_64-linux-gnu/libEGL.so.1 ]]; then
    du -sh .gl
    echo "carry .device and .gl (the run call's carry: [\".device\", \".gl\"]); part gl of scripts/gpu_suite.sh uses .gl"
else
    echo "no .gl: run scripts/fetch_gl_libs.sh for the GL part (then carry .device and .gl)"
fi
