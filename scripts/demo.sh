#!/usr/bin/env bash
# Builds libcucore and its examples, then runs the demo: the library and driver
# versions, every CUDA device with its key properties and a small stream/event
# timing demonstration (device_info), then a kernel compiled at run time with
# NVRTC, launched and checked against the host (compile_and_launch). Without a
# driver or GPU each says so and what it checked (the kernel is still compiled,
# to PTX); without NVRTC compile_and_launch says so. Exits 0 in all those cases.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh --minimal
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)" --target device_info device_info_cpp compile_and_launch compile_and_launch_cpp
echo
build/default/bin/device_info "$@"
echo
exec build/default/bin/compile_and_launch
