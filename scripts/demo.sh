#!/usr/bin/env bash
# Builds libcucore and its examples, then runs the demo: the library and driver
# versions, every CUDA device with its key properties and a small stream/event
# timing demonstration (device_info), a kernel compiled at run time with NVRTC,
# launched and checked against the host (compile_and_launch), a picture
# upscaled 4x through point and bilinear texture objects by the C++ façade and
# checked against the host (texture_upscale: build/default/texture_upscale_cpp.png),
# the same through a bilinear texture by the Python binding
# (examples/texture_upscale.py, written to build/default/texture_upscale.png), then OpenGL
# interop (gl_interop: CUDA animates a GL mesh and texture; rendered offscreen
# into build/default/gl_interop.png unless a display is there). Without a
# driver or GPU each says so and what it checked (the kernel is still compiled,
# to PTX; texture_upscale says it has nothing to run on; gl_interop says there
# is no NVIDIA GL context); without NVRTC compile_and_launch and
# texture_upscale say so. Exits 0 in all those cases.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh --minimal
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)" --target device_info device_info_cpp compile_and_launch compile_and_launch_cpp \
    texture_upscale
echo
build/default/bin/device_info "$@"
echo
build/default/bin/compile_and_launch
echo
build/default/bin/texture_upscale --out build/default/texture_upscale_cpp.png
echo
if command -v python3 >/dev/null; then
    CUCORE_LIBRARY=build/default/lib/libcucore.so python3 examples/texture_upscale.py --out build/default/texture_upscale.png
    echo
fi
if cmake --build --preset default --target help 2>/dev/null | grep -q '^gl_interop:'; then
    cmake --build --preset default --target gl_interop >/dev/null
    if [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]]; then
        exec build/default/bin/gl_interop
    fi
    exec build/default/bin/gl_interop --frames 120 --screenshot build/default/gl_interop.png
fi
echo "gl_interop: not built (SDL2 and GLEW development packages are missing; scripts/setup.sh --minimal names them)"
