#!/usr/bin/env bash
# Builds libcucore and its examples, then runs the demo: the library and driver
# versions, every CUDA device with its key properties, and a small stream/event
# timing demonstration. Without a driver or GPU it says so and what it checked.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh --minimal
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)" --target device_info device_info_cpp
echo
exec build/default/bin/device_info "$@"
