#!/usr/bin/env bash
# Installs the build into a temporary prefix, then builds and runs programs
# against it through find_package(cucore) and through pkg-config.
# Usage: check_install.sh BUILD_DIR
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$here/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DCMAKE_BUILD_RPATH="$work/prefix/lib" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer_c"
"$work/consumer/consumer_cpp"
if command -v pkg-config >/dev/null; then
    libdir=$(dirname "$(find "$work/prefix" -name cucore.pc | head -1)")
    flags=$(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs cucore)
    cc "$here/consumer/main.c" $flags -Wl,-rpath,"$(dirname "$libdir")" -o "$work/pkgconfig_app"
    "$work/pkgconfig_app"
    echo "install check passed (find_package and pkg-config)"
else
    echo "install check passed (find_package; pkg-config not installed, skipped)"
fi
