//! Puts libcucore's directory (found by cucore-sys's build script, passed on as
//! `DEP_CUCORE_LIB_DIR`) and `$ORIGIN` in the RPATH of this crate's test binaries and examples,
//! so that they run without `LD_LIBRARY_PATH`. Linking itself comes from cucore-sys.
//!
//! `rustc-link-arg` reaches this crate's own targets only, never the binaries of a crate that
//! depends on `cucore`: those run under `cargo run` / `cargo test` through the library path
//! cargo sets (cucore-sys links the library into its OUT_DIR), and outside cargo when their own
//! build script does what this one does (see `../examples/dependent/build.rs`).

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DEP_CUCORE_LIB_DIR");
    let unix_elf = env::var("CARGO_CFG_TARGET_OS").map(|os| os != "windows" && os != "macos").unwrap_or(true);
    if let Some(dir) = env::var_os("DEP_CUCORE_LIB_DIR") {
        if unix_elf {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.to_string_lossy());
            println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN");
        }
    }
}
