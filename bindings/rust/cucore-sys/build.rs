//! Finds libcucore and tells cargo how to link it, and how the programs built with it find it
//! when they run.
//!
//! Search order (the first that holds `libcucore.so` wins):
//! 1. `CUCORE_LIB_DIR`: a directory that holds `libcucore.so` (an error when it does not).
//! 2. The CMake build tree of this repository: `../../../build/default/lib` relative to this
//!    crate (what `cmake --preset default && cmake --build --preset default` produces).
//! 3. An installed libcucore, through its `cucore.pc`: the `pkg-config` command (found on
//!    `PATH`, or named by `PKG_CONFIG`) with the usual `PKG_CONFIG_PATH`; `libdir` of the `.pc`.
//!
//! Running, without `LD_LIBRARY_PATH`:
//! - `cargo run` / `cargo test` of this crate, of `cucore` and of any crate that depends on them:
//!   the build script links the library's files into its `OUT_DIR` (`$OUT_DIR/lib`) and names that
//!   directory with `rustc-link-search`. Cargo puts such search paths on the dynamic library path
//!   of the programs it runs, but only those inside its target directory, which is why the
//!   library's own directory is not enough.
//! - The binaries themselves: `rustc-link-arg` reaches only the targets of the crate whose build
//!   script prints it, so this crate and `cucore` put `<dir>:$ORIGIN` in their own test binaries'
//!   RUNPATH, and pass the directory on as `DEP_CUCORE_LIB_DIR` (metadata of `links = "cucore"`),
//!   which cargo gives to the build scripts of the crates that depend on this one directly. A
//!   program that wants its binaries to run outside cargo depends on `cucore-sys` too and prints
//!   `cargo:rustc-link-arg=-Wl,-rpath,$DEP_CUCORE_LIB_DIR` from its build script (see
//!   `../examples/dependent`).

use std::env;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn has_library(dir: &Path) -> bool {
    // The linker's `-lcucore` needs the unversioned name (a symlink to libcucore.so.0 in a
    // CMake build tree); the binaries then record the soname, libcucore.so.0.
    ["libcucore.so", "libcucore.dylib", "cucore.lib"].iter().any(|name| dir.join(name).is_file())
}

/// The pkg-config program: `PKG_CONFIG`, else `pkg-config` on PATH.
fn pkg_config_program() -> OsString {
    env::var_os("PKG_CONFIG").filter(|p| !p.is_empty()).unwrap_or_else(|| OsString::from("pkg-config"))
}

/// `pkg-config ARGS cucore`, trimmed, or None when pkg-config is missing or does not know cucore.
fn pkg_config(args: &[&str]) -> Option<String> {
    let out = Command::new(pkg_config_program()).args(args).arg("cucore").output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The directory of an installed libcucore, from its `cucore.pc`: `libdir`, else the `-L`
/// directories of `--libs-only-L`, whichever holds the library. Some(Err(text)) when
/// pkg-config knows cucore but no directory it names holds the library.
fn from_pkg_config() -> Option<Result<PathBuf, String>> {
    let version = pkg_config(&["--modversion"])?;
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(libdir) = pkg_config(&["--variable=libdir"]) {
        if !libdir.is_empty() {
            candidates.push(PathBuf::from(libdir));
        }
    }
    if let Some(flags) = pkg_config(&["--libs-only-L"]) {
        candidates.extend(flags.split_whitespace().filter_map(|f| f.strip_prefix("-L")).map(PathBuf::from));
    }
    match candidates.iter().find(|d| has_library(d)) {
        Some(d) => Some(Ok(d.clone())),
        None => Some(Err(format!(
            "pkg-config knows cucore {} but no directory it names holds libcucore.so ({:?})",
            version, candidates
        ))),
    }
}

/// Links (symbolic links; copies where those fail) `libcucore.so*` of `dir` into `dest`, which
/// holds nothing else.
fn link_library_files(dir: &Path, dest: &Path) -> std::io::Result<()> {
    if dest.exists() {
        fs::remove_dir_all(dest)?;
    }
    fs::create_dir_all(dest)?;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with("libcucore.so") {
            continue;
        }
        let target = dest.join(&name);
        #[cfg(unix)]
        let linked = std::os::unix::fs::symlink(entry.path(), &target);
        #[cfg(not(unix))]
        let linked: std::io::Result<()> = Err(std::io::ErrorKind::Unsupported.into());
        if linked.is_err() {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in ["CUCORE_LIB_DIR", "PKG_CONFIG", "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR", "PKG_CONFIG_SYSROOT_DIR"] {
        println!("cargo:rerun-if-env-changed={}", var);
    }

    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let build_tree = manifest_dir.join("../../../build/default/lib");

    let (dir, origin) = match env::var_os("CUCORE_LIB_DIR") {
        Some(d) if !d.is_empty() => {
            let d = PathBuf::from(d);
            if !has_library(&d) {
                panic!(
                    "\n\ncucore-sys: CUCORE_LIB_DIR={} holds no libcucore.so.\n\
                     Point it at the directory that holds libcucore.so (a build tree's lib/, an install's lib/),\n\
                     or unset it to use this repository's build tree ({}) or pkg-config (cucore.pc).\n\n",
                    d.display(),
                    build_tree.display()
                );
            }
            (d, "CUCORE_LIB_DIR".to_string())
        }
        _ if has_library(&build_tree) => (build_tree.clone(), "the CMake build tree".to_string()),
        _ => match from_pkg_config() {
            Some(Ok(d)) => (d, "pkg-config (cucore.pc)".to_string()),
            found => {
                let pkg = match found {
                    Some(Err(why)) => why,
                    _ if Command::new(pkg_config_program()).arg("--version").output().is_err() => {
                        format!("pkg-config cannot be run ({:?}; PKG_CONFIG names another)", pkg_config_program())
                    }
                    _ => {
                        "pkg-config finds no cucore.pc (is PKG_CONFIG_PATH set to <prefix>/lib/pkgconfig?)".to_string()
                    }
                };
                panic!(
                    "\n\ncucore-sys: libcucore not found.\n\
                     - CUCORE_LIB_DIR is not set;\n\
                     - the CMake build tree {} holds no libcucore.so;\n\
                     - {}.\n\
                     Build it (cd <repo> && cmake --preset default && cmake --build --preset default --target cucore),\n\
                     install it where pkg-config finds its cucore.pc, or point CUCORE_LIB_DIR at the directory\n\
                     that holds libcucore.so.\n\n",
                    build_tree.display(),
                    pkg
                );
            }
        },
    };
    // A canonical absolute path, so that the RPATH does not depend on the current directory.
    let dir = dir.canonicalize().unwrap_or(dir);
    let dir_str = dir.to_str().expect("cucore-sys: the library directory must be valid UTF-8");
    // Shown by `cargo build -vv`.
    println!("cucore-sys: libcucore from {} ({})", dir_str, origin);

    // Inside the target directory, so that cargo run / cargo test put it on the programs' library
    // path (dependents included); first, so that the linker takes the same files.
    let staged = out_dir.join("lib");
    match link_library_files(&dir, &staged) {
        Ok(()) => println!("cargo:rustc-link-search=native={}", staged.display()),
        Err(e) => println!(
            "cargo:warning=cucore-sys: could not link libcucore into {} ({}): `cargo run` of dependents will need LD_LIBRARY_PATH",
            staged.display(),
            e
        ),
    }
    println!("cargo:rustc-link-search=native={}", dir_str);
    println!("cargo:rustc-link-lib=dylib=cucore");
    // For this crate's own test binaries; the cucore crate does the same with DEP_CUCORE_LIB_DIR.
    if env::var("CARGO_CFG_TARGET_OS").map(|os| os != "windows" && os != "macos").unwrap_or(true) {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir_str);
        println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN");
    }
    // Seen by direct dependents' build scripts as DEP_CUCORE_LIB_DIR.
    println!("cargo:lib_dir={}", dir_str);
}
