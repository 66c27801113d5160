#!/usr/bin/env bash
# Builds everything that must run on a GPU server into .device/ (git-ignored),
# because that server has no GoogleTest, Google Benchmark or Rust:
#   .device/bin   test, benchmark and example binaries (+ libbenchmark beside them)
#   .device/lib   libcucore.so*
#   .device/rust  the Rust test binaries
#   .carry/stage.tar.xz  all of it (and .gl), compressed: carry .carry to the server
# and run scripts/gpu_suite.sh there, which unpacks it. For the GL part, make .gl
# first (scripts/fetch_gl_libs.sh makes it once: the GL loader, SDL2 and GLEW,
# which the server lacks).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)"
rm -rf .device && mkdir -p .device/bin .device/lib .device/rust
cp -a build/default/bin/. .device/bin/
cp -a build/default/lib/libcucore.so* .device/lib/
# The loader tests' stand-in drivers live beside the library in the build tree.
cp -a build/default/lib/libstandin_cuda_*.so build/default/lib/libcucore_fake_cuda.so build/default/lib/libcucore_fake_nvml.so \
  .device/lib/
# The fake NCCL (issue 19), for the Python and Rust suites' fake-driver runs.
if [[ -e build/default/lib/libcucore_fake_nccl.so ]]; then cp -a build/default/lib/libcucore_fake_nccl.so .device/lib/; fi
CUCORE_LIB_DIR="$PWD/build/default/lib" python3 bindings/rust/test_binaries.py --copy .device/rust >/dev/null
# Symbols and debug info stay in the build tree; the staged copies travel (64 MiB limit with the tree).
find .device -type f \( -perm -u+x -o -name '*.so*' \) -exec strip --strip-unneeded {} + 2>/dev/null || true
du -sh .device
# One compressed archive of what travels (.device, and .gl when present): the staged binaries and GL libraries
# (about 62 MiB since issue 14's tests) no longer fit beside the tree in a 64 MiB carry; xz makes them 16 MiB.
# scripts/gpu_suite.sh unpacks it when .device is missing.
mkdir -p .carry
rm -f .carry/stage.tar.xz
if [[ -e .gl/root/usr/lib/x86_64-linux-gnu/libEGL.so.1 ]]; then
    du -sh .gl
    tar -cJf .carry/stage.tar.xz .device .gl
    echo "carry .carry (the run call's carry: [\".carry\"]): .carry/stage.tar.xz holds .device and .gl; part gl of scripts/gpu_suite.sh uses .gl"
else
    tar -cJf .carry/stage.tar.xz .device
    echo "no .gl: run scripts/fetch_gl_libs.sh for the GL part (then stage again); carry .carry ([\".carry\"])"
fi
du -sh .carry/stage.tar.xz
