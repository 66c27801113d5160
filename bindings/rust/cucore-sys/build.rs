//! Finds libcucore and tells cargo how to link it.
//!
//! Search order:
//! 1. `CUCORE_LIB_DIR`: a directory that holds `libcucore.so`.
//! 2. The CMake build tree of this repository: `../../../build/default/lib` relative to this
//!    crate (what `cmake --preset default && cmake --build --preset default` produces).
//!
//! The directory is passed on to the `cucore` crate (as `DEP_CUCORE_LIB_DIR`, through
//! `links = "cucore"`), and both crates put it in their binaries' RPATH, together with
//! `$ORIGIN`, so that tests run without `LD_LIBRARY_PATH` here, and a test binary copied to
//! another machine finds a `libcucore.so.0` placed beside it.

use std::env;
use std::path::{Path, PathBuf};

fn has_library(dir: &Path) -> bool {
    // The linker's `-lcucore` needs the unversioned name (a symlink to libcucore.so.0 in a
    // CMake build tree); the binaries then record the soname, libcucore.so.0.
    ["libcucore.so", "libcucore.dylib", "cucore.lib"].iter().any(|name| dir.join(name).is_file())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CUCORE_LIB_DIR");

    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let build_tree = manifest_dir.join("../../../build/default/lib");

    let (dir, origin) = match env::var_os("CUCORE_LIB_DIR") {
        Some(d) if !d.is_empty() => (PathBuf::from(d), "CUCORE_LIB_DIR"),
        _ => (build_tree.clone(), "the CMake build tree"),
    };
    if !has_library(&dir) {
        panic!(
            "\n\ncucore-sys: libcucore not found in {} (from {}).\n\
             Build it first:  cd <repo> && cmake --preset default && cmake --build --preset default --target cucore\n\
             or point CUCORE_LIB_DIR at the directory that holds libcucore.so.\n\
             (default search path: {})\n\n",
            dir.display(),
            origin,
            build_tree.display()
        );
    }
    // A canonical absolute path, so that the RPATH does not depend on the current directory.
    let dir = dir.canonicalize().unwrap_or(dir);
    let dir = dir.to_str().expect("cucore-sys: the library directory must be valid UTF-8");

    println!("cargo:rustc-link-search=native={}", dir);
    println!("cargo:rustc-link-lib=dylib=cucore");
    // For this crate's own test binaries; the cucore crate does the same with DEP_CUCORE_LIB_DIR.
    if env::var("CARGO_CFG_TARGET_OS").map(|os| os != "windows" && os != "macos").unwrap_or(true) {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
        println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN");
    }
    // Seen by dependents' build scripts as DEP_CUCORE_LIB_DIR.
    println!("cargo:lib_dir={}", dir);
}
