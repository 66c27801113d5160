#!/usr/bin/env bash
# Builds the API reference from the sources, warning-free (any warning fails the script):
#   build/docs/c/       the C headers and the C++ façade (include/), with Doxygen
#   build/docs/python/  the Python package bindings/python/cucore, with Sphinx autodoc
#   build/docs/rust/    the Rust crates of bindings/rust, with rustdoc (cargo doc --offline --no-deps)
#   build/docs/index.html, linking the three.
# Usage: scripts/docs.sh [--check] [c] [python] [rust]
#   no part named: all three. --check: only say which tools are missing (exit 1 if any).
# Needs: doxygen (Debian: apt-get install doxygen), Sphinx for the Python that runs it
# (scripts/setup.sh installs it into the project's virtual environment build/venv; PYTHON=... picks
# another interpreter), cargo.
# The C headers' comments are plain C comments; scripts/doxygen_filter.py turns them into
# Doxygen's (and escapes what Doxygen would read as markup) as Doxygen reads each header.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/build/docs
# The Python that has Sphinx: $PYTHON, else the project's virtual environment where there is one, else python3.
python=${PYTHON:-python3}
[[ -z "${PYTHON:-}" && -x "$root/build/venv/bin/python" ]] && python=$root/build/venv/bin/python

check=0
parts=()
for arg in "$@"; do
    case $arg in
        --check) check=1 ;;
        c | python | rust) parts+=("$arg") ;;
        *) echo "usage: scripts/docs.sh [--check] [c] [python] [rust]" >&2; exit 2 ;;
    esac
done
((${#parts[@]})) || parts=(c python rust)
want() { [[ " ${parts[*]} " == *" $1 "* ]]; }

missing=()
want c && ! command -v doxygen >/dev/null && missing+=("doxygen (apt-get install doxygen)")
want python && ! "$python" -c "import sphinx" 2>/dev/null && missing+=("sphinx (scripts/setup.sh installs it into build/venv)")
want rust && ! command -v cargo >/dev/null && missing+=("cargo (apt-get install cargo)")
if ((${#missing[@]})); then
    printf 'docs: missing: %s\n' "${missing[@]}" >&2
    exit 1
fi
((check)) && { echo "docs: every tool is there"; exit 0; }

version=$(sed -n 's/^project(cucore VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
mkdir -p "$out"

if want c; then
    echo "== C and C++ (Doxygen $(doxygen --version)) =="
    rm -rf "$out/c"
    mkdir -p "$out/c"
    cat >"$out/c/Doxyfile" <<EOF
PROJECT_NAME           = libcucore
PROJECT_NUMBER         = $version
PROJECT_BRIEF          = "The CUDA driver API made safe and pleasant: C ABI and C++ façade"
OUTPUT_DIRECTORY       = $out/c
INPUT                  = $root/include $root/docs/c_abi.md
USE_MDFILE_AS_MAINPAGE = $root/docs/c_abi.md
FILE_PATTERNS          = *.h *.hpp
RECURSIVE              = YES
STRIP_FROM_PATH        = $root/include $root/docs
STRIP_FROM_INC_PATH    = $root/include
INPUT_FILTER           = "$python $root/scripts/doxygen_filter.py"
FILTER_PATTERNS        = "*.md=$python $root/scripts/doxygen_filter.py"
FILTER_SOURCE_FILES    = NO
EXTRACT_ALL            = YES
EXTRACT_STATIC         = YES
HIDE_UNDOC_MEMBERS     = NO
OPTIMIZE_OUTPUT_FOR_C  = NO
JAVADOC_AUTOBRIEF      = YES
MARKDOWN_SUPPORT       = YES
AUTOLINK_SUPPORT       = YES
ENABLE_PREPROCESSING   = YES
MACRO_EXPANSION        = YES
EXPAND_ONLY_PREDEF     = YES
PREDEFINED             = CUCORE_API= CUCORE_EXTERN_C_BEGIN= CUCORE_EXTERN_C_END= __cplusplus=201703L
EXCLUDE_SYMBOLS        = detail detail::*
SOURCE_BROWSER         = YES
GENERATE_HTML          = YES
HTML_OUTPUT            = html
GENERATE_LATEX         = NO
HAVE_DOT               = NO
CLASS_GRAPH            = NO
COLLABORATION_GRAPH    = NO
INCLUDE_GRAPH          = NO
INCLUDED_BY_GRAPH      = NO
GENERATE_TREEVIEW      = YES
QUIET                  = YES
WARNINGS               = YES
WARN_IF_UNDOCUMENTED   = NO
WARN_IF_DOC_ERROR      = YES
WARN_NO_PARAMDOC       = NO
WARN_AS_ERROR          = FAIL_ON_WARNINGS
WARN_LOGFILE           = $out/c/warnings.log
EOF
    if ! doxygen "$out/c/Doxyfile" || [[ -s "$out/c/warnings.log" ]]; then
        echo "docs: Doxygen warned (build/docs/c/warnings.log):" >&2
        cat "$out/c/warnings.log" >&2
        exit 1
    fi
    echo "build/docs/c/html/index.html"
fi

if want python; then
    echo "== Python (Sphinx $("$python" -c 'import sphinx; print(sphinx.__version__)')) =="
    src=$out/python-src
    rm -rf "$src" "$out/python"
    mkdir -p "$src"
    modules=$(cd bindings/python/cucore && ls ./*.py | sed -n 's|^\./\([a-z][a-z0-9_]*\)\.py$|\1|p')
    {
        echo "cucore: the Python binding of libcucore"
        echo "========================================="
        echo
        echo "Pure ctypes over libcucore's C ABI. Importing the package does not load the library; the first call"
        echo "does (\`\`CUCORE_LIBRARY\`\`, a copy inside the package, the build tree, or the system loader)."
        echo
        echo ".. automodule:: cucore"
        echo "   :no-index:"
        echo
        echo ".. toctree::"
        echo "   :maxdepth: 1"
        echo
        for m in $modules; do echo "   $m"; done
    } >"$src/index.rst"
    for m in $modules; do
        {
            echo "cucore.$m"
            printf '%*s\n' $((7 + ${#m})) '' | tr ' ' '='
            echo
            echo ".. automodule:: cucore.$m"
            echo "   :members:"
            echo "   :undoc-members:"
            echo "   :show-inheritance:"
        } >"$src/$m.rst"
    done
    # -W: warnings are errors; -n would add nitpicky cross-reference checks.
    CUCORE_ROOT=$root CUCORE_VERSION=$version "$python" -m sphinx -b html -W --keep-going -q \
        -c "$root/scripts/sphinx" -d "$out/python-doctrees" "$src" "$out/python"
    echo "build/docs/python/index.html"
fi

if want rust; then
    echo "== Rust ($(cargo --version)) =="
    # rustdoc links nothing, but cucore-sys's build script wants to see libcucore.so: the build tree's
    # when there is one, else an empty stand-in (never linked: --no-deps documents, it does not build binaries).
    libdir=$root/build/default/lib
    if [[ ! -e "$libdir/libcucore.so" ]]; then
        libdir=$out/rust-stub-lib
        mkdir -p "$libdir"
        : >"$libdir/libcucore.so"
    fi
    rm -rf "$out/rust"
    (cd bindings/rust &&
        CUCORE_LIB_DIR=$libdir CARGO_TARGET_DIR=$out/rust-target RUSTDOCFLAGS="-D warnings" \
            cargo doc --offline --no-deps --workspace --quiet)
    cp -r "$out/rust-target/doc" "$out/rust"
    echo "build/docs/rust/cucore/index.html"
fi

cat >"$out/index.html" <<EOF
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>libcucore $version: API reference</title></head>
<body>
<h1>libcucore $version: API reference</h1>
<p>Built from the sources by <code>scripts/docs.sh</code>.</p>
<ul>
<li><a href="c/html/index.html">C ABI and C++ façade</a> (include/cucore.h, include/cucore.hpp; Doxygen)</li>
<li><a href="python/index.html">Python</a> (bindings/python, package <code>cucore</code>; Sphinx)</li>
<li><a href="rust/cucore/index.html">Rust</a> (bindings/rust: crates <code>cucore</code> and
<a href="rust/cucore_sys/index.html"><code>cucore-sys</code></a>; rustdoc)</li>
</ul>
</body></html>
EOF
echo "docs: build/docs/index.html (${parts[*]})"
