#!/usr/bin/env bash
# Installs the build into a temporary prefix, then checks what was installed:
# the library is stripped (and, with CUCORE_INSTALL_DEBUG_INFO=1, its debug info
# is a separate file it names through .gnu_debuglink), the exported target names
# its include directory once, find_package(cucore VERSION) accepts what the
# version policy says (README.md, "Versions"), and programs build and run against
# it through find_package(cucore) and through pkg-config.
# Usage: check_install.sh BUILD_DIR
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "install check FAILED: $*" >&2; exit 1; }

env -u CUCORE_INSTALL_DEBUG_INFO cmake --install "$build" --prefix "$work/prefix" >/dev/null
lib=$(find "$work/prefix" -name 'libcucore.so.*.*' -type f | head -1)
[[ -n "$lib" ]] || fail "no libcucore.so.<version> installed"
sections=$(readelf -S --wide "$lib")
if grep -qE '\.debug_|\.symtab' <<<"$sections"; then
    fail "$lib is not stripped ($(grep -oE '\.debug_[a-z]+|\.symtab' <<<"$sections" | sort -u | tr '\n' ' '))"
fi
echo "installed $(basename "$lib"): stripped, $(stat -c %s "$lib") bytes (build tree: $(stat -L -c %s "$build/lib/$(basename "$lib")"))"

# The separate debug info, when asked for at install time.
CUCORE_INSTALL_DEBUG_INFO=1 cmake --install "$build" --prefix "$work/debug_prefix" >/dev/null
dlib=$(find "$work/debug_prefix" -name 'libcucore.so.*.*' -type f -not -path '*/.debug/*' | head -1)
debug="$(dirname "$dlib")/.debug/$(basename "$dlib").debug"
[[ -f "$debug" ]] || fail "CUCORE_INSTALL_DEBUG_INFO=1 installed no $debug"
readelf -S --wide "$debug" | grep -q '\.debug_info' || fail "$debug has no .debug_info"
! readelf -S --wide "$dlib" | grep -q '\.debug_info' || fail "$dlib is not stripped"
link=$(readelf --string-dump=.gnu_debuglink "$dlib" 2>/dev/null | grep -o "$(basename "$debug")" || true)
[[ -n "$link" ]] || fail "$dlib has no .gnu_debuglink naming $(basename "$debug")"
echo "with CUCORE_INSTALL_DEBUG_INFO=1: stripped, debug info in .debug/$(basename "$debug") (.gnu_debuglink)"

# One include directory in the exported target (also checked by the consumer's CMakeLists.txt).
targets=$(find "$work/prefix" -name cucoreTargets.cmake | head -1)
includes=$(grep -o 'INTERFACE_INCLUDE_DIRECTORIES "[^"]*"' "$targets" | head -1)
[[ "$includes" == 'INTERFACE_INCLUDE_DIRECTORIES "${_IMPORT_PREFIX}/include"' ]] ||
    fail "exported include directories: $includes"

# The version policy, read from the installed ConfigVersion file.
version_file=$(find "$work/prefix" -name cucoreConfigVersion.cmake | head -1)
installed=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$version_file")
cmake -DVERSION_FILE="$version_file" -DINSTALLED="$installed" -P "$here/check_version.cmake"

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
    echo "install check passed (stripped, one include directory, version policy, find_package and pkg-config)"
else
    echo "install check passed (stripped, one include directory, version policy, find_package; pkg-config not installed, skipped)"
fi
