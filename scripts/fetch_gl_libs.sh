#!/usr/bin/env bash
# Fetches the GL loader libraries (libglvnd: libEGL, libGL, libOpenGL, libGLX,
# libGLdispatch), SDL2 and GLEW for a GPU server that has the NVIDIA driver (its
# vendor libraries libEGL_nvidia, libGLX_nvidia...) but none of these, as
# docs/testing.md ("GL tests") describes. Run it on a Debian 12 machine
# with apt (the build machine); it writes, git-ignored:
#   .gl/debs   the .deb files, from `apt-get download`
#   .gl/root   those packages unpacked with `dpkg -x`; on the server
#              LD_LIBRARY_PATH=$PWD/.gl/root/usr/lib/x86_64-linux-gnu
#              (scripts/gpu_suite.sh, part "gl", sets it)
# Carry .gl to the server with the run call (with .device from stage_gpu.sh).
#
# Which packages: the wanted ones and every package that provides a shared
# library they need (DT_NEEDED, followed to the end), resolved from the
# packages' dependencies with apt-cache and then kept only where a library of
# theirs is really needed, so .gl stays small. Left out: what any
# Debian/Ubuntu system has (Essential or Priority required packages, apt and
# what it depends on: libsystemd0, liblzma5, libzstd1...; older copies of those
# must not shadow the server's own) and Mesa's GL vendor libraries (the NVIDIA driver is
# the vendor; Mesa's would pull in LLVM). Libraries that SDL2 only dlopens
# (X11, Wayland, audio) are not needed by its offscreen EGL driver.
set -euo pipefail
cd "$(dirname "$0")/.."

# libdbus-1-3 is in apt's closure here but missing from minimal GPU-server images (SDL2 needs it).
wanted=(libglvnd0 libegl1 libopengl0 libgl1 libglx0 libsdl2-2.0-0 libglew2.2 libdbus-1-3)
skip_always=" libc6 libgcc-s1 libstdc++6 libegl-mesa0 libglx-mesa0 libgl1-mesa-dri libglapi-mesa "
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)

command -v apt-get >/dev/null && command -v apt-cache >/dev/null && command -v dpkg-deb >/dev/null ||
    { echo "fetch_gl_libs.sh: needs apt-get, apt-cache and dpkg-deb (a Debian 12 machine)" >&2; exit 1; }
command -v readelf >/dev/null || { echo "fetch_gl_libs.sh: needs readelf (binutils)" >&2; exit 1; }

# apt's dependency closure: on every system this script's result goes to.
declare -A base=()
while read -r p; do base[$p]=1; done < <(apt-cache depends --recurse --no-recommends --no-suggests \
    --no-conflicts --no-breaks --no-replaces --no-enhances apt 2>/dev/null | grep -v '^ ' | grep -v '^<' |
    sed "s/:$arch\$//")

# skipped PKG: true for a package that every system has or that must not come along.
skipped() {
    local p=$1
    [[ $skip_always == *" $p "* ]] && return 0
    [[ -n ${base[$p]:-} ]] && return 0
    local fields
    fields=$(apt-cache show --no-all-versions "$p" 2>/dev/null | grep -E '^(Priority|Essential):' || true)
    grep -qE '^Essential: yes|^Priority: required' <<<"$fields"
}

# 1. Candidates: the dependency closure (Depends and Pre-Depends, first
#    alternative, virtual names left out) of the wanted packages.
declare -A seen=()
queue=("${wanted[@]}")
candidates=()
while ((${#queue[@]})); do
    p=${queue[0]}
    queue=("${queue[@]:1}")
    [[ -n ${seen[$p]:-} ]] && continue
    seen[$p]=1
    skipped "$p" && continue
    candidates+=("$p")
    while read -r dep; do
        [[ -n $dep && -z ${seen[$dep]:-} ]] && queue+=("$dep")
    done < <(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
                 --no-enhances "$p" 2>/dev/null |
             awk '/^ *(\|)?(Pre)?Depends:/ { if (!alt) print $NF; alt = ($1 ~ /^\|/) } ' |
             grep -v '^<' | sed "s/:$arch\$//" || true)
done

rm -rf .gl/debs .gl/root .gl/stage
mkdir -p .gl/debs .gl/stage
echo "resolving ${#candidates[@]} candidate packages: ${candidates[*]}"
sandbox=()
((EUID == 0)) && sandbox=(-o APT::Sandbox::User=root)   # root: no _apt user to hand the folder to
(cd .gl/debs && apt-get download -q "${sandbox[@]}" "${candidates[@]}" >/dev/null)

# 2. Unpack every candidate in its own folder and note which sonames it has.
declare -A provider=()   # soname -> package
declare -A deb_of=()     # package -> .deb
for deb in .gl/debs/*.deb; do
    p=$(dpkg-deb -f "$deb" Package)
    deb_of[$p]=$deb
    dpkg-deb -x "$deb" ".gl/stage/$p"
    while read -r f; do
        provider[$(basename "$f")]=$p
    done < <(find ".gl/stage/$p" \( -type f -o -type l \) -name 'lib*.so*' 2>/dev/null)
done

# 3. Follow DT_NEEDED from the wanted packages' libraries; keep the packages
#    that provide a needed soname.
declare -A keep=()
for p in "${wanted[@]}"; do keep[$p]=1; done
declare -A visited=()
pending=()
for p in "${wanted[@]}"; do
    while read -r f; do pending+=("$f"); done < <(find ".gl/stage/$p" -type f -name 'lib*.so*')
done
missing=()
while ((${#pending[@]})); do
    f=${pending[0]}
    pending=("${pending[@]:1}")
    [[ -n ${visited[$f]:-} ]] && continue
    visited[$f]=1
    while read -r soname; do
        if [[ -n ${provider[$soname]:-} ]]; then
            q=${provider[$soname]}
            keep[$q]=1
            while read -r g; do pending+=("$g"); done < <(find ".gl/stage/$q" -name "$soname" -type f; \
                find ".gl/stage/$q" -name "$soname" -type l -exec readlink -f {} \;)
        else
            missing+=("$soname")
        fi
    done < <(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
done

# 4. The kept .debs, unpacked into .gl/root; the others go.
mkdir -p .gl/root
for p in "${!deb_of[@]}"; do
    if [[ -n ${keep[$p]:-} ]]; then
        dpkg -x "${deb_of[$p]}" .gl/root
    else
        rm -f "${deb_of[$p]}"
    fi
done
rm -rf .gl/stage
# Documentation, manuals and translations are of no use on the server.
rm -rf .gl/root/usr/share/doc .gl/root/usr/share/man .gl/root/usr/share/locale .gl/root/usr/share/lintian
for p in "${wanted[@]}"; do
    [[ -n ${deb_of[$p]:-} ]] || { echo "fetch_gl_libs.sh: $p was not downloaded" >&2; exit 1; }
done

libdir=.gl/root/usr/lib/$multiarch
echo "kept packages: $(for p in "${!keep[@]}"; do echo "$p"; done | sort | tr '\n' ' ')"
# What is still needed comes from the system (glibc and the like).
echo "left to the system: $(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')"
for lib in libEGL.so.1 libGL.so.1 libOpenGL.so.0 libGLX.so.0 libGLdispatch.so.0 libSDL2-2.0.so.0 libGLEW.so.2.2; do
    [[ -e $libdir/$lib ]] || { echo "fetch_gl_libs.sh: $libdir/$lib is missing" >&2; exit 1; }
done
echo "on the GPU server: LD_LIBRARY_PATH=\$PWD/$libdir"
du -sh .gl/debs .gl/root .gl
